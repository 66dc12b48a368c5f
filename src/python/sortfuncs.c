/*
 * sortfuncs.c - sort, argsort, partition, argpartition and searchsorted as
 * module functions (the work is src/ops/sort.c's).
 */
#include "ck_python.h"

#include <string.h>

static PyObject *as_array(PyObject *obj, ck_device dev, int has_dev)
{
    if (CkArray_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, has_dev, dev);
}


/* NumPy accepts these kinds; every one gets the same stable sort here. */
static int check_kind(PyObject *kind, PyObject *order)
{
    if (order && order != Py_None) {
        PyErr_SetString(PyExc_ValueError, "Cannot specify order when the array has no fields.");
        return -1;
    }
    if (!kind || kind == Py_None) return 0;
    if (!PyUnicode_Check(kind)) {
        PyErr_Format(PyExc_TypeError, "sort kind must be str, not %.50s", Py_TYPE(kind)->tp_name);
        return -1;
    }
    const char *k = PyUnicode_AsUTF8(kind);
    if (k && (!strcmp(k, "quicksort") || !strcmp(k, "mergesort") || !strcmp(k, "heapsort") ||
              !strcmp(k, "stable") || !strcmp(k, "introselect")))
        return 0;
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "sort kind must be one of 'quick', 'heap', or 'stable' (got %R)", kind);
    return -1;
}

/* argsort and argpartition flatten a 0-d array for axis 0 or -1 (as
 * NumPy's C functions do); sort and partition, in Python there, do not. */
static void flat_0d(const ck_array *a, int arg, int axis, int *none)
{
    if (arg && ck_py_flat_0d(a, axis)) *none = 1;
}

/* One kth, as NumPy reads it. */
static int kth_item(PyObject *x, int64_t *v)
{
    if (PyBool_Check(x)) {
        PyErr_SetString(PyExc_ValueError, "Booleans unacceptable as partition index");
        return -1;
    }
    if (!PyIndex_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "Partition index must be integer");
        return -1;
    }
    Py_ssize_t n = PyNumber_AsSsize_t(x, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {   /* out of bounds of any axis */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "kth(=%S) out of bounds", x);
        }
        return -1;
    }
    *v = n;
    return 0;
}

static PyObject *sort_common(PyObject *args, PyObject *kw, int arg)
{
    static char *kwlist[] = {"a", "axis", "kind", "order", "stable", "descending", NULL};
    PyObject *a_obj, *axis_obj = NULL, *kind = NULL, *order = NULL, *stable = Py_None;
    int descending = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO$Op", kwlist, &a_obj, &axis_obj, &kind, &order, &stable,
                                     &descending))
        return NULL;
    if (stable != Py_None && kind && kind != Py_None) {
        PyErr_SetString(PyExc_ValueError, "`kind` and `stable` parameters can't be provided at the same time. Use only one of them.");
        return NULL;
    }
    if (check_kind(kind, order) < 0) return NULL;
    int axis = -1, none = 0;
    /* np.sort reads its axis in Python (a bool is an axis), argsort in C */
    if (axis_obj && axis_obj != Py_None && !arg) {
        if (ck_py_axis_index(axis_obj, &axis) < 0) return NULL;
    } else if (axis_obj && ck_py_axis_or_none(axis_obj, &axis, &none) < 0) {
        return NULL;
    }
    if (!axis_obj) axis = -1;
    PyObject *a = as_array(a_obj, ck_device_cpu(), 0);
    if (!a) return NULL;
    flat_0d(CK_ARR(a), arg, axis, &none);
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = arg ? ck_argsort(&out, CK_ARR(a), axis, none, 1, descending)
            : ck_sort(&out, CK_ARR(a), axis, none, 1, descending);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

static PyObject *f_sort(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return sort_common(args, kw, 0); }
static PyObject *f_argsort(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return sort_common(args, kw, 1); }

static PyObject *partition_common(PyObject *args, PyObject *kw, int arg)
{
    static char *kwlist[] = {"a", "kth", "axis", "kind", "order", NULL};
    PyObject *a_obj, *kth_obj, *axis_obj = NULL, *kind = NULL, *order = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOO", kwlist, &a_obj, &kth_obj, &axis_obj, &kind, &order))
        return NULL;
    if (check_kind(kind, order) < 0) return NULL;
    int axis = -1, none = 0;
    /* np.partition reads its axis in Python, argpartition in C */
    if (axis_obj && axis_obj != Py_None && !arg) {
        if (ck_py_axis_index(axis_obj, &axis) < 0) return NULL;
    } else if (axis_obj && ck_py_axis_or_none(axis_obj, &axis, &none) < 0) {
        return NULL;
    }
    int64_t kth[256];
    int nkth = 0;
    PyObject *k0 = NULL;
    if (PyIndex_Check(kth_obj) && !PyList_Check(kth_obj) && !PyTuple_Check(kth_obj) &&
        (!PySequence_Check(kth_obj) || (k0 = PyNumber_Index(kth_obj)) != NULL)) {
        Py_XDECREF(k0);
        if (kth_item(kth_obj, &kth[nkth++]) < 0) return NULL;
    } else if (PyUnicode_Check(kth_obj) || PyBytes_Check(kth_obj)) {
        PyErr_SetString(PyExc_TypeError, "Partition index must be integer");
        return NULL;
    } else {
        PyErr_Clear();
        PyObject *seq = PySequence_Fast(kth_obj, "Partition index must be integer");
        if (!seq) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n > 256) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "too many kth values (at most 256)"); return NULL; }
        if (n == 0) {   /* NumPy's empty kth is a float array */
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "Partition index must be integer");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
            if (PySequence_Check(x) && !PyIndex_Check(x)) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "kth must be an integer or a 1-d sequence of integers");
                return NULL;
            }
            if (kth_item(x, &kth[nkth++]) < 0) { Py_DECREF(seq); return NULL; }
        }
        Py_DECREF(seq);
    }
    PyObject *a = as_array(a_obj, ck_device_cpu(), 0);
    if (!a) return NULL;
    flat_0d(CK_ARR(a), arg, axis, &none);
    ck_array out;
    ck_status s = ck_partition(&out, CK_ARR(a), kth, nkth, axis, none, arg);
    Py_DECREF(a);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

static PyObject *f_partition(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return partition_common(args, kw, 0); }
static PyObject *f_argpartition(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return partition_common(args, kw, 1); }

static PyObject *f_searchsorted(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"a", "v", "side", "sorter", NULL};
    PyObject *a_obj, *v_obj, *side = NULL, *sorter_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO", kwlist, &a_obj, &v_obj, &side, &sorter_obj)) return NULL;
    int right = 0;
    if (side && !PyUnicode_Check(side)) {
        PyErr_Format(PyExc_TypeError, "search side must be str, not %.50s", Py_TYPE(side)->tp_name);
        return NULL;
    }
    if (side) {
        const char *sd = PyUnicode_AsUTF8(side);
        if (sd && !strcmp(sd, "right")) right = 1;
        else if (!sd || strcmp(sd, "left") != 0) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "side must be 'left' or 'right' (got %R)", side);
            return NULL;
        }
    }
    PyObject *a = as_array(a_obj, ck_device_cpu(), 0);
    if (!a) return NULL;
    ck_device dev = ck_array_device(CK_ARR(a));
    PyObject *v = as_array(v_obj, dev, 1);
    PyObject *sorter = v && sorter_obj != Py_None ? as_array(sorter_obj, dev, 1) : NULL;
    if (!v || (sorter_obj != Py_None && !sorter)) {
        Py_DECREF(a); Py_XDECREF(v);
        return NULL;
    }
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_searchsorted(&out, CK_ARR(a), CK_ARR(v), right, sorter ? CK_ARR(sorter) : NULL);
    Py_END_ALLOW_THREADS
    Py_DECREF(a); Py_DECREF(v); Py_XDECREF(sorter);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

static PyObject *f_histogram(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"x", "nbins", "weights", "edges", "uniform", NULL};
    PyObject *x_obj, *w_obj = Py_None, *e_obj = Py_None;
    long long nbins;
    int uniform = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OL|OOp:_histogram", kwlist, &x_obj, &nbins, &w_obj, &e_obj, &uniform))
        return NULL;
    PyObject *x = as_array(x_obj, ck_device_cpu(), 0);
    if (!x) return NULL;
    ck_device dev = ck_array_device(CK_ARR(x));
    PyObject *w = w_obj != Py_None ? as_array(w_obj, dev, 1) : NULL;
    PyObject *e = e_obj != Py_None ? as_array(e_obj, dev, 1) : NULL;
    if ((w_obj != Py_None && !w) || (e_obj != Py_None && !e)) {
        Py_DECREF(x); Py_XDECREF(w); Py_XDECREF(e);
        return NULL;
    }
    ck_array out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_histogram(&out, CK_ARR(x), w ? CK_ARR(w) : NULL, e ? CK_ARR(e) : NULL, (int64_t)nbins, uniform);
    Py_END_ALLOW_THREADS
    Py_DECREF(x); Py_XDECREF(w); Py_XDECREF(e);
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

PyMethodDef ck_py_sort_functions[] = {
    CK_DEF_KW(sort, f_sort, "(a, axis=-1, kind=None, order=None, *, stable=None, descending=False)",
              "A sorted copy along axis (flattened when axis is None), NaNs last."),
    CK_DEF_KW(argsort, f_argsort, "(a, axis=-1, kind=None, order=None, *, stable=None, descending=False)",
              "The indices that sort a along axis (flattened when axis is None)."),
    CK_DEF_KW(partition, f_partition, "(a, kth, axis=-1, kind=None, order=None)",
              "A copy with the kth element where sorting puts it, smaller ones before and larger after."),
    CK_DEF_KW(argpartition, f_argpartition, "(a, kth, axis=-1, kind=None, order=None)",
              "The indices that partition a (as partition)."),
    CK_DEF_KW(searchsorted, f_searchsorted, "(a, v, side='left', sorter=None)",
              "The insertion points of v into the sorted 1-d a."),
    CK_DEF_KW(_histogram, f_histogram, "(x, nbins, weights=None, edges=None, uniform=False)",
              "int64 counts (float64 sums of weights) of x's values in nbins bins: x's integers themselves (bincount) "
              "or NumPy's histogram bins of the edges."),
    {NULL, NULL, 0, NULL},
};
