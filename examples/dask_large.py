"""A statistic over an array larger than the machine's memory, with cudakit
arrays as Dask chunks.

    python examples/dask_large.py                      # 4x this machine's memory, cudakit chunks
    python examples/dask_large.py --size 2GB --backend numpy
    python examples/dask_large.py --workers 2 --device cuda

The array, n float32 uniform numbers, exists only chunk by chunk: each chunk
is generated on its worker, transformed (y = sin(x)^2 + log1p(x)), reduced
to a histogram of 64 bins, a sum and a count, and dropped.  The workers of a
LocalCluster (processes) each hold a few chunks at a time, whatever the
total size, and Dask's progress bar shows the chunks done.  It prints the
mean, the histogram's peak bin, the time and each worker's peak memory.
"""
import argparse
import os
import re
import resource
import sys
import time


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64GB, 512MB)")
    scale = {"": 1, "k": 2 ** 10, "m": 2 ** 20, "g": 2 ** 30, "t": 2 ** 40}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def machine_memory():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def peak_rss():
    """This process's peak resident memory in bytes (VmHWM, which _reset_peak clears)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def statistic(backend, n, chunk, seed=0):
    """The Dask graph: (histogram, sum, count) of y over n elements."""
    import dask
    import dask.array as da

    with dask.config.set({"array.backend": backend}):
        x = da.random.default_rng(seed).random(n, chunks=chunk, dtype="float32")
    y = da.sin(x) ** 2 + da.log1p(x)
    hist, _ = da.histogram(y, bins=64, range=(0.0, 2.0))
    return hist, y.sum(dtype="float64"), y.size


def run(backend, n, chunk, client, progress=True):
    import dask

    hist, total, count = statistic(backend, n, chunk)
    t0 = time.perf_counter()
    if client is not None:
        fut = client.compute([hist, total])
        if progress:
            from distributed import progress as dprogress

            dprogress(fut)
            print(file=sys.stderr)
        hist, total = client.gather(fut)
    else:
        from dask.diagnostics import ProgressBar

        with ProgressBar(minimum=1 if progress else 1e9):
            hist, total = dask.compute(hist, total)
    seconds = time.perf_counter() - t0
    import numpy as np

    hist = np.asarray(hist.get() if hasattr(hist, "get") else hist)
    return {"backend": backend, "n": n, "seconds": seconds, "mean": float(total) / count,
            "hist": hist}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=parse_size, default=None,
                   help="bytes of float32 data in all (default: 4x this machine's memory)")
    p.add_argument("--chunk", type=parse_size, default=parse_size("128MB"), help="bytes a chunk")
    p.add_argument("--backend", choices=["cudakit", "numpy", "both"], default="cudakit")
    p.add_argument("--workers", type=int, default=2, help="worker processes (0: threads in this process)")
    p.add_argument("--device", default="cpu", help="cudakit's device in the workers: cpu or cuda")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    size = args.size if args.size is not None else 4 * machine_memory()
    n = size // 4
    chunk = max(1, args.chunk // 4)
    print(f"{n:,} float32 ({size / 2**30:.1f} GiB; this machine has {machine_memory() / 2**30:.1f} GiB) "
          f"in chunks of {chunk:,}", file=sys.stderr)

    os.environ["CUDAKIT_DEVICE"] = args.device
    client = cluster = None
    if args.workers:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, env={"CUDAKIT_DEVICE": args.device})
        client = Client(cluster)
    backends = ["cudakit", "numpy"] if args.backend == "both" else [args.backend]
    results = []
    try:
        for b in backends:
            if client is not None:
                client.run(_reset_peak)
            r = run(b, n, chunk, client, progress=not args.no_progress)
            r["worker_peak_bytes"] = sorted(client.run(peak_rss).values()) if client is not None else [peak_rss()]
            results.append(r)
            peak = max(r["worker_peak_bytes"]) / 2**20
            print(f"{b:8s} mean {r['mean']:.6f}  peak bin {int(r['hist'].argmax())}  "
                  f"{r['seconds']:.2f} s  ({n / r['seconds'] / 1e9:.2f} G elements/s)  "
                  f"peak worker memory {peak:.0f} MiB")
    finally:
        if client is not None:
            client.close()
            cluster.close()
    return results


def _reset_peak():
    # Linux lets a process reset its high-water mark by writing 5 to clear_refs
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


if __name__ == "__main__":
    main()
