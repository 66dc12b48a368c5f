"""User kernels on the GPU, cudakit against CuPy in one run (issue 6).

    python3 bench/bench_gpu_kernels.py [--out bench/results/FILE.md]

  - first compile of a new RawKernel: a unique source each time, both disk
    caches pointed at fresh empty folders, construction through the first
    launch and a synchronize (the device already initialised); median of 7;
  - ElementwiseKernel first call: a new kernel with a unique operation,
    construction through the first call and a synchronize; median of 7;
  - RawKernel launch per call (two arrays and an int): a loop of 20,000
    launches then a synchronize, best of 5;
  - fuse of a * b + 1 on 2^28 float32: one call then a synchronize after
    warm-up, median of 10.
The goal (issue 6): first compile and ElementwiseKernel first call <= 1.0x
CuPy's, launch <= 0.6x CuPy's, fuse <= 1.0x cupy.fuse's.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

_ck_cache = tempfile.mkdtemp(prefix="ck-bench-cache-")
_cp_cache = tempfile.mkdtemp(prefix="cupy-bench-cache-")
os.environ["CUDAKIT_CACHE_DIR"] = _ck_cache
os.environ["CUPY_CACHE_DIR"] = _cp_cache
os.environ.setdefault("CUPY_CACHE_SAVE_CUDA_SOURCE", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from _report import write_results  # noqa: E402
from bench_gpu import per_call_us_side_by_side  # noqa: E402

try:
    import cupy as cp
except ImportError:
    cp = None

ROWS = []

SRC = r'''
extern "C" __global__ void axpy_%s(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + y[i];
}
'''


def record(name, unit, values):
    ROWS.append((name, unit, values, False))
    txt = "  ".join(f"{k} {v:10.3f}" for k, v in values.items())
    ratio = ""
    if "cudakit" in values and "cupy" in values and values["cupy"] > 0:
        ratio = f"   ratio {values['cudakit'] / values['cupy']:.2f}"
    print(f"{name:48s} [{unit}] {txt}{ratio}", flush=True)


def sync_ck():
    ck.cuda.synchronize()


def sync_cp():
    cp.cuda.Device().synchronize()


def _median_ms(once, sync, runs=7):
    """Median wall time of once(k) for k in range(runs), each followed by a
    synchronize: once builds something new (a kernel) and runs it."""
    sync()
    ts = []
    for k in range(runs):
        t0 = time.perf_counter()
        once(k)
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def first_compile():
    n = 1 << 16
    x, y = ck.ones(n, dtype=ck.float32), ck.ones(n, dtype=ck.float32)

    def ck_once(_):
        tag = uuid.uuid4().hex[:12]
        ck.RawKernel(SRC % tag, "axpy_" + tag)((n + 255) // 256, 256, (x, y, n))

    res = {"cudakit": _median_ms(ck_once, sync_ck)}
    if cp is not None:
        xc, yc = cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32)

        def cp_once(_):
            tag = uuid.uuid4().hex[:12]
            cp.RawKernel(SRC % tag, "axpy_" + tag)(((n + 255) // 256,), (256,), (xc, yc, np.int32(n)))

        res["cupy"] = _median_ms(cp_once, sync_cp)
    record("RawKernel first compile + launch", "ms", res)


def elementwise_first_call():
    n = 1 << 16

    def once(lib, x):
        def run(k):
            c = 1.0 + k + np.random.random()   # a new kernel each time
            lib.ElementwiseKernel("T x", "T y", f"y = x * {c!r}f + 1", "ew_" + uuid.uuid4().hex[:8])(x)
        return run

    res = {"cudakit": _median_ms(once(ck, ck.ones(n, dtype=ck.float32)), sync_ck)}
    if cp is not None:
        res["cupy"] = _median_ms(once(cp, cp.ones(n, dtype=cp.float32)), sync_cp)
    record("ElementwiseKernel first call", "ms", res)


def per_call():
    """Per-call time of a RawKernel launch, the libraries' rounds interleaved
    (this host's launch cost drifts between runs) and best of 7."""
    n = 1024
    tag = "percall"
    k = ck.RawKernel(SRC % tag, "axpy_" + tag)
    x, y = ck.ones(n, dtype=ck.float32), ck.ones(n, dtype=ck.float32)
    runs = {"cudakit": (lambda: k(4, 256, (x, y, n)), sync_ck)}
    if cp is not None:
        kc = cp.RawKernel(SRC % tag, "axpy_" + tag)
        xc, yc = cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32)
        runs["cupy"] = (lambda: kc((4,), (256,), (xc, yc, n)), sync_cp)
    record("RawKernel launch, 2 arrays + int, per call", "us", per_call_us_side_by_side(runs, warmup=1))


def fuse_big():
    n = 1 << 28
    res = {}

    def run(f, a, b, sync):
        f(a, b)
        sync()
        ts = []
        for _ in range(10):
            t0 = time.perf_counter()
            f(a, b)
            sync()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1e3

    def mul_add(x, y):
        return x * y + 1

    a, b = ck.ones(n, dtype=ck.float32), ck.ones(n, dtype=ck.float32)
    f = ck.fuse(mul_add)
    r = f(a, b)
    assert float(ck.asnumpy(r[:4])[0]) == 2.0
    del r
    res["cudakit"] = run(f, a, b, sync_ck)
    del a, b
    if cp is not None:
        ac, bc = cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32)
        fc = cp.fuse(mul_add)   # (cupy.fuse cannot take a lambda: it names the kernel after it)
        res["cupy"] = run(fc, ac, bc, sync_cp)
        del ac, bc
    record("fuse a*b+1, 2^28 float32", "ms", res)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if not ck.cuda.is_available():
        print("no usable GPU: nothing to measure")
        return
    ck.set_default_device("cuda")
    first_compile()
    elementwise_first_call()
    per_call()
    fuse_big()
    if args.out:
        machine = ck.cuda.get_device_properties(0)["name"]
        write_results(args.out, "User kernels: cudakit vs CuPy", machine, "python3 bench/bench_gpu_kernels.py",
                      ["cudakit", "cupy"], ROWS)


if __name__ == "__main__":
    main()
