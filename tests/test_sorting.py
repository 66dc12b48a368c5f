"""sort, argsort, partition, argpartition and searchsorted against NumPy."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from conftest import assert_same

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _sample(dtype, shape, seed=0, nan=True, dup=True):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    vals = rng.integers(-5 if dup else -10**6, 6 if dup else 10**6, n)
    if np.dtype(dtype).kind == "u":
        vals = np.abs(vals)
    x = vals.astype(dtype)
    if np.dtype(dtype).kind in "fc":
        x = (vals + rng.random(n).round(1)).astype(dtype)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.integers(-2, 3, n).astype(dtype)
        if nan and n:
            x[rng.random(n) < 0.15] = np.nan
            if np.dtype(dtype).kind == "c":
                x[rng.random(n) < 0.1] += complex(0, np.nan)
                x.real[rng.random(n) < 0.1] = np.nan
            x[rng.random(n) < 0.1] = -0.0
            x[rng.random(n) < 0.05] = np.inf
            x[rng.random(n) < 0.05] = -np.inf
    return x.reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_dtypes(device, dtype):
    x = _sample(dtype, (5, 70))   # rows long enough for the radix path
    a = ck.asarray(x, device=device)
    for axis in (0, 1, -1, None):
        assert_same(ck.sort(a, axis=axis), np.sort(x, axis=axis))
        assert_same(ck.argsort(a, axis=axis, kind="stable"), np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_short_rows(device, dtype):
    x = _sample(dtype, (3, 4, 9), seed=3)
    a = ck.asarray(x, device=device)
    for axis in (0, 1, 2):
        assert_same(ck.argsort(a, axis=axis, stable=True), np.argsort(x, axis=axis, stable=True))
        assert_same(ck.sort(a, axis=axis), np.sort(x, axis=axis))


def test_descending(device):
    x = _sample("float64", (4, 60), seed=1)
    a = ck.asarray(x, device=device)
    assert_same(ck.sort(a, descending=True), np.flip(np.sort(x), axis=-1))
    # stable descending: equal keys stay in input order
    want = x.shape[1] - 1 - np.flip(np.argsort(np.flip(x, axis=-1), kind="stable", axis=-1), axis=-1)
    assert_same(ck.argsort(a, descending=True, stable=True), want)


def test_sort_edge_cases(device):
    for x in (np.zeros((0,)), np.zeros((3, 0)), np.array([5.0]), np.zeros((0, 4), dtype="int8")):
        a = ck.asarray(x, device=device)
        assert_same(ck.sort(a), np.sort(x))
        assert_same(ck.argsort(a), np.argsort(x))
    s = ck.asarray(np.float64(3.0), device=device)
    assert_same(ck.sort(s, axis=None), np.sort(np.float64(3.0), axis=None))
    with pytest.raises(ck.AxisError):
        ck.sort(s)
    with pytest.raises(ck.AxisError):
        ck.sort(ck.asarray([[1, 2]], device=device), axis=2)
    with pytest.raises(ValueError):
        ck.sort(ck.asarray([1, 2], device=device), kind="bogus")
    # strided and reversed views
    x = _sample("int32", (6, 50), seed=5)[::-2, ::3]
    a = ck.asarray(_sample("int32", (6, 50), seed=5), device=device)[::-2, ::3]
    assert_same(ck.argsort(a, axis=0, stable=True), np.argsort(x, axis=0, stable=True))


@SETTINGS
@given(dtype=st.sampled_from(DTYPES), shape=st.lists(st.integers(0, 7), min_size=1, max_size=3),
       seed=st.integers(0, 2**16), data=st.data())
def test_sort_hypothesis(device, dtype, shape, seed, data):
    x = _sample(dtype, tuple(shape), seed=seed)
    axis = data.draw(st.sampled_from(list(range(-len(shape), len(shape))) + [None]))
    a = ck.asarray(x, device=device)
    assert_same(ck.sort(a, axis=axis), np.sort(x, axis=axis))
    assert_same(ck.argsort(a, axis=axis, stable=True), np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "complex128"])
def test_partition(device, dtype):
    x = _sample(dtype, (4, 60), seed=7)
    a = ck.asarray(x, device=device)
    srt = np.sort(x, axis=-1)
    for kth in (0, 10, -1, [3, 30]):
        p = ck.asnumpy(ck.partition(a, kth))
        ks = np.atleast_1d(kth)
        np.testing.assert_array_equal(p[:, ks], srt[:, ks])
        ip = ck.asnumpy(ck.argpartition(a, kth))
        np.testing.assert_array_equal(np.take_along_axis(x, ip, -1)[:, ks], srt[:, ks])
        assert ip.dtype == np.int64
    assert_same(ck.sort(ck.partition(a, 2, axis=0), axis=0), np.sort(x, axis=0))
    with pytest.raises(ValueError):
        ck.partition(a, 60)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float64", "float16", "complex64"])
def test_searchsorted(device, dtype):
    base = np.sort(_sample(dtype, (40,), seed=11))
    v = _sample(dtype, (3, 7), seed=12)
    a, av = ck.asarray(base, device=device), ck.asarray(v, device=device)
    got = ck.searchsorted(a, av)
    assert_same(got, np.searchsorted(base, v))
    assert_same(ck.searchsorted(a, av, side="right"), np.searchsorted(base, v, side="right"))
    unsorted = _sample(dtype, (40,), seed=13)
    sorter = np.argsort(unsorted, kind="stable")
    assert_same(ck.searchsorted(ck.asarray(unsorted, device=device), av,
                                sorter=ck.asarray(sorter, device=device)),
                np.searchsorted(unsorted, v, sorter=sorter))


def test_searchsorted_errors_and_scalars(device):
    a = ck.asarray([1.0, 2.0, 3.0], device=device)
    r = ck.searchsorted(a, 2.5)
    assert_same(r, np.searchsorted([1.0, 2.0, 3.0], 2.5))
    assert_same(ck.searchsorted(a, [0, 5], side="right"), np.searchsorted([1.0, 2.0, 3.0], [0, 5], side="right"))
    assert_same(ck.searchsorted(ck.asarray([], device=device), [1.0]), np.searchsorted([], [1.0]))
    with pytest.raises(ValueError):
        ck.searchsorted(a, 1.0, side="middle")
    with pytest.raises(ValueError):
        ck.searchsorted(ck.asarray([[1, 2]], device=device), 1)
    with pytest.raises(ValueError):
        ck.searchsorted(a, 1.0, sorter=ck.asarray([0, 1], device=device))


@SETTINGS
@given(n=st.integers(0, 60), m=st.integers(0, 10), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(["int8", "int64", "float32", "float64"]), side=st.sampled_from(["left", "right"]))
def test_searchsorted_hypothesis(device, n, m, seed, dtype, side):
    base = np.sort(_sample(dtype, (n,), seed=seed))
    v = _sample(dtype, (m,), seed=seed + 1)
    got = ck.searchsorted(ck.asarray(base, device=device), ck.asarray(v, device=device), side=side)
    assert_same(got, np.searchsorted(base, v, side=side))


def test_sort_and_argsort_methods(device):
    a = np.array([[3, 1, 2], [9, 7, 8]], dtype=np.int32)
    ca = ck.asarray(a, device=device)
    got = ca.argsort()
    assert_same(got, a.argsort())
    assert_same(ca.argsort(axis=0), a.argsort(axis=0))
    assert ca.sort() is None
    a.sort()
    assert_same(ca, a)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(20000,), (3, 5000), (2, 4096), (300, 17)])
def test_sort_long_and_batched_rows(device, dtype, shape):
    """Rows longer than the GPU's block sort (4096) take its radix passes,
    batches of them the row passes after; shorter rows the block sort."""
    x = _sample(dtype, shape, seed=21)
    a = ck.asarray(x, device=device)
    assert_same(ck.sort(a), np.sort(x))
    assert_same(ck.argsort(a, stable=True), np.argsort(x, kind="stable"))
    want = x.shape[-1] - 1 - np.flip(np.argsort(np.flip(x, axis=-1), kind="stable", axis=-1), axis=-1)
    assert_same(ck.argsort(a, descending=True, stable=True), want)
    assert_same(ck.sort(a, descending=True), np.flip(np.sort(x), axis=-1))


def test_searchsorted_long(device):
    base = np.sort(_sample("float32", (10000,), seed=31))
    v = _sample("float32", (5000,), seed=32)
    a, av = ck.asarray(base, device=device), ck.asarray(v, device=device)
    for side in ("left", "right"):
        assert_same(ck.searchsorted(a, av, side=side), np.searchsorted(base, v, side=side))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sort_long_row_of_floats_values_only(device, dtype):
    """A long single row of floats sorted for its values only takes the
    GPU's keys-only radix sort: -0.0, +0.0, infinities and NaNs of both
    signs come out equal to NumPy's (the signs of zeros and of NaNs may
    differ there: the comparison is by value)."""
    x = _sample(dtype, (50_000,), seed=41, dup=dtype == "float16")
    x[::97] = -np.nan
    x[5::89] = 0.0
    a = ck.asarray(x, device=device)
    got = ck.asnumpy(ck.sort(a))
    want = np.sort(x)
    assert_same(got, want)
    assert np.isnan(got).sum() == np.isnan(want).sum()
    assert_same(ck.sort(a[::-3]), np.sort(x[::-3]))


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_sort_many_tiles(device, dtype):
    """Sorts of some hundreds of the GPU's 4096-key tiles, whose passes find
    their digits' offsets by looking back over the tiles before them while
    those are still running (a few tiles cover none of that)."""
    x = _sample(dtype, (3_000_017,), seed=51)
    a = ck.asarray(x, device=device)
    assert_same(ck.sort(a), np.sort(x))
    assert_same(ck.argsort(a, stable=True), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "uint16", "int32", "uint64", "bool"])
def test_sort_values_only_rows_and_columns(device, dtype):
    """Sorts for the values only (the CPU radix-sorts the elements
    themselves) and argsorts (the CPU's keyed order): long rows, columns
    (strided) and descending, against NumPy; on the CPU the bits too, NaN
    payloads and signed zeros in the stable order of NumPy's stable sort."""
    x = _sample(dtype, (300, 70), seed=61)
    if np.dtype(dtype).kind == "f":
        x[::7, ::5] = -0.0
        # quiet and signalling NaNs of both signs with payloads, as bits
        bits = {"float16": np.array([0x7E01, 0xFE02, 0x7C03], np.uint16),
                "float32": np.array([0x7FC00001, 0xFFC00002, 0x7F800003], np.uint32),
                "float64": np.array([0x7FF8000000000001, 0xFFF8000000000002, 0x7FF0000000000003], np.uint64)}[dtype]
        nans = bits.view(dtype)
        x[3::11, 2::9] = nans[np.arange(x[3::11, 2::9].size) % 3].reshape(x[3::11, 2::9].shape)
    a = ck.asarray(x, device=device)
    # rows of 70 and 300 (radix sorts) and of 20 (insertion sorts)
    for av, xv, axis in ((a, x, -1), (a, x, 0), (a[:, :20], x[:, :20], -1)):
        got = ck.asnumpy(ck.sort(av, axis=axis))
        want = np.sort(xv, axis=axis, kind="stable")
        assert_same(got, want)
        if device == "cpu":
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
        assert_same(ck.sort(av, axis=axis, descending=True), np.flip(np.sort(xv, axis=axis), axis=axis))
        assert_same(ck.argsort(av, axis=axis, stable=True), np.argsort(xv, axis=axis, kind="stable"))
    flat = ck.asnumpy(ck.sort(a.reshape(-1)))
    assert_same(flat, np.sort(x.reshape(-1), kind="stable"))


@pytest.mark.parametrize("fn", ["sort", "argsort"])
@pytest.mark.parametrize("axis", [1, -2, 100, -(2 ** 31) + 1])
def test_sort_axis_out_of_range_names_it(device, fn, axis):
    a = ck.arange(5, device=device)
    with pytest.raises(ck.AxisError, match=f"axis {axis} is out of bounds"):
        getattr(ck, fn)(a, axis=axis)
