"""Linear algebra (ck.matmul, ck.einsum..., ck.linalg) against NumPy.

On the CPU these run NumPy's BLAS/LAPACK on zero-copy views, so results must
match NumPy's in value, dtype and shape.  On a GPU the products (matmul and
everything composed from it: dot, einsum, ...) run on cuBLAS and our integer
kernel, and the functions of GPU_DONE on cuSOLVER; they must match NumPy's
within a tolerance per precision (decompositions up to the signs/phases of
their vectors).  On the CPU the functions of GPU_DONE also run their device
path's glue with NumPy standing in for cuSOLVER (tests/device_emulation.py)."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cudakit as ck
from conftest import assert_same
from device_emulation import emulated
from strategies import hsettings

SETTINGS = hsettings(25)
rng = np.random.default_rng(1234)


def rand(shape, dtype="float64"):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.standard_normal(shape).astype(dtype)


def well_conditioned(shape, dtype="float64"):
    n = shape[-1]
    return (rand(shape, dtype) + 2 * n * np.eye(n)).astype(dtype)


def spd(shape, dtype="float64"):
    a = rand(shape, dtype)
    return (a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])).astype(dtype)


def compare(got, want, rtol=None):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        if hasattr(want, "_fields"):
            assert got._fields == want._fields
        for g, w in zip(got, want):
            compare(g, w, rtol)
    elif isinstance(want, (int, float)) and not isinstance(want, np.generic):
        assert got == want
    else:
        assert isinstance(got, ck.ndarray), type(got)
        assert_same(got, want, rtol=rtol)


# ck.linalg functions that run on a GPU (cuSOLVER)
GPU_DONE = {"inv", "solve", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh",
            "matrix_rank", "cond", "tensorinv", "tensorsolve", "eig", "eigvals", "norm", "vector_norm",
            "matrix_norm", "lstsq", "pinv", "matrix_power", "multi_dot", "cross", "outer"}


def close(got, want):
    """Values, dtype and shape, within a tolerance per precision (relative
    to the largest magnitude, as the factorisations' errors are)."""
    want = np.asarray(want)
    if want.dtype.kind not in "fc":
        assert_same(got, want)
        return
    single = want.dtype in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    assert_same(got, want, rtol=2e-4 if single else 1e-9, atol=(2e-5 if single else 1e-10) * scale)


def unitary_columns(q):
    q = ck.asnumpy(q)
    eye = np.eye(q.shape[-1])
    tol = 1e-4 if q.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(np.swapaxes(q, -1, -2).conj() @ q, np.broadcast_to(eye, q.shape[:-2] + eye.shape),
                               atol=tol)


def abs_close(got, want):
    """Equal up to the sign/phase of each vector: compared by magnitude."""
    assert ck.asnumpy(got).dtype == np.asarray(want).dtype
    close(ck.absolute(got), np.abs(want))


def sort_eigs(w):
    """Eigenvalues in (real, imaginary) order along the last axis."""
    w = np.asarray(w)
    flat = w.reshape(-1, w.shape[-1]) if w.ndim else w.reshape(1, 1)
    rows = [row[np.lexsort((np.round(row.imag, 6), np.round(row.real, 6)))] for row in flat]
    return np.array(rows, dtype=w.dtype).reshape(w.shape)


def compare_linalg(name, got, want, kw):
    """Compare with NumPy where the result is unique, else up to what
    is arbitrary in it (the signs/phases of Q's, U's, V's columns)."""
    if name == "qr" and kw.get("mode", "reduced") in ("reduced", "complete"):
        assert got._fields == ("Q", "R")
        q, r = got
        k = min(r.shape[-2:])
        abs_close(r, want.R)
        abs_close(q[..., :k], want.Q[..., :k])
        assert q.shape == want.Q.shape
        unitary_columns(q)
    elif name == "qr" and kw.get("mode") == "r":
        abs_close(got, want)
    elif name == "svd" and kw.get("compute_uv", True):
        assert got._fields == ("U", "S", "Vh")
        u, s, vh = got
        k = s.shape[-1]
        close(s, want.S)
        abs_close(u[..., :k], want.U[..., :k])
        abs_close(vh[..., :k, :], want.Vh[..., :k, :])
        assert u.shape == want.U.shape and vh.shape == want.Vh.shape
        unitary_columns(u)
        unitary_columns(ck.conj(ck.swapaxes(vh, -1, -2)))
    elif name in ("eig", "eigvals"):
        # eigenvalues in any order; each eigenvector solves A v = w v (checked on the host)
        w = got.eigenvalues if name == "eig" else got
        want_w = want.eigenvalues if name == "eig" else want
        close(sort_eigs(ck.asnumpy(w)), sort_eigs(want_w))
        if name == "eig":
            assert got._fields == ("eigenvalues", "eigenvectors")
            v = ck.asnumpy(got.eigenvectors)
            assert v.dtype == want.eigenvectors.dtype and v.shape == want.eigenvectors.shape
            a, wv = kw["_a"], ck.asnumpy(w)
            tol = 1e-3 if v.dtype in (np.float32, np.complex64) else 1e-8
            np.testing.assert_allclose(a @ v, v * wv[..., None, :], atol=tol * max(1.0, np.abs(a).max()))
            np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)
    elif name == "eigh":
        assert got._fields == ("eigenvalues", "eigenvectors")
        close(got.eigenvalues, want.eigenvalues)
        abs_close(got.eigenvectors, want.eigenvectors)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        if hasattr(want, "_fields"):
            assert got._fields == want._fields
        for g, w in zip(got, want):
            close(g, w)
    else:
        assert isinstance(got, ck.ndarray), type(got)
        close(got, want)


def check(device, ckf, npf, *arrays, rtol=None, **kw):
    """ckf on cudakit copies of `arrays` (made on `device`) against npf on them."""
    args = [ck.asarray(a, device=device) for a in arrays]
    name = getattr(ckf, "__name__", "")
    on_gpu = name in GPU_DONE
    want = npf(*arrays, **kw)
    try:
        got = ckf(*args, **kw)
    except NotImplementedError as e:
        if device != "cpu" and "cusolverDnXgeev" in str(e):
            pytest.skip(str(e))
        raise
    for a, x in zip(arrays, args):  # inputs untouched
        np.testing.assert_array_equal(ck.asnumpy(x), a)
    ckw = dict(kw, _a=arrays[0]) if name == "eig" else kw
    if device == "cpu":
        compare(got, want, rtol)
    else:
        compare_linalg(name, got, want, ckw)
    if device == "cpu" and on_gpu:
        with emulated(ck.linalg):
            got = ckf(*args, **kw)
        for a, x in zip(arrays, args):
            np.testing.assert_array_equal(ck.asnumpy(x), a)
        compare_linalg(name, got, want, ckw)


# GPU products differ from NumPy's BLAS by rounding: per-dtype tolerances
# (cuBLAS accumulates float16 in float32, NumPy in float16 itself: loose)
GPU_TOL = {"float16": (3e-2, 1e-1), "float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4),
           "float64": (1e-10, 1e-10), "complex128": (1e-10, 1e-10)}


def assert_close(got, want):
    """assert_same, with the GPU's tolerance for inexact dtypes (NumPy's own
    result on the CPU compares exactly)."""
    want = np.asarray(want)
    rtol, atol = GPU_TOL.get(want.dtype.name, (None, 0))
    if isinstance(got, ck.ndarray) and got.device.type == "cpu":
        rtol, atol = None, 0
    assert_same(got, want, rtol=rtol, atol=atol)


def check_top(device, ckf, npf, *arrays, **kw):
    """check() for the products, which run on every device."""
    args = [ck.asarray(a, device=device) for a in arrays]
    got = ckf(*args, **kw)
    for a, x in zip(arrays, args):  # inputs untouched
        np.testing.assert_array_equal(ck.asnumpy(x), a)
    assert isinstance(got, ck.ndarray), type(got)
    assert got.device == args[0].device
    assert_close(got, npf(*arrays, **kw))


# ------------------------------------------------------------ top level

A34, B45, V3, V4 = rand((3, 4)), rand((4, 5)), rand(3), rand(4)
C22 = rand((2, 2), "complex128")

TOP_CASES = [
    ("matmul", (A34, B45), {}),
    ("matmul", (rand((2, 1, 3, 4)), rand((5, 4, 2))), {}),
    ("matmul", (V4, B45), {}),
    ("matmul", (A34, V4), {}),
    ("matmul", (V4, V4), {}),
    ("matmul", (rand((3, 4), "int32"), rand((4, 2), "int64")), {}),
    ("matmul", (rand((3, 4), "float32"), rand((4, 2), "float64")), {}),
    ("matmul", (rand((3, 4), "bool"), rand((4, 2), "bool")), {}),
    ("dot", (A34, B45), {}),
    ("dot", (rand((2, 3, 4)), rand((5, 4, 2))), {}),
    ("dot", (V4, V4), {}),
    ("vdot", (C22, C22), {}),
    ("vdot", (V3, V3), {}),
    ("inner", (A34, rand((2, 4))), {}),
    ("inner", (V3, V3), {}),
    ("outer", (V3, A34), {}),
    ("tensordot", (rand((2, 3, 4)), rand((3, 4, 5))), {}),
    ("tensordot", (rand((2, 3, 4)), rand((4, 3, 5))), {"axes": ([1, 2], [1, 0])}),
    ("tensordot", (V3, V4), {"axes": 0}),
    ("kron", (rand((2, 3)), rand((3, 2), "int64")), {}),
    ("vecdot", (rand((4, 3), "complex64"), rand((4, 3), "complex64")), {}),
    ("vecdot", (rand((3, 4)), rand((3, 4))), {"axis": 0}),
    ("einsum", ("ij,jk->ik", A34, B45), {}),
    ("einsum", ("ij,jk", A34, B45), {}),
    ("einsum", ("ii", rand((3, 3))), {}),
    ("einsum", ("ii->i", rand((3, 3))), {}),
    ("einsum", ("...ij,...jk->...ik", rand((2, 3, 4)), rand((2, 4, 5))), {}),
    ("einsum", ("ij,jk,kl->il", A34, B45, rand((5, 2))), {"optimize": False}),
    ("einsum", ("ij,jk,kl->il", A34, B45, rand((5, 2))), {"optimize": "greedy"}),
    ("einsum", ("i,i", V3.astype("float32"), V3.astype("float32")), {}),
]


@pytest.mark.parametrize("name,arrays,kw", TOP_CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(TOP_CASES)])
def test_top_level(device, name, arrays, kw):
    if name == "einsum":
        sub, arrays = arrays[0], arrays[1:]
        check_top(device, lambda *xs, **k: ck.einsum(sub, *xs, **k), lambda *xs, **k: np.einsum(sub, *xs, **k),
                  *arrays, **kw)
    else:
        check_top(device, getattr(ck, name), getattr(np, name), *arrays, **kw)


@pytest.mark.parametrize("name,arrays,kw", TOP_CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(TOP_CASES)])
def test_gpu_compositions(device, name, arrays, kw):
    """The compositions a GPU runs (python/cudakit/_linalg_dev.py), on every
    device: on the CPU their matmuls are NumPy's, so this checks the
    composing itself everywhere."""
    from cudakit import _linalg_dev as dev

    if name == "matmul":
        pytest.skip("matmul is not composed")
    if name == "einsum":
        sub, arrays = arrays[0], arrays[1:]
        args = [ck.asarray(a, device=device) for a in arrays]
        assert_close(dev.einsum((sub, *args), **kw), np.einsum(sub, *arrays, **kw))
        return
    args = [ck.asarray(a, device=device) for a in arrays]
    f = getattr(dev, name)
    if name == "tensordot":
        got = f(*args, kw.get("axes", 2))
    elif name == "vecdot":
        got = f(*args, kw.get("axis", -1))
    else:
        got = f(*args)
    assert_close(got, getattr(np, name)(*arrays, **kw))


EINSUM_MORE = [
    ("ijk,kj->i", (2, 3, 4), (4, 3)), ("bij,bjk->bik", (4, 2, 3), (4, 3, 5)), ("ij->", (3, 4)),
    ("ij->ji", (3, 4)), ("i,j->ij", (3,), (4,)), ("ij,ij->i", (3, 4), (3, 4)), ("iij->j", (3, 3, 2)),
    ("...i,i", (2, 5, 3), (3,)), ("ab,bc,cd,de->ae", (2, 3), (3, 4), (4, 5), (5, 6)), ("ij,kl->", (2, 3), (4, 5)),
    ("i,i,i->i", (3,), (3,), (3,)), ("abc,cd,bd->a", (2, 3, 4), (4, 5), (3, 5)), ("ji", (3, 4)),
    ("Ab,bc->Ac", (2, 3), (3, 4)), ("...,...", (3,), (3,)), ("ij...,j...->i...", (2, 3, 4), (3, 4)),
    ("bij,jk->bik", (1, 2, 3), (3, 4)), ("...ij,...jk", (2, 1, 3, 4), (5, 4, 2)),
]


@pytest.mark.parametrize("optimize", [True, False, "optimal"])
@pytest.mark.parametrize("case", EINSUM_MORE, ids=[c[0] for c in EINSUM_MORE])
def test_einsum_more(device, case, optimize):
    sub, shapes = case[0], case[1:]
    arrays = [rand(s) for s in shapes]
    got = ck.einsum(sub, *[ck.asarray(a, device=device) for a in arrays], optimize=optimize)
    assert_close(got, np.einsum(sub, *arrays, optimize=optimize))


def test_einsum_errors(device):
    a = ck.asarray(A34, device=device)
    with pytest.raises(ValueError):
        ck.einsum("ij,jk->ik", a, a)  # j: 4 against 3
    with pytest.raises(ValueError):
        ck.einsum("ij->k", a)
    with pytest.raises(ValueError):
        ck.einsum("ijk", a)


def test_einsum_sublist_mode(device):
    a, b = ck.asarray(A34, device=device), ck.asarray(B45, device=device)
    assert_close(ck.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(A34, [0, 1], B45, [1, 2], [0, 2]))
    assert_close(ck.einsum(a, [0, 1], b, [1, 2]), np.einsum(A34, [0, 1], B45, [1, 2]))


def test_einsum_optimize_default_is_true(monkeypatch):
    from cudakit import _linalg_top

    seen = {}
    real = np.einsum

    def spy(*args, **kw):
        seen.update(kw)
        return real(*args, **kw)

    monkeypatch.setattr(_linalg_top._np, "einsum", spy)
    ck.einsum("ij,jk->ik", ck.asarray(A34), ck.asarray(B45))
    assert seen["optimize"] is True


def test_matmul_operator(device):
    a, b, v = (ck.asarray(x, device=device) for x in (A34, B45, V4))
    assert_close(a @ b, A34 @ B45)
    assert_close(a @ v, A34 @ V4)
    assert_close(v @ b, V4 @ B45)
    assert_close(a @ B45.tolist(), A34 @ B45)  # an array-like operand
    x = a
    x = x @ b  # plain rebinding, not in place
    assert_close(x, A34 @ B45)
    assert_same(a, A34)
    with pytest.raises(ValueError):
        a @ a  # (3,4) @ (3,4)
    with pytest.raises(ValueError):
        a @ ck.asarray(2.0, device=device)  # a 0-d operand


def test_transposed_and_strided_views(device):
    big = rand((6, 8))
    a = ck.asarray(big, device=device)
    assert_close(a.T @ a, big.T @ big)
    assert_close(a @ a.T, big @ big.T)
    assert_close(a[::2, 1::3] @ a[::-2, ::3].T, big[::2, 1::3] @ big[::-2, ::3].T)
    assert_close(a[:, ::-1] @ a[::-1].T, big[:, ::-1] @ big[::-1].T)
    assert_close(a[1:5, 2:6] @ a[2:6, :3], big[1:5, 2:6] @ big[2:6, :3])  # padded leading dimensions
    if device == "cpu":
        assert_same(ck.linalg.inv(a[:4, ::2].T), np.linalg.inv(big[:4, ::2].T))


def test_solver_on_views(device):
    big = well_conditioned((6, 6)) + 0.5j * rand((6, 6))
    a = ck.asarray(big, device=device)
    rhs = rand((6, 3), "complex128")
    b = ck.asarray(rhs, device=device)
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            close(ck.linalg.inv(a[::-1, ::2][:3, :]), np.linalg.inv(big[::-1, ::2][:3, :]))
            close(ck.linalg.solve(a.T, b), np.linalg.solve(big.T, rhs))
            close(ck.linalg.solve(a[None], b[:, 0]), np.linalg.solve(big[None], rhs[:, 0]))
            close(ck.linalg.det(a[1:4, 2:5].T), np.linalg.det(big[1:4, 2:5].T))
            close(ck.linalg.solve(a, rhs.tolist()), np.linalg.solve(big, rhs))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4), (2, 2, 3, 6), (1, 1)])
def test_decompositions_by_shape(device, dtype, shape):
    x = rand(shape, dtype)
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            a = ck.asarray(x, device=device)
            for mode in ("reduced", "complete", "r"):
                compare_linalg("qr", ck.linalg.qr(a, mode=mode), np.linalg.qr(x, mode=mode), {"mode": mode})
            for full in (True, False):
                compare_linalg("svd", ck.linalg.svd(a, full_matrices=full), np.linalg.svd(x, full_matrices=full), {})
            close(ck.linalg.svdvals(a), np.linalg.svdvals(x))
            close(ck.linalg.matrix_rank(a), np.linalg.matrix_rank(x))
            if shape[-1] == shape[-2]:
                h = spd(shape, dtype)
                ah = ck.asarray(h, device=device)
                for uplo in ("L", "U"):
                    compare_linalg("eigh", ck.linalg.eigh(ah, UPLO=uplo), np.linalg.eigh(h, UPLO=uplo), {})
                    close(ck.linalg.eigvalsh(ah, UPLO=uplo), np.linalg.eigvalsh(h, UPLO=uplo))
                close(ck.linalg.cholesky(ah), np.linalg.cholesky(h))
                close(ck.linalg.cholesky(ah, upper=True), np.linalg.cholesky(h, upper=True))
                w = well_conditioned(shape, dtype)
                aw = ck.asarray(w, device=device)
                close(ck.linalg.inv(aw), np.linalg.inv(w))
                close(ck.linalg.det(aw), np.linalg.det(w))
                compare_linalg("slogdet", ck.linalg.slogdet(aw), np.linalg.slogdet(w), {})
                close(ck.linalg.solve(aw, ck.asarray(x[..., :1], device=device)), np.linalg.solve(w, x[..., :1]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (1, 1)])
def test_eig_by_shape(device, dtype, shape):
    x = rand(shape, dtype)
    sym = (x + np.swapaxes(x, -1, -2)).astype(dtype)   # real eigenvalues for the real dtypes
    for arr in (x, sym):
        check(device, ck.linalg.eig, np.linalg.eig, arr)
        check(device, ck.linalg.eigvals, np.linalg.eigvals, arr)


def test_eigh_reads_one_triangle(device):
    h = spd((4, 4))
    junk = h.copy()
    junk[np.triu_indices(4, 1)] = 99.0     # the upper triangle is never read with UPLO='L'
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            a = ck.asarray(junk, device=device)
            close(ck.linalg.eigvalsh(a), np.linalg.eigvalsh(junk))
            close(ck.linalg.cholesky(a), np.linalg.cholesky(junk))
            close(ck.linalg.eigvalsh(ck.asarray(junk.T.copy(), device=device), UPLO="U"), np.linalg.eigvalsh(junk))


def test_empty_and_integer_inputs(device):
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            close(ck.linalg.det(ck.ones((2, 0, 0), device=device)), np.linalg.det(np.ones((2, 0, 0))))
            close(ck.linalg.inv(ck.ones((0, 3, 3), device=device)), np.linalg.inv(np.ones((0, 3, 3))))
            xi = np.array([[2, 1], [1, 3]], np.int64)
            close(ck.linalg.inv(ck.asarray(xi, device=device)), np.linalg.inv(xi))
            close(ck.linalg.det(ck.asarray(xi.astype(bool), device=device)), np.linalg.det(xi.astype(bool)))
            with pytest.raises(TypeError):
                ck.linalg.inv(ck.ones((2, 2), dtype=ck.float16, device=device))
            with pytest.raises(ValueError):
                ck.linalg.eigh(ck.eye(2, device=device), UPLO="X")
            with pytest.raises(ValueError):
                ck.linalg.qr(ck.eye(2, device=device), mode="bad")


def test_out(device):
    a, b = ck.asarray(A34, device=device), ck.asarray(B45, device=device)
    out = ck.empty((3, 5), device=device)
    assert ck.matmul(a, b, out=out) is out
    assert_close(out, A34 @ B45)
    out2 = ck.zeros((3, 5), device=device)
    assert ck.einsum("ij,jk->ik", a, b, out=out2) is out2
    assert_close(out2, A34 @ B45)
    out3 = ck.zeros((3, 5), device=device)
    assert ck.dot(a, b, out=out3) is out3
    assert_close(out3, A34 @ B45)
    # an F-ordered out and one of a wider dtype are filled through a copy
    out4 = ck.zeros((5, 3), device=device).T
    assert ck.matmul(a, b, out=out4) is out4
    assert_close(out4, A34 @ B45)
    out5 = ck.zeros((3, 5), dtype=ck.complex128, device=device)
    ck.matmul(a, b, out=out5)
    assert_close(out5, (A34 @ B45).astype(np.complex128))
    with pytest.raises(ValueError):
        ck.matmul(a, b, out=ck.zeros((5, 3), device=device))


def test_scalar_results_are_0d(device):
    v = ck.asarray(V3, device=device)
    for r in (ck.vdot(v, v), ck.dot(v, v), ck.inner(v, v)):
        assert isinstance(r, ck.ndarray) and r.shape == ()
    if device != "cpu":
        return
    for r in (ck.linalg.norm(v), ck.linalg.det(ck.eye(3))):
        assert isinstance(r, ck.ndarray) and r.shape == ()


MATMUL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", MATMUL_DTYPES)
def test_matmul_dtypes(device, dtype):
    """Every dtype, with batches, transposed operands and sizes past one tile."""
    a, b = rand((2, 37, 20), dtype), rand((20, 19), dtype)
    x, y = ck.asarray(a, device=device), ck.asarray(b, device=device)
    assert_close(x @ y, a @ b)
    assert_close(ck.matrix_transpose(y) @ ck.matrix_transpose(x), b.T @ np.swapaxes(a, -1, -2))
    assert_close(x[:, ::2] @ y[:, 3:], a[:, ::2] @ b[:, 3:])
    assert_close(x[0, 0] @ y, a[0, 0] @ b)  # a vector


@pytest.mark.parametrize("pair", [("int8", "float16"), ("int32", "float32"), ("uint8", "int8"),
                                  ("bool", "int16"), ("float32", "complex128"), ("float16", "float32")])
def test_matmul_mixed_dtypes(device, pair):
    a, b = rand((4, 6), pair[0]), rand((6, 3), pair[1])
    assert_close(ck.asarray(a, device=device) @ ck.asarray(b, device=device), a @ b)


def test_matmul_wraps_like_numpy(device):
    a = np.full((3, 40), 100, np.int8)
    b = np.full((40, 2), 3, np.int8)
    assert_same(ck.asarray(a, device=device) @ ck.asarray(b, device=device), a @ b)
    u = np.full((2, 70), 2 ** 31, np.uint64)
    assert_same(ck.asarray(u, device=device) @ ck.asarray(u.T.copy(), device=device), u @ u.T)


@pytest.mark.parametrize("shapes", [((0, 4), (4, 3)), ((3, 0), (0, 2)), ((2, 0, 3), (3, 4)), ((5, 3), (3, 0))])
def test_matmul_empty(device, shapes):
    a, b = rand(shapes[0]), rand(shapes[1])
    assert_same(ck.asarray(a, device=device) @ ck.asarray(b, device=device), a @ b)


def test_matmul_broadcast_batches(device):
    a, b = rand((3, 1, 4, 5)), rand((2, 5, 6))
    x, y = ck.asarray(a, device=device), ck.asarray(b, device=device)
    assert_close(x @ y, a @ b)
    assert_close(x[::-1] @ y, a[::-1] @ b)
    assert_close(ck.broadcast_to(x, (3, 2, 4, 5)) @ y, a @ b)


def test_matmul_errors(device):
    a = ck.asarray(A34, device=device)
    with pytest.raises(ValueError, match="mismatch"):
        ck.matmul(a, a)
    with pytest.raises(ValueError):
        ck.matmul(ck.ones((2, 3, 4), device=device), ck.ones((3, 4, 2), device=device))  # batches 2 and 3
    with pytest.raises(ValueError):
        ck.dot(a, a)
    with pytest.raises(ValueError):
        ck.vdot(ck.ones(3, device=device), ck.ones(4, device=device))
    with pytest.raises(ValueError):
        ck.tensordot(a, a, axes=([0], [1]))
    with pytest.raises(ValueError):
        ck.inner(ck.ones(3, device=device), ck.ones(4, device=device))
    if device != "cpu":  # operands on two devices: never a silent copy
        with pytest.raises(ValueError, match="different devices"):
            ck.asarray(A34) @ a.T
        with pytest.raises(ValueError, match="different devices"):
            ck.einsum("ij,jk", a, ck.asarray(B45))


def test_matmul_allow_tf32_flag(device):
    assert ck.cuda.matmul.allow_tf32 is False  # full float32 by default
    a, b = rand((40, 50), "float32"), rand((50, 30), "float32")
    try:
        ck.cuda.matmul.allow_tf32 = True
        assert ck.cuda.matmul.allow_tf32 is True
        got = ck.asarray(a, device=device) @ ck.asarray(b, device=device)
        # TF32 keeps 10 mantissa bits: about 1e-3 relative per product
        np.testing.assert_allclose(ck.asnumpy(got), a @ b, rtol=1e-2, atol=5e-2)
        assert got.dtype == ck.float32
    finally:
        ck.cuda.matmul.allow_tf32 = False
    assert ck.cuda.matmul.allow_tf32 is False
    assert_close(ck.asarray(a, device=device) @ ck.asarray(b, device=device), a @ b)


def test_matmul_on_stream(device):
    if device == "cpu":
        pytest.skip("streams are a GPU matter")
    a, b = rand((64, 64), "float32"), rand((64, 64), "float32")
    s = ck.cuda.Stream()
    with s:
        x, y = ck.asarray(a, device=device), ck.asarray(b, device=device)
        z = x @ y
        w = z @ y
    s.synchronize()
    assert_close(z, a @ b)
    np.testing.assert_allclose(ck.asnumpy(w), (a @ b) @ b, rtol=1e-3, atol=1e-3)


def test_matrix_transpose(device):
    x = rand((2, 3, 4))
    got = ck.matrix_transpose(ck.asarray(x, device=device))
    assert got.device == ck.asarray(x, device=device).device
    assert_same(got, np.matrix_transpose(x))
    assert_same(ck.linalg.matrix_transpose(ck.asarray(x, device=device)), np.linalg.matrix_transpose(x))
    with pytest.raises(ValueError):
        ck.matrix_transpose(ck.ones(3, device=device))


def test_top_level_names_are_lazy():
    code = ("import sys, cudakit as ck; assert 'numpy' not in sys.modules; "
            "ck.matmul; assert 'numpy' in sys.modules; assert 'matmul' in vars(ck)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"CUDAKIT_DEVICE": "cpu", "PATH": ""})
    assert r.returncode == 0, r.stderr


@SETTINGS
@given(batch=st.lists(st.integers(1, 3), max_size=2), m=st.integers(1, 5), k=st.integers(1, 5),
       n=st.integers(1, 5), dtype=st.sampled_from(["int32", "int64", "float32", "float64", "complex64", "complex128"]),
       bcast=st.booleans())
def test_matmul_hypothesis(device, batch, m, k, n, dtype, bcast):
    a = rand(tuple(batch) + (m, k), dtype)
    b = rand(((1,) * len(batch) if bcast else tuple(batch)) + (k, n), dtype)
    check_top(device, ck.matmul, np.matmul, a, b)


@SETTINGS
@given(n=st.integers(1, 4), batch=st.lists(st.integers(1, 3), max_size=2),
       dtype=st.sampled_from(["float32", "float64", "complex64", "complex128"]))
def test_solve_inv_det_hypothesis(device, n, batch, dtype):
    a = well_conditioned(tuple(batch) + (n, n), dtype)
    b = rand(tuple(batch) + (n, 2), dtype)
    check(device, ck.linalg.solve, np.linalg.solve, a, b)
    check(device, ck.linalg.inv, np.linalg.inv, a)
    check(device, ck.linalg.det, np.linalg.det, a)


# ------------------------------------------------------------ ck.linalg

SQ = well_conditioned((4, 4))
SQB = well_conditioned((2, 3, 3))
SQ32 = well_conditioned((3, 3), "float32")
SQC = well_conditioned((3, 3), "complex128")
SPD, SPDC = spd((4, 4)), spd((2, 3, 3), "complex128")
RECT = rand((5, 3))

LINALG_CASES = [
    ("norm", (SQ,), {}),
    ("norm", (SQ,), {"ord": 1}),
    ("norm", (SQ,), {"ord": "nuc"}),
    ("norm", (SQB,), {"axis": (1, 2), "keepdims": True}),
    ("norm", (V4,), {"ord": np.inf}),
    ("norm", (SQ,), {"axis": 0}),
    ("vector_norm", (SQB,), {}),
    ("vector_norm", (SQB,), {"axis": -1, "ord": 1}),
    ("vector_norm", (SQ32,), {"axis": 0, "keepdims": True}),
    ("matrix_norm", (SQB,), {}),
    ("matrix_norm", (SQC,), {"ord": 2}),
    ("cond", (SQ,), {}),
    ("inv", (SQ,), {}),
    ("inv", (SQ32,), {}),
    ("inv", (SQB,), {}),
    ("solve", (SQ, V4), {}),
    ("solve", (SQB, rand((2, 3, 2))), {}),
    ("det", (SQ,), {}),
    ("det", (SQC,), {}),
    ("det", (SQ32,), {}),
    ("slogdet", (SQB,), {}),
    ("slogdet", (SQC,), {}),
    ("cholesky", (SPD,), {}),
    ("cholesky", (SPDC,), {"upper": True}),
    ("qr", (RECT,), {}),
    ("qr", (RECT,), {"mode": "complete"}),
    ("qr", (RECT,), {"mode": "r"}),
    ("qr", (SQB,), {}),
    ("svd", (RECT,), {}),
    ("svd", (RECT,), {"full_matrices": False}),
    ("svd", (SQB,), {"compute_uv": False}),
    ("svdvals", (RECT,), {}),
    ("eigh", (SPD,), {}),
    ("eigh", (SPDC,), {"UPLO": "U"}),
    ("eigvalsh", (SPD,), {}),
    ("eig", (SQ,), {}),
    ("eig", (SQC,), {}),
    ("eigvals", (SQB,), {}),
    ("lstsq", (RECT, rand(5)), {}),
    ("lstsq", (RECT, rand((5, 2))), {"rcond": None}),
    ("pinv", (RECT,), {}),
    ("pinv", (SPD,), {"hermitian": True}),
    ("matrix_rank", (RECT,), {}),
    ("matrix_rank", (np.ones((3, 3)),), {}),
    ("matrix_rank", (SQB,), {"rtol": 1e-3}),
    ("matrix_power", (SQ,), {"n": 3}),
    ("matrix_power", (SQ,), {"n": 0}),
    ("matrix_power", (SQ,), {"n": -2}),
    ("matrix_power", (rand((3, 3), "int64"),), {"n": 2}),
    ("cross", (rand((4, 3)), rand((4, 3))), {}),
    ("cross", (rand((3, 2)), rand((3, 2), "float32")), {"axis": 0}),
    ("outer", (V3, V4), {}),
    ("tensordot", (rand((2, 3)), rand((3, 2))), {"axes": 1}),
    ("vecdot", (rand((2, 3)), rand((2, 3))), {}),
    ("matmul", (SQB, SQB), {}),
    ("tensorinv", (well_conditioned((6, 6)).reshape(6, 2, 3),), {"ind": 1}),
    ("tensorsolve", (well_conditioned((6, 6)).reshape(2, 3, 6), rand((2, 3))), {}),
]


@pytest.mark.parametrize("name,arrays,kw", LINALG_CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(LINALG_CASES)])
def test_linalg(device, name, arrays, kw):
    check(device, getattr(ck.linalg, name), getattr(np.linalg, name), *arrays, **kw)


def _multi_dot(*a):
    return ck.linalg.multi_dot(a)


_multi_dot.__name__ = "multi_dot"


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 6), (6, 2)], [(4,), (4, 6), (6, 5), (5, 2), (2,)],
                                    [(10, 2), (2, 9), (9, 1)]])
def test_multi_dot(device, shapes):
    xs = [rand(s) for s in shapes]
    check(device, _multi_dot, lambda *a: np.linalg.multi_dot(a), *xs)


def test_named_tuples(device):
    if device != "cpu":
        return
    sign, logabsdet = r = ck.linalg.slogdet(ck.asarray(SQ))
    assert r.sign is sign and r.logabsdet is logabsdet and r._fields == ("sign", "logabsdet")
    assert ck.linalg.qr(ck.asarray(RECT))._fields == ("Q", "R")
    assert ck.linalg.svd(ck.asarray(RECT))._fields == ("U", "S", "Vh")
    assert ck.linalg.eigh(ck.asarray(SPD))._fields == ("eigenvalues", "eigenvectors")
    assert ck.linalg.eig(ck.asarray(SQ))._fields == ("eigenvalues", "eigenvectors")
    x, res, rank, s = ck.linalg.lstsq(ck.asarray(RECT), ck.asarray(rand(5)))
    assert int(rank) == 3


def test_decompositions_reconstruct(device):
    if device != "cpu":
        return  # needs matmul on the GPU (cuBLAS); the GPU's results are checked against NumPy's above
    a = ck.asarray(RECT)
    q, r = ck.linalg.qr(a)
    np.testing.assert_allclose(ck.asnumpy(q @ r), RECT, atol=1e-12)
    u, s, vh = ck.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(ck.asnumpy((u * s[None, :]) @ vh), RECT, atol=1e-12)
    w, v = ck.linalg.eigh(ck.asarray(SPD))
    np.testing.assert_allclose(ck.asnumpy(ck.asarray(SPD) @ v), ck.asnumpy(v * w[None, :]), atol=1e-10)


@pytest.mark.parametrize("fname", ["inv", "solve", "det", "cholesky", "slogdet"])
def test_singular_raises_linalgerror(device, fname):
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    a = ck.asarray(sing, device=device)
    f = getattr(ck.linalg, fname)
    call = (lambda: f(a, ck.ones(2, device=device))) if fname == "solve" else (lambda: f(a))
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            if fname in ("det", "slogdet"):  # singular is a value, not an error
                assert float(ck.linalg.det(a)) == 0.0
                sign, logdet = ck.linalg.slogdet(a)
                assert float(sign) == 0.0 and float(logdet) == -np.inf
                continue
            with pytest.raises(np.linalg.LinAlgError):
                call()
            with pytest.raises(ck.linalg.LinAlgError, match="Singular matrix|not positive definite"):
                call()
    assert ck.linalg.LinAlgError is np.linalg.LinAlgError


def test_nonsquare_raises(device):
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        ck.linalg.inv(ck.asarray(RECT, device=device))
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        ck.linalg.det(ck.asarray(V3, device=device))


def test_trace_and_diagonal(device):
    x = rand((2, 3, 4))
    xi = rand((3, 3), "int32")
    a, ai = ck.asarray(x, device=device), ck.asarray(xi, device=device)
    assert_same(ck.linalg.diagonal(a), np.linalg.diagonal(x))
    assert_same(ck.linalg.diagonal(a, offset=1), np.linalg.diagonal(x, offset=1))
    assert_same(ck.linalg.trace(a), np.linalg.trace(x))
    assert_same(ck.linalg.trace(a, offset=-1), np.linalg.trace(x, offset=-1))
    assert_same(ck.linalg.trace(ai), np.linalg.trace(xi))
    assert_same(ck.linalg.trace(ai, dtype=ck.float32), np.linalg.trace(xi, dtype=np.float32))


def test_array_like_inputs():
    assert_same(ck.linalg.det([[1.0, 2.0], [3.0, 4.0]]), np.linalg.det([[1.0, 2.0], [3.0, 4.0]]))
    assert_same(ck.dot([1, 2], [3, 4]), np.dot([1, 2], [3, 4]))
    # a Python scalar stays weak (NEP 50): float32 stays float32
    v32 = np.ones(3, np.float32)
    assert_same(ck.dot(ck.asarray(v32), 2.0), np.dot(v32, 2.0))


def test_results_do_not_alias_inputs():
    x = SQ.copy()
    a = ck.asarray(x)
    r = ck.linalg.inv(a)
    a[0, 0] = 100.0
    assert_same(r, np.linalg.inv(SQ))




def test_solver_on_a_stream(device):
    if device == "cpu":
        pytest.skip("streams are a GPU matter")
    w = well_conditioned((3, 8, 8), "float32")
    h = spd((3, 8, 8), "complex64")
    a, ah = ck.asarray(w, device=device), ck.asarray(h, device=device)
    s = ck.cuda.Stream()
    with s:
        inv = ck.linalg.inv(a)
        ev = ck.linalg.eigvalsh(ah)
        sv = ck.linalg.svdvals(a)
    s.synchronize()
    close(inv, np.linalg.inv(w))
    close(ev, np.linalg.eigvalsh(h))
    close(sv, np.linalg.svdvals(w))


def test_many_small_batched(device):
    """A batch of small matrices (eigh takes the batched Jacobi path on a GPU)."""
    h = spd((40, 5, 5))
    w = well_conditioned((40, 5, 5), "complex128")
    for ctx in ([None] if device != "cpu" else [None, ck.linalg]):
        with (emulated(ctx) if ctx else _nothing()):
            ah, aw = ck.asarray(h, device=device), ck.asarray(w, device=device)
            compare_linalg("eigh", ck.linalg.eigh(ah), np.linalg.eigh(h), {})
            close(ck.linalg.eigvalsh(ah), np.linalg.eigvalsh(h))
            close(ck.linalg.det(aw), np.linalg.det(w))
            close(ck.linalg.cholesky(ah), np.linalg.cholesky(h))


def test_tensordot_integer_axes_on_the_device_path(device):
    # the GPU's tensordot (cudakit._linalg_dev, also run here on the CPU's
    # arrays) reads an int as NumPy does: a negative one contracts nothing,
    # one beyond the dimensions fails indexing the shape (IndexError)
    from cudakit import _linalg_dev

    m = np.arange(6.0).reshape(2, 3)
    cm = ck.asarray(m, device=device)
    for axes in (-2, -1, 0, 2):
        assert_same(_linalg_dev.tensordot(cm, cm, axes), np.tensordot(m, m, axes=axes))
    assert_same(_linalg_dev.tensordot(cm, cm.T, 1), np.tensordot(m, m.T, axes=1))
    for axes, exc in ((3, IndexError), (1, ValueError)):
        with pytest.raises(exc):
            np.tensordot(m, m, axes=axes)
        with pytest.raises(exc):
            _linalg_dev.tensordot(cm, cm, axes)
