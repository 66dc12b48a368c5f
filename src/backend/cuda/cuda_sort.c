/*
 * Sort, argsort and searchsorted on the GPU (kernels: src/codegen/sort_kernels.cuh).
 *
 * Three paths, all giving the CPU's stable order bit for bit:
 *  - rows of up to 256 elements: a block per row, a bitonic sort of
 *    (key, column) in shared memory;
 *  - rows of up to 4096 (a 4096 x 4096 matrix along its last axis): a block
 *    per row, an LSD radix sort in shared memory;
 *  - longer rows (and complex): an LSD radix sort over all rows at once of
 *    (key word, element number) pairs, 8-bit digits.  One kernel computes
 *    a key word and the histograms of all its digits; each pass is then
 *    one kernel (onesweep: tiles ranked in shared memory, their digit
 *    offsets found by decoupled look-back, a stable scatter).  Complex keys
 *    are three words, sorted lo, hi, top.  Several rows are kept apart by
 *    final passes over the row number of each element, which the stable
 *    passes leave in key order within a row.
 * The element numbers then give argsort's indices and, through a gather to
 * a scratch buffer, the sorted values.  One row of integers, or of floats
 * sorted ascending for their values only, carries no element numbers: the
 * values come back from the sorted keys, and when the row is contiguous
 * the first pass reads the values and the last writes them (no key
 * buffers filled or read back).  For floats that sort uses the plain
 * order-preserving bit transform, so -0.0 comes before +0.0 and NaNs lose
 * their sign: values equal NumPy's, bits may differ from the CPU's.
 * Passes of a digit that every key shares are skipped (long sorts read the
 * histograms back: one host sync a key word).
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_sort_codegen.h"

#include <stdlib.h>
#include <string.h>

#define RX_TILE 4096u
#define BITONIC_MAX 256
#define ROWS4_MAX 1024
#define ROWS16_MAX 4096
/* the passes' ways of ranking a tile (CK_RANK_* in the kernels): by
 * ballots, by a match instruction when a digit takes at most
 * RANK_MATCH_DIGITS values over all keys, by atomics (unstable) for the
 * first pass of a keys-only sort */
enum { RANK_BALLOT, RANK_MATCH, RANK_ATOMIC };
#define RANK_MATCH_DIGITS 16

static char *sort_source(const void *spec) { return ck_cuda_sort_source(spec); }

static ck_status get_fns(int dev, ck_dtype t, CUfunction *fns)
{
    ck_cuda_sort_spec sp = {t};
    return ck_cuda_get_kernels(dev, ck_cuda_sort_key(&sp), sort_source, &sp, ck_cuda_sort_names,
                               ck_cuda_sort_nkernels(&sp), fns);
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

/* A block per row: the bitonic kernel or a row radix sort. */
static ck_status block_sort(const ck_sort_desc *d, CUfunction *fns, CUstream st)
{
    ck_status s = CK_OK;
    long long nrows = d->nrows, irs = d->idx_row_stride, ies = d->idx_elem_stride;
    long long rs = d->row_stride, es = d->elem_stride;
    int len = (int)d->len, desc = d->descending, sv = d->sort_values;
    char *data = d->data;
    int64_t *idx = d->idx;
    unsigned grid = nrows < 0x7FFFFFFFLL ? (unsigned)nrows : 0x7FFFFFFFu;
    if (d->len <= BITONIC_MAX) {
        unsigned P = pow2_at_least(d->len < 2 ? 2 : d->len);
        unsigned T = P / 2 < 32 ? 32 : P / 2;
        int Pi = (int)P;
        void *args[] = {&nrows, &len, &Pi, &data, &rs, &es, &desc, &idx, &irs, &ies, &sv};
        LAUNCH(fns[CK_SORTK_BLOCK], grid, T, 0, args, "block sort");
    } else {
        void *args[] = {&nrows, &len, &data, &rs, &es, &desc, &idx, &irs, &ies, &sv};
        LAUNCH(fns[d->len <= ROWS4_MAX ? CK_SORTK_ROWS4 : CK_SORTK_ROWS16], grid, 256, 0, args, "row sort");
    }
done:
    return s;
}

/* The scratch of a long sort, one pool block carved up. */
typedef struct rx_bufs {
    char *block;
    size_t size;
    char *k0, *k1, *p0, *p1, *tmp;
    uint32_t *hist, *counters;      /* [4 words][8 passes][256]; [64] */
    unsigned long long *status;     /* [tiles][256] */
} rx_bufs;

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

#define RX_HIST_WORDS (4 * 8 * 256)
#define RX_COUNTERS 64

static ck_status rx_alloc(rx_bufs *b, ck_device dev, size_t sz_keys, size_t sz_pay, size_t sz_tmp, unsigned ntiles,
                          int two_key_buffers)
{
    size_t sz_zero = (RX_HIST_WORDS + RX_COUNTERS) * 4 + (size_t)ntiles * 256 * 8;
    size_t off[6], total = 0;
    size_t sizes[6] = {sz_zero, sz_keys, two_key_buffers ? sz_keys : 0, sz_pay, sz_pay, sz_tmp};
    for (int i = 0; i < 6; i++) { off[i] = total; total += align256(sizes[i]); }
    memset(b, 0, sizeof *b);
    if (!(b->block = ck_cuda_alloc(dev, total))) return ck_error_status();
    b->size = total;
    b->hist = (uint32_t *)(b->block + off[0]);
    b->counters = b->hist + RX_HIST_WORDS;
    b->status = (unsigned long long *)(b->block + off[0] + (RX_HIST_WORDS + RX_COUNTERS) * 4);
    b->k0 = sizes[1] ? b->block + off[1] : NULL;
    b->k1 = sizes[2] ? b->block + off[2] : NULL;
    b->p0 = sz_pay ? b->block + off[3] : NULL;
    b->p1 = sz_pay ? b->block + off[4] : NULL;
    b->tmp = sz_tmp ? b->block + off[5] : NULL;
    return CK_OK;
}

/* The values of one row of integers, or of floats sorted ascending, come
 * back from their keys: no element numbers to carry (1: integers, 2:
 * floats, keyed by the plain transform). */
static int keys_only_kind(const ck_sort_desc *d)
{
    if (d->idx || d->nrows != 1) return 0;
    if (d->type == CK_FLOAT16 || d->type == CK_FLOAT32 || d->type == CK_FLOAT64) return d->descending ? 0 : 2;
    return ck_dtype_is_integer(d->type) ? 1 : 0;
}

/* ... and when the row is contiguous and long, the passes read and write
 * the values themselves (and can read them from d->src) */
static int raw_sort(const ck_sort_desc *d)
{
    return !ck_dtype_is_complex(d->type) && d->len > ROWS16_MAX && keys_only_kind(d) &&
           d->elem_stride == (int64_t)ck_dtype_get_info(d->type)->itemsize;
}

static ck_status radix_sort(const ck_sort_desc *d, CUfunction *fns, int dev, CUstream st)
{
    ck_status s = CK_OK;
    int64_t n64 = d->nrows * d->len;
    unsigned n = (unsigned)n64;
    const int kb = ck_cuda_sort_key_bytes(d->type);
    size_t ksz = kb > 4 ? 8 : 4, isz = (size_t)ck_dtype_get_info(d->type)->itemsize;
    unsigned ntiles = (n + RX_TILE - 1) / RX_TILE;
    const int kind = keys_only_kind(d), fkeys = kind == 2, keys_only = kind != 0, raw = raw_sort(d);
    size_t sz_keys = (size_t)n * ksz, sz_pay = keys_only ? 0 : (size_t)n * 4;
    size_t sz_tmp = d->sort_values && !keys_only ? (size_t)n * isz : 0;
    rx_bufs b;
    if ((s = rx_alloc(&b, d->dev, sz_keys, sz_pay, sz_tmp, ntiles, 1)) != CK_OK) return s;
    CUresult r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)b.hist, 0,
                                        RX_HIST_WORDS + RX_COUNTERS + (size_t)ntiles * 256 * 2, st);
    if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemsetD32Async (sort)", __func__, __FILE__, __LINE__); goto done; }
    long long len = d->len, rs = d->row_stride, es = d->elem_stride;
    long long irs = d->idx_row_stride, ies = d->idx_elem_stride;
    int desc = d->descending, kdesc = desc | (fkeys ? 2 : 0), epoch = 0, mode = 0;
    char *data = d->data, *k0 = b.k0, *k1 = b.k1, *p0 = b.p0, *p1 = b.p1, *none = NULL;
    /* where the values are read: d->src (raw sorts only; other sorts had it
     * copied to data) */
    const char *in = raw && d->src ? d->src : data;
    /* the keys kernel: four elements a thread a step, and blocks that all
     * fit at once (its registers and 32 KB of counts allow five a
     * multiprocessor), so there is no tail wave and adding their
     * histograms up stays cheap */
    unsigned kgrid = ck_cuda_grid_for(dev, (n + 3) / 4, 256), kcap = (unsigned)ck_cuda_devices[dev].sm_count * 4;
    if (kcap && kgrid > kcap) kgrid = kcap;
    unsigned gstride = ck_cuda_grid_for(dev, n, 256);
    /* long sorts read each word's histograms back and skip the passes of
     * digits every key shares */
    int skip = n64 >= ((int64_t)1 << 16);
    int cplx = ck_dtype_is_complex(d->type);
    int words[3] = {0, 1, 2}, nwords = 3;
    if (!cplx) { words[0] = 1; nwords = 1; }
    for (int wi = 0; wi < nwords; wi++) {
        int w = words[wi], init = wi == 0, np = w == 2 ? 1 : kb;
        uint32_t *hist = b.hist + wi * 8 * 256;
        char *kout = raw ? NULL : k0;
        void *kargs[] = {&n, &len, &in, &rs, &es, &p0, &kout, &w, &kdesc, &init, &hist};
        LAUNCH(fns[CK_SORTK_KEYS], kgrid, 256, 0, kargs, "sort keys");
        int shifts[8], hows[8], npass = 0;
        if (skip) {
            uint32_t h[8 * 256];
            /* the copy to pageable memory would wait for the stream in the driver */
            s = ck_sync_point(d->dev, "sort: the radix histogram that skips passes");
            if (s == CK_OK) s = ck_cuda_wait_stream(dev, st, "sort");
            if (s != CK_OK) goto done;
            r = ck_cu.cuMemcpyDtoHAsync_v2(h, (CUdeviceptr)(uintptr_t)hist, (size_t)np * 256 * 4, st);
            if (r == CUDA_SUCCESS) r = ck_cu.cuStreamSynchronize(st);
            if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemcpyDtoHAsync (sort)", __func__, __FILE__, __LINE__); goto done; }
            for (int p = 0; p < np; p++) {
                int shared = 0, used = 0;
                for (int dg = 0; dg < 256; dg++) {
                    shared |= h[p * 256 + dg] == n;
                    used += h[p * 256 + dg] != 0;
                }
                if (shared) continue;
                hows[npass] = used <= RANK_MATCH_DIGITS ? RANK_MATCH : RANK_BALLOT;
                shifts[npass++] = 8 * p;
            }
        } else {
            for (int p = 0; p < np; p++) {
                hows[npass] = RANK_BALLOT;
                shifts[npass++] = 8 * p;
            }
        }
        /* a keys-only sort's first pass needs no stable ranks */
        if (keys_only && npass) hows[0] = RANK_ATOMIC;
        /* raw: the first pass reads the values; the last writes them back
         * unless it is also the first (no pass in place) */
        if (raw && npass == 0) {   /* every key equal: the values are sorted */
            if (in != data) {
                r = ck_cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)data, (CUdeviceptr)(uintptr_t)in, n * isz, st);
                if (r != CUDA_SUCCESS) { s = ck_cu_fail(r, "cuMemcpyDtoDAsync (sort)", __func__, __FILE__, __LINE__); goto done; }
            }
            goto done;
        }
        for (int j = 0; j < npass; j++) {
            epoch++;
            const char *rin = raw && j == 0 ? in : NULL;
            char *rout = raw && j == npass - 1 && j > 0 ? data : NULL;
            uint32_t *h = hist + (shifts[j] / 8) * 256, *ctr = b.counters + epoch;
            if (keys_only) {
                void *xargs[] = {&n, &k0, &k1, &shifts[j], &h, &b.status, &ctr, &epoch, &rin, &rout, &kdesc, &hows[j]};
                LAUNCH(fns[CK_SORTK_PASS], ntiles, 256, 0, xargs, "sort pass");
            } else {
                void *xargs[] = {&n, &k0, &p0, &k1, &p1, &mode, &len, &shifts[j], &h, &b.status, &ctr, &epoch,
                                 &hows[j]};
                LAUNCH(fns[CK_SORTK_PASS_PAY], ntiles, 256, 0, xargs, "sort pass");
            }
            char *t = k0; k0 = k1; k1 = t;
            t = p0; p0 = p1; p1 = t;
        }
        if (raw) {
            if (npass == 1) {   /* the keys of the one pass back to values */
                void *uargs[] = {&n, &k0, &data, &es, &desc};
                LAUNCH(fns[CK_SORTK_UNKEY], gstride, 256, 0, uargs, "sort output");
            }
            goto done;
        }
    }
    if (d->nrows > 1) {
        int rbits = 0, np = 0;
        while (rbits < 63 && ((int64_t)1 << rbits) < d->nrows) rbits++;
        np = (rbits + 7) / 8;
        uint32_t *hist = b.hist + 3 * 8 * 256;
        long long nrows = d->nrows;
        void *hargs[] = {&nrows, &len, &np, &hist};
        LAUNCH(fns[CK_SORTK_ROWHIST], ck_cuda_grid_for(dev, nrows, 256), 256, 0, hargs, "sort row histogram");
        mode = 1;
        for (int p = 0; p < np; p++) {
            epoch++;
            int shift = 8 * p;
            uint32_t *h = hist + p * 256, *ctr = b.counters + epoch;
            /* the rows' digits this pass: how many values they take */
            int64_t vals = (d->nrows + ((int64_t)1 << shift) - 1) >> shift;
            int how = vals <= RANK_MATCH_DIGITS ? RANK_MATCH : RANK_BALLOT;
            void *xargs[] = {&n, &k0, &p0, &none, &p1, &mode, &len, &shift, &h, &b.status, &ctr, &epoch, &how};
            LAUNCH(fns[CK_SORTK_PASS_PAY], ntiles, 256, 0, xargs, "sort row pass");
            char *t = p0; p0 = p1; p1 = t;
        }
    }
    if (keys_only) {
        void *uargs[] = {&n, &k0, &data, &es, &desc};
        LAUNCH(fns[CK_SORTK_UNKEY], gstride, 256, 0, uargs, "sort output");
    } else {
        int64_t *idx = d->idx;
        int sv = d->sort_values;
        void *oargs[] = {&n, &len, &p0, &data, &rs, &es, &b.tmp, &idx, &irs, &ies, &sv};
        LAUNCH(fns[CK_SORTK_OUT], gstride, 256, 0, oargs, "sort output");
        if (sv) {
            void *pargs[] = {&n, &len, &b.tmp, &data, &rs, &es};
            LAUNCH(fns[CK_SORTK_PUT], gstride, 256, 0, pargs, "sort output");
        }
    }
done:
    /* the pool is stream-ordered: the block is reused only after the kernels */
    ck_cuda_free(d->dev, b.block, b.size);
    return s;
}

ck_status ck_cuda_sort(const ck_sort_desc *d)
{
    if (d->nrows <= 0 || d->len <= 0) return CK_OK;
    if (d->nrows > INT64_MAX / d->len || d->nrows * d->len > (int64_t)0xFFFFFFFFu - RX_TILE)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "sorting 2**32 or more elements at once on the GPU is not implemented");
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    CUstream st = ck_cuda_current_stream(dev);
    if (d->src && !raw_sort(d)) {   /* the input where the sort works */
        size_t bytes = (size_t)(d->nrows * d->len) * (size_t)ck_dtype_get_info(d->type)->itemsize;
        CK_CHECK_CU(ck_cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)d->data, (CUdeviceptr)(uintptr_t)d->src,
                                               bytes, st));
    }
    if (d->len == 1 && !d->idx) return CK_OK;   /* nothing moves */
    CUfunction fns[CK_SORTK_N] = {0};
    s = get_fns(dev, d->type, fns);
    if (s != CK_OK) return s;
    if (!ck_dtype_is_complex(d->type) && d->len <= ROWS16_MAX) return block_sort(d, fns, st);
    return radix_sort(d, fns, dev, st);
}

static char *hist_source(const void *spec) { return ck_cuda_hist_source(spec); }

/* A block's own histogram in shared memory where the bins fit (atomics on
 * a few global counters would serialise), global atomics beyond. */
#define HIST_SHARED_MAX 4096

ck_status ck_cuda_histogram(const ck_histogram_desc *d)
{
    if (d->n <= 0 || d->nb <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    ck_cuda_sort_spec sp = {d->type};
    CUfunction f;
    if ((s = ck_cuda_get_kernel(dev, ck_cuda_hist_key(d->type), hist_source, &sp, "ck_hist", &f)) != CK_OK) return s;
    long long n = d->n, nb = d->nb;
    const char *x = d->x;
    const double *e = d->edges, *w = d->w;
    int uniform = d->uniform, priv = d->nb <= HIST_SHARED_MAX;
    char *out = d->out;
    void *args[] = {&n, &nb, &x, &e, &uniform, &w, &out, &priv};
    return ck_cuda_launch(dev, f, ck_cuda_grid_for(dev, n, 256), 256, priv ? (unsigned)(nb * 8) : 0, args);
}

ck_status ck_cuda_searchsorted(const ck_searchsorted_desc *d)
{
    if (d->nv <= 0) return CK_OK;
    int dev = d->dev.index;
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    CUfunction fns[CK_SORTK_N] = {0};
    s = get_fns(dev, d->type, fns);
    if (s != CK_OK) return s;
    long long na = d->na, nv = d->nv;
    const char *a = d->a, *v = d->v;
    int64_t *out = d->out;
    int right = d->side_right;
    void *args[] = {&na, &nv, &a, &v, &out, &right};
    CUstream st = ck_cuda_current_stream(dev);
    LAUNCH(fns[CK_SORTK_SS], ck_cuda_grid_for(dev, nv, 256), 256, 0, args, "searchsorted");
done:
    return s;
}
