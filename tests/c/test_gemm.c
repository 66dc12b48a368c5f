/* ck_matmul's op layer and the GEMM planning of src/array/gemm.c, without
 * a GPU: a stand-in "cuda" backend (the CPU's with a matmul slot) runs each
 * planned job the way the CUDA backend would - floating types through the
 * column-major call ck_gemm_job_to_blas makes (C^T = B^T A^T, read back by
 * a plain column-major loop, as cuBLAS would), integers and bool through
 * the strided row-major job (as the tiled kernel) - and every result is
 * compared with a reference written from numpy.matmul's definition.
 * Covers transposed, strided and negative-stride views, broadcast batches,
 * 1-d operands, mixed dtypes, k == 0, out= and the errors. */
#include "cudakit.h"
#include "../../src/array/gemm.h"
#include "../../src/backend/backend.h"

#include <math.h>
#include <string.h>

#include "ck_test.h"

static ck_backend_iface fake_;
static int jobs_, blas_jobs_;
static const ck_device G = {CK_DEVICE_CUDA, 0};

static void load(ck_dtype t, const char *p, double *re, double *im)
{
    ck_scalar s;
    ck_scalar_load(&s, t, p);
    *im = 0;
    if (ck_dtype_is_complex(t)) { *re = s.v.c.re; *im = s.v.c.im; }
    else if (ck_dtype_is_float(t)) *re = s.v.f;
    else if (t == CK_UINT8 || t == CK_UINT16 || t == CK_UINT32 || t == CK_UINT64) *re = (double)s.v.u;
    else *re = (double)s.v.i;
}

static void store(ck_dtype t, char *p, double re, double im)
{
    ck_scalar s;
    memset(&s, 0, sizeof s);
    if (ck_dtype_is_complex(t)) { s.dtype = CK_COMPLEX128; s.v.c.re = re; s.v.c.im = im; }
    else if (ck_dtype_is_float(t)) { s.dtype = CK_FLOAT64; s.v.f = re; }
    else if (t == CK_BOOL) { s.dtype = CK_BOOL; s.v.i = re != 0; }
    else { s.dtype = CK_INT64; s.v.i = (int64_t)re; }
    ck_scalar_store(&s, t, p);
}

/* cuBLAS's contract, in plain loops: C = op(A) op(B), column-major */
static void colmajor_gemm(const ck_blas_gemm *g, ck_dtype t)
{
    int isz = ck_dtype_get_info(t)->itemsize;
    for (int64_t bt = 0; bt < g->batch; bt++)
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double sr = 0, si = 0;
                for (int64_t p = 0; p < g->k; p++) {
                    int64_t ea = g->op_a ? p + i * g->lda : i + p * g->lda;
                    int64_t eb = g->op_b ? j + p * g->ldb : p + j * g->ldb;
                    double ar, ai, br, bi;
                    load(t, g->A + (bt * g->stride_a + ea) * isz, &ar, &ai);
                    load(t, g->B + (bt * g->stride_b + eb) * isz, &br, &bi);
                    sr += ar * br - ai * bi;
                    si += ar * bi + ai * br;
                }
                store(t, g->C + (bt * g->stride_c + i + j * g->ldc) * isz, sr, si);
            }
}

static ck_status fake_job(void *ctx, const ck_gemm_job *j)
{
    ck_dtype t = *(const ck_dtype *)ctx;
    int isz = ck_dtype_get_info(t)->itemsize;
    jobs_++;
    if (ck_dtype_is_inexact(t)) {
        ck_blas_gemm g;
        if (!ck_gemm_job_to_blas(j, &g)) return ck_error_set(CK_ERR_RUNTIME, "a job cuBLAS could not read");
        blas_jobs_++;
        colmajor_gemm(&g, t);
        return CK_OK;
    }
    for (int64_t bt = 0; bt < j->batch; bt++)
        for (int64_t r = 0; r < j->m; r++)
            for (int64_t c = 0; c < j->n; c++) {
                double acc = 0, x, y, im;
                for (int64_t p = 0; p < j->k; p++) {
                    load(t, j->a + (bt * j->a_bs + r * j->a_rs + p * j->a_cs) * isz, &x, &im);
                    load(t, j->b + (bt * j->b_bs + p * j->b_rs + c * j->b_cs) * isz, &y, &im);
                    acc = t == CK_BOOL ? (acc != 0 || (x != 0 && y != 0)) : acc + x * y;
                }
                store(t, j->c + (bt * j->c_bs + r * j->c_rs + c * j->c_cs) * isz, acc, 0);
            }
    return CK_OK;
}

static ck_status fake_matmul(const ck_matmul_desc *d) { return ck_gemm_for_each_job(d, fake_job, (void *)&d->type); }

/* ------------------------------------------------------------- arrays */

static uint64_t rng_ = 88172645463325252ull;
static int small(void)
{
    rng_ ^= rng_ << 13; rng_ ^= rng_ >> 7; rng_ ^= rng_ << 17;
    return (int)(rng_ % 5);
}

/* A new array on G of n elements (1-d), small values (complex: both parts). */
static void base_array(ck_array *a, int64_t n, ck_dtype t)
{
    OK(ck_array_empty(a, 1, &n, t, G));
    int isz = ck_dtype_get_info(t)->itemsize;
    for (int64_t i = 0; i < n; i++) store(t, a->data + i * isz, small() - (ck_dtype_is_signed(t) ? 2 : 0), small());
}

/* A view of base: shape, strides in elements, offset in elements. */
static void view(ck_array *v, const ck_array *base, int nd, const int64_t *shape, const int64_t *st, int64_t off)
{
    int64_t bst[CK_MAXDIMS];
    int isz = ck_array_itemsize(base);
    for (int i = 0; i < nd; i++) bst[i] = st[i] * isz;
    ck_array_view(v, base);
    v->data = base->data + off * isz;
    ck_array_set_layout(v, nd, shape, bst);
    ck_array_update_flags(v);
}

/* A C-contiguous array of the given shape (fresh values). */
static void cont(ck_array *v, int nd, const int64_t *shape, ck_dtype t)
{
    ck_array b;
    int64_t n = ck_shape_size(nd, shape), st[CK_MAXDIMS];
    base_array(&b, n ? n : 1, t);
    st[nd - 1 < 0 ? 0 : nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--) st[i] = st[i + 1] * shape[i + 1];
    view(v, &b, nd, shape, st, 0);
    ck_array_release(&b);
}

static void elem(const ck_array *a, const int64_t *idx, double *re, double *im)
{
    const char *p = a->data;
    for (int i = 0; i < a->ndim; i++) p += idx[i] * a->strides[i];
    load(a->dtype, p, re, im);
}

/* numpy.matmul by its definition; want has the expected shape */
static void check_result(const char *what, const ck_array *got, const ck_array *a, const ck_array *b, int rnd,
                         const int64_t *rshape, ck_dtype t)
{
    if (got->ndim != rnd || memcmp(got->shape, rshape, (size_t)rnd * 8) || got->dtype != t) {
        CHECK(0, "%s: shape/dtype (ndim %d dtype %d, want ndim %d dtype %d)", what, got->ndim, got->dtype, rnd, t);
        return;
    }
    int a1 = a->ndim == 1, b1 = b->ndim == 1;
    int nb = rnd - (a1 ? 0 : 1) - (b1 ? 0 : 1);
    int64_t k = a->shape[a->ndim - 1];
    double tol = t == CK_FLOAT16 ? 2e-2 : t == CK_FLOAT32 || t == CK_COMPLEX64 ? 1e-5 : 1e-12;
    int64_t idx[CK_MAXDIMS] = {0}, n = ck_shape_size(rnd, rshape);
    for (int64_t f = 0; f < n; f++) {
        int64_t r = f;
        for (int i = rnd - 1; i >= 0; i--) { idx[i] = r % rshape[i]; r /= rshape[i]; }
        int64_t i_ = a1 ? 0 : idx[nb], j_ = (b1 || rnd < 1) ? 0 : idx[rnd - 1];
        double sr = 0, si = 0;
        int any = 0;
        for (int64_t p = 0; p < k; p++) {
            int64_t ia[CK_MAXDIMS], ib[CK_MAXDIMS];
            for (int d = 0; d < a->ndim - 2; d++) {
                int rd = nb - (a->ndim - 2) + d;
                ia[d] = a->shape[d] == 1 ? 0 : idx[rd];
            }
            for (int d = 0; d < b->ndim - 2; d++) {
                int rd = nb - (b->ndim - 2) + d;
                ib[d] = b->shape[d] == 1 ? 0 : idx[rd];
            }
            if (a1) ia[0] = p; else { ia[a->ndim - 2] = i_; ia[a->ndim - 1] = p; }
            if (b1) ib[0] = p; else { ib[b->ndim - 2] = p; ib[b->ndim - 1] = j_; }
            double ar, ai, br, bi;
            elem(a, ia, &ar, &ai);
            elem(b, ib, &br, &bi);
            if (!ck_dtype_is_complex(t)) ai = bi = 0;
            sr += ar * br - ai * bi;
            si += ar * bi + ai * br;
            any |= ar != 0 && br != 0;
        }
        if (t == CK_BOOL) sr = any;
        double gr, gi;
        elem(got, idx, &gr, &gi);
        if (fabs(gr - sr) > tol * (1 + fabs(sr)) || fabs(gi - si) > tol * (1 + fabs(si))) {
            CHECK(0, "%s: element %lld is %g%+gj, want %g%+gj", what, (long long)f, gr, gi, sr, si);
            return;
        }
    }
}

static void run(const char *what, const ck_array *a, const ck_array *b, int rnd, const int64_t *rshape, ck_dtype t)
{
    ck_array c;
    jobs_ = blas_jobs_ = 0;
    ck_status s = ck_matmul(&c, a, b, 0);
    if (s != CK_OK) { CHECK(0, "%s: %s", what, ck_error_message()); return; }
    check_result(what, &c, a, b, rnd, rshape, t);
    ck_array_release(&c);
}

int main(void)
{
    fake_ = ck_backend_cpu;
    fake_.name = "stand-in cuda";
    fake_.matmul = fake_matmul;
    ck_backend_register(CK_DEVICE_CUDA, &fake_);

    static const ck_dtype types[] = {CK_FLOAT16, CK_FLOAT32, CK_FLOAT64, CK_COMPLEX64, CK_COMPLEX128,
                                     CK_BOOL, CK_INT8, CK_UINT8, CK_INT32, CK_INT64, CK_UINT64};
    const int64_t m = 3, k = 4, n = 5;
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        ck_dtype t = types[ti];
        char what[96];
        ck_array base, a, b, at, bt;
        int64_t sa[2] = {m, k}, sb[2] = {k, n}, sr[2] = {m, n};
        /* every mix of row-major and column-major (transposed) operands */
        base_array(&base, 64, t);
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int64_t sta[2] = {ta ? 1 : k, ta ? m : 1}, stb[2] = {tb ? 1 : n, tb ? k : 1};
                view(&a, &base, 2, sa, sta, 0);
                view(&b, &base, 2, sb, stb, 20);
                snprintf(what, sizeof what, "%s %s@%s", ck_dtype_get_info(t)->name, ta ? "F" : "C", tb ? "F" : "C");
                run(what, &a, &b, 2, sr, t);
                if (ck_dtype_is_inexact(t)) CHECK(blas_jobs_ == 1, "%s: %d BLAS calls", what, blas_jobs_);
                ck_array_release(&a);
                ck_array_release(&b);
            }
        /* padded leading dimensions, steps and negative strides */
        {
            int64_t st1[2] = {7, 1}, st2[2] = {2, 3}, st3[2] = {-n, 1}, st4[2] = {1, -1};
            view(&a, &base, 2, sa, st1, 0);
            view(&b, &base, 2, sb, st2, 1);
            snprintf(what, sizeof what, "%s padded@stepped", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 2, sr, t);
            ck_array_release(&a);
            ck_array_release(&b);
            view(&a, &base, 2, sa, st4, 40);
            view(&b, &base, 2, sb, st3, 3 * n + 2);
            snprintf(what, sizeof what, "%s negative strides", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 2, sr, t);
            ck_array_release(&a);
            ck_array_release(&b);
        }
        /* broadcast batches: (2,3,m,k) @ (3,k,n) and (4,m,k) @ (1,k,n) */
        {
            int64_t s4[4] = {2, 3, m, k}, s3[3] = {3, k, n}, r4[4] = {2, 3, m, n};
            cont(&a, 4, s4, t);
            cont(&b, 3, s3, t);
            snprintf(what, sizeof what, "%s batch broadcast", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 4, r4, t);
            CHECK(jobs_ == 2, "%s: %d jobs, want 2 (an outer loop of 2 over strided batches of 3)", what, jobs_);
            ck_array_release(&a);
            ck_array_release(&b);
            int64_t s3a[3] = {4, m, k}, s3b[3] = {1, k, n}, r3[3] = {4, m, n};
            cont(&a, 3, s3a, t);
            cont(&b, 3, s3b, t);
            snprintf(what, sizeof what, "%s batch stride 0", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 3, r3, t);
            CHECK(jobs_ == 1, "%s: %d jobs, want 1", what, jobs_);
            /* a batch walked backwards: looped, not one strided batch */
            int64_t stn[3] = {-m * k, k, 1};
            view(&at, &a, 3, s3a, stn, 3 * m * k);
            snprintf(what, sizeof what, "%s reversed batch", ck_dtype_get_info(t)->name);
            run(what, &at, &b, 3, r3, t);
            CHECK(jobs_ == 4, "%s: %d jobs, want 4", what, jobs_);
            ck_array_release(&at);
            /* a transposed batch of matrices with a broadcast 2-d operand */
            int perm[3] = {0, 2, 1};
            int64_t s3t[3] = {4, k, m}, r3t[3] = {4, m, n};
            ck_array a2;
            cont(&a2, 3, s3t, t);
            OK(ck_array_transpose(&at, &a2, perm));
            cont(&bt, 2, sb, t);
            snprintf(what, sizeof what, "%s transposed batch @ 2-d", ck_dtype_get_info(t)->name);
            run(what, &at, &bt, 3, r3t, t);
            ck_array_release(&a2);
            ck_array_release(&at);
            ck_array_release(&bt);
            ck_array_release(&a);
            ck_array_release(&b);
        }
        /* 1-d operands */
        {
            int64_t sk[1] = {k}, rn[1] = {n}, rm[1] = {m};
            cont(&a, 1, sk, t);
            cont(&b, 2, sb, t);
            snprintf(what, sizeof what, "%s vector@matrix", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 1, rn, t);
            ck_array_release(&b);
            cont(&b, 2, sa, t);
            snprintf(what, sizeof what, "%s matrix@vector", ck_dtype_get_info(t)->name);
            run(what, &b, &a, 1, rm, t);
            ck_array_release(&b);
            int64_t st[1] = {-2};
            view(&b, &base, 1, sk, st, 30);
            snprintf(what, sizeof what, "%s vector@vector", ck_dtype_get_info(t)->name);
            run(what, &a, &b, 0, NULL, t);
            ck_array_release(&a);
            ck_array_release(&b);
        }
        ck_array_release(&base);
    }

    /* mixed dtypes promote; k == 0 gives zeros; empty results */
    {
        ck_array a, b, c;
        int64_t sa[2] = {3, 4}, sb[2] = {4, 2}, sr[2] = {3, 2};
        cont(&a, 2, sa, CK_INT32);
        cont(&b, 2, sb, CK_FLOAT32);
        run("int32@float32", &a, &b, 2, sr, CK_FLOAT64);
        ck_array_release(&a);
        ck_array_release(&b);
        int64_t z1[2] = {3, 0}, z2[2] = {0, 2};
        cont(&a, 2, z1, CK_FLOAT32);
        cont(&b, 2, z2, CK_FLOAT32);
        jobs_ = 0;
        OK(ck_matmul(&c, &a, &b, 0));
        CHECK(jobs_ == 0 && c.shape[0] == 3 && c.shape[1] == 2, "k == 0: %d jobs", jobs_);
        for (int i = 0; i < 6; i++) CHECK(((float *)c.data)[i] == 0.0f, "k == 0: element %d not 0", i);
        ck_array_release(&c);
        ck_array e;
        int64_t z3[2] = {0, 4};
        cont(&e, 2, z3, CK_FLOAT32);
        ck_array_release(&a);
        int64_t s42[2] = {4, 2};
        cont(&a, 2, s42, CK_FLOAT32);
        jobs_ = 0;
        OK(ck_matmul(&c, &e, &a, 0));
        CHECK(jobs_ == 0 && c.ndim == 2 && c.shape[0] == 0 && c.shape[1] == 2, "(0,4)@(4,2)");
        ck_array_release(&c);
        ck_array_release(&e);
        ck_array_release(&a);
        ck_array_release(&b);
    }

    /* out=: written in place when C-ordered, through a copy otherwise */
    {
        ck_array a, b, out, outf, want;
        int64_t sa[2] = {3, 4}, sb[2] = {4, 5}, sr[2] = {3, 5}, stf[2] = {1, 3};
        cont(&a, 2, sa, CK_FLOAT64);
        cont(&b, 2, sb, CK_FLOAT64);
        OK(ck_matmul(&want, &a, &b, 0));
        OK(ck_array_empty(&out, 2, sr, CK_FLOAT64, G));
        OK(ck_matmul(&out, &a, &b, 1));
        CHECK(memcmp(out.data, want.data, 15 * 8) == 0, "out= (C order) differs");
        ck_array fbase;
        OK(ck_array_empty(&fbase, 2, sr, CK_COMPLEX128, G));
        view(&outf, &fbase, 2, sr, stf, 0);
        OK(ck_matmul(&outf, &a, &b, 1));
        check_result("out= (F order, complex128)", &outf, &a, &b, 2, sr, CK_COMPLEX128);
        ck_array_release(&outf);
        ck_array_release(&fbase);
        /* errors: wrong out shape, unsafe out dtype, core mismatch, 0-d, devices */
        CHECK(ck_matmul(&want, &b, &a, 1) == CK_ERR_VALUE, "out of the wrong shape");
        ck_array oi;
        OK(ck_array_empty(&oi, 2, sr, CK_INT32, G));
        CHECK(ck_matmul(&oi, &a, &b, 1) == CK_ERR_CAST_OUTPUT, "float64 into an int32 out");
        CHECK(strstr(ck_error_message(), "same_kind") != NULL, "message: %s", ck_error_message());
        ck_array scratch;
        CHECK(ck_matmul(&scratch, &a, &a, 0) == CK_ERR_VALUE, "(3,4)@(3,4)");
        CHECK(strstr(ck_error_message(), "mismatch in its core dimension 0") != NULL, "message: %s", ck_error_message());
        ck_array s0, cpu;
        int64_t one = 1;
        OK(ck_array_empty(&s0, 0, &one, CK_FLOAT64, G));
        CHECK(ck_matmul(&scratch, &s0, &a, 0) == CK_ERR_VALUE, "0-d operand");
        OK(ck_array_empty(&cpu, 2, sb, CK_FLOAT64, ck_device_cpu()));
        CHECK(ck_matmul(&scratch, &a, &cpu, 0) == CK_ERR_VALUE, "operands on two devices");
        ck_array cpu2;
        OK(ck_array_empty(&cpu2, 2, sa, CK_FLOAT64, ck_device_cpu()));
        CHECK(ck_matmul(&scratch, &cpu2, &cpu, 0) == CK_ERR_NOT_IMPLEMENTED, "the CPU has no backend matmul");
        ck_array_release(&cpu2);
        ck_array_release(&cpu);
        ck_array_release(&s0);
        ck_array_release(&oi);
        ck_array_release(&out);
        ck_array_release(&want);
        ck_array_release(&a);
        ck_array_release(&b);
    }

    /* the layout predicate itself */
    {
        int tr;
        int64_t ld;
        CHECK(ck_gemm_matrix_ok(3, 4, 4, 1, &tr, &ld) && !tr && ld == 4, "C order");
        CHECK(ck_gemm_matrix_ok(3, 4, 1, 3, &tr, &ld) && tr && ld == 3, "F order");
        CHECK(!ck_gemm_matrix_ok(3, 4, 3, 1, &tr, &ld), "rows overlapping");
        CHECK(!ck_gemm_matrix_ok(3, 4, 8, 2, &tr, &ld), "no unit stride");
        CHECK(ck_gemm_matrix_ok(1, 4, 0, 1, &tr, &ld) && !tr && ld == 4, "a row with any row stride");
        CHECK(ck_gemm_matrix_ok(4, 1, 1, 0, &tr, &ld) && ld >= 1, "a column with any column stride");
        CHECK(!ck_gemm_matrix_ok(3, 4, -4, 1, &tr, &ld), "negative leading dimension");
    }
    if (failures) printf("%d failures\n", failures);
    else printf("ok\n");
    return failures != 0;
}
