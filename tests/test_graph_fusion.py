"""Chains of element-wise ops in a graph capture.  On a GPU a capture holds
back each small element-wise kernel and launches a chain of them over the
same elements as one fused kernel (src/backend/cuda/cuda_kernels.c); on the
CPU the recorder keeps a record an op.  Either way a replay must equal the
same ops run one by one, whatever the chain's arrays share: intermediates
kept, in-place updates, views of one buffer at other offsets, casts,
reductions and other kernels in between, sizes that change.  Each test runs
on both devices against NumPy."""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cudakit as ck
from cudakit import cuda
from test_graphs import twenty_ops as twenty     # y * 1.5 + i, ten times: NumPy's or cudakit's arrays

FUSE = os.environ.get("CUDAKIT_GRAPH_FUSE", "1") != "0" and os.environ.get("CUDAKIT_EW_FLAT", "1") != "0"


def on(device, h):
    return ck.asarray(h, device=device)


def same(got, want):
    """Replays are the eager ops' to the bit: NumPy's values, dtype, shape."""
    g = ck.asnumpy(got)
    want = np.asarray(want)
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(g, want)


def test_twenty_ops_are_one_node_on_a_gpu(device):
    h = np.linspace(-1, 1, 1000, dtype=np.float32)
    x = on(device, h)
    twenty(x)
    with cuda.graph(device=device) as g:
        y = twenty(x)
    if device == "cuda" and FUSE:
        assert g.node_count == 1
    elif device == "cpu":
        assert g.node_count == 20
    for k in range(3):
        h2 = (h + k).astype(np.float32)
        x[...] = on(device, h2)
        g.replay()
        same(y, twenty(h2))


def test_intermediates_and_in_place_updates(device):
    h = np.arange(-300, 700, dtype=np.float32) / 7
    x = on(device, h)
    with cuda.graph(device=device) as g:
        a = x * 2
        b = a + x
        c = b * a
        a += 1                       # an intermediate updated after its readers
        x -= c                       # the captured input itself
        d = ck.maximum(a, x)
    ha = h * 2
    hb = ha + h
    hc = hb * ha
    ha += 1
    hx = h - hc
    hd = np.maximum(ha, hx)
    g.replay()
    for got, want in ((a, ha), (b, hb), (c, hc), (x, hx), (d, hd)):
        same(got, want)


def test_views_of_one_buffer_at_other_offsets(device):
    """x[:-1] and x[1:] overlap element by element at other addresses: a
    step that reads what an earlier one wrote at another offset cannot run
    in the same thread's pass, so the chain breaks there."""
    h = np.arange(1001, dtype=np.float32)
    x = on(device, h)
    with cuda.graph(device=device) as g:
        a = x[:-1] * 2
        x[1:] += a
        b = x[:-1] + x[1:]
        x[:-1] *= 3
        c = x[1:] - b
    hx = h.copy()
    ha = hx[:-1] * 2
    hx[1:] += ha
    hb = hx[:-1] + hx[1:]
    hx[:-1] *= 3
    hc = hx[1:] - hb
    g.replay()
    if device == "cuda" and FUSE:
        assert g.node_count > 1
    for got, want in ((a, ha), (b, hb), (c, hc), (x, hx)):
        same(got, want)


def test_casts_comparisons_where_and_fills(device):
    hi = np.arange(-500, 500, dtype=np.int32)
    i = on(device, hi)
    with cuda.graph(device=device) as g:
        f = i.astype(ck.float64) * 0.5
        m = f > 1
        w = ck.where(m, f, -f)
        c = w.astype(ck.float32)
        z = ck.zeros_like(c)
        z += c
        r = ck.arange(1000, dtype=ck.float32, device=device)
        s = z + r
    hf = hi.astype(np.float64) * 0.5
    hm = hf > 1
    hw = np.where(hm, hf, -hf)
    hc = hw.astype(np.float32)
    hs = hc + np.arange(1000, dtype=np.float32)
    g.replay()
    for got, want in ((f, hf), (m, hm), (w, hw), (c, hc), (z, hc), (s, hs)):
        same(got, want)


@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128", "uint8", "bool"])
def test_chains_of_other_dtypes(device, dtype):
    """Half precision computes in float and stores a half at each step, as
    the ops one by one do; complex scalars ride as 8 or 16 bytes; small
    integers wrap; booleans combine."""
    rng = np.random.default_rng(5)
    if dtype == "bool":
        ha, hb = rng.random(777) < 0.5, rng.random(777) < 0.3
    else:
        ha = (rng.integers(0, 50, 777) * (1 + 1j if dtype.startswith("complex") else 1)).astype(dtype)
        hb = (rng.integers(1, 9, 777)).astype(dtype)
    a, b = on(device, ha.copy()), on(device, hb.copy())
    if dtype == "bool":
        def prog(x, y, lib):
            u = lib.logical_and(x, y)
            v = lib.logical_or(u, lib.logical_not(y))
            return u, v, lib.logical_xor(v, x), x == v
    else:
        s1 = (2 + 1j) if dtype.startswith("complex") else 3

        def prog(x, y, lib):
            u = x * s1 + y
            v = u - x * y
            return u, v, v * v, u == v
    with cuda.graph(device=device) as g:
        got = prog(a, b, ck)
    want = prog(ha, hb, np)
    g.replay()
    for gv, wv in zip(got, want):
        if dtype == "float16":
            assert ck.asnumpy(gv).dtype == wv.dtype
            np.testing.assert_allclose(ck.asnumpy(gv).astype(np.float64), wv.astype(np.float64), rtol=2e-3)
        else:
            same(gv, wv)


def test_a_reduction_and_other_sizes_in_between(device):
    h = np.linspace(0, 3, 1000, dtype=np.float64)
    x = on(device, h)
    with cuda.graph(device=device) as g:
        y = x * 3
        t = ck.sum(y)                # not element-wise: the chain is launched before it
        z = y - t
        half = z[:500] * 2           # another size: another chain
        w = z + 1
    hy = h * 3
    ht = np.sum(hy)
    hz = hy - ht
    g.replay()
    same(y, hy)
    np.testing.assert_allclose(ck.asnumpy(t), ht, rtol=1e-12)
    np.testing.assert_allclose(ck.asnumpy(z), hy - ck.asnumpy(t), rtol=0, atol=0)
    np.testing.assert_allclose(ck.asnumpy(z), hz, rtol=1e-12, atol=1e-9)
    same(half, ck.asnumpy(z)[:500] * 2)
    same(w, ck.asnumpy(z) + 1)


def test_more_steps_than_one_kernel_holds(device):
    h = np.arange(100, dtype=np.int64)
    x = on(device, h)
    with cuda.graph(device=device) as g:
        y = x
        for k in range(45):
            y = y + k if k % 2 else y * 3 % 1000003
    hy = h
    for k in range(45):
        hy = hy + k if k % 2 else hy * 3 % 1000003
    if device == "cuda" and FUSE:
        assert 1 < g.node_count < 45
    g.replay()
    same(y, hy)


def test_a_user_kernel_between_keeps_its_place(device):
    """A RawKernel launch goes after the held chain, and the ops after it see
    its result."""
    if device == "cpu" and not ck._core._cpu_kernels_available():
        pytest.skip("CUDA C kernels on the CPU are not available in this build")
    k = ck.RawKernel(r'''
    extern "C" __global__ void twice(float *a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) a[i] = 2 * a[i];
    }''', "twice")
    h = np.arange(300, dtype=np.float32)
    x = on(device, h)
    y = x + 1
    k((2,), (256,), (y, np.int32(300)))
    with cuda.graph(device=device) as g:
        y = x + 1
        k((2,), (256,), (y, np.int32(300)))
        z = y * 3
    g.replay()
    same(y, (h + 1) * 2)
    same(z, (h + 1) * 2 * 3)


def test_turned_off_a_node_a_kernel():
    if not ck.cuda.is_available():
        pytest.skip("a GPU's capture")
    code = ("import numpy as np, cudakit as ck\nfrom cudakit import cuda\n"
            "x = ck.ones(1000, dtype=ck.float32, device='cuda')\n"
            "with cuda.graph(device='cuda') as g:\n"
            "    y = x\n"
            "    for i in range(10):\n"
            "        y = y * np.float32(1.5) + np.float32(i)\n"
            "g.replay()\nprint(g.node_count, float(y[0]))\n")
    env = dict(os.environ, CUDAKIT_GRAPH_FUSE="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    nodes, v = r.stdout.split()
    want = np.float32(1)
    for i in range(10):
        want = want * np.float32(1.5) + np.float32(i)
    assert int(nodes) == 20 and float(v) == float(want)


# A random program over a few arrays of one size: new arrays from two
# others or one and a scalar, in-place updates, shifted views of one array
# updated from another, a reversed (strided) view, a sum; captured, then
# replayed twice from the same inputs, against NumPy run step by step.
_OPS = ("add", "subtract", "multiply", "maximum")


@st.composite
def programs(draw):
    n = draw(st.integers(2, 1200))
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "int64"]))
    steps = []
    narr = 2
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["new", "scalar", "inplace", "shift", "reversed", "sum"]))
        a = draw(st.integers(0, narr - 1))
        b = draw(st.integers(0, narr - 1))
        op = draw(st.sampled_from(_OPS))
        if kind == "shift" and a == b:
            kind = "inplace"
        steps.append((kind, op, a, b, draw(st.integers(-3, 3))))
        if kind in ("new", "scalar", "reversed"):
            narr += 1
    return n, dtype, steps


def _run(steps, arrs, lib):
    arrs = list(arrs)
    sums = []
    for kind, op, a, b, c in steps:
        f = getattr(lib, op)
        if kind == "new":
            arrs.append(f(arrs[a], arrs[b]))
        elif kind == "scalar":
            arrs.append(f(arrs[a], c))
        elif kind == "inplace":
            f(arrs[a], arrs[b], out=arrs[a])
        elif kind == "shift":
            dst = arrs[a][1:]
            f(dst, arrs[b][:-1], out=dst)
        elif kind == "reversed":
            arrs.append(arrs[a][::-1] + arrs[b])
        else:
            sums.append(lib.sum(arrs[a]))
            if lib is np:      # the bound of a sum in another order: eps * sum(|x|) * terms
                sums[-1] = (sums[-1], np.sum(np.abs(arrs[a].astype(np.float64))) * arrs[a].size)
    return arrs, sums


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prog=programs(), seed=st.integers(0, 2**16))
def test_random_programs_replay_as_run(device, prog, seed):
    n, dtype, steps = prog
    rng = np.random.default_rng(seed)
    h0 = [(rng.integers(-9, 10, n)).astype(dtype) for _ in range(2)]
    want, want_sums = _run(steps, [h.copy() for h in h0], np)
    xs = [on(device, h.copy()) for h in h0]      # on the CPU asarray may share h's memory
    with cuda.graph(device=device) as g:
        got, got_sums = _run(steps, xs, ck)
    for rep in range(2):
        for x, h in zip(xs, h0):
            x[...] = on(device, h.copy())
        g.replay()
        for gv, wv in zip(got, want):
            same(gv, wv)
        for gv, (wv, bound) in zip(got_sums, want_sums):
            if np.dtype(dtype).kind == "f":      # another order of addition
                gv = ck.asnumpy(gv)
                assert gv.dtype == wv.dtype
                if np.isfinite(wv) and np.isfinite(bound):
                    assert abs(float(gv) - float(wv)) <= np.finfo(dtype).eps * bound, (gv, wv, bound)
                else:
                    np.testing.assert_array_equal(np.isfinite(gv), np.isfinite(wv))
            else:
                same(gv, wv)
