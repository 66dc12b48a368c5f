"""A soak of cudakit on one device: a loop, for a given time, of mixed work
on random shapes and dtypes, each result checked against NumPy:

  ops       element-wise ops over broadcast operands, reductions, matmul,
            sort, indexing (slices, integer and boolean arrays), joins, casts
  kernels   a RawKernel (saxpy), an ElementwiseKernel, and kernels written
            in Python (cudakit.cuda.jit): a block sum in shared memory with
            barriers, a histogram of atomics, over random sizes
  streams   work on two streams ordered by an event, events timed
  oom       the pool capped (cuda.set_memory_limit) and allocated past the
            cap until it raises cuda.OutOfMemoryError (MemoryError on the
            CPU), then 2^50 bytes with no cap; then everything freed and
            the next allocation must work
  fault     a child process launches a kernel that writes through a bad
            pointer, traps, or (written in Python) stores far out of its
            array: the child must report the error with the kernel's name
            and not die of a signal; the parent goes on

It reports the memory pool's figures at the start, after the first round
and at the end (and once its cache is emptied), and fails if the in-use
bytes do not come back to where they started.

    make soak DURATION=10m        # on the GPU machine: build, then the soak, into $(OUT)
    python tests/soak/soak.py --device cuda --duration 10m --log build/out/soak.log --json build/out/soak.json
    python tests/soak/soak.py --device cpu --duration 5s    # as tests/test_soak.py runs it

Exit status 0 when every check held, 1 otherwise (each failure logged)."""
import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
import traceback

import numpy as np

import cudakit as ck
from cudakit import cuda

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _pyk_kernels import block_sum  # noqa: E402 - the tests' block sum in shared memory, 256 threads a block


# Python kernels are read from their file's source (cuda.jit): module level.
@cuda.jit
def soak_histogram(x, bins):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < x.size:
        cuda.atomic.add(bins, x[i], 1)
        i += stride


@cuda.jit
def soak_py_bad_write(out, off):
    if cuda.threadIdx.x == 0:
        out[off] = 1


DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]
FLOATS = ["float32", "float64"]


class Failure(Exception):
    pass


class Soak:
    def __init__(self, device, seed, max_elems, log):
        self.device = device
        self.dev = ck.Device(device)
        self.rng = np.random.default_rng(seed)
        self.pick = random.Random(seed)
        self.max_elems = max_elems
        self.log_file = log
        self.counts = {}
        self.failures = []
        self.notes = []
        self._saxpy = None
        self._ew = None

    # ------------------------------------------------------------ helpers
    def log(self, msg):
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        if self.log_file:
            self.log_file.write(line + "\n")
            self.log_file.flush()

    def stats(self):
        return cuda.memory_stats(self.dev)

    def arr(self, a):
        return ck.asarray(a, device=self.device)

    def data(self, shape, dtype):
        dt = np.dtype(dtype)
        if dt.kind == "b":
            return self.rng.integers(0, 2, shape).astype(bool)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return self.rng.integers(max(int(info.min), -100), min(int(info.max), 100), shape, endpoint=True).astype(dt)
        v = self.rng.standard_normal(shape)
        if dt.kind == "c":
            v = v + 1j * self.rng.standard_normal(shape)
        return v.astype(dt)

    def shape(self, max_dims=3, max_elems=None):
        """A random shape, its size log-uniform up to max_elems."""
        max_elems = max_elems or self.max_elems
        nd = self.pick.randint(1, max_dims)
        total = int(np.exp(self.rng.uniform(0, np.log(max_elems))))
        dims = []
        for _ in range(nd - 1):
            d = self.pick.randint(1, max(1, int(round(total ** (1 / nd)))) * 2)
            dims.append(d)
            total = max(1, total // d)
        dims.append(max(1, total))
        self.pick.shuffle(dims)
        return tuple(dims)

    def check(self, what, got, want, rtol=None, atol=0):
        got = ck.asnumpy(got) if isinstance(got, ck.ndarray) else np.asarray(got)
        want = np.asarray(want)
        if got.shape != want.shape or got.dtype != want.dtype:
            raise Failure(f"{what}: {got.dtype}{got.shape}, NumPy {want.dtype}{want.shape}")
        if want.dtype.kind in "fc":
            if rtol is None:
                rtol = {"float16": 1e-2, "float32": 1e-4, "complex64": 1e-4}.get(want.dtype.name, 1e-10)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(got, want, err_msg=what)

    # -------------------------------------------------------------- tasks
    def task_ops(self):
        kind = self.pick.choice(["binary", "unary", "reduce", "matmul", "sort", "index", "join", "cast"])
        dt = self.pick.choice(DTYPES)
        shape = self.shape()
        a = self.data(shape, dt)
        x = self.arr(a)
        if kind == "binary":
            # the second operand broadcasts: some of its dims set to 1
            bshape = tuple(1 if self.pick.random() < 0.3 else s for s in shape)
            dt2 = self.pick.choice(DTYPES)
            b = self.data(bshape, dt2)
            name = self.pick.choice(["add", "multiply", "maximum", "less", "subtract", "where"])
            if name == "subtract" and (a.dtype == bool or b.dtype == bool):
                name = "add"
            if name == "where":
                self.check("where", ck.where(x > 0, x, self.arr(b)), np.where(a > 0, a, b))
            else:
                self.check(f"{name} {dt} {dt2} {shape} {bshape}", getattr(ck, name)(x, self.arr(b)),
                           getattr(np, name)(a, b), rtol=1e-2 if "float16" in (dt, dt2) else None)
        elif kind == "unary":
            if a.dtype.kind not in "fc":
                a = a.astype(np.float32)
                x = self.arr(a)
            self.check(f"sqrt(abs) {a.dtype}{shape}", ck.sqrt(ck.abs(x)), np.sqrt(np.abs(a)))
            self.check(f"exp {a.dtype}{shape}", ck.exp(x * 0.1), np.exp(a * a.dtype.type(0.1)),
                       rtol=1e-2 if a.dtype == np.float16 else 1e-5)
        elif kind == "reduce":
            axis = self.pick.choice([None] + list(range(len(shape))))
            name = self.pick.choice(["sum", "max", "argmax", "mean", "any"])
            if name in ("sum", "mean") and a.dtype.kind in "fc":
                a = a.astype(np.float64 if a.dtype.itemsize >= 8 else np.float32)
                x = self.arr(a)
            want = getattr(np, name)(a, axis=axis)
            got = getattr(ck, name)(x, axis=axis)
            n = a.size if axis is None else shape[axis]
            self.check(f"{name} axis {axis} {a.dtype}{shape}", got, want,
                       rtol=1e-3 if a.dtype.kind in "fc" else None, atol=1e-3 * np.sqrt(n))
        elif kind == "matmul":
            m, k, n = (self.pick.randint(1, int(self.max_elems ** (1 / 3)) + 1) for _ in range(3))
            dtm = self.pick.choice(FLOATS)
            p, q = self.data((m, k), dtm), self.data((k, n), dtm)
            self.check(f"matmul {dtm} {m}x{k}x{n}", self.arr(p) @ self.arr(q), p @ q,
                       rtol=1e-3 if dtm == "float32" else 1e-9, atol=1e-3 * np.sqrt(k))
        elif kind == "sort":
            if a.dtype.kind == "c":
                a = a.real.copy()
                x = self.arr(a)
            axis = self.pick.randrange(len(shape))
            self.check(f"sort axis {axis} {a.dtype}{shape}", ck.sort(x, axis=axis), np.sort(a, axis=axis))
        elif kind == "index":
            flat = a.reshape(-1)
            xf = x.reshape(-1)
            idx = self.rng.integers(-flat.size, flat.size, self.pick.randint(1, 1000))
            self.check("take", xf[self.arr(idx)], flat[idx])
            mask = self.rng.random(a.shape) < 0.3
            self.check("mask", x[self.arr(mask)], a[mask])
            step = self.pick.choice([1, 2, -1, -3])
            self.check("slice", x[::step], a[::step])
            y = x.copy()
            y[self.arr(mask)] = 0
            b = a.copy()
            b[mask] = 0
            self.check("mask assign", y, b)
        elif kind == "join":
            axis = self.pick.randrange(len(shape))
            parts = [a, self.data(shape, dt)[..., ::-1], self.data(shape, dt)]
            self.check(f"concatenate axis {axis} {dt}{shape}", ck.concatenate([self.arr(p) for p in parts], axis=axis),
                       np.concatenate(parts, axis=axis))
            self.check("stack", ck.stack([self.arr(p) for p in parts], axis=-1), np.stack(parts, axis=-1))
            self.check("transpose copy", ck.ascontiguousarray(x.T), np.ascontiguousarray(a.T))
        else:
            to = self.pick.choice(DTYPES)
            if a.dtype.kind == "c" and np.dtype(to).kind != "c":
                a = a.real.copy()
                x = self.arr(a)
            with np.errstate(all="ignore"):
                want = a.astype(to)
            self.check(f"astype {a.dtype}->{to}", x.astype(to), want)
        return kind

    def task_kernels(self):
        if self._saxpy is None:
            self._saxpy = ck.RawKernel(r"""
extern "C" __global__ void soak_saxpy(float a, const float *x, float *y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}""", "soak_saxpy")
            self._ew = ck.ElementwiseKernel("T x, T y, T a", "T z", "z = x * a + y", "soak_fma")
        n = self.pick.randint(1, self.max_elems)
        x, y = self.data(n, "float32"), self.data(n, "float32")
        cx, cy = self.arr(x), self.arr(y)
        block = self.pick.choice([32, 128, 256, 1024])
        grid = min((n + block - 1) // block, self.pick.choice([1, 7, 1 << 16]))
        want = np.float32(2.5) * x + y   # first: a CPU array may share y's memory
        self._saxpy((grid,), (block,), (np.float32(2.5), cx, cy, np.int64(n)))
        # a GPU contracts a * x + y into one rounding (FMA): where it cancels, the
        # two differ by an ulp of the terms, not of the result
        fma = 4e-7 * float(np.abs(want).max()) if n else 0.0
        self.check(f"RawKernel saxpy n={n} grid={grid} block={block}", cy, want, rtol=1e-6, atol=fma)
        dt = self.pick.choice(["float32", "float64", "int32"])
        p, q = self.data(n, dt), self.data(n, dt)
        z = self._ew(self.arr(p), self.arr(q), np.dtype(dt).type(3))
        want = p * np.dtype(dt).type(3) + q
        self.check(f"ElementwiseKernel {dt} n={n}", z, want, rtol=1e-6,
                   atol=4 * np.finfo(dt).eps * float(np.abs(want).max()) if dt != "int32" and n else 0)
        # Python kernels: 256 threads a block (the shared array's size)
        h = np.round(self.data(n, "float32") * 4)   # small integers: every order of the sum is exact
        blocks = (n + 255) // 256
        partial = ck.zeros(blocks, dtype=ck.float32, device=self.device)
        block_sum[blocks, 256](self.arr(h), partial)
        self.check(f"cuda.jit block sum n={n}", partial.sum(dtype="float64"), h.astype(np.float64).sum())
        nb = self.pick.choice([1, 16, 1000])
        v = self.rng.integers(0, nb, n).astype(np.int32)
        bins = ck.zeros(nb, dtype=ck.int32, device=self.device)
        soak_histogram[self.pick.choice([1, 3, 64]), self.pick.choice([32, 256])](self.arr(v), bins)
        self.check(f"cuda.jit histogram n={n} bins={nb}", bins, np.bincount(v, minlength=nb).astype(np.int32))
        return "kernels"

    def task_streams(self):
        s1, s2 = cuda.Stream(device=self.dev), cuda.Stream(device=self.dev)
        e0, e1 = cuda.Event(self.dev), cuda.Event(self.dev)
        n = self.pick.randint(1, self.max_elems)
        a = self.data(n, "float32")
        with s1:
            e0.record(s1)
            x = self.arr(a)
            y = x * 2 + 1
            e1.record(s1)
        s2.wait_event(e1)
        with s2:
            z = y.sum(dtype="float64")
            w = ck.sort(y)
        s2.synchronize()
        e1.synchronize()
        t = e0.elapsed_time(e1)
        if not (t >= 0):
            raise Failure(f"event time {t}")
        self.check("stream result", w, np.sort(a * 2 + 1), rtol=1e-6)
        self.check("stream sum", z, (a.astype(np.float64) * 2 + 1).sum(), rtol=1e-5)
        if not s1.query() or not s2.query():
            raise Failure("a synchronised stream is not idle")
        return "streams"

    def task_oom(self):
        oom = cuda.OutOfMemoryError if self.dev.type == "cuda" else MemoryError
        before = self.stats()["allocated_bytes"]
        chunk = max(1 << 16, self.max_elems * 4 // 2)
        cap = before + chunk * self.pick.randint(2, 6) + self.pick.randint(0, chunk)
        cuda.set_memory_limit(cap, self.dev)
        held = []
        try:
            raised = None
            for _ in range(64):
                try:
                    held.append(ck.empty(chunk, dtype=ck.uint8, device=self.device))
                except oom as e:
                    raised = e
                    break
            if raised is None:
                raise Failure(f"{len(held)} blocks of {chunk} bytes past a limit of {cap}: no {oom.__name__}")
            if "bytes" not in str(raised):
                raise Failure(f"the out-of-memory error does not say the bytes: {raised}")
            try:   # one allocation past the cap by itself
                ck.zeros(cap + 1, dtype=ck.uint8, device=self.device)
                raise Failure("an allocation larger than the limit succeeded")
            except oom:
                pass
            n = len(held)
            del held[:]
            try:   # and past what the device has, without a limit
                cuda.set_memory_limit(0, self.dev)
                ck.empty(1 << 50, dtype=ck.uint8, device=self.device)
                raise Failure("an allocation of 2^50 bytes succeeded")
            except oom:
                pass
            x = ck.ones(chunk // 8, dtype=ck.float64, device=self.device)   # the next allocation works
            self.check("after out of memory", x.sum(), np.float64(chunk // 8))
            del x
        finally:
            del held[:]
            cuda.set_memory_limit(0, self.dev)
        self.log(f"oom: {n} blocks of {chunk} under a limit of {cap}, then {type(raised).__name__}")
        return "oom"

    def task_fault(self):
        kind = self.pick.choice(["bad_write", "trap", "py_bad_write"])
        t0 = time.time()
        env = dict(os.environ)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child-fault", kind, "--device", self.device],
                           capture_output=True, text=True, timeout=300, env=env)
        report = None
        for line in r.stdout.splitlines():
            if line.startswith("{"):
                report = json.loads(line)
        if report is None:
            raise Failure(f"fault child ({kind}) gave no report: exit {r.returncode}, stderr {r.stderr[-2000:]!r}")
        if r.returncode < 0:
            raise Failure(f"fault child ({kind}) died of signal {-r.returncode} after its report {report}")
        if not report.get("raised"):
            raise Failure(f"fault child ({kind}): the kernel ran without an error: {report}")
        if not report["error_names_kernel"]:
            raise Failure(f"fault child ({kind}): the error does not name the kernel {report['kernel']}: {report}")
        self.log(f"fault {kind}: {time.time() - t0:.1f}s, {report['error']}; usable after: {report['usable_after']}")
        # the parent goes on
        self.check("parent after the child's fault", self.arr(np.arange(5)) + 1, np.arange(5) + 1)
        return "fault"

    def note(self, msg):
        if msg not in self.notes:
            self.notes.append(msg)
            self.log("note: " + msg)

    # --------------------------------------------------------------- loop
    def run_task(self, name):
        t0 = time.time()
        try:
            done = getattr(self, "task_" + name)()
            key = f"{name}:{done}" if done != name else name
            self.counts[key] = self.counts.get(key, 0) + 1
        except (Failure, AssertionError) as e:
            self.failures.append(f"{name}: {e}")
            self.log(f"FAIL {name}: {e}")
        except Exception as e:   # noqa: BLE001 - every error is a finding of the soak
            self.failures.append(f"{name}: {type(e).__name__}: {e}")
            self.log(f"FAIL {name}: {traceback.format_exc()}")
        return time.time() - t0


def child_fault(kind, device):
    """Launch a faulting kernel; print one JSON line: the kernel's name, the
    error, whether cudakit's message names the kernel, and whether the
    process could still compute afterwards."""
    x = ck.zeros(4, dtype=ck.int32, device=device)
    if kind == "bad_write":
        name = "soak_bad_write"
        src = (f'extern "C" __global__ void {name}(int *p, long long off) '
               '{ if (threadIdx.x == 0) p[off] = 1; }')
        k = ck.RawKernel(src, name)
        launch = (lambda: k((1,), (32,), (x, np.int64(1 << 40))))
    elif kind == "trap":
        name = "soak_trap"
        src = f'extern "C" __global__ void {name}(int *p) {{ if (threadIdx.x == 3) __trap(); p[0] = 1; }}'
        k = ck.RawKernel(src, name)
        launch = (lambda: k((2,), (32,), (x,)))
    else:
        name = "soak_py_bad_write"
        launch = (lambda: soak_py_bad_write[1, 32](x, np.int64(1 << 40)))
    out = {"kernel": name, "raised": False, "error": "", "error_names_kernel": False}
    try:
        launch()
        cuda.synchronize(device)
    except Exception as e:   # noqa: BLE001 - the fault's error, of any class, is the report
        out.update(raised=True, error=f"{type(e).__name__}: {e}", error_names_kernel=name in str(e))
    try:
        out["usable_after"] = bool(ck.asnumpy(ck.arange(3, device=device) + 1).tolist() == [1, 2, 3])
    except Exception as e:   # noqa: BLE001 - a GPU context is lost after an illegal address
        out["usable_after"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out), flush=True)
    return 0


def parse_duration(text):
    """'90', '90s', '10m', '1.5h' -> seconds."""
    t = str(text).strip().lower()
    scale = {"s": 1, "m": 60, "h": 3600}.get(t[-1:], None)
    try:
        v = float(t[:-1] if scale else t) * (scale or 1)
    except ValueError:
        raise SystemExit(f"soak: a duration is seconds or a number with s, m or h, not {text!r}")
    if not v >= 0:
        raise SystemExit(f"soak: a duration must not be negative: {text!r}")
    return v


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda" if cuda.is_available() else "cpu")
    p.add_argument("--duration", default="10m", help="the run's length: seconds, or with s, m or h (default 10m)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--max-elems", type=int, default=None, help="the largest array (default 2^24 on a GPU, 2^14 on the CPU)")
    p.add_argument("--fault-every", type=float, default=None, help="seconds between fault children (default: 60; "
                                                                     "a run shorter than a minute has one)")
    p.add_argument("--log", default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--child-fault", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child_fault:
        return child_fault(a.child_fault, a.device)
    length = parse_duration(a.duration)
    seed = a.seed if a.seed is not None else int(time.time()) % 100000
    dev = ck.Device(a.device)
    max_elems = a.max_elems or (1 << 24 if dev.type == "cuda" else 1 << 14)
    fault_every = a.fault_every if a.fault_every is not None else 60.0
    log = open(a.log, "w") if a.log else None
    s = Soak(a.device, seed, max_elems, log)

    gc.collect()
    cuda.synchronize(dev)
    at_start = s.stats()
    s.log(f"soak of {length:.0f}s on {dev}, seed {seed}, arrays up to {max_elems} elements")
    s.log(f"pool at the start: {at_start}")
    # one of each first: the figures after it tell what the loop leaks from
    # what was taken once, should the end differ from the start
    for name in ("ops", "kernels", "streams", "oom"):
        s.run_task(name)
    gc.collect()
    cuda.synchronize(dev)
    baseline = s.stats()
    s.log(f"pool after the first round (the baseline): {baseline}")
    t0 = time.time()
    next_fault = t0
    iters, samples = 0, []
    weights = [("ops", 70), ("kernels", 12), ("streams", 12), ("oom", 3)]
    names, w = zip(*weights)
    last_report = t0
    while True:
        now = time.time()
        if now >= next_fault and (now - t0 < length or "fault" not in s.counts):
            s.run_task("fault")
            next_fault = time.time() + fault_every
        elif now - t0 >= length:
            break
        else:
            s.run_task(s.pick.choices(names, w)[0])
        iters += 1
        if iters % 50 == 0:
            gc.collect()
            samples.append(s.stats()["allocated_bytes"])
        if time.time() - last_report > 30:
            last_report = time.time()
            st = s.stats()
            s.log(f"{time.time() - t0:.0f}s: {iters} tasks, {len(s.failures)} failures, "
                  f"allocated {st['allocated_bytes']}, cached {st['cached_bytes']}, peak {st['peak_allocated_bytes']}")
    gc.collect()
    cuda.synchronize(dev)
    at_end = s.stats()
    s.log(f"pool at the end: {at_end}")
    cuda.empty_cache(dev)
    emptied = s.stats()
    s.log(f"pool at the end, its cache emptied: {emptied}")
    if at_end["allocated_bytes"] != at_start["allocated_bytes"]:
        since = ("" if at_end["allocated_bytes"] == baseline["allocated_bytes"] else
                 f" ({at_end['allocated_bytes'] - baseline['allocated_bytes']:+d} since the first round)")
        s.failures.append(f"in-use bytes {at_end['allocated_bytes']} at the end, {at_start['allocated_bytes']} at the "
                          f"start: {at_end['allocated_bytes'] - at_start['allocated_bytes']:+d}{since}")
    if emptied["reserved_bytes"] != emptied["allocated_bytes"]:
        s.failures.append(f"after empty_cache the pool still reserves {emptied['reserved_bytes']} bytes for "
                          f"{emptied['allocated_bytes']} in use")
    summary = {"device": str(dev), "seed": seed, "seconds": round(time.time() - t0, 1), "tasks": iters,
               "counts": dict(sorted(s.counts.items())), "failures": s.failures, "notes": s.notes,
               "pool_at_start": at_start, "pool_baseline": baseline, "pool_at_end": at_end,
               "pool_at_end_emptied": emptied,
               "allocated_samples": samples[-20:]}
    text = json.dumps(summary, indent=1)
    s.log("summary: " + text)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)
    print(f"soak on {dev}: {iters} tasks in {summary['seconds']}s, {len(s.failures)} failures; pool at the end: "
          f"{at_end['allocated_bytes']} bytes in use ({at_start['allocated_bytes']} at the start), peak "
          f"{at_end['peak_allocated_bytes']}, cached {at_end['cached_bytes']}, reserved {at_end['reserved_bytes']}, "
          f"{at_end['num_allocs']} allocations ({at_end['num_device_allocs']} from the device), "
          f"{at_end['num_ooms']} out of memory", flush=True)
    for f in s.failures:
        print("FAIL", f, flush=True)
    if log:
        log.close()
    return 1 if s.failures else 0


if __name__ == "__main__":
    sys.exit(main())
