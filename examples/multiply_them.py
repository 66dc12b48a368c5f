"""PyCUDA's first example, "multiply them": dest[i] = a[i] * b[i] in CUDA C.

The same source runs on CUDA arrays (compiled by NVRTC) and on CPU arrays
(compiled by the C++ compiler, each block's threads run as fibers).  It is
launched twice: through ck.SourceModule with PyCUDA's call style, and through
ck.RawKernel with CuPy's.

    python examples/multiply_them.py --device cpu
"""
import argparse

import numpy as np

import cudakit as ck

SOURCE = r"""
__global__ void multiply_them(float *dest, const float *a, const float *b, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dest[i] = a[i] * b[i];
}
"""


def main(device=None, n=400):
    rng = np.random.default_rng(0)
    a = ck.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    b = ck.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    block = 128
    grid = (n + block - 1) // block

    # PyCUDA's way: SourceModule wraps the source in extern "C" { } and its
    # functions take the arguments, then block= and grid= as keywords;
    # NumPy arrays go in Out/In (PyCUDA's drv.Out/drv.In), copied to the
    # device of the call's cudakit arrays (here a's) and back.
    mod = ck.SourceModule(SOURCE)
    multiply_them = mod.get_function("multiply_them")
    dest1 = ck.zeros_like(a)
    multiply_them(dest1, a, b, np.int32(n), block=(block, 1, 1), grid=(grid, 1))
    dest_host = np.zeros(n, np.float32)
    multiply_them(ck.Out(dest_host), a, ck.In(ck.asnumpy(b)), np.int32(n), block=(block, 1, 1), grid=(grid, 1))
    assert (dest_host == ck.asnumpy(dest1)).all()

    # CuPy's way: RawKernel(code, name), then kernel(grid, block, args).
    kernel = ck.RawKernel('extern "C" ' + SOURCE.strip(), "multiply_them")
    dest2 = ck.zeros_like(a)
    kernel((grid,), (block,), (dest2, a, b, n))

    print(f"multiply_them on {dest1.device}: {n} products, "
          f"SourceModule and RawKernel agree: {bool((dest1 == dest2).all())}")
    return a, b, dest1, dest2


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None,
                        help="where the arrays live (default: the default device)")
    main(parser.parse_args().device)
