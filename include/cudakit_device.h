/*
 * cudakit_device.h - the device runtime: which devices there are, streams,
 * events, synchronisation and memory figures, the same on every device.
 *
 * The CPU is a device like any other: its work is host-ordered (an op is
 * done when its call returns), so its streams are always idle and its
 * events carry the host clock; code written for a GPU runs unchanged
 * without one.  Every function goes through the device's backend
 * (src/backend/backend.h); a device that cannot be used gives one error,
 * CK_ERR_DEVICE "no usable CUDA device: <why>", wherever it is named.
 *
 *     ck_device dev = ck_device_default();
 *     ck_stream s;
 *     ck_event e0, e1;
 *     ck_stream_create(dev, 1, 0, &s);
 *     ck_event_create(dev, 1, &e0);  ck_event_create(dev, 1, &e1);
 *     ck_event_record(dev, e0, s);
 *     ... work on s ...
 *     ck_event_record(dev, e1, s);
 *     ck_event_synchronize(dev, e1);
 *     float ms;  ck_event_elapsed_ms(dev, e0, e1, &ms);
 */
#ifndef CUDAKIT_DEVICE_H
#define CUDAKIT_DEVICE_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most GPUs one process addresses. */
#define CK_MAX_GPUS 16

/* ------------------------------------------------------------- devices */

/* The device new arrays go to when none is named: the CPU until a caller
 * (the Python layer, deciding once) sets another. */
ck_device ck_device_default(void);
void ck_device_set_default(ck_device dev);
/* "cpu", "cuda:0" */
void ck_device_str(ck_device d, char *buf, size_t n);

/* Usable devices of a type: 1 for the CPU; the GPUs the driver sees (0
 * without a driver or a GPU; loads the driver on first call). */
int ck_device_count(ck_device_type type);
/* CK_OK when dev can be used now; else CK_ERR_DEVICE "no usable CUDA
 * device: <why>" (no driver, no GPU, a driver too old, CUDA disabled) or
 * CK_ERR_VALUE "invalid CUDA device N (M available)". */
ck_status ck_device_check(ck_device dev);
/* Why no GPU can be used ("" when one can). */
const char *ck_device_unavailable_reason(void);
/* The device of a type this thread works on when no index is named (CUDA's
 * current device; the CPU's is cpu:0), and choosing it. */
ck_device ck_device_current(ck_device_type type);
ck_status ck_device_set_current(ck_device dev);
/* A folder to search for NVRTC and the CUDA libraries before the loader
 * path (the Python layer adds the nvidia-* wheels' lib folders). */
void ck_add_library_dir(const char *dir);

/* Whether devices a and b reach each other's memory directly (*out 1),
 * enabling that both ways the first time it is asked (GPUs: peer access,
 * which copies between them use; the same device: 1; else 0: copies
 * between them are staged through host memory). */
ck_status ck_device_can_access_peer(ck_device a, ck_device b, int *out);

typedef struct ck_device_props {
    char name[256];
    int cc_major, cc_minor;              /* 0, 0 for the CPU */
    size_t total_memory;
    int multi_processor_count;           /* the CPU: worker threads */
    int max_threads_per_multiprocessor;
    int max_threads_per_block;
    int shared_memory_per_block;
    int l2_cache_size;
    int memory_bus_width;
    int warp_size;
} ck_device_props;

ck_status ck_device_properties(ck_device dev, ck_device_props *out);
/* Free and total bytes of the device's memory. */
ck_status ck_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes);
/* Wait for all work queued on dev.  Every wait for a GPU (this, stream and
 * event synchronisation, copies to the host) polls rather than blocking in
 * the driver: Ctrl-C ends it with CK_ERR_INTERRUPT (the work queued goes on
 * running on the device, the context stays usable), and one that lasts
 * longer than the kernel time limit ends with CK_ERR_DEVICE. */
ck_status ck_device_synchronize(ck_device dev);

/* The kernel time limit: a user kernel launched on the CPU that runs
 * longer is stopped (CK_ERR_DEVICE naming the kernel and the limit; its
 * outputs partly written), and a wait for a GPU that lasts longer gives up
 * (CK_ERR_DEVICE; the kernel may still be running).  0, the default unless
 * CUDAKIT_KERNEL_TIMEOUT (seconds) is set, means none; CK_ERR_VALUE for a
 * negative number or NaN. */
ck_status ck_kernel_timeout_set(double seconds);
double ck_kernel_timeout_get(void);

/* ------------------------------------------------------------- streams */

/* A queue of work on one device.  NULL is the device's default stream. */
typedef struct ck_stream_s *ck_stream;
/* A point in a stream, with a time when made with timing. */
typedef struct ck_event_s *ck_event;

/* nonblocking: does not wait for the default stream (CUDA's flag);
 * priority: lower numbers run first, clamped to the device's range. */
ck_status ck_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out);
ck_status ck_stream_destroy(ck_device dev, ck_stream s);
ck_status ck_stream_synchronize(ck_device dev, ck_stream s);
/* *done = 1 when every op queued on s has finished. */
ck_status ck_stream_query(ck_device dev, ck_stream s, int *done);
/* Work queued on s after this waits for e. */
ck_status ck_stream_wait_event(ck_device dev, ck_stream s, ck_event e);
/* The range of priorities: least (the default, 0) to greatest (negative). */
ck_status ck_stream_priority_range(ck_device dev, int *least, int *greatest);
/* The stream this thread's ops on dev go to (NULL: the default one). */
ck_stream ck_stream_current(ck_device dev);
void ck_stream_set_current(ck_device dev, ck_stream s);

ck_status ck_event_create(ck_device dev, int timing, ck_event *out);
ck_status ck_event_destroy(ck_device dev, ck_event e);
/* Mark the point in s (NULL: the default stream) the event stands for. */
ck_status ck_event_record(ck_device dev, ck_event e, ck_stream s);
ck_status ck_event_synchronize(ck_device dev, ck_event e);
ck_status ck_event_query(ck_device dev, ck_event e, int *done);
/* Milliseconds from start to end, both recorded and done (CK_ERR_VALUE
 * when either was never recorded or was made without timing). */
ck_status ck_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms);

/* -------------------------------------------------------------- memory */

typedef struct ck_mem_stats {
    size_t allocated;        /* bytes in arrays now */
    size_t peak_allocated;
    size_t cached;           /* bytes the allocator keeps for reuse */
    size_t reserved;         /* allocated + cached: what the system gave us */
    size_t limit;            /* 0: none */
    uint64_t n_alloc;        /* allocations asked for */
    uint64_t n_system_alloc; /* of them, the ones the system (driver, malloc) served */
    uint64_t n_oom;          /* allocations refused */
} ck_mem_stats;

ck_status ck_memory_stats(ck_device dev, ck_mem_stats *out);
/* Give the allocator's cached blocks back to the system. */
ck_status ck_memory_empty_cache(ck_device dev);
/* Cap the bytes the allocator may hold (0: no cap); past it allocations
 * fail with out-of-memory after the cache is emptied. */
ck_status ck_memory_set_limit(ck_device dev, size_t limit);
ck_status ck_memory_reset_peak(ck_device dev);

/* Copies of n contiguous bytes between dev's memory and the host's, in
 * order with the work queued before them (a copy to the host waits for it). */
ck_status ck_memcpy_to_host(ck_device dev, void *dst, const void *src, size_t n);
ck_status ck_memcpy_from_host(ck_device dev, void *dst, const void *src, size_t n);

/* A copy between a device array and a CPU array (same dtype and size,
 * both C-contiguous) queued on stream s of the device (NULL: its default
 * one), returning without waiting for it: on a GPU the CPU array must be
 * in pinned memory (ck_pinned_empty; CK_ERR_VALUE otherwise) and stay
 * untouched until s is done with it, and the device array's memory is not
 * reused by another stream before s is done with it either.  Unlike the
 * copies above it can be captured in a graph.  On the CPU (both arrays
 * there) the copy is done when the call returns. */
ck_status ck_array_copy_async(ck_array *dst, const ck_array *src, ck_stream s);
/* PyTorch's record_stream: a's memory is used by work queued on stream s
 * of its device, besides its own stream's, so that once freed it is not
 * reused before s is past that work.  Nothing to do on the CPU. */
ck_status ck_array_record_stream(const ck_array *a, ck_stream s);

/* A CPU array whose memory the GPUs can copy to and from without staging
 * (page-locked, when a GPU is usable; plain host memory otherwise). */
ck_status ck_pinned_empty(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
