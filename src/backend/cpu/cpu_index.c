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

/* Walk positions in C order keeping the byte offsets into arr and other. */
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
        for (int64_t it = 0; it < d->size; it++) {
            int64_t off = aoff;
            for (int k = 0; k < d->nidx; k++)
                off += *(const int64_t *)((const char *)ix[k] + ioff[k]) * d->axis_stride[k];
            if (scatter) memcpy(d->arr + off, d->other + ooff, (size_t)isz);
            else memcpy(d->other + ooff, d->arr + off, (size_t)isz);
            for (int dim = nd - 1; dim >= 0; dim--) {
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

ck_status ck_cpu_nonzero(const ck_nonzero_desc *d)
{
    int nd = d->ndim;
    int64_t size = 1;
    for (int i = 0; i < nd; i++) size *= d->shape[i];
    if (size == 0 || d->count == 0) return CK_OK;
    int64_t pos[CK_MAXDIMS] = {0};
    int64_t off = 0, j = 0;
    for (int64_t it = 0; it < size; it++) {
        if (d->in[off]) {
            /* the count came from another pass; never write past it */
            if (j >= d->count) return ck_error_set(CK_ERR_RUNTIME, "nonzero: the array changed while it was read");
            for (int i = 0; i < nd; i++) d->out[i * d->count + j] = pos[i];
            j++;
        }
        for (int dim = nd - 1; dim >= 0; dim--) {
            off += d->strides[dim];
            if (++pos[dim] < d->shape[dim]) break;
            off -= d->shape[dim] * d->strides[dim];
            pos[dim] = 0;
        }
    }
    return CK_OK;
}

ck_status ck_cpu_compress(const ck_compress_desc *d)
{
    int nd = d->ndim, isz = d->itemsize;
    int64_t size = 1;
    for (int i = 0; i < nd; i++) size *= d->shape[i];
    if (size == 0 || d->count == 0) return CK_OK;
    int64_t pos[CK_MAXDIMS] = {0};
    int64_t moff = 0, soff = 0, j = 0;
    for (int64_t it = 0; it < size; it++) {
        if (d->mask[moff]) {
            if (j >= d->count) return ck_error_set(CK_ERR_RUNTIME, "compress: the mask changed while it was read");
            if (d->expand) memcpy(d->src + soff, d->out + j * isz, (size_t)isz);
            else memcpy(d->out + j * isz, d->src + soff, (size_t)isz);
            j++;
        }
        for (int dim = nd - 1; dim >= 0; dim--) {
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
