/* The integer and bool matrix product as CUDA C text. */
#include "cuda_gemm_codegen.h"
#include "cuda_codegen.h"
#include "kernel_keys.h"

uint64_t ck_cuda_gemm_int_key(const ck_cuda_gemm_int_spec *sp)
{
    /* the low byte stays 0: a module's i-th function is kept at key + i */
    return ck_kernel_key(CK_KFAM_GEMM, (1ull << 16) | ((uint64_t)sp->t << 8));
}

char *ck_cuda_gemm_int_source(const ck_cuda_gemm_int_spec *sp)
{
    ck_dtype t = sp->t;
    const char *T = ck_cuda_storage_type(t);
    const int is_bool = t == CK_BOOL;
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    ck_sbuf_printf(&b,
        "typedef %s T;\n"
        "typedef %s ACC;\n"
        "extern \"C\" __global__ void __launch_bounds__(256) ck_gemm_int(\n"
        "    long long m, long long n, long long k, long long batch,\n"
        "    const T *__restrict__ a, long long a_rs, long long a_cs, long long a_bs,\n"
        "    const T *__restrict__ b, long long b_rs, long long b_cs, long long b_bs,\n"
        "    T *__restrict__ c, long long c_rs, long long c_cs, long long c_bs)\n"
        "{\n"
        "    __shared__ T as[16][17];\n"
        "    __shared__ T bs[16][17];\n"
        "    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;\n"
        "    const long long tm = (m + 15) / 16, tn = (n + 15) / 16, per = tm * tn;\n"
        "    for (long long t = blockIdx.x; t < per * batch; t += gridDim.x) {\n"
        "        const long long bt = t / per, r = t - bt * per;\n"
        "        const long long row = (r / tn) * 16 + ty, col = (r %% tn) * 16 + tx;\n"
        "        const T *ab = a + bt * a_bs;\n"
        "        const T *bb = b + bt * b_bs;\n"
        "        ACC acc = 0;\n"
        "        for (long long k0 = 0; k0 < k; k0 += 16) {\n"
        "            const long long ka = k0 + tx, kb = k0 + ty;\n"
        "            as[ty][tx] = (row < m && ka < k) ? ab[row * a_rs + ka * a_cs] : T(0);\n"
        "            bs[ty][tx] = (kb < k && col < n) ? bb[kb * b_rs + col * b_cs] : T(0);\n"
        "            __syncthreads();\n"
        "#pragma unroll\n"
        "            for (int q = 0; q < 16; q++) %s;\n"
        "            __syncthreads();\n"
        "        }\n"
        "        if (row < m && col < n) c[bt * c_bs + row * c_rs + col * c_cs] = (T)acc;\n"
        "    }\n"
        "}\n",
        T, is_bool ? "unsigned int" : "unsigned long long",
        is_bool ? "acc |= (as[ty][q] != 0) & (bs[q][tx] != 0)" : "acc += (ACC)as[ty][q] * (ACC)bs[q][tx]");
    return ck_sbuf_finish(&b);
}

/* ------------------------------------------------- small float products */

const ck_gemm_small_cfg ck_gemm_small_cfgs[CK_GEMM_SMALL_CFGS] = {{1, 1, 4},  {1, 2, 4},  {2, 2, 4}, {2, 4, 4},
                                                                  {4, 4, 4},  {1, 1, 16}, {1, 2, 16}, {2, 2, 8}};

const ck_gemm_dot_cfg ck_gemm_dot_cfgs[CK_GEMM_DOT_CFGS] = {{1, 1}, {1, 2}, {2, 2}, {2, 4}, {4, 2}, {4, 4}};

uint64_t ck_cuda_gemm_small_key(const ck_cuda_gemm_small_spec *sp)
{
    return ck_kernel_key(CK_KFAM_GEMM, (2ull << 16) | ((uint64_t)sp->t << 8));
}

size_t ck_gemm_small_smem(int c, int ks, size_t itemsize)
{
    const int tm = ck_gemm_small_tm(c), tn = ck_gemm_small_tn(c);
    return (size_t)ks * (size_t)(tm * tn + tm) * itemsize;
}

char *ck_cuda_gemm_small_source(const ck_cuda_gemm_small_spec *sp)
{
    if (sp->t != CK_FLOAT32 && sp->t != CK_FLOAT64) {
        ck_error_set(CK_ERR_NOT_IMPLEMENTED, "the small linear product is float32 or float64");
        return NULL;
    }
    ck_sbuf b = {0};
    ck_sbuf_prelude(&b);
    ck_sbuf_printf(&b, "typedef %s T;\n", ck_cuda_storage_type(sp->t));
    for (int c = 0; c < CK_GEMM_SMALL_CFGS; c++) {
        const int rm = ck_gemm_small_cfgs[c].rm, rn = ck_gemm_small_cfgs[c].rn, un = ck_gemm_small_cfgs[c].unroll;
        ck_sbuf_printf(&b,
            "extern \"C\" __global__ void __launch_bounds__(%d) ck_lin_%d(\n"
            "    int m, int n, int k, const T *__restrict__ a, long long sam, long long sak,\n"
            "    const T *__restrict__ b, long long sbk, long long sbn, T *__restrict__ d, long long ldd,\n"
            "    T *__restrict__ bias, int epi)\n"
            "{\n"
            "    CK_PDL_ENTRY();\n"
            "    enum { RM = %d, RN = %d, TM = 8 * RM, TN = 4 * RN, TT = TM * TN + TM };\n"
            "    extern __shared__ __align__(16) unsigned char ck_lin_smem[];\n"
            "    T *red = (T *)ck_lin_smem;\n"
            "    const int ks = blockDim.x >> 5, w = threadIdx.x >> 5, lane = threadIdx.x & 31;\n"
            "    const int lr = lane >> 2, lc = lane & 3;\n"
            "    const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;\n"
            "    const int chunk = (k + ks - 1) / ks, k0 = min(k, w * chunk), k1 = min(k, k0 + chunk);\n"
            "    const T *ap[RM];\n"
            "    const T *bp[RN];\n"
            "    T acc[RM][RN], rs[RM];\n"
            "#pragma unroll\n"
            "    for (int r = 0; r < RM; r++) { ap[r] = a + (long long)min(m0 + lr + 8 * r, m - 1) * sam; rs[r] = T(0);\n"
            "#pragma unroll\n"
            "        for (int c = 0; c < RN; c++) acc[r][c] = T(0); }\n"
            "#pragma unroll\n"
            "    for (int c = 0; c < RN; c++) bp[c] = b + (long long)min(n0 + lc + 4 * c, n - 1) * sbn;\n"
            "    /* rows and columns past the edge read the last one's values, never stored */\n"
            "#pragma unroll %d\n"
            "    for (int kk = k0; kk < k1; kk++) {\n"
            "        T av[RM], bv[RN];\n"
            "#pragma unroll\n"
            "        for (int r = 0; r < RM; r++) av[r] = ap[r][kk * sak];\n"
            "#pragma unroll\n"
            "        for (int c = 0; c < RN; c++) bv[c] = bp[c][kk * sbk];\n"
            "#pragma unroll\n"
            "        for (int r = 0; r < RM; r++) {\n"
            "            rs[r] += av[r];\n"
            "#pragma unroll\n"
            "            for (int c = 0; c < RN; c++) acc[r][c] = fma(av[r], bv[c], acc[r][c]);\n"
            "        }\n"
            "    }\n"
            "    T *mine = red + w * TT;\n"
            "#pragma unroll\n"
            "    for (int r = 0; r < RM; r++) {\n"
            "#pragma unroll\n"
            "        for (int c = 0; c < RN; c++) mine[(lr + 8 * r) * TN + lc + 4 * c] = acc[r][c];\n"
            "        if (lc == 0) mine[TM * TN + lr + 8 * r] = rs[r];\n"
            "    }\n"
            "    __syncthreads();\n"
            "    const int bgrad = epi == 4 && blockIdx.x == 0;\n"
            "    for (int o = threadIdx.x; o < (bgrad ? TT : TM * TN); o += blockDim.x) {\n"
            "        T s = red[o];\n"
            "        for (int q = 1; q < ks; q++) s += red[q * TT + o];\n"
            "        if (o >= TM * TN) {\n"
            "            const int i = m0 + o - TM * TN;\n"
            "            if (i < m) bias[i] = s;\n"
            "            continue;\n"
            "        }\n"
            "        const int i = m0 + o / TN, j = n0 + o %% TN;\n"
            "        if (i >= m || j >= n) continue;\n"
            "        if (epi == 1 || epi == 3) s += bias[j];\n"
            "        if (epi == 2 || epi == 3) s = s > T(0) ? s : (s != s ? s : T(0));   /* ck_act's relu */\n"
            "        d[(long long)i * ldd + j] = s;\n"
            "    }\n"
            "}\n",
            32 * CK_GEMM_SMALL_MAX_WARPS, c, rm, rn, un);
    }
    /* the dot-product form: VT the 16-byte vector of T, DOTV the FMAs of
     * one vector's products */
    const int dbl = sp->t == CK_FLOAT64;
    ck_sbuf_printf(&b,
        "typedef %s VT;\n"
        "enum { V = %d };\n"
        "#define DOTV(s_, u_, v_) %s\n",
        dbl ? "double2" : "float4", dbl ? 2 : 4,
        dbl ? "(s_) = fma((u_).y, (v_).y, fma((u_).x, (v_).x, (s_)))"
            : "(s_) = fma((u_).w, (v_).w, fma((u_).z, (v_).z, fma((u_).y, (v_).y, fma((u_).x, (v_).x, (s_)))))");
    for (int c = 0; c < CK_GEMM_DOT_CFGS; c++) {
        ck_sbuf_printf(&b,
            "extern \"C\" __global__ void __launch_bounds__(%d) ck_lind_%d(\n"
            "    int m, int n, int k, const T *__restrict__ a, long long sam, const T *__restrict__ b, long long sbn,\n"
            "    T *__restrict__ d, long long ldd, const T *__restrict__ bias, int epi, int vec)\n"
            "{\n"
            "    CK_PDL_ENTRY();\n"
            "    enum { WM = %d, WN = %d };\n"
            "    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;\n"
            "    const int i0 = blockIdx.y * WM, j0 = (blockIdx.x * (blockDim.x >> 5) + w) * WN;\n"
            "    const T *ap[WM];\n"
            "    const T *bp[WN];\n"
            "    T acc[WM][WN];\n"
            "    /* rows and columns past the edge read the last one's values, never stored */\n"
            "#pragma unroll\n"
            "    for (int r = 0; r < WM; r++) {\n"
            "        ap[r] = a + (long long)min(i0 + r, m - 1) * sam;\n"
            "#pragma unroll\n"
            "        for (int c = 0; c < WN; c++) acc[r][c] = T(0);\n"
            "    }\n"
            "#pragma unroll\n"
            "    for (int c = 0; c < WN; c++) bp[c] = b + (long long)min(j0 + c, n - 1) * sbn;\n"
            "    if (vec) {\n"
            "#pragma unroll 2\n"
            "        for (int kk = lane * V; kk < k; kk += 32 * V) {\n"
            "            VT av[WM], bv[WN];\n"
            "#pragma unroll\n"
            "            for (int r = 0; r < WM; r++) av[r] = *(const VT *)(ap[r] + kk);\n"
            "#pragma unroll\n"
            "            for (int c = 0; c < WN; c++) bv[c] = *(const VT *)(bp[c] + kk);\n"
            "#pragma unroll\n"
            "            for (int r = 0; r < WM; r++)\n"
            "#pragma unroll\n"
            "                for (int c = 0; c < WN; c++) DOTV(acc[r][c], av[r], bv[c]);\n"
            "        }\n"
            "    } else {\n"
            "#pragma unroll 4\n"
            "        for (int kk = lane; kk < k; kk += 32) {\n"
            "            T av[WM], bv[WN];\n"
            "#pragma unroll\n"
            "            for (int r = 0; r < WM; r++) av[r] = ap[r][kk];\n"
            "#pragma unroll\n"
            "            for (int c = 0; c < WN; c++) bv[c] = bp[c][kk];\n"
            "#pragma unroll\n"
            "            for (int r = 0; r < WM; r++)\n"
            "#pragma unroll\n"
            "                for (int c = 0; c < WN; c++) acc[r][c] = fma(av[r], bv[c], acc[r][c]);\n"
            "        }\n"
            "    }\n"
            "#pragma unroll\n"
            "    for (int r = 0; r < WM; r++)\n"
            "#pragma unroll\n"
            "        for (int c = 0; c < WN; c++) {\n"
            "            T s = acc[r][c];\n"
            "            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);\n"
            "            const int i = i0 + r, j = j0 + c;\n"
            "            if (lane != r * WN + c || i >= m || j >= n) continue;\n"
            "            if (epi == 1 || epi == 3) s += bias[j];\n"
            "            if (epi == 2 || epi == 3) s = s > T(0) ? s : (s != s ? s : T(0));   /* ck_act's relu */\n"
            "            d[(long long)i * ldd + j] = s;\n"
            "        }\n"
            "}\n",
            32 * CK_GEMM_DOT_WARPS, c, ck_gemm_dot_cfgs[c].wm, ck_gemm_dot_cfgs[c].wn);
    }
    return ck_sbuf_finish(&b);
}
