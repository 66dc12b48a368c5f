/* Graphs on every device (include/cudakit_graph.h): the capture state of
 * each thread, the streams of a capture, the graph pools, and the check
 * that refuses what cannot be captured.  What is captured and how it is
 * replayed is each backend's (cuda/cuda_graph.c, cpu/cpu_graph.c).
 *
 * A pool holds buffers at the level of ck_buffer, so that one mechanism
 * serves every device: a node per buffer it knows, which is LIVE (an
 * array uses it), FREE (freed, reusable by a later allocation of a capture
 * on the same stream, whose order puts it after the work that used it) or
 * KEPT (freed during a capture but allocated before it: its stream is not
 * known, so it is only kept).  A buffer freed while a graph may still
 * touch it never goes back to the device before that graph does. */
#include "graph_internal.h"

#include <stdlib.h>
#include <string.h>

int ck_graph_captures_;
int ck_graph_keepers_;

enum { NODE_LIVE, NODE_FREE, NODE_KEPT };

typedef struct ck_graph_pool ck_graph_pool;

typedef struct pool_node {
    ck_buffer *b;
    ck_graph_pool *pool;
    ck_stream stream;          /* where it was allocated (LIVE, FREE) */
    int state;
    struct pool_node *prev, *next;
} pool_node;

typedef struct deferred_free {
    void (*fn)(ck_device, void *, size_t);
    void *p;
    size_t n;
    struct deferred_free *next;
} deferred_free;

struct ck_graph_pool {
    pthread_mutex_t mu;
    ck_device dev;
    int ngraphs;               /* graphs using it */
    int nlive;                 /* nodes arrays still use */
    size_t bytes;
    pool_node *head;
    deferred_free *deferred;   /* backends' scratch memory freed during its captures */
};

struct ck_graph {
    ck_device dev;
    const ck_backend_iface *be;
    void *impl;                /* the backend's captured work (NULL: none) */
    int capturing;
    ck_stream stream;          /* the captured stream */
    ck_stream own_stream;      /* made for captures that named none */
    ck_stream prev_stream;     /* current before capture_begin */
    ck_graph_pool *pool;
    /* Replays are not marked one by one: the stream of the last ones is
     * kept, and done is recorded there when the graph goes, when a replay
     * moves to another stream (which then waits for it: replays of one graph
     * share its memory) or when that stream is destroyed. */
    ck_event done;
    int done_set;              /* done follows the replays not on replay_stream */
    int pending;               /* replays on replay_stream not yet followed by done */
    ck_stream replay_stream;
    struct ck_graph *next_cpu; /* the CPU graphs holding a recording */
    struct ck_graph *next_gpu; /* the device graphs replayed since their last capture */
    int listed;
};

static _Thread_local ck_graph *capture_;
static pthread_mutex_t cpu_graphs_mu = PTHREAD_MUTEX_INITIALIZER;
static ck_graph *cpu_graphs_;
static pthread_mutex_t replays_mu = PTHREAD_MUTEX_INITIALIZER;
static ck_graph *replayed_;

/* ------------------------------------------------------------- pools */

static ck_graph_pool *pool_new(ck_device dev)
{
    ck_graph_pool *p = calloc(1, sizeof *p);
    if (!p) { ck_error_set(CK_ERR_MEMORY, "out of memory for a graph pool"); return NULL; }
    pthread_mutex_init(&p->mu, NULL);
    p->dev = dev;
    p->ngraphs = 1;
    return p;
}

static void node_unlink(ck_graph_pool *p, pool_node *n)
{
    if (n->prev) n->prev->next = n->next;
    else p->head = n->next;
    if (n->next) n->next->prev = n->prev;
}

static pool_node *node_add(ck_graph_pool *p, ck_buffer *b, ck_stream s, int state)
{
    pool_node *n = malloc(sizeof *n);
    if (!n) return NULL;
    n->b = b;
    n->pool = p;
    n->stream = s;
    n->state = state;
    n->prev = NULL;
    n->next = p->head;
    if (p->head) p->head->prev = n;
    p->head = n;
    p->bytes += b->nbytes;
    b->graph_node = n;
    return n;
}

/* The pool's graphs are all gone: free what no array uses; the pool itself
 * goes with the last of those arrays. */
static void pool_unref(ck_graph_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    int last = --p->ngraphs == 0;
    pool_node *freed = NULL;
    if (last) {
        for (pool_node *n = p->head, *nx; n; n = nx) {
            nx = n->next;
            if (n->state == NODE_LIVE) continue;
            node_unlink(p, n);
            p->bytes -= n->b->nbytes;
            n->next = freed;
            freed = n;
        }
    }
    int gone = last && p->nlive == 0;
    deferred_free *df = last ? p->deferred : NULL;
    if (last) p->deferred = NULL;
    pthread_mutex_unlock(&p->mu);
    for (deferred_free *f = df, *fx; f; f = fx) {
        fx = f->next;
        p->bytes -= f->n;
        f->fn(p->dev, f->p, f->n);
        free(f);
    }
    for (pool_node *n = freed, *nx; n; n = nx) {
        nx = n->next;
        n->b->graph_node = NULL;
        ck_buffer_free_direct(n->b);
        free(n);
    }
    if (gone) {
        pthread_mutex_destroy(&p->mu);
        free(p);
    }
}

ck_buffer *ck_graph_pool_alloc(ck_device dev, size_t nbytes)
{
    ck_graph *g = capture_;
    if (!g || !ck_device_equal(g->dev, dev)) return ck_buffer_alloc_direct(dev, nbytes);
    ck_graph_pool *p = g->pool;
    ck_stream s = ck_stream_current(dev);
    pthread_mutex_lock(&p->mu);
    /* the smallest freed buffer of this stream that fits without much waste */
    pool_node *best = NULL;
    for (pool_node *n = p->head; n; n = n->next)
        if (n->state == NODE_FREE && n->stream == s && n->b->nbytes >= nbytes &&
            n->b->nbytes <= nbytes + nbytes / 4 + 512 && (!best || n->b->nbytes < best->b->nbytes))
            best = n;
    if (best) {
        best->state = NODE_LIVE;
        p->nlive++;
        best->b->refcount = 1;
        best->b->readonly = 0;
        pthread_mutex_unlock(&p->mu);
        return best->b;
    }
    pthread_mutex_unlock(&p->mu);
    ck_buffer *b = ck_buffer_alloc_direct(dev, nbytes);
    if (!b) return NULL;
    pthread_mutex_lock(&p->mu);
    pool_node *n = node_add(p, b, s, NODE_LIVE);
    if (n) p->nlive++;
    pthread_mutex_unlock(&p->mu);
    if (!n) {
        ck_buffer_free_direct(b);
        ck_error_set(CK_ERR_MEMORY, "out of memory for a graph pool's entry");
        return NULL;
    }
    return b;
}

int ck_graph_defer_free(ck_device dev, void (*free_fn)(ck_device, void *, size_t), void *p, size_t n)
{
    ck_graph *g = capture_;
    if (!g || !ck_device_equal(g->dev, dev)) return 0;
    deferred_free *f = malloc(sizeof *f);
    /* no memory for the entry: the block leaks rather than being reused under a replay */
    if (!f) return 1;
    f->fn = free_fn;
    f->p = p;
    f->n = n;
    pthread_mutex_lock(&g->pool->mu);
    f->next = g->pool->deferred;
    g->pool->deferred = f;
    g->pool->bytes += n;
    pthread_mutex_unlock(&g->pool->mu);
    return 1;
}

/* The pool of a CPU graph whose recording addresses b's memory, or NULL. */
static ck_graph_pool *cpu_graph_using(const ck_buffer *b)
{
    ck_graph_pool *p = NULL;
    pthread_mutex_lock(&cpu_graphs_mu);
    for (ck_graph *g = cpu_graphs_; g && !p; g = g->next_cpu)
        if (g->impl && g->be->graph_uses && g->be->graph_uses(g->impl, b->ptr, b->nbytes)) p = g->pool;
    pthread_mutex_unlock(&cpu_graphs_mu);
    return p;
}

int ck_graph_pool_keep(ck_buffer *b)
{
    pool_node *n = b->graph_node;
    if (n) {
        ck_graph_pool *p = n->pool;
        pthread_mutex_lock(&p->mu);
        p->nlive--;
        if (p->ngraphs > 0) {
            n->state = NODE_FREE;
            pthread_mutex_unlock(&p->mu);
            return 1;
        }
        node_unlink(p, n);
        p->bytes -= b->nbytes;
        int gone = p->nlive == 0;
        pthread_mutex_unlock(&p->mu);
        free(n);
        b->graph_node = NULL;
        if (gone) {
            pthread_mutex_destroy(&p->mu);
            free(p);
        }
        return 0;
    }
    ck_graph *g = capture_;
    ck_graph_pool *p = g && ck_device_equal(g->dev, b->device) ? g->pool : NULL;
    if (!p && b->device.type == CK_DEVICE_CPU && cpu_graphs_) p = cpu_graph_using(b);
    if (!p) return 0;
    pthread_mutex_lock(&p->mu);
    n = p->ngraphs > 0 ? node_add(p, b, NULL, NODE_KEPT) : NULL;
    pthread_mutex_unlock(&p->mu);
    /* no memory for the node: freeing is all that is left */
    return n != NULL;
}

/* ------------------------------------------------------------ graphs */

ck_status ck_graph_create(ck_device dev, ck_graph **out)
{
    *out = NULL;
    const ck_backend_iface *be = ck_backend_require(dev);
    if (!be) return ck_error_status();
    if (!be->graph_begin) {
        char d[32];
        ck_device_str(dev, d, sizeof d);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "graphs are not implemented on %s", d);
    }
    ck_graph *g = calloc(1, sizeof *g);
    if (!g) return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph");
    g->dev = dev;
    g->be = be;
    *out = g;
    return CK_OK;
}

ck_device ck_graph_device(const ck_graph *g) { return g->dev; }

int ck_graph_capturing(ck_device dev)
{
    if (!__atomic_load_n(&ck_graph_captures_, __ATOMIC_RELAXED)) return 0;
    return capture_ && ck_device_equal(capture_->dev, dev);
}

ck_status ck_graph_refuse(ck_device dev, const char *what)
{
    if (!ck_graph_capturing(dev)) return CK_OK;
    char d[32];
    ck_device_str(dev, d, sizeof d);
    return ck_error_set(CK_ERR_RUNTIME,
                        "%s cannot be captured in a graph: it waits for %s or reads its data on the host, which a "
                        "replay could not repeat (do it before the capture begins or after it ends)",
                        what, d);
}

static void capture_leave(ck_graph *g)
{
    capture_ = NULL;
    g->capturing = 0;
    ck_stream_set_current(g->dev, g->prev_stream);
    __atomic_sub_fetch(&ck_graph_captures_, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&ck_graph_keepers_, 1, __ATOMIC_RELAXED);
}

ck_status ck_graph_capture_begin(ck_graph *g, ck_stream s, ck_graph *pool_of)
{
    if (capture_)
        return ck_error_set(CK_ERR_RUNTIME, "capture_begin: this thread is capturing a graph already (end it first)");
    if (g->impl) return ck_error_set(CK_ERR_RUNTIME, "capture_begin: the graph holds a capture (reset() it first)");
    if (pool_of && !ck_device_equal(pool_of->dev, g->dev))
        return ck_error_set(CK_ERR_VALUE, "capture_begin: a pool is shared by graphs of one device");
    if (pool_of && !pool_of->pool)
        return ck_error_set(CK_ERR_VALUE, "capture_begin: the graph whose pool was given has none (capture it first)");
    /* Work queued before must not run into the replays' memory, nor be
     * waited for by the capture: settle it first, as PyTorch does. */
    ck_status st = ck_device_synchronize(g->dev);
    if (st != CK_OK) return st;
    if (!s) {
        if (!g->own_stream && (st = ck_stream_create(g->dev, 1, 0, &g->own_stream)) != CK_OK) return st;
        s = g->own_stream;
    }
    ck_graph_pool *p = g->pool;
    if (pool_of && pool_of->pool != p) {
        pool_unref(p);
        p = pool_of->pool;
        pthread_mutex_lock(&p->mu);
        p->ngraphs++;
        pthread_mutex_unlock(&p->mu);
    } else if (!p && !(p = pool_new(g->dev))) {
        return ck_error_status();
    }
    g->pool = p;
    g->stream = s;
    g->prev_stream = ck_stream_current(g->dev);
    void *impl = NULL;
    st = g->be->graph_begin(g->dev, s, &impl);
    if (st != CK_OK) return st;
    g->impl = impl;
    g->capturing = 1;
    capture_ = g;
    ck_stream_set_current(g->dev, s);
    __atomic_add_fetch(&ck_graph_captures_, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ck_graph_keepers_, 1, __ATOMIC_RELAXED);
    return CK_OK;
}

ck_status ck_graph_capture_end(ck_graph *g)
{
    if (!g->capturing) return ck_error_set(CK_ERR_RUNTIME, "capture_end: the graph is not being captured");
    if (capture_ != g) return ck_error_set(CK_ERR_RUNTIME, "capture_end: the graph is being captured by another thread");
    capture_leave(g);
    ck_status st = g->be->graph_end(g->dev, g->stream, g->impl);
    if (st != CK_OK) {
        g->impl = NULL;   /* the backend freed it */
        return st;
    }
    if (g->be->graph_uses) {
        pthread_mutex_lock(&cpu_graphs_mu);
        g->next_cpu = cpu_graphs_;
        cpu_graphs_ = g;
        pthread_mutex_unlock(&cpu_graphs_mu);
        __atomic_add_fetch(&ck_graph_keepers_, 1, __ATOMIC_RELAXED);
    }
    return CK_OK;
}

ck_status ck_graph_replay(ck_graph *g)
{
    if (g->capturing) return ck_error_set(CK_ERR_RUNTIME, "replay: the graph is still being captured (end it first)");
    if (!g->impl) return ck_error_set(CK_ERR_RUNTIME, "replay: the graph holds no capture (capture it first)");
    if (capture_) return ck_error_set(CK_ERR_RUNTIME, "replay: a graph cannot be replayed during a capture");
    ck_stream s = ck_stream_current(g->dev);
    if (g->dev.type == CK_DEVICE_CPU) return g->be->graph_launch(g->dev, g->impl, s);
    pthread_mutex_lock(&replays_mu);
    ck_status st = CK_OK;
    if (g->pending && g->replay_stream != s) {
        st = g->be->event_record(g->dev, g->done, g->replay_stream);
        if (st == CK_OK) g->pending = 0, g->done_set = 1;
    }
    /* done stands for replays elsewhere: s follows them, and its own order
     * stands for them from now on */
    if (st == CK_OK && g->done_set) {
        st = g->be->stream_wait_event(g->dev, s, g->done);
        if (st == CK_OK) g->done_set = 0;
    }
    if (st == CK_OK && !g->done) st = g->be->event_create(g->dev, 0, &g->done);
    if (st == CK_OK) st = g->be->graph_launch(g->dev, g->impl, s);
    if (st == CK_OK) {
        g->pending = 1;
        g->replay_stream = s;
        if (!g->listed) {
            g->next_gpu = replayed_;
            replayed_ = g;
            g->listed = 1;
        }
    }
    pthread_mutex_unlock(&replays_mu);
    return st;
}

void ck_graph_stream_gone(ck_device dev, ck_stream s)
{
    pthread_mutex_lock(&replays_mu);
    for (ck_graph *g = replayed_; g; g = g->next_gpu)
        if (g->pending && g->replay_stream == s && ck_device_equal(g->dev, dev)) {
            if (g->be->event_record(g->dev, g->done, s) == CK_OK) {
                g->done_set = 1;
            } else {
                /* unmarked: its replays are waited for */
                if (g->be->stream_synchronize(g->dev, s) != CK_OK) ck_error_clear();
                ck_error_clear();
                g->done_set = 0;
            }
            g->pending = 0;
        }
    pthread_mutex_unlock(&replays_mu);
}

/* Wait for the graph's replays (their memory is about to go). */
static void replays_wait(ck_graph *g)
{
    pthread_mutex_lock(&replays_mu);
    if (g->pending && g->be->event_record(g->dev, g->done, g->replay_stream) == CK_OK) g->done_set = 1;
    else if (g->pending && g->be->stream_synchronize(g->dev, g->replay_stream) != CK_OK) ck_error_clear();
    g->pending = 0;
    if (g->listed) {
        for (ck_graph **pp = &replayed_; *pp; pp = &(*pp)->next_gpu)
            if (*pp == g) { *pp = g->next_gpu; break; }
        g->listed = 0;
    }
    pthread_mutex_unlock(&replays_mu);
    if (g->done_set && ck_event_synchronize(g->dev, g->done) != CK_OK) ck_error_clear();
    g->done_set = 0;
}

int64_t ck_graph_node_count(const ck_graph *g)
{
    if (!g->impl || g->capturing) return -1;
    return g->be->graph_nodes ? g->be->graph_nodes(g->impl) : -1;
}

size_t ck_graph_pool_bytes(const ck_graph *g)
{
    if (!g->pool) return 0;
    pthread_mutex_lock(&g->pool->mu);
    size_t n = g->pool->bytes;
    pthread_mutex_unlock(&g->pool->mu);
    return n;
}

/* Drop the capture: a capture in progress ends (its work discarded), the
 * replays queued are waited for, then the pool is let go. */
static void graph_drop(ck_graph *g)
{
    if (g->capturing && capture_ == g) {
        capture_leave(g);
        if (g->be->graph_end(g->dev, g->stream, g->impl) == CK_OK) g->be->graph_free(g->dev, g->impl);
        ck_error_clear();
        g->impl = NULL;
    }
    replays_wait(g);
    if (g->impl) {
        if (g->be->graph_uses) {
            pthread_mutex_lock(&cpu_graphs_mu);
            for (ck_graph **pp = &cpu_graphs_; *pp; pp = &(*pp)->next_cpu)
                if (*pp == g) { *pp = g->next_cpu; break; }
            pthread_mutex_unlock(&cpu_graphs_mu);
            __atomic_sub_fetch(&ck_graph_keepers_, 1, __ATOMIC_RELAXED);
        }
        g->be->graph_free(g->dev, g->impl);
        g->impl = NULL;
    }
    pool_unref(g->pool);
    g->pool = NULL;
}

ck_status ck_graph_reset(ck_graph *g)
{
    if (g->capturing && capture_ != g)
        return ck_error_set(CK_ERR_RUNTIME, "reset: the graph is being captured by another thread");
    graph_drop(g);
    return CK_OK;
}

void ck_graph_free(ck_graph *g)
{
    if (!g) return;
    if (g->capturing && capture_ != g) return;   /* another thread's capture: leaked rather than torn */
    graph_drop(g);
    if (g->done) ck_event_destroy(g->dev, g->done);
    if (g->own_stream) ck_stream_destroy(g->dev, g->own_stream);
    ck_error_clear();
    free(g);
}
