"""cudakit.linalg: linear algebra, as numpy.linalg and the array API standard.

    >>> import cudakit as ck
    >>> a = ck.asarray([[4.0, 1.0], [1.0, 3.0]])
    >>> x = ck.linalg.solve(a, ck.asarray([1.0, 2.0]))
    >>> w, v = ck.linalg.eigh(a)

On the CPU every function runs NumPy's LAPACK on zero-copy views of the
operands and wraps NumPy's results without a copy, so results (values,
dtypes, shapes) are NumPy's.  On a GPU, cuSOLVER runs inv, solve, det,
slogdet, cholesky, qr, svd, svdvals, eigh, eigvalsh, eig, eigvals (with
cuSOLVER of CUDA 12.6+), matrix_rank, cond (p None/2/-2), tensorinv and
tensorsolve, with NumPy's dtypes, shapes and errors (a singular matrix
raises LinAlgError: that check waits for the GPU).  Decompositions are
unique only up to signs/phases, and eig's order, which may differ from
LAPACK's.  lstsq, pinv, matrix_power, multi_dot and the norms are
composed from cuBLAS products and cuSOLVER's SVD as NumPy composes them.
GPU data is never copied to the host silently.  Scalars NumPy returns (``det``, ``norm`` with no axis...)
are 0-d arrays here.  Decompositions return named tuples (``SlogdetResult``,
``QRResult``, ``SVDResult``, ``EighResult``, ``EigResult``) as NumPy 2 does.
``LinAlgError`` is numpy.linalg.LinAlgError itself, so either name catches it.
"""
from typing import Any, NamedTuple

import numpy as _np

import functools as _functools
import math as _math
import operator as _operator

from . import _complex_of, _core, _real_of
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


# ------------------------------------------------------------ device path
#
# cuSOLVER is column-major: the memory of a C-contiguous (..., r, c) stack is
# the column-major c x r matrices, the transposes.  Each function below says
# which matrices it hands over (a itself, or a view of its transpose, which
# the C side copies to contiguous memory) and how it reads the results back.

_ndarray = type(_core.asarray(0))
_SOLVER_TYPES = ("float32", "float64", "complex64", "complex128")


def _use_device_path(a):
    """Whether a runs on the device (cuSOLVER) path rather than NumPy's."""
    return isinstance(a, _ndarray) and a.device.type != "cpu"


@_functools.lru_cache(maxsize=None)
def _work_dtype(*dtypes):
    """NumPy's computation dtype for operands of these dtypes (its TypeError
    for float16 and other types linalg does not take)."""
    if len(dtypes) == 1:
        return str(_np.linalg.inv(_np.eye(1, dtype=dtypes[0])).dtype)
    return str(_np.linalg.solve(_np.eye(1, dtype=dtypes[0]), _np.ones((1, 1), dtype=dtypes[1])).dtype)


def _stack(a, square=True):
    """a cast to its working dtype, checked as NumPy checks it."""
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    dt = _work_dtype(str(a.dtype))
    return a if str(a.dtype) == dt else a.astype(dt)


def _same_device(x, like):
    if isinstance(x, _ndarray):
        if x.device != like.device:
            raise ValueError(f"operands on different devices: {like.device} and {x.device}")
        return x
    return _core.asarray(x, device=like.device)


def _on_host_empty(npfunc, like, *arrays, **kw):
    """NumPy's answer for empty operands (no data to move), on like's device."""
    views = [_np.empty(tuple(a.shape), dtype=str(a.dtype)) for a in arrays]
    r = npfunc(*views, **kw)
    wrap = lambda v: _core.asarray(v, device=like.device) if isinstance(v, (_np.ndarray, _np.generic)) else v  # noqa: E731
    if isinstance(r, tuple):
        items = [wrap(v) for v in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)
    return wrap(r)


def _mT(x):
    return _core.swapaxes(x, -1, -2)


def _raise_if(info, message):
    if info:
        raise LinAlgError(message)


def _lu(a):
    """LU factors of the transposes (what the memory holds): (lu, ipiv)."""
    return _core._cusolver_getrf(a)


def _device_inv(a):
    a = _stack(a)
    if a.size == 0:
        return _on_host_empty(_la.inv, a, a)
    lu, piv, info = _lu(a)
    _raise_if(info, "Singular matrix")
    n = a.shape[-1]
    eye = _core.broadcast_to(_core.eye(n, dtype=str(a.dtype), device=a.device), tuple(a.shape))
    # (A^T) X = I gives X = inv(A)^T column-major: inv(A) row-major
    return _core._cusolver_getrs(lu, piv, eye, 0)


def _device_solve(a, b):
    b = _same_device(b, a)
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    dt = _work_dtype(str(a.dtype), str(b.dtype))
    a = _stack(a.astype(dt) if str(a.dtype) != dt else a)
    b = b.astype(dt) if str(b.dtype) != dt else b
    n = a.shape[-1]
    vector = b.ndim == 1
    bm = _core.expand_dims(b, -1) if vector else b
    if bm.shape[-2] != n:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(m,m),(m,n)->(m,n) (size {bm.shape[-2]} is different from {n})")
    batch = _core.broadcast_shapes(tuple(a.shape[:-2]), tuple(bm.shape[:-2]))
    a = _core.broadcast_to(a, batch + (n, n))
    bm = _core.broadcast_to(bm, batch + tuple(bm.shape[-2:]))
    if a.size == 0 or bm.size == 0:
        r = _on_host_empty(_la.solve, a, a, b if vector else bm)
        return r
    lu, piv, info = _lu(a)
    _raise_if(info, "Singular matrix")
    # B column-major is the memory of B^T; A X = B is op(A^T) with op = transpose
    x = _mT(_core._cusolver_getrs(lu, piv, _mT(bm), 1))
    return x[..., 0] if vector else x


def _lu_diag_and_parity(a):
    lu, piv, _ = _lu(a)
    n = a.shape[-1]
    d = _core.diagonal(lu, 0, -2, -1)
    swaps = _core.sum(_core.not_equal(piv, _core.arange(1, n + 1, dtype="int32", device=a.device)), axis=-1)
    parity = 1 - 2 * _core.remainder(swaps, 2)      # +1 / -1
    return d, parity


def _device_det(a):
    a = _stack(a)
    if a.size == 0:
        return _on_host_empty(_la.det, a, a)
    d, parity = _lu_diag_and_parity(a)
    return _core.multiply(_core.prod(d, axis=-1), parity.astype(str(a.dtype)))


def _device_slogdet(a):
    a = _stack(a)
    if a.size == 0:
        return SlogdetResult(*_on_host_empty(_la.slogdet, a, a))
    dt = str(a.dtype)
    d, parity = _lu_diag_and_parity(a)
    mag = _core.absolute(d)
    logabsdet = _core.sum(_core.log(mag), axis=-1)
    if dt.startswith("complex"):
        zero = _core.equal(mag, 0)
        unit = _core.divide(d, _core.where(zero, 1, mag).astype(dt))
        sign = _core.prod(_core.where(zero, 0, unit).astype(dt), axis=-1)
    else:
        sign = _core.prod(_core.sign(d), axis=-1)
    sign = _core.multiply(sign, parity.astype(dt))
    return SlogdetResult(sign, logabsdet)


def _device_cholesky(a, upper):
    a = _stack(a)
    if a.size == 0:
        return _on_host_empty(_la.cholesky, a, a, upper=upper)
    # the memory is conj(A) (A Hermitian); its upper triangle is A's lower one.
    # conj(A) = U^H U column-major, read row-major: A = L L^H with L = U^T
    f, info = _core._cusolver_potrf(a, True)
    _raise_if(info, "Matrix is not positive definite")
    low = _core.tril(f)
    return _core.conjugate(_mT(low)) if upper else low


def _device_qr(a, mode):
    if mode not in ("reduced", "complete", "r", "raw"):
        _la.qr(_np.eye(1), mode=mode)   # NumPy's error for the mode
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _stack(a, square=False)
    if a.size == 0:
        r = _on_host_empty(_la.qr, a, a, mode=mode)
        return r
    m, n = a.shape[-2:]
    k = min(m, n)
    # geqrf on A column-major: the memory of A^T
    h, tau = _core._cusolver_geqrf(_mT(a))       # h: (..., n, m), column-major A's factors
    if mode == "raw":
        return h, tau
    full = _mT(h)                                  # (..., m, n): R on and above the diagonal
    r = _core.triu(full if mode == "complete" else full[..., :k, :])
    if mode == "r":
        return r
    if mode == "complete" and m > n:
        q0 = _core.concatenate([h, _core.zeros(tuple(h.shape[:-2]) + (m - n, m), dtype=str(h.dtype),
                                               device=a.device)], axis=-2)
    else:
        q0 = h[..., :k, :]
    q = _mT(_core._cusolver_orgqr(q0, tau))
    return QRResult(q, r)


def _device_svd(a, full_matrices, compute_uv):
    a = _stack(a, square=False)
    if a.size == 0:
        return _on_host_empty(_la.svd, a, a, full_matrices=full_matrices, compute_uv=compute_uv)
    m, n = a.shape[-2:]
    job = "N" if not compute_uv else "A" if full_matrices else "S"
    if m >= n:
        # A column-major (the memory of A^T): A = U S Vt
        s, u, vt, info = _core._cusolver_gesvd(_mT(a), job)
        _raise_if(info, "SVD did not converge")
        if not compute_uv:
            return s
        return SVDResult(_mT(u), s, _mT(vt))
    # the memory of A is A^T column-major (n x m, n > m): A^T = U' S Vt'
    # gives A = Vt'^T S U'^T, and the memories read row-major are those
    s, u, vt, info = _core._cusolver_gesvd(a, job)
    _raise_if(info, "SVD did not converge")
    if not compute_uv:
        return s
    return SVDResult(vt, s, u)


def _device_eigh(a, UPLO, vectors):
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a = _stack(a)
    if a.size == 0:
        return _on_host_empty(_la.eigh if vectors else _la.eigvalsh, a, a, UPLO=UPLO)
    # the memory is the transpose: A's lower triangle is its upper one, and
    # the Hermitian matrix it defines is conj(A), whose eigenvectors are conj
    w, v, info = _core._cusolver_syevd(a, vectors, UPLO == "L")
    _raise_if(info, "Eigenvalues did not converge")
    if not vectors:
        return w
    v = _mT(v)
    if str(v.dtype).startswith("complex"):
        v = _core.conjugate(v)
    return EighResult(w, v)


@_functools.lru_cache(maxsize=None)
def _eig_always_complex():
    return _la.eigvals(_np.eye(1)).dtype.kind == "c"


def _device_eig(a, vectors):
    a = _stack(a)
    if a.size == 0:
        return _on_host_empty(_la.eig if vectors else _la.eigvals, a, a)
    dt = str(a.dtype)
    # geev on A column-major (the memory of A^T)
    w, vr, info = _core._cusolver_geev(_mT(a), vectors)
    _raise_if(info, "Eigenvalues did not converge")
    v = _mT(vr) if vectors else None        # v[..., i, j]: component i of vector j
    if dt.startswith("complex"):
        return EigResult(w, v) if vectors else w
    # NumPy's result dtype for real input: before 2.5 it depends on the
    # values (real when every eigenvalue is: one host sync), from 2.5 it is
    # always complex; follow the NumPy installed beside us
    im = w.imag
    if not bool(_core.any(_core.not_equal(im, 0))):
        if _eig_always_complex():
            cdt = _complex_of(dt)
            return EigResult(w, v.astype(cdt)) if vectors else w
        w = w.real.astype(dt)
        return EigResult(w, v) if vectors else w
    if not vectors:
        return w
    # LAPACK's packing: a pair w[j], w[j+1] = conj (imag(w[j]) > 0) keeps
    # re(v_j) in column j and im(v_j) in column j+1; v_j+1 = conj(v_j)
    zero_col = _core.zeros(tuple(v.shape[:-1]) + (1,), dtype=dt, device=a.device)
    nxt = _core.concatenate([v[..., :, 1:], zero_col], axis=-1)
    prv = _core.concatenate([zero_col, v[..., :, :-1]], axis=-1)
    first = _core.expand_dims(_core.greater(im, 0), -2)
    second = _core.expand_dims(_core.less(im, 0), -2)
    cdt = _complex_of(dt)
    vc = _core.where(first, _core.add(v, _core.multiply(nxt, 1j)),
                     _core.where(second, _core.subtract(prv, _core.multiply(v, 1j)), v))
    return EigResult(w, vc.astype(cdt))


def _device_matrix_rank(A, tol, hermitian, rtol):
    if A.ndim < 2:
        return _core.asarray(int(_core.any(_core.not_equal(A, 0))), device=A.device)
    S = _device_svd(A, False, False)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * _np.finfo(_real_of(_work_dtype(str(A.dtype)))).eps
        elif not isinstance(rtol, _ndarray):
            rtol = _core.asarray(rtol, device=A.device)
        if isinstance(rtol, _ndarray):
            rtol = _core.expand_dims(rtol, -1)
        tol = _core.multiply(_core.max(S, axis=-1, keepdims=True), rtol)
    else:
        tol = _core.asarray(tol, device=A.device) if not isinstance(tol, _ndarray) else tol
        tol = _core.expand_dims(tol, -1) if tol.ndim else tol
    return _core.sum(_core.greater(S, tol), axis=-1)


# ---------------------------------------------- compositions on the device
# What NumPy builds from a matrix product and a decomposition, built the same
# way from cuBLAS (matmul) and cuSOLVER (svd, inv) on the array's device.

def _norm_dtype(x):
    """NumPy's result dtype of a norm: the real float type of x."""
    return _real_of(x.dtype) if x.dtype.kind in "fc" else "float64"


def _device_vector_norm(x, axis, keepdims, ord):
    rt = _norm_dtype(x)
    a = _core.absolute(x).astype(rt)
    if ord == _math.inf:
        return _core.max(a, axis=axis, keepdims=keepdims)
    if ord == -_math.inf:
        return _core.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _core.sum(_core.not_equal(x, 0), axis=axis, keepdims=keepdims).astype(rt)
    if ord == 1:
        return _core.sum(a, axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return _core.sqrt(_core.sum(a * a, axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return _core.power(_core.sum(_core.power(a, ord), axis=axis, keepdims=keepdims), 1.0 / ord)


def _device_matrix_norm(x, axes, keepdims, ord):
    r, c = axes
    rt = _norm_dtype(x)
    if ord in (2, -2, "nuc"):
        moved = _core.moveaxis(x, (r, c), (-2, -1))
        sv = _device_svd(moved, False, False)
        res = (_core.max(sv, axis=-1) if ord == 2 else _core.min(sv, axis=-1) if ord == -2
               else _core.sum(sv, axis=-1))
    elif ord in (None, "fro"):
        a = _core.absolute(x).astype(rt)
        res = _core.sqrt(_core.sum(a * a, axis=axes))
    elif ord in (1, -1, _math.inf, -_math.inf):
        a = _core.absolute(x).astype(rt)
        if ord in (1, -1):   # column sums
            sums = _core.sum(a, axis=r)
            other = c - 1 if c > r else c
        else:                # row sums
            sums = _core.sum(a, axis=c)
            other = r - 1 if r > c else r
        res = _core.max(sums, axis=other) if ord in (1, _math.inf) else _core.min(sums, axis=other)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        res = _core.reshape(res, tuple(shape))
    return res


def _device_norm(x, ord, axis, keepdims):
    nd = x.ndim
    if axis is None:
        if ord is None:
            r = _device_vector_norm(_core.reshape(x, (-1,)), 0, False, 2)
            return _core.reshape(r, (1,) * nd) if keepdims else r
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    for a in axis:
        if not -nd <= a < nd:
            raise _core.AxisError(f"axis {a} is out of bounds for array of dimension {nd}")
    axis = tuple(a % nd for a in axis)
    if len(axis) == 1:
        return _device_vector_norm(x, axis[0], keepdims, ord)
    if len(axis) == 2:
        if axis[0] == axis[1]:
            raise ValueError("Duplicate axes given.")
        return _device_matrix_norm(x, axis, keepdims, ord)
    raise ValueError("Improper number of dimensions to norm.")


def _device_pinv(a, rcond, hermitian, rtol):
    a = _stack(a, square=False)
    if rcond is None:
        if rtol is _np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * float(_np.finfo(_real_of(str(a.dtype))).eps)
        else:
            rcond = rtol
    elif rtol is not _np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if a.size == 0:
        m, n = a.shape[-2:]
        return _core.zeros(tuple(a.shape[:-2]) + (n, m), dtype=a.dtype, device=a.device)
    u, sv, vh = _device_svd(a, False, True)
    rc = rcond if not isinstance(rcond, _ndarray) else _core.expand_dims(rcond, -1)
    cutoff = rc * _core.max(sv, axis=-1, keepdims=True)
    large = _core.greater(sv, cutoff)
    inv_s = _core.where(large, 1.0 / _core.where(large, sv, 1.0), 0.0).astype(sv.dtype)
    # V diag(1/s) U^H
    return matmul(_core.conjugate(_mT(vh)), _core.expand_dims(inv_s, -1) * _core.conjugate(_mT(u)))


def _device_lstsq(a, b, rcond):
    b = _same_device(b, a)
    is_1d = b.ndim == 1
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    bb = _core.expand_dims(b, -1) if is_1d else b
    if bb.ndim != 2:
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    if bb.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    dt = _work_dtype(str(a.dtype), str(b.dtype))
    a, bb = a.astype(dt), bb.astype(dt)
    if rcond is None:
        rcond = float(_np.finfo(_real_of(dt)).eps) * max(m, n)
    if a.size == 0 or bb.size == 0:
        r = _on_host_empty(_la.lstsq, a, a, bb, rcond=rcond)
        x = r[0][..., 0] if is_1d else r[0]
        return x, r[1], r[2], r[3]
    u, sv, vh = _device_svd(a, False, True)
    cutoff = rcond * _core.max(sv)
    large = _core.greater(sv, cutoff)
    rank = int(_core.sum(large))
    inv_s = _core.where(large, 1.0 / _core.where(large, sv, 1.0), 0.0).astype(sv.dtype)
    uhb = matmul(_core.conjugate(_mT(u)), bb)
    x = matmul(_core.conjugate(_mT(vh)), _core.expand_dims(inv_s, -1) * uhb)
    rt = _real_of(dt)
    if rank == n and m > n:
        resid = _core.absolute(bb - matmul(a, x)).astype(rt)
        resid = _core.sum(resid * resid, axis=0)
    else:
        resid = _core.empty((0,), dtype=rt, device=a.device)
    if is_1d:
        x = x[:, 0]
    # the rank as NumPy gives it (LAPACK's int), a 0-d array like the CPU's
    return x, resid, _core.asarray(rank, dtype=_core.int32, device=a.device), sv


def _device_matrix_power(a, n):
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    try:
        n = _operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        eye = _core.eye(a.shape[-1], dtype=a.dtype, device=a.device)
        return _core.broadcast_to(eye, a.shape).copy()
    if n < 0:
        a = _device_inv(a)
        n = -n
    result, z = None, a
    while True:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if not n:
            break
        z = matmul(z, z)
    return result if result is not a else a.copy()


def _device_multi_dot(arrays, out):
    arrays = [_same_device(x, arrays[0]) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    first_1d, last_1d = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_1d:
        arrays[0] = _core.expand_dims(arrays[0], 0)
    if last_1d:
        arrays[-1] = _core.expand_dims(arrays[-1], -1)
    for x in arrays:
        if x.ndim != 2:
            raise ValueError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    # the cheapest order (the textbook dynamic programme over the chain)
    k = len(arrays)
    dims = [arrays[0].shape[0]] + [x.shape[1] for x in arrays]
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i, j):
        if i == j:
            return arrays[i]
        return matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))

    res = chain(0, k - 1)
    if first_1d:
        res = res[0]
    if last_1d:
        res = res[..., 0]
    if out is not None:
        out[...] = res
        return out
    return res


# norms

def _norm_path(x, ord):
    """Whether a norm is composed of cudakit's ops (the GPU's path, and the
    CPU's when x needs a gradient, which NumPy's norm would drop)."""
    if _use_device_path(x):
        return True
    if not (isinstance(x, _ndarray) and getattr(x, "requires_grad", False) and _core.is_grad_enabled()):
        return False
    if ord in (2, -2, "nuc") and x.ndim >= 2:
        raise NotImplementedError(f"the gradient of the ord={ord!r} matrix norm (through the SVD) on the CPU")
    return True


def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm, as numpy.linalg.norm (a 0-d array when axis=None)."""
    matrix = (isinstance(axis, tuple) and len(axis) == 2) or (axis is None and ord is not None
                                                                and getattr(x, "ndim", 0) == 2)
    if _norm_path(x, ord if matrix else None):
        return _device_norm(x, ord, axis, keepdims)
    return _call("norm", _la.norm, (x,), ord=ord, axis=axis, keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (all axes, flattened, by default)."""
    if _norm_path(x, None):
        if axis is None:
            r = _device_vector_norm(_core.reshape(x, (-1,)), 0, False, ord)
            return _core.reshape(r, (1,) * x.ndim) if keepdims else r
        return _device_vector_norm(x, axis, keepdims, ord)
    return _call("vector_norm", _la.vector_norm, (x,), axis=axis, keepdims=keepdims, ord=ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes."""
    if _norm_path(x, ord):
        if x.ndim < 2:
            raise ValueError(f"The input does not have enough dimensions: {x.ndim} < 2")
        return _device_matrix_norm(x, (x.ndim - 2, x.ndim - 1), keepdims, ord)
    return _call("matrix_norm", _la.matrix_norm, (x,), keepdims=keepdims, ord=ord)


def cond(x, p=None):
    """Condition number, as numpy.linalg.cond."""
    if _use_device_path(x) and p in (None, 2, -2):
        s = _device_svd(x, False, False)
        big, small = _core.max(s, axis=-1), _core.min(s, axis=-1)
        return _core.divide(small, big) if p == -2 else _core.divide(big, small)
    return _call("cond", _la.cond, (x,), p)


# solving and inverting

def inv(a):
    """Inverse of each square matrix; LinAlgError when one is singular."""
    if _use_device_path(a):
        return _device_inv(a)
    return _call("inv", _la.inv, (a,))


def solve(a, b):
    """Solution of a @ x = b (NumPy 2's rule: b is a vector only when 1-D)."""
    if _use_device_path(a):
        return _device_solve(a, b)
    return _call("solve", _la.solve, (a, b))


def det(a):
    """Determinant of each square matrix."""
    if _use_device_path(a):
        return _device_det(a)
    return _call("det", _la.det, (a,))


def slogdet(a):
    """(sign, logabsdet) of each square matrix, as a SlogdetResult."""
    if _use_device_path(a):
        return _device_slogdet(a)
    return SlogdetResult(*_call("slogdet", _la.slogdet, (a,)))


def lstsq(a, b, rcond=None):
    """Least-squares solution: (x, residuals, rank, singular values), rank a 0-d int32 array."""
    if _use_device_path(a):
        return _device_lstsq(a, b, rcond)
    return _call("lstsq", _la.lstsq, (a, b), rcond=rcond)


def pinv(a, rcond=None, hermitian=False, *, rtol=_np._NoValue):
    """Moore-Penrose pseudo-inverse."""
    if _use_device_path(a):
        return _device_pinv(a, rcond, hermitian, rtol)
    kw = {} if rtol is _np._NoValue else {"rtol": rtol}
    return _call("pinv", _la.pinv, (a,), rcond=rcond, hermitian=hermitian, **kw)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Rank of each matrix from its singular values (a 0-d array for one matrix)."""
    if _use_device_path(A):
        return _device_matrix_rank(A, tol, hermitian, rtol)
    return _call("matrix_rank", _la.matrix_rank, (A,), tol=tol, hermitian=hermitian, rtol=rtol)


def matrix_power(a, n):
    """a raised to the integer power n (n < 0 inverts)."""
    if _use_device_path(a):
        return _device_matrix_power(a, n)
    return _call("matrix_power", _la.matrix_power, (a,), n)


def tensorinv(a, ind=2):
    """Inverse of a tensor with respect to tensordot, as numpy.linalg.tensorinv."""
    if _use_device_path(a):
        if ind <= 0:
            raise ValueError("Invalid ind argument.")
        old = tuple(a.shape)
        rows = _math.prod(old[:ind])
        ia = _device_inv(_core.reshape(a, (rows, -1)))
        return _core.reshape(ia, old[ind:] + old[:ind])
    return _call("tensorinv", _la.tensorinv, (a,), ind=ind)


def tensorsolve(a, b, axes=None):
    """Solution x of tensordot(a, x, b.ndim) = b."""
    if _use_device_path(a):
        b = _same_device(b, a)
        if axes is not None:
            allaxes = list(range(a.ndim))
            for k in axes:
                allaxes.remove(k)
                allaxes.insert(a.ndim, k)
            a = _core.transpose(a, allaxes)
        oldshape = tuple(a.shape[-(a.ndim - b.ndim):])
        prod = _math.prod(oldshape)
        if _math.prod(a.shape[:b.ndim]) != prod:
            raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
                              "prod(a.shape[:b.ndim])")
        x = _device_solve(_core.reshape(a, (prod, prod)), _core.reshape(b, (prod,)))
        return _core.reshape(x, oldshape)
    return _call("tensorsolve", _la.tensorsolve, (a, b), axes=axes)


def multi_dot(arrays, *, out=None):
    """Product of several matrices in the cheapest order."""
    arrays = list(arrays)
    if arrays and _use_device_path(arrays[0]):
        return _device_multi_dot(arrays, out)
    return _call("multi_dot", lambda *xs, **kw: _la.multi_dot(xs, **kw), tuple(arrays), out=out)


# decompositions

def cholesky(a, /, *, upper=False):
    """Cholesky factor (lower, or upper with upper=True); LinAlgError unless positive definite."""
    if _use_device_path(a):
        return _device_cholesky(a, upper)
    return _call("cholesky", _la.cholesky, (a,), upper=upper)


def qr(a, mode="reduced"):
    """QR decomposition: a QRResult(Q, R) for 'reduced'/'complete', R for 'r', (h, tau) for 'raw'."""
    if _use_device_path(a):
        return _device_qr(a, mode)
    r = _call("qr", _la.qr, (a,), mode=mode)
    return QRResult(*r) if mode in ("reduced", "complete") else r


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition: an SVDResult(U, S, Vh), or S alone with compute_uv=False."""
    if _use_device_path(a):
        return _device_svd(a, full_matrices, compute_uv)   # hermitian: the general SVD is as valid
    r = _call("svd", _la.svd, (a,), full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian)
    return SVDResult(*r) if compute_uv else r


def svdvals(x, /):
    """Singular values of each matrix, in descending order."""
    if _use_device_path(x):
        return _device_svd(x, False, False)
    return _call("svdvals", _la.svdvals, (x,))


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, an EighResult."""
    if _use_device_path(a):
        return _device_eigh(a, UPLO, True)
    return EighResult(*_call("eigh", _la.eigh, (a,), UPLO=UPLO))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of Hermitian matrices."""
    if _use_device_path(a):
        return _device_eigh(a, UPLO, False)
    return _call("eigvalsh", _la.eigvalsh, (a,), UPLO=UPLO)


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices, an EigResult."""
    if _use_device_path(a):
        return _device_eig(a, True)
    return EigResult(*_call("eig", _la.eig, (a,)))


def eigvals(a):
    """Eigenvalues of general square matrices."""
    if _use_device_path(a):
        return _device_eig(a, False)
    return _call("eigvals", _la.eigvals, (a,))


# array API standard names

def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along ``axis``."""
    if _use_device_path(x1) or _use_device_path(x2):
        a = x1 if isinstance(x1, _ndarray) else _core.asarray(x1, device=x2.device)
        b = _same_device(x2, a)
        if a.shape[axis] != 3 or b.shape[axis] != 3:
            raise ValueError("x1 and x2 must have 3 elements along the axis of the cross product")
        a, b = _core.moveaxis(a, axis, -1), _core.moveaxis(b, axis, -1)
        a0, a1, a2, b0, b1, b2 = a[..., 0], a[..., 1], a[..., 2], b[..., 0], b[..., 1], b[..., 2]
        c = _core.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
        return _core.moveaxis(c, -1, axis)
    return _call("cross", _la.cross, (x1, x2), axis=axis)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays (the array API's; ck.outer flattens instead)."""
    if _use_device_path(x1) or _use_device_path(x2):
        for x in (x1, x2):
            if getattr(x, "ndim", None) != 1:
                raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={getattr(x1, 'ndim', 0)} "
                                 f"and x2.ndim={getattr(x2, 'ndim', 0)}.")
        from ._linalg_top import outer as _outer
        return _outer(x1, x2)
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
