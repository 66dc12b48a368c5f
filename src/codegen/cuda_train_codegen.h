/*
 * cuda_train_codegen.h - CUDA C source of the training ops (backend.h's
 * rows, optim_step and bias_act): a kernel family specialised on the op,
 * the storage dtype and, for the rows, whether a warp takes a row (the
 * row's elements contiguous: inner == 1) or a thread does (rows
 * interleaved, read coalesced across the rows).
 *
 *   ck_cuda_train_spec sp = {.kind = CK_TRK_ROWS, .op = CK_ROW_SOFTMAX, .t = CK_FLOAT32, .warp = 1};
 *   char *src = ck_cuda_train_source(&sp);   // kernels ck_cuda_train_names(&sp, ...), caller frees
 */
#ifndef CK_CODEGEN_CUDA_TRAIN_H
#define CK_CODEGEN_CUDA_TRAIN_H

#include "cudakit.h"
#include "cudakit_train.h"

typedef enum ck_cuda_train_kind {
    CK_TRK_ROWS,       /* "ck_rows" and "ck_xent_total" (op: ck_row_op) */
    CK_TRK_OPTIM,      /* "ck_optim" (op: ck_optim_kind) */
    CK_TRK_BIAS_ACT,   /* "ck_bias_act" (op: ck_act; warp: the backward) */
    CK_TRK_SCATTER_ADD, /* "ck_scatter_add" and "ck_scatter_add_check" */
} ck_cuda_train_kind;

typedef struct ck_cuda_train_spec {
    int kind;          /* ck_cuda_train_kind */
    int op;
    ck_dtype t;
    int warp;
} ck_cuda_train_spec;

/* The tensors one optimizer launch takes (passed by value, 1.5 KiB of
 * parameters), the elements a block updates and its threads: two a
 * thread, both loaded before either is stored, so that a small model's
 * step fills the GPU.  The seed's MLP, 101,770 parameters: 28 blocks of
 * 16 serial updates a thread took 15 us under ncu on the H200, where the
 * bandwidth needs about 1; in a graph, 4 a thread loaded at once took
 * 2.04 us a step, 2 a thread 1.51, 1 a thread 1.39 (bench/probe_adam.py);
 * two keeps half the blocks (and tickets) of one. */
#define CK_OPTIM_TENSORS 32
#define CK_OPTIM_CHUNK 512
#define CK_OPTIM_BLOCK 256

/* The launch's table as the kernel's first parameter: the same layout
 * on the host and in the generated source. */
typedef struct ck_cuda_optim_table {
    void *p[CK_OPTIM_TENSORS];
    const void *g[CK_OPTIM_TENSORS];
    void *s1[CK_OPTIM_TENSORS];
    void *s2[CK_OPTIM_TENSORS];
    long long n[CK_OPTIM_TENSORS];
    long long block0[CK_OPTIM_TENSORS + 1];   /* first block of each tensor, then the launch's blocks */
    int count;
} ck_cuda_optim_table;

uint64_t ck_cuda_train_key(const ck_cuda_train_spec *sp);
/* The entry points of the spec's source (1 or 2) into names; their count. */
int ck_cuda_train_names(const ck_cuda_train_spec *sp, const char **names);
/* The translation unit; NULL with an error on failure. */
char *ck_cuda_train_source(const ck_cuda_train_spec *sp);

#endif
