/* The disk cache of compiled kernels (see kcache_disk.h): the folder, and
 * entries of a 24-byte header (magic, format version, payload size,
 * checksum) and the payload. */
#define _GNU_SOURCE /* asprintf */
#include "kcache_disk.h"
#include "../base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CK_KC_HEADER_SIZE 24 /* magic[4], u32 version, u64 payload size, u64 checksum */
/* A cache file claiming more than this is corrupt, not a kernel; the bound
 * keeps a damaged size field from asking malloc for the moon. */
#define CK_KC_MAX_PAYLOAD ((size_t)1 << 30)

static uint64_t ck_checksum64(const void *data, size_t n)
{
    ck_hasher h;
    uint64_t r[2];
    ck_hasher_init(&h, 0x434b4b4353554d31ull); /* "CKKCSUM1": not the key's seed */
    ck_hasher_update(&h, data, n);
    ck_hasher_final(&h, r);
    return r[0];
}

/* -------------------------------------------------------- the cache folder */

/* mkdir -p, making what is missing 0700: kernels reveal what a user runs,
 * and a cache others can write is a way to feed code to their GPU jobs. */
int ck_mkdir_p(const char *path)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 1);
    if (!tmp) return -1;
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0') continue;
        char c = tmp[i];
        tmp[i] = '\0';
        if (mkdir(tmp, 0700) == 0) {
            /* A restrictive umask could leave us unable to use it; a loose
             * one cannot widen 0700, but be explicit either way. */
            chmod(tmp, 0700);
        } else if (errno != EEXIST) {
            free(tmp);
            return -1;
        }
        tmp[i] = c;
    }
    free(tmp);
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* The cache folder (malloc'd), or NULL when the cache is off or there is
 * nowhere to put it. */
char *ck_cache_dir(void)
{
    const char *env = getenv("CUDAKIT_CACHE_DIR");
    char *dir = NULL;
    if (env) {
        if (!*env || !strcasecmp(env, "off")) return NULL;
        return strdup(env);
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    /* The XDG spec says a relative value is invalid and must be ignored. */
    if (xdg && xdg[0] == '/') {
        if (asprintf(&dir, "%s/cudakit", xdg) < 0) return NULL;
        return dir;
    }
    const char *home = getenv("HOME");
    char pwbuf[4096];
    struct passwd pw, *res = NULL;
    if ((!home || !*home) && getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
        home = res->pw_dir;
    if (!home || !*home) return NULL;
    if (asprintf(&dir, "%s/.cache/cudakit", home) < 0) return NULL;
    return dir;
}

/* ------------------------------------------------------ cache entries */

static int ck_read_full(int fd, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int ck_write_full(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* 1 and the payload (malloc'd) on a valid entry, 0 on a miss.  A damaged
 * entry is a miss that is also removed, so the rebuild can take its place;
 * we unlink only if the name still points at the file we read, since
 * another process may have renamed a good entry over it meanwhile. */
int ck_cache_load(const char *path, int is_cubin, void **data, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    unsigned char hdr[CK_KC_HEADER_SIZE];
    unsigned char *payload = NULL;
    size_t n = 0;
    int ok = 0;
    if (fstat(fd, &st) != 0) goto done;
    if (st.st_size < CK_KC_HEADER_SIZE || (uint64_t)st.st_size - CK_KC_HEADER_SIZE > CK_KC_MAX_PAYLOAD) goto bad;
    if (ck_read_full(fd, hdr, sizeof hdr) != 0) goto bad;
    if (memcmp(hdr, "CKKC", 4) != 0) goto bad;
    uint32_t version = (uint32_t)hdr[4] | (uint32_t)hdr[5] << 8 | (uint32_t)hdr[6] << 16 | (uint32_t)hdr[7] << 24;
    uint64_t psize = ck_load_le64(hdr + 8);
    uint64_t sum = ck_load_le64(hdr + 16);
    if (version != CK_KC_FORMAT_VERSION || psize == 0 || psize != (uint64_t)st.st_size - CK_KC_HEADER_SIZE) goto bad;
    n = (size_t)psize;
    payload = malloc(n);
    if (!payload) goto done; /* out of memory is not the file's fault */
    if (ck_read_full(fd, payload, n) != 0) goto bad;
    if (ck_checksum64(payload, n) != sum) goto bad;
    if (!is_cubin && payload[n - 1] != '\0') goto bad; /* the driver reads PTX up to a NUL */
    ok = 1;
    goto done;
bad: {
        struct stat now;
        if (stat(path, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev) unlink(path);
    }
done:
    close(fd);
    if (!ok) {
        free(payload);
        return 0;
    }
    *data = payload;
    *size = n;
    return 1;
}

/* Write the entry under a private temporary name, then rename() it into
 * place: readers see the old entry, no entry or the whole new one, and two
 * processes storing the same key just replace one good file with another.
 * No fsync: a file cut short by a crash fails its checksum and is rebuilt.
 * Failures are silent, since the cache is only an optimisation. */
void ck_cache_store(const char *dir, const char *path, const void *data, size_t size)
{
    if (ck_mkdir_p(dir) != 0) return;
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) return;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return;
    }
    unsigned char hdr[CK_KC_HEADER_SIZE];
    memcpy(hdr, "CKKC", 4);
    for (int i = 0; i < 4; i++) hdr[4 + i] = (unsigned char)(CK_KC_FORMAT_VERSION >> (8 * i));
    ck_store_le64(hdr + 8, size);
    ck_store_le64(hdr + 16, ck_checksum64(data, size));
    int ok = ck_write_full(fd, hdr, sizeof hdr) == 0 && ck_write_full(fd, data, size) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
    free(tmp);
}
