"""JAX's whole-epoch scan (bench_gpu_mlp.py's jax_model, the logits model): the time a step of a
scan over 937 steps (and 2) and the compiled step's HLO, or, with --trace, the kernels of a scan as
run, with the gaps between them (CUPTI through torch.profiler; JAX under Nsight Compute crashed on
the H200, 2026-12-04):
    python3 bench/probe_jax_step.py
    python3 bench/probe_jax_step.py --trace
"""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gpu_mlp import BATCH, jax_model   # the bench's model and step (imports JAX)
import jax
import jax.numpy as jnp
from jax import lax

rng = np.random.default_rng(0)
state0, step_on = jax_model("logits")
xd = jax.device_put(rng.random((60000, 784), dtype=np.float32))
yd = jax.device_put(rng.integers(0, 10, 60000).astype(np.int32))


def train_step(state, idx):
    return step_on(state, xd, yd, idx)


def scan_of(steps):
    @jax.jit
    def run(state, key):
        perm = jax.random.permutation(key, 60000)
        state, _ = lax.scan(lambda s, k: (train_step(s, lax.dynamic_slice(perm, (k * BATCH,), (BATCH,))), None),
                            state, jnp.arange(steps))
        return state
    return run


key = jax.random.PRNGKey(0)
if "--trace" in sys.argv:   # kernel by kernel as run (bench/_timeline.py: CUPTI through torch.profiler)
    from _timeline import timeline
    for steps in (937, 3):
        run = scan_of(steps)
        st = [run(state0, key)]
        timeline(lambda: st.__setitem__(0, run(st[0], key)), lambda: jax.block_until_ready(st[0]),
                 f"jax scan of {steps} steps", reps=1, show=45)
else:
    for steps in (937, 2):
        run = scan_of(steps)
        st = run(state0, key)
        jax.block_until_ready(st)
        best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            st = run(st, key)
            jax.block_until_ready(st)
            best = min(best, time.perf_counter() - t0)
        print(f"jax scan of {steps} steps: {best * 1e3:.3f} ms, {best / steps * 1e6:.2f} us a step", flush=True)
    print(jax.jit(lambda s, i: train_step(s, i)).lower(state0, jnp.arange(BATCH)).compile().as_text()[:20000])
