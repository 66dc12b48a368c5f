"""The seed's MLP on the GPU: cudakit's training loops against PyTorch and JAX
in one run (issue 16).

    python3 bench/bench_gpu_mlp.py [--out bench/results/FILE.md] [--data DIR] [--accuracy] [--repeats 3]

One epoch of 60,000 samples at batch 64 (937 batches of 64, one of 32) with
the seed's model (Linear(784, 128), ReLU, Linear(128, 10), Softmax(dim=1),
CrossEntropyLoss, Adam at lr 1e-3), shuffled each epoch, float32; median of
--repeats epochs after a warm-up, between two synchronizations:

  - the seed's loop as written: PyTorch's DataLoader over CPU tensors and
    ``.to(device)`` a batch; cudakit's the same with ``ck`` for ``torch``;
  - the data on the GPU: PyTorch with fused Adam, indexing a device
    permutation; cudakit's DataLoader over device arrays (one on-device take
    an array a batch);
  - host arrays through cudakit's loader with ``device=`` (pinned buffers,
    copies on a side stream one batch ahead);
  - the step captured in a CUDA graph and replayed a batch (PyTorch's
    ``torch.cuda.CUDAGraph`` with capturable Adam; cudakit's
    ``ck.cuda.CUDAGraph`` with ``Adam(capturable=True)``);
  - JAX (when it imports): a jitted step, and the whole epoch in one ``jit``
    through ``lax.scan``; cudakit's whole epoch captured as one graph beside it.
With --accuracy: test accuracy after five epochs, cudakit and PyTorch: the
logits model (the fix: no Softmax) with the recipe of the goal (_mlp.RECIPE:
Adam at 2e-3 annealed by CosineAnnealingLR over the run's steps) for each of
--seeds and their mean; the logits model with the seed's constant Adam; the
seed's own softmax model as written.  The captured rows' models (capturable
Adam) report their test accuracy and their loss going down (a note).

The goals (issue 16): cudakit's seed loop at most 0.1x PyTorch's; the
captured step's epoch at most 1.0x JAX's lax.scan (0.030 s on 2026-12-01).
The images are Fashion-MNIST when this machine has them (--data DIR, or
$CUDAKIT_DATA), else random images of the same shapes (timings only).
"""
import os
import statistics
import sys
import time
import traceback

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # JAX must leave memory to the others
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cudakit as ck  # noqa: E402
from _mlp import (BATCH, RECIPE, RECIPE_LR, ck_accuracy, ck_device_loop, ck_graph_loops, ck_missing,  # noqa: E402
                  ck_seed_loop, load_data, parse_args, seed_epoch, timed)
from _report import write_results  # noqa: E402

try:
    import torch
except ImportError:
    torch = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

ROWS, NOTES = [], []
COLUMNS = ["pytorch", "jax", "cudakit", "ratio"]


def record(name, unit, values, higher=False, anchor=None):
    """A row; ratio = cudakit / the anchor column when both are there."""
    if anchor and "cudakit" in values and anchor in values:
        values["ratio"] = values["cudakit"] / values[anchor]
    ROWS.append((name, unit, values, higher))
    txt = "  ".join(f"{k} {v:9.4f}" for k, v in values.items())
    print(f"{name:72s} [{unit}] {txt}", flush=True)


def note(text):
    NOTES.append(text)
    print("  note:", text, flush=True)


def attempt(label, fn):
    """fn()'s result, or None with a note saying why it could not run."""
    try:
        return fn()
    except Exception as e:   # a failing library must not hide the others' figures
        note(f"{label}: {type(e).__name__}: {e}")
        traceback.print_exc()
        return None


# ------------------------------------------------------------------ PyTorch

def torch_model(kind, dev):
    layers = [torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)]
    if kind == "seed":
        layers.append(torch.nn.Softmax(dim=1))
    return torch.nn.Sequential(*layers).to(dev)


def torch_timed(epoch, epochs, warmup=True):
    return timed(epoch, torch.cuda.synchronize, epochs, 20 if warmup else 0)


def torch_seed_loop(x, y, epochs, kind="seed", warmup=True):
    """As the seed writes it."""
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch_model(kind, dev)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters())
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                                         batch_size=BATCH, shuffle=True)
    return torch_timed(seed_epoch(loader, model, criterion, optimizer, dev), epochs, warmup), model


def torch_device_loop(x, y, epochs, kind="seed", warmup=True, recipe=False, seed=0):
    """The data on the GPU, a device permutation, fused Adam; recipe=True:
    RECIPE (Adam at 2e-3, CosineAnnealingLR over the epochs' steps, stepped
    each batch)."""
    dev = torch.device("cuda")
    torch.manual_seed(seed)
    xd, yd = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    model = torch_model(kind, dev)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=RECIPE_LR if recipe else 1e-3, fused=True)
    n = len(y)
    scheduler = (torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * ((n + BATCH - 1) // BATCH))
                 if recipe else None)

    def epoch(limit=None):
        perm = torch.randperm(n, device=dev)
        for k, lo in enumerate(range(0, n, BATCH)):
            idx = perm[lo:lo + BATCH]
            optimizer.zero_grad()
            loss = criterion(model(xd[idx]), yd[idx])
            loss.backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            if limit and k + 1 >= limit:
                break

    return torch_timed(epoch, epochs, warmup), model


def torch_graph_loop(x, y, epochs, kind="seed"):
    """The step captured in a torch.cuda.CUDAGraph (PyTorch's recipe: warm-up
    on a side stream, capturable Adam, grads set to None before the capture),
    replayed a batch after copying the batch's indices into a static array;
    the last, smaller batch eagerly."""
    dev = torch.device("cuda")
    torch.manual_seed(0)
    xd, yd = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    model = torch_model(kind, dev)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), capturable=True)
    n, full = len(y), len(y) // BATCH
    static_idx = torch.zeros(BATCH, dtype=torch.int64, device=dev)

    def step(idx):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(xd[idx]), yd[idx])
        loss.backward()
        optimizer.step()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(static_idx)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(static_idx)

    def epoch(limit=None):
        perm = torch.randperm(n, device=dev)
        for k in range(full if not limit else min(limit, full)):
            static_idx.copy_(perm[k * BATCH:(k + 1) * BATCH])
            g.replay()
        if n % BATCH and not limit:
            step(perm[full * BATCH:])

    return torch_timed(epoch, epochs), model


# ------------------------------------------------------------------ JAX

def jax_model(kind="seed"):
    """JAX's model and training step: (state0, train_step), the state the
    parameters (PyTorch's uniform initialisation), Adam's moments and the
    step count, train_step(state, xd, yd, idx) one step on the rows idx of
    the device arrays xd, yd, with Adam written out as PyTorch's."""
    rng = np.random.default_rng(0)

    def uniform(shape, fan_in):
        b = 1 / np.sqrt(fan_in)
        return jnp.asarray(rng.uniform(-b, b, shape).astype(np.float32))

    params = (uniform((784, 128), 784), uniform((128,), 784), uniform((128, 10), 128), uniform((10,), 128))
    zeros = tuple(jnp.zeros_like(p) for p in params)
    state0 = (params, zeros, zeros, jnp.zeros((), jnp.float32))

    def loss_fn(p, xb, yb):
        w1, b1, w2, b2 = p
        z = jnp.maximum(xb @ w1 + b1, 0) @ w2 + b2
        out = jax.nn.softmax(z, axis=1) if kind == "seed" else z
        logp = jax.nn.log_softmax(out, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, yb[:, None], axis=1))

    def train_step(state, xd, yd, idx):
        p, m, v, t = state
        g = jax.grad(loss_fn)(p, xd[idx], yd[idx])
        t = t + 1
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        m = tuple(b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g))
        v = tuple(b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g))
        step_size = lr / (1 - b1 ** t)
        bc2 = jnp.sqrt(1 - b2 ** t)
        p = tuple(pi - step_size * mi / (jnp.sqrt(vi) / bc2 + eps) for pi, mi, vi in zip(p, m, v))
        return (p, m, v, t)

    return state0, train_step


def jax_loops(x, y, epochs, kind="seed"):
    """A jitted step (the batch's gather inside it), and the whole epoch
    (permutation, 937 steps in lax.scan, the last batch of 32) in one jit.
    Returns {"step": [s], "scan": [s]}."""
    from jax import lax

    state0, train_step = jax_model(kind)
    xd, yd = jax.device_put(x), jax.device_put(y.astype(np.int32))
    n, full = len(y), len(y) // BATCH
    step_jit = jax.jit(train_step)

    def step_epoch(state, xd, yd, key):
        perm = jax.random.permutation(key, n)
        for lo in range(0, n, BATCH):
            state = step_jit(state, xd, yd, perm[lo:lo + BATCH])
        return state

    @jax.jit
    def scan_epoch(state, xd, yd, key):
        perm = jax.random.permutation(key, n)
        state, _ = lax.scan(lambda s, k: (train_step(s, xd, yd, lax.dynamic_slice(perm, (k * BATCH,), (BATCH,))),
                                          None), state, jnp.arange(full))
        return train_step(state, xd, yd, perm[full * BATCH:])

    out = {}
    for name, fn in (("step", step_epoch), ("scan", scan_epoch)):
        key = jax.random.PRNGKey(0)
        state = fn(state0, xd, yd, key)          # warm-up: compiles
        jax.block_until_ready(state)
        ts = []
        for _ in range(epochs):
            key, sub = jax.random.split(key)
            t0 = time.perf_counter()
            state = fn(state, xd, yd, sub)
            jax.block_until_ready(state)
            ts.append(time.perf_counter() - t0)
        out[name] = ts
    return out


# ------------------------------------------------------------------ the run

def main():
    args = parse_args(__doc__)
    if not ck.cuda.is_available():
        sys.exit(f"no usable GPU: {ck.cuda.unavailable_reason()}")
    (xt, yt), (xs, ys), name = load_data(args.data, args.dataset)
    print(f"data: {name}; {len(yt)} training samples, batch {BATCH}", flush=True)
    if args.accuracy and name.startswith("random"):
        args.accuracy = False
        note("no accuracy without the dataset (--data DIR or $CUDAKIT_DATA)")
    med = statistics.median
    r = args.repeats
    missing = ck_missing()
    if missing:
        note(f"cudakit's rows: {missing}")
    if torch is None:
        note("PyTorch is not installed: its rows are empty")
    if jax is None:
        note("JAX is not installed: its rows are empty")

    def ck_row(label, fn):
        if missing:
            return None
        got = attempt(f"cudakit, {label}", fn)
        return None if got is None else med(got[0] if isinstance(got, tuple) else got)

    def side_by_side(label, torch_fn, ck_fn):
        """{library: median seconds} of PyTorch's and cudakit's versions of a loop."""
        v = {}
        if torch is not None:
            t = attempt(f"PyTorch, {label}", torch_fn)
            if t:
                v["pytorch"] = med(t)
        t = ck_row(label, ck_fn)
        if t is not None:
            v["cudakit"] = t
        return v

    record("one epoch, the seed's loop as written (DataLoader over CPU arrays, .to(device))", "s",
           side_by_side("the seed's loop", lambda: torch_seed_loop(xt, yt, r)[0],
                        lambda: ck_seed_loop("cuda", xt, yt, epochs=r)), anchor="pytorch")
    record("one epoch, the data on the GPU (PyTorch: fused Adam; cudakit: on-device gathers)", "s",
           side_by_side("data on the GPU", lambda: torch_device_loop(xt, yt, r)[0],
                        lambda: ck_device_loop("cuda", xt, yt, epochs=r)), anchor="pytorch")

    t = ck_row("staged host data", lambda: ck_device_loop("cuda", xt, yt, epochs=r, staged=True))
    record("one epoch, host arrays sent by cudakit's loader (device=: pinned, side stream)", "s",
           {} if t is None else {"cudakit": t})

    # captured steps
    v = {}
    if torch is not None:
        t = attempt("PyTorch, CUDA graph", lambda: torch_graph_loop(xt, yt, r)[0])
        if t:
            v["pytorch"] = med(t)
    graphs = None
    if not missing:
        graphs = attempt("cudakit, CUDA graph",
                         lambda: ck_graph_loops("cuda", xt, yt, epochs=r, test=None if name.startswith("random")
                                                else (xs, ys)))
        if isinstance(graphs, str):
            note(f"cudakit's captured step: {graphs}")
            graphs = None
        if graphs:
            v["cudakit"] = med(graphs["step"])
    record("one epoch, the step captured in a CUDA graph, replayed a batch", "s", v, anchor="pytorch")

    jx = attempt("JAX", lambda: jax_loops(xt, yt, r)) if jax is not None else None
    record("one epoch, JAX: a jitted step", "s", {} if not jx else {"jax": med(jx["step"])})
    v = {} if not jx else {"jax": med(jx["scan"])}
    if graphs:
        v["cudakit"] = med(graphs["epoch"])
    record("one epoch in one go (JAX: jit of lax.scan; cudakit: the epoch captured as one graph)", "s", v,
           anchor="jax")
    if graphs:
        (s0, s1), (e0, e1) = graphs["loss"]["step"], graphs["loss"]["epoch"]
        note(f"cudakit's captured rows train (Adam(capturable=True): the step count on the device, so each "
             f"replay takes the next step's bias corrections): mean training loss of the first 50 batches of "
             f"the first replayed epoch and of the last 50 of the last, {s0:.3f} -> {s1:.3f} (the step graph) "
             f"and {e0:.3f} -> {e1:.3f} (the epoch graph), the seed's model")
        acc = graphs.get("accuracy") or {}
        if acc:
            record(f"{name} test accuracy after the step graph's {r + 2} epochs, seed model", "%",
                   {"cudakit": 100 * acc["step"]}, higher=True)
            record(f"{name} test accuracy after the whole-epoch graph's {r + 1} epochs, seed model", "%",
                   {"cudakit": 100 * acc["epoch"]}, higher=True)

    if args.accuracy:
        def accuracies(kind, recipe, seed):
            v = {}
            if torch is not None:
                m = attempt("PyTorch accuracy",
                            lambda: torch_device_loop(xt, yt, 5, kind, warmup=False, recipe=recipe, seed=seed)[1])
                if m is not None:
                    with torch.no_grad():
                        pred = m(torch.from_numpy(xs).cuda()).argmax(1).cpu().numpy()
                    v["pytorch"] = 100 * float((pred == ys).mean())
            if not missing:
                got = attempt("cudakit accuracy",
                              lambda: ck_device_loop("cuda", xt, yt, kind=kind, epochs=5, warmup_steps=0,
                                                     seed=seed, recipe=recipe))
                if got is not None:
                    v["cudakit"] = 100 * ck_accuracy(got[1], xs, ys, "cuda")
            return v

        per_seed = []
        for seed in args.seeds:
            v = accuracies("logits", True, seed)
            per_seed.append(v)
            record(f"{name} test accuracy after 5 epochs, logits model, the recipe, seed {seed}", "%", v,
                   higher=True)
        if per_seed:
            record(f"{name} test accuracy after 5 epochs, logits model, the recipe, mean of {len(per_seed)} seeds",
                   "%", {k: statistics.mean(v[k] for v in per_seed) for k in ("pytorch", "cudakit")
                         if all(k in v for v in per_seed)}, higher=True)
        note(f"the recipe (the accuracy goal's rows): the seed's logits model, CrossEntropyLoss, batch 64, {RECIPE}; "
             "both libraries the same, each with its own initial weights and shuffles of the seed")
        record(f"{name} test accuracy after 5 epochs, logits model, the seed's Adam (lr 1e-3, constant)", "%",
               accuracies("logits", False, 0), higher=True)
        record(f"{name} test accuracy after 5 epochs, seed model (its Softmax, Adam lr 1e-3)", "%",
               accuracies("seed", False, 0), higher=True)

    if args.out:
        props = ck.cuda.get_device_properties(0)
        machine = (f"{props['name']}; torch {getattr(torch, '__version__', '-')}, jax "
                   f"{getattr(jax, '__version__', '-')}, NumPy {np.__version__}, cudakit {ck.__version__}; data: {name}")
        write_results(args.out, "The seed's MLP on the GPU: cudakit vs PyTorch and JAX", machine,
                      "python3 bench/bench_gpu_mlp.py" + (" --accuracy" if args.accuracy else "")
                      + (f" --seeds {','.join(map(str, args.seeds))}" if args.accuracy else ""), COLUMNS, ROWS)
        if NOTES:
            with open(args.out, "a") as f:
                f.write("\nNotes:\n" + "".join(f"- {n}\n" for n in NOTES))
        print("wrote", args.out)


if __name__ == "__main__":
    main()
