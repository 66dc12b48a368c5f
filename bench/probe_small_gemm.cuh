/* The tiled float32 GEMM of bench/probe_small_gemm.py (a RawKernel, on
 * every device) and bench/probe_small_gemm.cu (nvcc, against cuBLAS):
 * C[M,N] = A B (+ bias over N, relu), A and B read through element
 * strides, so transposes cost nothing.  32 x 32 output tiles, 256 threads,
 * a K tile of 32 in shared memory.  With split-K (grid z > 1) each block
 * writes its partial tile to ws and the last block of a tile (counters)
 * adds the partials in order, so the sums are the same at every run, and
 * puts the tile's counter back to 0 for the next launch.  pdl: begin as a
 * programmatic dependent launch (sm_90 and later). */
#define TM 32
#define TN 32
#define TK 32

extern "C" __global__ void __launch_bounds__(256) sgemm_small(
    const float *A, const float *B, float *C, const float *bias, int has_bias, int relu,
    int M, int N, int K, long long sam, long long sak, long long sbk, long long sbn,
    int kchunk, float *ws, unsigned *counters, int pdl)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* as cudakit's CK_PDL_ENTRY: a no-op unless launched as a programmatic dependent */
    if (pdl) asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
#else
    (void)pdl;
#endif
    __shared__ float As[TK][TM + 1];
    __shared__ float Bs[TK][TN + 1];
    __shared__ int last;
    const int tid = threadIdx.x, tx = tid & 31, ty = tid >> 5;    /* 32 x 8 */
    const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
    const int k_lo = blockIdx.z * kchunk;
    const int k_hi = min(K, k_lo + kchunk);
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = k_lo; k0 < k_hi; k0 += TK) {
        for (int r = 0; r < 4; r++) {
            int i = tid + 256 * r;
            /* neighbouring threads read neighbouring addresses */
            int mm = sak == 1 ? i >> 5 : i & 31, kk = sak == 1 ? i & 31 : i >> 5;
            int m = m0 + mm, k = k0 + kk;
            As[kk][mm] = m < M && k < k_hi ? A[m * sam + k * sak] : 0.f;
            int nn = sbn == 1 ? i & 31 : i >> 5, kb = sbn == 1 ? i >> 5 : i & 31;
            int n = n0 + nn, kq = k0 + kb;
            Bs[kb][nn] = n < N && kq < k_hi ? B[kq * sbk + n * sbn] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; kk++) {
            float b = Bs[kk][tx];
            for (int r = 0; r < 4; r++) acc[r] += As[kk][ty + 8 * r] * b;
        }
        __syncthreads();
    }
    const int n = n0 + tx;
    if (gridDim.z > 1) {
        for (int r = 0; r < 4; r++) {
            int m = m0 + ty + 8 * r;
            if (m < M && n < N) ws[((long long)blockIdx.z * M + m) * N + n] = acc[r];
        }
        __threadfence();
        __syncthreads();
        const unsigned t = blockIdx.y * gridDim.x + blockIdx.x;
        if (tid == 0) last = atomicAdd(&counters[t], 1u) == gridDim.z - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
        for (int r = 0; r < 4; r++) {
            int m = m0 + ty + 8 * r;
            float s = 0.f;
            if (m < M && n < N)
                for (int z = 0; z < (int)gridDim.z; z++) s += ((volatile float *)ws)[((long long)z * M + m) * N + n];
            acc[r] = s;
        }
        if (tid == 0) counters[t] = 0;   /* ready for the next launch */
    }
    for (int r = 0; r < 4; r++) {
        int m = m0 + ty + 8 * r;
        if (m >= M || n >= N) continue;
        float v = acc[r] + (has_bias ? bias[n] : 0.f);
        C[(long long)m * N + n] = relu ? fmaxf(v, 0.f) : v;
    }
}
