/* The four headers included at the bottom of cudakit.h, from C on CPU
 * arrays, against straightforward reference loops: shape functions
 * (concatenate / stack, flip, roll, pad, tile / repeat, diagonal, tril /
 * triu, squeeze / expand_dims / moveaxis), indexing (take in every mode,
 * put and advanced assignment with repeated indices, nonzero on strided and
 * empty inputs, out-of-range errors; argwhere, flatnonzero, extract,
 * compress, ix_, (un)ravel_index, tri_indices, select and choose against
 * loops, with NumPy's messages), sorting (NaN and -0.0, stability,
 * descending, searchsorted) and Philox random numbers (Random123's known
 * answers, the fill layout, determinism, thread-count independence). */
#include "cudakit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_test.h"

#define CPU ck_device_cpu()
#define REL(...) do { ck_array *rl_[] = {__VA_ARGS__}; \
    for (size_t i_ = 0; i_ < sizeof rl_ / sizeof *rl_; i_++) ck_array_release(rl_[i_]); } while (0)

/* ------------------------------------------------------------- helpers */

static double rd(ck_dtype t, const char *p)
{
    switch (t) {
    case CK_BOOL: return *(const uint8_t *)p;
    case CK_INT8: return *(const int8_t *)p;
    case CK_INT32: return *(const int32_t *)p;
    case CK_UINT32: return *(const uint32_t *)p;
    case CK_INT64: return (double)*(const int64_t *)p;
    case CK_UINT64: return (double)*(const uint64_t *)p;
    case CK_FLOAT32: return *(const float *)p;
    case CK_FLOAT64: return *(const double *)p;
    default: return NAN;
    }
}

static void wr(ck_dtype t, char *p, double v)
{
    switch (t) {
    case CK_BOOL: *(uint8_t *)p = v != 0; break;
    case CK_INT8: *(int8_t *)p = (int8_t)v; break;
    case CK_INT32: *(int32_t *)p = (int32_t)v; break;
    case CK_INT64: *(int64_t *)p = (int64_t)v; break;
    case CK_FLOAT32: *(float *)p = (float)v; break;
    case CK_FLOAT64: *(double *)p = v; break;
    default: break;
    }
}

/* Address of element k (C order) of a possibly strided array. */
static const char *ptr_at(const ck_array *a, int64_t k)
{
    const char *p = a->data;
    for (int d = a->ndim - 1; d >= 0; d--) {
        int64_t i = k % a->shape[d];
        k /= a->shape[d];
        p += i * a->strides[d];
    }
    return p;
}
static double at(const ck_array *a, int64_t k) { return rd(a->dtype, ptr_at(a, k)); }

/* A new C-contiguous array holding vals (C order); vals NULL: 0, 1, 2, ... */
static ck_array mk(int ndim, const int64_t *shape, ck_dtype dt, const double *vals)
{
    ck_array a;
    OK(ck_array_empty(&a, ndim, shape, dt, CPU));
    for (int64_t k = 0; k < a.size; k++) wr(dt, a.data + k * ck_array_itemsize(&a), vals ? vals[k] : (double)k);
    return a;
}

static int shape_is(const ck_array *a, int ndim, const int64_t *shape)
{
    if (a->ndim != ndim) return 0;
    for (int d = 0; d < ndim; d++)
        if (a->shape[d] != shape[d]) return 0;
    return 1;
}

/* Element-by-element comparison with an expected C-order vector. */
static void expect_vals(const ck_array *a, const double *want, int64_t n, const char *what)
{
    if (a->size != n) {
        CHECK(0, "%s: size %lld, want %lld", what, (long long)a->size, (long long)n);
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        double g = at(a, k);
        if (!(g == want[k] || (isnan(g) && isnan(want[k])))) {
            CHECK(0, "%s: [%lld] = %g, want %g", what, (long long)k, g, want[k]);
            return;
        }
    }
}

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

static int64_t pmod(int64_t a, int64_t n) { int64_t r = a % n; return r < 0 ? r + n : r; }

/* --------------------------------------------------------------- shape */

static void test_join(void)
{
    int64_t s23[2] = {2, 3}, s13[2] = {1, 3}, s22[2] = {2, 2}, s21[2] = {2, 1};
    ck_array a = mk(2, s23, CK_FLOAT64, NULL), b = mk(2, s13, CK_FLOAT64, (double[]){10, 11, 12}), r;
    const ck_array *ab[2] = {&a, &b};
    OK(ck_concatenate(&r, 2, ab, 0, CK_DTYPE_INVALID));
    CHECK(shape_is(&r, 2, (int64_t[]){3, 3}) && r.dtype == CK_FLOAT64, "concatenate axis 0 shape");
    expect_vals(&r, (double[]){0, 1, 2, 3, 4, 5, 10, 11, 12}, 9, "concatenate axis 0");
    ck_array_release(&r);
    OK(ck_concatenate(&r, 2, ab, CK_AXIS_FLAT, CK_DTYPE_INVALID));
    CHECK(shape_is(&r, 1, (int64_t[]){9}), "concatenate flat shape");
    expect_vals(&r, (double[]){0, 1, 2, 3, 4, 5, 10, 11, 12}, 9, "concatenate flat");
    ck_array_release(&r);
    /* mismatched shapes along the other axis */
    CHECK(ck_concatenate(&r, 2, ab, 1, CK_DTYPE_INVALID) != CK_OK, "concatenate (2,3)+(1,3) on axis 1 must fail");

    /* promotion int32 + float32 -> float64, negative axis */
    ck_array c = mk(2, s22, CK_INT32, (double[]){1, 2, 3, 4}), d = mk(2, s21, CK_FLOAT32, (double[]){0.5, -0.5});
    const ck_array *cd[2] = {&c, &d};
    OK(ck_concatenate(&r, 2, cd, -1, CK_DTYPE_INVALID));
    CHECK(r.dtype == CK_FLOAT64 && shape_is(&r, 2, (int64_t[]){2, 3}), "concatenate promotes to float64");
    expect_vals(&r, (double[]){1, 2, 0.5, 3, 4, -0.5}, 6, "concatenate axis -1");
    ck_array_release(&r);

    /* stack: new axis at 0, 1 and -1 against a reference loop */
    ck_array e = mk(2, s23, CK_FLOAT64, (double[]){10, 11, 12, 13, 14, 15});
    const ck_array *ae[2] = {&a, &e};
    for (int axis = 0; axis < 3; axis++) {
        OK(ck_stack(&r, 2, ae, axis == 2 ? -1 : axis, CK_DTYPE_INVALID));
        int64_t want_shape[3];
        for (int q = 0, src = 0; q < 3; q++) want_shape[q] = q == axis ? 2 : s23[src++];
        CHECK(shape_is(&r, 3, want_shape), "stack axis %d shape", axis);
        double want[12];
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 3; j++) {
                    int64_t idx[3];
                    idx[axis] = k;
                    for (int q = 0, m = 0; q < 3; q++)
                        if (q != axis) idx[q] = m++ == 0 ? i : j;
                    want[(idx[0] * want_shape[1] + idx[1]) * want_shape[2] + idx[2]] = at(ae[k], i * 3 + j);
                }
        expect_vals(&r, want, 12, "stack");
        ck_array_release(&r);
    }
    const ck_array *abad[2] = {&a, &b};
    CHECK(ck_stack(&r, 2, abad, 0, CK_DTYPE_INVALID) != CK_OK, "stack of different shapes must fail");
    REL(&a, &b, &c, &d, &e);
}

static void test_flip_roll(void)
{
    int64_t s34[2] = {3, 4};
    ck_array a = mk(2, s34, CK_FLOAT64, NULL), r;
    for (uint64_t mask = 0; mask < 4; mask++) {
        OK(ck_array_flip(&r, &a, mask));
        CHECK(r.buf == a.buf, "flip is a view");
        double want[12];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                want[i * 4 + j] = at(&a, ((mask & 1) ? 2 - i : i) * 4 + ((mask & 2) ? 3 - j : j));
        expect_vals(&r, want, 12, "flip");
        ck_array_release(&r);
    }
    /* 1-d rolls, positive, negative and larger than the length */
    int64_t n = 7;
    ck_array v = mk(1, &n, CK_INT32, NULL);
    int64_t shifts[] = {3, -10, 0, 15};
    for (int t = 0; t < 4; t++) {
        int ax = 0;
        OK(ck_roll(&r, &v, 1, &shifts[t], &ax));
        double want[7];
        for (int64_t i = 0; i < n; i++) want[i] = (double)pmod(i - shifts[t], n);
        expect_vals(&r, want, n, "roll 1-d");
        ck_array_release(&r);
    }
    /* 2-d on both axes; repeated axes add up */
    int64_t sh2[2] = {1, -1};
    OK(ck_roll(&r, &a, 2, sh2, (int[]){0, 1}));
    double want[12];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) want[i * 4 + j] = at(&a, pmod(i - 1, 3) * 4 + pmod(j + 1, 4));
    expect_vals(&r, want, 12, "roll 2-d");
    ck_array_release(&r);
    OK(ck_roll(&r, &a, 2, (int64_t[]){2, 3}, (int[]){1, -1}));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) want[i * 4 + j] = at(&a, i * 4 + pmod(j - 5, 4));
    expect_vals(&r, want, 12, "roll with a repeated axis");
    ck_array_release(&r);
    /* flattened roll of a transposed view */
    ck_array t;
    OK(ck_array_transpose(&t, &a, NULL));
    int64_t s5 = 5;
    OK(ck_roll(&r, &t, 1, &s5, NULL));
    CHECK(shape_is(&r, 2, (int64_t[]){4, 3}), "flat roll keeps the shape");
    for (int64_t k = 0; k < 12; k++) want[k] = at(&t, pmod(k - 5, 12));
    expect_vals(&r, want, 12, "roll flat of a transposed view");
    ck_array_release(&r);
    REL(&a, &v, &t);
}

static void test_pad(void)
{
    int64_t n = 3;
    ck_array a = mk(1, &n, CK_FLOAT64, (double[]){1, 2, 3}), r;
    /* NumPy 2.4's np.pad([1., 2., 3.], (2, 3) and (5, 4), mode) */
    static const struct { ck_pad_mode mode; double small[8]; double big[12]; } cases[] = {
        {CK_PAD_EDGE, {1, 1, 1, 2, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3}},
        {CK_PAD_REFLECT, {3, 2, 1, 2, 3, 2, 1, 2}, {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}},
        {CK_PAD_SYMMETRIC, {2, 1, 1, 2, 3, 3, 2, 1}, {2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1}},
        {CK_PAD_WRAP, {2, 3, 1, 2, 3, 1, 2, 3}, {2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1}},
    };
    static const char *names[] = {"edge", "reflect", "symmetric", "wrap"};
    for (int c = 0; c < 4; c++) {
        char what[64];
        OK(ck_pad(&r, &a, (int64_t[]){2, 3}, cases[c].mode, NULL));
        snprintf(what, sizeof what, "pad %s (2, 3)", names[c]);
        expect_vals(&r, cases[c].small, 8, what);
        ck_array_release(&r);
        OK(ck_pad(&r, &a, (int64_t[]){5, 4}, cases[c].mode, NULL));
        snprintf(what, sizeof what, "pad %s (5, 4)", names[c]);
        expect_vals(&r, cases[c].big, 12, what);
        ck_array_release(&r);
    }
    /* constant (default zero and a value) on a 2-d int32 array */
    int64_t s23[2] = {2, 3};
    ck_array m = mk(2, s23, CK_INT32, (double[]){1, 2, 3, 4, 5, 6});
    ck_scalar seven = {CK_INT64, {.i = 7}};
    int64_t w[4] = {1, 0, 2, 1};
    for (int use_value = 0; use_value < 2; use_value++) {
        OK(ck_pad(&r, &m, w, CK_PAD_CONSTANT, use_value ? &seven : NULL));
        CHECK(r.dtype == CK_INT32 && shape_is(&r, 2, (int64_t[]){3, 6}), "pad constant shape / dtype");
        double want[18];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++) {
                int si = i - 1, sj = j - 2;
                want[i * 6 + j] = (si >= 0 && si < 2 && sj >= 0 && sj < 3) ? at(&m, si * 3 + sj) : (use_value ? 7 : 0);
            }
        expect_vals(&r, want, 18, "pad constant 2-d");
        ck_array_release(&r);
    }
    REL(&a, &m);
}

static void test_tile_repeat_resize(void)
{
    int64_t s22[2] = {2, 2};
    ck_array a = mk(2, s22, CK_INT64, (double[]){1, 2, 3, 4}), r;
    OK(ck_tile(&r, &a, 3, (int64_t[]){2, 1, 3}));
    CHECK(shape_is(&r, 3, (int64_t[]){2, 2, 6}), "tile shape");
    double want[24];
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 6; j++) want[(q * 2 + i) * 6 + j] = at(&a, i * 2 + j % 2);
    expect_vals(&r, want, 24, "tile");
    ck_array_release(&r);
    OK(ck_tile(&r, &a, 1, (int64_t[]){2}));
    CHECK(shape_is(&r, 2, (int64_t[]){2, 4}), "tile with fewer reps");
    expect_vals(&r, (double[]){1, 2, 1, 2, 3, 4, 3, 4}, 8, "tile (2,)");
    ck_array_release(&r);

    int64_t n = 3;
    ck_array v = mk(1, &n, CK_FLOAT32, (double[]){1, 2, 3});
    OK(ck_repeat(&r, &v, 3, (int64_t[]){1, 0, 2}, 0));
    expect_vals(&r, (double[]){1, 3, 3}, 3, "repeat per element");
    ck_array_release(&r);
    OK(ck_repeat(&r, &a, 1, (int64_t[]){2}, 0));
    CHECK(shape_is(&r, 2, (int64_t[]){4, 2}), "repeat axis 0 shape");
    expect_vals(&r, (double[]){1, 2, 1, 2, 3, 4, 3, 4}, 8, "repeat axis 0");
    ck_array_release(&r);
    OK(ck_repeat(&r, &a, 2, (int64_t[]){0, 3}, 1));
    expect_vals(&r, (double[]){2, 2, 2, 4, 4, 4}, 6, "repeat axis 1 per column");
    ck_array_release(&r);
    OK(ck_repeat(&r, &a, 1, (int64_t[]){2}, CK_AXIS_FLAT));
    CHECK(shape_is(&r, 1, (int64_t[]){8}), "repeat flat shape");
    expect_vals(&r, (double[]){1, 1, 2, 2, 3, 3, 4, 4}, 8, "repeat flat");
    ck_array_release(&r);
    CHECK(ck_repeat(&r, &v, 2, (int64_t[]){1, 1}, 0) != CK_OK, "repeat with a wrong count must fail");

    OK(ck_resize(&r, &v, 2, (int64_t[]){2, 4}));
    expect_vals(&r, (double[]){1, 2, 3, 1, 2, 3, 1, 2}, 8, "resize");
    ck_array_release(&r);
    REL(&a, &v);
}

static void test_diag_tri(void)
{
    int64_t s34[2] = {3, 4};
    ck_array a = mk(2, s34, CK_FLOAT64, NULL), r;
    for (int64_t off = -3; off <= 4; off++) {
        OK(ck_array_diagonal(&r, &a, off, 0, 1));
        double want[4];
        int64_t cnt = 0;
        for (int64_t i = 0; i < 3; i++)
            if (i + off >= 0 && i + off < 4) want[cnt++] = at(&a, i * 4 + i + off);
        CHECK(r.ndim == 1 && !(r.flags & CK_ARRAY_WRITEABLE), "diagonal is a read-only 1-d view (offset %lld)",
              (long long)off);
        expect_vals(&r, want, cnt, "diagonal");
        ck_array_release(&r);
    }
    /* axes (1, 2) of a 3-d array, and the swapped order */
    int64_t s233[3] = {2, 3, 3};
    ck_array b = mk(3, s233, CK_INT32, NULL);
    OK(ck_array_diagonal(&r, &b, 1, 2, 1));   /* b[k, i + 1, i] */
    CHECK(shape_is(&r, 2, (int64_t[]){2, 2}), "diagonal 3-d shape");
    double w4[4];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++) w4[k * 2 + i] = at(&b, k * 9 + (i + 1) * 3 + i);
    expect_vals(&r, w4, 4, "diagonal axes (2, 1)");
    ck_array_release(&r);
    CHECK(ck_array_diagonal(&r, &b, 0, 1, 1) != CK_OK, "diagonal with axis1 == axis2 must fail");

    int64_t two = 2;
    ck_array v = mk(1, &two, CK_FLOAT64, (double[]){5, 6});
    OK(ck_diag(&r, &v, 1));
    expect_vals(&r, (double[]){0, 5, 0, 0, 0, 6, 0, 0, 0}, 9, "diag of 1-d, k = 1");
    ck_array_release(&r);
    OK(ck_trace(&r, &a, 1, 0, 1, CK_DTYPE_INVALID));
    CHECK(r.ndim == 0 && at(&r, 0) == 1 + 6 + 11, "trace offset 1: %g", at(&r, 0));
    ck_array_release(&r);

    /* tril / triu over k, including a batch */
    for (int upper = 0; upper < 2; upper++)
        for (int64_t k = -2; k <= 2; k++) {
            OK(ck_tri_part(&r, &a, k, upper));
            double want[12];
            for (int64_t i = 0; i < 3; i++)
                for (int64_t j = 0; j < 4; j++) {
                    int keep = upper ? (j - i >= k) : (j - i <= k);
                    want[i * 4 + j] = keep ? at(&a, i * 4 + j) : 0;
                }
            expect_vals(&r, want, 12, upper ? "triu" : "tril");
            ck_array_release(&r);
        }
    OK(ck_tri_part(&r, &b, 0, 1));
    double w18[18];
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) w18[q * 9 + i * 3 + j] = j >= i ? at(&b, q * 9 + i * 3 + j) : 0;
    expect_vals(&r, w18, 18, "triu of a batch");
    ck_array_release(&r);
    REL(&a, &b, &v);
}

static void test_axes_views(void)
{
    int64_t s131[3] = {1, 3, 1};
    ck_array a = mk(3, s131, CK_FLOAT64, NULL), r;
    OK(ck_array_squeeze(&r, &a, 5, 0));
    CHECK(shape_is(&r, 1, (int64_t[]){3}) && r.buf == a.buf, "squeeze axes 0, 2");
    expect_vals(&r, (double[]){0, 1, 2}, 3, "squeeze");
    ck_array_release(&r);
    OK(ck_array_squeeze(&r, &a, 0, 1));
    CHECK(shape_is(&r, 1, (int64_t[]){3}), "squeeze all ones");
    ck_array_release(&r);
    OK(ck_array_squeeze(&r, &a, 1, 0));
    CHECK(shape_is(&r, 2, (int64_t[]){3, 1}), "squeeze axis 0 only");
    ck_array_release(&r);
    CHECK(ck_array_squeeze(&r, &a, 2, 0) != CK_OK, "squeeze of a length-3 axis must fail");

    int64_t n = 3;
    ck_array v = mk(1, &n, CK_FLOAT64, NULL);
    OK(ck_array_expand_dims(&r, &v, 2, (int[]){0, 2}));
    CHECK(shape_is(&r, 3, (int64_t[]){1, 3, 1}), "expand_dims (0, 2)");
    expect_vals(&r, (double[]){0, 1, 2}, 3, "expand_dims");
    ck_array_release(&r);
    OK(ck_array_expand_dims(&r, &v, 1, (int[]){-1}));
    CHECK(shape_is(&r, 2, (int64_t[]){3, 1}), "expand_dims -1");
    ck_array_release(&r);

    int64_t s234[3] = {2, 3, 4};
    ck_array b = mk(3, s234, CK_INT64, NULL);
    OK(ck_array_moveaxis(&r, &b, 1, (int[]){0}, (int[]){-1}));
    CHECK(shape_is(&r, 3, (int64_t[]){3, 4, 2}), "moveaxis 0 -> -1 shape");
    double want[24];
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 2; i++) want[(j * 4 + k) * 2 + i] = at(&b, (i * 3 + j) * 4 + k);
    expect_vals(&r, want, 24, "moveaxis 0 -> -1");
    ck_array_release(&r);
    OK(ck_array_moveaxis(&r, &b, 2, (int[]){0, 2}, (int[]){1, 0}));   /* (4, 2, 3) */
    CHECK(shape_is(&r, 3, (int64_t[]){4, 2, 3}), "moveaxis two axes shape");
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) want[(k * 2 + i) * 3 + j] = at(&b, (i * 3 + j) * 4 + k);
    expect_vals(&r, want, 24, "moveaxis two axes");
    ck_array_release(&r);
    OK(ck_array_swapaxes(&r, &b, 0, 2));
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 2; i++) want[(k * 3 + j) * 2 + i] = at(&b, (i * 3 + j) * 4 + k);
    expect_vals(&r, want, 24, "swapaxes");
    ck_array_release(&r);
    CHECK(ck_array_moveaxis(&r, &b, 1, (int[]){3}, (int[]){0}) == CK_ERR_AXIS, "moveaxis out of range");
    REL(&a, &v, &b);
}

/* --------------------------------------------------------------- index */

static int64_t ref_index(int64_t i, int64_t n, ck_index_mode mode, int *bad)
{
    switch (mode) {
    case CK_INDEX_WRAP: return pmod(i, n);
    case CK_INDEX_CLIP: return i < 0 ? 0 : i >= n ? n - 1 : i;
    default:
        if (i < -n || i >= n) { *bad = 1; return 0; }
        return i < 0 ? i + n : i;
    }
}

static void test_take_put(void)
{
    int64_t n = 5, ni = 6;
    ck_array a = mk(1, &n, CK_INT32, (double[]){10, 11, 12, 13, 14}), r;
    double iv[6] = {0, -1, 5, -7, 12, 4};
    ck_array ind = mk(1, &ni, CK_INT64, iv);
    for (int mode = CK_INDEX_WRAP; mode <= CK_INDEX_CLIP; mode++) {
        OK(ck_take(&r, &a, &ind, 0, 0, (ck_index_mode)mode));
        double want[6];
        int bad = 0;
        for (int k = 0; k < 6; k++) want[k] = 10 + (double)ref_index((int64_t)iv[k], n, (ck_index_mode)mode, &bad);
        CHECK(r.dtype == CK_INT32, "take keeps the dtype");
        expect_vals(&r, want, 6, mode == CK_INDEX_WRAP ? "take wrap" : "take clip");
        ck_array_release(&r);
    }
    CHECK(ck_take(&r, &a, &ind, 0, 0, CK_INDEX_RAISE) == CK_ERR_INDEX, "take raise: 5 is out of range");
    int64_t three = 3;
    ck_array ok_ind = mk(1, &three, CK_INT32, (double[]){-5, 4, -1});
    OK(ck_take(&r, &a, &ok_ind, 0, 0, CK_INDEX_RAISE));
    expect_vals(&r, (double[]){10, 14, 14}, 3, "take raise, int32 negative indices");
    ck_array_release(&r);

    /* along axis 1 of a 2-d array with a 2-d index, and flattened */
    int64_t s34[2] = {3, 4}, s22[2] = {2, 2};
    ck_array m = mk(2, s34, CK_FLOAT64, NULL);
    ck_array ind2 = mk(2, s22, CK_INT64, (double[]){3, 0, -1, 1});
    OK(ck_take(&r, &m, &ind2, 1, 0, CK_INDEX_RAISE));
    CHECK(shape_is(&r, 3, (int64_t[]){3, 2, 2}), "take axis 1 shape");
    double want[12];
    for (int i = 0; i < 3; i++)
        for (int q = 0; q < 4; q++) want[i * 4 + q] = at(&m, i * 4 + pmod((int64_t)at(&ind2, q), 4));
    expect_vals(&r, want, 12, "take axis 1");
    ck_array_release(&r);
    OK(ck_take(&r, &m, &ind2, 0, 1, CK_INDEX_WRAP));
    CHECK(shape_is(&r, 2, s22), "take flat shape");
    expect_vals(&r, (double[]){3, 0, 11, 1}, 4, "take flat");
    ck_array_release(&r);
    CHECK(ck_take(&r, &m, &ind2, 0, 0, CK_INDEX_RAISE) == CK_ERR_INDEX, "take axis 0: 3 out of range for 3 rows");

    /* put: repeated indices, values cycled, the last write wins */
    int64_t s23[2] = {2, 3}, n4 = 4, n3 = 3;
    for (int mode = CK_INDEX_RAISE; mode <= CK_INDEX_CLIP; mode++) {
        ck_array dst = mk(2, s23, CK_INT64, (double[]){0, 0, 0, 0, 0, 0});
        double pi[4] = {1, 4, 1, -1};
        if (mode == CK_INDEX_WRAP) pi[1] = 10;    /* -> 4 */
        if (mode == CK_INDEX_CLIP) pi[3] = 100;   /* -> 5 */
        ck_array pind = mk(1, &n4, CK_INT64, pi), pval = mk(1, &n3, CK_FLOAT64, (double[]){7, 8, 9});
        OK(ck_put(&dst, &pind, &pval, (ck_index_mode)mode));
        double ref[6] = {0};
        for (int k = 0; k < 4; k++) {
            int bad = 0;
            ref[ref_index((int64_t)pi[k], 6, (ck_index_mode)mode, &bad)] = at(&pval, k % 3);
        }
        expect_vals(&dst, ref, 6, "put with repeated indices");
        CHECK(ref[1] == 9 && ref[5] == 7, "reference put");
        ck_array_release(&pind);
        pind = mk(1, &n4, CK_INT64, (double[]){0, 6, 1, 2});
        if (mode == CK_INDEX_RAISE)
            CHECK(ck_put(&dst, &pind, &pval, CK_INDEX_RAISE) == CK_ERR_INDEX, "put raise: 6 out of range");
        REL(&dst, &pind, &pval);
    }

    /* a[idx] = values with a repeated index: the last value wins */
    int64_t n6 = 6;
    ck_array dst = mk(1, &n6, CK_FLOAT32, NULL);
    ck_array sidx = mk(1, &n4, CK_INT64, (double[]){2, 4, 2, -1}), svals = mk(1, &n4, CK_FLOAT32, (double[]){-1, -2, -3, -4});
    ck_index_item item = {.kind = CK_INDEX_ARRAY, .array = &sidx};
    OK(ck_index_set(&dst, 1, &item, &svals, CK_INDEX_RAISE));
    expect_vals(&dst, (double[]){0, 1, -3, 3, -2, -4}, 6, "index_set with a repeated index");
    ck_array_release(&sidx);
    sidx = mk(1, &n3, CK_INT64, (double[]){0, -7, 1});
    item.array = &sidx;
    CHECK(ck_index_set(&dst, 1, &item, &svals, CK_INDEX_RAISE) != CK_OK, "index_set with -7 of 6 must fail");
    ck_array g;
    CHECK(ck_index_get(&g, &dst, 1, &item, CK_INDEX_RAISE) == CK_ERR_INDEX, "index_get: -7 out of range");
    ck_index_item it2[2] = {{.kind = CK_INDEX_INT, .value = 3}, {.kind = CK_INDEX_INT, .value = 0}};
    CHECK(ck_index_get(&g, &m, 2, it2, CK_INDEX_RAISE) == CK_ERR_INDEX, "index_get: row 3 of 3");
    it2[0].value = -3;
    it2[1].value = -1;
    OK(ck_index_get(&g, &m, 2, it2, CK_INDEX_RAISE));
    CHECK(g.ndim == 0 && at(&g, 0) == 3, "index_get m[-3, -1]");
    ck_array_release(&g);

    /* take_along_axis with argsort's indices is sort */
    ck_array as, sorted, tk;
    ck_array rm = mk(2, s34, CK_FLOAT64, (double[]){3, 1, 2, 0, 9, 8, 9, 7, -1, 5, -2, 5});
    OK(ck_argsort(&as, &rm, 1, 0, 1, 0));
    OK(ck_sort(&sorted, &rm, 1, 0, 1, 0));
    OK(ck_take_along_axis(&tk, &rm, &as, 1, 0));
    double sv[12];
    for (int k = 0; k < 12; k++) sv[k] = at(&sorted, k);
    expect_vals(&tk, sv, 12, "take_along_axis(argsort) == sort");
    REL(&a, &ind, &ok_ind, &m, &ind2, &dst, &sidx, &svals, &as, &sorted, &tk, &rm);
}

static void check_nonzero(const ck_array *a, const char *what)
{
    ck_array r;
    OK(ck_nonzero(&r, a));
    int64_t cnt = 0;
    for (int64_t k = 0; k < a->size; k++) cnt += at(a, k) != 0;
    CHECK(r.dtype == CK_INT64 && shape_is(&r, 2, (int64_t[]){a->ndim, cnt}), "%s: nonzero shape (%d, %lld)", what,
          a->ndim, (long long)cnt);
    if (r.ndim == 2 && r.shape[1] == cnt) {
        int64_t c = 0;
        for (int64_t k = 0; k < a->size; k++) {
            if (at(a, k) == 0) continue;
            int64_t rem = k;
            for (int d = a->ndim - 1; d >= 0; d--) {
                int64_t idx = rem % a->shape[d];
                rem /= a->shape[d];
                if (at(&r, d * cnt + c) != (double)idx) {
                    CHECK(0, "%s: coordinate %d of nonzero %lld is %g, want %lld", what, d, (long long)c,
                          at(&r, d * cnt + c), (long long)idx);
                    ck_array_release(&r);
                    return;
                }
            }
            c++;
        }
    }
    ck_array_release(&r);
}

static void test_nonzero(void)
{
    int64_t s56[2] = {5, 6};
    double vals[30];
    for (int k = 0; k < 30; k++) vals[k] = (k * 7) % 3 == 0 ? 0 : k;
    ck_array a = mk(2, s56, CK_INT32, vals);
    check_nonzero(&a, "contiguous");
    /* rows 4, 2, 0 and columns 1, 3, 5: negative and doubled strides */
    ck_array v = slice(&a, (int64_t[]){4, 1}, (int64_t[]){-2, 2}, (int64_t[]){3, 3});
    check_nonzero(&v, "strided");
    ck_array t;
    OK(ck_array_transpose(&t, &a, NULL));
    check_nonzero(&t, "transposed");
    /* a long bool vector over the parallel path */
    int64_t big = 100003;
    ck_array b;
    OK(ck_array_empty(&b, 1, &big, CK_BOOL, CPU));
    for (int64_t k = 0; k < big; k++) b.data[k] = (ck_test_rand() & 7) == 0;
    check_nonzero(&b, "long bool");
    /* empty and all-zero inputs */
    int64_t s03[2] = {0, 3}, four = 4;
    ck_array e, z = mk(1, &four, CK_FLOAT64, (double[]){0, -0.0, 0, 0});
    OK(ck_array_empty(&e, 2, s03, CK_FLOAT32, CPU));
    check_nonzero(&e, "empty (0, 3)");
    check_nonzero(&z, "all zeros (with -0.0)");
    ck_array r, s0;
    ck_scalar one = {CK_INT64, {.i = 1}};
    OK(ck_full(&s0, 0, NULL, CK_INT32, &one, CPU));
    CHECK(ck_nonzero(&r, &s0) == CK_ERR_VALUE, "nonzero of a 0-d array is refused");
    REL(&a, &v, &t, &b, &e, &z, &s0);
}

/* ------------------------------------------------------ index functions */

static int msg_is(const char *want)
{
    if (strcmp(ck_error_message(), want) == 0) return 1;
    fprintf(stderr, "  message: \"%s\"\n  wanted:  \"%s\"\n", ck_error_message(), want);
    return 0;
}

static void test_nonzero_compositions(void)
{
    int64_t s23[2] = {2, 3}, n2 = 2, n3 = 3;
    ck_array a = mk(2, s23, CK_INT32, (double[]){0, 1, 2, 3, 0, 5}), r;
    OK(ck_argwhere(&r, &a));
    CHECK(r.dtype == CK_INT64 && shape_is(&r, 2, (int64_t[]){4, 2}), "argwhere shape");
    expect_vals(&r, (double[]){0, 1, 0, 2, 1, 0, 1, 2}, 8, "argwhere");
    ck_array_release(&r);
    /* NumPy's 0-d rule: one empty row for a true scalar, none for a false one */
    ck_scalar five = {CK_INT64, {.i = 5}}, zero = {CK_INT64, {.i = 0}};
    ck_array t0, f0;
    OK(ck_full(&t0, 0, NULL, CK_FLOAT32, &five, CPU));
    OK(ck_full(&f0, 0, NULL, CK_FLOAT32, &zero, CPU));
    OK(ck_argwhere(&r, &t0));
    CHECK(shape_is(&r, 2, (int64_t[]){1, 0}), "argwhere of a true 0-d array is (1, 0)");
    ck_array_release(&r);
    OK(ck_argwhere(&r, &f0));
    CHECK(shape_is(&r, 2, (int64_t[]){0, 0}), "argwhere of a false 0-d array is (0, 0)");
    ck_array_release(&r);

    /* flatnonzero of a transposed view counts in the view's C order */
    ck_array t;
    OK(ck_array_transpose(&t, &a, NULL));
    OK(ck_flatnonzero(&r, &t));
    CHECK(r.ndim == 1 && r.dtype == CK_INT64, "flatnonzero is 1-d int64");
    expect_vals(&r, (double[]){1, 2, 4, 5}, 4, "flatnonzero of a.T");
    ck_array_release(&r);

    /* extract reads both flattened, the condition may be shorter */
    ck_array c6 = mk(2, s23, CK_BOOL, (double[]){1, 0, 1, 0, 0, 1}), c2 = mk(1, &n2, CK_FLOAT64, (double[]){0, 1});
    OK(ck_extract(&r, &c6, &a));
    expect_vals(&r, (double[]){0, 2, 5}, 3, "extract");
    ck_array_release(&r);
    OK(ck_extract(&r, &c2, &a));
    expect_vals(&r, (double[]){1}, 1, "extract with a shorter condition");
    ck_array_release(&r);

    /* compress along an axis, and of the flattened array */
    ck_array c3 = mk(1, &n3, CK_BOOL, (double[]){1, 0, 1});
    OK(ck_compress(&r, &c3, &a, 1, 0));
    CHECK(shape_is(&r, 2, (int64_t[]){2, 2}), "compress axis 1 shape");
    expect_vals(&r, (double[]){0, 2, 3, 5}, 4, "compress axis 1");
    ck_array_release(&r);
    OK(ck_compress(&r, &c3, &a, 0, 1));
    expect_vals(&r, (double[]){0, 2}, 2, "compress flattened");
    ck_array_release(&r);
    CHECK(ck_compress(&r, &c6, &a, 0, 0) == CK_ERR_VALUE && msg_is("condition must be a 1-d array"),
          "compress refuses a 2-d condition");
    CHECK(ck_compress(&r, &c3, &a, 0, 0) == CK_ERR_INDEX, "compress: row 2 of 2 rows");
    REL(&a, &t0, &f0, &t, &c6, &c2, &c3);
}

static void test_ix(void)
{
    int64_t n2 = 2, n3 = 3, n0 = 0;
    ck_array i2 = mk(1, &n2, CK_INT32, (double[]){1, 0}), b3 = mk(1, &n3, CK_BOOL, (double[]){1, 0, 1}), e0;
    OK(ck_array_empty(&e0, 1, &n0, CK_FLOAT64, CPU));
    const ck_array *seqs[3] = {&i2, &b3, &e0};
    ck_array out[3];
    OK(ck_ix(out, 3, seqs));
    CHECK(shape_is(&out[0], 3, (int64_t[]){2, 1, 1}) && out[0].dtype == CK_INT32 && out[0].buf == i2.buf,
          "ix_: an integer sequence is a view of itself, shaped (2, 1, 1)");
    expect_vals(&out[0], (double[]){1, 0}, 2, "ix_ integers");
    CHECK(shape_is(&out[1], 3, (int64_t[]){1, 2, 1}) && out[1].dtype == CK_INT64, "ix_: a mask through nonzero");
    expect_vals(&out[1], (double[]){0, 2}, 2, "ix_ mask");
    CHECK(shape_is(&out[2], 3, (int64_t[]){1, 1, 0}) && out[2].dtype == CK_INT64, "ix_: an empty sequence as int64");
    REL(&out[0], &out[1], &out[2]);
    int64_t s11[2] = {1, 1};
    ck_array m2 = mk(2, s11, CK_INT64, (double[]){0});
    const ck_array *bad[2] = {&i2, &m2};
    CHECK(ck_ix(out, 2, bad) == CK_ERR_VALUE && msg_is("Cross index must be 1 dimensional"), "ix_ of a 2-d sequence");
    const ck_array *many[CK_MAXDIMS + 1];
    for (int i = 0; i <= CK_MAXDIMS; i++) many[i] = &i2;
    CHECK(ck_ix(out, CK_MAXDIMS + 1, many) == CK_ERR_VALUE && msg_is("ix_ takes at most 32 sequences"),
          "ix_ of 33 sequences");
    REL(&i2, &b3, &e0, &m2);
}

static void test_ravel_unravel(void)
{
    int64_t dims[3] = {3, 4, 5}, n = 7;
    double flat[7] = {0, 59, 17, 33, 4, 20, 41};
    ck_array idx = mk(1, &n, CK_INT32, flat), coords[3], back;
    for (int order_f = 0; order_f <= 1; order_f++) {
        OK(ck_unravel_index(coords, &idx, 3, dims, order_f));
        for (int k = 0; k < 7; k++) {
            int64_t rem = (int64_t)flat[k];
            for (int j = 0; j < 3; j++) {
                int d = order_f ? j : 2 - j;
                CHECK(at(&coords[d], k) == (double)(rem % dims[d]), "unravel (F %d) of %g, axis %d", order_f, flat[k], d);
                rem /= dims[d];
            }
        }
        const ck_array *ci[3] = {&coords[0], &coords[1], &coords[2]};
        ck_index_mode raise[3] = {CK_INDEX_RAISE, CK_INDEX_RAISE, CK_INDEX_RAISE};
        OK(ck_ravel_multi_index(&back, ci, 3, dims, raise, order_f));
        CHECK(back.dtype == CK_INT64, "ravel_multi_index gives int64");
        expect_vals(&back, flat, 7, "ravel_multi_index(unravel_index(i)) == i");
        REL(&back, &coords[0], &coords[1], &coords[2]);
    }
    int64_t d24[2] = {2, 4}, one = 1;
    ck_array i8 = mk(1, &one, CK_INT64, (double[]){8}), fl = mk(1, &one, CK_FLOAT64, (double[]){1});
    CHECK(ck_unravel_index(coords, &i8, 2, d24, 0) == CK_ERR_VALUE &&
          msg_is("index 8 is out of bounds for array with size 8"), "unravel_index: 8 of 8");
    CHECK(ck_unravel_index(coords, &fl, 2, d24, 0) == CK_ERR_TYPE && msg_is("only int indices permitted"),
          "unravel_index of floats");
    CHECK(ck_unravel_index(coords, &i8, 2, (int64_t[]){2, -4}, 0) == CK_ERR_VALUE &&
          msg_is("dimensions must be non-negative"), "unravel_index: negative dims");

    /* wrap and clip per axis */
    ck_array r0 = mk(1, &n, CK_INT64, (double[]){0, 5, -1, 1, 2, -3, 9}),
             r1 = mk(1, &n, CK_INT32, (double[]){-1, 9, 3, 4, 0, -9, 2});
    const ck_array *ri[2] = {&r0, &r1};
    ck_index_mode modes[2] = {CK_INDEX_CLIP, CK_INDEX_WRAP};
    OK(ck_ravel_multi_index(&back, ri, 2, d24, modes, 0));
    double want[7];
    int bad = 0;
    for (int k = 0; k < 7; k++)
        want[k] = (double)(ref_index((int64_t)at(&r0, k), 2, CK_INDEX_CLIP, &bad) * 4 +
                           ref_index((int64_t)at(&r1, k), 4, CK_INDEX_WRAP, &bad));
    expect_vals(&back, want, 7, "ravel_multi_index clip, wrap");
    ck_array_release(&back);
    modes[0] = CK_INDEX_RAISE;
    CHECK(ck_ravel_multi_index(&back, ri, 2, d24, modes, 0) == CK_ERR_VALUE &&
          msg_is("invalid entry in coordinates array"), "ravel_multi_index raise: 5 of 2 rows");
    ck_index_mode modes2[2] = {CK_INDEX_WRAP, CK_INDEX_RAISE};
    CHECK(ck_ravel_multi_index(&back, ri, 2, d24, modes2, 0) == CK_ERR_VALUE &&
          msg_is("invalid entry in coordinates array"), "ravel_multi_index raise on the last axis: 9 of 4");
    CHECK(ck_ravel_multi_index(&back, ri, 0, d24, modes, 0) == CK_ERR_VALUE &&
          msg_is("ravel_multi_index needs at least one dimension"), "ravel_multi_index of no dimensions");
    REL(&idx, &i8, &fl, &r0, &r1);
}

static void test_tri_indices(void)
{
    int64_t cases[4][3] = {{3, 3, 0}, {3, 5, 1}, {4, 2, -1}, {0, 3, 0}};
    for (int c = 0; c < 4; c++)
        for (int upper = 0; upper <= 1; upper++) {
            int64_t n = cases[c][0], m = cases[c][1], k = cases[c][2];
            ck_array r;
            OK(ck_tri_indices(&r, n, m, k, upper, CPU));
            int64_t cnt = 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) cnt += upper ? j - i >= k : j - i <= k;
            CHECK(r.dtype == CK_INT64 && shape_is(&r, 2, (int64_t[]){2, cnt}), "tri_indices(%lld, %lld, %lld, %d) shape",
                  (long long)n, (long long)m, (long long)k, upper);
            int64_t q = 0;
            for (int64_t i = 0; i < n && r.size == 2 * cnt; i++)
                for (int64_t j = 0; j < m; j++) {
                    if (!(upper ? j - i >= k : j - i <= k)) continue;
                    CHECK(at(&r, q) == (double)i && at(&r, cnt + q) == (double)j, "tri_indices pair %lld", (long long)q);
                    q++;
                }
            ck_array_release(&r);
        }
    ck_array r;
    CHECK(ck_tri_indices(&r, -1, 2, 0, 0, CPU) == CK_ERR_VALUE && msg_is("negative dimensions are not allowed"),
          "tri_indices of -1 rows");
}

static void test_select_choose(void)
{
    int64_t n4 = 4, s21[2] = {2, 1};
    ck_array x = mk(1, &n4, CK_INT32, (double[]){1, 2, 3, 4});
    ck_array big = mk(1, &n4, CK_BOOL, (double[]){0, 0, 1, 1}), odd = mk(1, &n4, CK_BOOL, (double[]){1, 0, 1, 0});
    ck_array ten = mk(1, &n4, CK_INT32, (double[]){10, 20, 30, 40}), neg = mk(1, &n4, CK_FLOAT32, (double[]){-1, -2, -3, -4});
    const ck_array *conds[2] = {&big, &odd}, *chs[2] = {&ten, &neg};
    ck_array r;
    /* the first condition that holds wins; none: the default */
    OK(ck_select(&r, 2, conds, chs, NULL));
    CHECK(r.dtype == CK_FLOAT64, "select: int32, float32 and a Python int 0 give float64");
    expect_vals(&r, (double[]){-1, 0, 30, 40}, 4, "select");
    ck_array_release(&r);
    ck_operand d = {0};
    d.scalar.dtype = CK_FLOAT64;
    d.scalar.v.f = 0.5;
    d.weak = 1;
    OK(ck_select(&r, 2, conds, chs, &d));
    expect_vals(&r, (double[]){-1, 0.5, 30, 40}, 4, "select with a default");
    ck_array_release(&r);
    const ck_array *bad[2] = {&big, &x};
    CHECK(ck_select(&r, 2, bad, chs, NULL) == CK_ERR_TYPE &&
          msg_is("invalid entry 1 in condlist: should be boolean ndarray"), "select with an int condition");
    const ck_array *bad0[2] = {&x, &odd};
    CHECK(ck_select(&r, 2, bad0, chs, NULL) == CK_ERR_TYPE &&
          msg_is("invalid entry 0 in condlist: should be boolean ndarray"), "select: the int condition met last");
    CHECK(ck_select(&r, 0, conds, chs, NULL) == CK_ERR_VALUE &&
          msg_is("select with an empty condition list is not possible"), "select of nothing");

    /* choose broadcasts a (2, 1) against the (4,) choices */
    ck_array a = mk(2, s21, CK_INT8, (double[]){1, 0});
    const ck_array *ch3[2] = {&ten, &neg};
    OK(ck_choose(&r, &a, 2, ch3, CK_INDEX_RAISE));
    CHECK(r.dtype == CK_FLOAT64 && shape_is(&r, 2, (int64_t[]){2, 4}), "choose shape and dtype");
    expect_vals(&r, (double[]){-1, -2, -3, -4, 10, 20, 30, 40}, 8, "choose");
    ck_array_release(&r);
    ck_array ai = mk(1, &n4, CK_INT64, (double[]){0, 3, -1, 1});
    for (int mode = CK_INDEX_WRAP; mode <= CK_INDEX_CLIP; mode++) {
        OK(ck_choose(&r, &ai, 2, ch3, (ck_index_mode)mode));
        double want[4];
        int b = 0;
        for (int k = 0; k < 4; k++)
            want[k] = at(ref_index((int64_t)at(&ai, k), 2, (ck_index_mode)mode, &b) ? &neg : &ten, k);
        expect_vals(&r, want, 4, mode == CK_INDEX_WRAP ? "choose wrap" : "choose clip");
        ck_array_release(&r);
    }
    CHECK(ck_choose(&r, &ai, 2, ch3, CK_INDEX_RAISE) == CK_ERR_VALUE && msg_is("invalid entry in choice array"),
          "choose raise: 3 of 2 choices");
    CHECK(ck_choose(&r, &neg, 2, ch3, CK_INDEX_RAISE) == CK_ERR_TYPE &&
          msg_is("Cannot cast array data from dtype('float32') to dtype('int64') according to the rule 'safe'"),
          "choose with float indices");
    CHECK(ck_choose(&r, &a, 0, ch3, CK_INDEX_RAISE) == CK_ERR_VALUE && msg_is("choices must not be empty"),
          "choose from nothing");
    REL(&x, &big, &odd, &ten, &neg, &a, &ai);
}

/* ---------------------------------------------------------------- sort */

/* NumPy's order: NaN last, -0.0 == +0.0. */
static int cmp_np(double x, double y)
{
    if (isnan(x)) return isnan(y) ? 0 : 1;
    if (isnan(y)) return -1;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Stable insertion argsort of n values at stride 1. */
static void ref_argsort(const double *x, int64_t n, int descending, int64_t *idx)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = i, j = i;
        for (; j > 0; j--) {
            int c = cmp_np(x[v], x[idx[j - 1]]);
            if (descending ? c <= 0 : c >= 0) break;
            idx[j] = idx[j - 1];
        }
        idx[j] = v;
    }
}

static void check_sort_1d(const ck_array *a, int descending, const char *what)
{
    int64_t n = a->size;
    double *x = malloc((size_t)n * sizeof *x);
    int64_t *idx = malloc((size_t)n * sizeof *idx);
    for (int64_t k = 0; k < n; k++) x[k] = at(a, k);
    ref_argsort(x, n, descending, idx);
    ck_array s, as;
    OK(ck_sort(&s, a, 0, 0, 1, descending));
    OK(ck_argsort(&as, a, 0, 0, 1, descending));
    CHECK(as.dtype == CK_INT64 && s.dtype == a->dtype, "%s: dtypes", what);
    for (int64_t k = 0; k < n; k++) {
        if (at(&as, k) != (double)idx[k]) {
            CHECK(0, "%s (descending %d): argsort[%lld] = %g, want %lld (value %g)", what, descending, (long long)k,
                  at(&as, k), (long long)idx[k], x[idx[k]]);
            break;
        }
    }
    /* the sorted values are the input's bits in that order (signed zeros
     * and NaN payloads come out as they went in) */
    int isz = ck_array_itemsize(a);
    for (int64_t k = 0; k < n; k++) {
        if (memcmp(ptr_at(&s, k), ptr_at(a, idx[k]), (size_t)isz) != 0) {
            CHECK(0, "%s (descending %d): sort[%lld] = %g, want a[%lld] = %g", what, descending, (long long)k,
                  at(&s, k), (long long)idx[k], x[idx[k]]);
            break;
        }
    }
    REL(&s, &as);
    free(x);
    free(idx);
}

static void test_sort(void)
{
    /* small (insertion path) float32 with NaN and both zeros */
    int64_t n9 = 9;
    ck_array f = mk(1, &n9, CK_FLOAT32, (double[]){3, NAN, -0.0, 0.0, -1, NAN, 2, 0.0, -0.0});
    check_sort_1d(&f, 0, "float32 small");
    check_sort_1d(&f, 1, "float32 small");
    ck_array as;
    OK(ck_argsort(&as, &f, 0, 0, 1, 0));
    expect_vals(&as, (double[]){4, 2, 3, 7, 8, 6, 0, 1, 5}, 9, "argsort float32 NaN / -0.0 (NumPy's stable order)");
    ck_array_release(&as);
    OK(ck_argsort(&as, &f, 0, 0, 1, 1));
    expect_vals(&as, (double[]){1, 5, 0, 6, 2, 3, 7, 8, 4}, 9, "argsort descending keeps ties in input order");
    ck_array_release(&as);
    ck_array s;
    OK(ck_sort(&s, &f, 0, 0, 1, 0));
    CHECK(signbit(((float *)s.data)[1]) && !signbit(((float *)s.data)[2]) && !signbit(((float *)s.data)[3]) &&
          signbit(((float *)s.data)[4]) && isnan(((float *)s.data)[7]) && isnan(((float *)s.data)[8]),
          "sorted zeros keep their signs in input order, NaNs last");
    ck_array_release(&s);

    /* large (radix path) float32 and float64 from a small value set */
    static const double pool[] = {NAN, -0.0, 0.0, 1.5, -1.5, INFINITY, -INFINITY, 2, -2, 1e-30};
    int64_t nl = 2000;
    ck_array fl, dl;
    OK(ck_array_empty(&fl, 1, &nl, CK_FLOAT32, CPU));
    OK(ck_array_empty(&dl, 1, &nl, CK_FLOAT64, CPU));
    for (int64_t k = 0; k < nl; k++) {
        double v = pool[ck_test_rand() % 10];
        ((float *)fl.data)[k] = (float)v;
        ((double *)dl.data)[k] = v;
    }
    ((float *)fl.data)[17] = -NAN;   /* a NaN with the sign bit: still last */
    for (int desc = 0; desc < 2; desc++) {
        check_sort_1d(&fl, desc, "float32 large");
        check_sort_1d(&dl, desc, "float64 large");
    }
    /* a strided, negative-stride view */
    ck_array dv = slice(&dl, (int64_t[]){nl - 1}, (int64_t[]){-3}, (int64_t[]){nl / 3});
    check_sort_1d(&dv, 0, "float64 reversed strided view");

    /* stability of equal int32 keys, along both axes of a 2-d array and flat */
    int64_t s2[2] = {3, 700};
    ck_array ik;
    OK(ck_array_empty(&ik, 2, s2, CK_INT32, CPU));
    for (int64_t k = 0; k < ik.size; k++) ((int32_t *)ik.data)[k] = (int32_t)(ck_test_rand() % 9) - 4;
    for (int axis = 0; axis < 2; axis++) {
        for (int desc = 0; desc < 2; desc++) {
            OK(ck_argsort(&as, &ik, axis, 0, 1, desc));
            int64_t len = s2[axis], other = s2[1 - axis];
            double *x = malloc((size_t)len * sizeof *x);
            int64_t *idx = malloc((size_t)len * sizeof *idx);
            int bad = 0;
            for (int64_t o = 0; o < other && !bad; o++) {
                for (int64_t q = 0; q < len; q++) x[q] = at(&ik, axis ? o * 700 + q : q * 700 + o);
                ref_argsort(x, len, desc, idx);
                for (int64_t q = 0; q < len && !bad; q++)
                    if (at(&as, axis ? o * 700 + q : q * 700 + o) != (double)idx[q]) {
                        bad = 1;
                        CHECK(0, "int32 argsort axis %d desc %d line %lld pos %lld", axis, desc, (long long)o,
                              (long long)q);
                    }
            }
            free(x);
            free(idx);
            ck_array_release(&as);
        }
    }
    OK(ck_argsort(&as, &ik, 0, 1, 1, 0));
    CHECK(shape_is(&as, 1, (int64_t[]){2100}), "argsort axis None is flat");
    int ok = 1;
    for (int64_t k = 1; k < as.size && ok; k++) {
        double p = at(&ik, (int64_t)at(&as, k - 1)), c = at(&ik, (int64_t)at(&as, k));
        ok = p < c || (p == c && at(&as, k - 1) < at(&as, k));
    }
    CHECK(ok, "flat argsort: sorted and stable");
    ck_array_release(&as);

    /* partition: the kth elements in place */
    int64_t kth[2] = {3, 1500};
    ck_array p;
    OK(ck_partition(&p, &dl, kth, 2, 0, 0, 0));
    OK(ck_sort(&s, &dl, 0, 0, 1, 0));
    for (int q = 0; q < 2; q++) {
        int64_t kq = kth[q];
        CHECK(cmp_np(at(&p, kq), at(&s, kq)) == 0, "partition kth %lld", (long long)kq);
        int good = 1;
        for (int64_t k = 0; k < nl; k++)
            if ((k < kq && cmp_np(at(&p, k), at(&p, kq)) > 0) || (k > kq && cmp_np(at(&p, k), at(&p, kq)) < 0)) good = 0;
        CHECK(good, "partition around kth %lld", (long long)kq);
    }
    REL(&p, &s, &f, &fl, &dl, &dv, &ik);
}

static int64_t ref_search(const double *a, int64_t n, double v, int right)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += right ? cmp_np(a[i], v) <= 0 : cmp_np(a[i], v) < 0;
    return c;
}

static void test_searchsorted(void)
{
    double av[8] = {-1, 1, 2, 2, 2, 5, NAN, NAN};
    int64_t na = 8, nv = 9;
    ck_array a = mk(1, &na, CK_FLOAT64, av);
    double vv[9] = {-5, -1, 0, 2, 3, 5, 6, NAN, INFINITY};
    ck_array v = mk(1, &nv, CK_FLOAT64, vv), r;
    for (int right = 0; right < 2; right++) {
        OK(ck_searchsorted(&r, &a, &v, right, NULL));
        double want[9];
        for (int k = 0; k < 9; k++) want[k] = (double)ref_search(av, na, vv[k], right);
        CHECK(r.dtype == CK_INT64, "searchsorted gives int64");
        expect_vals(&r, want, 9, right ? "searchsorted right" : "searchsorted left");
        ck_array_release(&r);
    }
    CHECK(ref_search(av, na, 2, 0) == 2 && ref_search(av, na, 2, 1) == 5 && ref_search(av, na, NAN, 0) == 6,
          "reference searchsorted");
    /* int32 values into a float64 array, 2-d v */
    int64_t s23[2] = {2, 3};
    ck_array vi = mk(2, s23, CK_INT32, (double[]){2, 1, 7, -1, 5, 0});
    OK(ck_searchsorted(&r, &a, &vi, 1, NULL));
    CHECK(shape_is(&r, 2, s23), "searchsorted keeps v's shape");
    double want6[6];
    for (int k = 0; k < 6; k++) want6[k] = (double)ref_search(av, na, at(&vi, k), 1);
    expect_vals(&r, want6, 6, "searchsorted right of int32 values");
    ck_array_release(&r);
    /* through a sorter */
    double uv[6] = {5, 2, -3, 9, 2, 0};
    int64_t nu = 6;
    ck_array u = mk(1, &nu, CK_FLOAT64, uv), srt;
    OK(ck_argsort(&srt, &u, 0, 0, 1, 0));
    double su[6];
    for (int k = 0; k < 6; k++) su[k] = uv[(int64_t)at(&srt, k)];
    for (int right = 0; right < 2; right++) {
        OK(ck_searchsorted(&r, &u, &v, right, &srt));
        double want[9];
        for (int k = 0; k < 9; k++) want[k] = (double)ref_search(su, nu, vv[k], right);
        expect_vals(&r, want, 9, right ? "searchsorted right with sorter" : "searchsorted left with sorter");
        ck_array_release(&r);
    }
    /* a long sorted array */
    int64_t nl = 5000;
    ck_array big;
    OK(ck_arange(&big, 0, 0.5, nl, CK_FLOAT64, CPU));
    for (int64_t k = 0; k < nl; k++) ((double *)big.data)[k] = floor(((double *)big.data)[k]);   /* pairs of equal values */
    ck_array q = mk(1, &nv, CK_FLOAT64, (double[]){-1, 0, 0.5, 17, 1234, 2499, 2500, NAN, 1e9});
    for (int right = 0; right < 2; right++) {
        OK(ck_searchsorted(&r, &big, &q, right, NULL));
        double want[9];
        for (int k = 0; k < 9; k++) want[k] = (double)ref_search((double *)big.data, nl, at(&q, k), right);
        expect_vals(&r, want, 9, "searchsorted long");
        ck_array_release(&r);
    }
    REL(&a, &v, &vi, &u, &srt, &big, &q);
}

/* -------------------------------------------------------------- random */

static void ref_philox(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
    uint32_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]}, k0 = key_in[0], k1 = key_in[1];
    for (int round = 0; round < 10; round++) {
        if (round) { k0 += CK_PHILOX_W0; k1 += CK_PHILOX_W1; }
        uint64_t p0 = (uint64_t)CK_PHILOX_M0 * c[0], p1 = (uint64_t)CK_PHILOX_M1 * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1, n3 = (uint32_t)p0;
        c[0] = n0; c[1] = n1; c[2] = n2; c[3] = n3;
    }
    memcpy(out, c, sizeof c);
}

/* Block b of the stream: the 128-bit counter base + b (with carry). */
static void ref_block(const uint32_t key[2], const uint32_t base[4], uint64_t b, uint32_t out[4])
{
    uint32_t c[4];
    uint64_t carry = b;
    for (int j = 0; j < 4; j++) {
        uint64_t s = (uint64_t)base[j] + (carry & 0xFFFFFFFFu);
        c[j] = (uint32_t)s;
        carry = (carry >> 32) + (s >> 32);
    }
    ref_philox(c, key, out);
}

static void test_philox(void)
{
    static const uint32_t kat[3][10] = {   /* Random123 kat_vectors: ctr, key, out */
        {0, 0, 0, 0, 0, 0, 0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8},
        {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
         0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD},
        {0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0,
         0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1},
    };
    for (int t = 0; t < 3; t++) {
        uint32_t out[4], ref[4];
        ck_philox4x32_10(kat[t], kat[t] + 4, out);
        ref_philox(kat[t], kat[t] + 4, ref);
        CHECK(memcmp(out, kat[t] + 6, 16) == 0, "Philox KAT %d: %08X %08X %08X %08X", t, out[0], out[1], out[2],
              out[3]);
        CHECK(memcmp(ref, kat[t] + 6, 16) == 0, "reference Philox KAT %d", t);
    }
    for (int t = 0; t < 100; t++) {
        uint32_t c[4], k[2], o1[4], o2[4];
        for (int j = 0; j < 4; j++) c[j] = (uint32_t)ck_test_rand();
        k[0] = (uint32_t)ck_test_rand();
        k[1] = (uint32_t)ck_test_rand();
        ck_philox4x32_10(c, k, o1);
        ref_philox(c, k, o2);
        if (memcmp(o1, o2, 16)) { CHECK(0, "Philox differs from the reference at trial %d", t); break; }
    }
}

static void test_fill_layout(void)
{
    const uint32_t key[2] = {0x12345678u, 0x9ABCDEF0u};
    const uint32_t base[4] = {0xFFFFFFFEu, 0xFFFFFFFFu, 0, 0};   /* carries into word 2 */
    uint32_t blk[4][4];
    for (int b = 0; b < 4; b++) ref_block(key, base, (uint64_t)b, blk[b]);
    const uint32_t *w = &blk[0][0];
    uint64_t used;
    ck_array r;

    int64_t n = 10;
    OK(ck_array_empty(&r, 1, &n, CK_UINT32, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_BITS, key, base, NULL, &used));
    CHECK(used == 3 && ck_random_blocks(CK_RANDOM_BITS, CK_UINT32, NULL, n) == 3, "uint32 bits use 3 blocks");
    CHECK(memcmp(r.data, w, 40) == 0, "uint32 bits are the words of blocks base, base + 1, ... (with carry)");
    ck_array_release(&r);

    n = 5;
    OK(ck_array_empty(&r, 1, &n, CK_UINT64, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_BITS, key, base, NULL, &used));
    CHECK(used == 3, "uint64 bits: 2 per block");
    for (int k = 0; k < 5; k++) {
        uint64_t want = (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
        CHECK(((uint64_t *)r.data)[k] == want, "uint64 bits [%d]", k);
    }
    ck_array_release(&r);

    OK(ck_array_empty(&r, 1, &n, CK_FLOAT64, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_UNIFORM, key, base, NULL, &used));
    for (int k = 0; k < 5; k++) {
        uint64_t u = (uint64_t)w[2 * k] | ((uint64_t)w[2 * k + 1] << 32);
        CHECK(((double *)r.data)[k] == (double)(u >> 11) * 0x1p-53, "uniform float64 [%d]", k);
    }
    ck_array_release(&r);

    n = 6;
    OK(ck_array_empty(&r, 1, &n, CK_FLOAT32, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_UNIFORM, key, base, NULL, &used));
    CHECK(used == 2, "uniform float32: 4 per block");
    for (int k = 0; k < 6; k++)
        CHECK(((float *)r.data)[k] == (float)(w[k] >> 8) * 0x1p-24f, "uniform float32 [%d]", k);
    ck_array_release(&r);

    /* integers in [-3, 7): Lemire on each word (a rejection needs the low
     * half below 2^32 mod 10 = 6, which these words do not hit) */
    n = 12;
    ck_random_params ip = {.low = (uint64_t)(int64_t)-3, .range = 10};
    OK(ck_array_empty(&r, 1, &n, CK_INT64, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_INTEGERS, key, base, &ip, &used));
    for (int k = 0; k < 12; k++) {
        uint64_t m = (uint64_t)w[k] * 10u;
        if ((uint32_t)m < 6) continue;
        CHECK(((int64_t *)r.data)[k] == -3 + (int64_t)(m >> 32), "integers [%d] = %lld", k,
              (long long)((int64_t *)r.data)[k]);
    }
    ck_array_release(&r);

    /* Box-Muller float64 of block 0 */
    n = 2;
    OK(ck_array_empty(&r, 1, &n, CK_FLOAT64, CPU));
    OK(ck_random_fill(&r, CK_RANDOM_NORMAL, key, base, NULL, &used));
    uint64_t a0 = (uint64_t)w[0] | ((uint64_t)w[1] << 32), a1 = (uint64_t)w[2] | ((uint64_t)w[3] << 32);
    double u1 = 1 - (double)(a0 >> 11) * 0x1p-53, u2 = (double)(a1 >> 11) * 0x1p-53;
    double rr = sqrt(-2 * log(u1)), two_pi = 6.283185307179586;
    CHECK(fabs(((double *)r.data)[0] - rr * cos(two_pi * u2)) < 1e-12 &&
          fabs(((double *)r.data)[1] - rr * sin(two_pi * u2)) < 1e-12,
          "normal float64: %.17g %.17g vs %.17g %.17g", ((double *)r.data)[0], ((double *)r.data)[1],
          rr * cos(two_pi * u2), rr * sin(two_pi * u2));
    ck_array_release(&r);
}

typedef struct { ck_random_dist dist; ck_dtype dt; int64_t n; ck_random_params p; const char *name; } fill_case;

static void test_fill_determinism(void)
{
    static const double lam[4] = {0.5, 3, 40, 1e4};
    fill_case cases[] = {
        {CK_RANDOM_BITS, CK_UINT32, 1 << 20, {.a = 0}, "bits uint32"},
        {CK_RANDOM_UNIFORM, CK_FLOAT64, 1 << 20, {.a = 0}, "uniform float64"},
        {CK_RANDOM_NORMAL, CK_FLOAT32, (1 << 20) + 3, {.a = 0}, "normal float32"},
        {CK_RANDOM_EXPONENTIAL, CK_FLOAT64, 300001, {.a = 0}, "exponential float64"},
        {CK_RANDOM_INTEGERS, CK_INT32, 500001, {.low = 5, .range = 1000003}, "integers int32"},
        {CK_RANDOM_INTEGERS, CK_UINT64, 200001, {.low = 0, .range = 0}, "integers full uint64"},
        {CK_RANDOM_GAMMA, CK_FLOAT64, 20001, {.a = 0.3, .b = 2}, "gamma"},
        {CK_RANDOM_BETA, CK_FLOAT64, 20001, {.a = 0.5, .b = 3}, "beta"},
        {CK_RANDOM_POISSON, CK_INT64, 20000, {.a_arr = NULL, .a = 7.5}, "poisson"},
        {CK_RANDOM_BINOMIAL, CK_INT64, 20001, {.a = 100, .b = 0.3}, "binomial"},
    };
    double *lams = malloc(20000 * sizeof *lams);
    for (int k = 0; k < 20000; k++) lams[k] = lam[k % 4];
    cases[8].p.a_arr = lams;

    const uint32_t key[2] = {2024, 7}, ctr[4] = {0xFFFFFF00u, 3, 0, 0}, ctr2[4] = {0xFFFFFF01u, 3, 0, 0};
    int nt = ck_cpu_num_threads();
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const fill_case *fc = &cases[c];
        ck_array r1, r2, r3, r4;
        uint64_t b1 = 0, b2 = 0;
        OK(ck_array_empty(&r1, 1, &fc->n, fc->dt, CPU));
        OK(ck_array_empty(&r2, 1, &fc->n, fc->dt, CPU));
        OK(ck_array_empty(&r3, 1, &fc->n, fc->dt, CPU));
        OK(ck_array_empty(&r4, 1, &fc->n, fc->dt, CPU));
        size_t nbytes = (size_t)fc->n * (size_t)ck_array_itemsize(&r1);
        ck_cpu_set_num_threads(1);
        CHECK(ck_cpu_num_threads() == 1, "set_num_threads(1)");
        OK(ck_random_fill(&r1, fc->dist, key, ctr, &fc->p, &b1));
        OK(ck_random_fill(&r3, fc->dist, key, ctr, &fc->p, NULL));
        ck_cpu_set_num_threads(2);
        CHECK(ck_cpu_num_threads() == 2, "set_num_threads(2)");
        OK(ck_random_fill(&r2, fc->dist, key, ctr, &fc->p, &b2));
        OK(ck_random_fill(&r4, fc->dist, key, ctr2, &fc->p, NULL));
        ck_cpu_set_num_threads(nt);
        CHECK(memcmp(r1.data, r3.data, nbytes) == 0, "%s: same key / counter, same numbers", fc->name);
        CHECK(memcmp(r1.data, r2.data, nbytes) == 0, "%s: 1 and 2 threads differ", fc->name);
        CHECK(b1 == b2 && b1 == ck_random_blocks(fc->dist, fc->dt, &fc->p, fc->n), "%s: blocks %llu %llu %llu",
              fc->name, (unsigned long long)b1, (unsigned long long)b2,
              (unsigned long long)ck_random_blocks(fc->dist, fc->dt, &fc->p, fc->n));
        CHECK(memcmp(r1.data, r4.data, nbytes) != 0, "%s: another counter, other numbers", fc->name);
        /* ranges */
        int good = 1;
        for (int64_t k = 0; k < fc->n && good; k++) {
            double x = at(&r1, k);
            switch (fc->dist) {
            case CK_RANDOM_UNIFORM: good = x >= 0 && x < 1; break;
            case CK_RANDOM_NORMAL: good = isfinite(x); break;
            case CK_RANDOM_EXPONENTIAL: case CK_RANDOM_GAMMA: good = x >= 0 && isfinite(x); break;
            case CK_RANDOM_BETA: good = x >= 0 && x <= 1; break;
            case CK_RANDOM_POISSON: good = x >= 0; break;
            case CK_RANDOM_BINOMIAL: good = x >= 0 && x <= 100; break;
            case CK_RANDOM_INTEGERS:
                if (fc->dt == CK_INT32) good = x >= 5 && x < 5 + 1000003;
                break;
            default: break;
            }
            if (!good) CHECK(0, "%s: element %lld = %g out of range", fc->name, (long long)k, x);
        }
        /* one fill of n, or two of n/2 with the counter advanced between,
         * for the simple (block-per-element) samplers */
        if (fc->dist <= CK_RANDOM_INTEGERS && fc->dist != CK_RANDOM_INTEGERS && fc->n % 2 == 0) {
            int64_t h = fc->n / 2;
            ck_array p1, p2;
            uint64_t bh;
            OK(ck_array_empty(&p1, 1, &h, fc->dt, CPU));
            OK(ck_array_empty(&p2, 1, &h, fc->dt, CPU));
            OK(ck_random_fill(&p1, fc->dist, key, ctr, &fc->p, &bh));
            uint32_t next[4];
            uint64_t carry = bh;
            for (int j = 0; j < 4; j++) {
                uint64_t s = (uint64_t)ctr[j] + (carry & 0xFFFFFFFFu);
                next[j] = (uint32_t)s;
                carry = (carry >> 32) + (s >> 32);
            }
            OK(ck_random_fill(&p2, fc->dist, key, next, &fc->p, NULL));
            size_t hb = (size_t)h * (size_t)ck_array_itemsize(&p1);
            CHECK(memcmp(p1.data, r1.data, hb) == 0 && memcmp(p2.data, r1.data + hb, hb) == 0,
                  "%s: two half fills with the counter advanced equal one fill", fc->name);
            REL(&p1, &p2);
        }
        REL(&r1, &r2, &r3, &r4);
    }
    free(lams);
}

int main(void)
{
    test_join();
    test_flip_roll();
    test_pad();
    test_tile_repeat_resize();
    test_diag_tri();
    test_axes_views();
    test_take_put();
    test_nonzero();
    test_nonzero_compositions();
    test_ix();
    test_ravel_unravel();
    test_tri_indices();
    test_select_choose();
    test_sort();
    test_searchsorted();
    test_philox();
    test_fill_layout();
    test_fill_determinism();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_ops4: all passed\n");
    return 0;
}
