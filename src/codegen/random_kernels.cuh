/*
 * random_kernels.cuh - the GPU fill of the simple random distributions
 * (src/backend/cuda/cuda_random.c drives it).  Embedded at build time and
 * compiled after src/ops/random_formulas.h, with before both:
 *   CK_RD    the ck_random_dist (0 bits, 1 uniform, 2 normal, 3 exponential,
 *            4 integers)
 *   CK_RT    the unsigned / float storage type of an element
 *   CK_RPER  elements a Philox block (4 or 2)
 *   CK_RF32  1 for 32-bit words per element (float32, uint32, narrow integers)
 *   CK_RBOOL 1 for bool (stores v != 0)
 *   CK_RVEC  1 when a block's elements may be stored as one aligned vector
 * One thread computes one block: 4 words from one Philox call, stored
 * together.  The heavy distributions (CK_RD 5 gamma, 6 beta, 7 poisson,
 * 8 binomial) are ck_rng_heavy: one thread per element, each from its own
 * stream, as the CPU's fill_heavy.
 */

#if CK_RD >= 5
extern "C" __global__ void __launch_bounds__(256) ck_rng_heavy(long long n, CK_RT *out,
        uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
        double a, double b, const double *a_arr, const double *b_arr)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t key[2] = {k0, k1};
    const uint32_t base[4] = {c0, c1, c2, c3};
    ck_rng_stream s;
    ck_rng_stream_init(&s, key, base, (uint64_t)i);
    double pa = a_arr ? a_arr[i] : a, pb = b_arr ? b_arr[i] : b;
#if CK_RD == 5
    out[i] = ck_rng_gamma(&s, pa) * pb;
#elif CK_RD == 6
    out[i] = ck_rng_beta(&s, pa, pb);
#elif CK_RD == 7
    out[i] = ck_rng_poisson(&s, pa);
#else
    out[i] = ck_rng_binomial(&s, (int64_t)pa, pb);
#endif
}
#else
struct __align__(CK_RVEC ? sizeof(CK_RT) * CK_RPER : sizeof(CK_RT)) ck_rvec { CK_RT v[CK_RPER]; };

extern "C" __global__ void __launch_bounds__(256) ck_rng_fill(unsigned long long nblk, long long n, CK_RT *out,
        uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
        unsigned long long low, unsigned long long range)
{
    unsigned long long blk = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (blk >= nblk) return;
    const uint32_t key[2] = {k0, k1};
    const uint32_t base[4] = {c0, c1, c2, c3};
    uint32_t w[4];
    ck_rng_block(key, base, blk, 0, w);
    ck_rvec r;
#if CK_RD == 0
#if CK_RPER == 4
    for (int j = 0; j < 4; j++) r.v[j] = w[j];
#else
    for (int j = 0; j < 2; j++) r.v[j] = ck_rng_u64(w[2 * j], w[2 * j + 1]);
#endif
#elif CK_RD == 1
#if CK_RF32
    for (int j = 0; j < 4; j++) r.v[j] = ck_rng_f32(w[j]);
#else
    for (int j = 0; j < 2; j++) r.v[j] = ck_rng_f64(w[2 * j], w[2 * j + 1]);
#endif
#elif CK_RD == 2
#if CK_RF32
    ck_rng_normal_f32(w[0], w[1], &r.v[0], &r.v[1]);
    ck_rng_normal_f32(w[2], w[3], &r.v[2], &r.v[3]);
#else
    ck_rng_normal_f64(w, &r.v[0], &r.v[1]);
#endif
#elif CK_RD == 3
#if CK_RF32
    for (int j = 0; j < 4; j++) r.v[j] = ck_rng_exponential_f32(w[j]);
#else
    for (int j = 0; j < 2; j++) r.v[j] = ck_rng_exponential_f64(w[2 * j], w[2 * j + 1]);
#endif
#else
    for (int j = 0; j < CK_RPER; j++) {
        uint64_t x = low + ck_rng_integer(CK_RPER, w, j, range, key, base, blk);
        r.v[j] = CK_RBOOL ? (CK_RT)(x != 0) : (CK_RT)x;
    }
#endif
    long long e0 = (long long)blk * CK_RPER;
    if (CK_RVEC && e0 + CK_RPER <= n) {
        *(ck_rvec *)(out + e0) = r;
    } else {
        for (int j = 0; j < CK_RPER; j++)
            if (e0 + j < n) out[e0 + j] = r.v[j];
    }
}
#endif
