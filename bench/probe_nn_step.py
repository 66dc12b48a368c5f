"""Where one training step of the seed's MLP goes (batch 64, data already
on the device): zero_grad, forward, loss, backward and the optimizer step
timed apart (each synchronised), the whole step, and the same with
PyTorch where it imports.  The issue's goal is an epoch at most 0.1x
PyTorch's seed loop, about 230 us a step on the H200.

    python bench/probe_nn_step.py [cpu|cuda] [--steps N]
"""
import argparse
import time
import warnings

import numpy as np

import cudakit as ck


def _sync(device):
    if device != "cpu":
        ck.cuda.synchronize()


def _best(fn, device, n, repeats=5):
    fn()
    _sync(device)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        _sync(device)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def cudakit_parts(device, n, softmax=True):
    layers = [ck.nn.Linear(784, 128), ck.nn.ReLU(), ck.nn.Linear(128, 10)] + ([ck.nn.Softmax(dim=1)] if softmax else [])
    model = ck.nn.Sequential(*layers).to(device)
    crit = ck.nn.CrossEntropyLoss()
    opt = ck.optim.Adam(model.parameters())
    rng = np.random.default_rng(0)
    x = ck.asarray(rng.random((64, 784), dtype=np.float32), device=device)
    y = ck.asarray(rng.integers(0, 10, 64), device=device)
    warnings.simplefilter("ignore")

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    out = model(x)
    loss = crit(out, y)
    parts = {
        "zero_grad": _best(opt.zero_grad, device, n),
        "forward": _best(lambda: model(x), device, n),
        "loss": _best(lambda: crit(out, y), device, n),
        "forward+loss+backward": _best(lambda: crit(model(x), y).backward(), device, n),
        "optimizer.step": None,
        "step": _best(step, device, n),
    }
    loss.backward()
    parts["optimizer.step"] = _best(opt.step, device, n)
    return parts


def torch_step(device, n):
    try:
        import torch
    except ImportError:
        return None
    dev = torch.device("cuda" if device != "cpu" else "cpu")
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10),
                                torch.nn.Softmax(dim=1)).to(dev)
    crit = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters())
    x = torch.rand(64, 784, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    step()
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("device", nargs="?", default="cuda" if ck.cuda.is_available() else "cpu")
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    for softmax in (True, False):
        print(f"cudakit on {a.device}, the seed's model{'' if softmax else ' without the final Softmax'}:")
        for k, v in cudakit_parts(a.device, a.steps, softmax).items():
            print(f"  {k:24s} {v * 1e6:9.1f} us")
    t = torch_step(a.device, a.steps)
    if t is not None:
        print(f"PyTorch on {a.device}, the same step (data on the device): {t * 1e6:.1f} us")


if __name__ == "__main__":
    main()
