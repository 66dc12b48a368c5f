/*
 * Matrix products on the GPU: cuBLAS for float16/32/64 and complex64/128,
 * a tiled kernel of our own for integers and bool.
 *
 * A product arrives as a ck_matmul_desc whose operands the op layer has
 * already made BLAS-readable (unit stride along one axis) for the floating
 * types; ck_gemm_for_each_job splits its broadcast batch dims into strided
 * batches and each becomes one cublasGemmStridedBatchedEx (cublasGemmEx for
 * a single product), row-major handled as C^T = B^T A^T, no copies.
 *
 * float16 accumulates in float32 (PyTorch's default); float32 and complex64
 * use full-precision float32 unless TF32 is allowed (ck_matmul_set_allow_tf32,
 * ck.cuda.matmul.allow_tf32 in Python), as PyTorch's allow_tf32 flag.
 *
 * One cuBLAS handle per device and thread (a handle must not be used by two
 * threads at once); each call sets it to the current stream and gives it
 * that stream's workspace.  A stream's workspace is made once, from the
 * driver, and kept, as PyTorch keeps one a handle and stream: the products on
 * one stream run one after another, and a product captured in a graph
 * addresses the workspace in every replay, so a workspace is never given
 * back while the program runs (taken and returned a call, a captured epoch
 * of 4,700 products held 32 MiB each: 150 GB).  When its stream is
 * destroyed, a workspace waits, with a mark of the stream's last work, for
 * the next new stream; one used in a capture is kept by itself (a graph's
 * replays may run beside the next stream's products).
 */
#include "cuda_internal.h"
#include "../../platform/cublas_api.h"
#include "../../codegen/cuda_gemm_codegen.h"
#include "../graph_internal.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local cublasHandle_t handles_[CK_CUDA_MAX_DEVICES];

/* The workspaces of a device: live ones by stream; spare ones (their
 * stream gone, stream NULL) with the event their reuse waits for. */
typedef struct ck_blas_ws {
    CUstream stream;
    void *ptr;
    size_t size;
    CUevent gone;        /* recorded on the stream before its destruction, or NULL */
    int captured;        /* used in a capture: never handed to another stream */
    struct ck_blas_ws *next;
} ck_blas_ws;

static ck_blas_ws *ws_[CK_CUDA_MAX_DEVICES];
static pthread_mutex_t ws_mu_ = PTHREAD_MUTEX_INITIALIZER;

static ck_status get_handle(int d, cublasHandle_t *h)
{
    ck_status s = ck_cublas_load();
    if (s != CK_OK) return s;
    if (!handles_[d]) CK_CHECK_CUBLAS(ck_cublas.cublasCreate_v2(&handles_[d]));
    *h = handles_[d];
    return CK_OK;
}

/* cuBLAS's workspace: what PyTorch gives Hopper and later (32 MiB), 8 MiB before. */
static size_t workspace_bytes(int d)
{
    const char *env = getenv("CUDAKIT_CUBLAS_WORKSPACE");
    if (env && *env) return (size_t)strtoull(env, NULL, 10);
    return ck_cuda_dev(d)->cc_major >= 9 ? ((size_t)32 << 20) : ((size_t)8 << 20);
}

/* The current stream's workspace (made the first time; NULL with no
 * error when the pool has none to give: cuBLAS then uses its own). */
static void *stream_workspace(ck_device dev, size_t wsz)
{
    const int d = dev.index;
    CUstream s = ck_cuda_current_stream(d);
    const int capturing = ck_graph_capturing(dev);
    pthread_mutex_lock(&ws_mu_);
    ck_blas_ws *w, *spare = NULL;
    for (w = ws_[d]; w; w = w->next) {
        if (w->stream == s && w->ptr && w->size == wsz) break;
        /* while capturing, only one whose stream's work is done: a
         * capturing stream may not wait for an event recorded outside the
         * capture (the wait would invalidate it: the next launch fails) */
        if (!spare && !w->stream && !w->captured && w->size == wsz &&
            (!capturing || !w->gone || ck_cu.cuEventQuery(w->gone) == CUDA_SUCCESS))
            spare = w;
    }
    if (!w && spare) {
        /* a gone stream's: this stream's products follow its last ones
         * (when capturing, they are done already) */
        if (spare->gone && !capturing && ck_cu.cuStreamWaitEvent(s, spare->gone, 0) != CUDA_SUCCESS) {
            ck_cuda_wait_event(d, spare->gone, "cuBLAS workspace");
            ck_error_clear();
        }
        if (spare->gone) ck_cu.cuEventDestroy_v2(spare->gone);
        spare->gone = NULL;
        spare->stream = s;
        w = spare;
    }
    if (!w) {
        pthread_mutex_unlock(&ws_mu_);
        /* from the driver, not the pool: library scratch, not an array's
         * memory, so the pool's figures (a leak check's) leave it out */
        CUdeviceptr p = 0;
        if (ck_cu.cuMemAlloc_v2(&p, wsz) != CUDA_SUCCESS) { ck_error_clear(); return NULL; }
        ck_blas_ws *nw = calloc(1, sizeof *nw);
        if (!nw) { ck_cu.cuMemFree_v2(p); return NULL; }
        nw->stream = s;
        nw->ptr = (void *)(uintptr_t)p;
        nw->size = wsz;
        pthread_mutex_lock(&ws_mu_);
        nw->next = ws_[d];
        ws_[d] = w = nw;
    }
    if (capturing) w->captured = 1;
    void *p = w->ptr;
    pthread_mutex_unlock(&ws_mu_);
    return p;
}

void *ck_cuda_blas_workspace(ck_device dev, size_t *size)
{
    size_t wsz = workspace_bytes(dev.index);
    void *p = wsz ? stream_workspace(dev, wsz) : NULL;
    *size = p ? wsz : 0;
    return p;
}

void ck_cuda_blas_stream_gone(int d, CUstream s)
{
    pthread_mutex_lock(&ws_mu_);
    for (ck_blas_ws *w = ws_[d]; w; w = w->next) {
        if (w->stream != s) continue;
        w->stream = NULL;
        if (ck_cu.cuEventCreate(&w->gone, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            w->gone = NULL;
            ck_cu.cuStreamSynchronize(s);
        } else if (ck_cu.cuEventRecord(w->gone, s) != CUDA_SUCCESS) {
            ck_cu.cuEventDestroy_v2(w->gone);
            w->gone = NULL;
            ck_cu.cuStreamSynchronize(s);
        }
    }
    pthread_mutex_unlock(&ws_mu_);
    ck_error_clear();
}

typedef struct blas_ctx {
    int dev;
    cublasHandle_t h;
    int itemsize;
    int data_type, compute_type;
    const void *one, *zero;
} blas_ctx;

static ck_status blas_job(void *ctx, const ck_gemm_job *j)
{
    const blas_ctx *c = ctx;
    ck_blas_gemm g;
    if (!ck_gemm_job_to_blas(j, &g))
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "matmul: an operand layout cuBLAS cannot read reached the "
                            "GPU backend (sizes beyond 2**31 - 1 are not supported)");
    const int ta = g.op_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.op_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int64_t chunk = 1 << 30;
    for (int64_t b0 = 0; b0 < g.batch; b0 += chunk) {
        int64_t nb = g.batch - b0 < chunk ? g.batch - b0 : chunk;
        const char *A = g.A + b0 * g.stride_a * c->itemsize;
        const char *B = g.B + b0 * g.stride_b * c->itemsize;
        char *C = g.C + b0 * g.stride_c * c->itemsize;
        if (nb == 1) {
            CK_CHECK_CUBLAS(ck_cublas.cublasGemmEx(c->h, ta, tb, (int)g.m, (int)g.n, (int)g.k, c->one,
                                                   A, c->data_type, (int)g.lda, B, c->data_type, (int)g.ldb,
                                                   c->zero, C, c->data_type, (int)g.ldc, c->compute_type,
                                                   CUBLAS_GEMM_DEFAULT));
        } else {
            CK_CHECK_CUBLAS(ck_cublas.cublasGemmStridedBatchedEx(
                c->h, ta, tb, (int)g.m, (int)g.n, (int)g.k, c->one, A, c->data_type, (int)g.lda, g.stride_a,
                B, c->data_type, (int)g.ldb, g.stride_b, c->zero, C, c->data_type, (int)g.ldc, g.stride_c,
                (int)nb, c->compute_type, CUBLAS_GEMM_DEFAULT));
        }
    }
    return CK_OK;
}

static ck_status matmul_blas(const ck_matmul_desc *d)
{
    const int dev = d->dev.index;
    static const float f1[2] = {1.0f, 0.0f}, f0[2] = {0.0f, 0.0f};
    static const double d1[2] = {1.0, 0.0}, d0[2] = {0.0, 0.0};
    blas_ctx c;
    c.dev = dev;
    c.itemsize = ck_dtype_get_info(d->type)->itemsize;
    switch (d->type) {
    case CK_FLOAT16: c.data_type = CK_CUDA_R_16F; c.compute_type = CUBLAS_COMPUTE_32F; break;
    case CK_FLOAT32: c.data_type = CK_CUDA_R_32F; break;
    case CK_COMPLEX64: c.data_type = CK_CUDA_C_32F; break;
    case CK_FLOAT64: c.data_type = CK_CUDA_R_64F; c.compute_type = CUBLAS_COMPUTE_64F; break;
    case CK_COMPLEX128: c.data_type = CK_CUDA_C_64F; c.compute_type = CUBLAS_COMPUTE_64F; break;
    default: return ck_error_set(CK_ERR_TYPE, "matmul: cuBLAS has no %s product", ck_dtype_get_info(d->type)->name);
    }
    if (d->type == CK_FLOAT32 || d->type == CK_COMPLEX64)
        c.compute_type = d->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    int dbl = c.compute_type == CUBLAS_COMPUTE_64F;
    c.one = dbl ? (const void *)d1 : (const void *)f1;
    c.zero = dbl ? (const void *)d0 : (const void *)f0;

    ck_status s = ck_cuda_use(dev);
    if (s == CK_OK) s = get_handle(dev, &c.h);
    if (s != CK_OK) return s;
    CK_CHECK_CUBLAS(ck_cublas.cublasSetStream_v2(c.h, ck_cuda_current_stream(dev)));
    /* cublasSetStream put back cuBLAS's own workspace; ours is this
     * stream's (without one, cuBLAS uses its own) */
    size_t wsz = workspace_bytes(dev);
    void *ws = wsz ? stream_workspace(d->dev, wsz) : NULL;
    if (ws) CK_CHECK_CUBLAS(ck_cublas.cublasSetWorkspace_v2(c.h, ws, wsz));
    return ck_gemm_for_each_job(d, blas_job, &c);
}

/* ------------------------------------------------- integers and bool */

static char *int_source(const void *spec) { return ck_cuda_gemm_int_source(spec); }

typedef struct int_ctx { int dev; CUfunction f; } int_ctx;

static ck_status int_job(void *ctx, const ck_gemm_job *j)
{
    const int_ctx *c = ctx;
    long long m = j->m, n = j->n, k = j->k, batch = j->batch;
    void *a = j->a, *b = j->b, *cc = j->c;
    long long s[9] = {j->a_rs, j->a_cs, j->a_bs, j->b_rs, j->b_cs, j->b_bs, j->c_rs, j->c_cs, j->c_bs};
    void *args[] = {&m, &n, &k, &batch, &a, &s[0], &s[1], &s[2], &b, &s[3], &s[4], &s[5], &cc, &s[6], &s[7], &s[8]};
    int64_t tiles = ((m + 15) / 16) * ((n + 15) / 16) * batch;
    unsigned grid = ck_cuda_grid_for(c->dev, tiles * 256, 256);
    return ck_cuda_launch(c->dev, c->f, grid, 256, 0, args);
}

static ck_status matmul_int(const ck_matmul_desc *d)
{
    int_ctx c = {d->dev.index, NULL};
    ck_status s = ck_cuda_use(c.dev);
    if (s != CK_OK) return s;
    ck_cuda_gemm_int_spec sp = {d->type};
    s = ck_cuda_get_kernel(c.dev, ck_cuda_gemm_int_key(&sp), int_source, &sp, "ck_gemm_int", &c.f);
    if (s != CK_OK) return s;
    return ck_gemm_for_each_job(d, int_job, &c);
}

ck_status ck_cuda_matmul(const ck_matmul_desc *d)
{
    return ck_dtype_is_inexact(d->type) ? matmul_blas(d) : matmul_int(d);
}
