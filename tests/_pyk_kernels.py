"""Kernels for test_pykernels.py that need their own module: the translator
reads a kernel's source from its file, and the error tests check the file
and line an error names."""
import math
import cmath

import numpy as np

from cudakit import cuda
from cudakit import float32, int32


# ------------------------------------------------------------- math, numpy

@cuda.jit
def math_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.sin(v)
        out[i, 1] = math.cos(v)
        out[i, 2] = math.tan(v)
        out[i, 3] = math.asin(v)
        out[i, 4] = math.acos(v)
        out[i, 5] = math.atan(v)
        out[i, 6] = math.sinh(v)
        out[i, 7] = math.cosh(v)
        out[i, 8] = math.tanh(v)
        out[i, 9] = math.asinh(v)
        out[i, 10] = math.atanh(v)
        out[i, 11] = math.exp(v)
        out[i, 12] = math.expm1(v)
        out[i, 13] = math.log(v)
        out[i, 14] = math.log2(v)
        out[i, 15] = math.log10(v)
        out[i, 16] = math.log1p(v)
        out[i, 17] = math.sqrt(v)
        out[i, 18] = math.fabs(v)
        out[i, 19] = math.floor(v * 10)
        out[i, 20] = math.ceil(v * 10)
        out[i, 21] = math.trunc(v * 10)
        out[i, 22] = math.erf(v)
        out[i, 23] = math.erfc(v)
        out[i, 24] = math.gamma(v)
        out[i, 25] = math.lgamma(v)
        out[i, 26] = math.degrees(v)
        out[i, 27] = math.radians(v)


@cuda.jit
def np_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = np.sin(v)
        out[i, 1] = np.exp(v)
        out[i, 2] = np.arctan2(v, v + 1)
        out[i, 3] = np.hypot(v, 2 * v)


@cuda.jit
def math_of_int(x, out):
    out[0] = math.sqrt(x[0])
    out[1] = math.exp(x[1])
    out[2] = math.floor(x[2] + 0.5)


@cuda.jit
def cmath_kernel(z, out):
    i = cuda.grid(1)
    if i < z.size:
        v = z[i]
        out[i, 0] = cmath.sqrt(v)
        out[i, 1] = cmath.exp(v)
        out[i, 2] = cmath.log(v)
        out[i, 3] = cmath.sin(v)
        out[i, 4] = cmath.phase(v)


# --------------------------------------------------------- device functions

@cuda.jit(device=True)
def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


@cuda.jit(device=True)
def two_values(a, b):
    return a + b, a * b


@cuda.jit(device=True)
def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@cuda.jit(device=True)
def mean_of(a, b):
    return (a + b) / 2


@cuda.jit
def use_device_functions(out, n):
    out[0] = factorial(n)
    s, p = two_values(2, 6)
    out[1] = s
    out[2] = fib(7)
    out[3] = mean_of(2, 3)


# ------------------------------------------------------- shared, local memory

@cuda.jit
def block_sum(x, partial):
    buf = cuda.shared.array(256, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = buf[0]


TPB = 16


@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tmp = float32(0.)
    for i in range((A.shape[1] + TPB - 1) // TPB):
        sA[tx, ty] = 0
        sB[tx, ty] = 0
        if x < A.shape[0] and ty + i * TPB < A.shape[1]:
            sA[tx, ty] = A[x, ty + i * TPB]
        if y < B.shape[1] and tx + i * TPB < B.shape[0]:
            sB[tx, ty] = B[tx + i * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[tx, j] * sB[j, ty]
        cuda.syncthreads()
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = tmp


@cuda.jit
def reverse_block(x, out):
    buf = cuda.shared.array(0, dtype=int32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    out[t] = buf[cuda.blockDim.x - 1 - t]


@cuda.jit
def local_sort(data, out):
    row = cuda.grid(1)
    if row >= data.shape[0]:
        return
    n = data.shape[1]
    tmp = cuda.local.array(5, dtype=np.int64)
    for j in range(n):
        tmp[j] = data[row, j]
    for j in range(1, n):
        k = j
        while k > 0 and tmp[k - 1] > tmp[k]:
            tmp[k - 1], tmp[k] = tmp[k], tmp[k - 1]
            k -= 1
    for j in range(n):
        out[row, j] = tmp[j]


# --------------------------------------------------------------- atomics

@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


@cuda.jit
def atomics_all(cells, old, v3, v12):
    old[0] = cuda.atomic.add(cells, 0, v3)
    old[1] = cuda.atomic.sub(cells, 1, v3)
    old[2] = cuda.atomic.max(cells, 2, v3)
    old[3] = cuda.atomic.min(cells, 3, v12)
    old[4] = cuda.atomic.exch(cells, 4, v12)
    old[5] = cuda.atomic.exch(cells, 5, v3)
    old[6] = cuda.atomic.max(cells, 6, v12)


@cuda.jit
def atomics_int(cells, old, v3, v12):
    old[0] = cuda.atomic.and_(cells, 0, v3)
    old[1] = cuda.atomic.or_(cells, 1, v3)
    old[2] = cuda.atomic.xor(cells, 2, v3)
    old[3] = cuda.atomic.cas(cells, 3, 10, v12)        # swaps
    old[4] = cuda.atomic.cas(cells, 4, 11, v12)        # does not
    old[5] = cuda.atomic.compare_and_swap(cells[5:], 10, v3)
    old[6] = cuda.atomic.add(cells, 6, 1)
    old[7] = cuda.atomic.min(cells, 7, v3)


@cuda.jit
def atomics_inc_dec(cells, old, limit):
    old[0] = cuda.atomic.inc(cells, 0, limit)          # 10 -> 11
    old[1] = cuda.atomic.inc(cells, 1, 10)             # at the limit: -> 0
    old[2] = cuda.atomic.dec(cells, 2, limit)          # 10 -> 9
    old[3] = cuda.atomic.dec(cells, 3, 5)              # above the limit: -> 5


# ------------------------------------------------------------------ warps

@cuda.jit
def warp_ops(out):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    v = i
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    out[i, 0] = cuda.shfl_sync(0xffffffff, v, 0)
    out[i, 1] = cuda.ballot_sync(0xffffffff, lane % 2 == 0)
    out[i, 2] = cuda.all_sync(0xffffffff, lane % 2 == 0)
    out[i, 3] = cuda.any_sync(0xffffffff, lane % 2 == 0)
    out[i, 4] = cuda.shfl_sync(0xffffffff, lane, (lane + 1) % 32)
    out[i, 5] = cuda.laneid


@cuda.jit
def bits(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = cuda.popc(v)
        out[i, 1] = cuda.brev(v)
        out[i, 2] = cuda.clz(v)
        out[i, 3] = cuda.ffs(v)


# ------------------------------------------------------------------ errors

@cuda.jit
def bad_types(x):
    a = (1, 2)
    y = x + a
    x[0] = y


@cuda.jit
def uses_try(x):
    try:
        x[0] = 1
    except IndexError:
        pass


@cuda.jit
def uses_with(x):
    with open("f"):
        x[0] = 1


@cuda.jit
def uses_comprehension(x):
    v = [i for i in range(3)]
    x[0] = v[0]


@cuda.jit
def uses_dict(x):
    d = {1: 2}
    x[0] = d[1]


@cuda.jit
def warp_more(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    out[i, 0] = cuda.eq_sync(0xffffffff, v)
    out[i, 1] = cuda.eq_sync(0xffffffff, i // 32)
    out[i, 2] = cuda.match_any_sync(0xffffffff, v)
    m, same = cuda.match_all_sync(0xffffffff, i // 32)
    out[i, 3] = m
    out[i, 4] = same
    out[i, 5] = cuda.activemask()
    out[i, 6] = cuda.lanemask_lt()
    out[i, 7] = cuda.shfl_up_sync(0xffffffff, lane, 1)
    out[i, 8] = cuda.shfl_xor_sync(0xffffffff, lane, 3)
    cuda.syncwarp()
    out[i, 9] = cuda.syncthreads_count(v > 1)
    out[i, 10] = cuda.syncthreads_and(v >= 0)
    out[i, 11] = cuda.syncthreads_or(v > 2)
    out[i, 12] = cuda.eq_sync(0xffffffff, v > 5)


# ------------------------------------------ barriers in control flow (the CPU's regions)

@cuda.jit
def barrier_shapes(x, out, n):
    """Barriers inside if, while and for over a range, with break and continue,
    early return, local arrays and syncthreads_count: the CPU runs the block in
    regions between barriers, the GPU as written."""
    sh = cuda.shared.array(64, dtype=np.int64)
    loc = cuda.local.array(3, dtype=np.int64)
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    nt = cuda.blockDim.x * cuda.blockDim.y
    g = cuda.blockIdx.x * nt + t
    sh[t] = x[g]
    loc[0] = t
    cuda.syncthreads()
    total = 0
    for k in range(nt):                # every thread reads every value
        total += sh[k]
    cuda.syncthreads()
    if n > 0:                          # uniform: a barrier inside
        v = sh[(t + 1) % nt] * 2
        cuda.syncthreads()
        sh[t] = v
        cuda.syncthreads()
        loc[1] = sh[t]
    else:
        loc[1] = -1
    steps = 0
    stride = nt // 2
    while stride > 0:                  # a tree reduction of t
        if t < stride:
            sh[t] = sh[t] + sh[t + stride]
        cuda.syncthreads()
        stride //= 2
        steps += 1
        if steps > 100:
            break
    red = sh[0]
    cuda.syncthreads()
    acc = 0
    for r in range(3):                 # continue and break in a loop of regions
        sh[t] = t * r
        cuda.syncthreads()
        if r == 1:
            continue
        acc += sh[(t + r) % nt]
        cuda.syncthreads()
        if r == 2:
            break
    c = cuda.syncthreads_count(x[g] % 2 == 0)
    a = cuda.syncthreads_and(x[g] >= 0)
    o = cuda.syncthreads_or(x[g] > 1000)
    if t >= nt - 2:                    # these threads leave; the others go on through a barrier
        out[g, 0] = -7
        return
    cuda.syncthreads()
    out[g, 0] = total
    out[g, 1] = loc[1]
    out[g, 2] = red
    out[g, 3] = acc
    out[g, 4] = c * 100 + a * 10 + o
    out[g, 5] = loc[0] + steps * 1000


# ------------------------------------------------------------------ debug=True

@cuda.jit(debug=True)
def dbg_out_of_bounds(x, off):
    i = cuda.grid(1)
    if i < x.size:
        x[i + off] = 1.0


@cuda.jit(debug=True)
def dbg_raise(x):
    i = cuda.grid(1)
    if i == 3:
        raise ValueError("three is not allowed")
    assert x[0] == 0, "x[0] must be zero"


@cuda.jit(device=True, debug=True)
def dbg_checked_get(a, i):
    return a[i]


@cuda.jit(debug=True)
def dbg_through_device_function(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = dbg_checked_get(a, i * 2)


@cuda.jit(
    "void(float64[:])",
)
def odd_layout(x):
    """A docstring
whose lines are dedented (the quick reader cannot tell the block: inspect reads it)."""
    x[0] = 41 + \
        1


class Holder:
    @staticmethod
    @cuda.jit
    def method_kernel(x):
        x[0] = 7
