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
    printf("launch floor, 4x256 threads, 2 pointers + int: runtime <<<>>> %.2f us, cuLaunchKernel %.2f us per call\n",
           best_rt * 1e6, best_drv * 1e6);
    return 0;
}
