/* The CPU backend: host memory, and the drivers that walk an iteration space
 * calling the inner loops of cpu_loops.c, split over the CPU cores when the
 * work is large enough to pay for waking them. */
#include "../backend.h"
#include "../../runtime/parallel.h"
#include "cpu_loops.h"
#include "cpu_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large host blocks: first touches of fresh memory cost a page fault per
 * 4 KiB page, which on a virtual machine can cost more than the loop that
 * fills the page.  Large blocks are therefore 2 MiB aligned and advised as
 * huge pages, and a few freed ones are kept for reuse (warm, no faults), as
 * the GPU memory pools of CuPy and PyTorch do. */
#define CK_LARGE_MIN ((size_t)1 << 22)          /* 4 MiB */
#define CK_HUGE_ALIGN ((size_t)1 << 21)
#define CK_CACHE_SLOTS 8
#define CK_CACHE_MAX_BYTES ((size_t)512 << 20)

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { void *ptr; size_t size; } cache_[CK_CACHE_SLOTS];
static size_t cache_bytes_;

/* The CPU's memory figures: updated atomically on every allocation (a
 * relaxed add; the peak by compare-and-swap only when it moves). */
static struct {
    int64_t allocated, peak;
    uint64_t n_alloc, n_system, n_oom;
    size_t limit;
} mem_;

void ck_cpu_mem_note(int64_t delta)
{
    int64_t now = __atomic_add_fetch(&mem_.allocated, delta, __ATOMIC_RELAXED);
    if (delta <= 0) return;
    __atomic_add_fetch(&mem_.n_alloc, 1, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&mem_.peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&mem_.peak, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void *cpu_alloc(ck_device dev, size_t nbytes)
{
    (void)dev;
    size_t limit = __atomic_load_n(&mem_.limit, __ATOMIC_RELAXED);
    if (limit && (size_t)__atomic_load_n(&mem_.allocated, __ATOMIC_RELAXED) + nbytes > limit) {
        __atomic_add_fetch(&mem_.n_oom, 1, __ATOMIC_RELAXED);
        ck_error_set(CK_ERR_MEMORY, "Unable to allocate %zu bytes for an array: beyond the CPU memory limit of %zu "
                     "bytes (%lld in use)", nbytes, limit, (long long)__atomic_load_n(&mem_.allocated, __ATOMIC_RELAXED));
        return NULL;
    }
    void *p;
    if (nbytes < CK_LARGE_MIN) {
        p = aligned_alloc(64, (nbytes + 63) & ~(size_t)63);
        __atomic_add_fetch(&mem_.n_system, 1, __ATOMIC_RELAXED);
    } else {
        size_t sz = (nbytes + CK_HUGE_ALIGN - 1) & ~(CK_HUGE_ALIGN - 1);
        p = NULL;
        pthread_mutex_lock(&cache_mu);
        int best = -1;
        for (int i = 0; i < CK_CACHE_SLOTS; i++)   /* smallest cached block that fits without waste */
            if (cache_[i].ptr && cache_[i].size >= sz && cache_[i].size <= sz + sz / 4 &&
                (best < 0 || cache_[i].size < cache_[best].size))
                best = i;
        if (best >= 0) {
            p = cache_[best].ptr;
            cache_bytes_ -= cache_[best].size;
            cache_[best].ptr = NULL;
        }
        pthread_mutex_unlock(&cache_mu);
        if (!p) {
            p = aligned_alloc(CK_HUGE_ALIGN, sz);
            __atomic_add_fetch(&mem_.n_system, 1, __ATOMIC_RELAXED);
#ifdef MADV_HUGEPAGE
            if (p) madvise(p, sz, MADV_HUGEPAGE);
#endif
        }
    }
    if (!p) {
        __atomic_add_fetch(&mem_.n_oom, 1, __ATOMIC_RELAXED);
        ck_error_set(CK_ERR_MEMORY, "Unable to allocate %zu bytes for an array", nbytes);
        return NULL;
    }
    ck_cpu_mem_note((int64_t)nbytes);
    return p;
}

static void cpu_free(ck_device dev, void *ptr, size_t nbytes)
{
    (void)dev;
    ck_cpu_mem_note(-(int64_t)nbytes);
    if (nbytes >= CK_LARGE_MIN) {
        size_t sz = (nbytes + CK_HUGE_ALIGN - 1) & ~(CK_HUGE_ALIGN - 1);
        pthread_mutex_lock(&cache_mu);
        if (cache_bytes_ + sz <= CK_CACHE_MAX_BYTES) {
            for (int i = 0; i < CK_CACHE_SLOTS; i++) {
                if (!cache_[i].ptr) {
                    cache_[i].ptr = ptr;
                    cache_[i].size = sz;
                    cache_bytes_ += sz;
                    ptr = NULL;
                    break;
                }
            }
        }
        pthread_mutex_unlock(&cache_mu);
    }
    free(ptr);
}

ck_status ck_cpu_memory_empty_cache(ck_device dev)
{
    (void)dev;
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < CK_CACHE_SLOTS; i++) {
        free(cache_[i].ptr);
        cache_[i].ptr = NULL;
    }
    cache_bytes_ = 0;
    pthread_mutex_unlock(&cache_mu);
    return CK_OK;
}

ck_status ck_cpu_memory_stats(ck_device dev, ck_mem_stats *out)
{
    (void)dev;
    int64_t a = __atomic_load_n(&mem_.allocated, __ATOMIC_RELAXED);
    out->allocated = a > 0 ? (size_t)a : 0;
    out->peak_allocated = (size_t)__atomic_load_n(&mem_.peak, __ATOMIC_RELAXED);
    pthread_mutex_lock(&cache_mu);
    out->cached = cache_bytes_;
    pthread_mutex_unlock(&cache_mu);
    out->reserved = out->allocated + out->cached;
    out->limit = __atomic_load_n(&mem_.limit, __ATOMIC_RELAXED);
    out->n_alloc = __atomic_load_n(&mem_.n_alloc, __ATOMIC_RELAXED);
    out->n_system_alloc = __atomic_load_n(&mem_.n_system, __ATOMIC_RELAXED);
    out->n_oom = __atomic_load_n(&mem_.n_oom, __ATOMIC_RELAXED);
    return CK_OK;
}

ck_status ck_cpu_memory_set_limit(ck_device dev, size_t limit)
{
    (void)dev;
    __atomic_store_n(&mem_.limit, limit, __ATOMIC_RELAXED);
    return CK_OK;
}

ck_status ck_cpu_memory_reset_peak(ck_device dev)
{
    (void)dev;
    __atomic_store_n(&mem_.peak, __atomic_load_n(&mem_.allocated, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    return CK_OK;
}

static ck_status cpu_copy(ck_device dev, void *dst, const void *src, size_t n)
{
    (void)dev;
    if (n) memmove(dst, src, n);
    return CK_OK;
}

static ck_status cpu_copy_async(ck_device dev, void *dst, const void *src, size_t n, int to_host, ck_stream s,
                                void *block)
{
    (void)to_host; (void)s; (void)block;
    return cpu_copy(dev, dst, src, n);
}

/* ------------------------------------------------------------ iteration */

typedef struct walk_ctx {
    ck_cpu_loop fn;
    const ck_iter *it;
    ck_status status;
    char msg[256];
} walk_ctx;

/* Run fn over the merged iteration space for linear indices [begin, end)
 * of dimension 0 when ndim == 1, or of the outer index (dims 1..) else. */
static ck_status walk_range(ck_cpu_loop fn, const ck_iter *it, int64_t begin, int64_t end)
{
    int nops = it->nops;
    char *ptr[CK_ITER_MAXOPS];
    int64_t step0[CK_ITER_MAXOPS];
    for (int k = 0; k < nops; k++) step0[k] = it->strides[k][0];
    if (it->ndim == 1) {
        for (int k = 0; k < nops; k++) ptr[k] = it->data[k] + begin * step0[k];
        return fn(ptr, end - begin, step0);
    }
    /* outer index -> coordinates of dims 1.. */
    int64_t idx[CK_MAXDIMS];
    int64_t rem = begin;
    for (int d = 1; d < it->ndim; d++) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    for (int k = 0; k < nops; k++) {
        ptr[k] = it->data[k];
        for (int d = 1; d < it->ndim; d++) ptr[k] += idx[d] * it->strides[k][d];
    }
    int64_t n0 = it->shape[0];
    for (int64_t o = begin; o < end; o++) {
        ck_status s = fn(ptr, n0, step0);
        if (s != CK_OK) return s;
        for (int d = 1; d < it->ndim; d++) {
            for (int k = 0; k < nops; k++) ptr[k] += it->strides[k][d];
            if (++idx[d] < it->shape[d]) break;
            for (int k = 0; k < nops; k++) ptr[k] -= it->shape[d] * it->strides[k][d];
            idx[d] = 0;
        }
    }
    return CK_OK;
}

static void walk_task(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    walk_ctx *c = vctx;
    ck_status s = walk_range(c->fn, c->it, begin, end);
    if (s != CK_OK && c->status == CK_OK) {   /* a benign race: some error wins */
        c->status = s;
        snprintf(c->msg, sizeof c->msg, "%s", ck_error_message());
    }
}

ck_status ck_cpu_walk(ck_cpu_loop fn, const ck_iter *it, int64_t parallel_min)
{
    if (it->size == 0) return CK_OK;
    int64_t n = it->ndim == 1 ? it->shape[0] : it->size / it->shape[0];
    int64_t grain = it->ndim == 1 ? 4096 : 1;
    if (it->size < parallel_min || ck_cpu_num_threads() < 2)
        return walk_range(fn, it, 0, n);
    if (it->ndim > 1 && n < 2) return walk_range(fn, it, 0, n);
    walk_ctx c = {fn, it, CK_OK, ""};
    ck_parallel_for(n, grain, walk_task, &c);
    if (c.status != CK_OK) return ck_error_set(c.status, "%s", c.msg);
    return CK_OK;
}

/* Element counts above which a loop is split over the cores: cheap ops
 * are memory bound and need more work to pay for a wake-up. */
#define CK_PAR_MIN_CHEAP (1 << 17)
#define CK_PAR_MIN_COSTLY (1 << 13)

/* The op's cost; float16 converts every element and complex is several
 * real operations, so both are costly whatever the op. */
static int op_is_costly(ck_op op, ck_dtype t)
{
    return ck_op_table[op].cost == CK_COST_COSTLY || ck_dtype_is_complex(t) || t == CK_FLOAT16;
}

static ck_status cpu_elementwise(const ck_ew_desc *d)
{
    ck_dtype lt = d->types[ck_op_table[d->op].rule & CK_R_WHERE ? 2 : 1];
    ck_cpu_loop fn = ck_cpu_ew_loops[d->op][lt];
    if (!fn)
        return ck_error_set(CK_ERR_TYPE, "ufunc '%s' has no CPU loop for %s",
                            ck_op_table[d->op].name, ck_dtype_get_info(lt)->name);
    return ck_cpu_walk(fn, &d->it, op_is_costly(d->op, lt) ? CK_PAR_MIN_COSTLY : CK_PAR_MIN_CHEAP);
}

static ck_status cpu_cast(const ck_ew_desc *d)
{
    return ck_cpu_walk(ck_cpu_cast_loops[d->types[0]][d->types[1]], &d->it, CK_PAR_MIN_CHEAP);
}

/* fill: a one-operand walk of its own that writes the value, because a
 * ck_cpu_loop has no argument to carry one. */
typedef struct fill_ctx { const ck_iter *it; const void *value; int isz; } fill_ctx;

static void fill_task(void *vctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    fill_ctx *c = vctx;
    const ck_iter *it = c->it;
    int isz = c->isz;
    /* iterate outer index like walk_range, with a local inner loop */
    int64_t n0 = it->ndim == 1 ? end - begin : it->shape[0];
    int64_t s0 = it->strides[0][0];
    int64_t idx[CK_MAXDIMS] = {0};
    char *p = it->data[0];
    int64_t ob = begin, oe = end;
    if (it->ndim == 1) { p += begin * s0; ob = 0; oe = 1; }
    else {
        int64_t rem = begin;
        for (int d = 1; d < it->ndim; d++) { idx[d] = rem % it->shape[d]; rem /= it->shape[d]; p += idx[d] * it->strides[0][d]; }
    }
    for (int64_t o = ob; o < oe; o++) {
        if (s0 == isz) {
            switch (isz) {
            case 1: memset(p, *(const uint8_t *)c->value, (size_t)n0); break;
            case 2: { uint16_t v; memcpy(&v, c->value, 2); uint16_t *q = (uint16_t *)p; for (int64_t i = 0; i < n0; i++) q[i] = v; break; }
            case 4: { uint32_t v; memcpy(&v, c->value, 4); uint32_t *q = (uint32_t *)p; for (int64_t i = 0; i < n0; i++) q[i] = v; break; }
            case 8: { uint64_t v; memcpy(&v, c->value, 8); uint64_t *q = (uint64_t *)p; for (int64_t i = 0; i < n0; i++) q[i] = v; break; }
            default: for (int64_t i = 0; i < n0; i++) memcpy(p + i * isz, c->value, (size_t)isz);
            }
        } else {
            for (int64_t i = 0; i < n0; i++) memcpy(p + i * s0, c->value, (size_t)isz);
        }
        for (int d = 1; d < it->ndim; d++) {
            p += it->strides[0][d];
            if (++idx[d] < it->shape[d]) break;
            p -= it->shape[d] * it->strides[0][d];
            idx[d] = 0;
        }
    }
}

static ck_status cpu_fill(const ck_ew_desc *d, const void *value)
{
    const ck_iter *it = &d->it;
    if (it->size == 0) return CK_OK;
    fill_ctx c = {it, value, ck_dtype_get_info(d->types[0])->itemsize};
    int64_t n = it->ndim == 1 ? it->shape[0] : it->size / it->shape[0];
    if (it->size < CK_PAR_MIN_CHEAP) fill_task(&c, 0, n, 0);
    else ck_parallel_for(n, it->ndim == 1 ? 4096 : 1, fill_task, &c);
    return CK_OK;
}

static ck_status cpu_iota(ck_array *out, double start, double step)
{
    /* values are made in float64 blocks and cast, so every dtype shares it */
    double blk[512];
    int64_t n = out->size, isz = ck_array_itemsize(out);
    int64_t st[2] = {isz, 8};
    ck_cpu_loop cast = ck_cpu_cast_loops[out->dtype][CK_FLOAT64];
    for (int64_t i0 = 0; i0 < n; i0 += 512) {
        int64_t m = n - i0 < 512 ? n - i0 : 512;
        for (int64_t j = 0; j < m; j++) blk[j] = start + (double)(i0 + j) * step;
        char *args[2] = {out->data + i0 * isz, (char *)blk};
        cast(args, m, st);
    }
    return CK_OK;
}

const ck_backend_iface ck_backend_cpu = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_host = cpu_copy,
    .copy_from_host = cpu_copy,
    .copy_async = cpu_copy_async,
    .copy_peer = NULL,
    .memory_stats = ck_cpu_memory_stats,
    .memory_empty_cache = ck_cpu_memory_empty_cache,
    .memory_set_limit = ck_cpu_memory_set_limit,
    .memory_reset_peak = ck_cpu_memory_reset_peak,
    .pinned_alloc = NULL,

    .device_count = NULL,   /* one CPU device */
    .device_properties = ck_cpu_device_properties,
    .device_mem_info = ck_cpu_device_mem_info,
    .synchronize = NULL,    /* host-ordered */
    .stream_create = ck_cpu_stream_create,
    .stream_destroy = ck_cpu_stream_destroy,
    .stream_synchronize = ck_cpu_stream_synchronize,
    .stream_query = ck_cpu_stream_query,
    .stream_wait_event = ck_cpu_stream_wait_event,
    .stream_priority_range = ck_cpu_stream_priority_range,
    .stream_current = ck_cpu_stream_current,
    .stream_set_current = ck_cpu_stream_set_current,
    .event_create = ck_cpu_event_create,
    .event_destroy = ck_cpu_event_destroy,
    .event_record = ck_cpu_event_record,
    .event_synchronize = ck_cpu_event_synchronize,
    .event_query = ck_cpu_event_query,
    .event_elapsed_ms = ck_cpu_event_elapsed_ms,

    .module_load = ck_cpu_module_load_slot,
    .module_free = ck_cpu_module_free_slot,
    .module_get_global = ck_cpu_module_get_global_slot,
    .function_new = ck_cpu_function_new,
    .function_free = ck_cpu_function_free,
    .function_attributes = ck_cpu_function_attributes,
    .function_set_max_dynamic_shared = ck_cpu_function_set_max_dynamic_shared,
    .function_suggest_block = ck_cpu_function_suggest_block,
    .function_params = ck_cpu_function_params_slot,
    .function_launch = ck_cpu_function_launch,
    .function_max_cooperative_blocks = ck_cpu_function_max_cooperative_blocks,

    .elementwise = cpu_elementwise,
    .cast = cpu_cast,
    .fill = cpu_fill,
    .reduce = ck_cpu_reduce,
    .scan = ck_cpu_scan,
    .iota = cpu_iota,
    .gather = ck_cpu_gather,
    .scatter = ck_cpu_scatter,
    .nonzero = ck_cpu_nonzero,
    .compress = ck_cpu_compress,
    .sort = ck_cpu_sort,
    .searchsorted = ck_cpu_searchsorted,
    .histogram = ck_cpu_histogram,
    .random = ck_cpu_random,
    .copy_pieces = NULL,
    .rows = ck_cpu_rows,
    .optim_step = ck_cpu_optim_step,
    .bias_act = ck_cpu_bias_act,
    .scatter_add = ck_cpu_scatter_add,

    .matmul = NULL,
    .fft = NULL,
    .solver = NULL,

    .graph_begin = ck_cpu_graph_begin,
    .graph_end = ck_cpu_graph_end,
    .graph_launch = ck_cpu_graph_launch,
    .graph_free = ck_cpu_graph_free,
    .graph_nodes = ck_cpu_graph_nodes,
    .graph_uses = ck_cpu_graph_uses,
};
