"""Shape manipulation functions (reshape ... resize) against NumPy: values,
dtype and shape, views where NumPy gives views, and NumPy's error types."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same
from strategies import ALL_DTYPES, hsettings

SETTINGS = hsettings(25)
shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)


def make(shape, dtype, device):
    a = (np.arange(int(np.prod(shape))) % 7).reshape(shape).astype(dtype)
    return a, ck.asarray(a, device=device)


def is_view(device, got, base):
    if device == "cpu" and got.size:
        assert np.shares_memory(np.asarray(got), np.asarray(base))


# ------------------------------------------------------------------ views

@SETTINGS
@given(data=st.data())
def test_view_functions(device, data):
    shape = data.draw(shapes)
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a, c = make(shape, dtype, device)
    nd = a.ndim
    perm = data.draw(st.permutations(range(nd)))
    for got, want in [(ck.transpose(c, perm), np.transpose(a, perm)), (ck.permute_dims(c, perm), np.permute_dims(a, perm)),
                      (ck.transpose(c), np.transpose(a)), (ck.flip(c), np.flip(a))]:
        assert_same(got, want)
        is_view(device, got, c)
    i, j = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
    assert_same(ck.swapaxes(c, i, j), np.swapaxes(a, i, j))
    assert_same(ck.flip(c, i), np.flip(a, i))
    is_view(device, ck.flip(c, i), c)
    src = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
    dst = data.draw(st.permutations(range(nd)))[:len(src)]
    got = ck.moveaxis(c, src, dst)
    assert_same(got, np.moveaxis(a, src, dst))
    is_view(device, got, c)
    k = data.draw(st.integers(1, 2))
    ax = data.draw(st.lists(st.integers(-nd - k, nd + k - 1), unique_by=lambda x: x % (nd + k), min_size=k, max_size=k))
    got = ck.expand_dims(c, tuple(ax))
    assert_same(got, np.expand_dims(a, tuple(ax)))
    is_view(device, got, c)
    assert_same(ck.squeeze(got), np.squeeze(np.expand_dims(a, tuple(ax))))
    assert_same(got.squeeze(ax[0]), np.expand_dims(a, tuple(ax)).squeeze(ax[0]))
    is_view(device, ck.squeeze(got), c)
    assert_same(ck.reshape(c, (-1,)), np.reshape(a, (-1,)))
    assert_same(ck.ravel(c), np.ravel(a))
    is_view(device, ck.reshape(c, (-1,)), c)
    if nd >= 2:
        off = data.draw(st.integers(-3, 3))
        got = ck.diagonal(c, off, 0, -1)
        assert_same(got, np.diagonal(a, off, 0, -1))
        assert_same(c.diagonal(off), a.diagonal(off))
        is_view(device, got, c)
        assert_same(ck.trace(c, off), np.trace(a, off))
        assert_same(c.trace(off, dtype="complex128"), a.trace(off, dtype="complex128"))
        assert_same(ck.tril(c, off), np.tril(a, off))
        assert_same(ck.triu(c, off), np.triu(a, off))


def test_view_errors(device):
    c = ck.zeros((2, 1, 3), device=device)
    with pytest.raises(ck.AxisError):
        ck.swapaxes(c, 0, 3)
    with pytest.raises(ck.AxisError):
        ck.moveaxis(c, 3, 0)
    with pytest.raises(ValueError):
        ck.moveaxis(c, [0, 0], [1, 2])
    with pytest.raises(ValueError):
        ck.moveaxis(c, [0, 1], [1])
    with pytest.raises(ValueError):
        ck.squeeze(c, 0)
    with pytest.raises(ck.AxisError):
        c.squeeze(3)
    with pytest.raises(ck.AxisError):
        ck.expand_dims(c, 4)
    with pytest.raises(ValueError):
        ck.expand_dims(c, (0, 0))
    with pytest.raises(ck.AxisError):
        ck.flip(c, 3)
    with pytest.raises(ValueError):
        ck.diagonal(c, 0, 1, 1)
    with pytest.raises(ck.AxisError):
        ck.trace(c, 0, 0, 5)
    with pytest.raises(ValueError):
        ck.reshape(c, (4, 2))
    with pytest.raises(ValueError):
        ck.diag(c)
    with pytest.raises(ValueError):
        ck.fliplr(ck.zeros(3, device=device))


def test_diag_tril_1d(device):
    v = np.array([1.5, 2, 3])
    cv = ck.asarray(v, device=device)
    for k in (-2, 0, 1):
        assert_same(ck.diag(cv, k), np.diag(v, k))
    m = np.arange(12).reshape(3, 4)
    cm = ck.asarray(m, device=device)
    assert_same(ck.diag(cm, 1), np.diag(m, 1))
    is_view(device, ck.diag(cm), cm)
    assert_same(ck.trace(cm), np.asarray(np.trace(m)))
    assert ck.trace(cm).ndim == 0
    assert_same(ck.tril(cv), np.tril(v))
    b = np.ones((3, 3), bool)
    assert_same(ck.triu(ck.asarray(b, device=device)), np.triu(b))


# ------------------------------------------------------------ broadcasting

@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4))
def test_broadcast(device, shapes):
    arrs = [make(s, "int32", device) for s in shapes.input_shapes]
    assert ck.broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(*shapes.input_shapes)
    got = ck.broadcast_arrays(*[c for _, c in arrs])
    want = np.broadcast_arrays(*[a for a, _ in arrs])
    assert isinstance(got, list) and len(got) == 3   # the array API's list (NumPy 2 gives a tuple)
    for g, w in zip(got, want):
        assert_same(g, w)
    c = arrs[0][1]
    b = ck.broadcast_to(c, shapes.result_shape)
    assert_same(b, np.broadcast_to(arrs[0][0], shapes.result_shape))
    is_view(device, b, c)


def test_broadcast_errors(device):
    with pytest.raises(ValueError):
        ck.broadcast_to(ck.zeros((2, 3), device=device), (3, 3))
    with pytest.raises(ValueError):
        ck.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError):
        ck.broadcast_arrays(ck.zeros(2, device=device), ck.zeros(3, device=device))


# ----------------------------------------------------------------- joining

@SETTINGS
@given(data=st.data())
def test_concatenate_stack(device, data):
    shape = data.draw(shapes)
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    dtypes = data.draw(st.lists(st.sampled_from(ALL_DTYPES), min_size=1, max_size=3))
    parts = []
    for dt in dtypes:
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(make(tuple(s), dt, device))
    assert_same(ck.concatenate([c for _, c in parts], axis), np.concatenate([a for a, _ in parts], axis))
    assert_same(ck.concat([c for _, c in parts], axis=None), np.concatenate([a for a, _ in parts], axis=None))
    same = [make(shape, dt, device) for dt in dtypes]
    sax = data.draw(st.integers(-nd - 1, nd))
    assert_same(ck.stack([c for _, c in same], sax), np.stack([a for a, _ in same], sax))
    assert_same(ck.stack([c for _, c in same], dtype="complex128"), np.stack([a for a, _ in same], dtype="complex128"))
    assert_same(ck.hstack([c for _, c in same]), np.hstack([a for a, _ in same]))
    assert_same(ck.vstack([c for _, c in same]), np.vstack([a for a, _ in same]))
    assert_same(ck.dstack([c for _, c in same]), np.dstack([a for a, _ in same]))
    assert_same(ck.column_stack([c for _, c in same]), np.column_stack([a for a, _ in same]))
    assert_same(ck.append(same[0][1], same[-1][1]), np.append(same[0][0], same[-1][0]))
    assert_same(ck.append(same[0][1], same[-1][1], axis), np.append(same[0][0], same[-1][0], axis))


def test_join_misc(device):
    a = np.arange(6.0).reshape(2, 3)
    c = ck.asarray(a, device=device)
    out = ck.empty((4, 3), device=device)
    assert ck.concatenate([c, c], out=out) is out
    assert_same(out, np.concatenate([a, a]))
    assert_same(ck.concatenate([c.T, c[:, ::-1].T], 1), np.concatenate([a.T, a[:, ::-1].T], 1))
    assert_same(ck.hstack([ck.asarray([1, 2], device=device), ck.asarray([3], device=device)]), np.hstack([[1, 2], [3]]))
    assert_same(ck.stack([1, 2], device and 0), np.stack([1, 2]))
    with pytest.raises(ValueError):
        ck.concatenate([c, ck.zeros((2, 2), device=device)], 0)
    with pytest.raises(ValueError):
        ck.concatenate([c, ck.zeros(3, device=device)])
    with pytest.raises(ck.AxisError):
        ck.concatenate([c, c], 2)
    with pytest.raises(ValueError):
        ck.concatenate([])
    with pytest.raises(ValueError):
        ck.concatenate([ck.asarray(1.0, device=device)])
    with pytest.raises(ValueError):
        ck.stack([c, c.T])
    with pytest.raises(ck.AxisError):
        ck.stack([c, c], 3)
    with pytest.raises(TypeError):
        ck.concatenate([c, c], dtype="int32")


# ------------------------------------------------------------------ splits

@SETTINGS
@given(data=st.data())
def test_splits(device, data):
    shape = data.draw(shapes)
    a, c = make(shape, "float32", device)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(1, 5))
    for got, want in [(ck.array_split(c, n, axis), np.array_split(a, n, axis)),
                      (ck.unstack(c, axis=axis), np.unstack(a, axis=axis))]:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
            is_view(device, g, c)
    idx = sorted(data.draw(st.lists(st.integers(-6, 6), max_size=3)))
    got, want = ck.split(c, idx, axis), np.split(a, idx, axis)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        assert_same(g, w)
    if a.shape[axis] % n:
        with pytest.raises(ValueError):
            ck.split(c, n, axis)
    else:
        assert len(ck.split(c, n, axis)) == n
    with pytest.raises(ck.AxisError):
        ck.split(c, 1, a.ndim)


# ------------------------------------------------------- repeat, tile, roll

@SETTINGS
@given(data=st.data())
def test_tile_repeat_roll(device, data):
    shape = data.draw(shapes)
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a, c = make(shape, dtype, device)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=5)))
    assert_same(ck.tile(c, reps), np.tile(a, reps))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    r = data.draw(st.integers(0, 3))
    assert_same(ck.repeat(c, r), np.repeat(a, r))
    assert_same(ck.repeat(c, r, axis), np.repeat(a, r, axis))
    per = data.draw(st.lists(st.integers(0, 3), min_size=a.shape[axis], max_size=a.shape[axis]))
    assert_same(c.repeat(per, axis), a.repeat(per, axis))
    shift = data.draw(st.integers(-10, 10))
    assert_same(ck.roll(c, shift), np.roll(a, shift))
    axes = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=3))
    shifts = data.draw(st.lists(st.integers(-10, 10), min_size=len(axes), max_size=len(axes)))
    assert_same(ck.roll(c, shifts, axes), np.roll(a, shifts, axes))
    assert_same(ck.roll(c, shift, axes), np.roll(a, shift, axes))


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex128"])
def test_repeat_many_counts(device, dtype):
    # per-element counts on a long axis take the one-gather path
    rng = np.random.default_rng(3)
    a = rng.integers(-9, 9, size=(300, 3)).astype(dtype)
    reps = rng.integers(0, 4, size=300)
    c = ck.asarray(a, device=device)
    assert_same(ck.repeat(c, reps, axis=0), np.repeat(a, reps, axis=0))
    assert_same(ck.repeat(c[::-1, 1:], reps, axis=0), np.repeat(a[::-1, 1:], reps, axis=0))
    assert_same(ck.repeat(c.T, reps, axis=1), np.repeat(a.T, reps, axis=1))
    assert_same(ck.repeat(c, np.tile(reps, 3)), np.repeat(a, np.tile(reps, 3)))
    assert_same(ck.repeat(c, np.zeros(300, int), axis=0), np.repeat(a, np.zeros(300, int), axis=0))


def test_tile_repeat_roll_errors(device):
    c = ck.zeros((2, 3), device=device)
    assert_same(ck.repeat(ck.asarray(5, device=device), 3), np.repeat(5, 3))
    with pytest.raises(ValueError):
        ck.repeat(c, [1, 2], 1)
    with pytest.raises(ValueError):
        ck.repeat(c, -1)
    with pytest.raises(ck.AxisError):
        ck.repeat(c, 2, 2)
    with pytest.raises(TypeError):
        ck.repeat(c, 1.5)
    with pytest.raises(ck.AxisError):
        ck.roll(c, 1, 2)
    with pytest.raises(ValueError):
        ck.tile(c, -1)


# --------------------------------------------------------------------- pad

@SETTINGS
@given(data=st.data())
def test_pad(device, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a, c = make(shape, dtype, device)
    widths = tuple(tuple(data.draw(st.lists(st.integers(0, 9), min_size=2, max_size=2))) for _ in shape)
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        assert_same(ck.pad(c, widths, mode=mode), np.pad(a, widths, mode=mode))
    w = data.draw(st.integers(0, 3))
    assert_same(ck.pad(c, w), np.pad(a, w))
    assert_same(ck.pad(c, (w, 1), constant_values=1), np.pad(a, (w, 1), constant_values=1))
    assert ck.pad(c, w, mode="empty").shape == np.pad(a, w, mode="empty").shape


def test_pad_errors(device):
    c = ck.zeros((2, 0), device=device)
    assert_same(ck.pad(c, 1), np.pad(np.zeros((2, 0)), 1))
    with pytest.raises(ValueError):
        ck.pad(c, 1, mode="edge")
    with pytest.raises(ValueError):
        ck.pad(c, -1)
    with pytest.raises(ValueError):
        ck.pad(c, ((1, 2), (1, 2), (1, 2)))
    with pytest.raises(ValueError):
        ck.pad(c, 1, mode="bogus")
    with pytest.raises(ValueError):   # an empty axis, as NumPy, before the mode
        ck.pad(c, 1, mode="mean")
    with pytest.raises(NotImplementedError):
        ck.pad(ck.zeros((2, 2), device=device), 1, mode="mean")
    with pytest.raises(TypeError):
        ck.pad(c, 1.5)


# ------------------------------------------------ flips, rot90, atleast

@SETTINGS
@given(data=st.data())
def test_rot_flip_atleast(device, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a, c = make(shape, "int16", device)
    for f in ("atleast_1d", "atleast_2d", "atleast_3d"):
        got = getattr(ck, f)(c)
        assert_same(got, getattr(np, f)(a))
        is_view(device, got, c)
    g2 = ck.atleast_2d(c, c)
    assert len(g2) == 2
    assert_same(ck.ascontiguousarray(c.T), np.ascontiguousarray(a.T))
    assert_same(ck.asfortranarray(c), np.asfortranarray(a))
    assert ck.asfortranarray(c).flags.f_contiguous
    assert ck.ascontiguousarray(c.T, dtype="float32").flags.c_contiguous
    if a.ndim >= 1:
        assert_same(ck.flipud(c), np.flipud(a))
    if a.ndim >= 2:
        assert_same(ck.fliplr(c), np.fliplr(a))
        k = data.draw(st.integers(-5, 5))
        axes = data.draw(st.sampled_from([(0, 1), (1, 0), (0, -1), (-1, -2)]))
        got = ck.rot90(c, k, axes)
        assert_same(got, np.rot90(a, k, axes))
        is_view(device, got, c)
        with pytest.raises(ValueError):
            ck.rot90(c, 1, (0, 0))


# ---------------------------------------------- insert, delete, resize

@SETTINGS
@given(data=st.data())
def test_insert_delete_resize(device, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a, c = make(shape, "float64", device)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    idx = data.draw(st.integers(-n, n))
    assert_same(ck.insert(c, idx, 7, axis), np.insert(a, idx, 7, axis))
    assert_same(ck.insert(c, idx, [7, 8]), np.insert(a, idx, [7, 8]))
    idxs = data.draw(st.lists(st.integers(-n, n), min_size=2, max_size=4))
    assert_same(ck.insert(c, idxs, 5, axis), np.insert(a, idxs, 5, axis))
    vals = np.arange(len(idxs)) + 100.0
    assert_same(ck.insert(c, idxs, ck.asarray(vals, device=device)), np.insert(a, idxs, vals))
    d = data.draw(st.integers(-n, n - 1))
    assert_same(ck.delete(c, d, axis), np.delete(a, d, axis))
    ds = data.draw(st.lists(st.integers(-n, n - 1), max_size=4))
    assert_same(ck.delete(c, ds, axis), np.delete(a, ds, axis))
    assert_same(ck.delete(c, slice(None, None, 2), axis), np.delete(a, slice(None, None, 2), axis))
    assert_same(ck.delete(c, ds), np.delete(a, ds))
    new = tuple(data.draw(st.lists(st.integers(0, 5), max_size=3)))
    assert_same(ck.resize(c, new), np.resize(a, new))
    assert_same(ck.resize(c.T, new), np.resize(a.T, new))
    with pytest.raises(IndexError):
        ck.delete(c, n, axis)
    with pytest.raises(IndexError):
        ck.insert(c, n + 1, 0, axis)


def test_resize_errors(device):
    c = ck.zeros(3, device=device)
    assert_same(ck.resize(ck.zeros(0, device=device), (2, 2)), np.resize(np.zeros(0), (2, 2)))
    with pytest.raises(ValueError):
        ck.resize(c, (-1, 2))


@pytest.mark.parametrize("axis", [-10 ** 6, -10 ** 6 - 5, 33, -3, 2 ** 30])
def test_join_axis_out_of_range_names_it(device, axis):
    # no axis value stands for "flattened" (CK_AXIS_FLAT is out of any int a caller can pass)
    a = ck.arange(4, device=device)
    for fn in (ck.concatenate, ck.stack):
        with pytest.raises(ck.AxisError, match=f"axis {axis} is out of bounds"):
            fn([a, a], axis=axis)
    with pytest.raises(ck.AxisError, match=f"axis {axis} is out of bounds"):
        ck.repeat(a, 2, axis=axis)


@pytest.mark.parametrize("axis", [2 ** 31, 2 ** 40, 2 ** 63])
def test_axis_beyond_a_c_int(device, axis):
    # NumPy's C functions raise ValueError, its Python ones OverflowError:
    # cudakit's exception is both
    a = ck.arange(4, device=device)
    for call in (lambda: ck.concatenate([a, a], axis=axis), lambda: ck.moveaxis(a, axis, 0),
                 lambda: ck.sum(a, axis=axis), lambda: ck.flip(a, axis=axis)):
        with pytest.raises(ValueError, match="won't fit into a C int") as info:
            call()
        assert isinstance(info.value, OverflowError)


def test_axis_int_min(device):
    # INT_MIN is the C API's "no axis": from Python it is out of bounds
    a = ck.arange(4, device=device)
    with pytest.raises(ck.AxisError):
        ck.moveaxis(a, -(2 ** 31), 0)
    with pytest.raises(ck.AxisError):
        ck.sum(a, axis=-(2 ** 31))


def test_axis_must_be_an_integer(device):
    a = ck.arange(4, device=device)
    for bad in (True, 1.0, "0"):
        with pytest.raises(TypeError):
            ck.concatenate([a, a], axis=bad)
        with pytest.raises(TypeError):
            ck.cumsum(a, axis=bad)
