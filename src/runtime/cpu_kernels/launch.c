/* ck_cpu_launch (see cpu_kernels.h and internal.h): the configuration
 * checked as a GPU would, the blocks spread over the thread pool, each
 * worker running whole blocks: as the library's own loop over a block's
 * threads, as our loop over them (bounds mode, so that a fault knows its
 * thread), or as fibers.  Between blocks a worker stops when the launch
 * failed or was asked to stop (watch.c). */
#define _GNU_SOURCE /* sigjmp_buf (internal.h) */
#include "internal.h"
#include "../parallel.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK_CPU_MAX_DYN_SHARED (227u * 1024u) /* an H100/H200's opt-in maximum */

void ck_cpu_launch_error(ck_launch *L, ck_status st, const char *fmt, ...)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&L->failed, &expect, 1)) return;
    L->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->msg, sizeof L->msg, fmt, ap);
    va_end(ap);
}

void ck_cpu_launch_stopped(ck_launch *L, const ck__ctx_t *c, int why)
{
    if (why == CK_STOP_INTERRUPT)
        ck_cpu_launch_error(L, CK_ERR_INTERRUPT,
                            "kernel %s: interrupted (SIGINT) in block (%u, %u, %u); the launch was abandoned, so its "
                            "outputs may be partly written",
                            L->fn->name, c->bid.x, c->bid.y, c->bid.z);
    else
        ck_cpu_launch_error(L, CK_ERR_DEVICE,
                            "kernel %s: stopped in block (%u, %u, %u) after running longer than the kernel time "
                            "limit of %g s (CUDAKIT_KERNEL_TIMEOUT, set_kernel_timeout); its outputs may be partly "
                            "written",
                            L->fn->name, c->bid.x, c->bid.y, c->bid.z, (double)L->limit_ns / 1e9);
}

static __attribute__((noinline)) void ck_run_blocks(ck_worker *W, ck_launch *L, int64_t b, int64_t e)
{
    ck__ctx_t *c = W->ctx;
    const unsigned gx = L->grid[0], gy = L->grid[1];
    for (int64_t i = b; i < e; i++) {
        if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return;
        c->bid.x = (unsigned)(i % gx);
        c->bid.y = (unsigned)((i / gx) % gy);
        c->bid.z = (unsigned)(i / ((int64_t)gx * gy));
        if (atomic_load_explicit(&ck_cpu_stop_flag, memory_order_relaxed)) {
            int why = ck_cpu_watch_stop_reason(L);
            if (why) {
                ck_cpu_launch_stopped(L, c, why);
                return;
            }
        }
        if (L->mode == CK_MODE_BLOCK) {
            L->fn->block(L->args);
        } else if (L->mode == CK_MODE_THREADS) {
            ck__u3 tid = {0, 0, 0};
            for (int t = 0; t < L->nthreads; t++, tid = ck_cpu_tid_next(L, tid)) {
                c->tid = tid;
                L->fn->thread(L->args);
            }
        } else if (ck_cpu_run_block_fibers(W, L) != 0) {
            return;
        }
    }
}

static void ck_launch_chunk(void *arg, int64_t b, int64_t e, int worker)
{
    (void)worker;
    ck_launch *L = arg;
    ck_worker *W = ck_cpu_worker_get();
    size_t need = L->dyn > 256 ? L->dyn : 256;
    if (W && W->smem_cap < need) {
        void *p = NULL;
        if (posix_memalign(&p, 256, need) == 0) {
            free(W->smem);
            W->smem = p;
            W->smem_cap = need;
        }
    }
    if (!W || W->smem_cap < need) {
        ck_cpu_launch_error(L, CK_ERR_MEMORY, "kernel %s: out of memory for the worker's state", L->fn->name);
        return;
    }
    ck__ctx_t *c = L->fn->mod->get_ctx();
    c->bdim = (ck__u3){L->block[0], L->block[1], L->block[2]};
    c->gdim = (ck__u3){L->grid[0], L->grid[1], L->grid[2]};
    c->dyn_smem = W->smem;
    c->sched = L->mode == CK_MODE_FIBERS ? &W->B : NULL;
    if (L->mode == CK_MODE_FIBERS) ck_cpu_worker_fit_stacks(W, L->stack);
    W->ctx = c;
    W->L = L;
    W->fault_sig = 0;
    if (sigsetjmp(W->jb, 0)) {
        /* From a trap, a failed assert, a fault or a stop at a loop back-edge. */
#ifdef CK_ASAN
        if (W->on_fiber) __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
        W->on_fiber = 0;
        W->in_kernel = 0;
        ck_cpu_worker_drop_fibers(W);
        if (W->fault_sig) ck_cpu_fault_report(L, W);
        W->L = NULL;
        return;
    }
    W->in_kernel = 1;
    ck_run_blocks(W, L, b, e);
    W->in_kernel = 0;
    W->L = NULL;
}

ck_status ck_cpu_launch(ck_cpu_function *f, const unsigned grid[3], const unsigned block[3], size_t dyn_shared,
                        void **args, const ck_cpu_arg_info *info)
{
    if (!f || !grid || !block) return ck_error_set(CK_ERR_VALUE, "ck_cpu_launch: no kernel or configuration");
    if (!grid[0] || !grid[1] || !grid[2])
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the grid (%u, %u, %u) has no blocks", f->name, grid[0], grid[1],
                            grid[2]);
    if (!block[0] || !block[1] || !block[2])
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the block (%u, %u, %u) has no threads", f->name, block[0],
                            block[1], block[2]);
    uint64_t nt = (uint64_t)block[0] * block[1] * block[2];
    if (nt > CK_CPU_MAX_THREADS_PER_BLOCK || block[0] > 1024 || block[1] > 1024 || block[2] > 64)
        return ck_error_set(CK_ERR_VALUE,
                            "kernel %s: a block of (%u, %u, %u) = %llu threads is more than allowed (at most %d "
                            "threads, (1024, 1024, 64) in each dimension)",
                            f->name, block[0], block[1], block[2], (unsigned long long)nt, CK_CPU_MAX_THREADS_PER_BLOCK);
    if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the grid (%u, %u, %u) is larger than allowed (2^31-1, 65535, 65535)",
                            f->name, grid[0], grid[1], grid[2]);
    if (dyn_shared > CK_CPU_MAX_DYN_SHARED)
        return ck_error_set(CK_ERR_VALUE, "kernel %s: %zu bytes of dynamic shared memory is more than the %u allowed",
                            f->name, dyn_shared, CK_CPU_MAX_DYN_SHARED);
    if (f->nparams > 0 && !args)
        return ck_error_set(CK_ERR_VALUE, "kernel %s takes %d arguments but none were given", f->name, f->nparams);

    ck_launch L;
    memset(&L, 0, sizeof L);
    L.fn = f;
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.nthreads = (int)nt;
    L.dyn = dyn_shared;
    L.args = args;
    atomic_init(&L.failed, 0);
    L.bounds = info && ck_cpu_bounds_mode();
    L.mode = f->mod->fibers ? CK_MODE_FIBERS : L.bounds ? CK_MODE_THREADS : CK_MODE_BLOCK;
    if (L.mode == CK_MODE_FIBERS) L.stack = ck_cpu_module_fiber_stack(f->mod);
    int64_t nblocks = (int64_t)grid[0] * grid[1] * grid[2];
    /* Small launches stay on the calling thread: waking the pool costs more. */
    int64_t grain = (1024 + L.nthreads - 1) / L.nthreads;

    ck_cpu_faults_install();
    ck_cpu_watch_begin(&L);
    ck_status s = CK_OK;
    if (!L.bounds) {
        ck_parallel_for(nblocks, grain, ck_launch_chunk, &L);
    } else {
        int np = f->nparams;
        void **newargs = calloc((size_t)(np ? np : 1), sizeof *newargs);
        void **newvals = calloc((size_t)(np ? np : 1), sizeof *newvals);
        L.info = info;
        s = newargs && newvals ? ck_cpu_guards_make(&L, np, newargs, newvals)
                               : ck_error_set(CK_ERR_MEMORY, "out of memory");
        if (s == CK_OK) {
            void **orig = L.args;
            L.args = newargs;
            ck_parallel_for(nblocks, grain, ck_launch_chunk, &L);
            L.args = orig;
            if (!atomic_load(&L.failed)) s = ck_cpu_guards_finish(&L);
        }
        /* The fault report reads the argument values the kernel saw. */
        ck_cpu_guards_free(&L);
        free(newargs);
        free(newvals);
    }
    if (f->mod->uses_printf) fflush(stdout);
    if (s == CK_OK && atomic_load(&L.failed)) s = ck_error_set(L.status, "%s", L.msg);
    ck_cpu_watch_end(&L, s);
    return s;
}
