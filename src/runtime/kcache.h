/*
 * kcache.h - the kernel compiler: CUDA C++ source in, a loadable image out.
 *
 * The CUDA backend generates kernel source at run time; compiling it with
 * NVRTC costs tens to hundreds of milliseconds, which would dominate a
 * short program.  This layer compiles for the exact GPU architecture (a
 * CUBIN, so the driver need not JIT PTX) and keeps every result in a disk
 * cache shared by all processes of the user, so a kernel is compiled once
 * per machine rather than once per process.  It does not load modules or
 * keep CUfunctions: the backend holds that in-memory cache, keyed by its
 * own precomputed keys, and calls here only on a miss.
 *
 *     ck_kernel_image img;
 *     const char *opts[] = {"-DBLOCK=256"};
 *     if (ck_kernel_compile(src, "ck_add_f32.cu", opts, 1, 90, &img) != CK_OK)
 *         return ck_error_status();   // CK_ERR_COMPILE: log + source excerpt
 *     CK_CHECK_CU(ck_cu.cuModuleLoadData(&mod, img.data));
 *     ck_kernel_image_free(&img);
 *
 * Environment:
 *   CUDAKIT_CACHE_DIR   the cache folder; "" or "off" disables the cache.
 *                       Unset: $XDG_CACHE_HOME/cudakit, else ~/.cache/cudakit.
 *                       Used only when it is the user's alone (see
 *                       kcache_disk.h); else a warning and a private one.
 *   CUDAKIT_DEBUG       containing "kernels": print each source (numbered),
 *                       its options and its compile time to stderr.
 *
 * Safe to call from several threads and processes at once.
 */
#ifndef CK_RUNTIME_KCACHE_H
#define CK_RUNTIME_KCACHE_H

#include <stddef.h>
#include "cudakit.h"

typedef struct ck_kernel_image {
    void *data;         /* malloc'd; for PTX it ends with the NUL the driver needs */
    size_t size;        /* bytes in data (for PTX, including that NUL) */
    int is_cubin;       /* 1: CUBIN for sm_<arch>; 0: PTX for compute_<arch> */
    double compile_ms;  /* wall time of this call: compiling, or reading the cache */
    int from_disk;      /* 1 when read from the disk cache */
    int nlowered;       /* ck_kernel_compile_ex: one lowered (mangled) name per name expression */
    char **lowered;     /* malloc'd, like each string in it */
} ck_kernel_image;

/* Compile source (the NVRTC program is named name_hint, "kernel.cu" when
 * NULL, which is the name the compile log uses) for arch (major * 10 +
 * minor: 90 for sm_90), or load the result of an earlier identical
 * compile from the disk cache.  Our options (the architecture, and
 * -std=c++17 unless options hold a -std) come before the caller's.
 * CK_ERR_COMPILE with NVRTC's log and the source lines around each error
 * when the source does not compile; CK_ERR_DEVICE when NVRTC is missing.
 * On success *out owns its data: release it with ck_kernel_image_free. */
ck_status ck_kernel_compile(const char *source, const char *name_hint, const char *const *options,
                            int noptions, int arch, ck_kernel_image *out);
/* The same, also making each of name_exprs ("add<float>", "&f<int>") a
 * symbol of the image: nvrtcAddNameExpression before the compile and
 * nvrtcGetLoweredName after; out->lowered[i] is the name to give
 * cuModuleGetFunction / cuModuleGetGlobal for name_exprs[i].  The lowered
 * names are stored with the binary, so a disk-cache hit knows them too. */
ck_status ck_kernel_compile_ex(const char *source, const char *name_hint, const char *const *options, int noptions,
                               const char *const *name_exprs, int nexprs, int arch, ck_kernel_image *out);
/* Free an image's data and zero it; NULL and zeroed images are fine. */
void ck_kernel_image_free(ck_kernel_image *img);

#endif
