/*
 * The fused linear layer's products on the GPU (backend.h's linear slot):
 * one cublasLtMatmul each, its epilogue adding the bias and applying the
 * relu (forward) or writing the bias's gradient (the weight's backward
 * product), so that a layer's forward is one kernel and its weight and
 * bias gradients another.
 *
 * Row-major d = op(a) @ op(b) is column-major d^T = op(b)^T op(a)^T: the
 * row-major b is cuBLASLt's A and a its B, no copies.  A row-major bias
 * over d's columns is then cuBLASLt's bias over D's rows (EPILOGUE_BIAS),
 * and the gradient of a bias from a's rows is EPILOGUE_BGRADB.
 *
 * A plan (the matmul descriptor, three layouts and an algorithm) is made
 * on first use of a key (device, dtype, compute type,
 * epilogue, sizes, leading dims, transposes, the pointers' alignments,
 * the workspace's size) and kept for the thread's life, as the cuBLAS
 * handles are (cuda_blas.c): later calls set the bias pointer and launch.
 * Making a plan calls only host functions of cuBLASLt, so it may happen
 * while a CUDA graph is being captured; the launch takes the current
 * stream and that stream's cuBLAS workspace, which a capture keeps (see
 * cuda_blas.c).  A key cuBLASLt has no algorithm for is kept as such and
 * answered CK_ERR_NOT_IMPLEMENTED: the op layer composes it.
 *
 * The algorithm of a small product (m n k up to 2^27) is timed, not taken
 * on trust: the heuristic's first choice for a network's layers (batch 64,
 * 784 -> 128 -> 10) is split-K with a separate reduction kernel, and the
 * kernel that finishes first is often another of its candidates.  When a
 * plan is made outside a capture, each of the heuristic's first
 * LT_CANDIDATES algorithms runs LT_TUNE_RUNS times on the call's own
 * operands (beta is 0: the real call then overwrites d and the bias
 * gradient), captured in a graph and timed between two events, and the
 * fastest is kept; that first call waits for its stream (PyTorch's
 * TunableOp and cudnn.benchmark do the same).  A plan made while capturing, and every plan with
 * CUDAKIT_LINEAR_TUNE=0, keeps the heuristic's first choice.
 *
 * cudakit's own small products (cuda_gemm_codegen.h: a tile a block, k
 * split over its warps, read straight from global memory, the epilogue
 * in the same kernel; and, for a forward's a @ b^T, the dot-product form,
 * k split over a warp's lanes) are timed beside them, every tile and warp
 * count that fits, float32 and float64, each launched in the tuner's
 * graph as a real call launches it (a programmatic dependent of the run
 * before: the overlap cuBLASLt's kernels do not get).  A cuBLASLt call
 * costs the host more than a launch of cudakit's kernel, and for these
 * sizes the host's cost is the step's, so the plan keeps two answers: in a
 * capture, the faster in a graph; outside one, the faster of the two best
 * when launched one by one and waited for (the host's wall time).
 * CUDAKIT_LINEAR_OWN=0 never takes cudakit's kernel, =1 takes it for every
 * product it can do, =1:<c> takes cfg c wherever it fits (the tests); the
 * switch is part of the plan's key.  Untimed, cudakit's kernel runs only
 * when cuBLASLt has no algorithm (or it is forced).
 */
#include "cuda_internal.h"
#include "../../platform/cublas_api.h"
#include "../graph_internal.h"
#include "../../codegen/cuda_gemm_codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct lt_key {
    int dev;
    int type, compute, epi;
    int64_t m, n, k, lda, ldb, ldd;
    int ta, tb;
    int align_a, align_b, align_d, align_bias;
    size_t ws;
    int own_mode;              /* CUDAKIT_LINEAR_OWN when the plan was made */
    int own_cfg;               /* and the cfg it forces (-1: none) */
} lt_key;

typedef struct lt_plan {
    lt_key key;
    int lt;                      /* cuBLASLt has an algorithm for the key (with own < 0: no product) */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    int own, own_ks;             /* cudakit's small product: its cfg (-1: none) and warps */
    int own_eager, own_graph;    /* it runs outside, inside a capture */
    CUfunction own_f;
    struct lt_plan *next;
} lt_plan;

#define LT_BUCKETS 64
static _Thread_local cublasLtHandle_t lt_handles_[CK_CUDA_MAX_DEVICES];
static _Thread_local lt_plan *plans_[LT_BUCKETS];

static ck_status get_lt_handle(int d, cublasLtHandle_t *h)
{
    ck_status s = ck_cublas_load();
    if (s != CK_OK) return s;
    if (!lt_handles_[d]) CK_CHECK_CUBLAS(ck_cublas.cublasLtCreate(&lt_handles_[d]));
    *h = lt_handles_[d];
    return CK_OK;
}

/* The alignment cuBLASLt may assume of p: its lowest set bit, at most 256. */
static int align_of(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    int a = 1;
    while (a < 256 && !(v & (uintptr_t)a)) a <<= 1;
    return a;
}

static unsigned epilogue_of(ck_linear_epi e)
{
    switch (e) {
    case CK_LINEAR_EPI_BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case CK_LINEAR_EPI_RELU: return CUBLASLT_EPILOGUE_RELU;
    case CK_LINEAR_EPI_RELU_BIAS: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case CK_LINEAR_EPI_BGRAD_A: return CUBLASLT_EPILOGUE_BGRADB;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
    }
}

static void plan_free(lt_plan *p)
{
    if (p->la) ck_cublas.cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) ck_cublas.cublasLtMatrixLayoutDestroy(p->lb);
    if (p->ld) ck_cublas.cublasLtMatrixLayoutDestroy(p->ld);
    if (p->desc) ck_cublas.cublasLtMatmulDescDestroy(p->desc);
    free(p);
}

#define LT_CANDIDATES 8
#define LT_TUNE_RUNS 8
#define LT_TUNE_MAX_WORK ((int64_t)1 << 27)

/* CUDAKIT_LINEAR_TUNE: 0 off; "verbose" also says each plan's times on stderr */
static int tune_enabled(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("CUDAKIT_LINEAR_TUNE");
        on = e && e[0] == '0' ? 0 : e && !strcmp(e, "verbose") ? 2 : 1;
    }
    return on;
}

/* One run of a candidate on the tuner's stream ts: 1 when launched. */
typedef int (*run_fn)(const void *ctx, CUstream ts);

typedef struct lt_run {
    cublasLtHandle_t h;
    const lt_plan *p;
    const cublasLtMatmulAlgo_t *algo;
    const ck_linear_desc *d;
    const void *one, *zero;
    void *ws;
    size_t wsz;
} lt_run;

static int run_lt(const void *ctx, CUstream ts)
{
    const lt_run *r = ctx;
    return ck_cublas.cublasLtMatmul(r->h, r->p->desc, r->one, r->d->b, r->p->la, r->d->a, r->p->lb, r->zero, r->d->d,
                                    r->p->ld, r->d->d, r->p->ld, r->algo, r->ws, r->wsz, ts) == CUBLAS_STATUS_SUCCESS;
}

/* LT_TUNE_RUNS runs of a candidate on the call's operands, captured as a
 * graph on the side stream ts and replayed: the best of three replays in
 * ms, or -1 when it fails.  Timed in a graph, as the small products of a
 * training step run, so that the host's cost of a call (more than the
 * kernels' for these sizes) does not hide theirs. */
static float time_graph(run_fn run, const void *ctx, CUstream ts, CUevent e0, CUevent e1)
{
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    float best = -1;
    if (ck_cu.cuStreamBeginCapture_v2(ts, CU_STREAM_CAPTURE_MODE_RELAXED) != CUDA_SUCCESS) return -1;
    int ok = 1;
    for (int i = 0; i < LT_TUNE_RUNS && ok; i++) ok = run(ctx, ts);
    if (ck_cu.cuStreamEndCapture(ts, &g) != CUDA_SUCCESS) ok = 0;
    if (ok && ck_cu.cuGraphInstantiateWithFlags(&ge, g, 0) != CUDA_SUCCESS) ok = 0;
    if (ok && ck_cu.cuGraphLaunch(ge, ts) != CUDA_SUCCESS) ok = 0;     /* the first outside the clock */
    for (int t = 0; t < 3 && ok; t++) {
        float ms = -1;
        ok = ck_cu.cuEventRecord(e0, ts) == CUDA_SUCCESS && ck_cu.cuGraphLaunch(ge, ts) == CUDA_SUCCESS &&
             ck_cu.cuEventRecord(e1, ts) == CUDA_SUCCESS && ck_cu.cuEventSynchronize(e1) == CUDA_SUCCESS &&
             ck_cu.cuEventElapsedTime(&ms, e0, e1) == CUDA_SUCCESS;
        if (ok && (best < 0 || ms < best)) best = ms;
    }
    if (ge) ck_cu.cuGraphExecDestroy(ge);
    if (g) ck_cu.cuGraphDestroy(g);
    return ok ? best : -1;
}

/* The same runs launched one by one, as a program outside a graph launches
 * them: the host's wall time until they are done (the larger of the host's
 * cost of a launch and the kernel's), best of three, in ms; -1 on failure. */
static double time_eager(run_fn run, const void *ctx, CUstream ts)
{
    double best = -1;
    int ok = run(ctx, ts) && ck_cu.cuStreamSynchronize(ts) == CUDA_SUCCESS;
    for (int t = 0; t < 3 && ok; t++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < LT_TUNE_RUNS && ok; i++) ok = run(ctx, ts);
        ok = ok && ck_cu.cuStreamSynchronize(ts) == CUDA_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (ok && (best < 0 || ms < best)) best = ms;
    }
    return ok ? best : -1;
}

/* ------------------------------------------ cudakit's own small product */

static char *small_source(const void *spec) { return ck_cuda_gemm_small_source(spec); }

/* CUDAKIT_LINEAR_OWN: 0 never, 1 whenever it can (the tests), unset: as
 * timed; "1:<c>" also makes every plan it fits take cfg c of the module
 * (0..CK_GEMM_OWN_CFGS-1, the tests of each kernel), *cfg set to it (else -1) */
static int own_mode(int *cfg)
{
    const char *e = getenv("CUDAKIT_LINEAR_OWN");
    *cfg = -1;
    if (e && e[0] == '1' && e[1] == ':') {
        char *end = NULL;
        long c = strtol(e + 2, &end, 10);
        if (end != e + 2 && !*end && c >= 0 && c < CK_GEMM_OWN_CFGS) *cfg = (int)c;
    }
    return e && e[0] == '0' ? 0 : e && e[0] == '1' ? 1 : -1;
}

static int is_dot(int c) { return c >= CK_GEMM_SMALL_CFGS; }

/* Whether cfg c with ks warps can run key k: the dot-product kernels take
 * d = a @ b^T with both contiguous along k (ta 0, tb 1) and no bias
 * gradient, with CK_GEMM_DOT_WARPS warps. */
static int own_fits(const lt_key *k, int c, int ks)
{
    if (!(k->type == CK_FLOAT32 || k->type == CK_FLOAT64)) return 0;
    if (is_dot(c))
        return !k->ta && k->tb && k->epi != CK_LINEAR_EPI_BGRAD_A && ks == CK_GEMM_DOT_WARPS &&
               k->m <= 65535LL * ck_gemm_dot_cfgs[c - CK_GEMM_SMALL_CFGS].wm;
    const int tm = ck_gemm_small_tm(c);
    return (k->m + tm - 1) / tm <= 65535 &&
           ck_gemm_small_smem(c, ks, (size_t)ck_dtype_get_info((ck_dtype)k->type)->itemsize) <= 48 * 1024 &&
           ks <= CK_GEMM_SMALL_MAX_WARPS;
}

/* The dot-product kernel's 16-byte loads: both bases and row strides
 * 16-byte aligned and k a multiple of the vector (all part of a plan's key). */
static int dot_vec(const ck_linear_desc *d)
{
    const size_t isz = (size_t)ck_dtype_get_info(d->type)->itemsize;
    return !(((uintptr_t)d->a | (uintptr_t)d->b) & 15) && !(((size_t)d->lda * isz) & 15) &&
           !(((size_t)d->ldb * isz) & 15) && !(((size_t)d->k * isz) & 15);
}

/* One launch of cfg c with ks warps: on stream ts as it is (the tuner's,
 * being captured), or on the current stream (ts NULL). */
static ck_status own_launch(const ck_linear_desc *d, CUfunction f, int c, int ks, CUstream ts)
{
    int m = (int)d->m, n = (int)d->n, k = (int)d->k, epi = (int)d->epi;
    long long sam = d->ta ? 1 : d->lda, sak = d->ta ? d->lda : 1, sbk = d->tb ? 1 : d->ldb, sbn = d->tb ? d->ldb : 1;
    long long ldd = d->ldd;
    const void *a = d->a, *b = d->b;
    void *dd = d->d, *bias = d->bias;
    unsigned gx, gy, shm = 0;
    int vec = 0;
    void *small_args[] = {&m, &n, &k, &a, &sam, &sak, &b, &sbk, &sbn, &dd, &ldd, &bias, &epi};
    void *dot_args[] = {&m, &n, &k, &a, &sam, &b, &sbn, &dd, &ldd, &bias, &epi, &vec};
    void **args = small_args;
    if (is_dot(c)) {
        const ck_gemm_dot_cfg *g = &ck_gemm_dot_cfgs[c - CK_GEMM_SMALL_CFGS];
        const int per = g->wn * ks;
        gx = (unsigned)((n + per - 1) / per), gy = (unsigned)((m + g->wm - 1) / g->wm);
        vec = dot_vec(d);
        args = dot_args;
    } else {
        const int tm = ck_gemm_small_tm(c), tn = ck_gemm_small_tn(c);
        gx = (unsigned)((n + tn - 1) / tn), gy = (unsigned)((m + tm - 1) / tm);
        shm = (unsigned)ck_gemm_small_smem(c, ks, (size_t)ck_dtype_get_info(d->type)->itemsize);
    }
    if (ts) {
        /* as the real call launches it (ck_cuda_launch_pdl2): a programmatic
         * dependent of the run before, so that the tuner's graph sees the
         * overlap a graph of a training step gets (cuBLASLt's kernels have none) */
        if (!ck_cuda_devices[d->dev.index].pdl) {
            CK_CHECK_CU(ck_cu.cuLaunchKernel(f, gx, gy, 1, 32u * (unsigned)ks, 1, 1, shm, ts, args, NULL));
            return CK_OK;
        }
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at.value.programmatic_stream_serialization = 1;
        CUlaunchConfig cfg = {gx, gy, 1, 32u * (unsigned)ks, 1, 1, shm, ts, &at, 1};
        CK_CHECK_CU(ck_cu.cuLaunchKernelEx(&cfg, f, args, NULL));
        return CK_OK;
    }
    return ck_cuda_launch_pdl2(d->dev.index, f, gx, gy, 32u * (unsigned)ks, shm, args);
}

static ck_status own_kernels(int dev, ck_dtype t, CUfunction f[CK_GEMM_OWN_CFGS])
{
    static const char *names[CK_GEMM_OWN_CFGS] = {"ck_lin_0",  "ck_lin_1",  "ck_lin_2",  "ck_lin_3",  "ck_lin_4",
                                                  "ck_lin_5",  "ck_lin_6",  "ck_lin_7",  "ck_lind_0", "ck_lind_1",
                                                  "ck_lind_2", "ck_lind_3", "ck_lind_4", "ck_lind_5"};
    _Static_assert(CK_GEMM_OWN_CFGS == 14, "a name for each kernel of the module");
    ck_cuda_gemm_small_spec sp = {t};
    return ck_cuda_get_kernels(dev, ck_cuda_gemm_small_key(&sp), small_source, &sp, names, CK_GEMM_OWN_CFGS, f);
}

/* The untimed choice (a plan made in a capture, or no clock): cudakit's
 * kernel only when forced or when cuBLASLt has none (lt 0), with a 16 x 16
 * tile and a warp for each 32 of k (at most 16); the forced cfg where it fits. */
static void own_untimed(lt_plan *p, const CUfunction *fown, int mode, int lt)
{
    p->own = -1;
    if (!fown || !(mode == 1 || !lt)) return;
    const int fc = p->key.own_cfg;
    if (fc >= 0 && is_dot(fc) && own_fits(&p->key, fc, CK_GEMM_DOT_WARPS)) {
        p->own = fc, p->own_ks = CK_GEMM_DOT_WARPS;
    } else {
        const int c = fc >= 0 && !is_dot(fc) ? fc : CK_GEMM_SMALL_DEFAULT;
        for (int ks = 1; ks <= CK_GEMM_SMALL_MAX_WARPS; ks *= 2)
            if (own_fits(&p->key, c, ks) && (ks == 1 || p->key.k >= 32 * ks)) p->own = c, p->own_ks = ks;
    }
    if (p->own >= 0) p->own_f = fown[p->own], p->own_eager = p->own_graph = 1;
}

typedef struct own_run { const ck_linear_desc *d; CUfunction f; int c, ks; } own_run;

static int run_own(const void *ctx, CUstream ts)
{
    const own_run *r = ctx;
    return own_launch(r->d, r->f, r->c, r->ks, ts) == CK_OK;
}

/* The plan's choices, timed on the call (res[0..n) the heuristic's
 * candidates, n 0 when cuBLASLt has none; fown cudakit's kernels, NULL
 * when it has none for the key): cuBLASLt's fastest algorithm in a graph,
 * cudakit's fastest tile and split, and which of the two runs in a capture
 * (the faster in a graph) and which outside one (the faster launched one
 * by one, where the host's cost of a call counts).  The side stream begins
 * after the call's stream's work (the operands) and is waited for, so the
 * call's stream (and its workspace) is idle meanwhile.  A failed candidate
 * leaves no error behind.  Returns whether cuBLASLt's algorithm stands. */
static int tune(cublasLtHandle_t h, lt_plan *p, const cublasLtMatmulHeuristicResult_t *res, int n,
                const ck_linear_desc *d, const void *one, const void *zero, void *ws, size_t wsz,
                const CUfunction *fown, int mode)
{
    int lt_ok = n > 0;
    if (n > 0) p->algo = res[0].algo;
    CUevent e0 = NULL, e1 = NULL;
    CUstream ts = NULL;
    if (ck_cu.cuStreamBeginCapture_v2 && ck_cu.cuStreamEndCapture && ck_cu.cuGraphInstantiateWithFlags &&
        ck_cu.cuGraphLaunch && ck_cu.cuGraphExecDestroy && ck_cu.cuGraphDestroy &&
        ck_cu.cuEventCreate(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS && ck_cu.cuEventCreate(&e1, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
        ck_cu.cuStreamCreate(&ts, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
        ck_cu.cuEventRecord(e0, ck_cuda_current_stream(d->dev.index)) == CUDA_SUCCESS &&
        ck_cu.cuStreamWaitEvent(ts, e0, 0) == CUDA_SUCCESS) {
        float lt_ms = -1, own_ms = -1;
        lt_run lr = {h, p, NULL, d, one, zero, ws, wsz};
        for (int i = 0; i < n; i++) {
            if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
            lr.algo = &res[i].algo;
            float ms = time_graph(run_lt, &lr, ts, e0, e1);
            if (ms >= 0 && (lt_ms < 0 || ms < lt_ms)) {
                lt_ms = ms;
                p->algo = res[i].algo;
            }
        }
        if (fown)
            for (int c = 0; c < CK_GEMM_OWN_CFGS; c++)
                for (int ks = 1; ks <= CK_GEMM_SMALL_MAX_WARPS; ks *= 2) {
                    if (!own_fits(&p->key, c, ks) || (!is_dot(c) && ks > 1 && p->key.k < 8 * ks)) continue;
                    own_run orun = {d, fown[c], c, ks};
                    float ms = time_graph(run_own, &orun, ts, e0, e1);
                    if (ms >= 0 && (own_ms < 0 || ms < own_ms)) {
                        own_ms = ms;
                        p->own = c, p->own_ks = ks, p->own_f = fown[c];
                    }
                }
        double e_lt = -1, e_own = -1;
        if (p->own >= 0) {
            p->own_graph = p->own_eager = mode == 1 || lt_ms < 0 || own_ms < lt_ms;
            if (mode != 1 && lt_ms >= 0) {
                lr.algo = &p->algo;
                own_run orun = {d, p->own_f, p->own, p->own_ks};
                e_lt = time_eager(run_lt, &lr, ts), e_own = time_eager(run_own, &orun, ts);
                p->own_eager = e_own >= 0 && (e_lt < 0 || e_own < e_lt);
            }
        }
        if (tune_enabled() == 2) {
            const lt_key *k = &p->key;
            const int c = p->own < 0 ? 0 : p->own;
            char what[64];
            if (is_dot(c))
                snprintf(what, sizeof what, "dot, a warp %dx%d", ck_gemm_dot_cfgs[c - CK_GEMM_SMALL_CFGS].wm,
                         ck_gemm_dot_cfgs[c - CK_GEMM_SMALL_CFGS].wn);
            else
                snprintf(what, sizeof what, "tile %dx%d, %d warps, unroll %d", ck_gemm_small_tm(c), ck_gemm_small_tn(c),
                         p->own_ks, ck_gemm_small_cfgs[c].unroll);
            fprintf(stderr,
                    "cudakit linear %s m=%lld n=%lld k=%lld ta=%d tb=%d epi=%d: a call in a graph cuBLASLt %.2f us, "
                    "cudakit %.2f us (%s); one by one cuBLASLt %.2f us, cudakit %.2f us; "
                    "in a graph %s, one by one %s\n",
                    ck_dtype_get_info((ck_dtype)k->type)->name, (long long)k->m, (long long)k->n, (long long)k->k,
                    k->ta, k->tb, k->epi, lt_ms * 1e3 / LT_TUNE_RUNS, own_ms * 1e3 / LT_TUNE_RUNS, what,
                    e_lt * 1e3 / LT_TUNE_RUNS, e_own * 1e3 / LT_TUNE_RUNS,
                    p->own >= 0 && p->own_graph ? "cudakit" : "cuBLASLt", p->own >= 0 && p->own_eager ? "cudakit" : "cuBLASLt");
        }
        ck_cu.cuStreamSynchronize(ts);
    } else {
        own_untimed(p, fown, mode, n > 0);
    }
    if (ts) ck_cu.cuStreamDestroy_v2(ts);
    if (e0) ck_cu.cuEventDestroy_v2(e0);
    if (e1) ck_cu.cuEventDestroy_v2(e1);
    ck_error_clear();
    return lt_ok;
}

/* The descriptor, layouts and algorithm of key (bias: the pointer the
 * heuristic sees, for its alignment; call: the operands to time the
 * candidates on, or NULL to keep the heuristic's first).  p->lt 0 when
 * cuBLASLt has none; p->own cudakit's kernel's cfg, -1 when it is not to
 * run (neither: the op layer composes the product). */
static ck_status plan_build(cublasLtHandle_t h, lt_plan *p, int data_type, int scale_type, const void *bias,
                            const ck_linear_desc *call, const void *one, const void *zero, void *ws, size_t wsz)
{
    const lt_key *k = &p->key;
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescCreate(&p->desc, k->compute, scale_type));
    int32_t opa = k->tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = k->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    uint32_t epi = epilogue_of((ck_linear_epi)k->epi);
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (bias)
        CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                                 sizeof bias));
    /* cuBLASLt's A: row-major b (k x n, or n x k transposed) read column-major */
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatrixLayoutCreate(&p->la, data_type, (uint64_t)(k->tb ? k->k : k->n),
                                                         (uint64_t)(k->tb ? k->n : k->k), k->ldb));
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatrixLayoutCreate(&p->lb, data_type, (uint64_t)(k->ta ? k->m : k->k),
                                                         (uint64_t)(k->ta ? k->k : k->m), k->lda));
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatrixLayoutCreate(&p->ld, data_type, (uint64_t)k->n, (uint64_t)k->m, k->ldd));

    cublasLtMatmulPreference_t pref = NULL;
    CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws_max = k->ws;
    uint32_t al[4] = {(uint32_t)k->align_b, (uint32_t)k->align_a, (uint32_t)k->align_d, (uint32_t)k->align_d};
    cublasStatus_t r = ck_cublas.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                      &ws_max, sizeof ws_max);
    static const int attrs[4] = {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; r == CUBLAS_STATUS_SUCCESS && i < 4; i++)
        r = ck_cublas.cublasLtMatmulPreferenceSetAttribute(pref, attrs[i], &al[i], sizeof al[i]);
    cublasLtMatmulHeuristicResult_t res[LT_CANDIDATES];
    memset(res, 0, sizeof res);
    int got = 0, want = call ? LT_CANDIDATES : 1;
    if (r == CUBLAS_STATUS_SUCCESS)
        r = ck_cublas.cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->la, p->lb, p->ld, p->ld, pref, want, res, &got);
    ck_cublas.cublasLtMatmulPreferenceDestroy(pref);
    int lt = !(r == CUBLAS_STATUS_NOT_SUPPORTED ||
               (r == CUBLAS_STATUS_SUCCESS && (got < 1 || res[0].state != CUBLAS_STATUS_SUCCESS)));
    if (lt && r != CUBLAS_STATUS_SUCCESS)
        return ck_cublas_fail(r, "cublasLtMatmulAlgoGetHeuristic", __func__, __FILE__, __LINE__);
    if (!lt) got = 0, ck_error_clear();
    /* cudakit's kernels when they are to be timed, forced, or all there is */
    const int mode = k->own_mode;
    CUfunction fown[CK_GEMM_OWN_CFGS], *fo = NULL;
    p->own = -1;
    if (mode != 0 && (call || mode == 1 || !lt) && own_fits(k, 0, 1)) {
        if (own_kernels(k->dev, (ck_dtype)k->type, fown) == CK_OK) fo = fown;
        else ck_error_clear();
    }
    if (call) {
        lt = tune(h, p, res, got, call, one, zero, ws, wsz, fo, mode);
    } else {
        if (lt) p->algo = res[0].algo;
        own_untimed(p, fo, mode, lt);
    }
    p->lt = lt;
    return CK_OK;
}

static ck_status no_plan(void)
{
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "neither cuBLASLt nor cudakit's kernel has a product for this linear layer");
}

ck_status ck_cuda_linear(const ck_linear_desc *d)
{
    static const float f1 = 1.0f, f0 = 0.0f;
    static const double d1 = 1.0, d0 = 0.0;
    int data_type, compute, scale_type;
    switch (d->type) {
    case CK_FLOAT16: data_type = CK_CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; scale_type = CK_CUDA_R_32F; break;
    case CK_FLOAT32:
        data_type = CK_CUDA_R_32F;
        compute = d->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        scale_type = CK_CUDA_R_32F;
        break;
    case CK_FLOAT64: data_type = CK_CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; scale_type = CK_CUDA_R_64F; break;
    default: return no_plan();
    }
    const int64_t lim = ((int64_t)1 << 31) - 1;
    if (d->m <= 0 || d->n <= 0 || d->k <= 0 || d->m > lim || d->n > lim || d->k > lim || d->lda > lim ||
        d->ldb > lim || d->ldd > lim || (unsigned)d->epi >= CK_LINEAR_EPI_COUNT)
        return no_plan();
    const int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    cublasLtHandle_t h = NULL;
    if (s == CK_OK) s = get_lt_handle(dev, &h);
    if (s != CK_OK) return s;
    size_t wsz = 0;
    void *ws = ck_cuda_blas_workspace(d->dev, &wsz);
    int with_bias = d->epi == CK_LINEAR_EPI_BIAS || d->epi == CK_LINEAR_EPI_RELU_BIAS || d->epi == CK_LINEAR_EPI_BGRAD_A;

    lt_key key;
    memset(&key, 0, sizeof key);
    key.dev = dev;
    key.type = (int)d->type;
    key.compute = compute;
    key.epi = (int)d->epi;
    key.m = d->m; key.n = d->n; key.k = d->k;
    key.lda = d->lda; key.ldb = d->ldb; key.ldd = d->ldd;
    key.ta = d->ta != 0; key.tb = d->tb != 0;
    key.align_a = align_of(d->a);
    key.align_b = align_of(d->b);
    key.align_d = align_of(d->d);
    key.align_bias = with_bias ? align_of(d->bias) : 0;
    key.ws = wsz;
    key.own_mode = own_mode(&key.own_cfg);
    const int dbl = d->type == CK_FLOAT64;
    const void *one = dbl ? (const void *)&d1 : (const void *)&f1, *zero = dbl ? (const void *)&d0 : (const void *)&f0;
    uint64_t hsh = 1469598103934665603ull;
    const unsigned char *kb = (const unsigned char *)&key;
    for (size_t i = 0; i < sizeof key; i++) hsh = (hsh ^ kb[i]) * 1099511628211ull;
    lt_plan **bucket = &plans_[hsh % LT_BUCKETS], *p;
    for (p = *bucket; p; p = p->next)
        if (!memcmp(&p->key, &key, sizeof key)) break;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p) return ck_error_set(CK_ERR_MEMORY, "linear: out of memory for a cuBLASLt plan");
        p->key = key;
        const int timed = tune_enabled() && (double)d->m * (double)d->n * (double)d->k <= (double)LT_TUNE_MAX_WORK &&
                          !ck_graph_capturing(d->dev);
        s = plan_build(h, p, data_type, scale_type, with_bias ? d->bias : NULL, timed ? d : NULL, one, zero, ws, wsz);
        if (s != CK_OK) {
            plan_free(p);
            return s;
        }
        p->next = *bucket;
        *bucket = p;
    }
    if (!p->lt && p->own < 0) return no_plan();
    if (p->own >= 0 && (!p->lt || (ck_graph_capturing(d->dev) ? p->own_graph : p->own_eager)))
        return own_launch(d, p->own_f, p->own, p->own_ks, NULL);
    if (with_bias) {
        const void *bp = d->bias;
        CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp,
                                                                 sizeof bp));
    }
    cublasStatus_t r = ck_cublas.cublasLtMatmul(h, p->desc, one, d->b, p->la, d->a, p->lb, zero, d->d, p->ld, d->d,
                                                p->ld, &p->algo, ws, wsz, ck_cuda_current_stream(dev));
    if (r == CUBLAS_STATUS_NOT_SUPPORTED) {
        /* refused before any work (an algorithm the heuristic offered but the
         * call's checks do not take): cudakit's kernel or composed from now on */
        p->lt = 0;
        ck_error_clear();
        return p->own >= 0 ? own_launch(d, p->own_f, p->own, p->own_ks, NULL) : no_plan();
    }
    if (r != CUBLAS_STATUS_SUCCESS) return ck_cublas_fail(r, "cublasLtMatmul", __func__, __FILE__, __LINE__);
    return CK_OK;
}
