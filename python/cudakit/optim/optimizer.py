"""ck.optim's base class and its optimizers, with PyTorch's names, defaults
and update formulas.

A step runs under no_grad.  Where the core has a multi-tensor step
(``_core._adam_step``, ``_core._sgd_step``: every parameter of a group in
one launch on a GPU) the group's lists go to it in one call; otherwise each
parameter is updated by a few in-place ops (``out=``), the composition
below."""
import math

from .. import _core

_mul = _core.multiply
_add = _core.add
_sub = _core.subtract
_div = _core.divide
_sqrt = _core.sqrt

_required = object()


def _no_grad():
    import cudakit
    return cudakit.no_grad()


class _ParamState(dict):
    """optimizer.state[p]: arrays are not hashable, so the state is kept by
    the parameter's id, with the parameter alongside to keep it alive."""

    def __getitem__(self, p):
        v = dict.get(self, id(p))
        if v is None:
            v = {}
            dict.__setitem__(self, id(p), (p, v))
            return v
        return v[1]

    def __setitem__(self, p, value):
        dict.__setitem__(self, id(p), (p, value))

    def __contains__(self, p):
        return dict.__contains__(self, id(p))

    def get(self, p, default=None):
        v = dict.get(self, id(p))
        return default if v is None else v[1]

    def items(self):
        return [(p, s) for p, s in dict.values(self)]

    def values(self):
        return [s for _, s in dict.values(self)]

    def keys(self):
        return [p for p, _ in dict.values(self)]

    def __iter__(self):
        return iter(self.keys())


# PyTorch's global step pre-hooks (torch.optim.optimizer.register_optimizer_step_pre_hook):
# hook(optimizer, args, kwargs) before every step of every optimizer;
# cudakit.nn.parallel.DistributedDataParallel all-reduces its gradients there.
_global_step_pre_hooks = {}


class _RemovableHandle:
    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        self._hooks.pop(self._key, None)


def register_optimizer_step_pre_hook(hook):
    """Call hook(optimizer, args, kwargs) before every optimizer's step;
    returns a handle whose remove() takes it away."""
    key = object()
    _global_step_pre_hooks[key] = hook
    return _RemovableHandle(_global_step_pre_hooks, key)


class Optimizer:
    """Base class: ``param_groups`` (a list of dicts, each with 'params' and
    the hyper-parameters), ``state`` (per parameter), ``zero_grad``,
    ``step``, ``state_dict``/``load_state_dict``, ``add_param_group``."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = _ParamState()
        self.param_groups = []
        if isinstance(params, _core.ndarray):
            raise TypeError("params argument given to the optimizer should be an iterable of arrays or dicts, "
                            "but got " + type(params).__name__)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Add a group of parameters ({'params': [...], and hyper-parameters that override the
        defaults}).
        """
        g = dict(param_group)
        ps = g["params"]
        ps = [ps] if isinstance(ps, _core.ndarray) else list(ps)
        for p in ps:
            if not isinstance(p, _core.ndarray):
                raise TypeError("optimizer can only optimize cudakit arrays, but one of the params is "
                                + type(p).__name__)
            if not p.requires_grad:
                raise ValueError("optimizing a parameter that doesn't require gradients")
        seen = {id(p) for grp in self.param_groups for p in grp["params"]}
        if any(id(p) in seen for p in ps):
            raise ValueError("some parameters appear in more than one parameter group")
        g["params"] = ps
        for k, v in self.defaults.items():
            if v is _required and k not in g:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            g.setdefault(k, v)
        self.param_groups.append(g)

    def zero_grad(self, set_to_none=True):
        """Clear the gradients of the parameters: None (set_to_none), else zeros in place."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                else:
                    gr = p.grad
                    if gr is not None:
                        with _no_grad():
                            gr[...] = 0

    def register_step_pre_hook(self, hook):
        """Call hook(optimizer, args, kwargs) before each of this optimizer's steps."""
        hooks = self.__dict__.setdefault("_step_pre_hooks", {})
        key = object()
        hooks[key] = hook
        return _RemovableHandle(hooks, key)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; closure (re-evaluating the loss) is called
        first with grad mode on, and its loss returned.
        """
        loss = None
        if closure is not None:
            import cudakit
            with cudakit.enable_grad():
                loss = closure()
        if _global_step_pre_hooks or self.__dict__.get("_step_pre_hooks"):
            for h in list(_global_step_pre_hooks.values()) + list(self.__dict__.get("_step_pre_hooks", {}).values()):
                h(self, (), {})
        prev = _core._set_grad_enabled(False)
        try:
            for g in self.param_groups:
                ps, gs = [], []
                for p in g["params"]:
                    gr = p.grad
                    if gr is not None:
                        ps.append(p)
                        gs.append(gr)
                if ps:
                    self._update(g, ps, gs)
        finally:
            _core._set_grad_enabled(prev)
        return loss

    def _update(self, group, params, grads):
        raise NotImplementedError

    # ------------------------------------------------------------ state

    def state_dict(self):
        """{'state': {index: {name: value}}, 'param_groups': [{..., 'params': [index]}]},
        parameters numbered in group order, as PyTorch does."""
        index = {}
        groups = []
        for g in self.param_groups:
            d = {k: v for k, v in g.items() if k != "params" and not k.startswith("_")}
            d["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                d["params"].append(index[id(p)])
            groups.append(d)
        state = {}
        for p, s in self.state.items():
            if id(p) in index:
                state[index[id(p)]] = dict(s)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a state_dict: the groups' hyper-parameters and the per-parameter state (moved to
        the parameters' devices and dtypes).
        """
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        by_index = {}
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            for p, i in zip(mine["params"], theirs["params"]):
                by_index[i] = p
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = tuple(v) if k == "betas" else v
        self.state = _ParamState()
        for i, s in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                continue
            d = {}
            for k, v in s.items():
                if isinstance(v, _core.ndarray) or hasattr(v, "__array__") and not isinstance(v, (int, float)):
                    v = _core.asarray(v, device=p.device)
                    if k != "step" and v.dtype != p.dtype and v.dtype.kind == "f":
                        v = v.astype(p.dtype)
                d[k] = v
            self.state[p] = d

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params" and not k.startswith("_"):
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"


def _zeros_like(p):
    return _core.zeros(tuple(p.shape), dtype=p.dtype, device=p.device)


def _check(cond, msg):
    if not cond:
        raise ValueError(msg)


# ---------------------------------------------------------------- SGD

_sgd_step = getattr(_core, "_sgd_step", None)

class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check(lr >= 0, f"Invalid learning rate: {lr}")
        _check(momentum >= 0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0, f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _update(self, group, params, grads):
        lr, mu, damp = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        if _sgd_step is not None:
            bufs, first = None, False
            if mu:
                states = [self.state[p] for p in params]
                fresh = ["momentum_buffer" not in st for st in states]
                if any(fresh) and not all(fresh):
                    return self._update_each(group, params, grads)
                first = fresh[0]
                if first:
                    for p, st in zip(params, states):
                        st["momentum_buffer"] = _zeros_like(p)
                bufs = [st["momentum_buffer"] for st in states]
            _sgd_step(params, grads, bufs, lr, mu, damp, wd, nesterov, first, maximize)
            return
        self._update_each(group, params, grads)

    def _update_each(self, group, params, grads):
        lr, mu, damp = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p, g in zip(params, grads):
            if maximize:
                g = -g
            if wd:
                g = g + p * wd
            if mu:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = g.copy()
                else:
                    _mul(buf, mu, out=buf)
                    _add(buf, g * (1 - damp) if damp else g, out=buf)
                g = g + buf * mu if nesterov else buf
            _sub(p, g * lr, out=p)


# ---------------------------------------------------------------- Adam, AdamW

_adam_step = getattr(_core, "_adam_step", None)


class Adam(Optimizer):
    """Adam (Kingma & Ba), PyTorch's formula: weight decay added to the
    gradient (L2) for Adam, applied to the parameter (decoupled) for AdamW.

    capturable=True keeps the step count on the parameters' device, as
    PyTorch does: ``state[p]["step"]`` is a 0-d float32 array (one a group,
    shared by its parameters), incremented and read by the multi-tensor
    step itself, so that a step captured in a graph (``ck.cuda.graph``)
    takes the next step's bias corrections at each replay.  Otherwise the
    count is a Python int (no device read for it)."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        _check(lr >= 0, f"Invalid learning rate: {lr}")
        _check(eps >= 0, f"Invalid epsilon value: {eps}")
        _check(0 <= betas[0] < 1, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0 <= betas[1] < 1, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(weight_decay >= 0, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, capturable=bool(capturable)))

    def _group_state(self, group, params):
        """The group's moment lists, made at the first step and cached while
        its parameters stay the same."""
        cache = group.get("_cache")
        key = tuple(id(p) for p in params)
        if cache is not None and cache[0] == key:
            return cache[1]
        ms, vs, vmaxs = [], [], []
        capturable = group.get("capturable", False)
        if capturable:
            # one count on the device for the group (PyTorch keeps one a
            # parameter, all equal): the first one a parameter has already
            step = next((st["step"] for st in (self.state.get(p) for p in params)
                         if st is not None and "step" in st), None)
            if not (isinstance(step, _core.ndarray) and step.ndim == 0 and step.device == params[0].device):
                step = _core.full((), float(step or 0), dtype=_core.float32, device=params[0].device)
        for p in params:
            st = self.state[p]
            if "exp_avg" not in st:
                st["exp_avg"] = _zeros_like(p)
                st["exp_avg_sq"] = _zeros_like(p)
                if group["amsgrad"]:
                    st["max_exp_avg_sq"] = _zeros_like(p)
                if not capturable:
                    st["step"] = 0
            if capturable:
                st["step"] = step
            ms.append(st["exp_avg"])
            vs.append(st["exp_avg_sq"])
            vmaxs.append(st.get("max_exp_avg_sq"))
        states = [self.state[p] for p in params]
        lists = (ms, vs, vmaxs, states)
        group["_cache"] = (key, lists)
        return lists

    def _update(self, group, params, grads):
        ms, vs, vmaxs, states = self._group_state(group, params)
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if group.get("capturable", False):
            return self._update_capturable(group, params, grads, ms, vs, vmaxs, states[0]["step"])
        step = states[0]["step"] + 1
        for st in states:
            st["step"] = step
        if _adam_step is not None and not group["amsgrad"]:
            _adam_step(params, grads, ms, vs, step, lr, b1, b2, eps, wd, self._decoupled, group["maximize"])
            return
        if group["maximize"]:
            grads = [-g for g in grads]
        bc1 = 1 - b1 ** step
        bc2 = 1 - b2 ** step
        step_size = lr / bc1
        inv_sqrt_bc2 = 1 / math.sqrt(bc2)
        for p, g, m, v, vmax in zip(params, grads, ms, vs, vmaxs):
            if wd:
                if self._decoupled:
                    _mul(p, 1 - lr * wd, out=p)
                else:
                    g = g + p * wd
            _mul(m, b1, out=m)
            _add(m, g * (1 - b1), out=m)
            _mul(v, b2, out=v)
            _add(v, g * g * (1 - b2), out=v)
            if vmax is not None:
                _core.maximum(vmax, v, out=vmax)
                v = vmax
            denom = _sqrt(v) * inv_sqrt_bc2 + eps
            _sub(p, m / denom * step_size, out=p)

    def _update_capturable(self, group, params, grads, ms, vs, vmaxs, step):
        """The step count is the 0-d array `step`, on the device: incremented
        there, and the bias corrections computed from it there, so that
        nothing of the step is a host value frozen into a captured graph
        (but the hyper-parameters: lr, as in PyTorch with a float lr)."""
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if _adam_step is not None and not group["amsgrad"]:
            # the kernel counts its blocks on the ticket and raises the count itself (no add of its own)
            ticket = group.get("_ticket")
            if ticket is None or ticket.device != step.device:
                ticket = group["_ticket"] = _core.zeros(1, dtype=_core.uint32, device=step.device)
            _adam_step(params, grads, ms, vs, step, lr, b1, b2, eps, wd, self._decoupled, group["maximize"],
                       increment_step=True, step_ticket=ticket)
            return
        # AMSGrad (or a build without the multi-tensor step): the composition,
        # with the corrections as 0-d arrays
        _add(step, 1, out=step)
        if group["maximize"]:
            grads = [-g for g in grads]
        t = step.astype(_core.float64)          # the corrections in double, as the kernel takes them
        step_size = lr / (1 - _core.power(b1, t))
        inv_sqrt_bc2 = 1 / _sqrt(1 - _core.power(b2, t))
        for p, g, m, v, vmax in zip(params, grads, ms, vs, vmaxs):
            if wd:
                if self._decoupled:
                    _mul(p, 1 - lr * wd, out=p)
                else:
                    g = g + p * wd
            _mul(m, b1, out=m)
            _add(m, g * (1 - b1), out=m)
            _mul(v, b2, out=v)
            _add(v, g * g * (1 - b2), out=v)
            if vmax is not None:
                _core.maximum(vmax, v, out=vmax)
                v = vmax
            denom = _sqrt(v) * inv_sqrt_bc2.astype(v.dtype) + eps
            _sub(p, m / denom * step_size.astype(p.dtype), out=p)

    def load_state_dict(self, state_dict):
        """Restore a state_dict (as Optimizer.load_state_dict)."""
        super().load_state_dict(state_dict)
        for g in self.param_groups:
            g.pop("_cache", None)

    def state_dict(self):
        """The optimizer's state, as Optimizer.state_dict."""
        sd = super().state_dict()
        for g in sd["param_groups"]:
            g.pop("_cache", None)
        return sd


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, capturable=capturable)


# ---------------------------------------------------------------- RMSprop

class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(lr >= 0, f"Invalid learning rate: {lr}")
        _check(eps >= 0, f"Invalid epsilon value: {eps}")
        _check(momentum >= 0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0, f"Invalid weight_decay value: {weight_decay}")
        _check(alpha >= 0, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def _update(self, group, params, grads):
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        wd, mu, centered = group["weight_decay"], group["momentum"], group["centered"]
        for p, g in zip(params, grads):
            if group["maximize"]:
                g = -g
            st = self.state[p]
            if "square_avg" not in st:
                st["step"] = 0
                st["square_avg"] = _zeros_like(p)
                if mu > 0:
                    st["momentum_buffer"] = _zeros_like(p)
                if centered:
                    st["grad_avg"] = _zeros_like(p)
            st["step"] += 1
            if wd:
                g = g + p * wd
            sq = st["square_avg"]
            _mul(sq, alpha, out=sq)
            _add(sq, g * g * (1 - alpha), out=sq)
            if centered:
                ga = st["grad_avg"]
                _mul(ga, alpha, out=ga)
                _add(ga, g * (1 - alpha), out=ga)
                avg = _sqrt(sq - ga * ga) + eps
            else:
                avg = _sqrt(sq) + eps
            if mu > 0:
                buf = st["momentum_buffer"]
                _mul(buf, mu, out=buf)
                _add(buf, g / avg, out=buf)
                _sub(p, buf * lr, out=p)
            else:
                _sub(p, g / avg * lr, out=p)
