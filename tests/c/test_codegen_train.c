/* The training kernels (family CK_KFAM_TRAIN, cuda_train_codegen.h):
 *  - every spec's key is of the family and distinct;
 *  - every row op, optimizer and activation compiles through NVRTC (no
 *    GPU needed) for float16, float32 and float64, rows both by warp and
 *    by thread, and one of each down to a cubin;
 *  - the optimizer's table has the layout the kernel reads (its size fits
 *    a launch's 4 KiB of parameters);
 *  - scatter-add (float16 by compare-and-swap) compiles for each dtype. */
#include <stdint.h>
#include <string.h>

#include "cudakit.h"
#include "ck_test.h"
#include "../../src/codegen/cuda_train_codegen.h"
#include "../../src/codegen/kernel_keys.h"
#include "../../src/runtime/kcache.h"
#include "../../src/platform/cuda_api.h"

static uint64_t keys_[512];
static int nkeys_, compiled_;

static void one(const ck_cuda_train_spec *sp, int nvrtc, int cubin)
{
    uint64_t key = ck_cuda_train_key(sp);
    CHECK(ck_kernel_key_family(key) == CK_KFAM_TRAIN, "key %llx not of the family", (unsigned long long)key);
    for (int i = 0; i < nkeys_; i++) CHECK(keys_[i] != key, "key %llx used twice", (unsigned long long)key);
    keys_[nkeys_++] = key;
    char *src = ck_cuda_train_source(sp);
    CHECK(src != NULL, "kind %d op %d type %d: no source: %s", sp->kind, sp->op, sp->t, ck_error_message());
    if (!src) return;
    const char *names[2];
    int n = ck_cuda_train_names(sp, names);
    for (int i = 0; i < n; i++) CHECK(strstr(src, names[i]) != NULL, "no kernel %s", names[i]);
    if (nvrtc) {
        const char *opts[] = {"--gpu-architecture=compute_90"};
        ck_kernel_image img;
        ck_status s = cubin ? ck_kernel_compile(src, "train.cu", NULL, 0, 90, &img)
                            : ck_kernel_compile(src, "train.cu", opts, 1, 90, &img);
        CHECK(s == CK_OK, "kind %d op %d type %d warp %d:\n%s", sp->kind, sp->op, sp->t, sp->warp, ck_error_message());
        if (s == CK_OK) {
            ck_kernel_image_free(&img);
            compiled_++;
        }
    }
    free(src);
}

int main(void)
{
    CHECK(sizeof(ck_cuda_optim_table) <= 4096 - 120, "the optimizer table (%zu bytes) leaves no room for the scalars",
          sizeof(ck_cuda_optim_table));
    CHECK(offsetof(ck_cuda_optim_table, count) == (size_t)CK_OPTIM_TENSORS * 48 + 8, "table layout");
    const char *e = getenv("CK_TEST_NVRTC");
    int nvrtc = !(e && !strcmp(e, "0"));
    if (nvrtc && ck_nvrtc_load() != CK_OK) {
        printf("NVRTC skipped: %s\n", ck_error_message());
        nvrtc = 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    static const ck_dtype types[] = {CK_FLOAT16, CK_FLOAT32, CK_FLOAT64};
    for (int op = 0; op < CK_ROW_OPS; op++)
        for (int t = 0; t < 3; t++)
            for (int w = 0; w < 2; w++) {
                ck_cuda_train_spec sp = {.kind = CK_TRK_ROWS, .op = op, .t = types[t], .warp = w};
                one(&sp, nvrtc && (w == (t & 1) || t == 1), op == 0 && t == 0 && w == 0);
            }
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < 3; t++) {
            ck_cuda_train_spec sp = {.kind = CK_TRK_OPTIM, .op = k, .t = types[t]};
            one(&sp, nvrtc, k == 0 && t == 0);
        }
    for (int a = 0; a < CK_ACT_COUNT; a++)
        for (int t = 0; t < 3; t++)
            for (int bw = 0; bw < 2; bw++) {
                ck_cuda_train_spec sp = {.kind = CK_TRK_BIAS_ACT, .op = a, .t = types[t], .warp = bw};
                one(&sp, nvrtc && (bw == (t & 1) || a == CK_ACT_GELU), a == 2 && t == 0 && bw == 1);
            }
    for (int t = 0; t < 3; t++) {
        ck_cuda_train_spec sp = {.kind = CK_TRK_SCATTER_ADD, .t = types[t]};
        one(&sp, nvrtc, t == 0);
    }
    ck_cuda_train_spec bad = {.kind = CK_TRK_ROWS, .op = 0, .t = CK_INT32};
    CHECK(ck_cuda_train_source(&bad) == NULL, "an integer type must fail");
    ck_error_clear();
    printf("%d training kernels keyed, %d compiled, %d failures\n", nkeys_, compiled_, failures);
    return failures ? 1 : 0;
}
