"""Asynchronous computation: a large array in pinned host memory, in chunks,
each copied in, computed (y = sqrt(x) * 2 + 1) and copied out, first all on
one stream, then spread over several streams so that one chunk's copy in,
another's kernels and a third's copy out run at the same time.

On a GPU the copies go through the DMA engines while the kernels run; the
times are the device's, between events.  On the CPU the same code runs
(streams there are host-ordered, so there is nothing to overlap) and the
times are host times.

    python examples/overlap.py --device cuda --mib 2048 --streams 4
"""
import argparse

import numpy as np

import cudakit as ck
from cudakit import cuda


def pipeline(pin_in, pin_out, chunk, nstreams, device):
    """Seconds for the whole array on nstreams streams, chunk by chunk."""
    n = pin_in.size
    streams = [cuda.Stream(device) for _ in range(nstreams)]
    # a pair of device buffers per stream, reused in that stream's order
    bufs = [(ck.empty(chunk, dtype=pin_in.dtype, device=device), ck.empty(chunk, dtype=pin_in.dtype, device=device))
            for _ in streams]
    start, end = cuda.Event(device), cuda.Event(device)
    null = cuda.Stream.null(device)
    start.record(null)
    for s in streams:
        s.wait_event(start)
    for k, lo in enumerate(range(0, n, chunk)):
        hi = min(lo + chunk, n)
        s = streams[k % nstreams]
        d, r = bufs[k % nstreams]
        d, r = d[:hi - lo], r[:hi - lo]
        d.set(pin_in[lo:hi], stream=s)                  # copy in, without waiting
        with s:                                         # the kernels, on the same stream
            ck.sqrt(d, out=r)
            ck.multiply(r, 2, out=r)
            ck.add(r, 1, out=r)
        r.copy_to_host(pin_out[lo:hi], stream=s)        # copy out, without waiting
    for s in streams:
        null.wait_event(s.record())
    end.record(null)
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def main(device=None, mib=64, chunk_mib=8, nstreams=3):
    device = device or ("cuda" if cuda.is_available() else "cpu")
    n = mib * (1 << 20) // 4
    chunk = chunk_mib * (1 << 20) // 4
    pin_in = cuda.pinned_empty(n, "float32")
    pin_out = cuda.pinned_empty(n, "float32")
    pin_in[...] = ck.arange(n, dtype=ck.float32, device="cpu") % 997
    pipeline(pin_in, pin_out, chunk, 1, device)         # warm-up: kernels compiled, memory pooled
    one = pipeline(pin_in, pin_out, chunk, 1, device)
    many = pipeline(pin_in, pin_out, chunk, nstreams, device)
    return one, many, pin_in, pin_out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--chunk-mib", type=int, default=8)
    ap.add_argument("--streams", type=int, default=3)
    args = ap.parse_args()
    one, many, pin_in, pin_out = main(args.device, args.mib, args.chunk_mib, args.streams)
    h = ck.asnumpy(pin_in)
    ok = np.allclose(ck.asnumpy(pin_out), np.sqrt(h) * 2 + 1, rtol=1e-6)
    dev = args.device or ("cuda" if cuda.is_available() else "cpu")
    print(f"{args.mib} MiB in {args.chunk_mib} MiB chunks on {dev}: one stream {one * 1e3:.1f} ms, "
          f"{args.streams} streams {many * 1e3:.1f} ms ({one / many:.2f}x); results {'right' if ok else 'WRONG'}")
