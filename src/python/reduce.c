/* Reductions as module functions and as array methods. */
#include "ck_python.h"

#include <string.h>

typedef enum { R_PLAIN, R_NODTYPE, R_ARG, R_MEAN, R_VAR, R_STD, R_SCAN, R_COUNT } red_kind;

typedef struct red_spec {
    const char *name;
    red_kind kind;
    ck_reduce_op op;
} red_spec;

/* The array argument (self for methods) and the keywords of each kind. */
static PyObject *reduce_impl(const red_spec *sp, PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *a_obj = self, *axis = Py_None, *dt = Py_None, *out = Py_None, *initial = NULL, *where = NULL;
    PyObject *correction = Py_None, *ddof_obj = NULL;
    int keepdims = 0;
    double ddof = 0;
    int ok;
    static char *kw_plain[] = {"a", "axis", "dtype", "out", "keepdims", "initial", "where", NULL};
    static char *kw_nodt[] = {"a", "axis", "out", "keepdims", "initial", "where", NULL};
    static char *kw_arg[] = {"a", "axis", "out", "keepdims", NULL};
    static char *kw_var[] = {"a", "axis", "dtype", "out", "ddof", "keepdims", "where", "correction", NULL};
    static char *kw_scan[] = {"a", "axis", "dtype", "out", NULL};
    static char *kw_count[] = {"a", "axis", "keepdims", NULL};
    /* methods skip the leading "a" */
    int m = self != NULL;
    switch (sp->kind) {
    case R_PLAIN: case R_MEAN:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOOpOO", kw_plain + 1, &axis, &dt, &out, &keepdims, &initial, &where)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOOpOO", kw_plain, &a_obj, &axis, &dt, &out, &keepdims, &initial, &where);
        break;
    case R_NODTYPE:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOpOO", kw_nodt + 1, &axis, &out, &keepdims, &initial, &where)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOpOO", kw_nodt, &a_obj, &axis, &out, &keepdims, &initial, &where);
        break;
    case R_ARG:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OO$p", kw_arg + 1, &axis, &out, &keepdims)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OO$p", kw_arg, &a_obj, &axis, &out, &keepdims);
        break;
    case R_VAR: case R_STD:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOOOp$OO", kw_var + 1, &axis, &dt, &out, &ddof_obj, &keepdims, &where, &correction)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOp$OO", kw_var, &a_obj, &axis, &dt, &out, &ddof_obj, &keepdims, &where, &correction);
        break;
    case R_SCAN:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOO", kw_scan + 1, &axis, &dt, &out)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOO", kw_scan, &a_obj, &axis, &dt, &out);
        break;
    default:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|O$p", kw_count + 1, &axis, &keepdims)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|O$p", kw_count, &a_obj, &axis, &keepdims);
        break;
    }
    if (!ok) return NULL;
    if ((initial && initial != Py_None) || (where && where != Py_True)) {
        PyErr_Format(PyExc_NotImplementedError, "%s(): the initial= and where= arguments are not implemented yet", sp->name);
        return NULL;
    }
    if (ddof_obj && ddof_obj != Py_None && correction != Py_None) {
        PyErr_SetString(PyExc_ValueError, "ddof and correction can't be provided simultaneously.");
        return NULL;
    }
    if (ddof_obj && ddof_obj != Py_None) {
        ddof = PyFloat_AsDouble(ddof_obj);
        if (ddof == -1.0 && PyErr_Occurred()) return NULL;
    }
    if (correction != Py_None) {
        ddof = PyFloat_AsDouble(correction);
        if (ddof == -1.0 && PyErr_Occurred()) return NULL;
    }
    ck_dtype dtype;
    if (ck_py_dtype_from_obj(dt, CK_DTYPE_INVALID, &dtype) < 0) return NULL;
    if (out == Py_None) out = NULL;
    if (out && !CkArray_Check(out)) {
        PyErr_SetString(PyExc_TypeError, "output must be a cudakit array");
        return NULL;
    }
    if (sp->kind == R_SCAN && axis != Py_None && (!PyIndex_Check(axis) || PyBool_Check(axis))) {
        PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer", Py_TYPE(axis)->tp_name);
        return NULL;
    }
    PyObject *arr = ck_py_asarray(a_obj, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!arr) return NULL;
    const ck_array *a = CK_ARR(arr);
    /* NumPy lets reductions of a 0-d array name axis 0 or -1 (an integer,
     * not a tuple), as if it were 1-d; mean/var/std do not */
    if (a->ndim == 0 && axis != Py_None && PyIndex_Check(axis) && !PyBool_Check(axis) &&
        sp->kind != R_MEAN && sp->kind != R_VAR && sp->kind != R_STD) {
        Py_ssize_t v = PyNumber_AsSsize_t(axis, NULL);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        } else if (v == 0 || v == -1) {
            axis = Py_None;
        }
    }
    ck_array res, flat;
    ck_status s = CK_OK;
    uint64_t mask = 0;
    PyObject *result = NULL;
    int nogil = a->size >= CK_PY_NOGIL_MIN;

    if (sp->kind == R_SCAN) {
        int ax = 0;
        const ck_array *src = a;
        if (axis == Py_None) {   /* over the flattened array */
            int64_t n = a->size;
            s = ck_array_reshape(&flat, a, 1, &n, 0);
            if (s != CK_OK) { ck_py_raise(s); goto done; }
            src = &flat;
        } else {
            if (ck_py_axis_mask(axis, a->ndim, &mask) < 0) goto done;
            ax = __builtin_ctzll(mask);
        }
        Py_BEGIN_ALLOW_THREADS
        s = ck_scan(sp->op, src, ax, dtype, out ? CK_ARR(out) : &res, out != NULL);
        Py_END_ALLOW_THREADS
        if (src == &flat) ck_array_release(&flat);
    } else {
        if (sp->kind == R_ARG && axis != Py_None && !PyIndex_Check(axis)) {
            PyErr_SetString(PyExc_TypeError, "axis must be an integer or None");
            goto done;
        }
        if (ck_py_axis_mask(axis, a->ndim, &mask) < 0) goto done;
        ck_array tmp;
        ck_array *dst = out ? &tmp : &res;
        if (nogil) {
            Py_BEGIN_ALLOW_THREADS
            switch (sp->kind) {
            case R_MEAN: s = ck_mean(a, mask, keepdims, dtype, dst); break;
            case R_VAR: case R_STD: s = ck_var(a, mask, keepdims, ddof, dtype, sp->kind == R_STD, dst); break;
            default: s = ck_reduce(sp->op, a, mask, keepdims, dtype, dst, 0); break;
            }
            Py_END_ALLOW_THREADS
        } else {
            switch (sp->kind) {
            case R_MEAN: s = ck_mean(a, mask, keepdims, dtype, dst); break;
            case R_VAR: case R_STD: s = ck_var(a, mask, keepdims, ddof, dtype, sp->kind == R_STD, dst); break;
            default: s = ck_reduce(sp->op, a, mask, keepdims, dtype, dst, 0); break;
            }
        }
        if (s == CK_OK && out) {
            s = ck_array_assign(CK_ARR(out), &tmp);
            ck_array_release(&tmp);
        }
    }
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    result = out ? Py_NewRef(out) : ck_py_wrap(&res, NULL);
done:
    Py_DECREF(arr);
    return result;
}

#define CK_REDUCTIONS(X) \
    X(sum, R_PLAIN, CK_REDUCE_SUM, "Sum of elements over the given axes.") \
    X(prod, R_PLAIN, CK_REDUCE_PROD, "Product of elements over the given axes.") \
    X(min, R_NODTYPE, CK_REDUCE_MIN, "Minimum over the given axes (NaN propagates).") \
    X(max, R_NODTYPE, CK_REDUCE_MAX, "Maximum over the given axes (NaN propagates).") \
    X(all, R_NODTYPE, CK_REDUCE_ALL, "Whether all elements are true.") \
    X(any, R_NODTYPE, CK_REDUCE_ANY, "Whether any element is true.") \
    X(argmin, R_ARG, CK_REDUCE_ARGMIN, "Index of the minimum (flattened when axis is None).") \
    X(argmax, R_ARG, CK_REDUCE_ARGMAX, "Index of the maximum (flattened when axis is None).") \
    X(mean, R_MEAN, CK_REDUCE_SUM, "Arithmetic mean over the given axes.") \
    X(var, R_VAR, CK_REDUCE_SUM, "Variance (ddof or correction) over the given axes.") \
    X(std, R_STD, CK_REDUCE_SUM, "Standard deviation (ddof or correction) over the given axes.") \
    X(cumsum, R_SCAN, CK_REDUCE_SUM, "Cumulative sum along an axis (flattened when axis is None).") \
    X(cumprod, R_SCAN, CK_REDUCE_PROD, "Cumulative product along an axis (flattened when axis is None).") \
    X(count_nonzero, R_COUNT, CK_REDUCE_COUNT_NONZERO, "Number of non-zero elements over the given axes.")

#define CK_RED_SPEC_(name, kind, op, doc) static const red_spec spec_##name = {#name, kind, op};
CK_REDUCTIONS(CK_RED_SPEC_)

#define CK_RED_FN_(name, kind, op, doc)                                               \
static PyObject *fn_##name(PyObject *m, PyObject *args, PyObject *kw)                 \
{                                                                                     \
    (void)m;                                                                          \
    return reduce_impl(&spec_##name, NULL, args, kw);                                 \
}                                                                                     \
static PyObject *meth_##name(PyObject *self, PyObject *args, PyObject *kw)            \
{                                                                                     \
    return reduce_impl(&spec_##name, self, args, kw);                                 \
}
CK_REDUCTIONS(CK_RED_FN_)

#define CK_RED_FN_ENTRY_(name, kind, op, doc) \
    {#name, (PyCFunction)(void (*)(void))fn_##name, METH_VARARGS | METH_KEYWORDS, doc},
#define CK_RED_METH_ENTRY_(name, kind, op, doc) \
    {#name, (PyCFunction)(void (*)(void))meth_##name, METH_VARARGS | METH_KEYWORDS, doc},

PyMethodDef ck_py_reduce_functions[] = {
    CK_REDUCTIONS(CK_RED_FN_ENTRY_)
    {NULL, NULL, 0, NULL},
};

PyMethodDef ck_py_reduce_methods[] = {
    CK_REDUCTIONS(CK_RED_METH_ENTRY_)
    {NULL, NULL, 0, NULL},
};
