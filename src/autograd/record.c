/* Recording: the node of one op call (include/cudakit_autograd.h). */
#include "ag_rules.h"

#include <math.h>
#include <string.h>

/* Where ck_ag_virtual's fake arrays start: an address no view reaches below. */
#define VIRTUAL_BASE ((uintptr_t)1 << 46)

static int needs(const ck_ag_var *v) { return v && v->requires_grad; }

static int carries(const ck_array *out) { return ck_dtype_is_inexact(out->dtype); }

ck_status ck_ag_record_ufunc(ck_op op, int nin, const ck_operand *in, ck_ag_var *const *vars, const ck_array *out,
                             ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out)) return CK_OK;
    int any = 0;
    for (int i = 0; i < nin; i++) any |= in[i].array && needs(vars[i]);
    if (!any) return CK_OK;
    const ck_ag_rule *r = ck_ag_rule_for_op(op);
    if (!r) r = ck_ag_rule_missing(ck_op_table[op].name);
    int nsaved = (r->flags & (CK_AG_SAVE_INPUTS | CK_AG_SAVE_OUTPUT)) ? nin + 1 : 0;
    ck_ag_node *n = ck_ag_node_new(r, nin, 1, nsaved, 0);
    if (!n) return ck_error_status();
    for (int i = 0; i < nin; i++) {
        if (in[i].array) {
            ck_ag_node_set_input(n, i, needs(vars[i]) ? vars[i] : NULL, in[i].array);
            if (r->flags & CK_AG_SAVE_INPUTS) ck_ag_node_save(n, i, in[i].array);
        } else {
            ck_ag_node_set_scalar(n, i, &in[i].scalar, in[i].weak);
        }
    }
    if (r->flags & CK_AG_SAVE_OUTPUT) ck_ag_node_save(n, nin, out);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

/* A node of one array input and one output, with params copied in. */
static ck_status record1(const char *name, const ck_array *a, ck_ag_var *va, const void *params, size_t psize,
                         int save_input, const ck_array *out, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    const ck_ag_rule *r = ck_ag_rule_find(name);
    if (!r) r = ck_ag_rule_missing(name);
    ck_ag_node *n = ck_ag_node_new(r, 1, 1, save_input, psize);
    if (!n) return ck_error_status();
    if (psize) memcpy(n->params, params, psize);
    ck_ag_node_set_input(n, 0, va, a);
    if (save_input) ck_ag_node_save(n, 0, a);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

ck_status ck_ag_record_reduce(const char *name, const ck_array *a, ck_ag_var *va, uint64_t mask, int keepdims,
                              double ddof, const ck_array *out, ck_ag_var **ov)
{
    ck_ag_reduce_params p = {.mask = mask, .keepdims = keepdims, .scale = 1.0, .ddof = ddof};
    int64_t count = 1;
    for (int i = 0; i < a->ndim; i++)
        if (mask >> i & 1) count *= a->shape[i];
    p.scale = count ? 1.0 / (double)count : NAN;
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    const ck_ag_rule *r = ck_ag_rule_find(name);
    if (!r) r = ck_ag_rule_missing(name);
    int save = (r->flags & (CK_AG_SAVE_INPUTS | CK_AG_SAVE_OUTPUT)) != 0;
    ck_ag_node *n = ck_ag_node_new(r, 1, 1, save ? 2 : 0, sizeof p);
    if (!n) return ck_error_status();
    memcpy(n->params, &p, sizeof p);
    ck_ag_node_set_input(n, 0, va, a);
    if (r->flags & CK_AG_SAVE_INPUTS) ck_ag_node_save(n, 0, a);
    if (r->flags & CK_AG_SAVE_OUTPUT) ck_ag_node_save(n, 1, out);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

ck_status ck_ag_record_reshape(const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov)
{
    return record1("reshape", a, va, NULL, 0, 0, out, ov);
}

ck_status ck_ag_record_copy(const char *name, const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov)
{
    return record1(name, a, va, NULL, 0, 0, out, ov);
}

ck_status ck_ag_record_transpose(const ck_array *a, ck_ag_var *va, const int *perm, const ck_array *out,
                                 ck_ag_var **ov)
{
    ck_ag_transpose_params p;
    for (int i = 0; i < a->ndim; i++) p.perm[i] = perm ? perm[i] : a->ndim - 1 - i;
    if (perm)
        for (int i = 0; i < a->ndim; i++)
            if (p.perm[i] < 0) p.perm[i] += a->ndim;
    return record1("transpose", a, va, &p, sizeof p, 0, out, ov);
}

ck_status ck_ag_record_broadcast(const ck_array *a, ck_ag_var *va, const ck_array *out, ck_ag_var **ov)
{
    return record1("broadcast_to", a, va, NULL, 0, 0, out, ov);
}

ck_status ck_ag_record_view(const char *name, const ck_array *a, ck_ag_var *va, int64_t offset, int ndim,
                            const int64_t *shape, const int64_t *strides, const ck_array *out, ck_ag_var **ov)
{
    ck_ag_view_params p;
    memset(&p, 0, sizeof p);
    p.offset = offset;
    p.ndim = ndim;
    memcpy(p.shape, shape, (size_t)ndim * sizeof *shape);
    memcpy(p.strides, strides, (size_t)ndim * sizeof *strides);
    *ov = NULL;
    if (!carries(out) || !needs(va)) return CK_OK;
    const ck_ag_rule *r = ck_ag_rule_find("view");
    ck_ag_node *n = ck_ag_node_new(r, 1, 1, 0, sizeof p);
    if (!n) return ck_error_status();
    memcpy(n->params, &p, sizeof p);
    ck_ag_node_set_input(n, 0, va, a);
    /* the node prints as the op that made the view */
    n->label = name;
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

/* The fake arrays' memory (above VIRTUAL_BASE) and their buffer, never freed. */
static ck_buffer virtual_buf = {.refcount = (int64_t)1 << 60, .nbytes = (size_t)1 << 46};

void ck_ag_virtual(ck_array *fake, const ck_array *a)
{
    memset(fake, 0, sizeof *fake);
    fake->buf = &virtual_buf;
    fake->data = (char *)VIRTUAL_BASE;
    fake->dtype = a->dtype;
    fake->flags = CK_ARRAY_WRITEABLE;
    int64_t strides[CK_MAXDIMS];
    ck_strides_c(a->ndim, a->shape, ck_array_itemsize(a), strides);
    ck_array_set_layout(fake, a->ndim, a->shape, strides);
}

ck_status ck_ag_record_view_of(const char *name, const ck_array *a, ck_ag_var *va, const ck_array *v,
                               const ck_array *out, ck_ag_var **ov)
{
    int64_t isz = ck_array_itemsize(a), strides[CK_MAXDIMS];
    for (int i = 0; i < v->ndim; i++) strides[i] = v->strides[i] / isz;
    int64_t offset = ((int64_t)((uintptr_t)v->data - VIRTUAL_BASE)) / isz;
    return ck_ag_record_view(name, a, va, offset, v->ndim, v->shape, strides, out, ov);
}

ck_status ck_ag_record_setitem(const ck_array *a, ck_ag_var *va, const ck_array *value, ck_ag_var *vv,
                               const ck_array *v, ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(a) || (!needs(va) && !needs(vv))) return CK_OK;
    ck_ag_view_params p;
    memset(&p, 0, sizeof p);
    int64_t isz = ck_array_itemsize(a);
    p.offset = ((int64_t)((uintptr_t)v->data - VIRTUAL_BASE)) / isz;
    p.ndim = v->ndim;
    memcpy(p.shape, v->shape, (size_t)v->ndim * sizeof *v->shape);
    for (int i = 0; i < v->ndim; i++) p.strides[i] = v->strides[i] / isz;
    ck_ag_node *n = ck_ag_node_new(ck_ag_rule_find("setitem"), 2, 1, 0, sizeof p);
    if (!n) return ck_error_status();
    memcpy(n->params, &p, sizeof p);
    ck_ag_node_set_input(n, 0, needs(va) ? va : NULL, a);
    if (value) {
        ck_ag_node_set_input(n, 1, needs(vv) ? vv : NULL, value);
    } else {
        ck_scalar z = {.dtype = CK_FLOAT64};
        ck_ag_node_set_scalar(n, 1, &z, 1);
    }
    *ov = ck_ag_node_output(n, 0, a);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

ck_status ck_ag_record_roll(const ck_array *a, ck_ag_var *va, int n, const int64_t *shifts, const int *axes,
                            const ck_array *out, ck_ag_var **ov)
{
    ck_ag_roll_params p;
    memset(&p, 0, sizeof p);
    if (n > CK_MAXDIMS) return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "autograd: roll over more than %d axes", CK_MAXDIMS);
    p.n = n;
    p.flat = axes == NULL;
    for (int i = 0; i < n; i++) {
        p.shifts[i] = shifts[i];
        p.axes[i] = axes ? axes[i] : 0;
    }
    return record1("roll", a, va, &p, sizeof p, 0, out, ov);
}

ck_status ck_ag_record_tri(const ck_array *a, ck_ag_var *va, int64_t k, int upper, const ck_array *out, ck_ag_var **ov)
{
    ck_ag_tri_params p = {.k = k, .upper = upper};
    return record1(upper ? "triu" : "tril", a, va, &p, sizeof p, 0, out, ov);
}

ck_status ck_ag_record_pad(const ck_array *a, ck_ag_var *va, const int64_t *widths, const ck_array *out,
                           ck_ag_var **ov)
{
    ck_ag_pad_params p;
    memset(&p, 0, sizeof p);
    memcpy(p.widths, widths, (size_t)(2 * a->ndim) * sizeof *widths);
    return record1("pad", a, va, &p, sizeof p, 0, out, ov);
}

ck_status ck_ag_record_matmul(const ck_array *a, ck_ag_var *va, const ck_array *b, ck_ag_var *vb, const ck_array *out,
                              ck_ag_var **ov)
{
    *ov = NULL;
    if (!carries(out) || (!needs(va) && !needs(vb))) return CK_OK;
    ck_ag_node *n = ck_ag_node_new(ck_ag_rule_find("matmul"), 2, 1, 2, 0);
    if (!n) return ck_error_status();
    ck_ag_node_set_input(n, 0, needs(va) ? va : NULL, a);
    ck_ag_node_set_input(n, 1, needs(vb) ? vb : NULL, b);
    ck_ag_node_save(n, 0, a);
    ck_ag_node_save(n, 1, b);
    *ov = ck_ag_node_output(n, 0, out);
    ck_ag_node_release(n);
    return *ov ? CK_OK : ck_error_status();
}

ck_status ck_ag_record_missing(const char *name, int nin, const ck_array *const *in, ck_ag_var *const *vars, int nout,
                               const ck_array *const *out, ck_ag_var **ov)
{
    int any = 0, carry = 0;
    for (int j = 0; j < nout; j++) {
        ov[j] = NULL;
        carry |= carries(out[j]);
    }
    for (int i = 0; i < nin; i++) any |= needs(vars[i]);
    if (!any || !carry) return CK_OK;
    ck_ag_node *n = ck_ag_node_new(ck_ag_rule_missing(name), nin, nout, 0, 0);
    if (!n) return ck_error_status();
    for (int i = 0; i < nin; i++) ck_ag_node_set_input(n, i, needs(vars[i]) ? vars[i] : NULL, in[i]);
    ck_status s = CK_OK;
    for (int j = 0; j < nout; j++) {
        if (!carries(out[j])) continue;
        ov[j] = ck_ag_node_output(n, j, out[j]);
        if (!ov[j]) s = ck_error_status();
    }
    ck_ag_node_release(n);
    return s;
}
