/*
 * interop.h - what the interop files share: bufferproto.c (the buffer
 * protocol, both directions), dlpack.c (DLPack, both directions) and
 * numpy_interop.c (__array__, __array_interface__, get(), pickling, copies,
 * tolist(), item()); the definitions are in interop.c.
 *
 * The rule that shapes all of them: host memory may be shared without a
 * copy, device memory never leaves the device implicitly.  A GPU array
 * refuses the buffer protocol and __array__ with a TypeError naming the
 * explicit way (cudakit.asnumpy() / .get()), as CuPy does, so that a stray
 * np.asarray() cannot hide a device-to-host transfer.
 */
#ifndef CK_PY_INTEROP_H
#define CK_PY_INTEROP_H

#include "ck_python.h"

/* Objects can exist whose ck_array was never filled (a failed __init__, or
 * __new__ called directly); every entry point checks rather than crashes:
 * 0, or -1 with ValueError. */
int ck_py_check_ready(PyObject *self);
/* A private view of self's layout: long copies run without the GIL, and
 * another thread may meanwhile reassign self's shape; the snapshot keeps
 * the layout (and, through its buffer reference, the memory) fixed. */
int ck_py_snapshot(PyObject *self, ck_array *snap);

static inline int ck_py_is_cpu(const ck_array *a) { return ck_array_device(a).type == CK_DEVICE_CPU; }

static inline int ck_py_little_endian(void)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return 0;
#else
    return 1;
#endif
}

/* copy=None/True/False -> -1/1/0 (-1 with an exception from bool()). */
int ck_py_parse_copy(PyObject *o, int *copy);

/* ------------------------------------------------ foreign memory, checked */

/* The alignment the CPU loops assume for an element of t: they dereference
 * typed pointers, and the compiler's vectorised loops may fault on memory
 * that is not naturally aligned, so foreign memory is checked before it is
 * wrapped. */
int64_t ck_py_dtype_alignment(ck_dtype t);
int ck_py_layout_aligned(const char *data, int ndim, const int64_t *shape, const int64_t *strides, int64_t size,
                         ck_dtype t);
/* Byte range [lo, hi) of a strided layout relative to its first element,
 * with overflow checks (-1 on overflow): the shapes and strides come from
 * foreign producers, and ck_layout_extent trusts its input. */
int ck_py_extent_checked(int ndim, const int64_t *shape, const int64_t *strides, int64_t isz, int64_t *lo,
                         int64_t *hi);

/* ------------------------------------------------ copies and the device */

/* ck_array_to_device and a same-dtype ck_array_astype, without the GIL
 * when large. */
ck_status ck_py_to_device(ck_array *out, const ck_array *a, ck_device dev);
ck_status ck_py_copy_array(ck_array *out, const ck_array *a, int order_f);

#endif
