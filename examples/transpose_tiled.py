"""A shared-memory tiled matrix transpose in CUDA C.

Each block of 32 x 8 threads moves one 32 x 32 tile: it reads the tile's rows
from the input (neighbouring threads read neighbouring addresses), stores them
in shared memory, waits at __syncthreads(), and writes the tile's columns out
as rows of the output, so that the writes are coalesced too.  The tile has 33
columns, not 32: the padding puts the 32 elements of a tile column in 32
different shared-memory banks.  The shape is not a multiple of 32, so the
edge tiles check their bounds.

    python examples/transpose_tiled.py --device cpu
"""
import argparse

import numpy as np

import cudakit as ck

TILE = 32
ROWS = 8   # threads per block: TILE x ROWS; each thread moves TILE / ROWS elements

SOURCE = r"""
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose(float *out, const float *in, int height, int width)
{
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;        // column in `in`
    int y = blockIdx.y * TILE + threadIdx.y;        // first row in `in`
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;            // column in `out`
    y = blockIdx.x * TILE + threadIdx.y;            // first row in `out`
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""


def main(device=None, height=1000, width=750):
    a = ck.asarray(np.arange(height * width, dtype=np.float32).reshape(height, width), device=device)
    out = ck.empty((width, height), dtype=ck.float32, device=device)
    transpose = ck.RawKernel(SOURCE, "transpose")
    grid = ((width + TILE - 1) // TILE, (height + TILE - 1) // TILE)
    transpose(grid, (TILE, ROWS), (out, a, height, width))
    print(f"transpose on {out.device}: {height}x{width} -> {out.shape[0]}x{out.shape[1]} "
          f"in {grid[0]}x{grid[1]} tiles of {TILE}x{TILE}, blocks of {TILE}x{ROWS} threads")
    return a, out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None,
                        help="where the arrays live (default: the default device)")
    main(parser.parse_args().device)
