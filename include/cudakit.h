/*
 * cudakit.h - the C API of the cudakit core.
 *
 * Everything below the Python module is a plain C library: dtypes and
 * promotion, n-dimensional strided arrays, the element-wise and reduction
 * ops, and the backends (the CPU, and CUDA GPUs where a driver and a device
 * are found) that run them.  A C program can use it directly:
 *
 *     ck_array a, b, c;
 *     int64_t n = 1000;
 *     ck_arange(&a, 0, 1, n, CK_FLOAT32, ck_device_cpu());
 *     ck_full_scalar(&b, 1, &n, CK_FLOAT32, 1.0, ck_device_cpu());
 *     if (ck_ufunc_call2(CK_OP_ADD, &a, &b, &c) != CK_OK)
 *         fprintf(stderr, "%s\n", ck_error_message());
 *     ck_array_release(&a); ck_array_release(&b); ck_array_release(&c);
 *
 * Conventions: functions return a ck_status; on failure the message is kept
 * per thread (ck_error_message()).  An output ck_array passed to a creating
 * function is overwritten, never released; the caller owns it afterwards and
 * drops it with ck_array_release().
 */
#ifndef CUDAKIT_H
#define CUDAKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ status */

typedef enum ck_status {
    CK_OK = 0,
    CK_ERR_VALUE,          /* ValueError */
    CK_ERR_TYPE,           /* TypeError */
    CK_ERR_INDEX,          /* IndexError */
    CK_ERR_AXIS,           /* AxisError (ValueError and IndexError) */
    CK_ERR_MEMORY,         /* MemoryError */
    CK_ERR_OVERFLOW,       /* OverflowError */
    CK_ERR_ZERO_DIVISION,  /* ZeroDivisionError */
    CK_ERR_NOT_IMPLEMENTED,/* NotImplementedError */
    CK_ERR_RUNTIME,        /* RuntimeError */
    CK_ERR_DEVICE,         /* a device (driver) failure */
    CK_ERR_COMPILE,        /* a generated kernel did not compile (NVRTC) */
    CK_ERR_DEVICE_MEMORY,  /* out of GPU memory (cudakit.cuda.OutOfMemoryError) */
    CK_ERR_NO_LOOP,        /* TypeError: no loop of the op for these dtypes (NumPy's _UFuncNoLoopError) */
    CK_ERR_CAST_INPUT,     /* TypeError: an operand does not cast to the op's loop under its
                              casting rule (NumPy's _UFuncInputCastingError) */
    CK_ERR_CAST_OUTPUT,    /* TypeError: the result does not cast to out= (_UFuncOutputCastingError) */
    CK_ERR_INTERRUPT,      /* Ctrl-C (SIGINT) ended a wait or a kernel (KeyboardInterrupt) */
    CK_ERR_TIMEOUT,        /* a wait for other processes gave up (TimeoutError) */
    CK_ERR_COUNT
} ck_status;

/* The message of the last failure on this thread ("" when none). */
const char *ck_error_message(void);
ck_status ck_error_status(void);
/* Record a failure and return its status, printf-style. */
ck_status ck_error_set(ck_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ck_error_clear(void);

/* ------------------------------------------------------------------ dtypes */

/* One row per dtype in cudakit_dtypes.h; tables are indexed by the enum. */
#include "cudakit_dtypes.h"

typedef enum ck_dtype {
#define CK_DTYPE_ENUM_(A, ID, ...) CK_##ID,
    CK_DTYPES(CK_DTYPE_ENUM_, _)
#undef CK_DTYPE_ENUM_
    CK_NTYPES
} ck_dtype;

#define CK_DTYPE_INVALID ((ck_dtype)-1)

/* The kinds; CK_KIND_##K (CK_KIND_F) names the kind of kind letter K too. */
typedef enum ck_kind {
#define CK_KIND_ENUM_(K, KIND, kchar) CK_KIND_##KIND, CK_KIND_##K = CK_KIND_##KIND,
    CK_KINDS(CK_KIND_ENUM_)
#undef CK_KIND_ENUM_
} ck_kind;

typedef struct ck_dtype_info {
    const char *name;     /* "float32" */
    char kind_char;       /* NumPy's kind: 'b' 'i' 'u' 'f' 'c' */
    char type_char;       /* NumPy's type character: '?' 'b' 'B' ... 'D' */
    const char *format;   /* buffer-protocol / struct format */
    int itemsize;
    ck_kind kind;
} ck_dtype_info;

const ck_dtype_info *ck_dtype_get_info(ck_dtype t);
ck_dtype ck_dtype_from_name(const char *name);   /* CK_DTYPE_INVALID if unknown */
/* NumPy 2 promotion of two strongly typed dtypes. */
ck_dtype ck_dtype_promote(ck_dtype a, ck_dtype b);
/* NumPy's result_type of several dtypes at once (not a pairwise fold:
 * int8, uint8, float16 gives float16). */
ck_dtype ck_dtype_promote_many(int n, const ck_dtype *types);
/* casting == "safe": every value of a is a value of b. */
int ck_dtype_can_cast_safe(ck_dtype from, ck_dtype to);
int ck_dtype_can_cast_same_kind(ck_dtype from, ck_dtype to);
/* NumPy's casting rules, weakest last ('no' and 'equiv' are one here:
 * cudakit's dtypes are all native byte order). */
typedef enum {
    CK_CASTING_NO,
    CK_CASTING_EQUIV,
    CK_CASTING_SAFE,
    CK_CASTING_SAME_KIND,
    CK_CASTING_UNSAFE,
} ck_casting;
int ck_dtype_can_cast(ck_dtype from, ck_dtype to, ck_casting casting);
/* "no", "equiv", "safe", "same_kind", "unsafe"; ck_casting_from_name
 * gives -1 for any other name. */
const char *ck_casting_name(ck_casting casting);
int ck_casting_from_name(const char *name);
/* The real dtype of a complex one (itself otherwise). */
ck_dtype ck_dtype_real(ck_dtype t);
ck_dtype ck_dtype_complex_of(ck_dtype real);
static inline int ck_dtype_is_complex(ck_dtype t) { return t == CK_COMPLEX64 || t == CK_COMPLEX128; }
static inline int ck_dtype_is_float(ck_dtype t) { return t >= CK_FLOAT16 && t <= CK_FLOAT64; }
static inline int ck_dtype_is_inexact(ck_dtype t) { return t >= CK_FLOAT16; }
static inline int ck_dtype_is_integer(ck_dtype t) { return t >= CK_INT8 && t <= CK_UINT64; }
static inline int ck_dtype_is_signed(ck_dtype t) {
    return t == CK_INT8 || t == CK_INT16 || t == CK_INT32 || t == CK_INT64 || t >= CK_FLOAT16;
}

/* A scalar value of any dtype, held at the widest width of its kind. */
typedef struct ck_scalar {
    ck_dtype dtype;
    union {
        int64_t i;     /* bool and signed ints */
        uint64_t u;    /* unsigned ints */
        double f;      /* floats */
        struct { double re, im; } c;
    } v;
} ck_scalar;

/* Store / load a scalar to / from one element of dtype t (converting). */
void ck_scalar_store(const ck_scalar *s, ck_dtype t, void *dst);
void ck_scalar_load(ck_scalar *s, ck_dtype t, const void *src);

/* ----------------------------------------------------------------- devices */

typedef enum ck_device_type { CK_DEVICE_CPU = 0, CK_DEVICE_CUDA = 1 } ck_device_type;

typedef struct ck_device {
    int type;    /* ck_device_type */
    int index;
} ck_device;

static inline ck_device ck_device_cpu(void) { ck_device d = {CK_DEVICE_CPU, 0}; return d; }
static inline int ck_device_equal(ck_device a, ck_device b) { return a.type == b.type && a.index == b.index; }

/* ----------------------------------------------------------------- buffers */

typedef struct ck_buffer ck_buffer;

/* Memory owned elsewhere (a NumPy array, a DLPack tensor): release() is
 * called with ctx when the last array using it goes. */
typedef void (*ck_release_fn)(void *ctx);

struct ck_buffer {
    int64_t refcount;        /* atomically updated */
    ck_device device;
    void *ptr;               /* start of the memory */
    size_t nbytes;
    ck_release_fn release;   /* NULL: memory came from the device's allocator */
    void *release_ctx;
    int readonly;
    void *graph_node;        /* the graph pool's hold on it (NULL: none; include/cudakit_graph.h) */
    uint64_t version;        /* bumped by each in-place write (autograd's check of saved arrays) */
};

ck_buffer *ck_buffer_alloc(ck_device dev, size_t nbytes);
ck_buffer *ck_buffer_wrap(ck_device dev, void *ptr, size_t nbytes, int readonly,
                          ck_release_fn release, void *ctx);
void ck_buffer_retain(ck_buffer *b);
void ck_buffer_release(ck_buffer *b);

/* ------------------------------------------------------------------ arrays */

#define CK_MAXDIMS 32

enum {
    CK_ARRAY_C_CONTIGUOUS = 1,
    CK_ARRAY_F_CONTIGUOUS = 2,
    CK_ARRAY_WRITEABLE = 4,
    CK_ARRAY_OWNDATA = 8,     /* the first array made on its buffer */
};

/* An n-dimensional strided view of a buffer.
 * Invariant: every element addressed by shape/strides from data lies inside
 * buf (or size == 0).  flags' contiguity bits are kept up to date by
 * ck_array_update_flags() whenever shape or strides change. */
typedef struct ck_array {
    ck_buffer *buf;          /* owns one reference; NULL only for an unset array */
    char *data;              /* address of element [0, 0, ...] */
    ck_dtype dtype;
    int ndim;
    int flags;
    int64_t size;            /* product of shape */
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_MAXDIMS];   /* in bytes, may be negative or zero */
} ck_array;

static inline ck_device ck_array_device(const ck_array *a) { return a->buf->device; }
static inline int ck_array_itemsize(const ck_array *a) { return ck_dtype_get_info(a->dtype)->itemsize; }

void ck_array_update_flags(ck_array *a);
/* A new C-contiguous array, uninitialised. */
ck_status ck_array_empty(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, ck_device dev);
/* A view sharing a's buffer (one more reference). */
void ck_array_view(ck_array *out, const ck_array *a);
/* Set shape and strides of a view; checks nothing. */
void ck_array_set_layout(ck_array *a, int ndim, const int64_t *shape, const int64_t *strides);
void ck_array_release(ck_array *a);
/* Contiguous C-order strides for shape. */
void ck_strides_c(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides);
void ck_strides_f(int ndim, const int64_t *shape, int64_t itemsize, int64_t *strides);
/* Contiguous strides whose axes run in the memory order of like's strides
 * (by |stride|, largest first; ties in axis order): NumPy's order='K'. */
void ck_strides_like(int ndim, const int64_t *shape, int64_t itemsize, const int64_t *like, int64_t *strides);
/* Product of shape with overflow check (-1 on overflow). */
int64_t ck_shape_size(int ndim, const int64_t *shape);
/* Normalise an axis against ndim (negative allowed). */
ck_status ck_axis_normalize(int *axis, int ndim);
/* Broadcast shapes; CK_ERR_VALUE with NumPy's message on mismatch. */
ck_status ck_broadcast_shapes(int n, const int *ndims, const int64_t *const *shapes,
                              int *out_ndim, int64_t *out_shape);
/* A view of a with shape (ndim, shape), zero strides where broadcast. */
ck_status ck_array_broadcast_to(ck_array *out, const ck_array *a, int ndim, const int64_t *shape);
/* Transposed view by permutation perm (NULL: reverse). */
ck_status ck_array_transpose(ck_array *out, const ck_array *a, const int *perm);
/* Reshape: a view when strides allow, else a copy. */
ck_status ck_array_reshape(ck_array *out, const ck_array *a, int ndim, const int64_t *shape, int order_f);
/* Whether two arrays may share memory (conservative: same buffer and
 * overlapping byte ranges). */
int ck_array_may_overlap(const ck_array *a, const ck_array *b);
/* Byte range [lo, hi) that a view touches relative to its data pointer. */
void ck_layout_extent(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize,
                      int64_t *lo, int64_t *hi);
/* "(2, 3)" in a per-thread buffer (slot 0 or 1, so two may be live). */
const char *ck_shape_str(int ndim, const int64_t *shape, int slot);

/* -------------------------------------------------------------------- ops */

/* The op table: every element-wise op, declared once (its data: src/ops/optable.c). */
#include "cudakit_ops.h"

/* Copy src into dst (same shape after broadcasting src; casting allowed). */
ck_status ck_array_assign(ck_array *dst, const ck_array *src);
/* Fill every element of dst with a scalar (cast to dst's dtype). */
ck_status ck_array_fill(ck_array *dst, const ck_scalar *value);
/* A new array of dtype dt with a's values (C order; order_f for F order). */
ck_status ck_array_astype(ck_array *out, const ck_array *a, ck_dtype dt, int order_f);
/* Copy a to another device (or the same one). */
ck_status ck_array_to_device(ck_array *out, const ck_array *a, ck_device dev);

/* Element-wise: inputs may be arrays or scalars (weak Python scalars follow
 * NEP 50).  out: if out_given, results are written into *out (broadcast
 * shape must match); else *out is created. */
typedef struct ck_operand {
    const ck_array *array;   /* NULL for a scalar */
    ck_scalar scalar;
    int weak;                /* a Python scalar: its dtype yields to the arrays' */
} ck_operand;

/* The most inputs an element-wise op takes (where, clip: 3). */
#define CK_UFUNC_MAXIN 3

ck_status ck_ufunc_resolve(ck_op op, int nin, const ck_operand *in, ck_dtype *loop_in, ck_dtype *loop_out);
/* The loop of op when the output dtype is fixed (dtype=): NumPy's rules,
 * each input cast under casting; TypeError when there is none. */
ck_status ck_ufunc_resolve_dtype(ck_op op, int nin, const ck_operand *in, ck_dtype out_dtype, ck_casting casting,
                                 ck_dtype *loop_in, ck_dtype *loop_out);
/* The loop of op that a signature= names: sig[k] the type of input k or
 * of the output (k == nin), CK_DTYPE_INVALID where it is left free (the
 * free inputs must cast safely); NumPy's "No loop matching the specified
 * signature" TypeError when none fits. */
ck_status ck_ufunc_resolve_signature(ck_op op, int nin, const ck_operand *in, const ck_dtype *sig,
                                     ck_dtype *loop_in, ck_dtype *loop_out);
/* Every typed input's cast to its loop dtype under casting (a weak Python
 * number only under 'equiv', which refuses one whose own dtype is not the
 * loop's, as NumPy's); NumPy's input-casting TypeError otherwise. */
ck_status ck_ufunc_check_input_casts(ck_op op, int nin, const ck_operand *in, const ck_dtype *loop_in,
                                     ck_casting casting);
/* NEP 50 promotion of operands (weak Python scalars yield to arrays). */
ck_status ck_promote_operands(int n, const ck_operand *in, ck_dtype *result);
/* CK_ERR_OVERFLOW when a Python int s does not fit integer dtype t, as
 * NumPy 2 refuses it. */
ck_status ck_check_pyint_fits(const ck_scalar *s, ck_dtype t);
ck_status ck_ufunc_apply(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given,
                         ck_dtype out_dtype /* CK_DTYPE_INVALID: resolved */);
/* A ufunc call's keywords beyond out=: dtype=, signature= (sig, nin + 1
 * types, CK_DTYPE_INVALID where free; all free: none given) and casting=. */
typedef struct {
    ck_dtype out_dtype;               /* dtype=; CK_DTYPE_INVALID: resolved */
    ck_dtype sig[CK_UFUNC_MAXIN + 1];
    ck_casting casting;               /* CK_CASTING_SAME_KIND unless asked */
} ck_ufunc_opts;
void ck_ufunc_opts_init(ck_ufunc_opts *o);
ck_status ck_ufunc_apply_opts(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given,
                              const ck_ufunc_opts *opts);
ck_status ck_ufunc_call2(ck_op op, const ck_array *a, const ck_array *b, ck_array *out);

/* Creation. */
ck_status ck_full_scalar(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, double value, ck_device dev);
ck_status ck_full(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, const ck_scalar *value, ck_device dev);
ck_status ck_arange(ck_array *out, double start, double step, int64_t n, ck_dtype dt, ck_device dev);
/* linspace: n points from start to stop (endpoint included when endpoint). */
ck_status ck_linspace(ck_array *out, double start, double stop, int64_t n, int endpoint, ck_dtype dt, ck_device dev);
ck_status ck_eye(ck_array *out, int64_t n, int64_t m, int64_t k, ck_dtype dt, ck_device dev);

/* Reductions (src/ops/reduce.c): axes is a mask of reduced axes. */
typedef enum ck_reduce_op {
    CK_REDUCE_SUM, CK_REDUCE_PROD, CK_REDUCE_MIN, CK_REDUCE_MAX,
    CK_REDUCE_ALL, CK_REDUCE_ANY, CK_REDUCE_ARGMIN, CK_REDUCE_ARGMAX,
    CK_REDUCE_COUNT_NONZERO,
    CK_REDUCE_COUNT
} ck_reduce_op;

ck_status ck_reduce(ck_reduce_op op, const ck_array *a, uint64_t axis_mask, int keepdims,
                    ck_dtype dtype /* CK_DTYPE_INVALID: default */, ck_array *out, int out_given);
/* Cumulative sum / product along one axis. */
ck_status ck_scan(ck_reduce_op op, const ck_array *a, int axis, ck_dtype dtype, ck_array *out, int out_given);
/* Default accumulator dtype of sum/prod for input t (NumPy's rules). */
ck_dtype ck_reduce_default_dtype(ck_reduce_op op, ck_dtype t);
/* (ck_reduce's dtype applies to sum and prod, whose loop then runs in it;
 * with out_given and no dtype they run in promote(a, out) as NumPy's do.
 * The other reductions ignore it.) */
/* Mean over the axes of axis_mask: bool and integers are summed in float64,
 * float16 in float32 (the result is float16 again), others in their own
 * dtype, or in dtype when given; the sum is then divided by the count. */
ck_status ck_mean(const ck_array *a, uint64_t axis_mask, int keepdims, ck_dtype dtype, ck_array *out);
/* Variance in two passes (mean, then squared deviations) divided by
 * max(N - ddof, 0); the standard deviation when take_sqrt.  Complex input
 * gives the real dtype.  dtype as for ck_mean (float16 stays float16). */
ck_status ck_var(const ck_array *a, uint64_t axis_mask, int keepdims, double ddof, ck_dtype dtype,
                 int take_sqrt, ck_array *out);

/* ---------------------------------------------------------------- runtime */

/* Number of worker threads the CPU backend may use (>= 1). */
int ck_cpu_num_threads(void);
void ck_cpu_set_num_threads(int n);

#ifdef __cplusplus
}
#endif
#include "cudakit_shape.h"
#include "cudakit_random.h"
#include "cudakit_index.h"
#include "cudakit_sort.h"
#include "cudakit_linalg.h"
#include "cudakit_device.h"
#include "cudakit_module.h"
#endif /* CUDAKIT_H */
