"""ck.nn.Module: the base class of layers and models, with PyTorch's names.

Parameters, buffers and submodules are plain instance attributes (reading
``self.weight`` is a dictionary lookup, nothing more); ``__setattr__`` also
records them, in assignment order, in ``_parameters``/``_buffers``/``_modules``.
``__call__`` is ``forward`` with no hooks in between: it is on every step's
path."""
from collections import OrderedDict, namedtuple

from .. import _core
from .parameter import Buffer, Parameter

_ndarray = _core.ndarray

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def _no_grad():
    import cudakit
    return cudakit.no_grad()


class Module:
    """Base class of every layer: subclass it, assign layers and Parameters
    as attributes in ``__init__`` (after ``super().__init__()``), write
    ``forward``."""

    training = True
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent"] = set()
        d["_modules"] = {}

    def forward(self, *args, **kwargs):
        """The module's computation, called by module(*args, **kwargs); a subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ------------------------------------------------------------ attributes

    def _registries(self):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError("cannot assign parameters, buffers or modules before Module.__init__() call")
        return d["_parameters"], d["_buffers"], d["_modules"]

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            params, buffers, modules = self._registries()
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params, buffers, modules = self._registries()
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif isinstance(value, Buffer):
            self.register_buffer(name, value.data, value.persistent)
            return
        else:
            d = self.__dict__
            if name in d.get("_parameters", ()):
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                    "(ck.nn.Parameter or None expected)")
                d["_parameters"][name] = None
            elif name in d.get("_modules", ()):
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(ck.nn.Module or None expected)")
                d["_modules"][name] = None
            elif name in d.get("_buffers", ()):
                if value is not None and not isinstance(value, _ndarray):
                    raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                    "(a cudakit array or None expected)")
                d["_buffers"][name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for reg in ("_parameters", "_buffers", "_modules"):
            self.__dict__.get(reg, {}).pop(name, None)
        self.__dict__.get("_non_persistent", set()).discard(name)
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Add param (a Parameter, or None) as the parameter name."""
        if "." in name or not name:
            raise KeyError(f"parameter name can't contain \".\" or be empty, got {name!r}")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(ck.nn.Parameter or None required)")
        self._registries()[0][name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """Add tensor (an array, or None) as the buffer name; a buffer that is not persistent stays out
        of state_dict.
        """
        if "." in name or not name:
            raise KeyError(f"buffer name can't contain \".\" or be empty, got {name!r}")
        if tensor is not None and not isinstance(tensor, _ndarray):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(a cudakit array or None required)")
        params, buffers, modules = self._registries()
        params.pop(name, None)
        modules.pop(name, None)
        buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name, module):
        """Add module (or None) as the submodule name."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name or not name:
            raise KeyError(f"module name can't contain \".\" or be empty, got {name!r}")
        self._registries()[2][name] = module
        object.__setattr__(self, name, module)

    register_module = add_module

    def get_submodule(self, target):
        """The submodule of a dotted name ("0.fc"; "" is the module itself)."""
        m = self
        if target:
            for part in target.split("."):
                if part not in m._modules:
                    raise AttributeError(f"{type(m).__name__} has no attribute `{part}`")
                m = m._modules[part]
        return m

    def get_parameter(self, target):
        """The parameter of a dotted name ("0.fc.weight")."""
        mod, _, name = target.rpartition(".")
        m = self.get_submodule(mod)
        if name not in m._parameters:
            raise AttributeError(f"{type(m).__name__} has no parameter `{name}`")
        return m._parameters[name]

    # ------------------------------------------------------------ walking

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) of this module and every submodule, each once unless not
        remove_duplicate.
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        """This module and every submodule, each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """(name, module) of the direct submodules."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mprefix, m in mods:
            for name, v in m.__dict__[registry].items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mprefix + ("." if mprefix else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) of the parameters, with the submodules' when recurse."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters, with the submodules' when recurse (what an optimizer takes)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) of the buffers, with the submodules' when recurse."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers, with the submodules' when recurse."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """fn(m) for every submodule m, then for this module; returns the module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ modes

    def train(self, mode=True):
        """Set training mode (True) or evaluation mode (False) here and in every submodule; returns the
        module.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        """train(False): evaluation mode (Dropout passes through, BatchNorm uses its running statistics)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad of every parameter; returns the module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's gradient: None (set_to_none), else zeros in place."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with _no_grad():
                    g[...] = 0

    # ------------------------------------------------------------ devices, dtypes

    def _apply_arrays(self, fn):
        """Replace every parameter and buffer by fn(array) (None: unchanged),
        keeping parameters Parameters and their gradients alongside."""
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                if p is None:
                    continue
                new = fn(p.detach())
                if new is None:
                    continue
                q = Parameter(new, p.requires_grad)
                if p.grad is not None:
                    g = fn(p.grad)
                    q.grad = p.grad if g is None else g
                m.__dict__[name] = q
                m._parameters[name] = q
            for name, b in list(m._buffers.items()):
                if b is None:
                    continue
                new = fn(b)
                if new is not None:
                    m.__dict__[name] = new
                    m._buffers[name] = new
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, or keywords
        ``device=``/``dtype=``; floating parameters and buffers change dtype,
        all move.  Parameters that move are new arrays (a device change is a
        copy), so make the optimizer after ``model.to(device)``, as PyTorch's
        documentation advises."""
        device, dtype = _parse_to(args, kwargs)

        def move(a):
            out = a
            if dtype is not None and _is_floating(a.dtype) and a.dtype != dtype:
                out = out.astype(dtype)
            if device is not None and out.device != device:
                out = out.to_device(device)
            return None if out is a else out
        return self._apply_arrays(move)

    def cuda(self, device=None):
        """to("cuda") (or the GPU device names)."""
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def cpu(self):
        """to("cpu")."""
        return self.to("cpu")

    def type(self, dst_type):
        """to(dtype=dst_type)."""
        return self.to(dtype=dst_type)

    def float(self):
        """to(dtype=float32) for the floating parameters and buffers."""
        return self.to(dtype=_core.float32)

    def double(self):
        """to(dtype=float64) for the floating parameters and buffers."""
        return self.to(dtype=_core.float64)

    def half(self):
        """to(dtype=float16) for the floating parameters and buffers."""
        return self.to(dtype=_core.float16)

    # ------------------------------------------------------------ state

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted
        name (``0.weight``), detached unless keep_vars."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy state_dict's arrays into the parameters and buffers of the
        same names (in place, on their devices and in their dtypes); with
        strict, a missing or unexpected key is a RuntimeError."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        missing, errors = [], []
        expected = set()
        with _no_grad():
            for mprefix, m in self.named_modules():
                pre = mprefix + "." if mprefix else ""
                for reg in ("_parameters", "_buffers"):
                    for name, cur in m.__dict__[reg].items():
                        if cur is None or (reg == "_buffers" and name in m._non_persistent):
                            continue
                        key = pre + name
                        expected.add(key)
                        if key not in state_dict:
                            missing.append(key)
                            continue
                        val = state_dict[key]
                        shape = tuple(getattr(val, "shape", ()))
                        if shape != tuple(cur.shape):
                            errors.append(f"size mismatch for {key}: copying a param with shape {shape} from "
                                          f"checkpoint, the shape in current model is {tuple(cur.shape)}.")
                            continue
                        src = _core.asarray(val, device=cur.device)
                        if assign:
                            new = src.astype(cur.dtype) if src.dtype != cur.dtype else src
                            if reg == "_parameters":
                                new = Parameter(new, cur.requires_grad)
                            m.__dict__[name] = new
                            m.__dict__[reg][name] = new
                        else:
                            cur[...] = src
        unexpected = [k for k in state_dict.keys() if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------ printing

    def extra_repr(self):
        """The text inside the module's repr after its name (a subclass defines it; "" here)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(object.__dir__(self)))


def _is_floating(dt):
    return _core.result_type(dt).kind in "fc"


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _ndarray):
            device, dtype = a.device, a.dtype
        elif _looks_like_device(a):
            device = a
        else:
            dtype = a
    if device is not None and not isinstance(device, _core.Device):
        device = _core.Device(device)
    if dtype is not None:
        dtype = _core.result_type(dtype)
        if dtype.kind not in "fc":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")
    return device, dtype


def _looks_like_device(a):
    if isinstance(a, _core.Device) or isinstance(a, int) and not isinstance(a, bool):
        return True
    if isinstance(a, str):
        return a.split(":")[0] in ("cpu", "cuda", "gpu")
    return hasattr(a, "id") and not hasattr(a, "itemsize")
