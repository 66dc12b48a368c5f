/*
 * cpu_kernel_abi.h - what the CPU kernel runtime (src/runtime/cpu_kernels/)
 * and a kernel library compiled against cuda_compat.hpp must agree on: the
 * per-thread context the kernel reads threadIdx and friends from, the
 * runtime's callbacks, the table of entry points, the barrier and warp
 * operation codes, and the names the runtime looks up in the library.
 *
 * Valid C and C++: the runtime includes it as C, cuda_compat.hpp as C++.
 * Embedded into libcudakit at build time like cuda_compat.hpp and written
 * next to it for each compile, so nothing depends on the install layout.
 * Its text is part of every CPU module's cache key.  Change anything here
 * and bump CK__ABI_VERSION: the runtime refuses a library of another one.
 */
#ifndef CK_CPU_KERNEL_ABI_H
#define CK_CPU_KERNEL_ABI_H

#include <stddef.h>

#define CK__ABI_VERSION 2

/* The index triple: CUDA's uint3 in the kernel's C++, the same three
 * unsigned ints for the runtime's C. */
#ifdef __cplusplus
struct uint3 { unsigned int x, y, z; };
typedef uint3 ck__u3;
#else
typedef struct ck__u3 { unsigned int x, y, z; } ck__u3;
#endif

/* One per OS thread of the library (thread_local there): the runtime
 * writes it before it runs a thread or a block of the kernel. */
typedef struct ck__ctx_t {
    ck__u3 tid, bid, bdim, gdim; /* threadIdx, blockIdx, blockDim, gridDim */
    void *dyn_smem; /* this block's extern __shared__ memory */
    void *sched;    /* the worker's fiber scheduler; NULL when threads run without fibers */
} ck__ctx_t;

/* The runtime's callbacks, filled in right after dlopen. */
typedef struct ck__api_t {
    /* A barrier or warp function (op: CK__OP_*) reached by the running
     * thread with its value; returns that thread's result. */
    unsigned long long (*sync)(void *sched, int op, unsigned mask, unsigned long long val, int arg, int width);
    /* A trap or failed assert: ends the launch with an error; never returns. */
    void (*fail)(const char *what, const char *file, int line);
    /* Nonzero while some launch may have to stop (Ctrl-C, the kernel time
     * limit): the kernel reads it at every loop back-edge and then calls
     * poll, which ends the running thread's part of the launch when its
     * launch is the one to stop and returns otherwise. */
    volatile int *stop;
    void (*poll)(void);
} ck__api_t;

/* One kernel of the library; the table ends with a NULL name. */
typedef struct ck__kdesc {
    const char *name;            /* its extern "C" name or name expression */
    void (*thread)(void **args); /* runs the current thread (tid set by the runtime) */
    void (*block)(void **args);  /* runs every thread of the current block in a loop */
    int (*params)(size_t *sizes, int max); /* parameter count; the sizes of the first max */
} ck__kdesc;

/* Operation codes of ck__api_t.sync: below CK__OP_SYNCWARP the block
 * barriers, from it the warp functions. */
enum {
    CK__OP_SYNCTHREADS = 0, CK__OP_SYNC_COUNT, CK__OP_SYNC_AND, CK__OP_SYNC_OR,
    CK__OP_SYNCWARP = 16, CK__OP_SHFL, CK__OP_SHFL_UP, CK__OP_SHFL_DOWN, CK__OP_SHFL_XOR,
    CK__OP_BALLOT, CK__OP_ANY, CK__OP_ALL, CK__OP_ACTIVEMASK, CK__OP_MATCH_ANY, CK__OP_MATCH_ALL,
    CK__OP_RED_ADD, CK__OP_RED_MIN_U, CK__OP_RED_MAX_U, CK__OP_RED_MIN_I, CK__OP_RED_MAX_I,
    CK__OP_RED_AND, CK__OP_RED_OR, CK__OP_RED_XOR
};

/* The library's extern "C" symbols the runtime finds with dlsym: the
 * first three defined by cuda_compat.hpp, the table by the translation
 * unit the runtime wraps around the user's source. */
#define CK__SYM_ABI_VERSION "ck__abi_version" /* const int: CK__ABI_VERSION */
#define CK__SYM_API "ck__api"                 /* ck__api_t */
#define CK__SYM_GET_CTX "ck__get_ctx"         /* ck__ctx_t *(void): this OS thread's context */
#define CK__SYM_KERNELS "ck__kernels"         /* const ck__kdesc[] */
/* Every name of the library's own starts so; no user variable can be one. */
#define CK__SYM_PREFIX "ck__"

#endif
