"""Where the per-call time of a small GPU op goes: the same op through
paths that skip one cost at a time.  A diagnostic, not a comparison:

    python3 bench/probe_overhead.py
"""
import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

import cudakit as ck  # noqa: E402
from bench_gpu import per_call_us, ck_sync  # noqa: E402


def main():
    x = ck.arange(1000, dtype=ck.float32, device="cuda")
    y = ck.empty_like(x)
    rows = {
        "x + 1": lambda: x + 1,
        "x + x": lambda: x + x,
        "ck.add(x, 1, out=y)": lambda: ck.add(x, 1, out=y),
        "ck.add(x, x, out=y)": lambda: ck.add(x, x, out=y),
        "x.sum()": lambda: x.sum(),
        "ck.empty(1000)": lambda: ck.empty(1000, dtype=ck.float32, device="cuda"),
        "x[1:] (a view)": lambda: x[1:],
        "y.fill(1) (one launch, no alloc)": lambda: y.fill(1),
    }
    for name, fn in rows.items():
        print(f"{name:40s} {per_call_us(fn, ck_sync, calls=20000):6.2f} us", flush=True)
    s = ck.cuda.Stream()
    with s:
        for name in ("x + 1", "ck.add(x, 1, out=y)"):
            print(f"{name + ' on a created stream':40s} {per_call_us(rows[name], s.synchronize):6.2f} us", flush=True)
    try:
        import torch
        tx = torch.arange(1000, dtype=torch.float32, device="cuda")
        ty = torch.empty_like(tx)
        print(f"{'torch x + 1':40s} {per_call_us(lambda: tx + 1, torch.cuda.synchronize):6.2f} us")
        print(f"{'torch.add(x, 1, out=y)':40s} {per_call_us(lambda: torch.add(tx, 1, out=ty), torch.cuda.synchronize):6.2f} us")
    except ImportError:
        pass


if __name__ == "__main__":
    main()


def cpu_side():
    """CPU cost alone: a burst short enough not to fill the launch queue,
    timed without waiting for the GPU."""
    import time
    x = ck.arange(1000, dtype=ck.float32, device="cuda")
    for n in (100, 300, 1000, 3000):
        ck.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x + 1
        t1 = time.perf_counter()
        ck.cuda.synchronize()
        t2 = time.perf_counter()
        print(f"x + 1 burst of {n:5d}: issue {(t1 - t0) / n * 1e6:5.2f} us/call, "
              f"until done {(t2 - t0) / n * 1e6:5.2f} us/call", flush=True)


if __name__ == "__main__":
    cpu_side()
