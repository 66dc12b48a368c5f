/* The system C++ compiler (see internal.h): found once, given the user's
 * NVRTC options in its own spelling, run in a private temporary folder on
 * the wrapped source with cuda_compat.hpp and stub CUDA headers beside it,
 * and its errors turned into a message with the source lines around them. */
#define _GNU_SOURCE /* asprintf, mkdtemp, realpath */
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CK_CPU_MSG_MAX 7900
#define CK_CPU_LOG_MAX 3500
#define CK_CPU_CONTEXT 3
#define CK_CPU_MAX_ERR_LINES 6
/* More log than this is not read: the message shows the first part. */
#define CK_CPU_LOG_READ_MAX ((size_t)1 << 20)

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

/* The file's bytes (malloc'd, NUL-terminated), at most max of them. */
static char *ck_read_file(const char *path, size_t max, size_t *n)
{
    FILE *f = fopen(path, "rbe");
    if (!f) return NULL;
    char *s = NULL;
    char chunk[65536];
    size_t r;
    size_t total = 0;
    while (total < max && (r = fread(chunk, 1, max - total < sizeof chunk ? max - total : sizeof chunk, f)) > 0) {
        char *t = realloc(s, total + r + 1);
        if (!t) {
            free(s);
            fclose(f);
            return NULL;
        }
        s = t;
        memcpy(s + total, chunk, r);
        total += r;
    }
    fclose(f);
    if (!s) s = calloc(1, 1);
    else s[total] = '\0';
    *n = total;
    return s;
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

/* The message: "the C++ compiler (cxx) <what>:", the log, and the source
 * around its "kernel.cu:12:5: error: ..." lines (gcc and clang agree). */
static ck_status ck_cpu_compile_error(const char *source, const char *cxx, const char *what, const char *log)
{
    ck_sbuf b = {0};
    size_t ll = log ? strlen(log) : 0;
    ck_sbuf_printf(&b, "the C++ compiler (%s) %s%s\n", cxx, what, ll ? ":" : "");
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
        s = ck_error_set(CK_ERR_COMPILE, "the C++ compiler (%s) %s", cxx, what);
    }
    free(b.s);
    return s;
}

/* ------------------------------------------------------------ limits */

/* A kernel's source decides what the compiler reads: #include "/dev/zero"
 * would have it allocate until the machine's memory is gone, a FIFO or a
 * hung network file would have it wait forever, a constexpr loop spin for
 * hours.  So every compiler run has limits on its time and memory. */
static ck_status ck_env_limit(const char *name, long dflt, long max, long *out)
{
    const char *e = getenv(name);
    *out = dflt;
    if (!e || !*e) return CK_OK;
    if (!strcasecmp(e, "off") || !strcmp(e, "0")) {
        *out = 0;
        return CK_OK;
    }
    char *end;
    errno = 0;
    long v = strtol(e, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (errno || end == e || *end || v <= 0 || v > max)
        return ck_error_set(CK_ERR_VALUE, "%s must be a whole number from 1 to %ld, or 0 or 'off' for no limit, not '%s'",
                            name, max, e);
    *out = v;
    return CK_OK;
}

ck_status ck_cpu_compile_limits(ck_cxx_limits *lim)
{
    ck_status s = ck_env_limit("CUDAKIT_COMPILE_TIMEOUT", CK_CPU_COMPILE_TIMEOUT_S, 1L << 30, &lim->seconds);
    if (s == CK_OK) s = ck_env_limit("CUDAKIT_COMPILE_MEMORY", CK_CPU_COMPILE_MEMORY_MB, 1L << 30, &lim->mib);
    if (s != CK_OK) return s;
    /* The CPU limit's soft part sends SIGXCPU, which the driver reports as
     * "CPU time limit exceeded"; the hard one, a little later, is SIGKILL. */
    snprintf(lim->cpu_soft, sizeof lim->cpu_soft, "%ld", lim->seconds);
    snprintf(lim->cpu_hard, sizeof lim->cpu_hard, "%ld", lim->seconds ? lim->seconds + 5 : 0);
    snprintf(lim->mem_kib, sizeof lim->mem_kib, "%lld", (long long)lim->mib * 1024);
    return CK_OK;
}

static double ck_cpu_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wait for pid, at most seconds (0: no limit): 1 when it ended (*st its
 * status), 0 when the time ran out, -1 on an error (errno).  A pidfd lets
 * poll() wake at the exit; without one (before Linux 5.3) we look at
 * growing intervals, a few milliseconds late at worst. */
static int ck_wait_child(pid_t pid, long seconds, int *st)
{
    if (!seconds) {
        while (waitpid(pid, st, 0) < 0)
            if (errno != EINTR) return -1;
        return 1;
    }
    double deadline = ck_cpu_clock_s() + (double)seconds;
    int pfd = -1;
#ifdef SYS_pidfd_open
    pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    long step_us = 500;
    int rc;
    for (;;) {
        pid_t r = waitpid(pid, st, WNOHANG);
        if (r == pid) {
            rc = 1;
            break;
        }
        if (r < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        double left = deadline - ck_cpu_clock_s();
        if (left <= 0) {
            rc = 0;
            break;
        }
        if (pfd >= 0) {
            struct pollfd pf = {.fd = pfd, .events = POLLIN};
            poll(&pf, 1, left > INT_MAX / 1000 ? INT_MAX : (int)(left * 1000) + 1);
        } else {
            long us = left * 1e6 < step_us ? (long)(left * 1e6) + 1 : step_us;
            struct timespec ts = {us / 1000000, us % 1000000 * 1000};
            nanosleep(&ts, NULL);
            if (step_us < 20000) step_us *= 2;
        }
    }
    if (pfd >= 0) close(pfd);
    return rc;
}

/* Kill pid and what it started (the driver's cc1plus, as, ld): each is
 * stopped first, so it starts nothing new while /proc is searched for the
 * processes whose parent is already in the list. */
static void ck_kill_tree(pid_t root)
{
    enum { CK_TREE_MAX = 64 };
    pid_t tree[CK_TREE_MAX];
    int n = 0;
    tree[n++] = root;
    kill(root, SIGSTOP);
    for (int grew = 1, pass = 0; grew && pass < 8; pass++) {
        grew = 0;
        DIR *d = opendir("/proc");
        if (!d) break;
        struct dirent *e;
        while ((e = readdir(d)) && n < CK_TREE_MAX) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            if (pid <= 0 || *end) continue;
            char path[64], buf[512];
            snprintf(path, sizeof path, "/proc/%ld/stat", pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            ssize_t len = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (len <= 0) continue;
            buf[len] = '\0';
            /* "pid (comm) state ppid ...": comm may hold spaces and ')' */
            char *rp = strrchr(buf, ')');
            int ppid = 0;
            char state;
            if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2) continue;
            int in = 0, parent_in = 0;
            for (int i = 0; i < n; i++) {
                in |= tree[i] == (pid_t)pid;
                parent_in |= tree[i] == (pid_t)ppid;
            }
            if (in || !parent_in) continue;
            kill((pid_t)pid, SIGSTOP);
            tree[n++] = (pid_t)pid;
            grew = 1;
        }
        closedir(d);
    }
    for (int i = n - 1; i >= 0; i--) kill(tree[i], SIGKILL);
}

/* What went wrong, as the message's first line says it: the limits are
 * named with the variable that raises them. */
static void ck_cpu_failure(char *what, size_t n, const ck_cxx_limits *lim, int timed_out, int st, const char *log)
{
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (timed_out) {
        snprintf(what, n, "ran out of time compiling the kernel for the CPU: it was stopped after %ld s "
                          "(CUDAKIT_COMPILE_TIMEOUT sets the limit, in seconds)", lim->seconds);
    } else if (sig == SIGXCPU || (log && strstr(log, "CPU time limit exceeded"))) {
        snprintf(what, n, "ran out of time compiling the kernel for the CPU: it used its %ld s of CPU time "
                          "(CUDAKIT_COMPILE_TIMEOUT sets the limit, in seconds)", lim->seconds);
    } else if (log && (strstr(log, ": out of memory allocating") || strstr(log, "LLVM ERROR: out of memory") ||
                       strstr(log, "virtual memory exhausted") || strstr(log, "instance of 'std::bad_alloc'") ||
                       strstr(log, "Cannot allocate memory"))) {
        /* the messages of GCC, clang and the C++ runtime, not a user's
         * "out of memory" that a log line quotes */
        if (lim->mib)
            snprintf(what, n, "ran out of memory compiling the kernel for the CPU: its limit is %ld MiB of "
                              "address space (CUDAKIT_COMPILE_MEMORY sets it, in MiB)", lim->mib);
        else
            snprintf(what, n, "ran out of memory compiling the kernel for the CPU");
    } else if (sig == SIGKILL || (log && strstr(log, "Killed signal"))) {
        snprintf(what, n, "was killed compiling the kernel for the CPU: it ran out of time or memory "
                          "(CUDAKIT_COMPILE_TIMEOUT, in seconds, and CUDAKIT_COMPILE_MEMORY, in MiB, set the limits)");
    } else if (sig) {
        snprintf(what, n, "could not compile the kernel for the CPU (killed by signal %d)", sig);
    } else {
        snprintf(what, n, "could not compile the kernel for the CPU (exit status %d)", WEXITSTATUS(st));
    }
}

ck_status ck_cpu_compile(const char *tu, const char *source, const char *const *flags, int nflags,
                         const char *pchdir, char **so, size_t *so_size)
{
    ck_cxx_limits lim;
    ck_status ls = ck_cpu_compile_limits(&lim);
    if (ls != CK_OK) return ls;
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
    argv = calloc((size_t)(cxx->argc + nflags + 16), sizeof *argv);
    if (!argv) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    /* posix_spawn cannot set limits, so a shell does before it becomes the
     * compiler (one exec, about a millisecond of a compile's hundreds). */
    int k = 0;
    argv[k++] = "/bin/sh";
    argv[k++] = "-c";
    argv[k++] = CK_CPU_LIMITS_SH "exec \"$@\"";
    argv[k++] = "sh";
    argv[k++] = lim.cpu_soft;
    argv[k++] = lim.cpu_hard;
    argv[k++] = lim.mem_kib;
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
    const char *cc = cxx->argv[0];
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        s = ck_error_set(CK_ERR_RUNTIME, "cannot run the C++ compiler %s through %s: %s", cc, argv[0], strerror(rc));
        goto done;
    }
    int st = 0;
    int ended = ck_wait_child(pid, lim.seconds, &st);
    if (ended == 0) {
        ck_kill_tree(pid);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    } else if (ended < 0) {
        s = ck_error_set(CK_ERR_RUNTIME, "waiting for the C++ compiler %s: %s", cc, strerror(errno));
        goto done;
    }
    if (ended == 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        size_t n = 0;
        char *log = ck_read_file(logp, CK_CPU_LOG_READ_MAX, &n);
        if (ended && WIFEXITED(st) && (WEXITSTATUS(st) == 126 || WEXITSTATUS(st) == 127) && log &&
            strstr(log, "exec"))
            s = ck_error_set(CK_ERR_RUNTIME, "cannot run the C++ compiler %s: %s", cc, log);
        else {
            char what[400];
            ck_cpu_failure(what, sizeof what, &lim, ended == 0, st, log);
            s = ck_cpu_compile_error(source, cc, what, log);
        }
        free(log);
        goto done;
    }
    *so = ck_read_file(out, SIZE_MAX, so_size);
    if (!*so || !*so_size) {
        free(*so);
        *so = NULL;
        s = ck_error_set(CK_ERR_RUNTIME, "the C++ compiler %s made no library", cc);
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
