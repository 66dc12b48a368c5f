/* The GPU's communicator: NCCL, loaded at run time (src/platform/nccl_api.h).
 *
 * Every call runs with the communicator's device current and is queued on
 * the stream comm.c resolved (the device's current one by default); NCCL
 * checks nothing across ranks, so a mismatch shows as a hang or garbage
 * there, as with NCCL itself.  NVLink multicast stays off: the loader sets
 * NCCL_NVLS_ENABLE=0 unless it is set, and nothing here creates a
 * multicast object. */
#include "../comm.h"
#include "cuda_internal.h"
#include "../../platform/nccl_api.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_comm {
    ncclComm_t comm;
    void *scratch;        /* one int32 on the device, for barrier */
} nccl_comm;

static int nccl_type(ck_dtype dt)
{
    switch (dt) {
    case CK_INT8: return ncclInt8_;
    case CK_UINT8: return ncclUint8_;
    case CK_INT32: return ncclInt32_;
    case CK_UINT32: return ncclUint32_;
    case CK_INT64: return ncclInt64_;
    case CK_UINT64: return ncclUint64_;
    case CK_FLOAT16: return ncclFloat16_;
    case CK_FLOAT32: return ncclFloat32_;
    case CK_FLOAT64: return ncclFloat64_;
    default: return -1;    /* comm.c turned every other dtype into one of these */
    }
}

static ncclComm_t handle(ck_comm *c) { return ((nccl_comm *)c->impl)->comm; }

/* ck's stream of the call (NULL: the device's current one, whatever the
 * thread has made current, so that NCCL's kernels are ordered with ours) */
static CUstream stream_of(ck_comm *c, ck_stream s)
{
    ck_cuda_fuse_flush_pending();
    return s ? (CUstream)s : ck_cuda_current_stream(c->dev.index);
}

static ck_status use(ck_comm *c)
{
    if (!c->impl) return ck_error_set(CK_ERR_VALUE, "the communicator was destroyed");
    return ck_cuda_use(c->dev.index);
}

/* NCCL's group, started the first time an NCCL call is made inside ours
 * (the library may have been loaded after ck_comm_group_start) */
static _Thread_local int group_started_;

static ck_status join_group(void)
{
    if (!ck_comm_in_group() || group_started_) return CK_OK;
    CK_CHECK_NCCL(NULL, ck_nccl.ncclGroupStart());
    group_started_ = 1;
    return CK_OK;
}

static ck_status nccl_group_start(void)
{
    group_started_ = 0;
    if (!ck_nccl_loaded()) return CK_OK;
    CK_CHECK_NCCL(NULL, ck_nccl.ncclGroupStart());
    group_started_ = 1;
    return CK_OK;
}

static ck_status nccl_group_end(void)
{
    if (!group_started_) return CK_OK;
    group_started_ = 0;
    CK_CHECK_NCCL(NULL, ck_nccl.ncclGroupEnd());
    return CK_OK;
}

static ck_status nccl_unique_id(ck_comm_id *out)
{
    ck_status s = ck_nccl_load();
    if (s != CK_OK) return s;
    ncclUniqueId_ck id;
    CK_CHECK_NCCL(NULL, ck_nccl.ncclGetUniqueId(&id));
    _Static_assert(sizeof id == CK_COMM_ID_BYTES, "ncclUniqueId is 128 bytes");
    memcpy(out->bytes, id.internal, sizeof id);
    return CK_OK;
}

static ck_status finish_init(ck_comm *c, ncclComm_t comm)
{
    nccl_comm *n = calloc(1, sizeof *n);
    if (!n) {
        ck_nccl.ncclCommDestroy(comm);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for a communicator");
    }
    n->comm = comm;
    c->impl = n;
    return CK_OK;
}

static ck_status nccl_init_rank(ck_comm *c, const ck_comm_id *id)
{
    ck_status s = ck_nccl_load();
    if (s == CK_OK) s = ck_cuda_use(c->dev.index);
    if (s != CK_OK) return s;
    ncclUniqueId_ck nid;
    memcpy(nid.internal, id->bytes, sizeof nid);
    ncclComm_t comm = NULL;
    CK_CHECK_NCCL(NULL, ck_nccl.ncclCommInitRank(&comm, c->size, nid, c->rank));
    return finish_init(c, comm);
}

static ck_status nccl_init_all(ck_comm **cs, int n)
{
    ck_status s = ck_nccl_load();
    if (s != CK_OK) return s;
    int devs[CK_MAX_GPUS];
    ncclComm_t comms[CK_MAX_GPUS];
    if (n > CK_MAX_GPUS) return ck_error_set(CK_ERR_VALUE, "init_all takes at most %d GPUs", CK_MAX_GPUS);
    for (int i = 0; i < n; i++) {
        devs[i] = cs[i]->dev.index;
        if ((s = ck_cuda_use(devs[i])) != CK_OK) return s;   /* the primary contexts NCCL will use */
    }
    CK_CHECK_NCCL(NULL, ck_nccl.ncclCommInitAll(comms, n, devs));
    for (int i = 0; i < n; i++) {
        s = finish_init(cs[i], comms[i]);
        if (s != CK_OK) {
            for (int j = i + 1; j < n; j++) ck_nccl.ncclCommDestroy(comms[j]);
            for (int j = 0; j < i; j++) {
                ck_nccl.ncclCommDestroy(handle(cs[j]));
                free(cs[j]->impl);
                cs[j]->impl = NULL;
            }
            return s;
        }
    }
    return CK_OK;
}

static void free_impl(ck_comm *c)
{
    nccl_comm *n = c->impl;
    if (!n) return;
    if (n->scratch && ck_cuda_use(c->dev.index) == CK_OK) ck_backend_for(c->dev)->free(c->dev, n->scratch, 4);
    free(n);
    c->impl = NULL;
}

static ck_status nccl_destroy(ck_comm *c)
{
    if (!c->impl) return CK_OK;
    ck_status s = use(c);
    ncclComm_t comm = handle(c);
    ncclResult_ck r = NCCL_SUCCESS_;
    if (s == CK_OK) {
        if (ck_nccl.ncclCommFinalize) r = ck_nccl.ncclCommFinalize(comm);
        ncclResult_ck r2 = ck_nccl.ncclCommDestroy(comm);
        if (r == NCCL_SUCCESS_ || r == NCCL_NOT_FOUND_) r = r2;
    }
    free_impl(c);
    if (s != CK_OK) return s;
    if (r != NCCL_SUCCESS_) return ck_nccl_fail(r, NULL, "ncclCommDestroy", __func__, __FILE__, __LINE__);
    return CK_OK;
}

static ck_status nccl_abort(ck_comm *c)
{
    if (!c->impl) return CK_OK;
    ck_status s = use(c);
    ncclResult_ck r = s == CK_OK ? ck_nccl.ncclCommAbort(handle(c)) : NCCL_SUCCESS_;
    free_impl(c);
    if (s != CK_OK) return s;
    if (r != NCCL_SUCCESS_) return ck_nccl_fail(r, NULL, "ncclCommAbort", __func__, __FILE__, __LINE__);
    return CK_OK;
}

#define CK_NCCL_BEGIN_(c)                   \
    do {                                    \
        ck_status s0_ = use(c);             \
        if (s0_ == CK_OK) s0_ = join_group(); \
        if (s0_ != CK_OK) return s0_;       \
    } while (0)

static ck_status nccl_all_reduce(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                                 ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclAllReduce(send, recv, count, nccl_type(dt), (int)op, handle(c), stream_of(c, s)));
    return CK_OK;
}

static ck_status nccl_reduce(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                             int root, ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclReduce(send, recv, count, nccl_type(dt), (int)op, root, handle(c), stream_of(c, s)));
    return CK_OK;
}

/* the data movers move bytes, whatever the dtype */
static size_t bytes_of(size_t count, ck_dtype dt) { return count * (size_t)ck_dtype_get_info(dt)->itemsize; }

static ck_status nccl_broadcast(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root,
                                ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclBroadcast(send, recv, bytes_of(count, dt), ncclUint8_, root, handle(c),
                                                   stream_of(c, s)));
    return CK_OK;
}

static ck_status nccl_all_gather(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclAllGather(send, recv, bytes_of(count, dt), ncclUint8_, handle(c), stream_of(c, s)));
    return CK_OK;
}

static ck_status nccl_reduce_scatter(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt,
                                     ck_comm_op op, ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclReduceScatter(send, recv, count, nccl_type(dt), (int)op, handle(c),
                                                       stream_of(c, s)));
    return CK_OK;
}

static ck_status nccl_send(ck_comm *c, const void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclSend(buf, bytes_of(count, dt), ncclUint8_, peer, handle(c), stream_of(c, s)));
    return CK_OK;
}

static ck_status nccl_recv(ck_comm *c, void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    CK_NCCL_BEGIN_(c);
    CK_CHECK_NCCL(handle(c), ck_nccl.ncclRecv(buf, bytes_of(count, dt), ncclUint8_, peer, handle(c), stream_of(c, s)));
    return CK_OK;
}

/* An all_reduce of one int32 on the current stream, waited for (the wait
 * polls: Ctrl-C and the kernel time limit end it). */
static ck_status nccl_barrier(ck_comm *c)
{
    ck_status st = use(c);
    if (st != CK_OK) return st;
    nccl_comm *n = c->impl;
    if (!n->scratch) {
        n->scratch = ck_backend_for(c->dev)->alloc(c->dev, 4);
        if (!n->scratch) return ck_error_status();
        CK_CHECK_CU(ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)n->scratch, 0, 1, ck_cuda_current_stream(c->dev.index)));
    }
    CUstream s = ck_cuda_current_stream(c->dev.index);
    CK_CHECK_NCCL(n->comm, ck_nccl.ncclAllReduce(n->scratch, n->scratch, 1, ncclInt32_, ncclSum_, n->comm, s));
    st = ck_cuda_wait_stream(c->dev.index, s, "barrier (ncclAllReduce)");
    if (st != CK_OK) return st;
    ncclResult_ck async = NCCL_SUCCESS_;
    CK_CHECK_NCCL(n->comm, ck_nccl.ncclCommGetAsyncError(n->comm, &async));
    if (async != NCCL_SUCCESS_) return ck_nccl_fail(async, n->comm, "barrier", __func__, __FILE__, __LINE__);
    return CK_OK;
}

const ck_comm_iface ck_comm_nccl = {
    /* .name           = */ "nccl",
    /* .unique_id      = */ nccl_unique_id,
    /* .init_rank      = */ nccl_init_rank,
    /* .init_all       = */ nccl_init_all,
    /* .destroy        = */ nccl_destroy,
    /* .abort          = */ nccl_abort,
    /* .all_reduce     = */ nccl_all_reduce,
    /* .reduce         = */ nccl_reduce,
    /* .broadcast      = */ nccl_broadcast,
    /* .all_gather     = */ nccl_all_gather,
    /* .reduce_scatter = */ nccl_reduce_scatter,
    /* .send           = */ nccl_send,
    /* .recv           = */ nccl_recv,
    /* .barrier        = */ nccl_barrier,
    /* .group_start    = */ nccl_group_start,
    /* .group_end      = */ nccl_group_end,
};

ck_status ck_nccl_get_version(int *out)
{
    ck_status s = ck_nccl_load();
    *out = s == CK_OK ? ck_nccl_version() : 0;
    return s;
}
