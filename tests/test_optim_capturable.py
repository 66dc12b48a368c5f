"""Adam and AdamW with capturable=True: the step count lives on the device
(a 0-d float32 array, incremented by the multi-tensor step itself), so a
training step captured in a graph and replayed k times equals k eager
steps; the eager path against the update formula and against PyTorch."""
import numpy as np
import pytest

import cudakit as ck
from cudakit import _core, cuda, nn, optim

from conftest import assert_same
from test_optim import STEPS, _adam_ref, _run, _setup

try:
    import torch
except ImportError:
    torch = None


@pytest.mark.parametrize("cfg", [dict(cls="Adam"), dict(cls="Adam", weight_decay=0.1), dict(cls="AdamW"),
                                 dict(cls="AdamW", weight_decay=0.3, maximize=True), dict(cls="Adam", amsgrad=True),
                                 dict(cls="Adam", lr=0.1, betas=(0.5, 0.9), eps=1e-3)],
                         ids=["adam", "adam_l2", "adamw", "adamw_wd_max", "amsgrad", "adam_hparams"])
def test_capturable_matches_formula(device, cfg):
    cfg = dict(cfg)
    cls = getattr(optim, cfg.pop("cls"))
    p0, grads, params = _setup(device)
    opt = cls(params, capturable=True, **cfg)
    _run(opt, params, grads, device)
    lr = cfg.get("lr", 1e-3)
    b1, b2 = cfg.get("betas", (0.9, 0.999))
    wd = cfg.get("weight_decay", 0.01 if cls is optim.AdamW else 0)
    sign = -1 if cfg.get("maximize") else 1
    want = _adam_ref(p0, [[sign * g for g in gs] for gs in grads], lr, b1, b2, cfg.get("eps", 1e-8), wd,
                     cls is optim.AdamW, cfg.get("amsgrad", False))
    for p, w in zip(params, want):
        assert_same(p, w, rtol=1e-10, atol=1e-12)
    step = opt.state[params[0]]["step"]
    assert isinstance(step, ck.ndarray) and step.shape == () and step.dtype == ck.float32
    assert step.device == params[0].device
    assert float(step) == STEPS
    assert opt.state[params[1]]["step"] is step       # one count a group
    assert opt.param_groups[0]["capturable"] is True


def test_capturable_count_survives_a_new_gradient(device):
    """A parameter that gets its first gradient later joins the group's
    count, which goes on from where it was (one count a group, as the host
    count of capturable=False; PyTorch keeps one a parameter, which differs
    only for such a late parameter)."""
    p0, grads, params = _setup(device)
    opt = optim.Adam(params, capturable=True)
    params[0].grad = None
    params[1].grad = ck.asarray(grads[0][1], device=device)
    opt.step()
    opt.step()
    _run(opt, params, grads[:1], device)
    assert float(opt.state[params[0]]["step"]) == 3
    assert opt.state[params[0]]["step"] is opt.state[params[1]]["step"]


@pytest.mark.parametrize("layout", ["mixed_dtypes", "many_tensors", "large"])
def test_capturable_count_rises_once_a_step(device, layout):
    """The step's own kernel raises the count (the group's ticket counts its
    blocks): once a step, whatever the number of launches the step takes
    (a launch a dtype, one per 32 tensors, hundreds of blocks), and every
    launch uses the same step's corrections (the formula's values)."""
    rng = np.random.default_rng(1)
    if layout == "mixed_dtypes":
        p0 = [rng.standard_normal((3, 4)), rng.standard_normal(5).astype(np.float32), rng.standard_normal(7)]
    elif layout == "many_tensors":
        p0 = [rng.standard_normal(k + 1) for k in range(40)]
    else:
        p0 = [rng.standard_normal(300_000).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
    grads = [[rng.standard_normal(p.shape).astype(p.dtype) for p in p0] for _ in range(STEPS)]
    params = [nn.Parameter(ck.asarray(p.copy(), device=device)) for p in p0]
    opt = optim.Adam(params, lr=0.01, capturable=True)
    for k, gs in enumerate(grads, 1):
        _run(opt, params, [gs], device)
        assert float(opt.state[params[0]]["step"]) == k
    want = _adam_ref([p.astype(np.float64) for p in p0], [[g.astype(np.float64) for g in gs] for gs in grads],
                     0.01, 0.9, 0.999, 1e-8, 0, False)
    for p, w in zip(params, want):
        tol = 1e-5 if p.dtype == ck.float32 else 1e-10
        np.testing.assert_allclose(ck.asnumpy(p).astype(np.float64), w, rtol=tol, atol=tol)
    assert float(ck.asnumpy(opt.param_groups[0]["_ticket"])[0]) == 0      # left at zero for the next step


def test_adam_step_ticket_checked(device):
    p = ck.asarray(np.ones(4, np.float32), device=device)
    g, m, v = (ck.asarray(np.ones(4, np.float32), device=device) for _ in range(3))
    step = ck.zeros((), dtype=ck.float32, device=device)
    with pytest.raises(ValueError, match="ticket"):
        _core._adam_step([p], [g], [m], [v], step, increment_step=True,
                         step_ticket=ck.zeros(1, dtype=ck.int32, device=device))
    with pytest.raises(TypeError, match="step_ticket"):
        _core._adam_step([p], [g], [m], [v], step, increment_step=True, step_ticket=3)
    # a float64 count is read through a copy: the add before the step counts it
    step64 = ck.zeros((), dtype=ck.float64, device=device)
    _core._adam_step([p], [g], [m], [v], step64, increment_step=True,
                     step_ticket=ck.zeros(1, dtype=ck.uint32, device=device))
    assert float(step64) == 1.0


def test_capturable_state_dict_round_trip(device, tmp_path):
    p0, grads, params = _setup(device)
    opt = optim.Adam(params, lr=0.01, capturable=True)
    _run(opt, params, grads[:2], device)
    sd = opt.state_dict()
    assert float(sd["state"][0]["step"]) == 2
    ck.save(sd, str(tmp_path / "opt.safetensors"))
    params2 = [nn.Parameter(ck.asarray(ck.asnumpy(p), device=device)) for p in params]
    opt2 = optim.Adam(params2, lr=0.01, capturable=True)
    opt2.load_state_dict(ck.load(str(tmp_path / "opt.safetensors"), map_location=device))
    _run(opt, params, grads[2:], device)
    _run(opt2, params2, grads[2:], device)
    for a, b in zip(params, params2):
        assert_same(b, ck.asnumpy(a), rtol=1e-15)
    assert float(opt2.state[params2[0]]["step"]) == STEPS


# ------------------------------------------------------------ captured steps

def _mlp(device, kind, seed=0):
    """A 6-16-3 MLP.  'linear' is nn.Linear's (its product is a matmul, which
    a CPU graph refuses: NumPy's BLAS); 'broadcast' writes each product as a
    broadcast multiply and a sum, which every device captures."""
    rng = np.random.default_rng(seed)
    w1 = rng.uniform(-0.4, 0.4, (16, 6)).astype(np.float32)
    b1 = rng.uniform(-0.4, 0.4, 16).astype(np.float32)
    w2 = rng.uniform(-0.25, 0.25, (3, 16)).astype(np.float32)
    b2 = rng.uniform(-0.25, 0.25, 3).astype(np.float32)
    if kind == "linear":
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
        with ck.no_grad():
            for p, v in zip(model.parameters(), (w1, b1, w2, b2)):
                p[...] = ck.asarray(v, device=device)
        return model, list(model.parameters())
    ps = [nn.Parameter(ck.asarray(v, device=device)) for v in (w1, b1, w2, b2)]

    def model(x):
        h = ck.maximum((x[:, None, :] * ps[0][None]).sum(axis=2) + ps[1], 0)
        return (h[:, None, :] * ps[2][None]).sum(axis=2) + ps[3]
    return model, ps


def _batches(n, batch=8, seed=1):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((n, batch, 6)).astype(np.float32)
    ys = rng.integers(0, 3, (n, batch)).astype(np.int64)
    return xs, ys


@pytest.mark.parametrize("kind", ["broadcast", "linear"])
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
def test_replays_of_a_captured_step_equal_eager_steps(device, kind, cls):
    if kind == "linear" and device == "cpu":
        pytest.skip("a CPU graph refuses the float products (NumPy's BLAS): the broadcast MLP covers the CPU")
    warm, k = 3, 12
    xs, ys = _batches(warm + k)
    crit = nn.CrossEntropyLoss()
    Opt = getattr(optim, cls)

    def make():
        model, ps = _mlp(device, kind)
        return model, ps, Opt(ps, lr=0.05, capturable=True)

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        return loss

    # k eager steps after the warm-up
    model, ps, opt = make()
    for i in range(warm + k):
        step(model, opt, ck.asarray(xs[i], device=device), ck.asarray(ys[i], device=device))
    want = [ck.asnumpy(p) for p in ps]

    # the same warm-up, then one step captured and replayed k times over the next batches
    model, ps, opt = make()
    sx = ck.asarray(xs[0], device=device)
    sy = ck.asarray(ys[0], device=device)
    for i in range(warm):
        sx[...] = ck.asarray(xs[i], device=device)
        sy[...] = ck.asarray(ys[i], device=device)
        step(model, opt, sx, sy)
    cuda.synchronize(sx.device)
    before = [ck.asnumpy(p) for p in ps]
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        loss = step(model, opt, sx, sy)
    for p, b in zip(ps, before):                   # captured, not run
        np.testing.assert_array_equal(ck.asnumpy(p), b)
    assert float(opt.state[ps[0]]["step"]) == warm
    losses = []
    for i in range(warm, warm + k):
        sx[...] = ck.asarray(xs[i], device=device)
        sy[...] = ck.asarray(ys[i], device=device)
        g.replay()
        losses.append(float(loss))
    assert float(opt.state[ps[0]]["step"]) == warm + k
    for p, w in zip(ps, want):      # the same kernels in the same order (float32; cuBLAS may pick others in a graph)
        np.testing.assert_allclose(ck.asnumpy(p), w, rtol=1e-5, atol=1e-6)
    assert all(np.isfinite(losses))


def test_without_capturable_a_replay_repeats_the_captured_step(device):
    """What capturable=True is for: the host count is frozen into the graph
    (the replays differ from eager steps), as in PyTorch."""
    warm, k = 2, 6
    xs, ys = _batches(warm + k)
    crit = nn.CrossEntropyLoss()
    results = {}
    for capturable in (False, True):
        model, ps = _mlp(device, "broadcast")
        opt = optim.Adam(ps, lr=0.05, capturable=capturable)
        sx, sy = ck.asarray(xs[0], device=device), ck.asarray(ys[0], device=device)

        def step():
            opt.zero_grad(set_to_none=True)
            crit(model(sx), sy).backward()
            opt.step()
        for i in range(warm):
            sx[...], sy[...] = ck.asarray(xs[i], device=device), ck.asarray(ys[i], device=device)
            step()
        g = cuda.CUDAGraph(device=device)
        with cuda.graph(g):
            step()
        for i in range(warm, warm + k):
            sx[...], sy[...] = ck.asarray(xs[i], device=device), ck.asarray(ys[i], device=device)
            g.replay()
        results[capturable] = [ck.asnumpy(p) for p in ps]
    diff = max(np.abs(a - b).max() for a, b in zip(results[False], results[True]))
    assert diff > 1e-5


# ------------------------------------------------------------ against PyTorch

@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("cfg", [dict(cls="Adam"), dict(cls="Adam", weight_decay=0.1),
                                 dict(cls="AdamW", weight_decay=0.05, lr=0.01)], ids=["adam", "adam_l2", "adamw"])
def test_capturable_matches_torch(device, cfg):
    cfg = dict(cfg)
    name = cfg.pop("cls")
    p0, grads, params = _setup(device)
    opt = getattr(optim, name)(params, capturable=True, **cfg)
    tdev = "cuda" if device == "cuda" else "cpu"
    tparams = [torch.tensor(p, device=tdev, requires_grad=True) for p in p0]
    # PyTorch's capturable path needs CUDA tensors; its default path is the same formula
    topt = getattr(torch.optim, name)(tparams, capturable=tdev == "cuda", **cfg)
    for gs in grads:
        for p, tp, gr in zip(params, tparams, gs):
            p.grad = ck.asarray(gr, device=device)
            tp.grad = torch.tensor(gr, device=tdev)
        opt.step()
        topt.step()
    # PyTorch's capturable path (CUDA) computes the bias corrections from its
    # float32 step with float32 tensor ops (1 - beta ** step), cudakit's
    # kernel in double: float64 parameters then agree to float32's rounding
    # of the corrections, not to float64's
    # (each step's update then carries float32's 6e-8, summed over the steps)
    rtol, atol = (1e-5, 1e-6) if tdev == "cuda" else (1e-10, 1e-12)
    for p, tp in zip(params, tparams):
        assert_same(p, tp.detach().cpu().numpy(), rtol=rtol, atol=atol)
    assert float(opt.state[params[0]]["step"]) == float(topt.state[tparams[0]]["step"])
