/* Gradient rule of matmul: for C = A @ B, dA = G @ B^H and dB = A^H @ G,
 * with numpy.matmul's 1-d operands made matrices first and their dimension
 * dropped again after; the engine sums the broadcast batch dimensions. */
#include "ag_rules.h"

#include <string.h>

/* A view of x with its last two axes swapped. */
static ck_status swap_last(ck_array *out, const ck_array *x)
{
    int perm[CK_MAXDIMS];
    for (int i = 0; i < x->ndim; i++) perm[i] = i;
    perm[x->ndim - 1] = x->ndim - 2;
    perm[x->ndim - 2] = x->ndim - 1;
    return ck_array_transpose(out, x, perm);
}

/* x as a matrix (a 1-d x a row when first, a column when second), then
 * its conjugate transpose when adjoint. */
static ck_status as_matrix(ck_array *out, const ck_array *x, int first, int adjoint)
{
    ck_array m;
    if (x->ndim == 1) {
        int64_t shape[2] = {first ? 1 : x->shape[0], first ? x->shape[0] : 1};
        CK_AG_TRY(ck_array_reshape(&m, x, 2, shape, 0));
    } else {
        ck_array_view(&m, x);
    }
    if (!adjoint) {
        *out = m;
        return CK_OK;
    }
    ck_array t;
    ck_status s = swap_last(&t, &m);
    ck_array_release(&m);
    if (s != CK_OK) return s;
    if (!ck_dtype_is_complex(t.dtype)) {
        *out = t;
        return CK_OK;
    }
    ck_operand o = {.array = &t};
    s = ck_ufunc_apply(CK_OP_CONJUGATE, 1, &o, out, 0, CK_DTYPE_INVALID);
    ck_array_release(&t);
    return s;
}

/* Drop the dimension a 1-d operand gained (axis from the end). */
static ck_status drop_dim(ck_array *g, int from_end)
{
    int64_t shape[CK_MAXDIMS];
    int nd = 0;
    for (int i = 0; i < g->ndim; i++)
        if (i != g->ndim - from_end) shape[nd++] = g->shape[i];
    ck_array r;
    CK_AG_TRY(ck_array_reshape(&r, g, nd, shape, 0));
    ck_array_release(g);
    *g = r;
    return CK_OK;
}

/* Whether x is a matrix stored transposed (x.T of a C-contiguous one, as
 * Linear's weight is used): its gradient is then made in that layout, so
 * that it reaches the weight C-contiguous (no copy at the leaf). */
static int transposed_2d(const ck_array *x)
{
    return x->ndim == 2 && (x->flags & CK_ARRAY_F_CONTIGUOUS) && !(x->flags & CK_ARRAY_C_CONTIGUOUS);
}

/* out = (p @ q)^T computed as q^T @ p^T (a transposed view of a C-contiguous product). */
static ck_status matmul_transposed(ck_array *out, const ck_array *p, const ck_array *q)
{
    ck_array pt, qt, r;
    CK_AG_TRY(swap_last(&pt, p));
    ck_status s = swap_last(&qt, q);
    if (s == CK_OK) {
        s = ck_ag_matmul(&r, &qt, &pt);
        ck_array_release(&qt);
        if (s == CK_OK) {
            s = swap_last(out, &r);
            ck_array_release(&r);
        }
    }
    ck_array_release(&pt);
    return s;
}

static ck_status matmul_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_array *a = &n->saved[0].arr, *b = &n->saved[1].arr;
    const ck_array *g = &gout[0];
    /* G with the dimensions of 1-d operands put back: (..., n', m') */
    int64_t shape[CK_MAXDIMS + 2];
    int nd = g->ndim;
    memcpy(shape, g->shape, (size_t)nd * sizeof *shape);
    if (a->ndim == 1) {
        /* the row dimension goes before the last (or is the only one) */
        int pos = b->ndim == 1 ? nd : nd - 1;
        memmove(shape + pos + 1, shape + pos, (size_t)(nd - pos) * sizeof *shape);
        shape[pos] = 1;
        nd++;
    }
    if (b->ndim == 1) shape[nd++] = 1;
    ck_array G;
    CK_AG_TRY(ck_array_reshape(&G, g, nd, shape, 0));
    ck_status s = CK_OK;
    if (ck_ag_needs_grad(n, 0)) {
        ck_array bh;
        s = as_matrix(&bh, b, 0, 1);
        if (s == CK_OK) {
            s = transposed_2d(a) && G.ndim == 2 ? matmul_transposed(&gin[0], &G, &bh) : ck_ag_matmul(&gin[0], &G, &bh);
            ck_array_release(&bh);
        }
        if (s == CK_OK && a->ndim == 1) s = drop_dim(&gin[0], 2);
    }
    if (s == CK_OK && ck_ag_needs_grad(n, 1)) {
        ck_array ah;
        s = as_matrix(&ah, a, 1, 1);
        if (s == CK_OK) {
            s = transposed_2d(b) && G.ndim == 2 ? matmul_transposed(&gin[1], &ah, &G) : ck_ag_matmul(&gin[1], &ah, &G);
            ck_array_release(&ah);
        }
        if (s == CK_OK && b->ndim == 1) s = drop_dim(&gin[1], 1);
    }
    ck_array_release(&G);
    return s;
}

const ck_ag_rule ck_ag_rules_linalg[] = {
    {"matmul", matmul_bw, 0, NULL},
    {NULL, NULL, 0, NULL},
};
