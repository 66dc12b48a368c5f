/*
 * cuda_concat_codegen.h - CUDA C source of the joining kernel
 * (concatenate, stack and their kin in one launch), key family CK_KFAM_CONCAT.
 *
 * One launch copies up to `cap` pieces into a box of the output: a thread
 * per output element (grid-stride), the piece found by a binary search of
 * the pieces' start offsets along the join axis, the element moved as
 * `units` words of `unit` bytes (raw bytes: every piece already has the
 * output's dtype).  Two kinds:
 *   rows:    the output and every piece C-contiguous, so the box is `rows`
 *            rows of `width` words, piece p holding words [start[p],
 *            start[p+1]) of each row, itself rows of (start[p+1]-start[p])
 *            words; a word may be 16 bytes.
 *   strided: any layout; the box is ndim dims with the join axis at `axis`,
 *            each piece with its own strides.
 * The parameter struct (ck_cuda_cat_params_size) is passed by value as a
 * __grid_constant__ (read in place, searched by index without a copy).
 *
 *   ck_cuda_cat_spec sp = {.kind = CK_CATK_ROWS, .unit = 16, .units = 1, .cap = 32};
 *   char *src = ck_cuda_cat_source(&sp);    // kernel "ck_cat_rows", caller frees
 */
#ifndef CK_CODEGEN_CUDA_CONCAT_H
#define CK_CODEGEN_CUDA_CONCAT_H

#include "cudakit.h"

/* Pieces of one launch: the most, and the bytes their struct may take
 * (kernel parameters total 4 KiB; the rest is left for the others). */
#define CK_CAT_MAX_PIECES 32
#define CK_CAT_PARAM_BYTES 3840

typedef enum ck_cat_kind {
    CK_CATK_ROWS = 1,      /* kernel "ck_cat_rows" */
    CK_CATK_STRIDED = 2,   /* kernel "ck_cat" */
} ck_cat_kind;

typedef struct ck_cuda_cat_spec {
    int kind;     /* ck_cat_kind */
    int ndim;     /* strided: the box's dims, 1..CK_MAXDIMS */
    int axis;     /* strided: the join axis, 0..ndim-1 */
    int unit;     /* bytes per moved word: 1, 2, 4, 8, 16 */
    int units;    /* words per element (strided): 1..16; rows: 1 */
    int idx64;    /* 64-bit positions (else 32-bit unsigned) */
    int cap;      /* pieces the struct holds: 1..CK_CAT_MAX_PIECES */
} ck_cuda_cat_spec;

uint64_t ck_cuda_cat_key(const ck_cuda_cat_spec *sp);
const char *ck_cuda_cat_name(const ck_cuda_cat_spec *sp);
/* The translation unit (prelude + kernel); NULL with an error on failure. */
char *ck_cuda_cat_source(const ck_cuda_cat_spec *sp);
/* Bytes of the parameter struct (int64 words, in order):
 *   rows:    rows width ostride ptr[cap] start[cap + 1]
 *   strided: shape[ndim] ostride[ndim] ptr[cap] start[cap + 1] pstride[cap][ndim]
 * (strides in bytes for strided, sizes and offsets in words for rows). */
size_t ck_cuda_cat_params_size(const ck_cuda_cat_spec *sp);
/* The most pieces a launch of ndim dims (0: rows) can take. */
int ck_cuda_cat_capacity(int kind, int ndim);

#endif
