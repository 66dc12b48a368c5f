"""The profiler on the GPU (issue 15): its device times against hand-placed
events, and what it costs the ops when it is off.

    python3 bench/bench_gpu_profiler.py [--out bench/results/FILE.md] [--before DIR]

  - a large kernel's device time, the profiler's against CUDA events placed
    by hand around the same call: y = x * 2 on 2^28 float32 (a built-in
    kernel) and a RawKernel scaling 2^28 float32 in place; median of 10
    calls each way, the ratio must lie within 5% of 1 (PyTorch's profiler
    on the same x * 2 beside it, when torch is here);
  - x + 1 on 1000 float32, per call (20,000 calls then a synchronize, best of
    7 rounds, rounds interleaved): never profiled, after profiles have come
    and gone (the plain backend tables back), and, for the record, with a
    profile on and with the sync debug mode on;
  - with --before DIR (a folder holding cudakit built from the branch
    point, e.g. `pip install --no-build-isolation --no-deps --target DIR
    <main checkout>`), the same x + 1 loop in a child process importing
    that cudakit, its rounds interleaved with ours: "before" against
    "off", which must agree within noise.
"""
import argparse
import os
import statistics
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from _report import write_results  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

ROWS = []
COLUMNS = ["events", "profiler", "ratio", "torch profiler", "before", "off", "after profiles", "profile on",
           "sync debug on"]

SCALE = r'''extern "C" __global__ void scale_big(float *x, float a, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] *= a;
}'''


def record(name, unit, values, higher=False):
    ROWS.append((name, unit, values, higher))
    txt = "  ".join(f"{k} {v:10.3f}" for k, v in values.items())
    print(f"{name:56s} [{unit}] {txt}", flush=True)


def events_us(fn, reps=10):
    """Median device time of one call of fn between two events."""
    fn()
    ck.cuda.synchronize()
    a, b = ck.cuda.Event(), ck.cuda.Event()
    out = []
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e3)
    return statistics.median(out)


def profiler_us(fn, pick, reps=10):
    """Median device time of the kernel records pick() selects, fn called reps times in a profile."""
    fn()
    ck.cuda.synchronize()
    with ck.profiler.profile() as prof:
        for _ in range(reps):
            fn()
    ts = [e.device_time for e in prof.events() if pick(e)]
    assert len(ts) == reps, [e for e in prof.events()]
    return statistics.median(ts)


def torch_profiler_us(n, reps=10):
    """PyTorch's own profiler on t * 2: its kernel's mean device time."""
    t = torch.ones(n, dtype=torch.float32, device="cuda")
    t * 2
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            t * 2
        torch.cuda.synchronize()
    ts = []
    for e in prof.events():
        dt = getattr(e, "device_type", None)
        if dt is not None and "CUDA" in str(dt) and "elementwise" in e.name.lower():
            ts.append(getattr(e, "device_time", None) or getattr(e, "cuda_time", 0.0))
    del t
    return statistics.median(ts) if ts else None


def large_kernels():
    n = 1 << 28
    x = ck.ones(n, dtype=ck.float32, device="cuda")
    ev = events_us(lambda: x * 2)
    pr = profiler_us(lambda: x * 2, lambda e: e.kind == "kernel" and e.device_time is not None)
    vals = {"events": ev, "profiler": pr, "ratio": pr / ev}
    if torch is not None:
        try:
            tp = torch_profiler_us(n)
            if tp:
                vals["torch profiler"] = tp
        except Exception as e:  # noqa: BLE001  (the profiler's API moves between PyTorch versions)
            print(f"torch profiler not measured: {type(e).__name__}: {e}")
    record("y = x * 2, 2^28 float32: device time of the kernel", "us", vals)
    ok1 = abs(pr / ev - 1) <= 0.05

    k = ck.RawKernel(SCALE, "scale_big")
    grid, block = (132 * 16,), (256,)
    args = (x, np.float32(1.0), np.int64(n))
    ev = events_us(lambda: k(grid, block, args))
    pr = profiler_us(lambda: k(grid, block, args), lambda e: e.name == "scale_big")
    record("RawKernel scaling 2^28 float32: device time", "us", {"events": ev, "profiler": pr, "ratio": pr / ev})
    ok2 = abs(pr / ev - 1) <= 0.05
    del x
    return ok1 and ok2


BEFORE_CHILD = r'''
import sys, time
import cudakit as ck
x = ck.arange(1000, dtype=ck.float32, device="cuda")
for _ in range(200):
    x + 1
ck.cuda.synchronize()
print("READY", flush=True)
for line in sys.stdin:
    calls = int(line)
    t0 = time.perf_counter()
    for _ in range(calls):
        x + 1
    ck.cuda.synchronize()
    print((time.perf_counter() - t0) / calls * 1e6, flush=True)
'''


def per_call_round(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    ck.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def x_plus_one(before_dir, calls=20000, rounds=7):
    x = ck.arange(1000, dtype=ck.float32, device="cuda")
    f = lambda: x + 1  # noqa: E731
    for _ in range(200):
        f()
    child = None
    if before_dir:
        env = dict(os.environ, PYTHONPATH=before_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
        child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(BEFORE_CHILD)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env, cwd="/")
        assert child.stdout.readline().strip() == "READY"
    best = {}

    def keep(k, v):
        best[k] = min(best.get(k, float("inf")), v)

    for r in range(rounds):
        keep("off", per_call_round(f, calls))          # never profiled before the first profile below
        if child:
            child.stdin.write(f"{calls}\n")
            child.stdin.flush()
            keep("before", float(child.stdout.readline()))
        with ck.profiler.profile():
            per = per_call_round(f, calls // 10)
        keep("profile on", per)
        keep("after profiles", per_call_round(f, calls))
        ck.cuda.set_sync_debug_mode("warn")
        try:
            keep("sync debug on", per_call_round(f, calls))
        finally:
            ck.cuda.set_sync_debug_mode("default")
    if child:
        child.stdin.close()
        child.wait()
    record("x + 1, 1000 float32, per call", "us", best)
    base = best.get("before", best["off"])
    return best["after profiles"] <= base * 1.05 and best["off"] <= base * 1.05


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--before", default=None, help="a folder with cudakit from the branch point (pip --target)")
    args = p.parse_args()
    if not ck.cuda.is_available():
        print("no usable GPU: nothing to measure")
        return
    ck.set_default_device("cuda")
    ck.ones(1).sum()
    ok_time = large_kernels()
    ok_off = x_plus_one(args.before)
    print(f"device times within 5% of events: {'yes' if ok_time else 'NO'}; "
          f"x + 1 unchanged with profiling off (5%): {'yes' if ok_off else 'NO'}")
    if args.out:
        machine = ck.cuda.get_device_properties(0)["name"]
        write_results(args.out, "The profiler: device times and cost when off", machine,
                      "python3 bench/bench_gpu_profiler.py" + (" --before DIR" if args.before else ""), COLUMNS,
                      ROWS)


if __name__ == "__main__":
    main()
