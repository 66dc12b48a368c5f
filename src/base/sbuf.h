/*
 * sbuf.h - a growable string for text made at run time: kernel source,
 * compiler command lines, messages.  A write that fails (out of memory)
 * marks the buffer failed and later writes do nothing, so a generator
 * writes freely and checks once, at the end.
 *
 *     ck_sbuf b = {0};
 *     ck_sbuf_printf(&b, "#define N %d\n", n);
 *     char *text = ck_sbuf_finish(&b);   // NULL with CK_ERR_MEMORY set; caller frees
 */
#ifndef CK_BASE_SBUF_H
#define CK_BASE_SBUF_H

#include <stddef.h>

typedef struct ck_sbuf {
    char *s;          /* NUL-terminated text once anything is written; NULL before */
    size_t len, cap;  /* bytes of text (without the NUL), bytes allocated */
    int failed;       /* a write failed: s is incomplete */
} ck_sbuf;

void ck_sbuf_printf(ck_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* b's text, or NULL with an error set (and b freed) when a write failed. */
char *ck_sbuf_finish(ck_sbuf *b);

#endif
