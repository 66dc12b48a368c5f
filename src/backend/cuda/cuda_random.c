/*
 * Random fills on the GPU: the simple distributions of the Philox4x32-10
 * stream (src/ops/random_formulas.h, shared with the CPU loops, so the
 * same key and counter give the same bits), one thread per block of 4
 * words, the block's elements stored as one vector.
 */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct rng_spec {
    int dist;
    ck_dtype t;
    int per, vec;
} rng_spec;

static const char *rng_storage(ck_dtype t)
{
    switch (ck_dtype_get_info(t)->itemsize) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return t == CK_FLOAT32 ? "float" : "unsigned int";
    default: return t == CK_FLOAT64 ? "double" : "unsigned long long";
    }
}

static char *rng_source(const void *vspec)
{
    const rng_spec *sp = vspec;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b,
        "typedef unsigned int uint32_t;\ntypedef unsigned long long uint64_t;\ntypedef long long int64_t;\n"
        "#define CK_RNG_FN static __device__ __forceinline__\n"
        "#define CK_PHILOX_M0 0x%08Xu\n#define CK_PHILOX_M1 0x%08Xu\n#define CK_PHILOX_W0 0x%08Xu\n#define CK_PHILOX_W1 0x%08Xu\n",
        CK_PHILOX_M0, CK_PHILOX_M1, CK_PHILOX_W0, CK_PHILOX_W1);
    ck_sbuf_printf(&b, "%s\n", ck_src_random_formulas);
    ck_sbuf_printf(&b, "#define CK_RD %d\n#define CK_RT %s\n#define CK_RPER %d\n#define CK_RF32 %d\n#define CK_RBOOL %d\n"
                       "#define CK_RVEC %d\n%s",
                   sp->dist, rng_storage(sp->t), sp->per, sp->per == 4, sp->t == CK_BOOL, sp->vec, ck_src_random_kernels);
    return ck_sbuf_finish(&b);
}

/* The source of one fill kind, for the C test that compiles it with NVRTC. */
char *ck_cuda_random_source_for_test(int dist, ck_dtype t, int per, int vec);
char *ck_cuda_random_source_for_test(int dist, ck_dtype t, int per, int vec)
{
    rng_spec sp = {dist, t, per, vec};
    return rng_source(&sp);
}

/* gamma, beta, poisson, binomial: a thread per element, its own stream */
static ck_status heavy(const ck_random_desc *d, int dev)
{
    if (d->dist > CK_RANDOM_BINOMIAL)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "random distribution %d is not implemented on the GPU", (int)d->dist);
    rng_spec sp = {(int)d->dist, d->type, 0, 0};
    uint64_t key = (0x43ull << 56) | (1ull << 40) | ((uint64_t)sp.dist << 16) | ((uint64_t)sp.t << 8);
    CUfunction f;
    ck_status s = ck_cuda_get_kernel(dev, key, rng_source, &sp, "ck_rng_heavy", &f);
    if (s != CK_OK) return s;
    long long n = d->n;
    char *out = d->data;
    uint32_t k0 = d->key[0], k1 = d->key[1], c0 = d->ctr[0], c1 = d->ctr[1], c2 = d->ctr[2], c3 = d->ctr[3];
    double a = d->a, b = d->b;
    const double *aa = d->a_arr, *ba = d->b_arr;
    void *args[] = {&n, &out, &k0, &k1, &c0, &c1, &c2, &c3, &a, &b, &aa, &ba};
    uint64_t grid = ((uint64_t)n + 255) / 256;
    if (grid > 0x7FFFFFFFu)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "a random fill of more than 2**39 elements on the GPU");
    CK_CHECK_CU(ck_cu.cuLaunchKernel(f, (unsigned)grid, 1, 1, 256, 1, 1, 0, ck_cuda_current_stream(dev), args, NULL));
    return CK_OK;
}

ck_status ck_cuda_random(const ck_random_desc *d)
{
    if (d->n <= 0 || d->nblocks == 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    if (d->dist > CK_RANDOM_INTEGERS) return heavy(d, dev);
    int isz = ck_dtype_get_info(d->type)->itemsize;
    int vbytes = isz * d->per;
    rng_spec sp = {(int)d->dist, d->type, d->per, 0};
    sp.vec = (vbytes == 4 || vbytes == 8 || vbytes == 16) && ((uintptr_t)d->data % (uintptr_t)vbytes) == 0;
    uint64_t key = (0x43ull << 56) | ((uint64_t)sp.dist << 16) | ((uint64_t)sp.t << 8) | ((uint64_t)sp.per << 1) |
                   (uint64_t)sp.vec;
    CUfunction f;
    s = ck_cuda_get_kernel(dev, key, rng_source, &sp, "ck_rng_fill", &f);
    if (s != CK_OK) return s;
    unsigned long long nblk = d->nblocks, low = d->low, range = d->range;
    long long n = d->n;
    char *out = d->data;
    uint32_t k0 = d->key[0], k1 = d->key[1], c0 = d->ctr[0], c1 = d->ctr[1], c2 = d->ctr[2], c3 = d->ctr[3];
    void *args[] = {&nblk, &n, &out, &k0, &k1, &c0, &c1, &c2, &c3, &low, &range};
    uint64_t grid = (nblk + 255) / 256;
    if (grid > 0x7FFFFFFFu)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "a random fill of more than 2**39 blocks on the GPU");
    CK_CHECK_CU(ck_cu.cuLaunchKernel(f, (unsigned)grid, 1, 1, 256, 1, 1, 0, ck_cuda_current_stream(dev), args, NULL));
    return CK_OK;
}
