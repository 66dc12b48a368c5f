"""ck.fft against numpy.fft: on the CPU the same pocketfft runs on zero-copy
views, so values, dtypes and shapes match NumPy's; on a GPU cuFFT runs, and
its results must match NumPy's within a tolerance per precision.  On the CPU
each check also runs the device path's glue with NumPy standing in for cuFFT
(tests/device_emulation.py)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same
from device_emulation import emulated
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


def close(got, want):
    """assert_same with a tolerance for FFT round-off (relative to the
    largest magnitude: small terms of a transform carry its absolute error)."""
    want = np.asarray(want)
    single = want.dtype in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    assert_same(got, want, rtol=1e-4 if single else 1e-10, atol=(2e-5 if single else 1e-11) * scale)


def check(device, name, x, **kw):
    a = ck.asarray(x, device=device)
    f = getattr(ck.fft, name)
    want = getattr(np.fft, name)(x, **kw)
    got = f(a, **kw)
    np.testing.assert_array_equal(ck.asnumpy(a), x)  # input untouched
    close(got, want)
    if device == "cpu":
        with emulated(ck.fft):
            got = f(a, **kw)
        np.testing.assert_array_equal(ck.asnumpy(a), x)
        close(got, want)


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
        with pytest.raises(TypeError):
            ck.fft.rfft(a)
        with emulated(ck.fft), pytest.raises(TypeError):
            ck.fft.rfft(a)
        return
    check(device, name, x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_roundtrip(device, dtype):
    x = rand((4, 10), dtype)
    a = ck.asarray(x, device=device)
    tol = 1e-5 if dtype == "float32" else 1e-12
    back = ck.fft.irfft(ck.fft.rfft(a), n=10)
    assert back.dtype == a.dtype
    np.testing.assert_allclose(ck.asnumpy(back), x, atol=tol)
    np.testing.assert_allclose(ck.asnumpy(ck.fft.ifftn(ck.fft.fftn(a))).real, x, atol=tol)
    np.testing.assert_allclose(ck.asnumpy(ck.fft.irfftn(ck.fft.rfftn(a), s=x.shape, axes=(0, 1))), x, atol=tol)


def test_strided_input(device):
    big = rand((8, 12), "complex128")
    a = ck.asarray(big, device=device)
    close(ck.fft.fft(a[::2, ::-3]), np.fft.fft(big[::2, ::-3]))
    close(ck.fft.fft2(a.T), np.fft.fft2(big.T))
    close(ck.fft.rfft(a.real[:, ::-2]), np.fft.rfft(big.real[:, ::-2]))


@pytest.mark.parametrize("name,shape,kw", [
    ("fftn", (2, 3, 4, 5), {}),                       # four axes: successive transforms
    ("fftn", (2, 3, 4, 5), {"axes": (1, 2, 3)}),      # a 3-D plan
    ("ifftn", (3, 4, 5), {"axes": (2, 0)}),           # not the trailing axes
    ("fftn", (3, 4, 5), {"axes": (2, 2)}),            # an axis twice
    ("rfftn", (2, 3, 4, 5), {"axes": (1, 2, 3), "s": (4, 2, 7)}),
    ("rfftn", (3, 4, 5), {"axes": (2, 1)}),           # the real axis is not last
    ("irfftn", (2, 3, 4, 5), {"axes": (1, 2, 3)}),
    ("irfftn", (3, 4, 5), {"axes": (2, 0), "s": (6, 3)}),
    ("fft2", (3, 1, 8), {"norm": "ortho"}),
    ("irfft2", (4, 5), {"s": (3, 9), "norm": "forward"}),
])
def test_nd_layouts(device, name, shape, kw):
    dtype = "float64" if name.startswith("rfft") else "complex128"
    check(device, name, rand(shape, dtype), **kw)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "irfftn"])
def test_single_precision(device, name):
    dtype = "float32" if name in NEEDS_REAL else "complex64"
    check(device, name, rand((6, 16), dtype))
    check(device, name, rand((6, 16), dtype), norm="ortho")


def test_large_1d(device):
    x = rand(1 << 16, "float32")
    check(device, "rfft", x)
    check(device, "fft", x.astype(np.complex64), n=3 * 5 * 7 * 11)


@pytest.mark.parametrize("name", ["fft", "irfft", "fftn"])
def test_bad_arguments(device, name):
    a = ck.asarray(rand((4, 4), "complex128"), device=device)
    f = getattr(ck.fft, name)
    with pytest.raises(ValueError):
        f(a, norm="sideways")
    if name != "fftn":
        with pytest.raises(ValueError):
            f(a, n=0)
        with pytest.raises((ValueError, IndexError)):
            f(a, axis=2)


def test_out(device):
    x = rand(8, "complex128")
    a = ck.asarray(x, device=device)
    out = ck.empty(8, dtype=ck.complex128, device=device)
    assert ck.fft.fft(a, out=out) is out
    close(out, np.fft.fft(x))
    if device == "cpu":   # the device path's glue, with NumPy standing in for cuFFT
        out2 = ck.empty(8, dtype=ck.complex128, device=device)
        with emulated(ck.fft):
            assert ck.fft.fft(a, out=out2) is out2
        close(out2, np.fft.fft(x))


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


def test_many_plans(device):
    """More shapes than the plan cache holds: evicted plans are remade."""
    for round_ in range(2):
        for n in range(3, 24):
            x = rand((2, n), "complex64" if n % 2 else "complex128")
            check(device, "fft", x)
            if n % 3 == 0:
                check(device, "irfft", x, n=2 * n - 1)


def test_on_a_stream(device):
    if device == "cpu":
        pytest.skip("streams are a GPU matter")
    x = rand((64, 256), "float32")
    a = ck.asarray(x, device=device)
    s = ck.cuda.Stream()
    with s:
        y = ck.fft.rfft(a)
        z = ck.fft.irfft(y, n=256)
    s.synchronize()
    close(y, np.fft.rfft(x))
    np.testing.assert_allclose(ck.asnumpy(z), x, atol=1e-5)
