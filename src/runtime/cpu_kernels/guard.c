/* Bounds mode (see ck_cpu_launch in cpu_kernels.h).  Two checks, one for
 * each way a kernel reaches an array argument:
 *
 *   - through the parameter: bounds mode's build of the module has each
 *     pointer parameter as a ck__ptr<T> (cuda_compat.hpp), which checks
 *     every access against the argument's span (spans[p], the bytes of
 *     its view) and calls ck_cpu_api_oob before one outside happens, at
 *     any distance;
 *   - through a raw pointer made from it (passed to a __device__
 *     function, kept in a T * variable, cast): each array argument
 *     (overlapping ones together) is copied into a mapping whose end
 *     abuts a PROT_NONE region, with another before its start, each 2^31
 *     elements long (up to 32 GiB), so such an access faults there and is
 *     named by ck_cpu_guards_report; after a clean run the canaries in the
 *     slack before the start (less than a page) are checked and the copies
 *     go back. */
#define _GNU_SOURCE /* sigjmp_buf (internal.h), MAP_NORESERVE */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct ck_guard {
    char *map;
    size_t maplen;
    size_t reach;   /* bytes of PROT_NONE on each side of the body */
    char *data;     /* the copy of [lo, lo + size) */
    char *lo;       /* the original */
    size_t size;
    char *slack_lo; /* [slack_lo, data) and [data + size, slack_hi): canaries */
    char *slack_hi;
    int param;      /* the first parameter in this guard */
    size_t itemsize;
};

static int ck_bounds_env = -1;
static atomic_int ck_bounds_on = -1;

int ck_cpu_bounds_mode(void)
{
    int v = atomic_load(&ck_bounds_on);
    if (v >= 0) return v;
    if (ck_bounds_env < 0) {
        const char *e = getenv("CUDAKIT_BOUNDS");
        ck_bounds_env = e && *e && strcmp(e, "0") != 0;
    }
    return ck_bounds_env;
}

void ck_cpu_set_bounds_mode(int on) { atomic_store(&ck_bounds_on, on ? 1 : 0); }

static const char *ck_param_name(const ck_launch *L, int p, char *buf, size_t n)
{
    const char *nm = L->info && L->info[p].name ? L->info[p].name : L->fn->pnames ? L->fn->pnames[p] : NULL;
    if (nm && *nm)
        snprintf(buf, n, "argument %d ('%s')", p, nm);
    else
        snprintf(buf, n, "argument %d", p);
    return buf;
}

/* The bytes argument p's view spans in the original memory. */
static void ck_param_extent(const ck_cpu_arg_info *in, char **lo, char **hi)
{
    *lo = in->lo ? in->lo : in->base;
    *hi = *lo + (in->lo ? in->extent : in->nbytes);
}

/* Guard mappings kept for the next launch: mapping and unmapping regions
 * of many GiB costs more than a small launch's kernel (tens of us). */
#define CK_GCACHE_N 16
#define CK_GCACHE_BYTES ((size_t)64 << 20) /* of bodies kept */
static struct ck_gmap { char *map; size_t maplen, reach; } ck_gcache[CK_GCACHE_N];
static int ck_gcache_n;
static size_t ck_gcache_bytes;
static pthread_mutex_t ck_gcache_mu = PTHREAD_MUTEX_INITIALIZER;

#define CK_REACH_MAX ((size_t)32 << 30)

/* A mapping of body read-write bytes between two PROT_NONE regions of
 * *reach bytes (less where the address space, or a ulimit, does not allow
 * as much); NULL when none can be made. */
static char *ck_guard_map(size_t body, size_t *reach, size_t *maplen)
{
    size_t page = ck_cpu_page_size(), r = *reach;
    pthread_mutex_lock(&ck_gcache_mu);
    for (int i = 0; i < ck_gcache_n; i++)
        if (ck_gcache[i].reach == r && ck_gcache[i].maplen == body + 2 * r) {
            char *m = ck_gcache[i].map;
            *maplen = ck_gcache[i].maplen;
            ck_gcache_bytes -= body;
            ck_gcache[i] = ck_gcache[--ck_gcache_n];
            pthread_mutex_unlock(&ck_gcache_mu);
            return m;
        }
    pthread_mutex_unlock(&ck_gcache_mu);
    char *m;
    for (;;) {
        m = mmap(NULL, body + 2 * r, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED || r <= page) break;
        r = r / 2 / page * page;
    }
    if (m == MAP_FAILED) return NULL;
    if (mprotect(m + r, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(m, body + 2 * r);
        return NULL;
    }
    *reach = r;
    *maplen = body + 2 * r;
    return m;
}

static void ck_guard_unmap(char *map, size_t maplen, size_t reach)
{
    size_t body = maplen - 2 * reach;
    pthread_mutex_lock(&ck_gcache_mu);
    if (ck_gcache_n == CK_GCACHE_N && body <= CK_GCACHE_BYTES) {
        /* the oldest goes */
        munmap(ck_gcache[0].map, ck_gcache[0].maplen);
        ck_gcache_bytes -= ck_gcache[0].maplen - 2 * ck_gcache[0].reach;
        memmove(ck_gcache, ck_gcache + 1, sizeof ck_gcache[0] * (CK_GCACHE_N - 1));
        ck_gcache_n--;
    }
    while (ck_gcache_n && ck_gcache_bytes + body > CK_GCACHE_BYTES && body <= CK_GCACHE_BYTES) {
        munmap(ck_gcache[0].map, ck_gcache[0].maplen);
        ck_gcache_bytes -= ck_gcache[0].maplen - 2 * ck_gcache[0].reach;
        memmove(ck_gcache, ck_gcache + 1, sizeof ck_gcache[0] * (size_t)(ck_gcache_n - 1));
        ck_gcache_n--;
    }
    if (body <= CK_GCACHE_BYTES && ck_gcache_bytes + body <= CK_GCACHE_BYTES) {
        ck_gcache[ck_gcache_n++] = (struct ck_gmap){map, maplen, reach};
        ck_gcache_bytes += body;
        map = NULL;
    }
    pthread_mutex_unlock(&ck_gcache_mu);
    if (map) munmap(map, maplen);
}

void ck_cpu_guards_free(ck_launch *L)
{
    for (int g = 0; g < L->nguards; g++)
        if (L->guards[g].map) ck_guard_unmap(L->guards[g].map, L->guards[g].maplen, L->guards[g].reach);
    free(L->guards);
    free(L->param_guard);
    free(L->spans);
    L->guards = NULL;
    L->param_guard = NULL;
    L->spans = NULL;
    L->nguards = 0;
}

#define CK_CANARY 0xA5

/* Copies of the array arguments inside guard regions, and every
 * parameter's span; newargs/newvals receive the arguments the kernel sees. */
ck_status ck_cpu_guards_make(ck_launch *L, int np, void **newargs, void **newvals)
{
    size_t page = ck_cpu_page_size();
    size_t n1 = (size_t)(np ? np : 1);
    L->guards = calloc(n1, sizeof *L->guards);
    L->param_guard = malloc(sizeof(int) * n1);
    L->spans = calloc(n1, sizeof *L->spans);
    if (!L->guards || !L->param_guard || !L->spans) return ck_error_set(CK_ERR_MEMORY, "out of memory");
    for (int p = 0; p < np; p++) {
        L->param_guard[p] = -1;
        newargs[p] = L->args[p];
        L->spans[p] = (ck__span_t){0, ~(uintptr_t)0, -1};
    }
    for (int p = 0; p < np; p++) {
        const ck_cpu_arg_info *in = &L->info[p];
        if (!in->is_array || L->fn->sizes[p] != sizeof(void *)) continue;
        char *lo, *hi;
        ck_param_extent(in, &lo, &hi);
        if (hi == lo) {
            /* an empty array: nothing may be accessed, and there is nothing to copy */
            uintptr_t a;
            memcpy(&a, L->args[p], sizeof a);
            L->spans[p] = (ck__span_t){a, a, p};
            continue;
        }
        size_t item = in->itemsize;
        /* Arguments that share memory share one copy, or writes through one
         * would not be seen through the other: absorb every earlier copy
         * this one overlaps (their memory is still untouched). */
        for (int changed = 1; changed;) {
            changed = 0;
            for (int g = 0; g < L->nguards; g++) {
                ck_guard *O = &L->guards[g];
                if (!O->map || !(O->lo < hi && lo < O->lo + O->size)) continue;
                if (O->lo < lo) lo = O->lo;
                if (O->lo + O->size > hi) hi = O->lo + O->size;
                if (O->itemsize > item) item = O->itemsize;
                ck_guard_unmap(O->map, O->maplen, O->reach);
                O->map = NULL;
                O->lo = NULL;
                O->size = 0;
                for (int q = 0; q < p; q++)
                    if (L->param_guard[q] == g) L->param_guard[q] = L->nguards; /* the new one below */
                changed = 1;
            }
        }
        int g = L->nguards++;
        L->param_guard[p] = g;
        ck_guard *G = &L->guards[g];
        G->lo = lo;
        G->size = (size_t)(hi - lo);
        G->param = p;
        G->itemsize = item;
        /* Keep the original's alignment modulo the element size (at most 16),
         * so vector loads behave; a remainder is canary-checked slack. */
        size_t align = 1;
        while (align < 16 && align < (item ? item : 16)) align <<= 1;
        size_t body = (G->size + align + page - 1) / page * page;
        /* As far as an int index reaches. */
        size_t reach = ((size_t)1 << 31) * (item ? item : 4);
        if (reach > CK_REACH_MAX) reach = CK_REACH_MAX;
        if (!(G->map = ck_guard_map(body, &reach, &G->maplen)))
            return ck_error_set(CK_ERR_MEMORY, "bounds checking: cannot map %zu bytes for %s", body, L->fn->name);
        G->reach = reach;
        char *end = G->map + reach + body;
        char *data = end - G->size;
        data -= ((uintptr_t)data - (uintptr_t)lo) & (align - 1);
        G->data = data;
        G->slack_lo = G->map + reach;
        G->slack_hi = end;
        memset(G->slack_lo, CK_CANARY, (size_t)(data - G->slack_lo));
        memset(data + G->size, CK_CANARY, (size_t)(end - (data + G->size)));
        memcpy(data, lo, G->size);
    }
    /* Copies merged away above are unmapped and have no parameter left. */
    for (int p = 0; p < np; p++) {
        int g = L->param_guard[p];
        if (g < 0) {
            /* a null pointer argument: nothing may be accessed through it */
            if (L->fn->sizes[p] == sizeof(void *) && !L->info[p].is_array) {
                void *v;
                memcpy(&v, L->args[p], sizeof v);
                if (!v) L->spans[p] = (ck__span_t){0, 0, p};
            }
            continue;
        }
        ck_guard *G = &L->guards[g];
        char *ptr, *lo, *hi;
        memcpy(&ptr, L->args[p], sizeof ptr);
        ck_param_extent(&L->info[p], &lo, &hi);
        newvals[p] = G->data + (ptr - G->lo);
        newargs[p] = &newvals[p];
        L->spans[p] = (ck__span_t){(uintptr_t)(G->data + (lo - G->lo)), (uintptr_t)(G->data + (hi - G->lo)), p};
        if (G->param > p) G->param = p;
    }
    return CK_OK;
}

/* After a clean run: canaries intact, then the copies go back. */
ck_status ck_cpu_guards_finish(ck_launch *L)
{
    char pn[128];
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        if (!G->map) continue;
        for (char *q = G->slack_lo; q < G->data; q++)
            if ((unsigned char)*q != CK_CANARY)
                return ck_error_set(CK_ERR_INDEX,
                                    "kernel %s wrote before the start of %s (%lld bytes before it), through a pointer "
                                    "made from it",
                                    L->fn->name, ck_param_name(L, G->param, pn, sizeof pn), (long long)(G->data - q));
        for (char *q = G->data + G->size; q < G->slack_hi; q++)
            if ((unsigned char)*q != CK_CANARY)
                return ck_error_set(CK_ERR_INDEX,
                                    "kernel %s wrote past the end of %s (byte %lld after it), through a pointer made "
                                    "from it",
                                    L->fn->name, ck_param_name(L, G->param, pn, sizeof pn),
                                    (long long)(q - (G->data + G->size)));
    }
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        if (G->map) memcpy(G->lo, G->data, G->size);
    }
    return CK_OK;
}

/* Floor division, for element indices before an array's start. */
static long long ck_floordiv(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* "element 8 (byte offset 32) outside its elements [0, 8)" of parameter
 * p, for an access at a of size bytes, relative to the pointer passed. */
static void ck_describe_access(const ck_launch *L, int p, uintptr_t a, size_t size, uintptr_t lo, uintptr_t hi,
                               char *buf, size_t n)
{
    char *ptr = NULL;
    memcpy(&ptr, L->args[p], sizeof ptr);
    long long item = L->info && L->info[p].itemsize ? (long long)L->info[p].itemsize : (long long)size;
    if (item <= 0) item = 1;
    long long off = (long long)(a - (uintptr_t)ptr);
    long long e0 = ck_floordiv((long long)(lo - (uintptr_t)ptr), item);
    long long e1 = ck_floordiv((long long)(hi - (uintptr_t)ptr), item);
    int len = snprintf(buf, n, "element %lld (byte offset %lld", ck_floordiv(off, item), off);
    if (len >= 0 && (size_t)len < n && size && (off % item || (long long)size != item))
        len += snprintf(buf + len, n - (size_t)len, ", an access of %zu bytes", size);
    if (len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, ") outside its %lld element%s [%lld, %lld)", e1 - e0,
                 e1 - e0 == 1 ? "" : "s", e0, e1);
}

void ck_cpu_api_oob(const ck__span_t *span, const void *addr, size_t size)
{
    ck_worker *W = ck_cpu_worker_self;
    if (!W || !W->L || !span || span->param < 0 || span->param >= W->L->fn->nparams) {
        ck_cpu_api_fail("an out-of-bounds access", "", 0);
        return;
    }
    const ck_launch *L = W->L;
    int p = span->param;
    char pn[128], what[640], acc[320];
    ck_param_name(L, p, pn, sizeof pn);
    if (!span->lo && !span->hi) {
        snprintf(what, sizeof what, "access through %s, a null pointer (at byte offset %lld)", pn,
                 (long long)(uintptr_t)addr);
    } else {
        ck_describe_access(L, p, (uintptr_t)addr, size, span->lo, span->hi, acc, sizeof acc);
        snprintf(what, sizeof what, "out-of-bounds access to %s: %s", pn, acc);
    }
    ck_cpu_fail_thread(W, CK_ERR_INDEX, what);
}

int ck_cpu_guards_report(ck_launch *L, const char *a, const char *where)
{
    char pn[128], acc[320];
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        if (!G->map || a < G->map || a >= G->map + G->maplen || (a >= G->slack_lo && a < G->slack_hi)) continue;
        /* the argument of this copy whose view is nearest */
        int p = G->param;
        uintptr_t best = ~(uintptr_t)0;
        for (int q = 0; q < L->fn->nparams; q++) {
            if (L->param_guard[q] != g) continue;
            const ck__span_t *s = &L->spans[q];
            uintptr_t d = (uintptr_t)a < s->lo ? s->lo - (uintptr_t)a : (uintptr_t)a - s->hi;
            if (d < best) {
                best = d;
                p = q;
            }
        }
        ck_describe_access(L, p, (uintptr_t)a, 0, L->spans[p].lo, L->spans[p].hi, acc, sizeof acc);
        ck_cpu_launch_error(L, CK_ERR_INDEX,
                            "kernel %s: %s: out-of-bounds access to %s through a pointer made from it: %s",
                            L->fn->name, where, ck_param_name(L, p, pn, sizeof pn), acc);
        return 1;
    }
    return 0;
}
