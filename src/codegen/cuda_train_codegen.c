/* The training ops as CUDA C text: the prelude (float16 storage), the
 * spec's defines, then one of three kernel bodies.  Rows and updates are
 * computed in float for float16/float32 and in double for float64. */
#include "cuda_train_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

uint64_t ck_cuda_train_key(const ck_cuda_train_spec *sp)
{
    /* the low byte stays 0: a module's i-th function is kept at key + i */
    return ck_kernel_key(CK_KFAM_TRAIN, ((uint64_t)sp->kind << 32) | ((uint64_t)(sp->op & 0xFF) << 24) |
                                        ((uint64_t)sp->t << 16) | ((uint64_t)(sp->warp != 0) << 8));
}

int ck_cuda_train_names(const ck_cuda_train_spec *sp, const char **names)
{
    switch (sp->kind) {
    case CK_TRK_ROWS:
        names[0] = "ck_rows";
        names[1] = "ck_xent_total";
        return 2;
    case CK_TRK_OPTIM: names[0] = "ck_optim"; return 1;
    case CK_TRK_SCATTER_ADD:
        names[0] = "ck_scatter_add";
        names[1] = "ck_scatter_add_check";
        return 2;
    default: names[0] = "ck_bias_act"; return 1;
    }
}

/* What every body shares: the types, math of the accumulator type and
 * the warp reductions. */
static const char common_[] =
    "#define CK_NINF (-(A)CK_INFF)\n"
    "#define CK_NANA ((A)CK_INFF - (A)CK_INFF)\n"
    "#if CK_DBL\n"
    "#define EXPA exp\n#define LOGA log\n#define SQRTA sqrt\n#define ERFA erf\n#define TANHA tanh\n"
    "#else\n"
    "#define EXPA expf\n#define LOGA logf\n#define SQRTA sqrtf\n#define ERFA erff\n#define TANHA tanhf\n"
    "#endif\n"
    "static __device__ __forceinline__ A ck_wsum(A v)\n"
    "{\n"
    "    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
    "    return v;\n"
    "}\n"
    "static __device__ __forceinline__ A ck_wmax(A v)\n"
    "{\n"
    "    for (int o = 16; o > 0; o >>= 1) {\n"
    "        A w = __shfl_xor_sync(0xffffffffu, v, o);\n"
    "        if (w > v || w != w) v = w;\n"
    "    }\n"
    "    return v;\n"
    "}\n";

/* A row r = o*inner + k of len elements at base + i*inner: a warp's
 * lanes (CK_WARP) or one thread take it.  Rows of -inf shift by 0 (log(0)
 * then gives -inf), rows with inf too (inf), a NaN anywhere gives NaN. */
static const char rows_[] =
    /* the loss total and weight over a block (thread 0 writes them) */
    "static __device__ void ck_block_total(A ls, A ws, T *out, A *total, int red)\n"
    "{\n"
    "    __shared__ A sl[32], sw[32];\n"
    "    ls = ck_wsum(ls);\n"
    "    ws = ck_wsum(ws);\n"
    "    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;\n"
    "    if (lane == 0) {\n"
    "        sl[warp] = ls;\n"
    "        sw[warp] = ws;\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (warp == 0) {\n"
    "        ls = lane < nw ? sl[lane] : (A)0;\n"
    "        ws = lane < nw ? sw[lane] : (A)0;\n"
    "        ls = ck_wsum(ls);\n"
    "        ws = ck_wsum(ws);\n"
    "        if (lane == 0) {\n"
    "            total[0] = ws;\n"
    "            out[0] = T(red == 1 ? ls / ws : ls);\n"
    "        }\n"
    "    }\n"
    "}\n"
    "#if CK_WARP\n"
    "#define RED_SUM(v) ck_wsum(v)\n#define RED_MAX(v) ck_wmax(v)\n#define NL 32\n"
    "#else\n"
    "#define RED_SUM(v) (v)\n#define RED_MAX(v) (v)\n#define NL 1\n"
    "#endif\n"
    "extern \"C\" __global__ void __launch_bounds__(512) ck_rows(long long outer, long long len, long long inner, const T *x, const T *g,\n"
    "                                    T *out, const long long *target, const T *prob, A *lse, const A *total,\n"
    "                                    A *scratch, long long ignore_index, A eps, int red, int fold)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl */\n"
    "    const long long rows = outer * inner;\n"
    "    A fl = 0, fw = 0;   /* fold (one block): this thread's share of the loss and weight totals */\n"
    "#if CK_WARP\n"
    "    const int lane = threadIdx.x & 31;\n"
    "    const long long r0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
    "    const long long rstep = ((long long)gridDim.x * blockDim.x) >> 5;\n"
    "#else\n"
    "    const int lane = 0;\n"
    "    const long long r0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    const long long rstep = (long long)gridDim.x * blockDim.x;\n"
    "#endif\n"
    "    const A cls = (A)len;\n"
    "    for (long long r = r0; r < rows; r += rstep) {\n"
    "        const long long base = (r / inner) * len * inner + r % inner;\n"
    "#define X(i) ((A)x[base + (i) * inner])\n"
    "#define OUT(i) out[base + (i) * inner]\n"
    "#if OP == CK_ROW_SOFTMAX || OP == CK_ROW_LOG_SOFTMAX || OP == CK_ROW_LOGSUMEXP || OP == CK_ROW_XENT\n"
    "        A m = CK_NINF;\n"
    "        for (long long i = lane; i < len; i += NL) {\n"
    "            A v = X(i);\n"
    "            if (v > m || v != v) m = v;\n"
    "        }\n"
    "        m = RED_MAX(m);\n"
    "        const A sh = (m == -CK_NINF || m == CK_NINF) ? (A)0 : m;\n"
    "        A s = 0;\n"
    "        for (long long i = lane; i < len; i += NL) s += EXPA(X(i) - sh);\n"
    "        s = RED_SUM(s);\n"
    "        const A l = LOGA(s) + sh;\n"
    "#if OP == CK_ROW_LOGSUMEXP\n"
    "        if (lane == 0) out[r] = T(l);\n"
    "#elif OP == CK_ROW_SOFTMAX\n"
    "        const A inv = (A)1 / s;\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T(EXPA(X(i) - sh) * inv);\n"
    "#elif OP == CK_ROW_LOG_SOFTMAX\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T(X(i) - l);\n"
    "#else\n"
    "        A loss, w = 1;\n"
    "        if (target) {\n"
    "            const long long t = target[r];\n"
    "            if (t == ignore_index) {\n"
    "                loss = 0;\n"
    "                w = 0;\n"
    "            } else if (t < 0 || t >= len) {\n"
    "                loss = CK_NANA;\n"
    "            } else {\n"
    "                A xs = 0;\n"
    "                if (eps != (A)0) {\n"
    "                    for (long long i = lane; i < len; i += NL) xs += X(i);\n"
    "                    xs = RED_SUM(xs);\n"
    "                }\n"
    "                loss = l - ((A)1 - eps) * X(t) - eps / cls * xs;\n"
    "            }\n"
    "        } else {\n"
    "            A qs = 0, qx = 0;\n"
    "            for (long long i = lane; i < len; i += NL) {\n"
    "                const A q = ((A)1 - eps) * (A)prob[base + i * inner] + eps / cls;\n"
    "                qs += q;\n"
    "                qx += q * X(i);\n"
    "            }\n"
    "            qs = RED_SUM(qs);\n"
    "            qx = RED_SUM(qx);\n"
    "            loss = l * qs - qx;\n"
    "        }\n"
    "        if (lane == 0) {\n"
    "            lse[r] = l;\n"
    "            if (fold) {\n"
    "                fl += loss;   /* the block's total, below: no second launch */\n"
    "                fw += w;\n"
    "            } else if (scratch) {\n"
    "                scratch[r] = loss;\n"
    "                scratch[rows + r] = w;\n"
    "            } else {\n"
    "                out[r] = T(loss);\n"
    "            }\n"
    "        }\n"
    "#endif\n"
    "#elif OP == CK_ROW_SOFTMAX_BWD\n"
    "        A s = 0;\n"
    "        for (long long i = lane; i < len; i += NL) s += (A)g[base + i * inner] * X(i);\n"
    "        s = RED_SUM(s);\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T(X(i) * ((A)g[base + i * inner] - s));\n"
    "#elif OP == CK_ROW_LOG_SOFTMAX_BWD\n"
    "        A s = 0;\n"
    "        for (long long i = lane; i < len; i += NL) s += (A)g[base + i * inner];\n"
    "        s = RED_SUM(s);\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T((A)g[base + i * inner] - EXPA(X(i)) * s);\n"
    "#elif OP == CK_ROW_XENT_BWD || OP == CK_ROW_XENT_SOFTMAX_BWD\n"
    "        A scale = red == 0 ? (A)g[r] : (A)g[0];\n"
    "        if (red == 1) scale /= total[0];\n"
    "        const A l = lse[r];\n"
    "        A qs = 1;\n"
    "        long long t = -1;\n"
    "        if (target) {\n"
    "            t = target[r];\n"
    "            if (t == ignore_index || t < 0 || t >= len) {\n"
    "                const A z = t == ignore_index ? (A)0 : CK_NANA;\n"
    "                for (long long i = lane; i < len; i += NL) OUT(i) = T(z);\n"
    "                continue;\n"
    "            }\n"
    "        } else {\n"
    "            qs = 0;\n"
    "            for (long long i = lane; i < len; i += NL) qs += ((A)1 - eps) * (A)prob[base + i * inner] + eps / cls;\n"
    "            qs = RED_SUM(qs);\n"
    "        }\n"
    "#define DX(i) (scale * (EXPA(X(i) - l) * qs - (target ? ((i) == t ? (A)1 - eps : (A)0) + eps / cls\\\n"
    "                                                      : ((A)1 - eps) * (A)prob[base + (i) * inner] + eps / cls)))\n"
    "#if OP == CK_ROW_XENT_BWD\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T(DX(i));\n"
    "#else\n"
    "        /* x = softmax(z): then softmax's backward, x * (d - sum(d * x)) */\n"
    "        A sd = 0;\n"
    "        for (long long i = lane; i < len; i += NL) sd += DX(i) * X(i);\n"
    "        sd = RED_SUM(sd);\n"
    "        for (long long i = lane; i < len; i += NL) OUT(i) = T(X(i) * (DX(i) - sd));\n"
    "#endif\n"
    "#undef DX\n"
    "#endif\n"
    "#undef X\n"
    "#undef OUT\n"
    "    }\n"
    "#if OP == CK_ROW_XENT\n"
    "    if (fold) ck_block_total(fl, fw, out, (A *)total, red);   /* the forward writes it */\n"
    "#else\n"
    "    (void)fl; (void)fw; (void)fold;\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* mean/sum of the rows' losses: one block */\n"
    "extern \"C\" __global__ void ck_xent_total(long long rows, const A *scratch, T *out, A *total, int red)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl */\n"
    "    A ls = 0, ws = 0;\n"
    "    for (long long i = threadIdx.x; i < rows; i += blockDim.x) {\n"
    "        ls += scratch[i];\n"
    "        ws += scratch[rows + i];\n"
    "    }\n"
    "    ck_block_total(ls, ws, out, total, red);\n"
    "}\n";

/* A block updates CK_OPTIM_CHUNK elements of one tensor of the table.  The
 * products and sums are written with the _rn intrinsics, which NVRTC never
 * contracts into FMAs: the same roundings as the CPU loop (cpu_train.c, built
 * without contraction), so both devices give the same bits from the same
 * bias corrections (a step counted on the host: the host's; one counted on
 * the device is worked out in the update's type below, within a rounding
 * of the CPU's double formula).  An FMA changes which float16 second
 * moments underflow to zero, and an element whose second moment is zero
 * while its first is not moves by m / eps. */
static const char optim_[] =
    "#if CK_DBL\n"
    "#define MULA __dmul_rn\n#define ADDA __dadd_rn\n#define EXPM1A expm1\n"
    "#else\n"
    "#define MULA __fmul_rn\n#define ADDA __fadd_rn\n#define EXPM1A expm1f\n"
    "#endif\n"
    "struct ck_optim_table {\n"
    "    T *p[NT];\n"
    "    const T *g[NT];\n"
    "    T *s1[NT];\n"
    "    T *s2[NT];\n"
    "    long long n[NT];\n"
    "    long long block0[NT + 1];\n"
    "    int count;\n"
    "};\n"
    "extern \"C\" __global__ void __launch_bounds__(CK_OPTIM_BLOCK) ck_optim(ck_optim_table tab, A lr, A wd, A b1, A b2,\n"
    "                                     A eps, A step_size, A bc2s, A mom, A damp, int flags, const void *stepp,\n"
    "                                     double lb1, double lb2, unsigned *ticket)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl */\n"
    "    const long long b = blockIdx.x;\n"
    "    int k = 0;\n"
    "    while (k + 1 < tab.count && tab.block0[k + 1] <= b) k++;\n"
    "    const long long i0 = (b - tab.block0[k]) * CHUNK;\n"
    "    const long long i1 = i0 + CHUNK < tab.n[k] ? i0 + CHUNK : tab.n[k];\n"
    "    T *p = tab.p[k], *s1 = tab.s1[k], *s2 = tab.s2[k];\n"
    "    const T *gp = tab.g[k];\n"
    "    const bool maximize = flags & 1, decoupled = flags & 2, nesterov = flags & 4, first = flags & 8;\n"
    "    const A decay = ADDA((A)1, -MULA(lr, wd));\n"
    "#if OP == 0\n"
    /* a thread's PER elements are all loaded before the first store (the
     * pointers may alias as far as the compiler knows, so it would not move
     * a load above a store): one memory latency a thread, not PER */
    "    enum { PER = CHUNK / CK_OPTIM_BLOCK };\n"
    "    A gr[PER], w[PER], m[PER], v[PER];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < PER; u++) {\n"
    "        const long long i = i0 + threadIdx.x + (long long)u * CK_OPTIM_BLOCK;\n"
    "        if (i < i1) {\n"
    "            gr[u] = (A)gp[i];\n"
    "            w[u] = (A)p[i];\n"
    "            m[u] = (A)s1[i];\n"
    "            v[u] = (A)s2[i];\n"
    "        }\n"
    "    }\n"
    "#endif\n"
    /* The count in device memory (each replay of a graph its own step):
     * thread 0 reads it and works out the bias corrections, 1 - beta^t as
     * -expm1(t log beta) in the update's type (log beta from the host),
     * for the block.  With flags & 64 the launch raises the count too: the
     * last block to have read it (a ticket every block takes after its
     * read, the fence keeping the two in order) writes t and resets the
     * ticket; the ticket's answer is waited for only after the updates. */
    "    double t = 0;\n"
    "    unsigned tk = 0;\n"
    "    if (stepp) {\n"
    "        __shared__ A sc[2];\n"
    "        if (threadIdx.x == 0) {\n"
    "            t = flags & 16 ? (double)*(const float *)stepp : *(const double *)stepp;\n"
    "            if (flags & 32) t += 1.0;   /* the count before this step, which adds the one itself */\n"
    "            sc[0] = lr / -EXPM1A((A)t * (A)lb1);\n"
    "            sc[1] = SQRTA(-EXPM1A((A)t * (A)lb2));\n"
    "        }\n"
    "        __syncthreads();\n"
    "        step_size = sc[0];\n"
    "        bc2s = sc[1];\n"
    "        if ((flags & 64) && threadIdx.x == 0) {\n"
    "            __threadfence();\n"
    "            tk = atomicAdd(ticket, 1u) + 1u;\n"
    "        }\n"
    "    }\n"
    "#if OP == 0\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < PER; u++) {\n"
    "        const long long i = i0 + threadIdx.x + (long long)u * CK_OPTIM_BLOCK;\n"
    "        if (i >= i1) break;\n"
    "        A g = maximize ? -gr[u] : gr[u], x = w[u];\n"
    "        if (decoupled) x = MULA(x, decay);\n"
    "        else g = ADDA(g, MULA(wd, x));\n"
    "        const A mn = ADDA(MULA(b1, m[u]), MULA((A)1 - b1, g));\n"
    "        const A vn = ADDA(MULA(b2, v[u]), MULA(MULA((A)1 - b2, g), g));\n"
    "        s1[i] = T(mn);\n"
    "        s2[i] = T(vn);\n"
    "        p[i] = T(x - MULA(step_size, mn) / ADDA(SQRTA(vn) / bc2s, eps));\n"
    "    }\n"
    "    (void)mom; (void)damp; (void)nesterov; (void)first;\n"
    "#else\n"
    "    for (long long i = i0 + threadIdx.x; i < i1; i += blockDim.x) {\n"
    "        A gr = maximize ? -(A)gp[i] : (A)gp[i], w = (A)p[i];\n"
    "        (void)decoupled; (void)b1; (void)b2; (void)eps; (void)step_size; (void)bc2s; (void)s2; (void)decay;\n"
    "        gr = ADDA(gr, MULA(wd, w));\n"
    "        if (mom != (A)0) {\n"
    "            const A bf = first ? gr : ADDA(MULA(mom, (A)s1[i]), MULA((A)1 - damp, gr));\n"
    "            s1[i] = T(bf);\n"
    "            gr = nesterov ? ADDA(gr, MULA(mom, bf)) : bf;\n"
    "        }\n"
    "        p[i] = T(w - MULA(lr, gr));\n"
    "    }\n"
    "#endif\n"
    "    if (tk == gridDim.x) {   /* thread 0 of the last block to read the count */\n"
    "        *(float *)stepp = (float)t;\n"
    "        *ticket = 0;\n"
    "    }\n"
    "}\n";

static const char bias_act_[] =
    "#define SQRT1_2 ((A)0.70710678118654752440)\n"
    "#define INV_SQRT_2PI ((A)0.39894228040143267794)\n"
    "#define GELU_C ((A)0.79788456080286535588)\n"
    "#define GELU_A ((A)0.044715)\n"
    "static __device__ __forceinline__ A ck_act(A z)\n"
    "{\n"
    "#if OP == 1\n"
    "    return z > (A)0 ? z : (z != z ? z : (A)0);\n"
    "#elif OP == 2\n"
    "    return (A)0.5 * z * ((A)1 + ERFA(z * SQRT1_2));\n"
    "#elif OP == 3\n"
    "    return (A)0.5 * z * ((A)1 + TANHA(GELU_C * (z + GELU_A * z * z * z)));\n"
    "#else\n"
    "    return z;\n"
    "#endif\n"
    "}\n"
    "static __device__ __forceinline__ A ck_dact(A z)\n"
    "{\n"
    "#if OP == 1\n"
    "    return z > (A)0 ? (A)1 : (A)0;\n"
    "#elif OP == 2\n"
    "    return (A)0.5 * ((A)1 + ERFA(z * SQRT1_2)) + z * EXPA((A)-0.5 * z * z) * INV_SQRT_2PI;\n"
    "#elif OP == 3\n"
    "    const A th = TANHA(GELU_C * (z + GELU_A * z * z * z));\n"
    "    return (A)0.5 * ((A)1 + th) + (A)0.5 * z * ((A)1 - th * th) * GELU_C * ((A)1 + (A)3 * GELU_A * z * z);\n"
    "#else\n"
    "    return (A)1;\n"
    "#endif\n"
    "}\n"
    "extern \"C\" __global__ void ck_bias_act(long long rows, long long n, T *y, const T *bias, T *pre, const T *g,\n"
    "                                        const T *saved, T *out)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl */\n"
    "    const long long total = rows * n;\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "#if CK_WARP\n"
    "        out[i] = T((A)g[i] * ck_dact((A)saved[i]));\n"
    "#else\n"
    "        A z = (A)y[i];\n"
    "        if (bias) z += (A)bias[i % n];\n"
    "        if (pre) pre[i] = T(z);\n"
    "        y[i] = T(ck_act(z));\n"
    "#endif\n"
    "    }\n"
    "}\n";

static const char scatter_add_[] =
    "static __device__ __forceinline__ void ck_atomic_add(float *p, float v) { atomicAdd(p, v); }\n"
    "static __device__ __forceinline__ void ck_atomic_add(double *p, double v) { atomicAdd(p, v); }\n"
    "static __device__ __forceinline__ void ck_atomic_add(ck_f16 *p, float v)\n"
    "{\n"
    "    unsigned int *w = (unsigned int *)((unsigned long long)p & ~3ull);\n"
    "    const int hi = ((unsigned long long)p & 2) != 0;\n"
    "    unsigned int old = *w, assumed;\n"
    "    do {\n"
    "        assumed = old;\n"
    "        ck_f16 h;\n"
    "        h.bits = (unsigned short)(hi ? assumed >> 16 : assumed & 0xFFFFu);\n"
    "        ck_f16 r((float)h + v);\n"
    "        const unsigned int nw = hi ? (assumed & 0xFFFFu) | ((unsigned int)r.bits << 16)\n"
    "                                   : (assumed & 0xFFFF0000u) | r.bits;\n"
    "        old = atomicCAS(w, assumed, nw);\n"
    "    } while (assumed != old);\n"
    "}\n"
    /* the first bad position (the CPU's) lowers the error word, ~0 when none */
    "extern \"C\" __global__ void ck_scatter_add_check(long long n, long long m, const long long *idx,\n"
    "                                                 unsigned long long *err)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl */\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "        long long k = idx[i];\n"
    "        if (k < 0) k += n;\n"
    "        if (k < 0 || k >= n) atomicMin(err, (unsigned long long)i);\n"
    "    }\n"
    "}\n"
    /* nothing at all once the check found a bad index: the target stays as it was */
    "extern \"C\" __global__ void ck_scatter_add(long long n, long long m, T *target, const long long *idx, const T *src,\n"
    "                                           const unsigned long long *err)\n"
    "{\n"
    "    CK_PDL_ENTRY();   /* launched by ck_cuda_launch_pdl: the check's word is written */\n"
    "    if (*err != ~0ull) return;\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "        long long k = idx[i];\n"
    "        if (k < 0) k += n;\n"
    "        ck_atomic_add(&target[k], (A)src[i]);\n"
    "    }\n"
    "}\n";

char *ck_cuda_train_source(const ck_cuda_train_spec *sp)
{
    if (!ck_dtype_is_float(sp->t)) {
        ck_error_set(CK_ERR_TYPE, "training kernels take float16, float32 or float64, not %s",
                     ck_dtype_get_info(sp->t)->name);
        return NULL;
    }
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    int dbl = sp->t == CK_FLOAT64;
    ck_sbuf_printf(&b, "\n#define T %s\n#define A %s\n#define CK_DBL %d\n#define OP %d\n#define CK_WARP %d\n",
                   ck_cuda_storage_type(sp->t), dbl ? "double" : "float", dbl, sp->op, sp->warp != 0);
    ck_sbuf_printf(&b,
                   "#define CK_ROW_SOFTMAX %d\n#define CK_ROW_LOG_SOFTMAX %d\n#define CK_ROW_LOGSUMEXP %d\n"
                   "#define CK_ROW_SOFTMAX_BWD %d\n#define CK_ROW_LOG_SOFTMAX_BWD %d\n#define CK_ROW_XENT %d\n"
                   "#define CK_ROW_XENT_BWD %d\n#define CK_ROW_XENT_SOFTMAX_BWD %d\n#define NT %d\n#define CHUNK %d\n"
                   "#define CK_OPTIM_BLOCK %d\n",
                   CK_ROW_SOFTMAX, CK_ROW_LOG_SOFTMAX, CK_ROW_LOGSUMEXP, CK_ROW_SOFTMAX_BWD, CK_ROW_LOG_SOFTMAX_BWD,
                   CK_ROW_XENT, CK_ROW_XENT_BWD, CK_ROW_XENT_SOFTMAX_BWD, CK_OPTIM_TENSORS, CK_OPTIM_CHUNK,
                   CK_OPTIM_BLOCK);
    ck_sbuf_printf(&b, "%s", common_);
    _Static_assert(CK_OPTIM_ADAM == 0 && CK_ACT_RELU == 1 && CK_ACT_GELU == 2 && CK_ACT_GELU_TANH == 3,
                   "the kernels' OP numbers");
    switch (sp->kind) {
    case CK_TRK_ROWS: ck_sbuf_printf(&b, "%s", rows_); break;
    case CK_TRK_OPTIM: ck_sbuf_printf(&b, "%s", optim_); break;
    case CK_TRK_SCATTER_ADD: ck_sbuf_printf(&b, "%s", scatter_add_); break;
    default: ck_sbuf_printf(&b, "%s", bias_act_); break;
    }
    return ck_sbuf_finish(&b);
}
