"""Interop: NumPy (zero copy on the CPU), the buffer protocol,
__array_interface__, DLPack both ways, pickling, tolist/item, Python
conversions, len and iteration, and repr/str equal to NumPy's."""
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same
from strategies import ALL_DTYPES, elements, hsettings, view_of_shape

SETTINGS = hsettings(30)

# ------------------------------------------------------------ NumPy

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_numpy_asarray_zero_copy(device, dtype):
    base = np.arange(24).reshape(2, 3, 4).astype(dtype)
    for src in (base, base[:, ::-1, 1::2], base.transpose(2, 0, 1), base[1, 2]):
        c = ck.asarray(src, device=device)
        if device != "cpu":
            with pytest.raises(TypeError):
                np.asarray(c)
            assert_same(c, src)
            continue
        back = np.asarray(c)
        assert back.dtype == src.dtype and back.shape == src.shape
        assert np.array_equal(back, src)
        assert np.shares_memory(back, src)
        # both ways: NumPy writes are seen by cudakit and the other way round
        if src.size:
            idx = (0,) * src.ndim
            src[idx] = 1
            assert c[idx].item() == src[idx].item()
            c[idx] = 0
            assert src[idx] == 0


def test_numpy_array_dtype_and_copy(device):
    c = ck.arange(6, dtype="int32", device=device)
    if device != "cpu":
        return
    assert np.asarray(c, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(c), np.asarray(c))
    assert np.shares_memory(np.asarray(c, dtype=np.int32), np.asarray(c))
    with pytest.raises(ValueError):
        np.asarray(c, dtype=np.float32, copy=False)
    assert ck.asnumpy(c).base is not None or np.shares_memory(ck.asnumpy(c), np.asarray(c))


def test_asnumpy_and_get(device):
    a = np.arange(10.0)[::3]
    c = ck.asarray(a, device=device)
    assert isinstance(ck.asnumpy(c), np.ndarray)
    assert np.array_equal(ck.asnumpy(c), a)
    g = c.get()
    assert isinstance(g, np.ndarray) and np.array_equal(g, a)
    # get() is a copy
    g[0] = 99
    assert c[0].item() == 0.0
    assert np.array_equal(ck.asnumpy([1, 2]), np.array([1, 2]))
    out = np.empty(4)
    assert ck.asnumpy(c, out=out) is out and np.array_equal(out, a)


# ------------------------------------------------------------ buffer protocol

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_memoryview(device, dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    c = ck.asarray(a.copy(), device=device)
    if device != "cpu":
        with pytest.raises((TypeError, BufferError)):
            memoryview(c)
        return
    for v_np, v_ck in ((a, c), (a[::-1, 1::2], c[::-1, 1::2]), (a.T, c.T), (a[1, 1], c[1, 1])):
        m = memoryview(v_ck)
        w = memoryview(v_np)
        assert m.format == w.format or np.dtype(m.format) == np.dtype(w.format)
        assert m.shape == w.shape
        assert m.strides == w.strides
        assert m.itemsize == w.itemsize
        assert m.ndim == w.ndim
        assert not m.readonly
        assert np.array_equal(np.asarray(m), v_np)
    # writes through the memoryview land in the array
    m = memoryview(c)
    np.asarray(m)[2, 3] = np.asarray(1, dtype=dtype)
    assert c[2, 3].item() == np.asarray(1, dtype=dtype).item()
    # read-only arrays export read-only buffers
    ro = c.imag if np.dtype(dtype).kind != "c" else None
    if ro is not None:
        assert memoryview(ro).readonly
        with pytest.raises(ValueError):
            np.asarray(memoryview(ro))[0, 0] = 1


def test_buffer_round_trip_through_bytes(device):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    c = ck.asarray(a, device=device)
    if device == "cpu":
        assert bytes(memoryview(c)) == a.tobytes()
        assert bytes(memoryview(c.T)) == a.T.tobytes()


# ------------------------------------------------------------ __array_interface__

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_array_interface(device, dtype):
    a = np.arange(20).reshape(4, 5).astype(dtype)
    c = ck.asarray(a, device=device)
    if device != "cpu":
        assert not hasattr(c, "__array_interface__")
        return
    for v_np, v_ck in ((a, c), (a[1:, ::-2], c[1:, ::-2]), (a.T, c.T), (a[0, 0, ...], c[0, 0])):
        ai = v_ck.__array_interface__
        want = v_np.__array_interface__
        assert ai["version"] == 3
        assert ai["shape"] == want["shape"]
        assert np.dtype(ai["typestr"]) == np.dtype(want["typestr"])
        assert ai["data"][0] == want["data"][0]
        assert ai["data"][1] is False
        if want["strides"] is not None:
            assert ai["strides"] == want["strides"]

        class Wrapper:
            __array_interface__ = ai
        got = np.asarray(Wrapper())
        assert np.array_equal(got, v_np)
        assert np.shares_memory(got, v_np)
    assert c.imag.__array_interface__["data"][1] is (np.dtype(dtype).kind != "c")


# ------------------------------------------------------------ DLPack

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_to_numpy(device, dtype):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    c = ck.asarray(a, device=device)
    if device != "cpu":
        with pytest.raises((BufferError, RuntimeError, TypeError, ValueError)):
            np.from_dlpack(c)
        return
    assert c.__dlpack_device__() == (1, 0)
    for v_np, v_ck in ((a, c), (a[:, ::-1, 1::2], c[:, ::-1, 1::2]), (a.transpose(2, 0, 1), c.transpose(2, 0, 1)),
                       (a[1, 2, 3], c[1, 2, 3]), (a[:, :0], c[:, :0])):
        got = np.from_dlpack(v_ck)
        assert got.dtype == v_np.dtype and got.shape == v_np.shape
        assert np.array_equal(got, v_np)
        if v_np.size:
            assert np.shares_memory(got, np.asarray(v_ck))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_from_numpy(device, dtype):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    for src in (a, a[:, ::-1, 1::2], a.transpose(1, 2, 0), a[0, 1, 2, ...], a[:0]):
        got = ck.from_dlpack(src, device=device) if device != "cpu" else ck.from_dlpack(src)
        assert_same(got, src)
        if device == "cpu" and src.size:
            assert np.shares_memory(np.asarray(got), src)
    # from a cudakit array, and asarray() of an object with __dlpack__
    c = ck.asarray(a, device=device)
    assert_same(ck.from_dlpack(c), a)

    class OnlyDLPack:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, **kw):
            return self.x.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()
    assert_same(ck.asarray(OnlyDLPack(a[::2]), device=device), a[::2])


def test_dlpack_copy_and_errors(device):
    a = np.arange(6.0)
    c = ck.from_dlpack(a, copy=True)
    c[0] = 5.0
    assert a[0] == 0.0
    with pytest.raises(TypeError):
        ck.from_dlpack([1, 2, 3])
    ro = np.arange(3.0)
    ro.flags.writeable = False
    r = ck.from_dlpack(ro)
    assert_same(r, ro)
    with pytest.raises((ValueError, BufferError)):
        r[0] = 1.0


def test_dlpack_keeps_owner_alive(device):
    c = ck.arange(1000, dtype="float64", device="cpu")
    n = np.from_dlpack(c)
    del c
    import gc
    gc.collect()
    assert n[999] == 999.0
    a = np.arange(1000.0)
    k = ck.from_dlpack(a)
    del a
    gc.collect()
    assert k[999].item() == 999.0


# ------------------------------------------------------------ pickle, copy

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SETTINGS
@given(data=st.data())
def test_pickle_round_trip(device, dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a, c = data.draw(view_of_shape(shape, dtype, elements(dtype, nan=np.dtype(dtype).kind in "fc"), device))
    proto = data.draw(st.integers(2, pickle.HIGHEST_PROTOCOL))
    back = pickle.loads(pickle.dumps(c, protocol=proto))
    assert isinstance(back, ck.ndarray)
    assert back.device == c.device
    assert_same(back, a)
    for cp in (copy.copy(c), copy.deepcopy(c)):
        assert_same(cp, a)
        if device == "cpu" and a.size:
            assert not np.shares_memory(np.asarray(cp), np.asarray(c))


def test_pickle_dtypes_and_ufuncs(device):
    for d in (ck.float32, ck.int8, ck.complex128, ck.bool):
        assert pickle.loads(pickle.dumps(d)) == d
    assert pickle.loads(pickle.dumps(ck.add)) is ck.add
    assert pickle.loads(pickle.dumps(ck.Device(device))) == ck.Device(device)


# ------------------------------------------------------------ Python values

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SETTINGS
@given(data=st.data())
def test_tolist_item(device, dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a, c = data.draw(view_of_shape(shape, dtype, device=device))
    got = c.tolist()
    want = a.tolist()
    assert got == want or (np.dtype(dtype).kind in "fc" and np.array_equal(np.asarray(got), a, equal_nan=True))
    assert type(got) is type(want)
    if a.size:
        flat = data.draw(st.integers(-a.size, a.size - 1))
        g, w = c.item(flat), a.item(flat)
        assert type(g) is type(w) and (g == w or g != g)
        idx = tuple(data.draw(st.integers(-n, n - 1)) for n in a.shape)
        if idx:
            g, w = c.item(*idx), a.item(*idx)
            assert type(g) is type(w) and (g == w or g != g)
            assert c.item(idx) == a.item(idx) or a.item(idx) != a.item(idx)
    if a.size == 1:
        assert c.item() == a.item() or a.item() != a.item()
    else:
        with pytest.raises(ValueError):
            c.item()


def test_item_errors(device):
    c = ck.arange(6, device=device).reshape(2, 3)
    with pytest.raises(IndexError):
        c.item(6)
    with pytest.raises(IndexError):
        c.item(-7)
    with pytest.raises(IndexError):
        c.item(2, 0)
    with pytest.raises(ValueError):
        c.item(1, 1, 1)
    with pytest.raises(TypeError):
        c.item(1.5)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scalar_conversions(device, dtype):
    for v in (0, 1, 3):
        a = np.asarray(v).astype(dtype)
        c = ck.asarray(a, device=device)
        assert bool(c) == bool(a)
        if a.dtype.kind != "c":
            assert int(c) == int(a) and type(int(c)) is int
            assert float(c) == float(a) and type(float(c)) is float
        else:
            with pytest.raises(TypeError):
                int(c)
            with pytest.raises(TypeError):
                float(c)
        assert complex(c) == complex(a)
        if a.dtype.kind in "iu":
            assert [10, 20, 30, 40][c] == [10, 20, 30, 40][int(a)]
            assert c.__index__() == int(a)
        else:
            with pytest.raises(TypeError):
                [1, 2, 3, 4][c]
    one = ck.asarray(np.ones((1, 1), dtype=dtype), device=device)
    assert bool(one)
    if np.dtype(dtype).kind != "c":
        assert float(one) == 1.0
    with pytest.raises(TypeError):
        [1, 2][one]   # only 0-d integer arrays are indices
    many = ck.ones(3, dtype=dtype, device=device)
    with pytest.raises(ValueError):
        bool(many)
    with pytest.raises(ValueError):
        bool(ck.ones(0, dtype=dtype, device=device))
    with pytest.raises(TypeError):
        int(many)
    with pytest.raises(TypeError):
        float(many)


def test_nan_inf_conversions(device):
    assert bool(ck.asarray(float("nan"), device=device)) is True
    with pytest.raises(ValueError):
        int(ck.asarray(float("nan"), device=device))
    with pytest.raises(OverflowError):
        int(ck.asarray(float("inf"), device=device))
    assert int(ck.asarray(-2.7, device=device)) == -2
    assert int(ck.asarray(2**64 - 1, dtype="uint64", device=device)) == 2**64 - 1


def test_len_iteration_contains(device):
    a = np.arange(12).reshape(3, 4)
    c = ck.asarray(a, device=device)
    assert len(c) == 3
    assert len(c.T) == 4
    rows = list(c)
    assert len(rows) == 3
    for r, w in zip(rows, a):
        assert isinstance(r, ck.ndarray)
        assert_same(r, w)
    assert [x.item() for x in c[1]] == [4, 5, 6, 7]
    assert [x.item() for x in c[::-1, 0]] == [8, 4, 0]
    assert 5 in c and 100 not in c
    assert len(ck.zeros((0, 3), device=device)) == 0
    assert list(ck.zeros((0, 3), device=device)) == []
    z = ck.asarray(1.0, device=device)
    with pytest.raises(TypeError):
        len(z)
    with pytest.raises(TypeError):
        iter(z)
    with pytest.raises(TypeError):
        hash(c)


def test_properties(device):
    a = np.zeros((3, 4, 5), dtype=np.float32)[::2, :, 1::2]
    c = ck.asarray(np.zeros((3, 4, 5), dtype=np.float32), device=device)[::2, :, 1::2]
    assert c.shape == a.shape
    assert c.ndim == a.ndim
    assert c.size == a.size
    assert c.itemsize == a.itemsize
    assert c.nbytes == a.nbytes
    assert c.strides == a.strides
    assert c.dtype == a.dtype
    assert c.device == ck.Device(device)
    assert c.flags.c_contiguous == a.flags.c_contiguous
    assert c.flags.f_contiguous == a.flags.f_contiguous
    assert c.flags.writeable
    cc = ck.zeros((2, 3), device=device)
    assert cc.flags.c_contiguous and not cc.flags.f_contiguous
    assert cc.T.flags.f_contiguous and not cc.T.flags.c_contiguous
    assert cc.base is None
    assert cc[1:].base is cc
    assert cc[1:][:, 1:].base is cc
    assert c.__array_namespace__() is ck


# ------------------------------------------------------------ repr / str

REPR_CASES = [
    ("float64", (5,)), ("float64", (2, 3)), ("float32", (3,)), ("float16", (2, 2)), ("int8", (4,)),
    ("uint8", (2, 3)), ("int64", (3,)), ("uint64", (2,)), ("int32", (2, 2, 2)), ("int16", ()),
    ("bool", (3,)), ("bool", ()), ("complex64", (2,)), ("complex128", (2, 2)), ("float64", ()),
    ("float64", (0,)), ("int32", (0, 3)), ("uint16", (4,)), ("uint32", (1, 1)), ("float64", (1500,)),
    ("int64", (40, 40)), ("float32", (3, 1, 2)),
]


@pytest.mark.parametrize("dtype,shape", REPR_CASES, ids=[f"{d}-{s}" for d, s in REPR_CASES])
def test_repr_str_match_numpy(device, dtype, shape):
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind == "b":
        a = (rng.random(n) < 0.5).reshape(shape)
    elif np.dtype(dtype).kind == "f":
        a = (rng.standard_normal(n) * 100).astype(dtype).reshape(shape)
    elif np.dtype(dtype).kind == "c":
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype).reshape(shape)
    else:
        a = rng.integers(0, 100, n).astype(dtype).reshape(shape)
    c = ck.asarray(a, device=device)
    assert repr(c) == repr(a)
    assert str(c) == str(a)
    if a.ndim:
        assert repr(c[..., ::-1]) == repr(a[..., ::-1])


@pytest.mark.parametrize("values", [[1.0, 2.0, 3.0], [0.1, 1e10], [1e-20, 1.0], [np.nan, np.inf, -np.inf, -0.0],
                                    [1.5, 2.25, -3.125], [123456789.0, 1.0], [1e300, 1e-300]], ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_repr_float_formatting(device, values, dtype):
    with np.errstate(all="ignore"):
        a = np.array(values).astype(dtype)
    c = ck.asarray(a, device=device)
    assert repr(c) == repr(a)
    assert str(c) == str(a)


def test_repr_dtypes_and_devices(device):
    assert repr(ck.float32) == repr(np.dtype("float32"))
    assert str(ck.int8) == "int8"
    assert repr(ck.Device("cpu")) == "Device('cpu')"
