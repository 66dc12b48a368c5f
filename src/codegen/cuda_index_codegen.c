/* Gather, scatter, index-check and nonzero kernels as CUDA C text. */
#include "cuda_index_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

#include <stdio.h>
#include <stdlib.h>

static int dims_(int n) { return n > 0 ? n : 1; }

uint64_t ck_cuda_ix_key(const ck_cuda_ix_spec *sp)
{
    int ulog = sp->unit == 8 ? 3 : sp->unit == 4 ? 2 : sp->unit == 2 ? 1 : 0;
    uint64_t k = (uint64_t)(sp->kind & 0xF);
    k |= (uint64_t)(sp->ndim & 0x3F) << 4;
    k |= (uint64_t)(sp->nidx & 0x3F) << 10;
    k |= (uint64_t)ulog << 16;
    k |= (uint64_t)(sp->units & 0x1F) << 18;
    k |= (uint64_t)(sp->mode & 0x3) << 23;
    k |= (uint64_t)(sp->idx64 & 1) << 25;
    k |= (uint64_t)(sp->win64 & 1) << 26;
    k |= (uint64_t)(sp->byref & 1) << 27;
    k |= (uint64_t)(sp->contig & 1) << 28;
    k |= (uint64_t)(sp->vec & 1) << 29;
    return ck_kernel_key(CK_KFAM_INDEX, k);
}

const char *ck_cuda_ix_name(const ck_cuda_ix_spec *sp)
{
    switch (sp->kind) {
    case CK_IXK_CHECK: return "ck_ix_check";
    case CK_IXK_NZ_COUNT: return "ck_nz_count";
    case CK_IXK_NZ_SCAN: return "ck_nz_scan";
    case CK_IXK_NZ_WRITE: return "ck_nz_write";
    case CK_IXK_SELECT: return "ck_sel";
    case CK_IXK_EXPAND: return "ck_exp";
    default: return "ck_ix";
    }
}

size_t ck_cuda_ix_params_size(const ck_cuda_ix_spec *sp)
{
    size_t D = (size_t)dims_(sp->ndim), I = (size_t)dims_(sp->nidx);
    if (sp->kind == CK_IXK_SELECT || sp->kind == CK_IXK_EXPAND) return 3 * D * 8;
    if (sp->kind >= CK_IXK_NZ_COUNT) return 2 * D * 8;
    return (4 * D + I + I * D + 3 * I) * 8;
}

static const char *unit_type(int unit)
{
    return unit == 8 ? "unsigned long long" : unit == 4 ? "unsigned int" : unit == 2 ? "unsigned short" : "unsigned char";
}

/* The parameter struct and the opening of a kernel that takes it (P). */
static void ix_struct(ck_sbuf *b, const ck_cuda_ix_spec *sp)
{
    int D = dims_(sp->ndim), I = dims_(sp->nidx);
    ck_sbuf_printf(b, "struct ck_gp {\n    long long shape[%d], ast[%d], ost[%d], tmul[%d];\n", D, D, D, D);
    ck_sbuf_printf(b, "    const long long *idx[%d];\n    long long ist[%d][%d];\n", I, I, D);
    ck_sbuf_printf(b, "    long long alen[%d], axst[%d], kmul[%d];\n};\n", I, I, I);
}

/* Element moves of units words between two byte addresses. */
static void move(ck_sbuf *b, const ck_cuda_ix_spec *sp, const char *dst, const char *src, const char *ind)
{
    const char *U = unit_type(sp->unit);
    if (sp->units == 1) {
        ck_sbuf_printf(b, "%s*(%s *)(%s) = *(const %s *)(%s);\n", ind, U, dst, U, src);
        return;
    }
    ck_sbuf_printf(b, "%s#pragma unroll\n%sfor (int u = 0; u < %d; u++) ((%s *)(%s))[u] = ((const %s *)(%s))[u];\n", ind,
                   ind, sp->units, U, dst, U, src);
}

static char *gather_source(const ck_cuda_ix_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    ix_struct(&b, sp);
    const char *I = sp->idx64 ? "unsigned long long" : "unsigned int";
    const char *W = sp->win64 ? "unsigned long long" : "unsigned int";
    int claims = sp->kind == CK_IXK_CLAIM_INIT || sp->kind == CK_IXK_CLAIM || sp->kind == CK_IXK_APPLY;
    ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_ix(%s n, char *arr, char *oth, "
                       "unsigned long long *err, %s *win, %s)\n{\n",
                   I, W, sp->byref ? "const ck_gp *__restrict__ pp" : "const ck_gp P");
    if (sp->byref) ck_sbuf_printf(&b, "    const ck_gp &P = *pp;\n");
    ck_sbuf_printf(&b, "    (void)win; (void)err;\n");
    /* the later scatter passes run only when the first found every index good */
    if (sp->mode == CK_INDEX_RAISE && sp->nidx > 0 && (sp->kind == CK_IXK_CLAIM || sp->kind == CK_IXK_APPLY))
        ck_sbuf_printf(&b, "    if (*(volatile unsigned long long *)err != ~0ull) return;\n");
    ck_sbuf_printf(&b, "    for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (%s)gridDim.x * blockDim.x) {\n",
                   I, I, I);
    ck_sbuf_printf(&b, "        long long ao = 0, oo = 0, to = 0;\n        (void)to; (void)oo;\n");
    for (int k = 0; k < sp->nidx; k++) ck_sbuf_printf(&b, "        long long io%d = 0;\n", k);
    if (sp->ndim == 1) {
        ck_sbuf_printf(&b, "        {\n            long long c = (long long)i;\n");
    } else if (sp->ndim > 1) {
        ck_sbuf_printf(&b, "        %s rem = i;\n#pragma unroll\n        for (int d = %d; d >= 0; d--) {\n", I, sp->ndim - 1);
        ck_sbuf_printf(&b, "            %s q = rem / (%s)P.shape[d];\n            long long c = (long long)(rem - q * (%s)P.shape[d]);\n"
                           "            rem = q;\n",
                       I, I, I);
    }
    if (sp->ndim >= 1) {
        const char *d = sp->ndim == 1 ? "0" : "d";
        ck_sbuf_printf(&b, "            ao += c * P.ast[%s];\n", d);
        if (sp->kind != CK_IXK_CLAIM_INIT && sp->kind != CK_IXK_CLAIM) ck_sbuf_printf(&b, "            oo += c * P.ost[%s];\n", d);
        if (claims) ck_sbuf_printf(&b, "            to += c * P.tmul[%s];\n", d);
        for (int k = 0; k < sp->nidx; k++) ck_sbuf_printf(&b, "            io%d += c * P.ist[%d][%s];\n", k, k, d);
        ck_sbuf_printf(&b, "        }\n");
    }
    ck_sbuf_printf(&b, "        int bad = 0;\n        (void)bad;\n");
    for (int k = 0; k < sp->nidx; k++) {
        ck_sbuf_printf(&b, "        {\n            long long v = *(const long long *)((const char *)P.idx[%d] + io%d);\n"
                           "            const long long len = P.alen[%d];\n",
                       k, k, k);
        switch (sp->mode) {
        case CK_INDEX_WRAP:
            ck_sbuf_printf(&b, "            if ((unsigned long long)v >= (unsigned long long)len) { v %%= len; if (v < 0) v += len; }\n");
            break;
        case CK_INDEX_CLIP:
            ck_sbuf_printf(&b, "            v = v < 0 ? 0 : v >= len ? len - 1 : v;\n");
            break;
        default:
            ck_sbuf_printf(&b, "            if (v < 0) v += len;\n"
                               "            if ((unsigned long long)v >= (unsigned long long)len) {\n"
                               "                bad = 1;\n"
                               "                atomicMin(err, (%dull << 56) | (unsigned long long)(io%d >> 3));\n"
                               "            }\n",
                           k, k);
            break;
        }
        ck_sbuf_printf(&b, "            ao += v * P.axst[%d];\n", k);
        if (claims) ck_sbuf_printf(&b, "            to += v * P.kmul[%d];\n", k);
        ck_sbuf_printf(&b, "        }\n");
    }
    ck_sbuf_printf(&b, "        if (bad) continue;\n");
    switch (sp->kind) {
    case CK_IXK_GATHER: move(&b, sp, "oth + oo", "arr + ao", "        "); break;
    case CK_IXK_SCATTER: move(&b, sp, "arr + ao", "oth + oo", "        "); break;
    case CK_IXK_CLAIM_INIT: ck_sbuf_printf(&b, "        win[to] = 0;\n"); break;
    case CK_IXK_CLAIM: ck_sbuf_printf(&b, "        atomicMax(&win[to], (%s)i + 1);\n", W); break;
    default:
        ck_sbuf_printf(&b, "        if (win[to] != (%s)i + 1) continue;\n", W);
        move(&b, sp, "arr + ao", "oth + oo", "        ");
        break;
    }
    ck_sbuf_printf(&b, "    }\n}\n");
    return ck_sbuf_finish(&b);
}

static char *check_source(const ck_cuda_ix_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    const char *I = sp->idx64 ? "unsigned long long" : "unsigned int";
    ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_ix_check(%s n, const long long *idx, "
                       "long long len, unsigned long long k, unsigned long long *err)\n{\n", I);
    ck_sbuf_printf(&b, "    for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (%s)gridDim.x * blockDim.x) {\n"
                       "        long long v = idx[i];\n        if (v < 0) v += len;\n"
                       "        if ((unsigned long long)v >= (unsigned long long)len) atomicMin(err, (k << 56) | (unsigned long long)i);\n"
                       "    }\n}\n",
                   I, I, I);
    return ck_sbuf_finish(&b);
}

/* The mask element at position p (C order) as a test. */
static void nz_load(ck_sbuf *b, const ck_cuda_ix_spec *sp, const char *I)
{
    ck_sbuf_printf(b, "__device__ __forceinline__ bool ck_nz_at(const unsigned char *in, const ck_nzp &P, %s p)\n{\n", I);
    if (sp->contig || sp->ndim <= 1) {
        if (sp->contig) ck_sbuf_printf(b, "    (void)P;\n    return in[p] != 0;\n}\n");
        else ck_sbuf_printf(b, "    return in[(long long)p * P.st[0]] != 0;\n}\n");
        return;
    }
    ck_sbuf_printf(b, "    long long off = 0;\n#pragma unroll\n    for (int d = %d; d >= 0; d--) {\n", sp->ndim - 1);
    ck_sbuf_printf(b, "        %s q = p / (%s)P.shape[d];\n        off += (long long)(p - q * (%s)P.shape[d]) * P.st[d];\n"
                      "        p = q;\n    }\n    return in[off] != 0;\n}\n",
                   I, I, I);
}

/* ck_nz_flags(in, n, p0): bit k set when the mask byte at p0 + k (k < 16,
 * p0 + k < n) is nonzero; the mask is contiguous, p0 a multiple of 16 and
 * in 16-byte aligned.  A byte b is nonzero when ((b & 0x7f) + 0x7f) | b
 * has its top bit; the four top bits of a word gather by one multiply. */
static void nz_flags(ck_sbuf *b, const char *I)
{
    ck_sbuf_printf(b, "struct __align__(16) ck_nz16 { unsigned int x[4]; };\n"
                      "__device__ __forceinline__ unsigned int ck_nz_bits(unsigned int v)\n{\n"
                      "    unsigned int t = (((v & 0x7f7f7f7fu) + 0x7f7f7f7fu) | v) >> 7 & 0x01010101u;\n"
                      "    return (t * 0x01020408u) >> 24;\n}\n"
                      "__device__ __forceinline__ unsigned int ck_nz_flags(const unsigned char *in, %s n, %s p0)\n{\n"
                      "    unsigned int fm = 0;\n"
                      "    if (p0 + 16 <= n) {\n        const ck_nz16 q = *(const ck_nz16 *)(in + p0);\n"
                      "#pragma unroll\n        for (int k = 0; k < 4; k++) fm |= ck_nz_bits(q.x[k]) << (4 * k);\n"
                      "    } else {\n        for (int k = 0; k < 16; k++)\n"
                      "            if (p0 + k < n && in[p0 + k]) fm |= 1u << k;\n    }\n    return fm;\n}\n",
                   I, I);
}

/* The compaction write kernel's opening: its block's chunk (base) and
 * where the chunk's outputs start (run). */
static void nz_open(ck_sbuf *b, const char *I)
{
    ck_sbuf_printf(b, "    __shared__ unsigned int wsum[8];\n    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
                      "    const %s base = (%s)blockIdx.x * %d;\n    long long run = offs[blockIdx.x];\n",
                   I, I, CK_NZ_CHUNK);
}

/* The compaction's move of true element p to packed place o: its
 * coordinates (nonzero), the source element (select) or the packed value
 * to it (expand). */
static void nz_move(ck_sbuf *b, const ck_cuda_ix_spec *sp, const char *I, const char *ind)
{
    if (sp->kind == CK_IXK_SELECT) {
        char dst[64];
        snprintf(dst, sizeof dst, "out + o * %d", sp->unit * sp->units);
        move(b, sp, dst, "src + ck_src_off(P, p)", ind);
    } else if (sp->kind == CK_IXK_EXPAND) {
        char src[64];
        snprintf(src, sizeof src, "vals + o * %d", sp->unit * sp->units);
        move(b, sp, "arr + ck_src_off(P, p)", src, ind);
    } else if (sp->ndim <= 1) {
        ck_sbuf_printf(b, "%sout[o] = (long long)p;\n", ind);
    } else {
        ck_sbuf_printf(b, "%s%s r = p;\n%s#pragma unroll\n%sfor (int d = %d; d >= 0; d--) {\n"
                          "%s    %s q = r / (%s)P.shape[d];\n"
                          "%s    out[(long long)d * count + o] = (long long)(r - q * (%s)P.shape[d]);\n"
                          "%s    r = q;\n%s}\n",
                       ind, I, ind, ind, sp->ndim - 1, ind, I, I, ind, I, ind, ind);
    }
}

static char *nonzero_source(const ck_cuda_ix_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    const char *I = sp->idx64 ? "unsigned long long" : "unsigned int";
    int D = dims_(sp->ndim);
    if (sp->kind == CK_IXK_NZ_SCAN) {
        /* one block of 1024 threads walks the chunk counts with a carry */
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(1024) ck_nz_scan(long long nb, "
                           "const unsigned int *counts, long long *offs)\n{\n"
                           "    __shared__ long long wsum[32];\n    __shared__ long long carry;\n"
                           "    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
                           "    if (threadIdx.x == 0) carry = 0;\n    __syncthreads();\n"
                           "    for (long long base = 0; base < nb; base += 1024) {\n"
                           "        long long j = base + threadIdx.x;\n"
                           "        long long v = j < nb ? (long long)counts[j] : 0, x = v;\n"
                           "#pragma unroll\n        for (int o = 1; o < 32; o <<= 1) {\n"
                           "            long long y = __shfl_up_sync(0xffffffffu, x, o);\n"
                           "            if (lane >= o) x += y;\n        }\n"
                           "        if (lane == 31) wsum[w] = x;\n        __syncthreads();\n"
                           "        if (w == 0) {\n            long long s = wsum[lane];\n"
                           "#pragma unroll\n            for (int o = 1; o < 32; o <<= 1) {\n"
                           "                long long y = __shfl_up_sync(0xffffffffu, s, o);\n"
                           "                if (lane >= o) s += y;\n            }\n"
                           "            wsum[lane] = s;\n        }\n        __syncthreads();\n"
                           "        long long before = carry + (w ? wsum[w - 1] : 0);\n"
                           "        if (j < nb) offs[j] = before + x - v;\n        __syncthreads();\n"
                           "        if (threadIdx.x == 0) carry += wsum[31];\n        __syncthreads();\n"
                           "    }\n}\n");
        return ck_sbuf_finish(&b);
    }
    const int packed = sp->kind == CK_IXK_SELECT || sp->kind == CK_IXK_EXPAND;
    if (packed)
        ck_sbuf_printf(&b, "struct ck_nzp { long long shape[%d], st[%d], st2[%d]; };\n", D, D, D);
    else
        ck_sbuf_printf(&b, "struct ck_nzp { long long shape[%d], st[%d]; };\n", D, D);
    nz_load(&b, sp, I);
    if (sp->vec) nz_flags(&b, I);
    if (sp->kind == CK_IXK_NZ_COUNT && sp->vec) {
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_nz_count(%s n, const unsigned char *in, "
                           "const ck_nzp P, unsigned int *counts)\n{\n"
                           "    (void)P;\n    __shared__ unsigned int wsum[8];\n"
                           "    unsigned int c = __popc(ck_nz_flags(in, n, (%s)blockIdx.x * %d + (%s)threadIdx.x * 16));\n"
                           "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);\n"
                           "    if ((threadIdx.x & 31) == 0) wsum[threadIdx.x >> 5] = c;\n    __syncthreads();\n"
                           "    if (threadIdx.x == 0) {\n        unsigned int t = 0;\n"
                           "        for (int w = 0; w < 8; w++) t += wsum[w];\n        counts[blockIdx.x] = t;\n    }\n}\n",
                       I, I, CK_NZ_CHUNK, I);
        return ck_sbuf_finish(&b);
    }
    if (sp->kind == CK_IXK_NZ_COUNT) {
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_nz_count(%s n, const unsigned char *in, "
                           "const ck_nzp P, unsigned int *counts)\n{\n"
                           "    __shared__ unsigned int wsum[8];\n"
                           "    const %s base = (%s)blockIdx.x * %d;\n    unsigned int c = 0;\n"
                           "#pragma unroll\n    for (int j = 0; j < %d; j++) {\n"
                           "        %s p = base + (%s)(j * 256 + threadIdx.x);\n"
                           "        if (p < n) c += ck_nz_at(in, P, p);\n    }\n"
                           "#pragma unroll\n    for (int o = 16; o > 0; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);\n"
                           "    if ((threadIdx.x & 31) == 0) wsum[threadIdx.x >> 5] = c;\n    __syncthreads();\n"
                           "    if (threadIdx.x == 0) {\n        unsigned int t = 0;\n"
                           "        for (int w = 0; w < 8; w++) t += wsum[w];\n        counts[blockIdx.x] = t;\n    }\n}\n",
                       I, I, I, CK_NZ_CHUNK, CK_NZ_ITEMS, I, I);
        return ck_sbuf_finish(&b);
    }
    int isz = sp->unit * sp->units;
    if (packed) {
        /* the array element's byte offset at position p */
        ck_sbuf_printf(&b, "__device__ __forceinline__ long long ck_src_off(const ck_nzp &P, %s p)\n{\n", I);
        if (sp->contig || sp->ndim <= 1) {
            if (sp->contig) ck_sbuf_printf(&b, "    (void)P;\n    return (long long)p * %d;\n}\n", isz);
            else ck_sbuf_printf(&b, "    return (long long)p * P.st2[0];\n}\n");
        } else {
            ck_sbuf_printf(&b, "    long long off = 0;\n#pragma unroll\n    for (int d = %d; d >= 0; d--) {\n", sp->ndim - 1);
            ck_sbuf_printf(&b, "        %s q = p / (%s)P.shape[d];\n        off += (long long)(p - q * (%s)P.shape[d]) * P.st2[d];\n"
                               "        p = q;\n    }\n    return off;\n}\n",
                           I, I, I);
        }
    }
    /* write: each chunk again, its true elements ranked by a block scan of
     * warp ballots, their coordinates (or source elements) at the chunk's
     * offset */
    if (sp->kind == CK_IXK_SELECT)
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_sel(%s n, const unsigned char *in, "
                           "const ck_nzp P, const long long *offs, long long count, const char *src, char *out)\n{\n", I);
    else if (sp->kind == CK_IXK_EXPAND)
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_exp(%s n, const unsigned char *in, "
                           "const ck_nzp P, const long long *offs, long long count, char *arr, const char *vals)\n{\n", I);
    else
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_nz_write(%s n, const unsigned char *in, "
                           "const ck_nzp P, const long long *offs, long long count, long long *out)\n{\n", I);
    if (sp->vec) {
        /* a thread's 16 mask bytes at once; the block's true positions,
         * ranked by a scan of the threads' counts, listed in shared memory
         * in order, then moved with consecutive threads on consecutive
         * outputs */
        nz_open(&b, I);
        ck_sbuf_printf(&b,
                       "    __shared__ unsigned short spos[%d];\n"
                       "    unsigned int fm = ck_nz_flags(in, n, base + (%s)threadIdx.x * 16);\n"
                       "    const unsigned int c = __popc(fm);\n    unsigned int x = c;\n"
                       "#pragma unroll\n    for (int o = 1; o < 32; o <<= 1) {\n"
                       "        const unsigned int y = __shfl_up_sync(0xffffffffu, x, o);\n        if (lane >= o) x += y;\n    }\n"
                       "    if (lane == 31) wsum[w] = x;\n    __syncthreads();\n"
                       "    unsigned int at = x - c, tot = 0;\n"
                       "#pragma unroll\n    for (int v = 0; v < 8; v++) { if (v < w) at += wsum[v]; tot += wsum[v]; }\n"
                       "    for (; fm; fm &= fm - 1) spos[at++] = (unsigned short)(threadIdx.x * 16 + __ffs(fm) - 1);\n"
                       "    __syncthreads();\n"
                       "    for (unsigned int k = threadIdx.x; k < tot; k += 256) {\n"
                       "        const %s p = base + spos[k];\n        const long long o = run + k;\n"
                       "        if (o < count) {\n",
                       CK_NZ_CHUNK, I, I);
        nz_move(&b, sp, I, "            ");
        ck_sbuf_printf(&b, "        }\n    }\n}\n");
        return ck_sbuf_finish(&b);
    }
    nz_open(&b, I);
    ck_sbuf_printf(&b,
                   "    for (int j = 0; j < %d; j++) {\n"
                   "        %s p = base + (%s)(j * 256 + threadIdx.x);\n"
                   "        const bool f = p < n && ck_nz_at(in, P, p);\n"
                   "        const unsigned int bal = __ballot_sync(0xffffffffu, f);\n"
                   "        if (lane == 0) wsum[w] = __popc(bal);\n        __syncthreads();\n"
                   "        unsigned int wpre = 0, tot = 0;\n"
                   "#pragma unroll\n        for (int v = 0; v < 8; v++) { if (v < w) wpre += wsum[v]; tot += wsum[v]; }\n"
                   "        if (f) {\n"
                   "            const long long o = run + wpre + __popc(bal & ((1u << lane) - 1u));\n"
                   "            if (o < count) {\n",
                   CK_NZ_ITEMS, I, I);
    nz_move(&b, sp, I, "                ");
    ck_sbuf_printf(&b, "            }\n        }\n        run += tot;\n        __syncthreads();\n    }\n}\n");
    return ck_sbuf_finish(&b);
}

char *ck_cuda_ix_source(const ck_cuda_ix_spec *sp)
{
    switch (sp->kind) {
    case CK_IXK_GATHER: case CK_IXK_SCATTER: case CK_IXK_CLAIM_INIT: case CK_IXK_CLAIM: case CK_IXK_APPLY:
        return gather_source(sp);
    case CK_IXK_CHECK: return check_source(sp);
    case CK_IXK_NZ_COUNT: case CK_IXK_NZ_SCAN: case CK_IXK_NZ_WRITE: case CK_IXK_SELECT: case CK_IXK_EXPAND:
        return nonzero_source(sp);
    default:
        ck_error_set(CK_ERR_VALUE, "unknown indexing kernel kind %d", sp->kind);
        return NULL;
    }
}
