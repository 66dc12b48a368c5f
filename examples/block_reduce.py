"""Summing an array with block reductions in CUDA C, two ways.

1. Shared memory: each thread of a block sums a grid-strided share of the
   input, the block's 256 partial sums go to __shared__ memory and are halved
   in a tree, with __syncthreads() between the steps; thread 0 writes the
   block's sum.  A second launch of the same kernel, one block, sums the
   blocks' sums.
2. Warp shuffles: the 32 threads of a warp add their values through
   registers with __shfl_down_sync, the warps' sums meet in shared memory,
   and each block adds its sum to the result with atomicAdd: one launch.

    python examples/block_reduce.py --device cpu
"""
import argparse

import numpy as np

import cudakit as ck

BLOCK = 256

SHARED_SOURCE = r"""
#define BLOCK 256

extern "C" __global__ void block_sum(const float *x, float *block_sums, int n)
{
    __shared__ float s[BLOCK];
    const int t = threadIdx.x;

    float sum = 0.0f;
    for (int i = blockIdx.x * BLOCK + t; i < n; i += gridDim.x * BLOCK)
        sum += x[i];
    s[t] = sum;
    __syncthreads();

    for (int half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        block_sums[blockIdx.x] = s[0];
}
"""

SHUFFLE_SOURCE = r"""
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;                                   // lane 0 holds the warp's sum
}

extern "C" __global__ void shuffle_sum(const float *x, float *out, int n)
{
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += x[i];
    sum = warp_sum(sum);
    if (lane == 0)
        warp_sums[warp] = sum;
    __syncthreads();

    if (warp == 0) {
        sum = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        sum = warp_sum(sum);
        if (lane == 0)
            atomicAdd(out, sum);
    }
}
"""


def main(device=None, n=1_000_003, blocks=120):
    x = ck.asarray(np.random.default_rng(0).random(n, dtype=np.float32), device=device)

    # 1. tree in shared memory, then a second launch over the blocks' sums
    block_sum = ck.RawKernel(SHARED_SOURCE, "block_sum")
    partial = ck.empty(blocks, dtype=ck.float32, device=device)
    total_shared = ck.empty(1, dtype=ck.float32, device=device)
    block_sum((blocks,), (BLOCK,), (x, partial, n))
    block_sum((1,), (BLOCK,), (partial, total_shared, blocks))

    # 2. warp shuffles, one atomicAdd per block
    shuffle_sum = ck.RawKernel(SHUFFLE_SOURCE, "shuffle_sum")
    total_shuffle = ck.zeros(1, dtype=ck.float32, device=device)
    shuffle_sum((blocks,), (BLOCK,), (x, total_shuffle, n))

    print(f"block reductions on {x.device}: sum of {n} floats = "
          f"{float(total_shared[0]):.6g} (shared memory, 2 launches), "
          f"{float(total_shuffle[0]):.6g} (warp shuffles + atomicAdd)")
    return x, total_shared, total_shuffle


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None,
                        help="where the arrays live (default: the default device)")
    main(parser.parse_args().device)
