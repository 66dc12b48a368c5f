/*
 * cusolver_api.h - cuSOLVER's dense API, declared by us and loaded at run
 * time with dlopen (libcusolver.so.12 from CUDA 13, .11 from CUDA 12 / the
 * nvidia-cusolver wheels), so that cudakit builds without a CUDA toolkit.
 *
 * One X-macro table: X(name, required?, (params)); the routines of the four
 * element types come from one per-type row, and ck_cusolver_routines(t)
 * gives them as one struct, so callers write the algorithm once.  Matrix
 * pointers are void * (the library's element types have the same ABI).
 *
 *   if (ck_cusolver_load() != CK_OK) ... ck_error_message() says why
 *   const ck_cusolver_typed *r = ck_cusolver_routines(CK_CUSOLVER_D);
 *   CK_CHECK_CUSOLVER(r->getrf(h, n, n, a, n, work, ipiv, info));
 */
#ifndef CK_PLATFORM_CUSOLVER_API_H
#define CK_PLATFORM_CUSOLVER_API_H

#include <stddef.h>
#include "cuda_api.h"

typedef int cusolverStatus_t;
typedef struct cusolverDnContext *cusolverDnHandle_t;
typedef struct syevjInfo *syevjInfo_t;
typedef struct cusolverDnParams *cusolverDnParams_t;

/* cudaDataType values the 64-bit API takes */
#define CK_CUDA_R_32F 0
#define CK_CUDA_R_64F 1
#define CK_CUDA_C_32F 4
#define CK_CUDA_C_64F 5

#define CUSOLVER_STATUS_SUCCESS 0
#define CUSOLVER_STATUS_ALLOC_FAILED 2
#define CUSOLVER_NOT_FOUND_ 0x7fff /* our stubs' answer: the library lacks the symbol */

#define CUBLAS_OP_N 0
#define CUBLAS_OP_T 1
#define CUBLAS_OP_C 2
#define CUBLAS_FILL_MODE_LOWER 0
#define CUBLAS_FILL_MODE_UPPER 1
#define CUSOLVER_EIG_MODE_NOVECTOR 0
#define CUSOLVER_EIG_MODE_VECTOR 1

/* The routines of one element type T (S, D, C, Z); QR, EV and EVJ name the
 * orthogonal-factor and symmetric-eigen routines (orgqr/syevd/syevjBatched
 * for real, ungqr/heevd/heevjBatched for complex). */
#define CK_CUSOLVER_TYPED_(X, T, QR, EV, EVJ)                                                 \
    X(cusolverDn##T##getrf_bufferSize, 1, (cusolverDnHandle_t h, int m, int n, void *a, int lda, int *lwork)) \
    X(cusolverDn##T##getrf, 1, (cusolverDnHandle_t h, int m, int n, void *a, int lda, void *work, \
                                int *ipiv, int *info))                                        \
    X(cusolverDn##T##getrs, 1, (cusolverDnHandle_t h, int trans, int n, int nrhs, const void *a, int lda, \
                                const int *ipiv, void *b, int ldb, int *info))                \
    X(cusolverDn##T##potrf_bufferSize, 1, (cusolverDnHandle_t h, int uplo, int n, void *a, int lda, int *lwork)) \
    X(cusolverDn##T##potrf, 1, (cusolverDnHandle_t h, int uplo, int n, void *a, int lda, void *work, \
                                int lwork, int *info))                                        \
    X(cusolverDn##T##geqrf_bufferSize, 1, (cusolverDnHandle_t h, int m, int n, void *a, int lda, int *lwork)) \
    X(cusolverDn##T##geqrf, 1, (cusolverDnHandle_t h, int m, int n, void *a, int lda, void *tau, \
                                void *work, int lwork, int *info))                            \
    X(cusolverDn##T##QR##_bufferSize, 1, (cusolverDnHandle_t h, int m, int n, int k, const void *a, int lda, \
                                          const void *tau, int *lwork))                        \
    X(cusolverDn##T##QR, 1, (cusolverDnHandle_t h, int m, int n, int k, void *a, int lda, const void *tau, \
                             void *work, int lwork, int *info))                               \
    X(cusolverDn##T##gesvd_bufferSize, 1, (cusolverDnHandle_t h, int m, int n, int *lwork))  \
    X(cusolverDn##T##gesvd, 1, (cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, \
                                void *a, int lda, void *s, void *u, int ldu, void *vt, int ldvt, \
                                void *work, int lwork, void *rwork, int *info))               \
    X(cusolverDn##T##EV##_bufferSize, 1, (cusolverDnHandle_t h, int jobz, int uplo, int n, const void *a, \
                                          int lda, const void *w, int *lwork))                 \
    X(cusolverDn##T##EV, 1, (cusolverDnHandle_t h, int jobz, int uplo, int n, void *a, int lda, void *w, \
                             void *work, int lwork, int *info))                               \
    X(cusolverDn##T##EVJ##_bufferSize, 1, (cusolverDnHandle_t h, int jobz, int uplo, int n, const void *a, \
                                           int lda, const void *w, int *lwork, syevjInfo_t params, int batch)) \
    X(cusolverDn##T##EVJ, 1, (cusolverDnHandle_t h, int jobz, int uplo, int n, void *a, int lda, void *w, \
                              void *work, int lwork, int *info, syevjInfo_t params, int batch))

#define CK_CUSOLVER_SYMBOLS(X)                                                                \
    X(cusolverDnCreate, 1, (cusolverDnHandle_t *h))                                           \
    X(cusolverDnDestroy, 1, (cusolverDnHandle_t h))                                           \
    X(cusolverDnSetStream, 1, (cusolverDnHandle_t h, CUstream stream))                        \
    X(cusolverDnCreateSyevjInfo, 1, (syevjInfo_t *info))                                      \
    X(cusolverDnDestroySyevjInfo, 1, (syevjInfo_t info))                                      \
    X(cusolverDnCreateParams, 1, (cusolverDnParams_t *params))                                \
    X(cusolverDnDestroyParams, 1, (cusolverDnParams_t params))                                \
    /* general eigenproblem: cuSOLVER 11.7 (CUDA 12.6) and later */                           \
    X(cusolverDnXgeev_bufferSize, 0, (cusolverDnHandle_t h, cusolverDnParams_t params, int jobvl, int jobvr, \
                                      int64_t n, int type_a, const void *a, int64_t lda, int type_w, \
                                      const void *w, int type_vl, const void *vl, int64_t ldvl,  \
                                      int type_vr, const void *vr, int64_t ldvr, int compute_type, \
                                      size_t *device_bytes, size_t *host_bytes))              \
    X(cusolverDnXgeev, 0, (cusolverDnHandle_t h, cusolverDnParams_t params, int jobvl, int jobvr, int64_t n, \
                           int type_a, void *a, int64_t lda, int type_w, void *w, int type_vl, void *vl, \
                           int64_t ldvl, int type_vr, void *vr, int64_t ldvr, int compute_type,      \
                           void *device_work, size_t device_bytes, void *host_work, size_t host_bytes, \
                           int *info))                                                        \
    CK_CUSOLVER_TYPED_(X, S, orgqr, syevd, syevjBatched)                                      \
    CK_CUSOLVER_TYPED_(X, D, orgqr, syevd, syevjBatched)                                      \
    CK_CUSOLVER_TYPED_(X, C, ungqr, heevd, heevjBatched)                                      \
    CK_CUSOLVER_TYPED_(X, Z, ungqr, heevd, heevjBatched)

typedef struct ck_cusolver_api {
#define CK_CUSOLVER_FIELD_(name, req, params) cusolverStatus_t (*name) params;
    CK_CUSOLVER_SYMBOLS(CK_CUSOLVER_FIELD_)
#undef CK_CUSOLVER_FIELD_
} ck_cusolver_api;

extern ck_cusolver_api ck_cusolver;

/* One element type's routines, named without the type letter. */
typedef enum { CK_CUSOLVER_S, CK_CUSOLVER_D, CK_CUSOLVER_C, CK_CUSOLVER_Z } ck_cusolver_type;
typedef struct ck_cusolver_typed {
#define CK_CUSOLVER_ROUTINE_(field, params) cusolverStatus_t (*field) params;
    CK_CUSOLVER_ROUTINE_(getrf_bufferSize, (cusolverDnHandle_t, int, int, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(getrf, (cusolverDnHandle_t, int, int, void *, int, void *, int *, int *))
    CK_CUSOLVER_ROUTINE_(getrs, (cusolverDnHandle_t, int, int, int, const void *, int, const int *, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(potrf_bufferSize, (cusolverDnHandle_t, int, int, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(potrf, (cusolverDnHandle_t, int, int, void *, int, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(geqrf_bufferSize, (cusolverDnHandle_t, int, int, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(geqrf, (cusolverDnHandle_t, int, int, void *, int, void *, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(orgqr_bufferSize, (cusolverDnHandle_t, int, int, int, const void *, int, const void *, int *))
    CK_CUSOLVER_ROUTINE_(orgqr, (cusolverDnHandle_t, int, int, int, void *, int, const void *, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(gesvd_bufferSize, (cusolverDnHandle_t, int, int, int *))
    CK_CUSOLVER_ROUTINE_(gesvd, (cusolverDnHandle_t, signed char, signed char, int, int, void *, int, void *, void *,
                                 int, void *, int, void *, int, void *, int *))
    CK_CUSOLVER_ROUTINE_(syevd_bufferSize, (cusolverDnHandle_t, int, int, int, const void *, int, const void *, int *))
    CK_CUSOLVER_ROUTINE_(syevd, (cusolverDnHandle_t, int, int, int, void *, int, void *, void *, int, int *))
    CK_CUSOLVER_ROUTINE_(syevjBatched_bufferSize, (cusolverDnHandle_t, int, int, int, const void *, int, const void *,
                                                   int *, syevjInfo_t, int))
    CK_CUSOLVER_ROUTINE_(syevjBatched, (cusolverDnHandle_t, int, int, int, void *, int, void *, void *, int, int *,
                                        syevjInfo_t, int))
#undef CK_CUSOLVER_ROUTINE_
} ck_cusolver_typed;
/* The routines of type t (valid after ck_cusolver_load succeeded). */
const ck_cusolver_typed *ck_cusolver_routines(ck_cusolver_type t);

/* Load cuSOLVER once (its cuBLAS/nvJitLink dependencies first, from the
 * same folders); CK_ERR_DEVICE with the reason when that fails. */
ck_status ck_cusolver_load(void);
/* Count of the table's required symbols the loaded library lacks, each
 * named through report (may be NULL); -1 when the library is not loaded.
 * Optional ones it lacks go to report_optional (may be NULL). */
int ck_cusolver_missing(void (*report)(const char *name), void (*report_optional)(const char *name));
/* Whether the loaded cuSOLVER has cusolverDnXgeev (general eigenproblems). */
int ck_cusolver_has_geev(void);
/* cuSOLVER's name for a status ("CUSOLVER_STATUS_INVALID_VALUE"). */
const char *ck_cusolver_status_name(cusolverStatus_t r);
ck_status ck_cusolver_fail(cusolverStatus_t r, const char *call, const char *func, const char *file, int line);
#define CK_CHECK_CUSOLVER(call)                                                               \
    do {                                                                                      \
        cusolverStatus_t ck_r_ = (call);                                                      \
        if (ck_r_ != CUSOLVER_STATUS_SUCCESS) return ck_cusolver_fail(ck_r_, #call, __func__, __FILE__, __LINE__); \
    } while (0)

#endif
