"""User kernels in CUDA C (issue 6): RawKernel, RawModule, SourceModule,
ElementwiseKernel, ReductionKernel and fuse, on every device.

Tests that launch a kernel take `kdev`: the `device` fixture, skipped on the
CPU until the CPU target is in (ck._core._cpu_kernels_available()), so that
they turn on by themselves once it is.  Argument checks and launch
configuration errors come before any compile, so they run everywhere now.
Every generated kernel kind is compiled through NVRTC at the end (no GPU
needed)."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same

CPU_KERNELS = ck._core._cpu_kernels_available()


@pytest.fixture
def kdev(device):
    if device == "cpu" and not CPU_KERNELS:
        pytest.skip("CUDA C kernels on the CPU are not available in this build yet")
    return device


def arr(x, device, dtype=None):
    return ck.asarray(np.asarray(x, dtype=dtype), device=device)


ADD = r'''
extern "C" __global__ void add(const float *x, const float *y, float *z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = x[i] + y[i];
}
'''


# ------------------------------------------------------------------ RawKernel

def test_rawkernel_add(kdev):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, np.float32)
    k = ck.RawKernel(ADD, "add")
    z = ck.zeros(n, dtype=ck.float32, device=kdev)
    k(((n + 127) // 128,), (128,), (arr(x, kdev), arr(y, kdev), z, n))
    assert_same(z, x + y)
    # the same with keywords, an int grid/block and launch_n's default configuration
    z2 = ck.zeros(n, dtype=ck.float32, device=kdev)
    k(grid=8, block=128, args=(arr(x, kdev), arr(y, kdev), z2, n), shared_mem=0, stream=None)
    assert_same(z2, x + y)
    z3 = ck.zeros(n, dtype=ck.float32, device=kdev)
    k.launch_n(n, (arr(x, kdev), arr(y, kdev), z3, n))
    assert_same(z3, x + y)


def test_rawkernel_scalar_rules(kdev):
    src = r'''
    extern "C" __global__ void put(double *out, long long a, double b, bool c, int d, float e)
    { out[0] = (double)a; out[1] = b; out[2] = c ? 1.0 : 0.0; out[3] = d; out[4] = e; }
    '''
    k = ck.RawKernel(src, "put")
    out = ck.zeros(5, dtype=ck.float64, device=kdev)
    k(1, 1, (out, 2**40, 2.5, True, np.int32(-7), 3))
    assert_same(out, np.array([2.0**40, 2.5, 1.0, -7.0, 3.0]))
    # unknown signature (a template instance): the documented defaults
    src2 = r'''
    template <typename T> __global__ void put2(double *out, long long a, double b) { out[0] = (double)a + b; }
    '''
    m = ck.RawModule(code=src2, name_expressions=["put2<float>"])
    k2 = m.get_function("put2<float>")
    k2(1, 1, (out, 5, 0.25))
    assert float(ck.asnumpy(out)[0]) == 5.25


def test_rawkernel_2d_grid_and_shared(kdev):
    src = r'''
    extern "C" __global__ void transpose(const float *in, float *out, int rows, int cols)
    {
        __shared__ float tile[16][17];
        int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
        if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
        __syncthreads();
        x = blockIdx.y * 16 + threadIdx.x; y = blockIdx.x * 16 + threadIdx.y;
        if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
    }
    '''
    a = np.random.default_rng(0).random((37, 50), dtype=np.float32)
    k = ck.RawKernel(src, "transpose")
    out = ck.zeros((50, 37), dtype=ck.float32, device=kdev)
    k(((50 + 15) // 16, (37 + 15) // 16), (16, 16), (arr(a, kdev), out, 37, 50))
    assert_same(out, a.T)
    assert k.attributes(kdev)["shared_size_bytes"] >= 16 * 17 * 4 or kdev == "cpu"


def test_rawkernel_dynamic_shared_and_reduction(kdev):
    src = r'''
    extern "C" __global__ void block_sum(const float *x, float *out, int n)
    {
        extern __shared__ float s[];
        int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
        s[t] = i < n ? x[i] : 0.0f;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (t < k) s[t] += s[t + k];
            __syncthreads();
        }
        if (t == 0) atomicAdd(out, s[0]);
    }
    '''
    x = np.arange(3000, dtype=np.float32) % 7
    k = ck.RawKernel(src, "block_sum")
    out = ck.zeros(1, dtype=ck.float32, device=kdev)
    k((3000 + 255) // 256, 256, (arr(x, kdev), out, 3000), shared_mem=256 * 4)
    assert_same(out, np.array([x.sum()], np.float32))


def test_rawkernel_attributes(kdev):
    k = ck.RawKernel(ADD, "add")
    at = k.attributes(kdev)
    for key in ("max_threads_per_block", "num_regs", "shared_size_bytes", "const_size_bytes", "local_size_bytes",
                "max_dynamic_shared_size_bytes"):
        assert isinstance(at[key], int) and at[key] >= 0
    assert k.max_block_size(kdev) == at["max_threads_per_block"] >= 64
    default = k.attributes()   # the properties read the default device's
    for key in ("max_threads_per_block", "num_regs", "shared_size_bytes", "const_size_bytes", "local_size_bytes",
                "ptx_version", "binary_version", "max_dynamic_shared_size_bytes"):
        assert getattr(k, key) == default[key], key
    min_grid, block = k.suggested_block_size(device=kdev)
    assert min_grid >= 1 and 1 <= block <= at["max_threads_per_block"]
    k._set_max_dynamic_shared(kdev, 1024)
    assert k.attributes(kdev)["max_dynamic_shared_size_bytes"] == 1024
    with pytest.raises(ValueError):
        k._set_max_dynamic_shared(kdev, -1)


def test_rawmodule_name_expressions_and_globals(kdev):
    src = r'''
    template <typename T> __global__ void scale(T *x, T a, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= a;
    }
    extern "C" { __device__ float table[4]; }
    extern "C" __global__ void use_table(float *out) { out[threadIdx.x] = table[threadIdx.x] * 2.0f; }
    '''
    m = ck.RawModule(code=src, name_expressions=["scale<float>", "scale<double>"])
    xf = arr(np.arange(5), kdev, np.float32)
    xd = arr(np.arange(5), kdev, np.float64)
    m.get_function("scale<float>")(1, 32, (xf, np.float32(3), 5))
    m.get_function("scale<double>")(1, 32, (xd, np.float64(0.5), 5))
    assert_same(xf, np.arange(5, dtype=np.float32) * 3)
    assert_same(xd, np.arange(5, dtype=np.float64) * 0.5)
    assert m.get_function("scale<float>") is m.get_function("scale<float>")
    g = m.get_global("table", device=kdev)
    assert g.shape == (4,) and g.dtype == ck.float32
    g[...] = ck.asarray(np.array([1, 2, 3, 4], np.float32), device=kdev)
    out = ck.zeros(4, dtype=ck.float32, device=kdev)
    m.get_function("use_table")(1, 4, (out,))
    assert_same(out, np.array([2, 4, 6, 8], np.float32))
    with pytest.raises(ValueError, match="no kernel"):
        m.get_function("missing")(1, 1, ())


def test_sourcemodule_pycuda_style(kdev):
    mod = ck.SourceModule(r'''
    __global__ void multiply_them(float *dest, float *a, float *b)
    {
        const int i = threadIdx.x;
        dest[i] = a[i] * b[i];
    }
    ''')
    f = mod.get_function("multiply_them")
    rng = np.random.default_rng(1)
    a = rng.standard_normal(400).astype(np.float32)
    b = rng.standard_normal(400).astype(np.float32)
    dest = ck.zeros(400, dtype=ck.float32, device=kdev)
    f(dest, arr(a, kdev), arr(b, kdev), block=(400, 1, 1), grid=(1, 1))
    assert_same(dest, a * b)


AXPY_T = r'''
__global__ void axpy(T *y, const T *x, T a, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''
_CTYPE = {np.float32: "float", np.float64: "double", np.int32: "int", np.int64: "long long"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 700), dtype=st.sampled_from(sorted(_CTYPE, key=lambda t: t.__name__)),
       step=st.sampled_from([1, 2, -1]), use_stream=st.booleans())
def test_sourcemodule_in_out_inout(kdev, n, dtype, step, use_stream):
    """PyCUDA's drv.In/Out/InOut: host arrays copied to the launch's device
    (that of the call's cudakit array) and back; strided and reversed host
    views too, and on a stream."""
    mod = ck.SourceModule("typedef %s T;\n" % _CTYPE[dtype] + AXPY_T)
    f = mod.get_function("axpy")
    rng = np.random.default_rng(n)
    # whole numbers: a * x + y is exact, whether or not the compiler fuses it into an FMA
    x_host = rng.integers(-1000, 1000, n * abs(step)).astype(dtype)[::step]
    y0 = rng.integers(-1000, 1000, n * abs(step)).astype(dtype)[::step]
    a = dtype(3)
    want = a * x_host + y0
    block = 128
    grid = ((n + block - 1) // block, 1)
    stream = ck.cuda.Stream(device=kdev) if use_stream else None
    # InOut: y read and written back; In: x copied in only
    y = y0.copy()
    x_before = x_host.copy()
    f(ck.InOut(y), ck.In(x_host), a, np.int32(n), block=(block, 1, 1), grid=grid, stream=stream)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(x_host, x_before)
    # a cudakit array fixes the device; Out copies the kernel's writes back
    y_dev = arr(np.ascontiguousarray(y0), kdev)   # a raw kernel sees a pointer
    out = np.zeros(n, dtype)
    f(y_dev, ck.In(x_host), a, np.int32(n), block=(block, 1, 1), grid=grid, stream=stream)
    f2 = ck.SourceModule("typedef %s T;\n" % _CTYPE[dtype] + r'''
    __global__ void copy(T *dst, const T *src, int n)
    {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) dst[i] = src[i];
    }''').get_function("copy")
    f2(ck.Out(out), y_dev, np.int32(n), block=(block, 1, 1), grid=grid, stream=stream)
    np.testing.assert_array_equal(out, want)
    assert y_dev.device == ck.asarray(out, device=kdev).device


def test_sourcemodule_host_arrays_need_a_handler():
    mod = ck.SourceModule(AXPY_T.replace("T ", "float ").replace("T *", "float *"))
    f = mod.get_function("axpy")
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"argument 0 is a NumPy array; pass it as cudakit.In\(a\)"):
        f(x, ck.In(x), np.float32(1), np.int32(4), block=(4, 1, 1))
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ck.Out(ro)
    with pytest.raises(ValueError, match="read-only"):
        ck.InOut(ro)
    with pytest.raises(TypeError, match="takes a NumPy array"):
        ck.Out([1.0, 2.0])
    assert ck.In([1.0, 2.0]).array.dtype == np.float64    # In takes array-likes
    assert repr(ck.In(x)).startswith("In(array(")


OPTIONAL_OUT = r"""
extern "C" __global__ void scale(const float *x, float *y, float *sum_or_null, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
    if (sum_or_null && i < n) atomicAdd(sum_or_null, x[i]);
}
"""


def test_none_is_a_null_pointer(device):
    """None passes a null pointer, as a kernel with an optional output
    expects; the kernel sees it as null and skips the output."""
    k = ck.RawKernel(OPTIONAL_OUT, "scale")
    h = np.arange(5, dtype=np.float32)
    x, y = arr(h, device), ck.zeros(5, dtype=ck.float32, device=device)
    k((1,), (32,), (x, y, None, 5))
    assert_same(y, 2 * h)
    total = ck.zeros(1, dtype=ck.float32, device=device)
    k((1,), (32,), (x, y, total, 5))
    assert_same(total, np.array([h.sum()], np.float32))
    with pytest.raises(TypeError, match="cannot pass a NoneType"):
        k((1,), (32,), (x, y, total, None))


# ------------------------------------------------ checks before any compile

def test_argument_checks(device):
    k = ck.RawKernel(ADD, "add")
    x = ck.zeros(4, dtype=ck.float32, device=device)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k(1, 4, (x, x, x))
    with pytest.raises(TypeError, match="float64 array"):
        k(1, 4, (x, ck.zeros(4, dtype=ck.float64, device=device), x, 4))
    with pytest.raises(TypeError, match="must be an array"):
        k(1, 4, (x, 1.0, x, 4))
    with pytest.raises(TypeError, match="is an array"):
        k(1, 4, (x, x, x, x))
    with pytest.raises(TypeError, match="float"):
        k(1, 4, (x, x, x, 4.5))
    with pytest.raises(OverflowError):
        k(1, 4, (x, x, x, 2**31))
    with pytest.raises(TypeError, match="cannot pass"):
        k(1, 4, (x, x, x, "4"))
    with pytest.raises(TypeError, match="cannot pass"):
        k(1, 4, (x, x, x, np.float64(4)))
    with pytest.raises(TypeError):
        k(1, 4, [x, x, x, 4], 0, None, 7)
    with pytest.raises(TypeError, match="tuple"):
        k(1, 4, x)


def test_device_mismatch(device):
    if device == "cpu":
        pytest.skip("needs a GPU array to mix with")
    k = ck.RawKernel(ADD, "add")
    g = ck.zeros(4, dtype=ck.float32, device=device)
    c = ck.zeros(4, dtype=ck.float32, device="cpu")
    with pytest.raises(ValueError, match="launch is on cuda"):
        k(1, 4, (g, c, g, 4))
    with pytest.raises(ValueError, match="launch is on cpu"):
        k(1, 4, (c, g, c, 4))


def test_launch_config_errors(device):
    k = ck.RawKernel(ADD, "add")
    x = ck.zeros(4, dtype=ck.float32, device=device)
    args = (x, x, x, 4)
    with pytest.raises(ValueError, match="zero"):
        k(0, 4, args)
    with pytest.raises(ValueError, match="zero"):
        k((1, 0), 4, args)
    with pytest.raises(ValueError, match="threads per block"):
        k(1, (32, 33), args)
    with pytest.raises(ValueError, match="threads per block|block.x"):
        k(1, 2048, args)
    with pytest.raises(ValueError, match="shared memory"):
        k(1, 4, args, shared_mem=1 << 30)
    with pytest.raises(ValueError):
        k(-1, 4, args)
    with pytest.raises(ValueError, match="1 to 3"):
        k((1, 1, 1, 1), 4, args)


def test_kernel_fault_is_sticky_cuda_error(device):
    if device == "cpu":
        pytest.skip("a GPU fault (the CPU target's bounds mode is its own test)")
    # in a child process: the fault leaves the context unusable
    code = r"""
import cudakit as ck
k = ck.RawKernel('extern "C" __global__ void wild(float *p) { p[(1ll << 40) + threadIdx.x] = 1.0f; }', 'wild')
x = ck.zeros(4, dtype=ck.float32, device='cuda')
try:
    k(1, 32, (x,))
    ck.cuda.synchronize()
except ck.cuda.CUDAError as e:
    print('CAUGHT', e)
"""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "CAUGHT" in r.stdout, r.stdout + r.stderr
    assert "wild" in r.stdout and "can no longer be used" in r.stdout, r.stdout


def test_bounds_mode(kdev):
    if kdev != "cpu":
        pytest.skip("bounds checking is a mode of the CPU target")
    k = ck.RawKernel('extern "C" __global__ void over(float *x, int n) { x[threadIdx.x] = 1.0f; }', "over")
    x = ck.zeros(8, dtype=ck.float32, device=kdev)
    was = ck._core._cpu_bounds_mode()
    with ck.debug(bounds=True):
        k(1, 8, (x, 8))  # in bounds: fine
        with pytest.raises(IndexError, match="over"):
            k(1, 16, (x, 8))
    assert ck._core._cpu_bounds_mode() == was


def test_compile_error(kdev):
    bad = 'extern "C" __global__ void broken(float *x)\n{\n    x[0] = undefined_name;\n}\n'
    k = ck.RawKernel(bad, "broken")
    with pytest.raises(ck.CompileError) as e:
        k.compile(kdev)
    msg = str(e.value)
    assert "undefined_name" in msg
    assert "3 |" in msg  # the numbered source line


def test_signature_parser():
    """The one reading of kernel signatures (the scanner's, in C)."""
    from cudakit._kernels import _kernel_signature

    def kinds(src, name, options=()):
        sig = _kernel_signature(src, name, options)
        return None if sig is None else [(k, d) for k, d, _, _ in sig]

    assert kinds(ADD, "add") == [("p", "float32"), ("p", "float32"), ("p", "float32"), ("s", "int32")]
    assert [n for _, _, n, _ in _kernel_signature(ADD, "add")] == ["x", "y", "z", "n"]
    src = 'extern "C" {\n__global__ void f(double *__restrict__ a, const long long n, void *p, unsigned char *b, ' \
          'size_t m, MyStruct s) {}\n}'
    assert kinds(src, "f") == [("p", "float64"), ("s", "int64"), ("p", None), ("p", "uint8"), ("s", "uint64"),
                               ("o", None)]
    assert kinds('extern "C" __global__ void h() {}', "h") == []
    assert kinds('extern "C" __global__ void h(void) {}', "h") == []
    assert kinds(ADD, "f<float>") is None
    assert kinds(ADD, "missing") is None
    # typedefs, using, #define and -D of known types resolve; others do not
    src = r"""
    typedef float real;
    using index_t = long unsigned int;
    #define REAL2 double
    typedef real *real_ptr;
    struct S { long long x, y; };
    typedef struct S S2;
    extern "C" __global__ void t(real a, index_t b, REAL2 c, real_ptr d, S e, S2 f, struct S g, MYT h, char i,
                                 char *j, signed char *k, float arr[], int (*fp)(int), float2 v) {}
    """
    assert kinds(src, "t") == [("s", "float32"), ("s", "uint64"), ("s", "float64"), ("p", "float32"), ("o", None),
                               ("o", None), ("o", None), ("o", None), ("s", "int8"), ("p", None), ("p", "int8"),
                               ("p", "float32"), ("o", None), ("o", None)]
    assert kinds(src, "t", ["-DMYT=unsigned short"])[7] == ("s", "uint16")
    # conflicting definitions of a name are not resolved
    assert kinds("typedef float r;\nnamespace n { typedef double r; }\n"
                 'extern "C" __global__ void u(r x) {}', "u") == [("o", None)]
    # a template's parameters: those of its type parameters are not sized
    src = "template <typename T, int N> __global__ void scale(T *x, T a, int n) {}"
    assert kinds(src, "scale<float, 4>") == [("p", None), ("o", None), ("s", "int32")]
    assert kinds(src, "scale") is None


# ------------------------------------------------------- ElementwiseKernel

SQDIFF = ck.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "sqdiff")

ew_dtypes = st.sampled_from(["float32", "float64", "int32", "int64", "uint8"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dt=ew_dtypes, shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_elementwise_layouts(kdev, dt, shape, data):
    rng = np.random.default_rng(len(shape))
    a = (rng.random(shape) * 10).astype(dt)
    # a strided view of a larger array, maybe reversed
    big = (rng.random([s * 2 for s in shape]) * 10).astype(dt)
    sl = tuple(slice(None, None, data.draw(st.sampled_from([2, -2]))) for _ in shape)
    b = big[sl]
    # a broadcast operand: the last axis only
    c = (rng.random(shape[-1:]) * 10).astype(dt)
    want = ((a - b) * (a - b)).astype(dt)
    assert_same(SQDIFF(arr(a, kdev), ck.asarray(big, device=kdev)[sl]), want)
    want2 = ((a - c) * (a - c)).astype(dt)
    assert_same(SQDIFF(arr(a, kdev), arr(c, kdev)), want2)
    out = ck.empty(tuple(shape), dtype=dt, device=kdev)
    r = SQDIFF(arr(a, kdev), arr(c, kdev), out)
    assert r is out
    assert_same(out, want2)


def test_elementwise_typed_scalar_index_raw(kdev):
    k = ck.ElementwiseKernel("float32 x, raw T tab, float64 s", "T y", "y = x * s + tab[i % tab.size()] + i",
                             "mix")
    x = np.linspace(0, 1, 12, dtype=np.float32)
    tab = np.array([10.0, 20.0, 30.0])
    got = k(arr(x, kdev), arr(tab, kdev), 2.0, size=None) if False else \
        k(arr(x, kdev), arr(tab, kdev), 2.0, ck.empty(12, dtype=ck.float64, device=kdev))
    idx = np.arange(12)
    assert_same(got, x.astype(np.float64) * 2.0 + tab[idx % 3] + idx)


def test_elementwise_ind_and_size(kdev):
    k = ck.ElementwiseKernel("", "int64 y", "y = _ind.get()[0] * 100 + _ind.get()[1] + _ind.size() * 0", "coords")
    out = ck.empty((3, 4), dtype=ck.int64, device=kdev)
    k(out)
    assert_same(out, np.arange(3)[:, None] * 100 + np.arange(4)[None, :])
    k2 = ck.ElementwiseKernel("", "int32 y", "y = (int)i", "iota")
    assert_same(k2(ck.empty(7, dtype=ck.int32, device=kdev)), np.arange(7, dtype=np.int32))


def test_elementwise_errors(device):
    with pytest.raises(TypeError, match="cannot determine"):
        ck.ElementwiseKernel("T x", "U y", "y = x", "f")(ck.zeros(3, device=device))
    with pytest.raises(ValueError):
        SQDIFF(ck.zeros(3, device=device), ck.zeros(4, device=device))
    with pytest.raises(TypeError):
        SQDIFF(ck.zeros(3, device=device))
    with pytest.raises(ValueError):
        ck.ElementwiseKernel("T x, T x", "T y", "y = x", "f")


# --------------------------------------------------------- ReductionKernel

L2 = ck.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
MAXK = ck.ReductionKernel("T x", "T y", "x", "(a > b ? a : b)", "y = a", None, "kmax")


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_axis_keepdims(kdev, axis, keepdims):
    a = np.random.default_rng(2).random((6, 70, 5)).astype(np.float32)
    got = L2(arr(a, kdev), axis=axis, keepdims=keepdims)
    assert_same(got, np.sqrt((a * a).sum(axis=axis, keepdims=keepdims)), rtol=1e-4)
    got = MAXK(arr(a, kdev), axis=axis, keepdims=keepdims)
    assert_same(got, a.max(axis=axis, keepdims=keepdims))


def test_reduction_strided_and_int(kdev):
    a = np.arange(4000, dtype=np.int64).reshape(40, 100) % 97
    x = ck.asarray(a, device=kdev)
    s = ck.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "isum")
    assert_same(s(x, axis=0), a.sum(axis=0))          # strided: a thread per column
    assert_same(s(x.T, axis=1), a.T.sum(axis=1))
    assert_same(s(x[:, ::-3], axis=1), a[:, ::-3].sum(axis=1))
    assert_same(s(x[:, :20], axis=1), a[:, :20].sum(axis=1))       # short contiguous rows: small blocks
    assert_same(s(x[:, :70], axis=1, keepdims=True), a[:, :70].sum(axis=1, keepdims=True))
    assert_same(s(ck.zeros((3, 0), dtype=ck.int64, device=kdev), axis=1), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="identity"):
        MAXK(ck.zeros((3, 0), dtype=ck.int64, device=kdev), axis=1)


# ------------------------------------------------------------------ fuse

def test_fuse_decorator_and_lambda(kdev):
    @ck.fuse()
    def f(a, b, s):
        return ck.exp(a) * b + s - ck.maximum(a, b) / 2

    rng = np.random.default_rng(3)
    a = rng.random((4, 33)).astype(np.float32)
    b = rng.random((4, 33)).astype(np.float32)
    got = f(arr(a, kdev), arr(b, kdev), 1.5)
    assert_same(got, np.exp(a) * b + np.float32(1.5) - np.maximum(a, b) / 2)
    g = ck.fuse(lambda x, y: x * y + 1)
    assert_same(g(arr(a, kdev), arr(b[0], kdev)), a * b[0] + 1)
    h = ck.fuse(lambda x: ck.where(x > 0.5, x, -x) ** 2)
    assert_same(h(arr(a, kdev)), np.where(a > 0.5, a, -a) ** 2)
    ints = np.arange(-8, 8, dtype=np.int32)
    m = ck.fuse(lambda x: (x // 3, x % 3, x < 2))
    q, r, c = m(arr(ints, kdev))
    assert_same(q, ints // 3)
    assert_same(r, ints % 3)
    assert_same(c, ints < 2)


def test_fuse_final_reduction(kdev):
    a = np.random.default_rng(4).random((8, 50)).astype(np.float32)
    s = ck.fuse(lambda x, y: ck.sum(x * y + 1, axis=1))
    assert_same(s(arr(a, kdev), arr(a, kdev)), (a * a + 1).sum(axis=1), rtol=1e-4)
    mx = ck.fuse(lambda x: (x - 0.5).max())
    assert_same(mx(arr(a, kdev)), np.asarray((a - 0.5).max()))
    mn = ck.fuse(lambda x: ck.amin(x * 2, axis=0, keepdims=True))
    assert_same(mn(arr(a, kdev)), (a * 2).min(axis=0, keepdims=True))
    ii = np.arange(10, dtype=np.int32)
    p = ck.fuse(lambda x: ck.sum(x * 2))
    assert_same(p(arr(ii, kdev)), np.asarray((ii * 2).sum()))


def test_fuse_numpy_scalars(kdev):
    # a NumPy scalar argument is a typed parameter (float64 is a float subclass, not a weak scalar)
    a = np.arange(5, dtype=np.float32)
    f = ck.fuse(lambda x, s: x * s + np.float32(0.5))
    got = f(arr(a, kdev), np.float64(2))
    assert_same(got, a * np.float64(2) + np.float32(0.5))
    assert got.dtype == ck.float64


def test_fuse_fallback(device):
    calls = []

    def f(x):
        calls.append(1)
        if float(ck.asnumpy(x).sum()) > 0:  # data-dependent Python: not traceable
            return x + 1
        return x

    g = ck.fuse(f)
    x = ck.ones(3, dtype=ck.float32, device=device)
    assert_same(g(x), np.full(3, 2, np.float32))
    assert_same(g(x), np.full(3, 2, np.float32))
    assert g._plans and list(g._plans.values())[0] == ("python",)


# ----------------------------------------- every generated kind through NVRTC

def _nvrtc(src, name):
    try:
        return ck._core._kernel_compile(src, name, 90)
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")


def test_compile_error_nvrtc_excerpt():
    with pytest.raises(ck.CompileError) as e:
        try:
            ck._core._kernel_compile('extern "C" __global__ void f()\n{\n    int x = nope;\n}\n', "bad.cu", 90)
        except ck.cuda.CUDAError as err:
            pytest.skip(f"no NVRTC here: {err}")
    assert "nope" in str(e.value)
    assert re.search(r">>\s+3 \|\s+int x = nope;", str(e.value))


@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                "float32", "float64", "complex64", "complex128"])
def test_generated_elementwise_compiles(dt):
    d = np.dtype(dt)
    k = ck.ElementwiseKernel("T x, raw T r, T s", "T y", "y = x + r[0] + s", "gen_ew")
    for kinds in (["a", "r", "s", "a"], ["a", "r", "a", "a"]):
        for ndim, contig in ((1, True), (1, False), (3, False)):
            _nvrtc(k._source([d, d, d, d], kinds, ndim, contig), "gen_ew.cu")
    ki = ck.ElementwiseKernel("", "T y", "y = (T)(_ind.get()[0] + _ind.size())", "gen_ind")
    ki._uses_ind = True
    _nvrtc(ki._source([d], ["a"], 2, False), "gen_ind.cu")


@pytest.mark.parametrize("dt", ["int32", "int64", "uint64", "float32", "float64", "complex128"])
def test_generated_reduction_compiles(dt):
    d = np.dtype(dt)
    from cudakit._kernels import _ctype
    for ident in ("0", None):
        k = ck.ReductionKernel("T x, raw T w, T s", "T y", "x * w[0] + s", "a + b", "y = a", ident, "gen_red")
        for mode in ("block", "thread"):
            for no, ni in ((0, 1), (1, 1), (2, 3)):
                _nvrtc(k._source([d, d, d, d], ["a", "r", "s", "a"], _ctype(d), no, ni, mode), "gen_red.cu")


def test_generated_fuse_compiles():
    a32 = ck.zeros(3, dtype=ck.float32, device="cpu")
    i32 = ck.zeros(3, dtype=ck.int32, device="cpu")
    cases = [
        (lambda x, y: ck.exp(x) * y + 1, (a32, a32)),
        (lambda x, s: ck.sqrt(abs(x)) - s * x, (a32, 2.5)),
        (lambda x: (x // 3, x % 3, x < 2, ~x, -x), (i32,)),
        (lambda x, y: ck.where(x > y, x, y) ** 2, (a32, a32)),
        (lambda x, y: ck.maximum(x, y) / ck.minimum(x, 1), (i32, a32)),
        (lambda x: ck.logical_and(x > 0, x < 5) | (x == 2), (i32,)),
        (lambda x: ck.sum(x * x, axis=0), (a32,)),
        (lambda x: ck.max(x + 1), (i32,)),
        (lambda x: ck.prod(x.astype("float64")), (a32,)),
    ]
    for f, args in cases:
        fu = ck.fuse(f)
        plan = fu._trace(args)
        k = plan[1]
        dts = [np.dtype(a.dtype.name) if isinstance(a, ck.ndarray) else np.dtype(type(a)) for a in args]
        if plan[0] == "map":
            outs = [p.dtype for p in k.out_params]
            kinds = ["a" if isinstance(a, ck.ndarray) else "s" for a in args] + ["a"] * len(outs)
            _nvrtc(k._source(dts + outs, kinds, 1, True), "gen_fuse.cu")
        else:
            from cudakit._kernels import _ctype
            od = k.out_params[0].dtype
            kinds = ["a" if isinstance(a, ck.ndarray) else "s" for a in args] + ["a"]
            for mode in ("block", "thread"):
                _nvrtc(k._source(dts + [od], kinds, _ctype(od), 1, 1, mode), "gen_fuse_red.cu")


UNARY_FLOAT = ["negative", "absolute", "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin",
               "arccos", "arctan", "arcsinh", "arctanh", "exp2", "log2", "log10", "log1p", "expm1", "floor", "ceil",
               "trunc", "rint", "cbrt", "square", "reciprocal", "isnan", "isinf", "isfinite", "sign",
               "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2", "hypot", "less",
          "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_xor",
          "floor_divide", "remainder"]
BINARY_INT = ["add", "subtract", "multiply", "maximum", "minimum", "less", "equal", "bitwise_and", "bitwise_or",
              "bitwise_xor", "floor_divide", "remainder", "left_shift", "right_shift", "divide"]


def _fused_all(names, nargs):
    """One fused kernel computing every op of names (a tuple of results)."""
    if nargs == 1:
        return ck.fuse(lambda x: tuple(getattr(ck, n)(x) for n in names))
    return ck.fuse(lambda x, y: tuple(getattr(ck, n)(x, y) for n in names))


def _check_fused(f, names, got, wants, **tol):
    assert list(f._plans.values())[0][0] != "python", "the op table did not fuse"
    assert len(got) == len(names)
    for n, g, w in zip(names, got, wants):
        try:
            assert_same(g, w, **tol)
        except AssertionError as e:
            raise AssertionError(f"{n}: {e}") from None


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_fuse_op_table_float(kdev, dt):
    rng = np.random.default_rng(5)
    a = (rng.random(40) * 0.9 + 0.05).astype(dt)
    b = (rng.random(40) * 3 - 1.5).astype(dt)
    tol = dict(rtol=2e-6 if dt == "float32" else 1e-12, atol=1e-6)
    f = _fused_all(UNARY_FLOAT, 1)
    _check_fused(f, UNARY_FLOAT, f(arr(a, kdev)), [getattr(np, n)(a) for n in UNARY_FLOAT], **tol)
    f = _fused_all(BINARY, 2)
    _check_fused(f, BINARY, f(arr(a, kdev), arr(b, kdev)), [getattr(np, n)(a, b) for n in BINARY], **tol)


@pytest.mark.parametrize("dt", ["int32", "int64", "uint8"])
def test_fuse_op_table_int(kdev, dt):
    a = np.array([7, 0, 5, 9, 3, 12, 1, 100], dtype=dt)
    b = np.array([2, 3, 1, 4, 5, 1, 2, 3], dtype=dt)
    if dt != "uint8":
        a[1] = -7
    f = _fused_all(BINARY_INT, 2)
    _check_fused(f, BINARY_INT, f(arr(a, kdev), arr(b, kdev)), [getattr(np, n)(a, b) for n in BINARY_INT])
    un = ["absolute", "invert", "square", "logical_not"] + ([] if dt == "uint8" else ["negative", "sign"])
    f = _fused_all(un, 1)
    _check_fused(f, un, f(arr(a, kdev)), [getattr(np, n)(a) for n in un])
