/* Every kernel kind of the GPU sort, searchsorted and random fills
 * compiles through NVRTC (no GPU needed): the sort module of each dtype,
 * and the random fill of each (distribution, dtype, block width, vector
 * store) the backend can ask for.  Sources compile with the architecture
 * of the H200 (sm_90) as PTX, the front end being what can go wrong. */
#include "ck_test.h"
#include "../../src/runtime/kcache.h"
#include "../../src/platform/cuda_api.h"
#include "../../src/codegen/cuda_sort_codegen.h"
#include "../../src/codegen/cuda_random_codegen.h"

#include <string.h>

/* with the backend's options for the random fills (rng), none for the sorts */
static void compile(char *src, const char *what, const char *const *must_have, int nmust, int rng)
{
    if (!src) { CHECK(0, "%s: no source: %s", what, ck_error_message()); return; }
    for (int i = 0; i < nmust; i++) CHECK(strstr(src, must_have[i]) != NULL, "%s: no %s in the source", what, must_have[i]);
    const char *opts[4] = {"--gpu-architecture=compute_90"};
    int nopts = 1;
    for (int i = 0; rng && i < ck_cuda_rng_noptions && nopts < 4; i++) opts[nopts++] = ck_cuda_rng_options[i];
    ck_kernel_image img;
    ck_status s = ck_kernel_compile(src, what, opts, nopts, 90, &img);
    CHECK(s == CK_OK, "%s does not compile:\n%s", what, ck_error_message());
    if (s == CK_OK) {
        CHECK(img.size > 0, "%s: empty image", what);
        ck_kernel_image_free(&img);
    }
    free(src);
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped: %s\n", ck_error_message());
        return 0;
    }
    int nsort = 0;
    for (int t = 0; t < CK_NTYPES; t++) {
        char what[64];
        snprintf(what, sizeof what, "sort_%s", ck_dtype_get_info((ck_dtype)t)->name);
        /* complex keys take three words: no block sort, no keys-only sort */
        ck_cuda_sort_spec sp = {(ck_dtype)t};
        CHECK(ck_cuda_sort_nkernels(&sp) == (ck_dtype_is_complex((ck_dtype)t) ? 7 : 11), "%s: %d entry points", what,
              ck_cuda_sort_nkernels(&sp));
        compile(ck_cuda_sort_source(&sp), what, ck_cuda_sort_names, ck_cuda_sort_nkernels(&sp), 0);
        nsort++;
    }
    /* the histogram module of each dtype it takes; others fail */
    static const char *const hist_kernels[] = {"ck_hist"};
    static const ck_dtype hist_types[] = {CK_INT64, CK_FLOAT32, CK_FLOAT64};
    for (size_t i = 0; i < sizeof hist_types / sizeof hist_types[0]; i++) {
        ck_cuda_sort_spec sp = {hist_types[i]};
        char what[64];
        snprintf(what, sizeof what, "hist_%s", ck_dtype_get_info(hist_types[i])->name);
        CHECK(ck_cuda_hist_key(hist_types[i]) != ck_cuda_sort_key(&sp), "%s: its key is a sort module's", what);
        compile(ck_cuda_hist_source(&sp), what, hist_kernels, 1, 0);
        nsort++;
    }
    ck_cuda_sort_spec bad = {CK_INT32};
    CHECK(ck_cuda_hist_source(&bad) == NULL, "an int32 histogram module must fail");
    ck_error_clear();
    static const char *const rng_kernels[] = {"ck_rng_fill", "ck_rng_philox"};
    static const struct { int dist; ck_dtype t; int per; } fills[] = {
        {CK_RANDOM_BITS, CK_UINT32, 4},     {CK_RANDOM_BITS, CK_UINT64, 2},
        {CK_RANDOM_UNIFORM, CK_FLOAT32, 4}, {CK_RANDOM_UNIFORM, CK_FLOAT64, 2},
        {CK_RANDOM_NORMAL, CK_FLOAT32, 4},  {CK_RANDOM_NORMAL, CK_FLOAT64, 2},
        {CK_RANDOM_EXPONENTIAL, CK_FLOAT32, 4}, {CK_RANDOM_EXPONENTIAL, CK_FLOAT64, 2},
        {CK_RANDOM_INTEGERS, CK_BOOL, 4},   {CK_RANDOM_INTEGERS, CK_INT8, 4},  {CK_RANDOM_INTEGERS, CK_UINT16, 4},
        {CK_RANDOM_INTEGERS, CK_INT32, 4},  {CK_RANDOM_INTEGERS, CK_INT64, 4}, {CK_RANDOM_INTEGERS, CK_INT64, 2},
        {CK_RANDOM_INTEGERS, CK_UINT64, 2},
    };
    int nrng = 0;
    for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++)
        for (int vec = 0; vec < 2; vec++) {
            int vbytes = ck_dtype_get_info(fills[i].t)->itemsize * fills[i].per;
            if (vec && vbytes > 16) continue;
            char what[64];
            snprintf(what, sizeof what, "rng_%d_%s_%d_%d", fills[i].dist, ck_dtype_get_info(fills[i].t)->name,
                     fills[i].per, vec);
            ck_cuda_rng_spec sp = {fills[i].dist, fills[i].t, fills[i].per, vec};
            CHECK(!strcmp(ck_cuda_rng_name(&sp), "ck_rng_fill"), "%s: kernel %s", what, ck_cuda_rng_name(&sp));
            compile(ck_cuda_rng_source(&sp), what, rng_kernels, 2, 1);
            nrng++;
        }
    /* gamma, beta (float64), poisson, binomial (int64): a thread per element */
    static const char *const heavy_kernels[] = {"ck_rng_heavy", "ck_rng_philox", "ck_rng_stream_init"};
    static const struct { int dist; ck_dtype t; } heavy[] = {
        {CK_RANDOM_GAMMA, CK_FLOAT64}, {CK_RANDOM_BETA, CK_FLOAT64},
        {CK_RANDOM_POISSON, CK_INT64}, {CK_RANDOM_BINOMIAL, CK_INT64},
    };
    for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "rng_heavy_%d", heavy[i].dist);
        ck_cuda_rng_spec sp = {heavy[i].dist, heavy[i].t, 0, 0};
        CHECK(!strcmp(ck_cuda_rng_name(&sp), "ck_rng_heavy"), "%s: kernel %s", what, ck_cuda_rng_name(&sp));
        compile(ck_cuda_rng_source(&sp), what, heavy_kernels, 3, 1);
        nrng++;
    }
    printf("%d sort and histogram modules, %d random fills: %d failures\n", nsort, nrng, failures);
    return failures ? 1 : 0;
}
