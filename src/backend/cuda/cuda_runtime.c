/* The device runtime on a GPU: device figures, streams and events, each a
 * driver call with the device's context made current, and the waits for
 * the device, which poll rather than block in the driver.  ck_stream and
 * ck_event are the driver's CUstream and CUevent. */
#define _GNU_SOURCE /* nanosleep */
#include "cuda_internal.h"
#include "../../runtime/interrupt.h"
#include "cudakit_graph.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK_CU_USE(dev)                              \
    do {                                            \
        ck_status s_ = ck_cuda_use((dev).index);    \
        if (s_ != CK_OK) return s_;                 \
    } while (0)
/* The same for an entry that queues work on a stream or waits for one: the
 * element-wise kernels a capture holds back go first (cuda_internal.h). */
#define CK_CU_USE_QUEUE(dev)                        \
    do {                                            \
        ck_cuda_fuse_flush_pending();               \
        CK_CU_USE(dev);                             \
    } while (0)

ck_status ck_cuda_device_properties(ck_device dev, ck_device_props *o)
{
    CK_CU_USE(dev);
    ck_cuda_device *cd = ck_cuda_dev(dev.index);
    snprintf(o->name, sizeof o->name, "%s", cd->name);
    o->cc_major = cd->cc_major;
    o->cc_minor = cd->cc_minor;
    o->total_memory = cd->total_mem;
    o->multi_processor_count = cd->sm_count;
    o->max_threads_per_multiprocessor = cd->max_threads_per_sm;
    static const struct { int attr; size_t off; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(ck_device_props, max_threads_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(ck_device_props, shared_memory_per_block)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(ck_device_props, l2_cache_size)},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, offsetof(ck_device_props, memory_bus_width)},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(ck_device_props, warp_size)},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute((int *)((char *)o + attrs[i].off), attrs[i].attr, cd->dev));
    return CK_OK;
}

ck_status ck_cuda_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuMemGetInfo_v2(free_bytes, total_bytes));
    return CK_OK;
}

/* --------------------------------------------------------------- waits */

/* A wait polls its stream or event: spinning for its first 50 us, yielding
 * the core until 1 ms, then sleeping a 32nd of the time waited so far
 * (20 us to 500 us), so that a long kernel is seen done at most 3% late.
 * From 1 ms on SIGINT is caught (interrupt.h): Ctrl-C ends the wait, and
 * so does the kernel time limit; the work stays queued either way. */
#define CK_WAIT_SPIN_NS 50000ull
#define CK_WAIT_YIELD_NS 1000000ull

typedef CUresult (*ck_cu_query)(void *h);

static CUresult q_stream(void *h) { return ck_cu.cuStreamQuery((CUstream)h); }
static CUresult q_event(void *h) { return ck_cu.cuEventQuery((CUevent)h); }

static ck_status ck_cuda_poll(int d, ck_cu_query q, void *h, const char *call)
{
    /* before the driver, which would also invalidate the capture */
    ck_status rs = ck_graph_refuse((ck_device){CK_DEVICE_CUDA, d}, call);
    if (rs != CK_OK) return rs;
    CUresult r = q(h);
    if (r == CUDA_SUCCESS) return CK_OK;
    if (r != CUDA_ERROR_NOT_READY) return ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
    uint64_t t0 = ck_now_ns(), lim = ck_kernel_timeout_ns();
    unsigned seen = ck_sigint_count();
    int catching = 0;
    ck_status s = CK_OK;
    for (;;) {
        r = q(h);
        if (r != CUDA_ERROR_NOT_READY) {
            if (r != CUDA_SUCCESS) s = ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
            break;
        }
        uint64_t waited = ck_now_ns() - t0;
        if (!catching && waited >= CK_WAIT_YIELD_NS) catching = ck_sigint_catch_begin() ? 1 : -1;
        if (ck_sigint_count() != seen) {
            ck_sigint_reported();
            s = ck_error_set(CK_ERR_INTERRUPT,
                             "interrupted (SIGINT) while waiting for cuda:%d (%s); the work queued there goes on "
                             "running, and the context stays usable",
                             d, call);
            break;
        }
        if (lim && waited >= lim) {
            s = ck_error_set(CK_ERR_DEVICE,
                             "%s: waited for cuda:%d longer than the kernel time limit of %g s (CUDAKIT_KERNEL_TIMEOUT, "
                             "set_kernel_timeout); a kernel may still be running there",
                             call, d, (double)lim / 1e9);
            break;
        }
        if (waited < CK_WAIT_SPIN_NS) continue;
        if (waited < CK_WAIT_YIELD_NS) {
            sched_yield();
            continue;
        }
        uint64_t nap = waited / 32;
        nap = nap < 20000 ? 20000 : nap > 500000 ? 500000 : nap;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
    }
    if (catching == 1) ck_sigint_catch_end();
    return s;
}

ck_status ck_cuda_wait_stream(int d, CUstream st, const char *call) { return ck_cuda_poll(d, q_stream, st, call); }

ck_status ck_cuda_wait_event(int d, CUevent e, const char *call) { return ck_cuda_poll(d, q_event, e, call); }

/* Non-blocking streams made here, which the default stream does not wait
 * for: a wait for the whole device polls each, asking under the lock
 * whether it still exists. */
static pthread_mutex_t nb_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nb_stream { CUstream s; int d; } *nb_;
static size_t nb_n, nb_cap;

static void nb_add(int d, CUstream st)
{
    pthread_mutex_lock(&nb_mu);
    if (nb_n == nb_cap) {
        size_t cap = nb_cap ? 2 * nb_cap : 16;
        struct nb_stream *p = realloc(nb_, cap * sizeof *p);
        if (p) {
            nb_ = p;
            nb_cap = cap;
        }
    }
    /* One left out (no memory) is still waited for, by cuCtxSynchronize. */
    if (nb_n < nb_cap) nb_[nb_n++] = (struct nb_stream){st, d};
    pthread_mutex_unlock(&nb_mu);
}

static void nb_remove(CUstream st)
{
    pthread_mutex_lock(&nb_mu);
    for (size_t i = 0; i < nb_n; i++)
        if (nb_[i].s == st) {
            nb_[i] = nb_[--nb_n];
            break;
        }
    pthread_mutex_unlock(&nb_mu);
}

/* h: the i-th non-blocking stream of the device, as (d << 32 | i) + 1;
 * gone (destroyed meanwhile) counts as done. */
static CUresult q_nb(void *h)
{
    uintptr_t v = (uintptr_t)h - 1;
    int d = (int)(v >> 32);
    size_t i = (size_t)(v & 0xffffffffu), k = 0;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&nb_mu);
    for (size_t j = 0; j < nb_n; j++)
        if (nb_[j].d == d && k++ == i) {
            r = ck_cu.cuStreamQuery(nb_[j].s);
            break;
        }
    pthread_mutex_unlock(&nb_mu);
    return r;
}

static CUevent sync_ev_[CK_CUDA_MAX_DEVICES];
static pthread_mutex_t sync_ev_mu = PTHREAD_MUTEX_INITIALIZER;

ck_status ck_cuda_wait_device(int d, const char *call)
{
    /* The default stream waits for every blocking stream: an event
     * recorded there is done when all of them are; then the current
     * stream and the non-blocking ones; cuCtxSynchronize last, for what
     * no poll could see (others' streams) and the errors. */
    pthread_mutex_lock(&sync_ev_mu);
    CUresult r = sync_ev_[d] ? CUDA_SUCCESS : ck_cu.cuEventCreate(&sync_ev_[d], CU_EVENT_DISABLE_TIMING);
    pthread_mutex_unlock(&sync_ev_mu);
    if (r == CUDA_SUCCESS) r = ck_cu.cuEventRecord(sync_ev_[d], NULL);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
    ck_status s = ck_cuda_poll(d, q_event, sync_ev_[d], call);
    CUstream cur = ck_cuda_current_stream(d);
    if (s == CK_OK && cur) s = ck_cuda_poll(d, q_stream, cur, call);
    for (size_t i = 0; s == CK_OK; i++) {
        pthread_mutex_lock(&nb_mu);
        size_t n = 0;
        for (size_t j = 0; j < nb_n; j++) n += nb_[j].d == d;
        pthread_mutex_unlock(&nb_mu);
        if (i >= n) break;
        s = ck_cuda_poll(d, q_nb, (void *)(((uintptr_t)d << 32 | i) + 1), call);
    }
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuCtxSynchronize());
    return CK_OK;
}

/* ------------------------------------------------------------- streams */

ck_status ck_cuda_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out)
{
    CK_CU_USE(dev);
    CUstream st;
    CK_CHECK_CU(ck_cu.cuStreamCreateWithPriority(&st, nonblocking ? CU_STREAM_NON_BLOCKING : 0, priority));
    if (nonblocking) nb_add(dev.index, st);
    *out = (ck_stream)st;
    return CK_OK;
}

ck_status ck_cuda_stream_destroy(ck_device dev, ck_stream s)
{
    CK_CU_USE_QUEUE(dev);
    nb_remove((CUstream)s);
    ck_cuda_blas_stream_gone(dev.index, (CUstream)s);
    ck_cuda_memory_stream_gone(dev.index, (CUstream)s);
    CK_CHECK_CU(ck_cu.cuStreamDestroy_v2((CUstream)s));
    return CK_OK;
}

ck_status ck_cuda_stream_synchronize(ck_device dev, ck_stream s)
{
    CK_CU_USE_QUEUE(dev);
    return ck_cuda_wait_stream(dev.index, (CUstream)s, "cuStreamSynchronize");
}

/* A query's answer: done, not yet, or the error. */
static ck_status query_answer(CUresult r, const char *call, int *done)
{
    *done = r != CUDA_ERROR_NOT_READY;
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) return CK_OK;
    return ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
}

ck_status ck_cuda_stream_query(ck_device dev, ck_stream s, int *done)
{
    CK_CU_USE_QUEUE(dev);
    return query_answer(ck_cu.cuStreamQuery((CUstream)s), "cuStreamQuery", done);
}

ck_status ck_cuda_stream_wait_event(ck_device dev, ck_stream s, ck_event e)
{
    CK_CU_USE_QUEUE(dev);
    CK_CHECK_CU(ck_cu.cuStreamWaitEvent((CUstream)s, (CUevent)e, 0));
    return CK_OK;
}

ck_status ck_cuda_stream_priority_range(ck_device dev, int *least, int *greatest)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuCtxGetStreamPriorityRange(least, greatest));
    return CK_OK;
}

/* only a look (the graph's pool asks at each allocation): held kernels stay held */
ck_stream ck_cuda_stream_current(ck_device dev) { return (ck_stream)ck_cuda_current_stream_peek(dev.index); }

void ck_cuda_stream_set_current(ck_device dev, ck_stream s) { ck_cuda_set_current_stream(dev.index, (CUstream)s); }

/* -------------------------------------------------------------- events */

ck_status ck_cuda_event_create(ck_device dev, int timing, ck_event *out)
{
    CK_CU_USE(dev);
    CUevent e;
    CK_CHECK_CU(ck_cu.cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    *out = (ck_event)e;
    return CK_OK;
}

ck_status ck_cuda_event_destroy(ck_device dev, ck_event e)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventDestroy_v2((CUevent)e));
    return CK_OK;
}

ck_status ck_cuda_event_record(ck_device dev, ck_event e, ck_stream s)
{
    CK_CU_USE_QUEUE(dev);
    CK_CHECK_CU(ck_cu.cuEventRecord((CUevent)e, (CUstream)s));
    return CK_OK;
}

ck_status ck_cuda_event_synchronize(ck_device dev, ck_event e)
{
    CK_CU_USE_QUEUE(dev);
    return ck_cuda_wait_event(dev.index, (CUevent)e, "cuEventSynchronize");
}

ck_status ck_cuda_event_query(ck_device dev, ck_event e, int *done)
{
    CK_CU_USE(dev);
    return query_answer(ck_cu.cuEventQuery((CUevent)e), "cuEventQuery", done);
}

ck_status ck_cuda_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end));
    return CK_OK;
}
