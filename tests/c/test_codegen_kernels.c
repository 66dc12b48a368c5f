/* User kernels through NVRTC (no GPU needed): name expressions of a
 * templated module give lowered names, and a disk-cache hit gives the same
 * names back; a kernel with an error gives CK_ERR_COMPILE with the numbered
 * source line.  (The generated ElementwiseKernel / ReductionKernel / fuse
 * kinds are compiled by tests/test_kernels.py through _kernel_compile.) */
#define _GNU_SOURCE
#include "ck_test.h"
#include "../../src/runtime/kcache.h"
#include "../../src/platform/cuda_api.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *src =
    "template <typename T> __global__ void scale(T *x, T a, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= a;\n"
    "}\n"
    "template <typename T> __device__ T table[4];\n"
    "extern \"C\" __global__ void plain(float *x) { x[0] = 1.0f; }\n";

static void check_names(const ck_kernel_image *img, const char *what)
{
    CHECK(img->nlowered == 3, "%s: %d lowered names", what, img->nlowered);
    if (img->nlowered != 3) return;
    /* Itanium mangling of the instances */
    CHECK(!strcmp(img->lowered[0], "_Z5scaleIfEvPT_S0_i"), "%s: scale<float> -> %s", what, img->lowered[0]);
    CHECK(!strcmp(img->lowered[1], "_Z5scaleIdEvPT_S0_i"), "%s: scale<double> -> %s", what, img->lowered[1]);
    CHECK(strstr(img->lowered[2], "table") != NULL, "%s: table<int> -> %s", what, img->lowered[2]);
    CHECK(img->size > 0 && img->data, "%s: no image", what);
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("SKIP: no NVRTC (%s)\n", ck_error_message());
        return 0;
    }
    char dir[] = "/tmp/ck_test_kernels_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("CUDAKIT_CACHE_DIR", dir, 1);
    const char *exprs[] = {"scale<float>", "scale<double>", "table<int>"};
    ck_kernel_image a, b, c;
    OK(ck_kernel_compile_ex(src, "tmpl.cu", NULL, 0, exprs, 3, 90, &a));
    CHECK(!a.from_disk, "the first compile came from the disk");
    check_names(&a, "compiled");
    OK(ck_kernel_compile_ex(src, "tmpl.cu", NULL, 0, exprs, 3, 90, &b));
    CHECK(b.from_disk, "the second compile did not hit the disk cache");
    check_names(&b, "from disk");
    CHECK(a.size == b.size && !memcmp(a.data, b.data, a.size), "the cached image differs");
    /* the same source without expressions is another entry, with no names */
    OK(ck_kernel_compile(src, "tmpl.cu", NULL, 0, 90, &c));
    CHECK(!c.from_disk && c.nlowered == 0 && c.lowered == NULL, "plain compile: from_disk %d, %d names", c.from_disk,
          c.nlowered);
    ck_kernel_image_free(&a);
    ck_kernel_image_free(&b);
    ck_kernel_image_free(&c);
    CHECK(a.data == NULL && a.lowered == NULL && a.nlowered == 0, "image_free left data");

    /* a name expression that is not in the source */
    const char *bad[] = {"nothere<float>"};
    ck_status s = ck_kernel_compile_ex(src, "tmpl.cu", NULL, 0, bad, 1, 90, &a);
    CHECK(s != CK_OK, "an unknown name expression compiled");
    ck_kernel_image_free(&a);
    const char *empty[] = {""};
    CHECK(ck_kernel_compile_ex(src, "tmpl.cu", NULL, 0, empty, 1, 90, &a) == CK_ERR_VALUE, "empty name expression");

    /* a compile error: the log and the numbered line */
    s = ck_kernel_compile_ex("extern \"C\" __global__ void f()\n{\n    int x = nope;\n}\n", "bad.cu", NULL, 0, exprs, 0,
                             90, &a);
    CHECK(s == CK_ERR_COMPILE, "status %d", (int)s);
    CHECK(strstr(ck_error_message(), "nope") && strstr(ck_error_message(), ">>    3 |"), "message: %s",
          ck_error_message());

    /* a damaged names section is a miss, rebuilt */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "for f in %s/*.cubin %s/*.ptx; do [ -f \"$f\" ] && truncate -s -3 \"$f\"; done; true",
             dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "truncate failed\n");
    OK(ck_kernel_compile_ex(src, "tmpl.cu", NULL, 0, exprs, 3, 90, &a));
    CHECK(!a.from_disk, "a damaged entry was used");
    check_names(&a, "rebuilt");
    ck_kernel_image_free(&a);

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    if (failures) printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
