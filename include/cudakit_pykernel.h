/*
 * cudakit_pykernel.h - kernels written in Python (Numba's CUDA Python),
 * translated to CUDA C that NVRTC compiles for a GPU and the system C++
 * compiler for the CPU (src/codegen/pykernel/).
 *
 * The Python layer reads a function's syntax tree once and writes it as a
 * compact S-expression text (one list a node, `(kind line col ...)`), with
 * the names the function uses resolved (`(global name kind ...)`: modules,
 * constants, types, device functions, intrinsics).  This API types that
 * tree for the types of one call's arguments, lowers it and writes the
 * CUDA C of one kernel (and the device functions it calls), readable, with
 * the Python line of each statement in a comment:
 *
 *     ck_pyk_arg args[2] = {{CK_PYK_ARRAY, CK_FLOAT32, 1, 'C', 0}, {CK_PYK_SCALAR, CK_INT64}};
 *     ck_pyk_options opt = {0};
 *     ck_pyk_result r;
 *     if (ck_pyk_translate(tree, strlen(tree), args, 2, &opt, &r) != CK_OK)
 *         ... r.error_line, r.error_col and ck_error_message() say what is wrong
 *     ck_module_load(dev, r.source, "add_one.py", NULL, 0, NULL, 0, &m);  // kernel r.kernel_name
 *     ck_pyk_result_free(&r);
 *
 * A kernel's parameters are its arguments in order, an array as its data
 * pointer, then its shape (int64 each), then its strides (int64 bytes
 * each), a scalar as its value; ck_pyk_param_count gives the count.  A
 * debug kernel takes its error record after them, and one that
 * synchronises its grid (grid_sync) its grid barrier's workspace last.
 *
 * Thread coarsening: a kernel whose threads differ only by cuda.grid(1)
 * (no barrier, warp function, shared or local array, no other reading of
 * threadIdx, blockIdx, blockDim, gridDim or laneid, itself or in the
 * device functions it calls; not debug) is written, for the GPU, as a
 * grid-stride loop over the indices 0 .. ck_nthreads - 1, each iteration
 * the body of one thread of the launch asked for (its variables fresh, a
 * return ending only that iteration).  The launcher passes the thread
 * count asked for (grid.x * block.x) and may launch fewer blocks, a wave
 * of the device: every index is still done exactly once.  The CPU form is
 * the plain one (its thread loops vectorise), the count unused.
 *
 * The vector path: where every access to an array is a[i] of a 1-d array
 * parameter, i the variable assigned cuda.grid(1) once (add_one), the loop
 * does groups of consecutive indices with one 16-byte load and store of
 * each array a group, when the arrays at run time allow it (unit strides,
 * 16-byte aligned, no array written sharing a byte with another), and the
 * scalar loop the rest.
 */
#ifndef CUDAKIT_PYKERNEL_H
#define CUDAKIT_PYKERNEL_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The line after the preludes, before what was translated (inspect_cuda shows from there). */
#define CK_PYK_MARK "/* ---------------- translated from Python ---------------- */"

typedef enum ck_pyk_arg_kind { CK_PYK_SCALAR = 0, CK_PYK_ARRAY = 1 } ck_pyk_arg_kind;

/* The type of one argument of a call. */
typedef struct ck_pyk_arg {
    int kind;              /* ck_pyk_arg_kind */
    ck_dtype dtype;
    int ndim;              /* arrays */
    char layout;           /* arrays: 'C' (C-contiguous), 'F', 'A' (any strides) */
    int readonly;          /* arrays */
} ck_pyk_arg;

typedef struct ck_pyk_options {
    int device_function;   /* translate a device function called alone (tests) */
    int fastmath;          /* may reorder float arithmetic, flush denormals */
    int debug;             /* bounds checks on every access, raise and assert */
    int lineinfo;          /* #line directives with the Python file and line */
    int max_registers;     /* 0: the compiler's choice */
    int launch_bounds;     /* 0: none; else the most threads a block (__launch_bounds__) */
    int no_coarsen;        /* never a grid-stride kernel (see thread coarsening above) */
    int no_prefetch;       /* a grid-stride kernel without its L2 hints for the next index */
    int no_vector;         /* a grid-stride kernel without its vector path (see thread coarsening above) */
    const char *filename;  /* the Python file, for #line and messages */
} ck_pyk_options;

typedef struct ck_pyk_result {
    char *source;          /* the CUDA C translation unit (malloc'd) */
    char *kernel_name;     /* its extern "C" __global__ function */
    int nparams;           /* kernel parameters (arrays count 1 + 2 * ndim) */
    int uses_barrier;      /* syncthreads or warp functions: the CPU runs fibers */
    int grid_sync;         /* 0; 1: g.sync(), a cooperative launch whose last parameter is a ck_pyk_gridws
                            * (pyk_prelude.cuh); 2: the same, on a GPU only (the CPU form cannot wait for the grid) */
    int coarsened;         /* 1: a grid-stride kernel (see below): its last parameter is the launch's thread
                            * count along x (long long), and the launcher may give it fewer blocks */
    ck_dtype return_dtype; /* device_function: the number it returns (CK_DTYPE_INVALID: none, or not a number) */
    int error_line, error_col;  /* where a translation failed (1-based; 0 when unknown) */
} ck_pyk_result;

/* Translate tree (len bytes) for args.  CK_ERR_TYPE for a typing error,
 * CK_ERR_NOT_IMPLEMENTED for a construct the kernel language does not
 * have (both naming it, error_line/error_col set), CK_ERR_VALUE for a
 * malformed tree. */
ck_status ck_pyk_translate(const char *tree, size_t len, const ck_pyk_arg *args, int nargs,
                           const ck_pyk_options *opt, ck_pyk_result *out);
void ck_pyk_result_free(ck_pyk_result *r);
/* Parameters of a kernel taking these arguments. */
int ck_pyk_param_count(const ck_pyk_arg *args, int nargs);

#ifdef __cplusplus
}
#endif
#endif
