"""The exception classes NumPy has of its own, for cudakit to raise.

Where NumPy can be imported each one is a subclass of NumPy's class, so
that code written for NumPy (``except np.exceptions.AxisError``) catches
cudakit's; without NumPy, of the builtin classes NumPy's derive from.  This
module imports NumPy, so nothing loads it at ``import cudakit``: the C module
asks for a class the first time it raises one, and ``cudakit.AxisError`` and
kin are made on first access (the module ``__getattr__`` of cudakit and of
cudakit._core).

NumPy's ufunc errors (``UFuncTypeError`` and its private subclasses) and
``_ArrayMemoryError`` build their message from attributes (the ufunc, the
dtypes); cudakit's are raised with the message itself, which is what they
print, and those attributes are None.
"""
try:
    import numpy as _np
except ImportError:  # pragma: no cover - NumPy is a test dependency, not a requirement
    _np = None

from . import _core

if _np is not None:
    try:
        from numpy._core import _exceptions as _npx
    except ImportError:  # NumPy 1.x
        from numpy.core import _exceptions as _npx
    _nx = getattr(_np, "exceptions", _np)   # numpy.exceptions is NumPy >= 1.25
    _AXIS = (_nx.AxisError,)
    _COMPLEX = (_nx.ComplexWarning,)
    _PROMOTION = (getattr(_nx, "DTypePromotionError", TypeError),)
    _UFUNC = (_npx.UFuncTypeError,)
    _NO_LOOP = (_npx._UFuncNoLoopError,)
    _INPUT_CAST = (_npx._UFuncInputCastingError,)
    _OUTPUT_CAST = (_npx._UFuncOutputCastingError,)
    _MEMORY = (_npx._ArrayMemoryError,)
else:
    _AXIS = (ValueError, IndexError)
    _COMPLEX = (RuntimeWarning,)
    _PROMOTION = _UFUNC = (TypeError,)
    _NO_LOOP = _INPUT_CAST = _OUTPUT_CAST = ()
    _MEMORY = (MemoryError,)


class _WithMessage:
    """Raised with its message (NumPy's builds one from attributes)."""

    def __init__(self, *args):
        BaseException.__init__(self, *args)

    __str__ = BaseException.__str__


class AxisError(*_AXIS):
    """An axis argument out of range (a ValueError and an IndexError)."""

    def __init__(self, axis, ndim=None, msg_prefix=None):
        if _np is not None:
            super().__init__(axis, ndim, msg_prefix)
        else:
            super().__init__(axis if ndim is None else
                             f"{msg_prefix + ': ' if msg_prefix else ''}axis {axis} is out of bounds for "
                             f"array of dimension {ndim}")

    def __str__(self):
        # unpickled without __init__ (tblib's exception pickling, which
        # distributed installs, restores args but not NumPy's slots)
        try:
            return super().__str__()
        except AttributeError:
            return BaseException.__str__(self)


class ComplexWarning(*_COMPLEX):
    """Casting complex values to a real dtype discards the imaginary part."""


class DTypePromotionError(_WithMessage, *_PROMOTION):
    """The dtypes of the operands have no common dtype."""


class UFuncTypeError(_WithMessage, *_UFUNC):
    """A ufunc cannot work on the given dtypes (NumPy's base class of its ufunc errors)."""

    ufunc = None


class _UFuncNoLoopError(UFuncTypeError, *_NO_LOOP):
    """No loop of the ufunc takes the operands' dtypes (strings, say)."""

    dtypes = None


class _UFuncInputCastingError(UFuncTypeError, *_INPUT_CAST):
    """An input cannot be cast to the loop's dtype under the casting rule."""

    casting = from_ = to = in_i = None


class _UFuncOutputCastingError(UFuncTypeError, *_OUTPUT_CAST):
    """The loop's result cannot be cast to out='s dtype under the casting rule."""

    casting = from_ = to = out_i = None


class _ArrayMemoryError(_WithMessage, *_MEMORY):
    """An array's memory could not be allocated."""

    shape = dtype = None


class _DeviceMemoryError(_WithMessage, _core.OutOfMemoryError, *_MEMORY):
    """Out of GPU memory: a cuda.OutOfMemoryError that ``except`` clauses
    naming NumPy's MemoryError class catch too (zeros(2**50) on a GPU)."""

    shape = dtype = None


class _CIntOverflowError(OverflowError, ValueError):
    """An integer argument that no C int holds: NumPy raises OverflowError or
    ValueError for it depending on the function, so this is both."""


# The public classes are cudakit's names; the private ones show their
# public base's name, as NumPy's do (their qualified name stays, for pickle).
for _c in (AxisError, ComplexWarning, DTypePromotionError, UFuncTypeError):
    _c.__module__ = "cudakit"
for _c in (_UFuncNoLoopError, _UFuncInputCastingError, _UFuncOutputCastingError):
    _c.__name__ = "UFuncTypeError"
_ArrayMemoryError.__name__ = "MemoryError"
_DeviceMemoryError.__name__ = "OutOfMemoryError"
_CIntOverflowError.__name__ = "OverflowError"
del _c
