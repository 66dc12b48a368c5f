"""The first example of "Python with CUDA: getting started": Numba's add_one,
with `from cudakit import cuda` in place of `from numba import cuda`.

The kernel is Python; cudakit translates it (in C) to CUDA C for the GPU and to
C++ for the CPU, so the same script runs on a machine without a GPU.

    python examples/add_one.py --device cpu
"""
import argparse

import numpy as np

import cudakit as ck
from cudakit import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def main(device=None, n=1 << 20):
    host = np.arange(n, dtype=np.float32)
    x = ck.array(host, device=device)
    threads = 256
    blocks = (n + threads - 1) // threads
    add_one[blocks, threads](x)
    return host, x


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default=None, help="cpu or cuda (default: cudakit's default device)")
    args = p.parse_args()
    host, x = main(args.device)
    out = ck.asnumpy(x)
    print(f"add_one over {x.size} float32 on {x.device}: {out[:3]} ... {out[-1]}, "
          f"agree with NumPy: {np.array_equal(out, host + 1)}")
    (sig, cuda_c), = add_one.inspect_cuda().items()
    print(f"the CUDA C it became, for {sig[0]}:")
    print(cuda_c.split("translated from Python ----------------", 1)[-1].split("*/", 1)[-1].strip())
