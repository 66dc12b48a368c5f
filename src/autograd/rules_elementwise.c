/* Gradient rules of the element-wise ops (a row per op of the op table that
 * has a derivative).  Complex inputs follow PyTorch's convention: the
 * gradient is g times the conjugate of the derivative. */
#include "ag_rules.h"

#include <math.h>
#include <string.h>

/* A rule's temporaries, released together. */
#define TMPS_MAX 16
typedef struct {
    ck_array a[TMPS_MAX];
    int n;
} tmps;

static ck_array *tnew(tmps *t)
{
    /* a rule asks for a fixed number, which fits */
    ck_array *r = &t->a[t->n < TMPS_MAX - 1 ? t->n++ : TMPS_MAX - 1];
    memset(r, 0, sizeof *r);
    return r;
}

static void tfree(tmps *t)
{
    for (int i = 0; i < t->n; i++)
        if (t->a[i].buf) ck_array_release(&t->a[i]);
}

#define TRY(x) do { if ((s = (x)) != CK_OK) goto done; } while (0)
#define G (&gout[0])
#define X ck_ag_in(n, 0)
#define Y ck_ag_in(n, 1)
#define OUT ck_ag_out(n)
#define ARR(x) ck_ag_arr(x)
#define NUM(v) ck_ag_num(v)
#define NEED(i) ck_ag_needs_grad(n, i)

static int operand_complex(ck_operand o)
{
    return ck_dtype_is_complex(o.array ? o.array->dtype : o.scalar.dtype);
}

/* d or its conjugate (a complex d), the array in *tmp when one is made. */
static ck_status conj_of(ck_operand d, ck_operand *r, ck_array *tmp)
{
    *r = d;
    if (!operand_complex(d)) return CK_OK;
    if (!d.array) {
        r->scalar.v.c.im = -r->scalar.v.c.im;
        return CK_OK;
    }
    ck_status s = ck_ag_un(CK_OP_CONJUGATE, d, tmp);
    if (s == CK_OK) *r = ARR(tmp);
    return s;
}

/* out = g op conj(d), op multiply or divide. */
static ck_status g_op(ck_op op, ck_array *out, const ck_array *g, ck_operand d)
{
    ck_array tmp = {0};
    ck_operand c;
    ck_status s = conj_of(d, &c, &tmp);
    if (s == CK_OK) s = ck_ag_bin(op, ARR(g), c, out);
    if (tmp.buf) ck_array_release(&tmp);
    return s;
}

static ck_status gmul(ck_array *out, const ck_array *g, ck_operand d) { return g_op(CK_OP_MULTIPLY, out, g, d); }
static ck_status gdiv(ck_array *out, const ck_array *g, ck_operand d) { return g_op(CK_OP_TRUE_DIVIDE, out, g, d); }

static ck_status zeros_like_g(ck_array *out, const ck_array *g)
{
    return ck_ag_zeros(out, g->ndim, g->shape, g->dtype, ck_array_device(g));
}

/* ------------------------------------------------------------ unary */

static ck_status negative_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    return ck_ag_un(CK_OP_NEGATIVE, ARR(G), &gin[0]);
}

static ck_status positive_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    ck_array_view(&gin[0], G);
    return CK_OK;
}

static ck_status conjugate_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    return ck_ag_un(CK_OP_CONJUGATE, ARR(G), &gin[0]);
}

/* sign, floor, ceil, trunc, rint: zero almost everywhere */
static ck_status zero_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    for (int i = 0; i < n->nin; i++)
        if (NEED(i)) CK_AG_TRY(zeros_like_g(&gin[i], G));
    return CK_OK;
}

static ck_status absolute_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    /* g * sign(x); for complex x, sign is x / |x| (NumPy 2) and g is real */
    ck_array sg;
    CK_AG_TRY(ck_ag_un(CK_OP_SIGN, X, &sg));
    ck_status s = ck_ag_bin(CK_OP_MULTIPLY, ARR(G), ARR(&sg), &gin[0]);
    ck_array_release(&sg);
    return s;
}

static ck_status reciprocal_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *y2 = tnew(&T), *d = tnew(&T);
    TRY(ck_ag_bin(CK_OP_MULTIPLY, OUT, OUT, y2));
    TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(y2), d));
    TRY(gmul(&gin[0], G, ARR(d)));
done:
    tfree(&T);
    return s;
}

static ck_status cbrt_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *y2 = tnew(&T), *d = tnew(&T);
    TRY(ck_ag_bin(CK_OP_MULTIPLY, OUT, OUT, y2));
    TRY(ck_ag_bin(CK_OP_TRUE_DIVIDE, NUM(1.0 / 3.0), ARR(y2), d));
    TRY(gmul(&gin[0], G, ARR(d)));
done:
    tfree(&T);
    return s;
}

static ck_status exp_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return gmul(&gin[0], G, OUT); }

static ck_status log_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return gdiv(&gin[0], G, X); }

/* The rows whose derivative is one op with a constant: gin = g * conj(d),
 * or g / conj(d) when divide, d = src op c (c op src when c_first), src
 * the output y when the row saves it, else the input x. */
typedef struct one_step {
    ck_op op;
    double c;
    int c_first, divide;
} one_step;

#define STEP(op, c, c_first, divide) (&(const one_step){op, c, c_first, divide})

static ck_status one_step_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    const one_step *st = n->rule->data;
    ck_operand src = n->rule->flags & CK_AG_SAVE_OUTPUT ? OUT : X, c = NUM(st->c);
    ck_array d;
    CK_AG_TRY(st->c_first ? ck_ag_bin(st->op, c, src, &d) : ck_ag_bin(st->op, src, c, &d));
    ck_status s = st->divide ? gdiv(&gin[0], G, ARR(&d)) : gmul(&gin[0], G, ARR(&d));
    ck_array_release(&d);
    return s;
}

/* g * conj(f(x)), negated when neg */
static ck_status times_f(ck_ag_node *n, const ck_array *gout, ck_array *gin, ck_op f, int neg)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *d = tnew(&T), *nd = tnew(&T);
    TRY(ck_ag_un(f, X, d));
    if (neg) {
        TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(d), nd));
        d = nd;
    }
    TRY(gmul(&gin[0], G, ARR(d)));
done:
    tfree(&T);
    return s;
}

static ck_status sin_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return times_f(n, gout, gin, CK_OP_COS, 0); }
static ck_status cos_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return times_f(n, gout, gin, CK_OP_SIN, 1); }
static ck_status sinh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return times_f(n, gout, gin, CK_OP_COSH, 0); }
static ck_status cosh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return times_f(n, gout, gin, CK_OP_SINH, 0); }

/* g * conj(c0 + c1 * y^2) */
static ck_status y2_poly(ck_ag_node *n, const ck_array *gout, ck_array *gin, double c0, double c1)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *y2 = tnew(&T), *t = tnew(&T), *d = tnew(&T);
    TRY(ck_ag_bin(CK_OP_MULTIPLY, OUT, OUT, y2));
    TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(y2), NUM(c1), t));
    TRY(ck_ag_bin(CK_OP_ADD, ARR(t), NUM(c0), d));
    TRY(gmul(&gin[0], G, ARR(d)));
done:
    tfree(&T);
    return s;
}

static ck_status tan_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return y2_poly(n, gout, gin, 1.0, 1.0); }
static ck_status tanh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return y2_poly(n, gout, gin, 1.0, -1.0); }

/* g / conj(r(c0 + c1 * x^2)), r sqrt or nothing, negated when neg */
static ck_status over_x2(ck_ag_node *n, const ck_array *gout, ck_array *gin, double c0, double c1, int root, int neg)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *x2 = tnew(&T), *t = tnew(&T), *d = tnew(&T), *r = tnew(&T), *q = tnew(&T);
    TRY(ck_ag_bin(CK_OP_MULTIPLY, X, X, x2));
    TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(x2), NUM(c1), t));
    TRY(ck_ag_bin(CK_OP_ADD, ARR(t), NUM(c0), d));
    if (root) {
        TRY(ck_ag_un(CK_OP_SQRT, ARR(d), r));
        d = r;
    }
    if (neg) {
        TRY(gdiv(q, G, ARR(d)));
        TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(q), &gin[0]));
    } else {
        TRY(gdiv(&gin[0], G, ARR(d)));
    }
done:
    tfree(&T);
    return s;
}

static ck_status arcsin_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, 1, -1, 1, 0); }
static ck_status arccos_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, 1, -1, 1, 1); }
static ck_status arctan_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, 1, 1, 0, 0); }
static ck_status arcsinh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, 1, 1, 1, 0); }
static ck_status arccosh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, -1, 1, 1, 0); }
static ck_status arctanh_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return over_x2(n, gout, gin, 1, -1, 0, 0); }

static ck_status deg2rad_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    return ck_ag_bin(CK_OP_MULTIPLY, ARR(G), NUM(M_PI / 180.0), &gin[0]);
}

static ck_status rad2deg_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    (void)n;
    return ck_ag_bin(CK_OP_MULTIPLY, ARR(G), NUM(180.0 / M_PI), &gin[0]);
}

/* ------------------------------------------------------------ binary */

static ck_status add_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    for (int i = 0; i < 2; i++)
        if (NEED(i)) ck_array_view(&gin[i], G);
    return CK_OK;
}

static ck_status subtract_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    if (NEED(0)) ck_array_view(&gin[0], G);
    if (NEED(1)) return ck_ag_un(CK_OP_NEGATIVE, ARR(G), &gin[1]);
    return CK_OK;
}

static ck_status multiply_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    if (NEED(0)) CK_AG_TRY(gmul(&gin[0], G, Y));
    if (NEED(1)) CK_AG_TRY(gmul(&gin[1], G, X));
    return CK_OK;
}

static ck_status divide_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s;
    tmps T = {.n = 0};
    ck_array *ga = tnew(&T), *t = tnew(&T);
    TRY(gdiv(ga, G, Y));
    if (NEED(1)) {
        /* d(a/b)/db = -(a/b)/b */
        TRY(gmul(t, ga, OUT));
        TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(t), &gin[1]));
    }
    if (NEED(0)) {
        gin[0] = *ga;
        memset(ga, 0, sizeof *ga);
    }
done:
    tfree(&T);
    return s;
}

static ck_status power_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    ck_operand a = X, b = Y;
    if (NEED(0)) {
        if (!b.array && !ck_dtype_is_complex(b.scalar.dtype)) {
            double e = ck_dtype_is_float(b.scalar.dtype) ? b.scalar.v.f
                     : b.scalar.dtype == CK_UINT64 ? (double)b.scalar.v.u : (double)b.scalar.v.i;
            if (e == 0.0) {
                TRY(zeros_like_g(&gin[0], G));
            } else if (e == 1.0) {
                ck_array_view(&gin[0], G);
            } else if (e == 2.0) {
                ck_array *d = tnew(&T);
                TRY(ck_ag_bin(CK_OP_MULTIPLY, a, NUM(2.0), d));
                TRY(gmul(&gin[0], G, ARR(d)));
            } else {
                ck_array *p = tnew(&T), *d = tnew(&T);
                TRY(ck_ag_bin(CK_OP_POWER, a, NUM(e - 1.0), p));
                TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(p), NUM(e), d));
                TRY(gmul(&gin[0], G, ARR(d)));
            }
        } else {
            ck_array *bm1 = tnew(&T), *p = tnew(&T), *d = tnew(&T);
            TRY(ck_ag_bin(CK_OP_SUBTRACT, b, NUM(1.0), bm1));
            TRY(ck_ag_bin(CK_OP_POWER, a, ARR(bm1), p));
            TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(p), b, d));
            TRY(gmul(&gin[0], G, ARR(d)));
        }
    }
    if (NEED(1)) {
        /* g * conj(y log a), 0 where a == 0 and b >= 0 (the limit), as PyTorch */
        ck_array *la = tnew(&T), *d = tnew(&T), *z = tnew(&T), *bp = tnew(&T), *m = tnew(&T), *dm = tnew(&T);
        if (a.array) {
            TRY(ck_ag_un(CK_OP_LOG, a, la));
            TRY(ck_ag_bin(CK_OP_MULTIPLY, OUT, ARR(la), d));
            TRY(ck_ag_bin(CK_OP_EQUAL, a, NUM(0.0), z));
            TRY(ck_ag_bin(CK_OP_GREATER_EQUAL, b, NUM(0.0), bp));
            TRY(ck_ag_bin(CK_OP_LOGICAL_AND, ARR(z), ARR(bp), m));
            ck_operand w[3] = {ARR(m), NUM(0.0), ARR(d)};
            TRY(ck_ufunc_apply(CK_OP_WHERE, 3, w, dm, 0, CK_DTYPE_INVALID));
            TRY(gmul(&gin[1], G, ARR(dm)));
        } else {
            if (ck_dtype_is_complex(a.scalar.dtype))
                return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "autograd: the gradient of power with respect to the "
                                    "exponent of a complex scalar base is not implemented");
            double base = ck_dtype_is_float(a.scalar.dtype) ? a.scalar.v.f
                        : a.scalar.dtype == CK_UINT64 ? (double)a.scalar.v.u : (double)a.scalar.v.i;
            TRY(ck_ag_bin(CK_OP_MULTIPLY, OUT, NUM(base == 0.0 ? 0.0 : log(base)), d));
            TRY(gmul(&gin[1], G, ARR(d)));
        }
    }
done:
    tfree(&T);
    return s;
}

/* maximum / minimum (cmp GREATER / LESS): the gradient goes to the input
 * that won; a tie between two arrays splits it in halves, as PyTorch's
 * maximum.  Against a scalar (relu as maximum(x, 0)) a tie gives 0, as
 * PyTorch's relu, for two kernels a call. */
static ck_status extremum_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin, ck_op cmp, int nan_loses)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    ck_operand ab[2] = {X, Y};
    int tie = ab[0].array && ab[1].array;
    for (int i = 0; i < 2; i++) {
        if (!NEED(i)) continue;
        ck_array *w = tnew(&T);
        TRY(ck_ag_bin(cmp, ab[i], ab[1 - i], w));
        if (nan_loses) {
            /* fmax/fmin: the other input wins when it is NaN */
            ck_array *nn = tnew(&T), *w2 = tnew(&T);
            TRY(ck_ag_un(CK_OP_ISNAN, ab[1 - i], nn));
            TRY(ck_ag_bin(CK_OP_LOGICAL_OR, ARR(w), ARR(nn), w2));
            w = w2;
        }
        if (tie) {
            ck_array *e = tnew(&T), *h = tnew(&T), *other = tnew(&T);
            TRY(ck_ag_bin(CK_OP_EQUAL, ab[0], ab[1], e));
            TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(G), NUM(0.5), h));
            ck_operand w1[3] = {ARR(e), ARR(h), NUM(0.0)};
            TRY(ck_ufunc_apply(CK_OP_WHERE, 3, w1, other, 0, CK_DTYPE_INVALID));
            ck_operand w0[3] = {ARR(w), ARR(G), ARR(other)};
            TRY(ck_ufunc_apply(CK_OP_WHERE, 3, w0, &gin[i], 0, CK_DTYPE_INVALID));
        } else {
            ck_operand w0[3] = {ARR(w), ARR(G), NUM(0.0)};
            TRY(ck_ufunc_apply(CK_OP_WHERE, 3, w0, &gin[i], 0, CK_DTYPE_INVALID));
        }
    }
done:
    tfree(&T);
    return s;
}

static ck_status maximum_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return extremum_bw(n, gout, gin, CK_OP_GREATER, 0); }
static ck_status minimum_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return extremum_bw(n, gout, gin, CK_OP_LESS, 0); }
static ck_status fmax_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return extremum_bw(n, gout, gin, CK_OP_GREATER, 1); }
static ck_status fmin_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return extremum_bw(n, gout, gin, CK_OP_LESS, 1); }

static ck_status copysign_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    if (NEED(0)) {
        ck_array *sa = tnew(&T), *sy = tnew(&T), *d = tnew(&T);
        TRY(ck_ag_un(CK_OP_SIGN, X, sa));
        TRY(ck_ag_un(CK_OP_SIGN, OUT, sy));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(sa), ARR(sy), d));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(G), ARR(d), &gin[0]));
    }
    if (NEED(1)) TRY(zeros_like_g(&gin[1], G));
done:
    tfree(&T);
    return s;
}

static ck_status hypot_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    ck_operand ab[2] = {X, Y};
    for (int i = 0; i < 2; i++) {
        if (!NEED(i)) continue;
        ck_array *d = tnew(&T);
        TRY(ck_ag_bin(CK_OP_TRUE_DIVIDE, ab[i], OUT, d));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(G), ARR(d), &gin[i]));
    }
done:
    tfree(&T);
    return s;
}

static ck_status arctan2_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    ck_array *a2 = tnew(&T), *b2 = tnew(&T), *den = tnew(&T), *q = tnew(&T);
    TRY(ck_ag_bin(CK_OP_MULTIPLY, X, X, a2));
    TRY(ck_ag_bin(CK_OP_MULTIPLY, Y, Y, b2));
    TRY(ck_ag_bin(CK_OP_ADD, ARR(a2), ARR(b2), den));
    TRY(ck_ag_bin(CK_OP_TRUE_DIVIDE, ARR(G), ARR(den), q));
    if (NEED(0)) TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(q), Y, &gin[0]));
    if (NEED(1)) {
        ck_array *t = tnew(&T);
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(q), X, t));
        TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(t), &gin[1]));
    }
done:
    tfree(&T);
    return s;
}

static ck_status logaddexp_common(ck_ag_node *n, const ck_array *gout, ck_array *gin, ck_op e)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    ck_operand ab[2] = {X, Y};
    for (int i = 0; i < 2; i++) {
        if (!NEED(i)) continue;
        ck_array *t = tnew(&T), *d = tnew(&T);
        TRY(ck_ag_bin(CK_OP_SUBTRACT, ab[i], OUT, t));
        TRY(ck_ag_un(e, ARR(t), d));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(G), ARR(d), &gin[i]));
    }
done:
    tfree(&T);
    return s;
}

static ck_status logaddexp_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return logaddexp_common(n, gout, gin, CK_OP_EXP); }
static ck_status logaddexp2_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return logaddexp_common(n, gout, gin, CK_OP_EXP2); }

/* fmod / remainder: d/da = 1, d/db = -round(a / b) (trunc / floor) */
static ck_status mod_common(ck_ag_node *n, const ck_array *gout, ck_array *gin, ck_op round)
{
    ck_status s = CK_OK;
    tmps T = {.n = 0};
    if (NEED(0)) ck_array_view(&gin[0], G);
    if (NEED(1)) {
        ck_array *q = tnew(&T), *r = tnew(&T), *t = tnew(&T);
        TRY(ck_ag_bin(CK_OP_TRUE_DIVIDE, X, Y, q));
        TRY(ck_ag_un(round, ARR(q), r));
        TRY(ck_ag_bin(CK_OP_MULTIPLY, ARR(G), ARR(r), t));
        TRY(ck_ag_un(CK_OP_NEGATIVE, ARR(t), &gin[1]));
    }
done:
    tfree(&T);
    return s;
}

static ck_status fmod_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return mod_common(n, gout, gin, CK_OP_TRUNC); }
static ck_status remainder_bw(ck_ag_node *n, const ck_array *gout, ck_array *gin) { return mod_common(n, gout, gin, CK_OP_FLOOR); }

#define IN CK_AG_SAVE_INPUTS
#define OU CK_AG_SAVE_OUTPUT

const ck_ag_rule ck_ag_rules_elementwise[] = {
    {"negative", negative_bw, 0, NULL},
    {"positive", positive_bw, 0, NULL},
    {"absolute", absolute_bw, IN, NULL},
    {"sign", zero_bw, 0, NULL},
    {"conjugate", conjugate_bw, 0, NULL},
    {"square", one_step_bw, IN, STEP(CK_OP_MULTIPLY, 2.0, 0, 0)},            /* g * 2x */
    {"reciprocal", reciprocal_bw, OU, NULL},
    {"sqrt", one_step_bw, OU, STEP(CK_OP_TRUE_DIVIDE, 0.5, 1, 0)},          /* g * (0.5 / y) */
    {"cbrt", cbrt_bw, OU, NULL},
    {"exp", exp_bw, OU, NULL},
    {"exp2", one_step_bw, OU, STEP(CK_OP_MULTIPLY, M_LN2, 0, 0)},           /* g * (y ln 2) */
    {"expm1", one_step_bw, OU, STEP(CK_OP_ADD, 1.0, 0, 0)},                 /* g * (y + 1) */
    {"log", log_bw, IN, NULL},
    {"log2", one_step_bw, IN, STEP(CK_OP_MULTIPLY, M_LN2, 0, 1)},           /* g / (x ln 2) */
    {"log10", one_step_bw, IN, STEP(CK_OP_MULTIPLY, M_LN10, 0, 1)},         /* g / (x ln 10) */
    {"log1p", one_step_bw, IN, STEP(CK_OP_ADD, 1.0, 0, 1)},                 /* g / (x + 1) */
    {"sin", sin_bw, IN, NULL},
    {"cos", cos_bw, IN, NULL},
    {"tan", tan_bw, OU, NULL},
    {"arcsin", arcsin_bw, IN, NULL},
    {"arccos", arccos_bw, IN, NULL},
    {"arctan", arctan_bw, IN, NULL},
    {"sinh", sinh_bw, IN, NULL},
    {"cosh", cosh_bw, IN, NULL},
    {"tanh", tanh_bw, OU, NULL},
    {"arcsinh", arcsinh_bw, IN, NULL},
    {"arccosh", arccosh_bw, IN, NULL},
    {"arctanh", arctanh_bw, IN, NULL},
    {"deg2rad", deg2rad_bw, 0, NULL},
    {"rad2deg", rad2deg_bw, 0, NULL},
    {"floor", zero_bw, 0, NULL},
    {"ceil", zero_bw, 0, NULL},
    {"trunc", zero_bw, 0, NULL},
    {"rint", zero_bw, 0, NULL},
    {"add", add_bw, 0, NULL},
    {"subtract", subtract_bw, 0, NULL},
    {"multiply", multiply_bw, IN, NULL},
    {"divide", divide_bw, IN | OU, NULL},
    {"floor_divide", zero_bw, 0, NULL},
    {"remainder", remainder_bw, IN, NULL},
    {"fmod", fmod_bw, IN, NULL},
    {"power", power_bw, IN | OU, NULL},
    {"maximum", maximum_bw, IN, NULL},
    {"minimum", minimum_bw, IN, NULL},
    {"fmax", fmax_bw, IN, NULL},
    {"fmin", fmin_bw, IN, NULL},
    {"copysign", copysign_bw, IN | OU, NULL},
    {"hypot", hypot_bw, IN | OU, NULL},
    {"arctan2", arctan2_bw, IN, NULL},
    {"logaddexp", logaddexp_bw, IN | OU, NULL},
    {"logaddexp2", logaddexp2_bw, IN | OU, NULL},
    {NULL, NULL, 0, NULL},
};
