/* Reductions and scans against straightforward reference loops: every axis
 * mask over contiguous, strided, negative-stride and transposed inputs, the
 * row and the per-element drivers, the parallel paths, NaN rules, argmin /
 * argmax on flattened views, empty reductions, cumsum / cumprod, mean and
 * var, and the accuracy of the pairwise float32 sum. */
#include "cudakit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void)   /* uniform in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static double get(const ck_array *a, const char *p)
{
    switch (a->dtype) {
    case CK_BOOL: return *(const uint8_t *)p;
    case CK_INT8: return *(const int8_t *)p;
    case CK_INT32: return *(const int32_t *)p;
    case CK_INT64: return (double)*(const int64_t *)p;
    case CK_FLOAT16: return (double)*(const _Float16 *)p;
    case CK_FLOAT32: return *(const float *)p;
    case CK_FLOAT64: return *(const double *)p;
    default: return NAN;
    }
}

static void set(const ck_array *a, char *p, double v)
{
    switch (a->dtype) {
    case CK_BOOL: *(uint8_t *)p = v != 0; break;
    case CK_INT8: *(int8_t *)p = (int8_t)v; break;
    case CK_INT32: *(int32_t *)p = (int32_t)v; break;
    case CK_INT64: *(int64_t *)p = (int64_t)v; break;
    case CK_FLOAT16: *(_Float16 *)p = (_Float16)v; break;
    case CK_FLOAT32: *(float *)p = (float)v; break;
    case CK_FLOAT64: *(double *)p = v; break;
    default: break;
    }
}

/* Byte offset of C-order element i of a (any strides). */
static int64_t offset_of(const ck_array *a, int64_t i)
{
    int64_t off = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
        off += (i % a->shape[d]) * a->strides[d];
        i /= a->shape[d];
    }
    return off;
}

static ck_array make(int ndim, const int64_t *shape, ck_dtype dt, int kind)
{
    ck_array a;
    OK(ck_array_empty(&a, ndim, shape, dt, ck_device_cpu()));
    for (int64_t i = 0; i < a.size; i++) {
        double v = kind == 0 ? rnd() : kind == 1 ? floor(rnd() * 50) : (rnd() > 0.3);
        set(&a, a.data + i * ck_array_itemsize(&a), v);
    }
    return a;
}

/* A strided view: start, step per dim (negative allowed), new shape. */
static ck_array slice(const ck_array *a, const int64_t *start, const int64_t *step, const int64_t *shape)
{
    ck_array v;
    ck_array_view(&v, a);
    int64_t st[CK_MAXDIMS];
    for (int d = 0; d < a->ndim; d++) {
        v.data += start[d] * a->strides[d];
        st[d] = step[d] * a->strides[d];
    }
    ck_array_set_layout(&v, a->ndim, shape, st);
    return v;
}

/* The reference: every element in C order, folded into its output (C-order
 * index over the kept dims) with the flat index along the reduced dims. */
static void reference(ck_reduce_op op, const ck_array *a, uint64_t mask, double *ref, int64_t nout)
{
    int64_t *cnt = calloc((size_t)nout, sizeof *cnt);
    for (int64_t o = 0; o < nout; o++) {
        switch (op) {
        case CK_REDUCE_PROD: case CK_REDUCE_ALL: ref[o] = 1; break;
        case CK_REDUCE_MIN: case CK_REDUCE_ARGMIN: ref[o] = INFINITY; break;
        case CK_REDUCE_MAX: case CK_REDUCE_ARGMAX: ref[o] = -INFINITY; break;
        default: ref[o] = 0;
        }
    }
    double *best = malloc((size_t)nout * sizeof *best);
    for (int64_t o = 0; o < nout; o++) best[o] = ref[o];
    for (int64_t i = 0; i < a->size; i++) {
        int64_t rem = i, o = 0, om = 1, k = 0, km = 1;
        for (int d = a->ndim - 1; d >= 0; d--) {
            int64_t c = rem % a->shape[d];
            rem /= a->shape[d];
            if ((mask >> d) & 1) { k += c * km; km *= a->shape[d]; }
            else { o += c * om; om *= a->shape[d]; }
        }
        double v = get(a, a->data + offset_of(a, i));
        switch (op) {
        case CK_REDUCE_SUM: ref[o] += v; break;
        case CK_REDUCE_PROD: ref[o] *= v; break;
        case CK_REDUCE_MIN: if (!isnan(ref[o]) && (isnan(v) || v < ref[o])) ref[o] = v; break;
        case CK_REDUCE_MAX: if (!isnan(ref[o]) && (isnan(v) || v > ref[o])) ref[o] = v; break;
        case CK_REDUCE_ALL: ref[o] = ref[o] && v != 0; break;
        case CK_REDUCE_ANY: ref[o] = ref[o] || v != 0; break;
        case CK_REDUCE_COUNT_NONZERO: ref[o] += v != 0; break;
        case CK_REDUCE_ARGMIN: case CK_REDUCE_ARGMAX:
            if (cnt[o]++ == 0 || (!isnan(best[o]) && (isnan(v) || (op == CK_REDUCE_ARGMIN ? v < best[o] : v > best[o])))) {
                best[o] = v;
                ref[o] = (double)k;
            }
            break;
        default: break;
        }
    }
    free(best);
    free(cnt);
}

static const char *op_names[] = {"sum", "prod", "min", "max", "all", "any", "argmin", "argmax", "count_nonzero"};

/* Reduce a over mask both ways and compare (rel: tolerance for sums). */
static void check_reduce(ck_reduce_op op, const ck_array *a, uint64_t mask, int keepdims, double rel, const char *what)
{
    ck_array r;
    ck_status s = ck_reduce(op, a, mask, keepdims, CK_DTYPE_INVALID, &r, 0);
    if (s != CK_OK) {
        CHECK(0, "%s %s mask %llu: %s", what, op_names[op], (unsigned long long)mask, ck_error_message());
        return;
    }
    int64_t nout = 1;
    for (int d = 0; d < a->ndim; d++)
        if (!((mask >> d) & 1)) nout *= a->shape[d];
    CHECK(r.size == nout, "%s %s: size %lld, expected %lld", what, op_names[op], (long long)r.size, (long long)nout);
    CHECK(r.ndim == (keepdims ? a->ndim : a->ndim - __builtin_popcountll(mask)), "%s %s: ndim %d", what, op_names[op], r.ndim);
    double *ref = malloc((size_t)(nout ? nout : 1) * sizeof *ref);
    reference(op, a, mask, ref, nout);
    int bad = 0;
    for (int64_t o = 0; o < nout && bad < 3; o++) {
        double got = get(&r, r.data + offset_of(&r, o)), want = ref[o];
        int ok = (isnan(got) && isnan(want)) || got == want ||
                 (rel > 0 && fabs(got - want) <= rel * (fabs(want) + 1));
        if (!ok) {
            bad++;
            CHECK(0, "%s %s mask %llu keepdims %d: out[%lld] = %.17g, expected %.17g", what, op_names[op],
                  (unsigned long long)mask, keepdims, (long long)o, got, want);
        }
    }
    free(ref);
    ck_array_release(&r);
}

static void check_all_masks(const ck_array *a, const char *what)
{
    uint64_t full = (1ull << a->ndim) - 1;
    for (uint64_t mask = 0; mask <= full; mask++) {
        double tol = a->dtype == CK_FLOAT32 ? 1e-5 : a->dtype == CK_FLOAT16 ? 2e-3 : 1e-12;
        for (int op = 0; op < CK_REDUCE_COUNT; op++) {
            int pc = __builtin_popcountll(mask);
            if ((op == CK_REDUCE_ARGMIN || op == CK_REDUCE_ARGMAX) && pc != 1 && mask != full) continue;
            if (op == CK_REDUCE_PROD && a->dtype != CK_FLOAT64) continue;
            double rel = op == CK_REDUCE_SUM || op == CK_REDUCE_PROD ? tol : 0;
            check_reduce((ck_reduce_op)op, a, mask, (int)(mask & 1), rel, what);
        }
    }
}

static void test_layouts(void)
{
    int64_t shape[3] = {6, 7, 9};
    ck_array a = make(3, shape, CK_FLOAT64, 0);
    check_all_masks(&a, "contiguous");

    /* strided and reversed */
    int64_t st[3] = {1, 0, 8}, step[3] = {2, 1, -2}, sh[3] = {3, 7, 5};
    ck_array v = slice(&a, st, step, sh);
    check_all_masks(&v, "strided/negative");

    /* transposed (F order) */
    ck_array t;
    OK(ck_array_transpose(&t, &a, NULL));
    check_all_masks(&t, "transposed");

    /* broadcast (zero strides) */
    int64_t bsh[3] = {4, 7, 9};
    ck_array row = slice(&a, (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1}, (int64_t[]){1, 7, 9});
    ck_array b;
    OK(ck_array_broadcast_to(&b, &row, 3, bsh));
    check_all_masks(&b, "broadcast");

    /* integers and bool */
    ck_array i = make(3, shape, CK_INT32, 1);
    check_all_masks(&i, "int32");
    ck_array bo = make(3, shape, CK_BOOL, 2);
    check_all_masks(&bo, "bool");
    ck_array f = make(3, shape, CK_FLOAT32, 0);
    check_all_masks(&f, "float32");
    ck_array h = make(3, shape, CK_FLOAT16, 0);
    check_all_masks(&h, "float16");
    ck_array i8 = make(3, shape, CK_INT8, 1);
    check_all_masks(&i8, "int8");
    ck_array_release(&h);
    ck_array_release(&i8);

    ck_array_release(&a); ck_array_release(&v); ck_array_release(&t); ck_array_release(&row);
    ck_array_release(&b); ck_array_release(&i); ck_array_release(&bo); ck_array_release(&f);
}

/* Large enough for the row driver's blocks, the parallel leaves and the
 * grouped multi-row folds. */
static void test_large(void)
{
    int64_t shape[2] = {300, 5000};
    ck_array a = make(2, shape, CK_FLOAT64, 0);
    for (int op = 0; op < CK_REDUCE_COUNT; op++) {
        if (op == CK_REDUCE_PROD) continue;
        double rel = op == CK_REDUCE_SUM ? 1e-12 : 0;
        check_reduce((ck_reduce_op)op, &a, 1, 0, rel, "large axis 0");
        check_reduce((ck_reduce_op)op, &a, 2, 0, rel, "large axis 1");
        if (op != CK_REDUCE_ARGMIN && op != CK_REDUCE_ARGMAX) check_reduce((ck_reduce_op)op, &a, 3, 0, rel, "large all");
    }
    check_reduce(CK_REDUCE_ARGMAX, &a, 3, 0, 0, "large argmax all");
    /* not mergeable: rows of 4999 (grouped folds) */
    ck_array v = slice(&a, (int64_t[]){0, 1}, (int64_t[]){1, 1}, (int64_t[]){300, 4999});
    check_reduce(CK_REDUCE_SUM, &v, 3, 0, 1e-12, "grouped all");
    check_reduce(CK_REDUCE_MAX, &v, 3, 0, 0, "grouped all");
    check_reduce(CK_REDUCE_ARGMIN, &v, 3, 0, 0, "grouped all");
    check_reduce(CK_REDUCE_SUM, &v, 1, 0, 1e-12, "strided axis 0");
    /* transposed: argmin over the flattened C order of a non-contiguous view */
    ck_array t;
    OK(ck_array_transpose(&t, &a, NULL));
    check_reduce(CK_REDUCE_ARGMIN, &t, 3, 0, 0, "transposed argmin all");
    check_reduce(CK_REDUCE_ARGMAX, &t, 1, 0, 0, "transposed argmax axis 0");
    check_reduce(CK_REDUCE_SUM, &t, 1, 1, 1e-12, "transposed sum axis 0");
    /* few long rows: each split into parallel leaves */
    int64_t sh2[2] = {3, 300001};
    ck_array w = make(2, sh2, CK_FLOAT64, 0);
    check_reduce(CK_REDUCE_SUM, &w, 2, 0, 1e-12, "long rows");
    check_reduce(CK_REDUCE_ARGMAX, &w, 2, 0, 0, "long rows");
    check_reduce(CK_REDUCE_MIN, &w, 2, 0, 0, "long rows");
    /* many tiny reductions */
    int64_t sh3[2] = {200001, 3};
    ck_array z = make(2, sh3, CK_INT32, 1);
    check_reduce(CK_REDUCE_SUM, &z, 2, 0, 0, "tiny rows");
    check_reduce(CK_REDUCE_ARGMIN, &z, 2, 0, 0, "tiny rows");
    check_reduce(CK_REDUCE_MAX, &z, 1, 0, 0, "tiny rows axis 0");
    /* float16 over parallel leaves (widened block by block) */
    int64_t nh = 1 << 18;
    ck_array h;
    OK(ck_array_empty(&h, 1, &nh, CK_FLOAT16, ck_device_cpu()));
    for (int64_t i = 0; i < nh; i++) ((_Float16 *)h.data)[i] = (_Float16)((rnd() + 1) / 8);
    check_reduce(CK_REDUCE_SUM, &h, 1, 0, 1e-3, "float16 long");
    check_reduce(CK_REDUCE_MAX, &h, 1, 0, 0, "float16 long");
    check_reduce(CK_REDUCE_ARGMIN, &h, 1, 0, 0, "float16 long");
    /* a NaN late in a long float32 run, across leaves */
    int64_t nf = 1000003;
    ck_array f = make(1, &nf, CK_FLOAT32, 0);
    ((float *)f.data)[700001] = NAN;
    ((float *)f.data)[900001] = NAN;
    check_reduce(CK_REDUCE_ARGMAX, &f, 1, 0, 0, "float32 NaN long");
    check_reduce(CK_REDUCE_MIN, &f, 1, 0, 0, "float32 NaN long");
    check_reduce(CK_REDUCE_ANY, &f, 1, 0, 0, "float32 NaN long");
    check_reduce(CK_REDUCE_COUNT_NONZERO, &f, 1, 0, 0, "float32 NaN long");
    ck_array_release(&a); ck_array_release(&v); ck_array_release(&t);
    ck_array_release(&w); ck_array_release(&z); ck_array_release(&h); ck_array_release(&f);
}

static void test_pairwise_and_threads(void)
{
    int64_t n = 10000000;
    ck_array a, r1, r2;
    OK(ck_full_scalar(&a, 1, &n, CK_FLOAT32, 0.1, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r1, 0));
    double exact = (double)n * (double)0.1f;
    double got = *(float *)r1.data;
    CHECK(fabs(got - exact) / exact < 1e-6, "float32 sum of 1e7 x 0.1f = %.9g, exact %.9g (rel %.3g)",
          got, exact, fabs(got - exact) / exact);
    /* the thread count never changes the bits */
    int nt = ck_cpu_num_threads();
    for (int64_t i = 0; i < n; i++) ((float *)a.data)[i] = (float)rnd();
    ck_array_release(&r1);
    ck_cpu_set_num_threads(1);
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r1, 0));
    ck_cpu_set_num_threads(nt > 1 ? nt : 2);
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r2, 0));
    ck_cpu_set_num_threads(nt);
    CHECK(memcmp(r1.data, r2.data, 4) == 0, "sum differs with the thread count: %.9g vs %.9g",
          *(float *)r1.data, *(float *)r2.data);
    /* strided: the same blocks as the contiguous copy */
    ck_array v = slice(&a, (int64_t[]){0}, (int64_t[]){2}, (int64_t[]){n / 2}), c, r3, r4;
    OK(ck_array_astype(&c, &v, CK_FLOAT32, 0));
    OK(ck_reduce(CK_REDUCE_SUM, &v, 1, 0, CK_DTYPE_INVALID, &r3, 0));
    OK(ck_reduce(CK_REDUCE_SUM, &c, 1, 0, CK_DTYPE_INVALID, &r4, 0));
    CHECK(memcmp(r3.data, r4.data, 4) == 0, "strided sum %.9g != contiguous %.9g", *(float *)r3.data, *(float *)r4.data);
    ck_array_release(&a); ck_array_release(&r1); ck_array_release(&r2);
    ck_array_release(&v); ck_array_release(&c); ck_array_release(&r3); ck_array_release(&r4);
}

static void test_rules(void)
{
    /* default dtypes */
    CHECK(ck_reduce_default_dtype(CK_REDUCE_SUM, CK_INT8) == CK_INT64, "sum int8 -> int64");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_SUM, CK_UINT16) == CK_UINT64, "sum uint16 -> uint64");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_PROD, CK_BOOL) == CK_INT64, "prod bool -> int64");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_SUM, CK_FLOAT16) == CK_FLOAT16, "sum float16 stays");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_MAX, CK_INT8) == CK_INT8, "max keeps");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_ANY, CK_FLOAT32) == CK_BOOL, "any -> bool");
    CHECK(ck_reduce_default_dtype(CK_REDUCE_ARGMIN, CK_FLOAT32) == CK_INT64, "argmin -> int64");

    /* int8: upcast by default, wraps when asked for int8 */
    int64_t n = 3;
    ck_array a, r;
    OK(ck_full_scalar(&a, 1, &n, CK_INT8, 100, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.dtype == CK_INT64 && *(int64_t *)r.data == 300, "int8 sum");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_INT8, &r, 0));
    CHECK(r.dtype == CK_INT8 && *(int8_t *)r.data == 44, "int8 sum wraps: %d", *(int8_t *)r.data);
    ck_array_release(&r);
    /* out of another dtype, and NumPy's loop choice with out */
    ck_array o;
    int64_t zero = 0;
    OK(ck_array_empty(&o, 0, &zero, CK_INT16, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &o, 1));
    CHECK(*(int16_t *)o.data == 300, "sum into int16 out: %d", *(int16_t *)o.data);
    ck_array_release(&o);
    ck_array_release(&a);

    /* NaN propagation and the first NaN for argmin / argmax */
    n = 1000;
    OK(ck_arange(&a, 0, 1, n, CK_FLOAT64, ck_device_cpu()));
    ((double *)a.data)[700] = NAN;
    ((double *)a.data)[900] = NAN;
    OK(ck_reduce(CK_REDUCE_MAX, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(isnan(*(double *)r.data), "max propagates NaN");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_MIN, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(isnan(*(double *)r.data), "min propagates NaN");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_ARGMIN, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(*(int64_t *)r.data == 700, "argmin finds the first NaN: %lld", (long long)*(int64_t *)r.data);
    ck_array_release(&r);
    ((double *)a.data)[700] = ((double *)a.data)[900] = 5;
    OK(ck_reduce(CK_REDUCE_ARGMAX, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(*(int64_t *)r.data == 999, "argmax");
    ck_array_release(&r);
    ((double *)a.data)[10] = 999;   /* ties: the first wins */
    OK(ck_reduce(CK_REDUCE_ARGMAX, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(*(int64_t *)r.data == 10, "argmax first of ties: %lld", (long long)*(int64_t *)r.data);
    ck_array_release(&r);
    ck_array_release(&a);

    /* empty reductions */
    int64_t esh[2] = {0, 3};
    OK(ck_array_empty(&a, 2, esh, CK_FLOAT32, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.size == 3 && ((float *)r.data)[2] == 0 && !signbit(((float *)r.data)[2]), "empty sum is +0");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_PROD, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(((float *)r.data)[0] == 1, "empty prod is 1");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_ALL, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.dtype == CK_BOOL && ((uint8_t *)r.data)[1] == 1, "empty all is true");
    ck_array_release(&r);
    CHECK(ck_reduce(CK_REDUCE_MIN, &a, 1, 0, CK_DTYPE_INVALID, &r, 0) == CK_ERR_VALUE &&
          strcmp(ck_error_message(), "zero-size array to reduction operation minimum which has no identity") == 0,
          "empty min: %s", ck_error_message());
    CHECK(ck_reduce(CK_REDUCE_ARGMAX, &a, 1, 0, CK_DTYPE_INVALID, &r, 0) == CK_ERR_VALUE &&
          strcmp(ck_error_message(), "attempt to get argmax of an empty sequence") == 0,
          "empty argmax: %s", ck_error_message());
    OK(ck_reduce(CK_REDUCE_MIN, &a, 2, 0, CK_DTYPE_INVALID, &r, 0));   /* nothing to reduce into */
    CHECK(r.size == 0, "min over a non-empty axis of an empty array");
    ck_array_release(&r);
    ck_array_release(&a);

    /* 0-d input: nothing to reduce, argmax is 0 */
    ck_array s0;
    ck_scalar sv = {CK_FLOAT64, {.f = 2.5}};
    OK(ck_full(&s0, 0, NULL, CK_FLOAT32, &sv, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &s0, 0, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.ndim == 0 && *(float *)r.data == 2.5f, "0-d sum");
    ck_array_release(&r);
    OK(ck_reduce(CK_REDUCE_ARGMAX, &s0, 0, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.ndim == 0 && *(int64_t *)r.data == 0, "0-d argmax");
    ck_array_release(&r);
    ck_array_release(&s0);
    /* argmin over two of three axes is refused; a bad axis bit too */
    int64_t sh3[3] = {2, 3, 4};
    OK(ck_full_scalar(&a, 3, sh3, CK_FLOAT64, 1, ck_device_cpu()));
    CHECK(ck_reduce(CK_REDUCE_ARGMIN, &a, 3, 0, CK_DTYPE_INVALID, &r, 0) == CK_ERR_VALUE, "argmin over 2 of 3 axes");
    CHECK(ck_reduce(CK_REDUCE_SUM, &a, 8, 0, CK_DTYPE_INVALID, &r, 0) == CK_ERR_AXIS, "axis out of range");
    OK(ck_reduce(CK_REDUCE_ARGMIN, &a, 7, 1, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.ndim == 3 && r.size == 1, "argmin over all with keepdims");
    ck_array_release(&r);
    ck_array_release(&a);

    /* float16 and complex */
    n = 5000;
    OK(ck_full_scalar(&a, 1, &n, CK_FLOAT16, 0.5, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.dtype == CK_FLOAT16 && (double)*(_Float16 *)r.data == 2500, "float16 sum: %g", (double)*(_Float16 *)r.data);
    ck_array_release(&r);
    ck_array_release(&a);
    ck_scalar cv = {CK_COMPLEX128, {.c = {1.5, -2}}};
    OK(ck_full(&a, 1, &n, CK_COMPLEX64, &cv, ck_device_cpu()));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    float _Complex z = *(float _Complex *)r.data;
    CHECK(__real__ z == 7500 && __imag__ z == -10000, "complex sum: %g%+gj", __real__ z, __imag__ z);
    ck_array_release(&r);
    ((float _Complex *)a.data)[3] = __builtin_complex(1.5f, -3.0f);
    OK(ck_reduce(CK_REDUCE_ARGMIN, &a, 1, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(*(int64_t *)r.data == 3, "complex argmin is lexicographic");
    ck_array_release(&r);
    ck_array_release(&a);
}

static void test_scan(void)
{
    int64_t shape[2] = {37, 53};
    ck_array a = make(2, shape, CK_FLOAT64, 0);
    ck_array views[3];
    ck_array_view(&views[0], &a);
    OK(ck_array_transpose(&views[1], &a, NULL));
    views[2] = slice(&a, (int64_t[]){36, 1}, (int64_t[]){-2, 3}, (int64_t[]){19, 17});
    for (int vi = 0; vi < 3; vi++) {
        const ck_array *v = &views[vi];
        for (int axis = 0; axis < 2; axis++) {
            for (int op = 0; op < 2; op++) {
                ck_array r;
                OK(ck_scan(op ? CK_REDUCE_PROD : CK_REDUCE_SUM, v, axis, CK_DTYPE_INVALID, &r, 0));
                int bad = 0;
                for (int64_t i = 0; i < v->shape[0] && !bad; i++) {
                    for (int64_t j = 0; j < v->shape[1] && !bad; j++) {
                        double acc = op ? 1 : 0;
                        int64_t len = axis ? j : i;
                        for (int64_t q = 0; q <= len; q++) {
                            int64_t ii = axis ? i : q, jj = axis ? q : j;
                            double x = get(v, v->data + ii * v->strides[0] + jj * v->strides[1]);
                            acc = op ? acc * x : acc + x;
                        }
                        double got = *(double *)(r.data + i * r.strides[0] + j * r.strides[1]);
                        if (fabs(got - acc) > 1e-12 * (fabs(acc) + 1)) {
                            bad = 1;
                            CHECK(0, "scan %d view %d axis %d at (%lld, %lld): %.17g vs %.17g", op, vi, axis,
                                  (long long)i, (long long)j, got, acc);
                        }
                    }
                }
                ck_array_release(&r);
            }
        }
    }
    /* cumsum of int8 is int64 by default; in place */
    int64_t n = 300;
    ck_array b, r;
    OK(ck_full_scalar(&b, 1, &n, CK_INT8, 1, ck_device_cpu()));
    OK(ck_scan(CK_REDUCE_SUM, &b, 0, CK_DTYPE_INVALID, &r, 0));
    CHECK(r.dtype == CK_INT64 && ((int64_t *)r.data)[299] == 300, "cumsum int8");
    ck_array_release(&r);
    ck_array f;
    OK(ck_arange(&f, 1, 1, 10, CK_FLOAT64, ck_device_cpu()));
    OK(ck_scan(CK_REDUCE_SUM, &f, 0, CK_DTYPE_INVALID, &f, 1));
    CHECK(((double *)f.data)[9] == 55, "in-place cumsum");
    /* large: the row form over threads */
    int64_t sh2[2] = {400, 3000};
    ck_array g = make(2, sh2, CK_INT32, 1);
    OK(ck_scan(CK_REDUCE_SUM, &g, 0, CK_DTYPE_INVALID, &r, 0));
    int64_t acc = 0;
    for (int64_t i = 0; i < 400; i++) acc += ((int32_t *)g.data)[i * 3000 + 2999];
    CHECK(((int64_t *)r.data)[399 * 3000 + 2999] == acc, "large cumsum axis 0");
    ck_array_release(&r);
    for (int i = 0; i < 3; i++) ck_array_release(&views[i]);
    ck_array_release(&a); ck_array_release(&b); ck_array_release(&f); ck_array_release(&g);
}

static void test_mean_var(void)
{
    int64_t shape[2] = {40, 30};
    ck_array a = make(2, shape, CK_FLOAT64, 0), m, v, sd;
    OK(ck_mean(&a, 1, 0, CK_DTYPE_INVALID, &m));
    OK(ck_var(&a, 1, 0, 1, CK_DTYPE_INVALID, 0, &v));
    OK(ck_var(&a, 1, 1, 0, CK_DTYPE_INVALID, 1, &sd));
    CHECK(m.ndim == 1 && v.ndim == 1 && sd.ndim == 2, "mean/var shapes");
    for (int j = 0; j < 30; j++) {
        double s = 0, q = 0;
        for (int i = 0; i < 40; i++) s += ((double *)a.data)[i * 30 + j];
        double mu = s / 40;
        for (int i = 0; i < 40; i++) q += (((double *)a.data)[i * 30 + j] - mu) * (((double *)a.data)[i * 30 + j] - mu);
        CHECK(fabs(((double *)m.data)[j] - mu) < 1e-14, "mean[%d]", j);
        CHECK(fabs(((double *)v.data)[j] - q / 39) < 1e-14, "var ddof=1 [%d]", j);
        CHECK(fabs(((double *)sd.data)[j] - sqrt(q / 40)) < 1e-14, "std [%d]", j);
    }
    ck_array_release(&m); ck_array_release(&v); ck_array_release(&sd);
    /* integers: float64; float16: float16 */
    ck_array i8, h;
    int64_t n = 4;
    OK(ck_arange(&i8, 1, 1, n, CK_INT8, ck_device_cpu()));
    OK(ck_mean(&i8, 1, 0, CK_DTYPE_INVALID, &m));
    CHECK(m.dtype == CK_FLOAT64 && *(double *)m.data == 2.5, "mean of int8");
    OK(ck_var(&i8, 1, 0, 0, CK_DTYPE_INVALID, 0, &v));
    CHECK(v.dtype == CK_FLOAT64 && *(double *)v.data == 1.25, "var of int8");
    ck_array_release(&m); ck_array_release(&v);
    OK(ck_arange(&h, 1, 1, n, CK_FLOAT16, ck_device_cpu()));
    OK(ck_mean(&h, 1, 0, CK_DTYPE_INVALID, &m));
    CHECK(m.dtype == CK_FLOAT16 && (double)*(_Float16 *)m.data == 2.5, "mean of float16");
    ck_array_release(&m);
    /* complex var is real */
    ck_scalar cv = {CK_COMPLEX128, {.c = {1, 1}}};
    ck_array c;
    OK(ck_full(&c, 1, &n, CK_COMPLEX64, &cv, ck_device_cpu()));
    ((float _Complex *)c.data)[0] = __builtin_complex(3.0f, -1.0f);
    OK(ck_var(&c, 1, 0, 0, CK_DTYPE_INVALID, 0, &v));
    CHECK(v.dtype == CK_FLOAT32 && fabs(*(float *)v.data - 1.5) < 1e-6, "complex var: %g", *(float *)v.data);
    ck_array_release(&v);
    /* ddof >= N: inf (or nan) */
    OK(ck_var(&i8, 1, 0, 4, CK_DTYPE_INVALID, 0, &v));
    CHECK(isinf(*(double *)v.data), "var with ddof = N");
    ck_array_release(&v);
    ck_array_release(&a); ck_array_release(&i8); ck_array_release(&h); ck_array_release(&c);
}

int main(void)
{
    test_layouts();
    test_large();
    test_pairwise_and_threads();
    test_rules();
    test_scan();
    test_mean_var();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce: all passed\n");
    return 0;
}
