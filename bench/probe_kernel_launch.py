"""Per-launch time of a tiny user kernel (CUDA C and Python) on the CPU,
with bounds mode off and on: the cost of the launch path (argument checks and marshalling, the
launch itself), not of the kernel.  A diagnostic, not a comparison:

    python3 bench/probe_kernel_launch.py
"""
import numpy as np

import cudakit as ck
from cudakit import cuda
from bench_cpu import per_call

SRC = r'''
extern "C" __global__ void axpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
'''


@cuda.jit
def pyaxpy(x, y, a, n):
    i = cuda.grid(1)
    if i < n:
        y[i] += a * x[i]


def per_call_us(fn, calls=20000):
    return per_call(fn, calls) * 1e6


def main():
    k = ck.RawKernel(SRC, "axpy")
    x = ck.arange(32, dtype=ck.float32, device="cpu")
    y = ck.zeros(32, dtype=ck.float32, device="cpu")
    args = (x, y, 2.0, 32)
    args_np = (x, y, np.float32(2.0), np.int32(32))
    ew = ck.ElementwiseKernel("T x", "T y", "y = 2 * x", "twice")
    rows = {
        "RawKernel, 32 threads (Python scalars)": lambda: k(1, 32, args),
        "RawKernel, 32 threads (NumPy scalars)": lambda: k(1, 32, args_np),
        "ElementwiseKernel, 32 elements": lambda: ew(x, y),
        "cuda.jit kernel, 32 threads": lambda: pyaxpy[1, 32](x, y, 2.0, 32),
    }
    for bounds in (False, True):
        with ck.debug(bounds=bounds):
            for name, fn in rows.items():
                print(f"{name:44s} bounds {'on ' if bounds else 'off'} {per_call_us(fn, 5000 if bounds else 20000):8.2f} us",
                      flush=True)


if __name__ == "__main__":
    main()
