/* The precompiled header (see internal.h).  Parsing the C++ standard
 * headers the compat header needs is about half of a small kernel's
 * compile.  With GCC, a precompiled cuda_compat.hpp kept in the cache
 * folder (one per compiler, header and flag set) cuts that out; GCC checks
 * it fits and silently parses the text when it does not (another -std,
 * -ffast-math).  It is built in the background after the first compile
 * that finds none, so no load ever waits for it. */
#define _GNU_SOURCE /* asprintf */
#include "internal.h"
#include "../kcache_disk.h"
#include "../../base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

char *ck_cpu_pch_dir(const char *cache, const char *const *flags, int nflags)
{
    const ck_cxx *cxx = ck_cpu_cxx();
    if (!cache || !cxx->is_gcc) return NULL;
    const char *e = getenv("CUDAKIT_CPU_PCH");
    if (e && !strcmp(e, "0")) return NULL;
    ck_hasher h;
    uint64_t key[2];
    ck_hasher_init(&h, 0x636b2d7063683031ull); /* "ck-pch01" */
    ck_hasher_field(&h, cxx->id, strlen(cxx->id));
    ck_hasher_field(&h, ck_src_cuda_compat, ck_src_cuda_compat_len);
    ck_hasher_field(&h, ck_src_cpu_kernel_abi, ck_src_cpu_kernel_abi_len);
    for (int i = 0; i < nflags; i++) ck_hasher_field(&h, flags[i], strlen(flags[i]));
    ck_hasher_final(&h, key);
    char *d = NULL;
    if (asprintf(&d, "%s/cpu-pch-%016llx", cache, (unsigned long long)key[0]) < 0) return NULL;
    return d;
}

/* pchdir/name is a file of ours that no one else can write (lstat: the
 * folder is checked first, so no one else can swap it afterwards). */
static int ck_pch_trusted(const char *pchdir, const char *name, struct stat *st)
{
    char *p = NULL;
    int ok = asprintf(&p, "%s/%s", pchdir, name) >= 0 && lstat(p, st) == 0 && ck_cache_entry_trusted(st, geteuid());
    free(p);
    return ok;
}

/* GCC reads the .gch and the headers beside it by name, so what we can
 * check is that the folder (in the cache folder, checked already) and they
 * are ours alone (a precompiled header is code pasted into every kernel)
 * and that the header is this build's (the folder's name is a hash of it). */
int ck_cpu_pch_ready(const char *pchdir)
{
    struct stat st;
    if (!pchdir || lstat(pchdir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & (S_IWGRP | S_IWOTH)))
        return 0;
    if (!ck_pch_trusted(pchdir, "cuda_compat.hpp.gch", &st) || st.st_size == 0 ||
        !ck_pch_trusted(pchdir, "cpu_kernel_abi.h", &st) || !ck_pch_trusted(pchdir, "cuda_compat.hpp", &st) ||
        (size_t)st.st_size != ck_src_cuda_compat_len)
        return 0;
    char *p = NULL;
    int ok = 0;
    if (asprintf(&p, "%s/cuda_compat.hpp", pchdir) >= 0) {
        int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        char *text = malloc(ck_src_cuda_compat_len + 1);
        ssize_t got = fd >= 0 && text ? read(fd, text, ck_src_cuda_compat_len + 1) : -1;
        ok = got == (ssize_t)ck_src_cuda_compat_len && !memcmp(text, ck_src_cuda_compat, ck_src_cuda_compat_len);
        free(text);
        if (fd >= 0) close(fd);
    }
    free(p);
    return ok;
}

/* Write dir/name whole: under a temporary name, then renamed into place. */
static int ck_pch_put(const char *dir, const char *name, const char *data, size_t n)
{
    char *tmp = NULL, *tmpp = NULL, *path = NULL;
    int ok = asprintf(&tmp, "%s.tmp.%d", name, (int)getpid()) >= 0 && ck_cpu_write_file(dir, tmp, data, n) == 0;
    if (ok && (asprintf(&tmpp, "%s/%s", dir, tmp) < 0 || asprintf(&path, "%s/%s", dir, name) < 0)) ok = 0;
    if (ok && rename(tmpp, path) != 0) {
        unlink(tmpp);
        ok = 0;
    }
    free(tmp);
    free(tmpp);
    free(path);
    return ok ? 0 : -1;
}

/* Start `cxx flags -x c++-header` on the header in pchdir and return at
 * once: a shell puts the compile in the background and exits, so nothing
 * is left for us to wait for.  The result is renamed into place whole. */
void ck_cpu_pch_build_async(const char *pchdir, const char *const *flags, int nflags)
{
    const ck_cxx *cxx = ck_cpu_cxx();
    char *hdr = NULL;
    struct stat st;
    if (ck_mkdir_p(pchdir) != 0 || asprintf(&hdr, "%s/cuda_compat.hpp", pchdir) < 0) return;
    /* A header younger than two minutes: another process is building. */
    if (stat(hdr, &st) == 0 && time(NULL) - st.st_mtime < 120) goto done;
    /* The header it includes first, so the header is never there without it. */
    if (ck_pch_put(pchdir, "cpu_kernel_abi.h", ck_src_cpu_kernel_abi, ck_src_cpu_kernel_abi_len) != 0 ||
        ck_pch_put(pchdir, "cuda_compat.hpp", ck_src_cuda_compat, ck_src_cuda_compat_len) != 0)
        goto done;
    /* Under the same limits as every compile; nobody waits for this one,
     * so the CPU limit is what ends it if it hangs. */
    ck_cxx_limits lim;
    if (ck_cpu_compile_limits(&lim) != CK_OK) goto done;
    static const char script[] =
        CK_CPU_LIMITS_SH "d=$1; shift; ( \"$@\" -x c++-header \"$d/cuda_compat.hpp\" -o \"$d/gch.tmp.$$\" && "
        "mv -f \"$d/gch.tmp.$$\" \"$d/cuda_compat.hpp.gch\"; rm -f \"$d/gch.tmp.$$\" ) </dev/null >/dev/null 2>&1 &";
    const char **argv = calloc((size_t)(cxx->argc + nflags + 10), sizeof *argv);
    if (!argv) goto done;
    int k = 0;
    argv[k++] = "/bin/sh";
    argv[k++] = "-c";
    argv[k++] = script;
    argv[k++] = "sh";
    argv[k++] = lim.cpu_soft;
    argv[k++] = lim.cpu_hard;
    argv[k++] = lim.mem_kib;
    argv[k++] = pchdir;
    for (int i = 0; i < cxx->argc; i++) argv[k++] = cxx->argv[i];
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
}
