/* Gradient rules of the reductions (sum, mean).  The gradient of a
 * reduction is the output's, broadcast back over the reduced axes. */
#include "ag_rules.h"

static ck_status sum_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_ag_input *in = &n->in[0];
    return ck_ag_unreduce(&gin[0], &gout[0], p->mask, p->keepdims, in->ndim, in->shape);
}

static ck_status mean_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_reduce_params *p = n->params;
    const ck_ag_input *in = &n->in[0];
    ck_array g;
    CK_AG_TRY(ck_ag_bin(CK_OP_MULTIPLY, ck_ag_arr(&gout[0]), ck_ag_num(p->scale), &g));
    ck_status s = ck_ag_unreduce(&gin[0], &g, p->mask, p->keepdims, in->ndim, in->shape);
    ck_array_release(&g);
    return s;
}

const ck_ag_rule ck_ag_rules_reduce[] = {
    {"sum", sum_bw, 0, NULL},
    {"mean", mean_bw, 0, NULL},
    {NULL, NULL, 0, NULL},
};
