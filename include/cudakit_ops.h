/*
 * cudakit_ops.h - the element-wise op table.
 *
 * Every element-wise op is one row here; the op enum, the Python ufunc
 * objects (and cudakit._core._op_table), the type resolution and the CPU
 * loops are all generated from it (a new row fails to build until each
 * backend's expression table has it).
 *
 *   X(ID, name, nin, types, rule, cost, flags)
 *
 * types: the dtypes the op has loops for (a CK_TS_* set).
 * rule:  how inputs map to a loop and the loop to an output (CK_R_* flags):
 *   inputs are promoted (NEP 50), then moved to the first dtype of `types`
 *   that the promoted dtype casts to safely (int8 -> float16 for sqrt, as
 *   NumPy's loop order does), except where the rule says otherwise.
 * cost:  CK_COST_CHEAP or CK_COST_COSTLY, what an element costs on the CPU
 *   in real dtypes other than float16 (the size from which a loop is worth
 *   splitting over the cores).
 * flags: what the op is (CK_OPF_*), for the rules that single ops out.
 */
#ifndef CUDAKIT_OPS_H
#define CUDAKIT_OPS_H

/* Sets of loop dtypes, one bit per ck_dtype, made of whole kinds:
 * CK_TS_KINDS_<set> says which of (bool, int, uint, float, complex) the
 * set holds, and the CPU loops read the same.  (A mask is an expansion of
 * CK_DTYPES, so it is not for use inside one.) */
#define CK_TS_KINDS_CK_TS_BOOL     (1, 0, 0, 0, 0)
#define CK_TS_KINDS_CK_TS_INT      (0, 1, 1, 0, 0)   /* int8 .. uint64 */
#define CK_TS_KINDS_CK_TS_FLOAT    (0, 0, 0, 1, 0)   /* float16 .. float64 */
#define CK_TS_KINDS_CK_TS_COMPLEX  (0, 0, 0, 0, 1)
#define CK_TS_KINDS_CK_TS_INEXACT  (0, 0, 0, 1, 1)
#define CK_TS_KINDS_CK_TS_NUM      (0, 1, 1, 1, 1)
#define CK_TS_KINDS_CK_TS_REAL     (0, 1, 1, 1, 0)
#define CK_TS_KINDS_CK_TS_ALL      (1, 1, 1, 1, 1)
#define CK_TS_KINDS_CK_TS_BOOLINT  (1, 1, 1, 0, 0)
#define CK_TS_KINDS_CK_TS_ROUND    (1, 1, 1, 1, 0)   /* floor, ceil, trunc: NumPy >= 2.3 keeps bool and ints */

#define CK_TS_BIT_(ks, ID, name, K, ...) | ((unsigned)CK_KIND_PICK_##K ks << CK_##ID)
#define CK_TS_OF_(ks) (0u CK_DTYPES(CK_TS_BIT_, ks))
#define CK_TS_BOOL     CK_TS_OF_(CK_TS_KINDS_CK_TS_BOOL)
#define CK_TS_INT      CK_TS_OF_(CK_TS_KINDS_CK_TS_INT)
#define CK_TS_FLOAT    CK_TS_OF_(CK_TS_KINDS_CK_TS_FLOAT)
#define CK_TS_COMPLEX  CK_TS_OF_(CK_TS_KINDS_CK_TS_COMPLEX)
#define CK_TS_INEXACT  CK_TS_OF_(CK_TS_KINDS_CK_TS_INEXACT)
#define CK_TS_NUM      CK_TS_OF_(CK_TS_KINDS_CK_TS_NUM)
#define CK_TS_REAL     CK_TS_OF_(CK_TS_KINDS_CK_TS_REAL)
#define CK_TS_ALL      CK_TS_OF_(CK_TS_KINDS_CK_TS_ALL)
#define CK_TS_BOOLINT  CK_TS_OF_(CK_TS_KINDS_CK_TS_BOOLINT)
#define CK_TS_ROUND    CK_TS_OF_(CK_TS_KINDS_CK_TS_ROUND)

/* Resolution rules. */
#define CK_R_SAME       0u        /* output dtype = loop dtype */
#define CK_R_OUT_BOOL   1u        /* output is bool */
#define CK_R_OUT_REAL   2u        /* output is the real dtype (abs of complex) */
#define CK_R_NO_BOOL    4u        /* a bool input is a TypeError (subtract, negative) */
#define CK_R_INT_DOUBLE 8u        /* integer inputs go to float64 (true_divide) */
#define CK_R_WHERE      16u       /* first input is a bool condition, not promoted */

/* Costs. */
#define CK_COST_CHEAP   0         /* a few instructions an element: memory bound */
#define CK_COST_COSTLY  1         /* more: a libm call, an integer division, a loop */

/* Flags. */
#define CK_OPF_LOGICAL  1u        /* looks only at truth values (a weak scalar joins as its truth) */
#define CK_OPF_COMPARE  2u        /* a comparison (against an int out of range it has one answer) */

#define CK_UNARY_OPS(X) \
    X(NEGATIVE,      negative,      1, CK_TS_NUM,     CK_R_NO_BOOL,    CK_COST_CHEAP,  0) \
    X(POSITIVE,      positive,      1, CK_TS_NUM,     CK_R_NO_BOOL,    CK_COST_CHEAP,  0) \
    X(ABSOLUTE,      absolute,      1, CK_TS_ALL,     CK_R_OUT_REAL,   CK_COST_CHEAP,  0) \
    X(SIGN,          sign,          1, CK_TS_NUM,     CK_R_NO_BOOL,    CK_COST_COSTLY, 0) \
    X(CONJUGATE,     conjugate,     1, CK_TS_NUM,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(SQUARE,        square,        1, CK_TS_NUM,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(RECIPROCAL,    reciprocal,    1, CK_TS_NUM,     CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(SQRT,          sqrt,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(CBRT,          cbrt,          1, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(EXP,           exp,           1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(EXP2,          exp2,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(EXPM1,         expm1,         1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOG,           log,           1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOG2,          log2,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOG10,         log10,         1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOG1P,         log1p,         1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(SIN,           sin,           1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(COS,           cos,           1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(TAN,           tan,           1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCSIN,        arcsin,        1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCCOS,        arccos,        1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCTAN,        arctan,        1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(SINH,          sinh,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(COSH,          cosh,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(TANH,          tanh,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCSINH,       arcsinh,       1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCCOSH,       arccosh,       1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCTANH,       arctanh,       1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(DEG2RAD,       deg2rad,       1, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(RAD2DEG,       rad2deg,       1, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(FLOOR,         floor,         1, CK_TS_ROUND,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(CEIL,          ceil,          1, CK_TS_ROUND,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(TRUNC,         trunc,         1, CK_TS_ROUND,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(RINT,          rint,          1, CK_TS_INEXACT, CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ISNAN,         isnan,         1, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  0) \
    X(ISINF,         isinf,         1, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  0) \
    X(ISFINITE,      isfinite,      1, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  0) \
    X(SIGNBIT,       signbit,       1, CK_TS_FLOAT,   CK_R_OUT_BOOL,   CK_COST_CHEAP,  0) \
    X(LOGICAL_NOT,   logical_not,   1, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_LOGICAL) \
    X(INVERT,        invert,        1, CK_TS_BOOLINT, CK_R_SAME,       CK_COST_CHEAP,  0)

#define CK_BINARY_OPS(X) \
    X(ADD,           add,           2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(SUBTRACT,      subtract,      2, CK_TS_NUM,     CK_R_NO_BOOL,    CK_COST_CHEAP,  0) \
    X(MULTIPLY,      multiply,      2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(TRUE_DIVIDE,   divide,        2, CK_TS_INEXACT, CK_R_INT_DOUBLE, CK_COST_CHEAP,  0) \
    X(FLOOR_DIVIDE,  floor_divide,  2, CK_TS_REAL,    CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(REMAINDER,     remainder,     2, CK_TS_REAL,    CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(FMOD,          fmod,          2, CK_TS_REAL,    CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(POWER,         power,         2, CK_TS_NUM,     CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(MAXIMUM,       maximum,       2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(MINIMUM,       minimum,       2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(FMAX,          fmax,          2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(FMIN,          fmin,          2, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(COPYSIGN,      copysign,      2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(HYPOT,         hypot,         2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(ARCTAN2,       arctan2,       2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOGADDEXP,     logaddexp,     2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(LOGADDEXP2,    logaddexp2,    2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(NEXTAFTER,     nextafter,     2, CK_TS_FLOAT,   CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(EQUAL,         equal,         2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(NOT_EQUAL,     not_equal,     2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(LESS,          less,          2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(LESS_EQUAL,    less_equal,    2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(GREATER,       greater,       2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(GREATER_EQUAL, greater_equal, 2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_COMPARE) \
    X(LOGICAL_AND,   logical_and,   2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_LOGICAL) \
    X(LOGICAL_OR,    logical_or,    2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_LOGICAL) \
    X(LOGICAL_XOR,   logical_xor,   2, CK_TS_ALL,     CK_R_OUT_BOOL,   CK_COST_CHEAP,  CK_OPF_LOGICAL) \
    X(BITWISE_AND,   bitwise_and,   2, CK_TS_BOOLINT, CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(BITWISE_OR,    bitwise_or,    2, CK_TS_BOOLINT, CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(BITWISE_XOR,   bitwise_xor,   2, CK_TS_BOOLINT, CK_R_SAME,       CK_COST_CHEAP,  0) \
    X(LEFT_SHIFT,    left_shift,    2, CK_TS_INT,     CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(RIGHT_SHIFT,   right_shift,   2, CK_TS_INT,     CK_R_SAME,       CK_COST_COSTLY, 0) \
    X(GCD,           gcd,           2, CK_TS_INT,     CK_R_NO_BOOL,    CK_COST_COSTLY, 0) \
    X(LCM,           lcm,           2, CK_TS_INT,     CK_R_NO_BOOL,    CK_COST_COSTLY, 0)

#define CK_TERNARY_OPS(X) \
    X(WHERE,         where,         3, CK_TS_ALL,     CK_R_WHERE,      CK_COST_CHEAP,  0) \
    X(CLIP,          clip,          3, CK_TS_ALL,     CK_R_SAME,       CK_COST_CHEAP,  0)

#define CK_ALL_OPS(X) CK_UNARY_OPS(X) CK_BINARY_OPS(X) CK_TERNARY_OPS(X)

typedef enum ck_op {
#define CK_OP_ENUM_(ID, name, nin, types, rule, cost, flags) CK_OP_##ID,
    CK_ALL_OPS(CK_OP_ENUM_)
#undef CK_OP_ENUM_
    CK_OP_COUNT
} ck_op;

typedef struct ck_op_info {
    const char *name;
    int nin;
    unsigned types;   /* CK_TS_* */
    unsigned rule;    /* CK_R_* */
    int cost;         /* CK_COST_* */
    unsigned flags;   /* CK_OPF_* */
} ck_op_info;

extern const ck_op_info ck_op_table[CK_OP_COUNT];

#endif /* CUDAKIT_OPS_H */
