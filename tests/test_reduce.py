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
from conftest import assert_same
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


def tolerance(name, want, a):
    """Sums are order dependent: bound the error by n * eps * sum(|x|)."""
    want = np.asarray(want)
    if want.dtype.kind not in "fc":
        return {}
    eps = float(np.finfo(want.dtype).eps)
    n = max(a.size, 1)
    scale = float(np.max(np.abs(a))) if a.size and np.isfinite(a).all() else 1.0
    if name in ("var", "std"):
        scale = scale * scale * 4
    rtol = {np.dtype("float16"): 4e-3, np.dtype("float32"): 1e-5, np.dtype("complex64"): 1e-5}.get(want.dtype, 1e-12)
    if name in ("prod", "cumprod"):
        rtol = max(rtol, 4 * n * eps)
        return dict(rtol=rtol, atol=rtol)
    if name == "std":
        # sqrt amplifies the error of a tiny variance
        return dict(rtol=max(rtol, 1e-6 if want.dtype.itemsize >= 8 else 1e-3), atol=(n * eps * scale) ** 0.5 * 4)
    return dict(rtol=rtol, atol=4 * n * eps * scale + (1e-300 if want.dtype.kind == "c" else 0))


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
    assert_same(got, np.asarray(want), **tolerance(name, want, a))


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
            assert_same(got, want, **tolerance(name, want, a))
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


def test_initial_and_where_not_implemented(device):
    ca = ck.ones(3, device=device)
    with pytest.raises(NotImplementedError):
        ck.sum(ca, initial=5)
    with pytest.raises(NotImplementedError):
        ck.max(ca, where=ck.asarray([True, False, True], device=device))


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
