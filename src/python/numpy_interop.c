/*
 * numpy_interop.c - an array as NumPy and the standard library meet it:
 * __array__ and __array_interface__ (CPU arrays: shared memory), get() (a
 * NumPy copy from any device), pickling (__reduce__ and _reconstruct),
 * copy.copy / copy.deepcopy, tolist() and item().
 */
#include "interop.h"
#include "cudakit_graph.h"

#include <string.h>

/* Buffers over memory someone else frees (a NumPy array we copy into). */
static void noop_release(void *ctx) { (void)ctx; }

/* Fill *o as a C-contiguous array over b (whose reference it takes). */
static void init_c_array(ck_array *o, ck_buffer *b, char *data, ck_dtype t, int ndim, const int64_t *shape)
{
    o->buf = b;
    o->data = data;
    o->dtype = t;
    o->ndim = ndim;
    o->flags = CK_ARRAY_WRITEABLE;
    for (int i = 0; i < ndim; i++) o->shape[i] = shape[i];
    ck_strides_c(ndim, shape, ck_dtype_get_info(t)->itemsize, o->strides);
    ck_array_update_flags(o);
}

/* Copy a's values in C order into dst, host memory of a->size * itemsize
 * bytes, from whichever device a lives on.  GIL not needed. */
static ck_status host_copy_into_nogil(const ck_array *a, void *dst)
{
    size_t n = (size_t)a->size * (size_t)ck_array_itemsize(a);
    if (n == 0) return CK_OK;
    ck_device dev = ck_array_device(a);
    if (dev.type == CK_DEVICE_CPU) {
        ck_status rs = ck_graph_refuse(dev, "a copy to the host");
        if (rs != CK_OK) return rs;
        if (a->flags & CK_ARRAY_C_CONTIGUOUS) {
            memcpy(dst, a->data, n);
            return CK_OK;
        }
        ck_buffer *b = ck_buffer_wrap(ck_device_cpu(), dst, n, 0, noop_release, NULL);
        if (!b) return ck_error_status();
        ck_array d;
        init_c_array(&d, b, dst, a->dtype, a->ndim, a->shape);
        ck_status s = ck_array_assign(&d, a);
        ck_array_release(&d);
        return s;
    }
    /* one transfer of a contiguous block: gather on the device first */
    ck_array c;
    const ck_array *src = a;
    if (!(a->flags & CK_ARRAY_C_CONTIGUOUS)) {
        ck_status s = ck_array_astype(&c, a, a->dtype, 0);
        if (s != CK_OK) return s;
        src = &c;
    }
    ck_status s = ck_memcpy_to_host(dev, dst, src->data, n);
    if (src == &c) ck_array_release(&c);
    return s;
}

static ck_status host_copy_into(const ck_array *a, void *dst)
{
    ck_status s;
    if (a->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = host_copy_into_nogil(a, dst);
        Py_END_ALLOW_THREADS
    } else {
        s = host_copy_into_nogil(a, dst);
    }
    return s;
}

/* A NumPy array that shares self's memory (CPU arrays only): going through
 * memoryview keeps NumPy from calling back into our __array__. */
static PyObject *numpy_view(PyObject *self)
{
    PyObject *np = ck_py_numpy();
    if (!np) return NULL;
    PyObject *mv = PyMemoryView_FromObject(self);
    if (!mv) return NULL;
    PyObject *res = PyObject_CallMethod(np, "asarray", "O", mv);
    Py_DECREF(mv);
    return res;
}

/* A fresh NumPy array (owning its memory) holding a copy of a. */
static PyObject *numpy_copy(const ck_array *a)
{
    PyObject *np = ck_py_numpy();
    if (!np) return NULL;
    PyObject *shape = ck_py_shape_tuple(a->ndim, a->shape);
    if (!shape) return NULL;
    PyObject *res = PyObject_CallMethod(np, "empty", "Os", shape, ck_dtype_get_info(a->dtype)->name);
    Py_DECREF(shape);
    if (!res) return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(res, &v, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        Py_DECREF(res);
        return NULL;
    }
    if ((int64_t)v.len != a->size * ck_array_itemsize(a)) {
        PyBuffer_Release(&v);
        Py_DECREF(res);
        PyErr_SetString(PyExc_RuntimeError, "numpy.empty returned a buffer of unexpected size");
        return NULL;
    }
    ck_status s = host_copy_into(a, v.buf);
    PyBuffer_Release(&v);
    if (s != CK_OK) {
        Py_DECREF(res);
        return ck_py_raise(s);
    }
    return res;
}

static PyObject *device_str_obj(ck_device d)
{
    char buf[64];
    ck_device_str(d, buf, sizeof buf);
    return PyUnicode_FromString(buf);
}

/* ------------------------------------------------------------ NumPy */

static PyObject *arr_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist, &dtype, &copy_obj)) return NULL;
    if (ck_py_check_ready(self) < 0) return NULL;
    if (!ck_py_is_cpu(CK_ARR(self))) {
        char d[64];
        ck_device_str(ck_array_device(CK_ARR(self)), d, sizeof d);
        PyErr_Format(PyExc_TypeError,
                     "Implicit conversion to a NumPy array is not allowed for an array on %s; "
                     "use cudakit.asnumpy() or .get() to copy explicitly.", d);
        return NULL;
    }
    int copy;
    if (ck_py_parse_copy(copy_obj, &copy) < 0) return NULL;
    if (ck_py_refuse_host_read(CK_ARR(self), "reading a CPU array's memory on the host (NumPy)") < 0) return NULL;
    PyObject *res = numpy_view(self);
    if (!res) return NULL;
    int copied = 0;
    if (dtype != Py_None) {
        /* astype(copy=False) returns the same object when no cast is needed,
         * which tells us whether NumPy had to copy */
        PyObject *kw = Py_BuildValue("{sO}", "copy", Py_False);
        PyObject *meth = PyObject_GetAttrString(res, "astype");
        PyObject *argt = PyTuple_Pack(1, dtype);
        PyObject *cast = (kw && meth && argt) ? PyObject_Call(meth, argt, kw) : NULL;
        Py_XDECREF(kw);
        Py_XDECREF(meth);
        Py_XDECREF(argt);
        if (!cast) {
            Py_DECREF(res);
            return NULL;
        }
        copied = cast != res;
        Py_DECREF(res);
        res = cast;
        if (copied && copy == 0) {
            Py_DECREF(res);
            PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as requested.");
            return NULL;
        }
    }
    if (copy == 1 && !copied) {
        PyObject *c = PyObject_CallMethod(res, "copy", NULL);
        Py_DECREF(res);
        res = c;
    }
    return res;
}

static PyObject *arr_get(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", "order", "out", "blocking", NULL};
    PyObject *stream = Py_None, *order = Py_None, *out = Py_None;
    int blocking = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOOp:get", kwlist, &stream, &order, &out, &blocking)) return NULL;
    if (CkArray_Check(out)) {
        /* CuPy's get(out=pinned, stream=s, blocking=False): queued on s */
        if (ck_py_copy_async_obj(out, self, stream, blocking) < 0) return NULL;
        return Py_NewRef(out);
    }
    if (out != Py_None) return ck_py_to_numpy(self, out, 1);
    /* The copy is synchronous (the backend's copy_to_host waits), so any
     * stream the caller names is already satisfied. */
    ck_array snap;
    if (ck_py_snapshot(self, &snap) < 0) return NULL;
    PyObject *res = numpy_copy(&snap);
    ck_array_release(&snap);
    return res;
}

/* CuPy's set(arr, stream=None): arr's values (same shape and dtype) into
 * this array, queued on the stream without waiting when arr is a CPU array
 * in pinned memory, synchronously from pageable memory. */
static PyObject *arr_set(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"arr", "stream", NULL};
    PyObject *arr, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:set", kwlist, &arr, &stream)) return NULL;
    if (ck_py_check_ready(self) < 0) return NULL;
    PyObject *host = ck_py_asarray(arr, CK_DTYPE_INVALID, -1, 1, ck_device_cpu());
    if (!host) return NULL;
    const ck_array *a = CK_ARR(self), *h = CK_ARR(host);
    int same = a->ndim == h->ndim && !memcmp(a->shape, h->shape, (size_t)a->ndim * sizeof *a->shape);
    if (!same || a->dtype != h->dtype) {
        PyErr_Format(PyExc_ValueError, "set: %s mismatch (the array's and arr's must be equal)", same ? "dtype" : "shape");
        Py_DECREF(host);
        return NULL;
    }
    int r = ck_py_copy_async_obj(self, host, stream, 0);
    Py_DECREF(host);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *typestr_of(ck_dtype t)
{
    const ck_dtype_info *info = ck_dtype_get_info(t);
    char order = info->itemsize == 1 ? '|' : ck_py_little_endian() ? '<' : '>';
    return PyUnicode_FromFormat("%c%c%d", order, info->kind_char, info->itemsize);
}

static PyObject *arr_array_interface(PyObject *self, void *Py_UNUSED(closure))
{
    if (ck_py_check_ready(self) < 0) return NULL;
    const ck_array *a = CK_ARR(self);
    if (!ck_py_is_cpu(a)) {
        /* AttributeError makes hasattr() false, so NumPy falls through to
         * __array__ and its explicit message */
        char d[64];
        ck_device_str(ck_array_device(a), d, sizeof d);
        PyErr_Format(PyExc_AttributeError,
                     "__array_interface__ is only available for arrays on the CPU (this one is on %s); "
                     "use cudakit.asnumpy() or .get() to copy explicitly.", d);
        return NULL;
    }
    if (ck_py_refuse_host_read(a, "reading a CPU array's memory on the host (NumPy)") < 0) return NULL;
    PyObject *shape = ck_py_shape_tuple(a->ndim, a->shape);
    PyObject *typestr = typestr_of(a->dtype);
    PyObject *strides = (a->flags & CK_ARRAY_C_CONTIGUOUS) ? Py_NewRef(Py_None)
                                                           : ck_py_shape_tuple(a->ndim, a->strides);
    PyObject *data = Py_BuildValue("(NO)", PyLong_FromVoidPtr(a->data),
                                   (a->flags & CK_ARRAY_WRITEABLE) ? Py_False : Py_True);
    PyObject *descr = typestr ? Py_BuildValue("[(sO)]", "", typestr) : NULL;
    PyObject *res = NULL;
    if (shape && typestr && strides && data && descr)
        res = Py_BuildValue("{sOsOsOsOsOsi}", "shape", shape, "typestr", typestr, "descr", descr,
                            "data", data, "strides", strides, "version", 3);
    Py_XDECREF(shape);
    Py_XDECREF(typestr);
    Py_XDECREF(strides);
    Py_XDECREF(data);
    Py_XDECREF(descr);
    return res;
}

/* ------------------------------------------------------------ pickling */

static PyObject *arr_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    ck_array snap;
    if (ck_py_snapshot(self, &snap) < 0) return NULL;
    PyObject *mod = NULL, *fn = NULL, *bytes = NULL, *shape = NULL, *devs = NULL, *res = NULL;
    int64_t nbytes = snap.size * ck_array_itemsize(&snap);
    mod = PyImport_ImportModule("cudakit._core");
    if (!mod) goto done;
    fn = PyObject_GetAttrString(mod, "_reconstruct");
    if (!fn) goto done;
    bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)nbytes);
    if (!bytes) goto done;
    ck_status s = host_copy_into(&snap, PyBytes_AS_STRING(bytes));
    if (s != CK_OK) {
        ck_py_raise(s);
        goto done;
    }
    shape = ck_py_shape_tuple(snap.ndim, snap.shape);
    devs = device_str_obj(ck_array_device(&snap));
    if (!shape || !devs) goto done;
    res = Py_BuildValue("(O(OsOO))", fn, bytes, ck_dtype_get_info(snap.dtype)->name, shape, devs);
done:
    Py_XDECREF(mod);
    Py_XDECREF(fn);
    Py_XDECREF(bytes);
    Py_XDECREF(shape);
    Py_XDECREF(devs);
    ck_array_release(&snap);
    return res;
}

static PyObject *py_reconstruct(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *data_obj, *dtype_obj, *shape_obj, *dev_obj;
    if (!PyArg_ParseTuple(args, "OOOO:_reconstruct", &data_obj, &dtype_obj, &shape_obj, &dev_obj)) return NULL;
    ck_dtype dt = CK_DTYPE_INVALID;
    if (PyUnicode_Check(dtype_obj)) {
        const char *name = PyUnicode_AsUTF8(dtype_obj);
        if (!name) return NULL;
        dt = ck_dtype_from_name(name);
    }
    if (dt == CK_DTYPE_INVALID && ck_py_dtype_from_obj(dtype_obj, CK_FLOAT64, &dt) < 0) return NULL;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    if (ck_py_shape_from_obj(shape_obj, &ndim, shape) < 0) return NULL;
    ck_device dev = ck_device_cpu();
    int has_dev = 0;
    if (dev_obj != Py_None && ck_py_device_from_obj(dev_obj, &dev, &has_dev) < 0) return NULL;
    if (!has_dev) dev = ck_device_cpu();

    Py_buffer v;
    if (PyObject_GetBuffer(data_obj, &v, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    ck_array host;
    ck_status s = ck_array_empty(&host, ndim, shape, dt, ck_device_cpu());
    if (s != CK_OK) {
        PyBuffer_Release(&v);
        return ck_py_raise(s);
    }
    int64_t nbytes = host.size * ck_array_itemsize(&host);
    if ((int64_t)v.len != nbytes) {
        PyBuffer_Release(&v);
        ck_array_release(&host);
        PyErr_Format(PyExc_ValueError, "_reconstruct: %zd bytes of data for an array of %lld bytes",
                     v.len, (long long)nbytes);
        return NULL;
    }
    if (nbytes) memcpy(host.data, v.buf, (size_t)nbytes);
    PyBuffer_Release(&v);
    if (dev.type == CK_DEVICE_CPU) return ck_py_wrap(&host, NULL);
    ck_array moved;
    s = ck_py_to_device(&moved, &host, dev);
    ck_array_release(&host);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&moved, NULL);
}

/* ------------------------------------------------------------ copies */

static PyObject *arr_copy_impl(PyObject *self)
{
    ck_array snap, out;
    if (ck_py_snapshot(self, &snap) < 0) return NULL;
    /* NumPy's copy.copy keeps the memory order (order='K' for the usual
     * cases): a Fortran-ordered array stays Fortran-ordered */
    int order_f = (snap.flags & CK_ARRAY_F_CONTIGUOUS) && !(snap.flags & CK_ARRAY_C_CONTIGUOUS);
    ck_status s = ck_py_copy_array(&out, &snap, order_f);
    ck_array_release(&snap);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&out, NULL);
}

static PyObject *arr_copy(PyObject *self, PyObject *Py_UNUSED(ignored)) { return arr_copy_impl(self); }

static PyObject *arr_deepcopy(PyObject *self, PyObject *memo)
{
    (void)memo;   /* elements are plain numbers: nothing inside to memoise */
    return arr_copy_impl(self);
}

/* ------------------------------------------------------------ tolist, item */

static PyObject *tolist_rec(const ck_array *a, const char *data, int dim)
{
    if (dim == a->ndim) return ck_py_scalar_to_py(data, a->dtype);
    Py_ssize_t n = (Py_ssize_t)a->shape[dim];
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = tolist_rec(a, data + i * a->strides[dim], dim + 1);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

PyObject *ck_py_tolist(PyObject *self)
{
    ck_array snap;
    if (ck_py_snapshot(self, &snap) < 0) return NULL;
    if (ck_py_refuse_host_read(&snap, "tolist()") < 0) {
        ck_array_release(&snap);
        return NULL;
    }
    if (!ck_py_is_cpu(&snap)) {
        ck_array host;
        ck_status s = ck_py_to_device(&host, &snap, ck_device_cpu());
        ck_array_release(&snap);
        if (s != CK_OK) return ck_py_raise(s);
        snap = host;
    }
    PyObject *res = tolist_rec(&snap, snap.data, 0);
    ck_array_release(&snap);
    return res;
}

static PyObject *arr_tolist(PyObject *self, PyObject *Py_UNUSED(ignored)) { return ck_py_tolist(self); }

static int index_of(PyObject *o, Py_ssize_t *out)
{
    if (PyBool_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "an integer is required");
        return -1;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    *out = PyLong_AsSsize_t(i);
    Py_DECREF(i);
    if (*out == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_IndexError, "index is out of bounds");
        }
        return -1;
    }
    return 0;
}

static PyObject *arr_item(PyObject *self, PyObject *args)
{
    if (ck_py_check_ready(self) < 0) return NULL;
    const ck_array *a = CK_ARR(self);
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    PyObject *idx = args;
    /* item((i, j)) and item(i, j) mean the same */
    if (nargs == 1 && PyTuple_Check(PyTuple_GET_ITEM(args, 0))) idx = PyTuple_GET_ITEM(args, 0);
    Py_ssize_t n = PyTuple_GET_SIZE(idx);
    int64_t off = 0;
    if (n == 0) {
        if (a->size != 1) {
            PyErr_SetString(PyExc_ValueError, "can only convert an array of size 1 to a Python scalar");
            return NULL;
        }
    } else if (n == 1 && idx == args) {
        Py_ssize_t k;
        if (index_of(PyTuple_GET_ITEM(idx, 0), &k) < 0) return NULL;
        if (k < 0) k += (Py_ssize_t)a->size;
        if (k < 0 || k >= a->size) {
            PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for size %lld",
                         k < 0 ? k - (Py_ssize_t)a->size : k, (long long)a->size);
            return NULL;
        }
        /* flat C-order index -> offset through the strides */
        int64_t rem = k;
        for (int d = a->ndim - 1; d >= 0; d--) {
            off += (rem % a->shape[d]) * a->strides[d];
            rem /= a->shape[d];
        }
    } else {
        if (n != a->ndim) {
            PyErr_SetString(PyExc_ValueError, "incorrect number of indices for array");
            return NULL;
        }
        for (int d = 0; d < a->ndim; d++) {
            Py_ssize_t k;
            if (index_of(PyTuple_GET_ITEM(idx, d), &k) < 0) return NULL;
            Py_ssize_t orig = k;
            if (k < 0) k += (Py_ssize_t)a->shape[d];
            if (k < 0 || k >= a->shape[d]) {
                PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with size %lld",
                             orig, d, (long long)a->shape[d]);
                return NULL;
            }
            off += (int64_t)k * a->strides[d];
        }
    }
    const char *p = a->data + off;
    if (ck_py_refuse_host_read(a, "item()") < 0) return NULL;
    if (ck_py_is_cpu(a)) return ck_py_scalar_to_py(p, a->dtype);
    _Alignas(16) unsigned char tmp[16];
    ck_device dev = ck_array_device(a);
    ck_status s = ck_memcpy_to_host(dev, tmp, p, (size_t)ck_array_itemsize(a));
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_scalar_to_py(tmp, a->dtype);
}

/* ------------------------------------------------------------ tables */

PyMethodDef ck_py_interop_methods[] = {
    CK_DEF_KW(__array__, arr_array, "($self, /, dtype=None, copy=None)",
              "A NumPy array sharing this array's memory (CPU arrays only)."),
    CK_DEF_NOARGS(__reduce__, arr_reduce, "($self, /)", "Pickling: the values, dtype, shape and device."),
    CK_DEF_NOARGS(__copy__, arr_copy, "($self, /)", "copy.copy(a): a copy of the array."),
    CK_DEF_O(__deepcopy__, arr_deepcopy, "($self, memo, /)", "copy.deepcopy(a): a copy of the array."),
    CK_DEF_KW(get, arr_get, "($self, /, stream=None, order=None, out=None, blocking=True)",
              "A NumPy array with a copy of the data (from any device; order is CuPy's and ignored: the copy is "
              "C-contiguous); with out a cudakit CPU array in pinned memory, the copy goes into it on the stream, "
              "waiting for it only when blocking."),
    CK_DEF_KW(set, arr_set, "($self, /, arr, stream=None)",
              "Copy arr's values (same shape and dtype) into this array: on the stream without waiting when arr is in "
              "pinned memory (cudakit.cuda.pinned_empty)."),
    CK_DEF_NOARGS(tolist, arr_tolist, "($self, /)", "The array as nested lists of Python scalars."),
    CK_DEF_VARARGS(item, arr_item, "($self, /, *args)",
                   "One element as a Python scalar: item() of a one-element array, item(flat_index), item(i, j, ...)."),
    {NULL, NULL, 0, NULL},
};

PyGetSetDef ck_py_interop_getset[] = {
    {"__array_interface__", arr_array_interface, NULL, "NumPy's array interface (version 3), CPU arrays only", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyMethodDef ck_py_interop_functions[] = {
    CK_DEF_VARARGS(_reconstruct, py_reconstruct, "(data, dtype, shape, device, /)", "Rebuild a pickled array."),
    {NULL, NULL, 0, NULL},
};
