/*
 * graph_internal.h - what buffer.c and the backends share with graph.c:
 * the graph pools' hooks on allocation and release, and the capture state.
 */
#ifndef CK_GRAPH_INTERNAL_H
#define CK_GRAPH_INTERNAL_H

#include "backend.h"
#include "cudakit_graph.h"

/* Captures in progress on any thread; and those plus the CPU graphs
 * holding a recording: while they are 0, allocation and release pay one
 * test each. */
extern int ck_graph_captures_;
extern int ck_graph_keepers_;

/* A buffer for an allocation made while this thread captures for dev:
 * one the capture's pool freed earlier in the same stream, or a new one the
 * pool then knows; NULL with the error set on failure. */
ck_buffer *ck_graph_pool_alloc(ck_device dev, size_t nbytes);
/* b's last reference went: 1 when a graph pool keeps it (b came from a
 * pool, is freed during a capture, or a recorded CPU graph addresses it),
 * 0 when it is to be freed now. */
int ck_graph_pool_keep(ck_buffer *b);

/* A backend's own scratch memory (a reduction's partials, a library's
 * workspace) freed during a capture: 1 when the capture's pool takes it,
 * to be given back with free_fn(dev, p, n) when the pool goes (a replay
 * uses it); 0 when this thread captures nothing on dev. */
int ck_graph_defer_free(ck_device dev, void (*free_fn)(ck_device, void *, size_t), void *p, size_t n);

/* Stream s of dev is about to be destroyed: the graphs last replayed on it
 * mark their replays there now (the handle may come back with the next
 * stream). */
void ck_graph_stream_gone(ck_device dev, ck_stream s);

/* buffer.c: a buffer straight from the device, and its freeing. */
ck_buffer *ck_buffer_alloc_direct(ck_device dev, size_t nbytes);
void ck_buffer_free_direct(ck_buffer *b);

#endif
