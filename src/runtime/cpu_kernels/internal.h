/*
 * internal.h - what the files of the CPU kernel runtime share.  The API is
 * ../cpu_kernels.h; what the runtime and a compiled kernel library agree
 * on is ../cpu_kernel_abi.h.  One job a file:
 *
 *   scanner.c   reads the CUDA C source once: kernel names, extern __shared__, barriers
 *   compiler.c  the system C++ compiler: finding it, mapping options, running it, its errors
 *   pch.c       the precompiled cuda_compat.hpp kept in the cache folder
 *   module.c    ck_cpu_module_*: the translation unit, the cache key, load and look-ups
 *   loader.c    a compiled library in memory: dlopen, binding its entry points, dlclose
 *   launch.c    ck_cpu_launch: checks, blocks over the thread pool, plain loops
 *   fibers.c    a worker's state: fiber stacks sized from the library's frames, context
 *               switches, barriers and warp functions
 *   frames.c    the frames of a library's functions, from its unwind tables
 *   guard.c     bounds mode: the array arguments copied between guard pages
 *   faults.c    traps, failed asserts, faults and stack overflows inside a kernel: the
 *               signal handler, its alternate stack, the reports
 *   watch.c     launches under way: the watchdog that catches Ctrl-C for long ones and
 *               stops those past the kernel time limit
 *
 * Load: the source is scanned, wrapped with cuda_compat.hpp and a table of
 * entry points, compiled into a shared object kept in the disk cache of
 * kcache_disk.c, and dlopen'd.  Launch: blocks are spread over the thread
 * pool, each worker running whole blocks: a module with no barrier or warp
 * function runs each block as a plain loop over its threads inside the
 * shared object; otherwise a block's threads are fibers on the worker's OS
 * thread, switched at barriers.
 */
#ifndef CK_RUNTIME_CPU_KERNELS_INTERNAL_H
#define CK_RUNTIME_CPU_KERNELS_INTERNAL_H

#include "../cpu_kernels.h"
#include "../cpu_kernel_abi.h"
#include "../interrupt.h"
#include "../../base/sbuf.h"

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CK_CPU_FILE "kernel.cu" /* the user's source, as compiler messages name it */

/* The texts written next to each compile (embedded at build time). */
extern const char ck_src_cuda_compat[];
extern const size_t ck_src_cuda_compat_len;
extern const char ck_src_cpu_kernel_abi[];
extern const size_t ck_src_cpu_kernel_abi_len;

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
    ck__ctx_t *(*get_ctx)(void);
    int fibers;      /* the source has barriers or warp functions (or might) */
    _Atomic size_t fiber_stack; /* bytes a fiber's stack gets (fibers.c); 0 until first needed */
    int uses_printf; /* flush stdout after each launch */
    int from_disk;
    double load_ms;
    int nfuncs;
    ck_cpu_function *funcs;
};

/* ------------------------------------------------------------ scanner.c */

typedef struct ck_srcscan {
    ck_sbuf out;      /* the source with extern __shared__ rewritten, same lines */
    char **names;     /* extern "C" __global__ functions */
    int nnames, capnames;
    int barriers;     /* mentions a barrier, a warp function, token pasting or a local include */
    int uses_printf;
} ck_srcscan;

/* 0, or -1 when out of memory; free s with ck_cpu_scan_free either way. */
int ck_cpu_scan_source(const char *src, ck_srcscan *s);
void ck_cpu_scan_free(ck_srcscan *s);

/* ----------------------------------------------------------- compiler.c */

typedef struct ck_cxx {
    char **argv; /* the command's words, NULL-terminated */
    int argc;
    char *id;    /* what identifies this compiler in cache keys */
    int is_gcc;  /* takes -mtls-dialect=gnu2 (clang 14 does not) */
} ck_cxx;

/* The compiler (looked for once: CXX, g++, clang++, c++); argv NULL when
 * there is none. */
const ck_cxx *ck_cpu_cxx(void);
/* NVRTC options in the compiler's spelling; see compiler.c. */
int ck_cpu_map_options(const char *const *opts, int n, char **out, int *has_std, int *local);
/* dir/name with mode 0600; 0 on success. */
int ck_cpu_write_file(const char *dir, const char *name, const char *data, size_t n);
/* Limits on every compiler run, so a kernel cannot make it hang or eat the
 * machine's memory: wall-clock and CPU seconds (CUDAKIT_COMPILE_TIMEOUT)
 * and MiB of address space for each process (CUDAKIT_COMPILE_MEMORY); 0
 * is none.  The texts are the arguments CK_CPU_LIMITS_SH takes. */
#define CK_CPU_COMPILE_TIMEOUT_S 300
#define CK_CPU_COMPILE_MEMORY_MB 4096
typedef struct ck_cxx_limits {
    long seconds, mib;
    char cpu_soft[24], cpu_hard[24], mem_kib[24];
} ck_cxx_limits;
/* From the environment; CK_ERR_VALUE for a value that is not a number. */
ck_status ck_cpu_compile_limits(ck_cxx_limits *lim);
/* The start of a `sh -c` script run with those three texts as its first
 * arguments: sets the limits (no core files either) and shifts them off. */
#define CK_CPU_LIMITS_SH                                                                   \
    "ulimit -c 0 2>/dev/null; [ \"$1\" = 0 ] || { ulimit -S -t \"$1\"; ulimit -H -t \"$2\"; } 2>/dev/null; " \
    "[ \"$3\" = 0 ] || ulimit -v \"$3\" 2>/dev/null; shift 3; "
/* Compile tu (whose user part is source, for error excerpts) with flags
 * in a private temporary folder, under the limits; the shared object's
 * bytes (malloc'd) on success.  pchdir: where a usable precompiled
 * cuda_compat.hpp is, or NULL. */
ck_status ck_cpu_compile(const char *tu, const char *source, const char *const *flags, int nflags,
                         const char *pchdir, char **so, size_t *so_size);

/* ---------------------------------------------------------------- pch.c */

/* The folder of the precompiled header for these flags (malloc'd), or
 * NULL when there is none to use (no cache, not GCC, CUDAKIT_CPU_PCH=0). */
char *ck_cpu_pch_dir(const char *cache, const char *const *flags, int nflags);
int ck_cpu_pch_ready(const char *pchdir);
/* Start building it in the background; returns at once. */
void ck_cpu_pch_build_async(const char *pchdir, const char *const *flags, int nflags);

/* ------------------------------------------------------------- loader.c */

/* dlopen a shared object held in memory; NULL with err filled on failure.
 * *keep_fd: -1, or a memfd to keep open while the library is loaded. */
void *ck_cpu_dlopen_bytes(const void *data, size_t n, int *keep_fd, char *err, size_t errn);
/* Check the library's ABI, fill its callbacks, read its kernel table into m. */
ck_status ck_cpu_module_bind(ck_cpu_module *m, void *dl, const void *so, size_t so_size);
/* dlclose m's library and release its memfd. */
void ck_cpu_module_unload(ck_cpu_module *m);

/* -------------------------------------------- launch.c, fibers.c, guard.c */

/* Fiber contexts (fibers.c): on x86-64 our own switch, saving only what a
 * call preserves; elsewhere ucontext. */
#if defined(__x86_64__) && !defined(CK_FIBER_UCONTEXT)
typedef struct ck_fctx { void *sp; } ck_fctx;
#else
#include <ucontext.h>
typedef struct ck_fctx { ucontext_t uc; } ck_fctx;
#endif

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
typedef struct ck_guard ck_guard;

/* One block being run by one worker. */
typedef struct ck_block_run {
    ck_fiber *f;
    int n, ndone, nwait, cur;
    unsigned exists[32], done[32], arrived[32];
    ck_fctx sched;
    const void *sched_lo; /* the worker stack, for ASan's fiber annotations */
    size_t sched_size;
    ck_launch *L;
    ck__ctx_t *ctx;
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
    ck__ctx_t *ctx;
    void *fault_addr, *fault_sp; /* what the signal handler saw */
    char *fault_stack;           /* the stack of the fiber that faulted, or NULL */
    int fault_sig, fault_code;
    int on_fiber;    /* a fiber of B is running (for ASan, when jumping out of one) */
    void *altstack;  /* the alternate signal stack this thread got from us, or NULL */
} ck_worker;

enum { CK_MODE_BLOCK, CK_MODE_THREADS, CK_MODE_FIBERS };

struct ck_launch {
    ck_cpu_function *fn;
    unsigned grid[3], block[3];
    int nthreads, mode, bounds;
    size_t dyn;
    void **args;
    atomic_int failed;
    ck_status status;
    char msg[1536];
    size_t stack;             /* fiber stack bytes (fiber mode) */
    struct ck_watch *watch;   /* watch.c: this thread's record, or NULL */
    uint64_t gen;             /* which of its launches this is */
    uint64_t limit_ns;        /* the kernel time limit when it began */
    /* bounds mode */
    const ck_cpu_arg_info *info;
    ck_guard *guards;
    int nguards;
    int *param_guard; /* per parameter: its guard, or -1 */
};

/* launch.c: the launch's first error wins; later ones are dropped. */
__attribute__((format(printf, 3, 4))) void ck_cpu_launch_error(ck_launch *L, ck_status st, const char *fmt, ...);
/* The error of a launch stopped (CK_STOP_*) while c's block ran. */
void ck_cpu_launch_stopped(ck_launch *L, const ck__ctx_t *c, int why);

/* The thread after tid in the block, x fastest (as a warp is made). */
static inline ck__u3 ck_cpu_tid_next(const ck_launch *L, ck__u3 tid)
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

/* fibers.c */
extern _Thread_local ck_worker *ck_cpu_worker_self; /* NULL until this thread's first launch */
ck_worker *ck_cpu_worker_get(void);
size_t ck_cpu_page_size(void);
/* frames.c: the sum of the frames of every function of a loaded library
 * (dlopen's handle); -1 when one is not static or the tables are not
 * understood. */
int64_t ck_cpu_library_frames(void *dl);
/* Make W's fiber stacks (none in use) at least size bytes. */
void ck_cpu_worker_fit_stacks(ck_worker *W, size_t size);
/* Bytes of PROT_NONE below each fiber stack. */
size_t ck_cpu_stack_guard(void);
/* Return the stacks of fibers a failed block left behind. */
void ck_cpu_worker_drop_fibers(ck_worker *w);
/* Run one block's threads as fibers; 0 when all finished. */
int ck_cpu_run_block_fibers(ck_worker *W, ck_launch *L);
/* ck__api_t.sync */
unsigned long long ck_cpu_api_sync(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width);

/* guard.c */
ck_status ck_cpu_guards_make(ck_launch *L, int np, void **newargs, void **newvals);
ck_status ck_cpu_guards_finish(ck_launch *L);
void ck_cpu_guards_free(ck_launch *L);
/* 1 when addr is in a guard page of L (the error then reported). */
int ck_cpu_guards_report(ck_launch *L, const char *addr, const char *where);

/* faults.c */
/* Install the fault handler (once; not with CUDAKIT_CPU_CATCH=0). */
void ck_cpu_faults_install(void);
/* Give the calling thread an alternate signal stack unless it has one, so
 * that a stack overflow can be caught; ck_cpu_altstack_free at its end. */
void ck_cpu_altstack_install(ck_worker *W);
void ck_cpu_altstack_free(ck_worker *W);
/* Describe the fault W caught as the launch's error. */
void ck_cpu_fault_report(ck_launch *L, ck_worker *W);
/* End the running kernel thread's part of the launch with an error
 * naming it: back to the launcher, from a fiber too. */
__attribute__((noreturn)) void ck_cpu_fail_thread(ck_worker *W, ck_status st, const char *what);
/* ck__api_t.fail */
void ck_cpu_api_fail(const char *what, const char *file, int line);
/* ck__api_t.poll: ends the thread's part of a launch asked to stop. */
void ck_cpu_api_poll(void);

/* watch.c */
enum { CK_STOP_NONE, CK_STOP_INTERRUPT, CK_STOP_TIMEOUT };
/* Nonzero while some launch may have been asked to stop: ck__api_t.stop,
 * and what workers look at between blocks. */
extern atomic_int ck_cpu_stop_flag;
/* Around each launch (L->watch NULL when this thread has no record). */
void ck_cpu_watch_begin(ck_launch *L);
void ck_cpu_watch_end(ck_launch *L, ck_status result);
/* A thread's launches, as the watchdog and the SIGINT hook see them.  The
 * list of records only grows (a signal handler walks it); a thread's
 * record is reused by a later thread once it has ended. */
typedef struct ck_watch {
    struct ck_watch *next;
    atomic_int owned;
    _Atomic uintptr_t cur;     /* the launch under way (| 1 once SIGINT is caught for it), or 0 */
    _Atomic uint64_t gen;      /* launches begun on this record */
    _Atomic uint64_t stop;     /* (gen << 2) | CK_STOP_*: what that launch is asked to do */
    _Atomic uint64_t start_ns; /* when it began, if a time limit was set then */
    uint64_t seen_gen;         /* the watchdog's: the launch it saw at its last tick */
} ck_watch;

/* CK_STOP_* asked of L. */
static inline int ck_cpu_watch_stop_reason(const ck_launch *L)
{
    if (!L->watch) return CK_STOP_NONE;
    uint64_t s = atomic_load_explicit(&L->watch->stop, memory_order_relaxed);
    return (s >> 2) == L->gen ? (int)(s & 3) : CK_STOP_NONE;
}

#endif
