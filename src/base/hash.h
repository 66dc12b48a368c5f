/*
 * hash.h - a streaming 128-bit hash for cache keys and checksums (the
 * kernel caches on disk, the CPU kernels' precompiled header).  Not
 * cryptographic: only accidental collisions matter for a cache private
 * to the user, and 128 bits make those negligible.  The result is the
 * same on any host byte order and alignment.
 *
 *     ck_hasher h;
 *     uint64_t key[2];
 *     ck_hasher_init(&h, 0x636b2d6b63616368ull);   // a seed per kind of key
 *     ck_hasher_field(&h, source, strlen(source));
 *     ck_hasher_u64(&h, arch);
 *     ck_hasher_final(&h, key);
 */
#ifndef CK_BASE_HASH_H
#define CK_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ck_hasher {
    uint64_t h1, h2, len;
    unsigned char buf[16];  /* bytes of an unfinished 16-byte block */
    size_t nbuf;
} ck_hasher;

void ck_hasher_init(ck_hasher *h, uint64_t seed);
void ck_hasher_update(ck_hasher *h, const void *data, size_t n);
/* A length-prefixed field, so ("ab","c") and ("a","bc") differ. */
void ck_hasher_field(ck_hasher *h, const void *data, size_t n);
void ck_hasher_u64(ck_hasher *h, uint64_t v);
void ck_hasher_final(ck_hasher *h, uint64_t out[2]);

/* Little-endian 64-bit words, assembled byte by byte so files and keys
 * read the same on any host. */
static inline uint64_t ck_load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline void ck_store_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

#endif
