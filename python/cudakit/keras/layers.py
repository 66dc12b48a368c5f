"""Keras layers over ck.nn: Dense (its input size found at the first call),
Flatten, Dropout, Activation, Input.  Each is a ck.nn.Module, so a Keras
model's parameters are a Module's parameters."""
import math

from .. import _core
from ..nn import functional as F
from ..nn import init as _init
from ..nn.module import Module
from ..nn.parameter import Parameter


def _softmax_last(x):
    return F.softmax(x, -1)


_ACTIVATIONS = {
    None: None,
    "linear": None,
    "relu": F.relu,
    "sigmoid": F.sigmoid,
    "tanh": _core.tanh,
    "softmax": _softmax_last,
    "gelu": F.gelu,
    "silu": F.silu,
    "swish": F.silu,
    "softplus": F.softplus,
    "elu": None,  # filled below
}


def _elu(x):
    return _core.where(x > 0, x, _core.expm1(_core.minimum(x, 0)))


_ACTIVATIONS["elu"] = _elu


def get_activation(activation):
    if callable(activation):
        return activation
    if activation not in _ACTIVATIONS:
        raise ValueError(f"Unknown activation function: {activation!r}. Known: "
                         + ", ".join(repr(k) for k in _ACTIVATIONS if k))
    return _ACTIVATIONS[activation]


_glorot = "glorot_uniform"


def _initializer(name, shape, device, dtype):
    t = _core.empty(shape, dtype=dtype, device=device)
    if callable(name):
        v = name(shape, dtype=dtype)
        return Parameter(_core.asarray(v, device=device).astype(dtype))
    if name == "glorot_uniform":
        fan_in, fan_out = shape[0], shape[-1]
        lim = math.sqrt(6.0 / (fan_in + fan_out))
        _init.uniform_(t, -lim, lim)
    elif name == "glorot_normal":
        fan_in, fan_out = shape[0], shape[-1]
        _init.normal_(t, 0.0, math.sqrt(2.0 / (fan_in + fan_out)))
    elif name == "he_normal":
        _init.normal_(t, 0.0, math.sqrt(2.0 / shape[0]))
    elif name == "he_uniform":
        lim = math.sqrt(6.0 / shape[0])
        _init.uniform_(t, -lim, lim)
    elif name == "zeros":
        _init.zeros_(t)
    elif name == "ones":
        _init.ones_(t)
    else:
        raise ValueError(f"Unknown initializer: {name!r}")
    return Parameter(t)


class _Weights:
    """Keras's weight accessors, for layers and models alike."""

    @property
    def weights(self):
        return list(self.parameters())

    trainable_weights = weights

    def get_weights(self):
        """The weights as NumPy arrays (copies), in the order of parameters()."""
        return [_core.asnumpy(p.detach()) for p in self.parameters()]

    def set_weights(self, weights):
        """Copy a list of arrays (same shapes, in the order of get_weights) into the weights."""
        ps = list(self.parameters())
        if len(ps) != len(weights):
            raise ValueError(f"{self.name} expects {len(ps)} weights, got {len(weights)}")
        import cudakit
        with cudakit.no_grad():
            for p, w in zip(ps, weights):
                if tuple(w.shape) != tuple(p.shape):
                    raise ValueError(f"{self.name}: weight shape {tuple(p.shape)} is not compatible with provided "
                                     f"weight shape {tuple(w.shape)}")
                p[...] = _core.asarray(w, device=p.device)

    def count_params(self):
        """The number of weight elements."""
        return sum(p.size for p in self.parameters())


class Layer(_Weights, Module):
    """A Keras layer: ``build(input_shape)`` at the first call, then ``call``."""

    def __init__(self, name=None, **kwargs):
        super().__init__()
        self.__dict__["name"] = name or _unique_name(type(self).__name__.lower())
        self.__dict__["built"] = False
        self.__dict__["_input_shape_arg"] = kwargs.pop("input_shape", None) or (
            (kwargs.pop("input_dim"),) if "input_dim" in kwargs else None)
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected keyword arguments {sorted(kwargs)}")

    def build(self, input_shape):
        self.__dict__["built"] = True

    def call(self, x, training=None):
        raise NotImplementedError

    def forward(self, x, training=None):
        if not self.built:
            self.build(tuple(x.shape))
            self.__dict__["_device"] = x.device
        return self.call(x, training)

    def compute_output_shape(self, input_shape):
        return input_shape


_counts = {}


def _unique_name(base):
    n = _counts.get(base, 0)
    _counts[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


class Dense(Layer):
    """y = activation(x @ kernel + bias), kernel (in, units) Glorot-uniform, bias zeros (Keras's defaults)."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=_glorot, bias_initializer="zeros",
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. Received: units={units}")
        self.units = units
        self.activation_name = activation if isinstance(activation, str) or activation is None else getattr(
            activation, "__name__", "custom")
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        if self._input_shape_arg is not None:
            self.build((None,) + tuple(self._input_shape_arg))

    def build(self, input_shape, device=None):
        if len(input_shape) < 1:
            raise ValueError("Dense needs an input of at least 1 dimension")
        n_in = input_shape[-1]
        device = device or _core.get_default_device()
        dt = _core.float32
        self.kernel = _initializer(self.kernel_initializer, (n_in, self.units), device, dt)
        self.bias = _initializer(self.bias_initializer, (self.units,), device, dt) if self.use_bias else None
        self.__dict__["built"] = True

    def forward(self, x, training=None):
        if not self.built:
            self.build(tuple(x.shape), x.device)
        y = x @ self.kernel
        if self.bias is not None:
            y = y + self.bias
        act = self.activation
        return y if act is None else act(y)

    def logits(self, x):
        """The layer's output before its activation (the loss's input when
        the activation is a softmax)."""
        if not self.built:
            self.build(tuple(x.shape), x.device)
        y = x @ self.kernel
        return y if self.bias is None else y + self.bias

    call = forward

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def extra_repr(self):
        return f"units={self.units}, activation={self.activation_name!r}"


class Flatten(Layer):
    def forward(self, x, training=None):
        return x.reshape((x.shape[0], -1)) if x.ndim != 2 else x

    call = forward

    def compute_output_shape(self, input_shape):
        n = 1
        for s in input_shape[1:]:
            n *= s
        return (input_shape[0], n)


class Dropout(Layer):
    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate = rate

    def forward(self, x, training=None):
        if training is None:
            training = self.training
        return F.dropout(x, self.rate, bool(training))

    call = forward

    def extra_repr(self):
        return f"rate={self.rate}"


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation_name = activation if isinstance(activation, str) else "custom"
        self.activation = get_activation(activation)

    def forward(self, x, training=None):
        return x if self.activation is None else self.activation(x)

    call = forward


class ReLU(Activation):
    def __init__(self, **kwargs):
        super().__init__("relu", **kwargs)


class Softmax(Activation):
    def __init__(self, axis=-1, **kwargs):
        if axis != -1:
            raise NotImplementedError("keras.layers.Softmax: only axis=-1 is supported")
        super().__init__("softmax", **kwargs)


class InputLayer(Layer):
    """``Input(shape=(784,))``: states the input's shape, so layers build at once."""

    def __init__(self, shape=None, batch_size=None, name=None, **kwargs):
        kwargs.pop("input_shape", None)
        super().__init__(name=name, **kwargs)
        self.input_shape = (batch_size,) + tuple(shape or ())

    def forward(self, x, training=None):
        return x

    call = forward


def Input(shape=None, batch_size=None, name=None, dtype=None, **kwargs):
    return InputLayer(shape=shape, batch_size=batch_size, name=name)
