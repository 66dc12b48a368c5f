/* dtypes, NumPy 2 promotion (NEP 50) and casting rules, scalar conversion. */
#include "cudakit.h"

#include <string.h>

static const ck_dtype_info ck_dtype_infos_[CK_NTYPES] = {
    [CK_BOOL]       = {"bool",       'b', '?', "?",  1, CK_KIND_BOOL},
    [CK_INT8]       = {"int8",       'i', 'b', "b",  1, CK_KIND_INT},
    [CK_UINT8]      = {"uint8",      'u', 'B', "B",  1, CK_KIND_UINT},
    [CK_INT16]      = {"int16",      'i', 'h', "h",  2, CK_KIND_INT},
    [CK_UINT16]     = {"uint16",     'u', 'H', "H",  2, CK_KIND_UINT},
    [CK_INT32]      = {"int32",      'i', 'i', "i",  4, CK_KIND_INT},
    [CK_UINT32]     = {"uint32",     'u', 'I', "I",  4, CK_KIND_UINT},
    [CK_INT64]      = {"int64",      'i', 'l', "q",  8, CK_KIND_INT},
    [CK_UINT64]     = {"uint64",     'u', 'L', "Q",  8, CK_KIND_UINT},
    [CK_FLOAT16]    = {"float16",    'f', 'e', "e",  2, CK_KIND_FLOAT},
    [CK_FLOAT32]    = {"float32",    'f', 'f', "f",  4, CK_KIND_FLOAT},
    [CK_FLOAT64]    = {"float64",    'f', 'd', "d",  8, CK_KIND_FLOAT},
    [CK_COMPLEX64]  = {"complex64",  'c', 'F', "Zf", 8, CK_KIND_COMPLEX},
    [CK_COMPLEX128] = {"complex128", 'c', 'D', "Zd", 16, CK_KIND_COMPLEX},
};

const ck_dtype_info *ck_dtype_get_info(ck_dtype t) { return &ck_dtype_infos_[t]; }

ck_dtype ck_dtype_from_name(const char *name)
{
    for (int t = 0; t < CK_NTYPES; t++)
        if (strcmp(name, ck_dtype_infos_[t].name) == 0)
            return (ck_dtype)t;
    return CK_DTYPE_INVALID;
}

ck_dtype ck_dtype_real(ck_dtype t)
{
    if (t == CK_COMPLEX64) return CK_FLOAT32;
    if (t == CK_COMPLEX128) return CK_FLOAT64;
    return t;
}

ck_dtype ck_dtype_complex_of(ck_dtype real)
{
    return real == CK_FLOAT64 ? CK_COMPLEX128 : CK_COMPLEX64;
}

static ck_dtype int_of(int size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? CK_INT8 : CK_UINT8;
    case 2: return is_signed ? CK_INT16 : CK_UINT16;
    case 4: return is_signed ? CK_INT32 : CK_UINT32;
    default: return is_signed ? CK_INT64 : CK_UINT64;
    }
}

static ck_dtype float_of(int size)
{
    return size <= 2 ? CK_FLOAT16 : size == 4 ? CK_FLOAT32 : CK_FLOAT64;
}

/* The smallest float that holds every value of an integer of this size. */
static int float_size_for_int(int size) { return size == 1 ? 2 : size == 2 ? 4 : 8; }

static ck_dtype promote_(ck_dtype a, ck_dtype b)
{
    const ck_dtype_info *ia = &ck_dtype_infos_[a], *ib = &ck_dtype_infos_[b];
    if (a == b) return a;
    if (ia->kind > ib->kind || (ia->kind == ib->kind && ia->itemsize < ib->itemsize)) {
        const ck_dtype_info *ti = ia; ia = ib; ib = ti;
        ck_dtype t = a; a = b; b = t;
    }
    /* now kind(a) <= kind(b) (BOOL < INT < UINT < FLOAT < COMPLEX) */
    switch (ib->kind) {
    case CK_KIND_BOOL:
        return a;
    case CK_KIND_INT:
        if (ia->kind == CK_KIND_BOOL) return b;
        return int_of(ia->itemsize > ib->itemsize ? ia->itemsize : ib->itemsize, 1);
    case CK_KIND_UINT:
        if (ia->kind == CK_KIND_BOOL) return b;
        if (ia->kind == CK_KIND_UINT)
            return int_of(ia->itemsize > ib->itemsize ? ia->itemsize : ib->itemsize, 0);
        /* signed a with unsigned b */
        if (ia->itemsize > ib->itemsize) return a;
        if (ib->itemsize < 8) return int_of(ib->itemsize * 2, 1);
        return CK_FLOAT64;
    case CK_KIND_FLOAT: {
        if (ia->kind == CK_KIND_BOOL) return b;
        int fs = ia->kind == CK_KIND_FLOAT ? ia->itemsize : float_size_for_int(ia->itemsize);
        return float_of(fs > ib->itemsize ? fs : ib->itemsize);
    }
    case CK_KIND_COMPLEX: {
        if (ia->kind == CK_KIND_BOOL) return b;
        int fs = ia->kind == CK_KIND_COMPLEX ? ia->itemsize / 2
               : ia->kind == CK_KIND_FLOAT ? ia->itemsize : float_size_for_int(ia->itemsize);
        int cs = ib->itemsize / 2;
        return (fs > cs ? fs : cs) == 8 ? CK_COMPLEX128 : CK_COMPLEX64;
    }
    }
    return b;
}

static ck_dtype ck_promo_table_[CK_NTYPES][CK_NTYPES];
static int ck_promo_ready_;

static void promo_init(void)
{
    for (int a = 0; a < CK_NTYPES; a++)
        for (int b = 0; b < CK_NTYPES; b++)
            ck_promo_table_[a][b] = promote_((ck_dtype)a, (ck_dtype)b);
    ck_promo_ready_ = 1;
}

ck_dtype ck_dtype_promote(ck_dtype a, ck_dtype b)
{
    if (!ck_promo_ready_) promo_init();  /* idempotent: a race writes the same values */
    return ck_promo_table_[a][b];
}

int ck_dtype_can_cast_safe(ck_dtype from, ck_dtype to)
{
    return ck_dtype_promote(from, to) == to;
}

int ck_dtype_can_cast_same_kind(ck_dtype from, ck_dtype to)
{
    if (ck_dtype_can_cast_safe(from, to)) return 1;
    ck_kind kf = ck_dtype_infos_[from].kind, kt = ck_dtype_infos_[to].kind;
    /* int -> uint is not same_kind; uint -> int is (like NumPy) */
    if (kf == CK_KIND_INT && kt == CK_KIND_UINT) return 0;
    if (kf == CK_KIND_UINT && kt == CK_KIND_INT) return 1;
    return kf <= kt;
}

/* ------------------------------------------------------------- scalars */

void ck_scalar_store(const ck_scalar *s, ck_dtype t, void *dst)
{
    const ck_dtype_info *si = &ck_dtype_infos_[s->dtype];
    double re = 0, im = 0;
    int64_t iv = 0;
    uint64_t uv = 0;
    int is_int = 0, is_uint = 0;
    switch (si->kind) {
    case CK_KIND_BOOL:
    case CK_KIND_INT: iv = s->v.i; re = (double)iv; is_int = 1; break;
    case CK_KIND_UINT: uv = s->v.u; re = (double)uv; is_uint = 1; break;
    case CK_KIND_FLOAT: re = s->v.f; break;
    case CK_KIND_COMPLEX: re = s->v.c.re; im = s->v.c.im; break;
    }
#define CK_STORE_INT_(CT) do { CT r; \
        if (is_int) r = (CT)(uint64_t)iv; else if (is_uint) r = (CT)uv; \
        else if (re != re) r = 0; \
        else if (re >= 9223372036854775808.0 || re < -9223372036854775808.0) r = (CT)(uint64_t)(int64_t)INT64_MIN; \
        else r = (CT)(int64_t)re; \
        memcpy(dst, &r, sizeof r); } while (0)
    switch (t) {
    case CK_BOOL: { uint8_t r = is_int ? iv != 0 : is_uint ? uv != 0 : (re != 0 || im != 0); memcpy(dst, &r, 1); break; }
    case CK_INT8: CK_STORE_INT_(int8_t); break;
    case CK_UINT8: CK_STORE_INT_(uint8_t); break;
    case CK_INT16: CK_STORE_INT_(int16_t); break;
    case CK_UINT16: CK_STORE_INT_(uint16_t); break;
    case CK_INT32: CK_STORE_INT_(int32_t); break;
    case CK_UINT32: CK_STORE_INT_(uint32_t); break;
    case CK_INT64: CK_STORE_INT_(int64_t); break;
    case CK_UINT64:
        if (!is_int && !is_uint && re >= 9223372036854775808.0 && re < 18446744073709551616.0) {
            uint64_t r = (uint64_t)re; memcpy(dst, &r, 8);
        } else CK_STORE_INT_(uint64_t);
        break;
    case CK_FLOAT16: { _Float16 r = (_Float16)(float)re; if (is_int) r = (_Float16)(float)iv; memcpy(dst, &r, 2); break; }
    case CK_FLOAT32: { float r = is_int ? (float)iv : (float)re; memcpy(dst, &r, 4); break; }
    case CK_FLOAT64: { double r = is_int ? (double)iv : re; memcpy(dst, &r, 8); break; }
    case CK_COMPLEX64: { float r[2] = {is_int ? (float)iv : (float)re, (float)im}; memcpy(dst, r, 8); break; }
    case CK_COMPLEX128: { double r[2] = {is_int ? (double)iv : re, im}; memcpy(dst, r, 16); break; }
    default: break;
    }
#undef CK_STORE_INT_
}

void ck_scalar_load(ck_scalar *s, ck_dtype t, const void *src)
{
    s->dtype = t;
    switch (t) {
    case CK_BOOL: { uint8_t v; memcpy(&v, src, 1); s->v.i = v != 0; break; }
    case CK_INT8: { int8_t v; memcpy(&v, src, 1); s->v.i = v; break; }
    case CK_UINT8: { uint8_t v; memcpy(&v, src, 1); s->v.u = v; break; }
    case CK_INT16: { int16_t v; memcpy(&v, src, 2); s->v.i = v; break; }
    case CK_UINT16: { uint16_t v; memcpy(&v, src, 2); s->v.u = v; break; }
    case CK_INT32: { int32_t v; memcpy(&v, src, 4); s->v.i = v; break; }
    case CK_UINT32: { uint32_t v; memcpy(&v, src, 4); s->v.u = v; break; }
    case CK_INT64: { int64_t v; memcpy(&v, src, 8); s->v.i = v; break; }
    case CK_UINT64: { uint64_t v; memcpy(&v, src, 8); s->v.u = v; break; }
    case CK_FLOAT16: { _Float16 v; memcpy(&v, src, 2); s->v.f = (double)v; break; }
    case CK_FLOAT32: { float v; memcpy(&v, src, 4); s->v.f = v; break; }
    case CK_FLOAT64: { double v; memcpy(&v, src, 8); s->v.f = v; break; }
    case CK_COMPLEX64: { float v[2]; memcpy(v, src, 8); s->v.c.re = v[0]; s->v.c.im = v[1]; break; }
    case CK_COMPLEX128: { double v[2]; memcpy(v, src, 16); s->v.c.re = v[0]; s->v.c.im = v[1]; break; }
    default: break;
    }
}
