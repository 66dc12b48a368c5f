/* The table of compiled kernels, and element-wise, cast, fill and iota on
 * the GPU: a merged iteration becomes a kernel spec, the spec a compiled
 * kernel (cached by its 64-bit key), and one launch on the current stream. */
#include "cuda_internal.h"
#include "../../runtime/kcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- kernel table */

static size_t slot_of(uint64_t key, size_t cap) { return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1); }

static ck_status table_insert(ck_cuda_device *cd, uint64_t key, CUfunction fn)
{
    ck_ktable *t = cd->kernels;
    if (!t || (cd->kcount + 1) * 2 > t->cap) {
        size_t ncap = t ? t->cap * 2 : 256;
        ck_ktable *n = calloc(1, sizeof *n + ncap * sizeof(ck_kernel_slot));
        if (!n) return ck_error_set(CK_ERR_MEMORY, "out of memory growing the kernel table");
        n->cap = ncap;
        for (size_t i = 0; t && i < t->cap; i++) {
            if (!t->slots[i].key) continue;
            size_t j = slot_of(t->slots[i].key, ncap);
            while (n->slots[j].key) j = (j + 1) & (ncap - 1);
            n->slots[j] = t->slots[i];
        }
        __atomic_store_n(&cd->kernels, n, __ATOMIC_RELEASE);   /* the old table stays valid for readers */
        t = n;
    }
    size_t j = slot_of(key, t->cap);
    while (t->slots[j].key && t->slots[j].key != key) j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].key) cd->kcount++;
    t->slots[j].fn = fn;
    __atomic_store_n(&t->slots[j].key, key, __ATOMIC_RELEASE);
    return CK_OK;
}

static CUfunction table_find(ck_cuda_device *cd, uint64_t key)
{
    ck_ktable *t = __atomic_load_n(&cd->kernels, __ATOMIC_ACQUIRE);
    if (!t) return NULL;
    size_t j = slot_of(key, t->cap);
    for (;;) {
        uint64_t k = __atomic_load_n(&t->slots[j].key, __ATOMIC_ACQUIRE);
        if (k == key) return t->slots[j].fn;
        if (!k) return NULL;
        j = (j + 1) & (t->cap - 1);
    }
}

static int table_find_all(ck_cuda_device *cd, uint64_t key, int n, CUfunction *fns)
{
    for (int i = 0; i < n; i++)
        if (!(fns[i] = table_find(cd, key + (uint64_t)i))) return 0;
    return 1;
}

ck_status ck_cuda_get_kernels_opt(int d, uint64_t key, char *(*make_source)(const void *spec), const void *spec,
                                  const char *const *names, int n, CUfunction *fns, const char *const *options,
                                  int noptions)
{
    ck_cuda_device *cd = &ck_cuda_devices[d];
    if (table_find_all(cd, key, n, fns)) return CK_OK;
    pthread_mutex_lock(&cd->kmu);
    ck_status s = CK_OK;
    /* another thread may have compiled the module while this one waited */
    if (table_find_all(cd, key, n, fns)) goto out;
    char *src = make_source(spec);
    if (!src) { s = ck_error_status(); goto out; }
    ck_kernel_image img;
    s = ck_kernel_compile(src, names[0], options, noptions, cd->cc_major * 10 + cd->cc_minor, &img);
    free(src);
    if (s != CK_OK) goto out;
    CUmodule mod;
    CUresult r = ck_cu.cuModuleLoadData(&mod, img.data);
    ck_kernel_image_free(&img);
    if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuModuleLoadData", __func__, __FILE__, __LINE__); goto out; }
    if (cd->nmodules == cd->cmodules) {
        size_t nc = cd->cmodules ? cd->cmodules * 2 : 64;
        CUmodule *m = realloc(cd->modules, nc * sizeof *m);
        if (m) { cd->modules = m; cd->cmodules = nc; }
    }
    if (cd->nmodules < cd->cmodules) cd->modules[cd->nmodules++] = mod;
    for (int i = 0; i < n && s == CK_OK; i++) {
        r = ck_cu.cuModuleGetFunction(&fns[i], mod, names[i]);
        if (r != CUDA_SUCCESS) s = ck_cu_fail(r, "cuModuleGetFunction", __func__, __FILE__, __LINE__);
        else s = table_insert(cd, key + (uint64_t)i, fns[i]);
    }
out:
    pthread_mutex_unlock(&cd->kmu);
    return s;
}

/* ----------------------------------------------------- element-wise */

static char *ew_source(const void *spec) { return ck_cuda_ew_source((const ck_cuda_ew_spec *)spec); }

/* Fill the operand kinds, dims, index width and vector width of sp from it. */
static ck_status spec_from_iter(ck_cuda_ew_spec *sp, const ck_iter *it, unsigned scalar_mask, ck_cuda_nd *nd)
{
    if (it->ndim > CK_CUDA_EW_MAXDIM)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "GPU element-wise kernels support up to %d non-mergeable "
                            "dimensions (this view has %d)", CK_CUDA_EW_MAXDIM, it->ndim);
    memset(nd, 0, sizeof *nd);
    sp->ndim = it->ndim;
    int all_contig = 1, maxsz = 1;
    for (int k = 0; k < sp->nops; k++) {
        int isz = ck_dtype_get_info(sp->types[k])->itemsize;
        if (scalar_mask & (1u << k)) {
            sp->kinds[k] = CK_OPND_SCALAR;
            continue;
        }
        if (isz > maxsz) maxsz = isz;
        if (it->ndim == 1 && it->strides[k][0] == isz) {
            sp->kinds[k] = CK_OPND_CONTIG;
        } else {
            sp->kinds[k] = CK_OPND_STRIDED;
            all_contig = 0;
        }
        for (int dd = 0; dd < it->ndim; dd++) nd->strides[k][dd] = it->strides[k][dd];
    }
    for (int dd = 0; dd < it->ndim; dd++) nd->shape[dd] = it->shape[dd];
    sp->idx64 = it->size > ((int64_t)1 << 31) - ((int64_t)1 << 26);
    sp->vec = 1;
    if (all_contig && it->size >= 1024 && maxsz <= 8) {
        int v = 16 / maxsz;
        for (int k = 0; k < sp->nops && v > 1; k++) {
            if (sp->kinds[k] == CK_OPND_SCALAR) continue;
            int isz = ck_dtype_get_info(sp->types[k])->itemsize;
            while (v > 1 && ((uintptr_t)it->data[k] % (uintptr_t)(v * isz)) != 0) v /= 2;
        }
        sp->vec = v;
    }
    return CK_OK;
}

/* Launch the kernel of spec over n elements: args are n, nd (when some
 * operand is strided), then the operands (pointers for arrays, the host
 * values for scalars). */
static ck_status launch_ew(int d, const ck_cuda_ew_spec *sp, unsigned grid, int64_t n, const ck_cuda_nd *nd,
                           void *const *ptrs, void *const *scalar_vals)
{
    CUfunction f;
    ck_status s = ck_cuda_get_kernel(d, ck_cuda_ew_key(sp), ew_source, sp, "ck_ew", &f);
    if (s != CK_OK) return s;
    long long n64 = n;
    int n32 = (int)n;
    void *args[2 + 4];
    void *p[4];
    int na = 0, strided = 0;
    for (int k = 0; k < sp->nops; k++) strided |= sp->kinds[k] == CK_OPND_STRIDED;
    args[na++] = sp->idx64 ? (void *)&n64 : (void *)&n32;
    if (strided) args[na++] = (void *)nd;
    for (int k = 0; k < sp->nops; k++) {
        if (sp->kinds[k] == CK_OPND_SCALAR) {
            args[na++] = scalar_vals[k];
        } else {
            p[k] = ptrs[k];
            args[na++] = &p[k];
        }
    }
    return ck_cuda_launch_pdl(d, f, grid, 256, 0, args);
}

static int fuse_take(int d, const ck_cuda_ew_spec *sp, int64_t n, void *const *ptrs, void *const *scalar_vals);

static ck_status run(int d, const ck_cuda_ew_spec *spec, const ck_iter *it, const ck_cuda_nd *nd, void *const *scalar_vals)
{
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    ck_cuda_ew_spec fs = *spec;
    unsigned grid;
    if (fs.vec > 1) {   /* one tile of 4 vectors per thread, no grid-stride trips */
        int64_t tiles = (it->size / fs.vec + 1023) / 1024;
        grid = (unsigned)(tiles < 1 ? 1 : tiles > 0x7FFFFFFF ? 0x7FFFFFFF : tiles);
    } else {
        /* a grid of a thread an element (up to the usual cap) runs the flat kernel */
        grid = ck_cuda_grid_for(d, it->size, 256);
        fs.flat = ck_cuda_dev(d)->ew_flat && (int64_t)grid * 256 >= it->size;
    }
    void *const *ptrs = (void *const *)it->data;
    if (fs.flat && fuse_take(d, &fs, it->size, ptrs, scalar_vals)) return CK_OK;
    return launch_ew(d, &fs, grid, it->size, nd, ptrs, scalar_vals);
}

static int device_of(const ck_ew_desc *d) { return d->dev.index; }

ck_status ck_cuda_elementwise(const ck_ew_desc *d)
{
    if (d->it.size == 0) return CK_OK;
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = d->op;
    /* the CPU loop's test: both bounds of step 0 along the innermost dimension */
    if (d->op == CK_OP_CLIP && d->it.strides[2][0] == 0 && d->it.strides[3][0] == 0) sp.op = CK_KOP_CLIP_CONST;
    sp.nops = d->it.nops;
    for (int k = 0; k < sp.nops; k++) sp.types[k] = d->types[k];
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &d->it, d->scalar_mask, &nd);
    if (s != CK_OK) return s;
    void *vals[4];
    for (int k = 0; k < sp.nops; k++) vals[k] = d->it.data[k];
    return run(device_of(d), &sp, &d->it, &nd, vals);
}

ck_status ck_cuda_cast(const ck_ew_desc *d)
{
    if (d->it.size == 0) return CK_OK;
    int dev = device_of(d);
    int isz = ck_dtype_get_info(d->types[0])->itemsize;
    if (d->types[0] == d->types[1] && d->it.ndim == 1 && d->it.strides[0][0] == isz && d->it.strides[1][0] == isz) {
        ck_status s = ck_cuda_use(dev);
        if (s != CK_OK) return s;
        CK_CHECK_CU(ck_cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)d->it.data[0], (CUdeviceptr)(uintptr_t)d->it.data[1],
                                               (size_t)(d->it.size * isz), ck_cuda_current_stream(dev)));
        return CK_OK;
    }
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_CAST;
    sp.nops = 2;
    sp.types[0] = d->types[0];
    sp.types[1] = d->types[1];
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &d->it, 0, &nd);
    if (s != CK_OK) return s;
    return run(dev, &sp, &d->it, &nd, NULL);
}

ck_status ck_cuda_fill(const ck_ew_desc *d, const void *value)
{
    if (d->it.size == 0) return CK_OK;
    int dev = device_of(d);
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_FILL;
    sp.nops = 2;
    sp.types[0] = sp.types[1] = d->types[0];
    /* the value rides as operand 1, a scalar */
    ck_iter it = d->it;
    it.nops = 2;
    for (int dd = 0; dd < it.ndim; dd++) it.strides[1][dd] = 0;
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &it, 1u << 1, &nd);
    if (s != CK_OK) return s;
    void *vals[2] = {NULL, (void *)value};
    return run(dev, &sp, &it, &nd, vals);
}

ck_status ck_cuda_iota(ck_array *out, double start, double step)
{
    if (out->size == 0) return CK_OK;
    int dev = ck_array_device(out).index;
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_IOTA;
    sp.nops = 3;
    sp.types[0] = out->dtype;
    sp.types[1] = sp.types[2] = CK_FLOAT64;
    ck_iter_operand o = ck_iter_op_of(out);
    ck_iter it;
    ck_iter_prepare(&it, 1, out->ndim, out->shape, &o);
    it.nops = 3;
    for (int dd = 0; dd < it.ndim; dd++) it.strides[1][dd] = it.strides[2][dd] = 0;
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &it, (1u << 1) | (1u << 2), &nd);
    if (s != CK_OK) return s;
    void *vals[3] = {NULL, &start, &step};
    return run(dev, &sp, &it, &nd, vals);
}

/* ------------------------------------------- chains fused in a capture */

/* While this thread captures a graph on a device's stream, each flat
 * element-wise kernel (contiguous or scalar operands, one thread an
 * element) queued on that stream is held in a chain instead of launched;
 * the next one over the same number of elements joins it.  Anything else
 * that queues work, on any stream (ck_cuda_current_stream, the launches,
 * copies, events, waits: cuda_internal.h), and the end of the capture,
 * first launch the chain as one kernel (ck_cuda_ew_chain_source): a
 * replayed graph of small element-wise ops is one node for the chain
 * instead of one a kernel.  Every thread runs its element through the
 * steps in order, so the chain is the steps' own order exactly when each
 * array it touches is addressed element for element by every step that
 * touches it: a step whose arrays overlap an earlier step's at another
 * address or element size (a shifted view) starts a new chain.
 * CUDAKIT_GRAPH_FUSE=0 turns it off; while the profiler observes launches
 * each kernel is launched on its own. */

typedef struct chain_step {
    void *ptr[4];                            /* the arrays' addresses (operand 0 is written) */
    _Alignas(16) unsigned char val[4][16];   /* the scalars' bytes */
} chain_step;

typedef struct pending_chain {
    int d;
    int n;
    ck_cuda_ew_chain c;
    chain_step st[CK_CUDA_EW_CHAIN_MAX];
} pending_chain;

_Thread_local int ck_cuda_fuse_pending;
static _Thread_local pending_chain chain_;
/* the stream this thread captures on, a device; NULL: none (a capture is
 * never on the legacy default stream, cuda_graph.c refuses it) */
static _Thread_local CUstream capture_[CK_CUDA_MAX_DEVICES];
static _Thread_local ck_status failed_;
static _Thread_local char failed_msg_[512];

/* Every chain made so far, by the kernel keys of its steps: a chain's
 * kernel key carries its index here, so two chains never share a kernel. */
typedef struct chain_desc { int n; uint64_t keys[CK_CUDA_EW_CHAIN_MAX]; } chain_desc;
static pthread_mutex_t descs_mu_ = PTHREAD_MUTEX_INITIALIZER;
static chain_desc *descs_;
static size_t ndescs_, cdescs_;

static uint64_t chain_id(const ck_cuda_ew_chain *c)
{
    chain_desc want;
    memset(&want, 0, sizeof want);
    want.n = c->nsteps;
    for (int s = 0; s < c->nsteps; s++) want.keys[s] = ck_cuda_ew_key(&c->steps[s]);
    uint64_t id = 0;
    pthread_mutex_lock(&descs_mu_);
    for (size_t i = 0; i < ndescs_ && !id; i++)
        if (!memcmp(&descs_[i], &want, sizeof want)) id = i + 1;
    if (!id) {
        if (ndescs_ == cdescs_) {
            size_t nc = cdescs_ ? 2 * cdescs_ : 64;
            chain_desc *v = realloc(descs_, nc * sizeof *v);
            if (v) { descs_ = v; cdescs_ = nc; }
        }
        if (ndescs_ < cdescs_) {
            descs_[ndescs_++] = want;
            id = ndescs_;
        }
    }
    pthread_mutex_unlock(&descs_mu_);
    return id;   /* 0: out of memory (the steps then run on their own) */
}

static char *chain_source(const void *spec) { return ck_cuda_ew_chain_source((const ck_cuda_ew_chain *)spec); }

static ck_status launch_chain(pending_chain *pc)
{
    int d = pc->d;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    unsigned grid = ck_cuda_grid_for(d, pc->n, 256);
    CUfunction f;
    uint64_t id = pc->c.nsteps > 1 ? chain_id(&pc->c) : 0;
    if (id && (s = ck_cuda_get_kernel(d, ck_cuda_ew_chain_key(id), chain_source, &pc->c, "ck_ewc",
                                      &f)) == CK_OK) {
        void *args[1 + 4 * CK_CUDA_EW_CHAIN_MAX];
        int na = 0;
        args[na++] = &pc->n;
        for (int t = 0; t < pc->c.nsteps; t++) {
            const ck_cuda_ew_spec *sp = &pc->c.steps[t];
            for (int k = 0; k < sp->nops; k++)
                args[na++] = sp->kinds[k] == CK_OPND_SCALAR ? (void *)pc->st[t].val[k] : (void *)&pc->st[t].ptr[k];
        }
        return ck_cuda_launch_pdl(d, f, grid, 256, 0, args);
    }
    if (id) return s;   /* the fused kernel did not compile: a bug of the generator, not hidden */
    for (int t = 0; t < pc->c.nsteps && s == CK_OK; t++) {
        void *vals[4];
        for (int k = 0; k < 4; k++) vals[k] = pc->st[t].val[k];
        s = launch_ew(d, &pc->c.steps[t], grid, pc->n, NULL, pc->st[t].ptr, vals);
    }
    return s;
}

static ck_status flush(void)
{
    if (!ck_cuda_fuse_pending) return CK_OK;
    pending_chain pc = chain_;   /* emptied first: the launch below flushes too */
    chain_.c.nsteps = 0;
    ck_cuda_fuse_pending = 0;
    ck_status s = launch_chain(&pc);
    if (s != CK_OK && failed_ == CK_OK) {
        failed_ = s;
        snprintf(failed_msg_, sizeof failed_msg_, "%s", ck_error_message());
    }
    return s;
}

void ck_cuda_fuse_flush(void)
{
    int was = ck_cuda_context_device();
    int d = chain_.d;
    flush();
    if (was >= 0 && was != d) ck_cuda_use(was);   /* the caller's context again */
}

/* Whether a step over [p, p + n*isz) may join a chain holding [q, q + n*qsz):
 * apart, or the same elements. */
static int same_or_apart(const void *p, int isz, const void *q, int qsz, int64_t n)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
    if (a + (uintptr_t)(n * isz) <= b || b + (uintptr_t)(n * qsz) <= a) return 1;
    return a == b && isz == qsz;
}

static int joins(const ck_cuda_ew_spec *sp, void *const *ptrs, int64_t n)
{
    for (int k = 0; k < sp->nops; k++) {
        if (sp->kinds[k] == CK_OPND_SCALAR) continue;
        int isz = ck_dtype_get_info(sp->types[k])->itemsize;
        for (int t = 0; t < chain_.c.nsteps; t++) {
            const ck_cuda_ew_spec *q = &chain_.c.steps[t];
            for (int j = 0; j < q->nops; j++)
                if (q->kinds[j] != CK_OPND_SCALAR &&
                    !same_or_apart(ptrs[k], isz, chain_.st[t].ptr[j], ck_dtype_get_info(q->types[j])->itemsize, n))
                    return 0;
        }
    }
    return 1;
}

static int fuse_take(int d, const ck_cuda_ew_spec *sp, int64_t n, void *const *ptrs, void *const *scalar_vals)
{
    if (!capture_[d] || ck_cuda_current_stream_peek(d) != capture_[d] || !ck_cuda_dev(d)->graph_fuse ||
        sp->idx64 || ck_cu_launch_observed())
        return 0;
    for (int k = 0; k < sp->nops; k++)
        if (sp->kinds[k] == CK_OPND_STRIDED) return 0;
    if (chain_.c.nsteps &&
        (chain_.d != d || chain_.n != n || chain_.c.nsteps == CK_CUDA_EW_CHAIN_MAX || !joins(sp, ptrs, n)))
        ck_cuda_fuse_flush();   /* a failure fails the capture at its end */
    int t = chain_.c.nsteps;
    chain_.d = d;
    chain_.n = (int)n;
    chain_.c.steps[t] = *sp;
    chain_step *st = &chain_.st[t];
    memset(st, 0, sizeof *st);
    for (int k = 0; k < sp->nops; k++) {
        if (sp->kinds[k] != CK_OPND_SCALAR) {
            st->ptr[k] = ptrs[k];
            continue;
        }
        memcpy(st->val[k], scalar_vals[k], ck_cuda_ew_param_size(sp, k));
    }
    chain_.c.nsteps = t + 1;
    ck_cuda_fuse_pending = 1;
    return 1;
}

void ck_cuda_fuse_begin(int d, CUstream s)
{
    capture_[d] = s;
}

ck_status ck_cuda_fuse_end(int d)
{
    flush();
    capture_[d] = NULL;
    ck_status s = failed_;
    failed_ = CK_OK;
    if (s != CK_OK)
        return ck_error_set(s, "%s (launching a chain of element-wise kernels fused in the capture; "
                            "CUDAKIT_GRAPH_FUSE=0 launches them one by one)", failed_msg_);
    return CK_OK;
}
