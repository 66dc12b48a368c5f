/*
 * indexfuncs.c - NumPy's indexing functions that are compositions of the
 * gathers, nonzero and element-wise ops: argwhere, flatnonzero, extract,
 * compress, ix_, unravel_index, ravel_multi_index, tril/triu_indices,
 * select and choose (declared in cudakit_index.h).
 *
 * They run on the device of their arrays; the host reads only nonzero's
 * count and, in raise mode, the extremes of the indices it must check.
 */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* The nonzero positions of a 1-d a: int64 (count,), a view of row 0 of
 * ck_nonzero's result. */
static ck_status nonzero_1d(ck_array *out, const ck_array *a)
{
    ck_array nz;
    ck_status s = ck_nonzero(&nz, a);
    if (s != CK_OK) return s;
    s = ck_array_reshape(out, &nz, 1, &nz.shape[1], 0);
    ck_array_release(&nz);
    return s;
}

/* out = a (op) k for an int64 array and a host int64. */
static ck_status binop_k(ck_op op, const ck_array *a, int64_t k, ck_array *out)
{
    ck_operand in[2];
    memset(in, 0, sizeof in);
    in[0].array = a;
    in[1].scalar.dtype = CK_INT64;
    in[1].scalar.v.i = k;
    return ck_ufunc_apply(op, 2, in, out, 0, CK_DTYPE_INVALID);
}

/* The smallest and largest element of a non-empty int64 array, on the host. */
static ck_status int_range(const ck_array *a, int64_t *lo, int64_t *hi)
{
    ck_scalar v;
    ck_status s = ck_reduce_to_host(CK_REDUCE_MIN, a, &v, "the smallest and largest index");
    if (s != CK_OK) return s;
    *lo = v.v.i;
    s = ck_reduce_to_host(CK_REDUCE_MAX, a, &v, "the smallest and largest index");
    *hi = v.v.i;
    return s;
}

static ck_status check_dims(int ndim, const int64_t *dims)
{
    for (int i = 0; i < ndim; i++)
        if (dims[i] < 0) return ck_error_set(CK_ERR_VALUE, "dimensions must be non-negative");
    return CK_OK;
}

/* ------------------------------------------------------------ nonzero */

ck_status ck_argwhere(ck_array *out, const ck_array *a)
{
    ck_array nz, t;
    ck_status s;
    if (a->ndim == 0) {
        /* NumPy: one row of no coordinates for a true scalar, none for a false one */
        ck_array one;
        int64_t n1 = 1;
        s = ck_array_reshape(&one, a, 1, &n1, 0);
        if (s == CK_OK) {
            s = ck_nonzero(&nz, &one);
            ck_array_release(&one);
        }
        if (s == CK_OK) {
            int64_t shape[2] = {nz.shape[1], 0};
            ck_array_release(&nz);
            s = ck_array_empty(out, 2, shape, CK_INT64, ck_array_device(a));
        }
        return s;
    }
    s = ck_nonzero(&nz, a);
    if (s != CK_OK) return s;
    s = ck_array_transpose(&t, &nz, NULL);
    ck_array_release(&nz);
    if (s != CK_OK) return s;
    s = ck_array_astype(out, &t, CK_INT64, 0);
    ck_array_release(&t);
    return s;
}

ck_status ck_flatnonzero(ck_array *out, const ck_array *a)
{
    ck_array f;
    int64_t n = a->size;
    ck_status s = ck_array_reshape(&f, a, 1, &n, 0);
    if (s != CK_OK) return s;
    s = nonzero_1d(out, &f);
    ck_array_release(&f);
    return s;
}

ck_status ck_extract(ck_array *out, const ck_array *condition, const ck_array *a)
{
    ck_array idx;
    ck_status s = ck_flatnonzero(&idx, condition);
    if (s != CK_OK) return s;
    s = ck_take(out, a, &idx, 0, 1, CK_INDEX_RAISE);
    ck_array_release(&idx);
    return s;
}

ck_status ck_compress(ck_array *out, const ck_array *condition, const ck_array *a, int axis, int axis_none)
{
    if (condition->ndim != 1) return ck_error_set(CK_ERR_VALUE, "condition must be a 1-d array");
    ck_array idx;
    ck_status s = nonzero_1d(&idx, condition);
    if (s != CK_OK) return s;
    s = ck_take(out, a, &idx, axis, axis_none, CK_INDEX_RAISE);
    ck_array_release(&idx);
    return s;
}

/* ---------------------------------------------------------- index grids */

ck_status ck_ix(ck_array *out, int n, const ck_array *const *seqs)
{
    if (n > CK_MAXDIMS) return ck_error_set(CK_ERR_VALUE, "ix_ takes at most %d sequences", CK_MAXDIMS);
    ck_status s = CK_OK;
    int done = 0;
    for (; done < n && s == CK_OK; done++) {
        const ck_array *x = seqs[done];
        ck_array cast = {0}, idx = {0};
        if (x->size == 0 && x->dtype != CK_INT64) {
            /* NumPy: an empty sequence indexes nothing, as intp */
            s = ck_array_astype(&cast, x, CK_INT64, 0);
            x = &cast;
        }
        if (s == CK_OK && x->ndim != 1) s = ck_error_set(CK_ERR_VALUE, "Cross index must be 1 dimensional");
        if (s == CK_OK && x->dtype == CK_BOOL) {
            s = nonzero_1d(&idx, x);
            x = &idx;
        }
        if (s == CK_OK) {
            int64_t shape[CK_MAXDIMS];
            for (int j = 0; j < n; j++) shape[j] = j == done ? x->shape[0] : 1;
            s = ck_array_reshape(&out[done], x, n, shape, 0);
        }
        if (cast.buf) ck_array_release(&cast);
        if (idx.buf) ck_array_release(&idx);
        if (s != CK_OK) break;
    }
    if (s != CK_OK)
        for (int j = 0; j < done; j++) ck_array_release(&out[j]);
    return s;
}

ck_status ck_unravel_index(ck_array *coords, const ck_array *indices, int ndim, const int64_t *dims, int order_f)
{
    ck_status s = check_dims(ndim, dims);
    if (s != CK_OK) return s;
    int64_t size = ck_shape_size(ndim, dims);
    if (size < 0) return ck_error_set(CK_ERR_VALUE, "dimensions are too large");
    if (!ck_dtype_is_integer(indices->dtype)) return ck_error_set(CK_ERR_TYPE, "only int indices permitted");
    ck_array cur, next;
    s = ck_array_astype(&cur, indices, CK_INT64, 0);
    if (s != CK_OK) return s;
    if (cur.size > 0) {
        int64_t lo, hi;
        s = int_range(&cur, &lo, &hi);
        if (s == CK_OK && (lo < 0 || hi >= size))
            s = ck_error_set(CK_ERR_VALUE, "index %lld is out of bounds for array with size %lld",
                             (long long)(lo < 0 ? lo : hi), (long long)size);
    }
    /* peel coordinates off the fastest-varying axis first */
    int done = 0;
    for (; done < ndim && s == CK_OK; done++) {
        int d = order_f ? done : ndim - 1 - done;
        int64_t len = dims[d] ? dims[d] : 1;
        s = binop_k(CK_OP_REMAINDER, &cur, len, &coords[d]);
        if (s != CK_OK) break;
        s = binop_k(CK_OP_FLOOR_DIVIDE, &cur, len, &next);
        if (s != CK_OK) {
            ck_array_release(&coords[d]);
            break;
        }
        ck_array_release(&cur);
        cur = next;
    }
    ck_array_release(&cur);
    if (s != CK_OK)
        for (int j = 0; j < done; j++) ck_array_release(&coords[order_f ? j : ndim - 1 - j]);
    return s;
}

/* One coordinate array as int64, its mode applied (raise: checked), times
 * the axis' stride. */
static ck_status ravel_term(ck_array *out, const ck_array *x, int64_t dim, ck_index_mode mode, int64_t stride)
{
    if (!ck_dtype_is_integer(x->dtype)) return ck_error_set(CK_ERR_TYPE, "only int indices permitted");
    ck_array c, t1, t2;
    ck_status s = ck_array_astype(&c, x, CK_INT64, 0);
    if (s != CK_OK) return s;
    if (mode == CK_INDEX_RAISE && c.size > 0) {
        int64_t lo, hi;
        s = int_range(&c, &lo, &hi);
        if (s == CK_OK && (lo < 0 || hi >= dim)) s = ck_error_set(CK_ERR_VALUE, "invalid entry in coordinates array");
    } else if (mode == CK_INDEX_WRAP && dim > 0) {
        s = binop_k(CK_OP_REMAINDER, &c, dim, &t1);
        if (s == CK_OK) { ck_array_release(&c); c = t1; }
    } else if (mode == CK_INDEX_CLIP && dim > 0) {
        s = binop_k(CK_OP_MINIMUM, &c, dim - 1, &t1);
        if (s == CK_OK) {
            s = binop_k(CK_OP_MAXIMUM, &t1, 0, &t2);
            ck_array_release(&t1);
        }
        if (s == CK_OK) { ck_array_release(&c); c = t2; }
    }
    if (s == CK_OK) s = binop_k(CK_OP_MULTIPLY, &c, stride, out);
    ck_array_release(&c);
    return s;
}

ck_status ck_ravel_multi_index(ck_array *out, const ck_array *const *multi_index, int ndim, const int64_t *dims,
                               const ck_index_mode *modes, int order_f)
{
    ck_status s = check_dims(ndim, dims);
    if (s != CK_OK) return s;
    if (ck_shape_size(ndim, dims) < 0)
        return ck_error_set(CK_ERR_VALUE, "invalid dims: array size defined by dims is larger than the maximum possible size.");
    int64_t stride[CK_MAXDIMS], acc = 1;
    for (int j = 0; j < ndim; j++) {
        int d = order_f ? j : ndim - 1 - j;
        stride[d] = acc;
        acc *= dims[d];
    }
    ck_array total = {0};
    for (int i = 0; i < ndim && s == CK_OK; i++) {
        ck_array term, sum;
        s = ravel_term(&term, multi_index[i], dims[i], modes[i], stride[i]);
        if (s != CK_OK) break;
        if (!total.buf) {
            total = term;
            continue;
        }
        s = ck_ufunc_call2(CK_OP_ADD, &total, &term, &sum);
        ck_array_release(&term);
        ck_array_release(&total);
        if (s == CK_OK) total = sum;
    }
    if (s != CK_OK) {
        if (total.buf) ck_array_release(&total);
        return s;
    }
    if (!total.buf) return ck_error_set(CK_ERR_VALUE, "ravel_multi_index needs at least one dimension");
    *out = total;
    return CK_OK;
}

ck_status ck_tri_indices(ck_array *out, int64_t n, int64_t m, int64_t k, int upper, ck_device dev)
{
    if (n < 0 || m < 0) return ck_error_set(CK_ERR_VALUE, "negative dimensions are not allowed");
    /* (rows, cols) of the elements with cols - rows <= k (lower) or >= k */
    ck_array r, rr, c, cc, d, mask;
    int64_t rs[2] = {n, 1}, cs[2] = {1, m};
    ck_status s = ck_arange(&r, 0, 1, n, CK_INT64, dev);
    if (s != CK_OK) return s;
    s = ck_array_reshape(&rr, &r, 2, rs, 0);
    ck_array_release(&r);
    if (s != CK_OK) return s;
    s = ck_arange(&c, 0, 1, m, CK_INT64, dev);
    if (s == CK_OK) {
        s = ck_array_reshape(&cc, &c, 2, cs, 0);
        ck_array_release(&c);
    }
    if (s == CK_OK) {
        s = ck_ufunc_call2(CK_OP_SUBTRACT, &cc, &rr, &d);
        ck_array_release(&cc);
    }
    ck_array_release(&rr);
    if (s == CK_OK) {
        s = binop_k(upper ? CK_OP_GREATER_EQUAL : CK_OP_LESS_EQUAL, &d, k, &mask);
        ck_array_release(&d);
    }
    if (s != CK_OK) return s;
    s = ck_nonzero(out, &mask);
    ck_array_release(&mask);
    return s;
}

/* -------------------------------------------------------- select, choose */

ck_status ck_select(ck_array *out, int n, const ck_array *const *condlist, const ck_array *const *choicelist,
                    const ck_operand *dflt)
{
    if (n == 0) return ck_error_set(CK_ERR_VALUE, "select with an empty condition list is not possible");
    ck_operand ops[3];
    memset(ops, 0, sizeof ops);
    if (dflt) {
        ops[2] = *dflt;
    } else {
        ops[2].scalar.dtype = CK_INT64;
        ops[2].weak = 1;
    }
    /* the first condition that holds wins: where() is chained from the
     * last pair back to the first */
    ck_array res = {0};
    ck_status s = CK_OK;
    for (int i = n - 1; i >= 0 && s == CK_OK; i--) {
        if (condlist[i]->dtype != CK_BOOL) {
            s = ck_error_set(CK_ERR_TYPE, "invalid entry %d in condlist: should be boolean ndarray", i);
            break;
        }
        ck_array next;
        ops[0].array = condlist[i];
        ops[1].array = choicelist[i];
        s = ck_ufunc_apply(CK_OP_WHERE, 3, ops, &next, 0, CK_DTYPE_INVALID);
        if (res.buf) ck_array_release(&res);
        res.buf = NULL;
        if (s != CK_OK) break;
        res = next;
        ops[2].array = &res;
        ops[2].weak = 0;
    }
    if (s != CK_OK) {
        if (res.buf) ck_array_release(&res);
        return s;
    }
    *out = res;
    return CK_OK;
}

ck_status ck_choose(ck_array *out, const ck_array *a, int n, const ck_array *const *choices, ck_index_mode mode)
{
    if (!ck_dtype_is_integer(a->dtype) && a->dtype != CK_BOOL)
        return ck_error_set(CK_ERR_TYPE, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                            ck_dtype_get_info(a->dtype)->name);
    if (n == 0) return ck_error_set(CK_ERR_VALUE, "choices must not be empty");
    ck_device dev = ck_array_device(a);
    ck_operand *ops = calloc((size_t)n, sizeof *ops);
    int *nds = malloc(((size_t)n + 1) * sizeof *nds);
    const int64_t **shs = malloc(((size_t)n + 1) * sizeof *shs);
    ck_array stack = {0}, ab = {0}, ai = {0}, ar[CK_MAXDIMS];
    int nar = 0;
    ck_status s = CK_OK;
    if (!ops || !nds || !shs) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory in choose");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ops[i].array = choices[i];
        nds[i] = choices[i]->ndim;
        shs[i] = choices[i]->shape;
    }
    nds[n] = a->ndim;
    shs[n] = a->shape;
    ck_dtype dt;
    int bnd;
    int64_t bshape[CK_MAXDIMS + 1];
    if ((s = ck_promote_operands(n, ops, &dt)) != CK_OK) goto done;
    if ((s = ck_broadcast_shapes(n + 1, nds, shs, &bnd, bshape)) != CK_OK) goto done;
    if (bnd + 1 > CK_MAXDIMS) {
        s = ck_error_set(CK_ERR_VALUE, "choose: too many dimensions");
        goto done;
    }
    /* the choices stacked along a new first axis, then one gather picks
     * stack[a[p], p] for every position p */
    int64_t sshape[CK_MAXDIMS];
    sshape[0] = n;
    memcpy(sshape + 1, bshape, (size_t)bnd * 8);
    if ((s = ck_array_empty(&stack, bnd + 1, sshape, dt, dev)) != CK_OK) goto done;
    for (int i = 0; i < n && s == CK_OK; i++) {
        ck_array row;
        ck_array_view(&row, &stack);
        row.data += i * stack.strides[0];
        ck_array_set_layout(&row, bnd, stack.shape + 1, stack.strides + 1);
        s = ck_array_assign(&row, choices[i]);
        ck_array_release(&row);
    }
    if (s != CK_OK) goto done;
    if ((s = ck_array_astype(&ai, a, CK_INT64, 0)) != CK_OK) goto done;
    if ((s = ck_array_broadcast_to(&ab, &ai, bnd, bshape)) != CK_OK) goto done;
    ck_index_item items[CK_MAXDIMS + 1];
    memset(items, 0, sizeof items);
    items[0].kind = CK_INDEX_ARRAY;
    items[0].array = &ab;
    for (int d = 0; d < bnd && s == CK_OK; d++) {
        ck_array r;
        int64_t shape[CK_MAXDIMS];
        for (int j = 0; j < bnd; j++) shape[j] = j == d ? bshape[d] : 1;
        s = ck_arange(&r, 0, 1, bshape[d], CK_INT64, dev);
        if (s == CK_OK) {
            s = ck_array_reshape(&ar[nar], &r, bnd, shape, 0);
            ck_array_release(&r);
        }
        if (s == CK_OK) {
            items[d + 1].kind = CK_INDEX_ARRAY;
            items[d + 1].array = &ar[nar++];
        }
    }
    if (s != CK_OK) goto done;
    s = ck_index_get(out, &stack, bnd + 1, items, mode);
    if (s == CK_ERR_INDEX && mode == CK_INDEX_RAISE) {
        ck_error_clear();
        s = ck_error_set(CK_ERR_VALUE, "invalid entry in choice array");
    }
done:
    for (int j = 0; j < nar; j++) ck_array_release(&ar[j]);
    if (ab.buf) ck_array_release(&ab);
    if (ai.buf) ck_array_release(&ai);
    if (stack.buf) ck_array_release(&stack);
    free(ops);
    free(nds);
    free(shs);
    return s;
}
