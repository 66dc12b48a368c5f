/* Bounds mode (see ck_cpu_launch in cpu_kernels.h): each array argument
 * (overlapping ones together) is copied into a mapping whose end abuts a
 * PROT_NONE page, with another before its start; the kernel runs on the
 * copies, a fault in a guard names the argument, and after a clean run the
 * canaries in the slack are checked and the copies go back. */
#define _GNU_SOURCE /* sigjmp_buf (internal.h) */
#include "internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct ck_guard {
    char *map;
    size_t maplen;
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
    if (L->info && L->info[p].name && *L->info[p].name)
        snprintf(buf, n, "argument %d ('%s')", p, L->info[p].name);
    else
        snprintf(buf, n, "argument %d", p);
    return buf;
}

void ck_cpu_guards_free(ck_launch *L)
{
    for (int g = 0; g < L->nguards; g++)
        if (L->guards[g].map) munmap(L->guards[g].map, L->guards[g].maplen);
    free(L->guards);
    free(L->param_guard);
    L->guards = NULL;
    L->param_guard = NULL;
    L->nguards = 0;
}

#define CK_CANARY 0xA5

/* Copies of the array arguments inside guard pages; newargs/newvals receive
 * the arguments the kernel sees. */
ck_status ck_cpu_guards_make(ck_launch *L, int np, void **newargs, void **newvals)
{
    size_t page = ck_cpu_page_size();
    L->guards = calloc((size_t)(np ? np : 1), sizeof *L->guards);
    L->param_guard = malloc(sizeof(int) * (size_t)(np ? np : 1));
    if (!L->guards || !L->param_guard) return ck_error_set(CK_ERR_MEMORY, "out of memory");
    for (int p = 0; p < np; p++) {
        L->param_guard[p] = -1;
        newargs[p] = L->args[p];
    }
    for (int p = 0; p < np; p++) {
        const ck_cpu_arg_info *in = &L->info[p];
        if (!in->is_array || !in->base || !in->nbytes || L->fn->sizes[p] != sizeof(void *)) continue;
        char *lo = in->base, *hi = lo + in->nbytes;
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
                munmap(O->map, O->maplen);
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
        G->maplen = body + 2 * page;
        G->map = mmap(NULL, G->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (G->map == MAP_FAILED) {
            G->map = NULL;
            return ck_error_set(CK_ERR_MEMORY, "bounds checking: cannot map %zu bytes", G->maplen);
        }
        mprotect(G->map, page, PROT_NONE);
        mprotect(G->map + page + body, page, PROT_NONE);
        char *end = G->map + page + body;
        char *data = end - G->size;
        data -= ((uintptr_t)data - (uintptr_t)lo) & (align - 1);
        G->data = data;
        G->slack_lo = G->map + page;
        G->slack_hi = end;
        memset(G->slack_lo, CK_CANARY, (size_t)(data - G->slack_lo));
        memset(data + G->size, CK_CANARY, (size_t)(end - (data + G->size)));
        memcpy(data, lo, G->size);
    }
    /* Copies merged away above are unmapped and have no parameter left. */
    for (int p = 0; p < np; p++) {
        int g = L->param_guard[p];
        if (g < 0) continue;
        ck_guard *G = &L->guards[g];
        char *ptr;
        memcpy(&ptr, L->args[p], sizeof ptr);
        newvals[p] = G->data + (ptr - G->lo);
        newargs[p] = &newvals[p];
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
                return ck_error_set(CK_ERR_INDEX, "kernel %s wrote before the start of %s (%lld bytes before it)",
                                    L->fn->name, ck_param_name(L, G->param, pn, sizeof pn), (long long)(G->data - q));
        for (char *q = G->data + G->size; q < G->slack_hi; q++)
            if ((unsigned char)*q != CK_CANARY)
                return ck_error_set(CK_ERR_INDEX, "kernel %s wrote past the end of %s (byte %lld after it)",
                                    L->fn->name, ck_param_name(L, G->param, pn, sizeof pn),
                                    (long long)(q - (G->data + G->size)));
    }
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        if (G->map) memcpy(G->lo, G->data, G->size);
    }
    return CK_OK;
}

int ck_cpu_guards_report(ck_launch *L, const char *a, const char *where)
{
    size_t page = ck_cpu_page_size();
    char pn[128];
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        char *before = G->map, *after = G->map + G->maplen - page;
        if (!((a >= before && a < before + page) || (a >= after && a < after + page))) continue;
        int p = G->param;
        char *ptr = NULL;
        memcpy(&ptr, L->args[p], sizeof ptr);
        long long off = (long long)(a - ptr);
        size_t item = G->itemsize ? G->itemsize : 1;
        long long elem = off >= 0 ? off / (long long)item : -((-off + (long long)item - 1) / (long long)item);
        ck_cpu_launch_error(L, CK_ERR_INDEX,
                            "kernel %s: out-of-bounds access in %s: %s (%zu bytes%s) at byte offset %lld%s%lld%s",
                            L->fn->name, where, ck_param_name(L, p, pn, sizeof pn), L->info[p].nbytes,
                            a >= after ? "" : "; before its start", off, G->itemsize ? " (element " : " (",
                            G->itemsize ? elem : off, G->itemsize ? ")" : " bytes)");
        return 1;
    }
    return 0;
}
