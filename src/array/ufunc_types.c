/*
 * ufunc_types.c - which loop an element-wise op runs for its operands'
 * dtypes: NumPy 2's promotion with NEP 50's weak Python scalars, the op
 * table's type sets and rules, NumPy's linear search for a loop.  Pure
 * functions of dtypes, so the op layer and the code generators (the
 * Python-kernel translator types a + b with the same rules) share them.
 */
#include "cudakit.h"

#include <stdio.h>

/* The category of a dtype for NEP 50's weak scalars: bool < int < float < complex. */
static int category(ck_dtype t)
{
    switch (ck_dtype_get_info(t)->kind) {
    case CK_KIND_BOOL: return 0;
    case CK_KIND_INT: case CK_KIND_UINT: return 1;
    case CK_KIND_FLOAT: return 2;
    default: return 3;
    }
}

static const ck_dtype default_of_category[4] = {CK_BOOL, CK_INT64, CK_FLOAT64, CK_COMPLEX128};

ck_status ck_promote_operands(int n, const ck_operand *in, ck_dtype *result)
{
    int have_strong = 0, weak_cat = -1;
    ck_dtype strong = CK_BOOL;
    ck_dtype strong_list[64];
    int nstrong = 0;
    for (int k = 0; k < n; k++) {
        ck_dtype t = in[k].array ? in[k].array->dtype : in[k].scalar.dtype;
        if (in[k].array || !in[k].weak) {
            strong = have_strong ? ck_dtype_promote(strong, t) : t;
            have_strong = 1;
            if (nstrong < 64) strong_list[nstrong++] = t;
            else strong = ck_dtype_promote(strong, t);
        } else {
            int c = category(t);
            if (c > weak_cat) weak_cat = c;
        }
    }
    if (!have_strong) {
        *result = default_of_category[weak_cat];
        return CK_OK;
    }
    if (n <= 64 && nstrong > 2) strong = ck_dtype_promote_many(nstrong, strong_list);
    ck_dtype r = strong;
    int sc = category(strong);
    if (weak_cat > sc) {
        if (weak_cat == 3 && sc == 2) r = ck_dtype_complex_of(strong == CK_FLOAT64 ? CK_FLOAT64 : CK_FLOAT32);
        else r = default_of_category[weak_cat];
    }
    /* Whether a Python int fits is checked against the loop it is handed
     * to (ck_ufunc_apply), as NumPy does: result_type(uint8, -2) is uint8,
     * hypot(uint8_array, -2) runs in float16 and is fine. */
    *result = r;
    return CK_OK;
}

ck_status ck_check_pyint_fits(const ck_scalar *s, ck_dtype t)
{
    int64_t lo, hi;
    uint64_t uhi = 0;
    switch (t) {
    case CK_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case CK_UINT8: lo = 0; hi = UINT8_MAX; break;
    case CK_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case CK_UINT16: lo = 0; hi = UINT16_MAX; break;
    case CK_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case CK_UINT32: lo = 0; hi = UINT32_MAX; break;
    case CK_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    case CK_UINT64: lo = 0; hi = -1; uhi = UINT64_MAX; break;
    default: return CK_OK;
    }
    int ok;
    if (s->dtype == CK_UINT64) ok = (uhi != 0) || s->v.u <= (uint64_t)hi;
    else ok = s->v.i >= lo && (uhi != 0 || s->v.i <= hi);
    if (ok) return CK_OK;
    if (s->dtype == CK_UINT64)
        return ck_error_set(CK_ERR_OVERFLOW, "Python integer %llu out of bounds for %s",
                            (unsigned long long)s->v.u, ck_dtype_get_info(t)->name);
    return ck_error_set(CK_ERR_OVERFLOW, "Python integer %lld out of bounds for %s",
                        (long long)s->v.i, ck_dtype_get_info(t)->name);
}

/* The loop dtype c's output for op. */
static ck_dtype loop_out_of(const ck_op_info *info, ck_dtype c)
{
    return (info->rule & CK_R_OUT_BOOL) ? CK_BOOL : (info->rule & CK_R_OUT_REAL) ? ck_dtype_real(c) : c;
}

static ck_dtype operand_dtype(const ck_operand *o) { return o->array ? o->array->dtype : o->scalar.dtype; }

static ck_status no_loop(ck_op op, int nin, const ck_operand *in)
{
    char buf[256];
    size_t pos = 0;
    for (int k = 0; k < nin; k++) {
        ck_dtype t = operand_dtype(&in[k]);
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%sdtype('%s')", k ? ", " : "",
                                ck_dtype_get_info(t)->name);
    }
    /* NumPy says TypeError or its _UFuncNoLoopError (a TypeError) by the ufunc */
    return ck_error_set(CK_ERR_NO_LOOP,
                        "ufunc '%s' not supported for the input types (%s), and the inputs could not be "
                        "safely coerced to any supported types according to the casting rule ''safe''",
                        ck_op_table[op].name, buf);
}

ck_status ck_ufunc_resolve(ck_op op, int nin, const ck_operand *in, ck_dtype *loop_in, ck_dtype *loop_out)
{
    const ck_op_info *info = &ck_op_table[op];
    int first = (info->rule & CK_R_WHERE) ? 1 : 0;
    ck_dtype d;
    ck_status s = ck_promote_operands(nin - first, in + first, &d);
    if (s != CK_OK) return s;
    if ((info->rule & CK_R_NO_BOOL) && d == CK_BOOL) {
        if (op == CK_OP_SUBTRACT)
            return ck_error_set(CK_ERR_TYPE, "numpy boolean subtract, the `-` operator, is not supported, "
                                             "use the bitwise_xor, the `^` operator, or the logical_xor function instead.");
        if (op == CK_OP_NEGATIVE)
            return ck_error_set(CK_ERR_TYPE, "The numpy boolean negative, the `-` operator, is not supported, "
                                             "use the `~` operator or the logical_not function instead.");
        return no_loop(op, nin, in);
    }
    if ((info->rule & CK_R_INT_DOUBLE) && !ck_dtype_is_inexact(d)) d = CK_FLOAT64;
    ck_dtype t = CK_DTYPE_INVALID;
    if (info->types & (1u << d)) {
        t = d;
    } else {
        /* No loop of the promoted dtype: NumPy's linear search takes the
         * first loop every input casts to safely, one input at a time
         * (hypot(int8, uint8) is float16, not float32 as int16 would
         * give).  A weak Python scalar counts as the promoted dtype. */
        for (int c = 0; c < CK_NTYPES && t == CK_DTYPE_INVALID; c++) {
            if (!(info->types & (1u << c))) continue;
            int ok = 1;
            for (int k = first; k < nin && ok; k++) {
                ck_dtype ik = in[k].array ? in[k].array->dtype : in[k].weak ? d : in[k].scalar.dtype;
                ok = ck_dtype_can_cast_safe(ik, (ck_dtype)c);
            }
            if (ok) t = (ck_dtype)c;
        }
    }
    if (t == CK_DTYPE_INVALID) return no_loop(op, nin, in);
    for (int k = 0; k < nin; k++) loop_in[k] = t;
    if (first) loop_in[0] = CK_BOOL;
    *loop_out = loop_out_of(info, t);
    return CK_OK;
}

/* NumPy's error for input k of op that does not cast to the loop's dtype. */
static ck_status cast_input_error(ck_op op, int nin, int k, ck_dtype from, ck_dtype to, ck_casting casting)
{
    char num[16] = "";
    if (nin > 1) snprintf(num, sizeof num, "%d ", k);
    return ck_error_set(CK_ERR_CAST_INPUT, "Cannot cast ufunc '%s' input %sfrom dtype('%s') to dtype('%s') "
                        "with casting rule '%s'", ck_op_table[op].name, num, ck_dtype_get_info(from)->name,
                        ck_dtype_get_info(to)->name, ck_casting_name(casting));
}

ck_status ck_ufunc_check_input_casts(ck_op op, int nin, const ck_operand *in, const ck_dtype *loop_in,
                                     ck_casting casting)
{
    for (int k = 0; k < nin; k++) {
        ck_dtype t = operand_dtype(&in[k]);
        if (!in[k].array && in[k].weak && t != CK_BOOL) {   /* NumPy types a Python bool as bool here */
            /* NumPy's 'equiv' (not 'no') refuses a Python number whose
             * own dtype (int64, float64, complex128) is not the loop's */
            int c = category(t);
            if (casting == CK_CASTING_EQUIV && default_of_category[c] != loop_in[k])
                return ck_error_set(CK_ERR_TYPE, "cannot cast Python %s to %s under the casting rule 'equiv'",
                                    c == 2 ? "float" : c == 3 ? "complex" : "int", ck_dtype_get_info(loop_in[k])->name);
            continue;
        }
        if (!ck_dtype_can_cast(t, loop_in[k], casting)) return cast_input_error(op, nin, k, t, loop_in[k], casting);
    }
    return CK_OK;
}

/* dtype=: NumPy fixes the output dtype and takes the loop with that
 * output; every input must cast to it under casting (a weak Python scalar
 * by its kind, short of 'unsafe': an int joins any integer loop, a float
 * no integer loop).  No such loop is a TypeError, as in NumPy. */
ck_status ck_ufunc_resolve_dtype(ck_op op, int nin, const ck_operand *in, ck_dtype out_dtype, ck_casting casting,
                                 ck_dtype *loop_in, ck_dtype *loop_out)
{
    const ck_op_info *info = &ck_op_table[op];
    int first = (info->rule & CK_R_WHERE) ? 1 : 0;
    int found = -1, bad_k = -1;   /* the first loop of that output, its first input that does not cast */
    for (int c = 0; c < CK_NTYPES; c++) {
        if (!(info->types & (1u << c))) continue;
        ck_dtype o = loop_out_of(info, (ck_dtype)c);
        if (o != out_dtype) continue;
        int ok = 1, k;
        for (k = first; k < nin && ok; k++) {
            if (!in[k].array && in[k].weak)
                ok = casting == CK_CASTING_UNSAFE || category((ck_dtype)c) >= category(in[k].scalar.dtype);
            else if ((info->rule & CK_R_OUT_REAL) && ck_dtype_is_complex((ck_dtype)c) && casting == CK_CASTING_SAME_KIND)
                /* abs(complex128, dtype=float32) is refused by NumPy: only
                 * a safe cast reaches the complex loops here */
                ok = ck_dtype_can_cast_safe(operand_dtype(&in[k]), (ck_dtype)c);
            else ok = ck_dtype_can_cast(operand_dtype(&in[k]), (ck_dtype)c, casting);
        }
        if (!ok) {
            if (found < 0) { found = c; bad_k = k - 1; }
            continue;
        }
        for (int j = 0; j < nin; j++) loop_in[j] = (ck_dtype)c;
        if (first) loop_in[0] = CK_BOOL;
        *loop_out = o;
        return CK_OK;
    }
    if (found < 0)
        return ck_error_set(CK_ERR_NO_LOOP, "ufunc '%s' did not contain a loop with signature matching types "
                            "(dtype=%s)", info->name, ck_dtype_get_info(out_dtype)->name);
    return cast_input_error(op, nin, bad_k, operand_dtype(&in[bad_k]), (ck_dtype)found, casting);
}

/* signature=: the loop whose types are the ones named; an input left free
 * must cast to it safely (NumPy's search), a weak Python scalar by its
 * kind.  Whether the named inputs cast is the caller's check, under the
 * call's casting. */
ck_status ck_ufunc_resolve_signature(ck_op op, int nin, const ck_operand *in, const ck_dtype *sig,
                                     ck_dtype *loop_in, ck_dtype *loop_out)
{
    const ck_op_info *info = &ck_op_table[op];
    int first = (info->rule & CK_R_WHERE) ? 1 : 0;
    for (int c = 0; c < CK_NTYPES; c++) {
        if (!(info->types & (1u << c))) continue;
        ck_dtype o = loop_out_of(info, (ck_dtype)c);
        if (sig[nin] != CK_DTYPE_INVALID && sig[nin] != o) continue;
        int ok = 1;
        for (int k = 0; k < nin && ok; k++) {
            ck_dtype want = k < first ? CK_BOOL : (ck_dtype)c;
            if (sig[k] != CK_DTYPE_INVALID) ok = sig[k] == want;
            else if (k < first) ok = 1;
            else if (!in[k].array && in[k].weak) ok = category((ck_dtype)c) >= category(in[k].scalar.dtype);
            else ok = ck_dtype_can_cast_safe(operand_dtype(&in[k]), (ck_dtype)c);
        }
        if (!ok) continue;
        for (int j = 0; j < nin; j++) loop_in[j] = (ck_dtype)c;
        if (first) loop_in[0] = CK_BOOL;
        *loop_out = o;
        return CK_OK;
    }
    return ck_error_set(CK_ERR_NO_LOOP, "No loop matching the specified signature and casting was found for "
                        "ufunc %s", info->name);
}

