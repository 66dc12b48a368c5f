/* The system C++ compiler (see internal.h): found once, given the user's
 * NVRTC options in its own spelling, run in a private temporary folder on
 * the wrapped source with cuda_compat.hpp and stub CUDA headers beside it,
 * and its errors turned into a message with the source lines around them. */
#define _GNU_SOURCE /* asprintf, mkdtemp, realpath */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CK_CPU_MSG_MAX 7900
#define CK_CPU_LOG_MAX 3500
#define CK_CPU_CONTEXT 3
#define CK_CPU_MAX_ERR_LINES 6

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

const ck_cxx *ck_cpu_cxx(void)
{
    pthread_once(&ck_cxx_once, ck_cxx_find);
    return &ck_cxx_;
}

/* NVRTC options mean something here or nothing: -D, -U, -I, -std, -include
 * and fast math carry over, the GPU-only rest is dropped.  Every string put
 * in out is malloc'd.  *local is set when an include path or a forced
 * include could hide barriers from the source scan. */
int ck_cpu_map_options(const char *const *opts, int n, char **out, int *has_std, int *local)
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

int ck_cpu_write_file(const char *dir, const char *name, const char *data, size_t n)
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
                                        "cpu_kernel_abi.h", "cuda_runtime.h", "cuda.h", "cuda_fp16.h",
                                        "cuda_runtime_api.h", "device_launch_parameters.h", "math_constants.h"};
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

ck_status ck_cpu_compile(const char *tu, const char *source, const char *const *flags, int nflags,
                         const char *pchdir, char **so, size_t *so_size)
{
    const ck_cxx *cxx = ck_cpu_cxx();
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
    int bad = (!pchdir && (ck_cpu_write_file(dir, "cuda_compat.hpp", ck_src_cuda_compat, ck_src_cuda_compat_len) ||
                           ck_cpu_write_file(dir, "cpu_kernel_abi.h", ck_src_cpu_kernel_abi,
                                             ck_src_cpu_kernel_abi_len))) ||
              ck_cpu_write_file(dir, "module.cpp", tu, strlen(tu));
    for (size_t i = 0; i < sizeof stubs / sizeof *stubs; i++)
        bad |= ck_cpu_write_file(dir, stubs[i], stub, strlen(stub));
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
    argv = calloc((size_t)(cxx->argc + nflags + 8), sizeof *argv);
    if (!argv) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    int k = 0;
    for (int i = 0; i < cxx->argc; i++) argv[k++] = cxx->argv[i];
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
