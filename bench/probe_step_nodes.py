"""The nodes of the seed MLP's captured training step (batch 64, Adam capturable): the graph's
node count, the replay time a step (one step a graph, and 200 steps captured in one graph, as the
epoch row of bench_gpu_mlp.py does), and, run under Nsight Compute, each kernel's duration:
    python3 bench/probe_step_nodes.py                        # times
    ncu --profile-from-start off --csv --metrics gpu__time_duration.sum \
        python3 bench/probe_step_nodes.py --ncu              # two replays of one step, kernel by kernel
"""
import ctypes, os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudakit as ck
from _mlp import ck_model, BATCH

NCU = "--ncu" in sys.argv
TRACE = "--trace" in sys.argv   # kernel by kernel as replayed (bench/_timeline.py: CUPTI through torch.profiler)
dev = "cuda"
rs = np.random.default_rng(0)
X = ck.asarray(rs.random((6400, 784), dtype=np.float32), device=dev)
Y = ck.asarray(rs.integers(0, 10, 6400), device=dev)


def build(kind, nsteps, part="step"):
    """part: "forward" (the loss only), "backward" (and its backward) or "step" (and Adam's step)."""
    ck.random.seed(0)
    model = ck_model(kind, dev)
    crit = ck.nn.CrossEntropyLoss()
    opt = ck.optim.Adam(model.parameters(), capturable=True)
    perm = ck.asarray(rs.permutation(6400), device=dev)

    def step(idx):
        opt.zero_grad(set_to_none=True)
        loss = crit(model(ck.take(X, idx, axis=0, mode="clip")), ck.take(Y, idx, axis=0, mode="clip"))
        if part != "forward":
            loss.backward()
        if part == "step":
            opt.step()
        return loss

    side = ck.cuda.Stream(dev)
    side.wait_stream(ck.cuda.current_stream(dev))
    with side:
        for _ in range(3):
            step(perm[:BATCH])
    side.synchronize()
    g = ck.cuda.CUDAGraph()
    with ck.cuda.graph(g):
        losses = [step(perm[(k % 100) * BATCH:(k % 100 + 1) * BATCH]) for k in range(nsteps)]
    return g, losses, model


def per_step(g, nsteps, reps):
    g.replay(); ck.cuda.synchronize()
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            g.replay()
        ck.cuda.synchronize()
        best = min(best, (time.perf_counter() - t) / (reps * nsteps))
    return best * 1e6


for kind in ("seed", "logits"):
    g1, l1, m1 = build(kind, 1)
    if NCU:
        cu = ctypes.CDLL("libcuda.so.1")
        g1.replay(); ck.cuda.synchronize()
        cu.cuProfilerStart()
        g1.replay(); ck.cuda.synchronize()
        cu.cuProfilerStop()
        print(f"## {kind}: profiled one replay", flush=True)
        continue
    if TRACE:
        from _timeline import timeline
        timeline(g1.replay, ck.cuda.synchronize, f"cudakit {kind}: one step a graph")
        gn, _, _ = build(kind, 200)
        timeline(gn.replay, ck.cuda.synchronize, f"cudakit {kind}: 200 steps a graph", reps=1, show=3 * g1.node_count)
        continue
    t1 = per_step(g1, 1, 500)
    gn, losses, mn = build(kind, 200)
    gn.replay(); ck.cuda.synchronize()
    first = ck.asnumpy(ck.stack(losses))
    tn = per_step(gn, 200, 5)
    last = ck.asnumpy(ck.stack(losses))
    print(f"{kind}: {g1.node_count} nodes a step; one step a graph {t1:.2f} us a step; "
          f"200 steps a graph {tn:.2f} us a step", flush=True)
    print(f"  one-step graph's loss {float(l1[0]):.4f} after {3 * 500 + 1} replays; 200-step graph's losses: "
          f"first replay {first[0]:.4f}..{first[-1]:.4f}, last replay {last[0]:.4f}..{last[-1]:.4f} "
          f"({int((~np.isfinite(last)).sum())} not finite); parameters' largest magnitude "
          f"{[round(float(abs(p).max()), 4) for p in mn.parameters()]}", flush=True)
    # where a step's time goes: the forward alone, then with its backward (200 steps a graph)
    for part in ("forward", "backward"):
        gp, _, mp = build(kind, 200, part)
        print(f"  {part} only: {gp.node_count // 200} nodes a step, {per_step(gp, 200, 5):.2f} us a step", flush=True)
        del gp
