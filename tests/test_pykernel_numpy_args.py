"""Python kernels launched with NumPy arrays (copied to a GPU and back around
the launch, as Numba's; on the CPU NumPy's memory is used as it is): the
results land in the arrays the kernel writes, arrays it only reads are left
as they were, on both devices, against NumPy; which parameters a kernel may
write (the dispatcher's _written, from the translator's typing)."""
import warnings

import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda
from cudakit.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


@pytest.fixture
def on_device(device):
    """NumPy arrays alone go to the default device, as in Numba: make it the test's."""
    prev = ck.get_default_device()
    ck.set_default_device(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cuda.KernelArgumentWarning)
        yield device
    ck.set_default_device(prev)


@cuda.jit
def axpy(x, y, a):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = a * x[i] + y[i]


@cuda.jit
def reads_only(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * y[i]


@cuda.jit
def writes_only(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v + i


@cuda.jit
def swap(a, b):
    i = cuda.grid(1)
    if i < a.size:
        t = a[i]
        a[i] = b[i]
        b[i] = t


@cuda.jit
def sometimes(x, out, n):
    i = cuda.grid(1)
    if i < n and x[i] > 100:     # no element is: the write never happens, yet it may
        out[i] = 0


@cuda.jit(device=True)
def _store(a, i, v):
    a[i] = v


@cuda.jit
def through_device_function(x, out):
    i = cuda.grid(1)
    if i < x.size:
        _store(out, i, x[i] + 1)


@cuda.jit
def through_a_view(x, out):
    i = cuda.grid(1)
    v = out[1:]
    if i < v.size:
        v[i] = x[i]


@cuda.jit
def counts(x, hist):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(hist, x[i], 1)


@cuda.jit
def draws(states, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float32(states, i)


@cuda.jit
def grid_2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] + 10 * i + j


def _types(*args):
    return [cuda.Dispatcher._typeof(ck.asarray(a, device="cpu") if isinstance(a, np.ndarray) else a) for a in args]


def test_written_parameters():
    f32 = np.zeros(4, np.float32)
    assert axpy._written(_types(f32, f32, 2.0)) == 0b010
    assert reads_only._written(_types(f32, f32, f32)) == 0b100
    assert writes_only._written(_types(f32, 1.0)) == 0b01
    assert swap._written(_types(f32, f32)) == 0b11
    assert sometimes._written(_types(f32, f32, 4)) == 0b010
    assert through_device_function._written(_types(f32, f32)) == 0b10
    assert through_a_view._written(_types(f32, f32)) == 0b10
    assert counts._written(_types(np.zeros(4, np.int32), np.zeros(4, np.int32))) == 0b10
    states = create_xoroshiro128p_states(4, 1, device="cpu")
    assert draws._written([cuda.Dispatcher._typeof(states), *_types(f32)]) == 0b11


def test_written_parameters_of_a_signature():
    k = cuda.jit("void(float64[:], float64[:], float64)")(axpy.py_func)
    assert k._written(_types(np.zeros(3), np.zeros(3), 1.0)) == 0b010


def test_written_one_read_one(on_device):
    x, y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    x0, want = x.copy(), 2.5 * x + 1
    axpy[4, 256](x, y, np.float32(2.5))
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(x, x0)


def test_read_only_arguments(on_device):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(300), rng.standard_normal(300)
    out = np.zeros(300)
    x0, y0 = x.copy(), y.copy()
    ro = y.copy()
    ro.flags.writeable = False
    reads_only[2, 256](x, ro, out)
    np.testing.assert_array_equal(out, x0 * y0)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(ro, y0)


def test_written_only(on_device):
    out = np.full(700, -1, np.int64)
    writes_only[3, 256](out, 5)
    np.testing.assert_array_equal(out, 5 + np.arange(700))


def test_both_written(on_device):
    a, b = np.arange(100, dtype=np.int32), -np.arange(100, dtype=np.int32)
    swap[1, 128](a, b)
    np.testing.assert_array_equal(a, -np.arange(100))
    np.testing.assert_array_equal(b, np.arange(100))


def test_a_write_that_may_happen(on_device):
    x, out = np.arange(50, dtype=np.float64), np.full(50, 7.0)
    sometimes[1, 64](x, out, 50)
    np.testing.assert_array_equal(out, np.full(50, 7.0))


def test_writes_through_device_functions_and_views(on_device):
    x = np.arange(20, dtype=np.float32)
    out = np.zeros(20, np.float32)
    through_device_function[1, 32](x, out)
    np.testing.assert_array_equal(out, x + 1)
    out = np.zeros(21, np.float32)
    through_a_view[1, 32](x, out)
    np.testing.assert_array_equal(out, np.concatenate([[0], x]))


def test_atomics_into_a_numpy_array(on_device):
    x = np.arange(1000, dtype=np.int32) % 10
    hist = np.zeros(10, np.int32)
    counts[4, 256](x, hist)
    np.testing.assert_array_equal(hist, np.bincount(x, minlength=10))


def test_mixed_with_device_arrays(on_device):
    x = ck.asarray(np.arange(64, dtype=np.float32), device=on_device)
    y = np.ones(64, np.float32)
    axpy[1, 64](x, y, 3.0)
    np.testing.assert_array_equal(y, 3 * np.arange(64, dtype=np.float32) + 1)


def test_not_contiguous_and_2d(on_device):
    base = np.arange(200, dtype=np.float64).reshape(10, 20)
    a = base[:, ::2]                           # strided: the dispatcher's path
    out = np.zeros((10, 10))
    grid_2d[(1, 1), (16, 16)](a, out)
    i, j = np.indices((10, 10))
    np.testing.assert_array_equal(out, a + 10 * i + j)
    out_f = np.zeros((10, 10), order="F")      # F-ordered: the dispatcher's path too
    grid_2d[(1, 1), (16, 16)](np.ascontiguousarray(a), out_f)
    np.testing.assert_array_equal(out_f, a + 10 * i + j)


def test_on_a_stream(on_device):
    s = cuda.stream()
    x, y = np.arange(5000, dtype=np.float32), np.zeros(5000, np.float32)
    for _ in range(3):
        axpy[20, 256, s](x, y, 1.0)
    s.synchronize()
    np.testing.assert_array_equal(y, 3 * x)


def test_repeated_launches_and_sizes(on_device):
    for n in (0, 1, 3, 4, 5, 255, 4096 + 3):
        x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        axpy[max(1, (n + 255) // 256), 256](x, y, -1.0)
        np.testing.assert_array_equal(y, 1 - np.arange(n, dtype=np.float32))


def test_a_warning_names_the_argument(device):
    if device == "cpu":
        pytest.skip("on the CPU NumPy's memory is used as it is: nothing is copied")
    prev = ck.get_default_device()
    ck.set_default_device(device)
    try:
        with pytest.warns(cuda.KernelArgumentWarning, match=r"argument 1 \('y'\)"):
            axpy[1, 32](np.zeros(8, np.float32), np.zeros(8, np.float32), 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", cuda.KernelArgumentWarning)
            y = np.zeros(8, np.float32)
            with pytest.raises(cuda.KernelArgumentWarning):
                axpy[1, 32](np.ones(8, np.float32), y, 1.0)
            np.testing.assert_array_equal(y, 0)     # refused before anything ran
    finally:
        ck.set_default_device(prev)
