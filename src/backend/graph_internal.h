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

/* buffer.c: a buffer straight from the device, and its freeing. */
ck_buffer *ck_buffer_alloc_direct(ck_device dev, size_t nbytes);
void ck_buffer_free_direct(ck_buffer *b);

#endif
