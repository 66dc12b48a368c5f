/*
 * The training ops on the GPU (key family 0x48, cuda_train_codegen.h):
 * rows by a warp each when their elements are contiguous, by a thread each
 * otherwise; cross-entropy's mean/sum by a second one-block launch (no
 * wait for the host), or, for a few short rows, by the one block that
 * takes them all (a thread a row when they are shorter than a warp);
 * optimizer steps over up to 32 tensors a launch, the
 * table of pointers and sizes passed by value as the kernel's first
 * parameter (nothing to copy, so a CUDA graph captures it as it is; the
 * step may be read from device memory, so that each replay has its own); the
 * matmul epilogue as one element-wise pass after the product; scatter-add
 * by atomics (float16's by a compare-and-swap of the word holding it),
 * after a check of the indices that lowers an error word to the first bad
 * position (atomicMin, as cuda_index.c's checks): the adds do nothing when
 * it is set, and the word is read back once (the op's one wait), so a bad
 * index raises the CPU's IndexError with the target untouched.  In a graph
 * capture the word cannot be read: a replay that meets a bad index leaves
 * the target as it was, without an error.
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_train_codegen.h"
#include "cudakit_graph.h"

#include <math.h>
#include <string.h>

/* The most rows (and elements) a cross-entropy's one-block launch takes. */
#define XENT_FOLD_ROWS 512
#define XENT_FOLD_ELEMS 65536
#define XENT_FOLD_BLOCK 512   /* ck_rows' launch bound (cuda_train_codegen.c) */
#define XENT_FOLD_THREAD_LEN 32

static char *train_source(const void *spec) { return ck_cuda_train_source(spec); }

static ck_status train_kernels(int dev, const ck_cuda_train_spec *sp, CUfunction *fns)
{
    const char *names[2];
    int n = ck_cuda_train_names(sp, names);
    return ck_cuda_get_kernels(dev, ck_cuda_train_key(sp), train_source, sp, names, n, fns);
}

ck_status ck_cuda_rows(const ck_rows_desc *d)
{
    int64_t rows = d->outer * d->inner;
    if (rows <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    /* a few short rows of a mean or sum (a training batch's loss): one
     * block takes them all and writes the total too, one launch not two;
     * rows of up to XENT_FOLD_THREAD_LEN elements a thread each, so that
     * they are all taken at once (a warp a row would take a batch of 64
     * rows 4 at a time, one after the other) */
    const int fold = d->op == CK_ROW_XENT && d->scratch && rows <= XENT_FOLD_ROWS && rows * d->len <= XENT_FOLD_ELEMS;
    const int by_thread = fold && d->len <= XENT_FOLD_THREAD_LEN;
    ck_cuda_train_spec sp = {.kind = CK_TRK_ROWS, .op = d->op, .t = d->type, .warp = d->inner == 1 && !by_thread};
    CUfunction f[2];
    if ((s = train_kernels(dev, &sp, f)) != CK_OK) return s;
    long long outer = d->outer, len = d->len, inner = d->inner, ignore = d->ignore_index;
    const char *x = d->x, *g = d->g, *prob = d->prob;
    const int64_t *target = d->target;
    char *out = d->out, *lse = d->lse, *total = d->total, *scratch = d->scratch;
    int red = (int)d->reduction;
    float eps32 = (float)d->smoothing;
    double eps64 = d->smoothing;
    void *eps = d->acc == CK_FLOAT64 ? (void *)&eps64 : (void *)&eps32;
    int fold_arg = fold;
    void *args[] = {&outer, &len, &inner, &x, &g, &out, &target, &prob, &lse, &total, &scratch, &ignore, eps, &red,
                    &fold_arg};
    unsigned block = by_thread ? (unsigned)(rows + 31) / 32 * 32 : fold ? XENT_FOLD_BLOCK : 256;
    unsigned grid = fold ? 1 : ck_cuda_grid_for(dev, sp.warp ? rows * 32 : rows, block);
    if ((s = ck_cuda_launch_pdl(dev, f[0], grid, block, 0, args)) != CK_OK) return s;
    if (d->op == CK_ROW_XENT && d->scratch && !fold) {
        long long nrows = rows;
        void *targs[] = {&nrows, &scratch, &out, &total, &red};
        s = ck_cuda_launch_pdl(dev, f[1], 1, 1024, 0, targs);
    }
    return s;
}

ck_status ck_cuda_optim_step(const ck_optim_desc *d)
{
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    const ck_optim_hparams *h = &d->h;
    ck_cuda_train_spec sp = {.kind = CK_TRK_OPTIM, .op = (int)h->kind, .t = d->type};
    CUfunction f;
    if ((s = train_kernels(dev, &sp, &f)) != CK_OK) return s;
    double bc1 = 1, bc2s = 1;
    if (h->kind == CK_OPTIM_ADAM) {
        bc1 = 1 - pow(h->beta1, (double)h->step);
        bc2s = sqrt(1 - pow(h->beta2, (double)h->step));
    }
    double v64[9] = {h->lr, h->weight_decay, h->beta1, h->beta2, h->eps, h->lr / bc1, bc2s, h->momentum, h->dampening};
    float v32[9];
    for (int i = 0; i < 9; i++) v32[i] = (float)v64[i];
    int dbl = d->type == CK_FLOAT64;
    int flags = (h->maximize ? 1 : 0) | (h->decoupled ? 2 : 0) | (h->nesterov ? 4 : 0) | (h->first ? 8 : 0) |
                (d->step_f32 ? 16 : 0) | (d->step_inc ? 32 : 0);
    ck_cuda_optim_table tab;
    for (int t0 = 0; t0 < d->ntensors; t0 += CK_OPTIM_TENSORS) {
        memset(&tab, 0, sizeof tab);
        int m = d->ntensors - t0 < CK_OPTIM_TENSORS ? d->ntensors - t0 : CK_OPTIM_TENSORS;
        for (int k = 0; k < m; k++) {
            const ck_optim_tensor *t = &d->t[t0 + k];
            tab.p[k] = t->p;
            tab.g[k] = t->g;
            tab.s1[k] = t->s1;
            tab.s2[k] = t->s2;
            tab.n[k] = t->n;
            tab.block0[k + 1] = tab.block0[k] + (t->n + CK_OPTIM_CHUNK - 1) / CK_OPTIM_CHUNK;
        }
        tab.count = m;
        if (tab.block0[m] > 0x7FFFFFFF)
            return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "an optimizer step over more than 2**43 elements at once");
        const void *stepp = d->step_ptr;
        double lb1 = log(h->beta1), lb2 = log(h->beta2);   /* a step counted on the device: 1 - beta^t there */
        /* the count is raised by the last launch of the step, after every
         * launch has read it (stream order) */
        int fl = flags | (d->step_write && t0 + CK_OPTIM_TENSORS >= d->ntensors ? 64 : 0);
        unsigned *ticket = d->ticket;
        void *args[15];
        args[0] = &tab;
        for (int i = 0; i < 9; i++) args[1 + i] = dbl ? (void *)&v64[i] : (void *)&v32[i];
        args[10] = &fl;
        args[11] = &stepp;
        args[12] = &lb1;
        args[13] = &lb2;
        args[14] = &ticket;
        if ((s = ck_cuda_launch_pdl(dev, f, (unsigned)tab.block0[m], CK_OPTIM_BLOCK, 0, args)) != CK_OK) return s;
    }
    return CK_OK;
}

ck_status ck_cuda_bias_act(const ck_bias_act_desc *d)
{
    int64_t total = d->rows * d->n;
    if (total <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    ck_cuda_train_spec sp = {.kind = CK_TRK_BIAS_ACT, .op = (int)d->act, .t = d->type, .warp = d->backward};
    CUfunction f;
    if ((s = train_kernels(dev, &sp, &f)) != CK_OK) return s;
    long long rows = d->rows, n = d->n;
    char *y = d->y, *pre = d->pre, *out = d->out;
    const char *bias = d->bias, *g = d->g, *saved = d->saved;
    void *args[] = {&rows, &n, &y, &bias, &pre, &g, &saved, &out};
    return ck_cuda_launch_pdl(dev, f, ck_cuda_grid_for(dev, total, 256), 256, 0, args);
}

/* The check's word: on a bad index, the CPU's message for it. */
static ck_status scatter_add_report(const ck_scatter_add_desc *d, const unsigned long long *err)
{
    ck_status s = ck_sync_span_begin(d->dev, "the bounds check of scatter_add's indices");
    unsigned long long e = ~0ull;
    long long v = 0;
    if (s == CK_OK) s = ck_cuda_copy_to_host(d->dev, &e, err, sizeof e);
    if (s == CK_OK && e != ~0ull && e < (unsigned long long)d->m)
        s = ck_cuda_copy_to_host(d->dev, &v, d->idx + e, sizeof v);
    ck_sync_span_end();
    if (s != CK_OK || e == ~0ull) return s;
    return ck_error_set(CK_ERR_INDEX, "index %lld is out of bounds for size %lld", v, (long long)d->n);
}

ck_status ck_cuda_scatter_add(const ck_scatter_add_desc *d)
{
    if (d->m <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    ck_cuda_train_spec sp = {.kind = CK_TRK_SCATTER_ADD, .t = d->type};
    CUfunction f[2];
    if ((s = train_kernels(dev, &sp, f)) != CK_OK) return s;
    unsigned long long *err = ck_cuda_alloc(d->dev, sizeof *err);
    if (!err) return ck_error_status();
    long long n = d->n, m = d->m;
    char *target = d->target;
    const int64_t *idx = d->idx;
    const char *src = d->src;
    unsigned grid = ck_cuda_grid_for(dev, m, 256);
    CUresult r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)err, 0xFFFFFFFFu, 2, ck_cuda_current_stream(dev));
    if (r != CUDA_SUCCESS) s = ck_cu_fail(r, "cuMemsetD32Async", __func__, __FILE__, __LINE__);
    void *check_args[] = {&n, &m, &idx, &err};
    if (s == CK_OK) s = ck_cuda_launch_pdl(dev, f[1], grid, 256, 0, check_args);
    void *args[] = {&n, &m, &target, &idx, &src, &err};
    if (s == CK_OK) s = ck_cuda_launch_pdl(dev, f[0], grid, 256, 0, args);
    if (s == CK_OK && !ck_graph_capturing(d->dev)) s = scatter_add_report(d, err);
    ck_cuda_free(d->dev, err, sizeof *err);
    return s;
}
