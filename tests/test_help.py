"""help() and inspect.signature (issue 17, "Help"): every public function and
method has a docstring; the C ones a __text_signature__ (CPython's
"name(sig)\\n--\\n\\n" docstrings, src/python/ck_python.h) that parses, names
the keywords the argument parsing takes and gives defaults that behave as
the argument left out; the ufuncs a signature computed from nin
(python/cudakit/_help.py); dir(ck) lists the lazily loaded names."""
import importlib
import inspect
import pydoc
import types

import numpy as np
import pytest

import cudakit as ck
import cudakit.cuda  # noqa: F401

_core = ck._core
P = inspect.Parameter


def _names(f):
    return list(inspect.signature(f).parameters)


def _is_c_callable(obj):
    """A callable made in C: a builtin function or method, a method
    descriptor, a ufunc, or autograd's face on a C function."""
    return (isinstance(obj, (types.BuiltinFunctionType, types.MethodDescriptorType, types.ClassMethodDescriptorType))
            or isinstance(obj, _core.ufunc) or type(obj).__name__ == "builtin_function")


# ------------------------------------------------------------ signatures

EXPECTED = {
    ck.sum: "(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True)",
    ck.max: "(a, axis=None, out=None, keepdims=False, initial=None, where=True)",
    ck.argmax: "(a, axis=None, out=None, *, keepdims=False)",
    ck.var: "(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, correction=None)",
    ck.cumsum: "(a, axis=None, dtype=None, out=None)",
    ck.count_nonzero: "(a, axis=None, *, keepdims=False)",
    ck.ndarray.sum: "(self, /, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True)",
    ck.ndarray.reshape: "(self, /, *shape, order=None, copy=None)",
    ck.ndarray.transpose: "(self, /, *axes)",
    ck.ndarray.swapaxes: "(self, axis1, axis2, /)",
    ck.ndarray.astype: "(self, /, dtype, order=None, casting=None, subok=True, copy=True, device=None)",
    ck.ndarray.fill: "(self, value, /)",
    ck.asarray: "(obj, dtype=None, device=None, *, copy=None, order=None, requires_grad=False)",
    ck.zeros: "(shape, dtype=None, order=None, *, device=None, requires_grad=False)",
    ck.full_like: "(a, fill_value, dtype=None, order=None, subok=True, shape=None, *, device=None, "
                  "requires_grad=False)",
    ck.arange: "(start, stop=None, step=None, dtype=None, *, device=None, like=None, requires_grad=False)",
    ck.concatenate: "(arrays, axis=0, out=None, *, dtype=None, casting='same_kind')",
    ck.take: "(a, indices, axis=None, out=None, mode='raise')",
    ck.nonzero: "(a, /)",
    ck.result_type: "(*arrays_and_dtypes)",
    ck.broadcast_shapes: "(*args)",
    ck.sort: "(a, axis=-1, kind=None, order=None, *, stable=None, descending=False)",
    ck.pad: "(array, pad_width, mode='constant', **kwargs)",
    ck.from_dlpack: "(x, /, *, device=None, copy=None)",
    ck.get_num_threads: "()",
    ck.exp: "(x, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None, subok=True, signature=None)",
    ck.add: "(x1, x2, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None, subok=True, "
             "signature=None)",
    ck.float32: "(value=0)",
    ck.Device: "(type, index=None)",
    ck.ndarray: "(shape, dtype=None, device=None)",
}


@pytest.mark.parametrize("f", list(EXPECTED), ids=lambda f: getattr(f, "__qualname__", None) or repr(f))
def test_signature_is_the_expected_one(f):
    assert str(inspect.signature(f)) == EXPECTED[f]


def test_bound_method_drops_self():
    x = ck.ones((2, 3))
    assert str(inspect.signature(x.sum)) == "(axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True)"
    assert str(inspect.signature(x.swapaxes)) == "(axis1, axis2, /)"
    assert _names(x.to_device) == ["device", "stream"]


def test_ufunc_signature_follows_nin_and_numpy():
    for r in _core._op_table:
        u = getattr(_core, r.name)
        ps = list(inspect.signature(u).parameters.values())
        ins = ["x"] if r.nin == 1 else [f"x{i}" for i in range(1, r.nin + 1)]
        assert [p.name for p in ps[:r.nin]] == ins
        assert all(p.kind == P.POSITIONAL_ONLY for p in ps[:r.nin])
        assert ps[r.nin].name == "out" and ps[r.nin].kind == P.POSITIONAL_OR_KEYWORD
        assert all(p.kind == P.KEYWORD_ONLY for p in ps[r.nin + 1:])
        nu = getattr(np, r.name, None)
        if isinstance(nu, np.ufunc):
            # NumPy's names in NumPy's order, for those cudakit takes
            npn = _names(nu)
            assert _names(u) == [n for n in npn if n in _names(u)]
    # the class itself has no per-object signature (inspect looks further)
    assert _core.ufunc.__dict__["__signature__"].__get__(None, _core.ufunc) is None


def test_ufunc_keywords_of_the_signature_are_taken():
    x = ck.asarray([1.0, 2.0, 3.0])
    out = ck.empty(3)
    r = ck.exp(x, out=out, where=True, casting="same_kind", dtype=None)
    assert r is out
    np.testing.assert_allclose(ck.asnumpy(out), np.exp([1.0, 2.0, 3.0]))
    r = ck.add(x, x, out, dtype="float64")
    assert r is out
    np.testing.assert_array_equal(ck.asnumpy(out), [2.0, 4.0, 6.0])
    r = ck.exp(x, casting="same_kind", order="K", dtype=None, subok=True, signature=None)
    np.testing.assert_allclose(ck.asnumpy(r), np.exp([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        ck.exp(x, extobj=None)   # a keyword neither NumPy 2 nor the signature names


# Functions that cudakit implements with NumPy's name: the parameters they
# share with NumPy's come in NumPy's order.
NUMPY_ORDER_EXCEPTIONS = {
    # positional order of the array API standard: asarray(obj, dtype, device)
    "asarray",
    # the array API's clip(x, min, max): NumPy's a_min=, a_max= are keyword-only aliases
    "clip",
}


def _numpy_comparable():
    out = []
    for name in sorted(dir(ck)):
        if name.startswith("_") or name in NUMPY_ORDER_EXCEPTIONS:
            continue
        f, g = getattr(ck, name), getattr(np, name, None)
        if g is None or not callable(f) or isinstance(f, type) or isinstance(g, type):
            continue
        try:
            ng = _names(g)
            nf = _names(f)
        except (ValueError, TypeError):
            continue
        out.append((name, nf, ng))
    return out


@pytest.mark.parametrize("name,ck_names,np_names", _numpy_comparable(), ids=lambda v: v if isinstance(v, str) else "")
def test_shared_parameters_in_numpys_order(name, ck_names, np_names):
    shared_ck = [n for n in ck_names if n in np_names]
    shared_np = [n for n in np_names if n in ck_names]
    assert shared_ck == shared_np


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "min", "max", "all", "any", "argmin",
                                  "argmax", "cumsum", "cumprod", "take", "sort", "argsort", "concatenate",
                                  "reshape", "transpose", "trace", "diagonal", "searchsorted", "zeros", "full",
                                  "linspace", "eye", "where", "clip", "round", "unique", "einsum"])
def test_numpys_parameters_are_there(name):
    """For these the parameters NumPy names are cudakit's too (beyond NumPy's
    own keyword-only extras: like, subok...)."""
    missing = set(_names(getattr(np, name))) - set(_names(getattr(ck, name))) - {
        "like", "subok", "kwargs", "ndmax", "mean", "stable", "overwrite_input"}
    assert not missing


def test_asarray_follows_the_array_api():
    # the standard: asarray(obj, /, dtype=None, *, device=None, copy=None)
    assert _names(ck.asarray)[:4] == ["obj", "dtype", "device", "copy"]


# ------------------------------------------------------------ every C signature parses

def _c_objects():
    """Every C function of _core and every C method of its types."""
    seen = {}
    for name, v in vars(_core).items():
        if isinstance(v, types.BuiltinFunctionType):
            seen[name] = v
        elif isinstance(v, type) and v.__module__.startswith("cudakit"):
            for m, d in vars(v).items():
                if isinstance(d, (types.MethodDescriptorType, types.ClassMethodDescriptorType)):
                    seen[f"{name}.{m}"] = d
    return seen


def test_every_c_signature_parses():
    bad = []
    for name, f in _c_objects().items():
        if f.__text_signature__ is None:
            continue
        try:
            inspect.signature(f)
        except (ValueError, TypeError) as e:
            bad.append(f"{name}: {e}")
    assert not bad


def test_every_public_c_function_has_a_signature():
    bad = [name for name, f in _c_objects().items()
           if not name.split(".")[-1].startswith("_") and f.__text_signature__ is None]
    assert not bad


# ------------------------------------------------------------ the keywords and defaults are true

def _same(a, b):
    if isinstance(a, ck.ndarray):
        assert isinstance(b, ck.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(ck.asnumpy(a), ck.asnumpy(b))
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    else:
        assert a == b or (a != a and b != b)


def _with_defaults(f, args):
    """f(*args) and f(*args, every defaulted parameter given its default, by
    keyword unless positional-only)."""
    sig = inspect.signature(f)
    bound = sig.bind_partial(*args)
    pos, kw = list(args), {}
    for p in sig.parameters.values():
        if p.name in bound.arguments or p.default is P.empty:
            continue
        if p.kind == P.POSITIONAL_ONLY:
            pos.append(p.default)
        elif p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
            kw[p.name] = p.default
    return pos, kw


def _cases():
    x = ck.arange(12.0).reshape(3, 4)
    v = ck.asarray([3.0, 1.0, 2.0, 5.0])
    i = ck.asarray([0, 2])
    b = ck.asarray([True, False, True, True])
    return [
        (ck.sum, (x,)), (ck.prod, (v,)), (ck.mean, (x,)), (ck.var, (x,)), (ck.std, (x,)), (ck.min, (x,)),
        (ck.max, (x,)), (ck.all, (b,)), (ck.any, (b,)), (ck.argmin, (v,)), (ck.argmax, (x,)),
        (ck.cumsum, (x,)), (ck.cumprod, (v,)), (ck.count_nonzero, (x,)),
        (ck.asarray, ([1, 2],)), (ck.array, ([1, 2],)), (ck.zeros, ((2, 3),)), (ck.ones, (3,)),
        (ck.full, ((2,), 7),), (ck.zeros_like, (x,)), (ck.ones_like, (x,)), (ck.full_like, (x, 2)),
        (ck.arange, (5,)), (ck.arange, (1, 7, 2)), (ck.linspace, (0, 1, 5)), (ck.eye, (3,)),
        (ck.can_cast, ("int32", "float64")), (ck.asnumpy, (v,)),
        (ck.reshape, (x, (4, 3))), (ck.ravel, (x,)), (ck.transpose, (x,)), (ck.permute_dims, (x, (1, 0))),
        (ck.swapaxes, (x, 0, 1)), (ck.moveaxis, (x, 0, 1)), (ck.squeeze, (x[None],)), (ck.expand_dims, (v, 0)),
        (ck.flip, (x,)), (ck.diagonal, (x,)), (ck.diag, (v,)), (ck.trace, (x,)), (ck.broadcast_to, (v, (2, 4))),
        (ck.broadcast_arrays, (v, x[:1])), (ck.concatenate, ((x, x),)), (ck.stack, ((v, v),)),
        (ck.tile, (v, 2)), (ck.repeat, (v, 2)), (ck.roll, (v, 1)), (ck.pad, (v, 1)), (ck.tril, (x,)),
        (ck.triu, (x,)), (ck.ascontiguousarray, (x.T,)), (ck.asfortranarray, (x,)), (ck.resize, (v, (2, 3))),
        (ck.take, (v, i)), (ck.take_along_axis, (x, ck.argsort(x))), (ck.nonzero, (v,)),
        (ck.flatnonzero, (b,)), (ck.argwhere, (x,)), (ck.extract, (b, v)), (ck.compress, (b, v)),
        (ck.unravel_index, (i, (2, 2))), (ck.ravel_multi_index, ((i, i), (3, 3))), (ck.diag_indices, (3,)),
        (ck.tril_indices, (3,)), (ck.triu_indices, (3,)), (ck.select, ([b], [v])), (ck.choose, (i // 2, (v[:2], v[2:]))),
        (ck.sort, (x,)), (ck.argsort, (v,)), (ck.partition, (v, 1)), (ck.argpartition, (v, 1)),
        (ck.searchsorted, (ck.sort(v), 2.5)), (ck.softmax, (x,)), (ck.log_softmax, (x,)), (ck.logsumexp, (x,)),
        (ck.from_dlpack, (v,)),
        (x.sum, ()), (x.mean, ()), (x.var, ()), (x.argmax, ()), (x.cumsum, ()), (x.astype, ("float32",)),
        (x.copy, ()), (x.view, ()), (x.ravel, ()), (x.flatten, ()), (x.clip, (1, 5)), (x.squeeze, ()),
        (x.diagonal, ()), (x.trace, ()), (x.repeat, (2,)), (x.argsort, ()), (x.get, ()), (x.tolist, ()),
        (x.to_device, ("cpu",)), (x.to, ()), (x.__array__, ()), (x.__dlpack_device__, ()),
        (ck.exp, (v,)), (ck.add, (v, v)), (ck.float32, (3,)),
    ]


@pytest.mark.parametrize("f,args", _cases(), ids=lambda v: getattr(v, "__name__", "") if callable(v) else "")
def test_defaults_of_the_signature_are_the_call_without_them(f, args):
    """Every keyword the signature names is taken, and passing its default is
    the same call as leaving it out: a signature cannot lie about either."""
    pos, kw = _with_defaults(f, args)
    _same(f(*args), f(*pos, **kw))


def test_keyword_names_are_taken():
    x = ck.arange(6.0).reshape(2, 3)
    _same(ck.sum(a=x, axis=1), ck.sum(x, 1))
    _same(ck.take(a=x, indices=[0], axis=1, mode="clip"), ck.take(x, [0], 1))
    _same(ck.reshape(a=x, shape=(3, 2)), x.reshape(3, 2))
    _same(ck.linspace(start=0, stop=1, num=3), ck.linspace(0, 1, 3))
    _same(ck.searchsorted(a=ck.arange(4), v=2, side="right"), ck.searchsorted(ck.arange(4), 2, "right"))
    _same(ck.pad(x, 1, mode="constant", constant_values=3), ck.pad(x, 1, constant_values=3))
    _same(x.reshape(shape=(3, 2)), x.reshape(3, 2))
    _same(x.astype(dtype="int32", copy=True), x.astype("int32"))
    _same(ck.full_like(a=x, fill_value=2, shape=(1,)), ck.full((1,), 2.0))
    assert ck.zeros(3, requires_grad=True).requires_grad
    with pytest.raises(TypeError):
        ck.sum(x, axes=0)   # a keyword no signature names
    with pytest.raises(TypeError):
        x.swapaxes(axis1=0, axis2=1)   # positional-only, as the signature says


# ------------------------------------------------------------ help()

@pytest.mark.parametrize("obj,text", [
    (ck.sum, "sum(a, axis=None, dtype=None, out=None, keepdims=False"),
    (ck.zeros, "zeros(shape, dtype=None, order=None, *, device=None"),
    (ck.ndarray.sum, "sum(self, /, axis=None"),
    (ck.exp, "exp(x, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None, subok=True, "
             "signature=None)"),
    (ck.add, "add(x1, x2, /, out=None"),
    (ck.where, "where(condition, x=<object"),
    (ck.linalg.norm, "norm(x, ord=None, axis=None, keepdims=False"),
])
def test_help_shows_the_parameters(obj, text):
    doc = pydoc.render_doc(obj, renderer=pydoc.plaintext)
    assert text in doc
    # and the description after them
    assert len(doc.split(text, 1)[1].strip()) > 20


def test_ufunc_docstrings_are_their_own():
    assert ck.exp.__doc__.startswith("exp(x, /, out=None")
    assert ck.exp.__doc__ != ck.log.__doc__
    assert "element-wise" in ck.ufunc.__doc__   # the class keeps its own


# ------------------------------------------------------------ the walk

WALKED_MODULES = ["cudakit", "cudakit.linalg", "cudakit.fft", "cudakit.random", "cudakit.cuda",
                  "cudakit.cuda.random", "cudakit.cuda.graphs", "cudakit.cuda.nvtx", "cudakit.cuda.compiler",
                  "cudakit.autograd", "cudakit.profiler", "cudakit.serialization", "cudakit.nn", "cudakit.nn.functional",
                  "cudakit.nn.init", "cudakit.optim", "cudakit.optim.lr_scheduler", "cudakit.cuda.nccl",
                  "cudakit.cuda.types", "cudakit.utils.data", "cudakit.datasets", "cudakit.keras", "cudakit.distributed"]


def _own_members(cls):
    """The public callables a class of cudakit defines (not object's or a
    builtin base's), each once."""
    for k in cls.__mro__:
        if not (getattr(k, "__module__", "") or "").startswith("cudakit"):
            continue
        for n, v in vars(k).items():
            if n.startswith("_"):
                continue
            if isinstance(v, (staticmethod, classmethod)):
                v = getattr(cls, n)
            if isinstance(v, (property, types.GetSetDescriptorType, types.MemberDescriptorType)) or not callable(v):
                continue
            yield f"{k.__qualname__}.{n}", v


def _walk():
    seen, out = set(), []

    def visit(qual, obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        out.append((qual, obj))

    for mname in WALKED_MODULES:
        m = importlib.import_module(mname)
        for n in sorted(dir(m)):
            if n.startswith("_"):
                continue
            v = getattr(m, n)
            if isinstance(v, types.ModuleType) or not callable(v):
                continue
            visit(f"{mname}.{n}", v)
            if isinstance(v, type) and (v.__module__ or "").startswith("cudakit"):
                for q, meth in _own_members(v):
                    visit(f"{v.__module__}.{q}", meth)
    for q, meth in _own_members(ck.ndarray):
        visit(f"ndarray.{q}", meth)
    return out


def test_every_public_callable_has_a_docstring_and_the_c_ones_a_signature():
    walked = _walk()
    assert len(walked) > 500
    no_doc, no_sig = [], []
    for qual, obj in walked:
        doc = inspect.getdoc(obj)
        if not doc or not doc.strip():
            no_doc.append(qual)
        if _is_c_callable(obj):
            try:
                inspect.signature(obj)
            except (ValueError, TypeError):
                no_sig.append(qual)
    assert not no_doc, f"{len(no_doc)} without a docstring: {no_doc}"
    assert not no_sig, f"{len(no_sig)} C callables without a signature: {no_sig}"


def test_ndarray_methods_all_walked():
    names = {q.split(".")[-1] for q, _ in _own_members(ck.ndarray)}
    assert {"sum", "reshape", "astype", "take", "round", "dot", "tolist", "backward"} <= names


def test_dir_lists_the_lazy_names():
    d = dir(ck)
    for name in list(ck._LAZY_FUNCTIONS) + list(ck._LAZY_SUBMODULES) + list(ck._LAZY_EXCEPTIONS):
        assert name in d, name
    for name in ["unique", "median", "einsum", "linalg", "fft", "random", "AxisError", "sum", "exp"]:
        assert name in d
    # and each of them loads
    for name in d:
        if not name.startswith("_"):
            getattr(ck, name)
