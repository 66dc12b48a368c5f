"""NumPy stand-ins for the private cuFFT/cuSOLVER entry points of _core, so
that the device path of ck.fft and ck.linalg (the glue that turns NumPy's
semantics into cuFFT/cuSOLVER calls: axes, padding, norms, transposes of
row-major data, conjugations, masks) also runs on a machine without a GPU.

Each stand-in works on the memory the way the library routine does (arrays
are read as column-major matrices, LAPACK's conventions: 1-based pivots,
info words), so a glue mistake shows up here as it would on the GPU.  On a
GPU machine the same tests run the real libraries (the `cuda` device)."""
import contextlib

import numpy as np

import cudakit as ck

_core = ck._core


def _np(x):
    assert isinstance(x, ck.ndarray) and x.device.type == "cpu"
    return np.asarray(x)


def _wrap(r):
    return ck.asarray(np.ascontiguousarray(r))


# --------------------------------------------------------------- cuFFT

def cuda_fft(x, rank, kind, forward, n_last, disposable=False):
    a = _np(x)
    axes = tuple(range(a.ndim - rank, a.ndim))
    if kind == 0:
        assert a.dtype.kind == "c", a.dtype
        r = np.fft.fftn(a, axes=axes) if forward else np.fft.ifftn(a, axes=axes, norm="forward")
        return _wrap(r.astype(a.dtype))
    if kind == 1:
        assert a.dtype in (np.float32, np.float64), a.dtype
        r = np.fft.rfftn(a, axes=axes)
        return _wrap(r.astype(np.complex64 if a.dtype == np.float32 else np.complex128))
    assert a.dtype.kind == "c" and a.shape[-1] == n_last // 2 + 1, (a.dtype, a.shape, n_last)
    # cuFFT's C2R takes the input as Hermitian: the caller must have made it so
    assert not np.any(a[..., 0].imag), "C2R input with an imaginary zero-frequency term"
    if n_last % 2 == 0:
        assert not np.any(a[..., -1].imag), "C2R input with an imaginary Nyquist term"
    s = list(a.shape[a.ndim - rank:])
    s[-1] = n_last
    r = np.fft.irfftn(a, s=s, axes=axes, norm="forward")
    if disposable:
        a[...] = np.nan   # what the caller gave up may be overwritten: make using it again show
    return _wrap(r.astype(np.float32 if a.dtype == np.complex64 else np.float64))


# ------------------------------------------------------------ cuSOLVER

def _cols(a):
    """The column-major matrices of a C-contiguous stack's memory."""
    return np.swapaxes(np.array(a, copy=True), -1, -2)


def _back(m):
    """Column-major matrices m back as the stack whose memory they are."""
    return _wrap(np.swapaxes(m, -1, -2))


def _lu(m):
    """LAPACK getrf of one matrix: (LU, 1-based pivots, info)."""
    m = m.copy()
    n = m.shape[0]
    piv = np.zeros(n, np.int32)
    info = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        piv[j] = p + 1
        if m[p, j] == 0:
            if not info:
                info = j + 1
            continue
        if p != j:
            m[[j, p]] = m[[p, j]]
        m[j + 1:, j] /= m[j, j]
        m[j + 1:, j + 1:] -= np.outer(m[j + 1:, j], m[j, j + 1:])
    return m, piv, info


def _stack(a, core):
    return a.reshape((-1,) + a.shape[a.ndim - core:])


def getrf(a):
    m = _cols(_np(a))
    flat = _stack(m, 2)
    lus, pivs, first = [], [], 0
    for mat in flat:
        lu, piv, info = _lu(mat)
        lus.append(lu)
        pivs.append(piv)
        first = first or info
    lu = np.array(lus).reshape(m.shape)
    piv = np.array(pivs, np.int32).reshape(m.shape[:-1])
    return _back(lu), _wrap(piv), first


def getrs(lu, ipiv, b, trans):
    lu_c = _stack(_cols(_np(lu)), 2)
    piv = _np(ipiv).reshape(len(lu_c), -1)
    bm = _cols(_np(b))
    flat = _stack(bm, 2).copy()
    for k in range(len(lu_c)):
        n = lu_c[k].shape[0]
        L = np.tril(lu_c[k], -1) + np.eye(n)
        U = np.triu(lu_c[k])
        P = np.eye(n)
        for j in range(n):
            p = piv[k][j] - 1
            P[[j, p]] = P[[p, j]]
        A = P.T @ L @ U   # the factored matrix
        op = {0: A, 1: A.T, 2: A.conj().T}[trans]
        flat[k] = np.linalg.solve(op, flat[k])
    return _back(flat.reshape(bm.shape).astype(bm.dtype))


def potrf(a, upper):
    m = _cols(_np(a))
    flat = _stack(m, 2).copy()
    first = 0
    for k in range(len(flat)):
        try:
            if upper:
                u = np.linalg.cholesky(np.triu(flat[k]) + np.triu(flat[k], 1).conj().T, upper=True)
                flat[k] = np.triu(u) + np.tril(flat[k], -1)
            else:
                low = np.linalg.cholesky(np.tril(flat[k]) + np.tril(flat[k], -1).conj().T)
                flat[k] = np.tril(low) + np.triu(flat[k], 1)
        except np.linalg.LinAlgError:
            first = first or 1
    return _back(flat.reshape(m.shape)), first


def geqrf(a):
    m = _cols(_np(a))
    hs, taus = [], []
    for mat in _stack(m, 2):
        h, tau = np.linalg.qr(mat, mode="raw")   # h: the column-major result's memory, as LAPACK leaves it
        hs.append(h)
        taus.append(tau)
    k = min(m.shape[-2:])
    return (_wrap(np.array(hs).reshape(m.shape[:-2] + m.shape[-2:][::-1]).astype(m.dtype)),
            _wrap(np.array(taus).reshape(m.shape[:-2] + (k,)).astype(m.dtype)))


def orgqr(q, tau):
    m = _cols(_np(q))
    t = _np(tau)
    flat = _stack(m, 2)
    tflat = t.reshape(len(flat), -1)
    out = []
    for mat, tv in zip(flat, tflat):
        rows, ncols = mat.shape
        Q = np.eye(rows, dtype=mat.dtype)
        for i in range(len(tv)):
            v = np.zeros(rows, mat.dtype)
            v[i] = 1
            v[i + 1:] = mat[i + 1:, i]
            Q = Q @ (np.eye(rows, dtype=mat.dtype) - tv[i] * np.outer(v, v.conj()))
        out.append(Q[:, :ncols])
    return _back(np.array(out).reshape(m.shape))


def gesvd(a, job):
    m = _cols(_np(a))
    rows, cols = m.shape[-2:]
    assert rows >= cols
    if job == "N":
        return _wrap(np.linalg.svd(m, compute_uv=False)), None, None, 0
    u, s, vt = np.linalg.svd(m, full_matrices=job == "A")
    return _wrap(s), _back(u), _back(vt), 0


def syevd(a, vectors, upper):
    m = _cols(_np(a))
    w, v = np.linalg.eigh(m, UPLO="U" if upper else "L")
    return _wrap(w), (_back(v) if vectors else None), 0


def geev(a, vectors):
    m = _cols(_np(a))
    flat = _stack(m, 2)
    cdt = np.complex64 if m.dtype in (np.float32, np.complex64) else np.complex128
    ws, vs = [], []
    for mat in flat:
        w, v = np.linalg.eig(mat)
        w = w.astype(cdt)
        if mat.dtype.kind == "f":   # LAPACK's packing of conjugate pairs into real columns
            packed = np.zeros(mat.shape, mat.dtype)
            j = 0
            while j < len(w):
                if w[j].imag != 0:
                    assert w[j + 1] == np.conj(w[j]) and w[j].imag > 0
                    packed[:, j], packed[:, j + 1] = v[:, j].real, v[:, j].imag
                    j += 2
                else:
                    packed[:, j] = v[:, j].real
                    j += 1
            v = packed
        ws.append(w)
        vs.append(v.astype(mat.dtype))
    w = np.array(ws).reshape(m.shape[:-1])
    v = np.array(vs).reshape(m.shape)
    return _wrap(w), (_back(v) if vectors else None), 0


@contextlib.contextmanager
def emulated(module):
    """Run `module` (ck.fft or ck.linalg) on its device path with the
    stand-ins above in place of cuFFT/cuSOLVER."""
    names = {"_cuda_fft": cuda_fft, "_cusolver_getrf": getrf, "_cusolver_getrs": getrs,
             "_cusolver_potrf": potrf, "_cusolver_geqrf": geqrf, "_cusolver_orgqr": orgqr,
             "_cusolver_gesvd": gesvd, "_cusolver_syevd": syevd, "_cusolver_geev": geev}
    saved = {k: getattr(_core, k) for k in names}
    saved_path = module._use_device_path
    try:
        for k, f in names.items():
            setattr(_core, k, f)
        module._use_device_path = lambda a: isinstance(a, ck.ndarray)
        yield
    finally:
        for k, f in saved.items():
            setattr(_core, k, f)
        module._use_device_path = saved_path
