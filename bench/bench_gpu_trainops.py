"""GPU benchmarks of the training ops (issue 16) against PyTorch: softmax of
(4096, 1024) float32 rows, cross-entropy forward + backward of the MLP's
(64, 10) logits and of (4096, 1024), one Adam step over the seed MLP's four
parameters (784x128, 128, 128x10, 10: one launch in cudakit, PyTorch's
fused=True Adam), one over 200 tensors of 4096, and bias + relu after a
(64, 784) @ (784, 128) product.  Small cases are launch overhead (the
training step is made of them), large ones bandwidth.

    python3 bench/bench_gpu_trainops.py [--out bench/results/FILE.md]

Times are CUDA events around 20 calls after warm-up, median of 5 (the
helpers of bench_gpu.py).  Each library's result is checked against the
other's first.  A library that is missing is skipped.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_gpu as bg  # noqa: E402  (its timing helpers and torch)
from bench_gpu import ck  # noqa: E402
from _report import write_results  # noqa: E402

_core = ck._core
torch = bg.torch if bg.torch is not None and bg.torch.cuda.is_available() else None


def run(name, ck_fn, torch_fn, check=None):
    ms = {"cudakit": bg.ck_time_ms(ck_fn)}
    if torch is not None:
        if check is not None:
            check(ck_fn(), torch_fn())
        ms["torch"] = bg.torch_time_ms(torch_fn)
    bg.record(name, "us", {k: v * 1e3 for k, v in ms.items()}, False)


def close(rtol=1e-4, atol=1e-5):
    def check(a, b):
        a = a if isinstance(a, (tuple, list)) else (a,)
        b = b if isinstance(b, (tuple, list)) else (b,)
        for x, y in zip(a, b):
            np.testing.assert_allclose(ck.asnumpy(x), y.detach().cpu().numpy(), rtol=rtol, atol=atol)
    return check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    props = ck.cuda.get_device_properties(0)
    print("device:", props["name"], flush=True)
    rng = np.random.default_rng(0)
    F = torch.nn.functional if torch is not None else None

    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    cx = ck.asarray(x, device="cuda")
    tx = torch.from_numpy(x).cuda() if torch is not None else None
    run("softmax (4096, 1024) float32", lambda: _core.softmax(cx, 1), lambda: torch.softmax(tx, 1), close())

    for shape in [(64, 10), (4096, 1024)]:
        logits = rng.standard_normal(shape, dtype=np.float32)
        target = rng.integers(0, shape[1], shape[0])
        cl, ct = ck.asarray(logits, device="cuda"), ck.asarray(target, device="cuda")
        one = ck.asarray(np.float32(1.0), device="cuda")

        def ck_xent():
            loss, lse, total = _core.softmax_cross_entropy(cl, ct)
            return loss, _core.softmax_cross_entropy_backward(one, cl, ct, lse, total)

        if torch is not None:
            tl = torch.from_numpy(logits).cuda().requires_grad_()
            tt = torch.from_numpy(target).cuda()

            def torch_xent():
                tl.grad = None
                loss = F.cross_entropy(tl, tt)
                loss.backward()
                return loss, tl.grad
        else:
            torch_xent = None
        run(f"cross-entropy fwd+bwd {shape} float32", ck_xent, torch_xent, close())

    for label, shapes in [("Adam step, the MLP's 4 tensors (101,770)", [(784, 128), (128,), (128, 10), (10,)]),
                          ("Adam step, 200 tensors of 4096", [(4096,)] * 200)]:
        host = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
        grads = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
        cp = [ck.asarray(h, device="cuda") for h in host]
        cg = [ck.asarray(g, device="cuda") for g in grads]
        cm = [ck.zeros(s, dtype=np.float32, device="cuda") for s in shapes]
        cv = [ck.zeros(s, dtype=np.float32, device="cuda") for s in shapes]
        step = [0]

        def ck_adam():
            step[0] += 1
            _core._adam_step(cp, cg, cm, cv, step[0], lr=1e-3)

        if torch is not None:
            tp = [torch.from_numpy(h).cuda().requires_grad_() for h in host]
            for p, g in zip(tp, grads):
                p.grad = torch.from_numpy(g).cuda()
            opt = torch.optim.Adam(tp, lr=1e-3, fused=True)
            torch_adam = opt.step
        else:
            torch_adam = None
        run(label, ck_adam, torch_adam)

    a = rng.standard_normal((64, 784), dtype=np.float32)
    w = rng.standard_normal((784, 128), dtype=np.float32) * 0.05
    b = rng.standard_normal(128, dtype=np.float32)
    ca, cw, cb = (ck.asarray(v, device="cuda") for v in (a, w, b))

    def ck_linear_relu():
        return _core._bias_act(ck.matmul(ca, cw), cb, "relu")

    if torch is not None:
        ta, tw, tb = (torch.from_numpy(v).cuda() for v in (a, w, b))

        def torch_linear_relu():
            return torch.relu(torch.addmm(tb, ta, tw))
    else:
        torch_linear_relu = None
    run("(64, 784) @ (784, 128) + bias, relu", ck_linear_relu, torch_linear_relu, close(1e-3, 1e-3))
    if args.out:
        write_results(args.out, "cudakit GPU training-op benchmarks", props["name"],
                      "python3 bench/bench_gpu_trainops.py", ["cudakit", "torch"], bg.ROWS)


if __name__ == "__main__":
    main()
