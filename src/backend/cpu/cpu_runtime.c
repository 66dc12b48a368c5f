/* The device runtime on the CPU.  Work here is host-ordered: an op is done
 * when its call returns, so a stream is only a name for where work would
 * queue (always idle), an event holds the host clock at its record, and
 * synchronising waits for nothing.  Code written for a GPU's streams and
 * events therefore runs unchanged, and its timings are host times. */
#include "cpu_internal.h"
#include "../../runtime/cpu_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- device */

static void cpu_model_name(char *buf, size_t n)
{
    snprintf(buf, n, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) break;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        snprintf(buf, n, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static size_t pages_bytes(int name)
{
    long pages = sysconf(name), psz = sysconf(_SC_PAGESIZE);
    return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
}

ck_status ck_cpu_device_properties(ck_device dev, ck_device_props *o)
{
    (void)dev;
    cpu_model_name(o->name, sizeof o->name);
    o->total_memory = pages_bytes(_SC_PHYS_PAGES);
    o->multi_processor_count = ck_cpu_num_threads();
    o->max_threads_per_multiprocessor = CK_CPU_MAX_THREADS_PER_BLOCK;
    o->max_threads_per_block = CK_CPU_MAX_THREADS_PER_BLOCK;
    o->shared_memory_per_block = CK_CPU_DEFAULT_DYN_SHARED;
#ifdef _SC_LEVEL2_CACHE_SIZE
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    o->l2_cache_size = l2 > 0 ? (int)l2 : 0;
#endif
    o->warp_size = CK_CPU_WARP_SIZE;
    return CK_OK;
}

ck_status ck_cpu_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes)
{
    (void)dev;
    *free_bytes = pages_bytes(_SC_AVPHYS_PAGES);
    *total_bytes = pages_bytes(_SC_PHYS_PAGES);
    return CK_OK;
}

/* ------------------------------------------------------------- streams */

struct ck_stream_s {
    int priority;
};

struct ck_event_s {
    int timing;
    int recorded;
    double ms;          /* CLOCK_MONOTONIC at the record */
};

static _Thread_local ck_stream cur_stream_;

ck_status ck_cpu_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out)
{
    (void)dev; (void)nonblocking;
    ck_stream s = calloc(1, sizeof *s);
    if (!s) return ck_error_set(CK_ERR_MEMORY, "out of memory for a stream");
    s->priority = priority > 0 ? 0 : priority < -1 ? -1 : priority;   /* the range of ck_cpu_stream_priority_range */
    *out = s;
    return CK_OK;
}

ck_status ck_cpu_stream_destroy(ck_device dev, ck_stream s)
{
    (void)dev;
    free(s);
    return CK_OK;
}

ck_status ck_cpu_stream_synchronize(ck_device dev, ck_stream s)
{
    (void)dev; (void)s;
    return CK_OK;
}

ck_status ck_cpu_stream_query(ck_device dev, ck_stream s, int *done)
{
    (void)dev; (void)s;
    *done = 1;
    return CK_OK;
}

ck_status ck_cpu_stream_wait_event(ck_device dev, ck_stream s, ck_event e)
{
    (void)dev; (void)s; (void)e;
    return CK_OK;
}

ck_status ck_cpu_stream_priority_range(ck_device dev, int *least, int *greatest)
{
    (void)dev;
    *least = 0;
    *greatest = -1;
    return CK_OK;
}

ck_stream ck_cpu_stream_current(ck_device dev)
{
    (void)dev;
    return cur_stream_;
}

void ck_cpu_stream_set_current(ck_device dev, ck_stream s)
{
    (void)dev;
    cur_stream_ = s;
}

/* -------------------------------------------------------------- events */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

ck_status ck_cpu_event_create(ck_device dev, int timing, ck_event *out)
{
    (void)dev;
    ck_event e = calloc(1, sizeof *e);
    if (!e) return ck_error_set(CK_ERR_MEMORY, "out of memory for an event");
    e->timing = timing;
    *out = e;
    return CK_OK;
}

ck_status ck_cpu_event_destroy(ck_device dev, ck_event e)
{
    (void)dev;
    free(e);
    return CK_OK;
}

ck_status ck_cpu_event_record(ck_device dev, ck_event e, ck_stream s)
{
    (void)dev; (void)s;
    e->ms = now_ms();
    e->recorded = 1;
    return CK_OK;
}

ck_status ck_cpu_event_synchronize(ck_device dev, ck_event e)
{
    (void)dev; (void)e;
    return CK_OK;
}

ck_status ck_cpu_event_query(ck_device dev, ck_event e, int *done)
{
    (void)dev; (void)e;
    *done = 1;
    return CK_OK;
}

ck_status ck_cpu_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms)
{
    (void)dev;
    if (!start->timing || !end->timing)
        return ck_error_set(CK_ERR_VALUE, "elapsed_time: an event was made with enable_timing=False");
    if (!start->recorded || !end->recorded)
        return ck_error_set(CK_ERR_VALUE, "elapsed_time: both events must be recorded first");
    *ms = (float)(end->ms - start->ms);
    return CK_OK;
}
