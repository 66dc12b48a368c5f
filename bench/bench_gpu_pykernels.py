"""Kernels written in Python on the GPU: cudakit.cuda against numba-cuda (and
CuPy's RawKernel, PyTorch's x + 1) in one run (issue 14).

    python3 bench/bench_gpu_pykernels.py [--out bench/results/FILE.md]

  - first call of a new kernel: a module with a kernel never seen before (a
    unique constant), both libraries' disk caches in fresh empty folders;
    import of the module, first launch and a synchronize, the device already
    initialised; median of 7;
  - the same kernel in a new process, from the disk cache: a child process
    times its import of the module through the first launch and a
    synchronize (cudakit and the device already initialised); median of 5;
  - launch per call, two device arrays and a scalar (a Python int, an
    np.int32): 20,000 launches then a synchronize, best of 7, the libraries'
    rounds interleaved; numba-cuda's with its device arrays;
  - RawKernel launch with tuple grids and an np.int32, against CuPy's;
  - launch with two NumPy arrays (copied in and back by both);
  - add_one on 2^28 float32 in place: GB/s (read and write), against
    PyTorch's x += 1, median of 10 between events; cudakit's coarsened
    kernel (the default: a grid-stride loop over a wave of blocks, its
    vector path doing 4 floats a 16-byte load and store, the scalar loop
    asking L2 for the element two waves ahead), the same without those
    hints (CUDAKIT_PYK_PREFETCH=0), without the vector path
    (CUDAKIT_PYK_VECTOR=0: the scalar loop alone) and with coarsen=False
    (one index a thread).
The goals (issue 14): first call <= 150 ms, from the disk cache <= 10 ms,
launch <= 5 us either scalar, RawKernel <= 0.8x CuPy's, NumPy arrays <= 0.3x
numba-cuda's, add_one >= 0.95x PyTorch's bandwidth.
"""
import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings

_ck_cache = tempfile.mkdtemp(prefix="ck-bench-cache-")
_nb_cache = tempfile.mkdtemp(prefix="numba-bench-cache-")
os.environ["CUDAKIT_CACHE_DIR"] = _ck_cache
os.environ["NUMBA_CACHE_DIR"] = _nb_cache
_mods = tempfile.mkdtemp(prefix="pyk-bench-mods-")
sys.path.insert(0, _mods)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

if not hasattr(np, "row_stack"):    # numba-cuda 0.30 still names it; NumPy 2.5 removed it
    np.row_stack = np.vstack

import cudakit as ck  # noqa: E402
from _report import write_results  # noqa: E402
from bench_gpu import per_call_us_side_by_side  # noqa: E402

try:
    from numba import cuda as nbcuda
    from numba.core.errors import NumbaPerformanceWarning
    warnings.simplefilter("ignore", NumbaPerformanceWarning)
except Exception as e:      # noqa: BLE001  (an old numba fails in several ways on a new NumPy)
    print(f"numba-cuda not usable here ({type(e).__name__}: {e}): cudakit alone")
    nbcuda = None
try:
    import cupy as cp
except ImportError:
    cp = None
try:
    import torch
except ImportError:
    torch = None

ROWS = []
COLUMNS = ["cudakit", "numba-cuda", "cupy", "torch"]

KERNEL = '''
from {lib} import cuda


@cuda.jit{opts}
def axpy(x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = {c!r} * x[i] + y[i]
'''


def record(name, unit, values, higher=False):
    ROWS.append((name, unit, values, higher))
    txt = "  ".join(f"{k} {v:10.3f}" for k, v in values.items())
    print(f"{name:56s} [{unit}] {txt}", flush=True)


def sync_ck():
    ck.cuda.synchronize()


def sync_nb():
    nbcuda.synchronize()


def write_module(lib, c, opts=""):
    name = f"pyk_{lib.replace('.', '_')}_{uuid.uuid4().hex[:12]}"
    with open(os.path.join(_mods, name + ".py"), "w") as f:
        f.write(KERNEL.format(lib=lib, c=c, opts=opts))
    return name


def _first_call_ms(lib, x, y, n, sync):
    """Median of 7 imports of a module with a kernel never seen before, through its first launch."""
    ts = []
    for k in range(7):
        name = write_module(lib, 2.0 + k + np.random.random())
        sync()
        t0 = time.perf_counter()
        importlib.import_module(name).axpy[(n + 255) // 256, 256](x, y, n)
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def first_call():
    n = 1 << 16
    res = {"cudakit": _first_call_ms("cudakit", ck.ones(n, dtype=ck.float32), ck.ones(n, dtype=ck.float32), n,
                                     sync_ck)}
    if nbcuda is not None:
        xn, yn = nbcuda.to_device(np.ones(n, np.float32)), nbcuda.to_device(np.ones(n, np.float32))
        res["numba-cuda"] = _first_call_ms("numba", xn, yn, n, sync_nb)
    record("first call of a new kernel (compile + launch)", "ms", res)


CHILD = r'''
import sys, time
sys.path.insert(0, {mods!r})
import numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
{setup}
sync()
t0 = time.perf_counter()
import {name} as m
m.axpy[256, 256](x, y, 65536)
sync()
print(time.perf_counter() - t0)
'''

SETUP = {
    "cudakit": "import cudakit as ck\nck.set_default_device('cuda')\n"
               "x, y = ck.ones(65536, dtype=ck.float32), ck.ones(65536, dtype=ck.float32)\nsync = ck.cuda.synchronize",
    "numba": "from numba import cuda\nx, y = cuda.to_device(np.ones(65536, np.float32)), "
             "cuda.to_device(np.ones(65536, np.float32))\nsync = cuda.synchronize",
}


def from_disk_cache():
    res = {}
    for lib, col, opts in [("cudakit", "cudakit", ""), ("numba", "numba-cuda", "(cache=True)")]:
        if lib == "numba" and nbcuda is None:
            continue
        name = write_module(lib, 3.0 + np.random.random(), opts)
        ts = []
        for _ in range(6):      # the first fills the cache
            out = subprocess.run([sys.executable, "-c", CHILD.format(mods=_mods, setup=SETUP[lib], name=name)],
                                 capture_output=True, text=True, env=os.environ)
            if out.returncode != 0:
                print(f"{lib} child failed: {out.stderr[-2000:]}")
                break
            ts.append(float(out.stdout.split()[-1]))
        if len(ts) == 6:
            res[col] = statistics.median(ts[1:]) * 1e3
    record("same kernel, new process, from the disk cache", "ms", res)


def launches():
    n = 1024
    mod = importlib.import_module(write_module("cudakit", 2.0))
    x, y = ck.ones(n, dtype=ck.float32), ck.ones(n, dtype=ck.float32)
    k = mod.axpy
    for label, s in [("a Python int", n), ("an np.int32", np.int32(n))]:
        runs = {"cudakit": (lambda s=s: k[4, 256](x, y, s), sync_ck)}
        if nbcuda is not None:
            kn = importlib.import_module(write_module("numba", 2.0)).axpy
            xn, yn = nbcuda.to_device(np.ones(n, np.float32)), nbcuda.to_device(np.ones(n, np.float32))
            runs["numba-cuda"] = (lambda s=s: kn[4, 256](xn, yn, s), sync_nb)
        record(f"launch, 2 device arrays + {label}, per call", "us", per_call_us_side_by_side(runs))

    src = r'''extern "C" __global__ void axpy_raw(const float *x, float *y, int n)
    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i] + y[i]; }'''
    rk = ck.RawKernel(src, "axpy_raw")
    runs = {"cudakit": (lambda: rk((4,), (256,), (x, y, np.int32(n))), sync_ck)}
    if cp is not None:
        ckc = cp.RawKernel(src, "axpy_raw")
        xc, yc = cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32)
        runs["cupy"] = (lambda: ckc((4,), (256,), (xc, yc, np.int32(n))), lambda: cp.cuda.Device().synchronize())
    record("RawKernel, tuple grids + np.int32, per call", "us", per_call_us_side_by_side(runs))

    hx, hy = np.ones(n, np.float32), np.ones(n, np.float32)
    warnings.simplefilter("ignore")     # both warn that NumPy arrays are copied
    runs = {"cudakit": (lambda: k[4, 256](hx, hy, n), sync_ck)}
    if nbcuda is not None:
        runs["numba-cuda"] = (lambda: kn[4, 256](hx, hy, n), sync_nb)
    record("launch with 2 NumPy arrays (copies in and back), per call", "us",
           per_call_us_side_by_side(runs, calls=2000, warmup=20))


ADD_ONE = '''
from cudakit import cuda


def _add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


add_one = cuda.jit(_add_one)                        # coarsened: a grid-stride loop, a wave of blocks
add_one_nohint = cuda.jit(_add_one)                 # the same translated with CUDAKIT_PYK_PREFETCH=0
add_one_scalar = cuda.jit(_add_one)                 # the same translated with CUDAKIT_PYK_VECTOR=0
add_one_plain = cuda.jit(coarsen=False)(_add_one)   # one index a thread, n / 256 blocks
'''


def add_one_bandwidth():
    n = 1 << 28
    nbytes = 2 * 4 * n
    name = f"pyk_add_one_{uuid.uuid4().hex[:8]}"
    with open(os.path.join(_mods, name + ".py"), "w") as f:
        f.write(ADD_ONE)
    mod = importlib.import_module(name)
    res, nohint, plain, scalar = {}, {}, {}, {}
    x = ck.zeros(n, dtype=ck.float32)

    def timed(fn, new_event, elapsed, sync):
        fn()
        sync()
        out = []
        for _ in range(10):
            a, b = new_event(), new_event()
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(elapsed(a, b))
        return statistics.median(out)

    ms = timed(lambda: mod.add_one[n // 256, 256](x), ck.cuda.Event, lambda a, b: a.elapsed_time(b), sync_ck)
    assert float(x[7]) == 11.0 and float(x[n - 1]) == 11.0      # 1 + 10 calls
    res["cudakit"] = nbytes / ms / 1e6
    ms = timed(lambda: mod.add_one_plain[n // 256, 256](x), ck.cuda.Event, lambda a, b: a.elapsed_time(b), sync_ck)
    assert float(x[7]) == 22.0 and float(x[n - 1]) == 22.0
    plain["cudakit"] = nbytes / ms / 1e6
    os.environ["CUDAKIT_PYK_PREFETCH"] = "0"    # read when the first launch translates
    mod.add_one_nohint[n // 256, 256](x)
    del os.environ["CUDAKIT_PYK_PREFETCH"]
    ms = timed(lambda: mod.add_one_nohint[n // 256, 256](x), ck.cuda.Event, lambda a, b: a.elapsed_time(b), sync_ck)
    assert float(x[7]) == 34.0 and float(x[n - 1]) == 34.0
    nohint["cudakit"] = nbytes / ms / 1e6
    os.environ["CUDAKIT_PYK_VECTOR"] = "0"
    mod.add_one_scalar[n // 256, 256](x)
    del os.environ["CUDAKIT_PYK_VECTOR"]
    ms = timed(lambda: mod.add_one_scalar[n // 256, 256](x), ck.cuda.Event, lambda a, b: a.elapsed_time(b), sync_ck)
    assert float(x[7]) == 46.0 and float(x[n - 1]) == 46.0
    scalar["cudakit"] = nbytes / ms / 1e6
    del x
    if torch is not None:
        t = torch.zeros(n, dtype=torch.float32, device="cuda")
        ms = timed(lambda: t.add_(1), lambda: torch.cuda.Event(enable_timing=True), lambda a, b: a.elapsed_time(b),
                   torch.cuda.synchronize)
        res["torch"] = nohint["torch"] = plain["torch"] = scalar["torch"] = nbytes / ms / 1e6
        del t
    record("add_one on 2^28 float32, coarsened (torch: x += 1)", "GB/s", res, higher=True)
    record("add_one on 2^28 float32, coarsened, no L2 hints (torch: x += 1)", "GB/s", nohint, higher=True)
    record("add_one on 2^28 float32, coarsened, no vector path (torch: x += 1)", "GB/s", scalar, higher=True)
    record("add_one on 2^28 float32, coarsen=False (torch: x += 1)", "GB/s", plain, higher=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if not ck.cuda.is_available():
        print("no usable GPU: nothing to measure")
        return
    ck.set_default_device("cuda")
    ck.ones(1).sum()
    if nbcuda is not None:
        nbcuda.to_device(np.ones(1))
    first_call()
    from_disk_cache()
    launches()
    add_one_bandwidth()
    if args.out:
        machine = ck.cuda.get_device_properties(0)["name"]
        write_results(args.out, "Python kernels: cudakit.cuda vs numba-cuda", machine,
                      "python3 bench/bench_gpu_pykernels.py", COLUMNS, ROWS)


if __name__ == "__main__":
    main()
