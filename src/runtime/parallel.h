/* A small persistent thread pool for the CPU backend: ck_parallel_for runs
 * fn over [0, n) split into contiguous chunks, one per thread, the calling
 * thread taking the first.  Nested calls run serially. */
#ifndef CK_RUNTIME_PARALLEL_H
#define CK_RUNTIME_PARALLEL_H

#include <stdint.h>

typedef void (*ck_range_fn)(void *ctx, int64_t begin, int64_t end, int worker);

/* grain: chunks are multiples of it (except the last).  Runs serially when
 * n < 2 * grain or only one thread is configured. */
void ck_parallel_for(int64_t n, int64_t grain, ck_range_fn fn, void *ctx);
/* How many chunks ck_parallel_for would use for n (for per-worker scratch). */
int ck_parallel_nchunks(int64_t n, int64_t grain);

#endif
