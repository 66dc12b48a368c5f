/*
 * cuda_libs.h - the CUDA backend's calls into cuFFT and cuSOLVER.
 *
 * The op layer (here: the Python layer's fft/linalg glue) reduces every
 * transform and factorisation to contiguous batches; these functions run
 * them on the current stream of the arrays' device, with plans, handles and
 * workspaces kept per device.  Matrices are column-major (a row-major
 * n x m array's memory is the column-major m x n matrix: the caller
 * transposes where that is not what it wants).
 *
 *   ck_fft_desc f = {.dev = dev, .kind = CK_FFT_R2C, .dbl = 0, .rank = 1, .n = {4096},
 *                    .batch = 4096, .in = x, .out = y};
 *   ck_cuda_fft(&f);
 */
#ifndef CK_CUDA_LIBS_H
#define CK_CUDA_LIBS_H

#include "cudakit.h"

/* ------------------------------------------------------------------ cuFFT */

typedef enum { CK_FFT_C2C, CK_FFT_R2C, CK_FFT_C2R } ck_fft_kind;

/* batch transforms of rank 1..3 over contiguous items: item b of the input
 * at in + b * (its size), the same for out.  n are the logical sizes (the
 * real side's for R2C/C2R: the complex side's last size is n[rank-1]/2+1).
 * Unnormalised, as cuFFT; in is left untouched (C2R works on a copy)
 * unless in_disposable says the caller has no further use for it. */
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

ck_status ck_cuda_fft(const ck_fft_desc *d);
/* Destroy the cached plans (tests, device teardown). */
void ck_cuda_fft_clear_plans(void);

/* --------------------------------------------------------------- cuSOLVER */

/* Element types: 0 float32, 1 float64, 2 complex64, 3 complex128 (the
 * order of ck_cusolver_type).  Every function works on `batch` matrices
 * stored one after the other, in place, and writes each one's LAPACK info
 * into info_host[batch] (after a sync of the current stream: NumPy's
 * errors need it). */
ck_status ck_cuda_solver_getrf(ck_device dev, int type, int64_t batch, int n, void *a, int32_t *ipiv,
                               int32_t *info_host);
/* b: n x nrhs per item; lu, ipiv from getrf; trans: 0 N, 1 T, 2 C. */
ck_status ck_cuda_solver_getrs(ck_device dev, int type, int64_t batch, int n, int nrhs, int trans, const void *lu,
                               const int32_t *ipiv, void *b, int32_t *info_host);
/* upper: 1 factors the upper triangle (a = U^H U), 0 the lower. */
ck_status ck_cuda_solver_potrf(ck_device dev, int type, int64_t batch, int n, int upper, void *a,
                               int32_t *info_host);
/* a: m x n per item; tau: min(m, n) per item. */
ck_status ck_cuda_solver_geqrf(ck_device dev, int type, int64_t batch, int m, int n, void *a, void *tau,
                               int32_t *info_host);
/* q: m x ncols per item holding k reflectors in its first k columns (tau: k
 * per item); becomes the first ncols columns of Q. */
ck_status ck_cuda_solver_orgqr(ck_device dev, int type, int64_t batch, int m, int ncols, int k, void *q,
                               const void *tau, int32_t *info_host);
/* a: m x n per item, m >= n (destroyed); job 'A' (u m x m, vt n x n),
 * 'S' (u m x n, vt n x n) or 'N' (singular values only); s: n real per item. */
ck_status ck_cuda_solver_gesvd(ck_device dev, int type, int64_t batch, int m, int n, char job, void *a, void *s,
                               void *u, void *vt, int32_t *info_host);
/* a: n x n Hermitian per item (the `upper` triangle is read), replaced by
 * its eigenvectors when vectors; w: n real eigenvalues per item, ascending. */
ck_status ck_cuda_solver_syevd(ck_device dev, int type, int64_t batch, int n, int vectors, int upper, void *a,
                               void *w, int32_t *info_host);
/* a: n x n general matrices (destroyed); w: n complex eigenvalues per item
 * (complex64 for types 0/2, complex128 for 1/3); vr: n x n right
 * eigenvectors of a's type (LAPACK's packing for real types: a conjugate
 * pair's real and imaginary parts in two columns), NULL for none.
 * CK_ERR_NOT_IMPLEMENTED when cuSOLVER has no cusolverDnXgeev (< CUDA 12.6). */
ck_status ck_cuda_solver_geev(ck_device dev, int type, int64_t batch, int n, void *a, void *w, void *vr,
                              int32_t *info_host);

#endif
