/*
 * bufferproto.c - the buffer protocol, both directions: CPU arrays export
 * their memory (memoryview, NumPy, anything that reads buffers), and any
 * exporter's memory is wrapped as an array without a copy (checked first:
 * format, strides, extent, alignment).  GPU arrays refuse it (interop.h).
 */
#include "interop.h"

#include <stdlib.h>
#include <string.h>

static const char ck_gpu_buffer_msg[] =
    "Implicit conversion to a host NumPy array via the buffer protocol is not allowed; "
    "use cudakit.asnumpy() or .get() to copy explicitly.";

/* The struct format we export.  NumPy exports int64 as 'l' on LP64
 * platforms; exporting the table's 'q' would make np.asarray() produce
 * longlong arrays, which are == int64 but print "dtype=int64" where
 * NumPy's own int64 arrays print none, so repr() would differ. */
static const char *export_format(ck_dtype t)
{
#if defined(__LP64__) || defined(_LP64)
    if (t == CK_INT64) return "l";
    if (t == CK_UINT64) return "L";
#endif
    return ck_dtype_get_info(t)->format;
}

/* ------------------------------------------------------------ buffer export */

/* What view->internal points to: the shape and strides the consumer reads,
 * and a reference to the memory so that it outlives any later change to the
 * exporting object's own ck_array. */
typedef struct {
    ck_buffer *buf;
    Py_ssize_t dims[];   /* shape[ndim], then strides[ndim] */
} ck_export_info;

static int ck_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    view->obj = NULL;
    if (ck_py_check_ready(self) < 0) return -1;
    const ck_array *a = CK_ARR(self);
    if (!ck_py_is_cpu(a)) {
        PyErr_SetString(PyExc_TypeError, ck_gpu_buffer_msg);
        return -1;
    }
    if (ck_py_refuse_host_read(a, "reading a CPU array's memory on the host (asnumpy, NumPy, memoryview)") < 0)
        return -1;
    int writeable = (a->flags & CK_ARRAY_WRITEABLE) != 0;
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && !writeable) {
        PyErr_SetString(PyExc_BufferError, "cudakit array is read-only");
        return -1;
    }
    int c = (a->flags & CK_ARRAY_C_CONTIGUOUS) != 0, f = (a->flags & CK_ARRAY_F_CONTIGUOUS) != 0;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) {
        PyErr_SetString(PyExc_BufferError, "cudakit array is not C-contiguous");
        return -1;
    }
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f) {
        PyErr_SetString(PyExc_BufferError, "cudakit array is not Fortran contiguous");
        return -1;
    }
    if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) {
        PyErr_SetString(PyExc_BufferError, "cudakit array is not contiguous");
        return -1;
    }
    /* a consumer that takes no strides assumes C order */
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c) {
        PyErr_SetString(PyExc_BufferError, "cudakit array is not C-contiguous");
        return -1;
    }
    int nd = a->ndim;
    ck_export_info *info = PyMem_Malloc(sizeof *info + sizeof(Py_ssize_t) * (size_t)(2 * (nd > 0 ? nd : 1)));
    if (!info) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < nd; i++) {
        info->dims[i] = (Py_ssize_t)a->shape[i];
        info->dims[nd + i] = (Py_ssize_t)a->strides[i];
    }
    info->buf = a->buf;
    ck_buffer_retain(a->buf);

    view->buf = a->data;
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)(a->size * ck_array_itemsize(a));
    view->itemsize = ck_array_itemsize(a);
    view->readonly = !writeable;
    /* without a shape the consumer sees flat bytes, as PyBuffer_FillInfo describes them */
    view->ndim = (flags & PyBUF_ND) == PyBUF_ND || nd == 0 ? nd : 1;
    view->format = (flags & PyBUF_FORMAT) ? (char *)export_format(a->dtype) : NULL;
    view->shape = (flags & PyBUF_ND) == PyBUF_ND ? info->dims : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->dims + nd : NULL;
    view->suboffsets = NULL;
    view->internal = info;
    return 0;
}

static void ck_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    ck_export_info *info = view->internal;
    if (!info) return;
    view->internal = NULL;
    ck_buffer_release(info->buf);
    PyMem_Free(info);
}

PyBufferProcs ck_py_buffer_procs = {
    .bf_getbuffer = ck_getbuffer,
    .bf_releasebuffer = ck_releasebuffer,
};

/* ------------------------------------------------------------ buffer import */

/* Struct-module format -> dtype, CK_DTYPE_INVALID when unsupported.  The
 * itemsize is checked against the exporter's too: it settles 'l' (4 bytes in
 * standard mode, 8 in native mode on LP64) and rejects anything odd. */
ck_dtype ck_py_dtype_from_format(const char *fmt, Py_ssize_t itemsize)
{
    const char *p = fmt ? fmt : "B";
    int native_sizes = 1, swapped = 0;
    switch (*p) {
    case '@': p++; break;
    case '|': p++; break;   /* NumPy's "not applicable" byte order */
    case '=': native_sizes = 0; p++; break;
    case '<': native_sizes = 0; swapped = !ck_py_little_endian(); p++; break;
    case '>': case '!': native_sizes = 0; swapped = ck_py_little_endian(); p++; break;
    default: break;
    }
    if (p[0] == '1' && p[1] != '\0' && (p[1] < '0' || p[1] > '9')) p++;   /* an explicit repeat count of one */
    ck_dtype t;
    switch (p[0]) {
    case '?': t = CK_BOOL; break;
    case 'b': t = CK_INT8; break;
    case 'B': t = CK_UINT8; break;
    case 'h': t = CK_INT16; break;
    case 'H': t = CK_UINT16; break;
    case 'i': t = CK_INT32; break;
    case 'I': t = CK_UINT32; break;
    case 'l': t = native_sizes && sizeof(long) == 8 ? CK_INT64 : CK_INT32; break;
    case 'L': t = native_sizes && sizeof(long) == 8 ? CK_UINT64 : CK_UINT32; break;
    case 'q': t = CK_INT64; break;
    case 'Q': t = CK_UINT64; break;
    case 'n': if (!native_sizes) return CK_DTYPE_INVALID; t = sizeof(Py_ssize_t) == 8 ? CK_INT64 : CK_INT32; break;
    case 'N': if (!native_sizes) return CK_DTYPE_INVALID; t = sizeof(size_t) == 8 ? CK_UINT64 : CK_UINT32; break;
    case 'e': t = CK_FLOAT16; break;
    case 'f': t = CK_FLOAT32; break;
    case 'd': t = CK_FLOAT64; break;
    case 'Z':
        p++;
        if (p[0] == 'f') t = CK_COMPLEX64;
        else if (p[0] == 'd') t = CK_COMPLEX128;
        else return CK_DTYPE_INVALID;
        break;
    default:
        return CK_DTYPE_INVALID;
    }
    if (p[1] != '\0') return CK_DTYPE_INVALID;
    if (ck_dtype_get_info(t)->itemsize != itemsize) return CK_DTYPE_INVALID;
    if (swapped && itemsize > 1) return CK_DTYPE_INVALID;
    return t;
}

/* Runs when the last array on the memory goes, possibly on a thread that
 * does not hold the GIL (a worker thread, or code that released it). */
static void release_pybuffer(void *ctx)
{
    Py_buffer *view = ctx;
    /* After finalisation there is no interpreter to hand the buffer back
     * to; leaking the exporter's reference is the only safe choice. */
    if (Py_IsInitialized()) {
        PyGILState_STATE st = PyGILState_Ensure();
        PyBuffer_Release(view);
        PyGILState_Release(st);
    }
    free(view);
}

PyObject *ck_py_from_buffer(PyObject *obj, int writable_required)
{
    Py_buffer *view = malloc(sizeof *view);
    if (!view) return PyErr_NoMemory();
    if (PyObject_GetBuffer(obj, view, writable_required ? PyBUF_RECORDS : PyBUF_RECORDS_RO) < 0) {
        free(view);
        return NULL;
    }
    ck_dtype t = ck_py_dtype_from_format(view->format, view->itemsize);
    if (t == CK_DTYPE_INVALID) {
        PyErr_Format(PyExc_TypeError, "cannot convert buffer of format '%s' to a cudakit array",
                     view->format ? view->format : "B");
        goto fail;
    }
    if (view->suboffsets) {
        PyErr_SetString(PyExc_BufferError, "cannot wrap a buffer with suboffsets (PIL-style) as a cudakit array");
        goto fail;
    }
    if (view->ndim < 0 || view->ndim > CK_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "buffer has %d dimensions; cudakit supports at most %d",
                     view->ndim, CK_MAXDIMS);
        goto fail;
    }
    ck_array arr;
    memset(&arr, 0, sizeof arr);
    arr.dtype = t;
    int64_t isz = ck_dtype_get_info(t)->itemsize;
    if (view->ndim == 0) {
        arr.ndim = 0;
    } else if (view->shape == NULL) {
        /* only a PyBUF_SIMPLE-style exporter omits the shape: flat bytes */
        arr.ndim = 1;
        arr.shape[0] = view->len / isz;
        arr.strides[0] = isz;
    } else {
        arr.ndim = view->ndim;
        for (int i = 0; i < arr.ndim; i++) {
            if (view->shape[i] < 0) {
                PyErr_SetString(PyExc_BufferError, "buffer has a negative dimension");
                goto fail;
            }
            arr.shape[i] = view->shape[i];
        }
        if (view->strides)
            for (int i = 0; i < arr.ndim; i++) arr.strides[i] = view->strides[i];
        else
            ck_strides_c(arr.ndim, arr.shape, isz, arr.strides);
    }
    int64_t size = ck_shape_size(arr.ndim, arr.shape), lo, hi;
    if (size < 0 || ck_py_extent_checked(arr.ndim, arr.shape, arr.strides, isz, &lo, &hi) < 0) {
        PyErr_SetString(PyExc_ValueError, "buffer is too large for a cudakit array");
        goto fail;
    }
    if (size > 0 && view->buf == NULL) {
        PyErr_SetString(PyExc_BufferError, "buffer exporter returned a NULL pointer");
        goto fail;
    }
    if (!ck_py_layout_aligned(view->buf, arr.ndim, arr.shape, arr.strides, size, t)) {
        PyErr_Format(PyExc_BufferError,
                     "cannot wrap a buffer whose data is not aligned to %d bytes without a copy",
                     (int)ck_py_dtype_alignment(t));
        goto fail;
    }
    int readonly = view->readonly != 0;
    char *data = view->buf;
    /* The buffer spans exactly the bytes the view reaches, so that the
     * invariant "every element lies inside buf" holds with negative strides. */
    ck_buffer *b = ck_buffer_wrap(ck_device_cpu(), data + lo, (size_t)(hi - lo), readonly,
                                  release_pybuffer, view);
    if (!b) {
        ck_py_raise(ck_error_status());
        goto fail;
    }
    /* from here on the buffer owns view */
    arr.buf = b;
    arr.data = data;
    arr.flags = readonly ? 0 : CK_ARRAY_WRITEABLE;
    ck_array_update_flags(&arr);
    return ck_py_wrap(&arr, obj);

fail:
    PyBuffer_Release(view);
    free(view);
    return NULL;
}
