/*
 * nccl_api.h - NCCL, declared by us and loaded at run time with dlopen
 * (libnccl.so.2 from $CUDA_PATH, /usr/local/cuda, the nvidia-nccl-cu13 and
 * nvidia-nccl-cu12 wheels' folders, then the loader path), so that cudakit
 * builds without NCCL and imports without it.
 *
 * One X-macro table: X(name, required?, (params)); a symbol the library
 * lacks points at a stub that fails with an error naming it.  The types are
 * nccl.h's, spelled so that a translation unit could include both.
 *
 *   if (ck_nccl_load() != CK_OK) ... ck_error_message() says what was looked for
 *   CK_CHECK_NCCL(ck_nccl.ncclAllReduce(a, b, n, ncclFloat32_, ncclSum_, comm, stream));
 */
#ifndef CK_PLATFORM_NCCL_API_H
#define CK_PLATFORM_NCCL_API_H

#include <stddef.h>
#include "cuda_api.h"

typedef int ncclResult_ck;               /* nccl.h's ncclResult_t (an enum) */
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId_ck;

#define NCCL_SUCCESS_ 0
#define NCCL_INVALID_ARGUMENT_ 4
#define NCCL_INVALID_USAGE_ 5
#define NCCL_IN_PROGRESS_ 7
#define NCCL_NOT_FOUND_ 0x7fff   /* our stubs' answer: the library lacks the symbol */

/* ncclRedOp_t */
enum { ncclSum_ = 0, ncclProd_ = 1, ncclMax_ = 2, ncclMin_ = 3, ncclAvg_ = 4 };
/* ncclDataType_t */
enum { ncclInt8_ = 0, ncclUint8_ = 1, ncclInt32_ = 2, ncclUint32_ = 3, ncclInt64_ = 4, ncclUint64_ = 5,
       ncclFloat16_ = 6, ncclFloat32_ = 7, ncclFloat64_ = 8, ncclBfloat16_ = 9 };

#define CK_NCCL_SYMBOLS(X)                                                                     \
    X(ncclGetVersion, 1, (int *version))                                                       \
    X(ncclGetUniqueId, 1, (ncclUniqueId_ck *id))                                               \
    X(ncclCommInitRank, 1, (ncclComm_t *comm, int nranks, ncclUniqueId_ck id, int rank))       \
    X(ncclCommInitAll, 1, (ncclComm_t *comms, int ndev, const int *devlist))                   \
    X(ncclCommFinalize, 0, (ncclComm_t comm))                                                  \
    X(ncclCommDestroy, 1, (ncclComm_t comm))                                                   \
    X(ncclCommAbort, 1, (ncclComm_t comm))                                                     \
    X(ncclCommGetAsyncError, 1, (ncclComm_t comm, ncclResult_ck *err))                         \
    X(ncclAllReduce, 1, (const void *send, void *recv, size_t count, int dtype, int op,        \
                         ncclComm_t comm, CUstream stream))                                    \
    X(ncclReduce, 1, (const void *send, void *recv, size_t count, int dtype, int op, int root, \
                      ncclComm_t comm, CUstream stream))                                       \
    X(ncclBroadcast, 1, (const void *send, void *recv, size_t count, int dtype, int root,      \
                         ncclComm_t comm, CUstream stream))                                    \
    X(ncclAllGather, 1, (const void *send, void *recv, size_t sendcount, int dtype,            \
                         ncclComm_t comm, CUstream stream))                                    \
    X(ncclReduceScatter, 1, (const void *send, void *recv, size_t recvcount, int dtype, int op, \
                             ncclComm_t comm, CUstream stream))                                \
    X(ncclSend, 1, (const void *buf, size_t count, int dtype, int peer, ncclComm_t comm, CUstream stream)) \
    X(ncclRecv, 1, (void *buf, size_t count, int dtype, int peer, ncclComm_t comm, CUstream stream)) \
    X(ncclGroupStart, 1, (void))                                                               \
    X(ncclGroupEnd, 1, (void))

typedef struct ck_nccl_api {
#define CK_NCCL_FIELD_(name, req, params) ncclResult_ck (*name) params;
    CK_NCCL_SYMBOLS(CK_NCCL_FIELD_)
#undef CK_NCCL_FIELD_
    const char *(*ncclGetErrorString)(ncclResult_ck r);
    const char *(*ncclGetLastError)(ncclComm_t comm);
} ck_nccl_api;

extern ck_nccl_api ck_nccl;

/* Load NCCL once (and set NCCL_NVLS_ENABLE=0 in the environment when it is
 * unset: NVLink multicast stays off).  CK_ERR_DEVICE naming the places
 * looked in when it is absent; later calls give the same answer. */
ck_status ck_nccl_load(void);
/* 1 once ck_nccl_load succeeded. */
int ck_nccl_loaded(void);
/* The loaded library's version code (22809 for 2.28.9), 0 when not loaded. */
int ck_nccl_version(void);
/* Record a failed NCCL call: "ncclAllReduce(...) failed: <NCCL's text> (<its last
 * error>) in func at file:line"; returns CK_ERR_DEVICE. */
ck_status ck_nccl_fail(ncclResult_ck r, ncclComm_t comm, const char *call, const char *func, const char *file,
                       int line);
#define CK_CHECK_NCCL(comm, call)                                                   \
    do {                                                                            \
        ncclResult_ck ck_r_ = (call);                                               \
        if (ck_r_ != NCCL_SUCCESS_) return ck_nccl_fail(ck_r_, comm, #call, __func__, __FILE__, __LINE__); \
    } while (0)

#endif
