/*
 * linear.c - the fused linear layer as module functions (the work is
 * src/ops/linear.c's): _linear(input, weight, bias=None, act='none'), which
 * records its one autograd node (src/autograd/rules_linear.c), and
 * _linear_backward for the tests; and the CPU's product the op layer
 * borrows (NumPy's, through cudakit.matmul on zero-copy views).
 */
#include "ck_python.h"
#include "cudakit_linear.h"

#include <string.h>

static PyObject *host_matmul_fn;

/* The host product, callable with or without the GIL held. */
static ck_status host_gemm(ck_array *out, const ck_array *a, const ck_array *b)
{
    PyGILState_STATE st = PyGILState_Ensure();
    ck_status s = CK_OK;
    if (!host_matmul_fn) {
        PyObject *mod = PyImport_ImportModule("cudakit._linalg_top");
        host_matmul_fn = mod ? PyObject_GetAttrString(mod, "matmul") : NULL;
        Py_XDECREF(mod);
    }
    if (!host_matmul_fn) {
        PyErr_Clear();
        s = ck_error_set(CK_ERR_RUNTIME, "linear: cudakit.matmul is not available");
        goto out;
    }
    ck_array va, vb;
    ck_array_view(&va, a);
    ck_array_view(&vb, b);
    PyObject *pa = ck_py_wrap(&va, NULL), *pb = pa ? ck_py_wrap(&vb, NULL) : NULL;
    if (!pa) ck_array_release(&vb);
    PyObject *r = pb ? PyObject_CallFunctionObjArgs(host_matmul_fn, pa, pb, NULL) : NULL;
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    if (!r || !CkArray_Check(r)) {
        /* the product's own reason (a graph capture refuses it, for one) */
#if PY_VERSION_HEX >= 0x030C0000
        PyObject *exc = PyErr_GetRaisedException();
#else
        PyObject *et, *exc, *tb;
        PyErr_Fetch(&et, &exc, &tb);
        PyErr_NormalizeException(&et, &exc, &tb);
        Py_XDECREF(et);
        Py_XDECREF(tb);
#endif
        PyObject *msg = exc ? PyObject_Str(exc) : NULL;
        const char *m = msg ? PyUnicode_AsUTF8(msg) : NULL;
        s = ck_error_set(CK_ERR_RUNTIME, "linear: the CPU product failed: %s", m ? m : "not an array");
        Py_XDECREF(msg);
        Py_XDECREF(exc);
        Py_XDECREF(r);
        PyErr_Clear();
        goto out;
    }
    ck_array_view(out, CK_ARR(r));
    Py_DECREF(r);
out:
    PyGILState_Release(st);
    return s;
}

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

/* obj as an array (new reference), on like's device when it is not one. */
static PyObject *as_array(PyObject *obj, PyObject *like)
{
    if (CkArray_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    if (like && CkArray_Check(like)) return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 1, ck_array_device(CK_ARR(like)));
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
}

static inline ck_ag_var *var_of(PyObject *o) { return o && CkArray_Check(o) ? ((CkArrayObject *)o)->ag : NULL; }

/* y's node: inputs x, w, b; saved x, w and the activation's array. */
static PyObject *record(PyObject *x, PyObject *w, PyObject *b, ck_act act, ck_array *saved, PyObject *y)
{
    ck_ag_var *vars[3] = {var_of(x), var_of(w), var_of(b)}, *ov = NULL;
    if (!vars[0] && !vars[1] && !vars[2]) return y;
    const ck_array *in[3] = {CK_ARR(x), CK_ARR(w), b ? CK_ARR(b) : NULL};
    const ck_array *sv[3] = {CK_ARR(x), CK_ARR(w), saved->buf ? saved : NULL};
    const ck_array *out[1] = {CK_ARR(y)};
    ck_linear_params p;
    memset(&p, 0, sizeof p);
    p.act = act;
    p.has_bias = b != NULL;
    ck_status s = ck_ag_record_op("linear", 3, in, vars, 3, sv, &p, sizeof p, 1, out, &ov);
    if (s != CK_OK) {
        Py_DECREF(y);
        return ck_py_raise(s);
    }
    if (ov) {
        CkArrayObject *r = (CkArrayObject *)y;
        if (r->ag) ck_ag_var_release(r->ag);
        r->ag = ov;
    }
    return y;
}

static PyObject *f_linear(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"input", "weight", "bias", "act", NULL};
    PyObject *x_obj, *w_obj, *b_obj = Py_None, *act_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:_linear", kwlist, &x_obj, &w_obj, &b_obj, &act_obj)) return NULL;
    ck_act act;
    if (parse_act(act_obj, &act) < 0) return NULL;
    PyObject *w = as_array(w_obj, x_obj);
    if (!w) return NULL;
    PyObject *x = as_array(x_obj, w), *b = NULL;
    if (x && b_obj != Py_None) b = as_array(b_obj, w);
    if (!x || (b_obj != Py_None && !b)) {
        Py_DECREF(w);
        Py_XDECREF(x);
        return NULL;
    }
    ck_linear_set_host_gemm(host_gemm);
    const int rec = CK_AG_GATE() != 0;
    ck_array y, saved;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_linear(&y, CK_ARR(x), CK_ARR(w), b ? CK_ARR(b) : NULL, act, rec ? &saved : NULL);
    Py_END_ALLOW_THREADS
    PyObject *res = s == CK_OK ? ck_py_wrap(&y, NULL) : ck_py_raise(s);
    if (s == CK_OK && rec) {
        if (res) res = record(x, w, b, act, &saved, res);
        if (saved.buf) ck_array_release(&saved);
    }
    Py_DECREF(x);
    Py_DECREF(w);
    Py_XDECREF(b);
    return res;
}

static PyObject *f_linear_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"grad", "input", "weight", "saved", "act", "has_bias", NULL};
    PyObject *g_obj, *x_obj, *w_obj, *sv_obj = Py_None, *act_obj = NULL;
    int has_bias = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|OOp:_linear_backward", kwlist, &g_obj, &x_obj, &w_obj, &sv_obj,
                                     &act_obj, &has_bias))
        return NULL;
    ck_act act;
    if (parse_act(act_obj, &act) < 0) return NULL;
    PyObject *objs[4] = {as_array(w_obj, x_obj), NULL, NULL, NULL};
    if (objs[0]) objs[1] = as_array(x_obj, objs[0]);
    if (objs[1]) objs[2] = as_array(g_obj, objs[0]);
    if (objs[2] && sv_obj != Py_None) objs[3] = as_array(sv_obj, objs[0]);
    PyObject *res = NULL;
    if (objs[2] && (sv_obj == Py_None || objs[3])) {
        ck_linear_set_host_gemm(host_gemm);
        ck_array gx, gw, gb;
        ck_status s;
        Py_BEGIN_ALLOW_THREADS
        s = ck_linear_backward(CK_ARR(objs[2]), CK_ARR(objs[1]), CK_ARR(objs[0]), has_bias, act,
                               objs[3] ? CK_ARR(objs[3]) : NULL, &gx, &gw, has_bias ? &gb : NULL);
        Py_END_ALLOW_THREADS
        if (s != CK_OK) {
            ck_py_raise(s);
        } else {
            PyObject *px = ck_py_wrap(&gx, NULL), *pw = ck_py_wrap(&gw, NULL), *pb = NULL;
            if (has_bias) pb = ck_py_wrap(&gb, NULL);
            else pb = Py_NewRef(Py_None);
            if (px && pw && pb) res = PyTuple_Pack(3, px, pw, pb);
            Py_XDECREF(px);
            Py_XDECREF(pw);
            Py_XDECREF(pb);
        }
    }
    for (int i = 0; i < 4; i++) Py_XDECREF(objs[i]);
    return res;
}

#define CK_KW_(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS

PyMethodDef ck_py_linear_functions[] = {
    CK_DEF_KW(_linear, f_linear, "(input, weight, bias=None, act='none')",
              "act(input @ weight.T + bias) in one fused op (act 'none', 'relu', 'gelu', 'gelu_tanh'); recorded by "
              "autograd as one node."),
    CK_DEF_KW(_linear_backward, f_linear_backward, "(grad, input, weight, saved=None, act='none', has_bias=True)",
              "(grad_input, grad_weight, grad_bias): the gradients of _linear (saved: the output for relu, the "
              "pre-activation for gelu)."),
    {NULL, NULL, 0, NULL},
};
