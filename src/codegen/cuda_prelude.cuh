/*
 * cuda_prelude.cuh - the CUDA C++ environment of src/formulas/scalar_ops.h
 * for generated kernels (NVRTC, no system headers): fixed-width integers,
 * float16 storage converted through PTX, complex numbers with the math
 * functions NumPy defines on them.  Embedded in the library at build time
 * and placed before every generated kernel, followed by scalar_ops.h.
 * Kernels translated from Python also compile it on the CPU (CUDAKIT_CPU,
 * cuda_compat.hpp): the system's integer types and _Float16 there.
 */
#ifndef CUDAKIT_CPU   /* the CPU target (cuda_compat.hpp) has the system's */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT64_MIN (-9223372036854775807LL - 1)
#endif

#define CK_FN __device__ __forceinline__
/* A kernel launched with ck_cuda_launch_pdl begins so: its dependents may
 * be launched now (they wait in turn), and it waits for the kernel before
 * it to finish and its writes to be seen.  Both are no-ops for an
 * ordinary launch and before Hopper. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CK_PDL_ENTRY() asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory")
#else
#define CK_PDL_ENTRY() ((void)0)
#endif
#define CK_PI 3.14159265358979323846264338327950288
#define CK_INFF __int_as_float(0x7f800000)
#define CK_F32_FROM_BITS(u) __uint_as_float(u)
#define CK_F32_BITS(f) __float_as_uint(f)
#define CK_F64_FROM_BITS(u) __longlong_as_double((long long)(u))
#define CK_F64_BITS(f) ((uint64_t)__double_as_longlong(f))
#define CK_RE(a) ((a).re)
#define CK_IM(a) ((a).im)
#define CK_MKC(a, r, i) decltype(a)((r), (i))

/* float16 as storage: arithmetic happens in float, as NumPy's loops do. */
struct ck_f16 {
    unsigned short bits;
    ck_f16() = default;
#ifdef CUDAKIT_CPU
    ck_f16(float f) { _Float16 h = (_Float16)f; __builtin_memcpy(&bits, &h, 2); }
    ck_f16(double d) { _Float16 h = (_Float16)d; __builtin_memcpy(&bits, &h, 2); }
#else
    /* cvt gives every NaN as the canonical 0x7fff: a NaN's sign and payload
     * go by hand, as NumPy's conversions keep them (minimum(x, nan) returns
     * that very NaN, a strided copy its bits) */
    __device__ ck_f16(float f)
    {
        unsigned u = __float_as_uint(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            unsigned short m = (unsigned short)((u >> 13) & 0x3ffu);
            bits = (unsigned short)(((u >> 16) & 0x8000u) | 0x7c00u | (m ? m : 1u));
        } else {
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
        }
    }
    __device__ ck_f16(double d)
    {
        unsigned long long u = (unsigned long long)__double_as_longlong(d);
        if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) {
            unsigned short m = (unsigned short)((u >> 42) & 0x3ffu);
            bits = (unsigned short)(((u >> 48) & 0x8000u) | 0x7c00u | (m ? m : 1u));
        } else {
            asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(d));
        }
    }
#endif
    template <typename T> __device__ ck_f16(T v) : ck_f16((float)v) {}
    __device__ operator float() const
    {
#ifdef CUDAKIT_CPU
        _Float16 h;
        __builtin_memcpy(&h, &bits, 2);
        return (float)h;
#else
        if ((bits & 0x7fffu) > 0x7c00u)
            return __uint_as_float(((unsigned)(bits & 0x8000u) << 16) | 0x7f800000u | ((unsigned)(bits & 0x3ffu) << 13));
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
        return f;
#endif
    }
};

CK_FN float ck_nextafter_FLOAT16(float a, float b)
{
    ck_f16 x(a), y(b);
    float fx = (float)x, fy = (float)y;
    if (fx != fx || fy != fy) return fx + fy;
    if (fx == fy) return fy;
    if (fx == 0.0f) x.bits = (unsigned short)((fy < 0 ? 0x8000u : 0u) | 1u);
    else if ((fx < fy) == (fx > 0)) x.bits++;
    else x.bits--;
    return (float)x;
}

/* ------------------------------------------------------------ complex */
/* Products and sums rounded one by one, as NumPy's C loops round them: NVRTC
 * would fuse them into FMAs, which keep an overflowing product exact and so
 * turn some infinite quotients into others than NumPy's (-inf+infj for its
 * inf+infj). */
__device__ __forceinline__ float ck_mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double ck_mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float ck_add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double ck_add_rn(double a, double b) { return __dadd_rn(a, b); }

template <typename T> struct ck_complex {
    T re, im;
    ck_complex() = default;
    __device__ ck_complex(T r, T i) : re(r), im(i) {}
    __device__ ck_complex(T r) : re(r), im(0) {}
    template <typename U> __device__ ck_complex(const ck_complex<U> &o) : re((T)o.re), im((T)o.im) {}
    template <typename U> __device__ ck_complex(U r) : re((T)r), im(0) {}

    friend __device__ ck_complex operator+(ck_complex a, ck_complex b) { return ck_complex(a.re + b.re, a.im + b.im); }
    friend __device__ ck_complex operator-(ck_complex a, ck_complex b) { return ck_complex(a.re - b.re, a.im - b.im); }
    friend __device__ ck_complex operator-(ck_complex a) { return ck_complex(-a.re, -a.im); }
    friend __device__ ck_complex operator*(ck_complex a, ck_complex b)
    {
        return ck_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
    }
    /* Smith's division, as NumPy's: no overflow for large denominators */
    friend __device__ ck_complex operator/(ck_complex a, ck_complex b)
    {
        T abr = fabs(b.re), abi = fabs(b.im);   /* +0 for -0: a zero divisor's quotient has NumPy's signs */
        if (abr >= abi) {
            if (abr == 0 && abi == 0) return ck_complex(a.re / abr, a.im / abi);
            T rat = b.im / b.re, scl = (T)1 / ck_add_rn(b.re, ck_mul_rn(b.im, rat));
            return ck_complex(ck_add_rn(a.re, ck_mul_rn(a.im, rat)) * scl, ck_add_rn(a.im, -ck_mul_rn(a.re, rat)) * scl);
        }
        T rat = b.re / b.im, scl = (T)1 / ck_add_rn(b.im, ck_mul_rn(b.re, rat));
        return ck_complex(ck_add_rn(ck_mul_rn(a.re, rat), a.im) * scl, ck_add_rn(ck_mul_rn(a.im, rat), -a.re) * scl);
    }
    /* a real factor scales both parts: (x+iy) * s, no 0 * inf = nan */
    friend __device__ ck_complex operator*(ck_complex a, T s) { return ck_complex(a.re * s, a.im * s); }
    friend __device__ bool operator==(ck_complex a, ck_complex b) { return a.re == b.re && a.im == b.im; }
    friend __device__ bool operator!=(ck_complex a, ck_complex b) { return !(a == b); }
};
typedef ck_complex<float> ck_c64;
typedef ck_complex<double> ck_c128;
#define CK_CFLOAT ck_c64
#define CK_CDOUBLE ck_c128

/* pow is the C library's cpow (the CPU's, and NumPy's for an exponent that
 * is not a small integer): exp(b log a), the product with C99 Annex G's
 * recovery of infinities (glibc's cpow is compiled with it: (inf+infj) *
 * (0+1.57j) is -inf+infj there, nan+nanj as a textbook product), the exp
 * with C99's special values of scalar_ops.h (a bare one gives exp(-inf +
 * nanj), from (-1) ** (0+infj), as nan+nanj, the C library 0+0j). */
#ifndef CK_NO_SCALAR_OPS   /* (a Python kernel that uses none of scalar_ops.h has no cpow either) */
CK_FN ck_complex<float> ck_cexp_float(ck_complex<float> z);
CK_FN ck_complex<double> ck_cexp_double(ck_complex<double> z);
#endif

template <typename T> __device__ inline ck_complex<T> ck_cmul_annex_g(ck_complex<T> l, ck_complex<T> r)
{
    T a = l.re, b = l.im, c = r.re, d = r.im;
    T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    T x = ac - bd, y = ad + bc;
    if (isnan(x) && isnan(y)) {
        int again = 0;
        if (isinf(a) || isinf(b)) {
            a = copysign(isinf(a) ? (T)1 : (T)0, a);
            b = copysign(isinf(b) ? (T)1 : (T)0, b);
            if (isnan(c)) c = copysign((T)0, c);
            if (isnan(d)) d = copysign((T)0, d);
            again = 1;
        }
        if (isinf(c) || isinf(d)) {
            c = copysign(isinf(c) ? (T)1 : (T)0, c);
            d = copysign(isinf(d) ? (T)1 : (T)0, d);
            if (isnan(a)) a = copysign((T)0, a);
            if (isnan(b)) b = copysign((T)0, b);
            again = 1;
        }
        if (!again && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
            if (isnan(a)) a = copysign((T)0, a);
            if (isnan(b)) b = copysign((T)0, b);
            if (isnan(c)) c = copysign((T)0, c);
            if (isnan(d)) d = copysign((T)0, d);
            again = 1;
        }
        if (again) {
            x = (T)CK_INFF * (a * c - b * d);
            y = (T)CK_INFF * (a * d + b * c);
        }
    }
    return ck_complex<T>(x, y);
}

#define CK_CPLX_FNS_(T)                                                                    \
    __device__ inline T fabs(ck_complex<T> z) { return hypot(z.re, z.im); }               \
    __device__ inline ck_complex<T> conj(ck_complex<T> z) { return ck_complex<T>(z.re, -z.im); } \
    __device__ inline ck_complex<T> exp(ck_complex<T> z)                                   \
    {                                                                                      \
        if (z.im == 0) return ck_complex<T>(exp(z.re), z.im);                              \
        T e = exp(z.re);                                                                   \
        return ck_complex<T>(e * cos(z.im), e * sin(z.im));                                \
    }                                                                                      \
    __device__ inline ck_complex<T> log(ck_complex<T> z)                                   \
    {                                                                                      \
        return ck_complex<T>(log(hypot(z.re, z.im)), atan2(z.im, z.re));                   \
    }                                                                                      \
    __device__ inline ck_complex<T> sqrt(ck_complex<T> z)                                  \
    {                                                                                      \
        if (z.re == 0 && z.im == 0) return ck_complex<T>(0, z.im);                         \
        if (isinf(z.im)) return ck_complex<T>((T)CK_INFF, z.im);                          \
        T t = sqrt((fabs(z.re) + hypot(z.re, z.im)) / 2);                                  \
        if (z.re >= 0) return ck_complex<T>(t, z.im / (2 * t));                            \
        return ck_complex<T>(fabs(z.im) / (2 * t), copysign(t, z.im));                     \
    }                                                                                      \
    __device__ inline ck_complex<T> sin(ck_complex<T> z)                                   \
    {                                                                                      \
        return ck_complex<T>(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im));              \
    }                                                                                      \
    __device__ inline ck_complex<T> cos(ck_complex<T> z)                                   \
    {                                                                                      \
        return ck_complex<T>(cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im));             \
    }                                                                                      \
    __device__ inline ck_complex<T> sinh(ck_complex<T> z)                                  \
    {                                                                                      \
        return ck_complex<T>(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im));              \
    }                                                                                      \
    __device__ inline ck_complex<T> cosh(ck_complex<T> z)                                  \
    {                                                                                      \
        return ck_complex<T>(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im));              \
    }                                                                                      \
    __device__ inline ck_complex<T> tanh(ck_complex<T> z)                                  \
    {                                                                                      \
        if (fabs(z.re) > (T)20) return ck_complex<T>(copysign((T)1, z.re), copysign((T)0, sin(2 * z.im))); \
        T d = cosh(2 * z.re) + cos(2 * z.im);                                              \
        return ck_complex<T>(sinh(2 * z.re) / d, sin(2 * z.im) / d);                       \
    }                                                                                      \
    __device__ inline ck_complex<T> tan(ck_complex<T> z)                                   \
    {                                                                                      \
        ck_complex<T> t = tanh(ck_complex<T>(-z.im, z.re));                                \
        return ck_complex<T>(t.im, -t.re);                                                 \
    }                                                                                      \
    __device__ inline ck_complex<T> log1p(ck_complex<T> z)                                 \
    {   /* accurate for small z: |1+z|^2 - 1 = x(2+x) + y^2; hypot where that could overflow */ \
        T re = fabs(z.re) < (T)0.5 && fabs(z.im) < (T)0.5 ? log1p(z.re * (2 + z.re) + z.im * z.im) / 2 \
                                                          : log(hypot(1 + z.re, z.im));     \
        return ck_complex<T>(re, atan2(z.im, 1 + z.re));                                   \
    }                                                                                      \
    __device__ inline ck_complex<T> asinh(ck_complex<T> z)                                 \
    {   /* log1p(w + w^2 / (1 + sqrt(1 + w^2))) on w = |re| + i|im|, where no cut   */     \
        /* runs, then the signs back (asinh is odd and commutes with conj): so the */     \
        /* signed zeros on the cuts pick the side C99 and NumPy pick */                    \
        ck_complex<T> w(fabs(z.re), fabs(z.im));                                          \
        ck_complex<T> w2(w.re * w.re - w.im * w.im, 2 * w.re * w.im);                      \
        ck_complex<T> r = sqrt(ck_complex<T>(1 + w2.re, w2.im));                           \
        r = log1p(w + w2 / ck_complex<T>(1 + r.re, r.im));                                 \
        return ck_complex<T>(copysign(r.re, z.re), copysign(r.im, z.im));                  \
    }                                                                                      \
    __device__ inline ck_complex<T> asin(ck_complex<T> z)                                  \
    {                                                                                      \
        ck_complex<T> w = asinh(ck_complex<T>(-z.im, z.re));                               \
        return ck_complex<T>(w.im, -w.re);                                                 \
    }                                                                                      \
    __device__ inline ck_complex<T> acos(ck_complex<T> z)                                  \
    {                                                                                      \
        ck_complex<T> w = asin(z);                                                         \
        return ck_complex<T>((T)(CK_PI / 2) - w.re, -w.im);                                \
    }                                                                                      \
    __device__ inline ck_complex<T> acosh(ck_complex<T> z)                                 \
    {                                                                                      \
        /* z +- 1 by the real part alone: the sign of a zero imaginary part */            \
        /* decides the side of the cut */                                                 \
        ck_complex<T> p = sqrt(ck_complex<T>(z.re + 1, z.im)) * sqrt(ck_complex<T>(z.re - 1, z.im)); \
        return log(ck_complex<T>(z.re + p.re, z.im + p.im));                               \
    }                                                                                      \
    __device__ inline ck_complex<T> atanh(ck_complex<T> z)                                 \
    {   /* odd, and its parts have the signs of z's: so the signed zeros are C99's */     \
        ck_complex<T> w = log1p(z) - log1p(-z);                                            \
        return ck_complex<T>(copysign(w.re / 2, z.re), copysign(w.im / 2, z.im));          \
    }                                                                                      \
    __device__ inline ck_complex<T> atan(ck_complex<T> z)                                  \
    {                                                                                      \
        ck_complex<T> w = atanh(ck_complex<T>(-z.im, z.re));                               \
        return ck_complex<T>(w.im, -w.re);                                                 \
    }
#define CK_CPLX_POW_(T)                                                                    \
    __device__ inline ck_complex<T> pow(ck_complex<T> a, ck_complex<T> b)                  \
    {                                                                                      \
        if (b.im == 0 && b.re == 1) return a;                                              \
        if (b.im == 0 && b.re == 2) return a * a;                                          \
        return ck_cexp_##T(ck_cmul_annex_g(b, log(a)));                                    \
    }

CK_CPLX_FNS_(float)
CK_CPLX_FNS_(double)
#ifndef CK_NO_SCALAR_OPS
CK_CPLX_POW_(float)
CK_CPLX_POW_(double)
#endif

/* Vectors for the contiguous kernels: one aligned load or store per thread. */
template <typename T, int N> struct __align__(sizeof(T) * N) ck_vec { T v[N]; };
