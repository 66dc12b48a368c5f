/*
 * cuda_codegen.h - CUDA C source for the built-in kernels, generated from
 * the same op table and per-element expressions (src/formulas/scalar_ops.h) as
 * the CPU loops.  A kernel is specialised on a small spec (op, dtypes,
 * operand kinds, dimension count, 32/64-bit indexing, vector width) which
 * also packs into the 64-bit key the backend's kernel table is indexed by.
 *
 *   ck_cuda_ew_spec sp = {...};
 *   char *src = ck_cuda_ew_source(&sp);   // "ck_ew" kernel, caller frees
 */
#ifndef CK_CODEGEN_CUDA_H
#define CK_CODEGEN_CUDA_H

#include "cudakit.h"
#include "../base/sbuf.h"

/* Kernel ops beyond the element-wise table. */
#define CK_KOP_CAST (CK_OP_COUNT + 0)     /* types[1] -> types[0] */
#define CK_KOP_FILL (CK_OP_COUNT + 1)     /* value operand (scalar) -> out */
#define CK_KOP_IOTA (CK_OP_COUNT + 2)     /* out[i] = start + i * step, two double scalars */
#define CK_KOP_CLIP_CONST (CK_OP_COUNT + 3) /* clip with bounds of stride 0 innermost (CK_X_CLIP_CONST) */
#define CK_KOP_LAST CK_KOP_CLIP_CONST

typedef enum ck_opnd_kind {
    CK_OPND_CONTIG = 0,   /* p[i] */
    CK_OPND_STRIDED = 1,  /* byte offsets from the iteration index */
    CK_OPND_SCALAR = 2,   /* a kernel parameter by value */
} ck_opnd_kind;

#define CK_CUDA_EW_MAXDIM 8   /* merged dims beyond this are walked by a generic kernel */

typedef struct ck_cuda_ew_spec {
    int op;                  /* ck_op or CK_KOP_* */
    int nops;                /* operands, output at 0 */
    ck_dtype types[4];       /* storage dtype of each operand */
    uint8_t kinds[4];        /* ck_opnd_kind of each operand (the output is never a scalar) */
    int ndim;                /* 1 .. CK_CUDA_EW_MAXDIM (strided operands) */
    int idx64;               /* 64-bit element indices */
    int vec;                 /* elements per vector access when all arrays are contiguous (1, 2, 4, 8) */
    int flat;                /* vec 1 and a grid of one thread an element: `if (i < n)`, no grid-stride loop */
} ck_cuda_ew_spec;

/* The bytes a kernel of sp takes scalar operand k in (its stored type). */
size_t ck_cuda_ew_param_size(const ck_cuda_ew_spec *sp, int k);

/* The parameters after n and the operands when some operand is strided. */
typedef struct ck_cuda_nd {
    int64_t shape[CK_CUDA_EW_MAXDIM];
    int64_t strides[4][CK_CUDA_EW_MAXDIM];   /* bytes */
} ck_cuda_nd;

uint64_t ck_cuda_ew_key(const ck_cuda_ew_spec *sp);

/* A chain of flat element-wise steps over the same n elements, fused into
 * one kernel "ck_ewc" while a graph is captured (cuda_kernels.c): each
 * thread runs element i through every step in order, each step storing its
 * output, so the result is the steps' one after another whenever every
 * array the chain touches is addressed element for element (the caller
 * checks that).  Every step is contiguous or scalar operands, vec 1, flat,
 * 32-bit indices.  Parameters: int n, then each step's operands in order
 * (pointers, or scalars by value), no __restrict__: steps share arrays. */
#define CK_CUDA_EW_CHAIN_MAX 32
typedef struct ck_cuda_ew_chain {
    int nsteps;
    ck_cuda_ew_spec steps[CK_CUDA_EW_CHAIN_MAX];
} ck_cuda_ew_chain;
char *ck_cuda_ew_chain_source(const ck_cuda_ew_chain *c);
/* The kernel key of the chain numbered id (1, 2, ...: the caller numbers
 * each distinct chain, so keys never collide). */
uint64_t ck_cuda_ew_chain_key(uint64_t id);
/* The full translation unit (prelude, scalar ops, kernel "ck_ew"); NULL with
 * an error on allocation failure.  Caller frees. */
char *ck_cuda_ew_source(const ck_cuda_ew_spec *sp);

/* The embedded headers (generated at build time). */
extern const char ck_src_cuda_prelude[];
extern const size_t ck_src_cuda_prelude_len;
extern const char ck_src_scalar_ops[];
extern const size_t ck_src_scalar_ops_len;
extern const char ck_src_sort_kernels[];       /* src/codegen/sort_kernels.cuh */
extern const char ck_src_random_formulas[];    /* src/formulas/random_formulas.h */
extern const char ck_src_random_kernels[];     /* src/codegen/random_kernels.cuh */
extern const char ck_src_pyk_prelude[];        /* src/codegen/pykernel/pyk_prelude.cuh */

/* CUDA type names of a dtype: storage, compute, kind letter. */
const char *ck_cuda_storage_type(ck_dtype t);
const char *ck_cuda_compute_type(ck_dtype t);
char ck_cuda_kind_letter(ck_dtype t);
/* The names scalar_ops.h's macros use: "FLOAT32" for a dtype, "ADD" for an op. */
const char *ck_cuda_dtype_id(ck_dtype t);
const char *ck_cuda_op_id(ck_op op);
/* prelude + scalar ops at the start of b */
void ck_sbuf_prelude(ck_sbuf *b);

#endif
