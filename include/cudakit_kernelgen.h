/*
 * cudakit_kernelgen.h - CUDA C source of the kernels users build from
 * pieces of code: CuPy's ElementwiseKernel and ReductionKernel, and the
 * device functions of ck.fuse's traced expressions (src/codegen/
 * user_kernel_codegen.c), and the launch layouts they run on.  The same
 * source compiles with NVRTC and, against the CUDA-compatibility header,
 * with the system C++ compiler for CPU arrays.
 *
 *   ck_ukernel_param ps[2] = {{"x", "T", CK_FLOAT32, CK_UKP_ARRAY}, {"y", "T", CK_FLOAT32, CK_UKP_ARRAY}};
 *   ck_ukernel_ew_spec sp = {.name = "twice", .operation = "y = 2 * x", .nin = 1, .nout = 1,
 *                            .params = ps, .ndim = 1, .contig = 1};
 *   char *src = ck_ukernel_ew_source(&sp);      // kernel "twice", caller frees
 *
 * A kernel's parameters come in the order ck_ukernel_ew_args (or _red_args)
 * lists; a launch passes them in that order.
 */
#ifndef CUDAKIT_KERNELGEN_H
#define CUDAKIT_KERNELGEN_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CK_UKERNEL_MAXPARAMS 64    /* parameters of a user kernel */
#define CK_UKERNEL_MAXARGS 512     /* kernel arguments: CUDA passes at most 4 KiB of them */

typedef enum ck_ukernel_param_kind {
    CK_UKP_ARRAY = 'a',    /* an element of the array at the loop position */
    CK_UKP_RAW = 'r',      /* the whole array, indexed by the code (name[k], name.size()) */
    CK_UKP_SCALAR = 's',   /* a value */
} ck_ukernel_param_kind;

/* One parameter of a user kernel as a call binds it. */
typedef struct ck_ukernel_param {
    const char *name;
    const char *placeholder;   /* the type's name in the code ("T"): typedef'd to dtype; NULL for a fixed dtype */
    ck_dtype dtype;
    int kind;                  /* ck_ukernel_param_kind */
} ck_ukernel_param;

/* An element-wise kernel: the operation runs once per loop position i
 * (the C-order index of the loop), with _ind.size() and _ind.get()[d]. */
typedef struct ck_ukernel_ew_spec {
    const char *name, *operation;
    const char *preamble, *loop_prep, *after_loop;   /* NULL or "": none */
    int nin, nout;
    const ck_ukernel_param *params;                  /* the nin inputs, then the nout outputs */
    int ndim;                                        /* loop dims the kernel walks */
    int contig;                                      /* every array C-contiguous in the loop: p[i] */
    int uses_ind;                                    /* the operation reads _ind.get() */
} ck_ukernel_ew_spec;

/* A reduction: map_expr of the inputs at one position becomes a value of
 * reduce_type, reduce_expr combines two (a, b), post_map_expr writes the
 * output from the result a. */
typedef struct ck_ukernel_red_spec {
    const char *name, *map_expr, *reduce_expr, *post_map_expr;
    const char *identity;       /* NULL: none (an empty reduction is then the caller's error) */
    const char *preamble;       /* NULL or "": none */
    const char *reduce_type;    /* the C type of the values combined */
    int nin;                    /* params[0..nin) inputs, params[nin] the output */
    const ck_ukernel_param *params;
    int nouter, ninner;         /* output (kept) and reduced loop dims */
    int block;                  /* a block per output (a tree in shared memory), else a thread per output */
} ck_ukernel_red_spec;

/* The translation units; NULL with an error (float16 parameters are
 * CK_ERR_NOT_IMPLEMENTED).  Caller frees. */
char *ck_ukernel_ew_source(const ck_ukernel_ew_spec *sp);
char *ck_ukernel_red_source(const ck_ukernel_red_spec *sp);

/* One kernel argument. */
typedef enum ck_ukernel_arg_kind {
    CK_UKA_COUNT,     /* long long: the loop's positions (element-wise), outputs (dim 0) or reduced positions (dim 1) */
    CK_UKA_SHAPE,     /* long long: the extent of loop dim `dim` (of the reduced loop when `inner`) */
    CK_UKA_VALUE,     /* parameter `param`'s value, of its dtype */
    CK_UKA_POINTER,   /* parameter `param`'s data, a pointer to its dtype */
    CK_UKA_SIZE,      /* long long: raw parameter `param`'s element count */
    CK_UKA_STRIDE,    /* long long: parameter `param`'s byte stride along loop dim `dim` (of the reduced loop when `inner`) */
} ck_ukernel_arg_kind;

typedef struct ck_ukernel_arg { uint8_t kind, inner, param, dim; } ck_ukernel_arg;

/* The kernel's arguments in order (at most CK_UKERNEL_MAXARGS); returns how many. */
int ck_ukernel_ew_args(const ck_ukernel_ew_spec *sp, ck_ukernel_arg *args);
int ck_ukernel_red_args(const ck_ukernel_red_spec *sp, ck_ukernel_arg *args);

/* The C type a user kernel names a dtype by ("float", "long long",
 * "complex<double>"); NULL with CK_ERR_NOT_IMPLEMENTED for float16. */
const char *ck_ukernel_ctype(ck_dtype t);
/* The dtype of a C type name as kernel signatures spell it ("unsigned
 * int", "int64_t", "complex<float>", ...); CK_DTYPE_INVALID if it is not one. */
ck_dtype ck_ukernel_dtype_of_ctype(const char *name);

/* ------------------------------------------------------------ layouts */

/* A loop of an element-wise kernel, or one of a reduction's two. */
typedef struct ck_ukernel_loop {
    int ndim;
    int contig;                  /* element-wise: one flat dim, every array indexed p[i] */
    int64_t size;
    int64_t shape[CK_MAXDIMS];   /* outermost first */
} ck_ukernel_loop;

/* The loop of an element-wise kernel over arrs (its non-raw array
 * parameters, in order) broadcast to (ndim, shape): one flat dim when
 * allow_contig and every array is C-contiguous with that shape; else,
 * with merge, unit dims dropped and dims whose strides chain for every
 * array folded into one (C order kept, so i stays the C-order index);
 * else the broadcast shape as it is.  strides[k]: array k's byte strides
 * along the loop's dims (0 where broadcast), unset when contig. */
void ck_ukernel_ew_layout(int narr, const ck_array *const *arrs, int ndim, const int64_t *shape, int merge,
                          int allow_contig, ck_ukernel_loop *loop, int64_t (*strides)[CK_MAXDIMS]);

/* The loops of a reduction of the inputs ins (its non-raw array inputs)
 * broadcast to (ndim, shape) over the dims of reduced_mask (bit d: dim d),
 * into out (of the kept dims, or of every dim with 1 at the reduced ones
 * when keepdims): the kept dims over ins and out (ostrides[k], out's at
 * [nins]) and the reduced dims over ins (istrides), each merged.  Returns
 * whether a block per output serves best (the reduced run is contiguous
 * in the first input and long, or outputs are few); the outer loop's size
 * is the output count, the inner's the reduced count. */
int ck_ukernel_red_layout(int nins, const ck_array *const *ins, const ck_array *out, int keepdims, int ndim,
                          const int64_t *shape, uint64_t reduced_mask, ck_ukernel_loop *outer,
                          int64_t (*ostrides)[CK_MAXDIMS], ck_ukernel_loop *inner, int64_t (*istrides)[CK_MAXDIMS]);

/* --------------------------------------------------------------- fuse */

/* The ops a traced expression may use, by NumPy's ufunc names. */
typedef struct ck_ukernel_fuse_op {
    const char *name;
    int nargs;          /* 1 or 2 */
    int float_only;     /* only for floating compute types */
} ck_ukernel_fuse_op;
extern const ck_ukernel_fuse_op ck_ukernel_fuse_ops[];
extern const int ck_ukernel_fuse_nops;
#define CK_UKF_OP_CAST (-1)    /* astype: a[0] to the step's dtype */
#define CK_UKF_OP_WHERE (-2)   /* a[0] ? a[1] : a[2], in the step's dtype */

/* An operand of a step: a parameter of the function, an earlier step's
 * value, or a constant (weak: typed by C's rules; a NumPy scalar's is cast
 * to its dtype). */
typedef enum ck_ukernel_fuse_ref_kind { CK_UKF_PARAM, CK_UKF_TEMP, CK_UKF_BOOL, CK_UKF_INT, CK_UKF_FLOAT } ck_ukernel_fuse_ref_kind;
typedef struct ck_ukernel_fuse_ref {
    int kind;          /* ck_ukernel_fuse_ref_kind */
    int64_t i;         /* PARAM, TEMP: the index; BOOL, INT: the value */
    double f;          /* FLOAT: the value (finite) */
    ck_dtype cast;     /* a constant of this dtype, or CK_DTYPE_INVALID */
} ck_ukernel_fuse_ref;

/* One traced operation: temp n is step n's value. */
typedef struct ck_ukernel_fuse_step {
    int op;                    /* index into ck_ukernel_fuse_ops, or CK_UKF_OP_* */
    ck_dtype out;              /* the value's dtype */
    ck_dtype compute;          /* the operands are cast to it (ops) */
    ck_ukernel_fuse_ref a[3];
} ck_ukernel_fuse_step;

/* A traced function: parameters in0.. of in_types, the steps, and the
 * results (fused into one element-wise kernel: _ck_fused_fn writes
 * out0..; or, with reduce, the value _ck_fused_map returns to a
 * reduction of the one result). */
typedef struct ck_ukernel_fuse_spec {
    int nin;
    const ck_dtype *in_types;
    int nsteps;
    const ck_ukernel_fuse_step *steps;
    int nres;
    const ck_ukernel_fuse_ref *res;     /* PARAM or TEMP */
    const ck_dtype *res_types;
    int reduce;
} ck_ukernel_fuse_spec;

/* The device function (a preamble for the kernel) and the expression that
 * calls it (the element-wise operation, or the reduction's map); NULL with
 * an error.  Caller frees both. */
ck_status ck_ukernel_fuse_source(const ck_ukernel_fuse_spec *sp, char **preamble, char **call);
/* A fused final reduction by name (sum, prod, max, min): its combine
 * expression and identity (NULL: none); CK_ERR_VALUE if unknown. */
ck_status ck_ukernel_fuse_reduction(const char *name, const char **reduce_expr, const char **identity);

#ifdef __cplusplus
}
#endif
#endif
