"""Every element-wise op of include/cudakit_ops.h against the NumPy function
of the same name: each input dtype, mixed dtypes, broadcasting, strided
views, Python scalars (NEP 50), operators, in-place forms and out=."""
import operator
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same
from strategies import (
    ALL_DTYPES, BINARY_OPS, COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, OPS, TERNARY_OPS, UNARY_OPS,
    elements, hsettings, tol, view_of_shape,
)

SETTINGS = hsettings(40)

# ------------------------------------------------------------------ domains
#
# For each op, the values each input takes: (lo, hi) for real inputs, a
# bound on |re| and |im| for complex ones, whether NaN/inf/signed zeros are
# mixed in and whether zero is excluded (integer divisors, where NumPy
# warns and the result is not meaningful).


class Dom:
    def __init__(self, lo=None, hi=None, cmag=4.0, special=False, nonzero_int=False, int_lo=None, int_hi=None,
                 czero=True):
        self.lo, self.hi, self.cmag, self.special, self.czero = lo, hi, cmag, special, czero
        self.nonzero_int, self.int_lo, self.int_hi = nonzero_int, int_lo, int_hi

    def bounds(self, dtype):
        dt = np.dtype(dtype)
        if dt.kind in "iu":
            lo = self.int_lo if self.int_lo is not None else self.lo
            hi = self.int_hi if self.int_hi is not None else self.hi
            return lo, hi
        return self.lo, self.hi

    def strategy(self, dtype):
        dt = np.dtype(dtype)
        if dt.kind == "c":
            m = float(np.float32(self.cmag)) if dt.itemsize == 8 else self.cmag
            part = st.floats(-m, m, width=dt.itemsize * 4, allow_subnormal=False)
            c = st.builds(complex, part, part)
            return c if self.czero else c.filter(lambda z: z != 0)
        lo, hi = self.bounds(dt)
        if dt.kind == "f":
            e = elements(dt, lo, hi)
            if self.special:
                e = st.one_of(e, st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
            return e
        return elements(dt, lo, hi, zero=not self.nonzero_int)

    def sample(self, dtype, rng, shape):
        """Deterministic data of the domain."""
        dt = np.dtype(dtype)
        n = int(np.prod(shape))
        if dt.kind == "b":
            return rng.integers(0, 2, n).astype(bool).reshape(shape)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            lo, hi = self.bounds(dt)
            lo = info.min if lo is None else max(int(np.ceil(lo)), int(info.min))
            hi = info.max if hi is None else min(int(np.floor(hi)), int(info.max))
            # mostly small numbers, some from the whole range (wrap-around)
            small = rng.integers(max(lo, -50), min(hi, 50) + 1, n, dtype=np.int64)
            full = rng.integers(lo, hi, n, dtype=dt, endpoint=True)
            v = np.where(rng.random(n) < 0.7, small.astype(dt), full)
            v[:4] = np.array([min(max(x, lo), hi) for x in (lo, hi, 0, 1)], dtype=dt)
            if self.nonzero_int:
                v[v == 0] = 1 if hi >= 1 else -1
            return v.reshape(shape)
        if dt.kind == "c":
            re = rng.uniform(-self.cmag, self.cmag, n)
            im = rng.uniform(-self.cmag, self.cmag, n)
            v = (re + 1j * im).astype(dt)
            v[:3] = [0 if self.czero else 0.5, 1, -1j]
            if not self.czero:
                v[v == 0] = 1
            return v.reshape(shape)
        lo, hi = self.bounds(dt)
        if lo is None and hi is None:
            mag = 10.0 ** rng.uniform(-3, 2, n)
            v = mag * rng.choice([-1.0, 1.0], n)
        else:
            lo = -100.0 if lo is None else lo
            hi = 100.0 if hi is None else hi
            v = rng.uniform(lo, hi, n)
        v = v.astype(dt)
        if self.special:
            v[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
        return v.reshape(shape)


ANY = Dom()
SPECIAL = Dom(special=True)
POS = Dom(lo=1e-3, hi=1e3)
UNIT = Dom(lo=-0.99, hi=0.99, cmag=0.9)
SMALL = Dom(lo=-5.0, hi=5.0, cmag=3.0)
DIVISOR = Dom(nonzero_int=True)

DOMAINS = {
    # complex 0 excluded for log2/log10 and power's base: test_complex_*_of_zero cover it
    "sqrt": [POS], "log": [POS], "log2": [Dom(lo=1e-3, hi=1e3, czero=False)],
    "log10": [Dom(lo=1e-3, hi=1e3, czero=False)], "log1p": [Dom(lo=-0.9, hi=1e3)],
    "arcsin": [UNIT], "arccos": [UNIT], "arctanh": [UNIT], "arccosh": [Dom(lo=1.0, hi=1e3)],
    "exp": [SMALL], "exp2": [SMALL], "expm1": [SMALL], "sinh": [SMALL], "cosh": [SMALL], "tanh": [SMALL],
    "sin": [Dom(lo=-10, hi=10)], "cos": [Dom(lo=-10, hi=10)], "tan": [Dom(lo=-1.4, hi=1.4, cmag=1.0)],
    "arctan": [ANY], "arcsinh": [ANY],
    "reciprocal": [DIVISOR], "square": [Dom(lo=-200, hi=200)],
    "deg2rad": [Dom(lo=-1000, hi=1000)], "rad2deg": [Dom(lo=-100, hi=100)],
    "isnan": [SPECIAL], "isinf": [SPECIAL], "isfinite": [SPECIAL], "signbit": [SPECIAL],
    "floor": [SPECIAL], "ceil": [SPECIAL], "trunc": [SPECIAL], "rint": [Dom(lo=-1000, hi=1000)],
    "absolute": [SPECIAL], "negative": [SPECIAL], "sign": [SPECIAL], "logical_not": [SPECIAL],
    "divide": [ANY, DIVISOR], "floor_divide": [ANY, DIVISOR], "remainder": [ANY, DIVISOR],
    "fmod": [ANY, DIVISOR],
    "power": [Dom(lo=0.1, hi=10, int_lo=-10, int_hi=10, cmag=2.0, czero=False),
              Dom(lo=-3, hi=3, int_lo=0, int_hi=6, cmag=1.5)],
    "maximum": [SPECIAL, SPECIAL], "minimum": [SPECIAL, SPECIAL],
    "fmax": [SPECIAL, SPECIAL], "fmin": [SPECIAL, SPECIAL],
    "copysign": [SPECIAL, SPECIAL], "nextafter": [SPECIAL, SPECIAL], "hypot": [ANY, ANY],
    "arctan2": [ANY, ANY], "logaddexp": [Dom(lo=-50, hi=50)] * 2, "logaddexp2": [Dom(lo=-50, hi=50)] * 2,
    "equal": [SPECIAL, SPECIAL], "not_equal": [SPECIAL, SPECIAL], "less": [SPECIAL, SPECIAL],
    "less_equal": [SPECIAL, SPECIAL], "greater": [SPECIAL, SPECIAL], "greater_equal": [SPECIAL, SPECIAL],
    "logical_and": [SPECIAL, SPECIAL], "logical_or": [SPECIAL, SPECIAL], "logical_xor": [SPECIAL, SPECIAL],
    "left_shift": [ANY, Dom(int_lo=0, int_hi=7)], "right_shift": [ANY, Dom(int_lo=0, int_hi=70)],
    "gcd": [Dom(int_lo=-10000, int_hi=10000)] * 2, "lcm": [Dom(int_lo=-300, int_hi=300)] * 2,
}


def domains(op):
    return DOMAINS.get(op.name, [ANY] * op.nin)


# Where cudakit and the installed NumPy disagree on purpose-less details
# of the op table (include/cudakit_ops.h belongs to another developer).
KNOWN_DTYPE_BUGS = {}  # (op, dtype) -> reason, for loops known to differ from NumPy


def numpy_call(name, *args, **kw):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*args, **kw)


def check_against_numpy(name, np_args, ck_args, **kw):
    """Compare ck.name(*ck_args) with np.name(*np_args); when NumPy raises
    TypeError (no loop), cudakit must too."""
    try:
        want = numpy_call(name, *np_args, **kw)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(ck, name)(*ck_args, **kw)
        return None
    got = getattr(ck, name)(*ck_args, **kw)
    assert_same(got, want, **tol(np.asarray(want).dtype))
    return got


def _param_op_dtype(ops):
    params = []
    for op in ops:
        for d in ALL_DTYPES:
            marks = ()
            if (op.name, d) in KNOWN_DTYPE_BUGS:
                marks = pytest.mark.xfail(strict=True, reason=KNOWN_DTYPE_BUGS[(op.name, d)])
            params.append(pytest.param(op, d, marks=marks, id=f"{op.name}-{d}"))
    return params


def _seed(*parts):
    return zlib.crc32("/".join(parts).encode())


def _base_exc(e):
    for t in (TypeError, OverflowError, ValueError, ZeroDivisionError):
        if isinstance(e, t):
            return t
    return type(e)


# --------------------------------------------------- every op, every dtype


def test_op_table_is_exported(device):
    for op in OPS:
        f = getattr(ck._core, op.name)
        assert isinstance(f, ck.ufunc)
        if op.nin < 3:  # where and clip have Python wrappers with NumPy's signatures
            assert getattr(ck, op.name) is f
        assert f.nin == op.nin
        assert f.__name__ == op.name
    assert len(UNARY_OPS) >= 40 and len(BINARY_OPS) >= 34
    # the ternary ops have their own tests below; a new one needs one too
    assert {op.name for op in TERNARY_OPS} == {"where", "clip"}


def test_op_table_columns():
    """The exported op table's columns agree with the ufuncs and NumPy."""
    table = ck._core._op_table
    assert [r.num for r in table] == list(range(len(table)))
    for r in table:
        f = getattr(ck._core, r.name)
        assert [t.split("->")[0][-1] for t in f.types] == [np.dtype(d).char for d in r.types]
        assert r.cost in ("cheap", "costly")
        assert set(r.flags) <= {"logical", "compare"}
    names = lambda flag: {r.name for r in table if flag in r.flags}  # noqa: E731
    assert names("logical") == {"logical_and", "logical_or", "logical_xor", "logical_not"}
    assert names("compare") == {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
    # what a libm call computes is not cheap
    assert {"exp", "log", "sin", "power", "arctan2"} <= {r.name for r in table if r.cost == "costly"}


@pytest.mark.parametrize("op,dtype", _param_op_dtype(UNARY_OPS + BINARY_OPS))
def test_op_each_dtype(device, op, dtype):
    rng = np.random.default_rng(_seed(op.name, dtype))
    np_args = [dom.sample(dtype, rng, (5, 13)) for dom in domains(op)]
    ck_args = [ck.asarray(a, device=device) for a in np_args]
    check_against_numpy(op.name, np_args, ck_args)


@pytest.mark.parametrize("dtype", [pytest.param(d, marks=pytest.mark.xfail(
    strict=True, reason=KNOWN_DTYPE_BUGS[("clip", d)])) if ("clip", d) in KNOWN_DTYPE_BUGS else d
    for d in ALL_DTYPES])
def test_clip_each_dtype(device, dtype):
    rng = np.random.default_rng(_seed("clip", dtype))
    a = ANY.sample(dtype, rng, (4, 9))
    lo = ANY.sample(dtype, rng, (4, 9))
    hi = ANY.sample(dtype, rng, (4, 9))
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    check_against_numpy("clip", [a, lo, hi], [ck.asarray(x, device=device) for x in (a, lo, hi)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where_each_dtype(device, dtype):
    rng = np.random.default_rng(_seed("where", dtype))
    c = rng.random((3, 8)) < 0.5
    x = ANY.sample(dtype, rng, (3, 8))
    y = ANY.sample(dtype, rng, (1, 8))
    got = ck.where(ck.asarray(c, device=device), ck.asarray(x, device=device), ck.asarray(y, device=device))
    assert_same(got, np.where(c, x, y))


# ----------------------------------- hypothesis: mixed dtypes, views, broadcasting


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_arctan2_special_values(device, dtype):
    """arctan2 over every pair of signed zeros, ones, infinities, NaN, the
    smallest and largest values: NumPy's (C99's) values and signs."""
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -3e38, 0.5], dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        sp = sp.astype(dtype)
    y, x = np.meshgrid(sp, sp)
    with np.errstate(invalid="ignore"):
        want = np.arctan2(y, x)
    got = ck.arctan2(ck.asarray(y, device=device), ck.asarray(x, device=device))
    assert_same(got, want, **tol(want.dtype))
    num = ~np.isnan(want)   # (a NaN's sign is not specified)
    assert np.array_equal(np.signbit(ck.asnumpy(got))[num], np.signbit(want)[num])


@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sin_cos_large_and_special_values(device, op, dtype):
    """sin and cos at signed zeros, near multiples of pi/2, around and past
    2^20 (where the CPU's float32 reduction hands over to libm), at the
    largest finite values and non-finite ones; in place and strided too."""
    a = np.array([0.0, -0.0, 1e-30, -1e-40, np.pi / 2, -np.pi, 355.0, 1048575.9, 1048576.0, 1048577.0, -3e7,
                  1e30, 3.0e38, np.inf, -np.inf, np.nan], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        a = a.astype(dtype)
        want = getattr(np, op)(a)
    f = getattr(ck, op)
    assert_same(f(ck.asarray(a, device=device)), want, **tol(want.dtype))
    assert np.array_equal(np.signbit(ck.asnumpy(f(ck.asarray(a[:2], device=device)))), np.signbit(want[:2]))
    inplace = ck.asarray(a.copy(), device=device)   # (on the CPU asarray shares a's memory)
    f(inplace, out=inplace)
    assert_same(inplace, want, **tol(want.dtype))
    assert_same(f(ck.asarray(np.repeat(a, 2), device=device)[::2]), want, **tol(want.dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_tanh_special_values(device, dtype):
    """tanh at signed zeros, tiny, the CPU's switch point (0.625), large and
    non-finite values: NumPy's values and signs."""
    a = np.array([0.0, -0.0, 1e-30, -1e-40, 0.625, -0.625, 0.6249, 3.0, -9.0, 44.0, 100.0,
                  np.inf, -np.inf, np.nan], dtype=dtype)
    got = ck.tanh(ck.asarray(a, device=device))
    want = np.tanh(a)
    assert_same(got, want, **tol(want.dtype))
    assert np.array_equal(np.signbit(ck.asnumpy(got)), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_log1p_complex_keeps_the_side_of_the_cut(device, dtype):
    """log1p(z) on the cut (re < -1) takes the side of im's signed zero, as
    NumPy's atan2(im, 1 + re) does; forming 1 + z first would lose it (found
    on the GPU by hypothesis).  Small and huge z keep their digits."""
    a = np.array([complex(-2, -0.0), complex(-2, 0.0), complex(-3.5, -0.0), complex(-0.5, -0.0),
                  complex(-1e-3, 2e-3), complex(3e30, -1.0), complex(-1e30, 0.0)], dtype=dtype)
    got = ck.log1p(ck.asarray(a, device=device))
    # NumPy's complex64 log(hypot(1 + re, im)) loses digits near 0: the
    # reference is its complex128 result, rounded
    want = np.log1p(a.astype(np.complex128)).astype(dtype)
    assert_same(got, want, rtol=1e-6 if dtype == np.complex64 else 1e-14)
    assert np.array_equal(np.signbit(ck.asnumpy(got).imag), np.signbit(np.log1p(a).imag))


@pytest.mark.parametrize("op", UNARY_OPS, ids=str)
@SETTINGS
@given(data=st.data())
def test_unary_views(device, op, data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5), label="shape")
    a, ca = data.draw(view_of_shape(shape, dtype, domains(op)[0].strategy(dtype), device))
    key = (op.name, dtype)
    if key in KNOWN_DTYPE_BUGS:
        return  # covered (and marked) by test_op_each_dtype
    check_against_numpy(op.name, [a], [ca])


@pytest.mark.parametrize("op", BINARY_OPS, ids=str)
@SETTINGS
@given(data=st.data())
def test_binary_mixed_dtypes_broadcast_views(device, op, data):
    d1 = data.draw(st.sampled_from(ALL_DTYPES), label="dtype1")
    d2 = data.draw(st.sampled_from(ALL_DTYPES), label="dtype2")
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4))
    dom = domains(op)
    a, ca = data.draw(view_of_shape(shapes.input_shapes[0], d1, dom[0].strategy(d1), device), label="a")
    b, cb = data.draw(view_of_shape(shapes.input_shapes[1], d2, dom[1].strategy(d2), device), label="b")
    if d1 == d2 and (op.name, d1) in KNOWN_DTYPE_BUGS:
        return
    if op.name == "power" and np.dtype(np.result_type(a, b)).kind in "iu" and (b < 0).any():
        with pytest.raises(ValueError):
            ck.power(ca, cb)
        return
    if op.name == "power" and np.dtype(np.result_type(a, b)).kind == "c" and (a == 0).any():
        return  # covered by test_complex_power_of_zero
    got = check_against_numpy(op.name, [a, b], [ca, cb])
    if got is not None:
        assert got.shape == shapes.result_shape


@SETTINGS
@given(data=st.data())
def test_where_broadcast_views(device, data):
    d1 = data.draw(st.sampled_from(ALL_DTYPES))
    d2 = data.draw(st.sampled_from(ALL_DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
    c, cc = data.draw(view_of_shape(shapes.input_shapes[0], "bool", device=device))
    x, cx = data.draw(view_of_shape(shapes.input_shapes[1], d1, device=device))
    y, cy = data.draw(view_of_shape(shapes.input_shapes[2], d2, device=device))
    assert_same(ck.where(cc, cx, cy), np.where(c, x, y))


def test_where_condition_is_truthiness(device):
    c = np.array([0, 2, -1, 0], dtype=np.int32)
    x, y = np.arange(4.0), -np.arange(4.0)
    assert_same(ck.where(ck.asarray(c, device=device), ck.asarray(x, device=device), ck.asarray(y, device=device)),
                np.where(c, x, y))
    # Python scalars are weak
    xi = np.arange(4, dtype=np.int8)
    assert_same(ck.where(ck.asarray(c > 0, device=device), ck.asarray(xi, device=device), 0),
                np.where(c > 0, xi, 0))
    assert_same(ck.where(ck.asarray(c > 0, device=device), 1.5, 0), np.where(c > 0, 1.5, 0))


def test_where_one_argument(device):
    # where(c) is nonzero(c), tested further with the indexing functions
    # (test_advanced_indexing.py)
    (idx,) = ck.where(ck.asarray([True, False, True], device=device))
    assert idx.device.type == device
    assert_same(idx, np.array([0, 2]))
    with pytest.raises(ValueError):
        ck.where(ck.asarray([True, False], device=device), 1)


@SETTINGS
@given(data=st.data())
def test_clip_forms(device, data):
    dtype = data.draw(st.sampled_from(["int8", "uint16", "int64", "float32", "float64"]))
    a, ca = data.draw(view_of_shape(data.draw(hnp.array_shapes(max_dims=3, max_side=5)), dtype, device=device))
    lo = data.draw(elements(dtype, -100, 50))
    hi = data.draw(elements(dtype, 50, 100))
    assert_same(ck.clip(ca, lo, hi), np.clip(a, lo, hi))
    assert_same(ck.clip(ca, None, hi), np.clip(a, None, hi))
    assert_same(ck.clip(ca, lo, None), np.clip(a, lo, None))
    assert_same(ck.clip(ca, min=lo, max=hi), np.clip(a, min=lo, max=hi))
    assert_same(ca.clip(lo, hi), a.clip(lo, hi))
    assert_same(ca.clip(max=hi), a.clip(max=hi))


def test_clip_bounds_are_arrays(device):
    a = np.linspace(-3, 3, 12).reshape(3, 4)
    lo = np.array([-2.0, -1.0, 0.0, -5.0])
    hi = np.array([[1.0], [2.0], [0.5]])
    assert_same(ck.clip(ck.asarray(a, device=device), ck.asarray(lo, device=device), ck.asarray(hi, device=device)),
                np.clip(a, lo, hi))


# ------------------------------------------------------ special values

@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_nan_propagation(device, name, dtype):
    a = np.array([np.nan, 1.0, np.nan, -np.inf, 0.0, -0.0], dtype=dtype)
    b = np.array([1.0, np.nan, np.nan, 2.0, -0.0, 0.0], dtype=dtype)
    got = getattr(ck, name)(ck.asarray(a, device=device), ck.asarray(b, device=device))
    want = numpy_call(name, a, b)
    assert_same(got, want)
    assert np.array_equal(np.isnan(ck.asnumpy(got)), np.isnan(want))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_floor_divide_remainder_match_python(device, dtype):
    # NumPy (and Python) define a // b through fmod, so 1 // 0.1 == 9
    a = np.array([1.0, -1.0, 7.5, -7.5, 0.0, -0.0, 5.0, 3.0, np.inf, 1.0], dtype=dtype)
    b = np.array([0.1, 0.1, -2.0, 2.0, 3.0, -3.0, 0.0, np.inf, 2.0, -0.0], dtype=dtype)
    for name in ("floor_divide", "remainder", "fmod"):
        got = getattr(ck, name)(ck.asarray(a, device=device), ck.asarray(b, device=device))
        want = numpy_call(name, a, b)
        if name == "floor_divide":
            # an infinite operand: the array API standard's floor(a / b)
            # (inf // 2 is inf where NumPy gives NaN; tests/test_array_api.py)
            with np.errstate(invalid="ignore"):
                want = np.where(np.isinf(a) | np.isinf(b), a / b, want).astype(want.dtype)
        assert_same(got, want)
        # the sign of zero matters here; a NaN's sign is the hardware's
        # default NaN (set on x86, clear on NVIDIA GPUs), which NumPy leaves open
        g = ck.asnumpy(got)
        keep = ~np.isnan(want)
        assert np.array_equal(np.signbit(g[keep]), np.signbit(want[keep])), name


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_edge_cases(device, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, info.min, 7, -7 if info.min < 0 else 7, 0], dtype=dtype)
    b = np.array([-1 if info.min < 0 else 1, 1, 1, -2 if info.min < 0 else 2, 2, 5], dtype=dtype)
    for name in ("floor_divide", "remainder", "fmod"):
        check_against_numpy(name, [a, b], [ck.asarray(a, device=device), ck.asarray(b, device=device)])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_power_negative_exponent_raises(device, dtype):
    if np.dtype(dtype).kind == "u":
        pytest.skip("no negative unsigned exponents")
    a = ck.asarray(np.array([2, 3], dtype=dtype), device=device)
    with pytest.raises(ValueError):
        ck.power(a, ck.asarray(np.array([1, -1], dtype=dtype), device=device))
    with pytest.raises(ValueError):
        a ** -1
    # a float exponent makes it a float power
    assert_same(a ** -1.0, np.array([2, 3], dtype=dtype) ** -1.0)


@pytest.mark.parametrize("name", ["log2", "log10"])
@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_complex_log2_log10_of_zero(device, name, dtype):
    z = np.array([0j, 1 + 0j, 1j], dtype=dtype)
    check_against_numpy(name, [z], [ck.asarray(z, device=device)])


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_complex_power_of_zero(device, dtype):
    a = np.zeros(3, dtype=dtype)
    b = np.array([0, 2, 0.5], dtype=dtype)
    check_against_numpy("power", [a, b], [ck.asarray(a, device=device), ck.asarray(b, device=device)])


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("name", ["sqrt", "log", "exp", "sin", "cos", "tanh", "arcsin", "arctan", "arcsinh",
                                  "reciprocal", "sign", "square", "absolute"])
def test_complex_functions(device, name, dtype):
    re, im = np.meshgrid(np.array([-2.5, -1.0, -0.3, 0.4, 1.0, 3.0]), np.array([-2.0, -0.5, 0.25, 1.0, 2.0]))
    z = (re + 1j * im).astype(dtype)
    check_against_numpy(name, [z], [ck.asarray(z, device=device)])


# ------------------------------------------------------ Python scalars (NEP 50)

SCALARS = [0, 1, 3, -2, 2.5, -0.75, True, False, 1.5 - 0.5j]


@pytest.mark.parametrize("op", [op for op in BINARY_OPS], ids=str)
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "uint64", "float16", "float32", "complex64"])
def test_python_scalar_operands(device, op, dtype):
    """ufunc(array, python_scalar) and ufunc(python_scalar, array): the
    scalar is weak, and must fit the array's integer dtype."""
    rng = np.random.default_rng(_seed(op.name, dtype, "scalar"))
    dom = domains(op)
    for pos in (0, 1):
        arr = dom[pos].sample(dtype, rng, (7,))
        if op.name in ("floor_divide", "remainder", "fmod", "divide") and pos == 1 and arr.dtype.kind in "iu":
            arr[arr == 0] = 1
        for s in SCALARS:
            neg_int = isinstance(s, int) and s < 0
            if op.name in ("left_shift", "right_shift") and pos == 0 and neg_int:
                continue  # negative shift counts: no defined result
            if op.name == "power":
                base = arr if pos == 0 else np.asarray(s)
                if np.result_type(arr, s).kind == "c" and (base == 0).any():
                    continue  # covered by test_complex_power_of_zero
            if (op.name, dtype) in KNOWN_DTYPE_BUGS:
                continue
            np_args = [arr, s] if pos == 0 else [s, arr]
            ck_args = [ck.asarray(arr, device=device), s] if pos == 0 else [s, ck.asarray(arr, device=device)]
            try:
                want = numpy_call(op.name, *np_args)
            except (TypeError, OverflowError, ValueError) as e:
                with pytest.raises(_base_exc(e)):
                    getattr(ck, op.name)(*ck_args)
                continue
            got = getattr(ck, op.name)(*ck_args)
            assert_same(got, want, **tol(np.asarray(want).dtype))


@pytest.mark.parametrize("dtype,value", [("int8", 300), ("int8", -129), ("uint8", -1), ("uint8", 256),
                                         ("int16", 2**15), ("uint32", 2**32), ("int64", 2**63),
                                         ("uint64", -1), ("uint64", 2**64)])
def test_python_int_out_of_range_is_overflow(device, dtype, value):
    a = ck.asarray(np.array([1, 2], dtype=dtype), device=device)
    with pytest.raises(OverflowError):
        np.add(np.array([1, 2], dtype=dtype), value)
    with pytest.raises(OverflowError):
        ck.add(a, value)
    with pytest.raises(OverflowError):
        a + value
    with pytest.raises(OverflowError):
        value + a


def test_nep50_examples(device):
    i8 = ck.asarray(np.array([1, 2], dtype=np.int8), device=device)
    f32 = ck.asarray(np.array([1, 2], dtype=np.float32), device=device)
    f16 = ck.asarray(np.array([1, 2], dtype=np.float16), device=device)
    u8 = ck.asarray(np.array([1, 2], dtype=np.uint8), device=device)
    b = ck.asarray(np.array([True, False]), device=device)
    assert (i8 + 1).dtype == np.int8
    assert (i8 + 1.5).dtype == np.float64
    assert (u8 * 2).dtype == np.uint8
    assert (f32 + 1.0).dtype == np.float32
    assert (f32 + 1).dtype == np.float32
    assert (f16 + 1.0).dtype == np.float16
    assert (f32 + 1j).dtype == np.complex64
    assert (i8 + 1j).dtype == np.complex128
    assert (b + 1).dtype == np.int64
    assert (b + True).dtype == np.bool_
    assert (b + 1.0).dtype == np.float64
    # NumPy scalars are strong
    assert (f32 + np.float64(1.0)).dtype == np.float64
    assert (i8 + np.int16(1)).dtype == np.int16
    assert (i8 + np.int8(1)).dtype == np.int8
    assert (u8 + np.int8(1)).dtype == np.int16
    assert (f16 + np.float32(1)).dtype == np.float32
    assert_same(i8 + np.float64(1.5), np.array([1, 2], dtype=np.int8) + np.float64(1.5))
    # 0-d cudakit arrays are strong too
    assert (f32 + ck.asarray(np.float64(1.0), device=device)).dtype == np.float64
    assert (i8 + ck.asarray(1, device=device)).dtype == np.int64
    # wrapping stays in the small type
    assert_same(i8 + 127, np.array([1, 2], dtype=np.int8) + 127)


# ------------------------------------------------------ operators

BIN_OPERATORS = [
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
    ("floordiv", operator.floordiv), ("mod", operator.mod), ("pow", operator.pow),
    ("lshift", operator.lshift), ("rshift", operator.rshift), ("and", operator.and_), ("or", operator.or_),
    ("xor", operator.xor), ("lt", operator.lt), ("le", operator.le), ("eq", operator.eq), ("ne", operator.ne),
    ("gt", operator.gt), ("ge", operator.ge),
]
INPLACE_OPERATORS = [
    ("iadd", operator.iadd), ("isub", operator.isub), ("imul", operator.imul), ("itruediv", operator.itruediv),
    ("ifloordiv", operator.ifloordiv), ("imod", operator.imod), ("ipow", operator.ipow),
    ("ilshift", operator.ilshift), ("irshift", operator.irshift), ("iand", operator.iand),
    ("ior", operator.ior), ("ixor", operator.ixor),
]


def _operand_values(name, dtype, rng, shape, right):
    dt = np.dtype(dtype)
    return np.asarray(_operand_values_(name, dt, rng, shape, right))


def _operand_values_(name, dt, rng, shape, right):
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if name in ("lshift", "rshift", "ilshift", "irshift") and right:
        return rng.integers(0, 7, shape).astype(dt) if dt.kind in "iu" else rng.random(shape).astype(dt)
    if name in ("pow", "ipow"):
        if right:
            return (rng.integers(0, 4, shape) if dt.kind in "iu" else rng.uniform(-2, 2, shape)).astype(dt)
        return (rng.integers(0, 6, shape) if dt.kind in "iu" else rng.uniform(0.5, 3, shape)).astype(dt)
    if dt.kind in "iu":
        lo = 1 if right and name in ("floordiv", "mod", "ifloordiv", "imod") else (0 if dt.kind == "u" else -20)
        v = rng.integers(lo, 20, shape)
        return v.astype(dt)
    if dt.kind == "c":
        return (rng.uniform(-3, 3, shape) + 1j * rng.uniform(-3, 3, shape)).astype(dt)
    return rng.uniform(-5, 5, shape).astype(dt)


def _same_outcome(f_np, f_ck, np_args, ck_args):
    """Run an operation in NumPy and in cudakit: the same exception type
    (NumPy's UFuncTypeError is a TypeError) or the same result."""
    try:
        with np.errstate(all="ignore"):
            want = f_np(*np_args)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        with pytest.raises(_base_exc(e)):
            f_ck(*ck_args)
        return None
    got = f_ck(*ck_args)
    assert_same(got, want, **tol(np.asarray(want).dtype))
    return got


@pytest.mark.parametrize("name,f", BIN_OPERATORS, ids=[n for n, _ in BIN_OPERATORS])
@SETTINGS
@given(data=st.data())
def test_binary_operators(device, name, f, data):
    d1 = data.draw(st.sampled_from(ALL_DTYPES))
    d2 = data.draw(st.sampled_from(ALL_DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = _operand_values(name, d1, rng, shapes.input_shapes[0], False)
    b = _operand_values(name, d2, rng, shapes.input_shapes[1], True)
    if name == "pow" and np.result_type(a, b).kind in "iu" and (b < 0).any():
        return
    _same_outcome(f, f, [a, b], [ck.asarray(a, device=device), ck.asarray(b, device=device)])


@pytest.mark.parametrize("name,f", BIN_OPERATORS, ids=[n for n, _ in BIN_OPERATORS])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "float64", "complex64"])
def test_operators_with_python_scalars(device, name, f, dtype):
    rng = np.random.default_rng(_seed(name, dtype))
    for s in [2, 3.5, True, 1 - 2j, 0.5]:
        a = _operand_values(name, dtype, rng, (6,), False)
        b = _operand_values(name, dtype, rng, (6,), True)
        if name in ("floordiv", "mod") and (s == 0):
            continue
        # NumPy's ** has fast paths (bool_array ** 2 is square(), int8);
        # cudakit's ** is power() throughout
        fn = np.power if name == "pow" else f
        # array op scalar
        _same_outcome(fn, f, [a, s], [ck.asarray(a, device=device), s])
        # scalar op array (the reflected form)
        if name in ("lshift", "rshift") and np.dtype(dtype).kind in "iu":
            _same_outcome(fn, f, [s, b], [s, ck.asarray(b, device=device)])
        elif name not in ("lshift", "rshift"):
            _same_outcome(fn, f, [s, b], [s, ck.asarray(b, device=device)])


def test_reflected_operators_with_numpy_scalars(device):
    a = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    ca = ck.asarray(a, device=device)
    for s in [np.float64(2.0), np.int8(3), np.float32(0.5), np.uint8(7)]:
        assert_same(ca + s, a + s)
        assert_same(ca * s, a * s)
        assert_same(ca - s, a - s)
        assert_same(ca / s, a / s)
    # a NumPy scalar on the left: NumPy hands the ufunc to us
    # (__array_ufunc__), so the result is a cudakit array on the same device
    r = np.float32(2.0) * ck.asarray(a, device=device)
    assert isinstance(r, ck.ndarray) and r.device == ca.device
    assert_same(r, np.float32(2.0) * a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unary_operators(device, dtype):
    rng = np.random.default_rng(_seed("unary", dtype))
    a = SPECIAL.sample(dtype, rng, (3, 5))
    ca = ck.asarray(a, device=device)
    for f in (operator.neg, operator.pos, operator.abs, operator.invert):
        _same_outcome(f, f, [a], [ca])


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "float32", "float64"])
def test_divmod(device, dtype):
    rng = np.random.default_rng(_seed("divmod", dtype))
    a = _operand_values("floordiv", dtype, rng, (10,), False)
    b = _operand_values("floordiv", dtype, rng, (10,), True)
    q, r = divmod(ck.asarray(a, device=device), ck.asarray(b, device=device))
    wq, wr = divmod(a, b)
    assert_same(q, wq)
    assert_same(r, wr, **tol(dtype))
    q, r = divmod(ck.asarray(a, device=device), 3)
    wq, wr = divmod(a, 3)
    assert_same(q, wq)
    assert_same(r, wr, **tol(dtype))


@pytest.mark.parametrize("name,f", INPLACE_OPERATORS, ids=[n for n, _ in INPLACE_OPERATORS])
@SETTINGS
@given(data=st.data())
def test_inplace_operators(device, name, f, data):
    """a op= b: result cast back to a's dtype under same_kind (else
    TypeError), b broadcast to a's shape (else ValueError), a updated in
    place (the same object, the same memory)."""
    d1 = data.draw(st.sampled_from(ALL_DTYPES))
    d2 = data.draw(st.sampled_from(ALL_DTYPES + ["pyint", "pyfloat", "pycomplex", "pybool"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    bshape = data.draw(hnp.broadcastable_shapes(shape, max_dims=len(shape), max_side=4).filter(
        lambda b: np.broadcast_shapes(shape, b) == shape))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = _operand_values(name, d1, rng, shape, False)
    if d2.startswith("py"):
        b = {"pyint": 2, "pyfloat": 1.5, "pycomplex": 1 + 1j, "pybool": True}[d2]
        cb = b
    else:
        b = _operand_values(name, d2, rng, bshape, True)
        if name == "ipow" and np.result_type(a, b).kind in "iu" and (b < 0).any():
            return
        cb = ck.asarray(b, device=device)
    ca = ck.asarray(a.copy(), device=device)
    before = ca
    ok = _same_outcome(lambda x, y: f(x.copy(), y), f, [a, b], [ca, cb])
    if ok is not None:
        assert ok is before


@pytest.mark.parametrize("dtype,value", [("int64", 1.5), ("int32", 1.5), ("uint8", -1.0), ("int8", 1j),
                                         ("float32", 1j), ("bool", 1), ("bool", 1.0)])
def test_inplace_casting_error(device, dtype, value):
    a = ck.asarray(np.ones(3, dtype=dtype), device=device)
    with pytest.raises(TypeError):
        a += value
    with pytest.raises(TypeError):
        ck.add(a, value, out=a)
    # unchanged
    assert_same(a, np.ones(3, dtype=dtype))


def test_inplace_true_divide_int_raises(device):
    a = ck.arange(5, device=device)
    with pytest.raises(TypeError):
        a /= 2
    a //= 2
    assert_same(a, np.arange(5) // 2)


def test_inplace_on_view_writes_through(device):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    cbase = ck.asarray(base.copy(), device=device)
    v = cbase[::2, ::-3]
    v += 100
    v *= ck.asarray(np.array([2.0, 3.0]), device=device)
    want = base.copy()
    wv = want[::2, ::-3]
    wv += 100
    wv *= np.array([2.0, 3.0])
    assert_same(cbase, want)


def test_inplace_broadcast_to_larger_raises(device):
    a = ck.zeros((3,), device=device)
    with pytest.raises(ValueError):
        a += ck.ones((2, 3), device=device)


def test_matmul_operator(device):
    # @ is ck.matmul (NumPy's on the CPU, cuBLAS on a GPU; tests/test_linalg.py covers it)
    a = ck.ones((2, 2), device=device)
    assert_same(a @ a, np.ones((2, 2)) @ np.ones((2, 2)))
    assert_same(a @ [1.0, 2.0], np.ones((2, 2)) @ [1.0, 2.0])
    assert_same([1.0, 2.0] @ a, [1.0, 2.0] @ np.ones((2, 2)))


def test_comparison_with_incompatible_object(device):
    # element-wise, as NumPy 2: == is all False, != all True, < no loop
    a = ck.arange(3, device=device)
    for other in ("abc", "a", b"a", None, np.str_("a"), np.datetime64("2020-01-01"), [1, "a", 2]):
        assert_same(a == other, np.arange(3) == other)
        assert_same(a != other, np.arange(3) != other)
        assert_same(other == a, other == np.arange(3))
        assert (a == other).device == a.device
    assert_same(ck.zeros((2, 3), device=device) == "a", np.zeros((2, 3)) == "a")
    assert_same(ck.equal(a, None), np.equal(np.arange(3), None))
    with pytest.raises(ValueError):   # the shapes still broadcast
        a == ["a", "b"]
    for other in ("abc", b"a", np.str_("a")):
        for call in (lambda: a < other, lambda: other >= a, lambda: a + other, lambda: ck.equal(a, other)):
            with pytest.raises(np._core._exceptions._UFuncNoLoopError):
                call()
    with pytest.raises(TypeError):
        a < None


def test_comparison_with_a_dtype_cudakit_lacks(device):
    """np.longdouble: == all False, != all True (NumPy compares the values;
    cudakit has no such dtype), never a crash: in NumPy 2.5 the fallback
    through the 0-d array's own == recursed until the C stack overflowed."""
    if not hasattr(np, "longdouble") or np.dtype(np.longdouble).itemsize == 8:
        pytest.skip("longdouble is double here")
    a = ck.arange(3, device=device)
    for other in (np.longdouble(1), np.array(1, dtype=np.longdouble)):
        for got, want in ((a == other, False), (a != other, True), (other == a, False), (other != a, True)):
            assert_same(got, np.full(3, want))
            assert got.device == a.device


# ------------------------------------------------------ out=

@SETTINGS
@given(data=st.data())
def test_out_argument(device, data):
    """ufunc(a, b, out=o): the result is o, cast under same_kind; a strided
    out is written through."""
    op = data.draw(st.sampled_from([o for o in BINARY_OPS if o.name not in ("power", "gcd", "lcm")]))
    d1 = data.draw(st.sampled_from(ALL_DTYPES))
    d2 = data.draw(st.sampled_from(ALL_DTYPES))
    dout = data.draw(st.sampled_from(ALL_DTYPES))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    dom = domains(op)
    a, ca = data.draw(view_of_shape(shapes.input_shapes[0], d1, dom[0].strategy(d1), device))
    b, cb = data.draw(view_of_shape(shapes.input_shapes[1], d2, dom[1].strategy(d2), device))
    o, co = data.draw(view_of_shape(shapes.result_shape, dout, elements(dout, 0, 1), device))
    o = o.copy()
    keep = ck.asnumpy(co).copy()
    try:
        want = numpy_call(op.name, a, b, out=o)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(ck, op.name)(ca, cb, out=co)
        assert_same(co, keep)  # untouched
        return
    got = getattr(ck, op.name)(ca, cb, out=co)
    assert got is co
    # the loop runs in the inputs' dtype and is then cast: its rounding is
    # the loop's (arctan2 of int8 and int16 is float32's, written to float64)
    loop = np.result_type(a, b)
    assert_same(co, want, **tol(loop if loop.kind in "fc" and loop.itemsize < np.dtype(dout).itemsize else dout))
    # positional out, the tuple form, and None
    assert getattr(ck, op.name)(ca, cb, co) is co
    assert getattr(ck, op.name)(ca, cb, out=(co,)) is co
    assert_same(getattr(ck, op.name)(ca, cb, None), numpy_call(op.name, a, b), **tol(want.dtype))


def test_out_shape_mismatch(device):
    a = ck.ones((3, 4), device=device)
    with pytest.raises(ValueError):
        ck.add(a, a, out=ck.empty((4, 3), device=device))
    with pytest.raises(ValueError):
        # out cannot be broadcast
        ck.add(a, a, out=ck.empty((1, 4), device=device))
    with pytest.raises(ValueError):
        ck.negative(a, out=ck.empty((3, 4, 1), device=device))
    with pytest.raises(TypeError):
        ck.add(a, a, out=np.empty((3, 4)))


def test_out_read_only(device):
    a = ck.ones((3,), device=device)
    ro = a.imag
    with pytest.raises(ValueError):
        ck.add(a, a, out=ro)


def test_out_overlapping_input(device):
    a = np.arange(10.0)
    ca = ck.asarray(a.copy(), device=device)
    # out overlaps an input shifted by one: NumPy behaves as if inputs were copied first
    ck.add(ca[1:], ca[:-1], out=ca[:-1])
    aa = a.copy()
    np.add(aa[1:], aa[:-1], out=aa[:-1])
    assert_same(ca, aa)
    cb = ck.asarray(a.copy(), device=device)
    ck.negative(cb[::-1], out=cb)
    bb = a.copy()
    np.negative(bb[::-1], out=bb)
    assert_same(cb, bb)
    cc = ck.asarray(a.copy().reshape(2, 5), device=device)
    cc += cc[::-1]
    cw = a.copy().reshape(2, 5)
    cw += cw[::-1]
    assert_same(cc, cw)


@pytest.mark.parametrize("op", UNARY_OPS + BINARY_OPS, ids=str)
def test_dtype_argument(device, op):
    """dtype= fixes the output dtype and picks the loop with that output;
    the inputs cast to it under same_kind, or TypeError (as NumPy)."""
    for d_in in ALL_DTYPES:
        a = np.ones(3, dtype=d_in)
        ca = ck.asarray(a, device=device)
        for d_out in ALL_DTYPES:
            if (op.name, d_in) in KNOWN_DTYPE_BUGS and d_out == "bool":
                continue
            try:
                want = numpy_call(op.name, *([a] * op.nin), dtype=d_out)
            except TypeError:
                with pytest.raises(TypeError):
                    getattr(ck, op.name)(*([ca] * op.nin), dtype=d_out)
                continue
            got = getattr(ck, op.name)(*([ca] * op.nin), dtype=d_out)
            assert_same(got, want, **tol(want.dtype))
    # with Python scalars: a float cannot join an integer loop
    i8 = ck.asarray(np.ones(2, dtype=np.int8), device=device)
    if op.name == "add":
        assert_same(ck.add(i8, 300, dtype="int16"), np.add(np.ones(2, np.int8), 300, dtype="int16"))
        with pytest.raises(TypeError):
            ck.add(i8, 1.5, dtype="int8")
        with pytest.raises(TypeError):
            ck.add(ck.ones(2, dtype="bool", device=device), 1, dtype="bool")
        with pytest.raises(OverflowError):
            ck.add(i8.astype("uint8"), -1, dtype="uint8")


def test_ufunc_call_errors(device):
    a = ck.ones(3, device=device)
    with pytest.raises(TypeError):
        ck.add(a)
    with pytest.raises(TypeError):
        ck.add(a, a, a, a)
    with pytest.raises(TypeError):
        ck.add(a, a, bogus=1)
    with pytest.raises(TypeError):
        ck.add(a, "x")
    with pytest.raises(TypeError):
        ck.sqrt(None)
    # where= is a composition (python/cudakit/_numpy_extra.py): out keeps its values where it is false
    o = ck.zeros(3, device=device)
    ck.add(a, a, out=o, where=ck.asarray([True, False, True], device=device))
    assert ck.asnumpy(o)[1] == 0


# ------------------------------------------------------ broadcasting


@SETTINGS
@given(data=st.data())
def test_broadcast_error(device, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
    axis = data.draw(st.integers(0, len(shape) - 1))
    bad = list(shape)
    bad[axis] += 1
    a = ck.zeros(shape, device=device)
    b = ck.zeros(tuple(bad), device=device)
    with pytest.raises(ValueError):
        np.add(np.zeros(shape), np.zeros(bad))
    with pytest.raises(ValueError):
        a + b
    with pytest.raises(ValueError):
        ck.add(a, b)
    with pytest.raises(ValueError):
        ck.where(ck.asarray(True, device=device), a, b)


def test_broadcast_lists_and_numpy_arrays(device):
    a = ck.arange(6, device=device).reshape(2, 3)
    assert_same(a + [10, 20, 30], np.arange(6).reshape(2, 3) + [10, 20, 30])
    assert_same([[1], [2]] * a, [[1], [2]] * np.arange(6).reshape(2, 3))
    assert_same(ck.add(a, np.array([1.5, 2.5, 3.5], dtype=np.float32)),
                np.arange(6).reshape(2, 3) + np.array([1.5, 2.5, 3.5], dtype=np.float32))


def test_zero_size_and_zero_d(device):
    e = ck.zeros((0, 3), device=device)
    assert_same(e + 1, np.zeros((0, 3)) + 1)
    assert_same(ck.sin(e), np.zeros((0, 3)))
    z = ck.asarray(2.0, device=device)
    assert_same(z * 3, np.asarray(6.0))
    assert_same(ck.sqrt(z), np.asarray(np.sqrt(2.0)))
    assert_same(z + e, np.zeros((0, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex128"])
def test_large_arrays_threaded(device, dtype):
    """Large enough to be split over threads (and to release the GIL)."""
    n = 300_001
    a = (np.arange(n) % 97).astype(dtype)
    b = (np.arange(n)[::-1] % 13 + 1).astype(dtype)
    ca, cb = ck.asarray(a, device=device), ck.asarray(b, device=device)
    assert_same(ca * cb + ca, a * b + a, **tol(dtype))
    assert_same(ca[::3] - cb[::-3], a[::3] - b[::-3], **tol(dtype))
    big = ck.asarray(a.reshape(-1, 1)[:300_000].reshape(600, 500), device=device)
    assert_same(big.T + big.T, (a[:300_000].reshape(600, 500).T) * 2, **tol(dtype))


def test_round_and_aliases(device):
    a = np.array([0.5, 1.5, 2.5, -0.5, 1.2345, -2.675, 123.456])
    ca = ck.asarray(a, device=device)
    assert_same(ck.round(ca), np.round(a))
    assert_same(ck.round(ca, 2), np.round(a, 2))
    assert_same(ck.round(ca, -1), np.round(a, -1))
    assert_same(ck.around(ca, 1), np.around(a, 1))
    i = np.array([15, 25, -15, 149, 151])
    assert_same(ck.round(ck.asarray(i, device=device), -1), np.round(i, -1))
    assert_same(ck.round(ck.asarray(i, device=device), 2), np.round(i, 2))
    pairs = [("abs", "absolute"), ("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"),
             ("atan2", "arctan2"), ("pow", "power"), ("bitwise_invert", "invert"), ("bitwise_not", "invert"),
             ("bitwise_left_shift", "left_shift"), ("bitwise_right_shift", "right_shift"),
             ("true_divide", "divide"), ("mod", "remainder"), ("conj", "conjugate"),
             ("degrees", "rad2deg"), ("radians", "deg2rad")]
    for alias, name in pairs:
        assert getattr(ck, alias) is getattr(ck, name)
    x = np.array([0.1, 0.5, 0.9])
    assert_same(ck.acosh(ck.asarray(x + 1, device=device)), np.arccosh(x + 1))
    assert_same(ck.degrees(ck.asarray(x, device=device)), np.degrees(x))
    # decimals is a C int, as in NumPy
    with pytest.raises(OverflowError):
        ck.round(ca, 2**40)
    with pytest.raises(TypeError):
        ck.round(ca, 1.5)
    with np.errstate(all="ignore"):
        assert_same(ck.round(ca, -400), np.round(a, -400))
        assert_same(ck.round(ca, 400), np.round(a, 400))
        assert_same(ck.round(ca, -30), np.round(a, -30))
    assert_same(ck.round(ck.asarray(i, device=device), -30), np.round(i, -30))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128", "int32"])
def test_power_of_two_is_square(device, dtype):
    # the operator's fast path (a ** 2 as square) keeps power's values and dtype
    h = (np.array([-2.5, -1, -0.0, 0, 0.5, 3, 7]) * (1 + (dtype.startswith("complex")) * 0.5j)).astype(dtype)
    if h.dtype.kind == "f":
        h = np.concatenate([h, np.array([np.inf, -np.inf, np.nan], dtype)])
    for e in (2, 2.0):
        x = ck.array(h, device=device)
        assert_same(x ** e, h ** e)
        want = h.copy()
        if h.dtype.kind == "i" and isinstance(e, float):
            with pytest.raises(TypeError):
                want **= e
            with pytest.raises(TypeError):
                x **= e
            continue
        want **= e
        x **= e
        assert_same(x, want)


@pytest.mark.parametrize("op", ["sin", "cos"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sin_cos_within_an_ulp_over_wide_ranges(device, op, dtype):
    """The CPU's vectorised sin and cos (cpu_scalar.h) against NumPy's in
    ulps: small, moderate and large arguments, past the reduction's limit
    (2^20, where libm takes over), near multiples of pi/2 (where the
    reduction cancels), and the special values with their signs.  CUDA's
    own functions are documented to 2 ulp."""
    rng = np.random.default_rng(41)
    parts = [rng.uniform(-lo, lo, 20_000) for lo in (1.0, 10.0, 1e3, 1e6, 3e6, 1e12, 1e300)]
    k = rng.integers(-600_000, 600_000, 20_000).astype(np.float64)
    near = k * (np.pi / 2)
    parts.append(near + rng.integers(-3, 4, near.size) * np.spacing(near))
    parts.append(np.array([0.0, -0.0, 5e-324, -1e-310, 1e-20, np.pi / 4, np.pi / 2, np.pi, 1048575.9, 1048576.0,
                           1048577.0, 1.7e308, np.inf, -np.inf, np.nan]))
    with np.errstate(over="ignore"):
        x = np.concatenate(parts).astype(dtype)
    with np.errstate(invalid="ignore"):
        want = getattr(np, op)(x)
    got = ck.asnumpy(getattr(ck, op)(ck.asarray(x, device=device)))
    assert got.dtype == want.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    err = np.abs(got[ok].astype(np.float64) - want[ok]) / np.spacing(np.abs(want[ok]))
    assert err.max() <= (1.0 if device == "cpu" else 2.0), (err.max(), x[ok][np.argmax(err)])
    assert np.array_equal(np.signbit(got[-15:-13]), np.signbit(want[-15:-13]))   # sin(-0.0) is -0.0


# ------------------------------------------------ clip, fused and vectorised
#
# The float loops are a chain of selects (src/formulas/scalar_ops.h,
# ck_clip_<T>); these check it against NumPy at lengths around the vector
# widths and the thread split (cpu_backend.c's CK_PAR_MIN_CHEAP, 2**17),
# with NaN, infinities and signed zeros in a and in the bounds.

CLIP_SIZES = [1, 7, 8, 9, 31, 33, 4097, 2**17 - 1, 2**17, 2**17 + 5]


def _specials_at(data, x, values):
    """x with a few drawn positions set to drawn values of `values`."""
    n = x.size
    for _ in range(data.draw(st.integers(0, 4))):
        x.flat[data.draw(st.integers(0, n - 1))] = data.draw(st.sampled_from(values))
    return x


def _assert_clip_same(got, want, zero_sign=True):
    got = ck.asnumpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok], want[ok])
        if zero_sign:
            np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    else:
        np.testing.assert_array_equal(got, want)


@hsettings(60)
@given(data=st.data())
def test_clip_float_specials(device, data):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES))
    n = data.draw(st.sampled_from(CLIP_SIZES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    a = _specials_at(data, (rng.standard_normal(n) * 2).astype(dtype), specials)
    lo = data.draw(st.sampled_from([-1.0, -0.0, 0.0, -np.inf, np.nan, 0.5]))
    hi = data.draw(st.sampled_from([1.0, 0.0, -0.0, np.inf, np.nan, -0.5]))
    ca = ck.asarray(a, device=device)
    with np.errstate(invalid="ignore"):
        # scalar bounds: NumPy keeps a on ties, so zero signs agree too
        _assert_clip_same(ck.clip(ca, lo, hi), np.clip(a, lo, hi))
        # array bounds, some NaN: NumPy's per-element loop there takes the
        # bound on a tie of zeros for float32/float64 (its scalar-bounds loop
        # keeps a), and so does cudakit's
        blo = _specials_at(data, (rng.standard_normal(n) - 1).astype(dtype), specials)
        bhi = _specials_at(data, (rng.standard_normal(n) + 1).astype(dtype), specials)
        _assert_clip_same(ck.clip(ca, ck.asarray(blo, device=device), ck.asarray(bhi, device=device)),
                          np.clip(a, blo, bhi))
        # strided input and out=
        out = ck.empty((n + 1) // 2, dtype=dtype, device=device)
        r = ck.clip(ca[::2], lo, hi, out=out)
        assert r is out
        _assert_clip_same(out, np.clip(a[::2], lo, hi))


@pytest.mark.parametrize("sa", [(), (1,), (1, 1), (2,)])
@pytest.mark.parametrize("sl", [(), (1,), (1, 1), (2,)])
@pytest.mark.parametrize("sh", [(), (1,), (1, 1), (2,)])
def test_clip_zero_ties_of_one_element_operands(device, sa, sl, sh):
    """A tie of zeros keeps a under NumPy's constant-bounds loop and takes the
    bound under its per-element one; which loop a one-element result gets
    hangs on the operands' dims (src/array/layout.c, ck_iter_prepare)."""
    for a0, lo, hi in [(0.0, -0.0, 1.0), (-0.0, 0.0, 1.0), (0.0, -1.0, -0.0)]:
        a, l, h = np.full(sa, a0), np.full(sl, lo), np.full(sh, hi)
        want = np.clip(a, l, h)
        got = ck.clip(*(ck.asarray(v, device=device) for v in (a, l, h)))
        _assert_clip_same(got, want)


@hsettings(80)
@given(data=st.data())
def test_clip_zeros_and_nans_by_bound_form(device, data):
    """a and the bounds of +-0, NaN and +-1, each bound a Python float, a 0-d
    or one-element array (broadcast: NumPy's constant-bounds loop, where a
    tie keeps a and a NaN bound fills), or an array of a's shape (its
    per-element loop, where a tie takes the bound): values, NaNs and zero
    signs as NumPy's, with float and complex dtypes."""
    dtype = np.dtype(data.draw(st.sampled_from(FLOAT_DTYPES + ["complex64", "complex128"])))
    n = data.draw(st.sampled_from([2, 7, 33, 1000]))
    values = [0.0, -0.0, np.nan, 1.0, -1.0]
    if dtype.kind == "c":            # ordered parts only: NumPy's and cudakit's NaN-imaginary orders differ
        values = [complex(r, i) for r in (0.0, -0.0, 1.0, -1.0) for i in (0.0, -0.0)] + [complex(np.nan, 0.0)]

    def array():
        return np.array(data.draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)), dtype=dtype)

    def bound():
        form = data.draw(st.sampled_from(["python", "0-d", "one", "full"]))
        if form == "full":
            return array()
        v = data.draw(st.sampled_from(values))
        if form == "python":
            return v
        return np.array(v if form == "0-d" else [v], dtype=dtype)

    a, lo, hi = array(), bound(), bound()
    with np.errstate(invalid="ignore"):
        want = np.clip(a, lo, hi)
    got = ck.asnumpy(ck.clip(ck.asarray(a, device=device),
                             *[ck.asarray(b, device=device) if isinstance(b, np.ndarray) else b for b in (lo, hi)]))
    assert got.dtype == want.dtype
    parts = (want.real, want.imag, got.real, got.imag) if dtype.kind == "c" else (want, np.zeros(n), got, np.zeros(n))
    for w, g in ((parts[0], parts[2]), (parts[1], parts[3])):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok])
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))


@hsettings(40)
@given(data=st.data())
def test_clip_int_extremes(device, data):
    dtype = data.draw(st.sampled_from(INT_DTYPES))
    info = np.iinfo(dtype)
    n = data.draw(st.sampled_from(CLIP_SIZES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = _specials_at(data, rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),
                     [info.min, info.max, 0])
    lo = data.draw(st.integers(int(info.min), int(info.max)))
    hi = data.draw(st.integers(int(info.min), int(info.max)))
    ca = ck.asarray(a, device=device)
    _assert_clip_same(ck.clip(ca, lo, hi), np.clip(a, lo, hi))
    blo = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    bhi = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    _assert_clip_same(ck.clip(ca, ck.asarray(blo, device=device), ck.asarray(bhi, device=device)),
                      np.clip(a, blo, bhi))
    out = ck.empty(n, dtype=dtype, device=device)
    ck.clip(ca, lo, hi, out=out)
    _assert_clip_same(out, np.clip(a, lo, hi))
