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

/* The small float products of the fused linear layer (backend.h's
 * ck_linear_desc), for sizes where a launch's latency is the cost: a block
 * of ks warps (ks = blockDim.x / 32) computes a (8 RM) x (4 RN) tile of d,
 * its lanes 8 x 4 over the tile, each lane RM x RN outputs; warp w takes
 * the w-th of ks contiguous slices of k, reading a and b straight from
 * global memory through their strides (no shared-memory staging, no
 * barrier in the loop), and the block adds the ks partial tiles in warp
 * order (the same sums at every run).  The epilogue is backend.h's:
 * bias, relu, or the row sums of op(a) written by the blocks of the first
 * tile column.  One module holds CK_GEMM_SMALL_CFGS kernels, "ck_lin_<c>"
 * for the micro-tiles of ck_gemm_small_cfgs[c]; the shared memory a
 * launch needs is ck_gemm_small_smem(). */
#define CK_GEMM_SMALL_CFGS 8
/* a lane's rm x rn outputs; unroll: the k loop's, so that a warp has that
 * many steps' loads in flight (a long k's latency) */
typedef struct ck_gemm_small_cfg { int rm, rn, unroll; } ck_gemm_small_cfg;
extern const ck_gemm_small_cfg ck_gemm_small_cfgs[CK_GEMM_SMALL_CFGS];
/* the tile of cfg c: its lanes are 8 x 4 over it */
static inline int ck_gemm_small_tm(int c) { return 8 * ck_gemm_small_cfgs[c].rm; }
static inline int ck_gemm_small_tn(int c) { return 4 * ck_gemm_small_cfgs[c].rn; }
/* the cfg an untimed plan takes: a 16 x 16 tile */
#define CK_GEMM_SMALL_DEFAULT 3
#define CK_GEMM_SMALL_MAX_WARPS 16
/* The dot-product form of the same products, for d = a @ b^T with both
 * operands contiguous along k (a linear layer's forward: x (m, k) and its
 * weight (n, k), k long): a warp computes a WM x WN tile of d, its lanes
 * splitting k (16-byte loads, coalesced across the warp, when the rows are
 * 16-byte aligned and k a multiple of the vector), so that a lane's loads
 * are few and all independent; the lanes' partial sums are added by
 * shuffles (in the same order at every run) and the tile's owner lanes
 * apply the epilogue (bias, relu; not the bias gradient).  A block is
 * CK_GEMM_DOT_WARPS warps side by side along n.  The module's kernels
 * "ck_lind_<c>" follow the ck_lin_ ones: cfg CK_GEMM_SMALL_CFGS + c of
 * a plan is ck_gemm_dot_cfgs[c]. */
#define CK_GEMM_DOT_CFGS 6
#define CK_GEMM_DOT_WARPS 4
typedef struct ck_gemm_dot_cfg { int wm, wn; } ck_gemm_dot_cfg;
extern const ck_gemm_dot_cfg ck_gemm_dot_cfgs[CK_GEMM_DOT_CFGS];
/* every kernel of the module, small then dot */
#define CK_GEMM_OWN_CFGS (CK_GEMM_SMALL_CFGS + CK_GEMM_DOT_CFGS)

typedef struct ck_cuda_gemm_small_spec { ck_dtype t; } ck_cuda_gemm_small_spec;   /* float32 or float64 */

uint64_t ck_cuda_gemm_small_key(const ck_cuda_gemm_small_spec *sp);
char *ck_cuda_gemm_small_source(const ck_cuda_gemm_small_spec *sp);
/* bytes of dynamic shared memory for cfg c with ks warps, elements of size itemsize */
size_t ck_gemm_small_smem(int c, int ks, size_t itemsize);

#endif
