/*
 * dlpack.c - DLPack, both directions: __dlpack__ / __dlpack_device__
 * export an array's memory (CPU or GPU) as a capsule, and from_dlpack
 * wraps another library's tensor without a copy (or copies it where it
 * must move to the device asked for).
 */
#include "interop.h"

#include <stdlib.h>
#include <string.h>

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
    if (ck_py_snapshot(self, &snap) < 0) return NULL;
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
    if (ck_py_parse_copy(copy_obj, &copy) < 0) return NULL;

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
        ck_status s = ck_device_equal(target, dev) ? ck_py_copy_array(&src, a, 0) : ck_py_to_device(&src, a, target);
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
        ck_status s = ck_device_synchronize(ck_array_device(&src));
        if (s != CK_OK) {
            ck_array_release(&src);
            return ck_py_raise(s);
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
    if (ck_py_check_ready(self) < 0) return NULL;
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
        if (ck_device_check(mem_dev) != CK_OK) return ck_py_raise(ck_error_status());
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
    if (size < 0 || ck_py_extent_checked(arr.ndim, arr.shape, arr.strides, isz, &lo, &hi) < 0 ||
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
    if (!ck_py_layout_aligned(data, arr.ndim, arr.shape, arr.strides, size, dt)) {
        PyErr_Format(PyExc_BufferError, "cannot wrap DLPack memory that is not aligned to %d bytes",
                     (int)ck_py_dtype_alignment(dt));
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
    if (ck_py_parse_copy(copy_obj, &copy) < 0) return NULL;

    PyObject *cap, *res;
    if (CkArray_Check(x)) {
        /* our own arrays (on any device) need no capsule: a view */
        if (ck_py_check_ready(x) < 0) return NULL;
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
        ck_status s = ck_py_to_device(&moved, CK_ARR(res), want);
        Py_DECREF(res);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&moved, NULL);
    }
    if (copy == 1) {
        ck_array c;
        ck_status s = ck_py_copy_array(&c, CK_ARR(res), 0);
        Py_DECREF(res);
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&c, NULL);
    }
    return res;
}

/* ------------------------------------------------------------ tables */

PyMethodDef ck_py_dlpack_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))arr_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export the array as a DLPack capsule."},
    {"__dlpack_device__", arr_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n(device_type, device_id) of the array in DLPack's terms."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef ck_py_dlpack_functions[] = {
    {"from_dlpack", (PyCFunction)(void (*)(void))py_from_dlpack, METH_VARARGS | METH_KEYWORDS,
     "from_dlpack(x, /, *, device=None, copy=None)\n--\n\n"
     "An array sharing the memory of any object supporting DLPack."},
    {NULL, NULL, 0, NULL},
};
