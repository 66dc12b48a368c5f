/* Launches under way (see internal.h): each launching thread keeps a
 * record the watchdog reads.  A launch that is still running at the
 * watchdog's second look (10 to 20 ms after it began) has SIGINT caught for
 * it, and one past the kernel time limit is asked to stop; a SIGINT caught
 * asks every launch under way to stop.  Workers look at ck_cpu_stop_flag
 * between blocks and kernels at each loop back-edge, so a short launch
 * costs a few stores and no system call.  The watchdog ticks while
 * launches come and parks after a second without any. */
#define _GNU_SOURCE /* pthread_condattr_setclock */
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#define CK_WD_TICK_NS 10000000ull /* 10 ms */
#define CK_WD_PARK_NS 1000000000ull
#define CK_WD_IDLE_TICKS 100

enum { CK_WD_NONE, CK_WD_RUNNING, CK_WD_PARKED, CK_WD_FAILED };

atomic_int ck_cpu_stop_flag;

static _Atomic(ck_watch *) ck_watch_list;
static _Thread_local ck_watch *ck_watch_self;
static pthread_key_t ck_watch_key;
static pthread_once_t ck_watch_once = PTHREAD_ONCE_INIT;

static atomic_int ck_wd_state;
static pthread_mutex_t ck_wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ck_wd_cv;

/* In the SIGINT handler: every launch under way is asked to stop. */
static void ck_watch_on_sigint(void)
{
    int any = 0;
    for (ck_watch *w = atomic_load(&ck_watch_list); w; w = w->next) {
        if (!atomic_load(&w->cur)) continue;
        atomic_store(&w->stop, atomic_load(&w->gen) << 2 | CK_STOP_INTERRUPT);
        any = 1;
    }
    if (any) atomic_store(&ck_cpu_stop_flag, 1);
}

static void ck_watch_release(void *p)
{
    ck_watch *w = p;
    if (w) atomic_store(&w->owned, 0);
}

/* The watchdog's timed waits are on the monotonic clock. */
static void ck_wd_cond_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ck_wd_cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* A forked child has only the thread that forked, and no watchdog. */
static void ck_watch_atfork_child(void)
{
    pthread_mutex_init(&ck_wd_mu, NULL);
    ck_wd_cond_init();
    atomic_store(&ck_wd_state, CK_WD_NONE);
    atomic_store(&ck_cpu_stop_flag, 0);
    for (ck_watch *w = atomic_load(&ck_watch_list); w; w = w->next) {
        atomic_store(&w->cur, 0);
        w->seen_gen = 0;
        if (w != ck_watch_self) atomic_store(&w->owned, 0);
    }
}

static void ck_watch_init(void)
{
    pthread_key_create(&ck_watch_key, ck_watch_release);
    ck_wd_cond_init();
    ck_sigint_set_hook(ck_watch_on_sigint);
    pthread_atfork(NULL, NULL, ck_watch_atfork_child);
}

static ck_watch *ck_watch_claim(void)
{
    pthread_once(&ck_watch_once, ck_watch_init);
    ck_watch *w = atomic_load(&ck_watch_list);
    for (; w; w = w->next) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&w->owned, &free_, 1)) break;
    }
    if (!w) {
        w = calloc(1, sizeof *w);
        if (!w) return NULL;
        atomic_init(&w->owned, 1);
        ck_watch *head = atomic_load(&ck_watch_list);
        do w->next = head;
        while (!atomic_compare_exchange_weak(&ck_watch_list, &head, w));
    }
    pthread_setspecific(ck_watch_key, w);
    ck_watch_self = w;
    return w;
}

/* One look at every record (the watchdog's thread); 1 when a launch is under way. */
static int ck_watch_scan(void)
{
    uint64_t lim = ck_kernel_timeout_ns(), now = lim ? ck_now_ns() : 0;
    int active = 0, pending = 0;
    for (ck_watch *w = atomic_load(&ck_watch_list); w; w = w->next) {
        uintptr_t c = atomic_load_explicit(&w->cur, memory_order_acquire);
        if (!c) continue;
        active = 1;
        uint64_t g = atomic_load(&w->gen);
        if (g != w->seen_gen) {
            w->seen_gen = g;
        } else if (!(c & 1) && ck_sigint_catch_begin()) {
            /* It ran a tick at least: a Ctrl-C now stops it.  The launch
             * ends the catch, unless it ended first. */
            if (!atomic_compare_exchange_strong(&w->cur, &c, c | 1)) ck_sigint_catch_end();
        }
        uint64_t t0 = atomic_load(&w->start_ns), s = atomic_load(&w->stop);
        if (lim && t0 && now - t0 >= lim && (s >> 2) != g)
            atomic_compare_exchange_strong(&w->stop, &s, g << 2 | CK_STOP_TIMEOUT);
        if ((atomic_load(&w->stop) >> 2) == g) pending = 1;
    }
    /* Cleared once no launch asked to stop is left (a SIGINT that set it
     * just now is seen again at the next tick). */
    atomic_store(&ck_cpu_stop_flag, pending);
    return active;
}

static void *ck_watchdog_main(void *arg)
{
    (void)arg;
    int idle = 0;
    pthread_mutex_lock(&ck_wd_mu);
    for (;;) {
        uint64_t wait = CK_WD_TICK_NS;
        if (idle >= CK_WD_IDLE_TICKS) {
            /* Woken by the next launch; the timeout covers one that began
             * as this thread was parking. */
            atomic_store(&ck_wd_state, CK_WD_PARKED);
            wait = CK_WD_PARK_NS;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + wait;
        ts.tv_sec += (time_t)(ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&ck_wd_cv, &ck_wd_mu, &ts);
        atomic_store(&ck_wd_state, CK_WD_RUNNING);
        pthread_mutex_unlock(&ck_wd_mu);
        int active = ck_watch_scan();
        pthread_mutex_lock(&ck_wd_mu);
        idle = active ? 0 : idle + 1;
    }
    return NULL;
}

static void ck_watchdog_wake(void)
{
    pthread_mutex_lock(&ck_wd_mu);
    int st = atomic_load(&ck_wd_state);
    if (st == CK_WD_NONE) {
        /* Started with every signal blocked: process signals are not its to handle. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 64 * 1024);
        pthread_t th;
        int ok = pthread_create(&th, &at, ck_watchdog_main, NULL) == 0;
        pthread_attr_destroy(&at);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        atomic_store(&ck_wd_state, ok ? CK_WD_RUNNING : CK_WD_FAILED);
    } else if (st == CK_WD_PARKED) {
        atomic_store(&ck_wd_state, CK_WD_RUNNING);
        pthread_cond_signal(&ck_wd_cv);
    }
    pthread_mutex_unlock(&ck_wd_mu);
}

void ck_cpu_watch_begin(ck_launch *L)
{
    ck_watch *w = ck_watch_self ? ck_watch_self : ck_watch_claim();
    L->watch = w;
    if (!w) return;
    uint64_t g = atomic_load_explicit(&w->gen, memory_order_relaxed) + 1;
    atomic_store_explicit(&w->gen, g, memory_order_relaxed);
    L->gen = g;
    L->limit_ns = ck_kernel_timeout_ns();
    atomic_store_explicit(&w->start_ns, L->limit_ns ? ck_now_ns() : 0, memory_order_relaxed);
    atomic_store_explicit(&w->cur, (uintptr_t)L, memory_order_release);
    int st = atomic_load_explicit(&ck_wd_state, memory_order_relaxed);
    if (st != CK_WD_RUNNING && st != CK_WD_FAILED) ck_watchdog_wake();
}

void ck_cpu_watch_end(ck_launch *L, ck_status result)
{
    ck_watch *w = L->watch;
    if (!w) return;
    uintptr_t c = atomic_exchange(&w->cur, 0);
    if (result == CK_ERR_INTERRUPT) ck_sigint_reported();
    if (c & 1) ck_sigint_catch_end();
}
