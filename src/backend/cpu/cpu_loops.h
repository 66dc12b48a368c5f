/* The CPU inner loops: one signature for every element-wise loop (NumPy's):
 * args[0] is the output, args[1..nin] the inputs, each advanced by its byte
 * step; n elements.  A loop returns CK_OK or a status with the error set
 * (integer power with a negative exponent, say). */
#ifndef CK_CPU_LOOPS_H
#define CK_CPU_LOOPS_H

#include "cudakit.h"

typedef ck_status (*ck_cpu_loop)(char **args, int64_t n, const int64_t *steps);

/* Loops of op by loop dtype (NULL where the op has none). */
extern ck_cpu_loop ck_cpu_ew_loops[CK_OP_COUNT][CK_NTYPES];
/* Cast loops [to][from]: args[0] out, args[1] in. */
extern ck_cpu_loop ck_cpu_cast_loops[CK_NTYPES][CK_NTYPES];

/* Scalar helpers shared with the reductions. */
#endif
