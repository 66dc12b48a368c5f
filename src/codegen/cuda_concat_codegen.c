/* The joining kernel (concatenate / stack in one launch) as CUDA C text. */
#include "cuda_concat_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

#include <stdlib.h>

uint64_t ck_cuda_cat_key(const ck_cuda_cat_spec *sp)
{
    int ulog = sp->unit == 16 ? 4 : sp->unit == 8 ? 3 : sp->unit == 4 ? 2 : sp->unit == 2 ? 1 : 0;
    uint64_t k = (uint64_t)(sp->kind & 0x3);
    k |= (uint64_t)(sp->ndim & 0x3F) << 2;
    k |= (uint64_t)(sp->axis & 0x3F) << 8;
    k |= (uint64_t)ulog << 14;
    k |= (uint64_t)(sp->units & 0x1F) << 17;
    k |= (uint64_t)(sp->idx64 & 1) << 22;
    k |= (uint64_t)(sp->cap & 0x3F) << 23;
    return ck_kernel_key(CK_KFAM_CONCAT, k);
}

const char *ck_cuda_cat_name(const ck_cuda_cat_spec *sp) { return sp->kind == CK_CATK_ROWS ? "ck_cat_rows" : "ck_cat"; }

static size_t words(int kind, int ndim, int cap)
{
    size_t C = (size_t)cap, D = (size_t)(ndim > 0 ? ndim : 1);
    if (kind == CK_CATK_ROWS) return 3 + C + C + 1;
    return 2 * D + C + C + 1 + C * D;
}

size_t ck_cuda_cat_params_size(const ck_cuda_cat_spec *sp) { return 8 * words(sp->kind, sp->ndim, sp->cap); }

int ck_cuda_cat_capacity(int kind, int ndim)
{
    int cap = CK_CAT_MAX_PIECES;
    while (cap > 1 && 8 * words(kind, ndim, cap) > CK_CAT_PARAM_BYTES) cap--;
    return cap;
}

static const char *word_type(int unit)
{
    return unit == 16 ? "ck_w16" : unit == 8 ? "unsigned long long" : unit == 4 ? "unsigned int"
         : unit == 2 ? "unsigned short" : "unsigned char";
}

char *ck_cuda_cat_source(const ck_cuda_cat_spec *sp)
{
    if ((sp->kind != CK_CATK_ROWS && sp->kind != CK_CATK_STRIDED) || sp->cap < 1 || sp->cap > CK_CAT_MAX_PIECES ||
        (sp->kind == CK_CATK_STRIDED && (sp->ndim < 1 || sp->ndim > CK_MAXDIMS || sp->axis < 0 || sp->axis >= sp->ndim))) {
        ck_error_set(CK_ERR_VALUE, "bad joining kernel spec (kind %d, ndim %d, axis %d)", sp->kind, sp->ndim, sp->axis);
        return NULL;
    }
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    const char *I = sp->idx64 ? "unsigned long long" : "unsigned int";
    const char *W = word_type(sp->unit);
    int C = sp->cap, D = sp->ndim;
    ck_sbuf_printf(&b, "struct alignas(16) ck_w16 { unsigned long long lo, hi; };\n");
    /* the piece of coordinate c along the axis: the last p with start[p] <= c
     * (starts strictly increase: empty pieces are never passed) */
    ck_sbuf_printf(&b, "__device__ __forceinline__ int ck_cat_piece(const long long *start, int np, long long c)\n{\n"
                       "    int lo = 0, hi = np - 1;\n"
                       "    while (lo < hi) {\n        const int mid = (lo + hi + 1) >> 1;\n"
                       "        if (start[mid] <= c) lo = mid; else hi = mid - 1;\n    }\n    return lo;\n}\n");
    if (sp->kind == CK_CATK_ROWS) {
        ck_sbuf_printf(&b, "struct ck_catp {\n    long long rows, width, ostride;\n    const char *ptr[%d];\n"
                           "    long long start[%d];\n};\n", C, C + 1);
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_cat_rows(%s n, char *out, int np, "
                           "const __grid_constant__ ck_catp P)\n{\n", I);
        ck_sbuf_printf(&b, "    const %s width = (%s)P.width;\n", I, I);
        ck_sbuf_printf(&b, "    for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (%s)gridDim.x * blockDim.x) {\n",
                       I, I, I);
        ck_sbuf_printf(&b, "        const %s row = i / width;\n        const long long col = (long long)(i - row * width);\n"
                           "        const int p = ck_cat_piece(P.start, np, col);\n"
                           "        const long long s0 = P.start[p], w = P.start[p + 1] - s0;\n"
                           "        const %s *src = (const %s *)P.ptr[p] + (long long)row * w + (col - s0);\n"
                           "        %s *dst = (%s *)out + (long long)row * P.ostride + col;\n"
                           "        *dst = *src;\n    }\n}\n",
                       I, W, W, W, W);
    } else {
        ck_sbuf_printf(&b, "struct ck_catg {\n    long long shape[%d], ostride[%d];\n    const char *ptr[%d];\n"
                           "    long long start[%d];\n    long long pstride[%d][%d];\n};\n", D, D, C, C + 1, C, D);
        ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_cat(%s n, char *out, int np, "
                           "const __grid_constant__ ck_catg P)\n{\n", I);
        ck_sbuf_printf(&b, "    for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (%s)gridDim.x * blockDim.x) {\n",
                       I, I, I);
        ck_sbuf_printf(&b, "        long long c[%d], oo = 0;\n        %s rem = i;\n"
                           "#pragma unroll\n        for (int d = %d; d >= 0; d--) {\n"
                           "            const %s q = rem / (%s)P.shape[d];\n"
                           "            c[d] = (long long)(rem - q * (%s)P.shape[d]);\n"
                           "            rem = q;\n            oo += c[d] * P.ostride[d];\n        }\n",
                       D, I, D - 1, I, I, I);
        ck_sbuf_printf(&b, "        const int p = ck_cat_piece(P.start, np, c[%d]);\n"
                           "        c[%d] -= P.start[p];\n        long long so = 0;\n"
                           "#pragma unroll\n        for (int d = 0; d < %d; d++) so += c[d] * P.pstride[p][d];\n",
                       sp->axis, sp->axis, D);
        ck_sbuf_printf(&b, "        const %s *src = (const %s *)(P.ptr[p] + so);\n        %s *dst = (%s *)(out + oo);\n", W, W, W, W);
        if (sp->units == 1) ck_sbuf_printf(&b, "        *dst = *src;\n");
        else ck_sbuf_printf(&b, "#pragma unroll\n        for (int u = 0; u < %d; u++) dst[u] = src[u];\n", sp->units);
        ck_sbuf_printf(&b, "    }\n}\n");
    }
    return ck_sbuf_finish(&b);
}
