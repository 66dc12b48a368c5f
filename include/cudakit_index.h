/*
 * cudakit_index.h - advanced (integer-array and boolean) indexing and the
 * functions built on it: take, put, take_along_axis, put_along_axis and
 * nonzero.  Included from the bottom of cudakit.h.
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

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_INDEX_H */
