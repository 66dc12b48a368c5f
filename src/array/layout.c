#include "layout.h"

#include <stdio.h>
#include <string.h>

void ck_strides_c(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides)
{
    int64_t s = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
}

void ck_strides_f(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides)
{
    int64_t s = itemsize;
    for (int i = 0; i < ndim; i++) {
        strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
}

void ck_strides_like(int ndim, const int64_t *shape, int64_t itemsize, const int64_t *like, int64_t *strides)
{
    /* axes from the largest |stride| of like to the smallest, stable, as NumPy's order='K' */
    int perm[CK_MAXDIMS];
    for (int i = 0; i < ndim; i++) perm[i] = i;
    for (int i = 1; i < ndim; i++) {
        int p = perm[i], j = i;
        int64_t sp = like[p] < 0 ? -like[p] : like[p];
        for (; j > 0; j--) {
            int64_t sq = like[perm[j - 1]] < 0 ? -like[perm[j - 1]] : like[perm[j - 1]];
            if (sq >= sp) break;
            perm[j] = perm[j - 1];
        }
        perm[j] = p;
    }
    int64_t s = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[perm[i]] = s;
        s *= shape[perm[i]] > 0 ? shape[perm[i]] : 1;
    }
}

int64_t ck_shape_size(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int zero = 0;
    /* a negative extent anywhere is an error, also after a zero: (0, -1) */
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        zero |= shape[i] == 0;
    }
    if (zero) return 0;
    for (int i = 0; i < ndim; i++) {
        if (__builtin_mul_overflow(n, shape[i], &n)) return -1;
    }
    return n;
}

int ck_layout_is_c_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize)
{
    int64_t s = itemsize;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] != 1 && strides[i] != s) return 0;
        s *= shape[i];
    }
    return 1;
}

int ck_layout_is_f_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize)
{
    int64_t s = itemsize;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 1 && strides[i] != s) return 0;
        s *= shape[i];
    }
    return 1;
}

void ck_array_update_flags(ck_array *a)
{
    int64_t isz = ck_dtype_get_info(a->dtype)->itemsize;
    a->flags &= ~(CK_ARRAY_C_CONTIGUOUS | CK_ARRAY_F_CONTIGUOUS);
    if (ck_layout_is_c_contiguous(a->ndim, a->shape, a->strides, isz)) a->flags |= CK_ARRAY_C_CONTIGUOUS;
    if (ck_layout_is_f_contiguous(a->ndim, a->shape, a->strides, isz)) a->flags |= CK_ARRAY_F_CONTIGUOUS;
    a->size = ck_shape_size(a->ndim, a->shape);
}

void ck_array_set_layout(ck_array *a, int ndim, const int64_t *shape, const int64_t *strides)
{
    a->ndim = ndim;
    if (ndim) {
        memmove(a->shape, shape, (size_t)ndim * sizeof *shape);
        memmove(a->strides, strides, (size_t)ndim * sizeof *strides);
    }
    ck_array_update_flags(a);
}

void ck_layout_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                      int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = itemsize;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { *lo = 0; *hi = 0; return; }
        int64_t span = (shape[i] - 1) * strides[i];
        if (span < 0) l += span; else h += span;
    }
    *lo = l;
    *hi = h;
}

int ck_array_may_overlap(const ck_array *a, const ck_array *b)
{
    /* by address, not by buffer: one memory can reach us through two
     * buffers (a NumPy array wrapped twice) */
    if (a->size == 0 || b->size == 0 || !ck_device_equal(a->buf->device, b->buf->device)) return 0;
    int64_t alo, ahi, blo, bhi;
    ck_layout_extent(a->ndim, a->shape, a->strides, ck_array_itemsize(a), &alo, &ahi);
    ck_layout_extent(b->ndim, b->shape, b->strides, ck_array_itemsize(b), &blo, &bhi);
    /* integers, not pointers: the two may come from unrelated allocations */
    uintptr_t a0 = (uintptr_t)a->data + (uintptr_t)alo, a1 = (uintptr_t)a->data + (uintptr_t)ahi;
    uintptr_t b0 = (uintptr_t)b->data + (uintptr_t)blo, b1 = (uintptr_t)b->data + (uintptr_t)bhi;
    return a0 < b1 && b0 < a1;
}

ck_status ck_axis_normalize(int *axis, int ndim)
{
    int ax = *axis;
    if (ax < -ndim || ax >= ndim)
        return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", ax, ndim);
    *axis = ax < 0 ? ax + ndim : ax;
    return CK_OK;
}

ck_status ck_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes,
                              int *out_ndim, int64_t *out_shape)
{
    int nd = 0;
    for (int k = 0; k < n; k++)
        if (ndims[k] > nd) nd = ndims[k];
    for (int i = 0; i < nd; i++) out_shape[i] = 1;
    for (int k = 0; k < n; k++) {
        int off = nd - ndims[k];
        for (int i = 0; i < ndims[k]; i++) {
            int64_t d = shapes[k][i], *o = &out_shape[off + i];
            if (d == *o || d == 1) continue;
            if (*o == 1) { *o = d; continue; }
            /* NumPy's message lists the shapes */
            char buf[512];
            size_t pos = 0;
            for (int q = 0; q < n && pos < sizeof buf - 64; q++) {
                pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s(", q ? " " : "");
                for (int j = 0; j < ndims[q] && pos < sizeof buf - 32; j++)
                    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%lld", j ? "," : "",
                                            (long long)shapes[q][j]);
                pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s)", ndims[q] == 1 ? "," : "");
            }
            return ck_error_set(CK_ERR_VALUE,
                                "operands could not be broadcast together with shapes %s", buf);
        }
    }
    *out_ndim = nd;
    return CK_OK;
}

int ck_layout_merge(int nops, int ndim, const int64_t *shape, const ck_iter_operand *ops, int sort,
                    int64_t *out_shape, int64_t *out_strides)
{
#define ST_(k, d) out_strides[(k) * CK_MAXDIMS + (d)]
    /* innermost first: reverse the C order, drop unit dimensions; an
     * operand with fewer dims, or extent 1 where shape is larger, has a
     * zero stride there (broadcasting) */
    int m = 0;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] == 1) continue;
        out_shape[m] = shape[i];
        for (int k = 0; k < nops; k++) {
            int j = i - (ndim - ops[k].ndim);
            ST_(k, m) = (j < 0 || ops[k].shape[j] == 1) ? 0 : ops[k].strides[j];
        }
        m++;
    }
    /* Order by the first operand's (the output's) absolute strides, so an F
     * ordered or transposed output is walked in memory order.  Insertion
     * sort: ndim is small.  Stable, so C order is kept on ties. */
    for (int i = 1; i < m && sort; i++) {
        for (int j = i; j > 0; j--) {
            int64_t a = ST_(0, j), b = ST_(0, j - 1);
            if ((a < 0 ? -a : a) >= (b < 0 ? -b : b)) break;
            int64_t t = out_shape[j]; out_shape[j] = out_shape[j - 1]; out_shape[j - 1] = t;
            for (int k = 0; k < nops; k++) {
                t = ST_(k, j); ST_(k, j) = ST_(k, j - 1); ST_(k, j - 1) = t;
            }
        }
    }
    /* merge dimension j into the current one when every operand's strides chain */
    int w = 0;
    for (int j = 1; j < m; j++) {
        int ok = 1;
        for (int k = 0; k < nops && ok; k++)
            ok = ST_(k, j) == ST_(k, w) * out_shape[w];
        if (ok) {
            out_shape[w] *= out_shape[j];
        } else {
            w++;
            out_shape[w] = out_shape[j];
            for (int k = 0; k < nops; k++) ST_(k, w) = ST_(k, j);
        }
    }
#undef ST_
    return m ? w + 1 : 0;
}

void ck_iter_prepare(ck_iter *it, int nops, int ndim, const int64_t *shape,
                     const ck_iter_operand *ops)
{
    int64_t size = 1;
    for (int i = 0; i < ndim; i++) size *= shape[i];
    it->nops = nops;
    it->size = size;
    for (int k = 0; k < nops; k++) it->data[k] = ops[k].data;
    if (size == 0) {
        it->ndim = 1;
        it->shape[0] = 0;
        for (int k = 0; k < nops; k++) it->strides[k][0] = 0;
        return;
    }
    int m = ck_layout_merge(nops, ndim, shape, ops, 1, it->shape, &it->strides[0][0]);
    if (m == 0) {
        /* one element: the strides NumPy's loops see (clip tells a constant
         * bound by them).  With an operand of some dims but fewer than the
         * result's, NumPy's iterator zeroes them all; otherwise an operand
         * of the result's dims keeps its innermost stride, a 0-d one 0. */
        it->ndim = 1;
        it->shape[0] = 1;
        int partial = 0;
        for (int k = 0; k < nops; k++) partial |= ops[k].ndim > 0 && ops[k].ndim < ndim;
        for (int k = 0; k < nops; k++)
            it->strides[k][0] = !partial && ops[k].ndim == ndim && ndim > 0 ? ops[k].strides[ndim - 1] : 0;
    } else {
        it->ndim = m;
    }
}

int ck_layout_reshape_strides(int ndim, const int64_t *shape, const int64_t *strides,
                              int new_ndim, const int64_t *new_shape, int64_t itemsize,
                              int order_f, int64_t *new_strides)
{
    /* Drop unit dims of the old layout, then match groups of old dims whose
     * strides chain against groups of new dims with the same product (the
     * algorithm NumPy's _attempt_nocopy_reshape uses). */
    int64_t os[CK_MAXDIMS], ot[CK_MAXDIMS];
    int on = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {  /* empty: any strides do */
            if (order_f) ck_strides_f(new_ndim, new_shape, itemsize, new_strides);
            else ck_strides_c(new_ndim, new_shape, itemsize, new_strides);
            return 1;
        }
        if (shape[i] != 1) { os[on] = shape[i]; ot[on] = strides[i]; on++; }
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < new_ndim && oi < on) {
        int64_t np_ = new_shape[ni], op = os[oi];
        while (np_ != op) {
            if (np_ < op) np_ *= new_shape[nj++];
            else op *= os[oj++];
        }
        for (int k = oi; k < oj - 1; k++) {
            if (!order_f) { if (ot[k] != os[k + 1] * ot[k + 1]) return 0; }
            else { if (ot[k + 1] != os[k] * ot[k]) return 0; }
        }
        if (!order_f) {
            new_strides[nj - 1] = ot[oj - 1];
            for (int k = nj - 1; k > ni; k--) new_strides[k - 1] = new_strides[k] * new_shape[k];
        } else {
            new_strides[ni] = ot[oi];
            for (int k = ni + 1; k < nj; k++) new_strides[k] = new_strides[k - 1] * new_shape[k - 1];
        }
        ni = nj++;
        oi = oj++;
    }
    /* trailing unit dims of the new shape */
    int64_t last = ni > 0 ? new_strides[ni - 1] : itemsize;
    for (int k = ni; k < new_ndim; k++) new_strides[k] = last;
    return 1;
}

static _Thread_local char ck_shape_bufs_[2][CK_MAXDIMS * 22 + 4];

const char *ck_shape_str(int ndim, const int64_t *shape, int slot)
{
    char *b = ck_shape_bufs_[slot & 1];
    size_t pos = 0, n = sizeof ck_shape_bufs_[0];
    pos += (size_t)snprintf(b, n, "(");
    for (int i = 0; i < ndim; i++)
        pos += (size_t)snprintf(b + pos, n - pos, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(b + pos, n - pos, "%s)", ndim == 1 ? "," : "");
    return b;
}
