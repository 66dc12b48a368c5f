/*
 * profiler.h - the profiler's record store and the synchronisation debug
 * mode, below the backends so that every layer can report to them.
 *
 * The store (profiler.c) is a list of records in chunks that never move,
 * filled by any thread; each thread keeps the stack of its open records,
 * so a record's parent is the one open around it.  Records get device times
 * from a pair of events: the backend layer's (src/backend/profile.c, for
 * ops, copies and user kernels, whose device it knows) or the driver's,
 * recorded here around each built-in kernel launch, which src/platform
 * reports through its launch observer.
 *
 *   ck_prof_slot *r = ck_prof_open(CK_PROF_OP, "add", dev);   // NULL unless profiling
 *   ... the op ...
 *   ck_prof_close(r);
 */
#ifndef CK_RUNTIME_PROFILER_H
#define CK_RUNTIME_PROFILER_H

#include "cudakit.h"
#include "cudakit_profiler.h"

#include <stdint.h>

/* What the decorated backend tables are on for (any bit set: they are). */
#define CK_OBS_PROFILE 0x1
#define CK_OBS_NVTX 0x2
#define CK_OBS_SYNC 0x4
extern int ck_obs_flags_;   /* written by src/backend/profile.c, which swaps the tables */

/* How a record is timed on its device. */
enum { CK_TIMER_NONE, CK_TIMER_BACKEND, CK_TIMER_DRIVER };

typedef struct ck_prof_slot {
    ck_prof_record pub;
    int timer;
    int closed;
    void *ev[2];          /* the events before and after it */
    void *ctx;            /* CK_TIMER_DRIVER: the events' CUcontext */
    int64_t index;        /* its place in the store */
} ck_prof_slot;

/* A new record on this thread, open until ck_prof_close (NULL when no
 * profile is on, or out of memory: the profile then says it lost records). */
ck_prof_slot *ck_prof_open(ck_prof_kind kind, const char *name, ck_device dev);
void ck_prof_close(ck_prof_slot *r);
/* The innermost record open on this thread (NULL for none). */
ck_prof_slot *ck_prof_top(void);
/* Start and stop the store (the public start/stop are the backend layer's,
 * which times devices). */
ck_status ck_prof_store_start(unsigned flags);
void ck_prof_store_stop(void);
unsigned ck_prof_store_flags(void);
int64_t ck_prof_store_count(void);
ck_prof_slot *ck_prof_store_at(int64_t i);
/* Give the driver-timed records their device times: each context's work is
 * done (the caller waited), one more event marks "now" on the host clock. */
ck_status ck_prof_resolve_driver_events(void);
/* "Now" on the host clock for a device whose work is done, for turning
 * elapsed times back from an event into host times.  mark(arg, i) records
 * event i of CK_PROF_ANCHOR_TRIES on the device and waits for it; the
 * shortest round wins (*best), so a thread descheduled between an event's
 * end and the clock's read shifts no records (the ops' events and the
 * driver's are resolved against anchors of their own, which must agree). */
#define CK_PROF_ANCHOR_TRIES 3
typedef ck_status (*ck_prof_mark_fn)(void *arg, int i);
ck_status ck_prof_anchor(ck_prof_mark_fn mark, void *arg, int *best, double *now_us);
/* Record each built-in kernel launch (src/platform's launch observer). */
void ck_prof_observe_launches(int on);
/* The host clock the records use, in ns since the profile began. */
int64_t ck_prof_now_ns(void);

/* ---------------------------------------------------- op names (sync) */

/* The op each thread is in, innermost last, kept while any observer is on
 * (the sync debug mode's messages name it). */
void ck_obs_op_push(const char *name);
void ck_obs_op_pop(void);

/* -------------------------------------------------- synchronisation */

extern int ck_sync_mode_;
ck_status ck_sync_report_(ck_device dev, const char *what);
/* The host is about to wait for dev's work without being asked to (what:
 * "a copy to the host"): reported by the debug mode, with the op it is in.
 * Off, one predictable branch. */
static inline ck_status ck_sync_point(ck_device dev, const char *what)
{
    if (__builtin_expect(ck_sync_mode_ == CK_SYNC_DEFAULT, 1)) return CK_OK;
    return ck_sync_report_(dev, what);
}
/* Reported once for a span: the points inside (the copy a count needs) are
 * the span's, not reported again. */
ck_status ck_sync_span_begin(ck_device dev, const char *what);
void ck_sync_span_end(void);

#endif
