/* The cache-key hash (see hash.h): a streaming MurmurHash3-x64-128-style
 * hash, two 64-bit lanes that mix into each other per 16-byte block. */
#include "hash.h"

#include <string.h>

#define CK_H_C1 0x87c37b91114253d5ull
#define CK_H_C2 0x4cf5ad432745937full

static inline uint64_t ck_rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t ck_fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static inline uint64_t ck_mix_k1(uint64_t k) { return ck_rotl64(k * CK_H_C1, 31) * CK_H_C2; }
static inline uint64_t ck_mix_k2(uint64_t k) { return ck_rotl64(k * CK_H_C2, 33) * CK_H_C1; }

void ck_hasher_init(ck_hasher *h, uint64_t seed)
{
    /* Distinct lane seeds, so the lanes are not the same function twice. */
    h->h1 = seed;
    h->h2 = ck_fmix64(seed ^ 0x9e3779b97f4a7c15ull);
    h->len = 0;
    h->nbuf = 0;
}

static void ck_hasher_block(ck_hasher *h, const unsigned char *p)
{
    h->h1 ^= ck_mix_k1(ck_load_le64(p));
    h->h1 = ck_rotl64(h->h1, 27) + h->h2;
    h->h1 = h->h1 * 5 + 0x52dce729;
    h->h2 ^= ck_mix_k2(ck_load_le64(p + 8));
    h->h2 = ck_rotl64(h->h2, 31) + h->h1;
    h->h2 = h->h2 * 5 + 0x38495ab5;
}

void ck_hasher_update(ck_hasher *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    h->len += n;
    if (h->nbuf) {
        size_t take = 16 - h->nbuf < n ? 16 - h->nbuf : n;
        memcpy(h->buf + h->nbuf, p, take);
        h->nbuf += take;
        p += take;
        n -= take;
        if (h->nbuf < 16) return;
        ck_hasher_block(h, h->buf);
        h->nbuf = 0;
    }
    for (; n >= 16; p += 16, n -= 16) ck_hasher_block(h, p);
    memcpy(h->buf, p, n);
    h->nbuf = n;
}

/* Without the length prefix ("ab","c") and ("a","bc") would hash alike. */
void ck_hasher_field(ck_hasher *h, const void *data, size_t n)
{
    unsigned char len[8];
    ck_store_le64(len, n);
    ck_hasher_update(h, len, 8);
    ck_hasher_update(h, data, n);
}

void ck_hasher_u64(ck_hasher *h, uint64_t v)
{
    unsigned char b[8];
    ck_store_le64(b, v);
    ck_hasher_update(h, b, 8);
}

void ck_hasher_final(ck_hasher *h, uint64_t out[2])
{
    uint64_t h1 = h->h1, h2 = h->h2;
    if (h->nbuf) {
        unsigned char tail[16] = {0};
        memcpy(tail, h->buf, h->nbuf);
        h1 ^= ck_mix_k1(ck_load_le64(tail));
        if (h->nbuf > 8) h2 ^= ck_mix_k2(ck_load_le64(tail + 8));
    }
    h1 ^= h->len;
    h2 ^= h->len;
    h1 += h2;
    h2 += h1;
    h1 = ck_fmix64(h1);
    h2 = ck_fmix64(h2);
    h1 += h2;
    h2 += h1;
    out[0] = h1;
    out[1] = h2;
}
