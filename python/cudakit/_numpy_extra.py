"""NumPy's main-namespace functions that are compositions of cudakit's ops.

Every function here works on arrays of any device and returns arrays on the
device of its array inputs (the default device when there are none): each is
a few calls of the C core's ops (``where``, ``cumsum``, ``take``, slicing,
``concatenate``...), so a GPU array stays on the GPU.  The few that go
through the host say so in their docstring (``roots``, the ``i0`` Bessel
function, and the file/printing functions of ``_numpy_io.py``).

The module also holds the Python halves of three C paths
(src/python/extend.c): reductions with ``where=``/``initial=``
(``_reduce_masked``), ufunc calls with ``where=`` (``_ufunc_where``) and
seterr's floating-point checks on the CPU (``_fp_check``).

NumPy is imported only where a function needs it (``import cudakit`` imports
no NumPy).
"""
import builtins as _bi
import contextlib as _contextlib
import functools as _functools
import math as _math
import operator as _operator
import warnings as _warnings

from . import _core
from ._core import asarray, ndarray

__all__ = []   # filled by _public below; read by cudakit.__init__ for its lazy names


def _public(f):
    __all__.append(f.__name__)
    return f


def _np():
    import numpy

    return numpy


def _dt(d):
    """A cudakit dtype from a dtype, a name or a type."""
    return _core.result_type(d)


def _default_device():
    return _core.get_default_device()


def _device_of(*xs):
    """The device of the first cudakit array among xs (the default device otherwise)."""
    for x in xs:
        if isinstance(x, ndarray):
            return x.device
        if isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, ndarray):
                    return y.device
    return _default_device()


def _as(x, device=None):
    """x as a cudakit array on device (x's own device when x is an array)."""
    if isinstance(x, ndarray) and (device is None or x.device == device):
        return x
    return _core.asarray(x, device=device if device is not None else _default_device())


def _ck():
    import cudakit

    return cudakit


def _float_dtype(dt):
    """NumPy's result dtype of a float function of dt (float64 for integers and bools)."""
    return dt if dt.kind in "fc" else _dt("float64")


def _norm_axis(axis, ndim):
    return _ck()._normalize_axis_index(axis, ndim)


# ---------------------------------------------------------------- aliases

@_public
def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Maximum over the given axes: NumPy's ``amax``, the same as ``max``."""
    kw = {} if initial is None else {"initial": initial}
    if where is not True:
        kw["where"] = where
    return _core.max(a, axis=axis, out=out, keepdims=keepdims, **kw)


@_public
def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Minimum over the given axes: NumPy's ``amin``, the same as ``min``."""
    kw = {} if initial is None else {"initial": initial}
    if where is not True:
        kw["where"] = where
    return _core.min(a, axis=axis, out=out, keepdims=keepdims, **kw)


@_public
def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (maximum - minimum) along an axis."""
    a = asarray(a)
    r = _core.subtract(_core.max(a, axis=axis, keepdims=keepdims), _core.min(a, axis=axis, keepdims=keepdims))
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def asanyarray(a, dtype=None, order=None, *, device=None, copy=None):
    """``asarray``: cudakit has no ndarray subclasses to pass through."""
    kw = {"dtype": dtype}
    if device is not None:
        kw["device"] = device
    if copy is not None:
        kw["copy"] = copy
    return _core.asarray(a, **kw) if order is None else _core.asarray(a, order=order, **kw)


@_public
def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray``, raising ValueError when the array holds an infinity or a NaN."""
    a = _core.asarray(a, dtype=dtype) if order is None else _core.asarray(a, dtype=dtype, order=order)
    if a.dtype.kind in "fc" and not bool(_core.all(_core.isfinite(a))):
        raise ValueError("array must not contain infs or NaNs")
    return a


@_public
def require(a, dtype=None, requirements=None, *, like=None):
    """An array of the dtype that satisfies the requirements ('C', 'F', 'A', 'W', 'O', 'E')."""
    a = _core.asarray(a) if dtype is None else _core.asarray(a, dtype=dtype)
    reqs = set()
    for r in requirements or ():
        r = r.upper()
        reqs.add({"C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F_CONTIGUOUS": "F", "FORTRAN": "F",
                  "ALIGNED": "A", "WRITEABLE": "W", "OWNDATA": "O", "ENSUREARRAY": "E"}.get(r, r))
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both C and Fortran contiguous.")
    if "C" in reqs and not a.flags.c_contiguous:
        a = _core.ascontiguousarray(a)
    elif "F" in reqs and not a.flags.f_contiguous:
        a = _core.asfortranarray(a)
    if "O" in reqs and a.base is not None:
        a = a.copy()
    return a


@_public
def fabs(x, /, out=None):
    """Absolute values as floats (NumPy's ``fabs``: no complex input)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("ufunc 'fabs' not supported for the input types, and the inputs could not be safely "
                        "coerced to any supported types according to the casting rule ''safe''")
    if x.dtype.kind not in "f":
        x = x.astype("float16" if x.dtype.itemsize == 1 else ("float32" if x.dtype.itemsize == 2 else "float64"))
    return _core.absolute(x, out=out)


@_public
def float_power(x1, x2, /, out=None):
    """``x1 ** x2`` computed in float64 (complex128 for complex inputs)."""
    x1 = asarray(x1)
    x2 = _as(x2, x1.device)
    dt = "complex128" if x1.dtype.kind == "c" or x2.dtype.kind == "c" else "float64"
    return _core.power(x1.astype(dt), x2.astype(dt), out=out)


@_public
def heaviside(x1, x2, /, out=None):
    """The Heaviside step: 0 below zero, x2 at zero, 1 above; NaN stays NaN."""
    x1 = asarray(x1)
    x2 = _as(x2, x1.device)
    dt = _core.result_type(x1, x2)
    if dt.kind not in "f":
        dt = _dt("float64")
    one = _core.ones_like(x1, dtype=dt)
    r = _core.where(_core.less(x1, 0), _core.zeros_like(one), one)
    r = _core.where(_core.equal(x1, 0), x2.astype(dt), r)
    r = _core.where(_core.isnan(x1), x1.astype(dt), r)
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def fix(x, out=None):
    """Round toward zero (floats keep their dtype)."""
    x = asarray(x)
    return _core.trunc(x, out=out) if x.dtype.kind == "f" else (x.copy() if out is None else _core.positive(x, out=out))


@_public
def angle(z, deg=False):
    """The argument of complex numbers (radians, or degrees with deg=True)."""
    z = asarray(z)
    if z.dtype.kind == "c":
        r = _core.arctan2(z.imag, z.real)
    else:
        zf = z.astype(_float_dtype(z.dtype))
        r = _core.arctan2(_core.zeros_like(zf), zf)
    return _core.rad2deg(r) if deg else r


@_public
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    x = asarray(x)
    x = x.astype(_float_dtype(x.dtype))
    y = _core.multiply(x, _math.pi)
    y = _core.where(_core.equal(x, 0), _core.full_like(y, 1e-20), y)
    return _core.divide(_core.sin(y), y)


@_public
def spacing(x, /, out=None):
    """Distance from x to the nearest adjacent float away from zero."""
    x = asarray(x)
    x = x.astype(_float_dtype(x.dtype))
    inf = _core.full_like(x, float("inf"))
    toward = _core.where(_core.less(x, 0), _core.negative(inf), inf)
    r = _core.subtract(_core.nextafter(x, toward), x)
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def divmod(x1, x2, /, out=(None, None)):
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    o1, o2 = (out if isinstance(out, tuple) else (out, None))
    return _core.floor_divide(x1, x2, out=o1), _core.remainder(x1, x2, out=o2)


@_public
def modf(x, /, out=(None, None)):
    """Fractional and integral parts, both with x's sign."""
    x = asarray(x)
    x = x.astype(_float_dtype(x.dtype))
    i = _core.trunc(x)
    f = _core.subtract(x, i)
    # modf(inf) is (0, inf) with inf's sign
    f = _core.where(_core.isinf(x), _core.copysign(_core.zeros_like(x), x), f)
    o1, o2 = (out if isinstance(out, tuple) else (out, None))
    if o1 is not None:
        o1[...] = f
        f = o1
    if o2 is not None:
        o2[...] = i
        i = o2
    return f, i


def _float_bits(dt):
    return {"float16": (10, 15), "float32": (23, 127), "float64": (52, 1023)}[str(dt)]


@_public
def frexp(x, /, out=(None, None)):
    """Mantissa in [0.5, 1) (with x's sign) and integer exponent: x = m * 2**e."""
    x = asarray(x)
    x = x.astype(_float_dtype(x.dtype))
    finite_nz = _core.logical_and(_core.isfinite(x), _core.not_equal(x, 0))
    ax = _core.absolute(_core.where(finite_nz, x, _core.ones_like(x)))
    # exponents from log2, fixed up by one where rounding put it off
    work = ax.astype("float64")
    e = _core.floor(_core.log2(work)).astype("int32")
    e = _core.add(e, 1)
    # two halves, so that 2**e stays finite at the ends of the range
    h = _core.floor_divide(e, 2).astype("float64")
    m = _core.divide(_core.divide(work, _core.power(2.0, h)), _core.power(2.0, _core.subtract(e.astype("float64"), h)))
    too_big = _core.greater_equal(m, 1.0)
    e = _core.where(too_big, _core.add(e, 1), e)
    m = _core.where(too_big, _core.divide(m, 2.0), m)
    too_small = _core.less(m, 0.5)
    e = _core.where(too_small, _core.subtract(e, 1), e)
    m = _core.where(too_small, _core.multiply(m, 2.0), m)
    m = _core.copysign(m.astype(x.dtype), x)
    m = _core.where(finite_nz, m, x)
    e = _core.where(finite_nz, e, _core.zeros_like(e))
    o1, o2 = (out if isinstance(out, tuple) else (out, None))
    if o1 is not None:
        o1[...] = m
        m = o1
    if o2 is not None:
        o2[...] = e
        e = o2
    return m, e


@_public
def ldexp(x1, x2, /, out=None):
    """x1 * 2**x2 (x2 integers), without overflow in the power for large exponents."""
    x1 = asarray(x1)
    x2 = _as(x2, x1.device)
    if x2.dtype.kind not in "biu":
        raise TypeError("ufunc 'ldexp' not supported for the input types, and the inputs could not be safely "
                        "coerced to any supported types according to the casting rule ''safe''")
    dt = _float_dtype(x1.dtype) if x1.dtype.kind in "fc" else _dt("float64")
    if x1.dtype.kind in "biu" and x1.dtype.itemsize <= 1:
        dt = _dt("float16")
    elif x1.dtype.kind in "biu" and x1.dtype.itemsize == 2:
        dt = _dt("float32")
    e = _core.clip(x2.astype("int64"), -2200, 2200)
    # two halves so that 2**half stays finite where the product is
    h1 = _core.floor_divide(e, 2)
    h2 = _core.subtract(e, h1)
    r = _core.multiply(_core.multiply(x1.astype("float64"), _core.power(2.0, h1.astype("float64"))),
                       _core.power(2.0, h2.astype("float64"))).astype(dt)
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to ``nan``, infinities to ``posinf``/``neginf`` (the dtype's extremes by default)."""
    x = asarray(x)
    if x.dtype.kind not in "fc":
        return x.copy() if copy else x
    if x.dtype.kind == "c":
        re = nan_to_num(x.real, True, nan, posinf, neginf)
        im = nan_to_num(x.imag, True, nan, posinf, neginf)
        r = _core.add(re.astype(x.dtype), _core.multiply(im.astype(x.dtype), 1j))
    else:
        big = float(_np().finfo(str(x.dtype)).max)
        hi = big if posinf is None else posinf
        lo = -big if neginf is None else neginf
        r = _core.where(_core.isnan(x), _core.full_like(x, nan), x)
        r = _core.where(_core.logical_and(_core.isinf(x), _core.greater(x, 0)), _core.full_like(x, hi), r)
        r = _core.where(_core.logical_and(_core.isinf(x), _core.less(x, 0)), _core.full_like(x, lo), r)
    if copy:
        return r
    x[...] = r
    return x


@_public
def real_if_close(a, tol=100):
    """The real part when every imaginary part is within tol machine epsilons of 0."""
    a = asarray(a)
    if a.dtype.kind != "c":
        return a
    t = tol
    if tol > 1:
        t = float(_np().finfo(_ck()._real_of(a.dtype)).eps) * tol
    if bool(_core.all(_core.less(_core.absolute(a.imag), t))):
        return a.real.copy()
    return a


@_public
def isposinf(x, out=None):
    """Whether each element is +inf."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    r = _core.logical_and(_core.isinf(x), _core.logical_not(_core.signbit(x)))
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def isneginf(x, out=None):
    """Whether each element is -inf."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    r = _core.logical_and(_core.isinf(x), _core.signbit(x))
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def iscomplex(x):
    """Whether each element has a non-zero imaginary part."""
    x = asarray(x)
    if x.dtype.kind != "c":
        return _core.zeros(x.shape, dtype="bool", device=x.device)
    return _core.not_equal(x.imag, 0)


@_public
def isreal(x):
    """Whether each element has a zero imaginary part."""
    x = asarray(x)
    if x.dtype.kind != "c":
        return _core.ones(x.shape, dtype="bool", device=x.device)
    return _core.equal(x.imag, 0)


@_public
def iscomplexobj(x):
    """Whether x's dtype is complex."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = _core.asarray(x).dtype
    return _dt(dt).kind == "c"


@_public
def isrealobj(x):
    """Whether x's dtype is not complex."""
    return not iscomplexobj(x)


@_public
def isfortran(a):
    """Whether a is Fortran-contiguous and not C-contiguous."""
    return bool(a.flags.f_contiguous and not a.flags.c_contiguous)


@_public
def isscalar(element):
    """Whether element is a scalar (Python number, string, NumPy scalar); arrays, 0-d ones too, are not."""
    import numbers

    if isinstance(element, ndarray):
        return False
    if isinstance(element, (numbers.Number, str, bytes)):
        return True
    return _np().isscalar(element)


@_public
def iterable(y):
    """Whether y can be iterated over (a 0-d array cannot)."""
    if isinstance(y, ndarray):
        return y.ndim > 0
    try:
        iter(y)
    except TypeError:
        return False
    return True


@_public
def ndim(a):
    """Number of dimensions of an array-like."""
    return a.ndim if isinstance(a, ndarray) else _np().ndim(a)


@_public
def shape(a):
    """Shape of an array-like."""
    return a.shape if isinstance(a, ndarray) else _np().shape(a)


@_public
def size(a, axis=None):
    """Number of elements (along axis when given)."""
    if not isinstance(a, ndarray):
        return _np().size(a, axis)
    if axis is None:
        return a.size
    if isinstance(axis, tuple):
        return _math.prod(a.shape[_norm_axis(i, a.ndim)] for i in axis)
    return a.shape[_norm_axis(axis, a.ndim)]


# ------------------------------------------------------------- dtype help

def _to_ck_dtype(d):
    return _dt(str(_np().dtype(d)))


@_public
def promote_types(type1, type2):
    """The smallest dtype both dtypes cast to safely."""
    return _to_ck_dtype(_np().promote_types(str(_dt(type1)), str(_dt(type2))))


@_public
def min_scalar_type(a):
    """The smallest dtype that holds a scalar's value (an array's own dtype)."""
    if isinstance(a, ndarray):
        if a.ndim:
            return a.dtype
        a = a.item()
    return _to_ck_dtype(_np().min_scalar_type(a))


@_public
def common_type(*arrays):
    """The inexact dtype common to the arrays (float64 for integers), as a dtype."""
    names = [str(asarray(a).dtype) for a in arrays]
    return _to_ck_dtype(_np().common_type(*[_np().empty(0, dtype=n) for n in names]))


@_public
def mintypecode(typechars, typeset="GDFgdf", default="d"):
    """The type character of the smallest safe type among typechars (NumPy's helper)."""
    return _np().mintypecode(typechars, typeset, default)


@_public
def typename(char):
    """A description of a type character ('d' -> 'double precision')."""
    return _np().typename(char)


@_public
def issubdtype(arg1, arg2):
    """Whether arg1 is lower in NumPy's type hierarchy than arg2 (np.floating, np.integer...)."""
    np = _np()

    def conv(x):
        if isinstance(x, type) and issubclass(x, np.generic):
            return x
        return np.dtype(str(_dt(x))) if not isinstance(x, (str, type)) or isinstance(x, str) else x
    return np.issubdtype(conv(arg1), conv(arg2))


@_public
def base_repr(number, base=2, padding=0):
    """The digits of an integer in another base (up to 36)."""
    return _np().base_repr(int(number), base, padding)


@_public
def binary_repr(num, width=None):
    """The binary digits of an integer (two's complement with width for negatives)."""
    return _np().binary_repr(int(num), width)


@_public
def format_float_positional(x, precision=None, unique=True, fractional=True, trim="k", sign=False,
                            pad_left=None, pad_right=None, min_digits=None):
    """A float as positional text (NumPy's Dragon4 formatting)."""
    np = _np()
    if isinstance(x, ndarray):
        x = np.asarray(_core.asnumpy(x))[()]
    return np.format_float_positional(x, precision, unique, fractional, trim, sign, pad_left, pad_right, min_digits)


@_public
def format_float_scientific(x, precision=None, unique=True, trim="k", sign=False, pad_left=None,
                            exp_digits=None, min_digits=None):
    """A float as scientific text (NumPy's Dragon4 formatting)."""
    np = _np()
    if isinstance(x, ndarray):
        x = np.asarray(_core.asnumpy(x))[()]
    return np.format_float_scientific(x, precision, unique, trim, sign, pad_left, exp_digits, min_digits)


# ------------------------------------------------------------- creation

def _linspace(start, stop, num, endpoint, dev):
    """NumPy's linspace of arrays start and stop (the new axis first): arange * step + start."""
    div = (num - 1) if endpoint else num
    t = _core.arange(num, device=dev).astype(start.dtype).reshape((num,) + (1,) * start.ndim)
    if div > 0:
        step = _core.divide(_core.subtract(stop, start), div)
        y = _core.add(_core.multiply(t, step), start)
    else:
        y = _core.add(_core.multiply(t, _core.subtract(stop, start)), start)
    if endpoint and num > 1:
        y[-1] = stop
    return y


@_public
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0, *, device=None):
    """Numbers spaced evenly on a log scale between start and stop (negative and complex ends too)."""
    dev = device if device is not None else _device_of(start, stop)
    start = _as(start, dev)
    stop = _as(stop, dev)
    if bool(_core.any(_core.equal(start, 0))) or bool(_core.any(_core.equal(stop, 0))):
        raise ValueError("Geometric sequence cannot include zero")
    dt = _core.result_type(start, stop, 1.0)
    start, stop = _core.broadcast_arrays(start.astype(dt), stop.astype(dt))
    if dt.kind == "c":
        r = _core.exp(_linspace(_core.log(start), _core.log(stop), num, endpoint, dev))
        if num > 0:
            r[0] = start
            if endpoint and num > 1:
                r[-1] = stop
    else:
        # both negative: the sequence of their absolute values, negated
        neg = _core.logical_and(_core.less(start, 0), _core.less(stop, 0))
        # opposite signs give NaNs inside, as NumPy's
        s = _core.where(neg, _core.negative(start), start)
        e = _core.where(neg, _core.negative(stop), stop)
        r = _core.power(10.0, _linspace(_core.log10(s), _core.log10(e), num, endpoint, dev))
        if num > 0:
            r[0] = s
            if endpoint and num > 1:
                r[-1] = e
        r = _core.where(neg, _core.negative(r), r)
    if axis != 0:
        r = _core.moveaxis(r, 0, axis)
    return r.astype(dt if dtype is None else dtype)


@_public
def fromfunction(function, shape, *, dtype=float, device=None, **kwargs):
    """function called once with the coordinate arrays of shape (as ``indices``)."""
    return function(*indices(shape, dtype=dtype, device=device), **kwargs)


@_public
def fromiter(iter, dtype, count=-1, *, device=None):
    """A 1-d array from the values an iterable yields (count of them when count >= 0)."""
    import itertools

    vals = list(itertools.islice(iter, count) if count >= 0 else iter)
    if count >= 0 and len(vals) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(vals)} items.")
    return _core.asarray(_np().array(vals, dtype=str(_dt(dtype))),
                         device=device if device is not None else _default_device())


@_public
def frombuffer(buffer, dtype=float, count=-1, offset=0, *, device=None):
    """An array from the bytes of a buffer (copied to device when one is given)."""
    h = _np().frombuffer(buffer, dtype=str(_dt(dtype)), count=count, offset=offset)
    return _core.asarray(h, device=device if device is not None else _default_device())


@_public
def fromstring(string, dtype=float, count=-1, *, sep, like=None):
    """A 1-d array from numbers in text separated by sep."""
    h = _np().fromstring(string, dtype=str(_dt(dtype)), count=count, sep=sep)
    return _core.asarray(h, device=_default_device())


@_public
def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    """An array from a binary (sep='') or text file, read on the host."""
    h = _np().fromfile(file, dtype=str(_dt(dtype)), count=count, sep=sep, offset=offset)
    return _core.asarray(h, device=_default_device())


@_public
def indices(dimensions, dtype=int, sparse=False, *, device=None):
    """The grid of indices of an array of shape dimensions: one array per axis."""
    dimensions = tuple(dimensions)
    n = len(dimensions)
    dev = device if device is not None else _default_device()
    dt = "int64" if dtype is int else dtype
    out = []
    for i, d in enumerate(dimensions):
        shp = [1] * n
        shp[i] = d
        idx = _core.arange(d, device=dev).astype(dt).reshape(shp)
        out.append(idx if sparse else _core.broadcast_to(idx, dimensions).copy())
    if sparse:
        return tuple(out)
    if not out:
        return _core.zeros((0,), dtype=dt, device=dev)
    return _core.stack(out)


@_public
def diagflat(v, k=0):
    """A 2-d array with the flattened input on diagonal k."""
    return _core.diag(asarray(v).ravel(), k)


@_public
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: columns x**(N-1), ..., x**0 (reversed with increasing)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else N
    powers = _core.arange(N, device=x.device)
    if not increasing:
        powers = powers[::-1]
    dt = _core.result_type(x, 1) if x.dtype.kind != "b" else _dt("int64")
    if N == 0:
        return _core.empty((x.shape[0], 0), dtype=dt, device=x.device)
    cols = [_core.ones(x.shape, dtype=dt, device=x.device)]
    for _ in range(1, N):
        cols.append(_core.multiply(cols[-1], x.astype(dt)))
    m = _core.stack(cols, axis=1)
    return m if increasing else m[:, ::-1].copy()


def _window(M, device, f, start=None):
    """A window of M points: f of the float64 points n = 1 - M, 3 - M, ...,
    M - 1 (n = 0, 1, ..., M - 1 with start=0), with NumPy's answers for
    fewer than two points."""
    M = _operator.index(M) if not isinstance(M, float) else int(M)
    dev = device if device is not None else _default_device()
    if M < 1:
        return _core.zeros((0,), device=dev)
    if M == 1:
        return _core.ones((1,), device=dev)
    n = (_core.arange(1 - M, M, 2, device=dev) if start is None else _core.arange(start, M, device=dev))
    return f(n.astype("float64"), M)


def _cos_of(n, M, k=1):
    return _core.cos(_core.multiply(n, k * _math.pi / (M - 1)))


@_public
def hanning(M, *, device=None):
    """The Hann window of M points."""
    return _window(M, device, lambda n, M: _core.add(0.5, _core.multiply(0.5, _cos_of(n, M))))


@_public
def hamming(M, *, device=None):
    """The Hamming window of M points."""
    return _window(M, device, lambda n, M: _core.add(0.54, _core.multiply(0.46, _cos_of(n, M))))


@_public
def blackman(M, *, device=None):
    """The Blackman window of M points."""
    return _window(M, device, lambda n, M: _core.add(_core.add(0.42, _core.multiply(0.5, _cos_of(n, M))),
                                                     _core.multiply(0.08, _cos_of(n, M, 2.0))))


@_public
def bartlett(M, *, device=None):
    """The Bartlett (triangular) window of M points."""
    return _window(M, device, lambda n, M: _core.where(_core.less_equal(n, 0), _core.add(1.0, _core.divide(n, M - 1)),
                                                       _core.subtract(1.0, _core.divide(n, M - 1))))


@_public
def i0(x):
    """The modified Bessel function of the first kind, order 0 (computed on the host, as NumPy's)."""
    x = asarray(x)
    return _core.asarray(_np().i0(_core.asnumpy(x)), device=x.device)


@_public
def kaiser(M, beta, *, device=None):
    """The Kaiser window of M points."""
    def f(n, M):
        alpha = (M - 1) / 2.0
        t = _core.subtract(1.0, _core.square(_core.divide(_core.subtract(n, alpha), alpha)))
        arg = _core.multiply(float(beta), _core.sqrt(_core.maximum(t, 0.0)))
        return _core.divide(i0(arg), float(_np().i0(float(beta))))
    return _window(M, device, f, start=0)


# ------------------------------------------------------------- index helpers

@_public
def diag_indices_from(arr):
    """The indices of the main diagonal of a square n-d array."""
    arr = asarray(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return tuple(_as(i, arr.device) for i in _core.diag_indices(arr.shape[0], arr.ndim))


@_public
def tril_indices_from(arr, k=0):
    """The indices of the lower triangle of a 2-d array."""
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tuple(_as(i, arr.device) for i in _core.tril_indices(arr.shape[-2], k=k, m=arr.shape[-1]))


@_public
def triu_indices_from(arr, k=0):
    """The indices of the upper triangle of a 2-d array."""
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tuple(_as(i, arr.device) for i in _core.triu_indices(arr.shape[-2], k=k, m=arr.shape[-1]))


@_public
def mask_indices(n, mask_func, k=0):
    """The indices where mask_func(ones((n, n)), k) is non-zero."""
    m = mask_func(_core.ones((n, n), dtype="int64"), k)
    return _core.nonzero(_core.not_equal(m, 0))


@_public
def fill_diagonal(a, val, wrap=False):
    """Write val along the main diagonal of a (in place); wrap continues past a tall matrix's square."""
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(_math.prod(a.shape[i + 1:]) for i in range(a.ndim - 1))
        end = None
    n = a.size if end is None else _bi.min(end, a.size)
    idx = _core.arange(0, n, step, device=a.device)
    v = _as(val, a.device).ravel()
    if idx.size == 0:
        return None
    if v.size == 0:
        return None
    reps = -(-idx.size // v.size)
    v = _core.tile(v, reps)[: idx.size] if v.size != idx.size else v
    _core.put(a, idx, v)
    return None


@_public
def place(arr, mask, vals):
    """arr[mask] = vals, the values repeated as needed (in place)."""
    mask = _as(mask, arr.device).astype("bool")
    vals = _as(vals, arr.device).ravel()
    n = int(_core.count_nonzero(mask))
    if n == 0:
        return None
    if vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    reps = -(-n // vals.size)
    arr[mask] = _core.tile(vals, reps)[:n].astype(arr.dtype)
    return None


@_public
def putmask(a, mask, values):
    """a.flat[i] = values.flat[i % len(values)] where mask.flat[i] is true (in place)."""
    mask = _core.broadcast_to(_as(mask, a.device).astype("bool"), a.shape)
    values = _as(values, a.device).ravel()
    if values.size == 0:
        return None
    reps = -(-a.size // values.size)
    full = _core.tile(values, reps)[: a.size].reshape(a.shape).astype(a.dtype)
    a[...] = _core.where(mask, full, a)
    return None


@_public
def copyto(dst, src, casting="same_kind", where=True):
    """Copy src into dst (broadcast), where ``where`` holds; casting checked as NumPy does."""
    src = _as(src, dst.device)
    if not _core.can_cast(src.dtype, dst.dtype, casting):
        raise TypeError(f"Cannot cast array data from dtype('{src.dtype}') to dtype('{dst.dtype}') according to the rule '{casting}'")
    s = _core.broadcast_to(src, dst.shape).astype(dst.dtype)
    if where is True:
        dst[...] = s
    else:
        dst[...] = _core.where(_core.broadcast_to(_as(where, dst.device).astype("bool"), dst.shape), s, dst)


# ------------------------------------------------------------- splitting, blocks

@_public
def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-d arrays)."""
    a = asarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _ck().split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


@_public
def vsplit(ary, indices_or_sections):
    """Split along the first axis (arrays of 2 or more dimensions)."""
    a = asarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _ck().split(a, indices_or_sections, 0)


@_public
def dsplit(ary, indices_or_sections):
    """Split along the third axis (arrays of 3 or more dimensions)."""
    a = asarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _ck().split(a, indices_or_sections, 2)


@_public
def block(arrays):
    """An array assembled from nested lists of blocks (the innermost lists join along the last axis)."""
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("Lists cannot be empty")
            ds = {depth(y) for y in x}
            if len(ds) != 1:
                raise ValueError("List depths are mismatched.")
            return 1 + ds.pop()
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block does not allow implicit conversion from tuple to ndarray.")
        return 0

    d = depth(arrays)
    dev = _device_of(arrays) if not isinstance(arrays, ndarray) else arrays.device

    def leaves(x):
        if isinstance(x, list):
            for y in x:
                yield from leaves(y)
        else:
            yield x

    ndim = _bi.max([d] + [_as(x, dev).ndim for x in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, list):
            a = _as(x, dev)
            return a.reshape((1,) * (ndim - a.ndim) + tuple(a.shape))
        parts = [build(y, level + 1) for y in x]
        return _core.concatenate(parts, axis=-(d - level))

    r = build(arrays, 0)
    return r.copy() if d == 0 else r


@_public
def rollaxis(a, axis, start=0):
    """Roll axis back until it lies before position start (a view)."""
    a = asarray(a)
    n = a.ndim
    axis = _norm_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _core.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _core.transpose(a, axes)


@_public
def trim_zeros(filt, trim="fb", axis=None):
    """Leading ('f') and/or trailing ('b') zeros removed from a 1-d array."""
    a = asarray(filt)
    trim = trim.lower()
    if a.ndim != 1:
        # n-d trimming (NumPy 2.2's axis=): NumPy's own on a host copy
        h = _core.asnumpy(a)
        return _as(_np().trim_zeros(h, trim, axis) if axis is not None else _np().trim_zeros(h, trim), a.device)
    nz = _core.flatnonzero(_core.not_equal(a, 0))
    if nz.size == 0:
        return a[0:0]
    lo = int(nz[0]) if "f" in trim else 0
    hi = int(nz[-1]) + 1 if "b" in trim else a.shape[0]
    return a[lo:hi]


@_public
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, with optional ends."""
    a = asarray(ary).ravel()
    d = _core.subtract(a[1:], a[:-1])
    parts = []
    if to_begin is not None:
        parts.append(_as(to_begin, a.device).ravel().astype(a.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(_as(to_end, a.device).ravel().astype(a.dtype))
    return _core.concatenate(parts) if len(parts) > 1 else d


@_public
def sort_complex(a):
    """Sorted as complex numbers (real part first, then imaginary)."""
    a = asarray(a)
    if a.dtype.kind != "c":
        dt = "complex64" if a.dtype.kind in "biu" and a.dtype.itemsize <= 2 or str(a.dtype) in ("float16", "float32") else "complex128"
        a = a.astype(dt)
    return _core.sort(a)


@_public
def setxor1d(ar1, ar2, assume_unique=False):
    """Sorted values in exactly one of the two arrays."""
    ck = _ck()
    a = asarray(ar1).ravel()
    b = _as(ar2, a.device).ravel()
    if not assume_unique:
        a = ck.unique(a)
        b = ck.unique(b)
    aux = _core.sort(_core.concatenate((a, b)))
    if aux.size == 0:
        return aux
    flag = _core.concatenate((_core.ones((1,), dtype="bool", device=a.device), _core.not_equal(aux[1:], aux[:-1]),
                              _core.ones((1,), dtype="bool", device=a.device)))
    keep = _core.logical_and(flag[1:], flag[:-1])
    return aux[keep]


@_public
def lexsort(keys, axis=-1):
    """Indices that sort by the last key, then the one before, ... (stable)."""
    if isinstance(keys, ndarray):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len > 0 in lexsort")
        keys = [keys[i] for i in range(keys.shape[0])]
    keys = list(keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    dev = _device_of(keys)
    keys = [_as(k, dev) for k in keys]
    shp = _core.broadcast_shapes(*[k.shape for k in keys])
    keys = [_core.broadcast_to(k, shp) for k in keys]
    if len(shp) == 0:
        return _core.zeros((), dtype="int64", device=dev)
    axis = _norm_axis(axis, len(shp))
    idx = _core.argsort(keys[0], axis=axis, kind="stable")
    for k in keys[1:]:
        kk = _core.take_along_axis(k, idx, axis=axis)
        o = _core.argsort(kk, axis=axis, kind="stable")
        idx = _core.take_along_axis(idx, o, axis=axis)
    return idx


@_public
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along axis, the results stacked in its place."""
    arr = asarray(arr)
    axis = _norm_axis(axis, arr.ndim)
    moved = _core.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if _math.prod(outer) == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    res = [_as(func1d(moved[i], *args, **kwargs), arr.device) for i in _np().ndindex(*outer)]
    r = _core.stack(res).reshape(tuple(outer) + tuple(res[0].shape))
    # the result's own axes replace axis
    nr = res[0].ndim
    if nr == 0:
        return r
    src = list(range(len(outer), len(outer) + nr))
    dst = list(range(axis, axis + nr))
    return _core.moveaxis(r, src, dst)


@_public
def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each of axes in turn, keeping the dimensions."""
    val = asarray(a)
    n = val.ndim
    if isinstance(axes, int) or not hasattr(axes, "__len__"):
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = n + axis
        res = func(val, axis)
        if res.ndim == val.ndim:
            val = res
        else:
            res = _core.expand_dims(res, axis)
            if res.ndim == val.ndim:
                val = res
            else:
                raise ValueError("function is not returning an array of the correct shape")
    return val


@_public
def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (or the constant) where condlist[i] holds; an extra function is the otherwise case."""
    x = asarray(x)
    n2 = len(funclist)
    # one condition rather than a list of them, as NumPy reads it
    if isinstance(condlist, bool) or (isinstance(condlist, ndarray) and condlist.ndim == 0):
        condlist = [condlist]
    elif x.ndim != 0 and not isinstance(condlist[0], list) and not (isinstance(condlist[0], ndarray) and condlist[0].ndim > 0):
        condlist = [condlist]
    conds = [_core.broadcast_to(_as(c, x.device).astype("bool"), x.shape) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        otherwise = _core.ones(x.shape, dtype="bool", device=x.device)
        for c in conds:
            otherwise = _core.logical_and(otherwise, _core.logical_not(c))
        conds.append(otherwise)
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = _core.zeros(x.shape, dtype=x.dtype, device=x.device)
    for c, f in zip(conds, funclist):
        if not callable(f):
            y[c] = f
        else:
            y[c] = _as(f(x[c], *args, **kw), x.device)
    return y


# ------------------------------------------------------------- numerics

def _nonempty_1d(a, v):
    """a and v as 1-d arrays (a 0-d one as one element), v on a's device;
    NumPy's ValueError for an empty one (convolve's and correlate's checks)."""
    a = asarray(a)
    v = _as(v, a.device)
    a = a.reshape(1) if a.ndim == 0 else a
    v = v.reshape(1) if v.ndim == 0 else v
    if a.size == 0:
        raise ValueError("a cannot be empty")
    if v.size == 0:
        raise ValueError("v cannot be empty")
    return a, v


@_public
def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-d arrays ('full', 'same' or 'valid')."""
    a, v = _nonempty_1d(a, v)
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _correlate_full(a, v[::-1], mode, conj=False)


@_public
def correlate(a, v, mode="valid"):
    """The cross-correlation of two 1-d arrays: c[k] = sum_n a[n+k] * conj(v[n])."""
    a, v = _nonempty_1d(a, v)
    if v.shape[0] > a.shape[0]:
        return _correlate_full(v, a.conj() if a.dtype.kind == "c" else a, mode, conj=False, reverse_conj=True)
    return _correlate_full(a, v, mode, conj=True)


def _correlate_full(a, v, mode, conj, reverse_conj=False):
    """c[k] = sum_n a[n + k - (m - 1)] * w[n] over the 'full' range, w = conj(v) when conj; then cut to mode.
    a is the longer of the two (n >= m)."""
    n, m = a.shape[0], v.shape[0]
    dt = _core.result_type(a, v)
    if dt.kind == "b":
        dt = _dt("bool")
    w = v.conj() if conj and v.dtype.kind == "c" else v
    pad = _core.zeros((m - 1,), dtype=dt, device=a.device)
    ap = _core.concatenate((pad, a.astype(dt), pad))
    full_len = n + m - 1
    acc = _core.zeros((full_len,), dtype=dt if dt.kind != "b" else "bool", device=a.device)
    for j in range(m):
        term = _core.multiply(ap[j:j + full_len], w[j].astype(dt))
        acc = _core.logical_or(acc, term) if dt.kind == "b" else _core.add(acc, term)
    if reverse_conj:
        # correlate(a, v) with a shorter a is correlate(v, a)[::-1] conjugated
        acc = acc[::-1]
        if dt.kind == "c":
            acc = acc.conj()
    if mode == "full":
        return acc
    if mode == "same":
        # the reversed result is centred from the other end
        start = (m - 1) // 2 if not reverse_conj else (m - 1) - (m - 1) // 2
        return acc[start:start + n].copy()
    if mode == "valid":
        return acc[m - 1:n].copy()
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


@_public
def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of (xp, fp) at x."""
    x = asarray(x)
    dev = x.device
    xp = _as(xp, dev)
    fp = _as(fp, dev)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    cdt = "complex128" if fp.dtype.kind == "c" else "float64"
    fp = fp.astype(cdt)
    xf = x.astype("float64")
    xp = xp.astype("float64")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = _bi.abs(period)
        left = right = None
        xf = _core.remainder(xf, period)
        xpm = _core.remainder(xp, period)
        order = _core.argsort(xpm, kind="stable")
        xpm = _core.take(xpm, order)
        fpm = _core.take(fp, order)
        xp = _core.concatenate((_core.subtract(xpm[-1:], period), xpm, _core.add(xpm[0:1], period)))
        fp = _core.concatenate((fpm[-1:], fpm, fpm[0:1]))
    n = xp.shape[0]
    if n == 1:
        r = _core.broadcast_to(fp[0], x.shape).copy()
    else:
        j = _core.clip(_core.subtract(_core.searchsorted(xp, xf, side="right"), 1), 0, n - 2)
        x0 = _core.take(xp, j)
        x1 = _core.take(xp, _core.add(j, 1))
        f0 = _core.take(fp, j)
        f1 = _core.take(fp, _core.add(j, 1))
        slope = _core.divide(_core.subtract(f1, f0), _core.subtract(x1, x0))
        r = _core.add(f0, _core.multiply(slope, _core.subtract(xf, x0).astype(cdt)))
        # exactly on a sample point: that point's value (NumPy's, also where slopes are inf)
        r = _core.where(_core.equal(xf, x1), f1, r)
        r = _core.where(_core.equal(xf, x0), f0, r)
    lo = fp[0] if left is None else _as(left, dev).astype(cdt)
    hi = fp[-1] if right is None else _as(right, dev).astype(cdt)
    r = _core.where(_core.less(xf, xp[0]), lo, r)
    r = _core.where(_core.greater(xf, xp[-1]), hi, r)
    r = _core.where(_core.isnan(xf), _core.full_like(r, float("nan")), r)
    return r


@_public
def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient by central differences inside and one-sided ones at the edges."""
    f = asarray(f)
    N = f.ndim
    if axis is None:
        axes = list(range(N))
    else:
        axes = [_norm_axis(a, N) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    n_ax = len(axes)
    if len(varargs) == 0:
        dx = [1.0] * n_ax
    elif len(varargs) == 1 and (not isinstance(varargs[0], (ndarray, list, tuple)) or asarray(varargs[0]).ndim == 0):
        dx = [varargs[0]] * n_ax
    elif len(varargs) == n_ax:
        dx = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype if f.dtype.kind in "fc" else _dt("float64")
    fo = f.astype(otype)
    outs = []
    for ax, d in zip(axes, dx):
        n = f.shape[ax]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) elements are required.")

        def sl(s):
            idx = [slice(None)] * N
            idx[ax] = s
            return tuple(idx)
        shp = [1] * N
        shp[ax] = -1
        d_arr = asarray(d) if not isinstance(d, (int, float)) else None
        out = _core.empty(f.shape, dtype=otype, device=f.device)
        if d_arr is None or d_arr.ndim == 0:
            h = float(d) if d_arr is None else float(d_arr)
            out[sl(slice(1, -1))] = _core.divide(_core.subtract(fo[sl(slice(2, None))], fo[sl(slice(None, -2))]), 2.0 * h)
            if edge_order == 1:
                out[sl(slice(0, 1))] = _core.divide(_core.subtract(fo[sl(slice(1, 2))], fo[sl(slice(0, 1))]), h)
                out[sl(slice(-1, None))] = _core.divide(_core.subtract(fo[sl(slice(-1, None))], fo[sl(slice(-2, -1))]), h)
            else:
                a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
                out[sl(slice(0, 1))] = _core.add(_core.add(_core.multiply(fo[sl(slice(0, 1))], a), _core.multiply(fo[sl(slice(1, 2))], b)), _core.multiply(fo[sl(slice(2, 3))], c))
                a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
                out[sl(slice(-1, None))] = _core.add(_core.add(_core.multiply(fo[sl(slice(-3, -2))], a), _core.multiply(fo[sl(slice(-2, -1))], b)), _core.multiply(fo[sl(slice(-1, None))], c))
        else:
            xs = _as(d_arr, f.device).astype("float64")
            if xs.ndim != 1 or xs.shape[0] != n:
                raise ValueError("when 1d, distances must match the length of the corresponding dimension")
            dxs = _core.subtract(xs[1:], xs[:-1])
            dx1 = dxs[:-1].reshape(shp)
            dx2 = dxs[1:].reshape(shp)
            a = _core.divide(_core.negative(dx2), _core.multiply(dx1, _core.add(dx1, dx2)))
            b = _core.divide(_core.subtract(dx2, dx1), _core.multiply(dx1, dx2))
            c = _core.divide(dx1, _core.multiply(dx2, _core.add(dx1, dx2)))
            out[sl(slice(1, -1))] = _core.add(_core.add(_core.multiply(a, fo[sl(slice(None, -2))]), _core.multiply(b, fo[sl(slice(1, -1))])), _core.multiply(c, fo[sl(slice(2, None))]))
            if edge_order == 1:
                out[sl(slice(0, 1))] = _core.divide(_core.subtract(fo[sl(slice(1, 2))], fo[sl(slice(0, 1))]), dxs[0])
                out[sl(slice(-1, None))] = _core.divide(_core.subtract(fo[sl(slice(-1, None))], fo[sl(slice(-2, -1))]), dxs[-1])
            else:
                d1, d2 = float(dxs[0]), float(dxs[1])
                a, b, c = -(2.0 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2))
                out[sl(slice(0, 1))] = _core.add(_core.add(_core.multiply(fo[sl(slice(0, 1))], a), _core.multiply(fo[sl(slice(1, 2))], b)), _core.multiply(fo[sl(slice(2, 3))], c))
                d1, d2 = float(dxs[-2]), float(dxs[-1])
                a, b, c = d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2.0 * d2 + d1) / (d2 * (d1 + d2))
                out[sl(slice(-1, None))] = _core.add(_core.add(_core.multiply(fo[sl(slice(-3, -2))], a), _core.multiply(fo[sl(slice(-2, -1))], b)), _core.multiply(fo[sl(slice(-1, None))], c))
        outs.append(out)
    return outs[0] if n_ax == 1 else tuple(outs)


@_public
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of vectors of 2 or 3 components along the given axes."""
    a = asarray(a)
    b = _as(b, a.device)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _core.moveaxis(a, _norm_axis(axisa, a.ndim), -1)
    b = _core.moveaxis(b, _norm_axis(axisb, b.ndim), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    dt = _core.result_type(a, b)
    a = a.astype(dt)
    b = b.astype(dt)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return _core.subtract(_core.multiply(a0, b1), _core.multiply(a1, b0))
    zero = _core.zeros((), dtype=dt, device=a.device)
    a2 = a[..., 2] if a.shape[-1] == 3 else zero
    b2 = b[..., 2] if b.shape[-1] == 3 else zero
    c0 = _core.subtract(_core.multiply(a1, b2), _core.multiply(a2, b1))
    c1 = _core.subtract(_core.multiply(a2, b0), _core.multiply(a0, b2))
    c2 = _core.subtract(_core.multiply(a0, b1), _core.multiply(a1, b0))
    c = _core.stack(_core.broadcast_arrays(c0, c1, c2), axis=-1)
    nd = c.ndim
    return _core.moveaxis(c, -1, _norm_axis(axisc, nd))


@_public
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along axis by the trapezoidal rule (sample points x or spacing dx)."""
    y = asarray(y)
    if y.dtype.kind in "biu":
        y = y.astype("float64")
    nd = y.ndim
    axis = _norm_axis(axis, nd)
    s1 = [slice(None)] * nd
    s2 = [slice(None)] * nd
    s1[axis] = slice(1, None)
    s2[axis] = slice(None, -1)
    if x is None:
        d = dx
    else:
        x = _as(x, y.device)
        if x.ndim == 1:
            d = _core.subtract(x[1:], x[:-1])
            shp = [1] * nd
            shp[axis] = d.shape[0]
            d = d.reshape(shp)
        else:
            d = _ck().diff(x, axis=axis)
    return _core.sum(_core.divide(_core.multiply(d, _core.add(y[tuple(s1)], y[tuple(s2)])), 2.0), axis=axis)


@_public
def unwrap(p, discont=None, axis=-1, *, period=2 * _math.pi):
    """p with jumps larger than discont (period/2 by default) taken out by adding multiples of period."""
    p = asarray(p)
    nd = p.ndim
    axis = _norm_axis(axis, nd)
    dd = _ck().diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    s = [slice(None)] * nd
    s[axis] = slice(1, None)
    s = tuple(s)
    integer = p.dtype.kind in "biu" and isinstance(period, int)
    if integer:
        interval_high, rem = _bi.divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
        dd = dd.astype(_float_dtype(p.dtype))
    interval_low = -interval_high
    ddmod = _core.add(_core.remainder(_core.subtract(dd, interval_low), period), interval_low)
    if boundary_ambiguous:
        ddmod = _core.where(_core.logical_and(_core.equal(ddmod, interval_low), _core.greater(dd, 0)),
                            _core.full_like(ddmod, interval_high), ddmod)
    ph_correct = _core.subtract(ddmod, dd)
    ph_correct = _core.where(_core.less(_core.absolute(dd), discont), _core.zeros_like(ph_correct), ph_correct)
    up = p.astype(ph_correct.dtype, copy=True)
    up[s] = _core.add(p[s], _core.cumsum(ph_correct, axis=axis))
    return up


@_public
def bitwise_count(x, /, out=None):
    """The number of 1 bits in each integer's absolute value (uint8)."""
    x = asarray(x)
    if x.dtype.kind not in "biu":
        raise TypeError("ufunc 'bitwise_count' not supported for the input types")
    if x.dtype.kind == "b":
        x = x.astype("uint8")
    if x.dtype.kind == "i":
        x = _core.absolute(x.astype("int64")).astype("uint64")
    v = x.astype("uint64")
    m1, m2, m4 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F
    v = _core.subtract(v, _core.bitwise_and(_core.right_shift(v, 1), m1))
    v = _core.add(_core.bitwise_and(v, m2), _core.bitwise_and(_core.right_shift(v, 2), m2))
    v = _core.bitwise_and(_core.add(v, _core.right_shift(v, 4)), m4)
    v = _core.right_shift(_core.multiply(v, 0x0101010101010101), 56)
    r = v.astype("uint8")
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def packbits(a, /, axis=None, bitorder="big"):
    """Bits of a (non-zero is 1) packed into uint8, eight to a byte, padded with zeros."""
    a = asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        a = a.ravel()
        axis = 0
    axis = _norm_axis(axis, a.ndim)
    bits = _core.moveaxis(_core.not_equal(a, 0).astype("uint8"), axis, -1)
    n = bits.shape[-1]
    padn = (-n) % 8
    if padn:
        bits = _core.concatenate((bits, _core.zeros(bits.shape[:-1] + (padn,), dtype="uint8", device=a.device)), axis=-1)
    bits = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    w = _core.asarray([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128],
                      dtype="uint8", device=a.device)
    r = _core.sum(_core.multiply(bits, w), axis=-1, dtype="uint8")
    return _core.moveaxis(r, -1, axis)


@_public
def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    """The bits of uint8 values, eight to a byte (count of them along axis when given)."""
    a = asarray(a)
    if a.dtype != _dt("uint8"):
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    if axis is None:
        a = a.ravel()
        axis = 0
    axis = _norm_axis(axis, a.ndim)
    m = _core.moveaxis(a, axis, -1)
    sh = _core.asarray([7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7],
                       dtype="uint8", device=a.device)
    bits = _core.bitwise_and(_core.right_shift(m[..., None], sh), 1).astype("uint8")
    bits = bits.reshape(m.shape[:-1] + (m.shape[-1] * 8,))
    if count is not None:
        if count >= 0:
            if count > bits.shape[-1]:
                bits = _core.concatenate((bits, _core.zeros(bits.shape[:-1] + (count - bits.shape[-1],), dtype="uint8", device=a.device)), axis=-1)
            else:
                bits = bits[..., :count]
        else:
            bits = bits[..., :bits.shape[-1] + count]
    return _core.moveaxis(bits, -1, axis).copy()


# ------------------------------------------------------------- histograms

@_public
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges histogram would use for a (equal-width bins or NumPy's named estimators)."""
    a = asarray(a)
    if isinstance(bins, str) or (not hasattr(bins, "__len__") and not isinstance(bins, ndarray)):
        if isinstance(bins, str):
            # the estimators read the data: NumPy's own on a host copy
            return _as(_np().histogram_bin_edges(_core.asnumpy(a), bins, range), a.device)
        bins = _operator.index(bins)
        if bins < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is None:
            if a.size == 0:
                lo, hi = 0.0, 1.0
            else:
                lo, hi = float(_core.min(a)), float(_core.max(a))
        else:
            lo, hi = range
            if lo > hi:
                raise ValueError("max must be larger than min in range parameter.")
        if not (_math.isfinite(lo) and _math.isfinite(hi)):
            raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        dt = _core.result_type(a.dtype, 1.0) if a.dtype.kind in "fc" else _dt("float64")
        return _core.linspace(lo, hi, bins + 1, device=a.device).astype(dt)
    e = _as(bins, a.device)
    if e.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if e.size > 1 and bool(_core.any(_core.less(e[1:], e[:-1]))):
        raise ValueError("`bins` must increase monotonically, when an array")
    return e


@_public
def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """A multidimensional histogram of N points in D dimensions: (counts, [edges per dimension])."""
    if isinstance(sample, (list, tuple)) and not isinstance(sample, ndarray):
        dev = _device_of(sample)
        sample = _core.stack([_as(s, dev).ravel() for s in sample], axis=1) if not _bi.all(isinstance(s, (int, float)) for s in sample) else _as(sample, dev)
    s = asarray(sample)
    if s.ndim == 1:
        s = s.reshape(-1, 1)
    N, D = s.shape
    dev = s.device
    if isinstance(bins, (int,)) or (hasattr(bins, "ndim") and bins.ndim == 0):
        bins = [int(bins)] * D
    elif len(bins) != D:
        raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
    ranges = range if range is not None else [None] * D
    edges = []
    for i in _bi.range(D):
        edges.append(histogram_bin_edges(s[:, i], bins[i], ranges[i]))
    nb = [e.shape[0] + 1 for e in edges]
    lin = _core.zeros((N,), dtype="int64", device=dev)
    inside = _core.ones((N,), dtype="bool", device=dev)
    for i, e in enumerate(edges):
        col = s[:, i]
        k = _core.searchsorted(e, col, side="right")
        # the last edge belongs to the last bin
        k = _core.where(_core.equal(col, e[-1]), _core.full_like(k, e.shape[0] - 1), k)
        inside = _core.logical_and(inside, _core.logical_and(_core.greater(k, 0), _core.less(k, e.shape[0])))
        lin = _core.add(_core.multiply(lin, nb[i]), k)
    ck = _ck()
    w = None if weights is None else _as(weights, dev).ravel()
    lin_in = lin[inside]
    counts = ck.bincount(lin_in, weights=None if w is None else w[inside], minlength=_math.prod(nb))
    hist = counts.reshape(nb)
    core = tuple(slice(1, -1) for _ in nb)
    hist = hist[core].astype("float64")
    if density:
        total = _core.sum(hist)
        for i, e in enumerate(edges):
            shp = [1] * D
            shp[i] = -1
            hist = _core.divide(hist, _core.subtract(e[1:], e[:-1]).reshape(shp))
        hist = _core.divide(hist, total)
    return hist, edges


@_public
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """The 2-d histogram of points (x, y): (counts, x edges, y edges)."""
    x = asarray(x)
    y = _as(y, x.device)
    if x.shape[0] != y.shape[0]:
        raise ValueError("x and y must have the same length.")
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        xedges = yedges = _as(bins, x.device)
        bins = [xedges, yedges]
    elif isinstance(bins, ndarray) and bins.ndim == 1:
        bins = [bins, bins]
    hist, edges = histogramdd(_core.stack((x.ravel(), y.ravel()), axis=1), bins, range, density, weights)
    return hist, edges[0], edges[1]


# ------------------------------------------------------------- nan functions

def _nan_fill(a, value):
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return a, None
    mask = _core.isnan(a)
    return _core.where(mask, _core.full_like(a, value), a), mask


@_public
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product treating NaNs as ones."""
    b, _ = _nan_fill(a, 1)
    kw = {}
    if initial is not None:
        kw["initial"] = initial
    if where is not True:
        kw["where"] = where
    return _core.prod(b, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)


@_public
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaNs as zeros."""
    b, _ = _nan_fill(a, 0)
    return _core.cumsum(b, axis=axis, dtype=dtype, out=out)


@_public
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaNs as ones."""
    b, _ = _nan_fill(a, 1)
    return _core.cumprod(b, axis=axis, dtype=dtype, out=out)


@_public
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    """Variance of the non-NaN elements."""
    a = asarray(a)
    if correction is not None:
        ddof = correction
    if a.dtype.kind not in "fc":
        return _core.var(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)
    keep = _core.logical_not(_core.isnan(a))
    if where is not True:
        keep = _core.logical_and(keep, _as(where, a.device))
    cnt = _core.sum(keep, axis=axis, keepdims=True)
    zero = _core.zeros_like(a)
    av = _core.where(keep, a, zero)
    m = _core.divide(_core.sum(av, axis=axis, keepdims=True, dtype=dtype), cnt) if mean is None else _as(mean, a.device)
    dev_ = _core.where(keep, _core.subtract(a, m), zero)
    sq = _core.multiply(dev_, dev_.conj()).real if dev_.dtype.kind == "c" else _core.multiply(dev_, dev_)
    s = _core.sum(sq, axis=axis, keepdims=keepdims, dtype=dtype)
    c = cnt if keepdims else _core.sum(keep, axis=axis, keepdims=False)
    d = _core.maximum(_core.subtract(c, ddof), 0)
    r = _core.divide(s, d)
    if dtype is None:
        r = r.astype(_ck()._real_of(a.dtype))
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    """Standard deviation of the non-NaN elements."""
    r = _core.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean,
                          correction=correction))
    if out is not None:
        out[...] = r
        return out
    return r


def _nan_quantile_impl(a, q, axis, keepdims, method, scale):
    """Quantiles of the non-NaN elements: NaNs sort last, so each lane's count of
    numbers gives the positions to interpolate between."""
    ck = _ck()
    a = asarray(a)
    if a.dtype.kind not in "fc":
        return ck.quantile(a, _core.divide(q, scale) if scale != 1 else q, axis=axis, keepdims=keepdims, method=method)
    qa = _as(q, a.device).astype("float64")
    if scale != 1:
        qa = _core.divide(qa, float(scale))
    if bool(_core.any(_core.logical_or(_core.less(qa, 0), _core.greater(qa, 1)))):
        raise ValueError("Percentiles must be in the range [0, 100]" if scale == 100 else "Quantiles must be in the range [0, 1]")
    if method != "linear":
        # the other methods: NumPy's own on a host copy
        h = _core.asnumpy(a)
        f = _np().nanpercentile if scale == 100 else _np().nanquantile
        return _as(f(h, _core.asnumpy(qa) * scale, axis=axis, keepdims=keepdims, method=method), a.device)
    orig_ndim = a.ndim
    if axis is None:
        x = a.ravel()
        ax = 0
        axes = tuple(range(orig_ndim))
    else:
        axes = tuple(_norm_axis(i, orig_ndim) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        rest = [i for i in range(orig_ndim) if i not in axes]
        x = _core.transpose(a, rest + list(axes))
        x = x.reshape(tuple(a.shape[i] for i in rest) + (-1,))
        ax = x.ndim - 1
    x = _core.moveaxis(x, ax, -1)
    xs = _core.sort(x, axis=-1)
    n = _core.sum(_core.logical_not(_core.isnan(x)), axis=-1, keepdims=True)
    qq = qa.reshape(qa.shape + (1,) * x.ndim)
    pos = _core.multiply(qq, _core.subtract(n, 1).astype("float64"))
    lo = _core.maximum(_core.floor(pos), 0).astype("int64")
    hi = _core.minimum(_core.add(lo, 1), _core.maximum(_core.subtract(n, 1), 0))
    lo = _core.minimum(lo, _core.maximum(_core.subtract(n, 1), 0))
    frac = _core.subtract(pos, _core.floor(pos))
    L = xs.shape[-1]
    xsb = _core.broadcast_to(xs, qa.shape + xs.shape)
    if L == 0:
        shape = qa.shape + xs.shape[:-1]
        r = _core.full(shape, float("nan"), dtype=a.dtype, device=a.device)
    else:
        vlo = _core.take_along_axis(xsb, _core.broadcast_to(lo, qa.shape + xs.shape[:-1] + (1,)), axis=-1)[..., 0]
        vhi = _core.take_along_axis(xsb, _core.broadcast_to(hi, qa.shape + xs.shape[:-1] + (1,)), axis=-1)[..., 0]
        fr = frac[..., 0].astype(a.dtype)
        # NumPy's linear: lo + (hi - lo) * frac, from the top when frac >= 0.5
        r = _core.where(_core.greater_equal(fr, 0.5), _core.subtract(vhi, _core.multiply(_core.subtract(vhi, vlo), _core.subtract(1, fr))),
                        _core.add(vlo, _core.multiply(_core.subtract(vhi, vlo), fr)))
        r = _core.where(_core.equal(n[..., 0], 0), _core.full_like(r, float("nan")), r)
        if a.dtype.kind == "f":
            r = r.astype(a.dtype)
    if keepdims:
        if axis is None:
            r = r.reshape(qa.shape + (1,) * orig_ndim)
        else:
            shp = list(a.shape)
            for i in axes:
                shp[i] = 1
            r = r.reshape(qa.shape + tuple(shp))
    return r


@_public
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
                interpolation=None):
    """The q-th quantiles of the non-NaN elements (NaN for an all-NaN lane)."""
    if weights is not None:
        raise NotImplementedError("nanquantile(weights=) is not implemented")
    r = _nan_quantile_impl(a, q, axis, keepdims, method if interpolation is None else interpolation, 1)
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
                  interpolation=None):
    """The q-th percentiles of the non-NaN elements (NaN for an all-NaN lane)."""
    if weights is not None:
        raise NotImplementedError("nanpercentile(weights=) is not implemented")
    r = _nan_quantile_impl(a, q, axis, keepdims, method if interpolation is None else interpolation, 100)
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the non-NaN elements (NaN for an all-NaN lane)."""
    r = _nan_quantile_impl(a, 0.5, axis, keepdims, "linear", 1)
    if out is not None:
        out[...] = r
        return out
    return r


# ------------------------------------------------------------- memory

def _data_ptr(a):
    return (a.__array_interface__ if str(a.device) == "cpu" else a.__cuda_array_interface__)["data"][0]


def _span(a):
    """(first byte, one past the last byte, base address) of a's elements."""
    ptr = _data_ptr(a)
    lo = hi = ptr
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return ptr, ptr
        if s > 0:
            hi += s * (n - 1)
        else:
            lo += s * (n - 1)
    return lo, hi + a.itemsize


@_public
def may_share_memory(a, b, /, max_work=0):
    """Whether the memory bounds of a and b overlap (a quick test; see shares_memory)."""
    if not isinstance(a, ndarray) or not isinstance(b, ndarray):
        return False
    if str(a.device) != str(b.device) or a.size == 0 or b.size == 0:
        return False
    la, ha = _span(a)
    lb, hb = _span(b)
    return la < hb and lb < ha


@_public
def shares_memory(a, b, /, max_work=None):
    """Whether a and b have an element's byte in common (exact)."""
    if not may_share_memory(a, b):
        return False
    np = _np()
    la, ha = _span(a)
    lb, hb = _span(b)
    lo = _bi.min(la, lb)
    pa, pb = _data_ptr(a), _data_ptr(b)
    # the same layouts over a stand-in buffer: NumPy's exact overlap solver
    buf = np.zeros(_bi.max(ha, hb) - lo, dtype=np.uint8)

    def stand_in(x, p):
        return np.ndarray(x.shape, dtype=f"V{x.itemsize}", buffer=buf, offset=p - lo, strides=x.strides)
    fa = stand_in(a, pa)
    fb = stand_in(b, pb)
    return bool(np.shares_memory(fa, fb) if max_work is None else np.shares_memory(fa, fb, max_work))


# ------------------------------------------------------------- iteration helpers

class ndindex:
    """An iterator over the index tuples of an array of the given shape, in C order."""

    def __init__(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        self._it = _np().ndindex(*shape)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def ndincr(self):
        """Advance by one (deprecated in NumPy; next() does the same)."""
        next(self)


class ndenumerate:
    """An iterator of (index tuple, value) pairs over an array, in C order."""

    def __init__(self, arr):
        self._a = _core.asnumpy(asarray(arr))
        self._it = _np().ndenumerate(self._a)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)


class broadcast:
    """The broadcast of several arrays: shape, size, ndim and an iterator of tuples of elements."""

    def __init__(self, *args):
        self._arrs = [asarray(a) for a in args]
        self.shape = _core.broadcast_shapes(*[a.shape for a in self._arrs])
        self.ndim = self.nd = len(self.shape)
        self.size = _math.prod(self.shape)
        self.numiter = len(self._arrs)
        self.index = 0
        self._host = None

    @property
    def iters(self):
        """One flat iterator per input, over its broadcast values."""
        return tuple(iter(_core.asnumpy(_core.broadcast_to(a, self.shape)).ravel()) for a in self._arrs)

    def reset(self):
        """Back to the first element."""
        self.index = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._host is None:
            self._host = [_core.asnumpy(_core.broadcast_to(a, self.shape)).ravel() for a in self._arrs]
        if self.index >= self.size:
            raise StopIteration
        i = self.index
        self.index += 1
        return tuple(h[i] for h in self._host)


class flatiter:
    """A flat (C-order) iterator over an array: ``a.flat``; indexing reads and writes a's elements."""

    def __init__(self, base):
        self.base = base
        self.index = 0

    def _linear(self, key):
        n = self.base.size
        if isinstance(key, slice):
            return _core.arange(*key.indices(n), device=self.base.device)
        if isinstance(key, tuple) and len(key) == 1:
            key = key[0]
        if key is Ellipsis:
            return _core.arange(n, device=self.base.device)
        k = _as(key, self.base.device)
        if k.dtype.kind == "b":
            return _core.flatnonzero(k)
        return k

    def __getitem__(self, key):
        if isinstance(key, (int,)) or (hasattr(key, "__index__") and not isinstance(key, (ndarray, list, tuple))):
            key = _operator.index(key)
            n = self.base.size
            if not -n <= key < n:
                raise IndexError(f"index {key} is out of bounds for size {n}")
            return _core.take(self.base, key)
        return _core.take(self.base, self._linear(key))

    def __setitem__(self, key, value):
        if isinstance(key, int):
            key = _core.asarray([key], device=self.base.device)
        idx = self._linear(key).ravel()
        v = _as(value, self.base.device).ravel()
        if idx.size == 0:
            return
        if v.size != idx.size:
            v = _core.tile(v, -(-idx.size // v.size))[: idx.size]
        _core.put(self.base, idx, v)

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return self

    def __next__(self):
        if self.index >= self.base.size:
            raise StopIteration
        v = self[self.index]
        self.index += 1
        return v

    @property
    def coords(self):
        """The index tuple of the next element."""
        return tuple(int(i) for i in _np().unravel_index(self.index, self.base.shape)) if self.base.ndim else ()

    def copy(self):
        """A 1-d copy of the elements."""
        return self.base.ravel().copy()

    def __array__(self, dtype=None, copy=None):
        return _np().asarray(_core.asnumpy(self.base.ravel()), dtype=dtype)

    def __repr__(self):
        return f"<cudakit.flatiter of {self.base.shape} array>"


for _c in (ndindex, ndenumerate, broadcast, flatiter):
    _c.__module__ = "cudakit"
    __all__.append(_c.__name__)


# ------------------------------------------------------------- gufunc-like

@_public
def matvec(x1, x2, /, out=None):
    """Matrix-vector products over the last two axes of x1 and the last of x2 (broadcast)."""
    x1 = asarray(x1)
    x2 = _as(x2, x1.device)
    r = _ck().matmul(x1, x2[..., None])[..., 0]
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def vecmat(x1, x2, /, out=None):
    """Vector-matrix products: conj(x1) (last axis) times x2 (last two axes), broadcast."""
    x1 = asarray(x1)
    x2 = _as(x2, x1.device)
    v = x1.conj() if x1.dtype.kind == "c" else x1
    r = _ck().matmul(v[..., None, :], x2)[..., 0, :]
    if out is not None:
        out[...] = r
        return out
    return r


@_public
def array_equiv(a1, a2):
    """Whether two arrays are shape-consistent (broadcastable) and equal everywhere."""
    try:
        a1 = asarray(a1)
        a2 = _as(a2, a1.device)
    except Exception:
        return False
    try:
        _core.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(_core.all(_core.equal(a1, a2)))


@_public
def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction order for an einsum (read from the operands' shapes only)."""
    np = _np()
    stand_ins = [np.broadcast_to(np.zeros((), dtype=str(asarray(o).dtype)), asarray(o).shape) if not isinstance(o, str) else o for o in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize, einsum_call=einsum_call)


# ------------------------------------------------------------- index tricks

class _GridMaker:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        dev = _default_device()
        keys = key if isinstance(key, tuple) else (key,)
        axes = []
        for k in keys:
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            stop = k.stop
            if isinstance(step, complex):
                num = int(_bi.abs(step))
                axes.append(_core.linspace(start, stop, num, device=dev))
            else:
                axes.append(_core.arange(start, stop, step, device=dev))
        if not isinstance(key, tuple):
            return axes[0]
        dt = _core.result_type(*axes) if axes else _dt("int64")
        axes = [x.astype(dt) for x in axes]
        n = len(axes)
        out = []
        for i, x in enumerate(axes):
            shp = [1] * n
            shp[i] = x.shape[0]
            out.append(x.reshape(shp))
        if self.sparse:
            return tuple(out)
        full = tuple(x.shape[0] for x in axes)
        return _core.stack([_core.broadcast_to(o, full) for o in out])


class _Concatenator:
    def __init__(self, axis, ndmin=1, trans1d=-1, matrix=False):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        dev = _device_of(list(keys))
        parts = []
        scalars = []
        for i, k in enumerate(keys):
            if isinstance(k, str):
                if i != 0:
                    raise ValueError("special directives must be the first entry.")
                if k in ("r", "c"):
                    raise NotImplementedError("matrix directives 'r'/'c' of r_ (numpy.matrix) are not supported")
                vals = [int(v) for v in k.split(",")]
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
                continue
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                if isinstance(step, complex):
                    a = _core.linspace(start, k.stop, int(_bi.abs(step)), device=dev)
                else:
                    a = _core.arange(start, k.stop, step, device=dev)
                if ndmin > 1:
                    a = _ndmin(a, ndmin, trans1d)
            elif not isinstance(k, (ndarray, list, tuple)) and _np().ndim(k) == 0:
                a = _as(k, dev).reshape(1) if ndmin <= 1 else _ndmin(_as(k, dev).reshape(1), ndmin, trans1d)
                scalars.append(len(parts))
            else:
                a = _as(k, dev)
                if a.ndim < ndmin:
                    a = _ndmin(a, ndmin, trans1d)
            parts.append(a)
        if not parts:
            return _core.zeros((0,), device=dev)
        # scalars take part in the dtype as Python numbers do (NEP 50)
        nonscalar = [p for j, p in enumerate(parts) if j not in scalars]
        dt = _core.result_type(*nonscalar, *[parts[j].item() for j in scalars]) if nonscalar else _core.result_type(*parts)
        return _core.concatenate([p.astype(dt) for p in parts], axis=axis)

    def __len__(self):
        return 0


def _ndmin(a, ndmin, trans1d):
    k = ndmin - a.ndim
    if k <= 0:
        return a
    b = a.reshape((1,) * k + tuple(a.shape))
    if trans1d != -1:
        k2 = ndmin - a.ndim
        if trans1d < 0:
            trans1d += k2 + 1
        defaxes = list(range(ndmin))
        axes = defaxes[:trans1d] + defaxes[k2:] + defaxes[trans1d:k2]
        b = _core.transpose(b, axes)
    return b


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


mgrid = _GridMaker(False)
mgrid.__doc__ = "Dense coordinate arrays: ``mgrid[0:3, 0:4]`` (a complex step is a point count, as linspace)."
ogrid = _GridMaker(True)
ogrid.__doc__ = "Open (broadcastable) coordinate arrays: ``ogrid[0:3, 0:4]``."
r_ = _Concatenator(0)
r_.__doc__ = "Concatenation along the first axis by index syntax: ``r_[1:4, 0, a]``."
c_ = _Concatenator(-1, ndmin=2, trans1d=0)
c_.__doc__ = "Concatenation of 1-d inputs as columns: ``c_[a, b]``."
s_ = _IndexExpression(False)
s_.__doc__ = "Builds index tuples: ``a[s_[1:3, ::2]]``."
index_exp = _IndexExpression(True)
index_exp.__doc__ = "Builds index tuples, always a tuple: ``index_exp[1:3]``."
__all__ += ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]


# ------------------------------------------------------------- floating-point errors

_ERR_KINDS = ("divide", "over", "under", "invalid")
_ERR_MODES = ("ignore", "warn", "raise", "call", "print", "log")
# cudakit's default is 'ignore' everywhere (NumPy's is 'warn' but for
# underflow): a check after every op would slow down every op, and CuPy
# does not warn either.  seterr/errstate turn the checks on.
_errstate = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
_errcall = [None]


def _apply_errstate():
    _core._set_fp_checks(_bi.any(_errstate[k] != "ignore" for k in ("divide", "over", "invalid")))


@_public
def seterr(all=None, divide=None, over=None, under=None, invalid=None):
    """Set how floating-point errors are handled ('ignore', 'warn', 'raise', 'call', 'print', 'log'); returns the old settings.

    cudakit starts with every mode 'ignore' (NumPy starts with 'warn'):
    checking costs a pass over each result, so it is paid only when asked for.

    On the CPU the ufuncs check their results after the op when a mode is not
    'ignore' and warn (RuntimeWarning) or raise (FloatingPointError) as NumPy
    does: division by zero, invalid results (NaN from non-NaN inputs) and
    overflow (an infinity from finite inputs).  Underflow is not detected.
    On a GPU the settings are accepted and kept but nothing is checked: a
    check would cost a device round trip per op.
    """
    old = geterr()
    new = {"divide": divide, "over": over, "under": under, "invalid": invalid}
    for k in _ERR_KINDS:
        v = new[k] if new[k] is not None else all
        if v is None:
            continue
        if v not in _ERR_MODES:
            raise ValueError(f"invalid error mode {v!r}")
        _errstate[k] = v
    _apply_errstate()
    return old


@_public
def geterr():
    """The current floating-point error handling, as a dict."""
    return dict(_errstate)


@_public
def seterrcall(func):
    """The function (or object with a write method) that the 'call'/'log' modes use; returns the old one."""
    if func is not None and not callable(func) and not hasattr(func, "write"):
        raise ValueError("Only callable can be used as callback")
    old = _errcall[0]
    _errcall[0] = func
    return old


@_public
def geterrcall():
    """The current 'call' mode function."""
    return _errcall[0]


class errstate(_contextlib.ContextDecorator):
    """A context manager (and decorator) setting the floating-point error handling in its block, as ``seterr``."""

    def __init__(self, *, call=None, **kwargs):
        self._call = call
        self._kw = kwargs
        for k in kwargs:
            if k not in _ERR_KINDS and k != "all":
                raise TypeError(f"errstate() got an unexpected keyword argument '{k}'")

    def __enter__(self):
        self._old = seterr(**self._kw)
        if self._call is not None:
            self._oldcall = seterrcall(self._call)
        return self

    def __exit__(self, *exc):
        seterr(**self._old)
        if self._call is not None:
            seterrcall(self._oldcall)
        return False


errstate.__module__ = "cudakit"
__all__.append("errstate")

# ops whose infinite results from finite inputs are a division by zero
_DIVIDE_OPS = {"divide", "true_divide", "floor_divide", "remainder", "fmod", "log", "log2", "log10", "log1p",
               "arctanh", "reciprocal", "power"}
_FLOAT_OPS_SKIP = {"isnan", "isinf", "isfinite", "signbit", "equal", "not_equal", "less", "less_equal", "greater",
                   "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "maximum", "minimum",
                   "fmax", "fmin", "copysign", "nextafter", "absolute", "negative", "positive", "sign", "conjugate",
                   "floor", "ceil", "trunc", "rint"}


def _fp_report(kind, opname):
    mode = _errstate[kind]
    if mode == "ignore":
        return
    word = {"divide": "divide by zero", "over": "overflow", "invalid": "invalid value", "under": "underflow"}[kind]
    msg = f"{word} encountered in {opname}"
    if mode == "warn":
        _warnings.warn(msg, RuntimeWarning, stacklevel=3)
    elif mode == "raise":
        raise FloatingPointError(msg)
    elif mode == "call":
        f = _errcall[0]
        if f is None:
            raise ValueError(f"Callback function must be set for 'call' error mode ({msg})")
        code = {"divide": 1, "over": 2, "under": 4, "invalid": 8}[kind]
        f(word, code) if callable(f) else f.write(msg + "\n")
    elif mode == "print":
        print(f"Warning: {msg}")
    elif mode == "log":
        f = _errcall[0]
        if f is None or not hasattr(f, "write"):
            raise ValueError("log error mode needs an object with a write method (seterrcall)")
        f.write(f"Warning: {msg}\n")


def _fp_check(opname, inputs, result):
    """seterr's check of one ufunc's CPU result (called from src/python/ufunc.c)."""
    if not isinstance(result, ndarray) or result.dtype.kind not in "fc" or opname in _FLOAT_OPS_SKIP:
        return
    arrs = [x if isinstance(x, ndarray) else _core.asarray(x) for x in inputs]
    if _bi.any(a.dtype.kind == "c" for a in arrs) and result.dtype.kind == "c":
        return
    r = result.real if result.dtype.kind == "c" else result
    all_nan = _core.isnan(r)
    if bool(_core.any(all_nan)):
        in_nan = _core.zeros(r.shape, dtype="bool", device=r.device)
        for a in arrs:
            if a.dtype.kind in "fc":
                in_nan = _core.logical_or(in_nan, _core.isnan(a))
        if bool(_core.any(_core.logical_and(all_nan, _core.logical_not(in_nan)))):
            _fp_report("invalid", opname)
    inf = _core.isinf(r)
    if bool(_core.any(inf)):
        fin = _core.ones(r.shape, dtype="bool", device=r.device)
        for a in arrs:
            if a.dtype.kind in "fc":
                fin = _core.logical_and(fin, _core.isfinite(a))
        new_inf = _core.logical_and(inf, fin)
        if bool(_core.any(new_inf)):
            if opname in _DIVIDE_OPS:
                zero = _core.zeros(r.shape, dtype="bool", device=r.device)
                if len(arrs) == 2 and opname not in ("power",):
                    zero = _core.equal(arrs[1], 0)
                elif len(arrs) == 1:
                    zero = _core.ones(r.shape, dtype="bool", device=r.device)
                else:
                    zero = _core.logical_and(_core.equal(arrs[0], 0), _core.less(arrs[1], 0))
                div = _core.logical_and(new_inf, zero)
                if bool(_core.any(div)):
                    _fp_report("divide", opname)
                if bool(_core.any(_core.logical_and(new_inf, _core.logical_not(zero)))):
                    _fp_report("over", opname)
            else:
                _fp_report("over", opname)


# ------------------------------------------------------------- where= / initial=

_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False, "mean": 0, "var": 0, "std": 0}


def _reduce_masked(name, a, axis, dtype, out, keepdims, initial, where, ddof, correction):
    """A reduction with where= and/or initial= (called from src/python/reduce.c): the masked-out
    elements replaced by the reduction's identity, then the plain reduction."""
    a = asarray(a)
    w = True if where is True else _core.broadcast_to(_as(where, a.device).astype("bool"), a.shape)
    kw = {"axis": axis, "keepdims": bool(keepdims)}
    if dtype is not None and name not in ("min", "max", "all", "any"):
        kw["dtype"] = dtype
    if name in ("sum", "prod", "all", "any"):
        if w is not True:
            fill = _core.asarray(_IDENTITY[name], device=a.device).astype(a.dtype)
            a = _core.where(w, a, fill)
        r = getattr(_core, name)(a, **kw)
        if initial is not None:
            op = {"sum": _core.add, "prod": _core.multiply, "all": _core.logical_and, "any": _core.logical_or}[name]
            r = op(r, _as(initial, a.device)).astype(r.dtype)
    elif name in ("min", "max"):
        if a.dtype.kind == "c":
            raise NotImplementedError(f"{name}() of complex arrays with where=/initial= is not implemented")
        if initial is None and w is not True:
            raise ValueError(f"reduction operation '{'maximum' if name == 'max' else 'minimum'}' does not have an "
                             "identity, so to use a where mask one has to specify 'initial'")
        if a.dtype.kind == "f":
            ext = float("-inf") if name == "max" else float("inf")
        elif a.dtype.kind == "b":
            ext = name != "max"
        else:
            info = _np().iinfo(str(a.dtype))
            ext = int(info.min) if name == "max" else int(info.max)
        if w is not True:
            a = _core.where(w, a, _core.asarray(ext, device=a.device).astype(a.dtype))
        if a.size == 0 or _bi.any(a.shape[i] == 0 for i in _axes_of(axis, a.ndim)):
            r = _core.full(_reduced_shape(a.shape, axis, keepdims), ext, dtype=a.dtype, device=a.device)
        else:
            r = getattr(_core, name)(a, **kw)
        if initial is not None:
            op = _core.maximum if name == "max" else _core.minimum
            r = op(r, _as(initial, a.device).astype(a.dtype))
    elif name == "mean":
        if initial is not None:
            raise TypeError("mean() got an unexpected keyword argument 'initial'")
        ones = _core.ones(a.shape, dtype="bool", device=a.device) if w is True else w
        af = a if a.dtype.kind in "fc" else a.astype("float64")
        s = _core.sum(_core.where(ones, af, _core.zeros_like(af)), **kw)
        r = _core.divide(s, _core.sum(ones, axis=axis, keepdims=bool(keepdims)))
        if dtype is not None:
            r = r.astype(dtype)
        elif a.dtype.kind in "fc":
            r = r.astype(a.dtype)
    elif name in ("var", "std"):
        if ddof is not None and correction is not None:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        dd = float(correction if correction is not None else (ddof or 0))
        r = nanvar(_where_nan(a, w), axis=axis, dtype=dtype, ddof=dd, keepdims=bool(keepdims))
        if name == "std":
            r = _core.sqrt(r)
    else:
        raise NotImplementedError(f"{name}(): the initial= and where= arguments are not implemented")
    if out is not None:
        out[...] = r
        return out
    return r


def _where_nan(a, w):
    af = a if a.dtype.kind in "fc" else a.astype("float64")
    if w is True:
        return af
    return _core.where(w, af, _core.full_like(af, float("nan")))


def _axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(_norm_axis(i, ndim) for i in (axis if isinstance(axis, tuple) else (axis,)))


def _reduced_shape(shape, axis, keepdims):
    axes = _axes_of(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _ufunc_where(ufunc, *args, out=None, where=True, **kw):
    """A ufunc call with where= (called from src/python/ufunc.c): the op everywhere, then kept where
    ``where`` holds; elsewhere out keeps its values (uninitialised without out, as NumPy)."""
    nin = ufunc.nin
    if len(args) > nin:
        out = args[nin]
        args = args[:nin]
    if isinstance(out, tuple):
        out = out[0]
    r = ufunc(*args, **kw)
    casting = kw.get("casting", "same_kind")
    if out is not None and not _core.can_cast(r.dtype, out.dtype, casting):
        from ._exceptions import _UFuncOutputCastingError
        raise _UFuncOutputCastingError(f"Cannot cast ufunc '{ufunc.__name__}' output from dtype('{r.dtype}') to "
                                       f"dtype('{out.dtype}') with casting rule '{casting}'")
    w = _as(where, r.device).astype("bool")
    if out is None:
        shp = _core.broadcast_shapes(r.shape, w.shape)
        out = _core.zeros(shp, dtype=r.dtype, device=r.device)
    out[...] = _core.where(w, r, out)
    return out
