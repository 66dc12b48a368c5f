/* Devices, contexts, current device and stream, kernel table and launch. */
#include "cuda_internal.h"
#include "../../runtime/kcache.h"

#include <stdlib.h>
#include <string.h>

ck_cuda_device ck_cuda_devices[CK_CUDA_MAX_DEVICES];
int ck_cuda_ndevices = -1;
static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local int cur_dev_;
static _Thread_local CUcontext cur_ctx_;
static _Thread_local CUstream cur_stream_[CK_CUDA_MAX_DEVICES];

int ck_cuda_current_device(void) { return cur_dev_; }
void ck_cuda_set_current_device(int d) { cur_dev_ = d; }
CUstream ck_cuda_current_stream(int d) { return cur_stream_[d]; }
void ck_cuda_set_current_stream(int d, CUstream s) { cur_stream_[d] = s; }

ck_cuda_device *ck_cuda_dev(int d) { return &ck_cuda_devices[d]; }

static ck_status init_device(int d)
{
    ck_cuda_device *cd = &ck_cuda_devices[d];
    CK_CHECK_CU(ck_cu.cuDeviceGet(&cd->dev, d));
    CK_CHECK_CU(ck_cu.cuDevicePrimaryCtxRetain(&cd->ctx, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cd->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cd->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cd->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetAttribute(&cd->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceGetName(cd->name, (int)sizeof cd->name, cd->dev));
    CK_CHECK_CU(ck_cu.cuDeviceTotalMem_v2(&cd->total_mem, cd->dev));
    pthread_mutex_init(&cd->kmu, NULL);
    cd->ready = 1;
    return CK_OK;
}

ck_status ck_cuda_use(int d)
{
    if (d < 0 || d >= ck_cuda_ndevices)
        return ck_error_set(CK_ERR_VALUE, "invalid CUDA device %d (%d available)", d, ck_cuda_ndevices < 0 ? 0 : ck_cuda_ndevices);
    ck_cuda_device *cd = &ck_cuda_devices[d];
    if (!cd->ready) {
        pthread_mutex_lock(&dev_mu);
        ck_status s = cd->ready ? CK_OK : init_device(d);
        pthread_mutex_unlock(&dev_mu);
        if (s != CK_OK) return s;
    }
    if (cur_ctx_ != cd->ctx) {
        CK_CHECK_CU(ck_cu.cuCtxSetCurrent(cd->ctx));
        cur_ctx_ = cd->ctx;
    }
    return CK_OK;
}

/* ------------------------------------------------------------- kernels */

static size_t slot_of(uint64_t key, size_t cap) { return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1); }

static ck_status table_insert(ck_cuda_device *cd, uint64_t key, CUfunction fn)
{
    ck_ktable *t = cd->kernels;
    if (!t || (cd->kcount + 1) * 2 > t->cap) {
        size_t ncap = t ? t->cap * 2 : 256;
        ck_ktable *n = calloc(1, sizeof *n + ncap * sizeof(ck_kernel_slot));
        if (!n) return ck_error_set(CK_ERR_MEMORY, "out of memory growing the kernel table");
        n->cap = ncap;
        for (size_t i = 0; t && i < t->cap; i++) {
            if (!t->slots[i].key) continue;
            size_t j = slot_of(t->slots[i].key, ncap);
            while (n->slots[j].key) j = (j + 1) & (ncap - 1);
            n->slots[j] = t->slots[i];
        }
        __atomic_store_n(&cd->kernels, n, __ATOMIC_RELEASE);   /* the old table stays valid for readers */
        t = n;
    }
    size_t j = slot_of(key, t->cap);
    while (t->slots[j].key && t->slots[j].key != key) j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].key) cd->kcount++;
    t->slots[j].fn = fn;
    __atomic_store_n(&t->slots[j].key, key, __ATOMIC_RELEASE);
    return CK_OK;
}

static CUfunction table_find(ck_cuda_device *cd, uint64_t key)
{
    ck_ktable *t = __atomic_load_n(&cd->kernels, __ATOMIC_ACQUIRE);
    if (!t) return NULL;
    size_t j = slot_of(key, t->cap);
    for (;;) {
        uint64_t k = __atomic_load_n(&t->slots[j].key, __ATOMIC_ACQUIRE);
        if (k == key) return t->slots[j].fn;
        if (!k) return NULL;
        j = (j + 1) & (t->cap - 1);
    }
}

ck_status ck_cuda_get_kernel(int d, uint64_t key, char *(*make_source)(const void *spec), const void *spec,
                             const char *name, CUfunction *fn)
{
    ck_cuda_device *cd = &ck_cuda_devices[d];
    CUfunction f = table_find(cd, key);
    if (f) { *fn = f; return CK_OK; }
    pthread_mutex_lock(&cd->kmu);
    f = table_find(cd, key);
    ck_status s = CK_OK;
    if (!f) {
        char *src = make_source(spec);
        if (!src) { s = ck_error_status(); goto out; }
        ck_kernel_image img;
        s = ck_kernel_compile(src, name, NULL, 0, cd->cc_major * 10 + cd->cc_minor, &img);
        free(src);
        if (s != CK_OK) goto out;
        CUmodule mod;
        CUresult r = ck_cu.cuModuleLoadData(&mod, img.data);
        ck_kernel_image_free(&img);
        if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuModuleLoadData", __func__, __FILE__, __LINE__); goto out; }
        r = ck_cu.cuModuleGetFunction(&f, mod, name);
        if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuModuleGetFunction", __func__, __FILE__, __LINE__); goto out; }
        if (cd->nmodules == cd->cmodules) {
            size_t nc = cd->cmodules ? cd->cmodules * 2 : 64;
            CUmodule *m = realloc(cd->modules, nc * sizeof *m);
            if (m) { cd->modules = m; cd->cmodules = nc; }
        }
        if (cd->nmodules < cd->cmodules) cd->modules[cd->nmodules++] = mod;
        s = table_insert(cd, key, f);
    }
out:
    pthread_mutex_unlock(&cd->kmu);
    if (s == CK_OK) *fn = f;
    return s;
}

ck_status ck_cuda_get_kernels(int d, uint64_t key, char *(*make_source)(const void *spec), const void *spec,
                              const char *const *names, int n, CUfunction *fns)
{
    ck_cuda_device *cd = &ck_cuda_devices[d];
    int have = 1;
    for (int i = 0; i < n && have; i++) have = (fns[i] = table_find(cd, key + (uint64_t)i)) != NULL;
    if (have) return CK_OK;
    pthread_mutex_lock(&cd->kmu);
    ck_status s = CK_OK;
    char *src = make_source(spec);
    if (!src) { s = ck_error_status(); goto out; }
    ck_kernel_image img;
    s = ck_kernel_compile(src, names[0], NULL, 0, cd->cc_major * 10 + cd->cc_minor, &img);
    free(src);
    if (s != CK_OK) goto out;
    CUmodule mod;
    CUresult r = ck_cu.cuModuleLoadData(&mod, img.data);
    ck_kernel_image_free(&img);
    if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuModuleLoadData", __func__, __FILE__, __LINE__); goto out; }
    if (cd->nmodules == cd->cmodules) {
        size_t nc = cd->cmodules ? cd->cmodules * 2 : 64;
        CUmodule *m = realloc(cd->modules, nc * sizeof *m);
        if (m) { cd->modules = m; cd->cmodules = nc; }
    }
    if (cd->nmodules < cd->cmodules) cd->modules[cd->nmodules++] = mod;
    for (int i = 0; i < n && s == CK_OK; i++) {
        r = ck_cu.cuModuleGetFunction(&fns[i], mod, names[i]);
        if (r != CUDA_SUCCESS) s = ck_cu_fail(r, "cuModuleGetFunction", __func__, __FILE__, __LINE__);
        else s = table_insert(cd, key + (uint64_t)i, fns[i]);
    }
out:
    pthread_mutex_unlock(&cd->kmu);
    return s;
}

unsigned ck_cuda_grid_for(int d, int64_t n, unsigned block)
{
    int64_t blocks = (n + block - 1) / block;
    int64_t cap = (int64_t)ck_cuda_devices[d].sm_count * (ck_cuda_devices[d].max_threads_per_sm / (int)block) * 4;
    if (cap < 1) cap = 1024;
    if (blocks > cap) blocks = cap;
    return blocks < 1 ? 1 : (unsigned)blocks;
}

ck_status ck_cuda_launch(int d, CUfunction f, unsigned grid, unsigned block, unsigned shmem, void **args)
{
    CK_CHECK_CU(ck_cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, cur_stream_[d], args, NULL));
    return CK_OK;
}

ck_status ck_cuda_synchronize(ck_device dev)
{
    ck_status s = ck_cuda_use(dev.index);
    if (s != CK_OK) return s;
    CK_CHECK_CU(ck_cu.cuCtxSynchronize());
    return CK_OK;
}

/* ------------------------------------------------------------ backend */

const ck_backend_iface ck_backend_cuda = {
    .name = "cuda",
    .alloc = ck_cuda_alloc,
    .free = ck_cuda_free,
    .copy_to_host = ck_cuda_copy_to_host,
    .copy_from_host = ck_cuda_copy_from_host,
    .copy_peer = ck_cuda_copy_peer,
    .memory_stats = ck_cuda_memory_stats,
    .memory_empty_cache = ck_cuda_memory_empty_cache,
    .memory_set_limit = ck_cuda_memory_set_limit,
    .memory_reset_peak = ck_cuda_memory_reset_peak,
    .pinned_alloc = ck_cuda_pinned_alloc,

    .device_count = ck_cuda_device_count,
    .device_get_current = ck_cuda_current_device,
    .device_set_current = ck_cuda_set_current_device,
    .device_properties = ck_cuda_device_properties,
    .device_mem_info = ck_cuda_device_mem_info,
    .synchronize = ck_cuda_synchronize,
    .stream_create = ck_cuda_stream_create,
    .stream_destroy = ck_cuda_stream_destroy,
    .stream_synchronize = ck_cuda_stream_synchronize,
    .stream_query = ck_cuda_stream_query,
    .stream_wait_event = ck_cuda_stream_wait_event,
    .stream_priority_range = ck_cuda_stream_priority_range,
    .stream_current = ck_cuda_stream_current,
    .stream_set_current = ck_cuda_stream_set_current,
    .event_create = ck_cuda_event_create,
    .event_destroy = ck_cuda_event_destroy,
    .event_record = ck_cuda_event_record,
    .event_synchronize = ck_cuda_event_synchronize,
    .event_query = ck_cuda_event_query,
    .event_elapsed_ms = ck_cuda_event_elapsed_ms,

    .module_load = ck_cuda_module_load,
    .module_free = ck_cuda_module_free,
    .module_get_global = ck_cuda_module_get_global,
    .function_new = ck_cuda_function_new,
    .function_free = ck_cuda_function_free,
    .function_attributes = ck_cuda_function_attributes,
    .function_set_max_dynamic_shared = ck_cuda_function_set_max_dynamic_shared,
    .function_suggest_block = ck_cuda_function_suggest_block,
    .function_params = NULL,   /* a cubin does not say */
    .function_launch = ck_cuda_function_launch,

    .elementwise = ck_cuda_elementwise,
    .cast = ck_cuda_cast,
    .fill = ck_cuda_fill,
    .reduce = ck_cuda_reduce,
    .scan = ck_cuda_scan,
    .iota = ck_cuda_iota,
    .gather = ck_cuda_gather,
    .scatter = ck_cuda_scatter,
    .nonzero = ck_cuda_nonzero,
    .compress = ck_cuda_compress,
    .sort = ck_cuda_sort,
    .searchsorted = ck_cuda_searchsorted,
    .random = ck_cuda_random,
    .copy_pieces = ck_cuda_copy_pieces,

    .matmul = ck_cuda_matmul,
    .fft = ck_cuda_fft,
    .solver = ck_cuda_solver,
};

ck_status ck_cuda_init(void)
{
    if (ck_cuda_ndevices >= 0) return ck_cuda_ndevices > 0 ? CK_OK : ck_error_set(CK_ERR_DEVICE, "no CUDA device");
    ck_status s = ck_cu_load();
    if (s != CK_OK) { ck_cuda_ndevices = 0; return s; }
    int n = 0;
    if (ck_cu.cuDeviceGetCount(&n) != CUDA_SUCCESS) n = 0;
    if (n > CK_CUDA_MAX_DEVICES) n = CK_CUDA_MAX_DEVICES;
    ck_cuda_ndevices = n;
    if (n == 0) return ck_error_set(CK_ERR_DEVICE, "the CUDA driver found no GPU");
    ck_backend_register(CK_DEVICE_CUDA, &ck_backend_cuda);
    return CK_OK;
}

int ck_cuda_device_count(void)
{
    if (ck_cuda_ndevices < 0) {
        ck_cuda_init();
        ck_error_clear();
    }
    return ck_cuda_ndevices;
}
