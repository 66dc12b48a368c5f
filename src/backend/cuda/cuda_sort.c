/*
 * Sort, argsort and searchsorted on the GPU (kernels: src/codegen/sort_kernels.cuh).
 *
 * Two paths, both giving the CPU's stable order bit for bit:
 *  - rows of up to 4096 elements (a 4096 x 4096 matrix along its last axis):
 *    a block per row, bitonic sort of (key, column) in shared memory;
 *  - longer rows (and complex): an LSD radix sort over all rows at once of
 *    (key word, element number) pairs, 8-bit digits, each pass three steps
 *    (per-tile digit counts, a scan of the counts, a stable scatter ranked
 *    with warp matches).  Complex keys are three words, sorted lo, hi, top.
 *    Several rows are kept apart by final passes over the row number of
 *    each element, which the stable passes leave in key order within a row.
 * The element numbers then give argsort's indices and, through a gather to
 * a scratch buffer, the sorted values.  One row of integers, or of floats
 * sorted ascending for their values only, carries no element numbers: the
 * values come back from the sorted keys.  For floats that sort uses the
 * plain order-preserving bit transform, so -0.0 comes before +0.0 and NaNs
 * lose their sign: values equal NumPy's, bits may differ from the CPU's.
 * Passes of a digit that every key shares are skipped (long sorts learn
 * which key bits vary from the keys kernel, with one host sync a word).
 */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define CK_SORT_FAMILY 0x42ull
#define RX_TILE 4096u
#define SCAN_CHUNK 2048u
#define BLOCK_SORT_MAX 4096

typedef struct sort_spec { ck_dtype t; } sort_spec;

/* the module's entry points; the last two are not built for complex */
enum { K_KEYS, K_HIST, K_SUMS, K_TOP, K_APPLY, K_SCATTER, K_OUT, K_PUT, K_SS, K_UNKEY, K_BLOCK, K_N };
static const char *const kernel_names_[K_N] = {"ck_sk_keys", "ck_rx_hist", "ck_rx_scan_sums", "ck_rx_scan_top",
                                               "ck_rx_scan_apply", "ck_rx_scatter", "ck_sk_out", "ck_sk_put",
                                               "ck_ss", "ck_sk_unkey", "ck_sk_block"};

static int key_bytes(ck_dtype t)
{
    int isz = ck_dtype_get_info(t)->itemsize;
    return ck_dtype_is_complex(t) ? isz / 2 : isz;
}

static char *sort_source(const void *vspec)
{
    const sort_spec *sp = vspec;
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "#define CK_SK_T %d\n#define CK_SK_ISZ %d\n#define CK_SK_K64 %d\n%s", (int)sp->t,
                   ck_dtype_get_info(sp->t)->itemsize, key_bytes(sp->t) > 4, ck_src_sort_kernels);
    if (b.failed) {
        free(b.s);
        ck_error_set(CK_ERR_MEMORY, "out of memory generating a kernel");
        return NULL;
    }
    return b.s;
}

/* The source for one dtype, for the C test that compiles it with NVRTC. */
char *ck_cuda_sort_source_for_test(ck_dtype t);
char *ck_cuda_sort_source_for_test(ck_dtype t)
{
    sort_spec sp = {t};
    return sort_source(&sp);
}

static ck_status get_fns(int dev, ck_dtype t, CUfunction *fns)
{
    sort_spec sp = {t};
    uint64_t key = (CK_SORT_FAMILY << 56) | ((uint64_t)t << 8);
    int n = ck_dtype_is_complex(t) ? K_UNKEY : K_N;
    return ck_cuda_get_kernels(dev, key, sort_source, &sp, kernel_names_, n, fns);
}

#define LAUNCH(f, grid, block, shmem, args, what)                                                          \
    do {                                                                                                  \
        CUresult r_ = ck_cu.cuLaunchKernel((f), (grid), 1, 1, (block), 1, 1, (shmem), st, (args), NULL); \
        if (r_ != CUDA_SUCCESS) { s = ck_cu_fail(r_, "cuLaunchKernel (" what ")", __func__, __FILE__, __LINE__); goto done; } \
    } while (0)

static unsigned pow2_at_least(int64_t n)
{
    unsigned p = 1;
    while ((int64_t)p < n) p <<= 1;
    return p;
}

static ck_status block_sort(const ck_sort_desc *d, CUfunction f, int dev, CUstream st)
{
    ck_status s = CK_OK;
    unsigned P = pow2_at_least(d->len < 2 ? 2 : d->len);
    unsigned T = P / 2 < 32 ? 32 : P / 2 > 1024 ? 1024 : P / 2;
    unsigned shmem = P * (unsigned)((key_bytes(d->type) > 4 ? 8 : 4) + 4);
    long long nrows = d->nrows, irs = d->idx_row_stride, ies = d->idx_elem_stride;
    long long rs = d->row_stride, es = d->elem_stride;
    int len = (int)d->len, Pi = (int)P, desc = d->descending, sv = d->sort_values;
    char *data = d->data;
    int64_t *idx = d->idx;
    void *args[] = {&nrows, &len, &Pi, &data, &rs, &es, &desc, &idx, &irs, &ies, &sv};
    unsigned grid = nrows < 0x7FFFFFFFLL ? (unsigned)nrows : 0x7FFFFFFFu;
    (void)dev;
    LAUNCH(f, grid, T, shmem, args, "block sort");
done:
    return s;
}

static ck_status radix_sort(const ck_sort_desc *d, CUfunction *fns, int dev, CUstream st)
{
    ck_status s = CK_OK;
    int64_t n64 = d->nrows * d->len;
    unsigned n = (unsigned)n64;
    size_t ksz = key_bytes(d->type) > 4 ? 8 : 4, isz = (size_t)ck_dtype_get_info(d->type)->itemsize;
    unsigned nb = (n + RX_TILE - 1) / RX_TILE, m = 256u * nb, nc = (m + SCAN_CHUNK - 1) / SCAN_CHUNK;
    /* the values of one row of integers, or of floats sorted ascending,
     * come back from their keys: no element numbers to carry */
    int fkeys = !d->idx && d->nrows == 1 && !d->descending &&
                (d->type == CK_FLOAT16 || d->type == CK_FLOAT32 || d->type == CK_FLOAT64);
    int keys_only = fkeys || (!d->idx && d->nrows == 1 && ck_dtype_is_integer(d->type));
    size_t sz_keys = (size_t)n * ksz, sz_pay = keys_only ? 0 : (size_t)n * 4, sz_cnt = (size_t)m * 4;
    size_t sz_sums = (size_t)nc * 4, sz_tmp = d->sort_values && !keys_only ? (size_t)n * isz : 0;
    char *k0 = NULL, *k1 = NULL, *p0 = NULL, *p1 = NULL, *cnt = NULL, *sums = NULL, *tmp = NULL, *ao = NULL;
    /* long sorts of keys of 4 bytes or more learn which bits vary (one
     * host sync a key word) and skip the passes of constant digits */
    int skip = n64 >= ((int64_t)1 << 16) && key_bytes(d->type) >= 4;
    if (!(k0 = ck_cuda_alloc(d->dev, sz_keys)) || !(k1 = ck_cuda_alloc(d->dev, sz_keys)) ||
        (sz_pay && !(p0 = ck_cuda_alloc(d->dev, sz_pay))) || (sz_pay && !(p1 = ck_cuda_alloc(d->dev, sz_pay))) ||
        !(cnt = ck_cuda_alloc(d->dev, sz_cnt)) || !(sums = ck_cuda_alloc(d->dev, sz_sums)) ||
        (sz_tmp && !(tmp = ck_cuda_alloc(d->dev, sz_tmp))) || (skip && !(ao = ck_cuda_alloc(d->dev, 16)))) {
        s = ck_error_status();
        goto done;
    }
    long long len = d->len, rs = d->row_stride, es = d->elem_stride;
    long long irs = d->idx_row_stride, ies = d->idx_elem_stride;
    int desc = d->descending, with_pay = !keys_only, kdesc = desc | (fkeys ? 2 : 0);
    char *data = d->data;
    unsigned gstride = ck_cuda_grid_for(dev, n, 256);
    int cplx = ck_dtype_is_complex(d->type);
    int words[3] = {0, 1, 2}, nwords = 3;
    if (!cplx) { words[0] = 1; nwords = 1; }
    for (int wi = 0; wi < nwords; wi++) {
        int w = words[wi], init = wi == 0;
        char *aow = w == 2 ? NULL : ao;
        uint64_t vary = ~0ull;
        if (aow) {
            CUresult r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)aow, 0xFFFFFFFFu, 2, st);
            if (r == CUDA_SUCCESS) r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)(aow + 8), 0, 2, st);
            if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemsetD32Async (sort)", __func__, __FILE__, __LINE__); goto done; }
        }
        void *kargs[] = {&n, &len, &data, &rs, &es, &p0, &k0, &w, &kdesc, &init, &aow};
        LAUNCH(fns[K_KEYS], gstride, 256, 0, kargs, "sort keys");
        if (aow) {
            uint64_t h[2];
            CUresult r = ck_cu.cuMemcpyDtoHAsync_v2(h, (CUdeviceptr)(uintptr_t)aow, 16, st);
            if (r == CUDA_SUCCESS) r = ck_cu.cuStreamSynchronize(st);
            if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemcpyDtoHAsync (sort)", __func__, __FILE__, __LINE__); goto done; }
            vary = h[0] ^ h[1];
        }
        int bits = w == 2 ? 2 : 8 * key_bytes(d->type);
        for (int shift = 0; shift < bits; shift += 8) {
            if (!((vary >> shift) & 255u)) continue;   /* every key has this digit */
            int mode = 0;
            void *hargs[] = {&n, &k0, &p0, &mode, &len, &shift, &cnt, &nb};
            LAUNCH(fns[K_HIST], nb, 256, 0, hargs, "sort histogram");
            void *sargs[] = {&m, &cnt, &sums};
            LAUNCH(fns[K_SUMS], nc, 256, 0, sargs, "sort scan");
            void *targs[] = {&nc, &sums};
            LAUNCH(fns[K_TOP], 1, 256, 0, targs, "sort scan");
            LAUNCH(fns[K_APPLY], nc, 256, 0, sargs, "sort scan");
            void *xargs[] = {&n, &k0, &p0, &k1, &p1, &mode, &len, &shift, &cnt, &nb, &with_pay};
            LAUNCH(fns[K_SCATTER], nb, 256, 0, xargs, "sort scatter");
            char *t = k0; k0 = k1; k1 = t;
            t = p0; p0 = p1; p1 = t;
        }
    }
    if (d->nrows > 1) {
        int rbits = 0;
        while (rbits < 63 && ((int64_t)1 << rbits) < d->nrows) rbits++;
        for (int shift = 0; shift < rbits; shift += 8) {
            int mode = 1;
            void *hargs[] = {&n, &k0, &p0, &mode, &len, &shift, &cnt, &nb};
            LAUNCH(fns[K_HIST], nb, 256, 0, hargs, "sort histogram");
            void *sargs[] = {&m, &cnt, &sums};
            LAUNCH(fns[K_SUMS], nc, 256, 0, sargs, "sort scan");
            void *targs[] = {&nc, &sums};
            LAUNCH(fns[K_TOP], 1, 256, 0, targs, "sort scan");
            LAUNCH(fns[K_APPLY], nc, 256, 0, sargs, "sort scan");
            void *xargs[] = {&n, &k0, &p0, &k1, &p1, &mode, &len, &shift, &cnt, &nb, &with_pay};
            LAUNCH(fns[K_SCATTER], nb, 256, 0, xargs, "sort scatter");
            char *t = p0; p0 = p1; p1 = t;
        }
    }
    if (keys_only) {
        void *uargs[] = {&n, &k0, &data, &es, &desc};
        LAUNCH(fns[K_UNKEY], gstride, 256, 0, uargs, "sort output");
    } else {
        int64_t *idx = d->idx;
        int sv = d->sort_values;
        void *oargs[] = {&n, &len, &p0, &data, &rs, &es, &tmp, &idx, &irs, &ies, &sv};
        LAUNCH(fns[K_OUT], gstride, 256, 0, oargs, "sort output");
        if (sv) {
            void *pargs[] = {&n, &len, &tmp, &data, &rs, &es};
            LAUNCH(fns[K_PUT], gstride, 256, 0, pargs, "sort output");
        }
    }
done:
    /* the pool is stream-ordered: the blocks are reused only after the kernels */
    if (k0) ck_cuda_free(d->dev, k0, sz_keys);
    if (k1) ck_cuda_free(d->dev, k1, sz_keys);
    if (p0) ck_cuda_free(d->dev, p0, sz_pay);
    if (p1) ck_cuda_free(d->dev, p1, sz_pay);
    if (cnt) ck_cuda_free(d->dev, cnt, sz_cnt);
    if (sums) ck_cuda_free(d->dev, sums, sz_sums);
    if (tmp) ck_cuda_free(d->dev, tmp, sz_tmp);
    if (ao) ck_cuda_free(d->dev, ao, 16);
    return s;
}

ck_status ck_cuda_sort(const ck_sort_desc *d)
{
    if (d->nrows <= 0 || d->len <= 0) return CK_OK;
    if (d->nrows > INT64_MAX / d->len || d->nrows * d->len > (int64_t)0xFFFFFFFFu - RX_TILE)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "sorting 2**32 or more elements at once on the GPU is not implemented");
    if (d->len == 1) {   /* nothing moves: the index is 0 */
        if (!d->idx) return CK_OK;
    }
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    CUfunction fns[K_N] = {0};
    s = get_fns(dev, d->type, fns);
    if (s != CK_OK) return s;
    CUstream st = ck_cuda_current_stream(dev);
    if (!ck_dtype_is_complex(d->type) && d->len <= BLOCK_SORT_MAX) return block_sort(d, fns[K_BLOCK], dev, st);
    return radix_sort(d, fns, dev, st);
}

ck_status ck_cuda_searchsorted(const ck_searchsorted_desc *d)
{
    if (d->nv <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    CUfunction fns[K_N] = {0};
    s = get_fns(dev, d->type, fns);
    if (s != CK_OK) return s;
    long long na = d->na, nv = d->nv;
    const char *a = d->a, *v = d->v;
    int64_t *out = d->out;
    int right = d->side_right;
    void *args[] = {&na, &nv, &a, &v, &out, &right};
    CUstream st = ck_cuda_current_stream(dev);
    LAUNCH(fns[K_SS], ck_cuda_grid_for(dev, nv, 256), 256, 0, args, "searchsorted");
done:
    return s;
}
