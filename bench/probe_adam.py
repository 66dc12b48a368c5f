"""Where the capturable Adam step's time goes (the seed MLP's 101,770 float32 parameters, one
launch a step): cudakit's optimizer step, 200 steps captured in one graph, beside variants of its
kernel written here as RawKernels over one flat array (the same arithmetic: four elements a
thread, loaded before any store) that drop one part at a time: the step count read from device
memory and its two double pow, the last-block ticket that raises the count, its fence; and a
copy of the same bytes as the floor.  us a step, best of three replays:
    python3 bench/probe_adam.py
"""
import time
import numpy as np
import cudakit as ck

N = 784 * 128 + 128 + 128 * 10 + 10
STEPS = 200
dev = "cuda"

SRC = r"""
extern "C" __global__ void adam(float *p, const float *g, float *s1, float *s2, int n, float lr, float b1, float b2,
                                float eps, float step_size, float bc2s, float *stepp, unsigned *ticket)
{
    const long long i0 = (long long)blockIdx.x * CHUNK;
    float gr[PER], w[PER], m[PER], v[PER];
#pragma unroll
    for (int u = 0; u < PER; u++) {
        const long long i = i0 + threadIdx.x + (long long)u * blockDim.x;
        if (i < n) { gr[u] = g[i]; w[u] = p[i]; m[u] = s1[i]; v[u] = s2[i]; }
    }
    double t = 0;
#if DEVSTEP
    t = (double)*stepp + 1.0;
#if POW
    step_size = (float)((double)lr / (1.0 - pow((double)b1, t)));
    bc2s = (float)sqrt(1.0 - pow((double)b2, t));
#else
    step_size = (float)((double)lr / (1.0 - (double)b1 * t));
    bc2s = (float)sqrt(1.0 - (double)b2 * t);
#endif
#endif
#pragma unroll
    for (int u = 0; u < PER; u++) {
        const long long i = i0 + threadIdx.x + (long long)u * blockDim.x;
        if (i >= n) break;
#if COPY
        p[i] = gr[u]; s1[i] = w[u]; s2[i] = m[u] + v[u];
#else
        const float mn = __fadd_rn(__fmul_rn(b1, m[u]), __fmul_rn(1.0f - b1, gr[u]));
        const float vn = __fadd_rn(__fmul_rn(b2, v[u]), __fmul_rn(__fmul_rn(1.0f - b2, gr[u]), gr[u]));
        s1[i] = mn;
        s2[i] = vn;
        p[i] = w[u] - __fmul_rn(step_size, mn) / __fadd_rn(sqrtf(vn) / bc2s, eps);
#endif
    }
#if TICKET
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
#if FENCE
        __threadfence();
#endif
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) { *stepp = (float)t; *ticket = 0; }
#endif
}
"""

VARIANTS = [  # name, PER (elements a thread), DEVSTEP, POW, TICKET, FENCE, COPY
    ("as cudakit's kernel: device step, pow, ticket, fence", 4, 1, 1, 1, 1, 0),
    ("no fence", 4, 1, 1, 1, 0, 0),
    ("no ticket (the count not raised)", 4, 1, 1, 0, 0, 0),
    ("device step, no pow", 4, 1, 0, 0, 0, 0),
    ("host step (no device step, no pow, no ticket)", 4, 0, 0, 0, 0, 0),
    ("host step, 8 a thread", 8, 0, 0, 0, 0, 0),
    ("host step, 1 a thread", 1, 0, 0, 0, 0, 0),
    ("host step, 2 a thread", 2, 0, 0, 0, 0, 0),
    ("a copy of the same bytes, 4 a thread", 4, 0, 0, 0, 0, 1),
]


def per_step(capture):
    s = ck.cuda.Stream(dev)
    s.wait_stream(ck.cuda.current_stream(dev))
    with s:
        capture()
    s.synchronize()
    g = ck.cuda.CUDAGraph()
    with ck.cuda.graph(g):
        for _ in range(STEPS):
            capture()
    g.replay(); ck.cuda.synchronize()
    best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(5):
            g.replay()
        ck.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / (5 * STEPS))
    return best * 1e6


rs = np.random.default_rng(0)
ck.random.seed(0)
model = ck.nn.Sequential(ck.nn.Linear(784, 128), ck.nn.ReLU(), ck.nn.Linear(128, 10)).to(dev)
for q in model.parameters():
    q.grad = ck.asarray(rs.standard_normal(q.shape).astype(np.float32), device=dev)
opt = ck.optim.Adam(model.parameters(), capturable=True)
print(f"cudakit Adam(capturable=True).step(): {per_step(opt.step):.2f} us a step", flush=True)
opt2 = ck.optim.Adam(model.parameters())
opt2.step()
print(f"cudakit Adam().step() (the step on the host, a graph of it fixes the step): {per_step(opt2.step):.2f} us a step",
      flush=True)

arrs = [ck.asarray(rs.standard_normal(N).astype(np.float32), device=dev) for _ in range(4)]
stepp = ck.zeros(1, dtype=ck.float32, device=dev)
ticket = ck.zeros(1, dtype=ck.uint32, device=dev)
for name, u, devstep, pw, tk, fence, copy in VARIANTS:
    k = ck.RawKernel(SRC, "adam", options=(f"-DPER={u}", f"-DCHUNK={256 * u}", f"-DDEVSTEP={devstep}", f"-DPOW={pw}",
                                           f"-DTICKET={tk}", f"-DFENCE={fence}", f"-DCOPY={copy}"))
    grid = (N + 256 * u - 1) // (256 * u)
    args = (arrs[0], arrs[1], arrs[2], arrs[3], np.int32(N), np.float32(1e-3), np.float32(0.9), np.float32(0.999),
            np.float32(1e-8), np.float32(1e-3), np.float32(1.0), stepp, ticket)
    print(f"{name}: {grid} blocks, {per_step(lambda: k((grid,), (256,), args)):.2f} us a step", flush=True)
