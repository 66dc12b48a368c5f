/*
 * indexfuncs.c - NumPy's indexing functions: take, put, take_along_axis,
 * put_along_axis, nonzero, argwhere, flatnonzero, extract, compress, ix_,
 * unravel_index, ravel_multi_index, diag_indices, tril_indices,
 * triu_indices, select and choose.
 *
 * The gathers and scatters are the core's (src/ops/index.c); the rest are
 * compositions of core calls, kept in C so that they work on whatever
 * device the arrays are on without a round trip through Python.
 */
#include "ck_python.h"

#include <string.h>

/* ------------------------------------------------------------ helpers */

/* An argument as a CkArray: arrays as they are, anything else converted on
 * dev (the device of the array it goes with).  New reference. */
static PyObject *arg_array(PyObject *obj, ck_device dev)
{
    if (CkArray_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 1, dev);
}

static PyObject *wrap_or_raise(ck_status s, ck_array *out)
{
    return s == CK_OK ? ck_py_wrap(out, NULL) : ck_py_raise(s);
}


static int parse_mode(PyObject *obj, ck_index_mode *mode)
{
    *mode = CK_INDEX_RAISE;
    if (!obj || obj == Py_None) return 0;
    const char *m = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (m && strcmp(m, "raise") == 0) *mode = CK_INDEX_RAISE;
    else if (m && strcmp(m, "wrap") == 0) *mode = CK_INDEX_WRAP;
    else if (m && strcmp(m, "clip") == 0) *mode = CK_INDEX_CLIP;
    else {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "clipmode must be one of 'clip', 'raise', or 'wrap' (got %R)", obj);
        return -1;
    }
    return 0;
}

/* Write res into out (when given) and return out instead. */
static PyObject *into_out(PyObject *res, PyObject *out)
{
    if (!res || !out || out == Py_None) return res;
    if (!CkArray_Check(out)) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_TypeError, "out must be a cudakit array");
        return NULL;
    }
    if (CK_ARR(out)->ndim != CK_ARR(res)->ndim ||
        memcmp(CK_ARR(out)->shape, CK_ARR(res)->shape, (size_t)CK_ARR(res)->ndim * 8) != 0) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_ValueError, "output array does not match result of the operation");
        return NULL;
    }
    ck_status s = ck_array_assign(CK_ARR(out), CK_ARR(res));
    Py_DECREF(res);
    if (s != CK_OK) return ck_py_raise(s);
    Py_INCREF(out);
    return out;
}

static ck_status flat_view(ck_array *out, const ck_array *a)
{
    int64_t n = a->size;
    return ck_array_reshape(out, a, 1, &n, 0);
}

/* The nonzero rows of a (ndim >= 1) as a tuple of 1-d views of one array. */
static PyObject *nonzero_tuple(const ck_array *a)
{
    ck_array nz;
    ck_status s = ck_nonzero(&nz, a);
    if (s != CK_OK) return ck_py_raise(s);
    int nd = (int)nz.shape[0];
    int64_t cnt = nz.shape[1], st = 8;
    PyObject *owner = ck_py_wrap(&nz, NULL);
    if (!owner) return NULL;
    PyObject *t = PyTuple_New(nd);
    for (int i = 0; t && i < nd; i++) {
        ck_array row;
        ck_array_view(&row, CK_ARR(owner));
        row.data += (int64_t)i * cnt * 8;
        ck_array_set_layout(&row, 1, &cnt, &st);
        PyObject *r = ck_py_wrap_view(&row, owner);
        if (!r) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, r);
    }
    Py_DECREF(owner);
    return t;
}

/* Row 0 of nonzero(a) for a 1-d a, as a new array object. */
static PyObject *nonzero_1d(const ck_array *a)
{
    PyObject *t = nonzero_tuple(a);
    if (!t) return NULL;
    PyObject *r = PyTuple_GET_ITEM(t, 0);
    Py_INCREF(r);
    Py_DECREF(t);
    return r;
}

/* A reduction of an integer array to one host int64 (min or max). */
static ck_status reduce_int(ck_reduce_op op, const ck_array *a, int64_t *v)
{
    ck_array r, h;
    uint64_t all = a->ndim >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << a->ndim) - 1);
    ck_status s = ck_reduce(op, a, all, 0, CK_DTYPE_INVALID, &r, 0);
    if (s != CK_OK) return s;
    s = ck_array_to_device(&h, &r, ck_device_cpu());
    ck_array_release(&r);
    if (s != CK_OK) return s;
    ck_scalar sc;
    ck_scalar_load(&sc, h.dtype, h.data);
    ck_array_release(&h);
    *v = sc.v.i;
    return CK_OK;
}

/* out = a (op) k for an int64 array and a host int64. */
static ck_status binop_k(ck_op op, const ck_array *a, int64_t k, ck_array *out)
{
    ck_operand in[2];
    memset(in, 0, sizeof in);
    in[0].array = a;
    in[1].scalar.dtype = CK_INT64;
    in[1].scalar.v.i = k;
    return ck_ufunc_apply(op, 2, in, out, 0, CK_DTYPE_INVALID);
}

/* --------------------------------------------------- take, put and kin */

static PyObject *py_take(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"a", "indices", "axis", "out", "mode", NULL};
    PyObject *ao, *io, *axo = NULL, *out = NULL, *mo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOO:take", kwlist, &ao, &io, &axo, &out, &mo)) return NULL;
    int axis, none;
    ck_index_mode mode;
    if (ck_py_axis_or_none(axo, &axis, &none) < 0 || parse_mode(mo, &mode) < 0) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *ind = arg_array(io, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL;
    if (ind) {
        ck_array o;
        res = wrap_or_raise(ck_take(&o, CK_ARR(a), CK_ARR(ind), axis, none, mode), &o);
        Py_DECREF(ind);
    }
    Py_DECREF(a);
    return into_out(res, out);
}

static PyObject *py_put(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"a", "ind", "v", "mode", NULL};
    PyObject *ao, *io, *vo, *mo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|O:put", kwlist, &ao, &io, &vo, &mo)) return NULL;
    ck_index_mode mode;
    if (parse_mode(mo, &mode) < 0) return NULL;
    if (!CkArray_Check(ao)) {
        PyErr_Format(PyExc_TypeError, "put() argument 1 must be a cudakit array, not %.200s", Py_TYPE(ao)->tp_name);
        return NULL;
    }
    ck_device dev = ck_array_device(CK_ARR(ao));
    PyObject *ind = arg_array(io, dev);
    PyObject *v = ind ? arg_array(vo, dev) : NULL;
    ck_status s = CK_OK;
    if (v) s = ck_put(CK_ARR(ao), CK_ARR(ind), CK_ARR(v), mode);
    Py_XDECREF(ind);
    Py_XDECREF(v);
    if (!v) return NULL;
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *py_take_along_axis(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"arr", "indices", "axis", NULL};
    PyObject *ao, *io, *axo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:take_along_axis", kwlist, &ao, &io, &axo)) return NULL;
    int axis = -1, none = 0;
    if (axo && ck_py_axis_or_none(axo, &axis, &none) < 0) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *ind = arg_array(io, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL;
    if (ind) {
        ck_array o;
        res = wrap_or_raise(ck_take_along_axis(&o, CK_ARR(a), CK_ARR(ind), axis, none), &o);
        Py_DECREF(ind);
    }
    Py_DECREF(a);
    return res;
}

static PyObject *py_put_along_axis(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"arr", "indices", "values", "axis", NULL};
    PyObject *ao, *io, *vo, *axo;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO:put_along_axis", kwlist, &ao, &io, &vo, &axo)) return NULL;
    int axis, none;
    if (ck_py_axis_or_none(axo, &axis, &none) < 0) return NULL;
    if (!CkArray_Check(ao)) {
        PyErr_SetString(PyExc_TypeError, "put_along_axis() needs a cudakit array to write into");
        return NULL;
    }
    ck_device dev = ck_array_device(CK_ARR(ao));
    PyObject *ind = arg_array(io, dev);
    PyObject *v = ind ? arg_array(vo, dev) : NULL;
    ck_status s = CK_OK;
    if (v) s = ck_put_along_axis(CK_ARR(ao), CK_ARR(ind), CK_ARR(v), axis, none);
    Py_XDECREF(ind);
    Py_XDECREF(v);
    if (!v) return NULL;
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ nonzero */

static PyObject *py_nonzero(PyObject *m, PyObject *ao)
{
    (void)m;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *r = nonzero_tuple(CK_ARR(a));
    Py_DECREF(a);
    return r;
}

static PyObject *py_flatnonzero(PyObject *m, PyObject *ao)
{
    (void)m;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    ck_array f;
    ck_status s = flat_view(&f, CK_ARR(a));
    Py_DECREF(a);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = nonzero_1d(&f);
    ck_array_release(&f);
    return r;
}

static PyObject *py_argwhere(PyObject *m, PyObject *ao)
{
    (void)m;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    const ck_array *x = CK_ARR(a);
    ck_array nz, t, o;
    ck_status s;
    if (x->ndim == 0) {
        /* NumPy: one row of no coordinates for a true scalar, none for a false one */
        ck_array one;
        int64_t n1 = 1;
        s = ck_array_reshape(&one, x, 1, &n1, 0);
        if (s == CK_OK) {
            s = ck_nonzero(&nz, &one);
            ck_array_release(&one);
        }
        if (s == CK_OK) {
            int64_t shape[2] = {nz.shape[1], 0};
            ck_array_release(&nz);
            s = ck_array_empty(&o, 2, shape, CK_INT64, ck_array_device(x));
        }
    } else {
        s = ck_nonzero(&nz, x);
        if (s == CK_OK) {
            s = ck_array_transpose(&t, &nz, NULL);
            ck_array_release(&nz);
        }
        if (s == CK_OK) {
            s = ck_array_astype(&o, &t, CK_INT64, 0);
            ck_array_release(&t);
        }
    }
    Py_DECREF(a);
    return wrap_or_raise(s, &o);
}

static PyObject *py_extract(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"condition", "arr", NULL};
    PyObject *co, *ao;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:extract", kwlist, &co, &ao)) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *c = arg_array(co, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL, *idx = NULL;
    ck_array cf;
    if (c) {
        ck_status s = flat_view(&cf, CK_ARR(c));
        if (s != CK_OK) ck_py_raise(s);
        else {
            idx = nonzero_1d(&cf);
            ck_array_release(&cf);
        }
    }
    if (idx) {
        ck_array o;
        res = wrap_or_raise(ck_take(&o, CK_ARR(a), CK_ARR(idx), 0, 1, CK_INDEX_RAISE), &o);
    }
    Py_XDECREF(idx);
    Py_XDECREF(c);
    Py_DECREF(a);
    return res;
}

static PyObject *py_compress(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"condition", "a", "axis", "out", NULL};
    PyObject *co, *ao, *axo = NULL, *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:compress", kwlist, &co, &ao, &axo, &out)) return NULL;
    int axis, none;
    if (ck_py_axis_or_none(axo, &axis, &none) < 0) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *c = arg_array(co, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL, *idx = NULL;
    if (c && CK_ARR(c)->ndim != 1) PyErr_SetString(PyExc_ValueError, "condition must be a 1-d array");
    else if (c) idx = nonzero_1d(CK_ARR(c));
    if (idx) {
        ck_array o;
        res = wrap_or_raise(ck_take(&o, CK_ARR(a), CK_ARR(idx), axis, none, CK_INDEX_RAISE), &o);
    }
    Py_XDECREF(idx);
    Py_XDECREF(c);
    Py_DECREF(a);
    return into_out(res, out);
}

/* ---------------------------------------------------------- index grids */

static PyObject *py_ix_(PyObject *m, PyObject *args)
{
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > CK_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "ix_ takes at most %d sequences", CK_MAXDIMS);
        return NULL;
    }
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t && i < n; i++) {
        PyObject *x = ck_py_asarray(PyTuple_GET_ITEM(args, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (x && CK_ARR(x)->size == 0 && CK_ARR(x)->dtype != CK_INT64) {
            /* NumPy: an empty sequence indexes nothing, as intp */
            PyObject *y = ck_py_asarray(x, CK_INT64, -1, 0, ck_device_cpu());
            Py_SETREF(x, y);
        }
        if (x && CK_ARR(x)->ndim != 1) {
            PyErr_SetString(PyExc_ValueError, "Cross index must be 1 dimensional");
            Py_CLEAR(x);
        }
        if (x && CK_ARR(x)->dtype == CK_BOOL) Py_SETREF(x, nonzero_1d(CK_ARR(x)));
        if (!x) {
            Py_CLEAR(t);
            break;
        }
        int64_t shape[CK_MAXDIMS];
        for (Py_ssize_t j = 0; j < n; j++) shape[j] = j == i ? CK_ARR(x)->shape[0] : 1;
        ck_array v;
        ck_status s = ck_array_reshape(&v, CK_ARR(x), (int)n, shape, 0);
        PyObject *r = s == CK_OK ? ck_py_wrap_view(&v, x) : ck_py_raise(s);
        Py_DECREF(x);
        if (!r) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, r);
    }
    return t;
}

static int parse_dims(PyObject *obj, int *nd, int64_t *dims)
{
    if (ck_py_shape_from_obj(obj, nd, dims) < 0) return -1;
    for (int i = 0; i < *nd; i++)
        if (dims[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "dimensions must be non-negative");
            return -1;
        }
    return 0;
}

static int parse_order(PyObject *obj, int *order_f)
{
    *order_f = 0;
    if (!obj || obj == Py_None) return 0;
    const char *o = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (o && (strcmp(o, "C") == 0 || strcmp(o, "F") == 0)) {
        *order_f = o[0] == 'F';
        return 0;
    }
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "only 'C' or 'F' order is permitted");
    return -1;
}

static PyObject *py_unravel_index(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"indices", "shape", "order", NULL};
    PyObject *io, *so, *oo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:unravel_index", kwlist, &io, &so, &oo)) return NULL;
    int nd, order_f;
    int64_t dims[CK_MAXDIMS];
    if (parse_dims(so, &nd, dims) < 0 || parse_order(oo, &order_f) < 0) return NULL;
    int64_t size = ck_shape_size(nd, dims);
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "dimensions are too large");
        return NULL;
    }
    PyObject *x = ck_py_asarray(io, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!x) return NULL;
    if (!ck_dtype_is_integer(CK_ARR(x)->dtype) && !(CK_ARR(x)->size == 0 && !PyObject_TypeCheck(io, &CkArray_Type))) {
        Py_DECREF(x);
        PyErr_SetString(PyExc_TypeError, "only int indices permitted");
        return NULL;
    }
    ck_array cur, next;
    ck_status s = ck_array_astype(&cur, CK_ARR(x), CK_INT64, 0);
    Py_DECREF(x);
    if (s != CK_OK) return ck_py_raise(s);
    int64_t lo = 0, hi = -1;
    if (cur.size > 0) {
        s = reduce_int(CK_REDUCE_MIN, &cur, &lo);
        if (s == CK_OK) s = reduce_int(CK_REDUCE_MAX, &cur, &hi);
        if (s == CK_OK && (lo < 0 || hi >= size)) {
            ck_array_release(&cur);
            PyErr_Format(PyExc_ValueError, "index %lld is out of bounds for array with size %lld",
                         (long long)(lo < 0 ? lo : hi), (long long)size);
            return NULL;
        }
    }
    PyObject *t = s == CK_OK ? PyTuple_New(nd) : NULL;
    /* peel coordinates off the fastest-varying axis first */
    for (int j = 0; t && j < nd; j++) {
        int d = order_f ? j : nd - 1 - j;
        int64_t len = dims[d] ? dims[d] : 1;
        ck_array coord;
        s = binop_k(CK_OP_REMAINDER, &cur, len, &coord);
        if (s == CK_OK) s = binop_k(CK_OP_FLOOR_DIVIDE, &cur, len, &next);
        PyObject *c = s == CK_OK ? ck_py_wrap(&coord, NULL) : NULL;
        if (s == CK_OK) {
            ck_array_release(&cur);
            cur = next;
        }
        if (!c) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, d, c);
    }
    ck_array_release(&cur);
    if (!t) return s != CK_OK ? ck_py_raise(s) : NULL;
    return t;
}

static PyObject *py_ravel_multi_index(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"multi_index", "dims", "mode", "order", NULL};
    PyObject *mo, *dso, *modeo = NULL, *oo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:ravel_multi_index", kwlist, &mo, &dso, &modeo, &oo))
        return NULL;
    int nd, order_f;
    int64_t dims[CK_MAXDIMS];
    if (parse_dims(dso, &nd, dims) < 0 || parse_order(oo, &order_f) < 0) return NULL;
    if (ck_shape_size(nd, dims) < 0) {
        PyErr_SetString(PyExc_ValueError, "invalid dims: array size defined by dims is larger than the maximum possible size.");
        return NULL;
    }
    ck_index_mode modes[CK_MAXDIMS];
    if (modeo && PyTuple_Check(modeo)) {
        if (PyTuple_GET_SIZE(modeo) != nd) {
            PyErr_SetString(PyExc_ValueError, "mode must be a string or a tuple of one string per dimension");
            return NULL;
        }
        for (int i = 0; i < nd; i++)
            if (parse_mode(PyTuple_GET_ITEM(modeo, i), &modes[i]) < 0) return NULL;
    } else {
        ck_index_mode md;
        if (parse_mode(modeo, &md) < 0) return NULL;
        for (int i = 0; i < nd; i++) modes[i] = md;
    }
    PyObject *seq = PySequence_Fast(mo, "multi_index must be a sequence of arrays");
    if (!seq) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != nd) {
        PyErr_Format(PyExc_ValueError, "parameter multi_index must be a sequence of length %d", nd);
        Py_DECREF(seq);
        return NULL;
    }
    int64_t stride[CK_MAXDIMS], acc = 1;
    for (int j = 0; j < nd; j++) {
        int d = order_f ? j : nd - 1 - j;
        stride[d] = acc;
        acc *= dims[d];
    }
    ck_array total = {0};
    ck_status s = CK_OK;
    int err = 0;
    for (int i = 0; i < nd && !err && s == CK_OK; i++) {
        PyObject *x = ck_py_asarray(PySequence_Fast_GET_ITEM(seq, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (!x) { err = 1; break; }
        if (!ck_dtype_is_integer(CK_ARR(x)->dtype)) {
            PyErr_SetString(PyExc_TypeError, "only int indices permitted");
            Py_DECREF(x);
            err = 1;
            break;
        }
        ck_array c, t1, t2;
        s = ck_array_astype(&c, CK_ARR(x), CK_INT64, 0);
        Py_DECREF(x);
        if (s != CK_OK) break;
        if (modes[i] == CK_INDEX_RAISE && c.size > 0) {
            int64_t lo, hi;
            s = reduce_int(CK_REDUCE_MIN, &c, &lo);
            if (s == CK_OK) s = reduce_int(CK_REDUCE_MAX, &c, &hi);
            if (s == CK_OK && (lo < 0 || hi >= dims[i])) {
                PyErr_SetString(PyExc_ValueError, "invalid entry in coordinates array");
                err = 1;
            }
        } else if (modes[i] == CK_INDEX_WRAP && dims[i] > 0) {
            s = binop_k(CK_OP_REMAINDER, &c, dims[i], &t1);
            if (s == CK_OK) { ck_array_release(&c); c = t1; }
        } else if (modes[i] == CK_INDEX_CLIP && dims[i] > 0) {
            s = binop_k(CK_OP_MINIMUM, &c, dims[i] - 1, &t1);
            if (s == CK_OK) {
                s = binop_k(CK_OP_MAXIMUM, &t1, 0, &t2);
                ck_array_release(&t1);
            }
            if (s == CK_OK) { ck_array_release(&c); c = t2; }
        }
        if (s == CK_OK && !err) s = binop_k(CK_OP_MULTIPLY, &c, stride[i], &t1);
        ck_array_release(&c);
        if (s != CK_OK || err) break;
        if (!total.buf) {
            total = t1;
        } else {
            s = ck_ufunc_call2(CK_OP_ADD, &total, &t1, &t2);
            ck_array_release(&t1);
            ck_array_release(&total);
            if (s == CK_OK) total = t2;
            else total.buf = NULL;
        }
    }
    Py_DECREF(seq);
    if (err || s != CK_OK) {
        if (total.buf) ck_array_release(&total);
        return err ? NULL : ck_py_raise(s);
    }
    if (!total.buf) {
        PyErr_SetString(PyExc_ValueError, "ravel_multi_index needs at least one dimension");
        return NULL;
    }
    return ck_py_wrap(&total, NULL);
}

static int parse_device(PyObject *obj, ck_device *dev)
{
    int has = 0;
    if (ck_py_device_from_obj(obj, dev, &has) < 0) return -1;
    if (!has) *dev = ck_py_default_device();
    return 0;
}

static PyObject *py_diag_indices(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"n", "ndim", "device", NULL};
    Py_ssize_t n, nd = 2;
    PyObject *devo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "n|n$O:diag_indices", kwlist, &n, &nd, &devo)) return NULL;
    ck_device dev;
    if (parse_device(devo, &dev) < 0) return NULL;
    if (n < 0 || nd < 0) {
        PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
        return NULL;
    }
    ck_array r;
    ck_status s = ck_arange(&r, 0, 1, n, CK_INT64, dev);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *a = ck_py_wrap(&r, NULL);
    if (!a) return NULL;
    PyObject *t = PyTuple_New(nd);
    for (Py_ssize_t i = 0; t && i < nd; i++) {
        Py_INCREF(a);
        PyTuple_SET_ITEM(t, i, a);
    }
    Py_DECREF(a);
    return t;
}

/* (rows, cols) of the elements with cols - rows <= k (lower) or >= k. */
static PyObject *tri_indices(PyObject *args, PyObject *kw, int upper)
{
    static char *kwlist[] = {"n", "k", "m", "device", NULL};
    Py_ssize_t n, k = 0;
    PyObject *mo = Py_None, *devo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, upper ? "n|nO$O:triu_indices" : "n|nO$O:tril_indices", kwlist, &n, &k,
                                     &mo, &devo))
        return NULL;
    Py_ssize_t mm = n;
    if (mo != Py_None && (mm = PyLong_AsSsize_t(mo)) == -1 && PyErr_Occurred()) return NULL;
    ck_device dev;
    if (parse_device(devo, &dev) < 0) return NULL;
    if (n < 0 || mm < 0) {
        PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
        return NULL;
    }
    ck_array r, rr, c, cc, d, mask;
    int64_t rs[2] = {n, 1}, cs[2] = {1, mm};
    ck_status s = ck_arange(&r, 0, 1, n, CK_INT64, dev);
    if (s != CK_OK) return ck_py_raise(s);
    s = ck_array_reshape(&rr, &r, 2, rs, 0);
    ck_array_release(&r);
    if (s != CK_OK) return ck_py_raise(s);
    s = ck_arange(&c, 0, 1, mm, CK_INT64, dev);
    if (s == CK_OK) {
        s = ck_array_reshape(&cc, &c, 2, cs, 0);
        ck_array_release(&c);
    }
    if (s == CK_OK) {
        s = ck_ufunc_call2(CK_OP_SUBTRACT, &cc, &rr, &d);
        ck_array_release(&cc);
    }
    ck_array_release(&rr);
    if (s == CK_OK) {
        s = binop_k(upper ? CK_OP_GREATER_EQUAL : CK_OP_LESS_EQUAL, &d, (int64_t)k, &mask);
        ck_array_release(&d);
    }
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *t = nonzero_tuple(&mask);
    ck_array_release(&mask);
    return t;
}

static PyObject *py_tril_indices(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return tri_indices(args, kw, 0); }
static PyObject *py_triu_indices(PyObject *m, PyObject *args, PyObject *kw) { (void)m; return tri_indices(args, kw, 1); }

/* -------------------------------------------------------- select, choose */

static PyObject *py_select(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"condlist", "choicelist", "default", NULL};
    PyObject *co, *cho, *dflt = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:select", kwlist, &co, &cho, &dflt)) return NULL;
    PyObject *conds = PySequence_Fast(co, "condlist must be a sequence");
    if (!conds) return NULL;
    PyObject *choices = PySequence_Fast(cho, "choicelist must be a sequence");
    if (!choices) {
        Py_DECREF(conds);
        return NULL;
    }
    PyObject *res = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(conds);
    if (n != PySequence_Fast_GET_SIZE(choices)) {
        PyErr_SetString(PyExc_ValueError, "list of cases must be same length as list of conditions");
        goto done;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "select with an empty condition list is not possible");
        goto done;
    }
    /* the last condition that holds wins nothing: the first one does, so
     * chain where() from the last pair back to the first */
    res = dflt ? dflt : PyLong_FromLong(0);
    if (dflt) Py_INCREF(res);
    for (Py_ssize_t i = n - 1; res && i >= 0; i--) {
        PyObject *c = ck_py_asarray(PySequence_Fast_GET_ITEM(conds, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (c && CK_ARR(c)->dtype != CK_BOOL) {
            PyErr_Format(PyExc_TypeError, "invalid entry %zd in condlist: should be boolean ndarray", i);
            Py_CLEAR(c);
        }
        if (!c) {
            Py_CLEAR(res);
            break;
        }
        PyObject *ch = PySequence_Fast_GET_ITEM(choices, i);
        PyObject *chv = CkArray_Check(ch) ? (Py_INCREF(ch), ch)
                                          : ck_py_asarray(ch, CK_DTYPE_INVALID, -1, 1, ck_array_device(CK_ARR(c)));
        PyObject *nres = NULL;
        if (chv) {
            PyObject *ops[3] = {c, chv, res};
            nres = ck_py_apply(CK_OP_WHERE, 3, ops, NULL, CK_DTYPE_INVALID, 0);
        }
        Py_XDECREF(chv);
        Py_DECREF(c);
        Py_SETREF(res, nres);
    }
    if (res && !CkArray_Check(res)) Py_CLEAR(res);   /* cannot happen: where() returns arrays */
done:
    Py_DECREF(conds);
    Py_DECREF(choices);
    return res;
}

static PyObject *py_choose(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    static char *kwlist[] = {"a", "choices", "out", "mode", NULL};
    PyObject *ao, *cho, *out = NULL, *mo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:choose", kwlist, &ao, &cho, &out, &mo)) return NULL;
    ck_index_mode mode;
    if (parse_mode(mo, &mode) < 0) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    if (!ck_dtype_is_integer(CK_ARR(a)->dtype) && CK_ARR(a)->dtype != CK_BOOL) {
        Py_DECREF(a);
        PyErr_Format(PyExc_TypeError, "Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'",
                     ck_dtype_get_info(CK_ARR(a)->dtype)->name);
        return NULL;
    }
    ck_device dev = ck_array_device(CK_ARR(a));
    PyObject *seq = CkArray_Check(cho) ? PySequence_List(cho) : PySequence_Fast(cho, "choices must be a sequence");
    if (!seq) {
        Py_DECREF(a);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *res = NULL, **chs = PyMem_Calloc((size_t)n + 1, sizeof *chs);
    ck_operand *ops = PyMem_Calloc((size_t)n + 1, sizeof *ops);
    int *nds = PyMem_Calloc((size_t)n + 1, sizeof *nds);
    const int64_t **shs = PyMem_Calloc((size_t)n + 1, sizeof *shs);
    ck_array stack = {0}, ab = {0}, ai = {0}, ar[CK_MAXDIMS];
    int nar = 0;
    ck_status s = CK_OK;
    if (!chs || !ops || !nds || !shs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(chs[i] = arg_array(PySequence_Fast_GET_ITEM(seq, i), dev))) goto done;
        ops[i].array = CK_ARR(chs[i]);
        nds[i] = CK_ARR(chs[i])->ndim;
        shs[i] = CK_ARR(chs[i])->shape;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "choices must not be empty");
        goto done;
    }
    nds[n] = CK_ARR(a)->ndim;
    shs[n] = CK_ARR(a)->shape;
    ck_dtype dt;
    int bnd;
    int64_t bshape[CK_MAXDIMS + 1];
    if ((s = ck_promote_operands((int)n, ops, &dt)) != CK_OK) goto done;
    if ((s = ck_broadcast_shapes((int)n + 1, nds, shs, &bnd, bshape)) != CK_OK) goto done;
    if (bnd + 1 > CK_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "choose: too many dimensions");
        goto done;
    }
    /* the choices stacked along a new first axis, then one gather picks
     * stack[a[p], p] for every position p */
    int64_t sshape[CK_MAXDIMS];
    sshape[0] = n;
    memcpy(sshape + 1, bshape, (size_t)bnd * 8);
    if ((s = ck_array_empty(&stack, bnd + 1, sshape, dt, dev)) != CK_OK) goto done;
    for (Py_ssize_t i = 0; i < n && s == CK_OK; i++) {
        ck_array row;
        ck_array_view(&row, &stack);
        row.data += i * stack.strides[0];
        ck_array_set_layout(&row, bnd, stack.shape + 1, stack.strides + 1);
        s = ck_array_assign(&row, CK_ARR(chs[i]));
        ck_array_release(&row);
    }
    if (s != CK_OK) goto done;
    if ((s = ck_array_astype(&ai, CK_ARR(a), CK_INT64, 0)) != CK_OK) goto done;
    if ((s = ck_array_broadcast_to(&ab, &ai, bnd, bshape)) != CK_OK) goto done;
    ck_index_item items[CK_MAXDIMS + 1];
    memset(items, 0, sizeof items);
    items[0].kind = CK_INDEX_ARRAY;
    items[0].array = &ab;
    for (int d = 0; d < bnd && s == CK_OK; d++) {
        ck_array r;
        int64_t shape[CK_MAXDIMS];
        for (int j = 0; j < bnd; j++) shape[j] = j == d ? bshape[d] : 1;
        s = ck_arange(&r, 0, 1, bshape[d], CK_INT64, dev);
        if (s == CK_OK) {
            s = ck_array_reshape(&ar[nar], &r, bnd, shape, 0);
            ck_array_release(&r);
        }
        if (s == CK_OK) {
            items[d + 1].kind = CK_INDEX_ARRAY;
            items[d + 1].array = &ar[nar++];
        }
    }
    if (s != CK_OK) goto done;
    ck_array o;
    s = ck_index_get(&o, &stack, bnd + 1, items, mode);
    if (s == CK_ERR_INDEX && mode == CK_INDEX_RAISE) {
        PyErr_SetString(PyExc_ValueError, "invalid entry in choice array");
        goto done;
    }
    if (s == CK_OK) res = ck_py_wrap(&o, NULL);
done:
    if (s != CK_OK && !PyErr_Occurred()) ck_py_raise(s);
    for (int j = 0; j < nar; j++) ck_array_release(&ar[j]);
    if (ab.buf) ck_array_release(&ab);
    if (ai.buf) ck_array_release(&ai);
    if (stack.buf) ck_array_release(&stack);
    if (chs)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(chs[i]);
    PyMem_Free(chs);
    PyMem_Free(ops);
    PyMem_Free(nds);
    PyMem_Free(shs);
    Py_DECREF(seq);
    Py_DECREF(a);
    if (PyErr_Occurred()) Py_CLEAR(res);
    return into_out(res, out);
}

#define KW(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

PyMethodDef ck_py_index_functions[] = {
    KW("take", py_take, "take(a, indices, axis=None, out=None, mode='raise'): elements of a at indices along axis."),
    KW("put", py_put, "put(a, ind, v, mode='raise'): a.flat[ind] = v (v repeated as needed), in place."),
    KW("take_along_axis", py_take_along_axis, "take_along_axis(arr, indices, axis=-1): arr[..., indices, ...] matched along axis."),
    KW("put_along_axis", py_put_along_axis, "put_along_axis(arr, indices, values, axis): the inverse of take_along_axis, in place."),
    {"nonzero", py_nonzero, METH_O, "nonzero(a): a tuple of int64 arrays, the coordinates of a's nonzero elements."},
    {"flatnonzero", py_flatnonzero, METH_O, "flatnonzero(a): indices of the nonzero elements of a.ravel()."},
    {"argwhere", py_argwhere, METH_O, "argwhere(a): the coordinates of the nonzero elements, one row each."},
    KW("extract", py_extract, "extract(condition, arr): the elements of arr.ravel() where condition.ravel() holds."),
    KW("compress", py_compress, "compress(condition, a, axis=None, out=None): slices of a where the 1-d condition holds."),
    {"ix_", py_ix_, METH_VARARGS, "ix_(*args): open meshes of 1-d index sequences (bool ones through nonzero)."},
    KW("unravel_index", py_unravel_index, "unravel_index(indices, shape, order='C'): flat indices to coordinate arrays."),
    KW("ravel_multi_index", py_ravel_multi_index,
       "ravel_multi_index(multi_index, dims, mode='raise', order='C'): coordinate arrays to flat indices."),
    KW("diag_indices", py_diag_indices, "diag_indices(n, ndim=2): indices of the main diagonal of an n**ndim array."),
    KW("tril_indices", py_tril_indices, "tril_indices(n, k=0, m=None): indices of the lower triangle of an (n, m) array."),
    KW("triu_indices", py_triu_indices, "triu_indices(n, k=0, m=None): indices of the upper triangle of an (n, m) array."),
    KW("select", py_select, "select(condlist, choicelist, default=0): from the first choice whose condition holds."),
    KW("choose", py_choose, "choose(a, choices, out=None, mode='raise'): choices[a[p]][p] at every position p."),
    {NULL, NULL, 0, NULL},
};
