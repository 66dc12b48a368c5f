"""Advanced indexing (integer arrays and boolean masks) and the indexing
functions (take, put, nonzero, choose, ...), compared with NumPy.

Every test runs on both devices: on `cuda` the gathers, scatters and
nonzero are the GPU kernels of src/backend/cuda/cuda_index.c."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run(device, fn):
    """fn() on the device (the device only names the case being run)."""
    return fn()


def check(device, fn, want, **kw):
    assert_same(run(device, fn), want, **kw)


def raises(device, exc, fn, match=None):
    with pytest.raises(exc, match=match):
        fn()


# ------------------------------------------------------------ getitem

A = np.arange(60).reshape(3, 4, 5)

KEYS = [
    [0, 2], [-1, 0, -3], [[0, 1], [2, 0]], np.array([2, 2, 0]), (slice(None), [1, 3]),
    (Ellipsis, [4, 0]), ([0, 2], [1, 3]), ([0, 2], slice(1, 3), [1, 3]), (0, slice(None), [0, 1]),
    (slice(None), 0, [0, 1]), ([0], None, [0]), ([0], Ellipsis, [0]), (None, [0, 1]), ([[0], [2]], [0, 1, 3]),
    (slice(None, None, -1), [3, 0], slice(1, 4, 2)), ([], ), (slice(None), []), True, False,
    ([0], True, [1]), A > 30, A[:, :, 0] > 20, (slice(None), A[0] % 2 == 0), (A[:, 0, 0] > 10, 1),
    ([True, False, True], [0, 1]), (np.int64(1), [0, 2]), np.array([1], dtype=np.uint8),
    (Ellipsis, np.array([[True, False, False, True, True]] * 4)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_getitem_advanced_keys(device, key):
    c = ck.asarray(A.copy(), device=device)
    check(device, lambda: c[key], A[key])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "float16", "float32", "complex128"])
def test_getitem_dtypes_and_ck_index_arrays(device, dtype):
    a = (np.arange(24).reshape(4, 6) % 5).astype(dtype)
    c = ck.asarray(a.copy(), device=device)
    idx = np.array([[3, 0], [-1, 1]])
    check(device, lambda: c[ck.asarray(idx, device=device)], a[idx])
    check(device, lambda: c[1:, ck.asarray(idx, device=device)], a[1:, idx])
    mask = np.arange(24).reshape(4, 6) % 3 == 0
    check(device, lambda: c[ck.asarray(mask, device=device)], a[mask])


def test_getitem_non_contiguous_and_empty(device):
    a = np.arange(48.0).reshape(6, 8)[::2, ::-3]
    c = ck.asarray(np.arange(48.0).reshape(6, 8), device=device)[::2, ::-3]
    check(device, lambda: c[[2, 0, 1], [0, 2, 1]], a[[2, 0, 1], [0, 2, 1]])
    check(device, lambda: c[a > 20], a[a > 20])
    e = np.zeros((0, 3))
    ce = ck.zeros((0, 3), device=device)
    check(device, lambda: ce[[], 1], e[[], 1])
    check(device, lambda: ce[ce > 0], e[e > 0])
    check(device, lambda: ce[:, [2, 0]], e[:, [2, 0]])


def test_getitem_errors(device):
    c = ck.zeros((3, 4), device=device)
    raises(device, IndexError, lambda: c[[5]], "index 5 is out of bounds for axis 0 with size 3")
    raises(device, IndexError, lambda: c[[-4]], "index -4 is out of bounds for axis 0 with size 3")
    raises(device, IndexError, lambda: c[:, [0, 4]], "index 4 is out of bounds for axis 1 with size 4")
    raises(device, IndexError, lambda: c[[2**62]], "out of bounds")
    raises(device, IndexError, lambda: c[np.array([True, False, True, True])],
           "boolean index did not match indexed array along axis 0; size of axis is 3 but size of "
           "corresponding boolean axis is 4")
    raises(device, IndexError, lambda: c[:, np.ones(3, bool)], "along axis 1")
    raises(device, IndexError, lambda: c[[0, 1], [0, 1, 2]], "shape mismatch")
    raises(device, IndexError, lambda: c[np.ones((3, 4, 1), bool)], "too many indices")
    raises(device, IndexError, lambda: c[[0.5]])
    raises(device, IndexError, lambda: c[ck.asarray([1.0], device=device)])
    raises(device, IndexError, lambda: c[5, [0]])
    # out of range in an empty selection is still out of range, as in NumPy
    raises(device, IndexError, lambda: ck.zeros((3, 0), device=device)[[5]], "index 5")


# ------------------------------------------------------------ setitem

@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_setitem_advanced_keys(device, key):
    a = A.copy()
    c = ck.asarray(a.copy(), device=device)
    vals = -np.arange(a[key].size).reshape(a[key].shape)

    def do():
        c[key] = ck.asarray(vals, device=device)
        return c
    a[key] = vals
    check(device, do, a)


def test_setitem_broadcast_cast_and_repeats(device):
    a = np.zeros((4, 5), np.float32)
    c = ck.asarray(a.copy(), device=device)

    def do():
        c[[0, 2]] = ck.asarray([1, 2, 3, 4, 5], device=device)   # broadcast, int64 -> float32
        c[:, [1, 1, 1]] = [7, 8, 9]                               # repeats: the last wins
        c[c > 8] = 0.5
        c[[3], [4]] = 1e3
        return c
    a[[0, 2]] = [1, 2, 3, 4, 5]
    a[:, [1, 1, 1]] = [7, 8, 9]
    a[a > 8] = 0.5
    a[[3], [4]] = 1e3
    check(device, do, a)


def test_setitem_from_itself_and_scalars(device):
    a = np.arange(10)
    c = ck.asarray(a.copy(), device=device)

    def do():
        c[[0, 1, 2]] = c[[2, 1, 0]]
        c[c % 2 == 1] = c[:5]
        c[np.array([True] * 10)] = c[::-1]
        return c
    a[[0, 1, 2]] = a[[2, 1, 0]]
    a[a % 2 == 1] = a[:5].copy()   # NumPy reads through its own writes here; cudakit copies first
    a[np.array([True] * 10)] = a[::-1].copy()
    check(device, do, a)


def test_setitem_errors(device):
    c = ck.zeros((3, 4), device=device)

    def bad_shape():
        c[[0, 1]] = ck.zeros(3, device=device)
    raises(device, ValueError, bad_shape, "shape mismatch")

    def bad_index():
        c[[3]] = 1
    raises(device, IndexError, bad_index, "index 3 is out of bounds for axis 0 with size 3")

    def bad_mask():
        c[np.ones(2, bool)] = 1
    raises(device, IndexError, bad_mask, "boolean index did not match")

    def overflow():
        ck.zeros(3, dtype=ck.int8, device=device)[[0]] = 300
    with pytest.raises(OverflowError):
        overflow()
    ro = ck.asarray(np.zeros(3), device=device)
    if device == "cpu":
        ro_np = np.zeros(3)
        ro_np.flags.writeable = False
        ro = ck.asarray(ro_np)
        if not ro.flags.writeable:
            with pytest.raises(ValueError):
                ro[[0]] = 1


# ------------------------------------------------------------ hypothesis

@st.composite
def shapes_and_keys(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    items, axis = [], 0
    n_items = draw(st.integers(1, len(shape)))
    idx_shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    for _ in range(n_items):
        n = shape[axis]
        kind = draw(st.sampled_from(["int_array", "slice", "int", "mask", "newaxis"]))
        if kind == "int_array" and n > 0:
            items.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(idx_shape)),
                                                max_size=int(np.prod(idx_shape))))).reshape(idx_shape).astype(np.int64))
        elif kind == "int" and n > 0:
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "mask":
            items.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
        elif kind == "newaxis":
            items.append(None)
            continue
        else:
            items.append(slice(draw(st.integers(-5, 5)), draw(st.integers(-5, 5)), draw(st.sampled_from([1, 2, -1]))))
        axis += 1
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return shape, tuple(items)


@SETTINGS
@given(data=shapes_and_keys())
def test_hypothesis_get_and_set(device, data):
    shape, key = data
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    c = ck.asarray(a.copy(), device=device)
    try:
        want = a[key]
    except IndexError:
        raises(device, IndexError, lambda: c[key])
        return
    check(device, lambda: c[key], want)
    vals = (np.arange(want.size, dtype=np.int32) + 1000).reshape(want.shape)
    c2 = ck.asarray(a.copy(), device=device)

    def do():
        c2[key] = ck.asarray(vals, device=device)
        return c2
    a2 = a.copy()
    a2[key] = vals
    check(device, do, a2)


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3), seed=st.integers(0, 2**31))
def test_hypothesis_masks_and_nonzero(device, shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=shape).astype(np.float32)
    c = ck.asarray(a.copy(), device=device)
    check(device, lambda: c[c > 0], a[a > 0])
    got = run(device, lambda: ck.nonzero(c))
    assert len(got) == a.ndim
    for g, w in zip(got, np.nonzero(a)):
        assert_same(g, w)
    check(device, lambda: ck.argwhere(c), np.argwhere(a))
    check(device, lambda: ck.flatnonzero(c), np.flatnonzero(a))


# ------------------------------------------------------------ functions

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take(device, axis, mode):
    a = np.arange(20.0).reshape(4, 5)
    c = ck.asarray(a.copy(), device=device)
    ind = np.array([[0, 3], [-1, 2]]) if mode == "raise" else np.array([[0, 7], [-9, 22]])
    check(device, lambda: ck.take(c, ck.asarray(ind, device=device), axis=axis, mode=mode),
          np.take(a, ind, axis=axis, mode=mode))
    check(device, lambda: ck.take(c, 1, axis=axis, mode=mode), np.take(a, 1, axis=axis, mode=mode))
    check(device, lambda: ck.take(c, [True, False], axis=axis), np.take(a, [True, False], axis=axis))


def test_take_errors_and_out(device):
    c = ck.arange(6, device=device)
    raises(device, IndexError, lambda: ck.take(c, [6]), "index 6 is out of bounds for axis 0 with size 6")
    raises(device, IndexError, lambda: ck.take(ck.zeros(0, device=device), [0], mode="wrap"))
    raises(device, TypeError, lambda: ck.take(c, [1.5]))
    with pytest.raises(ValueError):
        ck.take(c, [0], mode="bogus")
    with pytest.raises(ck.AxisError):
        run(device, lambda: ck.take(c, [0], axis=3))
    out = ck.zeros(2, dtype=ck.int64, device=device)
    r = run(device, lambda: ck.take(c, [4, 1], out=out))
    assert r is out
    assert_same(out, np.array([4, 1]))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put(device, mode):
    a = np.arange(12).reshape(3, 4)
    ind = [0, 5, -1] if mode == "raise" else [0, 15, -20, 5, 5]
    c = ck.asarray(a.copy(), device=device)

    def do():
        ck.put(c, ind, [-1, -2], mode=mode)   # values repeat to the indices' length
        return c
    np.put(a, ind, [-1, -2], mode=mode)
    check(device, do, a)
    # a non-contiguous target is written through
    b = np.arange(12.0).reshape(3, 4).T
    cb = ck.asarray(np.arange(12.0).reshape(3, 4), device=device).T

    def do2():
        ck.put(cb, [1, 4], 9.5)
        return cb
    np.put(b, [1, 4], 9.5)
    check(device, do2, b)
    raises(device, IndexError, lambda: ck.put(ck.zeros(3, device=device), [3], 1), "index 3 is out of bounds")
    with pytest.raises(TypeError):
        ck.put([1, 2], [0], 1)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_and_put_along_axis(device, axis):
    rng = np.random.default_rng(1)
    a = rng.random((3, 4))
    c = ck.asarray(a.copy(), device=device)
    if axis is None:
        ind = np.argsort(a, axis=None)[:5]
    else:
        ind = np.argsort(a, axis=axis)
        ind = ind[:2] if axis == 0 else ind[:, :2]
    check(device, lambda: ck.take_along_axis(c, ck.asarray(ind, device=device), axis=axis),
          np.take_along_axis(a, ind, axis=axis))
    if axis is not None:
        def do():
            ck.put_along_axis(c, ck.asarray(ind, device=device), -1.0, axis=axis)
            return c
        b = a.copy()
        np.put_along_axis(b, ind, -1.0, axis=axis)
        check(device, do, b)
    raises(device, IndexError, lambda: ck.take_along_axis(c, ck.asarray([[0.5]], device=device), axis=0))
    raises(device, ValueError, lambda: ck.take_along_axis(c, ck.asarray([0], device=device), axis=0))


def test_nonzero_where_extract_compress(device):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    c = ck.asarray(a.copy(), device=device)
    for fn, want in [(lambda: ck.nonzero(c), np.nonzero(a)), (lambda: ck.where(c > 0), np.where(a > 0)),
                     (lambda: c.nonzero() if hasattr(c, "nonzero") else ck.nonzero(c), np.nonzero(a))]:
        got = run(device, fn)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    check(device, lambda: ck.argwhere(ck.asarray(5, device=device)), np.argwhere(np.array(5)))
    check(device, lambda: ck.argwhere(ck.asarray(0, device=device)), np.argwhere(np.array(0)))
    check(device, lambda: ck.extract(c % 2 == 0, c), np.extract(a % 2 == 0, a))
    check(device, lambda: ck.compress([True, False, True], c, axis=1), np.compress([True, False, True], a, axis=1))
    check(device, lambda: ck.compress([0, 1], c, axis=0), np.compress([0, 1], a, axis=0))
    check(device, lambda: ck.compress([False, True, True], c), np.compress([False, True, True], a))
    raises(device, ValueError, lambda: ck.nonzero(ck.asarray(1, device=device)), "0d")
    with pytest.raises(ValueError):
        ck.compress([[True]], c)


def test_ix_and_grids(device):
    a = np.arange(20).reshape(4, 5)
    c = ck.asarray(a.copy(), device=device)
    rows, cols = ck.ix_(ck.asarray([0, 3], device=device), ck.asarray([4, 1, 2], device=device))
    assert_same(rows, np.ix_([0, 3], [4, 1, 2])[0])
    check(device, lambda: c[rows, cols], a[np.ix_([0, 3], [4, 1, 2])])
    got = run(device, lambda: ck.ix_(ck.asarray([True, False, True], device=device), [1]))
    for g, w in zip(got, np.ix_([True, False, True], [1])):
        assert_same(g, w)
    with pytest.raises(ValueError):
        ck.ix_([[0, 1]])
    for g, w in zip(ck.diag_indices(3, 3, device=device), np.diag_indices(3, 3)):
        assert_same(g, w)
    for k, m in [(0, None), (1, None), (-1, 5), (10, 2)]:
        for f, nf in [(ck.tril_indices, np.tril_indices), (ck.triu_indices, np.triu_indices)]:
            got = run(device, lambda: f(4, k, m, device=device))
            for g, w in zip(got, nf(4, k, m)):
                assert_same(g, w)


def test_unravel_and_ravel_multi_index(device):
    ind = ck.asarray([0, 5, 11, 7], device=device)
    for order in "CF":
        for g, w in zip(ck.unravel_index(ind, (3, 4), order=order), np.unravel_index([0, 5, 11, 7], (3, 4), order=order)):
            assert_same(g, w)
        multi = (ck.asarray([0, 2, 1], device=device), ck.asarray([3, 0, 1], device=device))
        assert_same(ck.ravel_multi_index(multi, (3, 4), order=order),
                    np.ravel_multi_index(([0, 2, 1], [3, 0, 1]), (3, 4), order=order))
    assert_same(ck.unravel_index(ck.asarray(5, device=device), (2, 3))[1], np.array(2))
    for mode in ["wrap", "clip", ("wrap", "clip")]:
        assert_same(ck.ravel_multi_index((ck.asarray([-1, 5], device=device), ck.asarray([7, -2], device=device)),
                                         (3, 4), mode=mode),
                    np.ravel_multi_index(([-1, 5], [7, -2]), (3, 4), mode=mode))
    with pytest.raises(ValueError, match="out of bounds"):
        ck.unravel_index(ck.asarray([12], device=device), (3, 4))
    with pytest.raises(ValueError, match="invalid entry"):
        ck.ravel_multi_index((ck.asarray([3], device=device), ck.asarray([0], device=device)), (3, 4))
    with pytest.raises(TypeError):
        ck.unravel_index(ck.asarray([1.0], device=device), (3, 4))


def test_select(device):
    x = np.arange(10)
    cx = ck.asarray(x, device=device)
    assert_same(ck.select([cx < 3, cx > 5], [cx, cx ** 2]), np.select([x < 3, x > 5], [x, x ** 2]))
    assert_same(ck.select([cx < 3], [cx.astype(ck.float32)], default=-1.5),
                np.select([x < 3], [x.astype(np.float32)], default=-1.5))
    with pytest.raises(TypeError, match="invalid entry 0"):
        ck.select([cx], [cx])
    with pytest.raises(ValueError):
        ck.select([], [])
    with pytest.raises(ValueError):
        ck.select([cx < 3], [cx, cx])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(device, mode):
    choices = [np.arange(4), np.arange(4) * 10, np.array([[100], [200]])]
    a = np.array([[0, 1, 2, 1], [2, 0, 1, 0]]) if mode == "raise" else np.array([[0, 4, -1, 1], [7, 0, 1, -5]])
    check(device, lambda: ck.choose(ck.asarray(a.copy(), device=device), [ck.asarray(ch, device=device) for ch in choices],
                                    mode=mode),
          np.choose(a, choices, mode=mode))
    stack = np.arange(6.0).reshape(2, 3)
    check(device, lambda: ck.choose(ck.asarray([1, 0, 1], device=device), ck.asarray(stack, device=device)),
          np.choose([1, 0, 1], stack))
    if mode == "raise":
        raises(device, ValueError, lambda: ck.choose(ck.asarray([3], device=device), [ck.asarray([1], device=device)]),
               "invalid entry in choice array")
        with pytest.raises(TypeError):
            ck.choose(ck.asarray([0.5], device=device), [ck.asarray([1], device=device)])


# ---------------------------------------- sizes and widths of the kernels
# On `cuda` these reach every path of src/backend/cuda/cuda_index.c: many
# blocks, nonzero's scan over more than 1024 chunks, every element width
# (and 16-byte elements moved as two words), index dtypes, duplicate
# targets across blocks, the bounds check's message and a failed scatter.

WIDTHS = ["bool", "int16", "float16", "float32", "int64", "complex128"]


@pytest.mark.parametrize("dtype", WIDTHS)
def test_gather_scatter_every_width(device, dtype):
    rng = np.random.default_rng(11)
    a = (rng.integers(-50, 50, size=(40, 7, 9)) * (1 + 1j if dtype == "complex128" else 1)).astype(dtype)
    c = ck.asarray(a.copy(), device=device)
    i0, i2 = rng.integers(-40, 40, size=(5, 1)), rng.integers(0, 9, size=(1, 6))
    keys = [(i0, slice(None), i2), (slice(1, None, 3), [6, 0, -7]), (i0, 3), (Ellipsis, i2[0][::-1]),
            (a[..., 0] != 0,), (slice(None, None, -2), a[0, :, :] != 0)]
    for key in keys:
        ck_key = tuple(ck.asarray(k, device=device) if isinstance(k, np.ndarray) else k for k in key)
        assert_same(c[ck_key], a[key])
        want = a.copy()
        v = np.asarray(a[key])[::-1].copy()
        want[key] = v
        got = ck.asarray(a.copy(), device=device)
        got[ck_key] = ck.asarray(v, device=device)
        assert_same(got, want)
    # a transposed (non-contiguous) source and values that broadcast
    assert_same(c.T[[2, 0], 1:5], a.T[[2, 0], 1:5])
    got = ck.asarray(a.copy(), device=device)
    got[[3, 1, 3], :, 2] = a[0, :, 0]
    want = a.copy()
    want[[3, 1, 3], :, 2] = a[0, :, 0]
    assert_same(got, want)


@pytest.mark.parametrize("idx_dtype", ["int8", "uint8", "int32", "uint64"])
def test_index_dtypes(device, idx_dtype):
    a = np.arange(20.0)
    idx = np.array([3, 1, 0, 1, 2], dtype=idx_dtype)
    c = ck.asarray(a, device=device)
    assert_same(c[ck.asarray(idx, device=device)], a[idx])
    assert_same(ck.take(c, ck.asarray(idx, device=device)), np.take(a, idx))


def test_large_gather_and_mask(device):
    rng = np.random.default_rng(5)
    n = 5_000_000   # more than 1024 nonzero chunks: the scan carries across its tiles
    a = rng.standard_normal(n).astype(np.float32)
    c = ck.asarray(a, device=device)
    m = a > 0.3
    assert_same(c[c > 0.3], a[m])
    assert_same(ck.flatnonzero(c > 0.3), np.flatnonzero(m))
    idx = rng.integers(-n, n, size=1 << 20)
    assert_same(c[ck.asarray(idx, device=device)], a[idx])
    # a strided 3-d mask
    b = a[: 160 * 150 * 200].reshape(160, 150, 200)[:, ::-2, 1::3]
    cb = c[: 160 * 150 * 200].reshape(160, 150, 200)[:, ::-2, 1::3]
    for g, w in zip(ck.nonzero(cb > 1.0), np.nonzero(b > 1.0)):
        assert_same(g, w)
    assert_same(ck.argwhere(cb < -2.0), np.argwhere(b < -2.0))


def test_scatter_duplicates_last_wins(device):
    rng = np.random.default_rng(7)
    a = np.zeros(50, np.int32)
    idx = rng.integers(-50, 50, size=20000)
    v = np.arange(20000, dtype=np.int32)
    c = ck.asarray(a.copy(), device=device)
    c[ck.asarray(idx, device=device)] = ck.asarray(v, device=device)
    a[idx] = v
    assert_same(c, a)
    # two index arrays and a broadcast value row
    b = np.zeros((6, 8, 5))
    cb = ck.asarray(b.copy(), device=device)
    r, k = rng.integers(0, 6, size=(300, 1)), rng.integers(0, 5, size=(1, 4))
    vals = np.arange(300 * 8 * 4, dtype=np.float64).reshape(300, 8, 4)
    b[r, :, k] = vals.transpose(0, 2, 1).reshape(300, 4, 8)
    cb[ck.asarray(r, device=device), :, ck.asarray(k, device=device)] = ck.asarray(
        vals.transpose(0, 2, 1).reshape(300, 4, 8), device=device)
    assert_same(cb, b)


def test_out_of_bounds_message_and_no_partial_write(device):
    a = np.arange(10)
    c = ck.asarray(a.copy(), device=device)
    for key in ([1, 12, -30, 4], [[0, 1], [2, -11]], ([0, 1], [0, 9])):
        k = ck.asarray(np.array(key), device=device) if not isinstance(key, tuple) else key
        try:
            a[tuple(key) if isinstance(key, tuple) else np.array(key)]
        except IndexError as e:
            msg = str(e)
        if isinstance(key, tuple):
            with pytest.raises(IndexError, match="too many indices"):
                c[k]
            continue
        with pytest.raises(IndexError) as info:
            c[k]
        assert str(info.value) == msg
        with pytest.raises(IndexError):
            c[k] = 7
        assert_same(c, a)   # nothing written
    # an empty iteration still checks its indices
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        ck.zeros((0, 5), device=device)[:, [5]]
    with pytest.raises(IndexError, match="non-empty take from an empty axes"):
        ck.take(ck.zeros(0, device=device), [0], mode="wrap")


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_put_modes_large(device, mode):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((30, 1000))
    idx = rng.integers(-3000, 3000, size=(40, 50))
    c = ck.asarray(a, device=device)
    assert_same(ck.take(c, ck.asarray(idx, device=device), axis=1, mode=mode), np.take(a, idx, axis=1, mode=mode))
    want = a.copy()
    np.put(want, idx, np.arange(7.0), mode=mode)
    got = ck.asarray(a.copy(), device=device)
    ck.put(got, ck.asarray(idx, device=device), ck.arange(7.0, device=device), mode=mode)
    assert_same(got, want)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_full_mask_select(device, dtype):
    # x[mask] with mask.shape == x.shape: one compaction (the compress slot)
    rng = np.random.default_rng(13)
    a = rng.integers(-3, 4, size=(70, 9, 11)).astype(dtype)
    m = rng.random(a.shape) < 0.4
    c, cm = ck.asarray(a, device=device), ck.asarray(m, device=device)
    assert_same(c[cm], a[m])
    assert_same(c.T[cm.T], a.T[m.T])                       # strided source and mask
    assert_same(c[::-1, 2:, ::3][cm[:, :7, ::3]], a[::-1, 2:, ::3][m[:, :7, ::3]])
    assert_same(c[m], a[m])                                # a NumPy mask (moved to the device)
    assert_same(c[0, 0][cm[0, 0]], a[0, 0][m[0, 0]])
    assert_same(c[cm & False], a[m & False])
    e = np.zeros((0, 4), dtype)
    assert_same(ck.asarray(e, device=device)[ck.zeros((0, 4), dtype=ck.bool, device=device)], e[np.zeros((0, 4), bool)])
    with pytest.raises(IndexError):
        c[cm[:, :, :5]]


def test_index_arrays_are_not_modified(device):
    # int64 index arrays are used in place (no scratch copy): normalising
    # negative or wrapped indices must not write to them
    a = np.arange(10.0)
    c = ck.asarray(a.copy(), device=device)
    idx = ck.asarray(np.array([-1, 3, -10, 12]), device=device)
    assert_same(ck.take(c, idx, mode="wrap"), np.take(a, [-1, 3, -10, 12], mode="wrap"))
    assert_same(c[idx[:3]], a[[-1, 3, -10]])
    c[idx[:3]] = 5.0
    assert_same(idx, np.array([-1, 3, -10, 12]))
    # an index array that is the destination itself is read before the writes
    x = np.array([3, 0, 1, 2, -1])
    cx = ck.asarray(x.copy(), device=device)
    cx[cx] = ck.asarray([10, 20, 30, 40, 50], device=device)
    x[x.copy()] = [10, 20, 30, 40, 50]
    assert_same(cx, x)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 17])
def test_compaction_lengths_and_offsets(device, n):
    """nonzero, x[mask] and x[mask] = v over masks that start on a 16-byte
    boundary (the GPU reads those 16 bytes a thread) or not (a byte a
    thread), at lengths around its 16-byte groups and 4096-byte chunks, with
    runs of all true and all false."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n + 40).astype(np.float32)
    m = rng.random(n + 40) < 0.5
    m[:20] = True
    m[-30:-10] = False
    for off in (0, 1, 16):
        av, mv = a[off:off + n], m[off:off + n]
        ca = ck.asarray(a, device=device)[off:off + n]
        cm = ck.asarray(m, device=device)[off:off + n]
        assert_same(ck.flatnonzero(cm), np.flatnonzero(mv))
        assert_same(ca[cm], av[mv])
        vals = np.arange(mv.sum(), dtype=np.float32)
        want = av.copy()
        want[mv] = vals
        got = ca.copy()
        got[cm] = ck.asarray(vals, device=device)
        assert_same(got, want)
    full = np.ones((3, n), bool)
    for g, w in zip(ck.nonzero(ck.asarray(full, device=device)), np.nonzero(full)):
        assert_same(g, w)
