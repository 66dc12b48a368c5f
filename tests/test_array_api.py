"""The array API standard's namespace (issue 17) on both devices, the
special values the standard fixes, NumPy's dispatch (NEP 18) and 0-d arrays
in ordinary scripts.  The standard's own suite runs in `make test-array-api`."""
import cmath
import operator

import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda
from conftest import assert_same

# signed zeros, ones, a finite value, infinities and NaN: every pair of
# these as (re, im) is a special value of a complex function
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan]


def _complex_grid(dtype):
    return np.array([complex(a, b) for a in SPECIAL for b in SPECIAL], dtype=dtype)


def _same_parts(got, want, zero_signs=True):
    """Equal parts: NaN where NaN is due (its sign is not specified), the
    same infinities, the sign of a zero where both give zero (unless
    zero_signs is False: C99 leaves some unspecified); other finite
    values to a few ulps of the operands' scale (quotients' last bits differ
    between NumPy's releases)."""
    ok = np.ones(got.shape, bool)
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        eps = 4 * np.finfo(g.dtype).eps
        with np.errstate(invalid="ignore", over="ignore"):
            both_inf = np.isinf(g) & np.isinf(w) & (g == w)
            fin = np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= eps * np.maximum(1, np.abs(w)))
            if zero_signs:
                fin &= ~((g == 0) & (w == 0)) | (np.signbit(g) == np.signbit(w))
        ok &= (np.isnan(g) & np.isnan(w)) | both_inf | fin
    return ok


def _reference(name, z):
    """NumPy's values (C99's, through the C library), except where the
    array API standard differs: tanh(inf + iy) is 1 + 0j for finite y > 0
    (C99: 1 + i0 sin 2y), and so tan(x + i inf) = -i tanh(iz) is 0 + 1j."""
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    if name == "tanh":
        at = np.isinf(z.real) & np.isfinite(z.imag)
        want.imag[at] = np.copysign(0, z.imag[at])
    if name == "tan":
        at = np.isinf(z.imag) & np.isfinite(z.real)
        want.real[at] = np.copysign(0, z.real[at])
    return want


def _report(z, got, want, ok):
    return [(z[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:10]]


# ------------------------------------------------------------ the namespace

def test_namespace_version_and_info(device):
    x = ck.zeros(3, device=device)
    assert x.__array_namespace__() is ck
    assert x.__array_namespace__(api_version="2024.12") is ck
    assert ck.__array_api_version__ == "2024.12"
    info = ck.__array_namespace_info__()
    devs = info.devices()
    assert isinstance(devs, list) and devs[0] == ck.Device("cpu")
    assert len(devs) == 1 + ck.cuda.device_count()
    assert x.device in devs and info.default_device() in devs
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True,
                                   "max dimensions": ck._core.MAXDIMS}
    assert info.default_dtypes(device=x.device) == {"real floating": ck.float64, "complex floating": ck.complex128,
                                                    "integral": ck.int64, "indexing": ck.int64}
    assert set(info.dtypes(device=x.device)) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                                 "uint32", "uint64", "float32", "float64", "complex64", "complex128"}
    assert list(info.dtypes(kind="integral")) == ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64", "complex128"]
    with pytest.raises(ValueError):
        info.dtypes(kind="floating")


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_as_numpy(name):
    got, want = ck.finfo(getattr(ck, name)), np.finfo(name)
    for field in ("bits", "eps", "epsneg", "max", "min", "smallest_normal", "tiny", "smallest_subnormal",
                  "resolution", "precision", "nmant", "nexp", "maxexp", "minexp", "machep", "negep", "iexp"):
        v = getattr(got, field)
        assert v == getattr(want, field), field
        assert type(v) is (int if field in ("bits", "precision", "nmant", "nexp", "maxexp", "minexp", "machep",
                                            "negep", "iexp") else float), field
    assert got.dtype == want.dtype and isinstance(got.dtype, ck.dtype)
    assert ck.finfo(ck.ones(1, dtype=name)) is got
    with pytest.raises(ValueError):
        ck.finfo(ck.int32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo_as_numpy(name):
    got, want = ck.iinfo(name), np.iinfo(name)
    assert (got.bits, got.min, got.max, got.kind) == (want.bits, want.min, want.max, want.kind)
    assert type(got.max) is int and got.dtype == getattr(ck, name)
    assert ck.iinfo(ck.zeros(1, dtype=name)).max == want.max
    with pytest.raises(ValueError):
        ck.iinfo(ck.float32)


def test_astype(device):
    x = ck.arange(4, device=device)
    y = ck.astype(x, ck.float32)
    assert y.dtype == ck.float32 and y.device == x.device
    assert ck.astype(x, ck.int64, copy=False) is x
    assert ck.astype(x, ck.int64, device="cpu").device == ck.Device("cpu")
    with pytest.raises(TypeError):
        ck.astype([1, 2], ck.float32)


def test_cumulative_prod(device):
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    x = ck.asarray(a, device=device)
    assert_same(ck.cumulative_prod(x, axis=1), np.cumprod(a, axis=1))
    assert_same(ck.cumulative_prod(x, axis=0, include_initial=True),
                np.concatenate([np.ones((1, 3), np.int32), np.cumprod(a, axis=0)]))
    assert_same(ck.cumulative_prod(ck.asarray([2.0, 3.0], device=device)), np.array([2.0, 6.0]))
    with pytest.raises(ValueError):
        ck.cumulative_prod(x)


def test_signatures_and_small_functions(device):
    import inspect

    assert list(inspect.signature(ck.clip).parameters)[:3] == ["a", "min", "max"]
    assert list(inspect.signature(ck.isdtype).parameters) == ["dtype", "kind"]
    x = ck.asarray([-2.0, 0.5, 3.0], device=device)
    assert_same(ck.clip(x, -1, 1), np.clip([-2.0, 0.5, 3.0], -1, 1))
    assert_same(ck.clip(x, a_min=-1, a_max=1), np.clip([-2.0, 0.5, 3.0], -1, 1))
    r = ck.broadcast_arrays(ck.ones(3, device=device), ck.ones((2, 1), device=device))
    assert isinstance(r, list) and [v.shape for v in r] == [(2, 3), (2, 3)]
    for k in (2**70, -(2**70), 2**62, 5, -3):
        assert_same(ck.eye(3, 4, k=k, device=device), np.eye(3, 4, k=builtins_clamp(k)))
    with pytest.raises(TypeError):
        ck.eye(3, k=1.5)


def builtins_clamp(k):
    return max(min(k, 10), -10)


def test_empty_mask_axis(device):
    a = np.zeros((2, 1), bool)
    m = np.zeros((2, 0), bool)
    assert_same(ck.asarray(a, device=device)[ck.asarray(m, device=device)], a[m])
    with pytest.raises(IndexError):
        ck.zeros((0, 3), device=device)[ck.zeros((0, 2), dtype=bool, device=device)]


# --------------------------------------------------------- special values

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_divide_with_infinities(device, dtype):
    """The standard's floor(a / b) where an operand is infinite (NumPy's
    fmod-based loop gives NaN for inf // 2 and -1 for 1 // -inf)."""
    inf = np.inf
    a = np.array([inf, inf, -inf, -inf, 1.0, -1.0, 1.0, -1.0, 0.0, -0.0, inf, 7.0], dtype=dtype)
    b = np.array([2.0, -2.0, 2.0, -2.0, -inf, inf, inf, -inf, inf, inf, inf, 2.0], dtype=dtype)
    want = np.array([inf, -inf, -inf, inf, -0.0, -0.0, 0.0, 0.0, 0.0, -0.0, np.nan, 3.0], dtype=dtype)
    for got in (ck.floor_divide(ck.asarray(a, device=device), ck.asarray(b, device=device)),
                ck.asarray(a, device=device) // ck.asarray(b, device=device)):
        g = ck.asnumpy(got)
        assert g.dtype == dtype
        assert np.array_equal(g, want, equal_nan=True) and np.array_equal(np.signbit(g[:-2]), np.signbit(want[:-2]))
    x = ck.asarray(a, device=device)
    x //= ck.asarray(b, device=device)
    assert np.array_equal(ck.asnumpy(x), want, equal_nan=True)


COMPLEX_UNARY = ["exp", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "arccos", "arcsin", "arctan",
                 "sin", "cos", "tan"]


@pytest.mark.parametrize("name", COMPLEX_UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_unary_special_values(device, name, dtype):
    """Every pair of signed zeros, ones, infinities and NaN as (re, im):
    C99's values and signs (NumPy's, through the C library), or the array
    API standard's where it differs; both devices take them from src/formulas."""
    z = _complex_grid(dtype)
    want = _reference(name, z)
    got = ck.asnumpy(getattr(ck, name)(ck.asarray(z, device=device)))
    assert got.dtype == dtype
    ok = _same_parts(got, want)
    assert ok.all(), _report(z, got, want, ok)


# The GPU's complex formulas (src/codegen/cuda_prelude.cuh before
# src/formulas/scalar_ops.h) also compile for the CPU as the environment of
# Python kernels: these kernels run them on both devices, so the CPU checks
# what the GPU computes (the finite formulas as well as the special values).
@cuda.jit
def _k_exp(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.exp(z[i])


@cuda.jit
def _k_sinh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.sinh(z[i])


@cuda.jit
def _k_cosh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.cosh(z[i])


@cuda.jit
def _k_tanh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.tanh(z[i])


@cuda.jit
def _k_asinh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.asinh(z[i])


@cuda.jit
def _k_acosh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.acosh(z[i])


@cuda.jit
def _k_atanh(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.atanh(z[i])


@cuda.jit
def _k_acos(z, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = cmath.acos(z[i])


@cuda.jit
def _k_div(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] / b[i]


_KERNELS = {"exp": _k_exp, "sinh": _k_sinh, "cosh": _k_cosh, "tanh": _k_tanh, "arcsinh": _k_asinh,
            "arccosh": _k_acosh, "arctanh": _k_atanh, "arccos": _k_acos}


@pytest.mark.parametrize("name", sorted(_KERNELS))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_gpu_complex_formulas_in_a_kernel(device, name, dtype):
    if device == "cpu" and not ck._core._cpu_kernels_available():
        pytest.skip("no C++ compiler for CPU kernels")
    z = _complex_grid(dtype)
    want = _reference(name, z)
    out = ck.zeros(z.size, dtype=dtype, device=device)
    _KERNELS[name][1, 128](ck.asarray(z, device=device), out)
    got = ck.asnumpy(out)
    ok = _same_parts(got, want)
    assert ok.all(), _report(z, got, want, ok)
    a, b = (v.ravel() for v in np.meshgrid(z, z))
    with np.errstate(all="ignore"):
        want = a / b
    out = ck.zeros(a.size, dtype=dtype, device=device)
    _k_div[(a.size + 127) // 128, 128](ck.asarray(a, device=device), ck.asarray(b, device=device), out)
    ok = _same_parts(ck.asnumpy(out), want)
    assert ok.all(), [(a[i], b[i], ck.asnumpy(out)[i], want[i]) for i in np.nonzero(~ok)[0][:10]]


@cuda.jit
def _k_pow(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] ** b[i]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_with_non_finite_exponents(device, dtype):
    """A finite nonzero base to an exponent with an infinite or NaN part is
    the C library's cpow, exp(b log a) (NumPy's, and the CPU loops'): on
    the GPU the prelude's, whose product recovers infinities as C99 Annex G
    does and whose exp has C99's special values ((-1) ** (0+infj) is 0-0j,
    not nan+nanj).  The Python kernel runs the prelude on the CPU too."""
    if device == "cpu" and not ck._core._cpu_kernels_available():
        pytest.skip("no C++ compiler for CPU kernels")
    z = _complex_grid(dtype)
    a, b = (v.ravel() for v in np.meshgrid(z, z))
    keep = np.isfinite(a) & (a != 0) & ~np.isfinite(b)
    a, b = a[keep], b[keep]
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    out = ck.zeros(a.size, dtype=dtype, device=device)
    _k_pow[(a.size + 127) // 128, 128](ck.asarray(a, device=device), ck.asarray(b, device=device), out)
    for got in (ck.asnumpy(out), ck.asnumpy(ck.power(ck.asarray(a, device=device), ck.asarray(b, device=device)))):
        # exp(-inf + nanj) is +-0 +-0j, its signs unspecified (C99 G.6.3.1):
        # x86's 0 * inf is a NaN with its sign bit set, a GPU's without it
        ok = _same_parts(got, want, zero_signs=False)
        assert ok.all(), [(a[i], b[i], got[i], want[i]) for i in np.nonzero(~ok)[0][:10]]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_expm1_special_values(device, dtype):
    """expm1 where a part is non-finite is the standard's exp(z) - 1 (NumPy's
    formula gives NaN from inf * 0 there); expm1(+-0 + 0j) is +0 + 0j."""
    z = _complex_grid(dtype)
    with np.errstate(all="ignore"):
        fin = np.isfinite(z.real) & np.isfinite(z.imag)
        want = np.where(fin, np.expm1(z), np.exp(z) - 1).astype(dtype)
    want[(z.real == 0) & (z.imag == 0)] = np.array([complex(0.0, v) for v in z.imag[(z.real == 0) & (z.imag == 0)]])
    got = ck.asnumpy(ck.expm1(ck.asarray(z, device=device)))
    ok = _same_parts(got, want)
    assert ok.all(), _report(z, got, want, ok)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_division_special_values(device, dtype):
    """a / b over every pair of special complex values: NumPy's quotients,
    signs of zeros and infinities included."""
    z = _complex_grid(dtype)
    a, b = np.meshgrid(z, z)
    with np.errstate(all="ignore"):
        want = a / b
    got = ck.asnumpy(ck.asarray(a, device=device) / ck.asarray(b, device=device))
    ok = _same_parts(got, want)
    assert ok.all(), [(a.ravel()[i], b.ravel()[i], got.ravel()[i], want.ravel()[i]) for i in np.nonzero(~ok.ravel())[0][:10]]


# ----------------------------------------------------- NumPy's dispatch

def test_numpy_functions_run_cudakit_on_the_device(device):
    a = np.array([[3.0, 1.0], [2.0, 5.0]])
    x = ck.asarray(a, device=device)
    cases = [
        (np.concatenate, ([x, x],), {"axis": 0}, np.concatenate([a, a], axis=0)),
        (np.sort, (x,), {}, np.sort(a)),
        (np.mean, (x,), {"axis": 1}, np.mean(a, axis=1)),
        (np.sum, (x,), {}, np.sum(a)),
        (np.where, (x > 2, x, 0.0), {}, np.where(a > 2, a, 0.0)),
        (np.stack, ((x, x),), {"axis": -1}, np.stack((a, a), axis=-1)),
        (np.transpose, (x,), {}, a.T),
        (np.linalg.norm, (x,), {}, np.linalg.norm(a)),
    ]
    for f, args, kw, want in cases:
        got = f(*args, **kw)
        assert isinstance(got, ck.ndarray), f.__name__
        assert got.device == x.device, f.__name__
        assert_same(got, want)
    assert isinstance(np.sin(x), ck.ndarray) and np.sin(x).device == x.device   # __array_ufunc__ still


def test_numpy_function_cudakit_lacks_raises(device):
    x = ck.ones(3, device=device)
    with pytest.raises(TypeError, match="sliding_window_view"):
        np.lib.stride_tricks.sliding_window_view(x, 2)


def test_dispatch_leaves_other_types_alone():
    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return "other"

    # NumPy asks each type; ours declines a call with a type it does not know
    assert ck.ones(2).__array_function__(np.concatenate, (ck.ndarray, Other), ([ck.ones(2), Other()],), {}) \
        is NotImplemented
    assert np.concatenate([np.ones(2), np.ones(2)]).shape == (4,)


# --------------------------------------------------------------- 0-d arrays

def test_zero_d_in_a_script(device):
    x = ck.asarray([1.5, 2.5, 3.25], device=device)
    m = x.mean()
    assert f"{m:.2f}" == "2.42" and f"{m}" == str(float(m)) and "%.1f" % m == "2.4"
    assert format(ck.asarray(7, device=device), "03d") == "007"
    assert str(x) == format(x, "")
    with pytest.raises(TypeError):
        format(x, ".2f")
    r = round(m)
    assert r == 2 and type(r) is int
    r1 = round(m, 1)
    assert isinstance(r1, ck.ndarray) and r1.ndim == 0 and float(r1) == 2.4 and r1.dtype == ck.float64
    assert round(ck.asarray(17, device=device), -1).item() == 20
    assert round(ck.asarray(2.5, dtype=ck.float32, device=device)) == 2
    with pytest.raises(TypeError):
        round(ck.asarray(1 + 2j, device=device))
    with pytest.raises(TypeError):
        round(x)
    assert_same(round(x, 0), np.round([1.5, 2.5, 3.25], 0))
    i = ck.asarray(3, device=device)
    assert operator.index(i) == 3 and list(range(i)) == [0, 1, 2] and [10, 20, 30, 40][i] == 40
    with pytest.raises(TypeError):
        operator.index(ck.asarray(3.0, device=device))
    with pytest.raises(TypeError):
        iter(m)


def test_iteration_yields_numpy_scalars(device):
    a = np.array([3, 1, 3], dtype=np.int16)
    x = ck.asarray(a, device=device)
    items = list(x)
    assert items == list(a) and all(type(v) is np.int16 for v in items)
    assert set(x) == {1, 3} and {v: 0 for v in x} == {3: 0, 1: 0}
    rows = list(ck.asarray(np.arange(6.0).reshape(2, 3), device=device))
    assert all(isinstance(r, ck.ndarray) and r.shape == (3,) and r.device == x.device for r in rows)
    assert sorted(ck.asarray([2.5, -1.0], device=device)) == [-1.0, 2.5]
