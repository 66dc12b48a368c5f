/* The joining kernel (concatenate / stack in one launch, family CK_KFAM_CONCAT):
 *  - every kind compiles through NVRTC (no GPU needed) for the element
 *    widths of bool to complex128, 1 to 4 dims with the axis anywhere, 32
 *    dims, 32/64-bit positions; one batch down to a cubin; keys distinct;
 *  - the launches that ck_cuda_copy_pieces would make are planned
 *    (ck_cuda_cat_plan) and run on the host by a transcription of the two
 *    kernels, in place of the CPU backend's missing copy_pieces slot, so
 *    ck_concatenate / ck_stack take the GPU's path here; the results must
 *    equal the CPU's piece-by-piece ones byte for byte, over random shapes,
 *    layouts (steps, negative strides, transposes) of the pieces and of a
 *    given out, empty pieces, mixed dtypes and 1 to 40 pieces (several
 *    launches). */
#include <stdint.h>

#include "cudakit.h"
#include "../../src/backend/cuda/cuda_internal.h"
#include "../../src/codegen/cuda_concat_codegen.h"
#include "ck_nvrtc_batch.h"

static int compiled_;

static void add(const char *what, const ck_cuda_cat_spec *sp)
{
    batch_check_key(what, ck_cuda_cat_key(sp), CK_KFAM_CONCAT);
    CHECK(ck_cuda_cat_params_size(sp) <= CK_CAT_PARAM_BYTES, "%s: %zu bytes of parameters", what,
          ck_cuda_cat_params_size(sp));
    char *src = ck_cuda_cat_source(sp);
    CHECK(src != NULL, "%s: no source: %s", what, ck_error_message());
    if (!src) return;
    batch_add_kernel(what, src, ck_cuda_cat_name(sp), 100);
    free(src);
    compiled_++;
}

static void compile_all(void)
{
    ck_cuda_cat_spec r = {.kind = CK_CATK_ROWS, .unit = 16, .units = 1, .cap = ck_cuda_cat_capacity(CK_CATK_ROWS, 0)};
    add("cubin_rows16", &r);
    ck_cuda_cat_spec g = {.kind = CK_CATK_STRIDED, .ndim = 3, .axis = 1, .unit = 8, .units = 2,
                          .cap = ck_cuda_cat_capacity(CK_CATK_STRIDED, 3)};
    add("cubin_strided", &g);
    batch_flush(1);
    for (int ulog = 0; ulog <= 4; ulog++)
        for (int i64 = 0; i64 < 2; i64++) {
            if (ulog == 4 && i64 == 0) continue;   /* the cubin batch had it */
            ck_cuda_cat_spec s = {.kind = CK_CATK_ROWS, .unit = 1 << ulog, .units = 1, .idx64 = i64,
                                  .cap = ck_cuda_cat_capacity(CK_CATK_ROWS, 0)};
            add("rows", &s);
        }
    static const int widths[] = {1, 2, 4, 8, 16};
    for (int nd = 1; nd <= 4; nd++)
        for (int ax = 0; ax < nd; ax++)
            for (int w = 0; w < 5; w++) {
                int isz = widths[w];
                int unit = (nd + ax) % 2 && isz > 1 ? isz / 2 : isz;   /* a misaligned view: narrower words */
                ck_cuda_cat_spec s = {.kind = CK_CATK_STRIDED, .ndim = nd, .axis = ax, .unit = unit, .units = isz / unit,
                                      .idx64 = (nd + w) % 2, .cap = ck_cuda_cat_capacity(CK_CATK_STRIDED, nd)};
                if (nd == 3 && ax == 1 && unit == 8 && s.units == 2 && !s.idx64) continue;
                char what[64];
                snprintf(what, sizeof what, "strided_%dd_axis%d_w%d", nd, ax, isz);
                add(what, &s);
            }
    ck_cuda_cat_spec big = {.kind = CK_CATK_STRIDED, .ndim = CK_MAXDIMS, .axis = 7, .unit = 1, .units = 1,
                            .cap = ck_cuda_cat_capacity(CK_CATK_STRIDED, CK_MAXDIMS)};
    CHECK(big.cap >= 8, "a 32-dim launch should still take 8 pieces, takes %d", big.cap);
    add("strided_32d", &big);
    ck_cuda_cat_spec bad = {.kind = CK_CATK_STRIDED, .ndim = 2, .axis = 2, .unit = 1, .units = 1, .cap = 4};
    CHECK(ck_cuda_cat_source(&bad) == NULL, "an axis past the dims must fail");
    ck_error_clear();
    batch_flush(0);
}

/* ------------------------------------------------ the kernels on the host */

static int launches_;

static int piece_of(const int64_t *start, int np, int64_t c)
{
    int lo = 0, hi = np - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (start[mid] <= c) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static ck_status host_launch(void *ctx, const ck_pieces_desc *d, const ck_cuda_cat_spec *sp, int64_t n, char *out,
                             int np, const int64_t *P)
{
    (void)ctx;
    (void)d;
    launches_++;
    CHECK(n > 0 && np >= 1 && np <= sp->cap, "launch of %lld positions, %d pieces (cap %d)", (long long)n, np, sp->cap);
    CHECK(sp->idx64 == (n > 0x7FFFFFFF), "idx64 %d for %lld positions", sp->idx64, (long long)n);
    const int C = sp->cap, u = sp->unit, isz = sp->unit * sp->units;
    if (sp->kind == CK_CATK_ROWS) {
        const int64_t width = P[0 + 1], ostride = P[2], *ptr = P + 3, *start = P + 3 + C;
        CHECK(P[0] * width == n, "rows %lld x width %lld != %lld", (long long)P[0], (long long)width, (long long)n);
        for (int j = 0; j < np; j++) CHECK(start[j] < start[j + 1], "empty piece %d in a launch", j);
        for (int64_t i = 0; i < n; i++) {
            int64_t row = i / width, col = i - row * width;
            int p = piece_of(start, np, col);
            int64_t s0 = start[p], w = start[p + 1] - s0;
            char *dst = out + (row * ostride + col) * u;
            const char *src = (const char *)(uintptr_t)ptr[p] + (row * w + col - s0) * u;
            CHECK((uintptr_t)dst % u == 0 && (uintptr_t)src % u == 0, "rows: unaligned %d-byte word", u);
            memcpy(dst, src, (size_t)u);
        }
        return CK_OK;
    }
    const int D = sp->ndim;
    const int64_t *shape = P, *ost = P + D, *ptr = P + 2 * D, *start = ptr + C, *pst = start + C + 1;
    for (int j = 0; j < np; j++) CHECK(start[j] < start[j + 1], "empty piece %d in a launch", j);
    CHECK(start[np] == shape[sp->axis], "the last piece ends at %lld, the box at %lld", (long long)start[np],
          (long long)shape[sp->axis]);
    for (int64_t i = 0; i < n; i++) {
        int64_t c[CK_MAXDIMS], oo = 0, rem = i;
        for (int k = D - 1; k >= 0; k--) {
            c[k] = rem % shape[k];
            rem /= shape[k];
            oo += c[k] * ost[k];
        }
        int p = piece_of(start, np, c[sp->axis]);
        c[sp->axis] -= start[p];
        int64_t so = 0;
        for (int k = 0; k < D; k++) so += c[k] * pst[(size_t)p * D + k];
        const char *src = (const char *)(uintptr_t)ptr[p] + so;
        CHECK((uintptr_t)(out + oo) % u == 0 && (uintptr_t)src % u == 0, "strided: unaligned %d-byte word", u);
        memcpy(out + oo, src, (size_t)isz);
    }
    return CK_OK;
}

static ck_status host_copy_pieces(const ck_pieces_desc *d) { return ck_cuda_cat_plan(d, host_launch, NULL); }

/* ------------------------------------------------------- random joins */

static uint64_t rnd(void) { return ck_test_rand(); }
static int rndint(int n) { return (int)(rnd() % (uint64_t)n); }

/* An array of shape in a random layout (contiguous, every other element,
 * a negative stride, transposed or offset by one element), random bytes. */
static void make_piece(ck_array *out, int nd, const int64_t *shape, ck_dtype dt)
{
    const int64_t isz = ck_dtype_get_info(dt)->itemsize;
    int kind = rndint(5);
    int64_t st[CK_MAXDIMS], e = 1;
    for (int k = nd - 1; k >= 0; k--) {   /* in elements */
        st[k] = e * (kind == 1 ? 2 : 1);
        e *= shape[k] > 0 ? shape[k] : 1;
    }
    if (kind == 3) {
        e = 1;
        for (int k = 0; k < nd; k++) {
            st[k] = e;
            e *= shape[k] > 0 ? shape[k] : 1;
        }
    }
    if (kind == 2) st[rndint(nd)] *= -1;
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < nd; k++) {
        if (shape[k] == 0) continue;
        if (st[k] < 0) lo += st[k] * (shape[k] - 1);
        else hi += st[k] * (shape[k] - 1);
    }
    int64_t n = hi - lo + 2;
    ck_array base;
    OK(ck_array_empty(&base, 1, &n, dt, ck_device_cpu()));
    /* bools hold 0 or 1 (a copy of another byte is not a bool to compare) */
    for (int64_t i = 0; i < n * isz; i++) base.data[i] = dt == CK_BOOL ? (char)(rnd() & 1) : (char)rnd();
    ck_array_view(out, &base);
    out->data += (-lo + (kind == 4)) * isz;
    for (int k = 0; k < nd; k++) st[k] *= isz;
    ck_array_set_layout(out, nd, shape, st);
    ck_array_release(&base);
}

static int same_bytes(const ck_array *a, const ck_array *b)
{
    if (a->ndim != b->ndim || a->dtype != b->dtype || memcmp(a->shape, b->shape, (size_t)a->ndim * 8)) return 0;
    return a->size == 0 || !memcmp(a->data, b->data, (size_t)(a->size * ck_array_itemsize(a)));
}

static void one_case(int c, const ck_backend_iface *fake)
{
    static const ck_dtype all[] = {CK_BOOL, CK_INT16, CK_FLOAT32, CK_FLOAT64, CK_COMPLEX128, CK_FLOAT16, CK_UINT8};
    static const ck_dtype ints[] = {CK_INT8, CK_UINT8, CK_INT16, CK_INT32, CK_INT64};
    static const int counts[] = {1, 2, 3, 5, 8, 31, 33, 40};
    int n = counts[rndint(8)], nd = 1 + rndint(4), stack = c % 4 == 1, flat = c % 4 == 2, mixed = c % 5 == 3;
    int axis = rndint(nd + stack) - (c % 3 == 0 ? nd + stack : 0);   /* negative axes too */
    int norm = axis < 0 ? axis + nd + stack : axis;
    ck_dtype dt0 = all[rndint(7)];
    int64_t shape[CK_MAXDIMS];
    for (int k = 0; k < nd; k++) shape[k] = 1 + rndint(3);
    ck_array *arr = calloc((size_t)n, sizeof *arr);
    const ck_array **ptrs = calloc((size_t)n, sizeof *ptrs);
    for (int i = 0; i < n; i++) {
        int64_t sh[CK_MAXDIMS];
        memcpy(sh, shape, sizeof sh);
        if (!stack && !flat) sh[norm] = rndint(4);              /* 0..3: empty pieces too */
        if (flat) for (int k = 0; k < nd; k++) sh[k] = rndint(3);
        if (c % 11 == 0 && !stack) sh[flat ? 0 : norm] = 0;   /* all empty */
        make_piece(&arr[i], nd, sh, mixed ? ints[rndint(5)] : dt0);
        ptrs[i] = &arr[i];
    }
    ck_array ref, got;
    int ax = flat ? CK_AXIS_FLAT : axis;
    ck_backend_register(CK_DEVICE_CPU, &ck_backend_cpu);
    OK(stack ? ck_stack(&ref, n, ptrs, ax, CK_DTYPE_INVALID) : ck_concatenate(&ref, n, ptrs, ax, CK_DTYPE_INVALID));
    ck_backend_register(CK_DEVICE_CPU, fake);
    OK(stack ? ck_stack(&got, n, ptrs, ax, CK_DTYPE_INVALID) : ck_concatenate(&got, n, ptrs, ax, CK_DTYPE_INVALID));
    ck_backend_register(CK_DEVICE_CPU, &ck_backend_cpu);
    CHECK(same_bytes(&ref, &got), "case %d: %s of %d pieces, %d dims, axis %d, %s: results differ", c,
          stack ? "stack" : "concatenate", n, nd, ax, mixed ? "mixed ints" : ck_dtype_get_info(dt0)->name);
    /* into an out of any layout (and of another dtype for mixed pieces) */
    {
        ck_dtype odt = mixed ? CK_INT64 : ref.dtype;
        ck_array o1, o2, c1, c2;
        make_piece(&o1, ref.ndim, ref.shape, odt);
        make_piece(&o2, ref.ndim, ref.shape, odt);
        OK(stack ? ck_stack_into(&o1, n, ptrs, ax) : ck_concatenate_into(&o1, n, ptrs, ax));
        ck_backend_register(CK_DEVICE_CPU, fake);
        OK(stack ? ck_stack_into(&o2, n, ptrs, ax) : ck_concatenate_into(&o2, n, ptrs, ax));
        ck_backend_register(CK_DEVICE_CPU, &ck_backend_cpu);
        OK(ck_array_astype(&c1, &o1, odt, 0));
        OK(ck_array_astype(&c2, &o2, odt, 0));
        CHECK(same_bytes(&c1, &c2), "case %d: into an out view: results differ", c);
        ck_array_release(&o1);
        ck_array_release(&o2);
        ck_array_release(&c1);
        ck_array_release(&c2);
    }
    /* dtype= given: every piece cast */
    if (!stack && c % 7 == 0) {
        ck_array r2, g2;
        OK(ck_concatenate(&r2, n, ptrs, ax, CK_INT64));
        ck_backend_register(CK_DEVICE_CPU, fake);
        OK(ck_concatenate(&g2, n, ptrs, ax, CK_INT64));
        ck_backend_register(CK_DEVICE_CPU, &ck_backend_cpu);
        CHECK(same_bytes(&r2, &g2), "case %d: dtype=int64 results differ", c);
        ck_array_release(&r2);
        ck_array_release(&g2);
    }
    ck_array_release(&ref);
    ck_array_release(&got);
    for (int i = 0; i < n; i++) ck_array_release(&arr[i]);
    free(arr);
    free(ptrs);
}

int main(void)
{
    ck_backend_iface fake = ck_backend_cpu;
    fake.copy_pieces = host_copy_pieces;
    for (int c = 0; c < 600; c++) one_case(c, &fake);
    CHECK(launches_ > 1000, "only %d launches planned", launches_);
    printf("%d joins' launches run on the host, %d failures\n", launches_, failures);

    if (ck_nvrtc_load() != CK_OK) {
        printf("NVRTC skipped: %s\n", ck_error_message());
        return failures ? 1 : 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    compile_all();
    printf("%d joining kernels compiled, %d failures\n", compiled_, failures);
    return failures ? 1 : 0;
}
