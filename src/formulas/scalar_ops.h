/*
 * scalar_ops.h - what each element-wise op and cast computes on one element,
 * written once for every backend: the CPU loops include it as C (through
 * src/backend/cpu/cpu_scalar.h), the CUDA kernels as CUDA C++ (through
 * src/codegen/cuda_prelude.cuh, embedded in the library at build time).
 *
 * One macro per op: CK_X_<ID>(DT, K, C, a[, b[, c]]) where DT is the loop
 * dtype's name (FLOAT32), K its kind letter (B bool, I signed, U unsigned,
 * F float, C complex) and C the type computed in (float for float16).
 * Kind-specific forms are CK_X_<ID>_<K>.  Integer arithmetic wraps (the CPU
 * loops are built with -fwrapv; CUDA wraps natively), as NumPy's does;
 * division by zero gives 0 for integers instead of a trap.
 *
 * The including environment provides: CK_FN (function qualifiers), the
 * fixed-width integer types, CK_RE / CK_IM / CK_MKC (complex parts and
 * construction), CK_CFLOAT / CK_CDOUBLE (the complex types), type-generic
 * math names (exp, fabs, ... for float, double and both complex types),
 * CK_F32_FROM_BITS, CK_F32_BITS, CK_F64_FROM_BITS, CK_F64_BITS, CK_INFF and
 * ck_nextafter_FLOAT16.
 */
#ifndef CK_SCALAR_OPS_H
#define CK_SCALAR_OPS_H

#define CK_LN2 0.693147180559945309417232121458176568
#define CK_LN10 2.30258509299404568401799145468436421
#define CK_PI 3.14159265358979323846264338327950288

/* ---------------------------------------------------------- real helpers */
/* floor_divide as NumPy's (through fmod, so 1 // 0.1 == 9), except where an
 * operand is infinite: there the array API standard's floor(a / b) (inf //
 * 2 is inf, not NumPy's NaN; 1 // -inf is -0, not -1). */
#define CK_REAL_FNS_(T, SUF)                                                     \
CK_FN T ck_floordiv_##T(T a, T b) {                                      \
    if (b == 0 || isinf(a) || isinf(b)) return a / b;                            \
    T mod = fmod##SUF(a, b);                                                     \
    T div = (a - mod) / b;                                                       \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                            \
    T fl;                                                                        \
    if (div != 0) { fl = floor##SUF(div); if (div - fl > (T)0.5) fl += 1; }      \
    else fl = copysign##SUF((T)0, a / b);                                        \
    return fl;                                                                   \
}                                                                                \
CK_FN T ck_rem_##T(T a, T b) {                                           \
    if (b == 0) return fmod##SUF(a, b);                                         \
    T mod = fmod##SUF(a, b);                                                     \
    if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }                        \
    else mod = copysign##SUF((T)0, b);                                           \
    return mod;                                                                  \
}                                                                                \
CK_FN T ck_logaddexp_##T(T a, T b) {                                     \
    if (a == b) return a + (T)CK_LN2;                                            \
    T d = a - b;                                                                 \
    if (d > 0) return a + log1p##SUF(exp##SUF(-d));                              \
    if (d <= 0) return b + log1p##SUF(exp##SUF(d));                              \
    return d;                                                                    \
}                                                                                \
CK_FN T ck_logaddexp2_##T(T a, T b) {                                    \
    if (a == b) return a + 1;                                                    \
    T d = a - b;                                                                 \
    if (d > 0) return a + log1p##SUF(exp2##SUF(-d)) / (T)CK_LN2;                 \
    if (d <= 0) return b + log1p##SUF(exp2##SUF(d)) / (T)CK_LN2;                 \
    return d;                                                                    \
}                                                                                \
CK_FN T ck_sign_##T(T a) { return a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a; }   \
/* clip's float32/float64 paths (CK_X_CLIP below says which runs where),   \
 * as chains of plain selects: GCC vectorises those, not the || of the      \
 * two-step form.  ck_clip: minimum(maximum(a, lo), hi), a tie taking the   \
 * bound, a NaN propagating (a's, then lo's, then hi's).  ck_clip_const:    \
 * a clamped (a tie keeps a), a NaN bound filling (lo's first).             \
 * ck_clip_first: each step keeping its first operand on ties and NaN. */   \
CK_FN T ck_clip_##T(T a, T lo, T hi) {                                           \
    T m = a > lo ? a : lo;                                                       \
    m = a != a ? a : m;                                                          \
    T r = m < hi ? m : hi;                                                       \
    return m != m ? m : r;                                                       \
}                                                                                \
CK_FN T ck_clip_const_##T(T a, T lo, T hi) {                                     \
    T x = a < lo ? lo : a;                                                       \
    x = x > hi ? hi : x;                                                         \
    x = hi != hi ? hi : x;                                                       \
    return lo != lo ? lo : x;                                                    \
}                                                                                \
CK_FN T ck_clip_first_##T(T a, T lo, T hi) {                                     \
    T m = a < lo ? lo : a;                                                       \
    m = lo != lo ? lo : m;                                                       \
    m = a != a ? a : m;                                                          \
    T r = m > hi ? hi : m;                                                       \
    r = hi != hi ? hi : r;                                                       \
    return m != m ? m : r;                                                       \
}
CK_REAL_FNS_(float, f)
CK_REAL_FNS_(double, )

#define ck_nextafter_FLOAT32(a, b) nextafterf(a, b)
#define ck_nextafter_FLOAT64(a, b) nextafter(a, b)

/* exp of a float, written so the compiler vectorises it (no calls, no
 * branches): n = round(x / ln 2) by the 1.5 * 2^23 trick, r = x - n ln 2 in
 * two parts (Cody and Waite), Cephes' degree-6 polynomial for e^r (about one
 * ulp), then 2^n applied as two factors so that subnormal results stay
 * accurate. */
CK_FN float ck_expf(float x)
{
    const float shift = 12582912.0f;   /* 1.5 * 2^23 */
    float xc = x > 88.0f ? 88.0f : x < -103.0f ? -103.0f : x;
    float k = (xc * 1.44269504088896341f + shift) - shift;
    float r = xc - k * 0.693359375f;
    r = r + k * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t ki = (int32_t)k;
    int32_t k1 = ki >> 1, k2 = ki - k1;
    uint32_t b1 = (uint32_t)(k1 + 127) << 23, b2 = (uint32_t)(k2 + 127) << 23;
    float res = p * CK_F32_FROM_BITS(b1) * CK_F32_FROM_BITS(b2);
    res = x > 88.72283935546875f ? CK_INFF : res;
    res = x < -103.972084045410f ? 0.0f : res;
    return x != x ? x : res;
}

/* log of a float, vectorisable as ck_expf is: x = m 2^e with m in
 * [sqrt(1/2), sqrt(2)) from the bits (subnormals scaled by 2^23 first),
 * log(m) = f - f^2/2 + f^3 P(f) for f = m - 1 with Cephes' degree-8 P, and
 * e ln 2 added in two parts (about one ulp).  Negative numbers give NaN, 0
 * gives -inf, inf and NaN themselves. */
CK_FN float ck_logf(float x)
{
    /* selects of constants, not of products: no spurious overflow flag */
    float sub = x < 1.17549435e-38f ? 1.0f : 0.0f;
    float xs = x * (1.0f + 8388607.0f * sub);
    uint32_t u = CK_F32_BITS(xs);
    float ef = (float)((int32_t)((u >> 23) & 0xff) - 126) - 23.0f * sub;
    float m = CK_F32_FROM_BITS((u & 0x007fffffu) | 0x3f000000u);   /* in [0.5, 1) */
    float lo = m < 0.707106781186547524f ? 1.0f : 0.0f;
    ef = ef - lo;
    float f = m + m * lo - 1.0f;
    float z = f * f;
    float p = 7.0376836292e-2f;
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    float y = f * z * p + ef * -2.12194440e-4f - 0.5f * z;
    float res = (f + y) + ef * 0.693359375f;
    res = x == CK_INFF ? x : res;
    res = x == 0.0f ? -CK_INFF : res;
    res = x < 0.0f ? (CK_INFF - CK_INFF) : res;
    return x != x ? x : res;
}

/* exp and log of a double, vectorisable as the float ones (no calls, no
 * branches, integers only added and shifted, which SSE2 has for 64-bit
 * lanes):
 * exp: n = round(x / ln 2) by the 1.5 * 2^52 trick (n read from the sum's
 * bits), r = x - n ln 2 in fdlibm's two parts (|r| <= ln 2 / 2), e^r by its
 * Taylor series to r^13 (truncation below 2^-60), 2^n from the bits with a
 * factor of 2^-54 or 2 set aside at the ends of the range (subnormal
 * results, n = 1024).
 * log: x = m 2^e from the bits (subnormals scaled by 2^54 first), m in
 * [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f), and fdlibm's
 * arrangement e ln2_hi - ((f^2/2 - (s (f^2/2 + R) + e ln2_lo)) - f) with
 * R(s^2) = 2s^2/3 + 2s^4/5 + ... to s^22 (s^2 <= 0.0295). */
CK_FN double ck_exp(double x)
{
    const double shift = 6755399441055744.0;   /* 1.5 * 2^52 */
    double xc = x > 709.8 ? 709.8 : x < -745.2 ? -745.2 : x;
    double t = xc * 1.4426950408889634074 + shift;
    double k = t - shift;
    int64_t ki = (int64_t)(CK_F64_BITS(t) - CK_F64_BITS(shift));
    double r = xc - k * 6.93147180369123816490e-01;
    r = r - k * 1.90821492927058770002e-10;
    double p = 1.6059043836821614599e-10;           /* 1/13! */
    p = p * r + 2.0876756987868098979e-9;
    p = p * r + 2.5052108385441718775e-8;
    p = p * r + 2.7557319223985890653e-7;
    p = p * r + 2.7557319223985890653e-6;
    p = p * r + 2.4801587301587301587e-5;
    p = p * r + 1.9841269841269841270e-4;
    p = p * r + 1.3888888888888888889e-3;
    p = p * r + 8.3333333333333333333e-3;
    p = p * r + 4.1666666666666666667e-2;
    p = p * r + 1.6666666666666666667e-1;
    p = p * r + 0.5;
    p = p * (r * r) + r + 1.0;
    double low = k < -1000.0 ? 1.0 : 0.0, high = k > 1000.0 ? 1.0 : 0.0;
    int64_t adj = (int64_t)(CK_F64_BITS(low * 54.0 - high + shift) - CK_F64_BITS(shift));
    double scale = k < -1000.0 ? 5.5511151231257827e-17 : k > 1000.0 ? 2.0 : 1.0;   /* 2^-54 */
    double res = p * CK_F64_FROM_BITS((uint64_t)(ki + adj + 1023) << 52) * scale;
    res = x > 709.782712893384 ? (double)CK_INFF : res;
    res = x < -745.1332191019412 ? 0.0 : res;
    return x != x ? x : res;
}

CK_FN double ck_log(double x)
{
    const double two52 = 4503599627370496.0;
    double sub = x < 2.2250738585072014e-308 ? 1.0 : 0.0;
    double xs = x * (1.0 + 18014398509481983.0 * sub);   /* 2^54 */
    uint64_t u = CK_F64_BITS(xs);
    double e = (CK_F64_FROM_BITS((u >> 52) | 0x4330000000000000ull) - two52) - 1022.0 - 54.0 * sub;
    double m = CK_F64_FROM_BITS((u & 0x000fffffffffffffull) | 0x3fe0000000000000ull);   /* [0.5, 1) */
    double lo = m < 0.70710678118654752440 ? 1.0 : 0.0;
    e = e - lo;
    double f = m + m * lo - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double R = 2.0 / 23;
    R = R * z + 2.0 / 21;
    R = R * z + 2.0 / 19;
    R = R * z + 2.0 / 17;
    R = R * z + 2.0 / 15;
    R = R * z + 2.0 / 13;
    R = R * z + 2.0 / 11;
    R = R * z + 2.0 / 9;
    R = R * z + 2.0 / 7;
    R = R * z + 2.0 / 5;
    R = R * z + 2.0 / 3;
    R = R * z;
    double hfsq = 0.5 * f * f;
    double res = e * 6.93147180369123816490e-01 - ((hfsq - (s * (hfsq + R) + e * 1.90821492927058770002e-10)) - f);
    res = x == (double)CK_INFF ? x : res;
    res = x == 0.0 ? -(double)CK_INFF : res;
    res = x < 0.0 ? (double)(CK_INFF - CK_INFF) : res;
    return x != x ? x : res;
}

/* log(1 + x) for a float: with u = 1 + x rounded, log(u) * x / (u - 1)
 * cancels u's rounding (Goldberg, "What every computer scientist should
 * know about floating-point arithmetic", 1991), a few ulp at most; x
 * itself where 1 + x rounds to 1. */
CK_FN float ck_log1pf(float x)
{
    float u = 1.0f + x;
    float d = u - 1.0f;
    float res = ck_logf(u) * (x / (d == 0.0f ? 1.0f : d));
    res = d == 0.0f ? x : res;
    res = u == CK_INFF ? u : res;
    res = u == 0.0f ? -CK_INFF : res;
    return x != x ? x : res;
}

/* The bin of v among nb bins with the nb + 1 increasing edges e (NumPy's
 * histogram: bin i holds e[i] <= v < e[i + 1], the last one its right edge
 * too), or -1 outside them (and for NaN).  uniform: equal widths, so the
 * bin is computed from v's place between the ends and then corrected by
 * the edges themselves, as NumPy's fast path does (the quotient may be an
 * ulp off at an edge); otherwise a binary search. */
CK_FN int64_t ck_hist_bin(double v, int64_t nb, const double *e, int uniform)
{
    if (!(v >= e[0] && v <= e[nb])) return -1;
    int64_t i;
    if (uniform) {
        i = (int64_t)((v - e[0]) / (e[nb] - e[0]) * (double)nb);
        i = i >= nb ? nb - 1 : i;
        i -= (i > 0) & (v < e[i]);
        i += (i < nb - 1) & (v >= e[i + 1]);
    } else {
        int64_t lo = 0, hi = nb;   /* the last edge <= v, in [0, nb] */
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (e[mid] <= v) lo = mid;
            else hi = mid;
        }
        i = lo;
    }
    return i;
}

/* -------------------------------------------------------- integer helpers */
CK_FN int64_t ck_floordiv_i64(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}
CK_FN int64_t ck_rem_i64(int64_t a, int64_t b)
{
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
CK_FN int64_t ck_fmod_i64(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
CK_FN uint64_t ck_upow(uint64_t base, uint64_t e)
{
    uint64_t r = 1;
    while (e) { if (e & 1) r *= base; base *= base; e >>= 1; }
    return r;
}
CK_FN uint64_t ck_gcd_u64(uint64_t a, uint64_t b)
{
    while (b) { uint64_t t = a % b; a = b; b = t; }
    return a;
}
CK_FN uint64_t ck_uabs_i64(int64_t a) { return a < 0 ? 0 - (uint64_t)a : (uint64_t)a; }

/* --------------------------------------------------------- complex order */
/* NumPy's order: real parts first, and a NaN imaginary part makes the
 * pair unordered ((0+nanj) < 1 is False, maximum(1, 0+nanj) the NaN).
 * & and | rather than && and ||: no branches, so the loops vectorise. */
#define CK_CLT(a, b) (((CK_RE(a) < CK_RE(b)) & (CK_IM(a) == CK_IM(a)) & (CK_IM(b) == CK_IM(b))) | \
                      ((CK_RE(a) == CK_RE(b)) & (CK_IM(a) < CK_IM(b))))
#define CK_CLE(a, b) (((CK_RE(a) < CK_RE(b)) & (CK_IM(a) == CK_IM(a)) & (CK_IM(b) == CK_IM(b))) | \
                      ((CK_RE(a) == CK_RE(b)) & (CK_IM(a) <= CK_IM(b))))
#define CK_CNAN(a) ((CK_RE(a) != CK_RE(a)) | (CK_IM(a) != CK_IM(a)))

/* ------------------------------------ complex functions' special values */
/* C99 Annex G's values (the array API standard's, and NumPy's through the C
 * library) of exp, sinh, cosh, tanh, asinh, acosh, atanh, acos and, through
 * those, sin, cos, tan, asin and atan where a part is infinite or NaN, with the C library's (glibc's) choice where the
 * standards leave a sign open, and the array API's where it and C99 differ
 * (tanh(inf + iy) is 1 + 0j, C99's 1 + i0 sin 2y).  ck_cspecial_<op>_<T>(x, y, &re, &im) gives
 * 1 and the value for such an x + iy, else 0; ck_c<op>_<T>(z) is then the
 * environment's own formula (the C library's on the CPU, the prelude's on
 * the GPU), so both devices take their special values from here. */
#define CK_CSPECIAL_FNS_(T, SUF)                                                          \
CK_FN T ck_cnan_##T(void) { return (T)CK_INFF - (T)CK_INFF; }                              \
CK_FN int ck_cspecial_exp_##T(T x, T y, T *re, T *im)                                      \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isinf(x) && isfinite(y)) {                                                         \
        T v = x < 0 ? (T)0 : x;                                                            \
        if (y == 0) { *re = v; *im = y; }                                                  \
        else { *re = copysign##SUF(v, cos##SUF(y)); *im = copysign##SUF(v, sin##SUF(y)); } \
    } else if (isinf(x)) {                                                                 \
        if (x > 0) { *re = x; *im = ck_cnan_##T(); }                                       \
        else { *re = 0; *im = copysign##SUF((T)0, y); }                                    \
    } else if (isnan(x)) { *re = x; *im = y == 0 ? y : ck_cnan_##T(); }                    \
    else { *re = ck_cnan_##T(); *im = ck_cnan_##T(); }                                     \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_sinh_s_##T(T x, int xneg, T y, T *re, T *im)                        \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isfinite(x)) { *re = x == 0 ? x : ck_cnan_##T(); *im = ck_cnan_##T(); }            \
    else if (isinf(x)) {                                                                   \
        if (isfinite(y) && y != 0) {                                                       \
            *re = copysign##SUF((T)CK_INFF, cos##SUF(y)) * (xneg ? (T)-1 : (T)1);          \
            *im = copysign##SUF((T)CK_INFF, sin##SUF(y));                                  \
        } else if (y == 0) { *re = x; *im = y; }                                           \
        else { *re = (T)CK_INFF; *im = ck_cnan_##T(); }                                    \
    } else { *re = x; *im = y == 0 ? y : ck_cnan_##T(); }                                  \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_cosh_##T(T x, T y, T *re, T *im)                                     \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isfinite(x)) { *re = ck_cnan_##T(); *im = x == 0 ? (T)0 : ck_cnan_##T(); }         \
    else if (isinf(x)) {                                                                   \
        if (isfinite(y) && y != 0) {                                                       \
            *re = copysign##SUF((T)CK_INFF, cos##SUF(y));                                  \
            *im = copysign##SUF((T)CK_INFF, sin##SUF(y)) * (signbit(x) ? (T)-1 : (T)1);    \
        } else if (y == 0) { *re = (T)CK_INFF; *im = signbit(x) ? -y : y; }                \
        else { *re = (T)CK_INFF; *im = ck_cnan_##T(); }                                    \
    } else { *re = x; *im = y == 0 ? y : ck_cnan_##T(); }                                  \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_tanh_s_##T(T x, int xneg, T y, T *re, T *im)                        \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isinf(x)) {                                                                        \
        *re = xneg ? (T)-1 : (T)1;                                                         \
        *im = copysign##SUF((T)0, y);   /* the array API's 1 + 0j (C99: the sign of sin 2y) */ \
    } else if (y == 0) { *re = x; *im = y; }                                               \
    else { *re = x == 0 ? x : ck_cnan_##T(); *im = ck_cnan_##T(); }                        \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_asinh_s_##T(T x, int xneg, T y, T *re, T *im)                       \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isinf(y)) {                                                                        \
        *re = xneg ? -(T)CK_INFF : (T)CK_INFF;                                             \
        *im = isnan(x) ? ck_cnan_##T() : copysign##SUF(isfinite(x) ? (T)(CK_PI / 2) : (T)(CK_PI / 4), y); \
    } else if (!isfinite(x)) {                                                             \
        *re = x;                                                                           \
        *im = ((isinf(x) && isfinite(y)) || (isnan(x) && y == 0)) ? copysign##SUF((T)0, y) : ck_cnan_##T(); \
    } else { *re = ck_cnan_##T(); *im = ck_cnan_##T(); }                                   \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_acosh_##T(T x, T y, T *re, T *im)                                    \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isinf(y)) {                                                                        \
        *re = (T)CK_INFF;                                                                  \
        *im = isnan(x) ? ck_cnan_##T()                                                     \
                       : copysign##SUF(isinf(x) ? (x < 0 ? (T)(3 * CK_PI / 4) : (T)(CK_PI / 4)) : (T)(CK_PI / 2), y); \
    } else if (isinf(x)) {                                                                 \
        *re = (T)CK_INFF;                                                                  \
        *im = isfinite(y) ? copysign##SUF(signbit(x) ? (T)CK_PI : (T)0, y) : ck_cnan_##T(); \
    } else { *re = ck_cnan_##T(); *im = x == 0 ? (T)(CK_PI / 2) : ck_cnan_##T(); }         \
    return 1;                                                                              \
}                                                                                          \
CK_FN int ck_cspecial_atanh_s_##T(T x, int xneg, T y, T *re, T *im)                       \
{                                                                                          \
    if (isfinite(x) && isfinite(y)) return 0;                                              \
    if (isinf(y)) { *re = xneg ? -(T)0 : (T)0; *im = copysign##SUF((T)(CK_PI / 2), y); }    \
    else if (isinf(x) || x == 0) {                                                         \
        *re = xneg ? -(T)0 : (T)0;                                                         \
        *im = isfinite(y) ? copysign##SUF((T)(CK_PI / 2), y) : ck_cnan_##T();              \
    } else { *re = ck_cnan_##T(); *im = ck_cnan_##T(); }                                   \
    return 1;                                                                              \
}                                                                                          \
/* acos(z) = pi/2 - asin(z) = pi/2 - i asinh(iz)... in parts: asinh of -y + ix */          \
CK_FN int ck_cspecial_acos_##T(T x, T y, T *re, T *im)                                     \
{                                                                                          \
    T wr, wi;                                                                              \
    if (!ck_cspecial_asinh_s_##T(-y, !signbit(y), x, &wr, &wi)) return 0;                  \
    *re = (T)(CK_PI / 2) - wi;                                                             \
    if (*re == 0) *re = 0;                                                                 \
    *im = wr;                                                                              \
    return 1;                                                                              \
}                                                                                          \
/* the signed ones of z itself */                                                          \
CK_CSPECIAL_SIGNED_(sinh, T) CK_CSPECIAL_SIGNED_(tanh, T)                                  \
CK_CSPECIAL_SIGNED_(asinh, T) CK_CSPECIAL_SIGNED_(atanh, T)                                \
/* f(z) = -i g(iz) for (f, g) = (sin, sinh), (tan, tanh), (asin, asinh),                  \
 * (atan, atanh), and cos(z) = cosh(iz), as C99 defines their special values */           \
CK_CSPECIAL_ROTATED_(sin_r, sinh, T) CK_CSPECIAL_ROTATED_(tan, tanh, T)                    \
CK_CSPECIAL_ROTATED_(asin, asinh, T) CK_CSPECIAL_ROTATED_(atan, atanh, T)                  \
CK_FN int ck_cspecial_cos_##T(T x, T y, T *re, T *im) { return ck_cspecial_cosh_##T(-y, x, re, im); } \
/* (the C library's sin(+-inf or NaN +- i inf) is NaN + i inf, whichever the signs) */    \
CK_FN int ck_cspecial_sin_##T(T x, T y, T *re, T *im)                                      \
{                                                                                          \
    if (!ck_cspecial_sin_r_##T(x, y, re, im)) return 0;                                    \
    if (!isfinite(x) && isinf(y)) *im = (T)CK_INFF;                                        \
    return 1;                                                                              \
}
/* The _s forms take the sign of their x apart (xneg), for the rotations'
 * x = -y: where y is NaN, the sign of the infinity or zero these give is
 * C99's (and glibc's) "the sign of -y", and a GPU's negation of a NaN
 * gives the canonical NaN, whose sign is always +: only the sign bit read
 * before the negation is the same on every device. */
#define CK_CSPECIAL_SIGNED_(G, T)                                                         \
    CK_FN int ck_cspecial_##G##_##T(T x, T y, T *re, T *im)                                \
    {                                                                                      \
        return ck_cspecial_##G##_s_##T(x, signbit(x) != 0, y, re, im);                     \
    }
#define CK_CSPECIAL_ROTATED_(F, G, T)                                                     \
    CK_FN int ck_cspecial_##F##_##T(T x, T y, T *re, T *im)                                \
    {                                                                                      \
        T wr, wi;                                                                          \
        if (!ck_cspecial_##G##_s_##T(-y, !signbit(y), x, &wr, &wi)) return 0;              \
        *re = wi;                                                                          \
        *im = -wr;                                                                         \
        return 1;                                                                          \
    }
CK_CSPECIAL_FNS_(float, f)
CK_CSPECIAL_FNS_(double, )
#define CK_CSPECIAL_WRAP_(OP, T, CT)                                                      \
    CK_FN CT ck_c##OP##_##T(CT z)                                                          \
    {                                                                                      \
        T re, im;                                                                          \
        if (ck_cspecial_##OP##_##T(CK_RE(z), CK_IM(z), &re, &im)) return CK_MKC(z, re, im); \
        return OP(z);                                                                      \
    }
#define CK_CSPECIAL_WRAPS_(T, CT)                                                         \
    CK_CSPECIAL_WRAP_(exp, T, CT) CK_CSPECIAL_WRAP_(sinh, T, CT) CK_CSPECIAL_WRAP_(cosh, T, CT) \
    CK_CSPECIAL_WRAP_(tanh, T, CT) CK_CSPECIAL_WRAP_(asinh, T, CT) CK_CSPECIAL_WRAP_(acosh, T, CT) \
    CK_CSPECIAL_WRAP_(atanh, T, CT) CK_CSPECIAL_WRAP_(acos, T, CT) CK_CSPECIAL_WRAP_(sin, T, CT)      \
    CK_CSPECIAL_WRAP_(cos, T, CT) CK_CSPECIAL_WRAP_(tan, T, CT) CK_CSPECIAL_WRAP_(asin, T, CT)       \
    CK_CSPECIAL_WRAP_(atan, T, CT)
CK_CSPECIAL_WRAPS_(float, CK_CFLOAT)
CK_CSPECIAL_WRAPS_(double, CK_CDOUBLE)
/* f(a) for the real dtypes, its special-valued wrapper for the complex ones */
#define CK_CFN_FLOAT16(f, a) f(a)
#define CK_CFN_FLOAT32(f, a) f(a)
#define CK_CFN_FLOAT64(f, a) f(a)
#define CK_CFN_COMPLEX64(f, a) ck_c##f##_float(a)
#define CK_CFN_COMPLEX128(f, a) ck_c##f##_double(a)

/* ================================================================ unary */
#define CK_X_NEGATIVE(DT, K, C, a) ((C)(-(a)))
#define CK_X_POSITIVE(DT, K, C, a) (a)
#define CK_X_ABSOLUTE(DT, K, C, a) CK_X_ABSOLUTE_##K(C, a)
#define CK_X_ABSOLUTE_B(C, a) (a)
#define CK_X_ABSOLUTE_I(C, a) ((C)((a) < 0 ? -(a) : (a)))
#define CK_X_ABSOLUTE_U(C, a) (a)
#define CK_X_ABSOLUTE_F(C, a) fabs(a)
#define CK_X_ABSOLUTE_C(C, a) fabs(a)
#define CK_X_SIGN(DT, K, C, a) CK_X_SIGN_##K(C, a)
#define CK_X_SIGN_I(C, a) ((C)(((a) > 0) - ((a) < 0)))
#define CK_X_SIGN_U(C, a) ((C)((a) > 0))
#define CK_X_SIGN_F(C, a) ck_sign_##C(a)
#define CK_X_SIGN_C(C, a) ((CK_RE(a) == 0 && CK_IM(a) == 0) ? (C)0 : (a) / fabs(a))
#define CK_X_CONJUGATE(DT, K, C, a) CK_X_CONJUGATE_##K(a)
#define CK_X_CONJUGATE_B(a) (a)
#define CK_X_CONJUGATE_I(a) (a)
#define CK_X_CONJUGATE_U(a) (a)
#define CK_X_CONJUGATE_F(a) (a)
#define CK_X_CONJUGATE_C(a) conj(a)
#define CK_X_SQUARE(DT, K, C, a) ((C)((a) * (a)))
#define CK_X_RECIPROCAL(DT, K, C, a) CK_X_RECIPROCAL_##K(C, a)
#define CK_X_RECIPROCAL_I(C, a) ((a) == 0 ? (C)0 : (C)(1 / (int64_t)(a)))
#define CK_X_RECIPROCAL_U(C, a) ((a) == 0 ? (C)0 : (C)(1 / (uint64_t)(a)))
#define CK_X_RECIPROCAL_F(C, a) ((C)1 / (a))
#define CK_X_RECIPROCAL_C(C, a) ((C)1 / (a))
#define CK_X_SQRT(DT, K, C, a) sqrt(a)
#define CK_X_CBRT(DT, K, C, a) cbrt(a)
#define CK_X_EXP(DT, K, C, a) CK_X_EXP_##DT(a)
#define CK_X_EXP_FLOAT16(a) ck_expf(a)
#define CK_X_EXP_FLOAT32(a) ck_expf(a)
#define CK_X_EXP_FLOAT64(a) ck_exp(a)
#define CK_X_EXP_COMPLEX64(a) ck_cexp_float(a)
#define CK_X_EXP_COMPLEX128(a) ck_cexp_double(a)
#define CK_X_EXP2(DT, K, C, a) CK_X_EXP2_##K(C, a)
#define CK_X_EXP2_F(C, a) exp2(a)
#define CK_X_EXP2_C(C, a) exp((a) * CK_LN2)
#define CK_X_EXPM1(DT, K, C, a) CK_X_EXPM1_##K(DT, C, a)
#define CK_X_EXPM1_F(DT, C, a) expm1(a)
/* A non-finite part: exp(a) - 1, whose C99 special values are the array
 * API's for expm1 (NumPy's product formula gives inf * 0 = NaN there); the
 * + 0 makes expm1(-0 + 0j) the standard's +0 + 0j and changes nothing else. */
#define CK_X_EXPM1_C(DT, C, a)                                                                         \
    ((isfinite(CK_RE(a)) && isfinite(CK_IM(a)))                                                        \
         ? CK_MKC(a, expm1(CK_RE(a)) * cos(CK_IM(a)) - 2 * sin(CK_IM(a) / 2) * sin(CK_IM(a) / 2) + 0,  \
                  exp(CK_RE(a)) * sin(CK_IM(a)))                                                       \
         : CK_X_EXP_##DT(a) - 1)
#define CK_X_LOG(DT, K, C, a) CK_X_LOG_##DT(a)
#define CK_X_LOG_FLOAT16(a) ck_logf(a)
#define CK_X_LOG_FLOAT32(a) ck_logf(a)
#define CK_X_LOG_FLOAT64(a) ck_log(a)
#define CK_X_LOG_COMPLEX64(a) log(a)
#define CK_X_LOG_COMPLEX128(a) log(a)
#define CK_X_LOG2(DT, K, C, a) CK_X_LOG2_##K(C, a)
#define CK_X_LOG2_F(C, a) log2(a)
#define CK_X_LOG2_C(C, a) (log(a) * (1.0 / CK_LN2))   /* a real factor: no complex product with 0 * inf */
#define CK_X_LOG10(DT, K, C, a) CK_X_LOG10_##K(C, a)
#define CK_X_LOG10_F(C, a) log10(a)
#define CK_X_LOG10_C(C, a) (log(a) * (1.0 / CK_LN10))
#define CK_X_LOG1P(DT, K, C, a) CK_X_LOG1P_##K(C, a)
#define CK_X_LOG1P_F(C, a) CK_X_LOG1P_F_##C(a)
#define CK_X_LOG1P_F_float(a) ck_log1pf(a)
#define CK_X_LOG1P_F_double(a) log1p(a)
/* log|1 + z| + i arg(1 + z), with 1 + z never formed: adding 1 would turn
 * an imaginary -0 into +0 and put the result on the wrong side of the cut
 * (NumPy: atan2(im, 1 + re)).  Near 0, |1 + z|^2 - 1 = re(2 + re) + im^2
 * keeps the digits that log(hypot(...)) loses. */
#define CK_X_LOG1P_C(C, a)                                                                          \
    CK_MKC(a,                                                                                       \
           (fabs(CK_RE(a)) < 0.5 && fabs(CK_IM(a)) < 0.5)                                           \
               ? log1p(CK_RE(a) * (2 + CK_RE(a)) + CK_IM(a) * CK_IM(a)) / 2                         \
               : log(hypot(1 + CK_RE(a), CK_IM(a))),                                                \
           atan2(CK_IM(a), 1 + CK_RE(a)))
#define CK_X_SIN(DT, K, C, a) CK_CFN_##DT(sin, a)
#define CK_X_COS(DT, K, C, a) CK_CFN_##DT(cos, a)
#define CK_X_TAN(DT, K, C, a) CK_CFN_##DT(tan, a)
#define CK_X_ARCSIN(DT, K, C, a) CK_CFN_##DT(asin, a)
#define CK_X_ARCCOS(DT, K, C, a) CK_CFN_##DT(acos, a)
#define CK_X_ARCTAN(DT, K, C, a) CK_CFN_##DT(atan, a)
#define CK_X_SINH(DT, K, C, a) CK_CFN_##DT(sinh, a)
#define CK_X_COSH(DT, K, C, a) CK_CFN_##DT(cosh, a)
#define CK_X_TANH(DT, K, C, a) CK_CFN_##DT(tanh, a)
#define CK_X_ARCSINH(DT, K, C, a) CK_CFN_##DT(asinh, a)
#define CK_X_ARCCOSH(DT, K, C, a) CK_CFN_##DT(acosh, a)
#define CK_X_ARCTANH(DT, K, C, a) CK_CFN_##DT(atanh, a)
#define CK_X_DEG2RAD(DT, K, C, a) ((a) * (C)(CK_PI / 180.0))
#define CK_X_RAD2DEG(DT, K, C, a) ((a) * (C)(180.0 / CK_PI))
#define CK_X_FLOOR(DT, K, C, a) CK_X_ROUNDING_##K(floor, a)
#define CK_X_CEIL(DT, K, C, a) CK_X_ROUNDING_##K(ceil, a)
#define CK_X_TRUNC(DT, K, C, a) CK_X_ROUNDING_##K(trunc, a)
#define CK_X_ROUNDING_B(f, a) (a)
#define CK_X_ROUNDING_I(f, a) (a)
#define CK_X_ROUNDING_U(f, a) (a)
#define CK_X_ROUNDING_F(f, a) f(a)
#define CK_X_RINT(DT, K, C, a) CK_X_RINT_##K(C, a)
#define CK_X_RINT_F(C, a) rint(a)
#define CK_X_RINT_C(C, a) CK_MKC(a, rint(CK_RE(a)), rint(CK_IM(a)))
#define CK_X_ISNAN(DT, K, C, a) CK_X_ISNAN_##K(a)
#define CK_X_ISNAN_B(a) 0
#define CK_X_ISNAN_I(a) 0
#define CK_X_ISNAN_U(a) 0
#define CK_X_ISNAN_F(a) isnan(a)
#define CK_X_ISNAN_C(a) CK_CNAN(a)
#define CK_X_ISINF(DT, K, C, a) CK_X_ISINF_##K(a)
#define CK_X_ISINF_B(a) 0
#define CK_X_ISINF_I(a) 0
#define CK_X_ISINF_U(a) 0
#define CK_X_ISINF_F(a) isinf(a)
#define CK_X_ISINF_C(a) (isinf(CK_RE(a)) || isinf(CK_IM(a)))
#define CK_X_ISFINITE(DT, K, C, a) CK_X_ISFINITE_##K(a)
#define CK_X_ISFINITE_B(a) 1
#define CK_X_ISFINITE_I(a) 1
#define CK_X_ISFINITE_U(a) 1
#define CK_X_ISFINITE_F(a) isfinite(a)
#define CK_X_ISFINITE_C(a) (isfinite(CK_RE(a)) && isfinite(CK_IM(a)))
#define CK_X_SIGNBIT(DT, K, C, a) (signbit(a) != 0)
#define CK_X_LOGICAL_NOT(DT, K, C, a) ((a) == 0)
#define CK_X_INVERT(DT, K, C, a) CK_X_INVERT_##K(C, a)
#define CK_X_INVERT_B(C, a) ((C)!(a))
#define CK_X_INVERT_I(C, a) ((C)~(a))
#define CK_X_INVERT_U(C, a) ((C)~(a))

/* =============================================================== binary */
#define CK_X_ADD(DT, K, C, a, b) CK_X_ADD_##K(C, a, b)
#define CK_X_ADD_B(C, a, b) ((C)((a) | (b)))
#define CK_X_ADD_I(C, a, b) ((C)((a) + (b)))
#define CK_X_ADD_U(C, a, b) ((C)((a) + (b)))
#define CK_X_ADD_F(C, a, b) ((a) + (b))
#define CK_X_ADD_C(C, a, b) ((a) + (b))
#define CK_X_SUBTRACT(DT, K, C, a, b) ((C)((a) - (b)))
#define CK_X_MULTIPLY(DT, K, C, a, b) CK_X_MULTIPLY_##K(C, a, b)
#define CK_X_MULTIPLY_B(C, a, b) ((C)((a) & (b)))
#define CK_X_MULTIPLY_I(C, a, b) ((C)((a) * (b)))
#define CK_X_MULTIPLY_U(C, a, b) ((C)((a) * (b)))
#define CK_X_MULTIPLY_F(C, a, b) ((a) * (b))
#define CK_X_MULTIPLY_C(C, a, b) ((a) * (b))
#define CK_X_TRUE_DIVIDE(DT, K, C, a, b) ((a) / (b))
#define CK_X_FLOOR_DIVIDE(DT, K, C, a, b) CK_X_FLOOR_DIVIDE_##K(C, a, b)
#define CK_X_FLOOR_DIVIDE_I(C, a, b) ((C)ck_floordiv_i64(a, b))
#define CK_X_FLOOR_DIVIDE_U(C, a, b) ((b) == 0 ? (C)0 : (C)((a) / (b)))
#define CK_X_FLOOR_DIVIDE_F(C, a, b) ck_floordiv_##C(a, b)
#define CK_X_REMAINDER(DT, K, C, a, b) CK_X_REMAINDER_##K(C, a, b)
#define CK_X_REMAINDER_I(C, a, b) ((C)ck_rem_i64(a, b))
#define CK_X_REMAINDER_U(C, a, b) ((b) == 0 ? (C)0 : (C)((a) % (b)))
#define CK_X_REMAINDER_F(C, a, b) ck_rem_##C(a, b)
#define CK_X_FMOD(DT, K, C, a, b) CK_X_FMOD_##K(C, a, b)
#define CK_X_FMOD_I(C, a, b) ((C)ck_fmod_i64(a, b))
#define CK_X_FMOD_U(C, a, b) ((b) == 0 ? (C)0 : (C)((a) % (b)))
#define CK_X_FMOD_F(C, a, b) fmod(a, b)
#define CK_X_POWER(DT, K, C, a, b) CK_X_POWER_##K(C, a, b)
#define CK_X_POWER_I(C, a, b) ((b) < 0 ? (ck_bad = 1, (C)0) : (C)ck_upow((uint64_t)(int64_t)(a), (uint64_t)(b)))
#define CK_X_POWER_U(C, a, b) ((C)ck_upow(a, b))
#define CK_X_POWER_F(C, a, b) pow(a, b)
/* NumPy's special cases: x ** 0 is 1, 0 ** b is 0 when re(b) > 0 and nan otherwise */
#define CK_X_POWER_C(C, a, b)                                                                \
    ((CK_RE(b) == 0 && CK_IM(b) == 0) ? (C)1                                                 \
     : (CK_RE(a) == 0 && CK_IM(a) == 0) ? (CK_RE(b) > 0 ? (C)0                                \
                                           : CK_MKC(a, CK_INFF - CK_INFF, CK_INFF - CK_INFF)) \
     : pow(a, b))
/* NumPy's minimum, maximum, fmin and fmax: NaN propagates (minimum,
 * maximum: the first NaN operand; fmin, fmax: a NaN loses to a number, and
 * of two NaNs the first stays).  Of two equal operands, which is returned
 * shows only as the sign of a zero: NumPy's float32 and float64 loops (its
 * SIMD minps/maxps) return the second, so minimum(-0.0, 0.0) is 0.0; its
 * float16 and complex loops return the first.  (NumPy's fmin/fmax take
 * libm's fmin for a scalar and for the ends of a run, so there the sign of
 * a zero result varies with the length; these are its vector loop's.)
 * CK_TIES_LATER_<DT> says which (the CPU reductions of
 * src/backend/cpu/cpu_reduce.c follow it). */
#define CK_TIES_LATER_FLOAT16 0
#define CK_TIES_LATER_FLOAT32 1
#define CK_TIES_LATER_FLOAT64 1
#define CK_TIES_LATER_CK_FIRST 0   /* for clip */
#define CK_X_MAXIMUM(DT, K, C, a, b) CK_X_MAXIMUM_##K(DT, a, b)
#define CK_X_MAXIMUM_B(DT, a, b) ((a) | (b))
#define CK_X_MAXIMUM_I(DT, a, b) ((a) >= (b) ? (a) : (b))
#define CK_X_MAXIMUM_U(DT, a, b) ((a) >= (b) ? (a) : (b))
#define CK_X_MAXIMUM_F(DT, a, b) (CK_TIES_LATER_##DT ? CK_MAX_LATER_F(a, b) : CK_MAX_FIRST_F(a, b))
#define CK_X_MAXIMUM_C(DT, a, b) ((CK_CLE(b, a) || CK_CNAN(a)) ? (a) : (b))
#define CK_X_MINIMUM(DT, K, C, a, b) CK_X_MINIMUM_##K(DT, a, b)
#define CK_X_MINIMUM_B(DT, a, b) ((a) & (b))
#define CK_X_MINIMUM_I(DT, a, b) ((a) <= (b) ? (a) : (b))
#define CK_X_MINIMUM_U(DT, a, b) ((a) <= (b) ? (a) : (b))
#define CK_X_MINIMUM_F(DT, a, b) (CK_TIES_LATER_##DT ? CK_MIN_LATER_F(a, b) : CK_MIN_FIRST_F(a, b))
#define CK_X_MINIMUM_C(DT, a, b) ((CK_CLE(a, b) || CK_CNAN(a)) ? (a) : (b))
#define CK_X_FMAX(DT, K, C, a, b) CK_X_FMAX_##K(DT, a, b)
#define CK_X_FMAX_B(DT, a, b) ((a) | (b))
#define CK_X_FMAX_I(DT, a, b) ((a) >= (b) ? (a) : (b))
#define CK_X_FMAX_U(DT, a, b) ((a) >= (b) ? (a) : (b))
#define CK_X_FMAX_F(DT, a, b) ((CK_TIES_LATER_##DT ? (a) > (b) : (a) >= (b)) || (b) != (b) ? (a) : (b))
#define CK_X_FMAX_C(DT, a, b) ((CK_CLE(b, a) || CK_CNAN(b)) ? (a) : (b))
#define CK_X_FMIN(DT, K, C, a, b) CK_X_FMIN_##K(DT, a, b)
#define CK_X_FMIN_B(DT, a, b) ((a) & (b))
#define CK_X_FMIN_I(DT, a, b) ((a) <= (b) ? (a) : (b))
#define CK_X_FMIN_U(DT, a, b) ((a) <= (b) ? (a) : (b))
#define CK_X_FMIN_F(DT, a, b) ((CK_TIES_LATER_##DT ? (a) < (b) : (a) <= (b)) || (b) != (b) ? (a) : (b))
#define CK_X_FMIN_C(DT, a, b) ((CK_CLE(a, b) || CK_CNAN(b)) ? (a) : (b))
/* the NaN-propagating pair, by which equal operand wins */
#define CK_MIN_LATER_F(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
#define CK_MIN_FIRST_F(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define CK_MAX_LATER_F(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define CK_MAX_FIRST_F(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define CK_X_COPYSIGN(DT, K, C, a, b) copysign(a, b)
#define CK_X_HYPOT(DT, K, C, a, b) hypot(a, b)
#define CK_X_ARCTAN2(DT, K, C, a, b) atan2(a, b)
#define CK_X_LOGADDEXP(DT, K, C, a, b) ck_logaddexp_##C(a, b)
#define CK_X_LOGADDEXP2(DT, K, C, a, b) ck_logaddexp2_##C(a, b)
#define CK_X_NEXTAFTER(DT, K, C, a, b) ck_nextafter_##DT(a, b)
#define CK_X_EQUAL(DT, K, C, a, b) ((a) == (b))
#define CK_X_NOT_EQUAL(DT, K, C, a, b) ((a) != (b))
#define CK_X_LESS(DT, K, C, a, b) CK_X_LESS_##K(a, b)
#define CK_X_LESS_B(a, b) ((a) < (b))
#define CK_X_LESS_I(a, b) ((a) < (b))
#define CK_X_LESS_U(a, b) ((a) < (b))
#define CK_X_LESS_F(a, b) ((a) < (b))
#define CK_X_LESS_C(a, b) CK_CLT(a, b)
#define CK_X_LESS_EQUAL(DT, K, C, a, b) CK_X_LESS_EQUAL_##K(a, b)
#define CK_X_LESS_EQUAL_B(a, b) ((a) <= (b))
#define CK_X_LESS_EQUAL_I(a, b) ((a) <= (b))
#define CK_X_LESS_EQUAL_U(a, b) ((a) <= (b))
#define CK_X_LESS_EQUAL_F(a, b) ((a) <= (b))
#define CK_X_LESS_EQUAL_C(a, b) CK_CLE(a, b)
#define CK_X_GREATER(DT, K, C, a, b) CK_X_LESS(DT, K, C, b, a)
#define CK_X_GREATER_EQUAL(DT, K, C, a, b) CK_X_LESS_EQUAL(DT, K, C, b, a)
#define CK_X_LOGICAL_AND(DT, K, C, a, b) (((a) != 0) & ((b) != 0))
#define CK_X_LOGICAL_OR(DT, K, C, a, b) (((a) != 0) | ((b) != 0))
#define CK_X_LOGICAL_XOR(DT, K, C, a, b) (((a) != 0) ^ ((b) != 0))
#define CK_X_BITWISE_AND(DT, K, C, a, b) ((C)((a) & (b)))
#define CK_X_BITWISE_OR(DT, K, C, a, b) ((C)((a) | (b)))
#define CK_X_BITWISE_XOR(DT, K, C, a, b) ((C)((a) ^ (b)))
#define CK_X_LEFT_SHIFT(DT, K, C, a, b) CK_X_LEFT_SHIFT_##K(C, a, b)
#define CK_X_LEFT_SHIFT_I(C, a, b) (((b) < 0 || (b) >= (C)(8 * sizeof(C))) ? (C)0 : (C)((uint64_t)(int64_t)(a) << (b)))
#define CK_X_LEFT_SHIFT_U(C, a, b) (((b) >= 8 * sizeof(C)) ? (C)0 : (C)((uint64_t)(a) << (b)))
#define CK_X_RIGHT_SHIFT(DT, K, C, a, b) CK_X_RIGHT_SHIFT_##K(C, a, b)
#define CK_X_RIGHT_SHIFT_I(C, a, b) (((b) < 0 || (b) >= (C)(8 * sizeof(C))) ? (C)((a) < 0 ? -1 : 0) : (C)((a) >> (b)))
#define CK_X_RIGHT_SHIFT_U(C, a, b) (((b) >= 8 * sizeof(C)) ? (C)0 : (C)((a) >> (b)))
#define CK_X_GCD(DT, K, C, a, b) ((C)ck_gcd_u64(CK_UABS_##K(a), CK_UABS_##K(b)))
#define CK_X_LCM(DT, K, C, a, b) CK_X_LCM_(C, CK_UABS_##K(a), CK_UABS_##K(b))
#define CK_X_LCM_(C, ua, ub) ((ua) == 0 || (ub) == 0 ? (C)0 : (C)((ua) / ck_gcd_u64(ua, ub) * (ub)))
#define CK_UABS_I(a) ck_uabs_i64(a)
#define CK_UABS_U(a) ((uint64_t)(a))

/* ============================================================== ternary */
/* NumPy's clip has two loops, which differ only on ties (the sign of a zero)
 * and in which NaN fills.  Where both bounds are constant along the loop
 * (steps of 0: scalars, bounds broadcast along the innermost dimension),
 * CK_X_CLIP_CONST: float32/float64 keep a where it equals a bound
 * (clip(-0.0, 0.0, 1.0) is -0.0) and a NaN bound fills.  Elsewhere,
 * CK_X_CLIP: a tie takes the bound (clip([-0.0], [0.0], [1.0]) is [0.0]).
 * float16 keeps a on ties, complex takes the bound, in both; integers and
 * bool cannot tell.  Both devices test the merged iteration's innermost
 * strides, as NumPy tests its loop's steps (its iterator may buffer a
 * partly broadcast bound, and so take the other loop for some shapes). */
#define CK_X_CLIP(DT, K, C, a, lo, hi) CK_X_CLIP_##K(DT, C, a, lo, hi)
#define CK_X_CLIP_CONST(DT, K, C, a, lo, hi) CK_X_CLIP_CONST_##K(DT, C, a, lo, hi)
#define CK_X_CLIP_FIRST_(K, a, lo, hi) CK_X_MINIMUM_##K(CK_FIRST, CK_X_MAXIMUM_##K(CK_FIRST, a, lo), hi)
#define CK_X_CLIP_B(DT, C, a, lo, hi) CK_X_CLIP_FIRST_(B, a, lo, hi)
#define CK_X_CLIP_I(DT, C, a, lo, hi) CK_X_CLIP_FIRST_(I, a, lo, hi)
#define CK_X_CLIP_U(DT, C, a, lo, hi) CK_X_CLIP_FIRST_(U, a, lo, hi)
#define CK_X_CLIP_F(DT, C, a, lo, hi) CK_CLIP_##DT(C, a, lo, hi)
#define CK_X_CLIP_C(DT, C, a, lo, hi) CK_CLIP_MIN_C_(CK_CLIP_MAX_C_(a, lo), hi)
#define CK_X_CLIP_CONST_B(DT, C, a, lo, hi) CK_X_CLIP_B(DT, C, a, lo, hi)
#define CK_X_CLIP_CONST_I(DT, C, a, lo, hi) CK_X_CLIP_I(DT, C, a, lo, hi)
#define CK_X_CLIP_CONST_U(DT, C, a, lo, hi) CK_X_CLIP_U(DT, C, a, lo, hi)
#define CK_X_CLIP_CONST_F(DT, C, a, lo, hi) CK_CLIP_CONST_##DT(C, a, lo, hi)
#define CK_X_CLIP_CONST_C(DT, C, a, lo, hi) CK_X_CLIP_C(DT, C, a, lo, hi)
#define CK_CLIP_FLOAT16(C, a, lo, hi) ck_clip_first_##C(a, lo, hi)
#define CK_CLIP_FLOAT32(C, a, lo, hi) ck_clip_##C(a, lo, hi)
#define CK_CLIP_FLOAT64(C, a, lo, hi) ck_clip_##C(a, lo, hi)
#define CK_CLIP_CONST_FLOAT16(C, a, lo, hi) ck_clip_first_##C(a, lo, hi)
#define CK_CLIP_CONST_FLOAT32(C, a, lo, hi) ck_clip_const_##C(a, lo, hi)
#define CK_CLIP_CONST_FLOAT64(C, a, lo, hi) ck_clip_const_##C(a, lo, hi)
/* complex: a NaN a stays, a tie (or an unordered bound) takes the bound */
#define CK_CLIP_MAX_C_(a, b) ((CK_CLT(b, a) || CK_CNAN(a)) ? (a) : (b))
#define CK_CLIP_MIN_C_(a, b) ((CK_CLT(a, b) || CK_CNAN(a)) ? (a) : (b))

/* ================================================================ casts */
/* Conversion of one value from compute type CF (kind KF) to storage ST of
 * kind KT.  Float to integer goes through int64 so negative values wrap into
 * unsigned types as NumPy's casts do; complex to real drops the imaginary
 * part. */
#define CK_CVT_(KF, KT, ST, v) CK_CVT_##KF##_##KT(ST, v)
#define CK_CVT_B_B(ST, v) ((ST)((v) != 0))
#define CK_CVT_I_B(ST, v) ((ST)((v) != 0))
#define CK_CVT_U_B(ST, v) ((ST)((v) != 0))
#define CK_CVT_F_B(ST, v) ((ST)((v) != 0))
#define CK_CVT_C_B(ST, v) ((ST)((v) != 0))
#define CK_CVT_B_I(ST, v) ((ST)(v))
#define CK_CVT_I_I(ST, v) ((ST)(v))
#define CK_CVT_U_I(ST, v) ((ST)(v))
#define CK_CVT_F_I(ST, v) ((ST)ck_f2i64((double)(v)))
#define CK_CVT_C_I(ST, v) ((ST)ck_f2i64((double)CK_RE(v)))
#define CK_CVT_B_U CK_CVT_B_I
#define CK_CVT_I_U CK_CVT_I_I
#define CK_CVT_U_U CK_CVT_U_I
#define CK_CVT_F_U(ST, v) ((ST)ck_f2u64((double)(v)))
#define CK_CVT_C_U(ST, v) ((ST)ck_f2u64((double)CK_RE(v)))
#define CK_CVT_B_F(ST, v) ((ST)(v))
#define CK_CVT_I_F(ST, v) ((ST)(v))
#define CK_CVT_U_F(ST, v) ((ST)(v))
#define CK_CVT_F_F(ST, v) ((ST)(v))
#define CK_CVT_C_F(ST, v) ((ST)CK_RE(v))
#define CK_CVT_B_C(ST, v) ((ST)(v))
#define CK_CVT_I_C(ST, v) ((ST)(v))
#define CK_CVT_U_C(ST, v) ((ST)(v))
#define CK_CVT_F_C(ST, v) ((ST)(v))
#define CK_CVT_C_C(ST, v) ((ST)(v))

CK_FN int64_t ck_f2i64(double v)
{
    if (v != v) return INT64_MIN;
    if (v >= 9223372036854775808.0 || v < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
CK_FN uint64_t ck_f2u64(double v)
{
    if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return (uint64_t)v;
    return (uint64_t)ck_f2i64(v);
}

#endif
