"""The fused linear layer (_core._linear, src/ops/linear.c; cuBLASLt's
epilogues on a GPU, the product and the epilogue loop on the CPU): values
against NumPy, gradients against NumPy's formulas and PyTorch's where torch
imports, non-contiguous operands, ck.nn's use of it (F.linear, nn.Linear,
Sequential's fused Linear + ReLU), CUDA-graph capture and the backward's
seed."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import _core, nn
from cudakit.nn import functional as F

try:
    import torch
except ImportError:   # the GPU machine has it
    torch = None

ACTS = ["none", "relu", "gelu", "gelu_tanh"]
TOL = {np.float16: 2e-2, np.float32: 2e-5, np.float64: 1e-12}

_erf = np.vectorize(math.erf)


def _act(y, act):
    if act == "relu":
        return np.maximum(y, 0)
    if act == "gelu":
        return 0.5 * y * (1 + _erf(y / math.sqrt(2)))
    if act == "gelu_tanh":
        return 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi) * (y + 0.044715 * y ** 3)))
    return y


def _dact(pre, act):
    if act == "relu":
        return (pre > 0).astype(pre.dtype)
    if act == "gelu":
        return 0.5 * (1 + _erf(pre / math.sqrt(2))) + pre * np.exp(-pre * pre / 2) / math.sqrt(2 * math.pi)
    if act == "gelu_tanh":
        c = math.sqrt(2 / math.pi)
        u = c * (pre + 0.044715 * pre ** 3)
        t = np.tanh(u)
        return 0.5 * (1 + t) + 0.5 * pre * (1 - t * t) * c * (1 + 3 * 0.044715 * pre * pre)
    return np.ones_like(pre)


def _ref(x, w, b, act):
    """The forward and its gradients in float64 (NumPy)."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    pre = x64 @ w64.T + (0 if b is None else b.astype(np.float64))
    return pre, _act(pre, act)


def _close(got, want, dtype, scale=1.0):
    got = ck.asnumpy(got)
    assert got.dtype == np.dtype(dtype) and got.shape == np.shape(want), (got.dtype, got.shape, np.shape(want))
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * scale)


def _inputs(rng, lead, k, n, dtype, bias=True):
    x = rng.uniform(-1, 1, lead + (k,)).astype(dtype)
    w = rng.uniform(-1, 1, (n, k)).astype(dtype)
    b = rng.uniform(-1, 1, (n,)).astype(dtype) if bias else None
    return x, w, b


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lead=st.lists(st.integers(1, 9), min_size=0, max_size=2).map(tuple), k=st.integers(1, 40),
       n=st.integers(1, 24), act=st.sampled_from(ACTS), bias=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64, np.float16]), seed=st.integers(0, 2 ** 16))
def test_forward_and_backward_against_numpy(device, lead, k, n, act, bias, dtype, seed):
    rng = np.random.default_rng(seed)
    x, w, b = _inputs(rng, lead, k, n, dtype, bias)
    pre, want = _ref(x, w, b, act)
    X, W = ck.asarray(x, device=device), ck.asarray(w, device=device)
    B = None if b is None else ck.asarray(b, device=device)
    y = _core._linear(X, W, B, act)
    _close(y, want, dtype, scale=k)

    g = rng.uniform(-1, 1, want.shape)
    gp = (g * _dact(pre, act)).reshape(-1, n)
    saved = None if act == "none" else (y if act == "relu" else ck.asarray(pre.astype(dtype), device=device))
    gx, gw, gb = _core._linear_backward(ck.asarray(g.astype(dtype), device=device), X, W, saved, act, bias)
    x2 = x.astype(np.float64).reshape(-1, k)
    if dtype == np.float16:   # the saved array is float16: relu's mask may differ at 0 only
        return
    _close(gx, (gp @ w.astype(np.float64)).reshape(x.shape), dtype, scale=n)
    _close(gw, gp.T @ x2, dtype, scale=x2.shape[0])
    if bias:
        _close(gb, gp.sum(0), dtype, scale=x2.shape[0])
    else:
        assert gb is None


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("bias", [True, False])
def test_autograd_against_numpy_and_torch(device, act, bias):
    rng = np.random.default_rng(3)
    x, w, b = _inputs(rng, (5,), 7, 3, np.float64, bias)
    X = ck.asarray(x, device=device).requires_grad_()
    W = ck.asarray(w, device=device).requires_grad_()
    B = ck.asarray(b, device=device).requires_grad_() if bias else None
    y = F.linear(X, W, B) if act == "none" else _core._linear(X, W, B, act)
    assert y.grad_fn.name() == "LinearBackward0"
    g = rng.standard_normal(y.shape)
    ck.sum(y * ck.asarray(g, device=device)).backward()
    pre, want = _ref(x, w, b, act)
    gp = g * _dact(pre, act)
    np.testing.assert_allclose(ck.asnumpy(y), want, rtol=1e-12)
    np.testing.assert_allclose(ck.asnumpy(X.grad), gp @ w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ck.asnumpy(W.grad), gp.T @ x, rtol=1e-12, atol=1e-14)
    if bias:
        np.testing.assert_allclose(ck.asnumpy(B.grad), gp.sum(0), rtol=1e-12, atol=1e-14)
    if torch is not None:
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        tb = torch.tensor(b, requires_grad=True) if bias else None
        ty = torch.nn.functional.linear(tx, tw, tb)
        if act == "relu":
            ty = torch.relu(ty)
        elif act != "none":
            ty = torch.nn.functional.gelu(ty, approximate="tanh" if act == "gelu_tanh" else "none")
        (ty * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(ck.asnumpy(y), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ck.asnumpy(X.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ck.asnumpy(W.grad), tw.grad.numpy(), rtol=1e-9, atol=1e-12)
        if bias:
            np.testing.assert_allclose(ck.asnumpy(B.grad), tb.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_batch_one_and_one_dim_input(device):
    rng = np.random.default_rng(4)
    x, w, b = _inputs(rng, (1,), 6, 4, np.float32)
    for xv in (x, x[0]):
        X = ck.asarray(xv, device=device).requires_grad_()
        W = ck.asarray(w, device=device).requires_grad_()
        B = ck.asarray(b, device=device).requires_grad_()
        y = _core._linear(X, W, B, "relu")
        _close(y, _ref(xv, w, b, "relu")[1], np.float32, 6)
        ck.sum(y).backward()
        gp = (_ref(xv, w, b, "relu")[0] > 0).astype(np.float64).reshape(-1, 4)
        _close(X.grad, (gp @ w).reshape(xv.shape), np.float32, 4)
        _close(W.grad, gp.T @ xv.reshape(-1, 6), np.float32)
        _close(B.grad, gp.sum(0), np.float32)


VIEWS = [   # (x view, w view, b view) of (10, 14), (12, 16), (10,) arrays
    (lambda a: a[::2, 1:8], lambda a: a[1:6, 2:9], lambda a: a[::2]),          # row strides, offsets
    (lambda a: a[:, ::2], lambda a: a[::-2, ::2][:5, :7], lambda a: a[:5]),     # column and negative strides
    (lambda a: a[:7, :5].T, lambda a: a[:4, :7], lambda a: a[4:8]),             # a transposed input
]


@pytest.mark.parametrize("which", range(len(VIEWS)))
def test_non_contiguous_operands(device, which):
    rng = np.random.default_rng(5)
    big = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((10, 14), (12, 16), (10,))]
    vx, vw, vb = VIEWS[which]
    x, w, b = vx(big[0]), vw(big[1]), vb(big[2])
    X, W, B = (ck.asarray(a, device=device) for a in big)
    for act in ("none", "relu"):
        _close(_core._linear(vx(X), vw(W), vb(B), act), _ref(x, w, b, act)[1], np.float32, 14)
    Xg = ck.asarray(big[0], device=device).requires_grad_()
    Wg = ck.asarray(big[1], device=device).requires_grad_()
    g = rng.uniform(-1, 1, (x.shape[0], w.shape[0])).astype(np.float32)
    ck.sum(_core._linear(vx(Xg), vw(Wg), vb(B), "relu") * ck.asarray(g, device=device)).backward()
    gp = g * (_ref(x, w, b, "relu")[0] > 0)
    want_x, want_w = np.zeros(big[0].shape), np.zeros(big[1].shape)
    vx(want_x)[...] = gp @ w.astype(np.float64)
    vw(want_w)[...] = gp.T @ x.astype(np.float64)
    _close(Xg.grad, want_x, np.float32, 10)
    _close(Wg.grad, want_w, np.float32, 10)


def test_mixed_dtypes_promote_and_integers_compose(device):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    w = np.ones((4, 3), np.float32)
    y = F.linear(ck.asarray(x, device=device), ck.asarray(w, device=device))
    assert ck.asnumpy(y).dtype == np.float64
    np.testing.assert_allclose(ck.asnumpy(y), x @ w.T)
    xi, wi, bi = np.arange(6).reshape(2, 3), np.ones((4, 3), np.int64), np.arange(4)
    yi = F.linear(ck.asarray(xi, device=device), ck.asarray(wi, device=device), ck.asarray(bi, device=device))
    np.testing.assert_array_equal(ck.asnumpy(yi), xi @ wi.T + bi)
    with pytest.raises(TypeError):
        _core._linear(ck.asarray(xi, device=device), ck.asarray(wi, device=device))


def test_shape_errors(device):
    x, w = ck.ones((2, 3), device=device), ck.ones((4, 5), device=device)
    with pytest.raises(ValueError, match="shapes cannot be multiplied"):
        _core._linear(x, w)
    with pytest.raises(ValueError, match="bias"):
        _core._linear(x, ck.ones((4, 3), device=device), ck.ones((3,), device=device))
    with pytest.raises(ValueError, match="activation"):
        _core._linear(x, ck.ones((4, 3), device=device), None, "tanh")


def _mlp(device, dtype=ck.float32):
    ck.random.seed(7)
    return nn.Sequential(nn.Linear(12, 9), nn.ReLU(), nn.Linear(9, 5), nn.ReLU(), nn.Linear(5, 3)).to(device, dtype)


def _run(model, x, t):
    for p in model.parameters():
        p.grad = None
    out = model(x)
    loss = nn.CrossEntropyLoss()(out, t)
    loss.backward()
    return out, loss, [ck.asnumpy(p.grad) for p in model.parameters()]


def test_sequential_fuses_linear_relu_with_the_same_results(device):
    rng = np.random.default_rng(8)
    x = ck.asarray(rng.uniform(-1, 1, (6, 12)).astype(np.float32), device=device)
    t = ck.asarray(rng.integers(0, 3, 6), device=device)
    fused = _mlp(device)
    out = fused[1](fused[0](x))
    assert out.grad_fn.name() != "LinearBackward0"   # ReLU of its own when called one by one
    assert fused(x).grad_fn.name() == "LinearBackward0"
    unfused = _mlp(device)
    unfused.forward = lambda inp: _chain(unfused, inp)   # the modules one after another
    o1, l1, g1 = _run(fused, x, t)
    o2, l2, g2 = _run(unfused, x, t)
    np.testing.assert_allclose(ck.asnumpy(o1), ck.asnumpy(o2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ck.asnumpy(l1), ck.asnumpy(l2), rtol=1e-5)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    # against NumPy in float64
    m64 = _mlp(device, ck.float64)
    x64 = ck.asarray(ck.asnumpy(x).astype(np.float64), device=device)
    o3 = m64(x64)
    p = [ck.asnumpy(q) for q in m64.parameters()]
    h = np.maximum(ck.asnumpy(x64) @ p[0].T + p[1], 0)
    h = np.maximum(h @ p[2].T + p[3], 0)
    np.testing.assert_allclose(ck.asnumpy(o3), h @ p[4].T + p[5], rtol=1e-12)


def _chain(seq, x):
    for m in seq._layers():
        x = m(x)
    return x


def test_sequential_leaves_replaced_forwards_and_subclasses_alone(device):
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    x = ck.ones((2, 3), device=device)
    seq.to(device)
    assert seq(x).grad_fn.name() == "LinearBackward0"
    seq[1].forward = lambda inp: inp * 2.0
    np.testing.assert_allclose(ck.asnumpy(seq(x)), 2 * ck.asnumpy(seq[0](x)), rtol=1e-6)

    class MyReLU(nn.ReLU):
        def forward(self, inp):
            return inp - 1.0
    seq2 = nn.Sequential(nn.Linear(3, 2), MyReLU()).to(device)
    np.testing.assert_allclose(ck.asnumpy(seq2(x)), ck.asnumpy(seq2[0](x)) - 1, rtol=1e-6)
    seq2[1] = nn.ReLU()     # replacing a layer re-plans
    assert seq2(x).grad_fn.name() == "LinearBackward0"
    with ck.no_grad():
        np.testing.assert_allclose(ck.asnumpy(seq2(x)), np.maximum(ck.asnumpy(seq2[0](x)), 0), rtol=1e-6)


def test_cpu_capture_refuses_the_product():
    """The CPU's product is NumPy's, which a CPU graph cannot record (as
    matmul, docs/graphs.md): refused, never replayed stale."""
    x, w = ck.ones((2, 3), device="cpu"), ck.ones((4, 3), device="cpu")
    g = ck.cuda.CUDAGraph(device="cpu")
    with pytest.raises(RuntimeError, match="capture|graph"):
        with ck.cuda.graph(g):
            _core._linear(x, w, None, "relu")


def test_captured_training_step_replays(device):
    """Forward, backward and Adam of a fused MLP captured once and replayed
    against the same steps run eagerly.  (GPU only: the CPU's product is
    NumPy's, which a CPU graph does not record: test_cpu_capture_refuses_the_product.)"""
    if device == "cpu":
        pytest.skip("the CPU's product (NumPy's) is refused in a CPU graph capture")
    rng = np.random.default_rng(9)
    xs = [rng.uniform(-1, 1, (8, 12)).astype(np.float32) for _ in range(4)]
    ts = [rng.integers(0, 3, 8) for _ in range(4)]

    def make():
        m = _mlp(device)
        # capturable: the step count on the device, so that each replay
        # takes its own step's bias corrections (a host count would be frozen
        # into the graph at the capture's value)
        return m, ck.optim.Adam(m.parameters(), lr=1e-2, capturable=True)

    m1, o1 = make()
    eager = []
    for x, t in zip(xs, ts):
        o1.zero_grad(set_to_none=True)
        loss = nn.CrossEntropyLoss()(m1(ck.asarray(x, device=device)), ck.asarray(t, device=device))
        loss.backward()
        o1.step()
        eager.append(float(ck.asnumpy(loss)))

    m2, o2 = make()
    xb = ck.asarray(xs[0], device=device)
    tb = ck.asarray(ts[0], device=device)

    def step():
        o2.zero_grad(set_to_none=True)
        loss = nn.CrossEntropyLoss()(m2(xb), tb)
        loss.backward()
        o2.step()
        return loss
    l0 = step()                       # the first step eagerly: plans, the Adam states, the seed
    got = [float(ck.asnumpy(l0))]
    g = ck.cuda.CUDAGraph(device=device)
    with ck.cuda.graph(g):
        lc = step()
    for x, t in zip(xs[1:], ts[1:]):
        xb[...] = ck.asarray(x, device=device)
        tb[...] = ck.asarray(t, device=device)
        g.replay()
        got.append(float(ck.asnumpy(lc)))
    np.testing.assert_allclose(got, eager, rtol=1e-4)
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(ck.asnumpy(p), ck.asnumpy(q), rtol=1e-4, atol=1e-6)


def test_the_backward_seed_is_not_shared_state(device):
    x = ck.asarray(np.arange(3.0), device=device).requires_grad_()
    for k in range(3):
        loss = ck.sum(x * x)
        loss.retain_grad()
        loss.backward()
        loss.grad += 1.0          # the user's copy, not the cached seed
        np.testing.assert_allclose(ck.asnumpy(loss.grad), 2.0)
        np.testing.assert_allclose(ck.asnumpy(x.grad), 2 * np.arange(3.0) * (k + 1))
    y = ck.sum(x * 3.0)
    (gx,) = ck.autograd.grad([y], [x])
    np.testing.assert_allclose(ck.asnumpy(gx), 3.0)
