/* Entry points shared between the CPU backend's files. */
#ifndef CK_CPU_INTERNAL_H
#define CK_CPU_INTERNAL_H

#include "../backend.h"
#include "cpu_loops.h"

/* Walk an iteration space with an inner loop; split over the cores when
 * it->size >= parallel_min. */
ck_status ck_cpu_walk(ck_cpu_loop fn, const ck_iter *it, int64_t parallel_min);
ck_status ck_cpu_reduce(const ck_reduce_desc *d);
ck_status ck_cpu_scan(const ck_scan_desc *d);
/* Free the host blocks kept for reuse. */
void ck_cpu_empty_cache(void);

#endif
