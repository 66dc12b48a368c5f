/* The integer and bool matrix-product kernel (src/codegen/cuda_gemm_codegen.c)
 * compiles through NVRTC for every integer dtype and bool, to PTX and to a
 * cubin for sm_90 (no GPU needed), and its keys are distinct, non-zero and
 * in their family (CK_KFAM_GEMM). */
#include "cudakit.h"
#include "../../src/codegen/cuda_codegen.h"
#include "../../src/codegen/cuda_gemm_codegen.h"
#include "../../src/codegen/kernel_keys.h"
#include "../../src/runtime/kcache.h"
#include "../../src/platform/cuda_api.h"

#include <stdlib.h>
#include <string.h>

#include "ck_test.h"

int main(void)
{
    static const ck_dtype types[] = {CK_BOOL, CK_INT8, CK_UINT8, CK_INT16, CK_UINT16,
                                     CK_INT32, CK_UINT32, CK_INT64, CK_UINT64};
    const int nt = (int)(sizeof types / sizeof *types);
    for (int i = 0; i < nt; i++) {
        ck_cuda_gemm_int_spec a = {types[i]};
        uint64_t key = ck_cuda_gemm_int_key(&a);
        CHECK(key != 0 && ck_kernel_key_family(key) == CK_KFAM_GEMM, "key %llx", (unsigned long long)key);
        for (int j = 0; j < i; j++) {
            ck_cuda_gemm_int_spec b = {types[j]};
            CHECK(key != ck_cuda_gemm_int_key(&b), "keys %d and %d collide", i, j);
        }
    }
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped compiling: %s\n", ck_error_message());
        return failures != 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    for (int i = 0; i < nt; i++) {
        ck_cuda_gemm_int_spec sp = {types[i]};
        char *src = ck_cuda_gemm_int_source(&sp);
        CHECK(src != NULL, "no source for %s", ck_dtype_get_info(types[i])->name);
        if (!src) continue;
        CHECK(strstr(src, "ck_gemm_int(") != NULL, "entry point missing");
        ck_kernel_image img;
        /* PTX for every dtype; one full cubin (the assembler too) */
        const char *opts[] = {"--gpu-architecture=compute_90"};
        ck_status s = i == 5 ? ck_kernel_compile(src, "ck_gemm_int", NULL, 0, 90, &img)
                             : ck_kernel_compile(src, "ck_gemm_int", opts, 1, 90, &img);
        CHECK(s == CK_OK, "%s: %s", ck_dtype_get_info(types[i])->name, ck_error_message());
        if (s == CK_OK) ck_kernel_image_free(&img);
        free(src);
    }
    printf("%s\n", failures ? "FAILED" : "ok: integer matmul kernels compile");
    return failures != 0;
}
