"""The gradient rules of trainops' rows (src/autograd/rules_train.c) on both
devices (and the fused linear layer's, src/autograd/rules_linear.c): every
row of the table has a case here (a new row without one
fails test_every_rule_has_a_case), and each case's gradients must agree with
central finite differences in float64 over hypothesis-drawn shapes (with
broadcasting where the op broadcasts), and with PyTorch's where torch
imports.  A case also covers the ops whose gradient is a composition of
rows (split's views, the norms, abs)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import _core

try:
    import torch
except ImportError:   # the GPU machine has it
    torch = None

pytestmark = pytest.mark.skipif(not hasattr(_core, "_ag_train_rule_names"),
                                reason="the autograd engine is not in this build")

H = 1e-6


def _shape(max_dims=3, min_side=1, max_side=4):
    return st.lists(st.integers(min_side, max_side), min_size=1, max_size=max_dims).map(tuple)


def _bshapes(n, max_dims=3):
    """n shapes that broadcast together: one full shape, the others with
    some sides 1 and some leading dims dropped."""
    def make(full, data):
        out = [full]
        for _ in range(n - 1):
            drop = data.draw(st.integers(0, len(full) - 1))
            s = tuple(1 if data.draw(st.booleans()) else d for d in full[drop:])
            out.append(s)
        return out
    return st.tuples(_shape(max_dims), st.data()).map(lambda t: make(*t))


class Case:
    """f(*arrays, **kw) differentiated in the inputs marked in `diff`;
    `torch_f` the same in PyTorch (None: no comparison)."""

    def __init__(self, f, inputs, diff, torch_f=None, eps=H, tol=1e-6):
        self.f, self.inputs, self.diff, self.torch_f, self.eps, self.tol = f, inputs, diff, torch_f, eps, tol


def _scalar(out, w, device):
    return ck.sum(out * ck.asarray(w, device=device))


def check(case, device):
    arrays = [ck.array(a, device=device).requires_grad_() if i in case.diff
              else ck.asarray(a, device=device) for i, a in enumerate(case.inputs)]
    out = case.f(*arrays)
    w = np.random.default_rng(0).standard_normal(out.shape)
    _scalar(out, w, device).backward()
    grads = [ck.asnumpy(arrays[i].grad) if arrays[i].grad is not None else None for i in case.diff]

    def value(vals):
        with ck.no_grad():
            xs = [ck.asarray(v, device=device) for v in vals]
            return float(ck.asnumpy(_scalar(case.f(*xs), w, device)))

    for k, i in enumerate(case.diff):
        x = np.array(case.inputs[i], dtype=np.float64)
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            vals = list(case.inputs)
            xp, xm = x.copy(), x.copy()
            xp[idx] += case.eps
            xm[idx] -= case.eps
            vals[i] = xp
            fp = value(vals)
            vals[i] = xm
            num[idx] = (fp - value(vals)) / (2 * case.eps)
        assert grads[k] is not None, f"no gradient reached input {i}"
        assert grads[k].shape == x.shape and grads[k].dtype == np.float64
        np.testing.assert_allclose(grads[k], num, rtol=case.tol * 10, atol=case.tol * 10,
                                   err_msg=f"input {i} against finite differences")
    if torch is not None and case.torch_f is not None:
        tin = [torch.tensor(np.asarray(a), dtype=torch.float64 if np.asarray(a).dtype.kind == "f" else None,
                            requires_grad=i in case.diff) for i, a in enumerate(case.inputs)]
        tout = case.torch_f(*tin)
        (tout * torch.tensor(w, dtype=torch.float64)).sum().backward()
        np.testing.assert_allclose(ck.asnumpy(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
        for k, i in enumerate(case.diff):
            np.testing.assert_allclose(grads[k], tin[i].grad.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=f"input {i} against PyTorch")


def _rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _distinct(shape, seed):
    """Values with no ties and away from each other (max/min, clip, abs)."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n).astype(np.float64) * 0.37 - n * 0.15
    return v.reshape(shape)


# ------------------------------------------------------------------ cases
# name -> hypothesis strategy of Case; the names are the rows' (and a few
# compositions).

def _axis_of(shape, data):
    return data.draw(st.integers(-len(shape), len(shape) - 1))


def _axes_of(shape, data):
    return data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                               st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1).map(tuple)))


def _t(fn):
    return fn if torch is not None else None


def case_softmax(data, log_=False):
    shape = data.draw(_shape())
    axis = _axis_of(shape, data)
    f = (lambda x: _core.log_softmax(x, axis)) if log_ else (lambda x: _core.softmax(x, axis))
    tf = _t(lambda x: (torch.log_softmax if log_ else torch.softmax)(x, axis))
    return Case(f, [_rand(shape, data.draw(st.integers(0, 99)))], [0], tf)


def case_logsumexp(data):
    shape = data.draw(_shape())
    axis = _axes_of(shape, data)
    keep = data.draw(st.booleans())
    dims = tuple(range(len(shape))) if axis is None else axis
    return Case(lambda x: _core.logsumexp(x, axis, keep), [_rand(shape, 1)], [0],
                _t(lambda x: torch.logsumexp(x, dim=dims, keepdim=keep)))


def case_cross_entropy(data):
    n, c = data.draw(st.integers(1, 4)), data.draw(st.integers(2, 5))
    extra = data.draw(st.sampled_from([(), (2,)]))
    red = data.draw(st.sampled_from(["mean", "sum", "none"]))
    eps = data.draw(st.sampled_from([0.0, 0.2]))
    probs = data.draw(st.booleans())
    seed = data.draw(st.integers(0, 99))
    x = _rand((n, c) + extra, seed)
    if probs:
        p = np.random.default_rng(seed + 1).uniform(0.1, 1, (n, c) + extra)
        target = p / p.sum(1, keepdims=True)
    else:
        target = np.random.default_rng(seed + 1).integers(0, c, (n,) + extra)
        if target.size > 1:   # one row ignored (not all: the mean would be NaN)
            target.flat[0] = -100

    def f(x, t):
        return _core.softmax_cross_entropy(x, t, reduction=red, label_smoothing=eps)[0]
    tf = _t(lambda x, t: torch.nn.functional.cross_entropy(x, t, reduction=red, label_smoothing=eps))
    return Case(f, [x, target], [0, 1] if probs else [0], tf)


def _reduce_case(name, values=_rand):
    def make(data):
        shape = data.draw(_shape())
        axis = _axes_of(shape, data)
        keep = data.draw(st.booleans())
        fn = getattr(ck, name)
        dims = tuple(range(len(shape))) if axis is None else axis
        tmap = {"max": "amax", "min": "amin"}
        if name in tmap:
            tf = _t(lambda x: getattr(torch, tmap[name])(x, dim=dims, keepdim=keep))
        elif name == "prod" and isinstance(axis, int):
            tf = _t(lambda x: torch.prod(x, dim=axis, keepdim=keep))
        elif name == "prod" and axis is None:
            tf = _t(lambda x: torch.prod(x).reshape((1,) * x.ndim if keep else ()))
        else:
            tf = None
        return Case(lambda x: fn(x, axis=axis, keepdims=keep), [values(shape, data.draw(st.integers(0, 99)))], [0], tf)
    return make


def case_moment(name):
    def make(data):
        shape = data.draw(_shape(min_side=2))
        axis = _axes_of(shape, data)
        keep = data.draw(st.booleans())
        ddof = data.draw(st.sampled_from([0, 1]))
        dims = tuple(range(len(shape))) if axis is None else axis
        fn = getattr(ck, name)
        tf = _t(lambda x: getattr(torch, name)(x, dim=dims, keepdim=keep, correction=ddof))
        return Case(lambda x: fn(x, axis=axis, keepdims=keep, ddof=ddof), [_rand(shape, 3)], [0], tf)
    return make


def case_prod_with_zero(data):
    shape = data.draw(_shape(min_side=2))
    axis = _axis_of(shape, data)
    x = _rand(shape, 4)
    x.flat[0] = 0.0
    return Case(lambda x: ck.prod(x, axis=axis), [x], [0], _t(lambda x: torch.prod(x, dim=axis)))


def case_max_ties(data):
    """Ties share the gradient evenly (PyTorch's amax)."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    return Case(lambda x: ck.max(x, axis=1), [x], [0], _t(lambda x: torch.amax(x, dim=1)), tol=np.inf)


def case_cumsum(data):
    shape = data.draw(_shape())
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    tf = _t(lambda x: torch.cumsum(x.flatten() if axis is None else x, dim=0 if axis is None else axis))
    return Case(lambda x: ck.cumsum(x, axis=axis), [_rand(shape, 5)], [0], tf)


def case_where(data):
    sc, sx, sy = data.draw(_bshapes(3))
    cond = np.random.default_rng(6).random(sc) > 0.5
    return Case(lambda c, x, y: ck.where(c, x, y), [cond, _rand(sx, 7), _rand(sy, 8)], [1, 2],
                _t(lambda c, x, y: torch.where(c, x, y)))


def case_clip(data):
    sx, slo, shi = data.draw(_bshapes(3))
    x = _distinct(sx, 9) / 3
    lo = np.full(slo, -0.31) + _rand(slo, 10) * 0.01
    hi = np.full(shi, 0.29) + _rand(shi, 11) * 0.01
    return Case(lambda x, lo, hi: ck.clip(x, lo, hi), [x, lo, hi], [0, 1, 2],
                _t(lambda x, lo, hi: torch.clamp(x, lo, hi)))


def case_clip_scalars(data):
    shape = data.draw(_shape())
    return Case(lambda x: ck.clip(x, -0.5, 0.4), [_distinct(shape, 12) / 4], [0],
                _t(lambda x: torch.clamp(x, -0.5, 0.4)))


def case_index(data):
    shape = data.draw(_shape(min_side=2))
    seed = data.draw(st.integers(0, 99))
    rng = np.random.default_rng(seed)
    kind = data.draw(st.sampled_from(["int", "bool", "mixed"]))
    if kind == "int":
        idx = rng.integers(-shape[0], shape[0], data.draw(st.integers(1, 6)))   # repeats add up
        key = lambda i: i   # noqa: E731
    elif kind == "bool":
        idx = rng.random(shape) > 0.4
        key = lambda i: i   # noqa: E731
    else:
        idx = rng.integers(0, shape[-1], (2, 3))
        key = lambda i: (slice(1, None), i) if len(shape) == 2 else (Ellipsis, i)   # noqa: E731

    def f(x, i):
        return x[key(i)]
    tf = _t(lambda x, i: x[key(i)])
    return Case(f, [_rand(shape, seed), idx], [0], tf)


def case_take(data):
    shape = data.draw(_shape())
    axis = data.draw(st.one_of(st.none(), st.integers(0, len(shape) - 1)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    idx = np.random.default_rng(13).integers(0, n, (2, 3))
    return Case(lambda x, i: ck.take(x, i, axis=axis), [_rand(shape, 14), idx], [0],
                _t(lambda x, i: x.flatten()[i] if axis is None else torch.index_select(x, axis, i.flatten()).reshape(
                    x.shape[:axis] + i.shape + x.shape[axis + 1:])))


def case_take_along_axis(data):
    shape = data.draw(_shape())
    axis = data.draw(st.integers(0, len(shape) - 1))
    ishape = list(shape)
    ishape[axis] = data.draw(st.integers(1, 5))
    idx = np.random.default_rng(15).integers(0, shape[axis], ishape)
    return Case(lambda x, i: ck.take_along_axis(x, i, axis), [_rand(shape, 16), idx], [0],
                _t(lambda x, i: torch.take_along_dim(x, i, dim=axis)))


def case_concatenate(data):
    shape = data.draw(_shape())
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    k = data.draw(st.integers(1, 3))
    shapes = []
    for j in range(k):
        s = list(shape)
        if axis is not None:
            s[axis] = data.draw(st.integers(1, 3))
        shapes.append(tuple(s))
    ins = [_rand(s, 20 + j) for j, s in enumerate(shapes)]
    f = lambda *xs: ck.concatenate(xs, axis=axis)   # noqa: E731
    tf = _t(lambda *xs: torch.cat([x.flatten() for x in xs]) if axis is None else torch.cat(xs, dim=axis))
    return Case(f, ins, list(range(k)), tf)


def case_stack(data):
    shape = data.draw(_shape())
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    k = data.draw(st.integers(1, 3))
    ins = [_rand(shape, 30 + j) for j in range(k)]
    return Case(lambda *xs: ck.stack(xs, axis=axis), ins, list(range(k)), _t(lambda *xs: torch.stack(xs, dim=axis)))


def case_split(data):
    """split gives basic-indexing views, whose rule is the engine's."""
    shape = data.draw(_shape(min_side=2))
    axis = data.draw(st.integers(0, len(shape) - 1))
    f = lambda x: ck.concatenate([p * (j + 1) for j, p in enumerate(ck.array_split(x, 2, axis=axis))], axis=axis)  # noqa
    return Case(f, [_rand(shape, 40)], [0])


def case_norm(data):
    shape = data.draw(_shape(max_dims=2, min_side=2))
    if len(shape) == 2:
        ord_ = data.draw(st.sampled_from([None, "fro", 1, -1, np.inf]))
    else:
        ord_ = data.draw(st.sampled_from([None, 1, 2, 3, np.inf, -np.inf]))
    x = _distinct(shape, 41) + 0.05
    tf = _t(lambda x: torch.linalg.norm(x, ord=ord_))
    return Case(lambda x: ck.linalg.norm(x, ord_), [x], [0], tf)


def case_vector_matrix_norm(data):
    shape = data.draw(_shape(max_dims=3, min_side=2))
    x = _distinct(shape, 42) + 0.05
    if len(shape) >= 2 and data.draw(st.booleans()):
        return Case(lambda x: ck.linalg.matrix_norm(x), [x], [0], _t(lambda x: torch.linalg.matrix_norm(x)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    return Case(lambda x: ck.linalg.vector_norm(x, axis=axis), [x], [0],
                _t(lambda x: torch.linalg.vector_norm(x, dim=axis)))


def case_abs(data):
    shape = data.draw(_shape())
    return Case(lambda x: ck.abs(x), [_distinct(shape, 43) + 0.05], [0], _t(torch.abs) if torch else None)


def case_linear(data):
    """The fused linear layer (src/autograd/rules_linear.c): x of 1 to 3
    dims, with and without a bias, each activation; relu's kink avoided by
    pre-activations kept away from 0."""
    lead = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple))
    k, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    act = data.draw(st.sampled_from(["none", "relu", "gelu", "gelu_tanh"]))
    bias = data.draw(st.booleans())
    seed = data.draw(st.integers(0, 99))
    for t in range(20):   # relu: pre-activations at least 0.05 from the kink
        x, w, b = _rand(lead + (k,), seed + t), _rand((n, k), seed + t + 1), _rand((n,), seed + t + 2)
        if act != "relu" or np.all(np.abs(x @ w.T + b) >= 0.05):
            break
    else:
        act = "none"

    def tf(x, w, b=None):
        y = torch.nn.functional.linear(x, w, b)
        if act == "relu":
            return torch.relu(y)
        if act.startswith("gelu"):
            return torch.nn.functional.gelu(y, approximate="tanh" if act == "gelu_tanh" else "none")
        return y
    if bias:
        return Case(lambda x, w, b: _core._linear(x, w, b, act), [x, w, b], [0, 1, 2], _t(tf))
    return Case(lambda x, w: _core._linear(x, w, None, act), [x, w], [0, 1], _t(tf))


CASES = {
    "softmax": [case_softmax],
    "log_softmax": [lambda d: case_softmax(d, log_=True)],
    "logsumexp": [case_logsumexp],
    "cross_entropy": [case_cross_entropy],
    "max": [_reduce_case("max", _distinct), case_max_ties],
    "min": [_reduce_case("min", _distinct)],
    "prod": [_reduce_case("prod"), case_prod_with_zero],
    "var": [case_moment("var")],
    "std": [case_moment("std")],
    "cumsum": [case_cumsum],
    "where": [case_where],
    "clip": [case_clip, case_clip_scalars],
    "index": [case_index],
    "take": [case_take],
    "take_along_axis": [case_take_along_axis],
    "concatenate": [case_concatenate],
    "stack": [case_stack],
    "linear": [case_linear],
    # compositions of rows
    "split": [case_split],
    "norm": [case_norm, case_vector_matrix_norm],
    "abs": [case_abs],
}


def test_every_rule_has_a_case():
    missing = [name for name in _core._ag_train_rule_names() if name not in CASES]
    assert not missing, f"rows of src/autograd/rules_train.c without a case here: {missing}"


CASE_LIST = [(name, i) for name, makers in CASES.items() for i in range(len(makers))]


@pytest.mark.parametrize("name,which", CASE_LIST, ids=[f"{n}-{i}" for n, i in CASE_LIST])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_rule(device, name, which, data):
    case = CASES[name][which](data)
    if case.tol == np.inf:   # a kink: against the expected subgradient, not differences
        x = ck.array(case.inputs[0], device=device).requires_grad_()
        ck.sum(case.f(x)).backward()
        np.testing.assert_allclose(ck.asnumpy(x.grad), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-15)
        return
    check(case, device)


def test_cross_entropy_gradient_is_the_fused_one(device):
    """cross_entropy's node is one fused backward, not a chain of ops."""
    x = ck.array(_rand((3, 4), 50), device=device).requires_grad_()
    loss = _core.softmax_cross_entropy(x, ck.asarray([0, 1, 3], device=device))[0]
    assert "Entropy" in loss.grad_fn.name() or "cross_entropy" in loss.grad_fn.name().lower()
    loss.backward()
    p = np.exp(_rand((3, 4), 50))
    p /= p.sum(1, keepdims=True)
    p[[0, 1, 2], [0, 1, 3]] -= 1
    np.testing.assert_allclose(ck.asnumpy(x.grad), p / 3, rtol=1e-12)


def test_index_gradient_accumulates_repeats(device):
    x = ck.array(np.arange(4.0), device=device).requires_grad_()
    ck.sum(x[ck.asarray([1, 1, 3, 1], device=device)]).backward()
    np.testing.assert_array_equal(ck.asnumpy(x.grad), [0, 3, 0, 1])


def test_integer_inputs_get_no_gradient(device):
    x = ck.array(_rand((2, 3), 51), device=device).requires_grad_()
    i = ck.asarray([[0, 2, 1]], device=device)
    y = ck.take_along_axis(x, i, 1)
    assert y.requires_grad and not i.requires_grad
    c = ck.asarray([True, False], device=device)
    assert not ck.where(c, 1.0, 2.0).requires_grad


def test_cpu_svd_norm_gradient_is_not_silently_dropped():
    x = ck.array(_rand((3, 3), 52), device="cpu").requires_grad_()
    with pytest.raises(NotImplementedError, match="SVD"):
        ck.linalg.norm(x, 2)
    with ck.no_grad():
        assert math.isclose(float(ck.asnumpy(ck.linalg.norm(x, 2))), np.linalg.norm(_rand((3, 3), 52), 2))
