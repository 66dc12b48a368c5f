/* Loading cuFFT with dlopen, from our own declarations. */
#include "cufft_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CK_CUFFT_STUB_(name, req, params)                                                     \
    static cufftResult ck_stub_##name params                                                   \
    {                                                                                          \
        ck_error_set(CK_ERR_DEVICE, "the cuFFT library has no %s (it needs a newer cuFFT)", #name); \
        return CUFFT_NOT_FOUND_;                                                               \
    }
CK_CUFFT_SYMBOLS(CK_CUFFT_STUB_)
#pragma GCC diagnostic pop

ck_cufft_api ck_cufft = {
#define CK_CUFFT_INIT_(name, req, params) ck_stub_##name,
    CK_CUFFT_SYMBOLS(CK_CUFFT_INIT_)
#undef CK_CUFFT_INIT_
};

static ck_platform_once once_ = CK_PLATFORM_ONCE_INIT;

static int load(char *reason, size_t reason_len)
{
    static const char *const names[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so", NULL};
    void *h = ck_platform_open_library("cuFFT", names);
    if (!h) {
        snprintf(reason, reason_len, "%s", ck_error_message());
        return 1;
    }
    int missing = 0;
#define CK_CUFFT_LOAD_(name, req, params) \
    ck_platform_bind(h, #name, (void **)&ck_cufft.name, req, "cuFFT", &missing, reason, reason_len);
    CK_CUFFT_SYMBOLS(CK_CUFFT_LOAD_)
#undef CK_CUFFT_LOAD_
    return missing;
}

ck_status ck_cufft_load(void) { return ck_platform_load_once(&once_, load); }

int ck_cufft_missing(void (*report)(const char *name))
{
    if (ck_platform_load_state(&once_) != 1) return -1;
    int n = 0;
#define CK_CUFFT_MISSING_(name, req, params)                                        \
    if (ck_cufft.name == ck_stub_##name) {                                          \
        n++;                                                                        \
        if (report) report(#name);                                                  \
    }
    CK_CUFFT_SYMBOLS(CK_CUFFT_MISSING_)
#undef CK_CUFFT_MISSING_
    return n;
}

const char *ck_cufft_status_name(cufftResult r)
{
    static const char *const names[] = {
        "CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
        "CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED",
        "CUFFT_INVALID_SIZE", "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
        "CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR", "CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
        "CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED", "CUFFT_MISSING_DEPENDENCY", "CUFFT_NVRTC_FAILURE",
        "CUFFT_NVJITLINK_FAILURE", "CUFFT_NVSHMEM_FAILURE",
    };
    if (r >= 0 && r < (int)(sizeof names / sizeof names[0])) return names[r];
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "cufftResult %d", r);
    return buf;
}

ck_status ck_cufft_fail(cufftResult r, const char *call, const char *func, const char *file, int line)
{
    if (r == CUFFT_NOT_FOUND_ && ck_error_status() == CK_ERR_DEVICE) return CK_ERR_DEVICE;  /* a stub said why */
    const char *base = strrchr(file, '/');
    return ck_error_set(r == CUFFT_ALLOC_FAILED ? CK_ERR_DEVICE_MEMORY : CK_ERR_DEVICE, "%s failed: %s in %s at %s:%d",
                        call, ck_cufft_status_name(r), func, base ? base + 1 : file, line);
}
