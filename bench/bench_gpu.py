"""GPU benchmarks of cudakit against PyTorch and CuPy, side by side in one run.

    python3 bench/bench_gpu.py [--out bench/results/FILE.md]

Per-call figures: a Python loop of 20,000 calls then a synchronize, best of
7 rounds, the libraries' rounds interleaved (this host's launch cost drifts
by a quarter between runs: bench/probe_launch.cu).  Bandwidth figures: CUDA events around 20 calls after warm-up, median of
5; bytes counted as read + written.  Each library runs the same operation
on its own arrays of the same size.  A library that is missing is skipped.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

if not hasattr(np, "row_stack"):   # numba-cuda 0.30 still uses it (removed in NumPy 2.5)
    np.row_stack = np.vstack

import cudakit as ck  # noqa: E402
from _report import import_seconds, median_time, write_results  # noqa: E402

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy as cp
except ImportError:
    cp = None

ROWS = []


def record(name, unit, values, higher_is_better):
    ROWS.append((name, unit, values, higher_is_better))
    txt = "  ".join(f"{k} {v:10.2f}" for k, v in values.items())
    print(f"{name:44s} [{unit}] {txt}", flush=True)


def per_call_us(fn, sync, calls=20000, repeats=5):
    for _ in range(200):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def per_call_us_side_by_side(fns, calls=20000, repeats=7, warmup=200):
    """per_call_us for several libraries, their rounds interleaved so that
    all see the same state of a noisy host: best round of each."""
    for fn, sync in fns.values():
        for _ in range(warmup):
            fn()
        sync()
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, (fn, sync) in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - t0) / calls)
    return {name: t * 1e6 for name, t in best.items()}


def ck_sync():
    ck.cuda.synchronize()


def _event_time_ms(fn, new_event, elapsed_ms, sync, reps=20, repeats=5, warmup=1):
    """Median over repeats of the per-call time of reps calls between two
    events of the library itself, after warmup calls."""
    for _ in range(warmup):
        fn()
    sync()
    s, e = new_event(), new_event()
    out = []
    for _ in range(repeats):
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        out.append(elapsed_ms(s, e) / reps)
    return statistics.median(out)


def ck_time_ms(fn, reps=20, warmup=1, repeats=5):
    return _event_time_ms(fn, ck.cuda.Event, lambda s, e: s.elapsed_time(e), ck.cuda.synchronize, reps,
                          repeats, warmup)


def torch_time_ms(fn, reps=20, warmup=1, repeats=5):
    return _event_time_ms(fn, lambda: torch.cuda.Event(enable_timing=True), lambda s, e: s.elapsed_time(e),
                          torch.cuda.synchronize, reps, repeats, warmup)


def cupy_time_ms(fn, reps=20, warmup=1, repeats=5):
    return _event_time_ms(fn, cp.cuda.Event, cp.cuda.get_elapsed_time, lambda: cp.cuda.Device().synchronize(),
                          reps, repeats, warmup)


def import_ms(module, runs=7):
    return import_seconds(module, runs) * 1e3


def allocator_figures():
    """Per-call times of small ops, whose cost is mostly the allocation of
    the result: run once under each pool (CUDAKIT_ALLOCATOR)."""
    x = ck.arange(1000, dtype=ck.float32, device="cuda")
    return {"x + 1": per_call_us(lambda: x + 1, ck_sync),
            "x.sum()": per_call_us(lambda: x.sum(), ck_sync),
            "(x + 1) * 2 - x": per_call_us(lambda: (x + 1) * 2 - x, ck_sync),
            "empty(2^20)": per_call_us(lambda: ck.empty(1 << 20, dtype=ck.float32, device="cuda"), ck_sync)}


def compare_allocators():
    """Our size-class pool against the driver's (cuMemAllocAsync), each in
    its own process: the figures that decide the default (issue 3)."""
    res = {}
    for name in ("cudakit", "driver"):
        env = dict(os.environ, CUDAKIT_ALLOCATOR=name)
        out = subprocess.run([sys.executable, __file__, "--allocator-only"], env=env, check=True,
                             capture_output=True, text=True).stdout
        res[name] = json.loads(out.strip().splitlines()[-1])
    for op in res["cudakit"]:
        record(f"{op}, 1000 float32, per call, by pool", "us",
               {"cudakit pool": res["cudakit"][op], "driver pool (cuMemAllocAsync)": res["driver"][op]}, False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--allocator-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.allocator_only:
        print(json.dumps(allocator_figures()))
        return
    props = ck.cuda.get_device_properties(0)
    print("device:", props["name"], flush=True)

    vals = {"cudakit": import_ms("cudakit"), "numpy": import_ms("numpy")}
    if cp is not None:
        vals["cupy"] = import_ms("cupy")
    if torch is not None:
        vals["torch"] = import_ms("torch")
    record("import (process, ms)", "ms", vals, False)

    # per-call overhead, 1000 float32 (the libraries' rounds interleaved)
    x = ck.arange(1000, dtype=ck.float32, device="cuda")
    tx = torch.arange(1000, dtype=torch.float32, device="cuda") if torch is not None else None
    cx = cp.arange(1000, dtype=cp.float32) if cp is not None else None
    for label, op in (("x + 1", lambda a: a + 1), ("x + y", lambda a: a + a), ("x.sum()", lambda a: a.sum())):
        fns = {"cudakit": (lambda: op(x), ck_sync)}
        if torch is not None:
            fns["torch"] = (lambda: op(tx), torch.cuda.synchronize)
        if cp is not None:
            fns["cupy"] = (lambda: op(cx), cp.cuda.Device().synchronize)
        record(f"{label}, 1000 float32, per call", "us", per_call_us_side_by_side(fns), False)
    del x
    compare_allocators()

    # bandwidth, 2^28 float32
    n = 1 << 28
    a = ck.ones(n, dtype=ck.float32, device="cuda")
    b = ck.ones(n, dtype=ck.float32, device="cuda")
    gb = 3 * 4 * n / 1e9
    vals = {"cudakit": gb / ck_time_ms(lambda: a + b) * 1e3}
    if torch is not None:
        ta = torch.ones(n, dtype=torch.float32, device="cuda")
        tb = torch.ones(n, dtype=torch.float32, device="cuda")
        vals["torch"] = gb / torch_time_ms(lambda: ta + tb) * 1e3
    if cp is not None:
        ca = cp.ones(n, dtype=cp.float32)
        cb = cp.ones(n, dtype=cp.float32)
        vals["cupy"] = gb / cupy_time_ms(lambda: ca + cb) * 1e3
    record("add, 2^28 float32", "GB/s", vals, True)

    gb = 4 * n / 1e9
    vals = {"cudakit": gb / ck_time_ms(lambda: a.sum()) * 1e3}
    if torch is not None:
        vals["torch"] = gb / torch_time_ms(lambda: ta.sum()) * 1e3
    if cp is not None:
        vals["cupy"] = gb / cupy_time_ms(lambda: ca.sum()) * 1e3
    record("sum, 2^28 float32", "GB/s", vals, True)
    assert float(a.sum()) == float(n)

    gb = 2 * 4 * n / 1e9
    vals = {"cudakit": gb / ck_time_ms(lambda: a.copy()) * 1e3}
    if torch is not None:
        vals["torch"] = gb / torch_time_ms(lambda: ta.clone()) * 1e3
    if cp is not None:
        vals["cupy"] = gb / cupy_time_ms(lambda: ca.copy()) * 1e3
    record("device-to-device copy, 2^28 float32", "GB/s", vals, True)

    gb = 4 * 4 * n / 1e9   # a, b read; t written and read; out written (two kernels)
    vals = {"cudakit (2 kernels)": 3 * 4 * n / 1e9 / ck_time_ms(lambda: a * b + 1) * 1e3}
    if torch is not None:
        vals["torch (2 kernels)"] = 3 * 4 * n / 1e9 / torch_time_ms(lambda: ta * tb + 1) * 1e3
    if cp is not None:
        vals["cupy (2 kernels)"] = 3 * 4 * n / 1e9 / cupy_time_ms(lambda: ca * cb + 1) * 1e3
    record("a * b + 1, 2^28 float32 (one-pass bytes)", "GB/s", vals, True)
    del b
    if torch is not None:
        del tb
    if cp is not None:
        del cb

    m = a.reshape(16384, 16384)
    gb = 4 * n / 1e9
    for axis in (0, 1):
        vals = {"cudakit": gb / ck_time_ms(lambda: m.sum(axis=axis)) * 1e3}
        if torch is not None:
            tm = ta.reshape(16384, 16384)
            vals["torch"] = gb / torch_time_ms(lambda: tm.sum(dim=axis)) * 1e3
        if cp is not None:
            cm = ca.reshape(16384, 16384)
            vals["cupy"] = gb / cupy_time_ms(lambda: cm.sum(axis=axis)) * 1e3
        record(f"sum axis {axis}, 16384 x 16384 float32", "GB/s", vals, True)
    del m, a
    if torch is not None:
        del ta
    if cp is not None:
        del ca

    # host to device, 1 GiB pageable
    h = np.ones(1 << 28, dtype=np.float32)
    gb = h.nbytes / 1e9

    def h2d_ck():
        ck.asarray(h, device="cuda")
        ck.cuda.synchronize()

    def wall(fn):
        return median_time(fn, repeats=5)

    vals = {"cudakit": gb / wall(h2d_ck)}
    if torch is not None:
        vals["torch"] = gb / wall(lambda: (torch.from_numpy(h).to("cuda"), torch.cuda.synchronize()))
    if cp is not None:
        vals["cupy"] = gb / wall(lambda: (cp.asarray(h), cp.cuda.Device().synchronize()))
    record("host to device, 1 GiB pageable", "GB/s", vals, True)
    g = ck.asarray(h, device="cuda")
    vals = {"cudakit": gb / wall(lambda: ck.asnumpy(g))}
    if torch is not None:
        tg = torch.from_numpy(h).to("cuda")
        vals["torch"] = gb / wall(lambda: tg.cpu())
    if cp is not None:
        cg = cp.asarray(h)
        vals["cupy"] = gb / wall(lambda: cp.asnumpy(cg))
    record("device to host, 1 GiB", "GB/s", vals, True)

    if args.out:
        columns = []
        for _, _, values, _ in ROWS:
            columns += [k for k in values if k not in columns]
        write_results(args.out, "GPU benchmarks", f"{props['name']} ({props['multi_processor_count']} SMs); "
                      f"torch {getattr(torch, '__version__', '-')}, cupy {getattr(cp, '__version__', '-')}, "
                      f"numpy {np.__version__}", "make bench-gpu (python3 bench/bench_gpu.py)", columns, ROWS)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
