/*
 * cuda_random_codegen.h - CUDA C source of the random fills: the Philox
 * formulas shared with the CPU loops (src/ops/random_formulas.h) and the
 * kernels of src/codegen/random_kernels.cuh, specialised by defines.
 * Bits, uniform, normal, exponential and integers fill `per` elements a
 * block of 4 words ("ck_rng_fill", one thread a block, the block stored
 * as one vector when `vec`); gamma, beta, poisson and binomial take a
 * thread and a stream per element ("ck_rng_heavy").
 *
 *   ck_cuda_rng_spec sp = {.dist = CK_RANDOM_UNIFORM, .t = CK_FLOAT32, .per = 4, .vec = 1};
 *   char *src = ck_cuda_rng_source(&sp);   // kernel ck_cuda_rng_name(&sp), caller frees
 */
#ifndef CK_CODEGEN_CUDA_RANDOM_H
#define CK_CODEGEN_CUDA_RANDOM_H

#include "cudakit.h"
#include "cudakit_random.h"

typedef struct ck_cuda_rng_spec {
    int dist;     /* ck_random_dist */
    ck_dtype t;
    int per;      /* elements a block of 4 words (fills; 0 for the heavy ones) */
    int vec;      /* the block's elements stored as one 4-, 8- or 16-byte vector */
} ck_cuda_rng_spec;

uint64_t ck_cuda_rng_key(const ck_cuda_rng_spec *sp);
const char *ck_cuda_rng_name(const ck_cuda_rng_spec *sp);
/* The translation unit; NULL with an error on failure. */
char *ck_cuda_rng_source(const ck_cuda_rng_spec *sp);
/* NVRTC's options for it: no contraction of a * b + c into an FMA, which
 * the CPU's loops do not do either, so that the samplers' arithmetic gives
 * the CPU's bits. */
extern const char *const ck_cuda_rng_options[];
extern const int ck_cuda_rng_noptions;

#endif
