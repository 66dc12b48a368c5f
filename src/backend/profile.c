/* The profiler at the door to a device: while a profile, the NVTX op
 * ranges or the sync debug mode are on, ck_backend_for hands out a copy of
 * each backend's table whose op, copy and library slots record the call
 * (name, shapes, dtypes, host time, and on a GPU device time from a pair
 * of the backend's own events on the call's stream) around the real slot.
 * Off, the plain tables are handed out again: the ops pay nothing.  User
 * kernel launches, which reach a module's table directly, are recorded by
 * ck_function_launch (backend.c) through ck_backend_obs_launch. */
#include "backend.h"
#include "cudakit_ops.h"
#include "cudakit_profiler.h"
#include "../runtime/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ck_backend_iface decorated_[2];
static const ck_backend_iface *real_[2];

/* ------------------------------------------------------ device events */

/* Free timing events of each GPU, reused from profile to profile. */
typedef struct ev_pool { ck_event *ev; int n, cap; } ev_pool;
static ev_pool pools_[CK_MAX_GPUS];
static pthread_mutex_t pool_mu_ = PTHREAD_MUTEX_INITIALIZER;

static ck_event pool_get(ck_device dev)
{
    ck_event e = NULL;
    pthread_mutex_lock(&pool_mu_);
    ev_pool *p = &pools_[dev.index];
    if (p->n) e = p->ev[--p->n];
    pthread_mutex_unlock(&pool_mu_);
    if (!e && real_[CK_DEVICE_CUDA]->event_create(dev, 1, &e) != CK_OK) e = NULL;
    return e;
}

static void pool_put(ck_device dev, ck_event e)
{
    if (!e) return;
    pthread_mutex_lock(&pool_mu_);
    ev_pool *p = &pools_[dev.index];
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 64;
        ck_event *t = realloc(p->ev, (size_t)nc * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&pool_mu_);
            real_[CK_DEVICE_CUDA]->event_destroy(dev, e);
            return;
        }
        p->ev = t;
        p->cap = nc;
    }
    p->ev[p->n++] = e;
    pthread_mutex_unlock(&pool_mu_);
}

static void time_begin(ck_prof_slot *r, ck_stream st)
{
    ck_device dev = r->pub.dev;
    if (dev.type != CK_DEVICE_CUDA || dev.index < 0 || dev.index >= CK_MAX_GPUS || !real_[CK_DEVICE_CUDA]) return;
    r->pub.stream = (uint64_t)(uintptr_t)st;
    r->ev[0] = pool_get(dev);
    r->ev[1] = r->ev[0] ? pool_get(dev) : NULL;
    if (r->ev[1] && real_[CK_DEVICE_CUDA]->event_record(dev, r->ev[0], st) == CK_OK) {
        r->timer = CK_TIMER_BACKEND;
        return;
    }
    pool_put(dev, r->ev[0]);
    pool_put(dev, r->ev[1]);
    r->ev[0] = r->ev[1] = NULL;
    ck_error_clear();   /* an untimed record, not a failed op */
}

static void time_end(ck_prof_slot *r, ck_status s)
{
    if (r->timer != CK_TIMER_BACKEND) return;
    ck_stream st = (ck_stream)(uintptr_t)r->pub.stream;
    if (s == CK_OK && real_[CK_DEVICE_CUDA]->event_record(r->pub.dev, r->ev[1], st) == CK_OK) return;
    pool_put(r->pub.dev, r->ev[0]);
    pool_put(r->pub.dev, r->ev[1]);
    r->ev[0] = r->ev[1] = NULL;
    r->timer = CK_TIMER_NONE;
}

/* --------------------------------------------------------- a call */

typedef struct obs_scope { int flags; ck_prof_slot *r; } obs_scope;

static void obs_begin(obs_scope *sc, ck_prof_kind kind, const char *name, ck_device dev)
{
    sc->flags = __atomic_load_n(&ck_obs_flags_, __ATOMIC_ACQUIRE);
    sc->r = NULL;
    ck_obs_op_push(name);
    if (sc->flags & CK_OBS_NVTX) ck_nvtx_range_push(name);
    if (sc->flags & CK_OBS_PROFILE) sc->r = ck_prof_open(kind, name, dev);
}

/* Time on the device from here (the shapes are written first: the host
 * time of writing them is not the op's). */
static void obs_start_timer(obs_scope *sc, ck_stream st)
{
    if (!sc->r) return;
    time_begin(sc->r, st);
    sc->r->pub.host_start_ns = ck_prof_now_ns();
}

static ck_stream current_stream(ck_device dev)
{
    const ck_backend_iface *be = real_[dev.type];
    return be && be->stream_current ? be->stream_current(dev) : NULL;
}

static ck_status obs_end(obs_scope *sc, ck_status s)
{
    if (sc->r) {
        time_end(sc->r, s);
        ck_prof_close(sc->r);
    }
    if (sc->flags & CK_OBS_NVTX) ck_nvtx_range_pop();
    ck_obs_op_pop();
    return s;
}

/* ------------------------------------------------------ shapes, dtypes */

typedef struct fmt { char *p; size_t n, len; } fmt;

static void put(fmt *f, const char *fmtstr, long long v)
{
    if (f->len >= f->n) return;
    int w = snprintf(f->p + f->len, f->n - f->len, fmtstr, v);
    if (w > 0) f->len += (size_t)w;
    if (f->len >= f->n) f->len = f->n - 1;
}

static void put_s(fmt *f, const char *s)
{
    size_t k = strlen(s);
    if (f->len + 1 >= f->n) return;
    if (k > f->n - 1 - f->len) k = f->n - 1 - f->len;
    memcpy(f->p + f->len, s, k);
    f->len += k;
    f->p[f->len] = 0;
}

/* "[a, b, c]": dims given innermost first when reversed is set. */
static void put_shape(fmt *f, int ndim, const int64_t *shape, int reversed)
{
    put_s(f, "[");
    for (int i = 0; i < ndim; i++) put(f, i ? ", %lld" : "%lld", (long long)shape[reversed ? ndim - 1 - i : i]);
    put_s(f, "]");
}

static void put_dtype(fmt *f, int first, ck_dtype t)
{
    if (!first) put_s(f, ", ");
    put_s(f, ck_dtype_get_info(t)->name);
}

#define SHAPES(r) fmt sh = {(r)->pub.shapes, sizeof (r)->pub.shapes, 0}
#define DTYPES(r) fmt dt = {(r)->pub.dtypes, sizeof (r)->pub.dtypes, 0}

static void ew_args(ck_prof_slot *r, const ck_ew_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    int nops = d->it.nops;
    put_s(&sh, "[");
    /* the inputs, then the output, as PyTorch lists an op's arguments */
    for (int k = 1; k <= nops; k++) {
        int op = k % nops;
        if (k > 1) put_s(&sh, ", ");
        if (d->scalar_mask >> op & 1) put_s(&sh, "[]");
        else put_shape(&sh, d->it.ndim, d->it.shape, 1);
        put_dtype(&dt, k == 1, d->types[op]);
    }
    put_s(&sh, "]");
}

static void reduce_args(ck_prof_slot *r, const ck_reduce_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    int64_t in[2 * CK_MAXDIMS];
    int n = 0;
    for (int i = d->n_outer - 1; i >= 0; i--) in[n++] = d->outer_shape[i];
    for (int i = d->n_inner - 1; i >= 0; i--) in[n++] = d->inner_shape[i];
    put_s(&sh, "[");
    put_shape(&sh, n, in, 0);
    put_s(&sh, ", ");
    put_shape(&sh, d->n_outer, d->outer_shape, 1);
    put_s(&sh, "]");
    put_dtype(&dt, 1, d->in_type);
    put_dtype(&dt, 0, d->out_type);
}

static void scan_args(ck_prof_slot *r, const ck_scan_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    int64_t in[CK_MAXDIMS + 1];
    int n = 0;
    for (int i = d->n_outer - 1; i >= 0; i--) in[n++] = d->outer_shape[i];
    in[n++] = d->len;
    put_s(&sh, "[");
    put_shape(&sh, n, in, 0);
    put_s(&sh, "]");
    put_dtype(&dt, 1, d->type);
}

static void gather_args(ck_prof_slot *r, const ck_gather_desc *d)
{
    SHAPES(r);
    put_s(&sh, "[");
    put_shape(&sh, d->ndim, d->shape, 0);
    for (int k = 0; k < d->nidx; k++) {
        put_s(&sh, ", ");
        put(&sh, "[%lld]", (long long)d->idx_size[k]);
    }
    put_s(&sh, "]");
    put(&(fmt){r->pub.dtypes, sizeof r->pub.dtypes, 0}, "%lld-byte elements", d->itemsize);
}

static void nonzero_args(ck_prof_slot *r, const ck_nonzero_desc *d)
{
    SHAPES(r);
    put_s(&sh, "[");
    put_shape(&sh, d->ndim, d->shape, 0);
    put(&sh, ", [%lld]]", (long long)d->count);
    snprintf(r->pub.dtypes, sizeof r->pub.dtypes, "bool, int64");
}

static void compress_args(ck_prof_slot *r, const ck_compress_desc *d)
{
    SHAPES(r);
    put_s(&sh, "[");
    put_shape(&sh, d->ndim, d->shape, 0);
    put(&sh, ", [%lld]]", (long long)d->count);
    put(&(fmt){r->pub.dtypes, sizeof r->pub.dtypes, 0}, "%lld-byte elements", d->itemsize);
}

static void sort_args(ck_prof_slot *r, const ck_sort_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    int64_t shape[2] = {d->nrows, d->len};
    put_s(&sh, "[");
    put_shape(&sh, 2, shape, 0);
    put_s(&sh, "]");
    put_dtype(&dt, 1, d->type);
}

static void searchsorted_args(ck_prof_slot *r, const ck_searchsorted_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    put(&sh, "[[%lld], ", (long long)d->na);
    put(&sh, "[%lld]]", (long long)d->nv);
    put_dtype(&dt, 1, d->type);
}

static void random_args(ck_prof_slot *r, const ck_random_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    put(&sh, "[[%lld]]", (long long)d->n);
    put_dtype(&dt, 1, d->type);
}

static void pieces_args(ck_prof_slot *r, const ck_pieces_desc *d)
{
    SHAPES(r);
    put_s(&sh, "[");
    put_shape(&sh, d->ndim, d->shape, 0);
    put(&sh, ", %lld pieces]", d->npieces);
}

static void matmul_args(ck_prof_slot *r, const ck_matmul_desc *d)
{
    SHAPES(r);
    DTYPES(r);
    int64_t a[CK_MAXDIMS + 2], b[CK_MAXDIMS + 2];
    int n = d->nbatch;
    for (int i = 0; i < n; i++) a[i] = b[i] = d->batch_shape[i];
    a[n] = d->m, a[n + 1] = d->k;
    b[n] = d->k, b[n + 1] = d->n;
    put_s(&sh, "[");
    put_shape(&sh, n + 2, a, 0);
    put_s(&sh, ", ");
    put_shape(&sh, n + 2, b, 0);
    put_s(&sh, "]");
    put_dtype(&dt, 1, d->type);
}

static void no_args(ck_prof_slot *r, const void *d) { (void)r; (void)d; }

static const char *const reduce_names_[CK_REDUCE_COUNT] = {
    "sum", "prod", "min", "max", "all", "any", "argmin", "argmax", "count_nonzero",
};
static const char *const random_names_[] = {"random_bits", "random_uniform", "random_normal",
                                            "random_exponential", "random_integers"};

#define REAL(dev) real_[(dev).type]

/* A slot that takes one descriptor: its record, named by name_expr (of d),
 * its arguments written by args_fn, timed on the device's current stream. */
#define CK_OBS_SLOT_(slot, desc_t, name_expr, args_fn)                     \
    static ck_status obs_##slot(const desc_t *d)                           \
    {                                                                      \
        obs_scope sc;                                                      \
        obs_begin(&sc, CK_PROF_OP, (name_expr), d->dev);                   \
        if (sc.r) args_fn(sc.r, d);                                        \
        obs_start_timer(&sc, current_stream(d->dev));                      \
        return obs_end(&sc, REAL(d->dev)->slot(d));                        \
    }

CK_OBS_SLOT_(elementwise, ck_ew_desc, ck_op_table[d->op].name, ew_args)
CK_OBS_SLOT_(cast, ck_ew_desc, "astype", ew_args)
CK_OBS_SLOT_(reduce, ck_reduce_desc, (unsigned)d->op < CK_REDUCE_COUNT ? reduce_names_[d->op] : "reduce",
             reduce_args)
CK_OBS_SLOT_(scan, ck_scan_desc, d->op == CK_REDUCE_PROD ? "cumprod" : "cumsum", scan_args)
CK_OBS_SLOT_(gather, ck_gather_desc, "gather", gather_args)
CK_OBS_SLOT_(scatter, ck_gather_desc, "scatter", gather_args)
CK_OBS_SLOT_(nonzero, ck_nonzero_desc, "nonzero", nonzero_args)
CK_OBS_SLOT_(compress, ck_compress_desc, d->expand ? "mask_assign" : "mask_select", compress_args)
CK_OBS_SLOT_(sort, ck_sort_desc, d->idx ? "argsort" : "sort", sort_args)
CK_OBS_SLOT_(searchsorted, ck_searchsorted_desc, "searchsorted", searchsorted_args)
CK_OBS_SLOT_(histogram, ck_histogram_desc, d->edges ? "histogram" : "bincount", no_args)
CK_OBS_SLOT_(random, ck_random_desc,
             (unsigned)d->dist < sizeof random_names_ / sizeof *random_names_ ? random_names_[d->dist] : "random",
             random_args)
CK_OBS_SLOT_(copy_pieces, ck_pieces_desc, "concatenate", pieces_args)
static const char *const rows_names_[CK_ROW_OPS] = {"softmax", "log_softmax", "logsumexp", "softmax_backward",
                                                    "log_softmax_backward", "cross_entropy", "cross_entropy_backward",
                                                    "cross_entropy_softmax_backward"};
CK_OBS_SLOT_(rows, ck_rows_desc, (unsigned)d->op < CK_ROW_OPS ? rows_names_[d->op] : "rows", no_args)
CK_OBS_SLOT_(optim_step, ck_optim_desc, d->h.kind == CK_OPTIM_ADAM ? "adam_step" : "sgd_step", no_args)
CK_OBS_SLOT_(bias_act, ck_bias_act_desc, d->backward ? "bias_act_backward" : "bias_act", no_args)
CK_OBS_SLOT_(scatter_add, ck_scatter_add_desc, "scatter_add", no_args)
static const char *const linear_names_[CK_LINEAR_EPI_COUNT] = {"linear", "linear_bias", "linear_relu",
                                                                "linear_bias_relu", "linear_bgrad"};
CK_OBS_SLOT_(linear, ck_linear_desc, (unsigned)d->epi < CK_LINEAR_EPI_COUNT ? linear_names_[d->epi] : "linear",
             no_args)
CK_OBS_SLOT_(matmul, ck_matmul_desc, "matmul", matmul_args)
CK_OBS_SLOT_(fft, ck_fft_desc, "fft", no_args)
CK_OBS_SLOT_(solver, ck_solver_desc, "solver", no_args)

static ck_status obs_fill(const ck_ew_desc *d, const void *value)
{
    obs_scope sc;
    obs_begin(&sc, CK_PROF_OP, "fill", d->dev);
    if (sc.r) {
        SHAPES(sc.r);
        DTYPES(sc.r);
        put_s(&sh, "[");
        put_shape(&sh, d->it.ndim, d->it.shape, 1);
        put_s(&sh, "]");
        put_dtype(&dt, 1, d->types[0]);
    }
    obs_start_timer(&sc, current_stream(d->dev));
    return obs_end(&sc, REAL(d->dev)->fill(d, value));
}

static ck_status obs_iota(ck_array *out, double start, double step)
{
    ck_device dev = ck_array_device(out);
    obs_scope sc;
    obs_begin(&sc, CK_PROF_OP, "arange", dev);
    if (sc.r) {
        SHAPES(sc.r);
        DTYPES(sc.r);
        put_s(&sh, "[");
        put_shape(&sh, out->ndim, out->shape, 0);
        put_s(&sh, "]");
        put_dtype(&dt, 1, out->dtype);
    }
    obs_start_timer(&sc, current_stream(dev));
    return obs_end(&sc, REAL(dev)->iota(out, start, step));
}

/* copies: the device's side names the direction */
static ck_status copy_scope(obs_scope *sc, const char *name, ck_device dev, size_t n)
{
    obs_begin(sc, CK_PROF_COPY, name, dev);
    if (sc->r) {
        sc->r->pub.bytes = n;
        put(&(fmt){sc->r->pub.shapes, sizeof sc->r->pub.shapes, 0}, "[[%lld]]", (long long)n);
        snprintf(sc->r->pub.dtypes, sizeof sc->r->pub.dtypes, "uint8");
    }
    obs_start_timer(sc, current_stream(dev));
    return CK_OK;
}

static ck_status obs_copy_to_host(ck_device dev, void *dst, const void *src, size_t n)
{
    obs_scope sc;
    copy_scope(&sc, "memcpy DtoH", dev, n);
    return obs_end(&sc, REAL(dev)->copy_to_host(dev, dst, src, n));
}

static ck_status obs_copy_from_host(ck_device dev, void *dst, const void *src, size_t n)
{
    obs_scope sc;
    copy_scope(&sc, "memcpy HtoD", dev, n);
    return obs_end(&sc, REAL(dev)->copy_from_host(dev, dst, src, n));
}

static ck_status obs_copy_peer(ck_device dst_dev, void *dst, ck_device src_dev, const void *src, size_t n)
{
    obs_scope sc;
    copy_scope(&sc, "memcpy PtoP", dst_dev, n);
    return obs_end(&sc, REAL(dst_dev)->copy_peer(dst_dev, dst, src_dev, src, n));
}

/* ------------------------------------------------------ user kernels */

ck_status ck_backend_obs_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                ck_stream stream, unsigned flags, int nparams, void **params,
                                const ck_launch_arg *info)
{
    obs_scope sc;
    ck_device dev = f->module->dev;
    obs_begin(&sc, CK_PROF_KERNEL, f->name, dev);
    if (sc.r) {
        memcpy(sc.r->pub.grid, grid, sizeof sc.r->pub.grid);
        memcpy(sc.r->pub.block, block, sizeof sc.r->pub.block);
        sc.r->pub.shared_mem = shmem;
    }
    obs_start_timer(&sc, stream);
    /* the registry's table: a CPU graph's capture records the launch */
    return obs_end(&sc, real_[dev.type]->function_launch(f, grid, block, shmem, stream, flags, nparams, params, info));
}

/* ------------------------------------------------------------ tables */

const ck_backend_iface *ck_backend_decorate(int type, const ck_backend_iface *real)
{
    real_[type] = real;
    ck_backend_iface *t = &decorated_[type];
    *t = *real;
#define CK_OBS_WRAP_(slot) if (real->slot) t->slot = obs_##slot
    CK_OBS_WRAP_(copy_to_host);
    CK_OBS_WRAP_(copy_from_host);
    CK_OBS_WRAP_(copy_peer);
    CK_OBS_WRAP_(elementwise);
    CK_OBS_WRAP_(cast);
    CK_OBS_WRAP_(fill);
    CK_OBS_WRAP_(reduce);
    CK_OBS_WRAP_(scan);
    CK_OBS_WRAP_(iota);
    CK_OBS_WRAP_(gather);
    CK_OBS_WRAP_(scatter);
    CK_OBS_WRAP_(nonzero);
    CK_OBS_WRAP_(compress);
    CK_OBS_WRAP_(sort);
    CK_OBS_WRAP_(searchsorted);
    CK_OBS_WRAP_(histogram);
    CK_OBS_WRAP_(random);
    CK_OBS_WRAP_(copy_pieces);
    CK_OBS_WRAP_(rows);
    CK_OBS_WRAP_(optim_step);
    CK_OBS_WRAP_(bias_act);
    CK_OBS_WRAP_(scatter_add);
    CK_OBS_WRAP_(linear);
    CK_OBS_WRAP_(matmul);
    CK_OBS_WRAP_(fft);
    CK_OBS_WRAP_(solver);
#undef CK_OBS_WRAP_
    return t;
}

/* ---------------------------------------------------- start and stop */

static pthread_mutex_t obs_mu_ = PTHREAD_MUTEX_INITIALIZER;

static void obs_set(int flag, int on)
{
    pthread_mutex_lock(&obs_mu_);
    int before = ck_obs_flags_ != 0;
    int flags = on ? (ck_obs_flags_ | flag) : (ck_obs_flags_ & ~flag);
    __atomic_store_n(&ck_obs_flags_, flags, __ATOMIC_RELEASE);
    if (before != (flags != 0)) ck_backend_observe(flags != 0);
    pthread_mutex_unlock(&obs_mu_);
}

void ck_sync_set_debug_mode(ck_sync_mode mode)
{
    __atomic_store_n(&ck_sync_mode_, (int)mode, __ATOMIC_RELEASE);
    obs_set(CK_OBS_SYNC, mode != CK_SYNC_DEFAULT);
}

ck_status ck_profiler_start(unsigned flags)
{
    ck_status s = ck_prof_store_start(flags);
    if (s != CK_OK) return s;
    ck_prof_observe_launches(1);
    obs_set(CK_OBS_NVTX, (flags & CK_PROF_NVTX) != 0);
    obs_set(CK_OBS_PROFILE, 1);
    return CK_OK;
}

typedef struct backend_marks { ck_device dev; ck_event ev[CK_PROF_ANCHOR_TRIES]; } backend_marks;

static ck_status backend_mark(void *arg, int i)
{
    backend_marks *m = arg;
    const ck_backend_iface *be = real_[CK_DEVICE_CUDA];
    ck_status s = be->event_create(m->dev, 1, &m->ev[i]);
    if (s == CK_OK) s = be->event_record(m->dev, m->ev[i], NULL);
    if (s == CK_OK) s = be->event_synchronize(m->dev, m->ev[i]);
    return s;
}

/* The backend-timed records of GPU d their device times: its work is done
 * (the caller waited); the anchor's event marks the host clock's now. */
static ck_status resolve_backend_events(int d)
{
    const ck_backend_iface *be = real_[CK_DEVICE_CUDA];
    ck_device dev = {CK_DEVICE_CUDA, d};
    backend_marks m = {dev, {NULL}};
    int best = 0;
    double now_us = 0;
    ck_status s = ck_prof_anchor(backend_mark, &m, &best, &now_us);
    int64_t n = ck_prof_store_count();
    for (int64_t i = 0; i < n; i++) {
        ck_prof_slot *r = ck_prof_store_at(i);
        if (r->timer != CK_TIMER_BACKEND || r->pub.dev.type != CK_DEVICE_CUDA || r->pub.dev.index != d) continue;
        float ms = 0, back = 0;
        if (s == CK_OK && r->closed && be->event_elapsed_ms(dev, r->ev[0], r->ev[1], &ms) == CK_OK &&
            be->event_elapsed_ms(dev, r->ev[0], m.ev[best], &back) == CK_OK) {
            r->pub.dev_us = ms * 1e3;
            r->pub.dev_start_us = now_us - back * 1e3;
        }
        pool_put(dev, r->ev[0]);
        pool_put(dev, r->ev[1]);
        r->ev[0] = r->ev[1] = NULL;
        r->timer = CK_TIMER_NONE;
    }
    for (int j = 0; j < CK_PROF_ANCHOR_TRIES; j++)
        if (m.ev[j]) be->event_destroy(dev, m.ev[j]);
    return s;
}

ck_status ck_profiler_stop(void)
{
    if (!ck_profiler_enabled()) return ck_error_set(CK_ERR_RUNTIME, "no profile is on");
    ck_prof_store_stop();
    ck_prof_observe_launches(0);
    obs_set(CK_OBS_PROFILE | CK_OBS_NVTX, 0);
    unsigned backend_gpus = 0, any_gpus = 0;
    int64_t n = ck_prof_store_count();
    for (int64_t i = 0; i < n; i++) {
        const ck_prof_slot *r = ck_prof_store_at(i);
        if (r->timer == CK_TIMER_NONE || r->pub.dev.index < 0 || r->pub.dev.index >= CK_MAX_GPUS) continue;
        any_gpus |= 1u << r->pub.dev.index;
        if (r->timer == CK_TIMER_BACKEND) backend_gpus |= 1u << r->pub.dev.index;
    }
    ck_status st = CK_OK;
    /* the backend's waits poll: Ctrl-C ends them */
    for (int d = 0; d < CK_MAX_GPUS; d++) {
        if (!(any_gpus >> d & 1)) continue;
        ck_device dev = {CK_DEVICE_CUDA, d};
        ck_status s = real_[CK_DEVICE_CUDA]->synchronize(dev);
        if (s != CK_OK && st == CK_OK) st = s;
    }
    if (st != CK_OK) {
        /* the records keep their host times; the error is the wait's */
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", ck_error_message());
        for (int64_t i = 0; i < n; i++) ck_prof_store_at(i)->timer = CK_TIMER_NONE;
        return ck_error_set(st, "%s", msg);
    }
    for (int d = 0; d < CK_MAX_GPUS && st == CK_OK; d++)
        if (backend_gpus >> d & 1) st = resolve_backend_events(d);
    if (st == CK_OK && any_gpus) st = ck_prof_resolve_driver_events();
    return st;
}
