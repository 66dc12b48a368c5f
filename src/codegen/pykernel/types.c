/* The translator's types: made once each (so equal types are equal
 * pointers, literals aside), NumPy's promotion of scalar types with NEP 50's
 * weak Python numbers, the unification of the values a variable holds, and
 * the C spelling of each. */
#include "pyk_internal.h"

#include <stdio.h>
#include <string.h>

static const pyk_type unknown_ = {.k = T_UNKNOWN};
static const pyk_type none_ = {.k = T_NONE};

const pyk_type *pyk_t_unknown(void) { return &unknown_; }
const pyk_type *pyk_t_none(void) { return &none_; }

int pyk_t_equal(const pyk_type *a, const pyk_type *b)
{
    if (a == b) return 1;
    if (!a || !b || a->k != b->k) return 0;
    switch (a->k) {
    case T_SCALAR:
        return a->dtype == b->dtype && a->weak == b->weak && a->literal == b->literal &&
               (!a->literal || (a->lit == b->lit && a->flit == b->flit && a->flit_im == b->flit_im));
    case T_ARRAY:
        return a->dtype == b->dtype && a->ndim == b->ndim && a->layout == b->layout && a->space == b->space &&
               a->readonly == b->readonly;
    case T_TUPLE:
    case T_ITER:
        if (a->n != b->n || a->entry != b->entry) return 0;
        for (int i = 0; i < a->n; i++)
            if (!pyk_t_equal(a->elts[i], b->elts[i])) return 0;
        return 1;
    case T_DTYPE: return a->dtype == b->dtype;
    case T_MODULE: case T_FUNC: case T_DIM3: case T_DEVFUNC: return a->entry == b->entry;
    default: return 1;
    }
}

/* Interning: a linear list is enough (a kernel has tens of types). */
static const pyk_type *intern(pyk_ctx *c, const pyk_type *t)
{
    for (int i = 0; i < c->ntypes; i++)
        if (pyk_t_equal(c->types[i], t)) return c->types[i];
    if (c->ntypes == c->ctypes) {
        int nc = c->ctypes ? c->ctypes * 2 : 64;
        const pyk_type **v = pyk_alloc(c, (size_t)nc * sizeof *v);
        if (c->ntypes) memcpy(v, c->types, (size_t)c->ntypes * sizeof *v);
        c->types = v;
        c->ctypes = nc;
    }
    pyk_type *n = pyk_alloc(c, sizeof *n);
    *n = *t;
    if (t->n) {
        const pyk_type **e = pyk_alloc(c, (size_t)t->n * sizeof *e);
        memcpy(e, t->elts, (size_t)t->n * sizeof *e);
        n->elts = e;
    }
    c->types[c->ntypes++] = n;
    return n;
}

const pyk_type *pyk_t_scalar(pyk_ctx *c, ck_dtype d)
{
    pyk_type t = {.k = T_SCALAR, .dtype = d};
    return intern(c, &t);
}

const pyk_type *pyk_t_weak(pyk_ctx *c, ck_dtype d)
{
    pyk_type t = {.k = T_SCALAR, .dtype = d, .weak = 1};
    return intern(c, &t);
}

const pyk_type *pyk_t_int_lit(pyk_ctx *c, int64_t v)
{
    pyk_type t = {.k = T_SCALAR, .dtype = CK_INT64, .weak = 1, .literal = 1, .lit = v};
    return intern(c, &t);
}

const pyk_type *pyk_t_bool_lit(pyk_ctx *c, int v)
{
    pyk_type t = {.k = T_SCALAR, .dtype = CK_BOOL, .weak = 1, .literal = 1, .lit = v != 0};
    return intern(c, &t);
}

const pyk_type *pyk_t_float_lit(pyk_ctx *c, double v)
{
    pyk_type t = {.k = T_SCALAR, .dtype = CK_FLOAT64, .weak = 1, .literal = 1, .flit = v};
    return intern(c, &t);
}

const pyk_type *pyk_t_complex_lit(pyk_ctx *c, double re, double im)
{
    pyk_type t = {.k = T_SCALAR, .dtype = CK_COMPLEX128, .weak = 1, .literal = 1, .flit = re, .flit_im = im};
    return intern(c, &t);
}

const pyk_type *pyk_t_array(pyk_ctx *c, ck_dtype d, int ndim, char layout, int space, int readonly)
{
    if (ndim <= 1 && layout == 'F') layout = 'C';
    pyk_type t = {.k = T_ARRAY, .dtype = d, .ndim = ndim, .layout = layout, .space = space, .readonly = readonly};
    return intern(c, &t);
}

const pyk_type *pyk_t_tuple(pyk_ctx *c, int n, const pyk_type **elts)
{
    pyk_type t = {.k = T_TUPLE, .n = n, .elts = elts};
    return intern(c, &t);
}

const pyk_type *pyk_t_iter(pyk_ctx *c, int which, int n, const pyk_type **elts)
{
    pyk_type t = {.k = T_ITER, .entry = which, .n = n, .elts = elts};
    return intern(c, &t);
}

const pyk_type *pyk_t_simple(pyk_ctx *c, int k, int entry)
{
    pyk_type t = {.k = k, .entry = entry};
    return intern(c, &t);
}

const pyk_type *pyk_t_dtype(pyk_ctx *c, ck_dtype d)
{
    pyk_type t = {.k = T_DTYPE, .dtype = d};
    return intern(c, &t);
}

/* NEP 50's categories: bool < int < float < complex. */
static int category(ck_dtype d)
{
    if (d == CK_BOOL) return 0;
    if (ck_dtype_is_integer(d)) return 1;
    if (ck_dtype_is_float(d)) return 2;
    return 3;
}

static const ck_dtype default_of_[4] = {CK_BOOL, CK_INT64, CK_FLOAT64, CK_COMPLEX128};

ck_dtype pyk_t_promote(const pyk_type *a, const pyk_type *b)
{
    if (a->weak && b->weak) {
        int ca = category(a->dtype), cb = category(b->dtype);
        return default_of_[ca > cb ? ca : cb];
    }
    if (a->weak || b->weak) {
        const pyk_type *w = a->weak ? a : b, *s = a->weak ? b : a;
        int cw = category(w->dtype), cs = category(s->dtype);
        if (cw <= cs) return s->dtype;
        if (cw == 3 && cs == 2) return ck_dtype_complex_of(s->dtype == CK_FLOAT64 ? CK_FLOAT64 : CK_FLOAT32);
        return default_of_[cw];
    }
    return ck_dtype_promote(a->dtype, b->dtype);
}

const pyk_type *pyk_t_strong(pyk_ctx *c, const pyk_type *t)
{
    if (t->k == T_SCALAR && (t->weak || t->literal)) return pyk_t_scalar(c, t->weak ? default_of_[category(t->dtype)] : t->dtype);
    if (t->k == T_TUPLE) {
        const pyk_type *e[64];
        int n = t->n > 64 ? 64 : t->n;
        int same = 1;
        for (int i = 0; i < n; i++) {
            e[i] = pyk_t_strong(c, t->elts[i]);
            same &= e[i] == t->elts[i];
        }
        return same ? t : pyk_t_tuple(c, n, e);
    }
    return t;
}

const pyk_type *pyk_t_unify(pyk_ctx *c, const pyk_type *a, const pyk_type *b)
{
    if (!a || a->k == T_UNKNOWN) return pyk_t_strong(c, b);
    if (!b || b->k == T_UNKNOWN) return pyk_t_strong(c, a);
    a = pyk_t_strong(c, a);
    b = pyk_t_strong(c, b);
    if (a == b) return a;
    if (a->k == T_SCALAR && b->k == T_SCALAR) return pyk_t_scalar(c, ck_dtype_promote(a->dtype, b->dtype));
    if (a->k == T_ARRAY && b->k == T_ARRAY) {
        if (a->dtype != b->dtype || a->ndim != b->ndim || a->space != b->space) return NULL;
        return pyk_t_array(c, a->dtype, a->ndim, a->layout == b->layout ? a->layout : 'A', a->space,
                           a->readonly || b->readonly);
    }
    if (a->k == T_TUPLE && b->k == T_TUPLE && a->n == b->n) {
        const pyk_type *e[64];
        for (int i = 0; i < a->n && i < 64; i++) {
            e[i] = pyk_t_unify(c, a->elts[i], b->elts[i]);
            if (!e[i]) return NULL;
        }
        return pyk_t_tuple(c, a->n, e);
    }
    if (a->k == b->k && pyk_t_equal(a, b)) return a;
    return NULL;
}

/* ------------------------------------------------------------ spelling */

static const char *const dtype_names_[CK_NTYPES] = {
#define CK_PYK_NAME_(A, ID, name, ...) [CK_##ID] = #name,
    CK_DTYPES(CK_PYK_NAME_, _)
#undef CK_PYK_NAME_
};

static const char *const storage_[CK_NTYPES] = {
#define CK_PYK_STORAGE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = cus,
    CK_DTYPES(CK_PYK_STORAGE_, _)
#undef CK_PYK_STORAGE_
};

const char *pyk_t_storage(ck_dtype d) { return storage_[d]; }

const char *pyk_t_var_ctype(ck_dtype d) { return d == CK_BOOL ? "bool" : storage_[d]; }

const char *pyk_t_str(pyk_ctx *c, const pyk_type *t)
{
    char buf[512];
    switch (t->k) {
    case T_UNKNOWN: return "unknown";
    case T_NONE: return "none";
    case T_SCALAR:
        if (t->weak && t->literal) {
            if (t->dtype == CK_BOOL) return t->lit ? "Literal[bool](True)" : "Literal[bool](False)";
            if (t->dtype == CK_INT64) snprintf(buf, sizeof buf, "Literal[int](%lld)", (long long)t->lit);
            else if (t->dtype == CK_FLOAT64) snprintf(buf, sizeof buf, "Literal[float](%.17g)", t->flit);
            else snprintf(buf, sizeof buf, "Literal[complex](%.17g%+.17gj)", t->flit, t->flit_im);
            return pyk_strdup(c, buf);
        }
        if (t->weak) {
            static const char *const py[] = {"bool", "int", "float", "complex"};
            return py[category(t->dtype)];
        }
        return dtype_names_[t->dtype];
    case T_ARRAY:
        snprintf(buf, sizeof buf, "array(%s, %dd, %c%s)", dtype_names_[t->dtype], t->ndim, t->layout,
                 t->readonly ? ", readonly" : "");
        return pyk_strdup(c, buf);
    case T_TUPLE: {
        size_t pos = (size_t)snprintf(buf, sizeof buf, "Tuple(");
        for (int i = 0; i < t->n && pos < sizeof buf - 64; i++)
            pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "%s%s", i ? ", " : "", pyk_t_str(c, t->elts[i]));
        snprintf(buf + pos, sizeof buf - pos, ")");
        return pyk_strdup(c, buf);
    }
    case T_RANGE: return "range";
    case T_ITER: return t->entry ? "zip" : "enumerate";
    case T_MODULE: case T_FUNC: case T_DIM3: {
        const pyk_builtin *b = pyk_builtin_at(t->entry);
        snprintf(buf, sizeof buf, "%s '%s'", t->k == T_MODULE ? "Module" : t->k == T_DIM3 ? "Dim3" : "Function",
                 b ? b->name : "?");
        return pyk_strdup(c, buf);
    }
    case T_DTYPE:
        snprintf(buf, sizeof buf, "class(%s)", dtype_names_[t->dtype]);
        return pyk_strdup(c, buf);
    case T_DEVFUNC: return "device function";
    case T_STR: return "str";
    case T_SLICE: return "slice";
    }
    return "?";
}

const char *pyk_t_ctype(pyk_ctx *c, const pyk_type *t)
{
    char buf[128];
    switch (t->k) {
    case T_SCALAR: return pyk_t_var_ctype(pyk_t_strong(c, t)->dtype);
    case T_ARRAY:
        snprintf(buf, sizeof buf, "ck_pyk_array<%s, %d>", storage_[t->dtype], t->ndim > 0 ? t->ndim : 1);
        return pyk_strdup(c, buf);
    case T_TUPLE:
        t = pyk_t_strong(c, t);
        for (int i = 0; i < c->ntypes; i++)
            if (c->types[i] == t) {
                snprintf(buf, sizeof buf, "ck_pyk_tup%d", i);
                return pyk_strdup(c, buf);
            }
        break;
    default: break;
    }
    pyk_fail(c, NULL, CK_ERR_TYPE, "a value of type %s cannot be held in a variable", pyk_t_str(c, t));
}
