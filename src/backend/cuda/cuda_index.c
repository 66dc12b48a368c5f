/*
 * Advanced indexing on the GPU: gather, scatter and nonzero (the optional
 * slots of backend.h), as generated kernels of family CK_KFAM_INDEX.
 *
 * Index bounds are checked on the device, inside the kernel that uses the
 * indices: a thread that meets a bad index skips its element and lowers a
 * 64-bit error word (index array << 56 | element) with atomicMin, so the
 * word ends as the first bad element in the CPU's order (array by array,
 * element by element).  In mode raise the word is read back once after the
 * launches (the one host sync of a gather or scatter); the message then
 * names that element's value, as the CPU does.  Modes wrap and clip cannot
 * fail on the device and do not sync.  The index arrays are not rewritten
 * in place (the CPU does): the kernels normalise each index as they read it.
 *
 * Scatter keeps NumPy's "the last of repeated indices wins" exactly, as the
 * CPU does: pass 1 checks the indices and zeroes a claim word per target
 * element, pass 2 has every position raise its target's word to its own
 * number + 1 (atomicMax), pass 3 writes the positions that won.  The claim
 * words (4 bytes per element of the indexed region, 8 past 2^32 positions)
 * come from the pool; passes 2 and 3 do nothing when pass 1 found a bad
 * index, so a failed assignment leaves the array untouched.  A scatter of
 * one position skips the claims.
 *
 * nonzero is a compaction: per-chunk counts, an exclusive scan of them, and
 * a second read of each chunk that ranks its true elements and writes
 * their coordinates.  A contiguous, aligned mask is read 16 bytes a
 * thread; the chunk's true positions, ranked by a block scan, are listed
 * in shared memory in order and moved by consecutive threads to
 * consecutive outputs.  Other masks are read a byte a thread, ranked by
 * warp ballots.  The count (the output size) was
 * read by the op layer before: that is nonzero's one host sync.  x[mask]
 * with a mask over all of x (the compress slot) is the same compaction
 * writing x's elements instead of coordinates: no index arrays, no gather;
 * x[mask] = values (the slot's expand) the same compaction writing the
 * packed values to x's true elements: no nonzero, no scatter and its claim
 * passes (the count, read first for NumPy's size check, is the one sync).
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_index_codegen.h"

#include <stdlib.h>
#include <string.h>

static char *ix_source(const void *spec) { return ck_cuda_ix_source((const ck_cuda_ix_spec *)spec); }

static ck_status ix_kernel(int dev, const ck_cuda_ix_spec *sp, CUfunction *f)
{
    return ck_cuda_get_kernel(dev, ck_cuda_ix_key(sp), ix_source, sp, ck_cuda_ix_name(sp), f);
}

/* Parameters beyond what a kernel can take by value (4 KiB in all). */
#define CK_IX_BYVAL_MAX 3840

/* The desc's dims with size-1 dims dropped and neighbours merged where
 * every operand (arr, other, each index array) steps through them as one;
 * returned in C order. */
typedef struct ix_dims {
    int nd;
    int64_t shape[CK_MAXDIMS], ast[CK_MAXDIMS], ost[CK_MAXDIMS], tmul[CK_MAXDIMS];
    int64_t ist[CK_MAXDIMS][CK_MAXDIMS];
    int64_t kmul[CK_MAXDIMS];
    int64_t targets;   /* distinct target elements (scatter's claim words) */
} ix_dims;

static void merge_dims(const ck_gather_desc *d, ix_dims *m)
{
    int64_t sh[CK_MAXDIMS], a[CK_MAXDIMS], o[CK_MAXDIMS], ix[CK_MAXDIMS][CK_MAXDIMS];
    int n = 0;
    for (int dim = d->ndim - 1; dim >= 0; dim--) {
        int64_t len = d->shape[dim];
        if (len == 1) continue;
        if (n > 0) {
            int j = n - 1;   /* the outermost dim kept so far: dim's inner neighbour */
            int ok = a[j] * sh[j] == d->arr_strides[dim] && o[j] * sh[j] == d->other_strides[dim];
            for (int k = 0; k < d->nidx && ok; k++) ok = ix[k][j] * sh[j] == d->idx_strides[k][dim];
            if (ok) {
                sh[j] *= len;
                continue;
            }
        }
        sh[n] = len;
        a[n] = d->arr_strides[dim];
        o[n] = d->other_strides[dim];
        for (int k = 0; k < d->nidx; k++) ix[k][n] = d->idx_strides[k][dim];
        n++;
    }
    memset(m, 0, sizeof *m);
    m->nd = n;
    for (int i = 0; i < n; i++) {
        m->shape[i] = sh[n - 1 - i];
        m->ast[i] = a[n - 1 - i];
        m->ost[i] = o[n - 1 - i];
        for (int k = 0; k < d->nidx; k++) m->ist[k][i] = ix[k][n - 1 - i];
    }
}

/* Number the target elements densely: the indexed axes innermost, then the
 * result dims that move through arr (broadcast dims name no new target). */
static ck_status number_targets(const ck_gather_desc *d, ix_dims *m)
{
    int64_t t = 1;
    for (int k = d->nidx - 1; k >= 0; k--) {
        m->kmul[k] = t;
        if (__builtin_mul_overflow(t, d->axis_len[k] > 0 ? d->axis_len[k] : 1, &t)) goto overflow;
    }
    for (int i = m->nd - 1; i >= 0; i--) {
        if (m->ast[i] == 0) { m->tmul[i] = 0; continue; }
        m->tmul[i] = t;
        if (__builtin_mul_overflow(t, m->shape[i], &t)) goto overflow;
    }
    m->targets = t;
    return CK_OK;
overflow:
    return ck_error_set(CK_ERR_VALUE, "scatter: the indexed region is too large");
}

/* The widest word (up to 8 bytes) that every address and step keeps aligned. */
static int move_unit(const ck_gather_desc *d, const ix_dims *m)
{
    int u = d->itemsize >= 8 ? 8 : d->itemsize;
    while (u > 1 && d->itemsize % u) u /= 2;
    uint64_t bits = (uint64_t)(uintptr_t)d->arr | (uint64_t)(uintptr_t)d->other;
    for (int i = 0; i < m->nd; i++) bits |= (uint64_t)m->ast[i] | (uint64_t)m->ost[i];
    for (int k = 0; k < d->nidx; k++) bits |= (uint64_t)d->axis_stride[k];
    while (u > 1 && (bits & (uint64_t)(u - 1))) u /= 2;
    return u;
}

/* The parameter block of ck_cuda_ix_params_size's layout. */
static int64_t *make_params(const ck_gather_desc *d, const ix_dims *m, const ck_cuda_ix_spec *sp)
{
    size_t bytes = ck_cuda_ix_params_size(sp);
    int64_t *p = calloc(1, bytes);
    if (!p) {
        ck_error_set(CK_ERR_MEMORY, "out of memory planning a gather");
        return NULL;
    }
    int D = m->nd > 0 ? m->nd : 1, I = d->nidx > 0 ? d->nidx : 1;
    int64_t *shape = p, *ast = shape + D, *ost = ast + D, *tmul = ost + D, *ptr = tmul + D;
    int64_t *ist = ptr + I, *alen = ist + (size_t)I * D, *axst = alen + I, *kmul = axst + I;
    for (int i = 0; i < m->nd; i++) {
        shape[i] = m->shape[i];
        ast[i] = m->ast[i];
        ost[i] = m->ost[i];
        tmul[i] = m->tmul[i];
    }
    for (int k = 0; k < d->nidx; k++) {
        ptr[k] = (int64_t)(uintptr_t)d->idx[k];
        for (int i = 0; i < m->nd; i++) ist[(size_t)k * D + i] = m->ist[k][i];
        alen[k] = d->axis_len[k];
        axst[k] = d->axis_stride[k];
        kmul[k] = m->kmul[k];
    }
    return p;
}

/* Read the error word; on a bad index, the CPU's message for it. */
static ck_status read_error(const ck_gather_desc *d, const unsigned long long *err)
{
    unsigned long long e;
    ck_status s = ck_cuda_copy_to_host(d->dev, &e, err, sizeof e);
    if (s != CK_OK || e == ~0ull) return s;
    int k = (int)(e >> 56);
    int64_t pos = (int64_t)(e & ((1ull << 56) - 1)), v = 0;
    if (k >= d->nidx || pos >= d->idx_size[k])
        return ck_error_set(CK_ERR_INDEX, "index out of bounds (the GPU reported element %lld of index %d)",
                            (long long)pos, k);
    s = ck_cuda_copy_to_host(d->dev, &v, d->idx[k] + pos, sizeof v);
    if (s != CK_OK) return s;
    return ck_error_set(CK_ERR_INDEX, "index %lld is out of bounds for axis %d with size %lld", (long long)v,
                        d->axis_id[k], (long long)d->axis_len[k]);
}

static ck_status report(const ck_gather_desc *d, const unsigned long long *err)
{
    ck_status s = ck_sync_span_begin(d->dev, "the bounds check of integer indices (mode 'raise')");
    if (s == CK_OK) s = read_error(d, err);
    ck_sync_span_end();
    return s;
}

/* Bounds of every index array when the iteration is empty (NumPy still
 * raises for them). */
static ck_status check_only(const ck_gather_desc *d, unsigned long long *err)
{
    int dev = d->dev.index;
    for (int k = 0; k < d->nidx; k++) {
        int64_t n = d->idx_size[k];
        if (n == 0) continue;
        ck_cuda_ix_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.kind = CK_IXK_CHECK;
        sp.idx64 = n > 0x7FFFFFFF;
        CUfunction f;
        ck_status s = ix_kernel(dev, &sp, &f);
        if (s != CK_OK) return s;
        unsigned int n32 = (unsigned int)n;
        unsigned long long n64 = (unsigned long long)n, kk = (unsigned long long)k;
        long long len = d->axis_len[k];
        void *idx = d->idx[k];
        void *args[] = {sp.idx64 ? (void *)&n64 : (void *)&n32, &idx, &len, &kk, &err};
        s = ck_cuda_launch(dev, f, ck_cuda_grid_for(dev, n, 256), 256, 0, args);
        if (s != CK_OK) return s;
    }
    return CK_OK;
}

static ck_status run_index(const ck_gather_desc *d, int scatter)
{
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    /* the CPU's one error that needs no look at the indices */
    for (int k = 0; k < d->nidx; k++)
        if (d->mode != CK_INDEX_RAISE && d->axis_len[k] == 0 && d->idx_size[k] > 0)
            return ck_error_set(CK_ERR_INDEX, "cannot do a non-empty take from an empty axes.");
    int raise = d->mode == CK_INDEX_RAISE && d->nidx > 0;
    if (!raise && d->size == 0) return CK_OK;
    CUstream st = ck_cuda_current_stream(dev);

    unsigned long long *err = NULL;
    void *win = NULL, *dparams = NULL;
    size_t win_bytes = 0, pbytes = 0;
    int64_t *params = NULL;
    ix_dims *m = NULL;
    if (raise) {
        err = ck_cuda_alloc(d->dev, sizeof *err);
        if (!err) return ck_error_status();
        CUresult r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)err, 0xFFFFFFFFu, 2, st);
        if (r != CUDA_SUCCESS) {
            s = ck_cu_fail(r, "cuMemsetD32Async", __func__, __FILE__, __LINE__);
            goto done;
        }
    }
    if (d->size == 0) {
        s = check_only(d, err);
        goto done;
    }

    m = malloc(sizeof *m);
    if (!m) { s = ck_error_set(CK_ERR_MEMORY, "out of memory planning a gather"); goto done; }
    merge_dims(d, m);
    int claims = scatter && d->size > 1;
    if (claims && (s = number_targets(d, m)) != CK_OK) goto done;

    ck_cuda_ix_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.ndim = m->nd;
    sp.nidx = d->nidx;
    sp.unit = move_unit(d, m);
    sp.units = d->itemsize / sp.unit;
    sp.mode = d->mode;
    sp.idx64 = d->size > 0x7FFFFFFF;
    sp.win64 = d->size >= 0xFFFFFFFFll;
    pbytes = ck_cuda_ix_params_size(&sp);
    sp.byref = pbytes > CK_IX_BYVAL_MAX;
    params = make_params(d, m, &sp);
    if (!params) { s = ck_error_status(); goto done; }
    if (sp.byref) {
        dparams = ck_cuda_alloc(d->dev, pbytes);
        if (!dparams) { s = ck_error_status(); goto done; }
        /* from pageable memory: the driver has staged the bytes when this returns */
        CUresult r = ck_cu.cuMemcpyHtoDAsync_v2((CUdeviceptr)(uintptr_t)dparams, params, pbytes, st);
        if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemcpyHtoDAsync", __func__, __FILE__, __LINE__); goto done; }
    }
    if (claims) {
        win_bytes = (size_t)m->targets * (sp.win64 ? 8 : 4);
        win = ck_cuda_alloc(d->dev, win_bytes);
        if (!win) { s = ck_error_status(); goto done; }
    }

    unsigned int n32 = (unsigned int)d->size;
    unsigned long long n64 = (unsigned long long)d->size;
    void *arr = d->arr, *oth = d->other;
    void *args[] = {sp.idx64 ? (void *)&n64 : (void *)&n32, &arr, &oth, &err, &win,
                    sp.byref ? (void *)&dparams : (void *)params};
    unsigned grid = ck_cuda_grid_for(dev, d->size, 256);
    static const int passes[3] = {CK_IXK_CLAIM_INIT, CK_IXK_CLAIM, CK_IXK_APPLY};
    int npass = claims ? 3 : 1;
    for (int ps = 0; ps < npass && s == CK_OK; ps++) {
        sp.kind = !scatter ? CK_IXK_GATHER : claims ? passes[ps] : CK_IXK_SCATTER;
        CUfunction f;
        s = ix_kernel(dev, &sp, &f);
        if (s == CK_OK) s = ck_cuda_launch(dev, f, grid, 256, 0, args);
    }

done:
    if (s == CK_OK && raise) s = report(d, err);
    if (win) ck_cuda_free(d->dev, win, win_bytes);
    if (dparams) ck_cuda_free(d->dev, dparams, pbytes);
    if (err) ck_cuda_free(d->dev, err, sizeof *err);
    free(params);
    free(m);
    return s;
}

ck_status ck_cuda_gather(const ck_gather_desc *d) { return run_index(d, 0); }
ck_status ck_cuda_scatter(const ck_gather_desc *d) { return run_index(d, 1); }

/* Whether a layout is C-contiguous (size-1 dims aside). */
static int c_contiguous(int ndim, const int64_t *shape, const int64_t *strides, int64_t itemsize)
{
    int64_t want = itemsize;
    for (int i = ndim - 1; i >= 0; i--) {
        if (shape[i] != 1 && strides[i] != want) return 0;
        want *= shape[i];
    }
    return 1;
}

/* A compaction over the mask (shape, mstrides): per-chunk counts, their
 * scan, then the kernel of wsp (nonzero's coordinates or select's
 * elements) with its last two arguments (src, out). */
static ck_status compaction(ck_device dv, int ndim, const int64_t *shape, const int64_t *mstrides, const int64_t *sstrides,
                            const char *mask, ck_cuda_ix_spec *wsp, const char *src, void *out, int64_t count)
{
    int64_t size = 1;
    for (int i = 0; i < ndim; i++) size *= shape[i];
    if (size == 0 || count == 0) return CK_OK;
    int dev = dv.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    /* the parameter struct: shape[D] strides[D] (and the source's strides[D]) */
    struct { int64_t w[3 * CK_MAXDIMS]; } P;
    memset(&P, 0, sizeof P);
    int D = ndim > 0 ? ndim : 1;
    for (int i = 0; i < ndim; i++) {
        P.w[i] = shape[i];
        P.w[D + i] = mstrides[i];
        P.w[2 * D + i] = sstrides ? sstrides[i] : 0;
    }
    ck_cuda_ix_spec cnt;
    memset(&cnt, 0, sizeof cnt);
    cnt.kind = CK_IXK_NZ_COUNT;
    cnt.ndim = ndim;
    cnt.idx64 = size > 0x7FFFFFFF - CK_NZ_CHUNK;
    cnt.contig = c_contiguous(ndim, shape, mstrides, 1);
    /* a contiguous, aligned mask is read 16 bytes a thread */
    cnt.vec = wsp->vec = cnt.contig && !((uintptr_t)mask & 15);
    wsp->ndim = ndim;
    wsp->idx64 = cnt.idx64;

    int64_t nb = (size + CK_NZ_CHUNK - 1) / CK_NZ_CHUNK;
    unsigned int *counts = ck_cuda_alloc(dv, (size_t)nb * sizeof *counts);
    long long *offs = counts ? ck_cuda_alloc(dv, (size_t)nb * sizeof *offs) : NULL;
    if (!counts || !offs) {
        s = ck_error_status();
        goto done;
    }
    unsigned int n32 = (unsigned int)size;
    unsigned long long n64 = (unsigned long long)size;
    void *nptr = cnt.idx64 ? (void *)&n64 : (void *)&n32;
    long long nbl = nb, cnt64 = count;
    CUfunction f;

    if ((s = ix_kernel(dev, &cnt, &f)) != CK_OK) goto done;
    void *a1[] = {nptr, &mask, &P, &counts};
    if ((s = ck_cuda_launch(dev, f, (unsigned)nb, 256, 0, a1)) != CK_OK) goto done;

    ck_cuda_ix_spec scan;
    memset(&scan, 0, sizeof scan);
    scan.kind = CK_IXK_NZ_SCAN;
    if ((s = ix_kernel(dev, &scan, &f)) != CK_OK) goto done;
    void *a2[] = {&nbl, &counts, &offs};
    if ((s = ck_cuda_launch(dev, f, 1, 1024, 0, a2)) != CK_OK) goto done;

    if ((s = ix_kernel(dev, wsp, &f)) != CK_OK) goto done;
    void *a3w[] = {nptr, &mask, &P, &offs, &cnt64, &out};
    void *a3s[] = {nptr, &mask, &P, &offs, &cnt64, &src, &out};
    s = ck_cuda_launch(dev, f, (unsigned)nb, 256, 0, wsp->kind == CK_IXK_NZ_WRITE ? a3w : a3s);

done:
    if (offs) ck_cuda_free(dv, offs, (size_t)nb * sizeof *offs);
    if (counts) ck_cuda_free(dv, counts, (size_t)nb * sizeof *counts);
    return s;
}

ck_status ck_cuda_nonzero(const ck_nonzero_desc *d)
{
    ck_cuda_ix_spec w;
    memset(&w, 0, sizeof w);
    w.kind = CK_IXK_NZ_WRITE;
    w.contig = c_contiguous(d->ndim, d->shape, d->strides, 1);
    return compaction(d->dev, d->ndim, d->shape, d->strides, NULL, d->in, &w, NULL, d->out, d->count);
}

ck_status ck_cuda_compress(const ck_compress_desc *d)
{
    ck_cuda_ix_spec w;
    memset(&w, 0, sizeof w);
    w.kind = d->expand ? CK_IXK_EXPAND : CK_IXK_SELECT;
    w.contig = c_contiguous(d->ndim, d->shape, d->mask_strides, 1) &&
               c_contiguous(d->ndim, d->shape, d->src_strides, d->itemsize);
    /* the widest word that the source's address and steps and out keep aligned */
    int u = d->itemsize >= 8 ? 8 : d->itemsize;
    while (u > 1 && d->itemsize % u) u /= 2;
    uint64_t bits = (uint64_t)(uintptr_t)d->src | (uint64_t)(uintptr_t)d->out;
    for (int i = 0; i < d->ndim; i++) bits |= (uint64_t)d->src_strides[i];
    while (u > 1 && (bits & (uint64_t)(u - 1))) u /= 2;
    w.unit = u;
    w.units = d->itemsize / u;
    return compaction(d->dev, d->ndim, d->shape, d->mask_strides, d->src_strides, d->mask, &w, d->src, d->out, d->count);
}
