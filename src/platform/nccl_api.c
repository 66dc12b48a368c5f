/* Loading NCCL with dlopen, from our own declarations. */
#include "nccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CK_NCCL_STUB_(name, req, params)                                                      \
    static ncclResult_ck ck_stub_##name params                                                 \
    {                                                                                          \
        ck_error_set(CK_ERR_DEVICE, "the NCCL library has no %s (it needs a newer NCCL)", #name); \
        return NCCL_NOT_FOUND_;                                                                \
    }
CK_NCCL_SYMBOLS(CK_NCCL_STUB_)
#pragma GCC diagnostic pop

ck_nccl_api ck_nccl = {
#define CK_NCCL_INIT_(name, req, params) ck_stub_##name,
    CK_NCCL_SYMBOLS(CK_NCCL_INIT_)
#undef CK_NCCL_INIT_
    NULL, NULL,
};

static ck_platform_once once_ = CK_PLATFORM_ONCE_INIT;
static int version_;

static int load(char *reason, size_t reason_len)
{
    /* NVLink SHARP (multicast objects) stays off on every machine we run on */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    static const char *const names[] = {"libnccl.so.2", "libnccl.so", NULL};
    void *h = ck_platform_open_library("NCCL", names);
    if (!h) {
        const char *why = dlerror();
        snprintf(reason, reason_len, "could not load NCCL: looked for libnccl.so.2 in $CUDA_PATH/lib64, "
                 "/usr/local/cuda/lib64, the nvidia-nccl-cu13 and nvidia-nccl-cu12 wheels' folders "
                 "(site-packages/nvidia/nccl/lib) and the loader path (pip install nvidia-nccl-cu13)%s%s",
                 why ? ": " : "", why ? why : "");
        return 1;
    }
    int missing = 0;
#define CK_NCCL_LOAD_(name, req, params) \
    ck_platform_bind(h, #name, (void **)&ck_nccl.name, req, "NCCL", &missing, reason, reason_len);
    CK_NCCL_SYMBOLS(CK_NCCL_LOAD_)
#undef CK_NCCL_LOAD_
    *(void **)&ck_nccl.ncclGetErrorString = dlsym(h, "ncclGetErrorString");
    *(void **)&ck_nccl.ncclGetLastError = dlsym(h, "ncclGetLastError");
    if (!missing && ck_nccl.ncclGetVersion(&version_) != NCCL_SUCCESS_) version_ = 0;
    if (!missing && version_ < 21000) {
        snprintf(reason, reason_len, "NCCL %d is too old: cudakit needs NCCL 2.10 or newer (ncclAvg)", version_);
        return 1;
    }
    return missing;
}

ck_status ck_nccl_load(void) { return ck_platform_load_once(&once_, load); }

int ck_nccl_loaded(void) { return ck_platform_load_state(&once_) == 1; }

int ck_nccl_version(void) { return ck_nccl_loaded() ? version_ : 0; }

ck_status ck_nccl_fail(ncclResult_ck r, ncclComm_t comm, const char *call, const char *func, const char *file,
                       int line)
{
    if (r == NCCL_NOT_FOUND_ && ck_error_status() == CK_ERR_DEVICE) return CK_ERR_DEVICE;  /* a stub said why */
    const char *text = ck_nccl.ncclGetErrorString ? ck_nccl.ncclGetErrorString(r) : NULL;
    const char *last = ck_nccl.ncclGetLastError ? ck_nccl.ncclGetLastError(comm) : NULL;
    const char *base = strrchr(file, '/');
    char code[32];
    snprintf(code, sizeof code, "ncclResult_t %d", r);
    return ck_error_set(r == NCCL_INVALID_ARGUMENT_ || r == NCCL_INVALID_USAGE_ ? CK_ERR_VALUE : CK_ERR_DEVICE,
                        "%s failed: %s%s%s%s in %s at %s:%d", call, text ? text : code, last && *last ? " (" : "",
                        last && *last ? last : "", last && *last ? ")" : "", func, base ? base + 1 : file, line);
}
