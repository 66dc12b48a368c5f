"""Kernels as the CUDA Python literature writes them (Numba's documentation,
the seed's getting-started guide), for tests/test_pyk_literature.py; the
translator reads a kernel's source from its file, so they live in a module."""

from cudakit import cuda
from cudakit.cuda.types import float32, float64


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


@cuda.jit
def jacobi_step(u, v):
    """One Jacobi sweep of Laplace's equation: each interior point becomes the
    mean of its four neighbours; the boundary stays where it is."""
    i, j = cuda.grid(2)
    n, m = u.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
    elif i < n and j < m:
        v[i, j] = u[i, j]


@cuda.jit
def jacobi_shared(u, v):
    """The same sweep through a shared tile with a one-point halo."""
    T = 16
    tile = cuda.shared.array((18, 18), dtype=float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i, j = cuda.grid(2)
    n, m = u.shape
    for a in range(tx, T + 2, T):
        for b in range(ty, T + 2, T):
            gi = cuda.blockIdx.x * T + a - 1
            gj = cuda.blockIdx.y * T + b - 1
            tile[a, b] = u[gi, gj] if 0 <= gi < n and 0 <= gj < m else 0.0
    cuda.syncthreads()
    if 0 < i < n - 1 and 0 < j < m - 1:
        a, b = tx + 1, ty + 1
        v[i, j] = 0.25 * (tile[a - 1, b] + tile[a + 1, b] + tile[a, b - 1] + tile[a, b + 1])
    elif i < n and j < m:
        v[i, j] = u[i, j]


@cuda.jit
def warp_reduce_sum(x, out):
    """Sum through warp shuffles: each warp folds its 32 values with
    shfl_down_sync, its lane 0 leaves the warp's sum in shared memory, the
    first warp folds those, and one atomic per block adds the block's sum."""
    partial = cuda.shared.array(32, dtype=float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % cuda.warpsize
    warp = cuda.threadIdx.x // cuda.warpsize
    v = float32(0)
    stride = cuda.gridsize(1)
    while i < x.size:
        v += x[i]
        i += stride
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if lane == 0:
        partial[warp] = v
    cuda.syncthreads()
    nwarps = (cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize
    if warp == 0:
        v = partial[lane] if lane < nwarps else float32(0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xffffffff, v, off)
            off //= 2
        if lane == 0:
            cuda.atomic.add(out, 0, v)


@cuda.jit
def xor_butterfly_max(x, out):
    """Every lane ends with its warp's maximum (shfl_xor_sync's butterfly)."""
    i = cuda.grid(1)
    v = x[i]
    mask = 16
    while mask > 0:
        v = max(v, cuda.shfl_xor_sync(0xffffffff, v, mask))
        mask //= 2
    out[i] = v


@cuda.jit
def inclusive_scan_warp(x, out):
    """A warp's inclusive prefix sum with shfl_up_sync."""
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    d = 1
    while d < 32:
        u = cuda.shfl_up_sync(0xffffffff, v, d)
        if lane >= d:
            v += u
        d *= 2
    out[i] = v


@cuda.jit
def mandelbrot(img, x0, y0, dx, dy, iters):
    """The escape-time Mandelbrot set, one thread a pixel (Numba's classic)."""
    row, col = cuda.grid(2)
    if row < img.shape[0] and col < img.shape[1]:
        c = complex(x0 + col * dx, y0 + row * dy)
        z = 0j
        k = 0
        while k < iters and abs(z) <= 2.0:
            z = z * z + c
            k += 1
        img[row, col] = k


@cuda.jit
def operands_run_once(cells, out):
    """An atomic inside max (a formula that reads its operands twice) still
    runs once a thread."""
    i = cuda.grid(1)
    out[i] = max(-1, cuda.atomic.add(cells, 0, 1))
