/*
 * cuda_sort_codegen.h - CUDA C source of the sort, argsort and
 * searchsorted kernels (src/codegen/sort_kernels.cuh, specialised on the
 * dtype by a few defines): one module per dtype, its entry points at
 * consecutive keys from ck_cuda_sort_key.
 *
 *   ck_cuda_sort_spec sp = {CK_FLOAT32};
 *   char *src = ck_cuda_sort_source(&sp);   // caller frees
 *   // ck_cuda_sort_names[CK_SORTK_PASS] has key ck_cuda_sort_key(&sp) + CK_SORTK_PASS
 */
#ifndef CK_CODEGEN_CUDA_SORT_H
#define CK_CODEGEN_CUDA_SORT_H

#include "cudakit.h"

typedef struct ck_cuda_sort_spec { ck_dtype t; } ck_cuda_sort_spec;

/* The module's entry points; the last four are not built for complex. */
typedef enum ck_sort_kernel {
    CK_SORTK_KEYS, CK_SORTK_ROWHIST, CK_SORTK_PASS, CK_SORTK_PASS_PAY, CK_SORTK_OUT, CK_SORTK_PUT, CK_SORTK_SS,
    CK_SORTK_UNKEY, CK_SORTK_BLOCK, CK_SORTK_ROWS4, CK_SORTK_ROWS16, CK_SORTK_N
} ck_sort_kernel;
extern const char *const ck_cuda_sort_names[CK_SORTK_N];

/* The key of entry point 0; entry point i has key + i. */
uint64_t ck_cuda_sort_key(const ck_cuda_sort_spec *sp);
/* How many of the entry points the module of sp has. */
int ck_cuda_sort_nkernels(const ck_cuda_sort_spec *sp);
/* Bytes of an element's key (of one part for complex): over 4, the keys are 64-bit words. */
int ck_cuda_sort_key_bytes(ck_dtype t);
/* The translation unit; NULL with an error on failure. */
char *ck_cuda_sort_source(const ck_cuda_sort_spec *sp);

/* The histogram module of x's dtype (int64: bincount's bins; float32,
 * float64: values binned by scalar_ops.h's ck_hist_bin): one entry point,
 * ck_hist(n, nb, x, edges, uniform, weights, out, priv), counts into
 * unsigned long long or weights into double, in a block's shared memory
 * (nb elements of 8 bytes, dynamic) when priv.  Its key is the sort
 * family's with the top payload bit set (sort keys never have it). */
uint64_t ck_cuda_hist_key(ck_dtype t);
char *ck_cuda_hist_source(const ck_cuda_sort_spec *sp);

#endif
