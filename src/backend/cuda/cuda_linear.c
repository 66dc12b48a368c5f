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
 * A plan (the matmul descriptor, three layouts and the heuristic's
 * algorithm) is made on first use of a key (device, dtype, compute type,
 * epilogue, sizes, leading dims, transposes, the pointers' alignments,
 * the workspace's size) and kept for the thread's life, as the cuBLAS
 * handles are (cuda_blas.c): later calls set the bias pointer and launch.
 * Making a plan calls only host functions of cuBLASLt, so it may happen
 * while a CUDA graph is being captured; the launch takes the current
 * stream and that stream's cuBLAS workspace, which a capture keeps (see
 * cuda_blas.c).  A key cuBLASLt has no algorithm for is kept as such and
 * answered CK_ERR_NOT_IMPLEMENTED: the op layer composes it.
 */
#include "cuda_internal.h"
#include "../../platform/cublas_api.h"

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

/* The descriptor, layouts and algorithm of key (bias: the pointer the
 * heuristic sees, for its alignment).  p->ok 0 when cuBLASLt has none. */
static ck_status plan_build(cublasLtHandle_t h, lt_plan *p, int data_type, int scale_type, const void *bias)
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
    uint64_t ws = k->ws;
    uint32_t al[4] = {(uint32_t)k->align_b, (uint32_t)k->align_a, (uint32_t)k->align_d, (uint32_t)k->align_d};
    cublasStatus_t r = ck_cublas.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                      &ws, sizeof ws);
    static const int attrs[4] = {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; r == CUBLAS_STATUS_SUCCESS && i < 4; i++)
        r = ck_cublas.cublasLtMatmulPreferenceSetAttribute(pref, attrs[i], &al[i], sizeof al[i]);
    cublasLtMatmulHeuristicResult_t res;
    memset(&res, 0, sizeof res);
    int got = 0;
    if (r == CUBLAS_STATUS_SUCCESS)
        r = ck_cublas.cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->la, p->lb, p->ld, p->ld, pref, 1, &res, &got);
    ck_cublas.cublasLtMatmulPreferenceDestroy(pref);
    if (r == CUBLAS_STATUS_NOT_SUPPORTED || (r == CUBLAS_STATUS_SUCCESS && (got < 1 || res.state != CUBLAS_STATUS_SUCCESS))) {
        p->ok = 0;
        ck_error_clear();
        return CK_OK;
    }
    if (r != CUBLAS_STATUS_SUCCESS)
        return ck_cublas_fail(r, "cublasLtMatmulAlgoGetHeuristic", __func__, __FILE__, __LINE__);
    p->algo = res.algo;
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
        s = plan_build(h, p, data_type, scale_type, with_bias ? d->bias : NULL);
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
    const int dbl = d->type == CK_FLOAT64;
    const void *one = dbl ? (const void *)&d1 : (const void *)&f1, *zero = dbl ? (const void *)&d0 : (const void *)&f0;
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
