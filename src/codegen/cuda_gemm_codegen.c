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
