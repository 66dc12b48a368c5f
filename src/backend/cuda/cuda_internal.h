/*
 * cuda_internal.h - the CUDA backend's shared state: per-device contexts,
 * the current device and stream of each thread, the caching memory pool,
 * and the table of compiled kernels.
 */
#ifndef CK_CUDA_INTERNAL_H
#define CK_CUDA_INTERNAL_H

#include "../backend.h"
#include "../../platform/cuda_api.h"
#include "../../runtime/profiler.h"   /* ck_sync_point at the waits nobody asked for */
#include "../../codegen/cuda_codegen.h"

#include <pthread.h>

#define CK_CUDA_MAX_DEVICES CK_MAX_GPUS

typedef struct ck_kernel_slot { uint64_t key; CUfunction fn; } ck_kernel_slot;
/* Capacity and slots in one allocation, so a lock-free reader always sees
 * a consistent pair; a grown table replaces the pointer and the old one is
 * kept (tables only grow, and rarely). */
typedef struct ck_ktable { size_t cap; ck_kernel_slot slots[]; } ck_ktable;

typedef struct ck_cuda_device {
    int ready;
    CUdevice dev;
    CUcontext ctx;
    int cc_major, cc_minor, sm_count, max_threads_per_sm;
    int graph_fuse;   /* chains of small element-wise kernels fused in a capture (CUDAKIT_GRAPH_FUSE=0: not) */
    int ew_flat;   /* small element-wise kernels without the grid-stride loop (CUDAKIT_EW_FLAT=0: with it) */
    int pdl;   /* programmatic dependent launch of the kernels that wait for it (ck_cuda_launch_pdl) */
    char name[256];
    size_t total_mem;
    /* compiled kernels: open addressing on the spec key, grown at 50% load */
    pthread_mutex_t kmu;
    ck_ktable *kernels;
    size_t kcount;
    CUmodule *modules;
    size_t nmodules, cmodules;
} ck_cuda_device;

extern ck_cuda_device ck_cuda_devices[CK_CUDA_MAX_DEVICES];
extern int ck_cuda_ndevices;

/* Make device d's context current on this thread (initialising it once). */
ck_status ck_cuda_use(int d);
ck_cuda_device *ck_cuda_dev(int d);
/* This thread's current device and its current stream (NULL = the legacy
 * default stream). */
int ck_cuda_current_device(void);
void ck_cuda_set_current_device(int d);

/* Element-wise kernels held back while a graph is captured, to be launched
 * as one fused kernel (cuda_kernels.c): whatever queues other work must
 * launch them first, so the door to a stream does.  ck_cuda_current_stream
 * is for queueing work on the stream (the held kernels go first, and
 * the context current before is current after); _peek only looks (an
 * allocation); set_current_stream launches them on the stream they were
 * queued for before it changes.  A function handed a stream of its own
 * (events, waits, copies on a given stream) calls
 * ck_cuda_fuse_flush_pending first. */
extern _Thread_local int ck_cuda_fuse_pending;
void ck_cuda_fuse_flush(void);   /* leaves the context that was current */
static inline void ck_cuda_fuse_flush_pending(void)
{
    if (__builtin_expect(ck_cuda_fuse_pending, 0)) ck_cuda_fuse_flush();
}
/* The device whose context is current on this thread (ck_cuda_use), or -1. */
int ck_cuda_context_device(void);
/* A capture of device d's work on stream s begins (cuda_graph.c), and ends:
 * the held kernels launched, and the first failure to launch them, which
 * fails the capture. */
void ck_cuda_fuse_begin(int d, CUstream s);
ck_status ck_cuda_fuse_end(int d);

CUstream ck_cuda_current_stream_peek(int d);
static inline CUstream ck_cuda_current_stream(int d)
{
    ck_cuda_fuse_flush_pending();
    return ck_cuda_current_stream_peek(d);
}
void ck_cuda_set_current_stream(int d, CUstream s);

/* The functions of n entry points of one module, names[i] at key + i,
 * compiled (or loaded from the disk cache) on first use: one compile of
 * make_source(spec) for all of them on a miss (cuda_kernels.c), with
 * NVRTC's options (the _opt form; the key must tell the options apart). */
ck_status ck_cuda_get_kernels_opt(int d, uint64_t key, char *(*make_source)(const void *spec), const void *spec,
                                  const char *const *names, int n, CUfunction *fns, const char *const *options,
                                  int noptions);
static inline ck_status ck_cuda_get_kernels(int d, uint64_t key, char *(*make_source)(const void *spec),
                                            const void *spec, const char *const *names, int n, CUfunction *fns)
{
    return ck_cuda_get_kernels_opt(d, key, make_source, spec, names, n, fns, NULL, 0);
}
static inline ck_status ck_cuda_get_kernel(int d, uint64_t key, char *(*make_source)(const void *spec),
                                           const void *spec, const char *name, CUfunction *fn)
{
    return ck_cuda_get_kernels(d, key, make_source, spec, &name, 1, fn);
}
/* Launch on the current stream of device d. */
ck_status ck_cuda_launch(int d, CUfunction f, unsigned grid, unsigned block, unsigned shmem, void **args);
/* The same for a kernel that begins with CK_PDL_ENTRY() (cuda_prelude.cuh):
 * on a Hopper or later GPU it is launched as a programmatic dependent of
 * the kernel before it on the stream, so its blocks are resident and
 * waiting when that kernel ends (a captured graph of small ops: 0.89 ->
 * 0.60 us a node on the H200, bench/probe_pdl.cu); elsewhere, with
 * CUDAKIT_PDL=0, and while the profiler observes launches, an ordinary
 * launch.  Only for kernels whose first act is the wait: one that touched
 * memory before it would race the kernel before.  Events recorded between
 * two such kernels may read a little early or late by the kernel's early
 * start (the profiler turns it off for that reason). */
ck_status ck_cuda_launch_pdl(int d, CUfunction f, unsigned grid, unsigned block, unsigned shmem, void **args);
ck_status ck_cuda_launch_pdl2(int d, CUfunction f, unsigned gx, unsigned gy, unsigned block, unsigned shmem,
                              void **args);   /* a grid of gx x gy blocks */
/* Blocks for a grid-stride kernel over n work items. */
unsigned ck_cuda_grid_for(int d, int64_t n, unsigned block);

/* memory pool (cuda_memory.c) */
void *ck_cuda_alloc(ck_device dev, size_t nbytes);
void ck_cuda_free(ck_device dev, void *ptr, size_t nbytes);
ck_status ck_cuda_copy_to_host(ck_device dev, void *dst, const void *src, size_t n);
ck_status ck_cuda_copy_from_host(ck_device dev, void *dst, const void *src, size_t n);
ck_status ck_cuda_copy_peer(ck_device dst_dev, void *dst, ck_device src_dev, const void *src, size_t n);
/* Peer access between GPUs a and b, enabled both ways on first call
 * (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess): 1 on, -1 they cannot. */
int ck_cuda_peer_access(int a, int b);
ck_status ck_cuda_copy_async(ck_device dev, void *dst, const void *src, size_t n, int to_host, ck_stream s,
                             void *block);

/* graphs: the driver's stream capture (cuda_graph.c) */
ck_status ck_cuda_graph_begin(ck_device dev, ck_stream s, void **impl);
ck_status ck_cuda_graph_end(ck_device dev, ck_stream s, void *impl);
ck_status ck_cuda_graph_launch(ck_device dev, void *impl, ck_stream s);
void ck_cuda_graph_free(ck_device dev, void *impl);
int64_t ck_cuda_graph_nodes(void *impl);

/* kernels (cuda_kernels.c, cuda_reduce.c) */
ck_status ck_cuda_elementwise(const ck_ew_desc *d);
ck_status ck_cuda_cast(const ck_ew_desc *d);
ck_status ck_cuda_fill(const ck_ew_desc *d, const void *value);
ck_status ck_cuda_iota(ck_array *out, double start, double step);
ck_status ck_cuda_reduce(const ck_reduce_desc *d);
ck_status ck_cuda_scan(const ck_scan_desc *d);
ck_status ck_cuda_synchronize(ck_device dev);
/* cuda_blas.c: cuBLAS for floating types, a tiled kernel for integers and bool */
ck_status ck_cuda_matmul(const ck_matmul_desc *d);
/* The current stream's cuBLAS workspace (cuBLASLt's too: the products of
 * one stream run one after another), *size bytes; NULL with no error when
 * none could be made. */
void *ck_cuda_blas_workspace(ck_device dev, size_t *size);
/* cuda_linear.c: the fused linear layer's products through cuBLASLt */
ck_status ck_cuda_linear(const ck_linear_desc *d);
/* sorting and searching (cuda_sort.c) */
ck_status ck_cuda_sort(const ck_sort_desc *d);
ck_status ck_cuda_searchsorted(const ck_searchsorted_desc *d);
ck_status ck_cuda_histogram(const ck_histogram_desc *d);
/* random fills (cuda_random.c) */
ck_status ck_cuda_random(const ck_random_desc *d);
/* the training ops (cuda_train.c, key family 0x48) */
ck_status ck_cuda_rows(const ck_rows_desc *d);
ck_status ck_cuda_optim_step(const ck_optim_desc *d);
ck_status ck_cuda_bias_act(const ck_bias_act_desc *d);
ck_status ck_cuda_scatter_add(const ck_scatter_add_desc *d);
/* advanced indexing (cuda_index.c) */
ck_status ck_cuda_gather(const ck_gather_desc *d);
ck_status ck_cuda_scatter(const ck_gather_desc *d);
ck_status ck_cuda_nonzero(const ck_nonzero_desc *d);
ck_status ck_cuda_compress(const ck_compress_desc *d);
/* joining in one launch per chunk of pieces (cuda_concat.c, key family 0x47) */
ck_status ck_cuda_copy_pieces(const ck_pieces_desc *d);
/* The launches of a join, planned without a GPU: fn gets each one's spec
 * (idx64 set), positions, output base, piece count and parameter words;
 * ck_cuda_copy_pieces launches them, the C tests run them on the host. */
struct ck_cuda_cat_spec;
typedef ck_status (*ck_cuda_cat_plan_fn)(void *ctx, const ck_pieces_desc *d, const struct ck_cuda_cat_spec *sp,
                                         int64_t n, char *out, int np, const int64_t *params);
ck_status ck_cuda_cat_plan(const ck_pieces_desc *d, ck_cuda_cat_plan_fn fn, void *ctx);

/* memory figures and pinned host memory (cuda_memory.c) */
ck_status ck_cuda_memory_stats(ck_device dev, ck_mem_stats *out);
ck_status ck_cuda_memory_empty_cache(ck_device dev);
ck_status ck_cuda_memory_set_limit(ck_device dev, size_t limit);
ck_status ck_cuda_memory_reset_peak(ck_device dev);
void *ck_cuda_pinned_alloc(size_t nbytes, ck_release_fn *release, void **ctx);
/* Whether [p, p + n) lies in one pinned block of ours. */
int ck_cuda_is_pinned(const void *p, size_t n);
/* Before stream s of device d is destroyed: the pool and the pinned
 * blocks stop naming it (its handle may come back with the next stream). */
void ck_cuda_memory_stream_gone(int d, CUstream s);
/* The same for the stream's cuBLAS workspace (cuda_blas.c). */
void ck_cuda_blas_stream_gone(int d, CUstream s);
/* The block at ptr is used by work on s too (ck_array_record_stream). */
ck_status ck_cuda_record_stream(ck_device dev, void *ptr, ck_stream s);

/* Waits for a GPU (cuda_runtime.c): they poll, so Ctrl-C ends them with
 * CK_ERR_INTERRUPT and the kernel time limit with CK_ERR_DEVICE (the work
 * stays queued); call names the wait in messages.  The device's context
 * must be current. */
ck_status ck_cuda_wait_stream(int d, CUstream s, const char *call);
ck_status ck_cuda_wait_event(int d, CUevent e, const char *call);
/* All of the device's work (cuCtxSynchronize's), polling our streams first. */
ck_status ck_cuda_wait_device(int d, const char *call);

/* the device runtime (cuda_runtime.c) */
int ck_cuda_device_count(void);
ck_status ck_cuda_device_properties(ck_device dev, ck_device_props *out);
ck_status ck_cuda_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes);
ck_status ck_cuda_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out);
ck_status ck_cuda_stream_destroy(ck_device dev, ck_stream s);
ck_status ck_cuda_stream_synchronize(ck_device dev, ck_stream s);
ck_status ck_cuda_stream_query(ck_device dev, ck_stream s, int *done);
ck_status ck_cuda_stream_wait_event(ck_device dev, ck_stream s, ck_event e);
ck_status ck_cuda_stream_priority_range(ck_device dev, int *least, int *greatest);
ck_stream ck_cuda_stream_current(ck_device dev);
void ck_cuda_stream_set_current(ck_device dev, ck_stream s);
ck_status ck_cuda_event_create(ck_device dev, int timing, ck_event *out);
ck_status ck_cuda_event_destroy(ck_device dev, ck_event e);
ck_status ck_cuda_event_record(ck_device dev, ck_event e, ck_stream s);
ck_status ck_cuda_event_synchronize(ck_device dev, ck_event e);
ck_status ck_cuda_event_query(ck_device dev, ck_event e, int *done);
ck_status ck_cuda_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms);

/* user modules (cuda_module.c) */
ck_status ck_cuda_module_load(ck_device dev, const char *source, const char *name_hint, const char *const *options,
                              int noptions, const char *const *name_exprs, int nexprs, ck_module **out);
void ck_cuda_module_free(ck_module *m);
ck_status ck_cuda_module_get_global(ck_module *m, const char *name, void **ptr, size_t *nbytes);
ck_status ck_cuda_function_new(ck_module *m, const char *name, ck_function **out);
void ck_cuda_function_free(ck_function *f);
ck_status ck_cuda_function_attributes(ck_function *f, ck_function_attrs *out);
ck_status ck_cuda_function_set_max_dynamic_shared(ck_function *f, int bytes);
/* Parameter count and sizes from the cubin (cuFuncGetParamInfo, CUDA 12.4);
 * -1 with an older driver. */
int ck_cuda_function_params(ck_function *f, size_t *sizes, int max);
ck_status ck_cuda_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid,
                                         int *block);
ck_status ck_cuda_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                  ck_stream stream, unsigned flags, int nparams, void **params,
                                  const ck_launch_arg *info);
ck_status ck_cuda_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out);

/* libraries: cuFFT (cuda_fft.c), cuSOLVER (cuda_solver.c) */
ck_status ck_cuda_fft(const ck_fft_desc *d);
/* Destroy the cached plans (tests, device teardown). */
void ck_cuda_fft_clear_plans(void);
ck_status ck_cuda_solver(const ck_solver_desc *d);

#endif
