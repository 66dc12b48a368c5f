"""cudakit.cuda: devices, streams, events and memory, as in CuPy, PyTorch and Numba.

    >>> from cudakit import cuda
    >>> x = cuda.to_device(np.arange(10.0))     # on the GPU, or the CPU without one
    >>> s = cuda.stream()
    >>> e0, e1 = cuda.event(), cuda.event()
    >>> e0.record(s)
    >>> y = cuda.device_array_like(x)
    >>> e1.record(s); e1.synchronize()
    >>> x.copy_to_host(), cuda.event_elapsed_time(e0, e1)

The driver is loaded on first use.  Without a GPU, ``is_available()`` is
False and everything here still works on the CPU, which is a device like any
other: its work is done when each call returns, so its streams are always
idle and its events carry the host clock (times are host times).  What truly
needs a GPU (``Device(0)``, ``device="cuda"``, ``CUDAKIT_DEVICE=cuda``) raises
one error, ``CUDAError: no usable CUDA device: <why>``.

Waits for a GPU (``synchronize`` of the device, a stream or an event, and
copies to the host) poll rather than block in the driver, so Ctrl-C ends
them with ``KeyboardInterrupt`` and ``set_kernel_timeout`` bounds them with a
``CUDAError``.  The kernel is not stopped by either: it and the work queued
behind it go on running, the context stays usable, later work on the stream
runs after it and the next wait waits for it again; only a kernel that
faults (or one a display's watchdog ends) leaves the context unusable.  On
the CPU, Ctrl-C and the time limit stop the kernel itself, between blocks or
at a loop's next turn (its outputs then partly written), and a fault or a
stack overflow in it is a ``CUDAError`` naming the kernel; docs/faults.md
says more.
"""
import os as _os
import sys as _sys

from .. import _core

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

from . import types  # noqa: E402
from ._intrinsics import *  # noqa: E402,F401,F403  (cuda.grid, cuda.threadIdx, cuda.shared.array ...)
from ._intrinsics import NAMES as _INTRINSIC_NAMES  # noqa: E402
from . import nvtx  # noqa: E402,F401
from ._sync import set_sync_debug_mode, get_sync_debug_mode  # noqa: E402,F401
from .types import (void, boolean, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64,  # noqa: E402,F401
                    intp, uintp, float16, float32, float64, complex64, complex128, from_dtype)

_CPU = _core.Device("cpu")

from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing  # noqa: E402,F401


def is_available():
    """Whether a CUDA driver and at least one GPU are usable."""
    return _core._cuda_is_available()


def device_count():
    """Number of usable GPUs (0 without a driver)."""
    return _core._cuda_device_count()


def unavailable_reason():
    """Why no GPU can be used (None when one can)."""
    return _core._cuda_unavailable_reason()


def _device(device=None):
    """The cudakit Device a call is about: None is the current GPU when one is
    usable, else the CPU; an int is a GPU ordinal; "cpu", "cuda:1", Device
    objects as everywhere.  Raises the one error for a GPU that cannot be used."""
    if device is None:
        if is_available():
            return _core.Device("cuda", _core._cuda_get_device())
        return _CPU
    if isinstance(device, Device):
        return _core.Device("cuda", device.id)
    if isinstance(device, Stream):
        return device.device
    return _core._device_check(device)


def _gpu_index(device):
    d = _core._device_check("cuda" if device is None else device)
    if d.type != "cuda":
        raise ValueError(f"{device!r} is not a CUDA device")
    if device is None:
        return _core._cuda_get_device()
    return d.index


def synchronize(device=None):
    """Wait for all work queued on a device (the current one by default)."""
    _core._device_synchronize(_device(device))


def set_kernel_timeout(seconds):
    """Stop a kernel that runs longer than ``seconds`` (``None`` or 0: no
    limit, the default unless ``CUDAKIT_KERNEL_TIMEOUT`` is set); returns the
    limit before (``None`` for none).  A launch on the CPU that runs past it
    ends with a ``CUDAError`` naming the kernel and the limit (its outputs
    partly written); on a GPU, a wait for the device (``synchronize``, a
    copy to the host) that lasts longer raises a ``CUDAError``, and the
    kernel may still be running."""
    return _core._set_kernel_timeout(seconds)


def get_device_properties(device=None):
    """A dict of the device's name, compute capability, memory and sizes."""
    return _core._device_properties(_device(device))


class Device:
    """A GPU: ``with Device(1):`` makes it current for the block; ``.use()`` for good."""

    def __init__(self, device=None):
        self.id = _gpu_index(device.id if isinstance(device, Device) else device)
        self._prev = []

    def use(self):
        """Make this GPU the current one (until another is made current); returns the Device."""
        _core._cuda_set_device(self.id)
        return self

    def __enter__(self):
        self._prev.append(_core._cuda_get_device())
        _core._cuda_set_device(self.id)
        return self

    def __exit__(self, *exc):
        _core._cuda_set_device(self._prev.pop())

    def synchronize(self):
        """Wait for all the work queued on this GPU."""
        _core._device_synchronize(_core.Device("cuda", self.id))

    @property
    def compute_capability(self):
        major, minor = self._props()["compute_capability"]
        return f"{major}{minor}"

    @property
    def name(self):
        return self._props()["name"]

    @property
    def mem_info(self):
        """(free, total) bytes on the device."""
        return _core._device_mem_info(_core.Device("cuda", self.id))

    def _props(self):
        return _core._device_properties(_core.Device("cuda", self.id))

    def can_access_peer(self, peer):
        """Whether this GPU reaches peer's memory directly (peer access, then
        enabled both ways: copies between them go over the link)."""
        return can_access_peer(self.id, peer)

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


def _peer_device(d):
    if isinstance(d, Device):
        return _core.Device("cuda", d.id)
    if isinstance(d, int):
        return _core.Device("cuda", d)
    return _core._device_check(d)


def can_access_peer(device, peer):
    """Whether two devices reach each other's memory directly: for two GPUs,
    cuDeviceCanAccessPeer, and peer access is then enabled both ways (copies
    between them, ``x.to_device("cuda:1")``, go over NVLink or PCIe P2P;
    without it the driver stages them through pinned host memory).  A
    device and itself: True."""
    return _core._device_can_access_peer(_peer_device(device), _peer_device(peer))


can_device_access_peer = can_access_peer   # PyTorch's name
deviceCanAccessPeer = can_access_peer      # CuPy's (cupy.cuda.runtime)


class _GPUs:
    """Numba's ``cuda.gpus``: the GPUs, ``len(cuda.gpus)``, ``cuda.gpus[i]``
    (a Device: ``with cuda.gpus[1]:``) and ``cuda.gpus.current``."""

    def __len__(self):
        return device_count()

    def __getitem__(self, i):
        n = device_count()
        if not isinstance(i, int) or not -n <= i < n:
            raise IndexError(f"there {'is' if n == 1 else 'are'} {n} usable GPU{'' if n == 1 else 's'}: "
                             f"no GPU {i!r}")
        return Device(i % n)

    def __iter__(self):
        return (Device(i) for i in range(device_count()))

    @property
    def current(self):
        return get_current_device()

    def __repr__(self):
        return f"<cudakit GPUs: {len(self)}>"


gpus = _GPUs()


def list_devices():
    """The usable GPUs, as Devices."""
    return list(gpus)


def select_device(device_id):
    """Make GPU device_id the current one (Numba's select_device); returns it."""
    return Device(device_id).use()


def get_current_device():
    """The current GPU (Numba's get_current_device); the one error when none can be used."""
    return Device(None)


def close():
    """Numba's cuda.close(): wait for the current GPU's work and release its cached memory."""
    if is_available():
        synchronize()
        empty_cache()


def detect():
    """Print the GPUs found and whether each is usable (Numba's cuda.detect());
    True when at least one is."""
    n = device_count()
    print(f"Found {n} CUDA device{'' if n == 1 else 's'}")
    for i in range(n):
        d = Device(i)
        print(f"id {i:>4} {d.name:>40} [SUPPORTED]")
        print(f"{'Compute Capability:':>40} {d.compute_capability[:-1]}.{d.compute_capability[-1]}")
    if not n:
        print(f"  ({unavailable_reason()}; cudakit runs the same code on the CPU)")
    else:
        print(f"Summary:\n\t{n}/{n} devices are supported")
    return n > 0


class Stream:
    """A stream of a device (the current GPU, or the CPU without one):
    ``with stream:`` makes it the current one for its device.  On the CPU,
    work is done when each call returns, so a stream is always idle."""

    def __init__(self, device=None, non_blocking=True, priority=0, *, null=False):
        self.device = _device(device)
        self.priority = 0 if null else int(priority)
        self.handle = None if null else _core._stream_create(self.device, non_blocking, self.priority)
        self._owned = not null
        self._prev = []

    @classmethod
    def null(cls, device=None):
        """The device's default stream."""
        return cls(device, null=True)

    @property
    def device_id(self):
        return self.device.index or 0

    def __enter__(self):
        self._prev.append(_core._stream_set_current(self.device, self.handle))
        return self

    def __exit__(self, *exc):
        _core._stream_set_current(self.device, self._prev.pop())

    def synchronize(self):
        """Wait for the work queued on the stream."""
        _core._stream_synchronize(self.device, self.handle)

    def query(self):
        """True when all work queued on the stream is done."""
        return _core._stream_query(self.device, self.handle)

    def wait_event(self, event):
        """Work queued on this stream from now on waits for event, which may
        be another device's: another GPU's (the driver orders them), or
        between a GPU and the CPU (the CPU's work is done when its calls
        return: a CPU stream waits for a GPU's event on the host)."""
        ed = event.device
        if ed.type != self.device.type:
            if self.device.type == "cpu":
                event.synchronize()
            return
        _core._stream_wait_event(self.device, self.handle, event.handle)

    def wait_stream(self, stream):
        """Work queued on this stream from now on waits for what stream holds now."""
        self.wait_event(stream.record())

    def record(self, event=None):
        """Record an event (a new one when None) at this point of the stream; returns it."""
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def auto_synchronize(self):
        """Numba's context manager: the stream is synchronized when the block ends."""
        return _AutoSync(self)

    @property
    def ptr(self):
        return self.handle or 0

    def __del__(self):
        if getattr(self, "_owned", False) and self.handle is not None:
            try:
                _core._stream_destroy(self.device, self.handle)
            except Exception:
                pass

    def __repr__(self):
        return f"<cudakit.cuda.Stream {self.ptr:#x} on {self.device}>"


class _AutoSync:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        self.stream.synchronize()


def current_stream(device=None):
    """The stream work on this device goes to now."""
    d = _device(device)
    s = Stream(d, null=True)
    s.handle = _core._stream_get_current(d)
    return s


def stream_priority_range(device=None):
    """(least, greatest) stream priorities: lower numbers run first."""
    return _core._stream_priority_range(_device(device))


def _stream_handle(stream, device):
    """A stream argument's handle: None is the current stream, 0 the default one."""
    if stream is None:
        return _core._stream_get_current(device)
    if isinstance(stream, Stream):
        return stream.handle
    if isinstance(stream, int):
        return stream or None
    h = getattr(stream, "handle", None) or getattr(stream, "ptr", None)
    return h or None


class Event:
    """A point in a stream: ``record``, ``synchronize``, ``query``, ``elapsed_time``."""

    def __init__(self, device=None, enable_timing=True):
        self.device = _device(device)
        self.handle = _core._event_create(self.device, enable_timing)

    def record(self, stream=None):
        """Record the event on stream (None: the current stream of its device); returns the event."""
        _core._event_record(self.device, self.handle, _stream_handle(stream, self.device))
        return self

    def synchronize(self):
        """Wait until the work before the event is done."""
        _core._event_synchronize(self.device, self.handle)

    def wait(self, stream=None):
        """Numba's name: work queued on stream from now on waits for this event."""
        if isinstance(stream, Stream):
            stream.wait_event(self)
            return
        _core._stream_wait_event(self.device, _stream_handle(stream, self.device), self.handle)

    def query(self):
        """True when the work before the event is done."""
        return _core._event_query(self.device, self.handle)

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end`` (both recorded and complete)."""
        return _core._event_elapsed(self.device, self.handle, end.handle)

    def __del__(self):
        try:
            _core._event_destroy(self.device, self.handle)
        except Exception:
            pass


def memory_stats(device=None):
    """The allocator's figures: allocated, peak, cached and reserved bytes, counts."""
    return _core._memory_stats(_device(device))


def memory_allocated(device=None):
    """The bytes of the device's arrays now (memory_stats' allocated_bytes)."""
    return memory_stats(device)["allocated_bytes"]


def empty_cache(device=None):
    """Give the allocator's cached blocks back to the system."""
    _core._memory_empty_cache(_device(device))


def set_memory_limit(limit, device=None):
    """Cap the bytes the allocator may hold on a device (0: no cap)."""
    _core._memory_set_limit(_device(device), int(limit))


def reset_peak_memory_stats(device=None):
    """Start the peak figures of memory_stats again from now."""
    _core._memory_reset_peak(_device(device))


def pinned_empty(shape, dtype="float64"):
    """A CPU array in page-locked memory: copies to and from the GPU skip
    staging, and a copy to the GPU does not wait for the transfer.  Plain
    host memory when no GPU is usable."""
    return _core._pinned_empty(shape, dtype)


def pinned_array(obj, dtype=None):
    """A copy of obj in page-locked host memory (see pinned_empty)."""
    a = _core.asarray(obj, dtype=dtype, device="cpu")
    out = pinned_empty(a.shape, a.dtype)
    out[...] = a
    return out


# ---------------------------------------------------------- Numba's names

def to_device(obj, stream=None, copy=True, to=None):
    """A device array (on the current GPU, or the CPU without one) with obj's
    values; with ``to``, obj's values are copied into that array instead."""
    if to is not None:
        to[...] = _core.asarray(obj, device=to.device)
        return to
    return _core.asarray(obj, device=_device(None), copy=True)


def device_array(shape, dtype="float64", strides=None, order="C", stream=None):
    """An uninitialised device array (on the current GPU, or the CPU without one)."""
    if strides is not None:
        raise NotImplementedError("device_array(strides=...): give order='C' or 'F' instead")
    if getattr(dtype, "names", None):   # Numba's xoroshiro128p_dtype records: their (n, 2) uint64 words
        from .random import _record_shape
        shape, dtype = _record_shape(shape, dtype)
    return _core.empty(shape, dtype=dtype, order=order, device=_device(None))


def device_array_like(ary, stream=None):
    """An uninitialised device array of ary's shape, dtype and order."""
    f = ary.ndim > 1 and ary.flags["F_CONTIGUOUS"] and not ary.flags["C_CONTIGUOUS"]
    return device_array(ary.shape, dtype=ary.dtype, order="F" if f else "C")


def copy_to_host(arr, ary=None, stream=None):
    """A NumPy array with a copy of the values (into ary when given)."""
    if isinstance(arr, _core.ndarray):
        return arr.copy_to_host(ary, stream)
    return _core.asnumpy(arr, out=ary)


def stream():
    """Numba's name: a new stream of the current device."""
    return Stream()


def default_stream():
    """Numba's name: the current device's default stream."""
    return Stream.null()


def event(timing=True):
    """Numba's name: a new event of the current device."""
    return Event(enable_timing=timing)


def event_elapsed_time(evtstart, evtend):
    """Numba's name: milliseconds between two recorded events."""
    return evtstart.elapsed_time(evtend)


_COMPILER_NAMES = ("jit", "Dispatcher", "DeviceFunction", "CompilerError", "TypingError", "UnsupportedError",
                   "KernelArgumentWarning")
_VECTORIZE_NAMES = ("vectorize", "guvectorize", "reduce", "Reduce")


def __getattr__(name):
    # the compiler (and NumPy with it) loads on first use, not with `import cudakit`
    if name in _COMPILER_NAMES:
        from . import compiler
        return getattr(compiler, name)
    if name == "nccl":     # cuda.nccl, as CuPy's, without `import cudakit.cuda.nccl` first
        import importlib
        return importlib.import_module(__name__ + ".nccl")
    if name == "random":   # cuda.random, as Numba's, without `import cudakit.cuda.random` first
        from . import random
        return random
    if name in _VECTORIZE_NAMES:
        from . import _vectorize
        return getattr(_vectorize, name)
    raise AttributeError(f"module 'cudakit.cuda' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_COMPILER_NAMES) | set(_VECTORIZE_NAMES) | {"nccl"})


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
