/* Element-wise, cast, fill and iota on the GPU: a merged iteration becomes
 * a kernel spec, the spec a compiled kernel (cached by its 64-bit key), and
 * one launch on the current stream. */
#include "cuda_internal.h"

#include <string.h>

static char *ew_source(const void *spec) { return ck_cuda_ew_source((const ck_cuda_ew_spec *)spec); }

/* Fill the operand kinds, dims, index width and vector width of sp from it. */
static ck_status spec_from_iter(ck_cuda_ew_spec *sp, const ck_iter *it, unsigned scalar_mask, ck_cuda_nd *nd)
{
    if (it->ndim > CK_CUDA_EW_MAXDIM)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "GPU element-wise kernels support up to %d non-mergeable "
                            "dimensions (this view has %d)", CK_CUDA_EW_MAXDIM, it->ndim);
    memset(nd, 0, sizeof *nd);
    sp->ndim = it->ndim;
    int all_contig = 1, maxsz = 1;
    for (int k = 0; k < sp->nops; k++) {
        int isz = ck_dtype_get_info(sp->types[k])->itemsize;
        if (scalar_mask & (1u << k)) {
            sp->kinds[k] = CK_OPND_SCALAR;
            continue;
        }
        if (isz > maxsz) maxsz = isz;
        if (it->ndim == 1 && it->strides[k][0] == isz) {
            sp->kinds[k] = CK_OPND_CONTIG;
        } else {
            sp->kinds[k] = CK_OPND_STRIDED;
            all_contig = 0;
        }
        for (int dd = 0; dd < it->ndim; dd++) nd->strides[k][dd] = it->strides[k][dd];
    }
    for (int dd = 0; dd < it->ndim; dd++) nd->shape[dd] = it->shape[dd];
    sp->idx64 = it->size > ((int64_t)1 << 31) - ((int64_t)1 << 26);
    sp->vec = 1;
    if (all_contig && it->size >= 1024 && maxsz <= 8) {
        int v = 16 / maxsz;
        for (int k = 0; k < sp->nops && v > 1; k++) {
            if (sp->kinds[k] == CK_OPND_SCALAR) continue;
            int isz = ck_dtype_get_info(sp->types[k])->itemsize;
            while (v > 1 && ((uintptr_t)it->data[k] % (uintptr_t)(v * isz)) != 0) v /= 2;
        }
        sp->vec = v;
    }
    return CK_OK;
}

/* Launch an element-wise-shaped kernel: args are n, nd, then the operands
 * (pointers for arrays, the host values for scalars). */
static ck_status run(int d, const ck_cuda_ew_spec *sp, const ck_iter *it, const ck_cuda_nd *nd, void *const *scalar_vals)
{
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return s;
    CUfunction f;
    s = ck_cuda_get_kernel(d, ck_cuda_ew_key(sp), ew_source, sp, "ck_ew", &f);
    if (s != CK_OK) return s;
    long long n64 = it->size;
    int n32 = (int)it->size;
    void *args[2 + 4];
    void *ptrs[4];
    int na = 0, strided = 0;
    for (int k = 0; k < sp->nops; k++) strided |= sp->kinds[k] == CK_OPND_STRIDED;
    args[na++] = sp->idx64 ? (void *)&n64 : (void *)&n32;
    if (strided) args[na++] = (void *)nd;
    for (int k = 0; k < sp->nops; k++) {
        if (sp->kinds[k] == CK_OPND_SCALAR) {
            args[na++] = scalar_vals[k];
        } else {
            ptrs[k] = it->data[k];
            args[na++] = &ptrs[k];
        }
    }
    unsigned grid;
    if (sp->vec > 1) {   /* one tile of 4 vectors per thread, no grid-stride trips */
        int64_t tiles = (it->size / sp->vec + 1023) / 1024;
        grid = (unsigned)(tiles < 1 ? 1 : tiles > 0x7FFFFFFF ? 0x7FFFFFFF : tiles);
    } else {
        grid = ck_cuda_grid_for(d, it->size, 256);
    }
    return ck_cuda_launch(d, f, grid, 256, 0, args);
}

static int device_of(const ck_ew_desc *d) { return d->dev.index; }

ck_status ck_cuda_elementwise(const ck_ew_desc *d)
{
    if (d->it.size == 0) return CK_OK;
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = d->op;
    sp.nops = d->it.nops;
    for (int k = 0; k < sp.nops; k++) sp.types[k] = d->types[k];
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &d->it, d->scalar_mask, &nd);
    if (s != CK_OK) return s;
    void *vals[4];
    for (int k = 0; k < sp.nops; k++) vals[k] = d->it.data[k];
    return run(device_of(d), &sp, &d->it, &nd, vals);
}

ck_status ck_cuda_cast(const ck_ew_desc *d)
{
    if (d->it.size == 0) return CK_OK;
    int dev = device_of(d);
    int isz = ck_dtype_get_info(d->types[0])->itemsize;
    if (d->types[0] == d->types[1] && d->it.ndim == 1 && d->it.strides[0][0] == isz && d->it.strides[1][0] == isz) {
        ck_status s = ck_cuda_use(dev);
        if (s != CK_OK) return s;
        CK_CHECK_CU(ck_cu.cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)d->it.data[0], (CUdeviceptr)(uintptr_t)d->it.data[1],
                                               (size_t)(d->it.size * isz), ck_cuda_current_stream(dev)));
        return CK_OK;
    }
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_CAST;
    sp.nops = 2;
    sp.types[0] = d->types[0];
    sp.types[1] = d->types[1];
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &d->it, 0, &nd);
    if (s != CK_OK) return s;
    return run(dev, &sp, &d->it, &nd, NULL);
}

ck_status ck_cuda_fill(const ck_ew_desc *d, const void *value)
{
    if (d->it.size == 0) return CK_OK;
    int dev = device_of(d);
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_FILL;
    sp.nops = 2;
    sp.types[0] = sp.types[1] = d->types[0];
    /* the value rides as operand 1, a scalar */
    ck_iter it = d->it;
    it.nops = 2;
    for (int dd = 0; dd < it.ndim; dd++) it.strides[1][dd] = 0;
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &it, 1u << 1, &nd);
    if (s != CK_OK) return s;
    void *vals[2] = {NULL, (void *)value};
    return run(dev, &sp, &it, &nd, vals);
}

ck_status ck_cuda_iota(ck_array *out, double start, double step)
{
    if (out->size == 0) return CK_OK;
    int dev = ck_array_device(out).index;
    ck_cuda_ew_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.op = CK_KOP_IOTA;
    sp.nops = 3;
    sp.types[0] = out->dtype;
    sp.types[1] = sp.types[2] = CK_FLOAT64;
    ck_iter_operand o = ck_iter_op_of(out);
    ck_iter it;
    ck_iter_prepare(&it, 1, out->ndim, out->shape, &o);
    it.nops = 3;
    for (int dd = 0; dd < it.ndim; dd++) it.strides[1][dd] = it.strides[2][dd] = 0;
    ck_cuda_nd nd;
    ck_status s = spec_from_iter(&sp, &it, (1u << 1) | (1u << 2), &nd);
    if (s != CK_OK) return s;
    void *vals[3] = {NULL, &start, &step};
    return run(dev, &sp, &it, &nd, vals);
}
