"""python -m cudakit.distributed.run --nproc N script.py [args...]

Starts N processes of ``python script.py args`` (``-m module`` runs a module),
rank 0 to N-1, each with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and
CUDAKIT_INIT_METHOD (a fresh rendezvous file) in its environment, so that
``cudakit.distributed.init_process_group()`` needs no arguments.  With GPUs
(backend nccl) rank i uses GPU LOCAL_RANK; on the CPU (backend shm) the
processes share this machine's cores.  When a process fails, the others
are stopped (SIGTERM, then SIGKILL after --grace seconds) and the launcher
exits with the failing process's code (128 + the signal for one killed by
a signal); it exits 0 when all do.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def _parse(argv):
    ap = argparse.ArgumentParser(prog="python -m cudakit.distributed.run", description=__doc__.split("\n\n")[1])
    ap.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", default=None,
                    help="processes to start (default: one per GPU, or 2 on the CPU); 'gpu' is one per GPU")
    ap.add_argument("--backend", choices=["nccl", "shm", "gloo"], default=None,
                    help="nccl where the default device is a GPU, shm otherwise")
    ap.add_argument("--timeout", type=float, default=None, help="seconds a rank waits for the others (CPU)")
    ap.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    ap.add_argument("-m", dest="module", action="store_true", help="run the script argument as a module")
    ap.add_argument("script", help="the script (or module, with -m) every process runs")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    return ap.parse_args(argv)


def _gpus():
    if os.environ.get("CUDAKIT_DEVICE", "").lower() == "cpu":
        return 0
    try:
        from cudakit import cuda
        return cuda.device_count() if cuda.is_available() else 0
    except Exception:
        return 0


def _stop(procs, grace):
    live = [p for p in procs if p.poll() is None]
    for p in live:
        try:
            p.send_signal(signal.SIGTERM)
        except OSError:
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(p.poll() is None for p in live):
        time.sleep(0.02)
    for p in live:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
        p.wait()


def _code(rc):
    return 128 - rc if rc < 0 else rc


def main(argv=None):
    a = _parse(sys.argv[1:] if argv is None else argv)
    ngpu = _gpus()
    backend = a.backend or ("nccl" if ngpu else "shm")
    if a.nproc in (None, "gpu", "auto"):
        n = ngpu if backend == "nccl" and ngpu else 2
    else:
        try:
            n = int(a.nproc)
        except ValueError:
            sys.exit(f"--nproc takes a number or 'gpu', not {a.nproc!r}")
    if n < 1:
        sys.exit(f"--nproc must be at least 1, not {n}")
    if backend == "nccl" and n > ngpu:
        sys.exit(f"--nproc {n} with the nccl backend needs {n} GPUs; this machine has {ngpu} "
                 "(one process a GPU; --backend shm runs on the CPU)")
    rdzv = tempfile.mkdtemp(prefix="cudakit-run-")
    cmd = [sys.executable] + (["-m", a.script] if a.module else [a.script]) + list(a.args)
    procs = []
    rc = 0
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def forward(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, forward)
    try:
        for r in range(n):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(n),
                       CUDAKIT_INIT_METHOD="file://" + os.path.join(rdzv, "id"), CUDAKIT_DIST_BACKEND=backend)
            if backend != "nccl":
                env.setdefault("CUDAKIT_DEVICE", "cpu")
            if a.timeout is not None:
                env["CUDAKIT_COMM_TIMEOUT"] = str(a.timeout)
            procs.append(subprocess.Popen(cmd, env=env))
        while True:
            done = [(i, p.poll()) for i, p in enumerate(procs)]
            failed = [(i, c) for i, c in done if c not in (None, 0)]
            if failed:
                i, c = failed[0]
                print(f"cudakit.distributed.run: rank {i} exited with {_code(c)}; stopping the others",
                      file=sys.stderr)
                _stop(procs, a.grace)
                rc = _code(c)
                break
            if all(c == 0 for _, c in done):
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        _stop(procs, a.grace)
        rc = 130
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        shutil.rmtree(rdzv, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
