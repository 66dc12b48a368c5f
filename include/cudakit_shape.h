/*
 * cudakit_shape.h - shape manipulation beyond the views of cudakit.h:
 * the NumPy functions that rearrange, join, split, repeat and pad arrays.
 *
 * Everything here is built from views (ck_array_view + ck_array_set_layout)
 * and strided copies (ck_array_assign, ck_array_fill), so it runs on every
 * backend.  Functions returning a view say so; they never copy, and the
 * view shares a's buffer.  Included from the bottom of cudakit.h.
 */
#ifndef CUDAKIT_SHAPE_H
#define CUDAKIT_SHAPE_H

#include "cudakit.h"

#include <limits.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Views. */
/* Drop the axes in axis_mask (each must have length 1); all length-1 axes
 * when all_ones. */
ck_status ck_array_squeeze(ck_array *out, const ck_array *a, uint64_t axis_mask, int all_ones);
/* Insert length-1 axes at the positions axes[] of the result. */
ck_status ck_array_expand_dims(ck_array *out, const ck_array *a, int naxes, const int *axes);
/* Move axes src[i] to positions dst[i], the others keeping their order. */
ck_status ck_array_moveaxis(ck_array *out, const ck_array *a, int n, const int *src, const int *dst);
ck_status ck_array_swapaxes(ck_array *out, const ck_array *a, int axis1, int axis2);
/* Reverse the axes in axis_mask (negative strides). */
ck_status ck_array_flip(ck_array *out, const ck_array *a, uint64_t axis_mask);
/* The diagonal of axes (axis1, axis2) as the last axis of a read-only view. */
ck_status ck_array_diagonal(ck_array *out, const ck_array *a, int64_t offset, int axis1, int axis2);

/* New arrays. */
/* Join along axis (CK_AXIS_FLAT: the flattened inputs).  dt: the result's
 * dtype (CK_DTYPE_INVALID: promotion of the inputs').  One allocation and
 * one copy of every input (one launch per 32 inputs on a GPU). */
#define CK_AXIS_FLAT INT_MIN
ck_status ck_concatenate(ck_array *out, int n, const ck_array *const *arrays, int axis, ck_dtype dt);
/* Join arrays of one shape along a new axis. */
ck_status ck_stack(ck_array *out, int n, const ck_array *const *arrays, int axis, ck_dtype dt);
/* The same into an existing out (NumPy's out=): of the result's shape
 * (else "Output array is the wrong shape"), any layout; inputs are cast to
 * out's dtype (the caller checks the casting rule). */
ck_status ck_concatenate_into(ck_array *out, int n, const ck_array *const *arrays, int axis);
ck_status ck_stack_into(ck_array *out, int n, const ck_array *const *arrays, int axis);
/* Roll by shifts[i] along axes[i] (repeated axes add up); axes == NULL:
 * the flattened array by shifts[0], shape kept. */
ck_status ck_roll(ck_array *out, const ck_array *a, int n, const int64_t *shifts, const int *axes);
/* NumPy's tile: reps aligned with a's axes from the right. */
ck_status ck_tile(ck_array *out, const ck_array *a, int nreps, const int64_t *reps);
/* Repeat elements along axis (CK_AXIS_FLAT: of the flattened array):
 * nrep == 1 repeats each one repeats[0] times, else nrep must be the axis
 * length and element j is repeated repeats[j] times. */
ck_status ck_repeat(ck_array *out, const ck_array *a, int64_t nrep, const int64_t *repeats, int axis);

typedef enum ck_pad_mode {
    CK_PAD_CONSTANT, CK_PAD_EDGE, CK_PAD_REFLECT, CK_PAD_SYMMETRIC, CK_PAD_WRAP, CK_PAD_EMPTY
} ck_pad_mode;
/* widths: before/after pairs, 2 * a->ndim values >= 0.  value: for
 * CK_PAD_CONSTANT (NULL: zero). */
ck_status ck_pad(ck_array *out, const ck_array *a, const int64_t *widths, ck_pad_mode mode, const ck_scalar *value);
/* 1-d v: a square matrix with v on diagonal k; 2-d: a view of diagonal k. */
ck_status ck_diag(ck_array *out, const ck_array *a, int64_t k);
/* Sum of the diagonal (dt as for sum; CK_DTYPE_INVALID: default). */
ck_status ck_trace(ck_array *out, const ck_array *a, int64_t offset, int axis1, int axis2, ck_dtype dt);
/* tril (upper == 0) or triu of the last two axes (a 1-d a is taken as the
 * rows of a square matrix, as NumPy does). */
ck_status ck_tri_part(ck_array *out, const ck_array *a, int64_t k, int upper);
/* NumPy's resize: the flattened a repeated cyclically to fill shape
 * (zeros when a is empty). */
ck_status ck_resize(ck_array *out, const ck_array *a, int ndim, const int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_SHAPE_H */
