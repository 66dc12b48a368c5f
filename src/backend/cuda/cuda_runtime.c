/* The device runtime on a GPU: device figures, streams and events, each a
 * driver call with the device's context made current.  ck_stream and
 * ck_event are the driver's CUstream and CUevent. */
#include "cuda_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define CK_CU_USE(dev)                              \
    do {                                            \
        ck_status s_ = ck_cuda_use((dev).index);    \
        if (s_ != CK_OK) return s_;                 \
    } while (0)

ck_status ck_cuda_device_properties(ck_device dev, ck_device_props *o)
{
    CK_CU_USE(dev);
    ck_cuda_device *cd = ck_cuda_dev(dev.index);
    snprintf(o->name, sizeof o->name, "%s", cd->name);
    o->cc_major = cd->cc_major;
    o->cc_minor = cd->cc_minor;
    o->total_memory = cd->total_mem;
    o->multi_processor_count = cd->sm_count;
    o->max_threads_per_multiprocessor = cd->max_threads_per_sm;
    static const struct { int attr; size_t off; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(ck_device_props, max_threads_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(ck_device_props, shared_memory_per_block)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(ck_device_props, l2_cache_size)},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, offsetof(ck_device_props, memory_bus_width)},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(ck_device_props, warp_size)},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        CK_CHECK_CU(ck_cu.cuDeviceGetAttribute((int *)((char *)o + attrs[i].off), attrs[i].attr, cd->dev));
    return CK_OK;
}

ck_status ck_cuda_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuMemGetInfo_v2(free_bytes, total_bytes));
    return CK_OK;
}

/* ------------------------------------------------------------- streams */

ck_status ck_cuda_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out)
{
    CK_CU_USE(dev);
    CUstream st;
    CK_CHECK_CU(ck_cu.cuStreamCreateWithPriority(&st, nonblocking ? CU_STREAM_NON_BLOCKING : 0, priority));
    *out = (ck_stream)st;
    return CK_OK;
}

ck_status ck_cuda_stream_destroy(ck_device dev, ck_stream s)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuStreamDestroy_v2((CUstream)s));
    return CK_OK;
}

ck_status ck_cuda_stream_synchronize(ck_device dev, ck_stream s)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuStreamSynchronize((CUstream)s));
    return CK_OK;
}

/* A query's answer: done, not yet, or the error. */
static ck_status query_answer(CUresult r, const char *call, int *done)
{
    *done = r != CUDA_ERROR_NOT_READY;
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) return CK_OK;
    return ck_cu_fail(r, call, __func__, __FILE__, __LINE__);
}

ck_status ck_cuda_stream_query(ck_device dev, ck_stream s, int *done)
{
    CK_CU_USE(dev);
    return query_answer(ck_cu.cuStreamQuery((CUstream)s), "cuStreamQuery", done);
}

ck_status ck_cuda_stream_wait_event(ck_device dev, ck_stream s, ck_event e)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuStreamWaitEvent((CUstream)s, (CUevent)e, 0));
    return CK_OK;
}

ck_status ck_cuda_stream_priority_range(ck_device dev, int *least, int *greatest)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuCtxGetStreamPriorityRange(least, greatest));
    return CK_OK;
}

ck_stream ck_cuda_stream_current(ck_device dev) { return (ck_stream)ck_cuda_current_stream(dev.index); }

void ck_cuda_stream_set_current(ck_device dev, ck_stream s) { ck_cuda_set_current_stream(dev.index, (CUstream)s); }

/* -------------------------------------------------------------- events */

ck_status ck_cuda_event_create(ck_device dev, int timing, ck_event *out)
{
    CK_CU_USE(dev);
    CUevent e;
    CK_CHECK_CU(ck_cu.cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    *out = (ck_event)e;
    return CK_OK;
}

ck_status ck_cuda_event_destroy(ck_device dev, ck_event e)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventDestroy_v2((CUevent)e));
    return CK_OK;
}

ck_status ck_cuda_event_record(ck_device dev, ck_event e, ck_stream s)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventRecord((CUevent)e, (CUstream)s));
    return CK_OK;
}

ck_status ck_cuda_event_synchronize(ck_device dev, ck_event e)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventSynchronize((CUevent)e));
    return CK_OK;
}

ck_status ck_cuda_event_query(ck_device dev, ck_event e, int *done)
{
    CK_CU_USE(dev);
    return query_answer(ck_cu.cuEventQuery((CUevent)e), "cuEventQuery", done);
}

ck_status ck_cuda_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms)
{
    CK_CU_USE(dev);
    CK_CHECK_CU(ck_cu.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end));
    return CK_OK;
}
