/* Sorting and searching: argument checks, axis handling and dtype
 * resolution, then the backend's sort / searchsorted kernels.  The sort
 * axis is moved last into a C-contiguous working copy so that a kernel
 * only ever sorts contiguous rows; the result is moved back. */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

static ck_status need_sort_slot(const ck_array *a, int search)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(a));
    if (search ? be->searchsorted != NULL : be->sort != NULL) return CK_OK;
    char dev[32];
    ck_device_str(ck_array_device(a), dev, sizeof dev);
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "%s is not implemented on the %s device yet",
                        search ? "searchsorted" : "sorting (sort, argsort, partition)", dev);
}

/* a with axis moved last, as a new C-contiguous array (a 1-d copy when
 * axis_none); *axis receives the normalised axis. */
static ck_status axis_last_copy(ck_array *work, const ck_array *a, int *axis, int axis_none)
{
    if (axis_none) {
        int64_t n = a->size;
        ck_array flat;
        ck_status s = ck_array_reshape(&flat, a, 1, &n, 0);
        if (s != CK_OK) return s;
        s = ck_array_astype(work, &flat, a->dtype, 0);
        ck_array_release(&flat);
        *axis = 0;
        return s;
    }
    if (a->ndim == 0)
        return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension 0", *axis);
    ck_status s = ck_axis_normalize(axis, a->ndim);
    if (s != CK_OK) return s;
    int perm[CK_MAXDIMS], j = 0;
    for (int d = 0; d < a->ndim; d++) if (d != *axis) perm[j++] = d;
    perm[j] = *axis;
    ck_array t;
    s = ck_array_transpose(&t, a, perm);
    if (s != CK_OK) return s;
    s = ck_array_astype(work, &t, a->dtype, 0);
    ck_array_release(&t);
    return s;
}

/* work (axis last) back into a's axis order, C-contiguous. */
static ck_status axis_restore(ck_array *out, ck_array *work, int axis, int ndim)
{
    if (axis == ndim - 1 || ndim <= 1) {
        *out = *work;
        return CK_OK;
    }
    int perm[CK_MAXDIMS];
    for (int d = 0, j = 0; d < ndim; d++) perm[d] = d == axis ? ndim - 1 : j++;
    ck_array t;
    ck_status s = ck_array_transpose(&t, work, perm);
    if (s == CK_OK) {
        s = ck_array_astype(out, &t, work->dtype, 0);
        ck_array_release(&t);
    }
    ck_array_release(work);
    return s;
}

static ck_status run_sort(ck_array *out, const ck_array *a, int axis, int axis_none, int descending, int arg,
                          const int64_t *kth, int nkth)
{
    ck_status s = need_sort_slot(a, 0);
    if (s != CK_OK) return s;
    if (!axis_none && a->ndim > 0) {   /* an axis out of range fails before the fast path reads a 1-d array */
        int ax = axis;
        if ((s = ck_axis_normalize(&ax, a->ndim)) != CK_OK) return s;
    }
    ck_array work, idx = {0};
    /* values of a C-contiguous array along its last axis (or all of it):
     * the backend reads them where they are and writes a new array */
    const char *src = NULL;
    if (!arg && a->size > 0 && (a->flags & CK_ARRAY_C_CONTIGUOUS) &&
        (axis_none || a->ndim == 1 || (a->ndim > 1 && (axis == -1 || axis == a->ndim - 1)))) {
        int64_t n = a->size;
        s = ck_array_empty(&work, axis_none ? 1 : a->ndim, axis_none ? &n : a->shape, a->dtype, ck_array_device(a));
        if (s != CK_OK) return s;
        src = a->data;
        axis = axis_none ? 0 : a->ndim - 1;
    } else {
        s = axis_last_copy(&work, a, &axis, axis_none);
        if (s != CK_OK) return s;
    }
    int64_t len = work.ndim ? work.shape[work.ndim - 1] : 1;
    ck_sort_desc d;
    memset(&d, 0, sizeof d);
    d.dev = ck_array_device(a);
    d.type = a->dtype;
    d.descending = descending;
    d.sort_values = !arg;
    d.len = len;
    d.nrows = len ? work.size / len : 0;
    d.src = src;
    d.data = work.data;
    d.row_stride = len * ck_array_itemsize(&work);
    d.elem_stride = ck_array_itemsize(&work);
    d.kth = arg ? NULL : kth;
    d.nkth = nkth;
    if (arg) {
        s = ck_array_empty(&idx, work.ndim, work.shape, CK_INT64, ck_array_device(a));
        if (s != CK_OK) { ck_array_release(&work); return s; }
        d.idx = (int64_t *)idx.data;
        d.idx_row_stride = len;
        d.idx_elem_stride = 1;
    }
    s = ck_backend_for(d.dev)->sort(&d);
    if (arg) {
        ck_array_release(&work);
        work = idx;
    }
    if (s != CK_OK) {
        ck_array_release(&work);
        return s;
    }
    return axis_restore(out, &work, axis, axis_none ? 1 : a->ndim);
}

ck_status ck_sort(ck_array *out, const ck_array *a, int axis, int axis_none, int stable, int descending)
{
    (void)stable;   /* the kernel is always stable */
    return run_sort(out, a, axis, axis_none, descending, 0, NULL, 0);
}

ck_status ck_argsort(ck_array *out, const ck_array *a, int axis, int axis_none, int stable, int descending)
{
    (void)stable;
    return run_sort(out, a, axis, axis_none, descending, 1, NULL, 0);
}

ck_status ck_partition(ck_array *out, const ck_array *a, const int64_t *kth, int nkth, int axis, int axis_none,
                       int arg)
{
    int ax = axis;
    int64_t len;
    if (axis_none) {
        len = a->size;
    } else {
        if (a->ndim == 0) return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension 0", axis);
        ck_status s = ck_axis_normalize(&ax, a->ndim);
        if (s != CK_OK) return s;
        len = a->shape[ax];
    }
    /* an empty array has no kth to be out of bounds of (as NumPy) */
    for (int i = 0; i < nkth && a->size; i++)
        if (kth[i] < -len || kth[i] >= len)
            return ck_error_set(CK_ERR_VALUE, "kth(=%lld) out of bounds (%lld)", (long long)kth[i], (long long)len);
    /* the backend may select rather than sort: it takes the positions
     * ascending, each once */
    enum { MAXK = 64 };
    int64_t ks[MAXK];
    int nk = 0;
    for (int i = 0; i < nkth && nkth <= MAXK && a->size; i++) {
        int64_t k = kth[i] < 0 ? kth[i] + len : kth[i];
        int j = 0;
        while (j < nk && ks[j] < k) j++;
        if (j < nk && ks[j] == k) continue;
        memmove(ks + j + 1, ks + j, (size_t)(nk - j) * sizeof *ks);
        ks[j] = k;
        nk++;
    }
    int select = nkth > 0 && nkth <= MAXK && a->size;
    return run_sort(out, a, ax, axis_none, 0, arg, select ? ks : NULL, select ? nk : 0);
}

/* a as a C-contiguous array of dtype dt (a view when it already is one). */
static ck_status contig_as(ck_array *out, const ck_array *a, ck_dtype dt)
{
    if (a->dtype == dt && (a->flags & CK_ARRAY_C_CONTIGUOUS)) {
        ck_array_view(out, a);
        return CK_OK;
    }
    return ck_array_astype(out, a, dt, 0);
}

ck_status ck_histogram(ck_array *out, const ck_array *x, const ck_array *weights, const ck_array *edges,
                       int64_t nbins, int uniform)
{
    const char *what = edges ? "histogram" : "bincount";
    ck_device dev = ck_array_device(x);
    if (nbins < 0) return ck_error_set(CK_ERR_VALUE, "%s: %lld bins", what, (long long)nbins);
    if (ck_dtype_is_complex(x->dtype))
        return ck_error_set(CK_ERR_TYPE, "%s: x must be real, not %s", what, ck_dtype_get_info(x->dtype)->name);
    if (!edges && !ck_dtype_is_integer(x->dtype) && x->dtype != CK_BOOL)
        return ck_error_set(CK_ERR_TYPE, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                            ck_dtype_get_info(x->dtype)->name);
    if (edges && (edges->ndim != 1 || edges->size != nbins + 1 || nbins < 1))
        return ck_error_set(CK_ERR_VALUE, "histogram: %lld edges for %lld bins", (long long)edges->size, (long long)nbins);
    if (weights && weights->size != x->size)
        return ck_error_set(CK_ERR_VALUE, "%s: %lld weights for %lld values", what, (long long)weights->size,
                            (long long)x->size);
    if (weights && ck_dtype_is_complex(weights->dtype))
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "%s: complex weights are not implemented", what);
    if ((weights && !ck_device_equal(dev, ck_array_device(weights))) ||
        (edges && !ck_device_equal(dev, ck_array_device(edges))))
        return ck_error_set(CK_ERR_VALUE, "%s: x, weights and bins must be on one device", what);
    const ck_backend_iface *be = ck_backend_for(dev);
    if (!be->histogram) {
        char name[32];
        ck_device_str(dev, name, sizeof name);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "%s is not implemented on the %s device", what, name);
    }
    /* values as float32 (float16 exactly so) or float64 (NumPy bins
     * integers as float64); bins as int64 */
    ck_dtype xt = !edges ? CK_INT64 : (x->dtype == CK_FLOAT32 || x->dtype == CK_FLOAT16) ? CK_FLOAT32 : CK_FLOAT64;
    ck_array xs = {0}, ws = {0}, es = {0};
    ck_status s = ck_array_empty(out, 1, &nbins, weights ? CK_FLOAT64 : CK_INT64, dev);
    if (s != CK_OK) return s;
    ck_scalar zero = {.dtype = CK_INT64, .v.i = 0};
    if ((s = ck_array_fill(out, &zero)) == CK_OK && x->size) {
        int64_t n = x->size;
        ck_array flat;
        if ((s = ck_array_reshape(&flat, x, 1, &n, 0)) == CK_OK) {
            s = contig_as(&xs, &flat, xt);
            ck_array_release(&flat);
        }
        if (s == CK_OK && weights && (s = ck_array_reshape(&flat, weights, 1, &n, 0)) == CK_OK) {
            s = contig_as(&ws, &flat, CK_FLOAT64);
            ck_array_release(&flat);
        }
        if (s == CK_OK && edges) s = contig_as(&es, edges, CK_FLOAT64);
        if (s == CK_OK) {
            ck_histogram_desc d = {.dev = dev, .type = xt, .n = n, .nb = nbins, .uniform = uniform, .x = xs.data,
                                   .w = weights ? (const double *)ws.data : NULL,
                                   .edges = edges ? (const double *)es.data : NULL, .out = out->data};
            s = be->histogram(&d);
        }
    }
    if (xs.buf) ck_array_release(&xs);
    if (ws.buf) ck_array_release(&ws);
    if (es.buf) ck_array_release(&es);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_searchsorted(ck_array *out, const ck_array *a, const ck_array *v, int side_right,
                          const ck_array *sorter)
{
    if (a->ndim != 1) return ck_error_set(CK_ERR_VALUE, "object too deep for desired array");
    ck_status s = need_sort_slot(a, 1);
    if (s != CK_OK) return s;
    ck_device dev = ck_array_device(a);
    if (!ck_device_equal(dev, ck_array_device(v)))
        return ck_error_set(CK_ERR_VALUE, "searchsorted: a and v are on different devices");
    ck_dtype t = ck_dtype_promote(a->dtype, v->dtype);
    if (t == CK_DTYPE_INVALID) return ck_error_set(CK_ERR_TYPE, "searchsorted: no common dtype for a and v");
    ck_array ac = {0}, vc = {0}, sorted = {0};
    if (sorter) {
        if (sorter->ndim != 1 || sorter->size != a->size)
            return ck_error_set(CK_ERR_VALUE, "sorter.size must equal a.size");
        if (!ck_dtype_is_integer(sorter->dtype)) return ck_error_set(CK_ERR_TYPE, "sorter must only contain integers");
        s = ck_take(&sorted, a, sorter, 0, 0, CK_INDEX_RAISE);
        if (s != CK_OK) {
            /* NumPy's word for a bad sorter */
            if (ck_error_status() == CK_ERR_INDEX) { ck_error_clear(); s = ck_error_set(CK_ERR_VALUE, "Sorter index out of range."); }
            return s;
        }
        a = &sorted;
    }
    s = ck_array_astype(&ac, a, t, 0);
    if (s == CK_OK) s = ck_array_astype(&vc, v, t, 0);
    if (s == CK_OK) s = ck_array_empty(out, v->ndim, v->shape, CK_INT64, dev);
    if (s == CK_OK) {
        ck_searchsorted_desc d;
        memset(&d, 0, sizeof d);
        d.dev = dev;
        d.type = t;
        d.side_right = side_right;
        d.na = ac.size;
        d.nv = vc.size;
        d.a = ac.data;
        d.v = vc.data;
        d.out = (int64_t *)out->data;
        s = ck_backend_for(dev)->searchsorted(&d);
        if (s != CK_OK) ck_array_release(out);
    }
    if (ac.buf) ck_array_release(&ac);
    if (vc.buf) ck_array_release(&vc);
    if (sorted.buf) ck_array_release(&sorted);
    return s;
}
