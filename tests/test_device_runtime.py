"""The device runtime on every device: streams, events, synchronisation,
memory figures, pinned memory and Numba's data names work on the CPU as on
a GPU, and what truly needs a GPU fails with one error naming why."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda
from conftest import assert_same


def test_numba_names_on_the_default_device():
    # the issue's example, as a user without a GPU would write it
    x = cuda.to_device(np.arange(10.0))
    s = cuda.stream()
    e0, e1 = cuda.event(), cuda.event()
    e0.record()
    y = cuda.device_array_like(x)
    e1.record()
    e1.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(10.0))
    t = cuda.event_elapsed_time(e0, e1)
    assert isinstance(t, float) and t >= 0
    assert y.shape == (10,) and y.dtype == ck.float64 and y.device == x.device
    assert s.device == x.device
    want = "cuda" if cuda.is_available() else "cpu"
    assert x.device.type == want


def test_issue_snippet_prints_the_values():
    code = textwrap.dedent("""
        import numpy as np
        from cudakit import cuda
        x = cuda.to_device(np.arange(10.0)); s = cuda.stream(); e0, e1 = cuda.event(), cuda.event(); e0.record()
        y = cuda.device_array_like(x); e1.record(); e1.synchronize()
        print(x.copy_to_host(), cuda.event_elapsed_time(e0, e1))
    """)
    env = {k: v for k, v in os.environ.items() if k != "CUDAKIT_DEVICE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    values, ms = out.stdout.rsplit("]", 1)
    assert values.strip() == "[0. 1. 2. 3. 4. 5. 6. 7. 8. 9."
    assert float(ms) >= 0


def _dev(device):
    return ck.Device(device)


def test_streams(device):
    d = _dev(device)
    s = cuda.Stream(device=d)
    assert s.device == d and s.handle is not None
    a = ck.arange(1 << 16, dtype=ck.float32, device=d)
    s.wait_stream(cuda.current_stream(d))      # non-blocking, as PyTorch's: a is written on the default stream
    with s:
        assert cuda.current_stream(d).handle == s.handle
        b = a * 2
    assert cuda.current_stream(d).handle is None
    s.synchronize()
    assert s.query()
    assert_same(b, np.arange(1 << 16, dtype=np.float32) * 2)
    other = cuda.Stream(d)
    other.wait_stream(s)
    other.synchronize()
    least, greatest = cuda.stream_priority_range(d)
    assert greatest <= least
    hi = cuda.Stream(d, priority=greatest)
    with hi:
        c = a + 1
    hi.synchronize()
    assert_same(c, np.arange(1 << 16, dtype=np.float32) + 1)
    with s.auto_synchronize():
        pass
    assert cuda.Stream.null(d).handle is None


def test_events_time_work(device):
    d = _dev(device)
    e0, e1 = cuda.Event(d), cuda.Event(d)
    e0.record()
    if d.type == "cpu":
        time.sleep(0.02)
    else:
        x = ck.ones(1 << 24, device=d)
        for _ in range(10):
            x = x * 1.0001
    e1.record()
    e1.synchronize()
    assert e1.query()
    ms = e0.elapsed_time(e1)
    assert ms >= (15 if d.type == "cpu" else 0)
    s = cuda.Stream(d)
    e1.wait(s)
    s.synchronize()


def test_event_without_timing_or_record(device):
    d = _dev(device)
    a, b = cuda.Event(d, enable_timing=False), cuda.Event(d)
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises((ValueError, RuntimeError)):
        a.elapsed_time(b)


def test_synchronize_and_properties(device):
    d = _dev(device)
    cuda.synchronize(d)
    props = cuda.get_device_properties(d)
    assert props["multi_processor_count"] >= 1
    assert props["max_threads_per_block"] >= 1024
    assert props["warp_size"] == 32
    assert props["total_memory"] > 0


def test_memory_figures_follow_arrays(device):
    d = _dev(device)
    cuda.empty_cache(d)
    before = cuda.memory_stats(d)
    assert set(before) >= {"allocated_bytes", "peak_allocated_bytes", "cached_bytes", "reserved_bytes",
                           "limit_bytes", "num_allocs", "num_device_allocs", "num_ooms"}
    x = ck.empty(1 << 22, dtype=ck.uint8, device=d)
    during = cuda.memory_stats(d)
    assert during["allocated_bytes"] - before["allocated_bytes"] >= 1 << 22
    assert during["num_allocs"] > before["num_allocs"]
    assert cuda.memory_allocated(d) == during["allocated_bytes"]
    del x
    after = cuda.memory_stats(d)
    assert after["allocated_bytes"] == before["allocated_bytes"]
    assert after["peak_allocated_bytes"] >= before["allocated_bytes"] + (1 << 22)
    cuda.reset_peak_memory_stats(d)
    assert cuda.memory_stats(d)["peak_allocated_bytes"] == after["allocated_bytes"]


def test_memory_limit_raises_memory_error(device):
    d = _dev(device)
    cuda.set_memory_limit(cuda.memory_allocated(d) + (8 << 20), d)
    try:
        with pytest.raises(MemoryError, match="limit"):
            ck.empty(64 << 20, dtype=ck.uint8, device=d)
        y = ck.empty(1 << 20, dtype=ck.uint8, device=d)   # the next allocation works
        del y
    finally:
        cuda.set_memory_limit(0, d)


def test_pinned_memory():
    p = cuda.pinned_empty((100, 30), dtype="float32")
    assert p.device.type == "cpu" and p.shape == (100, 30) and p.dtype == ck.float32
    p[...] = 2.5
    q = cuda.pinned_array(np.arange(12).reshape(3, 4))
    assert_same(q, np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError, match="negative"):
        cuda.pinned_empty((-1, 3))


def test_numba_device_arrays(device):
    d = _dev(device)
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = ck.asarray(h, device=d)
    # copy_to_host: a copy, also of CPU arrays, into ary when given
    c = g.copy_to_host()
    assert isinstance(c, np.ndarray)
    np.testing.assert_array_equal(c, h)
    c[0, 0] = -1
    assert float(g[0, 0]) == 0
    out = np.empty_like(h)
    assert g.copy_to_host(out) is out
    np.testing.assert_array_equal(out, h)
    assert cuda.copy_to_host(g[:, ::-1]).tolist() == h[:, ::-1].tolist()
    # to_device into an existing array
    t = ck.zeros((3, 4), dtype=ck.float32, device=d)
    assert cuda.to_device(h * 2, to=t) is t
    assert_same(t, h * 2)
    f = cuda.device_array((3, 4), dtype=np.float32, order="F")
    assert f.flags["F_CONTIGUOUS"] and not f.flags["C_CONTIGUOUS"]
    assert cuda.device_array_like(f).flags["F_CONTIGUOUS"]


def _run_without_gpu(code, **env):
    e = dict(os.environ, CUDAKIT_DISABLE_CUDA="1", **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=e,
                          timeout=120)


def test_one_error_for_what_needs_a_gpu():
    code = """
        import numpy as np
        import cudakit as ck
        from cudakit import cuda
        msgs = []
        for f in (lambda: ck.zeros(3, device="cuda"), lambda: cuda.Device(0), lambda: ck.arange(3).to_device("cuda"),
                  lambda: cuda.Stream(device="cuda"), lambda: cuda.memory_stats("cuda:0"),
                  lambda: ck.set_default_device("cuda"), lambda: cuda.get_current_device(),
                  lambda: cuda.select_device(0)):
            try:
                f()
                msgs.append("no error")
            except cuda.CUDAError as e:
                msgs.append(str(e))
        print("\\n".join(msgs))
        assert not cuda.is_available() and cuda.device_count() == 0
        print(cuda.unavailable_reason())
        # and everything of the device runtime works on the CPU meanwhile
        s = cuda.stream(); s.synchronize(); cuda.synchronize(); print(cuda.to_device([1, 2]).device)
    """
    out = _run_without_gpu(code, CUDAKIT_DEVICE="cpu")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    want = "no usable CUDA device: CUDA is disabled by CUDAKIT_DISABLE_CUDA"
    assert lines[:8] == [want] * 8, lines
    assert lines[8] == "CUDA is disabled by CUDAKIT_DISABLE_CUDA"
    assert lines[9] == "cpu"


def test_cudakit_device_cuda_without_gpu_is_the_same_error():
    out = _run_without_gpu("""
        import cudakit as ck
        try:
            ck.arange(3)
        except ck.cuda.CUDAError as e:
            print(e)
    """, CUDAKIT_DEVICE="cuda")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "no usable CUDA device: CUDA is disabled by CUDAKIT_DISABLE_CUDA"


def test_numba_gpu_names():
    """cuda.gpus, select_device, get_current_device, detect, close as Numba's."""
    n = cuda.device_count()
    assert len(cuda.gpus) == n == len(cuda.list_devices())
    with pytest.raises(IndexError, match=f"no GPU {n}"):
        cuda.gpus[n]
    cuda.close()
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ok = cuda.detect()
    assert ok == (n > 0)
    assert f"Found {n} CUDA device" in buf.getvalue()
    if n:
        d = cuda.gpus[0]
        assert d == cuda.Device(0) and int(d) == 0
        with cuda.gpus[n - 1]:
            assert cuda.get_current_device().id == n - 1
        assert cuda.select_device(0).id == 0 and cuda.gpus.current.id == 0
        assert cuda.get_current_device().compute_capability.isdigit()
