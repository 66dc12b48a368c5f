/*
 * elementwise.c - broadcasting, output allocation and casting for the
 * element-wise ops, after their type resolution (src/array/ufunc_types.c);
 * the backend then runs one merged iteration.
 */
#include "ops_internal.h"

#include <stdlib.h>
#include <string.h>

static ck_status ck_check_nonnegative_(const ck_operand *o)
{
    int neg;
    if (!o->array) {
        neg = ck_dtype_get_info(o->scalar.dtype)->kind == CK_KIND_INT && o->scalar.v.i < 0;
    } else {
        if (!ck_dtype_is_signed(o->array->dtype) || o->array->size == 0) return CK_OK;
        ck_scalar v;
        ck_status s = ck_reduce_to_host(CK_REDUCE_MIN, o->array, &v, "power: the smallest integer exponent");
        if (s != CK_OK) return s;
        neg = ck_dtype_is_inexact(v.dtype) ? v.v.f < 0 : v.v.i < 0;
    }
    return neg ? ck_error_set(CK_ERR_VALUE, "Integers to negative integer powers are not allowed.") : CK_OK;
}

static ck_status mixed_devices(ck_device a, ck_device b)
{
    char da[32], db[32];
    ck_device_str(a, da, sizeof da);
    ck_device_str(b, db, sizeof db);
    return ck_error_set(CK_ERR_VALUE, "arrays are on different devices: %s and %s; "
                                      "move one with .to_device() first", da, db);
}

/* What ck_ufunc_apply's steps hand on: the loop (resolve), then where it
 * runs and what it writes (output). */
typedef struct ew_plan {
    ck_dtype loop_in[CK_ITER_MAXOPS], loop_out;
    int const_result;            /* -1: run the loop; 0 or 1: every element's answer, known already */
    ck_device dev;
    int ndim;
    int64_t shape[CK_MAXDIMS];
    ck_array *dst;               /* out, or tmp_out when out's dtype is not the loop's */
    ck_array tmp_out;
    int tmp_out_used;
} ew_plan;

/* The logical ops only look at truth values (NumPy runs them on bool):
 * a weak Python scalar is replaced by its truth, so logical_and(uint8
 * array, 256) is not spoilt by 256 wrapping to 0 in a uint8 loop. */
static void weak_scalars_to_truth(int nin, ck_operand *in)
{
    for (int k = 0; k < nin; k++) {
        if (in[k].array || !in[k].weak) continue;
        const ck_scalar *v = &in[k].scalar;
        int truth;
        switch (ck_dtype_get_info(v->dtype)->kind) {
        case CK_KIND_BOOL: case CK_KIND_INT: truth = v->v.i != 0; break;
        case CK_KIND_UINT: truth = v->v.u != 0; break;
        case CK_KIND_FLOAT: truth = v->v.f != 0; break;
        default: truth = v->v.c.re != 0 || v->v.c.im != 0; break;
        }
        in[k].scalar.dtype = CK_BOOL;
        in[k].scalar.v.i = truth;
    }
}

/* A Python int must fit the integer loop it joins (OverflowError, as
 * NumPy 2), except that a comparison with one out of the loop's range
 * has the same answer for every element (NumPy 2 gives it), and where()
 * casts it as NumPy's where does. */
static ck_status check_python_ints(ck_op op, int nin, const ck_operand *in, int comparison, ew_plan *p)
{
    p->const_result = -1;
    for (int k = 0; k < nin; k++) {
        if (in[k].array || !in[k].weak || !ck_dtype_is_integer(in[k].scalar.dtype) || !ck_dtype_is_integer(p->loop_in[k]) ||
            (ck_op_table[op].rule & CK_R_WHERE))
            continue;
        if (ck_check_pyint_fits(&in[k].scalar, p->loop_in[k]) == CK_OK) continue;
        if (!comparison || nin != 2) return ck_error_status();
        ck_error_clear();
        /* the scalar is above (or below) every value of the loop's dtype */
        int above = in[k].scalar.dtype == CK_UINT64 || in[k].scalar.v.i > 0;
        int lhs_less = k == 1 ? above : !above;   /* lhs < rhs for every element */
        switch (op) {
        case CK_OP_EQUAL: p->const_result = 0; break;
        case CK_OP_NOT_EQUAL: p->const_result = 1; break;
        case CK_OP_LESS: case CK_OP_LESS_EQUAL: p->const_result = lhs_less; break;
        default: p->const_result = !lhs_less; break;
        }
    }
    return CK_OK;
}

/* resolve: the loop's dtypes for the operands (dtype= fixes its output,
 * signature= the types it names), and every typed input's cast to its
 * loop type under casting=. */
static ck_status ew_resolve(ck_op op, int nin, ck_operand *in, const ck_ufunc_opts *o, ew_plan *p)
{
    int logical = (ck_op_table[op].flags & CK_OPF_LOGICAL) != 0;
    int comparison = (ck_op_table[op].flags & CK_OPF_COMPARE) != 0;
    if (logical) weak_scalars_to_truth(nin, in);
    ck_dtype out_dtype = o->out_dtype;
    int sig_inputs = 0;
    for (int k = 0; k < nin; k++) sig_inputs |= o->sig[k] != CK_DTYPE_INVALID;
    if (o->sig[nin] != CK_DTYPE_INVALID && !sig_inputs) out_dtype = o->sig[nin];   /* (None, .., X) is dtype=X */
    ck_status s;
    if (sig_inputs) {
        s = ck_ufunc_resolve_signature(op, nin, in, o->sig, p->loop_in, &p->loop_out);
    } else {
        s = ck_ufunc_resolve(op, nin, in, p->loop_in, &p->loop_out);
        if (out_dtype != CK_DTYPE_INVALID && (s != CK_OK || out_dtype != p->loop_out)) {
            ck_error_clear();
            s = ck_ufunc_resolve_dtype(op, nin, in, out_dtype, o->casting, p->loop_in, &p->loop_out);
        }
    }
    if (s != CK_OK) return s;
    /* the loops resolved without a signature take their inputs safely:
     * only a stricter rule, or the types a signature names, can refuse */
    if ((sig_inputs ? o->casting != CK_CASTING_UNSAFE : o->casting < CK_CASTING_SAFE) &&
        (s = ck_ufunc_check_input_casts(op, nin, in, p->loop_in, o->casting)) != CK_OK)
        return s;
    return check_python_ints(op, nin, in, comparison, p);
}

/* output: the device (the arrays' and out's, all one), the broadcast
 * shape, and the array the loop writes: a new one, out itself, or a
 * temporary of the loop's dtype that is cast into out afterwards. */
static ck_status ew_output(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given, ck_casting casting,
                           ew_plan *p)
{
    /* NumPy checks the cast to out= before the shapes */
    if (out_given && out->dtype != p->loop_out && !ck_dtype_can_cast(p->loop_out, out->dtype, casting))
        return ck_error_set(CK_ERR_CAST_OUTPUT, "Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') "
                            "with casting rule '%s'", ck_op_table[op].name, ck_dtype_get_info(p->loop_out)->name,
                            ck_dtype_get_info(out->dtype)->name, ck_casting_name(casting));
    int have_dev = 0;
    ck_device dev = ck_device_cpu();
    int ndims[CK_ITER_MAXOPS];
    const int64_t *shapes[CK_ITER_MAXOPS];
    int na = 0;
    for (int k = 0; k < nin; k++) {
        const ck_array *a = in[k].array;
        if (!a) continue;
        if (have_dev && !ck_device_equal(dev, ck_array_device(a))) return mixed_devices(dev, ck_array_device(a));
        dev = ck_array_device(a);
        have_dev = 1;
        ndims[na] = a->ndim;
        shapes[na] = a->shape;
        na++;
    }
    if (out_given) {
        if (have_dev && !ck_device_equal(dev, ck_array_device(out))) return mixed_devices(dev, ck_array_device(out));
        dev = ck_array_device(out);
    } else if (!have_dev) {
        dev = ck_device_default();
    }
    p->dev = dev;
    p->ndim = 0;
    if (na == 1) {
        p->ndim = ndims[0];
        memcpy(p->shape, shapes[0], (size_t)p->ndim * sizeof *p->shape);
    } else if (na > 1) {
        ck_status s = ck_broadcast_shapes(na, ndims, shapes, &p->ndim, p->shape);
        if (s != CK_OK) return s;
    }

    /* Integer powers with a negative exponent raise, as NumPy's.  The CPU
     * loop flags it as it goes; a GPU kernel cannot raise, so the exponent
     * is checked here (one small reduction and copy for array exponents). */
    if (op == CK_OP_POWER && dev.type != CK_DEVICE_CPU && ck_dtype_is_integer(p->loop_in[1]) &&
        ck_dtype_is_signed(p->loop_in[1])) {
        ck_status s = ck_check_nonnegative_(&in[1]);
        if (s != CK_OK) return s;
    }

    p->dst = out;
    p->tmp_out_used = 0;
    if (!out_given) return ck_array_empty(out, p->ndim, p->shape, p->loop_out, dev);
    if (out->ndim != p->ndim || memcmp(out->shape, p->shape, (size_t)p->ndim * sizeof *p->shape) != 0) {
        /* out may have the broadcast shape only; smaller is an error */
        int nds[2] = {out->ndim, p->ndim};
        const int64_t *shs[2] = {out->shape, p->shape};
        int bnd;
        int64_t bsh[CK_MAXDIMS];
        if (ck_broadcast_shapes(2, nds, shs, &bnd, bsh) != CK_OK || bnd != out->ndim ||
            memcmp(bsh, out->shape, (size_t)bnd * sizeof *bsh) != 0)
            return ck_error_set(CK_ERR_VALUE, "non-broadcastable output operand with shape %s "
                                "doesn't match the broadcast shape %s",
                                ck_shape_str(out->ndim, out->shape, 0), ck_shape_str(p->ndim, p->shape, 1));
        p->ndim = out->ndim;
        memcpy(p->shape, out->shape, (size_t)p->ndim * sizeof *p->shape);
    }
    if (!(out->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "output array is read-only");
    if (out->dtype != p->loop_out) {
        ck_status s = ck_array_empty(&p->tmp_out, p->ndim, p->shape, p->loop_out, dev);
        if (s != CK_OK) return s;
        p->dst = &p->tmp_out;
        p->tmp_out_used = 1;
    }
    return CK_OK;
}

/* run: the inputs cast where the loop needs another dtype, and copied where
 * one overlaps the output other than exactly; one backend call; the
 * temporary cast into out. */
static ck_status ew_run(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given, ew_plan *p)
{
    ck_array *dst = p->dst;
    ck_status s = CK_OK;
    ck_array casted[CK_ITER_MAXOPS];
    int ncasted = 0;
    _Alignas(16) unsigned char scal[CK_ITER_MAXOPS][16];
    ck_iter_operand ops[CK_ITER_MAXOPS + 1];
    ops[0] = ck_iter_op_of(dst);
    if (p->const_result >= 0) {
        ck_scalar v;
        v.dtype = CK_BOOL;
        v.v.i = p->const_result;
        s = ck_array_fill(dst, &v);
        nin = 0;   /* no inputs to read */
    }
    for (int k = 0; k < nin && s == CK_OK; k++) {
        const ck_array *a = in[k].array;
        if (!a) {
            ck_scalar_store(&in[k].scalar, p->loop_in[k], scal[k]);
            ops[k + 1] = (ck_iter_operand){(char *)scal[k], 0, NULL, NULL};
            continue;
        }
        int overlap = out_given && !p->tmp_out_used && ck_array_may_overlap(a, dst) &&
                      !(a->data == dst->data && a->ndim == dst->ndim &&
                        memcmp(a->strides, dst->strides, (size_t)a->ndim * 8) == 0 &&
                        memcmp(a->shape, dst->shape, (size_t)a->ndim * 8) == 0);
        if (a->dtype != p->loop_in[k] || overlap) {
            s = ck_array_astype(&casted[ncasted], a, p->loop_in[k], 0);
            if (s != CK_OK) break;
            a = &casted[ncasted++];
        }
        ops[k + 1] = ck_iter_op_of(a);
    }
    if (s == CK_OK && p->const_result < 0) {
        ck_ew_desc d;
        d.op = op;
        d.scalar_mask = 0;
        d.dev = p->dev;
        for (int k = 0; k < nin; k++)
            if (!in[k].array) d.scalar_mask |= 1u << (k + 1);
        d.types[0] = dst->dtype;
        for (int k = 0; k < nin; k++) d.types[k + 1] = p->loop_in[k];
        ck_iter_prepare(&d.it, nin + 1, p->ndim, p->shape, ops);
        s = ck_backend_for(p->dev)->elementwise(&d);
    }
    for (int k = 0; k < ncasted; k++) ck_array_release(&casted[k]);
    if (s == CK_OK && p->tmp_out_used) s = ck_array_assign(out, &p->tmp_out);
    if (p->tmp_out_used) ck_array_release(&p->tmp_out);
    if (s != CK_OK && !out_given) ck_array_release(out);
    return s;
}

void ck_ufunc_opts_init(ck_ufunc_opts *o)
{
    o->out_dtype = CK_DTYPE_INVALID;
    for (int k = 0; k <= CK_UFUNC_MAXIN; k++) o->sig[k] = CK_DTYPE_INVALID;
    o->casting = CK_CASTING_SAME_KIND;
}

ck_status ck_ufunc_apply(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given,
                         ck_dtype out_dtype)
{
    ck_ufunc_opts o;
    ck_ufunc_opts_init(&o);
    o.out_dtype = out_dtype;
    return ck_ufunc_apply_opts(op, nin, in, out, out_given, &o);
}

ck_status ck_ufunc_apply_opts(ck_op op, int nin, const ck_operand *in, ck_array *out, int out_given,
                              const ck_ufunc_opts *opts)
{
    const ck_op_info *info = &ck_op_table[op];
    if (nin != info->nin)
        return ck_error_set(CK_ERR_TYPE, "%s() takes %d positional arguments but %d were given",
                            info->name, info->nin, nin);
    /* a copy: resolving may rewrite the weak scalars */
    ck_operand inl[CK_ITER_MAXOPS];
    memcpy(inl, in, (size_t)nin * sizeof *in);
    ew_plan p;
    ck_status s = ew_resolve(op, nin, inl, opts, &p);
    if (s == CK_OK) s = ew_output(op, nin, inl, out, out_given, opts->casting, &p);
    if (s != CK_OK) return s;
    return ew_run(op, nin, inl, out, out_given, &p);
}

ck_status ck_ufunc_call2(ck_op op, const ck_array *a, const ck_array *b, ck_array *out)
{
    ck_operand in[2] = {{a, {0}, 0}, {b, {0}, 0}};
    return ck_ufunc_apply(op, 2, in, out, 0, CK_DTYPE_INVALID);
}
