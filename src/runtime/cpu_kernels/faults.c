/* Traps, failed asserts, faults and stops inside a kernel (see
 * internal.h): each ends the launch with an error naming the kernel, block
 * and thread, by a jump back to the launcher (launch.c's sigsetjmp) from
 * wherever the kernel was, a fiber included.  A fault (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGTRAP) is caught by a signal handler installed once, at
 * the first launch, that runs on an alternate stack each worker thread
 * gets, so that a stack overflow can be caught too; a fault that is not a
 * kernel's goes on to the handler that was there before. */
#define _GNU_SOURCE /* siginfo_t, sigjmp_buf, REG_RSP, MAP_STACK */
#undef _FORTIFY_SOURCE /* its longjmp check refuses a jump from one stack to another */
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define CK_ALTSTACK_SIZE (64u * 1024u)

static const int ck_fault_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};
#define CK_NSIGS (int)(sizeof ck_fault_sigs / sizeof ck_fault_sigs[0])
static struct sigaction ck_old_act[CK_NSIGS];
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

void ck_cpu_api_poll(void)
{
    ck_worker *W = ck_cpu_worker_self;
    if (!W || !W->L || !W->in_kernel) return;
    int why = ck_cpu_watch_stop_reason(W->L);
    if (!why) return;
    ck_cpu_launch_stopped(W->L, W->ctx, why);
    ck_worker_jump(W);
}

static void *ck_uc_sp(void *uc)
{
#if defined(__x86_64__)
    return (void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (void *)((ucontext_t *)uc)->uc_mcontext.sp;
#else
    (void)uc;
    return NULL;
#endif
}

static void ck_fault_handler(int sig, siginfo_t *si, void *uc)
{
    ck_worker *W = ck_cpu_worker_self;
    if (W && W->in_kernel && W->L) {
        W->fault_sig = sig;
        W->fault_code = si->si_code;
        W->fault_addr = si->si_addr;
        W->fault_sp = ck_uc_sp(uc);
        W->fault_stack = W->on_fiber ? W->B.f[W->B.cur].stack : NULL;
        ck_worker_jump(W);
    }
    /* Not a kernel's: what was there before us. */
    int k = 0;
    while (k < CK_NSIGS - 1 && ck_fault_sigs[k] != sig) k++;
    struct sigaction *old = &ck_old_act[k];
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
 * without saving the mask in every sigsetjmp; SA_ONSTACK, so that it runs
 * when the kernel's stack is the one that ran out. */
static void ck_sig_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ck_fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < CK_NSIGS; k++) sigaction(ck_fault_sigs[k], &sa, &ck_old_act[k]);
}

void ck_cpu_faults_install(void)
{
    const char *catch_env = getenv("CUDAKIT_CPU_CATCH");
    if (!catch_env || strcmp(catch_env, "0")) pthread_once(&ck_sig_once, ck_sig_install);
}

/* The stack the handler runs on when the thread's own is full; a thread
 * that already has one (Python's faulthandler gives the main thread one)
 * keeps it. */
void ck_cpu_altstack_install(ck_worker *W)
{
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return;
    size_t page = ck_cpu_page_size();
    char *m = mmap(NULL, CK_ALTSTACK_SIZE + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
                   0);
    if (m == MAP_FAILED) return;
    mprotect(m, page, PROT_NONE);
    stack_t ss = {.ss_sp = m + page, .ss_size = CK_ALTSTACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(m, CK_ALTSTACK_SIZE + page);
        return;
    }
    W->altstack = m + page;
}

void ck_cpu_altstack_free(ck_worker *W)
{
    if (!W->altstack) return;
    size_t page = ck_cpu_page_size();
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == W->altstack) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
    }
    munmap((char *)W->altstack - page, CK_ALTSTACK_SIZE + page);
    W->altstack = NULL;
}

/* A fault in the guard below a fiber's stack, or just below the stack
 * pointer (a worker thread's own stack, whose guard the kernel keeps). */
static int ck_fault_is_overflow(const ck_worker *W)
{
    if (W->fault_sig != SIGSEGV && W->fault_sig != SIGBUS) return 0;
    uintptr_t a = (uintptr_t)W->fault_addr, sp = (uintptr_t)W->fault_sp;
    if (W->fault_stack) {
        uintptr_t lo = (uintptr_t)W->fault_stack;
        if (a < lo && a >= lo - ck_cpu_stack_guard()) return 1;
    }
    return sp && a + 65536 > sp && a < sp + 4096;
}

static const char *ck_fpe_what(int code)
{
    switch (code) {
    case FPE_INTDIV: return "integer division by zero";
    case FPE_INTOVF: return "integer overflow (INT_MIN / -1?)";
    case FPE_FLTDIV: return "floating-point division by zero (trapping enabled)";
    case FPE_FLTINV: return "invalid floating-point operation (trapping enabled)";
    default: return "arithmetic fault (integer division by zero?)";
    }
}

void ck_cpu_fault_report(ck_launch *L, ck_worker *W)
{
    const ck__ctx_t *c = W->ctx;
    char where[200];
    int n = snprintf(where, sizeof where, "block (%u, %u, %u)", c->bid.x, c->bid.y, c->bid.z);
    if (L->mode != CK_MODE_BLOCK || L->nthreads == 1)
        snprintf(where + n, sizeof where - (size_t)n, ", thread (%u, %u, %u)", c->tid.x, c->tid.y, c->tid.z);
    else
        /* The kernel, inlined into the loop over the block's threads, need
         * not have stored the index of the thread it was at. */
        snprintf(where + n, sizeof where - (size_t)n,
                 ", thread unknown (the block ran as one loop; CUDAKIT_CPU_FIBERS=1 names the thread)");
    char *a = W->fault_addr;
    const char *name = L->fn->name;
    switch (W->fault_sig) {
    case SIGFPE: ck_cpu_launch_error(L, CK_ERR_DEVICE, "kernel %s: %s in %s", name, ck_fpe_what(W->fault_code), where); return;
    case SIGILL:
        ck_cpu_launch_error(L, CK_ERR_DEVICE,
                            "kernel %s: illegal instruction (inline asm, or a trap the compiler put where behaviour "
                            "is undefined) at %p in %s",
                            name, (void *)a, where);
        return;
    case SIGTRAP: ck_cpu_launch_error(L, CK_ERR_DEVICE, "kernel %s: breakpoint trap in %s", name, where); return;
    default: break;
    }
    if (ck_fault_is_overflow(W)) {
        char size[96] = "its worker thread's stack";
        if (W->fault_stack) snprintf(size, sizeof size, "its %zu KiB stack", W->stack_size / 1024);
        ck_cpu_launch_error(L, CK_ERR_DEVICE,
                            "kernel %s: stack overflow in %s: a thread used more than %s (recursion too deep or "
                            "endless? a GPU thread has at most 512 KiB of local memory; CUDAKIT_CPU_STACK_KB sets "
                            "the stack of the CPU's fibers)",
                            name, where, size);
        return;
    }
    if (ck_cpu_guards_report(L, a, where)) return;
    ck_cpu_launch_error(L, CK_ERR_DEVICE, "kernel %s: illegal memory access at address %p in %s (%s)", name, (void *)a,
                        where,
                        W->fault_sig == SIGBUS ? "bus error"
                        : L->bounds            ? "not inside any array argument"
                                               : "CUDAKIT_BOUNDS=1 checks the array arguments' bounds");
}
