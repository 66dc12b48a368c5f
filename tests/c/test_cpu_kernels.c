/* CUDA C kernels on the CPU: the compat header's features (shared memory,
 * barriers, atomics, warp functions, templates, __device__ globals), the
 * error paths (compile errors with the user's line, bad configurations,
 * bounds checking, faults, stack overflows, Ctrl-C and the time limit), the
 * disk cache and the precompiled header.  Needs a C++ compiler; skips
 * without one.  Uses a private cache folder. */
#define _GNU_SOURCE
#include "ck_test.h"
#include "../../src/runtime/cpu_kernels.h"
#include "../../src/runtime/interrupt.h"
#include "cudakit_device.h"

#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static ck_cpu_module *load(const char *src, const char *const *exprs, int nexprs)
{
    ck_cpu_module *m = NULL;
    OK(ck_cpu_module_load(src, NULL, 0, exprs, nexprs, &m));
    return m;
}

static ck_cpu_function *get(ck_cpu_module *m, const char *name)
{
    ck_cpu_function *f = NULL;
    OK(ck_cpu_module_get_function(m, name, &f));
    return f;
}

static void launch(ck_cpu_function *f, unsigned gx, unsigned gy, unsigned bx, unsigned by, size_t shm, void **args)
{
    unsigned grid[3] = {gx, gy, 1}, block[3] = {bx, by, 1};
    OK(ck_cpu_launch(f, grid, block, shm, args, NULL));
}

static const char *k_vadd =
    "extern \"C\" __global__ void vadd(const float *__restrict__ a, const float *b, float *c, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

static void test_vadd(void)
{
    enum { N = 100003 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = calloc(N, sizeof *c);
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 0.5f * (float)i;
    ck_cpu_module *m = load(k_vadd, NULL, 0);
    CHECK(ck_cpu_module_uses_fibers(m) == (getenv("CUDAKIT_CPU_FIBERS") != NULL),
          "a kernel without barriers runs as plain loops unless fibers are forced");
    ck_cpu_function *f = get(m, "vadd");
    size_t sizes[8];
    CHECK(ck_cpu_function_params(f, sizes, 8) == 4, "vadd has 4 parameters");
    CHECK(sizes[0] == sizeof(void *) && sizes[3] == sizeof(int), "parameter sizes %zu %zu", sizes[0], sizes[3]);
    int n = N;
    void *args[] = {&a, &b, &c, &n};
    launch(f, (N + 255) / 256, 1, 256, 1, 0, args);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += c[i] != 1.5f * (float)i;
    CHECK(bad == 0, "vadd: %d wrong", bad);

    /* Per-launch overhead: one block of one thread. */
    n = 1;
    double t0 = now_ms();
    for (int r = 0; r < 2000; r++) launch(f, 1, 1, 1, 1, 0, args);
    double per = (now_ms() - t0) / 2000 * 1e3;
    /* Many blocks with nothing to do: the cost of spreading over the pool. */
    n = 0;
    t0 = now_ms();
    for (int r = 0; r < 500; r++) launch(f, 64, 1, 256, 1, 0, args);
    double pool = (now_ms() - t0) / 500 * 1e3;
    /* A big launch over the pool. */
    n = N;
    t0 = now_ms();
    for (int r = 0; r < 20; r++) launch(f, (N + 255) / 256, 1, 256, 1, 0, args);
    double big = (now_ms() - t0) / 20;
    printf("cpu launch overhead: %.2f us (1 block of 1 thread), %.2f us (64 blocks of 256 threads, no work); "
           "vadd of %d floats: %.3f ms (%s)\n",
           per, pool, N, big, ck_cpu_module_uses_fibers(m) ? "fibers" : "plain loops");
    ck_cpu_module_free(m);
    free(a), free(b), free(c);
}

static const char *k_reduce =
    "extern \"C\" __global__ void block_sum(const float *x, float *out, int n)\n"
    "{\n"
    "    __shared__ float s[256];\n"
    "    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
    "    s[t] = i < (unsigned)n ? x[i] : 0.0f;\n"
    "    __syncthreads();\n"
    "    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {\n"
    "        if (t < k) s[t] += s[t + k];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (t == 0) out[blockIdx.x] = s[0];\n"
    "}\n"
    "extern \"C\" __global__ void count_pos(const float *x, int *out)\n"
    "{\n"
    "    int c = __syncthreads_count(x[threadIdx.x] > 0.0f);\n"
    "    int a = __syncthreads_and(x[threadIdx.x] > -1000.0f);\n"
    "    int o = __syncthreads_or(x[threadIdx.x] > 1000.0f);\n"
    "    if (threadIdx.x == 0) { out[0] = c; out[1] = a; out[2] = o; }\n"
    "}\n";

static void test_block_reduce(void)
{
    enum { N = 10000, B = 256, G = (N + B - 1) / B };
    float *x = malloc(N * sizeof *x), out[G];
    for (int i = 0; i < N; i++) x[i] = (float)(i % 7) - 2.0f;
    ck_cpu_module *m = load(k_reduce, NULL, 0);
    CHECK(ck_cpu_module_uses_fibers(m), "__syncthreads needs fibers");
    CHECK(ck_cpu_function_static_shared(get(m, "block_sum")) == 256 * sizeof(float), "static shared: %zu",
          ck_cpu_function_static_shared(get(m, "block_sum")));
    CHECK(ck_cpu_function_static_shared(get(m, "count_pos")) == 0, "no static shared");
    int n = N;
    float *o = out;
    void *args[] = {&x, &o, &n};
    launch(get(m, "block_sum"), G, 1, B, 1, 0, args);
    for (int g = 0; g < G; g++) {
        double want = 0;
        for (int i = g * B; i < (g + 1) * B && i < N; i++) want += x[i];
        CHECK(fabs(out[g] - want) < 1e-3, "block %d: %g != %g", g, out[g], want);
    }
    int res[3] = {0};
    int *r = res;
    void *a2[] = {&x, &r};
    launch(get(m, "count_pos"), 1, 1, 128, 1, 0, a2);
    int pos = 0;
    for (int i = 0; i < 128; i++) pos += x[i] > 0;
    CHECK(res[0] == pos && res[1] == 1 && res[2] == 0, "syncthreads_count/and/or: %d %d %d (want %d 1 0)", res[0],
          res[1], res[2], pos);
    ck_cpu_module_free(m);
    free(x);
}

static const char *k_transpose =
    "#define TILE 16\n"
    "extern \"C\" __global__ void transpose(const float *in, float *out, int rows, int cols)\n"
    "{\n"
    "    __shared__ float tile[TILE][TILE + 1];\n"
    "    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;\n"
    "    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];\n"
    "    __syncthreads();\n"
    "    x = blockIdx.y * TILE + threadIdx.x;\n"
    "    y = blockIdx.x * TILE + threadIdx.y;\n"
    "    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];\n"
    "}\n"
    "extern \"C\" __global__ void reverse_dyn(const int *in, int *out)\n"
    "{\n"
    "    extern __shared__ int buf[];\n"
    "    buf[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];\n"
    "    __syncthreads();\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "extern __shared__ __align__(16) unsigned char file_smem[];  /* namespace scope */\n"
    "extern \"C\" {\n"
    "__global__ void __launch_bounds__(64) reverse_dyn2(const int *in, int *out)\n"
    "{\n"
    "    int *b = (int *)file_smem;\n"
    "    extern __shared__ __align__(8) unsigned char smem[];\n"
    "    b[threadIdx.x] = in[threadIdx.x] + (smem == file_smem);\n"
    "    __syncthreads();\n"
    "    out[threadIdx.x] = reinterpret_cast<int *>(smem)[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "}\n";

static void test_transpose_and_dynamic_shared(void)
{
    enum { R = 37, C = 53 };
    float *in = malloc(R * C * sizeof *in), *out = calloc(R * C, sizeof *out);
    for (int i = 0; i < R * C; i++) in[i] = (float)i;
    ck_cpu_module *m = load(k_transpose, NULL, 0);
    int rows = R, cols = C;
    void *args[] = {&in, &out, &rows, &cols};
    launch(get(m, "transpose"), (C + 15) / 16, (R + 15) / 16, 16, 16, 0, args);
    int bad = 0;
    for (int y = 0; y < R; y++)
        for (int x = 0; x < C; x++) bad += out[x * R + y] != in[y * C + x];
    CHECK(bad == 0, "transpose: %d wrong", bad);

    enum { B = 64, G = 5 };
    int vin[B * G], vout[B * G];
    for (int i = 0; i < B * G; i++) vin[i] = i;
    int *pi = vin, *po = vout;
    void *a2[] = {&pi, &po};
    launch(get(m, "reverse_dyn"), G, 1, B, 1, B * sizeof(int), a2);
    bad = 0;
    for (int g = 0; g < G; g++)
        for (int t = 0; t < B; t++) bad += vout[g * B + t] != vin[g * B + B - 1 - t];
    CHECK(bad == 0, "extern __shared__: %d wrong", bad);
    launch(get(m, "reverse_dyn2"), 1, 1, B, 1, B * sizeof(int), a2);
    bad = 0;
    for (int t = 0; t < B; t++) bad += vout[t] != vin[B - 1 - t] + 1;
    CHECK(bad == 0, "extern __shared__ at namespace scope, in an extern \"C\" block: %d wrong", bad);
    ck_cpu_module_free(m);
    free(in), free(out);
}

static const char *k_atomics =
    "extern \"C\" __global__ void hist(const int *x, int n, int *bins, float *fsum, unsigned long long *usum,\n"
    "                                 double *dsum, int *mx)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    atomicAdd(&bins[x[i] % 8], 1);\n"
    "    atomicAdd(fsum, 1.0f);\n"
    "    atomicAdd(usum, (unsigned long long)x[i]);\n"
    "    atomicAdd(dsum, 0.5);\n"
    "    atomicMax(mx, x[i]);\n"
    "}\n";

static void test_atomics(void)
{
    enum { N = 50000 };
    int *x = malloc(N * sizeof *x), bins[8] = {0}, mx = -1;
    float fsum = 0;
    unsigned long long usum = 0, want_u = 0;
    double dsum = 0;
    int want_bins[8] = {0};
    for (int i = 0; i < N; i++) {
        x[i] = (i * 7919) % 1000;
        want_bins[x[i] % 8]++;
        want_u += (unsigned long long)x[i];
    }
    ck_cpu_module *m = load(k_atomics, NULL, 0);
    int n = N;
    int *pb = bins, *pm = &mx;
    float *pf = &fsum;
    unsigned long long *pu = &usum;
    double *pd = &dsum;
    void *args[] = {&x, &n, &pb, &pf, &pu, &pd, &pm};
    launch(get(m, "hist"), (N + 127) / 128, 1, 128, 1, 0, args);
    CHECK(!memcmp(bins, want_bins, sizeof bins), "atomicAdd int bins differ");
    CHECK(fsum == (float)N, "atomicAdd float: %g", fsum);
    CHECK(usum == want_u, "atomicAdd ull: %llu != %llu", usum, want_u);
    CHECK(dsum == 0.5 * N, "atomicAdd double: %g", dsum);
    CHECK(mx == 999, "atomicMax: %d", mx);
    ck_cpu_module_free(m);
    free(x);
}

static const char *k_warp =
    "extern \"C\" __global__ void warp_sum(const float *x, float *out, unsigned *ballots)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % warpSize;\n"
    "    float v = x[i];\n"
    "    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);\n"
    "    unsigned b = __ballot_sync(0xffffffffu, x[i] > 2.0f);\n"
    "    float first = __shfl_sync(0xffffffffu, x[i], 3);\n"
    "    int up = __shfl_up_sync(0xffffffffu, (int)lane, 1);\n"
    "    int xr = __shfl_xor_sync(0xffffffffu, (int)lane, 5);\n"
    "    int all = __all_sync(0xffffffffu, x[i] >= 0.0f), any = __any_sync(0xffffffffu, x[i] > 1000.0f);\n"
    "    if (lane == 0) { out[i / 32] = v; ballots[i / 32] = b; }\n"
    "    if (first != x[(i & ~31u) + 3] || up != (int)(lane ? lane - 1 : 0) || xr != (int)(lane ^ 5) || !all || any)\n"
    "        atomicAdd(&ballots[1000], 1u);\n"
    "}\n";

static void test_warp(void)
{
    enum { B = 128, G = 3, N = B * G };
    float x[N], out[N / 32];
    unsigned ballots[1001] = {0};
    for (int i = 0; i < N; i++) x[i] = (float)((i * 13) % 5);
    ck_cpu_module *m = load(k_warp, NULL, 0);
    float *px = x, *po = out;
    unsigned *pb = ballots;
    void *args[] = {&px, &po, &pb};
    launch(get(m, "warp_sum"), G, 1, B, 1, 0, args);
    for (int w = 0; w < N / 32; w++) {
        float want = 0;
        unsigned wb = 0;
        for (int l = 0; l < 32; l++) {
            want += x[w * 32 + l];
            if (x[w * 32 + l] > 2.0f) wb |= 1u << l;
        }
        CHECK(out[w] == want, "warp %d: shfl_down sum %g != %g", w, out[w], want);
        CHECK(ballots[w] == wb, "warp %d: ballot %08x != %08x", w, ballots[w], wb);
    }
    CHECK(ballots[1000] == 0, "%u lanes saw a wrong __shfl_sync/__shfl_up/__shfl_xor/__all/__any", ballots[1000]);
    ck_cpu_module_free(m);
}

static const char *k_template =
    "template <typename T> __global__ void scale(T *x, T a, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= a;\n"
    "}\n"
    "__device__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};\n"
    "__constant__ int cval;\n"
    "extern \"C\" __global__ void use_table(float *out) { out[threadIdx.x] = table[threadIdx.x] * cval; }\n";

static void test_template_and_globals(void)
{
    const char *exprs[] = {"scale<float>", "scale<double>"};
    ck_cpu_module *m = load(k_template, exprs, 2);
    float xf[5] = {1, 2, 3, 4, 5};
    double xd[3] = {1, 2, 3};
    float af = 2.0f;
    double ad = -1.0;
    int n5 = 5, n3 = 3;
    float *pf = xf;
    double *pd = xd;
    void *a1[] = {&pf, &af, &n5}, *a2[] = {&pd, &ad, &n3};
    ck_cpu_function *ff = get(m, "scale<float>"), *fd = get(m, "scale<double>");
    size_t sz[3];
    CHECK(ck_cpu_function_params(fd, sz, 3) == 3 && sz[1] == sizeof(double), "scale<double> parameter sizes");
    launch(ff, 1, 1, 8, 1, 0, a1);
    launch(fd, 1, 1, 8, 1, 0, a2);
    CHECK(xf[4] == 10.0f && xd[2] == -3.0, "templates: %g %g", xf[4], xd[2]);
    void *p = NULL;
    size_t nb = 0;
    OK(ck_cpu_module_get_global(m, "table", &p, &nb));
    CHECK(nb == 4 * sizeof(float) && ((float *)p)[2] == 3.0f, "get_global table: %zu bytes", nb);
    ((float *)p)[0] = 10.0f;
    OK(ck_cpu_module_get_global(m, "cval", &p, &nb));
    CHECK(nb == sizeof(int), "get_global cval: %zu bytes", nb);
    *(int *)p = 3;
    float out[4];
    float *po = out;
    void *a3[] = {&po};
    launch(get(m, "use_table"), 1, 1, 4, 1, 0, a3);
    CHECK(out[0] == 30.0f && out[3] == 12.0f, "globals seen by the kernel: %g %g", out[0], out[3]);
    CHECK(ck_cpu_module_get_global(m, "nope", &p, &nb) == CK_ERR_VALUE, "missing global");
    ck_cpu_function *f;
    CHECK(ck_cpu_module_get_function(m, "scale<int>", &f) == CK_ERR_VALUE &&
              strstr(ck_error_message(), "scale<int>"),
          "missing kernel: %s", ck_error_message());
    ck_cpu_module_free(m);
}

static const char *k_broken =
    "extern \"C\" __global__ void broken(float *x)\n"
    "{\n"
    "    int i = threadIdx.x;\n"
    "    float ck_broken_line = * ;\n"
    "    x[i] = ck_broken_line;\n"
    "}\n";

static void test_compile_error(void)
{
    ck_cpu_module *m = NULL;
    ck_status s = ck_cpu_module_load(k_broken, NULL, 0, NULL, 0, &m);
    const char *msg = ck_error_message();
    CHECK(s == CK_ERR_COMPILE && !m, "broken source: status %d", (int)s);
    CHECK(strstr(msg, ">>    4 |     float ck_broken_line = * ;") != NULL, "no marked line 4 in: %s", msg);
    CHECK(strstr(msg, "kernel.cu:4:") != NULL, "the log names kernel.cu:4: %s", msg);
}

static const char *k_oob =
    "extern \"C\" __global__ void oob(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i <= n) x[i] = 1.0f;  // one too far\n"
    "}\n"
    "extern \"C\" __global__ void oob_sync(const float *x, float *y, int n)\n"
    "{\n"
    "    __shared__ float s[64];\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    s[threadIdx.x] = x[i];  // no guard\n"
    "    __syncthreads();\n"
    "    if (i < n) y[i] = s[threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void fine(float *x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] += 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void wild(int *x) { x[threadIdx.x + 1000000000ll] = 1; }\n"
    "extern \"C\" __global__ void trap(int *x) { assert(x[threadIdx.x] == 0); }\n"
    "#include <assert.h>\n"
    "extern \"C\" __global__ void trap2(int *x) { assert(x[threadIdx.x] < 5); }\n";

static void test_bounds(void)
{
    ck_cpu_set_bounds_mode(1);
    CHECK(ck_cpu_bounds_mode() == 1, "bounds mode on");
    ck_cpu_module *m = load(k_oob, NULL, 0);
    enum { N = 100 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    float *px = x, *py = y;
    int n = N;
    ck_cpu_arg_info info[3] = {{1, x, sizeof x, "x", sizeof(float)}, {0, NULL, 0, "n", 0}, {0}};
    void *args[] = {&px, &n};
    unsigned grid[3] = {4, 1, 1}, block[3] = {32, 1, 1};
    ck_status s = ck_cpu_launch(get(m, "oob"), grid, block, 0, args, info);
    const char *msg = ck_error_message();
    CHECK(s == CK_ERR_INDEX, "oob: status %d (%s)", (int)s, msg);
    CHECK(strstr(msg, "kernel oob") && strstr(msg, "block (3, 0, 0)") && strstr(msg, "thread (4, 0, 0)") &&
              strstr(msg, "argument 0 ('x')") && strstr(msg, "element 100"),
          "oob message: %s", msg);
    CHECK(x[5] == 5.0f, "a failed bounds-mode launch leaves the arrays alone");

    /* Through fibers, the read side, an unnamed argument. */
    ck_cpu_arg_info info2[3] = {{1, x, sizeof x, NULL, sizeof(float)}, {1, y, sizeof y, "y", sizeof(float)}, {0}};
    void *args2[] = {&px, &py, &n};
    unsigned block2[3] = {64, 1, 1}, grid2[3] = {2, 1, 1};
    s = ck_cpu_launch(get(m, "oob_sync"), grid2, block2, 0, args2, info2);
    msg = ck_error_message();
    CHECK(s == CK_ERR_INDEX && strstr(msg, "block (1, 0, 0)") && strstr(msg, "thread (36, 0, 0)") &&
              strstr(msg, "argument 0 ") && strstr(msg, "element 100"),
          "oob_sync: %d %s", (int)s, msg);

    /* A clean run writes its results back; aliasing arguments share a copy. */
    void *args3[] = {&px, &n};
    OK(ck_cpu_launch(get(m, "fine"), grid, block, 0, args3, info));
    CHECK(x[0] == 1.0f && x[99] == 100.0f, "bounds mode results: %g %g", x[0], x[99]);

    /* A module without barriers runs thread by thread in bounds mode, so the
     * thread named is exact. */
    ck_cpu_module *mv = load(k_vadd, NULL, 0);
    float *pa = x;
    int n101 = N + 1;
    ck_cpu_arg_info iv[4] = {{1, x, sizeof x, "a", 4}, {1, x, sizeof x, "b", 4}, {1, y, sizeof y, "c", 4}, {0}};
    void *av[] = {&pa, &pa, &py, &n101};
    s = ck_cpu_launch(get(mv, "vadd"), grid, block, 0, av, iv);
    msg = ck_error_message();
    CHECK(s == CK_ERR_INDEX && strstr(msg, "block (3, 0, 0), thread (4, 0, 0)") && strstr(msg, "element 100"),
          "vadd out of bounds: %d %s", (int)s, msg);
    ck_cpu_module_free(mv);

    /* assert() in a kernel stops the launch, not the process. */
    int z[4] = {0, 0, 7, 0};
    int *pz = z;
    void *args4[] = {&pz};
    unsigned b4[3] = {4, 1, 1}, g4[3] = {1, 1, 1};
    s = ck_cpu_launch(get(m, "trap"), g4, b4, 0, args4, NULL);
    msg = ck_error_message();
    CHECK(s == CK_ERR_RUNTIME && strstr(msg, "thread (2, 0, 0)") && strstr(msg, "assert(x[threadIdx.x] == 0)") &&
              strstr(msg, "kernel.cu:20"),
          "assert: %d %s", (int)s, msg);
    s = ck_cpu_launch(get(m, "trap2"), g4, b4, 0, args4, NULL);
    msg = ck_error_message();
    CHECK(s == CK_ERR_RUNTIME && strstr(msg, "thread (2, 0, 0)") && strstr(msg, "assert(x[threadIdx.x] < 5)") &&
              strstr(msg, "kernel.cu:22"),
          "glibc's assert: %d %s", (int)s, msg);
    ck_cpu_set_bounds_mode(0);
    /* Outside bounds mode a wild access is still an error, not a crash. */
    unsigned b1[3] = {1, 1, 1};
    s = ck_cpu_launch(get(m, "wild"), g4, b1, 0, args4, NULL);
    msg = ck_error_message();
    CHECK(s == CK_ERR_DEVICE && strstr(msg, "kernel wild: illegal memory access") && strstr(msg, "thread (0, 0, 0)"),
          "wild access: %d %s", (int)s, msg);
    ck_cpu_module_free(m);
}

static void test_bad_config(void)
{
    ck_cpu_module *m = load(k_vadd, NULL, 0);
    ck_cpu_function *f = get(m, "vadd");
    float *p = NULL;
    int n = 0;
    void *args[] = {&p, &p, &p, &n};
    unsigned g0[3] = {0, 1, 1}, b1[3] = {256, 1, 1}, g1[3] = {1, 1, 1}, b1025[3] = {1025, 1, 1}, b2[3] = {32, 32, 2};
    CHECK(ck_cpu_launch(f, g0, b1, 0, args, NULL) == CK_ERR_VALUE && strstr(ck_error_message(), "no blocks"),
          "zero grid: %s", ck_error_message());
    CHECK(ck_cpu_launch(f, g1, b1025, 0, args, NULL) == CK_ERR_VALUE && strstr(ck_error_message(), "1025"),
          "1025 threads: %s", ck_error_message());
    CHECK(ck_cpu_launch(f, g1, b2, 0, args, NULL) == CK_ERR_VALUE, "2048 threads");
    CHECK(ck_cpu_launch(f, g1, b1, 1u << 20, args, NULL) == CK_ERR_VALUE, "1 MiB of dynamic shared memory");
    ck_cpu_module_free(m);
}

static const char *k_deadlock =
    "extern \"C\" __global__ void dl(int *x)\n"
    "{\n"
    "    if (threadIdx.x < 16) __syncthreads();\n"
    "    else x[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0);\n"
    "}\n";

static void test_deadlock(void)
{
    /* Half a warp waits at __syncthreads, the other half in a shuffle that
     * needs the first half: neither can go on (undefined on a GPU). */
    ck_cpu_module *m = load(k_deadlock, NULL, 0);
    int x[64] = {0};
    int *px = x;
    void *args[] = {&px};
    unsigned g[3] = {1, 1, 1}, b[3] = {32, 1, 1};
    ck_status s = ck_cpu_launch(get(m, "dl"), g, b, 0, args, NULL);
    CHECK(s == CK_ERR_RUNTIME && strstr(ck_error_message(), "cannot finish"), "deadlock: %d %s", (int)s,
          ck_error_message());
    ck_cpu_module_free(m);
}

/* Faults and stack overflows end the launch with an error, in plain
 * loops and in fibers, and the next launch runs. */
static const char *k_faults =
    "__device__ int deep(int n) { volatile char b[1024]; b[0] = (char)n; b[1023] = 1; return n ? deep(n - 1) + b[0] : 0; }\n"
    "extern \"C\" __global__ void rec(int *o, int n) { o[threadIdx.x] = deep(n); }\n"
    "extern \"C\" __global__ void ill(int *o) { if (threadIdx.x == 3) asm volatile(\"ud2\"); o[threadIdx.x] = 1; }\n"
    "extern \"C\" __global__ void divz(int *o, int n) { o[threadIdx.x] = 7 / (n - (int)threadIdx.x); }\n"
    "extern \"C\" __global__ void ok(int *o) { o[threadIdx.x] = 5; }\n";

static void check_faults(ck_cpu_module *m, int fibers)
{
    int o[32];
    int *po = o, n = 1 << 20, five = 5;
    void *a_rec[] = {&po, &n}, *a_ill[] = {&po}, *a_div[] = {&po, &five};
    unsigned g[3] = {2, 1, 1}, b[3] = {32, 1, 1};
    ck_status s = ck_cpu_launch(get(m, "rec"), g, b, 0, a_rec, NULL);
    const char *msg = ck_error_message();
    CHECK(s == CK_ERR_DEVICE && strstr(msg, "kernel rec: stack overflow") && strstr(msg, "block (0, 0, 0)"),
          "recursion (fibers %d): %d %s", fibers, (int)s, msg);
    s = ck_cpu_launch(get(m, "ill"), g, b, 0, a_ill, NULL);
    msg = ck_error_message();
    CHECK(s == CK_ERR_DEVICE && strstr(msg, "kernel ill: illegal instruction"), "ud2 (fibers %d): %d %s", fibers,
          (int)s, msg);
    CHECK(!fibers || strstr(msg, "thread (3, 0, 0)"), "ud2 names the thread: %s", msg);
    s = ck_cpu_launch(get(m, "divz"), g, b, 0, a_div, NULL);
    msg = ck_error_message();
    CHECK(s == CK_ERR_DEVICE && strstr(msg, "kernel divz: integer division by zero"), "division (fibers %d): %d %s",
          fibers, (int)s, msg);
    CHECK(!fibers || strstr(msg, "thread (5, 0, 0)"), "division names the thread: %s", msg);
    memset(o, 0, sizeof o);
    OK(ck_cpu_launch(get(m, "ok"), g, b, 0, a_ill, NULL));
    CHECK(o[31] == 5, "a launch after the faults runs: %d", o[31]);
}

static void test_faults(void)
{
    ck_cpu_module *m = load(k_faults, NULL, 0);
    check_faults(m, 0);
    ck_cpu_module_free(m);
    setenv("CUDAKIT_CPU_FIBERS", "1", 1);
    m = load(k_faults, NULL, 0);
    check_faults(m, 1);
    ck_cpu_module_free(m);
    unsetenv("CUDAKIT_CPU_FIBERS");
}

static void *launch_big_small_stack(void *f)
{
    int o[4];
    int *po = o, n = 5;
    void *args[] = {&po, &n};
    unsigned g[3] = {1, 1, 1}, b[3] = {4, 1, 1};
    ck_status s = ck_cpu_launch(f, g, b, 0, args, NULL);
    CHECK(s == CK_ERR_DEVICE && strstr(ck_error_message(), "kernel big: stack overflow") &&
              strstr(ck_error_message(), "16 KiB"),
          "CUDAKIT_CPU_STACK_KB=16: %d %s", (int)s, ck_error_message());
    return NULL;
}

/* Fiber stacks follow the frames of the library: a large local array gets
 * its room, one whose size is not static the most. */
static void test_fiber_stacks(void)
{
    const char *small = "extern \"C\" __global__ void sm(int *o) { __syncthreads(); o[threadIdx.x] = 1; }\n";
    const char *big =
        "extern \"C\" __global__ void big(int *o, int n)\n"
        "{ volatile int b[20000]; b[threadIdx.x] = n; __syncthreads(); b[19999] = 2; o[threadIdx.x] = b[threadIdx.x] + b[19999]; }\n";
    const char *vla =
        "extern \"C\" __global__ void vla(int *o, int n) { volatile int b[n]; b[0] = 1; __syncthreads(); o[threadIdx.x] = b[0]; }\n";
    ck_cpu_module *ms = load(small, NULL, 0), *mb = load(big, NULL, 0), *mv = load(vla, NULL, 0);
    size_t ss = ck_cpu_module_fiber_stack(ms), sb = ck_cpu_module_fiber_stack(mb), sv = ck_cpu_module_fiber_stack(mv);
    CHECK(ss == 64 * 1024, "a small kernel's fibers get 64 KiB: %zu", ss);
    CHECK(sb >= 80000 + 32 * 1024 && sb < 160 * 1024, "80 KB of locals: %zu", sb);
    CHECK(sv == (512 + 32) * 1024, "a variable-length array: %zu", sv);
    int o[64];
    int *po = o, n = 5;
    void *args[] = {&po, &n};
    launch(get(mb, "big"), 2, 1, 64, 1, 0, args);
    CHECK(o[0] == 7 && o[63] == 7, "80 KB of locals with a barrier: %d %d", o[0], o[63]);
    ck_cpu_module_free(ms);
    ck_cpu_module_free(mb);
    ck_cpu_module_free(mv);
    /* Too small a stack by choice: an error, not a crash.  On a thread of
     * its own, whose stacks have not grown for the kernels above. */
    setenv("CUDAKIT_CPU_STACK_KB", "16", 1);
    mb = load(big, NULL, 0);
    pthread_t th;
    pthread_create(&th, NULL, launch_big_small_stack, get(mb, "big"));
    pthread_join(th, NULL);
    unsetenv("CUDAKIT_CPU_STACK_KB");
    ck_cpu_module_free(mb);
}

static volatile sig_atomic_t own_sigints;
static void own_sigint(int sig) { (void)sig; own_sigints++; }

static void *send_sigint(void *arg)
{
    usleep((useconds_t)(uintptr_t)arg);
    kill(getpid(), SIGINT);
    return NULL;
}

/* Ctrl-C and the time limit stop a kernel that never ends, in a loop of
 * its own or over a huge grid; the program's SIGINT handler is back after. */
static void test_interrupt(void)
{
    const char *src =
        "extern \"C\" __global__ void spin(int *o) { while (o[0] != 12345) o[1]++; }\n"
        "extern \"C\" __global__ void spin_do(int *o) { do o[1]++; while (o[0] != 12345); }\n"
        "extern \"C\" __global__ void spin_for(int *o) { for (;;) o[1]++; }\n"
        "extern \"C\" __global__ void tiny(int *o) { if (threadIdx.x == 0) o[1] = 1; }\n";
    struct sigaction sa, back;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_sigint;
    sigaction(SIGINT, &sa, NULL);
    ck_cpu_module *m = load(src, NULL, 0);
    int o[32] = {0};
    int *po = o;
    void *args[] = {&po};
    const char *names[] = {"spin", "spin_do", "spin_for", "tiny"};
    for (int k = 0; k < 4; k++) {
        unsigned g[3] = {4, 1, 1}, b[3] = {32, 1, 1};
        if (k == 3) g[0] = g[1] = g[2] = 65535;
        pthread_t th;
        pthread_create(&th, NULL, send_sigint, (void *)(uintptr_t)300000);
        double t0 = now_ms();
        ck_status s = ck_cpu_launch(get(m, names[k]), g, b, 0, args, NULL);
        pthread_join(th, NULL);
        CHECK(s == CK_ERR_INTERRUPT && strstr(ck_error_message(), names[k]) && strstr(ck_error_message(), "SIGINT"),
              "%s interrupted: %d %s", names[k], (int)s, ck_error_message());
        CHECK(now_ms() - t0 < 5000, "%s stopped in %.0f ms", names[k], now_ms() - t0);
    }
    CHECK(own_sigints == 0, "the program's handler did not see the SIGINTs the launches took: %d", (int)own_sigints);
    sigaction(SIGINT, NULL, &back);
    CHECK(back.sa_handler == own_sigint, "the program's SIGINT handler is back");
    kill(getpid(), SIGINT);
    CHECK(own_sigints == 1, "and gets the next SIGINT: %d", (int)own_sigints);

    /* A SIGINT caught that no operation reported reaches the program's
     * handler when catching ends; one reported does not. */
    CHECK(ck_sigint_catch_begin() == 1, "catching begins");
    unsigned c0 = ck_sigint_count();
    kill(getpid(), SIGINT);
    CHECK(ck_sigint_count() == c0 + 1 && own_sigints == 1, "caught: %u %d", ck_sigint_count() - c0, (int)own_sigints);
    ck_sigint_catch_end();
    CHECK(own_sigints == 2, "raised again for the program: %d", (int)own_sigints);
    CHECK(ck_sigint_catch_begin() == 1, "catching begins again");
    kill(getpid(), SIGINT);
    ck_sigint_reported();
    ck_sigint_catch_end();
    CHECK(own_sigints == 2, "a reported one is not raised again: %d", (int)own_sigints);
    signal(SIGINT, SIG_IGN);
    CHECK(ck_sigint_catch_begin() == 0, "an ignored SIGINT is not caught");
    signal(SIGINT, SIG_DFL);
    CHECK(ck_sigint_catch_begin() == 0, "nor one with its default action");
    sigaction(SIGINT, &sa, NULL);

    OK(ck_kernel_timeout_set(0.25));
    unsigned g[3] = {4, 1, 1}, b[3] = {32, 1, 1};
    double t0 = now_ms();
    ck_status s = ck_cpu_launch(get(m, "spin_for"), g, b, 0, args, NULL);
    CHECK(s == CK_ERR_DEVICE && strstr(ck_error_message(), "spin_for") && strstr(ck_error_message(), "0.25 s"),
          "the time limit: %d %s", (int)s, ck_error_message());
    CHECK(now_ms() - t0 >= 250 && now_ms() - t0 < 5000, "stopped after %.0f ms", now_ms() - t0);
    CHECK(ck_kernel_timeout_set(-1) == CK_ERR_VALUE, "a negative time limit");
    OK(ck_kernel_timeout_set(0));
    OK(ck_cpu_launch(get(m, "tiny"), g, b, 0, args, NULL));
    CHECK(o[1] == 1, "a launch after them runs");
    ck_cpu_module_free(m);
    signal(SIGINT, SIG_DFL);
}

static void test_disk_cache(void)
{
    const char *src = "extern \"C\" __global__ void cached(int *x) { x[threadIdx.x] = 7 + CK_TEST_SALT; }\n";
    char opt[64];
    snprintf(opt, sizeof opt, "-DCK_TEST_SALT=%d", (int)getpid());
    const char *opts[] = {opt, "-arch=sm_90", "--std=c++17"};
    ck_cpu_module *m1 = NULL, *m2 = NULL;
    OK(ck_cpu_module_load(src, opts, 3, NULL, 0, &m1));
    OK(ck_cpu_module_load(src, opts, 3, NULL, 0, &m2));
    CHECK(!ck_cpu_module_from_disk(m1) && ck_cpu_module_from_disk(m2), "second load from the disk cache: %d %d",
          ck_cpu_module_from_disk(m1), ck_cpu_module_from_disk(m2));
    printf("cpu module: first compile %.1f ms, cache hit %.2f ms\n", ck_cpu_module_load_ms(m1),
           ck_cpu_module_load_ms(m2));
    int x[2] = {0};
    int *px = x;
    void *args[] = {&px};
    unsigned g[3] = {1, 1, 1}, b[3] = {2, 1, 1};
    OK(ck_cpu_launch(get(m2, "cached"), g, b, 0, args, NULL));
    CHECK(x[1] == 7 + (int)getpid(), "cached module runs: %d", x[1]);
    ck_cpu_module_free(m1);
    ck_cpu_module_free(m2);
}

/* The precompiled header: built in the background after a compile finds
 * none, used by the compiles after it is there. */
static void test_precompiled_header(const char *dir)
{
    unsetenv("CUDAKIT_CPU_PCH");
    const char *src = "extern \"C\" __global__ void pch1(int *x) { x[threadIdx.x] = 11; }\n";
    ck_cpu_module *m = load(src, NULL, 0);
    ck_cpu_module_free(m);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/cpu-pch-*/cuda_compat.hpp.gch >/dev/null 2>&1", dir);
    int ready = 0;
    for (int i = 0; i < 600 && !ready; i++) {
        ready = system(cmd) == 0;
        if (!ready) usleep(100000);
    }
    if (!ready) {
        /* Only g++ makes one (clang, or CUDAKIT_CPU_PCH=0 outside). */
        printf("no precompiled header was made (compiler without support?)\n");
        return;
    }
    const char *src2 = "extern \"C\" __global__ void pch2(int *x) { x[threadIdx.x] = 12 + (int)sqrtf(4.0f); }\n";
    m = load(src2, NULL, 0);
    printf("cpu module with the precompiled header: first compile %.1f ms\n", ck_cpu_module_load_ms(m));
    int x[3] = {0};
    int *px = x;
    void *args[] = {&px};
    launch(get(m, "pch2"), 1, 1, 3, 1, 0, args);
    CHECK(x[2] == 14, "a module compiled with the precompiled header: %d", x[2]);
    ck_cpu_module_free(m);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* Token pasting: a macro that can only paste a name of its own (fmod##SUF)
 * leaves the kernel plain loops; one that can paste anything (a##b,
 * __sync##x) needs fibers, since the result might be a barrier. */
static void test_token_pasting(void)
{
    static const char *const safe =
        "#define CK_T_MOD(SUF) fmod##SUF\n"
        "#define CK_T_CAT(K, a) CK_T_ADD_##K##_x(a)\n"
        "#define CK_T_ADD_F_x(a) ((a) + 1.0f)\n"
        "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] = CK_T_CAT(F, CK_T_MOD(f)(x[threadIdx.x], 7.0f)); }\n";
    static const char *const unsafe[] = {
        "#define CAT(a, b) a##b\nextern \"C\" __global__ void k(float *x) { CAT(__sync, threads)(); x[0] = 1; }\n",
        "#define S(x) __sync##x\nextern \"C\" __global__ void k(float *x) { S(threads)(); x[0] = 1; }\n",
        "#define V(...) __VA_ARGS__##threads\nextern \"C\" __global__ void k(float *x) { V(__sync)(); x[0] = 1; }\n",
        "#define W(p, q) ck_ \\\n  ## p ## q\n#define X(a) a ## \\\n  b\nextern \"C\" __global__ void k(float *x) { x[0] = 1; }\n",
    };
    ck_cpu_module *m = load(safe, NULL, 0);
    CHECK(!ck_cpu_module_uses_fibers(m), "pasting onto a name of the macro's own is plain loops");
    float x[32];
    for (int i = 0; i < 32; i++) x[i] = (float)i;
    float *px = x;
    void *args[] = {&px};
    launch(get(m, "k"), 1, 1, 32, 1, 0, args);
    for (int i = 0; i < 32; i++) CHECK(x[i] == fmodf((float)i, 7.0f) + 1.0f, "x[%d] = %g", i, x[i]);
    ck_cpu_module_free(m);
    for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++) {
        m = load(unsafe[i], NULL, 0);
        CHECK(ck_cpu_module_uses_fibers(m), "pasting case %zu needs fibers", i);
        ck_cpu_module_free(m);
    }
}

/* A barrier in a section the CPU's compile leaves out (#ifndef CUDAKIT_CPU,
 * #ifdef __CUDA_ARCH__ and their #else) does not make fibers; one under
 * any other condition does. */
static void test_gpu_only_sections(void)
{
#define K_(body) "extern \"C\" __global__ void k(float *x)\n{\n" body "    x[threadIdx.x] += 1.0f;\n}\n"
    static const char *const plain[] = {
        K_("#ifndef CUDAKIT_CPU\n    __syncthreads();\n#endif\n"),
        K_("#if !defined(CUDAKIT_CPU)\n    __syncthreads();\n#else\n    x[0] += 0.0f;\n#endif\n"),
        K_("#ifdef CUDAKIT_CPU\n    x[0] += 0.0f;\n#elif 1\n    __syncthreads();\n#else\n    __syncwarp();\n#endif\n"),
        K_("#if defined( __CUDA_ARCH__ ) /* the GPU's */\n#if 1\n    __syncthreads();\n#endif\n#endif\n"),
        K_("#ifndef __CUDA_ARCH__\n    x[0] += 0.0f;\n#else\n    __syncthreads();\n#endif\n"),
    };
    static const char *const fibers[] = {
        K_("#if __CUDA_ARCH__ < 700\n    __syncthreads();\n#endif\n"),
        K_("#ifdef __CUDA_ARCH__\n    x[0] += 0.0f;\n#else\n    __syncthreads();\n#endif\n"),
        K_("#ifndef CUDAKIT_CPU\n    x[0] += 0.0f;\n#elif 1\n    __syncthreads();\n#endif\n"),
        K_("#if defined(CUDAKIT_CPU) || 1\n    __syncthreads();\n#endif\n"),
        K_("#ifndef CUDAKIT_CPU\n#endif\n    __syncthreads();\n"),
    };
#undef K_
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        ck_cpu_module *m = load(plain[i], NULL, 0);
        CHECK(!ck_cpu_module_uses_fibers(m), "GPU-only case %zu is plain loops", i);
        float x[8] = {0};
        float *px = x;
        void *args[] = {&px};
        launch(get(m, "k"), 1, 1, 8, 1, 0, args);
        for (int t = 0; t < 8; t++) CHECK(x[t] == 1.0f, "case %zu: x[%d] = %g", i, t, x[t]);
        ck_cpu_module_free(m);
    }
    for (size_t i = 0; i < sizeof fibers / sizeof *fibers; i++) {
        ck_cpu_module *m = load(fibers[i], NULL, 0);
        CHECK(ck_cpu_module_uses_fibers(m), "case %zu may reach a barrier on the CPU", i);
        ck_cpu_module_free(m);
    }
}

int main(void)
{
    char dir[] = "/tmp/ck-cpu-kernels-test-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    setenv("CUDAKIT_CACHE_DIR", dir, 1);
    setenv("CUDAKIT_CPU_PCH", "0", 1); /* until test_precompiled_header */
    ck_cpu_module *probe = NULL;
    if (ck_cpu_module_load(k_vadd, NULL, 0, NULL, 0, &probe) != CK_OK) {
        if (strstr(ck_error_message(), "no C++ compiler")) {
            printf("SKIP: %s\n", ck_error_message());
            return 0;
        }
        fprintf(stderr, "loading the first kernel failed: %s\n", ck_error_message());
        return 1;
    }
    ck_cpu_module_free(probe);
    test_vadd();
    test_block_reduce();
    if (!getenv("CUDAKIT_CPU_FIBERS")) test_token_pasting();
    if (!getenv("CUDAKIT_CPU_FIBERS")) test_gpu_only_sections();
    test_transpose_and_dynamic_shared();
    test_atomics();
    test_warp();
    test_template_and_globals();
    test_compile_error();
    test_bounds();
    test_bad_config();
    test_deadlock();
    test_faults();
    test_fiber_stacks();
    test_interrupt();
    test_disk_cache();
    /* The same kernels as fibers even without barriers (CUDAKIT_CPU_FIBERS=1). */
    setenv("CUDAKIT_CPU_FIBERS", "1", 1);
    test_vadd();
    test_atomics();
    unsetenv("CUDAKIT_CPU_FIBERS");
    test_precompiled_header(dir);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
