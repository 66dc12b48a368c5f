/* Traps, failed asserts and faults inside a kernel (see internal.h): each
 * ends the launch with an error naming the kernel, block and thread, by a
 * jump back to the launcher (launch.c's sigsetjmp) from wherever the
 * kernel was, a fiber included.  A fault is caught by a signal handler
 * installed once, at the first launch; one that is not a kernel's goes on
 * to the handler that was there before. */
#define _GNU_SOURCE /* siginfo_t, sigjmp_buf */
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sigaction ck_old_segv, ck_old_bus, ck_old_fpe;
static pthread_once_t ck_sig_once = PTHREAD_ONCE_INIT;

/* Jump back to the launcher from wherever the kernel is, a fiber included. */
static __attribute__((noreturn)) void ck_worker_jump(ck_worker *W)
{
#ifdef CK_ASAN
    if (W->on_fiber) __sanitizer_start_switch_fiber(NULL, W->B.sched_lo, W->B.sched_size);
#endif
    siglongjmp(W->jb, 1);
}

void ck_cpu_fail_thread(ck_worker *W, ck_status st, const char *what)
{
    if (!W || !W->L) abort(); /* only kernels call this, and only inside a launch */
    const ck__ctx_t *c = W->ctx;
    ck_cpu_launch_error(W->L, st, "kernel %s: block (%u, %u, %u), thread (%u, %u, %u): %s", W->L->fn->name, c->bid.x,
                        c->bid.y, c->bid.z, c->tid.x, c->tid.y, c->tid.z, what);
    ck_worker_jump(W);
}

void ck_cpu_api_fail(const char *what, const char *file, int line)
{
    char msg[512];
    if (file && *file)
        snprintf(msg, sizeof msg, "%s failed at %s:%d", what, file, line);
    else
        snprintf(msg, sizeof msg, "%s called", what);
    ck_cpu_fail_thread(ck_cpu_worker_self, CK_ERR_RUNTIME, msg);
}

static void ck_bounds_handler(int sig, siginfo_t *si, void *uc)
{
    ck_worker *W = ck_cpu_worker_self;
    if (W && W->in_kernel && W->L) {
        W->fault_sig = sig;
        W->fault_addr = si->si_addr;
        ck_worker_jump(W);
    }
    /* Not a kernel's: what was there before us. */
    struct sigaction *old = sig == SIGSEGV ? &ck_old_segv : sig == SIGBUS ? &ck_old_bus : &ck_old_fpe;
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL); /* the fault happens again on return, and is fatal as it would have been */
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

/* Faults inside a kernel end its launch with an error instead of the
 * process; any other fault goes to the handler that was there before.
 * Installed once, at the first launch, and left in place: installing it
 * around each launch would cost system calls and serialise launches.
 * SA_NODEFER, so jumping out of the handler leaves the signal unblocked
 * without saving the mask in every sigsetjmp. */
static void ck_sig_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ck_bounds_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &ck_old_segv);
    sigaction(SIGBUS, &sa, &ck_old_bus);
    sigaction(SIGFPE, &sa, &ck_old_fpe);
}

void ck_cpu_faults_install(void)
{
    const char *catch_env = getenv("CUDAKIT_CPU_CATCH");
    if (!catch_env || strcmp(catch_env, "0")) pthread_once(&ck_sig_once, ck_sig_install);
}

void ck_cpu_fault_report(ck_launch *L, ck_worker *W)
{
    const ck__ctx_t *c = W->ctx;
    char where[160];
    snprintf(where, sizeof where, "block (%u, %u, %u), thread (%u, %u, %u)", c->bid.x, c->bid.y, c->bid.z, c->tid.x,
             c->tid.y, c->tid.z);
    char *a = W->fault_addr;
    if (W->fault_sig == SIGFPE) {
        ck_cpu_launch_error(L, CK_ERR_DEVICE, "kernel %s: arithmetic fault (integer division by zero?) in %s",
                            L->fn->name, where);
        return;
    }
    if (ck_cpu_guards_report(L, a, where)) return;
    ck_cpu_launch_error(L, CK_ERR_DEVICE, "kernel %s: illegal memory access at address %p in %s (%s)", L->fn->name,
                        (void *)a, where,
                        W->fault_sig == SIGBUS ? "bus error"
                        : L->bounds            ? "not inside any array argument"
                                           : "CUDAKIT_BOUNDS=1 checks the array arguments' bounds");
}

