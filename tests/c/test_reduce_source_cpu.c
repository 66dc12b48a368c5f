/* The GPU's min/max reduction kernels (src/codegen/cuda_reduce_codegen.c)
 * run on the CPU target (the CUDA C runtime of src/runtime/cpu_kernels),
 * so that their answer can be checked here without a GPU: of equal zeros
 * (and of NaNs) the one NumPy's sequential loop keeps, whatever the order
 * in which the block's tree and the splits' final combine meet them. */
#include "ck_test.h"
#include "cudakit_device.h"
#include "cudakit_module.h"
#include "../../src/codegen/cuda_reduce_codegen.h"

#include <math.h>
#include <string.h>

/* NumPy's loop: acc = max(acc, x) with the first NaN kept and, of equal
 * values, the later (float32/64) or the first (float16). */
static float sequential(const float *x, long long n, int is_max, int later)
{
    float acc = x[0];
    for (long long j = 1; j < n; j++) {
        float v = x[j];
        if (acc != acc) continue;
        if (v != v) { acc = v; continue; }
        int better = is_max ? v > acc : v < acc;
        if (better || (v == acc && later)) acc = v;
    }
    return acc;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* One reduction of x (n floats) by the block kernel, split in `splits`
 * chunks combined by the final kernel when more than one. */
static float run(ck_function *blockf, ck_function *finalf, const float *x, long long n, long long splits)
{
    ck_cuda_red_nd nd;
    memset(&nd, 0, sizeof nd);
    nd.in_shape[0] = n;
    nd.in_st[0] = 4;
    long long n_out = 1, inner = n, chunk = (n + splits - 1) / splits;
    splits = (n + chunk - 1) / chunk;
    float out = NAN;
    char partial[64 * 32];
    const char *in = (const char *)x;
    char *o = (char *)&out;
    void *pp = partial;
    void *args[7] = {&n_out, &inner, &chunk, &nd, &in, &o, &pp};
    unsigned grid[3] = {1, (unsigned)splits, 1}, block[3] = {256, 1, 1};
    OK(ck_function_launch(blockf, grid, block, 0, NULL, 7, args, NULL));
    if (splits > 1) {
        int sp32 = (int)splits;
        void *fargs[5] = {&n_out, &sp32, &nd, &o, &pp};
        unsigned fg[3] = {1, 1, 1};
        OK(ck_function_launch(finalf, fg, block, 0, NULL, 5, fargs, NULL));
    }
    OK(ck_device_synchronize(ck_device_cpu()));
    return out;
}

int main(void)
{
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    float nan1, nan2;
    uint32_t b1 = 0x7FC00001u, b2 = 0xFFC00002u;
    memcpy(&nan1, &b1, 4);
    memcpy(&nan2, &b2, 4);
    for (int is_max = 0; is_max < 2; is_max++) {
        ck_cuda_red_spec sp = {.op = is_max ? CK_REDUCE_MAX : CK_REDUCE_MIN, .in = CK_FLOAT32, .out = CK_FLOAT32,
                               .nout = 0, .nin = 1};
        char *src = ck_cuda_red_source(&sp);
        CHECK(src != NULL, "no source: %s", ck_error_message());
        if (!src) continue;
        ck_module *m;
        OK(ck_module_load(ck_device_cpu(), src, "red.cu", NULL, 0, NULL, 0, &m));
        free(src);
        ck_function *blockf, *finalf;
        OK(ck_module_get_function(m, "ck_red_block", &blockf));
        OK(ck_module_get_function(m, "ck_red_final", &finalf));
        /* the case, then runs of signed zeros (with a NaN now and
         * then) of lengths where the tree and the splits meet them out of order */
        float x[2000];
        float first[3] = {0.0f, -0.0f, 0.0f};
        float got = run(blockf, finalf, first, 3, 1);
        CHECK(bits(got) == bits(sequential(first, 3, is_max, 1)), "%s([0, -0, 0]) = %g (sign %d)",
              is_max ? "max" : "min", got, (int)signbit(got));
        for (int trial = 0; trial < 60; trial++) {
            long long n = 1 + (long long)(ck_test_rand() % 1999);
            for (long long j = 0; j < n; j++) {
                uint64_t r = ck_test_rand() % 100;
                x[j] = r < 48 ? -0.0f : r < 96 ? 0.0f : r < 98 ? (is_max ? -1.0f : 1.0f) : r < 99 ? nan1 : nan2;
            }
            long long splits = 1 + trial % 4;
            float want = sequential(x, n, is_max, 1);
            got = run(blockf, finalf, x, n, splits);
            CHECK(bits(got) == bits(want), "%s of %lld (splits %lld): %08x, NumPy's loop %08x", is_max ? "max" : "min",
                  n, splits, bits(got), bits(want));
        }
        ck_module_free(m);
    }
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce_source_cpu: all passed\n");
    return 0;
}
