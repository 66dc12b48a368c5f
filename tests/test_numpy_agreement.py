"""Results that were silently wrong (issue 13), on each device, against
NumPy: shapes with a negative extent, NumPy scalars and arrays of dtypes
cudakit has not, comparisons with text and objects, and the signed zeros
and NaNs of minimum, maximum, fmin, fmax and the min/max reductions."""
import sys
import subprocess

import numpy as np
import pytest

import cudakit as ck
from conftest import assert_same

# ------------------------------------------------------------ shapes


@pytest.mark.parametrize("shape", [(0, -1), (2, 0, -2), (-1,), (-1, 0), (3, -1), -1])
def test_negative_extent_is_a_value_error(device, shape):
    with pytest.raises(ValueError, match="negative dimensions"):
        np.zeros(shape)
    for make in (lambda: ck.zeros(shape, device=device), lambda: ck.ones(shape, device=device),
                 lambda: ck.empty(shape, device=device), lambda: ck.full(shape, 2.0, device=device),
                 lambda: ck.zeros_like(ck.zeros(2, device=device), shape=shape)):
        with pytest.raises(ValueError, match="negative dimensions"):
            make()


def test_shape_extent_errors(device):
    for bad in (2**63, 2**64, (2, 2**63)):
        with pytest.raises(ValueError, match="Maximum allowed dimension"):
            ck.zeros(bad, device=device)
    for bad in (True, (2, False)):
        with pytest.raises(TypeError):
            ck.zeros(bad, device=device)
    with pytest.raises(ValueError, match="too big"):   # a view, but of an impossible size
        ck.broadcast_to(ck.ones(1, device=device), (2**62,))
    assert ck.zeros((0, 3), device=device).shape == (0, 3)


# ------------------------------------------------------------ dtypes cudakit has not

@pytest.mark.parametrize("obj", [
    np.datetime64("2020-01-01"), np.timedelta64(5, "s"), np.array(["2020-01-01"], dtype="M8[D]"),
    np.array(5, dtype="m8[s]"), np.array([1, "a"], dtype=object), np.array([1, 2], dtype=object),
    np.array(["ab", "c"]), np.array([b"ab"]), np.str_("a"), np.bytes_(b"a"), np.void(b"ab"),
    np.array([(1, 2.0)], dtype="i4,f8"), [np.datetime64("2020-01-01")],
], ids=repr)
def test_foreign_numpy_dtype_is_a_type_error(device, obj):
    with pytest.raises(TypeError):
        ck.asarray(obj, device=device)
    with pytest.raises(TypeError):
        ck.array(obj, device=device)


def test_datetime_is_not_read_as_bytes(device):
    with pytest.raises(TypeError, match="datetime64"):
        ck.asarray(np.datetime64("2020-01-01"), device=device)
    with pytest.raises(TypeError, match="timedelta64"):
        ck.asarray(np.timedelta64(5, "s"), device=device)


# ------------------------------------------------------------ comparisons with what cudakit cannot hold

@pytest.mark.parametrize("other", ["a", "abc", b"a", np.str_("a"), None, object(), {}, [1, "a", 2],
                                   np.datetime64("2020-01-01")],
                         ids=lambda o: "object()" if type(o) is object else repr(o))
def test_equality_with_text_and_objects_is_element_wise(device, other):
    for x in (np.arange(3), np.arange(6.0).reshape(2, 3), np.array(True), np.array(2.5)):
        a = ck.asarray(x, device=device)
        if isinstance(other, list) and x.ndim == 2:
            continue
        assert_same(a == other, x == other)
        assert_same(a != other, x != other)
        assert_same(other == a, other == x)
        assert (a == other).device == a.device


class _Plain:
    """An object of a class of its own, with no NumPy protocol."""


class _Deferring:
    """A duck array that takes NumPy's operators over (__array_priority__)."""
    __array_priority__ = 100

    def __eq__(self, other):
        return "deferred"

    __hash__ = object.__hash__


def _gen():
    return (i for i in range(3))


@pytest.mark.parametrize("other", [[1, None, 2], [[1, None, 2]], [2**64, 1, 2], _gen, _Plain(), len,
                                   __import__("decimal").Decimal(1), __import__("fractions").Fraction(1, 2)],
                         ids=lambda o: getattr(o, "__name__", type(o).__name__) if callable(o) or
                         type(o).__repr__ is object.__repr__ else repr(o))   # no addresses: xdist's workers must agree
def test_comparison_with_objects_runs_numpys_object_loop(device, other):
    # NumPy compares element by element through its object loop, numbers as
    # numbers: cudakit gave a 0-d False (Python's identity fallback)
    x = np.arange(3)
    a = ck.asarray(x, device=device)
    for op in ("__eq__", "__ne__", "__lt__", "__ge__"):
        o = other() if other is _gen else other
        try:
            want = getattr(x, op)(o)
        except TypeError as e:
            with pytest.raises(type(e)):
                getattr(a, op)(other() if other is _gen else other)
            continue
        got = getattr(a, op)(other() if other is _gen else other)
        assert_same(got, want)
        assert got.device == a.device
    with pytest.raises(np._core._exceptions._UFuncOutputCastingError):
        a += other() if other is _gen else other


def test_objects_that_take_numpys_operators_over(device):
    a = ck.arange(3, device=device)
    assert (a == _Deferring()) == "deferred"
    assert (_Deferring() == a) == "deferred"


def test_sequences_and_arrays_mixed(device):
    x = np.arange(3.0)
    a = ck.asarray(x, device=device)
    assert_same(a + range(3), x + range(3))
    with pytest.raises(ValueError):
        a == range(2)
    assert_same(ck.asarray([a, [1, 2, 3]]), np.asarray([x, [1, 2, 3]]))
    assert_same(ck.asarray([[1, 2, 3], a, a]), np.asarray([[1, 2, 3], x, x]))
    with pytest.raises(ValueError):
        ck.asarray([a, [1, 2]])


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex64])
def test_python_int_beyond_64_bits_with_float_arrays(device, dt):
    # NumPy converts it to the float loop's dtype; an integer loop refuses it
    x = np.ones(3, dt)
    a = ck.asarray(x, device=device)
    with np.errstate(over="ignore"):
        assert_same(a + 2**64, x + 2**64)
        assert_same(a * -(2**70), x * -(2**70))
        assert_same(ck.full(2, 2**64, dtype=dt, device=device), np.full(2, 2**64, dtype=dt))
        a[0] = 2**64
        x[0] = 2**64
        assert_same(a, x)
    with pytest.raises(OverflowError):
        ck.arange(3, device=device) + 2**64
    with pytest.raises(OverflowError):
        a + 10**400


def test_where_of_none_is_not_a_nonzero(device):
    c = ck.asarray([True, False], device=device)
    for call in (lambda: ck.where(c, 1.0, None), lambda: ck.where(c, None, 1.0)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(ValueError, match="both or neither"):
        ck.where(c, 1.0)


def test_ordering_with_text_has_no_loop(device):
    a = ck.arange(3, device=device)
    no_loop = np._core._exceptions._UFuncNoLoopError
    for other in ("a", b"a", np.str_("a"), ["a", "b", "c"]):
        for call in (lambda: a < other, lambda: a >= other, lambda: other < a, lambda: a + other,
                     lambda: other + a, lambda: ck.add(a, other), lambda: ck.equal(a, other)):
            with pytest.raises(no_loop) as info:
                call()
            assert isinstance(info.value, ck.UFuncTypeError)
    with pytest.raises(no_loop):
        a.__iadd__("a")
    with pytest.raises(np._core._exceptions._UFuncOutputCastingError):
        a.__iadd__(None)
    with pytest.raises(TypeError):
        a + None
    with pytest.raises(TypeError):
        a < None


def test_comparison_with_a_huge_python_int(device):
    a = ck.arange(3, device=device)
    for big in (2**64, -(2**64), 2**100):
        for op in ("__eq__", "__ne__", "__lt__", "__ge__"):
            assert_same(getattr(a, op)(big), getattr(np.arange(3), op)(big))
    with pytest.raises(OverflowError):
        a + 2**64


# ------------------------------------------------------------ minimum, maximum, fmin, fmax

def _bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[x.dtype.itemsize])


def _nans(dt):
    """Two NaNs told apart by sign and payload."""
    u = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dt]
    bits = {np.float16: (0x7E01, 0xFE02), np.float32: (0x7FC00001, 0xFFC00002),
            np.float64: (0x7FF8000000000001, 0xFFF8000000000002)}[dt]
    return np.array(bits, dtype=u).view(dt)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", ["minimum", "maximum", "fmin", "fmax"])
def test_minmax_signed_zeros_and_nans(device, dt, op):
    n1, n2 = _nans(dt)
    vals = np.array([-0.0, 0.0, n1, n2, 1.0, -1.0, np.inf, -np.inf], dtype=dt)
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    f = getattr(np, op)
    for n in (1, 3, 100, 1000):   # the scalar, short and vector paths of both
        x, y = np.repeat(a, n), np.repeat(b, n)
        want = f(x, y)
        got = ck.asnumpy(getattr(ck, op)(ck.asarray(x, device=device), ck.asarray(y, device=device)))
        if op in ("minimum", "maximum"):   # one rule in every NumPy path: the very bits
            np.testing.assert_array_equal(_bits(got), _bits(want))
            continue
        # NumPy's fmin/fmax take libm's fmin for scalars and the ends of a
        # run (the sign of a zero, the NaN of two, vary): its vector loop's
        # answer is the one to have, the rest must agree as values
        np.testing.assert_array_equal(got, want)
        if n == 1000:
            np.testing.assert_array_equal(_bits(got).reshape(64, n)[:, :n // 2], _bits(want).reshape(64, n)[:, :n // 2])
    if op in ("minimum", "maximum"):   # a Python float, the issue's own case
        assert np.signbit(ck.asnumpy(getattr(ck, op)(-0.0, 0.0))) == np.signbit(f(-0.0, 0.0))
        assert np.signbit(ck.asnumpy(getattr(ck, op)(0.0, -0.0))) == np.signbit(f(0.0, -0.0))


def test_minimum_of_zeros_as_the_issue_says(device):
    assert not np.signbit(np.minimum(-0.0, 0.0))
    r = ck.minimum(-0.0, 0.0)
    assert float(r) == 0.0 and not np.signbit(ck.asnumpy(r))
    r = ck.maximum(ck.asarray([0.0], device=device), -0.0)
    assert np.signbit(ck.asnumpy(r)[0]) == np.signbit(np.maximum(np.array([0.0]), -0.0)[0])


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", ["minimum", "maximum", "fmin", "fmax"])
def test_minmax_complex_ties(device, dt, op):
    vals = np.array([complex(-0.0, 0.0), complex(0.0, 0.0), complex(1, -0.0), complex(1, 0.0)], dtype=dt)
    x, y = np.repeat(vals, 4), np.tile(vals, 4)
    want = getattr(np, op)(x, y)
    got = ck.asnumpy(getattr(ck, op)(ck.asarray(x, device=device), ck.asarray(y, device=device)))
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_clip_keeps_the_value_at_a_bound(device):
    for dt in (np.float16, np.float32, np.float64):
        for a, lo, hi in ((-0.0, 0.0, 1.0), (0.0, -0.0, 1.0), (-0.0, -1.0, 0.0), (0.0, -1.0, -0.0)):
            x = np.full(5, a, dt)
            want = np.clip(x, dt(lo), dt(hi))
            got = ck.asnumpy(ck.clip(ck.asarray(x, device=device), dt(lo), dt(hi)))
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("red", ["min", "max"])
def test_min_max_reductions_signed_zeros(device, dt, red):
    rng = np.random.default_rng(5)
    # NumPy's float32/float64 reductions keep the later of equal zeros, except
    # where its SIMD lanes meet (some lengths of 9 and more): short runs and
    # reductions along an axis are where its rule shows
    for n in (1, 2, 3, 4, 5, 7, 8):
        for _ in range(20):
            x = np.where(rng.random(n) < 0.5, -0.0, 0.0).astype(dt)
            if rng.random() < 0.3:
                x = x + (1 if red == "min" else -1) * (rng.random(n) < 0.3)
            want = getattr(np, red)(x)
            got = ck.asnumpy(getattr(ck, red)(ck.asarray(x, device=device)))
            assert np.signbit(np.real(got)) == np.signbit(np.real(want)), (x, got, want)
    x = np.where(rng.random((50, 7)) < 0.5, -0.0, 0.0).astype(dt)
    for axis in (0, 1):
        want = getattr(np, red)(x, axis=axis)
        got = ck.asnumpy(getattr(ck, red)(ck.asarray(x, device=device), axis=axis))
        np.testing.assert_array_equal(np.signbit(np.real(got)), np.signbit(np.real(want)))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("red", ["min", "max"])
def test_min_max_reductions_nans(device, dt, red):
    for n in (3, 100, 5000):
        x = np.ones(n, dt)
        x[n // 2] = np.nan
        assert np.isnan(ck.asnumpy(getattr(ck, red)(ck.asarray(x, device=device))))
        x = np.arange(n, dtype=dt).reshape(1, n).repeat(3, 0)
        x[1, -1] = np.nan
        assert_same(getattr(ck, red)(ck.asarray(x, device=device), axis=1), getattr(np, red)(x, axis=1))


def test_numpy_not_imported_by_import_cudakit():
    code = "import sys, cudakit; assert 'numpy' not in sys.modules, 'numpy imported'; print('ok')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={"CUDAKIT_DEVICE": "cpu", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ------------------------------------------------------------ NumPy 2.5's deprecations

def test_non_integer_k_is_deprecated_and_truncated(device):
    # NumPy 2.5 warns and truncates (rot90 through int(), tri through an
    # integer arange); NumPy 2.4 rotated a float k as k=3, so the expected
    # values are the integer k's
    m = np.arange(6.0).reshape(2, 3)
    for k in (1.5, 2.25, -1.5):
        with pytest.warns(DeprecationWarning, match="rot90"):
            got = ck.rot90(ck.asarray(m, device=device), k=k)
        assert_same(got, np.rot90(m, k=int(k)))
        with pytest.warns(DeprecationWarning, match="tri"):
            got = ck.tri(3, 4, k=k, device=device)
        assert_same(got, np.tri(3, 4, k=int(k)))
    with pytest.raises(TypeError):
        ck.rot90(ck.asarray(m, device=device), k="1")
