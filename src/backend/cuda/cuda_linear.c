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
 */
#include "cuda_internal.h"
#include "../../platform/cublas_api.h"
#include "../graph_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct lt_key {
    int dev;
    int type, compute, epi;
    int64_t m, n, k, lda, ldb, ldd;
    int ta, tb;
    int align_a, align_b, align_d, align_bias;
    size_t ws;
} lt_key;

typedef struct lt_plan {
    lt_key key;
    int ok;                      /* 0: cuBLASLt has no algorithm for the key */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
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

static int tune_enabled(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("CUDAKIT_LINEAR_TUNE");
        on = !(e && e[0] == '0');
    }
    return on;
}

/* LT_TUNE_RUNS runs of the call (its operands and workspace) with
 * algorithm a, captured as a graph on the side stream ts and replayed: the
 * best of three replays in ms, or -1 when it fails.  Timed in a graph, as
 * the small products of a training step run, so that the host's cost of a
 * call (more than the kernels' for these sizes) does not hide theirs. */
static float time_algo(cublasLtHandle_t h, const lt_plan *p, const cublasLtMatmulAlgo_t *a, const ck_linear_desc *d,
                       const void *one, const void *zero, void *ws, size_t wsz, CUstream ts, CUevent e0, CUevent e1)
{
    CUgraph g = NULL;
    CUgraphExec ge = NULL;
    float best = -1;
    if (ck_cu.cuStreamBeginCapture_v2(ts, CU_STREAM_CAPTURE_MODE_RELAXED) != CUDA_SUCCESS) return -1;
    int ok = 1;
    for (int i = 0; i < LT_TUNE_RUNS && ok; i++)
        ok = ck_cublas.cublasLtMatmul(h, p->desc, one, d->b, p->la, d->a, p->lb, zero, d->d, p->ld, d->d, p->ld, a, ws,
                                      wsz, ts) == CUBLAS_STATUS_SUCCESS;
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

/* The fastest of the heuristic's n candidates res[] on the call (res[0]
 * when none can be timed).  The side stream begins after the call's
 * stream's work (the operands) and is waited for, so the call's stream
 * (and its workspace) is idle meanwhile.  A failed candidate leaves no
 * error behind. */
static const cublasLtMatmulAlgo_t *tune(cublasLtHandle_t h, const lt_plan *p, const cublasLtMatmulHeuristicResult_t *res,
                                        int n, const ck_linear_desc *d, const void *one, const void *zero, void *ws,
                                        size_t wsz)
{
    const cublasLtMatmulAlgo_t *best = &res[0].algo;
    if (!ck_cu.cuStreamBeginCapture_v2 || !ck_cu.cuStreamEndCapture || !ck_cu.cuGraphInstantiateWithFlags ||
        !ck_cu.cuGraphLaunch || !ck_cu.cuGraphExecDestroy || !ck_cu.cuGraphDestroy)
        return best;
    CUevent e0 = NULL, e1 = NULL;
    CUstream ts = NULL;
    if (ck_cu.cuEventCreate(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS && ck_cu.cuEventCreate(&e1, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
        ck_cu.cuStreamCreate(&ts, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
        ck_cu.cuEventRecord(e0, ck_cuda_current_stream(d->dev.index)) == CUDA_SUCCESS &&
        ck_cu.cuStreamWaitEvent(ts, e0, 0) == CUDA_SUCCESS) {
        float best_ms = -1;
        for (int i = 0; i < n; i++) {
            if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
            float ms = time_algo(h, p, &res[i].algo, d, one, zero, ws, wsz, ts, e0, e1);
            if (ms >= 0 && (best_ms < 0 || ms < best_ms)) {
                best_ms = ms;
                best = &res[i].algo;
            }
        }
        ck_cu.cuStreamSynchronize(ts);
    }
    if (ts) ck_cu.cuStreamDestroy_v2(ts);
    if (e0) ck_cu.cuEventDestroy_v2(e0);
    if (e1) ck_cu.cuEventDestroy_v2(e1);
    ck_error_clear();
    return best;
}

/* The descriptor, layouts and algorithm of key (bias: the pointer the
 * heuristic sees, for its alignment; call: the operands to time the
 * candidates on, or NULL to keep the heuristic's first).  p->ok 0 when
 * cuBLASLt has none. */
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
    if (r == CUBLAS_STATUS_NOT_SUPPORTED || (r == CUBLAS_STATUS_SUCCESS && (got < 1 || res[0].state != CUBLAS_STATUS_SUCCESS))) {
        p->ok = 0;
        ck_error_clear();
        return CK_OK;
    }
    if (r != CUBLAS_STATUS_SUCCESS)
        return ck_cublas_fail(r, "cublasLtMatmulAlgoGetHeuristic", __func__, __FILE__, __LINE__);
    p->algo = got > 1 ? *tune(h, p, res, got, call, one, zero, ws, wsz) : res[0].algo;
    p->ok = 1;
    return CK_OK;
}

static ck_status no_plan(void)
{
    return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "cuBLASLt has no product for this linear layer");
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
    if (!p->ok) return no_plan();
    if (with_bias) {
        const void *bp = d->bias;
        CK_CHECK_CUBLAS(ck_cublas.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp,
                                                                 sizeof bp));
    }
    cublasStatus_t r = ck_cublas.cublasLtMatmul(h, p->desc, one, d->b, p->la, d->a, p->lb, zero, d->d, p->ld, d->d,
                                                p->ld, &p->algo, ws, wsz, ck_cuda_current_stream(dev));
    if (r == CUBLAS_STATUS_NOT_SUPPORTED) {
        /* refused before any work (an algorithm the heuristic offered but the
         * call's checks do not take): composed from now on */
        p->ok = 0;
        ck_error_clear();
        return no_plan();
    }
    if (r != CUBLAS_STATUS_SUCCESS) return ck_cublas_fail(r, "cublasLtMatmul", __func__, __FILE__, __LINE__);
    return CK_OK;
}
