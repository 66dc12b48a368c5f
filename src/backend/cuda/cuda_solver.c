/*
 * cuda_solver.c - dense factorisations through cuSOLVER: one handle per
 * device, bound to the current stream for each call; workspaces and info
 * words from our stream-ordered pool.  Batches run as a loop of single
 * factorisations on the stream (one workspace query per call, since every
 * item has the same shape), except the eigen-decomposition of many small
 * matrices (n <= 32): one syevjBatched call.  The info words come back in
 * one copy.
 */
#include "cuda_internal.h"
#include "../../platform/cusolver_api.h"

#include <stdlib.h>
#include <string.h>

static cusolverDnHandle_t handles_[CK_CUDA_MAX_DEVICES];
static pthread_mutex_t mu_[CK_CUDA_MAX_DEVICES];
static pthread_once_t once_ = PTHREAD_ONCE_INIT;

static void init_locks(void)
{
    for (int i = 0; i < CK_CUDA_MAX_DEVICES; i++) pthread_mutex_init(&mu_[i], NULL);
}

static const int esize_[4] = {4, 8, 8, 16};   /* element bytes of each type */
static const int rsize_[4] = {4, 8, 4, 8};    /* its real part's */

/* One call's state: the device's handle on the current stream (its lock
 * held), and the device-side info words. */
typedef struct solver_call {
    ck_device dev;
    int d;
    cusolverDnHandle_t h;
    const ck_cusolver_typed *fn;
    int32_t *dinfo;
    int64_t batch;
    void *work;
    size_t work_bytes;
    void *rwork;
    size_t rwork_bytes;
    void *host_work;      /* malloc'd; read by the routine until the stream is done */
} solver_call;

static ck_status call_begin(solver_call *c, ck_device dev, int type, int64_t batch)
{
    memset(c, 0, sizeof *c);
    if (type < 0 || type > 3) return ck_error_set(CK_ERR_TYPE, "cuSOLVER: unsupported element type %d", type);
    if (batch > 0x7fffffff / 4) return ck_error_set(CK_ERR_VALUE, "cuSOLVER: batch of %lld matrices is too large", (long long)batch);
    ck_status s = ck_cusolver_load();
    if (s != CK_OK) return s;
    pthread_once(&once_, init_locks);
    c->dev = dev;
    c->d = dev.index;
    c->batch = batch;
    if ((s = ck_cuda_use(c->d)) != CK_OK) return s;
    c->fn = ck_cusolver_routines((ck_cusolver_type)type);
    c->dinfo = ck_cuda_alloc(dev, (size_t)(batch > 0 ? batch : 1) * sizeof(int32_t));
    if (!c->dinfo) return ck_error_status();
    CUresult r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)c->dinfo, 0, (size_t)batch, ck_cuda_current_stream(c->d));
    if (r != CUDA_SUCCESS) {
        ck_cuda_free(dev, c->dinfo, (size_t)batch * sizeof(int32_t));
        c->dinfo = NULL;
        return ck_cu_fail(r, "cuMemsetD32Async", __func__, __FILE__, __LINE__);
    }
    pthread_mutex_lock(&mu_[c->d]);
    if (!handles_[c->d]) {
        cusolverStatus_t st = ck_cusolver.cusolverDnCreate(&handles_[c->d]);
        if (st != CUSOLVER_STATUS_SUCCESS) {
            handles_[c->d] = NULL;
            s = ck_cusolver_fail(st, "cusolverDnCreate", __func__, __FILE__, __LINE__);
        }
    }
    if (s == CK_OK) {
        c->h = handles_[c->d];
        cusolverStatus_t st = ck_cusolver.cusolverDnSetStream(c->h, ck_cuda_current_stream(c->d));
        if (st != CUSOLVER_STATUS_SUCCESS) s = ck_cusolver_fail(st, "cusolverDnSetStream", __func__, __FILE__, __LINE__);
    }
    if (s != CK_OK) {
        pthread_mutex_unlock(&mu_[c->d]);
        ck_cuda_free(dev, c->dinfo, (size_t)batch * sizeof(int32_t));
        c->dinfo = NULL;
    }
    return s;
}

static ck_status call_work(solver_call *c, int lwork_elems, int type)
{
    c->work_bytes = (size_t)(lwork_elems > 0 ? lwork_elems : 1) * (size_t)esize_[type];
    c->work = ck_cuda_alloc(c->dev, c->work_bytes);
    return c->work ? CK_OK : ck_error_status();
}

/* Release the lock and the temporaries; on success, the info words to the
 * host (a sync of the current stream). */
static ck_status call_end(solver_call *c, ck_status s, int32_t *info_host)
{
    pthread_mutex_unlock(&mu_[c->d]);
    if (s == CK_OK && info_host && c->batch > 0)
        s = ck_cuda_copy_to_host(c->dev, info_host, c->dinfo, (size_t)c->batch * sizeof(int32_t));
    if (c->host_work) {
        if (s != CK_OK) ck_cu.cuStreamSynchronize(ck_cuda_current_stream(c->d));  /* the copy did not wait */
        free(c->host_work);
    }
    if (c->work) ck_cuda_free(c->dev, c->work, c->work_bytes);
    if (c->rwork) ck_cuda_free(c->dev, c->rwork, c->rwork_bytes);
    ck_cuda_free(c->dev, c->dinfo, (size_t)c->batch * sizeof(int32_t));
    return s;
}

#define CK_SOLVER_TRY(call, name)                                                             \
    do {                                                                                      \
        cusolverStatus_t st_ = (call);                                                        \
        if (st_ != CUSOLVER_STATUS_SUCCESS) {                                                 \
            s = ck_cusolver_fail(st_, name, __func__, __FILE__, __LINE__);                    \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

/* CUDAKIT_SOLVER_BATCHED=0 makes every batch a loop of single calls (to
 * compare the two paths). */
static int ck_cuda_solver_no_batched(void)
{
    const char *e = getenv("CUDAKIT_SOLVER_BATCHED");
    return e && !strcmp(e, "0");
}

static char *item(void *base, int64_t b, int64_t elems, int type)
{
    return (char *)base + b * elems * esize_[type];
}

static ck_status solver_getrf(ck_device dev, int type, int64_t batch, int n, void *a, int32_t *ipiv,
                              int32_t *info_host)
{
    if (batch <= 0 || n <= 0) return CK_OK;
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int lwork = 0;
    CK_SOLVER_TRY(c.fn->getrf_bufferSize(c.h, n, n, a, n, &lwork), "cusolverDn<t>getrf_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->getrf(c.h, n, n, item(a, b, (int64_t)n * n, type), n, c.work, ipiv + b * n, c.dinfo + b),
                      "cusolverDn<t>getrf");
done:
    return call_end(&c, s, info_host);
}

static ck_status solver_getrs(ck_device dev, int type, int64_t batch, int n, int nrhs, int trans, const void *lu,
                              const int32_t *ipiv, void *b_, int32_t *info_host)
{
    if (batch <= 0 || n <= 0 || nrhs <= 0) return CK_OK;
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->getrs(c.h, trans, n, nrhs, item((void *)lu, b, (int64_t)n * n, type), n, ipiv + b * n,
                                  item(b_, b, (int64_t)n * nrhs, type), n, c.dinfo + b),
                      "cusolverDn<t>getrs");
done:
    return call_end(&c, s, info_host);
}

static ck_status solver_potrf(ck_device dev, int type, int64_t batch, int n, int upper, void *a,
                              int32_t *info_host)
{
    if (batch <= 0 || n <= 0) return CK_OK;
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, lwork = 0;
    CK_SOLVER_TRY(c.fn->potrf_bufferSize(c.h, uplo, n, a, n, &lwork), "cusolverDn<t>potrf_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->potrf(c.h, uplo, n, item(a, b, (int64_t)n * n, type), n, c.work, lwork, c.dinfo + b),
                      "cusolverDn<t>potrf");
done:
    return call_end(&c, s, info_host);
}

static ck_status solver_geqrf(ck_device dev, int type, int64_t batch, int m, int n, void *a, void *tau,
                              int32_t *info_host)
{
    if (batch <= 0 || m <= 0 || n <= 0) return CK_OK;
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int k = m < n ? m : n, lwork = 0;
    CK_SOLVER_TRY(c.fn->geqrf_bufferSize(c.h, m, n, a, m, &lwork), "cusolverDn<t>geqrf_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->geqrf(c.h, m, n, item(a, b, (int64_t)m * n, type), m, item(tau, b, k, type), c.work,
                                  lwork, c.dinfo + b),
                      "cusolverDn<t>geqrf");
done:
    return call_end(&c, s, info_host);
}

static ck_status solver_orgqr(ck_device dev, int type, int64_t batch, int m, int ncols, int k, void *q,
                              const void *tau, int32_t *info_host)
{
    if (batch <= 0 || m <= 0 || ncols <= 0) return CK_OK;
    if (!(m >= ncols && ncols >= k && k >= 0))
        return ck_error_set(CK_ERR_VALUE, "orgqr needs m >= ncols >= k (got %d, %d, %d)", m, ncols, k);
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int lwork = 0;
    CK_SOLVER_TRY(c.fn->orgqr_bufferSize(c.h, m, ncols, k, q, m, tau, &lwork), "cusolverDn<t>orgqr_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->orgqr(c.h, m, ncols, k, item(q, b, (int64_t)m * ncols, type), m,
                                  item((void *)tau, b, k, type), c.work, lwork, c.dinfo + b),
                      "cusolverDn<t>orgqr");
done:
    return call_end(&c, s, info_host);
}

static ck_status solver_gesvd(ck_device dev, int type, int64_t batch, int m, int n, char job, void *a, void *sv,
                              void *u, void *vt, int32_t *info_host)
{
    if (batch <= 0 || m <= 0 || n <= 0) return CK_OK;
    if (m < n) return ck_error_set(CK_ERR_VALUE, "cuSOLVER's gesvd needs rows >= columns (got %d x %d)", m, n);
    if (job != 'A' && job != 'S' && job != 'N') return ck_error_set(CK_ERR_VALUE, "gesvd: job must be 'A', 'S' or 'N'");
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int lwork = 0;
    signed char jobu = (signed char)job, jobvt = job == 'N' ? 'N' : 'A';
    int64_t ucols = job == 'A' ? m : job == 'S' ? n : 0;
    CK_SOLVER_TRY(c.fn->gesvd_bufferSize(c.h, m, n, &lwork), "cusolverDn<t>gesvd_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    c.rwork_bytes = (size_t)n * (size_t)rsize_[type];
    if (!(c.rwork = ck_cuda_alloc(dev, c.rwork_bytes))) { s = ck_error_status(); goto done; }
    for (int64_t b = 0; b < batch; b++) {
        char *sb = (char *)sv + b * n * rsize_[type];
        void *ub = job == 'N' ? NULL : item(u, b, m * ucols, type);
        void *vb = job == 'N' ? NULL : item(vt, b, (int64_t)n * n, type);
        CK_SOLVER_TRY(c.fn->gesvd(c.h, jobu, jobvt, m, n, item(a, b, (int64_t)m * n, type), m, sb, ub, m, vb, n,
                                  c.work, lwork, c.rwork, c.dinfo + b),
                      "cusolverDn<t>gesvd");
    }
done:
    return call_end(&c, s, info_host);
}

/* Many small matrices: one Jacobi call for the whole batch (sorted
 * ascending, to machine precision: cuSOLVER's defaults). */
static syevjInfo_t syevj_params_[CK_CUDA_MAX_DEVICES];   /* cuSOLVER's defaults; made once per device */

static ck_status syevj_batched(solver_call *c, int type, int n, int jobz, int uplo, void *a, void *w)
{
    ck_status s = CK_OK;
    int lwork = 0;
    if (!syevj_params_[c->d])
        CK_SOLVER_TRY(ck_cusolver.cusolverDnCreateSyevjInfo(&syevj_params_[c->d]), "cusolverDnCreateSyevjInfo");
    syevjInfo_t params = syevj_params_[c->d];
    CK_SOLVER_TRY(c->fn->syevjBatched_bufferSize(c->h, jobz, uplo, n, a, n, w, &lwork, params, (int)c->batch),
                  "cusolverDn<t>syevjBatched_bufferSize");
    if ((s = call_work(c, lwork, type)) != CK_OK) goto done;
    CK_SOLVER_TRY(c->fn->syevjBatched(c->h, jobz, uplo, n, a, n, w, c->work, lwork, c->dinfo, params, (int)c->batch),
                  "cusolverDn<t>syevjBatched");
done:
    return s;
}

static ck_status solver_syevd(ck_device dev, int type, int64_t batch, int n, int vectors, int upper, void *a,
                              void *w, int32_t *info_host)
{
    if (batch <= 0 || n <= 0) return CK_OK;
    solver_call c;
    ck_status s = call_begin(&c, dev, type, batch);
    if (s != CK_OK) return s;
    int jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    int uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, lwork = 0;
    if (batch > 1 && n <= 32 && batch <= 0x7fffffff && !ck_cuda_solver_no_batched()) {
        s = syevj_batched(&c, type, n, jobz, uplo, a, w);
        return call_end(&c, s, info_host);
    }
    CK_SOLVER_TRY(c.fn->syevd_bufferSize(c.h, jobz, uplo, n, a, n, w, &lwork), "cusolverDn<t>syevd_bufferSize");
    if ((s = call_work(&c, lwork, type)) != CK_OK) goto done;
    for (int64_t b = 0; b < batch; b++)
        CK_SOLVER_TRY(c.fn->syevd(c.h, jobz, uplo, n, item(a, b, (int64_t)n * n, type), n,
                                  (char *)w + b * n * rsize_[type], c.work, lwork, c.dinfo + b),
                      "cusolverDn<t>syevd");
done:
    return call_end(&c, s, info_host);
}

static cusolverDnParams_t params_[CK_CUDA_MAX_DEVICES];   /* the 64-bit API's defaults; made once per device */

static ck_status solver_geev(ck_device dev, int type, int64_t batch, int n, void *a, void *w, void *vr,
                             int32_t *info_host)
{
    if (batch <= 0 || n <= 0) return CK_OK;
    ck_status s = ck_cusolver_load();
    if (s != CK_OK) return s;
    if (!ck_cusolver_has_geev())
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "eig on a GPU needs cusolverDnXgeev (cuSOLVER of CUDA 12.6 or newer)");
    solver_call c;
    if ((s = call_begin(&c, dev, type, batch)) != CK_OK) return s;
    static const int data_type[4] = {CK_CUDA_R_32F, CK_CUDA_R_64F, CK_CUDA_C_32F, CK_CUDA_C_64F};
    int ta = data_type[type], tw = type == 0 || type == 2 ? CK_CUDA_C_32F : CK_CUDA_C_64F;
    int jobvr = vr ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    int wsize = type == 0 || type == 2 ? 8 : 16;
    size_t dev_bytes = 0, host_bytes = 0;
    if (!params_[c.d])
        CK_SOLVER_TRY(ck_cusolver.cusolverDnCreateParams(&params_[c.d]), "cusolverDnCreateParams");
    CK_SOLVER_TRY(ck_cusolver.cusolverDnXgeev_bufferSize(c.h, params_[c.d], CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, a, n,
                                                         tw, w, ta, NULL, 1, ta, vr, n, ta, &dev_bytes, &host_bytes),
                  "cusolverDnXgeev_bufferSize");
    c.work_bytes = dev_bytes ? dev_bytes : 1;
    if (!(c.work = ck_cuda_alloc(dev, c.work_bytes))) { s = ck_error_status(); goto done; }
    if (host_bytes && !(c.host_work = malloc(host_bytes))) {
        s = ck_error_set(CK_ERR_MEMORY, "out of host memory for cusolverDnXgeev's workspace (%zu bytes)", host_bytes);
        goto done;
    }
    for (int64_t b = 0; b < batch; b++) {
        void *vb = vr ? item(vr, b, (int64_t)n * n, type) : NULL;
        CK_SOLVER_TRY(ck_cusolver.cusolverDnXgeev(c.h, params_[c.d], CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta,
                                                  item(a, b, (int64_t)n * n, type), n, tw, (char *)w + b * n * wsize,
                                                  ta, NULL, 1, ta, vb, n, ta, c.work, dev_bytes, c.host_work,
                                                  host_bytes, c.dinfo + b),
                      "cusolverDnXgeev");
    }
done:
    return call_end(&c, s, info_host);
}

/* The solver slot: one descriptor, the routine it names. */
ck_status ck_cuda_solver(const ck_solver_desc *d)
{
    int t;
    switch (d->type) {
    case CK_FLOAT32: t = 0; break;
    case CK_FLOAT64: t = 1; break;
    case CK_COMPLEX64: t = 2; break;
    case CK_COMPLEX128: t = 3; break;
    default:
        return ck_error_set(CK_ERR_TYPE, "cuSOLVER has no routines for %s", ck_dtype_get_info(d->type)->name);
    }
    switch (d->op) {
    case CK_SOLVER_GETRF: return solver_getrf(d->dev, t, d->batch, d->n, d->a, d->ipiv, d->info_host);
    case CK_SOLVER_GETRS:
        return solver_getrs(d->dev, t, d->batch, d->n, d->nrhs, d->trans, d->a, d->ipiv, d->b, d->info_host);
    case CK_SOLVER_POTRF: return solver_potrf(d->dev, t, d->batch, d->n, d->upper, d->a, d->info_host);
    case CK_SOLVER_GEQRF: return solver_geqrf(d->dev, t, d->batch, d->m, d->n, d->a, d->tau, d->info_host);
    case CK_SOLVER_ORGQR: return solver_orgqr(d->dev, t, d->batch, d->m, d->n, d->k, d->a, d->tau, d->info_host);
    case CK_SOLVER_GESVD:
        return solver_gesvd(d->dev, t, d->batch, d->m, d->n, d->job, d->a, d->s, d->u, d->vt, d->info_host);
    case CK_SOLVER_SYEVD:
        return solver_syevd(d->dev, t, d->batch, d->n, d->vectors, d->upper, d->a, d->w, d->info_host);
    case CK_SOLVER_GEEV: return solver_geev(d->dev, t, d->batch, d->n, d->a, d->w, d->vr, d->info_host);
    }
    return ck_error_set(CK_ERR_VALUE, "unknown solver routine %d", (int)d->op);
}
