/* NVTX from libnvToolsExt, loaded on first use (nvtx_api.h). */
#include "nvtx_api.h"
#include "cuda_api.h"

#include <stddef.h>

typedef struct ck_nvtx_api {
#define CK_NVTX_FIELD_(ret, name, params) ret (*name) params;
    CK_NVTX_SYMBOLS(CK_NVTX_FIELD_)
#undef CK_NVTX_FIELD_
} ck_nvtx_api;

static ck_nvtx_api nvtx_;
static ck_platform_once once_ = CK_PLATFORM_ONCE_INIT;

static int load(char *reason, size_t reason_len)
{
    static const char *const names[] = {"libnvToolsExt.so.1", "libnvToolsExt.so", NULL};
    void *h = ck_platform_open_library("nvToolsExt", names);
    if (!h) {
        ck_error_clear();   /* no NVTX is not an error: the ranges do nothing */
        return 1;
    }
    int missing = 0;
    ck_nvtx_api api = {0};
#define CK_NVTX_LOAD_(ret, name, params) \
    ck_platform_bind(h, #name, (void **)&api.name, 1, "libnvToolsExt", &missing, reason, reason_len);
    CK_NVTX_SYMBOLS(CK_NVTX_LOAD_)
#undef CK_NVTX_LOAD_
    if (missing) return 1;
    nvtx_ = api;
    return 0;
}

int ck_nvtx_load(void)
{
    int st = ck_platform_load_state(&once_);
    if (st == 0) {
        st = ck_platform_load_once(&once_, load) == CK_OK ? 1 : -1;
        if (st < 0) ck_error_clear();
    }
    return st == 1;
}

int ck_nvtx_available(void) { return ck_nvtx_load(); }

void ck_nvtx_range_push(const char *name)
{
    if (ck_nvtx_load()) nvtx_.nvtxRangePushA(name ? name : "");
}

void ck_nvtx_range_pop(void)
{
    if (ck_nvtx_load()) nvtx_.nvtxRangePop();
}

void ck_nvtx_mark(const char *name)
{
    if (ck_nvtx_load()) nvtx_.nvtxMarkA(name ? name : "");
}
