/* cudakit_linalg.h - matrix products, FFTs and factorisations (src/ops/linalg.c).
 *
 * ck_matmul follows numpy.matmul: 1-d operands are promoted to a row
 * (first) or a column (second) and that dimension is dropped from the
 * result, batch dimensions broadcast, the result dtype is the promotion of
 * the operands'.  It runs on a device whose backend has a matmul (CUDA:
 * cuBLAS, and a kernel of our own for integers and bool); the CPU's matmul
 * is NumPy's, called from the Python layer.
 *
 *     ck_array c;
 *     if (ck_matmul(&c, &a, &b, 0) != CK_OK) fprintf(stderr, "%s\n", ck_error_message());
 */
#ifndef CUDAKIT_LINALG_H
#define CUDAKIT_LINALG_H

#ifdef __cplusplus
extern "C" {
#endif

/* out = a @ b; with out_given, *out is filled in place (its shape must be
 * the product's, its dtype one the result casts to by same_kind). */
ck_status ck_matmul(ck_array *out, const ck_array *a, const ck_array *b, int out_given);
/* Whether float32 and complex64 products may round their inputs to TF32
 * on GPUs that have it (off by default, like PyTorch's allow_tf32). */
void ck_matmul_set_allow_tf32(int allow);
int ck_matmul_allow_tf32(void);

/* ------------------------------------------------------------------ FFT */

typedef enum { CK_FFT_C2C, CK_FFT_R2C, CK_FFT_C2R } ck_fft_kind;

/* Batched transforms of rank 1..3 over contiguous items: item b of the
 * input at in + b * (its size), the same for out.  n are the logical sizes
 * (the real side's for R2C/C2R: the complex side's last size is
 * n[rank-1]/2+1).  Unnormalised, as cuFFT; in is left untouched (C2R works
 * on a copy) unless in_disposable says the caller has no further use for
 * it.  Runs where the device's backend has an FFT (CUDA: cuFFT, plans
 * cached); the CPU's FFT is NumPy's, called from the Python layer.
 *
 *   ck_fft_desc f = {.dev = dev, .kind = CK_FFT_R2C, .dbl = 0, .rank = 1, .n = {4096},
 *                    .batch = 4096, .in = x, .out = y};
 *   ck_fft_exec(&f);
 */
typedef struct ck_fft_desc {
    ck_device dev;
    ck_fft_kind kind;
    int dbl;             /* double precision (Z2Z, D2Z, Z2D) */
    int forward;         /* C2C only: 1 forward (e^-i), 0 inverse */
    int rank;
    int64_t n[3];
    int64_t batch;
    const void *in;
    void *out;
    int in_disposable;   /* C2R may overwrite in (saves a copy) */
} ck_fft_desc;

ck_status ck_fft_exec(const ck_fft_desc *d);

/* --------------------------------------------------------- factorisations */

typedef enum ck_solver_op {
    CK_SOLVER_GETRF,   /* LU with partial pivoting: a (n x n) in place, ipiv (n) */
    CK_SOLVER_GETRS,   /* solve op(A) X = B from getrf's a and ipiv: b (n x nrhs) in place; trans 0 N, 1 T, 2 C */
    CK_SOLVER_POTRF,   /* Cholesky of the `upper` (or lower) triangle of a (n x n), in place */
    CK_SOLVER_GEQRF,   /* QR: a (m x n) replaced by R and the reflectors, tau (min(m, n)) */
    CK_SOLVER_ORGQR,   /* a (m x n) holding k reflectors becomes Q's first n columns (tau: k) */
    CK_SOLVER_GESVD,   /* a (m x n, m >= n, destroyed); job 'A' (u m x m, vt n x n), 'S' (u m x n), 'N'; s (n, real) */
    CK_SOLVER_SYEVD,   /* Hermitian a (n x n, `upper` triangle read) -> its eigenvectors when vectors; w (n, real) ascending */
    CK_SOLVER_GEEV,    /* general a (n x n, destroyed) -> w (n, complex), vr (n x n, LAPACK's packing for real a) or NULL */
} ck_solver_op;

/* `batch` column-major matrices stored one after another (a row-major
 * n x m array's memory is the column-major m x n matrix: the caller
 * transposes where that is not what it wants), of type float32, float64,
 * complex64 or complex128, on the current stream of dev.  Each item's
 * LAPACK info goes to info_host[batch] (after a wait for the stream:
 * NumPy's errors need it). */
typedef struct ck_solver_desc {
    ck_solver_op op;
    ck_device dev;
    ck_dtype type;
    int64_t batch;
    int m, n, nrhs, k;
    int trans, upper, vectors;
    char job;
    void *a;
    void *b;            /* GETRS */
    int32_t *ipiv;      /* GETRF, GETRS */
    void *tau;          /* GEQRF, ORGQR */
    void *s, *u, *vt;   /* GESVD */
    void *w, *vr;       /* SYEVD, GEEV */
    int32_t *info_host;
} ck_solver_desc;

/* CK_ERR_NOT_IMPLEMENTED on a device without a solver (the CPU's LAPACK is
 * NumPy's, called from the Python layer) or a routine its library lacks. */
ck_status ck_solver_exec(const ck_solver_desc *d);

#ifdef __cplusplus
}
#endif
#endif
