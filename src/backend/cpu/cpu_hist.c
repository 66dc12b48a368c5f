/* CPU histogram and bincount: one read of x, each element's bin from
 * ck_hist_bin (src/formulas/scalar_ops.h, the GPU's formula too) or x
 * itself, counts or weights added into a private histogram per worker,
 * which are then summed (or into out directly where bins are too many to
 * copy per worker). */
#include "cpu_internal.h"
#include "cpu_scalar.h"
#include "../../runtime/parallel.h"

#include <stdlib.h>

typedef struct hist_ctx {
    const ck_histogram_desc *d;
    char *part;   /* a histogram per worker, or NULL: out itself */
} hist_ctx;

#define CK_HIST_LOOP_(NAME, T, BIN)                                                                     \
    static void hist_##NAME(const ck_histogram_desc *d, int64_t begin, int64_t end, char *acc)       \
    {                                                                                                \
        const T *x = (const T *)d->x;                                                                \
        const int64_t nb = d->nb;                                                                    \
        const double *e = d->edges;                                                                  \
        const int uniform = d->uniform;                                                              \
        (void)e; (void)uniform;                                                                      \
        if (d->w) {                                                                                  \
            double *o = (double *)acc;                                                               \
            for (int64_t i = begin; i < end; i++) {                                                  \
                const int64_t b = BIN;                                                               \
                if ((uint64_t)b < (uint64_t)nb) o[b] += d->w[i];                                                         \
            }                                                                                        \
        } else {                                                                                     \
            int64_t *o = (int64_t *)acc;                                                             \
            for (int64_t i = begin; i < end; i++) {                                                  \
                const int64_t b = BIN;                                                               \
                if ((uint64_t)b < (uint64_t)nb) o[b]++;                                                                  \
            }                                                                                        \
        }                                                                                            \
    }
CK_HIST_LOOP_(bins, int64_t, x[i])
CK_HIST_LOOP_(f32, float, ck_hist_bin((double)x[i], nb, e, uniform))
CK_HIST_LOOP_(f64, double, ck_hist_bin(x[i], nb, e, uniform))

static void hist_range(void *vctx, int64_t begin, int64_t end, int worker)
{
    const hist_ctx *c = vctx;
    const ck_histogram_desc *d = c->d;
    char *acc = c->part ? c->part + (size_t)worker * (size_t)d->nb * 8 : d->out;
    if (!d->edges) hist_bins(d, begin, end, acc);
    else if (d->type == CK_FLOAT32) hist_f32(d, begin, end, acc);
    else hist_f64(d, begin, end, acc);
}

ck_status ck_cpu_histogram(const ck_histogram_desc *d)
{
    if (d->n <= 0 || d->nb <= 0) return CK_OK;
    const int64_t grain = (int64_t)1 << 16;
    int nw = ck_parallel_nchunks(d->n, grain);
    hist_ctx c = {d, NULL};
    /* private histograms cost nb per worker to clear and to add up */
    if (nw > 1 && d->nb <= d->n / 16 && d->nb <= ((int64_t)1 << 22))
        c.part = calloc((size_t)nw * (size_t)d->nb, 8);
    if (!c.part) {
        hist_range(&c, 0, d->n, 0);
        return CK_OK;
    }
    ck_parallel_for(d->n, grain, hist_range, &c);
    for (int w = 0; w < nw; w++) {
        const char *p = c.part + (size_t)w * (size_t)d->nb * 8;
        if (d->w) for (int64_t b = 0; b < d->nb; b++) ((double *)d->out)[b] += ((const double *)p)[b];
        else for (int64_t b = 0; b < d->nb; b++) ((int64_t *)d->out)[b] += ((const int64_t *)p)[b];
    }
    free(c.part);
    return CK_OK;
}
