/* cudakit_train.h - the ops training needs (src/ops/train.c): softmax and
 * log_softmax along an axis, logsumexp, a fused softmax cross-entropy with
 * its backward, multi-tensor optimizer steps and a bias + activation
 * epilogue for matrix products.  Every op runs on every device (the CPU's
 * loops, the GPU's generated kernels) in float16, float32 and float64;
 * float16 is computed in float32, as PyTorch does.
 *
 *     ck_array p;
 *     if (ck_softmax(&p, &logits, -1, 0) != CK_OK) fprintf(stderr, "%s\n", ck_error_message());
 */
#ifndef CUDAKIT_TRAIN_H
#define CUDAKIT_TRAIN_H

#include "cudakit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* softmax (log_ 0) or log_softmax (log_ 1) of a along axis, shifted by the
 * row's maximum (a row of -inf gives NaN, as PyTorch's).  Bool and integer
 * input is computed in float64 (NumPy's default float); complex is a
 * TypeError. */
ck_status ck_softmax(ck_array *out, const ck_array *a, int axis, int log_);
/* The gradient of softmax / log_softmax along axis from its output y and
 * the output's gradient g (same shape and dtype):
 *   softmax:     y * (g - sum(g * y))      log_softmax: g - exp(y) * sum(g) */
ck_status ck_softmax_backward(ck_array *out, const ck_array *g, const ck_array *y, int axis, int log_);
/* log(sum(exp(a))) over the axes of axis_mask (scipy.special.logsumexp):
 * -inf for an empty or all -inf row, inf when a row holds inf. */
ck_status ck_logsumexp(ck_array *out, const ck_array *a, uint64_t axis_mask, int keepdims);

/* The row ops the backends run these with (backend.h's ck_rows_desc). */
typedef enum ck_row_op {
    CK_ROW_SOFTMAX, CK_ROW_LOG_SOFTMAX, CK_ROW_LOGSUMEXP, CK_ROW_SOFTMAX_BWD, CK_ROW_LOG_SOFTMAX_BWD,
    CK_ROW_XENT, CK_ROW_XENT_BWD, CK_ROW_XENT_SOFTMAX_BWD, CK_ROW_OPS
} ck_row_op;

typedef enum ck_reduction { CK_REDUCTION_NONE, CK_REDUCTION_MEAN, CK_REDUCTION_SUM } ck_reduction;

/* Softmax cross-entropy of logits (PyTorch's cross_entropy): the classes
 * along class_axis (1 for (N, C, d...), 0 for (C,)).  target is either
 * integer class indices of logits' shape without the class axis (rows
 * equal to ignore_index count for nothing; mean divides by the rows that
 * count, NaN when none does) or class probabilities of logits' shape (mean
 * divides by the number of rows).  label_smoothing mixes the uniform
 * distribution into the target.  *loss: 0-d (mean, sum) or the rows' shape
 * (none), of logits' dtype; *lse: the rows' log-sum-exp and *total the
 * count mean divides by (0-d), both float32 (float64 for float64 logits):
 * what the backward needs.  A class index out of range is an IndexError on
 * the CPU and a NaN loss on a GPU (which cannot raise without waiting). */
typedef struct ck_xent_args {
    int class_axis;
    int64_t ignore_index;
    double label_smoothing;
    ck_reduction reduction;
} ck_xent_args;
ck_status ck_softmax_xent(const ck_array *logits, const ck_array *target, const ck_xent_args *args, ck_array *loss,
                          ck_array *lse, ck_array *total);
/* The gradient of the loss with respect to the logits, from the loss's
 * gradient g (0-d, or the rows' shape for none) and the forward's lse and
 * total: g * (softmax * sum(q) - q) for the target distribution q. */
ck_status ck_softmax_xent_backward(ck_array *grad_logits, const ck_array *g, const ck_array *logits,
                                   const ck_array *target, const ck_array *lse, const ck_array *total,
                                   const ck_xent_args *args);
/* The same loss taken of probabilities, p = softmax(z) over the class axis
 * (the seed model's Softmax before CrossEntropyLoss): the gradient with
 * respect to z, ck_softmax_xent_backward's d then softmax's backward
 * p * (d - sum(d * p)), in one pass over the rows.  logits is p. */
ck_status ck_softmax_xent_softmax_backward(ck_array *grad_z, const ck_array *g, const ck_array *logits,
                                           const ck_array *target, const ck_array *lse, const ck_array *total,
                                           const ck_xent_args *args);

/* Optimizer steps over lists of parameters, in place, in one pass on the
 * CPU and one launch per 32 tensors of one dtype on a GPU (PyTorch's
 * formulas, bias correction for Adam).  Parameters, gradients and states
 * are C-contiguous arrays of one device and a floating dtype; the states
 * have their parameter's shape and dtype. */
typedef enum ck_optim_kind { CK_OPTIM_ADAM, CK_OPTIM_SGD } ck_optim_kind;
typedef struct ck_optim_hparams {
    ck_optim_kind kind;
    double lr, weight_decay;
    int maximize;
    /* Adam / AdamW: decoupled is AdamW's weight decay (p *= 1 - lr * wd) */
    double beta1, beta2, eps;
    int64_t step;          /* the step being taken, from 1 ... */
    const ck_array *step_array;   /* ... or read from this 0-d array on the parameters' device (not
                                   * NULL), so that a captured CUDA graph reads the step of each replay */
    int step_increment;           /* add one to *step_array first (capturable Adam: the count lives on
                                   * the device, so each replay of a captured step takes the next one) */
    const ck_array *step_ticket;  /* with step_increment, optional: one uint32, zero, on the device,
                                   * that the step's own launch counts its blocks with, so that it
                                   * adds the one itself (no launch of its own for the add); left
                                   * zero after.  One a step array: concurrent steps need their own */
    int decoupled;
    /* SGD: state1 is the momentum buffer (unused when momentum is 0);
     * first: this is its first step (the buffer becomes the gradient) */
    double momentum, dampening;
    int nesterov, first;
} ck_optim_hparams;
/* Adam: state1 = exp_avg, state2 = exp_avg_sq; SGD: state1 = momentum
 * buffers (NULL without momentum), state2 unused (NULL). */
ck_status ck_optim_step(const ck_optim_hparams *h, int n, ck_array *const *params, const ck_array *const *grads,
                        ck_array *const *state1, ck_array *const *state2);

/* The epilogue of a matrix product y = x @ w: y = act(y + bias) in place
 * (y C-contiguous, bias of y's last dimension or NULL), writing the
 * pre-activation into *pre (a new array) when pre is not NULL (what gelu's
 * backward needs; relu's can use y). */
typedef enum ck_act { CK_ACT_NONE, CK_ACT_RELU, CK_ACT_GELU, CK_ACT_GELU_TANH, CK_ACT_COUNT } ck_act;
ck_status ck_bias_act(ck_array *y, const ck_array *bias, ck_act act, ck_array *pre);
/* g * act'(z) from the gradient g and saved, the pre-activation z (or,
 * for relu and none, the output y). */
ck_status ck_bias_act_backward(ck_array *out, const ck_array *g, const ck_array *saved, ck_act act);

/* target.flat[idx[i]] += values[i] for every i, repeated indices adding
 * up (np.add.at on a flat view: the gradient of a gather).  target is
 * C-contiguous, writeable and floating; values has idx's size and is cast
 * to target's dtype; idx is integer, each in [-n, n) (negative ones count
 * from the end): out of range is an IndexError on the CPU, skipped on a
 * GPU (which cannot raise without waiting). */
ck_status ck_scatter_add(ck_array *target, const ck_array *idx, const ck_array *values);

#ifdef __cplusplus
}
#endif
#endif
