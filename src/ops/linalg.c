/* Matrix products: numpy.matmul's shape and dtype rules, then one call into
 * the backend with a ck_matmul_desc (see cudakit_linalg.h). */
#include "ops_internal.h"

#include <string.h>

static int allow_tf32_;

void ck_matmul_set_allow_tf32(int allow) { __atomic_store_n(&allow_tf32_, allow ? 1 : 0, __ATOMIC_RELAXED); }
int ck_matmul_allow_tf32(void) { return __atomic_load_n(&allow_tf32_, __ATOMIC_RELAXED); }

#define SIG "gufunc signature (n?,k),(k,m?)->(n?,m?)"

/* The matrix part of x (its last two dims; a 1-d x is a row when first,
 * a column when second) as rows, cols and byte strides. */
static void matrix_of(const ck_array *x, int first, int64_t *rows, int64_t *cols, int64_t *rs, int64_t *cs)
{
    int nd = x->ndim;
    if (nd == 1) {
        if (first) { *rows = 1; *rs = 0; *cols = x->shape[0]; *cs = x->strides[0]; }
        else { *rows = x->shape[0]; *rs = x->strides[0]; *cols = 1; *cs = 0; }
        return;
    }
    *rows = x->shape[nd - 2];
    *cols = x->shape[nd - 1];
    *rs = x->strides[nd - 2];
    *cs = x->strides[nd - 1];
}

/* Whether a BLAS reads x's matrices as they are (a multiple-of-itemsize
 * unit stride along one axis). */
static int blas_readable(const ck_array *x, int first)
{
    int64_t r, c, rs, cs, ld;
    int tr;
    const int64_t isz = ck_array_itemsize(x);
    matrix_of(x, first, &r, &c, &rs, &cs);
    if (rs % isz || cs % isz) return 0;
    for (int i = 0; i < x->ndim; i++)
        if (x->strides[i] % isz) return 0;
    return ck_gemm_matrix_ok(r, c, rs / isz, cs / isz, &tr, &ld);
}

/* The operand x (cast to t; copied to C order when a BLAS could not read
 * it and t is a BLAS type) into *y, a new reference. */
static ck_status prepare(ck_array *y, const ck_array *x, ck_dtype t, int first)
{
    if (x->dtype != t) return ck_array_astype(y, x, t, 0);
    if (ck_dtype_is_inexact(t) && !blas_readable(x, first)) return ck_array_astype(y, x, t, 0);
    ck_array_view(y, x);
    return CK_OK;
}

/* Byte strides of x's batch dims aligned from the right with nb result
 * batch dims; 0 where x lacks or broadcasts a dim. */
static void batch_strides(const ck_array *x, int nb, int64_t *bs)
{
    int xb = x->ndim > 2 ? x->ndim - 2 : 0;
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - xb);
        bs[i] = (j < 0 || x->shape[j] == 1) ? 0 : x->strides[j];
    }
}

ck_status ck_matmul(ck_array *out, const ck_array *a, const ck_array *b, int out_given)
{
    char da[32], db[32];
    ck_device dev = ck_array_device(a);
    if (!ck_device_equal(dev, ck_array_device(b)) || (out_given && !ck_device_equal(dev, ck_array_device(out)))) {
        const ck_array *other = !ck_device_equal(dev, ck_array_device(b)) ? b : out;
        ck_device_str(dev, da, sizeof da);
        ck_device_str(ck_array_device(other), db, sizeof db);
        return ck_error_set(CK_ERR_VALUE, "matmul: arrays are on different devices: %s and %s; "
                                          "move one with .to_device() first", da, db);
    }
    for (int i = 0; i < 2; i++)
        if ((i ? b : a)->ndim == 0)
            return ck_error_set(CK_ERR_VALUE, "matmul: Input operand %d does not have enough dimensions "
                                              "(has 0, " SIG " requires 1)", i);
    ck_dtype t = ck_dtype_promote(a->dtype, b->dtype);
    if (t == CK_DTYPE_INVALID)
        return ck_error_set(CK_ERR_TYPE, "matmul: no common dtype for %s and %s", ck_dtype_get_info(a->dtype)->name,
                            ck_dtype_get_info(b->dtype)->name);
    int64_t m, k, kb, n, rs, cs;
    matrix_of(a, 1, &m, &k, &rs, &cs);
    matrix_of(b, 0, &kb, &n, &rs, &cs);
    if (k != kb)
        return ck_error_set(CK_ERR_VALUE, "matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                                          SIG " (size %lld is different from %lld)", (long long)kb, (long long)k);
    int nds[2] = {a->ndim > 2 ? a->ndim - 2 : 0, b->ndim > 2 ? b->ndim - 2 : 0};
    const int64_t *shs[2] = {a->shape, b->shape};
    int nb;
    int64_t rshape[CK_MAXDIMS + 2];
    ck_status s = ck_broadcast_shapes(2, nds, shs, &nb, rshape);
    if (s != CK_OK) return s;
    int rnd = nb;
    if (a->ndim > 1) rshape[rnd++] = m;
    if (b->ndim > 1) rshape[rnd++] = n;
    if (rnd > CK_MAXDIMS) return ck_error_set(CK_ERR_VALUE, "matmul: the result would have more than %d dimensions", CK_MAXDIMS);

    if (out_given) {
        if (out->ndim != rnd || memcmp(out->shape, rshape, (size_t)rnd * sizeof *rshape) != 0)
            return ck_error_set(CK_ERR_VALUE, "matmul: Output operand 0 has shape %s, the product has shape %s",
                                ck_shape_str(out->ndim, out->shape, 0), ck_shape_str(rnd, rshape, 1));
        if (!ck_dtype_can_cast_same_kind(t, out->dtype))
            return ck_error_set(CK_ERR_CAST_OUTPUT, "Cannot cast ufunc 'matmul' output from dtype('%s') to dtype('%s') "
                                             "with casting rule 'same_kind'", ck_dtype_get_info(t)->name,
                                ck_dtype_get_info(out->dtype)->name);
        if (!(out->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "output array is read-only");
    }
    const ck_backend_iface *be = ck_backend_for(dev);
    if (!be->matmul) {
        ck_device_str(dev, da, sizeof da);
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "matmul on %s has no backend product (the CPU's is NumPy's, "
                                                    "called by cudakit.matmul)", da);
    }

    ck_array ac, bc, res;
    memset(&res, 0, sizeof res);
    s = prepare(&ac, a, t, 1);
    if (s != CK_OK) return s;
    s = prepare(&bc, b, t, 0);
    if (s != CK_OK) { ck_array_release(&ac); return s; }

    /* write into out itself when the backend can and nothing overlaps */
    int direct = 0;
    if (out_given && out->dtype == t && !ck_array_may_overlap(out, a) && !ck_array_may_overlap(out, b)) {
        int64_t isz = ck_array_itemsize(out), crs = a->ndim > 1 ? out->strides[nb] : 0;
        int64_t ccs = b->ndim > 1 ? out->strides[rnd - 1] : 0, ld;
        int tr, aligned = crs % isz == 0 && ccs % isz == 0;
        for (int i = 0; i < nb; i++) aligned &= out->strides[i] % isz == 0;
        direct = aligned && ck_gemm_matrix_ok(m, n, crs / isz, ccs / isz, &tr, &ld) && !tr;
    }
    if (direct) ck_array_view(&res, out);
    else s = ck_array_empty(&res, rnd, rshape, t, dev);

    if (s == CK_OK && res.size > 0) {
        if (k == 0) {
            ck_scalar zero;
            memset(&zero, 0, sizeof zero);
            zero.dtype = CK_BOOL;
            s = ck_array_fill(&res, &zero);
        } else {
            ck_matmul_desc d;
            memset(&d, 0, sizeof d);
            d.dev = dev;
            d.type = t;
            d.allow_tf32 = ck_matmul_allow_tf32();
            d.m = m;
            d.n = n;
            d.k = k;
            d.nbatch = nb;
            memcpy(d.batch_shape, rshape, (size_t)nb * sizeof *rshape);
            int64_t r_, c_;
            d.a.data = ac.data;
            matrix_of(&ac, 1, &r_, &c_, &d.a.rs, &d.a.cs);
            batch_strides(&ac, nb, d.a.bs);
            d.b.data = bc.data;
            matrix_of(&bc, 0, &r_, &c_, &d.b.rs, &d.b.cs);
            batch_strides(&bc, nb, d.b.bs);
            d.c.data = res.data;
            d.c.rs = a->ndim > 1 ? res.strides[nb] : 0;
            d.c.cs = b->ndim > 1 ? res.strides[rnd - 1] : 0;
            for (int i = 0; i < nb; i++) d.c.bs[i] = res.strides[i];
            s = be->matmul(&d);
        }
    }
    ck_array_release(&ac);
    ck_array_release(&bc);
    if (s != CK_OK) {
        if (res.buf) ck_array_release(&res);
        return s;
    }
    if (out_given) {
        if (!direct) s = ck_array_assign(out, &res);
        ck_array_release(&res);
        return s;
    }
    *out = res;
    return CK_OK;
}

/* ------------------------------------------------------ FFT and solvers */

ck_status ck_fft_exec(const ck_fft_desc *d)
{
    const ck_backend_iface *be = ck_backend_require(d->dev);
    if (!be) return ck_error_status();
    if (!be->fft)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "the %s backend has no FFT (on the CPU ck.fft runs NumPy's)",
                            be->name);
    if (d->rank < 1 || d->rank > 3 || d->batch < 0 || (int)d->kind < 0 || d->kind > CK_FFT_C2R)
        return ck_error_set(CK_ERR_VALUE, "an FFT of rank %d, kind %d and batch %lld is not valid", d->rank,
                            (int)d->kind, (long long)d->batch);
    return be->fft(d);
}

ck_status ck_solver_exec(const ck_solver_desc *d)
{
    const ck_backend_iface *be = ck_backend_require(d->dev);
    if (!be) return ck_error_status();
    if (!be->solver)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "the %s backend has no dense solver (on the CPU ck.linalg runs "
                            "NumPy's LAPACK)", be->name);
    return be->solver(d);
}
