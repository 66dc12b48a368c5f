"""ck.fft against numpy.fft: on the CPU the same pocketfft runs on zero-copy
views, so values, dtypes and shapes match NumPy's; on a GPU the transforms
raise NotImplementedError until cuFFT lands (a later issue)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same
from strategies import hsettings

SETTINGS = hsettings(25)
rng = np.random.default_rng(99)


def rand(shape, dtype="float64"):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-5, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(device, name, x, **kw):
    a = ck.asarray(x, device=device)
    f = getattr(ck.fft, name)
    if device != "cpu":
        with pytest.raises(NotImplementedError, match=f"^{name} on .* needs cuBLAS/cuSOLVER/cuFFT"):
            f(a, **kw)
        return
    got = f(a, **kw)
    np.testing.assert_array_equal(ck.asnumpy(a), x)  # input untouched
    want = getattr(np.fft, name)(x, **kw)
    assert_same(got, want, rtol=1e-4 if want.dtype in (np.float32, np.complex64) else 1e-10, atol=1e-6)


ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MANY_AXES = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
NEEDS_REAL = {"rfft", "ihfft", "rfft2", "rfftn"}


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("kw", [{}, {"n": 6}, {"n": 13}, {"axis": 0}, {"norm": "ortho"}, {"norm": "forward"},
                                {"norm": "backward", "axis": -2, "n": 4}])
def test_one_axis(device, name, kw):
    dtype = "float64" if name in NEEDS_REAL else "complex128"
    check(device, name, rand((5, 8), dtype), **kw)


@pytest.mark.parametrize("name", MANY_AXES)
@pytest.mark.parametrize("kw", [{}, {"s": (4, 6), "axes": (-2, -1)}, {"axes": (0, 2)}, {"norm": "ortho"},
                                {"s": (3, 5), "axes": (2, 1), "norm": "forward"}])
def test_many_axes(device, name, kw):
    dtype = "float64" if name in NEEDS_REAL else "complex128"
    check(device, name, rand((3, 4, 6), dtype), **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int32", "bool"])
@pytest.mark.parametrize("name", ["fft", "rfft", "ifft", "fftn"])
def test_dtypes(device, name, dtype):
    if dtype == "bool":
        x = rng.integers(0, 2, (4, 6)).astype(bool)
    else:
        x = rand((4, 6), dtype)
    if name == "rfft" and dtype.startswith("complex"):
        a = ck.asarray(x, device=device)
        with pytest.raises((TypeError, NotImplementedError)):
            ck.fft.rfft(a)
        return
    check(device, name, x)


def test_roundtrip(device):
    x = rand((4, 10))
    a = ck.asarray(x, device=device)
    if device != "cpu":
        with pytest.raises(NotImplementedError):
            ck.fft.irfft(ck.fft.rfft(a), n=10)
        return
    np.testing.assert_allclose(ck.asnumpy(ck.fft.irfft(ck.fft.rfft(a), n=10)), x, atol=1e-12)
    np.testing.assert_allclose(ck.asnumpy(ck.fft.ifftn(ck.fft.fftn(a))).real, x, atol=1e-12)


def test_strided_input(device):
    big = rand((8, 12), "complex128")
    a = ck.asarray(big, device=device)
    if device != "cpu":
        return
    assert_same(ck.fft.fft(a[::2, ::-3]), np.fft.fft(big[::2, ::-3]))
    assert_same(ck.fft.fft2(a.T), np.fft.fft2(big.T))


def test_out(device):
    x = rand(8, "complex128")
    a = ck.asarray(x, device=device)
    out = ck.empty(8, dtype=ck.complex128, device=device)
    if device != "cpu":
        with pytest.raises(NotImplementedError):
            ck.fft.fft(a, out=out)
        return
    assert ck.fft.fft(a, out=out) is out
    assert_same(out, np.fft.fft(x))


def test_array_like_input():
    assert_same(ck.fft.fft([1.0, 2.0, 3.0, 4.0]), np.fft.fft([1.0, 2.0, 3.0, 4.0]))


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d", [(1, 1.0), (8, 1.0), (9, 0.1), (10, 2)])
def test_freq(device, name, n, d):
    got = getattr(ck.fft, name)(n, d=d, device=device)
    assert got.device == ck.empty(1, device=device).device
    assert_same(got, getattr(np.fft, name)(n, d=d))
    assert_same(getattr(ck.fft, name)(n, d, device=device), getattr(np.fft, name)(n, d))


def test_freq_default_device():
    assert_same(ck.fft.fftfreq(5), np.fft.fftfreq(5))
    assert ck.fft.rfftfreq(5).device == ck.empty(1).device


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("shape,axes", [((7,), None), ((4, 5), None), ((4, 5), 0), ((4, 5, 6), (0, 2)), ((6,), -1)])
def test_shift(device, name, shape, axes):
    check(device, name, rand(shape), axes=axes)


@SETTINGS
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float64", "complex64", "complex128"]),
       norm=st.sampled_from([None, "backward", "ortho", "forward"]), data=st.data())
def test_fft_hypothesis(device, shape, dtype, norm, data):
    x = rand(tuple(shape), dtype)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.none() | st.integers(1, 9))
    check(device, "fft", x, n=n, axis=axis, norm=norm)
    check(device, "fftn", x, norm=norm)
    if dtype.startswith("float"):
        check(device, "rfft", x, n=n, axis=axis, norm=norm)
    else:
        if n is not None or shape[axis] > 1:  # irfft's default n is 2 * (m - 1)
            check(device, "irfft", x, n=n, axis=axis, norm=norm)
