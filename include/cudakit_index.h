/*
 * cudakit_index.h - advanced (integer-array and boolean) indexing and the
 * functions built on it: take, put, take_along_axis, put_along_axis and
 * nonzero (src/ops/index.c), and NumPy's indexing functions composed of
 * those and the element-wise ops (src/ops/indexfuncs.c).  Included from
 * the bottom of cudakit.h.
 *
 * All of them reduce to one gather or scatter through int64 index arrays
 * (backend.h: ck_gather_desc), so a device implements three kernels
 * (gather, scatter, nonzero) to get every function here.
 */
#ifndef CUDAKIT_INDEX_H
#define CUDAKIT_INDEX_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to do with an index outside [-len, len): NumPy's take/put modes.
 * wrap and clip apply to negative indices too (clip: to 0), as NumPy's. */
typedef enum ck_index_mode { CK_INDEX_RAISE = 0, CK_INDEX_WRAP, CK_INDEX_CLIP } ck_index_mode;

typedef enum ck_index_kind {
    CK_INDEX_INT, CK_INDEX_SLICE, CK_INDEX_NEWAXIS, CK_INDEX_ELLIPSIS, CK_INDEX_ARRAY
} ck_index_kind;

/* One item of an indexing key (x[i, a:b, None, ..., idx]). */
typedef struct ck_index_item {
    ck_index_kind kind;
    int64_t value;                   /* INT: may be negative */
    int64_t start, stop, step;       /* SLICE: as Python's PySlice_Unpack gives them (clipped later) */
    const ck_array *array;           /* ARRAY: integer or bool, on any device */
} ck_index_item;

/* out = a[items] with NumPy's rules for where the advanced dimensions go;
 * a copy (with no ARRAY item it still works, giving a copy of the view). */
ck_status ck_index_get(ck_array *out, const ck_array *a, int n, const ck_index_item *items, ck_index_mode mode);
/* a[items] = values (broadcast to the selection, cast to a's dtype); with
 * repeated indices the last value wins. */
ck_status ck_index_set(ck_array *a, int n, const ck_index_item *items, const ck_array *values, ck_index_mode mode);
/* a[items] = value for one scalar (converted to a's dtype as a fill does).
 * With one bool mask over a's leading dims, this and ck_index_set with a
 * value that does not depend on the mask's count are one in-place where()
 * kernel, without the host sync of the mask's count. */
ck_status ck_index_fill(ck_array *a, int n, const ck_index_item *items, const ck_scalar *value, ck_index_mode mode);

/* The coordinates of a's nonzero elements: int64 (a.ndim, count), C order
 * of the elements.  a must have ndim >= 1. */
ck_status ck_nonzero(ck_array *out, const ck_array *a);

/* take / put: axis_none flattens a (C order) first. */
ck_status ck_take(ck_array *out, const ck_array *a, const ck_array *indices, int axis, int axis_none,
                  ck_index_mode mode);
/* put: a.flat[indices] = values, values repeated cyclically to indices' size. */
ck_status ck_put(ck_array *a, const ck_array *indices, const ck_array *values, ck_index_mode mode);
/* indices has a's ndim (a and indices broadcast on the other axes). */
ck_status ck_take_along_axis(ck_array *out, const ck_array *a, const ck_array *indices, int axis, int axis_none);
ck_status ck_put_along_axis(ck_array *a, const ck_array *indices, const ck_array *values, int axis, int axis_none);

/* ---- compositions (NumPy's functions of the same names) */

/* The coordinates of a's nonzero elements, one row each: int64 (count,
 * a.ndim); for a 0-d a, (1, 0) when it is nonzero, else (0, 0). */
ck_status ck_argwhere(ck_array *out, const ck_array *a);
/* The flat (C order) positions of a's nonzero elements: int64 (count,). */
ck_status ck_flatnonzero(ck_array *out, const ck_array *a);
/* The elements of a, flattened, where condition (flattened) is nonzero. */
ck_status ck_extract(ck_array *out, const ck_array *condition, const ck_array *a);
/* The slices of a along axis (of a flattened when axis_none) where the
 * 1-d condition is nonzero. */
ck_status ck_compress(ck_array *out, const ck_array *condition, const ck_array *a, int axis, int axis_none);
/* ix_: out[i] is seqs[i] (1-d; bool ones through nonzero, empty ones as
 * int64) reshaped to length 1 on every axis but i, as views where it can. */
ck_status ck_ix(ck_array *out, int n, const ck_array *const *seqs);
/* Flat indices (integer, each in [0, prod(dims))) -> coords[0..ndim-1],
 * int64 arrays of indices' shape; order_f: dims in Fortran order. */
ck_status ck_unravel_index(ck_array *coords, const ck_array *indices, int ndim, const int64_t *dims, int order_f);
/* ndim integer coordinate arrays (broadcast together) -> int64 flat
 * indices; modes[i] says what an entry outside [0, dims[i]) does. */
ck_status ck_ravel_multi_index(ck_array *out, const ck_array *const *multi_index, int ndim, const int64_t *dims,
                               const ck_index_mode *modes, int order_f);
/* The (row, column) pairs of an (n, m) matrix's lower triangle (column -
 * row <= k) or, with upper, its upper one (>= k), as ck_nonzero gives
 * them: int64 (2, count), row-major order. */
ck_status ck_tri_indices(ck_array *out, int64_t n, int64_t m, int64_t k, int upper, ck_device dev);
/* out[p] = choicelist[i][p] for the first i whose bool condlist[i][p]
 * holds, else the default (NULL: the Python int 0); all broadcast. */
ck_status ck_select(ck_array *out, int n, const ck_array *const *condlist, const ck_array *const *choicelist,
                    const ck_operand *dflt);
/* out[p] = choices[a[p]][p] (a integer or bool; all broadcast), in the
 * choices' common dtype; mode as for take (raise: ValueError). */
ck_status ck_choose(ck_array *out, const ck_array *a, int n, const ck_array *const *choices, ck_index_mode mode);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_INDEX_H */
