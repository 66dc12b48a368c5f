"""ck.nn.init: in-place initialisations with PyTorch's names and formulas.

Draws come from cudakit.random's global generator (``ck.random.seed(n)``
makes them repeatable), on the tensor's own device."""
import math

from .. import _core


def _no_grad():
    import cudakit
    return cudakit.no_grad()


def _uniform01(tensor):
    from .. import random as _random
    dt = tensor.dtype if tensor.dtype in (_core.float32, _core.float64) else _core.float64
    return _random._global.random(tuple(tensor.shape), dtype=dt, device=tensor.device)


def _normal01(tensor):
    from .. import random as _random
    dt = tensor.dtype if tensor.dtype in (_core.float32, _core.float64) else _core.float64
    return _random._global.standard_normal(tuple(tensor.shape), dtype=dt, device=tensor.device)


def calculate_gain(nonlinearity, param=None):
    """PyTorch's recommended gain for a nonlinearity ('relu': sqrt(2), 'tanh': 5/3, 'leaky_relu':
    sqrt(2 / (1 + param ** 2)), ...).
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill tensor in place from U(a, b); returns it."""
    with _no_grad():
        tensor[...] = _uniform01(tensor) * (b - a) + a
    return tensor


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill tensor in place from N(mean, std ** 2); returns it."""
    with _no_grad():
        tensor[...] = _normal01(tensor) * std + mean
    return tensor


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal draws redrawn until they fall in [a, b] (on the host: once per
    initialisation)."""
    import numpy as np
    from .. import random as _random
    n = tensor.size
    out = np.empty(0)
    while out.size < n:
        z = _core.asnumpy(_random._global.standard_normal((max(2 * n, 16),), dtype=_core.float64, device="cpu"))
        z = z * std + mean
        out = np.concatenate([out, z[(z >= a) & (z <= b)]])
    with _no_grad():
        tensor[...] = _core.asarray(out[:n].reshape(tuple(tensor.shape)).astype(tensor.dtype.name), device=tensor.device)
    return tensor


def constant_(tensor, val):
    """Fill tensor in place with val; returns it."""
    with _no_grad():
        tensor[...] = val
    return tensor


def zeros_(tensor):
    """Fill tensor in place with zeros; returns it."""
    return constant_(tensor, 0)


def ones_(tensor):
    """Fill tensor in place with ones; returns it."""
    return constant_(tensor, 1)


def eye_(tensor):
    """Fill the 2-d tensor in place with the identity matrix; returns it."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _no_grad():
        tensor[...] = _core.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype, device=tensor.device)
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot's uniform initialisation in place: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot's normal initialisation in place: N(0, std ** 2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He's uniform initialisation in place: U(-b, b), b = gain * sqrt(3 / fan), gain from
    calculate_gain(nonlinearity, a), fan by mode.
    """
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He's normal initialisation in place: N(0, std ** 2), std = gain / sqrt(fan), gain from
    calculate_gain(nonlinearity, a), fan by mode.
    """
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


def orthogonal_(tensor, gain=1, generator=None):
    """Fill tensor in place with a (semi-)orthogonal matrix (the trailing axes flattened) times gain,
    from the QR of a normal draw.
    """
    import numpy as np
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.size // rows
    flat = _core.asnumpy(_normal01(tensor)).reshape(rows, cols).astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with _no_grad():
        tensor[...] = _core.asarray((gain * q).reshape(tuple(tensor.shape)).astype(tensor.dtype.name), device=tensor.device)
    return tensor
