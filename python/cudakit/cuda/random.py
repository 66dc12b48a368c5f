"""cudakit.cuda.random: xoroshiro128+ generators for kernels, as Numba's numba.cuda.random.

    from cudakit import cuda
    from cudakit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @cuda.jit
    def compute_pi(states, iterations, out):
        i = cuda.grid(1)
        inside = 0
        for _ in range(iterations):
            x = xoroshiro128p_uniform_float32(states, i)
            y = xoroshiro128p_uniform_float32(states, i)
            if x * x + y * y <= 1.0:
                inside += 1
        out[i] = 4.0 * inside / iterations

    states = create_xoroshiro128p_states(64 * 24, seed=1)
    out = cuda.device_array(64 * 24, dtype="float32")
    compute_pi[24, 64](states, 10000, out)

Generator i is row i (s0, s1) of an (n, 2) uint64 array: cudakit arrays hold
numbers, so the states are the two words of Numba's ``xoroshiro128p_dtype``
records side by side (``states.copy_to_host().view(xoroshiro128p_dtype)[:, 0]``
are Numba's records).  The states are made in C (SplitMix64 seeding, then
generator i + 1 is generator i advanced by 2^64 steps), the same as Numba's
for the same seed; the draws give the same bits on the CPU and the GPU (the
normals through the platform's logf and cosf, which may differ in the last
bit).  NumPy arrays of ``xoroshiro128p_dtype`` records are accepted wherever
states are.
"""
import contextlib as _contextlib
import math as _math
import operator as _operator

import numpy as _np

from .. import _core
from . import types as _types
from ._intrinsics import Intrinsic as _Intrinsic

__all__ = ["xoroshiro128p_dtype", "xoroshiro128p_type", "create_xoroshiro128p_states", "init_xoroshiro128p_states",
           "init_xoroshiro128p_states_cpu", "init_xoroshiro128p_state", "xoroshiro128p_next", "xoroshiro128p_jump",
           "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
           "xoroshiro128p_normal_float64"]

xoroshiro128p_dtype = _np.dtype([("s0", _np.uint64), ("s1", _np.uint64)], align=True)
"""Numba's record of one generator's state; cudakit's states hold its two words as a row of uint64."""


class _StatesType(_types.Type):
    """Numba's xoroshiro128p_type: in signatures, ``xoroshiro128p_type[::1]`` is the
    type of create_xoroshiro128p_states' arrays (here: uint64, 2d, C)."""

    def __getitem__(self, item):
        items = item if isinstance(item, tuple) else (item,)
        if len(items) != 1 or not isinstance(items[0], slice) or items[0].start is not None or \
                items[0].stop is not None or items[0].step not in (None, 1):
            raise TypeError("arrays of xoroshiro128p states are one-dimensional: xoroshiro128p_type[:] or [::1]")
        return _types.Array(_types.uint64, 2, "C" if items[0].step == 1 else "A")

    def __repr__(self):
        return "xoroshiro128p_type"


xoroshiro128p_type = _StatesType()


def _u64(value, what, wrap):
    """value as a uint64, as Numba's uint64(value) converts (negative ints wrap when wrap)."""
    if isinstance(value, (float, _np.floating)):
        if not _math.isfinite(value):
            raise ValueError(f"{what} must be a finite number, not {value}")
        value = int(value)
    try:
        v = _operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    if v < 0 and not wrap:
        raise ValueError(f"{what} must be >= 0, not {v}")
    if not -(1 << 63) <= v < (1 << 64):
        raise OverflowError(f"{what} {v} does not fit in uint64")
    return v % (1 << 64)


def _is_records(d):
    """Whether dtype d is xoroshiro128p_dtype's layout: uint64 fields s0 and s1 at offsets 0 and 8."""
    return d.names == ("s0", "s1") and d.itemsize == 16 and \
        all(d.fields[n][:2] == (_np.dtype(_np.uint64), off) for n, off in (("s0", 0), ("s1", 8)))


def _not_states(d):
    return TypeError(f"cudakit arrays hold numbers: of the structured dtypes only Numba's xoroshiro128p_dtype "
                     f"(uint64 s0, s1) is taken, as an (n, 2) uint64 array, not {d}")


def _numpy_words(a):
    """A NumPy array of xoroshiro128p_dtype records as its (n, 2) uint64 view (other arrays as they are)."""
    if a.dtype.names is None:
        return a
    if not _is_records(a.dtype):
        raise _not_states(a.dtype)
    if a.ndim != 1:
        raise ValueError(f"an array of xoroshiro128p states is one-dimensional, not of shape {a.shape}")
    # field s0's view, widened over s1 (8 bytes on) as a second axis
    return _np.lib.stride_tricks.as_strided(a["s0"], (len(a), 2), (a.strides[0], 8))


def _record_shape(shape, dtype):
    """device_array(n, dtype=xoroshiro128p_dtype): the shape and dtype of the words that stand for the records."""
    d = _np.dtype(dtype)
    if not _is_records(d):
        raise _not_states(d)
    shape = (shape,) if not isinstance(shape, (tuple, list)) else tuple(shape)
    if len(shape) != 1:
        raise ValueError(f"an array of xoroshiro128p states is one-dimensional, not of shape {shape}")
    return (_operator.index(shape[0]), 2), "uint64"


def _on(stream, device):
    """A stream argument's context: a Stream of the device becomes the current one; anything else changes nothing."""
    from . import Stream
    return stream if isinstance(stream, Stream) and stream.device == device else _contextlib.nullcontext()


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Fill states (a cudakit (n, 2) uint64 array on any device, or a NumPy array
    of xoroshiro128p_dtype records or of (n, 2) uint64) with n generators: the
    first is seed's SplitMix64 state advanced by subsequence_start * 2^64 steps,
    each next one 2^64 steps past the one before, so their streams do not overlap."""
    seed = _u64(seed, "seed", True)
    sub = _u64(subsequence_start, "subsequence_start", False)
    if isinstance(states, _np.ndarray):
        words = _numpy_words(states)
        if words.dtype != _np.uint64 or words.ndim != 2 or words.shape[1] != 2:
            raise TypeError(f"xoroshiro128p states are an (n, 2) uint64 array (s0, s1 per row), not a {words.dtype} "
                            f"array of shape {words.shape}")
        if not words.flags.writeable:
            raise ValueError("assignment destination is read-only")
        tmp = _core.empty(words.shape, dtype="uint64", device="cpu")
        _core._xoroshiro128p_init(tmp, seed, sub)
        _np.copyto(words, _core.asnumpy(tmp))
        return
    if not isinstance(states, _core.ndarray):
        raise TypeError(f"states must be a cudakit or NumPy array, not {type(states).__name__}")
    with _on(stream, states.device):
        _core._xoroshiro128p_init(states, seed, sub)


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Numba's host-side initialisation: init_xoroshiro128p_states on a host array."""
    init_xoroshiro128p_states(states, seed, subsequence_start)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0, *, device=None):
    """A new (n, 2) uint64 array of n generators' states (see init_xoroshiro128p_states),
    on the device given, else the stream's, else the current GPU (the CPU without one)."""
    n = _operator.index(n)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    from . import Stream, _device
    if device is None and isinstance(stream, Stream):
        dev = stream.device
    else:
        dev = _device(device)
    seed = _u64(seed, "seed", True)
    sub = _u64(subsequence_start, "subsequence_start", False)
    with _on(stream, dev):
        # made on the stream that fills it, so the allocator orders the memory's reuse by it
        states = _core.empty((n, 2), dtype="uint64", device=dev)
        _core._xoroshiro128p_init(states, seed, sub)
    return states


# ------------------------------------------------------------ in kernels

def _draw(name, doc):
    return _Intrinsic(f"cuda.random.{name}", doc)


xoroshiro128p_uniform_float32 = _draw(
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float32(states, index): a float32 in [0, 1) "
    "(the float64 draw rounded, so 1.0 once in 2^25) from generator index, which it advances.")
xoroshiro128p_uniform_float64 = _draw(
    "xoroshiro128p_uniform_float64", "xoroshiro128p_uniform_float64(states, index): a float64 in [0, 1) "
    "(the step's top 53 bits) from generator index, which it advances.")
xoroshiro128p_normal_float32 = _draw(
    "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float32(states, index): a standard normal float32 "
    "(Box-Muller on two float32 uniforms: two steps).")
xoroshiro128p_normal_float64 = _draw(
    "xoroshiro128p_normal_float64", "xoroshiro128p_normal_float64(states, index): a standard normal float64 "
    "(Box-Muller on two float32 uniforms, as Numba's: two steps).")
xoroshiro128p_next = _draw(
    "xoroshiro128p_next", "xoroshiro128p_next(states, index): the next uint64 of generator index (s0 + s1).")
xoroshiro128p_jump = _draw(
    "xoroshiro128p_jump", "xoroshiro128p_jump(states, index): advance generator index by 2^64 steps.")
init_xoroshiro128p_state = _draw(
    "init_xoroshiro128p_state", "init_xoroshiro128p_state(states, index, seed): generator index from seed "
    "(SplitMix64), without jumps.")
