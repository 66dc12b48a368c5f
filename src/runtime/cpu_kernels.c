/* User CUDA C kernels on the CPU (see cpu_kernels.h and cuda_compat.hpp).
 *
 * Load: the source is scanned once (kernel names, extern __shared__
 * declarations rewritten to pointers, whether anything needs a barrier),
 * wrapped with our CUDA-compatibility header and a table of entry points,
 * compiled by the system C++ compiler into a shared object kept in the
 * disk cache of kcache.c, and dlopen'd.
 *
 * Launch: blocks are spread over the thread pool; each worker runs whole
 * blocks.  A module with no barrier or warp function anywhere in its source
 * runs each block as a plain loop over its threads inside the shared object
 * (the kernel inlined into it).  Otherwise the threads of a block are
 * fibers on the worker's OS thread, switched at barriers: a fiber that
 * reaches one records what it brought, and the last to arrive computes
 * everyone's result and makes them runnable again. */
#define _GNU_SOURCE
#include "cpu_kernels.h"
#include "kcache_disk.h"
#include "parallel.h"
#include "../base/hash.h"
#include "../base/sbuf.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
extern const char ck_src_cuda_compat[];
extern const size_t ck_src_cuda_compat_len;

/* Bump when anything folded into a module's cache key changes meaning
 * (the generated wrapper, the stub headers, the compile flags). */
#define CK_CPU_FORMAT_VERSION 1u
#define CK_CPU_ABI_VERSION 1 /* CK_CUDA_COMPAT_VERSION of cuda_compat.hpp */
#define CK_CPU_MAX_DYN_SHARED (227u * 1024u) /* an H100/H200's opt-in maximum */
#define CK_CPU_STACK_SIZE (64u * 1024u)
#define CK_CPU_MSG_MAX 7900
#define CK_CPU_LOG_MAX 3500
#define CK_CPU_CONTEXT 3
#define CK_CPU_MAX_ERR_LINES 6
#define CK_CPU_FILE "kernel.cu"

/* ----------------------------------------------- layout shared with the .so */

typedef struct { unsigned x, y, z; } ck_u3;
typedef struct ck_cpu_ctx { /* ck__ctx_t */
    ck_u3 tid, bid, bdim, gdim;
    void *dyn_smem;
    void *sched;
} ck_cpu_ctx;
typedef struct ck_cpu_api { /* ck__api_t */
    unsigned long long (*sync)(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width);
    void (*fail)(const char *what, const char *file, int line);
} ck_cpu_api;
typedef struct ck_cpu_kdesc { /* ck__kdesc */
    const char *name;
    void (*thread)(void **);
    void (*block)(void **);
    int (*params)(size_t *sizes, int max);
} ck_cpu_kdesc;

enum { /* CK__OP_* */
    CK_OP_SYNCTHREADS = 0, CK_OP_SYNC_COUNT, CK_OP_SYNC_AND, CK_OP_SYNC_OR,
    CK_OP_SYNCWARP = 16, CK_OP_SHFL, CK_OP_SHFL_UP, CK_OP_SHFL_DOWN, CK_OP_SHFL_XOR,
    CK_OP_BALLOT, CK_OP_ANY, CK_OP_ALL, CK_OP_ACTIVEMASK, CK_OP_MATCH_ANY, CK_OP_MATCH_ALL,
    CK_OP_RED_ADD, CK_OP_RED_MIN_U, CK_OP_RED_MAX_U, CK_OP_RED_MIN_I, CK_OP_RED_MAX_I,
    CK_OP_RED_AND, CK_OP_RED_OR, CK_OP_RED_XOR
};

struct ck_cpu_function {
    ck_cpu_module *mod;
    const char *name;
    void (*thread)(void **);
    void (*block)(void **);
    int nparams;
    size_t *sizes;
    size_t static_shared; /* bytes of the kernel's own __shared__ variables */
};

struct ck_cpu_module {
    void *dl;
    int memfd; /* -1 or the memfd the library was loaded from */
    ck_cpu_ctx *(*get_ctx)(void);
    int fibers;      /* the source has barriers or warp functions (or might) */
    int uses_printf; /* flush stdout after each launch */
    int from_disk;
    double load_ms;
    int nfuncs;
    ck_cpu_function *funcs;
};

static double ck_cpu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ===================================================== source scanning */

typedef struct ck_srcscan {
    ck_sbuf out;      /* the source with extern __shared__ rewritten, same lines */
    char **names;     /* extern "C" __global__ functions */
    int nnames, capnames;
    int barriers;     /* mentions a barrier, a warp function, token pasting or a local include */
    int uses_printf;
} ck_srcscan;

static int ck_is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int ck_is_id(char c) { return ck_is_id0(c) || (c >= '0' && c <= '9'); }

static const char *ck_skip_ws(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

static int ck_tok_is(const char *p, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(p, word, n) && !ck_is_id(p[n]);
}

/* Past a balanced (...) starting at p (which must be '('). */
static const char *ck_skip_parens(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '(') depth++;
        else if (*p == ')' && --depth == 0) return p + 1;
    }
    return p;
}

static void ck_scan_add_name(ck_srcscan *s, const char *name, size_t n)
{
    for (int i = 0; i < s->nnames; i++)
        if (strlen(s->names[i]) == n && !strncmp(s->names[i], name, n)) return;
    if (s->nnames == s->capnames) {
        int cap = s->capnames ? 2 * s->capnames : 8;
        char **p = realloc(s->names, sizeof *p * (size_t)cap);
        if (!p) return;
        s->names = p;
        s->capnames = cap;
    }
    char *c = strndup(name, n);
    if (c) s->names[s->nnames++] = c;
}

/* After __global__: the function's name is the identifier before the
 * first '(' that does not open an attribute's arguments. */
static void ck_scan_kernel(ck_srcscan *s, const char *p)
{
    const char *last = NULL;
    size_t lastn = 0;
    for (;;) {
        p = ck_skip_ws(p);
        if (!*p || *p == ';' || *p == '{') return;
        if (ck_is_id0(*p)) {
            const char *b = p;
            while (ck_is_id(*p)) p++;
            if ((ck_tok_is(b, "__launch_bounds__") || ck_tok_is(b, "__attribute__") || ck_tok_is(b, "alignas") ||
                 ck_tok_is(b, "__align__") || ck_tok_is(b, "__declspec"))) {
                p = ck_skip_ws(p);
                if (*p == '(') p = ck_skip_parens(p);
                continue;
            }
            last = b;
            lastn = (size_t)(p - b);
        } else if (*p == '(') {
            if (last) ck_scan_add_name(s, last, lastn);
            return;
        } else {
            p++;
        }
    }
}

/* `extern __shared__ T name[];` (p at "extern", q past "__shared__"):
 * inside a function a pointer to this block's dynamic shared memory, at
 * namespace scope an object that converts to one.  Newlines are kept so
 * line numbers still match the user's source.  Returns the end (past ';')
 * or NULL when the declaration is not of that form. */
static const char *ck_scan_extern_shared(ck_srcscan *s, const char *q, int in_function)
{
    const char *semi = strchr(q, ';');
    if (!semi) return NULL;
    const char *br = NULL;
    for (const char *t = q; t < semi; t++)
        if (*t == '[') br = t;
    if (!br) return NULL;
    const char *ne = br;
    while (ne > q && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
    const char *nb = ne;
    while (nb > q && ck_is_id(nb[-1])) nb--;
    if (nb == ne) return NULL;
    /* The type, without alignment attributes (they cannot appear in a cast). */
    ck_sbuf type = {0};
    int newlines = 0;
    for (const char *t = q; t < nb;) {
        if (*t == '\n') newlines++;
        if (ck_is_id0(*t) && (t == q || !ck_is_id(t[-1])) &&
            (ck_tok_is(t, "__align__") || ck_tok_is(t, "alignas") || ck_tok_is(t, "__attribute__"))) {
            while (ck_is_id(*t)) t++;
            const char *u = ck_skip_ws(t);
            if (*u == '(') t = ck_skip_parens(u);
            continue;
        }
        ck_sbuf_printf(&type, "%c", *t == '\n' ? ' ' : *t);
        t++;
    }
    for (const char *t = nb; t < semi; t++) newlines += *t == '\n';
    const char *ty = type.s ? type.s : "char";
    if (in_function)
        ck_sbuf_printf(&s->out, "%s *const %.*s = reinterpret_cast<%s *>(ck__dyn_smem());", ty, (int)(ne - nb), nb,
                       ty);
    else
        ck_sbuf_printf(&s->out, "static ck__dyn_shared<%s> %.*s;", ty, (int)(ne - nb), nb);
    for (int i = 0; i < newlines; i++) ck_sbuf_printf(&s->out, "\n");
    free(type.s);
    return semi + 1;
}

static const char *const ck_barrier_words[] = {"__syncthreads", "__syncwarp", "__shfl", "__ballot_sync", "__any_sync",
                                               "__all_sync", "__uni_sync", "__match_", "__reduce_", "__activemask"};

/* Walks the source once, copying it to s->out.  Brace kinds tell function
 * bodies from namespace / extern "C" / class bodies. */
static int ck_scan_source(const char *src, ck_srcscan *s)
{
    enum { B_OTHER, B_FUNC, B_EXTERN_C };
    char kinds[256];
    int depth = 0, func_depth = 0, extern_c_depth = 0;
    int decl_extern_c = 0, decl_template = 0, line_start = 1;
    char prev = 0; /* last significant character outside comments */
    const char *p = src;
    while (*p) {
        char c = *p;
        if (c == '/' && p[1] == '/') {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            ck_sbuf_printf(&s->out, "%.*s", (int)n, p);
            p += n;
            continue;
        }
        if (c == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            size_t n = e ? (size_t)(e + 2 - p) : strlen(p);
            ck_sbuf_printf(&s->out, "%.*s", (int)n, p);
            p += n;
            continue;
        }
        if (c == '"' || c == '\'') {
            const char *e = p + 1;
            while (*e && *e != c && *e != '\n') e += (*e == '\\' && e[1]) ? 2 : 1;
            if (*e == c) e++;
            ck_sbuf_printf(&s->out, "%.*s", (int)(e - p), p);
            p = e;
            prev = c;
            line_start = 0;
            continue;
        }
        if (c == '#' && line_start) {
            /* A directive, continuation lines included.  A local include
             * might hide barriers from this scan; so might token pasting. */
            const char *e = p;
            while (*e && !(*e == '\n' && e[-1] != '\\')) e++;
            const char *d = ck_skip_ws(p + 1);
            if (ck_tok_is(d, "include") && *ck_skip_ws(d + 7) == '"') s->barriers = 1;
            for (const char *t = p; t < e; t++) {
                if (t[0] == '#' && t[1] == '#') s->barriers = 1;
                if (ck_is_id0(*t) && (t == p || !ck_is_id(t[-1])))
                    for (size_t i = 0; i < sizeof ck_barrier_words / sizeof *ck_barrier_words; i++)
                        if (!strncmp(t, ck_barrier_words[i], strlen(ck_barrier_words[i]))) s->barriers = 1;
            }
            ck_sbuf_printf(&s->out, "%.*s", (int)(e - p), p);
            p = e;
            continue;
        }
        if (c == '\n') line_start = 1;
        else if (c != ' ' && c != '\t' && c != '\r') line_start = 0;
        if (ck_is_id0(c)) {
            const char *b = p;
            while (ck_is_id(*p)) p++;
            size_t n = (size_t)(p - b);
            for (size_t i = 0; i < sizeof ck_barrier_words / sizeof *ck_barrier_words; i++)
                if (!strncmp(b, ck_barrier_words[i], strlen(ck_barrier_words[i]))) s->barriers = 1;
            if (n == 6 && !strncmp(b, "printf", 6)) s->uses_printf = 1;
            if (n == 8 && !strncmp(b, "template", 8)) decl_template = 1;
            if (n == 6 && !strncmp(b, "extern", 6)) {
                const char *q = ck_skip_ws(p);
                if (ck_tok_is(q, "__shared__")) {
                    const char *e = ck_scan_extern_shared(s, q + 10, func_depth > 0);
                    if (e) {
                        p = e;
                        prev = ';';
                        decl_extern_c = decl_template = 0;
                        continue;
                    }
                } else if (!strncmp(q, "\"C\"", 3)) {
                    const char *r = ck_skip_ws(q + 3);
                    if (*r == '{') {
                        ck_sbuf_printf(&s->out, "%.*s", (int)(r - b), b);
                        p = r; /* the brace below opens an extern "C" block */
                        prev = 'C';
                        continue;
                    }
                    decl_extern_c = 1;
                }
            }
            if (n == 10 && !strncmp(b, "__global__", 10) && !decl_template && (decl_extern_c || extern_c_depth > 0))
                ck_scan_kernel(s, p);
            ck_sbuf_printf(&s->out, "%.*s", (int)n, b);
            /* "f() const {" opens a function body like "f() {" */
            prev = (n == 5 && !strncmp(b, "const", 5)) || (n == 8 && !strncmp(b, "noexcept", 8)) ||
                           (n == 8 && !strncmp(b, "override", 8)) || (n == 5 && !strncmp(b, "final", 5))
                       ? ')'
                       : 'a';
            continue;
        }
        if (c == '{') {
            int kind = prev == 'C' ? B_EXTERN_C : (prev == ')' || func_depth > 0) ? B_FUNC : B_OTHER;
            if (depth < (int)sizeof kinds) kinds[depth] = (char)kind;
            depth++;
            if (kind == B_FUNC) func_depth++;
            if (kind == B_EXTERN_C) extern_c_depth++;
            decl_extern_c = decl_template = 0;
        } else if (c == '}') {
            if (depth > 0) {
                depth--;
                int kind = depth < (int)sizeof kinds ? kinds[depth] : B_OTHER;
                if (kind == B_FUNC) func_depth--;
                if (kind == B_EXTERN_C) extern_c_depth--;
            }
            decl_extern_c = decl_template = 0;
        } else if (c == ';') {
            decl_extern_c = decl_template = 0;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') prev = c;
        ck_sbuf_printf(&s->out, "%c", c);
        p++;
    }
    return s->out.failed ? -1 : 0;
}

static void ck_scan_free(ck_srcscan *s)
{
    free(s->out.s);
    for (int i = 0; i < s->nnames; i++) free(s->names[i]);
    free(s->names);
}

/* ======================================================= the compiler */

typedef struct ck_cxx {
    char **argv; /* the command's words, NULL-terminated */
    int argc;
    char *id;    /* what identifies this compiler in cache keys */
    int is_gcc;  /* takes -mtls-dialect=gnu2 (clang 14 does not) */
} ck_cxx;

static ck_cxx ck_cxx_;
static pthread_once_t ck_cxx_once = PTHREAD_ONCE_INIT;

static char *ck_which(const char *prog)
{
    if (strchr(prog, '/')) return access(prog, X_OK) == 0 ? realpath(prog, NULL) : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = strdup(path), *save = NULL, *res = NULL;
    if (!copy) return NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !res; d = strtok_r(NULL, ":", &save)) {
        char *full = NULL;
        if (asprintf(&full, "%s/%s", *d ? d : ".", prog) < 0) break;
        if (access(full, X_OK) == 0) res = realpath(full, NULL);
        free(full);
    }
    free(copy);
    return res;
}

static void ck_cxx_find(void)
{
    const char *env = getenv("CXX");
    const char *cands[] = {env && *env ? env : NULL, "g++", "clang++", "c++"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        if (!cands[i]) continue;
        char *words = strdup(cands[i]), *save = NULL;
        if (!words) return;
        char **argv = calloc(strlen(cands[i]) / 2 + 2, sizeof *argv);
        int argc = 0;
        for (char *w = strtok_r(words, " \t", &save); w && argv; w = strtok_r(NULL, " \t", &save))
            argv[argc++] = strdup(w);
        char *real = argc ? ck_which(argv[0]) : NULL;
        free(words);
        struct stat st;
        if (real && stat(real, &st) == 0) {
            char *id = NULL;
            if (asprintf(&id, "%s|%s|%lld|%lld|%lld", cands[i], real, (long long)st.st_size,
                         (long long)st.st_mtime, (long long)st.st_ino) >= 0) {
                ck_cxx_.argv = argv;
                ck_cxx_.argc = argc;
                ck_cxx_.id = id;
                const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
                ck_cxx_.is_gcc = (strstr(base, "g++") || strstr(base, "gcc")) && !strstr(base, "clang");
                free(real);
                return;
            }
        }
        free(real);
        for (int k = 0; argv && k < argc; k++) free(argv[k]);
        free(argv);
    }
}

/* NVRTC options mean something here or nothing: -D, -U, -I, -std, -include
 * and fast math carry over, the GPU-only rest is dropped.  Every string put
 * in out is malloc'd.  *local is set when an include path or a forced
 * include could hide barriers from the source scan. */
static int ck_map_options(const char *const *opts, int n, char **out, int *has_std, int *local)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        const char *o = opts[i];
        char *d = NULL;
        if (!o) continue;
        if (!strncmp(o, "-D", 2) || !strncmp(o, "-U", 2) || !strncmp(o, "-I", 2) || !strcmp(o, "-w")) {
            d = strdup(o);
            if (o[1] == 'I') *local = 1;
        } else if (!strncmp(o, "--define-macro=", 15)) {
            if (asprintf(&d, "-D%s", o + 15) < 0) d = NULL;
        } else if (!strncmp(o, "--undefine-macro=", 17)) {
            if (asprintf(&d, "-U%s", o + 17) < 0) d = NULL;
        } else if (!strncmp(o, "--include-path=", 15)) {
            if (asprintf(&d, "-I%s", o + 15) < 0) d = NULL;
            *local = 1;
        } else if (!strncmp(o, "-std=", 5) || !strncmp(o, "--std=", 6)) {
            if (asprintf(&d, "-std=%s", strchr(o, '=') + 1) < 0) d = NULL;
            *has_std = 1;
        } else if (!strncmp(o, "--pre-include=", 14) || !strncmp(o, "-include=", 9)) {
            out[k++] = strdup("-include");
            d = strdup(strchr(o, '=') + 1);
            *local = 1;
        } else if (!strcmp(o, "-use_fast_math") || !strcmp(o, "--use_fast_math")) {
            d = strdup("-ffast-math");
        } else if (!strcmp(o, "--disable-warnings")) {
            d = strdup("-w");
        } else {
            continue;
        }
        out[k++] = d;
    }
    return k;
}

static int ck_write_file(const char *dir, const char *name, const char *data, size_t n)
{
    char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, name) < 0) return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    free(path);
    if (fd < 0) return -1;
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return close(fd);
}

static char *ck_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    ck_sbuf b = {0};
    char chunk[65536];
    size_t r;
    size_t total = 0;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *s = realloc(b.s, total + r + 1);
        if (!s) {
            free(b.s);
            fclose(f);
            return NULL;
        }
        b.s = s;
        memcpy(b.s + total, chunk, r);
        total += r;
    }
    fclose(f);
    if (!b.s) b.s = calloc(1, 1);
    else b.s[total] = '\0';
    *n = total;
    return b.s;
}

static void ck_rm_tree(const char *dir)
{
    static const char *const files[] = {"module.cpp", "module.so", "compile.log", "cuda_compat.hpp",
                                        "cuda_runtime.h", "cuda.h", "cuda_fp16.h", "cuda_runtime_api.h",
                                        "device_launch_parameters.h", "math_constants.h"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s", dir, files[i]) >= 0) unlink(p);
        free(p);
    }
    rmdir(dir);
}

/* ------------------------------------------------------ compile errors */

static const char *ck_line_of(const char *src, long want, size_t *len)
{
    const char *p = src;
    for (long l = 1; l < want; l++) {
        p = strchr(p, '\n');
        if (!p) return NULL;
        p++;
    }
    if (!*p && want > 1) return NULL;
    const char *e = strchr(p, '\n');
    *len = e ? (size_t)(e - p) : strlen(p);
    return p;
}

static int ck_cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* "kernel.cu:12:5: error: ..." lines of the log (gcc and clang agree). */
static ck_status ck_cpu_compile_error(const char *source, const char *cxx, int status, const char *log)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "the C++ compiler (%s) could not compile the kernel for the CPU (exit status %d):\n", cxx, status);
    size_t ll = log ? strlen(log) : 0;
    if (ll > CK_CPU_LOG_MAX)
        ck_sbuf_printf(&b, "%.*s\n[... %zu more bytes of log ...]\n", CK_CPU_LOG_MAX, log, ll - CK_CPU_LOG_MAX);
    else if (ll)
        ck_sbuf_printf(&b, "%s%s", log, log[ll - 1] == '\n' ? "" : "\n");
    long err[CK_CPU_MAX_ERR_LINES];
    int nerr = 0;
    const size_t fl = strlen(CK_CPU_FILE);
    for (const char *p = log; p && *p && nerr < CK_CPU_MAX_ERR_LINES; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, CK_CPU_FILE, fl) || p[fl] != ':') continue;
        char *end;
        long line = strtol(p + fl + 1, &end, 10);
        if (end == p + fl + 1 || line <= 0) continue;
        if (*end == ':' && end[1] >= '0' && end[1] <= '9') strtol(end + 1, &end, 10);
        if (*end != ':') continue;
        const char *rest = end + 1;
        while (*rest == ' ') rest++;
        if (strncmp(rest, "error", 5) && strncmp(rest, "fatal error", 11)) continue;
        int seen = 0;
        for (int i = 0; i < nerr; i++) seen |= err[i] == line;
        if (!seen) err[nerr++] = line;
    }
    if (nerr) {
        qsort(err, (size_t)nerr, sizeof *err, ck_cmp_long);
        long shown = 0;
        ck_sbuf_printf(&b, "source around the error%s:\n", nerr > 1 ? "s" : "");
        for (int i = 0; i < nerr; i++) {
            long lo = err[i] - CK_CPU_CONTEXT, hi = err[i] + CK_CPU_CONTEXT;
            if (lo <= shown) lo = shown + 1;
            if (lo < 1) lo = 1;
            if (shown && lo > shown + 1) ck_sbuf_printf(&b, "  ...\n");
            for (long l = lo; l <= hi; l++) {
                size_t len = 0;
                const char *text = ck_line_of(source, l, &len);
                if (!text) break;
                int is_err = 0;
                for (int j = 0; j < nerr; j++) is_err |= err[j] == l;
                ck_sbuf_printf(&b, "%s%5ld | %.*s\n", is_err ? ">>" : "  ", l, (int)(len > 160 ? 160 : len), text);
                shown = l;
            }
        }
    }
    ck_status s;
    if (b.s && !b.failed) {
        while (b.len && b.s[b.len - 1] == '\n') b.s[--b.len] = '\0';
        if (b.len > CK_CPU_MSG_MAX) b.s[CK_CPU_MSG_MAX] = '\0';
        s = ck_error_set(CK_ERR_COMPILE, "%s", b.s);
    } else {
        s = ck_error_set(CK_ERR_COMPILE, "the C++ compiler (%s) could not compile the kernel for the CPU", cxx);
    }
    free(b.s);
    return s;
}

/* Compile tu in a private temporary folder; the .so's bytes on success. */
/* ------------------------------------------------ precompiled header
 * Parsing the C++ standard headers the compat header needs is about half
 * of a small kernel's compile.  With GCC, a precompiled cuda_compat.hpp
 * kept in the cache folder (one per compiler, header and flag set) cuts
 * that out; GCC checks it fits and silently parses the text when it does
 * not (another -std, -ffast-math).  It is built in the background after
 * the first compile that finds none, so no load ever waits for it. */

static char *ck_pch_dir(const char *cache, const char *const *flags, int nflags)
{
    if (!cache || !ck_cxx_.is_gcc) return NULL;
    const char *e = getenv("CUDAKIT_CPU_PCH");
    if (e && !strcmp(e, "0")) return NULL;
    ck_hasher h;
    uint64_t key[2];
    ck_hasher_init(&h, 0x636b2d7063683031ull); /* "ck-pch01" */
    ck_hasher_field(&h, ck_cxx_.id, strlen(ck_cxx_.id));
    ck_hasher_field(&h, ck_src_cuda_compat, ck_src_cuda_compat_len);
    for (int i = 0; i < nflags; i++) ck_hasher_field(&h, flags[i], strlen(flags[i]));
    ck_hasher_final(&h, key);
    char *d = NULL;
    if (asprintf(&d, "%s/cpu-pch-%016llx", cache, (unsigned long long)key[0]) < 0) return NULL;
    return d;
}

static int ck_pch_ready(const char *pchdir)
{
    char *p = NULL;
    struct stat st;
    int ok = pchdir && asprintf(&p, "%s/cuda_compat.hpp.gch", pchdir) >= 0 && stat(p, &st) == 0 && st.st_size > 0;
    free(p);
    return ok;
}

/* Start `cxx flags -x c++-header` on the header in pchdir and return at
 * once: a shell puts the compile in the background and exits, so nothing
 * is left for us to wait for.  The result is renamed into place whole. */
static void ck_pch_build_async(const char *pchdir, const char *const *flags, int nflags)
{
    char *hdr = NULL, *tmp = NULL;
    struct stat st;
    if (ck_mkdir_p(pchdir) != 0 || asprintf(&hdr, "%s/cuda_compat.hpp", pchdir) < 0) return;
    /* A header younger than two minutes: another process is building. */
    if (stat(hdr, &st) == 0 && time(NULL) - st.st_mtime < 120) goto done;
    if (asprintf(&tmp, "cuda_compat.hpp.tmp.%d", (int)getpid()) < 0) goto done;
    if (ck_write_file(pchdir, tmp, ck_src_cuda_compat, ck_src_cuda_compat_len) != 0) goto done;
    char *tmpp = NULL;
    if (asprintf(&tmpp, "%s/%s", pchdir, tmp) < 0) goto done;
    int moved = rename(tmpp, hdr) == 0;
    if (!moved) unlink(tmpp);
    free(tmpp);
    if (!moved) goto done;
    static const char script[] =
        "d=$1; shift; ( \"$@\" -x c++-header \"$d/cuda_compat.hpp\" -o \"$d/gch.tmp.$$\" && "
        "mv -f \"$d/gch.tmp.$$\" \"$d/cuda_compat.hpp.gch\"; rm -f \"$d/gch.tmp.$$\" ) </dev/null >/dev/null 2>&1 &";
    const char **argv = calloc((size_t)(ck_cxx_.argc + nflags + 6), sizeof *argv);
    if (!argv) goto done;
    int k = 0;
    argv[k++] = "/bin/sh";
    argv[k++] = "-c";
    argv[k++] = script;
    argv[k++] = "sh";
    argv[k++] = pchdir;
    for (int i = 0; i < ck_cxx_.argc; i++) argv[k++] = ck_cxx_.argv[i];
    for (int i = 0; i < nflags; i++) argv[k++] = flags[i];
    argv[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    if (posix_spawn(&pid, "/bin/sh", &fa, NULL, (char *const *)argv, environ) == 0) {
        int stw;
        while (waitpid(pid, &stw, 0) < 0 && errno == EINTR) {}
    }
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
done:
    free(hdr);
    free(tmp);
}

static ck_status ck_cpu_compile(const char *tu, const char *source, const char *const *flags, int nflags,
                                const char *pchdir, char **so, size_t *so_size)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = NULL;
    if (asprintf(&dir, "%s/cudakit-cpu-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
        return ck_error_set(CK_ERR_MEMORY, "out of memory");
    if (!mkdtemp(dir)) {
        ck_status s = ck_error_set(CK_ERR_RUNTIME, "cannot make a folder to compile a CPU kernel in (%s): %s", dir,
                                   strerror(errno));
        free(dir);
        return s;
    }
    static const char stub[] = "#include \"cuda_compat.hpp\"\n";
    static const char *const stubs[] = {"cuda_runtime.h", "cuda.h", "cuda_fp16.h", "cuda_runtime_api.h",
                                        "device_launch_parameters.h", "math_constants.h"};
    /* With a precompiled header, the header must be found next to it. */
    int bad = (!pchdir && ck_write_file(dir, "cuda_compat.hpp", ck_src_cuda_compat, ck_src_cuda_compat_len)) ||
              ck_write_file(dir, "module.cpp", tu, strlen(tu));
    for (size_t i = 0; i < sizeof stubs / sizeof *stubs; i++) bad |= ck_write_file(dir, stubs[i], stub, strlen(stub));
    ck_status s = CK_OK;
    char *cpp = NULL, *out = NULL, *logp = NULL, *inc = NULL, *pinc = NULL;
    const char **argv = NULL;
    if (bad) {
        s = ck_error_set(CK_ERR_RUNTIME, "cannot write the CPU kernel's source to %s: %s", dir, strerror(errno));
        goto done;
    }
    if (asprintf(&cpp, "%s/module.cpp", dir) < 0 || asprintf(&out, "%s/module.so", dir) < 0 ||
        asprintf(&logp, "%s/compile.log", dir) < 0 || asprintf(&inc, "-I%s", dir) < 0 ||
        (pchdir && asprintf(&pinc, "-I%s", pchdir) < 0)) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    argv = calloc((size_t)(ck_cxx_.argc + nflags + 8), sizeof *argv);
    if (!argv) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    int k = 0;
    for (int i = 0; i < ck_cxx_.argc; i++) argv[k++] = ck_cxx_.argv[i];
    argv[k++] = inc;
    if (pinc) argv[k++] = pinc;
    for (int i = 0; i < nflags; i++) argv[k++] = flags[i];
    argv[k++] = "-o";
    argv[k++] = out;
    argv[k++] = cpp;
    argv[k++] = "-lm";
    argv[k] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        s = ck_error_set(CK_ERR_RUNTIME, "cannot run the C++ compiler %s: %s", argv[0], strerror(rc));
        goto done;
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            s = ck_error_set(CK_ERR_RUNTIME, "waiting for the C++ compiler %s: %s", argv[0], strerror(errno));
            goto done;
        }
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        size_t n = 0;
        char *log = ck_read_file(logp, &n);
        s = ck_cpu_compile_error(source, argv[0], WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), log);
        free(log);
        goto done;
    }
    *so = ck_read_file(out, so_size);
    if (!*so || !*so_size) {
        free(*so);
        *so = NULL;
        s = ck_error_set(CK_ERR_RUNTIME, "the C++ compiler %s made no library", argv[0]);
    }
done:
    free(argv);
    free(cpp);
    free(out);
    free(logp);
    free(inc);
    free(pinc);
    ck_rm_tree(dir);
    free(dir);
    return s;
}

/* dlopen a shared object held in memory: through a memfd when there is
 * one, else through a temporary file that is removed once loaded.  The
 * memfd stays open (*keep_fd) while the library is loaded: the loader
 * knows objects by path, and "/proc/self/fd/N" must not name two. */
static void *ck_dlopen_bytes(const void *data, size_t n, int *keep_fd, char *err, size_t errn)
{
    *keep_fd = -1;
    int fd = memfd_create("cudakit-cpu-kernel", MFD_CLOEXEC);
    char path[4096];
    int is_tmp = 0;
    if (fd >= 0) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/cudakit-cpu-XXXXXX.so", tmp && *tmp ? tmp : "/tmp");
        fd = mkstemps(path, 3);
        if (fd < 0) {
            snprintf(err, errn, "cannot make a temporary file: %s", strerror(errno));
            return NULL;
        }
        is_tmp = 1;
    }
    const char *p = data;
    size_t left = n;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(err, errn, "cannot write the kernel library: %s", strerror(errno));
            close(fd);
            if (is_tmp) unlink(path);
            return NULL;
        }
        p += w;
        left -= (size_t)w;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(err, errn, "%s", dlerror());
    if (h && !is_tmp)
        *keep_fd = fd;
    else
        close(fd);
    if (is_tmp) unlink(path);
    return h;
}

static int ck_debug_kernels(void)
{
    const char *d = getenv("CUDAKIT_DEBUG");
    return d && strstr(d, "kernels") != NULL;
}

/* ============================================================ loading */

static unsigned long long ck_api_sync(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width);
static void ck_api_fail(const char *what, const char *file, int line);

static void ck_c_escape(ck_sbuf *b, const char *s)
{
    ck_sbuf_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') ck_sbuf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 32) ck_sbuf_printf(b, "\\%03o", (unsigned char)*s);
        else ck_sbuf_printf(b, "%c", *s);
    }
    ck_sbuf_printf(b, "\"");
}

void ck_cpu_module_free(ck_cpu_module *m);

/* __shared__ variables declared in a kernel's body are thread-local
 * statics named _ZZ<len><kernel>E... in the library's symbol table; their
 * sizes add up to the kernel's static shared memory (as the GPU counts it,
 * less what __device__ functions it calls declare). */
static void ck_elf_static_shared(ck_cpu_module *m, const unsigned char *so, size_t n)
{
    if (!so || n < sizeof(Elf64_Ehdr) || memcmp(so, ELFMAG, SELFMAG) || so[EI_CLASS] != ELFCLASS64) return;
    Elf64_Ehdr eh;
    memcpy(&eh, so, sizeof eh);
    if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > n ||
        (n - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
        return;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, st;
        memcpy(&sh, so + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_offset > n || sh.sh_size > n - sh.sh_offset)
            continue;
        memcpy(&st, so + eh.e_shoff + sh.sh_link * sizeof st, sizeof st);
        if (st.sh_offset > n || st.sh_size > n - st.sh_offset || !st.sh_size) continue;
        const char *strs = (const char *)so + st.sh_offset;
        for (size_t k = 0; k + sizeof(Elf64_Sym) <= sh.sh_size; k += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            memcpy(&sym, so + sh.sh_offset + k, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_name >= st.sh_size) continue;
            const char *name = strs + sym.st_name;
            size_t room = st.sh_size - sym.st_name;
            if (strnlen(name, room) == room || strncmp(name, "_ZZ", 3)) continue;
            char *end;
            long len = strtol(name + 3, &end, 10);
            if (len <= 0 || (size_t)len > strlen(end) || end[len] != 'E') continue;
            for (int f = 0; f < m->nfuncs; f++)
                if (strlen(m->funcs[f].name) == (size_t)len && !strncmp(m->funcs[f].name, end, (size_t)len))
                    m->funcs[f].static_shared += sym.st_size;
        }
    }
}

static ck_status ck_module_bind(ck_cpu_module *m, void *dl, const void *so, size_t so_size)
{
    m->dl = dl;
    const int *abi = dlsym(dl, "ck__abi_version");
    ck_cpu_api *api = dlsym(dl, "ck__api");
    void *getctx = dlsym(dl, "ck__get_ctx");
    const ck_cpu_kdesc *kd = dlsym(dl, "ck__kernels");
    if (!abi || !api || !getctx || !kd || *abi != CK_CPU_ABI_VERSION)
        return ck_error_set(CK_ERR_RUNTIME, "the CPU kernel library does not match this cudakit (ABI %d, want %d)",
                            abi ? *abi : -1, CK_CPU_ABI_VERSION);
    api->sync = ck_api_sync;
    api->fail = ck_api_fail;
    memcpy(&m->get_ctx, &getctx, sizeof getctx);
    int n = 0;
    while (kd[n].name) n++;
    m->funcs = calloc((size_t)(n ? n : 1), sizeof *m->funcs);
    if (!m->funcs) return ck_error_set(CK_ERR_MEMORY, "out of memory");
    for (int i = 0; i < n; i++) {
        m->funcs[i].mod = m;
        m->funcs[i].name = kd[i].name;
        m->funcs[i].thread = kd[i].thread;
        m->funcs[i].block = kd[i].block;
        int np = kd[i].params(NULL, 0);
        m->funcs[i].sizes = calloc((size_t)np + 1, sizeof(size_t));
        if (!m->funcs[i].sizes) {
            m->nfuncs = i;
            return ck_error_set(CK_ERR_MEMORY, "out of memory");
        }
        m->funcs[i].nparams = kd[i].params(m->funcs[i].sizes, np);
    }
    m->nfuncs = n;
    ck_elf_static_shared(m, so, so_size);
    return CK_OK;
}

ck_status ck_cpu_module_load(const char *source, const char *const *options, int noptions,
                             const char *const *name_exprs, int nexprs, ck_cpu_module **out)
{
    if (!out) return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_load: out is NULL");
    *out = NULL;
    if (!source) return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_load: source is NULL");
    if (noptions < 0 || (noptions > 0 && !options) || nexprs < 0 || (nexprs > 0 && !name_exprs))
        return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_load: bad option or name-expression list");
    for (int i = 0; i < nexprs; i++)
        if (!name_exprs[i] || !*name_exprs[i])
            return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_load: name expression %d is empty", i);
    double t0 = ck_cpu_now_ms();
    pthread_once(&ck_cxx_once, ck_cxx_find);
    if (!ck_cxx_.argv)
        return ck_error_set(CK_ERR_RUNTIME, "no C++ compiler found to run CUDA C kernels on the CPU: install g++ or "
                                            "clang++, or set CXX");

    ck_srcscan sc = {0};
    ck_sbuf tu = {0};
    const char **flags = calloc((size_t)(2 * noptions + 16), sizeof *flags);
    int nmapped = 0, nflags = 0, has_std = 0, local = 0;
    char *dir = NULL, *path = NULL, *so = NULL;
    size_t so_size = 0;
    ck_cpu_module *m = NULL;
    ck_status s = CK_OK;
    if (!flags || ck_scan_source(source, &sc) != 0) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    char **mapped = (char **)flags;
    nmapped = ck_map_options(options, noptions, mapped, &has_std, &local);
    for (int i = 0; i < nmapped; i++)
        if (!mapped[i]) {
            s = ck_error_set(CK_ERR_MEMORY, "out of memory");
            goto done;
        }
    /* Ours first so the user's -std wins; the mapped options follow. */
    const char *ours[] = {"-O2", "-fPIC", "-shared", "-pipe", "-fno-semantic-interposition", "-fno-math-errno",
                          "-fdiagnostics-color=never"};
    const char **all = calloc((size_t)(nmapped + 16), sizeof *all);
    if (!all) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    if (!has_std) all[nflags++] = "-std=c++17";
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) all[nflags++] = ours[i];
#if defined(__x86_64__)
    /* TLS descriptors: reading threadIdx (thread-local in a dlopen'd
     * library) costs a few cycles instead of a __tls_get_addr call; plain
     * loops over a block's threads run about 6x faster. */
    if (ck_cxx_.is_gcc) all[nflags++] = "-mtls-dialect=gnu2";
#endif
    for (int i = 0; i < nmapped; i++) all[nflags++] = mapped[i];

    ck_sbuf_printf(&tu, "#include \"cuda_compat.hpp\"\n#line 1 \"" CK_CPU_FILE "\"\n%s\n", sc.out.s ? sc.out.s : "");
    ck_sbuf_printf(&tu, "#line 1 \"<cudakit kernel table>\"\nextern \"C\" {\nextern const ck__kdesc ck__kernels[];\n"
                        "const ck__kdesc ck__kernels[] = {\n");
    for (int i = 0; i < sc.nnames; i++) {
        ck_sbuf_printf(&tu, "CK__KERNEL(");
        ck_c_escape(&tu, sc.names[i]);
        ck_sbuf_printf(&tu, ", &%s),\n", sc.names[i]);
    }
    for (int i = 0; i < nexprs; i++) {
        int dup = 0;
        for (int j = 0; j < sc.nnames; j++) dup |= !strcmp(sc.names[j], name_exprs[i]);
        for (int j = 0; j < i; j++) dup |= !strcmp(name_exprs[j], name_exprs[i]);
        if (dup) continue;
        ck_sbuf_printf(&tu, "CK__KERNEL(");
        ck_c_escape(&tu, name_exprs[i]);
        ck_sbuf_printf(&tu, ", &%s),\n", name_exprs[i]);
    }
    ck_sbuf_printf(&tu, "{0, 0, 0, 0}};\n}\n");
    if (tu.failed) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        free(all);
        goto done;
    }

    dir = ck_cache_dir();
    if (dir) {
        ck_hasher h;
        uint64_t key[2];
        ck_hasher_init(&h, 0x636b2d6370756b31ull); /* "ck-cpuk1" */
        ck_hasher_u64(&h, CK_CPU_FORMAT_VERSION);
        ck_hasher_field(&h, ck_cxx_.id, strlen(ck_cxx_.id));
        ck_hasher_field(&h, ck_src_cuda_compat, ck_src_cuda_compat_len);
        ck_hasher_u64(&h, (uint64_t)nflags);
        for (int i = 0; i < nflags; i++) ck_hasher_field(&h, all[i], strlen(all[i]));
        ck_hasher_field(&h, tu.s, tu.len);
        ck_hasher_final(&h, key);
        if (asprintf(&path, "%s/%016llx%016llx.cpu.so", dir, (unsigned long long)key[0], (unsigned long long)key[1]) < 0)
            path = NULL;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        free(all);
        goto done;
    }
    m->memfd = -1;
    const char *force = getenv("CUDAKIT_CPU_FIBERS");
    m->fibers = sc.barriers || local || (force && *force == '1');
    m->uses_printf = sc.uses_printf;
    void *data = NULL;
    size_t size = 0;
    char err[512] = "";
    if (path && ck_cache_load(path, 1, &data, &size)) {
        void *dl = ck_dlopen_bytes(data, size, &m->memfd, err, sizeof err);
        if (dl) {
            m->from_disk = 1;
            s = ck_module_bind(m, dl, data, size);
            free(data);
            free(all);
            goto loaded;
        }
        free(data);
        unlink(path); /* unloadable: rebuild it below */
    }
    /* Our flags only: a user's -D that the header does not use leaves the
     * precompiled header usable. */
    char *pchdir = ck_pch_dir(dir, all, nflags - nmapped);
    int have_pch = ck_pch_ready(pchdir);
    if (ck_debug_kernels()) {
        flockfile(stderr);
        fprintf(stderr, "[cudakit] CPU kernel module: compiling with");
        for (int i = 0; i < ck_cxx_.argc; i++) fprintf(stderr, " %s", ck_cxx_.argv[i]);
        for (int i = 0; i < nflags; i++) fprintf(stderr, " %s", all[i]);
        fprintf(stderr, "%s%s\n", have_pch ? ", precompiled header in " : "", have_pch ? pchdir : "");
        funlockfile(stderr);
    }
    s = ck_cpu_compile(tu.s, source, all, nflags, have_pch ? pchdir : NULL, &so, &so_size);
    if (s == CK_OK && pchdir && !have_pch) ck_pch_build_async(pchdir, all, nflags - nmapped);
    free(pchdir);
    free(all);
    if (s != CK_OK) goto done;
    if (path) ck_cache_store(dir, path, so, so_size);
    void *dl = ck_dlopen_bytes(so, so_size, &m->memfd, err, sizeof err);
    if (!dl) {
        s = ck_error_set(CK_ERR_RUNTIME, "cannot load the compiled CPU kernel library: %s", err);
        goto done;
    }
    s = ck_module_bind(m, dl, so, so_size);
loaded:
    m->load_ms = ck_cpu_now_ms() - t0;
    if (s == CK_OK && ck_debug_kernels())
        fprintf(stderr, "[cudakit] CPU kernel module: %s in %.2f ms (%s, %s)%s%s\n",
                m->from_disk ? "from the disk cache" : "compiled", m->load_ms, ck_cxx_.argv[0],
                m->fibers ? "fibers" : "no barriers: plain loops", path ? ", cache " : ", disk cache off",
                path ? path : "");
done:
    if (s == CK_OK) {
        *out = m;
    } else {
        ck_cpu_module_free(m);
    }
    for (int i = 0; flags && i < nmapped; i++) free((void *)flags[i]);
    free(flags);
    free(so);
    free(path);
    free(dir);
    free(tu.s);
    ck_scan_free(&sc);
    return s;
}

void ck_cpu_module_free(ck_cpu_module *m)
{
    if (!m) return;
    /* Worker threads keep no pointer into the library between launches. */
    if (m->dl) dlclose(m->dl);
    if (m->memfd >= 0) {
        /* A library the loader keeps (a user's inline variable can make it
         * NODELETE) keeps its path too, so its memfd number stays taken. */
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", m->memfd);
        void *still = m->dl ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
        if (still)
            dlclose(still);
        else
            close(m->memfd);
    }
    for (int i = 0; i < m->nfuncs; i++) free(m->funcs[i].sizes);
    free(m->funcs);
    free(m);
}

int ck_cpu_module_from_disk(const ck_cpu_module *m) { return m ? m->from_disk : 0; }
double ck_cpu_module_load_ms(const ck_cpu_module *m) { return m ? m->load_ms : 0.0; }
int ck_cpu_module_uses_fibers(const ck_cpu_module *m) { return m ? m->fibers : 0; }

ck_status ck_cpu_module_get_function(ck_cpu_module *m, const char *name, ck_cpu_function **out)
{
    if (!out) return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_get_function: out is NULL");
    *out = NULL;
    if (!m || !name) return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_get_function: no module or name");
    for (int i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i].name, name)) {
            *out = &m->funcs[i];
            return CK_OK;
        }
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < m->nfuncs && len < sizeof list - 1; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", m->funcs[i].name);
    return ck_error_set(CK_ERR_VALUE,
                        "no kernel named '%s' in the module (its kernels: %s; a template instance must be one of "
                        "the module's name_expressions, a kernel otherwise extern \"C\" __global__)",
                        name, m->nfuncs ? list : "none");
}

int ck_cpu_function_params(const ck_cpu_function *f, size_t *sizes, int max)
{
    if (!f) return -1;
    for (int i = 0; i < f->nparams && i < max; i++) sizes[i] = f->sizes[i];
    return f->nparams;
}

size_t ck_cpu_function_static_shared(const ck_cpu_function *f) { return f ? f->static_shared : 0; }

ck_status ck_cpu_module_get_global(ck_cpu_module *m, const char *name, void **ptr, size_t *nbytes)
{
    if (ptr) *ptr = NULL;
    if (nbytes) *nbytes = 0;
    if (!m || !name || !ptr || !nbytes) return ck_error_set(CK_ERR_VALUE, "ck_cpu_module_get_global: bad arguments");
    dlerror();
    void *p = dlsym(m->dl, name);
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || (sym->st_info & 0xf) != STT_OBJECT ||
        !strncmp(name, "ck__", 4))
        return ck_error_set(CK_ERR_VALUE, "no __device__ or __constant__ variable named '%s' in the module", name);
    *ptr = p;
    *nbytes = (size_t)sym->st_size;
    return CK_OK;
}

/* ============================================================== fibers */

#if defined(__SANITIZE_ADDRESS__)
#define CK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_ASAN 1
#endif
#endif
#ifdef CK_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif

#if defined(__x86_64__) && !defined(CK_FIBER_UCONTEXT)
/* A context switch saves only what the ABI says a call preserves: rbx,
 * rbp, r12-r15 and the stack pointer; no system call, unlike swapcontext
 * (which saves the signal mask).  The MXCSR and x87 control words are
 * not switched (kernels do not change rounding modes): saving them cost
 * most of a switch. */
__asm__(".text\n"
        ".globl ck_fiber_swap_x64\n"
        ".hidden ck_fiber_swap_x64\n"
        ".type ck_fiber_swap_x64,@function\n"
        "ck_fiber_swap_x64:\n"
        "    pushq %rbp\n    pushq %rbx\n    pushq %r12\n    pushq %r13\n    pushq %r14\n    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n    popq %r14\n    popq %r13\n    popq %r12\n    popq %rbx\n    popq %rbp\n"
        "    ret\n"
        ".size ck_fiber_swap_x64, .-ck_fiber_swap_x64\n"
        ".globl ck_fiber_boot_x64\n"
        ".hidden ck_fiber_boot_x64\n"
        ".type ck_fiber_boot_x64,@function\n"
        "ck_fiber_boot_x64:\n"
        "    movq %r12, %rdi\n"
        "    callq *%r13\n"
        "    ud2\n"
        ".size ck_fiber_boot_x64, .-ck_fiber_boot_x64\n");
void ck_fiber_swap_x64(void **save, void *to);
void ck_fiber_boot_x64(void);

typedef struct ck_fctx { void *sp; } ck_fctx;

static void ck_fctx_make(ck_fctx *c, char *lo, size_t size, void (*fn)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)(lo + size)) & ~(uintptr_t)15;
    /* After the 6 pops and the ret, rsp = top - 16: 16-byte aligned at the
     * call in boot, as the ABI wants. */
    uint64_t *sp = (uint64_t *)(top - 72);
    sp[0] = sp[1] = 0;                /* r15, r14 */
    sp[2] = (uint64_t)(uintptr_t)fn;  /* r13 */
    sp[3] = (uint64_t)(uintptr_t)arg; /* r12 */
    sp[4] = sp[5] = 0;                /* rbx, rbp */
    sp[6] = (uint64_t)(uintptr_t)ck_fiber_boot_x64;
    c->sp = sp;
}
static inline void ck_fctx_swap(ck_fctx *from, ck_fctx *to) { ck_fiber_swap_x64(&from->sp, to->sp); }
#else
#include <ucontext.h>
typedef struct ck_fctx { ucontext_t uc; } ck_fctx;
static void ck_uctx_boot(unsigned hi_fn, unsigned lo_fn, unsigned hi_arg, unsigned lo_arg)
{
    void (*fn)(void *) = (void (*)(void *))(uintptr_t)(((uint64_t)hi_fn << 32) | lo_fn);
    fn((void *)(uintptr_t)(((uint64_t)hi_arg << 32) | lo_arg));
}
static void ck_fctx_make(ck_fctx *c, char *lo, size_t size, void (*fn)(void *), void *arg)
{
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = lo;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = NULL;
    uint64_t f = (uint64_t)(uintptr_t)fn, a = (uint64_t)(uintptr_t)arg;
    makecontext(&c->uc, (void (*)(void))ck_uctx_boot, 4, (unsigned)(f >> 32), (unsigned)f, (unsigned)(a >> 32),
                (unsigned)a);
}
static inline void ck_fctx_swap(ck_fctx *from, ck_fctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

enum { CK_F_NEW, CK_F_RUNNABLE, CK_F_RUNNING, CK_F_WAIT_BLOCK, CK_F_WAIT_WARP, CK_F_DONE };

typedef struct ck_fiber {
    ck_fctx ctx;
    char *stack; /* usable low end; NULL when the fiber has none */
    int state;
    int op, arg, width;
    unsigned mask;
    unsigned long long val, result;
} ck_fiber;

typedef struct ck_launch ck_launch;

/* One block being run by one worker. */
typedef struct ck_block_run {
    ck_fiber *f;
    int n, ndone, nwait, cur;
    unsigned exists[32], done[32], arrived[32];
    ck_fctx sched;
    const void *sched_lo; /* the worker stack, for ASan's fiber annotations */
    size_t sched_size;
    ck_launch *L;
    ck_cpu_ctx *ctx;
} ck_block_run;

/* What each OS thread keeps between launches. */
typedef struct ck_worker {
    char **stacks;   /* free fiber stacks */
    int nstacks, capstacks;
    size_t stack_size;
    ck_fiber *fibers; /* CK_CPU_MAX_THREADS_PER_BLOCK */
    void *smem;
    size_t smem_cap;
    ck_block_run B;
    sigjmp_buf jb;
    volatile sig_atomic_t in_kernel;
    ck_launch *L;
    ck_cpu_ctx *ctx;
    void *fault_addr;
    int fault_sig;
    int on_fiber;    /* a fiber of B is running (for ASan, when jumping out of one) */
} ck_worker;

static _Thread_local ck_worker *ck_tw;
static pthread_key_t ck_worker_key;
static pthread_once_t ck_worker_once = PTHREAD_ONCE_INIT;
static size_t ck_page;

static void ck_worker_destroy(void *p)
{
    ck_worker *w = p;
    if (!w) return;
    for (int i = 0; i < w->nstacks; i++) munmap(w->stacks[i] - ck_page, w->stack_size + ck_page);
    free(w->stacks);
    free(w->fibers);
    free(w->smem);
    free(w);
}

static void ck_worker_key_init(void)
{
    pthread_key_create(&ck_worker_key, ck_worker_destroy);
    ck_page = (size_t)sysconf(_SC_PAGESIZE);
}

static ck_worker *ck_worker_get(void)
{
    if (ck_tw) return ck_tw;
    pthread_once(&ck_worker_once, ck_worker_key_init);
    ck_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fibers = calloc(CK_CPU_MAX_THREADS_PER_BLOCK, sizeof *w->fibers);
    if (!w->fibers) {
        free(w);
        return NULL;
    }
    const char *e = getenv("CUDAKIT_CPU_STACK_KB");
    long kb = e ? atol(e) : 0;
    w->stack_size = kb >= 16 && kb <= 65536 ? (size_t)kb * 1024 : CK_CPU_STACK_SIZE;
    w->stack_size = (w->stack_size + ck_page - 1) / ck_page * ck_page;
    pthread_setspecific(ck_worker_key, w);
    ck_tw = w;
    return w;
}

/* A fiber stack: a guard page below, so an overflow faults instead of
 * writing over a neighbour. */
static char *ck_stack_get(ck_worker *w)
{
    if (w->nstacks) return w->stacks[--w->nstacks];
    char *m = mmap(NULL, w->stack_size + ck_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED) return NULL;
    mprotect(m, ck_page, PROT_NONE);
    return m + ck_page;
}

static void ck_stack_put(ck_worker *w, char *s)
{
    if (w->nstacks == w->capstacks) {
        int cap = w->capstacks ? 2 * w->capstacks : 64;
        char **p = realloc(w->stacks, sizeof *p * (size_t)cap);
        if (!p) {
            munmap(s - ck_page, w->stack_size + ck_page);
            return;
        }
        w->stacks = p;
        w->capstacks = cap;
    }
    w->stacks[w->nstacks++] = s;
}

/* The stacks of fibers a failed block left behind. */
static void ck_worker_drop_fibers(ck_worker *w)
{
    for (int t = 0; t < w->B.n; t++)
        if (w->fibers[t].stack) {
            ck_stack_put(w, w->fibers[t].stack);
            w->fibers[t].stack = NULL;
        }
    w->B.n = 0;
}

/* ============================================================ launches */

enum { CK_MODE_BLOCK, CK_MODE_THREADS, CK_MODE_FIBERS };

typedef struct ck_guard ck_guard;

struct ck_launch {
    ck_cpu_function *fn;
    unsigned grid[3], block[3];
    int nthreads, mode, bounds;
    size_t dyn;
    void **args;
    atomic_int failed;
    ck_status status;
    char msg[1536];
    /* bounds mode */
    const ck_cpu_arg_info *info;
    ck_guard *guards;
    int nguards;
    int *param_guard; /* per parameter: its guard, or -1 */
};

__attribute__((format(printf, 3, 4))) static void ck_launch_error(ck_launch *L, ck_status st, const char *fmt, ...)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&L->failed, &expect, 1)) return;
    L->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->msg, sizeof L->msg, fmt, ap);
    va_end(ap);
}

/* The thread after tid in the block, x fastest (as a warp is made). */
static inline ck_u3 ck_tid_next(const ck_launch *L, ck_u3 tid)
{
    if (++tid.x == L->block[0]) {
        tid.x = 0;
        if (++tid.y == L->block[1]) {
            tid.y = 0;
            tid.z++;
        }
    }
    return tid;
}

static void ck_yield(ck_block_run *B, ck_fiber *me, int exiting)
{
#ifdef CK_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(exiting ? NULL : &fake, B->sched_lo, B->sched_size);
#else
    (void)exiting;
#endif
    ck_fctx_swap(&me->ctx, &B->sched);
#ifdef CK_ASAN
    __sanitizer_finish_switch_fiber(fake, &B->sched_lo, &B->sched_size);
#endif
}

static void ck_release_block(ck_block_run *B)
{
    unsigned count = 0;
    for (int t = 0; t < B->n; t++)
        if (B->f[t].state == CK_F_WAIT_BLOCK && B->f[t].val) count++;
    for (int t = 0; t < B->n; t++) {
        ck_fiber *x = &B->f[t];
        if (x->state != CK_F_WAIT_BLOCK) continue;
        x->result = x->op == CK_OP_SYNC_COUNT ? count
                    : x->op == CK_OP_SYNC_AND ? (count == (unsigned)B->nwait)
                    : x->op == CK_OP_SYNC_OR  ? (count > 0)
                                              : 0;
        x->state = CK_F_RUNNABLE;
    }
    B->nwait = 0;
}

/* If every lane `want` names (that exists and has not exited) waits at a
 * warp function, give each its result and let them go. */
static void ck_warp_try(ck_block_run *B, int w, unsigned want)
{
    unsigned need = want & B->exists[w] & ~B->done[w];
    if (!need || (B->arrived[w] & need) != need) return;
    ck_fiber *base = &B->f[w * 32];
    unsigned ballot = 0;
    for (int l = 0; l < 32; l++)
        if ((need >> l & 1) && base[l].val) ballot |= 1u << l;
    for (int l = 0; l < 32; l++) {
        if (!(need >> l & 1)) continue;
        ck_fiber *x = &base[l];
        int width = x->width;
        if (width <= 0 || width > 32 || (width & (width - 1))) width = 32;
        int src = l, arg = x->arg;
        unsigned long long r = 0;
        switch (x->op) {
        case CK_OP_SHFL: src = (l & ~(width - 1)) + (arg & (width - 1)); break;
        case CK_OP_SHFL_UP: src = arg >= 0 && (l & (width - 1)) >= arg ? l - arg : l; break;
        case CK_OP_SHFL_DOWN: src = arg >= 0 && (l & (width - 1)) + arg < width ? l + arg : l; break;
        case CK_OP_SHFL_XOR:
            src = l ^ arg;
            if (src < 0 || src > 31 || (src & ~(width - 1)) > (l & ~(width - 1))) src = l;
            break;
        default: break;
        }
        switch (x->op) {
        case CK_OP_SHFL:
        case CK_OP_SHFL_UP:
        case CK_OP_SHFL_DOWN:
        case CK_OP_SHFL_XOR: r = (need >> src & 1) ? base[src].val : x->val; break;
        case CK_OP_BALLOT: r = ballot; break;
        case CK_OP_ANY: r = ballot != 0; break;
        case CK_OP_ALL: r = ballot == need; break;
        case CK_OP_MATCH_ANY:
        case CK_OP_MATCH_ALL: {
            unsigned same = 0;
            for (int k = 0; k < 32; k++)
                if ((need >> k & 1) && base[k].val == x->val) same |= 1u << k;
            r = x->op == CK_OP_MATCH_ANY ? same : (same == need ? need : 0);
            break;
        }
        case CK_OP_RED_ADD: case CK_OP_RED_MIN_U: case CK_OP_RED_MAX_U: case CK_OP_RED_MIN_I:
        case CK_OP_RED_MAX_I: case CK_OP_RED_AND: case CK_OP_RED_OR: case CK_OP_RED_XOR: {
            int first = 1;
            uint32_t acc = 0;
            for (int k = 0; k < 32; k++) {
                if (!(need >> k & 1)) continue;
                uint32_t v = (uint32_t)base[k].val;
                if (first) { acc = v; first = 0; continue; }
                switch (x->op) {
                case CK_OP_RED_ADD: acc += v; break;
                case CK_OP_RED_MIN_U: acc = v < acc ? v : acc; break;
                case CK_OP_RED_MAX_U: acc = v > acc ? v : acc; break;
                case CK_OP_RED_MIN_I: acc = (int32_t)v < (int32_t)acc ? v : acc; break;
                case CK_OP_RED_MAX_I: acc = (int32_t)v > (int32_t)acc ? v : acc; break;
                case CK_OP_RED_AND: acc &= v; break;
                case CK_OP_RED_OR: acc |= v; break;
                default: acc ^= v; break;
                }
            }
            r = acc;
            break;
        }
        default: r = 0; break; /* __syncwarp */
        }
        x->result = r;
    }
    for (int l = 0; l < 32; l++)
        if (need >> l & 1) base[l].state = CK_F_RUNNABLE;
    B->arrived[w] &= ~need;
}

static void ck_fiber_main(void *arg)
{
    ck_block_run *B = arg;
#ifdef CK_ASAN
    __sanitizer_finish_switch_fiber(NULL, &B->sched_lo, &B->sched_size);
#endif
    B->L->fn->thread(B->L->args);
    int t = B->cur;
    ck_fiber *me = &B->f[t];
    int w = t >> 5;
    me->state = CK_F_DONE;
    B->ndone++;
    B->done[w] |= 1u << (t & 31);
    if (B->nwait && B->nwait + B->ndone == B->n) ck_release_block(B);
    /* A lane gone may be the one the others waited for. */
    for (int l = 0; l < 32 && B->arrived[w]; l++)
        if (B->arrived[w] >> l & 1) ck_warp_try(B, w, B->f[w * 32 + l].mask | 1u << l);
    ck_yield(B, me, 1);
    __builtin_unreachable();
}

static void ck_api_fail_worker(ck_worker *W, ck_status st, const char *what);

static unsigned long long ck_api_sync(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width)
{
    ck_block_run *B = sched;
    if (!B) {
        ck_worker *W = ck_tw;
        if (op == CK_OP_ACTIVEMASK && W && W->ctx) {
            /* Threads run one at a time here: the lanes of this warp that exist. */
            const ck_cpu_ctx *c = W->ctx;
            unsigned n = c->bdim.x * c->bdim.y * c->bdim.z;
            unsigned t = c->tid.x + c->bdim.x * (c->tid.y + c->bdim.y * c->tid.z);
            unsigned left = n - (t & ~31u);
            return left >= 32 ? 0xffffffffu : (1u << left) - 1u;
        }
        ck_api_fail_worker(W, CK_ERR_RUNTIME,
                           "reached a barrier or warp function that the source scan did not see (built with "
                           "token pasting?); set CUDAKIT_CPU_FIBERS=1");
        return 0;
    }
    int t = B->cur, w = t >> 5;
    unsigned bit = 1u << (t & 31);
    ck_fiber *me = &B->f[t];
    if (op == CK_OP_ACTIVEMASK) return B->exists[w] & ~B->done[w];
    me->op = op;
    me->mask = mask;
    me->val = val;
    me->arg = arg;
    me->width = width;
    if (op < CK_OP_SYNCWARP) {
        me->state = CK_F_WAIT_BLOCK;
        B->nwait++;
        if (B->nwait + B->ndone == B->n) ck_release_block(B);
    } else {
        me->state = CK_F_WAIT_WARP;
        B->arrived[w] |= bit;
        ck_warp_try(B, w, mask | bit);
    }
    /* The last to arrive released everyone, itself included, and goes on. */
    if (me->state != CK_F_RUNNABLE) ck_yield(B, me, 0);
    me->state = CK_F_RUNNING;
    return me->result;
}

/* Jump back to the launcher from wherever the kernel is, a fiber included. */
static __attribute__((noreturn)) void ck_worker_jump(ck_worker *W)
{
#ifdef CK_ASAN
    if (W->on_fiber) __sanitizer_start_switch_fiber(NULL, W->B.sched_lo, W->B.sched_size);
#endif
    siglongjmp(W->jb, 1);
}

static void ck_api_fail_worker(ck_worker *W, ck_status st, const char *what)
{
    if (!W || !W->L) abort(); /* only kernels call this, and only inside a launch */
    const ck_cpu_ctx *c = W->ctx;
    ck_launch_error(W->L, st, "kernel %s: block (%u, %u, %u), thread (%u, %u, %u): %s", W->L->fn->name, c->bid.x,
                    c->bid.y, c->bid.z, c->tid.x, c->tid.y, c->tid.z, what);
    ck_worker_jump(W);
}

static void ck_api_fail(const char *what, const char *file, int line)
{
    char msg[512];
    if (file && *file)
        snprintf(msg, sizeof msg, "%s failed at %s:%d", what, file, line);
    else
        snprintf(msg, sizeof msg, "%s called", what);
    ck_api_fail_worker(ck_tw, CK_ERR_RUNTIME, msg);
}

/* Run one block's threads as fibers; 0 when all finished. */
static int ck_run_block_fibers(ck_worker *W, ck_launch *L)
{
    ck_block_run *B = &W->B;
    int n = L->nthreads;
    B->f = W->fibers;
    B->n = n;
    B->ndone = B->nwait = 0;
    B->L = L;
    B->ctx = W->ctx;
    for (int w = 0; w < 32; w++) {
        int left = n - 32 * w;
        B->exists[w] = left >= 32 ? 0xffffffffu : left > 0 ? (1u << left) - 1u : 0u;
        B->done[w] = B->arrived[w] = 0;
    }
    for (int t = 0; t < n; t++) {
        B->f[t].state = CK_F_NEW;
        B->f[t].stack = NULL;
    }
    for (;;) {
        int ran = 0;
        ck_u3 tid = {0, 0, 0};
        for (int t = 0; t < n; t++, tid = ck_tid_next(L, tid)) {
            ck_fiber *x = &B->f[t];
            if (x->state == CK_F_NEW) {
                /* Stacks are taken as threads start and returned as they end,
                 * so a block without barriers reuses one stack throughout. */
                x->stack = ck_stack_get(W);
                if (!x->stack) {
                    ck_launch_error(L, CK_ERR_MEMORY, "kernel %s: out of memory for fiber stacks", L->fn->name);
                    return -1;
                }
                ck_fctx_make(&x->ctx, x->stack, W->stack_size, ck_fiber_main, B);
            } else if (x->state != CK_F_RUNNABLE) {
                continue;
            }
            x->state = CK_F_RUNNING;
            B->cur = t;
            W->ctx->tid = tid;
#ifdef CK_ASAN
            void *fake = NULL;
            __sanitizer_start_switch_fiber(&fake, x->stack, W->stack_size);
#endif
            W->on_fiber = 1;
            ck_fctx_swap(&B->sched, &x->ctx);
            W->on_fiber = 0;
#ifdef CK_ASAN
            __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
            ran = 1;
            if (x->state == CK_F_DONE) {
                ck_stack_put(W, x->stack);
                x->stack = NULL;
            }
        }
        if (B->ndone == n) {
            B->n = 0;
            return 0;
        }
        if (!ran) {
            int nb = 0, nw = 0;
            for (int t = 0; t < n; t++) {
                nb += B->f[t].state == CK_F_WAIT_BLOCK;
                nw += B->f[t].state == CK_F_WAIT_WARP;
            }
            const ck_cpu_ctx *c = W->ctx;
            ck_launch_error(L, CK_ERR_RUNTIME,
                            "kernel %s: block (%u, %u, %u) cannot finish: its threads wait at different barriers "
                            "(%d at __syncthreads, %d at a warp function whose other lanes never arrive)",
                            L->fn->name, c->bid.x, c->bid.y, c->bid.z, nb, nw);
            ck_worker_drop_fibers(W);
            return -1;
        }
    }
}

static __attribute__((noinline)) void ck_run_blocks(ck_worker *W, ck_launch *L, int64_t b, int64_t e)
{
    ck_cpu_ctx *c = W->ctx;
    const unsigned gx = L->grid[0], gy = L->grid[1];
    for (int64_t i = b; i < e; i++) {
        if (atomic_load_explicit(&L->failed, memory_order_relaxed)) return;
        c->bid.x = (unsigned)(i % gx);
        c->bid.y = (unsigned)((i / gx) % gy);
        c->bid.z = (unsigned)(i / ((int64_t)gx * gy));
        if (L->mode == CK_MODE_BLOCK) {
            L->fn->block(L->args);
        } else if (L->mode == CK_MODE_THREADS) {
            ck_u3 tid = {0, 0, 0};
            for (int t = 0; t < L->nthreads; t++, tid = ck_tid_next(L, tid)) {
                c->tid = tid;
                L->fn->thread(L->args);
            }
        } else if (ck_run_block_fibers(W, L) != 0) {
            return;
        }
    }
}

static void ck_report_fault(ck_launch *L, ck_worker *W);

static void ck_launch_chunk(void *arg, int64_t b, int64_t e, int worker)
{
    (void)worker;
    ck_launch *L = arg;
    ck_worker *W = ck_worker_get();
    size_t need = L->dyn > 256 ? L->dyn : 256;
    if (W && W->smem_cap < need) {
        void *p = NULL;
        if (posix_memalign(&p, 256, need) == 0) {
            free(W->smem);
            W->smem = p;
            W->smem_cap = need;
        }
    }
    if (!W || W->smem_cap < need) {
        ck_launch_error(L, CK_ERR_MEMORY, "kernel %s: out of memory for the worker's state", L->fn->name);
        return;
    }
    ck_cpu_ctx *c = L->fn->mod->get_ctx();
    c->bdim = (ck_u3){L->block[0], L->block[1], L->block[2]};
    c->gdim = (ck_u3){L->grid[0], L->grid[1], L->grid[2]};
    c->dyn_smem = W->smem;
    c->sched = L->mode == CK_MODE_FIBERS ? &W->B : NULL;
    W->ctx = c;
    W->L = L;
    W->fault_sig = 0;
    if (sigsetjmp(W->jb, 0)) {
        /* From a trap, a failed assert or (bounds mode) a fault. */
#ifdef CK_ASAN
        if (W->on_fiber) __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
        W->on_fiber = 0;
        W->in_kernel = 0;
        ck_worker_drop_fibers(W);
        if (W->fault_sig) ck_report_fault(L, W);
        W->L = NULL;
        return;
    }
    W->in_kernel = 1;
    ck_run_blocks(W, L, b, e);
    W->in_kernel = 0;
    W->L = NULL;
}

/* ------------------------------------------------------ bounds checking */

/* Each array argument (overlapping ones together) is copied into a mapping
 * whose end abuts a PROT_NONE page, with another before its start; the
 * kernel runs on the copies and a fault in a guard names the argument. */
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
static struct sigaction ck_old_segv, ck_old_bus, ck_old_fpe;
static pthread_once_t ck_sig_once = PTHREAD_ONCE_INIT;

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

static void ck_bounds_handler(int sig, siginfo_t *si, void *uc)
{
    ck_worker *W = ck_tw;
    if (W && W->in_kernel && W->L) {
        W->fault_sig = sig;
        W->fault_addr = si->si_addr;
        ck_worker_jump(W);
    }
    /* Not a kernel's: what was there before us. */
    struct sigaction *old = sig == SIGSEGV ? &ck_old_segv : sig == SIGBUS ? &ck_old_bus : &ck_old_fpe;
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction) old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL); /* the fault happens again on return, and is fatal as it would have been */
    } else if (old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
    }
}

/* Faults inside a kernel end its launch with an error instead of the
 * process; any other fault goes to the handler that was there before.
 * Installed once, at the first launch, and left in place: installing it
 * around each launch would cost system calls and serialise launches.
 * SA_NODEFER, so jumping out of the handler leaves the signal unblocked
 * without saving the mask in every sigsetjmp. */
static void ck_sig_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = ck_bounds_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &ck_old_segv);
    sigaction(SIGBUS, &sa, &ck_old_bus);
    sigaction(SIGFPE, &sa, &ck_old_fpe);
}

static const char *ck_param_name(const ck_launch *L, int p, char *buf, size_t n)
{
    if (L->info && L->info[p].name && *L->info[p].name)
        snprintf(buf, n, "argument %d ('%s')", p, L->info[p].name);
    else
        snprintf(buf, n, "argument %d", p);
    return buf;
}

static void ck_report_fault(ck_launch *L, ck_worker *W)
{
    const ck_cpu_ctx *c = W->ctx;
    char where[160], pn[128];
    snprintf(where, sizeof where, "block (%u, %u, %u), thread (%u, %u, %u)", c->bid.x, c->bid.y, c->bid.z, c->tid.x,
             c->tid.y, c->tid.z);
    char *a = W->fault_addr;
    if (W->fault_sig == SIGFPE) {
        ck_launch_error(L, CK_ERR_DEVICE, "kernel %s: arithmetic fault (integer division by zero?) in %s",
                        L->fn->name, where);
        return;
    }
    for (int g = 0; g < L->nguards; g++) {
        ck_guard *G = &L->guards[g];
        char *before = G->map, *after = G->map + G->maplen - ck_page;
        if (!((a >= before && a < before + ck_page) || (a >= after && a < after + ck_page))) continue;
        int p = G->param;
        char *ptr = NULL;
        memcpy(&ptr, L->args[p], sizeof ptr);
        long long off = (long long)(a - ptr);
        size_t item = G->itemsize ? G->itemsize : 1;
        long long elem = off >= 0 ? off / (long long)item : -((-off + (long long)item - 1) / (long long)item);
        ck_launch_error(L, CK_ERR_INDEX,
                        "kernel %s: out-of-bounds access in %s: %s (%zu bytes%s) at byte offset %lld%s%lld%s",
                        L->fn->name, where, ck_param_name(L, p, pn, sizeof pn), L->info[p].nbytes,
                        a >= after ? "" : "; before its start", off, G->itemsize ? " (element " : " (",
                        G->itemsize ? elem : off, G->itemsize ? ")" : " bytes)");
        return;
    }
    ck_launch_error(L, CK_ERR_DEVICE, "kernel %s: illegal memory access at address %p in %s (%s)", L->fn->name,
                    (void *)a, where,
                    W->fault_sig == SIGBUS ? "bus error"
                    : L->bounds            ? "not inside any array argument"
                                           : "CUDAKIT_BOUNDS=1 checks the array arguments' bounds");
}

static void ck_guards_free(ck_launch *L)
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
static ck_status ck_guards_make(ck_launch *L, int np, void **newargs, void **newvals)
{
    pthread_once(&ck_worker_once, ck_worker_key_init);
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
        size_t body = (G->size + align + ck_page - 1) / ck_page * ck_page;
        G->maplen = body + 2 * ck_page;
        G->map = mmap(NULL, G->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (G->map == MAP_FAILED) {
            G->map = NULL;
            return ck_error_set(CK_ERR_MEMORY, "bounds checking: cannot map %zu bytes", G->maplen);
        }
        mprotect(G->map, ck_page, PROT_NONE);
        mprotect(G->map + ck_page + body, ck_page, PROT_NONE);
        char *end = G->map + ck_page + body;
        char *data = end - G->size;
        data -= ((uintptr_t)data - (uintptr_t)lo) & (align - 1);
        G->data = data;
        G->slack_lo = G->map + ck_page;
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
static ck_status ck_guards_finish(ck_launch *L)
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

/* ============================================================== launch */

ck_status ck_cpu_launch(ck_cpu_function *f, const unsigned grid[3], const unsigned block[3], size_t dyn_shared,
                        void **args, const ck_cpu_arg_info *info)
{
    if (!f || !grid || !block) return ck_error_set(CK_ERR_VALUE, "ck_cpu_launch: no kernel or configuration");
    if (!grid[0] || !grid[1] || !grid[2])
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the grid (%u, %u, %u) has no blocks", f->name, grid[0], grid[1],
                            grid[2]);
    if (!block[0] || !block[1] || !block[2])
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the block (%u, %u, %u) has no threads", f->name, block[0],
                            block[1], block[2]);
    uint64_t nt = (uint64_t)block[0] * block[1] * block[2];
    if (nt > CK_CPU_MAX_THREADS_PER_BLOCK || block[0] > 1024 || block[1] > 1024 || block[2] > 64)
        return ck_error_set(CK_ERR_VALUE,
                            "kernel %s: a block of (%u, %u, %u) = %llu threads is more than allowed (at most %d "
                            "threads, (1024, 1024, 64) in each dimension)",
                            f->name, block[0], block[1], block[2], (unsigned long long)nt, CK_CPU_MAX_THREADS_PER_BLOCK);
    if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535)
        return ck_error_set(CK_ERR_VALUE, "kernel %s: the grid (%u, %u, %u) is larger than allowed (2^31-1, 65535, 65535)",
                            f->name, grid[0], grid[1], grid[2]);
    if (dyn_shared > CK_CPU_MAX_DYN_SHARED)
        return ck_error_set(CK_ERR_VALUE, "kernel %s: %zu bytes of dynamic shared memory is more than the %u allowed",
                            f->name, dyn_shared, CK_CPU_MAX_DYN_SHARED);
    if (f->nparams > 0 && !args)
        return ck_error_set(CK_ERR_VALUE, "kernel %s takes %d arguments but none were given", f->name, f->nparams);

    ck_launch L;
    memset(&L, 0, sizeof L);
    L.fn = f;
    memcpy(L.grid, grid, sizeof L.grid);
    memcpy(L.block, block, sizeof L.block);
    L.nthreads = (int)nt;
    L.dyn = dyn_shared;
    L.args = args;
    atomic_init(&L.failed, 0);
    L.bounds = info && ck_cpu_bounds_mode();
    L.mode = f->mod->fibers ? CK_MODE_FIBERS : L.bounds ? CK_MODE_THREADS : CK_MODE_BLOCK;
    int64_t nblocks = (int64_t)grid[0] * grid[1] * grid[2];
    /* Small launches stay on the calling thread: waking the pool costs more. */
    int64_t grain = (1024 + L.nthreads - 1) / L.nthreads;

    const char *catch_env = getenv("CUDAKIT_CPU_CATCH");
    if (!catch_env || strcmp(catch_env, "0")) pthread_once(&ck_sig_once, ck_sig_install);
    if (!L.bounds) {
        ck_parallel_for(nblocks, grain, ck_launch_chunk, &L);
    } else {
        int np = f->nparams;
        void **newargs = calloc((size_t)(np ? np : 1), sizeof *newargs);
        void **newvals = calloc((size_t)(np ? np : 1), sizeof *newvals);
        L.info = info;
        ck_status s = newargs && newvals ? ck_guards_make(&L, np, newargs, newvals)
                                         : ck_error_set(CK_ERR_MEMORY, "out of memory");
        if (s == CK_OK) {
            void **orig = L.args;
            L.args = newargs;
            ck_parallel_for(nblocks, grain, ck_launch_chunk, &L);
            L.args = orig;
            if (!atomic_load(&L.failed)) s = ck_guards_finish(&L);
        }
        /* The fault report reads the argument values the kernel saw. */
        ck_guards_free(&L);
        free(newargs);
        free(newvals);
        if (s != CK_OK) return s;
    }
    if (f->mod->uses_printf) fflush(stdout);
    if (atomic_load(&L.failed)) return ck_error_set(L.status, "%s", L.msg);
    return CK_OK;
}
