"""The fused linear layer's products (src/ops/linear.c) against NumPy in
float64: forward with and without bias and relu, and the three products of
the backward (the input's, the weight's with the bias's gradient beside it),
over shapes, row strides and both float dtypes.  On a GPU they are
cuBLASLt's or cudakit's own small kernel (src/backend/cuda/cuda_linear.c),
whichever the plan's timing chose; with CUDAKIT_LINEAR_OWN=1 every product
cudakit's kernel can do is its kernel, and the profiler shows its name."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit.nn import functional as F

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(device, dtype, m, n, k, bias, relu, pad, seed):
    rng = np.random.default_rng(seed)
    # x may be a column slice of a wider array: its rows are pad elements apart beyond k
    xw = rng.uniform(-1, 1, (m, k + pad)).astype(dtype)
    w = rng.uniform(-1, 1, (n, k)).astype(dtype)
    b = rng.uniform(-1, 1, n).astype(dtype)
    g = rng.uniform(-1, 1, (m, n)).astype(dtype)
    leaf = ck.asarray(xw, device=device)
    leaf.requires_grad_(True)
    cx = leaf[:, :k] if pad else leaf
    cw = ck.asarray(w, device=device)
    cw.requires_grad_(True)
    cb = None
    if bias:
        cb = ck.asarray(b, device=device)
        cb.requires_grad_(True)
    y = (F._linear_relu if relu else F.linear)(cx, cw, cb)
    (y * ck.asarray(g, device=device)).sum().backward()

    x64, w64, g64 = xw[:, :k].astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    pre = x64 @ w64.T + (b.astype(np.float64) if bias else 0)
    got = ck.asnumpy(y)
    assert got.dtype == np.dtype(dtype) and got.shape == (m, n)
    eps = float(np.finfo(dtype).eps)
    tol = 4 * (k + 1) * eps     # a sum of k + 1 terms of size at most 1, in any order
    want = np.maximum(pre, 0) if relu else pre
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    # the relu's gradient mask from the result computed (a pre-activation
    # within rounding of 0 may fall either side)
    gm = g64 * (got > 0) if relu else g64
    np.testing.assert_allclose(ck.asnumpy(cw.grad), gm.T @ x64, rtol=0, atol=4 * (m + 1) * eps)
    assert cw.grad.dtype == np.dtype(dtype) and cw.grad.shape == (n, k)
    if bias:
        np.testing.assert_allclose(ck.asnumpy(cb.grad), gm.sum(0), rtol=0, atol=4 * (m + 1) * eps)
        assert cb.grad.shape == (n,)
    gx = ck.asnumpy(leaf.grad)
    assert gx.shape == (m, k + pad) and gx.dtype == np.dtype(dtype)
    np.testing.assert_allclose(gx[:, :k], gm @ w64, rtol=0, atol=4 * (n + 1) * eps)
    assert not gx[:, k:].any()


@SETTINGS
@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 300), dtype=st.sampled_from(["float32", "float64"]),
       bias=st.booleans(), relu=st.booleans(), pad=st.sampled_from([0, 0, 3]), seed=st.integers(0, 2**16))
def test_linear_products(device, m, n, k, dtype, bias, relu, pad, seed):
    _check(device, dtype, m, n, k, bias, relu, pad, seed)


@SETTINGS
@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 300), dtype=st.sampled_from(["float32", "float64"]),
       bias=st.booleans(), relu=st.booleans(), pad=st.sampled_from([0, 0, 3]), seed=st.integers(0, 2**16))
def test_linear_products_own_kernel(device, monkeypatch, m, n, k, dtype, bias, relu, pad, seed):
    monkeypatch.setenv("CUDAKIT_LINEAR_OWN", "1")
    _check(device, dtype, m, n, k, bias, relu, pad, seed)


@pytest.mark.parametrize("shape", [(64, 128, 784), (64, 10, 128), (3, 5, 1), (130, 33, 17), (1, 1, 4097)])
def test_own_kernel_runs_and_matches(device, monkeypatch, shape):
    """CUDAKIT_LINEAR_OWN=1 on a GPU: the profile shows cudakit's kernel
    (ck_lin_*) for the forward, the results match NumPy on both devices; a
    seed's MLP layer sizes among the shapes.  The switch is part of a
    plan's key, so no plan made without it answers."""
    monkeypatch.setenv("CUDAKIT_LINEAR_OWN", "1")
    m, n, k = shape
    for dt in ("float32", "float64"):
        x = np.random.default_rng(k).uniform(-1, 1, (m, k)).astype(dt)
        w = np.random.default_rng(n).uniform(-1, 1, (n, k)).astype(dt)
        b = np.linspace(-1, 1, n).astype(dt)
        with ck.profiler.profile() as prof:
            y = F._linear_relu(ck.asarray(x, device=device), ck.asarray(w, device=device), ck.asarray(b, device=device))
            got = ck.asnumpy(y)
        want = np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)
        np.testing.assert_allclose(got, want, rtol=0, atol=4 * (k + 1) * float(np.finfo(dt).eps))
        assert got.dtype == np.dtype(dt)
        names = {e.name for e in prof.events() if e.kind == "kernel"}
        if device != "cpu":
            assert any(nm.startswith("ck_lin_") for nm in names), names


# cudakit's module of small products (src/codegen/cuda_gemm_codegen.h): the
# ck_lin_ kernels (a tile a block, k split over its warps), then the ck_lind_
# ones (the dot-product form of a forward, k split over a warp's lanes)
SMALL_CFGS, DOT_CFGS = 8, 6


@pytest.mark.parametrize("cfg", range(SMALL_CFGS + DOT_CFGS))
@pytest.mark.parametrize("shape,pad", [((64, 128, 784), 0), ((64, 10, 128), 0), ((5, 3, 7), 0), ((33, 17, 130), 0),
                                       ((9, 70, 64), 3), ((2, 1, 1), 0)])
def test_each_own_kernel(device, monkeypatch, cfg, shape, pad):
    """CUDAKIT_LINEAR_OWN=1:<c> makes every plan that cfg c fits take it: each
    kernel of the module, forward (where the dot-product kernels apply, with
    16-byte loads when the rows allow them: pad 3 makes them unaligned) and
    backward, against NumPy; the profile names the forced kernel on a GPU."""
    monkeypatch.setenv("CUDAKIT_LINEAR_OWN", f"1:{cfg}")
    m, n, k = shape
    name = f"ck_lin_{cfg}" if cfg < SMALL_CFGS else f"ck_lind_{cfg - SMALL_CFGS}"
    for dt in ("float32", "float64"):
        if device != "cpu":
            x = np.random.default_rng(k).uniform(-1, 1, (m, k + pad)).astype(dt)
            w = np.random.default_rng(n).uniform(-1, 1, (n, k)).astype(dt)
            with ck.profiler.profile() as prof:
                ck.asnumpy(F.linear(ck.asarray(x, device=device)[:, :k], ck.asarray(w, device=device)))
            names = {e.name for e in prof.events() if e.kind == "kernel"}
            assert name in names, names
        _check(device, dt, m, n, k, bias=True, relu=cfg % 2 == 0, pad=pad, seed=cfg)
