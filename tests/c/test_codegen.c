/* Every generated kernel kind compiles through NVRTC (no GPU needed): one
 * element-wise kernel per (op, loop dtype) in each operand layout, every
 * cast, fill and iota, the chains a graph capture fuses (every op of every
 * dtype as a step), and the reductions and scans of every dtype. */
#include "cudakit.h"
#include "../../src/platform/cuda_api.h"
#include "../../src/codegen/cuda_reduce_codegen.h"
#include "ck_nvrtc_batch.h"

static void compile_one(const char *what, char *src)
{
    CHECK(src != NULL, "%s: no source: %s", what, ck_error_message());
    if (!src) return;
    size_t pre = strlen(ck_src_cuda_prelude) + strlen(ck_src_scalar_ops) + 2;
    const char *body = src + pre;
    int id = batch_next_id();
    /* entry points: ck_ew, ck_red_block, ck_red_thread, ck_red_final, ck_scan, ck_scan_lb */
    ck_sbuf a0 = {0}, a = {0}, b = {0}, c = {0}, e = {0}, prog = {0};
    char to[48];
    snprintf(to, sizeof to, "ck_ewc_%d(", id);
    batch_replace_all(&a0, body, "ck_ewc(", to);
    snprintf(to, sizeof to, "ck_ew_%d(", id);
    batch_replace_all(&a, a0.s, "ck_ew(", to);
    snprintf(to, sizeof to, "ck_red_%d_", id);
    batch_replace_all(&b, a.s, "ck_red_", to);
    snprintf(to, sizeof to, "ck_scan_%d(", id);
    batch_replace_all(&c, b.s, "ck_scan(", to);
    snprintf(to, sizeof to, "ck_scan_lb_%d(", id);
    batch_replace_all(&e, c.s, "ck_scan_lb(", to);
    ck_sbuf_printf(&prog, "namespace k%d {\n%s\n}\n#undef IDENT\n#undef MAP\n#undef COMB\n#undef FIN\n#undef LOAD\n#undef SCAN_IN\n#undef VFOLD\n",
                   id, e.s);
    batch_add(what, prog.s, 120);
    free(a0.s); free(a.s); free(b.s); free(c.s); free(e.s); free(prog.s);
    free(src);
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped: %s\n", ck_error_message());
        return 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    const char *fe = getenv("CK_CODEGEN_FULL");
    int full = fe && *fe && strcmp(fe, "0");
    int n = 0;
    /* element-wise: every op with every loop dtype, contiguous-vector,
     * strided 1-d with a scalar, and 3-d strided layouts */
    for (int op = 0; op < CK_OP_COUNT; op++) {
        const ck_op_info *info = &ck_op_table[op];
        for (int t = 0; t < CK_NTYPES; t++) {
            if (!(info->types & (1u << t))) continue;
            for (int layout = 0; layout < 3; layout++) {
                ck_cuda_ew_spec sp;
                memset(&sp, 0, sizeof sp);
                sp.op = op;
                sp.nops = info->nin + 1;
                ck_dtype out = (info->rule & CK_R_OUT_BOOL) ? CK_BOOL
                             : (info->rule & CK_R_OUT_REAL) ? ck_dtype_real((ck_dtype)t) : (ck_dtype)t;
                sp.types[0] = out;
                for (int k = 1; k < sp.nops; k++) sp.types[k] = (ck_dtype)t;
                if (info->rule & CK_R_WHERE) sp.types[1] = CK_BOOL;
                sp.ndim = layout == 2 ? 3 : 1;
                sp.vec = layout == 0 ? 2 : 1;
                for (int k = 0; k < sp.nops; k++)
                    sp.kinds[k] = layout == 0 ? CK_OPND_CONTIG : CK_OPND_STRIDED;
                if (layout == 1 && sp.nops > 2) sp.kinds[2] = CK_OPND_SCALAR;
                sp.idx64 = layout == 2;
                sp.flat = layout == 1;   /* a small launch's form: no grid-stride loop */
                /* every op and dtype in the vector layout; the other
                 * layouts with one dtype of each kind (CK_CODEGEN_FULL=1: all) */
                if (layout > 0 && !full && t != CK_BOOL && t != CK_INT16 && t != CK_UINT32 && t != CK_FLOAT16 &&
                    t != CK_FLOAT64 && t != CK_COMPLEX64)
                    continue;
                char what[96];
                snprintf(what, sizeof what, "%s_%s_layout%d", info->name, ck_dtype_get_info((ck_dtype)t)->name, layout);
                compile_one(what, ck_cuda_ew_source(&sp));
                n++;
            }
        }
    }
    /* clip's constant-bounds kernel (scalar bounds) of every dtype */
    for (int t = 0; t < CK_NTYPES; t++) {
        ck_cuda_ew_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.op = CK_KOP_CLIP_CONST;
        sp.nops = 4;
        for (int k = 0; k < 4; k++) sp.types[k] = (ck_dtype)t;
        sp.kinds[2] = sp.kinds[3] = CK_OPND_SCALAR;
        sp.ndim = 1;
        sp.vec = 1;
        sp.flat = t % 2;
        char what[64];
        snprintf(what, sizeof what, "clip_const_%s", ck_dtype_get_info((ck_dtype)t)->name);
        compile_one(what, ck_cuda_ew_source(&sp));
        n++;
    }
    /* casts, fills, iota of every dtype pair */
    for (int a = 0; a < CK_NTYPES; a++) {
        for (int b = 0; b < CK_NTYPES; b++) {
            ck_cuda_ew_spec sp;
            memset(&sp, 0, sizeof sp);
            sp.op = CK_KOP_CAST;
            sp.nops = 2;
            sp.types[0] = (ck_dtype)a;
            sp.types[1] = (ck_dtype)b;
            sp.ndim = 2;
            sp.kinds[0] = sp.kinds[1] = CK_OPND_STRIDED;
            sp.vec = 1;
            char what[64];
            snprintf(what, sizeof what, "cast_%d_%d", a, b);
            compile_one(what, ck_cuda_ew_source(&sp));
            n++;
        }
        ck_cuda_ew_spec f;
        memset(&f, 0, sizeof f);
        f.op = CK_KOP_FILL;
        f.nops = 2;
        f.types[0] = f.types[1] = (ck_dtype)a;
        f.kinds[1] = CK_OPND_SCALAR;
        f.ndim = 1;
        f.vec = 4;
        compile_one("fill", ck_cuda_ew_source(&f));
        ck_cuda_ew_spec io;
        memset(&io, 0, sizeof io);
        io.op = CK_KOP_IOTA;
        io.nops = 3;
        io.types[0] = (ck_dtype)a;
        io.types[1] = io.types[2] = CK_FLOAT64;
        io.kinds[1] = io.kinds[2] = CK_OPND_SCALAR;
        io.ndim = 1;
        io.vec = 1;
        io.flat = a % 2;
        compile_one("iota", ck_cuda_ew_source(&io));
        n += 2;
    }
    /* fused chains (cuda_kernels.c): every op of each dtype as a step, its
     * second input a scalar in every other step, a fill, a cast and an
     * iota among them; CK_CUDA_EW_CHAIN_MAX steps a chain */
    for (int t = 0; t < CK_NTYPES; t++) {
        ck_cuda_ew_chain ch;
        memset(&ch, 0, sizeof ch);
        int chains = 0;
        for (int op = 0; op <= CK_OP_COUNT + 2; op++) {
            ck_cuda_ew_spec *sp = &ch.steps[ch.nsteps];
            memset(sp, 0, sizeof *sp);
            sp->ndim = 1;
            sp->vec = 1;
            sp->flat = 1;
            if (op < CK_OP_COUNT) {
                const ck_op_info *info = &ck_op_table[op];
                if (!(info->types & (1u << t))) continue;
                sp->op = op;
                sp->nops = info->nin + 1;
                sp->types[0] = (info->rule & CK_R_OUT_BOOL) ? CK_BOOL
                             : (info->rule & CK_R_OUT_REAL) ? ck_dtype_real((ck_dtype)t) : (ck_dtype)t;
                for (int k = 1; k < sp->nops; k++) sp->types[k] = (ck_dtype)t;
                if (info->rule & CK_R_WHERE) sp->types[1] = CK_BOOL;
                if (sp->nops > 2 && ch.nsteps % 2) sp->kinds[2] = CK_OPND_SCALAR;
            } else if (op == CK_OP_COUNT) {
                sp->op = CK_KOP_FILL;
                sp->nops = 2;
                sp->types[0] = sp->types[1] = (ck_dtype)t;
                sp->kinds[1] = CK_OPND_SCALAR;
            } else if (op == CK_OP_COUNT + 1) {
                sp->op = CK_KOP_CAST;
                sp->nops = 2;
                sp->types[0] = (ck_dtype)t;
                sp->types[1] = (ck_dtype)((t + 3) % CK_NTYPES);
            } else {
                sp->op = CK_KOP_IOTA;
                sp->nops = 3;
                sp->types[0] = (ck_dtype)t;
                sp->types[1] = sp->types[2] = CK_FLOAT64;
                sp->kinds[1] = sp->kinds[2] = CK_OPND_SCALAR;
            }
            ch.nsteps++;
            if (ch.nsteps == CK_CUDA_EW_CHAIN_MAX || op == CK_OP_COUNT + 2) {
                char what[64];
                snprintf(what, sizeof what, "chain_%s_%d", ck_dtype_get_info((ck_dtype)t)->name, chains++);
                compile_one(what, ck_cuda_ew_chain_source(&ch));
                n++;
                ch.nsteps = 0;
            }
        }
    }
    /* reductions and scans */
    for (int op = 0; op < CK_REDUCE_COUNT; op++) {
        for (int t = 0; t < CK_NTYPES; t++) {
            ck_dtype out = ck_reduce_default_dtype((ck_reduce_op)op, (ck_dtype)t);
            if ((op == CK_REDUCE_SUM || op == CK_REDUCE_PROD) && t == CK_BOOL) out = CK_INT64;
            char what[64];
            snprintf(what, sizeof what, "reduce_%d_%s", op, ck_dtype_get_info((ck_dtype)t)->name);
            ck_cuda_red_spec rs = {op, (ck_dtype)t, out, 2, 1, op % 2};
            compile_one(what, ck_cuda_red_source(&rs));
            n++;
        }
    }
    for (int t = 0; t < CK_NTYPES; t++) {
        ck_dtype wide = ck_reduce_default_dtype(CK_REDUCE_PROD, (ck_dtype)t);
        if (t == CK_BOOL) wide = CK_INT64;
        ck_cuda_scan_spec sum = {CK_REDUCE_SUM, (ck_dtype)t, (ck_dtype)t, 1};
        ck_cuda_scan_spec prod = {CK_REDUCE_PROD, (ck_dtype)t, (ck_dtype)t, 1};
        ck_cuda_scan_spec wprod = {CK_REDUCE_PROD, (ck_dtype)t, wide, 1};
        compile_one("scan_sum", ck_cuda_scan_source(&sum));
        compile_one("scan_prod", ck_cuda_scan_source(&prod));
        compile_one("scan_prod_default", ck_cuda_scan_source(&wprod));
        n += 3;
    }
    /* sums and cumulative sums that read one dtype and run in another, every
     * pair (dtype= may ask for any): the input converts as it loads */
    for (int t = 0; t < CK_NTYPES; t++) {
        for (int o = 0; o < CK_NTYPES; o++) {
            if (o == t) continue;
            char what[64];
            snprintf(what, sizeof what, "reduce_sum_%s_to_%s", ck_dtype_get_info((ck_dtype)t)->name,
                     ck_dtype_get_info((ck_dtype)o)->name);
            ck_cuda_red_spec rs = {CK_REDUCE_SUM, (ck_dtype)t, (ck_dtype)o, 1, 1, (t + o) % 2};
            compile_one(what, ck_cuda_red_source(&rs));
            snprintf(what, sizeof what, "scan_sum_%s_to_%s", ck_dtype_get_info((ck_dtype)t)->name,
                     ck_dtype_get_info((ck_dtype)o)->name);
            ck_cuda_scan_spec ss = {CK_REDUCE_SUM, (ck_dtype)t, (ck_dtype)o, 1};
            compile_one(what, ck_cuda_scan_source(&ss));
            n += 2;
        }
    }
    batch_flush(0);
    printf("%d kernels compiled, %d failures\n", n, failures);
    return failures ? 1 : 0;
}
