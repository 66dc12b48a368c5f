"""ck.vectorize, ck.guvectorize and cuda.reduce (Numba's ufunc makers) on both
devices, against NumPy: dispatch over the signatures by NumPy's casting rules,
broadcasting, out=, numbers in and out, lazy compilation, reduce along axes,
generalized ufuncs, Black-Scholes with device functions; every kernel written
for them builds with NVRTC for sm_90 on any machine."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from cudakit import cuda
from conftest import assert_same

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def on(device, x):
    return ck.asarray(x, device=device)


# ------------------------------------------------------------ the functions

@ck.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def rel_diff(x, y):
    return 2 * (x - y) / (x + y)


@ck.vectorize(["int32(int32, int32)", "int64(int64, int64)", "float64(float64, float64)"])
def sub(a, b):
    return a - b


@ck.vectorize(["int64(int64, int64)", "float32(float32, float32)", "float64(float64, float64)"], identity=0)
def add(a, b):
    return a + b


@ck.vectorize(identity="reorderable")
def first(a, b):
    return a


@ck.vectorize(identity="reorderable")
def last(a, b):
    return b


@ck.vectorize
def lazy_add(a, b):
    return a + b


@ck.vectorize
def hyp(x, y):
    return math.sqrt(x * x + y * y)


@ck.vectorize
def affine(x, a, b):
    return a * x + b


def _np_rel_diff(x, y):
    return 2 * (x - y) / (x + y)


# ----------------------------------------------------- signatures, dispatch

@pytest.mark.parametrize("ta, tb, want", [("float32", "float32", "float32"), ("float64", "float32", "float64"),
                                          ("int8", "float32", "float32"), ("int32", "float32", "float64"),
                                          ("uint16", "uint16", "float32"), ("int64", "int64", "float64")])
def test_signature_dispatch_follows_numpy_casting(device, ta, tb, want):
    a = (np.arange(1, 21) % 9 + 1).astype(ta)
    b = (np.arange(20) % 5 + 1).astype(tb)
    got = rel_diff(on(device, a), on(device, b))
    assert isinstance(got, ck.ndarray) and got.device == ck.Device(device)
    assert_same(got, _np_rel_diff(a.astype(want), b.astype(want)))


def test_first_matching_signature_wins(device):
    # int64 goes to int64 before float64; int32 arrays to int32; uint32 (not safely int32) to int64
    for dt, want in (("int32", "int32"), ("int64", "int64"), ("uint32", "int64"), ("int8", "int32"),
                     ("float32", "float64")):
        a = np.arange(10).astype(dt)
        assert_same(sub(on(device, a), on(device, a[::-1].copy())), (a.astype(want) - a[::-1].astype(want)))


def test_no_signature_takes_the_inputs(device):
    with pytest.raises(TypeError, match="not supported for the input types"):
        rel_diff(on(device, np.arange(3, dtype=np.complex64)), 1.0)
    with pytest.raises(TypeError, match="not supported for the input types"):
        sub(on(device, np.ones(3, np.int64)), 1j)


def test_dtype_argument_picks_the_loop(device):
    a = np.arange(6, dtype=np.int64)
    assert_same(sub(on(device, a), 1, dtype="float64"), (a - 1).astype(np.float64))
    with pytest.raises(TypeError, match="not supported"):
        sub(on(device, a), 1, dtype="int8")


# ------------------------------------------------------ numbers, NEP 50

def test_python_numbers_are_weak(device):
    x = np.arange(1, 6, dtype=np.float32)
    assert_same(rel_diff(on(device, x), 2.5), _np_rel_diff(x, np.float32(2.5)))      # float32 stays float32
    assert_same(add(on(device, np.arange(5)), 7), np.arange(5) + 7)
    i8 = np.arange(5, dtype=np.int8)
    assert_same(lazy_add(on(device, i8), 3), i8 + 3)                                  # int8 stays int8 (lazy)
    with pytest.raises(OverflowError):
        lazy_add(on(device, i8), 300)
    assert_same(lazy_add(on(device, i8), 2.5), i8 + 2.5)                              # float64: int8 and a float


def test_numbers_in_numbers_out():
    r = rel_diff(3.0, 1)                       # Python numbers alone: float64 and int64, the float64 loop
    assert type(r) is np.float64 and r == 1.0
    r = rel_diff(np.float32(3), 1)
    assert type(r) is np.float32 and r == np.float32(1.0)
    r = lazy_add(2, 3)
    assert type(r) is np.int64 and r == 5
    r = hyp(3, 4.0)
    assert type(r) is np.float64 and r == 5.0


def test_numpy_in_numpy_out():
    a = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    r = rel_diff(a, 1.0)
    assert isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, _np_rel_diff(a, 1.0))
    r = rel_diff([1.0, 2.0], [[3.0], [4.0]])       # lists broadcast as arrays
    assert isinstance(r, np.ndarray) and r.shape == (2, 2)
    np.testing.assert_allclose(r, _np_rel_diff(np.array([1.0, 2.0]), np.array([[3.0], [4.0]])))


# --------------------------------------------------------------- broadcasting

@SETTINGS
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, max_side=5),
       st.sampled_from(["float32", "float64", "int32", "int16"]), st.booleans())
def test_broadcasting(device, shapes, dtype, strided):
    rng = np.random.default_rng(7)
    hs, args = [], []
    for s in shapes.input_shapes:
        h = (rng.integers(-20, 20, s) if dtype.startswith("int") else rng.standard_normal(s)).astype(dtype)
        hs.append(h)
        # strided: the same values through a view of every other element
        args.append(on(device, np.repeat(h, 2, axis=-1))[..., ::2] if strided and h.ndim else on(device, h))
    got = affine(*args)
    assert_same(got, hs[1] * hs[0] + hs[2])


def test_scalar_and_zero_d_arguments(device):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert_same(affine(on(device, x), 2.0, on(device, np.array(0.5))), 2.0 * x + 0.5)
    assert_same(affine(on(device, np.array(2.0)), 3.0, 1.0), np.array(7.0))
    assert_same(affine(on(device, np.zeros((0, 3))), 1.0, 2.0), np.zeros((0, 3)))


# ------------------------------------------------------------------- out=

def test_out(device):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = ck.zeros((3, 4), device=device)
    r = add(on(device, a), 1.0, out=out)
    assert r is out
    assert_same(out, a + 1)
    add(on(device, a), on(device, a), out)                          # out as the last positional argument
    assert_same(out, a + a)
    out32 = ck.zeros((3, 4), dtype=ck.float32, device=device)       # same_kind: float64 into float32
    add(on(device, a), 0.5, out=(out32,))
    assert_same(out32, (a + 0.5).astype(np.float32))
    big = ck.zeros((2, 3, 4), device=device)                        # the inputs broadcast to out's shape
    add(on(device, a), 1.0, out=big)
    assert_same(big, np.broadcast_to(a + 1, (2, 3, 4)))
    view = ck.zeros((3, 8), device=device)[:, ::2]                  # a strided out
    add(on(device, a), 2.0, out=view)
    assert_same(view, a + 2)
    h = np.zeros((3, 4))                                            # a NumPy out
    assert add(on(device, a), 3.0, out=h) is h
    np.testing.assert_array_equal(h, a + 3)


def test_out_errors(device):
    a = on(device, np.arange(4.0))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('float64'\\) to "
                                        "dtype\\('int32'\\) with casting rule 'same_kind'"):
        add(a, 1.0, out=ck.zeros(4, dtype=ck.int32, device=device))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        add(on(device, np.ones((2, 4))), 1.0, out=ck.zeros(4, device=device))
    with pytest.raises(ValueError):
        add(a, 1.0, out=ck.zeros(5, device=device))
    with pytest.raises(TypeError, match="positional"):
        add(a)


# ---------------------------------------------------------- lazy compilation

def test_lazy_compiles_for_each_dtype_list(device):
    @ck.vectorize
    def mix(a, b):
        return a * 2 + b

    for ta, tb in (("int32", "int32"), ("float32", "int8"), ("float64", "float64"), ("int32", "int32"),
                   ("uint8", "bool"), ("complex64", "float32")):
        a = (np.arange(8) % 3).astype(ta)
        b = (np.arange(8) % 2).astype(tb)
        with np.errstate(all="ignore"):
            want = a * a.dtype.type(2) + b
        assert_same(mix(on(device, a), on(device, b)), want)
    assert mix.types == ["ii->i", "fb->f", "dd->d", "B?->B", "Ff->F"]


def test_lazy_return_type_is_the_functions(device):
    h = np.arange(5, dtype=np.int32)
    assert_same(hyp(on(device, h), on(device, h)), np.sqrt((h * h + h * h).astype(np.float64)))   # math: float64
    f = np.arange(5, dtype=np.float32)
    assert_same(hyp(on(device, f), 1.0), np.sqrt(f * f + np.float32(1)))                          # float32 stays


def test_decorator_forms(device):
    plain = ck.vectorize()(lambda x: x * 3 + 1)                    # a lambda
    assert_same(plain(on(device, np.arange(4))), np.arange(4) * 3 + 1)
    one = ck.vectorize("float64(float64)")(lambda x: -x)           # one signature as a string
    assert_same(one(on(device, np.arange(3.0))), -np.arange(3.0))
    typed = ck.vectorize([cuda.float32(cuda.float32, cuda.int32)])(lambda x, n: x * n)   # type objects
    assert_same(typed(on(device, np.ones(3, np.float32)), 4), np.full(3, 4, np.float32))
    assert ck.vectorize is cuda.vectorize and ck.guvectorize is cuda.guvectorize
    assert cuda.reduce is cuda.Reduce
    assert add.nin == 2 and add.nout == 1 and add.nargs == 3 and add.identity == 0
    assert add.types == ["ll->l", "ff->f", "dd->d"] and add.ntypes == 3


# -------------------------------------------------------------------- reduce

@pytest.mark.parametrize("axis", [0, 1, -1, 2, None, (0, 2)])
def test_reduce_axes(device, axis):
    h = np.arange(60, dtype=np.int64).reshape(3, 4, 5) - 20
    assert_same(add.reduce(on(device, h), axis=axis), np.add.reduce(h, axis=axis))
    assert_same(add.reduce(on(device, h), axis=axis, keepdims=True), np.add.reduce(h, axis=axis, keepdims=True))


@SETTINGS
@given(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6), st.data())
def test_reduce_random_shapes_and_axes(device, shape, data):
    h = np.random.default_rng(3).integers(-50, 50, shape).astype(np.int64)
    nd = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)))
    keepdims = data.draw(st.booleans())
    x = on(device, h)
    if data.draw(st.booleans()) and nd > 1:
        x, h = x.swapaxes(0, -1), h.swapaxes(0, -1)          # a strided array
    assert_same(add.reduce(x, axis=axis, keepdims=keepdims), np.add.reduce(h, axis=axis, keepdims=keepdims))


def test_reduce_is_in_order(device):
    h = np.arange(1, 25, dtype=np.int64).reshape(4, 6) * 7 % 11
    for axis in (0, 1):
        assert_same(sub.reduce(on(device, h), axis=axis), np.subtract.reduce(h, axis=axis))
    with pytest.raises(ValueError, match="not reorderable"):
        sub.reduce(on(device, h), axis=None)


@pytest.mark.parametrize("n", [1, 2, 513, 100_003])
def test_reorderable_reduce_keeps_the_order(device, n):
    # a long axis is folded in runs: associativity alone may be assumed, never commutativity
    h = np.arange(n, dtype=np.int64) * 3 + 1
    assert_same(first.reduce(on(device, h)), np.array(h[0]))
    assert_same(last.reduce(on(device, h)), np.array(h[-1]))
    assert_same(add.reduce(on(device, h)), np.array(h.sum()))


def test_reduce_floats_rows_and_columns(device):
    h = np.random.default_rng(2).standard_normal((300, 700)).astype(np.float32)
    for axis in (0, 1, None):
        assert_same(add.reduce(on(device, h), axis=axis), np.add.reduce(h, axis=axis, dtype=np.float64)
                    .astype(np.float32), rtol=2e-4, atol=2e-3)


def test_reduce_options(device):
    h = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert_same(add.reduce(on(device, h), axis=1, initial=100), np.add.reduce(h, axis=1, initial=100))
    assert_same(sub.reduce(on(device, h), axis=1, initial=100), np.subtract.reduce(h, axis=1, initial=100))
    assert_same(add.reduce(on(device, h), axis=0, dtype="float64"), np.add.reduce(h, axis=0, dtype=np.float64))
    out = ck.zeros(3, dtype=ck.int64, device=device)
    assert add.reduce(on(device, h), axis=1, out=out) is out
    assert_same(out, h.sum(axis=1))
    assert_same(add.reduce(on(device, np.zeros((0, 3), np.int64)), axis=0), np.zeros(3, np.int64))   # identity 0
    with pytest.raises(ValueError, match="zero-size array to reduction operation sub which has no identity"):
        sub.reduce(on(device, np.zeros((0, 3), np.int64)), axis=0)
    assert_same(sub.reduce(on(device, np.zeros((0, 3), np.int64)), axis=0, initial=5), np.full(3, 5, np.int64))
    assert_same(sub.reduce(on(device, np.zeros((3, 0), np.int64)), axis=0), np.zeros(0, np.int64))
    i8 = np.arange(10, dtype=np.int8)
    assert_same(lazy_add.reduce(on(device, i8)), np.array(np.add.reduce(i8, dtype=np.int8)))      # lazy: T(T, T)
    assert_same(rel_diff.reduce(on(device, np.arange(1, 5, dtype=np.int8))),                       # int8: the float32 loop
                np.array(_np_rel_diff(_np_rel_diff(_np_rel_diff(np.float32(1), np.float32(2)), np.float32(3)),
                                      np.float32(4))))
    r = add.reduce(np.arange(10.0))
    assert type(r) is np.float64 and r == 45.0
    with pytest.raises(ValueError, match="only supported for binary"):
        ck.vectorize(lambda x: x).reduce(np.ones(3))
    with pytest.raises(np.exceptions.AxisError):
        add.reduce(on(device, h), axis=2)


# ---------------------------------------------------------------- gufuncs

@ck.guvectorize(["void(int64[:], int64[:], int64[:])", "void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def dot(a, b, out):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


@ck.guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->(n)")
def scale(x, f, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * f


@ck.guvectorize(["void(float32[:, :], float32[:, :], float32[:, :])"], "(m,n),(n,p)->(m,p)")
def matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s


@ck.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n)->(),()")
def min_max(x, lo, hi):
    lo[0] = x[0]
    hi[0] = x[0]
    for v in x:
        lo[0] = min(lo[0], v)
        hi[0] = max(hi[0], v)


@ck.guvectorize("(n)->(n)")
def cumsum(x, out):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s


def test_guvectorize_dot(device):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(4, dtype=np.float64)
    assert_same(dot(on(device, a), on(device, b)), np.einsum("ijk,k->ij", a, b))     # loop dimensions broadcast
    ai = np.arange(12).reshape(3, 4)
    assert_same(dot(on(device, ai), on(device, ai)), (ai * ai).sum(axis=1))           # the int64 signature
    out = ck.zeros((2, 3), device=device)
    assert dot(on(device, a), on(device, b), out=out) is out
    assert_same(out, np.einsum("ijk,k->ij", a, b))
    out = ck.zeros((2, 3), device=device)
    dot(on(device, a), on(device, b), out)                                            # as a positional argument
    assert_same(out, np.einsum("ijk,k->ij", a, b))
    r = dot(np.ones(3), np.ones(3))
    assert type(r) is np.float64 and r == 3.0


def test_guvectorize_scalars_matrices_and_two_outputs(device):
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert_same(scale(on(device, x), 0.5), x * 0.5)
    assert_same(scale(on(device, x), on(device, np.array([1.0, 2.0, 3.0]))), x * np.array([[1.0], [2.0], [3.0]]))
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    assert_same(matmul(on(device, a), on(device, b)), a @ b, rtol=1e-5, atol=1e-5)
    h = rng.standard_normal((6, 9))
    lo, hi = min_max(on(device, h))
    assert_same(lo, h.min(axis=1))
    assert_same(hi, h.max(axis=1))


def test_guvectorize_lazy(device):
    h = np.arange(10, dtype=np.int32).reshape(2, 5)
    out = ck.zeros((2, 5), dtype=ck.int32, device=device)
    assert cumsum(on(device, h), out) is out
    assert_same(out, np.cumsum(h, axis=1, dtype=np.int32))
    f = np.linspace(0, 1, 7)
    out = ck.zeros(7, device=device)
    cumsum(on(device, f), out=out)
    assert_same(out, np.cumsum(f))
    with pytest.raises(TypeError, match="needs its output arrays"):
        cumsum(on(device, h))


def test_guvectorize_errors(device):
    with pytest.raises(ValueError, match="Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                         "signature \\(n\\),\\(n\\)->\\(\\) \\(size 4 is different from 3\\)"):
        dot(on(device, np.ones(3)), on(device, np.ones(4)))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        dot(on(device, np.ones(3)), 2.0)
    with pytest.raises(TypeError, match="not supported for the input types"):
        dot(on(device, np.ones(3, np.complex128)), on(device, np.ones(3)))
    with pytest.raises(ValueError, match="layout"):
        ck.guvectorize(["void(float64[:], float64[:])"], "(n)(n)")(lambda x, y: None)
    with pytest.raises(TypeError, match="dimensions"):
        @ck.guvectorize(["void(float64[:, :], float64[:])"], "(n)->()")
        def wrong(x, out):
            out[0] = 0


# ------------------------------------------------------------- cuda.reduce

@cuda.reduce
def sum_reduce(a, b):
    return a + b


def test_cuda_reduce(device):
    a = np.arange(1234, dtype=np.float64) + 1
    got = sum_reduce(on(device, a))
    assert type(got) is np.float64 and got == a.sum()        # Numba's example: exact for these values
    big = np.arange(300_000, dtype=np.int64)
    assert sum_reduce(on(device, big)) == big.sum()
    assert sum_reduce(on(device, big), init=5) == big.sum() + 5     # init counts once
    assert sum_reduce(on(device, big), size=10) == 45
    res = ck.zeros(3, dtype=ck.int64, device=device)
    assert sum_reduce(on(device, big), res=res) is None
    assert_same(res, np.array([big.sum(), 0, 0]))
    assert sum_reduce(on(device, np.zeros(0, np.float32)), init=2.5) == np.float32(2.5)
    assert sum_reduce(big[:100]) == big[:100].sum()           # a NumPy array
    f = np.random.default_rng(0).standard_normal(100_000).astype(np.float32)
    np.testing.assert_allclose(sum_reduce(on(device, f)), f.astype(np.float64).sum(), rtol=1e-4)
    with pytest.raises(TypeError, match="1-D"):
        sum_reduce(on(device, np.ones((2, 2))))


def test_cuda_reduce_lambda_and_max(device):
    max_reduce = cuda.reduce(lambda a, b: max(a, b))
    h = np.random.default_rng(1).integers(-1000, -10, 5000).astype(np.int32)
    assert max_reduce(on(device, h), init=h[0]) == h.max()
    assert max_reduce(on(device, h)) == 0                         # Numba's init=0 takes part
    assert type(max_reduce(on(device, h))) is np.int32


# ------------------------------------------------------------- Black-Scholes

RISKFREE = 0.02
VOLATILITY = 0.30
A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


@cuda.jit(device=True)
def cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret = RSQRT2PI * math.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    if d > 0:
        ret = 1.0 - ret
    return ret


@ck.vectorize(["float32(float32, float32, float32, float32, float32)",
               "float64(float64, float64, float64, float64, float64)"])
def black_scholes_call(s, x, t, r, v):
    sqrt_t = math.sqrt(t)
    d1 = (math.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    return s * cnd(d1) - x * math.exp(-r * t) * cnd(d2)


def _np_cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret = RSQRT2PI * np.exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))))
    return np.where(d > 0, 1.0 - ret, ret)


def _np_black_scholes(s, x, t, r, v):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    return s * _np_cnd(d1) - x * np.exp(-r * t) * _np_cnd(d2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_black_scholes(device, dtype):
    rng = np.random.default_rng(5)
    n = 4000
    s = rng.uniform(5.0, 30.0, n).astype(dtype)
    x = rng.uniform(1.0, 100.0, n).astype(dtype)
    t = rng.uniform(0.25, 10.0, n).astype(dtype)
    got = black_scholes_call(on(device, s), on(device, x), on(device, t), RISKFREE, VOLATILITY)
    want = _np_black_scholes(s.astype(np.float64), x.astype(np.float64), t.astype(np.float64), RISKFREE, VOLATILITY)
    assert_same(got, want.astype(dtype), rtol=1e-12 if dtype == "float64" else 2e-4, atol=0 if dtype == "float64"
                else 2e-4)
    # and against the exact normal distribution (the polynomial is good to 1e-7)
    exact = np.vectorize(lambda d: 0.5 * (1 + math.erf(d / math.sqrt(2))))
    sqrt_t = np.sqrt(t.astype(np.float64))
    d1 = (np.log(s / x) + (RISKFREE + 0.5 * VOLATILITY ** 2) * t) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    ref = s * exact(d1) - x * np.exp(-RISKFREE * t) * exact(d2)
    np.testing.assert_allclose(ck.asnumpy(got), ref, atol=1e-4 if dtype == "float32" else 1e-5)


# ---------------------------------------------------------------- targets

def test_targets():
    a = np.arange(4.0)
    cpu = ck.vectorize(["float64(float64)"], target="cpu")(lambda x: x + 1)
    r = cpu(ck.asarray(a, device="cpu"))
    assert r.device == ck.Device("cpu")
    assert_same(r, a + 1)
    np.testing.assert_array_equal(cpu(a), a + 1)
    gpu = ck.vectorize(["float64(float64)"], target="cuda")(lambda x: x + 1)
    if cuda.is_available():
        np.testing.assert_array_equal(gpu(a), a + 1)             # NumPy in, NumPy out, as Numba's
    else:
        with pytest.raises(cuda.CUDAError, match="no usable CUDA device"):
            gpu(a)
    with pytest.raises(ValueError, match="unknown target"):
        ck.vectorize(target="tpu")


def test_stream_argument(device):
    s = cuda.Stream(device=device)
    h = np.arange(3.0)
    r = add(on(device, h), 1.0, stream=s)
    t = add.reduce(on(device, h), stream=s)
    d = dot(on(device, h), on(device, h), stream=s)
    u = sum_reduce(on(device, h), stream=s)
    s.synchronize()
    assert_same(r, h + 1)
    assert_same(t, np.array(h.sum()))
    assert_same(d, np.array(h @ h))
    assert u == h.sum()
    with pytest.raises(TypeError, match="stream"):
        add(h, 1.0, stream="fast")


# ----------------------------------------------------------------- errors

def test_typing_errors_name_the_function_file_and_line():
    with pytest.raises(cuda.TypingError) as info:
        @ck.vectorize(["float32(float32)"])
        def bad(x):
            y = x + "a"
            return y
    msg = str(info.value)
    assert "device function 'bad'" in msg and "test_vectorize.py" in msg and 'y = x + "a"' in msg and "^" in msg


def test_errors():
    with pytest.raises(TypeError, match="returns one number"):
        ck.vectorize(lambda x: None)(np.ones(2))
    with pytest.raises(TypeError, match="does not take 2 numbers"):
        ck.vectorize(["float64(float64)"])(lambda x, y: x)
    with pytest.raises(TypeError, match="returns a number"):
        ck.vectorize(["void(float64)"])(lambda x: x)
    with pytest.raises(TypeError, match="kernel"):
        ck.vectorize(cuda.jit(lambda x: None))
    with pytest.raises(TypeError, match="unexpected keyword"):
        ck.vectorize(colour="red")
    with pytest.raises(NotImplementedError, match="where"):
        add(np.ones(2), 1.0, where=np.ones(2, bool))
    with pytest.raises(NotImplementedError, match="accumulate"):
        add.accumulate(np.ones(2))


# ------------------------------------------- the GPU's compiler, on any machine

def test_translations_compile_for_the_gpu():
    """Every kernel these tests wrote (for the CPU here) builds with NVRTC for sm_90."""
    a = ck.asarray(np.arange(24.0).reshape(2, 3, 4), device="cpu")
    add(a, 1.0)
    add(a[:, :, ::2], a[0, 0, ::2])
    add.reduce(a, axis=1)
    add.reduce(ck.arange(3000, device="cpu"))
    sub.reduce(a, axis=0)
    black_scholes_call(a + 1, a + 2, a + 3, RISKFREE, VOLATILITY)
    dot(a, a)
    scale(a, 2.0)
    scale(a, a[..., 0])
    lazy_add(a, 1)
    hyp(ck.arange(4, dtype=ck.int32, device="cpu"), 2)
    max_reduce = cuda.reduce(lambda x, y: max(x, y))
    max_reduce(ck.arange(10, dtype=ck.int16, device="cpu"))
    matmul(ck.ones((2, 3), dtype=ck.float32, device="cpu"), ck.ones((3, 2), dtype=ck.float32, device="cpu"))
    min_max(a)
    cumsum(a, ck.zeros_like(a))
    sum_reduce(ck.arange(1000, dtype=ck.float32, device="cpu"))
    n = 0
    for f in (add, sub, lazy_add, hyp, black_scholes_call, dot, scale, matmul, min_max, cumsum, sum_reduce,
              max_reduce):
        for key, k in f._kernels.kernels.items():
            src = k.inspect_cuda(k.signatures[0], full=True)
            try:
                ck._core._kernel_compile(src, f"{key[0]}.cu", 90)
            except ck.cuda.CUDAError as e:
                pytest.skip(f"no NVRTC here: {e}")
            n += 1
    assert n >= 16
