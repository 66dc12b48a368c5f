/*
 * comm.h - the communicators' door to a device: a table of functions each
 * implementation fills (the CPU's shared memory in cpu/cpu_comm.c, NCCL in
 * cuda/cuda_comm.c), beside the communicator's common part.
 *
 * comm.c owns the checks: an implementation receives a rank, root or peer
 * in range, a reduction's dtype among NCCL's (bool and complex turned into
 * uint8 and pairs of reals), the data movers' (broadcast, all_gather,
 * send, recv) dtype as the caller gave it (moved as bytes) and a stream of
 * the communicator's device; it only runs the operation.
 */
#ifndef CK_BACKEND_COMM_H
#define CK_BACKEND_COMM_H

#include "cudakit_comm.h"

struct ck_comm {
    const struct ck_comm_iface *iface;
    ck_device dev;
    int rank, size;
    void *impl;              /* the implementation's state */
};

typedef struct ck_comm_iface {
    const char *name;
    ck_status (*unique_id)(ck_comm_id *out);
    /* c's common part is filled; set c->impl */
    ck_status (*init_rank)(ck_comm *c, const ck_comm_id *id);
    /* (optional: CK_ERR_NOT_IMPLEMENTED) cs[i]'s common parts are filled */
    ck_status (*init_all)(ck_comm **cs, int n);
    ck_status (*destroy)(ck_comm *c);
    ck_status (*abort)(ck_comm *c);
    /* counts in elements of dt */
    ck_status (*all_reduce)(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                            ck_stream s);
    ck_status (*reduce)(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op, int root,
                        ck_stream s);
    ck_status (*broadcast)(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root, ck_stream s);
    ck_status (*all_gather)(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_stream s);
    ck_status (*reduce_scatter)(ck_comm *c, const void *send, void *recv, size_t recvcount, ck_dtype dt,
                                ck_comm_op op, ck_stream s);
    ck_status (*send)(ck_comm *c, const void *buf, size_t count, ck_dtype dt, int peer, ck_stream s);
    ck_status (*recv)(ck_comm *c, void *buf, size_t count, ck_dtype dt, int peer, ck_stream s);
    ck_status (*barrier)(ck_comm *c);
    /* this thread's group, nested (comm.c counts the depth: start at the
     * outermost start, end at the outermost end) */
    ck_status (*group_start)(void);
    ck_status (*group_end)(void);
} ck_comm_iface;

extern const ck_comm_iface ck_comm_shm;    /* cpu/cpu_comm.c */
extern const ck_comm_iface ck_comm_nccl;   /* cuda/cuda_comm.c */

/* The magic an id of the shared-memory implementation starts with. */
#define CK_COMM_SHM_MAGIC "cudakit\001"

/* Whether this thread is inside ck_comm_group_start/_end. */
int ck_comm_in_group(void);

#endif
