"""Errors: the exception types NumPy raises (ValueError for shapes,
ck.AxisError for axes, TypeError for dtypes, IndexError for indices), and
invalid input of every kind raising, never crashing the interpreter."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import cudakit as ck
from strategies import hsettings

SETTINGS = hsettings(40)


def test_axis_error_class(device):
    assert issubclass(ck.AxisError, ValueError)
    assert issubclass(ck.AxisError, IndexError)
    a = ck.zeros((2, 3), device=device)
    for call in (lambda: ck.sum(a, axis=2), lambda: a.max(axis=-3), lambda: ck.cumsum(a, axis=5),
                 lambda: a.swapaxes(0, 2), lambda: a.transpose(0, 2), lambda: ck.argmin(a, axis=9),
                 lambda: ck.count_nonzero(a, axis=(0, 4)), lambda: ck.mean(a, axis=(-3,))):
        with pytest.raises(ck.AxisError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
        assert "out of bounds" in str(info.value)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=2, max_side=4),
       data=st.data())
def test_shape_mismatch_value_error(device, shapes, data):
    s1, s2 = shapes.input_shapes
    axis = data.draw(st.integers(1, len(s2)))
    bad = list(s2)
    bad[-axis] = shapes.result_shape[-axis] + 1
    try:
        np.broadcast_shapes(s1, tuple(bad))
        return  # still broadcasts
    except ValueError:
        pass
    a = ck.zeros(s1, device=device)
    b = ck.zeros(tuple(bad), device=device)
    with pytest.raises(ValueError):
        np.zeros(s1) + np.zeros(bad)
    for call in (lambda: a + b, lambda: ck.multiply(a, b), lambda: ck.arctan2(a, b), lambda: a.__iadd__(b),
                 lambda: ck.where(a > 0, a, b)):
        with pytest.raises(ValueError):
            call()


def test_setitem_shape_mismatch(device):
    a = ck.zeros((3, 4), device=device)
    with pytest.raises(ValueError):
        a[...] = ck.ones((4, 3), device=device)
    with pytest.raises(ValueError):
        a[0] = [1, 2, 3]
    with pytest.raises(ValueError):
        a[:, 0] = np.ones(4)


def test_bad_dtype_type_error(device):
    for bad in ("float128", "U4", "S1", "object", "xyz", np.dtype("M8[s]"), dict, list):
        with pytest.raises(TypeError):
            ck.zeros(3, dtype=bad, device=device)
        with pytest.raises(TypeError):
            ck.asarray([1, 2], dtype=bad, device=device)
        with pytest.raises(TypeError):
            ck.add(ck.ones(2, device=device), 1, dtype=bad)
        with pytest.raises(TypeError):
            ck.sum(ck.ones(2, device=device), dtype=bad)
    with pytest.raises(TypeError):
        ck.bitwise_and(ck.ones(2, device=device), 1)   # no float loop
    with pytest.raises(TypeError):
        ck.subtract(ck.asarray([True], device=device), True)
    with pytest.raises(TypeError):
        -ck.asarray([True], device=device)
    with pytest.raises(TypeError):
        ck.sqrt(ck.ones(2, device=device), dtype="int32")


def test_index_errors(device):
    a = ck.zeros((2, 3), device=device)
    with pytest.raises(IndexError):
        a[2]
    with pytest.raises(IndexError):
        a[:, -4]
    with pytest.raises(IndexError):
        a[0, 0, 0]
    with pytest.raises(IndexError):
        a[..., 0, 0, 0]
    with pytest.raises(IndexError):
        a[None, 0, 0, 0]
    with pytest.raises(IndexError):
        a[2**100]
    with pytest.raises(IndexError):
        a[..., ...]
    with pytest.raises(IndexError):
        a["x"]
    with pytest.raises(IndexError):
        a[{}]
    with pytest.raises(IndexError):
        a[(None,) * 70]
    with pytest.raises(TypeError):
        a[slice("a", None)]


def test_read_only_assignment(device):
    a = ck.arange(5.0, device=device)
    ro = a.imag
    assert not ro.flags.writeable
    for call in (lambda: ro.__setitem__(0, 1.0), lambda: ro.__setitem__(slice(None), 1.0),
                 lambda: ro.fill(2.0), lambda: ck.negative(a, out=ro), lambda: ro.__iadd__(1)):
        with pytest.raises(ValueError):
            call()
    # views of a read-only array are read-only
    with pytest.raises(ValueError):
        ro[1:][0] = 3.0
    with pytest.raises(ValueError):
        ro.T[0] = 3.0
    with pytest.raises(ValueError):
        ro.reshape(5, 1)[0, 0] = 3.0
    assert ck.asnumpy(ro).sum() == 0


def test_reshape_wrong_size(device):
    a = ck.arange(10, device=device)
    for bad in [(3, 3), (11,), (2, -1, 4), (-1, -1), (0,), (-1, 3)]:
        with pytest.raises(ValueError):
            a.reshape(bad)
        with pytest.raises(ValueError):
            np.arange(10).reshape(bad)
    with pytest.raises(ValueError):
        ck.zeros(0, device=device).reshape(-1, 0)


def test_creation_errors(device):
    with pytest.raises(ValueError):
        ck.zeros((-1,), device=device)
    with pytest.raises(ValueError):
        ck.empty((2, -5), device=device)
    with pytest.raises((ValueError, MemoryError)):
        ck.zeros((2**62, 2**62), device=device)
    with pytest.raises(ValueError, match="Maximum allowed dimension"):   # as NumPy
        ck.ones(2**63, device=device)
    with pytest.raises(ValueError, match="Maximum allowed dimension"):
        ck.zeros(2**64, device=device)
    with pytest.raises(TypeError):
        ck.zeros(None, device=device)
    with pytest.raises(ValueError):
        ck.linspace(0, 1, -5, device=device)
    with pytest.raises((ValueError, TypeError, RuntimeError)):
        ck.zeros(2, device="gpu7")
    with pytest.raises((ValueError, TypeError, RuntimeError)):
        ck.zeros(2, device=3.5)


def test_not_implemented_features(device):
    a = ck.ones((2, 2), device=device)
    with pytest.raises(NotImplementedError, match="weights="):
        ck.nanquantile(a, 0.5, weights=a, method="inverted_cdf")


def test_mixed_devices_error(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    a = ck.ones(3, device="cpu")
    b = ck.ones(3, device=device)
    with pytest.raises(ValueError):
        a + b


# ------------------------------------------------------------ never crash

class BadIndex:
    def __index__(self):
        raise RuntimeError("bad index")


class BadLen:
    def __len__(self):
        raise RuntimeError("bad len")

    def __getitem__(self, i):
        raise RuntimeError("bad getitem")


class BadArray:
    def __array__(self, *a, **k):
        raise RuntimeError("bad __array__")


class WeirdArray:
    def __array__(self, *a, **k):
        return "not an array"


class BadDLPack:
    def __dlpack__(self, **kw):
        return "not a capsule"

    def __dlpack_device__(self):
        return (1, 0)


class BadFloat(float):
    pass


WEIRD = [None, "s", b"b", object(), BadIndex(), BadLen(), BadArray(), WeirdArray(), BadDLPack(), [None],
         [[1], 2], [1, [2]], [[1, 2], [3]], {1: 2}, {1}, 2**200, -2**200, float("nan"), 1e308, 1j, (), [[]],
         slice(1, 2), Ellipsis, np.array(["a"]), np.array([object()], dtype=object), [np.arange(3), 1],
         BadFloat(1.5), range(3), iter([1, 2]), np.datetime64("2020-01-01"), np.float128(1) if hasattr(np, "float128")
         else 0, [float("inf")] * 3]


@pytest.mark.parametrize("obj", WEIRD, ids=lambda o: type(o).__name__)
def test_weird_inputs_raise_or_work(device, obj):
    """Every entry point either works or raises an ordinary exception."""
    a = ck.arange(6, device=device).reshape(2, 3)
    calls = [
        lambda: ck.asarray(obj, device=device), lambda: ck.array(obj, device=device),
        lambda: ck.zeros(obj, device=device), lambda: ck.full((2,), obj, device=device),
        lambda: ck.add(a, obj), lambda: a + obj, lambda: obj * a, lambda: a == obj, lambda: a < obj,
        lambda: a[obj], lambda: a.__setitem__(obj, 1), lambda: a.__setitem__(0, obj),
        lambda: ck.sum(a, axis=obj), lambda: ck.sum(obj), lambda: a.reshape(obj), lambda: a.transpose(obj),
        lambda: a.astype(obj), lambda: ck.arange(obj, device=device), lambda: ck.linspace(0, obj, device=device),
        lambda: ck.eye(obj, device=device), lambda: ck.from_dlpack(obj), lambda: a.item(obj),
        lambda: ck.result_type(obj), lambda: ck.can_cast(obj, "int8"), lambda: a.view(obj),
        lambda: ck.where(a > 2, obj, a), lambda: ck.clip(a, obj, 3), lambda: a.to_device(obj),
        lambda: ck.asnumpy(obj), lambda: a.fill(obj), lambda: ck.isdtype(obj, "bool"),
    ]
    for call in calls:
        try:
            call()
        except Exception:
            pass


_FUZZ = textwrap.dedent(r'''
    import random, sys, warnings
    import numpy as np
    import cudakit as ck
    warnings.simplefilter("ignore")
    dev = sys.argv[1]
    rng = random.Random(int(sys.argv[2]))
    dtypes = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
    values = [None, 0, 1, -1, 2**63, -2**63 - 1, 2**64, 1.5, float("nan"), float("inf"), 1j, True, "x", b"y",
              [], [[]], [1, 2], [[1, 2], [3, 4]], [1, [2]], (slice(None),), slice(None, None, -1), Ellipsis,
              (0, 0), (None, 0), (-1,), 10**30, -7, 3, (0, -1), [0, 1], np.int8(3), np.float32(2),
              np.arange(3), object()]
    names = [n for n in dir(ck) if not n.startswith("_") and callable(getattr(ck, n))
             and n not in ("set_default_device", "set_num_threads", "Device", "dtype")]
    def rand_array():
        shape = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 3)))
        a = ck.asarray(np.zeros(shape, dtype=rng.choice(dtypes)) + rng.randint(0, 3), device=dev)
        if a.ndim and rng.random() < 0.5:
            a = a[..., ::-1]
        if a.ndim > 1 and rng.random() < 0.5:
            a = a.T
        return a
    def rand_arg():
        r = rng.random()
        if r < 0.4:
            return rand_array()
        if r < 0.5:
            return rng.choice(dtypes)
        return rng.choice(values)
    ok = err = 0
    import faulthandler
    for i in range(int(sys.argv[3])):
        # a call that hangs fails the run with its traceback
        faulthandler.dump_traceback_later(20, exit=True)
        name = rng.choice(names)
        f = getattr(ck, name)
        args = [rand_arg() for _ in range(rng.randint(0, 4))]
        kw = {}
        if rng.random() < 0.3:
            kw[rng.choice(["axis", "dtype", "out", "keepdims", "device", "copy", "order", "k", "ddof"])] = rand_arg()
        try:
            f(*args, **kw)
            ok += 1
        except Exception:
            err += 1
        a = rand_array()
        meth = rng.choice(["__getitem__", "__setitem__", "reshape", "transpose", "astype", "view", "sum", "max",
                           "argmax", "cumsum", "tolist", "item", "fill", "swapaxes", "ravel", "copy", "clip",
                           "__add__", "__iadd__", "__pow__", "__lshift__", "__eq__", "__bool__", "__int__",
                           "__float__", "__index__", "__len__", "__iter__", "__dlpack__", "__array__", "var"])
        try:
            getattr(a, meth)(*[rand_arg() for _ in range(rng.randint(0, 3))])
            ok += 1
        except Exception:
            err += 1
    print("fuzz done", ok, err)
''')


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_never_crashes(device, seed, tmp_path):
    """Random calls with random arguments, in a child process: a crash
    (segfault, abort) fails the test instead of killing the suite."""
    script = tmp_path / "fuzz.py"
    script.write_text(_FUZZ)
    env = dict(os.environ, CUDAKIT_DEVICE="cpu", PYTHONFAULTHANDLER="1")
    # in tmp_path: the random calls include save/tofile with names like "x"
    r = subprocess.run([sys.executable, str(script), device, str(seed), "4000"], capture_output=True, text=True,
                       env=env, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "fuzz done" in r.stdout


_HOSTILE = r'''
import cudakit as ck, numpy as np, gc
class BadIndex:
    def __index__(self): raise RuntimeError("x")
class Mut:
    def __init__(self, a): self.a = a
    def __index__(self):
        self.a.shape = (self.a.size,)
        return 0
class LyingList(list):
    def __len__(self): return 100
import sys
dev = sys.argv[1]
a = ck.arange(24.0, device=dev).reshape(2, 3, 4)
keys = [(BadIndex(),), (slice(BadIndex(), None),), (slice(None, None, BadIndex()),), (0, slice(0, 2**63 - 1, 2**62)),
        (slice(-2**63, 2**63 - 1),), (Ellipsis, None, Ellipsis), (None,) * 100, (0,) * 100, (slice(None),) * 65,
        (Mut(a),), ([0, BadIndex()],), ([[0, 1], [2]],), (np.array([1.5]),), (ck.asarray(1.5),), (ck.asarray([[True]]),)]
for k in keys:
    for op in ("get", "set"):
        try:
            if op == "get": a[k]
            else: a[k] = 1
        except Exception as e:
            pass
for shape in [(BadIndex(),), (2**62, 2**62), (-1,), [2, BadIndex()], LyingList([1, 2]), (1,) * 64, (1,) * 65, 2**63]:
    for f in (ck.zeros, ck.ones, ck.empty, lambda s: ck.full(s, 1), lambda s: a.reshape(s), lambda s: ck.ndarray(s)):
        try: f(shape)
        except Exception: pass
for x in [LyingList([1, 2]), [LyingList([1])], [[1, 2], LyingList([3, 4])]]:
    try: ck.asarray(x)
    except Exception: pass
try: a.transpose([0, 1, BadIndex()])
except Exception: pass
try: a.item(BadIndex())
except Exception: pass
try: a.swapaxes(BadIndex(), 0)
except Exception: pass
try: ck.sum(a, axis=(0, BadIndex()))
except Exception: pass
try: ck.eye(BadIndex())
except Exception: pass
# deep recursion
l = [1]
for _ in range(100000): l = [l]
try: ck.asarray(l)
except Exception: pass
big = []
big.append(big)
try: ck.asarray(big)
except Exception: pass
gc.collect()
print("ok")
'''


def test_hostile_keys_shapes_and_sequences_never_crash(device, tmp_path):
    """__index__ that raises or reshapes the array mid-parse, lying
    __len__, absurd shapes, 100000-deep and self-containing lists."""
    script = tmp_path / "hostile.py"
    script.write_text(_HOSTILE)
    env = dict(os.environ, CUDAKIT_DEVICE="cpu", PYTHONFAULTHANDLER="1")
    r = subprocess.run([sys.executable, str(script), device], capture_output=True, text=True, env=env, timeout=300,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("ok")


def test_parallel_loops_work_in_a_forked_child():
    # the CPU thread pool must not wait for the parent's workers after fork
    import os
    import sys
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    big = ck.ones(1 << 20, dtype=ck.float32, device="cpu")
    assert float((big + 1).sum()) == 2.0 * (1 << 20)   # workers started in the parent
    pid = os.fork()
    if pid == 0:
        try:
            ok = float((big + 1).sum()) == 2.0 * (1 << 20)
        finally:
            os._exit(0 if ok else 1)
    import time
    deadline = time.monotonic() + 30
    while True:   # a deadlocked child must fail the test, not hang it
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("a parallel loop deadlocked in the forked child")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
