/* The user kernels built from pieces of code (include/cudakit_kernelgen.h):
 *  - ElementwiseKernel and ReductionKernel sources of every dtype, every
 *    parameter kind and loop shape, and a fused function of every traced op
 *    for a floating and an integer compute type, compile through NVRTC (no
 *    GPU needed; the Python tests run them on CPU arrays);
 *  - float16 is refused, C type names go both ways;
 *  - the launch layouts: contiguous, merged, broadcast, reduced. */
#include "ck_test.h"
#include "ck_nvrtc_batch.h"
#include "cudakit_kernelgen.h"
#include "../../src/platform/cuda_api.h"

#include <string.h>

static const ck_dtype types_[] = {CK_BOOL, CK_INT8, CK_UINT8, CK_INT16, CK_UINT16, CK_INT32, CK_UINT32,
                                  CK_INT64, CK_UINT64, CK_FLOAT32, CK_FLOAT64, CK_COMPLEX64, CK_COMPLEX128};
#define NTYPES_ ((int)(sizeof types_ / sizeof types_[0]))

/* A kernel name no other program of the batches has (extern "C" names are
 * one namespace). */
static const char *uname(const char *base)
{
    static char names[4096][24];
    static int n;
    snprintf(names[n % 4096], sizeof names[0], "%s_%d", base, n);
    return names[n++ % 4096];
}

/* One program into the batch, in a namespace of its own (its helpers may
 * repeat another's). */
static int nprograms_;
static void add(const char *what, char *src)
{
    CHECK(src != NULL, "%s: no source: %s", what, ck_error_message());
    if (!src) return;
    nprograms_++;
    ck_sbuf prog = {0};
    ck_sbuf_printf(&prog, "namespace u%d {\n%s\n}\n", batch_next_id(), src);
    batch_add(what, prog.s, 60);
    free(prog.s);
    free(src);
}

static void elementwise(void)
{
    static const char *const kinds[] = {"aras", "araa"};
    static const int layouts[][2] = {{1, 1}, {1, 0}, {3, 0}};   /* (ndim, contig) */
    for (int t = 0; t < NTYPES_; t++) {
        for (int k = 0; k < 2; k++) {
            for (int l = 0; l < 3; l++) {
                ck_ukernel_param ps[4] = {{"x", "T", types_[t], kinds[k][0]}, {"r", "T", types_[t], kinds[k][1]},
                                          {"s", "T", types_[t], kinds[k][2]}, {"y", "T", types_[t], kinds[k][3]}};
                ck_ukernel_ew_spec sp = {uname("gen_ew"), "y = x + r[0] + s;;", NULL, "int q = 0; (void)q;", "(void)0;",
                                         3, 1, ps, layouts[l][0], layouts[l][1], 0};
                char what[64];
                snprintf(what, sizeof what, "ew_%s_%s_%d", ck_dtype_get_info(types_[t])->name, kinds[k], l);
                add(what, ck_ukernel_ew_source(&sp));
            }
        }
        ck_ukernel_param py[1] = {{"y", "T", types_[t], CK_UKP_ARRAY}};
        ck_ukernel_ew_spec ind = {uname("gen_ind"), "  y = (T)(_ind.get()[0] + _ind.size())  ", "#define UNUSED 1", NULL,
                                  NULL, 0, 1, py, 2, 0, 1};
        add("ew_ind", ck_ukernel_ew_source(&ind));
    }
}

static void reductions(void)
{
    static const int dims[][2] = {{0, 1}, {1, 1}, {2, 3}};
    for (int t = 0; t < NTYPES_; t++) {
        if (types_[t] == CK_BOOL || types_[t] == CK_INT8 || types_[t] == CK_UINT16) continue;
        for (int id = 0; id < 2; id++)
            for (int block = 0; block < 2; block++)
                for (int d = 0; d < 3; d++) {
                    ck_ukernel_param ps[4] = {{"x", "T", types_[t], 'a'}, {"w", "T", types_[t], 'r'},
                                              {"s", "T", types_[t], 's'}, {"y", "T", types_[t], 'a'}};
                    ck_ukernel_red_spec sp = {uname("gen_red"), "x * w[0] + s", "a + b", "y = a", id ? "0" : NULL, NULL,
                                              ck_ukernel_ctype(types_[t]), 3, ps, dims[d][0], dims[d][1], block};
                    char what[64];
                    snprintf(what, sizeof what, "red_%s_%d_%d_%d", ck_dtype_get_info(types_[t])->name, id, block, d);
                    add(what, ck_ukernel_red_source(&sp));
                }
    }
}

/* Every op of the trace table on parameters of type t (and its compute
 * type), as the element-wise kernel of a fused function. */
static void fused(ck_dtype t)
{
    for (int op = 0; op < ck_ukernel_fuse_nops; op++) {
        const ck_ukernel_fuse_op *o = &ck_ukernel_fuse_ops[op];
        if (o->float_only && !ck_dtype_is_inexact(t)) continue;
        int is_bits = !strncmp(o->name, "bitwise", 7) || !strcmp(o->name, "invert") || strstr(o->name, "shift");
        if (is_bits && ck_dtype_is_inexact(t)) continue;
        /* NumPy computes these in floating point for integers (the tracer
         * then casts to float64); fmax and fmin of integers have no CUDA
         * overload (an integer trace of them compiles for the CPU only) */
        static const char *const to_float[] = {"divide", "true_divide", "arctan2", "hypot", "copysign"};
        ck_dtype ct = t;
        for (size_t i = 0; i < sizeof to_float / sizeof to_float[0]; i++)
            if (!ck_dtype_is_inexact(t) && !strcmp(o->name, to_float[i])) ct = CK_FLOAT64;
        if (!ck_dtype_is_inexact(t) && (!strcmp(o->name, "fmax") || !strcmp(o->name, "fmin"))) continue;
        /* in0 op in1 (or a constant), then cast, where and a NumPy scalar */
        ck_ukernel_fuse_step st[3];
        memset(st, 0, sizeof st);
        st[0].op = op;
        st[0].out = st[0].compute = ct;
        st[0].a[0] = (ck_ukernel_fuse_ref){CK_UKF_PARAM, 0, 0, CK_DTYPE_INVALID};
        st[0].a[1] = op % 2 ? (ck_ukernel_fuse_ref){CK_UKF_PARAM, 1, 0, CK_DTYPE_INVALID}
                            : ck_dtype_is_inexact(t) ? (ck_ukernel_fuse_ref){CK_UKF_FLOAT, 0, 2.5e-7, CK_DTYPE_INVALID}
                                                     : (ck_ukernel_fuse_ref){CK_UKF_INT, 3, 0, CK_INT16};
        st[1].op = CK_UKF_OP_CAST;
        st[1].out = CK_FLOAT64;
        st[1].a[0] = (ck_ukernel_fuse_ref){CK_UKF_TEMP, 0, 0, CK_DTYPE_INVALID};
        st[2].op = CK_UKF_OP_WHERE;
        st[2].out = CK_FLOAT64;
        st[2].a[0] = (ck_ukernel_fuse_ref){CK_UKF_BOOL, 1, 0, CK_DTYPE_INVALID};
        st[2].a[1] = (ck_ukernel_fuse_ref){CK_UKF_TEMP, 1, 0, CK_DTYPE_INVALID};
        st[2].a[2] = (ck_ukernel_fuse_ref){CK_UKF_FLOAT, 0, 1e300, CK_FLOAT32};
        ck_dtype ins[2] = {t, t}, outs[2] = {CK_FLOAT64, ct};
        ck_ukernel_fuse_ref res[2] = {{CK_UKF_TEMP, 2, 0, CK_DTYPE_INVALID}, {CK_UKF_TEMP, 0, 0, CK_DTYPE_INVALID}};
        for (int reduce = 0; reduce < 2; reduce++) {
            ck_ukernel_fuse_spec fs = {2, ins, 3, st, reduce ? 1 : 2, res, outs, reduce};
            char *pre, *call, what[64];
            snprintf(what, sizeof what, "fuse_%s_%s_%d", o->name, ck_dtype_get_info(t)->name, reduce);
            ck_status s = ck_ukernel_fuse_source(&fs, &pre, &call);
            CHECK(s == CK_OK, "%s: %s", what, ck_error_message());
            if (s != CK_OK) continue;
            ck_ukernel_param ps[4] = {{"in0", NULL, t, 'a'}, {"in1", NULL, t, 'a'}, {"out0", NULL, CK_FLOAT64, 'a'},
                                      {"out1", NULL, ct, 'a'}};
            if (reduce) {
                ck_ukernel_red_spec rs = {uname("fused"), call, "a + b", "out0 = a", "0", pre, "double", 2, ps, 1, 1, 1};
                add(what, ck_ukernel_red_source(&rs));
            } else {
                ck_ukernel_ew_spec es = {uname("fused"), call, pre, NULL, NULL, 2, 2, ps, 1, 1, 0};
                add(what, ck_ukernel_ew_source(&es));
            }
            free(pre);
            free(call);
        }
    }
}

static void refusals_and_names(void)
{
    CHECK(ck_ukernel_ctype(CK_FLOAT16) == NULL && ck_error_status() == CK_ERR_NOT_IMPLEMENTED, "float16 accepted");
    ck_error_clear();
    ck_ukernel_param p = {"x", NULL, CK_FLOAT16, CK_UKP_ARRAY};
    ck_ukernel_ew_spec sp = {"h", "x = 1", NULL, NULL, NULL, 0, 1, &p, 1, 1, 0};
    CHECK(ck_ukernel_ew_source(&sp) == NULL && ck_error_status() == CK_ERR_NOT_IMPLEMENTED, "float16 kernel");
    ck_error_clear();
    for (int t = 0; t < NTYPES_; t++)
        CHECK(ck_ukernel_dtype_of_ctype(ck_ukernel_ctype(types_[t])) == types_[t], "%s: C name %s",
              ck_dtype_get_info(types_[t])->name, ck_ukernel_ctype(types_[t]));
    CHECK(ck_ukernel_dtype_of_ctype("size_t") == CK_UINT64 && ck_ukernel_dtype_of_ctype("MyStruct") == CK_DTYPE_INVALID,
          "C type names");
    const char *expr, *ident;
    CHECK(ck_ukernel_fuse_reduction("prod", &expr, &ident) == CK_OK && !strcmp(expr, "a * b") && !strcmp(ident, "1"),
          "prod");
    CHECK(ck_ukernel_fuse_reduction("max", &expr, &ident) == CK_OK && ident == NULL, "max has no identity");
    CHECK(ck_ukernel_fuse_reduction("mean", &expr, &ident) == CK_ERR_VALUE, "mean");
    ck_error_clear();
}

/* A view of base with the given shape and strides. */
static ck_array view(const ck_array *base, int ndim, const int64_t *shape, const int64_t *strides)
{
    ck_array v = *base;
    ck_array_set_layout(&v, ndim, shape, strides);
    return v;
}

static void layouts(void)
{
    int64_t sh[3] = {2, 3, 64}, b1[1] = {64}, st[4][CK_MAXDIMS];
    ck_array a, b, o;
    OK(ck_array_empty(&a, 3, sh, CK_FLOAT32, ck_device_cpu()));
    OK(ck_array_empty(&b, 1, b1, CK_FLOAT32, ck_device_cpu()));
    ck_ukernel_loop loop;
    const ck_array *two[2] = {&a, &a};
    ck_ukernel_ew_layout(2, two, 3, sh, 1, 1, &loop, st);
    CHECK(loop.contig && loop.ndim == 1 && loop.shape[0] == 384, "contiguous: %d dims", loop.ndim);
    const ck_array *ab[2] = {&a, &b};
    ck_ukernel_ew_layout(2, ab, 3, sh, 1, 1, &loop, st);
    CHECK(!loop.contig && loop.ndim == 2 && loop.shape[0] == 6 && loop.shape[1] == 64 && st[0][0] == 256 &&
          st[0][1] == 4 && st[1][0] == 0 && st[1][1] == 4, "broadcast: %d dims %lld %lld", loop.ndim,
          (long long)loop.shape[0], (long long)st[1][0]);
    ck_ukernel_ew_layout(2, ab, 3, sh, 0, 0, &loop, st);
    CHECK(!loop.contig && loop.ndim == 3 && st[1][0] == 0 && st[1][1] == 0 && st[1][2] == 4 && st[0][0] == 768,
          "as it is: %d dims", loop.ndim);
    /* a transposed view keeps C order: i is the index of the view's shape */
    int64_t tsh[3] = {64, 3, 2}, tst[3] = {4, 256, 768};
    ck_array t = view(&a, 3, tsh, tst);
    const ck_array *one[1] = {&t};
    ck_ukernel_ew_layout(1, one, 3, tsh, 1, 1, &loop, st);
    CHECK(loop.ndim == 3 && loop.shape[0] == 64 && st[0][0] == 4 && st[0][2] == 768, "transposed: %d dims", loop.ndim);
    /* reductions: along the contiguous last axis (a block per output), then axis 1 (a thread per output) */
    int64_t osh[2] = {2, 3};
    OK(ck_array_empty(&o, 2, osh, CK_FLOAT32, ck_device_cpu()));
    ck_ukernel_loop outer, inner;
    int64_t ist[4][CK_MAXDIMS];
    const ck_array *ins[1] = {&a};
    int block = ck_ukernel_red_layout(1, ins, &o, 0, 3, sh, 4, &outer, st, &inner, ist);
    CHECK(block && outer.ndim == 1 && outer.size == 6 && st[0][0] == 256 && st[1][0] == 4 && inner.ndim == 1 &&
          inner.size == 64 && ist[0][0] == 4, "last axis: block %d, %d and %d dims", block, outer.ndim, inner.ndim);
    int64_t ksh[3] = {2, 1, 64};
    ck_array ok;
    OK(ck_array_empty(&ok, 3, ksh, CK_FLOAT32, ck_device_cpu()));
    block = ck_ukernel_red_layout(1, ins, &ok, 1, 3, sh, 2, &outer, st, &inner, ist);
    CHECK(!block && outer.ndim == 2 && outer.size == 128 && st[0][0] == 768 && st[0][1] == 4 && st[1][0] == 256 &&
          st[1][1] == 4 && inner.ndim == 1 && ist[0][0] == 256, "axis 1, keepdims: block %d, %d dims", block,
          outer.ndim);
    ck_array_release(&a);
    ck_array_release(&b);
    ck_array_release(&o);
    ck_array_release(&ok);
}

int main(void)
{
    refusals_and_names();
    layouts();
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped compiling: %s\n", ck_error_message());
        return failures != 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    elementwise();
    reductions();
    fused(CK_FLOAT32);
    fused(CK_INT32);
    fused(CK_UINT8);
    batch_flush(0);
    printf("%d user kernels compiled, %d failures\n", nprograms_, failures);
    return failures ? 1 : 0;
}
