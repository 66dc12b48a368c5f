/* Reductions as module functions and as array methods. */
#include "ck_python.h"

#include <string.h>

typedef enum { R_PLAIN, R_NODTYPE, R_ARG, R_MEAN, R_VAR, R_STD, R_SCAN, R_COUNT } red_kind;

typedef struct red_spec {
    const char *name;
    red_kind kind;
    ck_reduce_op op;
} red_spec;

static int keepdims_from_obj(PyObject *o)
{
    if (PyBool_Check(o)) return o == Py_True;
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int r = PyObject_IsTrue(i);
    Py_DECREF(i);
    return r;
}

/* NumPy's ufunc name of each reduction, for its messages. */
static const char *ufunc_of(const red_spec *sp)
{
    switch (sp->op) {
    case CK_REDUCE_SUM: return "add";
    case CK_REDUCE_PROD: return "multiply";
    case CK_REDUCE_MIN: return "minimum";
    case CK_REDUCE_MAX: return "maximum";
    case CK_REDUCE_ALL: return "logical_and";
    case CK_REDUCE_ANY: return "logical_or";
    default: return sp->name;
    }
}

/* out= must have the result's shape (NumPy does not broadcast a
 * reduction's out); std's result comes from sqrt, whose out= is cast
 * same_kind; a complex result into a real out= drops the imaginary part
 * with a ComplexWarning.  0, or -1 with the exception set. */
static int check_out(const red_spec *sp, const ck_array *a, const ck_array *res, const ck_array *out)
{
    if (out->ndim != res->ndim || memcmp(out->shape, res->shape, (size_t)res->ndim * sizeof *res->shape)) {
        if (sp->kind == R_ARG)
            PyErr_Format(PyExc_ValueError, "output array does not match result of np.%s.", sp->name);
        else if (out->ndim != res->ndim)
            PyErr_Format(PyExc_ValueError, "output parameter for reduction operation %s has the wrong number of "
                         "dimensions: Found %d but expected %d", ufunc_of(sp), out->ndim, res->ndim);
        else
            PyErr_Format(PyExc_ValueError, "output parameter for reduction operation %s has shape %s, expected %s",
                         ufunc_of(sp), ck_shape_str(out->ndim, out->shape, 0), ck_shape_str(res->ndim, res->shape, 1));
        return -1;
    }
    if (sp->kind == R_ARG && !ck_dtype_can_cast_safe(out->dtype, CK_INT64)) {
        /* NumPy writes the indices through an intp view of out */
        PyErr_Format(PyExc_TypeError, "Cannot cast array data from dtype('%s') to dtype('int64') according to the "
                     "rule 'safe'", ck_dtype_get_info(out->dtype)->name);
        return -1;
    }
    if (sp->kind == R_STD && !ck_dtype_can_cast_same_kind(res->dtype, out->dtype)) {
        PyErr_Format(ck_py_exc(CK_PY_UFUNC_OUTPUT_CAST), "Cannot cast ufunc 'sqrt' output from dtype('%s') to "
                     "dtype('%s') with casting rule 'same_kind'", ck_dtype_get_info(res->dtype)->name,
                     ck_dtype_get_info(out->dtype)->name);
        return -1;
    }
    (void)a;
    if (ck_dtype_is_complex(res->dtype) && !ck_dtype_is_complex(out->dtype) &&
        PyErr_WarnEx(ck_py_exc(CK_PY_COMPLEX_WARNING), "Casting complex values to real discards the imaginary part", 1) < 0)
        return -1;
    return 0;
}

/* The array argument (self for methods) and the keywords of each kind. */
static PyObject *reduce_impl(const red_spec *sp, PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *a_obj = self, *axis = Py_None, *dt = Py_None, *out = Py_None, *initial = NULL, *where = NULL;
    PyObject *correction = Py_None, *ddof_obj = NULL;
    int keepdims = 0;
    PyObject *keep_obj = NULL;
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
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOOOOO", kw_plain + 1, &axis, &dt, &out, &keep_obj, &initial, &where)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOOO", kw_plain, &a_obj, &axis, &dt, &out, &keep_obj, &initial, &where);
        break;
    case R_NODTYPE:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO", kw_nodt + 1, &axis, &out, &keep_obj, &initial, &where)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOO", kw_nodt, &a_obj, &axis, &out, &keep_obj, &initial, &where);
        break;
    case R_ARG:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OO$p", kw_arg + 1, &axis, &out, &keepdims)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OO$p", kw_arg, &a_obj, &axis, &out, &keepdims);
        break;
    case R_VAR: case R_STD:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOOOO$OO", kw_var + 1, &axis, &dt, &out, &ddof_obj, &keep_obj, &where, &correction)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOOOO$OO", kw_var, &a_obj, &axis, &dt, &out, &ddof_obj, &keep_obj, &where, &correction);
        break;
    case R_SCAN:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|OOO", kw_scan + 1, &axis, &dt, &out)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|OOO", kw_scan, &a_obj, &axis, &dt, &out);
        break;
    default:
        ok = m ? PyArg_ParseTupleAndKeywords(args, kw, "|O$O", kw_count + 1, &axis, &keep_obj)
               : PyArg_ParseTupleAndKeywords(args, kw, "O|O$O", kw_count, &a_obj, &axis, &keep_obj);
        break;
    }
    if (!ok) return NULL;
    /* NumPy's reductions take keepdims as an integer (argmin/argmax by
     * truth, parsed above) */
    if (keep_obj && (keepdims = keepdims_from_obj(keep_obj)) < 0) return NULL;
    if ((initial && initial != Py_None) || (where && where != Py_True)) {
        /* a masked reduction is a composition of ops (where, then the
         * plain reduction): python/cudakit/_numpy_extra.py */
        if (ddof_obj && correction != Py_None) {
            PyErr_SetString(PyExc_ValueError, "ddof and correction can't be provided simultaneously.");
            return NULL;
        }
        PyObject *mod = PyImport_ImportModule("cudakit._numpy_extra");
        if (!mod) return NULL;
        PyObject *r = PyObject_CallMethod(mod, "_reduce_masked", "sOOOOiOOOO", sp->name, a_obj, axis, dt, out,
                                          keepdims, initial ? initial : Py_None, where ? where : Py_True,
                                          ddof_obj ? ddof_obj : Py_None, correction);
        Py_DECREF(mod);
        return r;
    }
    if (ddof_obj && correction != Py_None) {
        PyErr_SetString(PyExc_ValueError, "ddof and correction can't be provided simultaneously.");
        return NULL;
    }
    if (ddof_obj == Py_None) {
        PyErr_SetString(PyExc_TypeError, "'<=' not supported between instances of 'int' and 'NoneType'");
        return NULL;
    }
    if (ddof_obj) {
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
    if (dtype != CK_DTYPE_INVALID && ck_dtype_is_complex(a->dtype) && !ck_dtype_is_complex(dtype) &&
        (sp->kind == R_PLAIN || sp->kind == R_MEAN || sp->kind == R_SCAN) &&
        PyErr_WarnEx(ck_py_exc(CK_PY_COMPLEX_WARNING), "Casting complex values to real discards the imaginary part", 1) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
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
    if (out) {
        ck_ag_bump_version(CK_ARR(out));
        if (CK_AG_GATE() && (CK_ARR(out) == a || ((CkArrayObject *)arr)->ag || ((CkArrayObject *)out)->ag)) {
            if (ck_py_ag_inplace_check(out, ((CkArrayObject *)arr)->ag != NULL) < 0) goto done;
            if (((CkArrayObject *)arr)->ag && ((CkArrayObject *)arr)->ag->requires_grad) {
                PyErr_Format(PyExc_RuntimeError, "%s(): functions with out=... arguments don't support automatic "
                             "differentiation, but one of the arguments requires grad.", sp->name);
                goto done;
            }
        }
    }

    if (sp->kind == R_SCAN) {
        int ax = 0;
        const ck_array *src = a;
        if (axis == Py_None) {   /* over the flattened array */
            int64_t n = a->size;
            s = ck_array_reshape(&flat, a, 1, &n, 0);
            if (s != CK_OK) { ck_py_raise(s); goto done; }
            src = &flat;
        } else {
            if (ck_py_axis_mask(axis, a->ndim, 0, &mask) < 0) goto done;
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
        if (ck_py_axis_mask(axis, a->ndim, 0, &mask) < 0) goto done;
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
            int bad = check_out(sp, a, &tmp, CK_ARR(out));
            if (!bad) s = ck_array_assign(CK_ARR(out), &tmp);
            ck_array_release(&tmp);
            if (bad) goto done;
        }
    }
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    result = out ? Py_NewRef(out) : ck_py_wrap(&res, NULL);
    if (CK_AG_GATE() && result && !out) {
        if (sp->kind == R_SCAN && sp->op == CK_REDUCE_SUM)
            result = ck_py_ag_scan(sp->name, arr, axis == Py_None ? 0 : __builtin_ctzll(mask), axis == Py_None, result);
        else if (sp->kind == R_SCAN || sp->kind == R_COUNT) result = ck_py_ag_missing(sp->name, 1, &arr, result);
        else result = ck_py_ag_reduce(sp->name, arr, mask, keepdims, ddof, result);
    }
done:
    Py_DECREF(arr);
    return result;
}

/* Each row: the name, its kind, the op, the parameters after the array
 * (the function's "a", the method's self) as the kind's keyword list above
 * reads them, and the docstring.  initial=None and where=True are the
 * plain reduction (anything else goes to _reduce_masked). */
#define CK_RED_PLAIN_ "axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True"
#define CK_RED_NODT_ "axis=None, out=None, keepdims=False, initial=None, where=True"
#define CK_RED_ARG_ "axis=None, out=None, *, keepdims=False"
#define CK_RED_VAR_ "axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, correction=None"
#define CK_RED_SCAN_ "axis=None, dtype=None, out=None"
#define CK_RED_COUNT_ "axis=None, *, keepdims=False"
#define CK_REDUCTIONS(X) \
    X(sum, R_PLAIN, CK_REDUCE_SUM, CK_RED_PLAIN_, "Sum of elements over the given axes.") \
    X(prod, R_PLAIN, CK_REDUCE_PROD, CK_RED_PLAIN_, "Product of elements over the given axes.") \
    X(min, R_NODTYPE, CK_REDUCE_MIN, CK_RED_NODT_, "Minimum over the given axes (NaN propagates).") \
    X(max, R_NODTYPE, CK_REDUCE_MAX, CK_RED_NODT_, "Maximum over the given axes (NaN propagates).") \
    X(all, R_NODTYPE, CK_REDUCE_ALL, CK_RED_NODT_, "Whether all elements are true.") \
    X(any, R_NODTYPE, CK_REDUCE_ANY, CK_RED_NODT_, "Whether any element is true.") \
    X(argmin, R_ARG, CK_REDUCE_ARGMIN, CK_RED_ARG_, "Index of the minimum (flattened when axis is None).") \
    X(argmax, R_ARG, CK_REDUCE_ARGMAX, CK_RED_ARG_, "Index of the maximum (flattened when axis is None).") \
    X(mean, R_MEAN, CK_REDUCE_SUM, CK_RED_PLAIN_, "Arithmetic mean over the given axes.") \
    X(var, R_VAR, CK_REDUCE_SUM, CK_RED_VAR_, "Variance (ddof or correction) over the given axes.") \
    X(std, R_STD, CK_REDUCE_SUM, CK_RED_VAR_, "Standard deviation (ddof or correction) over the given axes.") \
    X(cumsum, R_SCAN, CK_REDUCE_SUM, CK_RED_SCAN_, "Cumulative sum along an axis (flattened when axis is None).") \
    X(cumprod, R_SCAN, CK_REDUCE_PROD, CK_RED_SCAN_, "Cumulative product along an axis (flattened when axis is None).") \
    X(count_nonzero, R_COUNT, CK_REDUCE_COUNT_NONZERO, CK_RED_COUNT_, "Number of non-zero elements over the given axes.")

#define CK_RED_SPEC_(name, kind, op, params, doc) static const red_spec spec_##name = {#name, kind, op};
CK_REDUCTIONS(CK_RED_SPEC_)

#define CK_RED_FN_(name, kind, op, params, doc)                                               \
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

#define CK_RED_FN_ENTRY_(name, kind, op, params, doc) CK_DEF_KW(name, fn_##name, "(a, " params ")", doc),
#define CK_RED_METH_ENTRY_(name, kind, op, params, doc) CK_DEF_KW(name, meth_##name, "($self, /, " params ")", doc),

PyMethodDef ck_py_reduce_functions[] = {
    CK_REDUCTIONS(CK_RED_FN_ENTRY_)
    {NULL, NULL, 0, NULL},
};

PyMethodDef ck_py_reduce_methods[] = {
    CK_REDUCTIONS(CK_RED_METH_ENTRY_)
    {NULL, NULL, 0, NULL},
};
