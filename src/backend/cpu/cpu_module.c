/* User CUDA C modules on the CPU: the module slots of backend.h over the
 * CPU kernel runtime (src/runtime/cpu_kernels.h), with the launch checks a
 * GPU would make, against the CPU target's limits. */
#include "cpu_internal.h"
#include "../../runtime/cpu_kernels.h"

#include <stdlib.h>

typedef struct cpu_module {
    ck_module base;
    ck_cpu_module *m;
} cpu_module;

typedef struct cpu_function {
    ck_function base;
    ck_cpu_function *f;
    int max_dyn_shared;        /* settable, as a GPU's is */
} cpu_function;

ck_status ck_cpu_module_load_slot(ck_device dev, const char *source, const char *name_hint,
                                  const char *const *options, int noptions, const char *const *name_exprs,
                                  int nexprs, ck_module **out)
{
    (void)dev; (void)name_hint;
    cpu_module *cm = calloc(1, sizeof *cm);
    if (!cm) return ck_error_set(CK_ERR_MEMORY, "out of memory for a module");
    ck_status s = ck_cpu_module_load(source, options, noptions, name_exprs, nexprs, &cm->m);
    if (s != CK_OK) { free(cm); return s; }
    *out = &cm->base;
    return CK_OK;
}

void ck_cpu_module_free_slot(ck_module *m)
{
    ck_cpu_module_free(((cpu_module *)m)->m);
    free(m);
}

ck_status ck_cpu_module_get_global_slot(ck_module *m, const char *name, void **ptr, size_t *nbytes)
{
    return ck_cpu_module_get_global(((cpu_module *)m)->m, name, ptr, nbytes);
}

ck_status ck_cpu_function_new(ck_module *m, const char *name, ck_function **out)
{
    ck_cpu_function *f = NULL;
    ck_status s = ck_cpu_module_get_function(((cpu_module *)m)->m, name, &f);
    if (s != CK_OK) return s;
    cpu_function *cf = calloc(1, sizeof *cf);
    if (!cf) return ck_error_set(CK_ERR_MEMORY, "out of memory for a kernel");
    cf->f = f;
    cf->max_dyn_shared = CK_CPU_DEFAULT_DYN_SHARED;
    *out = &cf->base;
    return CK_OK;
}

void ck_cpu_function_free(ck_function *f) { free(f); }

ck_status ck_cpu_function_attributes(ck_function *f, ck_function_attrs *out)
{
    const cpu_function *cf = (const cpu_function *)f;
    out->max_threads_per_block = CK_CPU_MAX_THREADS_PER_BLOCK;
    out->shared_size_bytes = (int)ck_cpu_function_static_shared(cf->f);
    out->max_dynamic_shared_size_bytes = cf->max_dyn_shared;
    return CK_OK;
}

ck_status ck_cpu_function_set_max_dynamic_shared(ck_function *f, int bytes)
{
    ((cpu_function *)f)->max_dyn_shared = bytes;
    return CK_OK;
}

ck_status ck_cpu_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid, int *block)
{
    (void)f; (void)dyn_shared;
    /* a block runs as fibers on one core: moderate blocks keep the switching
     * cheap; the grid is one block per core, a few times */
    *block = block_limit > 0 && block_limit < 256 ? block_limit : 256;
    *min_grid = ck_cpu_num_threads() * 4;
    return CK_OK;
}

int ck_cpu_function_params_slot(ck_function *f, size_t *sizes, int max)
{
    return ck_cpu_function_params(((cpu_function *)f)->f, sizes, max);
}

/* A cooperative launch on the CPU: the kernel keeps every thread's
 * variables and every block's shared memory alive between grid barriers
 * (Python kernels run the whole grid in regions, see pykernel/emit.c), so
 * the grid is bounded, about as many threads as an H200 holds at once. */
#define CK_CPU_COOP_MAX_BLOCKS 1024
#define CK_CPU_COOP_MAX_THREADS (1 << 18)
#define CK_CPU_COOP_MAX_SHARED ((size_t)256 << 20)   /* all blocks' shared memory together */

static int cooperative_limit(const cpu_function *cf, unsigned long long threads, size_t shmem)
{
    if (!threads || threads > CK_CPU_MAX_THREADS_PER_BLOCK) return 0;
    unsigned long long n = CK_CPU_COOP_MAX_THREADS / threads;
    if (n > CK_CPU_COOP_MAX_BLOCKS) n = CK_CPU_COOP_MAX_BLOCKS;
    size_t per_block = ck_cpu_function_static_shared(cf->f) + shmem;
    if (per_block && n > CK_CPU_COOP_MAX_SHARED / per_block) n = CK_CPU_COOP_MAX_SHARED / per_block;
    return (int)n;
}

ck_status ck_cpu_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out)
{
    *out = cooperative_limit((const cpu_function *)f, (unsigned long long)block[0] * block[1] * block[2], shmem);
    return CK_OK;
}

ck_status ck_cpu_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                 ck_stream stream, unsigned flags, int nparams, void **params,
                                 const ck_launch_arg *info)
{
    (void)stream;   /* host-ordered: the launch is done when it returns */
    const cpu_function *cf = (const cpu_function *)f;
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (threads > CK_CPU_MAX_THREADS_PER_BLOCK)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %llu threads per block (block (%u, %u, %u)) exceed its "
                            "limit of %d (max_threads_per_block)", f->name, threads, block[0], block[1], block[2],
                            CK_CPU_MAX_THREADS_PER_BLOCK);
    if (flags & CK_LAUNCH_COOPERATIVE) {
        unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
        int limit = cooperative_limit(cf, threads, shmem);
        if (blocks > (unsigned long long)limit)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s' synchronises its grid (a cooperative launch): its grid of "
                                "%llu blocks (%u, %u, %u) exceeds the %d blocks of %llu threads that can be resident "
                                "at once on the CPU (at most %d blocks, %d threads, %zu MiB of shared memory in all; "
                                "max_cooperative_grid_blocks)", f->name, blocks, grid[0], grid[1], grid[2], limit,
                                threads, CK_CPU_COOP_MAX_BLOCKS, CK_CPU_COOP_MAX_THREADS,
                                CK_CPU_COOP_MAX_SHARED >> 20);
    }
    if (shmem > (size_t)cf->max_dyn_shared)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %zu bytes of dynamic shared memory exceed its limit of %d "
                            "(raise max_dynamic_shared_size_bytes)", f->name, shmem, cf->max_dyn_shared);
    int np = ck_cpu_function_params(cf->f, NULL, 0);
    if (np >= 0 && np != nparams)
        return ck_error_set(CK_ERR_TYPE, "kernel '%s' takes %d arguments, got %d", f->name, np, nparams);
    if (nparams > CK_MAX_KERNEL_PARAMS)
        return ck_error_set(CK_ERR_VALUE, "kernels with more than %d arguments are not supported",
                            CK_MAX_KERNEL_PARAMS);
    ck_cpu_arg_info ai[CK_MAX_KERNEL_PARAMS];
    const ck_cpu_arg_info *aip = NULL;
    if (info) {
        for (int i = 0; i < nparams; i++) {
            ai[i] = (ck_cpu_arg_info){0};
            ai[i].is_array = info[i].is_array;
            ai[i].base = info[i].base;
            ai[i].nbytes = info[i].nbytes;
            ai[i].lo = info[i].lo;
            ai[i].extent = info[i].extent;
            ai[i].itemsize = info[i].itemsize;
        }
        aip = ai;
    }
    return ck_cpu_launch(cf->f, grid, block, shmem, params, aip);
}
