/* The states of cudakit.cuda.random's xoroshiro128+ generators (see
 * include/cudakit_xoroshiro.h): SplitMix64 seeding, the 2^64 jump, and the
 * jump as a bit matrix, which makes n states in n table lookups of 16 bytes
 * each and reaches any subsequence_start by squaring. */
#include "cudakit_xoroshiro.h"

#include "ops_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

uint64_t ck_xoro_splitmix64(uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ck_xoro_next(uint64_t s[2])
{
    uint64_t s0 = s[0], s1 = s[1], r = s0 + s1;
    s1 ^= s0;
    s[0] = rotl(s0, 55) ^ s1 ^ (s1 << 14);
    s[1] = rotl(s1, 36);
    return r;
}

void ck_xoro_jump(uint64_t s[2])
{
    static const uint64_t jump[2] = {CK_XORO_JUMP0, CK_XORO_JUMP1};
    uint64_t a = 0, b = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 64; k++) {
            if (jump[i] >> k & 1) {
                a ^= s[0];
                b ^= s[1];
            }
            ck_xoro_next(s);
        }
    s[0] = a;
    s[1] = b;
}

/* ------------------------------------------------------ bit matrices */

/* A linear map of 128-bit states: the images of the 128 unit states
 * (bit k of word 0 is unit k, bit k of word 1 unit 64 + k). */
typedef struct { uint64_t col[128][2]; } xoro_mat;

/* The map applied a byte at a time: entry [b][v] is the image of byte b of
 * the state holding v, the XOR of the columns of v's bits. */
typedef struct { uint64_t t[16][256][2]; } xoro_table;

static void table_of(xoro_table *tab, const xoro_mat *m)
{
    for (int b = 0; b < 16; b++) {
        uint64_t (*t)[2] = tab->t[b];
        t[0][0] = t[0][1] = 0;
        for (int k = 0; k < 8; k++) {
            const uint64_t *c = m->col[8 * b + k];
            for (int j = 0; j < 1 << k; j++) {
                t[(1 << k) + j][0] = t[j][0] ^ c[0];
                t[(1 << k) + j][1] = t[j][1] ^ c[1];
            }
        }
    }
}

static inline void apply(const xoro_table *tab, const uint64_t in[2], uint64_t out[2])
{
    uint64_t a = 0, b = 0;
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 8; k++) {
            const uint64_t *e = tab->t[8 * w + k][(in[w] >> (8 * k)) & 0xff];
            a ^= e[0];
            b ^= e[1];
        }
    out[0] = a;
    out[1] = b;
}

static xoro_mat jump_mat_;
static xoro_table jump_tab_;
static pthread_once_t jump_once_ = PTHREAD_ONCE_INIT;

static void build_jump(void)
{
    for (int k = 0; k < 128; k++) {
        uint64_t s[2] = {k < 64 ? 1ull << k : 0, k < 64 ? 0 : 1ull << (k - 64)};
        ck_xoro_jump(s);
        jump_mat_.col[k][0] = s[0];
        jump_mat_.col[k][1] = s[1];
    }
    table_of(&jump_tab_, &jump_mat_);
}

/* s advanced by m jumps: the matrices J^(2^i) by squaring, applied for
 * the bits of m. */
static ck_status jump_many(uint64_t s[2], uint64_t m)
{
    if (!m) return CK_OK;
    xoro_mat *p = malloc(2 * sizeof *p);
    xoro_table *tab = malloc(sizeof *tab);
    if (!p || !tab) {
        free(p);
        free(tab);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for the xoroshiro jump tables");
    }
    xoro_mat *cur = &p[0], *next = &p[1];
    *cur = jump_mat_;
    for (;;) {
        table_of(tab, cur);
        if (m & 1) apply(tab, s, s);
        m >>= 1;
        if (!m) break;
        for (int k = 0; k < 128; k++) apply(tab, cur->col[k], next->col[k]);
        xoro_mat *t = cur;
        cur = next;
        next = t;
    }
    free(p);
    free(tab);
    return CK_OK;
}

ck_status ck_xoro_init_states(ck_array *states, uint64_t seed, uint64_t subsequence_start)
{
    if (!states->buf) return ck_error_set(CK_ERR_VALUE, "xoroshiro128p states need an array with storage");
    if (states->dtype != CK_UINT64 || states->ndim != 2 || states->shape[1] != 2)
        return ck_error_set(CK_ERR_TYPE, "xoroshiro128p states are an (n, 2) uint64 array (s0, s1 per row), not a "
                            "%s array of shape %s", ck_dtype_get_info(states->dtype)->name,
                            ck_shape_str(states->ndim, states->shape, 0));
    if (!(states->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    pthread_once(&jump_once_, build_jump);
    int64_t n = states->shape[0];
    int direct = ck_array_device(states).type == CK_DEVICE_CPU && (states->flags & CK_ARRAY_C_CONTIGUOUS);
    ck_array tmp;
    uint64_t *w = (uint64_t *)states->data;
    if (!direct) {
        ck_status s = ck_array_empty(&tmp, 2, states->shape, CK_UINT64, ck_device_cpu());
        if (s != CK_OK) return s;
        w = (uint64_t *)tmp.data;
    }
    ck_status s = CK_OK;
    if (n > 0) {
        uint64_t st[2];
        st[0] = st[1] = ck_xoro_splitmix64(seed);
        s = jump_many(st, subsequence_start);
        w[0] = st[0];
        w[1] = st[1];
        for (int64_t i = 1; s == CK_OK && i < n; i++) apply(&jump_tab_, &w[2 * (i - 1)], &w[2 * i]);
    }
    if (!direct) {
        if (s == CK_OK) s = ck_array_assign(states, &tmp);
        ck_array_release(&tmp);
    }
    return s;
}
