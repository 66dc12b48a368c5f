/* dtypes, NumPy 2 promotion (NEP 50) and casting rules, scalar conversion. */
#include "cudakit.h"

#include <stdlib.h>
#include <string.h>

/* NumPy's kind character of each kind letter */
enum {
#define CK_KIND_CHAR_(K, KIND, kchar) CK_KIND_CHAR_##K = kchar,
    CK_KINDS(CK_KIND_CHAR_)
#undef CK_KIND_CHAR_
};

static const ck_dtype_info ck_dtype_infos_[CK_NTYPES] = {
#define CK_DTYPE_INFO_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    [CK_##ID] = {#name, CK_KIND_CHAR_##K, tchar, fmt, size, CK_KIND_##K},
    CK_DTYPES(CK_DTYPE_INFO_, _)
#undef CK_DTYPE_INFO_
};
/* NumPy's type numbers, which order the promotion of a sequence */
static const int ck_numpy_num_[CK_NTYPES] = {
#define CK_NUMPY_NUM_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = npnum,
    CK_DTYPES(CK_NUMPY_NUM_, _)
#undef CK_NUMPY_NUM_
};

#define CK_DTYPE_SIZE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    _Static_assert(sizeof(S) == size && sizeof(U) == sizeof(R), #name ": its C types and itemsize disagree");
CK_DTYPES(CK_DTYPE_SIZE_, _)
#undef CK_DTYPE_SIZE_

/* The predicates of cudakit.h (ck_dtype_is_float...) go by ranges of the
 * enum: every row must be where they expect its kind. */
#define CK_DTYPE_RANGES_(A, ID, name, K, ...)                                                                 \
    _Static_assert((CK_##ID >= CK_INT8 && CK_##ID <= CK_UINT64) == CK_KIND_PICK_##K(0, 1, 1, 0, 0) &&          \
                       (CK_##ID >= CK_FLOAT16 && CK_##ID <= CK_FLOAT64) == CK_KIND_PICK_##K(0, 0, 0, 1, 0) &&  \
                       (CK_##ID == CK_COMPLEX64 || CK_##ID == CK_COMPLEX128) == CK_KIND_PICK_##K(0, 0, 0, 0, 1) && \
                       (CK_##ID == CK_INT8 || CK_##ID == CK_INT16 || CK_##ID == CK_INT32 || CK_##ID == CK_INT64 || \
                        CK_##ID >= CK_FLOAT16) == CK_KIND_PICK_##K(0, 1, 0, 1, 1),                              \
                   #name ": the dtype predicates of cudakit.h do not know its kind");
CK_DTYPES(CK_DTYPE_RANGES_, _)
#undef CK_DTYPE_RANGES_

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

/* NumPy's promotion of a sequence of dtypes (PyArray_PromoteDTypeSequence)
 * is not a left fold: result_type(int8, uint8, float16) is float16 although
 * (int8 + uint8) + float16 is float32.  Each dtype "knows" the dtypes of
 * lower NumPy type number (float16's is the largest); the most knowing one
 * is found by pairing, then promotes the rest. */
#define CK_NOT_IMPL_ ((ck_dtype)-2)

static ck_dtype common_slot(ck_dtype a, ck_dtype b)
{
    if (ck_numpy_num_[b] > ck_numpy_num_[a]) return CK_NOT_IMPL_;
    return ck_dtype_promote(a, b);
}

static ck_dtype common_dtype(ck_dtype a, ck_dtype b)
{
    if (a == b) return a;
    ck_dtype r = common_slot(a, b);
    return r == CK_NOT_IMPL_ ? common_slot(b, a) : r;
}

static ck_dtype reduce_most_knowing(int length, ck_dtype *d)
{
    int half = length / 2;
    ck_dtype res = CK_NOT_IMPL_;
    for (int low = 0; low < half; low++) {
        int high = length - 1 - low;
        res = d[high] == d[low] ? d[low] : common_slot(d[low], d[high]);
        if (res == CK_NOT_IMPL_) {
            ck_dtype t = d[low];
            d[low] = d[high];
            d[high] = t;
        } else if (res == d[low]) {
            d[high] = CK_DTYPE_INVALID;   /* cannot change the result */
        }
    }
    if (length == 2) return res;
    return reduce_most_knowing(length - half, d);
}

static ck_dtype promote_sequence(int n, ck_dtype *d)
{
    if (n == 1) return d[0];
    ck_dtype result = reduce_most_knowing(n, d);
    ck_dtype main_t = d[0];
    int start = 2;
    if (result == CK_NOT_IMPL_) {
        result = CK_DTYPE_INVALID;
        start = 1;
    }
    for (int i = start; i < n; i++) {
        if (d[i] == CK_DTYPE_INVALID) continue;
        ck_dtype p = common_slot(main_t, d[i]);
        if (p == CK_NOT_IMPL_) p = common_dtype(main_t, d[i]);
        result = result == CK_DTYPE_INVALID ? p : common_dtype(result, p);
    }
    return result;
}

ck_dtype ck_dtype_promote_many(int n, const ck_dtype *types)
{
    ck_dtype small[64], *buf = n <= 64 ? small : malloc((size_t)n * sizeof *buf);
    if (n <= 0) return CK_DTYPE_INVALID;
    if (n <= 2 || !buf) {   /* (no memory for a long list: the pairwise fold) */
        ck_dtype r = types[0];
        for (int i = 1; i < n; i++) r = ck_dtype_promote(r, types[i]);
        return r;
    }
    memcpy(buf, types, (size_t)n * sizeof *buf);
    ck_dtype r = promote_sequence(n, buf);
    if (buf != small) free(buf);
    return r;
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

static const char *const casting_names_[] = {"no", "equiv", "safe", "same_kind", "unsafe"};

int ck_dtype_can_cast(ck_dtype from, ck_dtype to, ck_casting casting)
{
    switch (casting) {
    case CK_CASTING_NO:
    case CK_CASTING_EQUIV: return from == to;
    case CK_CASTING_SAFE: return ck_dtype_can_cast_safe(from, to);
    case CK_CASTING_SAME_KIND: return ck_dtype_can_cast_same_kind(from, to);
    case CK_CASTING_UNSAFE: return 1;
    }
    return 0;
}

const char *ck_casting_name(ck_casting casting)
{
    return (unsigned)casting <= CK_CASTING_UNSAFE ? casting_names_[casting] : "?";
}

int ck_casting_from_name(const char *name)
{
    for (int c = 0; c <= CK_CASTING_UNSAFE; c++)
        if (!strcmp(name, casting_names_[c])) return c;
    return -1;
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
        else if (re != re || re >= 9223372036854775808.0 || re < -9223372036854775808.0) \
            r = (CT)(uint64_t)(int64_t)INT64_MIN; /* NaN too: as the cast loops (ck_f2i64) and NumPy */ \
        else r = (CT)(int64_t)re; \
        memcpy(dst, &r, sizeof r); } while (0)
#define CK_STORE_B_(S, C, R) { uint8_t r = is_int ? iv != 0 : is_uint ? uv != 0 : (re != 0 || im != 0); memcpy(dst, &r, 1); }
#define CK_STORE_I_(S, C, R) CK_STORE_INT_(S);
/* uint64 also holds the floats past int64's range */
#define CK_STORE_U_(S, C, R)                                                                  \
    if (sizeof(S) == 8 && !is_int && !is_uint && re >= 9223372036854775808.0 && re < 18446744073709551616.0) { \
        S r = (S)re; memcpy(dst, &r, sizeof r);                                               \
    } else CK_STORE_INT_(S);
#define CK_STORE_F_(S, C, R) { S r = is_int ? (S)(C)iv : (S)(C)re; memcpy(dst, &r, sizeof r); }
#define CK_STORE_C_(S, C, R) { R r[2] = {is_int ? (R)iv : (R)re, (R)im}; memcpy(dst, r, sizeof r); }
#define CK_STORE_CASE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    case CK_##ID: CK_STORE_##K##_(S, C, R) break;
    switch (t) {
    CK_DTYPES(CK_STORE_CASE_, _)
    default: break;
    }
#undef CK_STORE_CASE_
#undef CK_STORE_B_
#undef CK_STORE_I_
#undef CK_STORE_U_
#undef CK_STORE_F_
#undef CK_STORE_C_
#undef CK_STORE_INT_
}

void ck_scalar_load(ck_scalar *s, ck_dtype t, const void *src)
{
    s->dtype = t;
#define CK_LOAD_B_(S, R) { uint8_t v; memcpy(&v, src, 1); s->v.i = v != 0; }
#define CK_LOAD_I_(S, R) { S v; memcpy(&v, src, sizeof v); s->v.i = v; }
#define CK_LOAD_U_(S, R) { S v; memcpy(&v, src, sizeof v); s->v.u = v; }
#define CK_LOAD_F_(S, R) { S v; memcpy(&v, src, sizeof v); s->v.f = (double)v; }
#define CK_LOAD_C_(S, R) { R v[2]; memcpy(v, src, sizeof v); s->v.c.re = v[0]; s->v.c.im = v[1]; }
#define CK_LOAD_CASE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    case CK_##ID: CK_LOAD_##K##_(S, R) break;
    switch (t) {
    CK_DTYPES(CK_LOAD_CASE_, _)
    default: break;
    }
#undef CK_LOAD_CASE_
#undef CK_LOAD_B_
#undef CK_LOAD_I_
#undef CK_LOAD_U_
#undef CK_LOAD_F_
#undef CK_LOAD_C_
}
