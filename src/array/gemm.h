/* Layouts of batched matrix products: which strided views a column-major
 * BLAS (cuBLAS) can read as they are, and how a batched product over
 * broadcast batch dimensions splits into strided-batched calls.  Pure
 * functions on layouts, no memory and no devices: the op layer uses them to
 * decide what to copy, the CUDA backend to plan its calls, and a C test
 * checks both against a plain triple loop. */
#ifndef CK_ARRAY_GEMM_H
#define CK_ARRAY_GEMM_H

#include "cudakit.h"

/* One operand of a batched product: a matrix of rows x cols at data with
 * byte strides rs (between rows) and cs (between columns), and a byte
 * stride per batch dimension (0 where the operand is broadcast). */
typedef struct ck_gemm_operand {
    char *data;
    int64_t rs, cs;
    int64_t bs[CK_MAXDIMS];
} ck_gemm_operand;

/* c[..., m, n] = a[..., m, k] @ b[..., k, n] over nbatch batch dims;
 * every operand has dtype `type`; c overlaps neither a nor b. */
typedef struct ck_matmul_desc {
    ck_device dev;
    ck_dtype type;
    int allow_tf32;      /* float32/complex64 may round inputs to TF32 */
    int64_t m, n, k;     /* all >= 1 (the op layer handles empty products) */
    int nbatch;
    int64_t batch_shape[CK_MAXDIMS];
    ck_gemm_operand a, b, c;
} ck_matmul_desc;

/* One strided batch of products, strides in elements. */
typedef struct ck_gemm_job {
    int64_t m, n, k, batch;
    char *a, *b, *c;
    int64_t a_rs, a_cs, a_bs;
    int64_t b_rs, b_cs, b_bs;
    int64_t c_rs, c_cs, c_bs;
} ck_gemm_job;

/* A column-major BLAS call computing one job (row-major C as C^T = B^T A^T):
 *   C (m x n, ldc) = op_a(A) (m x k) * op_b(B) (k x n), batch times,
 *   A, B, C stepping by stride_a, stride_b, stride_c elements;
 * op is 0 (as stored) or 1 (transposed). */
typedef struct ck_blas_gemm {
    int op_a, op_b;
    int64_t m, n, k, batch;
    const char *A, *B;
    char *C;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
} ck_blas_gemm;

/* Whether a rows x cols matrix with element strides (rs, cs) is a BLAS
 * matrix as it is: unit stride along one axis and a leading dimension that
 * keeps rows (or columns) apart.  *transposed: it is column-major (rs == 1).
 * Dimensions of size 1 take any stride. */
int ck_gemm_matrix_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *transposed, int64_t *ld);

/* Call fn for each strided batch of d: the longest run of trailing batch
 * dims whose strides chain for all three operands (and are >= 0) becomes
 * one job's batch, the other dims are looped over.  Byte strides must be
 * multiples of the item size (CK_ERR_VALUE otherwise).  Stops at the
 * first failing fn. */
ck_status ck_gemm_for_each_job(const ck_matmul_desc *d, ck_status (*fn)(void *ctx, const ck_gemm_job *j), void *ctx);

/* The column-major call of a job; 0 when a BLAS cannot read one of its
 * operands as it is (or a size exceeds a 32-bit int). */
int ck_gemm_job_to_blas(const ck_gemm_job *j, ck_blas_gemm *g);

#endif
