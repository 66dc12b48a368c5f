/* The profiler's record store, the driver-timed kernel records, the
 * averages and the Chrome trace; the synchronisation debug mode. */
#define _GNU_SOURCE
#include "profiler.h"
#include "cudakit_device.h"
#include "../platform/cuda_api.h"
#include "../platform/nvtx_api.h"
#include "../base/sbuf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ck_obs_flags_;

/* ------------------------------------------------------------- store */

#define CHUNK_BITS 10
#define CHUNK (1 << CHUNK_BITS)
#define STACK_MAX 64

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static int active_;
static unsigned flags_;
static int generation_;            /* a new profile makes the threads' stacks stale */
static ck_prof_slot **chunks_;
static int64_t nchunks_, cchunks_;
static int64_t count_;
static struct timespec t0_;
static int nthreads_;

/* Names: each string once per profile, found by content. */
static char **names_;
static size_t names_cap_, names_n_;

static _Thread_local int tl_gen_ = -1;
static _Thread_local int tl_thread_ = -1;
static _Thread_local int tl_depth_;
static _Thread_local ck_prof_slot *tl_stack_[STACK_MAX];

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The profile's copy of name (under mu_); NULL out of memory. */
static const char *intern(const char *name)
{
    if (!name) name = "";
    if ((names_n_ + 1) * 2 > names_cap_) {
        size_t nc = names_cap_ ? names_cap_ * 2 : 256;
        char **t = calloc(nc, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < names_cap_; i++) {
            if (!names_[i]) continue;
            size_t j = str_hash(names_[i]) & (nc - 1);
            while (t[j]) j = (j + 1) & (nc - 1);
            t[j] = names_[i];
        }
        free(names_);
        names_ = t;
        names_cap_ = nc;
    }
    size_t j = str_hash(name) & (names_cap_ - 1);
    while (names_[j]) {
        if (!strcmp(names_[j], name)) return names_[j];
        j = (j + 1) & (names_cap_ - 1);
    }
    char *c = strdup(name);
    if (!c) return NULL;
    names_[j] = c;
    names_n_++;
    return c;
}

static void names_free(void)
{
    for (size_t i = 0; i < names_cap_; i++) free(names_[i]);
    free(names_);
    names_ = NULL;
    names_cap_ = names_n_ = 0;
}

int64_t ck_prof_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)(t.tv_sec - t0_.tv_sec) * 1000000000 + (t.tv_nsec - t0_.tv_nsec);
}

ck_prof_slot *ck_prof_open(ck_prof_kind kind, const char *name, ck_device dev)
{
    if (!__atomic_load_n(&active_, __ATOMIC_ACQUIRE)) return NULL;
    pthread_mutex_lock(&mu_);
    ck_prof_slot *r = NULL;
    if (!active_) goto out;
    if (tl_gen_ != generation_) {
        tl_gen_ = generation_;
        tl_depth_ = 0;
    }
    if (tl_thread_ < 0) tl_thread_ = nthreads_++;
    int64_t c = count_ >> CHUNK_BITS;
    if (c == nchunks_) {
        if (nchunks_ == cchunks_) {
            int64_t nc = cchunks_ ? cchunks_ * 2 : 64;
            ck_prof_slot **t = realloc(chunks_, (size_t)nc * sizeof *t);
            if (!t) goto out;
            chunks_ = t;
            cchunks_ = nc;
        }
        if (!(chunks_[nchunks_] = malloc(CHUNK * sizeof(ck_prof_slot)))) goto out;
        nchunks_++;
    }
    const char *nm = intern(name);
    if (!nm) goto out;
    r = &chunks_[c][count_ & (CHUNK - 1)];
    memset(r, 0, sizeof *r);
    r->pub.kind = kind;
    r->pub.name = nm;
    r->pub.dev = dev;
    r->pub.thread = tl_thread_;
    r->pub.dev_us = -1;
    r->pub.dev_start_us = -1;
    ck_prof_slot *parent = tl_depth_ > 0 ? tl_stack_[tl_depth_ < STACK_MAX ? tl_depth_ - 1 : STACK_MAX - 1] : NULL;
    r->pub.parent = parent ? parent->index : -1;
    r->index = count_;
    r->pub.depth = tl_depth_;
    count_++;
    r->pub.host_start_ns = ck_prof_now_ns();
out:
    pthread_mutex_unlock(&mu_);
    if (r) {
        if (tl_depth_ < STACK_MAX) tl_stack_[tl_depth_] = r;
        tl_depth_++;
    }
    return r;
}

void ck_prof_close(ck_prof_slot *r)
{
    if (!r) return;
    r->pub.host_end_ns = ck_prof_now_ns();
    r->closed = 1;
    if (tl_gen_ == generation_ && tl_depth_ > 0) tl_depth_--;
}

ck_prof_slot *ck_prof_top(void)
{
    if (tl_gen_ != generation_ || tl_depth_ == 0) return NULL;
    return tl_stack_[tl_depth_ <= STACK_MAX ? tl_depth_ - 1 : STACK_MAX - 1];
}

ck_status ck_prof_store_start(unsigned flags)
{
    pthread_mutex_lock(&mu_);
    if (active_) {
        pthread_mutex_unlock(&mu_);
        return ck_error_set(CK_ERR_RUNTIME, "a profile is already on (profiles do not nest)");
    }
    for (int64_t k = 0; k < nchunks_; k++) free(chunks_[k]);
    nchunks_ = count_ = 0;
    names_free();
    generation_++;
    flags_ = flags;
    clock_gettime(CLOCK_MONOTONIC, &t0_);
    __atomic_store_n(&active_, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu_);
    return CK_OK;
}

void ck_prof_store_stop(void)
{
    pthread_mutex_lock(&mu_);
    __atomic_store_n(&active_, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu_);
}

unsigned ck_prof_store_flags(void) { return flags_; }
int64_t ck_prof_store_count(void) { return __atomic_load_n(&count_, __ATOMIC_ACQUIRE); }

ck_prof_slot *ck_prof_store_at(int64_t i)
{
    if (i < 0 || i >= count_) return NULL;
    return &chunks_[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

int ck_profiler_enabled(void) { return __atomic_load_n(&active_, __ATOMIC_ACQUIRE); }
int64_t ck_profiler_count(void) { return active_ ? 0 : count_; }

const ck_prof_record *ck_profiler_record(int64_t i)
{
    if (active_) return NULL;   /* read after stop: records are still being written before */
    ck_prof_slot *s = ck_prof_store_at(i);
    return s ? &s->pub : NULL;
}

void ck_profiler_clear(void)
{
    pthread_mutex_lock(&mu_);
    if (!active_) {
        for (int64_t k = 0; k < nchunks_; k++) free(chunks_[k]);
        nchunks_ = count_ = 0;
        names_free();
        generation_++;
    }
    pthread_mutex_unlock(&mu_);
}

/* ---------------------------------------------------- user ranges */

static _Thread_local int tl_ranges_;          /* ranges open on this thread */
static _Thread_local int tl_range_nvtx_;      /* bit k: range k pushed an NVTX range */
static _Thread_local ck_prof_slot *tl_range_rec_[STACK_MAX];

ck_status ck_profiler_range_push(const char *name)
{
    if (tl_ranges_ >= STACK_MAX)
        return ck_error_set(CK_ERR_RUNTIME, "record_function: more than %d ranges open", STACK_MAX);
    int nvtx = (ck_obs_flags_ & CK_OBS_NVTX) != 0;
    if (nvtx) ck_nvtx_range_push(name);
    if (tl_ranges_ < 31) tl_range_nvtx_ = (tl_range_nvtx_ & ~(1 << tl_ranges_)) | (nvtx << tl_ranges_);
    ck_device cpu = {CK_DEVICE_CPU, 0};
    tl_range_rec_[tl_ranges_++] = ck_prof_open(CK_PROF_RANGE, name, cpu);
    return CK_OK;
}

ck_status ck_profiler_range_pop(void)
{
    if (tl_ranges_ == 0) return ck_error_set(CK_ERR_RUNTIME, "record_function: no range is open on this thread");
    tl_ranges_--;
    ck_prof_slot *r = tl_range_rec_[tl_ranges_];
    /* a range left open across a profile's end belongs to the old profile */
    if (r && tl_gen_ == generation_) ck_prof_close(r);
    if (tl_ranges_ < 31 && (tl_range_nvtx_ >> tl_ranges_ & 1)) ck_nvtx_range_pop();
    return CK_OK;
}

/* ------------------------------------------- driver-timed kernel records */

/* Free events of each context, reused from profile to profile. */
typedef struct ev_pool { CUcontext ctx; CUevent *ev; int n, cap; int used; } ev_pool;
#define NPOOLS (2 * CK_MAX_GPUS)
static ev_pool pools_[NPOOLS];

/* A timing event of ctx (current), under mu_; NULL when none can be made. */
static CUevent pool_get(CUcontext ctx)
{
    ev_pool *p = NULL;
    for (int i = 0; i < NPOOLS && !p; i++)
        if (pools_[i].ctx == ctx) p = &pools_[i];
    for (int i = 0; i < NPOOLS && !p; i++)
        if (!pools_[i].ctx) { p = &pools_[i]; p->ctx = ctx; }
    if (!p) return NULL;
    p->used = 1;
    if (p->n) return p->ev[--p->n];
    CUevent e = NULL;
    if (ck_cu.cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return NULL;
    return e;
}

static void pool_put(CUcontext ctx, CUevent e)
{
    if (!e) return;
    for (int i = 0; i < NPOOLS; i++) {
        ev_pool *p = &pools_[i];
        if (p->ctx != ctx) continue;
        if (p->n == p->cap) {
            int nc = p->cap ? p->cap * 2 : 64;
            CUevent *t = realloc(p->ev, (size_t)nc * sizeof *t);
            if (!t) { ck_cu.cuEventDestroy_v2(e); return; }
            p->ev = t;
            p->cap = nc;
        }
        p->ev[p->n++] = e;
        return;
    }
    ck_cu.cuEventDestroy_v2(e);
}

static void *launch_before(const ck_cu_launch *l)
{
    ck_prof_slot *top = ck_prof_top();
    /* a user kernel's launch is recorded by the backend layer, with its name */
    if (top && top->pub.kind == CK_PROF_KERNEL && !top->closed) return NULL;
    ck_device dev = {CK_DEVICE_CUDA, 0};
    CUcontext ctx = NULL;
    if (ck_cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS) ctx = NULL;
    if (top && top->pub.dev.type == CK_DEVICE_CUDA) {
        dev = top->pub.dev;
    } else if (ctx) {
        CUdevice d;
        if (ck_cu.cuCtxGetDevice(&d) == CUDA_SUCCESS) dev.index = (int)d;
    }
    const char *name = ck_cu_function_name(l->f);
    ck_prof_slot *r = ck_prof_open(CK_PROF_KERNEL, name ? name : "(unnamed kernel)", dev);
    if (!r) return NULL;
    memcpy(r->pub.grid, l->grid, sizeof r->pub.grid);
    memcpy(r->pub.block, l->block, sizeof r->pub.block);
    r->pub.shared_mem = l->shmem;
    r->pub.stream = (uint64_t)(uintptr_t)l->stream;
    if (ctx) {
        pthread_mutex_lock(&mu_);
        r->ev[0] = pool_get(ctx);
        r->ev[1] = r->ev[0] ? pool_get(ctx) : NULL;
        pthread_mutex_unlock(&mu_);
        if (r->ev[1] && ck_cu.cuEventRecord(r->ev[0], l->stream) == CUDA_SUCCESS) {
            r->timer = CK_TIMER_DRIVER;
            r->ctx = ctx;
        } else {
            pthread_mutex_lock(&mu_);
            pool_put(ctx, r->ev[0]);
            pool_put(ctx, r->ev[1]);
            pthread_mutex_unlock(&mu_);
            r->ev[0] = r->ev[1] = NULL;
        }
    }
    return r;
}

static void launch_after(void *token, const ck_cu_launch *l, CUresult res)
{
    ck_prof_slot *r = token;
    if (!r) return;
    if (r->timer == CK_TIMER_DRIVER &&
        (res != CUDA_SUCCESS || ck_cu.cuEventRecord(r->ev[1], l->stream) != CUDA_SUCCESS)) {
        pthread_mutex_lock(&mu_);
        pool_put(r->ctx, r->ev[0]);
        pool_put(r->ctx, r->ev[1]);
        pthread_mutex_unlock(&mu_);
        r->ev[0] = r->ev[1] = NULL;
        r->timer = CK_TIMER_NONE;
    }
    ck_prof_close(r);
}

static const ck_cu_launch_observer launch_observer_ = {launch_before, launch_after};

void ck_prof_observe_launches(int on) { ck_cu_set_launch_observer(on ? &launch_observer_ : NULL); }

ck_status ck_prof_anchor(ck_prof_mark_fn mark, void *arg, int *best, double *now_us)
{
    int64_t shortest = INT64_MAX;
    for (int i = 0; i < CK_PROF_ANCHOR_TRIES; i++) {
        int64_t t0 = ck_prof_now_ns();
        ck_status s = mark(arg, i);
        int64_t t1 = ck_prof_now_ns();
        if (s != CK_OK) return s;
        if (t1 - t0 < shortest) {
            shortest = t1 - t0;
            *best = i;
            *now_us = (double)t1 / 1e3;
        }
    }
    return CK_OK;
}

typedef struct driver_marks { CUevent ev[CK_PROF_ANCHOR_TRIES]; } driver_marks;

static ck_status driver_mark(void *arg, int i)
{
    driver_marks *m = arg;
    CUresult r = ck_cu.cuEventCreate(&m->ev[i], CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(m->ev[i], NULL);
    if (r == CUDA_SUCCESS) r = ck_cu.cuEventSynchronize(m->ev[i]);
    return r == CUDA_SUCCESS ? CK_OK : ck_cu_fail(r, "timing the profiled kernels", __func__, __FILE__, __LINE__);
}

ck_status ck_prof_resolve_driver_events(void)
{
    ck_status st = CK_OK;
    CUcontext prev = NULL;
    int have_prev = 0;
    for (int i = 0; i < NPOOLS; i++) {
        ev_pool *p = &pools_[i];
        if (!p->ctx || !p->used) continue;
        p->used = 0;
        if (!have_prev) have_prev = ck_cu.cuCtxGetCurrent(&prev) == CUDA_SUCCESS;
        driver_marks m = {{NULL}};
        int best = 0;
        double now_us = 0;
        CUresult r = ck_cu.cuCtxSetCurrent(p->ctx);
        if (r == CUDA_SUCCESS) r = ck_cu.cuCtxSynchronize();
        ck_status s = r == CUDA_SUCCESS ? ck_prof_anchor(driver_mark, &m, &best, &now_us)
                                        : ck_cu_fail(r, "timing the profiled kernels", __func__, __FILE__, __LINE__);
        for (int64_t k = 0; k < count_; k++) {
            ck_prof_slot *sl = ck_prof_store_at(k);
            if (sl->timer != CK_TIMER_DRIVER || sl->ctx != p->ctx) continue;
            float ms = 0, back = 0;
            if (s == CK_OK && sl->closed && ck_cu.cuEventElapsedTime(&ms, sl->ev[0], sl->ev[1]) == CUDA_SUCCESS &&
                ck_cu.cuEventElapsedTime(&back, sl->ev[0], m.ev[best]) == CUDA_SUCCESS) {
                sl->pub.dev_us = ms * 1e3;
                sl->pub.dev_start_us = now_us - back * 1e3;
            }
            pool_put(p->ctx, sl->ev[0]);
            pool_put(p->ctx, sl->ev[1]);
            sl->ev[0] = sl->ev[1] = NULL;
            sl->timer = CK_TIMER_NONE;
        }
        for (int j = 0; j < CK_PROF_ANCHOR_TRIES; j++)
            if (m.ev[j]) ck_cu.cuEventDestroy_v2(m.ev[j]);
        if (s != CK_OK && st == CK_OK) st = s;
    }
    if (have_prev) ck_cu.cuCtxSetCurrent(prev);
    return st;
}

/* ---------------------------------------------------------- averages */

typedef struct avg_key { const char *name; const char *shapes; ck_prof_kind kind; } avg_key;

static uint64_t avg_hash(const avg_key *k)
{
    return ((uint64_t)(uintptr_t)k->name * 0x9E3779B97F4A7C15ull) ^ (k->shapes ? str_hash(k->shapes) : 0) ^
           (uint64_t)k->kind;
}

ck_status ck_profiler_averages(int group_by_shapes, ck_prof_average **out, int64_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (active_) return ck_error_set(CK_ERR_RUNTIME, "the profile is still on: averages are read after it stops");
    int64_t n = count_;
    /* children's host and device times, per record */
    double *child_host = calloc((size_t)n + 1, sizeof *child_host);
    double *child_dev = calloc((size_t)n + 1, sizeof *child_dev);
    int64_t *group = malloc(((size_t)n + 1) * sizeof *group);
    size_t cap = 16;
    while (cap < (size_t)n * 2 + 2) cap *= 2;
    int64_t *tab = malloc(cap * sizeof *tab);
    ck_prof_average *avg = malloc(((size_t)n + 1) * sizeof *avg);
    if (!child_host || !child_dev || !group || !tab || !avg) {
        free(child_host); free(child_dev); free(group); free(tab); free(avg);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for the profile's averages");
    }
    for (size_t i = 0; i < cap; i++) tab[i] = -1;
    for (int64_t i = 0; i < n; i++) {
        const ck_prof_record *r = &ck_prof_store_at(i)->pub;
        if (r->parent < 0) continue;
        child_host[r->parent] += (double)(r->host_end_ns - r->host_start_ns) / 1e3;
        if (r->dev_us > 0) child_dev[r->parent] += r->dev_us;
    }
    int64_t ng = 0;
    for (int64_t i = 0; i < n; i++) {
        const ck_prof_record *r = &ck_prof_store_at(i)->pub;
        avg_key k = {r->name, group_by_shapes ? r->shapes : NULL, r->kind};
        size_t j = avg_hash(&k) & (cap - 1);
        int64_t g;
        for (;;) {
            g = tab[j];
            if (g < 0) break;
            const ck_prof_average *a = &avg[g];
            if (a->name == k.name && a->kind == k.kind && (!k.shapes || !strcmp(a->shapes, k.shapes))) break;
            j = (j + 1) & (cap - 1);
        }
        if (g < 0) {
            g = ng++;
            tab[j] = g;
            ck_prof_average *a = &avg[g];
            memset(a, 0, sizeof *a);
            a->name = r->name;
            a->kind = r->kind;
            a->dev = r->dev;
            a->shapes = k.shapes ? r->shapes : "";
            a->dev_total_us = a->dev_self_us = -1;
        }
        ck_prof_average *a = &avg[g];
        double host = r->host_end_ns > r->host_start_ns ? (double)(r->host_end_ns - r->host_start_ns) / 1e3 : 0;
        a->count++;
        a->host_total_us += host;
        a->host_self_us += host - child_host[i] > 0 ? host - child_host[i] : 0;
        a->bytes += r->bytes;
        if (r->dev_us >= 0) {
            if (a->dev_total_us < 0) a->dev_total_us = a->dev_self_us = 0;
            a->dev_total_us += r->dev_us;
            a->dev_self_us += r->dev_us - child_dev[i] > 0 ? r->dev_us - child_dev[i] : 0;
        }
    }
    free(child_host); free(child_dev); free(group); free(tab);
    /* group_by_shapes points into records, which outlive the array until clear */
    *out = avg;
    *nout = ng;
    return CK_OK;
}

/* ------------------------------------------------------- Chrome trace */

static void json_str(ck_sbuf *b, const char *s)
{
    size_t n = strlen(s);
    char small[256], *e = n * 6 + 3 <= sizeof small ? small : malloc(n * 6 + 3);
    if (!e) { b->failed = 1; return; }
    char *o = e;
    *o++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { *o++ = '\\'; *o++ = (char)c; }
        else if (c < 0x20) o += sprintf(o, "\\u%04x", c);
        else *o++ = (char)c;
    }
    *o++ = '"';
    *o = 0;
    ck_sbuf_printf(b, "%s", e);
    if (e != small) free(e);
}

static const char *const kind_cat_[CK_PROF_KIND_COUNT] = {"cpu_op", "kernel", "memcpy", "user_annotation"};

/* Rows: pid 0 the host (a tid per thread), pid 1 + device index a GPU (a
 * tid per stream, numbered as first seen). */
static int stream_row(uint64_t *streams, int *nstreams, int max, uint64_t s)
{
    for (int i = 0; i < *nstreams; i++)
        if (streams[i] == s) return i;
    if (*nstreams == max) return max - 1;
    streams[*nstreams] = s;
    return (*nstreams)++;
}

ck_status ck_profiler_export_chrome_trace(const char *path)
{
    if (active_) return ck_error_set(CK_ERR_RUNTIME, "the profile is still on: export the trace after it stops");
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "%s", "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    ck_sbuf_printf(&b, "%s", "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, "
                   "\"args\": {\"name\": \"host\"}}");
    for (int t = 0; t < nthreads_; t++)
        ck_sbuf_printf(&b, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": %d, "
                       "\"args\": {\"name\": \"thread %d\"}}", t, t);
    enum { MAXS = 64 };
    uint64_t streams[CK_MAX_GPUS][MAXS];
    int nstreams[CK_MAX_GPUS] = {0};
    int seen_dev[CK_MAX_GPUS] = {0};
    for (int64_t i = 0; i < count_; i++) {
        const ck_prof_record *r = &ck_prof_store_at(i)->pub;
        double ts = (double)r->host_start_ns / 1e3;
        double dur = r->host_end_ns > r->host_start_ns ? (double)(r->host_end_ns - r->host_start_ns) / 1e3 : 0;
        char dev[32];
        ck_device_str(r->dev, dev, sizeof dev);
        ck_sbuf_printf(&b, "%s", ",\n{\"ph\": \"X\", \"cat\": ");
        json_str(&b, kind_cat_[r->kind]);
        ck_sbuf_printf(&b, "%s", ", \"name\": ");
        json_str(&b, r->name);
        ck_sbuf_printf(&b, ", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"device\": \"%s\"",
                       r->thread, ts, dur, dev);
        if (r->shapes[0]) { ck_sbuf_printf(&b, "%s", ", \"Input Dims\": "); json_str(&b, r->shapes); }
        if (r->dtypes[0]) { ck_sbuf_printf(&b, "%s", ", \"Input type\": "); json_str(&b, r->dtypes); }
        if (r->kind == CK_PROF_KERNEL)
            ck_sbuf_printf(&b, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared memory\": %zu",
                           r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->shared_mem);
        if (r->kind == CK_PROF_COPY) ck_sbuf_printf(&b, ", \"bytes\": %llu", (unsigned long long)r->bytes);
        if (r->parent >= 0) ck_sbuf_printf(&b, ", \"parent\": %lld", (long long)r->parent);
        ck_sbuf_printf(&b, "%s", "}}");
        if (r->dev_us < 0 || r->dev.type != CK_DEVICE_CUDA || r->dev.index < 0 || r->dev.index >= CK_MAX_GPUS) continue;
        int d = r->dev.index;
        if (!seen_dev[d]) {
            seen_dev[d] = 1;
            ck_sbuf_printf(&b, ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
                           "\"args\": {\"name\": \"%s\"}}", 1 + d, dev);
        }
        int before = nstreams[d];
        int row = stream_row(streams[d], &nstreams[d], MAXS, r->stream);
        if (nstreams[d] != before)
            ck_sbuf_printf(&b, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
                           "\"args\": {\"name\": \"stream %#llx%s\"}}", 1 + d, row, (unsigned long long)r->stream,
                           r->stream ? "" : " (default)");
        /* ops whose kernels are recorded show on the host only: their span would cover the kernels' */
        ck_sbuf_printf(&b, "%s", ",\n{\"ph\": \"X\", \"cat\": ");
        json_str(&b, r->kind == CK_PROF_OP ? "gpu_op" : kind_cat_[r->kind]);
        ck_sbuf_printf(&b, "%s", ", \"name\": ");
        json_str(&b, r->name);
        ck_sbuf_printf(&b, ", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"correlation\": "
                       "%lld}}", 1 + d, row, r->dev_start_us, r->dev_us, (long long)i);
        /* an arrow from the host call to its device span */
        ck_sbuf_printf(&b, ",\n{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %lld, \"pid\": 0, "
                       "\"tid\": %d, \"ts\": %.3f}", (long long)i, r->thread, ts);
        ck_sbuf_printf(&b, ",\n{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": %lld, "
                       "\"pid\": %d, \"tid\": %d, \"ts\": %.3f}", (long long)i, 1 + d, row, r->dev_start_us);
    }
    ck_sbuf_printf(&b, "%s", "\n]}\n");
    size_t len = b.len;
    char *text = ck_sbuf_finish(&b);
    if (!text) return ck_error_set(CK_ERR_MEMORY, "out of memory writing the trace");
    FILE *f = fopen(path, "w");
    if (!f) {
        free(text);
        return ck_error_set(CK_ERR_VALUE, "export_chrome_trace: cannot open '%s' for writing", path);
    }
    size_t w = fwrite(text, 1, len, f);
    int bad = w != len;
    if (fclose(f) != 0) bad = 1;
    free(text);
    if (bad) return ck_error_set(CK_ERR_RUNTIME, "export_chrome_trace: writing '%s' failed", path);
    return CK_OK;
}

/* --------------------------------------------------- op names (sync) */

#define OPS_MAX 32
static _Thread_local const char *tl_ops_[OPS_MAX];
static _Thread_local int tl_nops_;

void ck_obs_op_push(const char *name)
{
    if (tl_nops_ < OPS_MAX) tl_ops_[tl_nops_] = name;
    tl_nops_++;
}

void ck_obs_op_pop(void)
{
    if (tl_nops_ > 0) tl_nops_--;
}

/* ---------------------------------------------------- synchronisation */

int ck_sync_mode_;
static int (*warn_handler_)(const char *message);
static _Thread_local int tl_span_;

ck_sync_mode ck_sync_debug_mode(void) { return (ck_sync_mode)__atomic_load_n(&ck_sync_mode_, __ATOMIC_ACQUIRE); }

void ck_sync_set_warn_handler(int (*fn)(const char *message)) { warn_handler_ = fn; }

ck_status ck_sync_report_(ck_device dev, const char *what)
{
    int mode = __atomic_load_n(&ck_sync_mode_, __ATOMIC_ACQUIRE);
    /* the CPU never waits: its work is done when each call returns */
    if (mode == CK_SYNC_DEFAULT || dev.type != CK_DEVICE_CUDA || tl_span_ > 0) return CK_OK;
    const char *op = tl_nops_ > 0 && tl_nops_ <= OPS_MAX ? tl_ops_[tl_nops_ - 1] : NULL;
    char msg[512];
    snprintf(msg, sizeof msg, "called a synchronizing CUDA operation: %s%s%s%s on cuda:%d waits for the device", what,
             op ? " (in " : "", op ? op : "", op ? ")" : "", dev.index);
    if (mode == CK_SYNC_ERROR) return ck_error_set(CK_ERR_RUNTIME, "%s", msg);
    if (!warn_handler_) {
        fprintf(stderr, "cudakit: warning: %s\n", msg);
        return CK_OK;
    }
    if (warn_handler_(msg)) return ck_error_set(CK_ERR_RUNTIME, "%s", msg);
    return CK_OK;
}

ck_status ck_sync_span_begin(ck_device dev, const char *what)
{
    ck_status s = ck_sync_point(dev, what);
    tl_span_++;
    return s;
}

void ck_sync_span_end(void)
{
    if (tl_span_ > 0) tl_span_--;
}
