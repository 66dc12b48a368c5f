/*
 * cuda_reduce_codegen.h - CUDA C source of the reductions (sum, prod, min,
 * max, all, any, argmin, argmax, count_nonzero) and the scans (cumsum,
 * cumprod).  Sums, products and scans run in their output's dtype and
 * convert an input of another dtype as they load it (int8 summed in
 * int64), so the input is never copied to convert it.
 *
 * A reduction module holds four kernels over one (output, reduced) split
 * of the work, all taking the parameter struct ck_cuda_red_nd by value:
 * "block" (a block per output slice, threads striding the reduced dims),
 * "vec" (the same over contiguous 16-byte aligned rows, vector loads),
 * "thread" (a thread per output) and "final" (combines the partials of a
 * split reduction).  A scan module holds "ck_scan" (a block per row) and,
 * but for complex, "ck_scan_lb" (one long contiguous row, a single pass
 * with decoupled look-back).
 *
 *   ck_cuda_red_spec sp = {.op = CK_REDUCE_SUM, .in = CK_FLOAT32, .out = CK_FLOAT32, .nout = 1, .nin = 1};
 *   char *src = ck_cuda_red_source(&sp);   // caller frees
 *   uint64_t key = ck_cuda_red_key(&sp, CK_REDK_MAIN);
 */
#ifndef CK_CODEGEN_CUDA_REDUCE_H
#define CK_CODEGEN_CUDA_REDUCE_H

#include "cudakit.h"

#define CK_CUDA_RED_MAXDIM 8   /* output dims and reduced dims, each, after merging */

typedef struct ck_cuda_red_spec {
    int op;              /* ck_reduce_op */
    ck_dtype in, out;    /* sum and prod run in out's dtype, the others in in's */
    int nout, nin;       /* output (outer) and reduced (inner) dims: 0..CK_CUDA_RED_MAXDIM */
    int thread_layout;   /* the main kernel is "thread", else "block" */
} ck_cuda_red_spec;

/* The kernels of a reduction module, as the key and the name tell them apart. */
typedef enum ck_red_kernel {
    CK_REDK_MAIN = 1,    /* ck_red_thread or ck_red_block, by the spec's layout */
    CK_REDK_FINAL = 2,   /* ck_red_final */
    CK_REDK_VEC = 3,     /* ck_red_vec */
} ck_red_kernel;

/* The parameter struct of every reduction kernel (byte strides). */
typedef struct ck_cuda_red_nd {
    long long out_shape[CK_CUDA_RED_MAXDIM], out_in_st[CK_CUDA_RED_MAXDIM], out_out_st[CK_CUDA_RED_MAXDIM];
    long long in_shape[CK_CUDA_RED_MAXDIM], in_st[CK_CUDA_RED_MAXDIM];
} ck_cuda_red_nd;

uint64_t ck_cuda_red_key(const ck_cuda_red_spec *sp, ck_red_kernel k);
const char *ck_cuda_red_name(const ck_cuda_red_spec *sp, ck_red_kernel k);
/* The translation unit (prelude + the four kernels); NULL with an error on failure. */
char *ck_cuda_red_source(const ck_cuda_red_spec *sp);
/* Bytes of one partial (the accumulator type) of a split reduction. */
size_t ck_cuda_red_acc_size(const ck_cuda_red_spec *sp);

#define CK_CUDA_SCAN_MAXDIM 8   /* outer (row) dims */

typedef struct ck_cuda_scan_spec {
    int op;         /* CK_REDUCE_SUM or CK_REDUCE_PROD */
    ck_dtype in;    /* the input's dtype, converted as it is read */
    ck_dtype out;   /* the output's, which the scan runs in */
    int nout;       /* row dims: 0..CK_CUDA_SCAN_MAXDIM */
} ck_cuda_scan_spec;

typedef enum ck_scan_kernel {
    CK_SCANK_ROWS = 0,       /* ck_scan */
    CK_SCANK_LOOKBACK = 1,   /* ck_scan_lb: not for complex */
} ck_scan_kernel;

/* The row layout parameter of ck_scan (byte strides). */
typedef struct ck_cuda_scan_nd {
    long long shape[CK_CUDA_SCAN_MAXDIM], in_st[CK_CUDA_SCAN_MAXDIM], out_st[CK_CUDA_SCAN_MAXDIM];
} ck_cuda_scan_nd;

uint64_t ck_cuda_scan_key(const ck_cuda_scan_spec *sp, ck_scan_kernel k);
const char *ck_cuda_scan_name(ck_scan_kernel k);
/* The translation unit (prelude + kernels); NULL with an error on failure. */
char *ck_cuda_scan_source(const ck_cuda_scan_spec *sp);

#endif
