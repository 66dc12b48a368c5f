/* The source scan (see internal.h): one pass over the user's CUDA C that
 * copies it with extern __shared__ declarations rewritten (line numbers
 * kept), lists the extern "C" __global__ functions, and notes whether
 * anything may need a barrier (so that blocks run as fibers) or printf. */
#define _GNU_SOURCE /* strndup */
#include "internal.h"

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

/* After __global__: the function's name is the identifier before the
 * first '(' that does not open an attribute's arguments. */
static void ck_scan_kernel(ck_srcscan *s, const char *p)
{
    const char *last = NULL;
    size_t lastn = 0;
    for (;;) {
        p = ck_skip_ws(p);
        if (!*p || *p == ';' || *p == '{') return;
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
            if (last) ck_scan_add_name(s, last, lastn);
            return;
        } else {
            p++;
        }
    }
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
    char prev = 0; /* last significant character outside comments */
    ck_conds conds = {0};
    int dead = 0;  /* in a section the CPU's compile leaves out */
    const char *p = src;
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
            if (n == 8 && !strncmp(b, "template", 8)) decl_template = 1;
            if (n == 6 && !strncmp(b, "extern", 6)) {
                const char *q = ck_skip_ws(p);
                if (ck_tok_is(q, "__shared__")) {
                    const char *e = ck_scan_extern_shared(s, q + 10, func_depth > 0);
                    if (e) {
                        p = e;
                        prev = ';';
                        decl_extern_c = decl_template = 0;
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
            if (n == 10 && !strncmp(b, "__global__", 10) && !decl_template && (decl_extern_c || extern_c_depth > 0))
                ck_scan_kernel(s, p);
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
            decl_extern_c = decl_template = 0;
        } else if (c == '}') {
            if (depth > 0) {
                depth--;
                int kind = depth < (int)sizeof kinds ? kinds[depth] : B_OTHER;
                if (kind == B_FUNC) func_depth--;
                if (kind == B_EXTERN_C) extern_c_depth--;
            }
            decl_extern_c = decl_template = 0;
        } else if (c == ';') {
            decl_extern_c = decl_template = 0;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') prev = c;
        ck_sbuf_printf(&s->out, "%c", c);
        p++;
    }
    return s->out.failed ? -1 : 0;
}

void ck_cpu_scan_free(ck_srcscan *s)
{
    free(s->out.s);
    for (int i = 0; i < s->nnames; i++) free(s->names[i]);
    free(s->names);
}
