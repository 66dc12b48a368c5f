/*
 * interop.c - how cudakit arrays meet the rest of the Python world: the
 * buffer protocol (both directions), DLPack (both directions), NumPy's
 * __array__ / __array_interface__, pickling, copies, tolist() and item().
 *
 * The rule that shapes all of it: host memory may be shared without a copy,
 * device memory never leaves the device implicitly.  A GPU array refuses the
 * buffer protocol and __array__ with a TypeError naming the explicit way
 * (cudakit.asnumpy() / .get()), as CuPy does, so that a stray np.asarray()
 * cannot hide a device-to-host transfer.
 */
#include "ck_python.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static const char ck_gpu_buffer_msg[] =
    "Implicit conversion to a host NumPy array via the buffer protocol is not allowed; "
    "use cudakit.asnumpy() or .get() to copy explicitly.";

/* Objects can exist whose ck_array was never filled (a failed __init__, or
 * __new__ called directly); every entry point checks rather than crashes. */
static int check_ready(PyObject *self)
{
    if (CK_ARR(self)->buf == NULL) {
        PyErr_SetString(PyExc_ValueError, "the cudakit array is not initialised");
        return -1;
    }
    return 0;
}

/* A private view of self's layout: long copies below run without the GIL,
 * and another thread may meanwhile reassign self's shape; the snapshot keeps
 * the layout (and, through its buffer reference, the memory) fixed. */
static int snapshot(PyObject *self, ck_array *snap)
{
    if (check_ready(self) < 0) return -1;
    ck_array_view(snap, CK_ARR(self));
    return 0;
}

static int is_cpu(const ck_array *a) { return ck_array_device(a).type == CK_DEVICE_CPU; }

static int is_little_endian(void)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return 0;
#else
    return 1;
#endif
}

/* The alignment the CPU loops assume for an element: they dereference typed
 * pointers, and the compiler's vectorised loops may fault on memory that is
 * not naturally aligned, so foreign memory is checked before it is wrapped. */
static int64_t dtype_alignment(ck_dtype t)
{
    int64_t isz = ck_dtype_get_info(t)->itemsize;
    return ck_dtype_is_complex(t) ? isz / 2 : isz;
}

static int layout_is_aligned(const char *data, int ndim, const int64_t *shape,
                             const int64_t *strides, int64_t size, ck_dtype t)
{
    int64_t al = dtype_alignment(t);
    if (al <= 1 || size == 0) return 1;
    if ((uintptr_t)data % (uintptr_t)al) return 0;
    for (int i = 0; i < ndim; i++)
        if (shape[i] > 1 && strides[i] % al) return 0;
    return 1;
}

/* Byte range [lo, hi) of a strided layout relative to its first element,
 * with overflow checks: the shapes and strides come from foreign producers,
 * and ck_layout_extent trusts its input. */
static int extent_checked(int ndim, const int64_t *shape, const int64_t *strides, int64_t isz,
                          int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = isz;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { *lo = 0; *hi = 0; return 0; }
    }
    for (int i = 0; i < ndim; i++) {
        int64_t span;
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span)) return -1;
        if (span < 0) { if (__builtin_add_overflow(l, span, &l)) return -1; }
        else if (__builtin_add_overflow(h, span, &h)) return -1;
    }
    *lo = l;
    *hi = h;
    return 0;
}

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
    ck_status s = ck_backend_for(dev)->copy_to_host(dev, dst, src->data, n);
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

/* ck_array_to_device / ck_array_astype, without the GIL when large. */
static ck_status to_device(ck_array *out, const ck_array *a, ck_device dev)
{
    ck_status s;
    if (a->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_array_to_device(out, a, dev);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_array_to_device(out, a, dev);
    }
    return s;
}

static ck_status copy_array(ck_array *out, const ck_array *a, int order_f)
{
    ck_status s;
    if (a->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_array_astype(out, a, a->dtype, order_f);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_array_astype(out, a, a->dtype, order_f);
    }
    return s;
}

/* copy=None/True/False -> -1/1/0 */
static int parse_copy(PyObject *o, int *copy)
{
    if (o == NULL || o == Py_None) { *copy = -1; return 0; }
    int t = PyObject_IsTrue(o);
    if (t < 0) return -1;
    *copy = t;
    return 0;
}

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
    if (check_ready(self) < 0) return -1;
    const ck_array *a = CK_ARR(self);
    if (!is_cpu(a)) {
        PyErr_SetString(PyExc_TypeError, ck_gpu_buffer_msg);
        return -1;
    }
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
static ck_dtype dtype_from_format(const char *fmt, Py_ssize_t itemsize)
{
    const char *p = fmt ? fmt : "B";
    int native_sizes = 1, swapped = 0;
    switch (*p) {
    case '@': p++; break;
    case '|': p++; break;   /* NumPy's "not applicable" byte order */
    case '=': native_sizes = 0; p++; break;
    case '<': native_sizes = 0; swapped = !is_little_endian(); p++; break;
    case '>': case '!': native_sizes = 0; swapped = is_little_endian(); p++; break;
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
    ck_dtype t = dtype_from_format(view->format, view->itemsize);
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
    if (size < 0 || extent_checked(arr.ndim, arr.shape, arr.strides, isz, &lo, &hi) < 0) {
        PyErr_SetString(PyExc_ValueError, "buffer is too large for a cudakit array");
        goto fail;
    }
    if (size > 0 && view->buf == NULL) {
        PyErr_SetString(PyExc_BufferError, "buffer exporter returned a NULL pointer");
        goto fail;
    }
    if (!layout_is_aligned(view->buf, arr.ndim, arr.shape, arr.strides, size, t)) {
        PyErr_Format(PyExc_BufferError,
                     "cannot wrap a buffer whose data is not aligned to %d bytes without a copy",
                     (int)dtype_alignment(t));
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

/* ------------------------------------------------------------ DLPack */

/* From dlpack.h (DLPack 1.0); declared here so that the module needs no
 * header from any framework.  The layout is the ABI. */
typedef enum {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLCUDAManaged = 13,
} DLDeviceType;

typedef enum {
    kDLInt = 0,
    kDLUInt = 1,
    kDLFloat = 2,
    kDLBfloat = 4,
    kDLComplex = 5,
    kDLBool = 6,
} DLDataTypeCode;

typedef struct {
    int32_t device_type;   /* DLDeviceType: an enum, int-sized in C */
    int32_t device_id;
} DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;      /* in elements; NULL: C-contiguous */
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* One allocation per export: the managed tensor, the shape and strides it
 * points to, and a reference to the memory.  Holding the ck_buffer rather
 * than the Python object lets the deleter run without the GIL, from
 * whatever thread the consumer frees the tensor on. */
typedef struct {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } m;
    ck_buffer *buf;
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_MAXDIMS];
} ck_dl_holder;

static void dl_holder_free(ck_dl_holder *h)
{
    if (!h) return;
    ck_buffer_release(h->buf);
    free(h);
}

static void dl_deleter(DLManagedTensor *self) { dl_holder_free(self->manager_ctx); }
static void dl_deleter_versioned(DLManagedTensorVersioned *self) { dl_holder_free(self->manager_ctx); }

/* A capsule nobody consumed still owns its tensor.  A consumer renames it
 * ("used_...") when it takes ownership, so the name decides. */
static void dl_capsule_destructor(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
}

static void dl_capsule_destructor_versioned(PyObject *cap)
{
    if (!PyCapsule_IsValid(cap, "dltensor_versioned")) return;
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
}

static int dl_dtype_of(ck_dtype t, DLDataType *out)
{
    const ck_dtype_info *info = ck_dtype_get_info(t);
    out->bits = (uint8_t)(info->itemsize * 8);
    out->lanes = 1;
    switch (info->kind) {
    case CK_KIND_BOOL: out->code = kDLBool; break;
    case CK_KIND_INT: out->code = kDLInt; break;
    case CK_KIND_UINT: out->code = kDLUInt; break;
    case CK_KIND_FLOAT: out->code = kDLFloat; break;
    case CK_KIND_COMPLEX: out->code = kDLComplex; break;
    default: return -1;
    }
    return 0;
}

static ck_dtype dtype_from_dl(DLDataType d)
{
    if (d.lanes != 1) return CK_DTYPE_INVALID;
    switch (d.code) {
    case kDLBool:
        return d.bits == 8 ? CK_BOOL : CK_DTYPE_INVALID;
    case kDLInt:
        switch (d.bits) {
        case 8: return CK_INT8;
        case 16: return CK_INT16;
        case 32: return CK_INT32;
        case 64: return CK_INT64;
        default: return CK_DTYPE_INVALID;
        }
    case kDLUInt:
        switch (d.bits) {
        case 8: return CK_UINT8;
        case 16: return CK_UINT16;
        case 32: return CK_UINT32;
        case 64: return CK_UINT64;
        default: return CK_DTYPE_INVALID;
        }
    case kDLFloat:
        switch (d.bits) {
        case 16: return CK_FLOAT16;
        case 32: return CK_FLOAT32;
        case 64: return CK_FLOAT64;
        default: return CK_DTYPE_INVALID;
        }
    case kDLComplex:
        switch (d.bits) {
        case 64: return CK_COMPLEX64;
        case 128: return CK_COMPLEX128;
        default: return CK_DTYPE_INVALID;
        }
    default:
        return CK_DTYPE_INVALID;
    }
}

/* (device_type, device_id) tuple -> ints; -1 with TypeError otherwise. */
static int parse_dl_device(PyObject *o, long *type, long *id)
{
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2) {
        PyErr_SetString(PyExc_TypeError, "a DLPack device must be a tuple (device_type, device_id)");
        return -1;
    }
    *type = PyLong_AsLong(PyTuple_GET_ITEM(o, 0));
    if (*type == -1 && PyErr_Occurred()) return -1;
    *id = PyLong_AsLong(PyTuple_GET_ITEM(o, 1));
    if (*id == -1 && PyErr_Occurred()) return -1;
    return 0;
}

static PyObject *dlpack_export(const ck_array *a, PyObject *stream, PyObject *max_version,
                               PyObject *dl_device, PyObject *copy_obj);

static PyObject *arr_dlpack(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO:__dlpack__", kwlist,
                                     &stream, &max_version, &dl_device, &copy_obj))
        return NULL;
    ck_array snap;
    if (snapshot(self, &snap) < 0) return NULL;
    PyObject *res = dlpack_export(&snap, stream, max_version, dl_device, copy_obj);
    ck_array_release(&snap);
    return res;
}

static PyObject *dlpack_export(const ck_array *a, PyObject *stream, PyObject *max_version,
                               PyObject *dl_device, PyObject *copy_obj)
{
    ck_device dev = ck_array_device(a);
    int versioned = 0;
    if (max_version != Py_None) {
        if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) != 2) {
            PyErr_SetString(PyExc_TypeError, "max_version must be None or a tuple (major, minor)");
            return NULL;
        }
        long major = PyLong_AsLong(PyTuple_GET_ITEM(max_version, 0));
        if (major == -1 && PyErr_Occurred()) return NULL;
        versioned = major >= DLPACK_MAJOR_VERSION;
    }
    int copy;
    if (parse_copy(copy_obj, &copy) < 0) return NULL;

    /* where the consumer wants the data: only here, or (a copy) on the host */
    ck_device target = dev;
    if (dl_device != Py_None) {
        long type, id;
        if (parse_dl_device(dl_device, &type, &id) < 0) return NULL;
        int same = (dev.type == CK_DEVICE_CPU && type == kDLCPU && id == 0) ||
                   (dev.type == CK_DEVICE_CUDA && type == kDLCUDA && id == dev.index);
        if (!same) {
            if (type == kDLCPU && id == 0) {
                target = ck_device_cpu();
            } else {
                PyErr_Format(PyExc_BufferError, "cannot export a cudakit array to DLPack device (%ld, %ld)", type, id);
                return NULL;
            }
        }
    }
    int need_copy = !ck_device_equal(target, dev) || copy == 1;
    if (need_copy && copy == 0) {
        PyErr_SetString(PyExc_BufferError, "a copy is needed to export to the requested device, but copy=False");
        return NULL;
    }

    /* Streams: the CPU has none (the standard asks for None); on the GPU we
     * have no per-stream ordering yet, so synchronising the device makes
     * the data ready for any consumer stream.  -1 asks for no sync. */
    long stream_val = 0;
    int sync = 0;
    if (dev.type == CK_DEVICE_CPU) {
        if (stream != Py_None) {
            PyErr_SetString(PyExc_ValueError, "stream must be None for arrays on the CPU");
            return NULL;
        }
    } else {
        if (stream != Py_None) {
            stream_val = PyLong_AsLong(stream);
            if (stream_val == -1 && PyErr_Occurred()) return NULL;
            if (stream_val == 0) {
                PyErr_SetString(PyExc_ValueError, "stream 0 is ambiguous in DLPack; use 1 for the legacy default stream");
                return NULL;
            }
        }
        sync = stream == Py_None || stream_val != -1;
    }

    ck_array src;
    if (need_copy) {
        ck_status s = ck_device_equal(target, dev) ? copy_array(&src, a, 0) : to_device(&src, a, target);
        if (s != CK_OK) return ck_py_raise(s);
    } else {
        ck_array_view(&src, a);
    }
    int readonly = !(src.flags & CK_ARRAY_WRITEABLE);
    if (readonly && !versioned) {
        ck_array_release(&src);
        PyErr_SetString(PyExc_BufferError,
                        "Cannot export a read-only array since signalling read-only is unsupported "
                        "by DLPack before version 1.0 (pass max_version=(1, 0)).");
        return NULL;
    }
    int64_t isz = ck_array_itemsize(&src);
    for (int i = 0; i < src.ndim; i++) {
        if (src.strides[i] % isz) {
            ck_array_release(&src);
            PyErr_SetString(PyExc_BufferError, "DLPack only supports strides which are a multiple of itemsize");
            return NULL;
        }
    }
    if (sync && ck_array_device(&src).type != CK_DEVICE_CPU) {
        const ck_backend_iface *be = ck_backend_for(ck_array_device(&src));
        if (be && be->synchronize) {
            ck_status s = be->synchronize(ck_array_device(&src));
            if (s != CK_OK) {
                ck_array_release(&src);
                return ck_py_raise(s);
            }
        }
    }

    ck_dl_holder *h = calloc(1, sizeof *h);
    if (!h) {
        ck_array_release(&src);
        return PyErr_NoMemory();
    }
    h->buf = src.buf;   /* takes src's reference */
    for (int i = 0; i < src.ndim; i++) {
        h->shape[i] = src.shape[i];
        h->strides[i] = src.strides[i] / isz;
    }
    DLTensor *t = versioned ? &h->m.versioned.dl_tensor : &h->m.legacy.dl_tensor;
    t->data = src.data;
    ck_device sd = ck_array_device(&src);
    t->device.device_type = sd.type == CK_DEVICE_CPU ? kDLCPU : kDLCUDA;
    t->device.device_id = sd.type == CK_DEVICE_CPU ? 0 : sd.index;
    t->ndim = src.ndim;
    if (dl_dtype_of(src.dtype, &t->dtype) < 0) {
        dl_holder_free(h);
        PyErr_SetString(PyExc_BufferError, "dtype not supported by DLPack");
        return NULL;
    }
    t->shape = h->shape;
    t->strides = h->strides;
    t->byte_offset = 0;

    PyObject *cap;
    if (versioned) {
        h->m.versioned.version.major = DLPACK_MAJOR_VERSION;
        h->m.versioned.version.minor = DLPACK_MINOR_VERSION;
        h->m.versioned.manager_ctx = h;
        h->m.versioned.deleter = dl_deleter_versioned;
        h->m.versioned.flags = (readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) |
                               (need_copy ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
        cap = PyCapsule_New(&h->m.versioned, "dltensor_versioned", dl_capsule_destructor_versioned);
    } else {
        h->m.legacy.manager_ctx = h;
        h->m.legacy.deleter = dl_deleter;
        cap = PyCapsule_New(&h->m.legacy, "dltensor", dl_capsule_destructor);
    }
    if (!cap) dl_holder_free(h);
    return cap;
}

static PyObject *arr_dlpack_device(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    if (check_ready(self) < 0) return NULL;
    ck_device d = ck_array_device(CK_ARR(self));
    if (d.type == CK_DEVICE_CPU) return Py_BuildValue("(ii)", (int)kDLCPU, 0);
    return Py_BuildValue("(ii)", (int)kDLCUDA, d.index);
}

/* Import: who calls the producer's deleter once our arrays are gone. */
typedef struct {
    void *managed;
    int versioned;
} ck_dl_import;

static void dl_import_call_deleter(ck_dl_import *imp)
{
    if (imp->versioned) {
        DLManagedTensorVersioned *m = imp->managed;
        if (m->deleter) m->deleter(m);
    } else {
        DLManagedTensor *m = imp->managed;
        if (m->deleter) m->deleter(m);
    }
}

/* May run on any thread, with or without the GIL; producers written in
 * Python-facing C (NumPy's, ours) expect to be able to touch Python. */
static void dl_import_release(void *ctx)
{
    ck_dl_import *imp = ctx;
    if (Py_IsInitialized()) {
        PyGILState_STATE st = PyGILState_Ensure();
        dl_import_call_deleter(imp);
        PyGILState_Release(st);
    } else {
        dl_import_call_deleter(imp);
    }
    free(imp);
}

/* Call x.__dlpack__(), asking for a versioned capsule first: producers
 * that predate DLPack 1.0 reject the keyword with TypeError. */
static PyObject *dl_get_capsule(PyObject *x)
{
    PyObject *meth = PyObject_GetAttrString(x, "__dlpack__");
    if (!meth) return NULL;
    PyObject *kw = Py_BuildValue("{s(ii)}", "max_version", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
    PyObject *empty = PyTuple_New(0);
    PyObject *cap = NULL;
    if (kw && empty) {
        cap = PyObject_Call(meth, empty, kw);
        if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            cap = PyObject_Call(meth, empty, NULL);
        }
    }
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    return cap;
}

/* Turn a DLPack capsule into an array (CPU memory only), consuming it. */
static PyObject *array_from_capsule(PyObject *cap, PyObject *base)
{
    int versioned;
    void *managed;
    DLTensor *t;
    uint64_t dlflags = 0;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        versioned = 1;
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (!m) return NULL;
        if (m->version.major != DLPACK_MAJOR_VERSION) {
            PyErr_Format(PyExc_BufferError, "unsupported DLPack version %u.%u (cudakit reads %d.x)",
                         (unsigned)m->version.major, (unsigned)m->version.minor, DLPACK_MAJOR_VERSION);
            return NULL;
        }
        managed = m;
        t = &m->dl_tensor;
        dlflags = m->flags;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        versioned = 0;
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (!m) return NULL;
        managed = m;
        t = &m->dl_tensor;
    } else {
        if (PyCapsule_CheckExact(cap))
            PyErr_SetString(PyExc_ValueError,
                            "expected an unconsumed DLPack capsule (named 'dltensor' or 'dltensor_versioned')");
        else
            PyErr_Format(PyExc_TypeError, "__dlpack__ returned %.200s, not a PyCapsule", Py_TYPE(cap)->tp_name);
        return NULL;
    }

    ck_device mem_dev = ck_device_cpu();
    if (t->device.device_type == kDLCUDA) {
        /* GPU memory is shared as it is: the producer's work is ordered
         * before ours on the legacy default stream both use */
        mem_dev.type = CK_DEVICE_CUDA;
        mem_dev.index = t->device.device_id;
        if (!ck_backend_for(mem_dev)) {
            PyErr_SetString(ck_py_CUDAError, "DLPack tensor is on a GPU but no usable CUDA device is present");
            return NULL;
        }
    } else if (t->device.device_type == kDLCUDAManaged) {
        PyErr_SetString(PyExc_NotImplementedError, "DLPack import of CUDA managed memory is not implemented");
        return NULL;
    } else if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost) {
        PyErr_Format(PyExc_BufferError, "unsupported DLPack device type %d", (int)t->device.device_type);
        return NULL;
    }
    ck_dtype dt = dtype_from_dl(t->dtype);
    if (dt == CK_DTYPE_INVALID) {
        PyErr_Format(PyExc_BufferError, "unsupported DLPack dtype (code %d, bits %d, lanes %d)",
                     (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes);
        return NULL;
    }
    if (t->ndim < 0 || t->ndim > CK_MAXDIMS) {
        PyErr_Format(PyExc_BufferError, "DLPack tensor has %d dimensions; cudakit supports at most %d",
                     (int)t->ndim, CK_MAXDIMS);
        return NULL;
    }
    if (t->ndim > 0 && !t->shape) {
        PyErr_SetString(PyExc_BufferError, "DLPack tensor has no shape");
        return NULL;
    }
    ck_array arr;
    memset(&arr, 0, sizeof arr);
    arr.dtype = dt;
    arr.ndim = t->ndim;
    int64_t isz = ck_dtype_get_info(dt)->itemsize;
    for (int i = 0; i < arr.ndim; i++) {
        if (t->shape[i] < 0) {
            PyErr_SetString(PyExc_BufferError, "DLPack tensor has a negative dimension");
            return NULL;
        }
        arr.shape[i] = t->shape[i];
    }
    if (t->strides) {
        for (int i = 0; i < arr.ndim; i++) {
            if (__builtin_mul_overflow(t->strides[i], isz, &arr.strides[i])) {
                PyErr_SetString(PyExc_BufferError, "DLPack tensor strides overflow");
                return NULL;
            }
        }
    } else {
        ck_strides_c(arr.ndim, arr.shape, isz, arr.strides);
    }
    int64_t size = ck_shape_size(arr.ndim, arr.shape), lo, hi;
    if (size < 0 || extent_checked(arr.ndim, arr.shape, arr.strides, isz, &lo, &hi) < 0 ||
        t->byte_offset > (uint64_t)INT64_MAX) {
        PyErr_SetString(PyExc_BufferError, "DLPack tensor is too large");
        return NULL;
    }
    char *data = (char *)t->data + t->byte_offset;
    int readonly = (dlflags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;

    if (size == 0) {
        /* nothing to share (and producers may pass NULL data): a fresh empty
         * array, and the tensor is consumed and freed at once */
        ck_status s = ck_array_empty(&arr, arr.ndim, arr.shape, dt, mem_dev);
        if (s != CK_OK) return ck_py_raise(s);
        if (readonly) arr.flags &= ~CK_ARRAY_WRITEABLE;
        if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
            ck_array_release(&arr);
            return NULL;
        }
        ck_dl_import imp = {managed, versioned};
        dl_import_call_deleter(&imp);
        return ck_py_wrap(&arr, NULL);
    }
    if (t->data == NULL) {
        PyErr_SetString(PyExc_BufferError, "DLPack tensor has a NULL data pointer");
        return NULL;
    }
    if (!layout_is_aligned(data, arr.ndim, arr.shape, arr.strides, size, dt)) {
        PyErr_Format(PyExc_BufferError, "cannot wrap DLPack memory that is not aligned to %d bytes",
                     (int)dtype_alignment(dt));
        return NULL;
    }

    ck_dl_import *imp = malloc(sizeof *imp);
    if (!imp) return PyErr_NoMemory();
    imp->managed = managed;
    imp->versioned = versioned;
    /* Rename first: from then on we own the tensor, and every failure
     * below calls its deleter itself instead of leaving two owners. */
    if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
        free(imp);
        return NULL;
    }
    ck_buffer *b = ck_buffer_wrap(mem_dev, data + lo, (size_t)(hi - lo), readonly,
                                  dl_import_release, imp);
    if (!b) {
        dl_import_call_deleter(imp);
        free(imp);
        return ck_py_raise(ck_error_status());
    }
    arr.buf = b;
    arr.data = data;
    arr.flags = readonly ? 0 : CK_ARRAY_WRITEABLE;
    ck_array_update_flags(&arr);
    return ck_py_wrap(&arr, base);
}

static PyObject *py_from_dlpack(PyObject *Py_UNUSED(mod), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"", "device", "copy", NULL};
    PyObject *x, *device_obj = Py_None, *copy_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OO:from_dlpack", kwlist, &x, &device_obj, &copy_obj))
        return NULL;
    ck_device want = ck_device_cpu();
    int has_dev = 0, copy;
    if (device_obj != Py_None && ck_py_device_from_obj(device_obj, &want, &has_dev) < 0) return NULL;
    if (parse_copy(copy_obj, &copy) < 0) return NULL;

    PyObject *cap, *res;
    if (CkArray_Check(x)) {
        /* our own arrays (on any device) need no capsule: a view */
        if (check_ready(x) < 0) return NULL;
        ck_array view;
        ck_array_view(&view, CK_ARR(x));
        res = ck_py_wrap_view(&view, x);
        if (!res) return NULL;
        goto placed;
    }
    if (PyCapsule_CheckExact(x)) {
        /* a bare capsule, as older APIs (torch.utils.dlpack) hand out */
        cap = Py_NewRef(x);
    } else {
        PyObject *devinfo = PyObject_CallMethod(x, "__dlpack_device__", NULL);
        if (!devinfo) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "object of type '%.200s' does not support the DLPack protocol",
                             Py_TYPE(x)->tp_name);
            }
            return NULL;
        }
        long type, id;
        int r = parse_dl_device(devinfo, &type, &id);
        Py_DECREF(devinfo);
        if (r < 0) return NULL;
        /* decided before __dlpack__ so that the producer does no work (a
         * stream sync, a capsule) for memory we cannot take */
        if (type == kDLCUDAManaged) {
            PyErr_SetString(PyExc_NotImplementedError, "DLPack import of CUDA managed memory is not implemented");
            return NULL;
        }
        if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDA) {
            PyErr_Format(PyExc_BufferError, "unsupported DLPack device type %ld", type);
            return NULL;
        }
        cap = dl_get_capsule(x);
        if (!cap) return NULL;
    }
    res = array_from_capsule(cap, PyCapsule_CheckExact(x) ? NULL : x);
    Py_DECREF(cap);
    if (!res) return NULL;

placed:

    if (has_dev && !ck_device_equal(want, ck_array_device(CK_ARR(res)))) {
        if (copy == 0) {
            Py_DECREF(res);
            PyErr_SetString(PyExc_BufferError, "from_dlpack: moving the data to the requested device needs a copy, but copy=False");
            return NULL;
        }
        ck_array moved;
        ck_status s = to_device(&moved, CK_ARR(res), want);
        Py_DECREF(res);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&moved, NULL);
    }
    if (copy == 1) {
        ck_array c;
        ck_status s = copy_array(&c, CK_ARR(res), 0);
        Py_DECREF(res);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&c, NULL);
    }
    return res;
}

/* ------------------------------------------------------------ NumPy */

static PyObject *arr_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist, &dtype, &copy_obj)) return NULL;
    if (check_ready(self) < 0) return NULL;
    if (!is_cpu(CK_ARR(self))) {
        char d[64];
        ck_device_str(ck_array_device(CK_ARR(self)), d, sizeof d);
        PyErr_Format(PyExc_TypeError,
                     "Implicit conversion to a NumPy array is not allowed for an array on %s; "
                     "use cudakit.asnumpy() or .get() to copy explicitly.", d);
        return NULL;
    }
    int copy;
    if (parse_copy(copy_obj, &copy) < 0) return NULL;
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
    static char *kwlist[] = {"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:get", kwlist, &stream)) return NULL;
    /* The copy is synchronous (the backend's copy_to_host waits), so any
     * stream the caller names is already satisfied. */
    ck_array snap;
    if (snapshot(self, &snap) < 0) return NULL;
    PyObject *res = numpy_copy(&snap);
    ck_array_release(&snap);
    return res;
}

static PyObject *typestr_of(ck_dtype t)
{
    const ck_dtype_info *info = ck_dtype_get_info(t);
    char order = info->itemsize == 1 ? '|' : is_little_endian() ? '<' : '>';
    return PyUnicode_FromFormat("%c%c%d", order, info->kind_char, info->itemsize);
}

static PyObject *arr_array_interface(PyObject *self, void *Py_UNUSED(closure))
{
    if (check_ready(self) < 0) return NULL;
    const ck_array *a = CK_ARR(self);
    if (!is_cpu(a)) {
        /* AttributeError makes hasattr() false, so NumPy falls through to
         * __array__ and its explicit message */
        char d[64];
        ck_device_str(ck_array_device(a), d, sizeof d);
        PyErr_Format(PyExc_AttributeError,
                     "__array_interface__ is only available for arrays on the CPU (this one is on %s); "
                     "use cudakit.asnumpy() or .get() to copy explicitly.", d);
        return NULL;
    }
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
    if (snapshot(self, &snap) < 0) return NULL;
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
    s = to_device(&moved, &host, dev);
    ck_array_release(&host);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&moved, NULL);
}

/* ------------------------------------------------------------ copies */

static PyObject *arr_copy_impl(PyObject *self)
{
    ck_array snap, out;
    if (snapshot(self, &snap) < 0) return NULL;
    /* NumPy's copy.copy keeps the memory order (order='K' for the usual
     * cases): a Fortran-ordered array stays Fortran-ordered */
    int order_f = (snap.flags & CK_ARRAY_F_CONTIGUOUS) && !(snap.flags & CK_ARRAY_C_CONTIGUOUS);
    ck_status s = copy_array(&out, &snap, order_f);
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
    if (snapshot(self, &snap) < 0) return NULL;
    if (!is_cpu(&snap)) {
        ck_array host;
        ck_status s = to_device(&host, &snap, ck_device_cpu());
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
    if (check_ready(self) < 0) return NULL;
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
    if (is_cpu(a)) return ck_py_scalar_to_py(p, a->dtype);
    _Alignas(16) unsigned char tmp[16];
    ck_device dev = ck_array_device(a);
    ck_status s = ck_backend_for(dev)->copy_to_host(dev, tmp, p, (size_t)ck_array_itemsize(a));
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_scalar_to_py(tmp, a->dtype);
}

/* ------------------------------------------------------------ tables */

PyMethodDef ck_py_interop_methods[] = {
    {"__array__", (PyCFunction)(void (*)(void))arr_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, copy=None)\n--\n\nA NumPy array sharing this array's memory (CPU arrays only)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))arr_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export the array as a DLPack capsule."},
    {"__dlpack_device__", arr_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(device_type, device_id) of the array in DLPack's terms."},
    {"__reduce__", arr_reduce, METH_NOARGS, NULL},
    {"__copy__", arr_copy, METH_NOARGS, NULL},
    {"__deepcopy__", arr_deepcopy, METH_O, NULL},
    {"get", (PyCFunction)(void (*)(void))arr_get, METH_VARARGS | METH_KEYWORDS,
     "get(stream=None)\n--\n\nA NumPy array with a copy of the data (from any device)."},
    {"tolist", arr_tolist, METH_NOARGS,
     "tolist()\n--\n\nThe array as nested lists of Python scalars."},
    {"item", arr_item, METH_VARARGS,
     "item(*args)\n--\n\nOne element as a Python scalar."},
    {NULL, NULL, 0, NULL},
};

PyGetSetDef ck_py_interop_getset[] = {
    {"__array_interface__", arr_array_interface, NULL, "NumPy's array interface (version 3), CPU arrays only", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyMethodDef ck_py_interop_functions[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))py_from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "from_dlpack(x, /, *, device=None, copy=None)\n--\n\n"
     "An array sharing the memory of any object supporting DLPack."},
    {"_reconstruct", py_reconstruct, METH_VARARGS,
     "_reconstruct(data, dtype, shape, device)\n--\n\nRebuild a pickled array."},
    {NULL, NULL, 0, NULL},
};
