/* Layouts of batched matrix products (see gemm.h). */
#include "gemm.h"

#include <limits.h>

int ck_gemm_matrix_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *transposed, int64_t *ld)
{
    int64_t rmin = rows > 1 ? rows : 1, cmin = cols > 1 ? cols : 1;
    /* row-major: columns adjacent, rows ld apart */
    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= cmin)) {
        *transposed = 0;
        *ld = rows == 1 ? cmin : rs;
        return 1;
    }
    /* column-major: rows adjacent, columns ld apart */
    if ((rows == 1 || rs == 1) && (cols == 1 || cs >= rmin)) {
        *transposed = 1;
        *ld = cols == 1 ? rmin : cs;
        return 1;
    }
    return 0;
}

ck_status ck_gemm_for_each_job(const ck_matmul_desc *d, ck_status (*fn)(void *ctx, const ck_gemm_job *j), void *ctx)
{
    const int64_t isz = ck_dtype_get_info(d->type)->itemsize;
    const ck_gemm_operand *ops[3] = {&d->a, &d->b, &d->c};
    /* the batch dims that are not 1, outermost first */
    int nd = 0;
    int64_t shape[CK_MAXDIMS], bs[3][CK_MAXDIMS];
    for (int i = 0; i < d->nbatch; i++) {
        if (d->batch_shape[i] == 0) return CK_OK;
        if (d->batch_shape[i] == 1) continue;
        shape[nd] = d->batch_shape[i];
        for (int o = 0; o < 3; o++) bs[o][nd] = ops[o]->bs[i];
        nd++;
    }
    for (int o = 0; o < 3; o++) {
        if (ops[o]->rs % isz || ops[o]->cs % isz)
            return ck_error_set(CK_ERR_VALUE, "matmul: a matrix stride is not a multiple of the item size");
        for (int i = 0; i < nd; i++)
            if (bs[o][i] % isz) return ck_error_set(CK_ERR_VALUE, "matmul: a batch stride is not a multiple of the item size");
    }
    /* the trailing run that one strided batch covers */
    int first = nd;
    int64_t inner = 1;
    if (nd > 0 && bs[0][nd - 1] >= 0 && bs[1][nd - 1] >= 0 && bs[2][nd - 1] >= 0) {
        first = nd - 1;
        inner = shape[nd - 1];
        while (first > 0) {
            int i = first - 1, chains = 1;
            for (int o = 0; o < 3; o++) chains &= bs[o][i] == bs[o][i + 1] * shape[i + 1];
            if (!chains) break;
            inner *= shape[i];
            first = i;
        }
    }
    ck_gemm_job j;
    j.m = d->m;
    j.n = d->n;
    j.k = d->k;
    j.batch = inner;
    j.a_rs = d->a.rs / isz; j.a_cs = d->a.cs / isz;
    j.b_rs = d->b.rs / isz; j.b_cs = d->b.cs / isz;
    j.c_rs = d->c.rs / isz; j.c_cs = d->c.cs / isz;
    j.a_bs = first < nd ? bs[0][nd - 1] / isz : 0;
    j.b_bs = first < nd ? bs[1][nd - 1] / isz : 0;
    j.c_bs = first < nd ? bs[2][nd - 1] / isz : 0;
    /* loop over the outer dims (0 .. first-1) in C order */
    int64_t idx[CK_MAXDIMS] = {0};
    for (;;) {
        int64_t off[3] = {0, 0, 0};
        for (int i = 0; i < first; i++)
            for (int o = 0; o < 3; o++) off[o] += idx[i] * bs[o][i];
        j.a = d->a.data + off[0];
        j.b = d->b.data + off[1];
        j.c = d->c.data + off[2];
        ck_status s = fn(ctx, &j);
        if (s != CK_OK) return s;
        int i = first - 1;
        while (i >= 0 && ++idx[i] == shape[i]) idx[i--] = 0;
        if (i < 0) return CK_OK;
    }
}

int ck_gemm_job_to_blas(const ck_gemm_job *j, ck_blas_gemm *g)
{
    int tc, ta, tb;
    int64_t ldc, lda, ldb;
    /* C (m x n) row-major is the column-major n x m matrix C^T = B^T A^T */
    if (!ck_gemm_matrix_ok(j->m, j->n, j->c_rs, j->c_cs, &tc, &ldc) || tc) return 0;
    if (!ck_gemm_matrix_ok(j->k, j->n, j->b_rs, j->b_cs, &tb, &ldb)) return 0;
    if (!ck_gemm_matrix_ok(j->m, j->k, j->a_rs, j->a_cs, &ta, &lda)) return 0;
    g->m = j->n;
    g->n = j->m;
    g->k = j->k;
    g->batch = j->batch;
    /* B (k x n) row-major is B^T (n x k) column-major as stored; a
     * column-major B is read transposed.  The same for A (as k x m). */
    g->op_a = tb;
    g->A = j->b;
    g->lda = ldb;
    g->stride_a = j->batch > 1 ? j->b_bs : 0;
    g->op_b = ta;
    g->B = j->a;
    g->ldb = lda;
    g->stride_b = j->batch > 1 ? j->a_bs : 0;
    g->C = j->c;
    g->ldc = ldc;
    g->stride_c = j->batch > 1 ? j->c_bs : 0;
    const int64_t lim = INT_MAX;
    if (g->m > lim || g->n > lim || g->k > lim || g->lda > lim || g->ldb > lim || g->ldc > lim) return 0;
    if (g->stride_a < 0 || g->stride_b < 0 || g->stride_c < 0) return 0;
    return 1;
}
