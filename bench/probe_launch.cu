// The driver's floor for one kernel launch on this machine, for comparison
// with cudakit's per-call figures (bench/bench_gpu.py, bench_gpu_kernels.py):
// the same tiny kernel (4 blocks of 256 threads, two pointers and an int)
// launched 20,000 times back to back from C, through the runtime
// (<<<>>>, what PyTorch does) and through the driver's cuLaunchKernel (what
// cudakit does), best of 5.
//
//   nvcc -O2 -o /tmp/probe_launch bench/probe_launch.cu -lcuda && /tmp/probe_launch
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

extern "C" __global__ void twice(float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = b[i] * 2;
}

/* holds the GPU for about ns nanoseconds, so launches behind it only queue */
extern "C" __global__ void hold(unsigned long long ns)
{
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (;;) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > ns) break;
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(x) do { int e_ = (int)(x); if (e_) { printf("%s failed: %d\n", #x, e_); return 1; } } while (0)

int main(void)
{
    const int n = 1000, calls = 20000;
    float *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CUfunction f;
    CHECK(cudaGetFuncBySymbol((cudaFunction_t *)&f, (const void *)twice));
    int nn = n;
    void *args[] = {&a, &b, &nn};
    double best_rt = 1e9, best_drv = 1e9;
    for (int rep = 0; rep < 6; rep++) {
        double t0 = now();
        for (int i = 0; i < calls; i++) twice<<<4, 256>>>(a, b, n);
        CHECK(cudaDeviceSynchronize());
        double t1 = now();
        for (int i = 0; i < calls; i++) CHECK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
        CHECK(cudaDeviceSynchronize());
        double t2 = now();
        if (rep) {   /* the first round warms up */
            if ((t1 - t0) / calls < best_rt) best_rt = (t1 - t0) / calls;
            if ((t2 - t1) / calls < best_drv) best_drv = (t2 - t1) / calls;
        }
    }
    CHECK(cudaGetLastError());
    /* What the two costs are: the host's, enqueueing launches behind a
     * kernel that holds the GPU (they only queue), and the GPU's, running
     * tiny kernels back to back (events around many of them), for 4 blocks
     * and for 1. */
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int blocks = 4; blocks >= 1; blocks -= 3) {
        double best_host = 1e9;
        float best_gpu = 1e9f;
        const int queued = 500;
        for (int rep = 0; rep < 6; rep++) {
            hold<<<1, 1>>>(20000000ull);   /* 20 ms: the launches below queue behind it */
            CHECK(cudaEventRecord(e0, 0));
            double t0 = now();
            for (int i = 0; i < queued; i++) CHECK(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
            double t1 = now();
            CHECK(cudaEventRecord(e1, 0));
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep && (t1 - t0) / queued < best_host) best_host = (t1 - t0) / queued;
            if (rep && ms / queued < best_gpu) best_gpu = ms / queued;
        }
        printf("%d block(s) of 256: host enqueue %.2f us per launch (GPU held), GPU %.2f us per kernel back to back\n",
               blocks, best_host * 1e6, best_gpu * 1e3);
    }
    CHECK(cudaGetLastError());
    printf("launch floor, 4x256 threads, 2 pointers + int: runtime <<<>>> %.2f us, cuLaunchKernel %.2f us per call\n",
           best_rt * 1e6, best_drv * 1e6);
    return 0;
}
