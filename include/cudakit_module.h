/*
 * cudakit_module.h - user CUDA C kernels on any device ("one kernel, two
 * targets").
 *
 * A module is the user's CUDA C source compiled for one device: by NVRTC
 * for a GPU, by the system C++ compiler against cudakit's CUDA
 * compatibility header for the CPU (a block's threads run as fibers where
 * the source has barriers or warp functions, as a plain loop otherwise).
 * Both are cached on disk.  Its functions launch with cuLaunchKernel's
 * conventions on either device:
 *
 *     ck_module *m;
 *     ck_function *f;
 *     ck_module_load(dev, src, "my.cu", NULL, 0, NULL, 0, &m);
 *     ck_module_get_function(m, "add_one", &f);
 *     void *args[] = {&ptr, &n};                // kernelParams
 *     unsigned grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
 *     ck_function_launch(f, grid, block, 0, ck_stream_current(dev), args, NULL);
 *     ck_module_free(m);                        // its functions go with it
 */
#ifndef CUDAKIT_MODULE_H
#define CUDAKIT_MODULE_H

#include "cudakit_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most parameters a launch passes. */
#define CK_MAX_KERNEL_PARAMS 128

typedef struct ck_module ck_module;
typedef struct ck_function ck_function;

/* Compile (or take from the disk cache) source for dev.  options are in
 * nvcc/NVRTC spelling (-D..., -I..., -std=...; the CPU ignores those that
 * mean nothing there); name_exprs are template instantiations to make
 * available by those exact strings ("f<float>").  CK_ERR_COMPILE with the
 * compiler's log and the source lines around each error. */
ck_status ck_module_load(ck_device dev, const char *source, const char *name_hint, const char *const *options,
                         int noptions, const char *const *name_exprs, int nexprs, ck_module **out);
void ck_module_free(ck_module *m);
ck_device ck_module_device(const ck_module *m);
/* A __global__ function by its extern "C" name or one of the module's name
 * expressions; CK_ERR_VALUE naming it when there is none.  The function
 * belongs to the module (valid while it is). */
ck_status ck_module_get_function(ck_module *m, const char *name, ck_function **out);
/* A __device__ or __constant__ variable: its address on the device, size. */
ck_status ck_module_get_global(ck_module *m, const char *name, void **ptr, size_t *nbytes);

/* What a launch is checked against. */
typedef struct ck_function_attrs {
    int max_threads_per_block;
    int num_regs;
    int shared_size_bytes;              /* static __shared__ */
    int const_size_bytes;
    int local_size_bytes;
    int max_dynamic_shared_size_bytes;  /* settable */
    int ptx_version, binary_version;
} ck_function_attrs;

ck_status ck_function_attributes(ck_function *f, ck_function_attrs *out);
/* Raise (or lower) the dynamic shared memory a launch may ask for;
 * CK_ERR_VALUE past the device's limit. */
ck_status ck_function_set_max_dynamic_shared(ck_function *f, int bytes);
/* The block size with the best occupancy for dyn_shared bytes a block
 * (at most block_limit threads when > 0), and a grid that fills the device. */
ck_status ck_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid, int *block);
/* The parameter count and each parameter's size (n <= max filled), from
 * the compiled kernel; -1 when the target cannot tell (a GPU with a driver
 * before CUDA 12.4). */
int ck_function_params(ck_function *f, size_t *sizes, int max);

/* What a kernel's parameter takes, as its declaration in the source says. */
typedef enum ck_kparam_kind {
    CK_KPARAM_POINTER = 'p', /* a pointer: an array (of dtype when that is known) or a null pointer */
    CK_KPARAM_SCALAR = 's',  /* a value of dtype */
    CK_KPARAM_OPAQUE = 'o',  /* a value of a type cudakit cannot size from the source (a struct, a typedef
                                it cannot resolve, a template parameter): bytes of exactly its size */
} ck_kparam_kind;

typedef struct ck_kparam {
    int kind;            /* ck_kparam_kind */
    ck_dtype dtype;      /* SCALAR: its dtype; POINTER: the pointee's, CK_DTYPE_INVALID for any array
                            (void *, char *, a pointer to a template parameter or to a struct) */
    char name[64];       /* as declared ("" when unnamed; cut at 63 bytes) */
    char type[96];       /* the declared type, blanks folded ("struct S", "const float *"; cut at 95) */
} ck_kparam;

/* The parameters of kernel `name` as source declares them: an extern "C"
 * kernel's name, or a name expression ("scale<float>", "ns::k<int, 4>")
 * for the parameters of its template (those of a template parameter's
 * type are OPAQUE).  Typedefs and using-declarations of known types are
 * resolved (`typedef float real;`), so are object-like #defines and the
 * -D options.  Returns the count (the first max filled), or -1 when the
 * source declares no such kernel in a form this reads (a macro making the
 * declaration, overloads that differ): then nothing is known. */
int ck_kernel_signature(const char *source, const char *const *options, int noptions, const char *name,
                        ck_kparam *out, int max);

/* What the launcher knows of one argument, for the CPU's bounds mode. */
typedef struct ck_launch_arg {
    int is_array;        /* the argument points into an array's memory */
    void *base;          /* the start of that memory (the value may point inside) */
    size_t nbytes;       /* bytes valid from base */
    void *lo;            /* the bytes the argument's view spans, [lo, lo + extent), within the memory */
    size_t extent;       /* above (lo NULL: all of [base, base + nbytes)) */
    size_t itemsize;     /* element size, for the index in messages (0: unknown) */
} ck_launch_arg;

/* Launch grid x block threads with shmem bytes of dynamic shared memory on
 * stream (a stream of f's device; NULL: the default one); params (nparams
 * of them, at most CK_MAX_KERNEL_PARAMS) as cuLaunchKernel's kernelParams.
 * The configuration, and the parameter count where the target knows it,
 * are checked first (CK_ERR_VALUE, CK_ERR_TYPE naming the kernel).  On the
 * CPU the launch runs to completion; info (NULL, or nparams entries) feeds
 * bounds mode.  A failing launch names the kernel. */
ck_status ck_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                             ck_stream stream, int nparams, void **params, const ck_launch_arg *info);

/* Launch flags of ck_function_launch_ex. */
#define CK_LAUNCH_COOPERATIVE 0x1u   /* every block resident at once, so blocks may wait for each other (grid
                                      * sync): cuLaunchCooperativeKernel on a GPU; more blocks than
                                      * ck_function_max_cooperative_blocks allows is CK_ERR_VALUE naming both */

/* ck_function_launch with flags (ck_function_launch is this with 0). */
ck_status ck_function_launch_ex(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                ck_stream stream, unsigned flags, int nparams, void **params,
                                const ck_launch_arg *info);
/* The most blocks of block threads and shmem bytes of dynamic shared memory
 * a cooperative launch of f may have on its device (a GPU: the blocks an
 * SM holds at once x its SMs; the CPU: its own limit). */
ck_status ck_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out);
const char *ck_function_name(const ck_function *f);

/* CUDA C compiled by NVRTC for sm_<arch> (major * 10 + minor) through the
 * disk cache, without a GPU: for tools and tests of generated source. */
typedef struct ck_cubin {
    void *data;
    size_t size;
    int from_disk;       /* read from the disk cache */
    double compile_ms;
} ck_cubin;
ck_status ck_cuda_compile(const char *source, const char *name_hint, int arch, ck_cubin *out);
/* The same with NVRTC options (a module's, a Python kernel's). */
ck_status ck_cuda_compile_ex(const char *source, const char *name_hint, const char *const *options, int noptions,
                             int arch, ck_cubin *out);
void ck_cubin_free(ck_cubin *c);

/* Bounds checking of user kernels on the CPU: every access of an array
 * argument outside the bytes its view spans is an error naming the
 * kernel, block, thread, argument and index (on when set here or
 * CUDAKIT_BOUNDS=1; see ck_cpu_launch in src/runtime/cpu_kernels.h for
 * what exactly is checked). */
int ck_kernel_bounds_mode(void);
void ck_kernel_set_bounds_mode(int on);

#ifdef __cplusplus
}
#endif
#endif
