/* The disk cache of compiled kernels (see kcache_disk.h): keys kept in
 * full, the folder and the checks that make it the user's alone, and
 * entries of a 32-byte header (magic, format version, key size, payload
 * size, checksum), the key's fields and the payload. */
#define _GNU_SOURCE /* asprintf, mkostemp */
#include "kcache_disk.h"
#include "../base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define CK_KC_HEADER_SIZE 32 /* magic[4], u32 version, u64 key size, u64 payload size, u64 checksum */
/* A cache file claiming more than this is corrupt, not a kernel; the bound
 * keeps a damaged size field from asking malloc for the moon. */
#define CK_KC_MAX_PAYLOAD ((size_t)1 << 30)
#define CK_KC_MAX_KEY ((size_t)1 << 28)

/* ------------------------------------------------------------- keys */

static void ck_kc_key_put(ck_kc_key *k, const void *p, size_t n)
{
    if (k->failed) return;
    if (n > CK_KC_MAX_KEY - k->len) {
        k->failed = 1;
        return;
    }
    if (k->len + n > k->cap) {
        size_t cap = k->cap ? k->cap : 512;
        while (cap < k->len + n) cap *= 2;
        unsigned char *b = realloc(k->buf, cap);
        if (!b) {
            k->failed = 1;
            return;
        }
        k->buf = b;
        k->cap = cap;
    }
    memcpy(k->buf + k->len, p, n);
    k->len += n;
}

void ck_kc_key_init(ck_kc_key *k, uint64_t seed)
{
    memset(k, 0, sizeof *k);
    k->seed = seed;
    /* the seed (the kind of entry) is a field too: a GPU entry renamed to a
     * CPU one's name differs from the first bytes on */
    ck_kc_key_u64(k, seed);
}

void ck_kc_key_u64(ck_kc_key *k, uint64_t v)
{
    unsigned char b[8];
    ck_store_le64(b, v);
    ck_kc_key_put(k, b, 8);
}

void ck_kc_key_field(ck_kc_key *k, const void *data, size_t n)
{
    ck_kc_key_u64(k, n);
    ck_kc_key_put(k, data, n);
}

void ck_kc_key_digest(ck_kc_key *k, const void *data, size_t n)
{
    ck_hasher h;
    uint64_t r[2];
    ck_hasher_init(&h, 0x636b2d6467737431ull); /* "ck-dgst1" */
    ck_hasher_field(&h, data, n);
    ck_hasher_final(&h, r);
    ck_kc_key_u64(k, n);
    ck_kc_key_u64(k, r[0]);
    ck_kc_key_u64(k, r[1]);
}

char *ck_kc_key_path(const ck_kc_key *k, const char *dir, const char *suffix)
{
    if (!dir || !k || k->failed) return NULL;
    ck_hasher h;
    uint64_t r[2];
    ck_hasher_init(&h, k->seed);
    ck_hasher_update(&h, k->buf, k->len);
    ck_hasher_final(&h, r);
    char *path = NULL;
    if (asprintf(&path, "%s/%016llx%016llx%s", dir, (unsigned long long)r[0], (unsigned long long)r[1], suffix) < 0)
        return NULL;
    return path;
}

void ck_kc_key_free(ck_kc_key *k)
{
    free(k->buf);
    memset(k, 0, sizeof *k);
}

/* -------------------------------------------------------- the cache folder */

/* mkdir -p, making what is missing 0700: kernels reveal what a user runs,
 * and a cache others can write is a way to feed code to their jobs. */
int ck_mkdir_p(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : -1;
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
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static void ck_why_writable(char *why, size_t nwhy, const char *what, const char *path, mode_t mode)
{
    snprintf(why, nwhy, "%s%s is writable by %s (mode %04o)", what, path, mode & S_IWOTH ? "everyone" : "its group",
             (unsigned)(mode & 07777));
}

/* An absolute path without ".", ".." or doubled slashes, which is what
 * realpath() returns when no part of it is a link; lstat() on the way up
 * sees whether one is, so the walk needs no readlink() per part. */
static int ck_path_is_plain(const char *p)
{
    if (p[0] != '/') return 0;
    for (const char *c = p; *c; c++)
        if (c[0] == '/' && (c[1] == '/' || (c[1] == '.' && (!c[2] || c[2] == '/' || (c[2] == '.' && (!c[3] || c[3] == '/'))))))
            return 0;
    return 1;
}

/* The walk of ck_cache_dir_check over real (cut in place); 1 when a part
 * of it turned out to be a link, so the walk must be redone on the
 * resolved path. */
static int ck_cache_dir_walk(char *real, uid_t uid, const char *home, char *why, size_t nwhy, int *rc)
{
    struct stat st;
    size_t n = strlen(real);
    while (n > 1 && real[n - 1] == '/') real[--n] = '\0';
    *rc = -1;
    if (lstat(real, &st) != 0) {
        snprintf(why, nwhy, "it cannot be read (%s)", strerror(errno));
        return 0;
    }
    if (S_ISLNK(st.st_mode)) return 1;
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, nwhy, "it is not a folder");
        return 0;
    }
    if (st.st_uid != uid) {
        snprintf(why, nwhy, "it is owned by uid %u, not by you (uid %u)", (unsigned)st.st_uid, (unsigned)uid);
        return 0;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        ck_why_writable(why, nwhy, "it", "", st.st_mode);
        return 0;
    }
    while (n > 1 && !(home && !strcmp(real, home))) {
        while (n > 1 && real[n - 1] != '/') n--;
        if (n > 1) n--; /* the slash, unless it is the root's */
        real[n] = '\0';
        if (lstat(real, &st) != 0) {
            snprintf(why, nwhy, "its parent %s cannot be read (%s)", real, strerror(errno));
            return 0;
        }
        if (S_ISLNK(st.st_mode)) return 1;
        if (st.st_uid != uid && st.st_uid != 0) {
            snprintf(why, nwhy, "its parent %s is owned by uid %u, neither you (uid %u) nor root", real,
                     (unsigned)st.st_uid, (unsigned)uid);
            return 0;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH)) {
            if (st.st_mode & S_ISVTX) break;
            ck_why_writable(why, nwhy, "its parent ", real, st.st_mode);
            return 0;
        }
    }
    *rc = 0;
    return 0;
}

/* As OpenSSH's safe_path: the folder must be uid's and writable by no one
 * else; each parent uid's or root's and writable by no one else, up to the
 * home folder (checked too) or to a sticky folder of root's or uid's (such
 * as /tmp, where no one else may rename or remove what is ours).  Anyone
 * who can write the folder or a parent can put a file of theirs where an
 * entry is looked for, or a folder of theirs in the folder's place.  Links
 * are followed: what is checked is the folder they lead to. */
int ck_cache_dir_check(const char *dir, uid_t uid, const char *home, char *why, size_t nwhy)
{
    int rc = -1;
    if (ck_path_is_plain(dir) && (!home || ck_path_is_plain(home))) {
        char *copy = strdup(dir), *hcopy = home ? strdup(home) : NULL;
        if (hcopy)
            for (size_t n = strlen(hcopy); n > 1 && hcopy[n - 1] == '/';) hcopy[--n] = '\0';
        int link = copy && (!home || hcopy) ? ck_cache_dir_walk(copy, uid, hcopy, why, nwhy, &rc) : 0;
        if (!copy || (home && !hcopy)) snprintf(why, nwhy, "out of memory");
        free(copy);
        free(hcopy);
        if (!link) return rc;
    }
    char *real = realpath(dir, NULL);
    if (!real) {
        snprintf(why, nwhy, "it cannot be resolved (%s)", strerror(errno));
        return -1;
    }
    char *rhome = home && *home ? realpath(home, NULL) : NULL;
    if (ck_cache_dir_walk(real, uid, rhome, why, nwhy, &rc)) {
        snprintf(why, nwhy, "it changed while it was checked");
        rc = -1;
    }
    free(rhome);
    free(real);
    return rc;
}

int ck_cache_entry_trusted(const struct stat *st, uid_t uid)
{
    return S_ISREG(st->st_mode) && st->st_uid == uid && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The folder asked for (malloc'd): CUDAKIT_CACHE_DIR, else the XDG one;
 * NULL when the cache is off or there is no home to put it in.  *off is
 * set when the user turned it off. */
static char *ck_cache_dir_wanted(const char *home, int *off)
{
    const char *env = getenv("CUDAKIT_CACHE_DIR");
    char *dir = NULL;
    *off = 0;
    if (env) {
        if (!*env || !strcasecmp(env, "off")) {
            *off = 1;
            return NULL;
        }
        return strdup(env);
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    /* The XDG spec says a relative value is invalid and must be ignored. */
    if (xdg && xdg[0] == '/') {
        if (asprintf(&dir, "%s/cudakit", xdg) < 0) return NULL;
        return dir;
    }
    if (!home) return NULL;
    if (asprintf(&dir, "%s/.cache/cudakit", home) < 0) return NULL;
    return dir;
}

/* $HOME, else the password database's (malloc'd), or NULL. */
static char *ck_home_dir(void)
{
    const char *home = getenv("HOME");
    if (home && *home) return strdup(home);
    char pwbuf[4096];
    struct passwd pw, *res = NULL;
    if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) == 0 && res && res->pw_dir && *res->pw_dir)
        return strdup(res->pw_dir);
    return NULL;
}

/* The folder last found safe, and what stat() said of it then.  Once the
 * folder and its parents are checked, only the user or root can make them
 * unsafe (no one else may write them), so a later call that finds the
 * same folder unchanged need not walk the parents again. */
static pthread_mutex_t ck_dir_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *path;
    dev_t dev;
    ino_t ino;
    uid_t uid;
    mode_t mode;
} ck_dir_safe;

static int ck_cache_dir_usable(const char *dir, uid_t uid, const char *home, char *why, size_t nwhy)
{
    /* made before it is checked: a check of a missing folder's parents
     * would not stop another user making it in /tmp between the two */
    struct stat st;
    if (stat(dir, &st) != 0 && (ck_mkdir_p(dir) != 0 || stat(dir, &st) != 0)) {
        snprintf(why, nwhy, "it cannot be made (%s)", strerror(errno));
        return 0;
    }
    pthread_mutex_lock(&ck_dir_lock);
    int known = ck_dir_safe.path && !strcmp(ck_dir_safe.path, dir) && ck_dir_safe.dev == st.st_dev &&
                ck_dir_safe.ino == st.st_ino && ck_dir_safe.uid == st.st_uid && ck_dir_safe.mode == st.st_mode &&
                st.st_uid == uid;
    pthread_mutex_unlock(&ck_dir_lock);
    if (known) return 1;
    if (ck_cache_dir_check(dir, uid, home, why, nwhy) != 0) return 0;
    char *copy = strdup(dir);
    pthread_mutex_lock(&ck_dir_lock);
    free(ck_dir_safe.path);
    ck_dir_safe.path = copy;
    ck_dir_safe.dev = st.st_dev;
    ck_dir_safe.ino = st.st_ino;
    ck_dir_safe.uid = st.st_uid;
    ck_dir_safe.mode = st.st_mode;
    pthread_mutex_unlock(&ck_dir_lock);
    return 1;
}

static pthread_mutex_t ck_warn_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ck_warned_dir; /* the folder last warned about */

static void ck_cache_warn(const char *dir, const char *why, const char *instead)
{
    pthread_mutex_lock(&ck_warn_lock);
    if (!ck_warned_dir || strcmp(ck_warned_dir, dir)) {
        fprintf(stderr, "cudakit: warning: not using the kernel cache folder %s: %s; %s%s\n", dir, why,
                instead ? "using the private folder " : "the disk cache of kernels is off",
                instead ? instead : "");
        free(ck_warned_dir);
        ck_warned_dir = strdup(dir);
    }
    pthread_mutex_unlock(&ck_warn_lock);
}

/* A private folder instead of an unsafe one (malloc'd): the session's
 * runtime folder (the user's alone, by the XDG spec), else one of our own
 * in the temporary folder; NULL when neither is safe (another user may
 * have made /tmp/cudakit-<uid> first). */
static char *ck_cache_dir_private(const char *rejected, uid_t uid, const char *home)
{
    const char *run = getenv("XDG_RUNTIME_DIR"), *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/') tmp = "/tmp";
    char why[PATH_MAX + 160];
    for (int i = 0; i < 2; i++) {
        char *alt = NULL;
        if (i == 0 && (!run || run[0] != '/')) continue;
        int r = i == 0 ? asprintf(&alt, "%s/cudakit", run) : asprintf(&alt, "%s/cudakit-%u", tmp, (unsigned)uid);
        if (r < 0) return NULL;
        if ((!rejected || strcmp(alt, rejected)) && ck_cache_dir_usable(alt, uid, home, why, sizeof why)) return alt;
        free(alt);
    }
    return NULL;
}

char *ck_cache_dir(void)
{
    char *home = ck_home_dir();
    int off = 0;
    char *dir = ck_cache_dir_wanted(home, &off);
    uid_t uid = geteuid();
    char why[PATH_MAX + 160];
    if (off || (dir && ck_cache_dir_usable(dir, uid, home, why, sizeof why))) {
        free(home);
        return dir;
    }
    char *alt = ck_cache_dir_private(dir, uid, home);
    if (dir) ck_cache_warn(dir, why, alt);
    free(dir);
    free(home);
    return alt;
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

static void ck_checksum_init(ck_hasher *h) { ck_hasher_init(h, 0x434b4b4353554d32ull); /* "CKKCSUM2" */ }

/* 1 and the payload (malloc'd) on a valid entry, 0 on a miss.  The open
 * follows no link and does not wait (a FIFO at the name would block
 * forever); what is checked is the open file, so nothing can be swapped in
 * between.  A bad entry is a miss that is also removed, so the rebuild can
 * take its place; we unlink only if the name still points at the file we
 * read, since another process may have renamed a good entry over it
 * meanwhile.  Something that is not a file is left for the store's rename
 * to replace. */
int ck_cache_load(const char *path, const ck_kc_key *key, int need_nul, void **data, size_t *size)
{
    if (!path || !key || key->failed) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    unsigned char hdr[CK_KC_HEADER_SIZE], chunk[4096];
    unsigned char *payload = NULL;
    size_t n = 0;
    int ok = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto done;
    if (!ck_cache_entry_trusted(&st, geteuid())) goto bad;
    if (st.st_size < CK_KC_HEADER_SIZE || ck_read_full(fd, hdr, sizeof hdr) != 0) goto bad;
    if (memcmp(hdr, "CKKC", 4) != 0) goto bad;
    uint32_t version = (uint32_t)hdr[4] | (uint32_t)hdr[5] << 8 | (uint32_t)hdr[6] << 16 | (uint32_t)hdr[7] << 24;
    uint64_t klen = ck_load_le64(hdr + 8), psize = ck_load_le64(hdr + 16), sum = ck_load_le64(hdr + 24);
    if (version != CK_KC_FORMAT_VERSION || klen != key->len || psize == 0 || psize > CK_KC_MAX_PAYLOAD ||
        (uint64_t)st.st_size - CK_KC_HEADER_SIZE != klen + psize)
        goto bad;
    /* Another key's entry under this name (copied, or a hash collision)
     * is as wrong as a damaged one. */
    ck_hasher h;
    ck_checksum_init(&h);
    for (size_t off = 0; off < key->len;) {
        size_t take = key->len - off < sizeof chunk ? key->len - off : sizeof chunk;
        if (ck_read_full(fd, chunk, take) != 0 || memcmp(chunk, key->buf + off, take) != 0) goto bad;
        off += take;
    }
    ck_hasher_update(&h, key->buf, key->len);
    n = (size_t)psize;
    payload = malloc(n);
    if (!payload) goto done; /* out of memory is not the file's fault */
    if (ck_read_full(fd, payload, n) != 0) goto bad;
    ck_hasher_update(&h, payload, n);
    uint64_t r[2];
    ck_hasher_final(&h, r);
    if (r[0] != sum) goto bad;
    if (need_nul && payload[n - 1] != '\0') goto bad; /* the driver reads PTX up to a NUL */
    ok = 1;
    goto done;
bad: {
        struct stat now;
        if (lstat(path, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev) unlink(path);
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
void ck_cache_store(const char *dir, const char *path, const ck_kc_key *key, const void *data, size_t size)
{
    if (!dir || !path || !key || key->failed || size == 0 || size > CK_KC_MAX_PAYLOAD) return;
    if (ck_mkdir_p(dir) != 0) return;
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) return;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        free(tmp);
        return;
    }
    ck_hasher h;
    uint64_t sum[2];
    ck_checksum_init(&h);
    ck_hasher_update(&h, key->buf, key->len);
    ck_hasher_update(&h, data, size);
    ck_hasher_final(&h, sum);
    unsigned char hdr[CK_KC_HEADER_SIZE];
    memcpy(hdr, "CKKC", 4);
    for (int i = 0; i < 4; i++) hdr[4 + i] = (unsigned char)(CK_KC_FORMAT_VERSION >> (8 * i));
    ck_store_le64(hdr + 8, key->len);
    ck_store_le64(hdr + 16, size);
    ck_store_le64(hdr + 24, sum[0]);
    int ok = ck_write_full(fd, hdr, sizeof hdr) == 0 && ck_write_full(fd, key->buf, key->len) == 0 &&
             ck_write_full(fd, data, size) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
    free(tmp);
}
