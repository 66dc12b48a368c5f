"""Collectives (cudakit.cuda.nccl, cudakit.distributed), the launcher and
DistributedDataParallel.

The multi-process cases run tests/_dist_worker.py under
``python -m cudakit.distributed.run`` on the CPU (the shared-memory
communicator), each with a time limit, and check every collective and
dtype against NumPy on 2 and 3 processes.  The one-process cases take the
``device`` fixture: on a GPU they run NCCL with a world of one.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import cudakit as ck
import cudakit.distributed as dist
from cudakit.cuda import nccl

from conftest import assert_same

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "_dist_worker.py")


def launch(n, *args, timeout=180, env=None, launcher_args=()):
    e = dict(os.environ, CUDAKIT_DEVICE="cpu", DIST_TEST_TIMEOUT="60")
    e.update(env or {})
    cmd = [sys.executable, "-m", "cudakit.distributed.run", "--nproc", str(n), *launcher_args, WORKER, *args]
    try:
        return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as ex:
        pytest.fail(f"{' '.join(cmd)} did not end in {timeout} s:\n{ex.stdout}\n{ex.stderr}")


def ok(p, n, word="OK"):
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    for r in range(n):
        assert f"rank {r}: {word}" in out, out
    return out


# ------------------------------------------------------------ many processes

@pytest.mark.parametrize("n", [2, 3])
def test_collectives_every_dtype(n):
    ok(launch(n, "collectives"), n)


@pytest.mark.parametrize("n", [2, 3])
def test_mismatched_calls_raise_on_every_rank(n):
    ok(launch(n, "mismatch"), n)


def test_timeout_is_an_error_not_a_hang():
    p = launch(2, "timeout", env={"DIST_TEST_TIMEOUT": "2"}, timeout=60)
    out = ok(p, 2)
    assert "OK timeout" in out and "OK broken" in out


def test_dead_peer_is_named():
    ok(launch(2, "dead_peer", timeout=60), 1)


def test_launcher_sets_the_environment():
    p = launch(3, "env", timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    for r in range(3):
        assert f"env RANK={r} WORLD_SIZE=3 LOCAL_RANK={r} rank={r} world=3 backend=shm" in p.stdout


def test_launcher_propagates_a_failure_and_stops_the_others():
    import time
    t0 = time.monotonic()
    p = launch(3, "fail", timeout=60, launcher_args=("--grace", "2"))
    assert p.returncode == 3, p.stdout + p.stderr
    assert "rank 1 exited with 3" in p.stderr
    assert time.monotonic() - t0 < 30      # rank 0 sleeps 60 s: it was stopped


def test_launcher_refuses_more_gpus_than_there_are():
    e = dict(os.environ, CUDAKIT_DEVICE="cpu")
    p = subprocess.run([sys.executable, "-m", "cudakit.distributed.run", "--nproc", "64", "--backend", "nccl",
                        WORKER, "env"], env=e, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "GPU" in p.stderr


def test_ddp_two_processes_match_one_with_the_double_batch(tmp_path):
    """2 processes with batch b each end with the parameters of 1 process with batch 2b."""
    sys.path.insert(0, HERE)
    import _dist_worker as w
    out = str(tmp_path / "ddp.npz")
    ok(launch(2, "ddp", out), 2)
    got = np.load(out)
    x, y = w.mlp_data()
    model = w.make_mlp(100, "cpu")
    b = 16
    w.train(model, [(x[k * b:(k + 1) * b], y[k * b:(k + 1) * b]) for k in range(len(x) // b)], "cpu",
            len(x) // b)
    for i, (p, start) in enumerate(zip(model.parameters(), w.mlp_params(100))):
        want = ck.asnumpy(p)
        assert np.abs(want - start).max() > 1e-3          # it trained
        np.testing.assert_allclose(got[f"arr_{i}"], want, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------- one process

def world_of_one(device):
    return nccl.NcclCommunicator(1, nccl.get_unique_id(device), 0)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
                                   "float64", "complex64", "bool"])
def test_world_of_one_collectives(device, dtype):
    comm = world_of_one(device)
    assert comm.size() == 1 and comm.rank_id() == 0
    assert comm.backend == ("nccl" if device == "cuda" else "shm")
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    x = ck.array(a, device=device)
    op = "max" if dtype == "bool" else "sum"
    assert_same(comm.all_reduce(x, op=op), a)
    assert_same(comm.reduce(x, op=op, root=0), a)
    if dtype != "bool":
        assert_same(comm.reduce_scatter(x), a)
    assert_same(comm.all_gather(x), a[None])
    y = ck.array(a, device=device)
    assert_same(comm.broadcast(y, root=0), a)
    got = ck.zeros_like(x)
    with nccl.group():
        comm.send(x, 0)
        comm.recv(got, 0)
    assert_same(got, a)
    comm.barrier()
    comm.destroy()


def test_world_of_one_in_place_and_avg(device):
    comm = world_of_one(device)
    x = ck.array(np.linspace(0, 1, 1000, dtype=np.float32), device=device)
    comm.all_reduce(x, out=x, op="avg")
    assert_same(x, np.linspace(0, 1, 1000, dtype=np.float32))
    comm.destroy()


def test_init_all(device):
    n = 3 if device == "cpu" else 1
    comms = nccl.NcclCommunicator.initAll([device] * n if device == "cpu" else list(range(n)))
    xs = [ck.array(np.arange(6.0) * (i + 1), device=device) for i in range(n)]
    nccl.groupStart()
    outs = [c.all_reduce(x) for c, x in zip(comms, xs)]
    nccl.groupEnd()
    for o in outs:
        assert_same(o, np.arange(6.0) * sum(range(1, n + 1)))
    for c in comms:
        c.destroy()


def test_process_group_of_one(device):
    dist.init_process_group(backend="nccl" if device == "cuda" else "shm", world_size=1, rank=0)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        x = ck.array(np.arange(5.0), device=device)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        dist.broadcast(x, src=0)
        lst = [ck.zeros_like(x)]
        dist.all_gather(lst, x)
        assert_same(lst[0], np.arange(5.0))
        dist.barrier()
        with pytest.raises(RuntimeError, match="twice"):
            dist.init_process_group(world_size=1, rank=0)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()


def test_ddp_world_of_one(device):
    dist.init_process_group(backend="nccl" if device == "cuda" else "shm", world_size=1, rank=0)
    try:
        sys.path.insert(0, HERE)
        import _dist_worker as w
        x, y = w.mlp_data()
        ref = w.make_mlp(100, device)
        w.train(ref, [(x[k * 16:(k + 1) * 16], y[k * 16:(k + 1) * 16]) for k in range(6)], device, 6)
        m = w.make_mlp(100, device)
        w.train(ck.nn.parallel.DistributedDataParallel(m), [(x[k * 16:(k + 1) * 16], y[k * 16:(k + 1) * 16])
                                                            for k in range(6)], device, 6)
        for p, q in zip(m.parameters(), ref.parameters()):
            np.testing.assert_allclose(ck.asnumpy(p), ck.asnumpy(q), rtol=1e-5, atol=1e-6)
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------- bad input

def test_bad_ranks_and_ids():
    uid = nccl.get_unique_id("cpu")
    with pytest.raises(ValueError, match="rank 5 is out of range"):
        nccl.NcclCommunicator(2, uid, 5)
    with pytest.raises(ValueError, match="rank -1 is out of range"):
        nccl.NcclCommunicator(2, uid, -1)
    with pytest.raises(ValueError, match="1 to 64 ranks"):
        nccl.NcclCommunicator(0, uid, 0)
    with pytest.raises(ValueError, match="128"):
        nccl.NcclCommunicator(1, b"short", 0)
    with pytest.raises(ValueError, match="out of range"):
        dist.init_process_group(backend="shm", world_size=2, rank=2)
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group(backend="shm", world_size=2, rank=0)
    assert not dist.is_initialized()


def test_a_rank_that_never_comes_times_out():
    prev = ck._core._comm_timeout(0.5)
    try:
        with pytest.raises(TimeoutError, match="rank 0 timed out after 0.5 s in init_rank"):
            nccl.NcclCommunicator(2, nccl.get_unique_id("cpu"), 0)
    finally:
        ck._core._comm_timeout(prev)


def test_a_rank_joined_twice_fails():
    import threading
    uid = nccl.get_unique_id("cpu")
    errs = []

    def join():
        try:
            nccl.NcclCommunicator(2, uid, 0)
        except Exception as e:
            errs.append(e)

    prev = ck._core._comm_timeout(5)
    try:
        ts = [threading.Thread(target=join) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
    finally:
        ck._core._comm_timeout(prev)
    assert len(errs) == 2, errs
    assert any("joined as rank 0" in str(e) for e in errs), errs


def test_arrays_of_the_wrong_device_or_layout(device):
    comm = world_of_one(device)
    other = "cpu" if device == "cuda" else None
    if other:
        with pytest.raises(ValueError, match="is on cpu"):
            comm.all_reduce(ck.ones(3, device=other))
    with pytest.raises(ValueError, match="C-contiguous"):
        comm.all_reduce(ck.ones((4, 4), device=device).T)
    with pytest.raises(TypeError, match="one dtype"):
        comm.all_reduce(ck.ones(3, device=device), out=ck.ones(3, dtype="float32", device=device))
    with pytest.raises(TypeError, match="no sum reduction of int16"):
        comm.all_reduce(ck.ones(3, dtype="int16", device=device))
    with pytest.raises(TypeError, match="cudakit array"):
        comm._c.all_reduce(np.ones(3), np.ones(3), 0)
    with pytest.raises(RuntimeError, match="group_end"):
        nccl.groupEnd()
    comm.destroy()
    with pytest.raises(RuntimeError, match="destroyed"):
        comm.all_reduce(ck.ones(3, device=device))


def test_timeout_argument():
    with pytest.raises(ValueError, match="positive"):
        ck._core._comm_timeout(-1)


# ------------------------------------------------------------ devices

def test_second_gpu_is_a_clear_error_or_works(device):
    x = ck.array(np.arange(10.0), device=device)
    # what "cuda:1" is depends on the machine, not on where x is
    n = ck.cuda.device_count() if ck.cuda.is_available() else 0
    if n >= 2:
        y = x.to_device("cuda:1")
        assert str(y.device) == "cuda:1"
        assert_same(y, np.arange(10.0))
        assert_same(y.to("cuda:0"), np.arange(10.0))
        assert isinstance(ck.cuda.can_access_peer(0, 1), bool)
        return
    exc = ValueError if n else ck.cuda.CUDAError
    with pytest.raises(exc, match="invalid CUDA device 1|no usable CUDA device"):
        x.to_device("cuda:1")
    with pytest.raises(exc, match="invalid CUDA device 1|no usable CUDA device"):
        x.to("cuda:1")


def test_peer_access_of_a_device_and_itself(device):
    if device == "cpu":
        assert ck.cuda.can_access_peer("cpu", "cpu")
    else:
        assert ck.cuda.can_access_peer(0, 0)
        assert ck.cuda.Device(0).can_access_peer(0)


def test_wait_event_across_devices(device):
    # a CPU stream waiting for an event of the device (a GPU's: on the host), and back
    cpu = ck.cuda.Stream("cpu")
    dev_stream = ck.cuda.Stream(device)
    e = ck.cuda.Event(device)
    x = ck.ones(1000, device=device) * 2
    e.record(dev_stream)
    cpu.wait_event(e)
    dev_stream.wait_event(ck.cuda.Event("cpu").record(cpu))
    dev_stream.synchronize()
    assert_same(x, np.full(1000, 2.0))
    if device == "cuda" and ck.cuda.device_count() >= 2:
        s1 = ck.cuda.Stream("cuda:1")
        s1.wait_event(ck.cuda.Event("cuda:0").record())
        s1.synchronize()
