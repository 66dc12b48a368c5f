"""One rank of tests/test_distributed.py's multi-process cases, started by
``python -m cudakit.distributed.run --nproc N tests/_dist_worker.py CASE [OUT]``.

Each case checks its results against NumPy itself (every rank knows every
rank's inputs: they are drawn from the rank's seed) and exits non-zero with
the failure printed; the test checks the launcher's exit code and output.
"""
import os
import sys
import time
import traceback

import numpy as np

import cudakit as ck
import cudakit.distributed as dist
from cudakit.cuda import nccl

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]
NCCL_REDUCE = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"}
OPS = ["sum", "prod", "max", "min", "avg"]


def device():
    return "cuda" if dist.get_backend() == "nccl" else "cpu"


def data(rank, dtype, shape=(5, 7), seed=0):
    rng = np.random.default_rng(1000 * seed + rank)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        lo = -5 if dt.kind == "i" else 0
        return rng.integers(lo, 6, shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def supported(dtype, op):
    if dtype in NCCL_REDUCE:
        return True
    if dtype == "bool":
        return op in ("max", "min")
    if dtype.startswith("complex"):
        return op in ("sum", "avg")
    return False


def ptr(a):
    face = a.__cuda_array_interface__ if a.device.type == "cuda" else a.__array_interface__
    return face["data"][0]


def expect_reduce(xs, op):
    """NumPy's reduction over the ranks, in rank order, in the dtype (wrapping),
    as the CPU communicator computes it."""
    dt = xs[0].dtype
    if dt == bool:
        a = np.stack(xs)
        return a.any(0) if op == "max" else a.all(0)
    acc = xs[0].copy()
    with np.errstate(over="ignore"):
        for x in xs[1:]:
            if op in ("sum", "avg"):
                acc = (acc + x).astype(dt)
            elif op == "prod":
                acc = (acc * x).astype(dt)
            elif op == "max":
                acc = np.maximum(acc, x)
            else:
                acc = np.minimum(acc, x)
    if op == "avg":
        n = len(xs)
        if dt.kind in "iu":
            acc = (np.trunc(acc.astype(np.float64) / n)).astype(dt)
        else:
            acc = (acc / dt.type(n)).astype(dt)
    return acc


def close(got, want, what):
    got = ck.asnumpy(got)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype.kind in "fc":
        tol = 2e-3 if want.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def case_collectives():
    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    comm = nccl.NcclCommunicator._wrap(dist._communicator())
    checked = 0
    for dtype in DTYPES:
        xs = [data(k, dtype) for k in range(n)]
        x = ck.array(xs[r], device=dev)
        for op in OPS:
            if not supported(dtype, op):
                try:
                    comm.all_reduce(x, op=op)
                except TypeError as e:
                    assert "no " + op in str(e), str(e)
                else:
                    raise AssertionError(f"all_reduce {op} of {dtype} did not raise TypeError")
                continue
            want = expect_reduce(xs, op)
            close(comm.all_reduce(x, op=op), want, f"all_reduce {op} {dtype}")
            y = ck.array(xs[r], device=dev)
            dist.all_reduce(y, op=nccl._OPS[op])
            close(y, want, f"dist.all_reduce in place {op} {dtype}")
            got = comm.reduce(x, op=op, root=n - 1)
            if r == n - 1:
                close(got, want, f"reduce {op} {dtype}")
            else:
                assert got is None
            if n > 1 and xs[0].ndim and xs[0].shape[0] % n == 0 or n == 1:
                pass
            checked += 3
        # reduce_scatter along the first axis: n * 2 rows
        big = [data(k, dtype, (2 * n, 3), seed=1) for k in range(n)]
        if supported(dtype, "sum"):
            want = expect_reduce(big, "sum")[2 * r:2 * r + 2]
            close(comm.reduce_scatter(ck.array(big[r], device=dev), op="sum"), want, f"reduce_scatter {dtype}")
            out = ck.empty((2, 3), dtype=dtype, device=dev)
            dist.reduce_scatter_tensor(out, ck.array(big[r], device=dev))
            close(out, want, f"dist.reduce_scatter_tensor {dtype}")
        # the data movers take every dtype
        b = ck.array(xs[r], device=dev)
        comm.broadcast(b, root=n - 1)
        close(b, xs[n - 1], f"broadcast {dtype}")
        close(comm.all_gather(x), np.stack(xs), f"all_gather {dtype}")
        lst = [ck.empty(xs[0].shape, dtype=dtype, device=dev) for _ in range(n)]
        dist.all_gather(lst, x)
        for k in range(n):
            close(lst[k], xs[k], f"dist.all_gather {dtype} [{k}]")
        flat = ck.empty((n * xs[0].size,), dtype=dtype, device=dev)
        dist.all_gather_into_tensor(flat, x.reshape(-1))
        close(flat, np.concatenate([v.reshape(-1) for v in xs]), f"all_gather_into_tensor {dtype}")
        # send/recv around the ring, in a group (each waits for no one's order)
        if n > 1:
            got = ck.empty(xs[0].shape, dtype=dtype, device=dev)
            nccl.groupStart()
            comm.send(x, (r + 1) % n)
            comm.recv(got, (r - 1) % n)
            nccl.groupEnd()
            close(got, xs[(r - 1) % n], f"send/recv ring {dtype}")
        checked += 4
    # pieces: more than a slot of shared memory, an odd count
    m = (3 << 20) + 17
    xs = [np.arange(m, dtype=np.float32) * (k + 1) for k in range(n)]
    close(comm.all_reduce(ck.array(xs[r], device=dev)), expect_reduce(xs, "sum"), "all_reduce in pieces")
    g = comm.all_gather(ck.array(xs[r][:300001], device=dev))
    close(g, np.stack([v[:300001] for v in xs]), "all_gather in pieces")
    # a big message through the send/recv ring (bigger than the ring), in a group
    if n > 1:
        a = ck.array(xs[r], device=dev)
        got = ck.empty((m,), dtype="float32", device=dev)
        with nccl.group():
            comm.send(a, (r + 1) % n)
            comm.recv(got, (r - 1) % n)
        close(got, xs[(r - 1) % n], "big send/recv ring")
        # outside a group: 0 -> 1 then 1 -> 0
        if r == 0:
            dist.send(a, 1)
            dist.recv(got, 1)
            close(got, xs[1], "send/recv 1 -> 0")
        elif r == 1:
            dist.recv(got, 0)
            close(got, xs[0], "send/recv 0 -> 1")
            dist.send(a, 0)
    # CuPy's raw-pointer spellings
    x = ck.array(data(r, "float32"), device=dev)
    y = ck.empty_like(x)
    comm.allReduce(ptr(x), ptr(y), x.size, nccl.NCCL_FLOAT32, nccl.NCCL_MAX, None)
    close(y, expect_reduce([data(k, "float32") for k in range(n)], "max"), "allReduce pointers")
    comm.bcast(ptr(x), x.size, nccl.NCCL_FLOAT32, 0, None)
    close(x, data(0, "float32"), "bcast pointers")
    dist.barrier()
    print(f"rank {r}: OK {checked} checks")


def case_mismatch():
    """Calls that do not match are a ValueError on every rank; the
    communicator works afterwards."""
    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    comm = nccl.NcclCommunicator._wrap(dist._communicator())
    shape = (10,) if r == 0 else (11,)
    try:
        comm.all_reduce(ck.ones(shape, device=dev))
    except ValueError as e:
        assert "do not match" in str(e) and "float64[10]" in str(e) and "float64[11]" in str(e), str(e)
    else:
        raise AssertionError("mismatched shapes did not raise")
    dt = "float32" if r == 0 else "int32"
    try:
        comm.all_reduce(ck.ones((4,), dtype=dt, device=dev))
    except ValueError as e:
        assert "float32[4]" in str(e) and "int32[4]" in str(e), str(e)
    else:
        raise AssertionError("mismatched dtypes did not raise")
    try:
        if r == 0:
            comm.all_reduce(ck.ones((4,), device=dev))
        else:
            comm.broadcast(ck.ones((4,), device=dev), root=0)
    except ValueError as e:
        assert "all_reduce" in str(e) and "broadcast" in str(e), str(e)
    else:
        raise AssertionError("different collectives did not raise")
    # checked locally, at once
    for bad, exc in [(lambda: comm.reduce(ck.ones(3, device=dev), root=n), ValueError),
                     (lambda: comm.all_reduce(ck.ones(3, dtype="int16", device=dev)), TypeError),
                     (lambda: comm.all_reduce(ck.ones(3, device=dev), out=ck.ones(4, device=dev)), ValueError),
                     (lambda: comm.all_reduce(ck.ones(3, device=dev), op="median"), ValueError),
                     (lambda: comm.all_reduce(ck.ones((4, 4), device=dev)[:, ::2]), ValueError),
                     (lambda: comm.reduce_scatter(ck.ones(n + 1, device=dev)), ValueError),
                     (lambda: comm.send(ck.ones(3, device=dev), n + 2), ValueError)]:
        try:
            bad()
        except exc:
            pass
        else:
            raise AssertionError(f"{bad} did not raise {exc.__name__}")
    out = comm.all_reduce(ck.ones(3, device=dev))
    close(out, np.full(3, float(n)), "all_reduce after the mismatches")
    # a recv expecting another message than the one sent breaks the
    # communicator for every rank: last
    comm.barrier()
    try:
        if r == 0:
            comm.send(ck.ones(5, device=dev), 1)
            comm.barrier()
        elif r == 1:
            comm.recv(ck.ones(6, device=dev), 0)
        else:
            comm.barrier()
    except (ValueError, RuntimeError) as e:
        msg = str(e)
        assert "float64[6]" in msg and "float64[5]" in msg, msg
        print(f"rank {r}: OK mismatch ({type(e).__name__})")
        return
    raise AssertionError("a recv of the wrong size did not raise")


def case_timeout():
    """Rank 0 waits for a collective nobody else calls: TimeoutError; the
    others then find the communicator broken."""
    r, dev = dist.get_rank(), device()
    t0 = time.monotonic()
    if r == 0:
        try:
            dist.all_reduce(ck.ones(3, device=dev))
        except TimeoutError as e:
            assert "timed out" in str(e) and "rank(s) 1" in str(e), str(e)
            print(f"rank 0: OK timeout after {time.monotonic() - t0:.1f} s")
            return
        raise AssertionError("no TimeoutError")
    time.sleep(3.0)
    try:
        dist.barrier()
    except RuntimeError as e:
        assert "broken" in str(e) or "timed out" in str(e), str(e)
        print(f"rank {r}: OK broken ({e})")
        return
    raise AssertionError("the communicator still worked after a timeout")


def case_dead_peer():
    """A rank that exits without calling: the others fail soon, naming it."""
    r, dev = dist.get_rank(), device()
    if r == 1:
        os._exit(0)
    t0 = time.monotonic()
    try:
        dist.all_reduce(ck.ones(3, device=dev))
    except RuntimeError as e:
        assert "rank 1" in str(e) and "exited" in str(e), str(e)
        assert time.monotonic() - t0 < 30
        print(f"rank {r}: OK dead peer ({e})")
        return
    raise AssertionError("no error for a dead peer")


def case_env():
    print(f"env RANK={os.environ['RANK']} WORLD_SIZE={os.environ['WORLD_SIZE']} LOCAL_RANK={os.environ['LOCAL_RANK']} "
          f"rank={dist.get_rank()} world={dist.get_world_size()} backend={dist.get_backend()}")
    x = ck.array(np.array([dist.get_rank() + 1.0]), device=device())
    dist.all_reduce(x)
    n = dist.get_world_size()
    assert float(ck.asnumpy(x)[0]) == n * (n + 1) / 2


def case_fail():
    """Rank 1 fails: the launcher stops the others and exits with its code."""
    if dist.get_rank() == 1:
        sys.exit(3)
    time.sleep(60)


# ------------------------------------------------------------------- DDP

def mlp_params(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((16, 12)).astype(np.float32) * 0.3, np.zeros(16, np.float32),
            rng.standard_normal((4, 16)).astype(np.float32) * 0.3, np.zeros(4, np.float32)]


def mlp_data():
    rng = np.random.default_rng(7)
    return rng.standard_normal((96, 12)).astype(np.float32), rng.integers(0, 4, 96)


def make_mlp(seed, dev):
    model = ck.nn.Sequential(ck.nn.Linear(12, 16), ck.nn.ReLU(), ck.nn.Linear(16, 4))
    model.to(dev)
    with ck.no_grad():
        for p, v in zip(model.parameters(), mlp_params(seed)):
            p[...] = ck.array(v, device=dev)
    return model


def train(model, batches, dev, steps):
    opt = ck.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = ck.nn.CrossEntropyLoss()
    for x, y in batches[:steps]:
        loss = loss_fn(model(ck.array(x, device=dev)), ck.array(y, device=dev))
        opt.zero_grad()
        loss.backward()
        opt.step()


def case_ddp(out):
    """Each rank trains on its half of every global batch; rank 0 saves the parameters."""
    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    x, y = mlp_data()
    b = 8                           # per rank; the global batch is n * b
    model = make_mlp(100 + r, dev)  # different on each rank: the wrap broadcasts rank 0's
    ddp = ck.nn.parallel.DistributedDataParallel(model)
    for p, v in zip(model.parameters(), mlp_params(100)):
        np.testing.assert_array_equal(ck.asnumpy(p), v)
    steps = len(x) // (n * b)
    batches = [(x[k * n * b + r * b:k * n * b + (r + 1) * b], y[k * n * b + r * b:k * n * b + (r + 1) * b])
               for k in range(steps)]
    train(ddp, batches, dev, steps)
    params = [ck.asnumpy(p) for p in model.parameters()]
    gathered = [ck.asnumpy(v) for v in
                (nccl.NcclCommunicator._wrap(dist._communicator()).all_gather(ck.array(params[0], device=dev)),)]
    for k in range(n):   # every rank holds the same parameters
        np.testing.assert_array_equal(gathered[0][k], params[0])
    if r == 0:
        np.savez(out, *params)
    print(f"rank {r}: OK ddp {steps} steps")


def main():
    case = sys.argv[1]
    timeout = float(os.environ.get("DIST_TEST_TIMEOUT", "60"))
    dist.init_process_group(timeout=timeout)
    try:
        if case == "ddp":
            case_ddp(sys.argv[2])
        else:
            globals()["case_" + case]()
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(1)
    if case not in ("timeout", "dead_peer"):
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
