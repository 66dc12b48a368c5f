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

char *ck_cuda_sort_source(const ck_cuda_sort_spec *sp)
{
    ck_sbuf b = {0};
    ck_sbuf_printf(&b, "#define CK_SK_T %d\n#define CK_SK_ISZ %d\n#define CK_SK_K64 %d\n%s", (int)sp->t,
                   ck_dtype_get_info(sp->t)->itemsize, ck_cuda_sort_key_bytes(sp->t) > 4, ck_src_sort_kernels);
    return ck_sbuf_finish(&b);
}
