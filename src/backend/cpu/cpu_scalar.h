/*
 * cpu_scalar.h - the C environment of src/ops/scalar_ops.h for the CPU
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

static inline float ck_f32_from_bits_(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
#define CK_F32_FROM_BITS(u) ck_f32_from_bits_(u)

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

#include "../../ops/scalar_ops.h"

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
#define CK_X_TANH_COMPLEX64(a) tanh(a)
#define CK_X_TANH_COMPLEX128(a) tanh(a)

#endif
