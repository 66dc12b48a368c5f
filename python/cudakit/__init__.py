"""cudakit: NumPy-compatible arrays on NVIDIA GPUs and on the CPU, with a C core.

    >>> import cudakit as ck
    >>> x = ck.arange(1000, dtype=ck.float32)
    >>> y = x + 1
    >>> ck.asnumpy(y)[:3]
    array([1., 2., 3.], dtype=float32)

Every array lives on a device (``x.device``): the first GPU when one is
usable, otherwise the CPU; ``CUDAKIT_DEVICE=cpu`` chooses.  Functions follow
NumPy's names and NumPy 2's type rules; results that NumPy gives as scalars
are 0-d arrays here, as in CuPy and the Python array API standard.
"""
import operator as _operator

from . import _core
from ._core import *  # noqa: F401,F403  (the C module defines the public names)
from ._core import asarray, maximum, minimum

__version__ = "0.1.0"

from . import cuda  # noqa: E402  (loads no driver until used)

CompileError = _core.CompileError

# NumPy's and the array API standard's other names for the same functions.
abs = _core.absolute
acos = arccos = _core.arccos
acosh = arccosh = _core.arccosh
asin = arcsin = _core.arcsin
asinh = arcsinh = _core.arcsinh
atan = arctan = _core.arctan
atan2 = arctan2 = _core.arctan2
atanh = arctanh = _core.arctanh
bitwise_left_shift = _core.left_shift
bitwise_right_shift = _core.right_shift
bitwise_invert = bitwise_not = _core.invert
pow = _core.power
true_divide = _core.divide
mod = _core.remainder
conj = _core.conjugate
degrees = _core.rad2deg
radians = _core.deg2rad

newaxis = None
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
euler_gamma = 0.5772156649015329

_where3 = _core.where
_clip3 = _core.clip


def where(condition, x=None, y=None, /):
    """``where(condition, x, y)``: elements of x where condition holds, else of y."""
    if x is None and y is None:
        raise NotImplementedError("where(condition) with one argument is not implemented yet; use where(c, x, y)")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _where3(condition, x, y)


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """Limit the values of ``a`` to [a_min, a_max]; either bound may be None."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    a = asarray(a)
    if a.dtype.kind in "iu":
        # a Python int beyond the dtype's range bounds nothing (as NumPy's
        # _clip): drop it rather than let it overflow
        bits = 8 * a.dtype.itemsize
        dmin, dmax = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if a.dtype.kind == "i" else (0, (1 << bits) - 1)
        if type(lo) is int and lo <= dmin:
            lo = None
        if type(hi) is int and hi >= dmax:
            hi = None
    if lo is None and hi is None:
        return asarray(a).copy() if out is None else _core.positive(a, out=out)
    if lo is None:
        return minimum(a, hi, out=out)
    if hi is None:
        return maximum(a, lo, out=out)
    return _clip3(a, lo, hi, out=out)


def _pow10(n):
    try:
        return 10.0 ** n
    except OverflowError:
        return float("inf")


def round(a, decimals=0, out=None):
    """Round to the given number of decimals, halves to even (as NumPy)."""
    a = asarray(a)
    decimals = _operator.index(decimals)
    if not -(2**31) <= decimals < 2**31:
        # NumPy takes a C int here
        raise OverflowError(f"decimals={decimals} does not fit a C int")
    if decimals == 0:
        return _core.rint(a, out=out) if a.dtype.kind in "fc" else (a.copy() if out is None else _core.positive(a, out=out))
    if a.dtype.kind in "biu":
        if decimals > 0:
            return a.copy() if out is None else _core.positive(a, out=out)
        # as NumPy: in float64, halves to even, then back to the integer dtype
        f = _pow10(-decimals)
        r = _core.multiply(_core.rint(_core.divide(a, f)), f).astype(a.dtype)
        if out is None:
            return r
        out[...] = r
        return out
    f = _pow10(decimals)
    return _core.divide(_core.rint(_core.multiply(a, f)), f, out=out)


around = round


def real(x):
    """The real part (a view for complex arrays), as NumPy's and the array API's real."""
    return asarray(x).real


def imag(x):
    """The imaginary part (a view for complex arrays; zeros otherwise)."""
    return asarray(x).imag


def copy(a, order="K"):
    """A copy of an array-like."""
    return _core.array(a, copy=True, order=order)


def identity(n, dtype=None, *, device=None):
    """The n x n identity matrix."""
    return _core.eye(n, dtype=dtype, device=device)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, *, device=None):
    """Numbers spaced evenly on a log scale: base ** linspace(start, stop)."""
    y = _core.linspace(start, stop, num, endpoint, device=device)
    r = _core.power(base, y)
    return r if dtype is None else r.astype(dtype)


def tri(N, M=None, k=0, dtype=float, *, device=None):
    """An array with ones at and below the k-th diagonal."""
    M = N if M is None else M
    rows = _core.arange(N, device=device).reshape(N, 1)
    cols = _core.arange(-k, M - k, device=device).reshape(1, M)
    return _core.greater_equal(rows, cols).astype(dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors (NumPy's meshgrid)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    arrs = [asarray(x).ravel() for x in xi]
    shapes = [[1] * ndim for _ in arrs]
    for i, a in enumerate(arrs):
        shapes[i][i] = a.size
    if indexing == "xy" and ndim > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [a.reshape(s) for a, s in zip(arrs, shapes)]
    if sparse:
        return [o.copy() for o in out] if copy else out
    full_shape = [a.size for a in arrs]
    if indexing == "xy" and ndim > 1:
        full_shape[0], full_shape[1] = full_shape[1], full_shape[0]
    return [_core.zeros(full_shape, dtype=o.dtype, device=o.device) + o for o in out]


def isdtype(dtype_, kind):
    """The array API's dtype kind test."""
    name = str(_dtype_of(dtype_))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    groups = {
        "bool": ("bool",),
        "signed integer": ("int8", "int16", "int32", "int64"),
        "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
        "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
        "real floating": ("float16", "float32", "float64"),
        "complex floating": ("complex64", "complex128"),
        "numeric": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64", "complex64", "complex128"),
    }
    for k in kinds:
        if isinstance(k, str):
            if k not in groups:
                raise ValueError(f"unknown dtype kind {k!r}")
            if name in groups[k]:
                return True
        elif str(_dtype_of(k)) == name:
            return True
    return False


def _dtype_of(d):
    return _core.result_type(d)
