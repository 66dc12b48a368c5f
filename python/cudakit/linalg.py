"""cudakit.linalg: linear algebra, as numpy.linalg and the array API standard.

    >>> import cudakit as ck
    >>> a = ck.asarray([[4.0, 1.0], [1.0, 3.0]])
    >>> x = ck.linalg.solve(a, ck.asarray([1.0, 2.0]))
    >>> w, v = ck.linalg.eigh(a)

On the CPU every function runs NumPy's LAPACK on zero-copy views of the
operands and wraps NumPy's results without a copy, so results (values,
dtypes, shapes) are NumPy's.  Arrays on a GPU raise NotImplementedError until
cuBLAS/cuSOLVER are wired in (a later issue); their data is never copied to
the host silently.  Scalars NumPy returns (``det``, ``norm`` with no axis...)
are 0-d arrays here.  Decompositions return named tuples (``SlogdetResult``,
``QRResult``, ``SVDResult``, ``EighResult``, ``EigResult``) as NumPy 2 does.
``LinAlgError`` is numpy.linalg.LinAlgError itself, so either name catches it.
"""
from typing import Any, NamedTuple

import numpy as _np

from . import _core
from ._linalg_top import _call, matmul, matrix_transpose, tensordot, vecdot  # noqa: F401  (re-exports)

__all__ = [
    "LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "solve", "det", "slogdet", "cholesky", "qr",
    "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "pinv", "matrix_rank", "matrix_power",
    "cross", "multi_dot", "cond", "tensorinv", "tensorsolve", "matmul", "tensordot", "vecdot",
    "matrix_transpose", "outer", "trace", "diagonal",
    "SlogdetResult", "QRResult", "SVDResult", "EighResult", "EigResult",
]

LinAlgError = _np.linalg.LinAlgError
_la = _np.linalg


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


# norms

def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm, as numpy.linalg.norm (a 0-d array when axis=None)."""
    return _call("norm", _la.norm, (x,), ord=ord, axis=axis, keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (all axes, flattened, by default)."""
    return _call("vector_norm", _la.vector_norm, (x,), axis=axis, keepdims=keepdims, ord=ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes."""
    return _call("matrix_norm", _la.matrix_norm, (x,), keepdims=keepdims, ord=ord)


def cond(x, p=None):
    """Condition number, as numpy.linalg.cond."""
    return _call("cond", _la.cond, (x,), p)


# solving and inverting

def inv(a):
    """Inverse of each square matrix; LinAlgError when one is singular."""
    return _call("inv", _la.inv, (a,))


def solve(a, b):
    """Solution of a @ x = b (NumPy 2's rule: b is a vector only when 1-D)."""
    return _call("solve", _la.solve, (a, b))


def det(a):
    """Determinant of each square matrix."""
    return _call("det", _la.det, (a,))


def slogdet(a):
    """(sign, logabsdet) of each square matrix, as a SlogdetResult."""
    return SlogdetResult(*_call("slogdet", _la.slogdet, (a,)))


def lstsq(a, b, rcond=None):
    """Least-squares solution: (x, residuals, rank, singular values), rank a Python int."""
    return _call("lstsq", _la.lstsq, (a, b), rcond=rcond)


def pinv(a, rcond=None, hermitian=False, *, rtol=_np._NoValue):
    """Moore-Penrose pseudo-inverse."""
    kw = {} if rtol is _np._NoValue else {"rtol": rtol}
    return _call("pinv", _la.pinv, (a,), rcond=rcond, hermitian=hermitian, **kw)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Rank of each matrix from its singular values (a 0-d array for one matrix)."""
    return _call("matrix_rank", _la.matrix_rank, (A,), tol=tol, hermitian=hermitian, rtol=rtol)


def matrix_power(a, n):
    """a raised to the integer power n (n < 0 inverts)."""
    return _call("matrix_power", _la.matrix_power, (a,), n)


def tensorinv(a, ind=2):
    """Inverse of a tensor with respect to tensordot, as numpy.linalg.tensorinv."""
    return _call("tensorinv", _la.tensorinv, (a,), ind=ind)


def tensorsolve(a, b, axes=None):
    """Solution x of tensordot(a, x, b.ndim) = b."""
    return _call("tensorsolve", _la.tensorsolve, (a, b), axes=axes)


def multi_dot(arrays, *, out=None):
    """Product of several matrices in the cheapest order."""
    return _call("multi_dot", lambda *xs, **kw: _la.multi_dot(xs, **kw), tuple(arrays), out=out)


# decompositions

def cholesky(a, /, *, upper=False):
    """Cholesky factor (lower, or upper with upper=True); LinAlgError unless positive definite."""
    return _call("cholesky", _la.cholesky, (a,), upper=upper)


def qr(a, mode="reduced"):
    """QR decomposition: a QRResult(Q, R) for 'reduced'/'complete', R for 'r', (h, tau) for 'raw'."""
    r = _call("qr", _la.qr, (a,), mode=mode)
    return QRResult(*r) if mode in ("reduced", "complete") else r


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition: an SVDResult(U, S, Vh), or S alone with compute_uv=False."""
    r = _call("svd", _la.svd, (a,), full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)
    return SVDResult(*r) if compute_uv else r


def svdvals(x, /):
    """Singular values of each matrix, in descending order."""
    return _call("svdvals", _la.svdvals, (x,))


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, an EighResult."""
    return EighResult(*_call("eigh", _la.eigh, (a,), UPLO=UPLO))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of Hermitian matrices."""
    return _call("eigvalsh", _la.eigvalsh, (a,), UPLO=UPLO)


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices, an EigResult."""
    return EigResult(*_call("eig", _la.eig, (a,)))


def eigvals(a):
    """Eigenvalues of general square matrices."""
    return _call("eigvals", _la.eigvals, (a,))


# array API standard names

def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along ``axis``."""
    return _call("cross", _la.cross, (x1, x2), axis=axis)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays (the array API's; ck.outer flattens instead)."""
    return _call("outer", _la.outer, (x1, x2))


def _as_array(x):
    return x if isinstance(x, type(_core.asarray(0))) else _core.asarray(x)


def diagonal(x, /, *, offset=0):
    """Diagonals of the matrices in the last two axes: a read-only view, on every device."""
    return _core.diagonal(_as_array(x), offset, -2, -1)


if hasattr(_core, "trace"):
    def trace(x, /, *, offset=0, dtype=None):
        """Sum of the diagonals of the matrices in the last two axes."""
        return _core.trace(_as_array(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)
else:  # pragma: no cover
    __all__.remove("trace")
