"""Where a training batch of the seed model (and of the logits model) goes on the GPU: the step on one
fixed batch, over the DataLoader of device arrays, the loader alone, and the step over batches gathered
beforehand; wall, host-issue and device (event) time a step; then the profiler's table of 100 looped
steps (bench/results/2026-12-03d-gpu-h200-notes.md).  python3 bench/probe_seed_step.py [cuda|cpu]"""
import sys, os, time, itertools
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudakit as ck
from cudakit.utils.data import DataLoader, TensorDataset
from _mlp import ck_model
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
x = np.random.rand(60000, 784).astype(np.float32); y = np.random.randint(0, 10, 60000)
X, Y = ck.asarray(x, device=dev), ck.asarray(y, device=dev)
def sync(): ck.cuda.synchronize() if dev == "cuda" else None
for kind in ("seed", "logits"):
    ck.random.seed(0)
    model = ck_model(kind, dev); crit = ck.nn.CrossEntropyLoss(); opt = ck.optim.Adam(model.parameters())
    loader = DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True, generator=ck.random.default_rng(0))
    d0, t0 = X[:64], Y[:64]
    def step(d, tg):
        opt.zero_grad(); loss = crit(model(d), tg); loss.backward(); opt.step()
    def fixed(k):
        for _ in range(k): step(d0, t0)
    def looped(k):
        for d, tg in itertools.islice(loader, k): step(d, tg)
    def looped_fixed_batches(k):
        # the loader's own batches, gathered first: the step alone on varied data
        bs = list(itertools.islice(loader, 50))
        sync(); t = time.perf_counter()
        for i in range(k): step(*bs[i % 50])
        sync(); return time.perf_counter() - t
    def only_loader(k):
        for d, tg in itertools.islice(loader, k): pass
    for fn in (fixed, looped, only_loader):
        fn(30); sync()
        for rep in range(3):
            e0, e1 = ck.cuda.Event(), ck.cuda.Event()
            t = time.perf_counter(); e0.record(); fn(300); e1.record()
            th = time.perf_counter() - t
            sync(); tw = time.perf_counter() - t
            print(f"{kind} {fn.__name__}: wall {tw/300*1e6:.1f} us, host issue {th/300*1e6:.1f} us, "
                  f"device {e0.elapsed_time(e1)*1e3/300:.1f} us a step")
    print(f"{kind} pre-gathered batches: {looped_fixed_batches(300)/300*1e6:.1f} us a step")
    print(f"{kind} pre-gathered batches: {looped_fixed_batches(300)/300*1e6:.1f} us a step")
    with ck.profiler.profile() as prof:
        looped(100); sync()
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=18))
