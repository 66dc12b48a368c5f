/* The GPU's stream-ordered pool and pinned blocks over a fake driver, so
 * that the orderings a GPU run can only show by chance (wrong values, a
 * crash) are checked on every machine: the fake keeps, for each stream, how
 * much work was queued and how much is done, reuses a destroyed stream's
 * handle for the next stream as the driver may, and counts every use of a
 * destroyed stream.  What is checked: a block or a pinned buffer is not
 * handed out again while a stream that used it may still be at work, even
 * when that stream was destroyed meanwhile and its handle given to another,
 * and no destroyed stream is ever named to the driver. */
#include "ck_test.h"
#include "../../src/backend/cuda/cuda_internal.h"
#include "cudakit_graph.h"

#include <string.h>

/* ------------------------------------------------------- fake driver */

typedef struct queue {
    int issued, done;
} queue;

struct CUstream_st {
    queue *q;
    int alive;
};

struct CUevent_st {
    queue *q;
    int seq;
};

#define NSTREAMS 4
static struct CUstream_st streams_[NSTREAMS];
static queue queues_[64], null_q_;
static int nqueues_, dead_uses_;

static queue *q_of(CUstream s) { return s ? s->q : &null_q_; }

static int dead(CUstream s)
{
    if (s && !s->alive) {
        dead_uses_++;
        return 1;
    }
    return 0;
}

static void work(CUstream s) { q_of(s)->issued++; }

static void finish(CUstream s) { q_of(s)->done = q_of(s)->issued; }

static void finish_all(void)
{
    for (int i = 0; i < nqueues_; i++) queues_[i].done = queues_[i].issued;
    null_q_.done = null_q_.issued;
}

static CUresult f_ctx_set(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult f_ctx_get(CUcontext *c) { *c = (CUcontext)(uintptr_t)1; return CUDA_SUCCESS; }
static CUresult f_mem_alloc(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)malloc(n); return CUDA_SUCCESS; }
static CUresult f_mem_free(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
static CUresult f_host_alloc(void **p, size_t n, unsigned flags) { (void)flags; *p = malloc(n); return CUDA_SUCCESS; }
static CUresult f_host_free(void *p) { free(p); return CUDA_SUCCESS; }

static CUresult f_htod(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    (void)d, (void)s, (void)n;
    if (dead(st)) return CUDA_ERROR_INVALID_VALUE;
    work(st);
    return CUDA_SUCCESS;
}

static CUresult f_dtoh(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)d, (void)s, (void)n;
    if (dead(st)) return CUDA_ERROR_INVALID_VALUE;
    work(st);
    return CUDA_SUCCESS;
}

static CUresult f_stream_create(CUstream *out, unsigned flags, int prio)
{
    (void)flags, (void)prio;
    for (int i = 0; i < NSTREAMS; i++)
        if (!streams_[i].alive) {   /* the lowest free handle, as a reusing driver may give */
            streams_[i].alive = 1;
            streams_[i].q = &queues_[nqueues_++];
            *out = &streams_[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult f_stream_destroy(CUstream s)
{
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    s->alive = 0;   /* its queued work goes on */
    return CUDA_SUCCESS;
}

static CUresult f_stream_sync(CUstream s)
{
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    finish(s);
    return CUDA_SUCCESS;
}

static CUresult f_stream_query(CUstream s)
{
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    return q_of(s)->done >= q_of(s)->issued ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static queue *waited_q_;
static int waited_seq_;

static CUresult f_stream_wait(CUstream s, CUevent e, unsigned flags)
{
    (void)flags;
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    waited_q_ = e->q;
    waited_seq_ = e->seq;
    return CUDA_SUCCESS;
}

static CUresult f_event_create(CUevent *e, unsigned flags)
{
    (void)flags;
    *e = calloc(1, sizeof **e);
    return CUDA_SUCCESS;
}

static CUresult f_event_destroy(CUevent e) { free(e); return CUDA_SUCCESS; }

static CUresult f_event_record(CUevent e, CUstream s)
{
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    e->q = q_of(s);
    e->seq = e->q->issued;
    return CUDA_SUCCESS;
}

/* set while the core is to wait for an event: the fake's work then
 * finishes as a GPU's would, up to the event */
static int finish_when_waited_;

static CUresult f_event_query(CUevent e)
{
    if (e->q && e->q->done < e->seq && finish_when_waited_) e->q->done = e->seq;
    return !e->q || e->q->done >= e->seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult f_event_sync(CUevent e)
{
    if (e->q && e->q->done < e->seq) e->q->done = e->seq;
    return CUDA_SUCCESS;
}

static CUresult f_ctx_sync(void) { finish_all(); return CUDA_SUCCESS; }
static CUresult f_begin_capture(CUstream s, int mode) { (void)mode; return dead(s) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
static CUresult f_end_capture(CUstream s, CUgraph *g)
{
    *g = (CUgraph)(uintptr_t)1;
    return dead(s) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult f_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    (void)g, (void)flags;
    *e = (CUgraphExec)(uintptr_t)1;
    return CUDA_SUCCESS;
}
static CUresult f_graph_upload(CUgraphExec e, CUstream s) { (void)e; return dead(s) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
static CUresult f_graph_launch(CUgraphExec e, CUstream s)
{
    (void)e;
    if (dead(s)) return CUDA_ERROR_INVALID_VALUE;
    work(s);
    return CUDA_SUCCESS;
}
static CUresult f_exec_destroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
static CUresult f_graph_destroy(CUgraph g) { (void)g; return CUDA_SUCCESS; }

static CUresult f_mem_info(size_t *fr, size_t *tot) { *fr = *tot = (size_t)1 << 30; return CUDA_SUCCESS; }

static void fake_driver(void)
{
    ck_cu.cuCtxSetCurrent = f_ctx_set;
    ck_cu.cuCtxGetCurrent = f_ctx_get;
    ck_cu.cuMemAlloc_v2 = f_mem_alloc;
    ck_cu.cuMemFree_v2 = f_mem_free;
    ck_cu.cuMemHostAlloc = f_host_alloc;
    ck_cu.cuMemFreeHost = f_host_free;
    ck_cu.cuMemcpyHtoDAsync_v2 = f_htod;
    ck_cu.cuMemcpyDtoHAsync_v2 = f_dtoh;
    ck_cu.cuStreamCreateWithPriority = f_stream_create;
    ck_cu.cuStreamDestroy_v2 = f_stream_destroy;
    ck_cu.cuStreamSynchronize = f_stream_sync;
    ck_cu.cuStreamQuery = f_stream_query;
    ck_cu.cuStreamWaitEvent = f_stream_wait;
    ck_cu.cuEventCreate = f_event_create;
    ck_cu.cuEventDestroy_v2 = f_event_destroy;
    ck_cu.cuEventRecord = f_event_record;
    ck_cu.cuEventQuery = f_event_query;
    ck_cu.cuEventSynchronize = f_event_sync;
    ck_cu.cuMemGetInfo_v2 = f_mem_info;
    ck_cu.cuCtxSynchronize = f_ctx_sync;
    ck_cu.cuStreamBeginCapture_v2 = f_begin_capture;
    ck_cu.cuStreamEndCapture = f_end_capture;
    ck_cu.cuGraphInstantiateWithFlags = f_instantiate;
    ck_cu.cuGraphUpload = f_graph_upload;
    ck_cu.cuGraphLaunch = f_graph_launch;
    ck_cu.cuGraphExecDestroy = f_exec_destroy;
    ck_cu.cuGraphDestroy = f_graph_destroy;
    ck_cuda_ndevices = 1;
    ck_cuda_devices[0].ctx = (CUcontext)(uintptr_t)1;
    ck_cuda_devices[0].sm_count = 1;
    ck_cuda_devices[0].max_threads_per_sm = 1024;
    pthread_mutex_init(&ck_cuda_devices[0].kmu, NULL);
    ck_cuda_devices[0].ready = 1;
}

static const ck_device gpu = {CK_DEVICE_CUDA, 0};

static CUstream new_stream(void)
{
    ck_stream s;
    OK(ck_cuda_stream_create(gpu, 1, 0, &s));
    return (CUstream)s;
}

/* Two allocations of n on the current stream: whether one of them is p
 * (the pool hands p out again); both are freed after. */
static int reused(void *p, size_t n)
{
    void *a = ck_cuda_alloc(gpu, n), *b = ck_cuda_alloc(gpu, n);
    int r = a == p || b == p;
    ck_cuda_free(gpu, a, n);
    ck_cuda_free(gpu, b, n);
    return r;
}

/* --------------------------------------------------------------- tests */

/* The GPU run's crash: a block copied on stream s, s destroyed (an
 * example's locals going in any order), then the block freed. */
static void test_block_copied_on_a_stream_destroyed_before_the_free(void)
{
    const size_t n = (size_t)1 << 20;
    CUstream s = new_stream();
    void *x = ck_cuda_alloc(gpu, n);
    ck_release_fn rel;
    void *ctx;
    void *pin = ck_cuda_pinned_alloc(n, &rel, &ctx);
    OK(ck_cuda_copy_async(gpu, pin, x, n, 1, (ck_stream)s, x));
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s));
    ck_cuda_free(gpu, x, n);
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
    CHECK(!reused(x, n), "the block was handed out while the destroyed stream's copy may still read it");
    finish_all();
    CHECK(reused(x, n), "the block is reusable once the copy is done");
    rel(ctx);
    dead_uses_ = 0;
}

/* A block freed into the cache of stream s1, s1 destroyed, a new stream
 * given s1's handle: the new stream's order does not follow s1's work. */
static void test_cached_block_of_a_destroyed_stream(void)
{
    const size_t n = 4096;
    CUstream s1 = new_stream();
    ck_cuda_set_current_stream(0, s1);
    void *a = ck_cuda_alloc(gpu, n);
    work(s1);                            /* a kernel writing a, still running */
    ck_cuda_free(gpu, a, n);
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s1));
    CUstream s2 = new_stream();
    CHECK(s2 == s1, "the fake driver reuses handles");
    ck_cuda_set_current_stream(0, s2);
    CHECK(!reused(a, n), "a block still written on a destroyed stream went to the stream given its handle");
    finish_all();
    CHECK(reused(a, n), "the block is reusable once the work is done");
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s2));
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* The same with the block still live when its stream goes (an array made
 * inside `with s:` that outlives s). */
static void test_live_block_of_a_destroyed_stream(void)
{
    const size_t n = 8192;
    CUstream s1 = new_stream();
    ck_cuda_set_current_stream(0, s1);
    void *a = ck_cuda_alloc(gpu, n);
    work(s1);
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s1));
    ck_cuda_free(gpu, a, n);
    CUstream s2 = new_stream();
    ck_cuda_set_current_stream(0, s2);
    CHECK(!reused(a, n), "a block made on a destroyed stream, still written there, went to the stream given its handle");
    finish_all();
    CHECK(reused(a, n), "the block is reusable once the work is done");
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s2));
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* A block made on s1 and copied on s2, freed (it waits for s2), then s1
 * destroyed with its work on the block queued: s2 done is not enough. */
static void test_pending_block_of_a_destroyed_stream(void)
{
    const size_t n = 12288;
    CUstream s1 = new_stream(), s2 = new_stream();
    ck_cuda_set_current_stream(0, s1);
    void *a = ck_cuda_alloc(gpu, n);
    work(s1);
    ck_release_fn rel;
    void *ctx;
    void *pin = ck_cuda_pinned_alloc(n, &rel, &ctx);
    OK(ck_cuda_copy_async(gpu, pin, a, n, 1, (ck_stream)s2, a));
    ck_cuda_free(gpu, a, n);
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s1));
    finish(s2);
    CUstream s3 = new_stream();
    CHECK(s3 == s1, "the fake driver reuses handles");
    ck_cuda_set_current_stream(0, s3);
    CHECK(!reused(a, n), "a block still written on its destroyed stream went to the stream given its handle");
    finish_all();
    CHECK(reused(a, n), "the block is reusable once the work is done");
    ck_cuda_set_current_stream(0, NULL);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s2));
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s3));
    rel(ctx);
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* A pinned buffer whose halves are copied on two streams (the overlap
 * example's chunks): freed, it is not handed out again until both copies
 * are done, whichever finishes first. */
static void test_pinned_buffer_copied_on_two_streams(void)
{
    const size_t n = (size_t)1 << 16;
    CUstream s1 = new_stream(), s2 = new_stream();
    void *x = ck_cuda_alloc(gpu, n);
    ck_release_fn rel;
    void *ctx;
    char *pin = ck_cuda_pinned_alloc(n, &rel, &ctx);
    OK(ck_cuda_copy_async(gpu, x, pin, n / 2, 0, (ck_stream)s1, x));
    OK(ck_cuda_copy_async(gpu, (char *)x + n / 2, pin + n / 2, n / 2, 0, (ck_stream)s2, x));
    finish(s2);
    rel(ctx);
    ck_release_fn rel2;
    void *ctx2;
    char *again = ck_cuda_pinned_alloc(n, &rel2, &ctx2);
    CHECK(again != pin, "a pinned buffer was handed out again while a copy on another stream still reads it");
    rel2(ctx2);
    finish(s1);
    again = ck_cuda_pinned_alloc(n, &rel2, &ctx2);
    char *other = ck_cuda_pinned_alloc(n, &rel, &ctx);
    CHECK(again == pin || other == pin, "the pinned buffer is reusable once both copies are done");
    rel(ctx);
    rel2(ctx2);
    /* the pinned buffer's marks name s1 and s2: destroying them, then a copy
     * on the stream given s1's handle, names no dead stream */
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s1));
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s2));
    CUstream s3 = new_stream();
    pin = ck_cuda_pinned_alloc(n, &rel, &ctx);
    OK(ck_cuda_copy_async(gpu, x, pin, n, 0, (ck_stream)s3, x));
    ck_cuda_free(gpu, x, n);
    finish_all();
    rel(ctx);
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s3));
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* A block copied on more streams than a block notes: the copy waits. */
static void test_block_on_many_streams(void)
{
    const size_t n = 16384;
    CUstream s[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) s[i] = new_stream();
    void *x = ck_cuda_alloc(gpu, n);
    ck_release_fn rel;
    void *ctx;
    char *pin = ck_cuda_pinned_alloc(n, &rel, &ctx);
    for (int i = 0; i < NSTREAMS; i++) OK(ck_cuda_copy_async(gpu, pin, x, n, 1, (ck_stream)s[i], x));
    ck_cuda_free(gpu, x, n);
    CHECK(!reused(x, n), "a block copied on %d streams was handed out before they were done", NSTREAMS);
    for (int i = 0; i < NSTREAMS; i++) OK(ck_cuda_stream_destroy(gpu, (ck_stream)s[i]));
    finish_all();
    CHECK(reused(x, n), "the block is reusable once the copies are done");
    rel(ctx);
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* A block made on the default stream and read by kernels on s, noted with
 * record_stream: freed, it waits for s (and s may go first). */
static void test_record_stream(void)
{
    const size_t n = 32768;
    CUstream s = new_stream();
    void *x = ck_cuda_alloc(gpu, n);
    work(s);                             /* a kernel on s reading x */
    OK(ck_cuda_record_stream(gpu, x, (ck_stream)s));
    ck_cuda_free(gpu, x, n);
    CHECK(!reused(x, n), "a block recorded on a stream was handed out while that stream still reads it");
    void *y = ck_cuda_alloc(gpu, n);
    work(s);
    OK(ck_cuda_record_stream(gpu, y, (ck_stream)s));
    OK(ck_cuda_stream_destroy(gpu, (ck_stream)s));
    ck_cuda_free(gpu, y, n);
    CHECK(!reused(y, n), "a block recorded on a destroyed stream was handed out while that stream's work may run");
    finish_all();
    CHECK(reused(x, n) && reused(y, n), "the blocks are reusable once the work is done");
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
}

/* Replays of a graph are marked where they ran: a replay on another stream
 * waits for the earlier ones (they share the graph's memory), a stream
 * destroyed with replays queued is marked before it goes, and freeing the
 * graph waits for its last replays without naming a dead stream. */
extern const ck_backend_iface ck_backend_cuda;

static void test_graph_replays_follow_their_streams(void)
{
    ck_backend_register(CK_DEVICE_CUDA, &ck_backend_cuda);
    ck_graph *g;
    OK(ck_graph_create(gpu, &g));
    OK(ck_graph_capture_begin(g, NULL, NULL));
    OK(ck_graph_capture_end(g));
    CUstream s1 = new_stream(), s2 = new_stream();
    ck_stream_set_current(gpu, (ck_stream)s1);
    OK(ck_graph_replay(g));
    OK(ck_graph_replay(g));
    waited_q_ = NULL;
    ck_stream_set_current(gpu, (ck_stream)s2);
    OK(ck_graph_replay(g));
    CHECK(waited_q_ == s1->q && waited_seq_ == s1->q->issued,
          "a replay on another stream waits for the earlier replays");
    ck_stream_set_current(gpu, NULL);
    queue *q2 = s2->q;
    OK(ck_stream_destroy(gpu, (ck_stream)s2));
    CHECK(q2->done < q2->issued, "the fake's replay is still queued");
    waited_q_ = NULL;
    ck_stream_set_current(gpu, (ck_stream)s1);
    OK(ck_graph_replay(g));
    CHECK(waited_q_ == q2 && waited_seq_ == q2->issued,
          "a replay after its stream was destroyed waits for the replays queued there");
    ck_stream_set_current(gpu, NULL);
    finish_when_waited_ = 1;
    ck_graph_free(g);
    finish_when_waited_ = 0;
    CHECK(s1->q->done == s1->q->issued, "freeing the graph waits for its last replays");
    OK(ck_stream_destroy(gpu, (ck_stream)s1));
    CHECK(dead_uses_ == 0, "a destroyed stream was named to the driver %d times", dead_uses_);
    finish_all();
}

int main(void)
{
    fake_driver();
    test_block_copied_on_a_stream_destroyed_before_the_free();
    test_cached_block_of_a_destroyed_stream();
    test_live_block_of_a_destroyed_stream();
    test_pending_block_of_a_destroyed_stream();
    test_pinned_buffer_copied_on_two_streams();
    test_block_on_many_streams();
    test_record_stream();
    test_graph_replays_follow_their_streams();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("test_cuda_pool: ok\n");
    return failures != 0;
}
