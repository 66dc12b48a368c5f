"""The layers of ck.nn: PyTorch's classes, arguments, initialisations and reprs."""
import math
from collections import OrderedDict

from .. import _core
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_ndarray = _core.ndarray


def _empty(shape, device, dtype):
    return _core.empty(shape, dtype=dtype or _core.float32, device=device)


def _check_positive(name, **vals):
    for k, v in vals.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name}: {k} must be a non-negative integer, got {v!r}")


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        """input itself."""
        return input


class Linear(Module):
    """y = x @ W.T + b; W and b drawn from U(-1/sqrt(in), 1/sqrt(in)), PyTorch's default."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        _check_positive("Linear", in_features=in_features, out_features=out_features)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), device, dtype))
        self.bias = Parameter(_empty((out_features,), device, dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the parameters anew as PyTorch does: weight Kaiming-uniform, bias uniform in
        [-1/sqrt(in_features), 1/sqrt(in_features)].
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        """The Linear layer applied to input, as torch.nn.Linear."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution (cross-correlation) over (N, C, H, W); see
    ck.nn.functional.conv2d for how it is computed and what that costs."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups != 1:
            raise NotImplementedError("Conv2d with groups != 1 is not supported")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d padding_mode={padding_mode!r} is not supported (only 'zeros')")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = F._pair(kernel_size, "kernel_size")
        self.stride = F._pair(stride, "stride")
        self.padding = padding if isinstance(padding, str) else F._pair(padding, "padding")
        self.dilation = F._pair(dilation, "dilation")
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(_empty((out_channels, in_channels) + self.kernel_size, device, dtype))
        self.bias = Parameter(_empty((out_channels,), device, dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """Draw the parameters anew as PyTorch does: weight Kaiming-uniform, bias uniform in
        [-1/sqrt(fan_in), 1/sqrt(fan_in)].
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                b = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -b, b)

    def forward(self, input):
        """The Conv2d layer applied to input, as torch.nn.Conv2d."""
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0, 0), "valid"):
            s += f", padding={self.padding!r}" if isinstance(self.padding, str) else f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.bias is None:
            s += ", bias=False"
        return s


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        """The MaxPool2d layer applied to input, as torch.nn.MaxPool2d."""
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        """The AvgPool2d layer applied to input, as torch.nn.AvgPool2d."""
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        """The Flatten layer applied to input, as torch.nn.Flatten."""
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        """The ReLU layer applied to input, as torch.nn.ReLU."""
        return _core.maximum(input, 0)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        """The LeakyReLU layer applied to input, as torch.nn.LeakyReLU."""
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        """The GELU layer applied to input, as torch.nn.GELU."""
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    def forward(self, input):
        """sigmoid(input) = 1 / (1 + exp(-input))."""
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        """tanh(input)."""
        return _core.tanh(input)


class SiLU(Module):
    def forward(self, input):
        """input * sigmoid(input)."""
        return F.silu(input)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        """The Softplus layer applied to input, as torch.nn.Softplus."""
        return F.softplus(input, self.beta, self.threshold)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """The Softmax layer applied to input, as torch.nn.Softmax."""
        return F.softmax(input, self.dim)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"dim={self.dim}"


class LogSoftmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        """The LogSoftmax layer applied to input, as torch.nn.LogSoftmax."""
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"dim={self.dim}"


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        """The Dropout layer applied to input, as torch.nn.Dropout."""
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"p={self.p}, inplace={self.inplace}"


class _BatchNorm(Module):
    _ndims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dt = dtype or _core.float32
        if affine:
            self.weight = Parameter(_core.ones((num_features,), dtype=dt, device=device))
            self.bias = Parameter(_core.zeros((num_features,), dtype=dt, device=device))
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", _core.zeros((num_features,), dtype=dt, device=device))
            self.register_buffer("running_var", _core.ones((num_features,), dtype=dt, device=device))
            self.register_buffer("num_batches_tracked", _core.zeros((), dtype=_core.int64, device=device))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def reset_running_stats(self):
        """running_mean 0, running_var 1, num_batches_tracked 0 (when the statistics are tracked)."""
        if self.track_running_stats:
            self.running_mean[...] = 0
            self.running_var[...] = 1
            self.num_batches_tracked[...] = 0

    def reset_parameters(self):
        """reset_running_stats, then weight ones and bias zeros (when affine)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        """The _BatchNorm layer applied to input, as torch.nn._BatchNorm."""
        if input.ndim not in self._ndims:
            raise ValueError(f"expected {' or '.join(f'{n}D' for n in self._ndims)} input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"expected {self.num_features} channels (axis 1), got input of shape {tuple(input.shape)}")
        use_batch = self.training or not self.track_running_stats
        momentum = self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked[...] = self.num_batches_tracked + 1
            if momentum is None:    # a cumulative average
                momentum = 1.0 / float(self.num_batches_tracked)
        rm = self.running_mean if not use_batch or self.track_running_stats else None
        rv = self.running_var if not use_batch or self.track_running_stats else None
        return F.batch_norm(input, rm, rv, self.weight, self.bias, use_batch, momentum or 0.0, self.eps)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ndims = (4,)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dt = dtype or _core.float32
        if elementwise_affine:
            self.weight = Parameter(_core.ones(self.normalized_shape, dtype=dt, device=device))
            self.bias = Parameter(_core.zeros(self.normalized_shape, dtype=dt, device=device)) if bias else None
        else:
            self.weight = self.bias = None

    def forward(self, input):
        """The LayerNorm layer applied to input, as torch.nn.LayerNorm."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are not supported")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_empty((num_embeddings, embedding_dim), device, dtype), not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_core.asarray(_weight), not _freeze)

    def reset_parameters(self):
        """Draw the weight anew from N(0, 1) (the padding_idx row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from .module import _no_grad
            with _no_grad():
                self.weight[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """An Embedding whose weight is the 2-d embeddings (no gradient when freeze)."""
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        """The Embedding layer applied to input, as torch.nn.Embedding."""
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


# ---------------------------------------------------------------- containers

class _ModuleSequence(Module):
    """What Sequential and ModuleList share: modules numbered 0, 1, ...,
    kept contiguous through deletions and insertions."""

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def _reset(self, mods):
        for k in list(self._modules):
            self.__dict__.pop(k, None)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return self._of(mods[idx], list(self._modules)[idx])
        return mods[_index(idx, len(mods))]

    def __setitem__(self, idx, module):
        self.add_module(list(self._modules)[_index(idx, len(self._modules))], module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        del mods[idx if isinstance(idx, slice) else _index(idx, len(mods))]
        self._reset(mods)

    def append(self, module):
        """Add module at the end; returns self."""
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        """Add each of modules at the end; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert module before index (the later ones renumbered); returns self."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._reset(mods)
        return self


def _index(idx, n):
    idx = int(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class Sequential(_ModuleSequence):
    """Modules applied in order; indexable, sliceable, appendable."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    @staticmethod
    def _of(mods, names):
        return Sequential(OrderedDict(zip(names, mods)))

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, Module) or name in self.__dict__.get("_modules", ()):
            self._forget_chain()

    def add_module(self, name, module):
        """Add module as the submodule name (as Module.add_module)."""
        super().add_module(name, module)
        self._forget_chain()

    def _reset(self, mods):
        super()._reset(mods)
        self._forget_chain()

    def _forget_chain(self):
        d = self.__dict__
        d.pop("_chain", None)
        d.pop("_steps", None)

    def _layers(self):
        chain = self.__dict__.get("_chain")
        if chain is None:
            chain = self.__dict__["_chain"] = tuple(m for m in self._modules.values() if m is not None)
        return chain

    def _plan(self):
        """The layers as steps (module, relu): a Linear immediately followed
        by a ReLU (the exact classes) is one step, run as one fused op, since
        nobody can see the product between them."""
        steps = self.__dict__.get("_steps")
        if steps is None:
            chain, out, i = self._layers(), [], 0
            while i < len(chain):
                m = chain[i]
                if type(m) is Linear and i + 1 < len(chain) and type(chain[i + 1]) is ReLU:
                    out.append((m, chain[i + 1]))
                    i += 2
                else:
                    out.append((m, None))
                    i += 1
            steps = self.__dict__["_steps"] = tuple(out)
        return steps

    def forward(self, input):
        """input through each module in order."""
        for m, relu in self._plan():
            if relu is None:
                input = m(input)
            elif "forward" in m.__dict__ or "forward" in relu.__dict__:
                # a forward replaced on the instance: run the modules as they are
                input = relu(m(input))
            else:
                input = F._linear_relu(input, m.weight, m.bias)
        return input


class ModuleList(_ModuleSequence):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @staticmethod
    def _of(mods, names):
        return ModuleList(mods)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def forward(self, *args):
        """A ModuleList has no forward (NotImplementedError): iterate over it in your module's forward."""
        raise NotImplementedError("ModuleList has no forward(): iterate over it in your module's forward")


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]
        self.__dict__.pop(key, None)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """The names of the modules."""
        return self._modules.keys()

    def values(self):
        """The modules."""
        return self._modules.values()

    def items(self):
        """(name, module) pairs."""
        return self._modules.items()

    def update(self, modules):
        """Add the (name, module) pairs of a mapping or an iterable of pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self.add_module(k, m)
