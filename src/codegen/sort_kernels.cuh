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
struct alignas(16) ck_v16 { ck_u64 a, b; };
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
#ifndef CK_RX_ITEMS   /* (bench/probe_sort.py tries others; cuda_sort.c's RX_TILE is 256 x 16) */
#define CK_RX_ITEMS 16
#endif
#define CK_RX_TILE (CK_RX_THREADS * CK_RX_ITEMS)

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

/* The key of one element as a sort's first pass reads it: kdesc & 2, the
 * keys-only float transform above; otherwise the key word 1 (one-word
 * keys), xor'ed for descending when kdesc & 1. */
static __device__ __forceinline__ ck_kt ck_in_key(const char *p, int kdesc)
{
#if CK_SK_T >= 9 && CK_SK_T <= 11
    if (kdesc & 2) return ck_raw_fkey(p);
#endif
    return ck_word(p, 1, kdesc & 1);
}

#if !CK_SK_COMPLEX
/* The value back from a keys-only sort's key (ck_in_key undone): integers'
 * transforms are one-to-one; floats are keyed by ck_raw_fkey. */
static __device__ __forceinline__ ck_et ck_out_val(ck_u64 k, int desc)
{
    if (desc) k ^= CK_SK_MASK;
#if CK_SK_T == 1 || CK_SK_T == 3 || CK_SK_T == 5 || CK_SK_T == 7
    k ^= 1ull << (8 * CK_SK_ISZ - 1);
#elif CK_SK_T >= 9 && CK_SK_T <= 11
    const ck_u64 sg = 1ull << (8 * CK_SK_ISZ - 1);
    k = (k & sg) ? (k ^ sg) : (~k & CK_SK_MASK);
#endif
    return (ck_et)k;
}
#endif

/* Digit histograms of a key word: CK_SK_NP passes of 8 bits (the top word
 * of a complex key, 1), counted by a block in CK_SK_HC interleaved copies
 * so that lanes of one digit mostly hit different words, then added to
 * hist[pass * 256 + digit]. */
#define CK_SK_NP CK_SK_KB
#define CK_SK_HC (CK_SK_KB >= 8 ? 4 : 8)

/* every digit of key k counted in the block's histograms h */
static __device__ __forceinline__ void ck_sk_count(ck_u32 *h, ck_u64 k, int copy)
{
#pragma unroll
    for (int p = 0; p < CK_SK_NP; p++) atomicAdd(&h[(p * 256 + (ck_u32)(k >> (8 * p) & 255u)) * CK_SK_HC + copy], 1u);
}

/* keys[i] = word of element pay[i] (keys may be NULL: histograms only);
 * init: pay[i] = i first.  Element e is (row e / len, column e % len).
 * hist (or NULL, zeroed before): the word's digit histograms, from which
 * the host learns which passes every key shares (and skips them) and each
 * pass its digits' global offsets. */
extern "C" __global__ void __launch_bounds__(256) ck_sk_keys(ck_u32 n, long long len, const char *data, long long rs,
                                                             long long es, ck_u32 *pay, ck_kt *keys, int word,
                                                             int kdesc, int init, ck_u32 *hist)
{
    __shared__ ck_u32 h[CK_SK_NP * 256 * CK_SK_HC];
    const int np = word == 2 ? 1 : CK_SK_NP, copy = threadIdx.x % CK_SK_HC;
    if (hist) {
        for (int j = threadIdx.x; j < np * 256 * CK_SK_HC; j += blockDim.x) h[j] = 0;
        __syncthreads();
    }
    const ck_u64 stride = (ck_u64)gridDim.x * blockDim.x;
    ck_u64 done = 0;
    if (hist && !keys && !pay && word != 2 && es == CK_SK_ISZ && (ck_u64)len >= n &&
        !((unsigned long long)data & 15)) {
        /* histograms of a contiguous row only: 16-byte loads, four a
         * thread in flight at once, every digit of a key counted */
        const int per = 16 / CK_SK_ISZ;
        const ck_u64 nv = n / per;
        const ck_v16 *d16 = (const ck_v16 *)data;
        ck_u64 v = (ck_u64)blockIdx.x * blockDim.x + threadIdx.x;
        for (; v + 3 * stride < nv; v += 4 * stride) {
            ck_v16 q[4];
#pragma unroll
            for (int u = 0; u < 4; u++) q[u] = d16[v + u * stride];
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int e = 0; e < per; e++)
                    ck_sk_count(h, (ck_u64)ck_in_key((const char *)&q[u] + e * CK_SK_ISZ, kdesc), copy);
        }
        for (; v < nv; v += stride) {
            const ck_v16 q = d16[v];
#pragma unroll
            for (int e = 0; e < per; e++)
                ck_sk_count(h, (ck_u64)ck_in_key((const char *)&q + e * CK_SK_ISZ, kdesc), copy);
        }
        done = nv * per;
    }
    /* four elements a step, their loads first */
    for (ck_u64 i0 = done + (ck_u64)blockIdx.x * blockDim.x + threadIdx.x; i0 < n; i0 += 4 * stride) {
        ck_kt k[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ck_u64 i = i0 + u * stride;
            if (i >= n) break;
            ck_u32 e = init ? (ck_u32)i : pay[i];
            /* every count fits 32 bits (the driver checks n < 2^32): cheap division */
            ck_u32 r = (ck_u64)len >= n ? 0u : e / (ck_u32)len, j = e - r * (ck_u32)len;
            const char *p = data + r * rs + j * es;
            k[u] = word == 1 ? ck_in_key(p, kdesc) : ck_word(p, word, kdesc & 1);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const ck_u64 i = i0 + u * stride;
            if (i >= n) break;
            if (init && pay) pay[i] = (ck_u32)i;
            if (keys) keys[i] = k[u];
            if (hist) {
                if (word == 2) atomicAdd(&h[((ck_u32)k[u] & 255u) * CK_SK_HC + copy], 1u);   /* the top word: 1 digit */
                else ck_sk_count(h, (ck_u64)k[u], copy);
            }
        }
    }
    if (hist) {
        __syncthreads();
        for (int j = threadIdx.x; j < np * 256; j += blockDim.x) {
            ck_u32 s = 0;
            for (int c = 0; c < CK_SK_HC; c++) s += h[j * CK_SK_HC + c];
            if (s) atomicAdd(&hist[j], s);
        }
    }
}

/* The row digits' histograms of a batched sort's final passes: row r
 * brings len elements of digit (r >> 8p) & 255 to pass p. */
extern "C" __global__ void ck_rx_rowhist(long long nrows, long long len, int np, ck_u32 *hist)
{
    __shared__ ck_u32 h[4 * 256];
    for (int j = threadIdx.x; j < 4 * 256; j += blockDim.x) h[j] = 0;
    __syncthreads();
    CK_GRID_LOOP(r, nrows)
        for (int p = 0; p < np; p++) atomicAdd(&h[p * 256 + (ck_u32)(r >> (8 * p) & 255u)], (ck_u32)len);
    __syncthreads();
    for (int j = threadIdx.x; j < np * 256; j += blockDim.x)
        if (h[j]) atomicAdd(&hist[j], h[j]);
}

/* ---- ranking a tile by one 8-bit digit (the sort passes and the row sort)
 *
 * A tile is CK_RX_THREADS * ITEMS keys held warp-striped: item i of lane l
 * of warp w is tile element w * 32 * ITEMS + i * 32 + l, so that loads and
 * stores of an item are coalesced and ranking the items in (warp, item,
 * lane) order is ranking them in element order: the ranks are stable. */
#define CK_RX_WARPS (CK_RX_THREADS / 32)

/* Exclusive scan of one value per thread of the block (256 threads);
 * sh: CK_RX_WARPS words of shared memory.  Two barriers. */
static __device__ __forceinline__ ck_u32 ck_bscan(ck_u32 v, ck_u32 *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    ck_u32 x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        ck_u32 y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) sh[warp] = x;
    __syncthreads();
    ck_u32 before = 0;
    for (int w = 0; w < warp; w++) before += sh[w];
    __syncthreads();
    return before + x - v;
}

/* Rank the tile's keys by digit (key >> shift) & 255, in two steps so
 * that a sort pass can publish its tile's digit counts between them:
 *
 * ck_tile_count counts each warp's keys of each digit (wh: CK_RX_WARPS *
 * 256 words of shared memory, one histogram a warp), then turns the counts
 * into each warp's offset within its digit (the warps before it) and
 * returns the tile's count of digit threadIdx.x (the block has one thread
 * per digit).  wh must be free; the callers see to it.
 *
 * ck_tile_place scans those counts (lst[d]: where digit d's run starts in
 * the tile; sh: CK_RX_WARPS words), adds the starts to the warps'
 * offsets, and ranks: pos[i] becomes item i's place in the tile stably
 * sorted by the digit.  Every item is ranked: a part tile is padded
 * with keys of all ones, which rank after its keys (see the pass).  A warp
 * ranks 32 keys at a time: eight ballots (CK_RANK_BALLOT) or a match
 * instruction (CK_RANK_MATCH, cheaper when a warp's keys have few
 * digits, dearer when many) find the lanes sharing each lane's digit, the
 * lowest of them takes their number from the warp's offset of the digit,
 * and each lane's place is that offset plus the peers below it.
 * CK_RANK_MATCH counts by the same match too (one shared atomic a digit
 * of a warp, not a key, as its keys mostly share few digits; keeping the
 * peers in registers for the ranking would spill them).  CK_RANK_ATOMIC
 * takes each key's place in its warp's count by a shared atomic while
 * counting: not stable, for the first pass of a keys-only sort, where the
 * order of equal digits does not matter. */
enum { CK_RANK_BALLOT = 0, CK_RANK_MATCH = 1, CK_RANK_ATOMIC = 2 };

#define CK_DIGIT(k, shift) ((ck_u32)((ck_u64)(k) >> (shift)) & 255u)

template <int ITEMS, int HOW>
static __device__ __forceinline__ ck_u32 ck_tile_count(const ck_kt (&key)[ITEMS], int shift, ck_u32 (&pos)[ITEMS],
                                                       ck_u32 *wh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = threadIdx.x;
    ck_u32 *mine = wh + warp * 256;
    for (int j = lane; j < 256; j += 32) mine[j] = 0;
    __syncwarp();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const ck_u32 d = CK_DIGIT(key[i], shift);
        if (HOW == CK_RANK_MATCH) {
            const ck_u32 peers = __match_any_sync(0xffffffffu, d);
            if (lane == __ffs(peers) - 1) atomicAdd(&mine[d], (ck_u32)__popc(peers));
        } else if (HOW == CK_RANK_ATOMIC) {
            pos[i] = atomicAdd(&mine[d], 1u);
        } else {
            atomicAdd(&mine[d], 1u);
        }
    }
    __syncthreads();
    ck_u32 s = 0;
    for (int w = 0; w < CK_RX_WARPS; w++) {
        const ck_u32 c = wh[w * 256 + t];
        wh[w * 256 + t] = s;
        s += c;
    }
    return s;
}

template <int ITEMS, int HOW>
static __device__ __forceinline__ void ck_tile_place(const ck_kt (&key)[ITEMS], int shift, ck_u32 total,
                                                     ck_u32 (&pos)[ITEMS], ck_u32 *wh, ck_u32 *lst, ck_u32 *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = threadIdx.x;
    const ck_u32 lt = (1u << lane) - 1u;
    ck_u32 *mine = wh + warp * 256;
    const ck_u32 start = ck_bscan(total, sh);
    lst[t] = start;
    for (int w = 0; w < CK_RX_WARPS; w++) wh[w * 256 + t] += start;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const ck_u32 d = CK_DIGIT(key[i], shift);
        if (HOW == CK_RANK_ATOMIC) {   /* any order within a digit */
            pos[i] += mine[d];
            continue;
        }
        ck_u32 peers;
        if (HOW == CK_RANK_MATCH) {
            peers = __match_any_sync(0xffffffffu, d);
        } else {
            peers = 0xffffffffu;
#pragma unroll
            for (int b = 0; b < 8; b++) {
                /* r: bit b of d copied to all 32 bits; the lanes whose bit b
                 * is this lane's are those where the ballot equals it */
                const ck_u32 r = (ck_u32)((int)(d << (31 - b)) >> 31), m = __ballot_sync(0xffffffffu, r);
                peers &= ~(m ^ r);
            }
        }
        const int leader = (__ffs(peers) - 1) & 31;
        ck_u32 before = 0;
        if (lane == leader) before = atomicAdd(&mine[d], (ck_u32)__popc(peers));
        before = __shfl_sync(0xffffffffu, before, leader);
        pos[i] = before + __popc(peers & lt);
    }
}

/* ---- one pass of the LSD radix sort over all elements (onesweep)
 *
 * Each block takes the next tile (a counter, so tiles start in order),
 * counts its digits, publishes per digit its count (status word: flag 1),
 * ranks the tile and,
 * once the counts of all tiles before it are known by walking back over
 * their words (decoupled look-back), its inclusive count (flag 2).  A
 * digit's elements of this tile then go to the digit's start (the scanned
 * global histogram) plus the elements of that digit in earlier tiles plus
 * their rank: the tile is reordered in shared memory so the stores of a
 * digit's run are consecutive.  Status words carry the pass's number
 * (epoch) so one zeroing serves every pass of a sort.
 *
 * mode 0 sorts by the keys (and moves the element numbers when pay_out);
 * mode 1 by the row of each element number (pay / len), moving those
 * only.  raw_in: the first pass reads the elements themselves
 * (contiguous) through ck_in_key; raw_out: the last writes the values back
 * (ck_out_val) instead of keys.  how: the way of ranking (CK_RANK_*). */
#define CK_ST_FLAG_AGG (1ull << 62)
#define CK_ST_FLAG_INC (2ull << 62)
#define CK_ST_EPOCH(e) ((ck_u64)(e) << 56)
#define CK_ST_EPOCH_MASK (63ull << 56)
#ifndef CK_RX_LOOK
#define CK_RX_LOOK 4
#endif

/* blocks a multiprocessor should hold: caps the registers of the tile
 * kernels (their 16 keys, ranks and element numbers a thread) */
#define CK_RX_MINB (CK_SK_K64 ? 2 : 3)

/* A pass's tile ranked, its digit counts published (flag | count at
 * pub) in between; returns the tile's count of digit threadIdx.x, pad
 * keys of padding left out. */
template <int HOW>
static __device__ __forceinline__ ck_u32 ck_rx_rank(const ck_kt (&key)[CK_RX_ITEMS], int shift, ck_u32 pad,
                                                    ck_u32 (&pos)[CK_RX_ITEMS], ck_u32 *wh, ck_u32 *lst, ck_u32 *sh,
                                                    volatile unsigned long long *pub, ck_u64 flag)
{
    const ck_u32 c = ck_tile_count<CK_RX_ITEMS, HOW>(key, shift, pos, wh);
    /* the padding is not the tile's: its digit 255 counts it */
    const ck_u32 own = threadIdx.x == 255 ? c - pad : c;
    *pub = flag | own;
    ck_tile_place<CK_RX_ITEMS, HOW>(key, shift, c, pos, wh, lst, sh);
    return own;
}

template <bool PAY>
static __device__ __forceinline__ void ck_rx_pass_body(ck_u32 n, const ck_kt *keys, const ck_u32 *pay,
                                                       ck_kt *keys_out, ck_u32 *pay_out, int mode, long long len,
                                                       int shift, const ck_u32 *hist, unsigned long long *status,
                                                       ck_u32 *counter, int epoch, const char *raw_in, char *raw_out,
                                                       int kdesc, int how)
{
    __shared__ ck_u32 wh[CK_RX_WARPS * 256], lst[256], gdel[256], sh[CK_RX_WARPS], tile_sh;
    __shared__ ck_kt sbuf[CK_RX_TILE];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, t = threadIdx.x;
    if (t == 0) tile_sh = atomicAdd(counter, 1u);
    /* the digits' global starts (ck_bscan's barriers publish tile_sh) */
    const ck_u32 gstart = ck_bscan(hist[t], sh);
    const ck_u32 tile = tile_sh;
    const ck_u64 tile0 = (ck_u64)tile * CK_RX_TILE;
    const int count = (ck_u64)n - tile0 < CK_RX_TILE ? (int)((ck_u64)n - tile0) : CK_RX_TILE;
    const int base = warp * 32 * CK_RX_ITEMS + lane;
    ck_kt key[CK_RX_ITEMS];
    ck_u32 pv[CK_RX_ITEMS], pos[CK_RX_ITEMS];
    /* one loop a source, the choice made once: all the loads issue first,
     * and the values read raw are keyed only once all are in (keying each
     * as it came would wait on each load in turn) */
    if (PAY && mode) {
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++) pv[i] = base + i * 32 < count ? pay[tile0 + base + i * 32] : 0u;
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++) key[i] = base + i * 32 < count ? (ck_kt)(pv[i] / (ck_u32)len) : ~(ck_kt)0;
    } else if (!raw_in) {
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++) key[i] = base + i * 32 < count ? keys[tile0 + base + i * 32] : ~(ck_kt)0;
    } else {
        ck_et raw[CK_RX_ITEMS];
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++)
            if (base + i * 32 < count) raw[i] = ((const ck_et *)raw_in)[tile0 + base + i * 32];
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++)
            key[i] = base + i * 32 < count ? ck_in_key((const char *)&raw[i], kdesc) : ~(ck_kt)0;
    }
    if (PAY && !mode) {
#pragma unroll
        for (int i = 0; i < CK_RX_ITEMS; i++) pv[i] = base + i * 32 < count ? pay[tile0 + base + i * 32] : 0u;
    }
    /* the counts are published before ranking, so that by the time this
     * tile and its successors look back, the tiles before have mostly
     * published their inclusive counts */
    volatile unsigned long long *st = status;
    const ck_u64 ep = CK_ST_EPOCH(epoch);
    volatile unsigned long long *pub = st + (ck_u64)tile * 256 + t;
    const ck_u64 flag = (tile ? CK_ST_FLAG_AGG : CK_ST_FLAG_INC) | ep;
    /* a part tile is padded with keys of all ones (digit 255 in every
     * pass), which rank after the tile's own in a stable ranking: they
     * take its last places, which are not stored */
    const ck_u32 pad = CK_RX_TILE - count;
    if (pad && how == CK_RANK_ATOMIC) how = CK_RANK_BALLOT;
    const ck_u32 c = how == CK_RANK_ATOMIC ? ck_rx_rank<CK_RANK_ATOMIC>(key, shift, pad, pos, wh, lst, sh, pub, flag)
                   : how == CK_RANK_MATCH  ? ck_rx_rank<CK_RANK_MATCH>(key, shift, pad, pos, wh, lst, sh, pub, flag)
                                           : ck_rx_rank<CK_RANK_BALLOT>(key, shift, pad, pos, wh, lst, sh, pub, flag);
    /* look back, publish the inclusive count: CK_RX_LOOK tiles' words a
     * step, read at once (walking back one load at a time would pay a
     * load's latency a tile) and added up to the first inclusive one, the
     * step ending early at one not yet published */
    ck_u32 before = 0;
    if (tile) {
        for (long long p = (long long)tile - 1;;) {
            ck_u64 v[CK_RX_LOOK];
#pragma unroll
            for (int j = 0; j < CK_RX_LOOK; j++) v[j] = p - j >= 0 ? st[(ck_u64)(p - j) * 256 + t] : CK_ST_FLAG_INC | ep;
            int j = 0;
            bool inc = false;
#pragma unroll
            for (; j < CK_RX_LOOK; j++) {
                if ((v[j] & CK_ST_EPOCH_MASK) != ep || !(v[j] >> 62)) break;   /* not yet published */
                before += (ck_u32)v[j];
                if ((v[j] >> 62) == 2) { inc = true; break; }
            }
            if (inc) break;
            p -= j;
        }
        *pub = CK_ST_FLAG_INC | ep | (before + c);
    }
    gdel[t] = gstart + before - lst[t];   /* tile place j of digit d goes to gdel[d] + j */
#pragma unroll
    for (int i = 0; i < CK_RX_ITEMS; i++)
        sbuf[pos[i]] = key[i];
    __syncthreads();
    ck_u32 dig[CK_RX_ITEMS];
#pragma unroll
    for (int r = 0; r < CK_RX_ITEMS; r++) {
        const int j = r * CK_RX_THREADS + t;
        if (j < count) {
            const ck_kt k = sbuf[j];
            const ck_u32 d = (ck_u32)((ck_u64)k >> shift) & 255u;
            dig[r] = d;
            if (mode == 0) {
#if !CK_SK_COMPLEX
                if (raw_out) ((ck_et *)raw_out)[gdel[d] + j] = ck_out_val(k, kdesc & 1);
                else
#endif
                keys_out[gdel[d] + j] = k;
            }
        }
    }
    if (!PAY) return;
    __syncthreads();
    ck_u32 *sp = (ck_u32 *)sbuf;
#pragma unroll
    for (int i = 0; i < CK_RX_ITEMS; i++)
        sp[pos[i]] = pv[i];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < CK_RX_ITEMS; r++) {
        const int j = r * CK_RX_THREADS + t;
        if (j < count) pay_out[gdel[dig[r]] + j] = sp[j];
    }
}

/* keys only (mode 0), and with the element numbers (mode 0 or 1) */
#ifndef CK_RX_PASS_MINB
#define CK_RX_PASS_MINB (CK_RX_MINB + 1)
#endif
extern "C" __global__ void __launch_bounds__(CK_RX_THREADS, CK_RX_PASS_MINB)
ck_rx_pass(ck_u32 n, const ck_kt *keys, ck_kt *keys_out, int shift, const ck_u32 *hist, unsigned long long *status,
           ck_u32 *counter, int epoch, const char *raw_in, char *raw_out, int kdesc, int how)
{
    ck_rx_pass_body<false>(n, keys, NULL, keys_out, NULL, 0, 0, shift, hist, status, counter, epoch, raw_in, raw_out,
                           kdesc, how);
}

extern "C" __global__ void __launch_bounds__(CK_RX_THREADS, CK_RX_MINB)
ck_rx_pass_pay(ck_u32 n, const ck_kt *keys, const ck_u32 *pay, ck_kt *keys_out, ck_u32 *pay_out, int mode,
               long long len, int shift, const ck_u32 *hist, unsigned long long *status, ck_u32 *counter, int epoch,
               int how)
{
    /* element numbers carry the order of equal keys: stable ranks only */
    ck_rx_pass_body<true>(n, keys, pay, keys_out, pay_out, mode, len, shift, hist, status, counter, epoch, NULL, NULL,
                          0, how == CK_RANK_MATCH ? CK_RANK_MATCH : CK_RANK_BALLOT);
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
/* A keys-only sort of one row: the values back from the sorted keys
 * (ck_out_val), equal keys being equal values, so the result is the
 * stable one. */
extern "C" __global__ void ck_sk_unkey(ck_u32 n, const ck_kt *keys, char *data, long long es, int desc)
{
    CK_GRID_LOOP(i, n) *(ck_et *)(data + (long long)i * es) = ck_out_val(keys[i], desc);
}

/* Short rows (up to 256 elements): a block per row, a bitonic sort of
 * (key, column) pairs in shared memory (P, a power of two >= len, slots;
 * the padding sorts last).  The column breaks ties, so the order is the
 * stable one.  blockDim.x * 2 == P. */
extern "C" __global__ void __launch_bounds__(128) ck_sk_block(long long nrows, int len, int P, char *data,
                                                             long long rs, long long es, int desc, long long *idx,
                                                             long long irs, long long ies, int sort_values)
{
    __shared__ ck_kt sk[256];
    __shared__ ck_u32 si[256];
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
        ck_et v[2];
        if (sort_values)
            for (int j = tid, k = 0; j < len && k < 2; j += T, k++) v[k] = *(const ck_et *)(row + (long long)si[j] * es);
        __syncthreads();
        for (int j = tid, k = 0; j < len && k < 2; j += T, k++) {
            if (idx) idx[r * irs + j * ies] = si[j];
            if (sort_values) *(ck_et *)(row + j * es) = v[k];
        }
        __syncthreads();
    }
}

/* Rows of up to CK_RX_THREADS * ITEMS elements: a block per row, an LSD
 * radix sort of the row's (key, column) pairs in shared memory, a pass per
 * key byte ranked by ck_tile_count/ck_tile_place (stable, so ties keep
 * column order).
 * Positions past len hold the largest key and sort after every element.
 * The rank's scratch (wh) and the columns (si) share their memory: each
 * is in use only while the other is not. */
template <int ITEMS>
static __device__ __forceinline__ void ck_rows_sort(long long nrows, int len, char *data, long long rs, long long es,
                                                    int desc, long long *idx, long long irs, long long ies,
                                                    int sort_values, ck_kt *sk, ck_u32 *wh, ck_u32 *lst, ck_u32 *sh)
{
    unsigned short *si = (unsigned short *)wh;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int base = warp * 32 * ITEMS + lane;
    for (long long r = blockIdx.x; r < nrows; r += gridDim.x) {
        char *row = data + r * rs;
        ck_kt key[ITEMS];
        ck_u32 col[ITEMS], pos[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int li = base + i * 32;
            key[i] = li < len ? ck_word(row + li * es, 1, desc) : ~(ck_kt)0;
            col[i] = (ck_u32)li;
        }
        for (int shift = 0; shift < 8 * CK_SK_KB; shift += 8) {
            __syncthreads();   /* wh (si) read by all */
            const ck_u32 c = ck_tile_count<ITEMS, CK_RANK_BALLOT>(key, shift, pos, wh);
            ck_tile_place<ITEMS, CK_RANK_BALLOT>(key, shift, c, pos, wh, lst, sh);
            __syncthreads();   /* wh free for si */
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                sk[pos[i]] = key[i];
                si[pos[i]] = (unsigned short)col[i];
            }
            __syncthreads();
            if (shift + 8 >= 8 * CK_SK_KB) break;   /* the last pass's order stays in shared memory */
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                key[i] = sk[base + i * 32];
                col[i] = si[base + i * 32];
            }
        }
        /* the values in sorted order over the keys (no longer needed, and
         * as wide as the values), as the whole row is read before it is
         * written */
        ck_et *sv = (ck_et *)sk;
        if (sort_values)
            for (int j = threadIdx.x; j < len; j += CK_RX_THREADS) sv[j] = *(const ck_et *)(row + (long long)si[j] * es);
        __syncthreads();
        for (int j = threadIdx.x; j < len; j += CK_RX_THREADS) {
            if (idx) idx[r * irs + j * ies] = si[j];
            if (sort_values) *(ck_et *)(row + j * es) = sv[j];
        }
    }
}

/* wh doubles as the columns' store: the larger of the two */
#define CK_ROWS_WH(ITEMS) (CK_RX_WARPS * 256 > CK_RX_THREADS * (ITEMS) / 2 ? CK_RX_WARPS * 256 : CK_RX_THREADS * (ITEMS) / 2)

extern "C" __global__ void __launch_bounds__(CK_RX_THREADS, CK_RX_MINB)
ck_sk_rows4(long long nrows, int len, char *data, long long rs, long long es, int desc, long long *idx, long long irs,
            long long ies, int sort_values)
{
    __shared__ ck_kt sk[CK_RX_THREADS * 4];
    __shared__ ck_u32 wh[CK_ROWS_WH(4)], lst[256], sh[CK_RX_WARPS];
    ck_rows_sort<4>(nrows, len, data, rs, es, desc, idx, irs, ies, sort_values, sk, wh, lst, sh);
}

extern "C" __global__ void __launch_bounds__(CK_RX_THREADS, CK_RX_MINB)
ck_sk_rows16(long long nrows, int len, char *data, long long rs, long long es, int desc, long long *idx, long long irs,
             long long ies, int sort_values)
{
    __shared__ ck_kt sk[CK_RX_THREADS * 16];
    __shared__ ck_u32 wh[CK_ROWS_WH(16)], lst[256], sh[CK_RX_WARPS];
    ck_rows_sort<16>(nrows, len, data, rs, es, desc, idx, irs, ies, sort_values, sk, wh, lst, sh);
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
