/*
 * cublas_api.h - cuBLAS and cuBLASLt, declared by us and loaded at run time
 * with dlopen (libcublas.so.13 or .12 from $CUDA_PATH, /usr/local/cuda, the
 * nvidia-cublas wheel's folder, then the loader path), so that cudakit
 * builds without a CUDA toolkit, as the driver and NVRTC do (cuda_api.h).
 *
 * The symbols are X-macro tables:
 *   X(name, minimum cuBLAS version (major*10000 + minor*100), required?, (params))
 * A symbol the library lacks points at a stub that fails with an error
 * naming it; a call never goes through NULL.
 *
 *   if (ck_cublas_load() != CK_OK) ... ck_error_message() says why
 *   CK_CHECK_CUBLAS(ck_cublas.cublasSetStream_v2(h, stream));
 */
#ifndef CK_PLATFORM_CUBLAS_API_H
#define CK_PLATFORM_CUBLAS_API_H

#include "cuda_api.h"

typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
typedef struct cublasLtContext *cublasLtHandle_t;

/* cublasStatus_t values we name */
#define CUBLAS_STATUS_SUCCESS 0
#define CUBLAS_STATUS_NOT_INITIALIZED 1
#define CUBLAS_STATUS_ALLOC_FAILED 3
#define CUBLAS_STATUS_INVALID_VALUE 7
#define CUBLAS_STATUS_ARCH_MISMATCH 8
#define CUBLAS_STATUS_MAPPING_ERROR 11
#define CUBLAS_STATUS_EXECUTION_FAILED 13
#define CUBLAS_STATUS_INTERNAL_ERROR 14
#define CUBLAS_STATUS_NOT_SUPPORTED 15
#define CUBLAS_STATUS_LICENSE_ERROR 16

/* cublasOperation_t */
#define CUBLAS_OP_N 0
#define CUBLAS_OP_T 1
#define CUBLAS_OP_C 2
/* cudaDataType */
#define CK_CUDA_R_16F 2
#define CK_CUDA_R_32F 0
#define CK_CUDA_R_64F 1
#define CK_CUDA_C_32F 4
#define CK_CUDA_C_64F 5
/* cublasComputeType_t */
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_COMPUTE_32F_FAST_TF32 77
#define CUBLAS_COMPUTE_64F 70
/* cublasGemmAlgo_t, cublasMath_t */
#define CUBLAS_GEMM_DEFAULT (-1)
#define CUBLAS_DEFAULT_MATH 0

#define CK_CUBLAS_SYMBOLS(X)                                                                    \
    X(cublasCreate_v2, 10000, 1, (cublasHandle_t *handle))                                      \
    X(cublasDestroy_v2, 10000, 1, (cublasHandle_t handle))                                      \
    X(cublasGetVersion_v2, 10000, 1, (cublasHandle_t handle, int *version))                     \
    X(cublasSetStream_v2, 10000, 1, (cublasHandle_t handle, CUstream stream))                   \
    X(cublasSetMathMode, 10000, 1, (cublasHandle_t handle, int mode))                           \
    X(cublasSetWorkspace_v2, 110000, 0, (cublasHandle_t handle, void *workspace, size_t bytes)) \
    X(cublasGemmEx, 110000, 1, (cublasHandle_t handle, int transa, int transb, int m, int n,    \
                                int k, const void *alpha, const void *A, int Atype, int lda,    \
                                const void *B, int Btype, int ldb, const void *beta, void *C,   \
                                int Ctype, int ldc, int computeType, int algo))                 \
    X(cublasGemmStridedBatchedEx, 110000, 1,                                                    \
      (cublasHandle_t handle, int transa, int transb, int m, int n, int k, const void *alpha,   \
       const void *A, int Atype, int lda, long long strideA, const void *B, int Btype, int ldb, \
       long long strideB, const void *beta, void *C, int Ctype, int ldc, long long strideC,     \
       int batchCount, int computeType, int algo))

/* cuBLASLt's descriptors: opaque pointers (the library allocates them),
 * and the two semi-opaque structs passed by value, sized as the library's
 * (cublasLt.h of CUDA 11 to 13: 8 words for an algorithm). */
typedef struct cublasLtMatmulDescOpaque *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;

/* cublasLtMatmulDescAttributes_t */
#define CUBLASLT_MATMUL_DESC_TRANSA 3
#define CUBLASLT_MATMUL_DESC_TRANSB 4
#define CUBLASLT_MATMUL_DESC_EPILOGUE 7
#define CUBLASLT_MATMUL_DESC_BIAS_POINTER 8
#define CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER 11
#define CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD 12
#define CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE 26
/* cublasLtEpilogue_t (uint32_t) */
#define CUBLASLT_EPILOGUE_DEFAULT 1u
#define CUBLASLT_EPILOGUE_RELU 2u
#define CUBLASLT_EPILOGUE_BIAS 4u
#define CUBLASLT_EPILOGUE_RELU_BIAS 6u
#define CUBLASLT_EPILOGUE_RELU_AUX_BIAS 134u
#define CUBLASLT_EPILOGUE_DRELU_BGRAD 152u
#define CUBLASLT_EPILOGUE_GELU 32u
#define CUBLASLT_EPILOGUE_GELU_BIAS 36u
#define CUBLASLT_EPILOGUE_BGRADA 256u
#define CUBLASLT_EPILOGUE_BGRADB 512u
/* cublasLtMatmulPreferenceAttributes_t */
#define CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1
#define CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES 5
#define CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES 6
#define CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES 7
#define CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES 8

/* cuBLASLt: loaded beside cuBLAS (which needs it anyway); its matmul with
 * epilogues (bias, relu, bias gradients) is the fused linear layer's
 * (src/backend/cuda/cuda_linear.c).  Attribute and enum arguments are the
 * library's 32-bit enums, passed as int. */
#define CK_CUBLASLT_SYMBOLS(X)                                                                  \
    X(cublasLtCreate, 110000, 1, (cublasLtHandle_t *handle))                                    \
    X(cublasLtDestroy, 110000, 1, (cublasLtHandle_t handle))                                    \
    X(cublasLtMatmulDescCreate, 110000, 1,                                                      \
      (cublasLtMatmulDesc_t *desc, int computeType, int scaleType))                             \
    X(cublasLtMatmulDescDestroy, 110000, 1, (cublasLtMatmulDesc_t desc))                        \
    X(cublasLtMatmulDescSetAttribute, 110000, 1,                                                \
      (cublasLtMatmulDesc_t desc, int attr, const void *buf, size_t size))                      \
    X(cublasLtMatrixLayoutCreate, 110000, 1,                                                    \
      (cublasLtMatrixLayout_t *layout, int type, uint64_t rows, uint64_t cols, int64_t ld))     \
    X(cublasLtMatrixLayoutDestroy, 110000, 1, (cublasLtMatrixLayout_t layout))                  \
    X(cublasLtMatmulPreferenceCreate, 110000, 1, (cublasLtMatmulPreference_t *pref))            \
    X(cublasLtMatmulPreferenceSetAttribute, 110000, 1,                                          \
      (cublasLtMatmulPreference_t pref, int attr, const void *buf, size_t size))                \
    X(cublasLtMatmulPreferenceDestroy, 110000, 1, (cublasLtMatmulPreference_t pref))            \
    X(cublasLtMatmulAlgoGetHeuristic, 110000, 1,                                                \
      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,            \
       cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,            \
       cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results, \
       int *returned))                                                                          \
    X(cublasLtMatmul, 110000, 1,                                                                \
      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,    \
       cublasLtMatrixLayout_t adesc, const void *B, cublasLtMatrixLayout_t bdesc,               \
       const void *beta, const void *C, cublasLtMatrixLayout_t cdesc, void *D,                  \
       cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,         \
       size_t workspace_bytes, CUstream stream))

typedef struct ck_cublas_api {
#define CK_CUBLAS_FIELD_(name, ver, req, params) cublasStatus_t (*name) params;
    CK_CUBLAS_SYMBOLS(CK_CUBLAS_FIELD_)
    CK_CUBLASLT_SYMBOLS(CK_CUBLAS_FIELD_)
#undef CK_CUBLAS_FIELD_
} ck_cublas_api;

extern ck_cublas_api ck_cublas;

/* Load cuBLAS and cuBLASLt once (no GPU needed: dlopen and dlsym only).
 * CK_ERR_DEVICE with the reason when not found or a required symbol is
 * missing; later calls return the same answer. */
ck_status ck_cublas_load(void);
/* The loaded libraries' versions (cublasLtGetVersion style: 130001), 0 before loading. */
size_t ck_cublas_version(void);
/* Call report(name) for every symbol of the tables the loaded libraries
 * lack (required or not); the count.  -1 when not loaded. */
int ck_cublas_missing(void (*report)(const char *name, int required));

/* Record a failed cuBLAS call: "cublasGemmEx(...) failed: CUBLAS_STATUS_NOT_SUPPORTED
 * (...) in func at file:line"; CK_ERR_DEVICE, or CK_ERR_DEVICE_MEMORY for
 * CUBLAS_STATUS_ALLOC_FAILED. */
ck_status ck_cublas_fail(cublasStatus_t r, const char *call, const char *func, const char *file, int line);
#define CK_CHECK_CUBLAS(call)                                                                    \
    do {                                                                                        \
        cublasStatus_t ck_br_ = (call);                                                         \
        if (ck_br_ != CUBLAS_STATUS_SUCCESS) return ck_cublas_fail(ck_br_, #call, __func__, __FILE__, __LINE__); \
    } while (0)
const char *ck_cublas_status_name(cublasStatus_t r);

#endif
