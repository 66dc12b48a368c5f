"""The Python array API standard's names that are not element-wise ops:
the version, the inspection namespace, finfo/iinfo, astype and the few
functions of the standard that NumPy spells otherwise; and NumPy's
dispatch (NEP 18) of its functions to cudakit's.

Nothing here imports NumPy at import time: `import cudakit` stays light.
"""
import operator as _operator
import threading as _threading

from . import _core

__array_api_version__ = "2024.12"

# ----------------------------------------------------------------- finfo

# (bits, mantissa bits, exponent bits, maxexp, minexp, decimal precision)
# of each float format, from which every finfo field follows (IEEE 754).
_FLOAT_FORMATS = {
    "float16": (16, 10, 5, 16, -14, 3),
    "float32": (32, 23, 8, 128, -126, 6),
    "float64": (64, 52, 11, 1024, -1022, 15),
}


def _as_dtype(x):
    """The cudakit dtype of a dtype, dtype-like or array."""
    if isinstance(x, _core.ndarray):
        return x.dtype
    return _core.result_type(x)


class finfo:
    """Machine limits of a floating dtype (of a complex one: its parts'),
    as NumPy's finfo; the fields are Python floats and ints, as the array
    API asks."""

    _cache = {}

    def __new__(cls, type):
        dt = _as_dtype(type)
        if dt.kind not in "fc":
            raise ValueError(f"data type {dt} not inexact")
        real = str(dt) if dt.kind == "f" else {"complex64": "float32", "complex128": "float64"}[str(dt)]
        obj = cls._cache.get(real)
        if obj is None:
            obj = super().__new__(cls)
            obj._init(real)
            cls._cache[real] = obj
        return obj

    def _init(self, real):
        bits, nmant, nexp, maxexp, minexp, precision = _FLOAT_FORMATS[real]
        self.dtype = _core.result_type(real)
        self.bits = bits
        self.nmant = nmant
        self.nexp = nexp
        self.iexp = nexp
        self.maxexp = maxexp
        self.minexp = minexp
        self.machep = -nmant
        self.negep = -nmant - 1
        self.precision = precision
        self.resolution = 10.0 ** -precision
        self.eps = 2.0 ** -nmant
        self.epsneg = 2.0 ** (-nmant - 1)
        self.max = (2.0 - self.eps) * 2.0 ** (maxexp - 1)
        self.min = -self.max
        self.smallest_normal = 2.0 ** minexp
        self.tiny = self.smallest_normal
        self.smallest_subnormal = 2.0 ** (minexp - nmant)

    def __repr__(self):
        return f"finfo(resolution={self.resolution:g}, min={self.min:.8g}, max={self.max:.8g}, dtype={self.dtype})"


class iinfo:
    """Machine limits of an integer dtype, as NumPy's iinfo (Python ints)."""

    def __init__(self, type):
        dt = _as_dtype(type)
        if dt.kind not in "iu":
            raise ValueError(f"Invalid integer data type {dt.kind!r}.")
        self.dtype = dt
        self.kind = dt.kind
        self.bits = 8 * dt.itemsize
        self.min = -(1 << (self.bits - 1)) if dt.kind == "i" else 0
        self.max = (1 << (self.bits - 1)) - 1 if dt.kind == "i" else (1 << self.bits) - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def astype(x, dtype, /, *, copy=True, device=None):
    """The array API's astype: x cast to dtype (a view of x itself when
    copy=False and nothing changes), on device when given."""
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"astype() takes a cudakit array, not {type(x).__name__}")
    return x.astype(dtype, copy=copy, device=device)


# ----------------------------------------------------- inspection namespace

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class _Info:
    """What `__array_namespace_info__()` returns: the devices and dtypes of
    this library (the standard's inspection API)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": _core.MAXDIMS}

    def default_device(self):
        return _core.get_default_device()

    def devices(self):
        """The CPU and every GPU the driver shows."""
        try:
            n = _core._cuda_device_count()
        except Exception:   # no driver: the CPU alone
            n = 0
        return [_core.Device("cpu")] + [_core.Device("cuda", i) for i in range(n)]

    def _check_device(self, device):
        if device is not None and device not in self.devices():
            raise ValueError(f"unknown device {device!r}: the devices are {self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        f8, c16, i8 = (_core.result_type(n) for n in ("float64", "complex128", "int64"))
        return {"real floating": f8, "complex floating": c16, "integral": i8, "indexing": i8}

    def dtypes(self, *, device=None, kind=None):
        """The dtypes of a kind (a kind name, a tuple of them, or None for
        all), by name; every device has every dtype."""
        self._check_device(device)
        if kind is None:
            names = ("bool",) + _KINDS["numeric"]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = []
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}: one of {sorted(_KINDS)}")
                names += [n for n in _KINDS[k] if n not in names]
        return {n: _core.result_type(n) for n in names}


_INFO = _Info()


def __array_namespace_info__():
    """The array API's inspection namespace (devices, dtypes, capabilities)."""
    return _INFO


# ------------------------------------------------------------- functions

def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's cumulative product (axis needed above one dimension)."""
    x = _core.asarray(x)
    if isinstance(axis, bool):
        raise TypeError("an integer is required")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be specified for arrays with more than one dimension")
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    axis = _operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis %= x.ndim
    res = _core.cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(res.shape)
        shape[axis] = 1
        res = _core.concatenate((_core.ones(tuple(shape), dtype=res.dtype, device=res.device), res), axis)
    return res


# ------------------------------------------------- NumPy's dispatch (NEP 18)

_dispatch = _threading.local()


def _cudakit_function(func):
    """cudakit's function of the same name as NumPy's func (numpy.linalg.x
    -> cudakit.linalg.x), or None."""
    import cudakit

    mod = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", None)
    if not name or not (mod == "numpy" or mod.startswith("numpy.")):
        return None
    # numpy._core.fromnumeric and friends are NumPy's own layout: the name
    # is public in the numpy namespace; numpy.linalg, numpy.fft... map to ours
    parts = [p for p in mod.split(".")[1:] if not p.startswith("_")]
    if parts and parts[0] == "lib":
        parts = []
    target = cudakit
    for p in parts + [name]:
        target = getattr(target, p, None)
        if target is None:
            return None
    return target if callable(target) and target is not func else None


def _array_function(func, types, args, kwargs):
    """ndarray.__array_function__: NumPy's func on cudakit arrays runs
    cudakit's function of that name (so results stay on the arrays'
    device); one cudakit lacks raises TypeError naming it rather than
    copying GPU data to the host behind the caller's back."""
    for t in types:
        if not issubclass(t, _core.ndarray) and not (t.__name__ == "ndarray" and t.__module__ == "numpy"):
            return NotImplemented   # another library's arrays: let it (or NumPy) decide
    active = getattr(_dispatch, "active", None)
    if active is None:
        active = _dispatch.active = set()
    if func in active:
        # cudakit's implementation handed NumPy's function a cudakit array
        # again: NumPy's own implementation, as before dispatch existed
        # (on CPU arrays only: a GPU array refuses the conversion)
        return func._implementation(*args, **kwargs)
    impl = _cudakit_function(func)
    if impl is None:
        name = f"{func.__module__}.{func.__name__}".replace("numpy._core.", "numpy.")
        raise TypeError(f"cudakit has no {name}: NumPy's function is not run on cudakit arrays "
                        "(cudakit.asnumpy(x) gives a NumPy array to call it on)")
    active.add(func)
    try:
        return impl(*args, **kwargs)
    finally:
        active.discard(func)
