/* Graphs on a GPU: the driver's stream capture.  Between begin and end the
 * work queued on the stream (kernels, copies from pinned memory, fills,
 * cuBLAS and cuFFT calls) becomes the nodes of a CUDA graph instead of
 * running; end instantiates it and uploads it to the device, so the first
 * replay costs no more than the others; a replay is one cuGraphLaunch.
 *
 * The capture is relaxed (CU_STREAM_CAPTURE_MODE_RELAXED): kernels are
 * compiled and loaded at first use, and the pool may cuMemAlloc, both of
 * which the stricter modes forbid during a capture; what truly cannot be
 * captured (a wait for the device, a copy to pageable memory) is refused by
 * graph.c's check before it reaches the driver, with a message naming it,
 * and the capture goes on. */
#include "cuda_internal.h"

#include <stdlib.h>

typedef struct cuda_graph {
    int d;
    CUgraph graph;
    CUgraphExec exec;
} cuda_graph;

ck_status ck_cuda_graph_begin(ck_device dev, ck_stream s, void **impl)
{
    ck_status st = ck_cuda_use(dev.index);
    if (st != CK_OK) return st;
    if (!s)
        return ck_error_set(CK_ERR_RUNTIME, "cuda:%d's default stream cannot be captured in a graph: capture on "
                            "a stream of your own (or none, and the graph makes one)", dev.index);
    cuda_graph *g = calloc(1, sizeof *g);
    if (!g) return ck_error_set(CK_ERR_MEMORY, "out of memory for a graph");
    g->d = dev.index;
    CUresult r = ck_cu.cuStreamBeginCapture_v2((CUstream)s, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS) {
        free(g);
        return ck_cu_fail(r, "cuStreamBeginCapture", __func__, __FILE__, __LINE__);
    }
    ck_cuda_fuse_begin(dev.index, (CUstream)s);
    *impl = g;
    return CK_OK;
}

void ck_cuda_graph_free(ck_device dev, void *impl)
{
    cuda_graph *g = impl;
    if (!g) return;
    if (ck_cuda_use(dev.index) == CK_OK) {
        /* the driver keeps an executable graph until its launches are done */
        if (g->exec) ck_cu.cuGraphExecDestroy(g->exec);
        if (g->graph) ck_cu.cuGraphDestroy(g->graph);
    }
    free(g);
}

ck_status ck_cuda_graph_end(ck_device dev, ck_stream s, void *impl)
{
    cuda_graph *g = impl;
    ck_status fused = ck_cuda_fuse_end(dev.index);   /* the held kernels launched, into the graph */
    ck_status st = ck_cuda_use(dev.index);
    CUresult r = st == CK_OK ? ck_cu.cuStreamEndCapture((CUstream)s, &g->graph) : CUDA_SUCCESS;
    if (st == CK_OK && r != CUDA_SUCCESS) {
        st = r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                 ? ck_error_set(CK_ERR_DEVICE, "cuStreamEndCapture: the capture was invalidated by an operation the "
                                "driver cannot capture (a synchronisation or a copy to pageable memory from another "
                                "library, or work from the legacy default stream); the graph is empty")
                 : ck_cu_fail(r, "cuStreamEndCapture", __func__, __FILE__, __LINE__);
    }
    if (st == CK_OK && fused != CK_OK) st = fused;   /* its message is still the error's */
    if (st == CK_OK && (r = ck_cu.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0)) != CUDA_SUCCESS)
        st = ck_cu_fail(r, "cuGraphInstantiateWithFlags", __func__, __FILE__, __LINE__);
    if (st == CK_OK && (r = ck_cu.cuGraphUpload(g->exec, (CUstream)s)) != CUDA_SUCCESS)
        st = ck_cu_fail(r, "cuGraphUpload", __func__, __FILE__, __LINE__);
    if (st != CK_OK) ck_cuda_graph_free(dev, g);
    return st;
}

ck_status ck_cuda_graph_launch(ck_device dev, void *impl, ck_stream s)
{
    cuda_graph *g = impl;
    ck_status st = ck_cuda_use(dev.index);
    if (st != CK_OK) return st;
    CK_CHECK_CU(ck_cu.cuGraphLaunch(g->exec, (CUstream)s));
    return CK_OK;
}

int64_t ck_cuda_graph_nodes(void *impl)
{
    cuda_graph *g = impl;
    size_t n = 0;
    if (ck_cuda_use(g->d) != CK_OK || ck_cu.cuGraphGetNodes(g->graph, NULL, &n) != CUDA_SUCCESS) {
        ck_error_clear();
        return -1;
    }
    return (int64_t)n;
}
