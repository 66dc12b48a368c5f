/* The integer and bool matrix-product kernel (src/codegen/cuda_gemm_codegen.c)
 * compiles through NVRTC for every integer dtype and bool, to PTX and to a
 * cubin for sm_90 (no GPU needed), and its keys are distinct, non-zero and
 * in their family (CK_KFAM_GEMM); so do the small float products of the
 * linear layer (float32 and float64, every tile), whose shared memory
 * grows with the tile and the warps. */
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
    static const ck_dtype floats[] = {CK_FLOAT32, CK_FLOAT64};
    for (int i = 0; i < 2; i++) {
        ck_cuda_gemm_small_spec sp = {floats[i]};
        uint64_t key = ck_cuda_gemm_small_key(&sp);
        CHECK(key != 0 && ck_kernel_key_family(key) == CK_KFAM_GEMM && (key & 0xFF) == 0, "small key %llx",
              (unsigned long long)key);
        ck_cuda_gemm_int_spec other = {floats[i]};
        CHECK(key != ck_cuda_gemm_int_key(&other), "the small product's key is the integer one's");
        char *src = ck_cuda_gemm_small_source(&sp);
        CHECK(src != NULL, "no small source: %s", ck_error_message());
        if (!src) continue;
        for (int c = 0; c < CK_GEMM_SMALL_CFGS; c++) {
            char name[16];
            snprintf(name, sizeof name, "ck_lin_%d", c);
            CHECK(strstr(src, name) != NULL, "entry point %s missing", name);
            ck_kernel_image img;
            ck_status s = ck_kernel_compile(src, name, NULL, 0, 90, &img);
            CHECK(s == CK_OK, "%s %s: %s", name, ck_dtype_get_info(floats[i])->name, ck_error_message());
            if (s == CK_OK) ck_kernel_image_free(&img);
            CHECK(ck_gemm_small_smem(c, 2, 4) == 2 * ck_gemm_small_smem(c, 1, 4), "smem grows with the warps");
        }
        for (int c = 0; c < CK_GEMM_DOT_CFGS; c++) {
            char name[16];
            snprintf(name, sizeof name, "ck_lind_%d", c);
            CHECK(strstr(src, name) != NULL, "entry point %s missing", name);
            CHECK(ck_gemm_dot_cfgs[c].wm * ck_gemm_dot_cfgs[c].wn <= 32, "%s: a lane for each output of a warp", name);
            ck_kernel_image img;
            ck_status s = ck_kernel_compile(src, name, NULL, 0, 90, &img);
            CHECK(s == CK_OK, "%s %s: %s", name, ck_dtype_get_info(floats[i])->name, ck_error_message());
            if (s == CK_OK) ck_kernel_image_free(&img);
        }
        free(src);
    }
    ck_cuda_gemm_small_spec half = {CK_FLOAT16};
    char *none = ck_cuda_gemm_small_source(&half);
    CHECK(none == NULL && ck_error_status() == CK_ERR_NOT_IMPLEMENTED, "float16 has no small product");
    free(none);
    printf("%s\n", failures ? "FAILED" : "ok: integer matmul and small linear kernels compile");
    return failures != 0;
}
