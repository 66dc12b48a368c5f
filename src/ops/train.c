/* The ops of training (include/cudakit_train.h): argument checks, dtypes
 * and the (outer, len, inner) view of a C-contiguous working array, then
 * one call of the backend's rows, optim_step or bias_act slot.  Working
 * arrays are views when the input already has the dtype and is
 * C-contiguous, copies otherwise. */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const row_names_[CK_ROW_OPS] = {
    "softmax", "log_softmax", "logsumexp", "softmax backward", "log_softmax backward",
    "cross_entropy", "cross_entropy backward", "cross_entropy of softmax backward",
};

static ck_status no_slot(ck_device dev, const char *what)
{
    char name[32];
    ck_device_str(dev, name, sizeof name);
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "%s is not implemented on the %s device", what, name);
}

/* What a row is computed in (and lse's dtype). */
static ck_dtype acc_of(ck_dtype t) { return t == CK_FLOAT64 ? CK_FLOAT64 : CK_FLOAT32; }

/* a as a C-contiguous array of dtype dt (a view when it already is one). */
static ck_status as_contig(ck_array *out, const ck_array *a, ck_dtype dt)
{
    if (a->dtype == dt && (a->flags & CK_ARRAY_C_CONTIGUOUS)) {
        ck_array_view(out, a);
        return CK_OK;
    }
    return ck_array_astype(out, a, dt, 0);
}

/* The floating dtype a softmax of t runs in: its own, float64 for bool
 * and integers (NumPy's default float). */
static ck_status float_type(ck_dtype t, const char *what, ck_dtype *out)
{
    if (ck_dtype_is_complex(t))
        return ck_error_set(CK_ERR_TYPE, "%s is not defined for complex input (dtype %s)", what,
                            ck_dtype_get_info(t)->name);
    *out = ck_dtype_is_float(t) ? t : CK_FLOAT64;
    return CK_OK;
}

static int64_t prod(const int64_t *v, int lo, int hi)
{
    int64_t p = 1;
    for (int i = lo; i < hi; i++) p *= v[i];
    return p;
}

static ck_status same_device(const ck_array *a, const ck_array *b, const char *what)
{
    if (ck_device_equal(ck_array_device(a), ck_array_device(b))) return CK_OK;
    char da[32], db[32];
    ck_device_str(ck_array_device(a), da, sizeof da);
    ck_device_str(ck_array_device(b), db, sizeof db);
    return ck_error_set(CK_ERR_VALUE, "%s: expected all arrays on one device, got %s and %s", what, da, db);
}

static ck_status run_rows(const ck_rows_desc *d)
{
    if (d->outer * d->inner == 0) return CK_OK;
    const ck_backend_iface *be = ck_backend_for(d->dev);
    if (!be->rows) return no_slot(d->dev, row_names_[d->op]);
    return be->rows(d);
}

/* ------------------------------------------------------------- softmax */

/* The (outer, len, inner) view of shape around axis (a 0-d array is one
 * row of one element). */
static ck_status axis_view(const ck_array *x, int *axis, ck_rows_desc *d)
{
    if (x->ndim == 0) {
        if (*axis != 0 && *axis != -1)
            return ck_error_set(CK_ERR_AXIS, "axis %d is out of bounds for array of dimension 0", *axis);
        d->outer = d->len = d->inner = 1;
        return CK_OK;
    }
    ck_status s = ck_axis_normalize(axis, x->ndim);
    if (s != CK_OK) return s;
    d->outer = prod(x->shape, 0, *axis);
    d->len = x->shape[*axis];
    d->inner = prod(x->shape, *axis + 1, x->ndim);
    return CK_OK;
}

ck_status ck_softmax(ck_array *out, const ck_array *a, int axis, int log_)
{
    ck_dtype t = CK_FLOAT64;
    ck_status s = float_type(a->dtype, log_ ? "log_softmax" : "softmax", &t);
    if (s != CK_OK) return s;
    ck_rows_desc d = {.op = log_ ? CK_ROW_LOG_SOFTMAX : CK_ROW_SOFTMAX, .dev = ck_array_device(a), .type = t,
                      .acc = acc_of(t)};
    s = axis_view(a, &axis, &d);
    if (s != CK_OK) return s;
    ck_array x;
    if ((s = as_contig(&x, a, t)) != CK_OK) return s;
    s = ck_array_empty(out, a->ndim, a->shape, t, d.dev);
    if (s == CK_OK) {
        d.x = x.data;
        d.out = out->data;
        if (d.len > 0) s = run_rows(&d);
        if (s != CK_OK) ck_array_release(out);
    }
    ck_array_release(&x);
    return s;
}

ck_status ck_softmax_backward(ck_array *out, const ck_array *g, const ck_array *y, int axis, int log_)
{
    const char *what = log_ ? "log_softmax backward" : "softmax backward";
    ck_dtype t = CK_FLOAT64;
    ck_status s = float_type(y->dtype, what, &t);
    if (s != CK_OK) return s;
    if ((s = same_device(g, y, what)) != CK_OK) return s;
    if (g->ndim != y->ndim || memcmp(g->shape, y->shape, sizeof(int64_t) * (size_t)y->ndim))
        return ck_error_set(CK_ERR_VALUE, "%s: the gradient's shape %s is not the output's %s", what,
                            ck_shape_str(g->ndim, g->shape, 0), ck_shape_str(y->ndim, y->shape, 1));
    ck_rows_desc d = {.op = log_ ? CK_ROW_LOG_SOFTMAX_BWD : CK_ROW_SOFTMAX_BWD, .dev = ck_array_device(y),
                      .type = t, .acc = acc_of(t)};
    if ((s = axis_view(y, &axis, &d)) != CK_OK) return s;
    ck_array xy, xg;
    if ((s = as_contig(&xy, y, t)) != CK_OK) return s;
    if ((s = as_contig(&xg, g, t)) != CK_OK) {
        ck_array_release(&xy);
        return s;
    }
    s = ck_array_empty(out, y->ndim, y->shape, t, d.dev);
    if (s == CK_OK) {
        d.x = xy.data;
        d.g = xg.data;
        d.out = out->data;
        if (d.len > 0) s = run_rows(&d);
        if (s != CK_OK) ck_array_release(out);
    }
    ck_array_release(&xy);
    ck_array_release(&xg);
    return s;
}

/* ----------------------------------------------------------- logsumexp */

ck_status ck_logsumexp(ck_array *out, const ck_array *a, uint64_t axis_mask, int keepdims)
{
    ck_dtype t = CK_FLOAT64;
    ck_status s = float_type(a->dtype, "logsumexp", &t);
    if (s != CK_OK) return s;
    int nd = a->ndim;
    if (nd < 64) axis_mask &= (nd ? ((uint64_t)1 << nd) - 1 : 0);
    ck_rows_desc d = {.op = CK_ROW_LOGSUMEXP, .dev = ck_array_device(a), .type = t, .acc = acc_of(t)};
    int64_t oshape[CK_MAXDIMS];
    int ond = 0;
    for (int i = 0; i < nd; i++) {
        if (axis_mask >> i & 1) {
            if (keepdims) oshape[ond++] = 1;
        } else {
            oshape[ond++] = a->shape[i];
        }
    }
    int lo = -1, hi = -1;   /* the reduced axes, when they are one run [lo, hi) */
    for (int i = 0; i < nd; i++)
        if (axis_mask >> i & 1) {
            if (lo < 0) lo = i;
            else if (hi != i) lo = -2;
            if (lo == -2) break;
            hi = i + 1;
        }
    ck_array x;
    if (lo == -2) {
        /* the kept axes first, the reduced ones after, copied: one run */
        int perm[CK_MAXDIMS], j = 0;
        for (int i = 0; i < nd; i++) if (!(axis_mask >> i & 1)) perm[j++] = i;
        int nkept = j;
        for (int i = 0; i < nd; i++) if (axis_mask >> i & 1) perm[j++] = i;
        ck_array tr;
        if ((s = ck_array_transpose(&tr, a, perm)) != CK_OK) return s;
        s = ck_array_astype(&x, &tr, t, 0);
        ck_array_release(&tr);
        if (s != CK_OK) return s;
        d.outer = prod(x.shape, 0, nkept);
        d.len = prod(x.shape, nkept, nd);
        d.inner = 1;
    } else {
        if ((s = as_contig(&x, a, t)) != CK_OK) return s;
        if (lo < 0) lo = hi = nd;   /* nothing reduced: rows of one element */
        d.outer = prod(a->shape, 0, lo);
        d.len = prod(a->shape, lo, hi);
        d.inner = prod(a->shape, hi, nd);
    }
    s = ck_array_empty(out, ond, oshape, t, d.dev);
    if (s == CK_OK) {
        d.x = x.data;
        d.out = out->data;
        s = run_rows(&d);
        if (s != CK_OK) ck_array_release(out);
    }
    ck_array_release(&x);
    return s;
}

/* ------------------------------------------------------- cross entropy */

/* The rows' view of logits around the class axis, the target as int64
 * indices or as probabilities of the logits' dtype, and the rows' shape. */
typedef struct xent_prep {
    ck_rows_desc d;
    ck_array x, target;
    int rnd;                       /* the rows' shape (logits' without the class axis) */
    int64_t rshape[CK_MAXDIMS];
} xent_prep;

static void xent_release(xent_prep *p)
{
    ck_array_release(&p->x);
    ck_array_release(&p->target);
}

static ck_status xent_prepare(xent_prep *p, const ck_array *logits, const ck_array *target, const ck_xent_args *args,
                              ck_row_op op)
{
    memset(p, 0, sizeof *p);
    const char *what = "cross_entropy";
    if (!ck_dtype_is_float(logits->dtype))
        return ck_error_set(CK_ERR_TYPE, "%s: the logits must be float16, float32 or float64, not %s", what,
                            ck_dtype_get_info(logits->dtype)->name);
    if (logits->ndim < 1) return ck_error_set(CK_ERR_VALUE, "%s: the logits must have a class dimension (got 0-d)", what);
    if (!(args->label_smoothing >= 0.0 && args->label_smoothing <= 1.0))
        return ck_error_set(CK_ERR_VALUE, "%s: label_smoothing must be between 0.0 and 1.0, got %g", what,
                            args->label_smoothing);
    if ((unsigned)args->reduction > CK_REDUCTION_SUM)
        return ck_error_set(CK_ERR_VALUE, "%s: unknown reduction %d", what, (int)args->reduction);
    ck_status s = same_device(logits, target, what);
    if (s != CK_OK) return s;
    ck_dtype t = logits->dtype;
    int axis = args->class_axis;
    if ((s = ck_axis_normalize(&axis, logits->ndim)) != CK_OK) return s;
    ck_rows_desc *d = &p->d;
    d->op = op;
    d->dev = ck_array_device(logits);
    d->type = t;
    d->acc = acc_of(t);
    d->outer = prod(logits->shape, 0, axis);
    d->len = logits->shape[axis];
    d->inner = prod(logits->shape, axis + 1, logits->ndim);
    d->ignore_index = args->ignore_index;
    d->smoothing = args->label_smoothing;
    d->reduction = args->reduction;
    for (int i = 0; i < logits->ndim; i++) if (i != axis) p->rshape[p->rnd++] = logits->shape[i];
    if (ck_dtype_is_float(target->dtype)) {
        if (target->ndim != logits->ndim || memcmp(target->shape, logits->shape, sizeof(int64_t) * (size_t)logits->ndim))
            return ck_error_set(CK_ERR_VALUE,
                                "%s: probability targets must have the logits' shape %s, got %s", what,
                                ck_shape_str(logits->ndim, logits->shape, 0), ck_shape_str(target->ndim, target->shape, 1));
        s = as_contig(&p->target, target, t);
    } else if (ck_dtype_is_integer(target->dtype)) {
        if (target->ndim != p->rnd || memcmp(target->shape, p->rshape, sizeof(int64_t) * (size_t)p->rnd))
            return ck_error_set(CK_ERR_VALUE, "%s: class-index targets must have shape %s (the logits' %s without the class dimension), got %s",
                                what, ck_shape_str(p->rnd, p->rshape, 0), ck_shape_str(logits->ndim, logits->shape, 1),
                                ck_shape_str(target->ndim, target->shape, 0));
        s = as_contig(&p->target, target, CK_INT64);
    } else {
        return ck_error_set(CK_ERR_TYPE, "%s: targets must be integer class indices or floating probabilities, not %s",
                            what, ck_dtype_get_info(target->dtype)->name);
    }
    if (s != CK_OK) return s;
    if ((s = as_contig(&p->x, logits, t)) != CK_OK) {
        ck_array_release(&p->target);
        return s;
    }
    d->x = p->x.data;
    if (p->target.dtype == CK_INT64) d->target = (const int64_t *)p->target.data;
    else d->prob = p->target.data;
    return CK_OK;
}

ck_status ck_softmax_xent(const ck_array *logits, const ck_array *target, const ck_xent_args *args, ck_array *loss,
                          ck_array *lse, ck_array *total)
{
    xent_prep p;
    ck_status s = xent_prepare(&p, logits, target, args, CK_ROW_XENT);
    if (s != CK_OK) return s;
    ck_rows_desc *d = &p.d;
    int64_t rows = d->outer * d->inner;
    ck_array scratch = {0};
    memset(loss, 0, sizeof *loss);
    memset(lse, 0, sizeof *lse);
    memset(total, 0, sizeof *total);
    if ((s = ck_array_empty(lse, p.rnd, p.rshape, d->acc, d->dev)) != CK_OK) goto done;
    if (args->reduction == CK_REDUCTION_NONE) {
        s = ck_array_empty(loss, p.rnd, p.rshape, d->type, d->dev);
        if (s == CK_OK) s = ck_full_scalar(total, 0, NULL, d->acc, (double)rows, d->dev);
    } else if (rows == 0) {
        /* mean of nothing is NaN, as PyTorch's */
        s = ck_full_scalar(loss, 0, NULL, d->type, args->reduction == CK_REDUCTION_MEAN ? 0.0 / 0.0 : 0.0, d->dev);
        if (s == CK_OK) s = ck_full_scalar(total, 0, NULL, d->acc, 0.0, d->dev);
    } else {
        int64_t n2 = 2 * rows;
        s = ck_array_empty(loss, 0, NULL, d->type, d->dev);
        if (s == CK_OK) s = ck_array_empty(total, 0, NULL, d->acc, d->dev);
        if (s == CK_OK) s = ck_array_empty(&scratch, 1, &n2, d->acc, d->dev);
    }
    if (s != CK_OK) goto done;
    if (rows > 0) {
        d->out = loss->data;
        d->lse = lse->data;
        d->total = total->data;
        d->scratch = scratch.buf ? scratch.data : NULL;
        s = run_rows(d);
    }
done:
    if (scratch.buf) ck_array_release(&scratch);
    xent_release(&p);
    if (s != CK_OK) {
        if (loss->buf) ck_array_release(loss);
        if (lse->buf) ck_array_release(lse);
        if (total->buf) ck_array_release(total);
    }
    return s;
}

static ck_status xent_backward(ck_row_op op, ck_array *grad_logits, const ck_array *g, const ck_array *logits,
                               const ck_array *target, const ck_array *lse, const ck_array *total,
                               const ck_xent_args *args)
{
    xent_prep p;
    ck_status s = xent_prepare(&p, logits, target, args, op);
    if (s != CK_OK) return s;
    ck_rows_desc *d = &p.d;
    int64_t rows = d->outer * d->inner;
    ck_array xg = {0}, xl = {0}, xt = {0};
    const char *what = "cross_entropy backward";
    if ((s = same_device(logits, g, what)) != CK_OK || (s = same_device(logits, lse, what)) != CK_OK ||
        (s = same_device(logits, total, what)) != CK_OK)
        goto done;
    if (args->reduction == CK_REDUCTION_NONE ? (g->ndim != p.rnd || memcmp(g->shape, p.rshape, sizeof(int64_t) * (size_t)p.rnd))
                                             : g->size != 1) {
        s = ck_error_set(CK_ERR_VALUE, "%s: the loss's gradient has shape %s, expected %s", what,
                         ck_shape_str(g->ndim, g->shape, 0),
                         args->reduction == CK_REDUCTION_NONE ? ck_shape_str(p.rnd, p.rshape, 1) : "()");
        goto done;
    }
    if (lse->size != rows || total->size != 1) {
        s = ck_error_set(CK_ERR_VALUE, "%s: lse and total must be the forward's (%lld rows)", what, (long long)rows);
        goto done;
    }
    if ((s = as_contig(&xg, g, d->type)) != CK_OK || (s = as_contig(&xl, lse, d->acc)) != CK_OK ||
        (s = as_contig(&xt, total, d->acc)) != CK_OK)
        goto done;
    if ((s = ck_array_empty(grad_logits, logits->ndim, logits->shape, d->type, d->dev)) != CK_OK) goto done;
    if (rows > 0 && d->len > 0) {
        d->g = xg.data;
        d->lse = xl.data;
        d->total = xt.data;
        d->out = grad_logits->data;
        s = run_rows(d);
        if (s != CK_OK) ck_array_release(grad_logits);
    }
done:
    if (xg.buf) ck_array_release(&xg);
    if (xl.buf) ck_array_release(&xl);
    if (xt.buf) ck_array_release(&xt);
    xent_release(&p);
    return s;
}

ck_status ck_softmax_xent_backward(ck_array *grad_logits, const ck_array *g, const ck_array *logits,
                                   const ck_array *target, const ck_array *lse, const ck_array *total,
                                   const ck_xent_args *args)
{
    return xent_backward(CK_ROW_XENT_BWD, grad_logits, g, logits, target, lse, total, args);
}

ck_status ck_softmax_xent_softmax_backward(ck_array *grad_z, const ck_array *g, const ck_array *logits,
                                           const ck_array *target, const ck_array *lse, const ck_array *total,
                                           const ck_xent_args *args)
{
    return xent_backward(CK_ROW_XENT_SOFTMAX_BWD, grad_z, g, logits, target, lse, total, args);
}

/* ----------------------------------------------------------- optimizers */

static ck_status check_tensor(const ck_array *a, const ck_array *p, const char *role, int i, int writeable)
{
    if (!a)
        return ck_error_set(CK_ERR_VALUE, "optimizer step: tensor %d has no %s", i, role);
    if (!ck_device_equal(ck_array_device(a), ck_array_device(p)))
        return ck_error_set(CK_ERR_VALUE, "optimizer step: the %s of parameter %d is on another device", role, i);
    if (a->dtype != p->dtype || a->ndim != p->ndim || memcmp(a->shape, p->shape, sizeof(int64_t) * (size_t)p->ndim))
        return ck_error_set(CK_ERR_VALUE, "optimizer step: the %s of parameter %d is %s %s, the parameter %s %s", role, i,
                            ck_dtype_get_info(a->dtype)->name, ck_shape_str(a->ndim, a->shape, 0),
                            ck_dtype_get_info(p->dtype)->name, ck_shape_str(p->ndim, p->shape, 1));
    if (!(a->flags & CK_ARRAY_C_CONTIGUOUS) || (writeable && !(a->flags & CK_ARRAY_WRITEABLE)))
        return ck_error_set(CK_ERR_VALUE, "optimizer step: the %s of parameter %d must be C-contiguous%s", role, i,
                            writeable ? " and writeable" : "");
    return CK_OK;
}

/* *step += 1 on its device (a capturable Adam's count). */
static ck_status count_on(const ck_array *step)
{
    ck_operand in[2];
    memset(in, 0, sizeof in);
    in[0].array = step;
    in[1].scalar.dtype = CK_INT64;
    in[1].scalar.v.i = 1;
    in[1].weak = 1;
    ck_array inc = *step;
    return ck_ufunc_apply(CK_OP_ADD, 2, in, &inc, 1, CK_DTYPE_INVALID);
}

ck_status ck_optim_step(const ck_optim_hparams *h, int n, ck_array *const *params, const ck_array *const *grads,
                        ck_array *const *state1, ck_array *const *state2)
{
    if (n <= 0) return CK_OK;
    int adam = h->kind == CK_OPTIM_ADAM;
    if (!adam && h->kind != CK_OPTIM_SGD) return ck_error_set(CK_ERR_VALUE, "unknown optimizer %d", (int)h->kind);
    if (adam && !h->step_array && h->step < 1)
        return ck_error_set(CK_ERR_VALUE, "Adam: step must be >= 1, got %lld", (long long)h->step);
    if (!adam && h->nesterov && (h->momentum <= 0 || h->dampening != 0))
        return ck_error_set(CK_ERR_VALUE, "Nesterov momentum requires a momentum and zero dampening");
    int need1 = adam || h->momentum != 0, need2 = adam;
    ck_device dev = ck_array_device(params[0]);
    for (int i = 0; i < n; i++) {
        const ck_array *p = params[i];
        if (!ck_dtype_is_float(p->dtype))
            return ck_error_set(CK_ERR_TYPE, "optimizer step: parameter %d is %s, not a floating dtype", i,
                                ck_dtype_get_info(p->dtype)->name);
        if (!ck_device_equal(ck_array_device(p), dev))
            return ck_error_set(CK_ERR_VALUE, "optimizer step: the parameters must be on one device");
        ck_status s = check_tensor(p, p, "parameter", i, 1);
        if (s == CK_OK) s = check_tensor(grads[i], p, "gradient", i, 0);
        if (s == CK_OK && need1) s = check_tensor(state1 ? state1[i] : NULL, p, adam ? "exp_avg" : "momentum buffer", i, 1);
        if (s == CK_OK && need2) s = check_tensor(state2 ? state2[i] : NULL, p, "exp_avg_sq", i, 1);
        if (s != CK_OK) return s;
    }
    const ck_backend_iface *be = ck_backend_for(dev);
    if (!be->optim_step) return no_slot(dev, "the multi-tensor optimizer step");
    ck_array step = {0};
    const void *step_ptr = NULL;
    int step_f32 = 0;
    unsigned *ticket = NULL;
    if (adam && h->step_array) {
        const ck_array *sa = h->step_array;
        if (sa->size != 1 || !(ck_dtype_is_integer(sa->dtype) || ck_dtype_is_float(sa->dtype)))
            return ck_error_set(CK_ERR_VALUE, "Adam: a step array must hold one integer or float, not %s %s",
                                ck_dtype_get_info(sa->dtype)->name, ck_shape_str(sa->ndim, sa->shape, 0));
        if (!ck_device_equal(ck_array_device(sa), dev))
            return ck_error_set(CK_ERR_VALUE, "Adam: the step array must be on the parameters' device");
        ck_status s;
        if (h->step_increment && !(sa->flags & CK_ARRAY_WRITEABLE))
            return ck_error_set(CK_ERR_VALUE, "Adam: the step array must be writeable to be incremented");
        const ck_array *tk = h->step_increment ? h->step_ticket : NULL;
        if (tk && (tk->dtype != CK_UINT32 || tk->size != 1 || !(tk->flags & CK_ARRAY_WRITEABLE) ||
                   !ck_device_equal(ck_array_device(tk), dev)))
            return ck_error_set(CK_ERR_VALUE, "Adam: the step's ticket must be one writeable uint32 on the "
                                "parameters' device");
        /* a contiguous float32 count (PyTorch's dtype for a capturable step)
         * is read where it is; other dtypes through a float64 copy */
        step_f32 = sa->dtype == CK_FLOAT32 && (sa->flags & CK_ARRAY_C_CONTIGUOUS);
        /* with a ticket the step's kernel adds the one itself, to a count
         * read where it is; otherwise an add before it, on the device, in
         * stream order: a captured graph's replays count on by themselves */
        if (tk && step_f32) ticket = (unsigned *)tk->data;
        if (h->step_increment && !ticket && (s = count_on(sa)) != CK_OK) return s;
        if (step_f32) {
            step_ptr = sa->data;
        } else {
            if ((s = as_contig(&step, sa, CK_FLOAT64)) != CK_OK) return s;
            step_ptr = step.data;
        }
    }
    ck_optim_tensor *t = malloc(sizeof *t * (size_t)n);
    if (!t) {
        if (step.buf) ck_array_release(&step);
        return ck_error_set(CK_ERR_MEMORY, "optimizer step: out of memory for %d tensors", n);
    }
    static const ck_dtype types[] = {CK_FLOAT16, CK_FLOAT32, CK_FLOAT64};
    int last = -1;   /* the last dtype with work: its call writes the incremented count */
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n; i++)
            if (params[i]->dtype == types[k] && params[i]->size > 0) last = k;
    if (ticket && last < 0) {   /* nothing to update: the count still moves on */
        free(t);
        return count_on(h->step_array);
    }
    ck_status s = CK_OK;
    for (int k = 0; k < 3 && s == CK_OK; k++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (params[i]->dtype != types[k] || params[i]->size == 0) continue;
            t[m].p = params[i]->data;
            t[m].g = grads[i]->data;
            t[m].s1 = need1 ? state1[i]->data : NULL;
            t[m].s2 = need2 ? state2[i]->data : NULL;
            t[m].n = params[i]->size;
            m++;
        }
        if (!m) continue;
        ck_optim_desc d = {.dev = dev, .type = types[k], .h = *h, .ntensors = m, .t = t,
                           .step_ptr = step_ptr, .step_f32 = step_f32, .step_inc = ticket != NULL,
                           .step_write = ticket && k == last, .ticket = ticket};
        s = be->optim_step(&d);
    }
    free(t);
    if (step.buf) ck_array_release(&step);
    return s;
}

/* ------------------------------------------------------------- epilogue */

ck_status ck_bias_act(ck_array *y, const ck_array *bias, ck_act act, ck_array *pre)
{
    if ((unsigned)act >= CK_ACT_COUNT) return ck_error_set(CK_ERR_VALUE, "unknown activation %d", (int)act);
    if (!ck_dtype_is_float(y->dtype))
        return ck_error_set(CK_ERR_TYPE, "bias_act: the output must be float16, float32 or float64, not %s",
                            ck_dtype_get_info(y->dtype)->name);
    if (!(y->flags & CK_ARRAY_C_CONTIGUOUS) || !(y->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "bias_act: the output must be C-contiguous and writeable");
    int64_t n = y->ndim ? y->shape[y->ndim - 1] : 1;
    ck_device dev = ck_array_device(y);
    ck_array b = {0};
    ck_status s;
    if (bias) {
        if ((s = same_device(y, bias, "bias_act")) != CK_OK) return s;
        if (bias->ndim != 1 || bias->shape[0] != n)
            return ck_error_set(CK_ERR_VALUE, "bias_act: the bias has shape %s, expected (%lld,)",
                                ck_shape_str(bias->ndim, bias->shape, 0), (long long)n);
        if ((s = as_contig(&b, bias, y->dtype)) != CK_OK) return s;
    }
    if (pre) {
        s = ck_array_empty(pre, y->ndim, y->shape, y->dtype, dev);
        if (s != CK_OK) {
            if (b.buf) ck_array_release(&b);
            return s;
        }
    }
    s = CK_OK;
    if (y->size > 0 && (bias || act != CK_ACT_NONE || pre)) {
        const ck_backend_iface *be = ck_backend_for(dev);
        if (!be->bias_act) {
            s = no_slot(dev, "bias_act");
        } else {
            ck_bias_act_desc d = {.dev = dev, .type = y->dtype, .act = act, .rows = n ? y->size / n : 0, .n = n,
                                  .y = y->data, .pre = pre ? pre->data : NULL, .bias = b.buf ? b.data : NULL};
            s = be->bias_act(&d);
        }
    }
    if (b.buf) ck_array_release(&b);
    if (s != CK_OK && pre) ck_array_release(pre);
    return s;
}

ck_status ck_bias_act_backward(ck_array *out, const ck_array *g, const ck_array *saved, ck_act act)
{
    if ((unsigned)act >= CK_ACT_COUNT) return ck_error_set(CK_ERR_VALUE, "unknown activation %d", (int)act);
    if (!ck_dtype_is_float(saved->dtype))
        return ck_error_set(CK_ERR_TYPE, "bias_act backward: float16, float32 or float64 expected, not %s",
                            ck_dtype_get_info(saved->dtype)->name);
    ck_status s = same_device(g, saved, "bias_act backward");
    if (s != CK_OK) return s;
    if (g->ndim != saved->ndim || memcmp(g->shape, saved->shape, sizeof(int64_t) * (size_t)g->ndim))
        return ck_error_set(CK_ERR_VALUE, "bias_act backward: the gradient's shape %s is not the saved array's %s",
                            ck_shape_str(g->ndim, g->shape, 0), ck_shape_str(saved->ndim, saved->shape, 1));
    ck_dtype t = saved->dtype;
    ck_device dev = ck_array_device(saved);
    ck_array xg, xs;
    if ((s = as_contig(&xg, g, t)) != CK_OK) return s;
    if ((s = as_contig(&xs, saved, t)) != CK_OK) {
        ck_array_release(&xg);
        return s;
    }
    s = ck_array_empty(out, g->ndim, g->shape, t, dev);
    if (s == CK_OK && out->size > 0) {
        const ck_backend_iface *be = ck_backend_for(dev);
        if (!be->bias_act) {
            s = no_slot(dev, "bias_act");
        } else {
            ck_bias_act_desc d = {.dev = dev, .type = t, .act = act, .backward = 1, .rows = out->size, .n = 1,
                                  .out = out->data, .g = xg.data, .saved = xs.data};
            s = be->bias_act(&d);
        }
        if (s != CK_OK) ck_array_release(out);
    }
    ck_array_release(&xg);
    ck_array_release(&xs);
    return s;
}

/* ---------------------------------------------------------- scatter add */

ck_status ck_scatter_add(ck_array *target, const ck_array *idx, const ck_array *values)
{
    if (!ck_dtype_is_float(target->dtype))
        return ck_error_set(ck_dtype_is_complex(target->dtype) ? CK_ERR_NOT_IMPLEMENTED : CK_ERR_TYPE,
                            "scatter_add: the target must be float16, float32 or float64, not %s",
                            ck_dtype_get_info(target->dtype)->name);
    if (!(target->flags & CK_ARRAY_C_CONTIGUOUS) || !(target->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "scatter_add: the target must be C-contiguous and writeable");
    if (!ck_dtype_is_integer(idx->dtype))
        return ck_error_set(CK_ERR_TYPE, "scatter_add: indices must be integers, not %s", ck_dtype_get_info(idx->dtype)->name);
    if (idx->size != values->size)
        return ck_error_set(CK_ERR_VALUE, "scatter_add: %lld indices for %lld values", (long long)idx->size,
                            (long long)values->size);
    ck_status s = same_device(target, idx, "scatter_add");
    if (s == CK_OK) s = same_device(target, values, "scatter_add");
    if (s != CK_OK || idx->size == 0) return s;
    ck_device dev = ck_array_device(target);
    const ck_backend_iface *be = ck_backend_for(dev);
    if (!be->scatter_add) return no_slot(dev, "scatter_add");
    ck_array xi, xv;
    if ((s = as_contig(&xi, idx, CK_INT64)) != CK_OK) return s;
    if ((s = as_contig(&xv, values, target->dtype)) != CK_OK) {
        ck_array_release(&xi);
        return s;
    }
    ck_scatter_add_desc d = {.dev = dev, .type = target->dtype, .n = target->size, .m = idx->size,
                             .target = target->data, .idx = (const int64_t *)xi.data, .src = xv.data};
    s = be->scatter_add(&d);
    ck_array_release(&xi);
    ck_array_release(&xv);
    return s;
}
