/* cudakit.ndarray: the Python object around a ck_array. */
#include "ck_python.h"

#include <string.h>

/* ------------------------------------------------------------ wrapping */

PyObject *ck_py_wrap(ck_array *arr, PyObject *base)
{
    CkArrayObject *o = PyObject_New(CkArrayObject, &CkArray_Type);
    if (!o) {
        ck_array_release(arr);
        return NULL;
    }
    /* copy only the dims in use: the struct is large and this is the hot path */
    ck_array *d = &o->arr;
    d->buf = arr->buf;
    d->data = arr->data;
    d->dtype = arr->dtype;
    d->ndim = arr->ndim;
    d->flags = arr->flags;
    d->size = arr->size;
    memcpy(d->shape, arr->shape, (size_t)arr->ndim * sizeof(int64_t));
    memcpy(d->strides, arr->strides, (size_t)arr->ndim * sizeof(int64_t));
    arr->buf = NULL;
    o->base = Py_XNewRef(base);
    o->weakreflist = NULL;
    o->ag = NULL;
    return (PyObject *)o;
}

PyObject *ck_py_wrap_view(ck_array *view, PyObject *owner)
{
    /* .base names the array that owns the memory, as NumPy collapses chains */
    PyObject *base = owner;
    if (owner && CkArray_Check(owner) && ((CkArrayObject *)owner)->base &&
        CkArray_Check(((CkArrayObject *)owner)->base))
        base = ((CkArrayObject *)owner)->base;
    view->flags &= ~CK_ARRAY_OWNDATA;
    return ck_py_wrap(view, base);
}

static void array_dealloc(PyObject *self)
{
    CkArrayObject *o = (CkArrayObject *)self;
    if (o->weakreflist) PyObject_ClearWeakRefs(self);
    ck_array_release(&o->arr);
    Py_XDECREF(o->base);
    if (o->ag) ck_ag_var_release(o->ag);
    Py_TYPE(self)->tp_free(self);
}

/* ------------------------------------------------------------ attributes */

static PyObject *get_shape(PyObject *self, void *c)
{
    (void)c;
    return ck_py_shape_tuple(CK_ARR(self)->ndim, CK_ARR(self)->shape);
}

static int set_shape(PyObject *self, PyObject *value, void *c)
{
    (void)c;
    if (!value) { PyErr_SetString(PyExc_AttributeError, "cannot delete array shape"); return -1; }
    /* NumPy 2.5 deprecates it: other holders of the array see it change */
    if (PyErr_WarnEx(PyExc_DeprecationWarning, "Setting the shape of an array is deprecated (as in NumPy 2.5); "
                                               "reshape() gives a view with the new shape.", 1) < 0)
        return -1;
    int nd;
    int64_t shape[CK_MAXDIMS];
    if (ck_py_shape_from_obj(value, &nd, shape) < 0) return -1;
    ck_array r;
    ck_status s = ck_array_reshape(&r, CK_ARR(self), nd, shape, 0);
    if (s != CK_OK) return ck_py_raise_int(s);
    if (r.buf != CK_ARR(self)->buf || r.data != CK_ARR(self)->data) {
        ck_array_release(&r);
        PyErr_SetString(PyExc_AttributeError, "Incompatible shape for in-place modification. "
                                              "Use `.reshape()` to make a copy with the desired shape.");
        return -1;
    }
    int flags = CK_ARR(self)->flags & (CK_ARRAY_OWNDATA | CK_ARRAY_WRITEABLE);
    ck_array_set_layout(CK_ARR(self), r.ndim, r.shape, r.strides);
    CK_ARR(self)->flags = (CK_ARR(self)->flags & ~(CK_ARRAY_OWNDATA | CK_ARRAY_WRITEABLE)) | flags;
    ck_array_release(&r);
    return 0;
}

static PyObject *get_strides(PyObject *self, void *c)
{
    (void)c;
    return ck_py_shape_tuple(CK_ARR(self)->ndim, CK_ARR(self)->strides);
}

static PyObject *get_ndim(PyObject *self, void *c) { (void)c; return PyLong_FromLong(CK_ARR(self)->ndim); }
static PyObject *get_size(PyObject *self, void *c) { (void)c; return PyLong_FromLongLong(CK_ARR(self)->size); }
static PyObject *get_itemsize(PyObject *self, void *c) { (void)c; return PyLong_FromLong(ck_array_itemsize(CK_ARR(self))); }
static PyObject *get_nbytes(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(CK_ARR(self)->size * ck_array_itemsize(CK_ARR(self)));
}
static PyObject *get_dtype(PyObject *self, void *c) { (void)c; return Py_NewRef((PyObject *)ck_py_dtypes[CK_ARR(self)->dtype]); }
static PyObject *get_device(PyObject *self, void *c) { (void)c; return ck_py_device_new(ck_array_device(CK_ARR(self))); }
static PyObject *get_base(PyObject *self, void *c)
{
    (void)c;
    PyObject *b = ((CkArrayObject *)self)->base;
    return Py_NewRef(b ? b : Py_None);
}

static PyObject *view_with(PyObject *self, ck_array *v) { return ck_py_wrap_view(v, self); }

static PyObject *get_T(PyObject *self, void *c)
{
    (void)c;
    ck_array v;
    ck_status s = ck_array_transpose(&v, CK_ARR(self), NULL);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = view_with(self, &v);
    if (CK_AG_GATE() && r) r = ck_py_ag_transpose(self, NULL, r);
    return r;
}

static PyObject *get_mT(PyObject *self, void *c)
{
    (void)c;
    const ck_array *a = CK_ARR(self);
    if (a->ndim < 2) {
        PyErr_SetString(PyExc_ValueError, "matrix transpose with ndim < 2 is undefined");
        return NULL;
    }
    int perm[CK_MAXDIMS];
    for (int i = 0; i < a->ndim; i++) perm[i] = i;
    perm[a->ndim - 1] = a->ndim - 2;
    perm[a->ndim - 2] = a->ndim - 1;
    ck_array v;
    ck_status s = ck_array_transpose(&v, a, perm);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = view_with(self, &v);
    if (CK_AG_GATE() && r) r = ck_py_ag_transpose(self, perm, r);
    return r;
}

/* real and imag of a complex array are strided views of its halves. */
static PyObject *part_view(PyObject *self, int imag)
{
    const ck_array *a = CK_ARR(self);
    ck_array v;
    ck_array_view(&v, a);
    v.dtype = ck_dtype_real(a->dtype);
    if (imag) v.data += ck_dtype_get_info(v.dtype)->itemsize;
    ck_array_update_flags(&v);
    return view_with(self, &v);
}

static PyObject *get_real(PyObject *self, void *c)
{
    (void)c;
    PyObject *r;
    if (ck_dtype_is_complex(CK_ARR(self)->dtype)) {
        r = part_view(self, 0);
        /* the complex parts' rules are not written yet: backward says so */
        if (CK_AG_GATE() && r) r = ck_py_ag_missing("real", 1, &self, r);
        return r;
    }
    ck_array v;
    ck_array_view(&v, CK_ARR(self));
    r = view_with(self, &v);
    if (CK_AG_GATE() && r) r = ck_py_ag_copy("copy", self, r);
    return r;
}

static PyObject *get_imag(PyObject *self, void *c)
{
    (void)c;
    const ck_array *a = CK_ARR(self);
    if (ck_dtype_is_complex(a->dtype)) {
        PyObject *r = part_view(self, 1);
        if (CK_AG_GATE() && r) r = ck_py_ag_missing("imag", 1, &self, r);
        return r;
    }
    ck_array z;
    ck_status s = ck_full_scalar(&z, a->ndim, a->shape, a->dtype, 0.0, ck_array_device(a));
    if (s != CK_OK) return ck_py_raise(s);
    z.flags &= ~CK_ARRAY_WRITEABLE;
    return ck_py_wrap(&z, NULL);
}

static int set_part(PyObject *self, PyObject *value, int imag)
{
    if (!value) { PyErr_SetString(PyExc_AttributeError, "cannot delete attribute"); return -1; }
    if (!ck_dtype_is_complex(CK_ARR(self)->dtype)) {
        if (imag) { PyErr_SetString(PyExc_TypeError, "array does not have imaginary part to set"); return -1; }
        return ck_py_setitem(self, Py_Ellipsis, value);
    }
    PyObject *v = part_view(self, imag);
    if (!v) return -1;
    int r = ck_py_setitem(v, Py_Ellipsis, value);
    Py_DECREF(v);
    return r;
}

static int set_real(PyObject *self, PyObject *value, void *c) { (void)c; return set_part(self, value, 0); }
static int set_imag(PyObject *self, PyObject *value, void *c) { (void)c; return set_part(self, value, 1); }

/* ---------------------------------------------------------------- flags */

typedef struct {
    PyObject_HEAD
    PyObject *array;
} CkFlagsObject;

static int flag_bit(const char *name)
{
    if (!strcmp(name, "C_CONTIGUOUS") || !strcmp(name, "c_contiguous") || !strcmp(name, "C")) return CK_ARRAY_C_CONTIGUOUS;
    if (!strcmp(name, "F_CONTIGUOUS") || !strcmp(name, "f_contiguous") || !strcmp(name, "F")) return CK_ARRAY_F_CONTIGUOUS;
    if (!strcmp(name, "WRITEABLE") || !strcmp(name, "writeable") || !strcmp(name, "W")) return CK_ARRAY_WRITEABLE;
    if (!strcmp(name, "OWNDATA") || !strcmp(name, "owndata") || !strcmp(name, "O")) return CK_ARRAY_OWNDATA;
    return 0;
}

static PyObject *flags_get(PyObject *self, const char *name)
{
    int bit = flag_bit(name);
    if (!bit) { PyErr_Format(PyExc_KeyError, "%s", name); return NULL; }
    return PyBool_FromLong((CK_ARR(((CkFlagsObject *)self)->array)->flags & bit) != 0);
}

static PyObject *flags_getitem(PyObject *self, PyObject *key)
{
    const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) { if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "flag name must be a string"); return NULL; }
    return flags_get(self, name);
}

static PyObject *flags_getattro(PyObject *self, PyObject *name)
{
    const char *n = PyUnicode_AsUTF8(name);
    if (n && n[0] != '_' && flag_bit(n) && strcmp(n, "C") && strcmp(n, "F") && strcmp(n, "W") && strcmp(n, "O"))
        return flags_get(self, n);
    return PyObject_GenericGetAttr(self, name);
}

static int flags_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    const char *n = PyUnicode_AsUTF8(name);
    if (!n) return -1;
    if (flag_bit(n) != CK_ARRAY_WRITEABLE || !value) {
        PyErr_Format(PyExc_AttributeError, "cannot set flag '%s'", n);
        return -1;
    }
    int on = PyObject_IsTrue(value);
    if (on < 0) return -1;
    ck_array *a = CK_ARR(((CkFlagsObject *)self)->array);
    if (on) {
        if (a->buf->readonly) {
            PyErr_SetString(PyExc_ValueError, "cannot set WRITEABLE flag to True of this array");
            return -1;
        }
        a->flags |= CK_ARRAY_WRITEABLE;
    } else {
        a->flags &= ~CK_ARRAY_WRITEABLE;
    }
    return 0;
}

static PyObject *flags_repr(PyObject *self)
{
    int f = CK_ARR(((CkFlagsObject *)self)->array)->flags;
    return PyUnicode_FromFormat("  C_CONTIGUOUS : %s\n  F_CONTIGUOUS : %s\n  OWNDATA : %s\n  WRITEABLE : %s",
                                f & CK_ARRAY_C_CONTIGUOUS ? "True" : "False", f & CK_ARRAY_F_CONTIGUOUS ? "True" : "False",
                                f & CK_ARRAY_OWNDATA ? "True" : "False", f & CK_ARRAY_WRITEABLE ? "True" : "False");
}

static void flags_dealloc(PyObject *self)
{
    Py_XDECREF(((CkFlagsObject *)self)->array);
    PyObject_Free(self);
}

static PyMappingMethods flags_mapping = {.mp_subscript = flags_getitem};

PyTypeObject CkFlags_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.flagsobj",
    .tp_basicsize = sizeof(CkFlagsObject),
    .tp_dealloc = flags_dealloc,
    .tp_repr = flags_repr,
    .tp_as_mapping = &flags_mapping,
    .tp_getattro = flags_getattro,
    .tp_setattro = flags_setattro,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyObject *get_flags(PyObject *self, void *c)
{
    (void)c;
    CkFlagsObject *f = PyObject_New(CkFlagsObject, &CkFlags_Type);
    if (!f) return NULL;
    f->array = Py_NewRef(self);
    return (PyObject *)f;
}

/* __cuda_array_interface__ (v3) for GPU arrays: CuPy, Numba and PyTorch
 * take them without a copy.  Work is on the legacy default stream unless a
 * stream is current, so "stream" says 1 (legacy) or the stream's handle. */
static PyObject *get_cai(PyObject *self, void *c)
{
    (void)c;
    const ck_array *a = CK_ARR(self);
    if (ck_array_device(a).type != CK_DEVICE_CUDA) {
        PyErr_SetString(PyExc_AttributeError, "__cuda_array_interface__ is only defined for GPU arrays");
        return NULL;
    }
    static const char *const typestr[CK_NTYPES] = {
#define CK_TYPESTR_(A, ID, name, K, tchar, fmt, str, ...) [CK_##ID] = str,
        CK_DTYPES(CK_TYPESTR_, _)
#undef CK_TYPESTR_
    };
    PyObject *strides;
    if (a->flags & CK_ARRAY_C_CONTIGUOUS) strides = Py_NewRef(Py_None);
    else strides = ck_py_shape_tuple(a->ndim, a->strides);
    PyObject *shape = ck_py_shape_tuple(a->ndim, a->shape);
    if (!strides || !shape) { Py_XDECREF(strides); Py_XDECREF(shape); return NULL; }
    return Py_BuildValue("{s:N,s:s,s:(KO),s:N,s:i,s:i}", "shape", shape, "typestr", typestr[a->dtype],
                         "data", (unsigned long long)(uintptr_t)a->data,
                         (a->flags & CK_ARRAY_WRITEABLE) ? Py_False : Py_True, "strides", strides, "version", 3,
                         "stream", 1);
}

static PyGetSetDef array_getset[] = {
    {"__cuda_array_interface__", get_cai, NULL, "The CUDA array interface (v3) of a GPU array.", NULL},
    {"shape", get_shape, set_shape, "Tuple of array dimensions.", NULL},
    {"strides", get_strides, NULL, "Tuple of bytes to step in each dimension.", NULL},
    {"ndim", get_ndim, NULL, "Number of array dimensions.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes", get_nbytes, NULL, "Bytes of all elements.", NULL},
    {"dtype", get_dtype, NULL, "Data type of the elements.", NULL},
    {"device", get_device, NULL, "The device the array lives on.", NULL},
    {"base", get_base, NULL, "The array whose memory this view uses, or None.", NULL},
    {"T", get_T, NULL, "View with the axes reversed.", NULL},
    {"mT", get_mT, NULL, "View with the last two axes swapped.", NULL},
    {"real", get_real, set_real, "Real part.", NULL},
    {"imag", get_imag, set_imag, "Imaginary part.", NULL},
    {"flags", get_flags, NULL, "Memory layout flags.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------ methods */

static int order_f_from(PyObject *order, const ck_array *a, int *order_f)
{
    *order_f = 0;
    if (!order || order == Py_None) return 0;
    const char *o = PyUnicode_Check(order) ? PyUnicode_AsUTF8(order) : NULL;
    if (!o || !o[0] || o[1]) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "order must be one of 'C', 'F', 'A', or 'K'");
        return -1;
    }
    switch (o[0]) {
    case 'C': case 'c': return 0;
    case 'F': case 'f': *order_f = 1; return 0;
    case 'A': case 'a': case 'K': case 'k':
        *order_f = (a->flags & CK_ARRAY_F_CONTIGUOUS) && !(a->flags & CK_ARRAY_C_CONTIGUOUS);
        return 0;
    }
    PyErr_SetString(PyExc_ValueError, "order must be one of 'C', 'F', 'A', or 'K'");
    return -1;
}

static PyObject *m_astype(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *dt, *order = NULL, *casting = NULL, *copy = Py_True, *device = Py_None;
    int subok = 1;
    static char *kwlist[] = {"dtype", "order", "casting", "subok", "copy", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOpOO", kwlist, &dt, &order, &casting, &subok, &copy, &device))
        return NULL;
    ck_dtype t;
    if (ck_py_dtype_from_obj(dt, CK_DTYPE_INVALID, &t) < 0) return NULL;
    if (t == CK_DTYPE_INVALID) { PyErr_SetString(PyExc_TypeError, "astype() needs a dtype"); return NULL; }
    int order_f;
    if (order_f_from(order, CK_ARR(self), &order_f) < 0) return NULL;
    ck_device dev;
    int has_dev;
    if (ck_py_device_from_obj(device, &dev, &has_dev) < 0) return NULL;
    int cp = PyObject_IsTrue(copy);
    if (cp < 0) return NULL;
    const ck_array *a = CK_ARR(self);
    if (casting && casting != Py_None) {
        ck_casting cc;
        if (ck_py_casting_from_obj(casting, &cc) < 0) return NULL;
        if (ck_py_check_cast(a->dtype, t, cc) < 0) return NULL;
    }
    if (!cp && t == a->dtype && (!has_dev || ck_device_equal(dev, ck_array_device(a)))) return Py_NewRef(self);
    if (ck_dtype_is_complex(a->dtype) && !ck_dtype_is_complex(t) && t != CK_BOOL &&
        PyErr_WarnEx(ck_py_exc(CK_PY_COMPLEX_WARNING), "Casting complex values to real discards the imaginary part", 1) < 0)
        return NULL;
    ck_array out;
    ck_status s = ck_array_astype(&out, a, t, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    if (has_dev && !ck_device_equal(dev, ck_array_device(a))) {
        ck_array moved;
        s = ck_array_to_device(&moved, &out, dev);
        ck_array_release(&out);
        if (s != CK_OK) return ck_py_raise(s);
        out = moved;
    }
    PyObject *r = ck_py_wrap(&out, NULL);
    if (CK_AG_GATE() && r) r = ck_py_ag_copy(has_dev ? "to_device" : "astype", self, r);
    return r;
}

static PyObject *m_copy(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *order = NULL;
    static char *kwlist[] = {"order", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &order)) return NULL;
    int order_f;
    if (order_f_from(order, CK_ARR(self), &order_f) < 0) return NULL;
    ck_array out;
    ck_status s = ck_array_astype(&out, CK_ARR(self), CK_ARR(self)->dtype, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = ck_py_wrap(&out, NULL);
    if (CK_AG_GATE() && r) r = ck_py_ag_copy("copy", self, r);
    return r;
}

static PyObject *m_view(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *dt = Py_None, *type = Py_None;
    static char *kwlist[] = {"dtype", "type", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", kwlist, &dt, &type)) return NULL;
    const ck_array *a = CK_ARR(self);
    ck_dtype t;
    if (ck_py_dtype_from_obj(dt, a->dtype, &t) < 0) return NULL;
    ck_array v;
    ck_array_view(&v, a);
    int oldsz = ck_dtype_get_info(a->dtype)->itemsize, newsz = ck_dtype_get_info(t)->itemsize;
    if (oldsz != newsz) {
        /* the last axis changes length; it must be contiguous */
        if (a->ndim == 0 || a->strides[a->ndim - 1] != oldsz ||
            (a->shape[a->ndim - 1] * oldsz) % newsz != 0) {
            ck_array_release(&v);
            PyErr_SetString(PyExc_ValueError, "To change to a dtype of a different size, the last axis must be contiguous "
                                              "and its size in bytes divisible by the new itemsize");
            return NULL;
        }
        v.shape[a->ndim - 1] = a->shape[a->ndim - 1] * oldsz / newsz;
        v.strides[a->ndim - 1] = newsz;
    }
    v.dtype = t;
    ck_array_update_flags(&v);
    PyObject *r = view_with(self, &v);
    if (CK_AG_GATE() && r && t != a->dtype) r = ck_py_ag_missing("view(dtype)", 1, &self, r);
    else if (CK_AG_GATE() && r) r = ck_py_ag_copy("copy", self, r);
    return r;
}

static PyObject *m_to_device(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *device, *stream = Py_None;
    static char *kwlist[] = {"device", "stream", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O", kwlist, &device, &stream)) return NULL;
    ck_device dev;
    int has;
    if (ck_py_device_from_obj(device, &dev, &has) < 0) return NULL;
    if (!has || ck_device_equal(dev, ck_array_device(CK_ARR(self)))) return Py_NewRef(self);
    ck_array out;
    ck_status s = ck_array_to_device(&out, CK_ARR(self), dev);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = ck_py_wrap(&out, NULL);
    if (CK_AG_GATE() && r) r = ck_py_ag_copy("to_device", self, r);
    return r;
}

/* shape from *args: a(2, 3), a((2, 3)), a([2, 3]) */
static int shape_from_args(PyObject *args, Py_ssize_t start, int *nd, int64_t *shape)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args) - start;
    if (n == 1) return ck_py_shape_from_obj(PyTuple_GET_ITEM(args, start), nd, shape);
    PyObject *t = PyTuple_GetSlice(args, start, PyTuple_GET_SIZE(args));
    if (!t) return -1;
    int r = ck_py_shape_from_obj(t, nd, shape);
    Py_DECREF(t);
    return r;
}

static PyObject *reshape_impl(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *order = NULL, *copy = Py_None;
    if (kw) {
        order = PyDict_GetItemString(kw, "order");
        copy = PyDict_GetItemString(kw, "copy");
        if (!copy) copy = Py_None;
        Py_ssize_t known = (order != NULL) + (PyDict_GetItemString(kw, "copy") != NULL);
        PyObject *shape_kw = PyDict_GetItemString(kw, "shape");
        if (shape_kw) known++;
        if (PyDict_Size(kw) != known) { PyErr_SetString(PyExc_TypeError, "reshape() got an unexpected keyword argument"); return NULL; }
        if (shape_kw) {
            if (PyTuple_GET_SIZE(args) != 0) {
                PyErr_SetString(PyExc_TypeError, "reshape() got multiple values for argument 'shape'");
                return NULL;
            }
            /* shape= as the positional shape, keeping order= and copy= */
            PyObject *t = PyTuple_Pack(1, shape_kw);
            PyObject *k = t ? PyDict_Copy(kw) : NULL;
            if (!k || PyDict_DelItemString(k, "shape") < 0) {
                Py_XDECREF(t);
                Py_XDECREF(k);
                return NULL;
            }
            PyObject *r = reshape_impl(self, t, k);
            Py_DECREF(t);
            Py_DECREF(k);
            return r;
        }
    }
    if (PyTuple_GET_SIZE(args) == 0) { PyErr_SetString(PyExc_TypeError, "reshape() missing required argument 'shape'"); return NULL; }
    int nd;
    int64_t shape[CK_MAXDIMS];
    if (PyTuple_GET_SIZE(args) == 1 && PyTuple_GET_ITEM(args, 0) == Py_None) {   /* NumPy: flatten */
        nd = 1;
        shape[0] = -1;
    } else if (shape_from_args(args, 0, &nd, shape) < 0) {
        return NULL;
    }
    int order_f = 0;
    if (order && order != Py_None) {
        if (!PyUnicode_Check(order)) {
            PyErr_Format(PyExc_TypeError, "order must be str, not %.50s", Py_TYPE(order)->tp_name);
            return NULL;
        }
        const char *o = PyUnicode_AsUTF8(order);
        if (!o || (strcmp(o, "C") && strcmp(o, "F") && strcmp(o, "A"))) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "order must be one of 'C', 'F', 'A'");
            return NULL;
        }
        order_f = o[0] == 'F' || (o[0] == 'A' && (CK_ARR(self)->flags & CK_ARRAY_F_CONTIGUOUS) &&
                                  !(CK_ARR(self)->flags & CK_ARRAY_C_CONTIGUOUS));
    }
    ck_array r;
    ck_status s = ck_array_reshape(&r, CK_ARR(self), nd, shape, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    int is_view = r.buf == CK_ARR(self)->buf;
    if (copy == Py_False && !is_view) {
        ck_array_release(&r);
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copying while reshaping.");
        return NULL;
    }
    if (copy == Py_True && is_view) {
        ck_array c;
        s = ck_array_astype(&c, &r, r.dtype, order_f);
        ck_array_release(&r);
        if (s != CK_OK) return ck_py_raise(s);
        ck_array out;
        s = ck_array_reshape(&out, &c, nd, r.shape, order_f);
        ck_array_release(&c);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&out, NULL);
    }
    return is_view ? view_with(self, &r) : ck_py_wrap(&r, NULL);
}

static PyObject *m_reshape(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *r = reshape_impl(self, args, kw);
    if (CK_AG_GATE() && r) r = ck_py_ag_reshape(self, r);
    return r;
}

static PyObject *m_transpose(PyObject *self, PyObject *args)
{
    const ck_array *a = CK_ARR(self);
    int perm[CK_MAXDIMS];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *seq = NULL;
    if (n == 1 && PyTuple_GET_ITEM(args, 0) == Py_None) n = 0;
    if (n == 1 && !PyIndex_Check(PyTuple_GET_ITEM(args, 0))) {
        seq = PySequence_Fast(PyTuple_GET_ITEM(args, 0), "axes must be a sequence of ints");
        if (!seq) return NULL;
        n = PySequence_Fast_GET_SIZE(seq);
    }
    if (n && n != a->ndim) {
        Py_XDECREF(seq);
        PyErr_SetString(PyExc_ValueError, "axes don't match array");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = seq ? PySequence_Fast_GET_ITEM(seq, i) : PyTuple_GET_ITEM(args, i);
        if (ck_py_axis_int(x, &perm[i]) < 0) { Py_XDECREF(seq); return NULL; }
    }
    Py_XDECREF(seq);
    ck_array v;
    ck_status s = ck_array_transpose(&v, a, n ? perm : NULL);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = view_with(self, &v);
    if (CK_AG_GATE() && r) r = ck_py_ag_transpose(self, n ? perm : NULL, r);
    return r;
}

static PyObject *m_swapaxes(PyObject *self, PyObject *args)
{
    int a1, a2;
    if (!PyArg_ParseTuple(args, "ii", &a1, &a2)) return NULL;
    const ck_array *a = CK_ARR(self);
    int o1 = a1, o2 = a2;
    if (ck_axis_normalize(&a1, a->ndim) != CK_OK) {
        PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "axis1: axis %d is out of bounds for array of dimension %d", o1, a->ndim);
        return NULL;
    }
    if (ck_axis_normalize(&a2, a->ndim) != CK_OK) {
        PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "axis2: axis %d is out of bounds for array of dimension %d", o2, a->ndim);
        return NULL;
    }
    int perm[CK_MAXDIMS];
    for (int i = 0; i < a->ndim; i++) perm[i] = i;
    perm[a1] = a2;
    perm[a2] = a1;
    ck_array v;
    ck_status s = ck_array_transpose(&v, a, perm);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = view_with(self, &v);
    if (CK_AG_GATE() && r) r = ck_py_ag_transpose(self, perm, r);
    return r;
}

static PyObject *ravel_impl(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *order = NULL;
    static char *kwlist[] = {"order", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &order)) return NULL;
    int order_f;
    if (order_f_from(order, CK_ARR(self), &order_f) < 0) return NULL;
    int64_t n = CK_ARR(self)->size;
    ck_array r;
    ck_status s = ck_array_reshape(&r, CK_ARR(self), 1, &n, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    if (r.buf != CK_ARR(self)->buf) return ck_py_wrap(&r, NULL);
    if (r.flags & CK_ARRAY_C_CONTIGUOUS) return view_with(self, &r);
    /* the result is always contiguous, as NumPy's: a strided view (a
     * stepped or reversed 1-d array) is copied */
    ck_array_release(&r);
    ck_array c;
    s = ck_array_astype(&c, CK_ARR(self), CK_ARR(self)->dtype, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    s = ck_array_reshape(&r, &c, 1, &n, order_f);
    ck_array_release(&c);
    if (s != CK_OK) return ck_py_raise(s);
    r.flags |= CK_ARRAY_OWNDATA;
    return ck_py_wrap(&r, NULL);
}

static PyObject *flatten_impl(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *order = NULL;
    static char *kwlist[] = {"order", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &order)) return NULL;
    int order_f;
    if (order_f_from(order, CK_ARR(self), &order_f) < 0) return NULL;
    ck_array c, r;
    ck_status s = ck_array_astype(&c, CK_ARR(self), CK_ARR(self)->dtype, order_f);
    if (s != CK_OK) return ck_py_raise(s);
    int64_t n = c.size;
    s = ck_array_reshape(&r, &c, 1, &n, order_f);
    ck_array_release(&c);
    if (s != CK_OK) return ck_py_raise(s);
    r.flags |= CK_ARRAY_OWNDATA;
    return ck_py_wrap(&r, NULL);
}

static PyObject *m_ravel(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *r = ravel_impl(self, args, kw);
    if (CK_AG_GATE() && r) r = ck_py_ag_reshape(self, r);
    return r;
}

static PyObject *m_flatten(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *r = flatten_impl(self, args, kw);
    if (CK_AG_GATE() && r) r = ck_py_ag_reshape(self, r);
    return r;
}

static PyObject *m_fill(PyObject *self, PyObject *value)
{
    /* fill takes one value, not an array to broadcast (NumPy converts it
     * with int() or float()) */
    if (PyList_Check(value) || PyTuple_Check(value) || (CkArray_Check(value) && CK_ARR(value)->size != 1)) {
        if (ck_dtype_is_inexact(CK_ARR(self)->dtype))
            PyErr_SetString(PyExc_ValueError, "setting an array element with a sequence.");
        else
            PyErr_Format(PyExc_TypeError, "int() argument must be a string, a bytes-like object or a real number, "
                         "not '%.50s'", Py_TYPE(value)->tp_name);
        return NULL;
    }
    if (ck_py_setitem(self, Py_Ellipsis, value) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *m_conj(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *args[1] = {self};
    return ck_py_apply(CK_OP_CONJUGATE, 1, args, NULL, CK_DTYPE_INVALID, 0);
}

static PyObject *m_clip(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *lo = Py_None, *hi = Py_None, *out = Py_None;
    static char *kwlist[] = {"min", "max", "out", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO", kwlist, &lo, &hi, &out)) return NULL;
    PyObject *mod = PyImport_ImportModule("cudakit");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "clip", "OOOO", self, lo, hi, out);
    Py_DECREF(mod);
    return r;
}

/* a.sort() sorts in place and a.argsort() returns indices, through the
 * module functions (src/python/sortfuncs.c) */
static PyObject *call_module(const char *name, PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *mod = PyImport_ImportModule("cudakit");
    PyObject *f = mod ? PyObject_GetAttrString(mod, name) : NULL;
    Py_XDECREF(mod);
    if (!f) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *full = PyTuple_New(n + 1);
    if (!full) { Py_DECREF(f); return NULL; }
    PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(full, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    PyObject *r = PyObject_Call(f, full, kw);
    Py_DECREF(full);
    Py_DECREF(f);
    return r;
}

static PyObject *m_sort(PyObject *self, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) == 0 && (!kw || !PyDict_GetItemString(kw, "axis"))) {
        /* NumPy's method sorts along the last axis by default */
        PyObject *a = PyTuple_Pack(1, PyLong_FromLong(-1));
        if (!a) return NULL;
        Py_DECREF(PyTuple_GET_ITEM(a, 0));
        PyObject *r = m_sort(self, a, kw);
        Py_DECREF(a);
        return r;
    }
    PyObject *sorted = call_module("sort", self, args, kw);
    if (!sorted) return NULL;
    int rc = ck_py_setitem(self, Py_Ellipsis, sorted);
    Py_DECREF(sorted);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *m_argsort(PyObject *self, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) == 0 && (!kw || !PyDict_GetItemString(kw, "axis"))) {
        PyObject *a = PyTuple_Pack(1, PyLong_FromLong(-1));
        if (!a) return NULL;
        Py_DECREF(PyTuple_GET_ITEM(a, 0));
        PyObject *r = call_module("argsort", self, a, kw);
        Py_DECREF(a);
        return r;
    }
    return call_module("argsort", self, args, kw);
}

/* NumPy ufuncs on our arrays (np.exp(x), np.float32(2) * x) run as our
 * ufunc of the same name, on the arrays' device, as CuPy does. */
static PyObject *m_array_ufunc(PyObject *self, PyObject *args, PyObject *kw)
{
    if (PyTuple_GET_SIZE(args) < 2) Py_RETURN_NOTIMPLEMENTED;
    PyObject *ufunc = PyTuple_GET_ITEM(args, 0), *method = PyTuple_GET_ITEM(args, 1);
    if (!PyUnicode_Check(method) || PyUnicode_CompareWithASCIIString(method, "__call__") != 0)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *name = PyObject_GetAttrString(ufunc, "__name__");
    if (!name) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
    PyObject *mod = PyImport_ImportModule("cudakit");
    PyObject *f = mod ? PyObject_GetAttr(mod, name) : NULL;
    int cmp = PyUnicode_CompareWithASCIIString(name, "equal") == 0 ? Py_EQ
            : PyUnicode_CompareWithASCIIString(name, "not_equal") == 0 ? Py_NE : -1;
    Py_XDECREF(mod);
    Py_DECREF(name);
    if (!f) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
    PyObject *inputs = PyTuple_GetSlice(args, 2, PyTuple_GET_SIZE(args));
    PyObject *r = inputs ? PyObject_Call(f, inputs, kw) : NULL;
    /* A NumPy scalar's == (np.datetime64(...) == a) comes here with the
     * scalar made a 0-d NumPy array (np.equal itself passes the scalar):
     * an operand no loop takes compares element-wise unequal, as the
     * operator says, where NumPy, given the error, would convert a GPU
     * array to find the result's shape. */
    if (!r && cmp >= 0 && PyTuple_GET_SIZE(inputs) == 2 && (!kw || PyDict_GET_SIZE(kw) == 0) &&
        PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyObject *x = PyTuple_GET_ITEM(inputs, 0), *y = PyTuple_GET_ITEM(inputs, 1);
        PyObject *other = x == self ? y : x, *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyObject *np = ck_py_numpy();
        PyObject *nd = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
        PyObject *ndim = nd && Py_IS_TYPE(other, (PyTypeObject *)nd) ? PyObject_GetAttrString(other, "ndim") : NULL;
        int scalar_made_array = ndim && PyLong_Check(ndim) && PyLong_AsLong(ndim) == 0;
        Py_XDECREF(nd);
        Py_XDECREF(ndim);
        PyErr_Clear();
        if (scalar_made_array) {
            Py_XDECREF(et);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
            /* self's shape (other is 0-d), all unequal, made here: not
             * PyObject_RichCompare(self, other), which comes back through
             * the 0-d array's own == (NumPy 2.5: a recursion that overflowed
             * the C stack, a == np.longdouble(1) on the H200) */
            PyObject *fa = Py_BuildValue("(O)", cmp == Py_NE ? Py_True : Py_False);
            PyObject *fk = fa ? Py_BuildValue("{s:s}", "dtype", "bool") : NULL;
            r = fk ? call_module("full_like", self, fa, fk) : NULL;
            Py_XDECREF(fa);
            Py_XDECREF(fk);
        } else {
            PyErr_Restore(et, ev, tb);
        }
    }
    Py_XDECREF(inputs);
    Py_DECREF(f);
    return r;
}

/* NEP 18: NumPy's functions on our arrays (np.concatenate, np.mean...) run
 * cudakit's of the same name (python/cudakit/_array_api.py). */
static PyObject *m_array_function(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static PyObject *impl;
    if (!impl) {
        PyObject *mod = PyImport_ImportModule("cudakit._array_api");
        if (!mod) return NULL;
        impl = PyObject_GetAttrString(mod, "_array_function");
        Py_DECREF(mod);
        if (!impl) return NULL;
    }
    return PyObject_Call(impl, args, kw);
}

/* Numba's device-array method: a NumPy array with a copy of the values
 * (into ary when given, which is returned); the copy waits for the work
 * that makes the values, so stream is satisfied whatever it is. */
static PyObject *m_copy_to_host(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"ary", "stream", NULL};
    PyObject *ary = Py_None, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:copy_to_host", kwlist, &ary, &stream)) return NULL;
    if (stream != Py_None && CkArray_Check(ary)) {
        /* into a (pinned) CPU array on the stream, without waiting */
        if (ck_py_copy_async_obj(ary, self, stream, 0) < 0) return NULL;
        return Py_NewRef(ary);
    }
    return ck_py_to_numpy(self, ary, 1);
}

static PyObject *m_array_namespace(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"api_version", NULL};
    PyObject *v = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O", kwlist, &v)) return NULL;
    /* the versions of the standard NumPy 2 names */
    static const char *const known[] = {"2021.12", "2022.12", "2023.12", "2024.12"};
    int ok = v == Py_None;
    const char *s = !ok && PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    for (size_t i = 0; s && i < sizeof known / sizeof *known; i++) ok |= !strcmp(s, known[i]);
    if (!ok) return PyErr_Format(PyExc_ValueError, "Version \"%S\" of the Array API Standard is not supported.", v);
    return PyImport_ImportModule("cudakit");
}

static PyMethodDef array_methods[] = {
    CK_DEF_KW(astype, m_astype, "($self, /, dtype, order=None, casting=None, subok=True, copy=True, device=None)",
              "A copy of the array cast to dtype (the array itself when copy is false and nothing changes); casting "
              "None: any cast."),
    CK_DEF_KW(copy, m_copy, "($self, /, order=None)", "A copy of the array."),
    CK_DEF_KW(view, m_view, "($self, /, dtype=None, type=None)", "A view of the same memory, possibly as another dtype."),
    CK_DEF_KW(to_device, m_to_device, "($self, /, device, *, stream=None)",
              "The array on device (itself when it is there already)."),
    CK_DEF_KW(to, ck_py_array_to, "($self, /, device=None, dtype=None, *, non_blocking=False, copy=False, memory_format=None)",
              "PyTorch's spelling of to_device and astype: to('cuda'), to(ck.float32), to('cpu', 'float64')."),
    CK_DEF_KW(copy_to_host, m_copy_to_host, "($self, /, ary=None, stream=None)",
              "A NumPy array with a copy of the values (into ary when given), as Numba's device arrays have.  With a "
              "stream and ary a cudakit CPU array in pinned memory, the copy is queued on the stream and returns at "
              "once (ary is returned; read it after the stream is done)."),
    CK_DEF_O(record_stream, ck_py_array_record_stream, "($self, stream, /)",
             "As PyTorch's: the array's memory is used by work queued on stream too, so that, freed, it is not "
             "reused before stream is past that work (copies on a stream note it themselves)."),
    CK_DEF_KW(reshape, m_reshape, "($self, /, *shape, order=None, copy=None)",
              "A view (or copy) with a new shape: a.reshape(2, 3), a.reshape((2, 3)) or a.reshape(shape=(2, 3))."),
    CK_DEF_VARARGS(transpose, m_transpose, "($self, /, *axes)",
                   "A view with axes permuted: a.transpose(), a.transpose(1, 0), a.transpose((1, 0))."),
    CK_DEF_VARARGS(swapaxes, m_swapaxes, "($self, axis1, axis2, /)", "A view with two axes exchanged."),
    CK_DEF_KW(ravel, m_ravel, "($self, /, order=None)", "Flattened, a view when possible."),
    CK_DEF_KW(flatten, m_flatten, "($self, /, order=None)", "A flattened copy."),
    CK_DEF_O(fill, m_fill, "($self, value, /)", "Set every element to value, in place."),
    CK_DEF_NOARGS(conj, m_conj, "($self, /)", "The complex conjugate."),
    CK_DEF_NOARGS(conjugate, m_conj, "($self, /)", "The complex conjugate."),
    CK_DEF_KW(clip, m_clip, "($self, /, min=None, max=None, out=None)", "Values limited to [min, max]."),
    CK_DEF_KW(__array_namespace__, m_array_namespace, "($self, /, *, api_version=None)",
              "The cudakit module (the array API standard's namespace)."),
    CK_DEF_KW(__array_ufunc__, m_array_ufunc, "($self, ufunc, method, /, *inputs, **kwargs)",
              "NumPy ufuncs run as cudakit's."),
    CK_DEF_KW(__array_function__, m_array_function, "($self, func, types, args, kwargs, /)",
              "NumPy's functions run as cudakit's (NEP 18)."),
    CK_DEF_KW(sort, m_sort, "($self, /, axis=-1, kind=None, order=None, *, stable=None, descending=False)",
              "Sort in place along an axis (the last by default)."),
    CK_DEF_KW(argsort, m_argsort, "($self, /, axis=-1, kind=None, order=None, *, stable=None, descending=False)",
              "The indices that sort the array along an axis (the last by default)."),
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ numbers */

#define CK_BINARY_SLOT_(fname, OP)                                        \
static PyObject *fname(PyObject *a, PyObject *b)                          \
{                                                                         \
    PyObject *args[2] = {a, b};                                           \
    return ck_py_apply(OP, 2, args, NULL, CK_DTYPE_INVALID, 1);           \
}
#define CK_INPLACE_SLOT_(fname, OP)                                       \
static PyObject *fname(PyObject *a, PyObject *b)                          \
{                                                                         \
    PyObject *args[2] = {a, b};                                           \
    return ck_py_apply(OP, 2, args, a, CK_DTYPE_INVALID, 1);              \
}
#define CK_UNARY_SLOT_(fname, OP)                                         \
static PyObject *fname(PyObject *a)                                       \
{                                                                         \
    return ck_py_apply(OP, 1, &a, NULL, CK_DTYPE_INVALID, 0);             \
}

CK_BINARY_SLOT_(nb_add, CK_OP_ADD)
CK_BINARY_SLOT_(nb_subtract, CK_OP_SUBTRACT)
CK_BINARY_SLOT_(nb_multiply, CK_OP_MULTIPLY)
CK_BINARY_SLOT_(nb_true_divide, CK_OP_TRUE_DIVIDE)
CK_BINARY_SLOT_(nb_floor_divide, CK_OP_FLOOR_DIVIDE)
CK_BINARY_SLOT_(nb_remainder, CK_OP_REMAINDER)
CK_BINARY_SLOT_(nb_lshift, CK_OP_LEFT_SHIFT)
CK_BINARY_SLOT_(nb_rshift, CK_OP_RIGHT_SHIFT)
CK_BINARY_SLOT_(nb_and, CK_OP_BITWISE_AND)
CK_BINARY_SLOT_(nb_or, CK_OP_BITWISE_OR)
CK_BINARY_SLOT_(nb_xor, CK_OP_BITWISE_XOR)
CK_INPLACE_SLOT_(nb_iadd, CK_OP_ADD)
CK_INPLACE_SLOT_(nb_isubtract, CK_OP_SUBTRACT)
CK_INPLACE_SLOT_(nb_imultiply, CK_OP_MULTIPLY)
CK_INPLACE_SLOT_(nb_itrue_divide, CK_OP_TRUE_DIVIDE)
CK_INPLACE_SLOT_(nb_ifloor_divide, CK_OP_FLOOR_DIVIDE)
CK_INPLACE_SLOT_(nb_iremainder, CK_OP_REMAINDER)
CK_INPLACE_SLOT_(nb_ilshift, CK_OP_LEFT_SHIFT)
CK_INPLACE_SLOT_(nb_irshift, CK_OP_RIGHT_SHIFT)
CK_INPLACE_SLOT_(nb_iand, CK_OP_BITWISE_AND)
CK_INPLACE_SLOT_(nb_ior, CK_OP_BITWISE_OR)
CK_INPLACE_SLOT_(nb_ixor, CK_OP_BITWISE_XOR)
CK_UNARY_SLOT_(nb_negative, CK_OP_NEGATIVE)
CK_UNARY_SLOT_(nb_positive, CK_OP_POSITIVE)
CK_UNARY_SLOT_(nb_absolute, CK_OP_ABSOLUTE)
CK_UNARY_SLOT_(nb_invert, CK_OP_INVERT)

/* NumPy's fast path for the operator: a floating or complex array to the
 * Python number 2 is square(a), the same values and dtype as power's
 * (x * x is exact where pow rounds the same), at the cost of a multiply. */
static int power_is_square(PyObject *a, PyObject *b)
{
    if (!CkArray_Check(a)) return 0;
    ck_dtype t = CK_ARR(a)->dtype;
    if (!ck_dtype_is_float(t) && !ck_dtype_is_complex(t)) return 0;
    if (PyLong_CheckExact(b)) {
        int overflow;
        return PyLong_AsLongAndOverflow(b, &overflow) == 2 && !overflow;
    }
    return PyFloat_CheckExact(b) && PyFloat_AS_DOUBLE(b) == 2.0;
}

static PyObject *nb_power(PyObject *a, PyObject *b, PyObject *m)
{
    if (m != Py_None) Py_RETURN_NOTIMPLEMENTED;
    if (power_is_square(a, b)) return ck_py_apply(CK_OP_SQUARE, 1, &a, NULL, CK_DTYPE_INVALID, 0);
    PyObject *args[2] = {a, b};
    return ck_py_apply(CK_OP_POWER, 2, args, NULL, CK_DTYPE_INVALID, 1);
}

static PyObject *nb_ipower(PyObject *a, PyObject *b, PyObject *m)
{
    if (m != Py_None) Py_RETURN_NOTIMPLEMENTED;
    if (power_is_square(a, b)) return ck_py_apply(CK_OP_SQUARE, 1, &a, a, CK_DTYPE_INVALID, 0);
    PyObject *args[2] = {a, b};
    return ck_py_apply(CK_OP_POWER, 2, args, a, CK_DTYPE_INVALID, 1);
}

static PyObject *nb_divmod(PyObject *a, PyObject *b)
{
    PyObject *args[2] = {a, b};
    PyObject *q = ck_py_apply(CK_OP_FLOOR_DIVIDE, 2, args, NULL, CK_DTYPE_INVALID, 1);
    if (!q || q == Py_NotImplemented) return q;
    PyObject *r = ck_py_apply(CK_OP_REMAINDER, 2, args, NULL, CK_DTYPE_INVALID, 1);
    if (!r) { Py_DECREF(q); return NULL; }
    return Py_BuildValue("(NN)", q, r);
}

static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    /* two GPU arrays go straight to the core (src/python/linalg.c) */
    if (CkArray_Check(a) && CkArray_Check(b) && ck_array_device(CK_ARR(a)).type != CK_DEVICE_CPU &&
        ck_array_device(CK_ARR(b)).type != CK_DEVICE_CPU)
        return ck_py_matmul(a, b);
    /* the linear algebra layer (cudakit.linalg) installs matmul */
    PyObject *mod = PyImport_ImportModule("cudakit");
    if (!mod) return NULL;
    PyObject *f = PyObject_GetAttrString(mod, "matmul");
    Py_DECREF(mod);
    if (!f) {
        PyErr_Clear();
        PyErr_SetString(PyExc_NotImplementedError, "matmul (@) is not implemented yet");
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(f, a, b, NULL);
    Py_DECREF(f);
    return r;
}

/* a @= b writes into a (NumPy's matmul with out=a): the product must have
 * a's shape and cast to its dtype same_kind. */
static PyObject *nb_imatmul(PyObject *a, PyObject *b)
{
    PyObject *r = nb_matmul(a, b);
    if (!r || r == Py_NotImplemented || !CkArray_Check(a) || !CkArray_Check(r)) return r;
    const ck_array *x = CK_ARR(a), *p = CK_ARR(r);
    if (p->ndim != x->ndim || memcmp(p->shape, x->shape, (size_t)x->ndim * sizeof *x->shape)) {
        PyErr_Format(PyExc_ValueError, "matmul: the product's shape %s does not match the output operand's %s",
                     ck_shape_str(p->ndim, p->shape, 0), ck_shape_str(x->ndim, x->shape, 1));
        Py_DECREF(r);
        return NULL;
    }
    if (!ck_dtype_can_cast_same_kind(p->dtype, x->dtype)) {
        PyErr_Format(ck_py_exc(CK_PY_UFUNC_OUTPUT_CAST), "Cannot cast ufunc 'matmul' output from dtype('%s') to "
                     "dtype('%s') with casting rule 'same_kind'", ck_dtype_get_info(p->dtype)->name,
                     ck_dtype_get_info(x->dtype)->name);
        Py_DECREF(r);
        return NULL;
    }
    ck_status s = ck_array_assign(CK_ARR(a), p);
    Py_DECREF(r);
    if (s != CK_OK) return ck_py_raise(s);
    return Py_NewRef(a);
}

/* The one element of a size-1 array, on the host. */
static int single_element(PyObject *self, ck_scalar *s, const char *what)
{
    const ck_array *a = CK_ARR(self);
    if (a->size != 1) {
        if (what[0] == 'b')
            PyErr_SetString(PyExc_ValueError, a->size == 0
                ? "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not empty."
                : "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
        else
            PyErr_SetString(PyExc_TypeError, "only length-1 arrays can be converted to Python scalars");
        return -1;
    }
    if (ck_array_device(a).type == CK_DEVICE_CPU) {
        if (ck_py_refuse_host_read(a, "reading an array's value on the host (bool, int, float)") < 0) return -1;
        ck_scalar_load(s, a->dtype, a->data);
        return 0;
    }
    ck_array h;
    ck_status st = ck_array_to_device(&h, a, ck_device_cpu());
    if (st != CK_OK) return ck_py_raise_int(st);
    ck_scalar_load(s, h.dtype, h.data);
    ck_array_release(&h);
    return 0;
}

static int nb_bool(PyObject *self)
{
    ck_scalar s;
    if (single_element(self, &s, "bool") < 0) return -1;
    switch (ck_dtype_get_info(s.dtype)->kind) {
    case CK_KIND_BOOL: case CK_KIND_INT: return s.v.i != 0;
    case CK_KIND_UINT: return s.v.u != 0;
    case CK_KIND_FLOAT: return s.v.f != 0;
    default: return s.v.c.re != 0 || s.v.c.im != 0;
    }
}

static PyObject *scalar_py(const ck_scalar *s)
{
    switch (ck_dtype_get_info(s->dtype)->kind) {
    case CK_KIND_BOOL: return PyBool_FromLong((long)s->v.i);
    case CK_KIND_INT: return PyLong_FromLongLong(s->v.i);
    case CK_KIND_UINT: return PyLong_FromUnsignedLongLong(s->v.u);
    case CK_KIND_FLOAT: return PyFloat_FromDouble(s->v.f);
    default: return PyComplex_FromDoubles(s->v.c.re, s->v.c.im);
    }
}

/* int(a) and float(a) of a one-element array: its value as a Python
 * number through convert, refused with Python's own message when complex. */
static PyObject *real_number(PyObject *self, const char *what, const char *complex_msg,
                             PyObject *(*convert)(PyObject *))
{
    ck_scalar s;
    if (single_element(self, &s, what) < 0) return NULL;
    PyObject *p = scalar_py(&s);
    if (!p) return NULL;
    if (ck_dtype_is_complex(s.dtype)) {
        Py_DECREF(p);
        PyErr_SetString(PyExc_TypeError, complex_msg);
        return NULL;
    }
    PyObject *r = convert(p);
    Py_DECREF(p);
    return r;
}

static PyObject *nb_int(PyObject *self)
{
    return real_number(self, "int", "int() argument must be a string, a bytes-like object or a real number, not 'complex'",
                       PyNumber_Long);
}

static PyObject *nb_float(PyObject *self)
{
    return real_number(self, "float", "float() argument must be a string or a real number, not 'complex'",
                       PyNumber_Float);
}

static PyObject *nb_index(PyObject *self)
{
    const ck_array *a = CK_ARR(self);
    if (a->ndim != 0 || !(ck_dtype_is_integer(a->dtype) || a->dtype == CK_BOOL) || a->dtype == CK_BOOL) {
        PyErr_SetString(PyExc_TypeError, "only integer scalar arrays can be converted to a scalar index");
        return NULL;
    }
    return nb_int(self);
}

static PyObject *m_complex(PyObject *self, PyObject *unused)
{
    (void)unused;
    ck_scalar s;
    if (single_element(self, &s, "complex") < 0) return NULL;
    PyObject *p = scalar_py(&s);
    if (!p) return NULL;
    if (PyComplex_Check(p)) return p;
    double v = PyFloat_Check(p) ? PyFloat_AsDouble(p) : PyLong_AsDouble(p);
    Py_DECREF(p);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    return PyComplex_FromDoubles(v, 0.0);
}

/* 0-d arrays stand for the scalars NumPy returns (x.mean(), x[0]), so they
 * format and round as NumPy's scalars do: f"{x.mean():.2f}", round(x, 2).
 * Other arrays format as str() with an empty spec only, as NumPy's. */
static PyObject *m_format(PyObject *self, PyObject *spec)
{
    if (!PyUnicode_Check(spec)) {
        PyErr_Format(PyExc_TypeError, "__format__() argument must be str, not %.50s", Py_TYPE(spec)->tp_name);
        return NULL;
    }
    if (CK_ARR(self)->ndim == 0) {
        ck_scalar s;
        if (single_element(self, &s, "format") < 0) return NULL;
        PyObject *p = scalar_py(&s);
        if (!p) return NULL;
        PyObject *r = PyObject_Format(p, spec);
        Py_DECREF(p);
        return r;
    }
    if (PyUnicode_GET_LENGTH(spec) == 0) return PyObject_Str(self);
    PyErr_SetString(PyExc_TypeError, "unsupported format string passed to cudakit.ndarray.__format__");
    return NULL;
}

static PyObject *call_module(const char *name, PyObject *self, PyObject *args, PyObject *kw);

/* round(x) of a 0-d array is a Python int and round(x, n) a 0-d array of
 * x's dtype, as for NumPy's scalars (which refuse bool and complex);
 * round(a, n) of a larger array is cudakit.round(a, n). */
static PyObject *m_round(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *nd = Py_None;
    static char *kwlist[] = {"ndigits", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:__round__", kwlist, &nd)) return NULL;
    const ck_array *a = CK_ARR(self);
    if (a->ndim == 0 && (a->dtype == CK_BOOL || ck_dtype_is_complex(a->dtype))) {
        PyErr_Format(PyExc_TypeError, "round() of a %s scalar is not defined (nor for NumPy's)",
                     ck_dtype_get_info(a->dtype)->name);
        return NULL;
    }
    if (nd == Py_None) {
        if (a->ndim != 0) {
            PyErr_SetString(PyExc_TypeError, "round() of an array with dimensions needs ndigits "
                                             "(round(a, 0) or cudakit.round(a) rounds each element)");
            return NULL;
        }
        ck_scalar s;
        if (single_element(self, &s, "round") < 0) return NULL;
        PyObject *p = scalar_py(&s);
        if (!p) return NULL;
        PyObject *r = PyObject_CallMethod(p, "__round__", NULL);
        Py_DECREF(p);
        return r;
    }
    PyObject *t = PyTuple_Pack(1, nd);
    if (!t) return NULL;
    PyObject *r = call_module("round", self, t, NULL);
    Py_DECREF(t);
    return r;
}

static PyNumberMethods array_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_subtract,
    .nb_multiply = nb_multiply,
    .nb_remainder = nb_remainder,
    .nb_divmod = nb_divmod,
    .nb_power = nb_power,
    .nb_negative = nb_negative,
    .nb_positive = nb_positive,
    .nb_absolute = nb_absolute,
    .nb_bool = nb_bool,
    .nb_invert = nb_invert,
    .nb_lshift = nb_lshift,
    .nb_rshift = nb_rshift,
    .nb_and = nb_and,
    .nb_xor = nb_xor,
    .nb_or = nb_or,
    .nb_int = nb_int,
    .nb_float = nb_float,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isubtract,
    .nb_inplace_multiply = nb_imultiply,
    .nb_inplace_remainder = nb_iremainder,
    .nb_inplace_power = nb_ipower,
    .nb_inplace_lshift = nb_ilshift,
    .nb_inplace_rshift = nb_irshift,
    .nb_inplace_and = nb_iand,
    .nb_inplace_xor = nb_ixor,
    .nb_inplace_or = nb_ior,
    .nb_floor_divide = nb_floor_divide,
    .nb_true_divide = nb_true_divide,
    .nb_inplace_floor_divide = nb_ifloor_divide,
    .nb_inplace_true_divide = nb_itrue_divide,
    .nb_index = nb_index,
    .nb_matrix_multiply = nb_matmul,
    .nb_inplace_matrix_multiply = nb_imatmul,
};

static PyObject *array_richcompare(PyObject *a, PyObject *b, int op)
{
    static const ck_op ops[6] = {
        [Py_LT] = CK_OP_LESS, [Py_LE] = CK_OP_LESS_EQUAL, [Py_EQ] = CK_OP_EQUAL,
        [Py_NE] = CK_OP_NOT_EQUAL, [Py_GT] = CK_OP_GREATER, [Py_GE] = CK_OP_GREATER_EQUAL,
    };
    PyObject *args[2] = {a, b};
    PyObject *r = ck_py_apply(ops[op], 2, args, NULL, CK_DTYPE_INVALID, 1);
    if (!r && (op == Py_EQ || op == Py_NE) && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* == between incomparable things is False, as in NumPy */
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    return r;
}

/* ------------------------------------------------------------ sequence */

static Py_ssize_t array_length(PyObject *self)
{
    const ck_array *a = CK_ARR(self);
    if (a->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return (Py_ssize_t)a->shape[0];
}

static PyObject *array_item(PyObject *self, Py_ssize_t i)
{
    PyObject *k = PyLong_FromSsize_t(i);
    if (!k) return NULL;
    PyObject *r = ck_py_getitem(self, k);
    Py_DECREF(k);
    return r;
}

/* Iterating a 1-d array yields NumPy's scalars, as NumPy's does (hashable,
 * usable as dict keys and in sets), read from one copy to the host for a
 * GPU array rather than one transfer an element; larger arrays yield
 * their rows as views. */
static PyObject *array_iter(PyObject *self)
{
    if (CK_ARR(self)->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
        return NULL;
    }
    if (CK_ARR(self)->ndim == 1) {
        PyObject *h = ck_py_to_numpy(self, NULL, 0);
        if (!h) return NULL;
        PyObject *it = PyObject_GetIter(h);
        Py_DECREF(h);
        return it;
    }
    return PySeqIter_New(self);
}

static int array_contains(PyObject *self, PyObject *v)
{
    PyObject *args[2] = {self, v};
    PyObject *eq = ck_py_apply(CK_OP_EQUAL, 2, args, NULL, CK_DTYPE_INVALID, 0);
    if (!eq) return -1;
    PyObject *mod = PyImport_ImportModule("cudakit");
    if (!mod) { Py_DECREF(eq); return -1; }
    PyObject *any = PyObject_CallMethod(mod, "any", "O", eq);
    Py_DECREF(mod);
    Py_DECREF(eq);
    if (!any) return -1;
    int r = PyObject_IsTrue(any);
    Py_DECREF(any);
    return r;
}

static PySequenceMethods array_as_sequence = {
    .sq_length = array_length,
    .sq_item = array_item,
    .sq_contains = array_contains,
};

static PyMappingMethods array_as_mapping = {
    .mp_length = array_length,
    .mp_subscript = ck_py_getitem,
    .mp_ass_subscript = ck_py_setitem,
};

static PyObject *array_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    /* ndarray(shape, dtype=float64, device=None): uninitialised, like np.ndarray */
    PyObject *shape, *dt = Py_None, *device = Py_None;
    static char *kwlist[] = {"shape", "dtype", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kwlist, &shape, &dt, &device)) return NULL;
    int nd;
    int64_t sh[CK_MAXDIMS];
    ck_dtype t;
    ck_device dev;
    int has;
    if (ck_py_shape_from_obj(shape, &nd, sh) < 0 || ck_py_dtype_from_obj(dt, CK_FLOAT64, &t) < 0 ||
        ck_py_device_from_obj(device, &dev, &has) < 0)
        return NULL;
    ck_array a;
    ck_status s = ck_array_empty(&a, nd, sh, t, has ? dev : ck_py_default_device());
    if (s != CK_OK) return ck_py_raise(s);
    if (type == &CkArray_Type) return ck_py_wrap(&a, NULL);
    /* a subclass's instance (ck.nn.Parameter's kind) owns the memory itself */
    CkArrayObject *o = (CkArrayObject *)type->tp_alloc(type, 0);
    if (!o) {
        ck_array_release(&a);
        return NULL;
    }
    o->arr = a;
    return (PyObject *)o;
}

/* methods gathered from every file at module init */
static PyMethodDef *array_all_methods;

int ck_py_array_type_init(void)
{
    size_t n = 0, k = 0;
    const PyMethodDef *lists[] = {array_methods, ck_py_interop_methods, ck_py_dlpack_methods, ck_py_reduce_methods, ck_py_shape_methods,
                                  ck_py_autograd_methods};
    const size_t nlists = sizeof lists / sizeof *lists;
    for (size_t l = 0; l < nlists; l++)
        for (const PyMethodDef *m = lists[l]; m->ml_name; m++) n++;
    static PyMethodDef extra[] = {
        CK_DEF_NOARGS(__complex__, m_complex, "($self, /)", "complex(x) of an array of one element."),
        CK_DEF_O(__format__, m_format, "($self, format_spec, /)", "Format a 0-d array as its scalar (f\"{x.mean():.2f}\")."),
        CK_DEF_KW(__round__, m_round, "($self, /, ndigits=None)",
                  "round(x) of a 0-d array: a Python int; round(x, n): an array of x's dtype."),
        {NULL, NULL, 0, NULL},
    };
    const size_t nextra = sizeof extra / sizeof *extra - 1;
    array_all_methods = PyMem_Calloc(n + nextra + 1, sizeof(PyMethodDef));
    if (!array_all_methods) return -1;
    for (size_t l = 0; l < nlists; l++)
        for (const PyMethodDef *m = lists[l]; m->ml_name; m++) array_all_methods[k++] = *m;
    for (size_t e = 0; e < nextra; e++) array_all_methods[k++] = extra[e];
    CkArray_Type.tp_methods = array_all_methods;

    /* properties: ours, then interop's */
    size_t g = 0, gi = 0;
    for (const PyGetSetDef *p = array_getset; p->name; p++) g++;
    for (const PyGetSetDef *p = ck_py_interop_getset; p->name; p++) g++;
    for (const PyGetSetDef *p = ck_py_autograd_getset; p->name; p++) g++;
    PyGetSetDef *all = PyMem_Calloc(g + 1, sizeof(PyGetSetDef));
    if (!all) return -1;
    for (const PyGetSetDef *p = array_getset; p->name; p++) all[gi++] = *p;
    for (const PyGetSetDef *p = ck_py_interop_getset; p->name; p++) all[gi++] = *p;
    for (const PyGetSetDef *p = ck_py_autograd_getset; p->name; p++) all[gi++] = *p;
    CkArray_Type.tp_getset = all;
    if (PyType_Ready(&CkFlags_Type) < 0) return -1;
    return PyType_Ready(&CkArray_Type);
}

PyTypeObject CkArray_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.ndarray",
    .tp_basicsize = sizeof(CkArrayObject),
    .tp_dealloc = array_dealloc,
    .tp_repr = ck_py_repr,
    .tp_str = ck_py_str,
    .tp_as_number = &array_as_number,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &array_as_mapping,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_as_buffer = &ck_py_buffer_procs,
    .tp_richcompare = array_richcompare,
    .tp_weaklistoffset = offsetof(CkArrayObject, weakreflist),
    .tp_iter = array_iter,
    .tp_new = array_new,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "ndarray(shape, dtype=None, device=None)\n--\n\n"
              "An n-dimensional array on a device (the CPU or a GPU), NumPy compatible; made uninitialised by the "
              "constructor, as NumPy's (dtype None: float64).",
};
