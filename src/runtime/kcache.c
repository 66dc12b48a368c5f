/* The kernel compiler (see kcache.h): NVRTC, in front of the disk cache of
 * kcache_disk.c. */
#define _GNU_SOURCE /* dladdr, flockfile, asprintf */
#include "kcache.h"
#include "kcache_disk.h"
#include "../base/hash.h"
#include "../base/sbuf.h"
#include "../platform/cuda_api.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The per-thread error buffer in error.c is 8192 bytes; stay under it so
 * the source excerpt at the end is not the part that gets cut. */
#define CK_KC_MSG_MAX 8000
#define CK_KC_LOG_MAX 3500
#define CK_KC_CONTEXT 3       /* source lines shown either side of an error */
#define CK_KC_MAX_ERR_LINES 6 /* windows shown; the log has the rest */
#define CK_KC_LINE_MAX 160    /* generated lines can be long; cut them */

/* NVRTC statuses we act on (nvrtc.h values, which are ABI). */
#define CK_NVRTC_SUCCESS 0
#define CK_NVRTC_ERROR_OUT_OF_MEMORY 1

/* -------------------------------------------------------- small helpers */

static double ck_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Find line `want` (1-based) of src; its length through *len (no '\n'). */
static const char *ck_source_line(const char *src, long want, size_t *len)
{
    const char *p = src;
    for (long l = 1; l < want; l++) {
        p = strchr(p, '\n');
        if (!p) return NULL;
        p++;
    }
    if (!*p && want > 1) return NULL; /* the empty "line" after a final newline */
    const char *e = strchr(p, '\n');
    *len = e ? (size_t)(e - p) : strlen(p);
    if (*len && p[*len - 1] == '\r') (*len)--;
    return p;
}

static long ck_count_lines(const char *src)
{
    long n = 1;
    for (const char *p = src; *p; p++)
        if (*p == '\n' && p[1]) n++;
    return n;
}

/* ----------------------------------------------------------- NVRTC */

/* Whether this NVRTC has nvrtcGetCUBIN (11.1 and later; older ones also
 * reject sm_XX targets, so this must be known before compiling).
 * cuda_api.c points a missing symbol at a stub inside our own binary, so a
 * real one lives in the same object as nvrtcVersion.  Read-only and cheap,
 * so it is asked per call instead of cached in shared state. */
static int ck_nvrtc_has_cubin(int major, int minor)
{
    Dl_info a, b;
    void *cubin, *version;
    memcpy(&cubin, &ck_nvrtc.nvrtcGetCUBIN, sizeof cubin);
    memcpy(&version, &ck_nvrtc.nvrtcVersion, sizeof version);
    if (dladdr(cubin, &a) && dladdr(version, &b)) return a.dli_fbase == b.dli_fbase;
    return major > 11 || (major == 11 && minor >= 1);
}

static char *ck_nvrtc_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (ck_nvrtc.nvrtcGetProgramLogSize(prog, &n) != CK_NVRTC_SUCCESS || n == 0) return NULL;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (ck_nvrtc.nvrtcGetProgramLog(prog, log) != CK_NVRTC_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    return log;
}

/* Error lines of `name` the log mentions ("name(12): error: ..."), in log
 * order, without repeats.  Lines in included headers are skipped: their
 * numbers are not lines of our source. */
static int ck_log_error_lines(const char *log, const char *name, long *lines, int max)
{
    int n = 0;
    size_t nl = strlen(name);
    for (const char *p = log; p && *p && n < max; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, nl) != 0 || p[nl] != '(') continue;
        char *end;
        long line = strtol(p + nl + 1, &end, 10);
        if (end == p + nl + 1 || *end != ')' || end[1] != ':' || line <= 0) continue;
        const char *rest = end + 2;
        while (*rest == ' ') rest++;
        if (strncmp(rest, "error", 5) != 0 && strncmp(rest, "catastrophic error", 18) != 0) continue;
        int seen = 0;
        for (int i = 0; i < n; i++) seen |= lines[i] == line;
        if (!seen) lines[n++] = line;
    }
    return n;
}

static void ck_add_source_line(ck_sbuf *b, const char *mark, long l, const char *text, size_t len)
{
    if (len > CK_KC_LINE_MAX)
        ck_sbuf_printf(b, "%s%5ld | %.*s...\n", mark, l, CK_KC_LINE_MAX, text);
    else
        ck_sbuf_printf(b, "%s%5ld | %.*s\n", mark, l, (int)len, text);
}

static int ck_cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static ck_status ck_compile_error(const char *source, const char *name, const char *target, nvrtcResult r,
                                  const char *log)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "NVRTC could not compile %s for %s: %s\n", name, target, ck_nvrtc_error_string(r));
    if (log && *log) {
        size_t ll = strlen(log);
        if (ll > CK_KC_LOG_MAX)
            ck_sbuf_printf(&b, "%.*s\n[... %zu more bytes of log ...]\n", CK_KC_LOG_MAX, log, ll - CK_KC_LOG_MAX);
        else
            ck_sbuf_printf(&b, "%s%s", log, log[ll - 1] == '\n' ? "" : "\n");
    }
    long err[CK_KC_MAX_ERR_LINES];
    int nerr = log ? ck_log_error_lines(log, name, err, CK_KC_MAX_ERR_LINES) : 0;
    if (nerr) {
        qsort(err, (size_t)nerr, sizeof err[0], ck_cmp_long);
        long total = ck_count_lines(source), shown = 0; /* last line printed */
        ck_sbuf_printf(&b, "source around the error%s:\n", nerr > 1 ? "s" : "");
        for (int i = 0; i < nerr; i++) {
            long lo = err[i] - CK_KC_CONTEXT, hi = err[i] + CK_KC_CONTEXT;
            if (lo <= shown) lo = shown + 1;
            if (lo < 1) lo = 1;
            if (hi > total) hi = total;
            if (lo > hi) continue;
            if (shown && lo > shown + 1) ck_sbuf_printf(&b, "  ...\n");
            for (long l = lo; l <= hi; l++) {
                size_t len = 0;
                const char *text = ck_source_line(source, l, &len);
                if (!text) break;
                int is_err = 0;
                for (int j = 0; j < nerr; j++) is_err |= err[j] == l;
                ck_add_source_line(&b, is_err ? ">>" : "  ", l, text, len);
                shown = l;
            }
        }
    }
    ck_status s;
    if (b.s && !b.failed) {
        /* A cut message beats none. */
        if (b.len > CK_KC_MSG_MAX) b.s[b.len = CK_KC_MSG_MAX] = '\0';
        while (b.len && b.s[b.len - 1] == '\n') b.s[--b.len] = '\0';
        s = ck_error_set(CK_ERR_COMPILE, "%s", b.s);
    } else {
        s = ck_error_set(CK_ERR_COMPILE, "NVRTC could not compile %s for %s: %s", name, target,
                         ck_nvrtc_error_string(r));
    }
    free(b.s);
    return s;
}

/* ------------------------------------------------------------- debug */

static int ck_debug_kernels(void)
{
    const char *d = getenv("CUDAKIT_DEBUG");
    return d && strstr(d, "kernels") != NULL;
}

static void ck_debug_print(const char *name, const char *source, const char *const *opts, int nopts,
                           const ck_kernel_image *img, const char *what, const char *path)
{
    /* One lock for the whole block, so threads compiling at once do not
     * interleave their sources line by line. */
    flockfile(stderr);
    fprintf(stderr, "[cudakit] kernel %s: %s", name, what);
    if (img) fprintf(stderr, ", %s, %.2f ms", img->is_cubin ? "cubin" : "ptx", img->compile_ms);
    fprintf(stderr, "%s%s\n", path ? ", cache " : ", disk cache off", path ? path : "");
    fprintf(stderr, "[cudakit]   options:");
    for (int i = 0; i < nopts; i++) fprintf(stderr, " %s", opts[i]);
    fputc('\n', stderr);
    long l = 1;
    for (const char *p = source; *p || l == 1; l++) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        fprintf(stderr, "%5ld | %.*s\n", l, (int)len, p);
        if (!e) break;
        p = e + 1;
    }
    funlockfile(stderr);
}

/* ------------------------------------------------------------- compile */

static int ck_has_std_option(const char *const *options, int noptions)
{
    for (int i = 0; i < noptions; i++)
        if (options[i] && (!strncmp(options[i], "-std", 4) || !strncmp(options[i], "--std", 5))) return 1;
    return 0;
}

/* Options that only make a compile faster, which an NVRTC older than
 * theirs would reject: left out there (Python kernels ask for --minimal,
 * NVRTC 12.4's: none of the CUDA runtime's device API, textures or
 * device-side launches, a fifth less of a small kernel's compile). */
static int ck_option_unknown(const char *o, int major, int minor)
{
    if (!strcmp(o, "--minimal") || !strcmp(o, "-minimal")) return major * 100 + minor < 1204;
    return 0;
}

/* An entry with name expressions holds [u64 image size][image][each
 * lowered name, NUL-terminated]; 1 when payload parses as one with nexprs
 * names (the image moved to the front of data, names into out). */
static int ck_split_named(unsigned char *data, size_t size, int is_cubin, int nexprs, ck_kernel_image *out)
{
    if (size < 8) return 0;
    uint64_t isz = ck_load_le64(data);
    if (isz == 0 || isz > size - 8) return 0;
    if (!is_cubin && data[8 + isz - 1] != '\0') return 0;
    char **names = calloc((size_t)nexprs, sizeof *names);
    if (!names) return 0;
    const char *p = (const char *)data + 8 + isz, *end = (const char *)data + size;
    int k = 0;
    for (; k < nexprs && p < end; k++) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        if (!z) break;
        names[k] = strdup(p);
        if (!names[k]) break;
        p = z + 1;
    }
    if (k != nexprs || p != end) {
        for (int i = 0; i < nexprs; i++) free(names[i]);
        free(names);
        return 0;
    }
    memmove(data, data + 8, (size_t)isz);
    out->lowered = names;
    out->nlowered = nexprs;
    out->size = (size_t)isz;
    return 1;
}

ck_status ck_kernel_compile(const char *source, const char *name_hint, const char *const *options,
                            int noptions, int arch, ck_kernel_image *out)
{
    return ck_kernel_compile_ex(source, name_hint, options, noptions, NULL, 0, arch, out);
}

ck_status ck_kernel_compile_ex(const char *source, const char *name_hint, const char *const *options, int noptions,
                               const char *const *name_exprs, int nexprs, int arch, ck_kernel_image *out)
{
    if (!out) return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: out is NULL");
    memset(out, 0, sizeof *out);
    if (!source) return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: source is NULL");
    if (noptions < 0 || (noptions > 0 && !options))
        return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: bad options (%d)", noptions);
    for (int i = 0; i < noptions; i++)
        if (!options[i]) return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: option %d is NULL", i);
    if (nexprs < 0 || (nexprs > 0 && !name_exprs))
        return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: bad name expressions (%d)", nexprs);
    for (int i = 0; i < nexprs; i++)
        if (!name_exprs[i] || !*name_exprs[i])
            return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: name expression %d is empty", i);
    if (arch < 10 || arch > 9999)
        return ck_error_set(CK_ERR_VALUE, "ck_kernel_compile: architecture %d is not major*10+minor", arch);
    ck_status s = ck_nvrtc_load();
    if (s != CK_OK) return s;

    const char *name = name_hint && *name_hint ? name_hint : "kernel.cu";
    double t0 = ck_now_ms();
    int major = 0, minor = 0;
    if (ck_nvrtc.nvrtcVersion(&major, &minor) != CK_NVRTC_SUCCESS) major = minor = -1;
    int debug = ck_debug_kernels();
    char *dir = ck_cache_dir();
    int is_cubin = ck_nvrtc_has_cubin(major, minor);
    int nall = 0;
    const char **all = malloc(sizeof *all * ((size_t)noptions + 2));
    if (!all) {
        free(dir);
        return ck_error_set(CK_ERR_MEMORY, "ck_kernel_compile: out of memory");
    }
    char archopt[48];
    char *path = NULL;
    ck_kc_key key = {0};
    void *data = NULL;
    size_t size = 0;

retry:
    /* Ours first, so the caller's can override what NVRTC lets a later
     * option override. */
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", is_cubin ? "sm" : "compute", arch);
    nall = 0;
    all[nall++] = archopt;
    if (!ck_has_std_option(options, noptions)) all[nall++] = "-std=c++17";
    for (int i = 0; i < noptions; i++)
        if (!ck_option_unknown(options[i], major, minor)) all[nall++] = options[i];

    free(path);
    ck_kc_key_free(&key);
    ck_kc_key_init(&key, 0x636b2d6b63616368ull); /* "ck-kcach" */
    ck_kc_key_u64(&key, CK_KC_FORMAT_VERSION);
    ck_kc_key_u64(&key, (uint64_t)(int64_t)major);
    ck_kc_key_u64(&key, (uint64_t)(int64_t)minor);
    ck_kc_key_u64(&key, (uint64_t)arch);
    ck_kc_key_u64(&key, (uint64_t)is_cubin);
    /* The program name reaches the image through line info and assertion
     * messages. */
    ck_kc_key_field(&key, name, strlen(name));
    ck_kc_key_u64(&key, (uint64_t)nall);
    for (int i = 0; i < nall; i++) ck_kc_key_field(&key, all[i], strlen(all[i]));
    ck_kc_key_field(&key, source, strlen(source));
    ck_kc_key_u64(&key, (uint64_t)nexprs);
    for (int i = 0; i < nexprs; i++) ck_kc_key_field(&key, name_exprs[i], strlen(name_exprs[i]));
    path = ck_kc_key_path(&key, dir, is_cubin ? ".cubin" : ".ptx");

    if (path && ck_cache_load(path, &key, !is_cubin && nexprs == 0, &data, &size) &&
        (nexprs == 0 || ck_split_named(data, size, is_cubin, nexprs, out) || (free(data), data = NULL, 0))) {
        out->data = data;
        if (nexprs == 0) out->size = size;
        out->is_cubin = is_cubin;
        out->from_disk = 1;
        out->compile_ms = ck_now_ms() - t0;
        if (debug) ck_debug_print(name, source, all, nall, out, "from the disk cache", path);
        goto finish;
    }

    nvrtcProgram prog = NULL;
    nvrtcResult r = ck_nvrtc.nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != CK_NVRTC_SUCCESS) {
        s = ck_error_set(r == CK_NVRTC_ERROR_OUT_OF_MEMORY ? CK_ERR_MEMORY : CK_ERR_DEVICE, "nvrtcCreateProgram(%s) failed: %s", name,
                         ck_nvrtc_error_string(r));
        goto finish;
    }
    for (int i = 0; i < nexprs; i++) {
        r = ck_nvrtc.nvrtcAddNameExpression(prog, name_exprs[i]);
        if (r != CK_NVRTC_SUCCESS) {
            ck_nvrtc.nvrtcDestroyProgram(&prog);
            s = ck_error_set(CK_ERR_DEVICE, "nvrtcAddNameExpression(%s, \"%s\") failed: %s", name, name_exprs[i],
                             ck_nvrtc_error_string(r));
            goto finish;
        }
    }
    r = ck_nvrtc.nvrtcCompileProgram(prog, nall, all);
    if (r != CK_NVRTC_SUCCESS) {
        char *log = ck_nvrtc_log(prog);
        ck_nvrtc.nvrtcDestroyProgram(&prog);
        s = ck_compile_error(source, name, archopt + strlen("--gpu-architecture="), r, log);
        if (debug) ck_debug_print(name, source, all, nall, NULL, "FAILED to compile", path);
        if (debug && log) fprintf(stderr, "%s\n", log);
        free(log);
        goto finish;
    }
    if (is_cubin) {
        r = ck_nvrtc.nvrtcGetCUBINSize(prog, &size);
        if (r != CK_NVRTC_SUCCESS || size == 0) {
            /* The CUBIN check above guessed wrong; PTX works everywhere. */
            ck_nvrtc.nvrtcDestroyProgram(&prog);
            is_cubin = 0;
            goto retry;
        }
    } else if ((r = ck_nvrtc.nvrtcGetPTXSize(prog, &size)) != CK_NVRTC_SUCCESS) {
        ck_nvrtc.nvrtcDestroyProgram(&prog);
        s = ck_error_set(CK_ERR_DEVICE, "nvrtcGetPTXSize(%s) failed: %s", name, ck_nvrtc_error_string(r));
        goto finish;
    }
    data = malloc(size ? size : 1);
    if (!data) {
        ck_nvrtc.nvrtcDestroyProgram(&prog);
        s = ck_error_set(CK_ERR_MEMORY, "ck_kernel_compile: out of memory for a %zu-byte image", size);
        goto finish;
    }
    r = is_cubin ? ck_nvrtc.nvrtcGetCUBIN(prog, data) : ck_nvrtc.nvrtcGetPTX(prog, data);
    if (r != CK_NVRTC_SUCCESS) {
        ck_nvrtc.nvrtcDestroyProgram(&prog);
        free(data);
        s = ck_error_set(CK_ERR_DEVICE, "%s(%s) failed: %s", is_cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", name,
                         ck_nvrtc_error_string(r));
        goto finish;
    }
    if (nexprs > 0) {
        /* the lowered names live in the program: copy them out before it goes */
        out->lowered = calloc((size_t)nexprs, sizeof *out->lowered);
        size_t names_len = 0;
        for (int i = 0; out->lowered && i < nexprs; i++) {
            const char *low = NULL;
            r = ck_nvrtc.nvrtcGetLoweredName(prog, name_exprs[i], &low);
            if (r != CK_NVRTC_SUCCESS || !low) {
                ck_nvrtc.nvrtcDestroyProgram(&prog);
                free(data);
                ck_kernel_image_free(out);
                s = ck_error_set(CK_ERR_VALUE, "nvrtcGetLoweredName(%s, \"%s\") failed: %s (is it a __global__ "
                                 "function or __device__ variable of the source?)", name, name_exprs[i],
                                 ck_nvrtc_error_string(r));
                goto finish;
            }
            out->lowered[i] = strdup(low);
            if (!out->lowered[i]) break;
            out->nlowered = i + 1;
            names_len += strlen(low) + 1;
        }
        if (out->nlowered != nexprs) {
            ck_nvrtc.nvrtcDestroyProgram(&prog);
            free(data);
            ck_kernel_image_free(out);
            s = ck_error_set(CK_ERR_MEMORY, "ck_kernel_compile: out of memory for the lowered names");
            goto finish;
        }
        if (path) {
            unsigned char *entry = malloc(8 + size + names_len);
            if (entry) {
                ck_store_le64(entry, size);
                memcpy(entry + 8, data, size);
                size_t off = 8 + size;
                for (int i = 0; i < nexprs; i++) {
                    size_t l = strlen(out->lowered[i]) + 1;
                    memcpy(entry + off, out->lowered[i], l);
                    off += l;
                }
                ck_cache_store(dir, path, &key, entry, off);
                free(entry);
            }
        }
    }
    ck_nvrtc.nvrtcDestroyProgram(&prog);
    out->data = data;
    out->size = size;
    out->is_cubin = is_cubin;
    out->from_disk = 0;
    out->compile_ms = ck_now_ms() - t0;
    if (path && nexprs == 0) ck_cache_store(dir, path, &key, data, size);
    if (debug) ck_debug_print(name, source, all, nall, out, "compiled", path);

finish:
    free(path);
    ck_kc_key_free(&key);
    free(all);
    free(dir);
    return s;
}

void ck_kernel_image_free(ck_kernel_image *img)
{
    if (!img) return;
    for (int i = 0; i < img->nlowered; i++) free(img->lowered[i]);
    free(img->lowered);
    free(img->data);
    memset(img, 0, sizeof *img);
}
