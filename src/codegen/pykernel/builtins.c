/* The one table of what a kernel may call or read: cuda's intrinsics,
 * math's and cmath's functions, NumPy's ufuncs (a row per op of the op
 * table, made from it) and dtypes, Python's builtins.  A row's name is
 * qualified ("cuda.atomic.add", "math.sin", "abs"); a namespace is a row
 * too ("cuda.atomic"), so `cuda.atomic.add` resolves one attribute at a
 * time.  Typing (infer.c) and writing (emit.c) switch on a row's id. */
#include "pyk_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MOD(n) {n, PB_MODULE, PF_NONE, -1, 0, CK_BOOL}
#define FN(n, id) {n, PB_FUNC, id, -1, 0, CK_BOOL}
#define FNOP(n, id, op) {n, PB_FUNC, id, op, 0, CK_BOOL}
#define DIM3(n, id) {n, PB_DIM3, id, -1, 0, CK_BOOL}
#define CONST(n, v) {n, PB_CONST, PF_FLOAT_CONST, -1, v, CK_FLOAT64}
#define DT(n, d) {n, PB_DTYPE, PF_CAST, -1, 0, d}

static const pyk_builtin fixed_[] = {
    /* modules */
    MOD("cuda"), MOD("cuda.atomic"), MOD("cuda.shared"), MOD("cuda.local"), MOD("cuda.const"), MOD("cuda.fp16"),
    MOD("cuda.cg"), MOD("cuda.random"), MOD("math"), MOD("cmath"), MOD("numpy"),

    /* thread indexing */
    DIM3("cuda.threadIdx", PF_NONE), DIM3("cuda.blockIdx", PF_NONE), DIM3("cuda.blockDim", PF_NONE),
    DIM3("cuda.gridDim", PF_NONE), DIM3("cuda.laneid", PF_LANEID), DIM3("cuda.warpsize", PF_WARPSIZE),
    FN("cuda.grid", PF_GRID), FN("cuda.gridsize", PF_GRIDSIZE),

    /* barriers and fences */
    FN("cuda.syncthreads", PF_SYNCTHREADS), FN("cuda.syncthreads_count", PF_SYNCTHREADS_COUNT),
    FN("cuda.syncthreads_and", PF_SYNCTHREADS_AND), FN("cuda.syncthreads_or", PF_SYNCTHREADS_OR),
    FN("cuda.syncwarp", PF_SYNCWARP), FN("cuda.threadfence", PF_THREADFENCE),
    FN("cuda.threadfence_block", PF_THREADFENCE_BLOCK), FN("cuda.threadfence_system", PF_THREADFENCE_SYSTEM),

    /* memory */
    FN("cuda.shared.array", PF_SHARED_ARRAY), FN("cuda.local.array", PF_LOCAL_ARRAY),
    FN("cuda.const.array_like", PF_CONST_ARRAY_LIKE),

    /* atomics: op is the PYK_AT_* */
    FNOP("cuda.atomic.add", PF_ATOMIC, PYK_AT_ADD), FNOP("cuda.atomic.sub", PF_ATOMIC, PYK_AT_SUB),
    FNOP("cuda.atomic.and_", PF_ATOMIC, PYK_AT_AND), FNOP("cuda.atomic.or_", PF_ATOMIC, PYK_AT_OR),
    FNOP("cuda.atomic.xor", PF_ATOMIC, PYK_AT_XOR), FNOP("cuda.atomic.inc", PF_ATOMIC, PYK_AT_INC),
    FNOP("cuda.atomic.dec", PF_ATOMIC, PYK_AT_DEC), FNOP("cuda.atomic.exch", PF_ATOMIC, PYK_AT_EXCH),
    FNOP("cuda.atomic.max", PF_ATOMIC, PYK_AT_MAX), FNOP("cuda.atomic.min", PF_ATOMIC, PYK_AT_MIN),
    FNOP("cuda.atomic.nanmax", PF_ATOMIC, PYK_AT_NANMAX), FNOP("cuda.atomic.nanmin", PF_ATOMIC, PYK_AT_NANMIN),
    FNOP("cuda.atomic.compare_and_swap", PF_ATOMIC, PYK_AT_CAS0), FNOP("cuda.atomic.cas", PF_ATOMIC, PYK_AT_CAS),

    /* warps: op 0..3 says which vote or shuffle */
    FNOP("cuda.all_sync", PF_WARP_VOTE, 0), FNOP("cuda.any_sync", PF_WARP_VOTE, 1),
    FNOP("cuda.eq_sync", PF_WARP_VOTE, 2), FNOP("cuda.ballot_sync", PF_WARP_VOTE, 3),
    FNOP("cuda.shfl_sync", PF_SHFL, 0), FNOP("cuda.shfl_up_sync", PF_SHFL, 1),
    FNOP("cuda.shfl_down_sync", PF_SHFL, 2), FNOP("cuda.shfl_xor_sync", PF_SHFL, 3),
    FN("cuda.match_any_sync", PF_MATCH_ANY), FN("cuda.match_all_sync", PF_MATCH_ALL),
    FN("cuda.activemask", PF_ACTIVEMASK), FN("cuda.lanemask_lt", PF_LANEMASK_LT),

    /* bits and fused arithmetic: op 0..3 popc, brev, clz, ffs */
    FNOP("cuda.popc", PF_BITOP, 0), FNOP("cuda.brev", PF_BITOP, 1), FNOP("cuda.clz", PF_BITOP, 2),
    FNOP("cuda.ffs", PF_BITOP, 3), FN("cuda.fma", PF_FMA), FN("cuda.cbrt", PF_CBRT), FN("cuda.selp", PF_SELP),

    /* float16: op is the op-table op they compute, on float16 */
    FNOP("cuda.fp16.hadd", PF_HALF, CK_OP_ADD), FNOP("cuda.fp16.hsub", PF_HALF, CK_OP_SUBTRACT),
    FNOP("cuda.fp16.hmul", PF_HALF, CK_OP_MULTIPLY), FNOP("cuda.fp16.hdiv", PF_HALF, CK_OP_TRUE_DIVIDE),
    FNOP("cuda.fp16.hneg", PF_HALF, CK_OP_NEGATIVE), FNOP("cuda.fp16.habs", PF_HALF, CK_OP_ABSOLUTE),
    FNOP("cuda.fp16.hmax", PF_HALF, CK_OP_MAXIMUM), FNOP("cuda.fp16.hmin", PF_HALF, CK_OP_MINIMUM),
    FNOP("cuda.fp16.heq", PF_HALF, CK_OP_EQUAL), FNOP("cuda.fp16.hne", PF_HALF, CK_OP_NOT_EQUAL),
    FNOP("cuda.fp16.hgt", PF_HALF, CK_OP_GREATER), FNOP("cuda.fp16.hge", PF_HALF, CK_OP_GREATER_EQUAL),
    FNOP("cuda.fp16.hlt", PF_HALF, CK_OP_LESS), FNOP("cuda.fp16.hle", PF_HALF, CK_OP_LESS_EQUAL),
    FNOP("cuda.fp16.hfma", PF_HALF, -2),

    /* cooperative groups */
    FN("cuda.cg.this_grid", PF_CG_THIS_GRID),

    /* cudakit.cuda.random: op 0..3 uniform32, uniform64, normal32, normal64; 4..6 next, jump, init */
    FNOP("cuda.random.xoroshiro128p_uniform_float32", PF_RANDOM, 0),
    FNOP("cuda.random.xoroshiro128p_uniform_float64", PF_RANDOM, 1),
    FNOP("cuda.random.xoroshiro128p_normal_float32", PF_RANDOM, 2),
    FNOP("cuda.random.xoroshiro128p_normal_float64", PF_RANDOM, 3),
    FNOP("cuda.random.xoroshiro128p_next", PF_RANDOM, 4), FNOP("cuda.random.xoroshiro128p_jump", PF_RANDOM, 5),
    FNOP("cuda.random.init_xoroshiro128p_state", PF_RANDOM, 6),

    /* math: functions that are ops keep float32, integers go to float64 */
    FNOP("math.sin", PF_MATH, CK_OP_SIN), FNOP("math.cos", PF_MATH, CK_OP_COS), FNOP("math.tan", PF_MATH, CK_OP_TAN),
    FNOP("math.asin", PF_MATH, CK_OP_ARCSIN), FNOP("math.acos", PF_MATH, CK_OP_ARCCOS),
    FNOP("math.atan", PF_MATH, CK_OP_ARCTAN), FNOP("math.atan2", PF_MATH, CK_OP_ARCTAN2),
    FNOP("math.sinh", PF_MATH, CK_OP_SINH), FNOP("math.cosh", PF_MATH, CK_OP_COSH),
    FNOP("math.tanh", PF_MATH, CK_OP_TANH), FNOP("math.asinh", PF_MATH, CK_OP_ARCSINH),
    FNOP("math.acosh", PF_MATH, CK_OP_ARCCOSH), FNOP("math.atanh", PF_MATH, CK_OP_ARCTANH),
    FNOP("math.exp", PF_MATH, CK_OP_EXP), FNOP("math.expm1", PF_MATH, CK_OP_EXPM1),
    FNOP("math.log2", PF_MATH, CK_OP_LOG2), FNOP("math.log10", PF_MATH, CK_OP_LOG10),
    FNOP("math.log1p", PF_MATH, CK_OP_LOG1P), FNOP("math.sqrt", PF_MATH, CK_OP_SQRT),
    FNOP("math.fabs", PF_MATH, CK_OP_ABSOLUTE), FNOP("math.pow", PF_MATH, CK_OP_POWER),
    FNOP("math.copysign", PF_MATH, CK_OP_COPYSIGN), FNOP("math.fmod", PF_MATH, CK_OP_FMOD),
    FNOP("math.hypot", PF_MATH, CK_OP_HYPOT), FNOP("math.degrees", PF_MATH, CK_OP_RAD2DEG),
    FNOP("math.radians", PF_MATH, CK_OP_DEG2RAD), FNOP("math.log", PF_MATH_LOG, CK_OP_LOG),
    FNOP("math.floor", PF_MATH_INT, CK_OP_FLOOR), FNOP("math.ceil", PF_MATH_INT, CK_OP_CEIL),
    FNOP("math.trunc", PF_MATH_INT, CK_OP_TRUNC),
    FNOP("math.isnan", PF_MATH_PRED, CK_OP_ISNAN), FNOP("math.isinf", PF_MATH_PRED, CK_OP_ISINF),
    FNOP("math.isfinite", PF_MATH_PRED, CK_OP_ISFINITE),
    FN("math.erf", PF_MATH_LIBM), FN("math.erfc", PF_MATH_LIBM), FN("math.gamma", PF_MATH_LIBM),
    FN("math.lgamma", PF_MATH_LIBM),
    CONST("math.pi", 3.141592653589793), CONST("math.e", 2.718281828459045), CONST("math.tau", 6.283185307179586),
    CONST("math.inf", INFINITY), CONST("math.nan", NAN),

    /* cmath: the same ops on complex values */
    FNOP("cmath.sqrt", PF_MATH, CK_OP_SQRT), FNOP("cmath.exp", PF_MATH, CK_OP_EXP),
    FNOP("cmath.log", PF_MATH_LOG, CK_OP_LOG), FNOP("cmath.log10", PF_MATH, CK_OP_LOG10),
    FNOP("cmath.sin", PF_MATH, CK_OP_SIN), FNOP("cmath.cos", PF_MATH, CK_OP_COS), FNOP("cmath.tan", PF_MATH, CK_OP_TAN),
    FNOP("cmath.asin", PF_MATH, CK_OP_ARCSIN), FNOP("cmath.acos", PF_MATH, CK_OP_ARCCOS),
    FNOP("cmath.atan", PF_MATH, CK_OP_ARCTAN), FNOP("cmath.sinh", PF_MATH, CK_OP_SINH),
    FNOP("cmath.cosh", PF_MATH, CK_OP_COSH), FNOP("cmath.tanh", PF_MATH, CK_OP_TANH),
    FNOP("cmath.asinh", PF_MATH, CK_OP_ARCSINH), FNOP("cmath.acosh", PF_MATH, CK_OP_ARCCOSH),
    FNOP("cmath.atanh", PF_MATH, CK_OP_ARCTANH),
    FNOP("cmath.isnan", PF_MATH_PRED, CK_OP_ISNAN), FNOP("cmath.isinf", PF_MATH_PRED, CK_OP_ISINF),
    FNOP("cmath.isfinite", PF_MATH_PRED, CK_OP_ISFINITE), FN("cmath.phase", PF_MATH_LIBM),
    CONST("cmath.pi", 3.141592653589793), CONST("cmath.e", 2.718281828459045), CONST("cmath.inf", INFINITY),
    CONST("cmath.nan", NAN),

    /* numpy's names beyond the op table's */
    CONST("numpy.pi", 3.141592653589793), CONST("numpy.e", 2.718281828459045), CONST("numpy.inf", INFINITY),
    CONST("numpy.nan", NAN),
    FNOP("numpy.abs", PF_UFUNC, CK_OP_ABSOLUTE), FNOP("numpy.fabs", PF_UFUNC, CK_OP_ABSOLUTE),
    FNOP("numpy.conj", PF_UFUNC, CK_OP_CONJUGATE), FNOP("numpy.true_divide", PF_UFUNC, CK_OP_TRUE_DIVIDE),
    FNOP("numpy.mod", PF_UFUNC, CK_OP_REMAINDER), FNOP("numpy.arcsin", PF_UFUNC, CK_OP_ARCSIN),
    FNOP("numpy.asin", PF_UFUNC, CK_OP_ARCSIN), FNOP("numpy.acos", PF_UFUNC, CK_OP_ARCCOS),
    FNOP("numpy.atan", PF_UFUNC, CK_OP_ARCTAN), FNOP("numpy.atan2", PF_UFUNC, CK_OP_ARCTAN2),
    FNOP("numpy.degrees", PF_UFUNC, CK_OP_RAD2DEG), FNOP("numpy.radians", PF_UFUNC, CK_OP_DEG2RAD),
    FNOP("numpy.pow", PF_UFUNC, CK_OP_POWER),
    DT("numpy.bool_", CK_BOOL), DT("numpy.bool", CK_BOOL), DT("numpy.int8", CK_INT8), DT("numpy.uint8", CK_UINT8),
    DT("numpy.int16", CK_INT16), DT("numpy.uint16", CK_UINT16), DT("numpy.int32", CK_INT32),
    DT("numpy.uint32", CK_UINT32), DT("numpy.int64", CK_INT64), DT("numpy.uint64", CK_UINT64),
    DT("numpy.intp", CK_INT64), DT("numpy.uintp", CK_UINT64), DT("numpy.float16", CK_FLOAT16),
    DT("numpy.float32", CK_FLOAT32), DT("numpy.float64", CK_FLOAT64), DT("numpy.complex64", CK_COMPLEX64),
    DT("numpy.complex128", CK_COMPLEX128), DT("numpy.half", CK_FLOAT16), DT("numpy.single", CK_FLOAT32),
    DT("numpy.double", CK_FLOAT64),

    /* Python's builtins and type objects */
    FN("abs", PF_ABS), FN("min", PF_MIN), FN("max", PF_MAX), FN("pow", PF_POW), FN("round", PF_ROUND),
    FN("len", PF_LEN), FN("range", PF_RANGE), FN("enumerate", PF_ENUMERATE), FN("zip", PF_ZIP),
    FN("print", PF_PRINT), FN("complex", PF_COMPLEX), FN("divmod", PF_DIVMOD),
    DT("int", CK_INT64), DT("float", CK_FLOAT64), DT("bool", CK_BOOL),
};

#define NFIXED ((int)(sizeof fixed_ / sizeof fixed_[0]))

/* The table: the rows above, then numpy.<op> for every op of the op table. */
static pyk_builtin table_[NFIXED + CK_OP_COUNT];
static char op_names_[CK_OP_COUNT][48];
static int ntable_;
static pthread_once_t once_ = PTHREAD_ONCE_INIT;

static void build(void)
{
    memcpy(table_, fixed_, sizeof fixed_);
    int n = NFIXED;
    for (int op = 0; op < CK_OP_COUNT; op++) {
        if (op == CK_OP_WHERE || op == CK_OP_CLIP) continue;   /* not scalar functions in a kernel */
        snprintf(op_names_[op], sizeof op_names_[op], "numpy.%s", ck_op_table[op].name);
        table_[n++] = (pyk_builtin){op_names_[op], PB_FUNC, PF_UFUNC, op, 0, CK_BOOL};
    }
    ntable_ = n;
}

const pyk_builtin *pyk_builtin_find(const char *name)
{
    pthread_once(&once_, build);
    for (int i = 0; i < ntable_; i++)
        if (!strcmp(table_[i].name, name)) return &table_[i];
    return NULL;
}

const pyk_builtin *pyk_builtin_at(int entry)
{
    pthread_once(&once_, build);
    return entry >= 0 && entry < ntable_ ? &table_[entry] : NULL;
}

int pyk_builtin_index(const pyk_builtin *b) { return (int)(b - table_); }

const pyk_builtin *pyk_builtin_member(const pyk_builtin *ns, const char *attr)
{
    char q[160];
    snprintf(q, sizeof q, "%s.%s", ns->name, attr);
    return pyk_builtin_find(q);
}
