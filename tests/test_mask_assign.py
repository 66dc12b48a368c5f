"""x[mask] = v: a scalar, a 0-d array or a row that does not depend on how
many elements the mask selects (one in-place where() kernel), and values
of the mask's count (the general path), compared with NumPy, errors and
warnings included."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]
SCALARS = [0, 1, -3, 7, 2.7, -0.5, True, False, 1.5 + 2j, np.float64(2.7), np.int64(300), np.int8(-5),
           np.complex128(3 - 1j), np.bool_(True), np.float16(1.25), np.uint8(200)]


def outcome(fn):
    """(result or exception type, warning categories) of fn()."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:   # noqa: BLE001 - the type is what is compared
            r = type(e)
    return r, sorted({x.category.__name__ for x in w if x.category is not RuntimeWarning})


def same_assign(device, x, key_np, value, value_ck=None, view=None):
    """Run x[key] = value in NumPy and in cudakit (on the view of x that
    `view` makes), comparing the arrays, the errors and the warnings."""
    view = view or (lambda a: a)
    a = x.copy()
    c = ck.asarray(x, device=device)
    key_ck = ck.asarray(key_np, device=device) if isinstance(key_np, np.ndarray) else key_np
    vc = value if value_ck is None else value_ck

    def run_np():
        view(a)[key_np] = value

    def run_ck():
        view(c)[key_ck] = vc

    want, wwarn = outcome(run_np)
    got, gwarn = outcome(run_ck)
    if isinstance(want, type):
        assert got is want or (isinstance(got, type) and issubclass(got, want)), (got, want)
        return
    assert not isinstance(got, type), got
    # NumPy casts an array's values only for the selected elements, so it
    # does not warn when none is selected; cudakit warns on the dtypes alone
    # (no count read back for a warning)
    if not (isinstance(value, np.ndarray) and not np.asarray(key_np).any()):
        assert gwarn == wwarn, (gwarn, wwarn)
    assert_same(c, a)


@st.composite
def cases(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd)))
    dtype = draw(st.sampled_from(DTYPES))
    fill = draw(st.sampled_from(["random", "none", "all"]))
    seed = draw(st.integers(0, 2**31))
    view = draw(st.sampled_from(["plain", "step", "transposed", "reversed"]))
    return shape, dtype, fill, seed, view


def make(shape, dtype, fill, seed, view):
    rng = np.random.default_rng(seed)
    base_shape = {"step": shape[:-1] + (2 * shape[-1],), "transposed": shape[::-1]}.get(view, shape)
    x = rng.integers(-20, 20, size=base_shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-20, 20, size=base_shape)
    x = x.astype(dtype)
    fn = {"plain": lambda a: a, "step": lambda a: a[..., ::2], "transposed": lambda a: a.T,
          "reversed": lambda a: a[::-1]}[view]
    mask = {"random": rng.random(shape) < 0.5, "none": np.zeros(shape, bool), "all": np.ones(shape, bool)}[fill]
    return x, mask, fn


@SETTINGS
@given(data=cases(), value=st.sampled_from(SCALARS))
def test_scalar_into_mask(device, data, value):
    x, mask, view = make(*data)
    same_assign(device, x, mask, value, view=view)


@SETTINGS
@given(data=cases(), vdtype=st.sampled_from(DTYPES), vshape=st.sampled_from([(), (1,)]))
def test_one_element_array_into_mask(device, data, vdtype, vshape):
    x, mask, view = make(*data)
    v = np.full(vshape, 3, dtype=vdtype)
    same_assign(device, x, mask, v, ck.asarray(v, device=device), view=view)


@SETTINGS
@given(data=cases(), extra=st.integers(-1, 1))
def test_values_of_the_count(device, data, extra):
    x, mask, view = make(*data)
    n = int(mask.sum()) + extra
    if n < 0:
        return
    v = (np.arange(n) % 5).astype(x.dtype)
    same_assign(device, x, mask, v, ck.asarray(v, device=device), view=view)


@pytest.mark.parametrize("dtype", ["int32", "float32", "complex128", "bool"])
def test_leading_mask_rows(device, dtype):
    rng = np.random.default_rng(4)
    x = rng.integers(-9, 9, size=(3, 4, 5)).astype(dtype)
    m2 = rng.random((3, 4)) < 0.5
    m1 = np.array([True, False, True])
    row = np.arange(5).astype(dtype)
    for key in [m2, m1]:
        for v in [7, np.float64(2.5), row, row[None], row[None, None], np.ones((1, 1), dtype)]:
            same_assign(device, x, key, v, ck.asarray(v, device=device) if isinstance(v, np.ndarray) else None)
    # values of the count along the kept dims, and a bad count
    k = int(m2.sum())
    v = np.arange(k * 5).reshape(k, 5).astype(dtype)
    same_assign(device, x, m2, v, ck.asarray(v, device=device))
    same_assign(device, x, m2, v[:, :1], ck.asarray(v[:, :1], device=device))
    bad = np.ones((k + 1, 5), dtype)
    same_assign(device, x, m2, bad, ck.asarray(bad, device=device))


def test_errors_and_casts(device):
    x = np.arange(6, dtype="int32")
    m = x % 2 == 0
    same_assign(device, x, m, 2.7)                       # truncated, as NumPy
    same_assign(device, x, m, 1j)                        # TypeError
    same_assign(device, x.astype("float64"), m, 1j)      # TypeError
    same_assign(device, x, m, np.complex128(3 + 1j))     # ComplexWarning, real part
    same_assign(device, x.astype("int8"), m, 300)        # OverflowError
    same_assign(device, x.astype("int8"), m, np.int64(300))   # wraps
    same_assign(device, x, m, float("nan"))              # ValueError
    same_assign(device, x, m, float("inf"))              # OverflowError
    same_assign(device, x, np.ones(5, bool), 1)          # IndexError: the mask's length
    v2 = np.ones((1, 1), "int32")
    same_assign(device, x, m, v2, ck.asarray(v2, device=device))     # TypeError: 2-d values
    v3 = np.ones(2, "int32")
    same_assign(device, x, m, v3, ck.asarray(v3, device=device))     # ValueError: 2 values for 3
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 3 output values"):
        c = ck.asarray(x, device=device)
        c[ck.asarray(m, device=device)] = ck.asarray(v3, device=device)
    # a NumPy mask and a mask from another device
    c = ck.asarray(x, device=device)
    c[m] = 5
    x2 = x.copy()
    x2[m] = 5
    assert_same(c, x2)
    c[ck.asarray(~m, device="cpu")] = -1
    x2[~m] = -1
    assert_same(c, x2)


def test_value_from_the_array_itself_and_read_only(device):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    c = ck.asarray(x, device=device)
    m = x > 5
    c[ck.asarray(m, device=device)] = c[0, 1]       # a 0-d view of c itself
    x[m] = x[0, 1]
    assert_same(c, x)
    b = x > 2
    cb = ck.asarray(b, device=device)
    cb[cb] = False                                  # the mask is the array written
    b[b] = False
    assert_same(cb, b)
    d = ck.broadcast_to(ck.asarray(1.0, device=device), (3,))
    with pytest.raises(ValueError):
        d[ck.asarray([True, False, True], device=device)] = 0
