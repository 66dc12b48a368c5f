/*
 * autograd.c - the array's autograd face: requires_grad, grad, grad_fn,
 * backward, detach..., grad mode, autograd.grad / backward, the nodes'
 * objects, autograd.Function's node (whose backward calls Python), and the
 * recording calls the op wrappers make (ck_py_ag_*).  The engine is C
 * (include/cudakit_autograd.h); an array object holds its ck_ag_var.
 */
#include "ck_python.h"

#include <string.h>

static inline ck_ag_var *var_of(PyObject *o) { return CkArray_Check(o) ? ((CkArrayObject *)o)->ag : NULL; }
static inline int requires(PyObject *o)
{
    ck_ag_var *v = var_of(o);
    return v && v->requires_grad;
}

/* A Python exception raised inside backward (a Function's) is kept: the
 * status only says the walk stopped. */
static PyObject *raise_status(ck_status s)
{
    if (PyErr_Occurred()) return NULL;
    return ck_py_raise(s);
}

static void set_var(PyObject *o, ck_ag_var *v)
{
    CkArrayObject *a = (CkArrayObject *)o;
    if (a->ag) ck_ag_var_release(a->ag);
    a->ag = v;
}

/* The engine frees a variable whose cached .grad object we hold. */
static void var_user_free(void *user) { Py_XDECREF((PyObject *)user); }

/* ------------------------------------------------------------ node objects */

typedef struct {
    PyObject_HEAD
    ck_ag_node *node;
} CkNodeObject;

static PyTypeObject CkNode_Type;

/* The rule of autograd.Function nodes, and what such a node keeps. */
static ck_status function_backward(ck_ag_node *n, const ck_array *gout, ck_array *gin);
static const ck_ag_rule function_rule = {"function", function_backward, 0, NULL};

typedef struct {
    PyObject *cls;       /* the Function subclass (its backward, its name) */
    PyObject *ctx;
    int nargs;           /* forward's arguments (after ctx) */
    int *pos;            /* pos[i]: the argument node input i came from */
    int *out_pos;        /* out_pos[j]: the position of output j among forward's outputs, -1 if none */
    int nouts_py;
    int single;          /* forward returned one array, not a tuple */
} function_user;

static void function_user_free(void *p)
{
    function_user *u = p;
    Py_XDECREF(u->cls);
    Py_XDECREF(u->ctx);
    PyMem_Free(u->pos);
    PyMem_Free(u->out_pos);
    PyMem_Free(u);
}

static PyObject *node_wrap(ck_ag_node *n)
{
    if (!n) Py_RETURN_NONE;
    if (n->handle) return Py_NewRef((PyObject *)n->handle);
    CkNodeObject *o = PyObject_New(CkNodeObject, &CkNode_Type);
    if (!o) return NULL;
    ck_ag_node_retain(n);
    o->node = n;
    n->handle = o;
    return (PyObject *)o;
}

static void node_dealloc(PyObject *self)
{
    CkNodeObject *o = (CkNodeObject *)self;
    if (o->node) {
        if (o->node->handle == self) o->node->handle = NULL;
        ck_ag_node_release(o->node);
    }
    PyObject_Free(self);
}

static PyObject *node_name_str(ck_ag_node *n)
{
    if (n->rule == &function_rule) {
        function_user *u = n->user;
        PyObject *nm = PyObject_GetAttrString(u->cls, "__name__");
        if (!nm) return NULL;
        PyObject *r = PyUnicode_FromFormat("%UBackward", nm);
        Py_DECREF(nm);
        return r;
    }
    char buf[96];
    return PyUnicode_FromString(ck_ag_node_name(n, buf, sizeof buf));
}

static PyObject *node_name(PyObject *self, PyObject *unused)
{
    (void)unused;
    return node_name_str(((CkNodeObject *)self)->node);
}

static PyObject *node_repr(PyObject *self)
{
    PyObject *nm = node_name_str(((CkNodeObject *)self)->node);
    if (!nm) return NULL;
    PyObject *r = PyUnicode_FromFormat("<%U object at %p>", nm, self);
    Py_DECREF(nm);
    return r;
}

static PyObject *node_next_functions(PyObject *self, void *c)
{
    (void)c;
    ck_ag_node *n = ((CkNodeObject *)self)->node;
    PyObject *t = PyTuple_New(n->nin);
    for (int i = 0; t && i < n->nin; i++) {
        PyObject *nx = node_wrap(n->in[i].next);
        PyObject *pair = nx ? Py_BuildValue("(Ni)", nx, n->in[i].output_nr) : NULL;
        if (!pair) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, pair);
    }
    return t;
}

static PyMethodDef node_methods[] = {
    CK_DEF_NOARGS(name, node_name, "($self, /)", "The node's name (MulBackward0, AccumulateGrad...)."),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL, "(node, output number) for each input; None where no gradient goes.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CkNode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.autograd.Node",
    .tp_basicsize = sizeof(CkNodeObject),
    .tp_dealloc = node_dealloc,
    .tp_repr = node_repr,
    .tp_methods = node_methods,
    .tp_getset = node_getset,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A node of the autograd graph: the backward of one op call (x.grad_fn); made by the ops, not by a "
              "constructor.",
};

/* ------------------------------------------------------------ properties */

static int can_require_grad(PyObject *self)
{
    if (!ck_dtype_is_inexact(CK_ARR(self)->dtype)) {
        PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point and complex dtype can require gradients");
        return -1;
    }
    return 0;
}

int ck_py_ag_set_requires_grad(PyObject *self, int on)
{
    ck_ag_var *v = var_of(self);
    if (!v) {
        if (!on) return 0;
        if (can_require_grad(self) < 0) return -1;
        v = ck_ag_var_new_leaf();
        if (!v) { PyErr_NoMemory(); return -1; }
        ((CkArrayObject *)self)->ag = v;
        return 0;
    }
    if (on && !v->grad_fn && can_require_grad(self) < 0) return -1;
    ck_status s = ck_ag_var_set_requires_grad(v, on);
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static PyObject *get_requires_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(requires(self));
}

static int set_requires_grad(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    if (!value) { PyErr_SetString(PyExc_AttributeError, "cannot delete requires_grad"); return -1; }
    int on = PyObject_IsTrue(value);
    if (on < 0) return -1;
    return ck_py_ag_set_requires_grad(self, on);
}

static PyObject *get_grad(PyObject *self, void *c)
{
    (void)c;
    ck_ag_var *v = var_of(self);
    if (!v || !v->grad.buf) Py_RETURN_NONE;
    PyObject *cached = v->user;
    const ck_array *g = &v->grad;
    if (cached) {
        const ck_array *ca = CK_ARR(cached);
        if (ca->buf == g->buf && ca->data == g->data && ca->dtype == g->dtype && ca->ndim == g->ndim &&
            !memcmp(ca->shape, g->shape, (size_t)g->ndim * sizeof *g->shape) &&
            !memcmp(ca->strides, g->strides, (size_t)g->ndim * sizeof *g->strides))
            return Py_NewRef(cached);
    }
    ck_array view;
    ck_array_view(&view, g);
    view.flags = (view.flags & ~CK_ARRAY_OWNDATA) | (g->flags & CK_ARRAY_OWNDATA);
    PyObject *r = ck_py_wrap(&view, NULL);
    if (!r) return NULL;
    Py_XDECREF(cached);
    v->user = Py_NewRef(r);
    return r;
}

static int set_grad(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    ck_ag_var *v = var_of(self);
    if (!value || value == Py_None) {
        if (v) {
            ck_ag_var_set_grad(v, NULL);
            Py_CLEAR(*(PyObject **)&v->user);
        }
        return 0;
    }
    if (!CkArray_Check(value)) {
        PyErr_Format(PyExc_TypeError, "assigned grad expected to be a cudakit array or None but got %.100s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    const ck_array *a = CK_ARR(self), *g = CK_ARR(value);
    if (g->ndim != a->ndim || memcmp(g->shape, a->shape, (size_t)a->ndim * sizeof *a->shape)) {
        PyErr_Format(PyExc_RuntimeError, "assigned grad has data of a different size: %s, expected %s",
                     ck_shape_str(g->ndim, g->shape, 0), ck_shape_str(a->ndim, a->shape, 1));
        return -1;
    }
    if (g->dtype != a->dtype) {
        PyErr_Format(PyExc_RuntimeError, "assigned grad has data of a different type: %s, expected %s",
                     ck_dtype_get_info(g->dtype)->name, ck_dtype_get_info(a->dtype)->name);
        return -1;
    }
    if (!ck_device_equal(ck_array_device(g), ck_array_device(a))) {
        PyErr_SetString(PyExc_RuntimeError, "assigned grad has data located on a different device");
        return -1;
    }
    if (!v) {
        v = ck_ag_var_new_leaf();
        if (!v) { PyErr_NoMemory(); return -1; }
        ck_ag_var_set_requires_grad(v, 0);
        ((CkArrayObject *)self)->ag = v;
    }
    ck_ag_var_set_grad(v, g);
    Py_XSETREF(*(PyObject **)&v->user, Py_NewRef(value));
    return 0;
}

static PyObject *get_grad_fn(PyObject *self, void *c)
{
    (void)c;
    ck_ag_var *v = var_of(self);
    return node_wrap(v ? v->grad_fn : NULL);
}

static PyObject *get_is_leaf(PyObject *self, void *c)
{
    (void)c;
    ck_ag_var *v = var_of(self);
    return PyBool_FromLong(!v || !v->grad_fn);
}

static PyObject *get_retains_grad(PyObject *self, void *c)
{
    (void)c;
    ck_ag_var *v = var_of(self);
    return PyBool_FromLong(v && v->retains_grad);
}

static PyObject *get_version(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(CK_ARR(self)->buf->version);
}

PyGetSetDef ck_py_autograd_getset[] = {
    {"requires_grad", get_requires_grad, set_requires_grad, "Whether gradients are computed for this array.", NULL},
    {"grad", get_grad, set_grad, "The gradient accumulated by backward (None until one arrives).", NULL},
    {"grad_fn", get_grad_fn, NULL, "The node of the op that made this array (None for a leaf).", NULL},
    {"is_leaf", get_is_leaf, NULL, "Whether the array was made by the user rather than by a recorded op.", NULL},
    {"retains_grad", get_retains_grad, NULL, "Whether a non-leaf keeps its .grad (retain_grad()).", NULL},
    {"_version", get_version, NULL, "The in-place version counter of the array's memory.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------ methods */

static PyObject *m_requires_grad_(PyObject *self, PyObject *args, PyObject *kw)
{
    int on = 1;
    static char *kwlist[] = {"requires_grad", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:requires_grad_", kwlist, &on)) return NULL;
    if (ck_py_ag_set_requires_grad(self, on) < 0) return NULL;
    return Py_NewRef(self);
}

/* A new object on the same memory (its buffer keeps it alive).  It has no
 * .base on purpose: autograd reads .base as "an in-place change here changes
 * an array of the graph", and a detached array is outside the graph (its
 * writes still move the shared version, as PyTorch's). */
static PyObject *detached(PyObject *self)
{
    ck_array v;
    ck_array_view(&v, CK_ARR(self));
    v.flags &= ~CK_ARRAY_OWNDATA;
    return ck_py_wrap(&v, NULL);
}

static PyObject *m_detach(PyObject *self, PyObject *unused)
{
    (void)unused;
    return detached(self);
}

static PyObject *m_detach_(PyObject *self, PyObject *unused)
{
    (void)unused;
    ck_ag_var *v = var_of(self);
    if (v && v->grad_fn) set_var(self, NULL);
    else if (v) ck_ag_var_set_requires_grad(v, 0);
    return Py_NewRef(self);
}

static PyObject *m_retain_grad(PyObject *self, PyObject *unused)
{
    (void)unused;
    ck_ag_var *v = var_of(self);
    if (!v || !v->requires_grad) {
        PyErr_SetString(PyExc_RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        return NULL;
    }
    if (v->grad_fn && !v->retains_grad) {
        v->retains_grad = 1;
        v->grad_fn->out[v->output_nr].retained = v;
    }
    Py_RETURN_NONE;
}

static PyObject *list1(PyObject *o)
{
    PyObject *l = PyList_New(1);
    if (l) PyList_SET_ITEM(l, 0, Py_NewRef(o));
    return l;
}

/* A sequence (or one array) of arrays as a list of owned references. */
static PyObject *as_array_list(PyObject *o, const char *what)
{
    if (CkArray_Check(o)) return list1(o);
    PyObject *l = PySequence_List(o);
    if (!l) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); i++)
        if (!CkArray_Check(PyList_GET_ITEM(l, i))) {
            PyErr_Format(PyExc_TypeError, "%s must be cudakit arrays, not %.100s", what,
                         Py_TYPE(PyList_GET_ITEM(l, i))->tp_name);
            Py_DECREF(l);
            return NULL;
        }
    return l;
}

/* The gradients given for the roots: None or one per root (None entries
 * allowed); a non-array is made an array on the root's device. */
static int seed_grads(PyObject *roots, PyObject *grads, ck_array *out, PyObject **keep)
{
    Py_ssize_t n = PyList_GET_SIZE(roots);
    PyObject *gl = NULL;
    if (grads && grads != Py_None) {
        gl = CkArray_Check(grads) ? list1(grads) : PySequence_List(grads);
        if (!gl) return -1;
        if (PyList_GET_SIZE(gl) != n) {
            PyErr_Format(PyExc_RuntimeError, "grad_tensors should have the same length as tensors: got %zd and %zd",
                         PyList_GET_SIZE(gl), n);
            Py_DECREF(gl);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        keep[i] = NULL;
        PyObject *g = gl ? PyList_GET_ITEM(gl, i) : Py_None;
        if (g == Py_None) continue;
        PyObject *r = PyList_GET_ITEM(roots, i);
        PyObject *a = CkArray_Check(g) ? Py_NewRef(g) : ck_py_asarray(g, CK_ARR(r)->dtype, -1, 1, ck_array_device(CK_ARR(r)));
        if (!a) { Py_XDECREF(gl); return -1; }
        keep[i] = a;
        out[i] = *CK_ARR(a);   /* borrowed: keep[i] holds it */
    }
    Py_XDECREF(gl);
    return 0;
}

/* backward over roots with seeds; inputs (a list or NULL): accumulate only into those. */
static PyObject *run_backward(PyObject *roots, PyObject *grads, int retain_graph, PyObject *inputs)
{
    Py_ssize_t n = PyList_GET_SIZE(roots);
    ck_ag_var **rv = PyMem_Calloc((size_t)n + 1, sizeof *rv);
    ck_array *seeds = PyMem_Calloc((size_t)n + 1, sizeof *seeds);
    PyObject **keep = PyMem_Calloc((size_t)n + 1, sizeof *keep);
    PyObject *result = NULL;
    if (!rv || !seeds || !keep) { PyErr_NoMemory(); goto done; }
    if (seed_grads(roots, grads, seeds, keep) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) rv[i] = var_of(PyList_GET_ITEM(roots, i));
    if (!inputs) {
        ck_status s = ck_ag_backward((int)n, rv, seeds, retain_graph, 0, NULL, NULL);
        if (s != CK_OK) { raise_status(s); goto done; }
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t ni = PyList_GET_SIZE(inputs);
    ck_ag_var **iv = PyMem_Calloc((size_t)ni + 1, sizeof *iv);
    ck_array *cap = PyMem_Calloc((size_t)ni + 1, sizeof *cap);
    if (!iv || !cap) { PyMem_Free(iv); PyMem_Free(cap); PyErr_NoMemory(); goto done; }
    for (Py_ssize_t j = 0; j < ni; j++) iv[j] = var_of(PyList_GET_ITEM(inputs, j));
    ck_status s = ck_ag_backward((int)n, rv, seeds, retain_graph, (int)ni, iv, cap);
    if (s != CK_OK) {
        raise_status(s);
    } else {
        for (Py_ssize_t j = 0; j < ni; j++) {
            if (!cap[j].buf) continue;
            ck_ag_var *v = iv[j];
            if (!v->grad.buf) {
                ck_array c;
                s = ck_array_astype(&c, &cap[j], cap[j].dtype, 0);
                if (s == CK_OK) { v->grad = c; }
            } else {
                ck_operand in[2] = {{.array = &v->grad}, {.array = &cap[j]}};
                s = ck_ufunc_apply(CK_OP_ADD, 2, in, &v->grad, 1, CK_DTYPE_INVALID);
            }
            if (s != CK_OK) { ck_py_raise(s); break; }
        }
        if (s == CK_OK) result = Py_NewRef(Py_None);
    }
    for (Py_ssize_t j = 0; j < ni; j++)
        if (cap[j].buf) ck_array_release(&cap[j]);
    PyMem_Free(iv);
    PyMem_Free(cap);
done:
    if (keep)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(keep[i]);
    PyMem_Free(rv);
    PyMem_Free(seeds);
    PyMem_Free(keep);
    return result;
}

static int retain_from(PyObject *retain_graph, int create_graph)
{
    if (create_graph) {
        PyErr_SetString(PyExc_NotImplementedError, "create_graph=True (gradients of gradients) is not implemented "
                                                   "by cudakit's autograd yet");
        return -1;
    }
    if (!retain_graph || retain_graph == Py_None) return 0;
    return PyObject_IsTrue(retain_graph);
}

static PyObject *m_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *gradient = Py_None, *retain_graph = Py_None, *inputs = Py_None;
    int create_graph = 0;
    static char *kwlist[] = {"gradient", "retain_graph", "create_graph", "inputs", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOpO:backward", kwlist, &gradient, &retain_graph, &create_graph,
                                     &inputs))
        return NULL;
    int retain = retain_from(retain_graph, create_graph);
    if (retain < 0) return NULL;
    PyObject *roots = list1(self);
    if (!roots) return NULL;
    PyObject *il = NULL;
    if (inputs != Py_None && !(il = as_array_list(inputs, "inputs"))) { Py_DECREF(roots); return NULL; }
    PyObject *r = run_backward(roots, gradient == Py_None ? NULL : gradient, retain, il);
    Py_DECREF(roots);
    Py_XDECREF(il);
    return r;
}

PyMethodDef ck_py_autograd_methods[] = {
    CK_DEF_KW(requires_grad_, m_requires_grad_, "($self, /, requires_grad=True)",
              "Set requires_grad of a leaf in place; returns the array."),
    CK_DEF_KW(backward, m_backward, "($self, /, gradient=None, retain_graph=None, create_graph=False, inputs=None)",
              "Accumulate the gradient of this array into the leaves' .grad (gradient: d(out)/d(this), needed unless "
              "the array has one element)."),
    CK_DEF_NOARGS(detach, m_detach, "($self, /)", "A view of the same memory that is not part of the graph."),
    CK_DEF_NOARGS(detach_, m_detach_, "($self, /)", "Take this array out of the graph (it becomes a leaf)."),
    CK_DEF_NOARGS(retain_grad, m_retain_grad, "($self, /)", "Keep this non-leaf's .grad during backward."),
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ module functions */

static PyObject *py_set_grad_enabled(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    return PyBool_FromLong(ck_ag_set_grad_enabled(on));
}

static PyObject *py_is_grad_enabled(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(ck_ag_grad_enabled());
}

static PyObject *py_make_subclass(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *cls, *data;
    int rg = 0;
    static char *kwlist[] = {"cls", "data", "requires_grad", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|p:_make_subclass", kwlist, &cls, &data, &rg)) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &CkArray_Type)) {
        PyErr_SetString(PyExc_TypeError, "_make_subclass: cls must be a subclass of cudakit.ndarray");
        return NULL;
    }
    if (!CkArray_Check(data)) {
        PyErr_Format(PyExc_TypeError, "_make_subclass: data must be a cudakit array, not %.100s", Py_TYPE(data)->tp_name);
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)cls;
    CkArrayObject *o = (CkArrayObject *)t->tp_alloc(t, 0);
    if (!o) return NULL;
    ck_array_view(&o->arr, CK_ARR(data));
    o->arr.flags = CK_ARR(data)->flags;
    PyObject *base = ((CkArrayObject *)data)->base;
    o->base = Py_NewRef(base ? base : data);
    o->weakreflist = NULL;
    o->ag = NULL;
    if (rg && ck_py_ag_set_requires_grad((PyObject *)o, 1) < 0) {
        Py_DECREF(o);
        return NULL;
    }
    return (PyObject *)o;
}

static PyObject *py_grad(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *outputs, *inputs, *grad_outputs = Py_None, *retain_graph = Py_None, *allow_unused = Py_None;
    int create_graph = 0, materialize = 0;
    static char *kwlist[] = {"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "allow_unused",
                             "materialize_grads", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOpOp:grad", kwlist, &outputs, &inputs, &grad_outputs,
                                     &retain_graph, &create_graph, &allow_unused, &materialize))
        return NULL;
    int retain = retain_from(retain_graph, create_graph);
    if (retain < 0) return NULL;
    int allow = allow_unused == Py_None ? materialize : PyObject_IsTrue(allow_unused);
    if (allow < 0) return NULL;
    PyObject *ol = as_array_list(outputs, "outputs");
    if (!ol) return NULL;
    PyObject *il = as_array_list(inputs, "inputs");
    if (!il) { Py_DECREF(ol); return NULL; }
    Py_ssize_t n = PyList_GET_SIZE(ol), ni = PyList_GET_SIZE(il);
    ck_ag_var **rv = PyMem_Calloc((size_t)n + 1, sizeof *rv), **iv = PyMem_Calloc((size_t)ni + 1, sizeof *iv);
    ck_array *seeds = PyMem_Calloc((size_t)n + 1, sizeof *seeds), *cap = PyMem_Calloc((size_t)ni + 1, sizeof *cap);
    PyObject **keep = PyMem_Calloc((size_t)n + 1, sizeof *keep);
    PyObject *result = NULL;
    if (!rv || !iv || !seeds || !cap || !keep) { PyErr_NoMemory(); goto done; }
    if (seed_grads(ol, grad_outputs, seeds, keep) < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) rv[i] = var_of(PyList_GET_ITEM(ol, i));
    for (Py_ssize_t j = 0; j < ni; j++) iv[j] = var_of(PyList_GET_ITEM(il, j));
    ck_status s = ck_ag_backward((int)n, rv, seeds, retain, (int)ni, iv, cap);
    if (s != CK_OK) { raise_status(s); goto done; }
    result = PyTuple_New(ni);
    for (Py_ssize_t j = 0; result && j < ni; j++) {
        PyObject *g;
        if (cap[j].buf) {
            g = ck_py_wrap(&cap[j], NULL);
        } else if (!allow) {
            PyErr_SetString(PyExc_RuntimeError, "One of the differentiated Tensors appears to not have been used in "
                                                "the graph. Set allow_unused=True if this is the desired behavior.");
            g = NULL;
        } else if (materialize) {
            const ck_array *a = CK_ARR(PyList_GET_ITEM(il, j));
            ck_array z;
            ck_status zs = ck_full_scalar(&z, a->ndim, a->shape, a->dtype, 0.0, ck_array_device(a));
            g = zs == CK_OK ? ck_py_wrap(&z, NULL) : ck_py_raise(zs);
        } else {
            g = Py_NewRef(Py_None);
        }
        if (!g) { Py_CLEAR(result); break; }
        PyTuple_SET_ITEM(result, j, g);
    }
done:
    if (cap)
        for (Py_ssize_t j = 0; j < ni; j++)
            if (cap[j].buf) ck_array_release(&cap[j]);
    if (keep)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(keep[i]);
    PyMem_Free(rv);
    PyMem_Free(iv);
    PyMem_Free(seeds);
    PyMem_Free(cap);
    PyMem_Free(keep);
    Py_DECREF(ol);
    Py_DECREF(il);
    return result;
}

static PyObject *py_backward(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *tensors, *grad_tensors = Py_None, *retain_graph = Py_None, *inputs = Py_None;
    int create_graph = 0;
    static char *kwlist[] = {"tensors", "grad_tensors", "retain_graph", "create_graph", "inputs", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOpO:backward", kwlist, &tensors, &grad_tensors, &retain_graph,
                                     &create_graph, &inputs))
        return NULL;
    int retain = retain_from(retain_graph, create_graph);
    if (retain < 0) return NULL;
    PyObject *roots = as_array_list(tensors, "tensors");
    if (!roots) return NULL;
    PyObject *il = NULL;
    if (inputs != Py_None && !(il = as_array_list(inputs, "inputs"))) { Py_DECREF(roots); return NULL; }
    PyObject *r = run_backward(roots, grad_tensors, retain, il);
    Py_DECREF(roots);
    Py_XDECREF(il);
    return r;
}

static PyObject *py_any_requires_grad(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (!CK_AG_GATE()) Py_RETURN_FALSE;
    for (Py_ssize_t i = 0; i < n; i++)
        if (requires(args[i])) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

/* ------------------------------------------------------------ autograd.Function */

/* _function_record(cls, ctx, args, outputs): after cls.forward(ctx, *args)
 * ran (under no_grad), make the node whose backward is cls.backward and
 * give each array output a variable with it.  Returns the outputs (an
 * output that is one of the inputs is replaced by a view of it). */
static PyObject *py_function_record(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *cls, *ctx, *fargs, *outputs;
    if (!PyArg_ParseTuple(args, "OOO!O:_function_record", &cls, &ctx, &PyTuple_Type, &fargs, &outputs)) return NULL;
    int single = CkArray_Check(outputs);
    if (!CK_AG_GATE()) return Py_NewRef(outputs);
    Py_ssize_t na = PyTuple_GET_SIZE(fargs);
    int nin = 0, any = 0;
    for (Py_ssize_t i = 0; i < na; i++) {
        PyObject *a = PyTuple_GET_ITEM(fargs, i);
        if (CkArray_Check(a)) {
            nin++;
            any |= requires(a);
        }
    }
    if (!any) return Py_NewRef(outputs);
    PyObject *outs = single ? list1(outputs) : PySequence_List(outputs);
    if (!outs) return NULL;
    Py_ssize_t no = PyList_GET_SIZE(outs);
    int nout = 0;
    for (Py_ssize_t j = 0; j < no; j++) {
        PyObject *o = PyList_GET_ITEM(outs, j);
        if (!CkArray_Check(o)) continue;
        nout++;
        /* an input returned as it is: its own view carries the new node */
        int is_input = 0;
        for (Py_ssize_t i = 0; i < na; i++) is_input |= PyTuple_GET_ITEM(fargs, i) == o;
        if (is_input || var_of(o)) {
            PyObject *v = detached(o);
            if (!v) { Py_DECREF(outs); return NULL; }
            PyList_SetItem(outs, j, v);
        }
    }
    function_user *u = PyMem_Calloc(1, sizeof *u);
    if (!u) { Py_DECREF(outs); return PyErr_NoMemory(); }
    u->pos = PyMem_Calloc((size_t)nin + 1, sizeof *u->pos);
    u->out_pos = PyMem_Calloc((size_t)no + 1, sizeof *u->out_pos);
    ck_ag_node *n = u->pos && u->out_pos ? ck_ag_node_new(&function_rule, nin, nout, 0, 0) : NULL;
    if (!n) {
        PyMem_Free(u->pos);
        PyMem_Free(u->out_pos);
        PyMem_Free(u);
        Py_DECREF(outs);
        return PyErr_NoMemory();
    }
    u->cls = Py_NewRef(cls);
    u->ctx = Py_NewRef(ctx);
    u->nargs = (int)na;
    u->nouts_py = (int)no;
    u->single = single;
    n->user = u;
    n->user_free = function_user_free;
    int k = 0;
    for (Py_ssize_t i = 0; i < na; i++) {
        PyObject *a = PyTuple_GET_ITEM(fargs, i);
        if (!CkArray_Check(a)) continue;
        u->pos[k] = (int)i;
        ck_ag_node_set_input(n, k, requires(a) ? var_of(a) : NULL, CK_ARR(a));
        k++;
    }
    k = 0;
    int fail = 0;
    for (Py_ssize_t j = 0; j < no; j++) {
        PyObject *o = PyList_GET_ITEM(outs, j);
        u->out_pos[j] = -1;
        if (!CkArray_Check(o)) continue;
        u->out_pos[j] = k;
        if (ck_dtype_is_inexact(CK_ARR(o)->dtype)) {
            ck_ag_var *v = ck_ag_node_output(n, k, CK_ARR(o));
            if (!v) fail = 1;
            else set_var(o, v);
        } else {
            /* no variable: but the node needs the output's description */
            ck_ag_output *out = &n->out[k];
            const ck_array *oa = CK_ARR(o);
            out->dtype = oa->dtype;
            out->dev = ck_array_device(oa);
            out->ndim = oa->ndim;
            memcpy(out->shape, oa->shape, (size_t)oa->ndim * sizeof *oa->shape);
        }
        k++;
    }
    ck_ag_node_release(n);
    if (fail) { Py_DECREF(outs); return PyErr_NoMemory(); }
    PyObject *r;
    if (single) {
        r = Py_NewRef(PyList_GET_ITEM(outs, 0));
    } else {
        r = PyList_AsTuple(outs);
    }
    Py_DECREF(outs);
    return r;
}

/* A Function's backward: cls.backward(ctx, *grads of the outputs) gives a
 * gradient (or None) per forward argument. */
static ck_status function_backward(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    function_user *u = n->user;
    PyObject *call = PyTuple_New(1 + u->nouts_py);
    if (!call) return ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward: out of memory");
    PyTuple_SET_ITEM(call, 0, Py_NewRef(u->ctx));
    for (int j = 0; j < u->nouts_py; j++) {
        PyObject *g;
        if (u->out_pos[j] < 0) {
            g = Py_NewRef(Py_None);
        } else {
            ck_array v;
            ck_array_view(&v, &gout[u->out_pos[j]]);
            g = ck_py_wrap(&v, NULL);
            if (!g) { Py_DECREF(call); return ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward failed"); }
        }
        PyTuple_SET_ITEM(call, 1 + j, g);
    }
    PyObject *bw = PyObject_GetAttrString(u->cls, "backward");
    PyObject *res = bw ? PyObject_Call(bw, call, NULL) : NULL;
    Py_XDECREF(bw);
    Py_DECREF(call);
    if (!res) return ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward raised");
    PyObject *rl = PyTuple_Check(res) ? PySequence_List(res) : list1(res);
    Py_DECREF(res);
    if (!rl) return ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward raised");
    Py_ssize_t nr = PyList_GET_SIZE(rl);
    /* PyTorch lets backward return more values than inputs when the extra are None */
    if (nr < u->nargs) {
        PyObject *nm = PyObject_GetAttrString(u->cls, "__name__");
        PyErr_Format(PyExc_RuntimeError, "function %SBackward returned an incorrect number of gradients (expected %d, "
                     "got %zd)", nm ? nm : Py_None, u->nargs, nr);
        Py_XDECREF(nm);
        Py_DECREF(rl);
        return ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward raised");
    }
    ck_status s = CK_OK;
    for (int i = 0; i < n->nin; i++) {
        PyObject *g = PyList_GET_ITEM(rl, u->pos[i]);
        if (g == Py_None || !ck_ag_needs_grad(n, i)) continue;
        if (!CkArray_Check(g)) {
            PyErr_Format(PyExc_TypeError, "autograd.Function backward must return arrays or None, got %.100s",
                         Py_TYPE(g)->tp_name);
            s = ck_error_set(CK_ERR_RUNTIME, "autograd.Function backward raised");
            break;
        }
        ck_array_view(&gin[i], CK_ARR(g));
    }
    Py_DECREF(rl);
    return s;
}

PyMethodDef ck_py_autograd_functions[] = {
    CK_DEF_O(_set_grad_enabled, py_set_grad_enabled, "(mode, /)", "Turn grad mode on or off; returns the previous mode."),
    CK_DEF_NOARGS(is_grad_enabled, py_is_grad_enabled, "()", "Whether grad mode is on (ops record a graph)."),
    CK_DEF_KW(_make_subclass, py_make_subclass, "(cls, data, requires_grad=False)",
              "An instance of the ndarray subclass cls sharing data's memory."),
    CK_DEF_KW(_autograd_grad, py_grad,
              "(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None, "
              "materialize_grads=False)",
              "The gradients of outputs with respect to inputs (cudakit.autograd.grad)."),
    CK_DEF_KW(_autograd_backward, py_backward,
              "(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None)",
              "Accumulate the gradients of tensors into the leaves (cudakit.autograd.backward)."),
    CK_DEF_FAST(_any_requires_grad, py_any_requires_grad, "(*arrays)",
                "Whether grad mode is on and one of the arguments requires a gradient."),
    CK_DEF_VARARGS(_function_record, py_function_record, "(cls, ctx, args, outputs, /)",
                   "Record an autograd.Function call (private)."),
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ recording */

/* (ov is read through a pointer: the status argument's call must run first) */
static PyObject *attach(PyObject *result, ck_status s, ck_ag_var *const *ov)
{
    if (s != CK_OK) {
        Py_DECREF(result);
        return ck_py_raise(s);
    }
    if (*ov) set_var(result, *ov);
    return result;
}

PyObject *ck_py_ag_ufunc(ck_op op, int nin, PyObject *const *args, const ck_operand *ops, PyObject *result)
{
    ck_ag_var *vars[CK_UFUNC_MAXIN], *ov;
    int any = 0;
    for (int k = 0; k < nin; k++) any |= (vars[k] = var_of(args[k])) != NULL;
    if (!any || !CkArray_Check(result)) return result;
    return attach(result, ck_ag_record_ufunc(op, nin, ops, vars, CK_ARR(result), &ov), &ov);
}

int ck_py_ag_inplace_check(PyObject *target, int values_need_grad)
{
    ck_ag_var *v = var_of(target);
    if (v && v->requires_grad && !v->grad_fn) {
        PyErr_SetString(PyExc_RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation.");
        return -1;
    }
    PyObject *base = ((CkArrayObject *)target)->base;
    if (base && CkArray_Check(base)) {
        ck_ag_var *bv = var_of(base);
        if (bv && bv->requires_grad && !bv->grad_fn) {
            PyErr_SetString(PyExc_RuntimeError, "a view of a leaf Variable that requires grad is being used in an "
                                                "in-place operation.");
            return -1;
        }
        if ((bv && bv->requires_grad) || (v && v->requires_grad) || values_need_grad) {
            PyErr_SetString(PyExc_NotImplementedError, "an in-place change of a view (out=, +=, x[...] = v) where "
                            "gradients are recorded is not supported by cudakit's autograd yet; compute it out of "
                            "place (ck.where, ck.concatenate...) instead");
            return -1;
        }
    }
    return 0;
}

int ck_py_ag_ufunc_out(ck_op op, int nin, PyObject *const *args, ck_operand *ops, PyObject *out, PyObject **keep)
{
    int any = requires(out), alias = 0;
    for (int k = 0; k < nin; k++) {
        any |= ops[k].array && requires(args[k]);
        alias |= args[k] == out;
    }
    if (!any) return 0;
    if (ck_py_ag_inplace_check(out, 1) < 0) return -1;
    if (!alias) {
        PyErr_Format(PyExc_RuntimeError, "%s(): functions with out=... arguments don't support automatic "
                     "differentiation, but one of the arguments requires grad.", ck_op_table[op].name);
        return -1;
    }
    /* the rule needs the inputs' values from before the write: copies */
    const ck_ag_rule *r = ck_ag_rule_for_op(op);
    if (r && (r->flags & CK_AG_SAVE_INPUTS))
        for (int k = 0; k < nin; k++) {
            if (!ops[k].array || !ck_array_may_overlap(ops[k].array, CK_ARR(out))) continue;
            ck_array c;
            ck_status s = ck_array_astype(&c, ops[k].array, ops[k].array->dtype, 0);
            if (s != CK_OK) return ck_py_raise_int(s);
            keep[k] = ck_py_wrap(&c, NULL);
            if (!keep[k]) return -1;
            ops[k].array = CK_ARR(keep[k]);
        }
    return 1;
}

int ck_py_ag_ufunc_rebase(ck_op op, int nin, PyObject *const *args, const ck_operand *ops, PyObject *out)
{
    ck_ag_var *vars[CK_UFUNC_MAXIN], *ov;
    for (int k = 0; k < nin; k++) vars[k] = var_of(args[k]);
    ck_status s = ck_ag_record_ufunc(op, nin, ops, vars, CK_ARR(out), &ov);
    if (s != CK_OK) return ck_py_raise_int(s);
    if (ov) set_var(out, ov);
    return 0;
}

PyObject *ck_py_ag_reduce(const char *name, PyObject *a, uint64_t mask, int keepdims, double ddof, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !CkArray_Check(result)) return result;
    return attach(result, ck_ag_record_reduce(name, CK_ARR(a), v, mask, keepdims, ddof, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_reshape(PyObject *a, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_reshape(CK_ARR(a), v, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_copy(const char *name, PyObject *a, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_copy(name, CK_ARR(a), v, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_transpose(PyObject *a, const int *perm, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_transpose(CK_ARR(a), v, perm, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_broadcast(PyObject *a, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_broadcast(CK_ARR(a), v, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_view(const char *name, PyObject *a, const ck_array *virtual_view, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_view_of(name, CK_ARR(a), v, virtual_view, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_roll(PyObject *a, int n, const int64_t *shifts, const int *axes, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_roll(CK_ARR(a), v, n, shifts, axes, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_tri(PyObject *a, int64_t k, int upper, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_tri(CK_ARR(a), v, k, upper, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_pad(PyObject *a, const int64_t *widths, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    return attach(result, ck_ag_record_pad(CK_ARR(a), v, widths, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_tile(PyObject *a, int is_repeat, int n, const int64_t *reps, int axis, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    const ck_array *x = CK_ARR(a);
    int64_t shape[CK_MAXDIMS], factor[CK_MAXDIMS];
    int nd;
    if (!is_repeat) {
        nd = x->ndim > n ? x->ndim : n;
        for (int i = 0; i < nd; i++) {
            int ia = i - (nd - x->ndim), ir = i - (nd - n);
            shape[i] = ia >= 0 ? x->shape[ia] : 1;
            factor[i] = ir >= 0 ? reps[ir] : 1;
        }
    } else if (axis == CK_AXIS_FLAT) {
        nd = 1;
        shape[0] = x->size;
        factor[0] = reps[0];
    } else {
        nd = x->ndim;
        if (axis < 0) axis += nd;
        for (int i = 0; i < nd; i++) {
            shape[i] = x->shape[i];
            factor[i] = i == axis ? reps[0] : 1;
        }
    }
    return attach(result, ck_ag_record_tile(x, v, nd, shape, factor, is_repeat, CK_ARR(result), &ov), &ov);
}

PyObject *ck_py_ag_matmul(PyObject *a, PyObject *b, PyObject *result)
{
    ck_ag_var *va = var_of(a), *vb = var_of(b), *ov;
    if ((!va && !vb) || !result) return result;
    return attach(result, ck_ag_record_matmul(CK_ARR(a), va, CK_ARR(b), vb, CK_ARR(result), &ov), &ov);
}

int ck_py_ag_setitem(PyObject *self, PyObject *value, const ck_array *virtual_view)
{
    ck_ag_var *ov;
    ck_status s = ck_ag_record_setitem(CK_ARR(self), var_of(self), CkArray_Check(value) ? CK_ARR(value) : NULL,
                                       var_of(value), virtual_view, &ov);
    if (s != CK_OK) return ck_py_raise_int(s);
    if (ov) set_var(self, ov);
    return 0;
}

PyObject *ck_py_ag_missing(const char *name, int nin, PyObject *const *in, PyObject *result)
{
    if (!result || !CkArray_Check(result)) return result;
    ck_ag_var *vars[8];
    const ck_array *arrs[8];
    int k = 0, any = 0;
    for (int i = 0; i < nin && k < 8; i++) {
        if (!CkArray_Check(in[i])) continue;
        vars[k] = var_of(in[i]);
        any |= vars[k] != NULL;
        arrs[k++] = CK_ARR(in[i]);
    }
    if (!any) return result;
    const ck_array *outs[1] = {CK_ARR(result)};
    ck_ag_var *ov;
    ck_status s = ck_ag_record_missing(name, k, arrs, vars, 1, outs, &ov);
    return attach(result, s, &ov);
}

static PyObject *py_record_missing(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name;
    PyObject *inputs, *result;
    if (!PyArg_ParseTuple(args, "sOO:_record_missing", &name, &inputs, &result)) return NULL;
    if (!CK_AG_GATE() || !CkArray_Check(result)) return Py_NewRef(result);
    PyObject *seq = PySequence_Fast(inputs, "inputs must be a sequence");
    if (!seq) return NULL;
    /* the name must outlive the node: interned in a table of its own */
    static PyObject *names;
    if (!names && !(names = PyDict_New())) { Py_DECREF(seq); return NULL; }
    PyObject *key = PyUnicode_FromString(name);
    if (!key) { Py_DECREF(seq); return NULL; }
    PyObject *kept = PyDict_SetDefault(names, key, key);
    Py_DECREF(key);
    if (!kept) { Py_DECREF(seq); return NULL; }
    Py_INCREF(result);
    PyObject *r = ck_py_ag_missing(PyUnicode_AsUTF8(kept), (int)PySequence_Fast_GET_SIZE(seq),
                                   PySequence_Fast_ITEMS(seq), result);
    Py_DECREF(seq);
    return r;
}

static PyObject *py_record_matmul(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *a, *b, *result;
    if (!PyArg_ParseTuple(args, "O!O!O!:_record_matmul", &CkArray_Type, &a, &CkArray_Type, &b, &CkArray_Type, &result))
        return NULL;
    Py_INCREF(result);
    if (!CK_AG_GATE()) return result;
    return ck_py_ag_matmul(a, b, result);
}

static PyMethodDef record_functions[] = {
    CK_DEF_VARARGS(_record_missing, py_record_missing, "(name, inputs, result, /)",
                   "Mark result as made by an op without a gradient rule (private)."),
    CK_DEF_VARARGS(_record_matmul, py_record_matmul, "(a, b, result, /)", "Record a @ b (private)."),
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ the CPU's product */

static PyTypeObject CkAgFunc_Type;
static PyObject *str_requires_grad;

static PyObject *host_matmul_fn;

static ck_status host_matmul(ck_array *out, const ck_array *a, const ck_array *b)
{
    if (!host_matmul_fn) {
        PyObject *mod = PyImport_ImportModule("cudakit._linalg_top");
        host_matmul_fn = mod ? PyObject_GetAttrString(mod, "matmul") : NULL;
        Py_XDECREF(mod);
        if (!host_matmul_fn) return ck_error_set(CK_ERR_RUNTIME, "autograd: cudakit.matmul is not available");
    }
    ck_array va, vb;
    ck_array_view(&va, a);
    ck_array_view(&vb, b);
    PyObject *pa = ck_py_wrap(&va, NULL), *pb = pa ? ck_py_wrap(&vb, NULL) : NULL;
    if (!pa) ck_array_release(&vb);
    PyObject *r = pb ? PyObject_CallFunctionObjArgs(host_matmul_fn, pa, pb, NULL) : NULL;
    Py_XDECREF(pa);
    Py_XDECREF(pb);
    if (!r) return ck_error_set(CK_ERR_RUNTIME, "autograd: the CPU matmul of a gradient failed");
    if (!CkArray_Check(r)) {
        Py_DECREF(r);
        return ck_error_set(CK_ERR_RUNTIME, "autograd: cudakit.matmul returned a non-array");
    }
    ck_array_view(out, CK_ARR(r));
    Py_DECREF(r);
    return CK_OK;
}

static int wrap_module_functions(PyObject *module);

int ck_py_autograd_init(PyObject *module)
{
    if (PyType_Ready(&CkNode_Type) < 0 || PyType_Ready(&CkAgFunc_Type) < 0) return -1;
    str_requires_grad = PyUnicode_InternFromString("requires_grad");
    if (!str_requires_grad || wrap_module_functions(module) < 0) return -1;
    ck_ag_set_host_matmul(host_matmul);
    ck_ag_var_user_release = var_user_free;
    for (PyMethodDef *d = record_functions; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, NULL);
        if (!f || PyModule_AddObject(module, d->ml_name, f) < 0) { Py_XDECREF(f); return -1; }
    }
    return PyModule_AddObjectRef(module, "_AutogradNode", (PyObject *)&CkNode_Type);
}

/* ------------------------------------------------------------ module functions' faces
 *
 * The C functions of the module that do not record themselves are wrapped
 * once at import, by what they are: creation functions take requires_grad=;
 * layout functions record their rule; every other function that gets an
 * array requiring a gradient and returns a new float array records a node
 * without a rule, so that backward names it instead of losing the graph.
 * Without grad recording the wrapper is one test and the original call. */

typedef enum { F_CREATE, F_RESHAPE, F_VIEW, F_BROADCAST, F_BROADCAST_ARRAYS, F_COPY, F_INPLACE, F_MISSING } func_mode;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;
    func_mode mode;
    const char *name;     /* kept by fn's PyMethodDef */
} CkAgFuncObject;

/* The arrays among the positional arguments (and inside a list or tuple
 * argument): whether one requires a gradient. */
static int args_need_grad(PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = args[i];
        if (requires(a)) return 1;
        if (PyList_Check(a) || PyTuple_Check(a)) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(a);
            PyObject **items = PySequence_Fast_ITEMS(a);
            for (Py_ssize_t j = 0; j < m; j++)
                if (requires(items[j])) return 1;
        }
    }
    return 0;
}

/* The arrays of args (one level of lists and tuples), borrowed, at most cap. */
static int collect_arrays(PyObject *const *args, Py_ssize_t n, PyObject **out, int cap)
{
    int k = 0;
    for (Py_ssize_t i = 0; i < n && k < cap; i++) {
        PyObject *a = args[i];
        if (CkArray_Check(a)) {
            out[k++] = a;
        } else if (PyList_Check(a) || PyTuple_Check(a)) {
            Py_ssize_t m = PySequence_Fast_GET_SIZE(a);
            PyObject **items = PySequence_Fast_ITEMS(a);
            for (Py_ssize_t j = 0; j < m && k < cap; j++)
                if (CkArray_Check(items[j])) out[k++] = items[j];
        }
    }
    return k;
}

static PyObject *mark_missing(const char *name, PyObject *const *args, Py_ssize_t n, PyObject *res)
{
    PyObject *ins[8];
    int k = collect_arrays(args, n, ins, 8);
    if (CkArray_Check(res)) {
        for (int i = 0; i < k; i++)
            if (ins[i] == res) return res;
        if (var_of(res)) return res;
        return ck_py_ag_missing(name, k, ins, res);
    }
    if (PyTuple_Check(res) || PyList_Check(res)) {
        Py_ssize_t m = PySequence_Fast_GET_SIZE(res);
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *o = PySequence_Fast_ITEMS(res)[j];
            if (!CkArray_Check(o) || var_of(o)) continue;
            int same = 0;
            for (int i = 0; i < k; i++) same |= ins[i] == o;
            if (same) continue;
            Py_INCREF(o);
            PyObject *r = ck_py_ag_missing(name, k, ins, o);
            if (!r) { Py_DECREF(res); return NULL; }
            Py_DECREF(r);
        }
    }
    return res;
}

/* fn(args) again with the first argument an array of its shape on memory
 * that does not exist: the layout it returns is the view's in elements. */
static PyObject *record_view_rerun(CkAgFuncObject *f, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                                   PyObject *res)
{
    PyObject *a = args[0];
    if (!CkArray_Check(res) || CK_ARR(res)->buf != CK_ARR(a)->buf) return mark_missing(f->name, args, 1, res);
    ck_array fake;
    ck_ag_virtual(&fake, CK_ARR(a));
    PyObject *fo = ck_py_wrap(&fake, NULL);
    if (!fo) { Py_DECREF(res); return NULL; }
    Py_ssize_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject **a2 = PyMem_Malloc((size_t)(n + 1) * sizeof *a2);
    if (!a2) { Py_DECREF(fo); Py_DECREF(res); return PyErr_NoMemory(); }
    memcpy(a2, args, (size_t)n * sizeof *a2);
    a2[0] = fo;
    PyObject *v = PyObject_Vectorcall(f->fn, a2, PyVectorcall_NARGS(nargsf), kwnames);
    PyMem_Free(a2);
    Py_DECREF(fo);
    if (!v) { Py_DECREF(res); return NULL; }
    if (!CkArray_Check(v)) {
        Py_DECREF(v);
        return mark_missing(f->name, args, 1, res);
    }
    PyObject *r = ck_py_ag_view(f->name, a, CK_ARR(v), res);
    Py_DECREF(v);
    return r;
}

static PyObject *agfunc_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CkAgFuncObject *f = (CkAgFuncObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (f->mode == F_CREATE && kwnames) {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwnames), at = -1;
        for (Py_ssize_t i = 0; i < nk; i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i);
            if (k == str_requires_grad || !PyUnicode_Compare(k, str_requires_grad)) { at = i; break; }
        }
        if (at >= 0) {
            int on = PyObject_IsTrue(args[nargs + at]);
            if (on < 0) return NULL;
            PyObject **a2 = PyMem_Malloc((size_t)(nargs + nk) * sizeof *a2);
            PyObject *k2 = PyTuple_New(nk - 1);
            if (!a2 || !k2) { PyMem_Free(a2); Py_XDECREF(k2); return PyErr_NoMemory(); }
            memcpy(a2, args, (size_t)nargs * sizeof *a2);
            for (Py_ssize_t i = 0, j = 0; i < nk; i++) {
                if (i == at) continue;
                a2[nargs + j] = args[nargs + i];
                PyTuple_SET_ITEM(k2, j, Py_NewRef(PyTuple_GET_ITEM(kwnames, i)));
                j++;
            }
            PyObject *r = PyObject_Vectorcall(f->fn, a2, (size_t)nargs, nk > 1 ? k2 : NULL);
            PyMem_Free(a2);
            Py_DECREF(k2);
            if (r && on && CkArray_Check(r)) {
                /* asarray(x, requires_grad=True) of an array that has one: as PyTorch's, a leaf */
                if (var_of(r) && var_of(r)->grad_fn) {
                    PyErr_SetString(PyExc_RuntimeError, "requires_grad=True of an array made by a recorded op: "
                                                        "use .detach() first");
                    Py_DECREF(r);
                    return NULL;
                }
                if (ck_py_ag_set_requires_grad(r, 1) < 0) { Py_DECREF(r); return NULL; }
            }
            return r;
        }
    }
    if (f->mode == F_INPLACE && nargs && CkArray_Check(args[0])) {
        /* put(a, ...) writes into a: its version moves; its gradient rules are scatter's (trainops') */
        ck_ag_bump_version(CK_ARR(args[0]));
        if (CK_AG_GATE()) {
            int vg = args_need_grad(args + 1, nargs - 1);
            if (ck_py_ag_inplace_check(args[0], vg) < 0) return NULL;
            if (vg || requires(args[0])) {
                PyErr_Format(PyExc_NotImplementedError, "%s() into an array where gradients are recorded is not "
                             "differentiable in cudakit yet; assign under ck.no_grad()", f->name);
                return NULL;
            }
        }
    }
    if (!CK_AG_GATE() || f->mode == F_CREATE || f->mode == F_INPLACE)
        return PyObject_Vectorcall(f->fn, args, nargsf, kwnames);
    PyObject *res = PyObject_Vectorcall(f->fn, args, nargsf, kwnames);
    if (!res || !args_need_grad(args, nargs)) return res;
    PyObject *a = nargs ? args[0] : NULL;
    switch (f->mode) {
    case F_RESHAPE:
        if (a && var_of(a) && CkArray_Check(res) && res != a && !var_of(res)) return ck_py_ag_reshape(a, res);
        break;
    case F_COPY:
        if (a && var_of(a) && CkArray_Check(res) && res != a && !var_of(res)) return ck_py_ag_copy("copy", a, res);
        break;
    case F_BROADCAST:
        if (a && var_of(a) && CkArray_Check(res) && res != a && !var_of(res)) return ck_py_ag_broadcast(a, res);
        break;
    case F_VIEW:
        if (a && var_of(a) && CkArray_Check(res) && res != a && !var_of(res))
            return record_view_rerun(f, args, nargsf, kwnames, res);
        break;
    case F_BROADCAST_ARRAYS:
        if ((PyTuple_Check(res) || PyList_Check(res)) && PySequence_Fast_GET_SIZE(res) == nargs) {
            for (Py_ssize_t i = 0; i < nargs; i++) {
                PyObject *o = PySequence_Fast_ITEMS(res)[i];
                if (!CkArray_Check(o) || !var_of(args[i]) || o == args[i] || var_of(o)) continue;
                Py_INCREF(o);
                PyObject *r = ck_py_ag_broadcast(args[i], o);
                if (!r) { Py_DECREF(res); return NULL; }
                Py_DECREF(r);
            }
            return res;
        }
        break;
    default:
        break;
    }
    return mark_missing(f->name, args, nargs, res);
}

static void agfunc_dealloc(PyObject *self)
{
    Py_XDECREF(((CkAgFuncObject *)self)->fn);
    PyObject_Free(self);
}

/* It reads as the function it wraps (name, doc, signature; inspect follows __wrapped__). */
static PyObject *agfunc_getattro(PyObject *self, PyObject *name)
{
    PyObject *fn = ((CkAgFuncObject *)self)->fn;
    if (PyUnicode_Check(name) && !PyUnicode_CompareWithASCIIString(name, "__wrapped__")) return Py_NewRef(fn);
    return PyObject_GetAttr(fn, name);
}

static PyObject *agfunc_repr(PyObject *self) { return PyObject_Repr(((CkAgFuncObject *)self)->fn); }

/* Never bound (as a builtin function is not): this makes it a routine to
 * inspect and pydoc, so that help(ck.zeros) shows its signature and doc. */
static PyObject *agfunc_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)obj; (void)type;
    return Py_NewRef(self);
}

static PyTypeObject CkAgFunc_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.builtin_function",
    .tp_basicsize = sizeof(CkAgFuncObject),
    .tp_dealloc = agfunc_dealloc,
    .tp_repr = agfunc_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(CkAgFuncObject, vectorcall),
    .tp_getattro = agfunc_getattro,
    .tp_descr_get = agfunc_descr_get,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A function of cudakit's C core, as seen by autograd.",
};

static const struct { const char *name; func_mode mode; } func_modes[] = {
    {"asarray", F_CREATE}, {"array", F_CREATE}, {"empty", F_CREATE}, {"zeros", F_CREATE}, {"ones", F_CREATE},
    {"full", F_CREATE}, {"empty_like", F_CREATE}, {"zeros_like", F_CREATE}, {"ones_like", F_CREATE},
    {"full_like", F_CREATE}, {"arange", F_CREATE}, {"linspace", F_CREATE}, {"eye", F_CREATE},
    {"reshape", F_RESHAPE}, {"ravel", F_RESHAPE}, {"squeeze", F_RESHAPE}, {"expand_dims", F_RESHAPE},
    {"transpose", F_VIEW}, {"permute_dims", F_VIEW}, {"swapaxes", F_VIEW}, {"moveaxis", F_VIEW},
    {"flip", F_VIEW}, {"diagonal", F_VIEW},
    {"broadcast_to", F_BROADCAST}, {"broadcast_arrays", F_BROADCAST_ARRAYS},
    {"ascontiguousarray", F_COPY}, {"asfortranarray", F_COPY},
    {"put", F_INPLACE}, {"put_along_axis", F_INPLACE},
};

/* Functions that record themselves, or take no arrays to differentiate. */
static const char *const func_skip[] = {
    "sum", "prod", "min", "max", "all", "any", "argmin", "argmax", "mean", "var", "std", "cumsum", "cumprod",
    "count_nonzero", "is_grad_enabled", "asnumpy", "can_cast", "result_type", "set_num_threads", "get_num_threads",
    "get_default_device", "set_default_device", "broadcast_shapes", "from_dlpack",
    "softmax_cross_entropy",   /* records its loss itself (ag_train.c); lse and total need no node */
    NULL,
};

static int wrap_module_functions(PyObject *module)
{
    PyObject *d = PyModule_GetDict(module);
    PyObject *items = PyDict_Items(d);
    if (!items) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
        PyObject *fn = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
        if (!PyCFunction_Check(fn) || !PyUnicode_Check(key)) continue;
        const char *name = PyUnicode_AsUTF8(key);
        if (!name || name[0] == '_') continue;
        int skip = 0;
        for (int s = 0; func_skip[s]; s++) skip |= !strcmp(func_skip[s], name);
        if (skip) continue;
        func_mode mode = F_MISSING;
        for (size_t m = 0; m < sizeof func_modes / sizeof *func_modes; m++)
            if (!strcmp(func_modes[m].name, name)) mode = func_modes[m].mode;
        CkAgFuncObject *w = PyObject_New(CkAgFuncObject, &CkAgFunc_Type);
        if (!w) { rc = -1; break; }
        w->vectorcall = agfunc_vectorcall;
        w->fn = Py_NewRef(fn);
        w->mode = mode;
        w->name = ((PyCFunctionObject *)fn)->m_ml->ml_name;
        rc = PyDict_SetItem(d, key, (PyObject *)w);
        Py_DECREF(w);
    }
    Py_DECREF(items);
    return rc;
}
