/*
 * cpu_scalar.h - the C environment of src/formulas/scalar_ops.h for the CPU
 * loops: <tgmath.h> gives type-generic math over float, double and the C99
 * complex types, GCC's __real__/__imag__ the complex parts.
 */
#ifndef CK_CPU_SCALAR_H
#define CK_CPU_SCALAR_H

#include <tgmath.h>
#undef I   /* kind letters use I; we never need the imaginary unit macro */
#include <stdint.h>
#include <string.h>

#define CK_FN static inline
#define CK_RE(a) __real__(a)
#define CK_IM(a) __imag__(a)
#define CK_MKC(a, re, im) __builtin_complex((__typeof__(__real__(a)))(re), (__typeof__(__real__(a)))(im))
#define CK_INFF __builtin_inff()
#define CK_CFLOAT float _Complex
#define CK_CDOUBLE double _Complex

static inline float ck_f32_from_bits_(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
#define CK_F32_FROM_BITS(u) ck_f32_from_bits_(u)
static inline uint32_t ck_f32_bits_(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
#define CK_F32_BITS(f) ck_f32_bits_(f)
static inline double ck_f64_from_bits_(uint64_t u)
{
    double f;
    memcpy(&f, &u, 8);
    return f;
}
static inline uint64_t ck_f64_bits_(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}
#define CK_F64_FROM_BITS(u) ck_f64_from_bits_(u)
#define CK_F64_BITS(f) ck_f64_bits_(f)

/* float16's neighbour, on its own bits (float's nextafter would step a
 * float32 ulp) */
static inline float ck_nextafter_FLOAT16(float a, float b)
{
    _Float16 x = (_Float16)a, y = (_Float16)b;
    if (x != x || y != y) return (float)(x + y);
    if (x == y) return (float)y;
    uint16_t u;
    memcpy(&u, &x, 2);
    if (x == 0) u = (uint16_t)((y < 0 ? 0x8000u : 0) | 1u);
    else if ((x < y) == (x > 0)) u++;
    else u--;
    memcpy(&x, &u, 2);
    return (float)x;
}

#include "../../formulas/scalar_ops.h"

/* Complex quotients as NumPy's and the GPU prelude's: Smith's, a zero
 * divisor dividing each part by zero.  The loops are built with
 * -fcx-fortran-rules (C99 Annex G's rescue of infinities gives other
 * results than NumPy's textbook product), under which C's own quotient
 * would be NaN for every zero divisor. */
#define CK_CDIV_FN_(T, CT, NAME)                                                     \
    static inline CT NAME(CT a, CT b)                                                \
    {                                                                                \
        T ar = __real__(a), ai = __imag__(a), br = __real__(b), bi = __imag__(b);    \
        T abr = fabs(br), abi = fabs(bi);                                            \
        if (abr >= abi) {                                                            \
            if (abr == 0 && abi == 0) return __builtin_complex(ar / abr, ai / abi);  \
            T rat = bi / br, scl = (T)1 / (br + bi * rat);                           \
            return __builtin_complex((ar + ai * rat) * scl, (ai - ar * rat) * scl);  \
        }                                                                            \
        T rat = br / bi, scl = (T)1 / (bi + br * rat);                               \
        return __builtin_complex((ar * rat + ai) * scl, (ai * rat - ar) * scl);      \
    }
CK_CDIV_FN_(float, float _Complex, ck_cdivf_)
CK_CDIV_FN_(double, double _Complex, ck_cdiv_)
#define CK_CDIV(a, b) _Generic((a), float _Complex: ck_cdivf_, default: ck_cdiv_)(a, b)
#undef CK_X_TRUE_DIVIDE
#define CK_X_TRUE_DIVIDE(DT, K, C, a, b) CK_X_TRUE_DIVIDE_##K(C, a, b)
#define CK_X_TRUE_DIVIDE_B(C, a, b) ((a) / (b))
#define CK_X_TRUE_DIVIDE_I(C, a, b) ((a) / (b))
#define CK_X_TRUE_DIVIDE_U(C, a, b) ((a) / (b))
#define CK_X_TRUE_DIVIDE_F(C, a, b) ((a) / (b))
#define CK_X_TRUE_DIVIDE_C(C, a, b) CK_CDIV((C)(a), (C)(b))
#undef CK_X_RECIPROCAL_C
#define CK_X_RECIPROCAL_C(C, a) CK_CDIV((C)1, (C)(a))

/* The CPU's own tanh of float32 (and float16, computed in float): Cephes'
 * odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) with ck_expf
 * above, both computed and one selected so that the loop vectorises
 * (libm's tanhf is a call an element).  1.33 ulp at most, against tanh
 * in double, over every positive float32 (the function is odd, and so is
 * the code). */
CK_FN float ck_tanhf(float x)
{
    const float z = fabs(x), s = x * x;
    float p = -5.70498872745e-3f;
    p = p * s + 2.06390887954e-2f;
    p = p * s - 5.37397155531e-2f;
    p = p * s + 1.33314422036e-1f;
    p = p * s - 3.33332819422e-1f;
    const float small = copysign(p * s * x + x, x);   /* -0.0 stays -0.0 */
    const float e = ck_expf(2.0f * (z > 44.0f ? 44.0f : z));   /* tanh is 1 in float long before */
    const float big = copysign(1.0f - 2.0f / (e + 1.0f), x);
    return z < 0.625f ? small : big;
}
#undef CK_X_TANH
#define CK_X_TANH(DT, K, C, a) CK_X_TANH_##DT(a)
#define CK_X_TANH_FLOAT16(a) ck_tanhf(a)
#define CK_X_TANH_FLOAT32(a) ck_tanhf(a)
#define CK_X_TANH_FLOAT64(a) tanh(a)
#define CK_X_TANH_COMPLEX64(a) ck_ctanh_float(a)
#define CK_X_TANH_COMPLEX128(a) ck_ctanh_double(a)

/* The CPU's own sin and cos of float32 (and float16, computed in float),
 * in double so that the result is correctly rounded or nearly (0.500 ulp
 * at most, against sin and cos in double, over every float32 up to
 * CK_TRIG_BIG): x reduced by k pi/2 (k = x / (pi/2) rounded; pi/2 in two
 * parts, the first of 33 bits so that k times it is exact), Taylor
 * polynomials on [-pi/4, pi/4], the quadrant k mod 4 (read from the
 * rounding's bits) picking sin or cos and the sign.  Selections are by
 * bit masks so that the loop vectorises.  Infinities give NaN.  Beyond
 * CK_TRIG_BIG x comes back as itself, which cannot be a sine: the float32
 * loop then calls ck_trig_fixup on its output, which gives the elements
 * above 1 in magnitude to libm (an element-wise expression cannot hold the
 * call without keeping the loop from vectorising); float16 has no such
 * values. */
#define CK_TRIG_BIG 1048576.0f
CK_FN float ck_trigf(float x, int cosine)
{
    const double xd = x, magic = 6755399441055744.0;   /* 1.5 * 2^52: adding it rounds to an integer */
    const double t0 = xd * 0.63661977236758134308;       /* x / (pi/2) */
    const double t = t0 > 2097152.0 ? 2097152.0 : t0 < -2097152.0 ? -2097152.0 : t0;
    const double k = (t + magic) - magic;
    const double r = (xd - k * 1.57079632673412561417e+00) - k * 6.07710050650619224932e-11;
    const double r2 = r * r;
    const double sn = r * (1.0 + r2 * (-1.66666666666666657415e-01 + r2 * (8.33333333333333321769e-03 +
                          r2 * (-1.98412698412698412526e-04 + r2 * (2.75573192239858906526e-06 +
                          r2 * -2.50521083854417187751e-08)))));
    const double cs = 1.0 + r2 * (-0.5 + r2 * (4.16666666666666643537e-02 + r2 * (-1.38888888888888894189e-03 +
                          r2 * (2.48015873015873015658e-05 + r2 * (-2.75573192239858906526e-07 +
                          r2 * 2.08767569878680989792e-09)))));
    const uint64_t q = (ck_f64_bits_(t + magic) + (uint64_t)cosine) & 3, m = 0 - (q & 1);
    const uint64_t vb = ((ck_f64_bits_(cs) & m) | (ck_f64_bits_(sn) & ~m)) ^ ((q & 2) << 62);
    const float res = (float)ck_f64_from_bits_(vb);
    const float xr = (x - x) + x;   /* x, or NaN for an infinity (whose sine is NaN) */
    uint32_t xb, rb;
    memcpy(&xb, &xr, 4);
    memcpy(&rb, &res, 4);
    const uint32_t big = 0u - (uint32_t)(fabs(x) > CK_TRIG_BIG), ob = (xb & big) | (rb & ~big);
    float o;
    memcpy(&o, &ob, 4);
    return o;
}
/* The CPU's own sin and cos of float64, vectorisable as ck_trigf: x
 * reduced by k pi/2 as fdlibm's medium-size path does, in its second
 * iteration's precision (pi/2 in two 33-bit parts and a tail, k below 2^20
 * so that k times a part is exact; the reduced argument as a pair y0 +
 * y1, good to about 118 bits), then fdlibm's kernels of sin and cos on
 * [-pi/4, pi/4] with the pair's tail, the quadrant picking one and the
 * sign by bit masks (under 1 ulp).  x comes back as itself, which cannot
 * be a sine, beyond CK_TRIG64_BIG and where the reduction cancels (y0
 * below 2^-40 for |x| > 1: no double below 2^20 comes that close): the
 * loop's ck_trig_fixup then gives those to libm.  Infinities give NaN. */
#define CK_TRIG64_BIG 1048576.0
CK_FN double ck_trig(double x, int cosine)
{
    const double magic = 6755399441055744.0;   /* 1.5 * 2^52 */
    const double t0 = x * 0.63661977236758134308;
    const double t = t0 > 2097152.0 ? 2097152.0 : t0 < -2097152.0 ? -2097152.0 : t0;
    const double k = (t + magic) - magic;
    const double r = x - k * 1.57079632673412561417e+00;   /* exact */
    const double w = k * 6.07710050630396597660e-11;       /* exact */
    const double r2 = r - w;
    const double w2 = k * 2.02226624879595063154e-21 - ((r - r2) - w);
    const double y0 = r2 - w2, y1 = (r2 - y0) - w2;
    const double z = y0 * y0, v = z * y0;
    const double ps = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * (2.75573137070700676789e-06 +
                      z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    const double sn = y0 - ((z * (0.5 * y1 - v * ps) - y1) - v * -1.66666666666666324348e-01);
    const double pc = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * (2.48015872894767294178e-05 +
                      z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    /* fdlibm's split of 1 - z/2 above |y0| = 0.3: qx = |y0|/4 to 21 bits, or
     * 0.28125; 0 below, where the split is the plain form */
    const double ay = fabs(y0);
    const double q4 = ck_f64_from_bits_(((ck_f64_bits_(ay) >> 32) - 0x00200000u) << 32);
    const double qx = ay < 0.3 ? 0.0 : ay > 0.78125 ? 0.28125 : q4;
    const double cs = (1.0 - qx) - ((0.5 * z - qx) - (z * pc - y0 * y1));
    const uint64_t q = (ck_f64_bits_(t + magic) + (uint64_t)cosine) & 3, m = 0 - (q & 1);
    const double res = ck_f64_from_bits_(((ck_f64_bits_(cs) & m) | (ck_f64_bits_(sn) & ~m)) ^ ((q & 2) << 62));
    const double xr = (x - x) + x;   /* x, or NaN for an infinity */
    /* (|x| > 1 rather than k != 0: a != of doubles keeps GCC from vectorising) */
    const uint64_t big = 0 - (uint64_t)((fabs(x) > CK_TRIG64_BIG) | ((fabs(x) > 1.0) & (ay < 9.094947017729282e-13)));
    return ck_f64_from_bits_((ck_f64_bits_(xr) & big) | (ck_f64_bits_(res) & ~big));
}
/* The elements ck_trigf and ck_trig left as they were (n float32 or
 * float64 at o, os bytes apart: those above 1 in magnitude), by libm.
 * Contiguous blocks are first looked over by a loop that vectorises. */
#define CK_TRIG_BLOCK 1024
static inline void ck_trig_fixup(char *o, int64_t os, int64_t n, int cosine, int dbl)
{
    if (os == (dbl ? 8 : 4)) {
        int any = 0;
        if (dbl) { const double *v = (const double *)o; for (int64_t i = 0; i < n; i++) any |= fabs(v[i]) > 1.0; }
        else { const float *v = (const float *)o; for (int64_t i = 0; i < n; i++) any |= fabs(v[i]) > 1.0f; }
        if (!any) return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (dbl) {
            double v;
            memcpy(&v, o + i * os, 8);
            if (!(fabs(v) > 1.0)) continue;
            v = cosine ? cos(v) : sin(v);
            memcpy(o + i * os, &v, 8);
        } else {
            float v;
            memcpy(&v, o + i * os, 4);
            if (!(fabs(v) > 1.0f)) continue;
            v = cosine ? cos(v) : sin(v);
            memcpy(o + i * os, &v, 4);
        }
    }
}
/* The CPU's own atan2 of float32 (and float16, computed in float), in
 * double: atan of min / max (|y|, |x|), past tan(pi/8) as pi/4 + atan((a -
 * 1) / (a + 1)), by its series to u^23, then turned to the octant and the
 * sign of y; both zero or both infinite take a = 0 and 1, which gives
 * C99's values for those.  Conditions on doubles only, so that the loop
 * vectorises.  0.500 ulp at most against atan2 in double over 2e8 random
 * pairs, and C99's results on every pair of special values. */
CK_FN float ck_atan2f(float y, float x)
{
    const double yd = y, xd = x, ax = fabs(xd), ay = fabs(yd), tan8 = 0.41421356237309503;
    const double mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
    double a = mn / (mx == 0.0 ? 1.0 : mx);
    a = (mn == CK_INFF && mx == CK_INFF) ? 1.0 : a;
    const double u = a > tan8 ? (a - 1.0) / (a + 1.0) : a, u2 = u * u;
    double p = 1.0 / 23;
    for (int k = 21; k >= 1; k -= 2) p = p * -u2 + 1.0 / k;
    double r = u * p + (a > tan8 ? 0.78539816339744830962 : 0.0);
    r = ay > ax ? 1.57079632679489661923 - r : r;
    r = (ck_f64_bits_(xd) >> 63) ? 3.14159265358979323846 - r : r;
    return (float)ck_f64_from_bits_((ck_f64_bits_(r) & ~(1ull << 63)) | (ck_f64_bits_(yd) & (1ull << 63)));
}
#undef CK_X_ARCTAN2
#define CK_X_ARCTAN2(DT, K, C, a, b) CK_X_ATAN2_##DT(a, b)
#define CK_X_ATAN2_FLOAT16(a, b) ck_atan2f(a, b)
#define CK_X_ATAN2_FLOAT32(a, b) ck_atan2f(a, b)
#define CK_X_ATAN2_FLOAT64(a, b) atan2(a, b)

#undef CK_X_SIN
#undef CK_X_COS
#define CK_X_SIN(DT, K, C, a) CK_X_TRIG_##DT(a, 0, sin)
#define CK_X_COS(DT, K, C, a) CK_X_TRIG_##DT(a, 1, cos)
#define CK_X_TRIG_FLOAT16(a, c, f) ck_trigf(a, c)
#define CK_X_TRIG_FLOAT32(a, c, f) ck_trigf(a, c)
#define CK_X_TRIG_FLOAT64(a, c, f) ck_trig(a, c)
#define CK_X_TRIG_COMPLEX64(a, c, f) CK_CFN_COMPLEX64(f, a)
#define CK_X_TRIG_COMPLEX128(a, c, f) CK_CFN_COMPLEX128(f, a)

#endif
