/* Shapes, strides, contiguity, broadcasting and dimension merging: pure
 * functions on array layouts, no memory and no devices. */
#ifndef CK_ARRAY_LAYOUT_H
#define CK_ARRAY_LAYOUT_H

#include "cudakit.h"

/* An n-operand iteration space after broadcasting and merging: every
 * operand walks the same shape with its own byte strides.  Merging folds
 * adjacent dimensions whose strides chain for every operand, so a C
 * contiguous array of any shape becomes one dimension.  Dimension 0 is the
 * innermost (fastest) after ck_iter_prepare. */
#define CK_ITER_MAXOPS (CK_UFUNC_MAXIN + 1)   /* the output and the inputs */
typedef struct ck_iter {
    int nops;
    int ndim;
    int64_t size;
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_ITER_MAXOPS][CK_MAXDIMS];
    char *data[CK_ITER_MAXOPS];
} ck_iter;

/* One operand of an iteration: its dims align with the iteration shape
 * from the right (broadcasting); a scalar has ndim 0. */
typedef struct ck_iter_operand {
    char *data;
    int ndim;
    const int64_t *shape;
    const int64_t *strides;
} ck_iter_operand;

static inline ck_iter_operand ck_iter_op_of(const ck_array *a)
{
    ck_iter_operand o = {a->data, a->ndim, a->shape, a->strides};
    return o;
}

/* Fill it for nops operands broadcast to (ndim, shape), then sort dims
 * innermost-first by the first operand's (the output's) strides and merge
 * the ones that chain for every operand. */
void ck_iter_prepare(ck_iter *it, int nops, int ndim, const int64_t *shape,
                     const ck_iter_operand *ops);
/* The merging of ck_iter_prepare for any number of operands: their
 * strides broadcast to (ndim, shape), unit dims dropped, dims innermost
 * first (sort: ordered by the first operand's absolute strides, else the
 * C order reversed), the dims whose strides chain for every operand
 * folded into one.  Operand k's strides go to out_strides + k * CK_MAXDIMS;
 * returns the dims left (0 when every extent is 1). */
int ck_layout_merge(int nops, int ndim, const int64_t *shape, const ck_iter_operand *ops, int sort,
                    int64_t *out_shape, int64_t *out_strides);

int ck_layout_is_c_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize);
int ck_layout_is_f_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize);
/* Strides of a reshape that needs no copy, or 0 when a copy is needed. */
int ck_layout_reshape_strides(int ndim, const int64_t *shape, const int64_t *strides,
                              int new_ndim, const int64_t *new_shape, int64_t itemsize,
                              int order_f, int64_t *new_strides);

#endif
