/*
 * cpu_reduce.c - the CPU reductions (sum, prod, min, max, all, any, argmin,
 * argmax, count_nonzero) and scans (cumsum, cumprod), for every dtype.
 *
 * Each (op, dtype) is a small kernel (ck_red_kernel): a fold state with
 * init / run / merge / store, plus a "row" form that folds a whole row of
 * outputs at once.  The kernels are generated from one type list (X-macros,
 * as in cpu_loops.c); three drivers walk a ck_reduce_desc with them:
 *
 *   - rows:     the kept dims are innermost in memory (sum over axis 0 of a
 *               C array) or the reduction is tiny: accumulate contiguous
 *               input rows into a block of outputs, never walking a column
 *               one element at a time (what NumPy does too);
 *   - elements: every output element folds its own inner space; big folds
 *               are cut into leaves that run on all cores.
 *   - empty:    the identity (sum 0, prod 1, all true, ...).
 *
 * Float sums are pairwise like NumPy's, but organised for SIMD: lanes of
 * CK_LANE_BYTES (four AVX2 registers) each add CK_DEPTH values of a block
 * (NumPy: 8 accumulators of 16), whole lane vectors are then combined
 * pairwise (a binary-counter cascade rather than recursion, so there is no
 * call per block) and folded pairwise at the end of a run.  The error bound
 * is NumPy's: a short sequential run per lane plus O(log n) pairwise levels.
 *
 * Results never depend on the thread count: long runs are cut into leaves
 * whose size depends on the length only, every leaf is folded on its own
 * (on whichever core) and the leaves are combined in one fixed pairwise
 * tree, so a sum on 1 or 16 threads gives the same bits.
 */
#include "cpu_internal.h"
#include "../../runtime/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Hot kernels get AVX-512 and AVX2+F16C clones picked at load time on
 * x86-64; the baseline build is SSE2 only, which halves vector width.  Only
 * loops free of a*b+c patterns get them: a clone could contract those into
 * FMAs and make results depend on the machine.  (Explicit lanes keep their
 * layout in every clone, so results do not depend on which one runs.) */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define CK_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CK_HOT
#endif
#define CK_INLINE static inline __attribute__((always_inline))

/* Bytes of independent accumulators per SIMD loop: four AVX2 registers,
 * enough to hide the add latency. */
#define CK_LANE_BYTES 128
/* Values each lane adds before lane vectors are combined pairwise. */
#define CK_DEPTH 16
/* Below this many elements a reduction stays on one core. */
#define CK_PAR_MIN ((int64_t)1 << 17)
/* Parallel leaves hold at least this many elements, at most this many leaves. */
#define CK_LEAF_MIN ((int64_t)1 << 15)
#define CK_MAX_LEAVES 64
/* Bytes of accumulators per task in the row drivers: a row segment that
 * long streams well, and the accumulators stay in L1/L2. */
#define CK_ROW_BYTES (32 * 1024)
/* Fold states of every kernel fit this. */
#define CK_STATE_BYTES 64

/* The dtypes: M(DT, K, S, C, R, W) for each row of cudakit_dtypes.h, with
 * K the kind letter, S the storage type, C the type values are computed
 * in (float for float16, as NumPy's half loops do), R the real type of a
 * sum lane (C, or its part for complex), W an unsigned integer as wide as
 * a real value.  float16 has the float kind's pieces; where it differs
 * (stored narrower than computed) the pieces ask sizeof. */
#define CK_RED_ROW_(M, DT, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    M(DT, K, S, C, CK_KIND_PICK_##K(C, C, C, C, R), U)
#define CK_RED_TYPES(M) CK_DTYPES(CK_RED_ROW_, M)

/* ------------------------------------------------------- per-kind pieces */

#define CK_RE_(a) __real__(a)
#define CK_IM_(a) __imag__(a)

#define CK_ISNAN_B(x) 0
#define CK_ISNAN_I(x) 0
#define CK_ISNAN_U(x) 0
#define CK_ISNAN_F(x) ((x) != (x))
#define CK_ISNAN_C(x) (CK_RE_(x) != CK_RE_(x) || CK_IM_(x) != CK_IM_(x))

/* Order; complex is lexicographic, as NumPy sorts and compares it. */
#define CK_LT_B(a, b) ((a) < (b))
#define CK_LT_I(a, b) ((a) < (b))
#define CK_LT_U(a, b) ((a) < (b))
#define CK_LT_F(a, b) ((a) < (b))
#define CK_LT_C(a, b) (CK_RE_(a) < CK_RE_(b) || (CK_RE_(a) == CK_RE_(b) && CK_IM_(a) < CK_IM_(b)))
#define CK_LE_B(a, b) ((a) <= (b))
#define CK_LE_I(a, b) ((a) <= (b))
#define CK_LE_U(a, b) ((a) <= (b))
#define CK_LE_F(a, b) ((a) <= (b))
#define CK_LE_C(a, b) (CK_RE_(a) < CK_RE_(b) || (CK_RE_(a) == CK_RE_(b) && CK_IM_(a) <= CK_IM_(b)))

/* b strictly better than a (argmin/argmax: the first best stays). */
#define CK_BETTER_MIN(K, b, a) CK_LT_##K(b, a)
#define CK_BETTER_MAX(K, b, a) CK_LT_##K(a, b)
/* min/max: a (the earlier) stays against b.  Of equal values NumPy keeps
 * the later for float32/float64 and the earlier for float16 and complex
 * (the ties rule of src/formulas/scalar_ops.h, CK_TIES_LATER_<DT>: it shows
 * as the sign of a zero); for the other kinds equal values are the same
 * bits.  In the strict form a lane's update is one minps/maxps. */
#define CK_LATER_B(DT) 1
#define CK_LATER_I(DT) 1
#define CK_LATER_U(DT) 1
#define CK_LATER_F(DT) CK_LATER_F_##DT
#define CK_LATER_C(DT) 0
#define CK_LATER_F_FLOAT16 0
#define CK_LATER_F_FLOAT32 1
#define CK_LATER_F_FLOAT64 1
#define CK_KEEP_MIN(K, DT, a, b) (CK_LATER_##K(DT) ? CK_LT_##K(a, b) : CK_LE_##K(a, b))
#define CK_KEEP_MAX(K, DT, a, b) (CK_LATER_##K(DT) ? CK_LT_##K(b, a) : CK_LE_##K(b, a))

/* Truthiness of a stored value.  float16 by its bits: the baseline build has
 * no half compare, and NaN is truthy while -0 is not. */
static inline int ck_nz_f16(_Float16 x)
{
    uint16_t u;
    memcpy(&u, &x, 2);
    return (u & 0x7fff) != 0;
}
#define CK_NZ_B(x) ((x) != 0)
#define CK_NZ_I(x) ((x) != 0)
#define CK_NZ_U(x) ((x) != 0)
#define CK_NZ_F(x) _Generic((x), _Float16: ck_nz_f16(x), default: (x) != 0)
#define CK_NZ_C(x) ((CK_RE_(x) != 0) | (CK_IM_(x) != 0))

/* bool adds as "or" and multiplies as "and" (NumPy's bool loops). */
#define CK_ADD_B(a, b) ((a) | (b))
#define CK_ADD_I(a, b) ((a) + (b))
#define CK_ADD_U(a, b) ((a) + (b))
#define CK_ADD_F(a, b) ((a) + (b))
#define CK_ADD_C(a, b) ((a) + (b))
#define CK_MUL_B(a, b) ((a) & (b))
#define CK_MUL_I(a, b) ((a) * (b))
#define CK_MUL_U(a, b) ((a) * (b))
#define CK_MUL_F(a, b) ((a) * (b))
#define CK_MUL_C(a, b) ck_cmul_(a, b)

/* NumPy multiplies complex numbers by the textbook formula, without C99's
 * Annex G recovery of infinities. */
static inline float _Complex ck_cmul64(float _Complex a, float _Complex b)
{
    return __builtin_complex(CK_RE_(a) * CK_RE_(b) - CK_IM_(a) * CK_IM_(b),
                             CK_RE_(a) * CK_IM_(b) + CK_IM_(a) * CK_RE_(b));
}
static inline double _Complex ck_cmul128(double _Complex a, double _Complex b)
{
    return __builtin_complex(CK_RE_(a) * CK_RE_(b) - CK_IM_(a) * CK_IM_(b),
                             CK_RE_(a) * CK_IM_(b) + CK_IM_(a) * CK_RE_(b));
}
#define ck_cmul_(a, b) _Generic((a), float _Complex: ck_cmul64, default: ck_cmul128)(a, b)

/* ------------------------------------------------------------ the lanes */

/* gcc cannot tell that the float16 staging buffer of the sums is filled up
 * to every row the lanes read (both are counted from the same m) and warns
 * where the lanes load; the region ends after the sum kernels. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* CK_LANE_BYTES of float or double accumulators, as GNU vectors of 32
 * bytes: the compiler then keeps them in registers (an array of scalars
 * tends to be spilled, and reloading it stalls on store forwarding); the
 * baseline build splits each into two SSE registers.  Lane j is element
 * j % VL of vector j / VL. */
#define CK_LANES_DEF_(R)                                                          \
typedef R ck_vec_##R __attribute__((vector_size(32)));                            \
/* the same, for loads from data only aligned to its elements */                  \
typedef R ck_uvec_##R __attribute__((vector_size(32), aligned(sizeof(R)), may_alias)); \
typedef struct { ck_vec_##R v[CK_LANE_BYTES / 32]; } ck_lanes_##R;                \
CK_INLINE void ck_lanes_add_##R(ck_lanes_##R *a, const ck_lanes_##R *b)           \
{                                                                                 \
    for (int k = 0; k < CK_LANE_BYTES / 32; k++) a->v[k] += b->v[k];             \
}                                                                                 \
/* The lane sums of nrows (1 to CK_DEPTH) full rows of lanes: value i goes to \
 * lane i % lanes, so complex data keeps re in even and im in odd lanes. */   \
CK_INLINE void ck_lanes_block_##R(ck_lanes_##R *o, const R *x, int64_t nrows)     \
{                                                                                 \
    enum { NV = CK_LANE_BYTES / 32, VL = 32 / sizeof(R), NL = NV * VL };         \
    ck_lanes_##R r;                                                               \
    for (int k = 0; k < NV; k++) r.v[k] = *(const ck_uvec_##R *)(x + k * VL);     \
    for (int64_t i = NL; i < nrows * NL; i += NL)                                 \
        for (int k = 0; k < NV; k++) r.v[k] += *(const ck_uvec_##R *)(x + i + k * VL); \
    *o = r;                                                                       \
}                                                                                 \
/* Pairwise fold of the lanes down to ncomp (1 real, 2 complex) sums, by       \
 * halving (vectors first, then within the last one); even steps keep the     \
 * parity of complex lanes. */                                                \
CK_INLINE void ck_lanes_fold_##R(const ck_lanes_##R *a, int ncomp, R *out)        \
{                                                                                 \
    enum { NV = CK_LANE_BYTES / 32, VL = 32 / sizeof(R) };                        \
    ck_vec_##R t[NV];                                                             \
    for (int k = 0; k < NV; k++) t[k] = a->v[k];                                  \
    for (int h = NV / 2; h >= 1; h /= 2)                                          \
        for (int k = 0; k < h; k++) t[k] += t[k + h];                             \
    R e[VL];                                                                      \
    memcpy(e, &t[0], sizeof e);                                                   \
    for (int h = VL / 2; h >= ncomp; h /= 2)                                      \
        for (int j = 0; j < h; j++) e[j] += e[j + h];                             \
    out[0] = e[0];                                                                \
    out[1] = e[ncomp - 1];                                                        \
}
CK_LANES_DEF_(float)
CK_LANES_DEF_(double)

#define CK_NLANES(R) ((int)(CK_LANE_BYTES / sizeof(R)))

/* ========================================================== kernel shape */

typedef struct ck_red_kernel {
    void (*init)(void *st);
    /* fold n values at p (byte step s) into st; idx: the flat index of the
     * first along the reduction (for argmin/argmax) */
    void (*run)(void *st, const char *p, int64_t n, int64_t s, int64_t idx);
    /* st = st (+) later, where later's values come after st's */
    void (*merge)(void *st, const void *later);
    void (*store)(const void *st, char *out);
    /* the row form: m accumulators at acc (and for argmin/argmax their
     * indices at ix) fold values p[j*s]; k: the row's flat index along the
     * reduction; first: set rather than fold */
    void (*row)(void *acc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first);
    void (*row_store)(const void *acc, const int64_t *ix, char *out, int64_t m, int64_t os);
    int64_t block;   /* elements per pairwise block: leaves are 2^k of them */
    int acc_size;    /* bytes of one row accumulator */
    int has_ix;      /* the row form keeps indices */
} ck_red_kernel;

typedef struct { _Alignas(64) unsigned char b[CK_STATE_BYTES]; } ck_state;

#define CK_STATE_FITS_(T) _Static_assert(sizeof(T) <= CK_STATE_BYTES, "fold state too big")

/* One loop body over a row segment, contiguous path first so it vectorises;
 * x is the stored value, j its index. */
#define CK_ROWLOOP_(S, FIRST, UPDATE)                                             \
    if (s == (int64_t)sizeof(S)) {                                                \
        const S *restrict xs = (const S *)p;                                      \
        if (first) for (int64_t j = 0; j < m; j++) { S x = xs[j]; FIRST; }        \
        else for (int64_t j = 0; j < m; j++) { S x = xs[j]; UPDATE; }             \
    } else {                                                                      \
        if (first) for (int64_t j = 0; j < m; j++) { S x = *(const S *)(p + j * s); FIRST; } \
        else for (int64_t j = 0; j < m; j++) { S x = *(const S *)(p + j * s); UPDATE; } \
    }

/* Row outputs of value accumulators, converted to the stored type O. */
#define CK_ROWSTORE_(NAME, DT, A, O)                                              \
static void ck_rowst_##NAME##_##DT(const void *vacc, const int64_t *ix, char *out, int64_t m, int64_t os) \
{                                                                                 \
    const A *acc = (const A *)vacc;                                               \
    (void)ix;                                                                     \
    if (os == (int64_t)sizeof(O)) for (int64_t j = 0; j < m; j++) ((O *)out)[j] = (O)acc[j]; \
    else for (int64_t j = 0; j < m; j++) *(O *)(out + j * os) = (O)acc[j];        \
}

/* ================================================================= SUM */

/* bool and integers: one (wrapping) accumulator; vectorises as it is.  A
 * broadcast run (step 0) is n times one value, which wraps as n additions
 * would: (2**36,) elements take no time. */
#define CK_NADD_B(C, x, n) ((C)(x))
#define CK_NADD_I(C, x, n) ((C)((uint64_t)(x) * (uint64_t)(n)))
#define CK_NADD_U CK_NADD_I
#define CK_SUM_PLAIN_(DT, K, S, C, R, W)                                          \
typedef struct { C v; } ck_st_SUM_##DT;                                           \
CK_STATE_FITS_(ck_st_SUM_##DT);                                                   \
static void ck_init_SUM_##DT(void *st) { ((ck_st_SUM_##DT *)st)->v = 0; }         \
static CK_HOT void ck_run_SUM_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    (void)idx;                                                                    \
    C a = 0;                                                                      \
    if (s == (int64_t)sizeof(S)) {                                                \
        const S *x = (const S *)p;                                                \
        for (int64_t i = 0; i < n; i++) a = (C)CK_ADD_##K(a, x[i]);               \
    } else if (s == 0 && n > 0) {                                                 \
        a = CK_NADD_##K(C, *(const S *)p, n);                                     \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, p += s) a = (C)CK_ADD_##K(a, *(const S *)p); \
    }                                                                             \
    ck_st_SUM_##DT *st = (ck_st_SUM_##DT *)vst;                                   \
    st->v = (C)CK_ADD_##K(st->v, a);                                              \
}                                                                                 \
static void ck_merge_SUM_##DT(void *vst, const void *vl)                          \
{                                                                                 \
    ck_st_SUM_##DT *st = (ck_st_SUM_##DT *)vst;                                   \
    st->v = (C)CK_ADD_##K(st->v, ((const ck_st_SUM_##DT *)vl)->v);                \
}                                                                                 \
static void ck_store_SUM_##DT(const void *st, char *out)                          \
{                                                                                 \
    *(S *)out = (S)((const ck_st_SUM_##DT *)st)->v;                               \
}

/* Floats and complex: pairwise over lanes (see the top of the file). */
#define CK_NCOMP_F 1
#define CK_NCOMP_C 2
#define CK_GATHER_F(buf, i, S, q) ((buf)[i] = *(const S *)(q))
#define CK_GATHER_C(buf, i, S, q)                                                 \
    ((buf)[2 * (i)] = CK_RE_(*(const S *)(q)), (buf)[2 * (i) + 1] = CK_IM_(*(const S *)(q)))
#define CK_SUMVAL_F(C, re, im) ((C)(re))
#define CK_SUMVAL_C(C, re, im) (__builtin_complex(re, im))

/* A run folds its lanes at its end and adds the result to the state (as
 * NumPy adds each inner loop's pairwise sum to the output).  Long runs are
 * cut into leaves whose size depends on n only, so this stays independent
 * of the thread count.  The values after the last whole row of lanes are
 * added in order, like NumPy's remainder loop. */
#define CK_SUM_LANES_(DT, K, S, C, R, W)                                          \
typedef struct { C v; } ck_st_SUM_##DT;                                           \
CK_STATE_FITS_(ck_st_SUM_##DT);                                                   \
static void ck_init_SUM_##DT(void *st) { ((ck_st_SUM_##DT *)st)->v = 0; }         \
/* m values at q as contiguous reals: in place (float16, narrower than its   \
 * lanes, never), or widened into buf */                                          \
CK_INLINE const R *ck_sum_reals_##DT(const char *q, int64_t m, int64_t s, R *buf) \
{                                                                                 \
    if (sizeof(S) == CK_NCOMP_##K * sizeof(R) && s == (int64_t)sizeof(S)) return (const R *)q; \
    if (s == (int64_t)sizeof(S))                                                  \
        for (int64_t i = 0; i < m; i++) CK_GATHER_##K(buf, i, S, q + i * (int64_t)sizeof(S)); \
    else                                                                          \
        for (int64_t i = 0; i < m; i++, q += s) CK_GATHER_##K(buf, i, S, q);      \
    return buf;                                                                   \
}                                                                                 \
static CK_HOT void ck_run_SUM_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    enum { NC = CK_NCOMP_##K, NL = CK_NLANES(R), NR = NL * CK_DEPTH, EB = NR / NC }; \
    R buf[NR], tail[2] = {0, 0}, f[2] = {0, 0};                                   \
    (void)idx;                                                                    \
    if (n <= EB) {                                                                \
        /* one block, kept in registers: short rows are common */                 \
        const R *x = ck_sum_reals_##DT(p, n, s, buf);                             \
        int64_t rows = n * NC / NL;                                               \
        for (int64_t i = rows * NL; i < n * NC; i += NC)                          \
            for (int c = 0; c < NC; c++) tail[c] += x[i + c];                     \
        if (rows) {                                                               \
            ck_lanes_##R cur;                                                     \
            ck_lanes_block_##R(&cur, x, rows);                                    \
            ck_lanes_fold_##R(&cur, NC, f);                                       \
        }                                                                         \
    } else {                                                                      \
        ck_lanes_##R stack[64], cur;                                              \
        int lvl[64], sp = 0;                                                      \
        for (int64_t b = 0; b < n; b += EB) {                                     \
            int64_t m = n - b < EB ? n - b : EB;                                  \
            const R *x = ck_sum_reals_##DT(p + b * s, m, s, buf);                 \
            int64_t rows = m * NC / NL;                                           \
            for (int64_t i = rows * NL; i < m * NC; i += NC)                      \
                for (int c = 0; c < NC; c++) tail[c] += x[i + c];                 \
            if (!rows) continue;                                                  \
            ck_lanes_block_##R(&cur, x, rows);                                    \
            /* binary counter: two subtrees of one level become one of the next */ \
            int l = 0;                                                            \
            for (; sp > 0 && lvl[sp - 1] == l; l++) ck_lanes_add_##R(&cur, &stack[--sp]); \
            stack[sp] = cur;                                                      \
            lvl[sp++] = l;                                                        \
        }                                                                         \
        for (; sp > 1; sp--) ck_lanes_add_##R(&stack[sp - 2], &stack[sp - 1]);    \
        ck_lanes_fold_##R(&stack[0], NC, f);                                      \
    }                                                                             \
    R re = f[0] + tail[0], im = f[1] + tail[1];                                   \
    (void)im;                                                                     \
    ck_st_SUM_##DT *st = (ck_st_SUM_##DT *)vst;                                   \
    st->v += CK_SUMVAL_##K(C, re, im);                                            \
}                                                                                 \
static void ck_merge_SUM_##DT(void *vst, const void *vl)                          \
{                                                                                 \
    ((ck_st_SUM_##DT *)vst)->v += ((const ck_st_SUM_##DT *)vl)->v;                \
}                                                                                 \
static void ck_store_SUM_##DT(const void *st, char *out)                          \
{                                                                                 \
    *(S *)out = (S)((const ck_st_SUM_##DT *)st)->v;                               \
}

#define CK_SUM_B CK_SUM_PLAIN_
#define CK_SUM_I CK_SUM_PLAIN_
#define CK_SUM_U CK_SUM_PLAIN_
#define CK_SUM_F CK_SUM_LANES_
#define CK_SUM_C CK_SUM_LANES_

/* The row form of sum accumulates in C (float for float16: more accurate
 * than NumPy's half adds, never less). */
#define CK_SUM_ROW_(DT, K, S, C, R, W)                                            \
static CK_HOT void ck_row_SUM_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    C *restrict acc = (C *)vacc;                                                  \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = (C)x, acc[j] = (C)CK_ADD_##K(acc[j], (C)x))           \
}                                                                                 \
CK_ROWSTORE_(SUM, DT, C, S)

#define CK_BLOCK_B(R) 1024
#define CK_BLOCK_I(R) 1024
#define CK_BLOCK_U(R) 1024
#define CK_BLOCK_F(R) (CK_NLANES(R) * CK_DEPTH)
#define CK_BLOCK_C(R) (CK_NLANES(R) * CK_DEPTH / 2)

#define CK_GEN_SUM_(DT, K, S, C, R, W) CK_SUM_##K(DT, K, S, C, R, W) CK_SUM_ROW_(DT, K, S, C, R, W)
CK_RED_TYPES(CK_GEN_SUM_)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* ================================================================ PROD */

/* Sequential like NumPy's multiply.reduce; contiguous floats stored as
 * they are computed (not float16) use 8 lanes (the latency of a product
 * chain would otherwise bound it). */
#define CK_PRODLANES_F(S, C) (sizeof(S) == sizeof(C))
#define CK_PRODLANES_B(S, C) 0
#define CK_PRODLANES_I(S, C) 0
#define CK_PRODLANES_U(S, C) 0
#define CK_PRODLANES_C(S, C) 0
/* A broadcast run (step 0) of an exact kind is one power, by squaring
 * (wrapping as n products would); floats keep NumPy's order of rounding. */
#define CK_PRODPOW_B 1
#define CK_PRODPOW_I 1
#define CK_PRODPOW_U 1
#define CK_PRODPOW_F 0
#define CK_PRODPOW_C 0

#define CK_GEN_PROD_(DT, K, S, C, R, W)                                           \
typedef struct { C v; } ck_st_PROD_##DT;                                          \
CK_STATE_FITS_(ck_st_PROD_##DT);                                                  \
static void ck_init_PROD_##DT(void *st) { ((ck_st_PROD_##DT *)st)->v = (C)1; }    \
static inline C ck_prod8_##DT(const S *x, int64_t n)                              \
{                                                                                 \
    C r[8];                                                                       \
    for (int j = 0; j < 8; j++) r[j] = (C)x[j];                                   \
    int64_t i = 8;                                                                \
    for (; i + 8 <= n; i += 8)                                                    \
        for (int j = 0; j < 8; j++) r[j] = (C)CK_MUL_##K(r[j], (C)x[i + j]);      \
    C a = (C)CK_MUL_##K((C)CK_MUL_##K((C)CK_MUL_##K(r[0], r[1]), (C)CK_MUL_##K(r[2], r[3])), \
                        (C)CK_MUL_##K((C)CK_MUL_##K(r[4], r[5]), (C)CK_MUL_##K(r[6], r[7]))); \
    for (; i < n; i++) a = (C)CK_MUL_##K(a, (C)x[i]);                             \
    return a;                                                                     \
}                                                                                 \
static void ck_run_PROD_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    (void)idx;                                                                    \
    ck_st_PROD_##DT *st = (ck_st_PROD_##DT *)vst;                                 \
    C a = st->v;                                                                  \
    if (CK_PRODLANES_##K(S, C) && s == (int64_t)sizeof(S) && n >= 64) {                 \
        a = (C)CK_MUL_##K(a, ck_prod8_##DT((const S *)p, n));                     \
    } else if (s == (int64_t)sizeof(S)) {                                         \
        const S *x = (const S *)p;                                                \
        for (int64_t i = 0; i < n; i++) a = (C)CK_MUL_##K(a, (C)x[i]);            \
    } else if (CK_PRODPOW_##K && s == 0) {                                        \
        C b = (C)*(const S *)p;                                                   \
        for (int64_t e = n; e; e >>= 1, b = (C)CK_MUL_##K(b, b))                  \
            if (e & 1) a = (C)CK_MUL_##K(a, b);                                   \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, p += s) a = (C)CK_MUL_##K(a, (C)*(const S *)p); \
    }                                                                             \
    st->v = a;                                                                    \
}                                                                                 \
static void ck_merge_PROD_##DT(void *vst, const void *vl)                         \
{                                                                                 \
    ck_st_PROD_##DT *st = (ck_st_PROD_##DT *)vst;                                 \
    st->v = (C)CK_MUL_##K(st->v, ((const ck_st_PROD_##DT *)vl)->v);               \
}                                                                                 \
static void ck_store_PROD_##DT(const void *st, char *out)                         \
{                                                                                 \
    *(S *)out = (S)((const ck_st_PROD_##DT *)st)->v;                              \
}                                                                                 \
static void ck_row_PROD_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    C *restrict acc = (C *)vacc;                                                  \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = (C)x, acc[j] = (C)CK_MUL_##K(acc[j], (C)x))           \
}                                                                                 \
CK_ROWSTORE_(PROD, DT, C, S)
CK_RED_TYPES(CK_GEN_PROD_)

/* ===================================================== MIN, MAX, ARG... */

/* The NaN-propagating extreme of a contiguous run for kinds with vector
 * compares: CK_LANE_BYTES of lanes as GNU vectors (GCC does not vectorise
 * the same loop written over an array of scalars for every type: float64's
 * came out scalar), each a compare and a select per value plus a NaN mask
 * (v != v, folded away for the exact kinds); only a run whose mask is set is
 * looked at again, for the first NaN.  Lane j holds values j mod NL and the
 * lanes combine in lane order, so which of equal values wins (the sign of a
 * zero, CK_KEEP_) is as a sequential fold over lanes would give. */
/* Bytes of one lane vector (an AVX-512 register; two or four narrower ones
 * in the other clones) and of all of them: four, enough to hide a compare
 * and select's latency. */
#define CK_VEXT_BYTES 64
#define CK_VEXT_LANE_BYTES 256
#define CK_VEXT_(DT, K, S, W, NAME)                                               \
CK_INLINE S ck_vext_##NAME##_##DT(const S *x, int64_t n, const int value_only)    \
{                                                                                 \
    typedef S V __attribute__((vector_size(CK_VEXT_BYTES)));                      \
    typedef S UV __attribute__((vector_size(CK_VEXT_BYTES), aligned(sizeof(S)), may_alias)); \
    typedef __typeof__((V){0} < (V){0}) M;                                        \
    enum { VL = CK_VEXT_BYTES / sizeof(S), NV = CK_VEXT_LANE_BYTES / CK_VEXT_BYTES, NL = NV * VL }; \
    int64_t i = 1;                                                                \
    S r = x[0];                                                                   \
    int any = CK_ISNAN_##K(r);                                                    \
    if (n >= 2 * NL) {                                                            \
        V m[NV];                                                                  \
        M bad[NV];                                                                \
        for (int k = 0; k < NV; k++) {                                            \
            m[k] = *(const UV *)(x + k * VL);                                     \
            bad[k] = m[k] != m[k];                                                \
        }                                                                         \
        for (i = NL; i + NL <= n; i += NL)                                        \
            for (int k = 0; k < NV; k++) {                                        \
                V v = *(const UV *)(x + i + k * VL);                              \
                M keep = CK_KEEP_##NAME(K, DT, m[k], v);                          \
                m[k] = (V)((keep & (M)m[k]) | (~keep & (M)v));                    \
                bad[k] |= v != v;                                                 \
            }                                                                     \
        M b = bad[0];                                                             \
        for (int k = 1; k < NV; k++) b |= bad[k];                                 \
        for (int j = 0; j < VL; j++) any |= b[j] != 0;                            \
        if (CK_EXACT_##K || value_only) {                                         \
            /* equal values are equal bits (or which of them does not matter: \
             * argmin/argmax look for the first equal one): whole vectors first */ \
            for (int k = 1; k < NV; k++) {                                        \
                M keep = CK_KEEP_##NAME(K, DT, m[0], m[k]);                       \
                m[0] = (V)((keep & (M)m[0]) | (~keep & (M)m[k]));                 \
            }                                                                     \
            r = m[0][0];                                                          \
            for (int j = 1; j < VL; j++) { S v = m[0][j]; r = CK_KEEP_##NAME(K, DT, r, v) ? r : v; } \
        } else {                                                                  \
            r = m[0][0];                                                          \
            for (int j = 1; j < NL; j++) { S v = m[j / VL][j % VL]; r = CK_KEEP_##NAME(K, DT, r, v) ? r : v; } \
        }                                                                         \
    }                                                                             \
    for (; i < n; i++) { S v = x[i]; r = CK_KEEP_##NAME(K, DT, r, v) ? r : v; any |= CK_ISNAN_##K(v); } \
    if (any)                                                                      \
        for (i = 0; i < n; i++)                                                   \
            if (CK_ISNAN_##K(x[i])) return x[i];                                  \
    return r;                                                                     \
}
/* (float16 is not among them: with no half compare in the baseline build,
 * its vext is defined but never called) */
/* kinds whose equal values are the same bits */
#define CK_EXACT_B 1
#define CK_EXACT_I 1
#define CK_EXACT_U 1
#define CK_EXACT_F 0
#define CK_EXACT_C 0
#define CK_VEXT_DEF_B CK_VEXT_
#define CK_VEXT_DEF_I CK_VEXT_
#define CK_VEXT_DEF_U CK_VEXT_
#define CK_VEXT_DEF_F CK_VEXT_
#define CK_VEXT_DEF_C(DT, K, S, W, NAME)
#define CK_HAS_VEXT_B(S, C) 1
#define CK_HAS_VEXT_I(S, C) 1
#define CK_HAS_VEXT_U(S, C) 1
#define CK_HAS_VEXT_F(S, C) (sizeof(S) == sizeof(C))
#define CK_HAS_VEXT_C(S, C) 0
#define CK_VEXT_CALL_B(NAME, DT, S, p, n, vo) ((S)ck_vext_##NAME##_##DT((const S *)(p), n, vo))
#define CK_VEXT_CALL_I CK_VEXT_CALL_B
#define CK_VEXT_CALL_U CK_VEXT_CALL_B
#define CK_VEXT_CALL_F CK_VEXT_CALL_B
#define CK_VEXT_CALL_C(NAME, DT, S, p, n, vo) ((S)0)

/* The extreme of any run, NumPy's way: stop at the first NaN. */
#define CK_SEXT_(DT, K, S, C, NAME)                                               \
static inline C ck_sext_##NAME##_##DT(const char *p, int64_t n, int64_t s)        \
{                                                                                 \
    C r = (C)*(const S *)p;                                                       \
    if (CK_ISNAN_##K(r)) return r;                                                \
    for (int64_t i = 1; i < n; i++) {                                             \
        p += s;                                                                   \
        C v = (C)*(const S *)p;                                                   \
        if (CK_ISNAN_##K(v)) return v;                                            \
        if (!CK_KEEP_##NAME(K, DT, r, v)) r = v;                                  \
    }                                                                             \
    return r;                                                                     \
}

#define CK_GEN_MINMAX_(DT, K, S, C, R, W, NAME)                                   \
CK_VEXT_DEF_##K(DT, K, S, W, NAME)                                                \
CK_SEXT_(DT, K, S, C, NAME)                                                       \
typedef struct { C v; int has; } ck_st_##NAME##_##DT;                             \
CK_STATE_FITS_(ck_st_##NAME##_##DT);                                              \
static void ck_init_##NAME##_##DT(void *st) { ((ck_st_##NAME##_##DT *)st)->has = 0; } \
static void ck_merge_##NAME##_##DT(void *vst, const void *vl)                     \
{                                                                                 \
    ck_st_##NAME##_##DT *st = (ck_st_##NAME##_##DT *)vst;                         \
    const ck_st_##NAME##_##DT *l = (const ck_st_##NAME##_##DT *)vl;               \
    if (!l->has) return;                                                          \
    if (!st->has) { *st = *l; return; }                                           \
    C a = st->v, b = l->v;                                                        \
    st->v = (CK_KEEP_##NAME(K, DT, a, b) || CK_ISNAN_##K(a)) ? a : b;             \
}                                                                                 \
static CK_HOT void ck_run_##NAME##_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    (void)idx;                                                                    \
    if (n <= 0) return;                                                           \
    ck_st_##NAME##_##DT l;                                                        \
    l.has = 1;                                                                    \
    if (CK_HAS_VEXT_##K(S, C) && s == (int64_t)sizeof(S)) l.v = (C)CK_VEXT_CALL_##K(NAME, DT, S, p, n, 0); \
    else l.v = ck_sext_##NAME##_##DT(p, n, s);                                    \
    ck_merge_##NAME##_##DT(vst, &l);                                              \
}                                                                                 \
static void ck_store_##NAME##_##DT(const void *st, char *out)                     \
{                                                                                 \
    *(S *)out = (S)((const ck_st_##NAME##_##DT *)st)->v;                          \
}                                                                                 \
/* np.minimum: keep the accumulator unless the new value is better or NaN */      \
static CK_HOT void ck_row_##NAME##_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    C *restrict acc = (C *)vacc;                                                  \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = (C)x,                                                 \
                { C a = acc[j]; C v = (C)x; acc[j] = (CK_KEEP_##NAME(K, DT, a, v) | CK_ISNAN_##K(a)) ? a : v; }) \
}                                                                                 \
CK_ROWSTORE_(NAME, DT, C, S)

#define CK_GEN_MIN_(DT, K, S, C, R, W) CK_GEN_MINMAX_(DT, K, S, C, R, W, MIN)
#define CK_GEN_MAX_(DT, K, S, C, R, W) CK_GEN_MINMAX_(DT, K, S, C, R, W, MAX)
CK_RED_TYPES(CK_GEN_MIN_)
CK_RED_TYPES(CK_GEN_MAX_)

/* argmin / argmax: the first best, and the first NaN beats everything. */
#define CK_GEN_ARG_(DT, K, S, C, R, W, NAME, EXT)                                 \
/* a block's extreme out of line: inlined into the block loop, GCC does not  \
 * vectorise the lanes */                                                     \
static CK_HOT __attribute__((noinline, unused)) S ck_blk_##NAME##_##DT(const char *p, int64_t n) \
{                                                                                 \
    (void)p; (void)n;                                                             \
    return CK_HAS_VEXT_##K(S, C) ? CK_VEXT_CALL_##K(EXT, DT, S, p, n, 1) : (S)0;  \
}                                                                                 \
typedef struct { C v; int64_t i; int has; } ck_st_##NAME##_##DT;                  \
CK_STATE_FITS_(ck_st_##NAME##_##DT);                                              \
static void ck_init_##NAME##_##DT(void *st) { ((ck_st_##NAME##_##DT *)st)->has = 0; } \
static void ck_merge_##NAME##_##DT(void *vst, const void *vl)                     \
{                                                                                 \
    ck_st_##NAME##_##DT *st = (ck_st_##NAME##_##DT *)vst;                         \
    const ck_st_##NAME##_##DT *l = (const ck_st_##NAME##_##DT *)vl;               \
    if (!l->has) return;                                                          \
    if (!st->has || (!CK_ISNAN_##K(st->v) &&                                      \
                     (CK_ISNAN_##K(l->v) || CK_BETTER_##EXT(K, l->v, st->v))))    \
        *st = *l;                                                                 \
}                                                                                 \
static CK_HOT void ck_run_##NAME##_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    if (n <= 0) return;                                                           \
    ck_st_##NAME##_##DT l;                                                        \
    l.has = 1;                                                                    \
    if (CK_HAS_VEXT_##K(S, C) && s == (int64_t)sizeof(S)) {                             \
        /* the extreme of each block by lanes, the first block holding the best  \
         * (or a NaN, which ends the search) kept, then the first place it       \
         * occurs there: one read of the run, the block read again from cache */ \
        enum { B = 16384 / sizeof(S) };   /* bytes of a block: in L1 for the rescan */ \
        const S *x = (const S *)p;                                                \
        S r = ck_blk_##NAME##_##DT(p, n < B ? n : B);                             \
        int64_t i = 0;                                                            \
        if (!CK_ISNAN_##K(r))                                                     \
            for (int64_t b0 = B; b0 < n; b0 += B) {                               \
                S m = ck_blk_##NAME##_##DT((const char *)(x + b0), n - b0 < B ? n - b0 : B); \
                if (CK_ISNAN_##K(m) || CK_BETTER_##EXT(K, m, r)) { r = m; i = b0; } \
                if (CK_ISNAN_##K(m)) break;                                       \
            }                                                                     \
        for (; i < n - 1; i++)                                                    \
            if (x[i] == r || CK_ISNAN_##K(x[i])) break;                           \
        l.v = (C)r;                                                               \
        l.i = idx + i;                                                            \
    } else {                                                                      \
        C best = (C)*(const S *)p;                                                \
        int64_t bi = 0;                                                           \
        if (!CK_ISNAN_##K(best))                                                  \
            for (int64_t i = 1; i < n; i++) {                                     \
                C v = (C)*(const S *)(p + i * s);                                 \
                if (CK_ISNAN_##K(v)) { best = v; bi = i; break; }                 \
                if (CK_BETTER_##EXT(K, v, best)) { best = v; bi = i; }            \
            }                                                                     \
        l.v = best;                                                               \
        l.i = idx + bi;                                                           \
    }                                                                             \
    ck_merge_##NAME##_##DT(vst, &l);                                              \
}                                                                                 \
static void ck_store_##NAME##_##DT(const void *st, char *out)                     \
{                                                                                 \
    *(int64_t *)out = ((const ck_st_##NAME##_##DT *)st)->i;                       \
}                                                                                 \
static CK_HOT void ck_row_##NAME##_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    C *restrict acc = (C *)vacc;                                                  \
    CK_ROWLOOP_(S, { acc[j] = (C)x; ix[j] = k; },                                 \
                { C a = acc[j]; C v = (C)x;                                       \
                  if ((CK_ISNAN_##K(a) == 0) & (CK_ISNAN_##K(v) | CK_BETTER_##EXT(K, v, a))) { acc[j] = v; ix[j] = k; } }) \
}                                                                                 \
static void ck_rowst_##NAME##_##DT(const void *vacc, const int64_t *ix, char *out, int64_t m, int64_t os) \
{                                                                                 \
    (void)vacc;                                                                   \
    for (int64_t j = 0; j < m; j++) *(int64_t *)(out + j * os) = ix[j];           \
}

#define CK_GEN_ARGMIN_(DT, K, S, C, R, W) CK_GEN_ARG_(DT, K, S, C, R, W, ARGMIN, MIN)
#define CK_GEN_ARGMAX_(DT, K, S, C, R, W) CK_GEN_ARG_(DT, K, S, C, R, W, ARGMAX, MAX)
CK_RED_TYPES(CK_GEN_ARGMIN_)
CK_RED_TYPES(CK_GEN_ARGMAX_)

/* ================================================ ALL, ANY, COUNT_NONZERO */

/* all / any stop early, a block at a time so the count inside vectorises. */
#define CK_EARLY_BLOCK 4096

#define CK_GEN_TRUTH_(DT, K, S, C, R, W)                                          \
CK_INLINE int64_t ck_nnz_##DT(const char *p, int64_t n, int64_t s)                \
{                                                                                 \
    int64_t c = 0;                                                                \
    if (s == (int64_t)sizeof(S)) {                                                \
        const S *x = (const S *)p;                                                \
        for (int64_t i = 0; i < n; i++) c += CK_NZ_##K(x[i]);                     \
    } else if (s == 0) {                                                          \
        c = n > 0 && CK_NZ_##K(*(const S *)p) ? n : 0;                            \
    } else {                                                                      \
        for (int64_t i = 0; i < n; i++, p += s) c += CK_NZ_##K(*(const S *)p);    \
    }                                                                             \
    return c;                                                                     \
}                                                                                 \
typedef struct { int64_t v; } ck_st_COUNT_##DT;                                   \
static void ck_init_COUNT_##DT(void *st) { ((ck_st_COUNT_##DT *)st)->v = 0; }     \
static CK_HOT void ck_run_COUNT_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    (void)idx;                                                                    \
    ((ck_st_COUNT_##DT *)vst)->v += ck_nnz_##DT(p, n, s);                         \
}                                                                                 \
static void ck_merge_COUNT_##DT(void *vst, const void *vl)                        \
{                                                                                 \
    ((ck_st_COUNT_##DT *)vst)->v += ((const ck_st_COUNT_##DT *)vl)->v;            \
}                                                                                 \
static void ck_store_COUNT_##DT(const void *st, char *out) { *(int64_t *)out = ((const ck_st_COUNT_##DT *)st)->v; } \
static CK_HOT void ck_row_COUNT_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    int64_t *restrict acc = (int64_t *)vacc;                                      \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = CK_NZ_##K(x), acc[j] += CK_NZ_##K(x))                 \
}                                                                                 \
CK_ROWSTORE_(COUNT, DT, int64_t, int64_t)                                         \
typedef struct { uint8_t v; } ck_st_ALL_##DT;                                     \
static void ck_init_ALL_##DT(void *st) { ((ck_st_ALL_##DT *)st)->v = 1; }         \
static CK_HOT void ck_run_ALL_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    ck_st_ALL_##DT *st = (ck_st_ALL_##DT *)vst;                                   \
    (void)idx;                                                                    \
    for (int64_t b = 0; b < n && st->v; b += CK_EARLY_BLOCK) {                    \
        int64_t m = n - b < CK_EARLY_BLOCK ? n - b : CK_EARLY_BLOCK;              \
        if (ck_nnz_##DT(p + b * s, m, s) != m) st->v = 0;                         \
    }                                                                             \
}                                                                                 \
static void ck_merge_ALL_##DT(void *vst, const void *vl) { ((ck_st_ALL_##DT *)vst)->v &= ((const ck_st_ALL_##DT *)vl)->v; } \
static void ck_store_ALL_##DT(const void *st, char *out) { *(uint8_t *)out = ((const ck_st_ALL_##DT *)st)->v; } \
static CK_HOT void ck_row_ALL_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    uint8_t *restrict acc = (uint8_t *)vacc;                                      \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = (uint8_t)CK_NZ_##K(x), acc[j] &= (uint8_t)CK_NZ_##K(x)) \
}                                                                                 \
CK_ROWSTORE_(ALL, DT, uint8_t, uint8_t)                                           \
typedef struct { uint8_t v; } ck_st_ANY_##DT;                                     \
static void ck_init_ANY_##DT(void *st) { ((ck_st_ANY_##DT *)st)->v = 0; }         \
static CK_HOT void ck_run_ANY_##DT(void *vst, const char *p, int64_t n, int64_t s, int64_t idx) \
{                                                                                 \
    ck_st_ANY_##DT *st = (ck_st_ANY_##DT *)vst;                                   \
    (void)idx;                                                                    \
    for (int64_t b = 0; b < n && !st->v; b += CK_EARLY_BLOCK) {                   \
        int64_t m = n - b < CK_EARLY_BLOCK ? n - b : CK_EARLY_BLOCK;              \
        if (ck_nnz_##DT(p + b * s, m, s) != 0) st->v = 1;                         \
    }                                                                             \
}                                                                                 \
static void ck_merge_ANY_##DT(void *vst, const void *vl) { ((ck_st_ANY_##DT *)vst)->v |= ((const ck_st_ANY_##DT *)vl)->v; } \
static void ck_store_ANY_##DT(const void *st, char *out) { *(uint8_t *)out = ((const ck_st_ANY_##DT *)st)->v; } \
static CK_HOT void ck_row_ANY_##DT(void *vacc, int64_t *ix, const char *p, int64_t m, int64_t s, int64_t k, int first) \
{                                                                                 \
    uint8_t *restrict acc = (uint8_t *)vacc;                                      \
    (void)k;                                                                      \
    (void)ix;                                                                     \
    CK_ROWLOOP_(S, acc[j] = (uint8_t)CK_NZ_##K(x), acc[j] |= (uint8_t)CK_NZ_##K(x)) \
}                                                                                 \
CK_ROWSTORE_(ANY, DT, uint8_t, uint8_t)
CK_RED_TYPES(CK_GEN_TRUTH_)

/* ---------------------------------------------------------- the table */

#define CK_KENTRY_(OP, NAME, DT, BLK, ACC, IX)                                    \
    [CK_REDUCE_##OP][CK_##DT] = {ck_init_##NAME##_##DT, ck_run_##NAME##_##DT, ck_merge_##NAME##_##DT, \
                                 ck_store_##NAME##_##DT, ck_row_##NAME##_##DT, ck_rowst_##NAME##_##DT, \
                                 BLK, (int)sizeof(ACC), IX},
#define CK_KROW_(DT, K, S, C, R, W)                                               \
    CK_KENTRY_(SUM, SUM, DT, CK_BLOCK_##K(R), C, 0)                               \
    CK_KENTRY_(PROD, PROD, DT, 1024, C, 0)                                        \
    CK_KENTRY_(MIN, MIN, DT, 1024, C, 0)                                          \
    CK_KENTRY_(MAX, MAX, DT, 1024, C, 0)                                          \
    CK_KENTRY_(ALL, ALL, DT, 1024, uint8_t, 0)                                    \
    CK_KENTRY_(ANY, ANY, DT, 1024, uint8_t, 0)                                    \
    CK_KENTRY_(ARGMIN, ARGMIN, DT, 1024, C, 1)                                    \
    CK_KENTRY_(ARGMAX, ARGMAX, DT, 1024, C, 1)                                    \
    CK_KENTRY_(COUNT_NONZERO, COUNT, DT, 1024, int64_t, 0)
static const ck_red_kernel ck_red_kernels[CK_REDUCE_COUNT][CK_NTYPES] = {
    CK_RED_TYPES(CK_KROW_)
};
/* a new reduction (ck_reduce_op) needs its kernels in CK_KROW_ */
_Static_assert(CK_REDUCE_COUNT == 9, "a reduction without CPU kernels");

/* ===================================================== reduction drivers */

/* A kernel and how it reads its input.  Sums and products run in the
 * dtype NumPy's loop has (int64 for int8, float32 for a float16 mean):
 * an input of another dtype is converted by its cast loop a block at a
 * time into a buffer on the stack, never into a converted copy of the
 * array, as NumPy's buffered reductions do.  The blocks stay in L1, so
 * this costs a fraction of reading the input from memory. */
typedef struct ck_red_exec {
    const ck_red_kernel *k;
    ck_cpu_loop cast;   /* NULL: the kernel reads the input as it is */
    int64_t esize;      /* bytes of a converted element */
} ck_red_exec;

#define CK_CVT_BYTES 4096

/* The converting paths are out of line: their stack buffer would cost the
 * plain paths a 4 KB frame. */
static __attribute__((noinline)) void ck_exec_run_cast(const ck_red_exec *x, void *st, const char *p, int64_t n,
                                                       int64_t s, int64_t idx)
{
    _Alignas(64) char buf[CK_CVT_BYTES];
    int64_t es = x->esize, b = CK_CVT_BYTES / es, steps[2] = {es, s};
    char *args[2] = {buf, (char *)p};
    if (s == 0) {
        /* one value, broadcast: the kernels of exact kinds fold it at once */
        x->cast(args, 1, steps);
        x->k->run(st, buf, n, 0, idx);
        return;
    }
    for (int64_t i = 0; i < n; i += b) {
        int64_t m = n - i < b ? n - i : b;
        args[1] = (char *)(p + i * s);
        x->cast(args, m, steps);
        x->k->run(st, buf, m, es, idx + i);
    }
}

static __attribute__((noinline)) void ck_exec_row_cast(const ck_red_exec *x, void *acc, int64_t *ix, const char *p,
                                                       int64_t m, int64_t s, int64_t kk, int first)
{
    _Alignas(64) char buf[CK_CVT_BYTES];
    int64_t es = x->esize, b = CK_CVT_BYTES / es, steps[2] = {es, s};
    for (int64_t j = 0; j < m; j += b) {
        int64_t mm = m - j < b ? m - j : b;
        char *args[2] = {buf, (char *)(p + j * s)};
        x->cast(args, mm, steps);
        x->k->row((char *)acc + j * x->k->acc_size, ix ? ix + j : NULL, buf, mm, es, kk, first);
    }
}

/* A loop over runs or rows passes cast (whether x->cast is set) from a
 * local: *x is reread after every call, a local stays in a register. */
CK_INLINE void ck_exec_run(const ck_red_exec *x, int cast, void *st, const char *p, int64_t n, int64_t s,
                           int64_t idx)
{
    if (cast) ck_exec_run_cast(x, st, p, n, s, idx);
    else x->k->run(st, p, n, s, idx);
}

CK_INLINE void ck_exec_row(const ck_red_exec *x, const ck_red_kernel *k, int cast, void *acc, int64_t *ix,
                           const char *p, int64_t m, int64_t s, int64_t kk, int first)
{
    if (cast) ck_exec_row_cast(x, acc, ix, p, m, s, kk, first);
    else k->row(acc, ix, p, m, s, kk, first);
}

/* Combine L leaf states, in order, pairwise: two subtrees of one level
 * merge as soon as both exist (as the sum kernels combine their blocks),
 * what is left folds from the right.  The tree depends on L only. */
static ck_state *ck_cascade(const ck_red_kernel *k, ck_state *st, int L)
{
    int stk[CK_MAX_LEAVES], lvl[CK_MAX_LEAVES], sp = 0;
    for (int i = 0; i < L; i++) {
        int cur = i, l = 0;
        for (; sp > 0 && lvl[sp - 1] == l; l++) {
            int prev = stk[--sp];
            k->merge(&st[prev], &st[cur]);
            cur = prev;
        }
        stk[sp] = cur;
        lvl[sp++] = l;
    }
    for (; sp > 1; sp--) k->merge(&st[stk[sp - 2]], &st[stk[sp - 1]]);
    return &st[stk[0]];
}

typedef struct ck_leaf_ctx {
    const ck_red_exec *x;
    const char *p;
    int64_t n, s, idx0, leaf;
    ck_state *st;
} ck_leaf_ctx;

static void ck_leaf_task(void *vc, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ck_leaf_ctx *c = (const ck_leaf_ctx *)vc;
    for (int64_t i = begin; i < end; i++) {
        int64_t off = i * c->leaf, m = c->n - off < c->leaf ? c->n - off : c->leaf;
        c->x->k->init(&c->st[i]);
        ck_exec_run(c->x, c->x->cast != NULL, &c->st[i], c->p + off * c->s, m, c->s, c->idx0 + off);
    }
}

/* Fold one 1-D run into st, over the cores when it is long.  Leaves are
 * whole blocks of the kernel and their size depends on n only, so the
 * result does not depend on the thread count. */
static void ck_reduce_1d(const ck_red_exec *x, const char *p, int64_t n, int64_t s, int64_t idx0, void *st)
{
    const ck_red_kernel *k = x->k;
    int64_t leaf = n;
    if (n >= CK_PAR_MIN) {
        leaf = k->block;
        while (leaf < CK_LEAF_MIN || (n + leaf - 1) / leaf > CK_MAX_LEAVES) leaf *= 2;
    }
    if (leaf >= n) {
        ck_exec_run(x, x->cast != NULL, st, p, n, s, idx0);
        return;
    }
    int L = (int)((n + leaf - 1) / leaf);
    ck_state states[CK_MAX_LEAVES];
    ck_leaf_ctx c = {x, p, n, s, idx0, leaf, states};
    ck_parallel_for(L, 1, ck_leaf_task, &c);
    k->merge(st, ck_cascade(k, states, L));
}

/* The inner (reduced) space of one output element: dims innermost first,
 * at least one. */
typedef struct ck_inner {
    const ck_red_exec *x;
    int n;
    int64_t shape[CK_MAXDIMS], strides[CK_MAXDIMS];
    int64_t rows;    /* product of shape[1..] */
} ck_inner;

/* Fold rows [r0, r1) (each along dim 0) of the inner space at base. */
static void ck_fold_rows(const ck_inner *in, const char *base, int64_t r0, int64_t r1, void *st, int split)
{
    int64_t idx[CK_MAXDIMS], rem = r0, n0 = in->shape[0], s0 = in->strides[0];
    const char *p = base;
    const int cast = in->x->cast != NULL;
    for (int d = 1; d < in->n; d++) {
        idx[d] = rem % in->shape[d];
        rem /= in->shape[d];
        p += idx[d] * in->strides[d];
    }
    for (int64_t r = r0; r < r1; r++) {
        if (split) ck_reduce_1d(in->x, p, n0, s0, r * n0, st);
        else ck_exec_run(in->x, cast, st, p, n0, s0, r * n0);
        for (int d = 1; d < in->n; d++) {
            p += in->strides[d];
            if (++idx[d] < in->shape[d]) break;
            p -= in->shape[d] * in->strides[d];
            idx[d] = 0;
        }
    }
}

typedef struct ck_group_ctx {
    const ck_inner *in;
    const char *base;
    int64_t rpg;
    ck_state *st;
} ck_group_ctx;

static void ck_group_task(void *vc, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ck_group_ctx *c = (const ck_group_ctx *)vc;
    for (int64_t g = begin; g < end; g++) {
        int64_t r1 = (g + 1) * c->rpg;
        c->in->x->k->init(&c->st[g]);
        ck_fold_rows(c->in, c->base, g * c->rpg, r1 < c->in->rows ? r1 : c->in->rows, &c->st[g], 0);
    }
}

/* Fold the whole inner space at base into st.  Long rows are split into
 * leaves each; many short rows are cut into groups of rows.  Either way
 * the cut depends on the shape only. */
static void ck_reduce_inner(const ck_inner *in, const char *base, void *st)
{
    int64_t n0 = in->shape[0], rows = in->rows;
    if (rows == 1) {
        ck_reduce_1d(in->x, base, n0, in->strides[0], 0, st);
        return;
    }
    if (n0 >= 2 * CK_LEAF_MIN || n0 * rows < CK_PAR_MIN) {
        ck_fold_rows(in, base, 0, rows, st, n0 >= 2 * CK_LEAF_MIN);
        return;
    }
    int64_t rpg = (CK_LEAF_MIN + n0 - 1) / n0;
    while ((rows + rpg - 1) / rpg > CK_MAX_LEAVES) rpg *= 2;
    int G = (int)((rows + rpg - 1) / rpg);
    ck_state states[CK_MAX_LEAVES];
    ck_group_ctx c = {in, base, rpg, states};
    ck_parallel_for(G, 1, ck_group_task, &c);
    in->x->k->merge(st, ck_cascade(in->x->k, states, G));
}

static int64_t ck_outer_count(const ck_reduce_desc *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->n_outer; i++) n *= d->outer_shape[i];
    return n;
}

typedef struct ck_elem_ctx {
    const ck_reduce_desc *d;
    const ck_red_kernel *k;
    const ck_inner *in;
    int zero_identity;   /* empty reduction whose identity is all-zero bytes */
    int osize;
} ck_elem_ctx;

/* Output elements [begin, end), each folding its own inner space. */
static void ck_elem_task(void *vc, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ck_elem_ctx *c = (const ck_elem_ctx *)vc;
    const ck_reduce_desc *d = c->d;
    int64_t idx[CK_MAXDIMS], rem = begin;
    const char *ip = d->in;
    char *op = d->out;
    for (int i = 0; i < d->n_outer; i++) {
        idx[i] = rem % d->outer_shape[i];
        rem /= d->outer_shape[i];
        ip += idx[i] * d->outer_in_strides[i];
        op += idx[i] * d->outer_out_strides[i];
    }
    for (int64_t o = begin; o < end; o++) {
        if (d->inner_size == 0 && c->zero_identity) {
            memset(op, 0, (size_t)c->osize);
        } else {
            ck_state st;
            c->k->init(&st);
            if (d->inner_size) ck_reduce_inner(c->in, ip, &st);
            c->k->store(&st, op);
        }
        for (int i = 0; i < d->n_outer; i++) {
            ip += d->outer_in_strides[i];
            op += d->outer_out_strides[i];
            if (++idx[i] < d->outer_shape[i]) break;
            ip -= d->outer_shape[i] * d->outer_in_strides[i];
            op -= d->outer_shape[i] * d->outer_out_strides[i];
            idx[i] = 0;
        }
    }
}

typedef struct ck_rows_ctx {
    const ck_reduce_desc *d;
    const ck_red_exec *x;
    int64_t rb, nblk;   /* outputs per block along outer dim 0, blocks */
    int failed;         /* a task could not get its accumulators */
} ck_rows_ctx;

/* Tasks [begin, end): a block of up to rb outputs along outer dim 0, at one
 * position of the other outer dims; every inner position adds a row
 * segment into the block's accumulators.  Inlined twice, with cast 0 and
 * 1, so the loop over rows does not test for a conversion at each row. */
CK_INLINE void ck_rows_run(ck_rows_ctx *c, int64_t begin, int64_t end, const int cast)
{
    const ck_reduce_desc *d = c->d;
    const ck_red_kernel *k = c->x->k;
    int64_t rb = c->rb;
    char *acc = malloc((size_t)rb * (size_t)(k->acc_size + (k->has_ix ? 8 : 0)) + 64);
    if (!acc) {
        c->failed = 1;
        return;
    }
    int64_t *ix = k->has_ix ? (int64_t *)(acc + ((rb * k->acc_size + 63) & ~(int64_t)63)) : NULL;
    int64_t n0 = d->outer_shape[0], si0 = d->outer_in_strides[0], so0 = d->outer_out_strides[0];
    for (int64_t t = begin; t < end; t++) {
        int64_t blk = t % c->nblk, o = t / c->nblk;
        const char *ip = d->in + blk * rb * si0;
        char *op = d->out + blk * rb * so0;
        for (int i = 1; i < d->n_outer; i++) {
            int64_t q = o % d->outer_shape[i];
            o /= d->outer_shape[i];
            ip += q * d->outer_in_strides[i];
            op += q * d->outer_out_strides[i];
        }
        int64_t m = n0 - blk * rb < rb ? n0 - blk * rb : rb;
        if (d->n_inner == 0) {
            ck_exec_row(c->x, k, cast, acc, ix, ip, m, si0, 0, 1);
        } else {
            int64_t idx[CK_MAXDIMS] = {0};
            const char *p = ip;
            for (int64_t kk = 0; kk < d->inner_size; kk++) {
                ck_exec_row(c->x, k, cast, acc, ix, p, m, si0, kk, kk == 0);
                for (int i = 0; i < d->n_inner; i++) {
                    p += d->inner_strides[i];
                    if (++idx[i] < d->inner_shape[i]) break;
                    p -= d->inner_shape[i] * d->inner_strides[i];
                    idx[i] = 0;
                }
            }
        }
        k->row_store(acc, ix, op, m, so0);
    }
    free(acc);
}

static void ck_rows_task(void *vc, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    ck_rows_ctx *c = (ck_rows_ctx *)vc;
    if (c->x->cast) ck_rows_run(c, begin, end, 1);
    else ck_rows_run(c, begin, end, 0);
}

/* Outputs per row block: CK_ROW_BYTES of accumulators (or of the strided
 * input segment, which short reductions read again at the next inner
 * position), fewer when that would leave cores idle. */
static int64_t ck_row_block(int64_t n0, int64_t rest, int64_t elem_bytes, int64_t in_step, int64_t work, int threads)
{
    if (in_step < 0) in_step = -in_step;
    int64_t rb = CK_ROW_BYTES / (elem_bytes > in_step ? elem_bytes : in_step);
    if (threads > 1 && work >= CK_PAR_MIN && rest < threads) {
        int64_t share = (n0 * rest + threads - 1) / threads;
        share = (share + 63) / 64 * 64;
        if (share < rb) rb = share;
    }
    if (rb < 64) rb = 64;
    return rb < n0 ? rb : n0;
}

static int64_t ck_abs64(int64_t v) { return v < 0 ? -v : v; }

ck_status ck_cpu_reduce(const ck_reduce_desc *d)
{
    if ((unsigned)d->op >= CK_REDUCE_COUNT || (unsigned)d->in_type >= CK_NTYPES)
        return ck_error_set(CK_ERR_VALUE, "invalid reduction");
    /* sums and products run in their output's dtype, the others in the input's */
    int upcast = d->op == CK_REDUCE_SUM || d->op == CK_REDUCE_PROD;
    ck_dtype want = d->in_type;
    if (d->op == CK_REDUCE_ALL || d->op == CK_REDUCE_ANY) want = CK_BOOL;
    else if (d->op >= CK_REDUCE_ARGMIN) want = CK_INT64;
    if (upcast ? (unsigned)d->out_type >= CK_NTYPES : d->out_type != want)
        return ck_error_set(CK_ERR_TYPE, "reduction of %s cannot write %s", ck_dtype_get_info(d->in_type)->name,
                            (unsigned)d->out_type < CK_NTYPES ? ck_dtype_get_info(d->out_type)->name : "?");
    if (d->n_outer < 0 || d->n_outer > CK_MAXDIMS || d->n_inner < 0 || d->n_inner > CK_MAXDIMS)
        return ck_error_set(CK_ERR_VALUE, "invalid reduction");
    ck_dtype lt = upcast ? d->out_type : d->in_type;
    ck_red_exec x = {&ck_red_kernels[d->op][lt], NULL, 0};
    if (lt != d->in_type) {
        x.cast = ck_cpu_cast_loops[lt][d->in_type];
        x.esize = ck_dtype_get_info(lt)->itemsize;
    }
    const ck_red_kernel *k = x.k;
    int64_t outer = ck_outer_count(d);
    if (outer == 0) return CK_OK;
    if (d->inner_size == 0 && (d->op == CK_REDUCE_MIN || d->op == CK_REDUCE_MAX ||
                               d->op == CK_REDUCE_ARGMIN || d->op == CK_REDUCE_ARGMAX))
        return ck_error_set(CK_ERR_VALUE, "zero-size reduction without identity");
    int64_t work = outer * (d->inner_size ? d->inner_size : 1);
    int threads = ck_cpu_num_threads();

    /* rows: the kept dim 0 is nearer in memory than the reduced one (or the
     * reduction is so short that per-element folds would be all overhead) */
    if (d->inner_size >= 1 && d->n_outer >= 1 && d->outer_shape[0] >= 8) {
        int64_t so = ck_abs64(d->outer_in_strides[0]);
        int64_t si = d->n_inner ? ck_abs64(d->inner_strides[0]) : 0;
        if (so < si || d->inner_size <= 32) {
            int64_t n0 = d->outer_shape[0], rest = outer / n0;
            ck_rows_ctx c = {d, &x, ck_row_block(n0, rest, k->acc_size + (k->has_ix ? 8 : 0), d->outer_in_strides[0], work, threads), 0, 0};
            c.nblk = (n0 + c.rb - 1) / c.rb;
            int64_t tasks = c.nblk * rest;
            if (work >= CK_PAR_MIN && tasks >= 2 && threads > 1) ck_parallel_for(tasks, 1, ck_rows_task, &c);
            else ck_rows_task(&c, 0, tasks, 0);
            if (c.failed) return ck_error_set(CK_ERR_MEMORY, "out of memory for reduction accumulators");
            return CK_OK;
        }
    }

    ck_inner in;
    in.x = &x;
    in.n = d->n_inner > 0 ? d->n_inner : 1;
    in.rows = 1;
    if (d->n_inner == 0) {
        in.shape[0] = 1;
        in.strides[0] = 0;
    } else {
        for (int i = 0; i < d->n_inner; i++) {
            in.shape[i] = d->inner_shape[i];
            in.strides[i] = d->inner_strides[i];
            if (i) in.rows *= d->inner_shape[i];
        }
    }
    ck_elem_ctx c = {d, k, &in,
                     d->op == CK_REDUCE_SUM || d->op == CK_REDUCE_ANY || d->op == CK_REDUCE_COUNT_NONZERO,
                     ck_dtype_get_info(d->out_type)->itemsize};
    /* many outputs: one core each; few long ones: each is split instead */
    if (outer > 1 && work >= CK_PAR_MIN && threads > 1 &&
        (d->inner_size < 2 * CK_LEAF_MIN || outer >= 2 * threads))
        ck_parallel_for(outer, 1, ck_elem_task, &c);
    else
        ck_elem_task(&c, 0, outer, 0);
    return CK_OK;
}

/* =============================================================== scans */

/* Each step rounds to the stored type, as NumPy's accumulate does (float16
 * included: its running value is a half). */
#define CK_GEN_SCAN_(DT, K, S, C, NAME, OPM)                                      \
static void ck_scan1_##NAME##_##DT(const char *ip, int64_t n, int64_t si, char *op, int64_t so) \
{                                                                                 \
    C a = (C)*(const S *)ip;                                                      \
    *(S *)op = (S)a;                                                              \
    for (int64_t i = 1; i < n; i++) {                                             \
        ip += si;                                                                 \
        op += so;                                                                 \
        a = (C)(S)CK_##OPM##_##K(a, (C)*(const S *)ip);                           \
        *(S *)op = (S)a;                                                          \
    }                                                                             \
}                                                                                 \
static void ck_scanrow_##NAME##_##DT(char *o, const char *prev, const char *x, int64_t m, int64_t sx, int64_t so) \
{                                                                                 \
    if (!prev) {                                                                  \
        for (int64_t j = 0; j < m; j++) *(S *)(o + j * so) = *(const S *)(x + j * sx); \
    } else if (sx == (int64_t)sizeof(S) && so == (int64_t)sizeof(S)) {            \
        S *oo = (S *)o;                                                           \
        const S *pp = (const S *)prev, *xx = (const S *)x;                        \
        for (int64_t j = 0; j < m; j++) oo[j] = (S)CK_##OPM##_##K((C)pp[j], (C)xx[j]); \
    } else {                                                                      \
        for (int64_t j = 0; j < m; j++)                                           \
            *(S *)(o + j * so) = (S)CK_##OPM##_##K((C)*(const S *)(prev + j * so), (C)*(const S *)(x + j * sx)); \
    }                                                                             \
}
#define CK_GEN_SCANS_(DT, K, S, C, R, W) CK_GEN_SCAN_(DT, K, S, C, SUM, ADD) CK_GEN_SCAN_(DT, K, S, C, PROD, MUL)
CK_RED_TYPES(CK_GEN_SCANS_)

typedef struct ck_scan_kernel {
    void (*scan1)(const char *ip, int64_t n, int64_t si, char *op, int64_t so);
    void (*row)(char *o, const char *prev, const char *x, int64_t m, int64_t sx, int64_t so);
} ck_scan_kernel;

#define CK_SENTRY_(DT, K, S, C, R, W)                                             \
    [0][CK_##DT] = {ck_scan1_SUM_##DT, ck_scanrow_SUM_##DT}, [1][CK_##DT] = {ck_scan1_PROD_##DT, ck_scanrow_PROD_##DT},
static const ck_scan_kernel ck_scan_kernels[2][CK_NTYPES] = {CK_RED_TYPES(CK_SENTRY_)};

typedef struct ck_scan_ctx {
    const ck_scan_desc *d;
    const ck_scan_kernel *k;
    int64_t rb, nblk;   /* row form: outputs per block along outer dim 0, blocks; nblk 0: one run per element */
    ck_cpu_loop cast;   /* an input of another dtype: converted into the output, then scanned there */
} ck_scan_ctx;

/* Bytes of output a run converts and scans at a time: in L1 while both happen. */
#define CK_SCAN_CHUNK_BYTES 8192

/* One run of a scan whose input is of another dtype than the output: a
 * chunk at a time is converted into the output and scanned in place from
 * the last value of the chunk before, so no copy of the input is made. */
static void ck_scan1_cast(const ck_scan_ctx *c, const char *ip, char *op)
{
    const ck_scan_desc *d = c->d;
    int64_t si = d->in_stride, so = d->out_stride, steps[2] = {so, si};
    int64_t b = CK_SCAN_CHUNK_BYTES / ck_dtype_get_info(d->type)->itemsize;
    for (int64_t i = 0; i < d->len; i += b) {
        int64_t m = d->len - i < b ? d->len - i : b;
        char *args[2] = {op + i * so, (char *)(ip + i * si)};
        c->cast(args, m, steps);
        if (i == 0) c->k->scan1(op, m, so, op, so);
        else c->k->scan1(op + (i - 1) * so, m + 1, so, op + (i - 1) * so, so);
    }
}

static void ck_scan_task(void *vc, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ck_scan_ctx *c = (const ck_scan_ctx *)vc;
    const ck_scan_desc *d = c->d;
    int first = c->nblk ? 1 : 0;   /* row form walks outer dims from 1 */
    for (int64_t t = begin; t < end; t++) {
        int64_t o = c->nblk ? t / c->nblk : t;
        const char *ip = d->in;
        char *op = d->out;
        for (int i = first; i < d->n_outer; i++) {
            int64_t q = o % d->outer_shape[i];
            o /= d->outer_shape[i];
            ip += q * d->outer_in_strides[i];
            op += q * d->outer_out_strides[i];
        }
        if (!c->nblk) {
            if (c->cast) ck_scan1_cast(c, ip, op);
            else c->k->scan1(ip, d->len, d->in_stride, op, d->out_stride);
            continue;
        }
        int64_t blk = t % c->nblk, n0 = d->outer_shape[0];
        int64_t si0 = d->outer_in_strides[0], so0 = d->outer_out_strides[0];
        int64_t m = n0 - blk * c->rb < c->rb ? n0 - blk * c->rb : c->rb;
        ip += blk * c->rb * si0;
        op += blk * c->rb * so0;
        const char *prev = NULL;
        int64_t steps[2] = {so0, si0};
        for (int64_t i = 0; i < d->len; i++) {
            if (c->cast) {
                char *args[2] = {op, (char *)ip};
                c->cast(args, m, steps);
                c->k->row(op, prev, op, m, so0, so0);
            } else {
                c->k->row(op, prev, ip, m, si0, so0);
            }
            prev = op;
            ip += d->in_stride;
            op += d->out_stride;
        }
    }
}

ck_status ck_cpu_scan(const ck_scan_desc *d)
{
    if ((d->op != CK_REDUCE_SUM && d->op != CK_REDUCE_PROD) || (unsigned)d->type >= CK_NTYPES ||
        (unsigned)d->in_type >= CK_NTYPES)
        return ck_error_set(CK_ERR_VALUE, "scans are cumulative sums and products only");
    if (d->n_outer < 0 || d->n_outer > CK_MAXDIMS) return ck_error_set(CK_ERR_VALUE, "invalid scan");
    int64_t outer = 1;
    for (int i = 0; i < d->n_outer; i++) outer *= d->outer_shape[i];
    if (outer == 0 || d->len == 0) return CK_OK;
    ck_scan_ctx c = {d, &ck_scan_kernels[d->op == CK_REDUCE_PROD][d->type], 0, 0,
                     d->in_type != d->type ? ck_cpu_cast_loops[d->type][d->in_type] : NULL};
    int threads = ck_cpu_num_threads();
    int64_t tasks = outer;
    /* the row form, as for reductions: whole rows of outputs per step */
    if (d->n_outer >= 1 && d->outer_shape[0] >= 8 &&
        (ck_abs64(d->outer_in_strides[0]) < ck_abs64(d->in_stride) || d->len <= 32)) {
        int64_t n0 = d->outer_shape[0], rest = outer / n0;
        c.rb = ck_row_block(n0, rest, ck_dtype_get_info(d->type)->itemsize, d->outer_in_strides[0], outer * d->len, threads);
        c.nblk = (n0 + c.rb - 1) / c.rb;
        tasks = c.nblk * rest;
    }
    if (outer * d->len >= CK_PAR_MIN && tasks >= 2 && threads > 1)
        ck_parallel_for(tasks, 1, ck_scan_task, &c);
    else
        ck_scan_task(&c, 0, tasks, 0);
    return CK_OK;
}
