#include "parallel.h"
#include "cudakit.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define CK_MAX_THREADS 64

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pool_call_mu = PTHREAD_MUTEX_INITIALIZER;  /* one job at a time */
static int pool_nthreads = 0;        /* configured, including the caller */
static int pool_started = 0;         /* workers running */
static uint64_t pool_generation = 0;
static int pool_pending = 0;
static struct {
    ck_range_fn fn;
    void *ctx;
    int64_t n, chunk;
    int nchunks;
} pool_job;
static _Thread_local int ck_in_parallel_;

/* A forked child has none of the parent's workers: start afresh, or the
 * first parallel loop in the child would wait for threads that are gone. */
static void pool_atfork_child(void)
{
    pthread_mutex_init(&pool_mu, NULL);
    pthread_mutex_init(&pool_call_mu, NULL);
    pthread_cond_init(&pool_go, NULL);
    pthread_cond_init(&pool_done, NULL);
    pool_started = 0;
    pool_pending = 0;
    pool_generation = 0;
}

static pthread_once_t pool_atfork_once = PTHREAD_ONCE_INIT;
static void pool_register_atfork(void) { pthread_atfork(NULL, NULL, pool_atfork_child); }

static int default_threads(void)
{
    const char *e = getenv("CUDAKIT_NUM_THREADS");
    if (e && atoi(e) > 0) return atoi(e) > CK_MAX_THREADS ? CK_MAX_THREADS : atoi(e);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > CK_MAX_THREADS ? CK_MAX_THREADS : (int)n;
}

int ck_cpu_num_threads(void)
{
    if (!pool_nthreads) pool_nthreads = default_threads();
    return pool_nthreads;
}

void ck_cpu_set_num_threads(int n)
{
    if (n < 1) n = 1;
    if (n > CK_MAX_THREADS) n = CK_MAX_THREADS;
    pthread_mutex_lock(&pool_call_mu);
    pool_nthreads = n;   /* extra started workers simply stay idle */
    pthread_mutex_unlock(&pool_call_mu);
}

static void run_chunk(int c)
{
    int64_t b = (int64_t)c * pool_job.chunk;
    int64_t e = b + pool_job.chunk;
    if (e > pool_job.n) e = pool_job.n;
    if (b < e) pool_job.fn(pool_job.ctx, b, e, c);
}

static void *worker_main(void *arg)
{
    int id = (int)(intptr_t)arg;   /* 1 .. */
    uint64_t seen = 0;
    ck_in_parallel_ = 1;
    pthread_mutex_lock(&pool_mu);
    for (;;) {
        while (pool_generation == seen) pthread_cond_wait(&pool_go, &pool_mu);
        seen = pool_generation;
        int mine = id < pool_job.nchunks;
        pthread_mutex_unlock(&pool_mu);
        if (mine) run_chunk(id);
        pthread_mutex_lock(&pool_mu);
        if (mine && --pool_pending == 0) pthread_cond_signal(&pool_done);
    }
    return NULL;
}

int ck_parallel_nchunks(int64_t n, int64_t grain)
{
    int t = ck_cpu_num_threads();
    if (grain < 1) grain = 1;
    int64_t maxc = n / grain;
    if (maxc < 2 || t < 2 || ck_in_parallel_) return 1;
    return (int)(maxc < t ? maxc : t);
}

void ck_parallel_for(int64_t n, int64_t grain, ck_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    int nchunks = ck_parallel_nchunks(n, grain);
    if (nchunks <= 1) { fn(ctx, 0, n, 0); return; }
    if (grain < 1) grain = 1;
    int64_t chunk = (n + nchunks - 1) / nchunks;
    chunk = (chunk + grain - 1) / grain * grain;
    nchunks = (int)((n + chunk - 1) / chunk);

    pthread_once(&pool_atfork_once, pool_register_atfork);
    pthread_mutex_lock(&pool_call_mu);
    pthread_mutex_lock(&pool_mu);
    while (pool_started < nchunks - 1) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &at, worker_main, (void *)(intptr_t)(pool_started + 1)) != 0) {
            pthread_attr_destroy(&at);
            break;
        }
        pthread_attr_destroy(&at);
        pool_started++;
    }
    if (nchunks - 1 > pool_started) {   /* could not start enough workers */
        pthread_mutex_unlock(&pool_mu);
        pthread_mutex_unlock(&pool_call_mu);
        fn(ctx, 0, n, 0);
        return;
    }
    pool_job.fn = fn;
    pool_job.ctx = ctx;
    pool_job.n = n;
    pool_job.chunk = chunk;
    pool_job.nchunks = nchunks;
    pool_pending = nchunks - 1;
    pool_generation++;
    pthread_cond_broadcast(&pool_go);
    pthread_mutex_unlock(&pool_mu);

    ck_in_parallel_ = 1;
    run_chunk(0);
    ck_in_parallel_ = 0;

    pthread_mutex_lock(&pool_mu);
    while (pool_pending > 0) pthread_cond_wait(&pool_done, &pool_mu);
    pthread_mutex_unlock(&pool_mu);
    pthread_mutex_unlock(&pool_call_mu);
}
