/* The rule table: the families of rows, looked up by name or by op, and
 * the helpers rules are written with (ag_rules.h). */
#include "ag_rules.h"

#include <string.h>

/* Every family of rules, once.  A family of its own adds its array here. */
static const ck_ag_rule *const families[] = {
    ck_ag_rules_elementwise,
    ck_ag_rules_reduce,
    ck_ag_rules_shape,
    ck_ag_rules_linalg,
    ck_ag_rules_train,
    ck_ag_rules_linear,
};

static const ck_ag_rule *by_op_[CK_OP_COUNT];
static int built_;

static void build(void)
{
    for (int op = 0; op < CK_OP_COUNT; op++) by_op_[op] = ck_ag_rule_find(ck_op_table[op].name);
    built_ = 1;
}

const ck_ag_rule *ck_ag_rule_find(const char *name)
{
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const ck_ag_rule *r = families[f]; r->name; r++)
            if (!strcmp(r->name, name)) return r;
    return NULL;
}

const ck_ag_rule *ck_ag_rule_for_op(ck_op op)
{
    if (!built_) build();
    return by_op_[op];
}

/* Rows without a backward, made on demand for the ops that have no rule
 * (their names are the callers' literals, so a small table suffices). */
#define MISSING_MAX 256
static ck_ag_rule missing_[MISSING_MAX];
static int nmissing_;

const ck_ag_rule *ck_ag_rule_missing(const char *name)
{
    for (int i = 0; i < nmissing_; i++)
        if (missing_[i].name == name || !strcmp(missing_[i].name, name)) return &missing_[i];
    if (nmissing_ == MISSING_MAX) return &missing_[MISSING_MAX - 1];
    missing_[nmissing_].name = name;
    missing_[nmissing_].backward = NULL;
    missing_[nmissing_].flags = 0;
    return &missing_[nmissing_++];
}

/* ------------------------------------------------------------ helpers */

ck_operand ck_ag_in(const ck_ag_node *n, int i)
{
    ck_operand o = {.array = NULL};
    if (n->in[i].is_array) {
        o.array = &n->saved[i].arr;
    } else {
        o.scalar = n->in[i].scalar;
        o.weak = n->in[i].weak;
    }
    return o;
}

ck_operand ck_ag_out(const ck_ag_node *n)
{
    ck_operand o = {.array = &n->saved[n->nin].arr};
    return o;
}

ck_status ck_ag_un(ck_op op, ck_operand a, ck_array *out)
{
    return ck_ufunc_apply(op, 1, &a, out, 0, CK_DTYPE_INVALID);
}

ck_status ck_ag_bin(ck_op op, ck_operand a, ck_operand b, ck_array *out)
{
    ck_operand in[2] = {a, b};
    return ck_ufunc_apply(op, 2, in, out, 0, CK_DTYPE_INVALID);
}

ck_status ck_ag_mul_conj(ck_array *out, const ck_array *g, const ck_array *d)
{
    if (!ck_dtype_is_complex(d->dtype)) return ck_ufunc_call2(CK_OP_MULTIPLY, g, d, out);
    ck_array c;
    CK_AG_TRY(ck_ag_un(CK_OP_CONJUGATE, ck_ag_arr(d), &c));
    ck_status s = ck_ufunc_call2(CK_OP_MULTIPLY, g, &c, out);
    ck_array_release(&c);
    return s;
}

ck_status ck_ag_sum_to(ck_array *out, const ck_array *g, int ndim, const int64_t *shape)
{
    if (g->ndim < ndim) return ck_array_broadcast_to(out, g, ndim, shape);
    int lead = g->ndim - ndim;
    uint64_t mask = 0;
    for (int i = 0; i < g->ndim; i++)
        if (i < lead || (shape[i - lead] == 1 && g->shape[i] != 1)) mask |= 1ull << i;
    if (!mask) {
        if (memcmp(g->shape + lead, shape, (size_t)ndim * sizeof *shape))
            return ck_array_broadcast_to(out, g, ndim, shape);
        ck_array_view(out, g);
        return CK_OK;
    }
    ck_array r;
    CK_AG_TRY(ck_reduce(CK_REDUCE_SUM, g, mask, 1, g->dtype, &r, 0));
    ck_status s = ck_array_reshape(out, &r, ndim, shape, 0);
    ck_array_release(&r);
    return s;
}

ck_status ck_ag_unreduce(ck_array *out, const ck_array *g, uint64_t mask, int keepdims, int ndim, const int64_t *shape)
{
    int64_t kshape[CK_MAXDIMS];
    for (int i = 0; i < ndim; i++) kshape[i] = (mask >> i & 1) ? 1 : shape[i];
    ck_array k;
    if (keepdims) ck_array_view(&k, g);
    else CK_AG_TRY(ck_array_reshape(&k, g, ndim, kshape, 0));
    ck_status s = ck_array_broadcast_to(out, &k, ndim, shape);
    ck_array_release(&k);
    return s;
}

ck_status ck_ag_zeros(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, ck_device dev)
{
    return ck_full_scalar(out, ndim, shape, dt, 0.0, dev);
}
