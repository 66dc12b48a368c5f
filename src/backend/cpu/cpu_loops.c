/*
 * cpu_loops.c - every CPU element-wise and cast loop, generated from the op
 * table (include/cudakit_ops.h) and the per-element expressions of
 * cpu_scalar.h.  Each loop has a contiguous path the compiler vectorises, a
 * path for a scalar (zero-step) operand, and a strided fallback.
 */
#include "cpu_loops.h"
#include "cpu_scalar.h"

/* The dtypes of a type set: M(ID, DT, K, S, C, R) (dtype name, kind
 * letter, storage type, compute type, real storage type) for every row of
 * cudakit_dtypes.h whose kind is in KS, the set's CK_TS_KINDS_ list. */
#define CK_CAT_(a, b) CK_CAT2_(a, b)
#define CK_CAT2_(a, b) a##b
#define CK_UNPAREN_(...) __VA_ARGS__
#define CK_CALL_(M, ...) M(__VA_ARGS__)
#define CK_WHEN_1(...) __VA_ARGS__
#define CK_WHEN_0(...)
#define CK_TS_ROW3_(M, ID, KS, DT, K, S, C, R) CK_CAT_(CK_WHEN_, CK_KIND_PICK_##K KS)(M(ID, DT, K, S, C, R))
#define CK_TS_ROW2_(...) CK_TS_ROW3_(__VA_ARGS__)
#define CK_TS_ROW_(A, DT, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_TS_ROW2_(CK_UNPAREN_ A, DT, K, S, C, R)
#define CK_FOR_TS_(KS, M, ID) CK_DTYPES(CK_TS_ROW_, (M, ID, KS))

/* Each loop is built for AVX-512, AVX2 and baseline x86-64 and picked at
 * load time (ifunc), so one build runs well on any x86-64 machine. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(CK_NO_CLONES)
#define CK_LOOP_ATTR __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CK_LOOP_ATTR
#endif

static ck_status ck_loop_fail_(ck_op op)
{
    if (op == CK_OP_POWER)
        return ck_error_set(CK_ERR_VALUE, "Integers to negative integer powers are not allowed.");
    return ck_error_set(CK_ERR_VALUE, "invalid value in %s", ck_op_table[op].name);
}

/* ---------------------------------------------------------------- unary */
#define CK_LOOP1_(ID, DT, K, S, C, O)                                             \
CK_LOOP_ATTR                                                                      \
static ck_status ck_loop_##ID##_##DT(char **args, int64_t n, const int64_t *st)   \
{                                                                                 \
    char *op = args[0];                                                           \
    const char *ip = args[1];                                                     \
    int ck_bad = 0;                                                               \
    /* float32 and float64 sin and cos leave some arguments to libm            \
     * (cpu_scalar.h): a block at a time, while it is in cache */               \
    const int trig = (CK_OP_##ID == CK_OP_SIN || CK_OP_##ID == CK_OP_COS) &&     \
                     (CK_##DT == CK_FLOAT32 || CK_##DT == CK_FLOAT64);            \
    if (st[0] == (int64_t)sizeof(O) && st[1] == (int64_t)sizeof(S)) {             \
        O *o = (O *)op;                                                           \
        const S *x = (const S *)ip;                                               \
        const int64_t blk = trig ? CK_TRIG_BLOCK : n;                             \
        for (int64_t b0 = 0; b0 < n; b0 += blk) {                                 \
            const int64_t b1 = n - b0 < blk ? n : b0 + blk;                       \
            for (int64_t i = b0; i < b1; i++) {                                   \
                C a = (C)x[i];                                                    \
                (void)a;                                                          \
                o[i] = (O)(CK_X_##ID(DT, K, C, a));                               \
            }                                                                     \
            if (trig) ck_trig_fixup((char *)(o + b0), sizeof(O), b1 - b0, CK_OP_##ID == CK_OP_COS, CK_##DT == CK_FLOAT64); \
        }                                                                         \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, op += st[0], ip += st[1]) {               \
            C a = (C)*(const S *)ip;                                              \
            (void)a;                                                              \
            *(O *)op = (O)(CK_X_##ID(DT, K, C, a));                               \
        }                                                                         \
        if (trig) ck_trig_fixup(args[0], st[0], n, CK_OP_##ID == CK_OP_COS, CK_##DT == CK_FLOAT64); \
    }                                                                             \
    return ck_bad ? ck_loop_fail_(CK_OP_##ID) : CK_OK;                            \
}

/* --------------------------------------------------------------- binary */
#define CK_LOOP2_(ID, DT, K, S, C, O)                                             \
CK_LOOP_ATTR                                                                      \
static ck_status ck_loop_##ID##_##DT(char **args, int64_t n, const int64_t *st)   \
{                                                                                 \
    char *op = args[0];                                                           \
    const char *ap = args[1], *bp = args[2];                                      \
    int ck_bad = 0;                                                               \
    const int64_t so = st[0], sa = st[1], sb = st[2];                             \
    if (so == (int64_t)sizeof(O) && sa == (int64_t)sizeof(S) && sb == (int64_t)sizeof(S)) { \
        O *o = (O *)op;                                                           \
        const S *x = (const S *)ap, *y = (const S *)bp;                           \
        for (int64_t i = 0; i < n; i++) {                                         \
            C a = (C)x[i], b = (C)y[i];                                           \
            o[i] = (O)(CK_X_##ID(DT, K, C, a, b));                                \
        }                                                                         \
    } else if (so == (int64_t)sizeof(O) && sa == (int64_t)sizeof(S) && sb == 0) { \
        O *o = (O *)op;                                                           \
        const S *x = (const S *)ap;                                               \
        const C b = (C)*(const S *)bp;                                            \
        for (int64_t i = 0; i < n; i++) {                                         \
            C a = (C)x[i];                                                        \
            o[i] = (O)(CK_X_##ID(DT, K, C, a, b));                                \
        }                                                                         \
    } else if (so == (int64_t)sizeof(O) && sa == 0 && sb == (int64_t)sizeof(S)) { \
        O *o = (O *)op;                                                           \
        const S *y = (const S *)bp;                                               \
        const C a = (C)*(const S *)ap;                                            \
        for (int64_t i = 0; i < n; i++) {                                         \
            C b = (C)y[i];                                                        \
            o[i] = (O)(CK_X_##ID(DT, K, C, a, b));                                \
        }                                                                         \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, op += so, ap += sa, bp += sb) {           \
            C a = (C)*(const S *)ap, b = (C)*(const S *)bp;                       \
            *(O *)op = (O)(CK_X_##ID(DT, K, C, a, b));                            \
        }                                                                         \
    }                                                                             \
    return ck_bad ? ck_loop_fail_(CK_OP_##ID) : CK_OK;                            \
}

/* -------------------------------------------------------------- ternary */
/* clip(a, lo, hi): contiguous paths for three arrays and for one array
 * with two scalars (the bounds, as clip is mostly called); bounds of step
 * 0 take NumPy's constant-bounds formula, CK_X_<ID>_CONST (scalar_ops.h) */
#define CK_LOOP3_(ID, DT, K, S, C, O)                                             \
CK_LOOP_ATTR                                                                      \
static ck_status ck_loop_##ID##_##DT(char **args, int64_t n, const int64_t *st)   \
{                                                                                 \
    char *op = args[0];                                                           \
    const char *ap = args[1], *bp = args[2], *cp = args[3];                       \
    const int cb = st[2] == 0 && st[3] == 0;                                      \
    if (st[0] == (int64_t)sizeof(O) && st[1] == (int64_t)sizeof(S)) {             \
        O *o = (O *)op;                                                           \
        const S *x = (const S *)ap;                                               \
        if (cb) {                                                                 \
            const C b = (C)*(const S *)bp, c = (C)*(const S *)cp;                 \
            for (int64_t i = 0; i < n; i++) {                                     \
                C a = (C)x[i];                                                    \
                o[i] = (O)(CK_X_##ID##_CONST(DT, K, C, a, b, c));                 \
            }                                                                     \
            return CK_OK;                                                         \
        }                                                                         \
        if (st[2] == (int64_t)sizeof(S) && st[3] == (int64_t)sizeof(S)) {         \
            const S *y = (const S *)bp, *z = (const S *)cp;                       \
            for (int64_t i = 0; i < n; i++) {                                     \
                C a = (C)x[i], b = (C)y[i], c = (C)z[i];                          \
                o[i] = (O)(CK_X_##ID(DT, K, C, a, b, c));                         \
            }                                                                     \
            return CK_OK;                                                         \
        }                                                                         \
    }                                                                             \
    for (int64_t i = 0; i < n; i++, op += st[0], ap += st[1], bp += st[2], cp += st[3]) { \
        C a = (C)*(const S *)ap, b = (C)*(const S *)bp, c = (C)*(const S *)cp;    \
        *(O *)op = (O)(cb ? CK_X_##ID##_CONST(DT, K, C, a, b, c) : CK_X_##ID(DT, K, C, a, b, c)); \
    }                                                                             \
    return CK_OK;                                                                 \
}

/* where(cond, x, y): cond is bool, x and y of the loop dtype (copied as
 * bytes, so every dtype shares one loop per item size). */
#define CK_LOOP_WHERE_(ID, DT, K, S, C, O)                                        \
static ck_status ck_loop_##ID##_##DT(char **args, int64_t n, const int64_t *st)   \
{                                                                                 \
    char *op = args[0];                                                           \
    const char *cp = args[1], *xp = args[2], *yp = args[3];                       \
    if (st[0] == (int64_t)sizeof(S) && st[1] == 1 && st[2] == (int64_t)sizeof(S) \
        && st[3] == (int64_t)sizeof(S)) {                                         \
        S *o = (S *)op;                                                           \
        const uint8_t *c = (const uint8_t *)cp;                                   \
        const S *x = (const S *)xp, *y = (const S *)yp;                           \
        for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                \
        return CK_OK;                                                             \
    }                                                                             \
    for (int64_t i = 0; i < n; i++, op += st[0], cp += st[1], xp += st[2], yp += st[3]) \
        *(S *)op = *(const uint8_t *)cp ? *(const S *)xp : *(const S *)yp;        \
    return CK_OK;                                                                 \
}

/* The output storage type of each rule. */
#define CK_O_CK_R_SAME(S, R) S
#define CK_O_CK_R_NO_BOOL(S, R) S
#define CK_O_CK_R_INT_DOUBLE(S, R) S
#define CK_O_CK_R_OUT_BOOL(S, R) uint8_t
#define CK_O_CK_R_OUT_REAL(S, R) R

#define CK_M1_CK_R_SAME(ID, DT, K, S, C, R)       CK_LOOP1_(ID, DT, K, S, C, S)
#define CK_M1_CK_R_NO_BOOL(ID, DT, K, S, C, R)    CK_LOOP1_(ID, DT, K, S, C, S)
#define CK_M1_CK_R_OUT_BOOL(ID, DT, K, S, C, R)   CK_LOOP1_(ID, DT, K, S, C, uint8_t)
#define CK_M1_CK_R_OUT_REAL(ID, DT, K, S, C, R)   CK_LOOP1_(ID, DT, K, S, C, R)
#define CK_M2_CK_R_SAME(ID, DT, K, S, C, R)       CK_LOOP2_(ID, DT, K, S, C, S)
#define CK_M2_CK_R_NO_BOOL(ID, DT, K, S, C, R)    CK_LOOP2_(ID, DT, K, S, C, S)
#define CK_M2_CK_R_INT_DOUBLE(ID, DT, K, S, C, R) CK_LOOP2_(ID, DT, K, S, C, S)
#define CK_M2_CK_R_OUT_BOOL(ID, DT, K, S, C, R)   CK_LOOP2_(ID, DT, K, S, C, uint8_t)
#define CK_M3_CK_R_SAME(ID, DT, K, S, C, R)       CK_LOOP3_(ID, DT, K, S, C, S)
#define CK_M3_CK_R_WHERE(ID, DT, K, S, C, R)      CK_LOOP_WHERE_(ID, DT, K, S, C, S)

#define CK_GEN_LOOPS_(ID, name, nin, types, rule, cost, flags) CK_FOR_TS_(CK_TS_KINDS_##types, CK_M##nin##_##rule, ID)
CK_ALL_OPS(CK_GEN_LOOPS_)

/* The loop table. */
#define CK_TBL_ENTRY_(ID, DT, K, S, C, R) [CK_OP_##ID][CK_##DT] = ck_loop_##ID##_##DT,
#define CK_GEN_TBL_(ID, name, nin, types, rule, cost, flags) CK_FOR_TS_(CK_TS_KINDS_##types, CK_TBL_ENTRY_, ID)
ck_cpu_loop ck_cpu_ew_loops[CK_OP_COUNT][CK_NTYPES] = {
    CK_ALL_OPS(CK_GEN_TBL_)
};

/* ----------------------------------------------------------------- casts */
/* f16 -> wider floats convert directly; everything converts from the
 * compute type of the source.  A cast to the same dtype (every copy) moves
 * the bytes: float16's round trip through float would quiet its signalling
 * NaNs, and only where the optimiser does not fold the round trip away
 * (-O0), so a copy's bits would depend on the build. */
#define CK_CAST_LOOP_(DTT, KT, ST, DTF, KF, SF, CF)                               \
CK_LOOP_ATTR                                                                      \
static ck_status ck_cast_##DTF##_to_##DTT(char **args, int64_t n, const int64_t *st) \
{                                                                                 \
    char *op = args[0];                                                           \
    const char *ip = args[1];                                                     \
    if (CK_##DTF == CK_##DTT) {                                                   \
        if (st[0] == (int64_t)sizeof(ST) && st[1] == (int64_t)sizeof(ST))         \
            memmove(op, ip, (size_t)n * sizeof(ST));   /* dst may be src */       \
        else                                                                      \
            for (int64_t i = 0; i < n; i++, op += st[0], ip += st[1])             \
                memmove(op, ip, sizeof(ST));                                      \
        return CK_OK;                                                             \
    }                                                                             \
    if (st[0] == (int64_t)sizeof(ST) && st[1] == (int64_t)sizeof(SF)) {           \
        ST *o = (ST *)op;                                                         \
        const SF *x = (const SF *)ip;                                             \
        for (int64_t i = 0; i < n; i++) { CF v = (CF)x[i]; o[i] = CK_CVT_(KF, KT, ST, v); } \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, op += st[0], ip += st[1]) {               \
            CF v = (CF)*(const SF *)ip;                                           \
            *(ST *)op = CK_CVT_(KF, KT, ST, v);                                   \
        }                                                                         \
    }                                                                             \
    return CK_OK;                                                                 \
}

/* The cross product expands the dtype table inside its own expansion,
 * which a macro cannot do: the inner expansion is left behind as
 * CK_DTYPES_LATER_ () (...) and made by one more scan, CK_EVAL_'s. */
#define CK_EMPTY_()
#define CK_DTYPES_LATER_() CK_DTYPES
#define CK_EVAL_(...) __VA_ARGS__
#define CK_CAST_ONE_(TO, DTF, name, KF, tchar, fmt, str, size, npnum, SF, CF, R, U, cus, cuc) \
    CK_CALL_(CK_CAST_LOOP_, CK_UNPAREN_ TO, DTF, KF, SF, CF)
#define CK_CAST_OUTER_(A, DT, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_DTYPES_LATER_ CK_EMPTY_() () (CK_CAST_ONE_, (DT, K, S))
CK_EVAL_(CK_DTYPES(CK_CAST_OUTER_, _))

#define CK_CAST_TBL_ENTRY_(DTT, DTF) [CK_##DTT][CK_##DTF] = ck_cast_##DTF##_to_##DTT,
#define CK_CAST_TBL_ONE_(TO, DTF, name, KF, tchar, fmt, str, size, npnum, SF, CF, R, U, cus, cuc) \
    CK_CAST_TBL_ENTRY_(TO, DTF)
#define CK_CAST_TBL_OUTER_(A, DT, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    CK_DTYPES_LATER_ CK_EMPTY_() () (CK_CAST_TBL_ONE_, DT)
ck_cpu_loop ck_cpu_cast_loops[CK_NTYPES][CK_NTYPES] = {
    CK_EVAL_(CK_DTYPES(CK_CAST_TBL_OUTER_, _))
};
