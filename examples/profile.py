"""A profile of a small pipeline: what ran, for how long, on which device.

A batch of signals is normalised, scaled by a user kernel written in Python,
filtered with a CUDA C kernel, reduced and brought back to the host, each step
a record_function range.  The profile prints PyTorch's table and writes a
Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing: a row
per host thread, and on a GPU a row per stream with each kernel's device time).

    python examples/profile.py --device cpu [--trace profile_trace.json]
"""
import argparse
import os
import tempfile

import numpy as np

import cudakit as ck
from cudakit import cuda

CLIP = r'''extern "C" __global__ void clip(float *x, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = fminf(fmaxf(x[i], lo), hi);
}'''


@cuda.jit
def scale(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = a * x[i]


def pipeline(host, clip, device):
    with ck.profiler.record_function("load"):
        x = ck.asarray(host, device=device)
    with ck.profiler.record_function("normalise"):
        x = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-6)
    with ck.profiler.record_function("kernels"):
        flat = x.reshape(-1)
        n = flat.size
        scale[(n + 255) // 256, 256](flat, np.float32(0.5))
        clip(((n + 255) // 256,), (256,), (flat, np.float32(-1), np.float32(1), np.int32(n)))
    with ck.profiler.record_function("reduce"):
        energy = (x * x).sum(axis=1)
        result = ck.asnumpy(energy)
    return x, result


def main(device=None, rows=64, cols=4096, trace=None, steps=3):
    rng = np.random.default_rng(0)
    host = rng.standard_normal((rows, cols)).astype(np.float32) * 3 + 1
    clip = ck.RawKernel(CLIP, "clip")
    pipeline(host, clip, device)                # compile the kernels outside the profile
    with ck.profiler.profile() as prof:
        for _ in range(steps):
            with ck.profiler.record_function("step"):
                x, result = pipeline(host, clip, device)
    trace = trace or os.path.join(tempfile.gettempdir(), "cudakit_profile_trace.json")
    prof.export_chrome_trace(trace)
    return host, x, result, prof, trace


def reference(host):
    x = host.astype(np.float64)
    x = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-6)
    x = np.clip(0.5 * x, -1, 1)
    return x, (x * x).sum(axis=1)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default=None, help="cpu or cuda (default: cudakit's default device)")
    p.add_argument("--trace", default=None, help="where the Chrome trace goes")
    args = p.parse_args()
    host, x, result, prof, trace = main(args.device, trace=args.trace)
    sort = "cuda_time_total" if x.device.type == "cuda" else "cpu_time_total"
    print(prof.key_averages().table(sort_by=sort, row_limit=15))
    _, want = reference(host)
    print(f"pipeline of 3 steps on {x.device}: energies agree with NumPy: "
          f"{np.allclose(result, want, rtol=1e-3)}; trace written to {trace}")
