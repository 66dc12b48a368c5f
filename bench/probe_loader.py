"""Where a batch of the training loops goes on the GPU: the DataLoader alone (device and host arrays),
the bench's device and seed loops, a logits model over the loader and on one fixed batch, and a cProfile of
the loop (bench/results/2026-12-03b-gpu-h200-notes.md).  python3 bench/probe_loader.py [cuda|cpu]"""
import sys, time, cProfile, pstats, io
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import cudakit as ck
from cudakit.utils.data import DataLoader, TensorDataset
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
def sync(): ck.cuda.synchronize() if dev == "cuda" else None
x = np.random.rand(60000, 784).astype(np.float32); y = np.random.randint(0, 10, 60000)
for label, ds, kw in [("device arrays", TensorDataset(ck.asarray(x, device=dev), ck.asarray(y, device=dev)), {}),
                      ("cpu arrays (seed)", TensorDataset(ck.asarray(x, device="cpu"), ck.asarray(y, device="cpu")), {})]:
    loader = DataLoader(ds, batch_size=64, shuffle=True, generator=ck.random.default_rng(0), **kw)
    for b in loader: pass
    sync()
    for _ in range(2):
        t = time.perf_counter(); nb = 0
        for d, tg in loader:
            if label.startswith("cpu"): d, tg = d.to(dev), tg.to(dev)
            nb += 1
        sync(); print(f"{label}: {(time.perf_counter()-t)/nb*1e6:.1f} us a batch ({nb} batches)")
    pr = cProfile.Profile(); pr.enable()
    for d, tg in loader:
        if label.startswith("cpu"): d, tg = d.to(dev), tg.to(dev)
    sync(); pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12); print(s.getvalue()[-3500:])
from _mlp import ck_seed_loop, ck_device_loop
if dev == "cuda":
    t, _ = ck_device_loop(dev, x, y, epochs=3); print("device loop epochs (s):", [round(v, 4) for v in t])
    t, _ = ck_seed_loop(dev, x, y, epochs=3); print("seed loop epochs (s):", [round(v, 4) for v in t])
if dev == "cuda":
    import itertools
    model = ck.nn.Sequential(ck.nn.Linear(784, 128), ck.nn.ReLU(), ck.nn.Linear(128, 10)).to(dev)
    crit = ck.nn.CrossEntropyLoss(); opt = ck.optim.Adam(model.parameters())
    loader = DataLoader(TensorDataset(ck.asarray(x, device=dev), ck.asarray(y, device=dev)), batch_size=64,
                        shuffle=True, generator=ck.random.default_rng(0))
    def steps(k):
        for d, tg in itertools.islice(loader, k):
            opt.zero_grad(); loss = crit(model(d), tg); loss.backward(); opt.step()
    steps(50); sync()
    t = time.perf_counter(); steps(900); sync(); print(f"device loop, logits model: {(time.perf_counter()-t)/900*1e6:.1f} us a batch")
    d0, t0 = next(iter(loader))
    def fixed(k):
        for _ in range(k):
            opt.zero_grad(); loss = crit(model(d0), t0); loss.backward(); opt.step()
    fixed(50); sync()
    t = time.perf_counter(); fixed(900); sync(); print(f"fixed batch, logits model: {(time.perf_counter()-t)/900*1e6:.1f} us a batch")
    pr = cProfile.Profile(); pr.enable(); steps(300); sync(); pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(15); print(s.getvalue()[-4000:])
