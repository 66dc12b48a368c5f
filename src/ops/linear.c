/* The fused linear layer (include/cudakit_linear.h): shape and dtype
 * checks, the operands as row-major matrices (views when they already
 * are: unit column stride; copies otherwise), then each product as one
 * call of the backend's linear slot with its epilogue.  Where the backend
 * has no such slot (the CPU) or declines the case, the same product is
 * composed: the device's matmul (the registered host product on the CPU),
 * ck_bias_act's epilogue pass and a column sum. */
#include "ops_internal.h"
#include "cudakit_linalg.h"
#include "cudakit_linear.h"

#include <string.h>

static ck_linear_gemm_fn host_gemm_;

void ck_linear_set_host_gemm(ck_linear_gemm_fn fn) { host_gemm_ = fn; }

static ck_status same_device(const ck_array *a, const ck_array *b)
{
    if (ck_device_equal(ck_array_device(a), ck_array_device(b))) return CK_OK;
    char da[32], db[32];
    ck_device_str(ck_array_device(a), da, sizeof da);
    ck_device_str(ck_array_device(b), db, sizeof db);
    return ck_error_set(CK_ERR_VALUE, "linear: expected all arrays on one device, got %s and %s", da, db);
}

/* The row stride (elements) of a 2-d a that a BLAS reads as a row-major
 * matrix (unit column stride), or 0. */
static int64_t row_ld(const ck_array *a)
{
    const int64_t isz = ck_array_itemsize(a), rows = a->shape[0], cols = a->shape[1];
    if (cols > 1 && a->strides[1] != isz) return 0;
    if ((uintptr_t)a->data % (uintptr_t)isz) return 0;
    if (rows <= 1) return cols > 1 ? cols : 1;
    if (a->strides[0] % isz || a->strides[0] / isz < (cols > 1 ? cols : 1)) return 0;
    return a->strides[0] / isz;
}

/* a (2-d) of dtype dt that row_ld accepts: a view, or a C-order copy. */
static ck_status as_matrix(ck_array *out, const ck_array *a, ck_dtype dt)
{
    if (a->dtype == dt && row_ld(a)) {
        ck_array_view(out, a);
        return CK_OK;
    }
    return ck_array_astype(out, a, dt, 0);
}

/* a @ b of 2-d arrays on their device. */
static ck_status gemm2(ck_array *out, const ck_array *a, const ck_array *b)
{
    const ck_backend_iface *be = ck_backend_for(ck_array_device(a));
    if (be->matmul || !host_gemm_) return ck_matmul(out, a, b, 0);
    return host_gemm_(out, a, b);
}

/* *d = op(a) @ op(b) with epilogue epi (a, b row-major matrices of one
 * float dtype); bias: read (BIAS, RELU_BIAS) or, for BGRAD_A, *bias_out =
 * op(a)'s row sums, a new (m,) array. */
static ck_status gemm_epi(ck_array *d, const ck_array *a, int ta, const ck_array *b, int tb, ck_linear_epi epi,
                          const ck_array *bias, ck_array *bias_out)
{
    const ck_dtype dt = a->dtype;
    const ck_device dev = ck_array_device(a);
    const int64_t m = a->shape[ta ? 1 : 0], k = a->shape[ta ? 0 : 1], n = b->shape[tb ? 0 : 1];
    const ck_backend_iface *be = ck_backend_for(dev);
    ck_status s;
    memset(d, 0, sizeof *d);
    if (bias_out) memset(bias_out, 0, sizeof *bias_out);
    if (be->linear && m > 0 && n > 0 && k > 0) {
        int64_t shape[2] = {m, n};
        if ((s = ck_array_empty(d, 2, shape, dt, dev)) != CK_OK) return s;
        if (epi == CK_LINEAR_EPI_BGRAD_A && (s = ck_array_empty(bias_out, 1, &m, dt, dev)) != CK_OK) {
            ck_array_release(d);
            return s;
        }
        ck_linear_desc ld = {.dev = dev, .type = dt, .allow_tf32 = ck_matmul_allow_tf32(), .epi = epi,
                             .m = m, .n = n, .k = k, .a = a->data, .b = b->data, .d = d->data,
                             .lda = row_ld(a), .ldb = row_ld(b), .ldd = n, .ta = ta, .tb = tb,
                             .bias = epi == CK_LINEAR_EPI_BGRAD_A ? bias_out->data : bias ? bias->data : NULL};
        s = be->linear(&ld);
        if (s == CK_OK) return CK_OK;
        ck_array_release(d);
        if (bias_out && bias_out->buf) ck_array_release(bias_out);
        if (s != CK_ERR_NOT_IMPLEMENTED) return s;
        ck_error_clear();
    }
    /* composed: the product, then the epilogue's pass */
    ck_array at, bt;
    if (ta) s = ck_array_transpose(&at, a, NULL);
    else ck_array_view(&at, a), s = CK_OK;
    if (s != CK_OK) return s;
    if (tb) s = ck_array_transpose(&bt, b, NULL);
    else ck_array_view(&bt, b), s = CK_OK;
    if (s != CK_OK) {
        ck_array_release(&at);
        return s;
    }
    ck_array r;
    s = gemm2(&r, &at, &bt);
    if (s == CK_OK) {
        /* a product is new and C-ordered; anything else (the host's) is copied */
        if (r.dtype != dt || !(r.flags & CK_ARRAY_C_CONTIGUOUS) || !(r.flags & CK_ARRAY_WRITEABLE) ||
            (r.buf && r.buf->readonly)) {
            s = ck_array_astype(d, &r, dt, 0);
            ck_array_release(&r);
        } else {
            *d = r;
        }
    }
    if (s == CK_OK && epi != CK_LINEAR_EPI_NONE && epi != CK_LINEAR_EPI_BGRAD_A) {
        const int relu = epi == CK_LINEAR_EPI_RELU || epi == CK_LINEAR_EPI_RELU_BIAS;
        s = ck_bias_act(d, epi == CK_LINEAR_EPI_RELU ? NULL : bias, relu ? CK_ACT_RELU : CK_ACT_NONE, NULL);
    }
    if (s == CK_OK && epi == CK_LINEAR_EPI_BGRAD_A) s = ck_reduce(CK_REDUCE_SUM, &at, 2u, 0, dt, bias_out, 0);
    if (s != CK_OK && d->buf) ck_array_release(d);
    ck_array_release(&at);
    ck_array_release(&bt);
    return s;
}

/* The forward's dtype: the float the operands promote to. */
static ck_status linear_type(const ck_array *x, const ck_array *w, const ck_array *b, ck_dtype *out)
{
    ck_dtype t = ck_dtype_promote(x->dtype, w->dtype);
    if (b && t != CK_DTYPE_INVALID) t = ck_dtype_promote(t, b->dtype);
    if (t == CK_DTYPE_INVALID || !ck_dtype_is_float(t) || !ck_dtype_is_float(x->dtype) || !ck_dtype_is_float(w->dtype) ||
        (b && !ck_dtype_is_float(b->dtype)))
        return ck_error_set(CK_ERR_TYPE, "linear: expected float16, float32 or float64 operands, got %s, %s%s%s",
                            ck_dtype_get_info(x->dtype)->name, ck_dtype_get_info(w->dtype)->name, b ? " and " : "",
                            b ? ck_dtype_get_info(b->dtype)->name : "");
    *out = t;
    return CK_OK;
}

/* x (..., K) as an (M, K) matrix of dtype dt. */
static ck_status x_matrix(ck_array *out, const ck_array *x, ck_dtype dt)
{
    const int64_t K = x->shape[x->ndim - 1];
    int64_t shape[2] = {1, K};
    for (int i = 0; i < x->ndim - 1; i++) shape[0] *= x->shape[i];
    ck_array r;
    ck_status s = ck_array_reshape(&r, x, 2, shape, 0);
    if (s != CK_OK) return s;
    s = as_matrix(out, &r, dt);
    ck_array_release(&r);
    return s;
}

static ck_status check_shapes(const ck_array *x, const ck_array *w, const ck_array *b)
{
    if (x->ndim < 1 || w->ndim != 2)
        return ck_error_set(CK_ERR_VALUE, "linear: expected an input of at least 1 dimension and a 2-d weight, got %s "
                            "and %s", ck_shape_str(x->ndim, x->shape, 0), ck_shape_str(w->ndim, w->shape, 1));
    if (x->shape[x->ndim - 1] != w->shape[1])
        return ck_error_set(CK_ERR_VALUE, "linear: mat1 and mat2 shapes cannot be multiplied (input %s, weight %s: "
                            "the input's last dimension must be the weight's second)",
                            ck_shape_str(x->ndim, x->shape, 0), ck_shape_str(w->ndim, w->shape, 1));
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
        return ck_error_set(CK_ERR_VALUE, "linear: the bias has shape %s, expected (%lld,)",
                            ck_shape_str(b->ndim, b->shape, 0), (long long)w->shape[0]);
    ck_status s = same_device(x, w);
    if (s == CK_OK && b) s = same_device(x, b);
    return s;
}

/* y's shape: x's with the last dimension N. */
static void out_shape(const ck_array *x, int64_t n, int64_t *shape)
{
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    shape[x->ndim - 1] = n;
}

ck_status ck_linear(ck_array *y, const ck_array *x, const ck_array *w, const ck_array *b, ck_act act,
                    ck_array *saved)
{
    if ((unsigned)act >= CK_ACT_COUNT) return ck_error_set(CK_ERR_VALUE, "linear: unknown activation %d", (int)act);
    ck_status s = check_shapes(x, w, b);
    ck_dtype dt;
    if (s == CK_OK) s = linear_type(x, w, b, &dt);
    if (s != CK_OK) return s;
    if (saved) memset(saved, 0, sizeof *saved);
    ck_array x2, w2, b1 = {0}, d, pre = {0};
    memset(&d, 0, sizeof d);
    if ((s = x_matrix(&x2, x, dt)) != CK_OK) return s;
    if ((s = as_matrix(&w2, w, dt)) != CK_OK) goto out_x;
    if (b && (s = b->dtype == dt && b->strides[0] == ck_array_itemsize(b) ? (ck_array_view(&b1, b), CK_OK)
                                                                             : ck_array_astype(&b1, b, dt, 0)) != CK_OK)
        goto out_w;
    ck_linear_epi epi = b ? CK_LINEAR_EPI_BIAS : CK_LINEAR_EPI_NONE;
    if (act == CK_ACT_RELU) epi = b ? CK_LINEAR_EPI_RELU_BIAS : CK_LINEAR_EPI_RELU;
    s = gemm_epi(&d, &x2, 0, &w2, 1, epi, b ? &b1 : NULL, NULL);
    if (s == CK_OK && act != CK_ACT_NONE && act != CK_ACT_RELU) s = ck_bias_act(&d, NULL, act, &pre);
    if (s == CK_OK) {
        int64_t shape[CK_MAXDIMS];
        out_shape(x, w->shape[0], shape);
        s = ck_array_reshape(y, &d, x->ndim, shape, 0);
    }
    if (s == CK_OK && saved) {
        if (act == CK_ACT_RELU) ck_array_view(saved, y);
        else if (pre.buf) ck_array_view(saved, &pre);
    }
    if (d.buf) ck_array_release(&d);
    if (pre.buf) ck_array_release(&pre);
    if (b1.buf) ck_array_release(&b1);
out_w:
    ck_array_release(&w2);
out_x:
    ck_array_release(&x2);
    return s;
}

ck_status ck_linear_backward(const ck_array *g, const ck_array *x, const ck_array *w, int has_bias, ck_act act,
                             const ck_array *saved, ck_array *gx, ck_array *gw, ck_array *gb)
{
    if ((unsigned)act >= CK_ACT_COUNT) return ck_error_set(CK_ERR_VALUE, "linear: unknown activation %d", (int)act);
    ck_status s = check_shapes(x, w, NULL);
    ck_dtype dt;
    if (s == CK_OK) s = linear_type(x, w, NULL, &dt);
    if (s == CK_OK) s = same_device(x, g);
    if (s != CK_OK) return s;
    if (ck_dtype_is_float(g->dtype)) dt = ck_dtype_promote(dt, g->dtype);
    if (act != CK_ACT_NONE && (!saved || !saved->buf))
        return ck_error_set(CK_ERR_VALUE, "linear backward: the activation's saved array is missing");
    if (!has_bias) gb = NULL;
    if (gx) memset(gx, 0, sizeof *gx);
    if (gw) memset(gw, 0, sizeof *gw);
    if (gb) memset(gb, 0, sizeof *gb);
    const int64_t N = w->shape[0];
    int64_t gshape[2] = {1, N};
    for (int i = 0; i < x->ndim - 1; i++) gshape[0] *= x->shape[i];
    if (g->size != gshape[0] * gshape[1])
        return ck_error_set(CK_ERR_VALUE, "linear backward: the gradient has shape %s for an output of %lld x %lld",
                            ck_shape_str(g->ndim, g->shape, 0), (long long)gshape[0], (long long)N);
    ck_array g2r, g2, gp, x2 = {0}, w2 = {0}, t = {0};
    memset(&gp, 0, sizeof gp);
    if ((s = ck_array_reshape(&g2r, g, 2, gshape, 0)) != CK_OK) return s;
    s = as_matrix(&g2, &g2r, dt);
    ck_array_release(&g2r);
    if (s != CK_OK) return s;
    if (act != CK_ACT_NONE) {
        ck_array sv;
        if ((s = ck_array_reshape(&sv, saved, 2, gshape, 0)) == CK_OK) {
            ck_array svc;
            if ((s = as_matrix(&svc, &sv, dt)) == CK_OK) {
                s = ck_bias_act_backward(&gp, &g2, &svc, act);
                ck_array_release(&svc);
            }
            ck_array_release(&sv);
        }
    } else {
        ck_array_view(&gp, &g2);
    }
    ck_array_release(&g2);
    if (s != CK_OK) return s;
    if (gx) {
        if ((s = as_matrix(&w2, w, dt)) == CK_OK && (s = gemm_epi(&t, &gp, 0, &w2, 0, CK_LINEAR_EPI_NONE, NULL, NULL)) == CK_OK) {
            s = ck_array_reshape(gx, &t, x->ndim, x->shape, 0);
            ck_array_release(&t);
        }
        if (s != CK_OK) goto done;
    }
    if (gw) {
        if ((s = x_matrix(&x2, x, dt)) == CK_OK &&
            (s = gemm_epi(gw, &gp, 1, &x2, 0, gb ? CK_LINEAR_EPI_BGRAD_A : CK_LINEAR_EPI_NONE, NULL, gb)) == CK_OK)
            gb = NULL;   /* given by the product's epilogue */
        if (s != CK_OK) goto done;
    }
    if (gb) s = ck_reduce(CK_REDUCE_SUM, &gp, 1u, 0, dt, gb, 0);
done:
    if (s != CK_OK) {
        if (gx && gx->buf) ck_array_release(gx);
        if (gw && gw->buf) ck_array_release(gw);
    }
    if (x2.buf) ck_array_release(&x2);
    if (w2.buf) ck_array_release(&w2);
    ck_array_release(&gp);
    return s;
}
