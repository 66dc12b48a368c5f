/* cudakit_sort.h - sorting and searching (src/ops/sort.c).
 *
 * Order is NumPy's for every dtype: NaNs last, complex values by real then
 * imaginary part (each NaN-last).  The sorts are always stable (one radix
 * kernel serves every kind), so `stable` is accepted for the API's sake. */
#ifndef CUDAKIT_SORT_H
#define CUDAKIT_SORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* A sorted copy of a along axis (axis_none: of a flattened).  descending
 * keeps equal elements in their input order, as the array API asks. */
ck_status ck_sort(ck_array *out, const ck_array *a, int axis, int axis_none, int stable, int descending);
/* The int64 indices that sort a along axis. */
ck_status ck_argsort(ck_array *out, const ck_array *a, int axis, int axis_none, int stable, int descending);
/* partition / argpartition: every kth element in its sorted place, smaller
 * ones before and larger ones after (a full sort satisfies that). */
ck_status ck_partition(ck_array *out, const ck_array *a, const int64_t *kth, int nkth, int axis, int axis_none,
                       int arg);
/* Insertion points of v into the 1-d a (sorted, or sorted through sorter
 * when not NULL): int64 of v's shape.  side_right: after equal elements. */
ck_status ck_searchsorted(ck_array *out, const ck_array *a, const ck_array *v, int side_right,
                          const ck_array *sorter);

/* Counts (int64; weights NULL) or sums of weights (float64; weights of
 * x's size) of the elements of x (any shape, read flat) in nbins bins:
 * edges NULL: x's integers are the bins (bincount; those outside [0,
 * nbins) are left out: NumPy raises for them, its callers check); else the nbins + 1 increasing edges (1-d, any real
 * dtype, on x's device) bin x as NumPy's histogram does (bin i holds
 * edges[i] <= v < edges[i + 1], the last its right edge too; values
 * outside and NaN are left out), uniform saying they are equally spaced
 * (a bin computed rather than searched for). */
ck_status ck_histogram(ck_array *out, const ck_array *x, const ck_array *weights, const ck_array *edges,
                       int64_t nbins, int uniform);

#ifdef __cplusplus
}
#endif
#endif
