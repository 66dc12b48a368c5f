"""Would a small float32 GEMM of cudakit's own beat cuBLAS(Lt) on the seed
MLP's products?  A probe for issue 16, not a library feature.

The step graph of the seed's MLP (batch 64, 784 -> 128 -> 10) spends about
4 us in each of its 6 cuBLAS nodes, and about 1.5 us in each of cudakit's
own nodes (bench/results/2026-12-03-gpu-h200-notes.md).  This probe times
a plain tiled kernel for the MLP's 5 products, as a RawKernel:

  - forward:  X[64,784] W1^T (+ b1, relu), H[64,128] W2^T (+ b2);
  - backward: dY[64,10] W2, dY^T H, dH^T X.

The kernel (bench/probe_small_gemm.cuh, shared with probe_small_gemm.cu)
uses 32 x 32 output tiles, 256 threads, and a K tile of 32 in shared
memory.  Its A and B are read through strides, so transposes cost nothing.
With split-K (grid z > 1) each block writes its partial tile to a
workspace, and the last block of a tile adds the partials in order, so the
sums are the same at every run.  It then applies the bias and the relu, and
puts its tile's counter back to 0 for the next replay.

For each product:
  - the result is checked against NumPy's (float64) on every device;
  - on a GPU, the per-call time of a CUDA graph of 50 launches is timed
    against a graph of 50 of cudakit's products (cuBLASLt, through
    ck.nn.functional.linear and ck.matmul), for split-K 1 to 25.

RawKernel launches are ordinary launches, not dependent ones, so the
kernel's figures here leave out what programmatic dependent launch would
add (about 0.15 us a node, bench/probe_pdl.cu).

    python3 bench/probe_small_gemm.py [--device cuda|cpu] [--out bench/results/FILE.md]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from cudakit import cuda  # noqa: E402

SOURCE = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe_small_gemm.cuh")).read()

BATCH, D_IN, D_H, D_OUT = 64, 784, 128, 10


def products(rng):
    """The MLP's five products: (name, A, B, bias, relu), A and B as the
    NumPy arrays (views with the strides the step has) whose product is
    wanted."""
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    w1 = (rng.standard_normal((D_H, D_IN)) * 0.03).astype(np.float32)
    b1 = rng.standard_normal(D_H).astype(np.float32)
    h = np.maximum(x @ w1.T + b1, 0).astype(np.float32)
    w2 = (rng.standard_normal((D_OUT, D_H)) * 0.1).astype(np.float32)
    b2 = rng.standard_normal(D_OUT).astype(np.float32)
    dy = rng.standard_normal((BATCH, D_OUT)).astype(np.float32)
    dh = rng.standard_normal((BATCH, D_H)).astype(np.float32)
    return [
        ("X W1^T + b1, relu (64x784 . 784x128)", x, w1.T, b1, True),
        ("H W2^T + b2 (64x128 . 128x10)", h, w2.T, b2, False),
        ("dY W2 (64x10 . 10x128)", dy, w2, None, False),
        ("dY^T H (10x64 . 64x128)", dy.T, h, None, False),
        ("dH^T X (128x64 . 64x784)", dh.T, x, None, False),
    ]


def on(dev, a):
    """a's storage on dev, and the element strides of a over it (the
    transposed views keep the untransposed array's storage)."""
    base = a if a.base is None else a.base
    d = ck.asarray(np.ascontiguousarray(base), device=dev)
    st = [s // a.itemsize for s in a.strides]
    return d, st


class Gemm:
    def __init__(self, dev, kernel, a, b, bias, relu, split):
        self.M, self.K = a.shape
        self.N = b.shape[1]
        self.da, (self.sam, self.sak) = on(dev, a)
        self.db, (self.sbk, self.sbn) = on(dev, b)
        self.bias = ck.asarray(bias if bias is not None else np.zeros(1, np.float32), device=dev)
        self.has_bias, self.relu = int(bias is not None), int(relu)
        self.c = ck.empty((self.M, self.N), dtype=ck.float32, device=dev)
        self.kchunk = -(-self.K // split)
        self.kchunk = -(-self.kchunk // 32) * 32          # whole K tiles a split
        self.split = -(-self.K // self.kchunk)
        self.grid = (-(-self.N // 32), -(-self.M // 32), self.split)
        self.ws = ck.empty(max(1, self.split * self.M * self.N), dtype=ck.float32, device=dev)
        self.counters = ck.zeros(self.grid[0] * self.grid[1], dtype=ck.uint32, device=dev)
        self.k = kernel

    def __call__(self):
        self.k(self.grid, (256,), (self.da, self.db, self.c, self.bias, np.int32(self.has_bias), np.int32(self.relu),
                                   np.int32(self.M), np.int32(self.N), np.int32(self.K), np.int64(self.sam),
                                   np.int64(self.sak), np.int64(self.sbk), np.int64(self.sbn), np.int32(self.kchunk),
                                   self.ws, self.counters, np.int32(0)))
        return self.c


def library_call(dev, a, b, bias, relu):
    """The same product through cudakit's own ops (cuBLASLt on a GPU)."""
    da, db = ck.asarray(np.ascontiguousarray(a), device=dev), ck.asarray(np.ascontiguousarray(b), device=dev)
    if bias is not None:
        w = ck.asarray(np.ascontiguousarray(b.T), device=dev)
        bb = ck.asarray(bias, device=dev)
        f = ck.nn.functional.linear
        if relu:
            return lambda: ck.nn.functional.relu(f(da, w, bb))
        return lambda: f(da, w, bb)
    return lambda: ck.matmul(da, db)


def per_call_in_graph(dev, fn, calls=50, replays=200):
    fn()
    cuda.synchronize(dev)
    g = cuda.CUDAGraph(device=dev)
    with cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    cuda.synchronize(dev)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(replays):
            g.replay()
        cuda.synchronize(dev)
        best = min(best, (time.perf_counter() - t0) / (replays * calls))
    return best * 1e6, g.node_count / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if ck.cuda.is_available() else "cpu")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    dev = args.device
    kernel = ck.RawKernel(SOURCE, "sgemm_small")
    rng = np.random.default_rng(0)
    rows = []
    for name, a, b, bias, relu in products(rng):
        want = a.astype(np.float64) @ b.astype(np.float64)
        if bias is not None:
            want = want + bias
        if relu:
            want = np.maximum(want, 0)
        seen = set()
        for split in (1, 2, 4, 8, 16, 25):
            gm = Gemm(dev, kernel, a, b, bias, relu, split)
            if gm.split in seen:          # K too short for so many whole tiles
                continue
            seen.add(gm.split)
            for rep in range(2):          # twice: the counters must be back at 0
                got = ck.asnumpy(gm()).astype(np.float64)
                np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max(), err_msg=name)
            line = f"{name}, split-K {gm.split}: matches NumPy"
            if dev == "cuda":
                us, nodes = per_call_in_graph(dev, gm)
                line += f"; {us:.2f} us a call in a graph"
                rows.append((f"{name}: the probe's kernel, split-K {gm.split}, a call in a graph", "us",
                             {"cudakit": us}, False))
            print(line, flush=True)
        if dev == "cuda":
            lib = library_call(dev, a, b, bias, relu)
            np.testing.assert_allclose(ck.asnumpy(lib()).astype(np.float64), want, rtol=1e-4,
                                       atol=1e-4 * np.abs(want).max())
            us, nodes = per_call_in_graph(dev, lib)
            print(f"{name}, cudakit's product: {us:.2f} us a call in a graph, {nodes:g} nodes a call", flush=True)
            rows.append((f"{name}: cudakit's product (cuBLASLt), a call in a graph", "us", {"cudakit": us}, False))
    if args.out and rows:
        from _report import write_results
        write_results(args.out, "A small GEMM of cudakit's own against its cuBLASLt products (probe)",
                      cuda.get_device_properties(0)["name"], "python3 bench/probe_small_gemm.py", ["cudakit"], rows)


if __name__ == "__main__":
    main()
