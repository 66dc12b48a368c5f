"""Matrix products on the GPU: cudakit (cuBLAS) against PyTorch and CuPy.

    python3 bench/bench_gpu_blas.py [--n 8192] [--out bench/results/FILE.md]

Each library multiplies two n x n matrices of its own (float32 with full
float32 precision, float32 with TF32 allowed, float16 with float32
accumulation, float64) and a batch of small ones; the time is CUDA events
(each library's own) around `reps` calls after a warm-up, median of 5, and
the figure is TFLOP/s counted as 2 n^3 per product (8 n^3 for complex).
TF32 is switched on and off the same way in each library:
ck.cuda.matmul.allow_tf32, torch.backends.cuda.matmul.allow_tf32, and
CuPy's CUPY_TF32 (read at import, so CuPy's TF32 row runs in a subprocess).
A library that is missing is skipped.
"""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np

import cudakit as ck
from _report import write_results
# the libraries, the table and the event timing of every GPU bench
from bench_gpu import ROWS, ck_time_ms, cp, cupy_time_ms, record, torch, torch_time_ms


def tflops(flop, ms):
    return flop / (ms * 1e-3) / 1e12


def inputs(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape, dtype=np.float32)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape, dtype=np.float32)
    return a.astype(dtype)


def product(shape_a, shape_b, dtype, tf32, reps, label, flop, cupy_tf32=None, rounds=5):
    """TFLOP/s of each library: the median of rounds in which the libraries
    take turns, so that all see the same clocks (power-limited products
    slow down as the GPU heats)."""
    a, b = inputs(shape_a, dtype, 1), inputs(shape_b, dtype, 2)
    fns = {}
    ck.cuda.matmul.allow_tf32 = tf32
    x, y = ck.asarray(a, device="cuda"), ck.asarray(b, device="cuda")
    fns["cudakit"] = (ck_time_ms, lambda: x @ y)
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        tx, ty = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        fns["torch"] = (torch_time_ms, lambda: tx @ ty)
    if cp is not None and cupy_tf32 is None and not tf32:
        cx, cy = cp.asarray(a), cp.asarray(b)
        fns["cupy"] = (cupy_time_ms, lambda: cx @ cy)
    times = {k: [] for k in fns}
    for r in range(rounds):
        for k, (timer, fn) in fns.items():
            times[k].append(timer(fn, reps, warmup=1 if r == 0 else 0, repeats=1))
    vals = {k: tflops(flop, statistics.median(v)) for k, v in times.items()}
    if cp is not None and cupy_tf32 is not None:
        vals["cupy"] = cupy_tf32
    ck.cuda.matmul.allow_tf32 = False
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
    record(label, "TFLOP/s", vals, True)


def cupy_tf32_child(n, reps):
    """CuPy reads CUPY_TF32 at import: its TF32 figure comes from a child."""
    if cp is None:
        return None
    code = (f"import os, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import bench_gpu_blas as b; print(b._cupy_tf32_figure({n}, {reps}))")
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, CUPY_TF32="1"), capture_output=True,
                       text=True)
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(r.stderr, file=sys.stderr)
        return None


def _cupy_tf32_figure(n, reps):
    a, b = inputs((n, n), np.float32, 1), inputs((n, n), np.float32, 2)
    cx, cy = cp.asarray(a), cp.asarray(b)
    return tflops(2.0 * n ** 3, cupy_time_ms(lambda: cx @ cy, reps))


def check_once(n=512):
    """The products agree with NumPy's before anything is timed."""
    for dt, tol in (("float32", 1e-3), ("float16", 5e-2), ("float64", 1e-9), ("complex64", 1e-3)):
        a, b = inputs((n, n), dt, 3), inputs((n, n), dt, 4)
        got = ck.asnumpy(ck.asarray(a, device="cuda") @ ck.asarray(b, device="cuda"))
        want = a.astype(np.complex128 if dt.startswith("c") else np.float64) @ b.astype(
            np.complex128 if dt.startswith("c") else np.float64)
        err = np.abs(got - want).max() / np.abs(want).max()
        assert err < tol, (dt, err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n, reps = args.n, args.reps
    check_once()
    f = 2.0 * n ** 3
    product((n, n), (n, n), np.float32, False, reps, f"matmul {n}^3 float32 (no TF32)", f)
    product((n, n), (n, n), np.float32, True, reps, f"matmul {n}^3 float32, TF32 allowed", f,
            cupy_tf32=cupy_tf32_child(n, reps))
    product((n, n), (n, n), np.float16, False, reps, f"matmul {n}^3 float16 (float32 accumulate)", f)
    m = n // 2
    product((m, m), (m, m), np.float64, False, max(2, reps // 2), f"matmul {m}^3 float64", 2.0 * m ** 3)
    product((m, m), (m, m), np.complex64, False, max(2, reps // 2), f"matmul {m}^3 complex64", 8.0 * m ** 3)
    # a batch of small products through one strided-batched call, one operand broadcast
    product((512, 128, 128), (128, 128), np.float32, False, reps * 10, "matmul 512 x 128^3 float32, batch (bcast)",
            512 * 2.0 * 128 ** 3)
    props = ck.cuda.get_device_properties()
    machine = f"{props.get('name', 'GPU')}"
    if args.out:
        cols = ["cudakit"] + (["torch"] if torch is not None else []) + (["cupy"] if cp is not None else [])
        write_results(args.out, "GPU matrix products", machine, "python3 bench/bench_gpu_blas.py", cols, ROWS)


if __name__ == "__main__":
    main()
