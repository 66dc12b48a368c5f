/*
 * kcache_disk.h - the disk cache of compiled kernels, shared by the NVRTC
 * compiler (kcache.c) and the CPU target (cpu_kernels/) so both kinds of
 * binary live in one folder, keyed and stored the same way: a 128-bit key
 * from ck_hasher (src/base/hash.h) as the file name, entries written under
 * a temporary name and renamed into place, a checksum checked on read.
 * Internal to src/runtime.
 *
 *     char *dir = ck_cache_dir();                  // NULL: the cache is off
 *     ... path = dir + "/" + hex(key) + ".cubin"
 *     if (!ck_cache_load(path, 1, &data, &size)) {
 *         ... compile ...
 *         ck_cache_store(dir, path, data, size);
 *     }
 */
#ifndef CK_RUNTIME_KCACHE_DISK_H
#define CK_RUNTIME_KCACHE_DISK_H

#include <stddef.h>

/* Bump when the file layout or anything else folded into the NVRTC key
 * changes meaning: old entries then simply stop being found. */
#define CK_KC_FORMAT_VERSION 1u

/* mkdir -p with mode 0700; 0 when path is a folder afterwards. */
int ck_mkdir_p(const char *path);
/* The cache folder (malloc'd), or NULL when off (CUDAKIT_CACHE_DIR=""/off). */
char *ck_cache_dir(void);
/* 1 and the payload (malloc'd) on a valid entry, 0 on a miss (a damaged
 * entry is removed).  is_cubin=0 also requires a final NUL (PTX). */
int ck_cache_load(const char *path, int is_cubin, void **data, size_t *size);
/* Store atomically (temporary file + rename); failures are silent. */
void ck_cache_store(const char *dir, const char *path, const void *data, size_t size);

#endif
