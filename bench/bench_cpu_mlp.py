"""The seed's MLP on the CPU: cudakit's training loop against NumPy (issue 16).

    python bench/bench_cpu_mlp.py [--out bench/results/FILE.md] [--data DIR] [--accuracy] [--repeats 3]

  - one epoch of 60,000 samples at batch 64 (937 batches of 64, one of 32)
    with the seed's model (Linear(784, 128), ReLU, Linear(128, 10),
    Softmax(dim=1), CrossEntropyLoss, Adam at lr 1e-3), shuffled each epoch,
    float32: the NumPy implementation below (the anchor) and cudakit's seed
    loop as written (a DataLoader over CPU arrays, ``.to(device)`` a batch);
    the libraries' epochs interleaved, best and median of --repeats after a
    warm-up of 20 steps;
  - with --accuracy, test accuracy after five epochs, both libraries: the
    logits model (the fix: no Softmax) with the recipe of the goal
    (_mlp.RECIPE: Adam at 2e-3 annealed to 0 by a cosine over the run's
    steps, stepped each batch) for each of --seeds and their mean; the
    logits model with the seed's constant Adam at 1e-3; the seed's model.
The goal (issue 16): cudakit's epoch at most 1.0x NumPy's.

Both sides use NumPy's BLAS (cudakit's CPU matmul calls it); on a machine
shared with other work, OPENBLAS_NUM_THREADS=1 keeps OpenBLAS's threads
from spinning against the other processes (recorded in the results).

The images are Fashion-MNIST from this machine (cudakit.datasets finds
Debian's package; --data DIR for another folder, --dataset mnist); without
them, random images of the same shapes (the timings do not depend on the
values; --accuracy needs the real ones).
"""
import math
import os
import statistics
import sys
import time

os.environ.setdefault("CUDAKIT_DEVICE", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from _mlp import (BATCH, RECIPE, RECIPE_LR, ck_accuracy, ck_device_loop, ck_missing, ck_seed_loop,  # noqa: E402
                  cosine_lr, load_data, parse_args)
from _report import cpu_machine, write_results  # noqa: E402


# ------------------------------------------------------------------ the NumPy anchor

class NumpyMLP:
    """784-128-10 MLP, float32: forward, backward and Adam written out in
    NumPy.  softmax=True is the seed's model (a Softmax before the loss, so
    the cross-entropy is taken of the probabilities, as PyTorch's
    CrossEntropyLoss does with them); False, the logits model.  Weights are
    initialised as PyTorch's Linear does: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    def __init__(self, softmax, seed=0, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, cosine_steps=None):
        rng = np.random.default_rng(seed)

        def uniform(shape, fan_in):
            bound = 1 / math.sqrt(fan_in)
            return rng.uniform(-bound, bound, shape).astype(np.float32)

        self.softmax = softmax
        self.W1, self.b1 = uniform((784, 128), 784), uniform(128, 784)
        self.W2, self.b2 = uniform((128, 10), 128), uniform(10, 128)
        self.params = [self.W1, self.b1, self.W2, self.b2]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0
        self.lr, self.b1_, self.b2_, self.eps = lr, betas[0], betas[1], eps
        self.base_lr, self.cosine_steps = lr, cosine_steps    # the recipe: CosineAnnealingLR, stepped each batch

    @staticmethod
    def _log_softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def forward(self, x):
        h = x @ self.W1 + self.b1
        a = np.maximum(h, 0)
        z = a @ self.W2 + self.b2
        out = np.exp(self._log_softmax(z)) if self.softmax else z
        return h, a, z, out

    def step(self, x, y):
        """One training step on a batch; returns the loss."""
        n = len(y)
        h, a, z, out = self.forward(x)
        logp = self._log_softmax(out)                 # CrossEntropyLoss: log-softmax, then NLL
        loss = -logp[np.arange(n), y].mean()
        d_out = np.exp(logp)
        d_out[np.arange(n), y] -= 1
        d_out /= n
        if self.softmax:                              # back through the model's Softmax
            d_z = out * (d_out - (d_out * out).sum(axis=1, keepdims=True))
        else:
            d_z = d_out
        g_W2 = a.T @ d_z
        g_b2 = d_z.sum(axis=0)
        d_h = (d_z @ self.W2.T) * (h > 0)
        g_W1 = x.T @ d_h
        g_b1 = d_h.sum(axis=0)
        self.adam([g_W1, g_b1, g_W2, g_b2])
        return loss

    def adam(self, grads):
        """PyTorch's Adam (no weight decay), in place."""
        self.t += 1
        b1, b2 = self.b1_, self.b2_
        step_size = self.lr / (1 - b1 ** self.t)
        bc2_sqrt = math.sqrt(1 - b2 ** self.t)     # a Python float: np.sqrt would give float64, promoting the arrays
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * (g * g)
            p -= step_size * m / (np.sqrt(v) / bc2_sqrt + self.eps)
        if self.cosine_steps:
            self.lr = cosine_lr(self.base_lr, self.t, self.cosine_steps)

    def epoch(self, x, y, rng, limit=None):
        perm = rng.permutation(len(y))
        for k, lo in enumerate(range(0, len(y), BATCH)):
            idx = perm[lo:lo + BATCH]
            self.step(x[idx], y[idx])
            if limit is not None and k + 1 >= limit:
                break

    def accuracy(self, x, y):
        return float((self.forward(x)[3].argmax(axis=1) == y).mean())


def numpy_epochs(x, y, softmax, epochs, warmup_steps=20, seed=0, recipe=False):
    steps = epochs * ((len(y) + BATCH - 1) // BATCH)
    model = NumpyMLP(softmax, seed, lr=RECIPE_LR if recipe else 1e-3, cosine_steps=steps if recipe else None)
    rng = np.random.default_rng(seed)
    if warmup_steps:
        model.epoch(x, y, rng, limit=warmup_steps)
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.epoch(x, y, rng)
        times.append(time.perf_counter() - t0)
    return times, model


# ------------------------------------------------------------------ the run

def main():
    args = parse_args(__doc__)
    (xt, yt), (xs, ys), name = load_data(args.data, args.dataset)
    print(f"data: {name}; {len(yt)} training samples, batch {BATCH}", flush=True)
    if args.accuracy and name.startswith("random"):
        args.accuracy = False
        print("  note: no accuracy without the dataset (--data DIR or $CUDAKIT_DATA)", flush=True)
    missing = ck_missing()
    if missing:
        print(f"cudakit's rows: {missing}", flush=True)
    rows = []

    def row(figure, unit, values, higher=False):
        rows.append((figure, unit, values, higher))
        print(f"{figure:64s} [{unit}] " + "  ".join(f"{k} {v:9.3f}" for k, v in values.items()), flush=True)

    # the two libraries' epochs interleaved (the machine's load changes over a run); best and median
    np_model, np_rng = NumpyMLP(softmax=True), np.random.default_rng(0)
    np_model.epoch(xt, yt, np_rng, limit=20)
    epochs = {"numpy": lambda: np_model.epoch(xt, yt, np_rng)}
    if not missing:
        ck_epoch, _ = ck_seed_loop("cpu", xt, yt, kind="seed", untimed=True)
        ck_epoch(limit=20)
        epochs["cudakit"] = ck_epoch
    times = {k: [] for k in epochs}
    for _ in range(args.repeats):
        for k, fn in epochs.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    for how, pick in (("best", min), ("median", statistics.median)):
        values = {k: pick(v) for k, v in times.items()}
        if "cudakit" in values:
            values["ratio"] = values["cudakit"] / values["numpy"]
        row(f"one epoch, the seed's model (60,000 samples, batch 64, Adam), {how} of {args.repeats}", "s", values)

    notes = []
    if args.accuracy:
        def accuracies(kind, recipe, seed):
            _, m = numpy_epochs(xt, yt, softmax=kind == "seed", epochs=5, warmup_steps=0, seed=seed, recipe=recipe)
            values = {"numpy": 100 * m.accuracy(xs, ys)}
            if not missing:
                if recipe:    # the data as CPU arrays: the seed's loop and this one are the same on the CPU
                    _, model = ck_device_loop("cpu", xt, yt, kind=kind, epochs=5, warmup_steps=0, seed=seed,
                                              recipe=True)
                else:
                    _, model = ck_seed_loop("cpu", xt, yt, kind=kind, epochs=5, warmup_steps=0, seed=seed)
                values["cudakit"] = 100 * ck_accuracy(model, xs, ys, "cpu")
            return values

        per_seed = []
        for seed in args.seeds:
            per_seed.append(accuracies("logits", True, seed))
            row(f"{name} test accuracy after 5 epochs, logits model, the recipe, seed {seed}", "%", per_seed[-1],
                higher=True)
        if per_seed:
            row(f"{name} test accuracy after 5 epochs, logits model, the recipe, mean of {len(per_seed)} seeds", "%",
                {k: statistics.mean(v[k] for v in per_seed) for k in ("numpy", "cudakit")
                 if all(k in v for v in per_seed)}, higher=True)
        notes.append(f"The recipe (the accuracy goal's rows): the seed's logits model, CrossEntropyLoss, batch 64, "
                     f"{RECIPE}; NumPy's Adam takes the same rates. Each library draws its own initial weights and "
                     "shuffles from the seed.")
        row(f"{name} test accuracy after 5 epochs, logits model, the seed's Adam (lr 1e-3, constant)", "%",
            accuracies("logits", False, 0), higher=True)
        row(f"{name} test accuracy after 5 epochs, seed model (its Softmax, Adam lr 1e-3)", "%",
            accuracies("seed", False, 0), higher=True)

    if args.out:
        command = "python bench/bench_cpu_mlp.py" + (f" --accuracy --seeds {','.join(map(str, args.seeds))}"
                                                     if args.accuracy else "")
        title = "The seed's MLP on the CPU: cudakit vs NumPy" + (f" ({missing})" if missing else "")
        threads = os.environ.get("OPENBLAS_NUM_THREADS")
        machine = cpu_machine(np, ck) + (f"; OPENBLAS_NUM_THREADS={threads}" if threads else "") + f"; data: {name}"
        if threads:
            command = f"OPENBLAS_NUM_THREADS={threads} " + command
        write_results(args.out, title, machine, command,
                      ["numpy", "cudakit", "ratio"], rows)
        if notes:
            with open(args.out, "a") as f:
                f.write("\nNotes:\n" + "".join(f"- {n}\n" for n in notes))
        print("wrote", args.out)

if __name__ == "__main__":
    main()
