/*
 * nvtx_api.h - NVTX (the NVIDIA Tools Extension) loaded with dlopen:
 * libnvToolsExt, which hands the calls to the tool attached (Nsight
 * Systems sets NVTX_INJECTION64_PATH) and does nothing without one.  Not
 * found, the calls do nothing too.  The public functions are
 * ck_nvtx_range_push / ck_nvtx_range_pop / ck_nvtx_mark (cudakit_profiler.h).
 */
#ifndef CK_PLATFORM_NVTX_API_H
#define CK_PLATFORM_NVTX_API_H

#include "cudakit_profiler.h"

#define CK_NVTX_SYMBOLS(X)                          \
    X(int, nvtxRangePushA, (const char *message))   \
    X(int, nvtxRangePop, (void))                    \
    X(void, nvtxMarkA, (const char *message))

/* Whether libnvToolsExt was found (loading it on the first call). */
int ck_nvtx_load(void);

#endif
