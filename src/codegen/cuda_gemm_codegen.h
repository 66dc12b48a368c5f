/*
 * cuda_gemm_codegen.h - CUDA C source of the matrix product of integers
 * and bool (the floating types go to cuBLAS): a 16 x 16 tile of C per
 * block of 256 threads, tiles of A and B staged in shared memory, blocks
 * walking (batch, tile row, tile column) grid-stride.  Integers accumulate
 * in 64-bit unsigned arithmetic and wrap to the result type at the end
 * (NumPy's wrapped result); bool ORs the ANDs.
 *
 *   ck_cuda_gemm_int_spec sp = {CK_INT32};
 *   char *src = ck_cuda_gemm_int_source(&sp);   // kernel "ck_gemm_int", caller frees
 */
#ifndef CK_CODEGEN_CUDA_GEMM_H
#define CK_CODEGEN_CUDA_GEMM_H

#include "cudakit.h"

typedef struct ck_cuda_gemm_int_spec { ck_dtype t; } ck_cuda_gemm_int_spec;   /* bool or an integer */

uint64_t ck_cuda_gemm_int_key(const ck_cuda_gemm_int_spec *sp);
/* The translation unit (prelude + kernel "ck_gemm_int"); NULL with an error on failure. */
char *ck_cuda_gemm_int_source(const ck_cuda_gemm_int_spec *sp);

#endif
