/* Random fills from the Philox4x32-10 counter-based generator (see
 * include/cudakit_random.h for the element -> bits map).
 *
 * The formulas live in random_formulas.h, shared with the GPU kernels so
 * that the same key and counter give the same bits on both; a fill of a
 * device array goes to its backend's random slot. */
#include "cudakit.h"
#include "ops_internal.h"
#include "../runtime/parallel.h"

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

typedef struct fill_ctx {
    ck_random_dist dist;
    ck_dtype dt;
    char *data;
    int64_t n;
    int per;
    uint32_t key[2], ctr[4];
    const ck_random_params *p;
} fill_ctx;

static void store_int(ck_dtype dt, char *data, int64_t i, uint64_t v)
{
    switch (dt) {
    case CK_BOOL: ((uint8_t *)data)[i] = (uint8_t)(v != 0); break;
    case CK_INT8: case CK_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case CK_INT16: case CK_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case CK_INT32: case CK_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    default: ((uint64_t *)data)[i] = v; break;
    }
}

static void fill_simple(void *vctx, int64_t b0, int64_t b1, int worker)
{
    (void)worker;
    const fill_ctx *c = vctx;
    const int per = c->per;
    for (int64_t blk = b0; blk < b1; blk++) {
        uint32_t w[4];
        ck_rng_block(c->key, c->ctr, (uint64_t)blk, 0, w);
        int64_t e0 = blk * per;
        int m = c->n - e0 < per ? (int)(c->n - e0) : per;
        switch (c->dist) {
        case CK_RANDOM_BITS:
            if (c->dt == CK_UINT32)
                for (int j = 0; j < m; j++) ((uint32_t *)c->data)[e0 + j] = w[j];
            else
                for (int j = 0; j < m; j++) ((uint64_t *)c->data)[e0 + j] = ck_rng_u64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_UNIFORM:
            if (c->dt == CK_FLOAT32)
                for (int j = 0; j < m; j++) ((float *)c->data)[e0 + j] = ck_rng_f32(w[j]);
            else
                for (int j = 0; j < m; j++) ((double *)c->data)[e0 + j] = ck_rng_f64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_EXPONENTIAL:
            if (c->dt == CK_FLOAT32)
                for (int j = 0; j < m; j++) ((float *)c->data)[e0 + j] = ck_rng_exponential_f32(w[j]);
            else
                for (int j = 0; j < m; j++) ((double *)c->data)[e0 + j] = ck_rng_exponential_f64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_NORMAL:
            if (c->dt == CK_FLOAT32) {
                float *o = (float *)c->data + e0, z[4];
                ck_rng_normal_f32(w[0], w[1], &z[0], &z[1]);
                ck_rng_normal_f32(w[2], w[3], &z[2], &z[3]);
                for (int j = 0; j < m; j++) o[j] = z[j];
            } else {
                double *o = (double *)c->data + e0, z[2];
                ck_rng_normal_f64(w, &z[0], &z[1]);
                for (int j = 0; j < m; j++) o[j] = z[j];
            }
            break;
        case CK_RANDOM_INTEGERS:
            for (int j = 0; j < m; j++)
                store_int(c->dt, c->data, e0 + j,
                          c->p->low + ck_rng_integer(per, w, j, c->p->range, c->key, c->ctr, (uint64_t)blk));
            break;
        default:
            break;
        }
    }
}

static void fill_heavy(void *vctx, int64_t i0, int64_t i1, int worker)
{
    (void)worker;
    const fill_ctx *c = vctx;
    const ck_random_params *p = c->p;
    for (int64_t i = i0; i < i1; i++) {
        ck_rng_stream s;
        ck_rng_stream_init(&s, c->key, c->ctr, (uint64_t)i);
        double a = p->a_arr ? p->a_arr[i] : p->a, b = p->b_arr ? p->b_arr[i] : p->b;
        switch (c->dist) {
        case CK_RANDOM_GAMMA: ((double *)c->data)[i] = ck_rng_gamma(&s, a) * b; break;
        case CK_RANDOM_BETA: ((double *)c->data)[i] = ck_rng_beta(&s, a, b); break;
        case CK_RANDOM_POISSON: ((int64_t *)c->data)[i] = ck_rng_poisson(&s, a); break;
        case CK_RANDOM_BINOMIAL: ((int64_t *)c->data)[i] = ck_rng_binomial(&s, (int64_t)a, b); break;
        default: break;
        }
    }
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
    if (out->buf->device.type != CK_DEVICE_CPU) {
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
    fill_ctx c = {.dist = dist, .dt = out->dtype, .data = out->data, .n = out->size,
                  .per = per_block(dist, out->dtype, params), .p = params};
    c.key[0] = key[0]; c.key[1] = key[1];
    memcpy(c.ctr, ctr, sizeof c.ctr);
    uint64_t nb = ck_random_blocks(dist, out->dtype, params, out->size);
    if (nb) {
        /* chunks own whole blocks, so no two threads write one element and
         * the split changes nothing */
        if (is_heavy(dist)) ck_parallel_for(out->size, 256, fill_heavy, &c);
        else ck_parallel_for((int64_t)nb, 2048, fill_simple, &c);
    }
    if (blocks) *blocks = nb;
    return CK_OK;
}
