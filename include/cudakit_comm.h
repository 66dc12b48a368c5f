/*
 * cudakit_comm.h - collectives across ranks: the processes of one machine
 * (or the GPUs of one process), NCCL's operations on every device.
 *
 * A communicator joins n ranks that share a unique id.  On a GPU it is an
 * NCCL communicator (the library loaded at run time); on the CPU the ranks
 * are processes of one machine meeting in a POSIX shared-memory segment
 * named from the id, with the reductions done in C, so the same code and
 * its tests run without a GPU.  Collectives are called by every rank, in
 * the same order, with matching counts and dtypes: on the CPU a mismatch is
 * a CK_ERR_VALUE on every rank, and a rank that never comes is a
 * CK_ERR_TIMEOUT after ck_comm_timeout_get() seconds (NCCL cannot check
 * either: its calls are queued on a stream).
 *
 * Reductions take the dtypes NCCL has (int8, uint8, int32, uint32, int64,
 * uint64, float16, float32, float64), complex64 and complex128 for sum and
 * avg (as pairs of reals), bool for max and min; the data movers
 * (broadcast, all_gather, send, recv) take every dtype.
 *
 *     ck_comm_id id;                       rank 0 makes it, the others get a copy
 *     ck_comm_get_unique_id(CK_DEVICE_CPU, &id);
 *     ck_comm *c;
 *     ck_comm_init_rank(&c, ck_device_cpu(), 2, &id, rank);
 *     ck_comm_all_reduce(c, &x, &x, CK_COMM_SUM, NULL);   in place, every rank
 *     ck_comm_destroy(c);
 */
#ifndef CUDAKIT_COMM_H
#define CUDAKIT_COMM_H

#include "cudakit.h"
#include "cudakit_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CK_COMM_ID_BYTES 128   /* NCCL's ncclUniqueId */
/* The most ranks of a shared-memory communicator. */
#define CK_COMM_MAX_RANKS 64

typedef struct ck_comm_id {
    unsigned char bytes[CK_COMM_ID_BYTES];
} ck_comm_id;

typedef struct ck_comm ck_comm;

/* NCCL's ncclRedOp_t, in its order. */
typedef enum ck_comm_op { CK_COMM_SUM, CK_COMM_PROD, CK_COMM_MAX, CK_COMM_MIN, CK_COMM_AVG, CK_COMM_OP_COUNT } ck_comm_op;

/* A new id for a communicator of a device type: CK_DEVICE_CUDA an NCCL id
 * (ncclGetUniqueId: this process serves the others' rendezvous until they
 * have joined), CK_DEVICE_CPU a shared-memory one. */
ck_status ck_comm_get_unique_id(ck_device_type type, ck_comm_id *out);
/* The device type an id is for. */
ck_device_type ck_comm_id_type(const ck_comm_id *id);

/* Join as rank (0 <= rank < n_ranks) on dev (a GPU for an NCCL id, the CPU
 * for a shared-memory one); returns when all n_ranks have joined (the CPU:
 * or CK_ERR_TIMEOUT). */
ck_status ck_comm_init_rank(ck_comm **out, ck_device dev, int n_ranks, const ck_comm_id *id, int rank);
/* n communicators in this process, rank i on devs[i] (NCCL's
 * ncclCommInitAll; on the CPU, n ranks of a new shared-memory one).  Their
 * collectives are called between ck_comm_group_start and _end. */
ck_status ck_comm_init_all(ck_comm **out, int n, const ck_device *devs);
/* Free c (NCCL: after the work queued on it). */
ck_status ck_comm_destroy(ck_comm *c);
/* Free c at once, stopping its work (the other ranks' calls then fail). */
ck_status ck_comm_abort(ck_comm *c);
int ck_comm_rank(const ck_comm *c);
int ck_comm_size(const ck_comm *c);
ck_device ck_comm_device(const ck_comm *c);
/* "nccl" or "shm" */
const char *ck_comm_backend_name(const ck_comm *c);

/* Seconds a rank of a CPU communicator waits for the others before
 * CK_ERR_TIMEOUT (300 unless CUDAKIT_COMM_TIMEOUT says otherwise); > 0. */
ck_status ck_comm_timeout_set(double seconds);
double ck_comm_timeout_get(void);

/* Grouped calls (NCCL's ncclGroupStart/End, nested): the operations of
 * this thread between them are started together at the outermost end,
 * where their errors are reported; send and recv pairs inside one group
 * do not wait for each other's order. */
ck_status ck_comm_group_start(void);
ck_status ck_comm_group_end(void);

/* On arrays of c's device, queued on stream s (NULL: the current one).
 * send may be recv (in place).  recv's shape is checked:
 *   all_reduce, reduce, broadcast   the same size as send
 *   all_gather                      n_ranks times send's size
 *   reduce_scatter                  send's size / n_ranks
 * reduce's recv and broadcast's send matter at root only (NULL elsewhere);
 * every array is C-contiguous, of one dtype. */
ck_status ck_comm_all_reduce(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, ck_stream s);
ck_status ck_comm_reduce(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, int root, ck_stream s);
ck_status ck_comm_broadcast(ck_comm *c, const ck_array *send, ck_array *recv, int root, ck_stream s);
ck_status ck_comm_all_gather(ck_comm *c, const ck_array *send, ck_array *recv, ck_stream s);
ck_status ck_comm_reduce_scatter(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, ck_stream s);
ck_status ck_comm_send(ck_comm *c, const ck_array *a, int peer, ck_stream s);
ck_status ck_comm_recv(ck_comm *c, ck_array *a, int peer, ck_stream s);
/* Every rank has come here (on a GPU: and the work queued before is done). */
ck_status ck_comm_barrier(ck_comm *c);

/* The same on raw device pointers, count elements of dt (CuPy's
 * spelling: allReduce(sendbuf, recvbuf, count, datatype, op, stream)). */
ck_status ck_comm_all_reduce_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                                 ck_stream s);
ck_status ck_comm_reduce_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                             int root, ck_stream s);
ck_status ck_comm_broadcast_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root,
                                ck_stream s);
ck_status ck_comm_all_gather_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_stream s);
ck_status ck_comm_reduce_scatter_raw(ck_comm *c, const void *send, void *recv, size_t recvcount, ck_dtype dt,
                                     ck_comm_op op, ck_stream s);
ck_status ck_comm_send_raw(ck_comm *c, const void *buf, size_t count, ck_dtype dt, int peer, ck_stream s);
ck_status ck_comm_recv_raw(ck_comm *c, void *buf, size_t count, ck_dtype dt, int peer, ck_stream s);

/* The NCCL library's version (22809 for 2.28.9): loads it; CK_ERR_DEVICE
 * saying what was looked for when it is absent. */
ck_status ck_nccl_get_version(int *out);

#ifdef __cplusplus
}
#endif
#endif
