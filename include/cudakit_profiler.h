/*
 * cudakit_profiler.h - what ran, where and for how long: the profiler,
 * NVTX ranges and the synchronisation debug mode.
 *
 * While a profile is on, every op (the one backend call it makes), every
 * kernel (built-in and user, CUDA C and Python), every copy between host and
 * device and every user range is a record: name, device, shapes and dtypes,
 * grid and block for a kernel, bytes for a copy, host times and, on a GPU,
 * device times from a pair of CUDA events around it.  Records nest: a
 * kernel's parent is the op that launched it, an op's the range around it.
 * Off, the ops cost nothing more (their backend table is the plain one) and
 * a kernel launch one predictable branch.
 *
 *   ck_profiler_start(0);
 *   ... ck_ufunc_call2(CK_OP_ADD, &x, &one, &y) ...
 *   ck_profiler_stop();                       // waits for the devices, resolves device times
 *   for (int64_t i = 0; i < ck_profiler_count(); i++) {
 *       const ck_prof_record *r = ck_profiler_record(i);
 *       printf("%s %.1f us\n", r->name, (r->host_end_ns - r->host_start_ns) / 1e3);
 *   }
 *   ck_profiler_export_chrome_trace("trace.json");
 *   ck_profiler_clear();
 */
#ifndef CUDAKIT_PROFILER_H
#define CUDAKIT_PROFILER_H

#include "cudakit.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ck_prof_kind {
    CK_PROF_OP,       /* an op's backend call: element-wise, reduction, gather, matmul ... */
    CK_PROF_KERNEL,   /* one kernel launch (built-in or user) */
    CK_PROF_COPY,     /* host <-> device or device <-> device */
    CK_PROF_RANGE,    /* a user range: record_function, or ck_profiler_range_push/pop */
    CK_PROF_KIND_COUNT
} ck_prof_kind;

#define CK_PROF_SHAPES_MAX 112
#define CK_PROF_DTYPES_MAX 64

typedef struct ck_prof_record {
    ck_prof_kind kind;
    const char *name;          /* owned by the profile, valid until ck_profiler_clear */
    ck_device dev;
    int thread;                /* 0 for the first thread that recorded, 1 for the next ... */
    int depth;                 /* 0 at the top, parent's + 1 */
    int64_t parent;            /* the enclosing record's index, -1 for none */
    uint64_t stream;           /* a GPU record's stream handle (0: the default stream) */
    int64_t host_start_ns;     /* host clock (monotonic), since the profile began */
    int64_t host_end_ns;
    double dev_start_us;       /* device clock, on the host's timeline (us since the profile began) */
    double dev_us;             /* device time; < 0 where there is none (the CPU, a record left open) */
    unsigned grid[3], block[3];/* a kernel's launch; 0 otherwise */
    size_t shared_mem;
    uint64_t bytes;            /* a copy's size */
    char shapes[CK_PROF_SHAPES_MAX];   /* "[[1000], []]": the shapes the op iterates (contiguous dims merged) */
    char dtypes[CK_PROF_DTYPES_MAX];   /* "float32, float32" */
} ck_prof_record;

/* ck_profiler_start flags */
#define CK_PROF_NVTX 0x1       /* each op and range is also an NVTX range (Nsight Systems shows them by name) */

/* Start recording (CK_ERR_RUNTIME when a profile is on already); records of
 * an earlier profile are dropped. */
ck_status ck_profiler_start(unsigned flags);
/* Stop: waits for every device that has timed records, then gives each its
 * device times.  Records stay readable until ck_profiler_clear or the next
 * start. */
ck_status ck_profiler_stop(void);
int ck_profiler_enabled(void);
int64_t ck_profiler_count(void);
const ck_prof_record *ck_profiler_record(int64_t i);   /* NULL when out of range */
void ck_profiler_clear(void);
/* A user range on the calling thread (record_function): a record while
 * profiling, an NVTX range under CK_PROF_NVTX.  pop without a push:
 * CK_ERR_RUNTIME. */
ck_status ck_profiler_range_push(const char *name);
ck_status ck_profiler_range_pop(void);

/* Records aggregated by (kind, name[, shapes]): PyTorch's key_averages. */
typedef struct ck_prof_average {
    const char *name;          /* the profile's string */
    ck_prof_kind kind;
    ck_device dev;
    const char *shapes;        /* the group's shapes (group_by_shapes), else "" */
    int64_t count;
    double host_total_us;      /* sum of the records' host times */
    double host_self_us;       /* minus the host time of their children */
    double dev_total_us;       /* sum of device times (an op's: its own span); < 0: none */
    double dev_self_us;        /* an op's device time minus its kernels' and copies' */
    uint64_t bytes;
} ck_prof_average;
/* The groups, first-seen order; *out is malloc'd (free it), *n its count. */
ck_status ck_profiler_averages(int group_by_shapes, ck_prof_average **out, int64_t *n);

/* Write the records as a Chrome trace (JSON, "traceEvents"), which Perfetto
 * and chrome://tracing open: host records on a "thread" row each, device
 * records on a row per device and stream. */
ck_status ck_profiler_export_chrome_trace(const char *path);

/* ----------------------------------------------------------------- NVTX */

/* NVTX ranges and marks, libnvToolsExt loaded on first use (CUDA_PATH,
 * /usr/local/cuda, the nvidia-nvtx wheel, the loader path).  Without it they
 * do nothing, as NVTX does without a tool attached; ck_nvtx_available says
 * which. */
int ck_nvtx_available(void);
void ck_nvtx_range_push(const char *name);
void ck_nvtx_range_pop(void);
void ck_nvtx_mark(const char *name);

/* ------------------------------------------------- synchronisation debug */

/* What an implicit synchronisation with a GPU does (PyTorch's
 * set_sync_debug_mode): nothing (default), a warning, or an error.  The
 * points are where the host waits for a device without being asked to: a
 * copy to the host (asnumpy, item, printing, a data-dependent size), a copy
 * from pageable host memory, and ops whose result size depends on data
 * (nonzero, boolean masks, sort's radix passes...).  synchronize() of a
 * device, stream or event is asked for and never reported. */
typedef enum ck_sync_mode { CK_SYNC_DEFAULT, CK_SYNC_WARN, CK_SYNC_ERROR } ck_sync_mode;
void ck_sync_set_debug_mode(ck_sync_mode mode);
ck_sync_mode ck_sync_debug_mode(void);
/* Where a warning goes: fn(message) (the Python layer's warnings.warn);
 * fn returning nonzero makes the synchronisation fail with CK_ERR_RUNTIME
 * (a warning filter turned it into an error).  NULL: stderr. */
void ck_sync_set_warn_handler(int (*fn)(const char *message));

#ifdef __cplusplus
}
#endif

#endif /* CUDAKIT_PROFILER_H */
