"""concatenate / stack and the functions built on them, over many pieces
(several launches of the GPU's joining kernel), every element width,
mixed dtypes, empty pieces and pieces that are views of every layout."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
          "complex128"]
LAYOUTS = ["contiguous", "step", "reversed", "transposed", "offset"]


def values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    v = rng.integers(-60, 60, size=shape)
    if dtype.kind == "c":
        v = v + 1j * rng.integers(-60, 60, size=shape)
    return v.astype(dtype)


def piece(rng, shape, dtype, layout, device):
    """The same view of shape in NumPy and in cudakit, laid out as named."""
    shape = tuple(shape)
    nd = len(shape)
    if layout == "step":
        base = values(rng, shape[:-1] + (2 * shape[-1],), dtype)
        return base[..., ::2], ck.asarray(base, device=device)[..., ::2]
    if layout == "reversed":
        base = values(rng, shape, dtype)
        key = tuple(slice(None, None, -1) if d == nd // 2 else slice(None) for d in range(nd))
        return base[key], ck.asarray(base, device=device)[key]
    if layout == "transposed":
        base = values(rng, shape[::-1], dtype)
        return base.T, ck.asarray(base, device=device).T
    if layout == "offset":
        size = int(np.prod(shape))
        base = values(rng, (size + 1,), dtype)
        return base[1:].reshape(shape), ck.asarray(base, device=device)[1:].reshape(shape)
    base = values(rng, shape, dtype)
    return base, ck.asarray(base, device=device)


@st.composite
def joins(draw, stack=False):
    n = draw(st.sampled_from([1, 2, 3, 7, 16, 33, 40]) | st.integers(1, 40))
    nd = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 3), min_size=nd, max_size=nd))
    if draw(st.booleans()):
        mixed = draw(st.lists(st.sampled_from(DTYPES), min_size=n, max_size=n))
    else:
        mixed = [draw(st.sampled_from(DTYPES))] * n
    layouts = draw(st.lists(st.sampled_from(LAYOUTS), min_size=n, max_size=n))
    lens = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2**31))
    return n, shape, mixed, layouts, lens, seed


@SETTINGS
@given(data=joins(), axis_pick=st.integers(0, 7), flat=st.booleans())
def test_concatenate_pieces(device, data, axis_pick, flat):
    n, shape, dtypes, layouts, lens, seed = data
    nd = len(shape)
    axis = axis_pick % (2 * nd) - nd          # -nd .. nd-1
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(n):
        sh = list(shape)
        sh[axis] = lens[i]
        if flat:
            sh = [(lens[i] + k) % 3 for k in range(nd)]
        pairs.append(piece(rng, sh, dtypes[i], layouts[i], device))
    a = [p for p, _ in pairs]
    c = [q for _, q in pairs]
    if flat:
        assert_same(ck.concatenate(c, axis=None), np.concatenate(a, axis=None))
        return
    want = np.concatenate(a, axis=axis)
    assert_same(ck.concatenate(c, axis=axis), want)
    # out=: a reversed, transposed view of a bigger array of another dtype
    if want.size:
        odt = "complex128" if want.dtype.kind == "c" else "float64"
        big = np.zeros(want.shape[::-1] + (2,), odt)
        cbig = ck.asarray(big, device=device)
        np.concatenate(a, axis=axis, out=big[..., 1].T[::-1], casting="unsafe")
        r = ck.concatenate(c, axis=axis, out=cbig[..., 1].T[::-1], casting="unsafe")
        assert_same(cbig, big)
        assert_same(r, big[..., 1].T[::-1])


@SETTINGS
@given(data=joins(), axis_pick=st.integers(0, 9))
def test_stack_pieces(device, data, axis_pick):
    n, shape, dtypes, layouts, lens, seed = data
    nd = len(shape)
    axis = axis_pick % (2 * (nd + 1)) - (nd + 1)   # every position of the new axis, negative too
    rng = np.random.default_rng(seed)
    if lens[0] == 0:
        shape = shape[:-1] + [0]                   # empty inputs
    pairs = [piece(rng, shape, dtypes[i], layouts[i] if 0 not in shape else "contiguous", device) for i in range(n)]
    a = [p for p, _ in pairs]
    c = [q for _, q in pairs]
    want = np.stack(a, axis=axis)
    assert_same(ck.stack(c, axis=axis), want)
    out_np = np.zeros(want.shape, want.dtype)
    out = ck.zeros(want.shape, dtype=want.dtype, device=device)
    assert ck.stack(c, axis=axis, out=out) is out
    np.stack(a, axis=axis, out=out_np)
    assert_same(out, out_np)


@pytest.mark.parametrize("dtype", DTYPES)
def test_family_every_width(device, dtype):
    rng = np.random.default_rng(1)
    a = [values(rng, (3, 4), dtype) for _ in range(35)]
    c = [ck.asarray(x, device=device) for x in a]
    for name in ["hstack", "vstack", "dstack", "column_stack"]:
        assert_same(getattr(ck, name)(c), getattr(np, name)(a))
    assert_same(ck.concatenate(c, axis=None), np.concatenate(a, axis=None))
    assert_same(ck.stack(c, axis=2), np.stack(a, axis=2))
    one = [values(rng, (k,), dtype) for k in range(1, 9)]     # run lengths that are not multiples of a word
    assert_same(ck.concatenate([ck.asarray(x, device=device) for x in one]), np.concatenate(one))
    col = [x[:, None] for x in a]
    assert_same(ck.concatenate([ck.asarray(x, device=device) for x in col], axis=1), np.concatenate(col, axis=1))


def test_dtype_casting_and_out(device):
    rng = np.random.default_rng(2)
    a = [values(rng, (2, k), dt) for k, dt in zip([1, 0, 3, 2], ["int8", "float32", "bool", "uint8"])]
    c = [ck.asarray(x, device=device) for x in a]
    assert_same(ck.concatenate(c, axis=1), np.concatenate(a, axis=1))
    for dt in ["int64", "float16", "complex128", "bool"]:
        assert_same(ck.concatenate(c, axis=1, dtype=dt, casting="unsafe"),
                    np.concatenate(a, axis=1, dtype=dt, casting="unsafe"))
    assert_same(ck.stack([c[3], c[3]], dtype="float64"), np.stack([a[3], a[3]], dtype="float64"))
    with pytest.raises(TypeError):
        ck.concatenate(c, axis=1, dtype="int8")      # same_kind refuses float32 -> int8
    with pytest.raises(TypeError):
        np.concatenate(a, axis=1, dtype="int8")
    # out=, contiguous and a strided view
    out_np = np.zeros((2, 6), "float64")
    out = ck.zeros((2, 6), dtype="float64", device=device)
    assert ck.concatenate(c, axis=1, out=out) is out
    np.concatenate(a, axis=1, out=out_np)
    assert_same(out, out_np)
    big_np = np.zeros((4, 12), "complex128")
    big = ck.zeros((4, 12), dtype="complex128", device=device)
    ck.concatenate(c, axis=1, out=big[::2, ::2])
    np.concatenate(a, axis=1, out=big_np[::2, ::2])
    assert_same(big, big_np)
    with pytest.raises(ValueError):
        ck.concatenate(c, axis=1, out=ck.zeros((2, 5), device=device))
    with pytest.raises(ValueError):
        ck.stack(c[2:3] * 2, out=ck.zeros((2, 2, 4), device=device))
    ro = ck.broadcast_to(ck.zeros(6, device=device), (2, 6))
    with pytest.raises(ValueError):
        ck.concatenate(c, axis=1, out=ro)
    # out= that the inputs are views of: NumPy's result all the same
    x = np.arange(12, dtype="float32").reshape(3, 4)
    cx = ck.asarray(x, device=device)
    np.concatenate([x[:, :2], x[:, 2:][:, ::-1]], axis=1, out=x[::-1])
    ck.concatenate([cx[:, :2], cx[:, 2:][:, ::-1]], axis=1, out=cx[::-1])
    assert_same(cx, x)
    y = np.arange(6, dtype="int64")
    cy = ck.asarray(y, device=device)
    np.stack([y[:3], y[3:]], out=y.reshape(2, 3)[::-1])
    ck.stack([cy[:3], cy[3:]], out=cy.reshape(2, 3)[::-1])
    assert_same(cy, y)


def test_all_empty_and_single(device):
    for shape in [(0, 3), (2, 0), (0,)]:
        a = [np.zeros(shape, "float32") for _ in range(5)]
        c = [ck.asarray(x, device=device) for x in a]
        assert_same(ck.concatenate(c), np.concatenate(a))
        assert_same(ck.concatenate(c, axis=-1), np.concatenate(a, axis=-1))
        assert_same(ck.concatenate(c, axis=None), np.concatenate(a, axis=None))
        assert_same(ck.stack(c, axis=-1), np.stack(a, axis=-1))
    x = np.arange(12, dtype="int16").reshape(3, 4)
    assert_same(ck.concatenate([ck.asarray(x, device=device)[:, ::-2]], axis=0), np.concatenate([x[:, ::-2]]))


def test_many_pieces_large(device):
    # 100 pieces of differing lengths: several launches, each writing its own stretch
    rng = np.random.default_rng(3)
    a = [rng.standard_normal(int(k)).astype("float32") for k in rng.integers(0, 3000, 100)]
    c = [ck.asarray(x, device=device) for x in a]
    assert_same(ck.concatenate(c), np.concatenate(a))
    b = [x[: 2 * (len(x) // 2)].reshape(-1, 2) for x in a]
    assert_same(ck.concatenate([ck.asarray(x, device=device).T for x in b], axis=1),
                np.concatenate([x.T for x in b], axis=1))
    same = [rng.standard_normal((7, 5)) for _ in range(70)]
    cs = [ck.asarray(x, device=device) for x in same]
    for axis in range(3):
        assert_same(ck.stack(cs, axis=axis), np.stack(same, axis=axis))
