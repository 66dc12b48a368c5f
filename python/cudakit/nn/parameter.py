"""ck.nn.Parameter: an array a Module registers as one of its parameters."""
from .. import _core

_ndarray = _core.ndarray


class Parameter(_ndarray):
    """An array that requires a gradient by default and that a Module lists in
    ``parameters()`` when it is one of its attributes.  It shares the memory
    of the array it is made from (``_core._make_subclass``); ops on it return
    plain arrays."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _core.empty((0,), dtype="float32")
        elif not isinstance(data, _ndarray):
            data = _core.asarray(data)
        return _core._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + _ndarray.__repr__(self)

    def __reduce_ex__(self, proto):
        return (Parameter, (_core.asarray(self.detach()), self.requires_grad))

    def __deepcopy__(self, memo):
        p = Parameter(self.detach().copy(), self.requires_grad)
        memo[id(self)] = p
        return p


class Buffer:
    """Marks an array as a buffer when assigned to a Module attribute
    (``self.running_mean = Buffer(x)``), as ``register_buffer`` does."""

    __slots__ = ("data", "persistent")

    def __init__(self, data, persistent=True):
        self.data = data
        self.persistent = persistent
