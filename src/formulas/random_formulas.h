/*
 * random_formulas.h - the Philox4x32-10 generator and the samplers, as pure
 * functions of integers and doubles (no globals, no libc beyond <math.h>),
 * written once for both targets: src/ops/random.c includes it as C with
 * CK_RNG_FN "static inline", the GPU kernels (src/codegen/random_kernels.cuh)
 * as CUDA C++ with CK_RNG_FN "static __device__" after typedefs of the
 * fixed-width integers and the CK_PHILOX_* constants.  Same key and counter,
 * same bits on both: the samplers take their logarithms, exponentials,
 * powers and the sine and cosine of Box-Muller's angle from the functions
 * below, made of the operations IEEE 754 rounds exactly (+, -, *, /,
 * sqrt, floor, frexp, ldexp), not from the C library or CUDA's, whose last
 * bits differ; the GPU kernels are compiled without FMA contraction
 * (ck_cuda_rng_options), as the CPU's C is.  See include/cudakit_random.h
 * for the element -> bits map.
 */
#ifndef CK_RANDOM_FORMULAS_H
#define CK_RANDOM_FORMULAS_H

CK_RNG_FN uint32_t ck_rng_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

CK_RNG_FN void ck_rng_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        /* Random123 bumps the key before every round but the first */
        if (r) { k0 += CK_PHILOX_W0; k1 += CK_PHILOX_W1; }
        uint32_t hi0, hi1;
        uint32_t lo0 = ck_rng_mulhilo32(CK_PHILOX_M0, x0, &hi0);
        uint32_t lo1 = ck_rng_mulhilo32(CK_PHILOX_M1, x2, &hi1);
        x0 = hi1 ^ x1 ^ k0;
        x1 = lo1;
        x2 = hi0 ^ x3 ^ k1;
        x3 = lo0;
    }
    out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

/* The block at counter base + idx (128-bit add with carry), in retry lane
 * `lane` (added to the top word, which sequential use never reaches). */
CK_RNG_FN void ck_rng_block(const uint32_t key[2], const uint32_t base[4], uint64_t idx, uint32_t lane,
                            uint32_t out[4])
{
    uint32_t c[4];
    uint64_t s = (uint64_t)base[0] + (uint32_t)idx;
    c[0] = (uint32_t)s;
    s = (uint64_t)base[1] + (uint32_t)(idx >> 32) + (s >> 32);
    c[1] = (uint32_t)s;
    s = (uint64_t)base[2] + (s >> 32);
    c[2] = (uint32_t)s;
    c[3] = base[3] + (uint32_t)(s >> 32) + lane;
    ck_rng_philox(c, key, out);
}

CK_RNG_FN uint64_t ck_rng_u64(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }
/* 53 random bits: every double of the form k * 2^-53 in [0, 1), equally likely */
CK_RNG_FN double ck_rng_f64(uint32_t lo, uint32_t hi) { return (double)(ck_rng_u64(lo, hi) >> 11) * 0x1.0p-53; }
CK_RNG_FN float ck_rng_f32(uint32_t w) { return (float)(w >> 8) * 0x1.0p-24f; }

/* ---------------------------------------- the samplers' own elementary functions */

CK_RNG_FN uint64_t ck_rng_dbits(double x) { union { double d; uint64_t u; } v; v.d = x; return v.u; }
CK_RNG_FN double ck_rng_dfrom(uint64_t u) { union { double d; uint64_t u; } v; v.u = u; return v.d; }
CK_RNG_FN uint32_t ck_rng_fbits(float x) { union { float f; uint32_t u; } v; v.f = x; return v.u; }
CK_RNG_FN float ck_rng_ffrom(uint32_t u) { union { float f; uint32_t u; } v; v.u = u; return v.f; }
#define CK_RNG_INF ck_rng_dfrom(0x7ff0000000000000ull)
#define CK_RNG_INFF ck_rng_ffrom(0x7f800000u)

/* log x: x = m 2^e from the bits (a subnormal scaled by 2^54 first) with m
 * in [sqrt(1/2), sqrt(2)), and log m = 2 atanh(s) for s = (m - 1) / (m + 1)
 * as fdlibm arranges it: the series in s^2 to s^22 (s^2 <= 0.0295) in two
 * halves, e ln 2 in two parts; an ulp or so. */
CK_RNG_FN double ck_rng_log(double x)
{
    if (!(x > 0.0) || x == CK_RNG_INF) return x == 0.0 ? -CK_RNG_INF : x < 0.0 ? (x - x) / (x - x) : x;
    int sub = x < 0x1p-1022;
    uint64_t u = ck_rng_dbits(sub ? x * 0x1p54 : x);
    int e = (int)(u >> 52) - 1022 - (sub ? 54 : 0);
    double m = ck_rng_dfrom((u & 0x000fffffffffffffull) | 0x3fe0000000000000ull);
    if (m < 0.70710678118654752440) {
        m += m;
        e -= 1;
    }
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (2.0 / 5 + w * (2.0 / 9 + w * (2.0 / 13 + w * (2.0 / 17 + w * (2.0 / 21)))));
    double t2 = z * (2.0 / 3 + w * (2.0 / 7 + w * (2.0 / 11 + w * (2.0 / 15 + w * (2.0 / 19 + w * (2.0 / 23))))));
    double r = t1 + t2, hfsq = 0.5 * f * f, de = (double)e;
    return de * 6.93147180369123816490e-01 - ((hfsq - (s * (hfsq + r) + de * 1.90821492927058770002e-10)) - f);
}

/* e^x: x = k ln 2 + r with |r| <= ln 2 / 2 (k by the 1.5 * 2^52 trick, ln 2
 * in two parts), e^r by its Taylor series to r^13 in even and odd halves,
 * 2^k from the bits (ldexp at the ends of the range: one rounding into a
 * subnormal); an ulp or two. */
CK_RNG_FN double ck_rng_exp(double x)
{
    if (!(x < 709.782712893384)) return x;   /* inf, or NaN as it is */
    if (x < -745.1332191019412) return 0.0;
    const double shift = 6755399441055744.0;
    double k = (x * 1.4426950408889634074 + shift) - shift;
    double r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10, q = r * r;
    double pe = 1.0 / 2 + q * (1.0 / 24 + q * (1.0 / 720 + q * (1.0 / 40320 + q * (1.0 / 3628800 + q * (1.0 / 479001600)))));
    double po = 1.0 / 6 + q * (1.0 / 120 + q * (1.0 / 5040 + q * (1.0 / 362880 + q * (1.0 / 39916800 + q * (1.0 / 6227020800.0)))));
    double p = 1.0 + (r + q * (pe + r * po));
    int ki = (int)k;
    return ki > -1022 && ki < 1024 ? p * ck_rng_dfrom((uint64_t)(ki + 1023) << 52) : ldexp(p, ki);
}

/* x^y for x >= 0 as the samplers use it (u^(1/k), (1 - p)^n): e^(y log x),
 * whose relative error grows with |y log x| (an ulp a unit of it) */
CK_RNG_FN double ck_rng_pow(double x, double y)
{
    if (x == 0.0) return y > 0.0 ? 0.0 : y == 0.0 ? 1.0 : CK_RNG_INF;
    return ck_rng_exp(y * ck_rng_log(x));
}

/* sin and cos of 2 pi u for u in [0, 1): u less its nearest quarter turn q/4
 * is exact (|f| <= 1/8), the angle 2 pi f is then within pi/4, where the
 * Taylor series to a^17 and a^18 are below an ulp, and the quarter turns
 * swap and negate the two. */
CK_RNG_FN void ck_rng_sincos2pi(double u, double *sn, double *cs)
{
    int q = (int)(4.0 * u + 0.5);
    double a = (u - 0.25 * q) * 6.283185307179586476925, z = a * a, w = z * z;
    double se = -1.0 / 6 + w * (-1.0 / 5040 + w * (-1.0 / 39916800 + w * (-1.0 / 1307674368000.0)));
    double so = 1.0 / 120 + w * (1.0 / 362880 + w * (1.0 / 6227020800.0 + w * (1.0 / 355687428096000.0)));
    double ce = 1.0 / 24 + w * (1.0 / 40320 + w * (1.0 / 479001600 + w * (1.0 / 20922789888000.0)));
    double co = -1.0 / 2 + w * (-1.0 / 720 + w * (-1.0 / 3628800 + w * (-1.0 / 87178291200.0 +
                                                                          w * (-1.0 / 6402373705728000.0))));
    double s = a + a * z * (se + z * so), c = 1.0 + z * (co + z * ce);
    switch (q & 3) {
    case 0: *sn = s; *cs = c; break;
    case 1: *sn = c; *cs = -s; break;
    case 2: *sn = -s; *cs = -c; break;
    default: *sn = -c; *cs = s; break;
    }
}

/* The same two in float for the float32 fills (their arguments are never
 * subnormal): the series to s^8 and to a^9 and a^10 are below float's
 * ulp; an ulp or two. */
CK_RNG_FN float ck_rng_logf(float x)
{
    if (!(x > 0.0f) || x == CK_RNG_INFF) return x == 0.0f ? -CK_RNG_INFF : x < 0.0f ? (x - x) / (x - x) : x;
    int sub = x < 0x1p-126f;
    uint32_t u = ck_rng_fbits(sub ? x * 0x1p24f : x);
    int e = (int)(u >> 23) - 126 - (sub ? 24 : 0);
    float m = ck_rng_ffrom((u & 0x007fffffu) | 0x3f000000u);
    if (m < 0.707106781f) {
        m += m;
        e -= 1;
    }
    float f = m - 1.0f, s = f / (2.0f + f), z = s * s;
    float r = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
    float hfsq = 0.5f * f * f, fe = (float)e;
    return fe * 0.693359375f - ((hfsq - (s * (hfsq + r) + fe * -2.12194440e-4f)) - f);
}

CK_RNG_FN void ck_rng_sincos2pif(float u, float *sn, float *cs)
{
    int q = (int)(4.0f * u + 0.5f);
    float a = (u - 0.25f * (float)q) * 6.28318531f, z = a * a;
    float s = a + a * z * (-1.0f / 6 + z * (1.0f / 120 + z * (-1.0f / 5040 + z * (1.0f / 362880))));
    float c = 1.0f + z * (-1.0f / 2 + z * (1.0f / 24 + z * (-1.0f / 720 + z * (1.0f / 40320 + z * (-1.0f / 3628800)))));
    switch (q & 3) {
    case 0: *sn = s; *cs = c; break;
    case 1: *sn = c; *cs = -s; break;
    case 2: *sn = -s; *cs = -c; break;
    default: *sn = -c; *cs = s; break;
    }
}

/* 64 x 64 -> 128 from 32-bit pieces, so that no compiler extension (nor
 * CUDA's __umul64hi) is needed for the formula to be portable. */
CK_RNG_FN uint64_t ck_rng_mul64(uint64_t a, uint64_t b, uint64_t *hi)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (uint32_t)p00;
}

/* A per-element word stream for the samplers that need an unbounded number
 * of draws: block (base + idx) in lane 0, then lanes 1, 2, ... */
typedef struct ck_rng_stream {
    uint32_t key[2];
    uint32_t base[4];
    uint64_t idx;
    uint32_t lane;
    int pos;
    uint32_t buf[4];
} ck_rng_stream;

CK_RNG_FN void ck_rng_stream_init(ck_rng_stream *s, const uint32_t key[2], const uint32_t base[4], uint64_t idx)
{
    s->key[0] = key[0]; s->key[1] = key[1];
    for (int j = 0; j < 4; j++) s->base[j] = base[j];
    s->idx = idx;
    s->lane = 0;
    s->pos = 4;
}

CK_RNG_FN uint32_t ck_rng_next32(ck_rng_stream *s)
{
    if (s->pos == 4) {
        ck_rng_block(s->key, s->base, s->idx, s->lane++, s->buf);
        s->pos = 0;
    }
    return s->buf[s->pos++];
}

CK_RNG_FN double ck_rng_next_double(ck_rng_stream *s)
{
    uint32_t lo = ck_rng_next32(s);
    return ck_rng_f64(lo, ck_rng_next32(s));
}

/* in (0, 1]: safe under log and pow(u, 1/k) */
CK_RNG_FN double ck_rng_next_open0(ck_rng_stream *s) { return 1.0 - ck_rng_next_double(s); }

CK_RNG_FN double ck_rng_next_normal(ck_rng_stream *s)
{
    double u1 = ck_rng_next_open0(s), u2 = ck_rng_next_double(s), sn, cs;
    ck_rng_sincos2pi(u2, &sn, &cs);
    return sqrt(-2.0 * ck_rng_log(u1)) * cs;
}

/* log Gamma(x) for x >= 1 by Stirling's series (as NumPy's random_loggam):
 * lgamma() itself writes the global signgam, a race between threads. */
CK_RNG_FN double ck_rng_loggam(double x)
{
    const double a[10] = {8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
                          -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
                          6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
                          -1.39243221690590e+00};
    if (x == 1.0 || x == 2.0) return 0.0;
    int64_t n = x < 7.0 ? (int64_t)(7 - x) : 0;
    double x0 = x + (double)n, x2 = (1.0 / x0) * (1.0 / x0);
    double gl0 = a[9];
    for (int k = 8; k >= 0; k--) gl0 = gl0 * x2 + a[k];
    double gl = gl0 / x0 + 0.5 * 1.8378770664093453 + (x0 - 0.5) * ck_rng_log(x0) - x0;
    for (int64_t k = 1; k <= n; k++) {
        x0 -= 1.0;
        gl -= ck_rng_log(x0);
    }
    return gl;
}

/* Standard gamma: Marsaglia & Tsang (2000) for k >= 1; for k < 1 the
 * boost G(k) = G(k + 1) * U^(1/k). */
CK_RNG_FN double ck_rng_gamma(ck_rng_stream *s, double k)
{
    if (k <= 0.0) return 0.0;
    double boost = 1.0;
    if (k < 1.0) {
        boost = ck_rng_pow(ck_rng_next_open0(s), 1.0 / k);
        k += 1.0;
    }
    double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = ck_rng_next_normal(s);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = ck_rng_next_open0(s);
        double x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2) return boost * d * v;
        if (ck_rng_log(u) < 0.5 * x2 + d * (1.0 - v + ck_rng_log(v))) return boost * d * v;
    }
}

/* Beta: Johnk's algorithm when both a, b <= 1 (the gamma ratio loses all
 * precision there), else G(a) / (G(a) + G(b)); as NumPy's. */
CK_RNG_FN double ck_rng_beta(ck_rng_stream *s, double a, double b)
{
    if (a <= 1.0 && b <= 1.0) {
        for (;;) {
            double u = ck_rng_next_double(s), v = ck_rng_next_double(s);
            double x = ck_rng_pow(u, 1.0 / a), y = ck_rng_pow(v, 1.0 / b), xy = x + y;
            if (xy <= 1.0 && u + v > 0.0) {
                if (xy > 0.0) return x / xy;
                /* both underflowed: the ratio in logs */
                double lx = ck_rng_log(u) / a, ly = ck_rng_log(v) / b, lm = lx > ly ? lx : ly;
                lx -= lm;
                ly -= lm;
                return ck_rng_exp(lx - ck_rng_log(ck_rng_exp(lx) + ck_rng_exp(ly)));
            }
        }
    }
    double ga = ck_rng_gamma(s, a), gb = ck_rng_gamma(s, b);
    return ga / (ga + gb);
}

/* Poisson: multiplication of uniforms for lam < 10, else Hoermann's PTRS
 * (transformed rejection with squeeze, 1993); as NumPy's. */
CK_RNG_FN int64_t ck_rng_poisson(ck_rng_stream *s, double lam)
{
    if (lam <= 0.0) return 0;
    if (lam < 10.0) {
        double enlam = ck_rng_exp(-lam), prod = 1.0;
        int64_t x = 0;
        for (;;) {
            prod *= ck_rng_next_double(s);
            if (prod > enlam) x++;
            else return x;
        }
    }
    double slam = sqrt(lam), loglam = ck_rng_log(lam);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double u = ck_rng_next_double(s) - 0.5, v = ck_rng_next_double(s);
        double us = 0.5 - fabs(u);
        double kd = floor((2.0 * a / us + b) * u + lam + 0.43);
        /* us == 0 gives -inf or nan here: reject before converting */
        if (!(kd >= 0.0)) continue;
        if (us >= 0.07 && v <= vr) return (int64_t)kd;
        if (us < 0.013 && v > us) continue;
        if (ck_rng_log(v) + ck_rng_log(invalpha) - ck_rng_log(a / (us * us) + b) <=
            -lam + kd * loglam - ck_rng_loggam(kd + 1.0))
            return (int64_t)kd;
    }
}

/* Binomial by inversion (n p <= 30), p <= 1/2 */
CK_RNG_FN int64_t ck_rng_binomial_inversion(ck_rng_stream *s, int64_t n, double p)
{
    double q = 1.0 - p, qn = ck_rng_exp((double)n * ck_rng_log(q)), np = (double)n * p;
    double bound = np + 10.0 * sqrt(np * q + 1.0);
    if (bound > (double)n) bound = (double)n;
    int64_t x = 0;
    double px = qn, u = ck_rng_next_double(s);
    while (u > px) {
        x++;
        if ((double)x > bound) {
            x = 0;
            px = qn;
            u = ck_rng_next_double(s);
        } else {
            u -= px;
            px = ((double)(n - x + 1) * p * px) / ((double)x * q);
        }
    }
    return x;
}

/* Binomial by BTPE (Kachitvichyanukul & Schmeiser 1988), p <= 1/2 */
CK_RNG_FN int64_t ck_rng_binomial_btpe(ck_rng_stream *s, int64_t n, double p)
{
    double r = p, q = 1.0 - r, dn = (double)n;
    double fm = dn * r + r;
    int64_t m = (int64_t)floor(fm);
    double p1 = floor(2.195 * sqrt(dn * r * q) - 4.6 * q) + 0.5;
    double xm = (double)m + 0.5, xl = xm - p1, xr = xm + p1;
    double c = 0.134 + 20.5 / (15.3 + (double)m);
    double a = (fm - xl) / (fm - xl * r);
    double laml = a * (1.0 + a / 2.0);
    a = (xr - fm) / (xr * q);
    double lamr = a * (1.0 + a / 2.0);
    double p2 = p1 * (1.0 + 2.0 * c), p3 = p2 + c / laml, p4 = p3 + c / lamr;
    double nrq = dn * r * q;
    for (;;) {
        double u = ck_rng_next_double(s) * p4, v = ck_rng_next_double(s);
        int64_t y;
        if (u <= p1) {                      /* the triangle: accept at once */
            return (int64_t)floor(xm - p1 * v + u);
        } else if (u <= p2) {               /* the parallelograms */
            double x = xl + (u - p1) / c;
            v = v * c + 1.0 - fabs((double)m - x + 0.5) / p1;
            if (v > 1.0) continue;
            y = (int64_t)floor(x);
        } else if (u <= p3) {               /* the left exponential tail */
            if (v == 0.0) continue;
            double yd = floor(xl + ck_rng_log(v) / laml);
            if (yd < 0.0) continue;
            y = (int64_t)yd;
            v = v * (u - p2) * laml;
        } else {                            /* the right exponential tail */
            if (v == 0.0) continue;
            double yd = floor(xr - ck_rng_log(v) / lamr);
            if (yd > dn) continue;
            y = (int64_t)yd;
            v = v * (u - p3) * lamr;
        }
        int64_t k = y > m ? y - m : m - y;
        if (k <= 20 || (double)k >= nrq / 2.0 - 1.0) {
            /* explicit f(y) / f(m) by the recurrence */
            double sr = r / q, aa = sr * (dn + 1.0), f = 1.0;
            if (m < y)
                for (int64_t i = m + 1; i <= y; i++) f *= (aa / (double)i - sr);
            else if (m > y)
                for (int64_t i = y + 1; i <= m; i++) f /= (aa / (double)i - sr);
            if (v > f) continue;
            return y;
        }
        /* squeeze on log f, then the Stirling-based bound */
        double kd = (double)k;
        double rho = (kd / nrq) * ((kd * (kd / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
        double t = -kd * kd / (2.0 * nrq);
        double A = ck_rng_log(v);
        if (A < t - rho) return y;
        if (A > t + rho) continue;
        double x1 = (double)y + 1.0, f1 = (double)m + 1.0, z = dn + 1.0 - (double)m, w = dn - (double)y + 1.0;
        double x2 = x1 * x1, f2 = f1 * f1, z2 = z * z, w2 = w * w;
        double bound = xm * ck_rng_log(f1 / x1) + (dn - (double)m + 0.5) * ck_rng_log(z / w) +
                       (double)(y - m) * ck_rng_log(w * r / (x1 * q)) +
                       (13680. - (462. - (132. - (99. - 140. / f2) / f2) / f2) / f2) / f1 / 166320. +
                       (13680. - (462. - (132. - (99. - 140. / z2) / z2) / z2) / z2) / z / 166320. +
                       (13680. - (462. - (132. - (99. - 140. / x2) / x2) / x2) / x2) / x1 / 166320. +
                       (13680. - (462. - (132. - (99. - 140. / w2) / w2) / w2) / w2) / w / 166320.;
        if (A > bound) continue;
        return y;
    }
}

CK_RNG_FN int64_t ck_rng_binomial(ck_rng_stream *s, int64_t n, double p)
{
    if (n <= 0 || p <= 0.0) return 0;
    if (p >= 1.0) return n;
    /* both methods want p <= 1/2: count failures instead */
    int flip = p > 0.5;
    double pp = flip ? 1.0 - p : p;
    int64_t x = pp * (double)n <= 30.0 ? ck_rng_binomial_inversion(s, n, pp) : ck_rng_binomial_btpe(s, n, pp);
    return flip ? n - x : x;
}

/* Lemire's nearly divisionless bounded integer (2019), 32-bit words.
 * x is the first draw; a rejected draw is replaced by word j of retry lane
 * 1, 2, ... of the same block, so the element still depends only on it. */
CK_RNG_FN uint32_t ck_rng_bounded32(uint32_t x, uint32_t range, const uint32_t key[2], const uint32_t base[4],
                                    uint64_t blk, int j)
{
    uint64_t m = (uint64_t)x * range;
    uint32_t l = (uint32_t)m;
    if (l < range) {
        uint32_t t = (uint32_t)(-range) % range;
        for (uint32_t lane = 1; l < t; lane++) {
            uint32_t w[4];
            ck_rng_block(key, base, blk, lane, w);
            m = (uint64_t)w[j] * range;
            l = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

CK_RNG_FN uint64_t ck_rng_bounded64(uint64_t x, uint64_t range, const uint32_t key[2], const uint32_t base[4],
                                    uint64_t blk, int j)
{
    uint64_t hi, l = ck_rng_mul64(x, range, &hi);
    if (l < range) {
        uint64_t t = (0 - range) % range;
        for (uint32_t lane = 1; l < t; lane++) {
            uint32_t w[4];
            ck_rng_block(key, base, blk, lane, w);
            l = ck_rng_mul64(ck_rng_u64(w[2 * j], w[2 * j + 1]), range, &hi);
        }
    }
    return hi;
}

/* ------------------------------------------- one element of the simple fills */

/* -log(1 - u), 1 - u exact for these u (multiples of 2^-53 below 1); 0 - : +0 for u = 0 */
CK_RNG_FN double ck_rng_exponential_f64(uint32_t lo, uint32_t hi) { return 0.0 - ck_rng_log(1.0 - ck_rng_f64(lo, hi)); }
CK_RNG_FN float ck_rng_exponential_f32(uint32_t w) { return 0.0f - ck_rng_logf(1.0f - ck_rng_f32(w)); }

/* Box-Muller on uniforms (u1 in (0, 1], u2 in [0, 1)): z0 and z1 */
CK_RNG_FN void ck_rng_box_muller(double u1, double u2, double *z0, double *z1)
{
    double r = sqrt(-2.0 * ck_rng_log(u1)), sn, cs;
    ck_rng_sincos2pi(u2, &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}

/* in float on words (a, b) */
CK_RNG_FN void ck_rng_normal_f32(uint32_t a, uint32_t b, float *z0, float *z1)
{
    float r = sqrtf(-2.0f * ck_rng_logf(1.0f - ck_rng_f32(a))), sn, cs;
    ck_rng_sincos2pif(ck_rng_f32(b), &sn, &cs);
    *z0 = r * cs;
    *z1 = r * sn;
}

/* on the four words of a block */
CK_RNG_FN void ck_rng_normal_f64(const uint32_t w[4], double *z0, double *z1)
{
    ck_rng_box_muller(1.0 - ck_rng_f64(w[0], w[1]), ck_rng_f64(w[2], w[3]), z0, z1);
}

/* Element j of block blk of integers in [0, range) (range 0: 2^64), per
 * (4 or 2) elements a block */
CK_RNG_FN uint64_t ck_rng_integer(int per, const uint32_t w[4], int j, uint64_t range, const uint32_t key[2],
                                  const uint32_t base[4], uint64_t blk)
{
    if (per == 4)
        return range == 0x100000000u ? w[j] : ck_rng_bounded32(w[j], (uint32_t)range, key, base, blk, j);
    if (range == 0) return ck_rng_u64(w[2 * j], w[2 * j + 1]);
    return ck_rng_bounded64(ck_rng_u64(w[2 * j], w[2 * j + 1]), range, key, base, blk, j);
}

#endif
