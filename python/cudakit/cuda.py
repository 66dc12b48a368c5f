"""cudakit.cuda: GPU devices, streams, events and memory, as in CuPy and PyTorch.

    >>> from cudakit import cuda
    >>> cuda.is_available()
    >>> with cuda.Device(0):
    ...     x = ck.ones(10, device="cuda")
    >>> s = cuda.Stream()
    >>> with s:
    ...     y = x * 2          # runs on s
    >>> s.synchronize()

The driver is loaded on first use; without one, ``is_available()`` is False
and everything else in cudakit keeps working on the CPU.
"""
import os as _os
import sys as _sys

from . import _core

CUDAError = _core.CUDAError
OutOfMemoryError = _core.OutOfMemoryError


def _add_wheel_library_dirs():
    # NVRTC and the CUDA libraries may come from the nvidia-* Python wheels
    for base in _sys.path:
        nv = _os.path.join(base, "nvidia")
        if not _os.path.isdir(nv):
            continue
        for sub in sorted(_os.listdir(nv)):
            lib = _os.path.join(nv, sub, "lib")
            if _os.path.isdir(lib):
                _core._add_library_dir(lib)


_add_wheel_library_dirs()


def is_available():
    """Whether a CUDA driver and at least one GPU are usable."""
    return _core._cuda_is_available()


def device_count():
    """Number of usable GPUs (0 without a driver)."""
    return _core._cuda_device_count()


def synchronize(device=None):
    """Wait for all work queued on a device (the current one by default)."""
    _core._cuda_synchronize(_index(device))


def _index(device):
    if device is None:
        return _core._cuda_get_device()
    if isinstance(device, Device):
        return device.id
    if isinstance(device, int):
        return device
    d = _core.Device(device)
    if d.type != "cuda":
        raise ValueError(f"{device!r} is not a CUDA device")
    return d.index


def get_device_properties(device=None):
    """A dict of the device's name, compute capability, memory and sizes."""
    return _core._cuda_properties(_index(device))


class Device:
    """A GPU: ``with Device(1):`` makes it current for the block; ``.use()`` for good."""

    def __init__(self, device=None):
        self.id = _index(device)
        if not 0 <= self.id < device_count():
            raise ValueError(f"invalid CUDA device {self.id} ({device_count()} available)")
        self._prev = []

    def use(self):
        _core._cuda_set_device(self.id)
        return self

    def __enter__(self):
        self._prev.append(_core._cuda_get_device())
        _core._cuda_set_device(self.id)
        return self

    def __exit__(self, *exc):
        _core._cuda_set_device(self._prev.pop())

    def synchronize(self):
        _core._cuda_synchronize(self.id)

    @property
    def compute_capability(self):
        major, minor = _core._cuda_properties(self.id)["compute_capability"]
        return f"{major}{minor}"

    @property
    def name(self):
        return _core._cuda_properties(self.id)["name"]

    @property
    def mem_info(self):
        """(free, total) bytes on the device."""
        return _core._cuda_mem_info(self.id)

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("cuda", self.id))

    def __int__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"

    def __str__(self):
        return f"cuda:{self.id}"


class Stream:
    """A non-blocking stream; ``with stream:`` makes it the current one for its device."""

    def __init__(self, device=None, non_blocking=True, *, null=False):
        self.device_id = _index(device)
        self.handle = None if null else _core._cuda_stream_create(self.device_id, non_blocking)
        self._owned = not null
        self._prev = []

    @classmethod
    def null(cls, device=None):
        """The device's default (legacy) stream."""
        return cls(device, null=True)

    def __enter__(self):
        self._prev.append(_core._cuda_set_stream(self.device_id, self.handle))
        return self

    def __exit__(self, *exc):
        _core._cuda_set_stream(self.device_id, self._prev.pop())

    def synchronize(self):
        _core._cuda_stream_synchronize(self.device_id, self.handle)

    def query(self):
        """True when all work queued on the stream is done."""
        return _core._cuda_stream_query(self.device_id, self.handle)

    def wait_event(self, event):
        _core._cuda_stream_wait_event(self.device_id, self.handle, event.handle)

    def record(self, event=None):
        event = Event(self.device_id) if event is None else event
        event.record(self)
        return event

    @property
    def ptr(self):
        return self.handle or 0

    def __del__(self):
        if getattr(self, "_owned", False) and self.handle is not None:
            try:
                _core._cuda_stream_destroy(self.device_id, self.handle)
            except Exception:
                pass

    def __repr__(self):
        return f"<cudakit.cuda.Stream {self.ptr:#x} on cuda:{self.device_id}>"


def current_stream(device=None):
    """The stream work on this device goes to now."""
    d = _index(device)
    s = Stream(d, null=True)
    s.handle = _core._cuda_get_stream(d)
    return s


class Event:
    """A point in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``."""

    def __init__(self, device=None, enable_timing=True):
        self.device_id = _index(device)
        self.handle = _core._cuda_event_create(self.device_id, enable_timing)

    def record(self, stream=None):
        h = _core._cuda_get_stream(self.device_id) if stream is None else stream.handle
        _core._cuda_event_record(self.device_id, self.handle, h)
        return self

    def synchronize(self):
        _core._cuda_event_synchronize(self.device_id, self.handle)

    def query(self):
        return _core._cuda_event_query(self.device_id, self.handle)

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (both recorded and complete)."""
        return _core._cuda_event_elapsed(self.device_id, self.handle, end.handle)

    def __del__(self):
        try:
            _core._cuda_event_destroy(self.device_id, self.handle)
        except Exception:
            pass


def memory_stats(device=None):
    """The pool's figures: allocated, peak, cached and reserved bytes, counts."""
    return _core._cuda_memory_stats(_index(device))


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes"]


def empty_cache(device=None):
    """Give the pool's cached blocks back to the driver."""
    _core._cuda_empty_cache(_index(device))


def set_memory_limit(limit, device=None):
    """Cap the bytes the pool may hold on a device (0: no cap)."""
    _core._cuda_set_memory_limit(_index(device), int(limit))


def reset_peak_memory_stats(device=None):
    _core._cuda_reset_peak(_index(device))


def to_device(obj, stream=None, copy=True, to=None):
    """Numba's name: a GPU array with obj's values."""
    return _core.asarray(obj, device="cuda" if to is None else to)


def device_array(shape, dtype="float64", stream=None):
    """Numba's name: an uninitialised GPU array."""
    return _core.empty(shape, dtype=dtype, device="cuda")


def pinned_empty(shape, dtype="float64"):
    """A CPU array in page-locked memory: copies to and from the GPU skip
    staging, and a copy to the GPU does not wait for the transfer."""
    return _core._cuda_pinned_empty(shape, dtype)


def pinned_array(obj, dtype=None):
    """A copy of obj in page-locked host memory (see pinned_empty)."""
    a = _core.asarray(obj, dtype=dtype, device="cpu")
    out = pinned_empty(a.shape, a.dtype)
    out[...] = a
    return out


def copy_to_host(arr, ary=None, stream=None):
    """Numba's name: the values as a NumPy array (into ary when given)."""
    return _core.asnumpy(arr, out=ary)


class _MatmulSettings:
    """``cudakit.cuda.matmul.allow_tf32``: whether float32 and complex64 matrix
    products on the GPU may round their inputs to TF32 (10-bit mantissa) for
    the tensor cores' speed, as ``torch.backends.cuda.matmul.allow_tf32``.
    False by default: products are full float32 unless you opt in."""

    __slots__ = ()

    @property
    def allow_tf32(self):
        return _core._get_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value):
        _core._set_allow_tf32(bool(value))

    def __repr__(self):
        return f"cudakit.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _MatmulSettings()
