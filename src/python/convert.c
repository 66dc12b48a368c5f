/* Python objects -> arrays, operands, shapes and axes; elements -> Python. */
#include "ck_python.h"

#include <limits.h>

#include <string.h>

PyObject *ck_py_numpy(void)
{
    static PyObject *np;
    if (!np) np = PyImport_ImportModule("numpy");
    return np;
}

PyObject *ck_py_shape_tuple(int ndim, const int64_t *v)
{
    PyObject *t = PyTuple_New(ndim);
    if (!t) return NULL;
    for (int i = 0; i < ndim; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* One extent: NumPy's ValueError for one no index holds. */
static int shape_item(PyObject *x, int64_t *v)
{
    Py_ssize_t n = PyNumber_AsSsize_t(x, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "Maximum allowed dimension exceeded");
        }
        return -1;
    }
    *v = n;
    return 0;
}

int ck_py_shape_from_obj(PyObject *obj, int *ndim, int64_t *shape)
{
    if (PyBool_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, obj == Py_True ? "expected a sequence of integers or a single integer, got 'True'"
                                                         : "expected a sequence of integers or a single integer, got 'False'");
        return -1;
    }
    if (PyLong_Check(obj) || (!PySequence_Check(obj) && PyIndex_Check(obj))) {
        if (shape_item(obj, &shape[0]) < 0) return -1;
        *ndim = 1;
        return 0;
    }
    PyObject *seq = PySequence_Fast(obj, "expected a sequence of integers or an integer for the shape");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > CK_MAXDIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "maximum supported dimension for an ndarray is %d, found %zd", CK_MAXDIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyIndex_Check(x) || PyBool_Check(x)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer", Py_TYPE(x)->tp_name);
            return -1;
        }
        if (shape_item(x, &shape[i]) < 0) { Py_DECREF(seq); return -1; }
    }
    *ndim = (int)n;
    Py_DECREF(seq);
    return 0;
}

/* One axis: 0, or -1 with TypeError for what is not an integer (a bool
 * too unless allow_bool), NumPy's OverflowError/ValueError for a value no
 * C int holds; INT_MIN (the C API's CK_AXIS_FLAT) is out of bounds for
 * every array, so an AxisError (naming ndim when >= 0). */
static int axis_conv(PyObject *obj, int allow_bool, int ndim, int *axis)
{
    if ((PyBool_Check(obj) && !allow_bool) || !PyIndex_Check(obj)) {
        if (PyBool_Check(obj)) PyErr_SetString(PyExc_TypeError, "an integer is required for the axis");
        else PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    PyObject *i = PyNumber_Index(obj);
    if (!i) return -1;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v < INT_MIN || v > INT_MAX) {
        /* NumPy's C functions say ValueError, its Python ones OverflowError */
        PyErr_SetString(ck_py_exc(CK_PY_C_INT_OVERFLOW), "integer won't fit into a C int");
        return -1;
    }
    if (v == INT_MIN) {
        if (ndim >= 0)
            PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "axis %d is out of bounds for array of dimension %d", INT_MIN, ndim);
        else
            PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "axis %d is out of bounds", INT_MIN);
        return -1;
    }
    *axis = (int)v;
    return 0;
}

int ck_py_axis_int(PyObject *obj, int *axis)
{
    return axis_conv(obj, 0, -1, axis);
}

int ck_py_axis_index(PyObject *obj, int *axis)
{
    return axis_conv(obj, 1, -1, axis);
}

int ck_py_axis_or_none(PyObject *obj, int *axis, int *none)
{
    *none = obj == NULL || obj == Py_None;
    *axis = 0;
    if (*none) return 0;
    return ck_py_axis_int(obj, axis);
}

int ck_py_axis_index_or_none(PyObject *obj, int *axis, int *none)
{
    *none = obj == NULL || obj == Py_None;
    *axis = 0;
    if (*none) return 0;
    return ck_py_axis_index(obj, axis);
}

int ck_py_axis_mask(PyObject *axis, int ndim, int flags, uint64_t *mask)
{
    if (!axis || axis == Py_None) {
        *mask = ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << ndim) - 1);
        return 0;
    }
    *mask = 0;
    PyObject *seq = NULL;
    Py_ssize_t n = 1;
    if (PyTuple_Check(axis) || (PyList_Check(axis) && (flags & CK_PY_AXES_LIST))) {
        seq = PySequence_Fast(axis, "axis");
        if (!seq) return -1;
        n = PySequence_Fast_GET_SIZE(seq);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = seq ? PySequence_Fast_GET_ITEM(seq, i) : axis;
        int ax;
        if (axis_conv(x, flags & CK_PY_AXES_BOOL, ndim, &ax) < 0) { Py_XDECREF(seq); return -1; }
        int given = ax;
        if (ck_axis_normalize(&ax, ndim) != CK_OK) {
            Py_XDECREF(seq);
            PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "axis %d is out of bounds for array of dimension %d", given, ndim);
            return -1;
        }
        if (*mask & ((uint64_t)1 << ax)) {
            Py_XDECREF(seq);
            PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
            return -1;
        }
        *mask |= (uint64_t)1 << ax;
    }
    Py_XDECREF(seq);
    return 0;
}

PyObject *ck_py_scalar_to_py(const void *ptr, ck_dtype t)
{
    ck_scalar s;
    ck_scalar_load(&s, t, ptr);
    switch (ck_dtype_get_info(t)->kind) {
    case CK_KIND_BOOL: return PyBool_FromLong((long)s.v.i);
    case CK_KIND_INT: return PyLong_FromLongLong(s.v.i);
    case CK_KIND_UINT: return PyLong_FromUnsignedLongLong(s.v.u);
    case CK_KIND_FLOAT: return PyFloat_FromDouble(s.v.f);
    default: return PyComplex_FromDoubles(s.v.c.re, s.v.c.im);
    }
}

/* NumPy's scalar types are named "numpy.float32" etc.; some subclass
 * Python's int, float or complex but are strongly typed all the same. */
static int is_numpy_scalar(PyObject *obj)
{
    return strncmp(Py_TYPE(obj)->tp_name, "numpy.", 6) == 0;
}

/* NumPy's scalar types seen so far and their dtypes.  A NumPy scalar
 * object is PyObject_HEAD and then its value (NumPy's arrayscalars.h:
 * PyFloatScalarObject and kin); a type joins the table only after a value
 * read there matched the one its buffer gives, so a later scalar of the
 * type is read without a buffer (which costs microseconds: kernel
 * launches and x + np.float32(1) pass them by the million). */
static struct { PyTypeObject *type; ck_dtype dtype; } np_types_[24];
static int n_np_types_;

static int np_type_fast(PyTypeObject *t, ck_dtype *d)
{
    for (int i = 0; i < n_np_types_; i++)
        if (np_types_[i].type == t) {
            *d = np_types_[i].dtype;
            return 1;
        }
    return 0;
}

static void np_type_learn(PyObject *obj, ck_dtype d, const void *buf)
{
    if (n_np_types_ >= (int)(sizeof np_types_ / sizeof *np_types_)) return;
    size_t n = ck_dtype_get_info(d)->itemsize;
    if (Py_TYPE(obj)->tp_basicsize < (Py_ssize_t)(sizeof(PyObject) + n)) return;
    if (memcmp((const char *)obj + sizeof(PyObject), buf, n) != 0) return;
    np_types_[n_np_types_].type = (PyTypeObject *)Py_NewRef((PyObject *)Py_TYPE(obj));
    np_types_[n_np_types_].dtype = d;
    n_np_types_++;
}

int ck_py_scalar_from_obj(PyObject *obj, ck_scalar *s, int *weak)
{
    *weak = 1;
    ck_dtype fast;
    if (np_type_fast(Py_TYPE(obj), &fast)) {
        ck_scalar_load(s, fast, (const char *)obj + sizeof(PyObject));
        *weak = 0;
        return 0;
    }
    if (PyBool_Check(obj)) {
        s->dtype = CK_BOOL;
        s->v.i = obj == Py_True;
        return 0;
    }
    if (PyLong_CheckExact(obj) || (PyLong_Check(obj) && !is_numpy_scalar(obj))) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (!overflow) {
            s->dtype = CK_INT64;
            s->v.i = v;
            return 0;
        }
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(obj);
            if (!(u == (unsigned long long)-1 && PyErr_Occurred())) {
                s->dtype = CK_UINT64;
                s->v.u = u;
                return 0;
            }
            PyErr_Clear();
        }
        PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for int64", obj);
        return -1;
    }
    if (PyFloat_CheckExact(obj)) {
        s->dtype = CK_FLOAT64;
        s->v.f = PyFloat_AS_DOUBLE(obj);
        return 0;
    }
    if (PyComplex_CheckExact(obj)) {
        s->dtype = CK_COMPLEX128;
        s->v.c.re = PyComplex_RealAsDouble(obj);
        s->v.c.im = PyComplex_ImagAsDouble(obj);
        return 0;
    }
    /* NumPy scalars are strongly typed (NEP 50) */
    if (is_numpy_scalar(obj) && PyObject_CheckBuffer(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_RECORDS_RO) < 0) { PyErr_Clear(); return 1; }
        if (view.ndim != 0) { PyBuffer_Release(&view); return 1; }
        ck_dtype t;
        if (ck_py_dtype_from_obj((PyObject *)Py_TYPE(obj), CK_DTYPE_INVALID, &t) < 0) {
            PyBuffer_Release(&view);
            PyErr_Clear();
            return 1;
        }
        ck_scalar_load(s, t, view.buf);
        if (view.itemsize == (Py_ssize_t)ck_dtype_get_info(t)->itemsize) np_type_learn(obj, t, view.buf);
        PyBuffer_Release(&view);
        *weak = 0;
        return 0;
    }
    if (PyFloat_Check(obj)) {   /* other float subclasses behave as Python floats */
        s->dtype = CK_FLOAT64;
        s->v.f = PyFloat_AsDouble(obj);
        return 0;
    }
    if (PyComplex_Check(obj)) {
        s->dtype = CK_COMPLEX128;
        s->v.c.re = PyComplex_RealAsDouble(obj);
        s->v.c.im = PyComplex_ImagAsDouble(obj);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ sequences */

typedef struct seq_info {
    int ndim;
    int64_t shape[CK_MAXDIMS];
    int have_type;
    ck_dtype type;
    int needs_numpy;   /* leaves that are arrays: let NumPy assemble them */
} seq_info;

static int seq_is_container(PyObject *o)
{
    return PyList_Check(o) || PyTuple_Check(o);
}

/* The shape from the first elements at each depth. */
static int seq_discover_shape(PyObject *obj, seq_info *si)
{
    si->ndim = 0;
    PyObject *cur = obj;
    while (seq_is_container(cur)) {
        if (si->ndim >= CK_MAXDIMS) {
            PyErr_Format(PyExc_ValueError, "maximum supported dimension for an ndarray is %d", CK_MAXDIMS);
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(cur);
        si->shape[si->ndim++] = n;
        if (n == 0) break;
        cur = PySequence_Fast_GET_ITEM(cur, 0);
    }
    /* an array among the first elements gives its dimensions, as in
     * NumPy ([a, [1, 2]] with a of shape (2,) is 2 by 2) */
    if (CkArray_Check(cur) && si->ndim > 0) {
        const ck_array *a = CK_ARR(cur);
        if (si->ndim + a->ndim > CK_MAXDIMS) {
            PyErr_Format(PyExc_ValueError, "maximum supported dimension for an ndarray is %d", CK_MAXDIMS);
            return -1;
        }
        for (int d = 0; d < a->ndim; d++) si->shape[si->ndim++] = a->shape[d];
    }
    return 0;
}

static int inhomogeneous(int depth, const seq_info *si)
{
    PyErr_Format(PyExc_ValueError,
                 "setting an array element with a sequence. The requested array has an inhomogeneous "
                 "shape after %d dimensions. The detected shape was %s + inhomogeneous part.",
                 depth, ck_shape_str(depth, si->shape, 0));
    return -1;
}

int ck_py_big_int_as_float(PyObject *obj, ck_scalar *s)
{
    if (!PyLong_Check(obj) || !PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
    PyErr_Clear();
    double d = PyLong_AsDouble(obj);   /* beyond float64 too: OverflowError, as NumPy's */
    if (d == -1.0 && PyErr_Occurred()) return -1;
    s->dtype = CK_FLOAT64;
    s->v.f = d;
    return 0;
}

static int leaf_type(PyObject *o, ck_dtype *t)
{
    ck_scalar s;
    int weak;
    int r = ck_py_scalar_from_obj(o, &s, &weak);
    if (r < 0) return -1;
    if (r == 0) { *t = s.dtype; return 0; }
    if (CkArray_Check(o) && CK_ARR(o)->ndim == 0) { *t = CK_ARR(o)->dtype; return 0; }
    return 1;
}

/* Check rectangularity and find the dtype. */
static int seq_scan(PyObject *obj, int depth, seq_info *si)
{
    if (depth == si->ndim) {
        if (seq_is_container(obj)) return inhomogeneous(depth, si);
        ck_dtype t;
        int r = leaf_type(obj, &t);
        if (r < 0) return -1;
        if (r > 0) {
            if (PyUnicode_Check(obj) || PyBytes_Check(obj) || obj == Py_None) {
                PyErr_Format(PyExc_TypeError, "cudakit arrays hold numbers only, not %.50s", Py_TYPE(obj)->tp_name);
                return -1;
            }
            si->needs_numpy = 1;
            return 0;
        }
        si->type = si->have_type ? ck_dtype_promote(si->type, t) : t;
        si->have_type = 1;
        return 0;
    }
    if (!seq_is_container(obj) || PySequence_Fast_GET_SIZE(obj) != si->shape[depth]) {
        if (!seq_is_container(obj) && depth > 0 && !PyUnicode_Check(obj)) {
            ck_dtype t;
            int r = leaf_type(obj, &t);
            if (r < 0) return -1;
            if (r > 0) { si->needs_numpy = 1; return 0; }
        }
        return inhomogeneous(depth, si);
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < n; i++)
        if (seq_scan(PySequence_Fast_GET_ITEM(obj, i), depth + 1, si) < 0) return -1;
    return 0;
}

static int seq_fill(PyObject *obj, int depth, const seq_info *si, ck_dtype t, char **p, int isz, int check)
{
    if (depth == si->ndim) {
        ck_scalar s;
        int weak;
        int r = ck_py_scalar_from_obj(obj, &s, &weak);
        if (r < 0) return -1;
        /* a dtype that was asked for: Python numbers must convert to it */
        if (r == 0 && weak && check && ck_py_check_weak_scalar(&s, t) < 0) return -1;
        if (r > 0) {   /* a 0-d array */
            ck_array *a = CK_ARR(obj), host;
            const ck_array *src = a;
            if (ck_array_device(a).type != CK_DEVICE_CPU) {
                ck_status st = ck_array_to_device(&host, a, ck_device_cpu());
                if (st != CK_OK) return ck_py_raise_int(st);
                src = &host;
            }
            ck_scalar_load(&s, src->dtype, src->data);
            if (src != a) ck_array_release(&host);
        }
        ck_scalar_store(&s, t, *p);
        *p += isz;
        return 0;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < n; i++)
        if (seq_fill(PySequence_Fast_GET_ITEM(obj, i), depth + 1, si, t, p, isz, check) < 0) return -1;
    return 0;
}

static PyObject *from_sequence(PyObject *obj, ck_dtype dtype, ck_device dev, int *fallback)
{
    seq_info si;
    memset(&si, 0, sizeof si);
    *fallback = 0;
    if (seq_discover_shape(obj, &si) < 0) return NULL;
    if (seq_scan(obj, 0, &si) < 0) return NULL;
    if (si.needs_numpy) { *fallback = 1; return NULL; }
    ck_dtype t = dtype != CK_DTYPE_INVALID ? dtype : si.have_type ? si.type : CK_FLOAT64;
    ck_array a;
    ck_status s = ck_array_empty(&a, si.ndim, si.shape, t, ck_device_cpu());
    if (s != CK_OK) return ck_py_raise(s);
    char *p = a.data;
    if (seq_fill(obj, 0, &si, t, &p, ck_dtype_get_info(t)->itemsize, dtype != CK_DTYPE_INVALID) < 0) {
        ck_array_release(&a);
        return NULL;
    }
    if (dev.type != CK_DEVICE_CPU) {
        ck_array moved;
        s = ck_array_to_device(&moved, &a, dev);
        ck_array_release(&a);
        if (s != CK_OK) return ck_py_raise(s);
        a = moved;
    }
    return ck_py_wrap(&a, NULL);
}

/* ------------------------------------------------------------ asarray */

/* obj's nested lists with the arrays of other devices copied to the host,
 * for NumPy to assemble ([a, [1, 2, 3]] with a on a GPU) (new reference). */
static PyObject *host_leaves(PyObject *obj)
{
    if (CkArray_Check(obj) && ck_array_device(CK_ARR(obj)).type != CK_DEVICE_CPU) {
        ck_array host;
        ck_status st = ck_array_to_device(&host, CK_ARR(obj), ck_device_cpu());
        if (st != CK_OK) return ck_py_raise(st);
        return ck_py_wrap(&host, NULL);
    }
    if (!seq_is_container(obj)) return Py_NewRef(obj);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *x = host_leaves(PySequence_Fast_GET_ITEM(obj, i));
        if (!x) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, x);
    }
    return out;
}

/* An array object converted to dtype / device as asked (new reference). */
static PyObject *adjust(PyObject *arr, ck_dtype dtype, int copy, int has_dev, ck_device dev, int fresh)
{
    ck_array *a = CK_ARR(arr);
    int need_type = dtype != CK_DTYPE_INVALID && dtype != a->dtype;
    int need_dev = has_dev && !ck_device_equal(dev, ck_array_device(a));
    if (!need_type && !need_dev && (copy != 1 || fresh)) return Py_NewRef(arr);
    if (copy == 0 && (need_type || need_dev)) {
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as requested.");
        return NULL;
    }
    ck_array out;
    ck_status s;
    if (need_dev) {
        ck_array tmp;
        const ck_array *src = a;
        if (need_type) {
            s = ck_array_astype(&tmp, a, dtype, 0);
            if (s != CK_OK) return ck_py_raise(s);
            src = &tmp;
        }
        s = ck_array_to_device(&out, src, dev);
        if (src == &tmp) ck_array_release(&tmp);
    } else {
        s = ck_array_astype(&out, a, need_type ? dtype : a->dtype, 0);
    }
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&out, NULL);
}

/* Numba device arrays and others that speak only __cuda_array_interface__:
 * the memory is shared; the exporter object is kept alive as the base. */
static void cai_release(void *ctx)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

static PyObject *from_cuda_array_interface(PyObject *obj)
{
    PyObject *d = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (!d) return NULL;
    PyObject *res = NULL;
    PyObject *shape = PyDict_GetItemString(d, "shape"), *typestr = PyDict_GetItemString(d, "typestr");
    PyObject *data = PyDict_GetItemString(d, "data"), *strides = PyDict_GetItemString(d, "strides");
    ck_array a;
    memset(&a, 0, sizeof a);
    ck_dtype t;
    if (!shape || !typestr || !data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_SetString(PyExc_TypeError, "malformed __cuda_array_interface__");
        goto done;
    }
    if (ck_py_dtype_from_obj(typestr, CK_DTYPE_INVALID, &t) < 0) goto done;
    if (ck_py_shape_from_obj(shape, &a.ndim, a.shape) < 0) goto done;
    a.dtype = t;
    int64_t isz = ck_dtype_get_info(t)->itemsize;
    if (strides && strides != Py_None) {
        int nd;
        if (ck_py_shape_from_obj(strides, &nd, a.strides) < 0) goto done;
    } else {
        ck_strides_c(a.ndim, a.shape, isz, a.strides);
    }
    unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred()) goto done;
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    ck_device dev = {CK_DEVICE_CUDA, 0};
    if (ck_device_check(dev) != CK_OK) { ck_py_raise(ck_error_status()); goto done; }
    int64_t lo, hi;
    ck_layout_extent(a.ndim, a.shape, a.strides, isz, &lo, &hi);
    Py_INCREF(obj);
    a.buf = ck_buffer_wrap(dev, (char *)(uintptr_t)ptr + lo, (size_t)(hi - lo), ro == 1, cai_release, obj);
    if (!a.buf) { Py_DECREF(obj); ck_py_raise(ck_error_status()); goto done; }
    a.data = (char *)(uintptr_t)ptr;
    a.flags = ro == 1 ? 0 : CK_ARRAY_WRITEABLE;
    ck_array_update_flags(&a);
    res = ck_py_wrap(&a, obj);
done:
    Py_DECREF(d);
    return res;
}

/* A NumPy array or scalar of a kind cudakit has not (datetime, timedelta,
 * strings, objects, structured): TypeError naming its dtype, before its
 * bytes can be read as something else (a datetime64 scalar exports them
 * as uint8).  0 when obj is none of those. */
static int refuse_numpy_kind(PyObject *obj)
{
    if (!is_numpy_scalar(obj)) return 0;
    PyObject *d = PyObject_GetAttrString(obj, "dtype");
    if (!d) { PyErr_Clear(); return 0; }
    PyObject *k = PyObject_GetAttrString(d, "kind");
    const char *kc = k && PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
    int bad = kc && !strchr("biufc", kc[0]);
    if (bad)
        PyErr_Format(PyExc_TypeError, "cudakit arrays hold numbers only, not %.100s of dtype %R",
                     Py_TYPE(obj)->tp_name, d);
    else if (!kc)
        PyErr_Clear();
    Py_XDECREF(k);
    Py_DECREF(d);
    return bad ? -1 : 0;
}

PyObject *ck_py_asarray(PyObject *obj, ck_dtype dtype, int copy, int has_dev, ck_device dev)
{
    if (CkArray_Check(obj)) return adjust(obj, dtype, copy, has_dev, dev, 0);
    if (refuse_numpy_kind(obj) < 0) return NULL;
    ck_device target = has_dev ? dev : ck_py_default_device();

    ck_scalar sc;
    int weak;
    int r = ck_py_scalar_from_obj(obj, &sc, &weak);
    if (r < 0) {
        if (!(dtype != CK_DTYPE_INVALID && ck_dtype_is_inexact(dtype) && ck_py_big_int_as_float(obj, &sc) == 0))
            return NULL;
        r = 0;
    }
    if (r == 0 || seq_is_container(obj)) {
        /* Python numbers and sequences are always copied */
        if (copy == 0) {
            PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as requested.");
            return NULL;
        }
    }
    if (r == 0) {
        ck_dtype t = dtype != CK_DTYPE_INVALID ? dtype : sc.dtype;
        if (weak && dtype != CK_DTYPE_INVALID && ck_py_check_weak_scalar(&sc, t) < 0) return NULL;
        ck_array a;
        ck_status s = ck_full(&a, 0, NULL, t, &sc, target);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&a, NULL);
    }
    if (seq_is_container(obj)) {
        PyObject *fast = PySequence_Fast(obj, "");
        if (!fast) return NULL;
        int fallback = 0;
        PyObject *res = PyList_Check(obj) || PyTuple_Check(obj) ? from_sequence(obj, dtype, target, &fallback) : NULL;
        Py_DECREF(fast);
        if (res || !fallback) return res;
        /* nested arrays inside lists: NumPy assembles them (from host
         * copies of GPU arrays) */
        PyObject *np = ck_py_numpy();
        if (!np) return NULL;
        PyObject *hosted = host_leaves(obj);
        if (!hosted) return NULL;
        PyObject *conv = PyObject_CallMethod(np, "asarray", "O", hosted);
        Py_DECREF(hosted);
        if (!conv) return NULL;
        res = ck_py_asarray(conv, dtype, 1, 1, target);
        Py_DECREF(conv);
        return res;
    }
    /* GPU arrays of other libraries first: some (CuPy) also export a
     * buffer protocol that only raises */
    if (PyObject_HasAttrString(obj, "__cuda_array_interface__")) {
        PyObject *w = from_cuda_array_interface(obj);
        if (!w) return NULL;
        PyObject *res = adjust(w, dtype, copy, has_dev, dev, 0);
        Py_DECREF(w);
        return res;
    }
    if (PyObject_CheckBuffer(obj) && !PyBytes_Check(obj) && !PyUnicode_Check(obj)) {
        PyObject *w = ck_py_from_buffer(obj, 0);
        int fresh = 0;
        if (!w && copy != 0 &&
            (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_TypeError))) {
            /* Byte-swapped or unaligned data cannot be wrapped: NumPy makes
             * a native, aligned copy (as numpy.asarray would for us); if it
             * cannot, the first error stands. */
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            PyObject *np = ck_py_numpy();
            PyObject *a = np ? PyObject_CallMethod(np, "asarray", "O", obj) : NULL;
            PyObject *d = a ? PyObject_GetAttrString(a, "dtype") : NULL;
            PyObject *nd = d ? PyObject_CallMethod(d, "newbyteorder", "s", "=") : NULL;
            PyObject *c = nd ? PyObject_CallMethod(np, "array", "OO", a, nd) : NULL;
            w = c ? ck_py_from_buffer(c, 0) : NULL;
            Py_XDECREF(a);
            Py_XDECREF(d);
            Py_XDECREF(nd);
            Py_XDECREF(c);
            if (w) {
                Py_XDECREF(et);
                Py_XDECREF(ev);
                Py_XDECREF(tb);
                fresh = 1;
            } else {
                PyErr_Clear();
                PyErr_Restore(et, ev, tb);
            }
        }
        if (!w && PyErr_ExceptionMatches(PyExc_ValueError)) {
            /* the exporter refused (NumPy's datetime64 has no buffer format):
             * a dtype cudakit does not hold, so a TypeError */
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            PyErr_Format(PyExc_TypeError, "cannot convert an object of type %.50s to a cudakit array (%S)",
                         Py_TYPE(obj)->tp_name, ev ? ev : Py_None);
            Py_XDECREF(et);
            Py_XDECREF(ev);
            Py_XDECREF(tb);
        }
        if (!w) return NULL;
        PyObject *res = adjust(w, dtype, copy, 1, target, fresh);
        Py_DECREF(w);
        return res;
    }
    if (PyObject_HasAttrString(obj, "__dlpack__") && PyObject_HasAttrString(obj, "__dlpack_device__")) {
        PyObject *mod = PyImport_ImportModule("cudakit._core");
        if (!mod) return NULL;
        PyObject *w = PyObject_CallMethod(mod, "from_dlpack", "O", obj);
        Py_DECREF(mod);
        if (w) {
            PyObject *res = adjust(w, dtype, copy, has_dev, dev, 0);
            Py_DECREF(w);
            return res;
        }
        if (!PyErr_ExceptionMatches(PyExc_NotImplementedError)) return NULL;
        PyErr_Clear();
    }
    if (PyObject_HasAttrString(obj, "__array__") || PyObject_HasAttrString(obj, "__array_interface__")) {
        PyObject *np = ck_py_numpy();
        if (!np) return NULL;
        PyObject *conv = PyObject_CallMethod(np, "asarray", "O", obj);
        if (!conv) return NULL;
        PyObject *w = ck_py_from_buffer(conv, 0);
        Py_DECREF(conv);
        if (!w) return NULL;
        PyObject *res = adjust(w, dtype, copy, 1, target, 1);
        Py_DECREF(w);
        return res;
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || obj == Py_None) {
        PyErr_Format(PyExc_TypeError, "cudakit arrays hold numbers only, not %.50s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (PySequence_Check(obj)) {   /* other sequences (range, ...) go through a list */
        PyObject *lst = PySequence_List(obj);
        if (!lst) return NULL;
        PyObject *res = ck_py_asarray(lst, dtype, copy, 1, target);
        Py_DECREF(lst);
        return res;
    }
    PyErr_Format(PyExc_TypeError, "cannot convert an object of type %.50s to a cudakit array", Py_TYPE(obj)->tp_name);
    return NULL;
}

int ck_py_operand(PyObject *obj, ck_operand *op, PyObject **tmp_obj)
{
    *tmp_obj = NULL;
    if (CkArray_Check(obj)) {
        op->array = CK_ARR(obj);
        op->weak = 0;
        return 0;
    }
    int weak;
    int r = ck_py_scalar_from_obj(obj, &op->scalar, &weak);
    if (r <= 0) {
        op->array = NULL;
        op->weak = weak;
        return r;
    }
    if (seq_is_container(obj) || PyRange_Check(obj) || PyObject_CheckBuffer(obj) || PyObject_HasAttrString(obj, "__array__") ||
        PyObject_HasAttrString(obj, "__array_interface__") || PyObject_HasAttrString(obj, "__dlpack__")) {
        if (PyUnicode_Check(obj) || PyBytes_Check(obj)) return 1;
        /* host objects on the CPU, GPU objects where they are; ck_py_apply
         * moves either to the other operands' device */
        int on_gpu = PyObject_HasAttrString(obj, "__cuda_array_interface__");
        PyObject *a = ck_py_asarray(obj, CK_DTYPE_INVALID, -1, !on_gpu, ck_device_cpu());
        if (!a) return -1;
        *tmp_obj = a;
        op->array = CK_ARR(a);
        op->weak = 0;
        return 0;
    }
    return 1;
}
