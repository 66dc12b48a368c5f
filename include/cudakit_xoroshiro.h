/*
 * cudakit_xoroshiro.h - the states of xoroshiro128+ generators, as
 * cudakit.cuda.random (Numba's numba.cuda.random) makes them.
 *
 * xoroshiro128+ (Blackman and Vigna, 2016 parameters a, b, c = 55, 14, 36):
 * a state is two 64-bit words s0, s1; a step returns s0 + s1 and moves the
 * state.  A kernel's generator i owns row i of an (n, 2) uint64 array
 * (s0, s1).  Row 0 is seeded by SplitMix64 (both words the one output for
 * the seed, as Numba does) and then advanced by subsequence_start jumps of
 * 2^64 steps; row i + 1 is row i advanced by one jump, so the generators'
 * streams never overlap before 2^64 draws.  The jump polynomial is the
 * authors' (CK_XORO_JUMP0, CK_XORO_JUMP1).
 *
 *     ck_array st;
 *     int64_t shape[2] = {1024, 2};
 *     ck_array_empty(&st, 2, shape, CK_UINT64, ck_device_cpu());
 *     ck_xoro_init_states(&st, 42, 0);       // what create_xoroshiro128p_states(1024, 42) holds
 *
 * The step is linear over GF(2), so a jump is a 128 x 128 bit matrix: the
 * states are made with it (a table lookup per byte of the state) and any
 * subsequence_start below 2^64 costs 64 matrix squarings, not that many jumps.
 */
#ifndef CUDAKIT_XOROSHIRO_H
#define CUDAKIT_XOROSHIRO_H

#include <stdint.h>

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CK_XORO_JUMP0 0xbeac0467eba5facbull
#define CK_XORO_JUMP1 0xd86b048b86aa9922ull

/* The SplitMix64 output for a seed: both words of state 0 before its jumps. */
uint64_t ck_xoro_splitmix64(uint64_t seed);
/* One step: returns s[0] + s[1] and advances s. */
uint64_t ck_xoro_next(uint64_t s[2]);
/* 2^64 steps, by the jump polynomial (128 steps). */
void ck_xoro_jump(uint64_t s[2]);
/* Fill the (n, 2) uint64 array states, on any device and of any strides,
 * with the n generators for seed whose first is subsequence_start jumps
 * past the seed's state.  The states are made on the host and copied (on
 * the device's current stream). */
ck_status ck_xoro_init_states(ck_array *states, uint64_t seed, uint64_t subsequence_start);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_XOROSHIRO_H */
