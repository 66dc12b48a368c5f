/*
 * cuda_api.h - the CUDA driver API and NVRTC, declared by us and loaded at
 * run time with dlopen, so that cudakit builds without a CUDA toolkit and
 * imports without a driver.
 *
 * Each library's symbols are one X-macro table:
 *   X(name, minimum driver version (CUDA_VERSION style), required?, (params))
 * A symbol the loaded library lacks points at a stub that fails with an
 * error naming it; a call never goes through NULL.
 *
 *   if (ck_cu_load() != CK_OK) ... no driver: ck_error_message() says why
 *   CK_CHECK_CU(ck_cu.cuCtxSynchronize());
 */
#ifndef CK_PLATFORM_CUDA_API_H
#define CK_PLATFORM_CUDA_API_H

#include <pthread.h>
#include <stddef.h>
#include "cudakit.h"

/* ------------------------------------------------------- driver types */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;

/* cuLaunchKernelEx's configuration (cuda.h's layout: the attribute's value
 * is a 64-byte union after an 8-byte id); the one attribute we set */
typedef struct CUlaunchAttribute {
    int id;
    char pad[4];
    union { char pad[64]; int programmatic_stream_serialization; void *align_; } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;
#define CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUDA_ERROR_ILLEGAL_ADDRESS 700
#define CUDA_ERROR_LAUNCH_FAILED 719
#define CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE 720
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901

/* cuDeviceGetAttribute attributes we read */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X 2
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y 3
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z 4
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y 6
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z 7
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK 8
#define CU_DEVICE_ATTRIBUTE_WARP_SIZE 10
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE 13
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE 36
#define CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH 37
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE 38
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR 39
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH 95
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
#define CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED 115

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_STREAM_CAPTURE_MODE_RELAXED 2
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_MEMHOSTALLOC_PORTABLE 0x1
#define CU_MEMPOOL_ATTR_RELEASE_THRESHOLD 4
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES 2
#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_FUNC_ATTRIBUTE_PTX_VERSION 5
#define CU_FUNC_ATTRIBUTE_BINARY_VERSION 6
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

#define CK_CU_SYMBOLS(X)                                                                     \
    X(cuInit, 2000, 1, (unsigned int flags))                                                 \
    X(cuDriverGetVersion, 2020, 1, (int *version))                                           \
    X(cuGetErrorName, 6000, 1, (CUresult error, const char **str))                           \
    X(cuGetErrorString, 6000, 1, (CUresult error, const char **str))                         \
    X(cuDeviceGetCount, 2000, 1, (int *count))                                               \
    X(cuDeviceGet, 2000, 1, (CUdevice *dev, int ordinal))                                    \
    X(cuDeviceGetName, 2000, 1, (char *name, int len, CUdevice dev))                         \
    X(cuDeviceGetAttribute, 2000, 1, (int *pi, int attrib, CUdevice dev))                    \
    X(cuDeviceTotalMem_v2, 3020, 1, (size_t *bytes, CUdevice dev))                           \
    X(cuDevicePrimaryCtxRetain, 7000, 1, (CUcontext *pctx, CUdevice dev))                    \
    X(cuDevicePrimaryCtxRelease_v2, 11000, 1, (CUdevice dev))                                \
    X(cuCtxSetCurrent, 4000, 1, (CUcontext ctx))                                             \
    X(cuCtxGetCurrent, 4000, 1, (CUcontext *pctx))                                           \
    X(cuCtxSynchronize, 2000, 1, (void))                                                     \
    X(cuCtxGetDevice, 2000, 1, (CUdevice *dev))                                              \
    X(cuMemGetInfo_v2, 3020, 1, (size_t *free_bytes, size_t *total))                         \
    X(cuMemAlloc_v2, 3020, 1, (CUdeviceptr *dptr, size_t bytesize))                          \
    X(cuMemFree_v2, 3020, 1, (CUdeviceptr dptr))                                             \
    X(cuMemAllocAsync, 11020, 0, (CUdeviceptr *dptr, size_t bytesize, CUstream stream))      \
    X(cuMemFreeAsync, 11020, 0, (CUdeviceptr dptr, CUstream stream))                         \
    X(cuDeviceGetDefaultMemPool, 11020, 0, (CUmemoryPool *pool, CUdevice dev))               \
    X(cuMemPoolSetAttribute, 11020, 0, (CUmemoryPool pool, int attr, void *value))           \
    X(cuMemPoolTrimTo, 11020, 0, (CUmemoryPool pool, size_t min_bytes_to_keep))              \
    X(cuMemHostAlloc, 2020, 1, (void **pp, size_t bytesize, unsigned int flags))             \
    X(cuMemFreeHost, 2000, 1, (void *p))                                                     \
    X(cuMemcpyHtoD_v2, 3020, 1, (CUdeviceptr dst, const void *src, size_t n))                \
    X(cuMemcpyDtoH_v2, 3020, 1, (void *dst, CUdeviceptr src, size_t n))                      \
    X(cuMemcpyDtoD_v2, 3020, 1, (CUdeviceptr dst, CUdeviceptr src, size_t n))                \
    X(cuMemcpyHtoDAsync_v2, 3020, 1, (CUdeviceptr dst, const void *src, size_t n, CUstream s)) \
    X(cuMemcpyDtoHAsync_v2, 3020, 1, (void *dst, CUdeviceptr src, size_t n, CUstream s))     \
    X(cuMemcpyDtoDAsync_v2, 3020, 1, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)) \
    X(cuMemcpyPeerAsync, 4000, 1, (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,         \
                                   CUcontext sctx, size_t n, CUstream s))                    \
    X(cuDeviceCanAccessPeer, 4000, 0, (int *can, CUdevice dev, CUdevice peer))                \
    X(cuCtxEnablePeerAccess, 4000, 0, (CUcontext peer, unsigned int flags))                   \
    X(cuMemsetD8Async, 3020, 1, (CUdeviceptr dst, unsigned char v, size_t n, CUstream s))    \
    X(cuMemsetD32Async, 3020, 1, (CUdeviceptr dst, unsigned int v, size_t n, CUstream s))    \
    X(cuStreamCreate, 2000, 1, (CUstream *ph, unsigned int flags))                           \
    X(cuStreamCreateWithPriority, 5050, 1, (CUstream *ph, unsigned int flags, int priority))  \
    X(cuCtxGetStreamPriorityRange, 5050, 1, (int *least, int *greatest))                     \
    X(cuStreamDestroy_v2, 4000, 1, (CUstream s))                                             \
    X(cuStreamSynchronize, 2000, 1, (CUstream s))                                            \
    X(cuStreamQuery, 2000, 1, (CUstream s))                                                  \
    X(cuStreamWaitEvent, 3020, 1, (CUstream s, CUevent e, unsigned int flags))               \
    X(cuEventCreate, 2000, 1, (CUevent *ph, unsigned int flags))                             \
    X(cuEventDestroy_v2, 4000, 1, (CUevent e))                                               \
    X(cuEventRecord, 2000, 1, (CUevent e, CUstream s))                                       \
    X(cuEventSynchronize, 2000, 1, (CUevent e))                                              \
    X(cuEventQuery, 2000, 1, (CUevent e))                                                    \
    X(cuEventElapsedTime, 2000, 1, (float *ms, CUevent start, CUevent end))                  \
    X(cuModuleLoadData, 2000, 1, (CUmodule *m, const void *image))                           \
    X(cuModuleUnload, 2000, 1, (CUmodule m))                                                 \
    X(cuModuleGetFunction, 2000, 1, (CUfunction *f, CUmodule m, const char *name))           \
    X(cuModuleGetGlobal_v2, 3020, 1, (CUdeviceptr *dptr, size_t *bytes, CUmodule m,          \
                                      const char *name))                                     \
    X(cuStreamBeginCapture_v2, 10010, 0, (CUstream s, int mode))                              \
    X(cuStreamEndCapture, 10000, 0, (CUstream s, CUgraph *graph))                            \
    X(cuGraphInstantiateWithFlags, 11040, 0, (CUgraphExec *exec, CUgraph graph,              \
                                              unsigned long long flags))                     \
    X(cuGraphUpload, 11010, 0, (CUgraphExec exec, CUstream s))                               \
    X(cuGraphLaunch, 10000, 0, (CUgraphExec exec, CUstream s))                               \
    X(cuGraphExecDestroy, 10000, 0, (CUgraphExec exec))                                      \
    X(cuGraphDestroy, 10000, 0, (CUgraph graph))                                             \
    X(cuGraphGetNodes, 10000, 0, (CUgraph graph, CUgraphNode *nodes, size_t *count))          \
    X(cuFuncGetAttribute, 2020, 1, (int *pi, int attrib, CUfunction f))                      \
    X(cuFuncSetAttribute, 9000, 1, (CUfunction f, int attrib, int value))                    \
    X(cuFuncGetParamInfo, 12040, 0, (CUfunction f, size_t index, size_t *offset, size_t *size)) \
    X(cuLaunchKernel, 4000, 1, (CUfunction f, unsigned gx, unsigned gy, unsigned gz,         \
                                unsigned bx, unsigned by, unsigned bz, unsigned shmem,       \
                                CUstream s, void **params, void **extra))                    \
    X(cuLaunchKernelEx, 11080, 0, (const CUlaunchConfig *config, CUfunction f, void **params, void **extra)) \
    X(cuOccupancyMaxPotentialBlockSize, 6050, 0, (int *min_grid, int *block, CUfunction f,   \
                                                  size_t (*smem_of_block)(int), size_t smem, \
                                                  int limit))                                \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, 0, (int *nblocks, CUfunction f,      \
                                                             int block, size_t smem))        \
    X(cuLaunchCooperativeKernel, 9000, 0, (CUfunction f, unsigned gx, unsigned gy,            \
                                           unsigned gz, unsigned bx, unsigned by,            \
                                           unsigned bz, unsigned shmem, CUstream s,          \
                                           void **params))

/* ------------------------------------------------------------- NVRTC */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

#define CK_NVRTC_SYMBOLS(X)                                                                  \
    X(nvrtcVersion, 0, 1, (int *major, int *minor))                                          \
    X(nvrtcCreateProgram, 0, 1, (nvrtcProgram *prog, const char *src, const char *name,      \
                                 int nheaders, const char *const *headers,                   \
                                 const char *const *include_names))                          \
    X(nvrtcDestroyProgram, 0, 1, (nvrtcProgram *prog))                                       \
    X(nvrtcCompileProgram, 0, 1, (nvrtcProgram prog, int nopt, const char *const *opts))     \
    X(nvrtcGetProgramLogSize, 0, 1, (nvrtcProgram prog, size_t *size))                       \
    X(nvrtcGetProgramLog, 0, 1, (nvrtcProgram prog, char *log))                              \
    X(nvrtcGetPTXSize, 0, 1, (nvrtcProgram prog, size_t *size))                              \
    X(nvrtcGetPTX, 0, 1, (nvrtcProgram prog, char *ptx))                                     \
    X(nvrtcGetCUBINSize, 0, 0, (nvrtcProgram prog, size_t *size))                            \
    X(nvrtcGetCUBIN, 0, 0, (nvrtcProgram prog, char *cubin))                                 \
    X(nvrtcAddNameExpression, 0, 0, (nvrtcProgram prog, const char *expr))                   \
    X(nvrtcGetLoweredName, 0, 0, (nvrtcProgram prog, const char *expr, const char **lowered))

/* The tables of function pointers. */
typedef struct ck_cu_api {
#define CK_CU_FIELD_(name, ver, req, params) CUresult (*name) params;
    CK_CU_SYMBOLS(CK_CU_FIELD_)
#undef CK_CU_FIELD_
} ck_cu_api;

typedef struct ck_nvrtc_api {
#define CK_NVRTC_FIELD_(name, ver, req, params) nvrtcResult (*name) params;
    CK_NVRTC_SYMBOLS(CK_NVRTC_FIELD_)
#undef CK_NVRTC_FIELD_
} ck_nvrtc_api;

extern ck_cu_api ck_cu;
extern ck_nvrtc_api ck_nvrtc;
/* NVRTC's text for a status ("NVRTC_ERROR_COMPILATION"). */
const char *ck_nvrtc_error_string(nvrtcResult r);

/* Load libcuda.so.1 and cuInit(0) once.  CK_ERR_DEVICE with the reason when
 * there is no usable driver or GPU; later calls return the same answer. */
ck_status ck_cu_load(void);
/* Load NVRTC (CUDA_PATH, /usr/local/cuda, added folders, the loader path). */
ck_status ck_nvrtc_load(void);
/* A folder to search for NVRTC and the CUDA libraries before the loader
 * path (the Python layer adds the nvidia-* wheels' lib folders). */
void ck_platform_add_search_dir(const char *dir);
/* dlopen a CUDA library by base name ("nvrtc", "cublas") with the search
 * order above; NULL and an error set when not found. */
void *ck_platform_open_library(const char *base, const char *const *sonames);
/* Point *slot at lib's symbol name (a slot left on its stub when lib
 * lacks it).  A required symbol that is missing sets *missing and, for the
 * first one, writes "<what> lacks the required symbol <name>" to reason.
 * Each library's X-macro table calls this once per symbol. */
void ck_platform_bind(void *lib, const char *name, void **slot, int required, const char *what, int *missing,
                      char *reason, size_t reason_len);

/* A library loaded once, by whichever thread asks first: load() runs under
 * the lock, returns nonzero on failure and says why in reason; later calls
 * give the same answer (the error again, from reason), without the lock
 * once it succeeded. */
typedef struct ck_platform_once {
    pthread_mutex_t mu;
    int state;                 /* 0 not tried, 1 loaded, -1 failed; read atomically */
    char reason[512];
} ck_platform_once;
#define CK_PLATFORM_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, 0, {0}}
ck_status ck_platform_load_once(ck_platform_once *o, int (*load)(char *reason, size_t reason_len));
/* The state above (0, 1 or -1). */
int ck_platform_load_state(ck_platform_once *o);

/* Record a failed driver call: "cuMemAlloc_v2(...) failed: CUDA_ERROR_OUT_OF_MEMORY
 * (out of memory) in func at file:line"; returns CK_ERR_DEVICE (or
 * CK_ERR_MEMORY for out of memory). */
ck_status ck_cu_fail(CUresult r, const char *call, const char *func, const char *file, int line);
#define CK_CHECK_CU(call)                                                          \
    do {                                                                           \
        CUresult ck_r_ = (call);                                                   \
        if (ck_r_ != CUDA_SUCCESS) return ck_cu_fail(ck_r_, #call, __func__, __FILE__, __LINE__); \
    } while (0)
/* ---------------------------------------------------------- launches
 * Every cuLaunchKernel goes through our hook (ck_cu.cuLaunchKernel is it,
 * once the driver is loaded): it remembers the last launches of each
 * stream, so that a sticky fault the driver reports later, at a
 * synchronisation, can say which kernels were in flight; and it tells the
 * observer (the profiler), when there is one, before and after.  The names
 * come from cuModuleGetFunction's (hooked too) or ck_cu_note_function's. */
typedef struct ck_cu_launch {
    CUfunction f;
    unsigned grid[3], block[3];
    unsigned shmem;
    CUstream stream;
} ck_cu_launch;
typedef struct ck_cu_launch_observer {
    void *(*before)(const ck_cu_launch *l);                   /* returns a token for after */
    void (*after)(void *token, const ck_cu_launch *l, CUresult r);
} ck_cu_launch_observer;
void ck_cu_set_launch_observer(const ck_cu_launch_observer *o);   /* NULL: none */
int ck_cu_launch_observed(void);   /* whether there is one now */
/* Whether the loaded driver has the symbol (an optional one of the table). */
int ck_cu_has_symbol(const char *name);
/* Put the hooks in place of the driver's entries of ck_cu (ck_cu_load
 * does, once; the C tests call it over their own fakes). */
void ck_cu_install_launch_hooks(void);
/* f's name from now on (a user kernel's, as the user spelled it). */
void ck_cu_note_function(CUfunction f, const char *name);
/* f's name, NULL when unknown; valid for the process. */
const char *ck_cu_function_name(CUfunction f);
/* Remember a launch (the hook does). */
void ck_cu_note_launch(CUfunction f, CUstream s, const unsigned grid[3], const unsigned block[3]);
/* "; the last kernels launched: on stream ...: 'k' grid (..) block (..), before it ..."
 * into buf (empty when none was). */
void ck_cu_describe_launches(char *buf, size_t n);
/* 1 for the errors after which the context can no longer be used. */
int ck_cu_error_is_sticky(CUresult r);
/* The driver's name for a status ("CUDA_ERROR_ILLEGAL_ADDRESS"). */
const char *ck_cu_error_name(CUresult r);
/* The last CUresult recorded by ck_cu_fail on this thread. */
CUresult ck_cu_last_result(void);

#endif
