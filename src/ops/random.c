/* Random fills from the Philox4x32-10 counter-based generator (see
 * include/cudakit_random.h for the element -> bits map).
 *
 * The formulas live in src/formulas/random_formulas.h, shared by the CPU
 * and GPU fills so that the same key and counter give the same bits on
 * both; this file checks a fill and hands it to its device's random slot. */
#include "ops_internal.h"

#include <math.h>
#include <string.h>

#define CK_RNG_FN static inline

#include "../formulas/random_formulas.h"

/* ------------------------------------------------------------ driver */

void ck_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    ck_rng_philox(ctr, key, out);
}

static int is_heavy(ck_random_dist d) { return d >= CK_RANDOM_GAMMA; }

/* Elements per block of the simple distributions (0: heavy). */
static int per_block(ck_random_dist dist, ck_dtype dt, const ck_random_params *p)
{
    switch (dist) {
    case CK_RANDOM_BITS: return dt == CK_UINT32 ? 4 : 2;
    case CK_RANDOM_UNIFORM:
    case CK_RANDOM_NORMAL:
    case CK_RANDOM_EXPONENTIAL: return dt == CK_FLOAT32 ? 4 : 2;
    case CK_RANDOM_INTEGERS: return p->range != 0 && p->range - 1 <= 0xFFFFFFFFu ? 4 : 2;
    default: return 0;
    }
}

uint64_t ck_random_blocks(ck_random_dist dist, ck_dtype dt, const ck_random_params *params, int64_t n)
{
    if (n <= 0) return 0;
    if (is_heavy(dist)) return (uint64_t)n;
    int per = per_block(dist, dt, params);
    return ((uint64_t)n + (uint64_t)per - 1) / (uint64_t)per;
}

static int dtype_ok(ck_random_dist dist, ck_dtype dt)
{
    switch (dist) {
    case CK_RANDOM_BITS: return dt == CK_UINT32 || dt == CK_UINT64;
    case CK_RANDOM_UNIFORM:
    case CK_RANDOM_NORMAL:
    case CK_RANDOM_EXPONENTIAL: return dt == CK_FLOAT32 || dt == CK_FLOAT64;
    case CK_RANDOM_INTEGERS: return dt == CK_BOOL || ck_dtype_is_integer(dt);
    case CK_RANDOM_GAMMA:
    case CK_RANDOM_BETA: return dt == CK_FLOAT64;
    case CK_RANDOM_POISSON:
    case CK_RANDOM_BINOMIAL: return dt == CK_INT64;
    default: return 0;
    }
}

ck_status ck_random_fill(ck_array *out, ck_random_dist dist, const uint32_t key[2], const uint32_t ctr[4],
                         const ck_random_params *params, uint64_t *blocks)
{
    static const ck_random_params zero;
    if (!params) params = &zero;
    if (blocks) *blocks = 0;
    if ((unsigned)dist >= CK_RANDOM_NDISTS) return ck_error_set(CK_ERR_VALUE, "unknown random distribution %d", (int)dist);
    if (!out->buf)
        return ck_error_set(CK_ERR_VALUE, "random fills need an array with storage");
    if (!(out->flags & CK_ARRAY_C_CONTIGUOUS) || !(out->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "random fills need a C-contiguous, writeable array");
    if (!dtype_ok(dist, out->dtype))
        return ck_error_set(CK_ERR_TYPE, "random distribution %d cannot produce dtype %s", (int)dist,
                            ck_dtype_get_info(out->dtype)->name);
    const ck_backend_iface *be = ck_backend_for(out->buf->device);
    if (!be->random) {
        char dev[32];
        ck_device_str(out->buf->device, dev, sizeof dev);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "random distribution %d is not implemented on the %s device",
                            (int)dist, dev);
    }
    ck_random_desc d;
    memset(&d, 0, sizeof d);
    d.dev = out->buf->device;
    d.dist = dist;
    d.type = out->dtype;
    d.data = out->data;
    d.n = out->size;
    d.per = per_block(dist, out->dtype, params);
    d.nblocks = ck_random_blocks(dist, out->dtype, params, out->size);
    memcpy(d.key, key, sizeof d.key);
    memcpy(d.ctr, ctr, sizeof d.ctr);
    d.low = params->low;
    d.range = params->range;
    d.a = params->a;
    d.b = params->b;
    d.a_arr = params->a_arr;
    d.b_arr = params->b_arr;
    ck_status s = d.nblocks ? be->random(&d) : CK_OK;
    if (s == CK_OK && blocks) *blocks = d.nblocks;
    return s;
}
