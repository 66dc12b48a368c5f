/* The kernel compiler and its disk cache: a cold compile gives a CUBIN,
 * the second call reads it back, damaged entries are rebuilt, compile
 * errors carry the offending source line, and concurrent callers agree.
 * Needs NVRTC but no GPU; without NVRTC it skips. */
#define _GNU_SOURCE
#include "cudakit.h"
#include "../../src/platform/cuda_api.h"
#include "../../src/runtime/kcache.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

#define CHECK_OK(call)                                                           \
    do {                                                                         \
        ck_status s_ = (call);                                                   \
        if (s_ != CK_OK) {                                                       \
            fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, (int)s_, \
                    ck_error_message());                                         \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static const char *k_trivial =
    "extern \"C\" __global__ void ck_test_fill(float *x, float v, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = v;\n"
    "}\n";

/* Line 4 is the broken one; the test looks for its text in the message. */
static const char *k_broken =
    "extern \"C\" __global__ void ck_test_broken(float *x)\n"
    "{\n"
    "    int i = threadIdx.x;\n"
    "    float ck_broken_line = * ;\n"
    "    x[i] = ck_broken_line;\n"
    "}\n";

static int is_elf(const ck_kernel_image *img)
{
    const unsigned char *p = img->data;
    return img->size > 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

/* An image the driver could load: a CUBIN when NVRTC can make one. */
static int image_valid(const ck_kernel_image *img)
{
    if (!img->data || !img->size) return 0;
    if (img->is_cubin) return is_elf(img);
    return strstr(img->data, ".entry") != NULL && ((const char *)img->data)[img->size - 1] == '\0';
}

/* Cache entries in dir with the given suffix; the name of the last one
 * found goes to *last (malloc'd) when asked. */
static int count_entries(const char *dir, const char *suffix, char **last)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l >= sl && !strcmp(e->d_name + l - sl, suffix)) {
            n++;
            if (last) {
                free(*last);
                if (asprintf(last, "%s/%s", dir, e->d_name) < 0) *last = NULL;
            }
        }
    }
    closedir(d);
    return n;
}

/* Anything in dir that is not a finished entry: temporary files left behind. */
static int count_strays(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

typedef struct {
    const char *src;
    ck_kernel_image img;
    ck_status status;
} thread_job;

static void *compile_thread(void *arg)
{
    thread_job *j = arg;
    j->status = ck_kernel_compile(j->src, "ck_threads.cu", NULL, 0, 90, &j->img);
    return NULL;
}

static nvrtcResult fake_get_cubin(nvrtcProgram prog, char *cubin)
{
    (void)prog, (void)cubin;
    return 7;
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("test_kcache: SKIP (NVRTC not available: %s)\n", ck_error_message());
        return 0;
    }
    unsetenv("CUDAKIT_DEBUG");
    char root[] = "/tmp/ck_kcache_test_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    /* Two levels that do not exist yet, so the mkdir -p path is exercised
     * and the mode checked is the one the cache chose. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/nested/cache", root);
    setenv("CUDAKIT_CACHE_DIR", dir, 1);

    /* ---- cold compile, then a disk hit */
    ck_kernel_image a = {0}, b = {0}, c = {0};
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &a));
    CHECK(a.from_disk == 0);
    CHECK(a.is_cubin == 1); /* NVRTC 11.1+ makes CUBINs; this machine's is 13 */
    CHECK(image_valid(&a));
    CHECK(is_elf(&a));
    double cold_ms = a.compile_ms;

    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &b));
    CHECK(b.from_disk == 1);
    CHECK(b.is_cubin == a.is_cubin);
    CHECK(b.size == a.size && a.data && b.data && !memcmp(a.data, b.data, a.size));
    double disk_ms = b.compile_ms;
    printf("test_kcache: trivial kernel for sm_90: %.2f ms cold, %.3f ms from disk (%zu-byte %s)\n", cold_ms,
           disk_ms, a.size, a.is_cubin ? "cubin" : "ptx");

    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
    char *entry = NULL;
    CHECK(count_entries(dir, ".cubin", &entry) == 1);
    CHECK(count_strays(dir) == 0);

    /* A different architecture or option is a different entry. */
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 80, &c));
    CHECK(c.from_disk == 0 && is_elf(&c));
    ck_kernel_image_free(&c);
    const char *opt_lineinfo[] = {"-lineinfo"};
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", opt_lineinfo, 1, 90, &c));
    CHECK(c.from_disk == 0 && is_elf(&c));
    ck_kernel_image_free(&c);
    CHECK(count_entries(dir, ".cubin", NULL) == 3);

    /* ---- a truncated entry is a miss, rebuilt in place */
    CHECK(entry && stat(entry, &st) == 0);
    CHECK(entry && truncate(entry, st.st_size / 2) == 0);
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
    CHECK(c.from_disk == 0 && image_valid(&c));
    CHECK(c.size == a.size && c.data && !memcmp(c.data, a.data, a.size));
    ck_kernel_image_free(&c);
    CHECK(entry && stat(entry, &st) == 0 && (size_t)st.st_size > a.size);
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
    CHECK(c.from_disk == 1 && image_valid(&c));
    ck_kernel_image_free(&c);

    /* ---- so is one with a flipped payload byte (same size: the checksum
     * has to catch it), and one with a bad magic */
    for (int which = 0; which < 2 && entry; which++) {
        int fd = open(entry, O_RDWR);
        CHECK(fd >= 0);
        if (fd < 0) break;
        off_t at = which == 0 ? st.st_size - 7 : 0;
        unsigned char byte;
        CHECK(pread(fd, &byte, 1, at) == 1);
        byte ^= 0x5a;
        CHECK(pwrite(fd, &byte, 1, at) == 1);
        close(fd);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        CHECK(c.from_disk == 0 && image_valid(&c));
        CHECK(c.size == a.size && c.data && !memcmp(c.data, a.data, a.size));
        ck_kernel_image_free(&c);
    }

    /* ---- a syntax error: CK_ERR_COMPILE, the log, and the line itself */
    CHECK(ck_kernel_compile(k_broken, "ck_test_broken.cu", NULL, 0, 90, &c) == CK_ERR_COMPILE);
    CHECK(c.data == NULL);
    const char *msg = ck_error_message();
    CHECK(strstr(msg, "float ck_broken_line = * ;") != NULL);
    CHECK(strstr(msg, ">>    4 |") != NULL);
    CHECK(strstr(msg, "ck_test_broken.cu(4): error") != NULL);
    CHECK(strstr(msg, "    2 | {") != NULL); /* context before */
    CHECK(strstr(msg, "    6 | }") != NULL); /* and after */
    if (failures) fprintf(stderr, "compile error message was:\n%s\n", msg);
    CHECK(count_entries(dir, ".cubin", NULL) == 3); /* failures are not cached */

    /* ---- the caller's -std replaces ours; a C++17 feature builds by default */
    const char *opt_std[] = {"-std=c++14"};
    CHECK_OK(ck_kernel_compile(k_trivial, NULL, opt_std, 1, 90, &c));
    CHECK(is_elf(&c));
    ck_kernel_image_free(&c);
    static const char *k_cpp17 =
        "template <typename T> __device__ T ck_pick(T x) { if constexpr (sizeof(T) == 4) return x; else return 0; }\n"
        "extern \"C\" __global__ void ck_test17(float *x) { x[0] = ck_pick(x[0]); }\n";
    CHECK_OK(ck_kernel_compile(k_cpp17, NULL, NULL, 0, 90, &c));
    CHECK(is_elf(&c));
    ck_kernel_image_free(&c);

    /* ---- CUDAKIT_DEBUG=kernels: numbered source, options and time on stderr */
    {
        char logpath[600];
        snprintf(logpath, sizeof logpath, "%s/debug.txt", root);
        fflush(stderr);
        int saved = dup(2);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CHECK(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        setenv("CUDAKIT_DEBUG", "alloc,kernels", 1);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        unsetenv("CUDAKIT_DEBUG");
        ck_kernel_image_free(&c);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        char text[8192] = {0};
        FILE *f = fopen(logpath, "r");
        CHECK(f != NULL);
        if (f) {
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = '\0';
            fclose(f);
        }
        CHECK(strstr(text, "    4 |     if (i < n) x[i] = v;") != NULL);
        CHECK(strstr(text, "--gpu-architecture=sm_90") != NULL);
        CHECK(strstr(text, "from the disk cache") != NULL);
        CHECK(strstr(text, " ms") != NULL);
        if (failures) fprintf(stderr, "debug output was:\n%s\n", text);
    }

    /* ---- several threads compiling one new kernel at once */
    {
        enum { NT = 6 };
        static const char *k_shared =
            "extern \"C\" __global__ void ck_test_shared(int *x) { x[threadIdx.x] += 1; }\n";
        thread_job jobs[NT];
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
            memset(&jobs[i], 0, sizeof jobs[i]);
            jobs[i].src = k_shared;
            CHECK(pthread_create(&th[i], NULL, compile_thread, &jobs[i]) == 0);
        }
        for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < NT; i++) {
            CHECK(jobs[i].status == CK_OK && is_elf(&jobs[i].img));
            CHECK(jobs[i].img.size == jobs[0].img.size && !memcmp(jobs[i].img.data, jobs[0].img.data, jobs[0].img.size));
        }
        for (int i = 0; i < NT; i++) ck_kernel_image_free(&jobs[i].img);
        CHECK(count_strays(dir) == 0);
        CHECK(count_entries(dir, ".cubin", NULL) == 6);
        CHECK_OK(ck_kernel_compile(k_shared, "ck_threads.cu", NULL, 0, 90, &c));
        CHECK(c.from_disk == 1);
        ck_kernel_image_free(&c);
    }

    /* ---- "off" and "" disable the disk cache */
    const char *offs[] = {"off", ""};
    for (int i = 0; i < 2; i++) {
        setenv("CUDAKIT_CACHE_DIR", offs[i], 1);
        for (int k = 0; k < 2; k++) {
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.from_disk == 0 && is_elf(&c));
            ck_kernel_image_free(&c);
        }
    }

    /* ---- unset: $XDG_CACHE_HOME/cudakit */
    {
        char xdg[512], xdgdir[600];
        snprintf(xdg, sizeof xdg, "%s/xdg", root);
        snprintf(xdgdir, sizeof xdgdir, "%s/cudakit", xdg);
        unsetenv("CUDAKIT_CACHE_DIR");
        setenv("XDG_CACHE_HOME", xdg, 1);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        ck_kernel_image_free(&c);
        CHECK(count_entries(xdgdir, ".cubin", NULL) == 1);
        CHECK(stat(xdgdir, &st) == 0 && (st.st_mode & 07777) == 0700);
    }

    /* ---- an NVRTC without nvrtcGetCUBIN (before 11.1): PTX for compute_XX.
     * A function of ours in the table looks like cuda_api.c's stub for a
     * missing symbol. */
    {
        setenv("CUDAKIT_CACHE_DIR", dir, 1);
        __typeof__(ck_nvrtc.nvrtcGetCUBIN) real = ck_nvrtc.nvrtcGetCUBIN;
        ck_nvrtc.nvrtcGetCUBIN = fake_get_cubin;
        for (int k = 0; k < 2; k++) {
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.is_cubin == 0 && c.from_disk == k && image_valid(&c));
            CHECK(c.data && strstr(c.data, ".target sm_90") != NULL);
            ck_kernel_image_free(&c);
        }
        ck_nvrtc.nvrtcGetCUBIN = real;
        CHECK(count_entries(dir, ".ptx", NULL) == 1);
    }

    /* ---- bad arguments */
    CHECK(ck_kernel_compile(NULL, NULL, NULL, 0, 90, &c) == CK_ERR_VALUE);
    CHECK(ck_kernel_compile(k_trivial, NULL, NULL, 0, 0, &c) == CK_ERR_VALUE);
    CHECK(ck_kernel_compile(k_trivial, NULL, NULL, 1, 90, &c) == CK_ERR_VALUE);
    ck_kernel_image_free(NULL);

    ck_kernel_image_free(&a);
    ck_kernel_image_free(&b);
    free(entry);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);

    if (failures) {
        fprintf(stderr, "test_kcache: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_kcache: OK\n");
    return 0;
}
