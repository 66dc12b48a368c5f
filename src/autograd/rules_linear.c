/* The gradient rule of the fused linear layer (include/cudakit_linear.h):
 * one node for y = act(x @ w^T + b), recorded by src/python/linear.c with
 * ck_ag_record_op.  Inputs x, w and b (a scalar placeholder without a
 * bias); saved slots x, w and what the forward kept for the activation's
 * derivative (the output for relu, the pre-activation for gelu).  The
 * backward is ck_linear_backward: on a GPU the weight's product writes the
 * bias's gradient in its epilogue. */
#include "ag_rules.h"
#include "cudakit_linear.h"

static ck_status linear_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_linear_params *p = n->params;
    const ck_array *sv = n->saved[2].arr.buf ? &n->saved[2].arr : NULL;
    return ck_linear_backward(&gout[0], &n->saved[0].arr, &n->saved[1].arr, p->has_bias, p->act, sv,
                              ck_ag_needs_grad(n, 0) ? &gin[0] : NULL, ck_ag_needs_grad(n, 1) ? &gin[1] : NULL,
                              p->has_bias && ck_ag_needs_grad(n, 2) ? &gin[2] : NULL);
}

const ck_ag_rule ck_ag_rules_linear[] = {
    {"linear", linear_bw, 0, NULL},
    {NULL, NULL, 0, NULL},
};

const char *ck_ag_linear_rule_name(int i)
{
    return i >= 0 && i < (int)(sizeof ck_ag_rules_linear / sizeof *ck_ag_rules_linear) ? ck_ag_rules_linear[i].name : NULL;
}
