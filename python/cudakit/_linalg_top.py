"""Top-level linear algebra (matmul, dot, einsum...) and the helper that
cudakit.linalg and cudakit.fft share.

On the CPU these call NumPy's BLAS/LAPACK/pocketfft through zero-copy views:
``np.asarray(x)`` of a CPU array is a view of its buffer (buffer protocol),
and ``ck.asarray(result)`` wraps NumPy's result without a copy.  On a GPU the
products (matmul, dot, einsum, ...) run in the C core (cuBLAS) through
``_core._matmul``, composed in _linalg_dev.py; what has no GPU path yet
raises NotImplementedError: GPU data is never copied to the host behind the
caller's back.

Results have NumPy's dtypes and shapes; the scalars NumPy returns (``det``,
``vdot``, ``norm`` with no axis...) become 0-d arrays, as elsewhere in cudakit.
"""
import numbers as _numbers

import numpy as _np

from . import _core
from . import _linalg_dev as _dev

__all__ = [
    "matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "vecdot", "matrix_transpose",
]

_ndarray = type(_core.asarray(0))


def _device_error(name, device):
    return NotImplementedError(f"{name} on {device} needs cuBLAS/cuSOLVER/cuFFT (a later issue)")


class _Call:
    """Collects a call's operands: cudakit arrays become NumPy views (CPU only),
    array-likes go through ck.asarray first; remembers the device."""

    def __init__(self, name):
        self.name = name
        self.device = None

    def _check(self, x):
        dev = x.device
        if dev.type != "cpu":
            raise _device_error(self.name, dev)
        if self.device is None:
            self.device = dev
        return _np.asarray(x)

    def arg(self, x):
        """An operand: a NumPy view of a CPU array."""
        if isinstance(x, _ndarray):
            return self._check(x)
        if isinstance(x, (_numbers.Number, _np.generic)) and not isinstance(x, _np.ndarray):
            # Python scalars stay weak (NEP 50); NumPy scalars keep their dtype
            return x
        return self._check(_core.asarray(x))

    def out(self, out):
        """An ``out=`` argument: a writable view NumPy fills in place."""
        if out is None:
            return None
        if not isinstance(out, _ndarray):
            raise TypeError(f"{self.name}: out must be a cudakit array, not {type(out).__name__}")
        return self._check(out)

    def wrap(self, r):
        """NumPy's result back as cudakit arrays (tuples and named tuples element-wise)."""
        if isinstance(r, (_np.ndarray, _np.generic)):
            return _core.asarray(r, device=self.device)
        if isinstance(r, tuple):
            items = [self.wrap(v) for v in r]
            return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
        return r


def _call(name, npfunc, arrays, *args, out=None, **kwargs):
    """npfunc(*views(arrays), *args, **kwargs) wrapped back; ``out`` is filled
    in place through its view and returned."""
    c = _Call(name)
    views = [c.arg(a) for a in arrays]
    if out is not None:
        kwargs["out"] = c.out(out)
        npfunc(*views, *args, **kwargs)
        return out
    return c.wrap(npfunc(*views, *args, **kwargs))


def _gpu_device(*objs):
    """The device of the first non-CPU cudakit array among objs, or None."""
    for x in objs:
        if isinstance(x, _ndarray) and x.device.type != "cpu":
            return x.device
    return None


def _composed(*objs):
    """Whether a product runs as _linalg_dev's composition of matmul and views:
    on a GPU, and wherever an operand requires a gradient (autograd records
    the composition; NumPy's own function would not be recorded)."""
    return _gpu_device(*objs) is not None or _core._any_requires_grad(*objs)


def _no_kwargs(name, device, kwargs):
    if kwargs:
        raise NotImplementedError(f"{name} on {device}: keyword arguments {sorted(kwargs)} are not supported")


def matmul(x1, x2, /, out=None, **kwargs):
    """Matrix product as numpy.matmul (also the ``@`` operator).  On a GPU:
    cuBLAS for float16 (float32 accumulation), float32 (TF32 only when
    ``cudakit.cuda.matmul.allow_tf32`` is set), float64 and complex; a kernel
    of cudakit's own for integers and bool."""
    dev = _gpu_device(x1, x2, out)
    if dev is not None:
        _no_kwargs("matmul", dev, kwargs)
        return _core._matmul(x1, x2, out)
    if _core._any_requires_grad(x1, x2, out):
        return _matmul_recorded(x1, x2, out, kwargs)
    return _call("matmul", _np.matmul, (x1, x2), out=out, **kwargs)


def _matmul_recorded(x1, x2, out, kwargs):
    """The CPU's matmul (NumPy's) of arrays that require a gradient, recorded
    for autograd (whose rule runs the CPU's products the same way)."""
    if out is not None:
        raise RuntimeError("matmul(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    _no_kwargs("matmul with arrays that require grad", "cpu", kwargs)
    a = x1 if isinstance(x1, _ndarray) else _core.asarray(x1, device="cpu")
    b = x2 if isinstance(x2, _ndarray) else _core.asarray(x2, device="cpu")
    return _core._record_matmul(a, b, _call("matmul", _np.matmul, (a, b)))


def dot(a, b, out=None):
    """Dot product as numpy.dot."""
    if _composed(a, b, out):
        return _dev.dot(a, b, out)
    return _call("dot", _np.dot, (a, b), out=out)


def vdot(a, b, /):
    """Dot product of the flattened arrays, conjugating the first (a 0-d array)."""
    if _composed(a, b):
        return _dev.vdot(a, b)
    return _call("vdot", _np.vdot, (a, b))


def inner(a, b, /):
    """Inner product over the last axes, as numpy.inner."""
    if _composed(a, b):
        return _dev.inner(a, b)
    return _call("inner", _np.inner, (a, b))


def outer(a, b, out=None):
    """Outer product of the flattened arrays, as numpy.outer."""
    if _composed(a, b, out):
        return _dev.outer(a, b, out)
    return _call("outer", _np.outer, (a, b), out=out)


def tensordot(a, b, /, axes=2):
    """Tensor contraction over ``axes``, as numpy.tensordot."""
    if _composed(a, b):
        return _dev.tensordot(a, b, axes)
    return _call("tensordot", _np.tensordot, (a, b), axes=axes)


def kron(a, b, /):
    """Kronecker product, as numpy.kron."""
    if _composed(a, b):
        return _dev.kron(a, b)
    return _call("kron", _np.kron, (a, b))


def vecdot(x1, x2, /, *, axis=-1, **kwargs):
    """Vector dot product along ``axis``, conjugating x1, as numpy.vecdot."""
    dev = _gpu_device(x1, x2)
    if dev is None and _core._any_requires_grad(x1, x2):
        dev = x1.device if isinstance(x1, _ndarray) else x2.device
    if dev is not None:
        _no_kwargs("vecdot", dev, kwargs)
        return _dev.vecdot(x1, x2, axis)
    return _call("vecdot", _np.vecdot, (x1, x2), axis=axis, **kwargs)


def einsum(*operands, out=None, optimize=True, **kwargs):
    """Einstein summation as numpy.einsum, in explicit ('ij,jk->ik'),
    implicit ('ij,jk') and sublist modes.  ``optimize`` goes to NumPy; it is
    True by default here, so the contraction order is optimised.  On a GPU
    the contractions become batched matrix products (cuBLAS) in the order
    NumPy's einsum_path plans."""
    arrays = operands[1:] if operands and isinstance(operands[0], str) else operands[0:len(operands) // 2 * 2:2]
    dev = _gpu_device(out, *arrays)
    if dev is None and _core._any_requires_grad(*arrays):
        dev = next(a.device for a in arrays if isinstance(a, _ndarray))
    if dev is not None:
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("order", None)
        _no_kwargs("einsum", dev, kwargs)
        return _dev.einsum(operands, out=out, optimize=optimize, dtype=dtype, device=dev)
    c = _Call("einsum")
    if operands and isinstance(operands[0], str):
        args = [operands[0]] + [c.arg(a) for a in operands[1:]]
    else:
        # sublist mode: op0, sublist0, op1, sublist1, ..., [output sublist]
        n_ops = len(operands) // 2 * 2  # an odd count ends with the output sublist
        args = [c.arg(a) if i % 2 == 0 and i < n_ops else a for i, a in enumerate(operands)]
    try:
        if out is not None:
            _np.einsum(*args, out=c.out(out), optimize=optimize, **kwargs)
            return out
        return c.wrap(_np.einsum(*args, optimize=optimize, **kwargs))
    except (KeyError, IndexError):
        if optimize is False:
            raise
        # NumPy's path planner fails on some bad subscripts ('ij,jk->ik,')
        # before einsum's own checks: its ValueError says what is wrong
        _np.einsum(*args, optimize=False, **kwargs)
        raise


def matrix_transpose(x, /):
    """The last two axes exchanged: a view, on every device."""
    if not isinstance(x, _ndarray):
        x = _core.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs an array of at least 2 dimensions, not {x.ndim}")
    return _core.swapaxes(x, -1, -2)
