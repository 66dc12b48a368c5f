"""ck.nn.functional: the layers' computations as functions, PyTorch's names.

Each is written with cudakit's ops, so autograd differentiates it through
the ops' own rules; where the core has a fused op (``_core`` from the
trainops work: softmax, log_softmax, the softmax-cross-entropy) it is used,
else the composition below it.  Compositions that are slow say so."""
import math
import warnings

from .. import _core

_ndarray = _core.ndarray
_exp = _core.exp
_log = _core.log
_maximum = _core.maximum
_tanh = _core.tanh


def _fused(*names):
    for n in names:
        f = getattr(_core, n, None)
        if f is not None:
            return f
    return None


_softmax_op = _fused("softmax")
_log_softmax_op = _fused("log_softmax")
_xent_op = _fused("softmax_cross_entropy")
_linear_op = _fused("_linear")
_bias_act = _fused("_bias_act")


# The fused ops (trainops) as autograd sees them: a gradient rule of the C
# table when the op has one (found by a probe at first use), else an
# autograd.Function over the op's own backward kernel.  Without a gradient
# to record, the op is called as it is.
_rules = {}


def _has_rule(name, probe):
    r = _rules.get(name)
    if r is None:
        try:
            x = _core.ones((2, 3), dtype=_core.float64)
            x.requires_grad_(True)
            probe(x).sum().backward()
            r = x.grad is not None
        except RuntimeError:
            r = False
        _rules[name] = r
    return r


_functions = {}


def _function(name):
    f = _functions.get(name)
    if f is None:
        f = _functions[name] = _make_function(name)
    return f


def _make_function(name):
    from ..autograd import Function

    if name == "gelu":
        class Gelu(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return _bias_act(x.copy(), None, "gelu")

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return _core._bias_act_backward(g, x, "gelu")
        return Gelu

    if name == "softmax":
        class Softmax(Function):
            @staticmethod
            def forward(ctx, x, axis, log):
                y = (_log_softmax_op if log else _softmax_op)(x, axis=axis)
                ctx.save_for_backward(y)
                ctx.axis, ctx.log = axis, log
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return _core._softmax_backward(g, y, ctx.axis, log=ctx.log), None, None
        return Softmax

    class SoftmaxCrossEntropy(Function):
        @staticmethod
        def forward(ctx, logits, target, ignore_index, label_smoothing, reduction):
            loss, lse, total = _xent_op(logits, target, ignore_index=ignore_index, label_smoothing=label_smoothing,
                                        reduction=reduction)
            ctx.save_for_backward(logits, target, lse, total)
            ctx.args = (ignore_index, label_smoothing, reduction)
            return loss

        @staticmethod
        def backward(ctx, g):
            logits, target, lse, total = ctx.saved_tensors
            ignore_index, label_smoothing, reduction = ctx.args
            gx = _core.softmax_cross_entropy_backward(g, logits, target, lse, total, ignore_index=ignore_index,
                                                      label_smoothing=label_smoothing, reduction=reduction)
            return gx, None, None, None, None
    return SoftmaxCrossEntropy


def _recording(x):
    return x.requires_grad and _core.is_grad_enabled()


def _softmax_fused(x, axis, log):
    op = _log_softmax_op if log else _softmax_op
    if not _recording(x) or _has_rule("log_softmax" if log else "softmax", lambda t: op(t, axis=1)):
        return op(x, axis=axis)
    return _function("softmax").apply(x, axis, log)


def _xent_fused(x, t, ignore_index, label_smoothing, reduction):
    if not _recording(x) or _has_rule("softmax_cross_entropy", _xent_probe):
        return _xent_op(x, t, ignore_index=ignore_index, label_smoothing=label_smoothing, reduction=reduction)[0]
    return _function("xent").apply(x, t, ignore_index, label_smoothing, reduction)


def _xent_probe(t):
    return _xent_op(t, _core.zeros((2,), dtype=_core.int64), reduction="sum")[0]


def _no_grad():
    import cudakit
    return cudakit.no_grad()


# ---------------------------------------------------------------- linear, activations

def linear(input, weight, bias=None):
    """input @ weight.T + bias (weight: (out_features, in_features)): one
    fused op (the bias in the product's epilogue on a GPU, one autograd
    node whose backward gives the bias's gradient with the weight's) for
    float operands; the composition for the others."""
    if _linear_op is not None:
        try:
            return _linear_op(input, weight, bias)
        except TypeError:
            pass
    y = input @ weight.T
    return y if bias is None else y + bias


def _linear_relu(input, weight, bias=None):
    """relu(linear(input, weight, bias)) in one fused op where it can be
    (ck.nn.Sequential's Linear followed by ReLU)."""
    if _linear_op is not None:
        try:
            return _linear_op(input, weight, bias, "relu")
        except TypeError:
            pass
    return relu(linear(input, weight, bias))


def relu(input, inplace=False):
    """max(input, 0), as torch.nn.functional.relu (inplace is accepted; the result is a new array)."""
    return _maximum(input, 0)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where positive, else input * negative_slope (inplace is accepted; the result is a new array)."""
    return _maximum(input, input * negative_slope) if negative_slope <= 1 else _core.minimum(input, input * negative_slope)


def sigmoid(input):
    """1 / (1 + exp(-input)), computed through tanh (no overflow either way)."""
    # the tanh form is exact and has no overflow in either direction
    return _tanh(input * 0.5) * 0.5 + 0.5


def tanh(input):
    """tanh(input)."""
    return _tanh(input)


def silu(input):
    """input * sigmoid(input)."""
    return input * sigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * input)) / beta, computed stably (threshold is accepted: the stable form needs
    no switch to the identity).
    """
    x = input * beta if beta != 1 else input
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|); |x| = max(x, -x)
    y = _maximum(x, 0) + _core.log1p(_exp(-_maximum(x, -x)))
    return y if beta == 1 else y * (1.0 / beta)


def gelu(input, approximate="none"):
    """input * Phi(input), Phi the standard normal's distribution function; approximate='tanh' its
    tanh approximation.
    """
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return input * 0.5 * (_tanh((input + input * input * input * 0.044715) * c) + 1.0)
    if approximate != "none":
        raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
    erf = getattr(_core, "erf", None)
    if erf is not None:
        return input * 0.5 * (erf(input * (1.0 / math.sqrt(2.0))) + 1.0)
    if _bias_act is None:
        raise NotImplementedError("gelu(approximate='none') needs ck.erf or the fused epilogue, which this build "
                                  "lacks; use approximate='tanh'")
    # the training ops' epilogue computes the erf form; its backward kernel
    # is wrapped as an autograd.Function (fused: one pass each way)
    if not _recording(input):
        return _bias_act(input.copy() if input.dtype.kind == "f" else input.astype(_core.float32), None, "gelu")
    return _function("gelu").apply(input)


def _dim(dim, ndim, fname):
    if dim is None:
        # PyTorch's legacy choice for an implicit dim
        warnings.warn(f"Implicit dimension choice for {fname} has been deprecated. Change the call to include dim=X "
                      "as an argument.", stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return dim


def softmax(input, dim=None, dtype=None):
    """exp(input) / sum(exp(input)) along dim (in dtype when given); dim None is PyTorch's deprecated
    implicit choice, with its warning.
    """
    dim = _dim(dim, input.ndim, "softmax")
    if dtype is not None:
        input = input.astype(dtype)
    if _softmax_op is not None:
        return _softmax_fused(input, dim, False)
    # the shift by the row's maximum changes nothing but the overflow, so
    # it is taken from a detached copy: no gradient goes through it
    e = _exp(input - input.detach().max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(input, dim=None, dtype=None):
    """input - logsumexp(input) along dim (in dtype when given); dim None as softmax's."""
    dim = _dim(dim, input.ndim, "log_softmax")
    if dtype is not None:
        input = input.astype(dtype)
    if _log_softmax_op is not None:
        return _softmax_fused(input, dim, True)
    s = input - input.detach().max(axis=dim, keepdims=True)
    return s - _log(_exp(s).sum(axis=dim, keepdims=True))


def dropout(input, p=0.5, training=True, inplace=False):
    """input with each element zeroed with probability p and the rest scaled by 1 / (1 - p) when
    training, else input itself (inplace is accepted; the result is a new array).
    """
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    from .. import random as _random
    dt = input.dtype if input.dtype in (_core.float32, _core.float64) else _core.float32
    keep = _random._global.random(tuple(input.shape), dtype=dt, device=input.device) >= p
    return input * (keep.astype(input.dtype) * (1.0 / (1.0 - p)))


# ---------------------------------------------------------------- shapes

def flatten(input, start_dim=0, end_dim=-1):
    """A view of input with the axes start_dim to end_dim as one."""
    nd = input.ndim
    s = start_dim % nd if nd else 0
    e = end_dim % nd if nd else 0
    shape = tuple(input.shape)
    n = 1
    for v in shape[s:e + 1]:
        n *= v
    return input.reshape(shape[:s] + (n,) + shape[e + 1:])


def one_hot(tensor, num_classes=-1):
    """int64 one-hot rows of the integer tensor (num_classes -1: its maximum + 1)."""
    if tensor.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes < 0:
        num_classes = int(tensor.max()) + 1
    classes = _core.arange(num_classes, device=tensor.device)
    return (tensor[..., None] == classes).astype(_core.int64)


def embedding(input, weight, padding_idx=None, max_norm=None):
    """weight[input]: the rows of weight at the indices (max_norm is not supported)."""
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) is not supported")
    return weight[input]


# ---------------------------------------------------------------- normalisation

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """input normalised over its last axes (normalized_shape) to mean 0 and variance 1, then * weight
    + bias when given.
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    axes = tuple(range(input.ndim - k, input.ndim))
    mu = input.mean(axis=axes, keepdims=True)
    d = input - mu
    var = (d * d).mean(axis=axes, keepdims=True)
    y = d / _core.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise over every axis but the channel axis (1); in training the
    batch's statistics are used and the running ones updated in place."""
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        n = 1
        for a in axes:
            n *= input.shape[a]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
        mu = input.mean(axis=axes, keepdims=True)
        d = input - mu
        var = (d * d).mean(axis=axes, keepdims=True)
        if running_mean is not None:
            with _no_grad():
                m = momentum
                running_mean[...] = running_mean * (1 - m) + mu.detach().reshape(running_mean.shape) * m
                running_var[...] = running_var * (1 - m) + var.detach().reshape(running_var.shape) * (m * n / (n - 1))
        y = d / _core.sqrt(var + eps)
    else:
        y = (input - running_mean.reshape(shape)) / _core.sqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


# ---------------------------------------------------------------- convolution, pooling

def _pair(v, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair, got {v!r}")
    return v


def _pad2d(x, ph, pw, value=0.0):
    """The last two axes padded by (ph, pw) on each side with value (pad's
    gradient is the interior)."""
    if ph == 0 and pw == 0:
        return x
    widths = ((0, 0),) * (x.ndim - 2) + ((ph, ph), (pw, pw))
    return _core.pad(x, widths, mode="constant", constant_values=value)


def _out_size(n, k, s, p, d, name):
    out = (n + 2 * p - d * (k - 1) - 1) // s + 1
    if out <= 0:
        raise RuntimeError(f"{name}: the output would be empty (input size {n}, kernel {k}, stride {s}, padding {p})")
    return out


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, (N, C, H, W) * (O, C, kh, kw).

    Written as a sum over the kernel's kh*kw taps of (strided slice of the
    input) @ (the tap's (C, O) weights), after ``pad``: every step is an op
    autograd differentiates.  It is
    slow next to an implicit-GEMM or cuDNN convolution (kh*kw products and
    additions, each a launch): fine for small images, not for ImageNet."""
    if groups != 1:
        raise NotImplementedError("conv2d with groups != 1 is not supported")
    unbatched = input.ndim == 3
    if unbatched:
        input = input.reshape((1,) + tuple(input.shape))
    if input.ndim != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}")
    o, c, kh, kw = weight.shape
    if input.shape[1] != c:
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected input{list(input.shape)} to have {c} "
                           f"channels, but got {input.shape[1]} channels instead")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    if padding == "valid":
        ph = pw = 0
    elif padding == "same":
        if (sh, sw) != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
        th, tw = dh * (kh - 1), dw * (kw - 1)
        if th % 2 or tw % 2:
            raise NotImplementedError("padding='same' with an even total padding is not supported")
        ph, pw = th // 2, tw // 2
    else:
        ph, pw = _pair(padding, "padding")
    n, _, h, w = input.shape
    ho = _out_size(h, kh, sh, ph, dh, "conv2d")
    wo = _out_size(w, kw, sw, pw, dw, "conv2d")
    x = _pad2d(input, ph, pw)
    xt = x.transpose((0, 2, 3, 1))        # (N, H, W, C): the channel axis meets the weights
    wt = weight.transpose((2, 3, 1, 0))   # (kh, kw, C, O)
    out = None
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            tap = xt[:, r0:r0 + sh * (ho - 1) + 1:sh, c0:c0 + sw * (wo - 1) + 1:sw, :]
            term = tap @ wt[i, j]
            out = term if out is None else out + term
    if bias is not None:
        out = out + bias
    out = out.transpose((0, 3, 1, 2))
    return out.reshape(tuple(out.shape[1:])) if unbatched else out


def _pool_taps(input, kernel_size, stride, padding, dilation, pad_value, name):
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride if stride is not None and stride != [] else (kh, kw), "stride")
    ph, pw = _pair(padding, "padding")
    dh, dw = _pair(dilation, "dilation")
    if ph > kh // 2 or pw > kw // 2:
        raise RuntimeError(f"{name}: pad should be at most half of effective kernel size")
    h, w = input.shape[-2], input.shape[-1]
    ho = _out_size(h, kh, sh, ph, dh, name)
    wo = _out_size(w, kw, sw, pw, dw, name)
    x = input
    if ph or pw:
        x = _pad2d(x, ph, pw, pad_value)
    taps = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            taps.append(x[..., r0:r0 + sh * (ho - 1) + 1:sh, c0:c0 + sw * (wo - 1) + 1:sw])
    return taps, kh * kw


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of the kernel's taps, pairwise (``maximum``'s gradient
    goes to the larger, as PyTorch's to the first maximum up to ties):
    kh*kw - 1 launches."""
    if ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d: ceil_mode and return_indices are not supported")
    taps, _ = _pool_taps(input, kernel_size, stride, padding, dilation, -math.inf, "max_pool2d")
    out = taps[0]
    for t in taps[1:]:
        out = _maximum(out, t)
    return out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    """The mean over each kernel_size window of the last two axes (stride: kernel_size by default),
    after zero padding (ceil_mode is not supported).
    """
    if ceil_mode:
        raise NotImplementedError("avg_pool2d: ceil_mode is not supported")
    if padding and not count_include_pad and divisor_override is None:
        raise NotImplementedError("avg_pool2d: count_include_pad=False with padding is not supported")
    taps, k = _pool_taps(input, kernel_size, stride, padding, 1, 0, "avg_pool2d")
    out = taps[0]
    for t in taps[1:]:
        out = out + t
    return out * (1.0 / (divisor_override or k))


# ---------------------------------------------------------------- losses

def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, reduction="mean"):
    """(input - target) ** 2, reduced ('mean', 'sum' or 'none')."""
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction="mean"):
    """|input - target|, reduced ('mean', 'sum' or 'none')."""
    d = input - target
    return _reduce(_maximum(d, -d), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """The binary cross-entropy of sigmoid(input) against target, computed from the logits stably
    (weight scales each element, pos_weight the positive term), reduced.
    """
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({list(target.shape)}) must be the same as input size ({list(input.shape)})")
    sp = softplus(-input)          # -log(sigmoid(x))
    if pos_weight is None:
        loss = (1 - target) * input + sp
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(target * log(input) + (1 - target) * log(1 - input)), the logs clamped to -100 as PyTorch's
    (weight scales each element), reduced.
    """
    # PyTorch clamps the log to -100
    lo = _maximum(_log(input), -100.0)
    l1 = _maximum(_log(1 - input), -100.0)
    loss = -(target * lo + (1 - target) * l1)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _classes_last(input, target):
    """(N, C, d1, ...) logits and (N, d1, ...) targets as (M, C) and (M,)."""
    if input.ndim == 1:
        return input.reshape((1, input.shape[0])), target.reshape((1,) + tuple(target.shape)), ()
    if input.ndim == 2:
        return input, target, None
    c = input.shape[1]
    x = _core.moveaxis(input, 1, -1) if hasattr(_core, "moveaxis") else input.transpose((0,) + tuple(range(2, input.ndim)) + (1,))
    rest = tuple(input.shape[:1]) + tuple(input.shape[2:])
    x = x.reshape((-1, c))
    if target.dtype.kind in "iu":
        t = target.reshape((-1,))
    else:
        t = _core.moveaxis(target, 1, -1).reshape((-1, c))
    return x, t, rest


def _unflatten(loss, rest):
    if rest is None:
        return loss
    return loss.reshape(rest)


_aranges = {}


def _classes(c, device):
    key = (c, str(device))
    a = _aranges.get(key)
    if a is None:
        a = _aranges[key] = _core.arange(c, device=device)
    return a


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """The negative log-likelihood of class-index targets, given log-probabilities.

    The pick of each row's target is a product with a one-hot mask (a
    comparison with arange(C)): it needs only multiply and sum's gradients."""
    x, t, rest = _classes_last(input, target)
    return _nll_2d(x, t, weight, ignore_index, reduction, rest)


def _nll_2d(logp, t, weight, ignore_index, reduction, rest, smoothing=0.0):
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected a target of an integer dtype (class indices), got {t.dtype}")
    n, c = logp.shape
    if tuple(t.shape) != (n,):
        raise ValueError(f"Expected target of shape ({n},), got {tuple(t.shape)}")
    onehot = (t[:, None] == _classes(c, logp.device)).astype(logp.dtype)
    w_rows = None
    if weight is not None:
        onehot_w = onehot * weight
        w_rows = onehot_w.sum(axis=1)
        picked = -(logp * onehot_w).sum(axis=1)
    else:
        picked = -(logp * onehot).sum(axis=1)
    if smoothing:
        smooth = -(logp * weight).sum(axis=1) if weight is not None else -logp.sum(axis=1)
        picked = picked * (1.0 - smoothing) + smooth * (smoothing / c)
    valid = None
    if ignore_index >= 0:   # a negative one (PyTorch's -100) matches no class index
        valid = (t != ignore_index).astype(logp.dtype)
        picked = picked * valid
        if w_rows is not None:
            w_rows = w_rows * valid
    if reduction == "mean":
        if w_rows is not None:
            return picked.sum() / w_rows.sum()
        if valid is not None:
            return picked.sum() / valid.sum()
        return picked.mean()
    return _unflatten(_reduce(picked, reduction), rest)


_warned_probabilities = False


def _capturing(x):
    """Whether a graph is being captured on x's device (by this thread)."""
    return bool(_core._graph_capturing(x.device))


def _check_logits(x):
    """Warn once when the rows given as logits already look like
    probabilities: non-negative and summing to 1, as a model ending in
    Softmax gives them.  Done on a loss's first call only (it reads the
    device)."""
    global _warned_probabilities
    if _warned_probabilities or x.size == 0 or x.dtype.kind != "f":
        return
    with _no_grad():
        xd = x.detach()
        rows = xd.sum(axis=-1)
        looks = bool(xd.min() >= 0) and bool((abs(rows - 1) <= 1e-3).all())
    if looks:
        _warned_probabilities = True
        warnings.warn(
            "CrossEntropyLoss received rows that are already probabilities (non-negative, summing to 1): it "
            "applies log_softmax itself and expects logits, so a softmax before it squashes the gradients and "
            "slows training. Remove the final Softmax from the model (use softmax only to read probabilities "
            "at inference), or use NLLLoss after LogSoftmax.", UserWarning, stacklevel=4)


def _check_targets(input, target, ignore_index):
    """Class indices out of [0, C) would give a loss of 0 through the one-hot
    pick: a loss checks its first batch's (it reads the device)."""
    if target.dtype.kind not in "iu" or target.size == 0 or input.ndim < 1:
        return
    c = input.shape[1] if input.ndim >= 2 else input.shape[0]
    t = target.detach()
    bad = (t < 0) | (t >= c)
    if ignore_index is not None:
        bad = bad & (t != ignore_index)
    if bool(bad.any()):
        raise IndexError(f"Target {int(_first_bad(t, bad))} is out of bounds (the input has {c} classes).")


def _first_bad(t, mask):
    return _core.asnumpy(t)[_core.asnumpy(mask)].ravel()[0]


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of logits (N, C) or (N, C, d1, ...) with class-index or
    class-probability targets, PyTorch's semantics (label_smoothing, weight,
    ignore_index, reduction)."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if _xent_op is not None and weight is None and input.dtype.kind == "f" and (
            target.dtype.kind in "iu" or target.dtype == input.dtype):
        return _xent_fused(input, target, ignore_index, label_smoothing, reduction)
    x, t, rest = _classes_last(input, target)
    logp = log_softmax(x, 1)
    if t.dtype.kind in "iu":
        return _nll_2d(logp, t, weight, ignore_index, reduction, rest, label_smoothing)
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"Expected target of shape {tuple(x.shape)} (class probabilities), got {tuple(t.shape)}")
    c = x.shape[1]
    if label_smoothing:
        t = t * (1.0 - label_smoothing) + label_smoothing / c
    prod = logp * t
    if weight is not None:
        prod = prod * weight
    loss = -prod.sum(axis=1)
    if reduction == "mean":
        return loss.mean()
    return _unflatten(_reduce(loss, reduction), rest)
