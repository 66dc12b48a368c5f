/* Graphs on the CPU: record and replay.  While a thread captures, the
 * CPU's entry in the backend registry is a copy of the CPU backend whose
 * kernel slots (element-wise, casts, fills, reductions, scans, indexing,
 * sorts, random fills, user kernels, stream copies, the training ops:
 * softmax rows, optimizer steps, bias-activation, scatter-add) append a record (the
 * description, with the host values it points to copied into the record)
 * instead of running; a replay runs the records in order through the CPU
 * backend's own slots.  Other threads go through the same slots and run at
 * once.  The addresses the records touch are kept sorted, so that graph.c
 * can keep memory a replay would touch from being freed. */
#include "cpu_internal.h"
#include "../graph_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    R_EW, R_CAST, R_FILL, R_REDUCE, R_SCAN, R_IOTA, R_GATHER, R_SCATTER, R_NONZERO, R_COMPRESS,
    R_SORT, R_SEARCH, R_RANDOM, R_LAUNCH, R_COPY, R_ROWS, R_OPTIM, R_BIAS_ACT, R_SCATTER_ADD,
};

typedef struct rec_launch {
    ck_function *f;
    unsigned grid[3], block[3];
    size_t shmem;
    unsigned flags;
    int nparams;
    void *params[CK_MAX_KERNEL_PARAMS];
    ck_launch_arg *info;           /* NULL, or nparams entries after the values */
    unsigned char values[];        /* the parameters' bytes, 16-aligned each */
} rec_launch;

typedef struct rec {
    int kind;
    union {
        ck_ew_desc ew;
        ck_reduce_desc reduce;
        ck_scan_desc scan;
        ck_gather_desc gather;
        ck_nonzero_desc nonzero;
        ck_compress_desc compress;
        ck_sort_desc sort;
        ck_searchsorted_desc search;
        ck_random_desc random;
        struct { ck_array out; double start, step; } iota;
        struct { void *dst; const void *src; size_t n; } copy;
        rec_launch *launch;
        ck_rows_desc rows;
        ck_optim_desc optim;       /* .t: its own copy, freed with the record */
        ck_bias_act_desc bias_act;
        ck_scatter_add_desc scatter_add;
    } u;
    /* host values the description points to: element-wise scalars, the fill value */
    _Alignas(16) unsigned char host[CK_ITER_MAXOPS][16];
} rec;

typedef struct cpu_graph {
    rec **recs;                    /* each its own allocation: descriptions point into them */
    size_t n, cap;
    uintptr_t *addrs;              /* every address a record touches, sorted */
    size_t naddrs, caddrs;
    ck_status failed;              /* a record that could not be kept */
} cpu_graph;

static _Thread_local cpu_graph *recording_;

static rec *rec_new(cpu_graph *g, int kind)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 32;
        rec **v = realloc(g->recs, cap * sizeof *v);
        if (!v) return NULL;
        g->recs = v;
        g->cap = cap;
    }
    rec *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    g->recs[g->n++] = r;
    r->kind = kind;
    return r;
}

static void addr_add(cpu_graph *g, const void *p)
{
    if (!p) return;
    if (g->naddrs == g->caddrs) {
        size_t cap = g->caddrs ? 2 * g->caddrs : 64;
        uintptr_t *v = realloc(g->addrs, cap * sizeof *v);
        if (!v) { g->failed = CK_ERR_MEMORY; return; }
        g->addrs = v;
        g->caddrs = cap;
    }
    g->addrs[g->naddrs++] = (uintptr_t)p;
}

#define CK_REC(kind_)                                                                 \
    cpu_graph *g = recording_;                                                        \
    rec *r = rec_new(g, kind_);                                                       \
    if (!r) return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph's record")

/* ----------------------------------------------------------- recording */

static ck_status ew_record(int kind, const ck_ew_desc *d, const void *value)
{
    CK_REC(kind);
    r->u.ew = *d;
    for (int k = 0; k < d->it.nops; k++) {
        if (d->scalar_mask & (1u << k)) {
            memcpy(r->host[k], d->it.data[k], (size_t)ck_dtype_get_info(d->types[k])->itemsize);
            r->u.ew.it.data[k] = (char *)r->host[k];
        } else {
            addr_add(g, d->it.data[k]);
        }
    }
    /* a fill's value goes after the operands' scalars, which it has none of */
    if (value) memcpy(r->host[CK_ITER_MAXOPS - 1], value, (size_t)ck_dtype_get_info(d->types[0])->itemsize);
    return CK_OK;
}

static ck_status rec_elementwise(const ck_ew_desc *d)
{
    return recording_ ? ew_record(R_EW, d, NULL) : ck_backend_cpu.elementwise(d);
}

static ck_status rec_cast(const ck_ew_desc *d)
{
    return recording_ ? ew_record(R_CAST, d, NULL) : ck_backend_cpu.cast(d);
}

static ck_status rec_fill(const ck_ew_desc *d, const void *value)
{
    return recording_ ? ew_record(R_FILL, d, value) : ck_backend_cpu.fill(d, value);
}

static ck_status rec_reduce(const ck_reduce_desc *d)
{
    if (!recording_) return ck_backend_cpu.reduce(d);
    CK_REC(R_REDUCE);
    r->u.reduce = *d;
    addr_add(g, d->in);
    addr_add(g, d->out);
    return CK_OK;
}

static ck_status rec_scan(const ck_scan_desc *d)
{
    if (!recording_) return ck_backend_cpu.scan(d);
    CK_REC(R_SCAN);
    r->u.scan = *d;
    addr_add(g, d->in);
    addr_add(g, d->out);
    return CK_OK;
}

static ck_status rec_iota(ck_array *out, double start, double step)
{
    if (!recording_) return ck_backend_cpu.iota(out, start, step);
    CK_REC(R_IOTA);
    r->u.iota.out = *out;
    r->u.iota.start = start;
    r->u.iota.step = step;
    addr_add(g, out->data);
    return CK_OK;
}

static ck_status gather_record(int kind, const ck_gather_desc *d)
{
    CK_REC(kind);
    r->u.gather = *d;
    addr_add(g, d->arr);
    addr_add(g, d->other);
    for (int k = 0; k < d->nidx; k++) addr_add(g, d->idx[k]);
    return CK_OK;
}

static ck_status rec_gather(const ck_gather_desc *d)
{
    return recording_ ? gather_record(R_GATHER, d) : ck_backend_cpu.gather(d);
}

static ck_status rec_scatter(const ck_gather_desc *d)
{
    return recording_ ? gather_record(R_SCATTER, d) : ck_backend_cpu.scatter(d);
}

static ck_status rec_nonzero(const ck_nonzero_desc *d)
{
    if (!recording_) return ck_backend_cpu.nonzero(d);
    CK_REC(R_NONZERO);
    r->u.nonzero = *d;
    addr_add(g, d->in);
    addr_add(g, d->out);
    return CK_OK;
}

static ck_status rec_compress(const ck_compress_desc *d)
{
    if (!recording_) return ck_backend_cpu.compress(d);
    CK_REC(R_COMPRESS);
    r->u.compress = *d;
    addr_add(g, d->mask);
    addr_add(g, d->src);
    addr_add(g, d->out);
    return CK_OK;
}

static ck_status rec_sort(const ck_sort_desc *d)
{
    if (!recording_) return ck_backend_cpu.sort(d);
    CK_REC(R_SORT);
    r->u.sort = *d;
    addr_add(g, d->src);
    addr_add(g, d->data);
    addr_add(g, d->idx);
    return CK_OK;
}

static ck_status rec_searchsorted(const ck_searchsorted_desc *d)
{
    if (!recording_) return ck_backend_cpu.searchsorted(d);
    CK_REC(R_SEARCH);
    r->u.search = *d;
    addr_add(g, d->a);
    addr_add(g, d->v);
    addr_add(g, d->out);
    return CK_OK;
}

static ck_status rec_random(const ck_random_desc *d)
{
    if (!recording_) return ck_backend_cpu.random(d);
    CK_REC(R_RANDOM);
    r->u.random = *d;
    addr_add(g, d->data);
    addr_add(g, d->a_arr);
    addr_add(g, d->b_arr);
    return CK_OK;
}

static ck_status rec_copy_async(ck_device dev, void *dst, const void *src, size_t n, int to_host, ck_stream s,
                                void *block)
{
    if (!recording_) return ck_backend_cpu.copy_async(dev, dst, src, n, to_host, s, block);
    CK_REC(R_COPY);
    r->u.copy.dst = dst;
    r->u.copy.src = src;
    r->u.copy.n = n;
    addr_add(g, dst);
    addr_add(g, src);
    return CK_OK;
}

static ck_status rec_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                     ck_stream stream, unsigned flags, int nparams, void **params,
                                     const ck_launch_arg *info)
{
    if (!recording_) return ck_backend_cpu.function_launch(f, grid, block, shmem, stream, flags, nparams, params, info);
    if (nparams < 0 || nparams > CK_MAX_KERNEL_PARAMS)
        return ck_error_set(CK_ERR_VALUE, "kernels with more than %d arguments are not supported", CK_MAX_KERNEL_PARAMS);
    size_t sizes[CK_MAX_KERNEL_PARAMS];
    int np = ck_backend_cpu.function_params(f, sizes, CK_MAX_KERNEL_PARAMS);
    if (np != nparams) {
        if (np >= 0) return ck_error_set(CK_ERR_TYPE, "kernel '%s' takes %d arguments, got %d", ck_function_name(f), np, nparams);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "kernel '%s': its parameters are not known, so its launch cannot "
                            "be recorded in a graph on the CPU", ck_function_name(f));
    }
    size_t total = 0;
    for (int i = 0; i < nparams; i++) total += (sizes[i] + 15) & ~(size_t)15;
    CK_REC(R_LAUNCH);
    rec_launch *L = malloc(sizeof *L + total + (info ? (size_t)nparams * sizeof *info : 0));
    if (!L) {
        free(g->recs[--g->n]);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph's record");
    }
    L->f = f;
    memcpy(L->grid, grid, sizeof L->grid);
    memcpy(L->block, block, sizeof L->block);
    L->shmem = shmem;
    L->flags = flags;
    L->nparams = nparams;
    size_t off = 0;
    for (int i = 0; i < nparams; i++) {
        L->params[i] = L->values + off;
        memcpy(L->values + off, params[i], sizes[i]);
        /* any pointer-sized argument may address an array */
        if (sizes[i] == sizeof(void *)) addr_add(g, *(void **)params[i]);
        off += (sizes[i] + 15) & ~(size_t)15;
    }
    L->info = NULL;
    if (info) {
        L->info = (ck_launch_arg *)(L->values + off);
        memcpy(L->info, info, (size_t)nparams * sizeof *info);
        for (int i = 0; i < nparams; i++) addr_add(g, info[i].base);
    }
    r->u.launch = L;
    return CK_OK;
}

/* The training ops' slots (softmax and cross-entropy rows, the optimizer
 * step, the matmul epilogue, scatter-add): their descriptions point only at
 * device memory, but for the optimizer's tensor list, copied. */
static ck_status rec_rows(const ck_rows_desc *d)
{
    if (!recording_) return ck_backend_cpu.rows(d);
    CK_REC(R_ROWS);
    r->u.rows = *d;
    const void *ps[] = {d->x, d->g, d->out, d->target, d->prob, d->lse, d->total, d->scratch};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) addr_add(g, ps[i]);
    return CK_OK;
}

static ck_status rec_optim_step(const ck_optim_desc *d)
{
    if (!recording_) return ck_backend_cpu.optim_step(d);
    CK_REC(R_OPTIM);
    ck_optim_tensor *t = malloc(sizeof *t * (size_t)(d->ntensors ? d->ntensors : 1));
    if (!t) return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph's record");
    memcpy(t, d->t, sizeof *t * (size_t)d->ntensors);
    r->u.optim = *d;
    r->u.optim.t = t;
    r->u.optim.h.step_array = NULL;     /* the C op's argument, read already: step_ptr is what the slot reads */
    for (int i = 0; i < d->ntensors; i++) {
        addr_add(g, t[i].p);
        addr_add(g, t[i].g);
        addr_add(g, t[i].s1);
        addr_add(g, t[i].s2);
    }
    addr_add(g, d->step_ptr);
    return CK_OK;
}

static ck_status rec_bias_act(const ck_bias_act_desc *d)
{
    if (!recording_) return ck_backend_cpu.bias_act(d);
    CK_REC(R_BIAS_ACT);
    r->u.bias_act = *d;
    const void *ps[] = {d->y, d->pre, d->out, d->bias, d->g, d->saved};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) addr_add(g, ps[i]);
    return CK_OK;
}

static ck_status rec_scatter_add(const ck_scatter_add_desc *d)
{
    if (!recording_) return ck_backend_cpu.scatter_add(d);
    CK_REC(R_SCATTER_ADD);
    r->u.scatter_add = *d;
    addr_add(g, d->target);
    addr_add(g, d->idx);
    addr_add(g, d->src);
    return CK_OK;
}

/* ------------------------------------------------------------- replay */

static ck_status rec_run(const rec *r)
{
    const ck_backend_iface *be = &ck_backend_cpu;
    switch (r->kind) {
    case R_EW: return be->elementwise(&r->u.ew);
    case R_CAST: return be->cast(&r->u.ew);
    case R_FILL: return be->fill(&r->u.ew, r->host[CK_ITER_MAXOPS - 1]);
    case R_REDUCE: return be->reduce(&r->u.reduce);
    case R_SCAN: return be->scan(&r->u.scan);
    case R_IOTA: {
        ck_array out = r->u.iota.out;
        return be->iota(&out, r->u.iota.start, r->u.iota.step);
    }
    case R_GATHER: return be->gather(&r->u.gather);
    case R_SCATTER: return be->scatter(&r->u.gather);
    case R_NONZERO: return be->nonzero(&r->u.nonzero);
    case R_COMPRESS: return be->compress(&r->u.compress);
    case R_SORT: return be->sort(&r->u.sort);
    case R_SEARCH: return be->searchsorted(&r->u.search);
    case R_RANDOM: return be->random(&r->u.random);
    case R_COPY:
        if (r->u.copy.n) memmove(r->u.copy.dst, r->u.copy.src, r->u.copy.n);
        return CK_OK;
    case R_LAUNCH: {
        rec_launch *L = r->u.launch;
        return be->function_launch(L->f, L->grid, L->block, L->shmem, NULL, L->flags, L->nparams, L->params, L->info);
    }
    case R_ROWS: return be->rows(&r->u.rows);
    case R_OPTIM: return be->optim_step(&r->u.optim);
    case R_BIAS_ACT: return be->bias_act(&r->u.bias_act);
    case R_SCATTER_ADD: return be->scatter_add(&r->u.scatter_add);
    }
    return ck_error_set(CK_ERR_RUNTIME, "a graph record of unknown kind %d", r->kind);
}

/* ------------------------------------------------------- the registry */

static ck_backend_iface recorder_;
static pthread_once_t recorder_once_ = PTHREAD_ONCE_INIT;
static pthread_mutex_t recorder_mu = PTHREAD_MUTEX_INITIALIZER;
static int recorders_;

static void recorder_init(void)
{
    recorder_ = ck_backend_cpu;
    recorder_.elementwise = rec_elementwise;
    recorder_.cast = rec_cast;
    recorder_.fill = rec_fill;
    recorder_.reduce = rec_reduce;
    recorder_.scan = rec_scan;
    recorder_.iota = rec_iota;
    recorder_.gather = rec_gather;
    recorder_.scatter = rec_scatter;
    recorder_.nonzero = rec_nonzero;
    recorder_.compress = rec_compress;
    recorder_.sort = rec_sort;
    recorder_.searchsorted = rec_searchsorted;
    recorder_.random = rec_random;
    recorder_.copy_async = rec_copy_async;
    recorder_.function_launch = rec_function_launch;
    recorder_.rows = rec_rows;
    recorder_.optim_step = rec_optim_step;
    recorder_.bias_act = rec_bias_act;
    recorder_.scatter_add = rec_scatter_add;
}

/* While any thread records, the registry hands out the recorder; the CPU
 * backend itself again once none does, so that ops pay nothing otherwise. */
static void recorders_add(int delta)
{
    pthread_mutex_lock(&recorder_mu);
    recorders_ += delta;
    ck_backend_register(CK_DEVICE_CPU, recorders_ ? &recorder_ : &ck_backend_cpu);
    pthread_mutex_unlock(&recorder_mu);
}

ck_status ck_cpu_graph_begin(ck_device dev, ck_stream s, void **impl)
{
    (void)dev; (void)s;
    pthread_once(&recorder_once_, recorder_init);
    cpu_graph *g = calloc(1, sizeof *g);
    if (!g) return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph");
    recording_ = g;
    recorders_add(1);
    *impl = g;
    return CK_OK;
}

static int addr_cmp(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

ck_status ck_cpu_graph_end(ck_device dev, ck_stream s, void *impl)
{
    (void)s;
    cpu_graph *g = impl;
    recording_ = NULL;
    recorders_add(-1);
    if (g->failed) {
        ck_cpu_graph_free(dev, g);
        return ck_error_set(CK_ERR_MEMORY, "out of memory while recording a graph");
    }
    qsort(g->addrs, g->naddrs, sizeof *g->addrs, addr_cmp);
    return CK_OK;
}

ck_status ck_cpu_graph_launch(ck_device dev, void *impl, ck_stream s)
{
    (void)dev; (void)s;
    const cpu_graph *g = impl;
    for (size_t i = 0; i < g->n; i++) {
        ck_status st = rec_run(g->recs[i]);
        if (st != CK_OK) return st;
    }
    return CK_OK;
}

void ck_cpu_graph_free(ck_device dev, void *impl)
{
    (void)dev;
    cpu_graph *g = impl;
    if (!g) return;
    for (size_t i = 0; i < g->n; i++) {
        if (g->recs[i]->kind == R_LAUNCH) free(g->recs[i]->u.launch);
        if (g->recs[i]->kind == R_OPTIM) free((void *)g->recs[i]->u.optim.t);
        free(g->recs[i]);
    }
    free(g->recs);
    free(g->addrs);
    free(g);
}

int64_t ck_cpu_graph_nodes(void *impl) { return (int64_t)((cpu_graph *)impl)->n; }

int ck_cpu_graph_uses(void *impl, const void *p, size_t n)
{
    const cpu_graph *g = impl;
    uintptr_t lo = (uintptr_t)p, hi = lo + (n ? n : 1);
    size_t a = 0, b = g->naddrs;
    while (a < b) {   /* the first address >= lo */
        size_t m = a + (b - a) / 2;
        if (g->addrs[m] < lo) a = m + 1;
        else b = m;
    }
    return a < g->naddrs && g->addrs[a] < hi;
}
