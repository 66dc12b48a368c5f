/*
 * cpu_kernels.h - user CUDA C kernels on the CPU ("one kernel, two targets").
 *
 * The same CUDA C source the GPU path hands to NVRTC is compiled here by the
 * system C++ compiler against cudakit's CUDA-compatibility header, loaded
 * with dlopen and run block by block over the CPU cores, the threads of a
 * block as fibers so that __syncthreads and the warp functions keep their
 * meaning.  Binaries are cached on disk like the GPU ones.
 *
 *     ck_cpu_module *m;
 *     ck_cpu_function *f;
 *     ck_cpu_module_load(src, NULL, 0, NULL, 0, &m);
 *     ck_cpu_module_get_function(m, "add_one", &f);
 *     void *args[] = {&ptr, &n};            // as cuLaunchKernel's kernelParams
 *     unsigned grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
 *     ck_cpu_launch(f, grid, block, 0, args, NULL);
 *
 * This header is the contract between the Python-facing kernel API
 * (src/python/kernels.c) and the CPU target (src/runtime/cpu_kernels/,
 * whose internal.h says which file does what).
 *
 * A module whose source names no barrier or warp function runs each block
 * as a plain loop over its threads (the kernel inlined into it); otherwise
 * a block's threads are fibers switched at barriers, on stacks sized from
 * the library's frames (64 KiB to a GPU thread's 512 KiB of local memory,
 * with room for the runtime).  The
 * compiled library lives in kcache's disk cache (*.cpu.so), keyed on the
 * source, options, name expressions, compiler and compat header.
 *
 * Environment:
 *   CXX                   the compiler (default g++, then clang++, c++)
 *   CUDAKIT_CACHE_DIR     as for kcache.h
 *   CUDAKIT_BOUNDS=1      bounds checking (see ck_cpu_launch)
 *   CUDAKIT_CPU_FIBERS=1  fibers even for kernels without barriers
 *   CUDAKIT_CPU_STACK_KB  fiber stack size (16 .. 65536), instead of the measured one
 *   CUDAKIT_CPU_CATCH=0   faults in kernels are not caught (for a debugger)
 *   CUDAKIT_KERNEL_TIMEOUT  the kernel time limit (see cudakit_device.h)
 *   CUDAKIT_DEBUG=kernels each compile's command line and time
 *   CUDAKIT_COMPILE_TIMEOUT  seconds a compile may take, in wall-clock and
 *                         in CPU time (default 300; 0 or "off": no limit)
 *   CUDAKIT_COMPILE_MEMORY   MiB of address space for each compiler process
 *                         (default 4096; 0 or "off": no limit).  A compile
 *                         past a limit is stopped (with what it started):
 *                         CK_ERR_COMPILE, saying which limit it reached.
 *
 * Not supported on the CPU: cooperative groups, __half arithmetic beyond
 * conversions and the basic operators (and no __half at all where the
 * compiler lacks _Float16, e.g. clang 14), textures and surfaces, inline
 * PTX, warp functions on values larger than 8 bytes, a while loop whose
 * condition declares a variable (every loop of the kernel's source checks
 * a flag on each turn, so that Ctrl-C and the time limit can stop it).
 */
#ifndef CK_RUNTIME_CPU_KERNELS_H
#define CK_RUNTIME_CPU_KERNELS_H

#include <stddef.h>
#include "cudakit.h"

typedef struct ck_cpu_module ck_cpu_module;
typedef struct ck_cpu_function ck_cpu_function;

/* What the launcher knows of one argument (used by bounds checking). */
typedef struct ck_cpu_arg_info {
    int is_array;        /* the argument is a pointer to an array's data */
    void *base;          /* the array's allocation start (the value passed may point inside) */
    size_t nbytes;       /* bytes valid from base */
    const char *name;    /* parameter name when known (may be NULL) */
    size_t itemsize;     /* element size in bytes, for the index in messages (0: unknown) */
} ck_cpu_arg_info;

/* Limits of the CPU target, mirroring a GPU's. */
#define CK_CPU_MAX_THREADS_PER_BLOCK 1024
#define CK_CPU_WARP_SIZE 32

/* Compile (or load from the disk cache) CUDA C source.  options: extra
 * compiler options in nvcc/NVRTC spelling (-D..., -I..., -std=...; others
 * that mean nothing on the CPU are ignored).  name_exprs: template
 * instantiations to make available by those exact strings ("f<float>").
 * CK_ERR_COMPILE with the compiler's log and the numbered source lines
 * around each error when it does not compile. */
ck_status ck_cpu_module_load(const char *source, const char *const *options, int noptions,
                             const char *const *name_exprs, int nexprs, ck_cpu_module **out);
void ck_cpu_module_free(ck_cpu_module *m);
/* How the module was made: 1 when read from the disk cache; the wall time
 * of ck_cpu_module_load; 1 when its blocks run as fibers (the source has
 * barriers or warp functions; CUDAKIT_CPU_FIBERS=1 forces it), 0 when each
 * block is a plain loop over its threads. */
int ck_cpu_module_from_disk(const ck_cpu_module *m);
double ck_cpu_module_load_ms(const ck_cpu_module *m);
int ck_cpu_module_uses_fibers(const ck_cpu_module *m);
/* The stack each fiber of m's kernels gets, in bytes: what the frames of
 * its library add up to (read from its unwind tables) and room for the
 * runtime and the C library, from 64 KiB to 512 + 32 KiB (a function whose
 * frame is not static gets the most); CUDAKIT_CPU_STACK_KB overrides it. */
size_t ck_cpu_module_fiber_stack(ck_cpu_module *m);

/* A __global__ function by its extern "C" name or one of the module's
 * name_exprs.  CK_ERR_VALUE (naming it) when there is no such kernel. */
ck_status ck_cpu_module_get_function(ck_cpu_module *m, const char *name, ck_cpu_function **out);
/* Number of parameters and the size in bytes of each (n <= max filled). */
int ck_cpu_function_params(const ck_cpu_function *f, size_t *sizes, int max);
/* Bytes of static __shared__ memory the kernel declares (0 when unknown). */
size_t ck_cpu_function_static_shared(const ck_cpu_function *f);

/* A __device__ (or __constant__) variable of the module: address and size. */
ck_status ck_cpu_module_get_global(ck_cpu_module *m, const char *name, void **ptr, size_t *nbytes);

/* Run grid x block threads with dyn_shared bytes of extern __shared__
 * memory; args as cuLaunchKernel's kernelParams (args[i] points to the
 * value of parameter i).  info (NULL, or one entry per parameter) feeds the
 * bounds-checking mode.  Returns when every block is done.  CK_ERR_VALUE
 * for a bad configuration (zero grid, more than
 * CK_CPU_MAX_THREADS_PER_BLOCK threads, more than 227 KiB of dynamic
 * shared memory); in bounds mode an access outside an array argument
 * gives CK_ERR_INDEX naming the kernel, block, thread, argument and index.
 * Bounds mode runs the kernel on copies of the array arguments that end
 * at a PROT_NONE page (another page before their start); results are
 * copied back after a clean run.  An access just before an array's start
 * (in the slack of its first page) is only seen as a write, after the run.
 * A trap or failed assert() in a kernel gives CK_ERR_RUNTIME naming the
 * kernel, block and thread; threads of a block that wait at different
 * barriers forever, CK_ERR_RUNTIME too.  A fault in a kernel (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL, SIGTRAP) or a stack overflow gives CK_ERR_DEVICE
 * naming the kernel, block and, where known, thread (a block run as one
 * loop does not say which thread it was at); the process and later
 * launches go on.  Ctrl-C stops a launch between blocks or at a loop
 * back-edge (CK_ERR_INTERRUPT), the kernel time limit likewise
 * (CK_ERR_DEVICE); outputs are then partly written. */
ck_status ck_cpu_launch(ck_cpu_function *f, const unsigned grid[3], const unsigned block[3], size_t dyn_shared,
                        void **args, const ck_cpu_arg_info *info);

/* Bounds checking: on when set here or CUDAKIT_BOUNDS=1 in the environment. */
int ck_cpu_bounds_mode(void);
void ck_cpu_set_bounds_mode(int on);

#endif
