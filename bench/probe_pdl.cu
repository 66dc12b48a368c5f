// Graph replay of 20 tiny dependent kernels: plain launches vs programmatic
// dependent launch (PDL), with and without an early trigger.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); return 1; } } while (0)

__global__ void k_plain(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 0.5f; }
__global__ void k_wait(float *x, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 0.5f; }
__global__ void k_trig(float *x, int n) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 0.5f;
  asm volatile("griddepcontrol.launch_dependents;"); }
__global__ void k_trig0(float *x, int n) {
  asm volatile("griddepcontrol.launch_dependents;");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.0001f + 0.5f; }

typedef void (*kfn)(float *, int);
static int launch(kfn f, int pdl, cudaStream_t s, float *x, int n) {
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3((n + 255) / 256); cfg.blockDim = dim3(256); cfg.stream = s;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, f, x, n) != cudaSuccess;
}
int main() {
  int n = 1000, nops = 20, reps = 2000;
  float *x; CK(cudaMalloc(&x, n * 4)); CK(cudaMemset(x, 0, n * 4));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  struct { const char *name; kfn f; int pdl; } v[] = {{"plain", k_plain, 0}, {"wait+pdl", k_wait, 1}, {"wait+trigger-end+pdl", k_trig, 1}, {"trigger-start+wait+pdl", k_trig0, 1}, {"wait, no pdl", k_wait, 0}};
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (auto &c : v) {
    // eager
    for (int w = 0; w < 200; w++) launch(c.f, c.pdl, s, x, n);
    CK(cudaStreamSynchronize(s));
    CK(cudaEventRecord(a, s));
    for (int r = 0; r < reps; r++) for (int k = 0; k < nops; k++) if (launch(c.f, c.pdl, s, x, n)) { printf("launch failed\n"); return 1; }
    CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
    float me; CK(cudaEventElapsedTime(&me, a, b));
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < nops; k++) launch(c.f, c.pdl, s, x, n);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    for (int w = 0; w < 50; w++) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaEventRecord(a, s));
    for (int r = 0; r < reps; r++) CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
    float mg; CK(cudaEventElapsedTime(&mg, a, b));
    printf("%-26s eager %.3f us/op   graph replay %.3f us/op\n", c.name, me * 1e3 / (reps * nops), mg * 1e3 / (reps * nops));
    cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  }
  return 0;
}
