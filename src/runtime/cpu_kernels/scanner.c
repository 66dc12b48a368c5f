/* The source scan (see internal.h): one pass over the user's CUDA C that
 * copies it with extern __shared__ declarations rewritten (line numbers
 * kept), lists the extern "C" __global__ functions, and notes whether
 * anything may need a barrier (so that blocks run as fibers) or printf.
 * It also keeps every __global__ declaration's parameter list and the
 * names the source gives types (typedef, using, #define), from which
 * ck_kernel_signature tells what each parameter takes: the one reading of
 * kernel signatures, for every device.
 *
 * Bounds mode (s->bounds): the pointer parameters of every __global__
 * function become ck__ptr<T> (cuda_compat.hpp), which checks each access
 * through them against the argument's extent, and reinterpret_cast
 * becomes ck__rcast, which keeps that check on the pointer it casts. */
#define _GNU_SOURCE /* strndup */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ck_is_id0(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int ck_is_id(char c) { return ck_is_id0(c) || (c >= '0' && c <= '9'); }

static const char *ck_skip_ws(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

static int ck_tok_is(const char *p, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(p, word, n) && !ck_is_id(p[n]);
}

/* Past a balanced (...) starting at p (which must be '('). */
static const char *ck_skip_parens(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '(') depth++;
        else if (*p == ')' && --depth == 0) return p + 1;
    }
    return p;
}

static void ck_scan_add_name(ck_srcscan *s, const char *name, size_t n)
{
    for (int i = 0; i < s->nnames; i++)
        if (strlen(s->names[i]) == n && !strncmp(s->names[i], name, n)) return;
    if (s->nnames == s->capnames) {
        int cap = s->capnames ? 2 * s->capnames : 8;
        char **p = realloc(s->names, sizeof *p * (size_t)cap);
        if (!p) return;
        s->names = p;
        s->capnames = cap;
    }
    char *c = strndup(name, n);
    if (c) s->names[s->nnames++] = c;
}

/* ------------------------------------------------------ C type names */

/* The spellings of C types in kernel signatures, and their dtypes; the
 * builtin ones in the canonical order ck_canon_builtin writes. */
static const struct { const char *name; ck_dtype t; } ck_ctypes[] = {
    {"float", CK_FLOAT32}, {"double", CK_FLOAT64},
    {"int", CK_INT32}, {"int32_t", CK_INT32},
    {"unsigned int", CK_UINT32}, {"uint32_t", CK_UINT32},
    {"long long", CK_INT64}, {"int64_t", CK_INT64}, {"long", CK_INT64}, {"ptrdiff_t", CK_INT64},
    {"ssize_t", CK_INT64}, {"intptr_t", CK_INT64},
    {"unsigned long long", CK_UINT64}, {"uint64_t", CK_UINT64}, {"unsigned long", CK_UINT64},
    {"size_t", CK_UINT64}, {"uintptr_t", CK_UINT64},
    {"short", CK_INT16}, {"int16_t", CK_INT16},
    {"unsigned short", CK_UINT16}, {"uint16_t", CK_UINT16},
    {"signed char", CK_INT8}, {"int8_t", CK_INT8}, {"char", CK_INT8},
    {"unsigned char", CK_UINT8}, {"uint8_t", CK_UINT8},
    {"bool", CK_BOOL},
    {"__half", CK_FLOAT16}, {"half", CK_FLOAT16},
    {"complex<float>", CK_COMPLEX64}, {"complex<double>", CK_COMPLEX128},
    {"ck_c64", CK_COMPLEX64}, {"ck_c128", CK_COMPLEX128},
};

static int ck_is_int_word(const char *w, size_t n)
{
    static const char *const words[] = {"signed", "unsigned", "char", "short", "int", "long"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i]) == n && !strncmp(words[i], w, n)) return 1;
    return 0;
}

/* "long unsigned int" -> "unsigned long": the builtin integer types in one
 * spelling; 0 when the words are not all integer keywords. */
static int ck_canon_builtin(const char *t, char *out, size_t n)
{
    int nsigned = 0, nunsigned = 0, nchar = 0, nshort = 0, nint = 0, nlong = 0, words = 0;
    for (const char *p = t; *p;) {
        while (*p == ' ') p++;
        const char *b = p;
        while (ck_is_id(*p)) p++;
        if (p == b) {
            if (*p) return 0;
            break;
        }
        size_t k = (size_t)(p - b);
        if (!ck_is_int_word(b, k)) return 0;
        words++;
        nsigned += k == 6 && !strncmp(b, "signed", 6);
        nunsigned += k == 8;
        nchar += k == 4 && !strncmp(b, "char", 4);
        nshort += k == 5;
        nint += k == 3;
        nlong += k == 4 && !strncmp(b, "long", 4);
    }
    if (!words || nsigned + nunsigned > 1 || nchar + nshort + (nlong > 0) > 1 || nlong > 2 || nint > 1 ||
        (nchar && nint))
        return 0;
    const char *u = nunsigned ? "unsigned " : "";
    if (nchar) snprintf(out, n, "%s", nunsigned ? "unsigned char" : nsigned ? "signed char" : "char");
    else if (nshort) snprintf(out, n, "%sshort", u);
    else if (nlong == 2) snprintf(out, n, "%slong long", u);
    else if (nlong == 1) snprintf(out, n, "%slong", u);
    else snprintf(out, n, "%sint", u);
    return 1;
}

ck_dtype ck_cpu_ctype_dtype(const char *name)
{
    char canon[32];
    if (!name) return CK_DTYPE_INVALID;
    while (*name == ' ') name++;
    if (!strncmp(name, "::", 2)) name += 2;
    if (!strncmp(name, "std::", 5)) name += 5;
    if (ck_canon_builtin(name, canon, sizeof canon)) name = canon;
    for (size_t i = 0; i < sizeof ck_ctypes / sizeof *ck_ctypes; i++)
        if (!strcmp(ck_ctypes[i].name, name)) return ck_ctypes[i].t;
    return CK_DTYPE_INVALID;
}

/* ------------------------------------------------- lists of the scan */

static void *ck_grow(void *v, int *cap, int n, size_t elem)
{
    if (n < *cap) return v;
    int c = *cap ? 2 * *cap : 8;
    void *p = realloc(v, elem * (size_t)c);
    if (p) *cap = c;
    return p;
}

/* [b, e) without comments, blanks folded to one space, trimmed (malloc'd). */
static char *ck_fold(const char *b, const char *e)
{
    char *o = malloc((size_t)(e - b) + 1);
    if (!o) return NULL;
    size_t n = 0;
    int blank = 0;
    for (const char *p = b; p < e;) {
        if (p[0] == '/' && p + 1 < e && p[1] == '/') {
            while (p < e && *p != '\n') p++;
            blank = 1;
        } else if (p[0] == '/' && p + 1 < e && p[1] == '*') {
            p += 2;
            while (p + 1 < e && !(p[0] == '*' && p[1] == '/')) p++;
            p = p + 1 < e ? p + 2 : e;
            blank = 1;
        } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\\') {
            p++;
            blank = 1;
        } else {
            if (blank && n) o[n++] = ' ';
            blank = 0;
            o[n++] = *p++;
        }
    }
    o[n] = 0;
    return o;
}

static void ck_scan_add_alias(ck_srcscan *s, const char *name, size_t nn, char *type)
{
    if (!type) {
        s->failed = 1;
        return;
    }
    for (int i = 0; i < s->naliases; i++)
        if (strlen(s->aliases[i].name) == nn && !strncmp(s->aliases[i].name, name, nn)) {
            if (strcmp(s->aliases[i].type, type)) s->aliases[i].ambiguous = 1;
            free(type);
            return;
        }
    ck_scan_alias *a = ck_grow(s->aliases, &s->capaliases, s->naliases, sizeof *a);
    char *nm = strndup(name, nn);
    if (!a || !nm) {
        if (a) s->aliases = a;
        free(nm);
        free(type);
        s->failed = 1;
        return;
    }
    s->aliases = a;
    s->aliases[s->naliases++] = (ck_scan_alias){nm, type, 0};
}

void ck_cpu_scan_defines(ck_srcscan *s, const char *const *opts, int n)
{
    for (int i = 0; i < n; i++) {
        const char *o = opts[i];
        if (!o) continue;
        if (!strcmp(o, "-D") || !strcmp(o, "--define-macro")) {
            if (++i >= n || !(o = opts[i])) break;
        } else if (!strncmp(o, "-D", 2)) {
            o += 2;
        } else if (!strncmp(o, "--define-macro=", 15)) {
            o += 15;
        } else {
            continue;
        }
        const char *eq = strchr(o, '=');
        size_t nn = eq ? (size_t)(eq - o) : strlen(o);
        if (nn && !strchr(o, '('))
            ck_scan_add_alias(s, o, nn, eq ? ck_fold(eq + 1, eq + 1 + strlen(eq + 1)) : strdup("1"));
    }
}

/* Past a balanced group opening at p ('(' '[' or '<'), at most to e. */
static const char *ck_skip_group(const char *p, const char *e)
{
    int depth = 0;
    for (; p < e; p++) {
        if (*p == '(' || *p == '[' || *p == '<' || *p == '{') depth++;
        else if ((*p == ')' || *p == ']' || *p == '>' || *p == '}') && --depth == 0) return p + 1;
    }
    return e;
}

/* -------------------------------------------------------- parameters */

/* One parameter declaration, read from its folded text. */
typedef struct ck_pdecl {
    int ok;              /* read; otherwise nothing below is meaningful */
    int stars;           /* pointer levels */
    int ref, func, attr; /* a reference; a parenthesised declarator (function pointer); an attribute */
    int ptr_const;       /* const on the pointer itself (after the last star) */
    int elaborated;      /* struct/class/union/enum/typename: a type cudakit cannot size */
    int narr;            /* array suffixes after the name */
    char base[128];      /* the type's words without cv-qualifiers: "unsigned int", "complex<float>", "T" */
    char pointee[160];   /* the text before the last star, or before the name of an array parameter */
    char type[96];       /* the declared type for messages: "const float *" */
    char name[64];
    const char *deflt;   /* "= ..." in the folded text, or NULL */
} ck_pdecl;

enum { CK_TK_ID = 'i', CK_TK_STAR = '*', CK_TK_AMP = '&', CK_TK_ARR = '[', CK_TK_PAREN = '(', CK_TK_OTHER = '?' };
typedef struct { int kind; const char *b; size_t n; } ck_ptok;

static int ck_tok_word(const ck_ptok *t, const char *w)
{
    return t->kind == CK_TK_ID && strlen(w) == t->n && !strncmp(t->b, w, t->n);
}

static int ck_is_type_keyword(const ck_ptok *t)
{
    static const char *const kw[] = {"void", "bool", "char", "short", "int", "long", "float", "double",
                                     "signed", "unsigned", "auto", "__int128", "wchar_t"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (ck_tok_word(t, kw[i])) return 1;
    return 0;
}

static int ck_is_qualifier(const ck_ptok *t)
{
    return ck_tok_word(t, "const") || ck_tok_word(t, "volatile") || ck_tok_word(t, "__restrict__") ||
           ck_tok_word(t, "__restrict") || ck_tok_word(t, "restrict") || ck_tok_word(t, "register") ||
           ck_tok_word(t, "__grid_constant__");
}

static void ck_cat(char *dst, size_t n, const char *sep, const char *b, size_t len)
{
    size_t k = strlen(dst);
    if (k + 1 >= n) return;
    snprintf(dst + k, n - k, "%s%.*s", k ? sep : "", (int)len, b);
}

static void ck_parse_param(const char *t, ck_pdecl *d)
{
    memset(d, 0, sizeof *d);
    ck_ptok tk[48];
    int nt = 0;
    const char *p = t, *e = t + strlen(t);
    while (p < e) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (nt == (int)(sizeof tk / sizeof *tk)) return;
        ck_ptok *k = &tk[nt];
        k->b = p;
        if (*p == '=') {
            d->deflt = p;
            break;
        } else if (ck_is_id0(*p) || (p[0] == ':' && p[1] == ':')) {
            /* a name, qualified and with template arguments: one token */
            for (;;) {
                if (p[0] == ':' && p[1] == ':') p += 2;
                while (p < e && ck_is_id(*p)) p++;
                const char *q = p;
                while (q < e && *q == ' ') q++;
                if (q < e && *q == '<') {
                    p = ck_skip_group(q, e);
                    q = p;
                    while (q < e && *q == ' ') q++;
                }
                if (q + 1 < e && q[0] == ':' && q[1] == ':') {
                    p = q;
                    continue;
                }
                break;
            }
            k->kind = CK_TK_ID;
        } else if (*p == '*') {
            k->kind = CK_TK_STAR;
            p++;
        } else if (*p == '&') {
            k->kind = CK_TK_AMP;
            p += p[1] == '&' ? 2 : 1;
        } else if (*p == '[' || *p == '(') {
            k->kind = *p == '[' ? CK_TK_ARR : CK_TK_PAREN;
            p = ck_skip_group(p, e);
        } else {
            k->kind = CK_TK_OTHER;
            p++;
        }
        k->n = (size_t)(p - k->b);
        nt++;
    }
    /* Attributes out: __attribute__((...)), alignas(n), [[...]]. */
    int m = 0;
    for (int i = 0; i < nt; i++) {
        if ((ck_tok_word(&tk[i], "__attribute__") || ck_tok_word(&tk[i], "alignas") ||
             ck_tok_word(&tk[i], "__align__") || ck_tok_word(&tk[i], "__declspec")) &&
            i + 1 < nt && tk[i + 1].kind == CK_TK_PAREN) {
            i++;
            d->attr = 1;
            continue;
        }
        if (tk[i].kind == CK_TK_ARR && tk[i].n >= 2 && tk[i].b[1] == '[') {
            d->attr = 1;
            continue;
        }
        tk[m++] = tk[i];
    }
    nt = m;
    int end = nt;
    while (end > 0 && tk[end - 1].kind == CK_TK_ARR) end--;
    d->narr = nt - end;
    /* The name: the last word, when a type comes before it. */
    int name = -1;
    if (end > 0 && tk[end - 1].kind == CK_TK_ID && !ck_is_type_keyword(&tk[end - 1]) && !ck_is_qualifier(&tk[end - 1]))
        for (int i = 0; i < end - 1; i++)
            if (tk[i].kind != CK_TK_ID || !ck_is_qualifier(&tk[i])) name = end - 1;
    if (name < 0 && d->narr) return; /* an unnamed array parameter is not one we write */
    int last = name >= 0 ? name : end, laststar = -1;
    for (int i = 0; i < last; i++) {
        const ck_ptok *k = &tk[i];
        if (k->kind == CK_TK_STAR) {
            d->stars++;
            d->ptr_const = 0;
            laststar = i;
        } else if (k->kind == CK_TK_AMP) {
            d->ref = 1;
        } else if (k->kind == CK_TK_PAREN || k->kind == CK_TK_ARR || k->kind == CK_TK_OTHER) {
            d->func = 1;
        } else if (ck_tok_word(k, "const")) {
            if (d->stars) d->ptr_const = 1;
        } else if (ck_is_qualifier(k)) {
        } else if (d->stars) {
            return; /* a type word after a star */
        } else if (ck_tok_word(k, "struct") || ck_tok_word(k, "class") || ck_tok_word(k, "union") ||
                   ck_tok_word(k, "enum") || ck_tok_word(k, "typename")) {
            d->elaborated = 1;
        } else {
            char w[128];
            size_t o = 0;
            for (size_t j = 0; j < k->n && o + 1 < sizeof w; j++)
                if (k->b[j] != ' ' || (j + 1 < k->n && ck_is_id(k->b[j + 1]) && j && ck_is_id(k->b[j - 1])))
                    w[o++] = k->b[j];
            w[o] = 0;
            ck_cat(d->base, sizeof d->base, " ", w, o);
        }
        if (k->kind != CK_TK_STAR || i) ck_cat(d->type, sizeof d->type, " ", k->b, k->n);
        else ck_cat(d->type, sizeof d->type, "", k->b, k->n);
    }
    if (!d->base[0] && !d->elaborated) return;
    int upto = d->narr ? last : laststar;
    for (int i = 0; i < upto; i++)
        if (!(tk[i].kind == CK_TK_ID && (ck_tok_word(&tk[i], "__restrict__") || ck_tok_word(&tk[i], "__restrict") ||
                                         ck_tok_word(&tk[i], "restrict") || ck_tok_word(&tk[i], "register"))))
            ck_cat(d->pointee, sizeof d->pointee, " ", tk[i].b, tk[i].n);
    if (d->narr) {
        d->stars++;
        ck_cat(d->type, sizeof d->type, "", "[]", 2);
    }
    if (name >= 0) snprintf(d->name, sizeof d->name, "%.*s", (int)tk[name].n, tk[name].b);
    d->ok = 1;
}

/* What a parameter's type is, resolving the source's names for types:
 * *dt its dtype (or the pointee's), *stars its pointer levels, *plain_char
 * for char (any array behind a pointer). */
static void ck_resolve_type(const ck_srcscan *s, const ck_scan_kernel *k, const ck_pdecl *d, int depth,
                            ck_dtype *dt, int *stars, int *plain_char, int *opaque)
{
    *stars += d->stars;
    if (d->ref || d->func || d->elaborated || depth > 8) {
        *opaque = 1;
        return;
    }
    const char *b = d->base;
    char canon[32];
    if (ck_canon_builtin(b, canon, sizeof canon) && !strcmp(canon, "char")) *plain_char = 1;
    if ((*dt = ck_cpu_ctype_dtype(b)) != CK_DTYPE_INVALID) return;
    if (strchr(b, ' ') || strchr(b, '<')) {
        *opaque = 1;
        return;
    }
    const char *last = b;
    for (const char *q = b; (q = strstr(q, "::")); q += 2) last = q + 2;
    if (k)
        for (int i = 0; i < k->ntparams; i++)
            if (!strcmp(k->tparams[i], b)) {
                *opaque = 1;
                return;
            }
    for (int i = 0; i < s->naliases; i++) {
        const ck_scan_alias *a = &s->aliases[i];
        if (strcmp(a->name, last)) continue;
        if (a->ambiguous) break;
        ck_pdecl ad;
        ck_parse_param(a->type, &ad);
        if (!ad.ok || ad.name[0] || ad.narr) break;
        ck_resolve_type(s, k, &ad, depth + 1, dt, stars, plain_char, opaque);
        return;
    }
    *opaque = 1;
}

static void ck_classify(const ck_srcscan *s, const ck_scan_kernel *k, const char *text, ck_kparam *out)
{
    ck_pdecl d;
    ck_parse_param(text, &d);
    memset(out, 0, sizeof *out);
    out->kind = CK_KPARAM_OPAQUE;
    out->dtype = CK_DTYPE_INVALID;
    if (!d.ok) {
        snprintf(out->type, sizeof out->type, "%s", text);
        return;
    }
    snprintf(out->name, sizeof out->name, "%s", d.name);
    snprintf(out->type, sizeof out->type, "%s", d.type);
    ck_dtype dt = CK_DTYPE_INVALID;
    int stars = 0, plain_char = 0, opaque = 0;
    ck_resolve_type(s, k, &d, 0, &dt, &stars, &plain_char, &opaque);
    if (stars > 0 && !d.ref && !d.func) {
        out->kind = CK_KPARAM_POINTER;
        out->dtype = stars == 1 && !opaque && !plain_char ? dt : CK_DTYPE_INVALID;
    } else if (!opaque && dt != CK_DTYPE_INVALID) {
        out->kind = CK_KPARAM_SCALAR;
        out->dtype = dt;
    }
}

/* Calls f(ctx, b, e, i) for each parameter i of a list (split at
 * top-level commas; for "" and "void" once, with i -1); returns their
 * count. */
static int ck_split_params(const char *b, const char *e, void (*f)(void *, const char *, const char *, int),
                           void *ctx)
{
    const char *q = b;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    const char *r = e;
    while (r > q && (r[-1] == ' ' || r[-1] == '\t' || r[-1] == '\n' || r[-1] == '\r')) r--;
    if (q == r || (r - q == 4 && !strncmp(q, "void", 4))) {
        if (f) f(ctx, b, e, -1);
        return 0;
    }
    int n = 0, depth = 0;
    const char *start = b;
    for (const char *p = b; p < e; p++) {
        if (p[0] == '/' && p + 1 < e && p[1] == '*') {
            const char *c = strstr(p + 2, "*/");
            p = c && c + 1 < e ? c + 1 : e - 1;
        } else if (p[0] == '/' && p + 1 < e && p[1] == '/') {
            while (p + 1 < e && p[1] != '\n') p++;
        } else if (*p == '(' || *p == '[' || *p == '<' || *p == '{') {
            depth++;
        } else if (*p == ')' || *p == ']' || *p == '>' || *p == '}') {
            depth--;
        } else if (*p == ',' && depth == 0) {
            if (f) f(ctx, start, p, n);
            n++;
            start = p + 1;
        }
    }
    if (f) f(ctx, start, e, n);
    return n + 1;
}

/* ----------------------------------------------- bounds-mode rewrite */

/* One parameter of a __global__ function, for bounds mode: a pointer to
 * an object type becomes ck__ptr<T> (line count kept); anything else is
 * written as it was. */
typedef struct {
    ck_srcscan *s;
    const ck_scan_kernel *k;
} ck_rewrite_ctx;

static void ck_rewrite_param(void *ctx, const char *b, const char *e, int i)
{
    ck_rewrite_ctx *rc = ctx;
    ck_sbuf *out = &rc->s->out;
    if (i > 0) ck_sbuf_printf(out, ",");
    char *t = ck_fold(b, e);
    ck_pdecl d;
    if (t) ck_parse_param(t, &d);
    int ok = t && d.ok && !d.ref && !d.func && !d.attr && d.narr <= 1 && d.name[0];
    if (ok && !d.stars) {
        /* a typedef'd pointer: ck__ptr of what it points to */
        ck_dtype dt;
        int stars = 0, plain_char = 0, opaque = 0;
        ck_resolve_type(rc->s, rc->k, &d, 0, &dt, &stars, &plain_char, &opaque);
        ok = stars > 0 && !opaque && !d.elaborated;
        if (ok) snprintf(d.pointee, sizeof d.pointee, "std::remove_pointer_t<%s>", d.base);
        ok = ok && strlen(d.base) + 24 < sizeof d.pointee;
        if (!ok) {
            ck_sbuf_printf(out, "%.*s", (int)(e - b), b);
            free(t);
            return;
        }
    }
    if (ok) {
        /* not void: ck__ptr<void> has nothing to check (it cannot be indexed) */
        ck_pdecl pd;
        ck_parse_param(d.pointee, &pd);
        ok = !(pd.ok && !pd.stars && !strcmp(pd.base, "void")) && d.pointee[0];
    }
    if (!ok) {
        ck_sbuf_printf(out, "%.*s", (int)(e - b), b);
    } else {
        int nl = 0;
        for (const char *p = b; p < e; p++) nl += *p == '\n';
        ck_sbuf_printf(out, " %sck__ptr<%s> %s%s%s", d.ptr_const ? "const " : "", d.pointee, d.name,
                       d.deflt ? " " : "", d.deflt ? d.deflt : "");
        for (int i = 0; i < nl; i++) ck_sbuf_printf(out, "\n");
    }
    free(t);
}

/* ---------------------------------------------------------- kernels */

/* The template parameter list at p ("<typename T, int N>"): its type
 * parameters' names. */
static void ck_scan_tparams(ck_srcscan *s, const char *p, char ***out, int *n)
{
    (void)s;
    *out = NULL;
    *n = 0;
    p = ck_skip_ws(p);
    if (*p != '<') return;
    const char *e = ck_skip_group(p, p + strlen(p));
    int cap = 0;
    for (const char *q = p + 1; q < e - 1;) {
        q = ck_skip_ws(q);
        const char *ke = q;
        while (ck_is_id(*ke)) ke++;
        int is_type = (ke - q == 8 && !strncmp(q, "typename", 8)) || (ke - q == 5 && !strncmp(q, "class", 5));
        const char *r = ke;
        while (r < e - 1 && *r != ',') {
            if (*r == '<' || *r == '(') {
                r = ck_skip_group(r, e - 1);
                continue;
            }
            r++;
        }
        if (is_type) {
            const char *w = ck_skip_ws(ke);
            if (w[0] == '.' && w[1] == '.' && w[2] == '.') w = ck_skip_ws(w + 3);
            const char *we = w;
            while (ck_is_id(*we)) we++;
            if (we > w) {
                char **v = ck_grow(*out, &cap, *n, sizeof *v);
                char *nm = strndup(w, (size_t)(we - w));
                if (v) *out = v;
                if (!v || !nm) {
                    free(nm);
                    s->failed = 1;
                    return;
                }
                (*out)[(*n)++] = nm;
            }
        }
        q = r < e - 1 ? r + 1 : e;
    }
}

/* After __global__ (at p): the function's name is the identifier before
 * the first '(' that does not open an attribute's arguments.  Records the
 * declaration; in bounds mode writes it, parameters rewritten, and returns
 * the end of its parameter list (NULL: nothing written). */
static const char *ck_scan_global(ck_srcscan *s, const char *p, int callable, int is_template, char **tparams,
                                  int ntparams)
{
    const char *start = p, *last = NULL;
    size_t lastn = 0;
    for (;;) {
        p = ck_skip_ws(p);
        if (!*p || *p == ';' || *p == '{') return NULL;
        if (ck_is_id0(*p)) {
            const char *b = p;
            while (ck_is_id(*p)) p++;
            if ((ck_tok_is(b, "__launch_bounds__") || ck_tok_is(b, "__attribute__") || ck_tok_is(b, "alignas") ||
                 ck_tok_is(b, "__align__") || ck_tok_is(b, "__declspec"))) {
                p = ck_skip_ws(p);
                if (*p == '(') p = ck_skip_parens(p);
                continue;
            }
            last = b;
            lastn = (size_t)(p - b);
        } else if (*p == '(') {
            break;
        } else {
            p++;
        }
    }
    if (!last) return NULL;
    if (callable) ck_scan_add_name(s, last, lastn);
    const char *lp = p, *rp = ck_skip_parens(lp);
    if (rp[-1] != ')') return NULL;
    ck_scan_kernel *k = ck_grow(s->kernels, &s->capkernels, s->nkernels, sizeof *k);
    if (k) s->kernels = k;
    ck_scan_kernel nk = {strndup(last, lastn), ck_fold(lp + 1, rp - 1), NULL, 0, is_template};
    if (!k || !nk.name || !nk.params) {
        free(nk.name);
        free(nk.params);
        s->failed = 1;
        return NULL;
    }
    if (ntparams) {
        nk.tparams = calloc((size_t)ntparams, sizeof *nk.tparams);
        for (int i = 0; nk.tparams && i < ntparams; i++)
            if ((nk.tparams[i] = strdup(tparams[i]))) nk.ntparams++;
    }
    s->kernels[s->nkernels++] = nk;
    if (!s->bounds) return NULL;
    ck_sbuf_printf(&s->out, "%.*s", (int)(lp + 1 - start), start);
    ck_rewrite_ctx rc = {s, &s->kernels[s->nkernels - 1]};
    ck_split_params(lp + 1, rp - 1, ck_rewrite_param, &rc);
    ck_sbuf_printf(&s->out, ")");
    return rp;
}

/* `typedef T name;` or `using name = T;` (p past the keyword) at namespace
 * scope: a name for a type, unless it declares more (a struct, a function
 * type, several names). */
static void ck_scan_typedef(ck_srcscan *s, const char *p, int is_using)
{
    const char *semi = p;
    while (*semi && *semi != ';' && *semi != '{' && *semi != '(' && *semi != ',' && *semi != '[' && *semi != '}') {
        if (*semi == '<') semi = ck_skip_group(semi, semi + strlen(semi));
        else semi++;
    }
    if (*semi != ';') return;
    if (is_using) {
        const char *nb = ck_skip_ws(p), *ne = nb;
        while (ck_is_id(*ne)) ne++;
        const char *eq = ck_skip_ws(ne);
        if (ne == nb || *eq != '=' || (ne - nb == 9 && !strncmp(nb, "namespace", 9))) return;
        ck_scan_add_alias(s, nb, (size_t)(ne - nb), ck_fold(eq + 1, semi));
        return;
    }
    const char *ne = semi;
    while (ne > p && (ne[-1] == ' ' || ne[-1] == '\t' || ne[-1] == '\n' || ne[-1] == '\r')) ne--;
    const char *nb = ne;
    while (nb > p && ck_is_id(nb[-1])) nb--;
    if (nb == ne || !ck_is_id0(*nb)) return;
    ck_scan_add_alias(s, nb, (size_t)(ne - nb), ck_fold(p, nb));
}

/* `#define NAME body` (d at "define"): an object-like macro, as a name
 * for whatever type its body names. */
static void ck_scan_define(ck_srcscan *s, const char *d, const char *e)
{
    const char *nb = d + 6;
    while (nb < e && (*nb == ' ' || *nb == '\t')) nb++;
    const char *ne = nb;
    while (ne < e && ck_is_id(*ne)) ne++;
    if (ne == nb || (ne < e && *ne == '(')) return;
    for (const char *t = ne; t < e; t++)
        if (*t == '\\') return;
    ck_scan_add_alias(s, nb, (size_t)(ne - nb), ck_fold(ne, e));
}

/* `extern __shared__ T name[];` (p at "extern", q past "__shared__"):
 * inside a function a pointer to this block's dynamic shared memory, at
 * namespace scope an object that converts to one.  Newlines are kept so
 * line numbers still match the user's source.  Returns the end (past ';')
 * or NULL when the declaration is not of that form. */
static const char *ck_scan_extern_shared(ck_srcscan *s, const char *q, int in_function)
{
    const char *semi = strchr(q, ';');
    if (!semi) return NULL;
    const char *br = NULL;
    for (const char *t = q; t < semi; t++)
        if (*t == '[') br = t;
    if (!br) return NULL;
    const char *ne = br;
    while (ne > q && (ne[-1] == ' ' || ne[-1] == '\t')) ne--;
    const char *nb = ne;
    while (nb > q && ck_is_id(nb[-1])) nb--;
    if (nb == ne) return NULL;
    /* The type, without alignment attributes (they cannot appear in a cast). */
    ck_sbuf type = {0};
    int newlines = 0;
    for (const char *t = q; t < nb;) {
        if (*t == '\n') newlines++;
        if (ck_is_id0(*t) && (t == q || !ck_is_id(t[-1])) &&
            (ck_tok_is(t, "__align__") || ck_tok_is(t, "alignas") || ck_tok_is(t, "__attribute__"))) {
            while (ck_is_id(*t)) t++;
            const char *u = ck_skip_ws(t);
            if (*u == '(') t = ck_skip_parens(u);
            continue;
        }
        ck_sbuf_printf(&type, "%c", *t == '\n' ? ' ' : *t);
        t++;
    }
    for (const char *t = nb; t < semi; t++) newlines += *t == '\n';
    const char *ty = type.s ? type.s : "char";
    if (in_function)
        ck_sbuf_printf(&s->out, "%s *const %.*s = reinterpret_cast<%s *>(ck__dyn_smem());", ty, (int)(ne - nb), nb,
                       ty);
    else
        ck_sbuf_printf(&s->out, "static ck__dyn_shared<%s> %.*s;", ty, (int)(ne - nb), nb);
    for (int i = 0; i < newlines; i++) ck_sbuf_printf(&s->out, "\n");
    free(type.s);
    return semi + 1;
}

static const char *const ck_barrier_words[] = {"__syncthreads", "__syncwarp", "__shfl", "__ballot_sync", "__any_sync",
                                               "__all_sync", "__uni_sync", "__match_", "__reduce_", "__activemask"};

/* Whether a directive (p to e) pastes tokens into something that could be
 * a barrier word.  A pasted identifier starts with the chain's first
 * operand: when that is an identifier written in the macro (not one of its
 * parameters, which could be anything) and does not start with '_', the
 * result cannot be a barrier word ("__..."); a macro it names is checked
 * where it is defined.  So `fmod##SUF` and `CK_X_ADD_##K` are safe, `x##y`
 * and `__sync##x` are not. */
static int ck_paste_space(char c) { return c == ' ' || c == '\t' || c == '\\' || c == '\n' || c == '\r'; }

static int ck_define_pastes_unsafely(const char *p, const char *e)
{
    const char *params = NULL, *params_end = NULL;
    const char *d = ck_skip_ws(p + 1);
    if (ck_tok_is(d, "define")) {
        const char *n = ck_skip_ws(d + 6);
        while (n < e && ck_is_id(*n)) n++;
        if (*n == '(') {
            params = n + 1;
            params_end = params;
            while (params_end < e && *params_end != ')') params_end++;
        }
    }
    for (const char *t = p; t + 1 < e; t++) {
        if (t[0] != '#' || t[1] != '#') continue;
        /* the chain's head: back over `x ## y ## ...` */
        const char *h = t;
        for (;;) {
            const char *q = h;
            while (q > p && ck_paste_space(q[-1])) q--;
            const char *b = q;
            while (b > p && ck_is_id(b[-1])) b--;
            if (b == q) return 1;                 /* not an identifier: a literal or a parameter's # */
            const char *w = b;
            while (w > p && ck_paste_space(w[-1])) w--;
            if (w - p >= 2 && w[-1] == '#' && w[-2] == '#') {
                h = w - 2;
                continue;
            }
            if (*b == '_' || (b[0] >= '0' && b[0] <= '9')) return 1;   /* __VA_ARGS__ too */
            size_t n = (size_t)(q - b);
            for (const char *a = params; a && a < params_end;) {
                while (a < params_end && !ck_is_id(*a)) a++;
                const char *ae = a;
                while (ae < params_end && ck_is_id(*ae)) ae++;
                if (ae > a && (size_t)(ae - a) == n && !strncmp(a, b, n)) return 1;
                a = ae;
            }
            break;
        }
        t++;
    }
    return 0;
}

/* Conditional sections the CPU's compile leaves out (it defines
 * CUDAKIT_CPU and not __CUDA_ARCH__): a barrier there is a GPU's only, so
 * `#ifndef CUDAKIT_CPU __syncthreads(); #endif` keeps plain loops.  Only
 * the plain forms are read (#ifdef X, #ifndef X, #if [!]defined(X) of
 * those two names); any other condition may be true on the CPU. */
enum { CK_COND_UNKNOWN, CK_COND_TAKEN, CK_COND_SKIPPED };
typedef struct ck_conds {
    unsigned char state[64], dead[64];
    int n, over;   /* over: sections nested deeper than the stack */
} ck_conds;

static int ck_conds_dead(const ck_conds *c)
{
    for (int i = 0; i < c->n; i++)
        if (c->dead[i]) return 1;
    return 0;
}

/* +1: on the CPU the condition is true, -1: false, 0: unknown. */
static int ck_cond_on_cpu(const char *d, const char *e)
{
    int neg = 0, defined = 0;
    const char *t = d;
    if (ck_tok_is(t, "ifdef")) t += 5, defined = 1;
    else if (ck_tok_is(t, "ifndef")) t += 6, defined = 1, neg = 1;
    else if (ck_tok_is(t, "if")) t += 2;
    else return 0;
    t = ck_skip_ws(t);
    int paren = 0;
    if (!defined) {
        if (*t == '!') neg = 1, t = ck_skip_ws(t + 1);
        if (!ck_tok_is(t, "defined")) return 0;
        t = ck_skip_ws(t + 7);
        if (*t == '(') paren = 1, t = ck_skip_ws(t + 1);
    }
    const char *b = t;
    while (t < e && ck_is_id(*t)) t++;
    size_t n = (size_t)(t - b);
    t = ck_skip_ws(t);
    if (paren) {
        if (*t != ')') return 0;
        t = ck_skip_ws(t + 1);
    }
    if (t < e && *t != '\n' && !(t[0] == '/' && (t[1] == '/' || t[1] == '*'))) return 0;
    int v;
    if (n == 11 && !strncmp(b, "CUDAKIT_CPU", 11)) v = 1;
    else if (n == 13 && !strncmp(b, "__CUDA_ARCH__", 13)) v = -1;
    else return 0;
    return neg ? -v : v;
}

static void ck_conds_directive(ck_conds *c, const char *d, const char *e)
{
    if (ck_tok_is(d, "if") || ck_tok_is(d, "ifdef") || ck_tok_is(d, "ifndef")) {
        if (c->n >= 64) {
            c->over++;
            return;
        }
        int v = ck_cond_on_cpu(d, e);
        c->state[c->n] = v > 0 ? CK_COND_TAKEN : v < 0 ? CK_COND_SKIPPED : CK_COND_UNKNOWN;
        c->dead[c->n] = v < 0;
        c->n++;
    } else if (ck_tok_is(d, "elif") || ck_tok_is(d, "else")) {
        if (c->over || !c->n) return;
        int i = c->n - 1;
        c->dead[i] = c->state[i] == CK_COND_TAKEN;
        if (c->state[i] == CK_COND_SKIPPED && ck_tok_is(d, "elif")) c->state[i] = CK_COND_UNKNOWN;
    } else if (ck_tok_is(d, "endif")) {
        if (c->over) c->over--;
        else if (c->n) c->n--;
    }
}

/* Walks the source once, copying it to s->out.  Brace kinds tell function
 * bodies from namespace / extern "C" / class bodies. */
int ck_cpu_scan_source(const char *src, ck_srcscan *s)
{
    enum { B_OTHER, B_FUNC, B_EXTERN_C };
    char kinds[256];
    int depth = 0, func_depth = 0, extern_c_depth = 0;
    int decl_extern_c = 0, decl_template = 0, line_start = 1;
    char **tparams = NULL; /* of the template being declared */
    int ntparams = 0;
    char prev = 0; /* last significant character outside comments */
    ck_conds conds = {0};
    int dead = 0;  /* in a section the CPU's compile leaves out */
    const char *p = src;
#define CK_DECL_END()                                          \
    do {                                                       \
        decl_extern_c = decl_template = 0;                     \
        for (int i_ = 0; i_ < ntparams; i_++) free(tparams[i_]); \
        free(tparams);                                         \
        tparams = NULL;                                        \
        ntparams = 0;                                          \
    } while (0)
    while (*p) {
        char c = *p;
        if (c == '/' && p[1] == '/') {
            const char *e = strchr(p, '\n');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            ck_sbuf_printf(&s->out, "%.*s", (int)n, p);
            p += n;
            continue;
        }
        if (c == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            size_t n = e ? (size_t)(e + 2 - p) : strlen(p);
            ck_sbuf_printf(&s->out, "%.*s", (int)n, p);
            p += n;
            continue;
        }
        if (c == '"' || c == '\'') {
            const char *e = p + 1;
            while (*e && *e != c && *e != '\n') e += (*e == '\\' && e[1]) ? 2 : 1;
            if (*e == c) e++;
            ck_sbuf_printf(&s->out, "%.*s", (int)(e - p), p);
            p = e;
            prev = c;
            line_start = 0;
            continue;
        }
        if (c == '#' && line_start) {
            /* A directive, continuation lines included.  A local include
             * might hide barriers from this scan; so might token pasting. */
            const char *e = p;
            while (*e && !(*e == '\n' && e[-1] != '\\')) e++;
            const char *d = ck_skip_ws(p + 1);
            ck_conds_directive(&conds, d, e);
            dead = ck_conds_dead(&conds);
            if (!dead && ck_tok_is(d, "include") && *ck_skip_ws(d + 7) == '"') s->barriers = 1;
            if (!dead && ck_define_pastes_unsafely(p, e)) s->barriers = 1;
            /* Type names are read in every section: the signature serves the GPU's compile too, and a
             * name defined two ways is one cudakit cannot size. */
            if (ck_tok_is(d, "define")) ck_scan_define(s, d, e);
            for (const char *t = p; t < e && !dead; t++) {
                if (ck_is_id0(*t) && (t == p || !ck_is_id(t[-1])))
                    for (size_t i = 0; i < sizeof ck_barrier_words / sizeof *ck_barrier_words; i++)
                        if (!strncmp(t, ck_barrier_words[i], strlen(ck_barrier_words[i]))) s->barriers = 1;
            }
            ck_sbuf_printf(&s->out, "%.*s", (int)(e - p), p);
            p = e;
            continue;
        }
        if (c == '\n') line_start = 1;
        else if (c != ' ' && c != '\t' && c != '\r') line_start = 0;
        if (ck_is_id0(c)) {
            const char *b = p;
            while (ck_is_id(*p)) p++;
            size_t n = (size_t)(p - b);
            for (size_t i = 0; i < sizeof ck_barrier_words / sizeof *ck_barrier_words && !dead; i++)
                if (!strncmp(b, ck_barrier_words[i], strlen(ck_barrier_words[i]))) s->barriers = 1;
            if (n == 6 && !strncmp(b, "printf", 6)) s->uses_printf = 1;
            if (n == 8 && !strncmp(b, "template", 8)) {
                CK_DECL_END();
                decl_template = 1;
                ck_scan_tparams(s, p, &tparams, &ntparams);
            }
            if (func_depth == 0 && !decl_template && ((n == 7 && !strncmp(b, "typedef", 7)) ||
                                                      (n == 5 && !strncmp(b, "using", 5))))
                ck_scan_typedef(s, p, n == 5);
            if (s->bounds && n == 16 && !strncmp(b, "reinterpret_cast", 16)) {
                ck_sbuf_printf(&s->out, "ck__rcast");
                prev = 'a';
                continue;
            }
            if (n == 6 && !strncmp(b, "extern", 6)) {
                const char *q = ck_skip_ws(p);
                if (ck_tok_is(q, "__shared__")) {
                    const char *e = ck_scan_extern_shared(s, q + 10, func_depth > 0);
                    if (e) {
                        p = e;
                        prev = ';';
                        CK_DECL_END();
                        continue;
                    }
                } else if (!strncmp(q, "\"C\"", 3)) {
                    const char *r = ck_skip_ws(q + 3);
                    if (*r == '{') {
                        ck_sbuf_printf(&s->out, "%.*s", (int)(r - b), b);
                        p = r; /* the brace below opens an extern "C" block */
                        prev = 'C';
                        continue;
                    }
                    decl_extern_c = 1;
                }
            }
            if (n == 10 && !strncmp(b, "__global__", 10)) {
                int callable = !decl_template && (decl_extern_c || extern_c_depth > 0);
                ck_sbuf_printf(&s->out, "%.*s", (int)n, b);
                const char *e = ck_scan_global(s, p, callable, decl_template, tparams, ntparams);
                if (e) {
                    p = e;
                    prev = ')';
                }
                continue;
            }
            ck_sbuf_printf(&s->out, "%.*s", (int)n, b);
            /* "f() const {" opens a function body like "f() {" */
            prev = (n == 5 && !strncmp(b, "const", 5)) || (n == 8 && !strncmp(b, "noexcept", 8)) ||
                           (n == 8 && !strncmp(b, "override", 8)) || (n == 5 && !strncmp(b, "final", 5))
                       ? ')'
                       : 'a';
            continue;
        }
        if (c == '{') {
            int kind = prev == 'C' ? B_EXTERN_C : (prev == ')' || func_depth > 0) ? B_FUNC : B_OTHER;
            if (depth < (int)sizeof kinds) kinds[depth] = (char)kind;
            depth++;
            if (kind == B_FUNC) func_depth++;
            if (kind == B_EXTERN_C) extern_c_depth++;
            CK_DECL_END();
        } else if (c == '}') {
            if (depth > 0) {
                depth--;
                int kind = depth < (int)sizeof kinds ? kinds[depth] : B_OTHER;
                if (kind == B_FUNC) func_depth--;
                if (kind == B_EXTERN_C) extern_c_depth--;
            }
            CK_DECL_END();
        } else if (c == ';') {
            CK_DECL_END();
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') prev = c;
        ck_sbuf_printf(&s->out, "%c", c);
        p++;
    }
    CK_DECL_END();
#undef CK_DECL_END
    return s->out.failed || s->failed ? -1 : 0;
}

void ck_cpu_scan_free(ck_srcscan *s)
{
    free(s->out.s);
    for (int i = 0; i < s->nnames; i++) free(s->names[i]);
    free(s->names);
    for (int i = 0; i < s->nkernels; i++) {
        free(s->kernels[i].name);
        free(s->kernels[i].params);
        for (int j = 0; j < s->kernels[i].ntparams; j++) free(s->kernels[i].tparams[j]);
        free(s->kernels[i].tparams);
    }
    free(s->kernels);
    for (int i = 0; i < s->naliases; i++) {
        free(s->aliases[i].name);
        free(s->aliases[i].type);
    }
    free(s->aliases);
}

/* ------------------------------------------------------- signatures */

typedef struct {
    const ck_srcscan *s;
    const ck_scan_kernel *k;
    ck_kparam *out;
    int max, n;
} ck_sig_ctx;

static void ck_sig_param(void *ctx, const char *b, const char *e, int i)
{
    (void)i;
    ck_sig_ctx *c = ctx;
    if (c->n < c->max) {
        char *t = strndup(b, (size_t)(e - b));
        if (t) ck_classify(c->s, c->k, t, &c->out[c->n]);
        else memset(&c->out[c->n], 0, sizeof c->out[c->n]);
        free(t);
    }
    c->n++;
}

int ck_cpu_scan_signature(const ck_srcscan *s, const char *name, ck_kparam *out, int max)
{
    if (!name) return -1;
    /* "ns::k<float, 4>" names the template k */
    const char *lt = strchr(name, '<');
    size_t len = lt ? (size_t)(lt - name) : strlen(name);
    while (len && name[len - 1] == ' ') len--;
    const char *b = name;
    for (const char *q = name; q + 1 < name + len; q++)
        if (q[0] == ':' && q[1] == ':') b = q + 2;
    while (*b == ' ') b++;
    len -= (size_t)(b - name);
    const ck_scan_kernel *k = NULL;
    int n = -1;
    for (int i = 0; i < s->nkernels; i++) {
        const ck_scan_kernel *c = &s->kernels[i];
        if (strlen(c->name) != len || strncmp(c->name, b, len) || c->is_template != (lt != NULL)) continue;
        ck_kparam tmp[CK_MAX_KERNEL_PARAMS];
        ck_sig_ctx sc = {s, c, tmp, CK_MAX_KERNEL_PARAMS, 0};
        int cn = ck_split_params(c->params, c->params + strlen(c->params), NULL, NULL);
        ck_split_params(c->params, c->params + strlen(c->params), cn ? ck_sig_param : NULL, &sc);
        if (k) {
            /* a declaration and its definition agree; overloads do not */
            if (cn != n) return -1;
            for (int j = 0; j < n && j < max && j < CK_MAX_KERNEL_PARAMS; j++)
                if (tmp[j].kind != out[j].kind || tmp[j].dtype != out[j].dtype) return -1;
        }
        for (int j = 0; j < cn && j < max && j < CK_MAX_KERNEL_PARAMS; j++) {
            /* a declaration's names, when the definition has none */
            if (k && !tmp[j].name[0] && out[j].name[0]) memcpy(tmp[j].name, out[j].name, sizeof tmp[j].name);
            out[j] = tmp[j];
        }
        k = c;
        n = cn;
    }
    return n > CK_MAX_KERNEL_PARAMS ? -1 : n;
}

int ck_kernel_signature(const char *source, const char *const *options, int noptions, const char *name,
                        ck_kparam *out, int max)
{
    if (!source || !name || max < 0 || (max && !out)) return -1;
    ck_srcscan sc;
    memset(&sc, 0, sizeof sc);
    int n = -1;
    if (ck_cpu_scan_source(source, &sc) == 0) {
        ck_cpu_scan_defines(&sc, options, noptions);
        n = ck_cpu_scan_signature(&sc, name, out, max);
    }
    ck_cpu_scan_free(&sc);
    return n;
}
