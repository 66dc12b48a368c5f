"""Shared helpers for the suite: dtype lists, the op table of
include/cudakit_ops.h, and hypothesis strategies that build the same array
(often a strided, transposed or negatively stepped view) in NumPy and in
cudakit on a given device."""
import warnings

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck

# --------------------------------------------------------------- settings


def hsettings(max_examples=30):
    """Modest example counts; the `device` fixture is a plain string, so
    sharing it between examples is fine."""
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much])


# ------------------------------------------------------------------ dtypes

ALL_DTYPES = [
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
INT_DTYPES = ALL_DTYPES[1:9]
SIGNED_DTYPES = ["int8", "int16", "int32", "int64"]
UNSIGNED_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES
REAL_DTYPES = INT_DTYPES + FLOAT_DTYPES
NUMERIC_DTYPES = INT_DTYPES + INEXACT_DTYPES

# ---------------------------------------------------------------- op table
# The C core's op table (include/cudakit_ops.h), as the module exports it.


class Op:
    def __init__(self, rec):
        self.ident, self.name, self.nin, self.rule = rec.id, rec.name, rec.nin, rec.rule
        self.loop_dtypes = list(rec.types)

    def __repr__(self):
        return self.name


OPS = [Op(rec) for rec in ck._core._op_table]
assert len(OPS) > 60, "could not read the op table"
UNARY_OPS = [op for op in OPS if op.nin == 1]
BINARY_OPS = [op for op in OPS if op.nin == 2]
TERNARY_OPS = [op for op in OPS if op.nin == 3]

# ------------------------------------------------------------- tolerances

RTOL = {"float16": 3e-3, "float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}
ATOL = {"float16": 2e-3, "float32": 1e-6, "complex64": 1e-6, "float64": 1e-14, "complex128": 1e-14}


def tol(dtype):
    name = np.dtype(dtype).name
    return dict(rtol=RTOL.get(name, 0), atol=ATOL.get(name, 0))


# -------------------------------------------------------------- elements


def elements(dtype, lo=None, hi=None, *, nan=False, inf=False, zero=True):
    """A strategy for the values of one dtype, optionally within [lo, hi]."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = info.min if lo is None else max(int(np.ceil(lo)), info.min)
        b = info.max if hi is None else min(int(np.floor(hi)), info.max)
        s = st.integers(a, b)
        return s if zero else s.filter(lambda v: v != 0)
    width = {"float16": 16, "float32": 32, "float64": 64, "complex64": 32, "complex128": 64}[dt.name]
    ft = np.dtype(f"float{width}").type
    kw = dict(width=width, allow_nan=nan, allow_infinity=inf, allow_subnormal=False)
    if lo is None and hi is None and not inf and not nan and dt.kind == "f":
        # finite values that stay finite after a little arithmetic
        m = float(np.finfo(dt).max) ** 0.5
        lo, hi = -m, m
    if lo is not None:
        v = ft(lo)
        kw["min_value"] = float(v if v >= lo else np.nextafter(v, ft(np.inf)))
    if hi is not None:
        v = ft(hi)
        kw["max_value"] = float(v if v <= hi else np.nextafter(v, ft(-np.inf)))
    f = st.floats(**kw)
    if not zero:
        f = f.filter(lambda v: v != 0)
    if dt.kind == "c":
        return st.builds(complex, f, f)
    return f


# ------------------------------------------------------------------ views


def _np_elem(dtype):
    return np.dtype(dtype)


@st.composite
def view_of_shape(draw, shape, dtype, elems=None, device="cpu", contiguous_ok=True):
    """A pair (numpy array, cudakit array) of the given shape and equal
    values.  Usually the cudakit array is a view of a larger array with
    steps (possibly negative), an offset and permuted axes."""
    dt = np.dtype(dtype)
    if elems is None:
        elems = elements(dt)
    ndim = len(shape)
    kind = draw(st.sampled_from(["contiguous", "strided", "strided"] if contiguous_ok else ["strided"]))
    if kind == "contiguous" or ndim == 0:
        a = draw(hnp.arrays(dt, shape, elements=elems))
        return a, ck.asarray(a, device=device)
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in range(ndim)]
    offsets = [draw(st.integers(0, 2)) for _ in range(ndim)]
    perm = draw(st.permutations(range(ndim)))
    # base axis perm[i] becomes the view's axis i after .transpose(inv)
    base_shape = [0] * ndim
    for i in range(ndim):
        n = shape[i]
        base_shape[perm[i]] = (max(n, 1) - 1) * abs(steps[i]) + 1 + offsets[i]
    base = draw(hnp.arrays(dt, tuple(base_shape), elements=elems))
    slices = [None] * ndim
    for i in range(ndim):
        n, s, o = shape[i], steps[i], offsets[i]
        if s > 0:
            start = o
            stop = o + (n - 1) * s + 1 if n else o
        else:
            start = base_shape[perm[i]] - 1 - o
            stop = start + (n - 1) * s - 1 if n else start
            if stop < 0:
                stop = None
        slices[perm[i]] = slice(start, stop, s)
    # transpose so that view axis i is base axis perm[i]
    np_view = base[tuple(slices)].transpose(perm)
    ck_view = ck.asarray(base, device=device)[tuple(slices)].transpose(perm)
    assert np_view.shape == tuple(shape), (np_view.shape, shape)
    return np_view, ck_view


@st.composite
def array_pair(draw, dtype, elems=None, device="cpu", min_dims=0, max_dims=4, min_side=0, max_side=5):
    """A pair of any shape (see view_of_shape)."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    return draw(view_of_shape(shape, dtype, elems, device))


def ck_dtype_name(a):
    return np.dtype(str(a.dtype)).name


def complex_warned(fn, *args, **kw):
    """Run fn; return (result, whether a ComplexWarning, NumPy's or
    cudakit's, was given).  Other warnings (NumPy's overflow in casts) are
    silenced."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        r = fn(*args, **kw)
    kinds = (np.exceptions.ComplexWarning, ck.ComplexWarning)
    return r, any(issubclass(w.category, kinds) for w in caught)
