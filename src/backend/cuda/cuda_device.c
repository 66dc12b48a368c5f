/* Devices, contexts, current device and stream, and launch. */
#include "cuda_internal.h"

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
CUstream ck_cuda_current_stream_peek(int d) { return cur_stream_[d]; }
void ck_cuda_set_current_stream(int d, CUstream s)
{
    ck_cuda_fuse_flush_pending();
    cur_stream_[d] = s;
}

ck_cuda_device *ck_cuda_dev(int d) { return &ck_cuda_devices[d]; }

int ck_cuda_context_device(void)
{
    for (int d = 0; cur_ctx_ && d < ck_cuda_ndevices; d++)
        if (ck_cuda_devices[d].ready && ck_cuda_devices[d].ctx == cur_ctx_) return d;
    return -1;
}

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
    const char *pdl = getenv("CUDAKIT_PDL");
    cd->pdl = cd->cc_major >= 9 && ck_cu_has_symbol("cuLaunchKernelEx") && !(pdl && !strcmp(pdl, "0"));
    const char *flat = getenv("CUDAKIT_EW_FLAT");
    cd->ew_flat = !(flat && !strcmp(flat, "0"));
    const char *fuse = getenv("CUDAKIT_GRAPH_FUSE");
    cd->graph_fuse = !(fuse && !strcmp(fuse, "0"));
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

/* ------------------------------------------------------------- launch */

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
    ck_cuda_fuse_flush_pending();
    CK_CHECK_CU(ck_cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, cur_stream_[d], args, NULL));
    return CK_OK;
}

ck_status ck_cuda_launch_pdl2(int d, CUfunction f, unsigned gx, unsigned gy, unsigned block, unsigned shmem,
                              void **args)
{
    ck_cuda_fuse_flush_pending();
    /* while profiling, ordinary launches: each kernel between its own
     * events, not started early under the one before */
    if (!ck_cuda_devices[d].pdl || ck_cu_launch_observed()) {
        CK_CHECK_CU(ck_cu.cuLaunchKernel(f, gx, gy, 1, block, 1, 1, shmem, cur_stream_[d], args, NULL));
        return CK_OK;
    }
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmatic_stream_serialization = 1;
    CUlaunchConfig cfg = {gx, gy, 1, block, 1, 1, shmem, cur_stream_[d], &at, 1};
    CK_CHECK_CU(ck_cu.cuLaunchKernelEx(&cfg, f, args, NULL));
    return CK_OK;
}

ck_status ck_cuda_launch_pdl(int d, CUfunction f, unsigned grid, unsigned block, unsigned shmem, void **args)
{
    return ck_cuda_launch_pdl2(d, f, grid, 1, block, shmem, args);
}

ck_status ck_cuda_synchronize(ck_device dev)
{
    ck_status s = ck_cuda_use(dev.index);
    if (s != CK_OK) return s;
    return ck_cuda_wait_device(dev.index, "cuCtxSynchronize");
}

/* ------------------------------------------------------------ backend */

static int cuda_peer_access(int a, int b) { return ck_cuda_peer_access(a, b) > 0; }

const ck_backend_iface ck_backend_cuda = {
    .name = "cuda",
    .peer_access = cuda_peer_access,
    .alloc = ck_cuda_alloc,
    .free = ck_cuda_free,
    .copy_to_host = ck_cuda_copy_to_host,
    .copy_from_host = ck_cuda_copy_from_host,
    .copy_async = ck_cuda_copy_async,
    .record_stream = ck_cuda_record_stream,
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
    .function_params = ck_cuda_function_params,
    .function_launch = ck_cuda_function_launch,
    .function_max_cooperative_blocks = ck_cuda_function_max_cooperative_blocks,

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
    .histogram = ck_cuda_histogram,
    .random = ck_cuda_random,
    .copy_pieces = ck_cuda_copy_pieces,
    .rows = ck_cuda_rows,
    .optim_step = ck_cuda_optim_step,
    .bias_act = ck_cuda_bias_act,
    .scatter_add = ck_cuda_scatter_add,
    .linear = ck_cuda_linear,

    .matmul = ck_cuda_matmul,
    .fft = ck_cuda_fft,
    .solver = ck_cuda_solver,

    .graph_begin = ck_cuda_graph_begin,
    .graph_end = ck_cuda_graph_end,
    .graph_launch = ck_cuda_graph_launch,
    .graph_free = ck_cuda_graph_free,
    .graph_nodes = ck_cuda_graph_nodes,
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
