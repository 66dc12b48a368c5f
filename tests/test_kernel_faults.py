"""Kernels that fail or never end must not take the interpreter down: a
fault, a stack overflow, Ctrl-C or the kernel time limit ends the launch
with an exception naming the kernel, and the process runs the next kernel.
Each case runs in a child process (a regression would kill it), which must
exit cleanly; the SIGINT cases send the signal to the child once it has
started the kernel."""
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cudakit as ck

PRELUDE = r'''
import sys, numpy as np, cudakit as ck
DEV = sys.argv[1]

def run_after():
    k = ck.RawKernel('extern "C" __global__ void fine(int *o) { o[threadIdx.x] = 7; }', 'fine')
    o = ck.zeros(32, dtype=ck.int32, device=DEV)
    k((1,), (32,), (o,))
    assert int(ck.asnumpy(o)[31]) == 7
    print('AFTER ok', flush=True)

def attempt(src, name, grid, block, *args, sync=False):
    k = ck.RawKernel(src, name)
    o = ck.zeros(64, dtype=ck.int32, device=DEV)
    try:
        # compiled first: a SIGINT sent a moment after STARTED must meet the
        # running kernel, not the host compiler (a cold cache on a busy
        # machine takes more than that moment)
        k.compile(DEV)
        print('STARTED', flush=True)
        k(grid, block, (o,) + args)
        if sync:
            ck.cuda.synchronize()
        print('NO ERROR', ck.asnumpy(o)[:4].tolist(), flush=True)
    except BaseException as e:
        print('RAISED', type(e).__name__, '|', e, flush=True)
'''


def child(code, device="cpu", env=None, timeout=120):
    e = dict(os.environ)
    e.pop("CUDAKIT_BOUNDS", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), device], capture_output=True,
                          text=True, env=e, timeout=timeout)


def raised(r):
    m = re.search(r"^RAISED (\w+) \| (.*)$", r.stdout, re.M)
    assert m, r.stdout + r.stderr
    return m.group(1), m.group(2)


def assert_survived(r):
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "AFTER ok" in r.stdout, r.stdout + r.stderr


DEEP = r'''
__device__ int f(int n) { volatile char b[1024]; b[0] = (char)n; b[1023] = 1; return n ? f(n - 1) + b[0] : 0; }
extern "C" __global__ void %s(int *o, int n) { %s o[threadIdx.x] = f(n); }
'''

FAULTS = {
    # name: (source, args, message)
    "deep": (DEEP % ("deep", ""), "np.int32(1 << 20)", r"kernel deep: stack overflow in block \(0, 0, 0\)"),
    "deep_sync": (DEEP % ("deep_sync", "__syncthreads();"), "np.int32(1 << 20)",
                  r"kernel deep_sync: stack overflow in block \(0, 0, 0\), thread \(\d+, 0, 0\)"),
    "ud2": (r'extern "C" __global__ void ud2(int *o) { if (threadIdx.x == 3) asm volatile("ud2"); o[threadIdx.x] = 1; }',
            "", r"kernel ud2: illegal instruction"),
    "ud2_sync": (r'extern "C" __global__ void ud2_sync(int *o) { __syncthreads(); if (threadIdx.x == 3) '
                 r'asm volatile("ud2"); o[threadIdx.x] = 1; }',
                 "", r"kernel ud2_sync: illegal instruction .* thread \(3, 0, 0\)"),
    "segv": (r'extern "C" __global__ void segv(int *o) { if (threadIdx.x == 2) *(volatile int *)16 = 1; }',
             "", r"kernel segv: illegal memory access at address 0x10"),
    "fpe": (r'extern "C" __global__ void fpe(int *o, int n) { __syncwarp(); o[threadIdx.x] = 7 / (n - (int)threadIdx.x); }',
            "np.int32(5)", r"kernel fpe: integer division by zero in block \(0, 0, 0\), thread \(5, 0, 0\)"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_a_cuda_error(name):
    src, args, msg = FAULTS[name]
    r = child(f"""
        attempt({src!r}, {name!r}, (2,), (32,), {args})
        run_after()
        """)
    kind, text = raised(r)
    assert kind == "CUDAError" and re.search(msg, text), text
    assert_survived(r)


def test_bus_error_is_a_cuda_error(tmp_path):
    # a page of a file mapped, then the file cut short: touching it is SIGBUS
    r = child(f"""
        import ctypes, mmap
        f = open({str(tmp_path / 'f')!r}, 'w+b')
        f.truncate(8192)
        m = mmap.mmap(f.fileno(), 8192)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        f.truncate(0)
        attempt(r'extern "C" __global__ void bus(int *o, unsigned long long p) {{ o[0] = *(volatile int *)p; }}',
                'bus', (1,), (1,), np.uint64(addr))
        run_after()
        """)
    kind, text = raised(r)
    assert kind == "CUDAError" and "kernel bus: illegal memory access" in text and "bus error" in text, text
    assert_survived(r)


def test_fault_on_a_pool_worker_and_a_python_thread():
    # block 100 of 256 runs on one of the pool's threads; then the same
    # kernel from a thread of the program's own
    src = r'extern "C" __global__ void late(int *o) { if (blockIdx.x == 100) *(volatile int *)16 = 1; }'
    r = child(f"""
        import threading
        attempt({src!r}, 'late', (256,), (64,))
        t = threading.Thread(target=attempt, args=({src!r}, 'late', (256,), (64,)))
        t.start(); t.join()
        run_after()
        """, env={"CUDAKIT_NUM_THREADS": "2"})
    errs = re.findall(r"^RAISED (\w+) \| (.*)$", r.stdout, re.M)
    assert len(errs) == 2, r.stdout + r.stderr
    for kind, text in errs:
        assert kind == "CUDAError" and "kernel late" in text and "block (100, 0, 0)" in text, text
    assert_survived(r)


BIG = r'''extern "C" __global__ void big(int *o, int n)
{ volatile int b[20000]; b[threadIdx.x] = n; __syncthreads(); b[19999] = 2; o[threadIdx.x] = b[threadIdx.x] + b[19999]; }'''


def test_large_locals_with_a_barrier():
    # 80 KB of locals a thread (a GPU allows 512 KB): the fibers' stacks fit them
    r = child(f"""
        attempt({BIG!r}, 'big', (2,), (64,), np.int32(5))
        run_after()
        """)
    assert "NO ERROR [7, 7, 7, 7]" in r.stdout, r.stdout + r.stderr
    assert_survived(r)
    # a stack made too small on purpose fails cleanly
    r = child(f"""
        attempt({BIG!r}, 'big', (2,), (64,), np.int32(5))
        run_after()
        """, env={"CUDAKIT_CPU_STACK_KB": "32"})
    kind, text = raised(r)
    assert kind == "CUDAError" and "kernel big: stack overflow" in text and "32 KiB" in text, text
    assert_survived(r)


def test_a_fault_outside_kernels_is_still_fatal():
    r = child("""
        attempt(r'extern "C" __global__ void one(int *o) { o[0] = 1; }', 'one', (1,), (1,))
        import ctypes
        ctypes.string_at(0)
        print('SURVIVED')
        """)
    assert "NO ERROR" in r.stdout and "SURVIVED" not in r.stdout, r.stdout
    assert r.returncode == -signal.SIGSEGV, (r.returncode, r.stderr)


SPIN = {
    "spin_while": r'extern "C" __global__ void spin_while(int *o) { while (o[0] != 12345) o[1]++; }',
    "spin_do": r'extern "C" __global__ void spin_do(int *o) { do o[1]++; while (o[0] != 12345); }',
    "spin_for": r'extern "C" __global__ void spin_for(int *o) { for (;;) o[1]++; }',
    "spin_sync": r'extern "C" __global__ void spin_sync(int *o) { __syncthreads(); for (;;) o[1]++; }',
    "huge_grid": r'extern "C" __global__ void huge_grid(int *o) { if (threadIdx.x == 0) o[1] = blockIdx.x; }',
}


def _sigint_default():
    # a make run in the background (nohup, a job of a non-interactive shell)
    # ignores SIGINT, and Python leaves an ignored SIGINT ignored: the child
    # gets the disposition of a terminal's program, as the tests mean
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(code, device="cpu", env=None, delay=1.0, timeout=60):
    """Run code in a child; once it prints STARTED, wait delay and send it SIGINT."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code), device], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=e, preexec_fn=_sigint_default)
    try:
        lines = []
        while True:
            line = p.stdout.readline()
            lines.append(line)
            if not line or line.startswith("STARTED"):
                break
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail("the child did not stop: " + "".join(lines) + out + err)
    return subprocess.CompletedProcess(p.args, p.returncode, "".join(lines) + out, err)


@pytest.mark.parametrize("name", sorted(SPIN))
def test_sigint_stops_a_cpu_kernel(name):
    grid = "(65535, 65535, 65535)" if name == "huge_grid" else "(4,)"
    t0 = time.time()
    r = interrupt(f"""
        attempt({SPIN[name]!r}, {name!r}, {grid}, (32,))
        run_after()
        """)
    kind, text = raised(r)
    assert kind == "KeyboardInterrupt" and f"kernel {name}: interrupted (SIGINT)" in text, text
    assert_survived(r)
    assert time.time() - t0 < 30


def test_sigint_reaches_the_programs_own_handler():
    # a handler set with signal.signal decides what the Ctrl-C means
    r = interrupt(f"""
        import signal
        def mine(sig, frame):
            raise ValueError('mine')
        signal.signal(signal.SIGINT, mine)
        attempt({SPIN['spin_for']!r}, 'spin_for', (4,), (32,))
        run_after()
        """)
    assert raised(r) == ("ValueError", "mine")
    assert_survived(r)


def test_kernel_timeout_stops_a_cpu_kernel():
    r = child(f"""
        import time
        assert ck.cuda.set_kernel_timeout(0.3) is None
        t = time.time()
        attempt({SPIN['spin_while']!r}, 'spin_while', (4,), (32,))
        print('TOOK', time.time() - t)
        assert ck.cuda.set_kernel_timeout(None) == 0.3
        run_after()
        """)
    kind, text = raised(r)
    assert kind == "CUDAError" and "kernel spin_while" in text and "time limit of 0.3 s" in text, text
    took = float(re.search(r"TOOK (\S+)", r.stdout).group(1))
    assert 0.3 <= took < 10, took
    assert_survived(r)


def test_kernel_timeout_from_the_environment():
    r = child(f"""
        attempt({SPIN['huge_grid']!r}, 'huge_grid', (65535, 65535, 65535), (32,))
        run_after()
        """, env={"CUDAKIT_KERNEL_TIMEOUT": "0.25"})
    kind, text = raised(r)
    assert kind == "CUDAError" and "kernel huge_grid" in text and "time limit of 0.25 s" in text, text
    assert_survived(r)


def test_set_kernel_timeout_arguments():
    prev = ck.cuda.set_kernel_timeout(5)
    try:
        assert ck.cuda.set_kernel_timeout(2.5) == 5.0
        with pytest.raises(ValueError, match="time limit"):
            ck.cuda.set_kernel_timeout(-1)
        with pytest.raises(ValueError):
            ck.cuda.set_kernel_timeout(float("nan"))
        with pytest.raises(TypeError):
            ck.cuda.set_kernel_timeout("1")
        assert ck.cuda.set_kernel_timeout(0) == 2.5
        assert ck.cuda.set_kernel_timeout(None) is None
    finally:
        ck.cuda.set_kernel_timeout(prev)


# On a GPU: a kernel that spins for a few seconds (bounded, so that the
# child can exit); the host waits for it and Ctrl-C or the limit ends the wait.
# It reads the GPU's global timer (nanoseconds, one clock for every SM), not
# clock64(): an SM's cycle counter, which jumps when a busy GPU (the parallel
# suite's other contexts) preempts the kernel and resumes it on another SM; a
# spin of 8e9 cycles once outlived the test's two minutes so.
GPU_SPIN = r'''static __device__ long long gnow() { long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
extern "C" __global__ void gspin(int *o, long long ns)
{ long long t0 = gnow(); while (gnow() - t0 < ns) o[1]++; }'''


def _gpu_only(device):
    if device != "cuda":
        pytest.skip("a wait for a GPU")


GPU_WAITS = {
    # name: (the kernel's stream, the wait)
    "synchronize": ("ck.cuda.Stream.null()", "ck.cuda.synchronize()"),
    "synchronize_nonblocking": ("ck.cuda.Stream()", "ck.cuda.synchronize()"),
    "asnumpy": ("ck.cuda.Stream.null()", "ck.asnumpy(o)"),
    "stream": ("ck.cuda.Stream()", "s.synchronize()"),
    "event": ("ck.cuda.Stream()", "e = ck.cuda.Event(); e.record(s); e.synchronize()"),
}


@pytest.mark.parametrize("wait", sorted(GPU_WAITS))
def test_sigint_ends_a_gpu_wait(device, wait):
    _gpu_only(device)
    stream, waiting = GPU_WAITS[wait]
    r = interrupt(f"""
        k = ck.RawKernel({GPU_SPIN!r}, 'gspin')
        o = ck.zeros(64, dtype=ck.int32, device=DEV)
        s = {stream}
        with s:
            k((1,), (1,), (o, np.int64(4 * 10**9)))   # 4 s
            print('STARTED', flush=True)
            try:
                {waiting}
                print('NO ERROR')
            except KeyboardInterrupt as e:
                print('RAISED KeyboardInterrupt |', e, flush=True)
        ck.cuda.synchronize()
        run_after()
        """, device=device, timeout=120)
    kind, text = raised(r)
    assert kind == "KeyboardInterrupt" and "interrupted (SIGINT) while waiting for cuda:" in text, text
    assert_survived(r)


def test_kernel_timeout_ends_a_gpu_wait(device):
    _gpu_only(device)
    r = child(f"""
        k = ck.RawKernel({GPU_SPIN!r}, 'gspin')
        o = ck.zeros(64, dtype=ck.int32, device=DEV)
        ck.cuda.set_kernel_timeout(0.5)
        k((1,), (1,), (o, np.int64(2 * 10**9)))   # 2 s
        try:
            ck.cuda.synchronize()
            print('NO ERROR')
        except ck.cuda.CUDAError as e:
            print('RAISED CUDAError |', e, flush=True)
        ck.cuda.set_kernel_timeout(None)
        ck.cuda.synchronize()
        run_after()
        """, device=device)
    kind, text = raised(r)
    assert kind == "CUDAError" and "time limit of 0.5 s" in text and "may still be running" in text, text
    assert_survived(r)
