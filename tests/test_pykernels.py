"""Kernels written in Python (cudakit.cuda.jit, Numba's CUDA Python) on both
devices, against NumPy: the language's constructs, NumPy's promotion, math
functions, device functions, shared and local memory, atomics, warp
functions, errors that name the kernel and line."""
import math
import cmath

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import cuda
from conftest import assert_same

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def on(device, x):
    return ck.asarray(x, device=device)


# ------------------------------------------------------------------ basics

@cuda.jit
def add_one(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "uint16", "float16", "complex64", "bool"])
def test_add_one(device, dtype):
    h = (np.arange(1000) % 7).astype(dtype)
    x = on(device, h)
    out = ck.zeros_like(x)
    add_one[4, 256](x, out)
    assert_same(out, (h + 1).astype(dtype))


def test_add_one_numpy_arrays(device):
    h = np.arange(100, dtype=np.float32)
    out = np.zeros_like(h)
    if device == "cpu":
        add_one[1, 128](on(device, h), on(device, out))   # views of the same memory
        np.testing.assert_array_equal(out, h + 1)
        return
    prev = ck.get_default_device()
    ck.set_default_device(device)       # NumPy arrays alone go to the default device, as in Numba
    try:
        with pytest.warns(cuda.KernelArgumentWarning, match="copied"):
            add_one[1, 128](h, out)
    finally:
        ck.set_default_device(prev)
    np.testing.assert_array_equal(out, h + 1)


def test_numpy_arrays_on_the_default_device():
    h = np.arange(50, dtype=np.float64)
    out = np.zeros_like(h)
    add_one[1, 64](h, out)          # no cudakit array: the default device (the CPU in the tests)
    np.testing.assert_array_equal(out, h + 1)


def test_launch_configurations(device):
    @cuda.jit
    def where(out):
        x, y = cuda.grid(2)
        w, h = cuda.gridsize(2)
        if x < out.shape[0] and y < out.shape[1]:
            out[x, y] = x * 1000 + y + (w * 0 + h * 0)

    out = ck.zeros((37, 21), dtype=ck.int64, device=device)
    where[(5, 3), (8, 8)](out)
    i, j = np.meshgrid(np.arange(37), np.arange(21), indexing="ij")
    assert_same(out, i * 1000 + j)
    out2 = ck.zeros(300, dtype=ck.float32, device=device)
    add_one.forall(300)(ck.zeros(300, dtype=ck.float32, device=device), out2)
    assert_same(out2, np.ones(300, np.float32))
    add_one[2, 256, 0, 0](ck.zeros(300, dtype=ck.float32, device=device), out2)
    s = cuda.Stream(device=device)
    add_one[2, 256, s](ck.zeros(300, dtype=ck.float32, device=device), out2)
    s.synchronize()


def test_indices_threadidx(device):
    @cuda.jit
    def ids(out):
        t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
        b = cuda.blockIdx.x + cuda.blockIdx.y * cuda.gridDim.x
        n = cuda.blockDim.x * cuda.blockDim.y
        out[b * n + t] = b * 100 + t

    out = ck.zeros(2 * 3 * 4 * 5, dtype=ck.int32, device=device)
    ids[(2, 3), (4, 5)](out)
    b, t = np.divmod(np.arange(120), 20)
    assert_same(out, (b * 100 + t).astype(np.int32))


# --------------------------------------------------- arithmetic, promotion

BINOPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


_SRC = {
    "add": "a[i] + b[i]", "sub": "a[i] - b[i]", "mul": "a[i] * b[i]", "truediv": "a[i] / b[i]",
    "floordiv": "a[i] // b[i]", "mod": "a[i] % b[i]", "and": "a[i] & b[i]", "or": "a[i] | b[i]",
    "xor": "a[i] ^ b[i]", "lt": "a[i] < b[i]", "le": "a[i] <= b[i]", "eq": "a[i] == b[i]", "ne": "a[i] != b[i]",
    "gt": "a[i] > b[i]", "ge": "a[i] >= b[i]", "pow": "a[i] ** b[i]", "lshift": "a[i] << b[i]",
    "rshift": "a[i] >> b[i]",
}


def _write_source(tmp_path_factory, name, text):
    p = tmp_path_factory.mktemp("pyk") / f"{name}.py"
    p.write_text(text)
    return p


NUMERIC = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64",
           "complex64", "complex128", "bool"]


def _values(dtype, n, seed, nonzero=False):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -50
        v = rng.integers(lo, 50, n).astype(dt)
    elif dt.kind == "f":
        v = (rng.standard_normal(n) * 10).astype(dt)
    else:
        v = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    if nonzero:
        v = np.where(v == 0, np.ones(1, dt), v)
    return v


def _np_binop(name, a, b):
    with np.errstate(all="ignore"):
        return {"pow": lambda: a ** b, "lshift": lambda: a << b, "rshift": lambda: a >> b}.get(name, lambda: BINOPS[name](a, b))()


@pytest.fixture(scope="module")
def pyk_module(tmp_path_factory):
    """A module file of binary-op kernels (inspect reads a kernel's source from its file)."""
    import importlib.util
    text = "from cudakit import cuda\n\n"
    for name, expr in _SRC.items():
        text += (f"@cuda.jit\ndef k_{name}(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n"
                 f"        out[i] = {expr}\n\n\n")
    p = _write_source(tmp_path_factory, "binops", text)
    spec = importlib.util.spec_from_file_location("pyk_binops", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@SETTINGS
@given(st.sampled_from(list(_SRC)), st.sampled_from(NUMERIC), st.sampled_from(NUMERIC))
def test_binary_ops_promote_as_numpy(device, pyk_module, name, ta, tb):
    a = _values(ta, 64, 1)
    b = _values(tb, 64, 2, nonzero=name in ("floordiv", "mod", "truediv"))
    if name in ("lshift", "rshift"):
        b = (np.abs(b.astype(np.int64)) % 8).astype(b.dtype) if np.dtype(tb).kind in "iub" else b
    if name == "pow" and np.dtype(tb).kind in "iu":
        b = (np.abs(b.astype(np.int64)) % 4).astype(b.dtype)
    try:
        want = _np_binop(name, a, b)
    except TypeError:
        want = None
    k = getattr(pyk_module, f"k_{name}")
    if want is None:
        with pytest.raises(cuda.TypingError):
            k[1, 64](on(device, a), on(device, b), ck.zeros(64, device=device))
        return
    out = ck.zeros(64, dtype=want.dtype, device=device)
    k[1, 64](on(device, a), on(device, b), out)
    rtol = {np.dtype("float16"): 2e-3, np.dtype("float32"): 1e-5, np.dtype("complex64"): 1e-5}.get(want.dtype, 1e-12)
    if name == "pow" and want.dtype.kind in "fc":
        rtol = max(rtol, 1e-5 if want.dtype.itemsize >= 8 else 2e-3)
    assert_same(out, want, rtol=rtol)


def test_python_numbers_are_weak(device):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * 2 + 1.5     # int literal and float literal: float32 stays float32

    x = on(device, np.arange(10, dtype=np.float32))
    out = ck.zeros(10, dtype=ck.float32, device=device)
    k[1, 32](x, out)
    assert_same(out, np.arange(10, dtype=np.float32) * 2 + np.float32(1.5))
    src = list(k.inspect_cuda().values())[0]
    assert "double" not in src.split("translated from Python")[1]


def test_accumulator_unifies_types(device):
    @cuda.jit
    def total(x, out):
        s = 0                       # an int64 that becomes float64 with the first float32 added
        for i in range(x.size):
            s += x[i]
        out[0] = s

    x = on(device, np.arange(100, dtype=np.float32) * 0.25)
    out = ck.zeros(1, dtype=ck.float64, device=device)
    total[1, 1](x, out)
    assert_same(out, np.array([np.arange(100, dtype=np.float32).astype(np.float64).sum() * 0.25]))


def test_unary_and_integer_semantics(device):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            v = a[i]
            out[i, 0] = -v
            out[i, 1] = ~v
            out[i, 2] = abs(v)
            out[i, 3] = v // 3
            out[i, 4] = v % 3
            out[i, 5] = -v // 3
            out[i, 6] = (v * 7) % -4
            out[i, 7] = not v

    h = np.arange(-20, 20, dtype=np.int32)
    out = ck.zeros((40, 8), dtype=ck.int64, device=device)
    k[1, 64](on(device, h), out)
    want = np.stack([-h, ~h, np.abs(h), h // 3, h % 3, -h // 3, (h * 7) % -4, (h == 0)], axis=1).astype(np.int64)
    assert_same(out, want)


# ------------------------------------------------------------- control flow

def test_control_flow(device):
    @cuda.jit
    def collatz(n, steps):
        i = cuda.grid(1)
        if i >= n.size:
            return
        v = n[i]
        c = 0
        while v != 1:
            if v % 2 == 0:
                v //= 2
            elif v % 3 == 0 and v > 100:
                v = v // 3
            else:
                v = 3 * v + 1
            c += 1
            if c > 1000:
                break
        steps[i] = c

    def ref(v):
        c = 0
        while v != 1:
            if v % 2 == 0:
                v //= 2
            elif v % 3 == 0 and v > 100:
                v //= 3
            else:
                v = 3 * v + 1
            c += 1
            if c > 1000:
                break
        return c

    h = np.arange(1, 200, dtype=np.int64)
    out = ck.zeros(h.size, dtype=ck.int64, device=device)
    collatz[1, 256](on(device, h), out)
    assert_same(out, np.array([ref(int(v)) for v in h]))


def test_loops(device):
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i != 0:
            return
        s = 0
        for j in range(10):
            if j == 3:
                continue
            if j == 8:
                break
            s += j
        out[0] = s
        t = 0
        for j in range(20, 2, -3):
            t += j
        out[1] = t
        u = 0
        for j in range(5):
            for q in range(j):
                u += q
        else:
            u += 1000
        out[2] = u
        w = 0
        for j in range(5):
            if j == 2:
                break
        else:
            w = 1
        out[3] = w
        j = 0
        while j < 10:
            j += 1
        else:
            j += 100
        out[4] = j
        total = 0
        for v in (1, 2, 3):
            total += v * v
        out[5] = total
        n = 7
        for j in range(n):
            n -= 1            # the range was made once
        out[6] = n

    out = ck.zeros(8, dtype=ck.int64, device=device)
    k[1, 1](out)
    want = [sum(j for j in range(8) if j != 3), sum(range(20, 2, -3)),
            sum(q for j in range(5) for q in range(j)) + 1000, 0, 110, 14, 0, 0]
    assert_same(out, np.array(want))


def test_iterating_arrays_enumerate_zip(device):
    @cuda.jit
    def k(a, b, out):
        if cuda.grid(1) != 0:
            return
        s = 0.0
        for v in a:
            s += v
        out[0] = s
        t = 0.0
        for i, v in enumerate(a):
            t += i * v
        out[1] = t
        u = 0.0
        for x, y in zip(a, b):
            u += x * y
        out[2] = u

    a = np.arange(6, dtype=np.float64)
    b = np.arange(6, dtype=np.float64)[::-1].copy()
    out = ck.zeros(3, device=device)
    k[1, 1](on(device, a), on(device, b), out)
    assert_same(out, np.array([a.sum(), (np.arange(6) * a).sum(), (a * b).sum()]))


def test_conditional_expressions_and_boolops(device):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            out[i, 0] = 1.5 if v > 2 else v
            out[i, 1] = (v > 1 and v < 4) or v == 7
            out[i, 2] = v and 10        # Python's: the first false operand, else the last
            out[i, 3] = v or 10
            out[i, 4] = 0 < v < 5

    h = np.arange(10, dtype=np.int64)
    out = ck.zeros((10, 5), dtype=ck.float64, device=device)
    k[1, 16](on(device, h), out)
    want = np.stack([np.where(h > 2, 1.5, h), ((h > 1) & (h < 4)) | (h == 7), np.where(h != 0, 10, h),
                     np.where(h != 0, h, 10), (h > 0) & (h < 5)], axis=1).astype(np.float64)
    assert_same(out, want)


def test_tuples(device):
    @cuda.jit
    def k(a, out):
        t = (1, 2.5, 3)
        x, y, z = t
        p = a.shape
        q = t + (4,)
        out[0] = x + y + z
        out[1] = p[0] * p[1]
        out[2] = len(q)
        out[3] = q[-1]
        out[4] = a.ndim
        out[5] = a.strides[1]
        s, r = divmod(17, 5)
        out[6] = s * 10 + r
        m = min(3, 1, 2) + max((4, 9, 2))
        out[7] = m

    out = ck.zeros(8, device=device)
    k[1, 1](ck.zeros((3, 4), dtype=ck.float32, device=device), out)
    assert_same(out, np.array([6.5, 12, 4, 4, 2, 4, 32, 10.0]))


# ------------------------------------------------------------- math, ufuncs

MATH_1 = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "exp", "expm1",
          "log", "log2", "log10", "log1p", "sqrt", "fabs", "floor", "ceil", "trunc", "erf", "erfc", "gamma", "lgamma",
          "degrees", "radians"]


def test_math_and_numpy_functions(device):
    from _pyk_kernels import math_kernel, np_kernel
    h = np.linspace(0.1, 0.9, 17)
    for dtype in (np.float32, np.float64):
        x = on(device, h.astype(dtype))
        out = ck.zeros((17, len(MATH_1)), dtype=dtype, device=device)
        math_kernel[1, 32](x, out)
        g = np.asarray(ck.asnumpy(out))
        for k, f in enumerate(MATH_1):
            want = np.array([getattr(math, f)(float(v)) for v in h.astype(dtype)], dtype=dtype)
            if f in ("floor", "ceil", "trunc"):
                want = np.array([getattr(math, f)(float(v * dtype(10))) for v in h.astype(dtype)], dtype=dtype)
            np.testing.assert_allclose(g[:, k], want, rtol=2e-6 if dtype == np.float32 else 1e-13, err_msg=f)
        out2 = ck.zeros((17, 4), dtype=dtype, device=device)
        np_kernel[1, 32](x, out2)
        hx = h.astype(dtype)
        want = np.stack([np.sin(hx), np.exp(hx), np.arctan2(hx, hx + 1), np.hypot(hx, 2 * hx)], axis=1)
        assert_same(out2, want.astype(dtype), rtol=2e-6 if dtype == np.float32 else 1e-13)


def test_math_of_integers_is_float64(device):
    from _pyk_kernels import math_of_int
    out = ck.zeros(3, dtype=ck.float64, device=device)
    math_of_int[1, 1](on(device, np.array([2, 3, 4], dtype=np.int32)), out)
    assert_same(out, np.array([math.sqrt(2), math.exp(3), math.floor(4.5)]))


def test_cmath(device):
    from _pyk_kernels import cmath_kernel
    h = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
    out = ck.zeros((3, 5), dtype=ck.complex128, device=device)
    cmath_kernel[1, 4](on(device, h), out)
    want = np.stack([[cmath.sqrt(v), cmath.exp(v), cmath.log(v), cmath.sin(v), complex(cmath.phase(v))] for v in h])
    assert_same(out, want)


# --------------------------------------------------------- device functions

def test_device_functions_and_recursion(device):
    from _pyk_kernels import use_device_functions
    out = ck.zeros(4, dtype=ck.float64, device=device)
    use_device_functions[1, 1](out, 6)
    assert_same(out, np.array([720.0, 8.0, 13.0, 2.5]))


# ------------------------------------------------------- shared, local memory

def test_block_reduction_shared_memory(device):
    from _pyk_kernels import block_sum
    h = np.arange(10000, dtype=np.float32) % 13
    x = on(device, h)
    partial = ck.zeros(40, dtype=ck.float32, device=device)
    block_sum[40, 256](x, partial)
    np.testing.assert_allclose(float(ck.sum(partial)), float(h.sum()), rtol=1e-6)


def test_tiled_matmul(device):
    from _pyk_kernels import matmul_tiled, TPB
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((50, 37)).astype(np.float32), rng.standard_normal((37, 45)).astype(np.float32)
    c = ck.zeros((50, 45), dtype=ck.float32, device=device)
    grid = (-(-50 // TPB), -(-45 // TPB))
    matmul_tiled[grid, (TPB, TPB)](on(device, a), on(device, b), c)
    assert_same(c, a @ b, rtol=1e-4, atol=1e-4)


def test_dynamic_shared_and_local_arrays(device):
    from _pyk_kernels import reverse_block, local_sort
    h = np.arange(64, dtype=np.int32)
    out = ck.zeros(64, dtype=ck.int32, device=device)
    reverse_block[1, 64, 0, 64 * 4](on(device, h), out)
    assert_same(out, h[::-1])
    data = np.random.default_rng(0).integers(0, 100, (8, 5)).astype(np.int64)
    out2 = ck.zeros((8, 5), dtype=ck.int64, device=device)
    local_sort[1, 8](on(device, data), out2)
    assert_same(out2, np.sort(data, axis=1))


# --------------------------------------------------------------- atomics

def test_histogram_atomics(device):
    from _pyk_kernels import histogram
    h = np.random.default_rng(1).integers(0, 16, 5000).astype(np.int32)
    bins = ck.zeros(16, dtype=ck.int32, device=device)
    histogram[20, 256](on(device, h), bins)
    assert_same(bins, np.bincount(h, minlength=16).astype(np.int32))


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_atomic_ops_return_old_values(device, dtype):
    from _pyk_kernels import atomics_all
    dt = np.dtype(dtype)
    cells = ck.asarray(np.array([10, 10, 10, 10, 10, 10, 10, 10], dtype=dt), device=device)
    old = ck.zeros(8, dtype=dt, device=device)
    atomics_all[1, 1](cells, old, dt.type(3), dt.type(12))
    assert_same(old, np.array([10] * 7 + [0], dtype=dt))
    assert_same(cells, np.array([13, 7, 10, 10, 12, 3, 12, 10], dtype=dt))
    if dt.kind == "f":
        return
    from _pyk_kernels import atomics_int, atomics_inc_dec
    cells = ck.asarray(np.full(8, 10, dtype=dt), device=device)
    atomics_int[1, 1](cells, old, dt.type(3), dt.type(12))
    assert_same(old, np.full(8, 10, dt))
    assert_same(cells, np.array([10 & 3, 10 | 3, 10 ^ 3, 12, 10, 3, 11, 3], dtype=dt))
    if dt.kind == "u":
        cells = ck.asarray(np.full(4, 10, dtype=dt), device=device)
        old = ck.zeros(4, dtype=dt, device=device)
        atomics_inc_dec[1, 1](cells, old, dt.type(100))
        assert_same(old, np.full(4, 10, dt))
        assert_same(cells, np.array([11, 0, 9, 5], dtype=dt))


def test_atomics_reject_what_cuda_lacks(device):
    from _pyk_kernels import atomics_int
    c = ck.zeros(8, dtype=ck.float32, device=device)
    with pytest.raises(cuda.TypingError, match="not supported for float32"):
        atomics_int[1, 1](c, c, np.float32(1), np.float32(2))


# ------------------------------------------------------------------ warps

def test_warp_functions(device):
    from _pyk_kernels import warp_ops
    out = ck.zeros((64, 6), dtype=ck.int64, device=device)
    warp_ops[1, 64](out)
    g = ck.asnumpy(out)
    lane = np.arange(64) % 32
    np.testing.assert_array_equal(g[:, 0], np.repeat([sum(range(32)), sum(range(32, 64))], 32))   # shuffle sum
    np.testing.assert_array_equal(g[:, 1], np.full(64, 0x55555555))                                 # ballot of even
    np.testing.assert_array_equal(g[:, 2], np.zeros(64))                                             # not all even
    np.testing.assert_array_equal(g[:, 3], np.ones(64))                                              # any even
    np.testing.assert_array_equal(g[:, 4], (lane + 1) % 32)                                          # shfl from lane+1
    np.testing.assert_array_equal(g[:, 5], lane)                                                     # laneid


def test_more_warp_functions(device):
    from _pyk_kernels import warp_more
    h = (np.arange(64) % 3).astype(np.int32)
    out = ck.zeros((64, 13), dtype=ck.int64, device=device)
    warp_more[1, 64](on(device, h), out)
    g = ck.asnumpy(out)
    lane = np.arange(64) % 32
    masks = [sum(1 << j for j in range(32) if h[i - i % 32 + j] == h[i]) for i in range(64)]
    np.testing.assert_array_equal(g[:, 0], np.zeros(64))
    np.testing.assert_array_equal(g[:, 1], np.ones(64))
    np.testing.assert_array_equal(g[:, 2], masks)
    np.testing.assert_array_equal(g[:, 3], np.full(64, 0xffffffff))
    np.testing.assert_array_equal(g[:, 4], np.ones(64))
    np.testing.assert_array_equal(g[:, 5], np.full(64, 0xffffffff))
    np.testing.assert_array_equal(g[:, 6], (1 << lane) - 1)
    np.testing.assert_array_equal(g[:, 7], np.where(lane > 0, lane - 1, lane))
    np.testing.assert_array_equal(g[:, 8], lane ^ 3)
    np.testing.assert_array_equal(g[:, 9], np.full(64, (h > 1).sum()))
    np.testing.assert_array_equal(g[:, 10], np.ones(64))
    np.testing.assert_array_equal(g[:, 11], np.zeros(64))
    np.testing.assert_array_equal(g[:, 12], np.ones(64))


def test_kernels_without_barriers_run_as_plain_loops(device, capfd, monkeypatch):
    """The translator's prelude names no warp function: a kernel without
    barriers runs on the CPU as loops over a block's threads, not fibers, and
    one whose barriers are its own runs in regions between them."""
    if device != "cpu":
        pytest.skip("the CPU runtime's choice")
    import subprocess, sys, os
    code = ("import sys; sys.path.insert(0, %r); import cudakit as ck; import _pyk_kernels as m\n"
            "x = ck.zeros(64, dtype=ck.int32); m.histogram[1, 64](x, x)\n"
            "m.block_sum[1, 256](ck.zeros(256, dtype=ck.float32), ck.zeros(1, dtype=ck.float32))\n"
            "m.warp_ops[1, 32](ck.zeros((32, 6), dtype=ck.int64))\n")
    env = dict(os.environ, CUDAKIT_DEBUG="kernels", CUDAKIT_DEVICE="cpu")
    env.pop("CUDAKIT_CPU_FIBERS", None)
    r = subprocess.run([sys.executable, "-c", code % os.path.dirname(__file__)], env=env, capture_output=True,
                       text=True, timeout=300)
    lines = [ln for ln in r.stderr.splitlines() if "CPU kernel module: compiled" in ln or "from the disk" in ln]
    assert r.returncode == 0, r.stderr
    # histogram has no barrier; block_sum's barriers become regions; warp functions need fibers
    assert len(lines) == 3, r.stderr
    assert "plain loops" in lines[0] and "plain loops" in lines[1] and "fibers" in lines[2], r.stderr


@pytest.mark.parametrize("block", [(64, 1), (8, 8), (5, 3)])
def test_barriers_in_control_flow(device, block):
    from _pyk_kernels import barrier_shapes
    bx, by = block
    nt = bx * by
    nb = 3
    h = np.random.default_rng(4).integers(0, 50, nb * nt).astype(np.int64)
    out = ck.zeros((nb * nt, 6), dtype=ck.int64, device=device)
    barrier_shapes[nb, block](on(device, h), out, 1)
    want = np.zeros((nb * nt, 6), np.int64)
    for b in range(nb):
        xs = h[b * nt:(b + 1) * nt]
        sh = xs.copy()
        total = sh.sum()
        sh = np.roll(sh, -1) * 2
        loc1 = sh.copy()
        stride, steps = nt // 2, 0
        while stride > 0:
            sh[:stride] = sh[:stride] + sh[stride:2 * stride]
            stride //= 2
            steps += 1
        red = sh[0]
        t = np.arange(nt)
        acc = np.zeros(nt, np.int64)
        for r in range(3):
            shr = t * r
            if r == 1:
                continue
            acc += shr[(t + r) % nt]
            if r == 2:
                break
        cnt = (xs % 2 == 0).sum()
        rows = slice(b * nt, (b + 1) * nt)
        want[rows, 0] = total
        want[rows, 1] = loc1
        want[rows, 2] = red
        want[rows, 3] = acc
        want[rows, 4] = cnt * 100 + 10 * int((xs >= 0).all()) + int((xs > 1000).any())
        want[rows, 5] = t + steps * 1000
        want[b * nt + nt - 2:(b + 1) * nt, :] = 0
        want[b * nt + nt - 2:(b + 1) * nt, 0] = -7
    assert_same(out, want)


def test_bit_functions(device):
    from _pyk_kernels import bits
    h = np.array([1, 2, 3, 255, 1 << 20, 0x80000000 - 1], dtype=np.uint32)
    out = ck.zeros((6, 4), dtype=ck.int64, device=device)
    bits[1, 8](on(device, h), out)
    want = np.array([[bin(v).count("1"), int(f"{v:032b}"[::-1], 2), 32 - v.bit_length(), (v & -v).bit_length()]
                     for v in map(int, h)])
    assert_same(out, want)


# --------------------------------------------------------------- debug=True

def test_debug_bounds_errors_name_kernel_line_thread_and_touch_nothing(device):
    from _pyk_kernels import dbg_out_of_bounds
    x = ck.zeros(8, device=device)
    with pytest.raises(IndexError) as info:
        dbg_out_of_bounds[1, 8](x, 5)
    msg = str(info.value)
    assert "dbg_out_of_bounds" in msg and "_pyk_kernels.py" in msg and "line" in msg
    assert "out of bounds for axis of size 8" in msg and "'x'" in msg and "thread (" in msg
    # the threads within bounds stored, the others stopped before storing
    assert_same(x, np.array([0, 0, 0, 0, 0, 1, 1, 1.0]))
    dbg_out_of_bounds[1, 8](x, -8)        # negative indices count from the end; the kernel is usable again
    assert_same(x, np.ones(8))


def test_debug_raise_and_assert(device):
    from _pyk_kernels import dbg_raise
    x = ck.zeros(8, device=device)
    with pytest.raises(ValueError, match="three is not allowed.*dbg_raise.*line"):
        dbg_raise[1, 8](x)
    dbg_raise[1, 3](x)                    # no thread 3, x[0] == 0: nothing raised
    x[0] = 1
    with pytest.raises(AssertionError, match="x\\[0\\] must be zero"):
        dbg_raise[1, 3](x)


def test_debug_errors_in_device_functions(device):
    from _pyk_kernels import dbg_through_device_function
    a = on(device, np.arange(10.0))
    out = ck.zeros(5, device=device)
    dbg_through_device_function[1, 8](a, out)
    assert_same(out, np.arange(0, 10.0, 2))
    out = ck.zeros(6, device=device)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis of size 10"):
        dbg_through_device_function[1, 8](a, out)


# -------------------------------------------------------------- errors

def test_typing_error_names_kernel_file_line_and_column():
    from _pyk_kernels import bad_types
    with pytest.raises(cuda.TypingError) as info:
        bad_types[1, 1](ck.zeros(4))
    msg = str(info.value)
    assert "bad_types" in msg and "_pyk_kernels.py" in msg
    assert "line" in msg and "^" in msg
    assert "y = x + a" in msg


@pytest.mark.parametrize("name, what", [("uses_try", "try statements"), ("uses_with", "with statements"),
                                        ("uses_comprehension", "list comprehensions"), ("uses_dict", "dicts")])
def test_unsupported_constructs_say_so(name, what):
    import _pyk_kernels
    k = getattr(_pyk_kernels, name)
    with pytest.raises(cuda.UnsupportedError, match=what):
        k[1, 1](ck.zeros(4))


def test_kernels_read_from_any_layout_of_source(device):
    from _pyk_kernels import odd_layout, Holder
    x = ck.zeros(1, device=device)
    odd_layout[1, 1](x)
    assert_same(x, np.array([42.0]))
    Holder.method_kernel[1, 1](x)
    assert_same(x, np.array([7.0]))


def test_calling_a_kernel_needs_a_configuration():
    with pytest.raises(ValueError, match=r"\[griddim, blockdim\]"):
        add_one(ck.zeros(2), ck.zeros(2))


def test_intrinsics_outside_kernels():
    with pytest.raises(RuntimeError, match="inside a kernel"):
        cuda.grid(1)
    with pytest.raises(RuntimeError, match="inside a kernel"):
        cuda.threadIdx.x


# --------------------------------------------------------------- signatures

def test_eager_signatures(device):
    @cuda.jit("void(float32[:], float32[:])")
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * 2

    x = on(device, np.arange(8, dtype=np.float32))
    out = ck.zeros(8, dtype=ck.float32, device=device)
    k[1, 8](x, out)
    assert_same(out, np.arange(8, dtype=np.float32) * 2)
    with pytest.raises(TypeError, match="no declared signature"):
        k[1, 8](on(device, np.arange(8.0)), out)

    @cuda.jit([cuda.void(cuda.int32[::1], cuda.int32), "void(float64[:], float64)"])
    def scale(x, f):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= f

    xi = on(device, np.arange(5, dtype=np.int32))
    scale[1, 8](xi, 3)               # a Python int into the int32 parameter
    assert_same(xi, np.arange(5, dtype=np.int32) * 3)
    xf = on(device, np.arange(5.0))
    scale[1, 8](xf, 0.5)
    assert_same(xf, np.arange(5.0) * 0.5)
    assert len(scale.signatures) == 2


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_scalar_arguments(device, dtype):
    """NumPy scalars are typed as their dtype; the second of a type is read
    without a buffer (a table learned from the first): same values."""
    @cuda.jit
    def store(out, v):
        out[0] = v

    dt = np.dtype(dtype)
    for value in (_values(dtype, 3, 7), _values(dtype, 3, 8)):
        for v in value:
            out = ck.zeros(1, dtype=dt, device=device)
            store[1, 1](out, v)            # v is a NumPy scalar of dt
            assert_same(out, np.array([v], dtype=dt))
    assert store._nspecialisations == 1


def test_specialisations_are_cached(device):
    @cuda.jit
    def k(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    for dt in ("float32", "float32", "int64", "float32"):
        k[1, 8](ck.zeros(4, dtype=dt, device=device))
    assert k._nspecialisations == 2


# ------------------------------------------- grid synchronisation (cooperative launches)

@pytest.mark.parametrize("grid, block", [(6, 64), (3, 5), (1, 32)])
def test_grid_sync_reads_other_blocks_writes(device, grid, block):
    from _pyk_kernels import grid_neighbour
    n = grid * block
    x, out = ck.zeros(n, dtype=ck.int64, device=device), ck.zeros(n, dtype=ck.int64, device=device)
    for _ in range(3):                 # repeated launches reuse the barrier's state
        out[...] = 0
        grid_neighbour[grid, block](x, out)
        i = np.arange(n)
        assert_same(out, ((i + block) % n) * 3 + 1)


def test_grid_sync_on_two_streams_at_once(device):
    """Each stream has its own barrier state: launches on two streams may overlap."""
    from _pyk_kernels import grid_neighbour
    streams = [cuda.Stream(device=device) for _ in range(2)]
    n = 8 * 128
    pairs = [(ck.zeros(n, dtype=ck.int64, device=device), ck.zeros(n, dtype=ck.int64, device=device))
             for _ in range(4)]
    cuda.synchronize(device)           # the zeros, made on the current stream, before the other streams' work
    for k, (x, out) in enumerate(pairs):
        grid_neighbour[8, 128, streams[k % 2]](x, out)
    for st in streams:
        st.synchronize()
    for x, out in pairs:
        assert_same(out, ((np.arange(n) + 128) % n) * 3 + 1)


@pytest.mark.parametrize("grid", [1, 5, 8])
def test_grid_sync_two_phase_reduction(device, grid):
    from _pyk_kernels import grid_reduce
    h = np.random.default_rng(grid).random(10007)
    partial, out = ck.zeros(grid, device=device), ck.zeros(1, device=device)
    for _ in range(2):
        grid_reduce[grid, 128](on(device, h), partial, out)
        np.testing.assert_allclose(ck.asnumpy(out), [h.sum()], rtol=1e-12)


def _smooth(a, niter, skip, stop):
    a = a.copy()
    steps = 0
    for it in range(niter):
        if it == skip:
            continue
        p = np.concatenate([a[:1], a, a[-1:]])
        a = (p[:-2] + a + p[2:]) / 3
        steps += 1
        if it == stop:
            break
    for _ in range(2):
        a = np.roll(a, -1) + steps
    return a


@pytest.mark.parametrize("niter, skip, stop", [(5, 1, 3), (4, -1, -1), (0, -1, -1)])
def test_grid_sync_in_loops_with_break_and_continue(device, niter, skip, stop):
    from _pyk_kernels import grid_smooth
    h = np.random.default_rng(7).random(300)
    a, b = on(device, h.copy()), ck.zeros(300, device=device)
    grid_smooth[4, 80](a, b, niter, skip, stop)       # 320 threads: the last 20 have no element
    assert_same(a, _smooth(h, niter, skip, stop))


@pytest.mark.parametrize("n", [1, 3, 8])
def test_grid_sync_around_block_barriers(device, n):
    from _pyk_kernels import grid_rounds
    nb = 4
    h = np.arange(nb * 32, dtype=np.int64) * 7 % 23
    x, total = h.copy(), np.zeros(nb * 32, np.int64)
    for r in range(min(n, 6)):
        sh = x.reshape(nb, 32) + r
        s = 16
        while s > 2:
            sh[:, :s] += sh[:, s:2 * s]
            s //= 2
        total += np.repeat(sh[:, 0], 32)
        if n > 1:
            x = np.roll(x, -32) + total
    out = ck.zeros(nb * 32, dtype=ck.int64, device=device)
    grid_rounds[nb, 32](on(device, h.copy()), ck.zeros(nb * 32, dtype=ck.int64, device=device), out, n)
    assert_same(out, total)


def test_grid_sync_with_syncthreads_and_dynamic_shared(device):
    from _pyk_kernels import grid_dyn_shared
    gx, gy, bx, by = 3, 2, 4, 8
    nb, nt = gx * gy, bx * by
    x, out = ck.zeros(nb * nt, dtype=ck.int32, device=device), ck.zeros(nb * nt, dtype=ck.int32, device=device)
    grid_dyn_shared[(gx, gy), (bx, by), 0, nt * 4](x, out)
    b, t = np.divmod(np.arange(nb * nt), nt)
    assert_same(out, ((b * 100 + nt - 1 - t) * 1000 + (b + 1) % nb).astype(np.int32))


def test_grid_sync_debug_bounds_error(device):
    from _pyk_kernels import grid_debug
    x, out = ck.zeros(64, device=device), ck.zeros(64, device=device)
    with pytest.raises(IndexError, match=r"grid_debug.*line"):
        grid_debug[2, 32](x, out, 1)
    grid_debug[2, 32](x, out, 0)       # the next launch starts its barrier afresh
    assert_same(out, np.ones(64))


def test_grid_too_large_for_a_cooperative_launch(device):
    from _pyk_kernels import grid_neighbour
    x = ck.zeros(1, dtype=ck.int64, device=device)
    grid_neighbour[1, 64](ck.zeros(64, dtype=ck.int64, device=device), ck.zeros(64, dtype=ck.int64, device=device))
    limit = grid_neighbour.max_cooperative_grid_blocks(64, device=device)
    assert limit >= 1
    assert grid_neighbour.max_cooperative_grid_blocks((8, 8), device=device) == limit
    assert grid_neighbour.max_cooperative_grid_blocks(1024, device=device) <= limit
    n = (limit + 1) * 64
    x = ck.zeros(n, dtype=ck.int64, device=device)
    with pytest.raises(ValueError, match=rf"grid_neighbour.*{limit + 1} blocks.*exceeds the {limit} blocks"):
        grid_neighbour[limit + 1, 64](x, ck.zeros(n, dtype=ck.int64, device=device))
    n = limit * 64                     # the largest grid runs
    x, out = ck.zeros(n, dtype=ck.int64, device=device), ck.zeros(n, dtype=ck.int64, device=device)
    grid_neighbour[limit, 64](x, out)
    assert_same(out, ((np.arange(n) + 64) % n) * 3 + 1)


def test_max_cooperative_grid_blocks_needs_a_compiled_kernel():
    @cuda.jit
    def k(x):
        cuda.cg.this_grid().sync()

    with pytest.raises(ValueError, match="not compiled yet"):
        k.max_cooperative_grid_blocks(32)
    sig = cuda.jit("void(float32[:])")(k.py_func)
    assert sig.max_cooperative_grid_blocks(32, device="cpu") == 1024


def test_grid_sync_in_a_device_function(device):
    from _pyk_kernels import grid_via_device_function
    x, out = ck.zeros(96, dtype=ck.int64, device=device), ck.zeros(96, dtype=ck.int64, device=device)
    if device == "cpu":
        with pytest.raises(NotImplementedError, match="device function"):
            grid_via_device_function[3, 32](x, out)
        return
    grid_via_device_function[3, 32](x, out)
    assert_same(out, (np.arange(96) + 1) % 96)


# ------------------------------------------------------------------ print

def test_print_from_a_kernel(capfd):
    @cuda.jit
    def k(x):
        i = cuda.grid(1)
        if i == 0:
            print("value", x[0], 3, True)

    k[1, 1](ck.asarray(np.array([1.5]), device="cpu"))
    out = capfd.readouterr().out
    assert "value 1.500000 3 True" in out


# ------------------------------------------- the GPU's compiler, on any machine

NVRTC_CASES = [
    ("math_kernel", "void(float32[:], float32[:, :])"), ("math_kernel", "void(float64[:], float64[:, :])"),
    ("np_kernel", "void(float32[:], float32[:, :])"), ("math_of_int", "void(int32[:], float64[:])"),
    ("cmath_kernel", "void(complex128[:], complex128[:, :])"), ("use_device_functions", "void(float64[:], int64)"),
    ("block_sum", "void(float32[:], float32[:])"), ("matmul_tiled", "void(float32[:, :], float32[:, :], float32[:, :])"),
    ("reverse_block", "void(int32[:], int32[:])"), ("local_sort", "void(int64[:, :], int64[:, :])"),
    ("histogram", "void(int32[:], int32[:])"), ("atomics_all", "void(float32[:], float32[:], float32, float32)"),
    ("atomics_all", "void(float64[:], float64[:], float64, float64)"),
    ("atomics_int", "void(int64[:], int64[:], int64, int64)"), ("atomics_int", "void(uint32[:], uint32[:], uint32, uint32)"),
    ("atomics_inc_dec", "void(uint64[:], uint64[:], uint64)"), ("warp_ops", "void(int64[:, :])"),
    ("bits", "void(uint32[:], int64[:, :])"), ("warp_more", "void(int32[:], int64[:, :])"),
    ("barrier_shapes", "void(int64[:], int64[:, :], int64)"),
    ("dbg_out_of_bounds", "void(float64[:], int64)"), ("dbg_raise", "void(float64[:])"),
    ("dbg_through_device_function", "void(float64[:], float64[:])"),
    ("grid_neighbour", "void(int64[:], int64[:])"), ("grid_reduce", "void(float64[:], float64[:], float64[:])"),
    ("grid_smooth", "void(float64[:], float64[:], int64, int64, int64)"),
    ("grid_dyn_shared", "void(int32[:], int32[:])"), ("grid_debug", "void(float64[:], float64[:], int64)"),
    ("grid_via_device_function", "void(int64[:], int64[:])"),
    ("grid_rounds", "void(int64[:], int64[:], int64[:], int64)"),
]


def test_the_formulas_only_where_a_kernel_names_them():
    """scalar_ops.h (the op table's per-element formulas) is in a translation only when its code uses them."""
    def copy(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2 * x[i] + 1

    def floors(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] // 3

    def cpow(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] ** (0.5 + 1j)

    lean = cuda.jit(copy).inspect_cuda("void(float32[:], float32[:])", full=True)
    assert "#define CK_NO_SCALAR_OPS" in lean and "scalar_ops.h - what each" not in lean
    for f, sig in [(floors, "void(int32[:], int32[:])"), (cpow, "void(complex128[:], complex128[:])")]:
        src = cuda.jit(f).inspect_cuda(sig, full=True)
        assert "scalar_ops.h - what each" in src and "#define CK_NO_SCALAR_OPS" not in src, f.__name__


@pytest.mark.parametrize("name, sig", NVRTC_CASES)
def test_translations_compile_for_the_gpu(name, sig):
    """What the translator writes for a GPU builds with NVRTC (for sm_90) on a machine without one."""
    import _pyk_kernels
    k = getattr(_pyk_kernels, name)
    src = k.inspect_cuda(sig, full=True)
    try:
        ck._core._kernel_compile(src, f"{name}.cu", 90, k._compile_options())
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")


@pytest.mark.parametrize("name", sorted(_SRC))
@pytest.mark.parametrize("ta, tb", [("int8", "uint64"), ("float16", "int32"), ("complex64", "float64"),
                                    ("bool", "bool"), ("uint32", "float16")])
def test_binary_op_translations_compile_for_the_gpu(pyk_module, name, ta, tb):
    a, b = np.zeros(1, ta), np.zeros(1, tb)
    try:
        want = _np_binop(name, a, b).dtype
    except TypeError:
        return
    k = getattr(pyk_module, f"k_{name}")
    src = k.inspect_cuda(f"void({ta}[:], {tb}[:], {want.name}[:])", full=True)
    try:
        ck._core._kernel_compile(src, f"{name}.cu", 90, k._compile_options())
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")


# ------------------------------------------------------------ thread coarsening

@cuda.jit
def _co_mark(hits):
    i = cuda.grid(1)
    cuda.atomic.add(hits, i, 1)   # no bounds test: every index the launch names exactly once


@cuda.jit
def _co_guarded(hits, seen, n):
    i = cuda.grid(1)
    if i >= n:
        return            # ends this index, not the grid-stride loop
    for k in range(3):
        if k == 1 and i % 3 == 0:
            return
        cuda.atomic.add(hits, i, 1)
    seen[i] = i


@pytest.mark.parametrize("n, block", [(1, 1), (31, 32), (1000, 96), (4099, 256), ((1 << 20) + 3, 256)])
def test_coarsened_kernels_do_every_index_once(device, n, block):
    # on a GPU a launch of more blocks than a wave of the device runs as a
    # wave, each thread looping over several indices (the last size is past
    # the H200's wave, 132 x 2048 threads); on the CPU one index a thread
    grid = (n + block - 1) // block
    total = grid * block
    hits = ck.zeros(total, dtype=ck.int32, device=device)
    _co_mark[grid, block](hits)
    assert_same(hits, np.ones(total, np.int32))
    hits = ck.zeros(n, dtype=ck.int32, device=device)
    seen = ck.full(n, -1, dtype=ck.int64, device=device)
    _co_guarded[grid, block](hits, seen, n)
    idx = np.arange(n)
    assert_same(hits, np.where(idx % 3 == 0, 1, 3).astype(np.int32))
    assert_same(seen, np.where(idx % 3 == 0, -1, idx))
    # a 2-d launch of a cuda.grid(1) kernel is not coarsened: its y threads
    # repeat x's, as they did
    hits = ck.zeros(total, dtype=ck.int32, device=device)
    _co_mark[(grid, 2), block](hits)
    assert_same(hits, np.full(total, 2, np.int32))


def _coarsened(kernel, sig):
    return "ck_nthreads" in kernel.inspect_cuda(sig)


def test_coarsening_only_where_the_threads_differ_by_grid_1():
    def body_tid(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = cuda.threadIdx.x

    def body_sync(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 1
        cuda.syncthreads()

    def body_shared(a):
        s = cuda.shared.array(32, dtype=np.float32)
        i = cuda.grid(1)
        s[0] = 1
        if i < a.size:
            a[i] = s[0]

    def body_stride(a):
        for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
            a[i] = 1

    def body_lane(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = cuda.laneid

    @cuda.jit(device=True)
    def where_am_i():
        return cuda.blockIdx.x

    def body_devfunc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = where_am_i()

    @cuda.jit(device=True)
    def twice(x):
        return 2 * x

    def body_ok(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = twice(a[i])

    sig = "void(float32[:])"
    assert _coarsened(cuda.jit(body_ok), sig)
    assert not _coarsened(cuda.jit(coarsen=False)(body_ok), sig)
    assert not _coarsened(cuda.jit(debug=True)(body_ok), sig)
    for body in (body_tid, body_sync, body_shared, body_stride, body_lane, body_devfunc):
        assert not _coarsened(cuda.jit(body), sig), body.__name__


def test_coarsened_translation_compiles_for_the_gpu():
    src = _co_guarded.inspect_cuda("void(int32[:], int64[:], int64)", full=True)
    assert "goto ck_next_;" in src and "ck_gi += ck_gs" in src and "ck_pyk_prefetch_l2" in src
    try:
        ck._core._kernel_compile(src, "co_guarded.cu", 90)
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")
