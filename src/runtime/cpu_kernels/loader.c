/* A compiled kernel library in memory (see internal.h): loaded without a
 * file of its own, checked against cpu_kernel_abi.h, its callbacks filled
 * and its table of entry points read, and unloaded again. */
#define _GNU_SOURCE /* memfd_create, mkstemps */
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* dlopen a shared object held in memory: through a memfd when there is
 * one, else through a temporary file that is removed once loaded.  The
 * memfd stays open (*keep_fd) while the library is loaded: the loader
 * knows objects by path, and "/proc/self/fd/N" must not name two. */
void *ck_cpu_dlopen_bytes(const void *data, size_t n, int *keep_fd, char *err, size_t errn)
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

ck_status ck_cpu_module_bind(ck_cpu_module *m, void *dl, const void *so, size_t so_size)
{
    m->dl = dl;
    const int *abi = dlsym(dl, CK__SYM_ABI_VERSION);
    ck__api_t *api = dlsym(dl, CK__SYM_API);
    void *getctx = dlsym(dl, CK__SYM_GET_CTX);
    const ck__kdesc *kd = dlsym(dl, CK__SYM_KERNELS);
    if (!abi || !api || !getctx || !kd || *abi != CK__ABI_VERSION)
        return ck_error_set(CK_ERR_RUNTIME, "the CPU kernel library does not match this cudakit (ABI %d, want %d)",
                            abi ? *abi : -1, CK__ABI_VERSION);
    api->sync = ck_cpu_api_sync;
    api->fail = ck_cpu_api_fail;
    api->stop = (volatile int *)&ck_cpu_stop_flag;
    api->poll = ck_cpu_api_poll;
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

/* Worker threads keep no pointer into the library between launches. */
void ck_cpu_module_unload(ck_cpu_module *m)
{
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
    m->dl = NULL;
    m->memfd = -1;
}
