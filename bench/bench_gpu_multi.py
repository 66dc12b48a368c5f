"""Several GPUs of one host: peer copies, all_reduce and the seed's MLP
trained data-parallel, cudakit against PyTorch in one run (issue 19).

    python3 bench/bench_gpu_multi.py [--out bench/results/FILE.md] [--repeats 10] [--epochs 3] [--data DIR]

  - peer copy: 1 GiB from cuda:0 to cuda:1, ``x.to_device("cuda:1")``
    against PyTorch's ``tensor.to("cuda:1")`` (GB/s, median of --repeats,
    the destination allocated each time in both);
  - all_reduce of 256 MiB of float32 over 2 processes, one a GPU:
    ``cudakit.distributed.all_reduce`` (NCCL through cudakit's loader, the
    processes started by ``python -m cudakit.distributed.run``) against
    ``torch.distributed.all_reduce`` with the NCCL backend (algorithm and
    bus bandwidth, GB/s: bus = alg * 2 (n - 1) / n);
  - the seed's MLP (Linear(784, 128), ReLU, Linear(128, 10), Adam, batch 64
    a GPU, so the global batch doubles on two) an epoch of 60,000 samples
    with DistributedDataParallel on 2 GPUs against 1 (samples/s), with the
    test accuracy after --epochs epochs.

With fewer than 2 GPUs it runs what a world of one allows (the all_reduce
and the MLP on one process and GPU, a copy within cuda:0 as the peer copy's
stand-in) and says what it skipped.  NCCL's NVLink multicast stays off
(NCCL_NVLS_ENABLE=0) for both libraries.  The goals (issue 19): peer copy
and all_reduce at least 0.95x PyTorch's bandwidth; the MLP on 2 GPUs at
least 1.6x the throughput of one, with the same accuracy.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

ROWS, NOTES = [], []
COLUMNS = ["pytorch", "cudakit", "ratio"]
ALLREDUCE_BYTES = 256 << 20
PEER_BYTES = 1 << 30


def note(msg):
    print(msg, flush=True)
    NOTES.append(msg)


def row(name, unit, torch_v, ck_v, higher=True):
    vals = {}
    if torch_v is not None:
        vals["pytorch"] = torch_v
    if ck_v is not None:
        vals["cudakit"] = ck_v
    if torch_v and ck_v:
        vals["ratio"] = ck_v / torch_v if higher else torch_v / ck_v
    ROWS.append((name, unit, vals, higher))
    print(f"  {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in vals.items()) + f" {unit}", flush=True)


# --------------------------------------------------------------- peer copy

def bench_peer(ngpu, repeats):
    import cudakit as ck
    try:
        import torch
    except ImportError:
        torch = None
    n = PEER_BYTES // 4
    dst = "cuda:1" if ngpu >= 2 else "cuda:0"
    if ngpu < 2:
        note("peer copy: SKIPPED (needs 2 GPUs; this machine has %d): a 1 GiB copy within cuda:0 stands in" % ngpu)

    def timed(fn, sync):
        fn()
        sync()
        ts = []
        for _ in range(repeats):
            sync()
            t0 = time.perf_counter()
            out = fn()
            sync()
            ts.append(time.perf_counter() - t0)
            del out
        return PEER_BYTES / statistics.median(ts) / 1e9

    x = ck.ones(n, dtype=ck.float32, device="cuda:0")
    if ngpu >= 2:
        print(f"  can_access_peer(0, 1): {ck.cuda.can_access_peer(0, 1)}", flush=True)

    def ck_sync():
        for d in range(min(ngpu, 2)):
            ck.cuda.synchronize(f"cuda:{d}")

    ck_bw = timed((lambda: x.to_device(dst)) if ngpu >= 2 else (lambda: x.copy()), ck_sync)
    del x
    torch_bw = None
    if torch is not None:
        t = torch.ones(n, dtype=torch.float32, device="cuda:0")

        def t_sync():
            for d in range(min(ngpu, 2)):
                torch.cuda.synchronize(d)

        torch_bw = timed((lambda: t.to(dst)) if ngpu >= 2 else (lambda: t.clone()), t_sync)
        del t
        torch.cuda.empty_cache()
    ck.cuda.empty_cache()
    name = "peer copy 1 GiB cuda:0 -> cuda:1" if ngpu >= 2 else "copy 1 GiB within cuda:0 (stand-in: one GPU)"
    row(name, "GB/s", torch_bw, ck_bw)


# -------------------------------------------------------------- all_reduce

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_ck_allreduce(result, repeats):
    import cudakit as ck
    import cudakit.distributed as dist
    dist.init_process_group()      # the launcher's --backend: nccl here (shm: a CPU dry run of this code)
    dev = _worker_device(dist)
    n = ALLREDUCE_BYTES // 4
    x = ck.ones(n, dtype=ck.float32, device=dev)
    for _ in range(3):
        dist.all_reduce(x)
    ck.cuda.synchronize(dev)
    dist.barrier()
    ts = []
    for _ in range(repeats):
        ck.cuda.synchronize(dev)
        t0 = time.perf_counter()
        dist.all_reduce(x)
        ck.cuda.synchronize(dev)
        ts.append(time.perf_counter() - t0)
    w = dist.get_world_size()
    ok = float(ck.asnumpy(x[:1])[0]) == float(w) ** (3 + repeats)
    if dist.get_rank() == 0:
        with open(result, "w") as f:
            json.dump({"seconds": statistics.median(ts), "world": w, "correct": ok}, f)
    dist.destroy_process_group()


def _worker_device(dist):
    return f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if dist.get_backend() == "nccl" else "cpu"


def worker_torch_allreduce(result, repeats):
    import torch
    import torch.distributed as tdist
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    try:
        tdist.init_process_group("nccl", device_id=torch.device("cuda", int(os.environ["LOCAL_RANK"])))
    except TypeError:    # a PyTorch before device_id=
        tdist.init_process_group("nccl")
    x = torch.ones(ALLREDUCE_BYTES // 4, dtype=torch.float32, device="cuda")
    for _ in range(3):
        tdist.all_reduce(x)
    torch.cuda.synchronize()
    tdist.barrier()
    ts = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        tdist.all_reduce(x)
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    if rank == 0:
        with open(result, "w") as f:
            json.dump({"seconds": statistics.median(ts), "world": tdist.get_world_size()}, f)
    tdist.destroy_process_group()


def _run(cmd, env, what, timeout=300):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        note(f"{what}: FAILED (exit {p.returncode}): {(p.stdout + p.stderr)[-1500:]}")
        return False
    return True


def bench_allreduce(ngpu, repeats):
    n = 2 if ngpu >= 2 else 1
    if n < 2:
        note("all_reduce: 2 processes need 2 GPUs; SKIPPED the 2-GPU figure, running a world of one (one "
             "process, one GPU: NCCL's path for one rank, close to a device copy)")
    tmp = tempfile.mkdtemp(prefix="bench-multi-")
    env = dict(os.environ)
    res = {}
    f = os.path.join(tmp, "ck.json")
    if _run([sys.executable, "-m", "cudakit.distributed.run", "--nproc", str(n), "--backend", "nccl", __file__,
             "--worker", "ck-allreduce", "--result", f, "--repeats", str(repeats)], env, "cudakit all_reduce"):
        res["cudakit"] = json.load(open(f))
        if not res["cudakit"]["correct"]:
            note("cudakit all_reduce: WRONG RESULT")
    try:
        import torch  # noqa: F401
        f = os.path.join(tmp, "torch.json")
        port = _free_port()
        procs = []
        for r in range(n):
            e = dict(env, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=str(port))
            procs.append(subprocess.Popen([sys.executable, __file__, "--worker", "torch-allreduce", "--result", f,
                                           "--repeats", str(repeats)], env=e))
        rcs = [p.wait(timeout=300) for p in procs]
        if all(rc == 0 for rc in rcs):
            res["pytorch"] = json.load(open(f))
        else:
            note(f"torch.distributed all_reduce: FAILED (exit codes {rcs})")
    except ImportError:
        note("PyTorch not installed: no torch.distributed row")
    label = f"all_reduce 256 MiB float32, {n} process{'es' if n > 1 else ''} ({n} GPU{'s' if n > 1 else ''})"

    def bw(k, bus):
        if k not in res:
            return None
        alg = ALLREDUCE_BYTES / res[k]["seconds"] / 1e9
        return alg * (2 * (n - 1) / n if bus else 1) if (not bus or n > 1) else None

    row(label + ": algorithm bandwidth", "GB/s", bw("pytorch", False), bw("cudakit", False))
    if n > 1:
        row(label + ": bus bandwidth", "GB/s", bw("pytorch", True), bw("cudakit", True))


# --------------------------------------------------------------------- MLP

def worker_ck_mlp(result, epochs, data_dir):
    import numpy as np
    import cudakit as ck
    import cudakit.distributed as dist
    from _mlp import BATCH, ck_accuracy, ck_model, load_data
    dist.init_process_group()
    r, w = dist.get_rank(), dist.get_world_size()
    dev = _worker_device(dist)
    (xt, yt), (xs, ys), name = load_data(data_dir)
    xd, yd = ck.asarray(xt[r::w], device=dev), ck.asarray(yt[r::w], device=dev)
    ck.random.seed(0)
    model = ck_model("logits", dev)
    ddp = ck.nn.parallel.DistributedDataParallel(model)
    opt = ck.optim.Adam(model.parameters())
    loss_fn = ck.nn.CrossEntropyLoss()
    rng = ck.random.default_rng(1 + r)
    steps = len(xt) // (BATCH * w)          # every rank the same number of steps

    def epoch():
        perm = rng.permutation(len(yd), device=dev)
        for k in range(steps):
            idx = perm[k * BATCH:(k + 1) * BATCH]
            loss = loss_fn(ddp(ck.take(xd, idx, axis=0)), ck.take(yd, idx, axis=0))
            opt.zero_grad()
            loss.backward()
            opt.step()

    times = []
    for e in range(epochs):
        ck.cuda.synchronize(dev)
        dist.barrier()
        t0 = time.perf_counter()
        epoch()
        ck.cuda.synchronize(dev)
        times.append(time.perf_counter() - t0)
    acc = ck_accuracy(model, xs, ys, dev)
    if r == 0:
        with open(result, "w") as f:
            json.dump({"epoch_seconds": times, "samples": steps * BATCH * w, "accuracy": acc, "data": name,
                       "world": w}, f)
    dist.destroy_process_group()


def bench_mlp(ngpu, epochs, data_dir):
    tmp = tempfile.mkdtemp(prefix="bench-multi-mlp-")
    out = {}
    for n in ([1, 2] if ngpu >= 2 else [1]):
        f = os.path.join(tmp, f"mlp{n}.json")
        cmd = [sys.executable, "-m", "cudakit.distributed.run", "--nproc", str(n), "--backend", "nccl", __file__,
               "--worker", "ck-mlp", "--result", f, "--epochs", str(epochs)] + (["--data", data_dir] if data_dir else [])
        if _run(cmd, dict(os.environ), f"MLP on {n} GPU(s)", timeout=600):
            out[n] = json.load(open(f))
    if ngpu < 2:
        note("MLP data-parallel: SKIPPED the 2-GPU run (needs 2 GPUs); the 1-GPU run is DistributedDataParallel "
             "with a world of one")
    for n, d in out.items():
        best = statistics.median(d["epoch_seconds"][1:] or d["epoch_seconds"])   # the first epoch compiles
        thr = d["samples"] / best
        row(f"MLP epoch, {n} GPU(s), batch 64 a GPU: throughput", "samples/s", None, thr)
        row(f"MLP, {n} GPU(s): test accuracy after {len(d['epoch_seconds'])} epochs ({d['data'][:40]})", "%",
            None, 100 * d["accuracy"])
        out[n]["throughput"] = thr
    if 1 in out and 2 in out:
        row("MLP: throughput on 2 GPUs / 1 GPU", "x", None, out[2]["throughput"] / out[1]["throughput"])


# -------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--data", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--result", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", default=None, help="peer, allreduce or mlp")
    a = ap.parse_args()
    if a.worker == "ck-allreduce":
        return worker_ck_allreduce(a.result, a.repeats)
    if a.worker == "torch-allreduce":
        return worker_torch_allreduce(a.result, a.repeats)
    if a.worker == "ck-mlp":
        return worker_ck_mlp(a.result, a.epochs, a.data)

    import cudakit as ck
    if not ck.cuda.is_available():
        print(f"no GPU: {ck.cuda.unavailable_reason()}; nothing to measure")
        return 0
    ngpu = ck.cuda.device_count()
    try:
        nccl_v = ck.cuda.nccl.get_version()
    except Exception as e:
        nccl_v = f"not loadable ({e})"
    machine = f"{ngpu} x {ck.cuda.Device(0).name}; NCCL {nccl_v}"
    try:
        import torch
        machine += f"; PyTorch {torch.__version__} (NCCL {'.'.join(map(str, torch.cuda.nccl.version()))})"
    except Exception:
        pass
    print(machine, flush=True)
    for what, fn in [("peer", lambda: bench_peer(ngpu, a.repeats)), ("allreduce", lambda: bench_allreduce(ngpu, a.repeats)),
                     ("mlp", lambda: bench_mlp(ngpu, a.epochs, a.data))]:
        if a.only and a.only != what:
            continue
        print(f"== {what}", flush=True)
        try:
            fn()
        except Exception as e:  # one section failing must not hide the others
            import traceback
            traceback.print_exc()
            note(f"{what}: FAILED ({type(e).__name__}: {e})")
    if a.out:
        from _report import write_results
        write_results(a.out, "Several GPUs of one host: cudakit vs PyTorch", machine,
                      "python3 bench/bench_gpu_multi.py " + " ".join(sys.argv[1:]), COLUMNS, ROWS)
        with open(a.out, "a") as f:
            f.write("\n" + "\n".join(f"- {n}" for n in NOTES) + "\n")
    print("\n".join(NOTES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
