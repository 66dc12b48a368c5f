"""cudakit.distributed: torch.distributed's process group over cudakit's communicators.

    # python -m cudakit.distributed.run --nproc 2 train.py
    import cudakit as ck, cudakit.distributed as dist
    dist.init_process_group()                  # RANK, WORLD_SIZE, LOCAL_RANK from the launcher
    x = ck.ones(4) * dist.get_rank()
    dist.all_reduce(x)                         # in place: the sum over the ranks
    dist.destroy_process_group()

One process a rank.  backend="nccl" (the default where the default device is
a GPU) uses NCCL with the process on GPU LOCAL_RANK; backend="shm" (the
default on the CPU; "gloo" is taken as it) the CPU's communicator, the
processes of this machine meeting in shared memory.  The ranks find each
other through ``init_method``: "file:///path" (rank 0 writes the unique id
there, the others read it; the launcher gives each run a fresh one),
``CUDAKIT_INIT_METHOD``, or the id itself in ``CUDAKIT_COMM_ID`` (hex).
On the CPU every wait for the other ranks ends after ``timeout`` seconds
(or a ``datetime.timedelta``; 300 by default) with a ``TimeoutError`` on
every rank, and ranks whose calls do not match get a ``ValueError``.
"""
import os as _os
import time as _time

from .. import _core

__all__ = ["ReduceOp", "init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_nccl_available", "get_rank", "get_world_size", "get_backend", "all_reduce", "reduce", "broadcast",
           "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "send", "recv", "barrier", "Backend"]


class ReduceOp:
    """The reductions, NCCL's numbers (torch.distributed.ReduceOp's names)."""
    SUM = 0
    PRODUCT = 1
    MAX = 2
    MIN = 3
    AVG = 4


class Backend:
    """The backend names: NCCL (GPUs), SHM (cudakit's shared memory between CPU processes), GLOO
    (torch's name, taken as SHM)."""

    NCCL = "nccl"
    SHM = "shm"
    GLOO = "gloo"


_state = {"comm": None, "backend": None, "rank": -1, "world": -1}


def is_available():
    """True: the package can always be used (shared memory between CPU processes, NCCL between GPUs)."""
    return True


def is_nccl_available():
    """Whether NCCL can be loaded (and a GPU used)."""
    from .. import cuda
    if not cuda.is_available():
        return False
    try:
        _core._nccl_version()
        return True
    except Exception:
        return False


def is_initialized():
    """Whether init_process_group has made the default group."""
    return _state["comm"] is not None


def _need():
    c = _state["comm"]
    if c is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return c


def _seconds(timeout):
    if timeout is None:
        return None
    s = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    if not s > 0:
        raise ValueError(f"timeout must be positive, not {timeout!r}")
    return s


def _env_int(name, default):
    v = _os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"the environment variable {name}={v!r} is not an integer") from None


def _rendezvous(path, rank, make_id, timeout):
    """Rank 0 writes the id to path (by rename: whole or absent); the others
    wait for it."""
    if rank == 0:
        uid = make_id()
        tmp = f"{path}.{_os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(uid)
        _os.replace(tmp, path)
        return uid
    deadline = _time.monotonic() + (timeout or 300.0)
    delay = 0.001
    while True:
        try:
            with open(path, "rb") as f:
                uid = f.read()
            if len(uid) == 128:
                return uid
        except FileNotFoundError:
            pass
        if _time.monotonic() > deadline:
            raise TimeoutError(f"rank {rank} waited {timeout or 300.0:g} s for rank 0 to write the unique id to "
                               f"{path}: is rank 0 running, with the same init_method?")
        _time.sleep(delay)
        delay = min(delay * 2, 0.05)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default process group: rank and world_size from the arguments
    or RANK / WORLD_SIZE (the launcher sets them), the GPU from device_id or
    LOCAL_RANK (backend "nccl"); returns when every rank has joined."""
    if _state["comm"] is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    from .. import cuda
    rank = _env_int("RANK", 0) if rank is None or rank < 0 else int(rank)
    world_size = _env_int("WORLD_SIZE", 1) if world_size is None or world_size < 0 else int(world_size)
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, not {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is out of range for a world of {world_size} (0 to {world_size - 1})")
    if backend is None:
        backend = _os.environ.get("CUDAKIT_DIST_BACKEND") or (
            "nccl" if _core.get_default_device().type == "cuda" else "shm")
    backend = str(backend).lower()
    if backend == "gloo":
        backend = "shm"
    if backend not in ("nccl", "shm"):
        raise ValueError(f"unknown backend {backend!r} (nccl or shm)")
    secs = _seconds(timeout)
    if secs is not None:
        _core._comm_timeout(secs)
    if backend == "nccl":
        local = _env_int("LOCAL_RANK", rank) if device_id is None else (
            device_id if isinstance(device_id, int) else _core.Device(device_id).index)
        n = cuda.device_count()
        if local >= n:
            raise ValueError(f"rank {rank} would use GPU {local} (LOCAL_RANK), but this machine has {n} GPU(s)")
        cuda.Device(local).use()
        device = _core.Device("cuda", local)
        kind = "cuda"
    else:
        device = _core.Device("cpu")
        kind = "cpu"

    def make_id():
        return _core._comm_unique_id(kind)

    env_id = _os.environ.get("CUDAKIT_COMM_ID")
    init_method = init_method or _os.environ.get("CUDAKIT_INIT_METHOD")
    path = None
    if env_id:
        uid = bytes.fromhex(env_id)
    elif world_size == 1:
        uid = make_id()
    elif init_method and init_method.startswith("file://"):
        path = init_method[len("file://"):]
        uid = _rendezvous(path, rank, make_id, secs)
    else:
        raise ValueError("init_process_group needs init_method='file:///path' (or CUDAKIT_INIT_METHOD, or "
                         "CUDAKIT_COMM_ID) to find the other ranks; python -m cudakit.distributed.run sets it")
    comm = _core.Comm(world_size, uid, rank, device)
    if path is not None and rank == 0:
        try:
            _os.unlink(path)     # every rank has joined: the id was read
        except OSError:
            pass
    _state.update(comm=comm, backend=backend, rank=rank, world=world_size)


def destroy_process_group(group=None):
    """Free the default group's communicator (group is accepted; there is only the default group)."""
    c = _state["comm"]
    _state.update(comm=None, backend=None, rank=-1, world=-1)
    if c is not None:
        c.destroy()


def get_rank(group=None):
    """This process's rank in the default group."""
    return _need().rank


def get_world_size(group=None):
    """The number of ranks of the default group."""
    return _need().size


def get_backend(group=None):
    """The default group's backend name ('nccl' or 'shm')."""
    _need()
    return _state["backend"]


def _stream(c):
    from ..cuda import _stream_handle
    return _stream_handle(None, c.device)


def _op(op):
    from ..cuda.nccl import _op as op_of
    return op_of(op)


class _Work:
    """What async_op=True returns: the call is queued on the stream already."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def _done(async_op):
    return _Work() if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """tensor becomes the reduction over the ranks (in place)."""
    c = _need()
    c.all_reduce(tensor, tensor, _op(op), _stream(c))
    return _done(async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """At rank dst, tensor becomes the reduction over the ranks."""
    c = _need()
    c.reduce(tensor, tensor if c.rank == dst else None, _op(op), int(dst), _stream(c))
    return _done(async_op)


def broadcast(tensor, src=0, group=None, async_op=False):
    """Every rank's tensor becomes rank src's."""
    c = _need()
    c.broadcast(tensor if c.rank == src else None, tensor, int(src), _stream(c))
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output (world_size times input's size) holds every rank's input, in rank order."""
    c = _need()
    c.all_gather(input_tensor, output_tensor, _stream(c))
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] becomes rank r's tensor."""
    c = _need()
    if len(tensor_list) != c.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries, the world {c.size}")
    import cudakit as ck
    out = ck.empty((c.size,) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    c.all_gather(tensor, out, _stream(c))
    for r, t in enumerate(tensor_list):
        t[...] = out[r]
    return _done(async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output becomes block rank of the reduction of input over the ranks."""
    c = _need()
    c.reduce_scatter(input, output, _op(op), _stream(c))
    return _done(async_op)


def send(tensor, dst, group=None, tag=0):
    """Send tensor to rank dst (group and tag are accepted; the default group is used)."""
    c = _need()
    c.send(tensor, int(dst), _stream(c))


def recv(tensor, src, group=None, tag=0):
    """Receive into tensor from rank src; returns src (group and tag are accepted; the default group is used)."""
    c = _need()
    c.recv(tensor, int(src), _stream(c))
    return src


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank has come here."""
    _need().barrier()
    return _done(async_op)


def _communicator():
    """The default group's _core.Comm (cudakit.nn.parallel uses it)."""
    return _need()
