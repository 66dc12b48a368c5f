"""Autograd's costs (issue 16), on one device (--device, default the default):

- ``x + 1`` per call, 1000 float32 (the recording test on the hot path);
- the seed's MLP step, Linear(784, 128), ReLU, Linear(128, 10),
  cross-entropy (composed of ops here), backward and an Adam-style update
  under no_grad: time per step and the backend ops it runs (the profiler's
  count), forward and backward apart.

    python bench/bench_autograd.py [--device cpu|cuda] [--steps 200]
"""
import argparse
import time
import timeit

import numpy as np

import cudakit as ck


def per_call(f, number):
    return min(timeit.repeat(f, number=number, repeat=7)) / number


def adam_style_update(P, M, V, sqrt):
    """The step's update of each parameter from its gradient, in place (under
    no_grad): cudakit's arrays or PyTorch's tensors, with that library's sqrt."""
    for p, m, v in zip(P, M, V):
        g = p.grad
        m *= 0.9
        m += 0.1 * g
        v *= 0.999
        v += 0.001 * (g * g)
        p -= 1e-3 * m / (sqrt(v) + 1e-8)


def seconds_per_step(step, steps, sync):
    """Seconds a step takes, over `steps` after 5 warm-up steps, between two sync() calls."""
    for _ in range(5):
        step()
    sync()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return (time.perf_counter() - t) / steps


def mlp(device, steps, batch=64):
    rng = np.random.default_rng(0)
    shapes = [(128, 784), (128,), (10, 128), (10,)]
    P = [ck.asarray((rng.standard_normal(s) * 0.05).astype(np.float32), device=device, requires_grad=True)
         for s in shapes]
    M = [ck.zeros_like(p) for p in P]
    V = [ck.zeros_like(p) for p in P]
    x = ck.asarray(rng.standard_normal((batch, 784)).astype(np.float32), device=device)
    onehot = ck.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)], device=device)

    def forward():
        h = ck.maximum(x @ P[0].T + P[1], 0)
        logits = h @ P[2].T + P[3]
        m = logits.max(axis=1, keepdims=True).detach()
        lse = ck.log(ck.exp(logits - m).sum(axis=1, keepdims=True)) + m
        return -((logits - lse) * onehot).sum() * (1.0 / batch)

    def step():
        for p in P:
            p.grad = None
        loss = forward()
        loss.backward()
        with ck.no_grad():
            adam_style_update(P, M, V, ck.sqrt)
        return loss

    dt = seconds_per_step(step, steps, ck.cuda.synchronize if device != "cpu" else lambda: None)

    def count(f):
        with ck.profiler.profile() as prof:
            r = f()
        return sum(e.count for e in prof.key_averages()), r

    nf, loss = count(forward)
    nb, _ = count(lambda: loss.backward())
    return dt, nf, nb


def torch_mlp(device, steps, batch=64):
    """The same step in PyTorch (where it imports), for the side-by-side figure."""
    try:
        import torch
    except ImportError:
        return None
    dev = "cuda" if device.startswith("cuda") else "cpu"
    if dev == "cuda" and not torch.cuda.is_available():
        return None
    g = torch.Generator().manual_seed(0)
    P = [(torch.randn(s, generator=g) * 0.05).to(dev).requires_grad_() for s in [(128, 784), (128,), (10, 128), (10,)]]
    M = [torch.zeros_like(p) for p in P]
    V = [torch.zeros_like(p) for p in P]
    x = torch.randn(batch, 784, generator=g).to(dev)
    onehot = torch.nn.functional.one_hot(torch.randint(0, 10, (batch,), generator=g), 10).float().to(dev)

    def step():
        for p in P:
            p.grad = None
        h = torch.maximum(x @ P[0].T + P[1], torch.zeros((), device=dev))
        logits = h @ P[2].T + P[3]
        m = logits.max(dim=1, keepdim=True).values.detach()
        lse = torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True)) + m
        loss = -((logits - lse) * onehot).sum() * (1.0 / batch)
        loss.backward()
        with torch.no_grad():
            adam_style_update(P, M, V, torch.sqrt)

    return seconds_per_step(step, steps, torch.cuda.synchronize if dev == "cuda" else lambda: None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None)
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    dev = a.device or str(ck.get_default_device())
    x = ck.arange(1000, dtype=ck.float32, device=dev)
    print(f"device {dev}")
    print(f"x + 1 (1000 float32): {per_call(lambda: x + 1, 20000) * 1e9:.0f} ns per call")
    w = ck.ones(3, device=dev, requires_grad=True)   # an array requiring grad is alive: the gate is open
    print(f"x + 1 with an array requiring grad alive: {per_call(lambda: x + 1, 20000) * 1e9:.0f} ns per call")
    del w
    dt, nf, nb = mlp(dev, a.steps)
    print(f"MLP step (batch 64, 784-128-10, composed cross-entropy, Adam-style update): {dt * 1e6:.0f} us; "
          f"backend ops: forward {nf}, backward {nb}")
    tt = torch_mlp(dev, a.steps)
    if tt is not None:
        print(f"the same step in PyTorch: {tt * 1e6:.0f} us (cudakit / PyTorch = {dt / tt:.2f})")


if __name__ == "__main__":
    main()
