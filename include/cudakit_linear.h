/* cudakit_linear.h - the fused linear layer (src/ops/linear.c):
 * y = act(x @ w^T + b), PyTorch's F.linear with its activation, and the
 * backward that gives the gradients of x, w and b in as few passes as the
 * device allows.  On a GPU one cuBLASLt product a direction, the bias, the
 * relu and the bias gradient in its epilogue; on the CPU (and wherever
 * cuBLASLt declines a case) the device's product then the epilogue loop of
 * ck_bias_act and a column sum, with the same results.  float16, float32
 * and float64; x (..., K), w (N, K), b (N,) or NULL, y (..., N).
 *
 *     ck_array y, saved;
 *     ck_linear(&y, &x, &w, &b, CK_ACT_RELU, &saved);
 *     ck_linear_backward(&g, &x, &w, 1, CK_ACT_RELU, &saved, &gx, &gw, &gb);
 */
#ifndef CUDAKIT_LINEAR_H
#define CUDAKIT_LINEAR_H

#include "cudakit.h"
#include "cudakit_train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *y = act(x @ w^T + b) (b NULL: no bias), a new C-contiguous array of the
 * operands' common float dtype (non-float operands: CK_ERR_TYPE).  With
 * saved not NULL, *saved is what ck_linear_backward needs of the forward
 * besides x and w: a view of *y for relu, the pre-activation for gelu,
 * nothing (buf NULL) for none. */
ck_status ck_linear(ck_array *y, const ck_array *x, const ck_array *w, const ck_array *b, ck_act act,
                    ck_array *saved);

/* The gradients of ck_linear from g (dL/dy, y's shape): *gx (x's shape),
 * *gw (w's), *gb (N,) for those not NULL (gb only when has_bias), each a
 * new array of the forward's dtype.  saved as ck_linear gave it. */
ck_status ck_linear_backward(const ck_array *g, const ck_array *x, const ck_array *w, int has_bias, ck_act act,
                             const ck_array *saved, ck_array *gx, ck_array *gw, ck_array *gb);

/* The product of the devices whose backend has none (the CPU's is NumPy's:
 * the layer above registers it): *out = a @ b of 2-d arrays. */
typedef ck_status (*ck_linear_gemm_fn)(ck_array *out, const ck_array *a, const ck_array *b);
void ck_linear_set_host_gemm(ck_linear_gemm_fn fn);

/* The gradient rule's parameters (src/autograd/rules_linear.c), saved by
 * the recording site (src/python/linear.c) through ck_ag_record_op: inputs
 * x, w (and b when has_bias); saved slots x, w and the forward's saved. */
typedef struct ck_linear_params {
    ck_act act;
    int has_bias;
} ck_linear_params;

/* The names of the gradient rows of src/autograd/rules_linear.c, i from 0
 * (NULL after the last): the tests read them so that a row without a test
 * fails. */
const char *ck_ag_linear_rule_name(int i);

#ifdef __cplusplus
}
#endif
#endif /* CUDAKIT_LINEAR_H */
