/* The CPU's communicator: the ranks are processes of one machine (or
 * threads of one, for init_all) meeting in a POSIX shared-memory segment
 * named from the unique id.
 *
 * The segment holds a header (the ranks' claims, a sense-reversing
 * barrier, each rank's description of the collective it is in, the
 * channels of send/recv) and then the data: a slot a rank for the
 * collectives and a ring a ordered pair of ranks for send/recv.  A
 * collective goes through the slots in pieces: each rank copies its piece
 * in, the ranks reduce a share of it each (so every rank gets the same
 * bits, summed in rank order), and each copies the result out, with a
 * barrier between the steps.  Before the data, the ranks compare their
 * descriptions: a mismatch is a ValueError on every rank.  Every wait
 * checks the deadline (CK_ERR_TIMEOUT, ck_comm_timeout_get), the abort
 * flag a failing rank sets, whether the other ranks' processes are still
 * alive, and Ctrl-C; after any of those the communicator is broken for
 * every rank, each failing at once with the first reason. */
#include "../comm.h"
#include "../../runtime/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ layout */

enum { K_ALL_REDUCE, K_REDUCE, K_BROADCAST, K_ALL_GATHER, K_REDUCE_SCATTER, K_BARRIER, K_COUNT };
static const char *const kind_names[K_COUNT] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter",
                                                "barrier"};
static const char *const op_names[CK_COMM_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};

/* what a rank says about the collective it is in */
typedef struct shm_meta {
    uint64_t seq;
    int32_t kind, dtype, op, root;
    uint64_t count;
} shm_meta;

/* the ring of send/recv from one rank to another: bytes ever written and
 * read (the ring's positions modulo its size) */
typedef struct shm_chan {
    _Atomic uint64_t written;
    char pad0[56];
    _Atomic uint64_t read;
    char pad1[56];
} shm_chan;

typedef struct shm_hdr {
    _Atomic uint32_t n_ranks;                 /* the first rank to come sets it */
    _Atomic uint32_t abort;                   /* set once; abort_msg says why */
    _Atomic uint32_t claimed[CK_COMM_MAX_RANKS];
    _Atomic int32_t pid[CK_COMM_MAX_RANKS];
    char abort_msg[512];
    char pad0[64];
    _Atomic uint32_t bar_count;               /* ranks in the barrier now */
    char pad1[60];
    _Atomic uint32_t bar_sense;               /* flips when the last one comes */
    char pad2[60];
    _Atomic uint64_t arrived[CK_COMM_MAX_RANKS];  /* barriers each rank entered */
    shm_meta meta[2][CK_COMM_MAX_RANKS];      /* by the parity of the collective's number */
    shm_chan chan[];                          /* [n][n], src-major */
} shm_hdr;

typedef struct shm_comm {
    shm_hdr *h;
    size_t map_bytes;
    char *slots, *rings;
    size_t slot_bytes, ring_bytes;
    int rank, n;
    uint32_t sense;
    uint64_t barriers, seq;
    char name[64];
} shm_comm;

static size_t slot_bytes_for(int n) { return n <= 8 ? (size_t)1 << 20 : (size_t)256 << 10; }
static size_t ring_bytes_for(int n) { return n <= 8 ? (size_t)64 << 10 : (size_t)8 << 10; }
static size_t hdr_bytes_for(int n) { return (sizeof(shm_hdr) + (size_t)n * n * sizeof(shm_chan) + 4095) & ~(size_t)4095; }
static size_t seg_bytes_for(int n)
{
    return hdr_bytes_for(n) + (size_t)n * slot_bytes_for(n) + (size_t)n * n * ring_bytes_for(n);
}

static char *slot(shm_comm *c, int k) { return c->slots + (size_t)k * c->slot_bytes; }

/* ------------------------------------------------------------- waits */

static double now_s(void) { return (double)ck_now_ns() * 1e-9; }

static ck_status fail_all(shm_comm *c, ck_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Break the communicator for every rank with this reason (the first one wins). */
static ck_status fail_all(shm_comm *c, ck_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    uint32_t zero = 0;
    if (atomic_compare_exchange_strong(&c->h->abort, &zero, 2u)) {
        memcpy(c->h->abort_msg, msg, sizeof msg);
        atomic_store(&c->h->abort, 1u);
    }
    return ck_error_set(st, "%s", msg);
}

static ck_status aborted(shm_comm *c)
{
    uint32_t a;
    while ((a = atomic_load(&c->h->abort)) == 2u) sched_yield();   /* its message is being written */
    if (!a) return CK_OK;
    return ck_error_set(CK_ERR_RUNTIME, "the communicator is broken (rank %d of %d): %s", c->rank, c->n,
                        c->h->abort_msg);
}

typedef struct waiter {
    double deadline, next_check;
    unsigned spins;
    int catching;
    unsigned sigints;
} waiter;

static void waiter_init(waiter *w)
{
    double t = now_s();
    w->deadline = t + ck_comm_timeout_get();
    w->next_check = t + 0.05;
    w->spins = 0;
    w->catching = 0;
    w->sigints = ck_sigint_count();
}

static void waiter_done(waiter *w)
{
    if (w->catching) ck_sigint_catch_end();
    w->catching = 0;
}

/* The ranks that have not reached this rank's barrier, "1, 3". */
static void laggards(shm_comm *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    uint64_t mine = atomic_load(&c->h->arrived[c->rank]);
    for (int k = 0; k < c->n && len + 16 < n; k++)
        if (atomic_load(&c->h->arrived[k]) < mine) len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? ", " : "", k);
    if (!len) snprintf(buf, n, "(none: a peer is slow in send/recv)");
}

/* One turn of a wait that has not ended: spin, yield, then sleep; now and
 * then check the abort flag, the deadline, the peers and Ctrl-C. */
static ck_status wait_step(shm_comm *c, waiter *w, const char *what)
{
    w->spins++;
    if (w->spins < 200) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return CK_OK;
    }
    if (w->spins < 2000) {
        sched_yield();
    } else {
        struct timespec ts = {0, w->spins < 20000 ? 20000 : 200000};
        nanosleep(&ts, NULL);
    }
    if ((w->spins & 31) != 0) return CK_OK;
    ck_status s = aborted(c);
    if (s != CK_OK) return s;
    double t = now_s();
    if (!w->catching && w->spins > 4000) w->catching = ck_sigint_catch_begin();
    if (ck_sigint_count() != w->sigints) {
        ck_sigint_reported();
        fail_all(c, CK_ERR_INTERRUPT, "rank %d was interrupted (Ctrl-C) in %s", c->rank, what);
        return ck_error_set(CK_ERR_INTERRUPT, "%s on rank %d was interrupted", what, c->rank);
    }
    if (t < w->next_check) return CK_OK;
    w->next_check = t + 0.05;
    pid_t me = getpid();
    for (int k = 0; k < c->n; k++) {
        pid_t p = atomic_load(&c->h->pid[k]);
        if (p > 0 && p != me && kill(p, 0) < 0 && errno == ESRCH)
            return fail_all(c, CK_ERR_RUNTIME, "rank %d (process %d) exited while rank %d was in %s", k, (int)p,
                            c->rank, what);
    }
    if (t > w->deadline) {
        char who[256];
        laggards(c, who, sizeof who);
        return fail_all(c, CK_ERR_TIMEOUT, "rank %d timed out after %g s in %s waiting for rank(s) %s (every rank "
                        "must make the same calls in the same order; the limit is cudakit.distributed's timeout, "
                        "or CUDAKIT_COMM_TIMEOUT)", c->rank, ck_comm_timeout_get(), what, who);
    }
    return CK_OK;
}

/* Every rank has come (a sense-reversing barrier).  A communicator broken
 * before this rank came is an error at once; one broken after every rank
 * came is not this barrier's (a rank slow to see the sense flip while the
 * others go on and fail a later call reports that call's failure there). */
static ck_status barrier(shm_comm *c, const char *what)
{
    shm_hdr *h = c->h;
    ck_status s = aborted(c);
    if (s != CK_OK) return s;
    uint32_t sense = c->sense ^= 1u;
    atomic_store(&h->arrived[c->rank], ++c->barriers);
    if (atomic_fetch_add(&h->bar_count, 1u) == (uint32_t)c->n - 1) {
        atomic_store(&h->bar_count, 0u);
        atomic_store(&h->bar_sense, sense);
        return CK_OK;
    }
    waiter w;
    waiter_init(&w);
    while (atomic_load(&h->bar_sense) != sense)
        if ((s = wait_step(c, &w, what)) != CK_OK) break;
    waiter_done(&w);
    if (s != CK_OK && atomic_load(&h->bar_sense) == sense) {
        ck_error_clear();    /* met: the failure was a later call's */
        s = CK_OK;
    }
    return s;
}

/* ---------------------------------------------------------- reductions */

typedef void (*reduce_fn)(char *dst, char *const *src, int n, size_t len, ck_comm_op op);

/* dst = src[0] op src[1] op ... in rank order; dst may be src[0].  Floats
 * are combined in their compute type (float for float16) and rounded each
 * step, as NCCL does; max and min keep a NaN. */
#define CK_SHM_RED_F_(ID, S, C, U)                                                            \
    static void red_##ID(char *dst, char *const *src, int n, size_t len, ck_comm_op op)       \
    {                                                                                         \
        S *d = (S *)dst;                                                                      \
        if (dst != src[0]) memcpy(dst, src[0], len * sizeof(S));                              \
        for (int k = 1; k < n; k++) {                                                         \
            const S *x = (const S *)src[k];                                                   \
            switch (op) {                                                                     \
            case CK_COMM_PROD:                                                                \
                for (size_t i = 0; i < len; i++) d[i] = (S)((C)d[i] * (C)x[i]);               \
                break;                                                                        \
            case CK_COMM_MAX:                                                                 \
                for (size_t i = 0; i < len; i++) {                                            \
                    C a = (C)d[i], b = (C)x[i];                                               \
                    d[i] = (S)(b > a || b != b ? b : a);                                      \
                }                                                                             \
                break;                                                                        \
            case CK_COMM_MIN:                                                                 \
                for (size_t i = 0; i < len; i++) {                                            \
                    C a = (C)d[i], b = (C)x[i];                                               \
                    d[i] = (S)(b < a || b != b ? b : a);                                      \
                }                                                                             \
                break;                                                                        \
            default:                                                                          \
                for (size_t i = 0; i < len; i++) d[i] = (S)((C)d[i] + (C)x[i]);               \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        if (op == CK_COMM_AVG)                                                                \
            for (size_t i = 0; i < len; i++) d[i] = (S)((C)d[i] / (C)n);                      \
    }
/* Integers wrap (sums and products in the unsigned type); avg is the sum
 * divided by n, truncated. */
#define CK_SHM_RED_I_(ID, S, C, U)                                                            \
    static void red_##ID(char *dst, char *const *src, int n, size_t len, ck_comm_op op)       \
    {                                                                                         \
        S *d = (S *)dst;                                                                      \
        if (dst != src[0]) memcpy(dst, src[0], len * sizeof(S));                              \
        for (int k = 1; k < n; k++) {                                                         \
            const S *x = (const S *)src[k];                                                   \
            switch (op) {                                                                     \
            case CK_COMM_PROD:                                                                \
                for (size_t i = 0; i < len; i++) d[i] = (S)((U)d[i] * (U)x[i]);               \
                break;                                                                        \
            case CK_COMM_MAX:                                                                 \
                for (size_t i = 0; i < len; i++) d[i] = x[i] > d[i] ? x[i] : d[i];            \
                break;                                                                        \
            case CK_COMM_MIN:                                                                 \
                for (size_t i = 0; i < len; i++) d[i] = x[i] < d[i] ? x[i] : d[i];            \
                break;                                                                        \
            default:                                                                          \
                for (size_t i = 0; i < len; i++) d[i] = (S)((U)d[i] + (U)x[i]);               \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        if (op == CK_COMM_AVG)                                                                \
            for (size_t i = 0; i < len; i++) d[i] = (S)(d[i] / (S)n);                         \
    }
#define CK_SHM_RED_NONE_(ID, S, C, U)
#define CK_SHM_RED_ROW_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_KIND_PICK_##K(CK_SHM_RED_NONE_, CK_SHM_RED_I_, CK_SHM_RED_I_, CK_SHM_RED_F_, CK_SHM_RED_NONE_)(ID, S, C, U)
CK_DTYPES(CK_SHM_RED_ROW_, 0)

/* bool and complex are reduced as uint8 and pairs of reals (comm.c) */
static const reduce_fn reducers[CK_NTYPES] = {
#define CK_SHM_RED_ENTRY_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_KIND_PICK_##K(NULL, red_##ID, red_##ID, red_##ID, NULL),
    CK_DTYPES(CK_SHM_RED_ENTRY_, 0)
#undef CK_SHM_RED_ENTRY_
};

/* ------------------------------------------------------------- lifetime */

static void seg_name(const ck_comm_id *id, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "/cudakit-comm-");
    const size_t m = sizeof CK_COMM_SHM_MAGIC - 1;
    for (size_t i = 0; i < 16 && len + 3 < n; i++) len += (size_t)snprintf(buf + len, n - len, "%02x", id->bytes[m + i]);
}

static ck_status shm_unique_id(ck_comm_id *out)
{
    const size_t m = sizeof CK_COMM_SHM_MAGIC - 1;
    memcpy(out->bytes, CK_COMM_SHM_MAGIC, m);
    unsigned char *r = out->bytes + m;
    size_t want = 24, got = 0;
    while (got < want) {
        ssize_t k = getrandom(r + got, want - got, 0);
        if (k < 0) {
            if (errno == EINTR) continue;
            /* no getrandom: the clock, the pid and a counter are unique enough on one machine */
            static _Atomic unsigned counter;
            uint64_t v[3] = {ck_now_ns(), (uint64_t)getpid(), atomic_fetch_add(&counter, 1u)};
            memcpy(r, v, sizeof v);
            break;
        }
        got += (size_t)k;
    }
    return CK_OK;
}

static ck_status shm_open_segment(shm_comm *c, const ck_comm_id *id, int rank, int n)
{
    seg_name(id, c->name, sizeof c->name);
    int fd = shm_open(c->name, O_CREAT | O_RDWR, 0600);
    if (fd < 0)
        return ck_error_set(CK_ERR_RUNTIME, "shm_open(%s) failed: %s (a CPU communicator needs POSIX shared memory, "
                            "/dev/shm)", c->name, strerror(errno));
    size_t need = seg_bytes_for(n);
    struct stat st;
    /* grown, never shrunk: a rank that names another n fails below without
     * cutting the others' mappings short */
    if (fstat(fd, &st) == 0 && (size_t)st.st_size < need && ftruncate(fd, (off_t)need) != 0) {
        int e = errno;
        close(fd);
        return ck_error_set(CK_ERR_MEMORY, "could not size the shared memory of a communicator (%zu bytes in "
                            "/dev/shm): %s", need, strerror(e));
    }
    void *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return ck_error_set(CK_ERR_MEMORY, "mmap of a communicator's shared memory failed: %s", strerror(e));
    c->h = p;
    c->map_bytes = need;
    c->rank = rank;
    c->n = n;
    c->slot_bytes = slot_bytes_for(n);
    c->ring_bytes = ring_bytes_for(n);
    c->slots = (char *)p + hdr_bytes_for(n);
    c->rings = c->slots + (size_t)n * c->slot_bytes;
    return CK_OK;
}

static void shm_close(shm_comm *c)
{
    if (c->h) munmap(c->h, c->map_bytes);
    free(c);
}

static ck_status shm_init_rank(ck_comm *cc, const ck_comm_id *id)
{
    shm_comm *c = calloc(1, sizeof *c);
    if (!c) return ck_error_set(CK_ERR_MEMORY, "out of memory for a communicator");
    ck_status s = shm_open_segment(c, id, cc->rank, cc->size);
    if (s != CK_OK) {
        free(c);
        return s;
    }
    shm_hdr *h = c->h;
    uint32_t expect = 0;
    if (!atomic_compare_exchange_strong(&h->n_ranks, &expect, (uint32_t)cc->size) && expect != (uint32_t)cc->size) {
        s = fail_all(c, CK_ERR_VALUE, "rank %d joined a communicator of %u ranks saying it has %d", cc->rank, expect,
                     cc->size);
        shm_unlink(c->name);
        shm_close(c);
        return s;
    }
    uint32_t zero = 0;
    if (!atomic_compare_exchange_strong(&h->claimed[cc->rank], &zero, 1u)) {
        s = fail_all(c, CK_ERR_VALUE, "two processes joined as rank %d (process %d and process %d): every rank "
                     "joins once", cc->rank, (int)atomic_load(&h->pid[cc->rank]), (int)getpid());
        shm_unlink(c->name);
        shm_close(c);
        return s;
    }
    atomic_store(&h->pid[cc->rank], (int32_t)getpid());
    s = barrier(c, "init_rank (waiting for every rank to join)");
    /* everyone has it mapped: the name can go, and nothing is left in
     * /dev/shm whatever happens next */
    if (cc->rank == 0 || s != CK_OK) shm_unlink(c->name);
    if (s != CK_OK) {
        shm_close(c);
        return s;
    }
    cc->impl = c;
    return CK_OK;
}

typedef struct init_job {
    ck_comm *c;
    const ck_comm_id *id;
    ck_status s;
    char msg[512];
} init_job;

static void *init_thread(void *arg)
{
    init_job *j = arg;
    j->s = shm_init_rank(j->c, j->id);
    if (j->s != CK_OK) snprintf(j->msg, sizeof j->msg, "%s", ck_error_message());
    return NULL;
}

/* n ranks of one new segment, each joining from a thread of its own */
static ck_status shm_init_all(ck_comm **cs, int n)
{
    ck_comm_id id;
    shm_unique_id(&id);
    init_job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!jobs || !th) {
        free(jobs);
        free(th);
        return ck_error_set(CK_ERR_MEMORY, "out of memory for init_all");
    }
    int started = 0;
    for (int i = 0; i < n; i++) {
        jobs[i] = (init_job){cs[i], &id, CK_OK, ""};
        if (pthread_create(&th[i], NULL, init_thread, &jobs[i]) != 0) break;
        started++;
    }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    ck_status s = started < n ? ck_error_set(CK_ERR_RUNTIME, "init_all could not start its threads") : CK_OK;
    for (int i = 0; i < started && s == CK_OK; i++)
        if (jobs[i].s != CK_OK) s = ck_error_set(jobs[i].s, "%s", jobs[i].msg);
    if (s != CK_OK)
        for (int i = 0; i < started; i++)
            if (jobs[i].s == CK_OK && cs[i]->impl) {
                shm_close(cs[i]->impl);
                cs[i]->impl = NULL;
            }
    free(jobs);
    free(th);
    return s;
}

static ck_status shm_destroy(ck_comm *cc)
{
    if (cc->impl) shm_close(cc->impl);
    cc->impl = NULL;
    return CK_OK;
}

static ck_status shm_abort(ck_comm *cc)
{
    shm_comm *c = cc->impl;
    if (c) {
        fail_all(c, CK_ERR_RUNTIME, "rank %d aborted the communicator", c->rank);
        ck_error_clear();
        shm_close(c);
    }
    cc->impl = NULL;
    return CK_OK;
}

/* ---------------------------------------------------------- collectives */

static void meta_str(const shm_meta *m, char *buf, size_t n)
{
    const char *dt = (unsigned)m->dtype < CK_NTYPES ? ck_dtype_get_info((ck_dtype)m->dtype)->name : "?";
    const char *kind = (unsigned)m->kind < K_COUNT ? kind_names[m->kind] : "?";
    if (m->kind == K_BARRIER) snprintf(buf, n, "barrier()");
    else if (m->kind == K_BROADCAST || m->kind == K_ALL_GATHER)
        snprintf(buf, n, "%s(%s[%llu]%s%d)", kind, dt, (unsigned long long)m->count,
                 m->kind == K_BROADCAST ? ", root=" : "", m->kind == K_BROADCAST ? m->root : 0);
    else if (m->kind == K_REDUCE)
        snprintf(buf, n, "%s(%s[%llu], %s, root=%d)", kind, dt, (unsigned long long)m->count,
                 (unsigned)m->op < CK_COMM_OP_COUNT ? op_names[m->op] : "?", m->root);
    else
        snprintf(buf, n, "%s(%s[%llu], %s)", kind, dt, (unsigned long long)m->count,
                 (unsigned)m->op < CK_COMM_OP_COUNT ? op_names[m->op] : "?");
    if (m->kind == K_ALL_GATHER) {
        size_t l = strlen(buf);
        if (l > 1) buf[l - 1] = 0;
        snprintf(buf + strlen(buf), n - strlen(buf), ")");
    }
}

/* Say what this rank is in, wait for all, and check they all say the same. */
static ck_status coll_begin(shm_comm *c, int kind, ck_dtype dt, int op, int root, size_t count)
{
    ck_status s = aborted(c);
    if (s != CK_OK) return s;
    uint64_t seq = ++c->seq;
    shm_meta *mine = &c->h->meta[seq & 1][c->rank];
    *mine = (shm_meta){seq, kind, (int32_t)dt, op, root, (uint64_t)count};
    if (kind == K_BROADCAST || kind == K_ALL_GATHER) mine->op = 0;
    if (kind != K_BROADCAST && kind != K_REDUCE) mine->root = 0;
    s = barrier(c, kind_names[kind]);
    if (s != CK_OK) return s;
    const shm_meta *m0 = &c->h->meta[seq & 1][0];
    for (int k = 1; k < c->n; k++) {
        const shm_meta *mk = &c->h->meta[seq & 1][k];
        if (mk->kind != m0->kind || mk->dtype != m0->dtype || mk->op != m0->op || mk->root != m0->root ||
            mk->count != m0->count) {
            char a[160], b[160];
            meta_str(m0, a, sizeof a);
            meta_str(mk, b, sizeof b);
            return ck_error_set(CK_ERR_VALUE, "%s: the ranks' calls do not match: rank 0 called %s, rank %d "
                                "called %s (every rank makes the same collective calls, in the same order, on "
                                "arrays of one size and dtype)", kind_names[kind], a, k, b);
        }
    }
    return CK_OK;
}

/* this rank's share [lo, hi) of m elements, in whole cache lines */
static void share(shm_comm *c, size_t m, size_t es, size_t *lo, size_t *hi)
{
    size_t line = es >= 64 ? 1 : 64 / es;
    size_t per = (m + (size_t)c->n - 1) / (size_t)c->n;
    per = (per + line - 1) / line * line;
    *lo = per * (size_t)c->rank < m ? per * (size_t)c->rank : m;
    *hi = *lo + per < m ? *lo + per : m;
}

#define CK_SHM_TRY_(x)                   \
    do {                                 \
        ck_status st_ = (x);             \
        if (st_ != CK_OK) return st_;    \
    } while (0)

/* all_reduce, and reduce (the result copied out at root only) */
static ck_status reduce_common(shm_comm *c, int kind, const void *send, void *recv, size_t count, ck_dtype dt,
                               ck_comm_op op, int root)
{
    CK_SHM_TRY_(coll_begin(c, kind, dt, op, root, count));
    size_t es = (size_t)ck_dtype_get_info(dt)->itemsize, per = c->slot_bytes / es;
    reduce_fn f = reducers[dt];
    char *srcs[CK_COMM_MAX_RANKS];
    const char *what = kind_names[kind];
    for (size_t off = 0; off < count; off += per) {
        size_t m = count - off < per ? count - off : per, lo, hi;
        memcpy(slot(c, c->rank), (const char *)send + off * es, m * es);
        CK_SHM_TRY_(barrier(c, what));
        share(c, m, es, &lo, &hi);
        for (int k = 0; k < c->n; k++) srcs[k] = slot(c, k) + lo * es;
        if (hi > lo) f(srcs[0], srcs, c->n, hi - lo, op);
        CK_SHM_TRY_(barrier(c, what));
        if (kind == K_ALL_REDUCE || c->rank == root) memcpy((char *)recv + off * es, slot(c, 0), m * es);
        CK_SHM_TRY_(barrier(c, what));
    }
    return CK_OK;
}

static ck_status run_broadcast(shm_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root)
{
    CK_SHM_TRY_(coll_begin(c, K_BROADCAST, dt, 0, root, count));
    size_t bytes = count * (size_t)ck_dtype_get_info(dt)->itemsize;
    for (size_t off = 0; off < bytes; off += c->slot_bytes) {
        size_t m = bytes - off < c->slot_bytes ? bytes - off : c->slot_bytes;
        if (c->rank == root) memcpy(slot(c, 0), (const char *)send + off, m);
        CK_SHM_TRY_(barrier(c, "broadcast"));
        if (c->rank != root) memcpy((char *)recv + off, slot(c, 0), m);
        else if (recv != send) memmove((char *)recv + off, (const char *)send + off, m);
        CK_SHM_TRY_(barrier(c, "broadcast"));
    }
    return CK_OK;
}

static ck_status run_all_gather(shm_comm *c, const void *send, void *recv, size_t count, ck_dtype dt)
{
    CK_SHM_TRY_(coll_begin(c, K_ALL_GATHER, dt, 0, 0, count));
    size_t bytes = count * (size_t)ck_dtype_get_info(dt)->itemsize;
    for (size_t off = 0; off < bytes; off += c->slot_bytes) {
        size_t m = bytes - off < c->slot_bytes ? bytes - off : c->slot_bytes;
        memcpy(slot(c, c->rank), (const char *)send + off, m);
        CK_SHM_TRY_(barrier(c, "all_gather"));
        for (int k = 0; k < c->n; k++) memcpy((char *)recv + (size_t)k * bytes + off, slot(c, k), m);
        CK_SHM_TRY_(barrier(c, "all_gather"));
    }
    return CK_OK;
}

static ck_status run_reduce_scatter(shm_comm *c, const void *send, void *recv, size_t count, ck_dtype dt,
                                    ck_comm_op op)
{
    CK_SHM_TRY_(coll_begin(c, K_REDUCE_SCATTER, dt, op, 0, count));
    size_t es = (size_t)ck_dtype_get_info(dt)->itemsize, per = c->slot_bytes / ((size_t)c->n * es);
    reduce_fn f = reducers[dt];
    char *srcs[CK_COMM_MAX_RANKS];
    for (size_t off = 0; off < count; off += per) {
        size_t m = count - off < per ? count - off : per;
        for (int k = 0; k < c->n; k++)
            memcpy(slot(c, c->rank) + (size_t)k * per * es, (const char *)send + ((size_t)k * count + off) * es, m * es);
        CK_SHM_TRY_(barrier(c, "reduce_scatter"));
        for (int k = 0; k < c->n; k++) srcs[k] = slot(c, k) + (size_t)c->rank * per * es;
        f((char *)recv + off * es, srcs, c->n, m, op);
        CK_SHM_TRY_(barrier(c, "reduce_scatter"));
    }
    return CK_OK;
}

/* ------------------------------------------------------------ send/recv */

/* A message is a header, then its bytes, through the sender's ring to the
 * receiver; the receiver checks the header against what it expects. */
#define CK_P2P_MAGIC 0x50324b43u   /* "CK2P" */
typedef struct p2p_hdr {
    uint32_t magic;
    int32_t dtype;
    uint64_t count;
} p2p_hdr;

typedef struct p2p_task {
    shm_comm *c;
    int is_send, peer;
    char *buf;
    size_t count, bytes;
    ck_dtype dt;
    p2p_hdr hdr;
    size_t done;        /* bytes of header + data through */
    int complete;
} p2p_task;

static shm_chan *chan_of(shm_comm *c, int src, int dst) { return &c->h->chan[src * c->n + dst]; }
static char *ring_of(shm_comm *c, int src, int dst) { return c->rings + ((size_t)src * c->n + dst) * c->ring_bytes; }

static void ring_put(char *ring, size_t rsize, uint64_t pos, const char *p, size_t n)
{
    size_t at = (size_t)(pos % rsize), first = rsize - at < n ? rsize - at : n;
    memcpy(ring + at, p, first);
    if (n > first) memcpy(ring, p + first, n - first);
}

static void ring_get(const char *ring, size_t rsize, uint64_t pos, char *p, size_t n)
{
    size_t at = (size_t)(pos % rsize), first = rsize - at < n ? rsize - at : n;
    memcpy(p, ring + at, first);
    if (n > first) memcpy(p + first, ring, n - first);
}

/* Move what can be moved now; 1 when something was. */
static int p2p_progress(p2p_task *t, ck_status *err)
{
    shm_comm *c = t->c;
    size_t total = sizeof(p2p_hdr) + t->bytes;
    if (t->complete) return 0;
    if (t->is_send) {
        shm_chan *ch = chan_of(c, c->rank, t->peer);
        uint64_t w = atomic_load_explicit(&ch->written, memory_order_relaxed);
        uint64_t r = atomic_load_explicit(&ch->read, memory_order_acquire);
        size_t space = c->ring_bytes - (size_t)(w - r);
        if (!space) return 0;
        char *ring = ring_of(c, c->rank, t->peer);
        size_t moved = 0;
        while (space && t->done < total) {
            const char *from;
            size_t avail;
            if (t->done < sizeof(p2p_hdr)) {
                from = (const char *)&t->hdr + t->done;
                avail = sizeof(p2p_hdr) - t->done;
            } else {
                from = t->buf + (t->done - sizeof(p2p_hdr));
                avail = total - t->done;
            }
            size_t k = avail < space ? avail : space;
            ring_put(ring, c->ring_bytes, w + moved, from, k);
            moved += k;
            space -= k;
            t->done += k;
        }
        atomic_store_explicit(&ch->written, w + moved, memory_order_release);
        if (t->done == total) t->complete = 1;
        return moved > 0;
    }
    shm_chan *ch = chan_of(c, t->peer, c->rank);
    uint64_t r = atomic_load_explicit(&ch->read, memory_order_relaxed);
    uint64_t w = atomic_load_explicit(&ch->written, memory_order_acquire);
    size_t avail = (size_t)(w - r);
    if (!avail) return 0;
    const char *ring = ring_of(c, t->peer, c->rank);
    size_t moved = 0;
    if (t->done < sizeof(p2p_hdr)) {
        if (avail < sizeof(p2p_hdr)) return 0;    /* the sender writes it at once */
        p2p_hdr h;
        ring_get(ring, c->ring_bytes, r, (char *)&h, sizeof h);
        if (h.magic != CK_P2P_MAGIC || h.dtype != t->hdr.dtype || h.count != t->hdr.count) {
            const char *sd = (unsigned)h.dtype < CK_NTYPES ? ck_dtype_get_info((ck_dtype)h.dtype)->name : "?";
            *err = fail_all(c, CK_ERR_VALUE, "recv: rank %d expects %s[%llu] from rank %d, which sent %s[%llu]",
                            c->rank, ck_dtype_get_info(t->dt)->name, (unsigned long long)t->count, t->peer, sd,
                            (unsigned long long)h.count);
            return 0;
        }
        moved = sizeof h;
        t->done = sizeof h;
        avail -= sizeof h;
    }
    size_t k = total - t->done < avail ? total - t->done : avail;
    if (k) ring_get(ring, c->ring_bytes, r + moved, t->buf + (t->done - sizeof(p2p_hdr)), k);
    moved += k;
    t->done += k;
    atomic_store_explicit(&ch->read, r + moved, memory_order_release);
    if (t->done == total) t->complete = 1;
    return 1;
}

/* Run p2p tasks to the end, each channel's in the order given. */
static ck_status p2p_run(p2p_task *ts, int n)
{
    if (!n) return CK_OK;
    waiter w;
    waiter_init(&w);
    ck_status s = CK_OK;
    for (;;) {
        int left = 0, moved = 0;
        for (int i = 0; i < n && s == CK_OK; i++) {
            if (ts[i].complete) continue;
            left++;
            int blocked = 0;
            for (int j = 0; j < i && !blocked; j++)
                blocked = !ts[j].complete && ts[j].c == ts[i].c && ts[j].is_send == ts[i].is_send &&
                          ts[j].peer == ts[i].peer;
            if (blocked) continue;
            if ((s = aborted(ts[i].c)) != CK_OK) break;
            moved |= p2p_progress(&ts[i], &s);
        }
        if (s != CK_OK || !left) break;
        if (moved) {
            w.spins = 0;
            continue;
        }
        for (int i = 0; i < n; i++)
            if (!ts[i].complete) {
                s = wait_step(ts[i].c, &w, ts[i].is_send ? "send" : "recv");
                break;
            }
        if (s != CK_OK) break;
    }
    waiter_done(&w);
    return s;
}

static p2p_task p2p_make(shm_comm *c, int is_send, const void *buf, size_t count, ck_dtype dt, int peer)
{
    p2p_task t = {c, is_send, peer, (char *)buf, count, count * (size_t)ck_dtype_get_info(dt)->itemsize, dt,
                  {CK_P2P_MAGIC, (int32_t)dt, (uint64_t)count}, 0, 0};
    return t;
}

/* --------------------------------------------------------------- groups
 * Inside a group the calls are kept, and run at its end: each
 * communicator's collectives in order, then their sends and receives
 * together; the communicators of one process (init_all's ranks) each from
 * a thread of its own. */

typedef struct shm_task {
    int kind;            /* K_* or -1 send, -2 recv */
    shm_comm *c;
    const void *send;
    void *recv;
    size_t count;
    ck_dtype dt;
    ck_comm_op op;
    int root;
} shm_task;

static _Thread_local shm_task *group_;
static _Thread_local int group_n_, group_cap_, group_on_;

static ck_status run_collective(const shm_task *t)
{
    switch (t->kind) {
    case K_ALL_REDUCE:
    case K_REDUCE:
        return reduce_common(t->c, t->kind, t->send, t->recv, t->count, t->dt, t->op, t->root);
    case K_BROADCAST:
        return run_broadcast(t->c, t->send, t->recv, t->count, t->dt, t->root);
    case K_ALL_GATHER:
        return run_all_gather(t->c, t->send, t->recv, t->count, t->dt);
    default:
        return run_reduce_scatter(t->c, t->send, t->recv, t->count, t->dt, t->op);
    }
}

/* The tasks of one communicator (or all, for one) */
typedef struct group_job {
    shm_task *ts;
    int n;
    shm_comm *only;      /* NULL: every task */
    ck_status s;
    char msg[512];
} group_job;

static void *group_run(void *arg)
{
    group_job *j = arg;
    ck_status s = CK_OK;
    int np = 0;
    for (int i = 0; i < j->n && s == CK_OK; i++) {
        if (j->only && j->ts[i].c != j->only) continue;
        if (j->ts[i].kind >= 0) s = run_collective(&j->ts[i]);
        else np++;
    }
    if (s == CK_OK && np) {
        p2p_task *ps = calloc((size_t)np, sizeof *ps);
        if (!ps) s = ck_error_set(CK_ERR_MEMORY, "out of memory for a group's send/recv");
        int k = 0;
        for (int i = 0; ps && i < j->n; i++) {
            const shm_task *t = &j->ts[i];
            if ((j->only && t->c != j->only) || t->kind >= 0) continue;
            ps[k++] = p2p_make(t->c, t->kind == -1, t->kind == -1 ? t->send : t->recv, t->count, t->dt, t->root);
        }
        if (ps) s = p2p_run(ps, np);
        free(ps);
    }
    j->s = s;
    if (s != CK_OK) snprintf(j->msg, sizeof j->msg, "%s", ck_error_message());
    return NULL;
}

static ck_status shm_group_start(void)
{
    group_on_ = 1;
    group_n_ = 0;
    return CK_OK;
}

static ck_status shm_group_end(void)
{
    group_on_ = 0;
    int n = group_n_;
    group_n_ = 0;
    if (!n) return CK_OK;
    shm_comm *comms[CK_COMM_MAX_RANKS];
    int nc = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int k = 0; k < nc && !seen; k++) seen = comms[k] == group_[i].c;
        if (!seen && nc < CK_COMM_MAX_RANKS) comms[nc++] = group_[i].c;
    }
    if (nc == 1) {
        group_job j = {group_, n, NULL, CK_OK, ""};
        group_run(&j);
        return j.s == CK_OK ? CK_OK : ck_error_set(j.s, "%s", j.msg);
    }
    group_job jobs[CK_COMM_MAX_RANKS];
    pthread_t th[CK_COMM_MAX_RANKS];
    int started = 0;
    for (int k = 0; k < nc; k++) {
        jobs[k] = (group_job){group_, n, comms[k], CK_OK, ""};
        if (pthread_create(&th[k], NULL, group_run, &jobs[k]) != 0) {
            fail_all(comms[k], CK_ERR_RUNTIME, "group_end could not start a thread");
            break;
        }
        started++;
    }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < started; k++)
        if (jobs[k].s != CK_OK) return ck_error_set(jobs[k].s, "%s", jobs[k].msg);
    return started < nc ? ck_error_set(CK_ERR_RUNTIME, "group_end could not start its threads") : CK_OK;
}

/* Keep the call for the group's end, or run it now. */
static ck_status submit(shm_task t)
{
    if (!t.c) return ck_error_set(CK_ERR_VALUE, "the communicator was destroyed");
    if (group_on_) {
        if (group_n_ == group_cap_) {
            int cap = group_cap_ ? group_cap_ * 2 : 16;
            shm_task *g = realloc(group_, (size_t)cap * sizeof *g);
            if (!g) return ck_error_set(CK_ERR_MEMORY, "out of memory for a group's calls");
            group_ = g;
            group_cap_ = cap;
        }
        group_[group_n_++] = t;
        return CK_OK;
    }
    if (t.kind >= 0) return run_collective(&t);
    p2p_task p = p2p_make(t.c, t.kind == -1, t.kind == -1 ? t.send : t.recv, t.count, t.dt, t.root);
    return p2p_run(&p, 1);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static ck_status shm_all_reduce(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                                ck_stream s)
{
    return submit((shm_task){K_ALL_REDUCE, c->impl, send, recv, count, dt, op, 0});
}

static ck_status shm_reduce(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                            int root, ck_stream s)
{
    return submit((shm_task){K_REDUCE, c->impl, send, recv, count, dt, op, root});
}

static ck_status shm_broadcast(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root,
                               ck_stream s)
{
    return submit((shm_task){K_BROADCAST, c->impl, send, recv, count, dt, CK_COMM_SUM, root});
}

static ck_status shm_all_gather(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_stream s)
{
    return submit((shm_task){K_ALL_GATHER, c->impl, send, recv, count, dt, CK_COMM_SUM, 0});
}

static ck_status shm_reduce_scatter(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt,
                                    ck_comm_op op, ck_stream s)
{
    return submit((shm_task){K_REDUCE_SCATTER, c->impl, send, recv, count, dt, op, 0});
}

static ck_status shm_send(ck_comm *c, const void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    return submit((shm_task){-1, c->impl, buf, NULL, count, dt, CK_COMM_SUM, peer});
}

static ck_status shm_recv(ck_comm *c, void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    return submit((shm_task){-2, c->impl, NULL, buf, count, dt, CK_COMM_SUM, peer});
}
#pragma GCC diagnostic pop

static ck_status shm_barrier(ck_comm *cc)
{
    shm_comm *c = cc->impl;
    if (!c) return ck_error_set(CK_ERR_VALUE, "barrier: the communicator was destroyed");
    return coll_begin(c, K_BARRIER, CK_UINT8, 0, 0, 0);
}

const ck_comm_iface ck_comm_shm = {
    /* .name           = */ "shm",
    /* .unique_id      = */ shm_unique_id,
    /* .init_rank      = */ shm_init_rank,
    /* .init_all       = */ shm_init_all,
    /* .destroy        = */ shm_destroy,
    /* .abort          = */ shm_abort,
    /* .all_reduce     = */ shm_all_reduce,
    /* .reduce         = */ shm_reduce,
    /* .broadcast      = */ shm_broadcast,
    /* .all_gather     = */ shm_all_gather,
    /* .reduce_scatter = */ shm_reduce_scatter,
    /* .send           = */ shm_send,
    /* .recv           = */ shm_recv,
    /* .barrier        = */ shm_barrier,
    /* .group_start    = */ shm_group_start,
    /* .group_end      = */ shm_group_end,
};
