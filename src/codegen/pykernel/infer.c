/* Typing: the type of every variable and expression of a function for one
 * list of argument types.  A variable's type is the unification of every
 * value stored in it (NumPy's promotion for scalars: `s = 0` then
 * `s += x[i]` with float32 x makes s float64), so the body is walked again
 * until no variable's type changes; a last walk then requires every type
 * to be known.  Expressions follow NumPy's rules (NEP 50: Python numbers
 * are weak), Python's for the rest (`/` of integers is float64, `and`
 * returns an operand); literals are folded, so shapes such as
 * `(N * 2, 16)` are known when translating. */
#include "pyk_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const pyk_type *expr(pyk_ctx *c, pyk_node *e);
static void block(pyk_ctx *c, pyk_node *body);
static const pyk_type *binary(pyk_ctx *c, pyk_node *at, int op, const pyk_type *a, const pyk_type *b);

/* ------------------------------------------------------------ variables */

pyk_var *pyk_var_find(pyk_func *f, const char *name)
{
    for (int i = 0; i < f->nvars; i++)
        if (!strcmp(f->vars[i].name, name)) return &f->vars[i];
    return NULL;
}

static pyk_var *var_add(pyk_ctx *c, pyk_func *f, const char *name)
{
    pyk_var *v = pyk_var_find(f, name);
    if (v) return v;
    if (f->nvars == f->cvars) {
        int nc = f->cvars ? f->cvars * 2 : 16;
        pyk_var *nv = pyk_alloc(c, (size_t)nc * sizeof *nv);
        if (f->nvars) memcpy(nv, f->vars, (size_t)f->nvars * sizeof *nv);
        f->vars = nv;
        f->cvars = nc;
    }
    v = &f->vars[f->nvars++];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->param = -1;
    v->type = pyk_t_unknown();
    return v;
}

/* Store a value of type t in variable name (at node n). */
static void var_store(pyk_ctx *c, const pyk_node *n, const char *name, const pyk_type *t)
{
    if (!t || t->k == T_UNKNOWN) {
        var_add(c, c->cur, name);
        return;
    }
    if (t->k == T_NONE || t->k == T_MODULE || t->k == T_FUNC || t->k == T_DTYPE || t->k == T_DIM3 ||
        t->k == T_DEVFUNC || t->k == T_STR || t->k == T_RANGE || t->k == T_ITER || t->k == T_SLICE)
        pyk_fail(c, n, CK_ERR_TYPE, "cannot store a %s in the variable '%s' (a kernel's variables hold numbers, "
                 "arrays and tuples)", pyk_t_str(c, t), name);
    pyk_var *v = var_add(c, c->cur, name);
    const pyk_type *u = pyk_t_unify(c, v->type, t);
    if (!u)
        pyk_fail(c, n, CK_ERR_TYPE, "the variable '%s' holds a %s here and a %s elsewhere; a variable keeps one "
                 "type in a kernel", name, pyk_t_str(c, t), pyk_t_str(c, v->type));
    if (u != v->type) {
        if (v->param >= 0 && v->type->k == T_ARRAY)
            pyk_fail(c, n, CK_ERR_TYPE, "the array argument '%s' cannot be rebound to a %s", name, pyk_t_str(c, t));
        v->type = u;
        c->changed = 1;
    }
}

pyk_global *pyk_global_find(pyk_ctx *c, const char *name)
{
    int d = c->cur ? c->cur->def_index : 0;
    for (int i = 0; i < c->nglobals[d]; i++)
        if (!strcmp(c->globals[d][i].name, name)) return &c->globals[d][i];
    return NULL;
}

/* The type of a builtin row. */
static const pyk_type *builtin_type(pyk_ctx *c, const pyk_builtin *b)
{
    int ix = pyk_builtin_index(b);
    switch (b->bkind) {
    case PB_MODULE: return pyk_t_simple(c, T_MODULE, ix);
    case PB_FUNC: return pyk_t_simple(c, T_FUNC, ix);
    case PB_CONST: return pyk_t_float_lit(c, b->value);
    case PB_DTYPE: return pyk_t_dtype(c, b->dtype);
    case PB_DIM3:
        if (b->id == PF_LANEID) return pyk_t_scalar(c, CK_INT32);
        if (b->id == PF_WARPSIZE) return pyk_t_int_lit(c, 32);
        return pyk_t_simple(c, T_DIM3, ix);
    }
    return pyk_t_unknown();
}

/* ------------------------------------------------------------- literals */

static int is_int_lit(const pyk_type *t)
{
    return t->k == T_SCALAR && t->literal && (ck_dtype_is_integer(t->dtype) || t->dtype == CK_BOOL);
}

int64_t pyk_const_int(pyk_ctx *c, const pyk_node *e, const char *what)
{
    const pyk_type *t = e->type ? e->type : expr(c, (pyk_node *)e);
    if (!is_int_lit(t))
        pyk_fail(c, e, CK_ERR_TYPE, "%s must be an integer known when the kernel is compiled (a literal, a global "
                 "constant or arithmetic of them), not a %s", what, pyk_t_str(c, t));
    return t->lit;
}

/* --------------------------------------------------------- NumPy's rules */

/* The loop dtype of a ufunc op on scalar operands, as ck.<op> would pick. */
static ck_dtype resolve(pyk_ctx *c, const pyk_node *at, int op, int nin, const pyk_type **in, ck_dtype *out)
{
    ck_operand ops[CK_UFUNC_MAXIN];
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < nin; k++) {
        memset(&ops[k], 0, sizeof ops[k]);
        ops[k].scalar.dtype = in[k]->dtype;
        ops[k].weak = in[k]->weak;
        if (in[k]->literal && ck_dtype_is_integer(in[k]->dtype)) ops[k].scalar.v.i = in[k]->lit;
    }
    ck_dtype loop_in[CK_UFUNC_MAXIN + 1], loop_out;
    ck_status s = ck_ufunc_resolve((ck_op)op, nin, ops, loop_in, &loop_out);
    if (s != CK_OK) pyk_fail(c, at, CK_ERR_TYPE, "%s", ck_error_message());
    for (int k = 0; k < nin; k++)
        if (in[k]->weak && in[k]->literal && ck_dtype_is_integer(in[k]->dtype) && ck_dtype_is_integer(loop_in[k]) &&
            ck_check_pyint_fits(&ops[k].scalar, loop_in[k]) != CK_OK)
            pyk_fail(c, at, CK_ERR_OVERFLOW, "%s", ck_error_message());
    *out = loop_out;
    return loop_in[ck_op_table[op].rule & CK_R_WHERE ? 1 : 0];
}

/* Python operators -> the op table's ops. */
typedef struct { const char *py; int op; } op_map;
static const op_map binops_[] = {
    {"add", CK_OP_ADD}, {"sub", CK_OP_SUBTRACT}, {"mult", CK_OP_MULTIPLY}, {"div", CK_OP_TRUE_DIVIDE},
    {"floordiv", CK_OP_FLOOR_DIVIDE}, {"mod", CK_OP_REMAINDER}, {"pow", CK_OP_POWER}, {"lshift", CK_OP_LEFT_SHIFT},
    {"rshift", CK_OP_RIGHT_SHIFT}, {"bitor", CK_OP_BITWISE_OR}, {"bitxor", CK_OP_BITWISE_XOR},
    {"bitand", CK_OP_BITWISE_AND}, {"eq", CK_OP_EQUAL}, {"noteq", CK_OP_NOT_EQUAL}, {"lt", CK_OP_LESS},
    {"lte", CK_OP_LESS_EQUAL}, {"gt", CK_OP_GREATER}, {"gte", CK_OP_GREATER_EQUAL},
};

int pyk_binop_of(const char *py);
int pyk_binop_of(const char *py)
{
    for (size_t i = 0; i < sizeof binops_ / sizeof binops_[0]; i++)
        if (!strcmp(binops_[i].py, py)) return binops_[i].op;
    return -1;
}

/* Fold an integer (or bool) operation on two literals; 0 when it cannot be. */
static int fold_int(int op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case CK_OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); return 1;
    case CK_OP_SUBTRACT: *r = (int64_t)((uint64_t)a - (uint64_t)b); return 1;
    case CK_OP_MULTIPLY: *r = (int64_t)((uint64_t)a * (uint64_t)b); return 1;
    case CK_OP_FLOOR_DIVIDE:
        if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
        *r = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
        return 1;
    case CK_OP_REMAINDER:
        if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
        *r = a % b;
        if (*r != 0 && ((*r < 0) != (b < 0))) *r += b;
        return 1;
    case CK_OP_POWER: {
        if (b < 0 || b > 64) return 0;
        int64_t p = 1;
        for (int64_t i = 0; i < b; i++) p = (int64_t)((uint64_t)p * (uint64_t)a);
        *r = p;
        return 1;
    }
    case CK_OP_LEFT_SHIFT: if (b < 0 || b > 63) return 0; *r = (int64_t)((uint64_t)a << b); return 1;
    case CK_OP_RIGHT_SHIFT: if (b < 0 || b > 63) return 0; *r = a >> b; return 1;
    case CK_OP_BITWISE_AND: *r = a & b; return 1;
    case CK_OP_BITWISE_OR: *r = a | b; return 1;
    case CK_OP_BITWISE_XOR: *r = a ^ b; return 1;
    default: return 0;
    }
}

static const pyk_type *fold(pyk_ctx *c, int op, const pyk_type *a, const pyk_type *b)
{
    if (!a->literal || !b->literal || !a->weak || !b->weak) return NULL;
    int ai = a->dtype == CK_INT64 || a->dtype == CK_BOOL, bi = b->dtype == CK_INT64 || b->dtype == CK_BOOL;
    if (ai && bi) {
        int64_t r;
        if (!fold_int(op, a->lit, b->lit, &r)) return NULL;
        if (a->dtype == CK_BOOL && b->dtype == CK_BOOL &&
            (op == CK_OP_BITWISE_AND || op == CK_OP_BITWISE_OR || op == CK_OP_BITWISE_XOR))
            return pyk_t_bool_lit(c, (int)r);
        return pyk_t_int_lit(c, r);
    }
    if (a->dtype == CK_COMPLEX128 || b->dtype == CK_COMPLEX128) return NULL;
    double x = a->dtype == CK_FLOAT64 ? a->flit : (double)a->lit, y = b->dtype == CK_FLOAT64 ? b->flit : (double)b->lit;
    switch (op) {
    case CK_OP_ADD: return pyk_t_float_lit(c, x + y);
    case CK_OP_SUBTRACT: return pyk_t_float_lit(c, x - y);
    case CK_OP_MULTIPLY: return pyk_t_float_lit(c, x * y);
    case CK_OP_TRUE_DIVIDE: return y != 0 ? pyk_t_float_lit(c, x / y) : NULL;
    default: return NULL;
    }
}

static const pyk_type *need_scalar(pyk_ctx *c, const pyk_node *at, const pyk_type *t, const char *what)
{
    if (t->k != T_SCALAR) {
        if (t->k == T_ARRAY)
            pyk_fail(c, at, CK_ERR_TYPE, "%s of an array: a kernel works on elements (index the array), "
                     "array expressions are not supported", what);
        pyk_fail(c, at, CK_ERR_TYPE, "%s needs a number, not a %s", what, pyk_t_str(c, t));
    }
    return t;
}

static int known(const pyk_type *t) { return t && t->k != T_UNKNOWN; }

/* A binary op on two scalar types; the node's loop gets the loop dtype. */
const pyk_type *pyk_binary(pyk_ctx *c, pyk_node *at, int op, const pyk_type *a, const pyk_type *b)
{
    return binary(c, at, op, a, b);
}

static const pyk_type *binary(pyk_ctx *c, pyk_node *at, int op, const pyk_type *a, const pyk_type *b)
{
    if (!known(a) || !known(b)) return pyk_t_unknown();
    need_scalar(c, at, a, "arithmetic");
    need_scalar(c, at, b, "arithmetic");
    const pyk_type *f = fold(c, op, a, b);
    if (f) {
        at->loop = f->dtype;
        return f;
    }
    const pyk_type *in[2] = {a, b};
    ck_dtype out;
    at->loop = resolve(c, at, op, 2, in, &out);
    return pyk_t_scalar(c, out);
}

/* ------------------------------------------------------------ calls */

static const pyk_type *arg_type(pyk_ctx *c, pyk_node *call, int i)
{
    pyk_node *args = pyk_list(c, call, 1, PK_ARGS);
    return i < args->n ? expr(c, args->v[i]) : NULL;
}

static int nargs_of(pyk_ctx *c, pyk_node *call) { return pyk_list(c, call, 1, PK_ARGS)->n; }

/* The keyword argument name of a call, or NULL. */
static pyk_node *kwarg(pyk_ctx *c, pyk_node *call, const char *name)
{
    pyk_node *kw = pyk_kid(call, 2);
    if (!kw || kw->kind != PK_KWARGS) return NULL;
    for (int i = 0; i < kw->n; i++) {
        pyk_node *k = kw->v[i];
        if (k->kind == PK_KW && !strcmp(pyk_sym(c, k, 0), name)) return pyk_kid(k, 1);
    }
    return NULL;
}

static void check_kwargs(pyk_ctx *c, pyk_node *call, const char *fname, const char *const *allowed)
{
    pyk_node *kw = pyk_kid(call, 2);
    if (!kw || kw->kind != PK_KWARGS) return;
    for (int i = 0; i < kw->n; i++) {
        const char *k = pyk_sym(c, kw->v[i], 0);
        int ok = 0;
        for (int j = 0; allowed && allowed[j]; j++) ok |= !strcmp(allowed[j], k);
        if (!ok) pyk_fail(c, kw->v[i], CK_ERR_TYPE, "%s() got an unexpected keyword argument '%s'", fname, k);
    }
}

static void arity(pyk_ctx *c, pyk_node *call, const char *fname, int lo, int hi)
{
    int n = nargs_of(c, call);
    if (n < lo || n > hi) {
        if (lo == hi)
            pyk_fail(c, call, CK_ERR_TYPE, "%s() takes %d argument%s (%d given)", fname, lo, lo == 1 ? "" : "s", n);
        pyk_fail(c, call, CK_ERR_TYPE, "%s() takes %d to %d arguments (%d given)", fname, lo, hi, n);
    }
}

/* The dtype named by a dtype= argument (float32, np.float32, 'float32' as a string is not accepted). */
static ck_dtype dtype_arg(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *t = expr(c, e);
    if (t->k != T_DTYPE)
        pyk_fail(c, e, CK_ERR_TYPE, "dtype must be a type such as float32 or np.float32, not a %s", pyk_t_str(c, t));
    return t->dtype;
}

/* shared.array / local.array: shape (an int or a tuple of ints known now) and dtype. */
static const pyk_type *array_decl(pyk_ctx *c, pyk_node *call, int space, const char *fname)
{
    static const char *const kws[] = {"shape", "dtype", NULL};
    check_kwargs(c, call, fname, kws);
    pyk_node *args = pyk_list(c, call, 1, PK_ARGS);
    pyk_node *shape = args->n > 0 ? args->v[0] : kwarg(c, call, "shape");
    pyk_node *dt = args->n > 1 ? args->v[1] : kwarg(c, call, "dtype");
    if (!shape || !dt) pyk_fail(c, call, CK_ERR_TYPE, "%s(shape, dtype) needs a shape and a dtype", fname);
    ck_dtype d = dtype_arg(c, dt);
    const pyk_type *st = expr(c, shape);
    int ndim;
    int64_t total = 1;
    if (st->k == T_TUPLE) {
        ndim = st->n;
        for (int i = 0; i < st->n; i++) {
            if (!is_int_lit(st->elts[i]))
                pyk_fail(c, shape, CK_ERR_TYPE, "the shape of %s must be known when compiling (integer literals "
                         "or global constants)", fname);
            if (st->elts[i]->lit < 0 || (space != PYK_SHARED && st->elts[i]->lit == 0))
                pyk_fail(c, shape, CK_ERR_VALUE, "%s: dimension %d is %lld", fname, i, (long long)st->elts[i]->lit);
            total *= st->elts[i]->lit;
        }
    } else {
        ndim = 1;
        total = pyk_const_int(c, shape, "the shape");
        if (total < 0 || (space != PYK_SHARED && total == 0))
            pyk_fail(c, shape, CK_ERR_VALUE, "%s: the size %lld is not valid", fname, (long long)total);
    }
    if (ndim < 1 || ndim > 8) pyk_fail(c, shape, CK_ERR_VALUE, "%s: %d dimensions (1 to 8 are supported)", fname, ndim);
    int64_t bytes = total * ck_dtype_get_info(d)->itemsize;
    if (space == PYK_LOCAL && bytes > 512 * 1024)
        pyk_fail(c, call, CK_ERR_VALUE, "local.array of %lld bytes exceeds the 512 KiB a thread may have", (long long)bytes);
    if (space == PYK_SHARED && bytes > 227 * 1024)
        pyk_fail(c, call, CK_ERR_VALUE, "shared.array of %lld bytes exceeds the 227 KiB a block may have", (long long)bytes);
    if (space == PYK_SHARED && total == 0 && ndim != 1)
        pyk_fail(c, call, CK_ERR_VALUE, "a dynamic shared array (shape 0) is one-dimensional");
    return pyk_t_array(c, d, ndim, 'C', space, 0);
}

/* The element type of an array an atomic works on, the index checked. */
static const pyk_type *atomic_target(pyk_ctx *c, pyk_node *call, const char *fname)
{
    const pyk_type *a = arg_type(c, call, 0), *ix = arg_type(c, call, 1);
    if (!known(a) || !known(ix)) return NULL;
    if (a->k != T_ARRAY) pyk_fail(c, call, CK_ERR_TYPE, "%s: the first argument must be an array, not a %s", fname, pyk_t_str(c, a));
    if (a->readonly) pyk_fail(c, call, CK_ERR_TYPE, "%s on a read-only array", fname);
    int nix = ix->k == T_TUPLE ? ix->n : 1;
    if (nix != a->ndim)
        pyk_fail(c, call, CK_ERR_TYPE, "%s: a %d-d array needs %d indices, got %d", fname, a->ndim, a->ndim, nix);
    for (int i = 0; i < nix; i++) {
        const pyk_type *t = ix->k == T_TUPLE ? ix->elts[i] : ix;
        if (t->k != T_SCALAR || !(ck_dtype_is_integer(t->dtype) || t->dtype == CK_BOOL))
            pyk_fail(c, call, CK_ERR_TYPE, "%s: indices must be integers, not %s", fname, pyk_t_str(c, t));
    }
    return pyk_t_scalar(c, a->dtype);
}

static const pyk_type *call_builtin(pyk_ctx *c, pyk_node *call, const pyk_builtin *b)
{
    const char *fname = b->name;
    int n = nargs_of(c, call);
    switch (b->id) {
    case PF_UFUNC: {
        int nin = ck_op_table[b->op].nin;
        arity(c, call, fname, nin, nin);
        check_kwargs(c, call, fname, NULL);
        const pyk_type *in[3];
        for (int k = 0; k < nin; k++) {
            in[k] = arg_type(c, call, k);
            if (!known(in[k])) return pyk_t_unknown();
            need_scalar(c, call, in[k], fname);
        }
        ck_dtype out;
        call->loop = resolve(c, call, b->op, nin, in, &out);
        return pyk_t_scalar(c, out);
    }
    case PF_MATH: case PF_MATH_LOG: case PF_MATH_PRED: case PF_MATH_INT: {
        int nin = b->id == PF_MATH_LOG ? 1 : ck_op_table[b->op].nin;
        arity(c, call, fname, nin, b->id == PF_MATH_LOG ? 2 : nin);
        check_kwargs(c, call, fname, NULL);
        int cm = !strncmp(fname, "cmath.", 6);
        ck_dtype loop = CK_FLOAT32;
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
            /* float32 stays float32 (as Numba types math on float32), the rest is double */
            ck_dtype d = t->weak ? (t->dtype == CK_COMPLEX128 ? CK_COMPLEX128 : CK_FLOAT64) : t->dtype;
            ck_dtype want = ck_dtype_is_complex(d) ? d : d == CK_FLOAT32 || d == CK_FLOAT16 ? CK_FLOAT32 : CK_FLOAT64;
            if (ck_dtype_is_complex(d) && !cm && b->id != PF_MATH_PRED)
                pyk_fail(c, call, CK_ERR_TYPE, "%s() of a complex number: use cmath.%s", fname, fname + 5);
            if (k == 0) loop = want;
            else loop = ck_dtype_promote(loop, want);
        }
        if (cm) loop = ck_dtype_is_complex(loop) ? loop : loop == CK_FLOAT32 ? CK_COMPLEX64 : CK_COMPLEX128;
        call->loop = loop;
        if (b->id == PF_MATH_PRED) return pyk_t_scalar(c, CK_BOOL);
        if (b->id == PF_MATH_INT) return pyk_t_scalar(c, CK_INT64);
        return pyk_t_scalar(c, loop);
    }
    case PF_MATH_LIBM: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, fname);
        if (!strcmp(fname, "cmath.phase")) {
            call->loop = t->dtype == CK_COMPLEX64 || t->dtype == CK_FLOAT32 ? CK_FLOAT32 : CK_FLOAT64;
            return pyk_t_scalar(c, (ck_dtype)call->loop);
        }
        if (ck_dtype_is_complex(t->dtype)) pyk_fail(c, call, CK_ERR_TYPE, "%s() of a complex number", fname);
        call->loop = !t->weak && (t->dtype == CK_FLOAT32 || t->dtype == CK_FLOAT16) ? CK_FLOAT32 : CK_FLOAT64;
        return pyk_t_scalar(c, (ck_dtype)call->loop);
    }
    case PF_ABS: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, "abs()");
        if (t->literal && t->weak && t->dtype == CK_INT64) return pyk_t_int_lit(c, t->lit < 0 ? -t->lit : t->lit);
        const pyk_type *in[1] = {t};
        ck_dtype out;
        call->loop = resolve(c, call, CK_OP_ABSOLUTE, 1, in, &out);
        return pyk_t_scalar(c, out);
    }
    case PF_MIN: case PF_MAX: {
        if (n < 1) pyk_fail(c, call, CK_ERR_TYPE, "%s expected at least 1 argument, got 0", fname);
        const pyk_type *acc = NULL;
        int lits = 1;
        int64_t best = 0;
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            if (n == 1 && t->k == T_TUPLE) {   /* min(tuple) */
                for (int j = 0; j < t->n; j++) acc = acc ? pyk_t_scalar(c, pyk_t_promote(acc, t->elts[j])) : t->elts[j];
                call->tag = 1;
                return pyk_t_strong(c, acc);
            }
            need_scalar(c, call, t, fname);
            if (!is_int_lit(t)) lits = 0;
            else if (k == 0 || (b->id == PF_MIN ? t->lit < best : t->lit > best)) best = t->lit;
            acc = acc ? (acc->weak && t->weak && acc->dtype == t->dtype ? acc : pyk_t_scalar(c, pyk_t_promote(acc, t))) : t;
        }
        call->tag = 0;
        if (lits) return pyk_t_int_lit(c, best);
        return pyk_t_strong(c, acc);
    }
    case PF_POW: {
        arity(c, call, fname, 2, 2);
        return binary(c, call, CK_OP_POWER, arg_type(c, call, 0), arg_type(c, call, 1));
    }
    case PF_ROUND: {
        arity(c, call, fname, 1, 2);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, "round()");
        if (n == 2) {
            pyk_const_int(c, pyk_list(c, call, 1, PK_ARGS)->v[1], "round()'s ndigits");
            return pyk_t_strong(c, t->weak ? pyk_t_scalar(c, CK_FLOAT64) : t);
        }
        return pyk_t_scalar(c, CK_INT64);   /* Python's round(x) is an int */
    }
    case PF_LEN: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        if (t->k == T_TUPLE) return pyk_t_int_lit(c, t->n);
        if (t->k != T_ARRAY || t->ndim == 0) pyk_fail(c, call, CK_ERR_TYPE, "len() of a %s", pyk_t_str(c, t));
        return pyk_t_scalar(c, CK_INT64);
    }
    case PF_RANGE: {
        arity(c, call, fname, 1, 3);
        check_kwargs(c, call, fname, NULL);
        const pyk_type *acc = NULL;
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            if (t->k != T_SCALAR || !(ck_dtype_is_integer(t->dtype) || t->dtype == CK_BOOL))
                pyk_fail(c, call, CK_ERR_TYPE, "range() needs integers, not a %s", pyk_t_str(c, t));
            acc = acc ? pyk_t_scalar(c, pyk_t_promote(acc, t)) : t;
        }
        if (n == 3 && is_int_lit(arg_type(c, call, 2)) && arg_type(c, call, 2)->lit == 0)
            pyk_fail(c, call, CK_ERR_VALUE, "range() arg 3 must not be zero");
        call->loop = pyk_t_strong(c, acc)->dtype;   /* the loop variable's dtype */
        return pyk_t_simple(c, T_RANGE, 0);
    }
    case PF_ENUMERATE: case PF_ZIP: {
        if (b->id == PF_ENUMERATE) arity(c, call, fname, 1, 2);
        if (n < 1) pyk_fail(c, call, CK_ERR_TYPE, "zip() of nothing");
        const pyk_type *e[8];
        int m = b->id == PF_ENUMERATE ? 1 : n;
        if (m > 8) pyk_fail(c, call, CK_ERR_NOT_IMPLEMENTED, "zip() of more than 8 sequences");
        for (int k = 0; k < m; k++) {
            e[k] = arg_type(c, call, k);
            if (!known(e[k])) return pyk_t_unknown();
            if (e[k]->k != T_ARRAY && e[k]->k != T_TUPLE)
                pyk_fail(c, call, CK_ERR_TYPE, "%s() of a %s (arrays and tuples are)", fname, pyk_t_str(c, e[k]));
        }
        if (b->id == PF_ENUMERATE && n == 2) pyk_const_int(c, pyk_list(c, call, 1, PK_ARGS)->v[1], "enumerate()'s start");
        return pyk_t_iter(c, b->id == PF_ZIP, m, e);
    }
    case PF_PRINT:
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (known(t) && t->k != T_SCALAR && t->k != T_STR && t->k != T_NONE)
                pyk_fail(c, call, CK_ERR_TYPE, "print() in a kernel prints numbers and strings, not a %s", pyk_t_str(c, t));
        }
        return pyk_t_none();
    case PF_CAST: {
        arity(c, call, fname, 0, 1);
        if (n == 0) return b->dtype == CK_BOOL ? pyk_t_bool_lit(c, 0) : pyk_t_scalar(c, b->dtype);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, fname);
        if (ck_dtype_is_complex(t->dtype) && !ck_dtype_is_complex(b->dtype))
            pyk_fail(c, call, CK_ERR_TYPE, "cannot convert a complex number to %s (take .real)", fname);
        if (is_int_lit(t) && ck_dtype_is_integer(b->dtype)) {
            /* int(5) and np.int64(5) stay known; a narrower dtype is a value of it */
            if (b->dtype == CK_INT64 && !strcmp(fname, "int")) return t;
        }
        return pyk_t_scalar(c, b->dtype);
    }
    case PF_COMPLEX: {
        arity(c, call, fname, 1, 2);
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, "complex()");
        }
        return pyk_t_scalar(c, CK_COMPLEX128);
    }
    case PF_DIVMOD: {
        arity(c, call, fname, 2, 2);
        const pyk_type *q = binary(c, call, CK_OP_FLOOR_DIVIDE, arg_type(c, call, 0), arg_type(c, call, 1));
        if (!known(q)) return q;
        const pyk_type *e[2] = {pyk_t_strong(c, q), pyk_t_strong(c, q)};
        return pyk_t_tuple(c, 2, e);
    }
    case PF_GRID: case PF_GRIDSIZE: {
        arity(c, call, fname, 1, 1);
        int64_t nd = pyk_const_int(c, pyk_list(c, call, 1, PK_ARGS)->v[0], "the argument of grid() and gridsize()");
        if (nd < 1 || nd > 3) pyk_fail(c, call, CK_ERR_VALUE, "%s(%lld): the argument can only be 1, 2 or 3", fname, (long long)nd);
        call->tag = (int)nd;
        if (nd == 1) return pyk_t_scalar(c, CK_INT64);
        const pyk_type *e[3] = {pyk_t_scalar(c, CK_INT64), pyk_t_scalar(c, CK_INT64), pyk_t_scalar(c, CK_INT64)};
        return pyk_t_tuple(c, (int)nd, e);
    }
    case PF_SYNCTHREADS: case PF_SYNCWARP: case PF_THREADFENCE: case PF_THREADFENCE_BLOCK:
    case PF_THREADFENCE_SYSTEM:
        arity(c, call, fname, 0, b->id == PF_SYNCWARP ? 1 : 0);
        if (b->id == PF_SYNCTHREADS || b->id == PF_SYNCWARP) c->uses_barrier = 1;
        return pyk_t_none();
    case PF_SYNCTHREADS_COUNT: case PF_SYNCTHREADS_AND: case PF_SYNCTHREADS_OR: {
        arity(c, call, fname, 1, 1);
        c->uses_barrier = 1;
        const pyk_type *t = arg_type(c, call, 0);
        if (known(t)) need_scalar(c, call, t, fname);
        return pyk_t_scalar(c, CK_INT32);
    }
    case PF_SHARED_ARRAY: case PF_LOCAL_ARRAY:
        return array_decl(c, call, b->id == PF_SHARED_ARRAY ? PYK_SHARED : PYK_LOCAL, fname);
    case PF_CONST_ARRAY_LIKE: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        if (t->k != T_ARRAY || t->space != PYK_CONST)
            pyk_fail(c, call, CK_ERR_TYPE, "const.array_like() takes a global NumPy array (frozen when compiling)");
        return t;
    }
    case PF_ATOMIC: {
        int cas0 = b->op == PYK_AT_CAS0, nargs = b->op == PYK_AT_CAS ? 4 : 3;
        arity(c, call, fname, nargs, nargs);
        const pyk_type *el = NULL;
        if (cas0) {     /* compare_and_swap(ary, old, val): the first element of a 1-d array */
            const pyk_type *a = arg_type(c, call, 0);
            if (known(a)) {
                if (a->k != T_ARRAY || a->ndim != 1)
                    pyk_fail(c, call, CK_ERR_TYPE, "%s: the first argument must be a 1-d array, not a %s", fname,
                             pyk_t_str(c, a));
                if (a->readonly) pyk_fail(c, call, CK_ERR_TYPE, "%s on a read-only array", fname);
                el = pyk_t_scalar(c, a->dtype);
            }
        } else {
            el = atomic_target(c, call, fname);
        }
        for (int k = cas0 ? 1 : 2; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
        }
        if (!el) return pyk_t_unknown();
        ck_dtype d = el->dtype;
        int isint = ck_dtype_is_integer(d), isfl = d == CK_FLOAT32 || d == CK_FLOAT64;
        int ok;
        switch (b->op) {
        case PYK_AT_ADD: case PYK_AT_SUB: case PYK_AT_EXCH: case PYK_AT_MAX: case PYK_AT_MIN:
            ok = (isint && ck_dtype_get_info(d)->itemsize >= 4) || isfl;
            break;
        case PYK_AT_NANMAX: case PYK_AT_NANMIN: ok = isfl || (isint && ck_dtype_get_info(d)->itemsize >= 4); break;
        case PYK_AT_INC: case PYK_AT_DEC: ok = d == CK_UINT32 || d == CK_UINT64; break;
        case PYK_AT_AND: case PYK_AT_OR: case PYK_AT_XOR: ok = isint && ck_dtype_get_info(d)->itemsize >= 4; break;
        case PYK_AT_CAS: case PYK_AT_CAS0: ok = isint && ck_dtype_get_info(d)->itemsize >= 4; break;
        default: ok = 0;
        }
        if (!ok) pyk_fail(c, call, CK_ERR_TYPE, "%s() is not supported for %s arrays", fname, ck_dtype_get_info(d)->name);
        return el;
    }
    case PF_WARP_VOTE: {
        arity(c, call, fname, 2, 2);
        for (int k = 0; k < 2; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (known(t)) need_scalar(c, call, t, fname);
        }
        c->uses_barrier = 1;
        return pyk_t_scalar(c, b->op == 3 ? CK_UINT32 : CK_BOOL);
    }
    case PF_SHFL: {
        arity(c, call, fname, 3, 4);
        const pyk_type *v = arg_type(c, call, 1);
        for (int k = 0; k < n; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
        }
        c->uses_barrier = 1;
        if (ck_dtype_is_complex(v->dtype)) pyk_fail(c, call, CK_ERR_TYPE, "%s() of a complex value", fname);
        return pyk_t_strong(c, v);
    }
    case PF_MATCH_ANY: case PF_MATCH_ALL: {
        arity(c, call, fname, 2, 2);
        c->uses_barrier = 1;
        for (int k = 0; k < 2; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
        }
        if (b->id == PF_MATCH_ANY) return pyk_t_scalar(c, CK_UINT32);
        const pyk_type *e[2] = {pyk_t_scalar(c, CK_UINT32), pyk_t_scalar(c, CK_BOOL)};
        return pyk_t_tuple(c, 2, e);
    }
    case PF_ACTIVEMASK: case PF_LANEMASK_LT:
        arity(c, call, fname, 0, 0);
        if (b->id == PF_ACTIVEMASK) c->uses_barrier = 1;
        return pyk_t_scalar(c, CK_UINT32);
    case PF_BITOP: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, fname);
        ck_dtype d = pyk_t_strong(c, t)->dtype;
        if (!ck_dtype_is_integer(d)) pyk_fail(c, call, CK_ERR_TYPE, "%s() of a %s (integers only)", fname, pyk_t_str(c, t));
        call->tag = ck_dtype_get_info(d)->itemsize > 4;
        if (b->op == 1) return pyk_t_scalar(c, call->tag ? CK_UINT64 : CK_UINT32);   /* brev */
        return pyk_t_scalar(c, CK_INT32);
    }
    case PF_FMA: {
        arity(c, call, fname, 3, 3);
        const pyk_type *acc = NULL;
        for (int k = 0; k < 3; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
            acc = acc ? pyk_t_scalar(c, pyk_t_promote(acc, t)) : t;
        }
        ck_dtype d = pyk_t_strong(c, acc)->dtype;
        if (d != CK_FLOAT32 && d != CK_FLOAT64) d = CK_FLOAT64;
        call->loop = d;
        return pyk_t_scalar(c, d);
    }
    case PF_CBRT: {
        arity(c, call, fname, 1, 1);
        const pyk_type *t = arg_type(c, call, 0);
        if (!known(t)) return pyk_t_unknown();
        need_scalar(c, call, t, fname);
        call->loop = !t->weak && t->dtype == CK_FLOAT32 ? CK_FLOAT32 : CK_FLOAT64;
        return pyk_t_scalar(c, (ck_dtype)call->loop);
    }
    case PF_SELP: {
        arity(c, call, fname, 3, 3);
        const pyk_type *a = arg_type(c, call, 1), *bb = arg_type(c, call, 2), *p = arg_type(c, call, 0);
        if (!known(a) || !known(bb) || !known(p)) return pyk_t_unknown();
        need_scalar(c, call, a, fname);
        need_scalar(c, call, bb, fname);
        return pyk_t_scalar(c, pyk_t_promote(a, bb));
    }
    case PF_HALF: {
        int nin = b->op == -2 ? 3 : ck_op_table[b->op].nin;
        arity(c, call, fname, nin, nin);
        for (int k = 0; k < nin; k++) {
            const pyk_type *t = arg_type(c, call, k);
            if (!known(t)) return pyk_t_unknown();
            need_scalar(c, call, t, fname);
        }
        if (b->op >= 0 && (ck_op_table[b->op].rule & CK_R_OUT_BOOL)) return pyk_t_scalar(c, CK_BOOL);
        return pyk_t_scalar(c, CK_FLOAT16);
    }
    case PF_CG_THIS_GRID:
        arity(c, call, fname, 0, 0);
        c->uses_barrier = 1;
        return pyk_t_simple(c, T_FUNC, pyk_builtin_index(b));   /* the grid group: its .sync() */
    case PF_RANDOM: {
        /* op: 0..3 the draws, 4 xoroshiro128p_next, 5 xoroshiro128p_jump, 6 init_xoroshiro128p_state */
        int n = b->op == 6 ? 3 : 2;
        arity(c, call, fname, n, n);
        const pyk_type *st = arg_type(c, call, 0), *ix = arg_type(c, call, 1), *seed = n == 3 ? arg_type(c, call, 2) : NULL;
        if (!known(st) || !known(ix) || (seed && !known(seed))) return pyk_t_unknown();
        if (st->k != T_ARRAY || st->ndim != 2 || st->dtype != CK_UINT64)
            pyk_fail(c, call, CK_ERR_TYPE, "%s(states, index): states must be the (n, 2) uint64 array of "
                     "create_xoroshiro128p_states, not %s", fname, pyk_t_str(c, st));
        if (st->readonly)
            pyk_fail(c, call, CK_ERR_TYPE, "%s(states, index) advances the state: states cannot be a read-only array",
                     fname);
        need_scalar(c, call, ix, fname);
        ck_dtype id = pyk_t_strong(c, ix)->dtype;
        if (!ck_dtype_is_integer(id) && id != CK_BOOL)
            pyk_fail(c, call, CK_ERR_TYPE, "%s(states, index): index must be an integer, not %s", fname,
                     pyk_t_str(c, ix));
        if (seed) {
            need_scalar(c, call, seed, fname);
            if (ck_dtype_is_complex(pyk_t_strong(c, seed)->dtype))
                pyk_fail(c, call, CK_ERR_TYPE, "%s(states, index, seed): seed must be a real number, not %s", fname,
                         pyk_t_str(c, seed));
        }
        c->uses_random = 1;
        static const ck_dtype result[] = {CK_FLOAT32, CK_FLOAT64, CK_FLOAT32, CK_FLOAT64, CK_UINT64};
        return b->op < 5 ? pyk_t_scalar(c, result[b->op]) : pyk_t_none();
    }
    default:
        pyk_fail(c, call, CK_ERR_NOT_IMPLEMENTED, "%s() is not supported in kernels", fname);
    }
}

pyk_func *pyk_func_for(pyk_ctx *c, int di, int nargs, const pyk_type **args, const pyk_node *at)
{
    pyk_node *def = c->defs[di];
    pyk_node *params = pyk_list(c, def, 1, PK_PARAMS);
    const char *name = pyk_sym(c, def, 0);
    if (nargs != params->n)
        pyk_fail(c, at, CK_ERR_TYPE, "%s() takes %d positional argument%s but %d were given", name, params->n,
                 params->n == 1 ? "" : "s", nargs);
    const pyk_type *strong[CK_MAX_KERNEL_PARAMS];
    if (nargs > CK_MAX_KERNEL_PARAMS) pyk_fail(c, at, CK_ERR_NOT_IMPLEMENTED, "%s() has too many parameters", name);
    for (int i = 0; i < nargs; i++) strong[i] = pyk_t_strong(c, args[i]);
    for (int i = 0; i < c->nfuncs; i++) {
        pyk_func *f = c->funcs[i];
        if (f->def_index != di || f->nparams != nargs || f->is_kernel != (di == 0 && !c->opt->device_function))
            continue;
        int same = 1;
        for (int k = 0; k < nargs && same; k++) same = f->ptypes[k] == strong[k];
        if (same) return f;
    }
    pyk_func *f = pyk_alloc(c, sizeof *f);
    f->def = def;
    f->def_index = di;
    f->name = name;
    f->nparams = nargs;
    f->ptypes = pyk_alloc(c, (size_t)(nargs ? nargs : 1) * sizeof *f->ptypes);
    memcpy(f->ptypes, strong, (size_t)nargs * sizeof *strong);
    f->is_kernel = di == 0 && !c->opt->device_function;
    snprintf(f->cname, sizeof f->cname, "%s%s_%d", f->is_kernel ? "ck_pyk_kernel_" : "ck_pyk_fn_", name, c->nfuncs);
    if (c->nfuncs == c->cfuncs) {
        int nc = c->cfuncs ? c->cfuncs * 2 : 8;
        pyk_func **v = pyk_alloc(c, (size_t)nc * sizeof *v);
        if (c->nfuncs) memcpy(v, c->funcs, (size_t)c->nfuncs * sizeof *v);
        c->funcs = v;
        c->cfuncs = nc;
    }
    c->funcs[c->nfuncs++] = f;
    pyk_infer_func(c, f);
    return f;
}

static const pyk_type *call(pyk_ctx *c, pyk_node *e)
{
    pyk_node *fn = pyk_kid(e, 0);
    /* methods of values: x.conjugate(), g.sync() */
    if (fn->kind == PK_ATTRIBUTE) {
        const pyk_type *owner = expr(c, pyk_kid(fn, 0));
        const char *attr = pyk_sym(c, fn, 1);
        if (owner->k == T_SCALAR && !strcmp(attr, "conjugate")) {
            arity(c, e, "conjugate", 0, 0);
            fn->type = owner;
            e->tag = -1;
            return pyk_t_strong(c, owner);
        }
        if (owner->k == T_FUNC && pyk_builtin_at(owner->entry)->id == PF_CG_THIS_GRID && !strcmp(attr, "sync")) {
            arity(c, e, "sync", 0, 0);
            fn->type = owner;
            e->tag = -2;
            return pyk_t_none();
        }
    }
    const pyk_type *ft = expr(c, fn);
    if (!known(ft)) return pyk_t_unknown();
    if (ft->k == T_FUNC) return call_builtin(c, e, pyk_builtin_at(ft->entry));
    if (ft->k == T_DTYPE) {
        pyk_builtin cast = {ck_dtype_get_info(ft->dtype)->name, PB_DTYPE, PF_CAST, -1, 0, ft->dtype};
        return call_builtin(c, e, &cast);
    }
    if (ft->k == T_DEVFUNC) {
        pyk_node *args = pyk_list(c, e, 1, PK_ARGS);
        pyk_node *kw = pyk_kid(e, 2);
        if (kw && kw->kind == PK_KWARGS && kw->n)
            pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "keyword arguments to device functions are not supported");
        const pyk_type *at[CK_MAX_KERNEL_PARAMS];
        if (args->n > CK_MAX_KERNEL_PARAMS) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "too many arguments");
        for (int i = 0; i < args->n; i++) {
            at[i] = expr(c, args->v[i]);
            if (!known(at[i])) return pyk_t_unknown();
            if (at[i]->k != T_SCALAR && at[i]->k != T_ARRAY && at[i]->k != T_TUPLE)
                pyk_fail(c, args->v[i], CK_ERR_TYPE, "a device function takes numbers, arrays and tuples, not a %s",
                         pyk_t_str(c, at[i]));
        }
        pyk_func *saved = c->cur;
        pyk_func *f = pyk_func_for(c, ft->entry, args->n, at, e);
        c->cur = saved;
        e->tag = -1;
        for (int i = 0; i < c->nfuncs; i++)
            if (c->funcs[i] == f) e->tag = i;
        if (!f->ret) return pyk_t_unknown();   /* recursion still being typed */
        return f->ret;
    }
    pyk_fail(c, e, CK_ERR_TYPE, "a %s is not callable in a kernel", pyk_t_str(c, ft));
}

/* ------------------------------------------------------------ indexing */

/* The type of a[index] for an array a; *nints counts integer indices. */
static const pyk_type *index_array(pyk_ctx *c, pyk_node *at, const pyk_type *a, pyk_node *ix)
{
    int nitems = ix->kind == PK_TUPLE ? ix->n : 1;
    int ints = 0, slices = 0;
    int prefix_ints = 1, full_after = 1;
    for (int i = 0; i < nitems; i++) {
        pyk_node *it = ix->kind == PK_TUPLE ? ix->v[i] : ix;
        if (it->kind == PK_SLICE) {
            slices++;
            prefix_ints = 0;
            for (int k = 0; k < 3; k++) {
                pyk_node *b = pyk_kid(it, k);
                if (!b) continue;
                const pyk_type *bt = expr(c, b);
                if (bt->k == T_NONE) continue;
                if (!known(bt)) return pyk_t_unknown();
                full_after = 0;
                if (bt->k != T_SCALAR || !(ck_dtype_is_integer(bt->dtype) || bt->dtype == CK_BOOL))
                    pyk_fail(c, it, CK_ERR_TYPE, "slice bounds must be integers, not %s", pyk_t_str(c, bt));
            }
            it->type = pyk_t_simple(c, T_SLICE, 0);
            continue;
        }
        const pyk_type *t = expr(c, it);
        if (!known(t)) return pyk_t_unknown();
        if (t->k != T_SCALAR || !(ck_dtype_is_integer(t->dtype) || t->dtype == CK_BOOL)) {
            if (t->k == T_SCALAR && ck_dtype_is_inexact(t->dtype))
                pyk_fail(c, it, CK_ERR_TYPE, "array indices must be integers, not %s", pyk_t_str(c, t));
            if (t->k == T_ARRAY)
                pyk_fail(c, it, CK_ERR_NOT_IMPLEMENTED, "indexing with an array (advanced indexing) is not supported in "
                         "kernels: index element by element");
            if (t->k == T_TUPLE)
                pyk_fail(c, it, CK_ERR_TYPE, "a nested tuple is not an index");
            pyk_fail(c, it, CK_ERR_TYPE, "array indices must be integers, not a %s", pyk_t_str(c, t));
        }
        if (!prefix_ints) full_after = 0;
        ints++;
    }
    if (ints + slices > a->ndim)
        pyk_fail(c, at, CK_ERR_TYPE, "too many indices for a %dd array: %d were given", a->ndim, ints + slices);
    int left = a->ndim - ints;
    if (left == 0) return pyk_t_scalar(c, a->dtype);
    char layout = a->layout == 'C' && (slices == 0 || full_after) ? 'C' : 'A';
    if (a->layout == 'F' && slices == 0) layout = 'A';
    return pyk_t_array(c, a->dtype, left, layout, a->space, a->readonly);
}

static const pyk_type *subscript(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *v = expr(c, pyk_kid(e, 0));
    pyk_node *ix = pyk_kid(e, 1);
    if (!known(v)) return pyk_t_unknown();
    if (v->k == T_ARRAY) return index_array(c, e, v, ix);
    if (v->k == T_TUPLE) {
        if (ix->kind == PK_SLICE) {
            int64_t b[3] = {0, v->n, 1};
            for (int k = 0; k < 3; k++) {
                pyk_node *x = pyk_kid(ix, k);
                if (x && expr(c, x)->k != T_NONE) b[k] = pyk_const_int(c, x, "a tuple slice bound");
            }
            if (b[2] != 1) pyk_fail(c, ix, CK_ERR_NOT_IMPLEMENTED, "tuple slices with a step");
            if (b[0] < 0) b[0] += v->n;
            if (b[1] < 0) b[1] += v->n;
            if (b[0] < 0) b[0] = 0;
            if (b[1] > v->n) b[1] = v->n;
            int m = b[1] > b[0] ? (int)(b[1] - b[0]) : 0;
            e->tag = (int)b[0];
            ix->type = pyk_t_simple(c, T_SLICE, 0);
            return pyk_t_tuple(c, m, v->elts + b[0]);
        }
        int64_t i = pyk_const_int(c, ix, "a tuple index");
        if (i < 0) i += v->n;
        if (i < 0 || i >= v->n) pyk_fail(c, ix, CK_ERR_INDEX, "tuple index out of range");
        e->tag = (int)i;
        return v->elts[i];
    }
    pyk_fail(c, e, CK_ERR_TYPE, "a %s is not subscriptable", pyk_t_str(c, v));
}

static const pyk_type *attribute(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *v = expr(c, pyk_kid(e, 0));
    const char *attr = pyk_sym(c, e, 1);
    if (!known(v)) return pyk_t_unknown();
    switch (v->k) {
    case T_MODULE: {
        const pyk_builtin *ns = pyk_builtin_at(v->entry), *m = pyk_builtin_member(ns, attr);
        if (!m) {
            const char *shown = !strncmp(ns->name, "numpy", 5) ? "np" : ns->name;
            pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "%s.%s is not supported in kernels", shown, attr);
        }
        return builtin_type(c, m);
    }
    case T_DIM3:
        if (!strcmp(attr, "x") || !strcmp(attr, "y") || !strcmp(attr, "z")) return pyk_t_scalar(c, CK_INT32);
        pyk_fail(c, e, CK_ERR_TYPE, "%s has attributes x, y and z, not '%s'", pyk_builtin_at(v->entry)->name, attr);
    case T_ARRAY:
        if (!strcmp(attr, "shape") || !strcmp(attr, "strides")) {
            const pyk_type *el[32];
            for (int i = 0; i < v->ndim; i++) el[i] = pyk_t_scalar(c, CK_INT64);
            return pyk_t_tuple(c, v->ndim, el);
        }
        if (!strcmp(attr, "size")) return pyk_t_scalar(c, CK_INT64);
        if (!strcmp(attr, "ndim")) return pyk_t_int_lit(c, v->ndim);
        if (!strcmp(attr, "itemsize")) return pyk_t_int_lit(c, ck_dtype_get_info(v->dtype)->itemsize);
        if (!strcmp(attr, "dtype")) return pyk_t_dtype(c, v->dtype);
        pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "the array attribute '%s' is not supported in kernels (shape, strides, "
                 "size, ndim, itemsize and dtype are)", attr);
    case T_SCALAR:
        if (!strcmp(attr, "real") || !strcmp(attr, "imag")) {
            if (v->literal && v->weak) return pyk_t_float_lit(c, !strcmp(attr, "real") ? v->flit : v->flit_im);
            return pyk_t_scalar(c, ck_dtype_real(pyk_t_strong(c, v)->dtype));
        }
        pyk_fail(c, e, CK_ERR_TYPE, "a %s has no attribute '%s'", pyk_t_str(c, v), attr);
    default:
        pyk_fail(c, e, CK_ERR_TYPE, "a %s has no attribute '%s'", pyk_t_str(c, v), attr);
    }
}

/* ----------------------------------------------------------- expressions */

static const pyk_type *truth_type(pyk_ctx *c, pyk_node *at, const pyk_type *t)
{
    if (known(t) && t->k != T_SCALAR && t->k != T_NONE)
        pyk_fail(c, at, CK_ERR_TYPE, "the truth of a %s is not defined in a kernel", pyk_t_str(c, t));
    return t;
}

static const pyk_type *const_node(pyk_ctx *c, pyk_node *e)
{
    const char *k = pyk_sym(c, e, 0);
    pyk_node *v = pyk_kid(e, 1);
    if (!strcmp(k, "int")) {
        if (!v || v->atom != PA_INT) pyk_fail(c, e, CK_ERR_VALUE, "malformed integer constant");
        if (v->big) pyk_fail(c, e, CK_ERR_OVERFLOW, "the integer %s does not fit int64", v->s);
        return pyk_t_int_lit(c, v->i);
    }
    if (!strcmp(k, "float")) return pyk_t_float_lit(c, v->atom == PA_INT ? (double)v->i : v->f);
    if (!strcmp(k, "complex")) {
        pyk_node *im = pyk_kid(e, 2);
        return pyk_t_complex_lit(c, v->atom == PA_INT ? (double)v->i : v->f, im->atom == PA_INT ? (double)im->i : im->f);
    }
    if (!strcmp(k, "bool")) return pyk_t_bool_lit(c, (int)v->i);
    if (!strcmp(k, "none")) return pyk_t_none();
    if (!strcmp(k, "str")) return pyk_t_simple(c, T_STR, 0);
    pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "a %s constant is not supported in kernels", k);
}

static const pyk_type *name(pyk_ctx *c, pyk_node *e)
{
    const char *id = pyk_sym(c, e, 0);
    pyk_var *v = pyk_var_find(c->cur, id);
    if (v) return v->type;
    pyk_global *g = pyk_global_find(c, id);
    if (g) {
        if (!g->type) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "'%s' is a %s, which a kernel cannot use", id,
                               pyk_kid(g->node, 2) && pyk_kid(g->node, 2)->s ? pyk_kid(g->node, 2)->s : "Python object");
        return g->type;
    }
    const pyk_builtin *b = pyk_builtin_find(id);
    if (b && (b->bkind == PB_FUNC || b->bkind == PB_DTYPE) && !strchr(id, '.')) return builtin_type(c, b);
    if (c->strict) pyk_fail(c, e, CK_ERR_TYPE, "name '%s' is not defined", id);
    return pyk_t_unknown();
}

static const pyk_type *expr_(pyk_ctx *c, pyk_node *e)
{
    switch (e->kind) {
    case PK_NAME: return name(c, e);
    case PK_CONST: return const_node(c, e);
    case PK_BINOP: {
        const char *op = pyk_sym(c, e, 0);
        int o = pyk_binop_of(op);
        const pyk_type *a = expr(c, pyk_kid(e, 1)), *b = expr(c, pyk_kid(e, 2));
        if (o < 0) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "the operator '%s' is not supported in kernels", op);
        if (known(a) && known(b) && a->k == T_TUPLE && b->k == T_TUPLE && o == CK_OP_ADD) {
            const pyk_type *el[64];
            if (a->n + b->n > 64) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "a tuple of more than 64 values");
            for (int i = 0; i < a->n; i++) el[i] = a->elts[i];
            for (int i = 0; i < b->n; i++) el[a->n + i] = b->elts[i];
            e->tag = -1;
            return pyk_t_tuple(c, a->n + b->n, el);
        }
        return binary(c, e, o, a, b);
    }
    case PK_UNARYOP: {
        const char *op = pyk_sym(c, e, 0);
        const pyk_type *a = expr(c, pyk_kid(e, 1));
        if (!known(a)) return a;
        if (!strcmp(op, "not")) {
            truth_type(c, e, a);
            if (a->literal && a->weak && (a->dtype == CK_BOOL || a->dtype == CK_INT64)) return pyk_t_bool_lit(c, !a->lit);
            return pyk_t_scalar(c, CK_BOOL);
        }
        need_scalar(c, e, a, "a unary operator");
        if (a->literal && a->weak && a->dtype == CK_INT64) {
            if (!strcmp(op, "usub")) return pyk_t_int_lit(c, (int64_t)(0 - (uint64_t)a->lit));
            if (!strcmp(op, "uadd")) return a;
            if (!strcmp(op, "invert")) return pyk_t_int_lit(c, ~a->lit);
        }
        if (a->literal && a->weak && a->dtype == CK_FLOAT64) {
            if (!strcmp(op, "usub")) return pyk_t_float_lit(c, -a->flit);
            if (!strcmp(op, "uadd")) return a;
        }
        int o = !strcmp(op, "usub") ? CK_OP_NEGATIVE : !strcmp(op, "uadd") ? CK_OP_POSITIVE : CK_OP_INVERT;
        /* Python's -True is -1: bools negate as integers */
        if (a->dtype == CK_BOOL && o != CK_OP_INVERT) a = pyk_t_scalar(c, CK_INT64);
        const pyk_type *in[1] = {a};
        ck_dtype out;
        e->loop = resolve(c, e, o, 1, in, &out);
        return pyk_t_scalar(c, out);
    }
    case PK_BOOLOP: {
        const pyk_type *acc = NULL;
        int all_bool = 1;
        for (int i = 1; i < e->n; i++) {
            const pyk_type *t = truth_type(c, e->v[i], expr(c, e->v[i]));
            if (!known(t)) return pyk_t_unknown();
            all_bool &= t->dtype == CK_BOOL;
            acc = acc ? pyk_t_scalar(c, pyk_t_promote(acc, t)) : t;
        }
        e->tag = all_bool;
        return all_bool ? pyk_t_scalar(c, CK_BOOL) : pyk_t_strong(c, acc);
    }
    case PK_COMPARE: {
        const pyk_type *left = expr(c, pyk_kid(e, 0));
        pyk_node *ops = pyk_list(c, e, 1, PK_OPS), *rights = pyk_list(c, e, 2, PK_VALUES);
        if (ops->n != rights->n) pyk_fail(c, e, CK_ERR_VALUE, "malformed comparison");
        for (int i = 0; i < ops->n; i++) {
            const char *op = pyk_sym(c, ops, i);
            const pyk_type *right = expr(c, rights->v[i]);
            if (!known(left) || !known(right)) return pyk_t_unknown();
            if (!strcmp(op, "is") || !strcmp(op, "isnot")) {
                if (left->k != T_NONE && right->k != T_NONE)
                    pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "'is' compares with None only in kernels");
            } else if (!strcmp(op, "in") || !strcmp(op, "notin")) {
                if (right->k != T_TUPLE) pyk_fail(c, e, CK_ERR_TYPE, "'in' needs a tuple in kernels, not a %s", pyk_t_str(c, right));
                need_scalar(c, e, left, "'in'");
                for (int k = 0; k < right->n; k++) {
                    pyk_node tmp = *ops->v[i];
                    binary(c, &tmp, CK_OP_EQUAL, left, right->elts[k]);   /* (emission asks again) */
                }
            } else {
                int o = pyk_binop_of(op);
                if (o < 0) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "the comparison '%s'", op);
                /* each comparison's loop dtype rides on its operator */
                binary(c, ops->v[i], o, left, right);
            }
            left = right;
        }
        return pyk_t_scalar(c, CK_BOOL);
    }
    case PK_IFEXP: {
        truth_type(c, e, expr(c, pyk_kid(e, 0)));
        const pyk_type *a = expr(c, pyk_kid(e, 1)), *b = expr(c, pyk_kid(e, 2));
        if (!known(a) || !known(b)) return pyk_t_unknown();
        if (a->k == T_SCALAR && b->k == T_SCALAR) return pyk_t_strong(c, pyk_t_scalar(c, pyk_t_promote(a, b)));
        const pyk_type *u = pyk_t_unify(c, a, b);
        if (!u) pyk_fail(c, e, CK_ERR_TYPE, "the two values of a conditional expression have the types %s and %s",
                         pyk_t_str(c, a), pyk_t_str(c, b));
        return u;
    }
    case PK_CALL: return call(c, e);
    case PK_ATTRIBUTE: return attribute(c, e);
    case PK_SUBSCRIPT: return subscript(c, e);
    case PK_TUPLE: case PK_LIST: {
        const pyk_type *el[64];
        if (e->n > 64) pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "a tuple of more than 64 values");
        for (int i = 0; i < e->n; i++) {
            el[i] = expr(c, e->v[i]);
            if (!known(el[i])) return pyk_t_unknown();
        }
        return pyk_t_tuple(c, e->n, el);
    }
    case PK_SLICE:
        pyk_fail(c, e, CK_ERR_TYPE, "a slice outside an index");
    case PK_UNSUPPORTED:
        pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "%s %s not supported in kernels", pyk_kid(e, 0)->s,
                 strstr(pyk_kid(e, 0)->s, "s ") || pyk_kid(e, 0)->s[strlen(pyk_kid(e, 0)->s) - 1] == 's' ? "are" : "is");
    default:
        pyk_fail(c, e, CK_ERR_VALUE, "malformed kernel tree: a %s in an expression", pyk_kind_name(e->kind));
    }
}

static const pyk_type *expr(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *t = expr_(c, e);
    e->type = t;
    return t;
}

/* ------------------------------------------------------------ statements */

/* Store a value of type t through target (a name, a subscript, a tuple). */
static void store(pyk_ctx *c, pyk_node *target, const pyk_type *t, pyk_node *value)
{
    switch (target->kind) {
    case PK_NAME:
        if (value && value->kind == PK_CALL && known(t) && t->k == T_ARRAY &&
            (t->space == PYK_SHARED || t->space == PYK_LOCAL)) {
            pyk_var *v = var_add(c, c->cur, pyk_sym(c, target, 0));
            v->array_decl = 1;
            v->decl = value;
        }
        var_store(c, target, pyk_sym(c, target, 0), t);
        target->type = pyk_var_find(c->cur, pyk_sym(c, target, 0))->type;
        return;
    case PK_TUPLE: case PK_LIST:
        if (!known(t)) {
            for (int i = 0; i < target->n; i++) store(c, target->v[i], pyk_t_unknown(), NULL);
            return;
        }
        if (t->k != T_TUPLE)
            pyk_fail(c, target, CK_ERR_TYPE, "cannot unpack a %s (tuples unpack in kernels)", pyk_t_str(c, t));
        if (t->n != target->n)
            pyk_fail(c, target, CK_ERR_VALUE, "%s values to unpack (expected %d, got %d)",
                     t->n > target->n ? "too many" : "not enough", target->n, t->n);
        for (int i = 0; i < target->n; i++) store(c, target->v[i], t->elts[i], NULL);
        target->type = t;
        return;
    case PK_SUBSCRIPT: {
        const pyk_type *dst = expr(c, target);
        const pyk_type *arr = pyk_kid(target, 0)->type;
        if (!known(dst) || !known(t)) return;
        if (arr->k == T_TUPLE) pyk_fail(c, target, CK_ERR_TYPE, "tuples are immutable: cannot assign to an item");
        if (arr->k != T_ARRAY) pyk_fail(c, target, CK_ERR_TYPE, "cannot assign to an item of a %s", pyk_t_str(c, arr));
        if (arr->readonly) pyk_fail(c, target, CK_ERR_TYPE, "cannot assign to a read-only array");
        if (t->k != T_SCALAR)
            pyk_fail(c, target, CK_ERR_TYPE, "cannot store a %s in an array element", pyk_t_str(c, t));
        if (ck_dtype_is_complex(t->dtype) && !ck_dtype_is_complex(arr->dtype) && !t->weak)
            pyk_fail(c, target, CK_ERR_TYPE, "cannot store a complex value in a %s array", ck_dtype_get_info(arr->dtype)->name);
        return;
    }
    case PK_ATTRIBUTE:
        pyk_fail(c, target, CK_ERR_NOT_IMPLEMENTED, "assigning to an attribute is not supported in kernels");
    default:
        pyk_fail(c, target, CK_ERR_TYPE, "cannot assign to a %s", pyk_kind_name(target->kind));
    }
}

/* The type of the loop variable of `for t in it`. */
static const pyk_type *iter_item(pyk_ctx *c, pyk_node *at, const pyk_type *it, pyk_node *itnode)
{
    if (!known(it)) return it;
    switch (it->k) {
    case T_RANGE: return pyk_t_scalar(c, (ck_dtype)itnode->loop);
    case T_ARRAY:
        if (it->ndim == 1) return pyk_t_scalar(c, it->dtype);
        return pyk_t_array(c, it->dtype, it->ndim - 1, it->layout == 'C' ? 'C' : 'A', it->space, it->readonly);
    case T_TUPLE: {
        const pyk_type *u = NULL;
        for (int i = 0; i < it->n; i++) {
            u = pyk_t_unify(c, u, it->elts[i]);
            if (!u) pyk_fail(c, at, CK_ERR_TYPE, "a loop over a tuple of mixed types (%s)", pyk_t_str(c, it));
        }
        return u ? u : pyk_t_unknown();
    }
    case T_ITER: {
        const pyk_type *el[9];
        int m = 0;
        if (it->entry == 0) el[m++] = pyk_t_scalar(c, CK_INT64);
        for (int i = 0; i < it->n; i++) el[m++] = iter_item(c, at, it->elts[i], NULL);
        return pyk_t_tuple(c, m, el);
    }
    default:
        pyk_fail(c, at, CK_ERR_TYPE, "a %s is not iterable in a kernel (range, arrays, tuples, enumerate and zip are)",
                 pyk_t_str(c, it));
    }
}

static void stmt(pyk_ctx *c, pyk_node *s)
{
    switch (s->kind) {
    case PK_ASSIGN: {
        pyk_node *targets = pyk_list(c, s, 0, PK_TARGETS);
        pyk_node *value = pyk_kid(s, 1);
        const pyk_type *t = expr(c, value);
        for (int i = 0; i < targets->n; i++) store(c, targets->v[i], t, value);
        return;
    }
    case PK_ANNASSIGN: {
        pyk_node *target = pyk_kid(s, 0), *ann = pyk_kid(s, 1), *value = pyk_kid(s, 2);
        const pyk_type *at = expr(c, ann);
        if (target->kind != PK_NAME) pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "annotations of a name only");
        if (at->k != T_DTYPE) pyk_fail(c, ann, CK_ERR_TYPE, "an annotation in a kernel names a dtype (float32, int64...)");
        var_store(c, target, pyk_sym(c, target, 0), pyk_t_scalar(c, at->dtype));
        if (value && value->kind != PK_CONST) {
            const pyk_type *vt = expr(c, value);
            if (known(vt)) need_scalar(c, value, vt, "an annotated assignment");
        } else if (value) {
            expr(c, value);
        }
        target->type = pyk_var_find(c->cur, pyk_sym(c, target, 0))->type;
        return;
    }
    case PK_AUGASSIGN: {
        const char *op = pyk_sym(c, s, 0);
        pyk_node *target = pyk_kid(s, 1), *value = pyk_kid(s, 2);
        int o = pyk_binop_of(op);
        if (o < 0) pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "the operator '%s=' is not supported in kernels", op);
        const pyk_type *cur = expr(c, target);
        const pyk_type *v = expr(c, value);
        const pyk_type *r = binary(c, s, o, cur, v);
        if (target->kind == PK_NAME) {
            var_store(c, target, pyk_sym(c, target, 0), r);
            target->type = pyk_var_find(c->cur, pyk_sym(c, target, 0))->type;
        } else if (target->kind == PK_SUBSCRIPT) {
            store(c, target, r, NULL);
        } else {
            pyk_fail(c, target, CK_ERR_NOT_IMPLEMENTED, "an augmented assignment to a %s", pyk_kind_name(target->kind));
        }
        return;
    }
    case PK_FOR: {
        pyk_node *target = pyk_kid(s, 0), *iter = pyk_kid(s, 1);
        const pyk_type *it = expr(c, iter);
        store(c, target, iter_item(c, s, it, iter), NULL);
        c->loop_depth++;
        block(c, pyk_list(c, s, 2, PK_BODY));
        c->loop_depth--;
        block(c, pyk_list(c, s, 3, PK_ORELSE));
        return;
    }
    case PK_WHILE:
        truth_type(c, s, expr(c, pyk_kid(s, 0)));
        c->loop_depth++;
        block(c, pyk_list(c, s, 1, PK_BODY));
        c->loop_depth--;
        block(c, pyk_list(c, s, 2, PK_ORELSE));
        return;
    case PK_IF:
        truth_type(c, s, expr(c, pyk_kid(s, 0)));
        block(c, pyk_list(c, s, 1, PK_BODY));
        block(c, pyk_list(c, s, 2, PK_ORELSE));
        return;
    case PK_EXPR:
        expr(c, pyk_kid(s, 0));
        return;
    case PK_RETURN: {
        pyk_node *v = pyk_kid(s, 0);
        const pyk_type *t = v ? expr(c, v) : pyk_t_none();
        if (c->cur->is_kernel) {
            if (known(t) && t->k != T_NONE)
                pyk_fail(c, s, CK_ERR_TYPE, "a kernel cannot return a value (write results to an array argument)");
            return;
        }
        if (!known(t)) return;
        if (t->k != T_NONE && t->k != T_SCALAR && t->k != T_TUPLE && t->k != T_ARRAY)
            pyk_fail(c, s, CK_ERR_TYPE, "a device function cannot return a %s", pyk_t_str(c, t));
        const pyk_type *st = pyk_t_strong(c, t);
        if (!c->cur->ret) {
            c->cur->ret = st;
            c->changed = 1;
        } else if (c->cur->ret != st) {
            const pyk_type *u = c->cur->ret->k == T_NONE || st->k == T_NONE ? NULL : pyk_t_unify(c, c->cur->ret, st);
            if (!u) pyk_fail(c, s, CK_ERR_TYPE, "%s() returns a %s here and a %s elsewhere", c->cur->name,
                             pyk_t_str(c, st), pyk_t_str(c, c->cur->ret));
            if (u != c->cur->ret) {
                c->cur->ret = u;
                c->changed = 1;
            }
        }
        return;
    }
    case PK_PASS:
        return;
    case PK_BREAK: case PK_CONTINUE:
        if (!c->loop_depth) pyk_fail(c, s, CK_ERR_TYPE, "'%s' outside a loop", pyk_kind_name(s->kind));
        return;
    case PK_RAISE:
        return;   /* (raise line col ExcName "message"): the class and text are known */
    case PK_ASSERT:
        truth_type(c, s, expr(c, pyk_kid(s, 0)));
        return;
    case PK_UNSUPPORTED: {
        const char *what = pyk_kid(s, 0)->s;
        pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "%s %s not supported in kernels", what,
                 what[strlen(what) - 1] == 's' ? "are" : "is");
    }
    default:
        pyk_fail(c, s, CK_ERR_VALUE, "malformed kernel tree: a %s as a statement", pyk_kind_name(s->kind));
    }
}

static void block(pyk_ctx *c, pyk_node *body)
{
    for (int i = 0; i < body->n; i++) stmt(c, body->v[i]);
}

void pyk_infer_func(pyk_ctx *c, pyk_func *f)
{
    pyk_func *saved = c->cur;
    int saved_strict = c->strict, saved_depth = c->loop_depth, saved_changed = c->changed;
    c->cur = f;
    f->typing = 1;
    pyk_node *params = pyk_list(c, f->def, 1, PK_PARAMS);
    for (int i = 0; i < f->nparams; i++) {
        pyk_var *v = var_add(c, f, pyk_sym(c, params, i));
        v->param = i;
        v->type = f->ptypes[i];
    }
    pyk_node *body = pyk_list(c, f->def, 2, PK_BODY);
    c->strict = 0;
    c->loop_depth = 0;
    int rounds = 0;
    do {
        c->changed = 0;
        block(c, body);
        if (++rounds > 64) pyk_fail(c, f->def, CK_ERR_TYPE, "the types of %s() do not settle", f->name);
    } while (c->changed);
    c->strict = 1;
    block(c, body);
    c->strict = saved_strict;
    c->loop_depth = saved_depth;
    for (int i = 0; i < f->nvars; i++)
        if (!known(f->vars[i].type))
            pyk_fail(c, f->def, CK_ERR_TYPE, "the type of the variable '%s' of %s() cannot be found (is it assigned "
                     "before it is read on every path?)", f->vars[i].name, f->name);
    if (!f->ret) f->ret = pyk_t_none();
    f->typing = 0;
    c->cur = saved;
    c->changed = saved_changed;
}
