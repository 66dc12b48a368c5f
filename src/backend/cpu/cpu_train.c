/* The training ops on the CPU (backend.h's rows, optim_step and bias_act):
 * one pass over the rows or the tensors, split over the cores.  float16
 * and float32 are computed in float, float64 in double, as on the GPU. */
#include "cpu_internal.h"
#include "../../runtime/parallel.h"

#include <math.h>
#include <stdlib.h>

#include <string.h>

/* The optimizer's loops get AVX-512 and AVX2 clones picked at load time
 * (the baseline build is SSE2 only).  They vectorise only because
 * CMakeLists.txt builds this file with -fno-math-errno (a sqrt that may set
 * errno is a call the vectoriser cannot widen; GCC's optimize pragma does
 * not reach the builtin) and -ffp-contract=off, which keeps the clones from
 * fusing a*b+c into FMAs: the same results on every x86-64 machine. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define CK_OPTIM_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CK_OPTIM_CLONES
#endif

#define EXP_(x) _Generic((x), float: expf, default: exp)(x)
#define LOG_(x) _Generic((x), float: logf, default: log)(x)
#define SQRT_(x) _Generic((x), float: sqrtf, default: sqrt)(x)
#define ERF_(x) _Generic((x), float: erff, default: erf)(x)
#define TANH_(x) _Generic((x), float: tanhf, default: tanh)(x)

/* ------------------------------------------------------------------ rows */

typedef struct rows_ctx {
    const ck_rows_desc *d;
    int64_t bad;          /* the first class index out of range (with has_bad) */
    int has_bad;
} rows_ctx;

/* The row's maximum, NaN when it holds one; the shift exp() is taken
 * against (0 when the maximum is infinite, so that rows of -inf give
 * log(0) and rows holding inf give inf). */
#define ROW_MAX_(A, x, base, len, inner, m, sh)                                   \
    do {                                                                          \
        m = -(A)INFINITY;                                                         \
        for (int64_t i_ = 0; i_ < (len); i_++) {                                  \
            A v_ = (A)(x)[(base) + i_ * (inner)];                                 \
            if (v_ > m || v_ != v_) m = v_;                                       \
            if (m != m) break;                                                    \
        }                                                                         \
        sh = isinf(m) ? (A)0 : m;                                                 \
    } while (0)

#define DEF_ROWS_(SUF, T, A)                                                                          \
    static void rows_##SUF(void *vctx, int64_t r0, int64_t r1, int worker)                            \
    {                                                                                                 \
        (void)worker;                                                                                 \
        rows_ctx *c = vctx;                                                                           \
        const ck_rows_desc *d = c->d;                                                                 \
        const T *x = (const T *)d->x, *g = (const T *)d->g, *pr = (const T *)d->prob;                 \
        T *out = (T *)d->out;                                                                         \
        A *lse = (A *)d->lse, *scr = (A *)d->scratch;                                                 \
        const int64_t len = d->len, inner = d->inner, rows = d->outer * d->inner;                     \
        const A eps = (A)d->smoothing, cls = (A)len;                                                  \
        for (int64_t r = r0; r < r1; r++) {                                                           \
            const int64_t base = (r / inner) * len * inner + r % inner;                               \
            A m, sh, s = 0;                                                                           \
            switch (d->op) {                                                                          \
            case CK_ROW_SOFTMAX:                                                                      \
            case CK_ROW_LOG_SOFTMAX:                                                                  \
            case CK_ROW_LOGSUMEXP:                                                                    \
            case CK_ROW_XENT: {                                                                       \
                ROW_MAX_(A, x, base, len, inner, m, sh);                                              \
                for (int64_t i = 0; i < len; i++) s += EXP_((A)x[base + i * inner] - sh);             \
                A l = LOG_(s) + sh;                                                                   \
                if (d->op == CK_ROW_LOGSUMEXP) {                                                      \
                    out[r] = (T)l;                                                                    \
                } else if (d->op == CK_ROW_SOFTMAX) {                                                 \
                    A inv = (A)1 / s;                                                                 \
                    for (int64_t i = 0; i < len; i++)                                                 \
                        out[base + i * inner] = (T)(EXP_((A)x[base + i * inner] - sh) * inv);         \
                } else if (d->op == CK_ROW_LOG_SOFTMAX) {                                             \
                    for (int64_t i = 0; i < len; i++) out[base + i * inner] = (T)((A)x[base + i * inner] - l); \
                } else {                                                                              \
                    A loss, w = 1;                                                                    \
                    lse[r] = l;                                                                       \
                    if (d->target) {                                                                  \
                        int64_t t = d->target[r];                                                     \
                        if (t == d->ignore_index) {                                                   \
                            loss = 0, w = 0;                                                          \
                        } else if (t < 0 || t >= len) {                                               \
                            if (!__atomic_exchange_n(&c->has_bad, 1, __ATOMIC_ACQ_REL)) c->bad = t;   \
                            loss = (A)NAN;                                                            \
                        } else {                                                                      \
                            A xs = 0;                                                                 \
                            if (eps != 0)                                                             \
                                for (int64_t i = 0; i < len; i++) xs += (A)x[base + i * inner];       \
                            loss = l - ((A)1 - eps) * (A)x[base + t * inner] - eps / cls * xs;        \
                        }                                                                             \
                    } else {                                                                          \
                        A qs = 0, qx = 0;                                                             \
                        for (int64_t i = 0; i < len; i++) {                                           \
                            A q = ((A)1 - eps) * (A)pr[base + i * inner] + eps / cls;                 \
                            qs += q;                                                                  \
                            qx += q * (A)x[base + i * inner];                                         \
                        }                                                                             \
                        loss = l * qs - qx;                                                           \
                    }                                                                                 \
                    if (scr) {                                                                        \
                        scr[r] = loss;                                                                \
                        scr[rows + r] = w;                                                            \
                    } else {                                                                          \
                        out[r] = (T)loss;                                                             \
                    }                                                                                 \
                }                                                                                     \
                break;                                                                                \
            }                                                                                         \
            case CK_ROW_SOFTMAX_BWD:                                                                  \
                for (int64_t i = 0; i < len; i++) s += (A)g[base + i * inner] * (A)x[base + i * inner];\
                for (int64_t i = 0; i < len; i++)                                                     \
                    out[base + i * inner] = (T)((A)x[base + i * inner] * ((A)g[base + i * inner] - s)); \
                break;                                                                                \
            case CK_ROW_LOG_SOFTMAX_BWD:                                                              \
                for (int64_t i = 0; i < len; i++) s += (A)g[base + i * inner];                        \
                for (int64_t i = 0; i < len; i++)                                                     \
                    out[base + i * inner] = (T)((A)g[base + i * inner] - EXP_((A)x[base + i * inner]) * s); \
                break;                                                                                \
            case CK_ROW_XENT_BWD:                                                                     \
            case CK_ROW_XENT_SOFTMAX_BWD: {                                                           \
                A scale = d->reduction == CK_REDUCTION_NONE ? (A)g[r] : (A)g[0];                      \
                if (d->reduction == CK_REDUCTION_MEAN) scale /= ((const A *)d->total)[0];             \
                A l = lse[r], qs = 1;                                                                 \
                int64_t t = -1;                                                                       \
                if (d->target) {                                                                      \
                    t = d->target[r];                                                                 \
                    if (t == d->ignore_index) {                                                       \
                        for (int64_t i = 0; i < len; i++) out[base + i * inner] = (T)0;               \
                        break;                                                                        \
                    }                                                                                 \
                    if (t < 0 || t >= len) {                                                          \
                        if (!__atomic_exchange_n(&c->has_bad, 1, __ATOMIC_ACQ_REL)) c->bad = t;       \
                        break;                                                                        \
                    }                                                                                 \
                } else {                                                                              \
                    qs = 0;                                                                           \
                    for (int64_t i = 0; i < len; i++) qs += ((A)1 - eps) * (A)pr[base + i * inner] + eps / cls; \
                }                                                                                     \
                /* d_i; of softmax's input (x = softmax(z)): x_i * (d_i - sum(d * x)) */              \
                for (int pass = d->op == CK_ROW_XENT_BWD; pass < 2; pass++)                           \
                    for (int64_t i = 0; i < len; i++) {                                               \
                        A q = d->target ? (i == t ? (A)1 - eps : (A)0) + eps / cls                    \
                                        : ((A)1 - eps) * (A)pr[base + i * inner] + eps / cls;         \
                        A xi = (A)x[base + i * inner], di = scale * (EXP_(xi - l) * qs - q);          \
                        if (pass == 0) s += di * xi;                                                  \
                        else if (d->op == CK_ROW_XENT_BWD) out[base + i * inner] = (T)di;             \
                        else out[base + i * inner] = (T)(xi * (di - s));                              \
                    }                                                                                 \
                break;                                                                                \
            }                                                                                         \
            default:                                                                                  \
                break;                                                                                \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void xent_total_##SUF(const ck_rows_desc *d)                                               \
    {                                                                                                 \
        const int64_t rows = d->outer * d->inner;                                                     \
        const A *scr = (const A *)d->scratch;                                                         \
        double ls = 0, ws = 0;                                                                        \
        for (int64_t r = 0; r < rows; r++) ls += (double)scr[r], ws += (double)scr[rows + r];         \
        ((A *)d->total)[0] = (A)ws;                                                                   \
        ((T *)d->out)[0] = (T)(d->reduction == CK_REDUCTION_MEAN ? ls / ws : ls);                     \
    }

DEF_ROWS_(f16, _Float16, float)
DEF_ROWS_(f32, float, float)
DEF_ROWS_(f64, double, double)

ck_status ck_cpu_rows(const ck_rows_desc *d)
{
    int64_t rows = d->outer * d->inner;
    if (rows <= 0) return CK_OK;
    rows_ctx c = {.d = d};
    int64_t per = d->len > 0 ? d->len : 1;
    int64_t grain = per >= 16384 ? 1 : 16384 / per;
    ck_range_fn fn = d->type == CK_FLOAT16 ? rows_f16 : d->type == CK_FLOAT32 ? rows_f32 : rows_f64;
    ck_parallel_for(rows, grain, fn, &c);
    if (c.has_bad) return ck_error_set(CK_ERR_INDEX, "Target %lld is out of bounds.", (long long)c.bad);
    if (d->op == CK_ROW_XENT && d->scratch) {
        if (d->type == CK_FLOAT16) xent_total_f16(d);
        else if (d->type == CK_FLOAT32) xent_total_f32(d);
        else xent_total_f64(d);
    }
    return CK_OK;
}

/* ------------------------------------------------------------ optimizers */

#define OPT_CHUNK 8192

typedef struct optim_ctx {
    const ck_optim_desc *d;
    int64_t *chunk0;    /* the first chunk of each tensor, and the total after them */
    double bc1, bc2_sqrt;
} optim_ctx;

#define DEF_OPTIM_(SUF, T, A)                                                                          \
    CK_OPTIM_CLONES                                                                                    \
    static void optim_##SUF(void *vctx, int64_t c0, int64_t c1, int worker)                            \
    {                                                                                                  \
        (void)worker;                                                                                  \
        const optim_ctx *c = vctx;                                                                     \
        const ck_optim_desc *d = c->d;                                                                 \
        const ck_optim_hparams *h = &d->h;                                                             \
        const A lr = (A)h->lr, wd = (A)h->weight_decay, b1 = (A)h->beta1, b2 = (A)h->beta2;            \
        const A eps = (A)h->eps, mom = (A)h->momentum, damp = (A)h->dampening;                         \
        const A step_size = (A)(h->lr / c->bc1), bc2s = (A)c->bc2_sqrt, decay = (A)1 - lr * wd;        \
        int k = 0;                                                                                     \
        for (int64_t ch = c0; ch < c1; ch++) {                                                         \
            while (c->chunk0[k + 1] <= ch) k++;                                                        \
            const ck_optim_tensor *t = &d->t[k];                                                       \
            int64_t i0 = (ch - c->chunk0[k]) * OPT_CHUNK, i1 = i0 + OPT_CHUNK;                         \
            if (i1 > t->n) i1 = t->n;                                                                  \
            T *p = (T *)t->p, *s1 = (T *)t->s1, *s2 = (T *)t->s2;                                      \
            const T *gp = (const T *)t->g;                                                             \
            /* branch-free over the options, so that the loops vectorise */                           \
            const A sgn = h->maximize ? (A)-1 : (A)1;                                                  \
            if (h->kind == CK_OPTIM_ADAM) {                                                            \
                const A dec = h->decoupled ? decay : (A)1, wdc = h->decoupled ? (A)0 : wd;             \
                for (int64_t i = i0; i < i1; i++) {                                                    \
                    A w = (A)p[i];                                                                     \
                    A g = sgn * (A)gp[i] + wdc * w;                                                    \
                    w *= dec;                                                                          \
                    A m = b1 * (A)s1[i] + ((A)1 - b1) * g;                                             \
                    A v = b2 * (A)s2[i] + ((A)1 - b2) * g * g;                                         \
                    s1[i] = (T)m;                                                                      \
                    s2[i] = (T)v;                                                                      \
                    p[i] = (T)(w - step_size * m / (SQRT_(v) / bc2s + eps));                           \
                }                                                                                      \
            } else if (mom == 0) {                                                                     \
                for (int64_t i = i0; i < i1; i++) {                                                    \
                    A w = (A)p[i];                                                                     \
                    p[i] = (T)(w - lr * (sgn * (A)gp[i] + wd * w));                                    \
                }                                                                                      \
            } else {                                                                                   \
                const A keep = h->first ? (A)0 : mom, take = h->first ? (A)1 : (A)1 - damp;            \
                const A own = h->nesterov ? (A)1 : (A)0, bw = h->nesterov ? mom : (A)1;                \
                for (int64_t i = i0; i < i1; i++) {                                                    \
                    A w = (A)p[i];                                                                     \
                    A g = sgn * (A)gp[i] + wd * w;                                                     \
                    A b = keep * (A)s1[i] + take * g;                                                  \
                    s1[i] = (T)b;                                                                      \
                    p[i] = (T)(w - lr * (own * g + bw * b));                                           \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }

DEF_OPTIM_(f16, _Float16, float)
DEF_OPTIM_(f32, float, float)
DEF_OPTIM_(f64, double, double)

ck_status ck_cpu_optim_step(const ck_optim_desc *d)
{
    int64_t *chunk0 = malloc(sizeof(int64_t) * (size_t)(d->ntensors + 1));
    if (!chunk0) return ck_error_set(CK_ERR_MEMORY, "optimizer step: out of memory");
    chunk0[0] = 0;
    for (int i = 0; i < d->ntensors; i++) chunk0[i + 1] = chunk0[i] + (d->t[i].n + OPT_CHUNK - 1) / OPT_CHUNK;
    optim_ctx c = {.d = d, .chunk0 = chunk0, .bc1 = 1, .bc2_sqrt = 1};
    if (d->h.kind == CK_OPTIM_ADAM) {
        double t = !d->step_ptr ? (double)d->h.step
                   : d->step_f32 ? (double)*(const float *)d->step_ptr : *(const double *)d->step_ptr;
        if (d->step_inc) t += 1.0;
        if (d->step_write) *(float *)d->step_ptr = (float)t;   /* t is taken: the elements below use it */
        c.bc1 = 1 - pow(d->h.beta1, t);
        c.bc2_sqrt = sqrt(1 - pow(d->h.beta2, t));
    }
    ck_range_fn fn = d->type == CK_FLOAT16 ? optim_f16 : d->type == CK_FLOAT32 ? optim_f32 : optim_f64;
    /* A vectorised step takes about 0.6 ns an element, memory-bound: a
     * second thread saves little and its wake-up costs tens of microseconds
     * (more on a loaded machine), so one wakes for every 512k elements (64
     * chunks) and the seed's MLP (100k) steps on the calling thread. */
    ck_parallel_for(chunk0[d->ntensors], 64, fn, &c);
    free(chunk0);
    return CK_OK;
}

/* -------------------------------------------------------------- epilogue */

static const double SQRT1_2_ = 0.70710678118654752440, INV_SQRT_2PI_ = 0.39894228040143267794;
static const double GELU_C_ = 0.79788456080286535588, GELU_A_ = 0.044715;

/* The rows [r0, r1) of y = act(y + bias) with act written as EXPR of z. */
#define BIAS_ACT_LOOP_(T, A, EXPR)                                                                      \
    for (int64_t r = r0; r < r1; r++) {                                                                \
        T *yr = y + r * n, *pr = pre ? pre + r * n : NULL;                                             \
        for (int64_t j = 0; j < n; j++) {                                                              \
            A z = (A)yr[j] + (b ? (A)b[j] : (A)0);                                                     \
            if (pr) pr[j] = (T)z;                                                                      \
            yr[j] = (T)(EXPR);                                                                         \
        }                                                                                              \
    }

#define DEF_ACT_(SUF, T, A)                                                                            \
    static inline A act_##SUF(ck_act act, A z)                                                         \
    {                                                                                                  \
        switch (act) {                                                                                 \
        case CK_ACT_RELU: return z > 0 ? z : (z != z ? z : (A)0);                                      \
        case CK_ACT_GELU: return (A)0.5 * z * ((A)1 + ERF_(z * (A)SQRT1_2_));                          \
        case CK_ACT_GELU_TANH:                                                                         \
            return (A)0.5 * z * ((A)1 + TANH_((A)GELU_C_ * (z + (A)GELU_A_ * z * z * z)));             \
        default: return z;                                                                             \
        }                                                                                              \
    }                                                                                                  \
    static inline A dact_##SUF(ck_act act, A z)                                                        \
    {                                                                                                  \
        switch (act) {                                                                                 \
        case CK_ACT_RELU: return z > 0 ? (A)1 : (A)0;                                                  \
        case CK_ACT_GELU:                                                                              \
            return (A)0.5 * ((A)1 + ERF_(z * (A)SQRT1_2_)) + z * EXP_((A)-0.5 * z * z) * (A)INV_SQRT_2PI_; \
        case CK_ACT_GELU_TANH: {                                                                       \
            A th = TANH_((A)GELU_C_ * (z + (A)GELU_A_ * z * z * z));                                   \
            return (A)0.5 * ((A)1 + th) +                                                              \
                   (A)0.5 * z * ((A)1 - th * th) * (A)GELU_C_ * ((A)1 + (A)3 * (A)GELU_A_ * z * z);    \
        }                                                                                              \
        default: return (A)1;                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void bias_act_##SUF(void *vctx, int64_t r0, int64_t r1, int worker)                         \
    {                                                                                                  \
        (void)worker;                                                                                  \
        const ck_bias_act_desc *d = vctx;                                                              \
        const int64_t n = d->n;                                                                        \
        if (d->backward) {                                                                             \
            const T *g = (const T *)d->g, *sv = (const T *)d->saved;                                   \
            T *o = (T *)d->out;                                                                        \
            if (d->act == CK_ACT_RELU)                                                                 \
                for (int64_t i = r0 * n; i < r1 * n; i++) o[i] = (T)((A)sv[i] > 0 ? (A)g[i] : (A)0);   \
            else                                                                                       \
                for (int64_t i = r0 * n; i < r1 * n; i++) o[i] = (T)((A)g[i] * dact_##SUF(d->act, (A)sv[i])); \
            return;                                                                                    \
        }                                                                                              \
        T *y = (T *)d->y, *pre = (T *)d->pre;                                                          \
        const T *b = (const T *)d->bias;                                                               \
        switch (d->act) {                                                                              \
        case CK_ACT_RELU: BIAS_ACT_LOOP_(T, A, z > 0 ? z : (z != z ? z : (A)0)); break;                   \
        case CK_ACT_GELU: BIAS_ACT_LOOP_(T, A, act_##SUF(CK_ACT_GELU, z)); break;                         \
        case CK_ACT_GELU_TANH: BIAS_ACT_LOOP_(T, A, act_##SUF(CK_ACT_GELU_TANH, z)); break;               \
        default: BIAS_ACT_LOOP_(T, A, z); break;                                                          \
        }                                                                                              \
    }

DEF_ACT_(f16, _Float16, float)
DEF_ACT_(f32, float, float)
DEF_ACT_(f64, double, double)

ck_status ck_cpu_bias_act(const ck_bias_act_desc *d)
{
    /* a thread wakes for 32k elements at least: below that the wake costs more than it saves */
    int64_t grain = d->n >= 32768 ? 1 : 32768 / (d->n > 0 ? d->n : 1);
    ck_range_fn fn = d->type == CK_FLOAT16 ? bias_act_f16 : d->type == CK_FLOAT32 ? bias_act_f32 : bias_act_f64;
    ck_parallel_for(d->rows, grain, fn, (void *)d);
    return CK_OK;
}

/* ----------------------------------------------------------- scatter add */

#define DEF_SCATTER_ADD_(SUF, T)                                                                       \
    static void scatter_add_##SUF(const ck_scatter_add_desc *d)                                        \
    {                                                                                                  \
        T *t = (T *)d->target;                                                                         \
        const T *v = (const T *)d->src;                                                                \
        for (int64_t i = 0; i < d->m; i++) {                                                           \
            int64_t k = d->idx[i];                                                                     \
            if (k < 0) k += d->n;                                                                      \
            t[k] = (T)(t[k] + v[i]);                                                                   \
        }                                                                                              \
    }

DEF_SCATTER_ADD_(f16, _Float16)
DEF_SCATTER_ADD_(f32, float)
DEF_SCATTER_ADD_(f64, double)

ck_status ck_cpu_scatter_add(const ck_scatter_add_desc *d)
{
    /* every index first, so a bad one leaves the target untouched (NumPy's add.at, the GPU's) */
    for (int64_t i = 0; i < d->m; i++)
        if (d->idx[i] < -d->n || d->idx[i] >= d->n)
            return ck_error_set(CK_ERR_INDEX, "index %lld is out of bounds for size %lld", (long long)d->idx[i],
                                (long long)d->n);
    if (d->type == CK_FLOAT16) scatter_add_f16(d);
    else if (d->type == CK_FLOAT32) scatter_add_f32(d);
    else scatter_add_f64(d);
    return CK_OK;
}
