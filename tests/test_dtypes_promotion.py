"""dtype objects (equal to NumPy's), dtype-likes, result_type (NEP 50),
can_cast, astype and isdtype against NumPy, for all pairs of dtypes."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from conftest import assert_same
from strategies import ALL_DTYPES, complex_warned, elements, hsettings, view_of_shape

SETTINGS = hsettings(40)
PAIRS = list(itertools.product(ALL_DTYPES, ALL_DTYPES))


def test_dtype_table_matches_numpy():
    """The C core's dtype table, which the module exports for the Python
    code, holds NumPy's facts about every dtype."""
    table = ck._core._dtype_table
    assert [r.name for r in table] == ALL_DTYPES
    for num, r in enumerate(table):
        nd = np.dtype(r.name)
        assert r.num == num
        assert (r.kind, r.char, r.str, r.itemsize, r.numpy_num) == (nd.kind, nd.char, nd.str, nd.itemsize, nd.num)
        assert r.kind_letter == nd.kind.upper()
        assert np.dtype(r.real) == np.zeros(1, nd).real.dtype
        assert memoryview(np.zeros(1, nd)).itemsize == r.itemsize
        d = getattr(ck, r.name)
        assert (d.name, d.kind, d.char, d.str, d.itemsize) == (r.name, r.kind, r.char, r.str, r.itemsize)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_dtype_objects_equal_numpy(device, name):
    d = getattr(ck, name)
    nd = np.dtype(name)
    assert d == nd
    assert nd == d
    assert d == nd.type            # np.float32, the scalar type
    assert d == name
    assert np.dtype(d) == nd
    assert d.name == nd.name
    assert d.itemsize == nd.itemsize
    assert d.kind == nd.kind
    assert d.char == nd.char
    assert d.str == nd.str
    assert d.type is nd.type
    assert str(d) == str(nd)
    assert repr(d) == repr(nd)
    assert hash(d) == hash(getattr(ck, name))
    for other in ALL_DTYPES:
        if other != name:
            assert d != getattr(ck, other)
            assert d != np.dtype(other)
            assert not (d == np.dtype(other))
    assert d != "not a dtype"
    assert d != None  # noqa: E711
    assert ck.zeros(2, dtype=d, device=device).dtype == nd
    assert ck.zeros(2, dtype=nd, device=device).dtype is d


def test_dtype_equality_chain(device):
    assert ck.float32 == np.float32 == np.dtype("float32")
    assert np.dtype(ck.int8) == np.int8
    assert ck.bool_ is ck.bool
    assert ck.dtype is type(ck.float64)
    assert isinstance(ck.arange(3, device=device).dtype, ck.dtype)


@pytest.mark.parametrize("alias", ["f4", "<f4", "=f8", "float", "f8", "d", "i1", "u2", "i8", "int", "int_", "intp",
                                   "uint", "b1", "?", "bool", "c8", "c16", "complex", "e", "half", "single",
                                   "double", "longlong", "ubyte", "short", "uintc"])
def test_dtype_strings(device, alias):
    assert ck.zeros(1, dtype=alias, device=device).dtype == np.dtype(alias)


@pytest.mark.parametrize("pytype,name", [(float, "float64"), (int, "int64"), (bool, "bool"), (complex, "complex128")])
def test_python_types_as_dtypes(device, pytype, name):
    assert ck.zeros(1, dtype=pytype, device=device).dtype == np.dtype(name)
    assert ck.result_type(pytype) == np.dtype(name)


@pytest.mark.parametrize("bad", ["float128", "U5", "S3", "O", "datetime64", "m8", "foo", "", object, str, 3, 1.5,
                                 np.dtype("U3"), np.dtype([("a", "i4")]), np.longdouble])
def test_unsupported_dtypes_are_type_errors(device, bad):
    with pytest.raises(TypeError):
        ck.zeros(2, dtype=bad, device=device)
    with pytest.raises(TypeError):
        ck.arange(3, device=device).astype(bad)


# ------------------------------------------------------------ result_type

@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_pairs(device, a, b):
    want = np.result_type(a, b)
    assert ck.result_type(a, b) == want
    assert ck.result_type(getattr(ck, a), getattr(ck, b)) == want
    x = ck.zeros(2, dtype=a, device=device)
    y = ck.zeros((), dtype=b, device=device)
    assert ck.result_type(x, y) == want       # 0-d arrays are not special (NEP 50)
    assert ck.result_type(x, np.dtype(b)) == want
    # the promotion an operator applies is the same
    if a != "bool" or b != "bool":
        assert (x * y).dtype == want


@pytest.mark.parametrize("a", ALL_DTYPES)
@pytest.mark.parametrize("scalar", [1, -1, 1.5, True, 1j, 2**63, np.float32(1), np.int8(1), np.float64(1),
                                    np.uint64(1), np.complex64(1)], ids=repr)
def test_result_type_with_scalars(device, a, scalar):
    """Python scalars are weak (NEP 50), NumPy scalars are not."""
    want = np.result_type(np.dtype(a), scalar)
    assert ck.result_type(getattr(ck, a), scalar) == want
    assert ck.result_type(ck.zeros(3, dtype=a, device=device), scalar) == want


@SETTINGS
@given(dts=st.lists(st.sampled_from(ALL_DTYPES), min_size=1, max_size=5),
       scalars=st.lists(st.sampled_from([1, 2.5, True, 1j]), max_size=2))
def test_result_type_many(device, dts, scalars):
    args = [np.dtype(d) for d in dts] + scalars
    assert ck.result_type(*args) == np.result_type(*args)


def test_result_type_only_scalars(device):
    for args in [(1,), (1.5,), (True,), (1j,), (1, 2.5), (True, 1), (1, 1j)]:
        assert ck.result_type(*args) == np.result_type(*args)
    with pytest.raises(ValueError):
        ck.result_type()
    with pytest.raises(TypeError):
        ck.result_type("nope")


# ------------------------------------------------------------ can_cast

CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]


@pytest.mark.parametrize("a,b", PAIRS)
def test_can_cast_pairs(device, a, b):
    for casting in CASTINGS:
        want = np.can_cast(a, b, casting=casting)
        assert ck.can_cast(a, b, casting=casting) == want, casting
        assert ck.can_cast(getattr(ck, a), getattr(ck, b), casting) == want, casting
    assert ck.can_cast(ck.zeros(1, dtype=a, device=device), b) == np.can_cast(np.dtype(a), b)
    assert ck.can_cast(a, b) == np.can_cast(a, b)


def test_can_cast_errors(device):
    with pytest.raises(ValueError):
        ck.can_cast("int8", "int16", casting="sometimes")
    with pytest.raises(TypeError):
        ck.can_cast("int8", "nope")


# ------------------------------------------------------------ astype

@pytest.mark.parametrize("src,dst", PAIRS)
def test_astype_pairs(device, src, dst):
    vals = [0, 1, 2, 7, 100]
    if np.dtype(src).kind not in "ub":
        vals += [-1, -5]
    if np.dtype(src).kind in "fc":
        vals += [0.5, 2.75, -3.25]
    if np.dtype(src).kind == "b":
        vals = [True, False, True]
    a = np.array(vals).astype(src)
    if np.dtype(src).kind == "c":
        a = a + np.asarray(1j, dtype=src) * a[::-1]
    if np.dtype(dst).kind == "u" and np.dtype(src).kind in "ifc":
        a = np.abs(a) if np.dtype(src).kind != "c" else a
        if np.dtype(src).kind == "c":
            a = (a.real ** 2).astype(src)   # out-of-range float -> uint is platform specific
    ca = ck.asarray(a, device=device)
    want, np_warned = complex_warned(a.astype, dst)
    got, ck_warned = complex_warned(ca.astype, dst)
    assert ck_warned == np_warned   # a ComplexWarning exactly when NumPy gives one
    assert_same(got, want)
    assert_same(complex_warned(ca.astype, getattr(ck, dst))[0], want)
    assert_same(complex_warned(ca[::-1].astype, dst)[0], want[::-1])
    # copy=False with the same dtype is the array itself; otherwise a new one
    same = ca.astype(src, copy=False)
    assert same is ca
    assert ca.astype(src) is not ca


@SETTINGS
@given(data=st.data())
def test_astype_strided(device, data):
    src = data.draw(st.sampled_from(["int16", "float32", "float64", "uint8", "bool", "complex64"]))
    dst = data.draw(st.sampled_from(ALL_DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    a, ca = data.draw(view_of_shape(shape, src, elements(src, 0, 100), device))
    order = data.draw(st.sampled_from(["C", "F", "K", "A"]))
    want, np_warned = complex_warned(a.astype, dst, order=order)
    got, ck_warned = complex_warned(ca.astype, dst, order=order)
    assert ck_warned == np_warned
    assert_same(got, want)
    if order == "C":
        assert got.flags.c_contiguous
    if order == "F":
        assert got.flags.f_contiguous


def test_complex_to_real_warns(device):
    """As NumPy: a ComplexWarning (a RuntimeWarning), and the real part."""
    c = ck.asarray(np.array([1 + 2j, 3 - 1j]), device=device)
    for dst in ("float64", "float32", "int16"):
        with pytest.warns(ck.ComplexWarning):
            r = c.astype(dst)
        assert_same(r, np.array([1, 3]).astype(dst))
    with pytest.warns(RuntimeWarning):
        c.astype("float16")
    target = ck.zeros(2, device=device)
    with pytest.warns(ck.ComplexWarning):
        target[...] = c
    assert_same(target, np.array([1.0, 3.0]))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.astype("bool")             # no warning: truth of the whole value
        c.astype("complex64")
        ck.zeros(2, dtype="complex64", device=device)[...] = c


# ------------------------------------------------------------ isdtype

KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_isdtype(device, name):
    for kind in KINDS:
        assert ck.isdtype(getattr(ck, name), kind) == np.isdtype(np.dtype(name), kind), kind
    assert ck.isdtype(getattr(ck, name), ("bool", "real floating")) == np.isdtype(
        np.dtype(name), ("bool", "real floating"))
    assert ck.isdtype(getattr(ck, name), getattr(ck, name))
    assert ck.isdtype(ck.zeros(1, dtype=name, device=device).dtype, (getattr(ck, name), "bool"))
    with pytest.raises(ValueError):
        ck.isdtype(getattr(ck, name), "floaty")
