/* Every advanced-indexing kernel kind (gather, the scatter passes, the
 * index check, nonzero's count, scan and write, x[mask]'s select and
 * x[mask] = values' expand)
 * compiles through NVRTC (no GPU needed), for the element widths of
 * several dtypes, each index mode, 0 to 4 dims (and 32), parameters by
 * value and by pointer.  Most go in PTX-only
 * batches (the front end is what a generated kernel gets wrong); one batch
 * goes through the whole compiler to a cubin.  Keys are checked distinct. */
#include "cudakit.h"
#include "../../src/codegen/cuda_index_codegen.h"
#include "../../src/platform/cuda_api.h"
#include "ck_nvrtc_batch.h"

static int compiled_;


static void add(const char *what, const ck_cuda_ix_spec *sp)
{
    batch_check_key(what, ck_cuda_ix_key(sp), CK_KFAM_INDEX);

    char *src = ck_cuda_ix_source(sp);
    CHECK(src != NULL, "%s: no source: %s", what, ck_error_message());
    if (!src) return;
    batch_add_kernel(what, src, ck_cuda_ix_name(sp), 100);
    free(src);
    compiled_++;
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped: %s\n", ck_error_message());
        return 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);

    /* the whole compiler (ptxas included) on one gather, one claim pass,
     * one by-pointer apply pass and the three nonzero kernels */
    {
        ck_cuda_ix_spec g = {.kind = CK_IXK_GATHER, .ndim = 2, .nidx = 2, .unit = 4, .units = 1};
        add("cubin_gather", &g);
        ck_cuda_ix_spec c = {.kind = CK_IXK_CLAIM, .ndim = 3, .nidx = 1, .unit = 8, .units = 2, .win64 = 1};
        add("cubin_claim", &c);
        ck_cuda_ix_spec a = {.kind = CK_IXK_APPLY, .ndim = 32, .nidx = 32, .unit = 2, .units = 1, .byref = 1};
        CHECK(ck_cuda_ix_params_size(&a) > 4096, "32 dims and 32 indices should not fit in 4 KiB of parameters");
        add("cubin_apply_byref", &a);
        for (int k = CK_IXK_NZ_COUNT; k <= CK_IXK_NZ_WRITE; k++) {
            ck_cuda_ix_spec z = {.kind = k, .ndim = k == CK_IXK_NZ_SCAN ? 0 : 5};
            add("cubin_nonzero", &z);
        }
        ck_cuda_ix_spec sel = {.kind = CK_IXK_SELECT, .ndim = 2, .contig = 1, .unit = 4, .units = 1};
        add("cubin_select", &sel);
        ck_cuda_ix_spec ex = {.kind = CK_IXK_EXPAND, .ndim = 3, .unit = 8, .units = 2};
        add("cubin_expand", &ex);
        batch_flush(1);
    }

    /* dtypes by their element width: bool, int16, float32, float64,
     * complex128; a misaligned view moves a wide element in narrow words */
    static const ck_dtype types[] = {CK_BOOL, CK_INT16, CK_FLOAT32, CK_FLOAT64, CK_COMPLEX128};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int isz = ck_dtype_get_info(types[t])->itemsize;
        int unit = isz >= 8 ? 8 : isz;
        for (int kind = CK_IXK_GATHER; kind <= CK_IXK_APPLY; kind++) {
            for (int mode = CK_INDEX_RAISE; mode <= CK_INDEX_CLIP; mode++) {
                for (int layout = 0; layout < 4; layout++) {
                    ck_cuda_ix_spec sp;
                    memset(&sp, 0, sizeof sp);
                    sp.kind = kind;
                    sp.mode = mode;
                    sp.ndim = layout;              /* 0-d, 1-d, 2-d and 3-d results */
                    sp.nidx = layout == 0 ? 1 : layout;
                    sp.unit = layout == 3 && unit > 1 ? unit / 2 : unit;
                    sp.units = isz / sp.unit;
                    sp.idx64 = layout == 2;
                    sp.win64 = layout == 2;
                    sp.byref = layout == 3;
                    char what[96];
                    snprintf(what, sizeof what, "ix_kind%d_%s_mode%d_layout%d", kind,
                             ck_dtype_get_info(types[t])->name, mode, layout);
                    add(what, &sp);
                }
            }
        }
    }
    /* index arrays without result dims of their own (nidx 0), and many */
    for (int kind = CK_IXK_GATHER; kind <= CK_IXK_APPLY; kind++) {
        ck_cuda_ix_spec a = {.kind = kind, .ndim = 2, .nidx = 0, .unit = 1, .units = 1};
        add("ix_noindex", &a);
        ck_cuda_ix_spec b = {.kind = kind, .ndim = 8, .nidx = 8, .unit = 8, .units = 1, .mode = CK_INDEX_WRAP};
        add("ix_many", &b);
    }
    for (int i64 = 0; i64 < 2; i64++) {
        ck_cuda_ix_spec c = {.kind = CK_IXK_CHECK, .idx64 = i64};
        add("ix_check", &c);
    }
    /* nonzero: 1-4 dims, contiguous or strided masks, 32/64-bit positions */
    for (int nd = 1; nd <= 4; nd++) {
        for (int contig = 0; contig < 2; contig++) {
            for (int i64 = 0; i64 < 2; i64++) {
                for (int k = CK_IXK_NZ_COUNT; k <= CK_IXK_NZ_WRITE; k += 2) {
                    for (int vec = 0; vec <= contig; vec++) {
                        ck_cuda_ix_spec z = {.kind = k, .ndim = nd, .contig = contig, .idx64 = i64, .vec = vec};
                        add("nonzero", &z);
                    }
                }
            }
        }
    }
    /* select (x[mask]): every width, contiguous or strided, 1-3 dims */
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int isz = ck_dtype_get_info(types[t])->itemsize;
        for (int nd = 1; nd <= 3; nd++) {
            for (int contig = 0; contig < 2; contig++) {
                int unit = isz >= 8 ? 8 : isz;
                if (!contig && nd == 3 && unit > 1) unit /= 2;
                for (int kind = CK_IXK_SELECT; kind <= CK_IXK_EXPAND; kind++) {
                    /* a strided source with a contiguous mask reads the mask by vectors too */
                    ck_cuda_ix_spec z = {.kind = kind, .ndim = nd, .contig = contig, .unit = unit,
                                         .units = isz / unit, .idx64 = nd == 2, .vec = contig || nd == 1};
                    char what[64];
                    snprintf(what, sizeof what, "%s_%s_%dd_contig%d", kind == CK_IXK_SELECT ? "select" : "expand",
                             ck_dtype_get_info(types[t])->name, nd, contig);
                    add(what, &z);
                }
            }
        }
    }
    ck_cuda_ix_spec bad = {.kind = 15};
    CHECK(ck_cuda_ix_source(&bad) == NULL, "an unknown kernel kind must fail");
    ck_error_clear();
    batch_flush(0);
    printf("%d indexing kernels compiled, %d failures\n", compiled_, failures);
    return failures ? 1 : 0;
}
