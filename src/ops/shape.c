/* Shape manipulation (NumPy's join, split, repeat, pad and diagonal
 * functions).  Only views and ck_array_assign / ck_array_fill / ufuncs are
 * used (and one gather for repeat with per-element counts), so the
 * backends need nothing new and the GPU gets it for free; joins use the
 * optional copy_pieces slot where a backend has it (all pieces in one
 * launch on the GPU). */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

/* A view of a restricted to [start, start + len) with step along axis.
 * The data pointer moves only for a non-empty result, keeping the
 * "every addressed element lies in buf" invariant for empty views. */
static void slice_axis(ck_array *v, const ck_array *a, int axis, int64_t start, int64_t len, int64_t step)
{
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    memcpy(shape, a->shape, (size_t)a->ndim * sizeof *shape);
    memcpy(strides, a->strides, (size_t)a->ndim * sizeof *strides);
    ck_array_view(v, a);
    if (len > 0) v->data += start * a->strides[axis];
    shape[axis] = len;
    strides[axis] *= step;
    ck_array_set_layout(v, a->ndim, shape, strides);
}

static ck_status assign_slice(ck_array *dst, int axis, int64_t start, int64_t len, const ck_array *src)
{
    ck_array v;
    slice_axis(&v, dst, axis, start, len, 1);
    ck_status s = ck_array_assign(&v, src);
    ck_array_release(&v);
    return s;
}

static ck_status axis_error(int axis, int ndim)
{
    return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, ndim);
}

/* ---------------------------------------------------------------- views */

ck_status ck_array_squeeze(ck_array *out, const ck_array *a, uint64_t axis_mask, int all_ones)
{
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    int nd = 0;
    for (int i = 0; i < a->ndim; i++) {
        int drop = all_ones ? a->shape[i] == 1 : (int)((axis_mask >> i) & 1);
        if (drop && a->shape[i] != 1)
            return ck_error_set(CK_ERR_VALUE, "cannot select an axis to squeeze out which has size not equal to one");
        if (drop) continue;
        shape[nd] = a->shape[i];
        strides[nd++] = a->strides[i];
    }
    ck_array_view(out, a);
    ck_array_set_layout(out, nd, shape, strides);
    return CK_OK;
}

ck_status ck_array_expand_dims(ck_array *out, const ck_array *a, int naxes, const int *axes)
{
    int nd = a->ndim + naxes;
    if (naxes < 0 || nd > CK_MAXDIMS)
        return ck_error_set(CK_ERR_VALUE, "maximum supported dimension for an ndarray is %d, found %d", CK_MAXDIMS, nd);
    int isnew[CK_MAXDIMS] = {0};
    for (int i = 0; i < naxes; i++) {
        int ax = axes[i];
        if (ck_axis_normalize(&ax, nd) != CK_OK) return ck_error_status();
        if (isnew[ax]) return ck_error_set(CK_ERR_VALUE, "repeated axis");
        isnew[ax] = 1;
    }
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    int64_t isz = ck_array_itemsize(a);
    /* walk from the right so a new axis can take the stride that keeps a
     * contiguous input contiguous (its neighbour's extent) */
    int j = a->ndim - 1;
    int64_t next = isz;
    for (int i = nd - 1; i >= 0; i--) {
        if (isnew[i]) {
            shape[i] = 1;
            strides[i] = next;
        } else {
            shape[i] = a->shape[j];
            strides[i] = a->strides[j];
            next = a->strides[j] * (a->shape[j] ? a->shape[j] : 1);
            j--;
        }
    }
    ck_array_view(out, a);
    ck_array_set_layout(out, nd, shape, strides);
    return CK_OK;
}

ck_status ck_array_moveaxis(ck_array *out, const ck_array *a, int n, const int *src, const int *dst)
{
    int nd = a->ndim, s[CK_MAXDIMS], d[CK_MAXDIMS], used_s[CK_MAXDIMS] = {0}, used_d[CK_MAXDIMS] = {0};
    if (n < 0 || n > nd) {
        if (n > nd) {
            /* more axes than dimensions: one of them repeats or is out of range */
            for (int i = 0; i < n; i++) {
                int x = src[i];
                if (ck_axis_normalize(&x, nd) != CK_OK) return ck_error_status();
            }
        }
        return ck_error_set(CK_ERR_VALUE, "repeated axis in `source` argument");
    }
    for (int i = 0; i < n; i++) {
        s[i] = src[i];
        d[i] = dst[i];
        if (ck_axis_normalize(&s[i], nd) != CK_OK) return ck_error_status();
        if (ck_axis_normalize(&d[i], nd) != CK_OK) return ck_error_status();
    }
    for (int i = 0; i < n; i++) {
        if (used_s[s[i]]) return ck_error_set(CK_ERR_VALUE, "repeated axis in `source` argument");
        if (used_d[d[i]]) return ck_error_set(CK_ERR_VALUE, "repeated axis in `destination` argument");
        used_s[s[i]] = used_d[d[i]] = 1;
    }
    int perm[CK_MAXDIMS], k = 0;
    for (int i = 0; i < nd; i++) perm[i] = -1;
    for (int i = 0; i < n; i++) perm[d[i]] = s[i];
    for (int i = 0; i < nd; i++) {
        if (used_s[i]) continue;
        while (perm[k] >= 0) k++;
        perm[k++] = i;
    }
    return ck_array_transpose(out, a, perm);
}

ck_status ck_array_swapaxes(ck_array *out, const ck_array *a, int axis1, int axis2)
{
    if (ck_axis_normalize(&axis1, a->ndim) != CK_OK || ck_axis_normalize(&axis2, a->ndim) != CK_OK)
        return ck_error_status();
    int perm[CK_MAXDIMS];
    for (int i = 0; i < a->ndim; i++) perm[i] = i;
    perm[axis1] = axis2;
    perm[axis2] = axis1;
    return ck_array_transpose(out, a, perm);
}

ck_status ck_array_flip(ck_array *out, const ck_array *a, uint64_t axis_mask)
{
    int64_t strides[CK_MAXDIMS];
    char *data = a->data;
    for (int i = 0; i < a->ndim; i++) {
        strides[i] = a->strides[i];
        if (!((axis_mask >> i) & 1)) continue;
        if (a->shape[i] > 0) data += (a->shape[i] - 1) * a->strides[i];
        strides[i] = -a->strides[i];
    }
    ck_array_view(out, a);
    if (a->size > 0) out->data = data;
    ck_array_set_layout(out, a->ndim, a->shape, strides);
    return CK_OK;
}

ck_status ck_array_diagonal(ck_array *out, const ck_array *a, int64_t offset, int axis1, int axis2)
{
    if (a->ndim < 2) return ck_error_set(CK_ERR_VALUE, "diag requires an array of at least two dimensions");
    if (ck_axis_normalize(&axis1, a->ndim) != CK_OK || ck_axis_normalize(&axis2, a->ndim) != CK_OK)
        return ck_error_status();
    if (axis1 == axis2) return ck_error_set(CK_ERR_VALUE, "axis1 and axis2 cannot be the same");
    int64_t n1 = a->shape[axis1], n2 = a->shape[axis2], len, skip;
    if (offset >= 0) {
        len = n2 - offset < n1 ? n2 - offset : n1;
        skip = offset * a->strides[axis2];
    } else {
        len = n1 + offset < n2 ? n1 + offset : n2;
        skip = -offset * a->strides[axis1];
    }
    if (len < 0) len = 0;
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    int nd = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (i == axis1 || i == axis2) continue;
        shape[nd] = a->shape[i];
        strides[nd++] = a->strides[i];
    }
    shape[nd] = len;
    strides[nd++] = a->strides[axis1] + a->strides[axis2];
    ck_array_view(out, a);
    ck_array_set_layout(out, nd, shape, strides);
    if (out->size > 0) out->data += skip;
    /* NumPy makes diagonals read-only so writes do not surprise */
    out->flags &= ~CK_ARRAY_WRITEABLE;
    return CK_OK;
}

/* ----------------------------------------------------------- joining */

static ck_status check_inputs(int n, const ck_array *const *arrays, ck_dtype *dt, const char *what)
{
    if (n <= 0) return ck_error_set(CK_ERR_VALUE, "need at least one array to %s", what);
    ck_dtype small[64], *types = n <= 64 ? small : malloc((size_t)n * sizeof *types);
    if (!types) return ck_error_set(CK_ERR_MEMORY, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!ck_device_equal(ck_array_device(arrays[i]), ck_array_device(arrays[0]))) {
            if (types != small) free(types);
            return ck_error_set(CK_ERR_VALUE, "all the input arrays must be on the same device");
        }
        types[i] = arrays[i]->dtype;
    }
    if (*dt == CK_DTYPE_INVALID) *dt = ck_dtype_promote_many(n, types);
    if (types != small) free(types);
    return CK_OK;
}

/* How the inputs of a join become its pieces: as they are (concatenate),
 * with a new axis of length 1 (stack), or flattened (axis=None). */
typedef enum join_how { JOIN_AXIS, JOIN_NEW_AXIS, JOIN_FLAT } join_how;

/* Input x as a piece of out's ndim: a view, or for a flat piece whose
 * layout cannot be viewed flat a copy. */
static ck_status join_piece(ck_array *v, const ck_array *x, join_how how, int axis)
{
    if (how == JOIN_FLAT) {
        int64_t size = x->size;
        return ck_array_reshape(v, x, 1, &size, 0);
    }
    ck_array_view(v, x);
    if (how == JOIN_NEW_AXIS) {
        int64_t sh[CK_MAXDIMS], st[CK_MAXDIMS];
        for (int d = 0, j = 0; d <= x->ndim; d++) {
            if (d == axis) {
                sh[d] = 1;
                st[d] = 0;
                continue;
            }
            sh[d] = x->shape[j];
            st[d] = x->strides[j++];
        }
        ck_array_set_layout(v, x->ndim + 1, sh, st);
    }
    return CK_OK;
}

/* Piece by piece: one ck_array_assign each (a flat piece lands in the
 * output reshaped to its shape, so that it is never copied first). */
static ck_status join_assign(ck_array *out, int n, const ck_array *const *arrays, join_how how, int axis)
{
    ck_status s = CK_OK;
    int64_t off = 0;
    for (int i = 0; i < n && s == CK_OK; i++) {
        const ck_array *x = arrays[i];
        ck_array v;
        if (how == JOIN_FLAT) {
            ck_array piece;
            slice_axis(&piece, out, 0, off, x->size, 1);
            s = ck_array_reshape(&v, &piece, x->ndim, x->shape, 0);
            ck_array_release(&piece);
            if (s != CK_OK) break;
            s = ck_array_assign(&v, x);
            off += x->size;
        } else {
            if ((s = join_piece(&v, x, how, axis)) != CK_OK) break;
            s = assign_slice(out, axis, off, v.shape[axis], &v);
            off += v.shape[axis];
        }
        ck_array_release(&v);
    }
    return s;
}

/* Copy the inputs' pieces into out one after another along axis.  A
 * backend with the copy_pieces slot gets them CK_PIECES_MAX at a time (one
 * launch on the GPU); a piece of another dtype than out's is cast first,
 * one cast each, so that the slot only moves bytes: the one-launch path is
 * for pieces of out's dtype.  Other backends assign piece by piece. */
static ck_status join_into(ck_array *out, int n, const ck_array *const *arrays, join_how how, int axis)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(out));
    if (!be->copy_pieces || out->size == 0) return join_assign(out, n, arrays, how, axis);
    ck_pieces_desc *d = malloc(sizeof *d);
    /* the pieces of one call and their casts, alive until it is made */
    ck_array *held = malloc(2 * CK_PIECES_MAX * sizeof *held);
    if (!d || !held) {
        free(d);
        free(held);
        return ck_error_set(CK_ERR_MEMORY, "out of memory planning a concatenate");
    }
    memset(d, 0, sizeof *d);
    d->dev = ck_array_device(out);
    d->itemsize = ck_array_itemsize(out);
    d->ndim = out->ndim;
    d->axis = axis;
    memcpy(d->shape, out->shape, (size_t)out->ndim * sizeof *d->shape);
    memcpy(d->out_strides, out->strides, (size_t)out->ndim * sizeof *d->out_strides);
    d->out = out->data;
    int nheld = 0;
    int64_t off = 0;
    ck_status s = CK_OK;
    for (int i = 0; i < n && s == CK_OK; i++) {
        ck_array *x = &held[nheld];
        if ((s = join_piece(x, arrays[i], how, axis)) != CK_OK) break;
        nheld++;
        int64_t len = x->shape[axis];
        if (len == 0) {
            ck_array_release(&held[--nheld]);
            continue;
        }
        if (x->dtype != out->dtype) {
            if ((s = ck_array_astype(&held[nheld], x, out->dtype, 0)) != CK_OK) break;
            x = &held[nheld++];
        }
        ck_piece *pc = &d->pieces[d->npieces++];
        pc->data = x->data;
        pc->offset = off;
        pc->len = len;
        memcpy(pc->strides, x->strides, (size_t)x->ndim * sizeof *pc->strides);
        off += len;
        if (d->npieces == CK_PIECES_MAX) {
            s = be->copy_pieces(d);
            d->npieces = 0;
            /* stream-ordered frees: the launch still reads them safely */
            while (nheld > 0) ck_array_release(&held[--nheld]);
        }
    }
    if (s == CK_OK && d->npieces > 0) s = be->copy_pieces(d);
    while (nheld > 0) ck_array_release(&held[--nheld]);
    free(held);
    free(d);
    return s;
}

/* The result's shape of a join (and the axis normalised), checking the
 * inputs' shapes as NumPy does. */
static ck_status join_shape(int n, const ck_array *const *arrays, join_how how, int *axis, int *nd, int64_t *shape)
{
    if (how == JOIN_FLAT) {
        *nd = 1;
        shape[0] = 0;
        for (int i = 0; i < n; i++) shape[0] += arrays[i]->size;
        *axis = 0;
        return CK_OK;
    }
    int ind = arrays[0]->ndim;
    if (how == JOIN_NEW_AXIS) {
        for (int i = 1; i < n; i++)
            if (arrays[i]->ndim != ind || memcmp(arrays[i]->shape, arrays[0]->shape, (size_t)ind * sizeof(int64_t)))
                return ck_error_set(CK_ERR_VALUE, "all input arrays must have the same shape");
        if (ind + 1 > CK_MAXDIMS)
            return ck_error_set(CK_ERR_VALUE, "maximum supported dimension for an ndarray is %d, found %d", CK_MAXDIMS,
                                ind + 1);
        if (ck_axis_normalize(axis, ind + 1) != CK_OK) return ck_error_status();
        *nd = ind + 1;
        for (int d = 0, j = 0; d <= ind; d++) shape[d] = d == *axis ? n : arrays[0]->shape[j++];
        return CK_OK;
    }
    if (ind == 0) return ck_error_set(CK_ERR_VALUE, "zero-dimensional arrays cannot be concatenated");
    if (ck_axis_normalize(axis, ind) != CK_OK) return ck_error_status();
    const int ax = *axis;
    memcpy(shape, arrays[0]->shape, (size_t)ind * sizeof *shape);
    shape[ax] = 0;
    for (int i = 0; i < n; i++) {
        const ck_array *x = arrays[i];
        if (x->ndim != ind)
            return ck_error_set(CK_ERR_VALUE, "all the input array dimensions except for the concatenation axis must "
                                "match exactly, but the array at index 0 has %d dimension(s) and the array at index %d "
                                "has %d dimension(s)", ind, i, x->ndim);
        for (int d = 0; d < ind; d++)
            if (d != ax && x->shape[d] != arrays[0]->shape[d])
                return ck_error_set(CK_ERR_VALUE, "all the input array dimensions except for the concatenation axis "
                                    "must match exactly, but along dimension %d, the array at index 0 has size %lld "
                                    "and the array at index %d has size %lld", d, (long long)arrays[0]->shape[d], i,
                                    (long long)x->shape[d]);
        shape[ax] += x->shape[ax];
    }
    *nd = ind;
    return CK_OK;
}

static ck_status join_new(ck_array *out, int n, const ck_array *const *arrays, join_how how, int axis, ck_dtype dt)
{
    ck_status s = check_inputs(n, arrays, &dt, how == JOIN_NEW_AXIS ? "stack" : "concatenate");
    if (s != CK_OK) return s;
    int nd;
    int64_t shape[CK_MAXDIMS];
    if ((s = join_shape(n, arrays, how, &axis, &nd, shape)) != CK_OK) return s;
    if ((s = ck_array_empty(out, nd, shape, dt, ck_array_device(arrays[0]))) != CK_OK) return s;
    if ((s = join_into(out, n, arrays, how, axis)) != CK_OK) ck_array_release(out);
    return s;
}

/* Into a given out: of the result's shape, on the inputs' device; the
 * inputs are cast to its dtype.  When an input may share memory with out,
 * piece by piece as NumPy does. */
static ck_status join_out(ck_array *out, int n, const ck_array *const *arrays, join_how how, int axis)
{
    ck_dtype dt = out->dtype;
    ck_status s = check_inputs(n, arrays, &dt, how == JOIN_NEW_AXIS ? "stack" : "concatenate");
    if (s != CK_OK) return s;
    if (!(out->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "output array is read-only");
    if (!ck_device_equal(ck_array_device(out), ck_array_device(arrays[0])))
        return ck_error_set(CK_ERR_VALUE, "the output array must be on the inputs' device");
    int nd, ax = axis;
    int64_t shape[CK_MAXDIMS];
    if ((s = join_shape(n, arrays, how, &ax, &nd, shape)) != CK_OK) return s;
    if (out->ndim != nd || memcmp(out->shape, shape, (size_t)nd * sizeof *shape))
        return ck_error_set(CK_ERR_VALUE, "Output array is the wrong shape");
    int overlap = 0;
    for (int i = 0; i < n && !overlap; i++) overlap = ck_array_may_overlap(arrays[i], out);
    /* NumPy copies the pieces one after another, each copy safe from its
     * own overlap, so a later piece may read what an earlier one wrote:
     * the same here, on every device */
    return overlap ? join_assign(out, n, arrays, how, ax) : join_into(out, n, arrays, how, ax);
}

ck_status ck_concatenate(ck_array *out, int n, const ck_array *const *arrays, int axis, ck_dtype dt)
{
    return join_new(out, n, arrays, axis == CK_AXIS_FLAT ? JOIN_FLAT : JOIN_AXIS, axis, dt);
}

ck_status ck_stack(ck_array *out, int n, const ck_array *const *arrays, int axis, ck_dtype dt)
{
    return join_new(out, n, arrays, JOIN_NEW_AXIS, axis, dt);
}

ck_status ck_concatenate_into(ck_array *out, int n, const ck_array *const *arrays, int axis)
{
    return join_out(out, n, arrays, axis == CK_AXIS_FLAT ? JOIN_FLAT : JOIN_AXIS, axis);
}

ck_status ck_stack_into(ck_array *out, int n, const ck_array *const *arrays, int axis)
{
    return join_out(out, n, arrays, JOIN_NEW_AXIS, axis);
}

/* ------------------------------------------------------------ rolling */

/* Roll src along one axis into a new array: two block copies. */
static ck_status roll_axis(ck_array *out, const ck_array *src, int axis, int64_t shift)
{
    ck_status s = ck_array_empty(out, src->ndim, src->shape, src->dtype, ck_array_device(src));
    if (s != CK_OK) return s;
    int64_t n = src->shape[axis];
    ck_array head, tail;
    slice_axis(&head, src, axis, 0, n - shift, 1);
    slice_axis(&tail, src, axis, n - shift, shift, 1);
    s = assign_slice(out, axis, shift, n - shift, &head);
    if (s == CK_OK) s = assign_slice(out, axis, 0, shift, &tail);
    ck_array_release(&head);
    ck_array_release(&tail);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_roll(ck_array *out, const ck_array *a, int n, const int64_t *shifts, const int *axes)
{
    if (!axes) {
        if (n != 1) return ck_error_set(CK_ERR_VALUE, "'shift' must be a single value when 'axis' is None");
        int64_t size = a->size;
        ck_array flat, rolled;
        ck_status s = ck_array_reshape(&flat, a, 1, &size, 0);
        if (s != CK_OK) return s;
        int64_t sh = size ? ((shifts[0] % size) + size) % size : 0;
        if (sh == 0) s = ck_array_astype(&rolled, &flat, flat.dtype, 0);
        else s = roll_axis(&rolled, &flat, 0, sh);
        ck_array_release(&flat);
        if (s != CK_OK) return s;
        s = ck_array_reshape(out, &rolled, a->ndim, a->shape, 0);
        ck_array_release(&rolled);
        return s;
    }
    int64_t total[CK_MAXDIMS] = {0};
    for (int i = 0; i < n; i++) {
        int ax = axes[i];
        if (ck_axis_normalize(&ax, a->ndim) != CK_OK) return ck_error_status();
        /* reduce before summing so huge shifts cannot overflow */
        int64_t len = a->shape[ax];
        if (len) total[ax] = (total[ax] + ((shifts[i] % len) + len) % len) % len;
    }
    ck_array cur;
    ck_status s = ck_array_astype(&cur, a, a->dtype, 0);
    if (s != CK_OK) return s;
    /* one axis at a time: 2 copies per rolled axis instead of 2^k blocks */
    for (int ax = 0; ax < a->ndim; ax++) {
        if (!total[ax]) continue;
        ck_array next;
        s = roll_axis(&next, &cur, ax, total[ax]);
        ck_array_release(&cur);
        if (s != CK_OK) return s;
        cur = next;
    }
    *out = cur;
    return CK_OK;
}

/* ------------------------------------------------------------- tiling */

ck_status ck_tile(ck_array *out, const ck_array *a, int nreps, const int64_t *reps_in)
{
    int nd = nreps > a->ndim ? nreps : a->ndim;
    if (nd > CK_MAXDIMS)
        return ck_error_set(CK_ERR_VALUE, "maximum supported dimension for an ndarray is %d, found %d", CK_MAXDIMS, nd);
    int64_t reps[CK_MAXDIMS], shape[CK_MAXDIMS], sstrides[CK_MAXDIMS], oshape[CK_MAXDIMS];
    for (int i = 0; i < nd; i++) {
        int ri = i - (nd - nreps), ai = i - (nd - a->ndim);
        reps[i] = ri >= 0 ? reps_in[ri] : 1;
        if (reps[i] < 0) return ck_error_set(CK_ERR_VALUE, "negative dimensions are not allowed");
        shape[i] = ai >= 0 ? a->shape[ai] : 1;
        sstrides[i] = ai >= 0 ? a->strides[ai] : 0;
        oshape[i] = shape[i] * reps[i];
    }
    if (ck_shape_size(nd, oshape) < 0) return ck_error_set(CK_ERR_VALUE, "array is too big");
    ck_status s = ck_array_empty(out, nd, oshape, a->dtype, ck_array_device(a));
    if (s != CK_OK) return s;
    if (out->size == 0) return CK_OK;
    /* out seen as (reps0, n0, reps1, n1, ...) and a broadcast over the reps
     * axes: the whole tiling is one copy.  Axes with one repetition need no
     * split, which keeps the split view within CK_MAXDIMS more often. */
    int64_t vshape[CK_MAXDIMS], vstr[CK_MAXDIMS], bshape[CK_MAXDIMS], bstr[CK_MAXDIMS];
    int k = 0;
    for (int i = 0; i < nd; i++) {
        if (reps[i] != 1 && shape[i] != 1) {
            if (k >= CK_MAXDIMS) {
                ck_array_release(out);
                return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "tile: too many repeated axes for %d dimensions", CK_MAXDIMS);
            }
            vshape[k] = reps[i];
            vstr[k] = out->strides[i] * shape[i];
            bshape[k] = reps[i];
            bstr[k++] = 0;
        }
        if (k >= CK_MAXDIMS) {
            ck_array_release(out);
            return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "tile: too many repeated axes for %d dimensions", CK_MAXDIMS);
        }
        vshape[k] = reps[i] != 1 && shape[i] != 1 ? shape[i] : oshape[i];
        vstr[k] = out->strides[i];
        bshape[k] = vshape[k];
        bstr[k++] = shape[i] == 1 ? 0 : sstrides[i];
    }
    ck_array dst, src;
    ck_array_view(&dst, out);
    ck_array_set_layout(&dst, k, vshape, vstr);
    ck_array_view(&src, a);
    ck_array_set_layout(&src, k, bshape, bstr);
    s = ck_array_assign(&dst, &src);
    ck_array_release(&dst);
    ck_array_release(&src);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_repeat(ck_array *out, const ck_array *a_in, int64_t nrep, const int64_t *repeats, int axis)
{
    ck_array a;
    ck_status s;
    if (axis == CK_AXIS_FLAT) {
        int64_t size = a_in->size;
        if ((s = ck_array_reshape(&a, a_in, 1, &size, 0)) != CK_OK) return s;
        axis = 0;
    } else {
        if (a_in->ndim == 0) {
            /* a 0-d array has one element along its only (implicit) axis */
            if (axis != 0 && axis != -1) return axis_error(axis, 1);
            int64_t one = 1;
            if ((s = ck_array_reshape(&a, a_in, 1, &one, 0)) != CK_OK) return s;
            axis = 0;
        } else {
            if (ck_axis_normalize(&axis, a_in->ndim) != CK_OK) return ck_error_status();
            ck_array_view(&a, a_in);
        }
    }
    int64_t n = a.shape[axis];
    if (nrep != 1 && nrep != n) {
        ck_array_release(&a);
        return ck_error_set(CK_ERR_VALUE, "operands could not be broadcast together with shape (%lld,) (%lld,)",
                            (long long)n, (long long)nrep);
    }
    int64_t total = 0;
    for (int64_t j = 0; j < nrep; j++) {
        if (repeats[j] < 0) {
            ck_array_release(&a);
            return ck_error_set(CK_ERR_VALUE, "repeats may not contain negative values.");
        }
        total += repeats[j];
    }
    if (nrep == 1) total = repeats[0] * n;
    if (nrep != 1 && total > 0 && (ck_array_device(&a).type != CK_DEVICE_CPU || n >= 256)) {
        /* per-element counts as one gather (a GPU would otherwise launch a
         * copy per input slice): the source of each output position, made
         * here from the counts the host holds anyway */
        ck_array idx;
        s = ck_array_empty(&idx, 1, &total, CK_INT64, ck_device_cpu());
        if (s == CK_OK) {
            int64_t *p = (int64_t *)idx.data, pos = 0;
            for (int64_t j = 0; j < n; j++)
                for (int64_t r = 0; r < repeats[j]; r++) p[pos++] = j;
            s = ck_take(out, &a, &idx, axis, 0, CK_INDEX_CLIP);   /* in range: no check, no sync */
            ck_array_release(&idx);
        }
        ck_array_release(&a);
        return s;
    }
    int64_t shape[CK_MAXDIMS];
    memcpy(shape, a.shape, (size_t)a.ndim * sizeof *shape);
    shape[axis] = total;
    if ((s = ck_array_empty(out, a.ndim, shape, a.dtype, ck_array_device(&a))) != CK_OK) {
        ck_array_release(&a);
        return s;
    }
    if (out->size == 0) { ck_array_release(&a); return CK_OK; }
    if (nrep == 1) {
        /* out as (..., n, r, ...) and a broadcast along r: one copy */
        if (a.ndim + 1 > CK_MAXDIMS) {
            ck_array_release(&a);
            ck_array_release(out);
            return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "repeat of an array of %d dimensions", CK_MAXDIMS);
        }
        int64_t vs[CK_MAXDIMS], vt[CK_MAXDIMS], bt[CK_MAXDIMS];
        for (int i = 0, k = 0; i < a.ndim; i++) {
            vs[k] = a.shape[i];
            vt[k] = i == axis ? out->strides[i] * repeats[0] : out->strides[i];
            bt[k++] = a.strides[i];
            if (i == axis) {
                vs[k] = repeats[0];
                vt[k] = out->strides[i];
                bt[k++] = 0;
            }
        }
        ck_array dst, src;
        ck_array_view(&dst, out);
        ck_array_set_layout(&dst, a.ndim + 1, vs, vt);
        ck_array_view(&src, &a);
        ck_array_set_layout(&src, a.ndim + 1, vs, bt);
        s = ck_array_assign(&dst, &src);
        ck_array_release(&dst);
        ck_array_release(&src);
    } else {
        /* per-element counts: one broadcast copy per input slice */
        int64_t off = 0;
        for (int64_t j = 0; j < n && s == CK_OK; j++) {
            if (!repeats[j]) continue;
            ck_array piece;
            slice_axis(&piece, &a, axis, j, 1, 1);
            s = assign_slice(out, axis, off, repeats[j], &piece);
            ck_array_release(&piece);
            off += repeats[j];
        }
    }
    ck_array_release(&a);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

/* -------------------------------------------------------------- pad */

/* Index of the interior element that position j (relative to the
 * interior's start, possibly outside [0, n)) copies under mode. */
static int64_t pad_source(ck_pad_mode mode, int64_t j, int64_t n)
{
    int64_t m, p;
    switch (mode) {
    case CK_PAD_EDGE: return j < 0 ? 0 : j >= n ? n - 1 : j;
    case CK_PAD_WRAP: return ((j % n) + n) % n;
    case CK_PAD_REFLECT:
        if (n == 1) return 0;
        p = 2 * (n - 1);
        m = ((j % p) + p) % p;
        return m < n ? m : p - m;
    default: /* symmetric */
        p = 2 * n;
        m = ((j % p) + p) % p;
        return m < n ? m : p - 1 - m;
    }
}

/* Fill positions [lo, hi) of axis ax of `full` from its interior
 * [left, left + n): runs whose source moves by -1, 0 or +1 per step become
 * one strided (or broadcast) copy each. */
static ck_status pad_region(ck_array *full, int ax, int64_t lo, int64_t hi, int64_t left, int64_t n, ck_pad_mode mode)
{
    int64_t i = lo;
    while (i < hi) {
        int64_t s0 = pad_source(mode, i - left, n), step = 0, len = 1;
        if (i + 1 < hi) {
            step = pad_source(mode, i + 1 - left, n) - s0;
            if (step < -1 || step > 1) step = 0;
            else
                while (i + len < hi && pad_source(mode, i + len - left, n) == s0 + step * len) len++;
        }
        ck_array src;
        slice_axis(&src, full, ax, left + s0, len, step);
        ck_status s = assign_slice(full, ax, i, len, &src);
        ck_array_release(&src);
        if (s != CK_OK) return s;
        i += len;
    }
    return CK_OK;
}

ck_status ck_pad(ck_array *out, const ck_array *a, const int64_t *widths, ck_pad_mode mode, const ck_scalar *value)
{
    int nd = a->ndim;
    int64_t shape[CK_MAXDIMS];
    for (int i = 0; i < nd; i++) {
        if (widths[2 * i] < 0 || widths[2 * i + 1] < 0) return ck_error_set(CK_ERR_VALUE, "index can't contain negative values");
        shape[i] = a->shape[i] + widths[2 * i] + widths[2 * i + 1];
        if (mode != CK_PAD_CONSTANT && mode != CK_PAD_EMPTY && a->shape[i] == 0 && (widths[2 * i] || widths[2 * i + 1]))
            return ck_error_set(CK_ERR_VALUE, "can't extend empty axis %d using modes other than 'constant' or 'empty'", i);
    }
    if (ck_shape_size(nd, shape) < 0) return ck_error_set(CK_ERR_VALUE, "array is too big");
    ck_status s = ck_array_empty(out, nd, shape, a->dtype, ck_array_device(a));
    if (s != CK_OK) return s;
    if (mode == CK_PAD_CONSTANT) {
        ck_scalar zero;
        memset(&zero, 0, sizeof zero);
        zero.dtype = CK_INT64;
        s = ck_array_fill(out, value ? value : &zero);
    }
    /* the interior, then each axis's pads, reading from what is already
     * filled: axes before ax are full width, axes after it interior only */
    ck_array inner;
    ck_array_view(&inner, out);
    for (int i = 0; i < nd; i++) {
        ck_array t;
        slice_axis(&t, &inner, i, widths[2 * i], a->shape[i], 1);
        ck_array_release(&inner);
        inner = t;
    }
    if (s == CK_OK) s = ck_array_assign(&inner, a);
    ck_array_release(&inner);
    if (mode != CK_PAD_CONSTANT && mode != CK_PAD_EMPTY && out->size > 0) {
        for (int ax = 0; ax < nd && s == CK_OK; ax++) {
            int64_t left = widths[2 * ax], n = a->shape[ax];
            ck_array part;
            ck_array_view(&part, out);
            for (int j = ax + 1; j < nd; j++) {
                ck_array t;
                slice_axis(&t, &part, j, widths[2 * j], a->shape[j], 1);
                ck_array_release(&part);
                part = t;
            }
            s = pad_region(&part, ax, 0, left, left, n, mode);
            if (s == CK_OK) s = pad_region(&part, ax, left + n, shape[ax], left, n, mode);
            ck_array_release(&part);
        }
    }
    if (s != CK_OK) ck_array_release(out);
    return s;
}

/* ---------------------------------------------------------- diagonals */

ck_status ck_diag(ck_array *out, const ck_array *a, int64_t k)
{
    if (a->ndim == 2) return ck_array_diagonal(out, a, k, 0, 1);
    if (a->ndim != 1) return ck_error_set(CK_ERR_VALUE, "Input must be 1- or 2-d.");
    int64_t n = a->shape[0] + (k < 0 ? -k : k), shape[2] = {n, n};
    ck_status s = ck_full_scalar(out, 2, shape, a->dtype, 0.0, ck_array_device(a));
    if (s != CK_OK) return s;
    ck_array d;
    if ((s = ck_array_diagonal(&d, out, k, 0, 1)) != CK_OK) { ck_array_release(out); return s; }
    d.flags |= CK_ARRAY_WRITEABLE;   /* our own new array */
    s = ck_array_assign(&d, a);
    ck_array_release(&d);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_trace(ck_array *out, const ck_array *a, int64_t offset, int axis1, int axis2, ck_dtype dt)
{
    ck_array d;
    ck_status s = ck_array_diagonal(&d, a, offset, axis1, axis2);
    if (s != CK_OK) return s;
    s = ck_reduce(CK_REDUCE_SUM, &d, (uint64_t)1 << (d.ndim - 1), 0, dt, out, 0);
    ck_array_release(&d);
    return s;
}

ck_status ck_tri_part(ck_array *out, const ck_array *a, int64_t k, int upper)
{
    if (a->ndim == 0) return ck_error_set(CK_ERR_VALUE, "tril/triu need an array of at least one dimension");
    int64_t m = a->shape[a->ndim - 1], n = a->ndim >= 2 ? a->shape[a->ndim - 2] : m;
    /* mask[i, j] = j <= i + k (tril) or j >= i + k (triu), then where() */
    ck_array rows, cols, mask;
    ck_device dev = ck_array_device(a);
    ck_status s = ck_arange(&rows, (double)k, 1.0, n, CK_INT64, dev);
    if (s != CK_OK) return s;
    if ((s = ck_arange(&cols, 0.0, 1.0, m, CK_INT64, dev)) != CK_OK) { ck_array_release(&rows); return s; }
    int64_t rs[2] = {n, 1}, rst[2] = {8, 0};
    ck_array_set_layout(&rows, 2, rs, rst);
    s = ck_ufunc_call2(upper ? CK_OP_GREATER_EQUAL : CK_OP_LESS_EQUAL, &cols, &rows, &mask);
    ck_array_release(&rows);
    ck_array_release(&cols);
    if (s != CK_OK) return s;
    ck_operand ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].array = &mask;
    ops[1].array = a;
    ops[2].scalar.dtype = a->dtype;   /* a strong zero of a's dtype keeps the dtype */
    s = ck_ufunc_apply(CK_OP_WHERE, 3, ops, out, 0, CK_DTYPE_INVALID);
    ck_array_release(&mask);
    return s;
}

ck_status ck_resize(ck_array *out, const ck_array *a, int ndim, const int64_t *shape)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) return ck_error_set(CK_ERR_VALUE, "all elements of `new_shape` must be non-negative");
    int64_t total = ck_shape_size(ndim, shape);
    if (total < 0) return ck_error_set(CK_ERR_VALUE, "array is too big");
    if (a->size == 0 || total == 0) return ck_full_scalar(out, ndim, shape, a->dtype, 0.0, ck_array_device(a));
    int64_t size = a->size;
    ck_array flat, res;
    ck_status s = ck_array_reshape(&flat, a, 1, &size, 0);
    if (s != CK_OK) return s;
    if ((s = ck_array_empty(&res, 1, &total, a->dtype, ck_array_device(a))) != CK_OK) {
        ck_array_release(&flat);
        return s;
    }
    /* whole copies as one broadcast copy into a (reps, size) view, then the
     * remainder */
    int64_t reps = total / size, rest = total % size;
    if (reps) {
        ck_array dst, src;
        int64_t vs[2] = {reps, size}, vt[2] = {size * res.strides[0], res.strides[0]}, bt[2] = {0, flat.strides[0]};
        ck_array_view(&dst, &res);
        ck_array_set_layout(&dst, 2, vs, vt);
        ck_array_view(&src, &flat);
        ck_array_set_layout(&src, 2, vs, bt);
        s = ck_array_assign(&dst, &src);
        ck_array_release(&dst);
        ck_array_release(&src);
    }
    if (s == CK_OK && rest) {
        ck_array head;
        slice_axis(&head, &flat, 0, 0, rest, 1);
        s = assign_slice(&res, 0, reps * size, rest, &head);
        ck_array_release(&head);
    }
    ck_array_release(&flat);
    if (s == CK_OK) s = ck_array_reshape(out, &res, ndim, shape, 0);
    ck_array_release(&res);
    return s;
}
