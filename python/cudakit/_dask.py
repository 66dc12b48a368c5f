"""cudakit arrays as the chunks of dask.array, on every device.

Three registrations, each found by Dask without the user calling anything:

- the array backend ``"cudakit"`` (the ``dask.array.backends`` entry point in
  pyproject.toml): ``dask.config.set({"array.backend": "cudakit"})`` makes
  ``da.ones``, ``da.zeros``, ``da.full``, ``da.arange``, ``da.random.*`` ...
  create cudakit chunks on cudakit's default device (``ck.set_default_device``,
  or ``CUDAKIT_DEVICE``; in a cluster, each worker's: give workers
  ``CUDAKIT_DEVICE`` as docs/dask.md shows);
- Dask's per-type dispatch tables (concatenate, tensordot, einsum, take,
  percentile, element counts, ``to_numpy``) and ``sizeof`` (the
  ``dask.sizeof`` entry point, which Dask loads whenever it imports
  ``dask.sizeof``), so chunks are joined and measured by cudakit;
- distributed's serialization: a chunk travels as a small header (dtype,
  shape, device) and one frame of its bytes, never through a Python object of
  its elements; a GPU chunk's bytes come through host memory.  It is in place
  once this module is imported in a process that has ``distributed``:
  ``import cudakit`` does that when ``distributed`` was imported first, the
  backend entry point does it, and so does ``register()``.  A chunk
  serialized before that is pickled (cudakit arrays pickle their bytes).

NumPy functions that Dask calls on chunks (``np.sum``, ``np.broadcast_to``,
...) reach cudakit through ``__array_function__``.
"""
import sys

import numpy as _np

import cudakit as ck

__all__ = ["CudakitBackendEntrypoint", "local_cluster", "register", "register_distributed", "sizeof_plugin"]

_registered = set()


def _device():
    return ck.get_default_device()


# ------------------------------------------------------------ dask.array tables

def _register_array_tables():
    if "array" in _registered:
        return
    from dask.array import dispatch as d

    nd = ck.ndarray
    d.concatenate_lookup.register(nd)(ck.concatenate)
    d.tensordot_lookup.register(nd)(ck.tensordot)
    d.take_lookup.register(nd)(ck.take)
    d.einsum_lookup.register(nd)(_einsum)
    d.empty_lookup.register(nd)(ck.empty)
    d.divide_lookup.register(nd)(ck.divide)
    d.percentile_lookup.register(nd)(_percentile)
    d.numel_lookup.register(nd)(_numel)
    d.nannumel_lookup.register(nd)(_nannumel)
    d.to_numpy_dispatch.register(nd)(_to_numpy)
    _to_cudakit.register(_np.ndarray)(_from_numpy)
    _to_cudakit.register(nd)(_same)
    _registered.add("array")


def _einsum(*args, **kwargs):
    # Dask passes NumPy's optimisation keyword; cudakit plans its own contraction
    kwargs.pop("optimize", None)
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    return ck.einsum(*args, **kwargs)


def _percentile(a, q, method="linear"):
    # Dask merges the per-chunk percentiles on the host with NumPy
    n = a.size
    q = _np.asarray(q)
    if not n:
        return None, n
    return ck.asnumpy(ck.percentile(a, q, method=method)), n


def _numel(x, **kwargs):
    axis = kwargs.get("axis")
    keepdims = kwargs.get("keepdims", False)
    dtype = kwargs.get("dtype", _np.float64)
    shape = x.shape
    if axis is None:
        n = int(_np.prod(shape, dtype=_np.int64))
        out_shape = (1,) * len(shape) if keepdims else ()
        return ck.full(out_shape, n, dtype=dtype, device=x.device)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(a % len(shape) for a in axes)
    n = int(_np.prod([shape[a] for a in axes], dtype=_np.int64))
    out_shape = tuple(1 if i in axes else s for i, s in enumerate(shape)) if keepdims \
        else tuple(s for i, s in enumerate(shape) if i not in axes)
    return ck.full(out_shape, n, dtype=dtype, device=x.device)


def _nannumel(x, **kwargs):
    return ck.sum(~ck.isnan(x), **kwargs)


def _to_numpy(data, **kwargs):
    return ck.asnumpy(data)


def _from_numpy(data, **kwargs):
    return ck.asarray(data, device=kwargs.get("device", _device()))


def _same(data, **kwargs):
    dev = kwargs.get("device")
    return data if dev is None else data.to_device(dev)


def _make_to_cudakit():
    from dask.utils import Dispatch

    return Dispatch("to_cudakit_dispatch")


class _LazyDispatch:
    """Dask's Dispatch, made on first use so that importing this module needs no dask."""

    def __init__(self):
        self._d = None

    def __getattr__(self, name):
        if self._d is None:
            self._d = _make_to_cudakit()
        return getattr(self._d, name)

    def __call__(self, *args, **kwargs):
        if self._d is None:
            self._d = _make_to_cudakit()
        return self._d(*args, **kwargs)


_to_cudakit = _LazyDispatch()


# ------------------------------------------------------------ sizeof

def _sizeof(x):
    return int(x.nbytes)


def sizeof_plugin(sizeof):
    """The ``dask.sizeof`` entry point: Dask calls it with its sizeof table when it imports it."""
    sizeof.register_lazy("cudakit")(_register_sizeof_now)


def _register_sizeof_now():
    from dask.sizeof import sizeof

    sizeof.register(ck.ndarray)(_sizeof)


# ------------------------------------------------------------ distributed

def _serialize(x):
    dev = str(x.device)
    host = ck.asnumpy(x)
    if not host.flags.c_contiguous:
        host = _np.ascontiguousarray(host)
    header = {"dtype": host.dtype.str, "shape": list(host.shape), "device": dev}
    return header, [memoryview(host).cast("B") if host.size else b""]


def _deserialize(header, frames):
    dtype = _np.dtype(header["dtype"])
    shape = tuple(header["shape"])
    buf = frames[0] if frames else b""
    host = _np.frombuffer(buf, dtype=dtype).reshape(shape) if shape != () or len(buf) else \
        _np.empty(shape, dtype)
    dev = header.get("device", "cpu")
    return ck.asarray(host, device=dev)


def register_distributed():
    """Register the chunks' serialization with ``distributed`` (which must import)."""
    if "distributed" in _registered:
        return
    from distributed.protocol.serialize import dask_deserialize, dask_serialize

    dask_serialize.register(ck.ndarray)(_serialize)
    dask_deserialize.register(ck.ndarray)(_deserialize)
    _registered.add("distributed")


def register():
    """Register everything this module offers with the Dask (and distributed) in this process."""
    _register_array_tables()
    _register_sizeof_now()
    try:
        register_distributed()
    except ImportError:
        pass


def _register_if_loaded():
    # called by `import cudakit`: register with what the process already has
    if "dask.array" in sys.modules:
        _register_array_tables()
    if "dask.sizeof" in sys.modules:
        _register_sizeof_now()
    if "distributed.protocol.serialize" in sys.modules or "distributed" in sys.modules:
        try:
            register_distributed()
        except ImportError:
            pass


# ------------------------------------------------------------ clusters

def _worker_env(device, threads):
    """The environment of a worker process for one device: a GPU worker
    sees its GPU alone (as cuda:0), a CPU worker's libraries keep to its
    threads."""
    d = ck.device(device) if not isinstance(device, ck.Device) else device
    env = {"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    if d.type == "cuda":
        env.update(CUDA_VISIBLE_DEVICES=str(d.index or 0), CUDAKIT_DEVICE="cuda")
    else:
        env.update(CUDAKIT_DEVICE="cpu")
    return env


def local_cluster(devices=None, *, threads_per_worker=1, memory_limit="auto", **kwargs):
    """A ``distributed`` cluster on this machine, one worker process per
    entry of ``devices``: ``"cuda:i"`` gives a worker that sees GPU i alone
    (``CUDA_VISIBLE_DEVICES=i``, its cudakit default device ``cuda``), as
    dask-cuda's ``LocalCUDACluster`` does; ``"cpu"`` a CPU worker.  The
    default: one worker per GPU, or where none is usable two CPU workers.
    Use it with ``distributed.Client(cluster)``; further keywords go to
    ``distributed.SpecCluster``.  docs/dask.md has the recipes."""
    from distributed import Nanny, Scheduler, SpecCluster

    if devices is None:
        n = ck.cuda.device_count() if ck.cuda.is_available() else 0
        devices = [f"cuda:{i}" for i in range(n)] or ["cpu", "cpu"]
    if isinstance(devices, (str, ck.Device)):
        devices = [devices]
    devices = list(devices)
    if not devices:
        raise ValueError("local_cluster: devices is empty: name at least one (\"cpu\", \"cuda:0\", ...)")
    workers = {}
    for i, dev in enumerate(devices):
        workers[f"{str(dev).replace(':', '-')}-{i}"] = {
            "cls": Nanny,
            "options": {"nthreads": threads_per_worker, "memory_limit": memory_limit,
                        "env": _worker_env(dev, threads_per_worker)}}
    kwargs.setdefault("scheduler", {"cls": Scheduler, "options": {"dashboard_address": None}})
    return SpecCluster(workers=workers, **kwargs)


# ------------------------------------------------------------ the backend

def _with_cudakit_meta(attr, *args, meta=None, **kwargs):
    # Dask's own creation functions make each chunk from meta by NumPy's
    # *_like functions, which __array_function__ hands to cudakit
    import dask
    import dask.array as da

    meta = ck.empty((), device=_device()) if meta is None else meta
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, attr)(*args, meta=meta, **kwargs)


def _make_backend_class():
    from dask.array.backends import ArrayBackendEntrypoint

    class CudakitBackendEntrypoint(ArrayBackendEntrypoint):
        """Dask's array backend "cudakit": chunks are cudakit arrays."""

        def __init__(self):
            register()

        @classmethod
        def to_backend_dispatch(cls):
            return _to_cudakit

        @classmethod
        def to_backend(cls, data, **kwargs):
            if isinstance(data._meta, ck.ndarray):
                return data
            return data.map_blocks(_to_cudakit, **kwargs)

        @property
        def RandomState(self):
            return ck.random.RandomState

        @property
        def default_bit_generator(self):
            return ck.random.BitGenerator

        @staticmethod
        def ones(*args, **kwargs):
            return _with_cudakit_meta("ones", *args, **kwargs)

        @staticmethod
        def zeros(*args, **kwargs):
            return _with_cudakit_meta("zeros", *args, **kwargs)

        @staticmethod
        def empty(*args, **kwargs):
            return _with_cudakit_meta("empty", *args, **kwargs)

        @staticmethod
        def full(*args, **kwargs):
            return _with_cudakit_meta("full", *args, **kwargs)

        @staticmethod
        def arange(*args, like=None, **kwargs):
            import dask
            import dask.array as da

            like = ck.empty((), device=_device()) if like is None else like
            with dask.config.set({"array.backend": "numpy"}):
                return da.arange(*args, like=like, **kwargs)

    return CudakitBackendEntrypoint


def __getattr__(name):
    if name == "CudakitBackendEntrypoint":
        cls = _make_backend_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
