/*
 * cuda_module.h - user CUDA C on the GPU: a module compiled from the user's
 * source (NVRTC through the kernel cache, name expressions for templates),
 * its functions and globals, their attributes, and a checked launch.
 *
 *     ck_cuda_module *m;
 *     CUfunction f;
 *     ck_cuda_module_load(0, src, "my.cu", NULL, 0, NULL, 0, &m);
 *     ck_cuda_module_get_function(m, "add_one", &f);
 *     ck_cuda_func_info fi;
 *     ck_cuda_func_get_info(0, f, &fi);
 *     ck_cuda_launch_checked(0, f, "add_one", &fi, grid, block, 0, stream, args);
 */
#ifndef CK_CUDA_MODULE_H
#define CK_CUDA_MODULE_H

#include "cuda_internal.h"

typedef struct ck_cuda_module {
    int dev;
    CUmodule mod;
    int nexprs;
    char **exprs;    /* the name expressions as given */
    char **lowered;  /* their lowered names, same order */
} ck_cuda_module;

/* Compile (or take from the disk cache) and load source on device d. */
ck_status ck_cuda_module_load(int d, const char *source, const char *name_hint, const char *const *options,
                              int noptions, const char *const *name_exprs, int nexprs, ck_cuda_module **out);
void ck_cuda_module_free(ck_cuda_module *m);
/* The symbol to look up for name: its lowered name when it is one of the
 * module's name expressions, name itself otherwise. */
const char *ck_cuda_module_symbol(const ck_cuda_module *m, const char *name);
/* CK_ERR_VALUE naming the kernel when the module has none of that name. */
ck_status ck_cuda_module_get_function(ck_cuda_module *m, const char *name, CUfunction *f);
ck_status ck_cuda_module_get_global(ck_cuda_module *m, const char *name, void **ptr, size_t *nbytes);

/* What a launch is checked against, read once per function and device. */
typedef struct ck_cuda_func_info {
    int max_threads_per_block;
    int num_regs;
    int shared_size_bytes;              /* static __shared__ */
    int const_size_bytes;
    int local_size_bytes;
    int max_dynamic_shared_size_bytes;  /* settable */
    int ptx_version, binary_version;
    int max_block[3], max_grid[3];      /* the device's limits */
    int max_shared_optin;               /* the most a block can have with opt-in */
} ck_cuda_func_info;

ck_status ck_cuda_func_get_info(int d, CUfunction f, ck_cuda_func_info *out);
/* Set max_dynamic_shared_size_bytes (CK_ERR_VALUE past the device's opt-in limit). */
ck_status ck_cuda_func_set_max_dynamic_shared(int d, CUfunction f, ck_cuda_func_info *fi, int bytes);
/* cuOccupancyMaxPotentialBlockSize: the block size that gives the best
 * occupancy with dyn_shared bytes per block, and the grid that fills the GPU. */
ck_status ck_cuda_func_suggest_block(int d, CUfunction f, size_t dyn_shared, int block_limit, int *min_grid,
                                     int *block);
/* Check grid/block/shared memory against fi (CK_ERR_VALUE before the driver
 * is called), then cuLaunchKernel on stream.  A failing launch names the
 * kernel; a sticky error also says the context is unusable. */
ck_status ck_cuda_launch_checked(int d, CUfunction f, const char *kname, const ck_cuda_func_info *fi,
                                 const unsigned grid[3], const unsigned block[3], size_t shmem, CUstream stream,
                                 void **args);

#endif
