/*
 * backend.h - the interface every device implements.
 *
 * A backend is a table of function pointers (ggml's "iface"): memory,
 * copies, the device runtime (streams, events, memory figures), user
 * modules, libraries and the kernels of each op family.  src/ops checks
 * arguments, resolves dtypes, broadcasts and merges dimensions once; a
 * backend receives a ready description and only runs it.  Optional slots
 * (marked) may be NULL: the public wrappers in backend.c own their
 * defaults once, or raise NotImplementedError naming the device.  This
 * header is the one door to a device: no code outside src/backend calls a
 * backend's own functions.
 */
#ifndef CK_BACKEND_H
#define CK_BACKEND_H

#include "cudakit.h"
#include "cudakit_device.h"
#include "cudakit_module.h"
#include "cudakit_train.h"
#include "../array/layout.h"
#include "../array/gemm.h"

#include <pthread.h>

/* One element-wise call: it.data/strides hold the output at operand 0 and
 * the inputs after it; types[k] is operand k's dtype (every input already
 * has the loop dtype, except the condition of WHERE, which is bool). */
typedef struct ck_ew_desc {
    ck_op op;
    ck_dtype types[CK_ITER_MAXOPS];
    unsigned scalar_mask;   /* bit k: operand k is one host value at it.data[k] (strides 0) */
    ck_device dev;          /* where the arrays are */
    ck_iter it;
} ck_ew_desc;

/* A reduction: the input is viewed as outer (kept) dims and inner (reduced)
 * dims; out has the outer dims.  it_outer holds out at 0 and in at 1. */
typedef struct ck_reduce_desc {
    ck_reduce_op op;
    ck_device dev;
    ck_dtype in_type;     /* input dtype */
    ck_dtype out_type;    /* sum and prod run in it, reading in_type as they go */
    int n_outer;          /* dims kept, innermost first */
    int64_t outer_shape[CK_MAXDIMS];
    int64_t outer_out_strides[CK_MAXDIMS];
    int64_t outer_in_strides[CK_MAXDIMS];
    int n_inner;          /* dims reduced, innermost first, merged */
    int64_t inner_shape[CK_MAXDIMS];
    int64_t inner_strides[CK_MAXDIMS];
    int64_t inner_size;
    char *in;
    char *out;
} ck_reduce_desc;

/* A scan (cumsum/cumprod) along one axis of a contiguous-or-not input into
 * out of the same shape; the other dims are given as outer dims. */
typedef struct ck_scan_desc {
    ck_reduce_op op;      /* CK_REDUCE_SUM or CK_REDUCE_PROD */
    ck_device dev;
    ck_dtype in_type;     /* input dtype, read as the scan goes */
    ck_dtype type;        /* output dtype, the one the scan runs in */
    int64_t len, in_stride, out_stride;
    int n_outer;
    int64_t outer_shape[CK_MAXDIMS];
    int64_t outer_in_strides[CK_MAXDIMS];
    int64_t outer_out_strides[CK_MAXDIMS];
    char *in;
    char *out;
} ck_scan_desc;

/* A gather or scatter through integer index arrays (advanced indexing, take,
 * put and their kin).  It runs over `shape` in C order; at position p
 *     arr element   = arr + sum_d p[d]*arr_strides[d] + sum_k idx_k[p]*axis_stride[k]
 *     other element = other + sum_d p[d]*other_strides[d]
 * gather copies the arr element into the other one, scatter the reverse.
 * Elements move as raw bytes (the op layer has cast already), so one kernel
 * serves every dtype.  A scatter must apply positions in C order so that the
 * last of repeated indices wins, as it does in NumPy.
 * Each index array is contiguous int64 of idx_size elements, read-only
 * (it may be the user's own array): the backend checks every element
 * against axis_len[k] by mode and uses it normalised to [0, len), so an
 * out-of-range index fails even when the iteration is empty (as NumPy's);
 * idx_strides then address it over `shape` (0 where it is broadcast). */
typedef struct ck_gather_desc {
    ck_device dev;
    int itemsize;
    int mode;                          /* ck_index_mode */
    int ndim;
    int64_t size;                      /* product of shape */
    int64_t shape[CK_MAXDIMS];
    char *arr;                         /* the indexed array */
    int64_t arr_strides[CK_MAXDIMS];   /* 0 along the dims the index arrays make */
    char *other;                       /* gather: the output; scatter: the values */
    int64_t other_strides[CK_MAXDIMS];
    int nidx;
    int64_t *idx[CK_MAXDIMS];
    int64_t idx_size[CK_MAXDIMS];
    int64_t idx_strides[CK_MAXDIMS][CK_MAXDIMS];
    int64_t axis_len[CK_MAXDIMS];
    int64_t axis_stride[CK_MAXDIMS];
    int axis_id[CK_MAXDIMS];           /* the axis an out-of-bounds message names */
} ck_gather_desc;

/* The coordinates of the true elements of a bool array, in C order:
 * out is (ndim, count) int64, C-contiguous; count comes from a
 * count_nonzero reduction the op layer ran first (ndim >= 1). */
typedef struct ck_nonzero_desc {
    ck_device dev;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_MAXDIMS];
    const char *in;
    int64_t count;
    int64_t *out;
} ck_nonzero_desc;

/* Boolean-mask selection (x[mask] with mask.shape == x.shape): the src
 * elements where mask is true, in C order over shape, packed into out
 * (contiguous, count elements, count from a count_nonzero the op layer
 * ran first).  Elements move as raw bytes.  With expand set, the reverse
 * (x[mask] = values): out's count packed elements are written to the src
 * elements where mask is true (src is written, out read; they do not
 * overlap, nor does the mask src).  A backend without the slot gets
 * nonzero and a gather (scatter) instead. */
typedef struct ck_compress_desc {
    ck_device dev;
    int itemsize;
    int ndim;                          /* >= 1 */
    int64_t shape[CK_MAXDIMS];
    const char *mask;                  /* bool */
    int64_t mask_strides[CK_MAXDIMS];
    char *src;
    int64_t src_strides[CK_MAXDIMS];
    int64_t count;
    char *out;
    int expand;
} ck_compress_desc;

/* Sorting: nrows independent rows of len elements each, row r at
 * data + r*row_stride, element i at + i*elem_stride (bytes, any sign).
 * Rows are sorted in place by NumPy's order (NaNs last; complex by real
 * then imaginary part, each NaN-last), always stably so that one kernel
 * serves sort, stable sort and argsort; descending reverses the order of
 * unequal keys while keeping equal ones in input order (the array API's
 * stable descending).  idx, when not NULL, receives each row's argsort
 * (int64, addressed by idx_row_stride / idx_elem_stride in elements);
 * data is then left untouched when sort_values is 0.  src, when not NULL
 * (sorting values, rows contiguous one after another), holds the input:
 * data is then written only, so a sort into a new array needs no copy
 * first (a backend that cannot use it copies src to data and sorts there). */
typedef struct ck_sort_desc {
    ck_device dev;
    ck_dtype type;
    int descending;
    int sort_values;
    int64_t nrows, len;
    const char *src;
    char *data;
    int64_t row_stride, elem_stride;
    int64_t *idx;
    int64_t idx_row_stride, idx_elem_stride;
    /* partition of values (idx NULL): when kth is not NULL a backend may
     * place only those nkth positions of each row (ascending, in [0, len))
     * in their sorted places, smaller elements before them and larger ones
     * after, instead of sorting the row (a full sort satisfies it too) */
    const int64_t *kth;
    int nkth;
} ck_sort_desc;

/* histogram / bincount: each of the n contiguous elements of x adds 1
 * (w NULL; out int64) or its weight w[i] (out float64) to out[bin], out's
 * nb elements zeroed by the caller.  x is int64 bin numbers when edges is
 * NULL, else float32 or float64 values binned by ck_hist_bin (scalar_ops.h)
 * over the nb + 1 float64 edges; bins outside [0, nb) are skipped. */
typedef struct ck_histogram_desc {
    ck_device dev;
    ck_dtype type;
    int64_t n, nb;
    int uniform;
    const char *x;
    const double *w, *edges;
    char *out;
} ck_histogram_desc;

/* searchsorted: for each of the nv contiguous elements of v, the insertion
 * point into the contiguous sorted a (na elements, NumPy's order) written
 * to out (int64, contiguous); a and v share type. */
typedef struct ck_searchsorted_desc {
    ck_device dev;
    ck_dtype type;
    int side_right;
    int64_t na, nv;
    const char *a;
    const char *v;
    int64_t *out;
} ck_searchsorted_desc;

/* A random fill of n contiguous elements of type, through the formulas of
 * src/formulas/random_formulas.h, which every backend's fill uses.  The simple
 * distributions (bits, uniform, normal, exponential, integers): block b of
 * the stream (key, ctr + b) makes elements [b*per, b*per + per).  The
 * heavy ones (gamma, beta, poisson, binomial: per 0): element i draws from
 * its own stream (key, ctr, i) with parameters a, b (or a_arr[i], b_arr[i],
 * arrays on the fill's device). */
typedef struct ck_random_desc {
    ck_device dev;
    ck_random_dist dist;
    ck_dtype type;
    char *data;
    int64_t n;
    int per;                  /* elements a block: 4 or 2 */
    uint64_t nblocks;
    uint32_t key[2], ctr[4];
    uint64_t low, range;      /* integers (range 0: 2^64) */
    double a, b;              /* heavy distributions' parameters ... */
    const double *a_arr, *b_arr;   /* ... or one per element (NULL: a, b) */
} ck_random_desc;

/* Joining (concatenate, stack and their kin): npieces arrays copied into
 * out, piece p filling [offset, offset + len) along axis and all of out's
 * other dims.  Pieces come in increasing offset order, none empty (len > 0,
 * and out is not empty), each already of out's dtype (the op layer casts
 * the others first), so elements move as raw bytes of itemsize; a piece
 * never overlaps out.  The op layer passes at most CK_PIECES_MAX pieces a
 * call (more pieces, more calls); a backend without the slot gets one
 * ck_array_assign per piece instead. */
#define CK_PIECES_MAX 32
typedef struct ck_piece {
    const char *data;
    int64_t offset, len;               /* along axis, in elements */
    int64_t strides[CK_MAXDIMS];       /* bytes, over out's ndim dims */
} ck_piece;

typedef struct ck_pieces_desc {
    ck_device dev;
    int itemsize;
    int ndim;                          /* >= 1 */
    int axis;                          /* 0..ndim-1 */
    int64_t shape[CK_MAXDIMS];         /* out's */
    char *out;
    int64_t out_strides[CK_MAXDIMS];
    int npieces;                       /* 1..CK_PIECES_MAX */
    ck_piece pieces[CK_PIECES_MAX];
} ck_pieces_desc;

/* The row ops of training (src/ops/train.c) over C-contiguous arrays
 * viewed as (outer, len, inner): row r = o*inner + k holds the len
 * elements (o*len + i)*inner + k.  x, g and out have type (float16/32/64),
 * and each row is computed in acc (float32 or float64).
 *   SOFTMAX, LOG_SOFTMAX:   out = f(x), x's layout
 *   LOGSUMEXP:              out[r] (type)
 *   SOFTMAX_BWD:            out = x * (g - sum(g * x)), x the softmax
 *   LOG_SOFTMAX_BWD:        out = g - exp(x) * sum(g), x the log_softmax
 *   XENT:  the loss of logits x against target[r] (int64 class indices,
 *          ignore_index counting for nothing) or prob (x's layout), with
 *          smoothing; lse[r] (acc) always; none: out[r] (type); mean/sum:
 *          out[0] (type) and total[0] (acc, what mean divides by), through
 *          scratch (acc, 2 * rows: the rows' losses, then their weights)
 *   XENT_BWD: out = scale * (exp(x - lse) * sum(q) - q) for the target
 *          distribution q, scale g[r] (none), g[0] (sum), g[0] / total[0]
 *          (mean); g has type.
 * A class index out of [0, len) other than ignore_index: the CPU fails
 * with CK_ERR_INDEX, a GPU writes NaN (it cannot raise without a wait).
 * (ck_row_op is in cudakit_train.h, for the kernels' text.) */
typedef struct ck_rows_desc {
    ck_row_op op;
    ck_device dev;
    ck_dtype type, acc;
    int64_t outer, len, inner;   /* rows = outer * inner > 0 */
    const char *x, *g;
    char *out;
    const int64_t *target;       /* XENT*: class indices, one a row, or NULL ... */
    const char *prob;            /* ... or probabilities */
    char *lse, *total, *scratch;
    int64_t ignore_index;
    double smoothing;
    ck_reduction reduction;
} ck_rows_desc;

/* A multi-tensor optimizer step: n tensors of one dtype, each n elements
 * contiguous at p (in place), g, s1 and s2 (the states; NULL where the
 * optimizer keeps none).  The backend splits a long list as it likes. */
typedef struct ck_optim_tensor {
    char *p;
    const char *g;
    char *s1, *s2;
    int64_t n;
} ck_optim_tensor;

typedef struct ck_optim_desc {
    ck_device dev;
    ck_dtype type;
    ck_optim_hparams h;
    const void *step_ptr;     /* h.step_array's value on dev, float64 (float32 when step_f32), or NULL: h.step */
    int step_f32;
    /* step_inc: the step taken is *step_ptr + 1 (a float32 count), and when
     * step_write, the count is raised to it once every element is done
     * (ticket: a zero uint32 on dev the backend may count blocks with and
     * leaves zero).  Only the last call of a step writes. */
    int step_inc, step_write;
    unsigned *ticket;
    int ntensors;
    const ck_optim_tensor *t;
} ck_optim_desc;

/* The matmul epilogue over rows x n contiguous elements of type: forward
 * y = act(y + bias[j]) in place (bias NULL: none), the pre-activation
 * also into pre when not NULL; backward out = g * act'(saved), saved the
 * pre-activation (the output for relu and none). */
typedef struct ck_bias_act_desc {
    ck_device dev;
    ck_dtype type;
    ck_act act;
    int backward;
    int64_t rows, n;
    char *y, *pre, *out;
    const char *bias, *g, *saved;
} ck_bias_act_desc;

/* One product of the fused linear layer (src/ops/linear.c), row-major:
 * d (m x n, row stride ldd) = op(a) @ op(b), a stored m x k (k x m when
 * ta) with row stride lda, b k x n (n x k when tb) with row stride ldb, all
 * in elements, unit column strides; then the epilogue: BIAS adds bias[j]
 * to column j, RELU clamps at 0 (after the bias), BGRAD_A writes
 * bias[i] = sum_k op(a)[i][k] (m elements: a bias's gradient) beside d.
 * A backend answers CK_ERR_NOT_IMPLEMENTED, before any work, for a case it
 * has no product for; the op layer then composes it. */
typedef enum ck_linear_epi {
    CK_LINEAR_EPI_NONE, CK_LINEAR_EPI_BIAS, CK_LINEAR_EPI_RELU, CK_LINEAR_EPI_RELU_BIAS, CK_LINEAR_EPI_BGRAD_A,
    CK_LINEAR_EPI_COUNT
} ck_linear_epi;

typedef struct ck_linear_desc {
    ck_device dev;
    ck_dtype type;
    int allow_tf32;
    ck_linear_epi epi;
    int64_t m, n, k;
    const char *a, *b;
    char *d;
    int64_t lda, ldb, ldd;
    int ta, tb;
    char *bias;              /* BIAS, RELU_BIAS: read; BGRAD_A: written */
} ck_linear_desc;

/* target[idx[i]] += src[i] for i < m (target n elements, all contiguous
 * of type): repeated indices add up, in any order.  idx may hold values
 * outside [-n, n) (the user's): every device then fails with CK_ERR_INDEX
 * naming the first, as np.add.at, and leaves the target untouched. */
typedef struct ck_scatter_add_desc {
    ck_device dev;
    ck_dtype type;
    int64_t n, m;
    char *target;
    const int64_t *idx;
    const char *src;
} ck_scatter_add_desc;

/* A loaded user module and its functions: each backend's own structs begin
 * with these (the wrappers in backend.c fill them and keep the functions
 * handed out by name, freed with the module). */
struct ck_module {
    ck_device dev;
    const struct ck_backend_iface *be;
    pthread_mutex_t mu;                /* guards funcs */
    ck_function **funcs;
    int nfuncs, cfuncs;
};
struct ck_function {
    ck_module *module;
    char *name;
};

typedef struct ck_backend_iface {
    const char *name;
    /* memory */
    void *(*alloc)(ck_device dev, size_t nbytes);           /* NULL and error set on failure */
    void (*free)(ck_device dev, void *ptr, size_t nbytes);
    /* copies between this device and the host (n bytes, both contiguous) */
    ck_status (*copy_to_host)(ck_device dev, void *dst, const void *src, size_t n);
    ck_status (*copy_from_host)(ck_device dev, void *dst, const void *src, size_t n);
    /* the same on stream s, without waiting for the host (optional: the
     * copies above); the host memory is pinned on a GPU, and block is the
     * start of the device buffer copied, kept from other streams until s
     * is done with it */
    ck_status (*copy_async)(ck_device dev, void *dst, const void *src, size_t n, int to_host, ck_stream s,
                            void *block);
    /* the device buffer starting at block is used by work on s, besides
     * its own stream (optional: a host-ordered device needs nothing) */
    ck_status (*record_stream)(ck_device dev, void *block, ck_stream s);
    /* between two devices of this backend (optional) */
    ck_status (*copy_peer)(ck_device dst_dev, void *dst, ck_device src_dev, const void *src, size_t n);
    /* memory figures (the wrappers check the device first) */
    ck_status (*memory_stats)(ck_device dev, ck_mem_stats *out);
    ck_status (*memory_empty_cache)(ck_device dev);
    ck_status (*memory_set_limit)(ck_device dev, size_t limit);
    ck_status (*memory_reset_peak)(ck_device dev);
    /* page-locked host memory for copies to and from this device (optional:
     * plain host memory then); *release frees it with ctx */
    void *(*pinned_alloc)(size_t nbytes, ck_release_fn *release, void **ctx);

    /* the device runtime */
    int (*device_count)(void);                               /* (optional: one) loads the driver on first call */
    int (*device_get_current)(void);                         /* (optional: 0) this thread's device index */
    void (*device_set_current)(int index);
    ck_status (*device_properties)(ck_device dev, ck_device_props *out);
    ck_status (*device_mem_info)(ck_device dev, size_t *free_bytes, size_t *total_bytes);
    ck_status (*synchronize)(ck_device dev);
    ck_status (*stream_create)(ck_device dev, int nonblocking, int priority, ck_stream *out);
    ck_status (*stream_destroy)(ck_device dev, ck_stream s);
    ck_status (*stream_synchronize)(ck_device dev, ck_stream s);
    ck_status (*stream_query)(ck_device dev, ck_stream s, int *done);
    ck_status (*stream_wait_event)(ck_device dev, ck_stream s, ck_event e);
    ck_status (*stream_priority_range)(ck_device dev, int *least, int *greatest);
    ck_stream (*stream_current)(ck_device dev);              /* this thread's */
    void (*stream_set_current)(ck_device dev, ck_stream s);
    ck_status (*event_create)(ck_device dev, int timing, ck_event *out);
    ck_status (*event_destroy)(ck_device dev, ck_event e);
    ck_status (*event_record)(ck_device dev, ck_event e, ck_stream s);
    ck_status (*event_synchronize)(ck_device dev, ck_event e);
    ck_status (*event_query)(ck_device dev, ck_event e, int *done);
    ck_status (*event_elapsed_ms)(ck_device dev, ck_event start, ck_event end, float *ms);

    /* user modules (CUDA C source compiled for this device) */
    ck_status (*module_load)(ck_device dev, const char *source, const char *name_hint, const char *const *options,
                             int noptions, const char *const *name_exprs, int nexprs, ck_module **out);
    void (*module_free)(ck_module *m);                       /* after its functions */
    ck_status (*module_get_global)(ck_module *m, const char *name, void **ptr, size_t *nbytes);
    ck_status (*function_new)(ck_module *m, const char *name, ck_function **out);
    void (*function_free)(ck_function *f);
    ck_status (*function_attributes)(ck_function *f, ck_function_attrs *out);
    ck_status (*function_set_max_dynamic_shared)(ck_function *f, int bytes);
    ck_status (*function_suggest_block)(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid,
                                        int *block);
    int (*function_params)(ck_function *f, size_t *sizes, int max);
    /* the grid and block have no zero dimension (the wrapper checked); flags: CK_LAUNCH_* */
    ck_status (*function_launch)(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                 ck_stream stream, unsigned flags, int nparams, void **params,
                                 const ck_launch_arg *info);
    /* (optional: CK_ERR_NOT_IMPLEMENTED) the most blocks a cooperative launch may have */
    ck_status (*function_max_cooperative_blocks)(ck_function *f, const unsigned block[3], size_t shmem, int *out);

    /* kernels */
    ck_status (*elementwise)(const ck_ew_desc *d);
    ck_status (*cast)(const ck_ew_desc *d);                 /* types[1] -> types[0] */
    ck_status (*fill)(const ck_ew_desc *d, const void *value); /* value: one element of types[0] */
    ck_status (*reduce)(const ck_reduce_desc *d);
    ck_status (*scan)(const ck_scan_desc *d);                /* (optional) */
    /* out[i] = start + i * step, as doubles then cast; contiguous out */
    ck_status (*iota)(ck_array *out, double start, double step);
    /* advanced indexing (optional) */
    ck_status (*gather)(const ck_gather_desc *d);
    ck_status (*scatter)(const ck_gather_desc *d);
    ck_status (*nonzero)(const ck_nonzero_desc *d);
    ck_status (*compress)(const ck_compress_desc *d);       /* (optional, needs the three above) */
    /* sorting and searching (optional) */
    ck_status (*sort)(const ck_sort_desc *d);
    ck_status (*searchsorted)(const ck_searchsorted_desc *d);
    ck_status (*histogram)(const ck_histogram_desc *d);   /* (optional) */
    /* random fills */
    ck_status (*random)(const ck_random_desc *d);
    /* joining: all the pieces of a concatenate/stack call at once
     * (optional; the op layer assigns piece by piece) */
    ck_status (*copy_pieces)(const ck_pieces_desc *d);
    /* training (optional: NotImplementedError naming the device) */
    ck_status (*rows)(const ck_rows_desc *d);
    ck_status (*optim_step)(const ck_optim_desc *d);
    ck_status (*bias_act)(const ck_bias_act_desc *d);
    ck_status (*scatter_add)(const ck_scatter_add_desc *d);
    /* (optional: the op layer composes matmul, bias_act and a sum) */
    ck_status (*linear)(const ck_linear_desc *d);

    /* libraries (optional: the CPU's BLAS, FFT and LAPACK are NumPy's,
     * called from the Python layer) */
    ck_status (*matmul)(const ck_matmul_desc *d);            /* batched c = a @ b */
    ck_status (*fft)(const ck_fft_desc *d);
    ck_status (*solver)(const ck_solver_desc *d);

    /* graphs (optional: CK_ERR_NOT_IMPLEMENTED naming the device); the
     * wrappers of graph.c own the streams, the pool and the checks.  begin
     * starts capturing the work queued on s into *impl; end makes it ready
     * to launch (or frees it and fails); nodes counts it; uses says whether
     * the recorded work addresses [p, p + n) (optional: the CPU's, which
     * keeps memory a replay would touch from being freed). */
    ck_status (*graph_begin)(ck_device dev, ck_stream s, void **impl);
    ck_status (*graph_end)(ck_device dev, ck_stream s, void *impl);
    ck_status (*graph_launch)(ck_device dev, void *impl, ck_stream s);
    void (*graph_free)(ck_device dev, void *impl);
    int64_t (*graph_nodes)(void *impl);
    int (*graph_uses)(void *impl, const void *p, size_t n);

    /* (optional: none) peer access between devices a and b of this
     * backend, enabled both ways on first ask: 1 on, 0 they cannot */
    int (*peer_access)(int a, int b);
} ck_backend_iface;

/* The backend of a device: NULL when its type cannot be used (no driver,
 * no GPU), with the reason left by ck_backend_require. */
const ck_backend_iface *ck_backend_for(ck_device dev);
/* The backend of a usable device, or NULL with the one error of
 * ck_device_check set. */
const ck_backend_iface *ck_backend_require(ck_device dev);
/* Register a backend for a device type (the CUDA one does at load). */
void ck_backend_register(ck_device_type type, const ck_backend_iface *iface);

extern const ck_backend_iface ck_backend_cpu;

/* The profiler's decorated copy of a backend's table (profile.c), and the
 * switch between it and the plain tables (backend.c): on while a profile,
 * NVTX op ranges or the sync debug mode are. */
const ck_backend_iface *ck_backend_decorate(int type, const ck_backend_iface *real);
void ck_backend_observe(int on);
/* ck_function_launch while observed: the launch recorded around the real one. */
ck_status ck_backend_obs_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                ck_stream stream, unsigned flags, int nparams, void **params,
                                const ck_launch_arg *info);
/* The CPU's memory figures count allocated bytes; buffer.c, which keeps
 * small CPU arrays inline with their header, tells it of those. */
void ck_cpu_mem_note(int64_t delta_bytes);

#endif
