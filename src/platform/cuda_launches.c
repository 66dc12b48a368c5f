/* The hooks on cuLaunchKernel and cuModuleGetFunction: kernel names, the
 * last launches of each stream (for the message of a fault found later),
 * and the launch observer (cuda_api.h). */
#include "cuda_api.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void **);
typedef CUresult (*getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
static launch_fn real_launch_;
static launch_ex_fn real_launch_ex_;
static coop_fn real_coop_;
static getfn_fn real_getfn_;
/* Names a function had before it was renamed: kept for readers that may
 * still hold them, on a list so that they stay reachable. */
typedef struct retired_name { struct retired_name *next; char *name; } retired_name;
static retired_name *retired_;
static const ck_cu_launch_observer *observer_;

/* ------------------------------------------------------------- names */

/* CUfunction -> name, open addressing; entries are never removed (a
 * handle the driver reuses gets its new name over the old). */
typedef struct fn_entry { CUfunction f; char *name; } fn_entry;
static fn_entry *fn_tab_;
static size_t fn_cap_, fn_n_;
static pthread_mutex_t fn_mu_ = PTHREAD_MUTEX_INITIALIZER;

static size_t fn_slot(CUfunction f, size_t cap)
{
    return (size_t)(((uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull) >> 24) & (cap - 1);
}

void ck_cu_note_function(CUfunction f, const char *name)
{
    if (!f || !name) return;
    pthread_mutex_lock(&fn_mu_);
    if ((fn_n_ + 1) * 2 > fn_cap_) {
        size_t nc = fn_cap_ ? fn_cap_ * 2 : 256;
        fn_entry *t = calloc(nc, sizeof *t);
        if (!t) goto out;
        for (size_t i = 0; i < fn_cap_; i++) {
            if (!fn_tab_[i].f) continue;
            size_t j = fn_slot(fn_tab_[i].f, nc);
            while (t[j].f) j = (j + 1) & (nc - 1);
            t[j] = fn_tab_[i];
        }
        free(fn_tab_);
        fn_tab_ = t;
        fn_cap_ = nc;
    }
    size_t j = fn_slot(f, fn_cap_);
    while (fn_tab_[j].f && fn_tab_[j].f != f) j = (j + 1) & (fn_cap_ - 1);
    if (fn_tab_[j].f == f && !strcmp(fn_tab_[j].name, name)) goto out;
    char *c = strdup(name);
    if (!c) goto out;
    if (fn_tab_[j].f) {
        /* the old name stays allocated (a reader may hold it), and reachable */
        retired_name *r = malloc(sizeof *r);
        if (r) {
            r->name = fn_tab_[j].name;
            r->next = retired_;
            retired_ = r;
        }
        fn_tab_[j].name = c;
    } else {
        fn_tab_[j].f = f;
        fn_tab_[j].name = c;
        fn_n_++;
    }
out:
    pthread_mutex_unlock(&fn_mu_);
}

const char *ck_cu_function_name(CUfunction f)
{
    const char *name = NULL;
    pthread_mutex_lock(&fn_mu_);
    if (fn_cap_) {
        size_t j = fn_slot(f, fn_cap_);
        while (fn_tab_[j].f && fn_tab_[j].f != f) j = (j + 1) & (fn_cap_ - 1);
        if (fn_tab_[j].f == f) name = fn_tab_[j].name;
    }
    pthread_mutex_unlock(&fn_mu_);
    return name;
}

/* ---------------------------------------------------------- launches */

/* The last RING launches of each of up to STREAMS streams (a stream
 * hashing onto a slot another holds takes it over).  Relaxed loads and
 * stores, no read-modify-write: a launch costs a few stores, and two
 * threads launching at once may lose an entry of a diagnostic, never more. */
#define STREAMS 16
#define RING 8
typedef struct launch_rec { CUfunction f; unsigned grid[3], block[3]; uint64_t seq; } launch_rec;
typedef struct stream_ring { CUstream s; uint64_t n; launch_rec rec[RING]; } stream_ring;
static stream_ring rings_[STREAMS];
static uint64_t seq_;

#define ST_(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define LD_(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)

void ck_cu_note_launch(CUfunction f, CUstream s, const unsigned grid[3], const unsigned block[3])
{
    stream_ring *r = &rings_[((uintptr_t)s >> 4 ^ (uintptr_t)s >> 12) & (STREAMS - 1)];
    uint64_t q = LD_(seq_) + 1;
    ST_(seq_, q);
    uint64_t n = 0;
    if (LD_(r->s) != s) ST_(r->s, s);
    else n = LD_(r->n);
    ST_(r->n, n + 1);
    launch_rec *e = &r->rec[n & (RING - 1)];
    ST_(e->f, f);
    for (int k = 0; k < 3; k++) {
        ST_(e->grid[k], grid[k]);
        ST_(e->block[k], block[k]);
    }
    ST_(e->seq, q);
}

static void describe_one(char *buf, size_t n, size_t *len, const launch_rec *e)
{
    const char *name = ck_cu_function_name(e->f);
    if (*len >= n) return;
    int w = snprintf(buf + *len, n - *len, "'%s' grid (%u, %u, %u) block (%u, %u, %u)", name ? name : "(unnamed)",
                     e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2]);
    if (w > 0) *len += (size_t)w;
}

void ck_cu_describe_launches(char *buf, size_t n)
{
    if (!n) return;
    buf[0] = 0;
    /* a snapshot: the rings go on changing under us */
    stream_ring snap[STREAMS];
    uint64_t last[STREAMS];
    int order[STREAMS], ns = 0;
    for (int i = 0; i < STREAMS; i++) {
        snap[i].s = LD_(rings_[i].s);
        snap[i].n = LD_(rings_[i].n);
        last[i] = 0;
        for (int k = 0; k < RING; k++) {
            launch_rec *e = &rings_[i].rec[k], *d = &snap[i].rec[k];
            d->f = LD_(e->f);
            for (int j = 0; j < 3; j++) {
                d->grid[j] = LD_(e->grid[j]);
                d->block[j] = LD_(e->block[j]);
            }
            d->seq = LD_(e->seq);
        }
        if (snap[i].n) {
            uint64_t kmax = (snap[i].n - 1) & (RING - 1);
            last[i] = snap[i].rec[kmax].seq;
            order[ns++] = i;
        }
    }
    if (!ns) return;
    /* streams by their latest launch, most recent first */
    for (int a = 1; a < ns; a++)
        for (int b = a; b > 0 && last[order[b]] > last[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    size_t len = 0;
    int w = snprintf(buf, n, "; the kernels launched last, any of which may be the one that faulted:");
    if (w > 0) len = (size_t)w;
    for (int o = 0; o < ns && o < 4; o++) {
        const stream_ring *r = &snap[order[o]];
        if (len < n) {
            if (r->s)
                w = snprintf(buf + len, n - len, "%s on stream %#llx: ", o ? ";" : "",
                             (unsigned long long)(uintptr_t)r->s);
            else
                w = snprintf(buf + len, n - len, "%s on the default stream: ", o ? ";" : "");
            if (w > 0) len += (size_t)w;
        }
        uint64_t cnt = r->n < RING ? r->n : RING;
        for (uint64_t k = 0; k < cnt && k < (o ? 1u : 3u); k++) {
            const launch_rec *e = &r->rec[(r->n - 1 - k) & (RING - 1)];
            if (k && len < n) {
                w = snprintf(buf + len, n - len, k == 1 ? ", before it " : ", ");
                if (w > 0) len += (size_t)w;
            }
            describe_one(buf, n, &len, e);
        }
    }
    if (len >= n) buf[n - 1] = 0;
}

/* ------------------------------------------------------------- hooks */

void ck_cu_set_launch_observer(const ck_cu_launch_observer *o) { __atomic_store_n(&observer_, o, __ATOMIC_RELEASE); }
int ck_cu_launch_observed(void) { return __atomic_load_n(&observer_, __ATOMIC_ACQUIRE) != NULL; }

/* A launch remembered for fault messages; the observer, when there is one. */
static const ck_cu_launch_observer *note_(const ck_cu_launch *l)
{
    ck_cu_note_launch(l->f, l->stream, l->grid, l->block);
    return __atomic_load_n(&observer_, __ATOMIC_ACQUIRE);
}

static CUresult launch_hook(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    ck_cu_launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s};
    const ck_cu_launch_observer *o = note_(&l);
    if (__builtin_expect(o == NULL, 1)) return real_launch_(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    void *token = o->before(&l);
    CUresult r = real_launch_(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    o->after(token, &l, r);
    return r;
}

/* A cooperative launch (a Python kernel's grid barrier) is noted and
 * observed as any other. */
static CUresult coop_hook(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shmem, CUstream s, void **params)
{
    ck_cu_launch l = {f, {gx, gy, gz}, {bx, by, bz}, shmem, s};
    const ck_cu_launch_observer *o = note_(&l);
    if (__builtin_expect(o == NULL, 1)) return real_coop_(f, gx, gy, gz, bx, by, bz, shmem, s, params);
    void *token = o->before(&l);
    CUresult r = real_coop_(f, gx, gy, gz, bx, by, bz, shmem, s, params);
    o->after(token, &l, r);
    return r;
}

/* cuLaunchKernelEx (programmatic dependent launches) likewise. */
static CUresult launch_ex_hook(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    ck_cu_launch l = {f, {c->gridDimX, c->gridDimY, c->gridDimZ}, {c->blockDimX, c->blockDimY, c->blockDimZ},
                      c->sharedMemBytes, c->hStream};
    const ck_cu_launch_observer *o = note_(&l);
    if (__builtin_expect(o == NULL, 1)) return real_launch_ex_(c, f, params, extra);
    void *token = o->before(&l);
    CUresult r = real_launch_ex_(c, f, params, extra);
    o->after(token, &l, r);
    return r;
}

static CUresult getfn_hook(CUfunction *f, CUmodule m, const char *name)
{
    CUresult r = real_getfn_(f, m, name);
    if (r == CUDA_SUCCESS) ck_cu_note_function(*f, name);
    return r;
}

void ck_cu_install_launch_hooks(void)
{
    if (ck_cu.cuLaunchKernel != launch_hook) {
        real_launch_ = ck_cu.cuLaunchKernel;
        ck_cu.cuLaunchKernel = launch_hook;
    }
    if (ck_cu.cuLaunchCooperativeKernel && ck_cu.cuLaunchCooperativeKernel != coop_hook) {
        real_coop_ = ck_cu.cuLaunchCooperativeKernel;
        ck_cu.cuLaunchCooperativeKernel = coop_hook;
    }
    if (ck_cu.cuLaunchKernelEx && ck_cu.cuLaunchKernelEx != launch_ex_hook) {
        real_launch_ex_ = ck_cu.cuLaunchKernelEx;
        ck_cu.cuLaunchKernelEx = launch_ex_hook;
    }
    if (ck_cu.cuModuleGetFunction != getfn_hook) {
        real_getfn_ = ck_cu.cuModuleGetFunction;
        ck_cu.cuModuleGetFunction = getfn_hook;
    }
}
