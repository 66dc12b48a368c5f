/* The kernel compiler and its disk cache: a cold compile gives a CUBIN,
 * the second call reads it back, damaged entries are rebuilt, compile
 * errors carry the offending source line, and concurrent callers agree.
 * Needs NVRTC but no GPU; without NVRTC it skips, after the checks that
 * make the cache safe to use (keys kept in full, the folder's owner and
 * mode, entries that are not regular files of ours), which need neither. */
#define _GNU_SOURCE
#include "cudakit.h"
#include "../../src/platform/cuda_api.h"
#include "../../src/runtime/kcache.h"
#include "../../src/runtime/kcache_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

#define CHECK_OK(call)                                                           \
    do {                                                                         \
        ck_status s_ = (call);                                                   \
        if (s_ != CK_OK) {                                                       \
            fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, (int)s_, \
                    ck_error_message());                                         \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static const char *k_trivial =
    "extern \"C\" __global__ void ck_test_fill(float *x, float v, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = v;\n"
    "}\n";

/* Line 4 is the broken one; the test looks for its text in the message. */
static const char *k_broken =
    "extern \"C\" __global__ void ck_test_broken(float *x)\n"
    "{\n"
    "    int i = threadIdx.x;\n"
    "    float ck_broken_line = * ;\n"
    "    x[i] = ck_broken_line;\n"
    "}\n";

static int is_elf(const ck_kernel_image *img)
{
    const unsigned char *p = img->data;
    return img->size > 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

/* An image the driver could load: a CUBIN when NVRTC can make one. */
static int image_valid(const ck_kernel_image *img)
{
    if (!img->data || !img->size) return 0;
    if (img->is_cubin) return is_elf(img);
    return strstr(img->data, ".entry") != NULL && ((const char *)img->data)[img->size - 1] == '\0';
}

/* Cache entries in dir with the given suffix; the name of the last one
 * found goes to *last (malloc'd) when asked. */
static int count_entries(const char *dir, const char *suffix, char **last)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l >= sl && !strcmp(e->d_name + l - sl, suffix)) {
            n++;
            if (last) {
                free(*last);
                if (asprintf(last, "%s/%s", dir, e->d_name) < 0) *last = NULL;
            }
        }
    }
    closedir(d);
    return n;
}

/* Anything in dir that is not a finished entry: temporary files left behind. */
static int count_strays(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

typedef struct {
    const char *src;
    ck_kernel_image img;
    ck_status status;
} thread_job;

static void *compile_thread(void *arg)
{
    thread_job *j = arg;
    j->status = ck_kernel_compile(j->src, "ck_threads.cu", NULL, 0, 90, &j->img);
    return NULL;
}

static nvrtcResult fake_get_cubin(nvrtcProgram prog, char *cubin)
{
    (void)prog, (void)cubin;
    return 7;
}

static int check_dir(const char *dir, uid_t uid, const char *home, const char *want)
{
    char why[1024] = "";
    int rc = ck_cache_dir_check(dir, uid, home, why, sizeof why);
    if (want ? rc == 0 || !strstr(why, want) : rc != 0) {
        fprintf(stderr, "check of %s as uid %u: %d, '%s'; wanted %s\n", dir, (unsigned)uid, rc, why,
                want ? want : "safe");
        return 0;
    }
    return 1;
}

static void make_key(ck_kc_key *k, const char *text)
{
    ck_kc_key_init(k, 0x746573746b657931ull);
    ck_kc_key_u64(k, 90);
    ck_kc_key_field(k, text, strlen(text));
}

/* What makes the cache safe against others (and against entries under the
 * wrong name); no compiler needed. */
static void test_disk_safety(void)
{
    char root[] = "/tmp/ck_kcache_safety_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        failures++;
        return;
    }
    char dir[600], sub[700], path[800], link[700];
    uid_t me = geteuid(), other = geteuid() + 4242;
    snprintf(dir, sizeof dir, "%s/cache", root);
    CHECK(mkdir(dir, 0700) == 0);

    /* ---- the folder: owner and mode of it and of its parents */
    CHECK(check_dir(dir, me, NULL, NULL));
    CHECK(check_dir(dir, other, NULL, "it is owned by uid"));   /* as another user sees it */
    CHECK(check_dir(root, me, root, NULL));                      /* the walk stops at home */
    CHECK(chmod(dir, 0770) == 0);
    CHECK(check_dir(dir, me, NULL, "it is writable by its group (mode 0770)"));
    CHECK(chmod(dir, 01777) == 0);
    CHECK(check_dir(dir, me, NULL, "it is writable by everyone (mode 1777)"));
    CHECK(chmod(dir, 0700) == 0);
    snprintf(sub, sizeof sub, "%s/inner", dir);
    CHECK(mkdir(sub, 0700) == 0);
    CHECK(chmod(dir, 0777) == 0);
    CHECK(check_dir(sub, me, NULL, "its parent "));
    CHECK(check_dir(sub, me, NULL, "/cache is writable by everyone (mode 0777)"));
    CHECK(check_dir(sub, me, dir, "its parent "));               /* a home others can write is no stop */
    CHECK(chmod(dir, 01777) == 0);
    CHECK(check_dir(sub, me, NULL, NULL));                       /* sticky, as /tmp: no one else may rename */
    CHECK(chmod(dir, 0700) == 0);
    /* a parent of another user's: the folder is ours, the parent not (as
     * that user sees it, the folder is not theirs: the first check fails) */
    CHECK(check_dir(sub, other, NULL, "it is owned by uid"));
    if (me == 0) { /* root can make it so */
        CHECK(chown(dir, 65534, 65534) == 0);
        CHECK(check_dir(sub, me, NULL, "/cache is owned by uid 65534, neither you (uid 0) nor root"));
        CHECK(chown(dir, 0, 0) == 0);
    }
    /* a link is checked where it leads, and so are the spellings realpath cleans */
    snprintf(link, sizeof link, "%s/link", root);
    CHECK(symlink(sub, link) == 0);
    CHECK(chmod(dir, 0777) == 0);
    CHECK(check_dir(link, me, NULL, "/cache is writable by everyone"));
    char dotted[900];
    snprintf(dotted, sizeof dotted, "%s/./inner/../inner/", dir);
    CHECK(check_dir(dotted, me, NULL, "/cache is writable by everyone"));
    CHECK(chmod(dir, 0700) == 0);
    CHECK(check_dir(link, me, NULL, NULL));
    snprintf(path, sizeof path, "%s/file", root);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK(check_dir(path, me, NULL, "not a folder"));

    /* ---- ck_cache_dir: an unsafe folder gives way to a private one */
    {
        char priv[720], tmpd[700];
        snprintf(tmpd, sizeof tmpd, "%s/tmp", root);
        CHECK(mkdir(tmpd, 0700) == 0);
        snprintf(priv, sizeof priv, "%s/cudakit-%u", tmpd, (unsigned)me);
        char *saved_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        char *saved_run = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
        setenv("TMPDIR", tmpd, 1);
        unsetenv("XDG_RUNTIME_DIR");
        setenv("CUDAKIT_CACHE_DIR", dir, 1);
        char *got = ck_cache_dir();
        CHECK(got && !strcmp(got, dir));
        free(got);
        CHECK(chmod(dir, 0777) == 0);
        got = ck_cache_dir(); /* warns on stderr, once */
        CHECK(got && !strcmp(got, priv));
        free(got);
        struct stat st;
        CHECK(stat(priv, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == me);
        /* the private folder someone else's (world-writable here): no cache */
        CHECK(chmod(priv, 0777) == 0);
        got = ck_cache_dir();
        CHECK(got == NULL);
        free(got);
        char run[700], runc[720];
        snprintf(run, sizeof run, "%s/run", root);
        snprintf(runc, sizeof runc, "%s/cudakit", run);
        CHECK(mkdir(run, 0700) == 0);
        setenv("XDG_RUNTIME_DIR", run, 1); /* the session's folder comes first */
        got = ck_cache_dir();
        CHECK(got && !strcmp(got, runc));
        free(got);
        CHECK(chmod(dir, 0700) == 0);
        if (saved_tmp) setenv("TMPDIR", saved_tmp, 1); else unsetenv("TMPDIR");
        if (saved_run) setenv("XDG_RUNTIME_DIR", saved_run, 1); else unsetenv("XDG_RUNTIME_DIR");
        free(saved_tmp);
        free(saved_run);
    }

    /* ---- entries: the key kept in full */
    ck_kc_key ka, kb;
    make_key(&ka, "kernel A");
    make_key(&kb, "kernel B");
    char *pa = ck_kc_key_path(&ka, dir, ".test"), *pb = ck_kc_key_path(&kb, dir, ".test");
    CHECK(pa && pb && strcmp(pa, pb));
    void *data = NULL;
    size_t size = 0;
    ck_cache_store(dir, pa, &ka, "AAAA", 5);
    ck_cache_store(dir, pb, &kb, "BBBB", 5);
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 1 && size == 5 && !memcmp(data, "AAAA", 5));
    free(data);
    CHECK(rename(pb, pa) == 0); /* B's valid entry under A's name */
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 0);
    CHECK(access(pa, F_OK) != 0 && errno == ENOENT); /* rejected and removed */
    ck_cache_store(dir, pa, &ka, "AAAA", 5);
    /* the entry's trust: a regular file of ours no one else can write */
    struct stat st;
    CHECK(stat(pa, &st) == 0 && (st.st_mode & 07777) == 0600);
    CHECK(ck_cache_entry_trusted(&st, me));
    CHECK(!ck_cache_entry_trusted(&st, other)); /* an entry planted by another user */
    CHECK(chmod(pa, 0620) == 0);
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 0 && access(pa, F_OK) != 0);
    /* a link to a valid entry is not followed */
    ck_cache_store(dir, pb, &ka, "AAAA", 5);
    CHECK(symlink(pb, pa) == 0);
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 0);
    ck_cache_store(dir, pa, &ka, "AAAA", 5); /* the rename replaces the link */
    CHECK(lstat(pa, &st) == 0 && S_ISREG(st.st_mode));
    /* a FIFO: no wait for a writer that never comes, and the store replaces it */
    CHECK(unlink(pa) == 0 && mkfifo(pa, 0600) == 0);
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 0);
    ck_cache_store(dir, pa, &ka, "AAAA", 5);
    CHECK(ck_cache_load(pa, &ka, 1, &data, &size) == 1);
    free(data);
    /* another kind of entry, same fields otherwise (another seed) */
    ck_kc_key kc;
    ck_kc_key_init(&kc, 0x746573746b657932ull);
    ck_kc_key_u64(&kc, 90);
    ck_kc_key_field(&kc, "kernel A", 8);
    CHECK(ck_cache_load(pa, &kc, 1, &data, &size) == 0);
    ck_kc_key_free(&kc);
    ck_kc_key_free(&ka);
    ck_kc_key_free(&kb);
    free(pa);
    free(pb);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    test_disk_safety();
    if (ck_nvrtc_load() != CK_OK) {
        if (failures) return 1;
        printf("test_kcache: SKIP (NVRTC not available: %s)\n", ck_error_message());
        return 0;
    }
    unsetenv("CUDAKIT_DEBUG");
    char root[] = "/tmp/ck_kcache_test_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    /* Two levels that do not exist yet, so the mkdir -p path is exercised
     * and the mode checked is the one the cache chose. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/nested/cache", root);
    setenv("CUDAKIT_CACHE_DIR", dir, 1);

    /* ---- cold compile, then a disk hit */
    ck_kernel_image a = {0}, b = {0}, c = {0};
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &a));
    CHECK(a.from_disk == 0);
    CHECK(a.is_cubin == 1); /* NVRTC 11.1+ makes CUBINs; this machine's is 13 */
    CHECK(image_valid(&a));
    CHECK(is_elf(&a));
    double cold_ms = a.compile_ms;

    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &b));
    CHECK(b.from_disk == 1);
    CHECK(b.is_cubin == a.is_cubin);
    CHECK(b.size == a.size && a.data && b.data && !memcmp(a.data, b.data, a.size));
    double disk_ms = b.compile_ms;
    printf("test_kcache: trivial kernel for sm_90: %.2f ms cold, %.3f ms from disk (%zu-byte %s)\n", cold_ms,
           disk_ms, a.size, a.is_cubin ? "cubin" : "ptx");

    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
    char *entry = NULL;
    CHECK(count_entries(dir, ".cubin", &entry) == 1);
    CHECK(count_strays(dir) == 0);

    /* A different architecture or option is a different entry. */
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 80, &c));
    CHECK(c.from_disk == 0 && is_elf(&c));
    ck_kernel_image_free(&c);
    const char *opt_lineinfo[] = {"-lineinfo"};
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", opt_lineinfo, 1, 90, &c));
    CHECK(c.from_disk == 0 && is_elf(&c));
    ck_kernel_image_free(&c);
    CHECK(count_entries(dir, ".cubin", NULL) == 3);

    /* ---- a truncated entry is a miss, rebuilt in place */
    CHECK(entry && stat(entry, &st) == 0);
    CHECK(entry && truncate(entry, st.st_size / 2) == 0);
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
    CHECK(c.from_disk == 0 && image_valid(&c));
    CHECK(c.size == a.size && c.data && !memcmp(c.data, a.data, a.size));
    ck_kernel_image_free(&c);
    CHECK(entry && stat(entry, &st) == 0 && (size_t)st.st_size > a.size);
    CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
    CHECK(c.from_disk == 1 && image_valid(&c));
    ck_kernel_image_free(&c);

    /* ---- so is one with a flipped payload byte (same size: the checksum
     * has to catch it), and one with a bad magic */
    for (int which = 0; which < 2 && entry; which++) {
        int fd = open(entry, O_RDWR);
        CHECK(fd >= 0);
        if (fd < 0) break;
        off_t at = which == 0 ? st.st_size - 7 : 0;
        unsigned char byte;
        CHECK(pread(fd, &byte, 1, at) == 1);
        byte ^= 0x5a;
        CHECK(pwrite(fd, &byte, 1, at) == 1);
        close(fd);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        CHECK(c.from_disk == 0 && image_valid(&c));
        CHECK(c.size == a.size && c.data && !memcmp(c.data, a.data, a.size));
        ck_kernel_image_free(&c);
    }

    /* ---- another kernel's valid entry (sm_80's) under this one's name:
     * a miss, and rebuilt */
    {
        char *other = NULL;
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 80, &c));
        CHECK(c.from_disk == 1);
        ck_kernel_image_free(&c);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char *p = NULL;
            if (!strstr(e->d_name, ".cubin") || asprintf(&p, "%s/%s", dir, e->d_name) < 0) continue;
            if (strcmp(p, entry) && !other) {
                /* the sm_80 one: the one whose payload differs from a's */
                struct stat so;
                if (stat(p, &so) == 0 && so.st_size != st.st_size) other = p;
                else free(p);
            } else {
                free(p);
            }
        }
        if (d) closedir(d);
        CHECK(other != NULL);
        if (other && entry) {
            char cmd[2048];
            snprintf(cmd, sizeof cmd, "cp '%s' '%s'", other, entry);
            CHECK(system(cmd) == 0);
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.from_disk == 0 && c.size == a.size && !memcmp(c.data, a.data, a.size));
            ck_kernel_image_free(&c);
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.from_disk == 1 && c.size == a.size && !memcmp(c.data, a.data, a.size));
            ck_kernel_image_free(&c);
        }
        free(other);
    }

    /* ---- a syntax error: CK_ERR_COMPILE, the log, and the line itself */
    CHECK(ck_kernel_compile(k_broken, "ck_test_broken.cu", NULL, 0, 90, &c) == CK_ERR_COMPILE);
    CHECK(c.data == NULL);
    const char *msg = ck_error_message();
    CHECK(strstr(msg, "float ck_broken_line = * ;") != NULL);
    CHECK(strstr(msg, ">>    4 |") != NULL);
    CHECK(strstr(msg, "ck_test_broken.cu(4): error") != NULL);
    CHECK(strstr(msg, "    2 | {") != NULL); /* context before */
    CHECK(strstr(msg, "    6 | }") != NULL); /* and after */
    if (failures) fprintf(stderr, "compile error message was:\n%s\n", msg);
    CHECK(count_entries(dir, ".cubin", NULL) == 3); /* failures are not cached */

    /* ---- the caller's -std replaces ours; a C++17 feature builds by default */
    const char *opt_std[] = {"-std=c++14"};
    CHECK_OK(ck_kernel_compile(k_trivial, NULL, opt_std, 1, 90, &c));
    CHECK(is_elf(&c));
    ck_kernel_image_free(&c);
    static const char *k_cpp17 =
        "template <typename T> __device__ T ck_pick(T x) { if constexpr (sizeof(T) == 4) return x; else return 0; }\n"
        "extern \"C\" __global__ void ck_test17(float *x) { x[0] = ck_pick(x[0]); }\n";
    CHECK_OK(ck_kernel_compile(k_cpp17, NULL, NULL, 0, 90, &c));
    CHECK(is_elf(&c));
    ck_kernel_image_free(&c);

    /* ---- CUDAKIT_DEBUG=kernels: numbered source, options and time on stderr */
    {
        char logpath[600];
        snprintf(logpath, sizeof logpath, "%s/debug.txt", root);
        fflush(stderr);
        int saved = dup(2);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CHECK(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        setenv("CUDAKIT_DEBUG", "alloc,kernels", 1);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        unsetenv("CUDAKIT_DEBUG");
        ck_kernel_image_free(&c);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        char text[8192] = {0};
        FILE *f = fopen(logpath, "r");
        CHECK(f != NULL);
        if (f) {
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = '\0';
            fclose(f);
        }
        CHECK(strstr(text, "    4 |     if (i < n) x[i] = v;") != NULL);
        CHECK(strstr(text, "--gpu-architecture=sm_90") != NULL);
        CHECK(strstr(text, "from the disk cache") != NULL);
        CHECK(strstr(text, " ms") != NULL);
        if (failures) fprintf(stderr, "debug output was:\n%s\n", text);
    }

    /* ---- several threads compiling one new kernel at once */
    {
        enum { NT = 6 };
        static const char *k_shared =
            "extern \"C\" __global__ void ck_test_shared(int *x) { x[threadIdx.x] += 1; }\n";
        thread_job jobs[NT];
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
            memset(&jobs[i], 0, sizeof jobs[i]);
            jobs[i].src = k_shared;
            CHECK(pthread_create(&th[i], NULL, compile_thread, &jobs[i]) == 0);
        }
        for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < NT; i++) {
            CHECK(jobs[i].status == CK_OK && is_elf(&jobs[i].img));
            CHECK(jobs[i].img.size == jobs[0].img.size && !memcmp(jobs[i].img.data, jobs[0].img.data, jobs[0].img.size));
        }
        for (int i = 0; i < NT; i++) ck_kernel_image_free(&jobs[i].img);
        CHECK(count_strays(dir) == 0);
        CHECK(count_entries(dir, ".cubin", NULL) == 6);
        CHECK_OK(ck_kernel_compile(k_shared, "ck_threads.cu", NULL, 0, 90, &c));
        CHECK(c.from_disk == 1);
        ck_kernel_image_free(&c);
    }

    /* ---- "off" and "" disable the disk cache */
    const char *offs[] = {"off", ""};
    for (int i = 0; i < 2; i++) {
        setenv("CUDAKIT_CACHE_DIR", offs[i], 1);
        for (int k = 0; k < 2; k++) {
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.from_disk == 0 && is_elf(&c));
            ck_kernel_image_free(&c);
        }
    }

    /* ---- unset: $XDG_CACHE_HOME/cudakit */
    {
        char xdg[512], xdgdir[600];
        snprintf(xdg, sizeof xdg, "%s/xdg", root);
        snprintf(xdgdir, sizeof xdgdir, "%s/cudakit", xdg);
        unsetenv("CUDAKIT_CACHE_DIR");
        setenv("XDG_CACHE_HOME", xdg, 1);
        CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
        ck_kernel_image_free(&c);
        CHECK(count_entries(xdgdir, ".cubin", NULL) == 1);
        CHECK(stat(xdgdir, &st) == 0 && (st.st_mode & 07777) == 0700);
    }

    /* ---- an NVRTC without nvrtcGetCUBIN (before 11.1): PTX for compute_XX.
     * A function of ours in the table looks like cuda_api.c's stub for a
     * missing symbol. */
    {
        setenv("CUDAKIT_CACHE_DIR", dir, 1);
        __typeof__(ck_nvrtc.nvrtcGetCUBIN) real = ck_nvrtc.nvrtcGetCUBIN;
        ck_nvrtc.nvrtcGetCUBIN = fake_get_cubin;
        for (int k = 0; k < 2; k++) {
            CHECK_OK(ck_kernel_compile(k_trivial, "ck_test_fill.cu", NULL, 0, 90, &c));
            CHECK(c.is_cubin == 0 && c.from_disk == k && image_valid(&c));
            CHECK(c.data && strstr(c.data, ".target sm_90") != NULL);
            ck_kernel_image_free(&c);
        }
        ck_nvrtc.nvrtcGetCUBIN = real;
        CHECK(count_entries(dir, ".ptx", NULL) == 1);
    }

    /* ---- bad arguments */
    CHECK(ck_kernel_compile(NULL, NULL, NULL, 0, 90, &c) == CK_ERR_VALUE);
    CHECK(ck_kernel_compile(k_trivial, NULL, NULL, 0, 0, &c) == CK_ERR_VALUE);
    CHECK(ck_kernel_compile(k_trivial, NULL, NULL, 1, 90, &c) == CK_ERR_VALUE);
    ck_kernel_image_free(NULL);

    ck_kernel_image_free(&a);
    ck_kernel_image_free(&b);
    free(entry);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);

    if (failures) {
        fprintf(stderr, "test_kcache: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_kcache: OK\n");
    return 0;
}
