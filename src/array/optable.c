/* The op table's data, from the X-macro rows of cudakit_ops.h. */
#include "cudakit.h"

const ck_op_info ck_op_table[CK_OP_COUNT] = {
#define CK_OP_INFO_(ID, name, nin, types, rule, cost, flags) [CK_OP_##ID] = {#name, nin, types, rule, cost, flags},
    CK_ALL_OPS(CK_OP_INFO_)
#undef CK_OP_INFO_
};

/* A type set is a mask of ck_dtype bits in an unsigned. */
_Static_assert(CK_NTYPES <= 32, "more dtypes than the bits of a type set");
