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

/* a[view] = v: a's old elements get g outside the view, v gets g's view
 * (which the engine sums to v's shape where v was broadcast). */
static ck_status setitem_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_view_params *p = n->params;
    ck_array gc;
    CK_AG_TRY(ck_array_astype(&gc, &gout[0], gout[0].dtype, 0));
    int64_t isz = ck_array_itemsize(&gc), strides[CK_MAXDIMS];
    for (int i = 0; i < p->ndim; i++) strides[i] = p->strides[i] * isz;
    ck_array v;
    ck_array_view(&v, &gc);
    v.data += p->offset * isz;
    ck_array_set_layout(&v, p->ndim, p->shape, strides);
    ck_status s = CK_OK;
    if (ck_ag_needs_grad(n, 1)) s = ck_array_astype(&gin[1], &v, v.dtype, 0);
    if (s == CK_OK && ck_ag_needs_grad(n, 0)) {
        ck_scalar z = {.dtype = CK_FLOAT64};
        s = ck_array_fill(&v, &z);
        if (s == CK_OK) ck_array_view(&gin[0], &gc);
    }
    ck_array_release(&v);
    ck_array_release(&gc);
    return s;
}

static ck_status roll_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_roll_params *p = n->params;
    int64_t back[CK_MAXDIMS];
    for (int i = 0; i < p->n; i++) back[i] = -p->shifts[i];
    return ck_roll(&gin[0], &gout[0], p->n, back, p->flat ? NULL : p->axes);
}

static ck_status tri_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_tri_params *p = n->params;
    return ck_tri_part(&gin[0], &gout[0], p->k, p->upper);
}

/* pad (constant): the gradient is the part of g over the input */
static ck_status pad_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_pad_params *p = n->params;
    const ck_ag_input *in = &n->in[0];
    const ck_array *g = &gout[0];
    ck_array v;
    ck_array_view(&v, g);
    for (int i = 0; i < in->ndim; i++) v.data += p->widths[2 * i] * g->strides[i];
    ck_array_set_layout(&v, in->ndim, in->shape, g->strides);
    gin[0] = v;
    return CK_OK;
}

/* tile / repeat: each output axis split into (count, length) or (length,
 * count), the counts summed away, then the input's shape */
static ck_status tile_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const ck_ag_tile_params *p = n->params;
    int64_t split[CK_MAXDIMS];
    uint64_t mask = 0;
    int k = 0;
    for (int i = 0; i < p->nd; i++) {
        if (p->factor[i] == 1) {
            split[k++] = p->shape[i];
            continue;
        }
        if (k + 2 > CK_MAXDIMS)
            return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "autograd: tile/repeat over more than %d axes", CK_MAXDIMS / 2);
        int first = !p->repeat;   /* tile: the count is the outer part */
        if (first) mask |= 1ull << k;
        split[k++] = first ? p->factor[i] : p->shape[i];
        if (!first) mask |= 1ull << k;
        split[k++] = first ? p->shape[i] : p->factor[i];
    }
    ck_array s, r;
    CK_AG_TRY(ck_array_reshape(&s, &gout[0], k, split, 0));
    ck_status st = ck_reduce(CK_REDUCE_SUM, &s, mask, 0, s.dtype, &r, 0);
    ck_array_release(&s);
    if (st != CK_OK) return st;
    const ck_ag_input *in = &n->in[0];
    st = ck_array_reshape(&gin[0], &r, in->ndim, in->shape, 0);
    ck_array_release(&r);
    return st;
}

const ck_ag_rule ck_ag_rules_shape[] = {
    {"tile", tile_bw, 0, NULL},
    {"repeat", tile_bw, 0, NULL},
    {"roll", roll_bw, 0, NULL},
    {"tril", tri_bw, 0, NULL},
    {"triu", tri_bw, 0, NULL},
    {"pad", pad_bw, 0, NULL},
    {"setitem", setitem_bw, 0, NULL},
    {"reshape", reshape_bw, 0, NULL},
    {"transpose", transpose_bw, 0, NULL},
    {"broadcast_to", broadcast_to_bw, 0, NULL},
    {"astype", copy_bw, 0, NULL},
    {"copy", copy_bw, 0, NULL},
    {"to_device", to_device_bw, 0, NULL},
    {"getitem", view_bw, 0, NULL},
    {"view", view_bw, 0, NULL},
    {NULL, NULL, 0, NULL},
};
