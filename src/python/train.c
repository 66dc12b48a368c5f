/*
 * train.c - the training ops as module functions (the work is
 * src/ops/train.c's): softmax, log_softmax, logsumexp, the fused softmax
 * cross-entropy and its backward, the multi-tensor optimizer steps and the
 * matmul epilogue, for cudakit.nn.functional, cudakit.optim and the
 * gradient rules.
 */
#include "ck_python.h"
#include "cudakit_train.h"

#include <string.h>

static PyObject *as_array(PyObject *obj, PyObject *like)
{
    if (CkArray_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    if (like && CkArray_Check(like)) return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 1, ck_array_device(CK_ARR(like)));
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
}

static PyObject *softmax_common(PyObject *args, PyObject *kw, int log_)
{
    static char *kwlist[] = {"x", "axis", NULL};
    PyObject *x_obj, *axis_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, log_ ? "O|O:log_softmax" : "O|O:softmax", kwlist, &x_obj, &axis_obj))
        return NULL;
    int axis = -1;
    if (axis_obj && axis_obj != Py_None && ck_py_axis_int(axis_obj, &axis) < 0) return NULL;
    PyObject *x = as_array(x_obj, NULL);
    if (!x) return NULL;
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_softmax(&out, CK_ARR(x), axis, log_);
    Py_END_ALLOW_THREADS
    PyObject *res = s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
    if (CK_AG_GATE() && res) res = ck_py_ag_softmax(x, axis, log_, res);
    Py_DECREF(x);
    return res;
}

static PyObject *f_softmax(PyObject *self, PyObject *args, PyObject *kw) { (void)self; return softmax_common(args, kw, 0); }
static PyObject *f_log_softmax(PyObject *self, PyObject *args, PyObject *kw) { (void)self; return softmax_common(args, kw, 1); }

static PyObject *f_softmax_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"grad", "y", "axis", "log", NULL};
    PyObject *g_obj, *y_obj, *axis_obj = NULL;
    int log_ = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$p:_softmax_backward", kwlist, &g_obj, &y_obj, &axis_obj, &log_))
        return NULL;
    int axis = -1;
    if (axis_obj && axis_obj != Py_None && ck_py_axis_int(axis_obj, &axis) < 0) return NULL;
    PyObject *y = as_array(y_obj, NULL);
    if (!y) return NULL;
    PyObject *g = as_array(g_obj, y);
    if (!g) { Py_DECREF(y); return NULL; }
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_softmax_backward(&out, CK_ARR(g), CK_ARR(y), axis, log_);
    Py_END_ALLOW_THREADS
    Py_DECREF(y);
    Py_DECREF(g);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

static PyObject *f_logsumexp(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"a", "axis", "keepdims", NULL};
    PyObject *a_obj, *axis = Py_None;
    int keepdims = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Op:logsumexp", kwlist, &a_obj, &axis, &keepdims)) return NULL;
    PyObject *a = as_array(a_obj, NULL);
    if (!a) return NULL;
    uint64_t mask;
    if (ck_py_axis_mask(axis, CK_ARR(a)->ndim, 0, &mask) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_logsumexp(&out, CK_ARR(a), mask, keepdims);
    Py_END_ALLOW_THREADS
    PyObject *res = s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
    if (CK_AG_GATE() && res) res = ck_py_ag_logsumexp(a, mask, keepdims, res);
    Py_DECREF(a);
    return res;
}

/* ------------------------------------------------------- cross entropy */

static int parse_reduction(PyObject *o, ck_reduction *out)
{
    const char *r = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (r && !strcmp(r, "mean")) *out = CK_REDUCTION_MEAN;
    else if (r && !strcmp(r, "sum")) *out = CK_REDUCTION_SUM;
    else if (r && !strcmp(r, "none")) *out = CK_REDUCTION_NONE;
    else {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%R is not a valid value for reduction", o);
        return -1;
    }
    return 0;
}

/* The keywords both directions share into args; the class axis defaults
 * to 1 (0 for 1-d logits), PyTorch's. */
static int xent_args(PyObject *axis_obj, long long ignore, double smoothing, PyObject *red, const ck_array *logits,
                     ck_xent_args *a)
{
    a->class_axis = logits->ndim >= 2 ? 1 : 0;
    if (axis_obj && axis_obj != Py_None && ck_py_axis_int(axis_obj, &a->class_axis) < 0) return -1;
    a->ignore_index = ignore;
    a->label_smoothing = smoothing;
    return parse_reduction(red, &a->reduction);
}

static PyObject *f_xent(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"logits", "target", "axis", "ignore_index", "label_smoothing", "reduction", NULL};
    PyObject *l_obj, *t_obj, *axis_obj = NULL;
    PyObject *red = NULL;
    long long ignore = -100;
    double smoothing = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OLdU:softmax_cross_entropy", kwlist, &l_obj, &t_obj, &axis_obj,
                                     &ignore, &smoothing, &red))
        return NULL;
    PyObject *logits = as_array(l_obj, NULL);
    if (!logits) return NULL;
    PyObject *target = as_array(t_obj, logits);
    if (!target) { Py_DECREF(logits); return NULL; }
    PyObject *res = NULL;
    ck_xent_args xa;
    PyObject *mean = NULL;
    if (!red) red = mean = PyUnicode_FromString("mean");
    if (red && xent_args(axis_obj, ignore, smoothing, red, CK_ARR(logits), &xa) == 0) {
        ck_array loss, lse, total;
        ck_status s;
        Py_BEGIN_ALLOW_THREADS
        s = ck_softmax_xent(CK_ARR(logits), CK_ARR(target), &xa, &loss, &lse, &total);
        Py_END_ALLOW_THREADS
        if (s != CK_OK) {
            ck_py_raise(s);
        } else {
            PyObject *a = ck_py_wrap(&loss, NULL), *b = ck_py_wrap(&lse, NULL), *c = ck_py_wrap(&total, NULL);
            if (CK_AG_GATE() && a && b && c) a = ck_py_ag_cross_entropy(logits, target, &xa, a, b, c);
            if (a && b && c) res = PyTuple_Pack(3, a, b, c);
            Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
        }
    }
    Py_XDECREF(mean);
    Py_DECREF(logits);
    Py_DECREF(target);
    return res;
}

static PyObject *f_xent_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"grad", "logits", "target", "lse", "total", "axis", "ignore_index", "label_smoothing",
                             "reduction", NULL};
    PyObject *g_obj, *l_obj, *t_obj, *lse_obj, *tot_obj, *axis_obj = NULL, *red = NULL;
    long long ignore = -100;
    double smoothing = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|$OLdU:softmax_cross_entropy_backward", kwlist, &g_obj, &l_obj,
                                     &t_obj, &lse_obj, &tot_obj, &axis_obj, &ignore, &smoothing, &red))
        return NULL;
    PyObject *objs[5] = {0}, *in[5] = {l_obj, g_obj, t_obj, lse_obj, tot_obj};
    PyObject *res = NULL, *mean = NULL;
    for (int i = 0; i < 5; i++)
        if (!(objs[i] = as_array(in[i], i ? objs[0] : NULL))) goto done;
    if (!red) red = mean = PyUnicode_FromString("mean");
    ck_xent_args xa;
    if (!red || xent_args(axis_obj, ignore, smoothing, red, CK_ARR(objs[0]), &xa) < 0) goto done;
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_softmax_xent_backward(&out, CK_ARR(objs[1]), CK_ARR(objs[0]), CK_ARR(objs[2]), CK_ARR(objs[3]),
                                 CK_ARR(objs[4]), &xa);
    Py_END_ALLOW_THREADS
    res = s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
done:
    Py_XDECREF(mean);
    for (int i = 0; i < 5; i++) Py_XDECREF(objs[i]);
    return res;
}

/* ----------------------------------------------------------- optimizers */

/* Lists of arrays (params, grads, states...) into ck_array pointers; a
 * parameter whose gradient is None is left out of every list. */
typedef struct tensor_lists {
    int n;
    PyObject *seq[4];
    ck_array **arr[4];
} tensor_lists;

static void lists_free(tensor_lists *L)
{
    for (int k = 0; k < 4; k++) {
        Py_XDECREF(L->seq[k]);
        PyMem_Free(L->arr[k]);
    }
}

static int lists_read(tensor_lists *L, PyObject *const *objs, const char *const *names, int nlists)
{
    memset(L, 0, sizeof *L);
    Py_ssize_t n = -1;
    for (int k = 0; k < nlists; k++) {
        if (!objs[k] || objs[k] == Py_None) continue;
        L->seq[k] = PySequence_Fast(objs[k], "optimizer step: the tensors must be given as lists");
        if (!L->seq[k]) return -1;
        Py_ssize_t m = PySequence_Fast_GET_SIZE(L->seq[k]);
        if (n >= 0 && m != n) {
            PyErr_Format(PyExc_ValueError, "optimizer step: %s has %zd tensors, %s %zd", names[k], m, names[0], n);
            return -1;
        }
        n = m;
        L->arr[k] = PyMem_Calloc((size_t)m + 1, sizeof(ck_array *));
        if (!L->arr[k]) {
            PyErr_NoMemory();
            return -1;
        }
    }
    int j = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PySequence_Fast_GET_ITEM(L->seq[1], i) == Py_None) continue;
        for (int k = 0; k < nlists; k++) {
            if (!L->seq[k]) continue;
            PyObject *o = PySequence_Fast_GET_ITEM(L->seq[k], i);
            if (!CkArray_Check(o)) {
                PyErr_Format(PyExc_TypeError, "optimizer step: %s[%zd] must be a cudakit array, not %.100s", names[k], i,
                             Py_TYPE(o)->tp_name);
                return -1;
            }
            L->arr[k][j] = CK_ARR(o);
        }
        j++;
    }
    L->n = j;
    return 0;
}

static PyObject *run_step(ck_optim_hparams *h, tensor_lists *L)
{
    ck_status s;
    if (L->n > 256) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_optim_step(h, L->n, L->arr[0], (const ck_array *const *)L->arr[1], L->arr[2], L->arr[3]);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_optim_step(h, L->n, L->arr[0], (const ck_array *const *)L->arr[1], L->arr[2], L->arr[3]);
    }
    lists_free(L);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *f_adam_step(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"params", "grads", "exp_avgs", "exp_avg_sqs", "step", "lr", "beta1", "beta2", "eps",
                             "weight_decay", "decoupled", "maximize", "increment_step", "step_ticket", NULL};
    PyObject *o[4], *step_obj, *ticket_obj = Py_None;
    ck_optim_hparams h = {.kind = CK_OPTIM_ADAM, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|dddddpppO:_adam_step", kwlist, &o[0], &o[1], &o[2], &o[3],
                                     &step_obj, &h.lr, &h.beta1, &h.beta2, &h.eps, &h.weight_decay, &h.decoupled,
                                     &h.maximize, &h.step_increment, &ticket_obj))
        return NULL;
    if (ticket_obj != Py_None) {
        if (!CkArray_Check(ticket_obj)) {
            PyErr_SetString(PyExc_TypeError, "_adam_step: step_ticket must be an array (one uint32) or None");
            return NULL;
        }
        h.step_ticket = CK_ARR(ticket_obj);
    }
    if (CkArray_Check(step_obj)) {
        h.step_array = CK_ARR(step_obj);
    } else if (h.step_increment) {
        PyErr_SetString(PyExc_TypeError, "_adam_step: increment_step needs the step as an array");
        return NULL;
    } else {
        long long step = PyLong_AsLongLong(step_obj);
        if (step == -1 && PyErr_Occurred()) return NULL;
        h.step = step;
    }
    static const char *const names[] = {"params", "grads", "exp_avgs", "exp_avg_sqs"};
    tensor_lists L;
    for (int k = 0; k < 4; k++)
        if (o[k] == Py_None) {
            PyErr_Format(PyExc_TypeError, "_adam_step: %s must be a list of arrays, not None", names[k]);
            return NULL;
        }
    if (lists_read(&L, o, names, 4) < 0) {
        lists_free(&L);
        return NULL;
    }
    return run_step(&h, &L);
}

static PyObject *f_sgd_step(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"params", "grads", "momentum_buffers", "lr", "momentum", "dampening", "weight_decay",
                             "nesterov", "first", "maximize", NULL};
    PyObject *o[4] = {0};
    ck_optim_hparams h = {.kind = CK_OPTIM_SGD};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|dddppp:_sgd_step", kwlist, &o[0], &o[1], &o[2], &h.lr,
                                     &h.momentum, &h.dampening, &h.weight_decay, &h.nesterov, &h.first, &h.maximize))
        return NULL;
    static const char *const names[] = {"params", "grads", "momentum_buffers", "(none)"};
    if (o[0] == Py_None || o[1] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "_sgd_step: params and grads must be lists of arrays");
        return NULL;
    }
    if (h.momentum == 0) o[2] = NULL;
    else if (o[2] == Py_None) {
        PyErr_SetString(PyExc_ValueError, "_sgd_step: a momentum needs momentum_buffers");
        return NULL;
    }
    tensor_lists L;
    if (lists_read(&L, o, names, 3) < 0) {
        lists_free(&L);
        return NULL;
    }
    return run_step(&h, &L);
}

/* ------------------------------------------------------------- epilogue */

static int parse_act(PyObject *o, ck_act *out)
{
    static const char *const names[CK_ACT_COUNT] = {"none", "relu", "gelu", "gelu_tanh"};
    if (!o || o == Py_None) {
        *out = CK_ACT_NONE;
        return 0;
    }
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    for (int i = 0; s && i < CK_ACT_COUNT; i++)
        if (!strcmp(s, names[i])) {
            *out = (ck_act)i;
            return 0;
        }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "unknown activation %R (expected 'none', 'relu', 'gelu' or 'gelu_tanh')", o);
    return -1;
}

static PyObject *f_bias_act(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"y", "bias", "act", "save_pre", NULL};
    PyObject *y, *b_obj = Py_None, *act_obj = NULL;
    int save_pre = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OOp:_bias_act", kwlist, &CkArray_Type, &y, &b_obj, &act_obj, &save_pre))
        return NULL;
    ck_act act;
    if (parse_act(act_obj, &act) < 0) return NULL;
    PyObject *b = b_obj == Py_None ? NULL : as_array(b_obj, y);
    if (b_obj != Py_None && !b) return NULL;
    ck_array pre;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_bias_act(CK_ARR(y), b ? CK_ARR(b) : NULL, act, save_pre ? &pre : NULL);
    Py_END_ALLOW_THREADS
    Py_XDECREF(b);
    if (s != CK_OK) return ck_py_raise(s);
    if (!save_pre) {
        Py_INCREF(y);
        return y;
    }
    PyObject *p = ck_py_wrap(&pre, NULL);
    if (!p) return NULL;
    PyObject *res = PyTuple_Pack(2, y, p);
    Py_DECREF(p);
    return res;
}

static PyObject *f_bias_act_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"grad", "saved", "act", NULL};
    PyObject *g_obj, *sv_obj, *act_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:_bias_act_backward", kwlist, &g_obj, &sv_obj, &act_obj)) return NULL;
    ck_act act;
    if (parse_act(act_obj, &act) < 0) return NULL;
    PyObject *sv = as_array(sv_obj, NULL);
    if (!sv) return NULL;
    PyObject *g = as_array(g_obj, sv);
    if (!g) { Py_DECREF(sv); return NULL; }
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_bias_act_backward(&out, CK_ARR(g), CK_ARR(sv), act);
    Py_END_ALLOW_THREADS
    Py_DECREF(sv);
    Py_DECREF(g);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

static PyObject *f_scatter_add(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"target", "indices", "values", NULL};
    PyObject *t, *i_obj, *v_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OO:_scatter_add", kwlist, &CkArray_Type, &t, &i_obj, &v_obj))
        return NULL;
    PyObject *idx = as_array(i_obj, t);
    if (!idx) return NULL;
    PyObject *v = as_array(v_obj, t);
    if (!v) { Py_DECREF(idx); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_scatter_add(CK_ARR(t), CK_ARR(idx), CK_ARR(v));
    Py_END_ALLOW_THREADS
    Py_DECREF(idx);
    Py_DECREF(v);
    if (s != CK_OK) return ck_py_raise(s);
    Py_INCREF(t);
    return t;
}

PyMethodDef ck_py_train_functions[] = {
    CK_DEF_KW(softmax, f_softmax, "(x, axis=-1)", "exp(x) / sum(exp(x)) along axis, shifted by the row's maximum."),
    CK_DEF_KW(log_softmax, f_log_softmax, "(x, axis=-1)", "x - logsumexp(x) along axis."),
    CK_DEF_KW(_softmax_backward, f_softmax_backward, "(grad, y, axis=-1, *, log=False)",
              "The input's gradient of softmax (log_softmax) from its output y."),
    CK_DEF_KW(logsumexp, f_logsumexp, "(a, axis=None, keepdims=False)",
              "log(sum(exp(a))) computed stably, as scipy.special.logsumexp."),
    CK_DEF_KW(softmax_cross_entropy, f_xent,
              "(logits, target, *, axis=None, ignore_index=-100, label_smoothing=0.0, reduction='mean')",
              "(loss, lse, total): PyTorch's cross_entropy (target class indices or probabilities; the classes along "
              "axis, None: axis 1, or 0 for 1-d logits), with what the backward needs."),
    CK_DEF_KW(softmax_cross_entropy_backward, f_xent_backward,
              "(grad, logits, target, lse, total, *, axis=None, ignore_index=-100, label_smoothing=0.0, reduction='mean')",
              "The logits' gradient of softmax_cross_entropy."),
    CK_DEF_KW(_adam_step, f_adam_step,
              "(params, grads, exp_avgs, exp_avg_sqs, step, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08, "
              "weight_decay=0.0, decoupled=False, maximize=False, increment_step=False, step_ticket=None)",
              "One Adam (AdamW: decoupled) step in place over lists; a None gradient skips its parameter; step an int "
              "(the step being taken) or a 0-d array on the parameters' device (read by the kernel, so that a captured "
              "CUDA graph uses each replay's step; increment_step: the array is the count of steps taken, incremented "
              "there first; step_ticket: a zero uint32 array on the device, with which the step's kernel adds the one "
              "itself instead of an add before it)."),
    CK_DEF_KW(_sgd_step, f_sgd_step,
              "(params, grads, momentum_buffers, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, "
              "first=False, maximize=False)",
              "One SGD step in place (first: the buffers' first step)."),
    CK_DEF_KW(_bias_act, f_bias_act, "(y, bias=None, act='none', save_pre=False)",
              "y = act(y + bias) in place ('relu', 'gelu', 'gelu_tanh'); (y, pre-activation) with save_pre."),
    CK_DEF_KW(_bias_act_backward, f_bias_act_backward, "(grad, saved, act='none')",
              "grad * act'(saved) (saved: the pre-activation, or the output for relu)."),
    CK_DEF_KW(_scatter_add, f_scatter_add, "(target, indices, values)",
              "target.flat[indices] += values in place, repeated indices adding up (np.add.at on the flat target); "
              "returns target."),
    {NULL, NULL, 0, NULL},
};
