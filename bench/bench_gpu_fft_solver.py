"""cuFFT and cuSOLVER through cudakit against PyTorch and CuPy, side by side.

    python3 bench/bench_gpu_fft_solver.py [--out bench/results/FILE.md] [--quick]

Figures (milliseconds per call, lower is better): CUDA events of each
library around 10 calls after two warm-up calls, median of 5.
  - rfft of 2^26 float32 values (one 1-D transform)
  - rfft along the last axis of a 4096 x 4096 float32 array (a batch of 4096)
  - linalg.solve of a 4096 x 4096 float32 system with one right-hand side
    (cudakit's includes the host sync that its LinAlgError check needs)
Each result is first checked against NumPy (a sample of it), so a wrong
answer is not timed.  A library that is missing is skipped.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudakit as ck  # noqa: E402
from _report import write_results  # noqa: E402
from bench_gpu import ROWS, ck_time_ms, cp, cupy_time_ms, record, torch, torch_time_ms  # noqa: E402


# CUDA events, 10 calls per figure after two warm-up calls, median of 5
def ck_ms(fn):
    return ck_time_ms(fn, reps=10, warmup=2)


def torch_ms(fn):
    return torch_time_ms(fn, reps=10, warmup=2)


def cupy_ms(fn):
    return cupy_time_ms(fn, reps=10, warmup=2)


def bench_rfft(name, x_np, rows_checked):
    """x_np: float32 host data; rfft along the last axis."""
    x = ck.asarray(x_np, device="cuda")
    got = ck.asnumpy(ck.fft.rfft(x))
    want = np.fft.rfft(x_np[:rows_checked] if x_np.ndim == 2 else x_np)
    got = got[:rows_checked] if x_np.ndim == 2 else got
    scale = np.abs(want).max()
    err = np.abs(got - want).max() / scale
    assert got.dtype == np.complex64 and err < 1e-4, (got.dtype, err)
    vals = {"cudakit": ck_ms(lambda: ck.fft.rfft(x))}
    if torch is not None:
        xt = torch.from_numpy(x_np).cuda()
        vals["torch"] = torch_ms(lambda: torch.fft.rfft(xt))
    if cp is not None:
        xc = cp.asarray(x_np)
        vals["cupy"] = cupy_ms(lambda: cp.fft.rfft(xc))
    record(name, "ms", vals, False)


def bench_solve(n):
    rng = np.random.default_rng(0)
    a_np = (rng.standard_normal((n, n)) + n ** 0.5 * 4 * np.eye(n)).astype(np.float32)
    b_np = rng.standard_normal((n, 1)).astype(np.float32)
    a, b = ck.asarray(a_np, device="cuda"), ck.asarray(b_np, device="cuda")
    x = ck.asnumpy(ck.linalg.solve(a, b))
    resid = np.abs(a_np.astype(np.float64) @ x - b_np).max() / np.abs(b_np).max()
    assert x.dtype == np.float32 and resid < 1e-3, resid
    vals = {"cudakit": ck_ms(lambda: ck.linalg.solve(a, b))}
    if torch is not None:
        at, bt = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
        vals["torch"] = torch_ms(lambda: torch.linalg.solve(at, bt))
    if cp is not None:
        ac, bc = cp.asarray(a_np), cp.asarray(b_np)
        vals["cupy"] = cupy_ms(lambda: cp.linalg.solve(ac, bc))
    record(f"linalg.solve {n}x{n} float32, 1 rhs", "ms", vals, False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = ap.parse_args()
    if not ck.cuda.is_available():
        print("no usable CUDA device: nothing to measure")
        return
    rng = np.random.default_rng(1)
    big = 1 << (20 if args.quick else 26)
    side = 1024 if args.quick else 4096
    bench_rfft(f"rfft 1-D, {big} float32", rng.standard_normal(big).astype(np.float32), 0)
    bench_rfft(f"rfft last axis, {side}x{side} float32", rng.standard_normal((side, side)).astype(np.float32), 64)
    bench_solve(side)
    if args.out:
        cols = ["cudakit"] + (["torch"] if torch else []) + (["cupy"] if cp else [])
        write_results(args.out, "cuFFT / cuSOLVER: cudakit vs PyTorch and CuPy",
                      ck.cuda.Device(0).name,
                      "python3 bench/bench_gpu_fft_solver.py", cols, ROWS)


if __name__ == "__main__":
    main()
