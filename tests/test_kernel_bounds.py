"""Issue 13, user kernels: bounds mode catches every out-of-bounds access of
an array argument (any distance, reads and writes, views of a larger
buffer, through the parameter or a pointer made from it; CUDA C and Python
kernels), scalar arguments
of types cudakit cannot size take only NumPy scalars of exactly their size,
and kernel names pasted into generated source must be identifiers.

Bounds cases run in a child process: a miss would corrupt the process's
memory.  The child runs every case once and reports; each test reads its
case's report."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cudakit as ck
from conftest import assert_same

CPU_KERNELS = ck._core._cpu_kernels_available()
needs_cpu_kernels = pytest.mark.skipif(not CPU_KERNELS, reason="no C++ compiler for CPU kernels")


@pytest.fixture
def kdev(device):
    if device == "cpu" and not CPU_KERNELS:
        pytest.skip("CUDA C kernels on the CPU need a C++ compiler")
    return device


# ------------------------------------------------------------ bounds mode

# Each case: (name, kernel, arguments as Python source, grid, block, what it
# must raise or None).  In the child, `base` is arange(16) float32, `v` the
# view base[5:10], `rv` base[::-1]; base is checked unchanged after a
# failing launch (bounds mode stops an access before it happens, and a
# launch that fails leaves its arrays alone).
CHILD_SRC = r'''
__device__ void put(float *p, long long i, float v) { p[i] = v; }
__device__ float get(const float *p, long long i) { return p[i]; }
extern "C" __global__ void w(float *x, long long i) { if (threadIdx.x == 3) x[i] = 7.0f; }
extern "C" __global__ void r(const float *x, float *y, long long i) { if (threadIdx.x == 0) y[0] = x[i]; }
extern "C" __global__ void deref(float *x, long long i) { if (threadIdx.x == 0) *(x + i) = 1.0f; }
extern "C" __global__ void dev(float *x, long long i) { if (threadIdx.x == 1) put(x, i, 7.0f); }
extern "C" __global__ void devr(float *x, float *y, long long i) { if (threadIdx.x == 0) y[0] = get(x, i); }
extern "C" __global__ void loc(float *x, long long i) { float *row = x + 2; if (threadIdx.x == 0) row[i] = 1; }
extern "C" __global__ void at(float *x, long long i) { if (threadIdx.x == 0) atomicAdd(x + i, 1.0f); }
extern "C" __global__ void v4(float *x, long long i) { if (threadIdx.x == 0) reinterpret_cast<float4 *>(x)[i].x = 1; }
extern "C" __global__ void nul(float *x, float *maybe) { if (threadIdx.x == 0 && !maybe) x[0] = 1; if (threadIdx.x == 1) maybe[2] = 1; }
extern "C" __global__ void sync(float *x, long long i)
{
    __shared__ float s[64];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 5) x[i] = s[0];
}
extern "C" __global__ void grid(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) x[i] = 2.0f * i;   /* one too many */
}
extern "C" __global__ void two(const float *a, float *b, long long i) { if (threadIdx.x == 0) b[i] = a[0]; }
template <typename T> __global__ void tw(T *x, long long i) { if (threadIdx.x == 0) x[i] = 1; }
'''

CASES = [
    # in bounds: fine, and the result lands
    ("in_bounds", "w", "(v, 4)", 1, 8, None),
    # just past the end / before the start of a view: inside base, not v's
    ("view_end", "w", "(v, 5)", 1, 8, r"argument 0 \('x'\): element 5 .*outside its 5 elements \[0, 5\)"),
    ("view_before", "w", "(v, -1)", 1, 8, r"element -1 .*outside its 5 elements \[0, 5\)"),
    # far: 20 KB and 4 MB before, 4 GB and 4 TB after (another mapping, or none)
    ("before_20k", "w", "(v, -5000)", 1, 8, r"element -5000 \(byte offset -20000\)"),
    ("before_4m", "w", "(v, -1000000)", 1, 8, r"element -1000000 \(byte offset -4000000\)"),
    ("after_4g", "w", "(v, 1 << 30)", 1, 8, r"element 1073741824 "),
    ("after_4t", "w", "(v, 1 << 40)", 1, 8, r"element 1099511627776 "),
    # reads too, and *(x + i)
    ("read_end", "r", "(v, out1, 5)", 1, 8, r"kernel r: .*argument 0 \('x'\): element 5 "),
    ("read_far", "r", "(v, out1, -3000000)", 1, 8, r"element -3000000 "),
    ("deref", "deref", "(v, 9)", 1, 8, r"element 9 "),
    # a reversed view: its elements are [-15, 1) from the pointer passed
    ("reversed_ok", "w", "(rv, -15)", 1, 8, None),
    ("reversed_end", "w", "(rv, 1)", 1, 8, r"element 1 .*\[-15, 1\)"),
    ("reversed_start", "w", "(rv, -16)", 1, 8, r"element -16 "),
    # through a pointer made from the argument: a __device__ function, a local
    ("device_fn_end", "dev", "(v, 5)", 1, 8, r"through a pointer made from it: element 5 "),
    ("device_fn_far", "dev", "(v, -1000000)", 1, 8, r"through a pointer made from it: element -1000000 "),
    ("device_fn_4g", "dev", "(v, 1 << 28)", 1, 8, r"through a pointer made from it: element 268435456 "),
    ("device_fn_slack", "dev", "(v, -1)", 1, 8, r"wrote before the start of argument 0 \('x'\)"),
    ("device_fn_read", "devr", "(v, out1, 7)", 1, 8, r"argument 0 \('x'\) through a pointer made from it: element 7"),
    ("local_ptr", "loc", "(v, 3)", 1, 8, r"element 5 .*\[0, 5\)"),
    # atomics, reinterpret_cast, a null pointer, fibers, the grid's thread
    ("atomic", "at", "(v, 5)", 1, 8, r"element 5 "),
    ("atomic_ok", "at", "(v, 4)", 1, 8, None),
    ("vector", "v4", "(v, 1)", 1, 8, r"element 4 \(byte offset 16, an access of 16 bytes\)"),
    ("null", "nul", "(v, None)", 1, 8, r"argument 1 \('maybe'\), a null pointer"),
    ("fibers", "sync", "(v, 5)", 1, 64, r"kernel sync: block \(0, 0, 0\), thread \(5, 0, 0\)"),
    ("which_thread", "grid", "(base, 16)", 4, 8, r"kernel grid: block \(2, 0, 0\), thread \(0, 0, 0\): .*element 16 "),
    # two arguments, one a view of the other's buffer
    ("alias_ok", "two", "(base, v, 0)", 1, 8, None),
    ("alias_oob", "two", "(base, v, 5)", 1, 8, r"argument 1 \('b'\): element 5 "),
    # a template instance
    ("template", "tw<float>", "(v, 5)", 1, 8, r"kernel tw<float>: .*argument 0 \('x'\): element 5 "),
]

CHILD = textwrap.dedent('''
    import json, sys
    import numpy as np
    import cudakit as ck
    m = ck.RawModule(code=SRC, name_expressions=["tw<float>"])
    out1 = ck.zeros(1, dtype=ck.float32)
    res = {}
    ck.debug(bounds=True)
    for name, kern, args, grid, block, _ in CASES:
        base = ck.arange(16, dtype=ck.float32)
        v = base[5:10]
        rv = base[::-1]
        before = ck.asnumpy(base).copy()
        try:
            m.get_function(kern)(grid, block, eval(args))
            res[name] = ["ok", "", ck.asnumpy(base).tolist()]
        except Exception as e:
            res[name] = [type(e).__name__, str(e), bool((ck.asnumpy(base) == before).all())]
    # the process is fine afterwards: a kernel and an op still run
    x = ck.arange(8, dtype=ck.float32)
    m.get_function("w")(1, 8, (x, 2))
    res["after"] = ["ok", "", float((x + 1).sum())]
    print("RESULTS" + json.dumps(res))
''')


@pytest.fixture(scope="module")
def bounds_results():
    if not CPU_KERNELS:
        pytest.skip("no C++ compiler for CPU kernels")
    code = "SRC = %r\nCASES = %r\n" % (CHILD_SRC, CASES) + CHILD
    env = dict(os.environ, CUDAKIT_DEVICE="cpu")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULTS")]
    assert line, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(line[0][len("RESULTS"):])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bounds_case(bounds_results, case):
    import re
    name, kern, _, _, _, want = case
    kind, msg, extra = bounds_results[name]
    if want is None:
        assert kind == "ok", (kind, msg)
        return
    assert kind == "IndexError", (kind, msg)
    assert re.search(want, msg), msg
    # the kernel, block and thread are named (a write found after the run
    # names the kernel and argument only: it cannot know the thread)
    assert msg.startswith(f"kernel {kern}"), msg
    if "wrote before" not in msg:
        assert re.search(r"block \(\d+, \d+, \d+\), thread \(\d+, \d+, \d+\)", msg), msg
    assert extra is True, "the arrays changed in a failing bounds-mode launch"


def test_bounds_in_bounds_results(bounds_results):
    assert bounds_results["in_bounds"][2][9] == 7.0  # v[4] is base[9]
    assert bounds_results["reversed_ok"][2][0] == 7.0  # rv[-15] is base[0]
    assert bounds_results["atomic_ok"][2][9] == 10.0
    assert bounds_results["alias_ok"][2][5] == 0.0  # b[0] = a[0]: base[5] = base[0]
    assert bounds_results["after"] == ["ok", "", 8 * 9 / 2 + 7 - 2]


@needs_cpu_kernels
def test_bounds_mode_switch_and_env():
    """ck.debug(bounds=...) sets the mode, as a context manager restores it;
    CUDAKIT_BOUNDS=1 turns it on from the start."""
    was = ck._core._cpu_bounds_mode()
    with ck.debug(bounds=True):
        assert ck._core._cpu_bounds_mode()
        with ck.debug(bounds=False):
            assert not ck._core._cpu_bounds_mode()
        assert ck._core._cpu_bounds_mode()
    assert ck._core._cpu_bounds_mode() == was
    code = "import cudakit as ck; print(ck._core._cpu_bounds_mode())"
    env = dict(os.environ, CUDAKIT_BOUNDS="1", CUDAKIT_DEVICE="cpu")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.stdout.strip() == "True", r.stdout + r.stderr


@needs_cpu_kernels
def test_bounds_mode_generated_kernels():
    """ElementwiseKernel and ReductionKernel run checked: strided, broadcast
    and reversed inputs give NumPy's results, and a raw parameter indexed
    past its end is reported."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 7)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    ew = ck.ElementwiseKernel("T x, T y", "T z", "z = x * y + 1", "ew_bounds")
    red = ck.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "red_bounds")
    raw = ck.ElementwiseKernel("raw T x", "T y", "y = x[i + 1]", "raw_bounds")
    with ck.debug(bounds=True):
        xa = ck.asarray(a)
        assert_same(ew(xa[:, ::-2], ck.asarray(b)[::-2]), a[:, ::-2] * b[::-2] + 1)
        assert_same(ew(xa.T[::-1], ck.asarray(a).T[::-1]), a.T[::-1] * a.T[::-1] + 1)
        assert_same(red(xa[::2, 1:], axis=1), a[::2, 1:].sum(axis=1), rtol=1e-5)
        assert_same(red(xa.T, axis=0), a.T.sum(axis=0), rtol=1e-5)
        x = ck.arange(9, dtype=ck.float32)
        assert_same(raw(x, size=8), np.arange(1, 9, dtype=np.float32))
        with pytest.raises(IndexError, match=r"raw_bounds: .*'_p_x'\): element 9 "):
            raw(x, ck.empty(9, dtype=ck.float32))


@needs_cpu_kernels
def test_bounds_mode_globals_shared_between_builds():
    """A module compiled outside bounds mode gets a second, checked build
    for bounds-mode launches: the variables get_global handed out are the
    same in both."""
    src = r'''
    extern "C" { __device__ float table[4]; }
    extern "C" __global__ void use_table(float *out) { out[threadIdx.x] = table[threadIdx.x] * 2.0f; table[threadIdx.x] += 1.0f; }
    '''
    with ck.debug(bounds=False):
        m = ck.RawModule(code=src)
        m.compile("cpu")
        g = m.get_global("table", device="cpu")
        g[...] = ck.asarray(np.array([1, 2, 3, 4], np.float32))
    out = ck.zeros(4, dtype=ck.float32)
    with ck.debug(bounds=True):
        m.get_function("use_table")(1, 4, (out,))
        assert_same(out, np.array([2, 4, 6, 8], np.float32))
    assert_same(g, np.array([2, 3, 4, 5], np.float32))
    with ck.debug(bounds=False):
        m.get_function("use_table")(1, 4, (out,))
    assert_same(out, np.array([4, 6, 8, 10], np.float32))


@needs_cpu_kernels
def test_bounds_mode_compile_error_says_why():
    """A source that bounds mode cannot compile with checked pointers (a
    template deducing T from T *) is a CompileError that says so; outside
    bounds mode the kernel runs."""
    src = r'''
    template <typename T> __device__ void store(T *p, T v) { *p = v; }
    extern "C" __global__ void deduce(float *x) { store(x, 1.0f); }
    extern "C" __global__ void explicit_arg(float *x) { store<float>(x, 2.0f); }
    '''
    x = ck.zeros(1, dtype=ck.float32)
    with ck.debug(bounds=False):
        m = ck.RawModule(code=src)
        m.get_function("deduce")(1, 1, (x,))
    assert_same(x, np.ones(1, np.float32))
    with ck.debug(bounds=True):
        with pytest.raises(ck.CompileError, match="checked pointer"):
            m.get_function("deduce")(1, 1, (x,))
        # the same answer again, without compiling again
        with pytest.raises(ck.CompileError, match="checked pointer"):
            m.get_function("explicit_arg")(1, 1, (x,))
        m2 = ck.RawModule(code=src.replace("store(x, 1.0f)", "store<float>(x, 1.0f)"))
        m2.get_function("explicit_arg")(1, 1, (x,))
    assert_same(x, np.full(1, 2, np.float32))


@needs_cpu_kernels
def test_bounds_mode_is_cheap():
    """Bounds mode is cheap enough for the kernel tests: a small launch
    costs tens of microseconds, not milliseconds (measured in the report:
    bench/probe_kernel_launch.py)."""
    import time
    k = ck.RawKernel(r'''extern "C" __global__ void inc(float *x, int n)
    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }''', "inc")
    x = ck.zeros(1000, dtype=ck.float32)
    with ck.debug(bounds=True):
        k(4, 256, (x, 1000))
        t = time.perf_counter()
        for _ in range(200):
            k(4, 256, (x, 1000))
        per = (time.perf_counter() - t) / 200
    assert_same(x, np.full(1000, 201, np.float32))
    assert per < 0.01, per


# Python kernels (cuda.jit): bounds mode on the CPU compiles them as
# debug=True does, every index checked before the access.  Each case:
# (name, kernel, arguments, what the IndexError says or None).
PYK_CASES = [
    ("ok", "w", "(v, 4)", None),
    ("ok_negative", "w", "(v, -5)", None),
    ("view_end", "w", "(v, 5)", "index 5 is out of bounds for axis of size 5 of 'x'"),
    ("view_before", "w", "(v, -6)", "index -6 is out of bounds"),
    ("far", "w", "(v, 1 << 40)", "index 1099511627776 is out"),
    ("far_before", "w", "(v, -1000000)", "index -1000000 is out"),
    ("axis", "w2", "(base.reshape(4, 4), 1, 4)", "index 4 is out of bounds for axis of size 4"),
    ("atomic", "at", "(v, 5)", "index 5 is out"),
]

PYK_CHILD = '''
import json
import cudakit as ck
from cudakit import cuda


@cuda.jit
def w(x, i):
    if cuda.threadIdx.x == 3:
        x[i] = 7.0


@cuda.jit
def w2(x, i, j):
    if cuda.threadIdx.x == 0:
        x[i, j] = 1.0


@cuda.jit
def at(x, i):
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(x, i, 1.0)


res = {}
ck.debug(bounds=True)
for name, kern, args, _ in CASES:
    base = ck.arange(16, dtype=ck.float32)
    v = base[5:10]
    try:
        globals()[kern][1, 8](*eval(args))
        res[name] = ["ok", "", ck.asnumpy(base).tolist()]
    except Exception as e:
        res[name] = [type(e).__name__, str(e), ck.asnumpy(base).tolist()]
ck.debug(bounds=False)
base = ck.arange(16, dtype=ck.float32)
w[1, 8](base[5:10], 4)
res["unchecked"] = ["ok", "", ck.asnumpy(base).tolist()]
print("RESULTS" + json.dumps(res))
'''


@needs_cpu_kernels
def test_bounds_mode_python_kernels(tmp_path):
    """Bounds mode applies to Python kernels on the CPU: an index out of a
    view's own bounds, at any distance, or out of one axis, is an IndexError
    naming the kernel, line, block, thread, index and argument, and the
    access does not happen."""
    import re
    p = tmp_path / "pyk_bounds.py"
    p.write_text("CASES = %r\n" % (PYK_CASES,) + PYK_CHILD)
    env = dict(os.environ, CUDAKIT_DEVICE="cpu")
    r = subprocess.run([sys.executable, str(p)], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULTS")]
    assert line, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(line[0][len("RESULTS"):])
    for name, kern, _, want in PYK_CASES:
        kind, msg, base = res[name]
        if want is None:
            assert kind == "ok", (name, msg)
            continue
        assert kind == "IndexError", (name, kind, msg)
        assert want in msg, (name, msg)
        assert re.match(rf"kernel '{kern}' \(.*pyk_bounds.py, line \d+\), block \(0, 0, 0\), "
                        rf"thread \(\d, 0, 0\): ", msg), msg
        assert base == list(range(16)), (name, base)
    assert res["ok"][2][9] == 7.0 and res["ok_negative"][2][5] == 7.0
    assert res["unchecked"][2][9] == 7.0


# --------------------------------------------------------- scalar arguments

STRUCT_SRC = r'''
struct S { long long x, y; };
typedef float real;
typedef S S2;
using index_t = unsigned int;
#define REAL double
extern "C" __global__ void takes_struct(double *out, S s) { out[0] = (double)s.x; out[1] = (double)s.y; }
extern "C" __global__ void takes_typedef(double *out, real r, index_t i, REAL d) { out[0] = r; out[1] = i; out[2] = d; }
extern "C" __global__ void takes_alias(double *out, S2 s) { out[0] = (double)(s.x + s.y); }
template <typename T> __global__ void takes_t(double *out, T a) { out[0] = (double)a; }
'''


def test_struct_parameter_takes_exact_numpy_scalar(kdev):
    m = ck.RawModule(code=STRUCT_SRC, name_expressions=["takes_t<float>", "takes_t<double>"])
    k = m.get_function("takes_struct")
    out = ck.zeros(3, dtype=ck.float64, device=kdev)
    for bad in (5, 5.0, np.int64(5), np.float64(5), np.zeros(1, "i8,i8,i8")[0], None):
        with pytest.raises(TypeError, match=r"argument 1 \('s'\).*'S'.*cannot size.*16 bytes"):
            k(1, 1, (out, bad))
    with pytest.raises(TypeError, match="is an array"):
        k(1, 1, (out, out))
    s = np.array([(7, -3)], dtype=[("x", "<i8"), ("y", "<i8")])[0]
    k(1, 1, (out, s))
    assert_same(out, np.array([7.0, -3.0, 0.0]))
    # a typedef of a struct: the same rule
    k = m.get_function("takes_alias")
    with pytest.raises(TypeError, match="16 bytes"):
        k(1, 1, (out, 5))
    k(1, 1, (out, s))
    assert float(ck.asnumpy(out)[0]) == 4.0


def test_typedef_of_known_type_takes_python_scalars(kdev):
    m = ck.RawModule(code=STRUCT_SRC)
    k = m.get_function("takes_typedef")
    out = ck.zeros(3, dtype=ck.float64, device=kdev)
    k(1, 1, (out, 2.5, 7, 1.25))
    assert_same(out, np.array([2.5, 7.0, 1.25]))
    with pytest.raises(TypeError, match="float"):
        k(1, 1, (out, 2.5, 7.5, 1.0))  # a float into the unsigned int typedef
    with pytest.raises(OverflowError):
        k(1, 1, (out, 2.5, -1, 1.0))


def test_template_parameter_takes_exact_numpy_scalar(kdev):
    m = ck.RawModule(code=STRUCT_SRC, name_expressions=["takes_t<float>", "takes_t<double>"])
    out = ck.zeros(3, dtype=ck.float64, device=kdev)
    kf, kd = m.get_function("takes_t<float>"), m.get_function("takes_t<double>")
    for bad in (2.5, 2, np.float64(2.5)):
        with pytest.raises(TypeError, match=r"argument 1 \('a'\).*'T'.*4 bytes"):
            kf(1, 1, (out, bad))
    kf(1, 1, (out, np.float32(2.5)))
    assert float(ck.asnumpy(out)[0]) == 2.5
    kd(1, 1, (out, np.float64(0.125)))
    assert float(ck.asnumpy(out)[0]) == 0.125
    with pytest.raises(TypeError, match="8 bytes"):
        kd(1, 1, (out, np.float32(1)))
    with pytest.raises(TypeError, match="takes 2 arguments"):
        kd(1, 1, (out,))


@needs_cpu_kernels
def test_signature_misread_yields_to_compiled_sizes():
    """Where a macro makes the parameter list, the compiled kernel's sizes
    decide (the CPU reports them): a Python int into an int parameter of a
    kernel whose signature could not be read must have that size."""
    src = r'''
    #define PARAMS double *out, int n
    extern "C" __global__ void mac(PARAMS) { out[0] = n; }
    '''
    k = ck.RawKernel(src, "mac")
    out = ck.zeros(1, dtype=ck.float64)
    with pytest.raises(TypeError, match="4 bytes"):
        k(1, 1, (out, 5))
    k(1, 1, (out, np.int32(5)))
    assert float(ck.asnumpy(out)[0]) == 5.0
    with pytest.raises(TypeError, match="takes 2 arguments"):
        k(1, 1, (out,))


# ----------------------------------------------------------- kernel names

BAD_NAMES = ['e1(){} extern "C" __global__ void e2', "1abc", "a-b", "", "a b", "k;", "ns::k"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_generated_kernel_names_are_identifiers(name, device):
    with pytest.raises(ValueError, match="not an identifier"):
        ck.ElementwiseKernel("T x", "T y", "y = x", name)
    with pytest.raises(ValueError, match="not an identifier"):
        ck.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", name)


def test_generated_kernel_placeholders_are_identifiers(device):
    with pytest.raises(ValueError, match="not an identifier"):
        ck.ElementwiseKernel("T){}/* x", "T y", "y = x", "k")
    with pytest.raises(ValueError, match="not an identifier"):
        ck.ElementwiseKernel("T x", "T y;", "y = x", "k")


def test_codegen_checks_names_too():
    """The C generator refuses them as well (the C API has no Python layer
    in front of it)."""
    with pytest.raises(ValueError, match="not an identifier"):
        ck._core._ukernel_ew_source('e1(){} extern "C" __global__ void e2', "y = x", "", "", "", (("x", "T"), ("y", "T")),
                                    (np.dtype("float32"), np.dtype("float32")), "aa", 1, 1, True, False)


def test_good_generated_kernel_name_runs(kdev):
    k = ck.ElementwiseKernel("T x", "T y", "y = x + 1", "_ok_Name2")
    assert_same(k(ck.arange(4, dtype=ck.float32, device=kdev)), np.arange(1, 5, dtype=np.float32))


def test_rawkernel_name_must_name_a_kernel(kdev):
    src = 'extern "C" __global__ void e1(float *x) { x[0] = 1; }'
    x = ck.zeros(1, dtype=ck.float32, device=kdev)
    for name in ('e1(){} extern "C" __global__ void e2', "e2", "e1 "):
        with pytest.raises(ValueError, match="no kernel|has no|named"):
            ck.RawKernel(src, name)(1, 1, (x,))
    ck.RawKernel(src, "e1")(1, 1, (x,))
    assert float(ck.asnumpy(x)[0]) == 1.0
