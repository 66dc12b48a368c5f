/*
 * sort_kernels.cuh - the GPU sort, argsort and searchsorted kernels
 * (src/backend/cuda/cuda_sort.c drives them).  Embedded in the library at
 * build time; the generator puts three macros before it:
 *   CK_SK_T    the dtype's number (the order of ck_dtype)
 *   CK_SK_ISZ  its itemsize
 *   CK_SK_K64  1 when a key word needs 64 bits
 *
 * Keys are the CPU's (src/backend/cpu/cpu_sort.c): unsigned integers whose
 * order is NumPy's (NaNs last, -0.0 == +0.0, complex as (class, real,
 * imaginary)), xor'ed with all ones for descending.  Every sort is a
 * stable sort of (key, element number) pairs, so the results equal the
 * CPU's exactly.
 */

typedef unsigned int ck_u32;
typedef unsigned long long ck_u64;
#if CK_SK_K64
typedef ck_u64 ck_kt;
#else
typedef ck_u32 ck_kt;
#endif

/* raw element moves */
#if CK_SK_ISZ == 1
typedef unsigned char ck_et;
#elif CK_SK_ISZ == 2
typedef unsigned short ck_et;
#elif CK_SK_ISZ == 4
typedef ck_u32 ck_et;
#elif CK_SK_ISZ == 8
typedef ck_u64 ck_et;
#else
struct ck_et { ck_u64 a, b; };
#endif

#define CK_SK_COMPLEX (CK_SK_T == 12 || CK_SK_T == 13)
#if CK_SK_COMPLEX
#define CK_SK_KB (CK_SK_ISZ / 2)
#else
#define CK_SK_KB CK_SK_ISZ
#endif
#define CK_SK_MASK (CK_SK_KB == 8 ? ~0ull : ((1ull << (8 * CK_SK_KB)) - 1))

/* radix passes: 8-bit digits, tiles of 4096 elements (256 threads x 16) */
#define CK_RX_THREADS 256
#define CK_RX_ITEMS 16
#define CK_RX_TILE (CK_RX_THREADS * CK_RX_ITEMS)
#define CK_SCAN_PER 8
#define CK_SCAN_CHUNK (CK_RX_THREADS * CK_SCAN_PER)

static __device__ __forceinline__ ck_u64 ck_fkey(ck_u64 bits, int nbits, bool nan)
{
    ck_u64 mask = nbits == 64 ? ~0ull : ((1ull << nbits) - 1);
    ck_u64 sign = 1ull << (nbits - 1);
    if (nan) return mask;
    if ((bits & ~sign) == 0) bits = 0;
    return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static __device__ __forceinline__ ck_u64 ck_key_f32(const char *p)
{
    ck_u32 b = *(const ck_u32 *)p;
    return ck_fkey(b, 32, (b & 0x7fffffffu) > 0x7f800000u);
}

static __device__ __forceinline__ ck_u64 ck_key_f64(const char *p)
{
    ck_u64 b = *(const ck_u64 *)p;
    return ck_fkey(b, 64, (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull);
}

/* (top, hi, lo) of the element at p, as the CPU's elem_key */
static __device__ __forceinline__ void ck_elem_key(const char *p, ck_u64 &top, ck_u64 &hi, ck_u64 &lo)
{
    top = 0;
    lo = 0;
#if CK_SK_T == 0
    hi = *(const unsigned char *)p != 0;
#elif CK_SK_T == 1
    hi = (unsigned char)(*(const unsigned char *)p ^ 0x80u);
#elif CK_SK_T == 2
    hi = *(const unsigned char *)p;
#elif CK_SK_T == 3
    hi = (unsigned short)(*(const unsigned short *)p ^ 0x8000u);
#elif CK_SK_T == 4
    hi = *(const unsigned short *)p;
#elif CK_SK_T == 5
    hi = *(const ck_u32 *)p ^ 0x80000000u;
#elif CK_SK_T == 6
    hi = *(const ck_u32 *)p;
#elif CK_SK_T == 7
    hi = *(const ck_u64 *)p ^ (1ull << 63);
#elif CK_SK_T == 8
    hi = *(const ck_u64 *)p;
#elif CK_SK_T == 9
    ck_u32 b = *(const unsigned short *)p;
    hi = ck_fkey(b, 16, (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu));
#elif CK_SK_T == 10
    hi = ck_key_f32(p);
#elif CK_SK_T == 11
    hi = ck_key_f64(p);
#elif CK_SK_T == 12
    hi = ck_key_f32(p);
    lo = ck_key_f32(p + 4);
    top = 2 * (hi == CK_SK_MASK) + (lo == CK_SK_MASK);
#else
    hi = ck_key_f64(p);
    lo = ck_key_f64(p + 8);
    top = 2 * (hi == CK_SK_MASK) + (lo == CK_SK_MASK);
#endif
}

/* word w (0: lo, 1: hi, 2: top) of the element's sort key */
static __device__ __forceinline__ ck_kt ck_word(const char *p, int w, int desc)
{
    ck_u64 top, hi, lo;
    ck_elem_key(p, top, hi, lo);
    ck_u64 k = w == 2 ? top : w ? hi : lo;
    if (desc) k ^= w == 2 ? 3ull : CK_SK_MASK;
    return (ck_kt)k;
}

#define CK_GRID_LOOP(i, n) \
    for (ck_u64 i = (ck_u64)blockIdx.x * blockDim.x + threadIdx.x; i < (ck_u64)(n); i += (ck_u64)gridDim.x * blockDim.x)

#if CK_SK_T >= 9 && CK_SK_T <= 11
/* The key of a keys-only sort of one row of floats (values only,
 * ascending), undone by ck_sk_unkey: the plain order-preserving transform,
 * so -0.0 sorts before +0.0 and NaNs after +inf by their bits, their sign
 * dropped.  Values equal NumPy's; the order of -0.0 and +0.0 and the NaNs'
 * sign may differ from the CPU's. */
static __device__ __forceinline__ ck_kt ck_raw_fkey(const char *p)
{
#if CK_SK_T == 9
    ck_u64 b = *(const unsigned short *)p;
    const bool nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
#elif CK_SK_T == 10
    ck_u64 b = *(const ck_u32 *)p;
    const bool nan = (b & 0x7fffffffu) > 0x7f800000u;
#else
    ck_u64 b = *(const ck_u64 *)p;
    const bool nan = (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
#endif
    const ck_u64 sign = 1ull << (8 * CK_SK_ISZ - 1);
    if (nan) b &= ~sign;
    return (ck_kt)((b & sign) ? (~b & CK_SK_MASK) : (b | sign));
}
#endif

/* keys[i] = word of element pay[i]; init: pay[i] = i first.  Element e is
 * (row e / len, column e % len).  desc & 2 (floats, one row, no payload):
 * the keys-only transform above.  andor (or NULL; set to ~0, 0 before):
 * the AND and the OR of all the keys, so the host can skip the passes of
 * a digit that every key shares. */
extern "C" __global__ void ck_sk_keys(ck_u32 n, long long len, const char *data, long long rs, long long es,
                                      ck_u32 *pay, ck_kt *keys, int word, int desc, int init,
                                      unsigned long long *andor)
{
    ck_u64 ka = ~0ull, ko = 0;
    CK_GRID_LOOP(i, n) {
        ck_u32 e = init ? (ck_u32)i : pay[i];
        if (init && pay) pay[i] = e;
        /* every count fits 32 bits (the driver checks n < 2^32): cheap division */
        ck_u32 r = (ck_u64)len >= n ? 0u : e / (ck_u32)len, j = e - r * (ck_u32)len;
        ck_kt k;
#if CK_SK_T >= 9 && CK_SK_T <= 11
        if (desc & 2) k = ck_raw_fkey(data + r * rs + j * es);
        else
#endif
        k = ck_word(data + r * rs + j * es, word, desc);
        keys[i] = k;
        ka &= (ck_u64)k;
        ko |= (ck_u64)k;
    }
    if (andor) {   /* every thread of the block gets here */
        for (int o = 16; o; o >>= 1) {
            ka &= __shfl_xor_sync(0xffffffffu, ka, o);
            ko |= __shfl_xor_sync(0xffffffffu, ko, o);
        }
        if ((threadIdx.x & 31) == 0 && ka != ~0ull) atomicAnd(&andor[0], (unsigned long long)ka);
        if ((threadIdx.x & 31) == 0 && ko) atomicOr(&andor[1], (unsigned long long)ko);
    }
}

/* The digit of position i of a pass: of the key (mode 0) or of the row
 * of the element number (mode 1: the final passes of a batched sort). */
static __device__ __forceinline__ ck_u32 ck_digit(const ck_kt *keys, const ck_u32 *pay, ck_u64 i, int mode,
                                                  long long len, int shift)
{
    if (mode == 0) return (ck_u32)(keys[i] >> shift) & 255u;
    return (pay[i] / (ck_u32)len >> shift) & 255u;
}

/* counts[d * nblocks + b]: elements of digit d in tile b */
extern "C" __global__ void __launch_bounds__(CK_RX_THREADS) ck_rx_hist(ck_u32 n, const ck_kt *keys, const ck_u32 *pay,
                                                                    int mode, long long len, int shift,
                                                                    ck_u32 *counts, ck_u32 nblocks)
{
    __shared__ ck_u32 h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    ck_u64 base = (ck_u64)blockIdx.x * CK_RX_TILE;
#pragma unroll 4
    for (int k = 0; k < CK_RX_ITEMS; k++) {
        ck_u64 i = base + (ck_u64)k * CK_RX_THREADS + threadIdx.x;
        if (i < n) atomicAdd(&h[ck_digit(keys, pay, i, mode, len, shift)], 1u);
    }
    __syncthreads();
    counts[(ck_u64)threadIdx.x * nblocks + blockIdx.x] = h[threadIdx.x];
}

/* Exclusive scan of a thread's CK_SCAN_PER values across a 256-thread
 * block; returns the block's total. */
static __device__ ck_u32 ck_block_exscan(ck_u32 *v, ck_u32 *sh)
{
    ck_u32 s = 0;
#pragma unroll
    for (int r = 0; r < CK_SCAN_PER; r++) { ck_u32 t = v[r]; v[r] = s; s += t; }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = 1; w < CK_RX_THREADS; w <<= 1) {
        ck_u32 add = (int)threadIdx.x >= w ? sh[threadIdx.x - w] : 0u;
        __syncthreads();
        sh[threadIdx.x] += add;
        __syncthreads();
    }
    ck_u32 before = threadIdx.x ? sh[threadIdx.x - 1] : 0u, total = sh[CK_RX_THREADS - 1];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < CK_SCAN_PER; r++) v[r] += before;
    return total;
}

/* three kernels: chunk totals, an exclusive scan of them (one block), the
 * chunks' exclusive scans plus their offsets */
extern "C" __global__ void __launch_bounds__(CK_RX_THREADS) ck_rx_scan_sums(ck_u32 m, const ck_u32 *a, ck_u32 *sums)
{
    __shared__ ck_u32 sh[CK_RX_THREADS];
    ck_u64 base = (ck_u64)blockIdx.x * CK_SCAN_CHUNK;
    ck_u32 s = 0;
    for (int r = 0; r < CK_SCAN_PER; r++) {
        ck_u64 i = base + (ck_u64)r * CK_RX_THREADS + threadIdx.x;
        if (i < m) s += a[i];
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = CK_RX_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[blockIdx.x] = sh[0];
}

extern "C" __global__ void __launch_bounds__(CK_RX_THREADS) ck_rx_scan_top(ck_u32 nc, ck_u32 *sums)
{
    __shared__ ck_u32 sh[CK_RX_THREADS];
    ck_u32 carry = 0;
    for (ck_u64 base = 0; base < nc; base += CK_SCAN_CHUNK) {
        ck_u32 v[CK_SCAN_PER];
        for (int r = 0; r < CK_SCAN_PER; r++) {
            ck_u64 i = base + (ck_u64)threadIdx.x * CK_SCAN_PER + r;
            v[r] = i < nc ? sums[i] : 0u;
        }
        ck_u32 total = ck_block_exscan(v, sh);
        for (int r = 0; r < CK_SCAN_PER; r++) {
            ck_u64 i = base + (ck_u64)threadIdx.x * CK_SCAN_PER + r;
            if (i < nc) sums[i] = v[r] + carry;
        }
        carry += total;
    }
}

extern "C" __global__ void __launch_bounds__(CK_RX_THREADS) ck_rx_scan_apply(ck_u32 m, ck_u32 *a, const ck_u32 *sums)
{
    __shared__ ck_u32 sh[CK_RX_THREADS];
    ck_u64 base = (ck_u64)blockIdx.x * CK_SCAN_CHUNK + (ck_u64)threadIdx.x * CK_SCAN_PER;
    ck_u32 v[CK_SCAN_PER];
    for (int r = 0; r < CK_SCAN_PER; r++) v[r] = base + r < m ? a[base + r] : 0u;
    ck_block_exscan(v, sh);
    ck_u32 off = sums[blockIdx.x];
    for (int r = 0; r < CK_SCAN_PER; r++)
        if (base + r < m) a[base + r] = v[r] + off;
}

/* The stable scatter of one pass.  Warp w of a tile owns its 512
 * consecutive elements, 32 at a time in order; __match_any_sync ranks the
 * lanes of one digit and a per-warp count carries the rank across steps.
 * The warps' counts scanned in warp order, and the digits' totals scanned,
 * give each element its place in the tile sorted by digit; the tile is
 * reordered so in shared memory (keys, then element numbers) and written
 * out in order, so that each digit's run goes out as consecutive stores at
 * the tile's offset for that digit (the scanned counts). */
extern "C" __global__ void __launch_bounds__(CK_RX_THREADS) ck_rx_scatter(ck_u32 n, const ck_kt *keys, const ck_u32 *pay,
                                                                       ck_kt *keys_out, ck_u32 *pay_out, int mode,
                                                                       long long len, int shift,
                                                                       const ck_u32 *offsets, ck_u32 nblocks,
                                                                       int with_pay)
{
    __shared__ ck_u32 wh[CK_RX_THREADS / 32][256];
    __shared__ ck_u32 bofs[256], lstart[256];
    __shared__ ck_u64 sbuf[CK_RX_TILE];
    __shared__ unsigned char sdig[CK_RX_TILE];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int w = 0; w < CK_RX_THREADS / 32; w++) wh[w][threadIdx.x] = 0;
    bofs[threadIdx.x] = offsets[(ck_u64)threadIdx.x * nblocks + blockIdx.x];
    __syncthreads();
    const ck_u64 tile0 = (ck_u64)blockIdx.x * CK_RX_TILE;
    const int count = (ck_u64)n - tile0 < CK_RX_TILE ? (int)((ck_u64)n - tile0) : CK_RX_TILE;
    const int base = warp * (32 * CK_RX_ITEMS) + lane;
    ck_u32 rank[CK_RX_ITEMS], dig[CK_RX_ITEMS];
    const ck_u32 lt = (1u << lane) - 1u;
#pragma unroll
    for (int k = 0; k < CK_RX_ITEMS; k++) {
        int li = base + k * 32;
        bool ok = li < count;
        ck_u32 d = ok ? ck_digit(keys, pay, tile0 + li, mode, len, shift) : 256u;
        ck_u32 peers = __match_any_sync(0xffffffffu, d);
        ck_u32 before = ok ? wh[warp][d] : 0u;
        __syncwarp();
        if (ok && (ck_u32)(__ffs(peers) - 1) == (ck_u32)lane) wh[warp][d] = before + __popc(peers);
        __syncwarp();
        rank[k] = before + __popc(peers & lt);
        dig[k] = d;
    }
    __syncthreads();
    {   /* per digit: the warps' counts -> exclusive prefix over warps; the
         * digits' totals -> exclusive prefix over digits (lstart) */
        ck_u32 s = 0;
        for (int w = 0; w < CK_RX_THREADS / 32; w++) { ck_u32 t = wh[w][threadIdx.x]; wh[w][threadIdx.x] = s; s += t; }
        lstart[threadIdx.x] = s;
        __syncthreads();
        for (int w = 1; w < 256; w <<= 1) {
            ck_u32 add = (int)threadIdx.x >= w ? lstart[threadIdx.x - w] : 0u;
            __syncthreads();
            lstart[threadIdx.x] += add;
            __syncthreads();
        }
        ck_u32 incl = lstart[threadIdx.x];
        __syncthreads();
        lstart[threadIdx.x] = incl - s;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < CK_RX_ITEMS; k++) {
        int li = base + k * 32;
        if (li < count) {
            ck_u32 d = dig[k];
            rank[k] += lstart[d] + wh[warp][d];   /* the place in the tile */
            sdig[rank[k]] = (unsigned char)d;
            if (mode == 0) sbuf[rank[k]] = keys[tile0 + li];
        }
    }
    __syncthreads();
    if (mode == 0)
        for (int j = threadIdx.x; j < count; j += CK_RX_THREADS) {
            ck_u32 d = sdig[j];
            keys_out[bofs[d] + (ck_u32)j - lstart[d]] = (ck_kt)sbuf[j];
        }
    if (!with_pay) return;   /* keys only: nothing more to move */
    __syncthreads();
#pragma unroll
    for (int k = 0; k < CK_RX_ITEMS; k++) {
        int li = base + k * 32;
        if (li < count) ((ck_u32 *)sbuf)[rank[k]] = pay[tile0 + li];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < count; j += CK_RX_THREADS) {
        ck_u32 d = sdig[j];
        pay_out[bofs[d] + (ck_u32)j - lstart[d]] = ((const ck_u32 *)sbuf)[j];
    }
}

/* After the passes: position i of row r holds element pay[i] (of row r). */
extern "C" __global__ void ck_sk_out(ck_u32 n, long long len, const ck_u32 *pay, const char *data, long long rs,
                                     long long es, ck_et *tmp, long long *idx, long long irs, long long ies,
                                     int sort_values)
{
    CK_GRID_LOOP(i, n) {
        ck_u32 r = (ck_u64)len >= n ? 0u : (ck_u32)i / (ck_u32)len, j = (ck_u32)i - r * (ck_u32)len;
        long long src = (long long)(pay[i] - r * (ck_u32)len);
        if (idx) idx[r * irs + j * ies] = src;
        if (sort_values) tmp[i] = *(const ck_et *)(data + r * rs + src * es);
    }
}

extern "C" __global__ void ck_sk_put(ck_u32 n, long long len, const ck_et *tmp, char *data, long long rs, long long es)
{
    CK_GRID_LOOP(i, n) {
        ck_u32 r = (ck_u64)len >= n ? 0u : (ck_u32)i / (ck_u32)len, j = (ck_u32)i - r * (ck_u32)len;
        *(ck_et *)(data + r * rs + j * es) = tmp[i];
    }
}

#if !CK_SK_COMPLEX
/* A keys-only sort of one row of integers: the values back from the keys
 * (the transforms are one-to-one there, and equal keys are equal values,
 * so the result is the stable one).  Floats (ascending only): the inverse
 * of ck_raw_fkey. */
extern "C" __global__ void ck_sk_unkey(ck_u32 n, const ck_kt *keys, char *data, long long es, int desc)
{
    CK_GRID_LOOP(i, n) {
        ck_u64 k = keys[i];
        if (desc) k ^= CK_SK_MASK;
#if CK_SK_T == 1 || CK_SK_T == 3 || CK_SK_T == 5 || CK_SK_T == 7
        k ^= 1ull << (8 * CK_SK_ISZ - 1);
#elif CK_SK_T >= 9 && CK_SK_T <= 11
        const ck_u64 sg = 1ull << (8 * CK_SK_ISZ - 1);
        k = (k & sg) ? (k ^ sg) : (~k & CK_SK_MASK);
#endif
        *(ck_et *)(data + (long long)i * es) = (ck_et)k;
    }
}

/* Rows of up to 4096 elements: a block per row, a bitonic sort of
 * (key, column) pairs in shared memory (P, a power of two >= len, slots;
 * the padding sorts last).  The column breaks ties, so the order is the
 * stable one.  blockDim.x * 4 >= P. */
extern "C" __global__ void __launch_bounds__(1024) ck_sk_block(long long nrows, int len, int P, char *data,
                                                              long long rs, long long es, int desc, long long *idx,
                                                              long long irs, long long ies, int sort_values)
{
    extern __shared__ ck_u64 ck_smem[];
    ck_kt *sk = (ck_kt *)ck_smem;
    ck_u32 *si = (ck_u32 *)(sk + P);
    const int T = blockDim.x, tid = threadIdx.x;
    for (long long r = blockIdx.x; r < nrows; r += gridDim.x) {
        char *row = data + r * rs;
        for (int j = tid; j < P; j += T) {
            sk[j] = j < len ? ck_word(row + j * es, 1, desc) : ~(ck_kt)0;
            si[j] = (ck_u32)j;
        }
        __syncthreads();
        for (int size = 2; size <= P; size <<= 1) {
            for (int stride = size >> 1; stride > 0; stride >>= 1) {
                for (int t = tid; t < P / 2; t += T) {
                    int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
                    bool asc = (lo & size) == 0;
                    ck_kt ka = sk[lo], kb = sk[hi];
                    ck_u32 ia = si[lo], ib = si[hi];
                    bool gt = ka > kb || (ka == kb && ia > ib);
                    if (gt == asc) { sk[lo] = kb; sk[hi] = ka; si[lo] = ib; si[hi] = ia; }
                }
                __syncthreads();
            }
        }
        ck_et v[4];
        if (sort_values)
            for (int j = tid, k = 0; j < len && k < 4; j += T, k++) v[k] = *(const ck_et *)(row + (long long)si[j] * es);
        __syncthreads();
        for (int j = tid, k = 0; j < len && k < 4; j += T, k++) {
            if (idx) idx[r * irs + j * ies] = si[j];
            if (sort_values) *(ck_et *)(row + j * es) = v[k];
        }
        __syncthreads();
    }
}
#endif

/* searchsorted: left, the first a[j] >= v; right, the first a[j] > v */
static __device__ __forceinline__ int ck_key_cmp(ck_u64 at, ck_u64 ah, ck_u64 al, ck_u64 bt, ck_u64 bh, ck_u64 bl)
{
    if (at != bt) return at < bt ? -1 : 1;
    if (ah != bh) return ah < bh ? -1 : 1;
    if (al != bl) return al < bl ? -1 : 1;
    return 0;
}

extern "C" __global__ void ck_ss(long long na, long long nv, const char *a, const char *v, long long *out, int right)
{
    CK_GRID_LOOP(i, nv) {
        ck_u64 vt, vh, vl;
        ck_elem_key(v + i * CK_SK_ISZ, vt, vh, vl);
        long long lo = 0, hi = na;
        while (lo < hi) {
            long long mid = lo + (hi - lo) / 2;
            ck_u64 at, ah, al;
            ck_elem_key(a + mid * CK_SK_ISZ, at, ah, al);
            int c = ck_key_cmp(at, ah, al, vt, vh, vl);
            if (c < 0 || (right && c == 0)) lo = mid + 1;
            else hi = mid;
        }
        out[i] = lo;
    }
}
