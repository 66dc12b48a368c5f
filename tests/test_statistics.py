"""Sets, counting and statistics (cudakit/_stats.py) against NumPy."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from conftest import assert_same, reduction_tolerance

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _data(dtype, shape, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    x = rng.integers(-4, 5, n)
    if np.dtype(dtype).kind == "b":
        x = x > 0
    elif np.dtype(dtype).kind in "fc":
        x = x + rng.random(n).round(1)
    x = x.astype(dtype).reshape(shape)
    if nan and x.dtype.kind in "fc" and n:
        x[rng.random(shape) < 0.2] = np.nan
    return x


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "complex128", "bool"])
def test_unique(device, dtype):
    x = _data(dtype, (6, 9), seed=1, nan=True)
    a = ck.asarray(x, device=device)
    assert_same(ck.unique(a), np.unique(x))
    got = ck.unique(a, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(ck.unique(a, equal_nan=False), np.unique(x, equal_nan=False))
    # the array API's set functions do not compare NaNs as equal; NumPy
    # 2.3+ returns them unsorted, cudakit sorted (as np.unique does)
    v, i, inv, c = np.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    want = {"unique_all": (v, i, inv.reshape(x.shape), c), "unique_counts": (v, c),
            "unique_inverse": (v, inv.reshape(x.shape))}
    for name, w in want.items():
        g = getattr(ck, name)(a)
        assert g._fields == getattr(np, name)(x)._fields
        for gi, wi in zip(g, w):
            assert_same(gi, wi)
    assert_same(ck.unique_values(a), v)


def test_unique_empty_and_axis(device):
    assert_same(ck.unique(ck.asarray(np.zeros(0), device=device)), np.unique(np.zeros(0)))
    got = ck.unique(ck.asarray(np.zeros(0, dtype="int64"), device=device), return_counts=True, return_inverse=True)
    want = np.unique(np.zeros(0, dtype="int64"), return_counts=True, return_inverse=True)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(ck.unique(ck.asarray([[1, 2]], device=device), axis=0), np.unique([[1, 2]], axis=0))


@SETTINGS
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(["int8", "int64", "float32", "float64", "complex64"]))
def test_unique_hypothesis(device, shape, seed, dtype):
    x = _data(dtype, tuple(shape), seed, nan=True)
    a = ck.asarray(x, device=device)
    for g, w in zip(ck.unique(a, return_index=True, return_inverse=True, return_counts=True),
                    np.unique(x, return_index=True, return_inverse=True, return_counts=True)):
        assert_same(g, w)


def test_sets(device):
    x, y = _data("int64", (20,), 2), _data("int64", (3, 5), 3)
    a, b = ck.asarray(x, device=device), ck.asarray(y, device=device)
    assert_same(ck.isin(a, b), np.isin(x, y))
    assert_same(ck.isin(b, a, invert=True), np.isin(y, x, invert=True))
    assert_same(ck.isin(a, ck.asarray([], device=device)), np.isin(x, []))
    assert_same(ck.union1d(a, b), np.union1d(x, y))
    assert_same(ck.setdiff1d(a, b), np.setdiff1d(x, y))
    assert_same(ck.intersect1d(a, b), np.intersect1d(x, y))
    for g, w in zip(ck.intersect1d(a, b, return_indices=True), np.intersect1d(x, y, return_indices=True)):
        assert_same(g, w)
    xf, yf = _data("float64", (15,), 4, nan=True), _data("float64", (10,), 5, nan=True)
    af, bf = ck.asarray(xf, device=device), ck.asarray(yf, device=device)
    assert_same(ck.isin(af, bf), np.isin(xf, yf))
    assert_same(ck.intersect1d(af, bf), np.intersect1d(xf, yf))
    assert_same(ck.union1d(af, bf), np.union1d(xf, yf))
    assert_same(ck.setdiff1d(af, bf), np.setdiff1d(xf, yf))


@SETTINGS
@given(n=st.integers(0, 30), m=st.integers(0, 30), seed=st.integers(0, 2**16))
def test_sets_hypothesis(device, n, m, seed):
    x, y = _data("int16", (n,), seed), _data("int16", (m,), seed + 1)
    a, b = ck.asarray(x, device=device), ck.asarray(y, device=device)
    assert_same(ck.isin(a, b), np.isin(x, y))
    assert_same(ck.intersect1d(a, b), np.intersect1d(x, y))
    assert_same(ck.setdiff1d(a, b), np.setdiff1d(x, y))
    assert_same(ck.union1d(a, b), np.union1d(x, y))


def test_bincount_histogram_digitize(device):
    x = np.abs(_data("int64", (50,), 6))
    a = ck.asarray(x, device=device)
    assert_same(ck.bincount(a), np.bincount(x))
    assert_same(ck.bincount(a, minlength=12), np.bincount(x, minlength=12))
    w = _data("float64", (50,), 7)
    assert_same(ck.bincount(a, weights=ck.asarray(w, device=device)), np.bincount(x, weights=w), atol=1e-12)
    assert_same(ck.bincount(ck.asarray(np.zeros(0, "int64"), device=device)), np.bincount(np.zeros(0, "int64")))
    with pytest.raises(ValueError):
        ck.bincount(ck.asarray([1, -1], device=device))
    f = _data("float64", (200,), 8)
    af = ck.asarray(f, device=device)
    for bins, rng in ((10, None), (7, (-2.0, 3.0)), ([-3.0, -1.0, 0.0, 2.5, 4.0], None)):
        bb = ck.asarray(bins, device=device) if isinstance(bins, list) else bins
        got, want = ck.histogram(af, bins=bb, range=rng), np.histogram(f, bins=bins, range=rng)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
    got, want = ck.histogram(af, bins=5, density=True), np.histogram(f, bins=5, density=True)
    assert_same(got[0], want[0])
    got, want = ck.histogram(ck.asarray(x, device=device), bins=4), np.histogram(x, bins=4)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    bins = np.array([-2.0, 0.0, 1.5, 3.0])
    for right in (False, True):
        assert_same(ck.digitize(af, ck.asarray(bins, device=device), right=right), np.digitize(f, bins, right=right))
        assert_same(ck.digitize(af, ck.asarray(bins[::-1].copy(), device=device), right=right),
                    np.digitize(f, bins[::-1], right=right))
    with pytest.raises(ValueError):
        ck.digitize(af, ck.asarray([1.0, 0.0, 2.0], device=device))


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_quantiles(device, dtype):
    x = _data(dtype, (5, 8, 3), 9)
    a = ck.asarray(x, device=device)
    for axis in (None, 0, 1, -1, (0, 2)):
        assert_same(ck.median(a, axis=axis), np.median(x, axis=axis))
        assert_same(ck.quantile(a, 0.3, axis=axis), np.quantile(x, 0.3, axis=axis))
        assert_same(ck.quantile(a, [0.0, 0.25, 1.0], axis=axis, keepdims=True),
                    np.quantile(x, [0.0, 0.25, 1.0], axis=axis, keepdims=True))
        assert_same(ck.percentile(a, [10, 90], axis=axis), np.percentile(x, [10, 90], axis=axis))
    with pytest.raises(ValueError):
        ck.quantile(a, 1.5)


SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -2.5]


@SETTINGS
@given(st.lists(st.sampled_from(SPECIAL), min_size=1, max_size=9), st.sampled_from(["float16", "float32", "float64"]),
       st.booleans())
def test_median_special_values(device, values, dtype, keepdims):
    # the mean of the middle one or two sorted values, as NumPy's: an infinity
    # beside the middle stays out of it ([1, 2, inf] is 2, [inf, 1] is inf)
    x = np.array(values, dtype=dtype)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.median(x, keepdims=keepdims)
    assert_same(ck.median(ck.asarray(x, device=device), keepdims=keepdims), want)
    two = np.stack([x, x[::-1]])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.median(two, axis=1)
    assert_same(ck.median(ck.asarray(two, device=device), axis=1), want)


def test_median_known_cases(device):
    for values, want in (([1.0, 2.0, np.inf], 2.0), ([np.inf, 1.0], np.inf), ([-np.inf, np.inf], np.nan),
                         ([3, 1, 2, 4], 2.5)):
        assert_same(ck.median(ck.asarray(values, device=device)), np.float64(want))


def test_median_of_empty_is_nan_with_a_warning(device):
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        r = ck.median(ck.zeros(0, dtype=ck.float32, device=device))
    assert_same(r, np.float32(np.nan))
    with pytest.warns(RuntimeWarning):
        r = ck.median(ck.zeros((3, 0), device=device), axis=1)
    assert_same(r, np.full(3, np.nan))


def test_quantiles_nan(device):
    x = _data("float64", (6, 10), 10, nan=True)
    a = ck.asarray(x, device=device)
    assert_same(ck.median(a, axis=1), np.median(x, axis=1))
    assert_same(ck.median(a), np.median(x))


@SETTINGS
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=st.integers(0, 2**16),
       q=st.floats(0, 1), data=st.data())
def test_quantile_hypothesis(device, shape, seed, q, data):
    x = _data("float64", tuple(shape), seed)
    axis = data.draw(st.sampled_from([None] + list(range(len(shape)))))
    assert_same(ck.quantile(ck.asarray(x, device=device), q, axis=axis), np.quantile(x, q, axis=axis), atol=1e-12)


def test_average_cov_corrcoef(device):
    x = _data("float64", (4, 6), 11)
    a = ck.asarray(x, device=device)
    w = np.abs(_data("float64", (4, 6), 12)) + 0.5
    aw = ck.asarray(w, device=device)
    assert_same(ck.average(a), np.average(x))
    assert_same(ck.average(a, axis=1, weights=aw), np.average(x, axis=1, weights=w))
    w1 = w[0]
    got = ck.average(a, axis=1, weights=ck.asarray(w1, device=device), returned=True)
    want = np.average(x, axis=1, weights=w1, returned=True)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    ai = ck.asarray(x.astype("int64"), device=device)
    assert_same(ck.average(ai, axis=0), np.average(x.astype("int64"), axis=0))
    with pytest.raises(ZeroDivisionError):
        ck.average(a, weights=ck.zeros((4, 6), device=device))
    try:
        c = ck.cov(a)
    except NotImplementedError:   # no matmul on this device
        return
    assert_same(c, np.cov(x))
    assert_same(ck.cov(a, rowvar=False, bias=True), np.cov(x, rowvar=False, bias=True))
    assert_same(ck.cov(a[0], a[1]), np.cov(x[0], x[1]))
    assert_same(ck.corrcoef(a), np.corrcoef(x))
    assert_same(ck.corrcoef(a[0], a[2]), np.corrcoef(x[0], x[2]))


def test_diff_cumulative_sum(device):
    x = _data("int64", (4, 7), 13)
    a = ck.asarray(x, device=device)
    for n in (0, 1, 2):
        for axis in (0, -1):
            assert_same(ck.diff(a, n=n, axis=axis), np.diff(x, n=n, axis=axis))
    assert_same(ck.diff(a, prepend=0, append=ck.asarray(x[:, :2], device=device)),
                np.diff(x, prepend=0, append=x[:, :2]))
    b = x > 0
    assert_same(ck.diff(ck.asarray(b, device=device)), np.diff(b))
    with pytest.raises(ValueError):
        ck.diff(a, n=-1)
    assert_same(ck.cumulative_sum(a, axis=1), np.cumulative_sum(x, axis=1))
    assert_same(ck.cumulative_sum(a, axis=0, include_initial=True), np.cumulative_sum(x, axis=0, include_initial=True))
    assert_same(ck.cumulative_sum(a[0], dtype=ck.float32), np.cumulative_sum(x[0], dtype=np.float32))
    with pytest.raises(ValueError):
        ck.cumulative_sum(a)


def test_nan_functions(device):
    x = _data("float64", (5, 6), 14, nan=True)
    x[2] = np.nan
    a = ck.asarray(x, device=device)
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1):
            assert_same(ck.nansum(a, axis=axis), np.nansum(x, axis=axis))
        assert_same(ck.nanmean(a, axis=0), np.nanmean(x, axis=0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert_same(ck.nanmean(a, axis=1), np.nanmean(x, axis=1))
            assert_same(ck.nanmax(a, axis=1), np.nanmax(x, axis=1))
            assert_same(ck.nanmin(a, axis=1, keepdims=True), np.nanmin(x, axis=1, keepdims=True))
        assert_same(ck.nanmax(a), np.nanmax(x))
        assert_same(ck.nanargmax(a, axis=0), np.nanargmax(x, axis=0))
        assert_same(ck.nanargmin(a), np.nanargmin(x))
        with pytest.raises(ValueError):
            ck.nanargmax(a, axis=1)
    xi = _data("int32", (3, 4), 15)
    assert_same(ck.nansum(ck.asarray(xi, device=device), axis=1), np.nansum(xi, axis=1))
    assert_same(ck.nanmax(ck.asarray(xi, device=device)), np.nanmax(xi))


def test_comparisons(device):
    x = np.array([1.0, 1e-9, np.nan, np.inf, -np.inf, 2.0])
    y = np.array([1.0 + 1e-7, 0.0, np.nan, np.inf, np.inf, 2.1])
    a, b = ck.asarray(x, device=device), ck.asarray(y, device=device)
    assert_same(ck.isclose(a, b), np.isclose(x, y))
    assert_same(ck.isclose(a, b, equal_nan=True), np.isclose(x, y, equal_nan=True))
    assert_same(ck.isclose(a, 2), np.isclose(x, 2))
    assert_same(ck.isclose(ck.asarray([1, 2], device=device), ck.asarray([1, 3], device=device)),
                np.isclose([1, 2], [1, 3]))
    assert ck.allclose(a[:2], b[:2]) is True
    assert ck.allclose(a, b) is False
    assert ck.allclose(a, a, equal_nan=True) is True
    assert ck.array_equal(a, a) is False
    assert ck.array_equal(a, a, equal_nan=True) is True
    assert ck.array_equal(a, a[:3]) is False
    assert ck.array_equal(ck.asarray([1, 2], device=device), [1, 2]) is True


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3), seed=st.integers(0, 2**16), data=st.data())
def test_nan_reductions_hypothesis(device, shape, seed, data):
    x = _data("float32", tuple(shape), seed, nan=True)
    axis = data.draw(st.sampled_from([None] + list(range(len(shape)))))
    a = ck.asarray(x, device=device)
    want = np.nansum(x, axis=axis)   # a float sum in another order (the GPU's), cancelling near zero
    assert_same(ck.nansum(a, axis=axis), want, **reduction_tolerance("nansum", want, x))
    assert_same(ck.isclose(a, a * 1.000001), np.isclose(x, x * np.float32(1.000001)))


def test_isclose_scalar_operands(device):
    x = np.array([1.0, np.nan, 2.0 + 1e-9, np.inf])
    a = ck.asarray(x, device=device)
    for b in (2, 2.0, np.nan, np.inf):
        assert_same(ck.isclose(a, b), np.isclose(x, b))
        assert_same(ck.isclose(b, a, equal_nan=True), np.isclose(b, x, equal_nan=True))


@pytest.mark.parametrize("shape,axis", [((7, 3), 0), ((7, 3), 1), ((4, 5, 2), 1), ((4, 5, 2), -1), ((0, 3), 0),
                                        ((6,), 0)])
@pytest.mark.parametrize("dtype", ["int16", "float64"])
def test_unique_along_axis(device, shape, axis, dtype):
    x = (np.random.default_rng(5).integers(0, 2, shape) * 3 - 1).astype(dtype)
    a = ck.asarray(x, device=device)
    got = ck.unique(a, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert_same(ck.unique(a, axis=axis), np.unique(x, axis=axis))
    with pytest.raises(ck.AxisError):
        ck.unique(a, axis=len(shape))


QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest"]


@pytest.mark.parametrize("method", QUANTILE_METHODS)
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_quantile_methods(device, method, dtype):
    x = _data(dtype, (3, 11), 21)
    a = ck.asarray(x, device=device)
    qs = [0.0, 0.07, 0.25, 0.5, 0.77, 1.0]
    for axis in (None, 1):
        assert_same(ck.quantile(a, qs, axis=axis, method=method), np.quantile(x, qs, axis=axis, method=method))
        assert_same(ck.quantile(a, 0.4, axis=axis, method=method), np.quantile(x, 0.4, axis=axis, method=method))
    # a q of two dimensions shapes the result in front
    q2 = [[0.1, 0.5], [0.9, 1.0]]
    assert_same(ck.quantile(a, q2, axis=0, method=method, keepdims=True),
                np.quantile(x, q2, axis=0, method=method, keepdims=True))
    assert_same(ck.percentile(a, [[10, 50]], method=method), np.percentile(x, [[10, 50]], method=method))


def test_quantile_bad_method(device):
    with pytest.raises(ValueError, match="method"):
        ck.quantile(ck.asarray([1.0, 2.0], device=device), 0.5, method="bogus")


def test_cov_weights(device):
    x = _data("float64", (3, 7), 22)
    a = ck.asarray(x, device=device)
    f = np.array([1, 2, 0, 3, 1, 1, 2])
    w = np.abs(_data("float64", (7,), 23)) + 0.1
    fa, wa = ck.asarray(f, device=device), ck.asarray(w, device=device)
    try:
        ck.cov(a)
    except NotImplementedError:   # no matmul on this device
        return
    for kw, ckw in [({"fweights": f}, {"fweights": fa}), ({"aweights": w}, {"aweights": wa}),
                    ({"fweights": f, "aweights": w}, {"fweights": fa, "aweights": wa})]:
        for ddof in (None, 0, 2):
            assert_same(ck.cov(a, ddof=ddof, **ckw), np.cov(x, ddof=ddof, **kw))
        assert_same(ck.cov(a, bias=True, **ckw), np.cov(x, bias=True, **kw))
    with pytest.raises(ValueError, match="negative"):
        ck.cov(a, fweights=ck.asarray([1, -1, 0, 0, 0, 0, 0], device=device))
    with pytest.raises(RuntimeError, match="incompatible"):
        ck.cov(a, aweights=ck.ones(6, device=device))
    with pytest.raises(TypeError, match="integer"):
        ck.cov(a, fweights=ck.full(7, 1.5, device=device))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int16"])
def test_histogram_large_and_at_the_edges(device, dtype):
    # past the CPU's per-worker split (2 x 65536), values on the edges, NaN
    # and infinities outside every bin; counts exact, weighted sums close
    rng = np.random.default_rng(21)
    n = 200_003
    x = (rng.standard_normal(n) * 10).astype(dtype)
    if x.dtype.kind == "f":
        x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    fin = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    w = rng.random(n)
    for data, bins, rg in ((fin, 10, None), (x, 7, (-3, 5)), (x, 100, (0.1, 0.9)),
                           (x, np.array([-5.0, -1.0, 0.0, 0.0, 2.0, 30.0]), None)):
        a = ck.asarray(data, device=device)
        b = ck.asarray(bins, device=device) if isinstance(bins, np.ndarray) else bins
        got, want = ck.histogram(a, bins=b, range=rg), np.histogram(data, bins=bins, range=rg)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1], rtol=0)   # NumPy's edges, to the bit
        ww = w[:data.size]
        got = ck.histogram(a, bins=b, range=rg, weights=ck.asarray(ww, device=device))[0]
        assert_same(got, np.histogram(data, bins=bins, range=rg, weights=ww)[0], rtol=1e-12)
    for b in (3, 7, 10, 13, 100):   # every value on an edge of some bin count
        e = np.linspace(0, 1, 1001).astype(dtype if x.dtype.kind == "f" else "float64")
        assert_same(ck.histogram(ck.asarray(e, device=device), bins=b)[0], np.histogram(e, bins=b)[0])


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_bincount_large(device, dtype):
    rng = np.random.default_rng(22)
    x = rng.integers(0, 300, 200_001).astype(dtype)
    w = rng.standard_normal(x.size)
    a = ck.asarray(x, device=device)
    assert_same(ck.bincount(a), np.bincount(x))
    assert_same(ck.bincount(a, minlength=400), np.bincount(x, minlength=400))
    assert_same(ck.bincount(a, weights=ck.asarray(w, device=device)), np.bincount(x, weights=w), rtol=1e-12)
    assert_same(ck.bincount(a, weights=ck.asarray(w.astype("float32"), device=device)),
                np.bincount(x, weights=w.astype("float32")), rtol=1e-12)
    assert_same(ck.bincount(ck.asarray(np.zeros(0, "int64"), device=device), weights=ck.zeros(0, device=device),
                            minlength=3), np.bincount(np.zeros(0, "int64"), weights=np.zeros(0), minlength=3))
    with pytest.raises(TypeError):
        ck.bincount(ck.asarray([0.5, 1.0], device=device))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("layout", ["random", "nan", "few", "sorted", "reversed"])
def test_median_and_partition_long_rows(device, dtype, layout):
    # rows past the CPU's sampled-pivot threshold (2^15) and short ones;
    # duplicates, NaNs and sorted input
    rng = np.random.default_rng(23)
    for n in (70_001, 40_000, 1001, 18, 3):
        x = (rng.integers(0, 3, n) if layout == "few" else rng.standard_normal(n) * 50).astype(dtype)
        if layout == "nan" and x.dtype.kind == "f":
            x[rng.random(n) < 0.1] = np.nan
        if layout in ("sorted", "reversed"):
            x = np.sort(x)[::-1 if layout == "reversed" else 1].copy()
        a = ck.asarray(x, device=device)
        assert_same(ck.median(a), np.median(x))
        srt = np.sort(x)
        for kth in ([n // 2 - 1, n // 2, n - 1], [0, n // 3], [n // 2]):
            p = ck.asnumpy(ck.partition(a, kth))
            np.testing.assert_array_equal(p[kth], srt[kth])
            for k in kth:   # smaller ones before, larger ones after
                np.testing.assert_array_equal(np.sort(p[:k]), srt[:k])
            np.testing.assert_array_equal(np.sort(p), srt)
    x = rng.standard_normal((3, 40_000)).astype(dtype)
    for axis in (0, 1, None):
        assert_same(ck.median(ck.asarray(x, device=device), axis=axis), np.median(x, axis=axis))
