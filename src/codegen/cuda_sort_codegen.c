/* The sort module of one dtype as CUDA C text. */
#include "cuda_sort_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

const char *const ck_cuda_sort_names[CK_SORTK_N] = {
    "ck_sk_keys", "ck_rx_rowhist", "ck_rx_pass", "ck_rx_pass_pay", "ck_sk_out", "ck_sk_put",
    "ck_ss", "ck_sk_unkey", "ck_sk_block", "ck_sk_rows4", "ck_sk_rows16",
};

uint64_t ck_cuda_sort_key(const ck_cuda_sort_spec *sp) { return ck_kernel_key(CK_KFAM_SORT, (uint64_t)sp->t << 8); }

int ck_cuda_sort_nkernels(const ck_cuda_sort_spec *sp) { return ck_dtype_is_complex(sp->t) ? CK_SORTK_UNKEY : CK_SORTK_N; }

int ck_cuda_sort_key_bytes(ck_dtype t)
{
    int isz = ck_dtype_get_info(t)->itemsize;
    return ck_dtype_is_complex(t) ? isz / 2 : isz;
}

uint64_t ck_cuda_hist_key(ck_dtype t)
{
    return ck_kernel_key(CK_KFAM_SORT, ((uint64_t)1 << (CK_KERNEL_KEY_BITS - 1)) | (uint64_t)t << 8);
}

static const char hist_[] =
    "extern \"C\" __global__ void ck_hist(long long n, long long nb, const T *x, const double *e, int uniform,\n"
    "                                     const double *w, char *out, int priv)\n"
    "{\n"
    "    extern __shared__ unsigned long long ck_hs[];\n"
    "    unsigned long long *oc = priv ? ck_hs : (unsigned long long *)out;\n"
    "    double *ow = priv ? (double *)ck_hs : (double *)out;\n"
    "    if (priv) {\n"
    "        for (long long b = threadIdx.x; b < nb; b += blockDim.x) ck_hs[b] = 0;\n"
    "        __syncthreads();\n"
    "    }\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "        const long long b = CK_BIN(x[i]);\n"
    "        if ((unsigned long long)b >= (unsigned long long)nb) continue;\n"
    "        if (w) atomicAdd(&ow[b], w[i]);\n"
    "        else atomicAdd(&oc[b], 1ull);\n"
    "    }\n"
    "    if (!priv) return;\n"
    "    __syncthreads();\n"
    "    for (long long b = threadIdx.x; b < nb; b += blockDim.x) {\n"
    "        if (!ck_hs[b]) continue;\n"
    "        if (w) atomicAdd((double *)out + b, ow[b]);\n"
    "        else atomicAdd((unsigned long long *)out + b, ck_hs[b]);\n"
    "    }\n"
    "}\n";

char *ck_cuda_hist_source(const ck_cuda_sort_spec *sp)
{
    if (sp->t != CK_INT64 && sp->t != CK_FLOAT32 && sp->t != CK_FLOAT64) {
        ck_error_set(CK_ERR_TYPE, "histogram kernels take int64, float32 or float64, not %s",
                     ck_dtype_get_info(sp->t)->name);
        return NULL;
    }
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    ck_sbuf_printf(&b, "\n#define T %s\n#define CK_BIN(v) %s\n%s", ck_cuda_storage_type(sp->t),
                   sp->t == CK_INT64 ? "(long long)(v)" : "ck_hist_bin((double)(v), nb, e, uniform)", hist_);
    return ck_sbuf_finish(&b);
}

char *ck_cuda_sort_source(const ck_cuda_sort_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "#define CK_SK_T %d\n#define CK_SK_ISZ %d\n#define CK_SK_K64 %d\n%s", (int)sp->t,
                   ck_dtype_get_info(sp->t)->itemsize, ck_cuda_sort_key_bytes(sp->t) > 4, ck_src_sort_kernels);
    return ck_sbuf_finish(&b);
}
