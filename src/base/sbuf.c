/* The growable string (see sbuf.h). */
#include "sbuf.h"
#include "cudakit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void ck_sbuf_printf(ck_sbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { b->failed = 1; return; }
        if (b->s && (size_t)n < room) { b->len += (size_t)n; return; }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
}

char *ck_sbuf_finish(ck_sbuf *b)
{
    if (b->failed) {
        free(b->s);
        b->s = NULL;
        ck_error_set(CK_ERR_MEMORY, "out of memory generating a kernel");
        return NULL;
    }
    return b->s;
}
