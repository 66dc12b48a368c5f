"""GPU indexing benchmarks of cudakit against PyTorch and CuPy (issue 5):
fancy-index gather of 2^26 float32 elements, boolean-mask compaction of
2^26, nonzero of the same mask, and concatenate / stack of 8 pieces of
2^23 float32 each (one launch in cudakit), and x[mask] = 0 of 2^26 (one
in-place where kernel in cudakit, masked_fill_ in PyTorch).

    python3 bench/bench_gpu_index.py [--log2n 26] [--out bench/results/FILE.md]

Times are CUDA events around 20 calls after warm-up, median of 5 (the
helpers of bench_gpu.py); GB/s counts the bytes read and written once.
Each library runs the same operation on its own copy of the same data.  A
library that is missing is skipped.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu as bg  # noqa: E402  (its timing helpers, torch and cupy)
from bench_gpu import ck  # noqa: E402
from _report import write_results  # noqa: E402


def libraries(host_arrays):
    """{library: (tuple of its device arrays, time_ms)} for each library present."""
    out = {"cudakit": (tuple(ck.asarray(h, device="cuda") for h in host_arrays), bg.ck_time_ms)}
    if bg.torch is not None and bg.torch.cuda.is_available():
        out["torch"] = (tuple(bg.torch.from_numpy(h).cuda() for h in host_arrays), bg.torch_time_ms)
    if bg.cp is not None:
        out["cupy"] = (tuple(bg.cp.asarray(h) for h in host_arrays), bg.cupy_time_ms)
    return out


def bench(name, host_arrays, op, nbytes, check=None):
    ms, gbs = {}, {}
    for lib, (arrs, time_ms) in libraries(host_arrays).items():
        fn = op[lib] if isinstance(op, dict) else op
        if check is not None:
            check(lib, fn(*arrs))
        t = time_ms(lambda: fn(*arrs))
        ms[lib] = t
        gbs[lib] = nbytes / (t * 1e-3) / 1e9
    bg.record(name, "ms", ms, False)
    bg.record(name, "GB/s", gbs, True)


def to_host(lib, x):
    if lib == "cudakit":
        return ck.asnumpy(x)
    if lib == "torch":
        return x.cpu().numpy()
    return bg.cp.asnumpy(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n = 1 << args.log2n
    props = ck.cuda.get_device_properties(0)
    print("device:", props["name"], flush=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    idx = rng.integers(0, n, size=n, dtype=np.int64)
    mask = x > 0.0   # about half true
    kept = int(mask.sum())

    def same(want):
        def check(lib, got):
            np.testing.assert_array_equal(to_host(lib, got), want, err_msg=lib)
        return check

    bench(f"gather x[idx], 2^{args.log2n} float32, int64 idx", (x, idx), lambda a, i: a[i], n * (8 + 4 + 4),
          same(x[idx]))
    bench(f"compaction x[mask], 2^{args.log2n} float32", (x, mask), lambda a, m: a[m], n * (1 + 4) + kept * 4,
          same(x[mask]))
    nonzero = {"cudakit": lambda m: ck.nonzero(m)[0], "torch": lambda m: bg.torch.nonzero(m, as_tuple=True)[0],
               "cupy": lambda m: bg.cp.nonzero(m)[0]}
    bench(f"nonzero(mask), 2^{args.log2n} bool", (mask,), nonzero, n + kept * 8, same(np.nonzero(mask)[0]))

    def mask_fill(a, m):
        a[m] = 0.0
        return a

    zeroed = x.copy()
    zeroed[mask] = 0.0
    fill = {"cudakit": mask_fill, "torch": lambda a, m: a.masked_fill_(m, 0.0), "cupy": mask_fill}
    bench(f"x[mask] = 0, 2^{args.log2n} float32", (x, mask), fill, n * (1 + 4 + 4), same(zeroed))
    pieces = tuple(rng.standard_normal(n >> 3, dtype=np.float32) for _ in range(8))
    cat = {"cudakit": lambda *p: ck.concatenate(p), "torch": lambda *p: bg.torch.cat(p),
           "cupy": lambda *p: bg.cp.concatenate(p)}
    bench(f"concatenate 8 x 2^{args.log2n - 3} float32", pieces, cat, 2 * n * 4, same(np.concatenate(pieces)))
    stk = {"cudakit": lambda *p: ck.stack(p), "torch": lambda *p: bg.torch.stack(p), "cupy": lambda *p: bg.cp.stack(p)}
    bench(f"stack 8 x 2^{args.log2n - 3} float32", pieces, stk, 2 * n * 4, same(np.stack(pieces)))
    if args.out:
        cols = ["cudakit", "torch", "cupy"]
        write_results(args.out, "cudakit GPU indexing benchmarks", props["name"],
                      "python3 bench/bench_gpu_index.py", cols, bg.ROWS)


if __name__ == "__main__":
    main()
