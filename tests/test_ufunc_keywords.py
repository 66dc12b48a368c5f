"""A ufunc call's keywords beyond out= and where= (issue 17): casting= with
all five rules, signature= (type strings and tuples with None), dtype=,
order= and subok=, on both devices, against NumPy: the same values, dtype
and shape, or the same kind of error."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from conftest import assert_same

CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


def _both(device, fn, *args, **kw):
    """Call NumPy's fn and cudakit's on the same arguments (NumPy arrays
    moved to device); both succeed alike or both raise alike."""
    ck_args = [ck.asarray(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
    ck_kw = dict(kw)
    if isinstance(kw.get("out"), np.ndarray):
        ck_kw["out"] = ck.asarray(kw["out"], device=device)
    try:
        want = getattr(np, fn)(*args, **kw)
    except Exception as e:  # noqa: BLE001 - NumPy's answer is what we compare with
        want_exc = next((k for k in (TypeError, ValueError, OverflowError) if isinstance(e, k)), type(e))
        with pytest.raises(want_exc):
            getattr(ck, fn)(*ck_args, **ck_kw)
        return None
    got = getattr(ck, fn)(*ck_args, **ck_kw)
    assert_same(got, want)
    if "out" in ck_kw:
        assert got is ck_kw["out"]
    return got


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), casting=st.sampled_from(CASTINGS),
       dt=st.sampled_from([None] + DTYPES), out=st.sampled_from([None] + DTYPES))
def test_add_casting_dtype_out(device, a, b, casting, dt, out):
    x = (np.arange(4) % 2).astype(a)
    y = (np.arange(4) % 3).astype(b)
    kw = {"casting": casting}
    if dt is not None:
        kw["dtype"] = dt
    if out is not None:
        kw["out"] = np.zeros(4, out)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _both(device, "add", x, y, **kw)


@pytest.mark.parametrize("casting", CASTINGS)
@pytest.mark.parametrize("types", [("int8", "int16"), ("float64", "float64"), ("int32", "float32"),
                                   ("uint8", "int8"), ("float32", "complex64")])
def test_casting_rules(device, casting, types):
    x = np.arange(1, 5).astype(types[0])
    y = np.arange(2, 6).astype(types[1])
    _both(device, "multiply", x, y, casting=casting)
    _both(device, "multiply", x, y, casting=casting, out=np.zeros(4, "float32"))
    _both(device, "multiply", x, y, casting=casting, dtype="int16")
    _both(device, "sqrt", x, casting=casting)


@pytest.mark.parametrize("casting", CASTINGS)
def test_casting_with_python_scalars(device, casting):
    x = np.arange(4, dtype=np.int8)
    _both(device, "add", x, 3, casting=casting)        # a weak int takes int8: no cast
    _both(device, "add", x, 2.5, casting=casting)      # a weak float makes the loop float64
    _both(device, "add", x, np.int16(1), casting=casting)   # a NumPy scalar is typed
    _both(device, "add", x.astype(np.int32), 1.5, dtype="int32", casting=casting)


@pytest.mark.parametrize("sig", ["dd->d", "ff->f", "ii->i", "ll->d", "dd->?", ("f8", "f8", None), ("i4", None, None),
                                 (None, "f8", None), (None, None, "float32"), (None, None, None), ("i4", "f8", None),
                                 ("?", None, None), (np.float32, None, None), (None, None, np.int64)])
@pytest.mark.parametrize("casting", ["same_kind", "unsafe", "no"])
def test_signature_binary(device, sig, casting):
    x = np.arange(4, dtype=np.int32)
    y = np.arange(1, 5, dtype=np.float64)
    _both(device, "add", x, x, signature=sig, casting=casting)
    _both(device, "add", x, y, signature=sig, casting=casting)
    if isinstance(sig, str) and sig.endswith("?"):
        _both(device, "less", x, y, signature=sig, casting=casting)


@pytest.mark.parametrize("fn,sig", [("exp", "f->f"), ("exp", "d->d"), ("negative", (None, "f4")),
                                    ("isnan", "f->?"), ("absolute", "D->d"), ("absolute", ("F", None))])
def test_signature_unary(device, fn, sig):
    x = np.arange(-2, 2, dtype=np.int16)
    _both(device, fn, x, signature=sig)
    _both(device, fn, x.astype(np.complex64), signature=sig)


@pytest.mark.parametrize("bad,exc", [("f", TypeError), ("ii", ValueError), ("i,i->i", ValueError),
                                     (("i4", "i4"), ValueError), (["i4", "i4", None], TypeError), (5, TypeError)])
def test_signature_errors(device, bad, exc):
    x = ck.arange(3, device=device)
    with pytest.raises(exc):
        np.add(np.arange(3), np.arange(3), signature=bad)
    with pytest.raises(exc):
        ck.add(x, x, signature=bad)
    with pytest.raises(TypeError, match="both 'signature' and 'dtype'"):
        ck.add(x, x, signature="dd->d", dtype="float64")


@pytest.mark.parametrize("order", ["C", "F", "A", "K", None])
def test_order(device, order):
    c = np.arange(6.0).reshape(2, 3)
    f = np.asfortranarray(c)
    for args in [(c, 1.0), (f, 1.0), (f, f), (f, c)]:
        got = _both(device, "add", *args, order=order)
        want = np.add(*args, order=order)
        if order in ("C", "F", "A"):   # 'K' and None give C order (NumPy keeps the inputs')
            assert got.flags.f_contiguous == want.flags.f_contiguous
            assert got.flags.c_contiguous == want.flags.c_contiguous
    with pytest.raises(ValueError, match="order must be one of"):
        ck.add(ck.asarray(c, device=device), 1, order="X")
    with pytest.raises(TypeError, match="order must be str"):
        ck.add(ck.asarray(c, device=device), 1, order=1)


def test_order_with_out_keeps_out(device):
    out = ck.zeros((2, 3), device=device)
    r = ck.add(ck.ones((2, 3), device=device), 1, out=out, order="F")
    assert r is out and out.flags.c_contiguous
    assert_same(out, np.full((2, 3), 2.0))


def test_subok_and_bad_casting(device):
    x = ck.arange(3, device=device)
    assert_same(ck.add(x, x, subok=False), np.add(np.arange(3), np.arange(3), subok=False))
    assert_same(ck.add(x, x, subok=True), np.arange(3) * 2)
    with pytest.raises(TypeError, match="'subok' must be a boolean"):
        ck.add(x, x, subok=None)
    with pytest.raises(TypeError, match="casting must be str"):
        ck.add(x, x, casting=3)
    with pytest.raises(ValueError, match="casting must be one of"):
        ck.add(x, x, casting="sometimes")


def test_keywords_with_where(device):
    # where= takes the other keywords along
    x = np.arange(4, dtype=np.float64)
    m = np.array([True, False, True, False])
    out = np.full(4, -1, dtype=np.int32)
    want = np.multiply(x, 2, out=out.copy(), where=m, casting="unsafe")
    got = ck.multiply(ck.asarray(x, device=device), 2, out=ck.asarray(out, device=device),
                      where=ck.asarray(m, device=device), casting="unsafe")
    assert_same(got, want)
    with pytest.raises(TypeError):
        ck.multiply(ck.asarray(x, device=device), 2, out=ck.asarray(out, device=device),
                    where=ck.asarray(m, device=device))


def test_can_cast_and_astype_share_the_rules(device):
    for f in DTYPES:
        for t in DTYPES:
            for c in CASTINGS:
                assert ck.can_cast(f, t, casting=c) == np.can_cast(f, t, casting=c), (f, t, c)
    x = ck.arange(3, device=device)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        x.astype("int8", casting="safe")
    with pytest.raises(ValueError, match="casting must be one of"):
        x.astype("int8", casting="bad")
