/* A worker's state and a block's threads as fibers (see internal.h).
 *
 * Each OS thread that runs blocks keeps a worker: fiber stacks (a guard
 * below each), the fibers of one block, its dynamic shared memory.  A
 * block that needs fibers runs them one at a time on the worker's thread;
 * a fiber that reaches a barrier or a warp function records what it
 * brought and yields, and the last to arrive computes everyone's result
 * and makes them runnable again.
 *
 * A fiber's stack is sized from the kernel library: the frames of all its
 * functions (frames.c) add up to at least what any chain of calls that
 * does not recurse needs; to that comes room for the runtime and the C
 * library.  Within 64 KiB and a GPU thread's 512 KiB of local memory
 * (with that room); a function whose frame is not static (alloca, a
 * variable-length array) gets the most.  Memory is reserved, and used only
 * as far as the stack is touched. */
#define _GNU_SOURCE /* MAP_NORESERVE, MAP_STACK */
#include "internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define CK_CPU_STACK_MIN (64u * 1024u)
#define CK_CPU_STACK_ROOM (32u * 1024u)          /* the runtime's frames, printf, a signal's frame */
#define CK_CPU_LOCAL_MAX (512u * 1024u)          /* a GPU thread's local memory */
#define CK_CPU_STACK_GUARD (64u * 1024u)         /* PROT_NONE below each fiber stack */

#if defined(__x86_64__) && !defined(CK_FIBER_UCONTEXT)
/* A context switch saves only what the ABI says a call preserves: rbx,
 * rbp, r12-r15 and the stack pointer; no system call, unlike swapcontext
 * (which saves the signal mask).  The MXCSR and x87 control words are
 * not switched (kernels do not change rounding modes): saving them cost
 * most of a switch. */
__asm__(".text\n"
        ".globl ck_fiber_swap_x64\n"
        ".hidden ck_fiber_swap_x64\n"
        ".type ck_fiber_swap_x64,@function\n"
        "ck_fiber_swap_x64:\n"
        "    pushq %rbp\n    pushq %rbx\n    pushq %r12\n    pushq %r13\n    pushq %r14\n    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n    popq %r14\n    popq %r13\n    popq %r12\n    popq %rbx\n    popq %rbp\n"
        "    ret\n"
        ".size ck_fiber_swap_x64, .-ck_fiber_swap_x64\n"
        ".globl ck_fiber_boot_x64\n"
        ".hidden ck_fiber_boot_x64\n"
        ".type ck_fiber_boot_x64,@function\n"
        "ck_fiber_boot_x64:\n"
        "    movq %r12, %rdi\n"
        "    callq *%r13\n"
        "    ud2\n"
        ".size ck_fiber_boot_x64, .-ck_fiber_boot_x64\n");
void ck_fiber_swap_x64(void **save, void *to);
void ck_fiber_boot_x64(void);

static void ck_fctx_make(ck_fctx *c, char *lo, size_t size, void (*fn)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)(lo + size)) & ~(uintptr_t)15;
    /* After the 6 pops and the ret, rsp = top - 16: 16-byte aligned at the
     * call in boot, as the ABI wants. */
    uint64_t *sp = (uint64_t *)(top - 72);
    sp[0] = sp[1] = 0;                /* r15, r14 */
    sp[2] = (uint64_t)(uintptr_t)fn;  /* r13 */
    sp[3] = (uint64_t)(uintptr_t)arg; /* r12 */
    sp[4] = sp[5] = 0;                /* rbx, rbp */
    sp[6] = (uint64_t)(uintptr_t)ck_fiber_boot_x64;
    c->sp = sp;
}
static inline void ck_fctx_swap(ck_fctx *from, ck_fctx *to) { ck_fiber_swap_x64(&from->sp, to->sp); }
#else
static void ck_uctx_boot(unsigned hi_fn, unsigned lo_fn, unsigned hi_arg, unsigned lo_arg)
{
    void (*fn)(void *) = (void (*)(void *))(uintptr_t)(((uint64_t)hi_fn << 32) | lo_fn);
    fn((void *)(uintptr_t)(((uint64_t)hi_arg << 32) | lo_arg));
}
static void ck_fctx_make(ck_fctx *c, char *lo, size_t size, void (*fn)(void *), void *arg)
{
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = lo;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = NULL;
    uint64_t f = (uint64_t)(uintptr_t)fn, a = (uint64_t)(uintptr_t)arg;
    makecontext(&c->uc, (void (*)(void))ck_uctx_boot, 4, (unsigned)(f >> 32), (unsigned)f, (unsigned)(a >> 32),
                (unsigned)a);
}
static inline void ck_fctx_swap(ck_fctx *from, ck_fctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

_Thread_local ck_worker *ck_cpu_worker_self;
static pthread_key_t ck_worker_key;
static pthread_once_t ck_worker_once = PTHREAD_ONCE_INIT;
static size_t ck_page;

static void ck_stacks_free(ck_worker *w)
{
    for (int i = 0; i < w->nstacks; i++) munmap(w->stacks[i] - CK_CPU_STACK_GUARD, w->stack_size + CK_CPU_STACK_GUARD);
    w->nstacks = 0;
}

static void ck_worker_destroy(void *p)
{
    ck_worker *w = p;
    if (!w) return;
    ck_stacks_free(w);
    ck_cpu_altstack_free(w);
    free(w->stacks);
    free(w->fibers);
    free(w->smem);
    free(w);
}

static void ck_worker_key_init(void)
{
    pthread_key_create(&ck_worker_key, ck_worker_destroy);
    ck_page = (size_t)sysconf(_SC_PAGESIZE);
}

size_t ck_cpu_page_size(void)
{
    pthread_once(&ck_worker_once, ck_worker_key_init);
    return ck_page;
}

ck_worker *ck_cpu_worker_get(void)
{
    if (ck_cpu_worker_self) return ck_cpu_worker_self;
    pthread_once(&ck_worker_once, ck_worker_key_init);
    ck_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fibers = calloc(CK_CPU_MAX_THREADS_PER_BLOCK, sizeof *w->fibers);
    if (!w->fibers) {
        free(w);
        return NULL;
    }
    w->stack_size = 0; /* set by the first launch with fibers */
    ck_cpu_altstack_install(w);
    pthread_setspecific(ck_worker_key, w);
    ck_cpu_worker_self = w;
    return w;
}

size_t ck_cpu_stack_guard(void) { return CK_CPU_STACK_GUARD; }

void ck_cpu_worker_fit_stacks(ck_worker *W, size_t size)
{
    if (W->stack_size >= size) return;
    ck_stacks_free(W);
    W->stack_size = size;
}

size_t ck_cpu_module_fiber_stack(ck_cpu_module *m)
{
    size_t s = atomic_load_explicit(&m->fiber_stack, memory_order_acquire);
    if (s) return s;
    size_t page = ck_cpu_page_size();
    const char *e = getenv("CUDAKIT_CPU_STACK_KB");
    long kb = e ? atol(e) : 0;
    if (kb >= 16 && kb <= 65536) {
        s = (size_t)kb * 1024;
    } else {
        int64_t frames = ck_cpu_library_frames(m->dl);
        s = frames < 0 || frames > (int64_t)CK_CPU_LOCAL_MAX ? CK_CPU_LOCAL_MAX : (size_t)frames;
        s += CK_CPU_STACK_ROOM;
        if (s < CK_CPU_STACK_MIN) s = CK_CPU_STACK_MIN;
    }
    s = (s + page - 1) / page * page;
    atomic_store_explicit(&m->fiber_stack, s, memory_order_release);
    return s;
}

/* A fiber stack: a guard below, so an overflow faults instead of writing
 * over a neighbour (and the compiler probes a large frame a page at a
 * time, so no frame steps over the guard). */
static char *ck_stack_get(ck_worker *w)
{
    if (w->nstacks) return w->stacks[--w->nstacks];
    char *m = mmap(NULL, w->stack_size + CK_CPU_STACK_GUARD, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return NULL;
    mprotect(m, CK_CPU_STACK_GUARD, PROT_NONE);
    return m + CK_CPU_STACK_GUARD;
}

static void ck_stack_put(ck_worker *w, char *s)
{
    if (w->nstacks == w->capstacks) {
        int cap = w->capstacks ? 2 * w->capstacks : 64;
        char **p = realloc(w->stacks, sizeof *p * (size_t)cap);
        if (!p) {
            munmap(s - CK_CPU_STACK_GUARD, w->stack_size + CK_CPU_STACK_GUARD);
            return;
        }
        w->stacks = p;
        w->capstacks = cap;
    }
    w->stacks[w->nstacks++] = s;
}

void ck_cpu_worker_drop_fibers(ck_worker *w)
{
    for (int t = 0; t < w->B.n; t++)
        if (w->fibers[t].stack) {
            ck_stack_put(w, w->fibers[t].stack);
            w->fibers[t].stack = NULL;
        }
    w->B.n = 0;
}

static void ck_yield(ck_block_run *B, ck_fiber *me, int exiting)
{
#ifdef CK_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(exiting ? NULL : &fake, B->sched_lo, B->sched_size);
#else
    (void)exiting;
#endif
    ck_fctx_swap(&me->ctx, &B->sched);
#ifdef CK_ASAN
    __sanitizer_finish_switch_fiber(fake, &B->sched_lo, &B->sched_size);
#endif
}

static void ck_release_block(ck_block_run *B)
{
    unsigned count = 0;
    for (int t = 0; t < B->n; t++)
        if (B->f[t].state == CK_F_WAIT_BLOCK && B->f[t].val) count++;
    for (int t = 0; t < B->n; t++) {
        ck_fiber *x = &B->f[t];
        if (x->state != CK_F_WAIT_BLOCK) continue;
        x->result = x->op == CK__OP_SYNC_COUNT ? count
                    : x->op == CK__OP_SYNC_AND ? (count == (unsigned)B->nwait)
                    : x->op == CK__OP_SYNC_OR  ? (count > 0)
                                              : 0;
        x->state = CK_F_RUNNABLE;
    }
    B->nwait = 0;
}

/* If every lane `want` names (that exists and has not exited) waits at a
 * warp function, give each its result and let them go. */
static void ck_warp_try(ck_block_run *B, int w, unsigned want)
{
    unsigned need = want & B->exists[w] & ~B->done[w];
    if (!need || (B->arrived[w] & need) != need) return;
    ck_fiber *base = &B->f[w * 32];
    unsigned ballot = 0;
    for (int l = 0; l < 32; l++)
        if ((need >> l & 1) && base[l].val) ballot |= 1u << l;
    for (int l = 0; l < 32; l++) {
        if (!(need >> l & 1)) continue;
        ck_fiber *x = &base[l];
        int width = x->width;
        if (width <= 0 || width > 32 || (width & (width - 1))) width = 32;
        int src = l, arg = x->arg;
        unsigned long long r = 0;
        switch (x->op) {
        case CK__OP_SHFL: src = (l & ~(width - 1)) + (arg & (width - 1)); break;
        case CK__OP_SHFL_UP: src = arg >= 0 && (l & (width - 1)) >= arg ? l - arg : l; break;
        case CK__OP_SHFL_DOWN: src = arg >= 0 && (l & (width - 1)) + arg < width ? l + arg : l; break;
        case CK__OP_SHFL_XOR:
            src = l ^ arg;
            if (src < 0 || src > 31 || (src & ~(width - 1)) > (l & ~(width - 1))) src = l;
            break;
        default: break;
        }
        switch (x->op) {
        case CK__OP_SHFL:
        case CK__OP_SHFL_UP:
        case CK__OP_SHFL_DOWN:
        case CK__OP_SHFL_XOR: r = (need >> src & 1) ? base[src].val : x->val; break;
        case CK__OP_BALLOT: r = ballot; break;
        case CK__OP_ANY: r = ballot != 0; break;
        case CK__OP_ALL: r = ballot == need; break;
        case CK__OP_MATCH_ANY:
        case CK__OP_MATCH_ALL: {
            unsigned same = 0;
            for (int k = 0; k < 32; k++)
                if ((need >> k & 1) && base[k].val == x->val) same |= 1u << k;
            r = x->op == CK__OP_MATCH_ANY ? same : (same == need ? need : 0);
            break;
        }
        case CK__OP_RED_ADD: case CK__OP_RED_MIN_U: case CK__OP_RED_MAX_U: case CK__OP_RED_MIN_I:
        case CK__OP_RED_MAX_I: case CK__OP_RED_AND: case CK__OP_RED_OR: case CK__OP_RED_XOR: {
            int first = 1;
            uint32_t acc = 0;
            for (int k = 0; k < 32; k++) {
                if (!(need >> k & 1)) continue;
                uint32_t v = (uint32_t)base[k].val;
                if (first) { acc = v; first = 0; continue; }
                switch (x->op) {
                case CK__OP_RED_ADD: acc += v; break;
                case CK__OP_RED_MIN_U: acc = v < acc ? v : acc; break;
                case CK__OP_RED_MAX_U: acc = v > acc ? v : acc; break;
                case CK__OP_RED_MIN_I: acc = (int32_t)v < (int32_t)acc ? v : acc; break;
                case CK__OP_RED_MAX_I: acc = (int32_t)v > (int32_t)acc ? v : acc; break;
                case CK__OP_RED_AND: acc &= v; break;
                case CK__OP_RED_OR: acc |= v; break;
                default: acc ^= v; break;
                }
            }
            r = acc;
            break;
        }
        default: r = 0; break; /* __syncwarp */
        }
        x->result = r;
    }
    for (int l = 0; l < 32; l++)
        if (need >> l & 1) base[l].state = CK_F_RUNNABLE;
    B->arrived[w] &= ~need;
}

static void ck_fiber_main(void *arg)
{
    ck_block_run *B = arg;
#ifdef CK_ASAN
    __sanitizer_finish_switch_fiber(NULL, &B->sched_lo, &B->sched_size);
#endif
    B->L->fn->thread(B->L->args);
    int t = B->cur;
    ck_fiber *me = &B->f[t];
    int w = t >> 5;
    me->state = CK_F_DONE;
    B->ndone++;
    B->done[w] |= 1u << (t & 31);
    if (B->nwait && B->nwait + B->ndone == B->n) ck_release_block(B);
    /* A lane gone may be the one the others waited for. */
    for (int l = 0; l < 32 && B->arrived[w]; l++)
        if (B->arrived[w] >> l & 1) ck_warp_try(B, w, B->f[w * 32 + l].mask | 1u << l);
    ck_yield(B, me, 1);
    __builtin_unreachable();
}

unsigned long long ck_cpu_api_sync(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width)
{
    ck_block_run *B = sched;
    if (!B) {
        ck_worker *W = ck_cpu_worker_self;
        if (op == CK__OP_ACTIVEMASK && W && W->ctx) {
            /* Threads run one at a time here: the lanes of this warp that exist. */
            const ck__ctx_t *c = W->ctx;
            unsigned n = c->bdim.x * c->bdim.y * c->bdim.z;
            unsigned t = c->tid.x + c->bdim.x * (c->tid.y + c->bdim.y * c->tid.z);
            unsigned left = n - (t & ~31u);
            return left >= 32 ? 0xffffffffu : (1u << left) - 1u;
        }
        ck_cpu_fail_thread(W, CK_ERR_RUNTIME,
                           "reached a barrier or warp function that the source scan did not see (built with "
                           "token pasting?); set CUDAKIT_CPU_FIBERS=1");
        return 0;
    }
    int t = B->cur, w = t >> 5;
    unsigned bit = 1u << (t & 31);
    ck_fiber *me = &B->f[t];
    if (op == CK__OP_ACTIVEMASK) return B->exists[w] & ~B->done[w];
    me->op = op;
    me->mask = mask;
    me->val = val;
    me->arg = arg;
    me->width = width;
    if (op < CK__OP_SYNCWARP) {
        me->state = CK_F_WAIT_BLOCK;
        B->nwait++;
        if (B->nwait + B->ndone == B->n) ck_release_block(B);
    } else {
        me->state = CK_F_WAIT_WARP;
        B->arrived[w] |= bit;
        ck_warp_try(B, w, mask | bit);
    }
    /* The last to arrive released everyone, itself included, and goes on. */
    if (me->state != CK_F_RUNNABLE) ck_yield(B, me, 0);
    me->state = CK_F_RUNNING;
    return me->result;
}

int ck_cpu_run_block_fibers(ck_worker *W, ck_launch *L)
{
    ck_block_run *B = &W->B;
    int n = L->nthreads;
    B->f = W->fibers;
    B->n = n;
    B->ndone = B->nwait = 0;
    B->L = L;
    B->ctx = W->ctx;
    for (int w = 0; w < 32; w++) {
        int left = n - 32 * w;
        B->exists[w] = left >= 32 ? 0xffffffffu : left > 0 ? (1u << left) - 1u : 0u;
        B->done[w] = B->arrived[w] = 0;
    }
    for (int t = 0; t < n; t++) {
        B->f[t].state = CK_F_NEW;
        B->f[t].stack = NULL;
    }
    for (;;) {
        int ran = 0;
        ck__u3 tid = {0, 0, 0};
        for (int t = 0; t < n; t++, tid = ck_cpu_tid_next(L, tid)) {
            ck_fiber *x = &B->f[t];
            if (x->state == CK_F_NEW) {
                /* Stacks are taken as threads start and returned as they end,
                 * so a block without barriers reuses one stack throughout. */
                x->stack = ck_stack_get(W);
                if (!x->stack) {
                    ck_cpu_launch_error(L, CK_ERR_MEMORY, "kernel %s: out of memory for fiber stacks", L->fn->name);
                    return -1;
                }
                ck_fctx_make(&x->ctx, x->stack, W->stack_size, ck_fiber_main, B);
            } else if (x->state != CK_F_RUNNABLE) {
                continue;
            }
            x->state = CK_F_RUNNING;
            B->cur = t;
            W->ctx->tid = tid;
#ifdef CK_ASAN
            void *fake = NULL;
            __sanitizer_start_switch_fiber(&fake, x->stack, W->stack_size);
#endif
            W->on_fiber = 1;
            ck_fctx_swap(&B->sched, &x->ctx);
            W->on_fiber = 0;
#ifdef CK_ASAN
            __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
            ran = 1;
            if (x->state == CK_F_DONE) {
                ck_stack_put(W, x->stack);
                x->stack = NULL;
            }
        }
        if (B->ndone == n) {
            B->n = 0;
            return 0;
        }
        if (!ran) {
            int nb = 0, nw = 0;
            for (int t = 0; t < n; t++) {
                nb += B->f[t].state == CK_F_WAIT_BLOCK;
                nw += B->f[t].state == CK_F_WAIT_WARP;
            }
            const ck__ctx_t *c = W->ctx;
            ck_cpu_launch_error(L, CK_ERR_RUNTIME,
                                "kernel %s: block (%u, %u, %u) cannot finish: its threads wait at different barriers "
                                "(%d at __syncthreads, %d at a warp function whose other lanes never arrive)",
                                L->fn->name, c->bid.x, c->bid.y, c->bid.z, nb, nw);
            ck_cpu_worker_drop_fibers(W);
            return -1;
        }
    }
}
