/* Gradient rules of the ops that only relay out elements: reshape,
 * transpose, broadcast_to, and views such as basic indexing. */
#include "ag_rules.h"

#include <string.h>

static ck_status reshape_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_input *in = &n->in[0];
    return ck_array_reshape(&gin[0], &gout[0], in->ndim, in->shape, 0);
}

static ck_status transpose_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_transpose_params *p = n->params;
    int inv[CK_MAXDIMS];
    for (int i = 0; i < gout[0].ndim; i++) inv[p->perm[i]] = i;
    return ck_array_transpose(&gin[0], &gout[0], inv);
}

/* broadcast_to: the engine sums the gradient back to the input's shape */
static ck_status broadcast_to_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    ck_array_view(&gin[0], &gout[0]);
    return CK_OK;
}

/* astype, copy: the engine casts the gradient back to the input's dtype */
static ck_status copy_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    ck_array_view(&gin[0], &gout[0]);
    return CK_OK;
}

static ck_status to_device_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    return ck_array_to_device(&gin[0], &gout[0], n->in[0].dev);
}

/* A view (basic indexing, diagonal...): the gradient is zero outside the
 * elements the view shows.  An axis the view repeats (stride 0) is summed
 * first, so every element is written once. */
static ck_status view_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_view_params *p = n->params;
    const ck_ag_input *in = &n->in[0];
    const ck_array *g = &gout[0];
    uint64_t mask = 0;
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    for (int i = 0; i < p->ndim; i++) {
        shape[i] = p->shape[i];
        if (p->strides[i] == 0 && p->shape[i] > 1) {
            mask |= 1ull << i;
            shape[i] = 1;
        }
    }
    ck_array gs;
    if (mask) CK_AG_TRY(ck_reduce(CK_REDUCE_SUM, g, mask, 1, g->dtype, &gs, 0));
    else ck_array_view(&gs, g);
    ck_array z, v;
    ck_status s = ck_ag_zeros(&z, in->ndim, in->shape, g->dtype, ck_array_device(g));
    if (s == CK_OK) {
        int64_t isz = ck_array_itemsize(&z);
        for (int i = 0; i < p->ndim; i++) strides[i] = p->strides[i] * isz;
        ck_array_view(&v, &z);
        v.data += p->offset * isz;
        ck_array_set_layout(&v, p->ndim, shape, strides);
        s = ck_array_assign(&v, &gs);
        ck_array_release(&v);
        if (s == CK_OK) gin[0] = z;
        else ck_array_release(&z);
    }
    ck_array_release(&gs);
    return s;
}

const ck_ag_rule ck_ag_rules_shape[] = {
    {"reshape", reshape_bw, 0},
    {"transpose", transpose_bw, 0},
    {"broadcast_to", broadcast_to_bw, 0},
    {"astype", copy_bw, 0},
    {"copy", copy_bw, 0},
    {"to_device", to_device_bw, 0},
    {"getitem", view_bw, 0},
    {"view", view_bw, 0},
    {NULL, NULL, 0},
};
