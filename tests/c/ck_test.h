/* What the C tests share: CHECK counts a failed condition and says where,
 * OK stops the test when a core call fails.  One copy per test program. */
#ifndef CK_TEST_H
#define CK_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cudakit.h"

static int failures = 0;

/* xorshift64: the same pseudo-random sequence on every run */
static uint64_t ck_test_rng_ = 0x9E3779B97F4A7C15ull;
static inline uint64_t ck_test_rand(void)
{
    ck_test_rng_ ^= ck_test_rng_ << 13;
    ck_test_rng_ ^= ck_test_rng_ >> 7;
    ck_test_rng_ ^= ck_test_rng_ << 17;
    return ck_test_rng_;
}

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
