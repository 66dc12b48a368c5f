/* Reductions and scans as CUDA C text. */
#include "cuda_reduce_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

#include <stdio.h>
#include <stdlib.h>

uint64_t ck_cuda_red_key(const ck_cuda_red_spec *s, ck_red_kernel k)
{
    uint64_t p = ((uint64_t)s->op << 32) | ((uint64_t)s->in << 24) | ((uint64_t)s->out << 16) |
                 ((uint64_t)s->nout << 10) | ((uint64_t)s->nin << 4) | (uint64_t)s->thread_layout;
    return ck_kernel_key(CK_KFAM_REDUCE, p << 2 | (uint64_t)k);
}

const char *ck_cuda_red_name(const ck_cuda_red_spec *s, ck_red_kernel k)
{
    switch (k) {
    case CK_REDK_FINAL: return "ck_red_final";
    case CK_REDK_VEC: return "ck_red_vec";
    default: return s->thread_layout ? "ck_red_thread" : "ck_red_block";
    }
}

/* A float (or complex) min/max carries the index of the element it holds:
 * equal zeros (and NaNs) differ in their bits, and NumPy's answer is the
 * later (float32/64) or first (float16, complex) of them in index order,
 * which the interleaved partials of a tree do not keep by themselves. */
static int minmax_indexed(const ck_cuda_red_spec *s)
{
    char k = ck_cuda_kind_letter(s->in);
    return (s->op == CK_REDUCE_MIN || s->op == CK_REDUCE_MAX) && (k == 'F' || k == 'C');
}

/* The accumulator type of op on input t with output o. */
static const char *acc_type(const ck_cuda_red_spec *s)
{
    if (minmax_indexed(s)) return "ck_argacc";
    switch (s->op) {
    case CK_REDUCE_SUM: case CK_REDUCE_PROD:
        /* float sums accumulate in double: the partials of a split sum are
         * then exact enough that the order of the combine does not show */
        if (s->out == CK_FLOAT16 || s->out == CK_FLOAT32) return "double";
        if (s->out == CK_COMPLEX64) return "ck_c128";
        return ck_cuda_compute_type(s->out);
    case CK_REDUCE_MIN: case CK_REDUCE_MAX: return ck_cuda_compute_type(s->in);
    case CK_REDUCE_ALL: case CK_REDUCE_ANY: return "int";
    case CK_REDUCE_COUNT_NONZERO: return "long long";
    default: return "ck_argacc";
    }
}

/* The bytes of acc_type's type: the two change together. */
size_t ck_cuda_red_acc_size(const ck_cuda_red_spec *s)
{
    if (minmax_indexed(s)) return 32;   /* {value, index} padded */
    switch (s->op) {
    case CK_REDUCE_SUM: case CK_REDUCE_PROD:
        return s->out == CK_FLOAT16 || s->out == CK_FLOAT32 ? 8 : s->out == CK_COMPLEX64 ? 16
               : (size_t)ck_dtype_get_info(s->out)->itemsize;
    case CK_REDUCE_MIN: case CK_REDUCE_MAX: {
        ck_dtype t = s->in == CK_FLOAT16 ? CK_FLOAT32 : s->in;
        return (size_t)ck_dtype_get_info(t)->itemsize;
    }
    case CK_REDUCE_ALL: case CK_REDUCE_ANY: return 4;
    case CK_REDUCE_COUNT_NONZERO: return 8;
    default: return 32;   /* {value, index} padded */
    }
}

char *ck_cuda_red_source(const ck_cuda_red_spec *s)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    const char *in_st = ck_cuda_storage_type(s->in), *in_c = ck_cuda_compute_type(s->in);
    const char *out_st = ck_cuda_storage_type(s->out), *A = acc_type(s);
    char k = ck_cuda_kind_letter(s->in);
    int is_float = k == 'F' || k == 'C';
    ck_sbuf_printf(&b, "struct red_nd { long long out_shape[%d], out_in_st[%d], out_out_st[%d], in_shape[%d], in_st[%d]; };\n",
                   CK_CUDA_RED_MAXDIM, CK_CUDA_RED_MAXDIM, CK_CUDA_RED_MAXDIM, CK_CUDA_RED_MAXDIM, CK_CUDA_RED_MAXDIM);
    ck_sbuf_printf(&b, "struct ck_argacc { %s v; long long i; };\n", in_c);
    /* identity, map (value v of the input at flat index j) and combine */
    switch (s->op) {
    case CK_REDUCE_SUM: case CK_REDUCE_PROD: {
        /* the loop's dtype is out's: an input of another dtype converts as
         * it is read, by the cast formula (NumPy's unsafe cast), and a bool
         * output adds as "or" and multiplies as "and" */
        int sum = s->op == CK_REDUCE_SUM, to_bool = s->out == CK_BOOL;
        ck_sbuf_printf(&b, "#define IDENT ((%s)%d)\n", A, !sum);
        if (s->in == s->out)
            ck_sbuf_printf(&b, "#define MAP(v, j) ((%s)(v))\n", A);
        else
            ck_sbuf_printf(&b, "#define MAP(v, j) ((%s)CK_CVT_(%c, %c, %s, v))\n", A, k, ck_cuda_kind_letter(s->out),
                           out_st);
        ck_sbuf_printf(&b, "#define COMB(a, b) ((a) %s (b))\n", to_bool ? (sum ? "|" : "&") : (sum ? "+" : "*"));
        break;
    }
    case CK_REDUCE_MIN: case CK_REDUCE_MAX: {
        const char *mm = s->op == CK_REDUCE_MIN ? "MINIMUM" : "MAXIMUM";
        const char *id;
        switch (k) {
        case 'B': id = s->op == CK_REDUCE_MIN ? "1" : "0"; break;
        case 'F': id = s->op == CK_REDUCE_MIN ? "CK_INFF" : "-CK_INFF"; break;
        case 'C': id = s->op == CK_REDUCE_MIN ? "CK_INFF, CK_INFF" : "-CK_INFF, -CK_INFF"; break;
        default: id = NULL;
        }
        int mn = s->op == CK_REDUCE_MIN;
        if (minmax_indexed(s))
            ck_sbuf_printf(&b, "#define IDENT ck_mk(%s(%s), -1)\n", in_c, id);
        else if (id)
            ck_sbuf_printf(&b, "#define IDENT (%s(%s))\n", A, id);
        else if (k == 'U')   /* the type's largest value for min, 0 for max */
            ck_sbuf_printf(&b, "#define IDENT ((%s)(%s))\n", A, mn ? "~0ull" : "0");
        else                 /* signed: largest is ~(1 << (bits-1)), smallest 1 << (bits-1) */
            ck_sbuf_printf(&b, "#define IDENT ((%s)(%s(1ull << (8 * sizeof(%s) - 1))))\n", A, mn ? "~" : "", A);
        /* the element-wise op's formula, of the input dtype (its ties rule) */
        char dt[16];
        const char *nm = ck_dtype_get_info(s->in)->name;
        size_t i = 0;
        for (; nm[i] && i + 1 < sizeof dt; i++) dt[i] = (char)(nm[i] >= 'a' && nm[i] <= 'z' ? nm[i] - 32 : nm[i]);
        dt[i] = 0;
        if (!minmax_indexed(s)) {
            ck_sbuf_printf(&b, "#define MAP(v, j) (v)\n#define COMB(a, b) CK_X_%s_%c(%s, a, b)\n", mm, k, dt);
            break;
        }
        /* NaN first, then the extreme value, then of equal ones the later
         * or the first by index as the element-wise op's ties rule says */
        ck_sbuf_printf(&b, "static __device__ ck_argacc ck_mk(%s v, long long i) { ck_argacc r; r.v = v; r.i = i; return r; }\n", in_c);
        ck_sbuf_printf(&b, "static __device__ bool ck_isnan_(%s v) { return %s; }\n", in_c, k == 'F' ? "v != v" : "CK_CNAN(v)");
        ck_sbuf_printf(&b, "static __device__ bool ck_better_(%s x, %s y) { return %s; }\n", in_c, in_c,
                       k == 'C' ? (mn ? "CK_CLT(x, y)" : "CK_CLT(y, x)") : (mn ? "x < y" : "x > y"));
        char later[40];
        snprintf(later, sizeof later, k == 'F' ? "CK_TIES_LATER_%s" : "0", dt);
        ck_sbuf_printf(&b, "static __device__ ck_argacc ck_comb(ck_argacc a, ck_argacc b) {\n"
                           "    bool an = ck_isnan_(a.v), bn = ck_isnan_(b.v);\n"
                           "    bool pick = (an || bn) ? bn && (!an || b.i < a.i)\n"
                           "              : ck_better_(b.v, a.v) || (!ck_better_(a.v, b.v) && (%s ? b.i > a.i : b.i < a.i));\n"
                           "    return pick ? b : a;\n}\n", later);
        ck_sbuf_printf(&b, "#define MAP(v, j) ck_mk((v), (j))\n#define COMB(a, b) ck_comb(a, b)\n");
        break;
    }
    case CK_REDUCE_ALL:
        ck_sbuf_printf(&b, "#define IDENT 1\n#define MAP(v, j) ((v) != 0)\n#define COMB(a, b) ((a) & (b))\n");
        break;
    case CK_REDUCE_ANY:
        ck_sbuf_printf(&b, "#define IDENT 0\n#define MAP(v, j) ((v) != 0)\n#define COMB(a, b) ((a) | (b))\n");
        break;
    case CK_REDUCE_COUNT_NONZERO:
        ck_sbuf_printf(&b, "#define IDENT 0ll\n#define MAP(v, j) ((long long)((v) != 0))\n#define COMB(a, b) ((a) + (b))\n");
        break;
    default: {
        int amin = s->op == CK_REDUCE_ARGMIN;
        ck_sbuf_printf(&b, "static __device__ ck_argacc ck_mk(%s v, long long i) { ck_argacc r; r.v = v; r.i = i; return r; }\n", in_c);
        ck_sbuf_printf(&b, "static __device__ bool ck_isnan_(%s v) { return %s; }\n", in_c,
                       k == 'F' ? "v != v" : k == 'C' ? "CK_CNAN(v)" : "false");
        ck_sbuf_printf(&b, "static __device__ bool ck_lt_(%s a, %s b) { return %s; }\n", in_c, in_c,
                       k == 'C' ? "CK_CLT(a, b)" : "a < b");
        /* the first NaN wins, then the extreme value, then the lower index */
        ck_sbuf_printf(&b, "static __device__ ck_argacc ck_comb(ck_argacc a, ck_argacc b) {\n"
                           "    if (a.i < 0) return b;\n    if (b.i < 0) return a;\n"
                           "    bool an = ck_isnan_(a.v), bn = ck_isnan_(b.v);\n"
                           "    if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;\n"
                           "    if (ck_lt_(%s, %s)) return a;\n    if (ck_lt_(%s, %s)) return b;\n"
                           "    return a.i < b.i ? a : b;\n}\n",
                       amin ? "a.v" : "b.v", amin ? "b.v" : "a.v", amin ? "b.v" : "a.v", amin ? "a.v" : "b.v");
        ck_sbuf_printf(&b, "#define IDENT ck_mk((%s)0, -1)\n#define MAP(v, j) ck_mk((v), (j))\n#define COMB(a, b) ck_comb(a, b)\n", in_c);
        break;
    }
    }
    (void)is_float;
    /* the final conversion of an accumulator to the output */
    if (s->op == CK_REDUCE_ARGMIN || s->op == CK_REDUCE_ARGMAX)
        ck_sbuf_printf(&b, "#define FIN(a) ((%s)((a).i < 0 ? 0 : (a).i))\n", out_st);
    else if (minmax_indexed(s))
        ck_sbuf_printf(&b, "#define FIN(a) ((%s)(a).v)\n", out_st);
    else
        ck_sbuf_printf(&b, "#define FIN(a) ((%s)(a))\n", out_st);

    /* offsets of output o and of reduced position j: the last dim takes
     * what is left, so one dim costs no division */
    ck_sbuf_printf(&b,
        "static __device__ void ck_out_off(const red_nd &nd, long long o, long long &in_off, long long &out_off) {\n"
        "    in_off = 0; out_off = 0;\n#pragma unroll\n    for (int d = 0; d < %d - 1; d++) {\n"
        "        long long q = o / nd.out_shape[d], c = o - q * nd.out_shape[d]; o = q;\n"
        "        in_off += c * nd.out_in_st[d]; out_off += c * nd.out_out_st[d];\n    }\n"
        "    if (%d > 0) { in_off += o * nd.out_in_st[%d]; out_off += o * nd.out_out_st[%d]; }\n}\n",
        s->nout, s->nout, s->nout > 0 ? s->nout - 1 : 0, s->nout > 0 ? s->nout - 1 : 0);
    ck_sbuf_printf(&b,
        "static __device__ long long ck_in_off(const red_nd &nd, long long j) {\n"
        "    long long off = 0;\n#pragma unroll\n    for (int d = 0; d < %d - 1; d++) {\n"
        "        long long q = j / nd.in_shape[d], c = j - q * nd.in_shape[d]; j = q;\n"
        "        off += c * nd.in_st[d];\n    }\n    return %d > 0 ? off + j * nd.in_st[%d] : 0;\n}\n",
        s->nin, s->nin, s->nin > 0 ? s->nin - 1 : 0);
    ck_sbuf_printf(&b, "#define LOAD(p) ((%s)*(const %s *)(p))\n", in_c, in_st);

    /* block layout: block (x: output, y: split) */
    ck_sbuf_printf(&b,
        "extern \"C\" __global__ void __launch_bounds__(256) ck_red_block(long long n_out, long long inner, long long chunk,\n"
        "        red_nd nd, const char *in, char *out, %s *partial) {\n"
        "    CK_PDL_ENTRY();\n"
        "    __shared__ %s sm[256];\n"
        "    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {\n"
        "        long long ioff, ooff; ck_out_off(nd, o, ioff, ooff);\n"
        "        long long j0 = (long long)blockIdx.y * chunk, j1 = j0 + chunk < inner ? j0 + chunk : inner;\n"
        "        %s acc = IDENT;\n"
        "        for (long long j = j0 + threadIdx.x; j < j1; j += blockDim.x) {\n"
        "            %s v = LOAD(in + ioff + ck_in_off(nd, j)); acc = COMB(acc, MAP(v, j));\n        }\n"
        "        sm[threadIdx.x] = acc; __syncthreads();\n"
        "        for (int w = blockDim.x / 2; w > 0; w >>= 1) {\n"
        "            if ((int)threadIdx.x < w) sm[threadIdx.x] = COMB(sm[threadIdx.x], sm[threadIdx.x + w]);\n"
        "            __syncthreads();\n        }\n"
        "        if (threadIdx.x == 0) {\n"
        "            if (gridDim.y == 1) *(%s *)(out + ooff) = FIN(sm[0]);\n"
        "            else partial[(long long)blockIdx.y * n_out + o] = sm[0];\n        }\n"
        "        __syncthreads();\n    }\n}\n", A, A, A, in_c, out_st);
    /* block layout over contiguous, 16-byte aligned rows: vector loads,
     * two in flight per thread.  VFOLD folds the V values of one vector,
     * the first at flat index j; a sum of 8- or 16-bit integers into an
     * integer adds a vector's values in int first (exact: at most 16 of
     * them, each below 2**16), then once into the accumulator: a 64-bit
     * integer add is two instructions on the GPU, one per value read would
     * be 32 a 16-byte load.  The result wraps as adding one by one would. */
    {
        int isz = ck_dtype_get_info(s->in)->itemsize, V = isz >= 16 ? 1 : 16 / isz;
        char ko = ck_cuda_kind_letter(s->out);
        if (s->op == CK_REDUCE_SUM && (k == 'B' || k == 'I' || k == 'U') && isz <= 2 && (ko == 'I' || ko == 'U'))
            ck_sbuf_printf(&b, "#define VFOLD(acc, x, j) do { int s_ = 0; _Pragma(\"unroll\") "
                               "for (int e = 0; e < %d; e++) s_ += (int)(x).v[e]; acc = COMB(acc, (%s)s_); } while (0)\n",
                           V, A);
        else
            ck_sbuf_printf(&b, "#define VFOLD(acc, x, j) do { _Pragma(\"unroll\") "
                               "for (int e = 0; e < %d; e++) acc = COMB(acc, MAP((%s)(x).v[e], (j) + e)); } while (0)\n",
                           V, in_c);
        ck_sbuf_printf(&b,
            "extern \"C\" __global__ void __launch_bounds__(256) ck_red_vec(long long n_out, long long inner, long long chunk,\n"
            "        red_nd nd, const char *in, char *out, %s *partial) {\n"
            "    CK_PDL_ENTRY();\n"
            "    __shared__ %s sm[256];\n"
            "    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {\n"
            "        long long ioff, ooff; ck_out_off(nd, o, ioff, ooff);\n"
            "        long long j0 = (long long)blockIdx.y * chunk, j1 = j0 + chunk < inner ? j0 + chunk : inner;\n"
            "        const %s *p = (const %s *)(in + ioff);\n"
            "        const ck_vec<%s, %d> *pv = (const ck_vec<%s, %d> *)(p + j0);\n"
            "        long long nv = (j1 - j0) / %d;\n"
            "        %s acc = IDENT, acc2 = IDENT;\n"
            "        long long t = threadIdx.x;\n"
            "        for (; t + blockDim.x < nv; t += 2 * blockDim.x) {\n"
            "            ck_vec<%s, %d> x = pv[t], y = pv[t + blockDim.x];\n"
            "            VFOLD(acc, x, j0 + t * %d);\n"
            "            VFOLD(acc2, y, j0 + (t + blockDim.x) * %d);\n        }\n"
            "        for (; t < nv; t += blockDim.x) {\n"
            "            ck_vec<%s, %d> x = pv[t];\n"
            "            VFOLD(acc, x, j0 + t * %d);\n        }\n"
            "        for (long long j = j0 + nv * %d + threadIdx.x; j < j1; j += blockDim.x) acc = COMB(acc, MAP((%s)p[j], j));\n"
            "        acc = COMB(acc, acc2);\n"
            "        sm[threadIdx.x] = acc; __syncthreads();\n"
            "        for (int w = blockDim.x / 2; w > 0; w >>= 1) {\n"
            "            if ((int)threadIdx.x < w) sm[threadIdx.x] = COMB(sm[threadIdx.x], sm[threadIdx.x + w]);\n"
            "            __syncthreads();\n        }\n"
            "        if (threadIdx.x == 0) {\n"
            "            if (gridDim.y == 1) *(%s *)(out + ooff) = FIN(sm[0]);\n"
            "            else partial[(long long)blockIdx.y * n_out + o] = sm[0];\n        }\n"
            "        __syncthreads();\n    }\n}\n",
            A, A, in_st, in_st, in_st, V, in_st, V, V, A, in_st, V, V, V, in_st, V, V, V, in_c, out_st);
    }
    /* thread layout: thread per output, block.y splits */
    ck_sbuf_printf(&b,
        "extern \"C\" __global__ void __launch_bounds__(256) ck_red_thread(long long n_out, long long inner, long long chunk,\n"
        "        red_nd nd, const char *in, char *out, %s *partial) {\n"
        "    CK_PDL_ENTRY();\n"
        "    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (o >= n_out) return;\n"
        "    long long ioff, ooff; ck_out_off(nd, o, ioff, ooff);\n"
        "    long long j0 = (long long)blockIdx.y * chunk, j1 = j0 + chunk < inner ? j0 + chunk : inner;\n"
        "    %s acc = IDENT, a1 = IDENT, a2 = IDENT, a3 = IDENT;\n"
        "    long long j = j0;\n"
        "    for (; j + 3 < j1; j += 4) {\n"   /* four loads in flight per thread */
        "        %s v0 = LOAD(in + ioff + ck_in_off(nd, j)), v1 = LOAD(in + ioff + ck_in_off(nd, j + 1));\n"
        "        %s v2 = LOAD(in + ioff + ck_in_off(nd, j + 2)), v3 = LOAD(in + ioff + ck_in_off(nd, j + 3));\n"
        "        acc = COMB(acc, MAP(v0, j)); a1 = COMB(a1, MAP(v1, j + 1)); a2 = COMB(a2, MAP(v2, j + 2)); a3 = COMB(a3, MAP(v3, j + 3));\n    }\n"
        "    for (; j < j1; j++) { %s v = LOAD(in + ioff + ck_in_off(nd, j)); acc = COMB(acc, MAP(v, j)); }\n"
        "    acc = COMB(COMB(acc, a1), COMB(a2, a3));\n"
        "    if (gridDim.y == 1) *(%s *)(out + ooff) = FIN(acc);\n"
        "    else partial[(long long)blockIdx.y * n_out + o] = acc;\n}\n", A, A, in_c, in_c, in_c, out_st);
    /* combine the splits' partials: a block per output */
    ck_sbuf_printf(&b,
        "extern \"C\" __global__ void __launch_bounds__(256) ck_red_final(long long n_out, int splits, red_nd nd, char *out, const %s *partial) {\n"
        "    CK_PDL_ENTRY();\n"
        "    __shared__ %s sm[256];\n"
        "    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {\n"
        "        long long ioff, ooff; ck_out_off(nd, o, ioff, ooff);\n"
        "        %s acc = IDENT;\n"
        "        for (int y = threadIdx.x; y < splits; y += blockDim.x) acc = COMB(acc, partial[(long long)y * n_out + o]);\n"
        "        sm[threadIdx.x] = acc; __syncthreads();\n"
        "        for (int w = blockDim.x / 2; w > 0; w >>= 1) {\n"
        "            if ((int)threadIdx.x < w) sm[threadIdx.x] = COMB(sm[threadIdx.x], sm[threadIdx.x + w]);\n"
        "            __syncthreads();\n        }\n"
        "        if (threadIdx.x == 0) *(%s *)(out + ooff) = FIN(sm[0]);\n"
        "        __syncthreads();\n    }\n}\n", A, A, A, out_st);
    return ck_sbuf_finish(&b);
}

/* ------------------------------------------------------------- scans */

uint64_t ck_cuda_scan_key(const ck_cuda_scan_spec *s, ck_scan_kernel k)
{
    return ck_kernel_key(CK_KFAM_SCAN, ((uint64_t)k << 40) | ((uint64_t)s->in << 24) | ((uint64_t)s->op << 16) |
                                       ((uint64_t)s->out << 8) | (uint64_t)s->nout);
}

const char *ck_cuda_scan_name(ck_scan_kernel k) { return k == CK_SCANK_LOOKBACK ? "ck_scan_lb" : "ck_scan"; }

char *ck_cuda_scan_source(const ck_cuda_scan_spec *s)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    const char *st = ck_cuda_storage_type(s->out), *c = ck_cuda_compute_type(s->out);
    const char *in_st = ck_cuda_storage_type(s->in);
    /* a bool output adds as "or" and multiplies as "and", as NumPy's bool loops */
    const char *comb = s->out == CK_BOOL ? (s->op == CK_REDUCE_SUM ? "|" : "&") : s->op == CK_REDUCE_SUM ? "+" : "*";
    /* an input value (stored) in the compute type of the output, through
     * the cast formula when the dtypes differ */
    if (s->in == s->out)
        ck_sbuf_printf(&b, "#define SCAN_IN(x) ((%s)(x))\n", c);
    else
        ck_sbuf_printf(&b, "#define SCAN_IN(x) ((%s)CK_CVT_(%c, %c, %s, (%s)(x)))\n", c, ck_cuda_kind_letter(s->in),
                       ck_cuda_kind_letter(s->out), st, ck_cuda_compute_type(s->in));
    /* one block per row: each thread scans a run of elements serially, the
     * block scans the runs' totals in shared memory, then threads add their
     * offset; rows longer than a block's tile loop tile by tile with a carry */
    ck_sbuf_printf(&b,
        "struct scan_nd { long long shape[8], in_st[8], out_st[8]; };\n"
        "extern \"C\" __global__ void __launch_bounds__(256) ck_scan(long long rows, long long len, long long in_stride,\n"
        "        long long out_stride, scan_nd nd, const char *in, char *out) {\n"
        "    __shared__ %s tot[256];\n"
        "    const int T = blockDim.x, R = 8;\n"
        "    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n"
        "        long long io = 0, oo = 0, q = row;\n"
        "        for (int d = 0; d < %d; d++) { long long cc = q %% nd.shape[d]; q /= nd.shape[d]; io += cc * nd.in_st[d]; oo += cc * nd.out_st[d]; }\n"
        "        %s carry = (%s)%s;\n"
        "        for (long long base = 0; base < len; base += (long long)T * R) {\n"
        "            %s v[8]; %s run = (%s)%s;\n"
        "            long long j0 = base + (long long)threadIdx.x * R;\n"
        "            for (int r = 0; r < R; r++) { long long j = j0 + r;\n"
        "                %s x = j < len ? SCAN_IN(*(const %s *)(in + io + j * in_stride)) : (%s)%s;\n"
        "                run = run %s x; v[r] = run; }\n"
        "            tot[threadIdx.x] = run; __syncthreads();\n"
        "            for (int w = 1; w < T; w <<= 1) {\n"
        "                %s add = (int)threadIdx.x >= w ? tot[threadIdx.x - w] : (%s)%s;\n"
        "                __syncthreads(); tot[threadIdx.x] = tot[threadIdx.x] %s add; __syncthreads();\n            }\n"
        "            %s before = carry %s (threadIdx.x ? tot[threadIdx.x - 1] : (%s)%s);\n"
        "            for (int r = 0; r < R; r++) { long long j = j0 + r;\n"
        "                if (j < len) *(%s *)(out + oo + j * out_stride) = (%s)(before %s v[r]); }\n"
        "            carry = carry %s tot[T - 1]; __syncthreads();\n        }\n    }\n}\n",
        c, s->nout, c, c, s->op == CK_REDUCE_SUM ? "0" : "1", c, c, c, s->op == CK_REDUCE_SUM ? "0" : "1",
        c, in_st, c, s->op == CK_REDUCE_SUM ? "0" : "1", comb, c, c, s->op == CK_REDUCE_SUM ? "0" : "1", comb,
        c, comb, c, s->op == CK_REDUCE_SUM ? "0" : "1", st, st, comb, comb);
    /* one long contiguous row (not complex): a single-pass scan with
     * decoupled look-back.  256 threads scan a tile of 4096 elements, 16 a
     * thread: each warp loads its 512 coalesced into shared memory and
     * reads back 16 consecutive ones a lane (a warp transpose, padded
     * against bank conflicts); lanes scan serially, warps by shuffles, the
     * block over the 8 warp totals.  Tiles are taken in order from a
     * counter, so a tile only ever waits on tiles already running.  Each
     * publishes its aggregate (flag 1), then, once it knows its prefix, its
     * inclusive value (flag 2); warp 0 looks back over 32 predecessors at a
     * time, summing the aggregates after the last inclusive value it sees.
     * Compute types of 4 bytes or less pack (flag, value) in one 64-bit
     * word, read and written whole; wider ones write the value, fence, then
     * the flag, and a reader reads the flag, fences, then the value. */
    if (ck_cuda_kind_letter(s->out) != 'C') {
        int packed = s->out == CK_FLOAT16 || ck_dtype_get_info(s->out)->itemsize <= 4;
        ck_sbuf_printf(&b,
            "#define CK_SOP(a, b) ((a) %s (b))\n#define CK_PAD(i) ((i) + ((i) >> 5))\n"
            "extern \"C\" __global__ void __launch_bounds__(256) ck_scan_lb(long long len, const %s *in, %s *out,\n"
            "        unsigned *counter, unsigned long long *desc, int *flags, %s *aggs, %s *incls) {\n"
            "    typedef %s CT;\n    const CT ID = (CT)%s;\n"
            "    __shared__ CT buf[8][528];\n    __shared__ CT wsum[8];\n    __shared__ CT excl_sh;\n"
            "    __shared__ unsigned tile_sh;\n"
            "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
            "    if (threadIdx.x == 0) tile_sh = atomicAdd(counter, 1u);\n    __syncthreads();\n"
            "    const unsigned tile = tile_sh;\n"
            "    const long long t0 = (long long)tile * 4096 + (long long)warp * 512;\n"
            "    CT *wb = buf[warp];\n"
            "    if (t0 + 512 <= len) {\n"
            "#pragma unroll\n        for (int r = 0; r < 16; r++) wb[CK_PAD(r * 32 + lane)] = SCAN_IN(in[t0 + r * 32 + lane]);\n"
            "    } else {\n"
            "#pragma unroll\n        for (int r = 0; r < 16; r++) { long long j = t0 + r * 32 + lane;\n"
            "            wb[CK_PAD(r * 32 + lane)] = j < len ? SCAN_IN(in[j]) : ID; }\n    }\n"
            "    __syncwarp();\n"
            "    CT v[16];\n    v[0] = wb[CK_PAD(lane * 16)];\n"
            "#pragma unroll\n    for (int r = 1; r < 16; r++) v[r] = CK_SOP(v[r - 1], wb[CK_PAD(lane * 16 + r)]);\n"
            "    CT x = v[15];\n"
            "#pragma unroll\n    for (int o = 1; o < 32; o <<= 1) { CT y = (CT)__shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x = CK_SOP(y, x); }\n"
            "    CT xex = (CT)__shfl_up_sync(0xffffffffu, x, 1);\n"
            "    if (lane == 31) wsum[warp] = x;\n"
            "    __syncthreads();\n"
            "    CT agg = wsum[0], wpre = ID;\n"
            "    for (int k = 1; k < 8; k++) agg = CK_SOP(agg, wsum[k]);\n"
            "    for (int k = 0; k < warp; k++) wpre = k ? CK_SOP(wpre, wsum[k]) : wsum[0];\n",
            comb, in_st, st, c, c, c, s->op == CK_REDUCE_SUM ? "0" : "1");
        if (packed)
            ck_sbuf_printf(&b,
                "    union CkPk { CT v; unsigned u; };\n"
                "#define CK_PUB(t, f, val) do { CkPk pk_; pk_.u = 0u; pk_.v = (val); \\\n"
                "        atomicExch(&desc[t], ((unsigned long long)(f) << 32) | pk_.u); } while (0)\n"
                "#define CK_GET(j, f, val) do { unsigned long long w_ = *(volatile unsigned long long *)&desc[j]; \\\n"
                "        CkPk pk_; pk_.u = (unsigned)w_; f = (int)(w_ >> 32); val = pk_.v; } while (0)\n");
        else
            ck_sbuf_printf(&b,
                "#define CK_PUB(t, f, val) do { *(volatile CT *)((f) == 2 ? &incls[t] : &aggs[t]) = (val); \\\n"
                "        __threadfence(); atomicExch(&flags[t], (f)); } while (0)\n"
                "#define CK_GET(j, f, val) do { f = *(volatile int *)&flags[j]; if (f) { __threadfence(); \\\n"
                "        val = *(volatile CT *)(f == 2 ? &incls[j] : &aggs[j]); } } while (0)\n");
        ck_sbuf_printf(&b,
            "    if (warp == 0) {\n"
            "        CT excl = ID;\n"
            "        if (tile == 0) {\n"
            "            if (lane == 0) CK_PUB(0, 2, agg);\n"
            "        } else {\n"
            "            if (lane == 0) CK_PUB(tile, 1, agg);\n"
            "            long long end = tile;\n"   /* tiles [end, tile) are in excl */
            "            for (;;) {\n"
            "                long long j = end - 32 + lane;\n"
            "                int f = 2; CT val = ID;\n"
            "                if (j >= 0) CK_GET(j, f, val);\n"
            "                while (__any_sync(0xffffffffu, f == 0)) { if (f == 0) CK_GET(j, f, val); }\n"
            "                unsigned m2 = __ballot_sync(0xffffffffu, f == 2);\n"
            "                int hi = m2 ? 31 - __clz((int)m2) : -1;\n"
            "                CT w = lane >= hi ? val : ID;\n"
            "#pragma unroll\n                for (int o = 1; o < 32; o <<= 1) {\n"
            "                    CT y = (CT)__shfl_down_sync(0xffffffffu, w, o); if (lane + o < 32) w = CK_SOP(w, y); }\n"
            "                w = (CT)__shfl_sync(0xffffffffu, w, 0);\n"
            "                excl = end == (long long)tile ? w : CK_SOP(w, excl);\n"
            "                if (m2) break;\n"
            "                end -= 32;\n            }\n"
            "            if (lane == 0) CK_PUB(tile, 2, CK_SOP(excl, agg));\n"
            "        }\n"
            "        if (lane == 0) excl_sh = excl;\n    }\n"
            "    __syncthreads();\n"
            "    CT pre = tile ? excl_sh : ID;\n"
            "    if (warp) pre = tile ? CK_SOP(pre, wpre) : wpre;\n"
            "    if (lane) pre = (tile || warp) ? CK_SOP(pre, xex) : xex;\n"
            "    const bool first = !tile && !warp && !lane;\n"
            "#pragma unroll\n    for (int r = 0; r < 16; r++) wb[CK_PAD(lane * 16 + r)] = first ? v[r] : CK_SOP(pre, v[r]);\n"
            "    __syncwarp();\n"
            "    if (t0 + 512 <= len) {\n"
            "#pragma unroll\n        for (int r = 0; r < 16; r++) out[t0 + r * 32 + lane] = (%s)wb[CK_PAD(r * 32 + lane)];\n"
            "    } else {\n"
            "#pragma unroll\n        for (int r = 0; r < 16; r++) { long long j = t0 + r * 32 + lane;\n"
            "            if (j < len) out[j] = (%s)wb[CK_PAD(r * 32 + lane)]; }\n    }\n"
            "}\n#undef CK_PUB\n#undef CK_GET\n#undef CK_PAD\n#undef CK_SOP\n",
            st, st);
    }
    return ck_sbuf_finish(&b);
}
