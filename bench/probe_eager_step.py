"""Where an eager training step's time goes (the seed's model, batch 64, data fixed on the device): the step
time, the profiler's table and a cProfile.  python3 bench/probe_eager_step.py [cuda|cpu]"""
import sys, time, cProfile, pstats, io
import numpy as np
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import cudakit as ck
from _mlp import ck_model
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
ck.random.seed(0)
model = ck_model("seed", dev)
crit = ck.nn.CrossEntropyLoss(); opt = ck.optim.Adam(model.parameters())
x = ck.asarray(np.random.rand(64, 784).astype(np.float32), device=dev)
y = ck.asarray(np.random.randint(0, 10, 64), device=dev)
xh = np.random.rand(64, 784).astype(np.float32)
def step():
    opt.zero_grad(); out = model(x); loss = crit(out, y); loss.backward(); opt.step()
def sync(): ck.cuda.synchronize() if dev == "cuda" else None
for _ in range(50): step()
sync()
for rep in range(3):
    t = time.perf_counter()
    for _ in range(1000): step()
    sync()
    print(f"eager step: {(time.perf_counter()-t)/1000*1e6:.1f} us")
t = time.perf_counter()
for _ in range(1000): ck.asarray(xh, device=dev)
sync(); print(f"asarray(64x784 host) to {dev}: {(time.perf_counter()-t)/1000*1e6:.1f} us")
with ck.profiler.profile() as prof:
    for _ in range(20): step()
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30))
pr = cProfile.Profile(); pr.enable()
for _ in range(300): step()
sync(); pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(22); print(s.getvalue()[-6000:])
