/* Writing: a typed function -> CUDA C.  Statements become statements, one
 * Python line a comment before them; expressions become C expressions
 * whose C type is the value's (pyk_t_var_ctype: float16 is ck_f16, bool is
 * bool, complex is ck_c64 / ck_c128), each operand converted to the loop
 * dtype typing chose, by NumPy's cast rules.  The per-element arithmetic
 * of ops beyond + - * / and the comparisons is scalar_ops.h's, so a kernel
 * computes floor division, power, or np.sin exactly as ck.floor_divide,
 * ck.power and ck.sin do. */
#include "pyk_internal.h"
#include "../cuda_codegen.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

static char *fmt(pyk_ctx *c, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static char *fmt(pyk_ctx *c, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *s = pyk_alloc(c, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, f, aq);
    va_end(aq);
    return s;
}

static void line(pyk_ctx *c, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void line(pyk_ctx *c, const char *f, ...)
{
    char buf[16384];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    ck_sbuf_printf(&c->body, "%*s%s\n", c->indent * 4, "", buf);
}

static const char *ex(pyk_ctx *c, pyk_node *e);
static void block(pyk_ctx *c, pyk_node *body);
static void loop_else(pyk_ctx *c, const char *broke, pyk_node *orelse);
static void leave(pyk_ctx *c);
static int x_is_zero(const pyk_node *x);

/* ------------------------------------------------------------ names */

static int is_c_keyword(const char *s)
{
    static const char *const kw[] = {
        "alignas", "alignof", "asm", "auto", "bool", "case", "catch", "char", "class", "const", "constexpr",
        "const_cast", "decltype", "default", "delete", "do", "double", "dynamic_cast", "enum", "explicit", "export",
        "extern", "float", "friend", "goto", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
        "nullptr", "operator", "private", "protected", "public", "register", "reinterpret_cast", "restrict", "short",
        "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
        "thread_local", "throw", "true", "false", "typedef", "typeid", "typename", "union", "unsigned", "using",
        "virtual", "void", "volatile", "wchar_t", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
        "printf", "min", "max", "abs", "exp", "log", "sin", "cos", "tan", "sqrt", "pow", "floor", "ceil", "round",
        "fabs", "fmod", "main", NULL};
    for (int i = 0; kw[i]; i++)
        if (!strcmp(kw[i], s)) return 1;
    return !strncmp(s, "ck_", 3) || !strncmp(s, "CK_", 3) || !strncmp(s, "__", 2);
}

/* Writing a kernel's CPU form in barrier regions (see "The CPU's barrier
 * regions" below): a kernel's variables live in each thread's frame, and
 * a thread leaves the region it is in (return, break, continue) by jumping
 * to the region's end. */
static _Thread_local int rg_on_;
static _Thread_local const char *rg_end_;
static _Thread_local int rg_end_used_;

/* A coarsened kernel's vector path (see "thread coarsening" below): the
 * index variable, and per parameter what the body does with its element
 * at that index, the only element of it the body touches. */
enum { CO_READ = 1, CO_WRITTEN = 2 };
typedef struct co_vec {
    const char *index;        /* the variable assigned cuda.grid(1), once */
    unsigned char *role;      /* per parameter: CO_READ | CO_WRITTEN, 0 for one not subscripted */
    int before;               /* (co_vec_scan) in the statements before the index's assignment */
} co_vec;
static _Thread_local co_vec co_vec_;
static _Thread_local const char *co_label_;   /* where a return in the coarsened loop goes */

/* The C name of a Python variable. */
static const char *cname(pyk_ctx *c, const char *py)
{
    for (const char *p = py; *p; p++)
        if ((unsigned char)*p >= 0x80)
            pyk_fail(c, NULL, CK_ERR_NOT_IMPLEMENTED, "the name '%s' is not ASCII: kernels take ASCII names", py);
    const char *n = is_c_keyword(py) ? fmt(c, "v_%s", py) : py;
    if (!rg_on_ || !c->cur->is_kernel) return n;
    pyk_var *v = pyk_var_find(c->cur, py);
    return v && v->uniform ? n : fmt(c, "ck_F->%s", n);
}

/* The name as a C identifier, outside any frame. */
static const char *plain_name(pyk_ctx *c, const char *py)
{
    int on = rg_on_;
    rg_on_ = 0;
    const char *n = cname(c, py);
    rg_on_ = on;
    return n;
}

/* ------------------------------------------------------------ values */

static const char *dtid(ck_dtype d) { return ck_cuda_dtype_id(d); }
static char kindl(ck_dtype d) { return ck_cuda_kind_letter(d); }
static const char *compute(ck_dtype d) { return ck_cuda_compute_type(d); }
static const char *vtype(ck_dtype d) { return pyk_t_var_ctype(d); }

/* A literal written in dtype d. */
static const char *literal(pyk_ctx *c, const pyk_type *t, ck_dtype d)
{
    double re = t->dtype == CK_FLOAT64 || t->dtype == CK_COMPLEX128 ? t->flit : (double)t->lit;
    double im = t->dtype == CK_COMPLEX128 ? t->flit_im : 0.0;
    if (d == CK_BOOL) return (re != 0 || im != 0) ? "true" : "false";
    if (ck_dtype_is_integer(d)) {
        if (ck_dtype_is_inexact(t->dtype))
            return fmt(c, "CK_CVT_(F, %c, %s, %.17g)", kindl(d), vtype(d), re);
        if (d == CK_UINT64) return fmt(c, "%lluull", (unsigned long long)t->lit);
        if (t->lit == INT64_MIN) return "(-9223372036854775807ll - 1)";
        if (d == CK_INT64) return fmt(c, "%lldll", (long long)t->lit);
        if (ck_dtype_get_info(d)->itemsize < 4 || d == CK_UINT32)
            return fmt(c, "(%s)%lld", vtype(d), (long long)t->lit);
        return fmt(c, "%lld", (long long)t->lit);
    }
    int is32 = d == CK_FLOAT32 || d == CK_FLOAT16 || d == CK_COMPLEX64;
    const char *r, *i;
    if (isnan(re)) r = is32 ? "(CK_INFF - CK_INFF)" : "(double)(CK_INFF - CK_INFF)";
    else if (isinf(re)) r = re > 0 ? (is32 ? "CK_INFF" : "(double)CK_INFF") : (is32 ? "(-CK_INFF)" : "(-(double)CK_INFF)");
    else r = is32 ? fmt(c, "%.9gf", re) : fmt(c, "%.17g", re);
    if (!isnan(re) && !isinf(re) && !strpbrk(r, ".eEn")) r = is32 ? fmt(c, "%.1ff", re) : fmt(c, "%.1f", re);
    if (d == CK_FLOAT16) return fmt(c, "ck_f16(%s)", r);
    if (!ck_dtype_is_complex(d)) return r;
    if (isnan(im)) i = is32 ? "(CK_INFF - CK_INFF)" : "(double)(CK_INFF - CK_INFF)";
    else if (isinf(im)) i = im > 0 ? (is32 ? "CK_INFF" : "(double)CK_INFF") : (is32 ? "(-CK_INFF)" : "(-(double)CK_INFF)");
    else i = is32 ? fmt(c, "%.9gf", im) : fmt(c, "%.17g", im);
    if (!isnan(im) && !isinf(im) && !strpbrk(i, ".eEn")) i = is32 ? fmt(c, "%.1ff", im) : fmt(c, "%.1f", im);
    return fmt(c, "%s(%s, %s)", vtype(d), r, i);
}

/* s, a value of type t, as a value of dtype d (NumPy's cast). */
static const char *conv(pyk_ctx *c, const char *s, const pyk_type *t, ck_dtype d)
{
    if (t->k != T_SCALAR) pyk_fail(c, NULL, CK_ERR_TYPE, "a %s is not a number", pyk_t_str(c, t));
    if (t->literal && t->weak) return literal(c, t, d);
    ck_dtype f = pyk_t_strong(c, t)->dtype;
    if (f == d) return s;
    if (d == CK_BOOL) return fmt(c, "ck_pyk_truth(%s)", s);
    if (ck_dtype_is_complex(d)) return fmt(c, "%s(%s)", vtype(d), f == CK_FLOAT16 ? fmt(c, "(float)(%s)", s) : s);
    if (ck_dtype_is_complex(f)) s = fmt(c, "(%s).re", s), f = ck_dtype_real(f);
    if (d == CK_FLOAT16) return fmt(c, "ck_f16(%s)", ck_dtype_is_integer(f) || f == CK_BOOL ? fmt(c, "(float)(%s)", s) : s);
    if (f == CK_FLOAT16) s = fmt(c, "(float)(%s)", s), f = CK_FLOAT32;
    if (ck_dtype_is_inexact(f) && ck_dtype_is_integer(d))
        return fmt(c, "CK_CVT_(F, %c, %s, %s)", kindl(d), vtype(d), s);
    return fmt(c, "(%s)(%s)", vtype(d), s);
}

/* s as an operand of a loop of dtype d: its compute type (float for float16). */
static const char *operand(pyk_ctx *c, const char *s, const pyk_type *t, ck_dtype d)
{
    const char *v = conv(c, s, t, d);
    if (d == CK_FLOAT16) return fmt(c, "(float)(%s)", v);
    if (d == CK_BOOL) return fmt(c, "(uint8_t)(%s)", v);
    return v;
}

/* The result of an op macro (its compute type) as a value of dtype d. */
static const char *result(pyk_ctx *c, const char *s, ck_dtype d)
{
    if (d == CK_FLOAT16) return fmt(c, "ck_f16(%s)", s);
    if (d == CK_BOOL) return fmt(c, "(bool)(%s)", s);
    return s;
}

/* A C name or number: what an op macro may read twice at no cost. */
static int plain_operand(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.') return 0;
    return 1;
}

/* op of the op table on operands (strings of types ts), loop dtype L, giving dtype R. */
static const char *apply_op(pyk_ctx *c, int op, int nin, const char **as, const pyk_type **ts, ck_dtype L, ck_dtype R)
{
    const char *o[3];
    for (int k = 0; k < nin; k++) o[k] = operand(c, as[k], ts[k], L);
    char k = kindl(L);
    int simple = (k == 'I' || k == 'U' || k == 'F') && L != CK_FLOAT16;
    const char *inf = NULL;
    if (simple && nin == 2) {
        switch (op) {
        case CK_OP_ADD: inf = "+"; break;
        case CK_OP_SUBTRACT: inf = "-"; break;
        case CK_OP_MULTIPLY: inf = "*"; break;
        case CK_OP_TRUE_DIVIDE: inf = k == 'F' ? "/" : NULL; break;
        case CK_OP_BITWISE_AND: inf = "&"; break;
        case CK_OP_BITWISE_OR: inf = "|"; break;
        case CK_OP_BITWISE_XOR: inf = "^"; break;
        default: break;
        }
    }
    if (nin == 2 && k != 'C' && L != CK_FLOAT16) {
        switch (op) {
        case CK_OP_EQUAL: inf = "=="; break;
        case CK_OP_NOT_EQUAL: inf = "!="; break;
        case CK_OP_LESS: inf = k == 'B' ? NULL : "<"; break;
        case CK_OP_LESS_EQUAL: inf = k == 'B' ? NULL : "<="; break;
        case CK_OP_GREATER: inf = k == 'B' ? NULL : ">"; break;
        case CK_OP_GREATER_EQUAL: inf = k == 'B' ? NULL : ">="; break;
        default: break;
        }
    }
    if (inf) {
        const char *e = fmt(c, "(%s %s %s)", o[0], inf, o[1]);
        if ((k == 'I' || k == 'U') && ck_dtype_get_info(L)->itemsize < 4 && R == L) e = fmt(c, "(%s)%s", vtype(L), e);
        return e;
    }
    const char *args = nin == 1 ? o[0] : nin == 2 ? fmt(c, "%s, %s", o[0], o[1]) : fmt(c, "%s, %s, %s", o[0], o[1], o[2]);
    const char *e = fmt(c, "CK_X_%s(%s, %c, %s, %s)", ck_cuda_op_id((ck_op)op), dtid(L), k, compute(L), args);
    /* The table's formulas may read an operand twice (max is a ?: of both):
     * an operand that is more than a name or a number is passed once, to a
     * lambda, so a shuffle, an atomic or a call in it runs once, in every
     * thread (a second, divergent shuffle is undefined on a GPU and leaves
     * the CPU's lanes waiting for each other). */
    int pure = 1;
    for (int i = 0; i < nin; i++) pure &= plain_operand(o[i]);
    if (!pure) {
        const char *ps = "", *ns = "";
        for (int i = 0; i < nin; i++) {
            ps = fmt(c, "%s%s%s ck_o%d", ps, i ? ", " : "", compute(L), i);
            ns = fmt(c, "%s%sck_o%d", ns, i ? ", " : "", i);
        }
        e = fmt(c, "[&](%s) { return CK_X_%s(%s, %c, %s, %s); }(%s)", ps, ck_cuda_op_id((ck_op)op), dtid(L), k,
                compute(L), ns, args);
    }
    if (R != L && R != CK_BOOL && !ck_dtype_is_complex(L)) e = fmt(c, "(%s)(%s)", compute(R), e);
    return result(c, e, R);
}

/* The value of e converted to dtype d. */
static const char *ex_as(pyk_ctx *c, pyk_node *e, ck_dtype d) { return conv(c, ex(c, e), e->type, d); }

/* ------------------------------------------------------------ arrays */

static const char *index_item(pyk_ctx *c, pyk_node *it, const char *arr, int k, int line_no, int argno)
{
    const pyk_type *t = it->type;
    const char *n = fmt(c, "%s.shape[%d]", arr, k);
    if (c->opt->debug) {
        /* checked before the statement: a thread out of bounds reports and leaves, touching nothing */
        const char *j = fmt(c, "ck_j%d", ++c->tmp);
        line(c, "long long %s = %s;", j, conv(c, ex(c, it), t, CK_INT64));
        line(c, "if (!ck_pyk_in_bounds(ck_err, &%s, %s, %d, %d)) {", j, n, line_no, argno);
        c->indent++;
        leave(c);
        c->indent--;
        line(c, "}");
        return j;
    }
    if (t->literal && t->weak) {
        if (t->lit >= 0) return fmt(c, "%lldll", (long long)t->lit);
        return fmt(c, "(%s + %lldll)", n, (long long)t->lit);
    }
    const char *s = ex(c, it);
    ck_dtype d = pyk_t_strong(c, t)->dtype;
    if (d == CK_BOOL || !ck_dtype_is_signed(d)) return fmt(c, "(long long)(%s)", s);
    return fmt(c, "ck_pyk_wrap(%s, %s)", s, n);
}

/* Which argument an array is, for debug messages (-1: not an argument). */
static int arg_number(pyk_ctx *c, pyk_node *arr)
{
    if (arr->kind != PK_NAME) return -1;
    pyk_var *v = pyk_var_find(c->cur, pyk_sym(c, arr, 0));
    return v ? v->param : -1;
}

/* An element a[i, j, ...] (all integer indices) as an lvalue of storage type. */
static const char *element(pyk_ctx *c, pyk_node *sub)
{
    pyk_node *arr = pyk_kid(sub, 0), *ix = pyk_kid(sub, 1);
    if (c->vec_on) {   /* co_vec_scan let through no other subscript of an array */
        const char *an = pyk_sym(c, arr, 0);
        if (ix->kind != PK_NAME || strcmp(pyk_sym(c, ix, 0), co_vec_.index) || !pyk_var_find(c->cur, an))
            pyk_fail(c, sub, CK_ERR_VALUE, "the vector path met a subscript it was not planned for");
        return fmt(c, "ck_l_%s[ck_u]", an);
    }
    const pyk_type *at = arr->type;
    const char *a = ex(c, arr);
    int simple = arr->kind == PK_NAME;
    if (!simple) {
        /* evaluate the array expression once */
        a = fmt(c, "ck_a%d", ++c->tmp);
        line(c, "const %s %s = %s;", pyk_t_ctype(c, at), a, ex(c, arr));
    }
    int n = ix->kind == PK_TUPLE ? ix->n : 1;
    const char *idx[32] = {0};
    int argno = arg_number(c, arr);
    for (int k = 0; k < n; k++) idx[k] = index_item(c, ix->kind == PK_TUPLE ? ix->v[k] : ix, a, k, sub->line, argno);
    if (at->ndim == 1 && at->layout == 'C') return fmt(c, "%s.p[%s]", a, idx[0]);
    const char *list = idx[0];
    for (int k = 1; k < n; k++) list = fmt(c, "%s, %s", list, idx[k]);
    return fmt(c, "ck_pyk_el%c(%s, %s)", at->layout == 'C' ? 'c' : at->layout == 'F' ? 'f' : 'a', a, list);
}

/* A view a[...] with slices or fewer indices than dimensions. */
static const char *view(pyk_ctx *c, pyk_node *sub)
{
    pyk_node *arr = pyk_kid(sub, 0), *ix = pyk_kid(sub, 1);
    const pyk_type *at = arr->type, *rt = sub->type;
    const char *s = fmt(c, "ck_s%d", ++c->tmp);
    line(c, "const %s %s = %s;", pyk_t_ctype(c, at), s, ex(c, arr));
    const char *r = fmt(c, "ck_v%d", ++c->tmp);
    line(c, "%s %s;", pyk_t_ctype(c, rt), r);
    line(c, "{");
    c->indent++;
    line(c, "long long off = 0;");
    int n = ix->kind == PK_TUPLE ? ix->n : 1, d = 0;
    for (int k = 0; k < at->ndim; k++) {
        pyk_node *it = k < n ? (ix->kind == PK_TUPLE ? ix->v[k] : ix) : NULL;
        if (it && it->kind != PK_SLICE) {
            line(c, "off += %s * %s.strides[%d];", index_item(c, it, s, k, sub->line, arg_number(c, arr)), s, k);
            continue;
        }
        if (!it) {
            line(c, "%s.shape[%d] = %s.shape[%d]; %s.strides[%d] = %s.strides[%d];", r, d, s, k, r, d, s, k);
            d++;
            continue;
        }
        const char *b[3];
        int has[3];
        for (int q = 0; q < 3; q++) {
            pyk_node *x = pyk_kid(it, q);
            has[q] = x && x->type && x->type->k != T_NONE;
            b[q] = has[q] ? ex_as(c, x, CK_INT64) : "0";
        }
        if (has[2] && x_is_zero(pyk_kid(it, 2)))
            pyk_fail(c, it, CK_ERR_VALUE, "slice step cannot be zero");
        line(c, "{ ck_pyk_span sp = ck_pyk_slice(%s.shape[%d], %s, %s, %s, %s, %s);", s, k, has[0] ? "true" : "false",
             b[0], has[1] ? "true" : "false", b[1], has[2] ? b[2] : "1");
        line(c, "  off += sp.start * %s.strides[%d]; %s.shape[%d] = sp.len; %s.strides[%d] = %s.strides[%d] * sp.step; }",
             s, k, r, d, r, d, s, k);
        d++;
    }
    line(c, "%s.p = (%s *)((char *)%s.p + off);", r, pyk_t_storage(at->dtype), s);
    c->indent--;
    line(c, "}");
    return r;
}

/* --------------------------------------------------------------- calls */

static pyk_node *arg_n(pyk_ctx *c, pyk_node *call, int i) { return pyk_kid(pyk_list(c, call, 1, PK_ARGS), i); }

/* The address of the element an atomic works on. */
static const char *atomic_addr(pyk_ctx *c, pyk_node *call)
{
    pyk_node *arr = arg_n(c, call, 0), *ix = arg_n(c, call, 1);
    pyk_node sub = {0};
    sub.kind = PK_SUBSCRIPT;
    sub.line = call->line;
    sub.col = call->col;
    pyk_node *kids[2] = {arr, ix};
    sub.n = 2;
    sub.v = kids;
    return fmt(c, "&%s", element(c, &sub));
}

static const char *call_builtin(pyk_ctx *c, pyk_node *e, const pyk_builtin *b)
{
    pyk_node *a0 = arg_n(c, e, 0), *a1 = arg_n(c, e, 1), *a2 = arg_n(c, e, 2);
    ck_dtype R = e->type && e->type->k == T_SCALAR ? pyk_t_strong(c, e->type)->dtype : CK_BOOL;
    switch (b->id) {
    case PF_UFUNC: case PF_MATH: case PF_MATH_PRED: case PF_MATH_INT: {
        int nin = ck_op_table[b->op].nin;
        const char *as[3];
        const pyk_type *ts[3];
        for (int k = 0; k < nin; k++) {
            pyk_node *x = arg_n(c, e, k);
            as[k] = ex(c, x);
            ts[k] = x->type;
        }
        ck_dtype L = (ck_dtype)e->loop;
        if (b->id == PF_UFUNC) return apply_op(c, b->op, nin, as, ts, L, R);
        ck_dtype out = (ck_op_table[b->op].rule & CK_R_OUT_BOOL) ? CK_BOOL : L;
        const char *v = apply_op(c, b->op, nin, as, ts, L, out);
        if (b->id == PF_MATH_INT) return conv(c, v, pyk_t_scalar(c, out), CK_INT64);
        return v;
    }
    case PF_MATH_LOG: {
        ck_dtype L = (ck_dtype)e->loop;
        const char *as[1] = {ex(c, a0)};
        const pyk_type *ts[1] = {a0->type};
        const char *v = apply_op(c, CK_OP_LOG, 1, as, ts, L, L);
        if (!a1) return v;
        const char *bs[1] = {ex(c, a1)};
        const pyk_type *bt[1] = {a1->type};
        return fmt(c, "(%s / %s)", v, apply_op(c, CK_OP_LOG, 1, bs, bt, L, L));
    }
    case PF_MATH_LIBM: {
        ck_dtype L = (ck_dtype)e->loop;
        if (!strcmp(b->name, "cmath.phase")) {
            const char *z = fmt(c, "ck_z%d", ++c->tmp);
            ck_dtype zt = pyk_t_strong(c, a0->type)->dtype;
            if (!ck_dtype_is_complex(zt)) return fmt(c, "atan2((%s)0, (%s)(%s))", vtype(L), vtype(L), ex(c, a0));
            line(c, "const %s %s = %s;", vtype(zt), z, ex(c, a0));
            return fmt(c, "atan2(%s.im, %s.re)", z, z);
        }
        const char *f = b->name + 5;
        if (!strcmp(f, "gamma")) f = "tgamma";
        return fmt(c, "%s(%s)", f, ex_as(c, a0, L));
    }
    case PF_ABS: {
        const char *as[1] = {ex(c, a0)};
        const pyk_type *ts[1] = {a0->type};
        if (e->type->literal) return literal(c, e->type, CK_INT64);
        return apply_op(c, CK_OP_ABSOLUTE, 1, as, ts, (ck_dtype)e->loop, R);
    }
    case PF_MIN: case PF_MAX: {
        if (e->type->literal) return literal(c, e->type, CK_INT64);
        int op = b->id == PF_MIN ? CK_OP_MINIMUM : CK_OP_MAXIMUM;
        pyk_node *args = pyk_list(c, e, 1, PK_ARGS);
        if (e->tag == 1) {   /* min(tuple) */
            const pyk_type *tt = a0->type;
            const char *t = fmt(c, "ck_t%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, tt), t, ex(c, a0));
            const char *acc = conv(c, fmt(c, "%s.v0", t), tt->elts[0], R);
            for (int k = 1; k < tt->n; k++) {
                const char *as[2] = {acc, fmt(c, "%s.v%d", t, k)};
                const pyk_type *ts[2] = {pyk_t_scalar(c, R), tt->elts[k]};
                acc = apply_op(c, op, 2, as, ts, R, R);
            }
            return acc;
        }
        /* Python's min/max: the first of equal values, NaN as NumPy's minimum (propagates) */
        const char *acc = ex_as(c, args->v[0], R);
        for (int k = 1; k < args->n; k++) {
            const char *as[2] = {acc, ex(c, args->v[k])};
            const pyk_type *ts[2] = {pyk_t_scalar(c, R), args->v[k]->type};
            acc = apply_op(c, op, 2, as, ts, R, R);
        }
        return acc;
    }
    case PF_POW: {
        const char *as[2] = {ex(c, a0), ex(c, a1)};
        const pyk_type *ts[2] = {a0->type, a1->type};
        if (e->type->literal) return literal(c, e->type, pyk_t_strong(c, e->type)->dtype);
        return apply_op(c, CK_OP_POWER, 2, as, ts, (ck_dtype)e->loop, R);
    }
    case PF_ROUND: {
        ck_dtype d = pyk_t_strong(c, a0->type)->dtype;
        if (!a1) {
            if (ck_dtype_is_integer(d) || d == CK_BOOL) return conv(c, ex(c, a0), a0->type, CK_INT64);
            /* Python rounds half to even */
            return fmt(c, "CK_CVT_(F, I, int64_t, rint((double)(%s)))", conv(c, ex(c, a0), a0->type, CK_FLOAT64));
        }
        int64_t nd = pyk_const_int(c, a1, "round()'s ndigits");
        if (ck_dtype_is_integer(d)) return ex_as(c, a0, R);
        const char *x = conv(c, ex(c, a0), a0->type, CK_FLOAT64);
        return conv(c, fmt(c, "(rint(%s * 1e%lld) / 1e%lld)", x, (long long)nd, (long long)nd), pyk_t_scalar(c, CK_FLOAT64), R);
    }
    case PF_LEN:
        if (a0->type->k == T_TUPLE) return fmt(c, "%dll", a0->type->n);
        return fmt(c, "(%s).shape[0]", ex(c, a0));
    case PF_PRINT: {
        pyk_node *args = pyk_list(c, e, 1, PK_ARGS);
        const char *f = "", *vals = "";
        for (int k = 0; k < args->n; k++) {
            pyk_node *x = args->v[k];
            const pyk_type *t = x->type;
            const char *sep = k ? " " : "";
            if (t->k == T_STR) {
                const char *s = pyk_kid(x, 1)->s, *q = "";
                for (const char *p = s; *p; p++) {
                    if (*p == '%') q = fmt(c, "%s%%%%", q);
                    else if (*p == '"' || *p == '\\') q = fmt(c, "%s\\%c", q, *p);
                    else if (*p == '\n') q = fmt(c, "%s\\n", q);
                    else q = fmt(c, "%s%c", q, *p);
                }
                f = fmt(c, "%s%s%s", f, sep, q);
                continue;
            }
            if (t->k == T_NONE) { f = fmt(c, "%s%sNone", f, sep); continue; }
            ck_dtype d = pyk_t_strong(c, t)->dtype;
            const char *v = ex(c, x);
            if (d == CK_BOOL) {
                f = fmt(c, "%s%s%%s", f, sep);
                vals = fmt(c, "%s, (%s) ? \"True\" : \"False\"", vals, conv(c, v, t, CK_BOOL));
            } else if (ck_dtype_is_integer(d)) {
                int u = !ck_dtype_is_signed(d);
                f = fmt(c, "%s%s%s", f, sep, u ? "%llu" : "%lld");
                vals = fmt(c, "%s, (%s)(%s)", vals, u ? "unsigned long long" : "long long", conv(c, v, t, u ? CK_UINT64 : CK_INT64));
            } else if (ck_dtype_is_complex(d)) {
                const char *z = fmt(c, "ck_z%d", ++c->tmp);
                line(c, "const %s %s = %s;", vtype(d), z, v);
                f = fmt(c, "%s%s(%%f%%+fj)", f, sep);
                vals = fmt(c, "%s, (double)%s.re, (double)%s.im", vals, z, z);
            } else {
                f = fmt(c, "%s%s%%f", f, sep);
                vals = fmt(c, "%s, (double)(%s)", vals, conv(c, v, t, CK_FLOAT64));
            }
        }
        return fmt(c, "printf(\"%s\\n\"%s)", f, vals);
    }
    case PF_CAST:
        if (!a0) return literal(c, pyk_t_int_lit(c, 0), b->dtype);
        if (e->type->literal) return literal(c, e->type, pyk_t_strong(c, e->type)->dtype);
        return ex_as(c, a0, b->dtype);
    case PF_COMPLEX:
        if (!a1) return ex_as(c, a0, CK_COMPLEX128);
        return fmt(c, "ck_c128(%s, %s)", ex_as(c, a0, CK_FLOAT64), ex_as(c, a1, CK_FLOAT64));
    case PF_DIVMOD: {
        ck_dtype L = (ck_dtype)e->loop;
        const char *x = fmt(c, "ck_q%d", ++c->tmp), *y = fmt(c, "ck_r%d", ++c->tmp);
        line(c, "const %s %s = %s, %s = %s;", vtype(L), x, ex_as(c, a0, L), y, ex_as(c, a1, L));
        const pyk_type *lt = pyk_t_scalar(c, L);
        const char *as[2] = {x, y};
        const pyk_type *ts[2] = {lt, lt};
        return fmt(c, "%s{%s, %s}", pyk_t_ctype(c, e->type), apply_op(c, CK_OP_FLOOR_DIVIDE, 2, as, ts, L, L),
                   apply_op(c, CK_OP_REMAINDER, 2, as, ts, L, L));
    }
    case PF_GRID: case PF_GRIDSIZE: {
        if (c->coarse_on && b->id == PF_GRID && e->tag == 1) return "ck_gi";
        static const char xyz[] = "xyz";
        const char *parts[3];
        for (int k = 0; k < e->tag; k++)
            parts[k] = b->id == PF_GRID ? fmt(c, "ck_pyk_grid_%c()", xyz[k])
                                        : fmt(c, "((long long)gridDim.%c * blockDim.%c)", xyz[k], xyz[k]);
        if (e->tag == 1) return parts[0];
        if (e->tag == 2) return fmt(c, "%s{%s, %s}", pyk_t_ctype(c, e->type), parts[0], parts[1]);
        return fmt(c, "%s{%s, %s, %s}", pyk_t_ctype(c, e->type), parts[0], parts[1], parts[2]);
    }
    case PF_CG_THIS_GRID: return "ck_pyk_grid_group{}";
    case PF_SYNCTHREADS: return "__syncthreads()";
    case PF_SYNCTHREADS_COUNT: return fmt(c, "__syncthreads_count(%s)", ex_as(c, a0, CK_BOOL));
    case PF_SYNCTHREADS_AND: return fmt(c, "__syncthreads_and(%s)", ex_as(c, a0, CK_BOOL));
    case PF_SYNCTHREADS_OR: return fmt(c, "__syncthreads_or(%s)", ex_as(c, a0, CK_BOOL));
    case PF_SYNCWARP: return a0 ? fmt(c, "__syncwarp(%s)", ex_as(c, a0, CK_UINT32)) : "__syncwarp()";
    case PF_THREADFENCE: return "__threadfence()";
    case PF_THREADFENCE_BLOCK: return "__threadfence_block()";
    case PF_THREADFENCE_SYSTEM: return "__threadfence_system()";
    case PF_ATOMIC: {
        static const char *const names[] = {"add", "sub", "and", "or", "xor", "inc", "dec", "exch", "max", "min",
                                             "nanmax", "nanmin", "cas"};
        ck_dtype d = R;
        const char *addr = b->op == PYK_AT_CAS0 ? fmt(c, "&(%s).p[0]", ex(c, a0)) : atomic_addr(c, e);
        const char *st = pyk_t_storage(d);
        /* int64 and uint64 cells are long long and unsigned long long for CUDA's atomics */
        const char *ct = d == CK_INT64 ? "long long" : d == CK_UINT64 ? "unsigned long long" : st;
        if (b->op == PYK_AT_CAS0)
            return fmt(c, "ck_pyk_atomic_cas((%s *)%s, (%s)%s, (%s)%s)", ct, addr, ct, ex_as(c, a1, d), ct,
                       ex_as(c, a2, d));
        if (b->op == PYK_AT_CAS)
            return fmt(c, "ck_pyk_atomic_cas((%s *)%s, (%s)%s, (%s)%s)", ct, addr, ct, ex_as(c, a2, d), ct,
                       ex_as(c, arg_n(c, e, 3), d));
        return fmt(c, "(%s)ck_pyk_atomic_%s((%s *)%s, (%s)%s)", st, names[b->op], ct, addr, ct, ex_as(c, a2, d));
    }
    case PF_WARP_VOTE: {
        const char *mask = ex_as(c, a0, CK_UINT32);
        if (b->op == 0) return fmt(c, "(__all_sync(%s, %s) != 0)", mask, ex_as(c, a1, CK_BOOL));
        if (b->op == 1) return fmt(c, "(__any_sync(%s, %s) != 0)", mask, ex_as(c, a1, CK_BOOL));
        if (b->op == 2) {   /* every lane's value equals the first active lane's */
            ck_dtype d = a1->type && a1->type->k == T_SCALAR ? pyk_t_strong(c, a1->type)->dtype : CK_INT32;
            const char *m = fmt(c, "ck_m%d", ++c->tmp), *v = fmt(c, "ck_e%d", ++c->tmp);
            line(c, "const unsigned %s = %s;", m, mask);
            if (d == CK_BOOL || d == CK_FLOAT16) line(c, "const %s %s = %s;", d == CK_BOOL ? "int" : "float", v,
                                                      fmt(c, "(%s)(%s)", d == CK_BOOL ? "int" : "float", ex(c, a1)));
            else line(c, "const %s %s = %s;", pyk_t_storage(d), v, ex(c, a1));
            return fmt(c, "(__all_sync(%s, %s == __shfl_sync(%s, %s, __ffs((int)%s) - 1)) != 0)", m, v, m, v, m);
        }
        return fmt(c, "__ballot_sync(%s, %s)", mask, ex_as(c, a1, CK_BOOL));
    }
    case PF_SHFL: {
        static const char *const fns[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync"};
        const char *w = a2 && arg_n(c, e, 3) ? fmt(c, ", %s", ex_as(c, arg_n(c, e, 3), CK_INT32)) : "";
        ck_dtype d = R;
        const char *v = ex_as(c, a1, d);
        if (d == CK_BOOL) v = fmt(c, "(int)(%s)", v);
        else if (d == CK_FLOAT16) v = fmt(c, "(float)(%s)", v);
        const char *r = fmt(c, "%s(%s, %s, %s%s)", fns[b->op], ex_as(c, a0, CK_UINT32), v,
                            b->op == 0 || b->op == 3 ? ex_as(c, a2, CK_INT32) : ex_as(c, a2, CK_UINT32), w);
        return d == CK_BOOL ? fmt(c, "(%s != 0)", r) : d == CK_FLOAT16 ? fmt(c, "ck_f16(%s)", r) : r;
    }
    case PF_MATCH_ANY: return fmt(c, "__match_any_sync(%s, %s)", ex_as(c, a0, CK_UINT32), ex(c, a1));
    case PF_MATCH_ALL: {
        const char *p = fmt(c, "ck_p%d", ++c->tmp);
        line(c, "int %s;", p);
        return fmt(c, "%s{__match_all_sync(%s, %s, &%s), %s != 0}", pyk_t_ctype(c, e->type), ex_as(c, a0, CK_UINT32),
                   ex(c, a1), p, p);
    }
    case PF_ACTIVEMASK: return "__activemask()";
    case PF_LANEMASK_LT: return "ck_pyk_lanemask_lt()";
    case PF_BITOP: {
        static const char *const fns[] = {"__popc", "__brev", "__clz", "__ffs"};
        int wide = e->tag;
        const char *v = ex(c, a0);
        return fmt(c, "%s%s((%s)(%s))", fns[b->op], wide ? "ll" : "",
                   wide ? (b->op == 1 || b->op == 0 ? "unsigned long long" : "long long") : (b->op <= 1 ? "unsigned" : "int"), v);
    }
    case PF_FMA: {
        ck_dtype d = (ck_dtype)e->loop;
        return fmt(c, "%s(%s, %s, %s)", d == CK_FLOAT32 ? "fmaf" : "fma", ex_as(c, a0, d), ex_as(c, a1, d), ex_as(c, a2, d));
    }
    case PF_CBRT: {
        ck_dtype d = (ck_dtype)e->loop;
        return fmt(c, "%s(%s)", d == CK_FLOAT32 ? "cbrtf" : "cbrt", ex_as(c, a0, d));
    }
    case PF_SELP:
        return fmt(c, "(%s ? %s : %s)", ex_as(c, a0, CK_BOOL), ex_as(c, a1, R), ex_as(c, a2, R));
    case PF_HALF: {
        if (b->op == -2)
            return fmt(c, "ck_f16(fmaf((float)(%s), (float)(%s), (float)(%s)))", ex_as(c, a0, CK_FLOAT16),
                       ex_as(c, a1, CK_FLOAT16), ex_as(c, a2, CK_FLOAT16));
        int nin = ck_op_table[b->op].nin;
        const char *as[2] = {ex(c, a0), a1 ? ex(c, a1) : NULL};
        const pyk_type *ts[2] = {a0->type, a1 ? a1->type : NULL};
        return apply_op(c, b->op, nin, as, ts, CK_FLOAT16, R);
    }
    case PF_RANDOM: {
        static const char *const fns[] = {"uniform32", "uniform64", "normal32", "normal64", "next", "jump", "init"};
        const char *st = ex(c, a0);
        if (a0->kind != PK_NAME) {
            /* the states expression once: index_item reads its shape */
            st = fmt(c, "ck_a%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, a0->type), st, ex(c, a0));
        }
        const char *i = index_item(c, a1, st, 0, e->line, arg_number(c, a0));
        if (b->op == 6) return fmt(c, "ck_pyk_xoro_init(%s, %s, %s)", st, i, ex_as(c, a2, CK_UINT64));
        return fmt(c, "ck_pyk_xoro_%s(%s, %s)", fns[b->op], st, i);
    }
    default:
        pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "%s() cannot be written yet", b->name);
    }
}

static const char *call(pyk_ctx *c, pyk_node *e)
{
    pyk_node *fn = pyk_kid(e, 0);
    if (e->tag == -1 && fn->kind == PK_ATTRIBUTE && fn->type && fn->type->k == T_SCALAR) {   /* x.conjugate() */
        ck_dtype d = pyk_t_strong(c, fn->type)->dtype;
        const char *v = ex(c, pyk_kid(fn, 0));
        return ck_dtype_is_complex(d) ? fmt(c, "conj(%s)", v) : v;
    }
    if (e->tag == -2) {   /* g.sync(): the GPU's form (the CPU's regions end at it) */
        if (!c->opt->debug) return "(void)ck_pyk_grid_sync(ck_gs, nullptr)";
        line(c, "if (!ck_pyk_grid_sync(ck_gs, ck_err)) {");
        c->indent++;
        leave(c);
        c->indent--;
        line(c, "}");
        return "(void)0";
    }
    const pyk_type *ft = fn->type;
    if (ft->k == T_FUNC) return call_builtin(c, e, pyk_builtin_at(ft->entry));
    if (ft->k == T_DTYPE) {
        pyk_builtin cast = {ck_dtype_get_info(ft->dtype)->name, PB_DTYPE, PF_CAST, -1, 0, ft->dtype};
        return call_builtin(c, e, &cast);
    }
    if (ft->k == T_DEVFUNC) {
        pyk_func *f = c->funcs[e->tag];
        pyk_node *args = pyk_list(c, e, 1, PK_ARGS);
        const char *s = "";
        for (int i = 0; i < args->n; i++) {
            const pyk_type *pt = f->ptypes[i];
            const char *v = pt->k == T_SCALAR ? ex_as(c, args->v[i], pt->dtype) : ex(c, args->v[i]);
            s = fmt(c, "%s%s%s", s, i ? ", " : "", v);
        }
        if (c->opt->debug) s = fmt(c, "%s%sck_err", s, *s ? ", " : "");
        if (c->uses_grid_sync) s = fmt(c, "%s%sck_gs", s, *s ? ", " : "");
        if (!c->opt->debug) return fmt(c, "%s(%s)", f->cname, s);
        /* a debug call: a failure in the callee ends this function too */
        const char *r = NULL;
        if (f->ret && f->ret->k != T_NONE) {
            r = fmt(c, "ck_d%d", ++c->tmp);
            line(c, "const %s %s = %s(%s);", pyk_t_ctype(c, f->ret), r, f->cname, s);
        } else {
            line(c, "%s(%s);", f->cname, s);
        }
        line(c, "if (ck_pyk_failed(ck_err)) {");
        c->indent++;
        leave(c);
        c->indent--;
        line(c, "}");
        return r ? r : "(void)0";
    }
    pyk_fail(c, e, CK_ERR_TYPE, "cannot call a %s", pyk_t_str(c, ft));
}

/* --------------------------------------------------------- expressions */

static int x_is_zero(const pyk_node *x)
{
    return x->type && x->type->literal && x->type->weak && x->type->dtype == CK_INT64 && x->type->lit == 0;
}

static const char *tuple_value(pyk_ctx *c, pyk_node *e)
{
    const char *s = "";
    for (int i = 0; i < e->n; i++) {
        const pyk_type *et = e->type->elts[i];
        const char *v = et->k == T_SCALAR ? conv(c, ex(c, e->v[i]), e->v[i]->type, pyk_t_strong(c, et)->dtype)
                                          : ex(c, e->v[i]);
        s = fmt(c, "%s%s%s", s, i ? ", " : "", v);
    }
    return fmt(c, "%s{%s}", pyk_t_ctype(c, pyk_t_strong(c, e->type)), s);
}

static const char *compare(pyk_ctx *c, pyk_node *e)
{
    pyk_node *ops = pyk_list(c, e, 1, PK_OPS), *rights = pyk_list(c, e, 2, PK_VALUES);
    pyk_node *left = pyk_kid(e, 0);
    const char *lv = ex(c, left);
    const pyk_type *lt = left->type;
    const char *all = NULL;
    for (int i = 0; i < ops->n; i++) {
        const char *op = pyk_sym(c, ops, i);
        pyk_node *r = rights->v[i];
        const char *rv = ex(c, r);
        if (i + 1 < ops->n && !(r->type->literal && r->type->weak) && r->kind != PK_NAME) {
            /* the middle of a chain is evaluated once */
            const char *t = fmt(c, "ck_m%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, r->type), t, rv);
            rv = t;
        }
        const char *one;
        if (!strcmp(op, "is") || !strcmp(op, "isnot")) {
            int same = lt->k == T_NONE && r->type->k == T_NONE;
            one = (same == !strcmp(op, "is")) ? "true" : "false";
        } else if (!strcmp(op, "in") || !strcmp(op, "notin")) {
            const char *t = fmt(c, "ck_t%d", ++c->tmp), *lx = fmt(c, "ck_x%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, r->type), t, rv);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, lt)), lx, lv);
            one = "false";
            for (int k = 0; k < r->type->n; k++) {
                pyk_node tmp = *ops->v[i];
                pyk_binary(c, &tmp, CK_OP_EQUAL, pyk_t_strong(c, lt), r->type->elts[k]);
                const char *as[2] = {lx, fmt(c, "%s.v%d", t, k)};
                const pyk_type *ts[2] = {pyk_t_strong(c, lt), r->type->elts[k]};
                one = fmt(c, "%s || %s", one, apply_op(c, CK_OP_EQUAL, 2, as, ts, (ck_dtype)tmp.loop, CK_BOOL));
            }
            one = fmt(c, "%s(%s)", !strcmp(op, "notin") ? "!" : "", one);
        } else {
            int o = pyk_binop_of(op);
            const char *as[2] = {lv, rv};
            const pyk_type *ts[2] = {lt, r->type};
            one = apply_op(c, o, 2, as, ts, (ck_dtype)ops->v[i]->loop, CK_BOOL);
        }
        all = all ? fmt(c, "(%s && %s)", all, one) : one;
        lv = rv;
        lt = r->type;
    }
    return all;
}

static const char *boolop(pyk_ctx *c, pyk_node *e)
{
    int is_and = !strcmp(pyk_sym(c, e, 0), "and");
    if (e->tag) {   /* all bool */
        const char *s = ex_as(c, e->v[1], CK_BOOL);
        for (int i = 2; i < e->n; i++) s = fmt(c, "(%s %s %s)", s, is_and ? "&&" : "||", ex_as(c, e->v[i], CK_BOOL));
        return s;
    }
    /* Python's: the first false operand (and) or true one (or), else the last */
    ck_dtype d = pyk_t_strong(c, e->type)->dtype;
    const char *r = fmt(c, "ck_b%d", ++c->tmp);
    line(c, "%s %s = %s;", vtype(d), r, ex_as(c, e->v[1], d));
    for (int i = 2; i < e->n; i++) {
        line(c, "if (%sck_pyk_truth(%s)) {", is_and ? "" : "!", r);
        c->indent++;
        line(c, "%s = %s;", r, ex_as(c, e->v[i], d));
    }
    for (int i = 2; i < e->n; i++) {
        c->indent--;
        line(c, "}");
    }
    return r;
}

static const char *ifexp(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *t = e->type;
    const char *r = fmt(c, "ck_i%d", ++c->tmp);
    line(c, "%s %s;", pyk_t_ctype(c, t), r);
    line(c, "if (%s) {", ex_as(c, pyk_kid(e, 0), CK_BOOL));
    c->indent++;
    for (int k = 1; k <= 2; k++) {
        pyk_node *x = pyk_kid(e, k);
        line(c, "%s = %s;", r, t->k == T_SCALAR ? ex_as(c, x, t->dtype) : ex(c, x));
        if (k == 1) {
            c->indent--;
            line(c, "} else {");
            c->indent++;
        }
    }
    c->indent--;
    line(c, "}");
    return r;
}

static const char *global_value(pyk_ctx *c, pyk_node *e, const pyk_global *g)
{
    const pyk_type *t = g->type;
    if (t->k == T_SCALAR) return literal(c, t, pyk_t_strong(c, t)->dtype);
    if (t->k == T_TUPLE) {
        const char *s = "";
        for (int i = 0; i < t->n; i++)
            s = fmt(c, "%s%s%s", s, i ? ", " : "", t->elts[i]->k == T_SCALAR ? literal(c, t->elts[i], pyk_t_strong(c, t->elts[i])->dtype) : "?");
        return fmt(c, "%s{%s}", pyk_t_ctype(c, pyk_t_strong(c, t)), s);
    }
    if (t->k == T_ARRAY && t->space == PYK_CONST) {
        pyk_node *shape = pyk_list(c, g->node, 4, PK_TUPLE);
        const char *sh = "", *st = "";
        int64_t stride = ck_dtype_get_info(t->dtype)->itemsize;
        int64_t dims[32];
        for (int i = 0; i < shape->n; i++) dims[i] = pyk_kid(shape, i)->i;
        const char *strides[32];
        for (int i = shape->n - 1; i >= 0; i--) {
            strides[i] = fmt(c, "%lldll", (long long)stride);
            stride *= dims[i];
        }
        for (int i = 0; i < shape->n; i++) {
            sh = fmt(c, "%s%s%lldll", sh, i ? ", " : "", (long long)dims[i]);
            st = fmt(c, "%s%s%s", st, i ? ", " : "", strides[i]);
        }
        return fmt(c, "%s{(%s *)ck_const%d_%s, {%s}, {%s}}", pyk_t_ctype(c, t), pyk_t_storage(t->dtype),
                   c->cur->def_index, g->name, sh, st);
    }
    pyk_fail(c, e, CK_ERR_TYPE, "the global '%s' (a %s) has no value in a kernel", g->name, pyk_t_str(c, t));
}

static const char *ex_(pyk_ctx *c, pyk_node *e)
{
    const pyk_type *t = e->type;
    if (t && t->k == T_SCALAR && t->literal && t->weak && e->kind != PK_CALL && e->kind != PK_SUBSCRIPT)
        return literal(c, t, t->dtype);
    switch (e->kind) {
    case PK_NAME: {
        const char *id = pyk_sym(c, e, 0);
        if (pyk_var_find(c->cur, id)) return cname(c, id);
        pyk_global *g = pyk_global_find(c, id);
        if (g) return global_value(c, e, g);
        pyk_fail(c, e, CK_ERR_TYPE, "'%s' has no value in a kernel", id);
    }
    case PK_CONST:
        return literal(c, t, t->dtype);
    case PK_BINOP: {
        if (e->tag == -1) {   /* tuple + tuple */
            pyk_node *a = pyk_kid(e, 1), *b = pyk_kid(e, 2);
            const char *x = fmt(c, "ck_t%d", ++c->tmp), *y = fmt(c, "ck_t%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, a->type)), x, ex(c, a));
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, b->type)), y, ex(c, b));
            const char *s = "";
            for (int i = 0; i < a->type->n; i++) s = fmt(c, "%s%s%s.v%d", s, i ? ", " : "", x, i);
            for (int i = 0; i < b->type->n; i++) s = fmt(c, "%s%s%s.v%d", s, (i || a->type->n) ? ", " : "", y, i);
            return fmt(c, "%s{%s}", pyk_t_ctype(c, pyk_t_strong(c, t)), s);
        }
        pyk_node *a = pyk_kid(e, 1), *b = pyk_kid(e, 2);
        const char *as[2] = {ex(c, a), ex(c, b)};
        const pyk_type *ts[2] = {a->type, b->type};
        return apply_op(c, pyk_binop_of(pyk_sym(c, e, 0)), 2, as, ts, (ck_dtype)e->loop, pyk_t_strong(c, t)->dtype);
    }
    case PK_UNARYOP: {
        const char *op = pyk_sym(c, e, 0);
        pyk_node *a = pyk_kid(e, 1);
        if (!strcmp(op, "not")) return fmt(c, "(!%s)", ex_as(c, a, CK_BOOL));
        int o = !strcmp(op, "usub") ? CK_OP_NEGATIVE : !strcmp(op, "uadd") ? CK_OP_POSITIVE : CK_OP_INVERT;
        const char *as[1] = {ex(c, a)};
        const pyk_type *ts[1] = {a->type};
        ck_dtype L = (ck_dtype)e->loop;
        if (o == CK_OP_NEGATIVE && kindl(L) != 'C' && L != CK_FLOAT16 && L != CK_BOOL) {
            const char *v = fmt(c, "(-%s)", operand(c, as[0], ts[0], L));
            return ck_dtype_get_info(L)->itemsize < 4 ? fmt(c, "(%s)%s", vtype(L), v) : v;
        }
        return apply_op(c, o, 1, as, ts, L, pyk_t_strong(c, t)->dtype);
    }
    case PK_BOOLOP: return boolop(c, e);
    case PK_COMPARE: return compare(c, e);
    case PK_IFEXP: return ifexp(c, e);
    case PK_CALL: return call(c, e);
    case PK_ATTRIBUTE: {
        pyk_node *v = pyk_kid(e, 0);
        const char *attr = pyk_sym(c, e, 1);
        const pyk_type *vt = v->type;
        if (vt->k == T_DIM3) {
            const pyk_builtin *b = pyk_builtin_at(vt->entry);
            return fmt(c, "(int)%s.%s", b->name + 5, attr);
        }
        if (vt->k == T_MODULE) {
            const pyk_builtin *m = pyk_builtin_member(pyk_builtin_at(vt->entry), attr);
            if (m && m->bkind == PB_DIM3 && m->id == PF_LANEID) return "ck_pyk_laneid()";
            if (t->k == T_SCALAR) return literal(c, t, pyk_t_strong(c, t)->dtype);
            pyk_fail(c, e, CK_ERR_TYPE, "%s is not a value", m ? m->name : attr);
        }
        if (vt->k == T_ARRAY) {
            const char *a = ex(c, v);
            if (!strcmp(attr, "size")) return vt->ndim == 1 ? fmt(c, "%s.shape[0]", a) : fmt(c, "ck_pyk_size(%s)", a);
            if (!strcmp(attr, "shape") || !strcmp(attr, "strides")) {
                const char *s = "";
                for (int i = 0; i < vt->ndim; i++) s = fmt(c, "%s%s(%s).%s[%d]", s, i ? ", " : "", a, attr, i);
                return fmt(c, "%s{%s}", pyk_t_ctype(c, t), s);
            }
        }
        if (vt->k == T_SCALAR) {
            ck_dtype d = pyk_t_strong(c, vt)->dtype;
            const char *x = ex(c, v);
            int re = !strcmp(attr, "real");
            if (ck_dtype_is_complex(d)) return fmt(c, "(%s).%s", x, re ? "re" : "im");
            return re ? x : literal(c, pyk_t_int_lit(c, 0), d);
        }
        pyk_fail(c, e, CK_ERR_TYPE, "the attribute '%s' has no value here", attr);
    }
    case PK_SUBSCRIPT: {
        pyk_node *v = pyk_kid(e, 0), *ix = pyk_kid(e, 1);
        const pyk_type *vt = v->type;
        if (vt->k == T_TUPLE) {
            if (ix->kind == PK_SLICE) {
                const char *tv = fmt(c, "ck_t%d", ++c->tmp);
                line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, vt)), tv, ex(c, v));
                const char *s = "";
                for (int i = 0; i < t->n; i++) s = fmt(c, "%s%s%s.v%d", s, i ? ", " : "", tv, e->tag + i);
                return fmt(c, "%s{%s}", pyk_t_ctype(c, pyk_t_strong(c, t)), s);
            }
            /* a.shape[k]: read the array's field */
            if (v->kind == PK_ATTRIBUTE && pyk_kid(v, 0)->type->k == T_ARRAY &&
                (!strcmp(pyk_sym(c, v, 1), "shape") || !strcmp(pyk_sym(c, v, 1), "strides")))
                return fmt(c, "(%s).%s[%d]", ex(c, pyk_kid(v, 0)), pyk_sym(c, v, 1), e->tag);
            if (t->literal && t->weak) return literal(c, t, t->dtype);
            return fmt(c, "(%s).v%d", ex(c, v), e->tag);
        }
        if (t->k == T_SCALAR) {
            const char *el = element(c, e);
            return vt->dtype == CK_BOOL ? fmt(c, "(%s != 0)", el) : el;
        }
        return view(c, e);
    }
    case PK_TUPLE: case PK_LIST:
        return tuple_value(c, e);
    default:
        pyk_fail(c, e, CK_ERR_NOT_IMPLEMENTED, "a %s cannot be written", pyk_kind_name(e->kind));
    }
}

static const char *ex(pyk_ctx *c, pyk_node *e)
{
    if (!e->type) pyk_fail(c, e, CK_ERR_TYPE, "an expression was not typed");
    return ex_(c, e);
}

/* ------------------------------------------------------------ statements */

/* The source text of line n of the function being written. */
static const char *source_line(pyk_ctx *c, int n)
{
    pyk_node *src = pyk_kid(c->cur->def, 3);
    if (!src || src->kind != PK_VALUES) return NULL;
    int first = (int)pyk_kid(src, 0)->i, k = n - first + 1;
    pyk_node *l = pyk_kid(src, k);
    return l && l->atom == PA_STR ? l->s : NULL;
}

static void position(pyk_ctx *c, const pyk_node *s)
{
    if (!s->line) return;
    if (c->opt->lineinfo && c->opt->filename) ck_sbuf_printf(&c->body, "#line %d \"%s\"\n", s->line, c->opt->filename);
    const char *text = source_line(c, s->line);
    if (!text) {
        line(c, "/* line %d */", s->line);
        return;
    }
    while (*text == ' ' || *text == '\t') text++;
    char buf[200];
    size_t k = 0;
    for (const char *p = text; *p && k < sizeof buf - 8; p++) {
        if (p[0] == '*' && p[1] == '/') { buf[k++] = '*'; buf[k++] = ' '; continue; }
        buf[k++] = *p;
    }
    buf[k] = '\0';
    line(c, "/* %d: %s */", s->line, buf);
}

/* target = value (the value already a C expression of type t). */
static void assign(pyk_ctx *c, pyk_node *target, const char *v, const pyk_type *t)
{
    switch (target->kind) {
    case PK_NAME: {
        const char *id = pyk_sym(c, target, 0);
        pyk_var *var = pyk_var_find(c->cur, id);
        if (var->array_decl) return;   /* made at the top of the function */
        const pyk_type *vt = var->type;
        line(c, "%s = %s;", cname(c, id), vt->k == T_SCALAR ? conv(c, v, t, vt->dtype) : v);
        return;
    }
    case PK_TUPLE: case PK_LIST: {
        const char *tv = fmt(c, "ck_t%d", ++c->tmp);
        line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, t)), tv, v);
        for (int i = 0; i < target->n; i++) assign(c, target->v[i], fmt(c, "%s.v%d", tv, i), pyk_t_strong(c, t->elts[i]));
        return;
    }
    case PK_SUBSCRIPT: {
        const pyk_type *dst = target->type;
        if (dst->k == T_SCALAR) {
            ck_dtype d = pyk_kid(target, 0)->type->dtype;
            const char *val = conv(c, v, t, d);
            if (d == CK_BOOL) val = fmt(c, "(uint8_t)(%s)", val);
            line(c, "%s = %s;", element(c, target), val);
            if (c->vec_on) {
                /* an array never read is not loaded: its lanes written are the ones stored */
                const char *an = pyk_sym(c, pyk_kid(target, 0), 0);
                if (co_vec_.role[pyk_var_find(c->cur, an)->param] == CO_WRITTEN) line(c, "ck_m_%s |= 1u << ck_u;", an);
            }
        } else {
            ck_dtype d = dst->dtype;
            line(c, "ck_pyk_fill(%s, %s);", view(c, target), conv(c, v, t, d == CK_BOOL ? CK_BOOL : d));
        }
        return;
    }
    default:
        pyk_fail(c, target, CK_ERR_NOT_IMPLEMENTED, "an assignment to a %s", pyk_kind_name(target->kind));
    }
}

/* The loops being written, innermost last: how break reaches its for-else flag. */
typedef struct loop_ctx {
    const char *broke, *brk_label, *cont_label;
    const char *rg_brk, *rg_cont;   /* a loop of barrier regions: the flags a thread's break and continue set */
    int grid;                       /* a loop around grid barriers (its regions span the grid) */
} loop_ctx;
static _Thread_local loop_ctx loops_[64];
static _Thread_local int nloops_;

static void push_loop(pyk_ctx *c, const pyk_node *s, const char *broke, const char *bl, const char *cl)
{
    if (nloops_ >= 64) pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "loops nested more than 64 deep");
    loops_[nloops_++] = (loop_ctx){broke, bl, cl, NULL, NULL, 0};
}

static void for_stmt(pyk_ctx *c, pyk_node *s)
{
    pyk_node *target = pyk_kid(s, 0), *iter = pyk_kid(s, 1);
    pyk_node *body = pyk_list(c, s, 2, PK_BODY), *orelse = pyk_list(c, s, 3, PK_ORELSE);
    const pyk_type *it = iter->type;
    int id = ++c->tmp;
    const char *broke = orelse->n ? fmt(c, "ck_broke%d", id) : NULL;
    if (broke) line(c, "bool %s = false;", broke);
    line(c, "{");
    c->indent++;
    if (it->k == T_RANGE) {
        pyk_node *args = pyk_list(c, iter, 1, PK_ARGS);
        ck_dtype d = (ck_dtype)iter->loop;
        const char *vt = vtype(d);
        const char *start = args->n > 1 ? ex_as(c, args->v[0], d) : literal(c, pyk_t_int_lit(c, 0), d);
        const char *stop = ex_as(c, args->v[args->n > 1 ? 1 : 0], d);
        pyk_node *stepn = args->n > 2 ? args->v[2] : NULL;
        const char *step = stepn ? ex_as(c, stepn, d) : literal(c, pyk_t_int_lit(c, 1), d);
        const char *k = fmt(c, "ck_k%d", id), *e = fmt(c, "ck_e%d", id), *st = fmt(c, "ck_s%d", id);
        line(c, "const %s %s = %s, %s = %s;", vt, e, stop, st, step);
        const char *cond;
        if (!stepn || (stepn->type->literal && stepn->type->lit > 0)) cond = fmt(c, "%s < %s", k, e);
        else if (stepn->type->literal) cond = fmt(c, "%s > %s", k, e);
        else cond = fmt(c, "(%s > 0 ? %s < %s : %s > %s)", st, k, e, k, e);
        line(c, "for (%s %s = %s; %s; %s += %s) {", vt, k, start, cond, k, st);
        c->indent++;
        assign(c, target, k, pyk_t_scalar(c, d));
    } else if (it->k == T_ARRAY) {
        const char *a = fmt(c, "ck_a%d", id), *k = fmt(c, "ck_k%d", id);
        line(c, "const %s %s = %s;", pyk_t_ctype(c, it), a, ex(c, iter));
        line(c, "for (long long %s = 0; %s < %s.shape[0]; %s++) {", k, k, a, k);
        c->indent++;
        if (it->ndim == 1) {
            const char *el = fmt(c, "*(%s *)((char *)%s.p + %s * %s.strides[0])", pyk_t_storage(it->dtype), a, k, a);
            if (it->dtype == CK_BOOL) el = fmt(c, "(%s != 0)", el);
            assign(c, target, el, pyk_t_scalar(c, it->dtype));
        } else {
            const pyk_type *rt = pyk_t_array(c, it->dtype, it->ndim - 1, it->layout == 'C' ? 'C' : 'A', it->space, it->readonly);
            const char *r = fmt(c, "ck_r%d", id);
            line(c, "%s %s;", pyk_t_ctype(c, rt), r);
            line(c, "%s.p = (%s *)((char *)%s.p + %s * %s.strides[0]);", r, pyk_t_storage(it->dtype), a, k, a);
            line(c, "for (int d = 1; d < %d; d++) { %s.shape[d - 1] = %s.shape[d]; %s.strides[d - 1] = %s.strides[d]; }",
                 it->ndim, r, a, r, a);
            assign(c, target, r, rt);
        }
    } else if (it->k == T_TUPLE) {
        /* unrolled: break and continue jump */
        const char *t = fmt(c, "ck_t%d", id), *end = fmt(c, "ck_end%d", id);
        line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, it)), t, ex(c, iter));
        for (int i = 0; i < it->n; i++) {
            const char *next = fmt(c, "ck_next%d_%d", id, i);
            line(c, "{");
            c->indent++;
            assign(c, target, fmt(c, "%s.v%d", t, i), pyk_t_strong(c, it->elts[i]));
            push_loop(c, s, broke, end, next);
            block(c, body);
            nloops_--;
            c->indent--;
            line(c, "}");
            line(c, "%s:;", next);
        }
        line(c, "%s:;", end);
        c->indent--;
        line(c, "}");
        loop_else(c, broke, orelse);
        return;
    } else if (it->k == T_ITER) {
        /* enumerate(x[, start]) or zip(a, b, ...): a counter over the shortest */
        const char *k = fmt(c, "ck_k%d", id), *n = fmt(c, "ck_n%d", id);
        pyk_node *args = pyk_list(c, iter, 1, PK_ARGS);
        const char *srcs[8];
        const char *len = NULL;
        for (int i = 0; i < it->n; i++) {
            srcs[i] = fmt(c, "ck_z%d_%d", id, i);
            const pyk_type *at = it->elts[i];
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, at)), srcs[i], ex(c, args->v[i]));
            const char *li = at->k == T_TUPLE ? fmt(c, "%dll", at->n) : fmt(c, "%s.shape[0]", srcs[i]);
            len = len ? fmt(c, "(%s < %s ? %s : %s)", len, li, len, li) : li;
        }
        for (int i = 0; i < it->n; i++)
            if (it->elts[i]->k == T_TUPLE)
                pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "enumerate() and zip() of tuples (arrays are supported)");
        line(c, "const long long %s = %s;", n, len);
        const char *start = it->entry == 0 && args->n > 1 ? ex_as(c, args->v[1], CK_INT64) : "0ll";
        line(c, "for (long long %s = 0; %s < %s; %s++) {", k, k, n, k);
        c->indent++;
        const pyk_type *item = target->type;
        const char *parts = "";
        int m = 0;
        if (it->entry == 0) parts = fmt(c, "%s + %s", k, start), m++;
        for (int i = 0; i < it->n; i++) {
            const pyk_type *at = it->elts[i];
            if (at->ndim != 1) pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "enumerate() and zip() of arrays of one dimension");
            const char *el = fmt(c, "*(%s *)((char *)%s.p + %s * %s.strides[0])", pyk_t_storage(at->dtype), srcs[i], k, srcs[i]);
            if (at->dtype == CK_BOOL) el = fmt(c, "(%s != 0)", el);
            parts = fmt(c, "%s%s%s", parts, m++ ? ", " : "", el);
        }
        assign(c, target, fmt(c, "%s{%s}", pyk_t_ctype(c, pyk_t_strong(c, item)), parts), item);
    } else {
        pyk_fail(c, s, CK_ERR_TYPE, "cannot loop over a %s", pyk_t_str(c, it));
    }
    push_loop(c, s, broke, NULL, NULL);
    block(c, body);
    nloops_--;
    c->indent--;
    line(c, "}");
    c->indent--;
    line(c, "}");
    loop_else(c, broke, orelse);
}

/* Leave the function: a return, or a raise or failed assert after its report. */
static _Thread_local int co_jumped_;   /* a return in the coarsened loop: its label is wanted */

static void leave(pyk_ctx *c)
{
    pyk_func *f = c->cur;
    if (f->is_kernel && c->coarse_on) {
        line(c, "goto %s;", co_label_);   /* this thread's index is done, not the loop */
        co_jumped_ = 1;
    } else if (f->is_kernel && rg_on_) {
        line(c, "ck_F->ck_done = 1;");
        line(c, "goto %s;", rg_end_);
        rg_end_used_ = 1;
    } else if (f->is_kernel || !f->ret || f->ret->k == T_NONE) {
        line(c, "return;");
    } else {
        line(c, "return %s{};", pyk_t_ctype(c, f->ret));
    }
}

static void stmt(pyk_ctx *c, pyk_node *s)
{
    position(c, s);
    switch (s->kind) {
    case PK_ASSIGN: {
        pyk_node *targets = pyk_list(c, s, 0, PK_TARGETS), *value = pyk_kid(s, 1);
        if (targets->n == 1 && targets->v[0]->kind == PK_NAME) {
            pyk_var *var = pyk_var_find(c->cur, pyk_sym(c, targets->v[0], 0));
            if (var->array_decl && var->decl == value) return;   /* shared/local arrays: at the top */
        }
        const char *v = ex(c, value);
        if (targets->n > 1 && value->type->k != T_ARRAY) {
            const char *t = fmt(c, "ck_v%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, value->type)), t, v);
            v = t;
        }
        for (int i = 0; i < targets->n; i++) assign(c, targets->v[i], v, value->type);
        return;
    }
    case PK_ANNASSIGN: {
        pyk_node *target = pyk_kid(s, 0), *value = pyk_kid(s, 2);
        if (value) assign(c, target, ex(c, value), value->type);
        return;
    }
    case PK_AUGASSIGN: {
        pyk_node *target = pyk_kid(s, 1), *value = pyk_kid(s, 2);
        int op = pyk_binop_of(pyk_sym(c, s, 0));
        ck_dtype L = (ck_dtype)s->loop;
        if (target->kind == PK_SUBSCRIPT) {
            /* the element's address once: a[f(i)] += v evaluates f(i) once */
            const char *el = element(c, target);
            const char *p = fmt(c, "ck_p%d", ++c->tmp);
            ck_dtype d = pyk_kid(target, 0)->type->dtype;
            line(c, "%s *%s = &%s;", pyk_t_storage(d), p, el);
            const char *cur = fmt(c, "(*%s)", p);
            if (d == CK_BOOL) cur = fmt(c, "(%s != 0)", cur);
            const char *as[2] = {cur, ex(c, value)};
            const pyk_type *ts[2] = {pyk_t_scalar(c, d), value->type};
            ck_dtype rd = pyk_t_strong(c, pyk_binary(c, &(pyk_node){.loop = 0}, op, ts[0], ts[1]))->dtype;
            const char *r = apply_op(c, op, 2, as, ts, L, rd);
            const char *val = conv(c, r, pyk_t_scalar(c, rd), d);
            if (d == CK_BOOL) val = fmt(c, "(uint8_t)(%s)", val);
            line(c, "*%s = %s;", p, val);
            return;
        }
        const char *id = pyk_sym(c, target, 0);
        pyk_var *var = pyk_var_find(c->cur, id);
        const char *as[2] = {cname(c, id), ex(c, value)};
        const pyk_type *ts[2] = {var->type, value->type};
        ck_dtype rd = pyk_t_strong(c, pyk_binary(c, &(pyk_node){.loop = 0}, op, var->type, value->type))->dtype;
        line(c, "%s = %s;", cname(c, id), conv(c, apply_op(c, op, 2, as, ts, L, rd), pyk_t_scalar(c, rd), var->type->dtype));
        return;
    }
    case PK_FOR:
        for_stmt(c, s);
        return;
    case PK_WHILE: {
        pyk_node *orelse = pyk_list(c, s, 2, PK_ORELSE);
        int id = ++c->tmp;
        const char *broke = orelse->n ? fmt(c, "ck_broke%d", id) : NULL;
        if (broke) line(c, "bool %s = false;", broke);
        line(c, "for (;;) {");
        c->indent++;
        /* the test is written inside the loop, where its temporaries are made each time */
        const char *test = ex_as(c, pyk_kid(s, 0), CK_BOOL);
        line(c, "if (!%s) break;", test);
        push_loop(c, s, broke, NULL, NULL);
        block(c, pyk_list(c, s, 1, PK_BODY));
        nloops_--;
        c->indent--;
        line(c, "}");
        loop_else(c, broke, orelse);
        return;
    }
    case PK_IF: {
        line(c, "if (%s) {", ex_as(c, pyk_kid(s, 0), CK_BOOL));
        c->indent++;
        block(c, pyk_list(c, s, 1, PK_BODY));
        c->indent--;
        pyk_node *orelse = pyk_list(c, s, 2, PK_ORELSE);
        if (orelse->n) {
            line(c, "} else {");
            c->indent++;
            block(c, orelse);
            c->indent--;
        }
        line(c, "}");
        return;
    }
    case PK_EXPR: {
        pyk_node *e = pyk_kid(s, 0);
        const char *v = ex(c, e);
        if (e->kind == PK_CALL || e->kind == PK_BOOLOP || e->kind == PK_IFEXP) line(c, "%s;", v);
        else line(c, "(void)(%s);", v);
        return;
    }
    case PK_RETURN: {
        pyk_node *v = pyk_kid(s, 0);
        pyk_func *f = c->cur;
        if (f->is_kernel || f->ret->k == T_NONE) {
            if (v && v->type->k != T_NONE) line(c, "(void)(%s);", ex(c, v));
            leave(c);
            return;
        }
        if (!v) pyk_fail(c, s, CK_ERR_TYPE, "%s() returns a value elsewhere: return one here too", f->name);
        const char *x = ex(c, v);
        if (f->ret->k == T_SCALAR) x = conv(c, x, v->type, f->ret->dtype);
        else if (f->ret->k == T_TUPLE && !pyk_t_equal(pyk_t_strong(c, v->type), f->ret)) {
            const char *t = fmt(c, "ck_t%d", ++c->tmp);
            line(c, "const %s %s = %s;", pyk_t_ctype(c, pyk_t_strong(c, v->type)), t, x);
            const char *p = "";
            for (int i = 0; i < f->ret->n; i++)
                p = fmt(c, "%s%s%s", p, i ? ", " : "",
                        f->ret->elts[i]->k == T_SCALAR
                            ? conv(c, fmt(c, "%s.v%d", t, i), pyk_t_strong(c, v->type)->elts[i], f->ret->elts[i]->dtype)
                            : fmt(c, "%s.v%d", t, i));
            x = fmt(c, "%s{%s}", pyk_t_ctype(c, f->ret), p);
        }
        line(c, "return %s;", x);
        return;
    }
    case PK_PASS:
        return;
    case PK_BREAK:
    case PK_CONTINUE: {
        loop_ctx *l = &loops_[nloops_ - 1];
        if (l->rg_brk) {   /* out of a loop of regions: the flag, then the region's end */
            line(c, "%s = 1;", s->kind == PK_BREAK ? l->rg_brk : l->rg_cont);
            if (l->grid) line(c, "ck_bj = 1;");
            line(c, "goto %s;", rg_end_);
            rg_end_used_ = 1;
            return;
        }
        if (s->kind == PK_BREAK) {
            if (l->broke) line(c, "%s = true;", l->broke);
            if (l->brk_label) line(c, "goto %s;", l->brk_label);
            else line(c, "break;");
        } else {
            if (l->cont_label) line(c, "goto %s;", l->cont_label);
            else line(c, "continue;");
        }
        return;
    }
    case PK_RAISE: {
        /* (raise line col number class message): with debug, recorded for the host to raise */
        pyk_node *num = pyk_kid(s, 0);
        if (c->opt->debug) line(c, "ck_pyk_report(ck_err, 2, %d, %lld, 0, 0);", s->line, (long long)(num ? num->i : 0));
        leave(c);
        return;
    }
    case PK_ASSERT: {
        if (!c->opt->debug) return;   /* as Numba: assertions are checked in debug kernels */
        pyk_node *num = pyk_kid(s, 1);
        line(c, "if (!%s) {", ex_as(c, pyk_kid(s, 0), CK_BOOL));
        c->indent++;
        line(c, "ck_pyk_report(ck_err, 3, %d, %lld, 0, 0);", s->line, (long long)(num ? num->i : 0));
        leave(c);
        c->indent--;
        line(c, "}");
        return;
    }
    default:
        pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "a %s statement cannot be written", pyk_kind_name(s->kind));
    }
}

/* A loop's else: it runs when the loop ended without a break (broke: the
 * loop's break flag, NULL when it has no else). */
static void loop_else(pyk_ctx *c, const char *broke, pyk_node *orelse)
{
    if (!broke) return;
    line(c, "if (!%s) {", broke);
    c->indent++;
    block(c, orelse);
    c->indent--;
    line(c, "}");
}

static void block(pyk_ctx *c, pyk_node *body)
{
    for (int i = 0; i < body->n; i++) stmt(c, body->v[i]);
}

/* ------------------------------------------------------------ functions */

/* The arrays cuda.shared.array and cuda.local.array make, in one of four
 * parts: ARR_ALL the declarations and the variables' values (the GPU's
 * form); for barrier regions, ARR_SHARED the shared buffers (once, at the
 * top), ARR_FRAME the local buffers (members of a thread's frame) and
 * ARR_VALUES each thread's variables; for the grid's regions, ARR_GRID_TYPE
 * the members of a block's shared buffers and ARR_GRID_BLOCK the shared
 * arrays of block ck_b (in the grid's memory). */
enum { ARR_ALL, ARR_SHARED, ARR_FRAME, ARR_VALUES, ARR_GRID_TYPE, ARR_GRID_BLOCK };

static void declare_arrays(pyk_ctx *c, pyk_func *f, int part)
{
    for (int i = 0; i < f->nvars; i++) {
        pyk_var *v = &f->vars[i];
        if (!v->array_decl) continue;
        const pyk_type *t = v->type;
        const char *nm = cname(c, v->name), *pn = plain_name(c, v->name), *st = pyk_t_storage(t->dtype);
        pyk_node *shape = pyk_kid(pyk_list(c, v->decl, 1, PK_ARGS), 0);
        if (!shape) {   /* shape= */
            pyk_node *kw = pyk_kid(v->decl, 2);
            for (int k = 0; kw && k < kw->n; k++)
                if (!strcmp(pyk_sym(c, kw->v[k], 0), "shape")) shape = pyk_kid(kw->v[k], 1);
        }
        int64_t dims[8];
        int nd = 0;
        if (shape->type->k == T_TUPLE) {
            for (int k = 0; k < shape->type->n; k++) dims[nd++] = shape->type->elts[k]->lit;
        } else {
            dims[nd++] = shape->type->lit;
        }
        int64_t total = 1;
        for (int k = 0; k < nd; k++) total *= dims[k];
        const char *sh = "", *strd = "";
        int64_t stride = ck_dtype_get_info(t->dtype)->itemsize;
        const char *sv[8];
        for (int k = nd - 1; k >= 0; k--) {
            sv[k] = fmt(c, "%lldll", (long long)stride);
            stride *= dims[k];
        }
        for (int k = 0; k < nd; k++) {
            sh = fmt(c, "%s%s%lldll", sh, k ? ", " : "", (long long)dims[k]);
            strd = fmt(c, "%s%s%s", strd, k ? ", " : "", sv[k]);
        }
        int shared = t->space == PYK_SHARED;
        if (part == ARR_GRID_TYPE || part == ARR_GRID_BLOCK) {
            if (!shared) continue;
            const char *ct = pyk_t_ctype(c, t);
            if (part == ARR_GRID_TYPE && total) line(c, "    %s %s_buf[%lld];", st, pn, (long long)total);
            if (part == ARR_GRID_BLOCK && total)
                line(c, "%s %s = %s{ck_sh[ck_b].%s_buf, {%s}, {%s}};", ct, nm, ct, pn, sh, strd);
            if (part == ARR_GRID_BLOCK && !total)
                line(c, "%s %s = %s{(%s *)(ck_dsm + (size_t)ck_b * ck_dsm_step), {9223372036854775807ll / %d}, {%d}};",
                     ct, nm, ct, st, ck_dtype_get_info(t->dtype)->itemsize, ck_dtype_get_info(t->dtype)->itemsize);
            continue;
        }
        /* in regions a shared array is a local of the block (declared with its value), a local one a frame's */
        const char *decl = part == ARR_SHARED ? fmt(c, "%s ", pyk_t_ctype(c, t)) : "";
        int value = part == ARR_ALL || (part == ARR_SHARED && shared) || (part == ARR_VALUES && !shared);
        if (shared && total == 0) {
            if (value)
                line(c, "%s%s = %s{ck_pyk_dyn_shared<%s>(), {9223372036854775807ll / %d}, {%d}};", decl, nm,
                     pyk_t_ctype(c, t), st, ck_dtype_get_info(t->dtype)->itemsize, ck_dtype_get_info(t->dtype)->itemsize);
            continue;
        }
        if (part == ARR_ALL || (part == ARR_SHARED && shared) || (part == ARR_FRAME && !shared))
            line(c, "%s%s %s_buf[%lld];", shared && part != ARR_FRAME ? "__shared__ " : "", st, pn, (long long)total);
        if (value)
            line(c, "%s%s = %s{%s%s_buf, {%s}, {%s}};", decl, nm, pyk_t_ctype(c, t), part == ARR_VALUES ? "ck_F->" : "",
                 pn, sh, strd);
    }
}


/* ------------------------------------------------ the CPU's barrier regions */

/* A kernel whose barriers are all its own (none in a device function, no
 * warp function) is written a second time, for CUDAKIT_CPU, as loops over
 * the block's threads between barriers (as MCUDA does): thread 0's call
 * runs the whole block and the others return at once; each region is a
 * loop over the threads that have not returned; each thread's variables
 * live in its frame.  Running the code between two barriers one thread
 * after another is what the barrier allows.  A condition around a barrier
 * (if, while, for over a range) is the same for every thread, as CUDA
 * requires; it is taken from the first thread still running.  The block
 * then runs as plain loops instead of fibers (the CPU runtime sees no
 * barrier: the GPU's form is under #ifndef CUDAKIT_CPU).
 *
 * A kernel that synchronises its grid (g.sync()) is written the same way
 * one level up: thread 0 of block 0 runs the whole grid.  Its statements
 * are split at grid barriers into segments; a segment runs block after
 * block, each block's part in the regions above (its syncthreads and the
 * conditions around them its own).  Every thread of the grid has a frame
 * and every block its shared arrays, kept across segments, which is what
 * bounds the grid the CPU accepts for a cooperative launch (cpu_module.c).
 * A condition around a grid barrier is taken from the first thread of the
 * grid still running, as all must agree; a break or continue of a loop
 * around grid barriers ends its block's part of the segment (ck_bj), and
 * the loop is left or turned after the segment. */

enum { RI_STMT, RI_LINE, RI_ASSIGN, RI_COND, RI_ACC, RI_RANGE };
typedef struct rg_item {
    int kind;
    pyk_node *node;
    const char *text, *text2;
    const pyk_type *type;
    int op;
} rg_item;
typedef struct rg_list { rg_item *v; int n, cap, fresh; /* fresh: the first region, which makes the frames */ } rg_list;

/* the frame's extra members and the block-level flags being written */
static _Thread_local ck_sbuf *rg_members_;
static _Thread_local ck_sbuf *rg_flags_;
/* where a thread goes when every thread (of the block, in a grid's
 * segment) has returned, and whether something went there */
static _Thread_local const char *rg_done_;
static _Thread_local int rg_done_used_;

static void rg_add(pyk_ctx *c, rg_list *l, rg_item it)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        rg_item *v = pyk_alloc(c, (size_t)cap * sizeof *v);
        if (l->n) memcpy(v, l->v, (size_t)l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = it;
}

static const char *rg_flag(pyk_ctx *c, const char *stem, int init)
{
    const char *f = fmt(c, "ck_%s%d", stem, ++c->tmp);
    ck_sbuf_printf(rg_flags_, "    int %s = %d;\n    (void)%s;\n", f, init, f);
    return f;
}

/* The builtin a call calls, or NULL. */
static const pyk_builtin *rg_callee(const pyk_node *e)
{
    if (e->kind != PK_CALL || !e->n || !e->v[0]->type || e->v[0]->type->k != T_FUNC) return NULL;
    return pyk_builtin_at(e->v[0]->type->entry);
}

static int rg_is_sync(int id)
{
    return id == PF_SYNCTHREADS || id == PF_SYNCTHREADS_COUNT || id == PF_SYNCTHREADS_AND || id == PF_SYNCTHREADS_OR;
}

/* 1: n holds a block barrier; 2: something only fibers can run (warp
 * functions, barriers or grid sync in a device function); 4: a grid
 * barrier (g.sync()). */
static int rg_scan(pyk_ctx *c, const pyk_node *n, int depth)
{
    if (!n || n->kind == PK_ATOM) return 0;
    int m = 0;
    if (n->kind == PK_CALL) {
        const pyk_builtin *b = rg_callee(n);
        if (b && rg_is_sync(b->id)) m |= 1;
        if (b && (b->id == PF_SYNCWARP || b->id == PF_WARP_VOTE || b->id == PF_SHFL || b->id == PF_MATCH_ANY ||
                  b->id == PF_MATCH_ALL))
            m |= 2;
        if (n->tag == -2) m |= 4;
        const pyk_type *ft = n->n ? n->v[0]->type : NULL;
        if (ft && ft->k == T_DEVFUNC && n->tag >= 0 && n->tag < c->nfuncs) {
            if (depth > 16) return 2;
            if (rg_scan(c, c->funcs[n->tag]->def, depth + 1)) m |= 2;
        }
    }
    for (int i = 0; i < n->n && m != 7; i++) m |= rg_scan(c, n->v[i], depth);
    return m;
}

/* cuda.syncthreads() as a statement, or [name =] cuda.syncthreads_count/and/or(p). */
static pyk_node *rg_barrier_stmt(pyk_ctx *c, pyk_node *s, pyk_node **target)
{
    *target = NULL;
    pyk_node *e = NULL;
    if (s->kind == PK_EXPR) {
        e = pyk_kid(s, 0);
    } else if (s->kind == PK_ASSIGN) {
        pyk_node *t = pyk_list(c, s, 0, PK_TARGETS);
        if (t->n != 1 || t->v[0]->kind != PK_NAME) return NULL;
        *target = t->v[0];
        e = pyk_kid(s, 1);
    }
    const pyk_builtin *b = e ? rg_callee(e) : NULL;
    if (!b || !rg_is_sync(b->id)) return NULL;
    if (b->id == PF_SYNCTHREADS && *target) return NULL;
    pyk_node *args = pyk_list(c, e, 1, PK_ARGS);
    for (int i = 0; i < args->n; i++)
        if (rg_scan(c, args->v[i], 0)) return NULL;
    return e;
}

/* g.sync() as a statement. */
static int rg_grid_sync_stmt(const pyk_node *s)
{
    const pyk_node *e = s->kind == PK_EXPR ? pyk_kid(s, 0) : NULL;
    return e && e->kind == PK_CALL && e->tag == -2;
}

static int rg_fits(pyk_ctx *c, pyk_node *body, int grid);

/* Whether a statement's barriers are all where regions can split: block
 * barriers (grid 0), or grid barriers with block barriers between them
 * (grid 1). */
static int rg_fits_stmt(pyk_ctx *c, pyk_node *s, int grid)
{
    pyk_node *target;
    int m = rg_scan(c, s, 0);
    if (m & 2) return 0;
    if (!(m & (grid ? 4 : 1))) return !grid || !(m & 1) || rg_fits_stmt(c, s, 0);
    if (grid ? rg_grid_sync_stmt(s) : rg_barrier_stmt(c, s, &target) != NULL) return 1;
    switch (s->kind) {
    case PK_IF:
        return !rg_scan(c, pyk_kid(s, 0), 0) && rg_fits(c, pyk_list(c, s, 1, PK_BODY), grid) &&
               rg_fits(c, pyk_list(c, s, 2, PK_ORELSE), grid);
    case PK_WHILE:
        return !pyk_list(c, s, 2, PK_ORELSE)->n && !rg_scan(c, pyk_kid(s, 0), 0) &&
               rg_fits(c, pyk_list(c, s, 1, PK_BODY), grid);
    case PK_FOR:
        return !pyk_list(c, s, 3, PK_ORELSE)->n && pyk_kid(s, 0)->kind == PK_NAME &&
               pyk_kid(s, 1)->type->k == T_RANGE && !rg_scan(c, pyk_kid(s, 1), 0) &&
               rg_fits(c, pyk_list(c, s, 2, PK_BODY), grid);
    default:
        return 0;
    }
}

static int rg_fits(pyk_ctx *c, pyk_node *body, int grid)
{
    for (int i = 0; i < body->n; i++)
        if (!rg_fits_stmt(c, body->v[i], grid)) return 0;
    return 1;
}

/* Whether a statement may break or continue (a loop of its own's too: a
 * few needless tests after a region at most). */
static int rg_jumps(const pyk_node *n)
{
    if (!n || n->kind == PK_ATOM) return 0;
    if (n->kind == PK_BREAK || n->kind == PK_CONTINUE) return 1;
    for (int i = 0; i < n->n; i++)
        if (rg_jumps(n->v[i])) return 1;
    return 0;
}

/* Whether a region's items may break or continue. */
static int rg_items_jump(const rg_list *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].kind == RI_STMT && rg_jumps(l->v[i].node)) return 1;
    return 0;
}

/* After the regions of a loop's body where a thread may have left it: the
 * loop is left, or turned, for all. */
static void rg_loop_jumps(pyk_ctx *c, const loop_ctx *lp)
{
    line(c, "if (%s) break;", lp->rg_brk);
    line(c, "if (%s) {", lp->rg_cont);
    line(c, "    %s = 0;", lp->rg_cont);
    line(c, "    goto %s;", lp->cont_label);
    line(c, "}");
}

/* One region: the items, for each thread still running. */
static void rg_flush(pyk_ctx *c, rg_list *l)
{
    if (!l->n) return;
    const char *end = fmt(c, "ck_end%d", ++c->tmp);
    const char *saved_end = rg_end_;
    int saved_used = rg_end_used_;
    rg_end_ = end;
    rg_end_used_ = 0;
    line(c, "threadIdx = uint3{0, 0, 0};");
    line(c, "for (int ck_t = 0; ck_t < ck_nt; ck_t++, ck_pyk_next_tid(threadIdx, blockDim)) {");
    c->indent++;
    line(c, "ck_frame *const ck_F = &ck_fb[ck_t];");
    if (!l->fresh) line(c, "if (ck_F->ck_done) continue;");
    l->fresh = 0;
    line(c, "{");
    c->indent++;
    for (int i = 0; i < l->n; i++) {
        rg_item *it = &l->v[i];
        switch (it->kind) {
        case RI_STMT: stmt(c, it->node); break;
        case RI_LINE: line(c, "%s", it->text); break;
        case RI_ASSIGN: assign(c, it->node, it->text, it->type); break;
        case RI_COND: {
            line(c, "{");
            c->indent++;
            const char *v = it->node ? ex_as(c, it->node, CK_BOOL) : it->text2;
            line(c, "const bool ck_v = %s;", v);
            line(c, "if (%s < 0) %s = ck_v;", it->text, it->text);
            c->indent--;
            line(c, "}");
            break;
        }
        case RI_ACC: {
            static const char *const ops[] = {"+=", "&=", "|="};
            line(c, "%s %s (%s) ? 1 : 0;", it->text, ops[it->op], ex_as(c, it->node, CK_BOOL));
            break;
        }
        case RI_RANGE: {   /* a for loop's range, into the thread's frame */
            pyk_node *args = pyk_list(c, it->node, 1, PK_ARGS);
            ck_dtype d = (ck_dtype)it->node->loop;
            const char *start = args->n > 1 ? ex_as(c, args->v[0], d) : literal(c, pyk_t_int_lit(c, 0), d);
            const char *stop = ex_as(c, args->v[args->n > 1 ? 1 : 0], d);
            const char *step = args->n > 2 ? ex_as(c, args->v[2], d) : literal(c, pyk_t_int_lit(c, 1), d);
            line(c, "ck_F->%s_k = %s;", it->text, start);
            line(c, "ck_F->%s_e = %s;", it->text, stop);
            line(c, "ck_F->%s_s = %s;", it->text, step);
            break;
        }
        }
    }
    c->indent--;
    line(c, "}");
    if (rg_end_used_) line(c, "%s:;", end);
    rg_end_ = saved_end;
    rg_end_used_ = saved_used;
    c->indent--;
    line(c, "}");
    int jumps = rg_items_jump(l);
    l->n = 0;
    if (jumps && nloops_ && loops_[nloops_ - 1].rg_brk && loops_[nloops_ - 1].grid) {
        /* a thread left a loop around grid barriers: the rest of its block's segment is skipped */
        line(c, "if (ck_bj) goto %s;", rg_done_);
        rg_done_used_ = 1;
    } else if (jumps && nloops_ && loops_[nloops_ - 1].rg_brk) {
        rg_loop_jumps(c, &loops_[nloops_ - 1]);
    }
}

static void rg_stmt(pyk_ctx *c, pyk_node *s, rg_list *pend, int grid);

/* One segment of a grid's statements (see above): block after block, each
 * block's part in regions between its own barriers. */
static void gr_flush(pyk_ctx *c, rg_list *l)
{
    if (!l->n) return;
    int jumps = rg_items_jump(l);
    const char *bend = fmt(c, "ck_bend%d", ++c->tmp);
    const char *saved_done = rg_done_;
    int saved_used = rg_done_used_;
    rg_done_ = bend;
    rg_done_used_ = 0;
    line(c, "for (unsigned ck_b = 0; ck_b < ck_nb; ck_b++) {");
    c->indent++;
    line(c, "blockIdx = ck_pyk_block_of(ck_b, gridDim);");
    line(c, "ck_frame *const ck_fb = ck_fr + (size_t)ck_b * ck_nt;");
    line(c, "ck_bj = 0;");
    declare_arrays(c, c->cur, ARR_GRID_BLOCK);
    rg_list bp = {0};
    bp.fresh = l->fresh;
    for (int i = 0; i < l->n; i++) {
        rg_item *it = &l->v[i];
        if (it->kind == RI_STMT && (rg_scan(c, it->node, 0) & 1)) rg_stmt(c, it->node, &bp, 0);
        else rg_add(c, &bp, *it);
    }
    rg_flush(c, &bp);
    if (rg_done_used_) line(c, "%s:;", bend);
    c->indent--;
    line(c, "}");
    rg_done_ = saved_done;
    rg_done_used_ = saved_used;
    l->n = 0;
    l->fresh = 0;
    if (jumps && nloops_ && loops_[nloops_ - 1].rg_brk && loops_[nloops_ - 1].grid)
        rg_loop_jumps(c, &loops_[nloops_ - 1]);
}

static void rg_flush_at(pyk_ctx *c, rg_list *l, int grid)
{
    if (grid) gr_flush(c, l);
    else rg_flush(c, l);
}

/* A condition around a barrier, from the first thread still running. */
static const char *rg_condition(pyk_ctx *c, rg_list *pend, pyk_node *test, const char *text, int grid)
{
    const char *cv = rg_flag(c, "c", -1);
    line(c, "%s = -1;", cv);
    rg_add(c, pend, (rg_item){RI_COND, test, cv, text, NULL, 0});
    rg_flush_at(c, pend, grid);
    line(c, "if (%s < 0) goto %s;   /* every thread has returned */", cv, rg_done_);
    rg_done_used_ = 1;
    return cv;
}

static void rg_block(pyk_ctx *c, pyk_node *body, rg_list *pend, int grid);

/* A while loop, or a for loop over a range, around barriers.  The test is
 * evaluated at the end of the region before the loop and of the loop's
 * last region (unless a continue could skip that region's end). */
static void rg_loop(pyk_ctx *c, pyk_node *s, rg_list *pend, int grid)
{
    int isfor = s->kind == PK_FOR;
    pyk_node *body = pyk_list(c, s, isfor ? 2 : 1, PK_BODY);
    const char *brk = rg_flag(c, "brk", 0), *cont = rg_flag(c, "cont", 0), *cv = rg_flag(c, "c", -1);
    const char *next = fmt(c, "ck_next%d", ++c->tmp);
    const char *slot = NULL, *test = NULL, *k = NULL;
    pyk_node *cond = isfor ? NULL : pyk_kid(s, 0);
    if (isfor) {
        pyk_node *iter = pyk_kid(s, 1);
        slot = fmt(c, "ck_r%d", ++c->tmp);
        ck_sbuf_printf(rg_members_, "        %s %s_k, %s_e, %s_s;\n", vtype((ck_dtype)iter->loop), slot, slot, slot);
        rg_add(c, pend, (rg_item){RI_RANGE, iter, slot, NULL, NULL, 0});
        k = fmt(c, "ck_F->%s_k", slot);
        const char *e = fmt(c, "ck_F->%s_e", slot), *st = fmt(c, "ck_F->%s_s", slot);
        test = fmt(c, "(%s > 0 ? %s < %s : %s > %s)", st, k, e, k, e);
    }
    line(c, "%s = -1;", cv);
    rg_add(c, pend, (rg_item){RI_COND, cond, cv, test, NULL, 0});
    rg_flush_at(c, pend, grid);
    line(c, "%s = 0;", brk);
    line(c, "for (;;) {");
    c->indent++;
    if (nloops_ >= 64) pyk_fail(c, s, CK_ERR_NOT_IMPLEMENTED, "loops nested more than 64 deep");
    loops_[nloops_++] = (loop_ctx){NULL, NULL, next, brk, cont, grid};
    line(c, "if (%s < 0) goto %s;   /* every thread has returned */", cv, rg_done_);
    rg_done_used_ = 1;
    line(c, "if (!%s) break;", cv);
    if (isfor) rg_add(c, pend, (rg_item){RI_ASSIGN, pyk_kid(s, 0), k, NULL, pyk_t_scalar(c, (ck_dtype)pyk_kid(s, 1)->loop), 0});
    rg_block(c, body, pend, grid);
    if (rg_jumps(body)) {
        rg_flush_at(c, pend, grid);
        line(c, "%s:;", next);
    }
    if (isfor) rg_add(c, pend, (rg_item){RI_LINE, NULL, fmt(c, "%s += ck_F->%s_s;", k, slot), NULL, NULL, 0});
    line(c, "%s = -1;", cv);
    rg_add(c, pend, (rg_item){RI_COND, cond, cv, test, NULL, 0});
    rg_flush_at(c, pend, grid);
    nloops_--;
    c->indent--;
    line(c, "}");
}

/* One statement into regions: of a block's threads between its barriers
 * (grid 0), or of the grid's segments between grid barriers (grid 1). */
static void rg_stmt(pyk_ctx *c, pyk_node *s, rg_list *pend, int grid)
{
    pyk_node *target;
    if (!(rg_scan(c, s, 0) & (grid ? 4 : 1))) {
        rg_add(c, pend, (rg_item){RI_STMT, s, NULL, NULL, NULL, 0});
        return;
    }
    if (grid && rg_grid_sync_stmt(s)) {
        gr_flush(c, pend);
        position(c, s);
        return;
    }
    pyk_node *call = grid ? NULL : rg_barrier_stmt(c, s, &target);
    if (call) {
        int id = rg_callee(call)->id;
        const char *acc = NULL;
        if (id != PF_SYNCTHREADS) {
            acc = rg_flag(c, "acc", 0);
            line(c, "%s = %d;", acc, id == PF_SYNCTHREADS_AND);
            rg_add(c, pend, (rg_item){RI_ACC, pyk_kid(pyk_list(c, call, 1, PK_ARGS), 0), acc, NULL, NULL,
                                      id == PF_SYNCTHREADS_COUNT ? 0 : id == PF_SYNCTHREADS_AND ? 1 : 2});
        }
        rg_flush(c, pend);
        position(c, s);
        if (id != PF_SYNCTHREADS && target) {
            const pyk_type *t = call->type;
            const char *v = t->k == T_SCALAR && t->dtype == CK_BOOL ? fmt(c, "(%s != 0)", acc) : acc;
            rg_add(c, pend, (rg_item){RI_ASSIGN, target, v, NULL, t, 0});
        }
        return;
    }
    if (s->kind == PK_IF) {
        const char *cv = rg_condition(c, pend, pyk_kid(s, 0), NULL, grid);
        position(c, s);
        line(c, "if (%s) {", cv);
        c->indent++;
        rg_block(c, pyk_list(c, s, 1, PK_BODY), pend, grid);
        rg_flush_at(c, pend, grid);
        c->indent--;
        pyk_node *orelse = pyk_list(c, s, 2, PK_ORELSE);
        if (orelse->n) {
            line(c, "} else {");
            c->indent++;
            rg_block(c, orelse, pend, grid);
            rg_flush_at(c, pend, grid);
            c->indent--;
        }
        line(c, "}");
    } else {
        rg_flush_at(c, pend, grid);
        position(c, s);
        rg_loop(c, s, pend, grid);
    }
}

static void rg_block(pyk_ctx *c, pyk_node *body, rg_list *pend, int grid)
{
    for (int i = 0; i < body->n; i++) rg_stmt(c, body->v[i], pend, grid);
}

static int rg_target_has(pyk_ctx *c, const pyk_node *t, const char *name)
{
    if (t->kind == PK_NAME) return !strcmp(pyk_sym(c, t, 0), name);
    if (t->kind == PK_TUPLE || t->kind == PK_LIST)
        for (int i = 0; i < t->n; i++)
            if (rg_target_has(c, t->v[i], name)) return 1;
    return 0;
}

/* Whether the statements assign the name (as a for loop's target too). */
static int rg_assigns(pyk_ctx *c, const pyk_node *n, const char *name)
{
    if (!n || n->kind == PK_ATOM) return 0;
    if (n->kind == PK_TARGETS)
        for (int i = 0; i < n->n; i++)
            if (rg_target_has(c, n->v[i], name)) return 1;
    if (n->kind == PK_AUGASSIGN && rg_target_has(c, pyk_kid(n, 1), name)) return 1;
    if ((n->kind == PK_ANNASSIGN || n->kind == PK_FOR) && rg_target_has(c, pyk_kid(n, 0), name)) return 1;
    for (int i = 0; i < n->n; i++)
        if (rg_assigns(c, n->v[i], name)) return 1;
    return 0;
}

/* The kernel's body for CUDAKIT_CPU in regions (see above); the frame and
 * flags are declared before the code that uses them. */
static void rg_kernel(pyk_ctx *c, pyk_func *f, const char *const *param_inits, int ninits,
                      const char *const *uniform_inits, int grid)
{
    ck_sbuf members = {0}, flags = {0}, code = {0};
    rg_members_ = &members;
    rg_flags_ = &flags;
    rg_done_ = "ck_all_done";
    rg_done_used_ = 0;
    rg_on_ = 1;
    ck_sbuf saved = c->body;
    c->body = code;
    int saved_loops = nloops_;
    nloops_ = 0;
    int indent = c->indent;
    /* the first region makes each thread's variables: parameters' values, zeros, the arrays */
    rg_list pend = {0};
    pend.fresh = 1;
    rg_add(c, &pend, (rg_item){RI_LINE, NULL, "ck_F->ck_done = 0;", NULL, NULL, 0});
    for (int i = 0; i < ninits; i++) rg_add(c, &pend, (rg_item){RI_LINE, NULL, param_inits[i], NULL, NULL, 0});
    ck_sbuf arrays = {0};
    ck_sbuf kept = c->body;
    c->body = arrays;
    int ind = c->indent;
    c->indent = 0;
    declare_arrays(c, f, ARR_VALUES);
    c->indent = ind;
    arrays = c->body;
    c->body = kept;
    for (char *ln = arrays.s; ln && *ln;) {
        char *nl = strchr(ln, '\n');
        if (nl) *nl = '\0';
        if (*ln) rg_add(c, &pend, (rg_item){RI_LINE, NULL, pyk_strdup(c, ln), NULL, NULL, 0});
        ln = nl ? nl + 1 : ln + strlen(ln);
    }
    free(arrays.s);
    rg_block(c, pyk_list(c, f->def, 2, PK_BODY), &pend, grid);
    rg_flush_at(c, &pend, grid);
    if (rg_done_used_) line(c, "ck_all_done:;");
    line(c, "threadIdx = uint3{0, 0, 0};");
    if (grid) line(c, "blockIdx = uint3{0, 0, 0};");
    code = c->body;
    c->body = saved;
    nloops_ = saved_loops;
    c->indent = indent;
    rg_on_ = 0;
    /* the frame and the flags, then the code */
    if (grid)
        line(c, "if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0 || blockIdx.x != 0 || blockIdx.y != 0 || "
                "blockIdx.z != 0) return;   /* thread 0 of block 0 runs the grid */");
    else
        line(c, "if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;   /* thread 0 runs the block */");
    for (int i = 0; i < f->nvars; i++)
        if (f->vars[i].uniform && !f->vars[i].array_decl)
            line(c, "%s %s = %s;", pyk_t_ctype(c, f->vars[i].type), plain_name(c, f->vars[i].name), uniform_inits[i]);
    line(c, "struct ck_frame {");
    for (int i = 0; i < f->nvars; i++)
        if (!f->vars[i].uniform)
            line(c, "    %s %s;", pyk_t_ctype(c, f->vars[i].type), plain_name(c, f->vars[i].name));
    c->indent++;
    declare_arrays(c, f, ARR_FRAME);
    c->indent--;
    if (members.len) ck_sbuf_printf(&c->body, "%s", members.s);
    line(c, "    int ck_done;");
    line(c, "};");
    line(c, "const int ck_nt = (int)(blockDim.x * blockDim.y * blockDim.z);");
    if (grid) {
        /* every thread's frame, every block's shared arrays and dynamic shared memory (the launch bounds the grid) */
        line(c, "const unsigned ck_nb = gridDim.x * gridDim.y * gridDim.z;");
        line(c, "ck_frame *const ck_fr = ck_pyk_frames<ck_frame>(ck_nt * (int)ck_nb);");
        line(c, "struct ck_shm {");
        declare_arrays(c, f, ARR_GRID_TYPE);
        line(c, "    char ck_none;");
        line(c, "};");
        line(c, "const size_t ck_dsm_step = ((size_t)ck_gs.dyn_bytes + 63) & ~(size_t)63;");
        line(c, "const size_t ck_shm_bytes = ((size_t)ck_nb * sizeof(ck_shm) + 63) & ~(size_t)63;");
        line(c, "unsigned char *const ck_gm = ck_pyk_grid_bytes(ck_shm_bytes + (size_t)ck_nb * ck_dsm_step);");
        line(c, "ck_shm *const ck_sh = (ck_shm *)ck_gm;");
        line(c, "unsigned char *const ck_dsm = ck_gm + ck_shm_bytes;");
        line(c, "(void)ck_sh;");
        line(c, "(void)ck_dsm;");
        line(c, "int ck_bj = 0;   /* a thread of the block left a loop around grid barriers */");
        line(c, "(void)ck_bj;");
    } else {
        line(c, "ck_frame *const ck_fb = ck_pyk_frames<ck_frame>(ck_nt);");
        declare_arrays(c, f, ARR_SHARED);
    }
    if (flags.len) ck_sbuf_printf(&c->body, "%s", flags.s);
    if (code.len) ck_sbuf_printf(&c->body, "%s", code.s);
    free(members.s);
    free(flags.s);
    free(code.s);
    rg_members_ = rg_flags_ = NULL;
}

static void pyk_emit_body(pyk_ctx *c, pyk_func *f, pyk_node *params, int kernel);

/* A variable's first value: its parameter's, or zero. */
static const char *first_value(pyk_ctx *c, pyk_func *f, pyk_var *v, pyk_node *params, int kernel)
{
    const pyk_type *t = v->type;
    if (v->param < 0)
        return t->k == T_SCALAR ? literal(c, pyk_t_int_lit(c, 0), t->dtype) : fmt(c, "%s{}", pyk_t_ctype(c, t));
    const char *pn = pyk_sym(c, params, v->param);
    const pyk_type *pt = f->ptypes[v->param];
    if (kernel && pt->k == T_ARRAY) {   /* a kernel's array parameters arrive as pointer, shape, strides */
        const char *sh = "", *st = "";
        for (int k = 0; k < pt->ndim; k++) {
            sh = fmt(c, "%s%sck_sh%d_%s", sh, k ? ", " : "", k, pn);
            st = fmt(c, "%s%sck_st%d_%s", st, k ? ", " : "", k, pn);
        }
        if (!pt->ndim) sh = st = "1";
        return fmt(c, "%s{(%s *)ck_p_%s, {%s}, {%s}}", pyk_t_ctype(c, t), pyk_t_storage(pt->dtype), pn, sh, st);
    }
    if (t->k == T_SCALAR) return conv(c, fmt(c, "ck_p_%s", pn), pt, t->dtype);
    return fmt(c, "ck_p_%s", pn);
}


static const char *signature(pyk_ctx *c, pyk_func *f, int kernel)
{
    pyk_node *params = pyk_list(c, f->def, 1, PK_PARAMS);
    const char *s = "";
    for (int i = 0; i < f->nparams; i++) {
        const pyk_type *t = f->ptypes[i];
        const char *nm = pyk_sym(c, params, i);
        const char *sep = i ? ", " : "";
        if (kernel && t->k == T_ARRAY) {
            s = fmt(c, "%s%s%s%s *ck_p_%s", s, sep, t->readonly ? "const " : "", pyk_t_storage(t->dtype), nm);
            for (int k = 0; k < t->ndim; k++) s = fmt(c, "%s, long long ck_sh%d_%s", s, k, nm);
            for (int k = 0; k < t->ndim; k++) s = fmt(c, "%s, long long ck_st%d_%s", s, k, nm);
        } else {
            s = fmt(c, "%s%s%s ck_p_%s", s, sep, pyk_t_ctype(c, t), nm);
        }
    }
    if (c->opt->debug) s = fmt(c, "%s%sck_pyk_error *ck_err", s, *s ? ", " : "");
    if (c->uses_grid_sync) s = fmt(c, "%s%sck_pyk_gridws ck_gs", s, *s ? ", " : "");
    if (kernel && c->coarsen) s = fmt(c, "%s%slong long ck_nthreads", s, *s ? ", " : "");
    if (!*s) s = "void";
    return s;
}

/* ------------------------------------------------- thread coarsening */

/* Whether n leaves a kernel's threads told apart by cuda.grid(1) alone
 * (cudakit_pykernel.h): no other reading of the thread's place, nothing
 * that needs the block or the grid together; in device functions (depth
 * > 0) not even cuda.grid(1), which the loop does not rewrite there.
 * *grid1 is set when the kernel itself calls cuda.grid(1). */
static int co_scan(pyk_ctx *c, const pyk_node *n, int depth, int *grid1)
{
    if (!n || n->kind == PK_ATOM) return 1;
    if (n->type && n->type->k == T_DIM3) return 0;
    if (n->kind == PK_ATTRIBUTE && n->n >= 2 && n->v[1]->kind == PK_ATOM && n->v[1]->s &&
        !strcmp(n->v[1]->s, "laneid"))
        return 0;
    if (n->kind == PK_CALL) {
        if (n->tag == -2) return 0;   /* g.sync() */
        const pyk_builtin *b = rg_callee(n);
        switch (b ? b->id : PF_NONE) {
        case PF_GRID:
            if (n->tag != 1 || depth > 0) return 0;
            *grid1 = 1;
            break;
        case PF_GRIDSIZE: case PF_LANEID: case PF_SYNCTHREADS: case PF_SYNCTHREADS_COUNT: case PF_SYNCTHREADS_AND:
        case PF_SYNCTHREADS_OR: case PF_SYNCWARP: case PF_WARP_VOTE: case PF_SHFL: case PF_MATCH_ANY:
        case PF_MATCH_ALL: case PF_ACTIVEMASK: case PF_LANEMASK_LT: case PF_SHARED_ARRAY: case PF_LOCAL_ARRAY:
        case PF_CG_THIS_GRID: case PF_GRID_SYNC:
            return 0;
        default: break;
        }
        const pyk_type *ft = n->n ? n->v[0]->type : NULL;
        if (ft && ft->k == T_DEVFUNC && n->tag >= 0 && n->tag < c->nfuncs &&
            (depth > 16 || !co_scan(c, c->funcs[n->tag]->def, depth + 1, grid1)))
            return 0;
    }
    for (int i = 0; i < n->n; i++)
        if (!co_scan(c, n->v[i], depth, grid1)) return 0;
    return 1;
}

static int co_eligible(pyk_ctx *c, pyk_func *f)
{
    if (c->opt->no_coarsen || c->opt->debug || c->uses_barrier || c->uses_grid_sync) return 0;
    for (int i = 0; i < f->nvars; i++)
        if (f->vars[i].array_decl) return 0;
    int grid1 = 0;
    return co_scan(c, pyk_list(c, f->def, 2, PK_BODY), 0, &grid1) && grid1;
}

/* Whether n, in a coarsened kernel's body, touches arrays only as a[i]:
 * a a 1-d array parameter of elements of 1 to 16 bytes, i the index
 * variable (co_vec_.index), besides reading a.size, a.shape, a.ndim and
 * len(a); and never assigns i.  A bare array name anywhere else (passed
 * to a function or an atomic, iterated, sliced, assigned) is a no.  Marks
 * the roles of the arrays; target: n is assigned (2: and read, +=). */
static int co_vec_scan(pyk_ctx *c, const pyk_node *n, int target)
{
    if (!n || n->kind == PK_ATOM) return 1;
    pyk_func *f = c->cur;
    switch (n->kind) {
    case PK_NAME: {
        const char *nm = pyk_sym(c, n, 0);
        pyk_var *v = pyk_var_find(f, nm);
        if (v ? v->type->k == T_ARRAY : n->type && n->type->k == T_ARRAY) return 0;
        if (!strcmp(nm, co_vec_.index) && (target || co_vec_.before)) return 0;
        return 1;
    }
    case PK_SUBSCRIPT: {
        const pyk_node *a = pyk_kid(n, 0), *ix = pyk_kid(n, 1);
        pyk_var *v = a->kind == PK_NAME ? pyk_var_find(f, pyk_sym(c, a, 0)) : NULL;
        if (!v || v->type->k != T_ARRAY) break;   /* a tuple's item, a.shape[0] */
        const pyk_type *t = v->param >= 0 ? f->ptypes[v->param] : NULL;
        if (!t || t->k != T_ARRAY || t->ndim != 1 || !n->type || n->type->k != T_SCALAR || co_vec_.before ||
            ix->kind != PK_NAME || strcmp(pyk_sym(c, ix, 0), co_vec_.index))
            return 0;
        int size = ck_dtype_get_info(t->dtype)->itemsize;
        if (size < 1 || size > 16 || 16 % size) return 0;
        co_vec_.role[v->param] |= target == 2 ? CO_READ | CO_WRITTEN : target ? CO_WRITTEN : CO_READ;
        return 1;
    }
    case PK_ATTRIBUTE: {
        const pyk_node *a = pyk_kid(n, 0);
        if (a->kind != PK_NAME || !a->type || a->type->k != T_ARRAY) break;
        const char *at = pyk_sym(c, n, 1);
        return !strcmp(at, "size") || !strcmp(at, "shape") || !strcmp(at, "ndim");
    }
    case PK_CALL: {
        const pyk_builtin *b = rg_callee(n);
        pyk_node *args = pyk_list(c, n, 1, PK_ARGS);
        if (b && b->id == PF_LEN && args->n == 1 && args->v[0]->kind == PK_NAME && args->v[0]->type &&
            args->v[0]->type->k == T_ARRAY)
            return 1;
        break;
    }
    case PK_TUPLE: case PK_LIST:
        for (int i = 0; i < n->n; i++)
            if (!co_vec_scan(c, n->v[i], target)) return 0;
        return 1;
    case PK_TARGETS:
        for (int i = 0; i < n->n; i++)
            if (!co_vec_scan(c, n->v[i], 1)) return 0;
        return 1;
    case PK_AUGASSIGN:
        return co_vec_scan(c, pyk_kid(n, 1), 2) && co_vec_scan(c, pyk_kid(n, 2), 0);
    case PK_ANNASSIGN: case PK_FOR:
        for (int i = 0; i < n->n; i++)
            if (!co_vec_scan(c, n->v[i], i == 0)) return 0;
        return 1;
    default: break;
    }
    for (int i = 0; i < n->n; i++)
        if (!co_vec_scan(c, n->v[i], 0)) return 0;
    return 1;
}

/* Indices a group of the vector path: 16 bytes of the narrowest array
 * touched, so a group of each array is whole 16-byte words. */
static int co_vec_width(const pyk_func *f)
{
    int w = 1;
    for (int i = 0; i < f->nparams; i++)
        if (co_vec_.role[i]) {
            int size = ck_dtype_get_info(f->ptypes[i]->dtype)->itemsize;
            if (16 / size > w) w = 16 / size;
        }
    return w;
}

/* Whether a coarsened kernel f has a vector path, and co_vec_ its plan:
 * its body's statements at the top, one of them `i = cuda.grid(1)`, none
 * before it naming i, and every array access a[i] (co_vec_scan). */
static int co_vec_plan(pyk_ctx *c, pyk_func *f)
{
    if (c->opt->no_vector) return 0;
    pyk_node *body = pyk_list(c, f->def, 2, PK_BODY);
    int at = -1;
    for (int k = 0; k < body->n && at < 0; k++) {
        pyk_node *s = body->v[k];
        if (s->kind != PK_ASSIGN) continue;
        pyk_node *ts = pyk_list(c, s, 0, PK_TARGETS), *val = pyk_kid(s, 1);
        const pyk_builtin *b = rg_callee(val);
        if (ts->n == 1 && ts->v[0]->kind == PK_NAME && b && b->id == PF_GRID && val->tag == 1) at = k;
    }
    if (at < 0) return 0;
    co_vec_.index = pyk_sym(c, pyk_list(c, body->v[at], 0, PK_TARGETS)->v[0], 0);
    co_vec_.role = pyk_alloc(c, (size_t)f->nparams + 1);
    memset(co_vec_.role, 0, (size_t)f->nparams + 1);
    const pyk_var *iv = pyk_var_find(f, co_vec_.index);
    if (!iv || iv->param >= 0 || iv->type->k != T_SCALAR || iv->type->dtype != CK_INT64) return 0;
    int any = 0;
    for (int k = 0; k < body->n; k++) {
        co_vec_.before = k < at;
        if (k != at && !co_vec_scan(c, body->v[k], 0)) return 0;
    }
    co_vec_.before = 0;
    for (int i = 0; i < f->nparams; i++) any |= co_vec_.role[i];
    if (!any || co_vec_width(f) < 2) return 0;   /* complex128 alone: a group of one */
    /* int8 beside complex128: 256 bytes of lanes a group, too many registers */
    for (int i = 0; i < f->nparams; i++)
        if (co_vec_.role[i] && co_vec_width(f) * ck_dtype_get_info(f->ptypes[i]->dtype)->itemsize > 128) return 0;
    return 1;
}

/* One copy of a coarsened kernel's body, for the index ck_gi; label:
 * where a return goes, after it. */
static void co_emit_body(pyk_ctx *c, pyk_func *f, pyk_node *params, const char *label)
{
    line(c, "{");
    c->indent++;
    c->coarse_on = 1;
    co_jumped_ = 0;
    co_label_ = label;
    pyk_emit_body(c, f, params, 1);
    c->coarse_on = 0;
    c->indent--;
    line(c, "}");
    if (co_jumped_) line(c, "%s:;", label);
}

/* The vector path: the indices in groups of w, a thread a group at a
 * time, grid-stride; ck_g0 where the scalar loop takes over.  Each array
 * read is loaded a group at a time into lanes, 16-byte accesses, before
 * the body runs for the group's indices, and each array written stored
 * after: the bandwidth add_one needs, which one 4-byte access at a time
 * does not reach.  That is the scalar loop's work in another order, and
 * nothing can tell the two apart: every access is a[i], so no other index
 * touches element i of any array, and no array written shares a byte
 * with another array (the run-time test, else the scalar loop does it
 * all; k(x, x) too).  Storing back a lane the body left as loaded writes
 * the value it holds; an array the body writes but never reads is not
 * loaded, and only the lanes written are stored. */
static void co_emit_vector(pyk_ctx *c, pyk_func *f, pyk_node *params)
{
    int w = co_vec_width(f);
    const char *test = "";
    for (int i = 0; i < f->nparams; i++) {
        if (!co_vec_.role[i]) continue;
        const char *pn = pyk_sym(c, params, i);
        int size = ck_dtype_get_info(f->ptypes[i]->dtype)->itemsize;
        test = fmt(c, "%s%sck_st0_%s == %d && ck_pyk_aligned16(ck_p_%s)", test, *test ? " && " : "", pn, size, pn);
    }
    for (int i = 0; i < f->nparams; i++)
        for (int j = i + 1; j < f->nparams; j++) {
            if (!co_vec_.role[i] || !co_vec_.role[j] || !((co_vec_.role[i] | co_vec_.role[j]) & CO_WRITTEN)) continue;
            const char *a = pyk_sym(c, params, i), *b = pyk_sym(c, params, j);
            test = fmt(c, "%s &&\n%*s    ck_pyk_apart(ck_p_%s, ck_sh0_%s * %d, ck_p_%s, ck_sh0_%s * %d)", test,
                       4 * c->indent, "", a, a, ck_dtype_get_info(f->ptypes[i]->dtype)->itemsize, b, b,
                       ck_dtype_get_info(f->ptypes[j]->dtype)->itemsize);
        }
    line(c, "/* the vector path, %d indices a group: unit strides, 16-byte aligned, no array written sharing a byte", w);
    line(c, " * with another; every access being a[i], the groups are the scalar loop's work in another order */");
    line(c, "if (%s) {", test);
    c->indent++;
    line(c, "long long ck_ng = ck_nthreads;   /* the whole groups below the count and every array's length */");
    for (int i = 0; i < f->nparams; i++)
        if (co_vec_.role[i]) {
            const char *pn = pyk_sym(c, params, i);
            line(c, "if (ck_sh0_%s < ck_ng) ck_ng = ck_sh0_%s;", pn, pn);
        }
    line(c, "ck_ng /= %d;", w);
    /* NVVM would unroll this loop four times (with its remainder loops),
     * which a memory-bound body gains nothing from - no load moves above
     * the stores of the group before - and costs its compile a third */
    ck_sbuf_printf(&c->body, "#pragma unroll 1\n");
    line(c, "for (long long ck_q = ck_pyk_grid_x(); ck_q < ck_ng; ck_q += ck_gs) {");
    c->indent++;
    for (int i = 0; i < f->nparams; i++) {
        if (!co_vec_.role[i]) continue;
        const char *pn = pyk_sym(c, params, i), *st = pyk_t_storage(f->ptypes[i]->dtype);
        line(c, "%s ck_l_%s[%d];", st, pn, w);
        if (co_vec_.role[i] & CO_READ)
            line(c, "ck_pyk_vload<%s, %d>(ck_l_%s, ck_p_%s + ck_q * %d);", st, w, pn, pn, w);
        else
            line(c, "unsigned ck_m_%s = 0;   /* the lanes written */", pn);
    }
    ck_sbuf_printf(&c->body, "#pragma unroll\n");
    line(c, "for (int ck_u = 0; ck_u < %d; ck_u++) {", w);
    c->indent++;
    line(c, "const long long ck_gi = ck_q * %d + ck_u;", w);
    c->vec_on = 1;
    co_emit_body(c, f, params, "ck_vnext_");
    c->vec_on = 0;
    c->indent--;
    line(c, "}");
    for (int i = 0; i < f->nparams; i++) {
        if (!(co_vec_.role[i] & CO_WRITTEN)) continue;
        const char *pn = pyk_sym(c, params, i), *st = pyk_t_storage(f->ptypes[i]->dtype);
        if (co_vec_.role[i] & CO_READ)
            line(c, "ck_pyk_vstore<%s, %d>(ck_p_%s + ck_q * %d, ck_l_%s);   /* lanes not written: as loaded */", st, w,
                 pn, w, pn);
        else
            line(c, "ck_pyk_vstore_lanes<%s, %d>(ck_p_%s + ck_q * %d, ck_l_%s, ck_m_%s);", st, w, pn, w, pn, pn);
    }
    c->indent--;
    line(c, "}");
    line(c, "ck_g0 = ck_ng * %d;", w);
    c->indent--;
    line(c, "}");
}

/* The GPU form of a coarsened kernel: each index of the launch asked for
 * runs the body once, as its thread would have, a grid's width apart. */
static void co_emit_loop(pyk_ctx *c, pyk_func *f, pyk_node *params)
{
    /* The body's loads wait one at a time, the next index's only after
     * this one's stores: too few bytes in flight for a GPU's bandwidth.
     * Where the body reads a 1-d array at the index (add_one), the element
     * of the index after next is asked into L2 each time round: two such
     * requests in flight a thread, besides the load that waits. */
    const char *hints = "";
    for (int i = 0; i < f->nparams && !c->opt->no_prefetch; i++) {
        const pyk_type *t = f->ptypes[i];
        if (t->k != T_ARRAY || t->ndim != 1) continue;
        const char *pn = pyk_sym(c, params, i);
        hints = fmt(c, "%s%*sif (ck_gi + ck_ahead < ck_sh0_%s) ck_pyk_prefetch_l2((const char *)ck_p_%s + (ck_gi + ck_ahead) * ck_st0_%s);\n",
                    hints, 4 * (c->indent + 1), "", pn, pn, pn);
    }
    line(c, "const long long ck_gs = (long long)gridDim.x * blockDim.x;");
    const char *g0 = "";
    if (co_vec_plan(c, f)) {
        line(c, "long long ck_g0 = 0;   /* where the scalar loop starts: after the vector path's groups */");
        co_emit_vector(c, f, params);
        g0 = "ck_g0 + ";
    }
    if (*hints) line(c, "const long long ck_ahead = 2 * ck_gs;");
    line(c, "for (long long ck_gi = %sck_pyk_grid_x(); ck_gi < ck_nthreads; ck_gi += ck_gs) {", g0);
    ck_sbuf_printf(&c->body, "%s", hints);
    c->indent++;
    co_emit_body(c, f, params, "ck_next_");
    c->indent--;
    line(c, "}");
}

void pyk_emit_func(pyk_ctx *c, pyk_func *f)
{
    pyk_func *saved = c->cur;
    c->cur = f;
    int kernel = f->is_kernel;
    if (kernel) c->coarsen = co_eligible(c, f);
    const char *ret = kernel || f->ret->k == T_NONE ? "void" : pyk_t_ctype(c, f->ret);
    const char *sig = signature(c, f, kernel);
    pyk_node *params = pyk_list(c, f->def, 1, PK_PARAMS);
    const char *types = "";
    for (int i = 0; i < f->nparams; i++)
        types = fmt(c, "%s%s%s: %s", types, i ? ", " : "", pyk_sym(c, params, i), pyk_t_str(c, f->ptypes[i]));
    if (kernel) {
        const char *lb = c->opt->launch_bounds > 0 ? fmt(c, "__launch_bounds__(%d) ", c->opt->launch_bounds) : "";
        ck_sbuf_printf(&c->body, "\n/* kernel %s(%s) */\nextern \"C\" __global__ void %s%s(%s)\n{\n", f->name, types,
                       lb, f->cname, sig);
    } else {
        ck_sbuf_printf(&c->head, "static __device__ %s %s(%s);\n", ret, f->cname, sig);
        ck_sbuf_printf(&c->body, "\n/* device function %s(%s) -> %s */\nstatic __device__ %s %s(%s)\n{\n", f->name,
                       types, pyk_t_str(c, f->ret), ret, f->cname, sig);
    }
    c->indent = 1;
    line(c, "int ck_bad = 0;   /* integer power's negative-exponent flag (the op table's formulas) */");
    line(c, "(void)ck_bad;");
    pyk_node *body = pyk_list(c, f->def, 2, PK_BODY);
    int scan = kernel ? rg_scan(c, body, 0) : 0, grid = (scan & 4) != 0;
    if (kernel && (scan & 5) && rg_fits(c, body, grid)) {
        c->grid_cpu = grid;
        /* parameters the kernel never assigns, and shared arrays, are the same
         * for every thread: locals of the block, not members of the frames */
        const char **inits = pyk_alloc(c, (size_t)(f->nvars + 1) * sizeof *inits);
        const char **uinits = pyk_alloc(c, (size_t)(f->nvars + 1) * sizeof *uinits);
        int ninits = 0;
        for (int i = 0; i < f->nvars; i++) {
            pyk_var *v = &f->vars[i];
            v->uniform = (v->param >= 0 && !rg_assigns(c, body, v->name)) ||
                         (v->array_decl && v->type->k == T_ARRAY && v->type->space == PYK_SHARED);
            uinits[i] = v->array_decl ? NULL : first_value(c, f, v, params, kernel);
        }
        rg_on_ = 1;
        for (int i = 0; i < f->nvars; i++)
            if (!f->vars[i].array_decl && !f->vars[i].uniform)
                inits[ninits++] = fmt(c, "%s = %s;", cname(c, f->vars[i].name), uinits[i]);
        rg_on_ = 0;
        ck_sbuf_printf(&c->body, grid ? "#ifdef CUDAKIT_CPU   /* the CPU: the grid in regions between barriers */\n"
                                      : "#ifdef CUDAKIT_CPU   /* the CPU: the block in regions between barriers */\n");
        rg_kernel(c, f, inits, ninits, uinits, grid);
        ck_sbuf_printf(&c->body, "#else   /* the GPU */\n");
        pyk_emit_body(c, f, params, kernel);
        ck_sbuf_printf(&c->body, "#endif\n");
    } else if (kernel && c->coarsen) {
        ck_sbuf_printf(&c->body, "#ifdef CUDAKIT_CPU   /* the CPU: one index a thread, loops it vectorises */\n");
        line(c, "(void)ck_nthreads;");
        pyk_emit_body(c, f, params, kernel);
        ck_sbuf_printf(&c->body, "#else   /* the GPU: coarsened, a grid-stride loop over cuda.grid(1) */\n");
        co_emit_loop(c, f, params);
        ck_sbuf_printf(&c->body, "#endif\n");
    } else {
        pyk_emit_body(c, f, params, kernel);
    }
    if (!kernel && f->ret->k != T_NONE) line(c, "return %s{};", ret);
    ck_sbuf_printf(&c->body, "}\n");
    c->indent = 0;
    c->cur = saved;
}

/* A function's variables and statements, as the GPU runs them. */
static void pyk_emit_body(pyk_ctx *c, pyk_func *f, pyk_node *params, int kernel)
{
    /* parameters become the variables of their names */
    for (int i = 0; i < f->nvars; i++)
        line(c, "%s %s = %s;", pyk_t_ctype(c, f->vars[i].type), cname(c, f->vars[i].name),
             first_value(c, f, &f->vars[i], params, kernel));
    for (int i = 0; i < f->nvars; i++) line(c, "(void)%s;", cname(c, f->vars[i].name));
    declare_arrays(c, f, ARR_ALL);
    int saved_loops = nloops_;
    nloops_ = 0;
    block(c, pyk_list(c, f->def, 2, PK_BODY));
    nloops_ = saved_loops;
}
