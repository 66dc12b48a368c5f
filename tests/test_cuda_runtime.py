"""The CUDA runtime: devices, streams, events, memory pool, transfers, errors.

Skipped where no GPU is usable; on the CPU they check the no-driver path."""
import pickle

import numpy as np
import pytest

import cudakit as ck
from conftest import assert_same

gpu = pytest.mark.skipif(not ck.cuda.is_available(), reason="no usable CUDA device")


def test_error_classes():
    assert issubclass(ck.cuda.OutOfMemoryError, ck.cuda.CUDAError)
    assert issubclass(ck.cuda.OutOfMemoryError, MemoryError)
    assert issubclass(ck.cuda.CUDAError, RuntimeError)
    assert issubclass(ck.CompileError, RuntimeError)


def test_no_driver_keeps_cpu_working():
    if ck.cuda.is_available():
        pytest.skip("a GPU is present")
    assert ck.cuda.device_count() == 0
    x = ck.arange(5)
    assert_same(x + 1, np.arange(5) + 1)
    with pytest.raises(RuntimeError):
        x.to_device("cuda")


@gpu
def test_device_properties():
    props = ck.cuda.get_device_properties(0)
    assert props["multi_processor_count"] > 0
    d = ck.cuda.Device(0)
    assert d.compute_capability == "%d%d" % props["compute_capability"]
    free, total = d.mem_info
    assert 0 < free <= total
    with d:
        x = ck.ones(4, device="cuda")
    d.synchronize()
    assert x.device == ck.Device("cuda", 0)
    assert str(x.device) == "cuda:0"


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_round_trip(dtype):
    a = (np.arange(1000) % 7).astype(dtype)
    g = ck.asarray(a, device="cuda")
    assert g.device.type == "cuda"
    assert_same(g, a)
    assert_same(ck.asnumpy(g.to_device("cpu")), a)
    assert_same(g.get(), a)


@gpu
def test_large_pageable_copy_staged():
    a = np.random.default_rng(0).standard_normal(20_000_000).astype(np.float32)   # 80 MB: staged
    g = ck.asarray(a, device="cuda")
    np.testing.assert_array_equal(ck.asnumpy(g), a)


@gpu
def test_implicit_numpy_conversion_refused():
    g = ck.ones(3, device="cuda")
    with pytest.raises(TypeError, match="asnumpy"):
        np.asarray(g)


@gpu
def test_elementwise_and_reduce_on_gpu():
    a = np.random.default_rng(1).standard_normal((64, 33)).astype(np.float32)
    g = ck.asarray(a, device="cuda")
    assert_same(g + 1, a + 1)
    assert_same(ck.exp(g[::2, ::-3]), np.exp(a[::2, ::-3]))
    assert_same(g.T * g.T, a.T * a.T)
    np.testing.assert_allclose(float(g.sum()), float(a.sum()), rtol=1e-4)
    assert_same(g.sum(axis=0), a.sum(axis=0), rtol=1e-4)
    assert_same(g.max(axis=1), a.max(axis=1))
    assert_same(g.argmax(axis=1), a.argmax(axis=1))
    assert_same(ck.cumsum(g, axis=1), np.cumsum(a, axis=1), rtol=1e-4, atol=1e-4)


@gpu
def test_mixed_devices_error():
    with pytest.raises(ValueError, match="cpu"):
        ck.ones(3, device="cuda") + ck.ones(3, device="cpu")


@gpu
def test_stream_and_event():
    s = ck.cuda.Stream()
    a = ck.arange(1 << 20, dtype=ck.float32, device="cuda")
    start, end = ck.cuda.Event(), ck.cuda.Event()
    with s:
        start.record()
        b = a * 2
        end.record()
    s.synchronize()
    assert s.query()
    assert end.query()
    assert start.elapsed_time(end) >= 0
    assert_same(b, np.arange(1 << 20, dtype=np.float32) * 2)
    other = ck.cuda.Stream()
    other.wait_event(end)
    other.synchronize()


@gpu
def test_memory_pool_reuses_and_reports():
    ck.cuda.empty_cache()
    before = ck.cuda.memory_stats()
    for _ in range(10):
        x = ck.empty(1 << 20, dtype=ck.float32, device="cuda")
        del x
    st = ck.cuda.memory_stats()
    assert st["num_device_allocs"] - before["num_device_allocs"] <= 1   # reused from the pool
    assert st["cached_bytes"] >= 4 << 20
    ck.cuda.empty_cache()
    assert ck.cuda.memory_stats()["cached_bytes"] == 0


@gpu
def test_out_of_memory_is_catchable():
    free, total = ck.cuda.Device(0).mem_info
    with pytest.raises(ck.cuda.OutOfMemoryError) as info:
        ck.empty(total * 2, dtype=ck.uint8, device="cuda")
    assert isinstance(info.value, MemoryError)
    assert isinstance(info.value, ck.cuda.CUDAError)
    assert "bytes" in str(info.value)
    # the program goes on
    assert_same(ck.ones(3, device="cuda") + 1, np.ones(3) + 1)


@gpu
def test_memory_limit():
    ck.cuda.set_memory_limit(64 << 20)
    try:
        with pytest.raises(ck.cuda.OutOfMemoryError, match="limit"):
            ck.empty(128 << 20, dtype=ck.uint8, device="cuda")
        x = ck.empty(16 << 20, dtype=ck.uint8, device="cuda")
        del x
    finally:
        ck.cuda.set_memory_limit(0)


@gpu
def test_pickle_gpu_array():
    g = ck.arange(6, device="cuda").reshape(2, 3)
    h = pickle.loads(pickle.dumps(g))
    assert h.device == g.device
    assert_same(h, np.arange(6).reshape(2, 3))


@gpu
def test_numba_style_names():
    d = ck.cuda.to_device(np.arange(4.0))
    assert d.device.type == "cuda"
    assert_same(d, np.arange(4.0))


@gpu
def test_pinned_memory_round_trip():
    p = ck.cuda.pinned_empty((1000, 300), dtype="float32")
    assert p.device.type == "cpu"
    p[...] = 1.5
    s = ck.cuda.Stream()
    with s:
        g = ck.asarray(p, device="cuda")   # asynchronous from pinned memory
        h = g * 2
    s.synchronize()
    assert_same(h, np.full((1000, 300), 3.0, dtype=np.float32))
    q = ck.cuda.pinned_array(np.arange(10))
    assert_same(ck.asarray(q, device="cuda"), np.arange(10))
    out = np.empty(10, dtype=np.int64)
    ck.cuda.copy_to_host(ck.asarray(q, device="cuda"), out)
    np.testing.assert_array_equal(out, np.arange(10))


@gpu
def test_dlpack_and_cuda_array_interface_with_other_libraries():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    g = ck.from_dlpack(t)                       # zero copy from PyTorch
    assert g.device.type == "cuda"
    assert_same(g, np.arange(12, dtype=np.float32).reshape(3, 4))
    g[0, 0] = 100.0
    torch.cuda.synchronize()
    assert float(t[0, 0]) == 100.0              # the same memory
    back = torch.from_dlpack(g * 2)             # and back
    assert back.device.type == "cuda" and float(back[0, 0]) == 200.0
    cai = g.__cuda_array_interface__
    assert cai["shape"] == (3, 4) and cai["typestr"] == "<f4" and cai["version"] == 3
    cp = pytest.importorskip("cupy")
    c = cp.asarray(g)                           # CuPy reads __cuda_array_interface__
    assert float(c[0, 0]) == 100.0
    h = ck.asarray(cp.arange(5, dtype=cp.int32))
    assert h.device.type == "cuda"
    assert_same(h, np.arange(5, dtype=np.int32))


two_gpus = pytest.mark.skipif(ck.cuda.device_count() < 2, reason="needs two CUDA devices")


@two_gpus
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_copy_between_gpus(dtype):
    h = (np.arange(3 * 1000) % 251).astype(dtype).reshape(3, 1000)
    a = ck.asarray(h, device="cuda:0")
    b = a.to_device("cuda:1")
    assert b.device == ck.Device("cuda", 1)
    assert_same(b, h)
    # a strided view moves as a contiguous copy; work on the new device follows
    c = a[:, ::-3].to_device(ck.Device("cuda", 1))
    assert_same(c * 2, h[:, ::-3] * 2)
    assert_same(c.to_device("cuda:0"), h[:, ::-3])


@two_gpus
def test_copy_between_gpus_follows_streams():
    s0 = ck.cuda.Stream(device=0)
    n = 1 << 24
    with s0:
        a = ck.arange(n, dtype=ck.float32, device="cuda:0") * 3   # queued on s0
        b = a.to_device("cuda:1")                                 # must follow it
    del a                                                         # block reused on s0 later
    with s0:
        junk = ck.zeros(n, dtype=ck.float32, device="cuda:0")     # may take a's block
    assert float(b[-1]) == float(np.float32(n - 1) * np.float32(3))
    assert_same(b[:1000], np.arange(1000, dtype=np.float32) * 3)
    del junk
