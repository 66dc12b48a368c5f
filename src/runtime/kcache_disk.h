/*
 * kcache_disk.h - the disk cache of compiled kernels, shared by the NVRTC
 * compiler (kcache.c) and the CPU target (cpu_kernels/) so both kinds of
 * binary live in one folder, keyed and stored the same way: the fields of
 * a key are kept in full and hashed (ck_hasher, src/base/hash.h) into the
 * file name; an entry stores those fields beside its payload and is used
 * only when they are the very bytes asked for; entries are written under a
 * temporary name and renamed into place, and a checksum is checked on read.
 * Internal to src/runtime.
 *
 * The cache runs code: a CPU entry is a shared object cudakit dlopens, a
 * GPU one a binary it launches.  So the folder must be the user's alone,
 * as ssh requires of ~/.ssh: owned by the user and writable by no one else,
 * and its parents up to the home folder (or to a root-owned sticky folder
 * such as /tmp) owned by the user or root and writable by no one else.  A
 * folder that fails is not used: cudakit says so once on stderr and uses a
 * private folder of its own ($XDG_RUNTIME_DIR/cudakit, else
 * $TMPDIR/cudakit-<uid>), or no disk cache.  An entry must be a regular
 * file owned by the user and writable by no one else, checked on the open
 * descriptor (opened without following links and without blocking).
 *
 *     char *dir = ck_cache_dir();                  // NULL: the cache is off
 *     ck_kc_key key;
 *     ck_kc_key_init(&key, 0x636b2d6b63616368ull);  // a seed per kind of entry
 *     ck_kc_key_field(&key, source, strlen(source));
 *     ck_kc_key_u64(&key, arch);
 *     char *path = ck_kc_key_path(&key, dir, ".cubin");   // NULL: out of memory
 *     if (!ck_cache_load(path, &key, 1, &data, &size)) {
 *         ... compile ...
 *         ck_cache_store(dir, path, &key, data, size);
 *     }
 *     ck_kc_key_free(&key);
 */
#ifndef CK_RUNTIME_KCACHE_DISK_H
#define CK_RUNTIME_KCACHE_DISK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Bump when the file layout or anything else folded into the NVRTC key
 * changes meaning: old entries then simply stop being found. */
#define CK_KC_FORMAT_VERSION 2u

/* A key, kept as the fields folded into it (each length-prefixed, so
 * ("ab","c") and ("a","bc") differ).  A write that fails marks it failed
 * and later ones do nothing; a failed key names no entry. */
typedef struct ck_kc_key {
    unsigned char *buf; /* the fields, serialised; the seed first */
    size_t len, cap;
    int failed;
    uint64_t seed;
} ck_kc_key;

void ck_kc_key_init(ck_kc_key *k, uint64_t seed);
void ck_kc_key_u64(ck_kc_key *k, uint64_t v);
void ck_kc_key_field(ck_kc_key *k, const void *data, size_t n);
/* A large input that is fixed per build (a header of ours): only its
 * 128-bit hash goes into the key, so entries do not each carry a copy. */
void ck_kc_key_digest(ck_kc_key *k, const void *data, size_t n);
/* dir + "/" + the key's 128-bit hash in hex + suffix (malloc'd); NULL when
 * dir is NULL, the key failed or memory ran out. */
char *ck_kc_key_path(const ck_kc_key *k, const char *dir, const char *suffix);
void ck_kc_key_free(ck_kc_key *k);

/* mkdir -p with mode 0700; 0 when path is a folder afterwards. */
int ck_mkdir_p(const char *path);
/* The cache folder (malloc'd), made if missing, or NULL when off
 * (CUDAKIT_CACHE_DIR=""/off) or when neither it nor a private folder is
 * safe to use.  Checked on every call, warned about once a folder. */
char *ck_cache_dir(void);
/* 0 when the existing folder dir is safe for the cache of user uid; else
 * -1 and why (a clause naming what failed) in why[nwhy].  home: where the
 * walk up the parents may stop, or NULL.  For tests, any uid. */
int ck_cache_dir_check(const char *dir, uid_t uid, const char *home, char *why, size_t nwhy);
/* Whether an opened entry (its fstat) may be used by user uid: a regular
 * file of uid's that no one else can write. */
int ck_cache_entry_trusted(const struct stat *st, uid_t uid);
/* 1 and the payload (malloc'd) when path holds a trusted, undamaged entry
 * of exactly key; else 0, a miss.  An entry that is damaged, untrusted or
 * of another key is removed, so the rebuild can take its place.
 * need_nul also requires the payload to end with a NUL (PTX). */
int ck_cache_load(const char *path, const ck_kc_key *key, int need_nul, void **data, size_t *size);
/* Store atomically (temporary file + rename); failures are silent. */
void ck_cache_store(const char *dir, const char *path, const ck_kc_key *key, const void *data, size_t size);

#endif
