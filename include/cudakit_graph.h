/*
 * cudakit_graph.h - graphs: a sequence of ops and kernels captured once and
 * replayed with one launch, on every device.
 *
 * On a GPU a capture is the driver's stream capture: the work this thread
 * queues on dev goes into a CUDA graph instead of running, and a replay is
 * one cuGraphLaunch.  On the CPU the backend records each kernel call (its
 * description and arguments, copied) instead of running it, and a replay
 * runs the records in order, so code written for a GPU's graphs runs
 * unchanged without one.
 *
 * Memory allocated during a capture comes from a pool private to the graph
 * (or shared by the graphs captured with the same pool): it stays valid
 * across replays, arrays freed during the capture are reused by later
 * allocations of the same capture (in stream order) or kept, and all of it
 * goes back to the device when the last graph using the pool is freed and
 * the last array made from it is gone.  Work that would wait for the
 * device or read device data on the host (a synchronisation, a copy to the
 * host, an op whose output size depends on the data) fails during a
 * capture with CK_ERR_RUNTIME naming it; the capture goes on.
 *
 *     ck_graph *g;
 *     ck_graph_create(dev, &g);
 *     ck_graph_capture_begin(g, NULL, NULL);
 *     ... ops on dev: y = x * 2 + 1 ...
 *     ck_graph_capture_end(g);
 *     for (int i = 0; i < 100; i++) { copy new values into x; ck_graph_replay(g); }
 *     ck_graph_free(g);
 */
#ifndef CUDAKIT_GRAPH_H
#define CUDAKIT_GRAPH_H

#include "cudakit_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_graph ck_graph;

ck_status ck_graph_create(ck_device dev, ck_graph **out);
/* Waits for the graph's replays, then frees it (and its pool, once no other
 * graph and no array uses it). */
void ck_graph_free(ck_graph *g);

/* Capture the work this thread queues on g's device until capture_end.  s
 * is the stream to capture (NULL: a stream of the graph's own; a GPU's
 * default stream cannot be captured); it is the current stream meanwhile
 * and follows the work queued on the stream current before.  pool_of: NULL
 * for a private pool, or a graph whose pool this one shares (replay such
 * graphs in the order they were captured).  The device is synchronised
 * first.  CK_ERR_RUNTIME when this thread is capturing already, or g holds
 * a capture (reset it first). */
ck_status ck_graph_capture_begin(ck_graph *g, ck_stream s, ck_graph *pool_of);
/* End the capture and make the graph ready to replay; the stream current
 * before capture_begin is current again.  A capture that failed (the driver
 * invalidated it) leaves g empty with the driver's error. */
ck_status ck_graph_capture_end(ck_graph *g);
/* Run the captured work once, on the current stream (asynchronously on a
 * GPU; done when it returns on the CPU).  CK_ERR_RUNTIME when g holds no
 * capture. */
ck_status ck_graph_replay(ck_graph *g);
/* Drop the capture (after its replays), keeping g for a new one. */
ck_status ck_graph_reset(ck_graph *g);

ck_device ck_graph_device(const ck_graph *g);
/* Nodes of the captured graph (kernels, copies, fills); -1 before a capture. */
int64_t ck_graph_node_count(const ck_graph *g);
/* Bytes the graph's pool holds. */
size_t ck_graph_pool_bytes(const ck_graph *g);

/* 1 when this thread is capturing work for dev. */
int ck_graph_capturing(ck_device dev);
/* CK_OK, or CK_ERR_RUNTIME "<what> cannot be captured in a graph: ..." when
 * this thread is capturing work for dev: the check every operation that
 * waits for the device or reads its data on the host makes first. */
ck_status ck_graph_refuse(ck_device dev, const char *what);

#ifdef __cplusplus
}
#endif
#endif
