/*
 * ag_rules.h - what gradient rules are written with: the rule families of
 * the table (src/autograd/rules.c), operands of saved inputs, and small
 * wrappers of the ops' C API.  Every helper returns a ck_status and makes
 * a new array in *out (released by the caller), so a rule is a short chain:
 *
 *     static ck_status sin_backward(ck_ag_node *n, const ck_array *gout, ck_array *gin)
 *     {
 *         ck_array c;
 *         CK_AG_TRY(ck_ag_un(CK_OP_COS, ck_ag_in(n, 0), &c));
 *         ck_status s = ck_ag_mul_conj(&gin[0], &gout[0], &c);
 *         ck_array_release(&c);
 *         return s;
 *     }
 *     const ck_ag_rule ck_ag_rules_mine[] = {
 *         {"sin", sin_backward, CK_AG_SAVE_INPUTS},
 *         {NULL, NULL, 0},
 *     };
 */
#ifndef CK_AG_RULES_H
#define CK_AG_RULES_H

#include "cudakit.h"
#include "cudakit_autograd.h"

typedef ck_status (*ck_ag_backward2_fn)(ck_ag_node *n, ck_ag_node *c, const ck_array *gout, ck_array *gin);

#define CK_AG_TRY(call) do { ck_status ck_ag_s_ = (call); if (ck_ag_s_ != CK_OK) return ck_ag_s_; } while (0)

/* The rule families (each ended by a {NULL} row), listed in rules.c. */
extern const ck_ag_rule ck_ag_rules_elementwise[];
extern const ck_ag_rule ck_ag_rules_reduce[];
extern const ck_ag_rule ck_ag_rules_shape[];
extern const ck_ag_rule ck_ag_rules_linalg[];
extern const ck_ag_rule ck_ag_rules_train[];   /* rules_train.c (trainops) */
extern const ck_ag_rule ck_ag_rules_linear[];  /* rules_linear.c (the fused linear layer) */

/* A fold: where the gradient of a node of rule `rule` goes on, through its
 * input 0, into a node of rule `next` that nothing else feeds, one pass
 * gives the gradients of next's inputs for both (the backward engine asks
 * can(n, c) first, and runs fn(n, c, gout, gin) in place of both rules:
 * gout is n's output gradients, gin receives c's inputs').  The pair is
 * written as one, so a gradient never goes through memory between them:
 * cross-entropy of a softmax (the seed model's Softmax before
 * CrossEntropyLoss) is one row pass instead of two. */
typedef struct ck_ag_fold {
    const char *rule, *next;
    int (*can)(const ck_ag_node *n, const ck_ag_node *c);
    ck_ag_backward2_fn fn;
} ck_ag_fold;
extern const ck_ag_fold ck_ag_folds[];   /* rules_train.c, ended by a {NULL} row */

/* Input i of an element-wise node as an operand: its saved array (the
 * rule's flags say CK_AG_SAVE_INPUTS) or its scalar. */
ck_operand ck_ag_in(const ck_ag_node *n, int i);
/* The saved output of an element-wise node (CK_AG_SAVE_OUTPUT). */
ck_operand ck_ag_out(const ck_ag_node *n);
static inline ck_operand ck_ag_arr(const ck_array *a) { ck_operand o = {.array = a}; return o; }
/* A Python float: yields to the arrays' dtype (NEP 50). */
static inline ck_operand ck_ag_num(double v)
{
    ck_operand o = {.array = NULL, .weak = 1};
    o.scalar.dtype = CK_FLOAT64;
    o.scalar.v.f = v;
    return o;
}

ck_status ck_ag_un(ck_op op, ck_operand a, ck_array *out);
ck_status ck_ag_bin(ck_op op, ck_operand a, ck_operand b, ck_array *out);
/* a * b, a * conj(b) (b's conjugate when complex: PyTorch's convention for
 * the gradients of complex inputs), g * conj(d) for the chain rule. */
ck_status ck_ag_mul_conj(ck_array *out, const ck_array *g, const ck_array *d);
/* g summed over the axes where it was broadcast from shape. */
ck_status ck_ag_sum_to(ck_array *out, const ck_array *g, int ndim, const int64_t *shape);
/* g (reduced over the axes of mask, without keepdims) as a view of the
 * input's shape (broadcast back over those axes). */
ck_status ck_ag_unreduce(ck_array *out, const ck_array *g, uint64_t mask, int keepdims, int ndim, const int64_t *shape);
ck_status ck_ag_zeros(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, ck_device dev);



/* ------------------------------------------------------------ parameters
 * of the rules whose recording is in record.c */

typedef struct ck_ag_reduce_params {
    uint64_t mask;           /* reduced axes of the input */
    int keepdims;
    double scale;            /* 1 / the count of elements reduced into one */
    double ddof;             /* var, std */
} ck_ag_reduce_params;

typedef struct ck_ag_transpose_params {
    int perm[CK_MAXDIMS];    /* output axis i is input axis perm[i] */
} ck_ag_transpose_params;

typedef struct ck_ag_roll_params {
    int n, flat;
    int64_t shifts[CK_MAXDIMS];
    int axes[CK_MAXDIMS];
} ck_ag_roll_params;

typedef struct ck_ag_tri_params {
    int64_t k;
    int upper;
} ck_ag_tri_params;

typedef struct ck_ag_tile_params {
    int nd, repeat;
    int64_t shape[CK_MAXDIMS];
    int64_t factor[CK_MAXDIMS];
} ck_ag_tile_params;

typedef struct ck_ag_pad_params {
    int64_t widths[2 * CK_MAXDIMS];
} ck_ag_pad_params;

/* A view of the input, in elements of a C-contiguous array of its shape. */
typedef struct ck_ag_view_params {
    int64_t offset;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    int64_t strides[CK_MAXDIMS];
} ck_ag_view_params;
#endif
