/* Helpers shared by the op families (not part of the public C API). */
#ifndef CK_OPS_INTERNAL_H
#define CK_OPS_INTERNAL_H

#include "cudakit.h"
#include "../array/layout.h"
#include "../backend/backend.h"
#include "../runtime/profiler.h"

#include <stdio.h>

/* op over all of a's axes, the one value read to the host (a device sync,
 * which the sync debug mode reports as why: "the number of true elements"):
 * for the checks and sizes that the host must know (min/max of indices,
 * a mask's count). */
ck_status ck_reduce_to_host(ck_reduce_op op, const ck_array *a, ck_scalar *value, const char *why);
/* Run a cast of src into dst (same shape) on their device. */
ck_status ck_cast_into(ck_array *dst, const ck_array *src);

#endif
