/*
 * Random fills on the GPU: the simple distributions of the Philox4x32-10
 * stream (src/ops/random_formulas.h, shared with the CPU loops, so the
 * same key and counter give the same bits), one thread per block of 4
 * words, the block's elements stored as one vector.
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_random_codegen.h"

#include <stdlib.h>
#include <string.h>

static char *rng_source(const void *spec) { return ck_cuda_rng_source(spec); }

static ck_status rng_kernel(int dev, const ck_cuda_rng_spec *sp, CUfunction *f)
{
    const char *name = ck_cuda_rng_name(sp);
    return ck_cuda_get_kernels_opt(dev, ck_cuda_rng_key(sp), rng_source, sp, &name, 1, f, ck_cuda_rng_options,
                                   ck_cuda_rng_noptions);
}

/* gamma, beta, poisson, binomial: a thread per element, its own stream */
static ck_status heavy(const ck_random_desc *d, int dev)
{
    if (d->dist > CK_RANDOM_BINOMIAL)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "random distribution %d is not implemented on the GPU", (int)d->dist);
    ck_cuda_rng_spec sp = {(int)d->dist, d->type, 0, 0};
    CUfunction f;
    ck_status s = rng_kernel(dev, &sp, &f);
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
    ck_cuda_rng_spec sp = {(int)d->dist, d->type, d->per, 0};
    sp.vec = (vbytes == 4 || vbytes == 8 || vbytes == 16) && ((uintptr_t)d->data % (uintptr_t)vbytes) == 0;
    CUfunction f;
    s = rng_kernel(dev, &sp, &f);
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
