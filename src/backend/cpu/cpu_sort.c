/* CPU sort, argsort and searchsorted.
 *
 * Every dtype is mapped to unsigned integer keys whose unsigned order is
 * NumPy's sort order (sign bit flipped for signed ints; for floats the
 * usual IEEE trick, with -0.0 folded onto +0.0 and every NaN onto the
 * largest key so NaNs go last).  Complex values take two keys (real, then
 * imaginary).  Rows are then sorted by an LSD radix sort on (key, index)
 * pairs: linear in n, stable by construction, and identical for every
 * dtype; short rows use an insertion sort, whose constant is lower.  The
 * values are finally gathered from a copy of the row through the indices,
 * so NaN payloads and signed zeros come out as they went in. */
#include "cpu_internal.h"
#include "../../runtime/parallel.h"

#include <stdlib.h>
#include <string.h>

/* Rows shorter than this are insertion-sorted. */
#define CK_SORT_SMALL 48

/* Compared as (top, hi, lo).  top and lo are 0 except for complex, whose
 * NumPy order is by class first (R+Rj, R+nanj, nan+Rj, nan+nanj), then
 * real, then imaginary part. */
typedef struct sort_key {
    uint64_t top, hi, lo;
} sort_key;

static uint64_t float_bits_key(uint64_t bits, int nbits, int is_nan)
{
    uint64_t mask = nbits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nbits) - 1);
    uint64_t sign = (uint64_t)1 << (nbits - 1);
    if (is_nan) return mask;
    if ((bits & ~sign) == 0) bits = 0;           /* -0.0 == +0.0 keeps a stable order */
    return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static uint64_t key_f16(uint16_t b) { return float_bits_key(b, 16, (b & 0x7c00) == 0x7c00 && (b & 0x3ff)); }
static uint64_t key_f32(const char *p)
{
    float f; uint32_t b;
    memcpy(&f, p, 4); memcpy(&b, p, 4);
    return float_bits_key(b, 32, f != f);
}
static uint64_t key_f64(const char *p)
{
    double f; uint64_t b;
    memcpy(&f, p, 8); memcpy(&b, p, 8);
    return float_bits_key(b, 64, f != f);
}

/* The key of one element, and the number of key bytes that matter. */
static sort_key elem_key(ck_dtype t, const char *p)
{
    sort_key k = {0, 0, 0};
    switch (t) {
    case CK_BOOL: k.hi = *(const uint8_t *)p != 0; break;
    case CK_UINT8: k.hi = *(const uint8_t *)p; break;
    case CK_INT8: k.hi = (uint8_t)(*(const uint8_t *)p ^ 0x80u); break;
    case CK_UINT16: { uint16_t v; memcpy(&v, p, 2); k.hi = v; break; }
    case CK_INT16: { uint16_t v; memcpy(&v, p, 2); k.hi = (uint16_t)(v ^ 0x8000u); break; }
    case CK_UINT32: { uint32_t v; memcpy(&v, p, 4); k.hi = v; break; }
    case CK_INT32: { uint32_t v; memcpy(&v, p, 4); k.hi = v ^ 0x80000000u; break; }
    case CK_UINT64: { uint64_t v; memcpy(&v, p, 8); k.hi = v; break; }
    case CK_INT64: { uint64_t v; memcpy(&v, p, 8); k.hi = v ^ ((uint64_t)1 << 63); break; }
    case CK_FLOAT16: { uint16_t v; memcpy(&v, p, 2); k.hi = key_f16(v); break; }
    case CK_FLOAT32: k.hi = key_f32(p); break;
    case CK_FLOAT64: k.hi = key_f64(p); break;
    case CK_COMPLEX64: case CK_COMPLEX128: {
        int w = t == CK_COMPLEX64 ? 4 : 8;
        uint64_t (*f)(const char *) = w == 4 ? key_f32 : key_f64;
        uint64_t mask = w == 8 ? ~(uint64_t)0 : 0xffffffffu;
        k.hi = f(p);
        k.lo = f(p + w);
        k.top = (uint64_t)(2 * (k.hi == mask) + (k.lo == mask));
        break;
    }
    default: break;
    }
    return k;
}

static int key_bytes(ck_dtype t)
{
    int isz = ck_dtype_get_info(t)->itemsize;
    return ck_dtype_is_complex(t) ? isz / 2 : isz;
}

static inline int key_less(sort_key a, sort_key b)
{
    if (a.top != b.top) return a.top < b.top;
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static inline int key_cmp(sort_key a, sort_key b)
{
    if (a.top != b.top) return a.top < b.top ? -1 : 1;
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}

typedef struct sort_ctx {
    const ck_sort_desc *d;
    int kbytes, complex_keys, isz;
    ck_status status;
} sort_ctx;

/* One radix pass over byte `shift/8` of word `w` (0: lo, 1: hi, 2: top); returns
 * 0 when every element has the same byte there (the pass is skipped). */
static int radix_pass(int64_t n, sort_key *k, int64_t *ix, sort_key *k2, int64_t *ix2, int w, int shift)
{
    int64_t count[256] = {0};
    for (int64_t i = 0; i < n; i++) count[((w == 2 ? k[i].top : w ? k[i].hi : k[i].lo) >> shift) & 0xff]++;
    for (int b = 0; b < 256; b++)
        if (count[b] == n) return 0;
    int64_t sum = 0;
    for (int b = 0; b < 256; b++) { int64_t c = count[b]; count[b] = sum; sum += c; }
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = count[((w == 2 ? k[i].top : w ? k[i].hi : k[i].lo) >> shift) & 0xff]++;
        k2[pos] = k[i];
        ix2[pos] = ix[i];
    }
    return 1;
}

static void sort_rows(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    sort_ctx *c = vctx;
    const ck_sort_desc *d = c->d;
    int64_t n = d->len;
    sort_key *k = malloc((size_t)n * 2 * sizeof *k);
    int64_t *ix = malloc((size_t)n * 2 * sizeof *ix);
    char *copy = d->sort_values ? malloc((size_t)n * (size_t)c->isz) : NULL;
    if (!k || !ix || (d->sort_values && !copy)) {
        free(k); free(ix); free(copy);
        c->status = CK_ERR_MEMORY;   /* racy but every writer writes the same value */
        return;
    }
    uint64_t mask = c->kbytes == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * c->kbytes)) - 1);
    for (int64_t r = begin; r < end; r++) {
        char *row = d->data + r * d->row_stride;
        for (int64_t i = 0; i < n; i++) {
            k[i] = elem_key(d->type, row + i * d->elem_stride);
            if (d->descending) {
                k[i].hi ^= mask;
                if (c->complex_keys) { k[i].lo ^= mask; k[i].top ^= 3; }
            }
            ix[i] = i;
        }
        sort_key *kk = k;
        int64_t *ii = ix;
        if (n < CK_SORT_SMALL) {
            for (int64_t i = 1; i < n; i++) {
                sort_key kv = k[i];
                int64_t iv = ix[i], j = i;
                for (; j > 0 && key_less(kv, k[j - 1]); j--) { k[j] = k[j - 1]; ix[j] = ix[j - 1]; }
                k[j] = kv;
                ix[j] = iv;
            }
        } else {
            sort_key *ko = k + n;
            int64_t *io = ix + n;
            for (int w = c->complex_keys ? 0 : 1; w < (c->complex_keys ? 3 : 2); w++)
                for (int b = 0; b < (w == 2 ? 1 : c->kbytes); b++)
                    if (radix_pass(n, kk, ii, ko, io, w, 8 * b)) {
                        sort_key *tk = kk; kk = ko; ko = tk;
                        int64_t *ti = ii; ii = io; io = ti;
                    }
        }
        if (d->idx) {
            int64_t *orow = d->idx + r * d->idx_row_stride;
            for (int64_t i = 0; i < n; i++) orow[i * d->idx_elem_stride] = ii[i];
        }
        if (d->sort_values) {
            for (int64_t i = 0; i < n; i++) memcpy(copy + i * c->isz, row + i * d->elem_stride, (size_t)c->isz);
            for (int64_t i = 0; i < n; i++) memcpy(row + i * d->elem_stride, copy + ii[i] * c->isz, (size_t)c->isz);
        }
    }
    free(k); free(ix); free(copy);
}

ck_status ck_cpu_sort(const ck_sort_desc *d)
{
    if (d->nrows <= 0 || d->len <= 0) return CK_OK;
    if (d->src) memcpy(d->data, d->src, (size_t)(d->nrows * d->len) * (size_t)ck_dtype_get_info(d->type)->itemsize);
    sort_ctx c = {d, key_bytes(d->type), ck_dtype_is_complex(d->type), ck_dtype_get_info(d->type)->itemsize, CK_OK};
    /* rows of a few thousand elements each are worth a thread */
    int64_t grain = d->len >= 4096 ? 1 : 4096 / d->len;
    ck_parallel_for(d->nrows, grain, sort_rows, &c);
    if (c.status != CK_OK) return ck_error_set(CK_ERR_MEMORY, "out of memory sorting rows of %lld elements", (long long)d->len);
    return CK_OK;
}

typedef struct search_ctx {
    const ck_searchsorted_desc *d;
    int isz;
} search_ctx;

static void search_range(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const search_ctx *c = vctx;
    const ck_searchsorted_desc *d = c->d;
    for (int64_t i = begin; i < end; i++) {
        sort_key v = elem_key(d->type, d->v + i * c->isz);
        int64_t lo = 0, hi = d->na;
        /* left: first a[j] >= v; right: first a[j] > v */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            int cmp = key_cmp(elem_key(d->type, d->a + mid * c->isz), v);
            if (cmp < 0 || (d->side_right && cmp == 0)) lo = mid + 1;
            else hi = mid;
        }
        d->out[i] = lo;
    }
}

ck_status ck_cpu_searchsorted(const ck_searchsorted_desc *d)
{
    search_ctx c = {d, ck_dtype_get_info(d->type)->itemsize};
    ck_parallel_for(d->nv, 4096, search_range, &c);
    return CK_OK;
}
