/*
 * cuda_fft.c - transforms through cuFFT: plans made once per (device,
 * type, rank, sizes, batch, layout) and kept in a small LRU, with
 * cuFFT's automatic work area off: each execution takes its work area from
 * our stream-ordered pool, on the current stream.
 */
#include "cuda_internal.h"
#include "../../platform/cufft_api.h"

#include <string.h>

#define CK_FFT_PLANS 16

typedef struct ck_fft_key {
    int dev, type, rank;
    int64_t n[3];
    int64_t batch, idist, odist;
} ck_fft_key;

typedef struct ck_fft_plan {
    int used;
    ck_fft_key key;
    cufftHandle h;
    size_t work;
    uint64_t last_use;
} ck_fft_plan;

static ck_fft_plan plans_[CK_FFT_PLANS];
static uint64_t tick_;
/* guards the cache and each plan's set-stream/set-work-area/exec sequence */
static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;

static int cufft_type(const ck_fft_desc *d)
{
    switch (d->kind) {
    case CK_FFT_R2C: return d->dbl ? CUFFT_D2Z : CUFFT_R2C;
    case CK_FFT_C2R: return d->dbl ? CUFFT_Z2D : CUFFT_C2R;
    default: return d->dbl ? CUFFT_Z2Z : CUFFT_C2C;
    }
}

static void plan_drop(ck_fft_plan *p)
{
    if (!p->used) return;
    /* needs the plan's device current: its twiddles live there */
    if (ck_cuda_use(p->key.dev) == CK_OK) ck_cufft.cufftDestroy(p->h);
    p->used = 0;
}

void ck_cuda_fft_clear_plans(void)
{
    pthread_mutex_lock(&mu_);
    int cur = ck_cuda_current_device();
    for (int i = 0; i < CK_FFT_PLANS; i++) plan_drop(&plans_[i]);
    ck_cuda_use(cur);
    pthread_mutex_unlock(&mu_);
}

/* The plan for key, made on a miss (evicting the least recently used);
 * called with mu_ held and the key's device current. */
static ck_status plan_get(const ck_fft_key *key, ck_fft_plan **out)
{
    ck_fft_plan *victim = &plans_[0];
    for (int i = 0; i < CK_FFT_PLANS; i++) {
        ck_fft_plan *p = &plans_[i];
        if (p->used && !memcmp(&p->key, key, sizeof *key)) {
            p->last_use = ++tick_;
            *out = p;
            return CK_OK;
        }
        if (!p->used || (victim->used && p->last_use < victim->last_use)) victim = p;
    }
    if (victim->used) {
        plan_drop(victim);
        ck_status s = ck_cuda_use(key->dev);
        if (s != CK_OK) return s;
    }
    long long n[3], in_embed[3], out_embed[3];
    for (int i = 0; i < key->rank; i++) n[i] = in_embed[i] = out_embed[i] = key->n[i];
    int last = key->rank - 1;
    if (key->type == CUFFT_R2C || key->type == CUFFT_D2Z) out_embed[last] = key->n[last] / 2 + 1;
    if (key->type == CUFFT_C2R || key->type == CUFFT_Z2D) in_embed[last] = key->n[last] / 2 + 1;
    cufftHandle h;
    CK_CHECK_CUFFT(ck_cufft.cufftCreate(&h));
    size_t work = 0;
    cufftResult r = ck_cufft.cufftSetAutoAllocation(h, 0);
    if (r == CUFFT_SUCCESS)
        r = ck_cufft.cufftMakePlanMany64(h, key->rank, n, in_embed, 1, key->idist, out_embed, 1, key->odist,
                                         key->type, key->batch, &work);
    if (r != CUFFT_SUCCESS) {
        ck_status s = ck_cufft_fail(r, "cufftMakePlanMany64", __func__, __FILE__, __LINE__);
        ck_cufft.cufftDestroy(h);
        return s;
    }
    victim->used = 1;
    victim->key = *key;
    victim->h = h;
    victim->work = work;
    victim->last_use = ++tick_;
    *out = victim;
    return CK_OK;
}

static ck_status exec(ck_fft_plan *p, const ck_fft_desc *d, void *in)
{
    int dir = d->forward ? CUFFT_FORWARD : CUFFT_INVERSE;
    switch (p->key.type) {
    case CUFFT_C2C: CK_CHECK_CUFFT(ck_cufft.cufftExecC2C(p->h, in, d->out, dir)); break;
    case CUFFT_Z2Z: CK_CHECK_CUFFT(ck_cufft.cufftExecZ2Z(p->h, in, d->out, dir)); break;
    case CUFFT_R2C: CK_CHECK_CUFFT(ck_cufft.cufftExecR2C(p->h, in, d->out)); break;
    case CUFFT_D2Z: CK_CHECK_CUFFT(ck_cufft.cufftExecD2Z(p->h, in, d->out)); break;
    case CUFFT_C2R: CK_CHECK_CUFFT(ck_cufft.cufftExecC2R(p->h, in, d->out)); break;
    case CUFFT_Z2D: CK_CHECK_CUFFT(ck_cufft.cufftExecZ2D(p->h, in, d->out)); break;
    }
    return CK_OK;
}

ck_status ck_cuda_fft(const ck_fft_desc *d)
{
    if (d->rank < 1 || d->rank > 3) return ck_error_set(CK_ERR_VALUE, "cuFFT transforms have rank 1 to 3, not %d", d->rank);
    if (d->batch <= 0) return CK_OK;
    int64_t real_items = 1, cplx_items = 1;
    for (int i = 0; i < d->rank; i++) {
        if (d->n[i] < 1) return ck_error_set(CK_ERR_VALUE, "invalid number of FFT data points (%lld)", (long long)d->n[i]);
        real_items *= d->n[i];
        cplx_items *= i == d->rank - 1 && d->kind != CK_FFT_C2C ? d->n[i] / 2 + 1 : d->n[i];
    }
    ck_status s = ck_cufft_load();
    if (s != CK_OK) return s;
    int dev = d->dev.index;
    if ((s = ck_cuda_use(dev)) != CK_OK) return s;
    CUstream stream = ck_cuda_current_stream(dev);
    ck_fft_key key;
    memset(&key, 0, sizeof key);  /* compared with memcmp: padding too */
    key.dev = dev;
    key.type = cufft_type(d);
    key.rank = d->rank;
    for (int i = 0; i < d->rank; i++) key.n[i] = d->n[i];
    key.batch = d->batch;
    key.idist = d->kind == CK_FFT_R2C ? real_items : cplx_items;
    key.odist = d->kind == CK_FFT_C2R ? real_items : cplx_items;

    /* C2R overwrites its input: run it on a copy */
    void *in = (void *)d->in, *scratch = NULL;
    size_t scratch_bytes = 0;
    if (d->kind == CK_FFT_C2R && !d->in_disposable) {
        scratch_bytes = (size_t)(cplx_items * d->batch) * (d->dbl ? 16 : 8);
        scratch = ck_cuda_alloc(d->dev, scratch_bytes);
        if (!scratch) return ck_error_status();
        CUresult r = ck_cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)scratch, (CUdeviceptr)(uintptr_t)d->in,
                                                scratch_bytes, stream);
        if (r != CUDA_SUCCESS) {
            ck_cuda_free(d->dev, scratch, scratch_bytes);
            return ck_cu_fail(r, "cuMemcpyDtoDAsync_v2", __func__, __FILE__, __LINE__);
        }
        in = scratch;
    }

    pthread_mutex_lock(&mu_);
    ck_fft_plan *p = NULL;
    void *work = NULL;
    size_t work_bytes = 0;
    s = plan_get(&key, &p);
    if (s == CK_OK && p->work) {
        work_bytes = p->work;
        work = ck_cuda_alloc(d->dev, work_bytes);
        if (!work) s = ck_error_status();
    }
    if (s == CK_OK) {
        cufftResult r = ck_cufft.cufftSetStream(p->h, stream);
        if (r == CUFFT_SUCCESS) r = ck_cufft.cufftSetWorkArea(p->h, work);
        if (r != CUFFT_SUCCESS) s = ck_cufft_fail(r, "cufftSetStream/cufftSetWorkArea", __func__, __FILE__, __LINE__);
    }
    if (s == CK_OK) s = exec(p, d, in);
    pthread_mutex_unlock(&mu_);
    /* stream-ordered: reused only after the transform that used them */
    if (work) ck_cuda_free(d->dev, work, work_bytes);
    if (scratch) ck_cuda_free(d->dev, scratch, scratch_bytes);
    return s;
}
