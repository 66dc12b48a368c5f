/*
 * indexfuncs.c - NumPy's indexing functions: take, put, take_along_axis,
 * put_along_axis, nonzero, argwhere, flatnonzero, extract, compress, ix_,
 * unravel_index, ravel_multi_index, diag_indices, tril_indices,
 * triu_indices, select and choose.
 *
 * Argument parsing and conversion only: the functions are the core's
 * (include/cudakit_index.h: src/ops/index.c and src/ops/indexfuncs.c).
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

/* The rows of an int64 (nd, count) array, ck_nonzero's form, as a tuple
 * of 1-d views of it (NumPy's nonzero gives views of one array too);
 * takes *nz.  s: the status of the call that made it. */
static PyObject *rows_tuple(ck_status s, ck_array *nz)
{
    if (s != CK_OK) return ck_py_raise(s);
    int nd = (int)nz->shape[0];
    int64_t cnt = nz->shape[1], st = 8;
    PyObject *owner = ck_py_wrap(nz, NULL);
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

/* A tuple of the arrays out[0..n-1], which it takes (all released when it
 * fails).  owners (or NULL): an out[i] on the memory of owners[i] is a
 * view of it, as NumPy's reshape of an argument is. */
static PyObject *arrays_tuple(ck_array *out, int n, PyObject *const *owners)
{
    PyObject *t = PyTuple_New(n);
    int i = 0;
    for (; t && i < n; i++) {
        /* (a failing wrap releases out[i] itself) */
        PyObject *r = owners && out[i].buf == CK_ARR(owners[i])->buf ? ck_py_wrap_view(&out[i], owners[i])
                                                                      : ck_py_wrap(&out[i], NULL);
        if (!r) {
            Py_CLEAR(t);
            i++;
            break;
        }
        PyTuple_SET_ITEM(t, i, r);
    }
    if (!t)
        for (; i < n; i++) ck_array_release(&out[i]);
    return t;
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
    if (!none && ck_py_flat_0d(CK_ARR(a), axis)) none = 1;
    PyObject *ind = arg_array(io, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL;
    if (ind) {
        ck_array o;
        res = wrap_or_raise(ck_take(&o, CK_ARR(a), CK_ARR(ind), axis, none, mode), &o);
        if (CK_AG_GATE() && res && (!out || out == Py_None)) res = ck_py_ag_take(a, CK_ARR(ind), axis, none, mode, res);
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
    if (axo && ck_py_axis_index_or_none(axo, &axis, &none) < 0) return NULL;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    PyObject *ind = arg_array(io, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL;
    if (ind) {
        ck_array o;
        res = wrap_or_raise(ck_take_along_axis(&o, CK_ARR(a), CK_ARR(ind), axis, none), &o);
        if (CK_AG_GATE() && res) res = ck_py_ag_take_along_axis(a, CK_ARR(ind), axis, none, res);
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
    if (ck_py_axis_index_or_none(axo, &axis, &none) < 0) return NULL;
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

/* fn of one array argument (its own device, any array-like) with one new array out. */
static PyObject *one_array(PyObject *ao, ck_status (*fn)(ck_array *, const ck_array *))
{
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    ck_array o;
    ck_status s = fn(&o, CK_ARR(a));
    Py_DECREF(a);
    return wrap_or_raise(s, &o);
}

static PyObject *py_nonzero(PyObject *m, PyObject *ao)
{
    (void)m;
    PyObject *a = ck_py_asarray(ao, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (!a) return NULL;
    ck_array nz;
    ck_status s = ck_nonzero(&nz, CK_ARR(a));
    Py_DECREF(a);
    return rows_tuple(s, &nz);
}

static PyObject *py_flatnonzero(PyObject *m, PyObject *ao)
{
    (void)m;
    return one_array(ao, ck_flatnonzero);
}

static PyObject *py_argwhere(PyObject *m, PyObject *ao)
{
    (void)m;
    return one_array(ao, ck_argwhere);
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
    PyObject *res = NULL;
    if (c) {
        ck_array o;
        res = wrap_or_raise(ck_extract(&o, CK_ARR(c), CK_ARR(a)), &o);
        Py_DECREF(c);
    }
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
    if (!none && ck_py_flat_0d(CK_ARR(a), axis)) none = 1;
    PyObject *c = arg_array(co, ck_array_device(CK_ARR(a)));
    PyObject *res = NULL;
    if (c) {
        ck_array o;
        res = wrap_or_raise(ck_compress(&o, CK_ARR(c), CK_ARR(a), axis, none), &o);
        Py_DECREF(c);
    }
    Py_DECREF(a);
    return into_out(res, out);
}

/* ---------------------------------------------------------- index grids */

static PyObject *py_ix_(PyObject *m, PyObject *args)
{
    (void)m;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject **xs = PyMem_Calloc((size_t)n + 1, sizeof *xs);
    const ck_array **seqs = PyMem_Calloc((size_t)n + 1, sizeof *seqs);
    ck_array *out = PyMem_Calloc((size_t)n + 1, sizeof *out);
    PyObject *t = NULL;
    if (!xs || !seqs || !out) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        xs[i] = ck_py_asarray(PyTuple_GET_ITEM(args, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (!xs[i]) goto done;
        seqs[i] = CK_ARR(xs[i]);
    }
    ck_status s = ck_ix(out, (int)n, seqs);
    if (s != CK_OK) ck_py_raise(s);
    else t = arrays_tuple(out, (int)n, xs);
done:
    if (xs)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(xs[i]);
    PyMem_Free(xs);
    PyMem_Free(seqs);
    PyMem_Free(out);
    return t;
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
    if (ck_py_shape_from_obj(so, &nd, dims) < 0 || parse_order(oo, &order_f) < 0) return NULL;
    PyObject *x = ck_py_asarray(io, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
    if (x && CK_ARR(x)->size == 0 && !CkArray_Check(io) && !ck_dtype_is_integer(CK_ARR(x)->dtype))
        Py_SETREF(x, ck_py_asarray(x, CK_INT64, -1, 0, ck_device_cpu()));   /* [] as NumPy reads it: intp */
    if (!x) return NULL;
    ck_array coords[CK_MAXDIMS];
    ck_status s = ck_unravel_index(coords, CK_ARR(x), nd, dims, order_f);
    Py_DECREF(x);
    if (s != CK_OK) return ck_py_raise(s);
    return arrays_tuple(coords, nd, NULL);
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
    if (ck_py_shape_from_obj(dso, &nd, dims) < 0 || parse_order(oo, &order_f) < 0) return NULL;
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
    PyObject *xs[CK_MAXDIMS] = {NULL}, *res = NULL;
    const ck_array *coords[CK_MAXDIMS];
    int i = 0;
    for (; i < nd; i++) {
        xs[i] = ck_py_asarray(PySequence_Fast_GET_ITEM(seq, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (!xs[i]) break;
        coords[i] = CK_ARR(xs[i]);
    }
    if (i == nd) {
        ck_array o;
        res = wrap_or_raise(ck_ravel_multi_index(&o, coords, nd, dims, modes, order_f), &o);
    }
    for (int j = 0; j < nd; j++) Py_XDECREF(xs[j]);
    Py_DECREF(seq);
    return res;
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
    if (nd < 0) {
        PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
        return NULL;
    }
    ck_array r;   /* a negative n has no diagonal (NumPy's arange(n)) */
    ck_status s = ck_arange(&r, 0, 1, n > 0 ? n : 0, CK_INT64, dev);
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
    ck_array nz;   /* negative sizes select nothing, as NumPy's */
    return rows_tuple(ck_tri_indices(&nz, n > 0 ? n : 0, mm > 0 ? mm : 0, k, upper, dev), &nz);
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
    PyObject *res = NULL, *dtmp = NULL, **objs = NULL;
    const ck_array **arrs = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(conds);
    if (n != PySequence_Fast_GET_SIZE(choices)) {
        PyErr_SetString(PyExc_ValueError, "list of cases must be same length as list of conditions");
        goto done;
    }
    /* conditions [0, n), choices [n, 2n) */
    objs = PyMem_Calloc(2 * (size_t)n + 1, sizeof *objs);
    arrs = PyMem_Calloc(2 * (size_t)n + 1, sizeof *arrs);
    if (!objs || !arrs) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t size = 0;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        PyObject *c = ck_py_asarray(PySequence_Fast_GET_ITEM(conds, i), CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
        if (!(objs[i] = c)) goto done;
        PyObject *ch = PySequence_Fast_GET_ITEM(choices, i);
        objs[n + i] = CkArray_Check(ch) ? Py_NewRef(ch)
                                        : ck_py_asarray(ch, CK_DTYPE_INVALID, -1, 1, ck_array_device(CK_ARR(c)));
        if (!objs[n + i]) goto done;
        arrs[i] = CK_ARR(c);
        arrs[n + i] = CK_ARR(objs[n + i]);
        if (arrs[i]->size > size) size = arrs[i]->size;
        if (arrs[n + i]->size > size) size = arrs[n + i]->size;
    }
    /* the default as where() takes an operand; a list is made on the device
     * of the condition it first meets */
    ck_operand dop;
    int have_dflt = dflt && n > 0;
    if (have_dflt) {
        int r = ck_py_operand(dflt, &dop, &dtmp);
        if (r < 0) goto done;
        if (r > 0) {
            PyErr_Format(PyExc_TypeError, "ufunc 'where' did not contain a loop for an operand of type '%.50s'",
                         Py_TYPE(dflt)->tp_name);
            goto done;
        }
        ck_device dev = ck_array_device(arrs[n - 1]);
        if (dtmp && !ck_device_equal(dev, ck_array_device(CK_ARR(dtmp)))) {
            PyObject *moved = ck_py_asarray(dtmp, CK_DTYPE_INVALID, -1, 1, dev);
            if (!moved) goto done;
            Py_SETREF(dtmp, moved);
        }
        if (dtmp) dop.array = CK_ARR(dtmp);
        if (dop.array && dop.array->size > size) size = dop.array->size;
    }
    ck_array o;
    ck_status s;
    if (size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_select(&o, (int)n, arrs, arrs + n, have_dflt ? &dop : NULL);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_select(&o, (int)n, arrs, arrs + n, have_dflt ? &dop : NULL);
    }
    res = wrap_or_raise(s, &o);
done:
    if (objs)
        for (Py_ssize_t i = 0; i < 2 * n; i++) Py_XDECREF(objs[i]);
    PyMem_Free(objs);
    PyMem_Free(arrs);
    Py_XDECREF(dtmp);
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
    ck_device dev = ck_array_device(CK_ARR(a));
    PyObject *seq = CkArray_Check(cho) ? PySequence_List(cho) : PySequence_Fast(cho, "choices must be a sequence");
    if (!seq) {
        Py_DECREF(a);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *res = NULL, **chs = PyMem_Calloc((size_t)n + 1, sizeof *chs);
    const ck_array **arrs = PyMem_Calloc((size_t)n + 1, sizeof *arrs);
    if (!chs || !arrs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(chs[i] = arg_array(PySequence_Fast_GET_ITEM(seq, i), dev))) goto done;
        arrs[i] = CK_ARR(chs[i]);
    }
    ck_array o;
    res = wrap_or_raise(ck_choose(&o, CK_ARR(a), (int)n, arrs, mode), &o);
done:
    if (chs)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(chs[i]);
    PyMem_Free(chs);
    PyMem_Free(arrs);
    Py_DECREF(seq);
    Py_DECREF(a);
    return into_out(res, out);
}


PyMethodDef ck_py_index_functions[] = {
    CK_DEF_KW(take, py_take, "(a, indices, axis=None, out=None, mode='raise')",
              "Elements of a at indices along axis (of the flattened a when axis is None)."),
    CK_DEF_KW(put, py_put, "(a, ind, v, mode='raise')", "a.flat[ind] = v (v repeated as needed), in place."),
    CK_DEF_KW(take_along_axis, py_take_along_axis, "(arr, indices, axis=-1)",
              "arr's elements at indices matched along axis (the flattened arr when axis is None)."),
    CK_DEF_KW(put_along_axis, py_put_along_axis, "(arr, indices, values, axis)",
              "The inverse of take_along_axis, in place."),
    CK_DEF_O(nonzero, py_nonzero, "(a, /)", "A tuple of int64 arrays, the coordinates of a's nonzero elements."),
    CK_DEF_O(flatnonzero, py_flatnonzero, "(a, /)", "The indices of the nonzero elements of a.ravel()."),
    CK_DEF_O(argwhere, py_argwhere, "(a, /)", "The coordinates of the nonzero elements, one row each."),
    CK_DEF_KW(extract, py_extract, "(condition, arr)", "The elements of arr.ravel() where condition.ravel() holds."),
    CK_DEF_KW(compress, py_compress, "(condition, a, axis=None, out=None)",
              "The slices of a along axis where the 1-d condition holds."),
    CK_DEF_VARARGS(ix_, py_ix_, "(*args)", "Open meshes of 1-d index sequences (bool ones through nonzero)."),
    CK_DEF_KW(unravel_index, py_unravel_index, "(indices, shape, order='C')", "Flat indices to coordinate arrays."),
    CK_DEF_KW(ravel_multi_index, py_ravel_multi_index, "(multi_index, dims, mode='raise', order='C')",
              "Coordinate arrays to flat indices."),
    CK_DEF_KW(diag_indices, py_diag_indices, "(n, ndim=2, *, device=None)",
              "The indices of the main diagonal of an n**ndim array."),
    CK_DEF_KW(tril_indices, py_tril_indices, "(n, k=0, m=None, *, device=None)",
              "The indices of the lower triangle of an (n, m) array."),
    CK_DEF_KW(triu_indices, py_triu_indices, "(n, k=0, m=None, *, device=None)",
              "The indices of the upper triangle of an (n, m) array."),
    CK_DEF_KW(select, py_select, "(condlist, choicelist, default=0)",
              "From the first choice whose condition holds, else default."),
    CK_DEF_KW(choose, py_choose, "(a, choices, out=None, mode='raise')", "choices[a[p]][p] at every position p."),
    {NULL, NULL, 0, NULL},
};
