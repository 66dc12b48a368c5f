/* SIGINT caught while the core waits or runs kernels, and the kernel time
 * limit (see interrupt.h). */
#define _GNU_SOURCE /* SA_ONSTACK, SA_RESTART */
#include "interrupt.h"
#include "cudakit.h"
#include "cudakit_device.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t ck_int_mu = PTHREAD_MUTEX_INITIALIZER;
static int ck_int_depth;               /* catchers under way (ck_int_mu) */
static unsigned ck_int_count_at_begin; /* ck_int_count when the first of them began */
static struct sigaction ck_int_old;    /* the handler ours stands in for */
static atomic_int ck_int_active;       /* ours is in place and counting */
static atomic_int ck_int_reported_;
static atomic_uint ck_int_count;
static void (*_Atomic ck_int_hook)(void);
static pthread_once_t ck_int_once = PTHREAD_ONCE_INIT;

static void ck_int_handler(int sig, siginfo_t *si, void *uc);

static int ck_int_is_ours(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == ck_int_handler;
}

static int ck_int_is_function(const struct sigaction *a)
{
    if (a->sa_flags & SA_SIGINFO) return a->sa_sigaction != NULL;
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

/* A SIGINT in the moments before ours counts or after it stopped: the
 * handler it would have met. */
static void ck_int_forward(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *o = &ck_int_old;
    if (o->sa_flags & SA_SIGINFO) {
        if (o->sa_sigaction) o->sa_sigaction(sig, si, uc);
    } else if (o->sa_handler == SIG_DFL) {
        /* Blocked until this handler returns, then fatal as it would have been. */
        sigaction(sig, o, NULL);
        raise(sig);
    } else if (o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
    }
}

static void ck_int_handler(int sig, siginfo_t *si, void *uc)
{
    if (!atomic_load(&ck_int_active)) {
        ck_int_forward(sig, si, uc);
        return;
    }
    atomic_fetch_add(&ck_int_count, 1);
    void (*h)(void) = atomic_load(&ck_int_hook);
    if (h) h();
}

/* A forked child has no catchers: the handler of before comes back. */
static void ck_int_atfork_child(void)
{
    pthread_mutex_init(&ck_int_mu, NULL);
    if (ck_int_depth) {
        ck_int_depth = 0;
        atomic_store(&ck_int_active, 0);
        sigaction(SIGINT, &ck_int_old, NULL);
    }
}

static void ck_int_init(void) { pthread_atfork(NULL, NULL, ck_int_atfork_child); }

int ck_sigint_catch_begin(void)
{
    pthread_once(&ck_int_once, ck_int_init);
    pthread_mutex_lock(&ck_int_mu);
    int ok = 1;
    if (ck_int_depth == 0) {
        struct sigaction cur, was;
        sigaction(SIGINT, NULL, &cur);
        if (ck_int_is_ours(&cur)) {
            /* Still ours from an earlier catch (nobody else took SIGINT since). */
        } else if (!ck_int_is_function(&cur)) {
            ok = 0;
        } else {
            /* The handler to forward to is known before ours can run. */
            ck_int_old = cur;
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = ck_int_handler;
            sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (cur.sa_flags & SA_RESTART);
            sigemptyset(&sa.sa_mask);
            sigaction(SIGINT, &sa, &was);
            if (!ck_int_is_ours(&was)) ck_int_old = was;
        }
        if (ok) {
            ck_int_count_at_begin = atomic_load(&ck_int_count);
            atomic_store(&ck_int_reported_, 0);
            atomic_store(&ck_int_active, 1);
        }
    }
    if (ok) ck_int_depth++;
    pthread_mutex_unlock(&ck_int_mu);
    return ok;
}

void ck_sigint_catch_end(void)
{
    pthread_mutex_lock(&ck_int_mu);
    if (ck_int_depth > 0 && --ck_int_depth == 0) {
        atomic_store(&ck_int_active, 0);
        int unreported = atomic_load(&ck_int_count) != ck_int_count_at_begin && !atomic_load(&ck_int_reported_);
        struct sigaction cur;
        sigaction(SIGINT, NULL, &cur);
        /* Someone who took SIGINT over meanwhile keeps it. */
        if (ck_int_is_ours(&cur)) sigaction(SIGINT, &ck_int_old, NULL);
        if (unreported) raise(SIGINT);
    }
    pthread_mutex_unlock(&ck_int_mu);
}

unsigned ck_sigint_count(void) { return atomic_load_explicit(&ck_int_count, memory_order_acquire); }

void ck_sigint_reported(void) { atomic_store(&ck_int_reported_, 1); }

void ck_sigint_set_hook(void (*hook)(void)) { atomic_store(&ck_int_hook, hook); }

/* ------------------------------------------------------ the time limit */

#define CK_TIMEOUT_MAX_S 1e9

static _Atomic uint64_t ck_timeout_ns_;
static pthread_once_t ck_timeout_once = PTHREAD_ONCE_INIT;

static void ck_timeout_from_env(void)
{
    const char *e = getenv("CUDAKIT_KERNEL_TIMEOUT");
    if (!e || !*e) return;
    char *end;
    double s = strtod(e, &end);
    if (end == e || *end || !(s >= 0) || s > CK_TIMEOUT_MAX_S) {
        fprintf(stderr, "cudakit: CUDAKIT_KERNEL_TIMEOUT=%s is not a number of seconds (0 or more); no time limit\n",
                e);
        return;
    }
    atomic_store(&ck_timeout_ns_, (uint64_t)(s * 1e9 + 0.5));
}

uint64_t ck_kernel_timeout_ns(void)
{
    pthread_once(&ck_timeout_once, ck_timeout_from_env);
    return atomic_load_explicit(&ck_timeout_ns_, memory_order_relaxed);
}

ck_status ck_kernel_timeout_set(double seconds)
{
    if (!(seconds >= 0) || seconds > CK_TIMEOUT_MAX_S)
        return ck_error_set(CK_ERR_VALUE, "the kernel time limit must be a number of seconds from 0 (none) to 1e9, not %g",
                            seconds);
    pthread_once(&ck_timeout_once, ck_timeout_from_env);
    atomic_store(&ck_timeout_ns_, (uint64_t)(seconds * 1e9 + 0.5));
    return CK_OK;
}

double ck_kernel_timeout_get(void) { return (double)ck_kernel_timeout_ns() / 1e9; }

uint64_t ck_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
