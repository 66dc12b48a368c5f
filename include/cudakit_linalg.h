/* cudakit_linalg.h - matrix products (src/ops/linalg.c).
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

#ifdef __cplusplus
}
#endif
#endif
