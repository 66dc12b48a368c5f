"""Kernels of the CUDA Python literature on both devices, against NumPy: the
seed's add_one, Jacobi sweeps of Laplace's equation (plain and through a shared
tile), warp-shuffle reductions and scans, the Mandelbrot set.  The tiled matmul,
histogram and block reduction are in test_pykernels.py, Monte Carlo pi in
test_cuda_random.py, Black-Scholes and vectorize in test_vectorize.py."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cudakit as ck
from conftest import assert_same

import _pyk_literature as lit


def on(device, x):
    return ck.asarray(x, device=device)


@pytest.mark.parametrize("n", [1, 255, 256, 100_003])
def test_add_one(device, n):
    h = np.arange(n, dtype=np.float32)
    x = ck.array(h, device=device)
    tpb = 256
    lit.add_one[(n + tpb - 1) // tpb, tpb](x)
    assert_same(x, h + 1)


def _jacobi_numpy(u, sweeps):
    u = u.copy()
    for _ in range(sweeps):
        v = u.copy()
        v[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = v
    return u


@pytest.mark.parametrize("kernel", ["jacobi_step", "jacobi_shared"])
@pytest.mark.parametrize("shape", [(3, 3), (17, 33), (64, 40)])
def test_jacobi_laplace(device, kernel, shape):
    k = getattr(lit, kernel)
    h = np.zeros(shape)
    h[0, :] = 1.0                       # a hot edge; the others held at 0
    h[:, -1] = np.linspace(0, 1, shape[0])
    u = ck.array(h, device=device)
    v = ck.empty_like(u)
    T = 16
    grid = ((shape[0] + T - 1) // T, (shape[1] + T - 1) // T)
    for _ in range(20):
        k[grid, (T, T)](u, v)
        u, v = v, u
    assert_same(u, _jacobi_numpy(h, 20), rtol=1e-12, atol=1e-15)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 70_000), blocks=st.sampled_from([1, 3, 8]), tpb=st.sampled_from([32, 96, 256]))
def test_warp_shuffle_reduction(n, blocks, tpb):
    for device in _devices():
        h = (np.arange(n) % 7).astype(np.float32)
        out = ck.zeros(1, dtype=ck.float32, device=device)
        lit.warp_reduce_sum[blocks, tpb](on(device, h), out)
        assert_same(out, np.array([h.sum()], dtype=np.float32))


def test_warp_butterfly_and_scan(device):
    h = np.random.default_rng(5).integers(-1000, 1000, 128).astype(np.int32)
    out = ck.zeros(128, dtype=ck.int32, device=device)
    lit.xor_butterfly_max[2, 64](on(device, h), out)
    assert_same(out, np.repeat(h.reshape(4, 32).max(axis=1), 32))
    lit.inclusive_scan_warp[2, 64](on(device, h), out)
    assert_same(out, np.cumsum(h.reshape(4, 32), axis=1, dtype=np.int32).ravel())


def test_mandelbrot(device):
    H, W, iters = 24, 36, 50
    x0, y0, dx, dy = -2.0, -1.2, 3.0 / W, 2.4 / H
    img = ck.zeros((H, W), dtype=ck.int32, device=device)
    lit.mandelbrot[((H + 7) // 8, (W + 7) // 8), (8, 8)](img, x0, y0, dx, dy, iters)
    c = (x0 + np.arange(W) * dx)[None, :] + 1j * (y0 + np.arange(H) * dy)[:, None]
    z = np.zeros_like(c)
    want = np.zeros(c.shape, np.int32)
    for _ in range(iters):
        live = np.abs(z) <= 2.0
        z[live] = z[live] * z[live] + c[live]
        want += live
    got = ck.asnumpy(img)
    assert got.dtype == want.dtype and got.shape == want.shape
    # NVRTC contracts z*z + c into fused multiply-adds, NumPy does not: a
    # pixel on the set's edge may escape an iteration sooner or later
    # (3 of 864 on the H200); the rest must agree exactly
    assert np.count_nonzero(got != want) <= (0 if device == "cpu" else want.size // 100)


def _devices():
    yield "cpu"
    if ck.cuda.is_available():
        yield "cuda"


@pytest.mark.parametrize("name, sig", [
    ("add_one", "void(float32[:])"), ("jacobi_step", "void(float64[:, :], float64[:, :])"),
    ("jacobi_shared", "void(float64[:, :], float64[:, :])"), ("warp_reduce_sum", "void(float32[:], float32[:])"),
    ("xor_butterfly_max", "void(int32[:], int32[:])"), ("inclusive_scan_warp", "void(int32[:], int32[:])"),
    ("mandelbrot", "void(int32[:, :], float64, float64, float64, float64, int64)"),
    ("operands_run_once", "void(int64[:], int64[:])"),
])
def test_literature_translations_compile_for_the_gpu(name, sig):
    k = getattr(lit, name)
    src = k.inspect_cuda(sig, full=True)
    try:
        ck._core._kernel_compile(src, f"{name}.cu", 90, k._compile_options())
    except ck.cuda.CUDAError as e:
        pytest.skip(f"no NVRTC here: {e}")


def test_operands_with_effects_run_once(device):
    cells = ck.zeros(1, dtype=ck.int64, device=device)
    out = ck.zeros(64, dtype=ck.int64, device=device)
    lit.operands_run_once[2, 32](cells, out)
    assert_same(cells, np.array([64]))
    assert_same(ck.sort(out), np.arange(64))
