"""cudakit.random: random numbers from our own Philox4x32-10 stream.

    >>> import cudakit as ck
    >>> rng = ck.random.default_rng(42)
    >>> x = rng.standard_normal((3, 4))
    >>> k = rng.integers(0, 10, size=5, device="cpu")

The bits are Philox4x32-10 (Salmon et al., SC 2011), bit-identical to
Random123's, computed in the C core (``include/cudakit_random.h`` documents
which counter and word each element comes from).  Being counter-based, the
CPU fills are split over the cores without changing a bit, and a GPU kernel
can reproduce them from the same (key, counter).

A ``Generator``'s state is a 64-bit key and a 128-bit counter:

* key = SplitMix64(seed) for a seed below 2**64; larger seeds (and
  sequences of ints) fold in 64 bits at a time, h = SplitMix64(h ^ limb);
  ``seed=None`` takes 128 bits from ``os.urandom``.  The key's low 32 bits
  are Philox's key word 0.
* every call starts at the counter and advances it by the counter values it
  used, so successive calls give fresh numbers.

The streams differ from NumPy's (as CuPy's do): same distributions, not the
same numbers.  On a GPU, bits, uniform, normal, exponential and integers
are drawn there by the same formulas (bitwise the same numbers; normal and
exponential to the math library's last ulp); the other distributions are
drawn on the CPU and copied.  As elsewhere in cudakit, ``size=None`` gives
a 0-d array rather than a Python scalar.
"""
import math as _math
import operator as _operator
import os as _os

import numpy as _np

from . import _core

__all__ = [
    "Generator", "default_rng", "seed", "rand", "randn", "randint", "random", "random_sample", "sample",
    "ranf", "uniform", "normal", "standard_normal", "exponential", "standard_exponential", "integers",
    "choice", "shuffle", "permutation", "binomial", "poisson", "gamma", "beta", "get_state", "set_state",
    "BitGenerator", "RandomState",
]

_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1
# NumPy's bound: beyond it the int64 result could overflow
_POISSON_LAM_MAX = 9.223372006484771e18


def _splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _key_from_seed(seed):
    if seed is None:
        seed = int.from_bytes(_os.urandom(16), "little")
    if isinstance(seed, (list, tuple)) or (hasattr(seed, "ndim") and getattr(seed, "ndim", 0) > 0):
        limbs = [_seed_int(s) for s in (seed.tolist() if hasattr(seed, "tolist") else seed)]
        if not limbs:
            raise ValueError("a seed sequence must not be empty")
    else:
        limbs = [_seed_int(seed)]
    h = 0
    for v in limbs:
        while True:
            h = _splitmix64(h ^ (v & _MASK64))
            v >>= 64
            if not v:
                break
    return h


def _seed_int(s):
    if isinstance(s, float) or (hasattr(s, "dtype") and getattr(s.dtype, "kind", "") == "f"):
        raise TypeError("SeedSequence expects int or sequence of ints for entropy not %r" % (s,))
    try:
        v = _operator.index(s)
    except TypeError:
        raise TypeError("SeedSequence expects int or sequence of ints for entropy not %r" % (s,)) from None
    if v < 0:
        raise ValueError("expected non-negative integer")
    return v


def _shape(size):
    if size is None:
        return ()
    try:
        return (_operator.index(size),)
    except TypeError:
        return tuple(_operator.index(s) for s in size)


def _dtname(dtype):
    try:
        return _np.dtype(dtype).name
    except TypeError:
        return str(getattr(dtype, "name", dtype))


def _on(arr, device):
    """arr (a CPU array) on device; the default device when None."""
    if device is None:
        device = _core.get_default_device()
        if device.type == "cpu":
            return arr
    return _core.asarray(arr, device=device)


# The distributions the GPU fills itself: all of them (the heavy ones,
# whose samplers loop a data-dependent number of times, one thread per
# element on its own stream, as the CPU does).
_DEVICE_DISTS = frozenset(("bits", "uniform", "normal", "exponential", "integers", "gamma", "beta", "poisson",
                           "binomial"))


def _target(device):
    """The device an array for ``device=`` is made on (the default when None)."""
    if device is None:
        return _core.get_default_device()
    if hasattr(device, "type"):
        return device
    return _core.empty((0,), dtype="uint8", device=device).device


def _param_target(device, *params):
    """The device of a draw: ``device``, else that of the first parameter
    that is a cudakit array, else the default one."""
    if device is None:
        for v in params:
            if isinstance(v, _core.ndarray):
                return v.device
    return _target(device)


def _host(x, dtype=None):
    """A small array-like (a bound, a 0-d value) as a NumPy array."""
    if isinstance(x, _core.ndarray):
        x = _core.asnumpy(x)
    return _np.asarray(x, dtype=dtype)


def _ndim(x):
    return x.ndim if isinstance(x, _core.ndarray) else _np.ndim(x)


def _param(x, dev):
    """One distribution parameter as float64: a Python float when it is one
    value, else a cudakit array on dev (a device array stays where it is
    when dev is its device: parameters make no trip through the host)."""
    if isinstance(x, _core.ndarray):
        if x.ndim == 0:
            return float(x)
        if x.dtype != _core.float64:
            x = x.astype(_core.float64)
        return _core.asarray(x, device=dev)
    a = _np.asarray(x, dtype=_np.float64)
    return float(a) if a.ndim == 0 else _core.asarray(a, device=dev)


def _any(cond):
    """bool of a parameter check: a Python bool, or any() of a cudakit bool
    array (one value read back)."""
    return bool(_core.any(cond)) if isinstance(cond, _core.ndarray) else bool(cond)


def _isnan(v):
    return _core.isnan(v) if isinstance(v, _core.ndarray) else _math.isnan(v)


def _params(size, *vals, device="cpu"):
    """The parameters (_param, on device), the output shape, and each as
    the fill takes it: a float, or a C-contiguous array of one value per
    element."""
    dev = _target(device)
    pars = [_param(v, dev) for v in vals]
    bshape = _np.broadcast_shapes(*(tuple(v.shape) if isinstance(v, _core.ndarray) else () for v in pars))
    if size is None:
        shape = bshape
    else:
        shape = _shape(size)
        if _np.broadcast_shapes(shape, bshape) != shape:
            raise ValueError("shape mismatch: objects cannot be broadcast to a single shape.  "
                             f"Mismatch is between arg 0 with shape {shape} and arg 1 with shape {bshape}.")
    taken = [v if isinstance(v, float) else _core.ascontiguousarray(_core.broadcast_to(v, shape)) for v in pars]
    return pars, shape, taken


def _scaled(z, shift, mult):
    """shift + mult * z in float64, on z's device; shift and mult are
    _param values whose shapes broadcast into z's."""
    def par(a):
        return a if isinstance(a, float) else _core.asarray(a, device=z.device)
    if not (isinstance(mult, float) and mult == 1.0):
        z = _core.multiply(z, par(mult))
    if not (isinstance(shift, float) and shift == 0.0):
        z = _core.add(z, par(shift))
    return z


class BitGenerator:
    """A seed for a Generator, made as NumPy's bit generators are: from a
    ``numpy.random.SeedSequence`` or what one takes (an int, a sequence of
    ints, None).  It keeps the SeedSequence (``seed_seq``), so independent
    streams can be spawned from it (Dask does, one per chunk), and
    ``default_rng(bit_generator)`` draws from the Philox key it gives."""

    def __init__(self, seed=None):
        if not isinstance(seed, _np.random.SeedSequence):
            seed = _np.random.SeedSequence(seed)
        self._seed_seq = seed

    @property
    def seed_seq(self):
        return self._seed_seq

    def spawn(self, n_children):
        """n independent BitGenerators (SeedSequence.spawn)."""
        return [type(self)(s) for s in self._seed_seq.spawn(n_children)]

    def _seed_words(self):
        return [int(w) for w in self._seed_seq.generate_state(4, _np.uint32)]

    def __repr__(self):
        return f"BitGenerator(SeedSequence -> Philox4x32-10) at 0x{id(self):X}"



class Generator:
    """Random numbers from a Philox4x32-10 stream (see the module's doc).

    Make one with ``default_rng(seed)``.  Every method takes ``device=``;
    arrays are made on the default device when it is None."""

    def __init__(self, seed=None):
        if isinstance(seed, _np.random.SeedSequence):
            seed = BitGenerator(seed)
        if isinstance(seed, BitGenerator):
            seed = seed._seed_words()
        self._key = _key_from_seed(seed)
        self._counter = 0

    def __repr__(self):
        return f"Generator(Philox4x32-10) at 0x{id(self):X}"

    @property
    def state(self):
        """{'bit_generator': 'Philox4x32-10', 'key': int (64 bits), 'counter': int (128 bits)}"""
        return {"bit_generator": "Philox4x32-10", "key": self._key, "counter": self._counter}

    @state.setter
    def state(self, value):
        if value.get("bit_generator", "Philox4x32-10") != "Philox4x32-10":
            raise ValueError("state must be for a Philox4x32-10 generator")
        self._key = _operator.index(value["key"]) & _MASK64
        self._counter = _operator.index(value["counter"]) & _MASK128

    # ------------------------------------------------------------ the fill

    def _fill_into(self, out, dist, **kw):
        used = _core._random_fill(out, dist, self._key, self._counter, **kw)
        self._counter = (self._counter + used) & _MASK128
        return out

    def _fill(self, dist, shape, dtype, device="cpu", **kw):
        """A new array of dist on device (None: the default one); on the CPU
        for the distributions only the CPU draws."""
        dev = "cpu"
        if dist in _DEVICE_DISTS and device != "cpu":
            d = _target(device)
            if d.type != "cpu":
                dev = d
        return self._fill_into(_core.empty(shape, dtype=dtype, device=dev), dist, **kw)

    def _float_out(self, dist, size, dtype, out, device, method):
        name = _dtname(dtype)
        if name not in ("float32", "float64"):
            raise TypeError(f"Unsupported dtype {name!r} for {method}")
        if out is None:
            return _on(self._fill(dist, _shape(size), name, device=device), device)
        if not isinstance(out, _core.ndarray):
            raise TypeError("out must be a cudakit array")
        if _dtname(out.dtype) != name:
            raise TypeError(f"Supplied output array has the wrong type. Expected {name}, got {out.dtype}")
        if size is not None and _shape(size) != tuple(out.shape):
            raise ValueError("size must match out.shape when used together")
        if out.flags.c_contiguous and out.flags.writeable:
            return self._fill_into(out, dist)
        tmp = self._fill(dist, tuple(out.shape), name, device=out.device)
        out[...] = _core.asarray(tmp, device=out.device)
        return out

    # ------------------------------------------------------------ floats

    def random(self, size=None, dtype=_np.float64, out=None, *, device=None):
        """Floats in [0, 1): float64 from 53 random bits, float32 from 24."""
        return self._float_out("uniform", size, dtype, out, device, "random")

    def standard_normal(self, size=None, dtype=_np.float64, out=None, *, device=None):
        """Standard normal floats (Box-Muller on pairs of uniforms)."""
        return self._float_out("normal", size, dtype, out, device, "standard_normal")

    def standard_exponential(self, size=None, dtype=_np.float64, method="inv", out=None, *, device=None):
        """Standard exponential floats (inversion: -log1p(-u))."""
        if method != "inv":
            raise NotImplementedError("only method='inv' is implemented")
        return self._float_out("exponential", size, dtype, out, device, "standard_exponential")

    # Parameters that are cudakit arrays put the draw on their device (as
    # every op does) unless device= says otherwise; they stay there.

    def uniform(self, low=0.0, high=1.0, size=None, *, device=None):
        """Floats in [low, high): low + (high - low) * random()."""
        dev = _param_target(device, low, high)
        (lo, hi), shape, _ = _params(size, low, high, device=dev)
        with _np.errstate(over="ignore", invalid="ignore"):
            span = hi - lo
        if _any(span < 0):
            raise ValueError("high - low < 0")
        if not (_core.all(_core.isfinite(span)) if isinstance(span, _core.ndarray) else _math.isfinite(span)):
            raise OverflowError("high - low range exceeds valid bounds")
        u = self._fill("uniform", shape, "float64", device=dev)
        return _on(_scaled(u, lo, span), dev)

    def normal(self, loc=0.0, scale=1.0, size=None, *, device=None):
        """Normal floats: loc + scale * standard_normal()."""
        dev = _param_target(device, loc, scale)
        (mu, sd), shape, _ = _params(size, loc, scale, device=dev)
        if _any(sd < 0):
            raise ValueError("scale < 0")
        z = self._fill("normal", shape, "float64", device=dev)
        return _on(_scaled(z, mu, sd), dev)

    def exponential(self, scale=1.0, size=None, *, device=None):
        """Exponential floats with mean scale."""
        dev = _param_target(device, scale)
        (sc,), shape, _ = _params(size, scale, device=dev)
        if _any(sc < 0):
            raise ValueError("scale < 0")
        z = self._fill("exponential", shape, "float64", device=dev)
        return _on(_scaled(z, 0.0, sc), dev)

    def gamma(self, shape, scale=1.0, size=None, *, device=None):
        """Gamma floats (Marsaglia-Tsang), one counter value per element."""
        dev = _param_target(device, shape, scale)
        (k, sc), oshape, taken = _params(size, shape, scale, device=dev)
        if _any(k < 0):
            raise ValueError("shape < 0")
        if _any(sc < 0):
            raise ValueError("scale < 0")
        return self._fill("gamma", oshape, "float64", device=dev, a=taken[0], b=taken[1])

    def beta(self, a, b, size=None, *, device=None):
        """Beta floats (Johnk's algorithm for a, b <= 1, else a ratio of gammas)."""
        dev = _param_target(device, a, b)
        (pa, pb), shape, taken = _params(size, a, b, device=dev)
        if _any(pa <= 0):
            raise ValueError("a <= 0")
        if _any(pb <= 0):
            raise ValueError("b <= 0")
        return self._fill("beta", shape, "float64", device=dev, a=taken[0], b=taken[1])

    # ------------------------------------------------------------ integers

    def poisson(self, lam=1.0, size=None, *, device=None):
        """Poisson int64s (multiplication for lam < 10, else PTRS)."""
        dev = _param_target(device, lam)
        (lm,), shape, taken = _params(size, lam, device=dev)
        if _any(lm < 0) or _any(_isnan(lm)):
            raise ValueError("lam < 0 or lam is NaN")
        if _any(lm > _POISSON_LAM_MAX):
            raise ValueError("lam value too large")
        return self._fill("poisson", shape, "int64", device=dev, a=taken[0])

    def binomial(self, n, p, size=None, *, device=None):
        """Binomial int64s (inversion for n*p <= 30, else BTPE)."""
        dev = _param_target(device, n, p)
        kind = n.dtype.kind if isinstance(n, _core.ndarray) else _np.asarray(n).dtype.kind
        (nn, pp), shape, taken = _params(size, n, p, device=dev)
        if kind not in "biu" and not (kind == "f" and _core.all(nn == _core.floor(nn)) if isinstance(nn, _core.ndarray)
                                      else kind == "f" and nn == _math.floor(nn)):
            raise TypeError("Cannot cast n to int64 with casting rule 'same_kind'")
        if _any(nn < 0):
            raise ValueError("n < 0")
        if _any(pp < 0) or _any(pp > 1) or _any(_isnan(pp)):
            raise ValueError("p < 0, p > 1 or p is NaN")
        return self._fill("binomial", shape, "int64", device=dev, a=taken[0], b=taken[1])

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False, *, device=None):
        """Integers in [low, high) ([low, high] with endpoint) without modulo
        bias (Lemire's multiply-shift with rejection)."""
        name = _dtname(dtype)
        if name == "bool":
            imin, imax = 0, 1
        else:
            try:
                info = _np.iinfo(name)
            except ValueError:
                raise TypeError(f"Unsupported dtype {name!r} for integers") from None
            imin, imax = int(info.min), int(info.max)
        if high is None:
            low, high = 0, low
        try:
            lo, hi = _operator.index(low), _operator.index(high)
        except TypeError:
            if _ndim(low) or _ndim(high):
                raise NotImplementedError("integers() with array bounds is not implemented yet") from None
            lo_a, hi_a = _host(low), _host(high)
            if lo_a.dtype.kind == "f" or hi_a.dtype.kind == "f":
                raise TypeError("Unsupported low/high: they must be integers") from None
            lo, hi = int(lo_a), int(hi_a)
        top = hi if endpoint else hi - 1
        if lo < imin:
            raise ValueError(f"low is out of bounds for {name}")
        if top > imax:
            raise ValueError(f"high is out of bounds for {name}")
        if lo > top:
            raise ValueError("low > high" if endpoint else "low >= high")
        span = top - lo + 1
        return _on(self._fill("integers", _shape(size), name, device=device, low=lo & _MASK64, range=span & _MASK64),
                   device)

    def permutation(self, x, axis=0, *, device=None):
        """A permuted arange(x) for an int x, else a shuffled copy of x along axis."""
        if isinstance(x, int) or (hasattr(x, "__index__") and not hasattr(x, "shape")):
            n = _operator.index(x)   # a negative n permutes arange(n): nothing
            return self._perm_index(max(n, 0), _target(device))
        if isinstance(x, _core.ndarray):
            src = x if device is None else _core.asarray(x, device=device)
        else:
            src = _core.asarray(x, device=_target(device))
        if src.ndim == 0:
            raise _core.AxisError("x must be an integer or at least 1-dimensional")
        ax = axis if axis >= 0 else axis + src.ndim
        if not 0 <= ax < src.ndim:
            raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension {src.ndim}")
        return _core.take(src, self._perm_index(src.shape[ax], src.device), axis=ax)

    def _perm_index(self, n, device):
        """A random permutation of arange(n) on device: a stable argsort of n
        random 64-bit keys, uniform over permutations (ties, about n^2 / 2^65
        likely, are broken by position) and parallel unlike Fisher-Yates.
        The keys are the same bits on every device, so the CPU and a GPU
        give the same permutation for the same seed."""
        if n < 0:
            raise ValueError("n must be non-negative")
        keys = self._fill("bits", (n,), "uint64", device=device)
        return _core.argsort(keys, stable=True).astype(_core.int64)

    def shuffle(self, x, axis=0):
        """Shuffle x in place along axis 0 (a cudakit array or a mutable sequence)."""
        if isinstance(x, _core.ndarray):
            if x.ndim == 0:
                raise TypeError("shuffle() needs an array of at least one dimension")
            from . import _normalize_axis_index

            ax = _normalize_axis_index(axis, x.ndim)
            x[...] = _core.take(x, self._perm_index(x.shape[ax], x.device), axis=ax)
            return None
        idx = _core.asnumpy(self._perm_index(len(x), _core.Device("cpu")))
        if isinstance(x, _np.ndarray):
            x[...] = _np.take(x, idx, axis=axis)
            return None
        items = [x[int(i)] for i in idx]
        x[:] = items
        return None

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True, *, device=None):
        """Samples from arange(a) (an int) or from the elements of a along axis,
        drawn on the device of a (or ``device``): no round trip through the host."""
        if isinstance(a, int) or (hasattr(a, "__index__") and not hasattr(a, "shape")):
            pop = _operator.index(a)
            values = None
            dev = _target(device)
            if pop < 0:
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            if isinstance(a, _core.ndarray):
                values = a if device is None else _core.asarray(a, device=device)
            else:
                values = _core.asarray(a, device=_target(device))
            dev = values.device
            if values.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not a 0-d array")
            axis = axis if axis >= 0 else axis + values.ndim
            pop = values.shape[axis]
        shape = _shape(size)
        nsamp = 1
        for s in shape:
            nsamp *= s
        if pop == 0 and nsamp > 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            # checked where p lives (NumPy's checks; a few values read back)
            if _ndim(p) != 1:
                raise ValueError("p must be 1-dimensional")
            pd = _core.asarray(p.astype(_core.float64) if isinstance(p, _core.ndarray)
                               else _np.asarray(p, dtype=_np.float64), device=dev)
            if pd.size != pop:
                raise ValueError("a and p must have same size")
            if _any(pd < 0) or _any(_core.isnan(pd)):
                raise ValueError("probabilities are not non-negative")
            if abs(float(pd.sum()) - 1.0) > _np.sqrt(_np.finfo(_np.float64).eps):
                raise ValueError("probabilities do not sum to 1")
        if replace:
            if p is None:
                idx = self.integers(0, pop, size=shape, device=dev) if nsamp else \
                    _core.zeros(shape, dtype=_core.int64, device=dev)
            else:
                cdf = _core.cumsum(pd)
                cdf = cdf / cdf[-1]
                u = self._fill("uniform", (nsamp,), "float64", device=dev)
                # never past the last entry (u rounding up to the top of the cdf)
                idx = _core.minimum(_core.searchsorted(cdf, u, side="right"), pop - 1).reshape(shape)
        else:
            if nsamp > pop:
                raise ValueError("Cannot take a larger sample than population when replace=False")
            if p is None:
                idx = self._perm_index(pop, dev)[:nsamp].reshape(shape)
            else:
                if int(_core.count_nonzero(pd)) < nsamp:
                    raise ValueError("Fewer non-zero entries in p than size")
                # successive sampling without replacement = the nsamp smallest
                # E_i / p_i with E_i exponential (an "exponential race")
                e = self._fill("exponential", (pop,), "float64", device=dev)
                keys = _core.where(pd > 0, e / _core.where(pd > 0, pd, 1.0), float("inf"))
                idx = _core.argsort(keys, stable=True)[:nsamp].astype(_core.int64).reshape(shape)
        idx = idx.astype(_core.int64)
        if values is None:
            return idx
        if idx.ndim == 0:
            return _core.take(values, idx, axis=axis)
        return _core.take(values, idx.reshape((-1,)), axis=axis).reshape(
            tuple(values.shape[:axis]) + shape + tuple(values.shape[axis + 1:]))


def _grad_kw(f):
    """f with PyTorch's requires_grad= keyword (the result is a leaf)."""
    import functools

    import inspect

    @functools.wraps(f)
    def g(*args, requires_grad=False, **kwargs):
        r = f(*args, **kwargs)
        return r.requires_grad_() if requires_grad else r

    # what inspect.signature and help() show: f's parameters and requires_grad
    sig = inspect.signature(f)
    params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    params.append(inspect.Parameter("requires_grad", inspect.Parameter.KEYWORD_ONLY, default=False))
    params += [p for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD]
    g.__signature__ = sig.replace(parameters=params)
    return g


def default_rng(seed=None):
    """A Generator seeded from seed (an int >= 0, a sequence of them, or None
    for fresh entropy); a Generator is returned as it is."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)



# ---------------------------------------------------------------- legacy API

_global = Generator()

# The other distributions of NumPy's legacy functions, and RandomState
# (python/cudakit/_random_extra.py); module functions defined here by name
# (seed, rand, normal...) take precedence.
from ._random_extra import RandomState, install as _install, legacy_functions as _legacy_functions  # noqa: E402

_install(Generator)

globals().update({k: v for k, v in _legacy_functions(_global).items() if k not in globals()})


def random_integers(low, high=None, size=None, *, device=None):
    """Integers in [low, high], both ends included ([1, low] when high is None); deprecated in NumPy."""
    if high is None:
        low, high = 1, low
    return _global.integers(low, high, size=size, endpoint=True, device=device)


def seed(seed=None):
    """Reseed the generator behind the module's functions."""
    g = Generator(seed)
    _global._key, _global._counter = g._key, g._counter


def get_state():
    """The state of the generator behind the module's functions (its key and counter), as a dict."""
    return dict(_global.state)


def set_state(state):
    """Restore a state that get_state returned."""
    _global.state = state


@_grad_kw
def rand(*shape, device=None):
    """Floats in [0, 1) of the given shape."""
    return _global.random(shape or None, device=device)


@_grad_kw
def randn(*shape, device=None):
    """Standard normal floats of the given shape."""
    return _global.standard_normal(shape or None, device=device)


def randint(low, high=None, size=None, dtype=int, *, device=None):
    """Integers in [low, high) (NumPy's legacy default dtype: int64 here)."""
    return _global.integers(low, high, size=size, dtype=dtype, device=device)


@_grad_kw
def random(size=None, *, device=None):
    """Floats in [0, 1)."""
    return _global.random(size, device=device)


random_sample = sample = ranf = random


@_grad_kw
def uniform(low=0.0, high=1.0, size=None, *, device=None):
    """Floats uniform in [low, high) (the module's generator: Generator.uniform)."""
    return _global.uniform(low, high, size, device=device)


@_grad_kw
def normal(loc=0.0, scale=1.0, size=None, *, device=None):
    """Normal floats of mean loc and standard deviation scale (Generator.normal)."""
    return _global.normal(loc, scale, size, device=device)


@_grad_kw
def standard_normal(size=None, *, device=None):
    """Normal floats of mean 0 and standard deviation 1 (Generator.standard_normal)."""
    return _global.standard_normal(size, device=device)


@_grad_kw
def exponential(scale=1.0, size=None, *, device=None):
    """Exponential floats of the given scale, 1 / rate (Generator.exponential)."""
    return _global.exponential(scale, size, device=device)


@_grad_kw
def standard_exponential(size=None, *, device=None):
    """Exponential floats of scale 1 (Generator.standard_exponential)."""
    return _global.standard_exponential(size, device=device)


def integers(low, high=None, size=None, dtype=_np.int64, endpoint=False, *, device=None):
    """Integers in [low, high) ([low, high] with endpoint; [0, low) when high is None) (Generator.integers)."""
    return _global.integers(low, high, size, dtype, endpoint, device=device)


def choice(a, size=None, replace=True, p=None, *, device=None):
    """A random sample of a (an array, or range(a) for an int), with or without replacement, with
    probabilities p (Generator.choice).
    """
    return _global.choice(a, size, replace, p, device=device)


def shuffle(x):
    """Shuffle the array x in place along its first axis (Generator.shuffle)."""
    return _global.shuffle(x)


def permutation(x, *, device=None):
    """A shuffled copy of x, or of arange(x) for an int (Generator.permutation)."""
    return _global.permutation(x, device=device)


def binomial(n, p, size=None, *, device=None):
    """Binomial counts of n trials of probability p (Generator.binomial)."""
    return _global.binomial(n, p, size, device=device)


def poisson(lam=1.0, size=None, *, device=None):
    """Poisson counts of mean lam (Generator.poisson)."""
    return _global.poisson(lam, size, device=device)


@_grad_kw
def gamma(shape, scale=1.0, size=None, *, device=None):
    """Gamma floats of the given shape and scale (Generator.gamma)."""
    return _global.gamma(shape, scale, size, device=device)


@_grad_kw
def beta(a, b, size=None, *, device=None):
    """Beta floats of parameters a and b (Generator.beta)."""
    return _global.beta(a, b, size, device=device)
