"""Views (T, mT, real, imag, reshape, transpose, swapaxes, ravel, flatten,
view) and basic indexing (getitem and setitem) against NumPy."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same
from strategies import ALL_DTYPES, COMPLEX_DTYPES, complex_warned, elements, hsettings, view_of_shape

SETTINGS = hsettings(50)


def shares(x, y):
    """Whether two cudakit CPU arrays use the same memory."""
    return np.shares_memory(np.asarray(x), np.asarray(y))


# ------------------------------------------------------------ T, mT, transpose

@SETTINGS
@given(data=st.data())
def test_transposes(device, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4))
    a, ca = data.draw(view_of_shape(shape, dtype, device=device))
    assert_same(ca.T, a.T)
    assert_same(ca.transpose(), a.transpose())
    perm = data.draw(st.permutations(range(a.ndim)))
    assert_same(ca.transpose(perm), a.transpose(perm))
    assert_same(ca.transpose(*perm) if perm else ca.transpose(), a.transpose(*perm) if perm else a.transpose())
    neg = [p - a.ndim for p in perm]
    assert_same(ca.transpose(neg), a.transpose(neg))
    if a.ndim >= 2:
        assert_same(ca.mT, a.mT)
        i, j = data.draw(st.integers(-a.ndim, a.ndim - 1)), data.draw(st.integers(-a.ndim, a.ndim - 1))
        assert_same(ca.swapaxes(i, j), a.swapaxes(i, j))
    else:
        with pytest.raises(ValueError):
            ca.mT
    if device == "cpu" and a.size:
        assert shares(ca.T, ca)
        assert ca.T.base is not None


def test_transpose_errors(device):
    ca = ck.zeros((2, 3, 4), device=device)
    with pytest.raises(ValueError):
        ca.transpose(0, 1)
    with pytest.raises(ValueError):
        ca.transpose(0, 0, 1)
    with pytest.raises(ck.AxisError):
        ca.transpose(0, 1, 3)
    with pytest.raises(ck.AxisError):
        ca.swapaxes(0, 3)
    with pytest.raises(ck.AxisError):
        ca.swapaxes(-4, 0)


def test_transpose_view_writes_through(device):
    a = np.arange(6.0).reshape(2, 3)
    ca = ck.asarray(a.copy(), device=device)
    t = ca.T
    t[0, 1] = 100.0
    a.T[0, 1] = 100.0
    assert_same(ca, a)
    ca.mT[2] = -1.0
    a.mT[2] = -1.0
    assert_same(ca, a)


# ------------------------------------------------------------ real / imag

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_real_imag(device, dtype):
    a = (np.arange(12).reshape(3, 4) - 5).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * np.arange(12)[::-1].reshape(3, 4).astype(dtype)
    ca = ck.asarray(a, device=device)
    assert_same(ca.real, a.real)
    assert_same(ca.imag, a.imag)
    assert_same(ca[::-1, 1::2].real, a[::-1, 1::2].real)
    assert_same(ca[::-1, 1::2].imag, a[::-1, 1::2].imag)
    assert_same(ca.T.imag, a.T.imag)
    if np.dtype(dtype).kind != "c":
        if device == "cpu":
            assert shares(ca.real, ca)
        # the imaginary part of a real array is a read-only zero array
        with pytest.raises(ValueError):
            ca.imag[0, 0] = 1
        with pytest.raises(TypeError):
            ca.imag = 1


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_real_imag_are_writable_views(device, dtype):
    a = (np.arange(6) + 1j * np.arange(6, 12)).astype(dtype).reshape(2, 3)
    ca = ck.asarray(a.copy(), device=device)
    if device == "cpu":
        assert shares(ca.real, ca) and shares(ca.imag, ca)
    ca.real[0] = 100
    ca.imag[:, 1] = -7
    want = a.copy()
    want.real[0] = 100
    want.imag[:, 1] = -7
    assert_same(ca, want)
    # setting the attributes
    ca.real = ck.asarray(np.array([1.5, 2.5, 3.5]), device=device)
    want.real = np.array([1.5, 2.5, 3.5])
    ca.imag = 0.25
    want.imag = 0.25
    assert_same(ca, want)
    # through a strided view
    v = ca[:, ::-2]
    v.imag += 1
    w = want[:, ::-2]
    w.imag += 1
    assert_same(ca, want)


def test_set_real_of_real_array(device):
    a = np.arange(4.0)
    ca = ck.asarray(a.copy(), device=device)
    ca.real = 7
    a.real = 7
    assert_same(ca, a)


# ------------------------------------------------------------ reshape

@SETTINGS
@given(data=st.data())
def test_reshape(device, data):
    dtype = data.draw(st.sampled_from(["int16", "float64", "complex64", "bool"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a, ca = data.draw(view_of_shape(shape, dtype, device=device))
    # a new shape of the same size, possibly with -1
    size = a.size
    new = []
    rest = size
    for _ in range(data.draw(st.integers(0, 4))):
        divs = [d for d in range(1, 5) if rest % d == 0] if rest else [0, 1, 2]
        d = data.draw(st.sampled_from(divs))
        new.append(d)
        rest = rest // d if d else rest
    if size and rest != 1:
        new.append(rest)
    if size == 0 and 0 not in new:
        new.append(0)
    new = tuple(new)
    if np.prod(new, dtype=np.int64) != size:
        return
    order = data.draw(st.sampled_from(["C", "F", "A"]))
    if new and size and data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(new) - 1))
        new = new[:k] + (-1,) + new[k + 1:]
    want = a.reshape(new, order=order)
    got = ca.reshape(new, order=order)
    assert_same(got, want)
    if new:
        assert_same(ca.reshape(*new, order=order), want)
    assert_same(ca.reshape(shape=new, order=order), want)
    # a view exactly when NumPy gives one
    np_view = np.shares_memory(want, a) if a.size else None
    if device == "cpu" and np_view is not None:
        assert shares(got, ca) == np_view, (a.strides, new, order)
        if not np_view:
            with pytest.raises(ValueError):
                ca.reshape(new, order=order, copy=False)
    copied = ca.reshape(new, order=order, copy=True)
    assert_same(copied, want)
    if device == "cpu" and a.size:
        assert not shares(copied, ca)


def test_reshape_view_writes_through(device):
    ca = ck.arange(12, device=device)
    v = ca.reshape(3, 4)
    v[1, 2] = 100
    assert int(ca[6]) == 100
    w = ca.reshape((2, -1), order="F")
    want = np.arange(12)
    want[6] = 100
    assert_same(w, want.reshape((2, -1), order="F"))


def test_reshape_errors(device):
    ca = ck.arange(12, device=device)
    # (NumPy reads any negative extent as the unknown one: (-2, 6) is (2, 6))
    for bad in [(5,), (5, -1), (-1, -1), (3, 5), (-2, -1), (0, -1)]:
        with pytest.raises(ValueError):
            ca.reshape(bad)
    with pytest.raises(TypeError):
        ca.reshape(2.5, 4)
    with pytest.raises(TypeError):
        ca.reshape()
    with pytest.raises(ValueError):
        ca.reshape(12, order="Z")
    with pytest.raises(TypeError):
        ca.reshape(12, bogus=1)


def test_shape_setter(device):
    ca = ck.arange(12, device=device)
    with pytest.warns(DeprecationWarning, match="shape"):   # as NumPy 2.5's
        ca.shape = (3, 4)
    assert_same(ca, np.arange(12).reshape(3, 4))
    with pytest.warns(DeprecationWarning):
        ca.shape = (-1,)
    assert ca.shape == (12,)
    t = ck.arange(12, device=device).reshape(3, 4).T
    with pytest.raises(AttributeError), pytest.warns(DeprecationWarning):
        t.shape = (12,)
    with pytest.raises(ValueError), pytest.warns(DeprecationWarning):
        ca.shape = (5,)


# ------------------------------------------------------------ ravel / flatten

@SETTINGS
@given(data=st.data())
def test_ravel_flatten(device, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a, ca = data.draw(view_of_shape(shape, dtype, device=device))
    order = data.draw(st.sampled_from(["C", "F", "A", "K", None]))
    kw = {} if order is None else {"order": order}
    if order == "K":
        # NumPy's K follows the memory order of any strides; cudakit's only
        # distinguishes C and F layouts
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            kw = {"order": "A"}
    want = a.ravel(**kw)
    got = ca.ravel(**kw)
    assert_same(got, want)
    if device == "cpu" and a.size:
        assert shares(got, ca) == np.shares_memory(want, a)
    flat = ca.flatten(**kw)
    assert_same(flat, a.flatten(**kw))
    if device == "cpu" and a.size:
        assert not shares(flat, ca)


# ------------------------------------------------------------ view(dtype)

@pytest.mark.parametrize("src,dst", [("int32", "float32"), ("float64", "int64"), ("float64", "int32"),
                                     ("uint8", "int64"), ("complex128", "float64"), ("float32", "complex64"),
                                     ("int16", "uint8"), ("bool", "int8"), ("uint64", "float16")])
def test_view_dtype(device, src, dst):
    a = np.arange(2 * 8 * 2, dtype=np.uint8)
    if src == "bool":
        a = a % 2
    a = a.view(src).reshape(2, -1)
    ca = ck.asarray(a.copy(), device=device)
    got = ca.view(dst)
    want = a.view(dst)
    assert_same(got, want)
    assert_same(ca.view(), a)
    assert_same(ca.view(getattr(ck, dst)), want)
    assert_same(ca[1:].view(dst), a[1:].view(dst))
    if device == "cpu":
        assert shares(got, ca)
    # writes through
    got[0, 0] = 1
    want = want.copy()
    want[0, 0] = 1
    assert_same(ca.view(dst), want)
    assert_same(ca, want.view(src))


def test_view_dtype_errors(device):
    ca = ck.zeros((4, 3), dtype="int8", device=device)
    with pytest.raises(ValueError):
        ca.view("int16")          # 3 bytes per row
    with pytest.raises(ValueError):
        ca.T.view("int32")        # last axis not contiguous
    with pytest.raises(ValueError):
        ck.zeros((), dtype="int8", device=device).view("int16")
    with pytest.raises(TypeError):
        ca.view("nope")


# ------------------------------------------------------------ basic indexing

def np_index(a, idx):
    return np.asarray(a[idx])


@pytest.mark.parametrize("dtype", ["float64", "int8", "complex64", "bool", "uint64"])
@SETTINGS
@given(data=st.data())
def test_getitem_basic_indices(device, dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    a, ca = data.draw(view_of_shape(shape, dtype, device=device))
    idx = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    got = ca[idx]
    want = np_index(a, idx)
    assert isinstance(got, ck.ndarray)
    assert_same(got, want)
    # a view: writing to it writes to the original
    if device == "cpu" and got.size:
        assert shares(got, ca)
    if got.size:
        a2 = a.copy()
        ca2 = ck.asarray(a2.copy(), device=device)
        v = ca2[idx]
        v[...] = ck.zeros_like(v)
        a2[idx] = 0
        assert_same(ca2, a2)


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool", "uint8"])
@SETTINGS
@given(data=st.data())
def test_setitem_basic_indices(device, dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    a = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype, 0, 100)))
    _, ca = data.draw(view_of_shape(shape, dtype, device=device))
    ca[...] = ck.asarray(a, device=device)  # the same values in a (possibly strided) view
    idx = data.draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    target_shape = a[idx].shape
    # a value of any dtype whose shape broadcasts to the target
    vdtype = data.draw(st.sampled_from(ALL_DTYPES))
    vshape = data.draw(hnp.broadcastable_shapes(target_shape, max_dims=len(target_shape), max_side=5).filter(
        lambda s: np.broadcast_shapes(s, target_shape) == target_shape))
    kind = data.draw(st.sampled_from(["ck", "numpy", "list", "scalar"]))
    if kind == "scalar":
        value = data.draw(st.sampled_from([0, 7, 2.5, True, 1 + 0j]))
        v_np = value
        v_ck = value
    else:
        v_np = data.draw(hnp.arrays(vdtype, vshape, elements=elements(vdtype, 0, 100)))
        v_ck = {"ck": ck.asarray(v_np, device=device), "numpy": v_np, "list": v_np.tolist()}[kind]
        if kind == "list":
            v_np = v_np.tolist()
    want = a.copy()
    try:
        _, np_warned = complex_warned(want.__setitem__, idx, v_np)
    except (TypeError, ValueError, OverflowError) as e:
        exc = next(t for t in (TypeError, OverflowError, ValueError) if isinstance(e, t))
        with pytest.raises(exc):
            ca[idx] = v_ck
        return
    _, ck_warned = complex_warned(ca.__setitem__, idx, v_ck)
    assert ck_warned == np_warned
    assert_same(ca, want)


def test_setitem_broadcast_and_errors(device):
    a = np.zeros((3, 4))
    ca = ck.asarray(a.copy(), device=device)
    ca[1:] = ck.asarray(np.arange(4.0), device=device)
    a[1:] = np.arange(4.0)
    ca[:, 2] = [7, 8, 9]
    a[:, 2] = [7, 8, 9]
    ca[0, ::-1] = np.array([1, 2, 3, 4], dtype=np.int8)
    a[0, ::-1] = np.array([1, 2, 3, 4], dtype=np.int8)
    assert_same(ca, a)
    with pytest.raises(ValueError):
        ca[:, 1] = ck.ones(4, device=device)
    with pytest.raises(ValueError):
        ca[...] = ck.ones((2, 3, 4), device=device)
    with pytest.raises(ValueError):
        del ca[0]


def test_setitem_casting(device):
    ia = ck.zeros(4, dtype="int32", device=device)
    ia[0] = 3.9
    ia[1:3] = ck.asarray(np.array([-1.7, 2.2]), device=device)
    ia[3] = True
    want = np.zeros(4, dtype="int32")
    want[0] = 3.9
    want[1:3] = np.array([-1.7, 2.2])
    want[3] = True
    assert_same(ia, want)
    # Python values that do not convert
    with pytest.raises(OverflowError):
        ck.zeros(2, dtype="int8", device=device)[0] = 300
    with pytest.raises(OverflowError):
        ck.zeros(2, dtype="uint8", device=device)[0] = -1
    with pytest.raises(TypeError):
        ck.zeros(2, device=device)[0] = 1 + 2j
    with pytest.raises(ValueError):
        ck.zeros(2, dtype="int64", device=device)[0] = float("nan")
    with pytest.raises(OverflowError):
        ck.zeros(2, dtype="int64", device=device)[0] = float("inf")
    with pytest.raises((TypeError, ValueError)):
        ck.zeros(2, device=device)[0] = "x"
    with pytest.raises((TypeError, ValueError)):
        ck.zeros(2, device=device)[0] = None
    b = ck.zeros(3, dtype="bool", device=device)
    b[1] = 5
    b[2] = 0.0
    assert_same(b, np.array([False, True, False]))
    c = ck.zeros(2, dtype="complex64", device=device)
    c[0] = 1 - 2j
    assert_same(c, np.array([1 - 2j, 0], dtype="complex64"))


def test_setitem_overlapping_self_assignment(device):
    a = np.arange(10)
    ca = ck.asarray(a.copy(), device=device)
    ca[1:] = ca[:-1]
    a[1:] = a[:-1].copy()
    assert_same(ca, a)
    ca[::-1] = ca
    a[::-1] = a.copy()
    assert_same(ca, a)
    m = np.arange(16).reshape(4, 4)
    cm = ck.asarray(m.copy(), device=device)
    cm[...] = cm.T
    assert_same(cm, m.T)


def test_fill(device):
    ca = ck.zeros((2, 3), dtype="float32", device=device)
    ca[:, ::2].fill(2.5)
    a = np.zeros((2, 3), dtype="float32")
    a[:, ::2].fill(2.5)
    assert_same(ca, a)
    with pytest.raises(OverflowError):
        ck.zeros(2, dtype="int8", device=device).fill(1000)


def test_zero_d_indexing(device):
    ca = ck.asarray(5.5, device=device)
    assert_same(ca[()], np.asarray(5.5))
    assert_same(ca[...], np.asarray(5.5))
    assert_same(ca[None], np.array([5.5]))
    ca[()] = 2
    assert float(ca) == 2.0
    ca[...] = 3
    assert float(ca) == 3.0
    with pytest.raises(IndexError):
        ca[0]
    b = ck.arange(6, device=device).reshape(2, 3)
    e = b[1, 2]
    assert e.shape == () and int(e) == 5
    if device == "cpu":
        # element indexing gives a view
        assert shares(e, b)


def test_index_with_numpy_and_ck_integers(device):
    ca = ck.arange(10, device=device)
    assert int(ca[np.int64(3)]) == 3
    assert int(ca[np.uint8(4)]) == 4
    assert int(ca[ck.asarray(5, device=device)]) == 5
    assert_same(ca[np.int32(2):np.int64(8):np.int8(2)], np.arange(10)[2:8:2])
    assert int(ca[np.array(7)]) == 7


def test_huge_and_odd_slices(device):
    a = np.arange(10)
    ca = ck.asarray(a, device=device)
    for s in [slice(None, None, 2**62), slice(-2**62, 2**62), slice(2**62, None, -1), slice(5, 2),
              slice(None, None, -2**62), slice(100, 200), slice(-100, -200, -1)]:
        assert_same(ca[s], a[s])
    with pytest.raises(ValueError):
        ca[::0]


# ------------------------------------------------------------ index errors

def test_index_errors(device):
    ca = ck.zeros((3, 4), device=device)
    with pytest.raises(IndexError):
        ca[3]
    with pytest.raises(IndexError):
        ca[-4]
    with pytest.raises(IndexError):
        ca[0, 4]
    with pytest.raises(IndexError):
        ca[2**70]
    with pytest.raises(IndexError):
        ca[0, 0, 0]           # too many indices
    with pytest.raises(IndexError):
        ca[..., ...]
    with pytest.raises(IndexError):
        ca[1.0]
    with pytest.raises(IndexError):
        ca["a"]
    with pytest.raises(IndexError):
        ca[0, 1.5]
    with pytest.raises(IndexError):
        ca[ck.asarray([1.0, 2.0], device=device)]
    with pytest.raises(IndexError):
        ca[3] = 1
    with pytest.raises(IndexError):
        ca[0, 0, 0] = 1


@pytest.mark.parametrize("key", [
    [0, 1], (slice(None), [1, 2]), np.array([0, 2]), np.array([True, False, True]),
    [True, False, True], True, False, np.bool_(True), (Ellipsis, [0]),
], ids=repr)
def test_advanced_indexing_matches_numpy(device, key):
    # advanced indexing itself is tested in test_advanced_indexing.py
    na = np.arange(12.0).reshape(3, 4)
    ca = ck.asarray(na, device=device)
    np.testing.assert_array_equal(ck.asnumpy(ca[key]), na[key])
    ca[key] = -1
    na[key] = -1
    np.testing.assert_array_equal(ck.asnumpy(ca), na)


def test_advanced_index_out_of_range_is_index_error_first(device):
    ca = ck.zeros((3, 4), device=device)
    with pytest.raises(IndexError):
        ca[5, [0, 1]]


def test_read_only_assignment(device):
    ca = ck.arange(4.0, device=device)
    ro = ca.imag
    with pytest.raises(ValueError):
        ro[0] = 1
    with pytest.raises(ValueError):
        ro[...] = 1
    with pytest.raises(ValueError):
        ro.fill(1)
    with pytest.raises(ValueError):
        ro += 1
    with pytest.raises(ValueError):
        ck.add(ca, 1, out=ro)
    # a read-only NumPy array wrapped without a copy stays read-only
    if device == "cpu":
        a = np.arange(3.0)
        a.flags.writeable = False
        c = ck.asarray(a)
        with pytest.raises(ValueError):
            c[0] = 5
        with pytest.raises(ValueError):
            c[1:] += 1
        assert a[0] == 0.0


def test_real_imag_functions(device):
    a = np.array([1 + 2j, -3 - 4j], dtype=np.complex64)
    ca = ck.asarray(a, device=device)
    assert_same(ck.real(ca), np.real(a))
    assert_same(ck.imag(ca), np.imag(a))
    r = np.arange(3.0)
    assert_same(ck.imag(ck.asarray(r, device=device)), np.imag(r))
