/* The CPU's gather, scatter and nonzero (advanced indexing).  They run on
 * one core: a scatter must apply repeated indices in order anyway, and a
 * gather is bound by random memory access, which extra cores help little. */
#include "../backend.h"

#include <stdlib.h>
#include <string.h>

/* The index arrays checked and normalised (see ck_gather_desc): ix[k] is
 * d->idx[k] itself when every element is in [0, len) already, else a
 * private copy (in *own[k], freed by the caller) with each one rewritten. */
static ck_status normalise_indices(const ck_gather_desc *d, const int64_t **ix, int64_t **own)
{
    for (int k = 0; k < d->nidx; k++) {
        const int64_t *p = d->idx[k];
        int64_t n = d->idx_size[k], len = d->axis_len[k];
        int64_t *q = NULL;
        ix[k] = p;
        own[k] = NULL;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = p[i];
            if (v >= 0 && v < len) continue;
            if (!q) {
                q = malloc((size_t)n * sizeof *q);
                if (!q) return ck_error_set(CK_ERR_MEMORY, "out of memory normalising indices");
                memcpy(q, p, (size_t)n * sizeof *q);
                ix[k] = own[k] = q;
            }
            if (d->mode == CK_INDEX_WRAP && len > 0) {
                v %= len;
                q[i] = v < 0 ? v + len : v;
            } else if (d->mode == CK_INDEX_CLIP && len > 0) {
                q[i] = v < 0 ? 0 : len - 1;
            } else if (d->mode == CK_INDEX_RAISE && v < 0 && v >= -len) {
                q[i] = v + len;
            } else if (len == 0 && d->mode != CK_INDEX_RAISE) {
                return ck_error_set(CK_ERR_INDEX, "cannot do a non-empty take from an empty axes.");
            } else {
                return ck_error_set(CK_ERR_INDEX, "index %lld is out of bounds for axis %d with size %lld",
                                    (long long)v, d->axis_id[k], (long long)len);
            }
        }
    }
    return CK_OK;
}

/* One index array along the innermost dim, elements of 1, 2, 4 or 8
 * bytes: the inner loop with typed moves (n positions; the index array
 * steps is bytes, arr by st bytes an index, other by os bytes). */
#define CK_GATHER_ROW(T)                                                                            \
    do {                                                                                            \
        for (int64_t j = 0; j < n; j++) {                                                           \
            T *a = (T *)(arr + *(const int64_t *)(ip + j * is) * st), *o = (T *)(oth + j * os);     \
            if (scatter) *a = *o;                                                                   \
            else *o = *a;                                                                           \
        }                                                                                           \
    } while (0)

/* Whether addresses and steps (or'ed into bits) keep elements of isz bytes
 * aligned, so that they may move as words of that width. */
static int word_aligned(int isz, uint64_t bits)
{
    return (isz == 1 || isz == 2 || isz == 4 || isz == 8) && !(bits % (uint64_t)isz);
}

/* (word_aligned has checked that isz is one of these widths) */
static void typed_row(int isz, int scatter, char *arr, int64_t st, const char *ip, int64_t is, char *oth, int64_t os,
                      int64_t n)
{
    switch (isz) {
    case 1: CK_GATHER_ROW(uint8_t); break;
    case 2: CK_GATHER_ROW(uint16_t); break;
    case 4: CK_GATHER_ROW(uint32_t); break;
    default: CK_GATHER_ROW(uint64_t); break;
    }
}

/* Walk positions in C order, a row (the innermost dim) at a time, keeping
 * the byte offsets into arr and other; with one index array along the row
 * and elements of a machine word's width, the row is one typed loop. */
static ck_status run(const ck_gather_desc *d, int scatter)
{
    const int64_t *ix[CK_MAXDIMS];
    int64_t *own[CK_MAXDIMS] = {0};
    ck_status s = normalise_indices(d, ix, own);
    if (s == CK_OK && d->size > 0) {
        int nd = d->ndim, isz = d->itemsize;
        int64_t pos[CK_MAXDIMS] = {0};
        int64_t ioff[CK_MAXDIMS] = {0};   /* byte offset into each index array */
        int64_t aoff = 0, ooff = 0;
        /* the innermost dim is walked as a row: its steps */
        const int last = nd - 1;
        const int64_t n = nd > 0 ? d->shape[last] : 1;
        const int64_t as = nd > 0 ? d->arr_strides[last] : 0, os = nd > 0 ? d->other_strides[last] : 0;
        int64_t is[CK_MAXDIMS];
        for (int k = 0; k < d->nidx; k++) is[k] = nd > 0 ? d->idx_strides[k][last] : 0;
        uint64_t bits = (uint64_t)(uintptr_t)d->arr | (uint64_t)(uintptr_t)d->other | (uint64_t)d->axis_stride[0];
        for (int dim = 0; dim < nd; dim++) bits |= (uint64_t)(d->arr_strides[dim] | d->other_strides[dim]);
        /* the row is the index array's (arr does not step along it) */
        const int typed = nd >= 1 && d->nidx == 1 && as == 0 && word_aligned(isz, bits);
        /* the index is the same along the row and both sides are contiguous
         * there (x[idx] of a C-ordered x: whole rows move): one memcpy */
        const int rows = !typed && nd >= 1 && d->nidx == 1 && is[0] == 0 && as == isz && os == isz;
        for (int64_t it = 0; it < d->size; it += n) {
            if (typed) {
                typed_row(isz, scatter, d->arr + aoff, d->axis_stride[0], (const char *)ix[0] + ioff[0], is[0],
                          d->other + ooff, os, n);
            } else if (rows) {
                char *a = d->arr + aoff + *(const int64_t *)((const char *)ix[0] + ioff[0]) * d->axis_stride[0];
                if (scatter) memcpy(a, d->other + ooff, (size_t)(n * isz));
                else memcpy(d->other + ooff, a, (size_t)(n * isz));
            } else {
                for (int64_t j = 0; j < n; j++) {
                    int64_t off = aoff + j * as;
                    for (int k = 0; k < d->nidx; k++)
                        off += *(const int64_t *)((const char *)ix[k] + ioff[k] + j * is[k]) * d->axis_stride[k];
                    if (scatter) memcpy(d->arr + off, d->other + ooff + j * os, (size_t)isz);
                    else memcpy(d->other + ooff + j * os, d->arr + off, (size_t)isz);
                }
            }
            for (int dim = last - 1; dim >= 0; dim--) {
                aoff += d->arr_strides[dim];
                ooff += d->other_strides[dim];
                for (int k = 0; k < d->nidx; k++) ioff[k] += d->idx_strides[k][dim];
                if (++pos[dim] < d->shape[dim]) break;
                aoff -= d->shape[dim] * d->arr_strides[dim];
                ooff -= d->shape[dim] * d->other_strides[dim];
                for (int k = 0; k < d->nidx; k++) ioff[k] -= d->shape[dim] * d->idx_strides[k][dim];
                pos[dim] = 0;
            }
        }
    }
    for (int k = 0; k < d->nidx; k++) free(own[k]);
    return s;
}

ck_status ck_cpu_gather(const ck_gather_desc *d) { return run(d, 0); }
ck_status ck_cpu_scatter(const ck_gather_desc *d) { return run(d, 1); }

/* nonzero and compress walk the mask row by row (its innermost dim), each
 * row without branches on the mask: every element is written to the next
 * free output slot, which advances only past true ones, so a false one is
 * overwritten by the next true one.  Writes stop once the slots are full
 * (the count came from another pass; a mask that changed since is an
 * error, not a write past the end). */
ck_status ck_cpu_nonzero(const ck_nonzero_desc *d)
{
    int nd = d->ndim;
    int64_t size = 1;
    for (int i = 0; i < nd; i++) size *= d->shape[i];
    if (size == 0 || d->count == 0) return CK_OK;
    const int last = nd - 1;
    const int64_t n = d->shape[last], ms = d->strides[last], cap = d->count;
    int64_t pos[CK_MAXDIMS] = {0};
    int64_t off = 0, j = 0;
    int64_t *inner = d->out + (int64_t)last * cap;
    for (int64_t it = 0; it < size; it += n) {
        const char *m = d->in + off;
        if (last == 0) {
            for (int64_t i = 0; i < n; i++) {
                if (j < cap) inner[j] = i;
                j += m[i * ms] != 0;
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                if (j < cap) {
                    for (int k = 0; k < last; k++) d->out[k * cap + j] = pos[k];
                    inner[j] = i;
                }
                j += m[i * ms] != 0;
            }
        }
        if (j > cap) return ck_error_set(CK_ERR_RUNTIME, "nonzero: the array changed while it was read");
        for (int dim = last - 1; dim >= 0; dim--) {
            off += d->strides[dim];
            if (++pos[dim] < d->shape[dim]) break;
            off -= d->shape[dim] * d->strides[dim];
            pos[dim] = 0;
        }
    }
    return CK_OK;
}

/* One mask row of compress for elements of T: select without branches;
 * expand (the packed values to the true elements) with one. */
#define CK_COMPRESS_ROW(T)                                                                          \
    do {                                                                                            \
        T *o = (T *)d->out;                                                                         \
        if (d->expand) {                                                                            \
            for (int64_t i = 0; i < n; i++)                                                         \
                if (m[i * ms] && j < cap) *(T *)(src + i * ss) = o[j++];                            \
                else j += m[i * ms] != 0;                                                           \
        } else {                                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                       \
                if (j < cap) o[j] = *(const T *)(src + i * ss);                                     \
                j += m[i * ms] != 0;                                                                \
            }                                                                                       \
        }                                                                                           \
    } while (0)

ck_status ck_cpu_compress(const ck_compress_desc *d)
{
    int nd = d->ndim, isz = d->itemsize;
    int64_t size = 1;
    for (int i = 0; i < nd; i++) size *= d->shape[i];
    if (size == 0 || d->count == 0) return CK_OK;
    const int last = nd > 0 ? nd - 1 : 0;
    const int64_t n = nd > 0 ? d->shape[last] : 1, cap = d->count;
    const int64_t ms = nd > 0 ? d->mask_strides[last] : 0, ss = nd > 0 ? d->src_strides[last] : 0;
    uint64_t bits = (uint64_t)(uintptr_t)d->src | (uint64_t)(uintptr_t)d->out;
    for (int dim = 0; dim < nd; dim++) bits |= (uint64_t)d->src_strides[dim];
    const int wsz = word_aligned(isz, bits) ? isz : 0;   /* 0: bytes by memcpy */
    int64_t pos[CK_MAXDIMS] = {0};
    int64_t moff = 0, soff = 0, j = 0;
    for (int64_t it = 0; it < size; it += n) {
        const char *m = d->mask + moff;
        char *src = d->src + soff;
        switch (wsz) {
        case 1: CK_COMPRESS_ROW(uint8_t); break;
        case 2: CK_COMPRESS_ROW(uint16_t); break;
        case 4: CK_COMPRESS_ROW(uint32_t); break;
        case 8: CK_COMPRESS_ROW(uint64_t); break;
        default:
            for (int64_t i = 0; i < n; i++) {
                if (!m[i * ms]) continue;
                if (j < cap) {
                    if (d->expand) memcpy(src + i * ss, d->out + j * isz, (size_t)isz);
                    else memcpy(d->out + j * isz, src + i * ss, (size_t)isz);
                }
                j++;
            }
        }
        if (j > cap) return ck_error_set(CK_ERR_RUNTIME, "compress: the mask changed while it was read");
        for (int dim = last - 1; dim >= 0; dim--) {
            moff += d->mask_strides[dim];
            soff += d->src_strides[dim];
            if (++pos[dim] < d->shape[dim]) break;
            moff -= d->shape[dim] * d->mask_strides[dim];
            soff -= d->shape[dim] * d->src_strides[dim];
            pos[dim] = 0;
        }
    }
    return CK_OK;
}
