/*
 * kcache_disk.h - the disk-cache half of kcache.c, shared by the CPU target
 * (cpu_kernels.c) so both kinds of binary live in one folder, keyed and
 * stored the same way: a 128-bit key from ck_hasher, entries written under
 * a temporary name and renamed into place, a checksum checked on read.
 * Internal to src/runtime.
 */
#ifndef CK_RUNTIME_KCACHE_DISK_H
#define CK_RUNTIME_KCACHE_DISK_H

#include <stddef.h>
#include <stdint.h>

typedef struct ck_hasher {
    uint64_t h1, h2, len;
    unsigned char buf[16];
    size_t nbuf;
} ck_hasher;

void ck_hasher_init(ck_hasher *h, uint64_t seed);
void ck_hasher_update(ck_hasher *h, const void *data, size_t n);
/* A length-prefixed field, so ("ab","c") and ("a","bc") differ. */
void ck_hasher_field(ck_hasher *h, const void *data, size_t n);
void ck_hasher_u64(ck_hasher *h, uint64_t v);
void ck_hasher_final(ck_hasher *h, uint64_t out[2]);

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
