"""ck.nn: the Module machinery, layers against NumPy, gradients against
central finite differences in float64, losses, state dicts and ck.save/ck.load."""
import json
import math
import struct
import warnings

import numpy as np
import pytest

import cudakit as ck
from cudakit import nn
from cudakit.nn import functional as F

from conftest import assert_same


def _arr(a, device, requires_grad=False):
    x = ck.asarray(np.asarray(a), device=device)
    if requires_grad:
        x.requires_grad_(True)
    return x


def _np(x):
    return ck.asnumpy(x.detach() if hasattr(x, "detach") else x)


def _seed_model():
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(dim=1))


# ---------------------------------------------------------------- Module machinery

def test_seed_model_structure_and_repr():
    m = _seed_model()
    assert repr(m) == (
        "Sequential(\n"
        "  (0): Linear(in_features=784, out_features=128, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=128, out_features=10, bias=True)\n"
        "  (3): Softmax(dim=1)\n"
        ")")
    names = [n for n, _ in m.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias"]
    shapes = [tuple(p.shape) for p in m.parameters()]
    assert shapes == [(128, 784), (128,), (10, 128), (10,)]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf for p in m.parameters())
    assert all(p.dtype == ck.float32 for p in m.parameters())
    assert len(list(m.children())) == 4 and len(list(m.modules())) == 5
    assert isinstance(m[0], nn.Linear) and isinstance(m[-1], nn.Softmax) and len(m) == 4
    assert [type(x).__name__ for x in m[1:3]] == ["ReLU", "Linear"]
    # PyTorch's default initialisation: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias
    w = _np(m[0].weight)
    bound = 1 / math.sqrt(784)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound


def test_custom_module_registration_train_eval():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.bn = nn.BatchNorm1d(3)
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Tanh()])
            self.scale = nn.Parameter(ck.ones((1,), dtype=ck.float32))
            self.plain = 5

        def forward(self, x):
            x = self.bn(self.fc(x))
            for b in self.blocks:
                x = b(x)
            return x * self.scale

    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc.weight", "fc.bias", "bn.weight", "bn.bias", "blocks.0.weight", "blocks.0.bias"]
    assert [n for n, _ in net.named_buffers()] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc", "bn", "blocks"]
    assert net.training and net.bn.training
    net.eval()
    assert not net.training and not net.bn.training and not net.blocks[1].training
    net.train()
    assert net.bn.training
    with pytest.raises(TypeError, match="parameter 'scale'"):
        net.scale = ck.ones((1,))
    del net.fc
    assert "fc.weight" not in dict(net.named_parameters())
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Bad(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(ck.ones((1,), dtype=ck.float32))
        Bad()


def test_shared_parameter_listed_once():
    lin = nn.Linear(3, 3)
    m = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(m.parameters())) == 2


def test_parameter_is_an_array_sharing_memory():
    base = ck.zeros((3,), dtype=ck.float32)
    p = nn.Parameter(base)
    assert isinstance(p, ck.ndarray) and p.requires_grad
    with ck.no_grad():
        p[0] = 2.0
    assert float(base[0]) == 2.0
    y = p * 2
    assert type(y) is ck.ndarray
    assert repr(p).startswith("Parameter containing:")
    assert not nn.Parameter(ck.zeros((2,), dtype=ck.float32), requires_grad=False).requires_grad


def test_zero_grad_and_requires_grad(device):
    m = nn.Linear(3, 2).to(device)
    x = _arr(np.ones((4, 3), np.float32), device)
    m(x).sum().backward()
    assert m.weight.grad is not None
    m.zero_grad(set_to_none=False)
    assert_same(m.weight.grad, np.zeros((2, 3), np.float32))
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not m.weight.requires_grad


def test_module_to_device_and_dtype(device):
    m = _seed_model()
    assert m.to(device) is m
    assert all(str(p.device) == str(ck.device(device)) for p in m.parameters())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in m.parameters())
    m.double()
    assert all(p.dtype == ck.float64 for p in m.parameters())
    bn = nn.BatchNorm1d(3).to(device)
    assert str(bn.running_mean.device) == str(ck.device(device))
    assert bn.num_batches_tracked.dtype == ck.int64
    with pytest.raises(TypeError, match="floating point"):
        m.to(ck.int32)


def test_tensor_to_spelling(device):
    x = ck.arange(4, dtype=ck.float32)
    y = x.to(device)
    assert str(y.device) == str(ck.device(device))
    assert x.to(device="cpu", dtype="float64").dtype == ck.float64
    assert x.to(ck.float64).dtype == ck.float64
    assert x.to("cpu") is x
    assert ck.device("cpu") == "cpu"


# ---------------------------------------------------------------- state dicts, save/load

def test_state_dict_round_trip(device):
    a = _seed_model().to(device)
    b = _seed_model().to(device)
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert not any(v.requires_grad for v in sd.values())
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    x = _arr(np.random.default_rng(0).standard_normal((5, 784)).astype(np.float32), device)
    np.testing.assert_array_equal(_np(a(x)), _np(b(x)))
    bad = dict(sd)
    bad.pop("0.bias")
    bad["extra"] = sd["0.weight"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.bias"') as e:
        b.load_state_dict(bad)
    assert 'Unexpected key(s) in state_dict: "extra"' in str(e.value)
    res = b.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["0.bias"] and res.unexpected_keys == ["extra"]
    wrong = dict(sd)
    wrong["2.bias"] = ck.zeros((11,), dtype=ck.float32)
    with pytest.raises(RuntimeError, match="size mismatch for 2.bias"):
        b.load_state_dict(wrong)


def test_batchnorm_buffers_in_state_dict():
    bn = nn.BatchNorm2d(4)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_save_load_safetensors_format(device, tmp_path):
    m = _seed_model().to(device)
    path = tmp_path / "model.safetensors"
    ck.save(m.state_dict(), path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["0.weight"]["dtype"] == "F32" and header["0.weight"]["shape"] == [128, 784]
    b, e = header["0.weight"]["data_offsets"]
    w = np.frombuffer(raw[8 + n + b:8 + n + e], dtype="<f4").reshape(128, 784)
    np.testing.assert_array_equal(w, _np(m[0].weight))
    assert len(raw) == 8 + n + max(v["data_offsets"][1] for v in header.values())
    got = ck.load(path, map_location=device)
    assert list(got) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for k, v in m.state_dict().items():
        assert_same(got[k], _np(v))
        assert str(got[k].device) == str(ck.device(device))
    m2 = _seed_model().to(device)
    m2.load_state_dict(ck.load(path, map_location=device))
    assert_same(m2[2].bias, _np(m[2].bias))


def test_save_load_nested_npz_npy(device, tmp_path):
    state = {"step": 3, "lrs": [0.1, 0.01], "betas": (0.9, 0.999), "name": "adam", "none": None,
             "state": {0: {"exp_avg": _arr(np.arange(6.0).reshape(2, 3), device)}},
             "mask": _arr(np.array([True, False]), device), "ints": _arr(np.arange(3, dtype=np.int16), device)}
    p = tmp_path / "opt.pt"
    ck.save(state, p)
    got = ck.load(p, map_location=device)
    assert got["step"] == 3 and got["lrs"] == [0.1, 0.01] and got["betas"] == (0.9, 0.999)
    assert got["name"] == "adam" and got["none"] is None
    assert_same(got["state"][0]["exp_avg"], np.arange(6.0).reshape(2, 3))
    assert_same(got["mask"], np.array([True, False]))
    assert_same(got["ints"], np.arange(3, dtype=np.int16))
    z = tmp_path / "w.npz"
    ck.save({"a": _arr(np.ones((2, 2), np.float32), device)}, z)
    assert np.load(z)["a"].shape == (2, 2)
    assert_same(ck.load(z, map_location=device)["a"], np.ones((2, 2), np.float32))
    y = tmp_path / "x.npy"
    ck.save(y, _arr(np.arange(4.0), device))
    assert_same(ck.load(y, map_location=device), np.arange(4.0))
    with pytest.raises(TypeError, match="state_dict"):
        ck.save(nn.Linear(2, 2), tmp_path / "m.pt")
    (tmp_path / "junk").write_bytes(b"\xff" * 16)
    with pytest.raises(ValueError, match="safetensors"):
        ck.load(tmp_path / "junk")


# ---------------------------------------------------------------- forward values against NumPy

def test_linear_relu_softmax_forward(device):
    rng = np.random.default_rng(1)
    m = _seed_model().to(device)
    x = rng.standard_normal((6, 784)).astype(np.float32)
    w0, b0, w1, b1 = (_np(p) for p in m.parameters())
    h = np.maximum(x @ w0.T + b0, 0)
    z = h @ w1.T + b1
    e = np.exp(z - z.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    assert_same(m(_arr(x, device)), want, rtol=1e-4, atol=1e-6)


def test_activations_forward(device):
    x = np.linspace(-30, 30, 41)
    xd = _arr(x, device)
    assert_same(nn.ReLU()(xd), np.maximum(x, 0))
    assert_same(nn.Sigmoid()(xd), 1 / (1 + np.exp(-x)), rtol=1e-12, atol=1e-15)
    assert_same(nn.Tanh()(xd), np.tanh(x))
    c = math.sqrt(2 / math.pi)
    assert_same(nn.GELU("tanh")(xd), 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3))))
    assert_same(nn.LeakyReLU(0.1)(xd), np.where(x > 0, x, 0.1 * x))
    erf = np.vectorize(math.erf)
    assert_same(nn.GELU()(xd), 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-12, atol=1e-15)
    assert_same(F.softplus(xd), np.logaddexp(0, x), rtol=1e-12, atol=1e-300)
    z = np.random.default_rng(2).standard_normal((3, 5)) * 50
    ls = z - z.max(1, keepdims=True)
    ls = ls - np.log(np.exp(ls).sum(1, keepdims=True))
    assert_same(nn.LogSoftmax(dim=1)(_arr(z, device)), ls, atol=1e-12)
    assert_same(nn.Softmax(dim=0)(_arr(z, device)), np.exp(z - z.max(0)) / np.exp(z - z.max(0)).sum(0))
    assert_same(nn.Flatten()(_arr(np.zeros((2, 3, 4)), device)), np.zeros((2, 12)))


def _conv_ref(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho = (h + 2 * pad - kh) // stride + 1
    wo = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + b[None, :, None, None]


def test_conv_pool_forward(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 7, 6))
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1).to(device).double()
    got = conv(_arr(x, device))
    assert_same(got, _conv_ref(x, _np(conv.weight), _np(conv.bias), 2, 1), rtol=1e-10)
    mp = nn.MaxPool2d(2)(_arr(x, device))
    assert_same(mp, x[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    ap = nn.AvgPool2d(2)(_arr(x, device))
    assert_same(ap, x[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-12)
    assert "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))" == repr(conv)


def test_norms_embedding_forward(device):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((8, 5))
    bn = nn.BatchNorm1d(5).to(device).double()
    y = bn(_arr(x, device))
    mu, var = x.mean(0), x.var(0)
    assert_same(y, (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10)
    assert_same(bn.running_mean, 0.1 * mu, rtol=1e-10)
    assert_same(bn.running_var, 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-10)
    assert int(bn.num_batches_tracked) == 1
    bn.eval()
    assert_same(bn(_arr(x, device)), (x - 0.1 * mu) / np.sqrt(0.9 + 0.1 * x.var(0, ddof=1) + 1e-5), rtol=1e-10)
    x4 = rng.standard_normal((2, 3, 4, 4))
    bn2 = nn.BatchNorm2d(3).to(device).double()
    m4, v4 = x4.mean((0, 2, 3), keepdims=True), x4.var((0, 2, 3), keepdims=True)
    assert_same(bn2(_arr(x4, device)), (x4 - m4) / np.sqrt(v4 + 1e-5), rtol=1e-10)
    ln = nn.LayerNorm(5).to(device).double()
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    assert_same(ln(_arr(x, device)), (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10)
    emb = nn.Embedding(10, 3, padding_idx=0).to(device)
    idx = np.array([[1, 0], [9, 1]])
    got = emb(_arr(idx, device))
    assert_same(got, _np(emb.weight)[idx])
    assert not _np(emb.weight)[0].any()


def test_dropout(device):
    x = _arr(np.ones((200, 50), np.float32), device)
    d = nn.Dropout(0.25)
    y = _np(d(x))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# ---------------------------------------------------------------- gradients against finite differences

def _fd_check(f, arrays, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Compare the gradients backward gives for f() (a scalar) with central
    differences, for each array of `arrays` (float64 leaves requiring a grad)."""
    for a in arrays:
        a.grad = None
    f().backward()
    for a in arrays:
        got = _np(a.grad) if a.grad is not None else np.zeros(tuple(a.shape))
        base = _np(a).copy()
        num = np.zeros_like(base)
        flat = base.reshape(-1)
        for i in range(flat.size):
            for sgn in (1, -1):
                v = flat.copy()
                v[i] += sgn * eps
                with ck.no_grad():
                    a[...] = ck.asarray(v.reshape(base.shape), device=a.device)
                    num.reshape(-1)[i] += sgn * float(f()) / (2 * eps)
        with ck.no_grad():
            a[...] = ck.asarray(base, device=a.device)
        np.testing.assert_allclose(got, num, rtol=rtol, atol=atol)


def _weighted_sum(y, seed=0):
    r = np.random.default_rng(seed).standard_normal(tuple(y.shape))
    return (y * ck.asarray(r, device=y.device)).sum()


LAYERS = [
    ("linear", lambda: nn.Linear(4, 3), (2, 4)),
    ("conv", lambda: nn.Conv2d(2, 2, 3, stride=2, padding=1), (1, 2, 5, 4)),
    ("maxpool", lambda: nn.MaxPool2d(2, stride=1), (1, 2, 3, 3)),
    ("avgpool", lambda: nn.AvgPool2d(2, padding=1), (1, 1, 3, 4)),
    ("relu", lambda: nn.ReLU(), (3, 4)),
    ("gelu_tanh", lambda: nn.GELU("tanh"), (3, 4)),
    ("gelu", lambda: nn.GELU(), (3, 4)),
    ("sigmoid", lambda: nn.Sigmoid(), (3, 4)),
    ("tanh", lambda: nn.Tanh(), (3, 4)),
    ("softmax", lambda: nn.Softmax(dim=1), (3, 4)),
    ("log_softmax", lambda: nn.LogSoftmax(dim=1), (3, 4)),
    ("batchnorm1d", lambda: nn.BatchNorm1d(3), (4, 3)),
    ("batchnorm2d", lambda: nn.BatchNorm2d(2), (2, 2, 2, 2)),
    ("layernorm", lambda: nn.LayerNorm(4), (2, 4)),
    ("flatten", lambda: nn.Flatten(), (2, 2, 3)),
]


@pytest.mark.parametrize("name,make,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_gradients(device, name, make, shape):
    layer = make().to(device).double()
    rng = np.random.default_rng(5)
    xv = rng.standard_normal(shape)
    if name in ("relu", "maxpool"):
        xv = xv + np.sign(xv) * 0.05   # away from the kinks the differences would straddle
        xv = xv + np.arange(xv.size).reshape(shape) * 1e-3
    x = _arr(xv, device, requires_grad=True)
    params = list(layer.parameters())
    _fd_check(lambda: _weighted_sum(layer(x)), [x] + params)


def test_embedding_gradient(device):
    emb = nn.Embedding(5, 3).to(device).double()
    idx = _arr(np.array([[0, 2], [2, 4]]), device)
    _fd_check(lambda: _weighted_sum(emb(idx)), [emb.weight])


def test_losses_gradients(device):
    rng = np.random.default_rng(6)
    x = _arr(rng.standard_normal((4, 3)), device, requires_grad=True)
    t = _arr(np.array([0, 2, 1, 2]), device)
    probs = rng.random((4, 3))
    probs = _arr(probs / probs.sum(1, keepdims=True), device)
    w = _arr(np.array([1.0, 2.0, 0.5]), device)
    _fd_check(lambda: F.cross_entropy(x, t), [x])
    _fd_check(lambda: F.cross_entropy(x, t, weight=w, label_smoothing=0.2), [x])
    _fd_check(lambda: F.cross_entropy(x, probs), [x])
    _fd_check(lambda: F.cross_entropy(x, t, ignore_index=2, reduction="sum"), [x])
    y = _arr(rng.standard_normal((4, 3)), device)
    _fd_check(lambda: F.mse_loss(x, y), [x])
    b = _arr((rng.random((4, 3)) > 0.5).astype(np.float64), device)
    _fd_check(lambda: F.binary_cross_entropy_with_logits(x, b, pos_weight=_arr(np.array([1.0, 2.0, 3.0]), device)), [x])


# ---------------------------------------------------------------- losses against NumPy

def _log_softmax_np(z):
    s = z - z.max(1, keepdims=True)
    return s - np.log(np.exp(s).sum(1, keepdims=True))


def test_cross_entropy_values(device):
    rng = np.random.default_rng(7)
    z = rng.standard_normal((6, 4))
    t = np.array([0, 3, 1, 1, 2, 3])
    lp = _log_softmax_np(z)
    zd, td = _arr(z, device), _arr(t, device)
    assert_same(nn.CrossEntropyLoss()(zd, td), -lp[np.arange(6), t].mean())
    assert_same(nn.CrossEntropyLoss(reduction="none")(zd, td), -lp[np.arange(6), t])
    assert_same(nn.CrossEntropyLoss(reduction="sum")(zd, td), -lp[np.arange(6), t].sum())
    w = np.array([1.0, 2.0, 0.5, 1.5])
    want = -(w[t] * lp[np.arange(6), t]).sum() / w[t].sum()
    assert_same(nn.CrossEntropyLoss(weight=_arr(w, device))(zd, td), want)
    eps = 0.1
    want = ((1 - eps) * -lp[np.arange(6), t] + eps * -lp.mean(1)).mean()
    assert_same(nn.CrossEntropyLoss(label_smoothing=eps)(zd, td), want)
    keep = t != 1
    assert_same(nn.CrossEntropyLoss(ignore_index=1)(zd, td), -lp[np.arange(6), t][keep].mean())
    p = rng.random((6, 4))
    p /= p.sum(1, keepdims=True)
    assert_same(nn.CrossEntropyLoss()(zd, _arr(p, device)), -(p * lp).sum(1).mean())
    z3 = rng.standard_normal((2, 4, 3))
    t3 = np.array([[0, 1, 3], [2, 2, 0]])
    lp3 = _log_softmax_np(np.moveaxis(z3, 1, -1).reshape(-1, 4)).reshape(2, 3, 4)
    want = -np.take_along_axis(lp3, t3[..., None], -1)[..., 0]
    assert_same(nn.CrossEntropyLoss(reduction="none")(_arr(z3, device), _arr(t3, device)), want)
    assert_same(nn.NLLLoss()(_arr(lp, device), td), -lp[np.arange(6), t].mean())
    y = rng.standard_normal((6, 4))
    assert_same(nn.MSELoss()(zd, _arr(y, device)), ((z - y) ** 2).mean())
    b = (rng.random((6, 4)) > 0.5).astype(np.float64)
    sig = 1 / (1 + np.exp(-z))
    assert_same(nn.BCEWithLogitsLoss()(zd, _arr(b, device)), -(b * np.log(sig) + (1 - b) * np.log(1 - sig)).mean())
    with pytest.raises(IndexError, match="out of bounds"):
        nn.CrossEntropyLoss()(zd, _arr(np.array([0, 1, 2, 3, 4, 0]), device))


def test_cross_entropy_warns_once_on_probabilities(device):
    F._warned_probabilities = False
    try:
        z = _arr(np.random.default_rng(8).standard_normal((5, 10)).astype(np.float32), device)
        t = _arr(np.array([1, 2, 3, 4, 5]), device)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nn.CrossEntropyLoss()(z, t)          # logits: no warning
        p = nn.Softmax(dim=1)(z)
        with pytest.warns(UserWarning, match="Remove the final Softmax"):
            loss = nn.CrossEntropyLoss()(p, t)
        lp = _log_softmax_np(_np(p).astype(np.float64))
        np.testing.assert_allclose(float(loss), -lp[np.arange(5), _np(t)].mean(), rtol=1e-5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nn.CrossEntropyLoss()(p, t)          # once per process
    finally:
        F._warned_probabilities = True


# ---------------------------------------------------------------- init

def test_init_functions(device):
    w = ck.empty((300, 200), dtype=ck.float32, device=device)
    nn.init.xavier_uniform_(w)
    a = math.sqrt(6 / 500)
    v = _np(w)
    assert np.abs(v).max() <= a and abs(v.std() - a / math.sqrt(3)) < 0.02 * a
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(_np(w).std() - math.sqrt(2 / 200)) < 0.03 * math.sqrt(2 / 200)
    nn.init.constant_(w, 0.5)
    assert (_np(w) == 0.5).all()
    nn.init.zeros_(w)
    assert not _np(w).any()
    assert nn.init.calculate_gain("tanh") == 5 / 3
    ck.random.seed(123)
    a1 = _np(nn.Linear(5, 5).weight)
    ck.random.seed(123)
    np.testing.assert_array_equal(a1, _np(nn.Linear(5, 5).weight))


def test_safetensors_package_reads_and_writes_our_files(device, tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    m = _seed_model().to(device)
    path = tmp_path / "m.safetensors"
    ck.save(m.state_dict(), path)
    theirs = st.load_file(str(path))
    assert sorted(theirs) == sorted(m.state_dict())
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(theirs[k], _np(v))
    other = tmp_path / "theirs.safetensors"
    st.save_file({"a": np.arange(6, dtype=np.float64).reshape(2, 3), "b": np.array([1, 2], np.int8)}, str(other),
                 metadata={"format": "np"})
    got = ck.load(other, map_location=device)
    assert_same(got["a"], np.arange(6, dtype=np.float64).reshape(2, 3))
    assert_same(got["b"], np.array([1, 2], np.int8))


def test_containers_index_slice_delete_insert():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)
    s = nn.Sequential(a, b, c)
    assert isinstance(s[1:], nn.Sequential) and list(s[1:]) == [b, c]
    del s[1]
    assert list(s) == [a, c] and [n for n, _ in s.named_children()] == ["0", "1"]
    s.insert(1, b)
    assert list(s) == [a, b, c]
    y = s(ck.ones((3, 2), dtype=ck.float32))
    assert tuple(y.shape) == (3, 1)
    del s[2]
    assert tuple(s(ck.ones((3, 2), dtype=ck.float32)).shape) == (3, 2)   # the cached chain follows
    ml = nn.ModuleList([a, b])
    ml.append(c)
    assert len(ml) == 3 and ml[-1] is c and isinstance(ml[:2], nn.ModuleList)
    with pytest.raises(IndexError):
        ml[3]
    md = nn.ModuleDict({"x": a})
    md["y"] = c
    assert list(md.keys()) == ["x", "y"] and len(list(md.parameters())) == 4
