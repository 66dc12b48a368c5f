"""Automatic differentiation, with PyTorch's names and semantics.

The engine is C (src/autograd/): arrays carry ``requires_grad``, ``grad``,
``grad_fn``; ops record nodes while grad mode is on and an input requires
a gradient; ``backward()`` walks the graph in C.  This module holds the
Python face: grad-mode context managers, :func:`grad`, :func:`backward` and
:class:`Function` (a node whose backward is Python, for fused ops with a
backward of their own)::

    x = ck.ones((3,), requires_grad=True)
    (x * x).sum().backward()        # x.grad == 2 * x
    with ck.no_grad():
        x -= 0.1 * x.grad           # an update the graph does not see
"""
import functools as _functools

from . import _core

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "grad", "backward",
           "Function", "FunctionCtx"]

is_grad_enabled = _core.is_grad_enabled


class _GradMode:
    """A context manager and decorator that sets grad mode, and restores the
    previous mode on exit."""

    _mode = True

    def __enter__(self):
        self._prev = _core._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, func):
        mode = self._mode

        @_functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = _core._set_grad_enabled(mode)
            try:
                return func(*args, **kwargs)
            finally:
                _core._set_grad_enabled(prev)

        return wrapper

    def clone(self):
        """A new context manager of the same kind and mode."""
        return type(self)()


class no_grad(_GradMode):
    """Ops inside record nothing (optimizer updates, evaluation).  A context
    manager, or a decorator with or without parentheses."""

    _mode = False

    def __new__(cls, orig_func=None):
        if orig_func is not None:
            return _GradMode.__call__(super().__new__(cls), orig_func)
        return super().__new__(cls)


class enable_grad(_GradMode):
    """Ops inside record again (inside a no_grad block)."""

    _mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` as a call turns grad mode off at once; as a
    context manager or decorator it sets it for the block."""

    def __init__(self, mode):
        self._mode = bool(mode)
        self._prev = _core._set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def clone(self):
        """A new context manager of the same kind and mode."""
        return type(self)(self._mode)


class inference_mode(_GradMode):
    """As ``no_grad`` (cudakit has no separate inference tensors)."""

    def __init__(self, mode=True):
        self._mode = not mode


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs (a tuple, one per
    input), without touching any ``.grad``."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not implemented")
    return _core._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                                materialize_grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of tensors (seeded with grad_tensors) into the
    leaves' ``.grad`` (only into those of ``inputs`` when given)."""
    _core._autograd_backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


class FunctionCtx:
    """The ``ctx`` of :class:`Function`: what forward keeps for backward."""

    def __init__(self):
        self._saved = ()
        self._versions = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._non_differentiable = ()

    def save_for_backward(self, *tensors):
        """Keep tensors for backward (read back as ctx.saved_tensors, which checks that none was
        modified in place since).
        """
        # detached views: a saved output would otherwise hold its own node
        # (output -> node -> ctx -> output), a cycle through C that Python's
        # collector cannot see; higher-order gradients, which would need the
        # originals, are not implemented
        self._saved = tuple(t.detach() if isinstance(t, _core.ndarray) else t for t in tensors)
        self._versions = tuple(t._version if isinstance(t, _core.ndarray) else None for t in tensors)

    @property
    def saved_tensors(self):
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if v is not None and t._version != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of {type(self).__name__} is at version {t._version}; expected "
                    f"version {v} instead")
        return self._saved

    def mark_non_differentiable(self, *tensors):
        """Outputs among tensors carry no gradient (they come out detached)."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        """PyTorch's note that forward modified tensors in place; accepted, nothing is done with it."""
        pass

    def set_materialize_grads(self, value):
        """Set ctx.materialize_grads (PyTorch's switch between zeros and None for outputs without a gradient)."""
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # ctx objects print as the node: MyFuncBackward
        cls._ctx_class = type(name + "Backward", (FunctionCtx,), {})


class Function(metaclass=_FunctionMeta):
    """An op with a forward and a backward of your own, as PyTorch's::

        class Exp(ck.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = ck.exp(x)
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        y = Exp.apply(x)

    forward runs with grad mode off; its node sits in the C graph and calls
    backward with one gradient per output, which returns one per forward
    argument (None for those that need none)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The op: forward(ctx, *args) -> outputs, run with grad mode off (a subclass defines it)."""
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The op's backward: backward(ctx, *grad_outputs) -> one gradient per forward argument (None
        for those that need none); a subclass defines it."""
        raise NotImplementedError("a Function subclass must define backward(ctx, ...) to be differentiated")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward(ctx, *args, **kwargs) and, when grad mode is on, record a node whose backward is
        this class's.
        """
        ctx = cls._ctx_class()
        ctx.needs_input_grad = tuple(isinstance(a, _core.ndarray) and a.requires_grad for a in args)
        prev = _core._set_grad_enabled(False)
        try:
            outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _core._set_grad_enabled(prev)
        if not prev:
            return outputs
        nd = ctx._non_differentiable
        r = _core._function_record(cls, ctx, args, outputs)
        if nd:
            # outputs marked non-differentiable carry no gradient
            for o in (r if isinstance(r, tuple) else (r,)):
                if isinstance(o, _core.ndarray) and any(o is t for t in nd):
                    o.detach_()
        return r
