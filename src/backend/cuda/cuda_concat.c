/*
 * Joining on the GPU (the copy_pieces slot of backend.h): every piece of a
 * concatenate / stack call in one launch, as generated kernels of family
 * CK_KFAM_CONCAT (src/codegen/cuda_concat_codegen.h).
 *
 * When the output and every piece are C-contiguous each piece is a run of
 * bytes in every outer row of the output ("rows" kernel): elements are not
 * told apart, rows move in the widest word (up to 16 bytes) that every
 * address and run length keeps aligned.  Any other layout takes the strided
 * kernel over the output's dims, merged where the output and every piece
 * step through neighbours as one.  The piece table travels in the kernel's
 * parameters, so a launch takes what fits in them: 32 pieces of the rows
 * kernel or of a strided one of up to 8 dims, fewer for more dims
 * (ck_cuda_cat_capacity); more pieces take one launch per chunk, each
 * writing only its pieces' stretch of the output.  No host sync.
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_concat_codegen.h"

#include <stdlib.h>
#include <string.h>

static char *cat_source(const void *spec) { return ck_cuda_cat_source((const ck_cuda_cat_spec *)spec); }

static ck_status cat_launch(void *ctx, const ck_pieces_desc *d, const ck_cuda_cat_spec *sp, int64_t n, char *out,
                            int np, const int64_t *params)
{
    (void)ctx;
    int dev = d->dev.index;
    CUfunction f;
    ck_status s = ck_cuda_get_kernel(dev, ck_cuda_cat_key(sp), cat_source, sp, ck_cuda_cat_name(sp), &f);
    if (s != CK_OK) return s;
    unsigned int n32 = (unsigned int)n;
    unsigned long long n64 = (unsigned long long)n;
    void *args[] = {sp->idx64 ? (void *)&n64 : (void *)&n32, &out, &np, (void *)params};
    return ck_cuda_launch(dev, f, ck_cuda_grid_for(dev, n, 256), 256, 0, args);
}

/* Hand one planned launch to fn (none for an empty box). */
static ck_status emit(const ck_cuda_cat_plan_fn fn, void *ctx, const ck_pieces_desc *d, ck_cuda_cat_spec *sp, int64_t n,
                      char *out, int np, const int64_t *params)
{
    if (n == 0) return CK_OK;
    sp->idx64 = n > 0x7FFFFFFF;
    return fn(ctx, d, sp, n, out, np, params);
}

/* The widest word (up to max bytes) that keeps every bit of `bits` aligned. */
static int widest_unit(int max, uint64_t bits)
{
    int u = max;
    while (u > 1 && (bits & (uint64_t)(u - 1))) u /= 2;
    return u;
}

static int all_c_contiguous(const ck_pieces_desc *d)
{
    if (!ck_layout_is_c_contiguous(d->ndim, d->shape, d->out_strides, d->itemsize)) return 0;
    int64_t shape[CK_MAXDIMS];
    memcpy(shape, d->shape, (size_t)d->ndim * sizeof *shape);
    for (int p = 0; p < d->npieces; p++) {
        shape[d->axis] = d->pieces[p].len;
        if (!ck_layout_is_c_contiguous(d->ndim, shape, d->pieces[p].strides, d->itemsize)) return 0;
    }
    return 1;
}

/* Output rows of `width` words; piece p is words [start_p, start_p + len_p)
 * of each, its own rows of len_p words. */
static ck_status run_rows(const ck_pieces_desc *d, ck_cuda_cat_plan_fn fn, void *ctx)
{
    int64_t rows = 1, inner = d->itemsize;
    for (int i = 0; i < d->axis; i++) rows *= d->shape[i];
    for (int i = d->axis + 1; i < d->ndim; i++) inner *= d->shape[i];
    uint64_t bits = (uint64_t)(uintptr_t)d->out | (uint64_t)(d->shape[d->axis] * inner);
    for (int p = 0; p < d->npieces; p++)
        bits |= (uint64_t)(uintptr_t)d->pieces[p].data | (uint64_t)(d->pieces[p].offset * inner) |
                (uint64_t)(d->pieces[p].len * inner);
    ck_cuda_cat_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = CK_CATK_ROWS;
    sp.unit = widest_unit(16, bits);
    sp.units = 1;
    sp.cap = ck_cuda_cat_capacity(CK_CATK_ROWS, 0);
    const int64_t u = sp.unit;
    int64_t *P = calloc(1, ck_cuda_cat_params_size(&sp));
    if (!P) return ck_error_set(CK_ERR_MEMORY, "out of memory planning a concatenate");
    int64_t *start = P + 3 + sp.cap;
    ck_status s = CK_OK;
    for (int a = 0; a < d->npieces && s == CK_OK; a += sp.cap) {
        int np = d->npieces - a < sp.cap ? d->npieces - a : sp.cap;
        const ck_piece *pc = d->pieces + a;
        int64_t base = pc[0].offset * inner / u;
        int64_t width = (pc[np - 1].offset + pc[np - 1].len) * inner / u - base;
        P[0] = rows;
        P[1] = width;
        P[2] = d->shape[d->axis] * inner / u;
        for (int j = 0; j < np; j++) {
            P[3 + j] = (int64_t)(uintptr_t)pc[j].data;
            start[j] = pc[j].offset * inner / u - base;
        }
        start[np] = width;
        s = emit(fn, ctx, d, &sp, rows * width, d->out + base * u, np, P);
    }
    free(P);
    return s;
}

/* The strided kernel's dims: size-1 dims other than the axis dropped,
 * neighbours off the axis merged where the output and every piece step
 * through them as one; C order. */
typedef struct cat_dims {
    int nd, axis;
    int64_t shape[CK_MAXDIMS], ost[CK_MAXDIMS];
    int64_t pst[CK_PIECES_MAX][CK_MAXDIMS];
} cat_dims;

static void merge_dims(const ck_pieces_desc *d, cat_dims *m)
{
    int64_t sh[CK_MAXDIMS], os[CK_MAXDIMS];
    int isax[CK_MAXDIMS];
    int n = 0;
    memset(m, 0, sizeof *m);
    for (int dim = d->ndim - 1; dim >= 0; dim--) {
        int ax = dim == d->axis;
        int64_t len = d->shape[dim];
        if (!ax && len == 1) continue;
        if (n > 0 && !ax && !isax[n - 1]) {
            int j = n - 1;   /* dim's inner neighbour among the kept dims */
            int ok = os[j] * sh[j] == d->out_strides[dim];
            for (int p = 0; p < d->npieces && ok; p++) ok = m->pst[p][j] * sh[j] == d->pieces[p].strides[dim];
            if (ok) {
                sh[j] *= len;
                continue;
            }
        }
        sh[n] = len;
        os[n] = d->out_strides[dim];
        isax[n] = ax;
        for (int p = 0; p < d->npieces; p++) m->pst[p][n] = d->pieces[p].strides[dim];
        n++;
    }
    /* reverse into C order (the piece strides in place) */
    m->nd = n;
    for (int i = 0; i < n; i++) {
        m->shape[i] = sh[n - 1 - i];
        m->ost[i] = os[n - 1 - i];
        if (isax[n - 1 - i]) m->axis = i;
    }
    for (int p = 0; p < d->npieces; p++)
        for (int i = 0; i < n / 2; i++) {
            int64_t t = m->pst[p][i];
            m->pst[p][i] = m->pst[p][n - 1 - i];
            m->pst[p][n - 1 - i] = t;
        }
}

static ck_status run_strided(const ck_pieces_desc *d, ck_cuda_cat_plan_fn fn, void *ctx)
{
    cat_dims *m = malloc(sizeof *m);
    if (!m) return ck_error_set(CK_ERR_MEMORY, "out of memory planning a concatenate");
    merge_dims(d, m);
    int unit = d->itemsize >= 16 ? 16 : d->itemsize;
    while (unit > 1 && d->itemsize % unit) unit /= 2;
    uint64_t bits = (uint64_t)(uintptr_t)d->out;
    for (int i = 0; i < m->nd; i++) bits |= (uint64_t)m->ost[i];
    for (int p = 0; p < d->npieces; p++) {
        bits |= (uint64_t)(uintptr_t)d->pieces[p].data;
        for (int i = 0; i < m->nd; i++) bits |= (uint64_t)m->pst[p][i];
    }
    ck_cuda_cat_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = CK_CATK_STRIDED;
    sp.ndim = m->nd;
    sp.axis = m->axis;
    sp.unit = widest_unit(unit, bits);
    sp.units = d->itemsize / sp.unit;
    sp.cap = ck_cuda_cat_capacity(CK_CATK_STRIDED, m->nd);
    const int D = m->nd, C = sp.cap;
    int64_t *P = calloc(1, ck_cuda_cat_params_size(&sp));
    if (!P) {
        free(m);
        return ck_error_set(CK_ERR_MEMORY, "out of memory planning a concatenate");
    }
    int64_t *shape = P, *ost = P + D, *ptr = ost + D, *start = ptr + C, *pst = start + C + 1;
    memcpy(ost, m->ost, (size_t)D * sizeof *ost);
    ck_status s = CK_OK;
    for (int a = 0; a < d->npieces && s == CK_OK; a += C) {
        int np = d->npieces - a < C ? d->npieces - a : C;
        const ck_piece *pc = d->pieces + a;
        int64_t base = pc[0].offset;
        memcpy(shape, m->shape, (size_t)D * sizeof *shape);
        shape[m->axis] = pc[np - 1].offset + pc[np - 1].len - base;
        int64_t n = 1;
        for (int i = 0; i < D; i++) n *= shape[i];
        for (int j = 0; j < np; j++) {
            ptr[j] = (int64_t)(uintptr_t)pc[j].data;
            start[j] = pc[j].offset - base;
            memcpy(pst + (size_t)j * D, m->pst[a + j], (size_t)D * sizeof *pst);
        }
        start[np] = shape[m->axis];
        s = emit(fn, ctx, d, &sp, n, d->out + base * m->ost[m->axis], np, P);
    }
    free(P);
    free(m);
    return s;
}

ck_status ck_cuda_cat_plan(const ck_pieces_desc *d, ck_cuda_cat_plan_fn fn, void *ctx)
{
    if (d->npieces < 1 || d->npieces > CK_PIECES_MAX || d->ndim < 1 || d->axis < 0 || d->axis >= d->ndim)
        return ck_error_set(CK_ERR_VALUE, "copy_pieces: bad description (%d pieces, %d dims, axis %d)", d->npieces,
                            d->ndim, d->axis);
    return all_c_contiguous(d) ? run_rows(d, fn, ctx) : run_strided(d, fn, ctx);
}

ck_status ck_cuda_copy_pieces(const ck_pieces_desc *d)
{
    ck_status s = ck_cuda_use(d->dev.index);
    if (s != CK_OK) return s;
    return ck_cuda_cat_plan(d, cat_launch, NULL);
}
