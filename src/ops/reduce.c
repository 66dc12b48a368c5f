/*
 * reduce.c - reductions (sum, prod, min, max, all, any, argmin, argmax,
 * count_nonzero), scans (cumsum, cumprod), mean and var: NumPy's dtype
 * rules, output allocation, and the reduce / scan descriptors; the device's
 * backend runs those.
 */
#include "ops_internal.h"
#include "cudakit_graph.h"

#include <string.h>

/* The ufunc NumPy names in its reduction messages. */
static const char *const ck_reduce_names[] = {
    [CK_REDUCE_SUM] = "add", [CK_REDUCE_PROD] = "multiply", [CK_REDUCE_MIN] = "minimum", [CK_REDUCE_MAX] = "maximum",
    [CK_REDUCE_ALL] = "logical_and", [CK_REDUCE_ANY] = "logical_or", [CK_REDUCE_ARGMIN] = "argmin",
    [CK_REDUCE_ARGMAX] = "argmax", [CK_REDUCE_COUNT_NONZERO] = "count_nonzero",
};
_Static_assert(sizeof ck_reduce_names / sizeof *ck_reduce_names == CK_REDUCE_COUNT, "a reduction without its name");

ck_dtype ck_reduce_default_dtype(ck_reduce_op op, ck_dtype t)
{
    switch (op) {
    case CK_REDUCE_SUM: case CK_REDUCE_PROD:
        /* NumPy upcasts small integers so that sums rarely wrap */
        switch (t) {
        case CK_BOOL: case CK_INT8: case CK_INT16: case CK_INT32: return CK_INT64;
        case CK_UINT8: case CK_UINT16: case CK_UINT32: return CK_UINT64;
        default: return t;
        }
    case CK_REDUCE_MIN: case CK_REDUCE_MAX: return t;
    case CK_REDUCE_ALL: case CK_REDUCE_ANY: return CK_BOOL;
    default: return CK_INT64;
    }
}

static ck_status ck_mixed_devices_(ck_device a, ck_device b)
{
    char da[32], db[32];
    ck_device_str(a, da, sizeof da);
    ck_device_str(b, db, sizeof db);
    return ck_error_set(CK_ERR_VALUE, "arrays are on different devices: %s and %s; "
                                      "move one with .to_device() first", da, db);
}

static ck_status ck_check_mask_(uint64_t mask, int ndim)
{
    if (ndim < 64 && (mask >> ndim) != 0)
        return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension %d",
                            __builtin_ctzll(mask >> ndim) + ndim, ndim);
    return CK_OK;
}

/* Product of the reduced dims (1 when none). */
static int64_t ck_reduced_count_(const ck_array *a, uint64_t mask)
{
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        if ((mask >> i) & 1) n *= a->shape[i];
    return n;
}

/* A set of dims innermost first: flip those the input walks backwards
 * (when flip, moving the base pointers to match), order them by the
 * input's stride (when sort), and merge neighbours whose strides chain for
 * every operand.  s1 may be NULL (one operand). */
static int ck_arrange_dims_(int n, int64_t *shape, int64_t *s0, int64_t *s1, char **p0, char **p1,
                            int flip, int sort)
{
    if (flip) {
        for (int i = 0; i < n; i++) {
            if (s0[i] >= 0) continue;
            *p0 += (shape[i] - 1) * s0[i];
            s0[i] = -s0[i];
            if (s1) {
                *p1 += (shape[i] - 1) * s1[i];
                s1[i] = -s1[i];
            }
        }
    }
    if (sort) {
        for (int i = 1; i < n; i++) {
            for (int j = i; j > 0; j--) {
                int64_t a = s0[j] < 0 ? -s0[j] : s0[j], b = s0[j - 1] < 0 ? -s0[j - 1] : s0[j - 1];
                if (a >= b) break;
                int64_t t = shape[j]; shape[j] = shape[j - 1]; shape[j - 1] = t;
                t = s0[j]; s0[j] = s0[j - 1]; s0[j - 1] = t;
                if (s1) { t = s1[j]; s1[j] = s1[j - 1]; s1[j - 1] = t; }
            }
        }
    }
    int w = 0;
    for (int j = 1; j < n; j++) {
        if (s0[j] == s0[w] * shape[w] && (!s1 || s1[j] == s1[w] * shape[w])) {
            shape[w] *= shape[j];
        } else {
            w++;
            shape[w] = shape[j];
            s0[w] = s0[j];
            if (s1) s1[w] = s1[j];
        }
    }
    return n ? w + 1 : 0;
}

/* Run op over src into dst, whose dims are src's kept ones (with 1s where
 * reduced when keepdims); sums and products run in dst's dtype. */
static ck_status ck_reduce_run_(ck_reduce_op op, const ck_array *src, uint64_t mask, int keepdims, ck_array *dst)
{
    ck_reduce_desc d;
    char *ip = src->data, *op_ = dst->data;
    int nd = src->ndim, j = 0;
    d.op = op;
    d.dev = ck_array_device(src);
    d.in_type = src->dtype;
    d.out_type = dst->dtype;
    d.n_outer = 0;
    d.n_inner = 0;
    /* innermost first, C order; length-1 dims carry nothing */
    for (int i = nd - 1; i >= 0; i--) {
        int red = (mask >> i) & 1;
        int di = keepdims ? i : (red ? -1 : (dst->ndim - 1 - j));
        if (!red) j++;
        if (src->shape[i] == 1) continue;
        if (red) {
            d.inner_shape[d.n_inner] = src->shape[i];
            d.inner_strides[d.n_inner++] = src->strides[i];
        } else {
            d.outer_shape[d.n_outer] = src->shape[i];
            d.outer_in_strides[d.n_outer] = src->strides[i];
            d.outer_out_strides[d.n_outer++] = dst->strides[di];
        }
    }
    d.inner_size = 1;
    for (int i = 0; i < d.n_inner; i++) d.inner_size *= d.inner_shape[i];
    int64_t outer = 1;
    for (int i = 0; i < d.n_outer; i++) outer *= d.outer_shape[i];
    if (outer == 0) return CK_OK;
    if (d.inner_size > 0) {
        /* argmin/argmax count positions in C order, so their reduced dims
         * keep it; the others may walk memory in its own order */
        int arg = op == CK_REDUCE_ARGMIN || op == CK_REDUCE_ARGMAX;
        d.n_inner = ck_arrange_dims_(d.n_inner, d.inner_shape, d.inner_strides, NULL, &ip, NULL, !arg, !arg);
    }
    d.n_outer = ck_arrange_dims_(d.n_outer, d.outer_shape, d.outer_in_strides, d.outer_out_strides,
                                 &ip, &op_, 1, 1);
    d.in = ip;
    d.out = op_;
    const ck_backend_iface *be = ck_backend_for(ck_array_device(src));
    if (!be || !be->reduce) {
        char dev[32];
        ck_device_str(ck_array_device(src), dev, sizeof dev);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "reductions are not implemented on %s", dev);
    }
    return be->reduce(&d);
}

ck_status ck_reduce(ck_reduce_op op, const ck_array *a, uint64_t axis_mask, int keepdims,
                    ck_dtype dtype, ck_array *out, int out_given)
{
    if ((unsigned)op >= CK_REDUCE_COUNT) return ck_error_set(CK_ERR_VALUE, "unknown reduction %d", (int)op);
    if (dtype != CK_DTYPE_INVALID && (unsigned)dtype >= CK_NTYPES)
        return ck_error_set(CK_ERR_TYPE, "invalid dtype for a reduction");
    ck_status s = ck_check_mask_(axis_mask, a->ndim);
    if (s != CK_OK) return s;
    int nd = a->ndim;
    int arg = op == CK_REDUCE_ARGMIN || op == CK_REDUCE_ARGMAX;
    int nred = __builtin_popcountll(axis_mask);
    if (arg && nd > 0 && nred != 1 && nred != nd)
        return ck_error_set(CK_ERR_VALUE, "%s takes one axis or all of them", ck_reduce_names[op]);
    if (ck_reduced_count_(a, axis_mask) == 0) {
        if (op == CK_REDUCE_MIN || op == CK_REDUCE_MAX)
            return ck_error_set(CK_ERR_VALUE, "zero-size array to reduction operation %s which has no identity",
                                ck_reduce_names[op]);
        if (arg)
            return ck_error_set(CK_ERR_VALUE, "attempt to get %s of an empty sequence", ck_reduce_names[op]);
    }

    /* dtypes: sum and prod run in the dtype asked for; else, with out,
     * in what the input and out promote to (NumPy resolves the loop from
     * both); else in NumPy's default.  The backend converts the input as it
     * reads it (NumPy's unsafe cast to the loop's dtype): no converted copy,
     * so summing a broadcast int8 array into int64 needs no memory. */
    ck_dtype out_t;
    switch (op) {
    case CK_REDUCE_SUM: case CK_REDUCE_PROD:
        if (dtype != CK_DTYPE_INVALID) out_t = dtype;
        else if (out_given) out_t = ck_dtype_promote(a->dtype, out->dtype);
        else out_t = ck_reduce_default_dtype(op, a->dtype);
        break;
    case CK_REDUCE_MIN: case CK_REDUCE_MAX: out_t = a->dtype; break;
    case CK_REDUCE_ALL: case CK_REDUCE_ANY: out_t = CK_BOOL; break;
    default: out_t = CK_INT64; break;
    }

    /* result shape */
    int rnd = 0;
    int64_t rshape[CK_MAXDIMS];
    for (int i = 0; i < nd; i++) {
        if (!((axis_mask >> i) & 1)) rshape[rnd++] = a->shape[i];
        else if (keepdims) rshape[rnd++] = 1;
    }

    ck_device dev = ck_array_device(a);
    ck_array tmp;
    ck_array *dst = out;
    int tmp_used = 0;
    if (out_given) {
        if (!ck_device_equal(dev, ck_array_device(out))) return ck_mixed_devices_(dev, ck_array_device(out));
        if (out->ndim != rnd)
            return ck_error_set(CK_ERR_VALUE, "output parameter for reduction operation %s has the wrong number "
                                "of dimensions: Found %d but expected %d", ck_reduce_names[op], out->ndim, rnd);
        if (memcmp(out->shape, rshape, (size_t)rnd * sizeof *rshape) != 0)
            return ck_error_set(CK_ERR_VALUE, "output parameter for reduction operation %s has a non-reduction "
                                "dimension not equal to the input one.", ck_reduce_names[op]);
        if (!(out->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "output array is read-only");
        if (out->dtype != out_t || ck_array_may_overlap(out, a)) {
            s = ck_array_empty(&tmp, rnd, rshape, out_t, dev);
            if (s != CK_OK) return s;
            dst = &tmp;
            tmp_used = 1;
        }
    } else {
        s = ck_array_empty(out, rnd, rshape, out_t, dev);
        if (s != CK_OK) return s;
    }

    if (dst->size > 0) s = ck_reduce_run_(op, a, axis_mask, keepdims, dst);
    if (s == CK_OK && tmp_used) s = ck_array_assign(out, &tmp);
    if (tmp_used) ck_array_release(&tmp);
    if (s != CK_OK && !out_given) ck_array_release(out);
    return s;
}

ck_status ck_reduce_to_host(ck_reduce_op op, const ck_array *a, ck_scalar *value, const char *why)
{
    ck_status s0 = ck_graph_refuse(ck_array_device(a), "an op whose result depends on the data (a boolean mask, "
                                                        "nonzero, a value read back to size or check its output)");
    if (s0 != CK_OK) return s0;
    ck_array r;
    uint64_t all = a->ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << a->ndim) - 1);
    ck_status s = ck_reduce(op, a, all, 0, CK_DTYPE_INVALID, &r, 0);
    if (s != CK_OK) return s;
    if (ck_array_device(&r).type != CK_DEVICE_CPU) {
        ck_array h;
        s = ck_sync_span_begin(ck_array_device(&r), why);
        if (s == CK_OK) s = ck_array_to_device(&h, &r, ck_device_cpu());
        ck_sync_span_end();
        ck_array_release(&r);
        if (s != CK_OK) return s;
        r = h;
    }
    ck_scalar_load(value, r.dtype, r.data);
    ck_array_release(&r);
    return CK_OK;
}

ck_status ck_scan(ck_reduce_op op, const ck_array *a, int axis, ck_dtype dtype, ck_array *out, int out_given)
{
    if (op != CK_REDUCE_SUM && op != CK_REDUCE_PROD)
        return ck_error_set(CK_ERR_VALUE, "scans are cumulative sums and products only");
    if (dtype != CK_DTYPE_INVALID && (unsigned)dtype >= CK_NTYPES)
        return ck_error_set(CK_ERR_TYPE, "invalid dtype for a scan");
    ck_status s = ck_axis_normalize(&axis, a->ndim);
    if (s != CK_OK) return s;
    ck_dtype t = dtype != CK_DTYPE_INVALID ? dtype
               : out_given ? ck_dtype_promote(a->dtype, out->dtype)
               : ck_reduce_default_dtype(op, a->dtype);
    ck_device dev = ck_array_device(a);
    ck_array tmp;
    ck_array *dst = out;
    int tmp_used = 0;
    if (out_given) {
        if (!ck_device_equal(dev, ck_array_device(out))) s = ck_mixed_devices_(dev, ck_array_device(out));
        else if (out->ndim != a->ndim || memcmp(out->shape, a->shape, (size_t)a->ndim * sizeof *a->shape) != 0)
            s = ck_error_set(CK_ERR_VALUE, "provided out is the wrong size for the accumulation.");
        else if (!(out->flags & CK_ARRAY_WRITEABLE))
            s = ck_error_set(CK_ERR_VALUE, "output array is read-only");
        /* in place works (each step reads its input before writing there);
         * any other overlap needs a temporary */
        else if (out->dtype != t ||
                 (ck_array_may_overlap(out, a) &&
                  !(out->dtype == a->dtype && out->data == a->data &&
                    memcmp(out->strides, a->strides, (size_t)a->ndim * 8) == 0))) {
            s = ck_array_empty(&tmp, a->ndim, a->shape, t, dev);
            if (s == CK_OK) {
                dst = &tmp;
                tmp_used = 1;
            }
        }
    } else {
        s = ck_array_empty(out, a->ndim, a->shape, t, dev);
    }
    if (s != CK_OK) return s;

    if (a->size > 0) {
        /* the backend converts the input to t as it reads it (NumPy's unsafe
         * cast to the loop's dtype), without a converted copy */
        ck_scan_desc d;
        char *ip = a->data, *op_ = dst->data;
        d.op = op;
        d.dev = dev;
        d.in_type = a->dtype;
        d.type = t;
        d.len = a->shape[axis];
        d.in_stride = a->strides[axis];
        d.out_stride = dst->strides[axis];
        d.n_outer = 0;
        for (int i = a->ndim - 1; i >= 0; i--) {
            if (i == axis || a->shape[i] == 1) continue;
            d.outer_shape[d.n_outer] = a->shape[i];
            d.outer_in_strides[d.n_outer] = a->strides[i];
            d.outer_out_strides[d.n_outer++] = dst->strides[i];
        }
        d.n_outer = ck_arrange_dims_(d.n_outer, d.outer_shape, d.outer_in_strides, d.outer_out_strides,
                                     &ip, &op_, 1, 1);
        d.in = ip;
        d.out = op_;
        const ck_backend_iface *be = ck_backend_for(dev);
        if (!be || !be->scan) {
            char dn[32];
            ck_device_str(dev, dn, sizeof dn);
            s = ck_error_set(CK_ERR_NOT_IMPLEMENTED, "cumulative sums and products are not implemented on %s", dn);
        } else {
            s = be->scan(&d);
        }
    }
    if (s == CK_OK && tmp_used) s = ck_array_assign(out, &tmp);
    if (tmp_used) ck_array_release(&tmp);
    if (s != CK_OK && !out_given) ck_array_release(out);
    return s;
}

/* x / n in x's dtype, n a strong int64 (NumPy divides by an np.intp, so
 * float32 sums are divided in float64 and rounded once) or a strong
 * float64 when n_is_double.  x is replaced. */
static ck_status ck_divide_inplace_(ck_array *x, double n, int n_is_double)
{
    ck_operand in[2];
    memset(in, 0, sizeof in);
    in[0].array = x;
    if (n_is_double) {
        in[1].scalar.dtype = CK_FLOAT64;
        in[1].scalar.v.f = n;
    } else {
        in[1].scalar.dtype = CK_INT64;
        in[1].scalar.v.i = (int64_t)n;
    }
    ck_array q;
    ck_status s = ck_ufunc_apply(CK_OP_TRUE_DIVIDE, 2, in, &q, 0, CK_DTYPE_INVALID);
    if (s != CK_OK) return s;
    if (q.dtype != x->dtype) {   /* NumPy writes back with casting="unsafe" */
        ck_array r;
        s = ck_array_astype(&r, &q, x->dtype, 0);
        ck_array_release(&q);
        if (s != CK_OK) return s;
        q = r;
    }
    ck_array_release(x);
    *x = q;
    return CK_OK;
}

ck_status ck_mean(const ck_array *a, uint64_t axis_mask, int keepdims, ck_dtype dtype, ck_array *out)
{
    ck_status s = ck_check_mask_(axis_mask, a->ndim);
    if (s != CK_OK) return s;
    int64_t count = ck_reduced_count_(a, axis_mask);
    ck_dtype t = dtype;
    int half = 0;
    if (t == CK_DTYPE_INVALID) {
        if (a->dtype == CK_BOOL || ck_dtype_is_integer(a->dtype)) {
            t = CK_FLOAT64;
        } else if (a->dtype == CK_FLOAT16) {   /* summed in float32, returned as float16 */
            t = CK_FLOAT32;
            half = 1;
        }
    }
    s = ck_reduce(CK_REDUCE_SUM, a, axis_mask, keepdims, t, out, 0);
    if (s != CK_OK) return s;
    s = ck_divide_inplace_(out, (double)count, 0);
    if (s == CK_OK && half) {
        ck_array r;
        s = ck_array_astype(&r, out, CK_FLOAT16, 0);
        if (s == CK_OK) {
            ck_array_release(out);
            *out = r;
            return CK_OK;
        }
    }
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_var(const ck_array *a, uint64_t axis_mask, int keepdims, double ddof, ck_dtype dtype,
                 int take_sqrt, ck_array *out)
{
    ck_status s = ck_check_mask_(axis_mask, a->ndim);
    if (s != CK_OK) return s;
    int64_t count = ck_reduced_count_(a, axis_mask);
    ck_dtype t = dtype;
    if (t == CK_DTYPE_INVALID && (a->dtype == CK_BOOL || ck_dtype_is_integer(a->dtype))) t = CK_FLOAT64;

    /* pass 1: the mean, kept as broadcastable dims */
    ck_array mean, dev, sq;
    s = ck_reduce(CK_REDUCE_SUM, a, axis_mask, 1, t, &mean, 0);
    if (s != CK_OK) return s;
    s = ck_divide_inplace_(&mean, (double)count, 0);
    if (s != CK_OK) { ck_array_release(&mean); return s; }
    /* pass 2: squared deviations (|x - mean|^2, a real dtype, for complex) */
    s = ck_ufunc_call2(CK_OP_SUBTRACT, a, &mean, &dev);
    ck_array_release(&mean);
    if (s != CK_OK) return s;
    if (ck_dtype_is_complex(dev.dtype)) {
        ck_array re, im, re2, im2;
        ck_array_view(&re, &dev);
        ck_array_view(&im, &dev);
        re.dtype = im.dtype = ck_dtype_real(dev.dtype);
        im.data += ck_dtype_get_info(re.dtype)->itemsize;
        ck_array_update_flags(&re);
        ck_array_update_flags(&im);
        s = ck_ufunc_call2(CK_OP_MULTIPLY, &re, &re, &re2);
        if (s == CK_OK) {
            s = ck_ufunc_call2(CK_OP_MULTIPLY, &im, &im, &im2);
            if (s == CK_OK) {
                s = ck_ufunc_call2(CK_OP_ADD, &re2, &im2, &sq);
                ck_array_release(&im2);
            }
            ck_array_release(&re2);
        }
        ck_array_release(&re);
        ck_array_release(&im);
    } else {
        s = ck_ufunc_call2(CK_OP_MULTIPLY, &dev, &dev, &sq);
    }
    ck_array_release(&dev);
    if (s != CK_OK) return s;
    s = ck_reduce(CK_REDUCE_SUM, &sq, axis_mask, keepdims, t, out, 0);
    ck_array_release(&sq);
    if (s != CK_OK) return s;
    /* N - ddof, never negative: 0 gives inf or nan as in NumPy */
    double div = (double)count - ddof;
    s = ck_divide_inplace_(out, div > 0 ? div : 0.0, 1);
    if (s == CK_OK && take_sqrt) {
        ck_operand in[1];
        memset(in, 0, sizeof in);
        in[0].array = out;
        ck_array r;
        s = ck_ufunc_apply(CK_OP_SQRT, 1, in, &r, 0, CK_DTYPE_INVALID);
        if (s == CK_OK && r.dtype != out->dtype) {   /* integer dtype= : back with casting="unsafe" */
            ck_array c;
            s = ck_array_astype(&c, &r, out->dtype, 0);
            ck_array_release(&r);
            if (s == CK_OK) r = c;
        }
        if (s == CK_OK) {
            ck_array_release(out);
            *out = r;
        }
    }
    if (s != CK_OK) ck_array_release(out);
    return s;
}
