/*
 * format.c - repr() and str() of arrays.
 *
 * NumPy's printing (precision, padding, summarising with "...", line
 * wrapping, when to show dtype=) is intricate and users compare it by eye;
 * re-implementing it would drift.  So the text comes from NumPy itself,
 * handed a zero-copy view of host memory: repr(ck_array) reads exactly as
 * repr(np_array) does.  Without NumPy a small C formatter gives similar
 * text, so that repr() keeps working in a minimal environment.
 */
#include "ck_python.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ host data */

/* A CPU array object with self's values: self, or a host copy of a GPU
 * array.  New reference; NULL with an exception. */
static PyObject *host_object(PyObject *self)
{
    const ck_array *a = CK_ARR(self);
    if (ck_array_device(a).type == CK_DEVICE_CPU) return Py_NewRef(self);
    /* work on a private view: the copy may run without the GIL */
    ck_array snap, host;
    ck_array_view(&snap, a);
    ck_status s;
    if (snap.size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_array_to_device(&host, &snap, ck_device_cpu());
        Py_END_ALLOW_THREADS
    } else {
        s = ck_array_to_device(&host, &snap, ck_device_cpu());
    }
    ck_array_release(&snap);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&host, NULL);
}

/* repr/str by NumPy of a CPU array object; NULL with an exception. */
static PyObject *format_by_numpy(PyObject *host, int use_str)
{
    PyObject *np = ck_py_numpy();
    if (!np) return NULL;
    /* the memoryview keeps NumPy off our __array__, and shares memory */
    PyObject *mv = PyMemoryView_FromObject(host);
    if (!mv) return NULL;
    PyObject *arr = PyObject_CallMethod(np, "asarray", "O", mv);
    Py_DECREF(mv);
    if (!arr) return NULL;
    PyObject *res = use_str ? PyObject_Str(arr) : PyObject_Repr(arr);
    Py_DECREF(arr);
    return res;
}

/* ------------------------------------------------------------ fallback */

/* A growing byte string: element texts are ASCII (reprs of bool, int,
 * float and complex), so bytes are enough and one decode at the end. */
typedef struct {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->failed = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_adds(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_spaces(sbuf *b, int n)
{
    for (int i = 0; i < n; i++) sb_add(b, " ", 1);
}

static int fmt_elem(sbuf *b, const char *p, ck_dtype t, int use_str)
{
    PyObject *o = ck_py_scalar_to_py(p, t);
    if (!o) return -1;
    PyObject *s = use_str ? PyObject_Str(o) : PyObject_Repr(o);
    Py_DECREF(o);
    if (!s) return -1;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) {
        Py_DECREF(s);
        return -1;
    }
    sb_add(b, u, (size_t)n);
    Py_DECREF(s);
    return 0;
}

/* NumPy's defaults: summarise above 1000 elements, 3 items each side. */
#define CK_FMT_THRESHOLD 1000
#define CK_FMT_EDGE 3

/* Between items of dimension dim: ", " (repr) or " " (str) in the last
 * dimension; in outer ones a line break per remaining dimension and an
 * indent that lines the brackets up, as NumPy does. */
static void fmt_sep(sbuf *b, const ck_array *a, int dim, int indent, int use_str)
{
    if (dim == a->ndim - 1) {
        sb_adds(b, use_str ? " " : ", ");
        return;
    }
    if (!use_str) sb_adds(b, ",");
    for (int k = 0; k < a->ndim - dim - 1; k++) sb_adds(b, "\n");
    sb_spaces(b, indent + dim + 1);
}

static int fmt_rec(sbuf *b, const ck_array *a, const char *data, int dim, int summarize,
                   int indent, int use_str)
{
    if (dim == a->ndim) return fmt_elem(b, data, a->dtype, use_str);
    int64_t n = a->shape[dim];
    int skip = summarize && n > 2 * CK_FMT_EDGE;
    sb_adds(b, "[");
    for (int64_t i = 0; i < n; i++) {
        if (i > 0) fmt_sep(b, a, dim, indent, use_str);
        if (skip && i == CK_FMT_EDGE) {
            sb_adds(b, "...");
            fmt_sep(b, a, dim, indent, use_str);
            i = n - CK_FMT_EDGE;
        }
        if (fmt_rec(b, a, data + i * a->strides[dim], dim + 1, summarize, indent, use_str) < 0) return -1;
        if (b->failed) break;
    }
    sb_adds(b, "]");
    return 0;
}

/* The dtypes NumPy leaves out of a repr because literals imply them. */
static int dtype_is_implied(ck_dtype t)
{
    return t == CK_FLOAT64 || t == CK_INT64 || t == CK_BOOL || t == CK_COMPLEX128;
}

/* repr/str of a CPU array without NumPy; NULL with an exception. */
static PyObject *format_fallback(const ck_array *a, int use_str)
{
    sbuf b = {NULL, 0, 0, 0};
    const char *prefix = "array(";
    int indent = (int)strlen(prefix);
    if (!use_str) sb_adds(&b, prefix);
    if (a->size == 0) {
        sb_adds(&b, "[]");
    } else if (fmt_rec(&b, a, a->data, 0, a->size > CK_FMT_THRESHOLD, use_str ? 0 : indent, use_str) < 0) {
        free(b.p);
        return NULL;
    }
    if (!use_str) {
        if (a->size == 0 && a->ndim != 1) {
            sb_adds(&b, ", shape=");
            sb_adds(&b, ck_shape_str(a->ndim, a->shape, 0));
        }
        if (a->size == 0 || !dtype_is_implied(a->dtype)) {
            sb_adds(&b, ", dtype=");
            sb_adds(&b, ck_dtype_get_info(a->dtype)->name);
        }
        sb_adds(&b, ")");
    }
    if (b.failed) {
        free(b.p);
        return PyErr_NoMemory();
    }
    PyObject *res = PyUnicode_DecodeUTF8(b.p ? b.p : "", (Py_ssize_t)b.len, "replace");
    free(b.p);
    return res;
}

/* ------------------------------------------------------------ entry points */

/* Last resort when even the values cannot be read (a failed device copy):
 * describe the array instead of raising from repr(). */
static PyObject *format_placeholder(const ck_array *a, const char *why)
{
    char dev[64];
    ck_device_str(ck_array_device(a), dev, sizeof dev);
    return PyUnicode_FromFormat("<cudakit array shape=%s dtype=%s device=%s (values unavailable: %s)>",
                                ck_shape_str(a->ndim, a->shape, 0), ck_dtype_get_info(a->dtype)->name,
                                dev, why);
}

static PyObject *format_array(PyObject *self, int use_str)
{
    const ck_array *a = CK_ARR(self);
    if (a->buf == NULL) return PyUnicode_FromString("<uninitialised cudakit array>");
    PyObject *host = host_object(self);
    if (!host) {
        /* keep the message: it says why the device copy failed */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyObject *msg = value ? PyObject_Str(value) : NULL;
        const char *why = msg ? PyUnicode_AsUTF8(msg) : NULL;
        PyErr_Clear();   /* from Str / AsUTF8, if they failed */
        PyObject *res = format_placeholder(a, why ? why : "the copy to the host failed");
        Py_XDECREF(msg);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return res;
    }
    PyObject *res = format_by_numpy(host, use_str);
    if (!res) {
        /* No NumPy (or it failed on us): approximate its text ourselves
         * rather than make repr() raise. */
        PyErr_Clear();
        res = format_fallback(CK_ARR(host), use_str);
        if (!res) {
            PyErr_Clear();
            res = format_placeholder(CK_ARR(host), "formatting failed");
        }
    }
    Py_DECREF(host);
    return res;
}

PyObject *ck_py_repr(PyObject *self) { return format_array(self, 0); }

PyObject *ck_py_str(PyObject *self) { return format_array(self, 1); }
