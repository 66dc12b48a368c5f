/* Loading the driver and NVRTC with dlopen, from our own declarations. */
#include "cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stubs: what a symbol the library lacks points at. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CK_CU_STUB_(name, ver, req, params)                                                   \
    static CUresult ck_stub_##name params                                                      \
    {                                                                                          \
        ck_error_set(CK_ERR_DEVICE, "the CUDA driver has no %s (it needs a driver for CUDA %d.%d or newer)", \
                     #name, (ver) / 1000, (ver) % 1000 / 10);                                  \
        return CUDA_ERROR_NOT_FOUND;                                                           \
    }
CK_CU_SYMBOLS(CK_CU_STUB_)
#define CK_NVRTC_STUB_(name, ver, req, params)                                                \
    static nvrtcResult ck_stub_##name params                                                   \
    {                                                                                          \
        ck_error_set(CK_ERR_DEVICE, "the NVRTC library has no %s", #name);                     \
        return 7; /* NVRTC_ERROR_INTERNAL_ERROR... any non-zero */                             \
    }
CK_NVRTC_SYMBOLS(CK_NVRTC_STUB_)
#pragma GCC diagnostic pop

ck_cu_api ck_cu = {
#define CK_CU_INIT_(name, ver, req, params) ck_stub_##name,
    CK_CU_SYMBOLS(CK_CU_INIT_)
};
ck_nvrtc_api ck_nvrtc = {
#define CK_NVRTC_INIT_(name, ver, req, params) ck_stub_##name,
    CK_NVRTC_SYMBOLS(CK_NVRTC_INIT_)
};

static const char *(*nvrtc_errstr_)(nvrtcResult);

/* --------------------------------------------------------- search path */

#define CK_MAX_DIRS 16
static char *search_dirs_[CK_MAX_DIRS];
static int n_search_dirs_;
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;

void ck_platform_add_search_dir(const char *dir)
{
    pthread_mutex_lock(&load_mu);
    if (n_search_dirs_ < CK_MAX_DIRS && dir && *dir) {
        char *d = strdup(dir);
        if (d) search_dirs_[n_search_dirs_++] = d;
    }
    pthread_mutex_unlock(&load_mu);
}

static void *try_open(const char *dir, const char *soname)
{
    char path[8192];
    if (dir) {
        snprintf(path, sizeof path, "%s/%s", dir, soname);
        return dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    return dlopen(soname, RTLD_NOW | RTLD_LOCAL);
}

void *ck_platform_open_library(const char *base, const char *const *sonames)
{
    const char *env = getenv("CUDA_PATH");
    char dirs[4][1024];
    int nd = 0;
    if (env && *env) {
        snprintf(dirs[nd++], sizeof dirs[0], "%s/lib64", env);
        snprintf(dirs[nd++], sizeof dirs[0], "%s/lib", env);
    }
    snprintf(dirs[nd++], sizeof dirs[0], "/usr/local/cuda/lib64");
    snprintf(dirs[nd++], sizeof dirs[0], "/usr/local/cuda/lib");
    for (const char *const *so = sonames; *so; so++) {
        for (int i = 0; i < nd; i++) {
            void *h = try_open(dirs[i], *so);
            if (h) return h;
        }
        for (int i = 0; i < n_search_dirs_; i++) {
            void *h = try_open(search_dirs_[i], *so);
            if (h) return h;
        }
        void *h = try_open(NULL, *so);
        if (h) return h;
    }
    ck_error_set(CK_ERR_DEVICE, "could not load the CUDA library %s (looked in $CUDA_PATH, /usr/local/cuda, "
                 "the nvidia-* Python wheels and the loader path)", base);
    return NULL;
}

/* ------------------------------------------------------------ driver */

static int cu_state_;            /* 0 not tried, 1 ok, -1 failed */
static void *cu_lib_;
static char cu_reason_[512];

void ck_platform_bind(void *lib, const char *name, void **slot, int required, const char *what, int *missing,
                      char *reason, size_t reason_len)
{
    void *f = dlsym(lib, name);
    if (f) {
        *slot = f;
    } else if (required && !*missing) {
        *missing = 1;
        snprintf(reason, reason_len, "%s lacks the required symbol %s", what, name);
    }
}

ck_status ck_cu_load(void)
{
    if (cu_state_ == 1) return CK_OK;
    pthread_mutex_lock(&load_mu);
    if (cu_state_ == 0) {
        cu_state_ = -1;
        const char *env = getenv("CUDAKIT_DISABLE_CUDA");
        void *h = (env && *env && strcmp(env, "0")) ? NULL : dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(cu_reason_, sizeof cu_reason_, "%s",
                     env && *env && strcmp(env, "0") ? "CUDA is disabled by CUDAKIT_DISABLE_CUDA"
                                                      : "no CUDA driver (libcuda.so.1) could be loaded");
        } else {
            int missing = 0;
#define CK_CU_LOAD_(name, ver, req, params)                                         \
            {                                                                       \
                void *f = dlsym(h, #name);                                          \
                if (f) *(void **)&ck_cu.name = f;                                   \
                else if (req && !missing) {                                         \
                    missing = 1;                                                    \
                    snprintf(cu_reason_, sizeof cu_reason_, "the CUDA driver lacks the required symbol %s", #name); \
                }                                                                   \
            }
            CK_CU_SYMBOLS(CK_CU_LOAD_)
#undef CK_CU_LOAD_
            if (!missing) {
                CUresult r = ck_cu.cuInit(0);
                int n = 0;
                if (r != CUDA_SUCCESS) {
                    snprintf(cu_reason_, sizeof cu_reason_, "cuInit failed: %s", ck_cu_error_name(r));
                } else if (ck_cu.cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
                    snprintf(cu_reason_, sizeof cu_reason_, "the CUDA driver found no GPU");
                } else {
                    cu_lib_ = h;
                    ck_cu_install_launch_hooks();
                    cu_state_ = 1;
                }
            }
        }
    }
    pthread_mutex_unlock(&load_mu);
    if (cu_state_ == 1) return CK_OK;
    return ck_error_set(CK_ERR_DEVICE, "%s", cu_reason_);
}

int ck_cu_has_symbol(const char *name) { return cu_state_ == 1 && cu_lib_ && dlsym(cu_lib_, name) != NULL; }

ck_status ck_platform_load_once(ck_platform_once *o, int (*load)(char *reason, size_t reason_len))
{
    if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == 1) return CK_OK;
    pthread_mutex_lock(&o->mu);
    if (o->state == 0) __atomic_store_n(&o->state, load(o->reason, sizeof o->reason) ? -1 : 1, __ATOMIC_RELEASE);
    int st = o->state;
    pthread_mutex_unlock(&o->mu);
    return st == 1 ? CK_OK : ck_error_set(CK_ERR_DEVICE, "%s", o->reason);
}

int ck_platform_load_state(ck_platform_once *o) { return __atomic_load_n(&o->state, __ATOMIC_ACQUIRE); }

/* ------------------------------------------------------------- NVRTC */

static int nvrtc_state_;

const char *ck_nvrtc_error_string(nvrtcResult r)
{
    static char buf[32];
    if (nvrtc_errstr_) return nvrtc_errstr_(r);
    snprintf(buf, sizeof buf, "NVRTC error %d", r);
    return buf;
}

ck_status ck_nvrtc_load(void)
{
    if (nvrtc_state_ == 1) return CK_OK;
    pthread_mutex_lock(&load_mu);
    ck_status s = CK_OK;
    if (nvrtc_state_ != 1) {
        static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
        void *h = ck_platform_open_library("NVRTC", names);
        if (!h) {
            s = ck_error_status();
        } else {
            int missing = 0;
            char why[256];
#define CK_NVRTC_LOAD_(name, ver, req, params) \
            ck_platform_bind(h, #name, (void **)&ck_nvrtc.name, req, "NVRTC", &missing, why, sizeof why);
            CK_NVRTC_SYMBOLS(CK_NVRTC_LOAD_)
#undef CK_NVRTC_LOAD_
            *(void **)&nvrtc_errstr_ = dlsym(h, "nvrtcGetErrorString");
            if (missing) s = ck_error_set(CK_ERR_DEVICE, "%s", why);
            else nvrtc_state_ = 1;
        }
    }
    pthread_mutex_unlock(&load_mu);
    return s;
}

/* ------------------------------------------------------------- errors */

static _Thread_local CUresult last_result_;

CUresult ck_cu_last_result(void) { return last_result_; }

const char *ck_cu_error_name(CUresult r)
{
    const char *s = NULL;
    if (ck_cu.cuGetErrorName != ck_stub_cuGetErrorName && ck_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "CUresult %d", r);
    return buf;
}

int ck_cu_error_is_sticky(CUresult r)
{
    /* illegal address, launch timeout, assert, hardware stack error, illegal
     * instruction, misaligned address, invalid address space, invalid pc,
     * launch failed */
    return r == 700 || r == 702 || r == 710 || (r >= 714 && r <= 719);
}

ck_status ck_cu_fail(CUresult r, const char *call, const char *func, const char *file, int line)
{
    if (ck_cu_error_is_sticky(r)) {
        const char *d = NULL;
        if (ck_cu.cuGetErrorString != ck_stub_cuGetErrorString) ck_cu.cuGetErrorString(r, &d);
        last_result_ = r;
        const char *b = strrchr(file, '/');
        char launches[1024];
        ck_cu_describe_launches(launches, sizeof launches);
        return ck_error_set(CK_ERR_DEVICE, "%s failed: %s (%s) in %s at %s:%d; the CUDA context can no longer "
                            "be used (a sticky error): restart the process%s", call, ck_cu_error_name(r),
                            d ? d : "no description", func, b ? b + 1 : file, line, launches);
    }
    last_result_ = r;
    if (r == CUDA_ERROR_NOT_FOUND && ck_error_status() == CK_ERR_DEVICE) return CK_ERR_DEVICE;  /* a stub said why */
    const char *desc = NULL;
    if (ck_cu.cuGetErrorString != ck_stub_cuGetErrorString) ck_cu.cuGetErrorString(r, &desc);
    const char *base = strrchr(file, '/');
    return ck_error_set(r == CUDA_ERROR_OUT_OF_MEMORY ? CK_ERR_DEVICE_MEMORY : CK_ERR_DEVICE,
                        "%s failed: %s (%s) in %s at %s:%d", call, ck_cu_error_name(r), desc ? desc : "no description",
                        func, base ? base + 1 : file, line);
}
