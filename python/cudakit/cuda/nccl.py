"""cudakit.cuda.nccl: NCCL's communicators, as CuPy spells them, on every device.

    >>> from cudakit.cuda import nccl
    >>> uid = nccl.get_unique_id()                  # rank 0 makes it, the others get a copy
    >>> comm = nccl.NcclCommunicator(n_ranks, uid, rank)
    >>> y = comm.all_reduce(x)                     # cudakit arrays: sum over the ranks
    >>> comm.allReduce(x.data.ptr, x.data.ptr, x.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr)   # CuPy's

On a GPU the communicator is NCCL's (libnccl.so.2, loaded on first use from
``$CUDA_PATH``, ``/usr/local/cuda``, the ``nvidia-nccl-cu13``/``-cu12``
wheels or the loader path), each call queued on the current stream (or the
one given).  Where the default device is the CPU, ``get_unique_id()`` makes
an id for the CPU's communicator instead: the ranks are processes of this
machine meeting in shared memory, the reductions done in C, with the same
calls; there a rank that calls something else than the others gets a
``ValueError`` and one that waits longer than the timeout
(``cudakit.distributed``'s, or ``CUDAKIT_COMM_TIMEOUT``, 300 s by default) a
``TimeoutError``, on every rank.  NVLink multicast (NVLS) stays off: NCCL is
loaded with ``NCCL_NVLS_ENABLE=0`` unless the variable is set.

Reductions take int8, uint8, int32, uint32, int64, uint64, float16, float32
and float64 (NCCL's types), complex for sum and avg, bool for max and min;
broadcast, all_gather, send and recv move any dtype.
"""
from .. import _core

__all__ = ["NcclCommunicator", "get_unique_id", "get_version", "get_build_version", "groupStart", "groupEnd",
           "NcclError", "NCCL_SUM", "NCCL_PROD", "NCCL_MAX", "NCCL_MIN", "NCCL_AVG"]

NcclError = _core.CUDAError

NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4
NCCL_INT8 = NCCL_CHAR = 0
NCCL_UINT8 = 1
NCCL_INT32 = NCCL_INT = 2
NCCL_UINT32 = 3
NCCL_INT64 = 4
NCCL_UINT64 = 5
NCCL_FLOAT16 = NCCL_HALF = 6
NCCL_FLOAT32 = NCCL_FLOAT = 7
NCCL_FLOAT64 = NCCL_DOUBLE = 8

_TYPES = {NCCL_INT8: "int8", NCCL_UINT8: "uint8", NCCL_INT32: "int32", NCCL_UINT32: "uint32", NCCL_INT64: "int64",
          NCCL_UINT64: "uint64", NCCL_FLOAT16: "float16", NCCL_FLOAT32: "float32", NCCL_FLOAT64: "float64"}
_OPS = {"sum": 0, "prod": 1, "product": 1, "max": 2, "min": 3, "avg": 4, "mean": 4}


def _op(op):
    """A reduction: "sum", "prod", "max", "min", "avg", NCCL_* or a ReduceOp."""
    if isinstance(op, str):
        try:
            return _OPS[op.lower()]
        except KeyError:
            raise ValueError(f"unknown reduction {op!r} (sum, prod, max, min or avg)") from None
    v = int(op)
    if not 0 <= v <= 4:
        raise ValueError(f"unknown reduction {op!r} (sum, prod, max, min or avg)")
    return v


def _dtype(datatype):
    if isinstance(datatype, int):
        try:
            return _TYPES[datatype]
        except KeyError:
            raise ValueError(f"NCCL datatype {datatype} is not one cudakit has (bfloat16 and the float8 types "
                             "are not cudakit dtypes)") from None
    return datatype


def get_version():
    """The NCCL library's version code (22809 for 2.28.9); loads it, and raises
    a CUDAError naming where it looked when it is absent."""
    return _core._nccl_version()


get_build_version = get_version   # cudakit is built without NCCL: the loaded one is the one


def get_unique_id(device=None):
    """A new id (a tuple of 128 ints, as CuPy's) for a communicator on the
    default device's kind: NCCL's where that is a GPU, the CPU's shared-memory
    one otherwise; ``device="cpu"`` or ``"cuda"`` chooses."""
    return tuple(_core._comm_unique_id(device))


def _id_bytes(uid):
    if isinstance(uid, (bytes, bytearray, memoryview)):
        return bytes(uid)
    b = bytes(int(v) & 0xFF for v in uid)
    if len(b) != 128:
        raise ValueError(f"a unique id has 128 values, not {len(b)}")
    return b


def groupStart():
    """Start a group: the calls up to groupEnd() are started together (the
    ranks of initAll's communicators, sends and receives that would wait for
    each other's order)."""
    _core._comm_group_start()


def groupEnd():
    """End the group started by groupStart(): its calls run (on the CPU) or are
    queued (NCCL); their errors are raised here."""
    _core._comm_group_end()


group_start, group_end = groupStart, groupEnd


class _Group:
    def __enter__(self):
        groupStart()
        return self

    def __exit__(self, *exc):
        groupEnd()


def group():
    """``with nccl.group():`` is groupStart() ... groupEnd()."""
    return _Group()


def _empty(shape, dtype, device):
    import cudakit as ck
    return ck.empty(shape, dtype=dtype, device=device)


class NcclCommunicator:
    """One rank of a communicator of ``n_ranks`` sharing ``unique_id``:
    ``NcclCommunicator(n_ranks, unique_id, rank)`` returns once every rank has
    joined.  A GPU id's rank is on the current GPU; a CPU id's on the CPU."""

    def __init__(self, n_ranks, unique_id, rank, device=None):
        self._c = _core.Comm(int(n_ranks), _id_bytes(unique_id), int(rank), device)

    @classmethod
    def _wrap(cls, c):
        self = cls.__new__(cls)
        self._c = c
        return self

    @staticmethod
    def initAll(devices):
        """One communicator of len(devices) ranks in this process, rank i on
        devices[i] (GPU ordinals; an int n is GPUs 0..n-1, or n CPU ranks where
        the default device is the CPU).  Call their collectives inside
        groupStart()/groupEnd()."""
        if isinstance(devices, int):
            on_gpu = _core.get_default_device().type == "cuda"
            devices = list(range(devices)) if on_gpu else ["cpu"] * devices
        return [NcclCommunicator._wrap(c) for c in _core._comm_init_all(list(devices))]

    # ---------------------------------------------------------- facts
    @property
    def rank(self):
        return self._c.rank

    @property
    def world_size(self):
        return self._c.size

    @property
    def device(self):
        return self._c.device

    @property
    def backend(self):
        """'nccl' or 'shm' (the CPU's)."""
        return self._c.backend

    def rank_id(self):
        """This rank's number in the communicator."""
        return self._c.rank

    def size(self):
        """The number of ranks."""
        return self._c.size

    def device_id(self):
        """The ordinal of this rank's GPU (0 for the CPU's communicators)."""
        return self._c.device.index or 0

    def destroy(self):
        """Free the communicator (NCCL: after the work queued on it)."""
        self._c.destroy()

    def abort(self):
        """Free it at once; the other ranks' calls on it then fail."""
        self._c.abort()

    def check_async_error(self):
        """RuntimeError when the communicator was destroyed or aborted."""
        if not self._c.alive:
            raise RuntimeError("the communicator was destroyed (or aborted)")

    def _stream(self, stream):
        from . import _stream_handle
        return _stream_handle(stream, self._c.device)

    # --------------------------------------------------- on cudakit arrays
    def all_reduce(self, x, out=None, op="sum", stream=None):
        """The reduction of x over the ranks, into out (a new array when None;
        ``out=x`` reduces in place); returns out."""
        if out is None:
            out = _empty(x.shape, x.dtype, x.device)
        self._c.all_reduce(x, out, _op(op), self._stream(stream))
        return out

    def reduce(self, x, out=None, op="sum", root=0, stream=None, *rest):
        """The reduction of x over the ranks, at root (into out, a new array
        when None); returns it at root, None elsewhere.
        ``reduce(sendbuf, recvbuf, count, datatype, op, root, stream)`` with
        pointers is CuPy's."""
        if isinstance(x, int):
            return self.reduce_raw(x, out, op, root, stream, *rest)
        at_root = self._c.rank == int(root)
        if out is None and at_root:
            out = _empty(x.shape, x.dtype, x.device)
        self._c.reduce(x, out if at_root else None, _op(op), int(root), self._stream(stream))
        return out if at_root else None

    def broadcast(self, x, *args, root=0, stream=None, **kw):
        """``broadcast(x, root=0)``: root's x into every rank's x (in place);
        returns x.  ``broadcast(sendbuf, recvbuf, count, datatype, root, stream)``
        with pointers is CuPy's."""
        if isinstance(x, int) and args:
            return self._raw_call("broadcast", x, *args, **kw)
        if args:
            root = args[0]
        self._c.broadcast(x if self._c.rank == int(root) else None, x, int(root), self._stream(stream))
        return x

    def all_gather(self, x, out=None, stream=None):
        """Every rank's x, stacked: out has shape (n_ranks, *x.shape)."""
        if out is None:
            out = _empty((self._c.size,) + tuple(x.shape), x.dtype, x.device)
        self._c.all_gather(x, out, self._stream(stream))
        return out

    def reduce_scatter(self, x, out=None, op="sum", stream=None):
        """The reduction of x over the ranks, split along its first axis: rank r
        gets block r (shape (x.shape[0] // n_ranks, *x.shape[1:]))."""
        n = self._c.size
        if out is None:
            if x.ndim == 0 or x.shape[0] % n:
                raise ValueError(f"reduce_scatter: the first axis ({x.shape[0] if x.ndim else 'none'}) is not a "
                                 f"multiple of the {n} ranks")
            out = _empty((x.shape[0] // n,) + tuple(x.shape[1:]), x.dtype, x.device)
        self._c.reduce_scatter(x, out, _op(op), self._stream(stream))
        return out

    def send(self, x, *args, peer=None, stream=None):
        """``send(x, peer)``: x to rank peer, which calls recv.
        ``send(sendbuf, count, datatype, peer, stream)`` is CuPy's."""
        if isinstance(x, int):
            count, datatype, peer, stream = (args + (None,) * 4)[:4]
            self._c.raw("send", x, None, int(count), _dtype(datatype), 0, int(peer), self._stream(stream))
            return None
        if args:
            peer = args[0]
        self._c.send(x, int(peer), self._stream(stream))

    def recv(self, x, *args, peer=None, stream=None):
        """``recv(x, peer)``: into x (its shape and dtype what peer sends).
        ``recv(recvbuf, count, datatype, peer, stream)`` is CuPy's."""
        if isinstance(x, int):
            count, datatype, peer, stream = (args + (None,) * 4)[:4]
            self._c.raw("recv", None, x, int(count), _dtype(datatype), 0, int(peer), self._stream(stream))
            return None
        if args:
            peer = args[0]
        self._c.recv(x, int(peer), self._stream(stream))
        return x

    def barrier(self):
        """Wait until every rank has come here (on a GPU: and the work queued
        before on the current stream is done)."""
        self._c.barrier()

    # ------------------------------------------------ CuPy's raw pointers
    def _raw_call(self, kind, send, recv, count, datatype, root, stream=None):
        self._c.raw(kind, send, recv, int(count), _dtype(datatype), 0, int(root), self._stream(stream))

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream=None):
        """CuPy's allReduce on raw device pointers: recvbuf = the reduction op of every rank's sendbuf
        (count elements of datatype).
        """
        self._c.raw("all_reduce", sendbuf, recvbuf, int(count), _dtype(datatype), _op(op), 0, self._stream(stream))

    def reduce_raw(self, sendbuf, recvbuf, count, datatype, op, root, stream=None):
        """CuPy's reduce on raw device pointers: the reduction op of every rank's sendbuf into root's recvbuf."""
        self._c.raw("reduce", sendbuf, recvbuf, int(count), _dtype(datatype), _op(op), int(root), self._stream(stream))

    def bcast(self, buff, count, datatype, root, stream=None):
        """CuPy's bcast on a raw device pointer: root's buff into every rank's buff."""
        self._c.raw("broadcast", buff, buff, int(count), _dtype(datatype), 0, int(root), self._stream(stream))

    def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op, stream=None):
        """CuPy's reduceScatter on raw device pointers: the reduction of every rank's sendbuf, each rank
        getting its recvcount elements in recvbuf.
        """
        self._c.raw("reduce_scatter", sendbuf, recvbuf, int(recvcount), _dtype(datatype), _op(op), 0,
                    self._stream(stream))

    def allGather(self, sendbuf, recvbuf, count, datatype, stream=None):
        """CuPy's allGather on raw device pointers: every rank's count elements, in rank order, into
        each rank's recvbuf.
        """
        self._c.raw("all_gather", sendbuf, recvbuf, int(count), _dtype(datatype), 0, 0, self._stream(stream))

    def __repr__(self):
        return (f"<cudakit.cuda.nccl.NcclCommunicator rank {self._c.rank} of {self._c.size} on {self._c.device} "
                f"({self._c.backend})>")
