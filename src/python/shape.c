/* Shape manipulation as module functions (reshape, concatenate, pad, ...):
 * argument parsing and wrapping only; the work is in src/ops/shape.c. */
#include "ck_python.h"

#include <limits.h>

#include <string.h>

#define CK_SHAPE_MAXLIST 64

/* Any array-like as an array object on its own (or the default) device. */
static PyObject *as_arr(PyObject *obj)
{
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
}

static PyObject *wrap_new(ck_status s, ck_array *r)
{
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(r, NULL);
}

static PyObject *wrap_view(ck_status s, ck_array *r, PyObject *owner)
{
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap_view(r, owner);
}

/* An int or a sequence of ints -> vals[0..n). */
/* obj as a sequence of at most CK_SHAPE_MAXLIST items (new reference), or
 * NULL with an exception. */
static PyObject *short_seq(PyObject *obj, const char *what, Py_ssize_t *len)
{
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq) return NULL;
    *len = PySequence_Fast_GET_SIZE(seq);
    if (*len > CK_SHAPE_MAXLIST) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: at most %d values are supported", what, CK_SHAPE_MAXLIST);
        return NULL;
    }
    return seq;
}

static int int_list(PyObject *obj, int64_t *vals, int *n, const char *what)
{
    if (PyIndex_Check(obj) && !PySequence_Check(obj)) {
        Py_ssize_t v = PyNumber_AsSsize_t(obj, PyExc_OverflowError);
        if (v == -1 && PyErr_Occurred()) return -1;
        vals[0] = v;
        *n = 1;
        return 0;
    }
    Py_ssize_t len;
    PyObject *seq = short_seq(obj, what, &len);
    if (!seq) return -1;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyIndex_Check(x)) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer", Py_TYPE(x)->tp_name);
            return -1;
        }
        Py_ssize_t v = PyNumber_AsSsize_t(x, PyExc_OverflowError);
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        vals[i] = v;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* A list of axes (or one), each as NumPy's normalize_axis_tuple reads it
 * (ck_py_axis_index). */
static int axis_list(PyObject *obj, int *axes, int *n, const char *what)
{
    if (PyIndex_Check(obj) && !PySequence_Check(obj)) {
        *n = 1;
        return ck_py_axis_index(obj, &axes[0]);
    }
    Py_ssize_t len;
    PyObject *seq = short_seq(obj, what, &len);
    if (!seq) return -1;
    for (Py_ssize_t i = 0; i < len; i++)
        if (ck_py_axis_index(PySequence_Fast_GET_ITEM(seq, i), &axes[i]) < 0) { Py_DECREF(seq); return -1; }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* NumPy's check of each axis of a list against ndim (its message names the
 * argument: "source: axis 5 is out of bounds ..."). */
static int axes_in_range(const int *axes, int n, int ndim, const char *what)
{
    for (int i = 0; i < n; i++)
        if (axes[i] < -ndim || axes[i] >= ndim) {
            PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "%s: axis %d is out of bounds for array of dimension %d",
                         what, axes[i], ndim);
            return -1;
        }
    return 0;
}

/* An integer array-like -> a contiguous int64 array on the host. */
static int host_int64(PyObject *obj, ck_array *out, const char *what)
{
    PyObject *a = ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 1, ck_device_cpu());
    if (!a) return -1;
    ck_dtype t = CK_ARR(a)->dtype;
    /* an empty list is float64 to asarray but means no values here */
    if ((!(ck_dtype_is_integer(t) || t == CK_BOOL) || t == CK_UINT64) && CK_ARR(a)->size) {
        Py_DECREF(a);
        PyErr_Format(PyExc_TypeError, "%s must be of integral type", what);
        return -1;
    }
    ck_status s = ck_array_astype(out, CK_ARR(a), CK_INT64, 0);
    Py_DECREF(a);
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static PyObject *call_method(PyObject *obj, const char *name, PyObject *args, PyObject *kw)
{
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    PyObject *m = PyObject_GetAttrString(a, name);
    Py_DECREF(a);
    if (!m) return NULL;
    PyObject *r = PyObject_Call(m, args, kw);
    Py_DECREF(m);
    return r;
}

/* ------------------------------------------------------- thin views */

static PyObject *f_reshape(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *a, *shape = NULL, *order = Py_None, *copy = Py_None;
    static char *kwlist[] = {"a", "shape", "order", "copy", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO$O", kwlist, &a, &shape, &order, &copy)) return NULL;
    if (!shape) { PyErr_SetString(PyExc_TypeError, "reshape() missing required argument 'shape'"); return NULL; }
    PyObject *t = PyTuple_Pack(1, shape);
    PyObject *k = t ? Py_BuildValue("{s:O,s:O}", "order", order == Py_None ? Py_None : order, "copy", copy) : NULL;
    PyObject *r = k ? call_method(a, "reshape", t, k) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(k);
    return r;
}

static PyObject *f_ravel(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *a, *order = Py_None;
    static char *kwlist[] = {"a", "order", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &a, &order)) return NULL;
    PyObject *t = order == Py_None ? PyTuple_New(0) : PyTuple_Pack(1, order);
    PyObject *r = t ? call_method(a, "ravel", t, NULL) : NULL;
    Py_XDECREF(t);
    return r;
}

static PyObject *f_transpose(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *a, *axes = Py_None;
    static char *kwlist[] = {"a", "axes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &a, &axes)) return NULL;
    PyObject *t = axes == Py_None ? PyTuple_New(0) : PyTuple_Pack(1, axes);
    PyObject *r = t ? call_method(a, "transpose", t, NULL) : NULL;
    Py_XDECREF(t);
    return r;
}

static PyObject *f_permute_dims(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *a, *axes;
    static char *kwlist[] = {"a", "axes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &a, &axes)) return NULL;
    PyObject *t = PyTuple_Pack(1, axes);
    PyObject *r = t ? call_method(a, "transpose", t, NULL) : NULL;
    Py_XDECREF(t);
    return r;
}

static PyObject *f_swapaxes(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj;
    int a1, a2;
    static char *kwlist[] = {"a", "axis1", "axis2", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Oii", kwlist, &obj, &a1, &a2)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array v;
    PyObject *r = wrap_view(ck_array_swapaxes(&v, CK_ARR(a), a1, a2), &v, a);
    Py_DECREF(a);
    return r;
}

static PyObject *f_moveaxis(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *src, *dst;
    static char *kwlist[] = {"a", "source", "destination", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", kwlist, &obj, &src, &dst)) return NULL;
    int s[CK_SHAPE_MAXLIST], d[CK_SHAPE_MAXLIST], ns, nd;
    if (axis_list(src, s, &ns, "source") < 0 || axis_list(dst, d, &nd, "destination") < 0) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    if (axes_in_range(s, ns, CK_ARR(a)->ndim, "source") < 0 ||
        axes_in_range(d, nd, CK_ARR(a)->ndim, "destination") < 0) {
        Py_DECREF(a);
        return NULL;
    }
    if (ns != nd) {
        Py_DECREF(a);
        PyErr_SetString(PyExc_ValueError, "`source` and `destination` arguments must have the same number of elements");
        return NULL;
    }
    ck_array v;
    PyObject *r = wrap_view(ck_array_moveaxis(&v, CK_ARR(a), ns, s, d), &v, a);
    Py_DECREF(a);
    return r;
}

static PyObject *squeeze_impl(PyObject *a, PyObject *axis)
{
    uint64_t mask = 0;
    if (CK_ARR(a)->ndim == 0 && PyIndex_Check(axis)) {
        /* NumPy takes an int axis 0 or -1 of a 0-d array (not a tuple) */
        int ax;
        if (ck_py_axis_int(axis, &ax) < 0) return NULL;
        if (ck_py_flat_0d(CK_ARR(a), ax)) axis = Py_None;
    }
    if (axis != Py_None && ck_py_axis_mask(axis, CK_ARR(a)->ndim, 0, &mask) < 0) return NULL;
    ck_array v;
    return wrap_view(ck_array_squeeze(&v, CK_ARR(a), mask, axis == Py_None), &v, a);
}

static PyObject *f_squeeze(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *axis = Py_None;
    static char *kwlist[] = {"a", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &obj, &axis)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    PyObject *r = squeeze_impl(a, axis);
    Py_DECREF(a);
    return r;
}

static PyObject *f_expand_dims(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *axis;
    static char *kwlist[] = {"a", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &obj, &axis)) return NULL;
    int axes[CK_SHAPE_MAXLIST], n;
    if (axis_list(axis, axes, &n, "axis") < 0) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array v;
    PyObject *r = wrap_view(ck_array_expand_dims(&v, CK_ARR(a), n, axes), &v, a);
    Py_DECREF(a);
    return r;
}

static PyObject *f_flip(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *axis = Py_None;
    static char *kwlist[] = {"m", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &obj, &axis)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    uint64_t mask;
    PyObject *r = NULL;
    if (ck_py_axis_mask(axis, CK_ARR(a)->ndim, CK_PY_AXES_LIST | CK_PY_AXES_BOOL, &mask) == 0) {
        ck_array v;
        r = wrap_view(ck_array_flip(&v, CK_ARR(a), mask), &v, a);
    }
    Py_DECREF(a);
    return r;
}

static PyObject *f_diagonal(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj;
    Py_ssize_t offset = 0;
    int a1 = 0, a2 = 1;
    static char *kwlist[] = {"a", "offset", "axis1", "axis2", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|nii", kwlist, &obj, &offset, &a1, &a2)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array v;
    PyObject *r = wrap_view(ck_array_diagonal(&v, CK_ARR(a), offset, a1, a2), &v, a);
    Py_DECREF(a);
    return r;
}

static PyObject *f_diag(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj;
    Py_ssize_t k = 0;
    static char *kwlist[] = {"v", "k", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|n", kwlist, &obj, &k)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array r;
    ck_status s = ck_diag(&r, CK_ARR(a), k);
    PyObject *res = CK_ARR(a)->ndim == 2 ? wrap_view(s, &r, a) : wrap_new(s, &r);
    Py_DECREF(a);
    return res;
}

/* ----------------------------------------------------- broadcasting */

static PyObject *f_broadcast_to(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *shape;
    static char *kwlist[] = {"array", "shape", "subok", NULL};
    int subok = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|p", kwlist, &obj, &shape, &subok)) return NULL;
    int nd;
    int64_t sh[CK_MAXDIMS];
    if (ck_py_shape_from_obj(shape, &nd, sh) < 0) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array v;
    PyObject *r = wrap_view(ck_array_broadcast_to(&v, CK_ARR(a), nd, sh), &v, a);
    Py_DECREF(a);
    return r;
}

static PyObject *f_broadcast_shapes(PyObject *m, PyObject *args)
{
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int nds[CK_SHAPE_MAXLIST];
    int64_t shapes[CK_SHAPE_MAXLIST][CK_MAXDIMS];
    const int64_t *ptrs[CK_SHAPE_MAXLIST];
    if (n > CK_SHAPE_MAXLIST) { PyErr_SetString(PyExc_ValueError, "too many shapes"); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ck_py_shape_from_obj(PyTuple_GET_ITEM(args, i), &nds[i], shapes[i]) < 0) return NULL;
        ptrs[i] = shapes[i];
    }
    int ond = 0;
    int64_t osh[CK_MAXDIMS];
    if (n) {
        ck_status s = ck_broadcast_shapes((int)n, nds, ptrs, &ond, osh);
        if (s != CK_OK) return ck_py_raise(s);
    }
    return ck_py_shape_tuple(ond, osh);
}

static PyObject *f_broadcast_arrays(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    if (kw && PyDict_Size(kw) && !(PyDict_Size(kw) == 1 && PyDict_GetItemString(kw, "subok"))) {
        PyErr_SetString(PyExc_TypeError, "broadcast_arrays() got an unexpected keyword argument");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > CK_SHAPE_MAXLIST) { PyErr_SetString(PyExc_ValueError, "too many arrays"); return NULL; }
    PyObject *arrs[CK_SHAPE_MAXLIST];
    int nds[CK_SHAPE_MAXLIST];
    const int64_t *ptrs[CK_SHAPE_MAXLIST];
    PyObject *res = NULL;
    Py_ssize_t got = 0;
    for (; got < n; got++) {
        arrs[got] = as_arr(PyTuple_GET_ITEM(args, got));
        if (!arrs[got]) goto done;
        nds[got] = CK_ARR(arrs[got])->ndim;
        ptrs[got] = CK_ARR(arrs[got])->shape;
    }
    int ond = 0;
    int64_t osh[CK_MAXDIMS];
    if (n) {
        ck_status s = ck_broadcast_shapes((int)n, nds, ptrs, &ond, osh);
        if (s != CK_OK) { ck_py_raise(s); goto done; }
    }
    /* a list, as the array API standard (and NumPy before 2.0) return */
    res = PyList_New(n);
    if (!res) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        ck_array v;
        PyObject *o = wrap_view(ck_array_broadcast_to(&v, CK_ARR(arrs[i]), ond, osh), &v, arrs[i]);
        if (!o) { Py_CLEAR(res); goto done; }
        PyList_SET_ITEM(res, i, o);
    }
done:
    for (Py_ssize_t i = 0; i < got; i++) Py_DECREF(arrs[i]);
    return res;
}

/* -------------------------------------------------------- joining */

typedef ck_status (*join_fn)(ck_array *, int, const ck_array *const *, int, ck_dtype);
typedef ck_status (*join_into_fn)(ck_array *, int, const ck_array *const *, int);

static PyObject *join(PyObject *args, PyObject *kw, join_fn fn, join_into_fn fn_into, int allow_none_axis)
{
    PyObject *seq_obj, *axis_obj = NULL, *out = Py_None, *dt_obj = Py_None, *casting_obj = NULL;
    static char *kwlist[] = {"arrays", "axis", "out", "dtype", "casting", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO$OO", kwlist, &seq_obj, &axis_obj, &out, &dt_obj, &casting_obj))
        return NULL;
    int axis = 0;
    /* concatenate reads its axis in C, np.stack in Python (a bool is an axis) */
    if (axis_obj == Py_None && allow_none_axis) {
        axis = CK_AXIS_FLAT;
    } else if (axis_obj && (allow_none_axis ? ck_py_axis_int(axis_obj, &axis) : ck_py_axis_index(axis_obj, &axis)) < 0) {
        return NULL;
    }
    ck_casting casting = CK_CASTING_SAME_KIND;
    if (casting_obj && ck_py_casting_from_obj(casting_obj, &casting) < 0) return NULL;
    ck_dtype dt;
    if (ck_py_dtype_from_obj(dt_obj, CK_DTYPE_INVALID, &dt) < 0) return NULL;
    if (out != Py_None && !CkArray_Check(out)) { PyErr_SetString(PyExc_TypeError, "out must be a cudakit array"); return NULL; }
    if (out != Py_None && dt != CK_DTYPE_INVALID) {
        PyErr_SetString(PyExc_TypeError, "concatenate() only takes `out` or `dtype` as an argument, but both were provided.");
        return NULL;
    }
    if (!PySequence_Check(seq_obj)) {   /* an iterator: NumPy wants a sequence */
        PyErr_SetString(PyExc_TypeError, allow_none_axis ? "The first input argument needs to be a sequence"
                        : "arrays to stack must be passed as a \"sequence\" type such as list or tuple.");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(seq_obj, "arrays must be a sequence of array-likes");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 1000000) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "too many arrays"); return NULL; }
    PyObject **objs = PyMem_Calloc((size_t)n + 1, sizeof *objs);
    const ck_array **arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    PyObject *res = NULL;
    if (!objs || !arrs) { PyErr_NoMemory(); goto done; }
    /* non-arrays (lists, scalars) go to the device of the first array */
    ck_device dev = ck_py_default_device();
    for (Py_ssize_t i = 0; i < n; i++)
        if (CkArray_Check(PySequence_Fast_GET_ITEM(seq, i))) {
            dev = ck_array_device(CK_ARR(PySequence_Fast_GET_ITEM(seq, i)));
            break;
        }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        objs[i] = CkArray_Check(x) ? Py_NewRef(x) : ck_py_asarray(x, CK_DTYPE_INVALID, -1, 1, dev);
        if (!objs[i]) goto done;
        arrs[i] = CK_ARR(objs[i]);
    }
    ck_dtype target = dt != CK_DTYPE_INVALID ? dt : out != Py_None ? CK_ARR(out)->dtype : CK_DTYPE_INVALID;
    if (target != CK_DTYPE_INVALID)
        for (Py_ssize_t i = 0; i < n; i++)
            if (ck_py_check_cast(arrs[i]->dtype, target, casting) < 0) goto done;
    /* out= on the inputs' device: written in place */
    if (out != Py_None && n > 0 && ck_device_equal(ck_array_device(CK_ARR(out)), ck_array_device(arrs[0]))) {
        ck_status s = fn_into(CK_ARR(out), (int)n, arrs, axis);
        if (s != CK_OK) ck_py_raise(s);
        else res = Py_NewRef(out);
        goto done;
    }
    ck_array r;
    ck_status s = fn(&r, (int)n, arrs, axis, target);
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    if (out == Py_None) {
        res = ck_py_wrap(&r, NULL);
        if (CK_AG_GATE() && res)
            res = ck_py_ag_join(!allow_none_axis, (int)n, objs, axis == CK_AXIS_FLAT ? 0 : axis, axis == CK_AXIS_FLAT, res);
    } else {
        const ck_array *o = CK_ARR(out);
        if (o->ndim != r.ndim || memcmp(o->shape, r.shape, (size_t)r.ndim * sizeof(int64_t))) {
            PyErr_Format(PyExc_ValueError, "Output array is the wrong shape");
            ck_array_release(&r);
            goto done;
        }
        s = ck_array_assign(CK_ARR(out), &r);
        ck_array_release(&r);
        if (s != CK_OK) { ck_py_raise(s); goto done; }
        res = Py_NewRef(out);
    }
done:
    if (objs)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(objs[i]);
    PyMem_Free(objs);
    PyMem_Free(arrs);
    Py_DECREF(seq);
    return res;
}

static PyObject *f_concatenate(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    return join(args, kw, ck_concatenate, ck_concatenate_into, 1);
}

static PyObject *f_stack(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    return join(args, kw, ck_stack, ck_stack_into, 0);
}

/* ------------------------------------------------------ new arrays */

static PyObject *f_tile(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *reps_obj;
    static char *kwlist[] = {"A", "reps", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &obj, &reps_obj)) return NULL;
    int64_t reps[CK_SHAPE_MAXLIST];
    int n;
    if (int_list(reps_obj, reps, &n, "reps") < 0) return NULL;
    if (n > CK_MAXDIMS) { PyErr_Format(PyExc_ValueError, "reps has more than %d entries", CK_MAXDIMS); return NULL; }
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array r;
    PyObject *res = wrap_new(ck_tile(&r, CK_ARR(a), n, reps), &r);
    if (CK_AG_GATE() && res) res = ck_py_ag_tile(a, 0, n, reps, 0, res);
    Py_DECREF(a);
    return res;
}

static PyObject *repeat_impl(PyObject *a, PyObject *repeats, PyObject *axis_obj)
{
    int axis = CK_AXIS_FLAT;
    if (axis_obj != Py_None && ck_py_axis_int(axis_obj, &axis) < 0) return NULL;
    if (ck_py_flat_0d(CK_ARR(a), axis)) axis = CK_AXIS_FLAT;
    ck_array reps;
    if (host_int64(repeats, &reps, "repeats") < 0) return NULL;
    if (reps.ndim > 1) {
        ck_array_release(&reps);
        PyErr_SetString(PyExc_ValueError, "repeats must be a scalar or a 1-d sequence");
        return NULL;
    }
    ck_array r;
    ck_status s = ck_repeat(&r, CK_ARR(a), reps.size, (const int64_t *)reps.data, axis);
    PyObject *res = wrap_new(s, &r);
    /* one count for every element has a rule; several counts have none yet */
    if (CK_AG_GATE() && res)
        res = reps.size == 1 ? ck_py_ag_tile(a, 1, 1, (const int64_t *)reps.data, axis, res)
                             : ck_py_ag_missing("repeat", 1, &a, res);
    ck_array_release(&reps);
    return res;
}

static PyObject *f_repeat(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *repeats, *axis = Py_None;
    static char *kwlist[] = {"a", "repeats", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O", kwlist, &obj, &repeats, &axis)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    PyObject *r = repeat_impl(a, repeats, axis);
    Py_DECREF(a);
    return r;
}

static PyObject *f_roll(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *shift_obj, *axis_obj = Py_None;
    static char *kwlist[] = {"a", "shift", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O", kwlist, &obj, &shift_obj, &axis_obj)) return NULL;
    int64_t shifts[CK_SHAPE_MAXLIST];
    int axes[CK_SHAPE_MAXLIST], ns, na = 0;
    if (int_list(shift_obj, shifts, &ns, "shift") < 0) return NULL;
    if (axis_obj != Py_None && axis_list(axis_obj, axes, &na, "axis") < 0) return NULL;
    if (axis_obj == Py_None) {
        /* a sequence of shifts all apply to the one flattened axis */
        int64_t t = 0;
        for (int i = 0; i < ns; i++) t += shifts[i];
        shifts[0] = t;
        ns = 1;
    } else if (ns != na) {
        /* shift and axis broadcast against each other */
        if (ns == 1) { for (int i = 1; i < na; i++) shifts[i] = shifts[0]; ns = na; }
        else if (na == 1) { for (int i = 1; i < ns; i++) axes[i] = axes[0]; na = ns; }
        else {
            PyErr_SetString(PyExc_ValueError, "shape mismatch: objects cannot be broadcast to a single shape");
            return NULL;
        }
    }
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array r;
    PyObject *res = wrap_new(ck_roll(&r, CK_ARR(a), ns, shifts, axis_obj == Py_None ? NULL : axes), &r);
    if (CK_AG_GATE() && res) res = ck_py_ag_roll(a, ns, shifts, axis_obj == Py_None ? NULL : axes, res);
    Py_DECREF(a);
    return res;
}

/* Nested sequences without a number (() or ((), ())): NumPy's asarray of
 * them is float64, so pad's pad_width is not of integral type. */
static int no_numbers(PyObject *o)
{
    if (!PyList_Check(o) && !PyTuple_Check(o)) return 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
        if (!no_numbers(PySequence_Fast_GET_ITEM(o, i))) return 0;
    return 1;
}

static PyObject *f_pad(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *pw, *mode_obj = NULL, *cv = NULL, *rt = NULL;
    static char *kwlist[] = {"array", "pad_width", "mode", "constant_values", "reflect_type", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OO", kwlist, &obj, &pw, &mode_obj, &cv, &rt)) return NULL;
    const char *mode = "constant";
    if (mode_obj) {
        if (!PyUnicode_Check(mode_obj)) {
            if (PyCallable_Check(mode_obj)) PyErr_SetString(PyExc_NotImplementedError, "pad: a callable mode is not implemented");
            else PyErr_Format(PyExc_ValueError, "mode '%S' is not supported", mode_obj);
            return NULL;
        }
        mode = PyUnicode_AsUTF8(mode_obj);
        if (!mode) return NULL;
    }
    if (PyBool_Check(pw) || no_numbers(pw)) {
        PyErr_SetString(PyExc_TypeError, "`pad_width` must be of integral type.");
        return NULL;
    }
    ck_pad_mode pm;
    if (!strcmp(mode, "constant")) pm = CK_PAD_CONSTANT;
    else if (!strcmp(mode, "edge")) pm = CK_PAD_EDGE;
    else if (!strcmp(mode, "reflect")) pm = CK_PAD_REFLECT;
    else if (!strcmp(mode, "symmetric")) pm = CK_PAD_SYMMETRIC;
    else if (!strcmp(mode, "wrap")) pm = CK_PAD_WRAP;
    else if (!strcmp(mode, "empty")) pm = CK_PAD_EMPTY;
    else if (!strcmp(mode, "linear_ramp") || !strcmp(mode, "maximum") || !strcmp(mode, "mean") ||
             !strcmp(mode, "median") || !strcmp(mode, "minimum")) {
        /* NumPy's error for an empty axis comes first */
        PyObject *a = as_arr(obj);
        if (!a) return NULL;
        int empty = -1;
        for (int i = 0; i < CK_ARR(a)->ndim && empty < 0; i++)
            if (CK_ARR(a)->shape[i] == 0) empty = i;
        Py_DECREF(a);
        if (empty >= 0)
            PyErr_Format(PyExc_ValueError, "can't extend empty axis %d using modes other than 'constant' or 'empty'", empty);
        else
            PyErr_Format(PyExc_NotImplementedError, "pad: mode '%s' is not implemented", mode);
        return NULL;
    } else {
        PyErr_Format(PyExc_ValueError, "mode '%s' is not supported", mode);
        return NULL;
    }
    if (cv && pm != CK_PAD_CONSTANT) {
        PyErr_Format(PyExc_ValueError, "unsupported keyword arguments for mode '%s': {'constant_values'}", mode);
        return NULL;
    }
    if (rt && rt != Py_None) {
        const char *r = PyUnicode_Check(rt) ? PyUnicode_AsUTF8(rt) : NULL;
        if (!r || strcmp(r, "even") || (pm != CK_PAD_REFLECT && pm != CK_PAD_SYMMETRIC)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_NotImplementedError, "pad: only reflect_type='even' with reflect/symmetric is implemented");
            return NULL;
        }
    }
    ck_scalar value;
    int has_value = 0;
    if (cv && cv != Py_None) {
        int weak;
        int r = ck_py_scalar_from_obj(cv, &value, &weak);
        if (r < 0) return NULL;
        if (r > 0) {
            PyObject *va = ck_py_asarray(cv, CK_DTYPE_INVALID, -1, 1, ck_device_cpu());
            if (!va) return NULL;
            if (CK_ARR(va)->size != 1) {
                Py_DECREF(va);
                PyErr_SetString(PyExc_NotImplementedError, "pad: per-axis constant_values are not implemented");
                return NULL;
            }
            ck_array c;
            ck_status s = ck_array_astype(&c, CK_ARR(va), CK_ARR(va)->dtype, 0);
            Py_DECREF(va);
            if (s != CK_OK) return ck_py_raise(s);
            ck_scalar_load(&value, c.dtype, c.data);
            ck_array_release(&c);
        }
        has_value = 1;
    }
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    const ck_array *arr = CK_ARR(a);
    ck_array w, wb, wc;
    PyObject *res = NULL;
    if (host_int64(pw, &w, "`pad_width`") < 0) goto done;
    int64_t bshape[2] = {arr->ndim, 2};
    ck_status s = ck_array_broadcast_to(&wb, &w, 2, bshape);
    ck_array_release(&w);
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    s = ck_array_astype(&wc, &wb, CK_INT64, 0);
    ck_array_release(&wb);
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    ck_array r;
    s = ck_pad(&r, arr, (const int64_t *)wc.data, pm, has_value ? &value : NULL);
    res = wrap_new(s, &r);
    /* the other modes' gradients gather reflected parts: not yet (a rule-less node) */
    if (CK_AG_GATE() && res) res = pm == CK_PAD_CONSTANT ? ck_py_ag_pad(a, (const int64_t *)wc.data, res)
                                                         : ck_py_ag_missing("pad", 1, &a, res);
    ck_array_release(&wc);
done:
    Py_DECREF(a);
    return res;
}

static PyObject *trace_impl(PyObject *a, Py_ssize_t offset, int a1, int a2, PyObject *dt_obj, PyObject *out)
{
    ck_dtype dt;
    if (ck_py_dtype_from_obj(dt_obj, CK_DTYPE_INVALID, &dt) < 0) return NULL;
    if (out != Py_None && !CkArray_Check(out)) { PyErr_SetString(PyExc_TypeError, "out must be a cudakit array"); return NULL; }
    ck_array r;
    if (CK_AG_GATE() && ((CkArrayObject *)a)->ag && out == Py_None) {
        /* recorded as what it is, the sum of a diagonal view */
        ck_array dv, fake, fv;
        ck_status s = ck_array_diagonal(&dv, CK_ARR(a), offset, a1, a2);
        if (s != CK_OK) return ck_py_raise(s);
        PyObject *d = ck_py_wrap_view(&dv, a);
        ck_ag_virtual(&fake, CK_ARR(a));
        if (d && ck_array_diagonal(&fv, &fake, offset, a1, a2) == CK_OK) d = ck_py_ag_view("diagonal", a, &fv, d);
        if (!d) return NULL;
        uint64_t last = 1ull << (CK_ARR(d)->ndim - 1);
        s = ck_reduce(CK_REDUCE_SUM, CK_ARR(d), last, 0, dt, &r, 0);
        PyObject *res = s == CK_OK ? ck_py_wrap(&r, NULL) : ck_py_raise(s);
        if (res) res = ck_py_ag_reduce("sum", d, last, 0, 0.0, res);
        Py_DECREF(d);
        return res;
    }
    ck_status s = ck_trace(&r, CK_ARR(a), offset, a1, a2, dt);
    if (s != CK_OK) return ck_py_raise(s);
    if (out == Py_None) return ck_py_wrap(&r, NULL);
    s = ck_array_assign(CK_ARR(out), &r);
    ck_array_release(&r);
    if (s != CK_OK) return ck_py_raise(s);
    return Py_NewRef(out);
}

static PyObject *f_trace(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *dt = Py_None, *out = Py_None;
    Py_ssize_t offset = 0;
    int a1 = 0, a2 = 1;
    static char *kwlist[] = {"a", "offset", "axis1", "axis2", "dtype", "out", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|niiOO", kwlist, &obj, &offset, &a1, &a2, &dt, &out)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    PyObject *r = trace_impl(a, offset, a1, a2, dt, out);
    Py_DECREF(a);
    return r;
}

static PyObject *tri_part(PyObject *args, PyObject *kw, int upper)
{
    PyObject *obj;
    Py_ssize_t k = 0;
    static char *kwlist[] = {"m", "k", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|n", kwlist, &obj, &k)) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array r;
    PyObject *res = wrap_new(ck_tri_part(&r, CK_ARR(a), k, upper), &r);
    if (CK_AG_GATE() && res) res = ck_py_ag_tri(a, k, upper, res);
    Py_DECREF(a);
    return res;
}

static PyObject *f_tril(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return tri_part(args, kw, 0); }
static PyObject *f_triu(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return tri_part(args, kw, 1); }

static PyObject *contiguous(PyObject *args, PyObject *kw, int order_f)
{
    PyObject *obj, *dt_obj = Py_None, *like = Py_None;
    static char *kwlist[] = {"a", "dtype", "like", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$O", kwlist, &obj, &dt_obj, &like)) return NULL;
    ck_dtype dt;
    if (ck_py_dtype_from_obj(dt_obj, CK_DTYPE_INVALID, &dt) < 0) return NULL;
    PyObject *a = ck_py_asarray(obj, dt, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    const ck_array *arr = CK_ARR(a);
    int flag = order_f ? CK_ARRAY_F_CONTIGUOUS : CK_ARRAY_C_CONTIGUOUS;
    if ((arr->flags & flag) && arr->ndim > 0) return a;
    ck_array r;
    ck_status s;
    if (arr->ndim == 0) {
        /* NumPy's results have at least one dimension */
        int64_t one = 1;
        ck_array v;
        if ((s = ck_array_reshape(&v, arr, 1, &one, 0)) != CK_OK) { Py_DECREF(a); return ck_py_raise(s); }
        PyObject *res = ck_py_wrap_view(&v, a);
        Py_DECREF(a);
        return res;
    }
    s = ck_array_astype(&r, arr, arr->dtype, order_f);
    Py_DECREF(a);
    return wrap_new(s, &r);
}

static PyObject *f_ascontiguousarray(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return contiguous(args, kw, 0); }
static PyObject *f_asfortranarray(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return contiguous(args, kw, 1); }

static PyObject *f_resize(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *shape;
    static char *kwlist[] = {"a", "new_shape", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &obj, &shape)) return NULL;
    int nd;
    int64_t sh[CK_MAXDIMS];
    if (ck_py_shape_from_obj(shape, &nd, sh) < 0) return NULL;
    PyObject *a = as_arr(obj);
    if (!a) return NULL;
    ck_array r;
    PyObject *res = wrap_new(ck_resize(&r, CK_ARR(a), nd, sh), &r);
    Py_DECREF(a);
    return res;
}

/* ------------------------------------------------- array methods */

static PyObject *m_squeeze(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *axis = Py_None;
    static char *kwlist[] = {"axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &axis)) return NULL;
    PyObject *r = squeeze_impl(self, axis);
    if (CK_AG_GATE() && r) r = ck_py_ag_reshape(self, r);
    return r;
}

static PyObject *m_diagonal(PyObject *self, PyObject *args, PyObject *kw)
{
    Py_ssize_t offset = 0;
    int a1 = 0, a2 = 1;
    static char *kwlist[] = {"offset", "axis1", "axis2", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|nii", kwlist, &offset, &a1, &a2)) return NULL;
    ck_array v;
    PyObject *r = wrap_view(ck_array_diagonal(&v, CK_ARR(self), offset, a1, a2), &v, self);
    if (CK_AG_GATE() && r && ((CkArrayObject *)self)->ag) {
        ck_array fake, fv;
        ck_ag_virtual(&fake, CK_ARR(self));
        if (ck_array_diagonal(&fv, &fake, offset, a1, a2) == CK_OK) r = ck_py_ag_view("diagonal", self, &fv, r);
    }
    return r;
}

static PyObject *m_trace(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *dt = Py_None, *out = Py_None;
    Py_ssize_t offset = 0;
    int a1 = 0, a2 = 1;
    static char *kwlist[] = {"offset", "axis1", "axis2", "dtype", "out", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|niiOO", kwlist, &offset, &a1, &a2, &dt, &out)) return NULL;
    return trace_impl(self, offset, a1, a2, dt, out);
}

static PyObject *m_repeat(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *repeats, *axis = Py_None;
    static char *kwlist[] = {"repeats", "axis", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &repeats, &axis)) return NULL;
    return repeat_impl(self, repeats, axis);
}

PyMethodDef ck_py_shape_methods[] = {
    CK_DEF_KW(squeeze, m_squeeze, "($self, /, axis=None)", "A view without length-1 axes (those of axis when given)."),
    CK_DEF_KW(diagonal, m_diagonal, "($self, /, offset=0, axis1=0, axis2=1)", "A read-only view of a diagonal."),
    CK_DEF_KW(trace, m_trace, "($self, /, offset=0, axis1=0, axis2=1, dtype=None, out=None)", "The sum of a diagonal."),
    CK_DEF_KW(repeat, m_repeat, "($self, /, repeats, axis=None)", "Elements repeated (flattened when axis is None)."),
    {NULL, NULL, 0, NULL},
};

PyMethodDef ck_py_shape_functions[] = {
    CK_DEF_KW(reshape, f_reshape, "(a, shape, order=None, *, copy=None)", "A view with a new shape when possible, else a copy."),
    CK_DEF_KW(ravel, f_ravel, "(a, order=None)", "Flattened (a view when possible)."),
    CK_DEF_KW(transpose, f_transpose, "(a, axes=None)", "A view with axes permuted (reversed when axes is None)."),
    CK_DEF_KW(permute_dims, f_permute_dims, "(a, axes)", "A view with axes permuted."),
    CK_DEF_KW(swapaxes, f_swapaxes, "(a, axis1, axis2)", "A view with two axes exchanged."),
    CK_DEF_KW(moveaxis, f_moveaxis, "(a, source, destination)", "A view with axes moved to new positions."),
    CK_DEF_KW(squeeze, f_squeeze, "(a, axis=None)", "A view without length-1 axes (those of axis when given)."),
    CK_DEF_KW(expand_dims, f_expand_dims, "(a, axis)", "A view with length-1 axes inserted."),
    CK_DEF_KW(flip, f_flip, "(m, axis=None)", "A view with the order of elements reversed along axes (all when None)."),
    CK_DEF_KW(diagonal, f_diagonal, "(a, offset=0, axis1=0, axis2=1)", "A read-only view of a diagonal."),
    CK_DEF_KW(diag, f_diag, "(v, k=0)", "The k-th diagonal of a 2-d array, or a 2-d array with the 1-d v on it."),
    CK_DEF_KW(trace, f_trace, "(a, offset=0, axis1=0, axis2=1, dtype=None, out=None)", "The sum along a diagonal."),
    CK_DEF_KW(broadcast_to, f_broadcast_to, "(array, shape, subok=False)", "A read-only broadcast view."),
    CK_DEF_KW(broadcast_arrays, f_broadcast_arrays, "(*args, subok=False)", "Views of the arguments in one broadcast shape (a list)."),
    CK_DEF_VARARGS(broadcast_shapes, f_broadcast_shapes, "(*args)", "The shape the given shapes broadcast to."),
    CK_DEF_KW(concatenate, f_concatenate, "(arrays, axis=0, out=None, *, dtype=None, casting='same_kind')",
              "Join arrays along an existing axis (flattened first when axis is None)."),
    CK_DEF_KW(stack, f_stack, "(arrays, axis=0, out=None, *, dtype=None, casting='same_kind')",
              "Join arrays along a new axis."),
    CK_DEF_KW(tile, f_tile, "(A, reps)", "A repeated reps times along each axis."),
    CK_DEF_KW(repeat, f_repeat, "(a, repeats, axis=None)", "Elements repeated (flattened when axis is None)."),
    CK_DEF_KW(roll, f_roll, "(a, shift, axis=None)", "Elements shifted cyclically (flattened when axis is None)."),
    CK_DEF_KW(pad, f_pad, "(array, pad_width, mode='constant', **kwargs)",
              "array padded by pad_width; modes constant (keyword constant_values, 0 by default), edge, reflect and "
              "symmetric (keyword reflect_type, 'even' or 'odd'), wrap, empty."),
    CK_DEF_KW(tril, f_tril, "(m, k=0)", "The lower triangle (at and below the k-th diagonal), zeros above."),
    CK_DEF_KW(triu, f_triu, "(m, k=0)", "The upper triangle (at and above the k-th diagonal), zeros below."),
    CK_DEF_KW(ascontiguousarray, f_ascontiguousarray, "(a, dtype=None, *, like=None)", "C-contiguous (at least 1-d)."),
    CK_DEF_KW(asfortranarray, f_asfortranarray, "(a, dtype=None, *, like=None)", "Fortran-contiguous (at least 1-d)."),
    CK_DEF_KW(resize, f_resize, "(a, new_shape)", "a's elements repeated to fill new_shape."),
    {NULL, NULL, 0, NULL},
};
