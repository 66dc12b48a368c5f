/*
 * pyk_prelude.cuh - what kernels translated from Python use, on both
 * targets (NVRTC, and the CPU's C++ compiler through cuda_compat.hpp,
 * where CUDAKIT_CPU is defined).  It follows cuda_prelude.cuh and
 * scalar_ops.h in every translation unit of a Python kernel.
 */

/* An array argument: its data, shape and strides (bytes). */
template <typename T, int N> struct ck_pyk_array {
    T *p;
    long long shape[N];
    long long strides[N];
};

/* Python's negative indices count from the end. */
template <typename I> __device__ __forceinline__ long long ck_pyk_wrap(I i, long long n)
{
    return (long long)i < 0 ? (long long)i + n : (long long)i;
}

template <typename T, int N> __device__ __forceinline__ long long ck_pyk_size(const ck_pyk_array<T, N> &a)
{
    long long s = 1;
    for (int k = 0; k < N; k++) s *= a.shape[k];
    return s;
}

/* An element by byte strides (any layout). */
template <typename T, int N> __device__ __forceinline__ T &ck_pyk_at(const ck_pyk_array<T, N> &a, const long long *ix)
{
    long long off = 0;
    for (int k = 0; k < N; k++) off += ix[k] * a.strides[k];
    return *(T *)((char *)a.p + off);
}

/* a[...] = v over every element of a view, in C order. */
template <typename T, int N, typename V> __device__ void ck_pyk_fill(ck_pyk_array<T, N> a, V v)
{
    long long ix[N];
    for (int k = 0; k < N; k++) {
        if (a.shape[k] <= 0) return;
        ix[k] = 0;
    }
    for (;;) {
        ck_pyk_at(a, ix) = (T)v;
        int k = N - 1;
        while (k >= 0 && ++ix[k] == a.shape[k]) ix[k--] = 0;
        if (k < 0) return;
    }
}

/* start, length and step of a Python slice of a dimension of length n. */
struct ck_pyk_span { long long start, len, step; };
__device__ __forceinline__ ck_pyk_span ck_pyk_slice(long long n, bool has_lo, long long lo, bool has_hi, long long hi,
                                                    long long step)
{
    ck_pyk_span r;
    r.step = step;
    if (step > 0) {
        lo = has_lo ? (lo < 0 ? (lo + n < 0 ? 0 : lo + n) : (lo > n ? n : lo)) : 0;
        hi = has_hi ? (hi < 0 ? (hi + n < 0 ? 0 : hi + n) : (hi > n ? n : hi)) : n;
        r.len = hi > lo ? (hi - lo + step - 1) / step : 0;
    } else {
        lo = has_lo ? (lo < 0 ? (lo + n < 0 ? -1 : lo + n) : (lo >= n ? n - 1 : lo)) : n - 1;
        hi = has_hi ? (hi < 0 ? (hi + n < 0 ? -1 : hi + n) : (hi >= n ? n - 1 : hi)) : -1;
        r.len = lo > hi ? (lo - hi - step - 1) / (-step) : 0;
    }
    r.start = lo;
    return r;
}

/* The position of this thread in the grid, as cuda.grid(n). */
__device__ __forceinline__ long long ck_pyk_grid_x(void) { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long ck_pyk_grid_y(void) { return (long long)blockIdx.y * blockDim.y + threadIdx.y; }
__device__ __forceinline__ long long ck_pyk_grid_z(void) { return (long long)blockIdx.z * blockDim.z + threadIdx.z; }
#ifndef CUDAKIT_CPU
/* A hint to bring an element into L2 (a coarsened kernel's next index):
 * nothing a thread can observe, and never a fault, the address being
 * checked by the caller to be the array's. */
__device__ __forceinline__ void ck_pyk_prefetch_l2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

/* A coarsened kernel's vector path (emit.c): W consecutive elements of an
 * array moved as 16-byte words, p 16-byte aligned (the caller checked).
 * The lanes are a local array the body indexes with constants once the
 * lane loop is unrolled, so they stay in registers; memcpy, not a cast,
 * says the same bytes are floats, halves or complexes. */
template <typename T, int W> __device__ __forceinline__ void ck_pyk_vload(T *lanes, const T *p)
{
    static_assert(W * sizeof(T) % 16 == 0, "a group is whole 16-byte words");
#pragma unroll
    for (int k = 0; k < (int)(W * sizeof(T) / 16); k++) {
        const uint4 w = ((const uint4 *)p)[k];
        memcpy((char *)lanes + 16 * k, &w, 16);
    }
}
template <typename T, int W> __device__ __forceinline__ void ck_pyk_vstore(T *p, const T *lanes)
{
#pragma unroll
    for (int k = 0; k < (int)(W * sizeof(T) / 16); k++) {
        uint4 w;
        memcpy(&w, (const char *)lanes + 16 * k, 16);
        ((uint4 *)p)[k] = w;
    }
}
/* The lanes of an array the body writes but never reads: those written
 * (bit u of m), with one vector store where that is all of them. */
template <typename T, int W> __device__ __forceinline__ void ck_pyk_vstore_lanes(T *p, const T *lanes, unsigned m)
{
    if (m == (1u << W) - 1u) {
        ck_pyk_vstore<T, W>(p, lanes);
        return;
    }
#pragma unroll
    for (int u = 0; u < W; u++)
        if (m >> u & 1u) p[u] = lanes[u];
}
__device__ __forceinline__ bool ck_pyk_aligned16(const void *p) { return ((unsigned long long)p & 15u) == 0; }
/* Whether na bytes at a and nb bytes at b share none. */
__device__ __forceinline__ bool ck_pyk_apart(const void *a, long long na, const void *b, long long nb)
{
    const unsigned long long x = (unsigned long long)a, y = (unsigned long long)b;
    return na <= 0 || nb <= 0 || x + (unsigned long long)na <= y || y + (unsigned long long)nb <= x;
}
#endif
__device__ __forceinline__ int ck_pyk_laneid(void)
{
    return (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u);
}

template <typename T> __device__ __forceinline__ bool ck_pyk_truth(T v) { return v != (T)0; }
template <typename T> __device__ __forceinline__ bool ck_pyk_truth(ck_complex<T> v) { return v.re != 0 || v.im != 0; }
__device__ __forceinline__ bool ck_pyk_truth(ck_f16 v) { return (float)v != 0.0f; }

/* ------------------------------------------------------------ debug */

/* The first error a thread of a debug kernel meets: written once, read by
 * the host after the launch, raised there as the Python exception. */
struct ck_pyk_error {
    int code;              /* 0 none; 1 IndexError; 2 the exception of a raise; 3 AssertionError */
    int line, what;        /* the Python line; the array argument, or the raise's number */
    unsigned block[3], thread[3];
    long long index, size;
};

__device__ inline void ck_pyk_report(ck_pyk_error *e, int code, int line, int what, long long index, long long size)
{
    if (!e || atomicCAS((int *)&e->code, 0, -1) != 0) return;
    e->line = line;
    e->what = what;
    e->block[0] = blockIdx.x; e->block[1] = blockIdx.y; e->block[2] = blockIdx.z;
    e->thread[0] = threadIdx.x; e->thread[1] = threadIdx.y; e->thread[2] = threadIdx.z;
    e->index = index;
    e->size = size;
    __threadfence();
    *(volatile int *)&e->code = code;
}

/* A checked index: out of bounds, the error is reported and 0 used, so
 * the thread goes on safely and the host raises IndexError after. */
/* Whether index *i (negative: from the end, made positive here) is within
 * n; if not, the error is reported. */
__device__ __forceinline__ bool ck_pyk_in_bounds(ck_pyk_error *e, long long *i, long long n, int line, int what)
{
    long long j = *i < 0 ? *i + n : *i;
    if (j < 0 || j >= n) {
        ck_pyk_report(e, 1, line, what, *i, n);
        return false;
    }
    *i = j;
    return true;
}
__device__ __forceinline__ bool ck_pyk_failed(const ck_pyk_error *e) { return *(const volatile int *)&e->code != 0; }

/* ------------------------------------------------ grid synchronisation */

/* cuda.cg.this_grid(): nothing to hold; its sync() is ck_pyk_grid_sync. */
struct ck_pyk_grid_group {};

/* The last parameter of a kernel that synchronises its grid.  On a GPU, w
 * is a 64-bit word of device memory the launcher keeps for one kernel on
 * one stream (two launches at once on different streams have different
 * words; launches on one stream run one after another), and epoch counts
 * that launcher's launches: the word holds the epoch of the launch that
 * last arrived (top 16 bits) and the blocks' arrivals during it (low 48).
 * The first block to arrive in a new launch starts the count afresh, so
 * the word needs no reset, even after a launch that stopped midway (a
 * debug kernel's error).  On the CPU, w is unused and dyn_bytes is the
 * launch's dynamic shared memory a block. */
struct ck_pyk_gridws {
    unsigned long long *w;
    unsigned epoch, dyn_bytes;
};

#ifndef CUDAKIT_CPU
/* Every thread of the grid waits here until all have arrived (all blocks
 * are resident: a cooperative launch).  Arrival n of a launch belongs to
 * barrier (n - 1) / nblocks, so a block knows the count that releases it
 * from its own arrival.  False when a debug kernel's error was recorded
 * while waiting (a thread that fails leaves, and its block may never
 * arrive): the caller leaves too. */
__device__ __noinline__ bool ck_pyk_grid_sync(const ck_pyk_gridws g, const ck_pyk_error *err)
{
    const unsigned long long nb = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    const unsigned long long low = (1ull << 48) - 1, mine = (unsigned long long)(g.epoch & 0xffffu) << 48;
    int failed = 0;
    __threadfence();   /* this thread's writes, before its block arrives */
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned long long old = *(volatile unsigned long long *)g.w;
        for (;;) {
            const unsigned long long nw = (old & ~low) == mine ? old + 1 : (mine | 1ull);
            const unsigned long long seen = atomicCAS(g.w, old, nw);
            if (seen == old) break;
            old = seen;
        }
        const unsigned long long n = ((old & ~low) == mine ? (old & low) : 0) + 1;
        const unsigned long long release = ((n - 1) / nb + 1) * nb;
        for (;;) {
            const unsigned long long w = *(volatile unsigned long long *)g.w;
            if ((w & ~low) == mine && (w & low) >= release) break;
            if (err && ck_pyk_failed(err)) {
                failed = 1;
                break;
            }
#if __CUDA_ARCH__ >= 700
            __nanosleep(32);
#endif
        }
        __threadfence();   /* the other blocks' writes, before this block reads them */
    }
    return !__syncthreads_or(failed);
}
#else
/* The CPU runs a kernel that synchronises its grid in regions (emit.c);
 * the GPU's form, compiled here too, is never launched on the CPU. */
__device__ inline bool ck_pyk_grid_sync(const ck_pyk_gridws, const ck_pyk_error *)
{
    __trap();
    return false;
}
#endif

/* ---------------------------------------------------------- atomics */

template <typename T> struct ck_pyk_bits_of;
template <> struct ck_pyk_bits_of<int> { typedef unsigned int U; };
template <> struct ck_pyk_bits_of<unsigned int> { typedef unsigned int U; };
template <> struct ck_pyk_bits_of<float> { typedef unsigned int U; };
template <> struct ck_pyk_bits_of<long long> { typedef unsigned long long U; };
template <> struct ck_pyk_bits_of<unsigned long long> { typedef unsigned long long U; };
template <> struct ck_pyk_bits_of<long> { typedef unsigned long long U; };
template <> struct ck_pyk_bits_of<unsigned long> { typedef unsigned long long U; };
template <> struct ck_pyk_bits_of<double> { typedef unsigned long long U; };

template <typename To, typename From> __device__ __forceinline__ To ck_pyk_bitcast(From f)
{
    union { From f; To t; } u;
    u.f = f;
    return u.t;
}

/* old = *p; *p = f(old), atomically, by compare-and-swap on the bits. */
template <typename T, typename F> __device__ __forceinline__ T ck_pyk_atomic_update(T *p, F f)
{
    typedef typename ck_pyk_bits_of<T>::U U;
    U *q = (U *)p;
    U old = *(volatile U *)q, assumed;
    do {
        assumed = old;
        old = atomicCAS(q, assumed, ck_pyk_bitcast<U>(f(ck_pyk_bitcast<T>(assumed))));
    } while (old != assumed);
    return ck_pyk_bitcast<T>(old);
}

template <typename T> __device__ __forceinline__ T ck_pyk_atomic_add(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o + v); });
}
__device__ __forceinline__ float ck_pyk_atomic_add(float *p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ int ck_pyk_atomic_add(int *p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned ck_pyk_atomic_add(unsigned *p, unsigned v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned long long ck_pyk_atomic_add(unsigned long long *p, unsigned long long v)
{
    return atomicAdd(p, v);
}
#if defined(CUDAKIT_CPU) || __CUDA_ARCH__ >= 600
__device__ __forceinline__ double ck_pyk_atomic_add(double *p, double v) { return atomicAdd(p, v); }
#endif
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_sub(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o - v); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_and(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o & v); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_or(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o | v); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_xor(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o ^ v); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_exch(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { (void)o; return v; });
}
/* inc / dec wrap as CUDA's atomicInc and atomicDec: to 0 past v, to v below 0 or past it */
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_inc(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o >= v ? 0 : o + 1); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_dec(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)((o == 0 || o > v) ? v : o - 1); });
}
/* max and min as Python's (a NaN in memory or in v stays or is taken as CUDA's fmax would not) */
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_max(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(o < v ? v : o); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_min(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)(v < o ? v : o); });
}
/* nanmax / nanmin ignore NaNs, as NumPy's nanmax does */
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_nanmax(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)((o != o || o < v) ? (v != v ? o : v) : o); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_nanmin(T *p, T v)
{
    return ck_pyk_atomic_update(p, [v](T o) { return (T)((o != o || v < o) ? (v != v ? o : v) : o); });
}
template <typename T> __device__ __forceinline__ T ck_pyk_atomic_cas(T *p, T cmp, T v)
{
    typedef typename ck_pyk_bits_of<T>::U U;
    return ck_pyk_bitcast<T>(atomicCAS((U *)p, ck_pyk_bitcast<U>(cmp), ck_pyk_bitcast<U>(v)));
}

/* ------------------------------------------------------- xoroshiro128+ */

/* cudakit.cuda.random's generators, as Numba's numba.cuda.random: state i
 * is row i (s0, s1) of an (n, 2) uint64 array, any strides (see
 * include/cudakit_xoroshiro.h for how the states are made).  The integer
 * steps and the uniforms' conversions are exact, so the same states give
 * the same uniforms on every device; the normals use the platform's
 * logf/cosf/cos (Numba's on the GPU), which may differ in the last bit. */
__device__ __forceinline__ unsigned long long ck_pyk_rotl(unsigned long long x, int k) { return (x << k) | (x >> (64 - k)); }

template <typename U> __device__ __forceinline__ U *ck_pyk_xoro_word(const ck_pyk_array<U, 2> &a, long long i, int w)
{
    return (U *)((char *)a.p + i * a.strides[0] + w * a.strides[1]);
}

template <typename U> __device__ __forceinline__ unsigned long long ck_pyk_xoro_next(const ck_pyk_array<U, 2> &a, long long i)
{
    U *p0 = ck_pyk_xoro_word(a, i, 0), *p1 = ck_pyk_xoro_word(a, i, 1);
    unsigned long long s0 = *p0, s1 = *p1, r = s0 + s1;
    s1 ^= s0;
    *p0 = (U)(ck_pyk_rotl(s0, 55) ^ s1 ^ (s1 << 14));
    *p1 = (U)ck_pyk_rotl(s1, 36);
    return r;
}

/* 2^64 steps: the XOR of the states at the jump polynomial's terms */
template <typename U> __device__ void ck_pyk_xoro_jump(const ck_pyk_array<U, 2> &a, long long i)
{
    const unsigned long long jump[2] = {0xbeac0467eba5facbull, 0xd86b048b86aa9922ull};
    U *p0 = ck_pyk_xoro_word(a, i, 0), *p1 = ck_pyk_xoro_word(a, i, 1);
    unsigned long long s0 = 0, s1 = 0;
    for (int w = 0; w < 2; w++)
        for (int b = 0; b < 64; b++) {
            if ((jump[w] >> b) & 1ull) {
                s0 ^= *p0;
                s1 ^= *p1;
            }
            ck_pyk_xoro_next(a, i);
        }
    *p0 = (U)s0;
    *p1 = (U)s1;
}

/* SplitMix64's first output for the seed, in both words */
template <typename U> __device__ __forceinline__ void ck_pyk_xoro_init(const ck_pyk_array<U, 2> &a, long long i,
                                                                      unsigned long long seed)
{
    unsigned long long z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    *ck_pyk_xoro_word(a, i, 0) = (U)z;
    *ck_pyk_xoro_word(a, i, 1) = (U)z;
}

/* The top 53 bits as a double in [0, 1); float32 is that double rounded
 * (so it can be 1.0f, as Numba's) */
template <typename U> __device__ __forceinline__ double ck_pyk_xoro_uniform64(const ck_pyk_array<U, 2> &a, long long i)
{
    return (double)(ck_pyk_xoro_next(a, i) >> 11) * (1.0 / 9007199254740992.0);
}
template <typename U> __device__ __forceinline__ float ck_pyk_xoro_uniform32(const ck_pyk_array<U, 2> &a, long long i)
{
    return (float)ck_pyk_xoro_uniform64(a, i);
}

/* Box-Muller's first value on two float32 uniforms; the float64 normal
 * takes its log in float32 too, as Numba's does */
template <typename U> __device__ __forceinline__ float ck_pyk_xoro_normal32(const ck_pyk_array<U, 2> &a, long long i)
{
    float u1 = ck_pyk_xoro_uniform32(a, i), u2 = ck_pyk_xoro_uniform32(a, i);
    return sqrtf(-2.0f * logf(u1)) * cosf((float)(2.0 * CK_PI) * u2);
}
template <typename U> __device__ __forceinline__ double ck_pyk_xoro_normal64(const ck_pyk_array<U, 2> &a, long long i)
{
    float u1 = ck_pyk_xoro_uniform32(a, i), u2 = ck_pyk_xoro_uniform32(a, i);
    return sqrt(-2.0 * (double)logf(u1)) * cos(2.0 * CK_PI * (double)u2);
}

/* ------------------------------------------------------------- warps */

__device__ __forceinline__ unsigned ck_pyk_lanemask_lt(void) { return (1u << ck_pyk_laneid()) - 1u; }

/* No warp function may appear here: the CPU runtime runs a kernel's blocks
 * as fibers when its source has one (eq_sync is written where it is used). */

/* ---------------------------------------------------- dynamic shared */

#ifdef CUDAKIT_CPU
template <typename T> __device__ __forceinline__ T *ck_pyk_dyn_shared(void) { return (T *)ck__dyn_smem(); }
#else
extern __shared__ unsigned char ck_pyk_dsm[];
template <typename T> __device__ __forceinline__ T *ck_pyk_dyn_shared(void) { return (T *)ck_pyk_dsm; }
#endif

/* ------------------------------------------ the CPU's barrier regions */

#ifdef CUDAKIT_CPU
/* The frames of a block's threads when a kernel runs in regions between
 * barriers (emit.c): one allocation per worker thread and kernel, kept. */
template <typename F> static inline F *ck_pyk_frames(int n)
{
    static thread_local F *frames = nullptr;
    static thread_local int cap = 0;
    if (n > cap) {
        std::free(frames);
        frames = (F *)std::malloc((size_t)n * sizeof(F));
        if (!frames) __builtin_trap();   /* the runtime reports it as the kernel's fault */
        cap = n;
    }
    return frames;
}
/* The memory every block of a grid keeps between grid barriers (shared
 * arrays, dynamic shared memory), kept per worker thread as the frames. */
static inline unsigned char *ck_pyk_grid_bytes(size_t n)
{
    static thread_local unsigned char *bytes = nullptr;
    static thread_local size_t cap = 0;
    if (n > cap) {
        std::free(bytes);
        bytes = (unsigned char *)std::aligned_alloc(64, (n + 63) & ~(size_t)63);
        if (!bytes) __builtin_trap();
        cap = n;
    }
    return bytes;
}
/* Block b of the grid as blockIdx. */
template <typename G> static inline uint3 ck_pyk_block_of(unsigned b, const G &g)
{
    return uint3{b % g.x, (b / g.x) % g.y, b / (g.x * g.y)};
}
template <typename B> static inline void ck_pyk_next_tid(uint3 &t, const B &b)
{
    if (++t.x == b.x) {
        t.x = 0;
        if (++t.y == b.y) {
            t.y = 0;
            ++t.z;
        }
    }
}
#endif

/* ---------------------------------------------------------- elements */

/* a[i, j, ...] of a C-ordered, an F-ordered and any array. */
template <typename T, int N, typename... I> __device__ __forceinline__ T &ck_pyk_elc(const ck_pyk_array<T, N> &a, I... ix)
{
    const long long v[] = {(long long)ix...};
    long long off = 0;
    for (int k = 0; k < N; k++) off = off * a.shape[k] + v[k];
    return a.p[off];
}
template <typename T, int N, typename... I> __device__ __forceinline__ T &ck_pyk_elf(const ck_pyk_array<T, N> &a, I... ix)
{
    const long long v[] = {(long long)ix...};
    long long off = 0;
    for (int k = N - 1; k >= 0; k--) off = off * a.shape[k] + v[k];
    return a.p[off];
}
template <typename T, int N, typename... I> __device__ __forceinline__ T &ck_pyk_ela(const ck_pyk_array<T, N> &a, I... ix)
{
    const long long v[] = {(long long)ix...};
    return ck_pyk_at(a, v);
}
