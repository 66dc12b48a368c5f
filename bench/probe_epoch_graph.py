"""What one epoch captured as one graph costs beyond its steps (bench_gpu_mlp.py's epoch row, the
seed's model, 60,000 random images, batch 64, Adam capturable): each epoch row is a new
permutation (rng.permutation on the device, copied into the graph's index array) then one replay
of the 938-step graph.  Seconds, best of --repeats, each part between two waits: the permutation
and its copy alone, the replay alone, both (the bench's row); the replay a step of a 200-step
graph times 938; and, where JAX imports, JAX's jitted permutation of the same n:
    python3 bench/probe_epoch_graph.py [--device cuda] [--n 60000] [--repeats 5]
GPU only: on the CPU a graph cannot capture the products (NumPy's).  Written on 2026-12-04 after the
device time of that session was spent: not yet run on the H200.
"""
import argparse, os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudakit as ck
from _mlp import BATCH, ck_model

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--device", default="cuda")
ap.add_argument("--n", type=int, default=60000)
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()
dev, n = args.device, args.n
if ck.Device(dev).type == "cpu":
    sys.exit("probe_epoch_graph: the captured training step needs a GPU (a CPU graph cannot capture NumPy's products)")
rs = np.random.default_rng(0)
xd = ck.asarray(rs.random((n, 784), dtype=np.float32), device=dev)
yd = ck.asarray(rs.integers(0, 10, n), device=dev)
rng = ck.random.default_rng(0)


def sync():
    ck.cuda.synchronize()


def best(fn):
    fn(); sync()
    ts = []
    for _ in range(args.repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def captured(idx_of, steps):
    """A graph of `steps` training steps (the k-th on the rows idx_of(k)), its model and losses."""
    ck.random.seed(0)
    model = ck_model("seed", dev)
    crit = ck.nn.CrossEntropyLoss()
    opt = ck.optim.Adam(model.parameters(), capturable=True)

    def step(idx):
        opt.zero_grad(set_to_none=True)
        loss = crit(model(ck.take(xd, idx, axis=0, mode="clip")), ck.take(yd, idx, axis=0, mode="clip"))
        loss.backward()
        opt.step()
        return loss

    side = ck.cuda.Stream(dev)
    side.wait_stream(ck.cuda.current_stream(dev))
    with side:
        for _ in range(3):
            step(idx_of(0))
    side.synchronize()
    g = ck.cuda.CUDAGraph(device=dev)
    with ck.cuda.graph(g):
        losses = [step(idx_of(k)) for k in range(steps)]
    return g, losses


import warnings
warnings.filterwarnings("ignore", message="CrossEntropyLoss received rows")
perm_static = rng.permutation(n, device=dev)
ge, _ = captured(lambda k: perm_static[k * BATCH:(k + 1) * BATCH], (n + BATCH - 1) // BATCH)
steps = (n + BATCH - 1) // BATCH


def new_perm():
    perm_static[...] = rng.permutation(n, device=dev)


def both():
    new_perm()
    ge.replay()


t_perm, t_replay, t_both = best(new_perm), best(ge.replay), best(both)
g200, _ = captured(lambda k: perm_static[(k % 100) * BATCH:(k % 100 + 1) * BATCH], 200)
t200 = best(g200.replay) / 200
print(f"device {dev}, n {n}: {steps} steps, {ge.node_count} nodes")
print(f"  the permutation and its copy: {t_perm * 1e3:.3f} ms")
print(f"  the epoch graph's replay: {t_replay * 1e3:.3f} ms ({t_replay / steps * 1e6:.2f} us a step)")
print(f"  both (the bench's row): {t_both * 1e3:.3f} ms")
print(f"  a step of a 200-step graph x {steps}: {t200 * steps * 1e3:.3f} ms ({t200 * 1e6:.2f} us a step)")
try:
    import jax
    key = jax.random.PRNGKey(0)
    jperm = jax.jit(lambda k: jax.random.permutation(k, n))
    jax.block_until_ready(jperm(key))
    tj = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(jperm(key))
        tj.append(time.perf_counter() - t0)
    print(f"  JAX's jitted permutation of {n}: {min(tj) * 1e3:.3f} ms")
except ImportError:
    pass
