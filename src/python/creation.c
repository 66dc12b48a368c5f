/* Creation functions: asarray/array, empty/zeros/ones/full and their _like
 * forms, arange, linspace, eye, asnumpy, and dtype queries. */
#include "ck_python.h"

#include <math.h>
#include <string.h>

static int parse_copy(PyObject *copy, int *out)
{
    if (!copy || copy == Py_None) { *out = -1; return 0; }
    int v = PyObject_IsTrue(copy);
    if (v < 0) return -1;
    *out = v;
    return 0;
}

/* order= of array/asarray: 'C' and 'F' ask for that layout (a copy when r
 * lacks it), 'A' and 'K' keep a Fortran-ordered source Fortran-ordered. */
static PyObject *apply_order(PyObject *r, PyObject *src, PyObject *order, int copy)
{
    if (!r || !order || order == Py_None) return r;
    const char *o = PyUnicode_Check(order) ? PyUnicode_AsUTF8(order) : NULL;
    if (!o || !o[0] || o[1] || !strchr("CFAKcfak", o[0])) {
        Py_DECREF(r);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "order must be one of 'C', 'F', 'A', or 'K'");
        return NULL;
    }
    const ck_array *a = CK_ARR(r);
    int want_f;
    switch (o[0]) {
    case 'C': case 'c': want_f = 0; break;
    case 'F': case 'f': want_f = 1; break;
    default: {
        if (r == src || !CkArray_Check(src)) return r;
        int sf = CK_ARR(src)->flags;
        if (!((sf & CK_ARRAY_F_CONTIGUOUS) && !(sf & CK_ARRAY_C_CONTIGUOUS))) return r;
        want_f = 1;
        break;
    }
    }
    int flag = want_f ? CK_ARRAY_F_CONTIGUOUS : CK_ARRAY_C_CONTIGUOUS;
    if (a->flags & flag) return r;
    if (copy == 0) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as requested.");
        return NULL;
    }
    ck_array out;
    ck_status s = ck_array_astype(&out, a, a->dtype, want_f);
    Py_DECREF(r);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&out, NULL);
}

static PyObject *f_asarray(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *dt = Py_None, *device = Py_None, *copy = Py_None, *order = Py_None;
    static char *kwlist[] = {"obj", "dtype", "device", "copy", "order", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO$OO", kwlist, &obj, &dt, &device, &copy, &order)) return NULL;
    ck_dtype t;
    ck_device dev;
    int has, cp;
    if (ck_py_dtype_from_obj(dt, CK_DTYPE_INVALID, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0 ||
        parse_copy(copy, &cp) < 0)
        return NULL;
    return apply_order(ck_py_asarray(obj, t, cp, has, dev), obj, order, cp);
}

static PyObject *f_array(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *dt = Py_None, *device = Py_None, *copy = Py_True, *order = Py_None;
    int ndmin = 0;
    static char *kwlist[] = {"object", "dtype", "copy", "order", "ndmin", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O$OOiO", kwlist, &obj, &dt, &copy, &order, &ndmin, &device)) return NULL;
    ck_dtype t;
    ck_device dev;
    int has, cp;
    if (ck_py_dtype_from_obj(dt, CK_DTYPE_INVALID, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0 ||
        parse_copy(copy, &cp) < 0)
        return NULL;
    if (cp == -1) cp = -1; else if (cp == 1) cp = 1; else cp = 0;
    PyObject *r = apply_order(ck_py_asarray(obj, t, copy == Py_None ? -1 : cp, has, dev), obj, order,
                              copy == Py_None ? -1 : cp);
    if (!r || ndmin <= CK_ARR(r)->ndim) return r;
    if (ndmin > CK_MAXDIMS) { Py_DECREF(r); PyErr_SetString(PyExc_ValueError, "ndmin bigger than allowable number of dimensions"); return NULL; }
    ck_array *a = CK_ARR(r), v;
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    int pad = ndmin - a->ndim;
    for (int i = 0; i < ndmin; i++) {
        shape[i] = i < pad ? 1 : a->shape[i - pad];
        strides[i] = i < pad ? 0 : a->strides[i - pad];
    }
    ck_array_view(&v, a);
    ck_array_set_layout(&v, ndmin, shape, strides);
    PyObject *res = ck_py_wrap_view(&v, r);
    Py_DECREF(r);
    return res;
}

/* shape, dtype, device of the creation functions */
static int creation_args(PyObject *shape, PyObject *dt, PyObject *device, ck_dtype dflt,
                         int *nd, int64_t *sh, ck_dtype *t, ck_device *dev)
{
    int has;
    if (ck_py_shape_from_obj(shape, nd, sh) < 0 || ck_py_dtype_from_obj(dt, dflt, t) < 0 ||
        ck_py_device_from_obj(device, dev, &has) < 0)
        return -1;
    if (!has) *dev = ck_py_default_device();
    return 0;
}

/* order= of the creation functions: 'C' or 'F', and for the *_like ones
 * also 'A' and 'K' (like's layout); None is 'C' (like: 'K').  Sets *code. */
static int parse_order(PyObject *order, int like, char *code)
{
    *code = like ? 'K' : 'C';
    if (ck_py_order_code(order, code) < 0) return -1;
    if (!like && (*code == 'A' || *code == 'K')) {
        PyErr_SetString(PyExc_ValueError, "only 'C' or 'F' order is permitted");
        return -1;
    }
    return 0;
}

/* The strides of an array made in order code ('C' gives NULL: the default
 * layout), like's layout for 'A' and 'K' when it has nd dims. */
static const int64_t *order_strides(char code, int nd, const int64_t *sh, ck_dtype t, const ck_array *like,
                                    int64_t *buf)
{
    int isz = ck_dtype_get_info(t)->itemsize;
    if (code == 'A' && like)
        code = (like->flags & CK_ARRAY_F_CONTIGUOUS) && !(like->flags & CK_ARRAY_C_CONTIGUOUS) ? 'F' : 'C';
    if (code == 'F') {
        ck_strides_f(nd, sh, isz, buf);
        return buf;
    }
    if (code == 'K' && like && like->ndim == nd && nd > 1) {
        ck_strides_like(nd, sh, isz, like->strides, buf);
        return buf;
    }
    return NULL;
}

/* A new array of shape sh (strides: NULL for C order) holding value (NULL:
 * uninitialised; a scalar; an array broadcast to the shape). */
static PyObject *make_filled(int nd, const int64_t *sh, ck_dtype t, ck_device dev, PyObject *value,
                             const int64_t *strides)
{
    ck_scalar v;
    int weak = 0;
    PyObject *src = NULL;
    if (value) {
        int r = ck_py_scalar_from_obj(value, &v, &weak);
        if (r < 0) {
            if (!(ck_dtype_is_inexact(t) && ck_py_big_int_as_float(value, &v) == 0)) return NULL;
            r = 0;
        }
        if (r > 0 && !(src = ck_py_asarray(value, CK_DTYPE_INVALID, -1, 1, dev))) return NULL;   /* an array: broadcast it */
        /* a Python int must fit an integer dtype (NumPy 2: OverflowError) */
        if (r == 0 && weak && ck_dtype_is_integer(v.dtype) && ck_dtype_is_integer(t)) {
            ck_status c = ck_check_pyint_fits(&v, t);
            if (c != CK_OK) return ck_py_raise(c);
        }
        if (!ck_dtype_is_complex(t) && ck_dtype_is_complex(src ? CK_ARR(src)->dtype : r == 0 ? v.dtype : t) &&
            PyErr_WarnEx(ck_py_exc(CK_PY_COMPLEX_WARNING), "Casting complex values to real discards the imaginary part", 1) < 0) {
            Py_XDECREF(src);
            return NULL;
        }
    }
    ck_array a;
    ck_status s;
    if (value && !src && !strides) {
        s = ck_full(&a, nd, sh, t, &v, dev);
    } else {
        s = ck_array_empty(&a, nd, sh, t, dev);
        if (s == CK_OK && strides) ck_array_set_layout(&a, nd, sh, strides);
        if (s == CK_OK && value) {
            s = src ? ck_array_assign(&a, CK_ARR(src)) : ck_array_fill(&a, &v);
            if (s != CK_OK) ck_array_release(&a);
        }
    }
    Py_XDECREF(src);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&a, NULL);
}

#define CK_FILL_FN_(fname, VALUE)                                                          \
static PyObject *fname(PyObject *m, PyObject *args, PyObject *kw)                          \
{                                                                                          \
    (void)m;                                                                               \
    PyObject *shape, *dt = Py_None, *order = Py_None, *device = Py_None;                   \
    static char *kwlist[] = {"shape", "dtype", "order", "device", NULL};                   \
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO$O", kwlist, &shape, &dt, &order, &device)) \
        return NULL;                                                                       \
    int nd;                                                                                \
    int64_t sh[CK_MAXDIMS];                                                                \
    ck_dtype t;                                                                            \
    ck_device dev;                                                                         \
    char code;                                                                             \
    int64_t st[CK_MAXDIMS];                                                                \
    if (creation_args(shape, dt, device, CK_FLOAT64, &nd, sh, &t, &dev) < 0 ||             \
        parse_order(order, 0, &code) < 0)                                                  \
        return NULL;                                                                       \
    return make_filled(nd, sh, t, dev, VALUE, order_strides(code, nd, sh, t, NULL, st));   \
}

static PyObject *py_zero, *py_one;
CK_FILL_FN_(f_empty, NULL)
CK_FILL_FN_(f_zeros, py_zero)
CK_FILL_FN_(f_ones, py_one)

static PyObject *f_full(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *shape, *value, *dt = Py_None, *order = Py_None, *device = Py_None;
    static char *kwlist[] = {"shape", "fill_value", "dtype", "order", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO$O", kwlist, &shape, &value, &dt, &order, &device)) return NULL;
    ck_dtype dflt = CK_FLOAT64;
    if (dt == Py_None) {
        /* the fill value decides: full((2,), 3) is int64 */
        ck_scalar v;
        int weak;
        int r = ck_py_scalar_from_obj(value, &v, &weak);
        if (r < 0) return NULL;
        if (r == 0) {
            dflt = v.dtype == CK_UINT64 ? CK_UINT64 : v.dtype;
        } else if (CkArray_Check(value)) {
            dflt = CK_ARR(value)->dtype;
        } else {   /* a list: the dtype asarray gives it */
            PyObject *va = ck_py_asarray(value, CK_DTYPE_INVALID, -1, 1, ck_device_cpu());
            if (!va) return NULL;
            dflt = CK_ARR(va)->dtype;
            Py_DECREF(va);
        }
    }
    int nd;
    int64_t sh[CK_MAXDIMS];
    ck_dtype t;
    ck_device dev;
    char code;
    int64_t st[CK_MAXDIMS];
    if (creation_args(shape, dt, device, dflt, &nd, sh, &t, &dev) < 0 || parse_order(order, 0, &code) < 0) return NULL;
    return make_filled(nd, sh, t, dev, value, order_strides(code, nd, sh, t, NULL, st));
}

#define CK_LIKE_FN_(fname, VALUE, HASFILL)                                                 \
static PyObject *fname(PyObject *m, PyObject *args, PyObject *kw)                          \
{                                                                                          \
    (void)m;                                                                               \
    PyObject *proto, *value = VALUE, *dt = Py_None, *order = Py_None, *device = Py_None;   \
    PyObject *shape = Py_None;                                                             \
    int subok = 1;                                                                         \
    static char *kwlist1[] = {"a", "dtype", "order", "subok", "shape", "device", NULL};     \
    static char *kwlist2[] = {"a", "fill_value", "dtype", "order", "subok", "shape", "device", NULL}; \
    if (HASFILL) {                                                                         \
        if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOpO$O", kwlist2, &proto, &value, &dt, &order, \
                                         &subok, &shape, &device)) return NULL;            \
    } else if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOpO$O", kwlist1, &proto, &dt, &order, \
                                            &subok, &shape, &device)) return NULL;         \
    PyObject *a = ck_py_asarray(proto, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());          \
    if (!a) return NULL;                                                                   \
    const ck_array *pa = CK_ARR(a);                                                        \
    int nd = pa->ndim, has;                                                                \
    int64_t sh[CK_MAXDIMS];                                                                \
    memcpy(sh, pa->shape, (size_t)nd * sizeof *sh);                                        \
    ck_dtype t;                                                                            \
    ck_device dev;                                                                         \
    char code;                                                                             \
    int64_t st[CK_MAXDIMS];                                                                \
    if ((shape != Py_None && ck_py_shape_from_obj(shape, &nd, sh) < 0) ||                  \
        ck_py_dtype_from_obj(dt, pa->dtype, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0 || \
        parse_order(order, 1, &code) < 0) {                                                \
        Py_DECREF(a);                                                                      \
        return NULL;                                                                       \
    }                                                                                      \
    if (!has) dev = ck_array_device(pa);                                                   \
    const int64_t *stp = order_strides(code, nd, sh, t, pa, st);                           \
    PyObject *res = make_filled(nd, sh, t, dev, value, stp);                               \
    Py_DECREF(a);                                                                          \
    return res;                                                                            \
}

CK_LIKE_FN_(f_empty_like, NULL, 0)
CK_LIKE_FN_(f_zeros_like, py_zero, 0)
CK_LIKE_FN_(f_ones_like, py_one, 0)
CK_LIKE_FN_(f_full_like, NULL, 1)

/* arange(stop) / arange(start, stop[, step]) with NumPy's length rule
 * ceil((stop - start) / step) and dtype from the arguments. */
static PyObject *f_arange(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *a0 = NULL, *a1 = Py_None, *a2 = Py_None, *dt = Py_None, *device = Py_None, *like = Py_None;
    static char *kwlist[] = {"start", "stop", "step", "dtype", "device", "like", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOO$OO", kwlist, &a0, &a1, &a2, &dt, &device, &like)) return NULL;
    if (!a0) { PyErr_SetString(PyExc_TypeError, "arange() requires stop to be specified."); return NULL; }
    PyObject *vals[3] = {a0, a1, a2};
    ck_scalar sv[3];
    int present[3] = {1, a1 != Py_None, a2 != Py_None};
    ck_dtype inferred = CK_INT64;
    for (int i = 0; i < 3; i++) {
        if (!present[i]) continue;
        int weak;
        int r = ck_py_scalar_from_obj(vals[i], &sv[i], &weak);
        if (r < 0 && PyLong_Check(vals[i]) && PyErr_ExceptionMatches(PyExc_OverflowError)) {
            /* beyond 64 bits: NumPy's arange is then too long, or of objects */
            PyErr_Clear();
            sv[i].dtype = CK_FLOAT64;
            sv[i].v.f = PyLong_AsDouble(vals[i]);
            if (sv[i].v.f == -1.0 && PyErr_Occurred()) return NULL;
            r = 0;
        }
        if (r < 0) return NULL;
        if (r > 0) {
            if (CkArray_Check(vals[i]) && CK_ARR(vals[i])->ndim == 0) {
                PyObject *f = PyNumber_Float(vals[i]);
                if (!f) return NULL;
                sv[i].dtype = CK_ARR(vals[i])->dtype == CK_FLOAT64 || ck_dtype_is_inexact(CK_ARR(vals[i])->dtype) ? CK_FLOAT64 : CK_INT64;
                if (sv[i].dtype == CK_FLOAT64) sv[i].v.f = PyFloat_AsDouble(f);
                else sv[i].v.i = (int64_t)PyFloat_AsDouble(f);
                Py_DECREF(f);
            } else {
                PyErr_SetString(PyExc_TypeError, "arange() arguments must be numbers");
                return NULL;
            }
        }
        if (ck_dtype_is_complex(sv[i].dtype)) {
            PyErr_SetString(PyExc_NotImplementedError, "arange() with complex arguments is not implemented");
            return NULL;
        }
        inferred = ck_dtype_promote(inferred, sv[i].dtype == CK_BOOL ? CK_INT64 : sv[i].dtype);
    }
    double v[3];
    for (int i = 0; i < 3; i++) {
        if (!present[i]) continue;
        switch (ck_dtype_get_info(sv[i].dtype)->kind) {
        case CK_KIND_UINT: v[i] = (double)sv[i].v.u; break;
        case CK_KIND_FLOAT: v[i] = sv[i].v.f; break;
        default: v[i] = (double)sv[i].v.i; break;
        }
    }
    double start = present[1] ? v[0] : 0.0, stop = present[1] ? v[1] : v[0], step = present[2] ? v[2] : 1.0;
    if (step == 0) { PyErr_SetString(PyExc_ZeroDivisionError, "division by zero"); return NULL; }
    ck_dtype t;
    ck_device dev;
    int has;
    if (ck_py_dtype_from_obj(dt, inferred, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    double len = ceil((stop - start) / step);
    if (!(len == len)) { PyErr_SetString(PyExc_ValueError, "arange: cannot compute length"); return NULL; }
    if (len >= 9223372036854775807.0) { PyErr_SetString(PyExc_ValueError, "Maximum allowed size exceeded"); return NULL; }
    int64_t n = len > 0 ? (int64_t)len : 0;
    if (t == CK_BOOL && n > 2) {
        PyErr_SetString(PyExc_TypeError, "arange() is only supported for booleans when the result has at most length 2.");
        return NULL;
    }
    /* Python ints start and stop must fit an integer dtype asked for (NumPy
     * 2; a negative step of an unsigned range is fine) */
    for (int i = 0; i < 2 && ck_dtype_is_integer(t); i++) {
        if (!present[i] || !PyLong_Check(vals[i]) || PyBool_Check(vals[i])) continue;
        ck_status c = ck_check_pyint_fits(&sv[i], t);
        if (c != CK_OK) return ck_py_raise(c);
    }
    ck_array a;
    ck_status s = ck_arange(&a, start, step, n, t, dev);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&a, NULL);
}

static PyObject *f_linspace(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    double start = 0, stop = 0;
    Py_ssize_t num = 50;
    int endpoint = 1, retstep = 0;
    PyObject *start_o, *stop_o, *dt = Py_None, *device = Py_None, *axis_o = NULL;
    static char *kwlist[] = {"start", "stop", "num", "endpoint", "retstep", "dtype", "axis", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|nppOO$O", kwlist, &start_o, &stop_o, &num, &endpoint, &retstep,
                                     &dt, &axis_o, &device))
        return NULL;
    for (int i = 0; i < 2; i++) {
        PyObject *o = i ? stop_o : start_o;
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_TypeError) && !PyUnicode_Check(o) && !PyBytes_Check(o) &&
                (PySequence_Check(o) || PyObject_HasAttrString(o, "__array__"))) {
                PyErr_Clear();
                PyErr_SetString(PyExc_NotImplementedError, "linspace with array start or stop is not implemented");
            }
            return NULL;
        }
        if (i) stop = v;
        else start = v;
    }
    if (axis_o) {   /* the result is 1-d: axis 0 or -1 */
        int axis;
        if (ck_py_axis_index(axis_o, &axis) < 0) return NULL;
        if (axis < -1 || axis > 0) {
            PyErr_Format(ck_py_exc(CK_PY_AXIS_ERROR), "destination: axis %d is out of bounds for array of dimension 1", axis);
            return NULL;
        }
    }
    ck_dtype t;
    ck_device dev;
    int has;
    if (ck_py_dtype_from_obj(dt, CK_FLOAT64, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    if (num < 0) { PyErr_Format(PyExc_ValueError, "Number of samples, %zd, must be non-negative.", num); return NULL; }
    ck_array a;
    ck_status s;
    if (ck_dtype_is_integer(t) || t == CK_BOOL) {
        /* computed in float64 and floored, as NumPy's astype after linspace */
        ck_array f;
        s = ck_linspace(&f, start, stop, num, endpoint, CK_FLOAT64, dev);
        if (s != CK_OK) return ck_py_raise(s);
        ck_operand in = {&f, {0}, 0};
        ck_array fl;
        s = ck_ufunc_apply(CK_OP_FLOOR, 1, &in, &fl, 0, CK_DTYPE_INVALID);
        ck_array_release(&f);
        if (s != CK_OK) return ck_py_raise(s);
        s = ck_array_astype(&a, &fl, t, 0);
        ck_array_release(&fl);
    } else {
        s = ck_linspace(&a, start, stop, num, endpoint, t, dev);
    }
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = ck_py_wrap(&a, NULL);
    if (!r || !retstep) return r;
    double div = endpoint ? (double)(num - 1) : (double)num;
    return Py_BuildValue("(Nd)", r, div > 0 ? (stop - start) / div : NAN);
}

static PyObject *f_eye(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    int64_t n, mm;
    int nd;
    PyObject *no, *mo = Py_None, *ko = NULL, *dt = Py_None, *order = Py_None, *device = Py_None;
    static char *kwlist[] = {"N", "M", "k", "dtype", "order", "device", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOOO$O", kwlist, &no, &mo, &ko, &dt, &order, &device)) return NULL;
    /* N and M are extents of the shape (a bool is not one) */
    if (PyBool_Check(no) || PyBool_Check(mo)) { PyErr_SetString(PyExc_TypeError, "an integer is required"); return NULL; }
    if (!PyIndex_Check(no) || (mo != Py_None && !PyIndex_Check(mo))) {
        PyErr_Format(PyExc_TypeError, "'%.50s' object cannot be interpreted as an integer",
                     Py_TYPE(PyIndex_Check(no) ? mo : no)->tp_name);
        return NULL;
    }
    if (ck_py_shape_from_obj(no, &nd, &n) < 0 || (mo != Py_None && ck_py_shape_from_obj(mo, &nd, &mm) < 0)) return NULL;
    if (mo == Py_None) mm = n;
    if (n < 0 || mm < 0) { PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed"); return NULL; }
    /* any integer k: past the corners every diagonal is empty, so a k
     * beyond int64 (the array API's eye(3, k=2**70)) is zeros */
    int64_t k = 0;
    if (ko && ko != Py_None) {
        PyObject *ki = PyNumber_Index(ko);
        if (!ki) return NULL;
        int over;
        long long kv = PyLong_AsLongLongAndOverflow(ki, &over);
        Py_DECREF(ki);
        if (kv == -1 && PyErr_Occurred()) return NULL;
        k = over > 0 || kv > mm ? mm : over < 0 || kv < -n ? -n : kv;
    }
    ck_dtype t;
    ck_device dev;
    int has;
    char code;
    if (ck_py_dtype_from_obj(dt, CK_FLOAT64, &t) < 0 || ck_py_device_from_obj(device, &dev, &has) < 0 ||
        parse_order(order, 0, &code) < 0)
        return NULL;
    if (!has) dev = ck_py_default_device();
    ck_array a;
    ck_status s = ck_eye(&a, n, mm, k, t, dev);
    if (s != CK_OK) return ck_py_raise(s);
    if (code == 'F' && a.ndim == 2 && a.shape[0] > 1 && a.shape[1] > 1) {
        /* the identity's transpose layout: a copy in Fortran order */
        ck_array f;
        s = ck_array_astype(&f, &a, t, 1);
        ck_array_release(&a);
        if (s != CK_OK) return ck_py_raise(s);
        a = f;
    }
    return ck_py_wrap(&a, NULL);
}

PyObject *ck_py_to_numpy(PyObject *obj, PyObject *out, int copy)
{
    PyObject *np = ck_py_numpy();
    if (!np) return NULL;
    if (!CkArray_Check(obj)) return PyObject_CallMethod(np, copy ? "array" : "asarray", "O", obj);
    /* a GPU array's move to the host is the copy */
    int on_cpu = ck_array_device(CK_ARR(obj)).type == CK_DEVICE_CPU;
    PyObject *host = on_cpu && !copy ? Py_NewRef(obj) : ck_py_asarray(obj, CK_DTYPE_INVALID, on_cpu ? 1 : -1, 1,
                                                                       ck_device_cpu());
    if (!host) return NULL;
    PyObject *mv = PyMemoryView_FromObject(host);
    Py_DECREF(host);
    if (!mv) return NULL;
    PyObject *r = PyObject_CallMethod(np, "asarray", "O", mv);
    Py_DECREF(mv);
    if (r && out && out != Py_None) {
        PyObject *ok = PyObject_CallMethod(np, "copyto", "OO", out, r);
        Py_DECREF(r);
        if (!ok) return NULL;
        Py_DECREF(ok);
        return Py_NewRef(out);
    }
    return r;
}

/* asnumpy: a NumPy array with the values (zero copy for CPU arrays). */
static PyObject *f_asnumpy(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *obj, *stream = Py_None, *order = Py_None, *out = Py_None;
    static char *kwlist[] = {"a", "stream", "order", "out", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO$O", kwlist, &obj, &stream, &order, &out)) return NULL;
    return ck_py_to_numpy(obj, out, 0);
}

/* result_type(*arrays_and_dtypes) with NEP 50's weak Python scalars */
static PyObject *f_result_type(PyObject *m, PyObject *args)
{
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n == 0) { PyErr_SetString(PyExc_ValueError, "at least one array or dtype is required"); return NULL; }
    ck_operand *ops = PyMem_Calloc((size_t)n, sizeof *ops);
    if (!ops) return PyErr_NoMemory();
    PyObject *res = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        ck_dtype t;
        if (CkArray_Check(x)) { ops[i].array = CK_ARR(x); continue; }
        int weak;
        int r = ck_py_scalar_from_obj(x, &ops[i].scalar, &weak);
        if (r < 0) goto done;
        if (r == 0) { ops[i].weak = weak; continue; }
        /* None is float64, as numpy.dtype(None) */
        if (ck_py_dtype_from_obj(x, CK_FLOAT64, &t) < 0) goto done;
        ops[i].scalar.dtype = t;
        ops[i].weak = 0;
    }
    ck_dtype out;
    ck_status s = ck_promote_operands((int)n, ops, &out);
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    res = Py_NewRef((PyObject *)ck_py_dtypes[out]);
done:
    PyMem_Free(ops);
    return res;
}

static PyObject *f_can_cast(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *from, *to, *casting = NULL;
    static char *kwlist[] = {"from_", "to", "casting", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O", kwlist, &from, &to, &casting)) return NULL;
    ck_dtype f, t;
    if (CkArray_Check(from)) f = CK_ARR(from)->dtype;
    else if (ck_py_dtype_from_obj(from, CK_FLOAT64, &f) < 0) return NULL;
    if (ck_py_dtype_from_obj(to, CK_FLOAT64, &t) < 0) return NULL;
    ck_casting cc = CK_CASTING_SAFE;
    if (casting && ck_py_casting_from_obj(casting, &cc) < 0) return NULL;
    return PyBool_FromLong(ck_dtype_can_cast(f, t, cc));
}

static PyObject *f_set_num_threads(PyObject *m, PyObject *arg)
{
    (void)m;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    ck_cpu_set_num_threads((int)n);
    Py_RETURN_NONE;
}

static PyObject *f_get_num_threads(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyLong_FromLong(ck_cpu_num_threads());
}

PyObject *ck_py_get_default_device(PyObject *m, PyObject *unused);
PyObject *ck_py_set_default_device(PyObject *m, PyObject *arg);

/* requires_grad= is taken by the faces autograd.c puts on the creation
 * functions (every public one: wrap_module_functions, F_CREATE). */
#define CK_RG_ ", requires_grad=False"
#define CK_FILL_SIG_ "(shape, dtype=None, order=None, *, device=None" CK_RG_ ")"
#define CK_LIKE_SIG_ "dtype=None, order=None, subok=True, shape=None, *, device=None" CK_RG_ ")"
PyMethodDef ck_py_creation_functions[] = {
    CK_DEF_KW(asarray, f_asarray, "(obj, dtype=None, device=None, *, copy=None, order=None" CK_RG_ ")",
              "An array from an array-like, without a copy when possible (copy=True: always; False: never)."),
    CK_DEF_KW(array, f_array, "(object, dtype=None, *, copy=True, order=None, ndmin=0, device=None" CK_RG_ ")",
              "A new array from an array-like (a copy unless copy=False or None allows none)."),
    CK_DEF_KW(empty, f_empty, CK_FILL_SIG_, "An uninitialised array (dtype None: float64)."),
    CK_DEF_KW(zeros, f_zeros, CK_FILL_SIG_, "An array of zeros (dtype None: float64)."),
    CK_DEF_KW(ones, f_ones, CK_FILL_SIG_, "An array of ones (dtype None: float64)."),
    CK_DEF_KW(full, f_full, "(shape, fill_value, dtype=None, order=None, *, device=None" CK_RG_ ")",
              "An array filled with fill_value (dtype None: fill_value's)."),
    CK_DEF_KW(empty_like, f_empty_like, "(a, " CK_LIKE_SIG_,
              "An uninitialised array of a's shape, dtype and device unless given."),
    CK_DEF_KW(zeros_like, f_zeros_like, "(a, " CK_LIKE_SIG_, "Zeros of a's shape, dtype and device unless given."),
    CK_DEF_KW(ones_like, f_ones_like, "(a, " CK_LIKE_SIG_, "Ones of a's shape, dtype and device unless given."),
    CK_DEF_KW(full_like, f_full_like, "(a, fill_value, " CK_LIKE_SIG_,
              "fill_value in an array of a's shape, dtype and device unless given."),
    CK_DEF_KW(arange, f_arange, "(start, stop=None, step=None, dtype=None, *, device=None, like=None" CK_RG_ ")",
              "Evenly spaced values in [start, stop): arange(stop), arange(start, stop[, step]) (step None: 1)."),
    CK_DEF_KW(linspace, f_linspace,
              "(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None" CK_RG_ ")",
              "num evenly spaced numbers from start to stop (stop included when endpoint)."),
    CK_DEF_KW(eye, f_eye, "(N, M=None, k=0, dtype=None, order=None, *, device=None" CK_RG_ ")",
              "An N x M array with ones on the k-th diagonal (dtype None: float64)."),
    CK_DEF_KW(asnumpy, f_asnumpy, "(a, stream=None, order=None, *, out=None)",
              "The values as a NumPy array (zero copy for CPU arrays; into out when given)."),
    CK_DEF_KW(can_cast, f_can_cast, "(from_, to, casting='safe')",
              "Whether a cast from the dtype (or array) from_ to to is allowed by the casting rule."),
    CK_DEF_VARARGS(result_type, f_result_type, "(*arrays_and_dtypes)", "NumPy 2's promotion (NEP 50) of the arguments."),
    CK_DEF_O(set_num_threads, f_set_num_threads, "(n, /)", "Set the number of threads the CPU backend may use."),
    CK_DEF_NOARGS(get_num_threads, f_get_num_threads, "()", "The number of threads the CPU backend may use."),
    CK_DEF_NOARGS(get_default_device, ck_py_get_default_device, "()", "The device arrays are made on when none is named."),
    CK_DEF_O(set_default_device, ck_py_set_default_device, "(device, /)",
             "Choose the device arrays are made on when none is named."),
    {NULL, NULL, 0, NULL},
};

int ck_py_creation_init(void)
{
    py_zero = PyLong_FromLong(0);
    py_one = PyLong_FromLong(1);
    return py_zero && py_one ? 0 : -1;
}
