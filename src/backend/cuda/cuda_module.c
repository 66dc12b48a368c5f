/* User CUDA C modules on the GPU: the user's source compiled by NVRTC
 * through the kernel cache (name expressions for templates), its functions
 * and globals, their attributes, and a checked launch (the module slots of
 * backend.h). */
#include "cuda_internal.h"
#include "../../runtime/kcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cuda_module {
    ck_module base;
    int dev;
    CUmodule mod;
    int nexprs;
    char **exprs;    /* the name expressions as given */
    char **lowered;  /* their lowered names, same order */
} cuda_module;

/* What a launch is checked against, read once per function. */
typedef struct cuda_function {
    ck_function base;
    CUfunction f;
    ck_function_attrs at;
    int max_block[3], max_grid[3];      /* the device's limits */
    int max_shared_optin;               /* the most a block can have with opt-in */
    int nsm, cooperative;               /* multiprocessors; whether cooperative launches work */
} cuda_function;

static void module_release(cuda_module *m)
{
    if (!m) return;
    if (m->mod && ck_cuda_use(m->dev) == CK_OK) ck_cu.cuModuleUnload(m->mod);
    for (int i = 0; i < m->nexprs; i++) {
        free(m->exprs ? m->exprs[i] : NULL);
        free(m->lowered ? m->lowered[i] : NULL);
    }
    free(m->exprs);
    free(m->lowered);
    free(m);
}

void ck_cuda_module_free(ck_module *m) { module_release((cuda_module *)m); }

ck_status ck_cuda_module_load(ck_device dev, const char *source, const char *name_hint, const char *const *options,
                              int noptions, const char *const *name_exprs, int nexprs, ck_module **out)
{
    *out = NULL;
    int d = dev.index;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    ck_cuda_device *cd = ck_cuda_dev(d);
    ck_kernel_image img;
    s = ck_kernel_compile_ex(source, name_hint, options, noptions, name_exprs, nexprs, cd->cc_major * 10 + cd->cc_minor,
                             &img);
    if (s != CK_OK) return s;
    cuda_module *m = calloc(1, sizeof *m);
    if (!m) {
        ck_kernel_image_free(&img);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for a module");
    }
    m->dev = d;
    if (nexprs > 0) {
        m->exprs = calloc((size_t)nexprs, sizeof *m->exprs);
        if (!m->exprs) {
            ck_kernel_image_free(&img);
            free(m);
            return ck_error_set(CK_ERR_MEMORY, "out of memory for a module");
        }
        m->nexprs = nexprs;
        for (int i = 0; i < nexprs; i++) m->exprs[i] = strdup(name_exprs[i]);
        /* the image's lowered names move into the module */
        m->lowered = img.lowered;
        img.lowered = NULL;
        img.nlowered = 0;
        for (int i = 0; i < nexprs; i++)
            if (!m->exprs[i]) {
                ck_kernel_image_free(&img);
                module_release(m);
                return ck_error_set(CK_ERR_MEMORY, "out of memory for a module");
            }
    }
    CUresult r = ck_cu.cuModuleLoadData(&m->mod, img.data);
    ck_kernel_image_free(&img);
    if (r != CUDA_SUCCESS) {
        m->mod = NULL;
        module_release(m);
        return ck_cu_fail(r, "cuModuleLoadData", __func__, __FILE__, __LINE__);
    }
    *out = &m->base;
    return CK_OK;
}

/* The symbol to look up for name: its lowered name when it is one of the
 * module's name expressions, name itself otherwise. */
static const char *module_symbol(const cuda_module *m, const char *name)
{
    for (int i = 0; i < m->nexprs; i++)
        if (!strcmp(m->exprs[i], name)) return m->lowered[i];
    return name;
}

static ck_status read_attrs(int d, cuda_function *cf)
{
    CUfunction f = cf->f;
    ck_function_attrs *o = &cf->at;
    CUdevice dev = ck_cuda_dev(d)->dev;
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->num_regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->shared_size_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->const_size_bytes, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->local_size_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->max_dynamic_shared_size_bytes,
                                         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, f));
    CK_CHECK_CU(ck_cu.cuFuncGetAttribute(&o->binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f));
    static const int blk[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                               CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
    static const int grd[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                               CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    for (int k = 0; k < 3; k++) {
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cf->max_block[k], blk[k], dev));
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cf->max_grid[k], grd[k], dev));
    }
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cf->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                           dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cf->nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cf->cooperative, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
    return CK_OK;
}

ck_status ck_cuda_function_new(ck_module *mb, const char *name, ck_function **out)
{
    cuda_module *m = (cuda_module *)mb;
    ck_status s = ck_cuda_use(m->dev);
    if (s != CK_OK) return s;
    CUfunction f;
    CUresult r = ck_cu.cuModuleGetFunction(&f, m->mod, module_symbol(m, name));
    if (r == CUDA_ERROR_NOT_FOUND)
        return ck_error_set(CK_ERR_VALUE, "the module has no kernel '%s' (a kernel must be extern \"C\" __global__, "
                            "or a template instance listed in name_expressions)", name);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuModuleGetFunction", __func__, __FILE__, __LINE__);
    cuda_function *cf = calloc(1, sizeof *cf);
    if (!cf) return ck_error_set(CK_ERR_MEMORY, "out of memory for a kernel");
    cf->f = f;
    ck_cu_note_function(f, name);   /* a fault's message and the profiler name it as the user does */
    s = read_attrs(m->dev, cf);
    if (s != CK_OK) { free(cf); return s; }
    *out = &cf->base;
    return CK_OK;
}

void ck_cuda_function_free(ck_function *f) { free(f); }

ck_status ck_cuda_module_get_global(ck_module *mb, const char *name, void **ptr, size_t *nbytes)
{
    cuda_module *m = (cuda_module *)mb;
    ck_status s = ck_cuda_use(m->dev);
    if (s != CK_OK) return s;
    CUdeviceptr p = 0;
    CUresult r = ck_cu.cuModuleGetGlobal_v2(&p, nbytes, m->mod, module_symbol(m, name));
    if (r == CUDA_ERROR_NOT_FOUND)
        return ck_error_set(CK_ERR_VALUE, "the module has no global '%s' (a __device__ or __constant__ variable, "
                            "extern \"C\" or listed in name_expressions)", name);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuModuleGetGlobal_v2", __func__, __FILE__, __LINE__);
    *ptr = (void *)(uintptr_t)p;
    return CK_OK;
}

ck_status ck_cuda_function_attributes(ck_function *f, ck_function_attrs *out)
{
    *out = ((cuda_function *)f)->at;
    return CK_OK;
}

ck_status ck_cuda_function_set_max_dynamic_shared(ck_function *f, int bytes)
{
    cuda_function *cf = (cuda_function *)f;
    if ((long long)bytes + cf->at.shared_size_bytes > cf->max_shared_optin)
        return ck_error_set(CK_ERR_VALUE, "max_dynamic_shared_size_bytes=%d: with the kernel's %d bytes of static "
                            "shared memory that exceeds the device's %d bytes per block", bytes,
                            cf->at.shared_size_bytes, cf->max_shared_optin);
    ck_status s = ck_cuda_use(f->module->dev.index);
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuFuncSetAttribute(cf->f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
    cf->at.max_dynamic_shared_size_bytes = bytes;
    return CK_OK;
}

ck_status ck_cuda_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid, int *block)
{
    ck_status s = ck_cuda_use(f->module->dev.index);
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuOccupancyMaxPotentialBlockSize(min_grid, block, ((cuda_function *)f)->f, NULL, dyn_shared,
                                                       block_limit));
    return CK_OK;
}

/* The occupancy calculator's blocks a multiprocessor, times the multiprocessors. */
static ck_status cooperative_limit(const cuda_function *cf, unsigned long long threads, size_t shmem, int *per_sm,
                                   int *out)
{
    *per_sm = *out = 0;
    if (threads > (unsigned long long)cf->at.max_threads_per_block) return CK_OK;
    CK_CHECK_CU(ck_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, cf->f, (int)threads, shmem));
    *out = *per_sm * cf->nsm;
    return CK_OK;
}

ck_status ck_cuda_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out)
{
    const cuda_function *cf = (const cuda_function *)f;
    ck_status s = ck_cuda_use(f->module->dev.index);
    if (s != CK_OK) return s;
    int per_sm;
    return cooperative_limit(cf, (unsigned long long)block[0] * block[1] * block[2], shmem, &per_sm, out);
}

int ck_cuda_function_params(ck_function *f, size_t *sizes, int max)
{
    if (ck_cuda_use(f->module->dev.index) != CK_OK) {
        ck_error_clear();
        return -1;
    }
    CUfunction cf = ((cuda_function *)f)->f;
    for (int i = 0; i <= CK_MAX_KERNEL_PARAMS; i++) {
        size_t off = 0, size = 0;
        CUresult r = ck_cu.cuFuncGetParamInfo(cf, (size_t)i, &off, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) return i; /* past the last parameter */
        if (r != CUDA_SUCCESS) {
            ck_error_clear(); /* a driver before 12.4: the cubin's sizes cannot be read */
            return -1;
        }
        if (sizes && i < max) sizes[i] = size;
    }
    return -1;
}

ck_status ck_cuda_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                  ck_stream stream, unsigned flags, int nparams, void **args,
                                  const ck_launch_arg *info)
{
    (void)nparams; (void)info;   /* the Python layer checks the parameters; bounds mode is the CPU's */
    static const char xyz[] = "xyz";
    const cuda_function *cf = (const cuda_function *)f;
    const char *kname = f->name;
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    for (int k = 0; k < 3; k++) {
        if (block[k] > (unsigned)cf->max_block[k])
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': block.%c = %u exceeds the device's limit of %d", kname,
                                xyz[k], block[k], cf->max_block[k]);
        if (grid[k] > (unsigned)cf->max_grid[k])
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': grid.%c = %u exceeds the device's limit of %d", kname,
                                xyz[k], grid[k], cf->max_grid[k]);
    }
    if (threads > (unsigned long long)cf->at.max_threads_per_block)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %llu threads per block (block (%u, %u, %u)) exceed its limit "
                            "of %d (max_threads_per_block)", kname, threads, block[0], block[1], block[2],
                            cf->at.max_threads_per_block);
    if (shmem > (size_t)cf->at.max_dynamic_shared_size_bytes)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %zu bytes of dynamic shared memory exceed its limit of %d "
                            "(raise max_dynamic_shared_size_bytes, up to %d minus the %d static bytes)", kname, shmem,
                            cf->at.max_dynamic_shared_size_bytes, cf->max_shared_optin, cf->at.shared_size_bytes);
    ck_status s = ck_cuda_use(f->module->dev.index);
    if (s != CK_OK) return s;
    int coop = (flags & CK_LAUNCH_COOPERATIVE) != 0;
    if (coop) {
        /* said before the driver's CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, with the numbers */
        if (!cf->cooperative)
            return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "kernel '%s' synchronises its grid, which needs a cooperative "
                                "launch: device %d does not support them", kname, f->module->dev.index);
        unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
        int per_sm, limit;
        s = cooperative_limit(cf, threads, shmem, &per_sm, &limit);
        if (s != CK_OK) return s;
        if (blocks > (unsigned long long)limit)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s' synchronises its grid (a cooperative launch): its grid of "
                                "%llu blocks (%u, %u, %u) exceeds the %d blocks of %llu threads that can be resident "
                                "at once on device %d (%d a multiprocessor x %d multiprocessors; "
                                "max_cooperative_grid_blocks)", kname, blocks, grid[0], grid[1], grid[2], limit,
                                threads, f->module->dev.index, per_sm, cf->nsm);
    }
    const char *call = coop ? "cuLaunchCooperativeKernel" : "cuLaunchKernel";
    ck_cuda_fuse_flush_pending();
    CUresult r = coop ? ck_cu.cuLaunchCooperativeKernel(cf->f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                                       (unsigned)shmem, (CUstream)stream, args)
                      : ck_cu.cuLaunchKernel(cf->f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                             (unsigned)shmem, (CUstream)stream, args, NULL);
    if (r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s' synchronises its grid (a cooperative launch): its grid of %u x "
                            "%u x %u blocks is more than can be resident at once (max_cooperative_grid_blocks)",
                            kname, grid[0], grid[1], grid[2]);
    if (r != CUDA_SUCCESS) {
        if (ck_cu_error_is_sticky(r)) return ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
        ck_status st = ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
        char msg[1024]; /* the message lives in the buffer ck_error_set writes */
        snprintf(msg, sizeof msg, "%s", ck_error_message());
        return ck_error_set(st, "launching kernel '%s': %s", kname, msg);
    }
    return CK_OK;
}
