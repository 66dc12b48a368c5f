/*
 * cudakit_ops.h - the element-wise op table.
 *
 * Every element-wise op is one row here; the op enum, the Python ufunc
 * objects, the type resolution and the CPU loops are all generated from it
 * (a new row fails to build until each backend's expression table has it).
 *
 *   X(ID, name, nin, types, rule)
 *
 * types: the dtypes the op has loops for (a CK_TS_* set).
 * rule:  how inputs map to a loop and the loop to an output (CK_R_* flags):
 *   inputs are promoted (NEP 50), then moved to the first dtype of `types`
 *   that the promoted dtype casts to safely (int8 -> float16 for sqrt, as
 *   NumPy's loop order does), except where the rule says otherwise.
 */
#ifndef CUDAKIT_OPS_H
#define CUDAKIT_OPS_H

/* Sets of loop dtypes, one bit per ck_dtype. */
#define CK_TS_BOOL     (1u << 0)
#define CK_TS_INT      (0xFFu << 1)            /* int8 .. uint64 */
#define CK_TS_FLOAT    (0x7u << 9)             /* float16 .. float64 */
#define CK_TS_COMPLEX  (0x3u << 12)
#define CK_TS_INEXACT  (CK_TS_FLOAT | CK_TS_COMPLEX)
#define CK_TS_NUM      (CK_TS_INT | CK_TS_INEXACT)
#define CK_TS_REAL     (CK_TS_INT | CK_TS_FLOAT)
#define CK_TS_ALL      (CK_TS_BOOL | CK_TS_NUM)
#define CK_TS_BOOLINT  (CK_TS_BOOL | CK_TS_INT)
#define CK_TS_ROUND    (CK_TS_BOOL | CK_TS_REAL)     /* floor, ceil, trunc: NumPy >= 2.3 keeps bool and ints */

/* Resolution rules. */
#define CK_R_SAME       0u        /* output dtype = loop dtype */
#define CK_R_OUT_BOOL   1u        /* output is bool */
#define CK_R_OUT_REAL   2u        /* output is the real dtype (abs of complex) */
#define CK_R_NO_BOOL    4u        /* a bool input is a TypeError (subtract, negative) */
#define CK_R_INT_DOUBLE 8u        /* integer inputs go to float64 (true_divide) */
#define CK_R_WHERE      16u       /* first input is a bool condition, not promoted */

#define CK_UNARY_OPS(X) \
    X(NEGATIVE,      negative,      1, CK_TS_NUM,     CK_R_NO_BOOL) \
    X(POSITIVE,      positive,      1, CK_TS_NUM,     CK_R_NO_BOOL) \
    X(ABSOLUTE,      absolute,      1, CK_TS_ALL,     CK_R_OUT_REAL) \
    X(SIGN,          sign,          1, CK_TS_NUM,     CK_R_NO_BOOL) \
    X(CONJUGATE,     conjugate,     1, CK_TS_NUM,     CK_R_SAME) \
    X(SQUARE,        square,        1, CK_TS_NUM,     CK_R_SAME) \
    X(RECIPROCAL,    reciprocal,    1, CK_TS_NUM,     CK_R_SAME) \
    X(SQRT,          sqrt,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(CBRT,          cbrt,          1, CK_TS_FLOAT,   CK_R_SAME) \
    X(EXP,           exp,           1, CK_TS_INEXACT, CK_R_SAME) \
    X(EXP2,          exp2,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(EXPM1,         expm1,         1, CK_TS_INEXACT, CK_R_SAME) \
    X(LOG,           log,           1, CK_TS_INEXACT, CK_R_SAME) \
    X(LOG2,          log2,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(LOG10,         log10,         1, CK_TS_INEXACT, CK_R_SAME) \
    X(LOG1P,         log1p,         1, CK_TS_INEXACT, CK_R_SAME) \
    X(SIN,           sin,           1, CK_TS_INEXACT, CK_R_SAME) \
    X(COS,           cos,           1, CK_TS_INEXACT, CK_R_SAME) \
    X(TAN,           tan,           1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCSIN,        arcsin,        1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCCOS,        arccos,        1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCTAN,        arctan,        1, CK_TS_INEXACT, CK_R_SAME) \
    X(SINH,          sinh,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(COSH,          cosh,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(TANH,          tanh,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCSINH,       arcsinh,       1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCCOSH,       arccosh,       1, CK_TS_INEXACT, CK_R_SAME) \
    X(ARCTANH,       arctanh,       1, CK_TS_INEXACT, CK_R_SAME) \
    X(DEG2RAD,       deg2rad,       1, CK_TS_FLOAT,   CK_R_SAME) \
    X(RAD2DEG,       rad2deg,       1, CK_TS_FLOAT,   CK_R_SAME) \
    X(FLOOR,         floor,         1, CK_TS_ROUND,   CK_R_SAME) \
    X(CEIL,          ceil,          1, CK_TS_ROUND,   CK_R_SAME) \
    X(TRUNC,         trunc,         1, CK_TS_ROUND,   CK_R_SAME) \
    X(RINT,          rint,          1, CK_TS_INEXACT, CK_R_SAME) \
    X(ISNAN,         isnan,         1, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(ISINF,         isinf,         1, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(ISFINITE,      isfinite,      1, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(SIGNBIT,       signbit,       1, CK_TS_FLOAT,   CK_R_OUT_BOOL) \
    X(LOGICAL_NOT,   logical_not,   1, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(INVERT,        invert,        1, CK_TS_BOOLINT, CK_R_SAME)

#define CK_BINARY_OPS(X) \
    X(ADD,           add,           2, CK_TS_ALL,     CK_R_SAME) \
    X(SUBTRACT,      subtract,      2, CK_TS_NUM,     CK_R_NO_BOOL) \
    X(MULTIPLY,      multiply,      2, CK_TS_ALL,     CK_R_SAME) \
    X(TRUE_DIVIDE,   divide,        2, CK_TS_INEXACT, CK_R_INT_DOUBLE) \
    X(FLOOR_DIVIDE,  floor_divide,  2, CK_TS_REAL,    CK_R_SAME) \
    X(REMAINDER,     remainder,     2, CK_TS_REAL,    CK_R_SAME) \
    X(FMOD,          fmod,          2, CK_TS_REAL,    CK_R_SAME) \
    X(POWER,         power,         2, CK_TS_NUM,     CK_R_SAME) \
    X(MAXIMUM,       maximum,       2, CK_TS_ALL,     CK_R_SAME) \
    X(MINIMUM,       minimum,       2, CK_TS_ALL,     CK_R_SAME) \
    X(FMAX,          fmax,          2, CK_TS_ALL,     CK_R_SAME) \
    X(FMIN,          fmin,          2, CK_TS_ALL,     CK_R_SAME) \
    X(COPYSIGN,      copysign,      2, CK_TS_FLOAT,   CK_R_SAME) \
    X(HYPOT,         hypot,         2, CK_TS_FLOAT,   CK_R_SAME) \
    X(ARCTAN2,       arctan2,       2, CK_TS_FLOAT,   CK_R_SAME) \
    X(LOGADDEXP,     logaddexp,     2, CK_TS_FLOAT,   CK_R_SAME) \
    X(LOGADDEXP2,    logaddexp2,    2, CK_TS_FLOAT,   CK_R_SAME) \
    X(NEXTAFTER,     nextafter,     2, CK_TS_FLOAT,   CK_R_SAME) \
    X(EQUAL,         equal,         2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(NOT_EQUAL,     not_equal,     2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(LESS,          less,          2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(LESS_EQUAL,    less_equal,    2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(GREATER,       greater,       2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(GREATER_EQUAL, greater_equal, 2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(LOGICAL_AND,   logical_and,   2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(LOGICAL_OR,    logical_or,    2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(LOGICAL_XOR,   logical_xor,   2, CK_TS_ALL,     CK_R_OUT_BOOL) \
    X(BITWISE_AND,   bitwise_and,   2, CK_TS_BOOLINT, CK_R_SAME) \
    X(BITWISE_OR,    bitwise_or,    2, CK_TS_BOOLINT, CK_R_SAME) \
    X(BITWISE_XOR,   bitwise_xor,   2, CK_TS_BOOLINT, CK_R_SAME) \
    X(LEFT_SHIFT,    left_shift,    2, CK_TS_INT,     CK_R_SAME) \
    X(RIGHT_SHIFT,   right_shift,   2, CK_TS_INT,     CK_R_SAME) \
    X(GCD,           gcd,           2, CK_TS_INT,     CK_R_NO_BOOL) \
    X(LCM,           lcm,           2, CK_TS_INT,     CK_R_NO_BOOL)

#define CK_TERNARY_OPS(X) \
    X(WHERE,         where,         3, CK_TS_ALL,     CK_R_WHERE) \
    X(CLIP,          clip,          3, CK_TS_ALL,     CK_R_SAME)

#define CK_ALL_OPS(X) CK_UNARY_OPS(X) CK_BINARY_OPS(X) CK_TERNARY_OPS(X)

typedef enum ck_op {
#define CK_OP_ENUM_(ID, name, nin, types, rule) CK_OP_##ID,
    CK_ALL_OPS(CK_OP_ENUM_)
#undef CK_OP_ENUM_
    CK_OP_COUNT
} ck_op;

typedef struct ck_op_info {
    const char *name;
    int nin;
    unsigned types;   /* CK_TS_* */
    unsigned rule;    /* CK_R_* */
} ck_op_info;

extern const ck_op_info ck_op_table[CK_OP_COUNT];

#endif /* CUDAKIT_OPS_H */
