"""Bad arguments, cudakit next to NumPy: every case of the table is called
with `xp = numpy` and with `xp = cudakit` (on each device); where NumPy
raises, cudakit must raise an exception that an `except` naming NumPy's
class catches (its class or a subclass), and where NumPy accepts, cudakit
must accept and give the same values, dtype and shape.

A case is `(id, fn)` with `fn(xp, A)`: `A(data, dtype=None)` makes an array
of `xp` (on the device under test for cudakit, whose default device is set
to it for the call).  `python tests/test_errors_vs_numpy.py` prints every
difference instead of failing at the first."""
import math
import os
import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cudakit as ck


def _i(*shape):
    """arange of the shape, as a function of xp (float64)."""
    n = math.prod(shape)
    return lambda xp, A: A(np.arange(n, dtype=np.float64).reshape(shape))


def _m(xp, A):
    return A(np.arange(6.0).reshape(2, 3))


def _z(xp, A):
    return A(np.array(5.0))


def _e(xp, A):
    return A(np.zeros(0))


BAD_AXES = [5, -5, True, 1.5, "0", [0], (0, 0), (0, 5), np.float64(0), 2**31, -(2**31), 2**63]
BAD_BOOLS = ["x", 2, None, [1]]
BAD_SHAPES = [-1, (0, -1), (2, 0, -2), (3, -1), 2**63, 2**62, 2**50, True, 2.5, "3", None, [2, "3"],
              (2, None), (2, 2.0), (1,) * 65, (np.int64(2), 3), ((2,),), [], ()]
BAD_DTYPES = ["x", "U4", "M8", object, "O", list, 5]

CASES = []
# Cases whose input NumPy holds in a dtype cudakit has not (strings,
# objects): cudakit's answer is a TypeError, whatever NumPy makes of them.
NON_NUMERIC = set()
# Cases whose values are not defined (empty): layout and dtype only.
NO_VALUES = set()


def case(cid, fn, non_numeric=False, values=True):
    cid = re.sub(r"<function (\w+) at 0x[0-9a-f]+>", r"\1", cid)    # no addresses: xdist's workers must agree
    CASES.append((cid, fn))
    # text where a number or an array is wanted: NumPy makes a string
    # array of it (and fails in any of several ways, or works on strings)
    if non_numeric or "'a'" in cid or "'x'" in cid and "dtype" in cid:
        NON_NUMERIC.add(cid)
    if not values:
        NO_VALUES.add(cid)


# ------------------------------------------------------------ creation
for s in BAD_SHAPES:
    for f in ("zeros", "ones", "empty"):
        case(f"{f}({s!r})", lambda xp, A, f=f, s=s: getattr(xp, f)(s), values=f != "empty")
    case(f"full({s!r})", lambda xp, A, s=s: xp.full(s, 1.5))
    case(f"zeros_like(shape={s!r})", lambda xp, A, s=s: xp.zeros_like(_m(xp, A), shape=s))
    case(f"broadcast_to({s!r})", lambda xp, A, s=s: xp.broadcast_to(A(np.ones(1)), s))
    case(f"reshape({s!r})", lambda xp, A, s=s: _i(6)(xp, A).reshape(s))
for d in BAD_DTYPES:   # dtypes cudakit has not, or none at all: a TypeError
    case(f"zeros(dtype={d!r})", lambda xp, A, d=d: xp.zeros(3, dtype=d), non_numeric=True)
    case(f"asarray(dtype={d!r})", lambda xp, A, d=d: xp.asarray([1, 2], dtype=d), non_numeric=True)
    case(f"sum(dtype={d!r})", lambda xp, A, d=d: xp.sum(_m(xp, A), dtype=d), non_numeric=True)
    case(f"astype({d!r})", lambda xp, A, d=d: _m(xp, A).astype(d), non_numeric=True)
    case(f"arange(dtype={d!r})", lambda xp, A, d=d: xp.arange(3, dtype=d), non_numeric=True)
case("zeros(order='X')", lambda xp, A: xp.zeros(3, order="X"))
case("zeros(order=5)", lambda xp, A: xp.zeros(3, order=5))
case("full(3, 'a')", lambda xp, A: xp.full(3, "a"))
case("full(3, None)", lambda xp, A: xp.full(3, None))
case("full(3, [1, 2])", lambda xp, A: xp.full(3, [1, 2]))
case("full((2, 2), [1, 2])", lambda xp, A: xp.full((2, 2), [1, 2]))
case("full(3, 300, dtype=int8)", lambda xp, A: xp.full(3, 300, dtype="int8"))
case("full(3, 1.5, dtype=int8)", lambda xp, A: xp.full(3, 1.5, dtype="int8"))
case("full(3, 1j, dtype=float64)", lambda xp, A: xp.full(3, 1j, dtype="float64"))
case("full(3, nan, dtype=int64)", lambda xp, A: xp.full(3, float("nan"), dtype="int64"))
case("full(3, -1, dtype=uint8)", lambda xp, A: xp.full(3, -1, dtype="uint8"))
case("full(3, 2**64)", lambda xp, A: xp.full(3, 2**64))
for args in [(0,), (-3,), (1, 2, 0), (float("nan"),), (float("inf"),), (0, float("inf")), (2**70,), ("a",),
             (None,), (1, None), (True,), (1j,), (0, 10, -1), (10, 0, 1), (1e300, 1e301, 1e290),
             (0, 5, 0.0), (3, 0, 0), (2**63 - 1,)]:
    case(f"arange{args!r}", lambda xp, A, args=args: xp.arange(*args))
case("arange(3, dtype=bool)", lambda xp, A: xp.arange(3, dtype=bool))
case("arange(2, dtype=bool)", lambda xp, A: xp.arange(2, dtype=bool))
case("arange(-1, 300, dtype=uint8)", lambda xp, A: xp.arange(-1, 3, dtype="uint8"))
for kw in [dict(num=-1), dict(num=2.5), dict(num=True), dict(num="3"), dict(num=0), dict(num=1, endpoint=False),
           dict(axis=2), dict(axis=1.5), dict(dtype="x"), dict(num=2**63), dict(retstep=True, num=1)]:
    case(f"linspace(0, 1, {kw!r})", lambda xp, A, kw=kw: xp.linspace(0, 1, **kw))
case("linspace(0, nan)", lambda xp, A: xp.linspace(0, float("nan"), 3))
case("linspace([0, 1], 2)", lambda xp, A: xp.linspace([0, 1], 2, 3))
for args in [(-1,), (2.5,), (True,), (3, -1), (3, 2.5), (3, 3, 1.5), (3, 3, 10), (3, 3, -10), ("3",), (None,),
             (2**63,)]:
    case(f"eye{args!r}", lambda xp, A, args=args: xp.eye(*args))
case("identity(-1)", lambda xp, A: xp.identity(-1))
case("identity(2.5)", lambda xp, A: xp.identity(2.5))
case("tri(-1)", lambda xp, A: xp.tri(-1))
case("tri(2.5)", lambda xp, A: xp.tri(2.5))
case("tri(3, k=1.5)", lambda xp, A: xp.tri(3, k=1.5))
case("diag(3-d)", lambda xp, A: xp.diag(_i(2, 2, 2)(xp, A)))
case("diag(0-d)", lambda xp, A: xp.diag(_z(xp, A)))
case("diag(k=1.5)", lambda xp, A: xp.diag(_i(3)(xp, A), k=1.5))
case("diag(k=10)", lambda xp, A: xp.diag(_m(xp, A), k=10))
case("diag(k=-10)", lambda xp, A: xp.diag(_i(3)(xp, A), k=-10))
case("tril(0-d)", lambda xp, A: xp.tril(_z(xp, A)))
case("triu(1-d)", lambda xp, A: xp.triu(_i(3)(xp, A)))
case("tril(k=1.5)", lambda xp, A: xp.tril(_m(xp, A), k=1.5))
case("tril_indices(-1)", lambda xp, A: xp.tril_indices(-1))
case("tril_indices(2.5)", lambda xp, A: xp.tril_indices(2.5))
case("triu_indices(3, k=1.5)", lambda xp, A: xp.triu_indices(3, k=1.5))
case("diag_indices(-1)", lambda xp, A: xp.diag_indices(-1))
case("diag_indices(2, 1.5)", lambda xp, A: xp.diag_indices(2, 1.5))
case("logspace(num=-1)", lambda xp, A: xp.logspace(0, 1, -1))
case("meshgrid(indexing='x')", lambda xp, A: xp.meshgrid(_i(2)(xp, A), indexing="x"))
case("meshgrid(0-d)", lambda xp, A: xp.meshgrid(_z(xp, A), _i(2)(xp, A)))

# ------------------------------------------------------------ conversion
for obj in ["np.datetime64('2020-01-01')", "np.timedelta64(5, 's')", "np.array(['2020-01-01'], dtype='M8[D]')",
            "np.array([1, 'a'], dtype=object)", "np.array([1, 2], dtype=object)", "np.array(['ab', 'c'])",
            "np.array([b'ab'])", "'abc'", "b'abc'", "None", "{}", "set()", "[1, 'a']", "[1, None]", "[[1, 2], [3]]",
            "[[1], 2]", "np.void(b'ab')", "np.str_('a')", "np.bytes_(b'a')", "np.array([(1, 2.0)], dtype='i4,f8')",
            "np.ones(3, dtype='>f8')", "np.ones(3, dtype='<f8')[::2]", "np.longdouble(1)", "np.ones(2, dtype='f16')",
            "np.ones(2, dtype=np.clongdouble)", "[np.datetime64('2020-01-01')]", "[[1, 2], 'ab']", "[1, [2]]",
            "[1 << 64]", "[-(1 << 63) - 1]", "[1 << 63]", "[1.5, 1 << 64]", "object()", "[object()]",
            "np.array(5, dtype='M8[s]')", "memoryview(b'abc')", "bytearray(b'ab')", "range(3)", "range(2**62)"]:
    case(f"asarray({obj})", lambda xp, A, obj=obj: xp.asarray(eval(obj)))
case("asarray([300], dtype=int8)", lambda xp, A: xp.asarray([300], dtype="int8"))
case("asarray(300, dtype=int8)", lambda xp, A: xp.asarray(300, dtype="int8"))
case("asarray([1.5], dtype=int8)", lambda xp, A: xp.asarray([1.5], dtype="int8"))
case("asarray([1j], dtype=float64)", lambda xp, A: xp.asarray([1j], dtype="float64"))
case("asarray([-1], dtype=uint8)", lambda xp, A: xp.asarray([-1], dtype="uint8"))
case("asarray(nan, dtype=int64)", lambda xp, A: xp.asarray(float("nan"), dtype="int64"))
case("array(copy=False)", lambda xp, A: xp.array([1, 2], copy=False))
case("array(ndmin=-1)", lambda xp, A: xp.array([1, 2], ndmin=-1))
case("array(ndmin=2)", lambda xp, A: xp.array([1, 2], ndmin=2))
case("array(ndmin=65)", lambda xp, A: xp.array([1, 2], ndmin=65))
case("array(order='X')", lambda xp, A: xp.array([1, 2], order="X"))
case("asarray(nested 65)", lambda xp, A: xp.asarray(eval("[" * 65 + "1" + "]" * 65)))
case("ascontiguousarray('a')", lambda xp, A: xp.ascontiguousarray("a"))
case("can_cast(1.5, int)", lambda xp, A: xp.can_cast(1.5, "int64"))
case("can_cast(int, 'x')", lambda xp, A: xp.can_cast("int64", "x"))
case("can_cast(casting='bad')", lambda xp, A: xp.can_cast("int64", "float64", casting="bad"))
case("result_type()", lambda xp, A: xp.result_type())
case("result_type('x')", lambda xp, A: xp.result_type("x"))
case("result_type(None)", lambda xp, A: xp.result_type(None))
case("result_type('a')", lambda xp, A: xp.result_type("a"))
case("result_type(M8)", lambda xp, A: xp.result_type(np.dtype("M8[s]")))

# ------------------------------------------------------------ reductions
REDS = ["sum", "prod", "min", "max", "mean", "std", "var", "argmin", "argmax", "all", "any", "count_nonzero",
        "cumsum", "cumprod"]
for r in REDS:
    for ax in BAD_AXES:
        case(f"{r}(axis={ax!r})", lambda xp, A, r=r, ax=ax: getattr(xp, r)(_m(xp, A), axis=ax))
    case(f"{r}(0-d, axis=0)", lambda xp, A, r=r: getattr(xp, r)(_z(xp, A), axis=0))
    case(f"{r}(0-d, axis=-1)", lambda xp, A, r=r: getattr(xp, r)(_z(xp, A), axis=-1))
    case(f"{r}(0-d, axis=(0,))", lambda xp, A, r=r: getattr(xp, r)(_z(xp, A), axis=(0,)))
    case(f"{r}(0-d)", lambda xp, A, r=r: getattr(xp, r)(_z(xp, A)))
    case(f"{r}(empty)", lambda xp, A, r=r: getattr(xp, r)(_e(xp, A)))
    case(f"{r}(empty 2-d, axis=0)", lambda xp, A, r=r: getattr(xp, r)(A(np.zeros((0, 3))), axis=0))
    case(f"{r}(empty 2-d, axis=1)", lambda xp, A, r=r: getattr(xp, r)(A(np.zeros((0, 3))), axis=1))
    case(f"{r}(axis=())", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=()))
    case(f"{r}(axis=(1, 0))", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=(1, 0)))
    case(f"{r}(axis=(-1, 1))", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=(-1, 1)))
    case(f"{r}(axis=None)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=None))
    case(f"{r}(list)", lambda xp, A, r=r: getattr(xp, r)([[1, 2], [3, 4]]))
    case(f"{r}('a')", lambda xp, A, r=r: getattr(xp, r)("a"), non_numeric=True)
    case(f"{r}(None)", lambda xp, A, r=r: getattr(xp, r)(None), non_numeric=True)
    case(f"{r}(out=list)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=0, out=[0, 0, 0]))
    case(f"{r}(out=bad shape)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=0, out=A(np.zeros(2))))
    case(f"{r}(out=2-d)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=0, out=A(np.zeros((1, 3)))))
    case(f"{r}(out=int)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=0, out=A(np.zeros(3, np.int64))))
    case(f"{r}(out=bool)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), axis=0, out=A(np.zeros(3, bool))))
    case(f"{r}(method, axis=5)", lambda xp, A, r=r: getattr(_m(xp, A), r)(axis=5) if r != "count_nonzero"
         else xp.count_nonzero(_m(xp, A), axis=5))
    if r not in ("argmin", "argmax", "cumsum", "cumprod", "count_nonzero"):
        for kd in BAD_BOOLS + [np.True_, 1, 0, 1.0]:
            case(f"{r}(keepdims={kd!r})", lambda xp, A, r=r, kd=kd: getattr(xp, r)(_m(xp, A), axis=0, keepdims=kd))
    if r in ("argmin", "argmax", "count_nonzero"):
        for kd in BAD_BOOLS + [1]:
            case(f"{r}(keepdims={kd!r})", lambda xp, A, r=r, kd=kd: getattr(xp, r)(_m(xp, A), axis=0, keepdims=kd))
    if r in ("sum", "prod", "mean", "std", "var", "cumsum", "cumprod"):
        for dt in ["int8", "bool", "float16", "complex64"]:
            case(f"{r}(dtype={dt})", lambda xp, A, r=r, dt=dt: getattr(xp, r)(_m(xp, A), dtype=dt))
for r in ("std", "var"):
    for dd in ["x", -1, 1.5, 6, 10, None, [1], True]:
        case(f"{r}(ddof={dd!r})", lambda xp, A, r=r, dd=dd: getattr(xp, r)(_m(xp, A), ddof=dd))
for r in ("sum", "prod", "min", "max"):
    case(f"{r}(initial=1)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), initial=1.0))
    case(f"{r}(initial='a')", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), initial="a"))
    case(f"{r}(where=...)", lambda xp, A, r=r: getattr(xp, r)(_m(xp, A), where=A(np.array([True, False, True]))))
case("min(empty, initial=1)", lambda xp, A: xp.min(_e(xp, A), initial=1.0))
case("mean(int8 empty)", lambda xp, A: xp.mean(A(np.zeros(0, np.int8))))
case("mean(empty 2-d axis=0)", lambda xp, A: xp.mean(A(np.zeros((0, 2))), axis=0))
case("var(ddof=size)", lambda xp, A: xp.var(_i(3)(xp, A), ddof=3))
case("argmax(0-d)", lambda xp, A: xp.argmax(_z(xp, A)))
case("argmax(axis=None, keepdims)", lambda xp, A: xp.argmax(_m(xp, A), keepdims=True))
case("sum(bool, dtype=bool)", lambda xp, A: xp.sum(A(np.array([True, True])), dtype=bool))
case("sum(complex, dtype=float64)", lambda xp, A: xp.sum(A(np.ones(2, complex)), dtype="float64"))
case("cumsum(axis=None, 2-d)", lambda xp, A: xp.cumsum(_m(xp, A)))
case("cumsum(dtype=bool)", lambda xp, A: xp.cumsum(_m(xp, A), dtype=bool))
case("all(axis=(0, 1), keepdims=True)", lambda xp, A: xp.all(_m(xp, A), axis=(0, 1), keepdims=True))

# ------------------------------------------------------------ manipulation
for ax in BAD_AXES:
    case(f"concatenate(axis={ax!r})", lambda xp, A, ax=ax: xp.concatenate([_m(xp, A), _m(xp, A)], axis=ax))
    case(f"stack(axis={ax!r})", lambda xp, A, ax=ax: xp.stack([_m(xp, A), _m(xp, A)], axis=ax))
    case(f"expand_dims(axis={ax!r})", lambda xp, A, ax=ax: xp.expand_dims(_m(xp, A), axis=ax))
    case(f"squeeze(axis={ax!r})", lambda xp, A, ax=ax: xp.squeeze(A(np.zeros((1, 3, 1))), axis=ax))
    case(f"flip(axis={ax!r})", lambda xp, A, ax=ax: xp.flip(_m(xp, A), axis=ax))
    case(f"roll(axis={ax!r})", lambda xp, A, ax=ax: xp.roll(_m(xp, A), 1, axis=ax))
    case(f"sort(axis={ax!r})", lambda xp, A, ax=ax: xp.sort(_m(xp, A), axis=ax))
    case(f"argsort(axis={ax!r})", lambda xp, A, ax=ax: xp.argsort(_m(xp, A), axis=ax))
    case(f"partition(axis={ax!r})", lambda xp, A, ax=ax: xp.partition(_m(xp, A), 1, axis=ax))
    case(f"take(axis={ax!r})", lambda xp, A, ax=ax: xp.take(_m(xp, A), [0], axis=ax))
    case(f"repeat(axis={ax!r})", lambda xp, A, ax=ax: xp.repeat(_m(xp, A), 2, axis=ax))
    case(f"split(axis={ax!r})", lambda xp, A, ax=ax: xp.split(_m(xp, A), 1, axis=ax))
    case(f"moveaxis(src={ax!r})", lambda xp, A, ax=ax: xp.moveaxis(_m(xp, A), ax, 0))
    case(f"swapaxes({ax!r})", lambda xp, A, ax=ax: xp.swapaxes(_m(xp, A), ax, 0))
    case(f"diagonal(axis1={ax!r})", lambda xp, A, ax=ax: xp.diagonal(_i(2, 2, 2)(xp, A), axis1=ax))
    case(f"trace(axis1={ax!r})", lambda xp, A, ax=ax: xp.trace(_i(2, 2, 2)(xp, A), axis1=ax))
    case(f"take_along_axis(axis={ax!r})", lambda xp, A, ax=ax: xp.take_along_axis(
        _m(xp, A), A(np.zeros((2, 1), np.int64)), axis=ax))
    case(f"cumsum(0-d, axis={ax!r})", lambda xp, A, ax=ax: xp.cumsum(_z(xp, A), axis=ax))
    case(f"delete(axis={ax!r})", lambda xp, A, ax=ax: xp.delete(_m(xp, A), 0, axis=ax))
    case(f"insert(axis={ax!r})", lambda xp, A, ax=ax: xp.insert(_m(xp, A), 0, 1.0, axis=ax))
    case(f"append(axis={ax!r})", lambda xp, A, ax=ax: xp.append(_m(xp, A), _m(xp, A), axis=ax))
    case(f"unstack(axis={ax!r})", lambda xp, A, ax=ax: xp.unstack(_m(xp, A), axis=ax))
    case(f"array_split(axis={ax!r})", lambda xp, A, ax=ax: xp.array_split(_m(xp, A), 2, axis=ax))
    case(f"compress(axis={ax!r})", lambda xp, A, ax=ax: xp.compress([True], _m(xp, A), axis=ax))
    case(f"argpartition(axis={ax!r})", lambda xp, A, ax=ax: xp.argpartition(_m(xp, A), 1, axis=ax))
    case(f"linspace(axis={ax!r})", lambda xp, A, ax=ax: xp.linspace(A(np.zeros(2)), 1, 3, axis=ax))
    case(f"put_along_axis(axis={ax!r})", lambda xp, A, ax=ax: xp.put_along_axis(
        _m(xp, A), A(np.zeros((2, 1), np.int64)), 1.0, axis=ax))
case("concatenate([])", lambda xp, A: xp.concatenate([]))
case("concatenate(0-d)", lambda xp, A: xp.concatenate([_z(xp, A), _z(xp, A)]))
case("concatenate(ndim mismatch)", lambda xp, A: xp.concatenate([_m(xp, A), _i(3)(xp, A)]))
case("concatenate(shape mismatch)", lambda xp, A: xp.concatenate([_m(xp, A), _i(2, 2)(xp, A)], axis=0))
case("concatenate(array)", lambda xp, A: xp.concatenate(_m(xp, A)))
case("concatenate(5)", lambda xp, A: xp.concatenate(5))
case("concatenate(axis=None)", lambda xp, A: xp.concatenate([_m(xp, A), _i(2)(xp, A)], axis=None))
case("concatenate(out=bad)", lambda xp, A: xp.concatenate([_m(xp, A)], out=A(np.zeros(3))))
case("concatenate(dtype=int, casting=safe)", lambda xp, A: xp.concatenate([_m(xp, A)], dtype="int64",
                                                                          casting="safe"))
case("concatenate(casting=bad)", lambda xp, A: xp.concatenate([_m(xp, A)], casting="bad"))
case("concatenate(dtype and out)", lambda xp, A: xp.concatenate([_m(xp, A)], dtype="int64",
                                                                out=A(np.zeros((2, 3)))))
case("stack([])", lambda xp, A: xp.stack([]))
case("stack(shape mismatch)", lambda xp, A: xp.stack([_m(xp, A), _i(3)(xp, A)]))
case("stack(0-d)", lambda xp, A: xp.stack([_z(xp, A), _z(xp, A)]))
case("hstack([])", lambda xp, A: xp.hstack([]))
case("vstack(array)", lambda xp, A: xp.vstack(_m(xp, A)))
case("vstack(mismatch)", lambda xp, A: xp.vstack([_m(xp, A), _i(2)(xp, A)]))
case("dstack([])", lambda xp, A: xp.dstack([]))
case("column_stack([])", lambda xp, A: xp.column_stack([]))
case("squeeze(0-d, axis=0)", lambda xp, A: xp.squeeze(_z(xp, A), axis=0))
case("squeeze(0-d, axis=-1)", lambda xp, A: xp.squeeze(_z(xp, A), axis=-1))
case("squeeze(0-d, axis=1)", lambda xp, A: xp.squeeze(_z(xp, A), axis=1))
case("squeeze(0-d, axis=(0,))", lambda xp, A: xp.squeeze(_z(xp, A), axis=(0,)))
case("squeeze(axis=1) of size 3", lambda xp, A: xp.squeeze(A(np.zeros((1, 3, 1))), axis=1))
case("squeeze(axis=(0, 0))", lambda xp, A: xp.squeeze(A(np.zeros((1, 3, 1))), axis=(0, 0)))
case("squeeze(method, 0-d, axis=0)", lambda xp, A: _z(xp, A).squeeze(axis=0))
case("argsort(0-d)", lambda xp, A: xp.argsort(_z(xp, A)))
case("argsort(0-d, axis=0)", lambda xp, A: xp.argsort(_z(xp, A), axis=0))
case("argsort(0-d, axis=-1)", lambda xp, A: xp.argsort(_z(xp, A), axis=-1))
case("argsort(0-d, axis=1)", lambda xp, A: xp.argsort(_z(xp, A), axis=1))
case("argsort(0-d, axis=None)", lambda xp, A: xp.argsort(_z(xp, A), axis=None))
case("argsort(method, 0-d)", lambda xp, A: _z(xp, A).argsort())
case("sort(0-d)", lambda xp, A: xp.sort(_z(xp, A)))
case("sort(0-d, axis=None)", lambda xp, A: xp.sort(_z(xp, A), axis=None))
case("sort(0-d, axis=0)", lambda xp, A: xp.sort(_z(xp, A), axis=0))
case("sort(method, 0-d)", lambda xp, A: _z(xp, A).sort())
case("sort(kind='x')", lambda xp, A: xp.sort(_m(xp, A), kind="x"))
case("sort(kind=5)", lambda xp, A: xp.sort(_m(xp, A), kind=5))
case("sort(kind='stable')", lambda xp, A: xp.sort(_m(xp, A), kind="stable"))
case("sort(order='a')", lambda xp, A: xp.sort(_m(xp, A), order="a"))
case("sort(stable='x')", lambda xp, A: xp.sort(_m(xp, A), stable="x"))
case("sort(stable=True, kind=quicksort)", lambda xp, A: xp.sort(_m(xp, A), stable=True, kind="quicksort"))
case("argsort(kind='x')", lambda xp, A: xp.argsort(_m(xp, A), kind="x"))
case("sort(descending=True)", lambda xp, A: xp.sort(_m(xp, A), descending=True))
for k in [3, -4, 5, 1.5, "1", [0, 3], [[0]], True, (0, 1), [], 2**63, np.array(1), -3, 2, [-1, -3]]:
    case(f"partition(kth={k!r})", lambda xp, A, k=k: xp.partition(_i(3)(xp, A), k))
    case(f"argpartition(kth={k!r})", lambda xp, A, k=k: xp.argpartition(_i(3)(xp, A), k))
case("partition(0-d, 0)", lambda xp, A: xp.partition(_z(xp, A), 0))
case("partition(0-d, 0, axis=None)", lambda xp, A: xp.partition(_z(xp, A), 0, axis=None))
case("partition(kind='x')", lambda xp, A: xp.partition(_i(3)(xp, A), 1, kind="x"))
case("partition(empty, 0)", lambda xp, A: xp.partition(_e(xp, A), 0))
for side in ["x", 5, None, "l", "R", "left"]:
    case(f"searchsorted(side={side!r})", lambda xp, A, side=side: xp.searchsorted(_i(3)(xp, A), 1.0, side=side))
case("searchsorted(2-d)", lambda xp, A: xp.searchsorted(_m(xp, A), 1.0))
case("searchsorted(0-d)", lambda xp, A: xp.searchsorted(_z(xp, A), 1.0))
case("searchsorted(sorter=float)", lambda xp, A: xp.searchsorted(_i(3)(xp, A), 1.0, sorter=A(np.zeros(3))))
case("searchsorted(sorter=bad len)", lambda xp, A: xp.searchsorted(_i(3)(xp, A), 1.0,
                                                                  sorter=A(np.zeros(2, np.int64))))
case("searchsorted(sorter=out of range)", lambda xp, A: xp.searchsorted(_i(3)(xp, A), 1.0,
                                                                       sorter=A(np.array([0, 1, 5]))))
case("searchsorted(v='a')", lambda xp, A: xp.searchsorted(_i(3)(xp, A), "a"), non_numeric=True)
for shp in [(-2,), (2.5,), ((-1, -1)), ((4,)), ((2, -1, 2)), ("3",), (True,), (None,), ((2, 3), 1), (6, "C")]:
    case(f"reshape{shp!r}", lambda xp, A, shp=shp: xp.reshape(_i(6)(xp, A), *shp))
case("reshape(order='X')", lambda xp, A: xp.reshape(_i(6)(xp, A), (2, 3), order="X"))
case("reshape(order='A')", lambda xp, A: xp.reshape(_i(6)(xp, A), (2, 3), order="A"))
case("reshape(shape=)", lambda xp, A: xp.reshape(_i(6)(xp, A), shape=(2, 3)))
case("reshape(newshape=)", lambda xp, A: xp.reshape(_i(6)(xp, A), newshape=(2, 3)))
case("reshape(copy=False)", lambda xp, A: xp.reshape(_m(xp, A).T, 6, copy=False))
case("method reshape(-1, -1)", lambda xp, A: _i(6)(xp, A).reshape(-1, -1))
case("method reshape(2, 2.0)", lambda xp, A: _i(6)(xp, A).reshape(2, 3.0))
case("method reshape()", lambda xp, A: _i(6)(xp, A).reshape())
case("method reshape(0-d -> ())", lambda xp, A: _z(xp, A).reshape(()))
case("ravel(order='X')", lambda xp, A: xp.ravel(_m(xp, A), order="X"))
case("flatten(order='X')", lambda xp, A: _m(xp, A).flatten(order="X"))
for axes in [(0,), (0, 0), (0, 2), (1, 0, 2), (0, 1.5), ("a", 0), (-3, 0), (True, 0), ((1, 0),)]:
    case(f"transpose{axes!r}", lambda xp, A, axes=axes: xp.transpose(_m(xp, A), axes if len(axes) != 1 or
                                                                    not isinstance(axes[0], tuple) else axes[0]))
    case(f"method transpose{axes!r}", lambda xp, A, axes=axes: _m(xp, A).transpose(*axes))
case("permute_dims(bad)", lambda xp, A: xp.permute_dims(_m(xp, A), (0, 0)))
case("moveaxis(dup)", lambda xp, A: xp.moveaxis(_i(2, 2, 2)(xp, A), [0, 0], [1, 2]))
case("moveaxis(len mismatch)", lambda xp, A: xp.moveaxis(_i(2, 2, 2)(xp, A), [0, 1], [1]))
case("moveaxis(dest=5)", lambda xp, A: xp.moveaxis(_m(xp, A), 0, 5))
case("swapaxes(1.5)", lambda xp, A: xp.swapaxes(_m(xp, A), 1.5, 0))
case("expand_dims((0, 0))", lambda xp, A: xp.expand_dims(_m(xp, A), (0, 0)))
case("expand_dims((0, 3))", lambda xp, A: xp.expand_dims(_m(xp, A), (0, 3)))
case("expand_dims((0, 4))", lambda xp, A: xp.expand_dims(_m(xp, A), (0, 4)))
case("expand_dims(0-d, 1)", lambda xp, A: xp.expand_dims(_z(xp, A), 1))
case("flip(0-d)", lambda xp, A: xp.flip(_z(xp, A)))
case("flip(0-d, axis=0)", lambda xp, A: xp.flip(_z(xp, A), axis=0))
case("flip(axis=(0, 0))", lambda xp, A: xp.flip(_m(xp, A), axis=(0, 0)))
case("fliplr(1-d)", lambda xp, A: xp.fliplr(_i(3)(xp, A)))
case("flipud(0-d)", lambda xp, A: xp.flipud(_z(xp, A)))
case("rot90(1-d)", lambda xp, A: xp.rot90(_i(3)(xp, A)))
case("rot90(axes=(0, 0))", lambda xp, A: xp.rot90(_m(xp, A), axes=(0, 0)))
case("rot90(axes=(0,))", lambda xp, A: xp.rot90(_m(xp, A), axes=(0,)))
case("rot90(k=1.5)", lambda xp, A: xp.rot90(_m(xp, A), k=1.5))
for sh in [1.5, "a", None, [1, 2], (1, 2), 2**63, True]:
    case(f"roll(shift={sh!r})", lambda xp, A, sh=sh: xp.roll(_m(xp, A), sh))
case("roll(shift=(1, 2), axis=0)", lambda xp, A: xp.roll(_m(xp, A), (1, 2), axis=0))
case("roll(shift=(1, 2), axis=(0, 1, 0))", lambda xp, A: xp.roll(_m(xp, A), (1, 2), axis=(0, 1, 0)))
case("roll(0-d)", lambda xp, A: xp.roll(_z(xp, A), 1))
case("roll(0-d, axis=0)", lambda xp, A: xp.roll(_z(xp, A), 1, axis=0))
for reps in [-1, 1.5, "a", None, (2, -1), [], (), True, 2**63]:
    case(f"tile({reps!r})", lambda xp, A, reps=reps: xp.tile(_m(xp, A), reps))
for rp in [-1, 1.5, "a", None, [1, 2], [1, 2, 3], [-1, 1, 1], True, 2**63, [[1]]]:
    case(f"repeat({rp!r})", lambda xp, A, rp=rp: xp.repeat(_i(3)(xp, A), rp))
case("repeat(0-d, 2)", lambda xp, A: xp.repeat(_z(xp, A), 2))
case("repeat(0-d, 2, axis=0)", lambda xp, A: xp.repeat(_z(xp, A), 2, axis=0))
for sec in [0, -1, 4, 1.5, "a", [1, "a"], [5], [-1], [2, 1], True, None, 2**63]:
    case(f"split({sec!r})", lambda xp, A, sec=sec: xp.split(_i(6)(xp, A), sec))
    case(f"array_split({sec!r})", lambda xp, A, sec=sec: xp.array_split(_i(6)(xp, A), sec))
case("split(0-d)", lambda xp, A: xp.split(_z(xp, A), 1))
case("unstack(0-d)", lambda xp, A: xp.unstack(_z(xp, A)))
for pw in [-1, 1.5, "a", None, ((1, 2), (3, 4), (5, 6)), ((1, -1),), ((1,),), (((1,),),), 2**63, True, [[1, 2]]]:
    case(f"pad({pw!r})", lambda xp, A, pw=pw: xp.pad(_m(xp, A), pw))
for mode in ["x", None, 5, "edge", "reflect", "wrap", "symmetric", "maximum", "mean", "linear_ramp", "empty"]:
    case(f"pad(mode={mode!r})", lambda xp, A, mode=mode: xp.pad(_m(xp, A), 1, mode=mode), values=mode != "empty")
    case(f"pad(empty, mode={mode!r})", lambda xp, A, mode=mode: xp.pad(A(np.zeros((0, 2))), 1, mode=mode),
         values=mode != "empty")
case("pad(constant_values='a')", lambda xp, A: xp.pad(_m(xp, A), 1, constant_values="a"))
case("pad(constant_values=(1, 2, 3))", lambda xp, A: xp.pad(_m(xp, A), 1, constant_values=(1, 2, 3)))
case("pad(mode=edge, constant_values=1)", lambda xp, A: xp.pad(_m(xp, A), 1, mode="edge", constant_values=1))
case("pad(0-d)", lambda xp, A: xp.pad(_z(xp, A), 1))
case("pad(reflect, width > size)", lambda xp, A: xp.pad(_i(3)(xp, A), 5, mode="reflect"))
case("broadcast_to(incompatible)", lambda xp, A: xp.broadcast_to(_m(xp, A), (3, 3)))
case("broadcast_to(fewer dims)", lambda xp, A: xp.broadcast_to(_m(xp, A), (3,)))
case("broadcast_to(0-d shape)", lambda xp, A: xp.broadcast_to(_m(xp, A), ()))
case("broadcast_arrays(mismatch)", lambda xp, A: xp.broadcast_arrays(_m(xp, A), _i(2)(xp, A)))
case("broadcast_arrays()", lambda xp, A: xp.broadcast_arrays())
case("broadcast_shapes(mismatch)", lambda xp, A: xp.broadcast_shapes((2, 3), (2,)))
case("broadcast_shapes(-1)", lambda xp, A: xp.broadcast_shapes((2, -1), (2,)))
case("broadcast_shapes('a')", lambda xp, A: xp.broadcast_shapes("a"))
case("broadcast_shapes(1.5)", lambda xp, A: xp.broadcast_shapes(1.5))
case("broadcast_shapes()", lambda xp, A: xp.broadcast_shapes())
case("atleast_1d()", lambda xp, A: xp.atleast_1d())
case("diagonal(1-d)", lambda xp, A: xp.diagonal(_i(3)(xp, A)))
case("diagonal(axis1 == axis2)", lambda xp, A: xp.diagonal(_m(xp, A), axis1=0, axis2=0))
case("diagonal(axis1=0, axis2=-2)", lambda xp, A: xp.diagonal(_m(xp, A), axis1=0, axis2=-2))
case("diagonal(offset=1.5)", lambda xp, A: xp.diagonal(_m(xp, A), offset=1.5))
case("diagonal(offset=10)", lambda xp, A: xp.diagonal(_m(xp, A), offset=10))
case("diagonal(offset=2**63)", lambda xp, A: xp.diagonal(_m(xp, A), offset=2**63))
case("trace(1-d)", lambda xp, A: xp.trace(_i(3)(xp, A)))
case("trace(axis1 == axis2)", lambda xp, A: xp.trace(_m(xp, A), axis1=1, axis2=1))
case("trace(dtype='x')", lambda xp, A: xp.trace(_m(xp, A), dtype="x"))
case("trace(dtype=int8)", lambda xp, A: xp.trace(_m(xp, A), dtype="int8"))
for ns in [-1, (2, -1), 2.5, "a", None, (2, 2.5), 2**63, True, (), 0]:
    case(f"resize({ns!r})", lambda xp, A, ns=ns: xp.resize(_m(xp, A), ns))
case("resize(empty, 3)", lambda xp, A: xp.resize(_e(xp, A), 3))

# ------------------------------------------------------------ indexing functions
for idx in [[3], [-4], [1.5], ["a"], [True, False, True], [[0, 1]], 2**63, np.array([0.0])]:
    case(f"take({idx!r})", lambda xp, A, idx=idx: xp.take(_i(3)(xp, A), idx))
    case(f"take(axis=0, {idx!r})", lambda xp, A, idx=idx: xp.take(_m(xp, A), idx, axis=0))
for mode in ["x", None, 5, "clip", "wrap", "raise"]:
    case(f"take(mode={mode!r})", lambda xp, A, mode=mode: xp.take(_i(3)(xp, A), [5], mode=mode))
    case(f"put(mode={mode!r})", lambda xp, A, mode=mode: xp.put(_i(3)(xp, A), [5], 1.0, mode=mode))
    case(f"choose(mode={mode!r})", lambda xp, A, mode=mode: xp.choose(A(np.array([0, 3])), [[1, 2], [3, 4]],
                                                                      mode=mode))
case("take(0-d)", lambda xp, A: xp.take(_z(xp, A), 0))
case("take(0-d, axis=0)", lambda xp, A: xp.take(_z(xp, A), 0, axis=0))
case("take(empty, [0])", lambda xp, A: xp.take(_e(xp, A), [0]))
case("take(out=bad)", lambda xp, A: xp.take(_i(3)(xp, A), [0, 1], out=A(np.zeros(3))))
case("put([3])", lambda xp, A: xp.put(_i(3)(xp, A), [3], 1.0))
case("put(1.5)", lambda xp, A: xp.put(_i(3)(xp, A), [1.5], 1.0))
case("put(values='a')", lambda xp, A: xp.put(_i(3)(xp, A), [0], "a"))
case("put(list)", lambda xp, A: xp.put([1, 2], [0], 1.0))
case("put(empty values)", lambda xp, A: xp.put(_i(3)(xp, A), [0], []))
case("put(empty target)", lambda xp, A: xp.put(_e(xp, A), [0], 1.0))
case("take_along_axis(float idx)", lambda xp, A: xp.take_along_axis(_m(xp, A), A(np.zeros((2, 1))), axis=1))
case("take_along_axis(ndim mismatch)", lambda xp, A: xp.take_along_axis(_m(xp, A), A(np.zeros(2, np.int64)),
                                                                        axis=1))
case("take_along_axis(out of range)", lambda xp, A: xp.take_along_axis(_m(xp, A), A(np.full((2, 1), 5)),
                                                                       axis=1))
case("take_along_axis(axis=None, 2-d idx)", lambda xp, A: xp.take_along_axis(_m(xp, A),
                                                                             A(np.zeros((2, 1), np.int64)), axis=None))
case("choose(out of range)", lambda xp, A: xp.choose(A(np.array([0, 3])), [[1, 2], [3, 4]]))
case("choose(float idx)", lambda xp, A: xp.choose(A(np.array([0.0, 1.0])), [[1, 2], [3, 4]]))
case("choose([] choices)", lambda xp, A: xp.choose(A(np.array([0])), []))
case("choose(shape mismatch)", lambda xp, A: xp.choose(A(np.array([0, 1, 0])), [[1, 2], [3, 4]]))
case("compress(float cond)", lambda xp, A: xp.compress([1.5], _i(3)(xp, A)))
case("compress(too long)", lambda xp, A: xp.compress([True] * 5, _i(3)(xp, A)))
case("compress(2-d cond)", lambda xp, A: xp.compress([[True]], _i(3)(xp, A)))
case("compress(0-d a)", lambda xp, A: xp.compress([True], _z(xp, A)))
case("extract(shape mismatch)", lambda xp, A: xp.extract([True, False], _i(3)(xp, A)))
case("extract(0-d)", lambda xp, A: xp.extract(True, _z(xp, A)))
case("nonzero(0-d)", lambda xp, A: xp.nonzero(_z(xp, A)))
case("argwhere(0-d)", lambda xp, A: xp.argwhere(_z(xp, A)))
case("flatnonzero(0-d)", lambda xp, A: xp.flatnonzero(_z(xp, A)))
case("where(shape mismatch)", lambda xp, A: xp.where(A(np.array([True, False])), _i(3)(xp, A), 0.0))
case("where(one of x, y)", lambda xp, A: xp.where(A(np.array([True])), 1.0))
case("where('a')", lambda xp, A: xp.where(A(np.array([True])), "a", 1.0))
case("where(0-d cond)", lambda xp, A: xp.where(_z(xp, A)))
case("select(mismatch)", lambda xp, A: xp.select([A(np.array([True]))], [_i(2)(xp, A), _i(2)(xp, A)]))
case("select([])", lambda xp, A: xp.select([], []))
case("select(float cond)", lambda xp, A: xp.select([A(np.array([1.0]))], [_i(1)(xp, A)]))
case("select(default='a')", lambda xp, A: xp.select([A(np.array([True]))], [_i(1)(xp, A)], default="a"))
for args in [([3, 0], (3, 3)), ([-1, 0], (3, 3)), ([0.5, 0], (3, 3)), ([0], (3, 3)), ([0, 0], (3, -3)),
             ([0, 0], (3, 3), "x"), ([0, 0], (3, 3), "C", "x"), ([[0], [0]], (3, 3), "wrap"),
             ([4, 0], (3, 3), "clip"), ([0, 0], ())]:
    case(f"ravel_multi_index{args!r}", lambda xp, A, args=args: xp.ravel_multi_index(*args))
for args in [(9, (3, 3)), (-1, (3, 3)), (1.5, (3, 3)), (0, (3, -3)), (0, ()), (1, (3, 3), "x"), ([9, 0], (3, 3)),
             ("a", (3,)), (0, (0,))]:
    case(f"unravel_index{args!r}", lambda xp, A, args=args: xp.unravel_index(*args))
case("ix_(2-d)", lambda xp, A: xp.ix_(_m(xp, A)))
case("ix_(float)", lambda xp, A: xp.ix_(_i(2)(xp, A)))
case("ix_()", lambda xp, A: xp.ix_())

# ------------------------------------------------------------ element-wise
BINOPS = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal", "less", "arctan2",
          "bitwise_and", "left_shift", "logical_and", "floor_divide", "remainder", "fmod", "hypot", "gcd"]
for op in BINOPS:
    case(f"{op}(one arg)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A)))
    case(f"{op}(three args)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, 2, 3))
    case(f"{op}(x, 'a')", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), "a"))
    case(f"{op}(x, None)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), None))
    case(f"{op}(x, object())", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), object()))
    case(f"{op}(x, [1, 2])", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), [1, 2]))
    case(f"{op}(out=list)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, out=[0, 0, 0]))
    case(f"{op}(out=bad shape)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, out=A(np.zeros(2))))
    case(f"{op}(out=int)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, out=A(np.zeros(3, np.int64))))
    case(f"{op}(out=bool)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, out=A(np.zeros(3, bool))))
    case(f"{op}(out=(a, b))", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, out=(A(np.zeros(3)),) * 2))
    case(f"{op}(dtype='x')", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, dtype="x"))
    case(f"{op}(dtype=bool)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, dtype=bool))
    case(f"{op}(dtype=int8)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, dtype="int8"))
    case(f"{op}(int, dtype=float32)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3)), 1, dtype="float32"))
    case(f"{op}(casting='x')", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, casting="x"))
    case(f"{op}(bad kw)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, bogus=1))
    case(f"{op}(bool, bool)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([True, False])), True))
    case(f"{op}(complex)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([1j, 2])), 1j))
    case(f"{op}(int, -1)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3)), -1))
    case(f"{op}(uint8, 300)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3, dtype=np.uint8)), 300))
    case(f"{op}(uint8, -1)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3, dtype=np.uint8)), -1))
    case(f"{op}(int8, 2**64)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3, dtype=np.int8)), 2**64))
    case(f"{op}(int64, 2**63)", lambda xp, A, op=op: getattr(xp, op)(A(np.arange(3)), 2**63))
    case(f"{op}(float32, 1e300)", lambda xp, A, op=op: getattr(xp, op)(A(np.ones(3, np.float32)), 1e300))
UNOPS = ["negative", "absolute", "sqrt", "exp", "sin", "invert", "logical_not", "isnan", "sign", "floor", "rint",
         "reciprocal", "signbit", "cbrt", "arccosh", "positive", "square"]
for op in UNOPS:
    case(f"{op}('a')", lambda xp, A, op=op: getattr(xp, op)("a"))
    case(f"{op}(None)", lambda xp, A, op=op: getattr(xp, op)(None))
    case(f"{op}(bool)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([True, False]))))
    case(f"{op}(complex)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([1j, -2]))))
    case(f"{op}(int)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([1, -2, 0]))))
    case(f"{op}(uint8)", lambda xp, A, op=op: getattr(xp, op)(A(np.array([1, 2, 0], np.uint8))))
    case(f"{op}(out=int)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), out=A(np.zeros(3, np.int64))))
    case(f"{op}(out=0-d)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), out=A(np.zeros(()))))
    case(f"{op}(dtype=int64)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), dtype="int64"))
    case(f"{op}(two args)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), 1, 2))
    case(f"{op}(where=False)", lambda xp, A, op=op: getattr(xp, op)(_i(3)(xp, A), where=True))
for rhs in ["'a'", "None", "b'a'", "object()", "[1, 2]", "[1, 2, 3]", "'abc'", "np.str_('a')", "[1, 'a', 2]",
            "{}", "(1, 2, 3)", "np.datetime64('2020')", "np.array(['a', 'b', 'c'])", "np.array([1, 2, 3], object)",
            "2**64", "-2**64", "1j", "np.float32(1.5)", "[1, None]", "[2**64, 1]", "range(3)", "range(2)",
            "(i for i in range(3))", "__import__('decimal').Decimal(1)", "len"]:
    for sym in ["==", "!=", "<", ">=", "+", "*", "&", "<<", "//", "%", "**"]:
        case(f"x {sym} {rhs}", lambda xp, A, sym=sym, rhs=rhs: eval(f"x {sym} {rhs}",
                                                                    {"x": A(np.arange(3)), "np": np}))
        if sym in ("==", "<", "+"):
            case(f"{rhs} {sym} x", lambda xp, A, sym=sym, rhs=rhs: eval(f"{rhs} {sym} x",
                                                                        {"x": A(np.arange(3)), "np": np}))
    case(f"float x == {rhs}", lambda xp, A, rhs=rhs: eval(f"x == {rhs}", {"x": _i(3)(xp, A), "np": np}))
    case(f"bool x == {rhs}", lambda xp, A, rhs=rhs: eval(f"x == {rhs}", {"x": A(np.array([True])), "np": np}))
    case(f"0-d x == {rhs}", lambda xp, A, rhs=rhs: eval(f"x == {rhs}", {"x": _z(xp, A), "np": np}))
    case(f"x += {rhs}", lambda xp, A, rhs=rhs: exec(f"x += {rhs}", {"x": A(np.arange(3)), "np": np}))
case("x == [x, None]", lambda xp, A: _i(3)(xp, A) == [_i(3)(xp, A), None])
case("x == [[x], [None]]", lambda xp, A: _i(3)(xp, A) == [[1, 2, 3], [1, None, 2]])
case("uint8 x += [1, 2, 3, 4]", lambda xp, A: exec("x += [1, 2, 3, 4]", {"x": A(np.zeros(3, np.uint8))}))
case("int x += 1.5 (shape mismatch)", lambda xp, A: xp.add(A(np.zeros(3, np.int64)), A(np.ones(4)),
                                                          out=A(np.zeros(3, np.int64))))
for dt in ["float16", "float32", "complex64", "float64"]:
    case(f"{dt} x + 2**64", lambda xp, A, dt=dt: A(np.ones(2, dt)) + 2**64)
    case(f"{dt} x * -2**70", lambda xp, A, dt=dt: A(np.ones(2, dt)) * -2**70)
    case(f"{dt} x += 2**64", lambda xp, A, dt=dt: exec("x += 2**64", {"x": A(np.ones(2, dt))}))
    case(f"{dt} x[0] = 2**64", lambda xp, A, dt=dt: exec("x[0] = 2**64", {"x": A(np.ones(2, dt))}))
    case(f"{dt} full(2, 2**64)", lambda xp, A, dt=dt: xp.full(2, 2**64, dtype=dt))
    case(f"{dt} asarray(2**64)", lambda xp, A, dt=dt: xp.asarray(2**64, dtype=dt))
    case(f"{dt} where(c, x, 2**64)", lambda xp, A, dt=dt: xp.where(A(np.array([True, False])), A(np.ones(2, dt)),
                                                                   2**64))
case("float x + 10**400", lambda xp, A: _i(3)(xp, A) + 10**400)
case("int8 x + 2.5 + 2**64", lambda xp, A: xp.add(A(np.ones(2, np.int8)) + 2.5, 2**64))
case("x[[2**64]]", lambda xp, A: _i(3)(xp, A)[[2**64]])
case("x[[0, 2**64]] = 1", lambda xp, A: exec("x[[0, 2**64]] = 1", {"x": _i(3)(xp, A)}))
case("asarray([a, [1, 2, 3]])", lambda xp, A: xp.asarray([_i(3)(xp, A), [1, 2, 3]]))
case("asarray([[1, 2, 3], a])", lambda xp, A: xp.asarray([[1, 2, 3], _i(3)(xp, A)]))
case("asarray([a, [1, 2]])", lambda xp, A: xp.asarray([_i(3)(xp, A), [1, 2]]))
case("asarray([a, 5])", lambda xp, A: xp.asarray([_i(3)(xp, A), 5]))
case("asarray([[a], [a]])", lambda xp, A: xp.asarray([[_i(3)(xp, A)], [_i(3)(xp, A)]]))
case("where(c, x, None)", lambda xp, A: xp.where(A(np.array([True, False, True])), _i(3)(xp, A), None))
case("where(c, None, x)", lambda xp, A: xp.where(A(np.array([True, False, True])), None, _i(3)(xp, A)))
case("where(c, x)", lambda xp, A: xp.where(A(np.array([True, False, True])), _i(3)(xp, A)))
case("x - True (bool)", lambda xp, A: A(np.array([True])) - True)
case("-bool", lambda xp, A: -A(np.array([True])))
case("int ** -1", lambda xp, A: A(np.arange(3)) ** -1)
case("int ** int array -1", lambda xp, A: A(np.arange(3)) ** A(np.array([1, -1, 2])))
case("int power(0, -1)", lambda xp, A: xp.power(A(np.array([0])), -1))
case("int // 0", lambda xp, A: A(np.arange(3)) // 0)
case("int % 0", lambda xp, A: A(np.arange(3)) % 0)
case("float / 0", lambda xp, A: _i(3)(xp, A) / 0)
case("int << -1", lambda xp, A: A(np.arange(3)) << -1)
case("float << 1", lambda xp, A: _i(3)(xp, A) << 1)
case("float & 1", lambda xp, A: _i(3)(xp, A) & 1)
case("~float", lambda xp, A: ~_i(3)(xp, A))
case("float32 x += 1j", lambda xp, A: exec("x += 1j", {"x": A(np.ones(3, np.float32))}))
case("int x += 1.5", lambda xp, A: exec("x += 1.5", {"x": A(np.arange(3))}))
case("int x /= 2", lambda xp, A: exec("x /= 2", {"x": A(np.arange(3))}))
case("uint8 x += 300", lambda xp, A: exec("x += 300", {"x": A(np.arange(3, dtype=np.uint8))}))
case("x += bigger", lambda xp, A: exec("x += y", {"x": _i(3)(xp, A), "y": _m(xp, A)}))
case("x @ y mismatch", lambda xp, A: _m(xp, A) @ _m(xp, A))
case("x @ 0-d", lambda xp, A: _m(xp, A) @ _z(xp, A))
case("x @ 'a'", lambda xp, A: _m(xp, A) @ "a")
case("x @= y", lambda xp, A: exec("x @= y", {"x": _m(xp, A), "y": _m(xp, A).T}))
case("divmod(x, 0)", lambda xp, A: divmod(A(np.arange(3)), 0))
for args in [(1, 0), (None, None), ("a", 1), (2, 1), (float("nan"), 1), (0, [1, 2])]:
    case(f"clip{args!r}", lambda xp, A, args=args: xp.clip(_i(3)(xp, A), *args))
case("clip(out=int)", lambda xp, A: xp.clip(_i(3)(xp, A), 0, 1, out=A(np.zeros(3, np.int64))))
case("clip(min= and a_min=)", lambda xp, A: xp.clip(_i(3)(xp, A), a_min=0, a_max=1, min=0))
for dec in [1.5, "a", None, 2**31, -(2**40), 400, -400, True]:
    case(f"round(decimals={dec!r})", lambda xp, A, dec=dec: xp.round(_i(3)(xp, A), dec))
    case(f"round(int, decimals={dec!r})", lambda xp, A, dec=dec: xp.round(A(np.arange(3)), dec))
case("round(out=int)", lambda xp, A: xp.round(_i(3)(xp, A), out=A(np.zeros(3, np.int64))))
case("ufunc.reduce missing", lambda xp, A: xp.add.reduce(_i(3)(xp, A)))
case("ufunc.nin", lambda xp, A: xp.add.nin)
case("nextafter(int)", lambda xp, A: xp.nextafter(A(np.arange(3)), 1))
case("isdtype(int64, 'x')", lambda xp, A: xp.isdtype(xp.int64, "x"))
case("isdtype(int64, 5)", lambda xp, A: xp.isdtype(xp.int64, 5))
case("isdtype('x', 'integral')", lambda xp, A: xp.isdtype("x", "integral"))

# ------------------------------------------------------------ array methods and protocol
case("astype(casting='safe')", lambda xp, A: _m(xp, A).astype("int64", casting="safe"))
case("astype(casting='x')", lambda xp, A: _m(xp, A).astype("int64", casting="x"))
case("astype(casting='no')", lambda xp, A: _m(xp, A).astype("float32", casting="no"))
case("astype(complex -> float)", lambda xp, A: A(np.array([1 + 1j])).astype("float64"))
case("astype(order='X')", lambda xp, A: _m(xp, A).astype("float32", order="X"))
case("astype(copy='x')", lambda xp, A: _m(xp, A).astype("float32", copy="x"))
case("astype(nan -> int)", lambda xp, A: A(np.array([np.nan])).astype("int64"))
case("view('x')", lambda xp, A: _m(xp, A).view("x"))
case("view(int8)", lambda xp, A: _m(xp, A).view("int8"))
case("view(complex128) odd", lambda xp, A: _m(xp, A).view("complex128"))
case("view(int8) transposed", lambda xp, A: _m(xp, A).T.view("int8"))
case("view(0-d, int8)", lambda xp, A: _z(xp, A).view("int8"))
case("view(type=list)", lambda xp, A: _m(xp, A).view(list))
for it in [(5,), (-7,), (1.5,), ("a",), (0, 5), (0, 0, 0), (), (None,), (2**63,), (True,)]:
    case(f"item{it!r}", lambda xp, A, it=it: _m(xp, A).item(*it))
case("item(0-d, 0)", lambda xp, A: _z(xp, A).item(0))
case("item(0-d, 1)", lambda xp, A: _z(xp, A).item(1))
for v in ["'a'", "None", "[1, 2]", "[1, 2, 3]", "1j", "2**64", "object()", "np.datetime64('2020')"]:
    case(f"fill({v})", lambda xp, A, v=v: _m(xp, A).fill(eval(v)))
    case(f"int fill({v})", lambda xp, A, v=v: A(np.arange(3)).fill(eval(v)))
case("len(0-d)", lambda xp, A: len(_z(xp, A)))
case("iter(0-d)", lambda xp, A: iter(_z(xp, A)))
case("int(size 2)", lambda xp, A: int(_i(2)(xp, A)))
case("float(size 0)", lambda xp, A: float(_e(xp, A)))
case("float(complex)", lambda xp, A: float(A(np.array(1j))))
case("int(nan)", lambda xp, A: int(A(np.array(np.nan))))
case("int(inf)", lambda xp, A: int(A(np.array(np.inf))))
case("bool(size 2)", lambda xp, A: bool(_i(2)(xp, A)))
case("bool(size 0)", lambda xp, A: bool(_e(xp, A)))
case("operator.index(float)", lambda xp, A: __import__("operator").index(_z(xp, A)))
case("operator.index(int 1-d)", lambda xp, A: __import__("operator").index(A(np.array([1]))))
case("operator.index(int 0-d)", lambda xp, A: __import__("operator").index(A(np.array(1))))
case("hash", lambda xp, A: hash(_m(xp, A)))
case("complex(size 2)", lambda xp, A: complex(_i(2)(xp, A)))
case("shape = 5", lambda xp, A: setattr(_i(6)(xp, A), "shape", 5))
case("shape = (4,)", lambda xp, A: setattr(_i(6)(xp, A), "shape", (4,)))
case("shape = 'a'", lambda xp, A: setattr(_i(6)(xp, A), "shape", "a"))
case("shape = (2, 3)", lambda xp, A: setattr(_i(6)(xp, A), "shape", (2, 3)))
case("shape = (-1, 2)", lambda xp, A: setattr(_i(6)(xp, A), "shape", (-1, 2)))
case("dtype = int8", lambda xp, A: setattr(_i(6)(xp, A), "dtype", "int8"))
case("ndim = 2", lambda xp, A: setattr(_i(6)(xp, A), "ndim", 2))
case("size = 2", lambda xp, A: setattr(_i(6)(xp, A), "size", 2))
case("strides = (8,)", lambda xp, A: setattr(_i(6)(xp, A), "strides", (8,)))
case("T = 1", lambda xp, A: setattr(_i(6)(xp, A), "T", 1))
case("real = 'a'", lambda xp, A: setattr(_i(6)(xp, A), "real", "a"))
case("imag = 1 (real array)", lambda xp, A: setattr(_i(6)(xp, A), "imag", 1))
case("mT(1-d)", lambda xp, A: _i(3)(xp, A).mT)
case("tolist(0-d)", lambda xp, A: _z(xp, A).tolist())
case("copy(order='X')", lambda xp, A: _m(xp, A).copy(order="X"))
case("repeat method(-1)", lambda xp, A: _m(xp, A).repeat(-1))
case("swapaxes method(0, 5)", lambda xp, A: _m(xp, A).swapaxes(0, 5))
case("diagonal method(1-d)", lambda xp, A: _i(3)(xp, A).diagonal())
case("clip method(None, None)", lambda xp, A: _m(xp, A).clip())
case("sum method(bad kw)", lambda xp, A: _m(xp, A).sum(bogus=1))
case("sum method(positional axis, dtype)", lambda xp, A: _m(xp, A).sum(0, "float32"))
case("sum method(too many positional)", lambda xp, A: _m(xp, A).sum(0, None, None, False, 0, True, 1))
case("__array_namespace__(api_version='x')", lambda xp, A: _m(xp, A).__array_namespace__(api_version="x"))

# ------------------------------------------------------------ indexing
for key in ["5", "-4", "1.5", "'a'", "None, None, 5", "0, 0", "..., ...", "[3]", "[1.5]", "[True, False]",
            "[[True, False, True]]", "np.array([True, False])", "[-4]", "2**63", "slice(0, 2, 0)", "[[0, 1], [0]]",
            "()", "[]", "np.array([], dtype=float)", "{}", "(1, [0, 1])", "[1, [0, 1]]", "True", "np.True_",
            "np.float64(1)", "np.array(1.0)", "b'a'", "[0, 'a']", "[None]", "object()", "Ellipsis, 1, Ellipsis",
            "slice(None, None, 1.5)", "slice('a', None)", "slice(2**63, None)", "[[[0]]]"]:
    case(f"x1[{key}]", lambda xp, A, key=key: eval(f"x[{key}]", {"x": _i(3)(xp, A), "np": np}))
    case(f"x1[{key}] = 1", lambda xp, A, key=key: exec(f"x[{key}] = 1", {"x": _i(3)(xp, A), "np": np}))
for key in ["0, 5", "3", "1.5", "0, 0, 0", "[0, 1], [0]", "[0, 1], [0, 1, 2]", "[[True, False, True]]",
            "np.ones((2, 2), bool)", "np.ones((2, 3), bool), 0", ":, [5]", "..., 5", "None, 5"]:
    case(f"x2[{key}]", lambda xp, A, key=key: eval(f"x[{key}]", {"x": _m(xp, A), "np": np}))
for key in ["0", "()", "...", "None", "[0]", "True", "False", "0.0", "np.array(True)"]:
    case(f"x0[{key}]", lambda xp, A, key=key: eval(f"x[{key}]", {"x": _z(xp, A), "np": np}))
for val in ["'a'", "[1, 2]", "[[1, 2, 3]]", "None", "1j", "[1, 2, 3, 4]", "object()", "np.ones((2, 3))",
            "np.array(['a'])", "2**64", "np.datetime64('2020')", "[]"]:
    case(f"x1[:] = {val}", lambda xp, A, val=val: exec(f"x[:] = {val}", {"x": _i(3)(xp, A), "np": np}))
    case(f"int x1[0] = {val}", lambda xp, A, val=val: exec(f"x[0] = {val}", {"x": A(np.arange(3)), "np": np}))
case("readonly broadcast_to setitem", lambda xp, A: exec("x[0] = 1", {"x": xp.broadcast_to(_i(3)(xp, A), (2, 3))}))
case("bool mask setitem wrong count", lambda xp, A: exec("x[x > 0] = [1, 2, 3]", {"x": _i(3)(xp, A)}))
case("fancy setitem wrong shape", lambda xp, A: exec("x[[0, 1]] = [1, 2, 3]", {"x": _i(3)(xp, A)}))
case("del x[0]", lambda xp, A: exec("del x[0]", {"x": _i(3)(xp, A)}))

# ------------------------------------------------------------ statistics and sets
def _e2(xp, A):
    return A(np.zeros((0, 3)))


for f in ["argmax", "min", "mean", "std", "sum", "median", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean",
          "nansum", "cumsum", "average", "count_nonzero", "any"]:
    case(f"{f}(empty (0, 3), axis=0)", lambda xp, A, f=f: getattr(xp, f)(_e2(xp, A), axis=0))
    case(f"{f}(empty (0, 3), axis=1)", lambda xp, A, f=f: getattr(xp, f)(_e2(xp, A), axis=1))
    case(f"{f}(0-d, axis=())", lambda xp, A, f=f: getattr(xp, f)(_z(xp, A), axis=()))
    case(f"{f}(axis=())", lambda xp, A, f=f: getattr(xp, f)(_m(xp, A), axis=()))
    if f in ("count_nonzero", "average"):
        continue
    case(f"{f}(out=wrong shape)", lambda xp, A, f=f: getattr(xp, f)(_m(xp, A), axis=0, out=A(np.zeros(5))))
    case(f"{f}(out=list)", lambda xp, A, f=f: getattr(xp, f)(_m(xp, A), axis=0, out=[0, 0, 0]))
    case(f"{f}(out=int)", lambda xp, A, f=f: getattr(xp, f)(_m(xp, A), axis=0, out=A(np.zeros(3, np.int64))))
    case(f"{f}(out=float32)", lambda xp, A, f=f: getattr(xp, f)(_m(xp, A), axis=0, out=A(np.zeros(3, np.float32))))
for sub in ["ij,jk->ik,", "", "ij,jk->", "i->j", "ij->jj", "I", "ab", "...i,i"]:
    case(f"einsum({sub!r})", lambda xp, A, sub=sub: xp.einsum(sub, _m(xp, A), *([_m(xp, A).T] if "," in sub else [])))
for f in ["stack", "concatenate", "concat", "hstack", "vstack"]:
    case(f"{f}(generator)", lambda xp, A, f=f: getattr(xp, f)(x for x in [_m(xp, A)]))
for q in [101, -1, [50, 150], "a", None, float("nan"), 50.5, [[50]]]:
    case(f"percentile(q={q!r})", lambda xp, A, q=q: xp.percentile(_i(5)(xp, A), q))
    case(f"quantile(q={q!r})", lambda xp, A, q=q: xp.quantile(_i(5)(xp, A), q if not isinstance(q, (int, float)) or
                                                               isinstance(q, bool) else q / 100))
for meth in ["x", "linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "hazen", 5]:
    case(f"percentile(method={meth!r})", lambda xp, A, meth=meth: xp.percentile(_i(5)(xp, A), 40, method=meth))
for ax in BAD_AXES + [None]:
    case(f"median(axis={ax!r})", lambda xp, A, ax=ax: xp.median(_m(xp, A), axis=ax))
    case(f"percentile(axis={ax!r})", lambda xp, A, ax=ax: xp.percentile(_m(xp, A), 50, axis=ax))
    case(f"average(axis={ax!r})", lambda xp, A, ax=ax: xp.average(_m(xp, A), axis=ax))
    case(f"nansum(axis={ax!r})", lambda xp, A, ax=ax: xp.nansum(_m(xp, A), axis=ax))
    case(f"nanmax(axis={ax!r})", lambda xp, A, ax=ax: xp.nanmax(_m(xp, A), axis=ax))
    case(f"nanargmin(axis={ax!r})", lambda xp, A, ax=ax: xp.nanargmin(_m(xp, A), axis=ax))
    case(f"diff(axis={ax!r})", lambda xp, A, ax=ax: xp.diff(_m(xp, A), axis=ax))
    case(f"unique(axis={ax!r})", lambda xp, A, ax=ax: xp.unique(_m(xp, A), axis=ax))
    case(f"cumulative_sum(axis={ax!r})", lambda xp, A, ax=ax: xp.cumulative_sum(_m(xp, A), axis=ax))
case("median(empty)", lambda xp, A: xp.median(_e(xp, A)))
case("median(0-d)", lambda xp, A: xp.median(_z(xp, A)))
case("median(keepdims='x')", lambda xp, A: xp.median(_m(xp, A), keepdims="x"))
case("median([inf, 1])", lambda xp, A: xp.median(A(np.array([np.inf, 1.0]))))
case("median([1, 2, inf])", lambda xp, A: xp.median(A(np.array([1.0, 2.0, np.inf]))))
case("median([-inf, inf])", lambda xp, A: xp.median(A(np.array([-np.inf, np.inf]))))
case("median([nan, 1])", lambda xp, A: xp.median(A(np.array([np.nan, 1.0]))))
case("percentile(empty)", lambda xp, A: xp.percentile(_e(xp, A), 50))
case("quantile(0-d)", lambda xp, A: xp.quantile(_z(xp, A), 0.5))
case("nanmax(all nan)", lambda xp, A: xp.nanmax(A(np.array([np.nan, np.nan]))))
case("nanargmax(all nan)", lambda xp, A: xp.nanargmax(A(np.array([np.nan, np.nan]))))
case("nanmean(all nan)", lambda xp, A: xp.nanmean(A(np.array([np.nan]))))
case("nanmin(empty)", lambda xp, A: xp.nanmin(_e(xp, A)))
for b in [[-1, 2], [1.5], "a", [[1]], [], [2**63], [True, False]]:
    case(f"bincount({b!r})", lambda xp, A, b=b: xp.bincount(A(np.array(b)) if isinstance(b, list) and b and
                                                            not isinstance(b[0], list) else b))
case("bincount(minlength=-1)", lambda xp, A: xp.bincount(A(np.array([1, 2])), minlength=-1))
case("bincount(minlength=1.5)", lambda xp, A: xp.bincount(A(np.array([1, 2])), minlength=1.5))
case("bincount(weights mismatch)", lambda xp, A: xp.bincount(A(np.array([1, 2])), weights=A(np.ones(3))))
case("bincount(0-d)", lambda xp, A: xp.bincount(A(np.array(1))))
for bins in [-1, 0, 2.5, "x", [3, 1, 2], [[1, 2]], "auto", 2**40, [1, float("nan")]]:
    case(f"histogram(bins={bins!r})", lambda xp, A, bins=bins: xp.histogram(_i(5)(xp, A), bins))
case("histogram(range=(2, 1))", lambda xp, A: xp.histogram(_i(5)(xp, A), 3, range=(2, 1)))
case("histogram(range=(0, nan))", lambda xp, A: xp.histogram(_i(5)(xp, A), 3, range=(0, float("nan"))))
case("histogram(nan data)", lambda xp, A: xp.histogram(A(np.array([1.0, np.nan])), 3))
case("histogram(weights mismatch)", lambda xp, A: xp.histogram(_i(5)(xp, A), 3, weights=A(np.ones(2))))
case("histogram(empty)", lambda xp, A: xp.histogram(_e(xp, A), 3))
case("digitize(non-monotonic)", lambda xp, A: xp.digitize(_i(3)(xp, A), A(np.array([1.0, 0.0, 2.0]))))
case("digitize(2-d bins)", lambda xp, A: xp.digitize(_i(3)(xp, A), _m(xp, A)))
case("digitize(complex)", lambda xp, A: xp.digitize(A(np.array([1j])), A(np.array([1.0, 2.0]))))
for n in [-1, 1.5, "a", None, 0, 5, True]:
    case(f"diff(n={n!r})", lambda xp, A, n=n: xp.diff(_i(3)(xp, A), n=n))
case("diff(0-d)", lambda xp, A: xp.diff(_z(xp, A)))
case("diff(prepend=mismatch)", lambda xp, A: xp.diff(_m(xp, A), prepend=A(np.zeros((2, 2))), axis=0))
case("average(weights mismatch)", lambda xp, A: xp.average(_m(xp, A), weights=A(np.ones(2))))
case("average(weights sum 0)", lambda xp, A: xp.average(_i(2)(xp, A), weights=A(np.array([1.0, -1.0]))))
case("average(weights 1-d axis=None)", lambda xp, A: xp.average(_m(xp, A), weights=A(np.ones(3))))
case("average(empty)", lambda xp, A: xp.average(_e(xp, A)))
case("cov(3-d)", lambda xp, A: xp.cov(_i(2, 2, 2)(xp, A)))
case("cov(ddof=1.5)", lambda xp, A: xp.cov(_m(xp, A), ddof=1.5))
case("cov(y mismatch)", lambda xp, A: xp.cov(_m(xp, A), _i(2)(xp, A)))
case("cov(1 obs)", lambda xp, A: xp.cov(_i(1)(xp, A)))
case("corrcoef(3-d)", lambda xp, A: xp.corrcoef(_i(2, 2, 2)(xp, A)))
case("isclose(mismatch)", lambda xp, A: xp.isclose(_m(xp, A), _i(2)(xp, A)))
case("isclose('a')", lambda xp, A: xp.isclose(_m(xp, A), "a"))
case("allclose(mismatch)", lambda xp, A: xp.allclose(_m(xp, A), _i(2)(xp, A)))
case("array_equal(mismatch)", lambda xp, A: xp.array_equal(_m(xp, A), _i(2)(xp, A)))
case("array_equal('a')", lambda xp, A: xp.array_equal(_m(xp, A), "a"))
case("isin(kind='x')", lambda xp, A: xp.isin(_i(3)(xp, A), [1.0], kind="x"))
case("isin(2-d test)", lambda xp, A: xp.isin(_i(3)(xp, A), _m(xp, A)))
case("unique(0-d)", lambda xp, A: xp.unique(_z(xp, A)))
case("unique(0-d, axis=0)", lambda xp, A: xp.unique(_z(xp, A), axis=0))
case("unique(empty)", lambda xp, A: xp.unique(_e(xp, A)))
case("unique_values(0-d)", lambda xp, A: xp.unique_values(_z(xp, A)))
case("intersect1d(2-d)", lambda xp, A: xp.intersect1d(_m(xp, A), _i(3)(xp, A)))
case("setdiff1d('a')", lambda xp, A: xp.setdiff1d(_i(3)(xp, A), "a"))
case("cumulative_sum(2-d, no axis)", lambda xp, A: xp.cumulative_sum(_m(xp, A)))
case("cumulative_sum(0-d)", lambda xp, A: xp.cumulative_sum(_z(xp, A)))
case("cumulative_sum(include_initial)", lambda xp, A: xp.cumulative_sum(_i(3)(xp, A), include_initial=True))

# ------------------------------------------------------------ products
case("matmul(mismatch)", lambda xp, A: xp.matmul(_m(xp, A), _m(xp, A)))
case("matmul(0-d)", lambda xp, A: xp.matmul(_z(xp, A), _m(xp, A)))
case("matmul(out=bad)", lambda xp, A: xp.matmul(_m(xp, A), _m(xp, A).T, out=A(np.zeros(2))))
case("matmul(out=int)", lambda xp, A: xp.matmul(_m(xp, A), _m(xp, A).T, out=A(np.zeros((2, 2), np.int64))))
case("matmul(bool)", lambda xp, A: xp.matmul(A(np.ones((2, 2), bool)), A(np.ones((2, 2), bool))))
case("matmul('a')", lambda xp, A: xp.matmul(_m(xp, A), "a"))
case("matmul(batch mismatch)", lambda xp, A: xp.matmul(_i(2, 2, 2)(xp, A), _i(3, 2, 2)(xp, A)))
case("dot(mismatch)", lambda xp, A: xp.dot(_m(xp, A), _m(xp, A)))
case("dot(0-d)", lambda xp, A: xp.dot(_z(xp, A), _m(xp, A)))
case("dot(out=bad)", lambda xp, A: xp.dot(_m(xp, A), _m(xp, A).T, out=A(np.zeros(2))))
case("vdot(mismatch)", lambda xp, A: xp.vdot(_m(xp, A), _i(2)(xp, A)))
case("inner(mismatch)", lambda xp, A: xp.inner(_m(xp, A), _i(2)(xp, A)))
case("outer('a')", lambda xp, A: xp.outer(_i(2)(xp, A), "a"))
case("tensordot(axes=-1)", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=-1))
case("tensordot(axes=3)", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=3))
case("tensordot(axes=1.5)", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=1.5))
case("tensordot(axes mismatch)", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=([0], [1])))
case("tensordot(axes=([0], [5]))", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=([0], [5])))
case("tensordot(axes=([0, 1], [0]))", lambda xp, A: xp.tensordot(_m(xp, A), _m(xp, A), axes=([0, 1], [0])))
case("einsum('ij,jk')", lambda xp, A: xp.einsum("ij,jk", _m(xp, A), _m(xp, A)))
case("einsum('ij->k')", lambda xp, A: xp.einsum("ij->k", _m(xp, A)))
case("einsum('i')", lambda xp, A: xp.einsum("i", _m(xp, A)))
case("einsum('ii', 2x3)", lambda xp, A: xp.einsum("ii", _m(xp, A)))
case("einsum(5)", lambda xp, A: xp.einsum(5, _m(xp, A)))
case("einsum('ij,ij', one operand)", lambda xp, A: xp.einsum("ij,ij", _m(xp, A)))
case("kron('a')", lambda xp, A: xp.kron(_i(2)(xp, A), "a"))
case("vecdot(mismatch)", lambda xp, A: xp.vecdot(_m(xp, A), _i(2)(xp, A)))
case("vecdot(axis=5)", lambda xp, A: xp.vecdot(_m(xp, A), _m(xp, A), axis=5))
case("matrix_transpose(1-d)", lambda xp, A: xp.matrix_transpose(_i(3)(xp, A)))

# ------------------------------------------------------------ linalg, fft, random
case("linalg.inv(singular)", lambda xp, A: xp.linalg.inv(A(np.zeros((2, 2)))))
case("linalg.inv(non-square)", lambda xp, A: xp.linalg.inv(_m(xp, A)))
case("linalg.inv(1-d)", lambda xp, A: xp.linalg.inv(_i(3)(xp, A)))
case("linalg.inv(int)", lambda xp, A: xp.linalg.inv(A(np.eye(2, dtype=np.int64))))
case("linalg.solve(mismatch)", lambda xp, A: xp.linalg.solve(A(np.eye(2)), _i(3)(xp, A)))
case("linalg.solve(singular)", lambda xp, A: xp.linalg.solve(A(np.zeros((2, 2))), _i(2)(xp, A)))
case("linalg.det(non-square)", lambda xp, A: xp.linalg.det(_m(xp, A)))
case("linalg.det(1-d)", lambda xp, A: xp.linalg.det(_i(3)(xp, A)))
case("linalg.cholesky(not pd)", lambda xp, A: xp.linalg.cholesky(A(-np.eye(2))))
case("linalg.eigh(non-square)", lambda xp, A: xp.linalg.eigh(_m(xp, A)))
case("linalg.eigh(UPLO='x')", lambda xp, A: xp.linalg.eigh(A(np.eye(2)), UPLO="x"))
case("linalg.svd(1-d)", lambda xp, A: xp.linalg.svd(_i(3)(xp, A)))
case("linalg.qr(mode='x')", lambda xp, A: xp.linalg.qr(_m(xp, A), mode="x"))
case("linalg.qr(1-d)", lambda xp, A: xp.linalg.qr(_i(3)(xp, A)))
case("linalg.lstsq(mismatch)", lambda xp, A: xp.linalg.lstsq(_m(xp, A), _i(3)(xp, A)))
case("linalg.pinv(1-d)", lambda xp, A: xp.linalg.pinv(_i(3)(xp, A)))
case("linalg.matrix_power(1.5)", lambda xp, A: xp.linalg.matrix_power(A(np.eye(2)), 1.5))
case("linalg.matrix_power(non-square)", lambda xp, A: xp.linalg.matrix_power(_m(xp, A), 2))
case("linalg.matrix_power(singular, -1)", lambda xp, A: xp.linalg.matrix_power(A(np.zeros((2, 2))), -1))
case("linalg.matrix_rank(0-d)", lambda xp, A: xp.linalg.matrix_rank(_z(xp, A)))
for o in ["x", 3, -3, 0, 1.5, "fro", "nuc", np.inf, None]:
    case(f"linalg.norm(2-d, ord={o!r})", lambda xp, A, o=o: xp.linalg.norm(_m(xp, A), ord=o))
    case(f"linalg.norm(1-d, ord={o!r})", lambda xp, A, o=o: xp.linalg.norm(_i(3)(xp, A), ord=o))
case("linalg.norm(axis=5)", lambda xp, A: xp.linalg.norm(_m(xp, A), axis=5))
case("linalg.norm(axis=(0, 0))", lambda xp, A: xp.linalg.norm(_m(xp, A), axis=(0, 0)))
case("linalg.norm(axis=(0, 1, 2))", lambda xp, A: xp.linalg.norm(_i(2, 2, 2)(xp, A), axis=(0, 1, 2)))
case("linalg.norm(axis=1.5)", lambda xp, A: xp.linalg.norm(_m(xp, A), axis=1.5))
case("linalg.cross(size 2)", lambda xp, A: xp.linalg.cross(_i(2)(xp, A), _i(2)(xp, A)))
case("linalg.vector_norm(axis=5)", lambda xp, A: xp.linalg.vector_norm(_m(xp, A), axis=5))
case("linalg.matrix_norm(1-d)", lambda xp, A: xp.linalg.matrix_norm(_i(3)(xp, A)))
case("linalg.outer(2-d)", lambda xp, A: xp.linalg.outer(_m(xp, A), _m(xp, A)))
for n in [0, -1, 1.5, "a"]:
    case(f"fft.fft(n={n!r})", lambda xp, A, n=n: xp.fft.fft(_i(4)(xp, A), n=n))
    case(f"fft.rfft(n={n!r})", lambda xp, A, n=n: xp.fft.rfft(_i(4)(xp, A), n=n))
    case(f"fft.irfft(n={n!r})", lambda xp, A, n=n: xp.fft.irfft(_i(4)(xp, A), n=n))
for ax in BAD_AXES:
    case(f"fft.fft(axis={ax!r})", lambda xp, A, ax=ax: xp.fft.fft(_m(xp, A), axis=ax))
case("fft.fft(0-d)", lambda xp, A: xp.fft.fft(_z(xp, A)))
case("fft.fft(empty)", lambda xp, A: xp.fft.fft(_e(xp, A)))
case("fft.fft(norm='x')", lambda xp, A: xp.fft.fft(_i(4)(xp, A), norm="x"))
case("fft.fft2(1-d)", lambda xp, A: xp.fft.fft2(_i(4)(xp, A)))
case("fft.fftn(axes=(0, 0))", lambda xp, A: xp.fft.fftn(_m(xp, A), axes=(0, 0)))
case("fft.fftn(s=(2,), axes=(0, 1))", lambda xp, A: xp.fft.fftn(_m(xp, A), s=(2,), axes=(0, 1)))
case("fft.fftfreq(0)", lambda xp, A: xp.fft.fftfreq(0))
case("fft.fftfreq(-1)", lambda xp, A: xp.fft.fftfreq(-1))
case("fft.fftfreq(1.5)", lambda xp, A: xp.fft.fftfreq(1.5))
case("fft.fftshift(axes=5)", lambda xp, A: xp.fft.fftshift(_m(xp, A), axes=5))

# random: the errors of bad parameters (values differ by generator, so only
# failing calls are compared: NON_NUMERIC-free, values=False)
def _rng(xp):
    return xp.random.default_rng(0)


for args in [(5, 2), (0,), (-1,), (1.5, 2), (0, 10, -1), (0, 10, (2, -1)), (0, 2**70), (True, 3)]:
    case(f"random.integers{args!r}", lambda xp, A, args=args: _rng(xp).integers(*args), values=False)
for args in [(0.0, -1.0), (0.0, float("nan")), (0.0, 1.0, -1), (0.0, 1.0, (2, -1)), (0.0, 1.0, 1.5)]:
    case(f"random.normal{args!r}", lambda xp, A, args=args: _rng(xp).normal(*args), values=False)
    case(f"random.uniform{args!r}", lambda xp, A, args=args: _rng(xp).uniform(*args), values=False)
for args in [(-1.0,), (float("nan"),), (1.0, -1)]:
    case(f"random.exponential{args!r}", lambda xp, A, args=args: _rng(xp).exponential(*args), values=False)
    case(f"random.poisson{args!r}", lambda xp, A, args=args: _rng(xp).poisson(*args), values=False)
for args in [(-1, 0.5), (5, 1.5), (5, -0.5), (5, float("nan")), (1.5, 0.5)]:
    case(f"random.binomial{args!r}", lambda xp, A, args=args: _rng(xp).binomial(*args), values=False)
for args in [(-1.0,), (0.0,), (1.0, -1.0)]:
    case(f"random.gamma{args!r}", lambda xp, A, args=args: _rng(xp).gamma(*args), values=False)
for args in [(0,), (-1,), ([],), (3, 5, False), (3, None, True, [0.5, 0.6, 0.1]), (3, None, True, [0.5, 0.5]),
             (3, None, True, [1.5, -0.5, 0.0]), (_m,), (2.5,)]:
    case(f"random.choice{args!r}", lambda xp, A, args=args: _rng(xp).choice(
        *[a(xp, A) if callable(a) else a for a in args]), values=False)
case("random.permutation(0-d)", lambda xp, A: _rng(xp).permutation(_z(xp, A)), values=False)
case("random.permutation(-1)", lambda xp, A: _rng(xp).permutation(-1), values=False)
case("random.permutation(axis=5)", lambda xp, A: _rng(xp).permutation(_m(xp, A), axis=5), values=False)
case("random.shuffle(0-d)", lambda xp, A: _rng(xp).shuffle(_z(xp, A)), values=False)
case("random.shuffle(axis=5)", lambda xp, A: _rng(xp).shuffle(_m(xp, A), axis=5), values=False)
case("random.random(-1)", lambda xp, A: _rng(xp).random(-1), values=False)
case("random.random(dtype=int)", lambda xp, A: _rng(xp).random(3, dtype="int64"), values=False)
case("random.standard_normal(dtype=float16)", lambda xp, A: _rng(xp).standard_normal(3, dtype="float16"),
     values=False)
case("random.default_rng(-1)", lambda xp, A: xp.random.default_rng(-1), values=False)
case("random.default_rng('a')", lambda xp, A: xp.random.default_rng("a"), values=False)


def _exc_name(e):
    return f"{type(e).__module__}.{type(e).__qualname__}" if e is not None else "ok"


def run(xp, fn, device=None):
    """(result, exception, warning categories) of one call."""
    if xp is np:
        A = lambda d, dtype=None: np.array(d, dtype=dtype)  # noqa: E731
    else:
        A = lambda d, dtype=None: ck.asarray(d, dtype=dtype, device=device)  # noqa: E731
    prev = ck.get_default_device() if xp is ck else None
    if xp is ck:
        ck.set_default_device(device)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                return fn(xp, A), None, [x.category for x in w]
            except Exception as e:  # noqa: BLE001  (every exception is a result here)
                return None, e, [x.category for x in w]
    finally:
        if xp is ck:
            ck.set_default_device(prev)


def _to_numpy(r):
    if isinstance(r, ck.ndarray):
        if r.size > 1 << 20:   # a broadcast view of a huge shape: its layout is the answer
            return np.broadcast_to(np.zeros((), r.dtype.name), r.shape)
        return ck.asnumpy(r)
    if isinstance(r, (tuple, list)):
        return type(r)(_to_numpy(x) for x in r)
    return r


def _same_result(got, want, values=True):
    got = _to_numpy(got)
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(
            _same_result(g, w, values) for g, w in zip(got, want))
    if want is None or isinstance(want, (bool, str, type)):
        return got == want
    if isinstance(want, (int, float, complex)) and not isinstance(want, np.generic):
        if isinstance(got, np.ndarray) and got.ndim == 0:   # cudakit's scalars are 0-d arrays
            got = got.item()
        return type(got) is type(want) and (got == want or (got != got and want != want))
    if not isinstance(want, (np.ndarray, np.generic)):
        return got == want
    w = np.asarray(want)
    if w.dtype.kind not in "biufc":
        return False
    try:
        g = np.asarray(got)
    except Exception:  # noqa: BLE001
        return False
    # a byte-swapped NumPy array becomes a native one
    if g.shape != w.shape or g.dtype != w.dtype.newbyteorder("="):
        return False
    if w.size > 1 << 20 or not values:
        return True
    if w.dtype.kind in "fc":
        return bool(np.array_equal(g, w, equal_nan=True) or np.allclose(g, w, equal_nan=True, rtol=1e-6))
    return bool(np.array_equal(g, w))


_CK_DTYPES = {r.name for r in ck._core._dtype_table}


def _dtypes(r):
    if isinstance(r, (tuple, list)):
        return [d for x in r for d in _dtypes(x)]
    return [r.dtype] if isinstance(r, (np.ndarray, np.generic)) else []


def _non_numeric(r):
    """NumPy's result has a dtype cudakit has not (objects, strings,
    datetimes, long double)."""
    return any(d.newbyteorder("=").name not in _CK_DTYPES for d in _dtypes(r))


def compare(cid, fn, device):
    """None when cudakit agrees with NumPy, else a line saying how not."""
    want, np_exc, np_warn = run(np, fn)
    got, ck_exc, ck_warn = run(ck, fn, device)
    if cid in NON_NUMERIC and isinstance(ck_exc, TypeError):
        return None
    if np_exc is not None:
        if ck_exc is None:
            return f"NumPy raises {_exc_name(np_exc)} ({np_exc}); cudakit accepts"
        if not isinstance(ck_exc, type(np_exc)):
            return f"NumPy raises {_exc_name(np_exc)} ({np_exc}); cudakit {_exc_name(ck_exc)} ({ck_exc})"
        return None
    if _non_numeric(want):
        # object, string, datetime...: cudakit holds numbers only, and says
        # so (a Python int beyond 64 bits, which NumPy keeps as an object,
        # is an OverflowError)
        if isinstance(ck_exc, (TypeError, OverflowError)):
            return None
        return f"NumPy makes dtype {_dtypes(want)}; cudakit {_exc_name(ck_exc)} ({ck_exc}), not a TypeError"
    if ck_exc is not None:
        if isinstance(ck_exc, NotImplementedError):
            return None   # a feature cudakit lacks, not a wrong answer
        return f"NumPy accepts; cudakit raises {_exc_name(ck_exc)} ({ck_exc})"
    if not _same_result(got, want, cid not in NO_VALUES):
        return f"results differ: NumPy {want!r:.80}, cudakit {_to_numpy(got)!r:.80}"
    for wc in np_warn:
        # NumPy's floating-point warnings (divide by zero, invalid value)
        # come from its error state (np.errstate), which cudakit has not
        if wc is not RuntimeWarning and not any(issubclass(c, wc) for c in ck_warn):
            return f"NumPy warns {wc.__name__}; cudakit does not"
    return None


# Differences cudakit keeps on purpose, with the reason: (pattern of case
# ids, reason).  NumPy is inconsistent or accidental in many of them.
_KNOWN_PATTERNS = [
    (r"axis=-2147483648\)$", "NumPy reads INT_MIN as its NPY_RAVEL_AXIS (axis=None) in some C functions and "
     "as out of bounds in others; cudakit: out of bounds (AxisError) everywhere"),
    (r"initial=|where=\.\.\.", "initial= and where= of reductions are not implemented (NotImplementedError)"),
    (r"^linspace\(axis=", "linspace with array start/stop is not implemented (NotImplementedError)"),
    (r"^(std|var)\(ddof=('x'|\[1\])\)", "NumPy compares ddof with the count through a ufunc (an array ddof "
     "works, a str is a ufunc error); cudakit takes a number"),
    (r"^unstack\(axis=(\[0\]|\(0, [05]\))\)", "NumPy's unstack reads axis through moveaxis (lists and tuples); "
     "the array API's unstack takes an int, as cudakit"),
    (r"^(unique|cumulative_sum)\(axis=\(0, [05]\)\)", "a tuple axis: NumPy fails at different steps; cudakit's "
     "TypeError says an int is wanted"),
    (r"^(tri|tril_indices)\(2\.5\)|^(tril|triu_indices)\(.*k=1\.5\)", "NumPy's tri takes a float N and k "
     "through arange; cudakit wants integers (TypeError)"),
    (r"^tril\(0-d\)", "NumPy's TypeError is an accident of its implementation (tri() missing N); cudakit says "
     "tril needs at least one dimension (ValueError)"),
    (r"^arange\(9223372036854775807,\)", "NumPy's length overflows and it makes an empty array"),
    (r"^linspace\(0, 1, \{'num': 9223372036854775808\}\)", "NumPy fails with an IndexError inside linspace; "
     "cudakit: the num no index holds (OverflowError)"),
    (r"^result_type\(M8\)", "cudakit has no datetime64 dtype (TypeError)"),
    (r"^sort\(descending=True\)", "descending= is the array API's, which cudakit's sort also takes"),
    (r"^searchsorted\(sorter=out of range\)", "NumPy reads a bad sorter out of bounds; cudakit checks it "
     "(ValueError)"),
    (r"^roll\(shift=(1\.5|9223372036854775808)\)", "NumPy casts a float shift and reduces a huge one in "
     "Python; cudakit wants an int that fits 64 bits"),
    (r"^repeat\((1\.5|9223372036854775808)\)", "NumPy casts float repeats; cudakit wants integers (TypeError)"),
    (r"^(take|put)\((axis=0, )?\[1\.5\]\)|^put\(1\.5\)", "NumPy casts float indices of take/put "
     "(same_kind); indexing refuses them, and so does cudakit (TypeError)"),
    (r"^(take|put)\(mode=5\)", "NumPy reads mode=5 as an int clip mode (raise); cudakit wants its names"),
    (r"^(take|put)\((axis=0, )?9223372036854775808\)|^x1\[2\*\*63\]|^item\(9223372036854775808",
     "NumPy raises OverflowError for 2**63 but IndexError for 2**100; cudakit: out of bounds (IndexError)"),
    (r"^pad\(constant_values=\(1, 2, 3\)\)", "per-axis constant_values are not implemented"),
    (r"^resize\(9223372036854775808\)", "NumPy's MemoryError; cudakit: the extent no index holds (ValueError)"),
    (r"^(arctan2|fmod|hypot)\(x, (None|object\(\))\)|^logical_not\(None\)", "NumPy runs its object loop "
     "(calls the element's method); cudakit has no object dtype (TypeError)"),
    (r"(==|!=|<|>=) np\.array\(\[1, 2, 3\], object\)|^np\.array\(\[1, 2, 3\], object\) (==|<)",
     "an object array: cudakit has no object dtype (TypeError)"),
    (r"np\.datetime64\('2020'\)", "datetimes: cudakit has no datetime dtype (TypeError, _UFuncNoLoopError for "
     "comparisons)"),
    (r"^(arctan2|hypot)\(int8, 2\*\*64\)", "NumPy computes in float16 for int8 and a Python int beyond 64 "
     "bits; cudakit in float64"),
    (r"^bool x == -?2\*\*64|^logical_and\(int64, 2\*\*63\)", "NumPy converts a huge Python int for bool "
     "loops and fails; cudakit compares it"),
    (r"^reciprocal\(int\)", "the integer reciprocal of 0: NumPy's value is the hardware's (INT_MIN for 32/64 "
     "bits, 0 below); cudakit's is 0"),
    (r"^ufunc\.reduce missing", "ufunc methods (reduce, accumulate, outer) are not implemented"),
    (r"^(dtype|strides) = ", "dtype and strides are read-only on cudakit arrays (NumPy deprecates setting them)"),
    (r"^(x1\[:\] = None|fill\(None\))", "NumPy stores None in a float array as NaN; cudakit refuses it "
     "(TypeError)"),
    (r"^(x1\[:\] = 2\*\*64|fill\(2\*\*64\))", "a Python int beyond 64 bits stored into a float array: "
     "NumPy converts it, cudakit raises OverflowError"),
    (r"^int x1\[0\] = \[", "a sequence into one element: NumPy's TypeError comes from int(list); cudakit says "
     "the shapes do not broadcast (ValueError)"),
    (r"^histogram\(bins=\[1, nan\]\)", "NumPy's monotonicity check lets NaN edges through"),
    (r"^nanmean\(out=list\)", "NumPy's AttributeError comes from reading out.dtype; cudakit says out must be an "
     "array (TypeError)"),
    (r"^average\(empty \(0, 3\), axis=1\)", "NumPy divides a.size by the result's size in Python (an empty "
     "result: ZeroDivisionError); cudakit returns the empty average"),
    (r"^random\.(integers\(1\.5|binomial\(1\.5)", "NumPy's generator truncates a float bound or count; "
     "cudakit's wants integers (TypeError)"),
    (r"^split\(0\)", "NumPy's ZeroDivisionError comes from N % 0 before its own check; cudakit raises that "
     "check's ValueError"),
    (r"^(split|array_split)\(1\.5\)", "NumPy takes int(sections); cudakit wants an integer (TypeError)"),
    (r"^(split|array_split)\(axis=(2147483648|9223372036854775808)\)", "NumPy fails with an IndexError indexing shape; "
     "cudakit: the axis no C int holds"),
]


def known(cid):
    import re

    for p, reason in _KNOWN_PATTERNS:
        if re.search(p, cid):
            return reason
    return None


def test_numpy_exception_classes(device):
    a = ck.zeros((2, 3), device=device)
    npx = np._core._exceptions
    assert issubclass(ck.AxisError, np.exceptions.AxisError)
    assert issubclass(ck.ComplexWarning, np.exceptions.ComplexWarning)
    assert issubclass(ck.UFuncTypeError, npx.UFuncTypeError)
    assert issubclass(ck.DTypePromotionError, np.exceptions.DTypePromotionError)
    for call, cls in ((lambda: ck.sum(a, axis=2), np.exceptions.AxisError),
                      (lambda: a.max(axis=-3), np.exceptions.AxisError),
                      (lambda: ck.moveaxis(a, 0, 5), np.exceptions.AxisError),
                      (lambda: ck.add(a, 1, out=ck.zeros((2, 3), dtype="int64", device=device)),
                       npx._UFuncOutputCastingError),
                      (lambda: ck.add(a, 1, dtype="int8"), npx._UFuncInputCastingError),
                      (lambda: ck.gcd(a, 1), npx._UFuncNoLoopError),
                      (lambda: a < "x", npx._UFuncNoLoopError),
                      (lambda: ck.zeros(2**50, device=device), MemoryError)):
        with pytest.raises(cls) as info:
            call()
        assert type(info.value).__module__.startswith("cudakit"), info.value
        assert isinstance(info.value, ck.AxisError if cls is np.exceptions.AxisError else Exception)
        back = pickle.loads(pickle.dumps(info.value))   # errors cross processes (multiprocessing, dask)
        assert type(back) is type(info.value) and str(back) == str(info.value)
    with pytest.warns(np.exceptions.ComplexWarning):
        ck.ones(2, dtype="complex64", device=device).astype("float32")
    with pytest.raises(ck.AxisError):   # the name users catch
        ck.cumsum(a, axis=7)


def test_exception_classes_without_numpy():
    # NumPy absent: the same names, on the builtin classes NumPy's derive from
    code = """if 1:
        import sys
        sys.modules["numpy"] = None
        import cudakit as ck
        assert issubclass(ck.AxisError, ValueError) and issubclass(ck.AxisError, IndexError)
        try:
            ck.sum(ck.zeros((2, 3)), axis=5)
        except ck.AxisError as e:
            assert "out of bounds" in str(e)
        try:
            ck.arange(3) < "a"
        except ck.UFuncTypeError:
            pass
        class Plain: pass
        for other in (None, object(), Plain(), (i for i in range(3))):
            assert (ck.arange(3) == other).tolist() == [False] * 3
            assert (ck.arange(3) != other).tolist() == [True] * 3
        try:
            ck.arange(3) < Plain()
        except TypeError:
            pass
        print("ok")
    """
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "CUDAKIT_DEVICE": "cpu"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("cid,fn", CASES, ids=[c[0] for c in CASES])
def test_errors_vs_numpy(device, cid, fn):
    if known(cid):
        pytest.skip(known(cid))
    diff = compare(cid, fn, device)
    assert diff is None, diff


if __name__ == "__main__":
    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    bad = 0
    for cid, fn in CASES:
        if known(cid):
            continue
        d = compare(cid, fn, dev)
        if d:
            bad += 1
            print(f"{cid}: {d}")
    print(f"{bad} of {len(CASES)} cases differ")
