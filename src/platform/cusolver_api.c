/* Loading cuSOLVER with dlopen, from our own declarations. */
#include "cusolver_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CK_CUSOLVER_STUB_(name, req, params)                                                  \
    static cusolverStatus_t ck_stub_##name params                                              \
    {                                                                                          \
        ck_error_set(CK_ERR_DEVICE, "the cuSOLVER library has no %s (it needs a newer cuSOLVER)", #name); \
        return CUSOLVER_NOT_FOUND_;                                                            \
    }
CK_CUSOLVER_SYMBOLS(CK_CUSOLVER_STUB_)
#pragma GCC diagnostic pop

ck_cusolver_api ck_cusolver = {
#define CK_CUSOLVER_INIT_(name, req, params) ck_stub_##name,
    CK_CUSOLVER_SYMBOLS(CK_CUSOLVER_INIT_)
#undef CK_CUSOLVER_INIT_
};

static ck_platform_once once_ = CK_PLATFORM_ONCE_INIT;
static ck_cusolver_typed typed_[4];

#define CK_CUSOLVER_FILL_(dst, T, QR, EV, EVJ)                                                \
    do {                                                                                      \
        dst.getrf_bufferSize = ck_cusolver.cusolverDn##T##getrf_bufferSize;                   \
        dst.getrf = ck_cusolver.cusolverDn##T##getrf;                                         \
        dst.getrs = ck_cusolver.cusolverDn##T##getrs;                                         \
        dst.potrf_bufferSize = ck_cusolver.cusolverDn##T##potrf_bufferSize;                   \
        dst.potrf = ck_cusolver.cusolverDn##T##potrf;                                         \
        dst.geqrf_bufferSize = ck_cusolver.cusolverDn##T##geqrf_bufferSize;                   \
        dst.geqrf = ck_cusolver.cusolverDn##T##geqrf;                                         \
        dst.orgqr_bufferSize = ck_cusolver.cusolverDn##T##QR##_bufferSize;                    \
        dst.orgqr = ck_cusolver.cusolverDn##T##QR;                                            \
        dst.gesvd_bufferSize = ck_cusolver.cusolverDn##T##gesvd_bufferSize;                   \
        dst.gesvd = ck_cusolver.cusolverDn##T##gesvd;                                         \
        dst.syevd_bufferSize = ck_cusolver.cusolverDn##T##EV##_bufferSize;                    \
        dst.syevd = ck_cusolver.cusolverDn##T##EV;                                            \
        dst.syevjBatched_bufferSize = ck_cusolver.cusolverDn##T##EVJ##_bufferSize;            \
        dst.syevjBatched = ck_cusolver.cusolverDn##T##EVJ;                                    \
    } while (0)

const ck_cusolver_typed *ck_cusolver_routines(ck_cusolver_type t) { return &typed_[t]; }

static int load(char *reason, size_t reason_len)
{
    /* cuSOLVER's own dependencies, from the same folders: the loader then
     * finds them by soname when cuSOLVER asks (wheels keep each library in
     * its own folder, out of reach of cuSOLVER's $ORIGIN). */
    static const char *const jit[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", NULL};
    static const char *const lt[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", NULL};
    static const char *const blas[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", NULL};
    static const char *const sparse[] = {"libcusparse.so.12", "libcusparse.so.11", NULL};
    ck_platform_open_library("nvJitLink", jit);
    ck_platform_open_library("cuBLASLt", lt);
    ck_platform_open_library("cuBLAS", blas);
    ck_platform_open_library("cuSPARSE", sparse);
    static const char *const names[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so", NULL};
    void *h = ck_platform_open_library("cuSOLVER", names);
    if (!h) {
        const char *why = dlerror();
        snprintf(reason, reason_len, "%s%s%s", ck_error_message(), why ? ": " : "", why ? why : "");
        return 1;
    }
    int missing = 0;
#define CK_CUSOLVER_LOAD_(name, req, params) \
    ck_platform_bind(h, #name, (void **)&ck_cusolver.name, req, "cuSOLVER", &missing, reason, reason_len);
    CK_CUSOLVER_SYMBOLS(CK_CUSOLVER_LOAD_)
#undef CK_CUSOLVER_LOAD_
    CK_CUSOLVER_FILL_(typed_[CK_CUSOLVER_S], S, orgqr, syevd, syevjBatched);
    CK_CUSOLVER_FILL_(typed_[CK_CUSOLVER_D], D, orgqr, syevd, syevjBatched);
    CK_CUSOLVER_FILL_(typed_[CK_CUSOLVER_C], C, ungqr, heevd, heevjBatched);
    CK_CUSOLVER_FILL_(typed_[CK_CUSOLVER_Z], Z, ungqr, heevd, heevjBatched);
    return missing;
}

ck_status ck_cusolver_load(void) { return ck_platform_load_once(&once_, load); }

int ck_cusolver_missing(void (*report)(const char *name), void (*report_optional)(const char *name))
{
    if (ck_platform_load_state(&once_) != 1) return -1;
    int n = 0;
#define CK_CUSOLVER_MISSING_(name, req, params)                                     \
    if (ck_cusolver.name == ck_stub_##name) {                                       \
        if (req) {                                                                  \
            n++;                                                                    \
            if (report) report(#name);                                              \
        } else if (report_optional) {                                               \
            report_optional(#name);                                                 \
        }                                                                           \
    }
    CK_CUSOLVER_SYMBOLS(CK_CUSOLVER_MISSING_)
#undef CK_CUSOLVER_MISSING_
    return n;
}

int ck_cusolver_has_geev(void)
{
    return ck_platform_load_state(&once_) == 1 && ck_cusolver.cusolverDnXgeev != ck_stub_cusolverDnXgeev &&
           ck_cusolver.cusolverDnXgeev_bufferSize != ck_stub_cusolverDnXgeev_bufferSize;
}

const char *ck_cusolver_status_name(cusolverStatus_t r)
{
    static const char *const names[] = {
        "CUSOLVER_STATUS_SUCCESS", "CUSOLVER_STATUS_NOT_INITIALIZED", "CUSOLVER_STATUS_ALLOC_FAILED",
        "CUSOLVER_STATUS_INVALID_VALUE", "CUSOLVER_STATUS_ARCH_MISMATCH", "CUSOLVER_STATUS_MAPPING_ERROR",
        "CUSOLVER_STATUS_EXECUTION_FAILED", "CUSOLVER_STATUS_INTERNAL_ERROR",
        "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "CUSOLVER_STATUS_NOT_SUPPORTED",
        "CUSOLVER_STATUS_ZERO_PIVOT", "CUSOLVER_STATUS_INVALID_LICENSE",
    };
    if (r >= 0 && r < (int)(sizeof names / sizeof names[0])) return names[r];
    static _Thread_local char buf[40];
    snprintf(buf, sizeof buf, "cusolverStatus_t %d", r);
    return buf;
}

ck_status ck_cusolver_fail(cusolverStatus_t r, const char *call, const char *func, const char *file, int line)
{
    if (r == CUSOLVER_NOT_FOUND_ && ck_error_status() == CK_ERR_DEVICE) return CK_ERR_DEVICE;  /* a stub said why */
    const char *base = strrchr(file, '/');
    return ck_error_set(r == CUSOLVER_STATUS_ALLOC_FAILED ? CK_ERR_DEVICE_MEMORY : CK_ERR_DEVICE,
                        "%s failed: %s in %s at %s:%d", call, ck_cusolver_status_name(r), func,
                        base ? base + 1 : file, line);
}
