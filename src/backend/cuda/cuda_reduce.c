/*
 * Reductions and scans on the GPU.
 *
 * The reduced dims are split over blocks so that even one output (a full
 * sum) fills the GPU: each (output, split) pair reduces a slice; partials
 * of more than one split are combined by a second kernel.  Two layouts:
 * "block" (a block per output slice, threads striding the contiguous
 * reduced dims: sum along the last axis) and "thread" (a thread per output,
 * neighbouring threads reading neighbouring memory: sum along axis 0).
 */
#include "cuda_internal.h"
#include "../../codegen/cuda_reduce_codegen.h"

#include <stdlib.h>
#include <string.h>

static char *red_source(const void *spec) { return ck_cuda_red_source(spec); }
static char *scan_source(const void *spec) { return ck_cuda_scan_source(spec); }

ck_status ck_cuda_reduce(const ck_reduce_desc *d)
{
    int dev = d->dev.index;
    if (d->n_outer > CK_CUDA_RED_MAXDIM || d->n_inner > CK_CUDA_RED_MAXDIM)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "GPU reductions support up to %d non-mergeable dimensions", CK_CUDA_RED_MAXDIM);
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    ck_cuda_red_spec sp = {d->op, d->in_type, d->out_type, d->n_outer, d->n_inner, 0};
    ck_cuda_red_nd nd;
    memset(&nd, 0, sizeof nd);
    long long n_out = 1;
    for (int i = 0; i < d->n_outer; i++) {
        nd.out_shape[i] = d->outer_shape[i];
        nd.out_in_st[i] = d->outer_in_strides[i];
        nd.out_out_st[i] = d->outer_out_strides[i];
        n_out *= d->outer_shape[i];
    }
    for (int i = 0; i < d->n_inner; i++) {
        nd.in_shape[i] = d->inner_shape[i];
        nd.in_st[i] = d->inner_strides[i];
    }
    if (n_out == 0) return CK_OK;
    long long inner = d->inner_size;
    int isz = ck_dtype_get_info(d->in_type)->itemsize;
    int inner_contig = d->n_inner >= 1 && d->inner_strides[0] == isz;
    int outer_contig = d->n_outer >= 1 && (d->outer_in_strides[0] == isz);
    sp.thread_layout = !inner_contig && outer_contig && n_out >= 32;
    const ck_cuda_device *cd = ck_cuda_dev(dev);
    long long target_blocks = (long long)cd->sm_count * 8;
    long long splits = 1, chunk = inner;
    unsigned gx;
    if (sp.thread_layout) {
        gx = (unsigned)((n_out + 255) / 256);
        if ((long long)gx < target_blocks * 2 && inner >= 64) {
            splits = (target_blocks * 2 + gx - 1) / gx;
            if (splits > inner / 32) splits = inner / 32;
            if (splits > 65535) splits = 65535;
            if (splits < 1) splits = 1;
        }
    } else {
        gx = (unsigned)(n_out < 65535 * 8 ? n_out : 65535 * 8);
        if (n_out < target_blocks && inner >= 8192) {
            splits = (target_blocks * 4 + n_out - 1) / n_out;
            if (splits > inner / 4096) splits = inner / 4096;
            if (splits > 65535) splits = 65535;
            if (splits < 1) splits = 1;
        }
    }
    chunk = splits > 1 ? (inner + splits - 1) / splits : inner;
    if (sp.thread_layout && splits > 1) splits = (inner + chunk - 1) / chunk;
    if (!sp.thread_layout && splits > 1) splits = (inner + chunk - 1) / chunk;

    /* contiguous rows whose every slice starts 16-byte aligned take vector loads */
    int vec = 0;
    if (!sp.thread_layout && d->n_inner == 1 && inner_contig && isz <= 16) {
        int V = isz >= 16 ? 1 : 16 / isz;
        if (splits > 1) chunk = (chunk + 4 * V - 1) / (4 * V) * (4 * V);
        vec = ((uintptr_t)d->in % 16) == 0 && (chunk * isz) % 16 == 0;
        for (int i = 0; i < d->n_outer && vec; i++) vec = d->outer_in_strides[i] % 16 == 0;
        if (splits > 1) splits = (inner + chunk - 1) / chunk;
    }
    CUfunction fmain, ffinal = NULL;
    ck_red_kernel kmain = !sp.thread_layout && vec ? CK_REDK_VEC : CK_REDK_MAIN;
    s = ck_cuda_get_kernel(dev, ck_cuda_red_key(&sp, kmain), red_source, &sp, ck_cuda_red_name(&sp, kmain), &fmain);
    if (s != CK_OK) return s;
    void *partial = NULL;
    size_t psize = 0;
    if (splits > 1) {
        s = ck_cuda_get_kernel(dev, ck_cuda_red_key(&sp, CK_REDK_FINAL), red_source, &sp,
                               ck_cuda_red_name(&sp, CK_REDK_FINAL), &ffinal);
        if (s != CK_OK) return s;
        psize = (size_t)splits * (size_t)n_out * ck_cuda_red_acc_size(&sp);
        partial = ck_cuda_alloc(d->dev, psize);
        if (!partial) return ck_error_status();
    }
    const char *in = d->in;
    char *out = d->out;
    void *args[7] = {&n_out, &inner, &chunk, &nd, &in, &out, &partial};
    /* both kernels begin with CK_PDL_ENTRY (cuda_reduce_codegen.c) */
    s = ck_cuda_launch_pdl2(dev, fmain, gx, (unsigned)splits, 256, 0, args);
    if (s == CK_OK && splits > 1) {
        int sp32 = (int)splits;
        void *fargs[5] = {&n_out, &sp32, &nd, &out, &partial};
        unsigned fg = (unsigned)(n_out < 65535 * 8 ? n_out : 65535 * 8);
        s = ck_cuda_launch_pdl(dev, ffinal, fg, 256, 0, fargs);
    }
    if (partial) ck_cuda_free(d->dev, partial, psize);
    return s;
}

/* ------------------------------------------------------------- scans */

static ck_status scan_long_rows(const ck_scan_desc *d, const ck_cuda_scan_spec *sp, long long rows,
                                const ck_cuda_scan_nd *nd)
{
    int dev = d->dev.index;
    CUfunction f;
    ck_status s = ck_cuda_get_kernel(dev, ck_cuda_scan_key(sp, CK_SCANK_LOOKBACK), scan_source, sp,
                                     ck_cuda_scan_name(CK_SCANK_LOOKBACK), &f);
    if (s != CK_OK) return s;
    long long len = d->len, ntiles = (len + 4095) / 4096;
    /* counter (16 bytes), then one 8-byte word a tile: the packed (flag,
     * value) descriptors, or for wide types the int flags; both start at 0.
     * Then the aggregates and inclusive values of wide types (8 bytes each). */
    size_t off_desc = 16, off_aggs = off_desc + (size_t)ntiles * 8;
    size_t off_incls = off_aggs + (size_t)ntiles * 8, nbytes = off_incls + (size_t)ntiles * 8;
    char *ws = ck_cuda_alloc(d->dev, nbytes);
    if (!ws) return ck_error_status();
    CUstream st = ck_cuda_current_stream(dev);
    CUresult r = CUDA_SUCCESS;
    for (long long row = 0; row < rows && r == CUDA_SUCCESS; row++) {
        long long io = 0, oo = 0, q = row;
        for (int k = 0; k < d->n_outer; k++) {
            long long cc = q % nd->shape[k];
            q /= nd->shape[k];
            io += cc * nd->in_st[k];
            oo += cc * nd->out_st[k];
        }
        r = ck_cu.cuMemsetD32Async((CUdeviceptr)(uintptr_t)ws, 0, off_aggs / 4, st);
        if (r != CUDA_SUCCESS) break;
        const char *in = d->in + io;
        char *out = d->out + oo;
        char *counter = ws, *desc = ws + off_desc, *flags = ws + off_desc, *aggs = ws + off_aggs,
             *incls = ws + off_incls;
        void *args[] = {&len, &in, &out, &counter, &desc, &flags, &aggs, &incls};
        r = ck_cu.cuLaunchKernel(f, (unsigned)ntiles, 1, 1, 256, 1, 1, 0, st, args, NULL);
    }
    ck_cuda_free(d->dev, ws, nbytes);
    if (r != CUDA_SUCCESS) return ck_cu_fail(r, "cuLaunchKernel / cuMemsetD32Async (scan)", __func__, __FILE__, __LINE__);
    return CK_OK;
}

ck_status ck_cuda_scan(const ck_scan_desc *d)
{
    int dev = d->dev.index;
    if (d->n_outer > CK_CUDA_SCAN_MAXDIM)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "GPU scans support up to %d outer dimensions", CK_CUDA_SCAN_MAXDIM);
    ck_status s = ck_cuda_use(dev);
    if (s != CK_OK) return s;
    ck_cuda_scan_spec sp = {d->op, d->in_type, d->type, d->n_outer};
    ck_cuda_scan_nd nd;
    memset(&nd, 0, sizeof nd);
    long long rows = 1;
    for (int i = 0; i < d->n_outer; i++) {
        nd.shape[i] = d->outer_shape[i];
        nd.in_st[i] = d->outer_in_strides[i];
        nd.out_st[i] = d->outer_out_strides[i];
        rows *= d->outer_shape[i];
    }
    if (rows == 0 || d->len == 0) return CK_OK;
    CUfunction f;
    int isz = ck_dtype_get_info(d->in_type)->itemsize, osz = ck_dtype_get_info(d->type)->itemsize;
    /* a few long contiguous rows: the single-pass scan over all the GPU, row by row */
    if (rows <= 16 && d->len >= ((int64_t)1 << 16) && d->in_stride == isz && d->out_stride == osz &&
        !ck_dtype_is_complex(d->type) && d->len / 4096 < 0x7FFFFFFF)
        return scan_long_rows(d, &sp, rows, &nd);
    s = ck_cuda_get_kernel(dev, ck_cuda_scan_key(&sp, CK_SCANK_ROWS), scan_source, &sp,
                           ck_cuda_scan_name(CK_SCANK_ROWS), &f);
    if (s != CK_OK) return s;
    long long len = d->len, is = d->in_stride, os = d->out_stride;
    const char *in = d->in;
    char *out = d->out;
    void *args[7] = {&rows, &len, &is, &os, &nd, &in, &out};
    unsigned grid = rows < 65535 ? (unsigned)rows : 65535;
    CK_CHECK_CU(ck_cu.cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, ck_cuda_current_stream(dev), args, NULL));
    return CK_OK;
}
