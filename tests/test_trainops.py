"""The training ops of _core (src/ops/train.c) on both devices against NumPy
references: softmax, log_softmax and logsumexp along axes, the fused softmax
cross-entropy (class indices with ignore_index, probabilities, label
smoothing, the three reductions) and its backward, the multi-tensor Adam,
AdamW and SGD steps, and the bias + activation epilogue."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import _core
from conftest import assert_same

FLOATS = [np.float16, np.float32, np.float64]
TOL = {np.float16: 3e-3, np.float32: 2e-6, np.float64: 1e-12}


def ref_logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros([1] * x.ndim)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


def ref_softmax(x, axis):
    x = np.asarray(x, np.float64)
    return np.exp(x - ref_logsumexp(x, axis, keepdims=True))


def close(got, want, dt, scale=1.0):
    got = ck.asnumpy(got)
    assert got.dtype == np.dtype(dt), (got.dtype, dt)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dt] * 4, atol=TOL[dt] * 4 * scale, equal_nan=True)


shapes_axes = st.integers(1, 4).flatmap(
    lambda nd: st.tuples(st.lists(st.integers(1, 7), min_size=nd, max_size=nd), st.integers(-nd, nd - 1)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sa=shapes_axes, dt=st.sampled_from(FLOATS), seed=st.integers(0, 2**31))
def test_softmax_log_softmax(device, sa, dt, seed):
    shape, axis = sa
    x = (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dt)
    a = ck.asarray(x, device=device)
    close(_core.softmax(a, axis), ref_softmax(x, axis), dt)
    close(_core.log_softmax(a, axis=axis), np.log(ref_softmax(x, axis)), dt, scale=10)


def test_softmax_strided_large_and_specials(device):
    x = np.random.default_rng(0).standard_normal((6, 2000)).astype(np.float32) * 30 + 1000
    a = ck.asarray(x, device=device)
    close(_core.softmax(a[:, ::3], 1), ref_softmax(x[:, ::3], 1), np.float32)
    close(_core.softmax(a.T, 0), ref_softmax(x.T, 0), np.float32)
    sp = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0], [np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0]])
    got = ck.asnumpy(_core.softmax(ck.asarray(sp, device=device), -1))
    assert np.isnan(got[0]).all() and np.isnan(got[2]).all()
    np.testing.assert_allclose(got[1], [1 / (1 + math.e), 0.0, math.e / (1 + math.e)], rtol=1e-12)
    assert np.isnan(got[3, 0]) and (got[3, 1:] == 0).all()   # PyTorch's: inf - inf
    # integers compute in float64; a 0-d array is one row
    assert_same(_core.softmax(ck.asarray([1, 2, 3], device=device)), ref_softmax([1, 2, 3], -1))
    assert_same(_core.softmax(ck.asarray(np.float32(3.0), device=device)), np.float32(1.0))
    with pytest.raises(TypeError):
        _core.softmax(ck.asarray([1j], device=device))
    with pytest.raises(IndexError):
        _core.softmax(ck.asarray(np.zeros((2, 3)), device=device), 2)
    assert _core.softmax(ck.asarray(np.zeros((0, 3)), device=device), 1).shape == (0, 3)


axes_sets = st.integers(1, 4).flatmap(
    lambda nd: st.tuples(st.lists(st.integers(0, 5), min_size=nd, max_size=nd),
                         st.one_of(st.none(), st.integers(-nd, nd - 1),
                                   st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple)),
                         st.booleans()))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sak=axes_sets, dt=st.sampled_from(FLOATS), seed=st.integers(0, 2**31))
def test_logsumexp(device, sak, dt, seed):
    shape, axis, keepdims = sak
    x = (np.random.default_rng(seed).standard_normal(shape) * 5).astype(dt)
    got = _core.logsumexp(ck.asarray(x, device=device), axis=axis, keepdims=keepdims)
    want = ref_logsumexp(x, axis, keepdims)
    close(got, want, dt, scale=10)


def test_logsumexp_specials_and_scipy(device):
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [1000.0, 1000.0]])
    got = ck.asnumpy(_core.logsumexp(ck.asarray(x, device=device), axis=1))
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2])
    np.testing.assert_allclose(got[3], 1000 + math.log(2), rtol=1e-15)
    assert ck.asnumpy(_core.logsumexp(ck.asarray(np.zeros((3, 0)), device=device), axis=1)).tolist() == [-np.inf] * 3
    try:
        from scipy.special import logsumexp
    except ImportError:
        return
    y = np.random.default_rng(1).standard_normal((3, 4, 5))
    for axis in (None, 0, (0, 2), -1):
        np.testing.assert_allclose(ck.asnumpy(_core.logsumexp(ck.asarray(y, device=device), axis)),
                                   logsumexp(y, axis), rtol=1e-13)


def test_softmax_backward(device):
    rng = np.random.default_rng(2)
    for shape, axis in [((4, 7), -1), ((3, 5, 2), 1), ((9,), 0)]:
        x = rng.standard_normal(shape)
        g = rng.standard_normal(shape)
        y = ref_softmax(x, axis)
        want = y * (g - np.sum(g * y, axis=axis, keepdims=True))
        got = _core._softmax_backward(ck.asarray(g, device=device), ck.asarray(y, device=device), axis)
        close(got, want, np.float64)
        ly = np.log(y)
        want = g - y * np.sum(g, axis=axis, keepdims=True)
        got = _core._softmax_backward(ck.asarray(g, device=device), ck.asarray(ly, device=device), axis, log=True)
        close(got, want, np.float64)


# ------------------------------------------------------------ cross entropy

def ref_xent(x, target, axis, ignore_index=-100, smoothing=0.0, reduction="mean"):
    """PyTorch's cross_entropy in NumPy float64: (loss, gradient of the
    reduced loss for a unit upstream gradient)."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    C = x.shape[-1]
    logp = x - ref_logsumexp(x, -1, keepdims=True)
    if np.issubdtype(np.asarray(target).dtype, np.floating):
        q = (1 - smoothing) * np.moveaxis(np.asarray(target, np.float64), axis, -1) + smoothing / C
        w = np.ones(x.shape[:-1])
    else:
        t = np.asarray(target)
        w = (t != ignore_index).astype(np.float64)
        tt = np.where(t == ignore_index, 0, t)
        q = (1 - smoothing) * np.eye(C)[tt] + smoothing / C
        q = q * w[..., None]
    rows = -np.sum(q * logp, axis=-1)
    grad = np.exp(logp) * q.sum(-1, keepdims=True) - q
    if reduction == "none":
        loss, scale = rows, np.ones_like(rows)
    elif reduction == "sum":
        loss, scale = rows.sum(), np.ones_like(rows)
    else:
        loss, scale = rows.sum() / w.sum(), np.ones_like(rows) / w.sum()
    # ignored rows get no gradient, even when the mean's divisor is 0 (PyTorch's)
    grad = np.where(w[..., None] > 0, grad * scale[..., None], 0.0)
    return loss, np.moveaxis(grad, -1, axis)


xent_cases = st.tuples(st.integers(0, 6), st.integers(1, 9), st.sampled_from([(), (3,), (2, 2)]),
                       st.sampled_from(["mean", "sum", "none"]), st.sampled_from([0.0, 0.1, 1.0]),
                       st.booleans(), st.sampled_from(FLOATS), st.integers(0, 2**31))


def _xent_case(case, scale):
    """A case's (rng, logits of the given scale, target): class indices with the
    first row ignored, or probability rows."""
    n, c, extra, reduction, smoothing, probs, dt, seed = case
    rng = np.random.default_rng(seed)
    shape = (n, c) + extra
    x = (rng.standard_normal(shape) * scale).astype(dt)
    if probs:
        q = rng.random(shape)
        target = (q / q.sum(1, keepdims=True)).astype(dt)
    else:
        target = rng.integers(0, c, (n,) + extra)
        if target.size:
            target.flat[0] = -100
    return rng, x, target


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=xent_cases)
def test_cross_entropy(device, case):
    n, c, extra, reduction, smoothing, probs, dt, seed = case
    _, x, target = _xent_case(case, 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        want_loss, want_grad = ref_xent(x, target, 1, smoothing=smoothing, reduction=reduction)
    lx, lt = ck.asarray(x, device=device), ck.asarray(target, device=device)
    loss, lse, total = _core.softmax_cross_entropy(lx, lt, reduction=reduction, label_smoothing=smoothing)
    close(loss, want_loss, dt, scale=10)
    g = np.ones(np.shape(want_loss), dt)
    grad = _core.softmax_cross_entropy_backward(ck.asarray(g, device=device), lx, lt, lse, total,
                                                reduction=reduction, label_smoothing=smoothing)
    close(grad, want_grad, dt)


@pytest.mark.parametrize("n", [512, 513, 3000])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_many_rows(device, n, reduction):
    """Up to 512 short rows a GPU takes in one block that also writes the
    total; more take a second launch for it: both against NumPy."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, 10)) * 3).astype(np.float32)
    target = rng.integers(0, 10, n)
    target[::7] = -100
    want_loss, want_grad = ref_xent(x, target, 1, reduction=reduction)
    lx, lt = ck.asarray(x, device=device), ck.asarray(target, device=device)
    loss, lse, total = _core.softmax_cross_entropy(lx, lt, reduction=reduction)
    close(loss, want_loss, np.float32, scale=n)
    assert float(ck.asnumpy(total)) == (target != -100).sum()
    grad = _core.softmax_cross_entropy_backward(ck.asarray(np.float32(1), device=device), lx, lt, lse, total,
                                                reduction=reduction)
    close(grad, want_grad, np.float32)


def _xent_of_softmax(device, z, target, reduction, smoothing, extra_consumer=None, retain=False):
    """z's gradient through p = softmax(z, 1), then cross_entropy(p) (and
    optionally + sum(p * w)), with the backward ops the profiler saw."""
    from cudakit.nn import functional as F
    zz = ck.asarray(z, device=device)
    zz.requires_grad_()
    p = F.softmax(zz, dim=1)
    if retain:
        p.retain_grad()
    loss = F.cross_entropy(p, ck.asarray(target, device=device), reduction=reduction, label_smoothing=smoothing)
    if reduction == "none":
        loss = loss.sum()
    if extra_consumer is not None:
        loss = loss + (p * ck.asarray(extra_consumer, device=device)).sum()
    with ck.profiler.profile() as prof:
        loss.backward()
    ops = [e.name for e in prof.events() if e.kind == "op"]
    return zz.grad, ops, p


xent_softmax_cases = st.tuples(st.integers(1, 6), st.integers(1, 9), st.sampled_from([(), (3,)]),
                               st.sampled_from(["mean", "sum", "none"]), st.sampled_from([0.0, 0.1]),
                               st.booleans(), st.sampled_from([np.float32, np.float64]), st.integers(0, 2**31))


@pytest.mark.filterwarnings("ignore:CrossEntropyLoss received rows")
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=xent_softmax_cases)
def test_cross_entropy_of_softmax_folds(device, case):
    """cross_entropy(softmax(z)) (the seed model's Softmax before its loss):
    the backward folds the two rules into one row pass (the profiler sees
    one op, not two) with the gradient of the two rules in turn, NumPy's;
    a retained p.grad or a second consumer of p keeps the two passes, with
    the same gradient."""
    n, c, extra, reduction, smoothing, probs, dt, seed = case
    shape = (n, c) + extra
    rng, z, target = _xent_case(case, 2)
    p = ref_softmax(z, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        _, d = ref_xent(p, target, 1, smoothing=smoothing, reduction=reduction)
    want = p * (d - (d * p).sum(1, keepdims=True))
    got, ops, _ = _xent_of_softmax(device, z, target, reduction, smoothing)
    close(got, want, dt)
    assert "cross_entropy_softmax_backward" in ops and "softmax_backward" not in ops, ops
    got, ops, pv = _xent_of_softmax(device, z, target, reduction, smoothing, retain=True)
    close(got, want, dt)
    close(pv.grad, d, dt)
    assert "cross_entropy_softmax_backward" not in ops and "softmax_backward" in ops, ops
    w = rng.standard_normal(shape).astype(dt)
    got, ops, _ = _xent_of_softmax(device, z, target, reduction, smoothing, extra_consumer=w)
    close(got, p * ((d + w) - ((d + w) * p).sum(1, keepdims=True)), dt)
    assert "cross_entropy_softmax_backward" not in ops, ops


@pytest.mark.filterwarnings("ignore:CrossEntropyLoss received rows")
def test_cross_entropy_of_softmax_on_another_axis_does_not_fold(device):
    from cudakit.nn import functional as F
    rng = np.random.default_rng(0)
    z = rng.standard_normal((4, 5))
    t = rng.integers(0, 5, 4)
    zz = ck.asarray(z, device=device)
    zz.requires_grad_()
    loss = F.cross_entropy(F.softmax(zz, dim=0), ck.asarray(t, device=device))
    with ck.profiler.profile() as prof:
        loss.backward()
    ops = [e.name for e in prof.events() if e.kind == "op"]
    assert "cross_entropy_softmax_backward" not in ops and "softmax_backward" in ops, ops
    p = ref_softmax(z, 0)
    _, d = ref_xent(p, t, 1)
    close(zz.grad, p * (d - (d * p).sum(0, keepdims=True)), np.float64)


def test_cross_entropy_vs_torch_semantics(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    # 1-d logits: class axis 0, a 0-d target
    loss, _, _ = _core.softmax_cross_entropy(ck.asarray(x[0], device=device), ck.asarray(np.int64(2), device=device))
    close(loss, -np.log(ref_softmax(x[0], 0))[2], np.float64)
    # every row ignored: mean is NaN, sum 0, the gradient 0
    t = ck.asarray(np.full(5, -1), device=device)
    loss, lse, total = _core.softmax_cross_entropy(ck.asarray(x, device=device), t, ignore_index=-1)
    assert np.isnan(float(ck.asnumpy(loss))) and float(ck.asnumpy(total)) == 0
    loss, lse, total = _core.softmax_cross_entropy(ck.asarray(x, device=device), t, ignore_index=-1, reduction="sum")
    assert float(ck.asnumpy(loss)) == 0
    g = _core.softmax_cross_entropy_backward(ck.asarray(1.0, device=device), ck.asarray(x, device=device), t, lse,
                                             total, ignore_index=-1, reduction="sum")
    assert (ck.asnumpy(g) == 0).all()
    # the class axis elsewhere, int32 targets, a non-contiguous view
    y = rng.standard_normal((3, 2, 6))
    tt = rng.integers(0, 6, (3, 2)).astype(np.int32)
    loss, _, _ = _core.softmax_cross_entropy(ck.asarray(y, device=device), ck.asarray(tt, device=device), axis=-1)
    close(loss, ref_xent(y, tt, -1)[0], np.float64)
    yt = ck.asarray(y, device=device).transpose(0, 2, 1)          # (3, 6, 2), classes at 1
    loss, _, _ = _core.softmax_cross_entropy(yt, ck.asarray(tt, device=device))
    close(loss, ref_xent(y.transpose(0, 2, 1), tt, 1)[0], np.float64)
    with pytest.raises(ValueError, match="reduction"):
        _core.softmax_cross_entropy(ck.asarray(x, device=device), ck.asarray(np.zeros(5, np.int64), device=device),
                                    reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        _core.softmax_cross_entropy(ck.asarray(x, device=device), ck.asarray(np.zeros(5, np.int64), device=device),
                                    label_smoothing=1.5)
    with pytest.raises(ValueError, match="shape"):
        _core.softmax_cross_entropy(ck.asarray(x, device=device), ck.asarray(np.zeros(4, np.int64), device=device))
    with pytest.raises(TypeError):
        _core.softmax_cross_entropy(ck.asarray(x.astype(np.int64), device=device),
                                    ck.asarray(np.zeros(5, np.int64), device=device))


def test_cross_entropy_bad_target(device):
    x = ck.asarray(np.zeros((2, 3)), device=device)
    t = ck.asarray(np.array([0, 3]), device=device)
    if device == "cpu":
        with pytest.raises(IndexError, match="Target 3 is out of bounds"):
            _core.softmax_cross_entropy(x, t)
    else:   # a GPU cannot raise without waiting: the loss is NaN
        loss, _, _ = _core.softmax_cross_entropy(x, t)
        assert np.isnan(float(ck.asnumpy(loss)))


# --------------------------------------------------------------- optimizers

def ref_adam(p, g, m, v, step, lr, b1, b2, eps, wd, decoupled, maximize=False):
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * wd)
    else:
        g = g + wd * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    denom = np.sqrt(v) / math.sqrt(1 - b2 ** step) + eps
    return p - lr / (1 - b1 ** step) * m / denom, m, v


def ref_sgd(p, g, buf, lr, mom, damp, wd, nesterov, first, maximize=False):
    g = -g if maximize else g
    g = g + wd * p
    if mom:
        buf = g.copy() if first else mom * buf + (1 - damp) * g
        g = g + mom * buf if nesterov else buf
    return p - lr * g, buf


SIZES = [1, 5, 4096, 4097, 10000, 3]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("decoupled,wd,maximize", [(False, 0.0, False), (False, 0.1, True), (True, 0.01, False)])
def test_adam_step(device, dt, decoupled, wd, maximize):
    rng = np.random.default_rng(4)
    P = [rng.standard_normal(n).astype(dt) for n in SIZES] + [rng.standard_normal((3, 7)).astype(dt)]
    G = [rng.standard_normal(p.shape).astype(dt) for p in P]
    M = [np.zeros_like(p) for p in P]
    V = [np.zeros_like(p) for p in P]
    cp = [ck.asarray(a, device=device) for a in P]
    cm = [ck.asarray(a, device=device) for a in M]
    cv = [ck.asarray(a, device=device) for a in V]
    cg = [ck.asarray(a, device=device) for a in G]
    ref = [(p.astype(np.float64), m.astype(np.float64), v.astype(np.float64)) for p, m, v in zip(P, M, V)]
    for step in (1, 2, 3):
        _core._adam_step(cp, cg, cm, cv, step, lr=1e-2, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=wd,
                         decoupled=decoupled, maximize=maximize)
        ref = [ref_adam(p, g.astype(np.float64), m, v, step, 1e-2, 0.9, 0.99, 1e-8, wd, decoupled, maximize)
               for (p, m, v), g in zip(ref, G)]
        # the parameters and states are stored in their dtype after each step
        ref = [tuple(a.astype(dt).astype(np.float64) for a in r) for r in ref]
    tol = {np.float16: 3e-3, np.float32: 1e-5, np.float64: 1e-12}[dt]
    for c, (p, m, v) in zip(cp, ref):
        np.testing.assert_allclose(ck.asnumpy(c).astype(np.float64), p, rtol=tol, atol=tol)
        assert ck.asnumpy(c).dtype == np.dtype(dt)
    for c, (p, m, v) in zip(cm, ref):
        np.testing.assert_allclose(ck.asnumpy(c).astype(np.float64), m, rtol=tol, atol=tol)


def rounded_optim(kind, p, g, s1, s2, step, lr, b1, b2, eps, wd, decoupled, maximize, mom=0.0, damp=0.0,
                  nesterov=False, first=False):
    """The step's operations in the order and precision both devices perform
    them (float16 computed in float32, stored in float16; every product and
    sum rounded, none fused), in NumPy: what the kernels must equal bit for
    bit."""
    A = np.float64 if p.dtype == np.float64 else np.float32
    lr_, wd_, b1_, b2_, eps_, mom_, damp_ = (A(x) for x in (lr, wd, b1, b2, eps, mom, damp))
    one = A(1)
    w, g = p.astype(A), (-g if maximize else g).astype(A)
    if kind == "sgd":
        g = g + wd_ * w
        if mom:
            b = g if first else mom_ * s1.astype(A) + (one - damp_) * g
            s1 = b.astype(p.dtype)
            g = g + mom_ * b if nesterov else b
        return (w - lr_ * g).astype(p.dtype), s1, s2
    if decoupled:
        w = w * (one - lr_ * wd_)
    else:
        g = g + wd_ * w
    m = b1_ * s1.astype(A) + (one - b1_) * g
    v = b2_ * s2.astype(A) + ((one - b2_) * g) * g
    step_size, bc2s = A(lr / (1 - b1 ** step)), A(math.sqrt(1 - b2 ** step))
    return (w - (step_size * m) / (np.sqrt(v) / bc2s + eps_)).astype(p.dtype), m.astype(p.dtype), v.astype(p.dtype)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("kind,decoupled,wd,maximize,mom,nesterov",
                         [("adam", False, 0.1, True, 0, False), ("adam", True, 0.01, False, 0, False),
                          ("sgd", False, 0.01, False, 0.9, True), ("sgd", False, 0.0, True, 0.9, False)])
def test_optim_step_is_the_formula_bit_for_bit(device, dt, kind, decoupled, wd, maximize, mom, nesterov):
    """No FMA on either device: the GPU's kernel once contracted g + wd * w
    and the moments' sums, which moved two float16 elements of
    test_adam_step's by 10% (their second moment underflowed to zero on one
    side only)."""
    rng = np.random.default_rng(10)
    P = [rng.standard_normal(n).astype(dt) for n in (4096, 777)]
    G = [rng.standard_normal(p.shape).astype(dt) for p in P]
    st = [(p, np.zeros_like(p), np.zeros_like(p)) for p in P]
    cp = [ck.array(p, device=device) for p in P]   # a copy: the CPU shares a NumPy array's memory
    cg = [ck.asarray(g, device=device) for g in G]
    cm = [ck.zeros(p.shape, dtype=dt, device=device) for p in P]
    cv = [ck.zeros(p.shape, dtype=dt, device=device) for p in P]
    for step in (1, 2, 3):
        if kind == "adam":
            _core._adam_step(cp, cg, cm, cv, step, lr=1e-2, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=wd,
                             decoupled=decoupled, maximize=maximize)
        else:
            _core._sgd_step(cp, cg, cm, 0.1, momentum=mom, dampening=0.0, weight_decay=wd, nesterov=nesterov,
                            first=step == 1, maximize=maximize)
        st = [rounded_optim(kind, p, g, m, v, step, 1e-2 if kind == "adam" else 0.1, 0.9, 0.99, 1e-8, wd,
                            decoupled, maximize, mom=mom, nesterov=nesterov, first=step == 1)
              for (p, m, v), g in zip(st, G)]
    for c, m, (p, sm, sv) in zip(cp, cm, st):
        np.testing.assert_array_equal(ck.asnumpy(c), p)
        np.testing.assert_array_equal(ck.asnumpy(m), sm)
    if kind == "adam":
        for v, (_, _, sv) in zip(cv, st):
            np.testing.assert_array_equal(ck.asnumpy(v), sv)


def test_adam_many_tensors_mixed_dtypes_and_none(device):
    """More tensors than one launch takes (32), two dtypes, None gradients."""
    rng = np.random.default_rng(5)
    P = [rng.standard_normal(int(n)).astype(np.float32 if i % 3 else np.float64)
         for i, n in enumerate(rng.integers(1, 300, 75))]
    G = [rng.standard_normal(p.shape).astype(p.dtype) if i % 7 else None for i, p in enumerate(P)]
    cp = [ck.array(p, device=device) for p in P]   # a copy: the CPU shares a NumPy array's memory
    cg = [ck.asarray(g, device=device) if g is not None else None for g in G]
    cm = [ck.zeros(p.shape, dtype=p.dtype, device=device) for p in P]
    cv = [ck.zeros(p.shape, dtype=p.dtype, device=device) for p in P]
    _core._adam_step(cp, cg, cm, cv, 1, lr=0.1)
    for p, g, c in zip(P, G, cp):
        if g is None:
            assert_same(c, p)
        else:
            want, _, _ = ref_adam(p.astype(np.float64), g.astype(np.float64), 0, 0, 1, 0.1, 0.9, 0.999, 1e-8, 0, False)
            np.testing.assert_allclose(ck.asnumpy(c), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="exp_avg"):
        _core._adam_step(cp[1:3], cg[1:3], [cm[1], cm[1]], cv[1:3], 1)
    with pytest.raises(ValueError, match="step"):
        _core._adam_step(cp[1:2], cg[1:2], cm[1:2], cv[1:2], 0)
    with pytest.raises(TypeError):
        _core._adam_step([P[1]], [G[1]], [P[1]], [P[1]], 1)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("mom,damp,wd,nesterov,maximize",
                         [(0.0, 0.0, 0.0, False, False), (0.9, 0.0, 0.01, True, False),
                          (0.9, 0.1, 0.0, False, True)])
def test_sgd_step(device, dt, mom, damp, wd, nesterov, maximize):
    rng = np.random.default_rng(6)
    P = [rng.standard_normal(n).astype(dt) for n in SIZES]
    G = [rng.standard_normal(p.shape).astype(dt) for p in P]
    cp = [ck.array(p, device=device) for p in P]   # a copy: the CPU shares a NumPy array's memory
    cg = [ck.asarray(g, device=device) for g in G]
    cb = [ck.zeros(p.shape, dtype=dt, device=device) for p in P] if mom else None
    ref = [(p.astype(np.float64), np.zeros(p.shape)) for p in P]
    for step in range(3):
        _core._sgd_step(cp, cg, cb, 0.1, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nesterov,
                        first=step == 0, maximize=maximize)
        ref = [ref_sgd(p, g.astype(np.float64), b, 0.1, mom, damp, wd, nesterov, step == 0, maximize)
               for (p, b), g in zip(ref, G)]
    tol = 1e-5 if dt == np.float32 else 1e-12
    for c, (p, _) in zip(cp, ref):
        np.testing.assert_allclose(ck.asnumpy(c), p, rtol=tol, atol=tol)
    if mom:
        with pytest.raises(ValueError):
            _core._sgd_step(cp, cg, None, 0.1, momentum=mom)
    with pytest.raises(ValueError, match="Nesterov"):
        _core._sgd_step(cp, cg, None, 0.1, nesterov=True)


# ---------------------------------------------------------------- epilogue

def ref_act(z, act):
    from math import erf, sqrt, pi
    if act == "relu":
        return np.maximum(z, 0)
    if act == "gelu":
        return 0.5 * z * (1 + np.vectorize(erf)(z / sqrt(2)))
    if act == "gelu_tanh":
        return 0.5 * z * (1 + np.tanh(sqrt(2 / pi) * (z + 0.044715 * z ** 3)))
    return z


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("act", ["none", "relu", "gelu", "gelu_tanh"])
def test_bias_act_forward_backward(device, dt, act):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 5)).astype(dt)
    w = rng.standard_normal((5, 9)).astype(dt)
    b = rng.standard_normal(9).astype(dt)
    y = ck.matmul(ck.asarray(x, device=device), ck.asarray(w, device=device))
    z = ck.asnumpy(y).astype(np.float64) + b
    got, pre = _core._bias_act(y, ck.asarray(b, device=device), act, save_pre=True)
    assert got is y
    close(pre, z, dt, scale=10)
    close(got, ref_act(z, act), dt, scale=10)
    # the derivative against central differences of the reference
    g = rng.standard_normal(z.shape)
    h = 1e-6
    want = g * (ref_act(z + h, act) - ref_act(z - h, act)) / (2 * h)
    zc = ck.asarray(z.astype(dt), device=device)
    got = _core._bias_act_backward(ck.asarray(g.astype(dt), device=device), zc, act)
    assert ck.asnumpy(got).dtype == np.dtype(dt)
    tol = max(TOL[dt] * 40, 1e-7)   # the differences' own error
    np.testing.assert_allclose(ck.asnumpy(got).astype(np.float64), want, rtol=tol, atol=tol)
    # no bias, a 3-d output
    y3 = ck.array(x.reshape(2, 3, 5), device=device)   # a copy: _bias_act works in place
    close(_core._bias_act(y3, None, act), ref_act(x.reshape(2, 3, 5).astype(np.float64), act), dt, scale=10)


def test_bias_act_errors(device):
    y = ck.asarray(np.zeros((3, 4), np.float32), device=device)
    with pytest.raises(ValueError, match="bias"):
        _core._bias_act(y, ck.asarray(np.zeros(3, np.float32), device=device), "relu")
    with pytest.raises(ValueError, match="activation"):
        _core._bias_act(y, None, "swish")
    with pytest.raises(ValueError, match="contiguous"):
        _core._bias_act(y.T, None, "relu")
    with pytest.raises(TypeError):
        _core._bias_act(ck.asarray(np.zeros((3, 4), np.int32), device=device), None, "relu")


# ------------------------------------------------------------- scatter add

@pytest.mark.parametrize("dt", FLOATS)
def test_scatter_add(device, dt):
    rng = np.random.default_rng(8)
    target = rng.standard_normal((4, 5)).astype(dt)
    idx = rng.integers(-20, 20, (3, 7))          # repeats, negatives
    vals = rng.standard_normal((3, 7)).astype(dt)
    want = target.astype(np.float64).ravel()
    np.add.at(want, idx.ravel(), vals.astype(np.float64).ravel())
    t = ck.array(target, device=device)
    assert _core._scatter_add(t, ck.asarray(idx.astype(np.int32), device=device), ck.asarray(vals, device=device)) is t
    close(t, want.reshape(4, 5), dt, scale=10)
    with pytest.raises(ValueError):
        _core._scatter_add(t, ck.asarray(idx, device=device), ck.asarray(vals[:2], device=device))
    with pytest.raises(TypeError):
        _core._scatter_add(t, ck.asarray(vals, device=device), ck.asarray(vals, device=device))


@pytest.mark.parametrize("bad", [20, -21, 1 << 40])
def test_scatter_add_out_of_range(device, bad):
    """Every device raises the CPU's IndexError, naming the first bad index,
    and leaves the target as it was (np.add.at's)."""
    target = np.arange(20, dtype=np.float32)
    idx = np.array([3, 5, bad, 7, 25, 3])
    t = ck.array(target, device=device)
    with pytest.raises(IndexError, match=f"^index {bad} is out of bounds for size 20$"):
        _core._scatter_add(t, ck.asarray(idx, device=device), ck.asarray(np.ones(6, np.float32), device=device))
    np.testing.assert_array_equal(ck.asnumpy(t), target)
    # and a good call after it adds as usual
    _core._scatter_add(t, ck.asarray([19, -20, 19], device=device), ck.asarray([1.0, 2.0, 3.0], device=device))
    want = target.copy()
    np.add.at(want, [19, -20, 19], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ck.asnumpy(t), want)


def test_adam_step_from_a_device_array(device):
    """The step read from a 0-d array (what a captured CUDA graph needs) is the int step's."""
    rng = np.random.default_rng(9)
    p = rng.standard_normal(5000).astype(np.float32)
    g = rng.standard_normal(5000).astype(np.float32)
    out = []
    for step in (7, ck.asarray(7.0, device=device), ck.asarray(np.int64(7), device=device)):
        cp, cg = ck.array(p, device=device), ck.asarray(g, device=device)
        cm, cv = ck.full(p.shape, 0.1, dtype=np.float32, device=device), ck.full(p.shape, 0.2, dtype=np.float32,
                                                                                   device=device)
        _core._adam_step([cp], [cg], [cm], [cv], step, lr=1e-2)
        out.append(ck.asnumpy(cp))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6)
    np.testing.assert_array_equal(out[2], out[1])
    with pytest.raises(ValueError, match="step array"):
        _core._adam_step([cp], [cg], [cm], [cv], ck.asarray([1.0, 2.0], device=device))
