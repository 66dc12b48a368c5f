"""Kernels written in Python on the CPU target, against NumPy, in one run (issue 14).

    python bench/bench_cpu_pykernels.py [--out bench/results/FILE.md]

  - add_one over 10^7 float32 (`x[i] += 1`, one thread an element, 256 a
    block) against NumPy's `x + 1` and `x += 1`: median of 15 after a warm-up;
  - the block reduction with `syncthreads` over 10^6 float32 (one element a
    thread, 256 a block, a tree in shared memory: 3,907 blocks), as a Python
    kernel and as the same CUDA C kernel, against NumPy's `x.sum()`: median of 15;
  - a launch of a small Python kernel with two arrays and a scalar (a Python
    int, an np.int32): best of 7 loops of 20,000.
The goals (issue 14): add_one at least 0.5x NumPy's speed, the block reduction
at most 38 ms (20x faster than the 0.76 s of 2026-12-01).
"""
import argparse
import os
import sys

os.environ.setdefault("CUDAKIT_DEVICE", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from cudakit import cuda  # noqa: E402
from _report import cpu_machine, median_time, per_call, write_results  # noqa: E402

TPB = 256


# the kernels the tests check on both devices
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from _pyk_kernels import block_sum  # noqa: E402
from _pyk_literature import add_one  # noqa: E402


BLOCK_SUM_C = r"""
extern "C" __global__ void block_sum_c(const float *x, float *partial, int n)
{
    __shared__ float buf[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buf[0];
}
"""


@cuda.jit
def axpy(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = 2.0 * x[i] + y[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows = []

    def row(name, unit, ck_v, np_v):
        ratio = ck_v / np_v if np_v else float("nan")
        rows.append((name, unit, {"cudakit": ck_v, "numpy": np_v, "ratio": ratio}, False))
        print(f"{name:60s} [{unit}] cudakit {ck_v:9.3f}  numpy {np_v:9.3f}  ratio {ratio:.2f}", flush=True)

    n = 10 ** 7
    h = np.zeros(n, dtype=np.float32)
    x = ck.asarray(h.copy())
    grid = (n + TPB - 1) // TPB
    t_ck = median_time(lambda: add_one[grid, TPB](x)) * 1e3
    assert float(x[12345]) > 1 and float(x[0]) == float(x[n - 1])
    row("add_one, 10^7 float32 (numpy: x + 1)", "ms", t_ck, median_time(lambda: h + 1) * 1e3)
    row("add_one, 10^7 float32 (numpy: x += 1)", "ms", t_ck, median_time(lambda: np.add(h, 1, out=h)) * 1e3)

    m = 10 ** 6
    hv = (np.arange(m) % 13).astype(np.float32)
    xv = ck.asarray(hv)
    blocks = (m + TPB - 1) // TPB
    partial = ck.zeros(blocks, dtype=ck.float32)
    t_py = median_time(lambda: block_sum[blocks, TPB](xv, partial)) * 1e3
    assert float(ck.asnumpy(partial).sum(dtype=np.float64)) == float(hv.sum(dtype=np.float64))
    t_np = median_time(lambda: hv.sum()) * 1e3
    row("block reduction with syncthreads, 10^6 float32, Python kernel", "ms", t_py, t_np)
    kc = ck.RawKernel(BLOCK_SUM_C, "block_sum_c")
    partial_c = ck.zeros(blocks, dtype=ck.float32)
    t_c = median_time(lambda: kc((blocks,), (TPB,), (xv, partial_c, m))) * 1e3
    assert np.array_equal(ck.asnumpy(partial_c), ck.asnumpy(partial))
    row("block reduction with __syncthreads, 10^6 float32, CUDA C", "ms", t_c, t_np)

    a, b = ck.ones(1024, dtype=ck.float32), ck.ones(1024, dtype=ck.float32)
    na, nb = np.ones(1024, np.float32), np.ones(1024, np.float32)
    t_np = per_call(lambda: np.add(na, nb, out=nb)) * 1e6
    row("launch, 2 arrays + a Python int (numpy: one add, out=)", "us", per_call(lambda: axpy[4, 256](a, b, 1024)) * 1e6, t_np)
    s32 = np.int32(1024)
    row("launch, 2 arrays + an np.int32 (numpy: one add, out=)", "us", per_call(lambda: axpy[4, 256](a, b, s32)) * 1e6, t_np)

    if args.out:
        write_results(args.out, "Python kernels on the CPU target", cpu_machine(np, ck),
                      "python bench/bench_cpu_pykernels.py (ratio = cudakit / NumPy time, below 1 is better for cudakit)",
                      ["cudakit", "numpy", "ratio"], rows)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
