"""ck.optim: each optimizer's steps against its update formula in NumPy,
schedules against their closed forms, state dicts, a small fit."""
import math

import numpy as np
import pytest

import cudakit as ck
from cudakit import nn, optim

from conftest import assert_same

STEPS = 3


def _setup(device, dtype=np.float64):
    rng = np.random.default_rng(0)
    p0 = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((4,)).astype(dtype)]
    grads = [[rng.standard_normal(p.shape).astype(dtype) for p in p0] for _ in range(STEPS)]
    params = [nn.Parameter(ck.asarray(p.copy(), device=device)) for p in p0]
    return p0, grads, params


def _run(opt, params, grads, device):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = ck.asarray(g, device=device)
        opt.step()


def _adam_ref(p0, grads, lr, b1, b2, eps, wd, decoupled, amsgrad=False):
    ps = [p.copy() for p in p0]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    for t, gs in enumerate(grads, 1):
        for i, g in enumerate(gs):
            if wd and decoupled:
                ps[i] = ps[i] * (1 - lr * wd)
            elif wd:
                g = g + wd * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vv = v[i]
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                vv = vmax[i]
            mhat = m[i] / (1 - b1 ** t)
            vhat = vv / (1 - b2 ** t)
            ps[i] = ps[i] - lr * mhat / (np.sqrt(vhat) + eps)
    return ps


@pytest.mark.parametrize("cfg", [
    dict(cls="Adam"), dict(cls="Adam", weight_decay=0.1), dict(cls="AdamW"), dict(cls="AdamW", weight_decay=0.3),
    dict(cls="Adam", amsgrad=True), dict(cls="Adam", lr=0.1, betas=(0.5, 0.9), eps=1e-3)],
    ids=["adam", "adam_l2", "adamw", "adamw_wd", "amsgrad", "adam_hparams"])
def test_adam_matches_formula(device, cfg):
    cfg = dict(cfg)
    cls = getattr(optim, cfg.pop("cls"))
    p0, grads, params = _setup(device)
    opt = cls(params, **cfg)
    _run(opt, params, grads, device)
    lr = cfg.get("lr", 1e-3)
    b1, b2 = cfg.get("betas", (0.9, 0.999))
    wd = cfg.get("weight_decay", 0.01 if cls is optim.AdamW else 0)
    want = _adam_ref(p0, grads, lr, b1, b2, cfg.get("eps", 1e-8), wd, cls is optim.AdamW, cfg.get("amsgrad", False))
    for p, w in zip(params, want):
        assert_same(p, w, rtol=1e-10, atol=1e-12)
    assert opt.state[params[0]]["step"] == STEPS


def test_adam_float32(device):
    p0, grads, params = _setup(device, np.float32)
    opt = optim.Adam(params, lr=0.01)
    _run(opt, params, grads, device)
    want = _adam_ref([p.astype(np.float64) for p in p0], [[g.astype(np.float64) for g in gs] for gs in grads],
                     0.01, 0.9, 0.999, 1e-8, 0, False)
    for p, w in zip(params, want):
        assert_same(p, w.astype(np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cfg", [
    dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.01), dict(lr=0.1, weight_decay=0.1, maximize=True)],
    ids=["plain", "momentum", "nesterov", "dampening_wd", "maximize"])
def test_sgd_matches_formula(device, cfg):
    p0, grads, params = _setup(device)
    opt = optim.SGD(params, **cfg)
    _run(opt, params, grads, device)
    lr, mu = cfg["lr"], cfg.get("momentum", 0)
    damp, wd = cfg.get("dampening", 0), cfg.get("weight_decay", 0)
    ps = [p.copy() for p in p0]
    bufs = [None] * len(ps)
    for gs in grads:
        for i, g in enumerate(gs):
            if cfg.get("maximize"):
                g = -g
            g = g + wd * ps[i]
            if mu:
                bufs[i] = g.copy() if bufs[i] is None else mu * bufs[i] + (1 - damp) * g
                g = g + mu * bufs[i] if cfg.get("nesterov") else bufs[i]
            ps[i] = ps[i] - lr * g
    for p, w in zip(params, ps):
        assert_same(p, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cfg", [dict(), dict(momentum=0.9), dict(centered=True, weight_decay=0.1)],
                         ids=["plain", "momentum", "centered_wd"])
def test_rmsprop_matches_formula(device, cfg):
    p0, grads, params = _setup(device)
    opt = optim.RMSprop(params, lr=0.01, **cfg)
    _run(opt, params, grads, device)
    alpha, eps, lr = 0.99, 1e-8, 0.01
    mu, wd = cfg.get("momentum", 0), cfg.get("weight_decay", 0)
    ps = [p.copy() for p in p0]
    sq = [np.zeros_like(p) for p in ps]
    ga = [np.zeros_like(p) for p in ps]
    buf = [np.zeros_like(p) for p in ps]
    for gs in grads:
        for i, g in enumerate(gs):
            g = g + wd * ps[i]
            sq[i] = alpha * sq[i] + (1 - alpha) * g * g
            if cfg.get("centered"):
                ga[i] = alpha * ga[i] + (1 - alpha) * g
                avg = np.sqrt(sq[i] - ga[i] ** 2) + eps
            else:
                avg = np.sqrt(sq[i]) + eps
            if mu:
                buf[i] = mu * buf[i] + g / avg
                ps[i] = ps[i] - lr * buf[i]
            else:
                ps[i] = ps[i] - lr * g / avg
    for p, w in zip(params, ps):
        assert_same(p, w, rtol=1e-10, atol=1e-12)


def test_param_groups_zero_grad_and_skipped_grads(device):
    p0, grads, params = _setup(device)
    opt = optim.SGD([{"params": [params[0]], "lr": 0.5}, {"params": [params[1]]}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    params[0].grad = ck.asarray(grads[0][0], device=device)
    opt.step()                                  # params[1] has no grad: unchanged
    assert_same(params[1], p0[1])
    assert_same(params[0], p0[0] - 0.5 * grads[0][0], rtol=1e-12)
    opt.zero_grad()
    assert params[0].grad is None
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [params[0]]}, {"params": [params[0]]}], lr=0.1)


def test_optimizer_state_dict_round_trip(device, tmp_path):
    p0, grads, params = _setup(device)
    opt = optim.Adam(params, lr=0.01)
    _run(opt, params, grads[:2], device)
    path = tmp_path / "opt.safetensors"
    ck.save(opt.state_dict(), path)
    params2 = [nn.Parameter(ck.asarray(ck.asnumpy(p.detach()), device=device)) for p in params]
    opt2 = optim.Adam(params2, lr=0.5)
    opt2.load_state_dict(ck.load(path, map_location=device))
    assert opt2.param_groups[0]["lr"] == 0.01
    for p, g in zip(params, grads[2]):
        p.grad = ck.asarray(g, device=device)
    for p, g in zip(params2, grads[2]):
        p.grad = ck.asarray(g, device=device)
    opt.step()
    opt2.step()
    for a, b in zip(params, params2):
        assert_same(b, ck.asnumpy(a.detach()))


def test_step_runs_under_no_grad(device):
    lin = nn.Linear(3, 1).to(device)
    opt = optim.SGD(lin.parameters(), lr=0.1)
    lin(ck.ones((2, 3), dtype=ck.float32, device=device)).sum().backward()
    opt.step()
    assert lin.weight.grad_fn is None and lin.weight.is_leaf


def test_linear_regression_converges(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    w = np.array([[1.5, -2.0, 0.5]], np.float32)
    y = x @ w.T + 0.3
    xd, yd = ck.asarray(x, device=device), ck.asarray(y, device=device)
    model = nn.Linear(3, 1).to(device)
    opt = optim.Adam(model.parameters(), lr=0.05)
    crit = nn.MSELoss()
    for _ in range(300):
        opt.zero_grad()
        loss = crit(model(xd), yd)
        loss.backward()
        opt.step()
    assert float(loss) < 1e-3
    np.testing.assert_allclose(ck.asnumpy(model.weight.detach()), w, atol=0.05)


# ---------------------------------------------------------------- schedules

def _opt(lr=0.1, cls=optim.SGD, **kw):
    p = nn.Parameter(ck.zeros((2,), dtype=ck.float32))
    return cls([p], lr=lr, **kw)


def test_step_lr():
    opt = _opt()
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(lrs, [0.1, 0.1, 0.05, 0.05, 0.025, 0.025])
    assert sched.get_last_lr() == [opt.param_groups[0]["lr"]]


def test_cosine_annealing_lr():
    opt = _opt()
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    want = [0.01 + 0.09 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)]
    np.testing.assert_allclose(lrs, want, rtol=1e-12)


def test_one_cycle_lr():
    opt = _opt(cls=optim.SGD, momentum=0.9)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step()
    # warm-up over pct_start * 10 - 1 = 2 steps from 1/25 to 1, then cosine down to 1/25/1e4
    assert lrs[0] == pytest.approx(0.04) and lrs[2] == pytest.approx(1.0) and lrs[9] == pytest.approx(4e-6)
    assert lrs[1] == pytest.approx(0.04 + (1 - 0.04) * 0.5)
    assert moms[0] == pytest.approx(0.95) and moms[2] == pytest.approx(0.85) and moms[9] == pytest.approx(0.95)
    mid = 2 + (9 - 2) / 2     # halfway down the cosine
    assert lrs[int(mid)] > 0.5 > lrs[int(mid) + 1]
    adam = _opt(cls=optim.Adam)
    optim.lr_scheduler.OneCycleLR(adam, max_lr=0.01, epochs=2, steps_per_epoch=5)
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)
    with pytest.raises(ValueError, match="total_steps"):
        optim.lr_scheduler.OneCycleLR(_opt(), max_lr=1.0)


def test_schedules_match_torch():
    """CosineAnnealingLR stepped each batch (the MLP recipe's schedule) and
    OneCycleLR with Adam's beta1, rate by rate against PyTorch's."""
    torch = pytest.importorskip("torch")
    for make in (lambda o, m: m.CosineAnnealingLR(o, T_max=50),
                 lambda o, m: m.CosineAnnealingLR(o, T_max=20, eta_min=1e-4),
                 lambda o, m: m.OneCycleLR(o, max_lr=2e-3, epochs=5, steps_per_epoch=10),
                 lambda o, m: m.OneCycleLR(o, max_lr=0.01, total_steps=30, anneal_strategy="linear",
                                           three_phase=True)):
        ck_opt = _opt(lr=2e-3, cls=optim.Adam)
        t_opt = torch.optim.Adam([torch.zeros(2, requires_grad=True)], lr=2e-3)
        ck_s, t_s = make(ck_opt, optim.lr_scheduler), make(t_opt, torch.optim.lr_scheduler)
        steps = getattr(t_s, "total_steps", 50)
        for _ in range(steps - 1):
            assert ck_opt.param_groups[0]["lr"] == pytest.approx(t_opt.param_groups[0]["lr"], rel=1e-9, abs=1e-15)
            assert ck_opt.param_groups[0]["betas"][0] == pytest.approx(t_opt.param_groups[0]["betas"][0], rel=1e-12)
            t_opt.step()
            ck_s.step()
            t_s.step()
