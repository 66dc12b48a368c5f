/* cuFFT and cuSOLVER load through our own declaration tables and every
 * symbol of both tables resolves (no GPU needed: dlopen and dlsym only).
 * A machine without the libraries skips, saying so. */
#include "ck_test.h"
#include "../../src/platform/cufft_api.h"
#include "../../src/platform/cusolver_api.h"

#include <string.h>

static void report(const char *name)
{
    fprintf(stderr, "missing symbol: %s\n", name);
}

static void report_optional(const char *name)
{
    printf("note: this cuSOLVER lacks the optional %s\n", name);
}

int main(void)
{
    int ran = 0;
    CHECK(ck_cufft_missing(NULL) == -1, "cuFFT reported loaded before ck_cufft_load");
    if (ck_cufft_load() != CK_OK) {
        printf("SKIP cuFFT: %s\n", ck_error_message());
    } else {
        ran++;
        CHECK(ck_cufft_missing(report) == 0, "cuFFT lacks symbols of our table");
        int v = 0;
        CHECK(ck_cufft.cufftGetVersion(&v) == CUFFT_SUCCESS && v >= 10000, "cufftGetVersion gave %d", v);
        printf("cuFFT %d loaded, every symbol resolved\n", v);
        CHECK(ck_cufft_load() == CK_OK, "a second load fails");
    }
    CHECK(!strcmp(ck_cufft_status_name(8), "CUFFT_INVALID_SIZE"), "status name %s", ck_cufft_status_name(8));
    CHECK(strstr(ck_cufft_status_name(999), "999") != NULL, "unknown status not numbered");
    CHECK(ck_cufft_fail(8, "cufftMakePlanMany64(...)", "f", "/x/file.c", 7) == CK_ERR_DEVICE, "fail status");
    CHECK(strstr(ck_error_message(), "cufftMakePlanMany64") && strstr(ck_error_message(), "CUFFT_INVALID_SIZE") &&
          strstr(ck_error_message(), "file.c:7"), "fail message: %s", ck_error_message());
    CHECK(ck_cufft_fail(2, "cufftExecC2C", "f", "file.c", 1) == CK_ERR_DEVICE_MEMORY, "alloc failure is not OOM");

    CHECK(ck_cusolver_missing(NULL, NULL) == -1, "cuSOLVER reported loaded before ck_cusolver_load");
    if (ck_cusolver_load() != CK_OK) {
        printf("SKIP cuSOLVER: %s\n", ck_error_message());
    } else {
        ran++;
        CHECK(ck_cusolver_missing(report, report_optional) == 0, "cuSOLVER lacks symbols of our table");
        printf("cusolverDnXgeev %s\n", ck_cusolver_has_geev() ? "present" : "absent (eig needs CUDA 12.6+)");
        for (int t = CK_CUSOLVER_S; t <= CK_CUSOLVER_Z; t++) {
            const ck_cusolver_typed *r = ck_cusolver_routines((ck_cusolver_type)t);
            const void *const *fns = (const void *const *)r;
            for (size_t i = 0; i < sizeof *r / sizeof(void *); i++) CHECK(fns[i] != NULL, "type %d routine %zu is NULL", t, i);
        }
        CHECK((void *)ck_cusolver_routines(CK_CUSOLVER_Z)->syevd == (void *)ck_cusolver.cusolverDnZheevd,
              "complex128 eigen routine is not Zheevd");
        CHECK((void *)ck_cusolver_routines(CK_CUSOLVER_C)->syevjBatched == (void *)ck_cusolver.cusolverDnCheevjBatched,
              "complex64 batched eigen routine is not CheevjBatched");
        CHECK((void *)ck_cusolver_routines(CK_CUSOLVER_S)->orgqr == (void *)ck_cusolver.cusolverDnSorgqr,
              "float32 Q routine is not Sorgqr");
        printf("cuSOLVER loaded, every symbol resolved\n");
    }
    CHECK(!strcmp(ck_cusolver_status_name(3), "CUSOLVER_STATUS_INVALID_VALUE"), "status name");
    CHECK(ck_cusolver_fail(2, "cusolverDnCreate", "f", "file.c", 1) == CK_ERR_DEVICE_MEMORY, "alloc failure is not OOM");
    CHECK(strstr(ck_error_message(), "cusolverDnCreate") && strstr(ck_error_message(), "ALLOC_FAILED"), "message: %s",
          ck_error_message());

    if (failures) printf("%d failures\n", failures);
    else printf("ok (%d of 2 libraries checked)\n", ran);
    return failures != 0;
}
