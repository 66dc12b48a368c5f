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
from ._array_api import (  # noqa: E402  (the array API standard's namespace)
    __array_api_version__, __array_namespace_info__, astype, finfo, iinfo)
from . import autograd  # noqa: E402
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401

CompileError = _core.CompileError
device = _core.Device   # PyTorch's spelling: torch.device("cuda")

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


_NOT_GIVEN = object()   # where(c, x, None) is a where of None (NumPy: an object array), not a nonzero


def where(condition, x=_NOT_GIVEN, y=_NOT_GIVEN, /):
    """``where(condition, x, y)``: elements of x where condition holds, else of y."""
    if x is _NOT_GIVEN and y is _NOT_GIVEN:
        return _core.nonzero(condition)
    if x is _NOT_GIVEN or y is _NOT_GIVEN:
        raise ValueError("either both or neither of x and y should be given")
    return _where3(condition, x, y)


def clip(a, min=None, max=None, out=None, *, a_min=None, a_max=None):
    """Limit the values of ``a`` to [min, max]; either bound may be None
    (the array API's names; NumPy's a_min= and a_max= are taken too)."""
    if (min is not None or max is not None) and (a_min is not None or a_max is not None):
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
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


def _int_or_deprecated(fn, name, v):
    """v as an int; another number is deprecated and truncated (NumPy 2.5's
    rot90 and tri warn, then truncate: tri through an integer arange)."""
    try:
        return _operator.index(v)
    except TypeError:
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{fn}: {name} must be an integer, not {type(v).__name__}") from None
        import warnings

        warnings.warn(f"{fn}: a {name} ({v!r}) that is not an integer is deprecated, as in NumPy 2.5",
                      DeprecationWarning, stacklevel=3)
        return int(v)


def tri(N, M=None, k=0, dtype=float, *, device=None):
    """An array with ones at and below the k-th diagonal."""
    M = N if M is None else M
    k = _int_or_deprecated("tri", "k", k)
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


# The array API's dtype kinds, as NumPy's kind characters of the dtypes
# they hold.
_ISDTYPE_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


def isdtype(dtype, kind):
    """The array API's dtype kind test."""
    dt = _dtype_of(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if not isinstance(k, (str, _core.dtype, type)):
            raise TypeError(f"kind argument must be comprised of NumPy dtypes or strings only, but is a {type(k)}.")
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"unknown dtype kind {k!r}")
            if dt.kind in _ISDTYPE_KINDS[k]:
                return True
        elif _dtype_of(k) == dt:
            return True
    return False


def _dtype_of(d):
    return _core.result_type(d)


# The C core's dtype table (include/cudakit_dtypes.h), by name.
_DTYPE_ROWS = {r.name: r for r in _core._dtype_table}


def _real_of(dt):
    """The name of the dtype of dt's real part (dt's own unless complex)."""
    return _DTYPE_ROWS[str(dt)].real


def _complex_of(dt):
    """The name of the complex dtype whose parts are of the float dtype dt."""
    return next(r.name for r in _core._dtype_table if r.kind == "c" and r.real == str(dt))


# ---------------------------------------------------------------------------
# Shape manipulation (issue 4).  The C module (src/python/shape.c) has the
# core ones; these are short compositions of them: views and concatenate.
# ---------------------------------------------------------------------------

import builtins as _builtins  # noqa: E402  (min/max/round here are array functions)


concat = _core.concatenate


def atleast_1d(*arys):
    """Views of the inputs with at least one dimension (a list for several)."""
    res = [asarray(a) if asarray(a).ndim >= 1 else asarray(a).reshape(1) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    """Views with at least two dimensions: 1-d (N,) becomes (1, N)."""
    res = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a[None, :]
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    """Views with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    res = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a[None, :, None]
        elif a.ndim == 2:
            a = a[:, :, None]
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def _as_list(tup, fname):
    # an array is a sequence of its rows, as NumPy takes it
    if not hasattr(tup, "__len__"):
        raise TypeError(f"arrays to {fname} must be passed as a sequence")
    return list(tup)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-d inputs)."""
    arrs = atleast_1d(*_as_list(tup, "hstack"))
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return _core.concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis after making the inputs at least 2-d."""
    arrs = atleast_2d(*_as_list(tup, "vstack"))
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    return _core.concatenate(arrs, 0, dtype=dtype, casting=casting)


row_stack = vstack


def dstack(tup):
    """Join along the third axis after making the inputs at least 3-d."""
    arrs = atleast_3d(*_as_list(tup, "dstack"))
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    return _core.concatenate(arrs, 2)


def column_stack(tup):
    """1-d inputs as columns, 2-d ones as they are, joined along axis 1."""
    arrs = []
    for a in _as_list(tup, "column_stack"):
        a = asarray(a)
        if a.ndim < 2:
            a = atleast_1d(a)[:, None]
        arrs.append(a)
    return _core.concatenate(arrs, 1)


def fliplr(m):
    """Reverse the columns (axis 1) - a view."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _core.flip(m, 1)


def flipud(m):
    """Reverse the rows (axis 0) - a view."""
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _core.flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of axes (a view)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = asarray(m)
    if axes[0] == axes[1] or _builtins.abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim or axes[1] < -m.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = _int_or_deprecated("rot90", "k", k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return _core.flip(_core.flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return _core.transpose(_core.flip(m, axes[1]), perm)
    return _core.flip(_core.transpose(m, perm), axes[1])


def _split_views(a, bounds, axis):
    idx = [slice(None)] * a.ndim
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx[axis] = slice(lo, hi)
        out.append(a[tuple(idx)])
    return out


def _normalize_axis_index(axis, ndim, prefix=None):
    """axis in [0, ndim), as NumPy's normalize_axis_index reads it: any
    integer (a bool too), AxisError out of range, OverflowError and
    ValueError at once (NumPy raises either) beyond a C int."""
    axis = _operator.index(axis)
    if -ndim <= axis < ndim:
        return axis % ndim
    if not -(1 << 31) <= axis < (1 << 31):
        from ._exceptions import _CIntOverflowError

        raise _CIntOverflowError("integer won't fit into a C int")
    raise _core.AxisError(f"{prefix + ': ' if prefix else ''}axis {axis} is out of bounds for array of dimension {ndim}")


_norm_axis = _normalize_axis_index


def array_split(ary, indices_or_sections, axis=0):
    """Split into views; sections need not divide the axis evenly."""
    a = asarray(ary)
    if a.ndim == 0:
        raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = _norm_axis(axis, a.ndim)
    n = a.shape[axis]
    if hasattr(indices_or_sections, "__len__"):
        bounds = [0] + [_operator.index(i) for i in indices_or_sections] + [n]
        # out-of-range and decreasing indices clip as Python slices do
        bounds = [_builtins.min(_builtins.max(b if b >= 0 else b + n, 0), n) for b in bounds]
        return _split_views(a, bounds, axis)
    sections = _operator.index(indices_or_sections)
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    if sections > (1 << 26):
        # a list of that many views would not fit in memory; fail at once
        # rather than after building most of it
        raise MemoryError(f"array_split into {sections} sections")
    each, extra = divmod(n, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + each + (1 if i < extra else 0))
    return _split_views(a, bounds, axis)


def split(ary, indices_or_sections, axis=0):
    """Split into equal views (or at the given indices)."""
    if not hasattr(indices_or_sections, "__len__"):
        a = asarray(ary)
        ax = _norm_axis(axis, a.ndim) if a.ndim else axis
        sections = _operator.index(indices_or_sections)
        if a.ndim and sections > 0 and a.shape[ax] % sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


def unstack(x, /, *, axis=0):
    """The views along one axis, as a tuple."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = _norm_axis(axis, x.ndim)
    idx = [slice(None)] * x.ndim
    out = []
    for i in range(x.shape[axis]):
        idx[axis] = i
        out.append(x[tuple(idx)])
    return tuple(out)


def append(arr, values, axis=None):
    """arr with values added at the end (flattened when axis is None)."""
    arr = asarray(arr)
    values = _core.asarray(values, device=arr.device)
    if axis is None:
        return _core.concatenate((arr, values), None)
    return _core.concatenate((arr, values), axis)


def _delete_keep(n, obj):
    """Indices along an axis of length n that delete(obj) keeps."""
    if isinstance(obj, slice):
        drop = set(range(n)[obj])
    else:
        if isinstance(obj, ndarray):
            obj = obj.tolist()
        items = obj if isinstance(obj, (list, tuple)) else [obj]
        if _builtins.any(isinstance(i, _builtins.bool) for i in items):
            raise NotImplementedError("delete with a boolean mask is not implemented")
        drop = set()
        for i in items:
            i = _operator.index(i)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
            drop.add(i % n)
    return [i for i in range(n) if i not in drop]


def _runs(indices):
    """Consecutive runs of sorted indices, as (start, stop) pairs."""
    runs = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return runs


def delete(arr, obj, axis=None):
    """A copy of arr without the entries obj along axis (flattened when None)."""
    a = asarray(arr)
    if axis is None:
        a = a.ravel()
        axis = 0
    if a.ndim == 0:
        raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = _norm_axis(axis, a.ndim)
    keep = _delete_keep(a.shape[axis], obj)
    idx = [slice(None)] * a.ndim
    pieces = []
    for lo, hi in _runs(keep):
        idx[axis] = slice(lo, hi)
        pieces.append(a[tuple(idx)])
    if not pieces:
        idx[axis] = slice(0, 0)
        return a[tuple(idx)].copy()
    return _core.concatenate(pieces, axis)


def insert(arr, obj, values, axis=None):
    """A copy of arr with values inserted before index (or indices) obj."""
    a = asarray(arr)
    if axis is None:
        a = a.ravel()
        axis = 0
    if a.ndim == 0:
        raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = _norm_axis(axis, a.ndim)
    n = a.shape[axis]
    # NumPy casts the values to arr's dtype without checking (unsafe)
    vals = _core.asarray(values, device=a.device).astype(a.dtype, copy=False)
    if isinstance(obj, slice):
        obj = list(range(n)[obj])
    elif isinstance(obj, ndarray):
        obj = obj.tolist()
    multi = isinstance(obj, (list, tuple))
    if multi and _builtins.any(isinstance(i, _builtins.bool) for i in obj):
        raise NotImplementedError("insert with a boolean mask is not implemented")
    positions = [_operator.index(i) for i in (obj if multi else [obj])]
    for i in positions:
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    positions = [i + n if i < 0 else i for i in positions]
    idx = [slice(None)] * a.ndim
    if len(positions) == 1:
        p = positions[0]
        v = vals.reshape((1,) * (a.ndim - vals.ndim) + tuple(vals.shape)) if vals.ndim < a.ndim else vals
        if not multi:
            # a scalar index inserts values' own first axis at axis, as NumPy
            v = _core.moveaxis(v, 0, axis)
        shape = list(a.shape)
        shape[axis] = v.shape[axis]
        pieces = [None, _core.broadcast_to(v, tuple(shape)), None]
        idx[axis] = slice(0, p)
        pieces[0] = a[tuple(idx)]
        idx[axis] = slice(p, None)
        pieces[2] = a[tuple(idx)]
        return _core.concatenate(pieces, axis)
    k = len(positions)
    shape = list(a.shape)
    shape[axis] = k
    vb = _core.broadcast_to(vals, tuple(shape))
    # the j-th value goes before original position[j]; ties keep their order
    order = sorted(range(k), key=lambda j: positions[j])
    pieces = []
    prev = 0
    for j in order:
        p = positions[j]
        idx[axis] = slice(prev, p)
        pieces.append(a[tuple(idx)])
        idx[axis] = slice(j, j + 1)
        pieces.append(vb[tuple(idx)])
        prev = p
    idx[axis] = slice(prev, None)
    pieces.append(a[tuple(idx)])
    return _core.concatenate(pieces, axis)


# Submodules that load on first use (with NumPy, which they use), keeping
# `import cudakit` fast; the import binds the attribute for next time.
_LAZY_SUBMODULES = ("random", "linalg", "fft", "profiler", "nn", "optim", "keras", "config", "serialization")
_LAZY_SUBMODULES += ("utils", "datasets")
# Top-level functions defined in lazily loaded modules: name -> module.
_LAZY_FUNCTIONS = {
    "matmul": "_linalg_top",
    "dot": "_linalg_top",
    "vdot": "_linalg_top",
    "inner": "_linalg_top",
    "outer": "_linalg_top",
    "tensordot": "_linalg_top",
    "einsum": "_linalg_top",
    "kron": "_linalg_top",
    "vecdot": "_linalg_top",
    "matrix_transpose": "_linalg_top",
    # _stats.py: sets, counting and statistics (issue 4)
    "unique": "_stats",
    "unique_all": "_stats",
    "unique_counts": "_stats",
    "unique_inverse": "_stats",
    "unique_values": "_stats",
    "isin": "_stats",
    "in1d": "_stats",
    "intersect1d": "_stats",
    "union1d": "_stats",
    "setdiff1d": "_stats",
    "bincount": "_stats",
    "histogram": "_stats",
    "digitize": "_stats",
    "median": "_stats",
    "percentile": "_stats",
    "quantile": "_stats",
    "average": "_stats",
    "cov": "_stats",
    "corrcoef": "_stats",
    "diff": "_stats",
    "cumulative_sum": "_stats",
    "cumulative_prod": "_stats",
    "nansum": "_stats",
    "nanmean": "_stats",
    "nanmax": "_stats",
    "nanmin": "_stats",
    "nanargmax": "_stats",
    "nanargmin": "_stats",
    "allclose": "_stats",
    "isclose": "_stats",
    "array_equal": "_stats",
    # _kernels.py: your own kernels in CUDA C (issue 6)
    "RawKernel": "_kernels",
    "RawModule": "_kernels",
    "SourceModule": "_kernels",
    "In": "_kernels",
    "Out": "_kernels",
    "InOut": "_kernels",
    "ArgumentHandler": "_kernels",
    "ElementwiseKernel": "_kernels",
    "ReductionKernel": "_kernels",
    "fuse": "_kernels",
    "debug": "_kernels",
    "vectorize": "cuda._vectorize", "guvectorize": "cuda._vectorize",   # Numba's ufunc makers (issue 14)
    # serialization.py: safetensors, .npz and .npy (issue 16)
    "save": "serialization",
    "load": "serialization",
}


# NumPy's other names (issue 17): _numpy_extra.py, _numpy_io.py, _polynomial.py
from ._numpy_names import LAZY as _NUMPY_LAZY  # noqa: E402
_LAZY_FUNCTIONS.update(_NUMPY_LAZY)
from . import _ndarray_methods  # noqa: E402,F401  (ndarray's and ufunc's Python methods)
from . import _help  # noqa: E402,F401  (the ufuncs' and dtypes' signatures and docstrings)


# NumPy's exception classes (python/cudakit/_exceptions.py), made on first
# access: they subclass NumPy's, and `import cudakit` must not import NumPy.
_LAZY_EXCEPTIONS = ("AxisError", "ComplexWarning", "DTypePromotionError", "UFuncTypeError")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_FUNCTIONS) | set(_LAZY_EXCEPTIONS))


def __getattr__(name):
    import importlib

    if name in _LAZY_EXCEPTIONS:
        c = getattr(_core, name)
        globals()[name] = c
        return c
    if name in _LAZY_SUBMODULES:
        return importlib.import_module("." + name, __name__)
    if name in _LAZY_FUNCTIONS:
        f = getattr(importlib.import_module("." + _LAZY_FUNCTIONS[name], __name__), name)
        globals()[name] = f
        return f
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Imported after Dask (or distributed): hand Dask cudakit's chunk tables and
# serialization now (python/cudakit/_dask.py; Dask's entry points cover the
# other order).
def _register_with_dask():
    import sys

    if "dask" in sys.modules or "distributed" in sys.modules:
        from . import _dask

        _dask._register_if_loaded()


_register_with_dask()
del _register_with_dask
