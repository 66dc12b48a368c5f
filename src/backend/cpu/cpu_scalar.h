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

#endif
