/*
 * cudakit_random.h - counter-based random numbers (Philox4x32-10).
 *
 * The bit stream is Philox4x32 with 10 rounds (Salmon, Moraes, Dror, Shaw,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011), bit-identical to
 * Random123's philox4x32_R(10, ctr, key).  Being counter-based, block b of a
 * stream is philox(key, base + b): any block can be computed without the
 * ones before it, so a fill may be split over threads (or GPU threads) and
 * still give the same numbers.
 *
 * Counter layout: 4 x 32-bit words, ctr[0] least significant.  Fills add the
 * block index to the 128-bit counter (with carry).  Samplers that reject
 * (integers, gamma, beta, poisson, binomial) draw their extra blocks from
 * "retry lanes": the same counter with ctr[3] increased by 1, 2, ...  A
 * caller that advances its counter from 0 stays below 2^96 blocks in
 * practice, so lanes never meet the main sequence.
 *
 * Element -> bits (what a GPU kernel must reproduce):
 *   uint32 raw            4 per block, word j
 *   uint64 raw            2 per block, words 2j (low half), 2j+1 (high half)
 *   uniform float64       2 per block, (u64 >> 11) * 2^-53, u64 as above
 *   uniform float32       4 per block, (w >> 8) * 2^-24
 *   normal float64        2 per block: Box-Muller on u1 = 1 - uniform(words 0,1)
 *                         and u2 = uniform(words 2,3): r = sqrt(-2 log u1),
 *                         z0 = r cos(2 pi u2), z1 = r sin(2 pi u2)
 *   normal float32        4 per block: Box-Muller in float on pairs of words
 *                         (0,1) and (2,3), u1 = 1 - uniform32
 *   exponential           as uniform, -log(1 - u) (1 - u exact: -log1p(-u))
 *   integers [low, high)  range <= 2^32: 4 per block, Lemire's multiply-shift
 *                         on word j; range > 2^32: 2 per block on the 64-bit
 *                         word.  A rejected draw retries with the same word
 *                         position of lane 1, 2, ... (no modulo bias, and the
 *                         result still depends only on the element's block)
 *   gamma, beta, poisson, binomial: one element per counter (base + i); its
 *                         words are block (base + i) lane 0, then lane 1, ...
 * The log, exp, pow, sin and cos these use are the samplers' own
 * (src/formulas/random_formulas.h, an ulp or two from a libm's), of exactly
 * rounded operations with no FMA contraction: every device gives the same
 * bits for the same key and counter, the floating-point draws included.
 */
#ifndef CUDAKIT_RANDOM_H
#define CUDAKIT_RANDOM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CK_PHILOX_M0 0xD2511F53u
#define CK_PHILOX_M1 0xCD9E8D57u
#define CK_PHILOX_W0 0x9E3779B9u
#define CK_PHILOX_W1 0xBB67AE85u

/* out = Philox4x32-10(ctr, key). */
void ck_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

typedef enum ck_random_dist {
    CK_RANDOM_BITS,          /* uint32 or uint64: the raw words */
    CK_RANDOM_UNIFORM,       /* float32 / float64 in [0, 1) */
    CK_RANDOM_NORMAL,        /* float32 / float64, standard normal */
    CK_RANDOM_EXPONENTIAL,   /* float32 / float64, standard exponential */
    CK_RANDOM_INTEGERS,      /* any integer dtype or bool: low + [0, range) */
    CK_RANDOM_GAMMA,         /* float64: shape a, scale b */
    CK_RANDOM_BETA,          /* float64: a, b */
    CK_RANDOM_POISSON,       /* int64: lam a */
    CK_RANDOM_BINOMIAL,      /* int64: n a (a whole number), p b */
    CK_RANDOM_NDISTS
} ck_random_dist;

/* Parameters of a fill.  a_arr / b_arr, when not NULL, give one value per
 * output element (C order) instead of a / b.  Values must already be
 * valid (the Python layer raises NumPy's errors). */
typedef struct ck_random_params {
    double a, b;
    const double *a_arr, *b_arr;
    uint64_t low;     /* integers: the lowest value, two's complement bits */
    uint64_t range;   /* integers: high - low; 0 means 2^64 */
} ck_random_params;

/* Fill the n = out->size elements of a C-contiguous, writeable CPU array
 * with dist drawn from the stream (key, ctr).  *blocks (may be NULL) gets
 * how many counter values the fill used: the caller's next fill should start
 * at ctr + *blocks.  Splits over the CPU threads; the result does not
 * depend on how many there are. */
ck_status ck_random_fill(ck_array *out, ck_random_dist dist, const uint32_t key[2], const uint32_t ctr[4],
                         const ck_random_params *params, uint64_t *blocks);
/* Counter values a fill of n elements of dtype dt uses (for callers that
 * reserve them before filling). */
uint64_t ck_random_blocks(ck_random_dist dist, ck_dtype dt, const ck_random_params *params, int64_t n);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_RANDOM_H */
