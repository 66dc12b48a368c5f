/* Random fills on the CPU: the descriptor of src/ops/random.c through the
 * formulas the GPU kernels use too (src/formulas/random_formulas.h), so the
 * same key and counter give the same bits on both. */
#include "cpu_internal.h"
#include "../../runtime/parallel.h"

#include <math.h>
#include <string.h>

#define CK_RNG_FN static inline

#include "../../formulas/random_formulas.h"

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
    const ck_random_desc *c = vctx;
    const int per = c->per;
    for (int64_t blk = b0; blk < b1; blk++) {
        uint32_t w[4];
        ck_rng_block(c->key, c->ctr, (uint64_t)blk, 0, w);
        int64_t e0 = blk * per;
        int m = c->n - e0 < per ? (int)(c->n - e0) : per;
        switch (c->dist) {
        case CK_RANDOM_BITS:
            if (c->type == CK_UINT32)
                for (int j = 0; j < m; j++) ((uint32_t *)c->data)[e0 + j] = w[j];
            else
                for (int j = 0; j < m; j++) ((uint64_t *)c->data)[e0 + j] = ck_rng_u64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_UNIFORM:
            if (c->type == CK_FLOAT32)
                for (int j = 0; j < m; j++) ((float *)c->data)[e0 + j] = ck_rng_f32(w[j]);
            else
                for (int j = 0; j < m; j++) ((double *)c->data)[e0 + j] = ck_rng_f64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_EXPONENTIAL:
            if (c->type == CK_FLOAT32)
                for (int j = 0; j < m; j++) ((float *)c->data)[e0 + j] = ck_rng_exponential_f32(w[j]);
            else
                for (int j = 0; j < m; j++) ((double *)c->data)[e0 + j] = ck_rng_exponential_f64(w[2 * j], w[2 * j + 1]);
            break;
        case CK_RANDOM_NORMAL:
            if (c->type == CK_FLOAT32) {
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
                store_int(c->type, c->data, e0 + j,
                          c->low + ck_rng_integer(per, w, j, c->range, c->key, c->ctr, (uint64_t)blk));
            break;
        default:
            break;
        }
    }
}

static void fill_heavy(void *vctx, int64_t i0, int64_t i1, int worker)
{
    (void)worker;
    const ck_random_desc *c = vctx;
    for (int64_t i = i0; i < i1; i++) {
        ck_rng_stream s;
        ck_rng_stream_init(&s, c->key, c->ctr, (uint64_t)i);
        double a = c->a_arr ? c->a_arr[i] : c->a, b = c->b_arr ? c->b_arr[i] : c->b;
        switch (c->dist) {
        case CK_RANDOM_GAMMA: ((double *)c->data)[i] = ck_rng_gamma(&s, a) * b; break;
        case CK_RANDOM_BETA: ((double *)c->data)[i] = ck_rng_beta(&s, a, b); break;
        case CK_RANDOM_POISSON: ((int64_t *)c->data)[i] = ck_rng_poisson(&s, a); break;
        case CK_RANDOM_BINOMIAL: ((int64_t *)c->data)[i] = ck_rng_binomial(&s, (int64_t)a, b); break;
        default: break;
        }
    }
}

ck_status ck_cpu_random(const ck_random_desc *d)
{
    /* chunks own whole blocks, so no two threads write one element and the
     * split changes nothing */
    if (d->per == 0) ck_parallel_for(d->n, 256, fill_heavy, (void *)d);
    else ck_parallel_for((int64_t)d->nblocks, 2048, fill_simple, (void *)d);
    return CK_OK;
}
