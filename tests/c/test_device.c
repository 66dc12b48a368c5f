/* The device runtime of include/cudakit_device.h and cudakit_module.h,
 * through the public API only, on the CPU: streams, events and host times,
 * memory figures, pinned memory, the one error for an unusable GPU, and a
 * user module compiled, inspected and launched (skipped without a C++
 * compiler).  A GPU, when one is usable, gets the stream and event part. */
#define _GNU_SOURCE
#include "ck_test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void streams_and_events(ck_device dev)
{
    ck_stream s;
    ck_event e0, e1;
    OK(ck_stream_create(dev, 1, 0, &s));
    CHECK(s != NULL, "a created stream has a handle");
    OK(ck_event_create(dev, 1, &e0));
    OK(ck_event_create(dev, 1, &e1));
    CHECK(ck_stream_current(dev) == NULL, "the default stream is current at first");
    ck_stream_set_current(dev, s);
    CHECK(ck_stream_current(dev) == s, "set_current");
    OK(ck_event_record(dev, e0, s));
    ck_array a, b;
    OK(ck_arange(&a, 0, 1, 1 << 16, CK_FLOAT32, dev));
    OK(ck_ufunc_call2(CK_OP_ADD, &a, &a, &b));
    if (dev.type == CK_DEVICE_CPU) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    OK(ck_event_record(dev, e1, s));
    OK(ck_event_synchronize(dev, e1));
    int done = 0;
    OK(ck_event_query(dev, e1, &done));
    CHECK(done, "a synchronised event is done");
    OK(ck_stream_query(dev, s, &done));
    CHECK(done, "a synchronised stream is idle");
    float ms = -1;
    OK(ck_event_elapsed_ms(dev, e0, e1, &ms));
    CHECK(ms >= (dev.type == CK_DEVICE_CPU ? 4.0f : 0.0f), "elapsed %g ms", (double)ms);
    ck_stream other;
    OK(ck_stream_create(dev, 1, 0, &other));
    OK(ck_stream_wait_event(dev, other, e1));
    OK(ck_stream_synchronize(dev, other));
    int least = 1, greatest = 1;
    OK(ck_stream_priority_range(dev, &least, &greatest));
    CHECK(greatest <= least, "priorities %d .. %d", least, greatest);
    ck_stream_set_current(dev, NULL);
    OK(ck_device_synchronize(dev));
    ck_event untimed;
    OK(ck_event_create(dev, 0, &untimed));
    OK(ck_event_record(dev, untimed, NULL));
    CHECK(ck_event_elapsed_ms(dev, untimed, e1, &ms) != CK_OK, "an event without timing has no time");
    ck_error_clear();
    OK(ck_event_destroy(dev, untimed));
    OK(ck_event_destroy(dev, e0));
    OK(ck_event_destroy(dev, e1));
    OK(ck_stream_destroy(dev, other));
    OK(ck_stream_destroy(dev, s));
    ck_array_release(&a);
    ck_array_release(&b);
}

static void memory_figures(ck_device dev)
{
    ck_mem_stats st0, st1, st2;
    OK(ck_memory_empty_cache(dev));
    OK(ck_memory_stats(dev, &st0));
    ck_array a;
    int64_t n = 3 << 20;
    OK(ck_array_empty(&a, 1, &n, CK_UINT8, dev));
    OK(ck_memory_stats(dev, &st1));
    CHECK(st1.allocated >= st0.allocated + (size_t)n, "allocated %zu after %zu", st1.allocated, st0.allocated);
    CHECK(st1.n_alloc > st0.n_alloc, "one more allocation");
    CHECK(st1.peak_allocated >= st1.allocated, "peak");
    ck_array_release(&a);
    OK(ck_memory_stats(dev, &st2));
    CHECK(st2.allocated == st0.allocated, "allocated back to %zu, is %zu", st0.allocated, st2.allocated);
    /* the limit caps what the allocator holds: with its cache given back,
     * a new block past it fails */
    OK(ck_memory_empty_cache(dev));
    OK(ck_memory_stats(dev, &st2));
    OK(ck_memory_set_limit(dev, st2.reserved + (1 << 20)));
    CHECK(ck_array_empty(&a, 1, &n, CK_UINT8, dev) != CK_OK, "past the limit an allocation fails");
    CHECK(strstr(ck_error_message(), "limit") != NULL, "the message names the limit: %s", ck_error_message());
    ck_error_clear();
    OK(ck_memory_set_limit(dev, 0));
    OK(ck_memory_reset_peak(dev));
    ck_device_props p;
    OK(ck_device_properties(dev, &p));
    CHECK(p.multi_processor_count >= 1 && p.warp_size == 32 && p.total_memory > 0, "properties");
    size_t fr = 0, tot = 0;
    OK(ck_device_mem_info(dev, &fr, &tot));
    CHECK(tot > 0 && fr <= tot, "mem_info %zu of %zu", fr, tot);
}

static void pinned(void)
{
    ck_array a;
    int64_t shape[2] = {100, 7};
    OK(ck_pinned_empty(&a, 2, shape, CK_FLOAT64));
    CHECK(ck_array_device(&a).type == CK_DEVICE_CPU && a.size == 700 && (a.flags & CK_ARRAY_C_CONTIGUOUS),
          "pinned memory is a C-contiguous CPU array");
    ((double *)a.data)[699] = 1.5;
    ck_array_release(&a);
    int64_t bad[1] = {-2};
    CHECK(ck_pinned_empty(&a, 1, bad, CK_FLOAT32) == CK_ERR_VALUE, "a negative dimension");
    ck_error_clear();
}

static void one_error_for_no_gpu(void)
{
    if (ck_device_count(CK_DEVICE_CUDA) > 0) return;
    ck_device gpu = {CK_DEVICE_CUDA, 0};
    CHECK(ck_device_check(gpu) == CK_ERR_DEVICE, "no GPU: CK_ERR_DEVICE");
    char want[600];
    snprintf(want, sizeof want, "no usable CUDA device: %s", ck_device_unavailable_reason());
    CHECK(!strcmp(ck_error_message(), want), "'%s' is '%s'", ck_error_message(), want);
    ck_array a;
    int64_t n = 4;
    CHECK(ck_array_empty(&a, 1, &n, CK_FLOAT32, gpu) == CK_ERR_DEVICE && !strcmp(ck_error_message(), want),
          "an array on it: the same error, got '%s'", ck_error_message());
    ck_stream s;
    CHECK(ck_stream_create(gpu, 1, 0, &s) == CK_ERR_DEVICE && !strcmp(ck_error_message(), want),
          "a stream on it: the same error");
    ck_error_clear();
}

static const char *k_src =
    "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] *= a;\n"
    "}\n"
    "__device__ int counter = 41;\n"
    "extern \"C\" __global__ void bump() { atomicAdd(&counter, 1); }\n";

static void module_on_cpu(void)
{
    ck_device cpu = ck_device_cpu();
    ck_module *m = NULL;
    if (ck_module_load(cpu, k_src, "t.cu", NULL, 0, NULL, 0, &m) != CK_OK) {
        fprintf(stderr, "skipping the module part: %s\n", ck_error_message());
        ck_error_clear();
        return;
    }
    CHECK(ck_device_equal(ck_module_device(m), cpu), "the module's device");
    ck_function *f = NULL, *again = NULL, *bump = NULL;
    OK(ck_module_get_function(m, "scale", &f));
    OK(ck_module_get_function(m, "scale", &again));
    CHECK(f == again, "one function object per name");
    CHECK(!strcmp(ck_function_name(f), "scale"), "its name");
    size_t sizes[4];
    CHECK(ck_function_params(f, sizes, 4) == 3 && sizes[0] == sizeof(void *) && sizes[1] == 4 && sizes[2] == 4,
          "parameters known on the CPU");
    ck_function_attrs at;
    OK(ck_function_attributes(f, &at));
    CHECK(at.max_threads_per_block == 1024 && at.max_dynamic_shared_size_bytes == 48 * 1024, "attributes");
    CHECK(ck_module_get_function(m, "nope", &again) == CK_ERR_VALUE, "an unknown kernel");
    ck_error_clear();

    ck_array x;
    int64_t n = 1000;
    OK(ck_full_scalar(&x, 1, &n, CK_FLOAT32, 2.0, cpu));
    void *ptr = x.data;
    float a = 3.0f;
    int ni = (int)n;
    void *params[3] = {&ptr, &a, &ni};
    unsigned grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
    OK(ck_function_launch(f, grid, block, 0, NULL, 3, params, NULL));
    CHECK(((float *)x.data)[0] == 6.0f && ((float *)x.data)[999] == 6.0f, "the kernel ran");
    CHECK(ck_function_launch(f, grid, block, 0, NULL, 2, params, NULL) == CK_ERR_TYPE, "a wrong parameter count");
    ck_error_clear();
    unsigned zero[3] = {0, 1, 1};
    CHECK(ck_function_launch(f, zero, block, 0, NULL, 3, params, NULL) == CK_ERR_VALUE &&
              strstr(ck_error_message(), "zero dimension"),
          "a zero grid: %s", ck_error_message());
    unsigned big[3] = {2048, 1, 1};
    CHECK(ck_function_launch(f, grid, big, 0, NULL, 3, params, NULL) == CK_ERR_VALUE, "too many threads");
    CHECK(ck_function_launch(f, grid, block, 64 * 1024, NULL, 3, params, NULL) == CK_ERR_VALUE, "too much shared");
    OK(ck_function_set_max_dynamic_shared(f, 64 * 1024));
    OK(ck_function_launch(f, grid, block, 64 * 1024, NULL, 3, params, NULL));
    CHECK(ck_function_set_max_dynamic_shared(f, -1) == CK_ERR_VALUE, "a negative limit");
    ck_error_clear();
    int mg = 0, bs = 0;
    OK(ck_function_suggest_block(f, 0, 0, &mg, &bs));
    CHECK(mg >= 1 && bs >= 1 && bs <= 1024, "suggested block %d, grid %d", bs, mg);

    /* a cooperative launch: bounded on the CPU, said with the limit */
    int coop = 0;
    OK(ck_function_max_cooperative_blocks(f, block, 0, &coop));
    CHECK(coop >= 1, "cooperative blocks %d", coop);
    OK(ck_function_launch_ex(f, grid, block, 0, NULL, CK_LAUNCH_COOPERATIVE, 3, params, NULL));
    unsigned wide[3] = {(unsigned)coop + 1, 1, 1};
    char limit[32];
    snprintf(limit, sizeof limit, "the %d blocks", coop);
    CHECK(ck_function_launch_ex(f, wide, block, 0, NULL, CK_LAUNCH_COOPERATIVE, 3, params, NULL) == CK_ERR_VALUE &&
              strstr(ck_error_message(), limit),
          "a cooperative grid too large: %s", ck_error_message());
    CHECK(ck_function_launch_ex(f, grid, block, 0, NULL, 0x80u, 3, params, NULL) == CK_ERR_VALUE, "unknown flags");
    ck_error_clear();

    /* bounds mode: the argument's memory is known to the launch */
    int was = ck_kernel_bounds_mode();
    ck_kernel_set_bounds_mode(1);
    ck_launch_arg info[3] = {{1, x.buf->ptr, x.buf->nbytes, NULL, 0, 4}, {0, NULL, 0, NULL, 0, 0}, {0, NULL, 0, NULL, 0, 0}};
    int too_many = (int)n + 100;
    void *bad[3] = {&ptr, &a, &too_many};
    CHECK(ck_function_launch(f, grid, block, 0, NULL, 3, bad, info) == CK_ERR_INDEX, "bounds mode: %s",
          ck_error_message());
    ck_error_clear();
    ck_kernel_set_bounds_mode(was);

    void *g = NULL;
    size_t gb = 0;
    OK(ck_module_get_global(m, "counter", &g, &gb));
    CHECK(gb == sizeof(int) && *(int *)g == 41, "a __device__ global");
    OK(ck_module_get_function(m, "bump", &bump));
    unsigned one[3] = {1, 1, 1};
    OK(ck_function_launch(bump, one, one, 0, NULL, 0, NULL, NULL));
    CHECK(*(int *)g == 42, "the kernel changed the global");
    ck_array_release(&x);
    ck_module_free(m);
}

int main(void)
{
    ck_device cpu = ck_device_cpu();
    CHECK(ck_device_count(CK_DEVICE_CPU) == 1, "one CPU");
    OK(ck_device_check(cpu));
    ck_device cpu1 = {CK_DEVICE_CPU, 1};
    CHECK(ck_device_check(cpu1) == CK_ERR_VALUE, "cpu:1 does not exist");
    ck_error_clear();
    char b[16];
    ck_device_str(cpu, b, sizeof b);
    CHECK(!strcmp(b, "cpu"), "device name %s", b);
    CHECK(ck_device_current(CK_DEVICE_CPU).index == 0, "the CPU's current device");
    streams_and_events(cpu);
    memory_figures(cpu);
    pinned();
    one_error_for_no_gpu();
    module_on_cpu();
    if (ck_device_count(CK_DEVICE_CUDA) > 0) {
        ck_device gpu = {CK_DEVICE_CUDA, 0};
        streams_and_events(gpu);
        memory_figures(gpu);
    }
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
