// The seed MLP's five products (batch 64, 784 -> 128 -> 10) in one CUDA
// graph, each followed by a small element-wise kernel, as in a training
// step.  The products are done three ways:
//   1. cuBLAS sgemm (each node an ordinary launch);
//   2. a tiled kernel of our own, ordinary launches;
//   3. the same kernel with programmatic dependent launch (PDL).
// In every case the element-wise kernels use PDL, as cudakit's do.  In 2
// and 3 the kernel is run with split-K 1 and with a split for each shape;
// a split-K sum is added in a fixed order by each tile's last block.
// Prints us a step (graph replays, best of 7) and the largest difference
// of the products from cuBLAS's.  Issue 16's question: would cudakit's
// own small GEMMs, as dependent launches, pay against cuBLAS nodes?
//
//   nvcc -arch=sm_90 -O2 -o build/probe_small_gemm bench/probe_small_gemm.cu -lcublas && build/probe_small_gemm
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_runtime.h>
#include <cublas_v2.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { printf("%s: %d (line %d)\n", #x, (int)e_, __LINE__); exit(1); } } while (0)

#include "probe_small_gemm.cuh"   // the kernel, shared with probe_small_gemm.py

// y = x * 0.5 + 1 over n elements: the small kernel between two products
__global__ void ew(float *y, const float *x, int n)
{
    asm volatile("griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.f;
}

struct Prod {
    const char *name;
    int M, N, K;
    const float *A, *B;
    long long sam, sak, sbk, sbn;
    float *C, *ws;
    unsigned *counters;
    int split;
};

static void launch_ex(const void *f, dim3 g, dim3 b, cudaStream_t s, int pdl, void **args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = g;
    cfg.blockDim = b;
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelExC(&cfg, f, args));
}

static void ours(Prod &p, cudaStream_t s, int pdl, int split)
{
    int kchunk = (p.K + split - 1) / split;
    kchunk = (kchunk + TK - 1) / TK * TK;
    int z = (p.K + kchunk - 1) / kchunk;
    dim3 g((p.N + TN - 1) / TN, (p.M + TM - 1) / TM, z);
    const float *no_bias = nullptr;
    int zero = 0;
    void *args[] = {&p.A, &p.B, &p.C, &no_bias, &zero, &zero, &p.M, &p.N, &p.K, &p.sam, &p.sak, &p.sbk, &p.sbn,
                    &kchunk, &p.ws, &p.counters, &pdl};
    launch_ex((const void *)sgemm_small, g, dim3(256), s, pdl, args);
}

// Row-major C[M,N] = A B as column-major C^T = B^T A^T.
static void theirs(cublasHandle_t h, Prod &p)
{
    const float one = 1.f, zero = 0.f;
    cublasOperation_t oa = p.sbn == 1 ? CUBLAS_OP_N : CUBLAS_OP_T;
    int lda = (int)(p.sbn == 1 ? p.sbk : p.sbn);
    cublasOperation_t ob = p.sak == 1 ? CUBLAS_OP_N : CUBLAS_OP_T;
    int ldb = (int)(p.sak == 1 ? p.sam : p.sak);
    CB(cublasSgemm(h, oa, ob, p.N, p.M, p.K, &one, p.B, lda, p.A, ldb, &zero, p.C, p.N));
}

int main()
{
    const int B_ = 64, DI = 784, DH = 128, DO = 10;
    auto dev = [](size_t n) { float *p; CK(cudaMalloc(&p, n * 4)); return p; };
    std::vector<float> hx(B_ * DI), hw1(DH * DI), hw2(DO * DH), hdy(B_ * DO), hdh(B_ * DH), hh(B_ * DH);
    srand(1);
    for (auto *v : {&hx, &hw1, &hw2, &hdy, &hdh, &hh})
        for (auto &e : *v) e = (float)rand() / RAND_MAX - 0.5f;
    float *x = dev(hx.size()), *w1 = dev(hw1.size()), *w2 = dev(hw2.size()), *dy = dev(hdy.size()), *dh = dev(hdh.size()),
          *h = dev(hh.size());
    CK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w1, hw1.data(), hw1.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(w2, hw2.data(), hw2.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, hdy.data(), hdy.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dh, hdh.data(), hdh.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(h, hh.data(), hh.size() * 4, cudaMemcpyHostToDevice));
    //                name            M   N    K   A   B   sam sak sbk sbn   split for each shape
    Prod ps[5] = {{"X W1^T", B_, DH, DI, x, w1, DI, 1, 1, DI, 0, 0, 0, 6},
                  {"H W2^T", B_, DO, DH, h, w2, DH, 1, 1, DH, 0, 0, 0, 2},
                  {"dY W2", B_, DH, DO, dy, w2, DO, 1, DH, 1, 0, 0, 0, 1},
                  {"dY^T H", DO, DH, B_, dy, h, 1, DO, DH, 1, 0, 0, 0, 2},
                  {"dH^T X", DH, DI, B_, dh, x, 1, DH, DI, 1, 0, 0, 0, 1}};
    float *ref[5], *tmp = dev((size_t)DH * DI);   // the largest product, dH^T X
    for (auto &p : ps) {
        p.C = dev((size_t)p.M * p.N);
        p.ws = dev((size_t)8 * p.M * p.N);
        CK(cudaMalloc(&p.counters, 4096));
        CK(cudaMemset(p.counters, 0, 4096));
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t hb;
    CB(cublasCreate(&hb));
    CB(cublasSetStream(hb, s));
    for (int i = 0; i < 5; i++) {
        theirs(hb, ps[i]);
        ref[i] = dev((size_t)ps[i].M * ps[i].N);
        CK(cudaMemcpyAsync(ref[i], ps[i].C, (size_t)ps[i].M * ps[i].N * 4, cudaMemcpyDeviceToDevice, s));
    }
    CK(cudaStreamSynchronize(s));
    // variant: 0 cuBLAS, 1 ours plain, 2 ours PDL; split: 0 one, 1 the shape's
    const char *names[] = {"cuBLAS sgemm", "ours, ordinary launches", "ours, PDL"};
    for (int var = 0; var < 3; var++) {
        for (int sp = 0; sp < (var ? 2 : 1); sp++) {
            cudaGraph_t g;
            cudaGraphExec_t ge;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
            for (int i = 0; i < 5; i++) {
                if (var == 0) theirs(hb, ps[i]);
                else ours(ps[i], s, var == 2, sp ? ps[i].split : 1);
                int n = ps[i].M * ps[i].N;
                void *args[] = {&tmp, &ps[i].C, &n};
                launch_ex((const void *)ew, dim3((n + 255) / 256), dim3(256), s, 1, args);
            }
            CK(cudaStreamEndCapture(s, &g));
            CK(cudaGraphInstantiate(&ge, g, 0));
            CK(cudaGraphLaunch(ge, s));
            CK(cudaStreamSynchronize(s));
            float maxd = 0.f;
            for (int i = 0; i < 5 && var; i++) {
                size_t n = (size_t)ps[i].M * ps[i].N;
                std::vector<float> a(n), b(n);
                CK(cudaMemcpy(a.data(), ps[i].C, n * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(b.data(), ref[i], n * 4, cudaMemcpyDeviceToHost));
                for (size_t j = 0; j < n; j++) maxd = fmaxf(maxd, fabsf(a[j] - b[j]) / (fabsf(b[j]) + 1e-3f));
            }
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            float best = 1e30f;
            const int reps = 2000;
            for (int t = 0; t < 7; t++) {
                CK(cudaEventRecord(e0, s));
                for (int r = 0; r < reps; r++) CK(cudaGraphLaunch(ge, s));
                CK(cudaEventRecord(e1, s));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                best = fminf(best, ms * 1e3f / reps);
            }
            printf("%-26s split-K %-12s %7.2f us a step (5 products + 5 element-wise nodes)", names[var],
                   var ? (sp ? "per shape" : "1") : "-", best);
            if (var) printf(", largest relative difference from cuBLAS %.2e", maxd);
            printf("\n");
            CK(cudaGraphExecDestroy(ge));
            CK(cudaGraphDestroy(g));
        }
    }
    return 0;
}
