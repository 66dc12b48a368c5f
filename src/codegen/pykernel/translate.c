/* The translator's driver: the arena, the module's functions and global
 * bindings, typing the kernel for one call's arguments, then writing the
 * translation unit: the CUDA prelude and the per-element formulas, the
 * Python-kernel prelude, constant arrays, tuple structs, prototypes and
 * the functions. */
#include "pyk_internal.h"
#include "../cuda_codegen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- arena */

typedef struct pyk_chunk {
    struct pyk_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} pyk_chunk;

void *pyk_alloc(pyk_ctx *c, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    pyk_chunk *k = c->chunks;
    if (!k || k->used + n > k->cap) {
        size_t cap = n > 65536 ? n : 65536;
        k = malloc(sizeof *k + cap);
        if (!k) pyk_fail(c, NULL, CK_ERR_MEMORY, "out of memory translating a kernel");
        k->next = c->chunks;
        k->used = 0;
        k->cap = cap;
        c->chunks = k;
    }
    void *p = k->data + k->used;
    k->used += n;
    memset(p, 0, n);
    return p;
}

char *pyk_strdup(pyk_ctx *c, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = pyk_alloc(c, n);
    memcpy(d, s, n);
    return d;
}

_Noreturn void pyk_fail(pyk_ctx *c, const pyk_node *n, ck_status s, const char *f, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(msg, sizeof msg, f, ap);
    va_end(ap);
    ck_error_set(s, "%s", msg);
    if (n && n->line) {
        c->err_line = n->line;
        c->err_col = n->col;
    }
    longjmp(c->fail, 1);
}

/* --------------------------------------------------------------- globals */

/* A literal's type from a (const line col kind value...) node. */
static const pyk_type *const_type(pyk_ctx *c, pyk_node *v)
{
    const char *k = pyk_sym(c, v, 0);
    pyk_node *x = pyk_kid(v, 1);
    if (!strcmp(k, "int")) {
        if (x->big) pyk_fail(c, v, CK_ERR_OVERFLOW, "the integer %s does not fit int64", x->s);
        return pyk_t_int_lit(c, x->i);
    }
    if (!strcmp(k, "bool")) return pyk_t_bool_lit(c, (int)x->i);
    if (!strcmp(k, "float")) return pyk_t_float_lit(c, x->atom == PA_INT ? (double)x->i : x->f);
    if (!strcmp(k, "complex")) {
        pyk_node *im = pyk_kid(v, 2);
        return pyk_t_complex_lit(c, x->atom == PA_INT ? (double)x->i : x->f, im->atom == PA_INT ? (double)im->i : im->f);
    }
    return NULL;
}

static const pyk_type *value_type(pyk_ctx *c, pyk_node *v)
{
    if (v->kind == PK_CONST) return const_type(c, v);
    if (v->kind == PK_TUPLE) {
        const pyk_type *el[64];
        if (v->n > 64) return NULL;
        for (int i = 0; i < v->n; i++) {
            el[i] = value_type(c, v->v[i]);
            if (!el[i]) return NULL;
        }
        return pyk_t_tuple(c, v->n, el);
    }
    return NULL;
}

/* (global line col name kind ...): what a name the function reads is. */
static void bind_global(pyk_ctx *c, pyk_node *g, pyk_global *out)
{
    out->name = pyk_sym(c, g, 0);
    out->node = g;
    const char *kind = pyk_sym(c, g, 1);
    pyk_node *a = pyk_kid(g, 2);
    if (!strcmp(kind, "builtin") || !strcmp(kind, "module")) {
        const pyk_builtin *b = a && a->atom == PA_STR ? pyk_builtin_find(a->s) : NULL;
        if (!b) {
            out->type = NULL;   /* a part of cuda we do not have: said when used */
            return;
        }
        int ix = pyk_builtin_index(b);
        switch (b->bkind) {
        case PB_MODULE: out->type = pyk_t_simple(c, T_MODULE, ix); break;
        case PB_FUNC: out->type = pyk_t_simple(c, T_FUNC, ix); break;
        case PB_CONST: out->type = pyk_t_float_lit(c, b->value); break;
        case PB_DTYPE: out->type = pyk_t_dtype(c, b->dtype); break;
        case PB_DIM3:
            out->type = b->id == PF_LANEID ? pyk_t_scalar(c, CK_INT32) : b->id == PF_WARPSIZE ? pyk_t_int_lit(c, 32)
                                                                                              : pyk_t_simple(c, T_DIM3, ix);
            break;
        }
        return;
    }
    if (!strcmp(kind, "value")) {
        out->type = value_type(c, a);
        if (!out->type) pyk_fail(c, g, CK_ERR_VALUE, "malformed kernel tree: the global '%s'", out->name);
        return;
    }
    if (!strcmp(kind, "dtype")) {
        ck_dtype d = ck_dtype_from_name(a->s);
        if (d == CK_DTYPE_INVALID) pyk_fail(c, g, CK_ERR_VALUE, "malformed kernel tree: the dtype %s", a->s);
        out->type = pyk_t_dtype(c, d);
        return;
    }
    if (!strcmp(kind, "devfunc")) {
        if (!a || a->atom != PA_INT || a->i < 0 || a->i >= c->ndefs)
            pyk_fail(c, g, CK_ERR_VALUE, "malformed kernel tree: the device function '%s'", out->name);
        out->type = pyk_t_simple(c, T_DEVFUNC, (int)a->i);
        return;
    }
    if (!strcmp(kind, "array")) {   /* (global l c name array dtype (tuple dims) (values ...)) */
        ck_dtype d = ck_dtype_from_name(a->s);
        pyk_node *shape = pyk_list(c, g, 3, PK_TUPLE);
        if (d == CK_DTYPE_INVALID || shape->n < 1 || shape->n > 8)
            pyk_fail(c, g, CK_ERR_VALUE, "malformed kernel tree: the global array '%s'", out->name);
        out->type = pyk_t_array(c, d, shape->n, 'C', PYK_CONST, 1);
        return;
    }
    out->type = NULL;   /* "unsupported": said when used */
}

/* --------------------------------------------------------------- output */

static void write_consts(pyk_ctx *c, ck_sbuf *b)
{
    for (int di = 0; di < c->ndefs; di++)
    for (int i = 0; i < c->nglobals[di]; i++) {
        pyk_global *g = &c->globals[di][i];
        if (!g->type || g->type->k != T_ARRAY) continue;
        pyk_node *vals = pyk_list(c, g->node, 4, PK_VALUES);
        const char *st = pyk_t_storage(g->type->dtype);
        int cplx = ck_dtype_is_complex(g->type->dtype);
        ck_sbuf_printf(b, "__constant__ %s ck_const%d_%s[%d] = {", st, di, g->name, cplx ? vals->n / 2 : vals->n);
        for (int k = 0; k < vals->n; k++) {
            pyk_node *v = vals->v[k];
            const char *sep = k ? ", " : "";
            double f = v->atom == PA_INT ? (double)v->i : v->f;
            if (cplx) {
                if (k % 2) continue;
                pyk_node *im = pyk_kid(vals, k + 1);
                ck_sbuf_printf(b, "%s%s(%.17g, %.17g)", sep, st, f, im->atom == PA_INT ? (double)im->i : im->f);
            } else if (g->type->dtype == CK_FLOAT16) {
                ck_sbuf_printf(b, "%sck_f16(%.9gf)", sep, f);
            } else if (ck_dtype_is_integer(g->type->dtype) || g->type->dtype == CK_BOOL) {
                if (v->atom == PA_INT) ck_sbuf_printf(b, "%s(%s)%lldll", sep, st, (long long)v->i);
                else ck_sbuf_printf(b, "%s(%s)%s", sep, st, v->s);
            } else {
                ck_sbuf_printf(b, "%s%.17g", sep, f);
            }
        }
        ck_sbuf_printf(b, "};\n");
    }
}

static int holdable(const pyk_type *t)
{
    if (t->k == T_SCALAR) return !t->weak && !t->literal;
    if (t->k == T_ARRAY) return 1;
    if (t->k != T_TUPLE) return 0;
    for (int i = 0; i < t->n; i++)
        if (!holdable(t->elts[i])) return 0;
    return 1;
}

static void write_tuples(pyk_ctx *c, ck_sbuf *b)
{
    int n = c->ntypes;   /* (ctype names types only; none are made below) */
    for (int i = 0; i < n; i++) {
        const pyk_type *t = c->types[i];
        if (t->k != T_TUPLE || !holdable(t)) continue;
        ck_sbuf_printf(b, "struct ck_pyk_tup%d {", i);
        for (int k = 0; k < t->n; k++) ck_sbuf_printf(b, " %s v%d;", pyk_t_ctype(c, t->elts[k]), k);
        if (!t->n) ck_sbuf_printf(b, " char ck_empty;");
        ck_sbuf_printf(b, " };\n");
    }
}

static int uses_scalar_ops(const pyk_ctx *c)
{
    const char *parts[] = {c->head.s, c->body.s};
    for (int i = 0; i < 2; i++)
        if (parts[i] && (strstr(parts[i], "CK_X_") || strstr(parts[i], "CK_CVT_"))) return 1;
    return 0;
}

int ck_pyk_param_count(const ck_pyk_arg *args, int nargs)
{
    int n = 0;
    for (int i = 0; i < nargs; i++) n += args[i].kind == CK_PYK_ARRAY ? 1 + 2 * args[i].ndim : 1;
    return n;
}

void ck_pyk_result_free(ck_pyk_result *r)
{
    free(r->source);
    free(r->kernel_name);
    memset(r, 0, sizeof *r);
}

static void free_chunks(pyk_ctx *c)
{
    for (pyk_chunk *k = c->chunks; k;) {
        pyk_chunk *n = k->next;
        free(k);
        k = n;
    }
    c->chunks = NULL;
}

ck_status ck_pyk_translate(const char *tree, size_t len, const ck_pyk_arg *args, int nargs,
                           const ck_pyk_options *opt, ck_pyk_result *out)
{
    static const ck_pyk_options dflt;
    memset(out, 0, sizeof *out);
    pyk_ctx *c = calloc(1, sizeof *c);
    if (!c) return ck_error_set(CK_ERR_MEMORY, "out of memory translating a kernel");
    c->opt = opt ? opt : &dflt;
    ck_status s = CK_OK;
    if (setjmp(c->fail)) {
        s = ck_error_status();
        out->error_line = c->err_line;
        out->error_col = c->err_col;
        goto done;
    }
    c->module = pyk_parse(c, tree, len);
    /* (module line col (def ...)+): the kernel is the first def; each def
     * ends with the bindings of the names it reads */
    for (int i = 0; i < c->module->n; i++) c->ndefs += c->module->v[i]->kind == PK_DEF;
    if (!c->ndefs) pyk_fail(c, NULL, CK_ERR_VALUE, "malformed kernel tree: no function");
    c->defs = pyk_alloc(c, (size_t)c->ndefs * sizeof *c->defs);
    c->globals = pyk_alloc(c, (size_t)c->ndefs * sizeof *c->globals);
    c->nglobals = pyk_alloc(c, (size_t)c->ndefs * sizeof *c->nglobals);
    int nd = 0;
    for (int i = 0; i < c->module->n; i++)
        if (c->module->v[i]->kind == PK_DEF) c->defs[nd++] = c->module->v[i];
    for (int d = 0; d < c->ndefs; d++) {
        pyk_node *g = pyk_kid(c->defs[d], 4);
        if (!g) continue;
        if (g->kind != PK_TARGETS) pyk_fail(c, c->defs[d], CK_ERR_VALUE, "malformed kernel tree: a def's bindings");
        c->globals[d] = pyk_alloc(c, (size_t)(g->n + 1) * sizeof *c->globals[d]);
        for (int k = 0; k < g->n; k++) bind_global(c, g->v[k], &c->globals[d][c->nglobals[d]++]);
    }

    if (nargs > CK_MAX_KERNEL_PARAMS) pyk_fail(c, NULL, CK_ERR_VALUE, "too many kernel arguments");
    const pyk_type *at[CK_MAX_KERNEL_PARAMS];
    for (int i = 0; i < nargs; i++) {
        const ck_pyk_arg *a = &args[i];
        if ((unsigned)a->dtype >= CK_NTYPES) pyk_fail(c, NULL, CK_ERR_VALUE, "argument %d: no such dtype", i);
        if (a->kind == CK_PYK_ARRAY) {
            if (a->ndim < 0 || a->ndim > 32) pyk_fail(c, NULL, CK_ERR_VALUE, "argument %d: %d dimensions", i, a->ndim);
            char lay = a->layout == 'C' || a->layout == 'F' ? a->layout : 'A';
            at[i] = pyk_t_array(c, a->dtype, a->ndim, lay, PYK_GLOBAL, a->readonly);
        } else {
            at[i] = pyk_t_scalar(c, a->dtype);
        }
    }
    pyk_func *k = pyk_func_for(c, 0, nargs, at, c->defs[0]);

    /* the functions, callees before callers' bodies is not needed: prototypes go first */
    for (int i = c->nfuncs - 1; i >= 0; i--) pyk_emit_func(c, c->funcs[i]);

    ck_sbuf src = {0};
    ck_sbuf_printf(&src, "/* %s: translated from Python by cudakit */\n", k->name);
    /* The CPU's compile checks every loop for Ctrl-C and the time limit
     * (cuda_compat.hpp); the preludes' loops are short and bounded and
     * the indexing ones must unroll, so only the kernel's own are checked. */
    ck_sbuf_printf(&src, "#ifdef CUDAKIT_CPU\n#pragma push_macro(\"for\")\n#pragma push_macro(\"while\")\n"
                         "#undef for\n#undef while\n#endif\n");
    /* scalar_ops.h is half the preludes' text, and parsing it a tenth of
     * a small kernel's compile: only a kernel whose code names its
     * formulas (CK_X_<op>, CK_CVT_) gets it; the preludes name none */
    if (uses_scalar_ops(c)) {
        ck_sbuf_prelude(&src);
    } else {
        ck_sbuf_printf(&src, "#define CK_NO_SCALAR_OPS 1\n%s\n", ck_src_cuda_prelude);
    }
    ck_sbuf_printf(&src, "%s\n", ck_src_pyk_prelude);
    ck_sbuf_printf(&src, "#ifdef CUDAKIT_CPU\n#pragma pop_macro(\"for\")\n#pragma pop_macro(\"while\")\n#endif\n");
    ck_sbuf_printf(&src, "%s\n", CK_PYK_MARK);
    write_consts(c, &src);
    write_tuples(c, &src);
    ck_sbuf_printf(&src, "%s%s", c->head.s ? c->head.s : "", c->body.s ? c->body.s : "");
    if (c->head.failed || c->body.failed) src.failed = 1;
    char *text = ck_sbuf_finish(&src);
    if (!text) pyk_fail(c, NULL, CK_ERR_MEMORY, "out of memory writing a kernel");
    out->source = text;
    out->kernel_name = strdup(k->cname);
    if (!out->kernel_name) {
        free(text);
        out->source = NULL;
        pyk_fail(c, NULL, CK_ERR_MEMORY, "out of memory writing a kernel");
    }
    out->nparams = ck_pyk_param_count(args, nargs) + (c->opt->debug ? 1 : 0) + (c->uses_grid_sync ? 1 : 0) +
                   (c->coarsen ? 1 : 0);
    out->coarsened = c->coarsen;
    out->uses_barrier = c->uses_barrier;
    out->grid_sync = !c->uses_grid_sync ? 0 : c->grid_cpu ? 1 : 2;
    out->return_dtype = k->ret && k->ret->k == T_SCALAR ? pyk_t_strong(c, k->ret)->dtype : CK_DTYPE_INVALID;
done:
    free(c->head.s);
    free(c->body.s);
    free_chunks(c);
    free(c);
    return s;
}
