"""cudakit.profiler, cudakit.cuda.nvtx and the sync debug mode: what a
profile records (ops, built-in and user kernels, copies, ranges: names,
shapes, dtypes, grid and block, host and device times), key_averages and
its table, the Chrome trace; the sync debug mode's warnings and errors; a
GPU fault found at a later synchronisation naming the kernel."""
import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cudakit as ck
from cudakit import cuda

from conftest import assert_same

SCALE = r'''extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}'''


@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def by_name(events, name):
    return [e for e in events if e.name == name]


def test_ops_are_recorded_with_shapes_dtypes_and_times(device):
    x = ck.arange(1000, dtype=ck.float32, device=device)
    with ck.profiler.profile() as prof:
        y = x + 1
        s = y.sum()
    assert_same(y, np.arange(1000, dtype=np.float32) + 1)
    assert_same(s, (np.arange(1000, dtype=np.float32) + 1).sum())
    ev = prof.events()
    (add,) = by_name(ev, "add")
    assert add.kind == "op" and add.device == ("cpu" if device == "cpu" else "cuda:0")
    assert add.input_shapes == "[[1000], [], [1000]]"
    assert add.dtypes == "float32, float32, float32"
    assert add.cpu_time > 0 and add.cpu_start <= add.cpu_end
    (total,) = by_name(ev, "sum")
    assert total.input_shapes == "[[1000], []]"
    if device == "cpu":
        assert add.device_time is None
    else:
        assert add.device_time > 0
        kernels = [e for e in ev if e.kind == "kernel" and e.parent == add.id]
        assert kernels, ev
        k = kernels[0]
        assert k.device_time > 0 and k.grid[0] >= 1 and k.block[0] >= 1
        assert k.device_start >= add.device_start - 1.0


def test_record_function_nests_the_ops(device):
    x = ck.ones(100, dtype=ck.float64, device=device)
    with ck.profiler.profile() as prof:
        with ck.profiler.record_function("outer"):
            with ck.profiler.record_function("inner"):
                y = x * 2
            z = y - 1
    assert_same(z, np.ones(100) * 2 - 1)
    ev = prof.events()
    (outer,), (inner,) = by_name(ev, "outer"), by_name(ev, "inner")
    (mul,), (sub,) = by_name(ev, "multiply"), by_name(ev, "subtract")
    assert outer.kind == inner.kind == "range"
    assert inner.parent == outer.id and mul.parent == inner.id and sub.parent == outer.id
    assert outer.cpu_start <= inner.cpu_start <= mul.cpu_start <= mul.cpu_end <= inner.cpu_end <= outer.cpu_end


def test_record_function_as_a_decorator_and_outside_a_profile(device):
    @ck.profiler.record_function("step")
    def step(a):
        return a + a

    x = ck.arange(10, device=device)
    assert_same(step(x), np.arange(10) * 2)    # no profile on: nothing recorded, nothing raised
    with ck.profiler.profile() as prof:
        step(x)
        step(x)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["step"].count == 2 and avg["add"].count == 2
    assert avg["step"].self_cpu_time_total <= avg["step"].cpu_time_total


def test_user_kernels_cuda_c_and_python(device):
    n = 1000
    x = ck.arange(n, dtype=ck.float32, device=device)
    k = ck.RawKernel(SCALE, "scale")
    k((4,), (256,), (x, np.float32(3), np.int32(n)))    # compiled before the profile
    add_one[4, 256](x)
    with ck.profiler.profile() as prof:
        k((4,), (256,), (x, np.float32(2), np.int32(n)))
        add_one[4, 256](x)
    assert_same(x, (np.arange(n, dtype=np.float32) * 3 + 1) * 2 + 1)
    ev = prof.events()
    (sc,) = by_name(ev, "scale")
    assert sc.kind == "kernel" and sc.grid == (4, 1, 1) and sc.block == (256, 1, 1)
    py = [e for e in ev if e.kind == "kernel" and "add_one" in e.name]
    assert len(py) == 1 and py[0].grid == (4, 1, 1)
    if device == "cuda":
        assert sc.device_time > 0 and py[0].device_time > 0
        # the user launch is one record, not one from the backend and one from the driver's hook
        assert sum(e.kind == "kernel" for e in ev) == 2, ev


def test_copies_are_recorded(device):
    a = np.arange(1 << 16, dtype=np.float32)
    with ck.profiler.profile() as prof:
        x = ck.asarray(a, device=device)
        back = ck.asnumpy(x + 1)
    np.testing.assert_array_equal(back, a + 1)
    copies = [e for e in prof.events() if e.kind == "copy"]
    if device == "cpu":
        assert copies == []     # a CPU array is the host's memory: nothing moves
    else:
        names = [c.name for c in copies]
        assert "memcpy HtoD" in names and "memcpy DtoH" in names
        assert all(c.bytes == a.nbytes for c in copies)
        assert all(c.device_time is not None for c in copies)


def test_key_averages_and_table(device):
    x = ck.arange(1000, dtype=ck.float32, device=device)
    with ck.profiler.profile() as prof:
        for _ in range(5):
            x = x + 1
        x.sum()
    avg = prof.key_averages()
    add = next(a for a in avg if a.key == "add")
    assert add.count == 5 and add.cpu_time_total > 0
    assert add.cpu_time == pytest.approx(add.cpu_time_total / 5)
    t = prof.key_averages().table(sort_by="count", row_limit=10)
    lines = t.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert lines[3].startswith("add")          # the most calls first
    assert ("CUDA total" in lines[1]) == (device == "cuda")
    assert "Self CPU time total" in t
    one = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    # header, a row, the CPU total (and the CUDA total on a GPU)
    assert len([ln for ln in one.splitlines() if ln and not ln.startswith("-")]) == 3 + (device == "cuda")
    by_shape = prof.key_averages(group_by_input_shape=True)
    assert any(a.input_shapes == "[[1000], [], [1000]]" for a in by_shape)
    assert "Input Shapes" in by_shape.table()
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nonsense")
    if device == "cuda":
        t = prof.key_averages().table(sort_by="cuda_time_total")
        assert add.device_time_total > 0 and add.self_device_time_total >= 0


def test_chrome_trace(device, tmp_path):
    x = ck.arange(1000, dtype=ck.float32, device=device)
    with ck.profiler.profile() as prof:
        with ck.profiler.record_function("my \"quoted\" range"):
            y = (x * 2).sum()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ev = trace["traceEvents"]
    spans = [e for e in ev if e["ph"] == "X"]
    names = {e["name"] for e in spans}
    assert {"multiply", "sum", 'my "quoted" range'} <= names
    mul = next(e for e in spans if e["name"] == "multiply" and e["pid"] == 0)
    assert mul["cat"] == "cpu_op" and mul["dur"] >= 0 and mul["args"]["Input Dims"] == "[[1000], [], [1000]]"
    assert any(e["ph"] == "M" and e["args"]["name"] == "host" for e in ev)
    if device == "cuda":
        dev_spans = [e for e in spans if e["pid"] >= 1]
        assert any(e["cat"] == "kernel" for e in dev_spans)
        assert any(e["ph"] == "s" for e in ev) and any(e["ph"] == "f" for e in ev)
    del y


def test_profile_errors_and_state(tmp_path):
    x = ck.arange(10)
    with ck.profiler.profile() as prof:
        with pytest.raises(RuntimeError, match="still on"):
            prof.key_averages()
        with pytest.raises(RuntimeError, match="already on"):
            ck.profiler.profile().start()
        x + 1
    assert by_name(prof.events(), "add")
    with ck.profiler.profile() as later:
        x + 2
    with pytest.raises(RuntimeError, match="later profile"):
        prof.export_chrome_trace(str(tmp_path / "t.json"))
    later.export_chrome_trace(str(tmp_path / "t.json"))
    assert by_name(prof.events(), "add")        # the Python copies stay readable
    with ck.profiler.profile(enabled=False) as off:
        x + 3
    with pytest.raises(RuntimeError, match="recorded nothing"):
        off.events()
    with pytest.raises(NotImplementedError):
        ck.profiler.profile(with_stack=True)
    with pytest.raises(NotImplementedError):
        ck.profiler.profile(schedule=None)
    with pytest.raises(RuntimeError, match="no range is open"):
        ck._core._profiler_range_pop()
    with pytest.raises(ValueError, match="cannot open"):
        with ck.profiler.profile() as p:
            x + 1
        p.export_chrome_trace(str(tmp_path / "no" / "such" / "dir.json"))
    # PyTorch's activities are accepted
    with ck.profiler.profile(activities=[ck.profiler.ProfilerActivity.CPU, ck.profiler.ProfilerActivity.CUDA]):
        x + 1


def test_an_op_that_fails_while_profiling(device):
    x = ck.arange(10, device=device)
    with ck.profiler.profile() as prof:
        with pytest.raises(ValueError):
            x.reshape(3, 4)
        with pytest.raises(ValueError):
            x ** -1          # integers to negative integer powers
        y = x + 1
    assert_same(y, np.arange(10) + 1)
    assert all(e.cpu_end >= e.cpu_start for e in prof.events())


def test_profiling_from_threads(device):
    import threading
    x = ck.arange(1000, dtype=ck.float64, device=device)
    out = [None] * 4

    def work(i):
        with ck.profiler.record_function(f"thread{i}"):
            out[i] = (x + i).sum()

    with ck.profiler.profile() as prof:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    for i in range(4):
        assert_same(out[i], (np.arange(1000.0) + i).sum())
    ev = prof.events()
    for i in range(4):
        (r,) = by_name(ev, f"thread{i}")
        kids = [e for e in ev if e.parent == r.id]
        assert {k.name for k in kids} == {"add", "sum"} and all(k.thread == r.thread for k in kids)


def test_nvtx():
    from cudakit.cuda import nvtx
    assert isinstance(nvtx.is_available(), bool)
    nvtx.range_push("a")
    nvtx.mark("here")
    nvtx.range_pop()
    with nvtx.range("b {}", 1):
        pass
    x = ck.arange(10)
    with ck.profiler.profile(nvtx=True) as prof:
        with ck.profiler.record_function("r"):
            x + 1
    assert by_name(prof.events(), "add")


def test_sync_debug_mode_api():
    assert cuda.get_sync_debug_mode() == 0
    try:
        for mode, num in (("warn", 1), ("error", 2), ("default", 0), (1, 1), (0, 0)):
            cuda.set_sync_debug_mode(mode)
            assert cuda.get_sync_debug_mode() == num
        for bad in ("loud", 3, -1, 1.5, True):
            with pytest.raises(RuntimeError, match="debug_mode"):
                cuda.set_sync_debug_mode(bad)
    finally:
        cuda.set_sync_debug_mode(0)


def _sync_cases(x, idx):
    yield "asnumpy", "a copy to the host", lambda: ck.asnumpy(x)
    yield "take", "bounds check of integer indices", lambda: x[idx]
    yield "item", "a copy to the host", lambda: x[3].item()
    yield "nonzero", "number of true elements", lambda: ck.nonzero(x > 3)
    yield "mask", "number of true elements", lambda: x[x > 3]
    yield "print", "a copy to the host", lambda: repr(x)


def test_sync_debug_mode_reports_the_op(device):
    x = ck.arange(8, dtype=ck.float32, device=device)
    idx = ck.asarray([1, 5, 2], device=device)
    try:
        cuda.set_sync_debug_mode("warn")
        for name, why, fn in _sync_cases(x, idx):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn()
            msgs = [str(m.message) for m in w if "synchronizing" in str(m.message)]
            if device == "cpu":
                assert msgs == [], (name, msgs)     # the CPU never waits
            else:
                assert msgs and why in msgs[0], (name, msgs)
                assert len(msgs) == 1, (name, msgs)  # one wait, one report
                assert w[0].filename == __file__, (name, w[0].filename)  # at the caller's line
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = x + 1                               # asynchronous: never reported
            cuda.synchronize()                      # asked for: never reported
            z = y * 2
        cuda.set_sync_debug_mode("error")
        if device == "cuda":
            with pytest.raises(RuntimeError, match="synchronizing CUDA operation.*number of true elements"):
                x[x > 3]
            with pytest.raises(RuntimeError, match="a copy to the host"):
                ck.asnumpy(x)
        else:
            assert_same(x[x > 3], np.arange(4, 8, dtype=np.float32))
        w2 = z + 1                                  # the op after an error runs
    finally:
        cuda.set_sync_debug_mode("default")
    assert_same(w2, (np.arange(8, dtype=np.float32) + 1) * 2 + 1)


def test_sync_debug_mode_warning_filter_error(device):
    if device == "cpu":
        pytest.skip("the CPU never waits")
    x = ck.arange(8, dtype=ck.float32, device=device)
    try:
        cuda.set_sync_debug_mode("warn")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeError, match="synchronizing"):
                ck.asnumpy(x)
    finally:
        cuda.set_sync_debug_mode(0)


FAULT = r'''
import sys, cudakit as ck, numpy as np
bad = ck.RawKernel(r"""extern "C" __global__ void write_nowhere(float *p) {
    p[(size_t)1 << 40] = 1.0f;
}""", "write_nowhere")
x = ck.zeros(16, dtype=ck.float32, device="cuda")
s = ck.cuda.Stream()
try:
    with s:
        bad((1,), (1,), (x,))
        y = x + 1                # queued behind it (or refused, if the fault is known by then)
    ck.cuda.synchronize()
    print("NO ERROR")
except ck.cuda.CUDAError as e:
    print("RAISED |", e)
'''


def test_an_asynchronous_fault_names_the_kernel(device):
    if device == "cpu":
        pytest.skip("a CPU kernel's fault is synchronous: test_kernel_faults.py")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(FAULT)], capture_output=True, text=True, timeout=300)
    assert "RAISED |" in r.stdout, r.stdout + r.stderr
    msg = r.stdout.split("RAISED |", 1)[1]
    assert "sticky" in msg and "'write_nowhere'" in msg and "on stream 0x" in msg, msg


def test_example_profile(device, tmp_path):
    if device == "cpu" and not ck._core._cpu_kernels_available():
        pytest.skip("CUDA C kernels on the CPU are not available in this build")
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "profile.py")
    spec = importlib.util.spec_from_file_location("example_profile", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    trace = str(tmp_path / "trace.json")
    host, x, result, prof, written = mod.main(device, rows=8, cols=1000, trace=trace)
    want_x, want_e = mod.reference(host)
    assert_same(x, want_x.astype(np.float32), rtol=1e-4, atol=1e-5)
    assert_same(result, want_e.astype(np.float32), rtol=1e-4)
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["step"].count == 3 and avg["clip"].count == 3 and avg["clip"].kind == "kernel"
    assert written == trace and json.load(open(trace))["traceEvents"]
    run = subprocess.run([sys.executable, path, "--device", device, "--trace", str(tmp_path / "t2.json")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"on {device}" in run.stdout and "agree with NumPy: True" in run.stdout, run.stdout
    assert "# of Calls" in run.stdout
