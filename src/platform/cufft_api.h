/*
 * cufft_api.h - cuFFT, declared by us and loaded at run time with dlopen
 * (libcufft.so.12 from CUDA 13, .11 from CUDA 12 / the nvidia-cufft wheels),
 * so that cudakit builds without a CUDA toolkit.
 *
 * One X-macro table: X(name, required?, (params)).  A symbol the library
 * lacks points at a stub that fails with an error naming it.
 *
 *   if (ck_cufft_load() != CK_OK) ... ck_error_message() says why
 *   CK_CHECK_CUFFT(ck_cufft.cufftCreate(&plan));
 */
#ifndef CK_PLATFORM_CUFFT_API_H
#define CK_PLATFORM_CUFFT_API_H

#include <stddef.h>
#include "cuda_api.h"

typedef int cufftResult;
typedef int cufftHandle;
typedef int cufftType;

#define CUFFT_SUCCESS 0
#define CUFFT_ALLOC_FAILED 2
#define CUFFT_NOT_FOUND_ 0x7fff /* our stubs' answer: the library lacks the symbol */

#define CUFFT_R2C 0x2a
#define CUFFT_C2R 0x2c
#define CUFFT_C2C 0x29
#define CUFFT_D2Z 0x6a
#define CUFFT_Z2D 0x6c
#define CUFFT_Z2Z 0x69
#define CUFFT_FORWARD (-1)
#define CUFFT_INVERSE 1

#define CK_CUFFT_SYMBOLS(X)                                                                   \
    X(cufftGetVersion, 1, (int *version))                                                     \
    X(cufftCreate, 1, (cufftHandle *plan))                                                    \
    X(cufftDestroy, 1, (cufftHandle plan))                                                    \
    X(cufftSetAutoAllocation, 1, (cufftHandle plan, int auto_allocate))                       \
    X(cufftMakePlanMany64, 1, (cufftHandle plan, int rank, long long *n, long long *inembed,  \
                               long long istride, long long idist, long long *onembed,        \
                               long long ostride, long long odist, cufftType type,            \
                               long long batch, size_t *work_size))                           \
    X(cufftSetWorkArea, 1, (cufftHandle plan, void *work_area))                               \
    X(cufftSetStream, 1, (cufftHandle plan, CUstream stream))                                 \
    X(cufftExecC2C, 1, (cufftHandle plan, void *idata, void *odata, int direction))           \
    X(cufftExecR2C, 1, (cufftHandle plan, void *idata, void *odata))                          \
    X(cufftExecC2R, 1, (cufftHandle plan, void *idata, void *odata))                          \
    X(cufftExecZ2Z, 1, (cufftHandle plan, void *idata, void *odata, int direction))           \
    X(cufftExecD2Z, 1, (cufftHandle plan, void *idata, void *odata))                          \
    X(cufftExecZ2D, 1, (cufftHandle plan, void *idata, void *odata))

typedef struct ck_cufft_api {
#define CK_CUFFT_FIELD_(name, req, params) cufftResult (*name) params;
    CK_CUFFT_SYMBOLS(CK_CUFFT_FIELD_)
#undef CK_CUFFT_FIELD_
} ck_cufft_api;

extern ck_cufft_api ck_cufft;

/* Load cuFFT once (search order of ck_platform_open_library); CK_ERR_DEVICE
 * with the reason when it cannot be loaded or lacks a required symbol. */
ck_status ck_cufft_load(void);
/* Count of the table's symbols the loaded library lacks, each named through
 * report (may be NULL); -1 when the library is not loaded. */
int ck_cufft_missing(void (*report)(const char *name));
/* cuFFT's name for a status ("CUFFT_INVALID_SIZE"). */
const char *ck_cufft_status_name(cufftResult r);
/* Record a failed cuFFT call, naming it and the status; CK_ERR_DEVICE_MEMORY
 * for CUFFT_ALLOC_FAILED, CK_ERR_DEVICE otherwise. */
ck_status ck_cufft_fail(cufftResult r, const char *call, const char *func, const char *file, int line);
#define CK_CHECK_CUFFT(call)                                                                  \
    do {                                                                                      \
        cufftResult ck_r_ = (call);                                                           \
        if (ck_r_ != CUFFT_SUCCESS) return ck_cufft_fail(ck_r_, #call, __func__, __FILE__, __LINE__); \
    } while (0)

#endif
