/* Gradient rules of the training ops and of indexing, joining, where,
 * clip, the order and moment reductions and cumsum (issue 16, trainops),
 * with the recording of the ops that record.c does not cover
 * (include/cudakit_autograd_ops.h).
 *
 * Saved slots: the reductions recorded by ck_ag_record_reduce have the
 * input at 0 and the output at 1; the element-wise ones (where, clip) their
 * inputs at 0..nin-1 (record.c).  The records below say their own. */
#include "ag_rules.h"
#include "cudakit_autograd_ops.h"
#include "cudakit_train.h"

#include <stdlib.h>
#include <string.h>

static int needs(const ck_ag_var *v) { return v && v->requires_grad; }
static int carries(const ck_array *out) { return ck_dtype_is_inexact(out->dtype); }

/* A few arrays a rule makes on its way, released together. */
typedef struct tmps {
    int n;
    ck_array a[12];
} tmps;

static ck_array *tnew(tmps *t)
{
    ck_array *a = &t->a[t->n++];
    memset(a, 0, sizeof *a);
    return a;
}

static void tfree(tmps *t)
{
    for (int i = 0; i < t->n; i++)
        if (t->a[i].buf) ck_array_release(&t->a[i]);
}

#define TRY(call) do { if ((s = (call)) != CK_OK) goto done; } while (0)

static ck_status where3(ck_array *out, ck_operand c, ck_operand x, ck_operand y)
{
    ck_operand in[3] = {c, x, y};
    return ck_ufunc_apply(CK_OP_WHERE, 3, in, out, 0, CK_DTYPE_INVALID);
}

/* A node of one array input (saved at 0 when save_in) and one output
 * (saved at 1 when save_out), params copied in. */
static ck_status record_one(const char *name, const ck_array *a, ck_ag_var *va, const void *params, size_t psize,
                            int save_in, int save_out, const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    const ck_ag_rule *r = ck_ag_rule_find(name);
    if (!r) r = ck_ag_rule_missing(name);
    ck_ag_node *n = ck_ag_node_new(r, 1, 1, 2, psize);
    if (!n) return ck_error_status();
    if (psize) memcpy(n->params, params, psize);
    ck_ag_node_set_input(n, 0, va, a);
    if (save_in) ck_ag_node_save(n, 0, a);
    if (save_out) ck_ag_node_save(n, 1, out);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

/* ------------------------------------------------------------ softmax */

typedef struct softmax_params {
    int axis;
} softmax_params;

ck_status ck_ag_record_softmax(const ck_array *a, ck_ag_var *va, int axis, int log_, const ck_array *out,
                               ck_ag_var **ov)
{
    softmax_params p = {axis};
    return record_one(log_ ? "log_softmax" : "softmax", a, va, &p, sizeof p, 0, 1, out, ov);
}

static ck_status softmax_common(ck_ag_node *n, const ck_array *gout, ck_array *gin, int log_)
{
    const softmax_params *p = n->params;
    return ck_softmax_backward(&gin[0], &gout[0], &n->saved[1].arr, p->axis, log_);
}

static ck_status softmax_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return softmax_common(n, gout, gin, 0); }
static ck_status log_softmax_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return softmax_common(n, gout, gin, 1); }

/* ---------------------------------------------------------- logsumexp */

ck_status ck_ag_record_logsumexp(const ck_array *a, ck_ag_var *va, uint64_t mask, int keepdims, const ck_array *out,
                                 ck_ag_var **ov)
{
    ck_ag_reduce_params p = {.mask = mask, .keepdims = keepdims, .scale = 1.0};
    return record_one("logsumexp", a, va, &p, sizeof p, 1, 1, out, ov);
}

/* the softmax over the reduced axes: g * exp(x - lse) */
static ck_status logsumexp_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_array *x = &n->saved[0].arr, *y = &n->saved[1].arr;
    ck_status s;
    tmps T = {0};
    ck_array *gb = tnew(&T), *yb = tnew(&T), *d = tnew(&T), *e = tnew(&T);
    TRY(ck_ag_unreduce(gb, &gout[0], p->mask, p->keepdims, x->ndim, x->shape));
    TRY(ck_ag_unreduce(yb, y, p->mask, p->keepdims, x->ndim, x->shape));
    TRY(ck_ufunc_call2(CK_OP_SUBTRACT, x, yb, d));
    TRY(ck_ag_un(CK_OP_EXP, ck_ag_arr(d), e));
    TRY(ck_ufunc_call2(CK_OP_MULTIPLY, gb, e, &gin[0]));
done:
    tfree(&T);
    return s;
}

/* ------------------------------------------------------ cross entropy */

typedef struct xent_params {
    ck_xent_args args;
} xent_params;

ck_status ck_ag_record_cross_entropy(const ck_array *logits, ck_ag_var *vl, const ck_array *target, ck_ag_var *vt,
                                     const ck_xent_args *args, const ck_array *loss, const ck_array *lse,
                                     const ck_array *total, ck_ag_var **ov)
{
    *ov = NULL;
    int prob = ck_dtype_is_float(target->dtype);
    if (!carries(loss) || !(needs(vl) || (prob && needs(vt)))) return CK_OK;
    ck_ag_node *n = ck_ag_node_new(ck_ag_rule_find("cross_entropy"), 2, 1, 4, sizeof(xent_params));
    if (!n) return ck_error_status();
    ((xent_params *)n->params)->args = *args;
    ck_ag_node_set_input(n, 0, needs(vl) ? vl : NULL, logits);
    ck_ag_node_set_input(n, 1, prob && needs(vt) ? vt : NULL, target);
    ck_ag_node_save(n, 0, logits);
    ck_ag_node_save(n, 1, target);
    ck_ag_node_save(n, 2, lse);
    ck_ag_node_save(n, 3, total);
    *ov = ck_ag_node_output(n, 0, loss);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

/* logits: the fused backward.  Probability targets: the loss is
 * -sum(q * log_softmax(x)) with q = (1 - eps) p + eps / C, so
 * d/dp = -(1 - eps) * scale * log_softmax(x). */
static ck_status cross_entropy_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_xent_args *a = &((const xent_params *)n->params)->args;
    const ck_array *x = &n->saved[0].arr, *t = &n->saved[1].arr, *lse = &n->saved[2].arr, *tot = &n->saved[3].arr;
    ck_status s = CK_OK;
    tmps T = {0};
    if (ck_ag_needs_grad(n, 0)) TRY(ck_softmax_xent_backward(&gin[0], &gout[0], x, t, lse, tot, a));
    if (ck_ag_needs_grad(n, 1)) {
        int axis = a->class_axis;
        TRY(ck_axis_normalize(&axis, x->ndim));
        ck_array *lp = tnew(&T), *g = tnew(&T), *sc = tnew(&T);
        TRY(ck_softmax(lp, x, axis, 1));
        /* the loss's gradient as a scale of each row (none) or of all (mean: over total) */
        if (a->reduction == CK_REDUCTION_NONE) {
            int64_t ks[CK_MAXDIMS];
            for (int i = 0; i < x->ndim; i++) ks[i] = i == axis ? 1 : x->shape[i];
            TRY(ck_array_reshape(g, &gout[0], x->ndim, ks, 0));
        } else if (a->reduction == CK_REDUCTION_MEAN) {
            TRY(ck_ufunc_call2(CK_OP_TRUE_DIVIDE, &gout[0], tot, g));
        } else {
            ck_array_view(g, &gout[0]);
        }
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ck_ag_arr(g), ck_ag_num(a->label_smoothing - 1.0), sc));
        TRY(ck_ufunc_call2(CK_OP_MULTIPLY, sc, lp, &gin[1]));
    }
done:
    tfree(&T);
    return s;
}

/* cross_entropy of softmax(z) (CE's input 0 the softmax's output): the
 * gradient of z in one row pass, when the softmax is over the class axis
 * and no probability target needs a gradient. */
static int xent_softmax_can(const ck_ag_node *n, const ck_ag_node *c)
{
    const ck_xent_args *a = &((const xent_params *)n->params)->args;
    const softmax_params *p = c->params;
    const ck_array *x = &n->saved[0].arr;
    int axis = a->class_axis, sm = p->axis;
    if (ck_ag_needs_grad(n, 1) || !x->buf || ck_axis_normalize(&axis, x->ndim) != CK_OK ||
        ck_axis_normalize(&sm, x->ndim) != CK_OK) {
        ck_error_clear();
        return 0;
    }
    return axis == sm;
}

static ck_status xent_softmax_bw(ck_ag_node *n, ck_ag_node *c, const ck_array *gout, ck_array *gin)
{
    (void)c;
    const ck_xent_args *a = &((const xent_params *)n->params)->args;
    return ck_softmax_xent_softmax_backward(&gin[0], &gout[0], &n->saved[0].arr, &n->saved[1].arr,
                                            &n->saved[2].arr, &n->saved[3].arr, a);
}

/* ------------------------------------------------- max, min (amax/amin) */

/* The gradient goes to the elements equal to the result, shared evenly
 * among ties (PyTorch's amax/amin). */
static ck_status order_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_array *x = &n->saved[0].arr, *y = &n->saved[1].arr;
    ck_status s;
    tmps T = {0};
    ck_array *yb = tnew(&T), *gb = tnew(&T), *eq = tnew(&T), *m = tnew(&T), *cnt = tnew(&T), *t = tnew(&T);
    TRY(ck_ag_unreduce(yb, y, p->mask, p->keepdims, x->ndim, x->shape));
    TRY(ck_ag_unreduce(gb, &gout[0], p->mask, p->keepdims, x->ndim, x->shape));
    TRY(ck_ufunc_call2(CK_OP_EQUAL, x, yb, eq));
    TRY(ck_array_astype(m, eq, gout[0].dtype, 0));
    TRY(ck_reduce(CK_REDUCE_SUM, m, p->mask, 1, gout[0].dtype, cnt, 0));
    TRY(ck_ufunc_call2(CK_OP_MULTIPLY, m, gb, t));
    TRY(ck_ufunc_call2(CK_OP_TRUE_DIVIDE, t, cnt, &gin[0]));
done:
    tfree(&T);
    return s;
}

/* ---------------------------------------------------------------- prod */

/* prod_{j < i} x_j along the last axis of the C-contiguous x (reverse:
 * prod_{j > i}), as a new array. */
static ck_status exclusive_cumprod(ck_array *out, const ck_array *x, int reverse)
{
    int nd = x->ndim;
    int64_t len = x->shape[nd - 1], isz = ck_array_itemsize(x);
    ck_array src, c;
    ck_array_view(&src, x);
    if (reverse && len > 0) {
        src.data += (len - 1) * src.strides[nd - 1];
        src.strides[nd - 1] = -src.strides[nd - 1];
        ck_array_update_flags(&src);
    }
    ck_status s = ck_scan(CK_REDUCE_PROD, &src, nd - 1, x->dtype, &c, 0);
    ck_array_release(&src);
    if (s != CK_OK) return s;
    s = ck_full_scalar(out, nd, x->shape, x->dtype, 1.0, ck_array_device(x));
    if (s == CK_OK && len > 1) {
        /* out[..., 1:] = c[..., :-1], both in the scan's order */
        ck_array dst, from;
        ck_array_view(&dst, out);
        ck_array_view(&from, &c);
        int64_t shape[CK_MAXDIMS];
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)nd);
        shape[nd - 1] = len - 1;
        if (reverse) {
            dst.data += (len - 2) * isz;
            int64_t st[CK_MAXDIMS];
            memcpy(st, out->strides, sizeof(int64_t) * (size_t)nd);
            st[nd - 1] = -st[nd - 1];
            ck_array_set_layout(&dst, nd, shape, st);
        } else {
            dst.data += isz;
            ck_array_set_layout(&dst, nd, shape, out->strides);
        }
        ck_array_set_layout(&from, nd, shape, c.strides);
        s = ck_array_assign(&dst, &from);
        ck_array_release(&dst);
        ck_array_release(&from);
    }
    ck_array_release(&c);
    if (s != CK_OK && out->buf) ck_array_release(out);
    return s;
}

/* g times the product of the other elements of each reduced group, made
 * without dividing (so zeros are right): the reduced axes moved last and
 * flattened, the exclusive products from both ends multiplied. */
static ck_status prod_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_array *x = &n->saved[0].arr;
    int nd = x->ndim;
    ck_status s;
    tmps T = {0};
    if (nd == 0 || x->size == 0) {
        /* a 0-d input is its own product; an empty one gets an empty gradient */
        s = x->size == 0 ? ck_ag_zeros(&gin[0], nd, x->shape, gout[0].dtype, ck_array_device(x))
                         : ck_array_reshape(&gin[0], &gout[0], 0, NULL, 0);
        return s;
    }
    int perm[CK_MAXDIMS], inv[CK_MAXDIMS], nk = 0;
    int64_t kshape[CK_MAXDIMS + 1], len = 1;
    for (int i = 0; i < nd; i++)
        if (!(p->mask >> i & 1)) kshape[nk] = x->shape[i], perm[nk++] = i;
    for (int i = 0, j = nk; i < nd; i++)
        if (p->mask >> i & 1) len *= x->shape[i], perm[j++] = i;
    for (int i = 0; i < nd; i++) inv[perm[i]] = i;
    kshape[nk] = len;
    ck_array *tr = tnew(&T), *flat = tnew(&T), *ef = tnew(&T), *eb = tnew(&T), *others = tnew(&T);
    ck_array *gk = tnew(&T), *gt = tnew(&T), *back = tnew(&T);
    TRY(ck_array_transpose(tr, x, perm));
    ck_array c;
    TRY(ck_array_astype(&c, tr, x->dtype, 0));
    s = ck_array_reshape(flat, &c, nk + 1, kshape, 0);
    ck_array_release(&c);
    if (s != CK_OK) goto done;
    TRY(exclusive_cumprod(ef, flat, 0));
    TRY(exclusive_cumprod(eb, flat, 1));
    TRY(ck_ufunc_call2(CK_OP_MULTIPLY, ef, eb, others));
    /* g over the kept axes, one column */
    kshape[nk] = 1;
    {
        ck_array gv;
        int64_t gshape[CK_MAXDIMS];
        for (int i = 0; i < nk; i++) gshape[i] = kshape[i];
        TRY(ck_array_reshape(&gv, &gout[0], nk, gshape, 0));
        s = ck_array_reshape(gk, &gv, nk + 1, kshape, 0);
        ck_array_release(&gv);
        if (s != CK_OK) goto done;
    }
    TRY(ck_ufunc_call2(CK_OP_MULTIPLY, others, gk, gt));
    {
        int64_t tshape[CK_MAXDIMS];
        for (int i = 0; i < nd; i++) tshape[i] = x->shape[perm[i]];
        TRY(ck_array_reshape(back, gt, nd, tshape, 0));
    }
    TRY(ck_array_transpose(&gin[0], back, inv));
done:
    tfree(&T);
    return s;
}

/* ------------------------------------------------------------ var, std */

/* var: g * 2 (x - mean) / (N - ddof); std: g * (x - mean) / ((N - ddof) std) */
static ck_status moment_common(ck_ag_node *n, const ck_array *gout, ck_array *gin, int take_sqrt)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_array *x = &n->saved[0].arr, *y = &n->saved[1].arr;
    double count = p->scale > 0 ? 1.0 / p->scale : 0.0;
    double div = count - p->ddof;
    ck_status s;
    tmps T = {0};
    ck_array *mean = tnew(&T), *d = tnew(&T), *gb = tnew(&T), *t = tnew(&T), *u = tnew(&T), *yb = tnew(&T);
    TRY(ck_mean(x, p->mask, 1, CK_DTYPE_INVALID, mean));
    TRY(ck_ufunc_call2(CK_OP_SUBTRACT, x, mean, d));
    TRY(ck_ag_unreduce(gb, &gout[0], p->mask, p->keepdims, x->ndim, x->shape));
    TRY(ck_ufunc_call2(CK_OP_MULTIPLY, gb, d, t));
    if (take_sqrt) {
        TRY(ck_ag_unreduce(yb, y, p->mask, p->keepdims, x->ndim, x->shape));
        TRY(ck_ufunc_call2(CK_OP_TRUE_DIVIDE, t, yb, u));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ck_ag_arr(u), ck_ag_num(1.0 / div), &gin[0]));
    } else {
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ck_ag_arr(t), ck_ag_num(2.0 / div), &gin[0]));
    }
done:
    tfree(&T);
    return s;
}

static ck_status var_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return moment_common(n, gout, gin, 0); }
static ck_status std_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return moment_common(n, gout, gin, 1); }

/* ------------------------------------------------------------- cumsum */

typedef struct scan_params {
    int axis;          /* of the input; the flattened input's 0 when flat */
    int flat;
} scan_params;

ck_status ck_ag_record_scan(const char *name, const ck_array *a, ck_ag_var *va, int axis, int axis_none,
                            const ck_array *out, ck_ag_var **ov)
{
    scan_params p = {axis_none ? 0 : axis, axis_none};
    if (!axis_none && a->ndim && ck_axis_normalize(&p.axis, a->ndim) != CK_OK) return ck_error_status();
    return record_one(name, a, va, &p, sizeof p, 0, 0, out, ov);
}

/* the sum of the gradient from each element to the end: a reversed cumsum */
static ck_status cumsum_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const scan_params *p = n->params;
    const ck_ag_input *in = &n->in[0];
    const ck_array *g = &gout[0];
    if (g->ndim == 0 || g->size == 0) return ck_array_reshape(&gin[0], g, in->ndim, in->shape, 0);
    ck_array rv, c;
    ck_array_view(&rv, g);
    int ax = p->axis;
    rv.data += (g->shape[ax] - 1) * g->strides[ax];
    rv.strides[ax] = -rv.strides[ax];
    ck_array_update_flags(&rv);
    ck_status s = ck_scan(CK_REDUCE_SUM, &rv, ax, g->dtype, &c, 0);
    ck_array_release(&rv);
    if (s != CK_OK) return s;
    ck_array back;
    ck_array_view(&back, &c);
    back.data += (c.shape[ax] - 1) * c.strides[ax];
    back.strides[ax] = -back.strides[ax];
    ck_array_update_flags(&back);
    ck_array_release(&c);
    s = ck_array_reshape(&gin[0], &back, in->ndim, in->shape, 0);
    ck_array_release(&back);
    return s;
}

/* ------------------------------------------------------- where, clip */

/* where(c, x, y): x's gradient where c holds, y's elsewhere (input 0, the
 * condition, has none) */
static ck_status where_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s = CK_OK;
    ck_operand c = ck_ag_in(n, 0), g = ck_ag_arr(&gout[0]), z = ck_ag_num(0.0);
    if (ck_ag_needs_grad(n, 1) && (s = where3(&gin[1], c, g, z)) != CK_OK) return s;
    if (ck_ag_needs_grad(n, 2)) s = where3(&gin[2], c, z, g);
    return s;
}

/* clip(x, lo, hi) as PyTorch's clamp: x's gradient where lo <= x <= hi,
 * lo's where x < lo, hi's where x > hi */
static ck_status clip_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s;
    tmps T = {0};
    ck_operand x = ck_ag_in(n, 0), lo = ck_ag_in(n, 1), hi = ck_ag_in(n, 2);
    ck_operand g = ck_ag_arr(&gout[0]), z = ck_ag_num(0.0);
    ck_array *below = tnew(&T), *above = tnew(&T), *out = tnew(&T);
    TRY(ck_ag_bin(CK_OP_LESS, x, lo, below));
    TRY(ck_ag_bin(CK_OP_GREATER, x, hi, above));
    if (ck_ag_needs_grad(n, 0)) {
        TRY(ck_ufunc_call2(CK_OP_LOGICAL_OR, below, above, out));
        TRY(where3(&gin[0], ck_ag_arr(out), z, g));
    }
    if (ck_ag_needs_grad(n, 1)) TRY(where3(&gin[1], ck_ag_arr(below), g, z));
    if (ck_ag_needs_grad(n, 2)) TRY(where3(&gin[2], ck_ag_arr(above), g, z));
done:
    tfree(&T);
    return s;
}

/* ------------------------------------------------------------- gathers */

/* Integer and boolean indexing, take, take_along_axis: positions holds,
 * for each output element, the flat (C order) position of the input
 * element it came from; the gradient adds the output's into those. */
static ck_status record_gather(const char *name, const ck_array *a, ck_ag_var *va, const ck_array *positions,
                               const ck_array *out, ck_ag_var **ov)
{
    ck_ag_node *n = ck_ag_node_new(ck_ag_rule_find(name), 1, 1, 1, 0);
    if (!n) return ck_error_status();
    ck_ag_node_set_input(n, 0, va, a);
    ck_ag_node_save(n, 0, positions);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

/* arange(a.size) in a's shape: what a gather of a's positions reads */
static ck_status positions_of(ck_array *out, const ck_array *a)
{
    ck_array flat;
    ck_status s = ck_arange(&flat, 0.0, 1.0, a->size, CK_INT64, ck_array_device(a));
    if (s != CK_OK) return s;
    s = ck_array_reshape(out, &flat, a->ndim, a->shape, 0);
    ck_array_release(&flat);
    return s;
}

ck_status ck_ag_record_index(const ck_array *a, ck_ag_var *va, int n, const ck_index_item *items, ck_index_mode mode,
                             const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    ck_array pos, iota;
    ck_status s = positions_of(&iota, a);
    if (s != CK_OK) return s;
    s = ck_index_get(&pos, &iota, n, items, mode);
    ck_array_release(&iota);
    if (s != CK_OK) return s;
    s = record_gather("index", a, va, &pos, out, ov);
    ck_array_release(&pos);
    return s;
}

ck_status ck_ag_record_take(const ck_array *a, ck_ag_var *va, const ck_array *indices, int axis, int axis_none,
                            ck_index_mode mode, const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    ck_array pos, iota;
    ck_status s = positions_of(&iota, a);
    if (s != CK_OK) return s;
    s = ck_take(&pos, &iota, indices, axis, axis_none, mode);
    ck_array_release(&iota);
    if (s != CK_OK) return s;
    s = record_gather("take", a, va, &pos, out, ov);
    ck_array_release(&pos);
    return s;
}

ck_status ck_ag_record_take_along_axis(const ck_array *a, ck_ag_var *va, const ck_array *indices, int axis,
                                       int axis_none, const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    ck_array pos, iota;
    ck_status s = positions_of(&iota, a);
    if (s != CK_OK) return s;
    s = ck_take_along_axis(&pos, &iota, indices, axis, axis_none);
    ck_array_release(&iota);
    if (s != CK_OK) return s;
    s = record_gather("take_along_axis", a, va, &pos, out, ov);
    ck_array_release(&pos);
    return s;
}

static ck_status gather_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_input *in = &n->in[0];
    const ck_array *pos = &n->saved[0].arr;
    int64_t size = 1;
    for (int i = 0; i < in->ndim; i++) size *= in->shape[i];
    ck_array z;
    ck_status s = ck_ag_zeros(&z, 1, &size, gout[0].dtype, ck_array_device(&gout[0]));
    if (s != CK_OK) return s;
    if ((s = ck_scatter_add(&z, pos, &gout[0])) == CK_OK) s = ck_array_reshape(&gin[0], &z, in->ndim, in->shape, 0);
    ck_array_release(&z);
    return s;
}

/* ------------------------------------------------- concatenate, stack */

typedef struct join_params {
    int axis;          /* of the output */
    int stack;         /* each input is one index along axis (else a run of offsets) */
    int flat;          /* concatenate(axis=None): the inputs were flattened */
    int n;
    int64_t offset[];  /* concatenate: input i starts at offset[i] along axis */
} join_params;

ck_status ck_ag_record_join(int stack, int n, const ck_array *const *in, ck_ag_var *const *vars, int axis,
                            int axis_none, const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out)) return CK_OK;
    int any = 0;
    for (int i = 0; i < n; i++) any |= needs(vars[i]);
    if (!any) return CK_OK;
    if (axis_none) axis = 0;
    else if (ck_axis_normalize(&axis, out->ndim) != CK_OK) return ck_error_status();
    ck_ag_node *nd = ck_ag_node_new(ck_ag_rule_find(stack ? "stack" : "concatenate"), n, 1, 0,
                                    sizeof(join_params) + sizeof(int64_t) * (size_t)(n + 1));
    if (!nd) return ck_error_status();
    join_params *p = nd->params;
    p->axis = axis;
    p->stack = stack;
    p->flat = axis_none;
    p->n = n;
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        ck_ag_node_set_input(nd, i, needs(vars[i]) ? vars[i] : NULL, in[i]);
        p->offset[i] = off;
        off += stack ? 1 : axis_none ? in[i]->size : in[i]->ndim ? in[i]->shape[axis] : 1;
    }
    p->offset[n] = off;
    *ov = ck_ag_node_output(nd, 0, out);
    ck_ag_node_release(nd);
    return *ov ? CK_OK : ck_error_status();
}

/* each input's gradient is its slice of the output's (a view) */
static ck_status join_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const join_params *p = n->params;
    const ck_array *g = &gout[0];
    for (int i = 0; i < p->n; i++) {
        if (!ck_ag_needs_grad(n, i)) continue;
        const ck_ag_input *in = &n->in[i];
        ck_array v;
        ck_array_view(&v, g);
        int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
        int nd = 0;
        v.data += p->offset[i] * g->strides[p->axis];
        for (int d = 0; d < g->ndim; d++) {
            if (d == p->axis) {
                if (p->stack) continue;
                shape[nd] = p->offset[i + 1] - p->offset[i];
            } else {
                shape[nd] = g->shape[d];
            }
            strides[nd++] = g->strides[d];
        }
        ck_array_set_layout(&v, nd, shape, strides);
        ck_status s = ck_array_reshape(&gin[i], &v, in->ndim, in->shape, 0);
        ck_array_release(&v);
        if (s != CK_OK) return s;
    }
    return CK_OK;
}

#define IN CK_AG_SAVE_INPUTS
#define OU CK_AG_SAVE_OUTPUT

/* softmax, log_softmax, logsumexp, cross_entropy, cumsum, the gathers and
 * joins are recorded by the functions above (their flags unused); the
 * rest by record.c, whose saving the flags drive. */
const ck_ag_rule ck_ag_rules_train[] = {
    {"softmax", softmax_bw, OU, NULL},
    {"log_softmax", log_softmax_bw, OU, NULL},
    {"logsumexp", logsumexp_bw, IN | OU, NULL},
    {"cross_entropy", cross_entropy_bw, IN, NULL},
    {"max", order_bw, IN | OU, NULL},
    {"min", order_bw, IN | OU, NULL},
    {"prod", prod_bw, IN, NULL},
    {"var", var_bw, IN, NULL},
    {"std", std_bw, IN | OU, NULL},
    {"cumsum", cumsum_bw, 0, NULL},
    {"where", where_bw, IN, NULL},
    {"clip", clip_bw, IN, NULL},
    {"index", gather_bw, 0, NULL},
    {"take", gather_bw, 0, NULL},
    {"take_along_axis", gather_bw, 0, NULL},
    {"concatenate", join_bw, 0, NULL},
    {"stack", join_bw, 0, NULL},
    {NULL, NULL, 0, NULL},
};

const ck_ag_fold ck_ag_folds[] = {
    {"cross_entropy", "softmax", xent_softmax_can, xent_softmax_bw},
    {NULL, NULL, NULL, NULL},
};

const char *ck_ag_train_rule_name(int i)
{
    return i >= 0 && i < (int)(sizeof ck_ag_rules_train / sizeof *ck_ag_rules_train) ? ck_ag_rules_train[i].name : NULL;
}
