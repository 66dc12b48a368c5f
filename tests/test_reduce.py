"""Reductions and scans against NumPy: sum, prod, mean, var, std, min, max,
argmin, argmax, all, any, count_nonzero, cumsum, cumprod, as functions and
methods, with axis (None, int, negative, tuple), keepdims, dtype, out, on
strided views, plus float32 summation accuracy."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same, reduction_tolerance
from strategies import ALL_DTYPES, elements, hsettings, view_of_shape

SETTINGS = hsettings(40)

REDUCTIONS = ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "all", "any",
              "count_nonzero", "cumsum", "cumprod"]
HAS_DTYPE = {"sum", "prod", "mean", "var", "std", "cumsum", "cumprod"}
SINGLE_AXIS = {"argmin", "argmax", "cumsum", "cumprod"}
NO_KEEPDIMS = {"cumsum", "cumprod"}


def values(name, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if name in ("prod", "cumprod"):
        if dt.kind in "iu":
            return elements(dt, -3 if dt.kind == "i" else 0, 3)
        if dt.kind == "c":
            part = st.floats(-1.25, 1.25, width=dt.itemsize * 4)
            return st.builds(complex, part, part)
        return st.one_of(elements(dt, 0.5, 2.0), elements(dt, -2.0, -0.5))
    if name in ("min", "max", "argmin", "argmax", "all", "any", "count_nonzero") and dt.kind == "f":
        return st.one_of(elements(dt, -100, 100), st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    if dt.kind in "iu":
        return elements(dt)  # integer sums wrap the same way in any order
    if dt.kind == "c":
        part = st.floats(-10, 10, width=dt.itemsize * 4)
        return st.builds(complex, part, part)
    return elements(dt, -10, 10)


def call_both(name, a, ca, kw, method):
    """NumPy's answer and cudakit's (function or method form), or both raising."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = getattr(np, name)(a, **kw)
    except (ValueError, TypeError) as e:
        exc = ValueError if isinstance(e, ValueError) else TypeError
        with pytest.raises(exc):
            getattr(ca, name)(**kw) if method else getattr(ck, name)(ca, **kw)
        return None, None
    got = getattr(ca, name)(**kw) if method else getattr(ck, name)(ca, **kw)
    return got, want


@pytest.mark.parametrize("name", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_reduction(device, name, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5), label="shape")
    a, ca = data.draw(view_of_shape(shape, dtype, values(name, dtype), device), label="array")
    kw = {}
    nd = a.ndim
    axis_choices = [None]
    if nd:
        axis_choices += list(range(-nd, nd))
        if name not in SINGLE_AXIS:
            axis_choices += [tuple(sorted(data.draw(st.sets(st.integers(0, nd - 1), min_size=0, max_size=nd))))]
            axis_choices += [(-1, 0) if nd > 1 else (0,)]
    axis = data.draw(st.sampled_from(axis_choices), label="axis")
    if axis is not None or data.draw(st.booleans()):
        kw["axis"] = axis
    if name not in NO_KEEPDIMS and data.draw(st.booleans()):
        kw["keepdims"] = True
    if name in HAS_DTYPE and data.draw(st.booleans()):
        kw["dtype"] = data.draw(st.sampled_from(["int64", "float64", "float32", "complex128", "uint64"]))
        if name in ("mean", "var", "std") and np.dtype(kw["dtype"]).kind in "iu":
            kw["dtype"] = "float64"
        if np.dtype(dtype).kind == "c" and np.dtype(kw["dtype"]).kind != "c":
            kw["dtype"] = "complex128"
    if name in ("var", "std") and data.draw(st.booleans()):
        if data.draw(st.booleans()):
            kw["ddof"] = data.draw(st.sampled_from([0, 1, 2, 0.5]))
        else:
            kw["correction"] = data.draw(st.sampled_from([0, 1, 1.5]))
    method = name != "count_nonzero" and data.draw(st.booleans(), label="method")
    got, want = call_both(name, a, ca, kw, method)
    if got is None:
        return
    assert isinstance(got, ck.ndarray)
    assert got.device == ck.Device(device)
    assert_same(got, np.asarray(want), **reduction_tolerance(name, want, a))


# --------------------------------------------------------------- details

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_prod_result_dtypes(device, dtype):
    a = np.arange(1, 7).reshape(2, 3).astype(dtype)
    ca = ck.asarray(a, device=device)
    for name in ("sum", "prod", "cumsum", "cumprod", "max", "min", "argmax", "all", "count_nonzero"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a)
        assert_same(getattr(ck, name)(ca), np.asarray(want))
    for name in ("mean", "var", "std"):
        try:
            want = getattr(np, name)(a, axis=0)
        except TypeError:
            with pytest.raises(TypeError):
                getattr(ck, name)(ca, axis=0)
            continue
        assert_same(getattr(ck, name)(ca, axis=0), want)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax",
                                  "all", "any", "count_nonzero", "cumsum", "cumprod"])
def test_reductions_are_zero_d_arrays(device, name):
    a = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    ca = ck.asarray(a, device=device)
    got = getattr(ck, name)(ca)
    want = getattr(np, name)(a)
    assert isinstance(got, ck.ndarray)
    assert_same(got, np.asarray(want))
    if np.ndim(want) == 0:
        assert got.shape == () and got.item() == pytest.approx(np.asarray(want).item())


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax",
                                  "all", "any", "count_nonzero"])
@pytest.mark.parametrize("shape,axis", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((2, 0, 2), (0, 2))],
                         ids=repr)
def test_empty_reductions(device, name, shape, axis):
    a = np.zeros(shape)
    got, want = call_both(name, a, ck.asarray(a, device=device), {"axis": axis}, False)
    if got is not None:
        assert_same(got, np.asarray(want))


def test_nan_handling(device):
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0], [np.nan, -np.inf, np.inf]])
    ca = ck.asarray(a, device=device)
    for name in ("min", "max", "argmin", "argmax", "sum", "mean", "all", "any", "count_nonzero"):
        for axis in (None, 0, 1):
            with np.errstate(all="ignore"):
                want = getattr(np, name)(a, axis=axis)
            assert_same(getattr(ck, name)(ca, axis=axis), np.asarray(want))
    # argmax of several equal maxima is the first
    b = np.array([1, 5, 5, 0, 5])
    assert_same(ck.argmax(ck.asarray(b, device=device)), np.asarray(np.argmax(b)))
    assert_same(ck.argmin(ck.asarray(-b, device=device)), np.asarray(np.argmin(-b)))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_reductions(device, dtype):
    a = (np.arange(12).reshape(3, 4) + 1j * np.arange(12)[::-1].reshape(3, 4)).astype(dtype)
    ca = ck.asarray(a, device=device)
    for name in ("sum", "prod", "mean", "var", "std", "cumsum", "any", "all"):
        for axis in (None, 0, 1):
            want = getattr(np, name)(a, axis=axis)
            got = getattr(ck, name)(ca, axis=axis)
            assert_same(got, want, **reduction_tolerance(name, want, a))
    # lexicographic order for min / max / argmax
    b = np.array([1 + 5j, 2 - 1j, 2 + 0j, -3 + 9j], dtype=dtype)
    for name in ("min", "max", "argmin", "argmax"):
        assert_same(getattr(ck, name)(ck.asarray(b, device=device)), np.asarray(getattr(np, name)(b)))


def test_var_std_ddof_and_correction(device):
    a = np.arange(20.0).reshape(4, 5) ** 1.5
    ca = ck.asarray(a, device=device)
    for name in ("var", "std"):
        for ddof in (0, 1, 2.5, 4, 5, 7):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want_d = getattr(np, name)(a, axis=0, ddof=ddof)
                want_c = getattr(np, name)(a, axis=0, correction=ddof)
            assert_same(getattr(ck, name)(ca, axis=0, ddof=ddof), want_d)
            assert_same(getattr(ck, name)(ca, axis=0, correction=ddof), want_c)
            assert_same(getattr(ca, name)(axis=0, ddof=ddof), want_d)
        with pytest.raises(ValueError):
            getattr(np, name)(a, ddof=1, correction=1)
        with pytest.raises(ValueError):
            getattr(ck, name)(ca, ddof=1, correction=1)


def test_out_argument(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    ca = ck.asarray(a, device=device)
    out = ck.empty((2, 4), device=device)
    r = ck.sum(ca, axis=1, out=out)
    assert r is out
    assert_same(out, a.sum(axis=1))
    r = ca.max(axis=1, out=out)
    assert r is out
    assert_same(out, a.max(axis=1))
    iout = ck.empty((3, 4), dtype="int64", device=device)
    r = ck.argmax(ca, axis=0, out=iout)
    assert r is iout
    assert_same(iout, a.argmax(axis=0))
    cout = ck.empty((2, 3, 4), device=device)
    assert ck.cumsum(ca, axis=2, out=cout) is cout
    assert_same(cout, np.cumsum(a, axis=2))
    with pytest.raises(ValueError):
        ck.sum(ca, axis=1, out=ck.empty((3, 4), device=device))
    with pytest.raises(TypeError):
        ck.sum(ca, out=np.empty(()))


def test_axis_errors(device):
    ca = ck.zeros((2, 3), device=device)
    for name in ("sum", "prod", "mean", "var", "std", "min", "max", "all", "any", "count_nonzero"):
        f = getattr(ck, name)
        for bad in (2, -3, (0, 2), (5,)):
            with pytest.raises(ck.AxisError):
                f(ca, axis=bad)
        with pytest.raises(ValueError):
            f(ca, axis=(0, 0))
        with pytest.raises(TypeError):
            f(ca, axis=1.0)
    for name in ("argmin", "argmax", "cumsum", "cumprod"):
        with pytest.raises(ck.AxisError):
            getattr(ck, name)(ca, axis=2)
        with pytest.raises(ck.AxisError):
            getattr(ck, name)(ca, axis=-3)
    with pytest.raises(TypeError):
        ck.argmax(ca, axis=(0, 1))
    # the AxisError is both a ValueError and an IndexError
    with pytest.raises(ValueError):
        ck.sum(ca, axis=3)
    with pytest.raises(IndexError):
        ck.sum(ca, axis=3)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_zero_d_axis_rules(device, name):
    """A 0-d array takes axis 0 / -1 (an int, not a tuple) in most
    reductions, as NumPy; mean/var/std refuse it; scans give 1-d."""
    a = np.asarray(2.5)
    ca = ck.asarray(a, device=device)
    for kw in ({}, {"axis": 0}, {"axis": -1}, {"axis": ()}, {"axis": (0,)}, {"axis": 1}, {"axis": None}):
        got, want = call_both(name, a, ca, kw, False)
        if got is not None:
            assert_same(got, np.asarray(want))


def test_initial_and_where(device):
    # compositions in python/cudakit/_numpy_extra.py (tests/test_numpy_extra.py has the rest)
    ca = ck.ones(3, device=device)
    assert_same(ck.sum(ca, initial=5), np.sum(np.ones(3), initial=5))
    w = [True, False, True]
    assert_same(ck.max(ca * ck.arange(3, device=device), where=ck.asarray(w, device=device), initial=-1),
                np.max(np.arange(3.0), where=w, initial=-1))


def test_reduce_lists_and_numpy_inputs(device):
    assert_same(ck.sum([[1, 2], [3, 4]], axis=0), np.sum([[1, 2], [3, 4]], axis=0))
    assert_same(ck.mean(np.arange(5, dtype=np.float32)), np.asarray(np.mean(np.arange(5, dtype=np.float32))))
    assert_same(ck.max(3.5), np.asarray(3.5))
    assert_same(ck.any([0, 0, 1]), np.asarray(True))


# --------------------------------------------------------------- accuracy

@pytest.mark.parametrize("layout", ["contiguous", "strided", "2d-axis0", "2d-axis1"])
def test_float32_sum_accuracy(device, layout):
    """10^6 float32 values summed about as accurately as NumPy's pairwise sum:
    a naive running float32 sum of 0.1 drifts by about 1%."""
    n = 1_000_000
    rng = np.random.default_rng(1234)
    base = np.full(n * 2, 0.1, dtype=np.float32) + rng.random(n * 2).astype(np.float32) * np.float32(1e-3)
    if layout == "contiguous":
        a = base[:n]
        ca = ck.asarray(a, device=device)
        got, want = ck.sum(ca), np.sum(a)
    elif layout == "strided":
        a = base[::2]
        ca = ck.asarray(base, device=device)[::2]
        got, want = ck.sum(ca), np.sum(a)
    elif layout == "2d-axis0":
        a = base[:n].reshape(1000, 1000)
        ca = ck.asarray(a, device=device)
        got, want = ck.sum(ca, axis=0), np.sum(a, axis=0)
    else:
        a = base[:n].reshape(1000, 1000)
        ca = ck.asarray(a, device=device)
        got, want = ck.sum(ca, axis=1), np.sum(a, axis=1)
    exact = np.sum(a.astype(np.float64), axis=None if np.ndim(want) == 0 else (0 if layout == "2d-axis0" else 1))
    g = ck.asnumpy(got)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=2e-6)
    np.testing.assert_allclose(g, exact, rtol=2e-6)


def test_float32_mean_var_accuracy(device):
    rng = np.random.default_rng(7)
    a = (rng.random(1_000_000) + 1000).astype(np.float32)
    ca = ck.asarray(a, device=device)
    np.testing.assert_allclose(ck.asnumpy(ck.mean(ca)), np.mean(a.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(ck.asnumpy(ck.var(ca)), np.var(a.astype(np.float64)), rtol=1e-3)
    assert ck.mean(ca).dtype == np.float32


def test_float16_sum_accumulates_wider(device):
    a = np.full(5000, 0.1, dtype=np.float16)
    got = ck.sum(ck.asarray(a, device=device))
    want = np.sum(a)
    assert got.dtype == np.float16
    np.testing.assert_allclose(ck.asnumpy(got).astype(np.float64), want.astype(np.float64), rtol=2e-3)


def test_large_integer_reductions_exact(device):
    a = np.arange(3_000_000, dtype=np.int64) * 7919 - 10**9
    ca = ck.asarray(a, device=device)
    assert_same(ck.sum(ca), np.asarray(a.sum()))
    assert_same(ck.max(ca[::3]), np.asarray(a[::3].max()))
    assert_same(ck.argmin(ca[::-1]), np.asarray(a[::-1].argmin()))
    assert_same(ck.count_nonzero(ca % 3), np.asarray(np.count_nonzero(a % 3)))
    assert_same(ck.cumsum(ca[:100000])[-5:], np.cumsum(a[:100000])[-5:])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float64", "float32"])
def test_cumsum_long_rows(device, dtype):
    """Rows of 2**16 elements or more take the GPU's single-pass scan
    (tiles of 4096 with decoupled look-back)."""
    rng = np.random.default_rng(4)
    for shape, axis in (((300_001,), 0), ((3, 70_000), 1), ((70_000, 2), 0)):
        x = rng.integers(0, 4, shape).astype(dtype)
        if dtype.startswith("float"):
            x = x * 0.5   # halves: the sums are exact in any order
        a = ck.asarray(x, device=device)
        want = np.cumsum(x, axis=axis)
        assert_same(ck.cumsum(a, axis=axis), want)
    p = np.ones(100_000, dtype="float64")
    p[::1000] = 2.0
    p[500::1000] = 0.5
    assert_same(ck.cumprod(ck.asarray(p, device=device)), np.cumprod(p))


# ------------------------------------------- reductions that upcast (issue 13)

# Sums and products run in NumPy's loop dtype (int64 for int8, float32 for
# a float16 mean, or the dtype= asked for); the input is converted as it is
# read, never copied, on either device.
NARROW_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "float32"]
UPCAST_TARGETS = [None, None, "int64", "uint64", "float64", "float32", "float16", "int32", "int8", "bool", "complex128"]
UPCAST_NAMES = ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod"]


def upcast_values(name, dtype, target, n):
    inexact = np.dtype(dtype).kind == "f" or (target is not None and np.dtype(target).kind in "fc")
    if name in ("prod", "cumprod") and inexact and n > 64:
        # long products cross the float range in some orders and not in others
        # (a GPU's scan multiplies segments: inf there, then 0 * inf); +-1 keeps
        # every order exact
        kind = np.dtype(dtype).kind
        return st.sampled_from({"i": [1, -1], "u": [1], "b": [True]}.get(kind, [1.0, -1.0]))
    if np.dtype(dtype).kind in "iu" and (target in ("float16", "float32") or name in ("mean", "var", "std")):
        return elements(np.dtype(dtype), -100, 100)   # inexact sums of small values: order barely matters
    if np.dtype(dtype).kind == "f" and target is not None and np.dtype(target).kind in "iub":
        return elements(np.dtype(dtype), -10, 10).map(lambda v: np.round(v))   # casts to integers exactly
    return values(name, dtype)


@st.composite
def layout_of_shape(draw, shape, dtype, elems, device):
    """view_of_shape's views (strided, negative steps, permuted axes), or a
    broadcast one: dims of length 1 in a view, broadcast (stride 0)."""
    if not shape or draw(st.booleans()):
        return draw(view_of_shape(shape, dtype, elems, device))
    small = tuple(1 if draw(st.booleans()) else n for n in shape)
    a, ca = draw(view_of_shape(small, dtype, elems, device))
    return np.broadcast_to(a, shape), ck.broadcast_to(ca, shape)


@pytest.mark.parametrize("name", UPCAST_NAMES)
@hsettings(100)
@given(data=st.data())
def test_upcast_reductions(device, name, data):
    """Every narrow input, with and without dtype=, in every layout and
    along any axes: NumPy's values, dtype and shape."""
    dtype = data.draw(st.sampled_from(NARROW_DTYPES), label="dtype")
    target = data.draw(st.sampled_from(UPCAST_TARGETS), label="target")
    if name in ("mean", "var", "std") and target is not None:
        target = data.draw(st.sampled_from(["float64", "float32"]), label="float target")
    # long runs too: the CPU converts blocks of 4 KB at a time
    shape = data.draw(st.one_of(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6),
                                st.tuples(st.integers(1, 3), st.integers(500, 3000)),
                                st.tuples(st.integers(500, 3000))), label="shape")
    a, ca = data.draw(layout_of_shape(shape, dtype, upcast_values(name, dtype, target, int(np.prod(shape))), device), label="array")
    kw = {} if target is None else {"dtype": target}
    choices = [None] + list(range(-a.ndim, a.ndim))
    if name not in SINGLE_AXIS:
        choices.append(tuple(sorted(data.draw(st.sets(st.integers(0, a.ndim - 1), max_size=a.ndim)))))
    axis = data.draw(st.sampled_from(choices), label="axis")
    if axis is not None:
        kw["axis"] = axis
    method = data.draw(st.booleans(), label="method")
    got, want = call_both(name, a, ca, kw, method)
    if got is None:
        return
    assert got.device == ck.Device(device)
    want = np.asarray(want)
    tol = reduction_tolerance(name, want, a)
    if name == "cumsum" and want.dtype == np.float16 and device != "cpu" and a.size:
        # the GPU's scan adds float16 in float32, NumPy rounds every partial
        # sum to float16: on a constant run those roundings all lean one way
        # (n * eps / 2 * sum|a| at worst, not a random walk's sqrt(n)), and
        # NumPy's sum reaches float16's inf at another index; compare the
        # part both keep finite
        g = ck.asnumpy(got)
        assert g.dtype == want.dtype and g.shape == want.shape
        fin = np.isfinite(g) & np.isfinite(want)
        worst = a.size * float(np.finfo(np.float16).eps) * float(np.sum(np.abs(a.astype(np.float64))))
        np.testing.assert_allclose(g[fin].astype(np.float64), want[fin].astype(np.float64), rtol=tol["rtol"],
                                   atol=max(tol["atol"], worst))
        return
    if name in ("sum", "mean") and want.dtype == np.float16 and a.size:
        # NumPy adds float16 in float16, in order along a strided axis, so
        # its error grows with the partial sums (710 threes: 2156, not
        # 2130); cudakit accumulates in float32.  Either NumPy's value or
        # the float64 sum rounded to float16 is right.
        exact = np.asarray(getattr(np, name)(a.astype(np.float64), **{k: v for k, v in kw.items() if k != "dtype"}))
        try:
            with np.errstate(all="ignore"):
                assert_same(got, want, **tol)
        except AssertionError:
            with np.errstate(all="ignore"):
                assert_same(got, exact.astype(np.float16), **tol)
        return
    with np.errstate(all="ignore"):   # products may overflow to inf in both
        assert_same(got, want, **tol)


def _peak_during(device, fn):
    """fn's result (on the host) and the most bytes the device's allocator
    held while it ran beyond what it held before (tracemalloc cannot see
    them)."""
    ck.cuda.reset_peak_memory_stats(device)
    before = ck.cuda.memory_stats(device)["allocated_bytes"]
    r = ck.asnumpy(fn())
    return r, ck.cuda.memory_stats(device)["peak_allocated_bytes"] - before


# What a reduction to a few values may allocate: its result, and on the GPU
# the per-block partials of a split reduction (a few thousand words).
def _small_limit(device):
    return 4096 if device == "cpu" else 64 * 1024


@pytest.mark.parametrize("dtype,name,kw,want", [
    ("int8", "sum", {}, 2**27), ("bool", "sum", {}, 2**27), ("uint16", "sum", {}, 2**27), ("int8", "prod", {}, 1),
    ("int8", "sum", {"dtype": "float64"}, 2.0**27), ("int8", "mean", {}, 1.0),
    ("float16", "sum", {"dtype": "float32"}, 2.0**27), ("float16", "mean", {}, 1.0)], ids=repr)
def test_upcast_of_a_broadcast_allocates_nothing(device, dtype, name, kw, want):
    """broadcast_to(ones(1, int8), (2**27,)).sum() made an int64 copy of
    the input (1 GiB); now only the result is allocated."""
    b = ck.broadcast_to(ck.ones(1, dtype=dtype, device=device), (2**27,))
    r, peak = _peak_during(device, lambda: getattr(b, name)(**kw))
    assert r.dtype == getattr(np.ones(1, dtype), name)(**kw).dtype
    assert r.item() == want
    assert peak <= _small_limit(device)


def test_upcast_of_2_to_the_36_elements(device):
    """(2**36,) int8 elements of a broadcast: NumPy needs nothing extra and
    neither does cudakit (it raised MemoryError).  A broadcast dim of an
    exact kind folds at once, wrapping as the element-wise folds would."""
    n = 2**36
    r, peak = _peak_during(device, lambda: ck.broadcast_to(ck.ones(1, dtype=ck.int8, device=device), (n,)).sum())
    assert r.dtype == np.int64 and r.item() == n
    assert peak <= _small_limit(device)
    three = ck.full(1, 3, dtype=ck.int8, device=device)
    assert_same(ck.broadcast_to(three, (n,)).prod(), np.array(pow(3, n, 2**64), dtype=np.uint64).view(np.int64))
    assert_same(ck.broadcast_to(three.astype(ck.uint32), (n,)).sum(), np.uint64(3 * n))
    assert_same(ck.broadcast_to(ck.ones(1, dtype=ck.bool_, device=device), (n,)).sum(), np.int64(n))
    assert_same(ck.count_nonzero(ck.broadcast_to(three, (n,))), np.int64(n))
    two_d = ck.broadcast_to(ck.full((1, 1), -2, dtype=ck.int16, device=device), (2**18, 2**18))
    assert_same(two_d.sum(axis=0)[:5], np.full(5, -2 * 2**18, dtype=np.int64))
    assert_same(two_d.sum(axis=1)[-3:], np.full(3, -2 * 2**18, dtype=np.int64))


def test_cumsum_allocates_only_its_result(device):
    """A scan that upcasts converts as it reads: its result is all it
    allocates (an int32 input and an int64 output, not an int64 copy too)."""
    n = 1 << 20
    x = np.arange(n, dtype=np.int32) % 1000 - 500
    a = ck.asarray(x, device=device)
    slack = 4096 if device == "cpu" else 256 * 1024   # the GPU's look-back descriptors
    for kw, want in (({}, np.cumsum(x)), ({"dtype": "float64"}, np.cumsum(x, dtype="float64"))):
        r, peak = _peak_during(device, lambda: ck.cumsum(a, **kw))
        assert_same(r, want)
        assert peak <= n * 8 + slack, (kw, peak)
    b = ck.broadcast_to(a[:8].reshape(1, 8), (4, 8))
    r, peak = _peak_during(device, lambda: ck.cumsum(b, axis=0))
    assert_same(r, np.cumsum(np.broadcast_to(x[:8], (4, 8)), axis=0))
    assert peak <= _small_limit(device)
    r, peak = _peak_during(device, lambda: ck.sum(a.reshape(-1, 8)[::-2, ::3], axis=0))
    assert_same(r, x.reshape(-1, 8)[::-2, ::3].sum(axis=0))
    assert peak <= _small_limit(device)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "2d-axis0", "2d-axis1", "broadcast"])
def test_float16_upcast_sums_match_numpy(device, layout):
    """float16 summed into float32 (mean's default, dtype=float32) or
    float64: the input converts as it is read; the values are NumPy's to
    float32's tolerance, and as close to the exact sum as NumPy's."""
    rng = np.random.default_rng(16)
    base = (rng.random(2_000_000) * 0.2 + 0.1).astype(np.float16)
    ca_base = ck.asarray(base, device=device)
    pick = {"contiguous": lambda x: x[:1_000_000], "strided": lambda x: x[::2], "reversed": lambda x: x[::-2],
            "2d-axis0": lambda x: x[:1_000_000].reshape(1000, 1000), "2d-axis1": lambda x: x[:1_000_000].reshape(1000, 1000),
            "broadcast": lambda x: x[:1000].reshape(1, 1000)}
    a, ca = pick[layout](base), pick[layout](ca_base)
    if layout == "broadcast":
        a, ca = np.broadcast_to(a, (1000, 1000)), ck.broadcast_to(ca, (1000, 1000))
    axis = {"2d-axis0": 0, "2d-axis1": 1}.get(layout, None)
    exact = np.sum(a.astype(np.float64), axis=axis)
    count = a.size if axis is None else a.shape[axis]
    for name, kw in (("sum", {"dtype": "float32"}), ("sum", {"dtype": "float64"}), ("mean", {}),
                     ("mean", {"dtype": "float32"})):
        want = getattr(np, name)(a, axis=axis, **kw)
        got = getattr(ck, name)(ca, axis=axis, **kw)
        assert_same(got, want, rtol={np.float16: 4e-3, np.float32: 1e-5}.get(want.dtype.type, 1e-12))
        ref = exact if name == "sum" else exact / count
        err_np = np.max(np.abs(want.astype(np.float64) - ref))
        err_ck = np.max(np.abs(ck.asnumpy(got).astype(np.float64) - ref))
        assert err_ck <= max(2 * err_np, 4 * np.finfo(want.dtype).eps * np.max(np.abs(ref))), (name, kw)


@pytest.mark.parametrize("dtype,target", [("int8", None), ("bool", None), ("uint16", None), ("int8", "float64"),
                                          ("float16", "float32"), ("int32", "int8"), ("float32", "float64")])
def test_cumsum_upcast_long_rows(device, dtype, target):
    """Long contiguous rows (the GPU's single-pass scan) and the row and
    per-row paths of the CPU, reading the input in its own dtype."""
    rng = np.random.default_rng(5)
    kw = {} if target is None else {"dtype": target}
    for shape, axis in (((300_001,), 0), ((3, 70_000), 1), ((70_000, 2), 0), ((40, 33), 1), ((1000, 9), 0)):
        x = rng.integers(0, 4, shape).astype(dtype)
        if dtype.startswith("float"):
            x = x * np.asarray(0.5, dtype)   # halves: the sums are exact in any order
        a = ck.asarray(x, device=device)
        assert_same(ck.cumsum(a, axis=axis, **kw), np.cumsum(x, axis=axis, **kw))
        assert_same(ck.cumsum(a[::-1], axis=axis, **kw), np.cumsum(x[::-1], axis=axis, **kw))
    p = np.ones(100_000, dtype=dtype)
    assert_same(ck.cumprod(ck.asarray(p, device=device), **kw), np.cumprod(p, **kw))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16"])
def test_small_int_sums_of_long_rows(device, dtype):
    """Sums of 8- and 16-bit integers into an integer over long contiguous
    rows (the GPU's vector loads add a 16-byte vector in int, then once
    into the accumulator): full-range values, 16-byte aligned and not,
    into int64, a narrower dtype that wraps, and unsigned."""
    rng = np.random.default_rng(13)
    info = np.iinfo(dtype) if dtype != "bool" else None
    n = 1_000_037
    x = (rng.integers(0, 2, n) if info is None else rng.integers(info.min, info.max, n, endpoint=True)).astype(dtype)
    a = ck.asarray(x, device=device)
    for kw in ({}, {"dtype": "int8"}, {"dtype": "uint16"}, {"dtype": "int32"}, {"dtype": "uint64"}):
        for lo in (0, 1, 16, 33):
            assert_same(ck.sum(a[lo:], **kw), np.sum(x[lo:], **kw))
        rows = x[: 7 * 140_000].reshape(7, 140_000)
        assert_same(ck.sum(a[: 7 * 140_000].reshape(7, 140_000), axis=1, **kw), np.sum(rows, axis=1, **kw))
        assert_same(ck.sum(a[3 : 3 + 7 * 140_000].reshape(7, 140_000), axis=1, **kw),
                    np.sum(x[3 : 3 + 7 * 140_000].reshape(7, 140_000), axis=1, **kw))


def test_scan_out_of_another_dtype(device):
    """out= of a wider dtype than the input, in place, and outs that
    overlap the input (the input is read as it was, as NumPy does)."""
    x = np.arange(1, 13, dtype=np.int16).reshape(3, 4)
    a = ck.asarray(x, device=device)
    out = ck.empty((3, 4), dtype="int64", device=device)
    assert ck.cumsum(a, axis=1, out=out) is out
    assert_same(out, np.cumsum(x, axis=1))
    fout = ck.empty((3, 4), dtype="float32", device=device)
    assert ck.cumprod(a, axis=0, out=fout) is fout
    assert_same(fout, np.cumprod(x, axis=0).astype(np.float32))
    b = ck.asarray(x.copy(), device=device)
    assert ck.cumsum(b, axis=0, out=b) is b
    assert_same(b, np.cumsum(x, axis=0).astype(np.int16))
    # an int32 view of the int64 output's own memory: read before written
    c = ck.arange(1, 9, dtype=ck.int64, device=device)
    cn = np.arange(1, 9, dtype=np.int64)
    assert ck.cumsum(c.view(ck.int32)[:8], out=c) is c
    np.cumsum(cn.view(np.int32)[:8], out=cn)
    assert_same(c, cn)
    ck.cumsum(c[::-1], out=c)
    assert_same(c, np.cumsum(cn[::-1]))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16", "bool"])
def test_argmin_argmax_across_blocks(device, dtype):
    """The CPU finds each block's extreme, then the first place of the best:
    the best in several blocks (the first kept), at a block's end, a NaN
    (the first wins) after the best or before it, infinities (no NaN)."""
    rng = np.random.default_rng(31)
    n = 50_000
    for case in range(6):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        if dtype != "bool":
            hi, lo = np.array(120, dtype=dtype), np.array(-120 if x.dtype.kind != "u" else 0, dtype=dtype)
            for at in ((2047, 9000, 40_000), (4096,), (n - 1,), (0, 2048))[case % 4]:
                x[at], x[n - 1 - at] = hi, lo
        if x.dtype.kind == "f":
            if case == 4:
                x[[30_000, 30_005]] = np.nan
            if case == 5:
                x[[10, 20_000]] = [np.inf, -np.inf]
        a = ck.asarray(x, device=device)
        for name in ("argmax", "argmin", "max", "min"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                assert_same(getattr(ck, name)(a), getattr(np, name)(x))
        for lo_ in (1, 3):
            assert_same(ck.argmax(a[lo_:]), np.argmax(x[lo_:]))


# ------------------------------------ argmin / argmax at the CPU's seams
#
# The CPU folds a run a block at a time (16 KiB of values, lanes of 128
# bytes, src/backend/cpu/cpu_reduce.c), rescans only the best block, and
# splits runs of 2**17 values or more into leaves of 2**15 (or more) that
# run on all cores and merge keeping the lowest index.  The positions of the
# best values are drawn among those seams, with ties across them, NaN,
# infinities and signed zeros.

ARG_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
LEAF = 2**15


def _arg_sizes(dt):
    blk, lanes = 16384 // dt.itemsize, 128 // dt.itemsize
    return [1, 2, lanes - 1, lanes, 2 * lanes + 1, blk - 1, blk, blk + 1, 3 * blk + 7, LEAF + 1,
            2**17 - 1, 2**17, 2**17 + 5, 3 * LEAF + 1]


def _seams(dt, n):
    blk = 16384 // dt.itemsize
    at = {0, n - 1}
    for step in (blk, LEAF):
        for k in range(1, 6):
            at.update((k * step - 1, k * step, k * step + 1))
    return sorted(i for i in at if 0 <= i < n)


def _extremes(dt):
    if dt.kind == "b":
        return [True, False]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return [info.max, info.min, info.max - 1, info.min + 1]
    big = np.finfo(dt).max
    if dt.kind == "c":
        return [complex(big, 0), complex(-big, 0), complex(3, -1), complex(3, 1), complex(-3, 1)]
    return [big, -big, np.inf, -np.inf, 0.0, -0.0]


@hsettings(80)
@given(data=st.data())
def test_argmin_argmax_seams(device, data):
    dt = np.dtype(data.draw(st.sampled_from(ARG_DTYPES)))
    n = data.draw(st.sampled_from(_arg_sizes(dt)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    fill = data.draw(st.sampled_from(["few", "equal", "zeros"]))
    if fill == "few":   # a few distinct values: ties everywhere
        x = rng.integers(0 if dt.kind in "bu" else -2, 3, n).astype(dt)
        if dt.kind == "c":
            x = x + 1j * rng.integers(-1, 2, n).astype(dt)
    elif fill == "equal":
        x = np.full(n, rng.integers(0, 2), dtype=dt)
    else:   # zeros of both signs, equal to argmin/argmax
        x = np.where(rng.integers(0, 2, n) == 1, -0.0, 0.0).astype(dt) if dt.kind in "fc" else np.zeros(n, dt)
    seams = _seams(dt, n)
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.sampled_from(seams)) if data.draw(st.booleans()) else data.draw(st.integers(0, n - 1))
        x[i] = data.draw(st.sampled_from(_extremes(dt)))
    if dt.kind in "fc" and data.draw(st.booleans()):
        for _ in range(data.draw(st.integers(1, 3))):
            i = data.draw(st.sampled_from(seams))
            x[i] = complex(1, np.nan) if dt.kind == "c" and data.draw(st.booleans()) else np.nan
    a = ck.asarray(x, device=device)
    for name in ("argmax", "argmin"):
        assert_same(getattr(ck, name)(a), np.asarray(getattr(np, name)(x)))
        # views: reversed and every other value
        assert_same(getattr(ck, name)(a[::-1]), np.asarray(getattr(np, name)(x[::-1])))
        if n > 1:
            assert_same(getattr(ck, name)(a[1::2]), np.asarray(getattr(np, name)(x[1::2])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("max", "min"):
            assert_same(getattr(ck, name)(a), getattr(np, name)(x))


@hsettings(60)
@given(data=st.data())
def test_argmin_argmax_axis_views(device, data):
    dt = np.dtype(data.draw(st.sampled_from(ARG_DTYPES)))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40))
    elems = (st.sampled_from([v for v in _extremes(dt)] + ([np.nan] if dt.kind in "fc" else []))
             if data.draw(st.booleans()) else elements(dt, -3, 3) if dt.kind in "iuf" else None)
    if dt.kind == "c" and elems is None:
        elems = st.builds(complex, st.integers(-2, 2), st.integers(-2, 2))
    a, ca = data.draw(view_of_shape(shape, dt, elems=elems, device=device))
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    keepdims = data.draw(st.booleans())
    for name in ("argmax", "argmin"):
        assert_same(getattr(ck, name)(ca, axis=axis, keepdims=keepdims),
                    np.asarray(getattr(np, name)(a, axis=axis, keepdims=keepdims)))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmin_argmax_empty_raise(device, name):
    for shape, axis in (((0,), None), ((3, 0), 1), ((0, 4), 0), ((0, 4), None)):
        with pytest.raises(ValueError):
            getattr(ck, name)(ck.zeros(shape, device=device), axis=axis)
    # an empty kept axis is fine: an empty result
    assert_same(getattr(ck, name)(ck.zeros((0, 4), device=device), axis=1), np.zeros(0, dtype=np.int64))
