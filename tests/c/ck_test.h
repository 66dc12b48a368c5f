/* What the C tests share: CHECK counts a failed condition and says where,
 * OK stops the test when a core call fails.  One copy per test program. */
#ifndef CK_TEST_H
#define CK_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "cudakit.h"

static int failures = 0;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            failures++;                                                           \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

#define OK(call)                                                                  \
    do {                                                                          \
        ck_status s_ = (call);                                                    \
        if (s_ != CK_OK) {                                                        \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                    ck_error_message());                                          \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

#endif
