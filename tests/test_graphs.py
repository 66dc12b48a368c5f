"""Graphs (cudakit.cuda.CUDAGraph / cudakit.cuda.graph, as PyTorch spells
them) on every device: captured ops, built-in and user kernels, replayed
against NumPy; the graph's memory pool; what a capture refuses."""
import gc

import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda
from conftest import assert_same

CPU_KERNELS = ck._core._cpu_kernels_available()


def on(device, h):
    return ck.asarray(h, device=device)


def twenty_ops(x):
    y = x
    for i in range(10):
        y = y * np.float32(1.5) + np.float32(i)
    return y


def twenty_ops_np(h):
    y = h
    for i in range(10):
        y = y * np.float32(1.5) + np.float32(i)
    return y


def test_capture_and_replay(device):
    h = np.linspace(-1, 1, 1000, dtype=np.float32)
    x = on(device, h)
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        y = twenty_ops(x)
        s = ck.sum(y * y)
    # a node an op on the CPU; a GPU fuses the element-wise chain (test_graph_fusion.py)
    assert g.node_count >= (20 if device == "cpu" else 2)
    assert g.device == ck.asarray(0, device=device).device
    for k in range(3):
        h2 = (h + k).astype(np.float32)
        x[...] = on(device, h2)          # updating an input: a copy into the captured array
        g.replay()
        want = twenty_ops_np(h2)
        assert_same(y, want)
        assert_same(s, np.sum(want * want), rtol=1e-4)


def test_an_in_place_op_runs_once_a_replay(device):
    x = ck.zeros(100, dtype=ck.int64, device=device)
    with cuda.graph(device=device) as g:
        x += 1
    assert_same(x, np.zeros(100, np.int64))     # captured, not run
    g.replay()
    g.replay()
    assert_same(x, np.full(100, 2, np.int64))


def test_reductions_casts_and_views(device):
    h = np.arange(24, dtype=np.float64).reshape(4, 6)
    x = on(device, h)
    with cuda.graph(device=device) as g:
        a = x.T[::2].astype(ck.float32)
        b = ck.max(x, axis=1)
        c = ck.cumsum(x, axis=0)
        d = ck.where(x > 10, x, -x)
    g.replay()
    assert_same(a, h.T[::2].astype(np.float32))
    assert_same(b, h.max(axis=1))
    assert_same(c, np.cumsum(h, axis=0))
    assert_same(d, np.where(h > 10, h, -h))


def test_memory_from_the_graphs_pool(device):
    dev = ck.asarray(0, device=device).device
    gc.collect()
    before = cuda.memory_stats(dev)["allocated_bytes"]
    x = ck.ones(1000, dtype=ck.float32, device=device)
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        y = twenty_ops(x)
    # the temporaries freed during the capture were reused within it
    assert 0 < g.pool_bytes < 20 * 4000
    g.replay()
    assert_same(y, twenty_ops_np(np.ones(1000, np.float32)))
    del y                                  # the graph keeps its memory: replays still write there
    g.replay()
    del g, x
    gc.collect()
    assert cuda.memory_stats(dev)["allocated_bytes"] == before


def test_many_products_in_one_capture(device):
    """A capture of many matrix products (a whole training epoch's) holds
    one library workspace, not one a product (32 MiB each: an epoch's 4,700
    products once asked the H200 for 150 GB), and replays them right."""
    if device == "cpu":
        pytest.skip("the CPU's float products are NumPy's BLAS, which a CPU graph refuses (test_what_a_capture_refuses)")
    dev = ck.asarray(0, device=device).device
    gc.collect()
    before = cuda.memory_stats(dev)["reserved_bytes"]
    h = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32) / 4
    x = on(device, h)
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        y = x
        for _ in range(300):
            y = y @ x
    grown = cuda.memory_stats(dev)["reserved_bytes"] - before
    assert grown < 64 << 20, grown
    g.replay()
    want = h
    for _ in range(300):
        want = want @ h
    assert_same(y, want, rtol=1e-3, atol=1e-30)


def test_inputs_freed_after_capture_stay_valid(device):
    # On the CPU the graph keeps what its records address, so a replay never
    # touches freed host memory.  On a GPU the driver's graph is opaque: the
    # program keeps the inputs alive, as with PyTorch (docs/graphs.md).
    keep = []

    def build():
        x = ck.arange(1000, dtype=ck.float32, device=device)
        if device != "cpu":
            keep.append(x)
        g = cuda.CUDAGraph(device=device)
        with cuda.graph(g):
            y = x * 2
            x += 1
        return g, y
    g, y = build()
    gc.collect()
    tmp = [ck.zeros(1000, dtype=ck.float32, device=device) for _ in range(8)]   # would reuse freed memory
    g.replay()
    g.replay()
    assert_same(y, np.arange(1000, dtype=np.float32) * 2 + 2)
    assert all(float(ck.sum(t)) == 0 for t in tmp)


@pytest.mark.parametrize("what", ["synchronize", "asnumpy", "item", "float", "nonzero", "mask", "tolist",
                                  "stream_sync", "numpy", "interface"])
def test_what_a_capture_refuses(device, what):
    x = ck.arange(10, dtype=ck.float32, device=device)
    acts = {
        "synchronize": lambda: cuda.synchronize(x.device),
        "asnumpy": lambda: ck.asnumpy(x),
        "item": lambda: x[3].item(),
        "float": lambda: float(x[3]),
        "nonzero": lambda: ck.nonzero(x),
        "mask": lambda: x[x > 3],
        "tolist": lambda: x.tolist(),
        "stream_sync": lambda: cuda.current_stream(x.device).synchronize(),
        "numpy": lambda: np.asarray(x) if device == "cpu" else ck.asnumpy(x),
        "interface": lambda: x.__array_interface__ if device == "cpu" else x.get(),
    }
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        y = x + 1
        with pytest.raises(RuntimeError, match="cannot be captured in a graph"):
            acts[what]()
        z = y * 3                          # the capture goes on
    g.replay()
    assert_same(z, (np.arange(10, dtype=np.float32) + 1) * 3)
    acts[what]()                           # fine outside a capture


def test_capture_errors(device):
    g = cuda.CUDAGraph(device=device)
    with pytest.raises(RuntimeError, match="not been captured"):
        g.replay()
    x = ck.ones(4, device=device)
    g.capture_begin()
    with pytest.raises(RuntimeError, match="capturing a graph already"):
        cuda.CUDAGraph(device=device).capture_begin()
    with pytest.raises(RuntimeError, match="still being captured"):
        g.replay()
    assert cuda.is_current_stream_capturing(x.device)
    y = x + 1
    g.capture_end()
    assert not cuda.is_current_stream_capturing(x.device)
    with pytest.raises(RuntimeError, match="holds a capture"):
        g.capture_begin()
    with pytest.raises(ValueError, match="capture_error_mode"):
        cuda.CUDAGraph(device=device).capture_begin(capture_error_mode="loose")
    g.reset()                              # a new capture after reset
    with cuda.graph(g):
        y = x * 5
    g.replay()
    assert_same(y, np.full(4, 5.0))


def test_an_exception_ends_the_capture(device):
    x = ck.ones(4, device=device)
    g = cuda.CUDAGraph(device=device)
    with pytest.raises(KeyError):
        with cuda.graph(g):
            y = x + 1
            raise KeyError("boom")
    assert not cuda.is_current_stream_capturing(x.device)
    g.replay()
    assert_same(y, np.full(4, 2.0))


def test_a_shared_pool(device):
    x = ck.arange(8, dtype=ck.float64, device=device)
    pool = cuda.graph_pool_handle()
    g1, g2 = cuda.CUDAGraph(device=device), cuda.CUDAGraph(device=device)
    with cuda.graph(g1, pool=pool):
        y = x * 2
    with cuda.graph(g2, pool=g1.pool()):
        z = y + 1
    g1.replay()
    g2.replay()
    assert_same(z, np.arange(8.0) * 2 + 1)
    with pytest.raises(TypeError, match="pool"):
        cuda.CUDAGraph(device=device).capture_begin(pool=3)


def test_a_named_stream(device):
    s = cuda.Stream(device)
    x = ck.arange(6, dtype=ck.float32, device=device)
    g = cuda.CUDAGraph()
    with cuda.graph(g, stream=s):
        assert cuda.current_stream(s.device).handle == s.handle
        y = x - 1
    g.replay()
    s.synchronize()
    assert_same(y, np.arange(6, dtype=np.float32) - 1)


ADD = r'''
extern "C" __global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
'''


def test_a_cuda_c_kernel(device):
    if device == "cpu" and not CPU_KERNELS:
        pytest.skip("CUDA C kernels on the CPU are not available in this build")
    k = ck.RawKernel(ADD, "axpy")
    n = 1000
    x = on(device, np.arange(n, dtype=np.float32))
    y = ck.zeros(n, dtype=ck.float32, device=device)
    k((8,), (128,), (np.float32(2), x, y, np.int32(n)))     # warm-up: compiled before the capture
    with cuda.graph(device=device) as g:
        k((8,), (128,), (np.float32(0.5), x, y, np.int32(n)))
    assert_same(y, np.arange(n, dtype=np.float32) * 2)
    g.replay()
    g.replay()
    assert_same(y, np.arange(n, dtype=np.float32) * 3)


@cuda.jit
def scale_add(x, out, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = out[i] + a * x[i]


def test_a_python_kernel(device):
    if device == "cpu" and not CPU_KERNELS:
        pytest.skip("kernels on the CPU are not available in this build")
    h = np.arange(500, dtype=np.float64)
    x = on(device, h)
    out = ck.zeros(500, dtype=ck.float64, device=device)
    scale_add[4, 128](x, out, 1.0)          # compiled for these types before the capture
    with cuda.graph(device=device) as g:
        scale_add[4, 128](x, out, 2.0)
        r = out * 2
    g.replay()
    assert_same(out, h * 3)
    assert_same(r, h * 6)


def test_elementwise_kernel_and_fuse(device):
    if device == "cpu" and not CPU_KERNELS:
        pytest.skip("kernels on the CPU are not available in this build")
    sq = ck.ElementwiseKernel("float32 x", "float32 y", "y = x * x + 1", "sq_plus_one")
    x = on(device, np.arange(64, dtype=np.float32))
    sq(x)
    with cuda.graph(device=device) as g:
        y = sq(x)
    x[...] = on(device, np.full(64, 3, np.float32))
    g.replay()
    assert_same(y, np.full(64, 10, np.float32))


def test_async_copies_captured(device):
    h = np.arange(256, dtype=np.float32)
    src = cuda.pinned_empty(256, "float32")
    dst = cuda.pinned_empty(256, "float32")
    d = ck.empty(256, dtype=ck.float32, device=device)
    s = cuda.Stream(device)
    with cuda.graph(device=device, stream=s) as g:
        d.set(src, stream=s)
        e = d * 2
        e.copy_to_host(dst, stream=s)
    for k in range(2):
        src[...] = ck.asarray(h + k)
        g.replay()
        cuda.current_stream(d.device).synchronize()
        np.testing.assert_array_equal(ck.asnumpy(dst), (h + k) * 2)


def test_numpy_computed_functions_are_refused_on_the_cpu():
    a = ck.ones((4, 4), device="cpu")
    with cuda.graph(device="cpu"):
        with pytest.raises(RuntimeError, match="cannot be captured"):
            a @ a


def test_a_graph_on_the_cpu_without_a_gpu_device_argument():
    # the default device is where new arrays go (the CPU in these tests)
    x = ck.ones(3)
    with cuda.graph() as g:
        y = x + 1
    g.replay()
    assert_same(y, np.full(3, 2.0))
    assert "CUDAGraph on cpu" in repr(g)


def test_replays_on_several_streams_run_in_order(device):
    # replays share the graph's memory: one on another stream waits for the
    # earlier ones; a stream destroyed with replays queued, then the graph
    # freed, waits for them before the memory goes back
    x = ck.zeros(4096, dtype=ck.float32, device=device)
    g = cuda.CUDAGraph(device=device)
    with cuda.graph(g):
        x += 1
        y = x * 2
    s1, s2 = cuda.Stream(device), cuda.Stream(device)
    with s1:
        for _ in range(3):
            g.replay()
    with s2:
        g.replay()
    del s1
    s3 = cuda.Stream(device)                       # may be given s1's handle
    with s3:
        g.replay()
    s3.synchronize()
    assert_same(x, np.full(4096, 5, np.float32))
    assert_same(y, np.full(4096, 10, np.float32))
    with s2:
        g.replay()
    del s2, g
    assert_same(y, np.full(4096, 12, np.float32))


_CHAIN = """
import numpy as np, cudakit as ck
from cudakit import cuda
dev = {dev!r}
h = np.random.default_rng(3).standard_normal((64, 300)).astype(np.float32)
x = ck.asarray(h, device=dev)
def chain(x):
    y = x
    for i in range(6):
        y = y * np.float32(1.25) - np.float32(i)
        m = ck.max(y, axis=1, keepdims=True)      # a reduction between element-wise ops
        y = y - m
    return y, ck.sum(y)
eager = chain(x)
g = cuda.CUDAGraph(device=dev)
with cuda.graph(g):
    y, s = chain(x)
outs = []
for _ in range(20):
    g.replay()
    outs.append(ck.asnumpy(y).tobytes() + ck.asnumpy(s).tobytes())
assert len(set(outs)) == 1, "replays differ"
print((ck.asnumpy(eager[0]).tobytes() + ck.asnumpy(eager[1]).tobytes()).hex()[:64], outs[0].hex()[:64],
      __import__("hashlib").sha256(outs[0]).hexdigest())
"""


def test_dependent_launches_keep_the_order(device, tmp_path):
    """On a Hopper the element-wise, reduction and training kernels are
    programmatic dependents of the kernel before them (CUDAKIT_PDL; each
    waits for it first): a chain of dependent ops, eager and replayed 20
    times, gives NumPy's values and the same bits as ordinary launches
    (CUDAKIT_PDL=0), in fresh processes."""
    import os
    import subprocess
    import sys

    def chain_np(h):
        y = h
        for i in range(6):
            y = y * np.float32(1.25) - np.float32(i)
            y = y - y.max(axis=1, keepdims=True)
        return y

    h = np.random.default_rng(3).standard_normal((64, 300)).astype(np.float32)
    x = on(device, h)
    y = x
    for i in range(6):
        y = y * np.float32(1.25) - np.float32(i)
        y = y - ck.max(y, axis=1, keepdims=True)
    assert_same(y, chain_np(h))
    runs = {}
    for pdl in ("1", "0"):
        env = dict(os.environ, CUDAKIT_PDL=pdl)
        r = subprocess.run([sys.executable, "-c", _CHAIN.format(dev=device)], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        runs[pdl] = r.stdout.split()
    assert runs["1"] == runs["0"], runs
    assert runs["1"][0] == runs["1"][1], "eager and replayed differ"
