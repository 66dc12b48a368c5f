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
 * so NaN payloads and signed zeros come out as they went in.  Three
 * forms, one order:
 *  - a sort for the values only (no indices, not complex) radix-sorts the
 *    elements themselves, keyed on the fly (raw_sort);
 *  - the order of other non-complex rows sorts (key as wide as the
 *    element, 32-bit element number) pairs (key_order);
 *  - complex rows, and rows past 2^32 elements, sort (top, hi, lo) keys
 *    with 64-bit element numbers (sort_rows).
 * The first two count every digit in one read and skip the digits all
 * keys share; all three insertion-sort rows shorter than CK_SORT_SMALL. */
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

/* The keys of one value of each kind, on its bits v (an unsigned U as wide
 * as the value): the sign bit flipped for signed ints; floats by
 * float_bits_key, NaN being any value above the infinity's bits. */
#define CK_RAWKEY_UNSIGNED(U, v) ((U)(v))
#define CK_RAWKEY_SIGNED(U, v) ((U)((v) ^ ((U)1 << (8 * sizeof(U) - 1))))
#define CK_RAWKEY_BOOL(U, v) ((U)((v) != 0))
#define CK_FLOAT_INF_BITS_(U) (sizeof(U) == 2 ? 0x7c00u : sizeof(U) == 4 ? 0x7f800000u : 0x7ff0000000000000ull)
#define CK_RAWKEY_FLOAT(U, v)                                                                       \
    ((U)float_bits_key((uint64_t)(v), 8 * (int)sizeof(U), ((v) & (U) ~((U)1 << (8 * sizeof(U) - 1))) > (U)CK_FLOAT_INF_BITS_(U)))
#define CK_RAWKEY_OF_(K) CK_KIND_PICK_##K(CK_RAWKEY_BOOL, CK_RAWKEY_SIGNED, CK_RAWKEY_UNSIGNED, CK_RAWKEY_FLOAT, CK_RAWKEY_FLOAT)

/* The key of one element.  A complex value keys its parts as floats, and
 * its class on top: which parts are NaN (NaN's key is all ones). */
static sort_key elem_key(ck_dtype t, const char *p)
{
    sort_key k = {0, 0, 0};
#define CK_ELEM_KEY_REAL_(U, KEY) { U v; memcpy(&v, p, sizeof v); k.hi = KEY(U, v); }
#define CK_ELEM_KEY_COMPLEX_(U, KEY)                                                                \
    { U v[2]; memcpy(v, p, sizeof v); k.hi = KEY(U, v[0]); k.lo = KEY(U, v[1]);                      \
      k.top = (uint64_t)(2 * (k.hi == (U)~(U)0) + (k.lo == (U)~(U)0)); }
#define CK_ELEM_KEY_CASE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc)       \
    case CK_##ID: CK_KIND_PICK_##K(CK_ELEM_KEY_REAL_, CK_ELEM_KEY_REAL_, CK_ELEM_KEY_REAL_, CK_ELEM_KEY_REAL_, \
                                   CK_ELEM_KEY_COMPLEX_)(U, CK_RAWKEY_OF_(K)) break;
    switch (t) {
    CK_DTYPES(CK_ELEM_KEY_CASE_, _)
    default: break;
    }
#undef CK_ELEM_KEY_CASE_
#undef CK_ELEM_KEY_COMPLEX_
#undef CK_ELEM_KEY_REAL_
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

/* A radix pass's digit counts (of n keys) turned into where each digit's
 * run starts; 0 when one digit has them all (the pass moves nothing). */
static int digit_starts(int64_t *count, int64_t n)
{
    for (int d = 0; d < 256; d++)
        if (count[d] == n) return 0;
    int64_t sum = 0;
    for (int d = 0; d < 256; d++) { const int64_t c = count[d]; count[d] = sum; sum += c; }
    return 1;
}

/* One radix pass over byte `shift/8` of word `w` (0: lo, 1: hi, 2: top); returns
 * 0 when every element has the same byte there (the pass is skipped). */
static int radix_pass(int64_t n, sort_key *k, int64_t *ix, sort_key *k2, int64_t *ix2, int w, int shift)
{
    int64_t count[256] = {0};
    for (int64_t i = 0; i < n; i++) count[((w == 2 ? k[i].top : w ? k[i].hi : k[i].lo) >> shift) & 0xff]++;
    if (!digit_starts(count, n)) return 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t pos = count[((w == 2 ? k[i].top : w ? k[i].hi : k[i].lo) >> shift) & 0xff]++;
        k2[pos] = k[i];
        ix2[pos] = ix[i];
    }
    return 1;
}

/* The dtypes of raw_sort and key_order, every one but complex:
 * M(NAME, dtype, raw word, key) */
#define CK_RAW_ROW_(M, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_KIND_PICK_##K(CK_RAW_ROW1_, CK_RAW_ROW1_, CK_RAW_ROW1_, CK_RAW_ROW1_, CK_RAW_NONE_)(M, ID, U, CK_RAWKEY_OF_(K))
#define CK_RAW_ROW1_(M, ID, U, KEY) M(ID, CK_##ID, U, KEY)
#define CK_RAW_NONE_(M, ID, U, KEY)
#define CK_RAW_DTYPES(M) CK_DTYPES(CK_RAW_ROW_, M)

/* A row sorted for its values only (no indices wanted, not complex): an
 * LSD radix sort of the raw elements themselves, each pass keying them on
 * the fly (elem_key's order on the bits, xor'ed with all ones for
 * descending), after one read that counts every digit of every key.
 * Elements move as their bits, so NaN payloads and signed zeros come out
 * as they went in, in the same stable order as the (key, index) sort. */
#define CK_GEN_RAW_SORT(NAME, T, U, KEY)                                                               \
    static void raw_sort_##NAME(U *x, U *tmp, int64_t n, int desc)                                  \
    {                                                                                               \
        enum { NB = (int)sizeof(U) };                                                               \
        const U flip = desc ? (U) ~(U)0 : (U)0;                                                     \
        if (n < CK_SORT_SMALL) {   /* short rows: an insertion sort, keyed as it goes */           \
            for (int64_t i = 1; i < n; i++) {                                                       \
                const U v = x[i], kv = (U)(KEY(U, v) ^ flip);                                       \
                int64_t j = i;                                                                      \
                for (; j > 0 && kv < (U)(KEY(U, x[j - 1]) ^ flip); j--) x[j] = x[j - 1];            \
                x[j] = v;                                                                           \
            }                                                                                       \
            return;                                                                                 \
        }                                                                                           \
        int64_t cnt[NB][256];                                                                       \
        memset(cnt, 0, sizeof cnt);                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                           \
            const U k = (U)(KEY(U, x[i]) ^ flip);                                                   \
            for (int b = 0; b < NB; b++) cnt[b][(k >> (8 * b)) & 255]++;                            \
        }                                                                                           \
        U *src = x, *dst = tmp;                                                                     \
        for (int b = 0; b < NB; b++) {                                                              \
            int64_t *c = cnt[b];                                                                    \
            if (!digit_starts(c, n)) continue;   /* every key has this digit: nothing moves */     \
            for (int64_t i = 0; i < n; i++) {                                                       \
                const U v = src[i], k = (U)(KEY(U, v) ^ flip);                                      \
                dst[c[(k >> (8 * b)) & 255]++] = v;                                                 \
            }                                                                                       \
            U *t = src; src = dst; dst = t;                                                         \
        }                                                                                           \
        if (src != x) memcpy(x, src, (size_t)n * sizeof(U));                                        \
    }

CK_RAW_DTYPES(CK_GEN_RAW_SORT)

/* A row's order (argsort) for a non-complex dtype: an LSD radix sort of
 * (key, 32-bit element number) pairs, the key as wide as the element
 * (elem_key's order, xor'ed with all ones for descending), every digit
 * counted in one read, shared digits skipped.  buf holds 2n keys and 2n
 * numbers; returns the sorted numbers (in buf). */
#define CK_GEN_KEY_ORDER(NAME, T, U, KEY)                                                              \
    static uint32_t *key_order_##NAME(const char *row, int64_t es, int64_t n, int desc, void *buf)  \
    {                                                                                               \
        enum { NB = (int)sizeof(U) };                                                               \
        const U flip = desc ? (U) ~(U)0 : (U)0;                                                     \
        U *k = (U *)buf, *k2 = k + n;                                                               \
        uint32_t *ix = (uint32_t *)(k2 + n), *ix2 = ix + n;                                         \
        if (n < CK_SORT_SMALL) {   /* short rows: an insertion sort of the pairs */                \
            for (int64_t i = 0; i < n; i++) {                                                       \
                U v;                                                                                \
                memcpy(&v, row + i * es, sizeof v);                                                 \
                const U kv = (U)(KEY(U, v) ^ flip);                                                 \
                int64_t j = i;                                                                      \
                for (; j > 0 && kv < k[j - 1]; j--) { k[j] = k[j - 1]; ix[j] = ix[j - 1]; }         \
                k[j] = kv;                                                                          \
                ix[j] = (uint32_t)i;                                                                \
            }                                                                                       \
            return ix;                                                                              \
        }                                                                                           \
        int64_t cnt[NB][256];                                                                       \
        memset(cnt, 0, sizeof cnt);                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                           \
            U v;                                                                                    \
            memcpy(&v, row + i * es, sizeof v);                                                     \
            const U key = (U)(KEY(U, v) ^ flip);                                                    \
            k[i] = key;                                                                             \
            ix[i] = (uint32_t)i;                                                                    \
            for (int b = 0; b < NB; b++) cnt[b][(key >> (8 * b)) & 255]++;                          \
        }                                                                                           \
        for (int b = 0; b < NB; b++) {                                                              \
            int64_t *c = cnt[b];                                                                    \
            if (!digit_starts(c, n)) continue;   /* every key has this digit: nothing moves */     \
            for (int64_t i = 0; i < n; i++) {                                                       \
                const int64_t at = c[(k[i] >> (8 * b)) & 255]++;                                    \
                k2[at] = k[i];                                                                      \
                ix2[at] = ix[i];                                                                    \
            }                                                                                       \
            U *tk = k; k = k2; k2 = tk;                                                             \
            uint32_t *ti = ix; ix = ix2; ix2 = ti;                                                  \
        }                                                                                           \
        return ix;                                                                                  \
    }

CK_RAW_DTYPES(CK_GEN_KEY_ORDER)

static uint32_t *key_order(ck_dtype t, const char *row, int64_t es, int64_t n, int desc, void *buf)
{
#define CK_KEY_ORDER_CASE_(NAME, T, U, KEY) case T: return key_order_##NAME(row, es, n, desc, buf);
    switch (t) {
    CK_RAW_DTYPES(CK_KEY_ORDER_CASE_)
    default: return NULL;
    }
#undef CK_KEY_ORDER_CASE_
}

/* The row x (n contiguous elements of t) sorted in place through tmp (as
 * many bytes); 0 for a dtype this path does not take. */
static int raw_sort(ck_dtype t, void *x, void *tmp, int64_t n, int desc)
{
#define CK_RAW_SORT_CASE_(NAME, T, U, KEY) case T: raw_sort_##NAME(x, tmp, n, desc); return 1;
    switch (t) {
    CK_RAW_DTYPES(CK_RAW_SORT_CASE_)
    default: return 0;
    }
#undef CK_RAW_SORT_CASE_
}

/* Rows sorted for their values only, by raw_sort: each row gathered into
 * a contiguous buffer unless it is one. */
static void sort_rows_raw(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    sort_ctx *c = vctx;
    const ck_sort_desc *d = c->d;
    const int64_t n = d->len, isz = c->isz;
    const int contig = d->elem_stride == isz;
    char *buf = malloc((size_t)n * (size_t)isz * (contig ? 1 : 2));
    if (!buf) {
        c->status = CK_ERR_MEMORY;   /* racy but every writer writes the same value */
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        char *row = d->data + r * d->row_stride;
        if (contig) {
            raw_sort(d->type, row, buf, n, d->descending);
            continue;
        }
        char *x = buf + n * isz;
        for (int64_t i = 0; i < n; i++) memcpy(x + i * isz, row + i * d->elem_stride, (size_t)isz);
        raw_sort(d->type, x, buf, n, d->descending);
        for (int64_t i = 0; i < n; i++) memcpy(row + i * d->elem_stride, x + i * isz, (size_t)isz);
    }
    free(buf);
}

/* Row r's outputs from its order (element numbers: 32-bit fi or 64-bit
 * ii): the indices, and the values gathered through a copy of the row. */
static void emit_row(const ck_sort_desc *d, int64_t isz, int64_t r, const uint32_t *fi, const int64_t *ii, char *copy)
{
    const int64_t n = d->len;
    char *row = d->data + r * d->row_stride;
#define CK_ORDER_AT(i) (fi ? (int64_t)fi[i] : ii[i])
    if (d->idx) {
        int64_t *orow = d->idx + r * d->idx_row_stride;
        for (int64_t i = 0; i < n; i++) orow[i * d->idx_elem_stride] = CK_ORDER_AT(i);
    }
    if (d->sort_values) {
        for (int64_t i = 0; i < n; i++) memcpy(copy + i * isz, row + i * d->elem_stride, (size_t)isz);
        for (int64_t i = 0; i < n; i++) memcpy(row + i * d->elem_stride, copy + CK_ORDER_AT(i) * isz, (size_t)isz);
    }
#undef CK_ORDER_AT
}

/* Rows of a non-complex dtype whose order is wanted: key_order. */
static void sort_rows_keyed(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    sort_ctx *c = vctx;
    const ck_sort_desc *d = c->d;
    const int64_t n = d->len;
    const size_t kw = (size_t)c->isz;   /* keys as wide as the elements */
    char *buf = malloc((size_t)n * 2 * (kw + 4));
    char *copy = d->sort_values ? malloc((size_t)n * kw) : NULL;
    if (!buf || (d->sort_values && !copy)) {
        free(buf); free(copy);
        c->status = CK_ERR_MEMORY;   /* racy but every writer writes the same value */
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const uint32_t *fi = key_order(d->type, d->data + r * d->row_stride, d->elem_stride, n, d->descending, buf);
        emit_row(d, c->isz, r, fi, NULL, copy);
    }
    free(buf); free(copy);
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
        emit_row(d, c->isz, r, NULL, ii, copy);
    }
    free(k); free(ix); free(copy);
}

/* Partition by selection (introselect): each kth position of a row gets
 * the element a sort would put there, smaller or equal ones before it and
 * larger or equal ones after.  NaNs are first moved to the row's end (they
 * sort last), so the rest compares with the type's own <, which orders
 * -0.0 and 0.0 as equal, as NumPy does.  A pivot is the median of three;
 * past 2 log2(n) rounds without enough progress the range is heap-sorted,
 * so the worst case stays n log n.  Complex rows take the sort. */
#define CK_SELECT_SMALL 16
/* Rows this long select through a sample's pivots. */
#define CK_SELECT_SAMPLED ((int64_t)1 << 15)
#define CK_GEN_SELECT(NAME, T)                                                                         \
    static void sel_sift_##NAME(T *x, int64_t root, int64_t n)                                      \
    {                                                                                               \
        for (int64_t c; (c = 2 * root + 1) < n; root = c) {                                         \
            if (c + 1 < n && x[c] < x[c + 1]) c++;                                                  \
            if (!(x[root] < x[c])) break;                                                           \
            T t = x[root]; x[root] = x[c]; x[c] = t;                                                \
        }                                                                                           \
    }                                                                                               \
    static void sel_heap_##NAME(T *x, int64_t n)                                                    \
    {                                                                                               \
        for (int64_t i = n / 2; i-- > 0;) sel_sift_##NAME(x, i, n);                                 \
        for (int64_t e = n - 1; e > 0; e--) {                                                       \
            T t = x[0]; x[0] = x[e]; x[e] = t;                                                      \
            sel_sift_##NAME(x, 0, e);                                                               \
        }                                                                                           \
    }                                                                                               \
    static void sel_insertion_##NAME(T *x, int64_t n)                                               \
    {                                                                                               \
        for (int64_t i = 1; i < n; i++) {                                                           \
            T v = x[i];                                                                             \
            int64_t j = i;                                                                          \
            for (; j > 0 && v < x[j - 1]; j--) x[j] = x[j - 1];                                     \
            x[j] = v;                                                                               \
        }                                                                                           \
    }                                                                                               \
    /* x[k] in its sorted place within [lo, hi) */                                                  \
    static void sel_one_##NAME(T *x, int64_t lo, int64_t hi, int64_t k)                            \
    {                                                                                               \
        int budget = 2;                                                                             \
        for (int64_t m = hi - lo; m > 1; m >>= 1) budget += 2;                                      \
        while (hi - lo > CK_SELECT_SMALL) {                                                         \
            if (k == lo || k == hi - 1) {   /* an end: one scan */                                  \
                int64_t b = k;                                                                      \
                if (k == lo) { for (int64_t i = lo + 1; i < hi; i++) if (x[i] < x[b]) b = i; }      \
                else { for (int64_t i = lo; i < hi - 1; i++) if (x[b] < x[i]) b = i; }              \
                T t = x[k]; x[k] = x[b]; x[b] = t;                                                  \
                return;                                                                             \
            }                                                                                       \
            if (--budget < 0) {                                                                     \
                sel_heap_##NAME(x + lo, hi - lo);                                                   \
                return;                                                                             \
            }                                                                                       \
            int64_t mid = lo + (hi - lo) / 2;                                                       \
            T a = x[lo], b = x[mid], c = x[hi - 1];                                                 \
            T p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);                \
            int64_t i = lo - 1, j = hi;                                                             \
            for (;;) {                                                                              \
                do i++; while (x[i] < p);                                                           \
                do j--; while (p < x[j]);                                                           \
                if (i >= j) break;                                                                  \
                T t = x[i]; x[i] = x[j]; x[j] = t;                                                  \
            }                                                                                       \
            /* [lo, j] <= p <= [j + 1, hi) */                                                       \
            if (k <= j) hi = j + 1;                                                                 \
            else lo = j + 1;                                                                        \
        }                                                                                           \
        sel_insertion_##NAME(x + lo, hi - lo);                                                      \
    }                                                                                               \
    /* the kth (ascending, in [lo, hi)) of x[lo, hi) placed */                                   \
    static void sel_range_##NAME(T *x, int64_t lo, int64_t hi, const int64_t *kth, int nkth)        \
    {                                                                                               \
        int64_t end = hi;                                                                           \
        for (int64_t i = lo; i < end; i++)                                                          \
            if (x[i] != x[i]) {   /* NaN: swapped behind the rest */                                \
                while (end > i + 1 && x[end - 1] != x[end - 1]) end--;                              \
                T t = x[i]; x[i] = x[--end]; x[end] = t;                                            \
            }                                                                                       \
        for (int q = 0; q < nkth && kth[q] < end; q++) {                                            \
            sel_one_##NAME(x, lo, end, kth[q]);                                                     \
            lo = kth[q] + 1;                                                                        \
        }                                                                                           \
    }                                                                                               \
    /* The row in (n elements; NULL: x itself) partitioned into x.  Where the                       \
     * inner kth lie close together (a median's), pivots p1 <= p2 bracketing                        \
     * them are taken from a sample, and one counting read and one                                  \
     * branch-free scatter split the row into < p1, [p1, p2] and the rest                           \
     * (> p2 and NaN), so the selection proper runs on a small middle. */                           \
    static void sel_row_##NAME(T *x, const T *in, int64_t n, const int64_t *kth, int nkth)          \
    {                                                                                               \
        enum { NS = 2048, GAP = 64 };                                                               \
        int q0 = 0, q1 = nkth;                                                                      \
        if (q0 < q1 && kth[q0] == 0) q0++;                                                          \
        if (q1 > q0 && kth[q1 - 1] == n - 1) q1--;                                                  \
        T smp[NS], p1 = 0, p2 = 0;                                                                  \
        int sampled = in && n >= CK_SELECT_SAMPLED && q0 < q1 && kth[q1 - 1] - kth[q0] <= n / 64;   \
        if (sampled) {                                                                              \
            for (int64_t i = 0; i < NS; i++) smp[i] = in[i * (n / NS)];                             \
            int64_t r[2] = {kth[q0] * NS / n - GAP, kth[q1 - 1] * NS / n + GAP}, ns = NS;           \
            for (int64_t i = 0; i < ns; i++)                                                        \
                if (smp[i] != smp[i]) { T t = smp[i]; smp[i--] = smp[--ns]; smp[ns] = t; }         \
            sampled = r[0] >= 0 && r[1] < ns;                                                       \
            if (sampled) {                                                                          \
                sel_range_##NAME(smp, 0, ns, r, 2);                                                 \
                p1 = smp[r[0]];                                                                     \
                p2 = smp[r[1]];                                                                     \
            }                                                                                       \
        }                                                                                           \
        if (!sampled) {                                                                             \
            if (in) memcpy(x, in, (size_t)n * sizeof(T));                                           \
            sel_range_##NAME(x, 0, n, kth, nkth);                                                   \
            return;                                                                                 \
        }                                                                                           \
        int64_t nl = 0, nle = 0;                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                           \
            nl += in[i] < p1;                                                                       \
            nle += in[i] <= p2;                                                                     \
        }                                                                                           \
        int64_t a = 0, b = nl, c = nle;                                                             \
        for (int64_t i = 0; i < n; i++) {                                                           \
            const T v = in[i];                                                                      \
            const int64_t lt = v < p1, mid = (v <= p2) & !lt, hi = 1 - lt - mid;                    \
            x[(a & -lt) | (b & -mid) | (c & -hi)] = v;   /* masks: no branch to mispredict */       \
            a += lt;                                                                                \
            b += mid;                                                                               \
            c += hi;                                                                                \
        }                                                                                           \
        const int64_t cut[4] = {0, nl, nle, n};                                                     \
        int q = 0;                                                                                  \
        for (int g = 0; g < 3; g++) {                                                               \
            int q2 = q;                                                                             \
            while (q2 < nkth && kth[q2] < cut[g + 1]) q2++;                                         \
            if (q2 > q) sel_range_##NAME(x, cut[g], cut[g + 1], kth + q, q2 - q);                  \
            q = q2;                                                                                 \
        }                                                                                           \
    }

#define CK_SEL_ROW_(M, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_KIND_PICK_##K(CK_SEL_ROW1_, CK_SEL_ROW1_, CK_SEL_ROW1_, CK_SEL_ROW1_, CK_RAW_NONE_)(M, ID, S, _)
#define CK_SEL_ROW1_(M, ID, S, _) M(ID, S)
CK_DTYPES(CK_SEL_ROW_, CK_GEN_SELECT)

static void select_rows(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    sort_ctx *c = vctx;
    const ck_sort_desc *d = c->d;
    for (int64_t r = begin; r < end; r++) {
        char *row = d->data + r * d->row_stride;
        const char *in = d->src ? d->src + r * d->len * c->isz : NULL;
#define CK_SEL_CASE_(NAME, T) case CK_##NAME: sel_row_##NAME((T *)row, (const T *)in, d->len, d->kth, d->nkth); break;
        switch (d->type) {
        CK_DTYPES(CK_SEL_ROW_, CK_SEL_CASE_)
        default: break;
        }
#undef CK_SEL_CASE_
    }
}

ck_status ck_cpu_sort(const ck_sort_desc *d)
{
    if (d->nrows <= 0 || d->len <= 0) return CK_OK;
    sort_ctx c = {d, key_bytes(d->type), ck_dtype_is_complex(d->type), ck_dtype_get_info(d->type)->itemsize, CK_OK};
    /* rows of a few thousand elements each are worth a thread */
    int64_t grain = d->len >= 4096 ? 1 : 4096 / d->len;
    if (d->kth && !d->idx && d->sort_values && !c.complex_keys && d->elem_stride == c.isz &&
        d->row_stride == d->len * c.isz && !((uintptr_t)d->data % (uintptr_t)c.isz) &&
        !((uintptr_t)d->src % (uintptr_t)c.isz)) {
        ck_parallel_for(d->nrows, grain, select_rows, &c);
        return CK_OK;
    }
    if (d->src) memcpy(d->data, d->src, (size_t)(d->nrows * d->len) * (size_t)c.isz);
    int raw = !d->idx && d->sort_values && !c.complex_keys &&
              !(d->elem_stride % c.isz) && !(d->row_stride % c.isz) && !((uintptr_t)d->data % (uintptr_t)c.isz);
    /* the order of non-complex rows (longer than the insertion sort's)
     * by key_order, whose element numbers are 32-bit */
    int keyed = !raw && !c.complex_keys && d->len <= (int64_t)UINT32_MAX;
    ck_parallel_for(d->nrows, grain, raw ? sort_rows_raw : keyed ? sort_rows_keyed : sort_rows, &c);
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
