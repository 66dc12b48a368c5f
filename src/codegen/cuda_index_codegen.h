/*
 * cuda_index_codegen.h - CUDA C source of the advanced-indexing kernels
 * (gather, scatter, index checks, nonzero's compaction), key family CK_KFAM_INDEX.
 *
 * A gather or scatter kernel walks the result positions in C order (one
 * thread per position, grid-stride), turns each into byte offsets through
 * the merged dims and the index arrays, and moves one element as `units`
 * words of `unit` bytes (elements move as raw bytes, so the spec names a
 * width, not a dtype).  Its parameters are one struct whose arrays are
 * sized exactly for the spec's dims and index count (ck_cuda_ix_params
 * lays it out on the host).
 *
 *   ck_cuda_ix_spec sp = {.kind = CK_IXK_GATHER, .ndim = 1, .nidx = 1, .unit = 4, .units = 1};
 *   char *src = ck_cuda_ix_source(&sp);    // kernel "ck_ix", caller frees
 */
#ifndef CK_CODEGEN_CUDA_INDEX_H
#define CK_CODEGEN_CUDA_INDEX_H

#include "cudakit.h"

typedef enum ck_ix_kind {
    CK_IXK_GATHER = 1,      /* other[pos] = arr[target(pos)] */
    CK_IXK_SCATTER = 2,     /* arr[target(pos)] = other[pos], no duplicate handling (one position) */
    CK_IXK_CLAIM_INIT = 3,  /* scatter pass 1: check the indices, win[t] = 0 for every target t */
    CK_IXK_CLAIM = 4,       /* scatter pass 2: win[t] = max(win[t], pos + 1) */
    CK_IXK_APPLY = 5,       /* scatter pass 3: the position that won its target writes it */
    CK_IXK_CHECK = 6,       /* kernel "ck_ix_check": bounds of one contiguous index array */
    CK_IXK_NZ_COUNT = 7,    /* kernel "ck_nz_count": true elements per chunk */
    CK_IXK_NZ_SCAN = 8,     /* kernel "ck_nz_scan": exclusive scan of the chunk counts */
    CK_IXK_NZ_WRITE = 9,    /* kernel "ck_nz_write": coordinates of the true elements */
    CK_IXK_SELECT = 10,     /* kernel "ck_sel": the source elements at the true elements, packed */
    CK_IXK_EXPAND = 11,     /* kernel "ck_exp": select's reverse, the packed elements to the true elements */
} ck_ix_kind;

/* nonzero works on chunks of CK_NZ_CHUNK elements, one 256-thread block each */
#define CK_NZ_ITEMS 16
#define CK_NZ_CHUNK (256 * CK_NZ_ITEMS)

typedef struct ck_cuda_ix_spec {
    int kind;     /* ck_ix_kind */
    int ndim;     /* merged result dims (gather/scatter), the mask's dims (nonzero): 0..CK_MAXDIMS */
    int nidx;     /* index arrays: 0..CK_MAXDIMS */
    int unit;     /* bytes per moved word: 1, 2, 4, 8 */
    int units;    /* words per element: 1..16 */
    int mode;     /* ck_index_mode */
    int idx64;    /* 64-bit positions (else 32-bit unsigned) */
    int win64;    /* 64-bit claim words (scatter passes) */
    int byref;    /* the parameter struct is passed by pointer (too big for the 4 KiB of parameters) */
    int contig;   /* nonzero: the mask is C-contiguous; select: the mask and the source are */
    int vec;      /* compaction: the mask is C-contiguous and 16-byte aligned: each thread reads 16 mask bytes at once */
} ck_cuda_ix_spec;

uint64_t ck_cuda_ix_key(const ck_cuda_ix_spec *sp);
/* The kernel's name for sp->kind. */
const char *ck_cuda_ix_name(const ck_cuda_ix_spec *sp);
/* The translation unit (prelude + kernel); NULL with an error on failure. */
char *ck_cuda_ix_source(const ck_cuda_ix_spec *sp);
/* Bytes of the gather/scatter parameter struct (int64 words, in order):
 * shape[D] arr_strides[D] other_strides[D] target_mul[D] idx_ptr[I]
 * idx_strides[I][D] axis_len[I] axis_stride[I] index_mul[I], with
 * D = max(ndim, 1) and I = max(nidx, 1).  The nonzero struct is
 * shape[D] strides[D]; select's (and expand's) adds the array's strides[D]
 * after them. */
size_t ck_cuda_ix_params_size(const ck_cuda_ix_spec *sp);

#endif
