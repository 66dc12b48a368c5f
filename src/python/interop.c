/*
 * interop.c - what the interop files share (declared in interop.h): the
 * checks that foreign memory passes before it is wrapped, the copies that
 * let go of the GIL, and the device calls the files make.
 */
#include "interop.h"

int ck_py_check_ready(PyObject *self)
{
    if (CK_ARR(self)->buf == NULL) {
        PyErr_SetString(PyExc_ValueError, "the cudakit array is not initialised");
        return -1;
    }
    return 0;
}

int ck_py_snapshot(PyObject *self, ck_array *snap)
{
    if (ck_py_check_ready(self) < 0) return -1;
    ck_array_view(snap, CK_ARR(self));
    return 0;
}

int ck_py_parse_copy(PyObject *o, int *copy)
{
    if (o == NULL || o == Py_None) { *copy = -1; return 0; }
    int t = PyObject_IsTrue(o);
    if (t < 0) return -1;
    *copy = t;
    return 0;
}

/* ------------------------------------------------ foreign memory, checked */

int64_t ck_py_dtype_alignment(ck_dtype t)
{
    int64_t isz = ck_dtype_get_info(t)->itemsize;
    return ck_dtype_is_complex(t) ? isz / 2 : isz;
}

int ck_py_layout_aligned(const char *data, int ndim, const int64_t *shape, const int64_t *strides, int64_t size,
                         ck_dtype t)
{
    int64_t al = ck_py_dtype_alignment(t);
    if (al <= 1 || size == 0) return 1;
    if ((uintptr_t)data % (uintptr_t)al) return 0;
    for (int i = 0; i < ndim; i++)
        if (shape[i] > 1 && strides[i] % al) return 0;
    return 1;
}

int ck_py_extent_checked(int ndim, const int64_t *shape, const int64_t *strides, int64_t isz, int64_t *lo,
                         int64_t *hi)
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

/* ------------------------------------------------ copies and the device */

ck_status ck_py_to_device(ck_array *out, const ck_array *a, ck_device dev)
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

ck_status ck_py_copy_array(ck_array *out, const ck_array *a, int order_f)
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

