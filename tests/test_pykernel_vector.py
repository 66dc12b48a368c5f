"""The vector path of coarsened Python kernels (src/codegen/pykernel/emit.c,
co_vec_plan): which kernels get it, that its CUDA C builds for the GPU on a
machine without one, and, on both devices, that kernels it applies to give
NumPy's values on views with offsets and strides, aliased arguments, sizes
around the group width and the launch's thread count."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import cuda
from conftest import assert_same

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

MARK = "/* the vector path"


def on(device, x):
    return ck.asarray(x.copy(), device=device)   # on the CPU asarray shares x's memory: keep NumPy's apart


def launch(k, n, *args, block=256):
    k[max(1, (n + block - 1) // block), block](*args)


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def plus_one(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 1


@cuda.jit
def write_then_read(a, out):
    # out and a the same array: the second line reads what the first wrote
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + 1
        out[i] = a[i] * 2


@cuda.jit
def keep_positive(a, out):
    i = cuda.grid(1)
    if i < a.size:
        if a[i] > 0:
            out[i] = a[i]


@cuda.jit
def even_copy(a, out):
    i = cuda.grid(1)
    if i < a.size and i % 2 == 0:
        out[i] = a[i]


@cuda.jit
def guarded_loop(x, n):
    i = cuda.grid(1)
    if i >= n:
        return
    for k in range(3):
        if k == 2 and i % 5 == 0:
            return
        x[i] += k + 1


# ------------------------------------------------------ which kernels

def _vector(kernel, sig):
    return MARK in kernel.inspect_cuda(sig)


def _ok(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit(device=True)
def _bump(a, i):
    a[i] += 1


@cuda.jit(device=True)
def _twice(v):
    return 2 * v


def test_the_vector_path_where_every_access_is_a_of_i():
    def uses_devfunc_of_values(x):
        i = cuda.grid(1)
        if i < len(x) and i < x.shape[0]:
            x[i] = _twice(x[i])

    def size_first(x, out):
        n = x.size
        i = cuda.grid(1)
        if i < n:
            out[i] = x[i] * 3

    assert _vector(cuda.jit(_ok), "void(float32[:])")
    assert _vector(cuda.jit(_ok), "void(float32[::1])")
    assert _vector(cuda.jit(uses_devfunc_of_values), "void(float32[:])")
    assert _vector(cuda.jit(size_first), "void(int8[:], float64[:])")
    assert _vector(keep_positive, "void(float16[:], float16[:])")
    for sig in ("void(int8[:])", "void(uint16[:])", "void(int64[:])", "void(float64[:])", "void(complex64[:])",
                "void(bool[:])"):
        assert _vector(cuda.jit(_ok), sig), sig
    src = cuda.jit(_ok).inspect_cuda("void(float32[:])")
    assert "ck_pyk_vload<float, 4>" in src and "ck_pyk_vstore<float, 4>" in src
    assert "ck_pyk_vload<int8_t, 16>" in cuda.jit(_ok).inspect_cuda("void(int8[:])")
    # an array only written is not loaded: its lanes written are stored
    src = plus_one.inspect_cuda("void(float32[:], float32[:])")
    assert "ck_pyk_vload<float, 4>(ck_l_a" in src and "ck_pyk_vstore_lanes<float, 4>(ck_p_out" in src
    assert "ck_pyk_vload<float, 4>(ck_l_out" not in src


def test_no_vector_path_where_it_could_differ():
    def neighbour(x):
        i = cuda.grid(1)
        if i + 1 < x.size:
            x[i + 1] += 1

    def two_d(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i, 0] += 1

    def row_view(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            r = a[i]
            r[0] = 1

    def other_index(x):
        i = cuda.grid(1)
        j = i
        if j < x.size:
            x[j] += 1

    def to_devfunc(x):
        i = cuda.grid(1)
        if i < x.size:
            _bump(x, i)

    def atomic(x):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(x, i, 1)

    def reassigned(x):
        i = cuda.grid(1)
        i = i * 2
        if i < x.size:
            x[i] += 1

    def augmented(x):
        i = cuda.grid(1)
        if i < x.size - 1:
            i += 1
            x[i] += 1

    def loop_index(x):
        i = cuda.grid(1)
        for i in range(2):
            x[i] = 1

    def read_before(x):
        x[0] = 1
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    def sliced(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i:i + 1] = 1

    def constant_index(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += x[0]

    def negative_index(x):
        i = cuda.grid(1)
        if i < x.size:
            x[-1 - i] += 1

    def strides_read(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = x.strides[0]

    def alias_local(x):
        i = cuda.grid(1)
        y = x
        if i < y.size:
            y[i] += 1

    def iterated(x, out):
        i = cuda.grid(1)
        if i < out.size:
            s = 0.0
            for v in x:
                s += v
            out[i] = s

    sig = "void(float32[:])"
    for body in (neighbour, other_index, to_devfunc, atomic, reassigned, augmented, loop_index, read_before, sliced,
                 constant_index, negative_index, strides_read, alias_local):
        assert not _vector(cuda.jit(body), sig), body.__name__
    for body in (two_d, row_view):
        assert not _vector(cuda.jit(body), "void(float32[:, :])"), body.__name__
    assert not _vector(cuda.jit(iterated), "void(float32[:], float32[:])")
    assert not _vector(cuda.jit(_ok), "void(complex128[:])")             # a group of one
    assert not _vector(plus_one, "void(int8[:], complex128[:])")   # 256 bytes of lanes
    assert not _vector(cuda.jit(coarsen=False)(_ok), sig)
    assert not _vector(cuda.jit(debug=True)(_ok), sig)


def test_cudakit_pyk_vector_0_leaves_it_out(monkeypatch):
    monkeypatch.setenv("CUDAKIT_PYK_VECTOR", "0")     # read when a kernel is first translated
    src = cuda.jit(_ok).inspect_cuda("void(float32[:])")
    assert MARK not in src and "ck_nthreads" in src   # still coarsened


# ------------------------------------------- the GPU's compiler, on any machine

@pytest.mark.parametrize("kernel, sig", [
    (add_one, "void(float32[:])"), (add_one, "void(float64[:])"), (add_one, "void(int8[:])"),
    (add_one, "void(float16[:])"), (add_one, "void(complex64[:])"), (add_one, "void(uint16[:])"),
    (add_one, "void(bool[:])"), (add_one, "void(int64[::1])"),
    (plus_one, "void(int8[:], float64[:])"), (plus_one, "void(float16[:], float32[:])"),
    (keep_positive, "void(float32[:], float32[:])"), (keep_positive, "void(int8[:], int8[:])"),
    (write_then_read, "void(float64[:], float64[:])"), (guarded_loop, "void(int32[:], int64)"),
])
def test_vector_path_compiles_for_the_gpu(kernel, sig):
    src = kernel.inspect_cuda(sig, full=True)
    assert MARK in src
    try:
        ck._core._kernel_compile(src, "vector.cu", 90, kernel._compile_options())
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")


# ---------------------------------------------------- both devices

DTYPES = ["float32", "float64", "int8", "float16", "uint16", "int64", "complex64"]


@given(n=st.integers(0, 1000), off=st.integers(0, 17), step=st.integers(1, 3), dtype=st.sampled_from(DTYPES))
@SETTINGS
def test_add_one_on_views(device, n, off, step, dtype):
    # offsets leave the data unaligned, steps make it strided: the scalar loop's cases
    base = (np.arange(off + n * step + 5) % 11).astype(dtype)
    x = on(device, base)
    view = x[off:off + n * step:step]
    launch(add_one, n, view)
    want = base.copy()
    want[off:off + n * step:step] += 1
    assert_same(x, want)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 15, 16, 17, 255, 256, 257, 1023, 1024, 1025, 4099, (1 << 20) + 3,
                               132 * 2048 * 4 + 5])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64"])
def test_add_one_sizes_around_the_group_and_the_wave(device, n, dtype):
    # 132 x 2048 threads are the H200's wave: past it a thread does several groups
    h = (np.arange(n) % 13).astype(dtype)
    x = on(device, h)
    launch(add_one, n, x)
    assert_same(x, h + np.ones(1, dtype))


@pytest.mark.parametrize("threads", [1, 64, 100, 999])
def test_a_launch_of_fewer_threads_than_elements(device, threads):
    h = np.arange(1000, dtype=np.float32)
    x = on(device, h)
    add_one[1, threads](x)
    want = h.copy()
    want[:threads] += 1
    assert_same(x, want)


def test_arrays_of_different_lengths(device):
    a = np.arange(1, 301, dtype=np.float32)
    out = on(device, np.full(500, -3, np.float32))
    launch(plus_one, 500, on(device, a), out)
    want = np.full(500, -3, np.float32)
    want[:300] = a + 1
    assert_same(out, want)


@given(n=st.integers(0, 600), off=st.integers(0, 9))
@SETTINGS
def test_the_same_array_twice(device, n, off):
    h = (np.arange(n + off) % 7).astype(np.float32)
    x = on(device, h)
    v = x[off:]
    launch(plus_one, n, v, v)
    want = h.copy()
    want[off:] += 1
    assert_same(x, want)
    x = on(device, h)
    v = x[off:]
    launch(write_then_read, n, v, v)
    want = h.copy()
    want[off:] = (want[off:] + 1) * 2
    assert_same(x, want)


def test_write_then_read_of_two_arrays(device):
    h = np.arange(777, dtype=np.float64)
    out = on(device, np.zeros(777))
    launch(write_then_read, 777, on(device, h), out)
    assert_same(out, h * 2)


@pytest.mark.parametrize("n", [0, 1, 8, 255, 1000, 4097])
def test_partly_overlapping_arrays(device, n):
    # out = base[1:], a = base[:-1]: the even indices read the even places
    # and write the odd ones, so no two indices share an element
    h = np.arange(n + 1, dtype=np.float32) * 3
    base = on(device, h)
    launch(even_copy, n, base[:n], base[1:])
    want = h.copy()
    for i in range(0, n, 2):
        want[i + 1] = h[i]
    assert_same(base, want)


@pytest.mark.parametrize("dtype", ["float32", "int8", "float16", "float64", "int16"])
def test_conditional_store_leaves_the_rest(device, dtype):
    rng = np.random.default_rng(5)
    n = 1003
    h = rng.integers(-5, 6, n).astype(dtype)
    out = on(device, np.full(n, 9, dtype))
    launch(keep_positive, n, on(device, h), out)
    assert_same(out, np.where(h > 0, h, np.array(9, dtype)))
    # the same array as both: it keeps its values
    x = on(device, h)
    launch(keep_positive, n, x, x)
    assert_same(x, h)


@pytest.mark.parametrize("ta, tb", [("int8", "float64"), ("float16", "float32"), ("uint8", "int64"),
                                    ("float64", "float16"), ("bool", "int32")])
def test_mixed_dtypes(device, ta, tb):
    n = 1029
    h = (np.arange(n) % 5).astype(ta)
    out = on(device, np.zeros(n, tb))
    launch(plus_one, n, on(device, h), out)
    assert_same(out, (h + 1).astype(tb))


def test_early_return_and_a_loop(device):
    n = 2051
    h = np.arange(n + 9, dtype=np.int32)
    x = on(device, h)
    launch(guarded_loop, n + 9, x, n)
    idx = np.arange(n + 9)
    want = h + np.where(idx >= n, 0, np.where(idx % 5 == 0, 3, 6)).astype(np.int32)
    assert_same(x, want)
