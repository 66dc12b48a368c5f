/* Shape manipulation that yields views when it can: transpose, reshape,
 * broadcast_to. */
#include "ops_internal.h"

#include <string.h>

ck_status ck_array_transpose(ck_array *out, const ck_array *a, const int *perm)
{
    int nd = a->ndim, seen[CK_MAXDIMS] = {0};
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    for (int i = 0; i < nd; i++) {
        int p = perm ? perm[i] : nd - 1 - i;
        if (p < 0) p += nd;
        if (p < 0 || p >= nd)
            return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", perm[i], nd);
        if (seen[p]) return ck_error_set(CK_ERR_VALUE, "repeated axis in transpose");
        seen[p] = 1;
        shape[i] = a->shape[p];
        strides[i] = a->strides[p];
    }
    ck_array_view(out, a);
    ck_array_set_layout(out, nd, shape, strides);
    return CK_OK;
}

ck_status ck_array_reshape(ck_array *out, const ck_array *a, int ndim, const int64_t *shape_in, int order_f)
{
    if (ndim > CK_MAXDIMS)
        return ck_error_set(CK_ERR_VALUE, "maximum supported dimension for an ndarray is %d, found %d", CK_MAXDIMS, ndim);
    int64_t shape[CK_MAXDIMS], known = 1;
    int unknown = -1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = shape_in[i];
        if (shape[i] < 0) {   /* NumPy reads any negative extent as the unknown one */
            if (unknown >= 0) return ck_error_set(CK_ERR_VALUE, "can only specify one unknown dimension");
            unknown = i;
        } else {
            known *= shape[i];
        }
    }
    if (unknown >= 0) {
        if (known == 0 || a->size % known != 0)
            return ck_error_set(CK_ERR_VALUE, "cannot reshape array of size %lld into shape %s",
                                (long long)a->size, ck_shape_str(ndim, shape_in, 0));
        shape[unknown] = a->size / known;
    } else if (known != a->size) {
        return ck_error_set(CK_ERR_VALUE, "cannot reshape array of size %lld into shape %s",
                            (long long)a->size, ck_shape_str(ndim, shape, 0));
    }
    int64_t strides[CK_MAXDIMS];
    if (ck_layout_reshape_strides(a->ndim, a->shape, a->strides, ndim, shape, ck_array_itemsize(a),
                                  order_f, strides)) {
        ck_array_view(out, a);
        ck_array_set_layout(out, ndim, shape, strides);
        return CK_OK;
    }
    /* a copy in the requested order, then a view of it */
    ck_array c;
    ck_status s = ck_array_astype(&c, a, a->dtype, order_f);
    if (s != CK_OK) return s;
    int ok = ck_layout_reshape_strides(c.ndim, c.shape, c.strides, ndim, shape, ck_array_itemsize(&c),
                                       order_f, strides);
    (void)ok;
    *out = c;
    out->flags |= CK_ARRAY_OWNDATA;
    ck_array_set_layout(out, ndim, shape, strides);
    return CK_OK;
}

ck_status ck_array_broadcast_to(ck_array *out, const ck_array *a, int ndim, const int64_t *shape)
{
    if (ndim < a->ndim)
        return ck_error_set(CK_ERR_VALUE, "input operand has more dimensions than allowed by the axis remapping");
    int64_t strides[CK_MAXDIMS], nbytes;
    int off = ndim - a->ndim;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0) return ck_error_set(CK_ERR_VALUE, "all elements of broadcast shape must be non-negative");
    /* a view, but its size must be an array's: NumPy's bound */
    if (ck_shape_size(ndim, shape) < 0 ||
        __builtin_mul_overflow(ck_shape_size(ndim, shape), ck_array_itemsize(a), &nbytes))
        return ck_error_set(CK_ERR_VALUE, "array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                            "the maximum possible size.");
    for (int i = 0; i < ndim; i++) {
        if (i < off) { strides[i] = 0; continue; }
        int64_t d = a->shape[i - off];
        if (d == shape[i]) strides[i] = a->strides[i - off];
        else if (d == 1) strides[i] = 0;
        else
            return ck_error_set(CK_ERR_VALUE, "operands could not be broadcast together with remapped shapes "
                                "[original->remapped]: %s  and requested shape %s",
                                ck_shape_str(a->ndim, a->shape, 0), ck_shape_str(ndim, shape, 1));
    }
    ck_array_view(out, a);
    ck_array_set_layout(out, ndim, shape, strides);
    out->flags &= ~CK_ARRAY_WRITEABLE;
    return CK_OK;
}
