/* User CUDA C modules on the GPU (see cuda_module.h). */
#include "cuda_module.h"
#include "../../runtime/kcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ck_cuda_module_free(ck_cuda_module *m)
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

ck_status ck_cuda_module_load(int d, const char *source, const char *name_hint, const char *const *options,
                              int noptions, const char *const *name_exprs, int nexprs, ck_cuda_module **out)
{
    *out = NULL;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    ck_cuda_device *cd = ck_cuda_dev(d);
    ck_kernel_image img;
    s = ck_kernel_compile_ex(source, name_hint, options, noptions, name_exprs, nexprs, cd->cc_major * 10 + cd->cc_minor,
                             &img);
    if (s != CK_OK) return s;
    ck_cuda_module *m = calloc(1, sizeof *m);
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
                ck_cuda_module_free(m);
                return ck_error_set(CK_ERR_MEMORY, "out of memory for a module");
            }
    }
    CUresult r = ck_cu.cuModuleLoadData(&m->mod, img.data);
    ck_kernel_image_free(&img);
    if (r != CUDA_SUCCESS) {
        m->mod = NULL;
        ck_cuda_module_free(m);
        return ck_cu_fail(r, "cuModuleLoadData", __func__, __FILE__, __LINE__);
    }
    *out = m;
    return CK_OK;
}

const char *ck_cuda_module_symbol(const ck_cuda_module *m, const char *name)
{
    for (int i = 0; i < m->nexprs; i++)
        if (!strcmp(m->exprs[i], name)) return m->lowered[i];
    return name;
}

ck_status ck_cuda_module_get_function(ck_cuda_module *m, const char *name, CUfunction *f)
{
    ck_status s = ck_cuda_use(m->dev);
    if (s != CK_OK) return s;
    CUresult r = ck_cu.cuModuleGetFunction(f, m->mod, ck_cuda_module_symbol(m, name));
    if (r == CUDA_ERROR_NOT_FOUND)
        return ck_error_set(CK_ERR_VALUE, "the module has no kernel '%s' (a kernel must be extern \"C\" __global__, "
                            "or a template instance listed in name_expressions)", name);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuModuleGetFunction", __func__, __FILE__, __LINE__);
    return CK_OK;
}

ck_status ck_cuda_module_get_global(ck_cuda_module *m, const char *name, void **ptr, size_t *nbytes)
{
    ck_status s = ck_cuda_use(m->dev);
    if (s != CK_OK) return s;
    CUdeviceptr p = 0;
    CUresult r = ck_cu.cuModuleGetGlobal_v2(&p, nbytes, m->mod, ck_cuda_module_symbol(m, name));
    if (r == CUDA_ERROR_NOT_FOUND)
        return ck_error_set(CK_ERR_VALUE, "the module has no global '%s' (a __device__ or __constant__ variable, "
                            "extern \"C\" or listed in name_expressions)", name);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuModuleGetGlobal_v2", __func__, __FILE__, __LINE__);
    *ptr = (void *)(uintptr_t)p;
    return CK_OK;
}

ck_status ck_cuda_func_get_info(int d, CUfunction f, ck_cuda_func_info *o)
{
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    memset(o, 0, sizeof *o);
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
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&o->max_block[k], blk[k], dev));
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&o->max_grid[k], grd[k], dev));
    }
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&o->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                           dev));
    return CK_OK;
}

ck_status ck_cuda_func_set_max_dynamic_shared(int d, CUfunction f, ck_cuda_func_info *fi, int bytes)
{
    if (bytes < 0 || (long long)bytes + fi->shared_size_bytes > fi->max_shared_optin)
        return ck_error_set(CK_ERR_VALUE, "max_dynamic_shared_size_bytes=%d: with the kernel's %d bytes of static "
                            "shared memory that exceeds the device's %d bytes per block", bytes,
                            fi->shared_size_bytes, fi->max_shared_optin);
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
    fi->max_dynamic_shared_size_bytes = bytes;
    return CK_OK;
}

ck_status ck_cuda_func_suggest_block(int d, CUfunction f, size_t dyn_shared, int block_limit, int *min_grid, int *block)
{
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuOccupancyMaxPotentialBlockSize(min_grid, block, f, NULL, dyn_shared, block_limit));
    return CK_OK;
}

ck_status ck_cuda_launch_checked(int d, CUfunction f, const char *kname, const ck_cuda_func_info *fi,
                                 const unsigned grid[3], const unsigned block[3], size_t shmem, CUstream stream,
                                 void **args)
{
    static const char xyz[] = "xyz";
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    for (int k = 0; k < 3; k++) {
        if (grid[k] == 0)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': grid (%u, %u, %u) has a zero dimension", kname, grid[0],
                                grid[1], grid[2]);
        if (block[k] == 0)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': block (%u, %u, %u) has a zero dimension", kname,
                                block[0], block[1], block[2]);
        if (block[k] > (unsigned)fi->max_block[k])
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': block.%c = %u exceeds the device's limit of %d", kname,
                                xyz[k], block[k], fi->max_block[k]);
        if (grid[k] > (unsigned)fi->max_grid[k])
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': grid.%c = %u exceeds the device's limit of %d", kname,
                                xyz[k], grid[k], fi->max_grid[k]);
    }
    if (threads > (unsigned long long)fi->max_threads_per_block)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %llu threads per block (block (%u, %u, %u)) exceed its limit "
                            "of %d (max_threads_per_block)", kname, threads, block[0], block[1], block[2],
                            fi->max_threads_per_block);
    if (shmem > (size_t)fi->max_dynamic_shared_size_bytes)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': %zu bytes of dynamic shared memory exceed its limit of %d "
                            "(raise max_dynamic_shared_size_bytes, up to %d minus the %d static bytes)", kname, shmem,
                            fi->max_dynamic_shared_size_bytes, fi->max_shared_optin, fi->shared_size_bytes);
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    ck_cu_note_kernel(kname);
    CUresult r = ck_cu.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)shmem,
                                      stream, args, NULL);
    if (r != CUDA_SUCCESS) {
        if (ck_cu_error_is_sticky(r)) return ck_cu_fail(r, "cuLaunchKernel", __func__, __FILE__, __LINE__);
        ck_status st = ck_cu_fail(r, "cuLaunchKernel", __func__, __FILE__, __LINE__);
        char msg[1024]; /* the message lives in the buffer ck_error_set writes */
        snprintf(msg, sizeof msg, "%s", ck_error_message());
        return ck_error_set(st, "launching kernel '%s': %s", kname, msg);
    }
    return CK_OK;
}
