/* Advanced indexing: x[key] and x[key] = v with integer and boolean arrays,
 * and take / put / take_along_axis / put_along_axis / nonzero.
 *
 * Every one is planned the same way: the basic items of the key (ints,
 * slices, newaxes, an ellipsis) make a view in which each advanced item
 * keeps its axis whole; boolean arrays become integer ones through nonzero
 * (as NumPy does); the integer arrays are broadcast together and their
 * dims placed by NumPy's rule (in place of the advanced items when those
 * are adjacent in the key, else first).  The result is then a single
 * gather (or scatter) over the result's shape, so a backend needs only
 * that one kernel. */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct ix_plan {
    ck_array view;                    /* a with the basic items applied */
    int nidx;
    ck_array idx[CK_MAXDIMS];         /* int64, contiguous, on a's device (views or copies) */
    int idx_vdim[CK_MAXDIMS];         /* the view dim each one indexes */
    int idx_axis[CK_MAXDIMS];         /* that dim's axis in a, for messages */
    int rnd;                          /* the result */
    int64_t rshape[CK_MAXDIMS];
    int64_t rstrides[CK_MAXDIMS];     /* the view's stride per result dim; 0 at broadcast dims */
    int64_t istrides[CK_MAXDIMS][CK_MAXDIMS];
    int names_none;                   /* the index arrays broadcast to no element: no bounds to check */
} ix_plan;

static void plan_release(ix_plan *p)
{
    if (p->view.buf) ck_array_release(&p->view);
    for (int k = 0; k < p->nidx; k++) ck_array_release(&p->idx[k]);
    p->nidx = 0;
}

static ck_status need_slot(const ck_array *a, int scatter)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(a));
    if ((scatter ? be->scatter : be->gather) && be->nonzero) return CK_OK;
    char dev[32];
    ck_device_str(ck_array_device(a), dev, sizeof dev);
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED,
                        "advanced indexing (integer-array and boolean indices, take, put, nonzero) is not "
                        "implemented on the %s device yet", dev);
}

/* The same clipping as Python's PySlice_AdjustIndices, in int64. */
static int64_t slice_len(int64_t len, int64_t *start, int64_t *stop, int64_t step)
{
    if (*start < 0) {
        *start += len;
        if (*start < 0) *start = step < 0 ? -1 : 0;
    } else if (*start >= len) {
        *start = step < 0 ? len - 1 : len;
    }
    if (*stop < 0) {
        *stop += len;
        if (*stop < 0) *stop = step < 0 ? -1 : 0;
    } else if (*stop >= len) {
        *stop = step < 0 ? len - 1 : len;
    }
    if (step < 0) return *stop < *start ? (*start - *stop - 1) / (-step) + 1 : 0;
    return *start < *stop ? (*stop - *start - 1) / step + 1 : 0;
}

/* An int64 index array on a's device: k itself when it is one already
 * (contiguous, and apart from a, which a scatter writes), else a copy. */
static ck_status index_scratch(ck_array *out, const ck_array *k, const ck_array *a)
{
    ck_device dev = ck_array_device(a);
    if (k->dtype == CK_INT64 && ck_device_equal(ck_array_device(k), dev) && (k->flags & CK_ARRAY_C_CONTIGUOUS) &&
        !ck_array_may_overlap(k, a)) {
        ck_array_view(out, k);
        return CK_OK;
    }
    if (!ck_device_equal(ck_array_device(k), dev)) {
        ck_array moved;
        ck_status s = ck_array_to_device(&moved, k, dev);
        if (s != CK_OK) return s;
        s = ck_array_astype(out, &moved, CK_INT64, 0);
        ck_array_release(&moved);
        return s;
    }
    return ck_array_astype(out, k, CK_INT64, 0);
}

static ck_status add_idx(ix_plan *p, ck_array *scratch, int vdim, int axis)
{
    if (p->nidx >= CK_MAXDIMS) {
        ck_array_release(scratch);
        return ck_error_set(CK_ERR_INDEX, "too many advanced indices (at most %d)", CK_MAXDIMS);
    }
    p->idx[p->nidx] = *scratch;
    p->idx_vdim[p->nidx] = vdim;
    p->idx_axis[p->nidx] = axis;
    p->nidx++;
    return CK_OK;
}

/* A mask's true positions as index arrays, one per axis it covers. */
static ck_status add_mask(ix_plan *p, const ck_array *mask, int vdim, int axis)
{
    ck_array m;
    ck_status s;
    if (!ck_device_equal(ck_array_device(mask), ck_array_device(&p->view))) {
        s = ck_array_to_device(&m, mask, ck_array_device(&p->view));
    } else {
        ck_array_view(&m, mask);
        s = CK_OK;
    }
    if (s != CK_OK) return s;
    ck_array nz;
    s = ck_nonzero(&nz, &m);
    ck_array_release(&m);
    if (s != CK_OK) return s;
    for (int j = 0; j < mask->ndim && s == CK_OK; j++) {
        ck_array row;
        ck_array_view(&row, &nz);
        row.data += (int64_t)j * nz.shape[1] * 8;
        int64_t st = 8;
        ck_array_set_layout(&row, 1, &nz.shape[1], &st);
        s = add_idx(p, &row, vdim + j, axis + j);
    }
    ck_array_release(&nz);
    return s;
}

static ck_status add_view_dim(ix_plan *p, int *vnd, int64_t len, int64_t stride)
{
    if (*vnd >= CK_MAXDIMS)
        return ck_error_set(CK_ERR_INDEX, "number of dimensions must be within [0, %d], indexing result would have more",
                            CK_MAXDIMS);
    p->view.shape[*vnd] = len;
    p->view.strides[*vnd] = stride;
    (*vnd)++;
    return CK_OK;
}

static ck_status build_plan(ix_plan *p, const ck_array *a, int n, const ck_index_item *items)
{
    memset(p, 0, sizeof *p);
    int consumed = 0, has_adv = 0, ellipses = 0;
    for (int i = 0; i < n; i++) {
        switch (items[i].kind) {
        case CK_INDEX_INT: case CK_INDEX_SLICE: consumed++; break;
        case CK_INDEX_ELLIPSIS:
            if (++ellipses > 1) return ck_error_set(CK_ERR_INDEX, "an index can only have a single ellipsis ('...')");
            break;
        case CK_INDEX_NEWAXIS: break;
        case CK_INDEX_ARRAY: {
            const ck_array *k = items[i].array;
            if (k->dtype == CK_BOOL) consumed += k->ndim;
            else if (ck_dtype_is_integer(k->dtype)) consumed++;
            else return ck_error_set(CK_ERR_INDEX, "arrays used as indices must be of integer (or boolean) type");
            has_adv = 1;
            break;
        }
        }
    }
    if (consumed > a->ndim)
        return ck_error_set(CK_ERR_INDEX, "too many indices for array: array is %d-dimensional, but %d were indexed",
                            a->ndim, consumed);

    ck_array_view(&p->view, a);
    /* view dims are written into p->view.shape/strides as they are made */
    int vnd = 0, axis = 0;
    int adv_vdim[CK_MAXDIMS];   /* per view dim: 1 when an advanced item keeps it */
    int first_adv = -1, front = 0, seen_basic_after = 0, insert_at = 0, basic_before = 0;
    ck_status s = CK_OK;
    for (int i = 0; i < n && s == CK_OK; i++) {
        const ck_index_item *it = &items[i];
        int is_adv = it->kind == CK_INDEX_ARRAY || (has_adv && it->kind == CK_INDEX_INT);
        if (is_adv) {
            if (first_adv < 0) { first_adv = i; insert_at = basic_before; }
            else if (seen_basic_after) front = 1;
        } else if (first_adv >= 0) {
            seen_basic_after = 1;
        }
        int vnd0 = vnd;
        switch (it->kind) {
        case CK_INDEX_INT: {
            int64_t len = a->shape[axis], v = it->value;
            if (v < -len || v >= len)
                s = ck_error_set(CK_ERR_INDEX, "index %lld is out of bounds for axis %d with size %lld",
                                 (long long)v, axis, (long long)len);
            else p->view.data += (v < 0 ? v + len : v) * a->strides[axis];
            axis++;
            break;
        }
        case CK_INDEX_SLICE: {
            if (it->step == 0) { s = ck_error_set(CK_ERR_VALUE, "slice step cannot be zero"); break; }
            int64_t start = it->start, stop = it->stop, stride;
            int64_t len = slice_len(a->shape[axis], &start, &stop, it->step);
            if (len <= 0) {
                len = 0;
                start = 0;
                stride = a->strides[axis];
            } else if (__builtin_mul_overflow(a->strides[axis], it->step, &stride)) {
                stride = a->strides[axis];   /* one element: the stride is never used */
            }
            p->view.data += start * a->strides[axis];
            s = add_view_dim(p, &vnd, len, stride);
            axis++;
            break;
        }
        case CK_INDEX_NEWAXIS:
            s = add_view_dim(p, &vnd, 1, 0);
            break;
        case CK_INDEX_ELLIPSIS:
            for (int j = 0; j < a->ndim - consumed && s == CK_OK; j++, axis++)
                s = add_view_dim(p, &vnd, a->shape[axis], a->strides[axis]);
            break;
        case CK_INDEX_ARRAY: {
            const ck_array *k = it->array;
            /* NumPy reads an empty 1-d mask as the empty integer index []
             * whatever the axis' length */
            if (k->dtype != CK_BOOL || (k->ndim == 1 && k->size == 0)) {
                ck_array sc;
                s = add_view_dim(p, &vnd, a->shape[axis], a->strides[axis]);
                if (s == CK_OK) s = index_scratch(&sc, k, a);
                if (s == CK_OK) s = add_idx(p, &sc, vnd - 1, axis);
                axis++;
            } else if (k->ndim == 0) {
                /* NumPy reads a 0-d mask as a new axis of length 1 kept
                 * (True) or emptied (False) by an advanced index */
                s = add_view_dim(p, &vnd, 1, 0);
                ck_array b, sc;
                if (s == CK_OK) s = ck_array_to_device(&b, k, ck_device_cpu());
                if (s != CK_OK) break;
                int64_t cnt = b.data[0] ? 1 : 0;
                ck_array_release(&b);
                s = ck_full_scalar(&sc, 1, &cnt, CK_INT64, 0.0, ck_array_device(a));
                if (s == CK_OK) s = add_idx(p, &sc, vnd - 1, axis);
            } else {
                /* a mask axis of length 0 selects nothing from an axis of
                 * any length, as NumPy lets it (x[mask of shape (2, 0)]
                 * with x of shape (2, 1)) */
                for (int j = 0; j < k->ndim; j++)
                    if (k->shape[j] != a->shape[axis + j] && k->shape[j] != 0)
                        return ck_error_set(CK_ERR_INDEX,
                                            "boolean index did not match indexed array along axis %d; size of axis "
                                            "is %lld but size of corresponding boolean axis is %lld",
                                            axis + j, (long long)a->shape[axis + j], (long long)k->shape[j]);
                for (int j = 0; j < k->ndim && s == CK_OK; j++)
                    s = add_view_dim(p, &vnd, k->shape[j], a->strides[axis + j]);
                if (s == CK_OK) s = add_mask(p, k, vnd - k->ndim, axis);
                axis += k->ndim;
            }
            break;
        }
        }
        for (int j = vnd0; j < vnd; j++) adv_vdim[j] = is_adv;
        if (!is_adv) basic_before += vnd - vnd0;
    }
    for (; axis < a->ndim && s == CK_OK; axis++) {
        s = add_view_dim(p, &vnd, a->shape[axis], a->strides[axis]);
        if (s == CK_OK) adv_vdim[vnd - 1] = 0;
    }
    if (s != CK_OK) return s;
    ck_array_set_layout(&p->view, vnd, p->view.shape, p->view.strides);

    /* the index arrays broadcast together */
    int bnd = 0;
    int64_t bshape[CK_MAXDIMS];
    if (p->nidx) {
        int nds[CK_MAXDIMS];
        const int64_t *shs[CK_MAXDIMS];
        for (int k = 0; k < p->nidx; k++) { nds[k] = p->idx[k].ndim; shs[k] = p->idx[k].shape; }
        if (ck_broadcast_shapes(p->nidx, nds, shs, &bnd, bshape) != CK_OK) {
            char msg[1024];
            size_t pos = 0;
            pos += (size_t)snprintf(msg, sizeof msg, "shape mismatch: indexing arrays could not be broadcast together with shapes ");
            for (int k = 0; k < p->nidx && pos < sizeof msg; k++)
                pos += (size_t)snprintf(msg + pos, sizeof msg - pos, "%s ", ck_shape_str(nds[k], shs[k], 0));
            ck_error_clear();
            return ck_error_set(CK_ERR_INDEX, "%s", msg);
        }
        /* NumPy checks the indices that name an element: zeros((0, 0))[[], [5]] is empty */
        for (int d = 0; d < bnd; d++) p->names_none |= bshape[d] == 0;
    }
    int nbasic = 0;
    for (int j = 0; j < vnd; j++) nbasic += !adv_vdim[j];
    if (nbasic + bnd > CK_MAXDIMS)
        return ck_error_set(CK_ERR_INDEX, "number of dimensions must be within [0, %d], indexing result would have %d",
                            CK_MAXDIMS, nbasic + bnd);
    int bstart = p->nidx == 0 ? nbasic : front ? 0 : insert_at;
    int r = 0, done_b = 0;
    for (int j = 0; j <= vnd; j++) {
        if (!done_b && r == bstart) {
            for (int d = 0; d < bnd; d++) { p->rshape[r] = bshape[d]; p->rstrides[r] = 0; r++; }
            done_b = 1;
        }
        if (j < vnd && !adv_vdim[j]) { p->rshape[r] = p->view.shape[j]; p->rstrides[r] = p->view.strides[j]; r++; }
    }
    p->rnd = r;
    for (int k = 0; k < p->nidx; k++) {
        const ck_array *ix = &p->idx[k];
        for (int d = 0; d < ix->ndim; d++) {
            int bd = bstart + bnd - ix->ndim + d;
            p->istrides[k][bd] = ix->shape[d] == 1 ? 0 : ix->strides[d];
        }
    }
    return CK_OK;
}

static void fill_desc(ck_gather_desc *d, const ix_plan *p, ck_index_mode mode, char *other, const int64_t *ostrides)
{
    memset(d, 0, sizeof *d);
    d->dev = ck_array_device(&p->view);
    d->itemsize = ck_array_itemsize(&p->view);
    d->mode = (int)mode;
    d->ndim = p->rnd;
    d->size = 1;
    for (int i = 0; i < p->rnd; i++) d->size *= p->rshape[i];
    memcpy(d->shape, p->rshape, sizeof d->shape);
    d->arr = p->view.data;
    memcpy(d->arr_strides, p->rstrides, sizeof d->arr_strides);
    d->other = other;
    memcpy(d->other_strides, ostrides, (size_t)p->rnd * sizeof *ostrides);
    d->nidx = p->nidx;
    for (int k = 0; k < p->nidx; k++) {
        d->idx[k] = (int64_t *)p->idx[k].data;
        d->idx_size[k] = p->idx[k].size;
        memcpy(d->idx_strides[k], p->istrides[k], sizeof d->idx_strides[k]);
        d->axis_len[k] = p->view.shape[p->idx_vdim[k]];
        d->axis_stride[k] = p->view.strides[p->idx_vdim[k]];
        d->axis_id[k] = p->idx_axis[k];
    }
}

/* The number of true elements of a bool array, read to the host: the one
 * sync of a mask operation (the size of its result). */
static ck_status count_true(const ck_array *mask, int64_t *count)
{
    ck_scalar c;
    ck_status s = ck_reduce_to_host(CK_REDUCE_COUNT_NONZERO, mask, &c,
                                    "the number of true elements (nonzero, a boolean mask)");
    if (s == CK_OK) *count = c.v.i;
    return s;
}

/* The compress slot over a and its mask m (a's shape, on a's device):
 * packed is x[mask]'s output, or with expand the values written. */
static ck_status run_compress(const ck_array *a, const ck_array *m, char *packed, int64_t count, int expand)
{
    ck_compress_desc d;
    memset(&d, 0, sizeof d);
    d.dev = ck_array_device(a);
    d.itemsize = ck_array_itemsize(a);
    d.ndim = a->ndim;
    memcpy(d.shape, a->shape, (size_t)a->ndim * 8);
    d.mask = m->data;
    memcpy(d.mask_strides, m->strides, (size_t)a->ndim * 8);
    d.src = a->data;
    memcpy(d.src_strides, a->strides, (size_t)a->ndim * 8);
    d.count = count;
    d.out = packed;
    d.expand = expand;
    return ck_backend_for(ck_array_device(a))->compress(&d);
}

/* x[mask] with one mask over all of x's dims, on a backend with the
 * compress slot: one compaction, no coordinates and no gather.  Returns 0
 * when the key is not of that form (nothing done), else 1 with *st set. */
static int try_compress(ck_array *out, const ck_array *a, int n, const ck_index_item *items, ck_status *st)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(a));
    if (!be->compress || n != 1 || items[0].kind != CK_INDEX_ARRAY) return 0;
    const ck_array *k = items[0].array;
    if (k->dtype != CK_BOOL || k->ndim == 0 || k->ndim != a->ndim) return 0;
    for (int i = 0; i < k->ndim; i++)
        if (k->shape[i] != a->shape[i]) return 0;
    ck_array m;
    ck_status s = CK_OK;
    if (!ck_device_equal(ck_array_device(k), ck_array_device(a))) s = ck_array_to_device(&m, k, ck_array_device(a));
    else ck_array_view(&m, k);
    if (s == CK_OK) {
        int64_t count = 0;
        s = count_true(&m, &count);
        if (s == CK_OK) s = ck_array_empty(out, 1, &count, a->dtype, ck_array_device(a));
        if (s == CK_OK) {
            s = run_compress(a, &m, out->data, count, 0);
            if (s != CK_OK) ck_array_release(out);
        }
        ck_array_release(&m);
    }
    *st = s;
    return 1;
}

ck_status ck_index_get(ck_array *out, const ck_array *a, int n, const ck_index_item *items, ck_index_mode mode)
{
    ck_status s = need_slot(a, 0);
    if (s != CK_OK) return s;
    if (try_compress(out, a, n, items, &s)) return s;
    ix_plan *p = malloc(sizeof *p);
    if (!p) return ck_error_set(CK_ERR_MEMORY, "out of memory planning an index");
    s = build_plan(p, a, n, items);
    if (s == CK_OK) s = ck_array_empty(out, p->rnd, p->rshape, a->dtype, ck_array_device(a));
    if (s == CK_OK && !p->names_none) {
        ck_gather_desc *d = malloc(sizeof *d);
        if (!d) s = ck_error_set(CK_ERR_MEMORY, "out of memory planning an index");
        else {
            fill_desc(d, p, mode, out->data, out->strides);
            s = ck_backend_for(ck_array_device(a))->gather(d);
            free(d);
        }
        if (s != CK_OK) ck_array_release(out);
    }
    plan_release(p);
    free(p);
    return s;
}

/* The bool array of a key that is one mask over a's leading dims (all of
 * them when *trailing is 0), else NULL. */
static const ck_array *leading_mask(const ck_array *a, int n, const ck_index_item *items, int *trailing)
{
    if (n != 1 || items[0].kind != CK_INDEX_ARRAY) return NULL;
    const ck_array *k = items[0].array;
    if (k->dtype != CK_BOOL || k->ndim == 0 || k->ndim > a->ndim) return NULL;
    for (int i = 0; i < k->ndim; i++)
        if (k->shape[i] != a->shape[i]) return NULL;
    *trailing = a->ndim - k->ndim;
    return k;
}

/* x[mask] = v where v does not depend on how many elements the mask
 * selects (one element, or one row of the dims the mask leaves whole):
 * x = where(mask, v, x) in place, one elementwise kernel, no nonzero and
 * no host sync.  v is an array of a's dtype on a's device that does not
 * overlap a, or (varr NULL) the scalar vs of a's dtype.  Returns 0 when
 * the key or v is not of that form (nothing done), else 1 with *st set. */
static int try_masked_where(ck_array *a, int n, const ck_index_item *items, const ck_array *varr,
                            const ck_scalar *vs, ck_status *st)
{
    int trailing;
    const ck_array *k = leading_mask(a, n, items, &trailing);
    if (!k) return 0;
    ck_operand ops[3];
    memset(ops, 0, sizeof ops);
    ck_array v = {0};
    if (varr) {
        /* v's leading length-1 dims stand for the count: dropped */
        int lead = 0;
        while (varr->ndim - lead > trailing && varr->shape[lead] == 1) lead++;
        if (varr->ndim - lead > trailing) return 0;
        ck_array_view(&v, varr);
        ck_array_set_layout(&v, varr->ndim - lead, varr->shape + lead, varr->strides + lead);
        ck_array vb;
        if (ck_array_broadcast_to(&vb, &v, a->ndim, a->shape) != CK_OK) {
            ck_error_clear();   /* the general path reports it */
            ck_array_release(&v);
            return 0;
        }
        ck_array_release(&vb);
        ops[1].array = &v;
    } else {
        ops[1].scalar = *vs;
    }
    ck_array m;
    ck_status s = CK_OK;
    if (!ck_device_equal(ck_array_device(k), ck_array_device(a))) s = ck_array_to_device(&m, k, ck_array_device(a));
    else ck_array_view(&m, k);
    if (s == CK_OK) {
        /* the mask with length-1 dims in place of the ones it leaves whole */
        int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
        for (int i = 0; i < a->ndim; i++) {
            shape[i] = i < k->ndim ? m.shape[i] : 1;
            strides[i] = i < k->ndim ? m.strides[i] : 0;
        }
        ck_array_set_layout(&m, a->ndim, shape, strides);
        ops[0].array = &m;
        ops[2].array = a;
        s = ck_ufunc_apply(CK_OP_WHERE, 3, ops, a, 1, CK_DTYPE_INVALID);
        ck_array_release(&m);
    }
    if (v.buf) ck_array_release(&v);
    *st = s;
    return 1;
}

/* x[mask] = values with one mask over all of x's dims, on a backend with
 * the compress slot: the mask's count (the one host sync, for NumPy's size
 * check), then one compaction writing the values to x's true elements in
 * C order: no nonzero and no scatter.  v is of a's dtype on a's device and
 * does not overlap a.  Returns 0 when the key or v is not of that form
 * (nothing done), else 1 with *st set. */
static int try_expand(ck_array *a, int n, const ck_index_item *items, const ck_array *v, ck_status *st)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(a));
    int trailing;
    const ck_array *k = leading_mask(a, n, items, &trailing);
    if (!be->compress || !k || trailing != 0 || v->ndim != 1) return 0;
    ck_array m, packed = {0};
    ck_status s = CK_OK;
    /* a mask that a itself holds (b[b] = ...) is read from a copy */
    if (!ck_device_equal(ck_array_device(k), ck_array_device(a))) s = ck_array_to_device(&m, k, ck_array_device(a));
    else if (ck_array_may_overlap(k, a)) s = ck_array_astype(&m, k, CK_BOOL, 0);
    else ck_array_view(&m, k);
    if (s != CK_OK) {
        *st = s;
        return 1;
    }
    int64_t count = 0;
    s = count_true(&m, &count);
    if (s == CK_OK && v->shape[0] != count)
        s = ck_error_set(CK_ERR_VALUE, "NumPy boolean array indexing assignment cannot assign %lld input values to "
                                       "the %lld output values where the mask is true",
                         (long long)v->shape[0], (long long)count);
    if (s == CK_OK) {
        if (v->flags & CK_ARRAY_C_CONTIGUOUS) ck_array_view(&packed, v);
        else s = ck_array_astype(&packed, v, v->dtype, 0);
    }
    if (s == CK_OK && count > 0) s = run_compress(a, &m, packed.data, count, 1);
    if (packed.buf) ck_array_release(&packed);
    ck_array_release(&m);
    *st = s;
    return 1;
}

ck_status ck_index_set(ck_array *a, int n, const ck_index_item *items, const ck_array *values, ck_index_mode mode)
{
    if (!(a->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    ck_status s = need_slot(a, 1);
    if (s != CK_OK) return s;
    int trailing = -1;
    int full_mask = leading_mask(a, n, items, &trailing) && trailing == 0;
    if (full_mask && values->ndim > 1)
        return ck_error_set(CK_ERR_TYPE, "NumPy boolean array indexing assignment requires a 0 or 1-dimensional "
                                         "input, input has %d dimensions", values->ndim);
    ck_array v = {0}, vb = {0};
    /* a private copy when it must be cast or moved, or may alias a
     * (x[idx] = x): the scatter would read what it already wrote */
    if (values->dtype != a->dtype || !ck_device_equal(ck_array_device(values), ck_array_device(a)) ||
        ck_array_may_overlap(values, a)) {
        if (!ck_device_equal(ck_array_device(values), ck_array_device(a))) {
            ck_array moved;
            s = ck_array_to_device(&moved, values, ck_array_device(a));
            if (s == CK_OK) {
                s = ck_array_astype(&v, &moved, a->dtype, 0);
                ck_array_release(&moved);
            }
        } else {
            s = ck_array_astype(&v, values, a->dtype, 0);
        }
    } else {
        ck_array_view(&v, values);
    }
    if (s != CK_OK) return s;
    if (try_masked_where(a, n, items, &v, NULL, &s) || try_expand(a, n, items, &v, &s)) {
        ck_array_release(&v);
        return s;
    }
    ix_plan *p = malloc(sizeof *p);
    ck_gather_desc *d = malloc(sizeof *d);
    if (!p || !d) {
        free(p);
        free(d);
        ck_array_release(&v);
        return ck_error_set(CK_ERR_MEMORY, "out of memory planning an index");
    }
    s = build_plan(p, a, n, items);
    if (s == CK_OK && ck_array_broadcast_to(&vb, &v, p->rnd, p->rshape) != CK_OK) {
        ck_error_clear();
        if (full_mask)
            s = ck_error_set(CK_ERR_VALUE, "NumPy boolean array indexing assignment cannot assign %lld input values "
                                           "to the %lld output values where the mask is true",
                             (long long)values->size, (long long)p->rshape[0]);
        else
            s = ck_error_set(CK_ERR_VALUE,
                             "shape mismatch: value array of shape %s could not be broadcast to indexing result of shape %s",
                             ck_shape_str(values->ndim, values->shape, 0), ck_shape_str(p->rnd, p->rshape, 1));
    }
    if (s == CK_OK && !p->names_none) {
        fill_desc(d, p, mode, vb.data, vb.strides);
        s = ck_backend_for(ck_array_device(a))->scatter(d);
    }
    if (vb.buf) ck_array_release(&vb);
    ck_array_release(&v);
    plan_release(p);
    free(p);
    free(d);
    return s;
}

ck_status ck_index_fill(ck_array *a, int n, const ck_index_item *items, const ck_scalar *value, ck_index_mode mode)
{
    if (!(a->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    /* the value as a's dtype, converted as a fill converts it */
    _Alignas(16) unsigned char buf[16];
    ck_scalar v;
    ck_scalar_store(value, a->dtype, buf);
    ck_scalar_load(&v, a->dtype, buf);
    ck_status s;
    if (try_masked_where(a, n, items, NULL, &v, &s)) return s;
    ck_array t;
    int64_t none = 0;
    if ((s = ck_full(&t, 0, &none, a->dtype, &v, ck_array_device(a))) != CK_OK) return s;
    s = ck_index_set(a, n, items, &t, mode);
    ck_array_release(&t);
    return s;
}

ck_status ck_nonzero(ck_array *out, const ck_array *a)
{
    if (a->ndim == 0)
        return ck_error_set(CK_ERR_VALUE,
                            "Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.");
    ck_status s = need_slot(a, 0);
    if (s != CK_OK) return s;
    ck_array mask;
    if (a->dtype == CK_BOOL) ck_array_view(&mask, a);
    else if ((s = ck_array_astype(&mask, a, CK_BOOL, 0)) != CK_OK) return s;
    int64_t count = 0;
    s = count_true(&mask, &count);
    if (s == CK_OK) {
        int64_t shape[2] = {a->ndim, count};
        s = ck_array_empty(out, 2, shape, CK_INT64, ck_array_device(a));
        if (s == CK_OK) {
            ck_nonzero_desc d;
            memset(&d, 0, sizeof d);
            d.dev = ck_array_device(a);
            d.ndim = mask.ndim;
            memcpy(d.shape, mask.shape, (size_t)mask.ndim * 8);
            memcpy(d.strides, mask.strides, (size_t)mask.ndim * 8);
            d.in = mask.data;
            d.count = count;
            d.out = (int64_t *)out->data;
            s = ck_backend_for(ck_array_device(a))->nonzero(&d);
            if (s != CK_OK) ck_array_release(out);
        }
    }
    ck_array_release(&mask);
    return s;
}

/* ------------------------------------------------- take, put and kin */

/* a as one dimension (a view when its layout allows, else a copy). */
static ck_status flatten(ck_array *out, const ck_array *a)
{
    int64_t n = a->size;
    return ck_array_reshape(out, a, 1, &n, 0);
}

/* take and put read bool indices as the integers 0 and 1, not as masks. */
static ck_status int_indices(ck_array *out, const ck_array *ind)
{
    if (ind->dtype == CK_BOOL) return ck_array_astype(out, ind, CK_INT64, 0);
    if (!ck_dtype_is_integer(ind->dtype))
        return ck_error_set(CK_ERR_TYPE, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                            ck_dtype_get_info(ind->dtype)->name);
    ck_array_view(out, ind);
    return CK_OK;
}

ck_status ck_take(ck_array *out, const ck_array *a, const ck_array *indices, int axis, int axis_none,
                  ck_index_mode mode)
{
    ck_array src, ind;
    ck_status s = axis_none ? flatten(&src, a) : (ck_array_view(&src, a), CK_OK);
    if (s != CK_OK) return s;
    if (axis_none) axis = 0;
    s = ck_axis_normalize(&axis, src.ndim);
    if (s == CK_OK) s = int_indices(&ind, indices);
    if (s == CK_OK) {
        ck_index_item items[CK_MAXDIMS + 1];
        for (int i = 0; i < axis; i++) {
            items[i].kind = CK_INDEX_SLICE;
            items[i].start = 0;
            items[i].stop = INT64_MAX;
            items[i].step = 1;
        }
        items[axis].kind = CK_INDEX_ARRAY;
        items[axis].array = &ind;
        s = ck_index_get(out, &src, axis + 1, items, mode);
        ck_array_release(&ind);
    }
    ck_array_release(&src);
    return s;
}

ck_status ck_put(ck_array *a, const ck_array *indices, const ck_array *values, ck_index_mode mode)
{
    if (!(a->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    ck_status s = need_slot(a, 1);
    if (s != CK_OK) return s;
    ck_array ind, ind1 = {0}, vals = {0}, flat = {0}, tiled = {0};
    s = int_indices(&ind, indices);
    if (s != CK_OK) return s;
    s = flatten(&ind1, &ind);
    ck_array_release(&ind);
    if (s == CK_OK) s = flatten(&vals, values);
    /* NumPy: values shorter than indices repeat; none at all is a no-op */
    if (s == CK_OK && vals.size != 0 && ind1.size != 0) {
        const ck_array *v = &vals;
        if (vals.size != ind1.size) {
            ck_array r;
            s = ck_arange(&r, 0, 1, ind1.size, CK_INT64, ck_array_device(&vals));
            if (s == CK_OK) {
                s = ck_take(&tiled, &vals, &r, 0, 0, CK_INDEX_WRAP);
                ck_array_release(&r);
            }
            v = &tiled;
        }
        int contiguous = (a->flags & CK_ARRAY_C_CONTIGUOUS) != 0;
        if (s == CK_OK) s = contiguous ? flatten(&flat, a) : ck_array_astype(&flat, a, a->dtype, 0);
        if (s == CK_OK && !contiguous) {
            int64_t n = flat.size;
            ck_array_set_layout(&flat, 1, &n, (int64_t[]){ck_array_itemsize(&flat)});
        }
        if (s == CK_OK) {
            ck_index_item item = {.kind = CK_INDEX_ARRAY, .array = &ind1};
            s = ck_index_set(&flat, 1, &item, v, mode);
        }
        if (s == CK_OK && !contiguous) {
            ck_array back;
            s = ck_array_reshape(&back, &flat, a->ndim, a->shape, 0);
            if (s == CK_OK) {
                s = ck_array_assign(a, &back);
                ck_array_release(&back);
            }
        }
    }
    if (flat.buf) ck_array_release(&flat);
    if (tiled.buf) ck_array_release(&tiled);
    if (vals.buf) ck_array_release(&vals);
    if (ind1.buf) ck_array_release(&ind1);
    return s;
}

/* The key of take_along_axis: for each other axis an arange shaped to
 * broadcast along it, and the indices on axis (NumPy's own construction). */
static ck_status along_key(ck_array *src, ck_array *ar, ck_index_item *items, const ck_array *a,
                           const ck_array *indices, int *axis, int axis_none)
{
    if (!ck_dtype_is_integer(indices->dtype))
        return ck_error_set(CK_ERR_INDEX, "`indices` must be an integer array");
    ck_status s;
    if (axis_none) {
        if (indices->ndim != 1)
            return ck_error_set(CK_ERR_VALUE, "when axis=None, `indices` must have a single dimension.");
        s = flatten(src, a);
        *axis = 0;
    } else {
        if (indices->ndim != a->ndim)
            return ck_error_set(CK_ERR_VALUE, "`indices` and `arr` must have the same number of dimensions");
        ck_array_view(src, a);
        s = CK_OK;
    }
    if (s == CK_OK) s = ck_axis_normalize(axis, src->ndim);
    if (s != CK_OK) {
        ck_array_release(src);
        return s;
    }
    for (int d = 0; d < src->ndim; d++) {
        items[d].kind = CK_INDEX_ARRAY;
        if (d == *axis) { items[d].array = indices; ar[d].buf = NULL; continue; }
        ck_array r;
        s = ck_arange(&r, 0, 1, src->shape[d], CK_INT64, ck_array_device(src));
        int64_t shape[CK_MAXDIMS];
        for (int j = 0; j < src->ndim; j++) shape[j] = j == d ? src->shape[d] : 1;
        if (s == CK_OK) {
            s = ck_array_reshape(&ar[d], &r, src->ndim, shape, 0);
            ck_array_release(&r);
        }
        if (s != CK_OK) {
            for (int j = 0; j < d; j++) if (ar[j].buf) ck_array_release(&ar[j]);
            ck_array_release(src);
            return s;
        }
        items[d].array = &ar[d];
    }
    return CK_OK;
}

static void along_release(ck_array *src, ck_array *ar)
{
    for (int j = 0; j < src->ndim; j++) if (ar[j].buf) ck_array_release(&ar[j]);
    ck_array_release(src);
}

ck_status ck_take_along_axis(ck_array *out, const ck_array *a, const ck_array *indices, int axis, int axis_none)
{
    ck_array src, ar[CK_MAXDIMS];
    ck_index_item items[CK_MAXDIMS];
    ck_status s = along_key(&src, ar, items, a, indices, &axis, axis_none);
    if (s != CK_OK) return s;
    s = ck_index_get(out, &src, src.ndim, items, CK_INDEX_RAISE);
    along_release(&src, ar);
    return s;
}

ck_status ck_put_along_axis(ck_array *a, const ck_array *indices, const ck_array *values, int axis, int axis_none)
{
    ck_array src, ar[CK_MAXDIMS];
    ck_index_item items[CK_MAXDIMS];
    ck_status s = along_key(&src, ar, items, a, indices, &axis, axis_none);
    if (s != CK_OK) return s;
    if (axis_none && src.data != a->data) {
        /* flattening copied: NumPy's put_along_axis needs a's own memory */
        along_release(&src, ar);
        return ck_error_set(CK_ERR_VALUE, "put_along_axis with axis=None needs a contiguous array");
    }
    s = ck_index_set(&src, src.ndim, items, values, CK_INDEX_RAISE);
    along_release(&src, ar);
    return s;
}
