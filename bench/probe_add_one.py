"""Why add_one (one float32 a thread, in place) reaches less bandwidth than
PyTorch's x + 1 on 2^28 elements: registers of the translation, and the same
kernel written by hand in CUDA C, with and without __launch_bounds__.

    python3 bench/probe_add_one.py
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudakit as ck  # noqa: E402
from bench_cpu_pykernels import add_one  # noqa: E402  (the tests' kernel)

N = 1 << 28

HAND = r"""
extern "C" __global__ void %s(float *x, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""


def gbps(fn):
    fn()
    ck.cuda.synchronize()
    out = []
    for _ in range(10):
        a, b = ck.cuda.Event(), ck.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return 8 * N / statistics.median(out) / 1e6


def main():
    ck.set_default_device("cuda")
    x = ck.zeros(N, dtype=ck.float32)
    grid = N // 256
    print(f"Python kernel add_one: {gbps(lambda: add_one[grid, 256](x)):.0f} GB/s")
    (sig, src), = add_one.inspect_cuda(full=True).items()
    name = re.search(r"void (ck_pyk_kernel_\w+)\(", src).group(1)
    k = ck.RawKernel(src, name)
    print(f"its translation: {k.num_regs} registers; as a RawKernel: "
          f"{gbps(lambda: k((grid,), (256,), (x, N, 1))):.0f} GB/s")
    for tag, pre in [("hand", ""), ("hand_lb", "__launch_bounds__(256, 8) ")]:
        h = ck.RawKernel((HAND % tag).replace("__global__ void", "__global__ void " + pre), tag)
        print(f"{tag}: {h.num_regs} registers, {gbps(lambda: h((grid,), (256,), (x, N))):.0f} GB/s")
    try:
        import torch
        t = torch.zeros(N, dtype=torch.float32, device="cuda")
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        t.add_(1); torch.cuda.synchronize()
        ms = []
        for _ in range(10):
            ev[0].record(); t.add_(1); ev[1].record(); ev[1].synchronize(); ms.append(ev[0].elapsed_time(ev[1]))
        print(f"torch x.add_(1): {8 * N / statistics.median(ms) / 1e6:.0f} GB/s")
        for _ in range(10):
            ev[0].record(); t + 1; ev[1].record(); ev[1].synchronize(); ms.append(ev[0].elapsed_time(ev[1]))
        print(f"torch x + 1: {8 * N / statistics.median(ms[10:]) / 1e6:.0f} GB/s")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
