/* The module API of cpu_kernels.h (see internal.h): a load scans the
 * source, wraps it into a translation unit, and takes the shared object
 * from the disk cache or compiles it; then the look-ups of kernels and
 * variables in a loaded module. */
#define _GNU_SOURCE /* asprintf, dladdr1, flockfile */
#include "internal.h"
#include "../kcache_disk.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bump when anything folded into a module's cache key changes meaning
 * (the generated wrapper, the stub headers, the compile flags). */
#define CK_CPU_FORMAT_VERSION 2u

static int ck_debug_kernels(void)
{
    const char *d = getenv("CUDAKIT_DEBUG");
    return d && strstr(d, "kernels") != NULL;
}

static double ck_cpu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

/* The user's source (as the scan rewrote it) behind cuda_compat.hpp, then
 * the table of entry points the loader reads: every extern "C" kernel and
 * every name expression, once each. */
static void ck_module_tu(ck_sbuf *tu, const ck_srcscan *sc, const char *const *name_exprs, int nexprs)
{
    ck_sbuf_printf(tu, "#include \"cuda_compat.hpp\"\n#line 1 \"" CK_CPU_FILE "\"\n%s\n", sc->out.s ? sc->out.s : "");
    ck_sbuf_printf(tu, "#line 1 \"<cudakit kernel table>\"\nextern \"C\" {\nextern const ck__kdesc " CK__SYM_KERNELS
                       "[];\nconst ck__kdesc " CK__SYM_KERNELS "[] = {\n");
    for (int i = 0; i < sc->nnames; i++) {
        ck_sbuf_printf(tu, "CK__KERNEL(");
        ck_c_escape(tu, sc->names[i]);
        ck_sbuf_printf(tu, ", &%s),\n", sc->names[i]);
    }
    for (int i = 0; i < nexprs; i++) {
        int dup = 0;
        for (int j = 0; j < sc->nnames; j++) dup |= !strcmp(sc->names[j], name_exprs[i]);
        for (int j = 0; j < i; j++) dup |= !strcmp(name_exprs[j], name_exprs[i]);
        if (dup) continue;
        ck_sbuf_printf(tu, "CK__KERNEL(");
        ck_c_escape(tu, name_exprs[i]);
        ck_sbuf_printf(tu, ", &%s),\n", name_exprs[i]);
    }
    ck_sbuf_printf(tu, "{0, 0, 0, 0}};\n}\n");
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
    const ck_cxx *cxx = ck_cpu_cxx();
    if (!cxx->argv)
        return ck_error_set(CK_ERR_RUNTIME, "no C++ compiler found to run CUDA C kernels on the CPU: install g++ or "
                                            "clang++, or set CXX");

    ck_srcscan sc = {0};
    ck_sbuf tu = {0};
    ck_kc_key key = {0};
    const char **flags = calloc((size_t)(2 * noptions + 16), sizeof *flags);
    int nmapped = 0, nflags = 0, has_std = 0, local = 0;
    char *dir = NULL, *path = NULL, *so = NULL;
    size_t so_size = 0;
    ck_cpu_module *m = NULL;
    ck_status s = CK_OK;
    if (!flags || ck_cpu_scan_source(source, &sc) != 0) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        goto done;
    }
    char **mapped = (char **)flags;
    nmapped = ck_cpu_map_options(options, noptions, mapped, &has_std, &local);
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
    if (cxx->is_gcc) all[nflags++] = "-mtls-dialect=gnu2";
#endif
    /* A frame larger than a page is probed a page at a time, so a stack
     * overflow meets the guard below the stack instead of stepping over it. */
    if (cxx->is_gcc) all[nflags++] = "-fstack-clash-protection";
    for (int i = 0; i < nmapped; i++) all[nflags++] = mapped[i];

    ck_module_tu(&tu, &sc, name_exprs, nexprs);
    if (tu.failed) {
        s = ck_error_set(CK_ERR_MEMORY, "out of memory");
        free(all);
        goto done;
    }

    dir = ck_cache_dir();
    ck_kc_key_init(&key, 0x636b2d6370756b31ull); /* "ck-cpuk1" */
    ck_kc_key_u64(&key, CK_CPU_FORMAT_VERSION);
    ck_kc_key_field(&key, cxx->id, strlen(cxx->id));
    ck_kc_key_digest(&key, ck_src_cuda_compat, ck_src_cuda_compat_len);
    ck_kc_key_digest(&key, ck_src_cpu_kernel_abi, ck_src_cpu_kernel_abi_len);
    ck_kc_key_u64(&key, (uint64_t)nflags);
    for (int i = 0; i < nflags; i++) ck_kc_key_field(&key, all[i], strlen(all[i]));
    ck_kc_key_field(&key, tu.s, tu.len);
    path = ck_kc_key_path(&key, dir, ".cpu.so");
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
    if (path && ck_cache_load(path, &key, 0, &data, &size)) {
        void *dl = ck_cpu_dlopen_bytes(data, size, &m->memfd, err, sizeof err);
        if (dl) {
            m->from_disk = 1;
            s = ck_cpu_module_bind(m, dl, data, size);
            free(data);
            free(all);
            goto loaded;
        }
        free(data);
        unlink(path); /* unloadable: rebuild it below */
    }
    /* Our flags only: a user's -D that the header does not use leaves the
     * precompiled header usable. */
    char *pchdir = ck_cpu_pch_dir(dir, all, nflags - nmapped);
    int have_pch = ck_cpu_pch_ready(pchdir);
    if (ck_debug_kernels()) {
        flockfile(stderr);
        fprintf(stderr, "[cudakit] CPU kernel module: compiling with");
        for (int i = 0; i < cxx->argc; i++) fprintf(stderr, " %s", cxx->argv[i]);
        for (int i = 0; i < nflags; i++) fprintf(stderr, " %s", all[i]);
        fprintf(stderr, "%s%s\n", have_pch ? ", precompiled header in " : "", have_pch ? pchdir : "");
        funlockfile(stderr);
    }
    s = ck_cpu_compile(tu.s, source, all, nflags, have_pch ? pchdir : NULL, &so, &so_size);
    if (s == CK_OK && pchdir && !have_pch) ck_cpu_pch_build_async(pchdir, all, nflags - nmapped);
    free(pchdir);
    free(all);
    if (s != CK_OK) goto done;
    if (path) ck_cache_store(dir, path, &key, so, so_size);
    void *dl = ck_cpu_dlopen_bytes(so, so_size, &m->memfd, err, sizeof err);
    if (!dl) {
        s = ck_error_set(CK_ERR_RUNTIME, "cannot load the compiled CPU kernel library: %s", err);
        goto done;
    }
    s = ck_cpu_module_bind(m, dl, so, so_size);
loaded:
    m->load_ms = ck_cpu_now_ms() - t0;
    if (s == CK_OK && ck_debug_kernels())
        fprintf(stderr, "[cudakit] CPU kernel module: %s in %.2f ms (%s, %s)%s%s\n",
                m->from_disk ? "from the disk cache" : "compiled", m->load_ms, cxx->argv[0],
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
    ck_kc_key_free(&key);
    free(tu.s);
    ck_cpu_scan_free(&sc);
    return s;
}

void ck_cpu_module_free(ck_cpu_module *m)
{
    if (!m) return;
    ck_cpu_module_unload(m);
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
        !strncmp(name, CK__SYM_PREFIX, strlen(CK__SYM_PREFIX)))
        return ck_error_set(CK_ERR_VALUE, "no __device__ or __constant__ variable named '%s' in the module", name);
    *ptr = p;
    *nbytes = (size_t)sym->st_size;
    return CK_OK;
}
