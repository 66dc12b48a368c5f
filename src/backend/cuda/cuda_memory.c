/*
 * The device memory pool and host-device copies.
 *
 * The pool is a size-class cache of our own, stream-ordered: a freed block
 * goes back to its size class tagged with the stream it was allocated on,
 * and is handed out again only to an allocation on that same stream, whose
 * order guarantees the earlier work on the block is done first.  Small
 * requests round to 512 bytes, large ones to 2 MiB.  Out of memory: free
 * the cache, retry once, then fail with the sizes.
 *
 * CUDAKIT_ALLOCATOR=driver switches to the driver's stream-ordered pool
 * (cuMemAllocAsync) instead, for comparison: bench/bench_gpu.py measures
 * both, and the per-call figures decided the default (bench/results/).
 *
 * Large pageable host copies go through two pinned staging buffers in
 * chunks, so the CPU copies chunk k+1 while the DMA engine moves chunk k.
 */
#include "cuda_internal.h"
#include "../../runtime/parallel.h"
#include "../graph_internal.h"

#include <stdlib.h>
#include <string.h>

/* An event recorded on a stream, shared by the blocks that wait for it. */
typedef struct ck_mark {
    CUevent ev;
    int refs;
} ck_mark;

/* A stream a block is used on besides its own.  m NULL: s is a live
 * stream, marked when the block is freed; else the mark stands for that
 * use (made when the block was freed, or when s was destroyed: a stream
 * handle is never used after its destruction, which reuses the handle). */
typedef struct ck_use {
    CUstream s;
    ck_mark *m;
} ck_use;

#define CK_BLOCK_USES 4
typedef struct ck_block {
    CUdeviceptr ptr;
    size_t size;
    CUstream stream;
    struct ck_block *next;
    /* other streams an asynchronous copy used it on: freed, it waits (in
     * the pending list) for their marks before its reuse */
    int nuses;
    ck_use uses[CK_BLOCK_USES];
} ck_block;

#define CK_NBUCKETS 1024
typedef struct ck_pool {
    pthread_mutex_t mu;
    ck_block *free_[CK_NBUCKETS];      /* cached blocks by hashed size */
    ck_block *live_[CK_NBUCKETS];      /* blocks in use by hashed address */
    ck_block *spare;                   /* recycled headers */
    ck_block *pending;                 /* freed, waiting for the streams that used them */
    ck_mem_stats st;
} ck_pool;

static ck_pool pools_[CK_CUDA_MAX_DEVICES];
static void pinned_stream_gone(CUstream s);
static pthread_once_t pools_once_ = PTHREAD_ONCE_INIT;

static void pools_init(void)
{
    for (int i = 0; i < CK_CUDA_MAX_DEVICES; i++) pthread_mutex_init(&pools_[i].mu, NULL);
}

static size_t round_size(size_t n)
{
    if (n < ((size_t)1 << 20)) return (n + 511) & ~(size_t)511;
    return (n + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
}

static size_t hash_size(size_t s) { return (size_t)((s >> 9) * 0x9E3779B97F4A7C15ull >> 40) % CK_NBUCKETS; }
static size_t hash_ptr(CUdeviceptr p) { return (size_t)((p >> 8) * 0x9E3779B97F4A7C15ull >> 40) % CK_NBUCKETS; }

static ck_block *new_header(ck_pool *p)
{
    ck_block *b = p->spare;
    if (b) p->spare = b->next;
    else b = malloc(sizeof *b);
    if (b) b->nuses = 0;
    return b;
}

/* A mark recorded now on s (the context current); NULL when the driver
 * refused, and the caller waits for s instead. */
static ck_mark *mark_new(CUstream s)
{
    ck_cuda_fuse_flush_pending();
    ck_mark *m = malloc(sizeof *m);
    if (!m) return NULL;
    if (ck_cu.cuEventCreate(&m->ev, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) { free(m); return NULL; }
    if (ck_cu.cuEventRecord(m->ev, s) != CUDA_SUCCESS) {
        ck_cu.cuEventDestroy_v2(m->ev);
        free(m);
        return NULL;
    }
    m->refs = 1;
    return m;
}

static void mark_unref(ck_mark *m)
{
    if (m && --m->refs == 0) {
        ck_cu.cuEventDestroy_v2(m->ev);
        free(m);
    }
}

static int block_settled(const ck_block *b)
{
    for (int i = 0; i < b->nuses; i++)
        if (ck_cu.cuEventQuery(b->uses[i].m->ev) == CUDA_ERROR_NOT_READY) return 0;
    return 1;
}

static void block_drop_uses(ck_block *b)
{
    for (int i = 0; i < b->nuses; i++) mark_unref(b->uses[i].m);
    b->nuses = 0;
}

/* Freed blocks whose streams are done with them become reusable (caller
 * holds the lock and the context; all: wait for nothing, the device was
 * synchronised). */
static void pending_settle(ck_pool *p, int all)
{
    for (ck_block **pp = &p->pending, *b; (b = *pp);) {
        if (!all && !block_settled(b)) { pp = &b->next; continue; }
        *pp = b->next;
        block_drop_uses(b);
        size_t h = hash_size(b->size);
        b->next = p->free_[h];
        p->free_[h] = b;
    }
}

/* Free every cached block of a pool (caller holds the lock and the context). */
static void release_cached(ck_pool *p)
{
    for (int i = 0; i < CK_NBUCKETS; i++) {
        ck_block *b = p->free_[i];
        while (b) {
            ck_block *n = b->next;
            ck_cu.cuMemFree_v2(b->ptr);
            p->st.cached -= b->size;
            p->st.reserved -= b->size;
            b->next = p->spare;
            p->spare = b;
            b = n;
        }
        p->free_[i] = NULL;
    }
}

/* ------------------------------------------------- the driver's pool */

static int use_driver_pool_ = -1;
static int driver_pool_ready_[CK_CUDA_MAX_DEVICES];

static int use_driver_pool(void)
{
    if (use_driver_pool_ < 0) {
        const char *e = getenv("CUDAKIT_ALLOCATOR");
        use_driver_pool_ = e && strcmp(e, "driver") == 0;
    }
    return use_driver_pool_;
}

static void *driver_alloc(int d, ck_pool *p, size_t nbytes)
{
    CUstream s = ck_cuda_current_stream_peek(d);   /* an allocation node, no held kernel needs to precede */
    CUmemoryPool pool;
    CUresult r = CUDA_SUCCESS;
    if (!driver_pool_ready_[d]) {
        /* keep freed memory in the pool rather than returning it at each sync */
        unsigned long long keep = ~0ull;
        r = ck_cu.cuDeviceGetDefaultMemPool(&pool, ck_cuda_dev(d)->dev);
        if (r == CUDA_SUCCESS) r = ck_cu.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
        if (r != CUDA_SUCCESS) { ck_cu_fail(r, "cuMemPoolSetAttribute", __func__, __FILE__, __LINE__); return NULL; }
        driver_pool_ready_[d] = 1;
    }
    CUdeviceptr ptr = 0;
    r = ck_cu.cuMemAllocAsync(&ptr, nbytes ? nbytes : 1, s);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && ck_cu.cuDeviceGetDefaultMemPool(&pool, ck_cuda_dev(d)->dev) == CUDA_SUCCESS) {
        if (ck_cuda_wait_device(d, "cuCtxSynchronize (out of memory)") == CK_ERR_INTERRUPT) return NULL;
        ck_cu.cuMemPoolTrimTo(pool, 0);
        r = ck_cu.cuMemAllocAsync(&ptr, nbytes ? nbytes : 1, s);
    }
    if (r != CUDA_SUCCESS) {
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            size_t fr = 0, tot = 0;
            ck_cu.cuMemGetInfo_v2(&fr, &tot);
            ck_error_set(CK_ERR_DEVICE_MEMORY, "CUDA out of memory: tried to allocate %zu bytes on cuda:%d; "
                         "%zu bytes free of %zu", nbytes, d, fr, tot);
        } else {
            ck_cu_fail(r, "cuMemAllocAsync", __func__, __FILE__, __LINE__);
        }
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    p->st.n_alloc++;
    p->st.allocated += nbytes;
    if (p->st.allocated > p->st.peak_allocated) p->st.peak_allocated = p->st.allocated;
    pthread_mutex_unlock(&p->mu);
    return (void *)(uintptr_t)ptr;
}

void *ck_cuda_alloc(ck_device dev, size_t nbytes)
{
    pthread_once(&pools_once_, pools_init);
    int d = dev.index;
    if (ck_cuda_use(d) != CK_OK) return NULL;
    ck_pool *p = &pools_[d];
    if (use_driver_pool()) return driver_alloc(d, p, nbytes);
    size_t sz = round_size(nbytes ? nbytes : 1);
    CUstream s = ck_cuda_current_stream_peek(d);   /* only looked at: held kernels stay held */
    pthread_mutex_lock(&p->mu);
    p->st.n_alloc++;
    if (p->pending) pending_settle(p, 0);
    ck_block **pp = &p->free_[hash_size(sz)], *b;
    for (b = *pp; b; pp = &b->next, b = b->next)
        if (b->size == sz && b->stream == s) break;
    if (b) {
        *pp = b->next;
        p->st.cached -= sz;
    } else {
        if (p->st.limit && p->st.reserved + sz > p->st.limit) release_cached(p);
        CUdeviceptr ptr = 0;
        CUresult r = (p->st.limit && p->st.reserved + sz > p->st.limit) ? CUDA_ERROR_OUT_OF_MEMORY
                                                                           : ck_cu.cuMemAlloc_v2(&ptr, sz);
        if (r == CUDA_ERROR_OUT_OF_MEMORY && !(p->st.limit && p->st.reserved + sz > p->st.limit)) {
            release_cached(p);   /* free the cache and retry once */
            r = ck_cu.cuMemAlloc_v2(&ptr, sz);
        }
        if (r != CUDA_SUCCESS) {
            p->st.n_oom += r == CUDA_ERROR_OUT_OF_MEMORY;
            pthread_mutex_unlock(&p->mu);
            if (r == CUDA_ERROR_OUT_OF_MEMORY) {
                size_t fr = 0, tot = 0;
                ck_cu.cuMemGetInfo_v2(&fr, &tot);
                if (p->st.limit && p->st.reserved + sz > p->st.limit)
                    ck_error_set(CK_ERR_DEVICE_MEMORY, "CUDA out of memory: tried to allocate %zu bytes on cuda:%d "
                                 "beyond the memory limit of %zu bytes (%zu bytes in use)", nbytes, d, p->st.limit, p->st.allocated);
                else
                    ck_error_set(CK_ERR_DEVICE_MEMORY, "CUDA out of memory: tried to allocate %zu bytes on cuda:%d; "
                                 "%zu bytes free of %zu, %zu in use by cudakit arrays", nbytes, d, fr, tot, p->st.allocated);
            } else {
                ck_cu_fail(r, "cuMemAlloc", __func__, __FILE__, __LINE__);
            }
            return NULL;
        }
        b = new_header(p);
        if (!b) { ck_cu.cuMemFree_v2(ptr); pthread_mutex_unlock(&p->mu); ck_error_set(CK_ERR_MEMORY, "out of host memory"); return NULL; }
        b->ptr = ptr;
        b->size = sz;
        p->st.reserved += sz;
        p->st.n_system_alloc++;
    }
    b->stream = s;
    size_t h = hash_ptr(b->ptr);
    b->next = p->live_[h];
    p->live_[h] = b;
    p->st.allocated += sz;
    if (p->st.allocated > p->st.peak_allocated) p->st.peak_allocated = p->st.allocated;
    pthread_mutex_unlock(&p->mu);
    return (void *)(uintptr_t)b->ptr;
}

void ck_cuda_free(ck_device dev, void *ptr, size_t nbytes)
{
    /* scratch memory of a captured kernel: the replays use it */
    if (__builtin_expect(__atomic_load_n(&ck_graph_captures_, __ATOMIC_RELAXED) != 0, 0) &&
        ck_graph_defer_free(dev, ck_cuda_free, ptr, nbytes))
        return;
    int d = dev.index;
    ck_pool *p = &pools_[d];
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)ptr;
    if (use_driver_pool()) {
        if (ck_cuda_use(d) == CK_OK) ck_cu.cuMemFreeAsync(dp, ck_cuda_current_stream(d));
        pthread_mutex_lock(&p->mu);
        p->st.allocated -= nbytes;
        pthread_mutex_unlock(&p->mu);
        return;
    }
    pthread_mutex_lock(&p->mu);
    ck_block **pp = &p->live_[hash_ptr(dp)], *b;
    for (b = *pp; b; pp = &b->next, b = b->next)
        if (b->ptr == dp) break;
    if (b) {
        *pp = b->next;
        p->st.allocated -= b->size;
        p->st.cached += b->size;
        /* the streams it was used on are marked now: the block is reused
         * once they are past this point */
        int kept = 0;
        for (int i = 0; i < b->nuses; i++) {
            ck_use u = b->uses[i];
            if (!u.m && (ck_cuda_use(d) != CK_OK || !(u.m = mark_new(u.s)))) {
                if (ck_cuda_use(d) == CK_OK) ck_cu.cuStreamSynchronize(u.s);
                ck_error_clear();
                continue;
            }
            b->uses[kept++] = u;
        }
        b->nuses = kept;
        if (kept) {
            b->next = p->pending;
            p->pending = b;
        } else {
            size_t h = hash_size(b->size);
            b->next = p->free_[h];
            p->free_[h] = b;
        }
    }
    pthread_mutex_unlock(&p->mu);
}

/* Note that stream s uses the live block at ptr; 0 when it cannot be
 * noted (too many streams), and the caller waits for s instead. */
static int block_note_use(int d, void *ptr, CUstream s)
{
    ck_pool *p = &pools_[d];
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)ptr;
    int ok = 1;
    pthread_mutex_lock(&p->mu);
    ck_block *b = p->live_[hash_ptr(dp)];
    while (b && b->ptr != dp) b = b->next;
    if (b && b->stream != s) {
        int i = 0;
        while (i < b->nuses && (b->uses[i].m || b->uses[i].s != s)) i++;
        if (i == b->nuses) {
            if (i < CK_BLOCK_USES) b->uses[b->nuses++] = (ck_use){s, NULL};
            else ok = 0;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return ok;
}

ck_status ck_cuda_record_stream(ck_device dev, void *ptr, ck_stream s)
{
    ck_cuda_fuse_flush_pending();
    ck_status st = ck_cuda_use(dev.index);
    if (st != CK_OK || use_driver_pool()) return st;
    /* a block used by more streams than it notes: s's work so far is waited for */
    if (!block_note_use(dev.index, ptr, (CUstream)s))
        return ck_cuda_wait_stream(dev.index, (CUstream)s, "record_stream (a buffer used by too many streams)");
    return CK_OK;
}

/* Stream s of device d is about to be destroyed, and its handle may be
 * given to the next stream created: the blocks that name it get a mark
 * recorded on it now instead (live blocks used there, blocks made there,
 * live or freed, whose work there a later stream with the same handle would
 * not follow, and freed blocks cached for reuse there); the pinned blocks
 * forget it likewise.  Without a mark, the stream is waited for.  The
 * device's context is current. */
void ck_cuda_memory_stream_gone(int d, CUstream s)
{
    pthread_once(&pools_once_, pools_init);
    ck_pool *p = &pools_[d];
    ck_mark *m = NULL;
    int waited = 0;
    pthread_mutex_lock(&p->mu);
    for (int h = 0; h < CK_NBUCKETS && !waited; h++) {
        for (ck_block *b = p->live_[h]; b && !waited; b = b->next) {
            int made_here = b->stream == s, noted = 0;
            for (int i = 0; i < b->nuses; i++) noted |= !b->uses[i].m && b->uses[i].s == s;
            if (!made_here && !noted) continue;
            if (!m && !(m = mark_new(s))) { waited = 1; break; }
            if (noted) {
                for (int i = 0; i < b->nuses; i++)
                    if (!b->uses[i].m && b->uses[i].s == s) { b->uses[i].m = m; m->refs++; }
            } else if (b->nuses < CK_BLOCK_USES) {
                b->uses[b->nuses++] = (ck_use){s, m};
                m->refs++;
            } else {
                waited = 1;
            }
        }
        for (ck_block **pp = &p->free_[h], *b; !waited && (b = *pp);) {
            if (b->stream != s) { pp = &b->next; continue; }
            if (!m && !(m = mark_new(s))) { waited = 1; break; }
            *pp = b->next;
            b->uses[0] = (ck_use){s, m};
            b->nuses = 1;
            m->refs++;
            b->next = p->pending;
            p->pending = b;
        }
    }
    /* freed blocks waiting for other streams, made on this one (those just
     * moved there from the cache have its mark already) */
    for (ck_block *b = p->pending; b && !waited; b = b->next) {
        if (b->stream != s || (m && b->nuses && b->uses[0].m == m)) continue;
        if (!m && !(m = mark_new(s))) { waited = 1; break; }
        if (b->nuses < CK_BLOCK_USES) {
            b->uses[b->nuses++] = (ck_use){s, m};
            m->refs++;
        } else {
            waited = 1;
        }
    }
    if (waited) {
        /* the stream's work is done: the uses that named it can go */
        ck_cu.cuStreamSynchronize(s);
        for (int h = 0; h < CK_NBUCKETS; h++)
            for (ck_block *b = p->live_[h]; b; b = b->next) {
                int k = 0;
                for (int i = 0; i < b->nuses; i++)
                    if (b->uses[i].m || b->uses[i].s != s) b->uses[k++] = b->uses[i];
                b->nuses = k;
            }
    }
    mark_unref(m);
    pthread_mutex_unlock(&p->mu);
    pinned_stream_gone(s);
    ck_error_clear();
}

ck_status ck_cuda_memory_empty_cache(ck_device dev)
{
    int d = dev.index;
    pthread_once(&pools_once_, pools_init);
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    /* blocks may still be in use by queued work on their streams */
    s = ck_cuda_wait_device(d, "cuCtxSynchronize");
    if (s != CK_OK) return s;
    if (use_driver_pool() && driver_pool_ready_[d]) {
        CUmemoryPool pool;
        CK_CHECK_CU(ck_cu.cuDeviceGetDefaultMemPool(&pool, ck_cuda_dev(d)->dev));
        CK_CHECK_CU(ck_cu.cuMemPoolTrimTo(pool, 0));
    }
    pthread_mutex_lock(&pools_[d].mu);
    pending_settle(&pools_[d], 1);
    release_cached(&pools_[d]);
    pthread_mutex_unlock(&pools_[d].mu);
    return CK_OK;
}

ck_status ck_cuda_memory_stats(ck_device dev, ck_mem_stats *out)
{
    pthread_once(&pools_once_, pools_init);
    pthread_mutex_lock(&pools_[dev.index].mu);
    *out = pools_[dev.index].st;
    pthread_mutex_unlock(&pools_[dev.index].mu);
    return CK_OK;
}

ck_status ck_cuda_memory_set_limit(ck_device dev, size_t limit)
{
    pthread_once(&pools_once_, pools_init);
    pthread_mutex_lock(&pools_[dev.index].mu);
    pools_[dev.index].st.limit = limit;
    pthread_mutex_unlock(&pools_[dev.index].mu);
    return CK_OK;
}

ck_status ck_cuda_memory_reset_peak(ck_device dev)
{
    pthread_once(&pools_once_, pools_init);
    pthread_mutex_lock(&pools_[dev.index].mu);
    pools_[dev.index].st.peak_allocated = pools_[dev.index].st.allocated;
    pthread_mutex_unlock(&pools_[dev.index].mu);
    return CK_OK;
}

/* ----------------------------------------------------------- pinned */

/* Page-locked host blocks, from the driver, cached by size like device
 * blocks; the copy paths recognise them and skip staging (a copy from
 * pinned memory is asynchronous). */
#define CK_PINNED_MAX 64
#define CK_PINNED_MARKS 4
static pthread_mutex_t pinned_mu = PTHREAD_MUTEX_INITIALIZER;
/* A block's marks: an event per stream an asynchronous copy used it on,
 * recorded after the last such copy there (s_live 0: the stream is gone,
 * the event stays), so that the block is handed out again (or freed) only
 * once every one of those copies is done; chunks of one block copied on
 * several streams need one each. */
typedef struct pinned_mark {
    CUstream s;
    CUevent ev;
    CUcontext ctx;
    int s_live, set;
} pinned_mark;
static struct {
    char *ptr;
    size_t size;
    int in_use;
    pinned_mark marks[CK_PINNED_MARKS];
} pinned_[CK_PINNED_MAX];

static int pinned_find(const void *p, size_t n)
{
    for (int i = 0; i < CK_PINNED_MAX; i++)
        if (pinned_[i].ptr && pinned_[i].in_use && (const char *)p >= pinned_[i].ptr &&
            (const char *)p + n <= pinned_[i].ptr + pinned_[i].size)
            return i;
    return -1;
}

static int mark_done(pinned_mark *k)
{
    if (k->set && ck_cu.cuEventQuery(k->ev) == CUDA_ERROR_NOT_READY) return 0;
    k->set = 0;
    return 1;
}

/* Whether slot i's copies are done (caller holds pinned_mu). */
static int pinned_idle(int i)
{
    int idle = 1;
    for (int k = 0; k < CK_PINNED_MARKS; k++) idle &= mark_done(&pinned_[i].marks[k]);
    return idle;
}

/* After an asynchronous copy on s (of the current context) to or from the
 * pinned block holding p. */
static void pinned_note_use(const void *p, size_t n, CUstream s)
{
    CUcontext ctx = NULL;
    ck_cu.cuCtxGetCurrent(&ctx);
    pthread_mutex_lock(&pinned_mu);
    int i = pinned_find(p, n);
    pinned_mark *k = NULL;
    for (int j = 0; i >= 0 && j < CK_PINNED_MARKS && !k; j++) {
        pinned_mark *c = &pinned_[i].marks[j];
        if (c->set && c->s_live && c->s == s && c->ctx == ctx) k = c;   /* later in the same stream */
    }
    for (int j = 0; i >= 0 && j < CK_PINNED_MARKS && !k; j++)
        if (mark_done(&pinned_[i].marks[j])) k = &pinned_[i].marks[j];
    if (i >= 0 && !k) {   /* marks for more streams than it keeps: the oldest is waited for */
        k = &pinned_[i].marks[0];
        ck_cu.cuEventSynchronize(k->ev);
        k->set = 0;
    }
    if (k && k->ev && k->ctx != ctx) {
        ck_cu.cuEventDestroy_v2(k->ev);
        k->ev = NULL;
    }
    if (k && (k->ev || ck_cu.cuEventCreate(&k->ev, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS)) {
        k->ctx = ctx;
        k->s = s;
        k->s_live = 1;
        k->set = ck_cu.cuEventRecord(k->ev, s) == CUDA_SUCCESS;
        /* unmarked, the copy is waited for */
        if (!k->set) ck_cu.cuStreamSynchronize(s);
    } else if (i >= 0) {
        ck_cu.cuStreamSynchronize(s);
    }
    pthread_mutex_unlock(&pinned_mu);
}

static void pinned_stream_gone(CUstream s)
{
    pthread_mutex_lock(&pinned_mu);
    for (int i = 0; i < CK_PINNED_MAX; i++)
        for (int k = 0; k < CK_PINNED_MARKS; k++)
            if (pinned_[i].marks[k].s == s) pinned_[i].marks[k].s_live = 0;
    pthread_mutex_unlock(&pinned_mu);
}

static void pinned_release(void *ctx)
{
    pthread_mutex_lock(&pinned_mu);
    for (int i = 0; i < CK_PINNED_MAX; i++)
        if (pinned_[i].ptr == ctx) pinned_[i].in_use = 0;
    pthread_mutex_unlock(&pinned_mu);
}

void *ck_cuda_pinned_alloc(size_t nbytes, ck_release_fn *release, void **ctx)
{
    if (ck_cuda_use(ck_cuda_current_device()) != CK_OK) return NULL;
    size_t sz = round_size(nbytes);
    char *p = NULL;
    pthread_mutex_lock(&pinned_mu);
    int slot = -1;
    for (int i = 0; i < CK_PINNED_MAX && !p; i++)
        if (pinned_[i].ptr && !pinned_[i].in_use && pinned_[i].size == sz && pinned_idle(i)) { p = pinned_[i].ptr; slot = i; }
    if (!p) {
        for (int i = 0; i < CK_PINNED_MAX && slot < 0; i++)
            if (!pinned_[i].ptr) slot = i;
        if (slot < 0) {   /* full: drop an idle block */
            for (int i = 0; i < CK_PINNED_MAX && slot < 0; i++)
                if (!pinned_[i].in_use && pinned_idle(i)) { ck_cu.cuMemFreeHost(pinned_[i].ptr); pinned_[i].ptr = NULL; slot = i; }
        }
        CUresult r = slot < 0 ? CUDA_ERROR_OUT_OF_MEMORY : ck_cu.cuMemHostAlloc((void **)&p, sz, CU_MEMHOSTALLOC_PORTABLE);
        if (r != CUDA_SUCCESS) {
            pthread_mutex_unlock(&pinned_mu);
            ck_cu_fail(r, "cuMemHostAlloc", __func__, __FILE__, __LINE__);
            return NULL;
        }
        pinned_[slot].ptr = p;
        pinned_[slot].size = sz;
    }
    pinned_[slot].in_use = 1;
    pthread_mutex_unlock(&pinned_mu);
    *release = pinned_release;
    *ctx = p;
    return p;
}

int ck_cuda_is_pinned(const void *p, size_t n)
{
    pthread_mutex_lock(&pinned_mu);
    int r = pinned_find(p, n) >= 0;
    pthread_mutex_unlock(&pinned_mu);
    return r;
}

/* ----------------------------------------------------------- copies */

#define CK_STAGE_MIN ((size_t)8 << 20)     /* below: the driver's own staging */
#define CK_STAGE_CHUNK ((size_t)16 << 20)

typedef struct ck_stage {
    pthread_mutex_t mu;
    void *buf[2];
    CUevent done[2];
    CUstream stream;
    int ready;
} ck_stage;

static ck_stage stages_[CK_CUDA_MAX_DEVICES];
static pthread_mutex_t stage_init_mu = PTHREAD_MUTEX_INITIALIZER;

static ck_status stage_get(int d, ck_stage **out)
{
    ck_stage *st = &stages_[d];
    pthread_mutex_lock(&stage_init_mu);
    if (!st->ready) {
        pthread_mutex_init(&st->mu, NULL);
        for (int i = 0; i < 2; i++) {
            CUresult r = ck_cu.cuMemHostAlloc(&st->buf[i], CK_STAGE_CHUNK, CU_MEMHOSTALLOC_PORTABLE);
            if (r == CUDA_SUCCESS) r = ck_cu.cuEventCreate(&st->done[i], CU_EVENT_DISABLE_TIMING);
            if (r != CUDA_SUCCESS) {
                pthread_mutex_unlock(&stage_init_mu);
                return ck_cu_fail(r, "cuMemHostAlloc (staging buffers)", __func__, __FILE__, __LINE__);
            }
        }
        CUresult r = ck_cu.cuStreamCreate(&st->stream, CU_STREAM_NON_BLOCKING);
        if (r != CUDA_SUCCESS) {
            pthread_mutex_unlock(&stage_init_mu);
            return ck_cu_fail(r, "cuStreamCreate (staging)", __func__, __FILE__, __LINE__);
        }
        st->ready = 1;
    }
    pthread_mutex_unlock(&stage_init_mu);
    *out = st;
    return CK_OK;
}

/* Make stream `waiter` wait for the work queued so far on `producer`.
 * The current context must be the producer's; a NULL stream means that
 * context's default stream, so a wait across devices goes through
 * stream_follow_peer. */
static CUresult stream_follow(CUstream waiter, CUstream producer)
{
    ck_cuda_fuse_flush_pending();
    CUevent ev;
    CUresult r = ck_cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) return r;
    r = ck_cu.cuEventRecord(ev, producer);
    if (r == CUDA_SUCCESS) r = ck_cu.cuStreamWaitEvent(waiter, ev, 0);
    ck_cu.cuEventDestroy_v2(ev);
    return r;
}

/* The same across devices: record under the producer's context, wait
 * under the waiter's (left current). */
static CUresult stream_follow_peer(int wd, int pd)
{
    CUevent ev;
    ck_cuda_use(pd);
    CUresult r = ck_cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) return r;
    r = ck_cu.cuEventRecord(ev, ck_cuda_current_stream(pd));
    ck_cuda_use(wd);
    if (r == CUDA_SUCCESS) r = ck_cu.cuStreamWaitEvent(ck_cuda_current_stream(wd), ev, 0);
    ck_cu.cuEventDestroy_v2(ev);
    return r;
}

typedef struct memcpy_ctx { char *dst; const char *src; } memcpy_ctx;

static void memcpy_task(void *vctx, int64_t b, int64_t e, int worker)
{
    (void)worker;
    memcpy_ctx *c = vctx;
    memcpy(c->dst + b, c->src + b, (size_t)(e - b));
}

/* memcpy on every core: one core cannot keep up with the PCIe link */
static void par_memcpy(void *dst, const void *src, size_t n)
{
    memcpy_ctx c = {dst, src};
    ck_parallel_for((int64_t)n, (int64_t)1 << 20, memcpy_task, &c);
}

/* Small copies from pageable memory: through a ring of pinned memory, so
 * the host copies the bytes and goes on while the GPU is still busy with
 * earlier work (the driver's own path waits for the stream: a training
 * loop's `.to(device)` a batch would wait for the previous step).  Regions
 * are taken in order around the ring, each with the event of its copy; a
 * region is taken again once the copies that used it are done, which the
 * oldest ones are first.  One ring a device. */
#define CK_RING_BYTES ((size_t)8 << 20)
#define CK_RING_MAX (CK_RING_BYTES / 4)       /* larger copies: the paths below */
#define CK_RING_SLOTS 128

typedef struct ck_ring_region {
    size_t off, n;
    CUevent ev;
} ck_ring_region;

typedef struct ck_ring {
    pthread_mutex_t mu;
    char *buf;
    size_t head;                      /* where the next region starts */
    ck_ring_region q[CK_RING_SLOTS];  /* in flight, oldest first (from q0) */
    int q0, qn;
    CUevent spare[CK_RING_SLOTS];     /* events of regions given back */
    int nspare;
    int state;                        /* 0 not made, 1 ready, -1 unusable */
} ck_ring;

static ck_ring rings_[CK_CUDA_MAX_DEVICES];
static pthread_mutex_t ring_init_mu = PTHREAD_MUTEX_INITIALIZER;

static ck_ring *ring_get(int d)
{
    ck_ring *g = &rings_[d];
    pthread_mutex_lock(&ring_init_mu);
    if (!g->state) {
        pthread_mutex_init(&g->mu, NULL);
        void *b = NULL;
        g->state = ck_cu.cuMemHostAlloc(&b, CK_RING_BYTES, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS ? 1 : -1;
        g->buf = b;
    }
    pthread_mutex_unlock(&ring_init_mu);
    return g->state == 1 ? g : NULL;
}

/* The oldest region, its copy waited for, given back. */
static ck_status ring_pop(int d, ck_ring *g)
{
    ck_ring_region *r = &g->q[g->q0];
    ck_status s = ck_cu.cuEventQuery(r->ev) == CUDA_SUCCESS ? CK_OK : ck_cuda_wait_event(d, r->ev, "a small host-to-device copy");
    if (s != CK_OK) return s;
    g->spare[g->nspare++] = r->ev;
    g->q0 = (g->q0 + 1) % CK_RING_SLOTS;
    g->qn--;
    return CK_OK;
}

/* Copy n <= CK_RING_MAX bytes from pageable src to dst on stream cs
 * through the ring; 1 when done (or failed: s says), 0 when the ring is
 * not to be had (the caller copies the other way). */
static int ring_copy(int d, void *dst, const void *src, size_t n, CUstream cs, ck_status *s)
{
    ck_ring *g = ring_get(d);
    if (!g) return 0;
    const size_t m = (n + 255) & ~(size_t)255;
    pthread_mutex_lock(&g->mu);
    *s = CK_OK;
    if (!g->qn) g->head = 0;
    if (g->head + m > CK_RING_BYTES) g->head = 0;
    while (*s == CK_OK && g->qn) {
        const ck_ring_region *o = &g->q[g->q0];
        int overlaps = o->off < g->head + m && g->head < o->off + o->n;
        if (!overlaps && g->qn < CK_RING_SLOTS) break;
        *s = ring_pop(d, g);
    }
    CUevent ev = NULL;
    CUresult r = CUDA_SUCCESS;
    if (*s == CK_OK) {
        if (g->nspare) ev = g->spare[--g->nspare];
        else r = ck_cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
    }
    if (*s == CK_OK && r == CUDA_SUCCESS) {
        char *slot = g->buf + g->head;
        memcpy(slot, src, n);
        r = ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, slot, n, cs);
        if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(ev, cs);
        if (r == CUDA_SUCCESS) {
            g->q[(g->q0 + g->qn) % CK_RING_SLOTS] = (ck_ring_region){g->head, m, ev};
            g->qn++;
            g->head += m;
        } else {
            /* the region may be read yet: wait for the stream before reuse */
            ck_cu.cuStreamSynchronize(cs);
            g->spare[g->nspare++] = ev;
        }
    }
    pthread_mutex_unlock(&g->mu);
    if (*s == CK_OK && r != CUDA_SUCCESS)
        *s = ck_cu_fail(r, "cuMemcpyHtoDAsync (from the pinned ring)", __func__, __FILE__, __LINE__);
    return 1;
}

ck_status ck_cuda_copy_from_host(ck_device dev, void *dst, const void *src, size_t n)
{
    int d = dev.index;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK || n == 0) return s;
    CUstream cs = ck_cuda_current_stream(d);
    /* from pinned memory: asynchronous, no staging */
    if (ck_cuda_is_pinned(src, n)) {
        CK_CHECK_CU(ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, src, n, cs));
        if (!ck_graph_capturing(dev)) pinned_note_use(src, n, cs);
        return CK_OK;
    }
    if (n <= CK_RING_MAX && !ck_graph_capturing(dev) && ring_copy(d, dst, src, n, cs, &s)) return s;
    s = ck_sync_point(dev, "a copy from pageable host memory");
    if (s != CK_OK) return s;
    if (n < CK_STAGE_MIN) {
        /* From pageable memory the driver waits for the stream, blocking:
         * wait first, where Ctrl-C can end it. */
        s = ck_cuda_wait_stream(d, cs, "cuMemcpyHtoDAsync");
        if (s != CK_OK) return s;
        CK_CHECK_CU(ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, src, n, cs));
        return CK_OK;
    }
    ck_stage *st;
    s = stage_get(d, &st);
    if (s != CK_OK) return s;
    pthread_mutex_lock(&st->mu);
    /* the copy must follow work already queued on the current stream */
    CUresult r = stream_follow(st->stream, cs);
    for (size_t off = 0, k = 0; off < n && r == CUDA_SUCCESS && s == CK_OK; off += CK_STAGE_CHUNK, k ^= 1) {
        size_t m = n - off < CK_STAGE_CHUNK ? n - off : CK_STAGE_CHUNK;
        s = ck_cuda_wait_event(d, st->done[k], "staged host-to-device copy");   /* the buffer's previous DMA is done */
        if (s != CK_OK) break;
        par_memcpy(st->buf[k], (const char *)src + off, m);
        r = ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst + off, st->buf[k], m, st->stream);
        if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(st->done[k], st->stream);
    }
    /* later work on the current stream must see the data (and must not
     * reuse dst before a copy cut short has landed) */
    if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(st->done[0], st->stream);
    if (r == CUDA_SUCCESS) r = ck_cu.cuStreamWaitEvent(cs, st->done[0], 0);
    if (r == CUDA_SUCCESS && s == CK_OK)   /* staging buffers reusable, src may go */
        s = ck_cuda_wait_stream(d, st->stream, "staged host-to-device copy");
    pthread_mutex_unlock(&st->mu);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "staged host-to-device copy", __func__, __FILE__, __LINE__);
    return s;
}

ck_status ck_cuda_copy_to_host(ck_device dev, void *dst, const void *src, size_t n)
{
    int d = dev.index;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK || n == 0) return s;
    s = ck_sync_point(dev, "a copy to the host");
    if (s != CK_OK) return s;
    CUstream cs = ck_cuda_current_stream(d);
    if (n < CK_STAGE_MIN || ck_cuda_is_pinned(dst, n)) {
        /* The work before the copy is waited for where Ctrl-C can end the
         * wait, so none is cut short with the copy still queued to write dst. */
        s = ck_cuda_wait_stream(d, cs, "cuMemcpyDtoHAsync");
        if (s != CK_OK) return s;
        CK_CHECK_CU(ck_cu.cuMemcpyDtoHAsync_v2(dst, (CUdeviceptr)(uintptr_t)src, n, cs));
        CK_CHECK_CU(ck_cu.cuStreamSynchronize(cs));
        return CK_OK;
    }
    ck_stage *st;
    s = stage_get(d, &st);
    if (s != CK_OK) return s;
    pthread_mutex_lock(&st->mu);
    CUresult r = stream_follow(st->stream, cs);
    size_t nchunks = (n + CK_STAGE_CHUNK - 1) / CK_STAGE_CHUNK;
    /* DMA chunk k+1 while the CPU copies chunk k out of its buffer */
    for (size_t k = 0; k < nchunks && r == CUDA_SUCCESS; k++) {
        if (k == 0) {
            size_t m = n < CK_STAGE_CHUNK ? n : CK_STAGE_CHUNK;
            r = ck_cu.cuMemcpyDtoHAsync_v2(st->buf[0], (CUdeviceptr)(uintptr_t)src, m, st->stream);
            if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(st->done[0], st->stream);
        }
        if (r == CUDA_SUCCESS && k + 1 < nchunks) {
            size_t off = (k + 1) * CK_STAGE_CHUNK, m = n - off < CK_STAGE_CHUNK ? n - off : CK_STAGE_CHUNK;
            r = ck_cu.cuMemcpyDtoHAsync_v2(st->buf[(k + 1) & 1], (CUdeviceptr)(uintptr_t)src + off, m, st->stream);
            if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(st->done[(k + 1) & 1], st->stream);
        }
        if (r == CUDA_SUCCESS) {
            /* cut short, the DMA lands in the staging buffers only */
            s = ck_cuda_wait_event(d, st->done[k & 1], "staged device-to-host copy");
            if (s != CK_OK) break;
            size_t off = k * CK_STAGE_CHUNK, m = n - off < CK_STAGE_CHUNK ? n - off : CK_STAGE_CHUNK;
            par_memcpy((char *)dst + off, st->buf[k & 1], m);
        }
    }
    pthread_mutex_unlock(&st->mu);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "staged device-to-host copy", __func__, __FILE__, __LINE__);
    return s;
}

/* Peer access between two GPUs, enabled both ways the first time they copy
 * (or ask): 1 on, -1 the GPUs cannot (the driver then stages the copies
 * through host memory), 0 not tried yet. */
static int peer_state_[CK_CUDA_MAX_DEVICES][CK_CUDA_MAX_DEVICES];
static pthread_mutex_t peer_mu_ = PTHREAD_MUTEX_INITIALIZER;

static int peer_enable_one(int from, int to)
{
    int can = 0;
    if (ck_cu.cuDeviceCanAccessPeer(&can, ck_cuda_dev(from)->dev, ck_cuda_dev(to)->dev) != CUDA_SUCCESS || !can) {
        ck_error_clear();   /* an old driver's stub: no peer access, the copies still work */
        return -1;
    }
    if (ck_cuda_use(from) != CK_OK) return -1;
    CUresult r = ck_cu.cuCtxEnablePeerAccess(ck_cuda_dev(to)->ctx, 0);
    return r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ? 1 : -1;
}

int ck_cuda_peer_access(int a, int b)
{
    if (a == b) return 1;
    if (a < 0 || b < 0 || a >= CK_CUDA_MAX_DEVICES || b >= CK_CUDA_MAX_DEVICES) return -1;
    int prev = ck_cuda_current_device();
    if (ck_cuda_use(a) != CK_OK || ck_cuda_use(b) != CK_OK) {   /* both initialised: their devices and contexts */
        ck_error_clear();
        ck_cuda_use(prev);
        return -1;
    }
    pthread_mutex_lock(&peer_mu_);
    if (!peer_state_[a][b]) {
        int ab = peer_enable_one(a, b), ba = peer_enable_one(b, a);
        peer_state_[a][b] = peer_state_[b][a] = ab > 0 && ba > 0 ? 1 : -1;
    }
    int st = peer_state_[a][b];
    pthread_mutex_unlock(&peer_mu_);
    ck_cuda_use(prev);
    return st;
}

/* Between two GPUs: on the destination's current stream, after the work
 * queued on the source's current stream, and before any later work there
 * (the source block may be reused in that stream's order).  With peer
 * access on (ck_cuda_peer_access) the copy goes over the GPUs' link;
 * without it the driver stages it through pinned host memory. */
ck_status ck_cuda_copy_peer(ck_device dst_dev, void *dst, ck_device src_dev, const void *src, size_t n)
{
    int sd = src_dev.index, dd = dst_dev.index;
    ck_status s = ck_cuda_use(sd);
    if (s == CK_OK) s = ck_cuda_use(dd);
    if (s != CK_OK || n == 0) return s;
    ck_cuda_peer_access(dd, sd);
    ck_cuda_use(dd);
    CUresult r = stream_follow_peer(dd, sd);
    if (r == CUDA_SUCCESS)
        r = ck_cu.cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, ck_cuda_dev(dd)->ctx, (CUdeviceptr)(uintptr_t)src,
                                    ck_cuda_dev(sd)->ctx, n, ck_cuda_current_stream(dd));
    if (r == CUDA_SUCCESS) r = stream_follow_peer(sd, dd);
    ck_cuda_use(dd);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuMemcpyPeerAsync", __func__, __FILE__, __LINE__);
    return CK_OK;
}

/* On stream s without waiting: pinned host memory only (pageable memory
 * takes the synchronous copies, on s).  Outside a capture the blocks on
 * both sides are kept from reuse until s is done with them; inside one
 * the graph's pool keeps the device side, and the events of that would be
 * captured nodes rather than marks. */
ck_status ck_cuda_copy_async(ck_device dev, void *dst, const void *src, size_t n, int to_host, ck_stream s,
                             void *block)
{
    ck_cuda_fuse_flush_pending();
    int d = dev.index;
    ck_status st = ck_cuda_use(d);
    if (st != CK_OK) return st;
    CUstream cs = (CUstream)s;
    const void *host = to_host ? dst : src;
    int capturing = ck_graph_capturing(dev);
    if (!ck_cuda_is_pinned(host, n)) {
        if (capturing)
            return ck_error_set(CK_ERR_RUNTIME, "a copy %s pageable host memory cannot be captured in a graph: "
                                "use pinned memory (cudakit.cuda.pinned_empty)", to_host ? "to" : "from");
        CUstream prev = ck_cuda_current_stream(d);
        ck_cuda_set_current_stream(d, cs);
        st = to_host ? ck_cuda_copy_to_host(dev, dst, src, n) : ck_cuda_copy_from_host(dev, dst, src, n);
        ck_cuda_set_current_stream(d, prev);
        return st;
    }
    if (to_host) CK_CHECK_CU(ck_cu.cuMemcpyDtoHAsync_v2(dst, (CUdeviceptr)(uintptr_t)src, n, cs));
    else CK_CHECK_CU(ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, src, n, cs));
    if (capturing) return CK_OK;
    pinned_note_use(host, n, cs);
    if (block && !use_driver_pool() && !block_note_use(d, block, cs))
        return ck_cuda_wait_stream(d, cs, "asynchronous copy (its buffer is used by too many streams)");
    return CK_OK;
}
