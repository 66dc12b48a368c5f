"""Asynchronous copies between pinned host memory and a device on any
stream (copy_to_host(ary, stream=), set(arr, stream=), get(out=, stream=,
blocking=)), against NumPy; the pool keeping a buffer from other streams
until their copies are done."""
import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda
from conftest import assert_same


def test_round_trip_on_a_stream(device):
    h = np.arange(10000, dtype=np.float32)
    pin_in = cuda.pinned_empty(h.shape, "float32")
    pin_in[...] = ck.asarray(h)
    pin_out = cuda.pinned_empty(h.shape, "float32")
    s = cuda.Stream(device)
    d = ck.empty(h.shape, dtype=ck.float32, device=device)
    d.set(pin_in, stream=s)
    with s:
        e = d * 3 + 1
    r = e.copy_to_host(pin_out, stream=s)
    assert r is pin_out
    s.synchronize()
    np.testing.assert_array_equal(ck.asnumpy(pin_out), h * 3 + 1)


def test_get_into_pinned_memory(device):
    h = np.linspace(0, 1, 333)
    x = ck.asarray(h, device=device)
    out = cuda.pinned_empty(333, "float64")
    s = cuda.Stream(device)
    s.wait_stream(cuda.current_stream(device))     # x is copied in on the default stream
    assert x.get(out=out, stream=s, blocking=False) is out
    s.synchronize()
    np.testing.assert_array_equal(ck.asnumpy(out), h)
    out2 = cuda.pinned_empty(333, "float64")
    x.get(out=out2, stream=s)                      # blocking: done when it returns
    np.testing.assert_array_equal(ck.asnumpy(out2), h)
    assert_same(ck.asarray(x.get(), device=device), h)


def test_pageable_memory_works_synchronously(device):
    h = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = ck.zeros((3, 4), dtype=ck.int32, device=device)
    s = cuda.Stream(device)
    s.wait_stream(cuda.current_stream(device))     # the zeros are written on the default stream
    x.set(h, stream=s)                             # a NumPy array: the synchronous copy, on s
    s.synchronize()
    assert_same(x, h)
    out = ck.zeros((3, 4), dtype=ck.int32, device="cpu")
    x.copy_to_host(out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(ck.asnumpy(out), h)


def test_small_pageable_copies_do_not_wait_and_keep_their_values(device):
    """Small copies from pageable memory return before the GPU has done
    them (through a pinned ring on a GPU), yet each keeps the values its
    source had at the call, however soon the source changes; a long queue
    of them wraps the ring many times."""
    h = np.zeros(50_000, np.float32)                # 200 KB: a training batch
    slow = ck.ones(1 << 22, dtype=ck.float32, device=device)
    outs = []
    for k in range(300):
        if k % 50 == 0:
            slow = ck.sqrt(slow * slow + 1)         # keeps the GPU behind the host
        h[:] = k
        outs.append(ck.asarray(h, device=device, copy=True))
    for k, o in enumerate(outs):
        assert_same(o, np.full(50_000, k, np.float32))
    if ck.asarray(0, device=device).device.type == "cuda":
        cuda.set_sync_debug_mode("error")
        try:
            ck.asarray(h, device=device)
        finally:
            cuda.set_sync_debug_mode("default")


def test_mismatches(device):
    x = ck.zeros(4, dtype=ck.float32, device=device)
    with pytest.raises(ValueError, match="shape mismatch"):
        x.set(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="dtype mismatch"):
        x.set(np.zeros(4, np.float64))
    with pytest.raises(ValueError, match="one dtype and size"):
        x.copy_to_host(cuda.pinned_empty(4, "float64"), stream=cuda.Stream(device))
    with pytest.raises(ValueError, match="C-contiguous"):
        ck.zeros((4, 4), dtype=ck.float32, device=device).T.copy_to_host(cuda.pinned_empty((4, 4), "float32"),
                                                                          stream=cuda.Stream(device))
    with pytest.raises(TypeError, match="stream must be"):
        x.copy_to_host(cuda.pinned_empty(4, "float32"), stream="fast")


def test_chunks_on_several_streams(device):
    n, chunks = 1 << 16, 4
    h = np.random.default_rng(0).random(n).astype(np.float32)
    pin_in = cuda.pinned_empty(n, "float32")
    pin_in[...] = ck.asarray(h)
    pin_out = cuda.pinned_empty(n, "float32")
    streams = [cuda.Stream(device) for _ in range(2)]
    m = n // chunks
    for k in range(chunks):
        s = streams[k % 2]
        d = ck.empty(m, dtype=ck.float32, device=device)
        d.set(pin_in[k * m:(k + 1) * m], stream=s)
        with s:
            r = ck.sqrt(d) * 2
        r.copy_to_host(pin_out[k * m:(k + 1) * m], stream=s)
        del d, r                                   # the pool keeps them until s is done
    for s in streams:
        s.synchronize()
    np.testing.assert_allclose(ck.asnumpy(pin_out), np.sqrt(h) * 2, rtol=1e-6)


def test_a_buffer_freed_while_another_stream_copies_it(device):
    # the copy reads on s; the block must not be handed to the default stream's next array before s is done
    n = 1 << 20
    h = np.arange(n, dtype=np.float32)
    x = ck.asarray(h, device=device)
    out = cuda.pinned_empty(n, "float32")
    s = cuda.Stream(device)
    s.wait_stream(cuda.current_stream(device))     # x is copied in on the default stream
    x.copy_to_host(out, stream=s)
    del x
    y = ck.zeros(n, dtype=ck.float32, device=device)   # same size: the freed block, were it reusable
    y += 7
    s.synchronize()
    np.testing.assert_array_equal(ck.asnumpy(out), h)
    assert float(ck.sum(y)) == 7 * n


def test_streams_destroyed_before_the_arrays_they_copied(device):
    # the H200's crash: a stream going before the blocks it copied were freed
    # named it to the driver again; its handle may also come back with the next
    # stream, whose order does not follow the first one's work
    n = 1 << 18
    h = np.arange(n, dtype=np.float32)
    pin = cuda.pinned_empty(n, "float32")
    pin[...] = ck.asarray(h, device="cpu")
    outs = []
    for k in range(3):
        s = cuda.Stream(device)
        d = ck.empty(n, dtype=ck.float32, device=device)
        d.set(pin, stream=s)
        with s:
            r = d + k
        out = cuda.pinned_empty(n, "float32")
        r.copy_to_host(out, stream=s)
        outs.append((s.record(), out))
        del s                                      # destroyed with its copies queued
        del d, r
    for k, (e, out) in enumerate(outs):
        e.synchronize()
        np.testing.assert_array_equal(ck.asnumpy(out), h + k)


def test_a_pinned_buffer_copied_on_two_streams_is_not_reused_early(device):
    n = 1 << 18
    h = np.random.default_rng(1).random(n).astype(np.float32)
    src = cuda.pinned_empty(n, "float32")
    src[...] = ck.asarray(h, device="cpu")
    d = ck.empty(n, dtype=ck.float32, device=device)
    s1, s2 = cuda.Stream(device), cuda.Stream(device)
    d[: n // 2].set(src[: n // 2], stream=s1)
    d[n // 2:].set(src[n // 2:], stream=s2)
    del src                                        # its copies may still read it
    again = cuda.pinned_empty(n, "float32")        # the same size: the freed buffer, were it reusable
    again[...] = ck.zeros(n, dtype=ck.float32, device="cpu")
    s1.synchronize()
    s2.synchronize()
    assert_same(d, h)


def test_record_stream(device):
    # x is made on the default stream and read on s: noted, its block waits for s once freed
    n = 1 << 20
    h = np.arange(n, dtype=np.float32)
    x = ck.asarray(h, device=device)
    s = cuda.Stream(device)
    s.wait_stream(cuda.current_stream(device))
    with s:
        y = x * 2
    x.record_stream(s)
    del x
    z = ck.full(n, 5, dtype=ck.float32, device=device)   # the same size: x's block, were it reusable
    s.synchronize()
    assert_same(y, h * 2)
    assert_same(z, np.full(n, 5, np.float32))
    with pytest.raises(TypeError, match="stream"):
        y.record_stream(None)
    with pytest.raises(TypeError, match="stream must be"):
        y.record_stream("fast")
