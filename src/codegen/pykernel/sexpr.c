/* The tree's text -> nodes.  The grammar (written by python/cudakit/cuda/_tree.py):
 *     node  := '(' kind line col item* ')'  |  atom     (every list has its position)
 *     atom  := symbol | integer | float | "string"
 * Symbols are [A-Za-z_][A-Za-z0-9_.]* (and the operator names); floats are
 * Python's repr (inf, nan, 1e-300 included); strings escape \" \\ \n \t
 * and \xHH. */
#include "pyk_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names_[PK_COUNT] = {
    [PK_ATOM] = "atom",
#define PYK_KIND_NAME_(ID, text) [PK_##ID] = text,
    PYK_NODE_KINDS(PYK_KIND_NAME_)
#undef PYK_KIND_NAME_
};

const char *pyk_kind_name(int kind) { return kind >= 0 && kind < PK_COUNT ? kind_names_[kind] : "?"; }

typedef struct reader {
    pyk_ctx *c;
    const char *begin, *p, *end;
} reader;

_Noreturn static void bad(reader *r, const char *what)
{
    pyk_fail(r->c, NULL, CK_ERR_VALUE, "malformed kernel tree at byte %ld: %s", (long)(r->p - r->begin), what);
}

static void skip_space(reader *r)
{
    while (r->p < r->end && isspace((unsigned char)*r->p)) r->p++;
}

static int is_sym_char(char ch) { return isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '+' || ch == '-'; }

static pyk_node *read_atom(reader *r)
{
    pyk_node *n = pyk_alloc(r->c, sizeof *n);
    n->kind = PK_ATOM;
    if (*r->p == '"') {
        r->p++;
        char *buf = pyk_alloc(r->c, (size_t)(r->end - r->p) + 1), *o = buf;
        while (r->p < r->end && *r->p != '"') {
            char ch = *r->p++;
            if (ch == '\\') {
                if (r->p >= r->end) bad(r, "a string ends in a backslash");
                char e = *r->p++;
                if (e == 'n') ch = '\n';
                else if (e == 't') ch = '\t';
                else if (e == 'x') {
                    if (r->end - r->p < 2) bad(r, "a short \\x escape");
                    char hex[3] = {r->p[0], r->p[1], 0};
                    ch = (char)strtol(hex, NULL, 16);
                    r->p += 2;
                } else ch = e;
            }
            *o++ = ch;
        }
        if (r->p >= r->end) bad(r, "an unterminated string");
        r->p++;
        *o = '\0';
        n->atom = PA_STR;
        n->s = buf;
        return n;
    }
    const char *b = r->p;
    while (r->p < r->end && is_sym_char(*r->p)) r->p++;
    if (r->p == b) bad(r, "an unexpected character");
    size_t len = (size_t)(r->p - b);
    char *s = pyk_alloc(r->c, len + 1);
    memcpy(s, b, len);
    s[len] = '\0';
    n->s = s;
    char *e;
    if (isdigit((unsigned char)s[0]) || ((s[0] == '-' || s[0] == '+') && len > 1 && isdigit((unsigned char)s[1]))) {
        int is_float = strpbrk(s, ".eE") != NULL;
        if (!is_float) {
            errno = 0;
            long long v = strtoll(s, &e, 10);
            if (*e) bad(r, "a malformed integer");
            n->atom = PA_INT;
            n->i = v;
            n->big = errno == ERANGE;
            return n;
        }
        n->atom = PA_FLOAT;
        n->f = strtod(s, &e);
        if (*e) bad(r, "a malformed float");
        return n;
    }
    if (!strcmp(s, "inf") || !strcmp(s, "-inf") || !strcmp(s, "nan")) {
        n->atom = PA_FLOAT;
        n->f = strtod(s, NULL);
        return n;
    }
    n->atom = PA_SYM;
    return n;
}

static pyk_node *read_node(reader *r, int depth)
{
    skip_space(r);
    if (r->p >= r->end) bad(r, "an unexpected end");
    if (depth > 4000) bad(r, "nesting too deep");
    if (*r->p != '(') return read_atom(r);
    r->p++;
    skip_space(r);
    pyk_node *head = read_atom(r);
    if (head->atom != PA_SYM) bad(r, "a list without a kind");
    pyk_node *n = pyk_alloc(r->c, sizeof *n);
    n->kind = -1;
    for (int k = 1; k < PK_COUNT; k++)
        if (!strcmp(kind_names_[k], head->s)) { n->kind = k; break; }
    if (n->kind < 0) bad(r, "an unknown node kind");
    for (int k = 0; k < 2; k++) {
        skip_space(r);
        pyk_node *pos = r->p < r->end && *r->p != '(' ? read_atom(r) : NULL;
        if (!pos || pos->atom != PA_INT) bad(r, "a list without its line and column");
        if (k == 0) n->line = (int)pos->i;
        else n->col = (int)pos->i + 1;   /* Python's offsets are 0-based */
    }
    int cap = 4;
    n->v = pyk_alloc(r->c, (size_t)cap * sizeof *n->v);
    for (;;) {
        skip_space(r);
        if (r->p >= r->end) bad(r, "an unclosed list");
        if (*r->p == ')') { r->p++; break; }
        pyk_node *item = read_node(r, depth + 1);
        if (n->n == cap) {
            pyk_node **nv = pyk_alloc(r->c, (size_t)cap * 2 * sizeof *nv);
            memcpy(nv, n->v, (size_t)cap * sizeof *nv);
            n->v = nv;
            cap *= 2;
        }
        n->v[n->n++] = item;
    }
    return n;
}

pyk_node *pyk_parse(pyk_ctx *c, const char *text, size_t len)
{
    reader r = {c, text, text, text + len};
    pyk_node *n = read_node(&r, 0);
    skip_space(&r);
    if (r.p != r.end) bad(&r, "text after the tree");
    if (n->kind != PK_MODULE) pyk_fail(c, NULL, CK_ERR_VALUE, "a kernel tree must be a (module ...)");
    return n;
}

const char *pyk_sym(pyk_ctx *c, const pyk_node *n, int i)
{
    pyk_node *k = pyk_kid(n, i);
    if (!k || k->kind != PK_ATOM || k->atom != PA_SYM)
        pyk_fail(c, n, CK_ERR_VALUE, "malformed kernel tree: element %d of a %s is not a name", i,
                 pyk_kind_name(n->kind));
    return k->s;
}

pyk_node *pyk_list(pyk_ctx *c, const pyk_node *n, int i, int kind)
{
    pyk_node *k = pyk_kid(n, i);
    if (!k || k->kind != kind)
        pyk_fail(c, n, CK_ERR_VALUE, "malformed kernel tree: element %d of a %s is not a %s", i,
                 pyk_kind_name(n->kind), pyk_kind_name(kind));
    return k;
}
