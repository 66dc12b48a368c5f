/* Element-wise, cast, fill and iota kernels as CUDA C text. */
#include "cuda_codegen.h"
#include "kernel_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CUDA storage and compute types, kind letters and names of the dtype
 * table's rows */
static const char *const storage_[CK_NTYPES] = {
#define CK_STORAGE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = cus,
    CK_DTYPES(CK_STORAGE_, _)
#undef CK_STORAGE_
};
static const char *const compute_[CK_NTYPES] = {
#define CK_COMPUTE_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = cuc,
    CK_DTYPES(CK_COMPUTE_, _)
#undef CK_COMPUTE_
};
static const char *const kind_[CK_NTYPES] = {
#define CK_KIND_LETTER_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = #K,
    CK_DTYPES(CK_KIND_LETTER_, _)
#undef CK_KIND_LETTER_
};
static const char *const dtname_[CK_NTYPES] = {
#define CK_DTNAME_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) [CK_##ID] = #ID,
    CK_DTYPES(CK_DTNAME_, _)
#undef CK_DTNAME_
};
static const char *const opname_[CK_OP_COUNT] = {
#define CK_OPNAME_(ID, name, nin, types, rule, cost, flags) #ID,
    CK_ALL_OPS(CK_OPNAME_)
#undef CK_OPNAME_
};

const char *ck_cuda_storage_type(ck_dtype t) { return storage_[t]; }
const char *ck_cuda_compute_type(ck_dtype t) { return compute_[t]; }
char ck_cuda_kind_letter(ck_dtype t) { return kind_[t][0]; }
const char *ck_cuda_dtype_id(ck_dtype t) { return dtname_[t]; }
const char *ck_cuda_op_id(ck_op op) { return opname_[op]; }

void ck_sbuf_prelude(ck_sbuf *b)
{
    ck_sbuf_printf(b, "%s\n%s\n", ck_src_cuda_prelude, ck_src_scalar_ops);
}

/* A key holds an op (the kernel ops after the table's) in 8 bits and a
 * dtype in 4, 0xF marking an operand the kernel does not have. */
_Static_assert(CK_KOP_LAST < 256, "more ops than an element-wise kernel key holds");
_Static_assert(CK_NTYPES < 16, "more dtypes than an element-wise kernel key holds");

/* flat means something only without vectors (the source and the key both read it so) */
static int ew_flat(const ck_cuda_ew_spec *sp) { return sp->flat && sp->vec <= 1; }

uint64_t ck_cuda_ew_key(const ck_cuda_ew_spec *sp)
{
    uint64_t k = (uint64_t)sp->op & 0xFF;
    for (int i = 0; i < 4; i++) {
        uint64_t t = i < sp->nops ? (uint64_t)sp->types[i] & 0xF : 0xF;
        uint64_t kd = i < sp->nops ? (uint64_t)sp->kinds[i] & 0x3 : 0x3;
        k |= t << (8 + 4 * i);
        k |= kd << (24 + 2 * i);
    }
    k |= ((uint64_t)sp->ndim & 0x3F) << 32;
    k |= ((uint64_t)sp->idx64 & 1) << 38;
    k |= ((uint64_t)sp->vec & 0xF) << 39;
    k |= ((uint64_t)sp->nops & 0x7) << 43;
    k |= (uint64_t)ew_flat(sp) << 46;
    return ck_kernel_key(CK_KFAM_ELEMENTWISE, k);
}

/* The expression of the output from the input values v1.. (compute types). */
static void expr(ck_sbuf *b, const ck_cuda_ew_spec *sp)
{
    ck_dtype in = sp->nops > 1 ? sp->types[sp->nops - 1] : sp->types[0];
    const char *ot = storage_[sp->types[0]];
    switch (sp->op) {
    case CK_KOP_CAST:
        if (sp->types[1] == sp->types[0]) ck_sbuf_printf(b, "v1");
        else ck_sbuf_printf(b, "CK_CVT_(%s, %s, %s, v1)", kind_[sp->types[1]], kind_[sp->types[0]], ot);
        return;
    case CK_KOP_FILL:
        ck_sbuf_printf(b, "v1");
        return;
    case CK_KOP_IOTA:
        /* rounded product, rounded sum (no FMA): NumPy's linspace and arange to the bit */
        ck_sbuf_printf(b, "CK_CVT_(F, %s, %s, __dadd_rn(v1, __dmul_rn((double)i, v2)))", kind_[sp->types[0]], ot);
        return;
    case CK_OP_WHERE:
        ck_sbuf_printf(b, "(v1 ? v2 : v3)");
        return;
    case CK_KOP_CLIP_CONST:
        ck_sbuf_printf(b, "(%s)(CK_X_CLIP_CONST(%s, %s, %s, v1, v2, v3))", ot, dtname_[in], kind_[in], compute_[in]);
        return;
    default: break;
    }
    int nin = ck_op_table[sp->op].nin;
    ck_sbuf_printf(b, "(%s)(CK_X_%s(%s, %s, %s", ot, opname_[sp->op], dtname_[in], kind_[in], compute_[in]);
    for (int k = 1; k <= nin; k++) ck_sbuf_printf(b, ", v%d", k);
    ck_sbuf_printf(b, "))");
}

/* The stored type of operand k, as the kernel takes it (iota's start and
 * step are doubles whatever the output). */
static const char *param_type(const ck_cuda_ew_spec *sp, int k)
{
    return sp->op == CK_KOP_IOTA && k > 0 ? "double" : storage_[sp->types[k]];
}

size_t ck_cuda_ew_param_size(const ck_cuda_ew_spec *sp, int k)
{
    return sp->op == CK_KOP_IOTA && k > 0 ? sizeof(double) : (size_t)ck_dtype_get_info(sp->types[k])->itemsize;
}

/* The compute type operand k is loaded as. */
static const char *load_type(const ck_cuda_ew_spec *sp, int k)
{
    if (sp->op == CK_KOP_IOTA) return "double";
    /* a copy moves the stored bits, no round trip through the compute type */
    if (sp->op == CK_KOP_FILL || sp->op == CK_OP_WHERE || (sp->op == CK_KOP_CAST && sp->types[1] == sp->types[0]))
        return storage_[sp->types[k]];
    return compute_[sp->types[k]];
}

char *ck_cuda_ew_source(const ck_cuda_ew_spec *sp)
{
    ck_sbuf b = {0};
    const char *idx = sp->idx64 ? "long long" : "int";
    int any_strided = 0;
    for (int k = 0; k < sp->nops; k++) any_strided |= sp->kinds[k] == CK_OPND_STRIDED;
    ck_sbuf_prelude(&b);
    ck_sbuf_printf(&b, "struct ck_nd { long long shape[%d]; long long strides[4][%d]; };\n",
                   CK_CUDA_EW_MAXDIM, CK_CUDA_EW_MAXDIM);
    /* the layout struct is 320 bytes of parameters: only strided kernels take it */
    ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_ew(%s n%s", idx,
                   any_strided ? ", ck_nd nd" : "");
    for (int k = 0; k < sp->nops; k++) {
        const char *st = param_type(sp, k);
        if (sp->kinds[k] == CK_OPND_SCALAR) ck_sbuf_printf(&b, ", %s p%d", st, k);
        else ck_sbuf_printf(&b, ", %s%s *__restrict__ p%d", k ? "const " : "", st, k);
    }
    /* ck_bad: integer power's negative-exponent flag; the GPU has no way
     * to raise, so the result is 0 as documented */
    ck_sbuf_printf(&b, ")\n{\n    CK_PDL_ENTRY();\n    int ck_bad = 0;\n    (void)ck_bad;\n");
    ck_sbuf_printf(&b, "    %s i = (%s)blockIdx.x * blockDim.x + threadIdx.x;\n", idx, idx);
    int flat = ew_flat(sp);
    if (!flat) ck_sbuf_printf(&b, "    const %s step = (%s)gridDim.x * blockDim.x;\n", idx, idx);

    if (flat) {
        /* the launch gives each element its own thread: no trip back to the
         * loop's test (a replayed graph of small ops is this kernel's cost
         * between two waits) */
        ck_sbuf_printf(&b, "    if (i < n) {\n");
    } else if (sp->vec > 1 && !any_strided) {
        /* all arrays contiguous and aligned: each thread moves CK_ILP vectors
         * per trip, all loads issued before the first store, so enough bytes
         * are in flight to reach the memory bandwidth */
        int v = sp->vec;
        ck_sbuf_printf(&b, "    const %s nv = n / %d;\n", idx, v);
        ck_sbuf_printf(&b, "    const %s tile = (%s)blockDim.x * 4;\n", idx, idx);
        ck_sbuf_printf(&b, "    for (%s base = (%s)blockIdx.x * tile; base < nv; base += (%s)gridDim.x * tile) {\n", idx, idx, idx);
        for (int k = 1; k < sp->nops; k++) {
            if (sp->kinds[k] == CK_OPND_SCALAR) continue;
            ck_sbuf_printf(&b, "        ck_vec<%s, %d> a%d[4];\n", storage_[sp->types[k]], v, k);
        }
        ck_sbuf_printf(&b, "#pragma unroll\n        for (int u = 0; u < 4; u++) {\n"
                           "            %s j = base + threadIdx.x + (%s)u * blockDim.x;\n            if (j < nv) {\n", idx, idx);
        for (int k = 1; k < sp->nops; k++) {
            if (sp->kinds[k] == CK_OPND_SCALAR) continue;
            ck_sbuf_printf(&b, "                a%d[u] = ((const ck_vec<%s, %d> *)p%d)[j];\n", k, storage_[sp->types[k]], v, k);
        }
        ck_sbuf_printf(&b, "            }\n        }\n");
        ck_sbuf_printf(&b, "#pragma unroll\n        for (int u = 0; u < 4; u++) {\n"
                           "            %s j = base + threadIdx.x + (%s)u * blockDim.x;\n            if (j >= nv) break;\n", idx, idx);
        ck_sbuf_printf(&b, "            ck_vec<%s, %d> r;\n", storage_[sp->types[0]], v);
        ck_sbuf_printf(&b, "#pragma unroll\n            for (int e = 0; e < %d; e++) {\n", v);
        if (sp->op == CK_KOP_IOTA) ck_sbuf_printf(&b, "                %s i = j * %d + e; (void)i;\n", idx, v);
        for (int k = 1; k < sp->nops; k++) {
            if (sp->kinds[k] == CK_OPND_SCALAR)
                ck_sbuf_printf(&b, "                %s v%d = (%s)p%d;\n", load_type(sp, k), k, load_type(sp, k), k);
            else
                ck_sbuf_printf(&b, "                %s v%d = (%s)a%d[u].v[e];\n", load_type(sp, k), k, load_type(sp, k), k);
        }
        ck_sbuf_printf(&b, "                r.v[e] = ");
        expr(&b, sp);
        ck_sbuf_printf(&b, ";\n            }\n            ((ck_vec<%s, %d> *)p0)[j] = r;\n        }\n    }\n", storage_[sp->types[0]], v);
        ck_sbuf_printf(&b, "    for (i = nv * %d + i; i < n; i += step) {\n", v);
    } else {
        ck_sbuf_printf(&b, "    for (; i < n; i += step) {\n");
    }
    if (any_strided) {
        if (sp->ndim == 1) {
            for (int k = 0; k < sp->nops; k++)
                if (sp->kinds[k] == CK_OPND_STRIDED)
                    ck_sbuf_printf(&b, "        long long o%d = (long long)i * nd.strides[%d][0];\n", k, k);
        } else {
            for (int k = 0; k < sp->nops; k++)
                if (sp->kinds[k] == CK_OPND_STRIDED) ck_sbuf_printf(&b, "        long long o%d = 0;\n", k);
            ck_sbuf_printf(&b, "        long long rem = i;\n#pragma unroll\n        for (int d = 0; d < %d; d++) {\n", sp->ndim);
            ck_sbuf_printf(&b, "            long long q = rem / nd.shape[d], c = rem - q * nd.shape[d];\n            rem = q;\n");
            for (int k = 0; k < sp->nops; k++)
                if (sp->kinds[k] == CK_OPND_STRIDED) ck_sbuf_printf(&b, "            o%d += c * nd.strides[%d][d];\n", k, k);
            ck_sbuf_printf(&b, "        }\n");
        }
    }
    for (int k = 1; k < sp->nops; k++) {
        const char *lt = load_type(sp, k), *st = param_type(sp, k);   /* k >= 1 here */
        if (sp->kinds[k] == CK_OPND_SCALAR)
            ck_sbuf_printf(&b, "        %s v%d = (%s)p%d;\n", lt, k, lt, k);
        else if (sp->kinds[k] == CK_OPND_CONTIG)
            ck_sbuf_printf(&b, "        %s v%d = (%s)p%d[i];\n", lt, k, lt, k);
        else
            ck_sbuf_printf(&b, "        %s v%d = (%s)*(const %s *)((const char *)p%d + o%d);\n", lt, k, lt, st, k, k);
    }
    if (sp->kinds[0] == CK_OPND_STRIDED)
        ck_sbuf_printf(&b, "        *(%s *)((char *)p0 + o0) = ", storage_[sp->types[0]]);
    else
        ck_sbuf_printf(&b, "        p0[i] = ");
    expr(&b, sp);
    ck_sbuf_printf(&b, ";\n    }\n}\n");
    return ck_sbuf_finish(&b);
}

uint64_t ck_cuda_ew_chain_key(uint64_t id) { return ck_kernel_key(CK_KFAM_EW_CHAIN, (id << 8) & ((1ull << CK_KERNEL_KEY_BITS) - 1)); }

char *ck_cuda_ew_chain_source(const ck_cuda_ew_chain *c)
{
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    ck_sbuf_printf(&b, "extern \"C\" __global__ void __launch_bounds__(256) ck_ewc(int n");
    for (int s = 0; s < c->nsteps; s++) {
        const ck_cuda_ew_spec *sp = &c->steps[s];
        for (int k = 0; k < sp->nops; k++) {
            const char *st = param_type(sp, k);
            if (sp->kinds[k] == CK_OPND_SCALAR) ck_sbuf_printf(&b, ", %s q%d_%d", st, s, k);
            else ck_sbuf_printf(&b, ", %s%s *q%d_%d", k ? "const " : "", st, s, k);
        }
    }
    ck_sbuf_printf(&b, ")\n{\n    CK_PDL_ENTRY();\n    int ck_bad = 0;\n    (void)ck_bad;\n"
                       "    int i = (int)blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n) return;\n");
    for (int s = 0; s < c->nsteps; s++) {
        const ck_cuda_ew_spec *sp = &c->steps[s];
        ck_sbuf_printf(&b, "    {\n");
        for (int k = 1; k < sp->nops; k++) {
            const char *lt = load_type(sp, k);
            ck_sbuf_printf(&b, "        %s v%d = (%s)q%d_%d%s;\n", lt, k, lt, s, k,
                           sp->kinds[k] == CK_OPND_SCALAR ? "" : "[i]");
        }
        ck_sbuf_printf(&b, "        q%d_0[i] = ", s);
        expr(&b, sp);
        ck_sbuf_printf(&b, ";\n    }\n");
    }
    ck_sbuf_printf(&b, "}\n");
    return ck_sbuf_finish(&b);
}
