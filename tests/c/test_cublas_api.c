/* The cuBLAS declaration table against the real libraries: load
 * libcublas/libcublasLt the way cudakit does (no GPU needed: dlopen and
 * dlsym only) and check that every symbol of the table resolves, required
 * or not, and that a failing status turns into an error naming the call.
 * Skips when no cuBLAS is installed. */
#include "cudakit.h"
#include "../../src/platform/cublas_api.h"

#include <string.h>

#include "ck_test.h"

static void report(const char *name, int required)
{
    CHECK(0, "cuBLAS symbol %s (%s) did not resolve", name, required ? "required" : "optional");
}

int main(void)
{
    if (ck_cublas_load() != CK_OK) {
        printf("skipped: %s\n", ck_error_message());
        return 0;
    }
    int missing = ck_cublas_missing(report);
    CHECK(missing == 0, "%d symbols missing", missing);
    size_t v = ck_cublas_version();
    CHECK(v >= 110000, "cuBLASLt version %zu", v);
    CHECK(ck_cublas_load() == CK_OK, "a second load");
    /* the status names come from the library when it has them */
    CHECK(strcmp(ck_cublas_status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED") == 0,
          "status name %s", ck_cublas_status_name(CUBLAS_STATUS_NOT_SUPPORTED));
    ck_status s = ck_cublas_fail(CUBLAS_STATUS_ALLOC_FAILED, "cublasGemmEx(h, ...)", "fn", "src/x.c", 12);
    CHECK(s == CK_ERR_DEVICE_MEMORY, "alloc failure status %d", s);
    CHECK(strstr(ck_error_message(), "cublasGemmEx(h, ...) failed: CUBLAS_STATUS_ALLOC_FAILED") != NULL,
          "message: %s", ck_error_message());
    s = ck_cublas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasSetStream_v2(h, s)", "fn", "x.c", 3);
    CHECK(s == CK_ERR_DEVICE && strstr(ck_error_message(), "CUBLAS_STATUS_INVALID_VALUE"), "message: %s",
          ck_error_message());
    printf("cuBLAS(Lt) %zu: %s\n", v, failures ? "FAILED" : "all symbols resolve");
    return failures != 0;
}
