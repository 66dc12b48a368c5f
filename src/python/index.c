/*
 * index.c - basic indexing: x[key] and x[key] = value.
 *
 * A basic index never copies: it only picks a new shape, new strides and a
 * new start address inside the same buffer.  Both directions therefore share
 * parse_index(), which turns a key into that layout; getitem wraps it as a
 * view object and setitem writes through it.
 *
 * Parsing runs in two passes on purpose.  The first converts every key item
 * (which may run arbitrary Python code: __index__, slice bounds) without
 * looking at the array; the second reads the array's shape and strides once
 * and does pure arithmetic.  So nothing a key's Python code does to the
 * array can leave us with a layout computed from a stale shape.
 *
 * Integer-array and boolean ("advanced") keys keep their converted arrays
 * from the first pass and go to the core (ck_index_get / ck_index_set,
 * src/ops/index.c), which makes a copy rather than a view.
 */
#include "ck_python.h"

#include <math.h>
#include <string.h>

static const char MSG_INVALID[] =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean "
    "arrays are valid indices";
static const char MSG_ARRAY_TYPE[] = "arrays used as indices must be of integer (or boolean) type";

typedef enum { IX_INT, IX_SLICE, IX_NEWAXIS, IX_ELLIPSIS, IX_ADVANCED } ix_kind;

/* One item of a key after the first pass. */
typedef struct ix_item {
    ix_kind kind;
    int64_t value;                   /* IX_INT: as given, possibly negative;
                                      * IX_ADVANCED: how many axes it consumes */
    PyObject *big;                   /* IX_INT: owned; the int when it does not fit int64
                                      * (kept only to print it in the bounds error) */
    Py_ssize_t start, stop, step;    /* IX_SLICE: unpacked, not yet clipped to the axis */
    PyObject *arr;                   /* IX_ADVANCED: owned; the index as an integer or bool CkArray */
} ix_item;

/* What a key selects: the layout of the view relative to the array. */
typedef struct ix_layout {
    int ndim;
    int64_t offset;                  /* bytes from the array's data pointer */
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_MAXDIMS];
} ix_layout;

/* A valid basic key consumes at most CK_MAXDIMS axes with ints and slices,
 * and slices plus newaxes make at most CK_MAXDIMS result dims, plus one
 * ellipsis: any longer key is bound to fail the count checks, so this many
 * slots always hold every item of a key that can succeed. */
#define IX_MAX_ITEMS (2 * CK_MAXDIMS + 1)

/* ------------------------------------------------------------ first pass */

static int set_int_item(ix_item *it, PyObject *pylong)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(pylong, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    it->kind = IX_INT;
    it->value = (int64_t)v;
    if (overflow) {
        /* out of bounds on any axis; which axis is only known later */
        Py_INCREF(pylong);
        it->big = pylong;
    }
    return 0;
}

static int raise_index_error(const char *msg)
{
    PyErr_SetString(PyExc_IndexError, msg);
    return -1;
}

/* An integer array consumes one axis, a boolean one as many as it has.
 * Steals arr (NULL: an error is set). */
static int set_advanced_item(ix_item *it, PyObject *arr)
{
    if (!arr) return -1;
    const ck_array *k = CK_ARR(arr);
    it->kind = IX_ADVANCED;
    it->value = k->dtype == CK_BOOL ? k->ndim : 1;
    it->arr = arr;
    return 0;
}

/* A 0-d bool array of a Python or NumPy bool (NumPy: a 0-d mask). */
static PyObject *bool_index(PyObject *item)
{
    int t = PyObject_IsTrue(item);
    if (t < 0) return NULL;
    return ck_py_asarray(t ? Py_True : Py_False, CK_BOOL, -1, 1, ck_device_cpu());
}

/* A CkArray used as an index: a 0-d integer one is a plain integer (NumPy
 * reads its own 0-d integer arrays as integers too); any other integer or
 * boolean one is an advanced index. */
static int classify_ckarray(PyObject *item, ix_item *it)
{
    const ck_array *k = CK_ARR(item);
    if (k->dtype == CK_BOOL || (ck_dtype_is_integer(k->dtype) && k->ndim != 0)) {
        Py_INCREF(item);
        return set_advanced_item(it, item);
    }
    if (!ck_dtype_is_integer(k->dtype)) return raise_index_error(MSG_ARRAY_TYPE);
    /* the element may live on a GPU; only host memory can be read here */
    ck_array host;
    const ck_array *src = k;
    int moved = 0;
    if (ck_array_device(k).type != CK_DEVICE_CPU) {
        ck_status s = ck_array_to_device(&host, k, ck_device_cpu());
        if (s != CK_OK) return ck_py_raise_int(s);
        src = &host;
        moved = 1;
    }
    PyObject *v = ck_py_scalar_to_py(src->data, src->dtype);
    if (moved) ck_array_release(&host);
    if (!v) return -1;
    int r;
    if (PyLong_Check(v)) {
        r = set_int_item(it, v);
    } else {
        PyObject *iv = PyNumber_Index(v);
        r = iv ? set_int_item(it, iv) : -1;
        Py_XDECREF(iv);
    }
    Py_DECREF(v);
    return r;
}

/* 1 for a NumPy scalar (numpy.generic), 2 for a numpy.ndarray, 3 for a
 * numpy.bool_ scalar, 0 for anything else, -1 on error.  NumPy is looked up
 * only if already imported: an object of its types implies it is. */
static int numpy_kind(PyObject *obj)
{
    PyObject *name = PyUnicode_FromString("numpy");
    if (!name) return -1;
    PyObject *np = PyImport_GetModule(name);
    Py_DECREF(name);
    if (!np) return PyErr_Occurred() ? -1 : 0;
    static const char *const names[3] = {"bool_", "ndarray", "generic"};
    static const int kinds[3] = {3, 2, 1};
    int result = 0;
    for (int i = 0; i < 3 && result == 0; i++) {
        PyObject *t = PyObject_GetAttrString(np, names[i]);
        if (!t) {
            /* a partial or unusual numpy: just not one of its objects */
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) { result = -1; break; }
            PyErr_Clear();
            continue;
        }
        int is = PyObject_IsInstance(obj, t);
        Py_DECREF(t);
        if (is < 0) result = -1;
        else if (is) result = kinds[i];
    }
    Py_DECREF(np);
    return result;
}

static int has_array_protocol(PyObject *obj)
{
    static const char *const attrs[] = {
        "__array__", "__array_interface__", "__array_struct__", "__cuda_array_interface__", "__dlpack__",
    };
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
        if (PyObject_HasAttrString(obj, attrs[i])) return 1;
    return PyObject_CheckBuffer(obj);
}

/* An item that is neither an int, a slice, None, Ellipsis nor a CkArray.
 * It is an advanced index if it converts to an integer or boolean array;
 * otherwise an IndexError whose wording follows NumPy 2: sequences and
 * scalars are "not valid indices", real arrays have the "wrong type".
 * Returns 0 (an advanced index: it filled) or -1. */
static int classify_other(PyObject *item, ix_item *it)
{
    /* Scalars would happily convert to 0-d arrays below; they are simply
     * invalid as indices. */
    if (PyFloat_Check(item) || PyComplex_Check(item) || PyUnicode_Check(item) || PyBytes_Check(item))
        return raise_index_error(MSG_INVALID);

    int is_seq = PyList_Check(item) || PyTuple_Check(item);
    int is_array = 0;
    if (!is_seq) {
        int nk = numpy_kind(item);
        if (nk < 0) return -1;
        if (nk == 3) return set_advanced_item(it, bool_index(item));
        if (nk == 1) return raise_index_error(MSG_INVALID);
        if (nk == 2 || has_array_protocol(item)) is_array = 1;
        else if (PySequence_Check(item)) is_seq = 1;
        else return raise_index_error(MSG_INVALID);
    }

    /* Only the dtype matters: convert sequences on the host so that a
     * rejected index never costs a device allocation; arrays stay where
     * they are. */
    PyObject *conv = ck_py_asarray(item, CK_DTYPE_INVALID, -1, is_seq, ck_device_cpu());
    if (!conv) {
        /* a ragged list is NumPy's ValueError too (it makes the array
         * first); one of ints beyond 64 bits it holds as objects */
        if (!PyErr_ExceptionMatches(PyExc_TypeError) && !(PyErr_ExceptionMatches(PyExc_ValueError) && !is_seq) &&
            !(PyErr_ExceptionMatches(PyExc_OverflowError) && is_seq))
            return -1;
        PyErr_Clear();
        return raise_index_error(is_array ? MSG_ARRAY_TYPE : MSG_INVALID);
    }
    const ck_array *k = CK_ARR(conv);
    if (k->dtype == CK_BOOL || ck_dtype_is_integer(k->dtype)) return set_advanced_item(it, conv);
    if (is_seq && k->size == 0) {
        /* NumPy reads [] as an empty intp index */
        PyObject *empty = ck_py_asarray(conv, CK_INT64, -1, 0, ck_device_cpu());
        Py_DECREF(conv);
        return set_advanced_item(it, empty);
    }
    Py_DECREF(conv);
    return raise_index_error(is_array ? MSG_ARRAY_TYPE : MSG_INVALID);
}

/* Returns 0 (it filled) or -1 with an exception. */
static int classify_item(PyObject *item, ix_item *it)
{
    /* cheapest tests first: x[i] and x[a:b] are what loops do */
    if (PyLong_CheckExact(item)) return set_int_item(it, item);
    if (PySlice_Check(item)) {
        if (PySlice_Unpack(item, &it->start, &it->stop, &it->step) < 0) return -1;
        it->kind = IX_SLICE;
        return 0;
    }
    if (item == Py_None) { it->kind = IX_NEWAXIS; return 0; }
    if (item == Py_Ellipsis) { it->kind = IX_ELLIPSIS; return 0; }
    /* bool is an int to Python but a mask to NumPy */
    if (PyBool_Check(item)) return set_advanced_item(it, bool_index(item));
    if (PyLong_Check(item)) return set_int_item(it, item);
    if (CkArray_Check(item)) return classify_ckarray(item, it);
    if (PyIndex_Check(item)) {
        PyObject *v = PyNumber_Index(item);
        if (v) {
            int r = set_int_item(it, v);
            Py_DECREF(v);
            return r;
        }
        /* NumPy arrays other than 0-d integer ones refuse __index__ with a
         * TypeError; they are still arrays, judged below */
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear();
    }
    return classify_other(item, it);
}

/* ----------------------------------------------------------- second pass */

static int raise_out_of_bounds(const ix_item *it, int axis, int64_t len)
{
    if (it->big)
        PyErr_Format(PyExc_IndexError, "index %S is out of bounds for axis %d with size %lld",
                     it->big, axis, (long long)len);
    else
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for axis %d with size %lld",
                     (long long)it->value, axis, (long long)len);
    return -1;
}

/* Lay the items over the array's axes.  The counts have been checked, so
 * the items consume at most ndim axes.  With out == NULL (a key holding
 * advanced items) only the integers' bounds are checked: the result may not
 * even fit a layout. */
static int build_layout(const ck_array *a, const ix_item *items, int n, int consumed, ix_layout *out)
{
    int axis = 0, nd = 0;
    int64_t offset = 0;
    for (int i = 0; i < n; i++) {
        const ix_item *it = &items[i];
        switch (it->kind) {
        case IX_INT: {
            int64_t len = a->shape[axis], v = it->value;
            if (it->big || v < -len || v >= len) return raise_out_of_bounds(it, axis, len);
            if (v < 0) v += len;
            offset += v * a->strides[axis];
            axis++;
            break;
        }
        case IX_SLICE: {
            if (!out) { axis++; break; }
            Py_ssize_t start = it->start, stop = it->stop, step = it->step;
            Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)a->shape[axis], &start, &stop, step);
            int64_t stride;
            if (len <= 0) {
                /* An empty slice may clip start to one past either end;
                 * moving there would point outside the buffer, which
                 * breaks overlap checks and exports.  NumPy does the same. */
                len = 0;
                start = 0;
                stride = a->strides[axis];
            } else if (__builtin_mul_overflow(a->strides[axis], (int64_t)step, &stride)) {
                /* only a one-element slice can have a step this large, and
                 * the stride of a length-1 dim is never used to address */
                stride = a->strides[axis];
            }
            offset += (int64_t)start * a->strides[axis];
            out->shape[nd] = len;
            out->strides[nd] = stride;
            nd++;
            axis++;
            break;
        }
        case IX_NEWAXIS:
            if (!out) break;
            /* stride 0, as NumPy: it is never stepped along */
            out->shape[nd] = 1;
            out->strides[nd] = 0;
            nd++;
            break;
        case IX_ELLIPSIS: {
            int k = a->ndim - consumed;
            if (!out) { axis += k; break; }
            for (int j = 0; j < k; j++, nd++, axis++) {
                out->shape[nd] = a->shape[axis];
                out->strides[nd] = a->strides[axis];
            }
            break;
        }
        case IX_ADVANCED:
            axis += (int)it->value;
            break;
        }
    }
    if (!out) return 0;
    /* axes the key does not reach are taken whole (an implicit trailing ...) */
    for (; axis < a->ndim; axis++, nd++) {
        out->shape[nd] = a->shape[axis];
        out->strides[nd] = a->strides[axis];
    }
    out->ndim = nd;
    out->offset = offset;
    return 0;
}

/* Per-kind counts of a key's items. */
typedef struct ix_counts {
    /* Py_ssize_t: a key tuple may be arbitrarily long */
    Py_ssize_t items, stored, ints, slices, newaxes, ellipses, advanced, advanced_axes;
} ix_counts;

/* The checks that need the whole key and the array, then the layout.
 * Only now is the array looked at (see the top of the file).  The order of
 * the errors is NumPy's (out-of-range integers before anything the
 * advanced items could report).  Returns 1 for a key with advanced items,
 * which the core lays out, 0 with *out filled, -1 with an exception. */
static int finish_layout(PyObject *self, const ix_item *items, const ix_counts *c, ix_layout *out)
{
    if (!CkArray_Check(self)) {
        PyErr_SetString(PyExc_TypeError, "indexing needs a cudakit array");
        return -1;
    }
    const ck_array *a = CK_ARR(self);
    Py_ssize_t consumed = c->ints + c->slices + c->advanced_axes;
    if (consumed > a->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for array: array is %d-dimensional, but %zd were indexed",
                     a->ndim, consumed);
        return -1;
    }
    if (c->advanced) {
        /* Out-of-range integers are reported first, as NumPy would.  A key
         * too long to store (mostly newaxes and 0-d booleans) skips that:
         * it is rejected all the same. */
        if (c->stored < c->items) {
            PyErr_Format(PyExc_IndexError, "number of dimensions must be within [0, %d], indexing result would have more",
                         CK_MAXDIMS);
            return -1;
        }
        return build_layout(a, items, (int)c->stored, (int)consumed, NULL) < 0 ? -1 : 1;
    }
    Py_ssize_t result_ndim = a->ndim - c->ints + c->newaxes;
    /* stored < items cannot pass the checks above (see IX_MAX_ITEMS);
     * tested anyway so that a dropped item can never go unnoticed */
    if (result_ndim > CK_MAXDIMS || c->stored < c->items) {
        PyErr_Format(PyExc_IndexError, "number of dimensions must be within [0, %d], indexing result would have %zd",
                     CK_MAXDIMS, result_ndim);
        return -1;
    }
    return build_layout(a, items, (int)c->stored, (int)consumed, out);
}

/* A parsed key; its items own references until ix_key_release. */
typedef struct ix_key {
    ix_item items[IX_MAX_ITEMS];
    ix_counts c;
} ix_key;

static void ix_key_release(ix_key *k)
{
    for (Py_ssize_t i = 0; i < k->c.stored; i++) {
        Py_CLEAR(k->items[i].big);
        Py_CLEAR(k->items[i].arr);
    }
    k->c.stored = 0;
}

/* key -> the layout it selects in self's array (0), or 1 for an advanced
 * key whose items stay in *k; -1 with an exception.  The caller releases k
 * in every case. */
static int parse_index(PyObject *self, PyObject *key, ix_layout *out, ix_key *k)
{
    ix_item *items = k->items;
    ix_counts c = {0, 0, 0, 0, 0, 0, 0, 0};
    int rc = 0;

    /* Only a tuple is a multi-axis key (NumPy >= 1.23 no longer reads lists
     * as tuples); anything else is one item, taken as is without building a
     * tuple, which keeps x[i] and x[a:b] cheap. */
    int is_tuple = PyTuple_Check(key);
    c.items = is_tuple ? PyTuple_GET_SIZE(key) : 1;

    for (Py_ssize_t i = 0; i < c.items; i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(key, i) : key;
        ix_item it = {.kind = IX_INT, .value = 0, .big = NULL, .arr = NULL};
        if (classify_item(item, &it) < 0) {
            rc = -1;
            break;
        }
        switch (it.kind) {
        case IX_INT: c.ints++; break;
        case IX_SLICE: c.slices++; break;
        case IX_NEWAXIS: c.newaxes++; break;
        case IX_ELLIPSIS:
            if (++c.ellipses > 1) rc = raise_index_error("an index can only have a single ellipsis ('...')");
            break;
        case IX_ADVANCED:
            /* keep going: NumPy would convert it and go on checking the rest */
            c.advanced++;
            c.advanced_axes += it.value;
            break;
        }
        if (c.stored < IX_MAX_ITEMS) {
            items[c.stored++] = it;
        } else {
            Py_XDECREF(it.big);
            Py_XDECREF(it.arr);
        }
        if (rc < 0) break;
    }
    k->c = c;
    if (rc == 0) rc = finish_layout(self, items, &c, out);
    return rc;
}

/* The stored items as the core's index items (borrowing their arrays). */
static void core_items(const ix_key *k, ck_index_item *out)
{
    for (Py_ssize_t i = 0; i < k->c.stored; i++) {
        const ix_item *it = &k->items[i];
        ck_index_item *o = &out[i];
        memset(o, 0, sizeof *o);
        switch (it->kind) {
        case IX_INT: o->kind = CK_INDEX_INT; o->value = it->value; break;
        case IX_SLICE:
            o->kind = CK_INDEX_SLICE;
            o->start = it->start;
            o->stop = it->stop;
            o->step = it->step;
            break;
        case IX_NEWAXIS: o->kind = CK_INDEX_NEWAXIS; break;
        case IX_ELLIPSIS: o->kind = CK_INDEX_ELLIPSIS; break;
        case IX_ADVANCED: o->kind = CK_INDEX_ARRAY; o->array = CK_ARR(it->arr); break;
        }
    }
}

static void make_view(ck_array *view, const ck_array *a, const ix_layout *l)
{
    ck_array_view(view, a);
    view->data += l->offset;
    ck_array_set_layout(view, l->ndim, l->shape, l->strides);
}

/* --------------------------------------------------------------- getitem */

PyObject *ck_py_getitem(PyObject *self, PyObject *key)
{
    ix_layout l;
    ix_key *k = PyMem_Malloc(sizeof *k);
    if (!k) return PyErr_NoMemory();
    k->c.stored = 0;
    int r = parse_index(self, key, &l, k);
    if (r != 0) {
        PyObject *res = NULL;
        if (r > 0) {
            ck_index_item items[IX_MAX_ITEMS];
            core_items(k, items);
            ck_array out;
            ck_status s = ck_index_get(&out, CK_ARR(self), (int)k->c.stored, items, CK_INDEX_RAISE);
            res = s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
            if (CK_AG_GATE() && res) res = ck_py_ag_index(self, (int)k->c.stored, items, CK_INDEX_RAISE, res);
        }
        ix_key_release(k);
        PyMem_Free(k);
        return res;
    }
    /* the same key over a C-contiguous array of self's shape: the view in
     * element units, which is what its gradient needs */
    ix_layout lv;
    int record = CK_AG_GATE() && ((CkArrayObject *)self)->ag;
    if (record) {
        ck_array fake;
        ck_ag_virtual(&fake, CK_ARR(self));
        build_layout(&fake, k->items, (int)k->c.stored, (int)(k->c.ints + k->c.slices + k->c.advanced_axes), &lv);
    }
    ix_key_release(k);
    PyMem_Free(k);
    ck_array view;
    make_view(&view, CK_ARR(self), &l);
    /* a 0-d view, not a scalar, when every axis got an int (as CuPy) */
    PyObject *res = ck_py_wrap_view(&view, self);
    if (record && res) {
        ck_array fv;
        ck_ag_virtual(&fv, CK_ARR(self));
        fv.data += lv.offset;
        ck_array_set_layout(&fv, lv.ndim, lv.shape, lv.strides);
        res = ck_py_ag_view("getitem", self, &fv, res);
    }
    return res;
}

/* --------------------------------------------------------------- setitem */

/* The core copies and fills without Python, so large ones let other threads run. */
/* NumPy's ComplexWarning for a store of complex values into a real array
 * (-1 when the warning was made an error). */
static int warn_complex_store(ck_dtype from, ck_dtype to)
{
    if (ck_dtype_is_complex(from) && !ck_dtype_is_complex(to) && to != CK_BOOL)
        return PyErr_WarnEx(ck_py_exc(CK_PY_COMPLEX_WARNING), "Casting complex values to real discards the imaginary part", 1);
    return 0;
}

static int run_assign(ck_array *dst, const ck_array *src)
{
    ck_status s;
    if (warn_complex_store(src->dtype, dst->dtype) < 0) return -1;
    if (dst->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_array_assign(dst, src);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_array_assign(dst, src);
    }
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static int run_fill(ck_array *dst, const ck_scalar *v)
{
    ck_status s;
    if (dst->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_array_fill(dst, v);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_array_fill(dst, v);
    }
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

/* A Python scalar stored into an array is converted as NumPy 2 converts it
 * (through int() / float()), which refuses values a cast would silently
 * mangle; the core's casts, meant for arrays, would not. */
int ck_py_check_weak_scalar(const ck_scalar *s, ck_dtype dt)
{
    if (ck_dtype_is_integer(s->dtype) && ck_dtype_is_integer(dt)) {
        ck_status st = ck_check_pyint_fits(s, dt);
        return st == CK_OK ? 0 : ck_py_raise_int(st);
    }
    if (ck_dtype_is_complex(s->dtype) && dt != CK_BOOL && !ck_dtype_is_complex(dt)) {
        if (ck_dtype_is_integer(dt))
            PyErr_SetString(PyExc_TypeError,
                            "int() argument must be a string, a bytes-like object or a real number, not 'complex'");
        else
            PyErr_SetString(PyExc_TypeError, "float() argument must be a string or a real number, not 'complex'");
        return -1;
    }
    if (ck_dtype_is_float(s->dtype) && ck_dtype_is_integer(dt)) {
        /* converting these to an integer is undefined behaviour in C too */
        if (isnan(s->v.f)) {
            PyErr_SetString(PyExc_ValueError, "cannot convert float NaN to integer");
            return -1;
        }
        if (isinf(s->v.f)) {
            PyErr_SetString(PyExc_OverflowError, "cannot convert float infinity to integer");
            return -1;
        }
    }
    return 0;
}

/* value as a scalar to store into dt: 0 (s set), 1 when value is not a
 * scalar, -1 with an exception (a Python number that NumPy 2 would not
 * convert to dt). */
static int store_scalar(PyObject *value, ck_dtype dt, ck_scalar *s)
{
    int weak = 0;
    int r = ck_py_scalar_from_obj(value, s, &weak);
    if (r < 0 && ck_dtype_is_inexact(dt)) return ck_py_big_int_as_float(value, s);
    if (r == 0 && weak && ck_py_check_weak_scalar(s, dt) < 0) return -1;
    return r;
}

/* value (not a scalar) as an array on a's device: a Python sequence
 * converted to a's dtype element by element as a scalar store would
 * (NumPy: [300] into int8 is an OverflowError, [1j] into float64 a
 * TypeError), anything else (NumPy and foreign arrays) with its own dtype,
 * cast later; new reference. */
static PyObject *value_array(PyObject *value, const ck_array *a)
{
    if (CkArray_Check(value)) return Py_NewRef(value);
    ck_dtype as = (PyList_Check(value) || PyTuple_Check(value)) ? a->dtype : CK_DTYPE_INVALID;
    return ck_py_asarray(value, as, -1, 1, ck_array_device(a));
}

static int assign_value(ck_array *view, PyObject *value)
{
    if (CkArray_Check(value)) return run_assign(view, CK_ARR(value));
    ck_scalar s;
    int r = store_scalar(value, view->dtype, &s);
    if (r <= 0) return r < 0 ? -1 : run_fill(view, &s);
    /* on the destination's device, so that the copy never crosses devices twice */
    PyObject *arr = value_array(value, view);
    if (!arr) return -1;
    r = run_assign(view, CK_ARR(arr));
    Py_DECREF(arr);
    return r;
}

static int assign_advanced(PyObject *self, const ix_key *k, PyObject *value)
{
    ck_array *a = CK_ARR(self);
    ck_index_item items[IX_MAX_ITEMS];
    if (!CkArray_Check(value)) {
        /* a scalar goes to the core as it is: x[mask] = 0 is then one
         * where() kernel, with no array made for the value */
        ck_scalar sc;
        int r = store_scalar(value, a->dtype, &sc);
        if (r < 0) return -1;
        if (r == 0) {
            if (warn_complex_store(sc.dtype, a->dtype) < 0) return -1;
            core_items(k, items);
            ck_status s = ck_index_fill(a, (int)k->c.stored, items, &sc, CK_INDEX_RAISE);
            return s == CK_OK ? 0 : ck_py_raise_int(s);
        }
    }
    PyObject *v = value_array(value, a);
    if (!v) return -1;
    const ck_array *va = CK_ARR(v);
    int r = warn_complex_store(va->dtype, a->dtype) < 0 ? -1 : 0;
    if (r == 0) {
        core_items(k, items);
        ck_status s = ck_index_set(a, (int)k->c.stored, items, va, CK_INDEX_RAISE);
        if (s != CK_OK) r = ck_py_raise_int(s);
    }
    Py_DECREF(v);
    return r;
}

int ck_py_setitem(PyObject *self, PyObject *key, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    /* before parsing, as NumPy: a read-only array reports that whatever the key */
    if (CkArray_Check(self) && !(CK_ARR(self)->flags & CK_ARRAY_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    /* autograd: x[key] = v where x or v requires grad records x's new node */
    int record = 0;
    if (CkArray_Check(self)) {
        ck_ag_bump_version(CK_ARR(self));
        if (CK_AG_GATE()) {
            int vg = CkArray_Check(value) && ((CkArrayObject *)value)->ag && ((CkArrayObject *)value)->ag->requires_grad;
            ck_ag_var *sv = ((CkArrayObject *)self)->ag;
            if (ck_py_ag_inplace_check(self, vg) < 0) return -1;
            record = vg || (sv && sv->requires_grad);
        }
    }
    ix_layout l, lv;
    ix_key *k = PyMem_Malloc(sizeof *k);
    if (!k) {
        PyErr_NoMemory();
        return -1;
    }
    k->c.stored = 0;
    int pr = parse_index(self, key, &l, k);
    if (pr > 0 && record) {
        /* the rules of integer and boolean indexing are trainops' (issue 16) */
        PyErr_SetString(PyExc_NotImplementedError, "assignment through an integer or boolean index (x[idx] = v) "
                        "where gradients are recorded is not differentiable in cudakit yet; use ck.where, or "
                        "assign under ck.no_grad()");
        pr = -1;
    }
    if (pr != 0) {
        int r = pr > 0 ? assign_advanced(self, k, value) : -1;
        ix_key_release(k);
        PyMem_Free(k);
        return r;
    }
    if (record) {
        ck_array fake;
        ck_ag_virtual(&fake, CK_ARR(self));
        build_layout(&fake, k->items, (int)k->c.stored, (int)(k->c.ints + k->c.slices + k->c.advanced_axes), &lv);
    }
    ix_key_release(k);
    PyMem_Free(k);
    /* The view holds its own buffer reference, so converting value (which
     * may run Python code) cannot free the memory written to. */
    ck_array view;
    make_view(&view, CK_ARR(self), &l);
    int r = assign_value(&view, value);
    ck_array_release(&view);
    if (r == 0 && record) {
        ck_array fv;
        ck_ag_virtual(&fv, CK_ARR(self));
        fv.data += lv.offset;
        ck_array_set_layout(&fv, lv.ndim, lv.shape, lv.strides);
        r = ck_py_ag_setitem(self, value, &fv);
    }
    return r;
}
