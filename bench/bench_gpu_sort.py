"""GPU sorting, scan and random benchmarks (issue 5), side by side with
PyTorch and CuPy when they are installed; every figure is a median of CUDA
event timings of the library itself (bench_gpu.py's helpers).

    python3 bench/bench_gpu_sort.py [--out results/bench-gpu-sort.md]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu import ROWS, ck, cp, cupy_time_ms, ck_time_ms, record, torch, torch_time_ms  # noqa: E402
from _report import write_results  # noqa: E402


def _check(got, want, what):
    """A benchmark of wrong results is worth nothing: compare a sample."""
    g, w = np.asarray(got).ravel(), np.asarray(want).ravel()
    idx = np.linspace(0, g.size - 1, 4096).astype(np.int64)
    if not np.array_equal(g[idx], w[idx]):
        raise SystemExit(f"{what}: cudakit's result differs from the reference")


def bench(name, unit_elems, ck_fn, torch_fn=None, cupy_fn=None):
    """Record ms per call and G elements/s for each library present."""
    vals = {"cudakit": ck_time_ms(ck_fn)}
    if torch is not None and torch_fn is not None:
        vals["torch"] = torch_time_ms(torch_fn)
    if cp is not None and cupy_fn is not None:
        vals["cupy"] = cupy_time_ms(cupy_fn)
    record(name + " (ms)", "ms", vals, False)
    record(name + " (Gelem/s)", "Gelem/s", {k: unit_elems / v / 1e6 for k, v in vals.items()}, True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--small", action="store_true", help="sizes / 16, for a quick check")
    args = ap.parse_args()
    props = ck.cuda.get_device_properties(0)
    print("device:", props["name"], flush=True)
    div = 16 if args.small else 1
    rng = np.random.default_rng(0)

    # sort of 2^26 float32 and int64 keys
    n = (1 << 26) // div
    for dt in ("float32", "int64"):
        h = rng.random(n).astype(dt) if dt == "float32" else rng.integers(-2**62, 2**62, n, dtype=np.int64)
        x = ck.asarray(h, device="cuda")
        _check(ck.asnumpy(ck.sort(x)), np.sort(h), f"sort {dt}")
        tx = torch.as_tensor(h, device="cuda") if torch is not None else None
        cx = cp.asarray(h) if cp is not None else None
        bench(f"sort 2^26 {dt}" if div == 1 else f"sort {n} {dt}", n, lambda: ck.sort(x),
              (lambda: torch.sort(tx)) if tx is not None else None, (lambda: cp.sort(cx)) if cx is not None else None)

    # argsort along the last axis of a 4096 x 4096 float32 matrix
    r = 4096 // (4 if div > 1 else 1)
    h = rng.random((r, 4096)).astype(np.float32)
    m = ck.asarray(h, device="cuda")
    _check(ck.asnumpy(ck.argsort(m, axis=-1)), np.argsort(h, axis=-1, kind="stable"), "argsort rows")
    tm = torch.as_tensor(h, device="cuda") if torch is not None else None
    cm = cp.asarray(h) if cp is not None else None
    bench(f"argsort last axis {r}x4096 float32", r * 4096, lambda: ck.argsort(m, axis=-1),
          (lambda: torch.argsort(tm, dim=-1)) if tm is not None else None,
          (lambda: cp.argsort(cm, axis=-1)) if cm is not None else None)

    # cumsum of 2^28 float32
    n = (1 << 28) // div
    x = ck.ones((n,), dtype=ck.float32, device="cuda")
    tx = torch.ones(n, dtype=torch.float32, device="cuda") if torch is not None else None
    cx = cp.ones(n, dtype=cp.float32) if cp is not None else None
    bench("cumsum 2^28 float32" if div == 1 else f"cumsum {n} float32", n, lambda: ck.cumsum(x),
          (lambda: torch.cumsum(tx, 0)) if tx is not None else None, (lambda: cp.cumsum(cx)) if cx is not None else None)

    # random of 2^28 float32
    g = ck.random.default_rng(0)
    cpu32 = ck.asnumpy(ck.random.default_rng(1).random(1 << 20, dtype=np.float32, device="cpu"))
    _check(ck.asnumpy(ck.random.default_rng(1).random(1 << 20, dtype=np.float32, device="cuda")), cpu32, "random")
    bench("random 2^28 float32" if div == 1 else f"random {n} float32", n,
          lambda: g.random(n, dtype=np.float32, device="cuda"),
          (lambda: torch.rand(n, device="cuda")) if torch is not None else None,
          (lambda: cp.random.random(n, dtype=cp.float32)) if cp is not None else None)

    if args.out:
        columns = []
        for _, _, values, _ in ROWS:
            columns += [k for k in values if k not in columns]
        write_results(args.out, "GPU sort, scan and random benchmarks",
                      f"{props['name']} ({props['multi_processor_count']} SMs); torch "
                      f"{getattr(torch, '__version__', '-')}, cupy {getattr(cp, '__version__', '-')}",
                      "python3 bench/bench_gpu_sort.py", columns, ROWS)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
