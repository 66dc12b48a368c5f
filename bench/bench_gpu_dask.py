"""Dask arrays with cudakit chunks against the same with CuPy chunks, in one
run on one GPU (issue 18).

    python3 bench/bench_gpu_dask.py [--out bench/results/FILE.md]
    python3 bench/bench_gpu_dask.py --device cpu --elements 1e8 --matmul 2048   # a quick run, NumPy chunks beside

  - a reduction over --elements float32 uniform numbers (default 4e10: 160 GB,
    more than the GPU's 141 GB), generated chunk by chunk (--chunk elements, 2^28:
    1 GiB) by Dask's backend (``dask.config.set({"array.backend": ...})``,
    ``da.random.default_rng(seed).random``) and summed in float64; nothing
    but a chunk or a few at a time is ever on the device.  Checked: the mean
    is 0.5 within 1e-4, the count exact.
  - a chunked matmul: two --matmul square float32 matrices in --matmul-chunk
    blocks, generated the same way, ``(a @ b).sum()``; checked against
    sum_k colsum(a)_k * rowsum(b)_k (computed by Dask too), relative 1e-3.
  Seconds of ``.compute()`` on Dask's threaded scheduler (--threads), best of
  --repeats after one untimed run; the same graph for each backend.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

np.row_stack = getattr(np, "row_stack", np.vstack)   # older CuPy/Numba code asks for it (NumPy 2.5 removed it)

from _report import write_results  # noqa: E402


def backends(device):
    """The Dask array backends to compare: cudakit's and the anchor's."""
    out = ["cudakit"]
    if device == "cpu":
        return out + ["numpy"]
    try:
        import cupy  # noqa: F401
        out.append("cupy")
    except Exception as e:   # noqa: BLE001
        print(f"CuPy not available ({type(e).__name__}: {e}): cudakit alone", flush=True)
    return out


def sync(backend):
    if backend == "cupy":
        import cupy
        cupy.cuda.Device().synchronize()
    elif backend == "cudakit":
        import cudakit as ck
        if ck.cuda.is_available():
            ck.cuda.synchronize()


def generated(backend, shape, chunks, seed):
    import dask
    import dask.array as da
    with dask.config.set({"array.backend": backend}):
        return da.random.default_rng(seed).random(shape, chunks=chunks, dtype="float32")


def to_float(v):
    """A 0-d result of any backend as a Python float."""
    if hasattr(v, "get"):
        v = v.get()
    import cudakit as ck
    if isinstance(v, ck.ndarray):
        v = ck.asnumpy(v)
    return float(np.asarray(v))


def timed(fn, backend, repeats):
    fn()
    sync(backend)
    best, value = None, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        sync(backend)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, value


def reduction(backend, n, chunk, threads, repeats):
    x = generated(backend, (n,), chunk, seed=1)
    total = x.sum(dtype="float64")
    t, s = timed(lambda: total.compute(scheduler="threads", num_workers=threads), backend, repeats)
    mean = to_float(s) / n
    assert abs(mean - 0.5) < 1e-4, f"{backend}: mean of uniform numbers {mean}"
    return t, mean


def matmul(backend, m, chunk, threads, repeats):
    a = generated(backend, (m, m), (chunk, chunk), seed=2)
    b = generated(backend, (m, m), (chunk, chunk), seed=3)
    total = (a @ b).sum(dtype="float64")
    t, s = timed(lambda: total.compute(scheduler="threads", num_workers=threads), backend, repeats)
    import dask
    ca, rb = dask.compute(a.sum(axis=0, dtype="float64"), b.sum(axis=1, dtype="float64"), scheduler="threads")
    cols = ca.get() if hasattr(ca, "get") else np.asarray(ca)
    rows = rb.get() if hasattr(rb, "get") else np.asarray(rb)
    import cudakit as ck
    if isinstance(cols, ck.ndarray):
        cols, rows = ck.asnumpy(cols), ck.asnumpy(rows)
    want = float(np.dot(cols, rows))
    got = to_float(s)
    assert abs(got - want) <= 1e-3 * abs(want), f"{backend}: sum(a @ b) {got} vs {want}"
    return t, got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--device", default="cuda", help="cuda (CuPy chunks beside), or cpu (NumPy chunks beside)")
    ap.add_argument("--elements", type=float, default=4e10)
    ap.add_argument("--chunk", type=float, default=2 ** 28)
    ap.add_argument("--matmul", type=int, default=16384)
    ap.add_argument("--matmul-chunk", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    os.environ["CUDAKIT_DEVICE"] = args.device
    import cudakit as ck
    import dask
    n, chunk = int(args.elements), int(args.chunk)
    names = backends(args.device)
    red, mm = {}, {}
    for be in names:
        red[be], mean = reduction(be, n, chunk, args.threads, args.repeats)
        print(f"reduction of {n:.3g} float32 ({n * 4 / 1e9:.0f} GB) in {chunk:.3g}-element chunks, {be}: "
              f"{red[be]:.3f} s ({n * 4 / red[be] / 1e9:.0f} GB/s generated and summed), mean {mean:.6f}", flush=True)
    for be in names:
        mm[be], _ = matmul(be, args.matmul, args.matmul_chunk, args.threads, args.repeats)
        flop = 2.0 * args.matmul ** 3
        print(f"matmul {args.matmul}^2 in {args.matmul_chunk}^2 blocks, {be}: {mm[be]:.3f} s "
              f"({flop / mm[be] / 1e12:.1f} TFLOP/s with generation)", flush=True)
    anchor = names[1] if len(names) > 1 else None
    if anchor:
        print(f"cudakit / {anchor} time: reduction {red['cudakit'] / red[anchor]:.3f}, "
              f"matmul {mm['cudakit'] / mm[anchor]:.3f} (goal <= 1)")
    if args.out:
        if args.device == "cpu":
            machine = "this machine's CPU"
        else:
            machine = ck.cuda.get_device_properties(0)["name"]
        machine += f"; dask {dask.__version__}, threaded scheduler, {args.threads} threads"
        label = {"cudakit": "cudakit", "cupy": "CuPy", "numpy": "NumPy"}
        cols = [label[b] for b in names]
        rows = [(f"sum of {n:.3g} float32 generated in {chunk:.3g}-element chunks", "s",
                 {label[b]: red[b] for b in names}, False),
                (f"(a @ b).sum(), {args.matmul}^2 float32 in {args.matmul_chunk}^2 blocks, generated", "s",
                 {label[b]: mm[b] for b in names}, False)]
        write_results(args.out, "Dask arrays of cudakit chunks against " + (label[anchor] if anchor else "none"),
                      machine, "python3 bench/bench_gpu_dask.py " + " ".join(sys.argv[1:]), cols, rows)


if __name__ == "__main__":
    main()
