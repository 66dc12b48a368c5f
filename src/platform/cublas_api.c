/* Loading cuBLAS and cuBLASLt with dlopen, from our own declarations. */
#include "cublas_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CK_CUBLAS_STUB_(name, ver, req, params)                                                  \
    static cublasStatus_t ck_stub_##name params                                                   \
    {                                                                                             \
        ck_error_set(CK_ERR_DEVICE, "the cuBLAS library has no %s (it needs cuBLAS %d.%d or newer)", \
                     #name, (ver) / 10000, (ver) % 10000 / 100);                                  \
        return CUBLAS_STATUS_NOT_SUPPORTED;                                                       \
    }
CK_CUBLAS_SYMBOLS(CK_CUBLAS_STUB_)
CK_CUBLASLT_SYMBOLS(CK_CUBLAS_STUB_)
#undef CK_CUBLAS_STUB_
#pragma GCC diagnostic pop

ck_cublas_api ck_cublas = {
#define CK_CUBLAS_INIT_(name, ver, req, params) ck_stub_##name,
    CK_CUBLAS_SYMBOLS(CK_CUBLAS_INIT_)
    CK_CUBLASLT_SYMBOLS(CK_CUBLAS_INIT_)
#undef CK_CUBLAS_INIT_
};

static const char *(*status_name_)(cublasStatus_t);
static const char *(*status_string_)(cublasStatus_t);
static size_t (*lt_version_)(void);

static ck_platform_once once_ = CK_PLATFORM_ONCE_INIT;

static int load(char *reason, size_t reason_len)
{
    /* cuBLASLt first, from the same search path: libcublas needs it and
     * finds it beside itself, but a wheel layout may split them */
    static const char *const lt_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL};
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
    void *lt = ck_platform_open_library("cuBLASLt", lt_names);
    void *h = lt ? ck_platform_open_library("cuBLAS", names) : NULL;
    if (!h) {
        snprintf(reason, reason_len, "%s", ck_error_message());
        return 1;
    }
    int missing = 0;
#define CK_CUBLAS_LOAD_(name, ver, req, params) \
    ck_platform_bind(lib, #name, (void **)&ck_cublas.name, req, "the cuBLAS library", &missing, reason, reason_len);
    void *lib = h;
    CK_CUBLAS_SYMBOLS(CK_CUBLAS_LOAD_)
    lib = lt;
    CK_CUBLASLT_SYMBOLS(CK_CUBLAS_LOAD_)
#undef CK_CUBLAS_LOAD_
    *(void **)&status_name_ = dlsym(h, "cublasGetStatusName");
    *(void **)&status_string_ = dlsym(h, "cublasGetStatusString");
    *(void **)&lt_version_ = dlsym(lt, "cublasLtGetVersion");
    return missing;
}

ck_status ck_cublas_load(void) { return ck_platform_load_once(&once_, load); }

size_t ck_cublas_version(void) { return lt_version_ ? lt_version_() : 0; }

int ck_cublas_missing(void (*report)(const char *name, int required))
{
    if (ck_platform_load_state(&once_) == 0) return -1;
    int n = 0;
#define CK_CUBLAS_MISSING_(name, ver, req, params)                                                \
    if (ck_cublas.name == ck_stub_##name) {                                                       \
        n++;                                                                                      \
        if (report) report(#name, req);                                                           \
    }
    CK_CUBLAS_SYMBOLS(CK_CUBLAS_MISSING_)
    CK_CUBLASLT_SYMBOLS(CK_CUBLAS_MISSING_)
#undef CK_CUBLAS_MISSING_
    if (!status_name_ && report) report("cublasGetStatusName", 0);
    if (!lt_version_ && report) report("cublasLtGetVersion", 0);
    return n + !status_name_ + !lt_version_;
}

const char *ck_cublas_status_name(cublasStatus_t r)
{
    if (status_name_) {
        const char *s = status_name_(r);
        if (s) return s;
    }
    switch (r) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: {
        static _Thread_local char buf[40];
        snprintf(buf, sizeof buf, "cublasStatus_t %d", r);
        return buf;
    }
    }
}

ck_status ck_cublas_fail(cublasStatus_t r, const char *call, const char *func, const char *file, int line)
{
    /* a stub has said which symbol is missing */
    if (r == CUBLAS_STATUS_NOT_SUPPORTED && ck_error_status() == CK_ERR_DEVICE &&
        strstr(ck_error_message(), "the cuBLAS library has no"))
        return CK_ERR_DEVICE;
    const char *desc = status_string_ ? status_string_(r) : NULL;
    const char *base = strrchr(file, '/');
    return ck_error_set(r == CUBLAS_STATUS_ALLOC_FAILED ? CK_ERR_DEVICE_MEMORY : CK_ERR_DEVICE,
                        "%s failed: %s (%s) in %s at %s:%d", call, ck_cublas_status_name(r),
                        desc ? desc : "no description", func, base ? base + 1 : file, line);
}
