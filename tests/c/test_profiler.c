/* The profiler (include/cudakit_profiler.h) on the CPU: records of ops and
 * ranges with their parents, shapes and host times, the averages and the
 * Chrome trace; the launch hooks of src/platform over a fake driver (the
 * names of the last launches in a sticky fault's message, kernel records
 * while profiling); and the sync debug mode's reports. */
#define _GNU_SOURCE
#include "ck_test.h"
#include "cudakit_profiler.h"
#include "../../src/runtime/profiler.h"
#include "../../src/platform/cuda_api.h"

#include <string.h>
#include <unistd.h>

static const ck_prof_record *find(const char *name, int nth)
{
    for (int64_t i = 0; i < ck_profiler_count(); i++) {
        const ck_prof_record *r = ck_profiler_record(i);
        if (!strcmp(r->name, name) && nth-- == 0) return r;
    }
    return NULL;
}

static void records_on_the_cpu(void)
{
    ck_device cpu = ck_device_cpu();
    ck_array a, b, c;
    OK(ck_arange(&a, 0, 1, 1000, CK_FLOAT32, cpu));
    OK(ck_profiler_start(0));
    CHECK(ck_profiler_enabled(), "on after start");
    CHECK(ck_profiler_start(0) == CK_ERR_RUNTIME, "profiles do not nest");
    OK(ck_profiler_range_push("step"));
    OK(ck_ufunc_call2(CK_OP_ADD, &a, &a, &b));
    OK(ck_reduce(CK_REDUCE_SUM, &a, 1, 0, CK_DTYPE_INVALID, &c, 0));
    OK(ck_profiler_range_pop());
    CHECK(ck_profiler_range_pop() == CK_ERR_RUNTIME, "a pop without a push");
    ck_error_clear();
    CHECK(ck_profiler_count() == 0 && ck_profiler_record(0) == NULL, "records are read after stop");
    OK(ck_profiler_stop());
    CHECK(!ck_profiler_enabled(), "off after stop");
    CHECK(ck_profiler_stop() == CK_ERR_RUNTIME, "stop without a profile");
    ck_error_clear();

    const ck_prof_record *step = find("step", 0), *add = find("add", 0), *sum = find("sum", 0);
    CHECK(step && add && sum, "step, add and sum are recorded (%lld records)", (long long)ck_profiler_count());
    if (step && add && sum) {
        CHECK(step->kind == CK_PROF_RANGE && add->kind == CK_PROF_OP, "kinds");
        CHECK(step->parent == -1 && add->parent == 0 && sum->parent == 0, "the ops are the range's children");
        CHECK(add->depth == 1, "depth %d", add->depth);
        CHECK(!strcmp(add->shapes, "[[1000], [1000], [1000]]"), "add's shapes: %s", add->shapes);
        CHECK(!strcmp(add->dtypes, "float32, float32, float32"), "add's dtypes: %s", add->dtypes);
        CHECK(!strcmp(sum->shapes, "[[1000], []]"), "sum's shapes: %s", sum->shapes);
        CHECK(add->dev.type == CK_DEVICE_CPU && add->dev_us < 0, "the CPU has host times only");
        CHECK(step->host_start_ns <= add->host_start_ns && add->host_end_ns <= sum->host_start_ns &&
              sum->host_end_ns <= step->host_end_ns, "host times nest and follow each other");
    }
    ck_prof_average *avg;
    int64_t n;
    OK(ck_profiler_averages(0, &avg, &n));
    int found = 0;
    for (int64_t i = 0; i < n; i++)
        if (!strcmp(avg[i].name, "step")) {
            found = 1;
            CHECK(avg[i].count == 1, "one step");
            CHECK(avg[i].host_self_us < avg[i].host_total_us, "a range's self time leaves out its ops'");
        }
    CHECK(found, "step is averaged");
    free(avg);

    char path[] = "/tmp/ck_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "a temporary file");
    if (fd >= 0) {
        close(fd);
        OK(ck_profiler_export_chrome_trace(path));
        FILE *f = fopen(path, "r");
        char buf[8192] = {0};
        size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        CHECK(got > 0 && strstr(buf, "\"traceEvents\"") && strstr(buf, "\"name\": \"add\"") &&
              strstr(buf, "\"Input Dims\": \"[[1000], [1000], [1000]]\""), "the trace has the records:\n%s", buf);
        remove(path);
    }
    CHECK(ck_profiler_export_chrome_trace("/nonexistent-dir/x.json") == CK_ERR_VALUE, "an unwritable path");
    ck_error_clear();
    ck_profiler_clear();
    CHECK(ck_profiler_count() == 0, "clear drops the records");

    /* off, an op records nothing */
    ck_array d;
    OK(ck_ufunc_call2(CK_OP_ADD, &a, &a, &d));
    CHECK(ck_profiler_count() == 0, "nothing recorded with the profiler off");
    ck_array_release(&a); ck_array_release(&b); ck_array_release(&c); ck_array_release(&d);
}

/* ------------------------------------------------------- fake driver */

static int fake_launches_;

static CUresult fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)s; (void)params;
    (void)extra;
    fake_launches_++;
    return CUDA_SUCCESS;
}

static unsigned fake_ex_gy_;
static CUresult fake_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)f; (void)params; (void)extra;
    fake_ex_gy_ = c->gridDimY;
    fake_launches_++;
    return CUDA_SUCCESS;
}

static CUresult fake_getfn(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    *f = (CUfunction)(uintptr_t)(0x1000 + 16 * (uintptr_t)strlen(name));
    return CUDA_SUCCESS;
}

static void launch_hooks(void)
{
    ck_cu.cuLaunchKernel = fake_launch;
    ck_cu.cuLaunchKernelEx = fake_launch_ex;
    ck_cu.cuModuleGetFunction = fake_getfn;
    ck_cu_install_launch_hooks();
    ck_cu_install_launch_hooks();   /* twice: the hooks do not wrap themselves */
    CUfunction k1, k2, k3;
    ck_cu.cuModuleGetFunction(&k1, NULL, "first_kernel");
    ck_cu.cuModuleGetFunction(&k2, NULL, "the_second_kernel");
    ck_cu.cuModuleGetFunction(&k3, NULL, "_Z5cubeIfEvPT_");
    ck_cu_note_function(k3, "cube<float>");   /* a user kernel as the user spelled it */
    CHECK(ck_cu_function_name(k1) && !strcmp(ck_cu_function_name(k1), "first_kernel"), "names from GetFunction");
    CHECK(!strcmp(ck_cu_function_name(k3), "cube<float>"), "a noted name replaces the lowered one");
    CHECK(ck_cu_function_name((CUfunction)(uintptr_t)0x7) == NULL, "an unknown function has no name");

    char msg[1024];
    CUstream s1 = (CUstream)(uintptr_t)0xabc000;
    ck_cu.cuLaunchKernel(k1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    ck_cu.cuLaunchKernel(k3, 7, 1, 1, 128, 1, 1, 0, s1, NULL, NULL);
    ck_cu.cuLaunchKernel(k2, 2, 3, 1, 64, 2, 1, 0, NULL, NULL, NULL);
    CHECK(fake_launches_ == 3, "the hook calls the driver (%d)", fake_launches_);
    ck_cu_describe_launches(msg, sizeof msg);
    CHECK(strstr(msg, "on the default stream: 'the_second_kernel' grid (2, 3, 1) block (64, 2, 1), before it "
                      "'first_kernel'") != NULL, "the default stream's last launches, latest first: %s", msg);
    CHECK(strstr(msg, "on stream 0xabc000: 'cube<float>' grid (7, 1, 1)") != NULL, "the other stream's: %s", msg);
    CHECK(strstr(msg, "default stream") < strstr(msg, "0xabc000"), "the stream launched on last comes first: %s", msg);
    ck_cu_fail(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize", __func__, __FILE__, __LINE__);
    CHECK(strstr(ck_error_message(), "sticky") && strstr(ck_error_message(), "'the_second_kernel'"),
          "a sticky fault names the kernels in flight: %s", ck_error_message());
    ck_error_clear();
    for (int i = 0; i < 20; i++) ck_cu.cuLaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    ck_cu_describe_launches(msg, sizeof msg);
    CHECK(strlen(msg) < sizeof msg - 1, "the description fits");
    /* a programmatic dependent launch (cuLaunchKernelEx) is remembered as well */
    {
        CUlaunchAttribute at = {CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, {0}, {.programmatic_stream_serialization = 1}};
        CUlaunchConfig cfg = {9, 2, 1, 128, 1, 1, 0, s1, &at, 1};
        int before = fake_launches_;
        ck_cu.cuLaunchKernelEx(&cfg, k3, NULL, NULL);
        CHECK(fake_launches_ == before + 1 && fake_ex_gy_ == 2, "the Ex hook calls the driver with the config");
        ck_cu_describe_launches(msg, sizeof msg);
        CHECK(strstr(msg, "on stream 0xabc000: 'cube<float>' grid (9, 2, 1) block (128, 1, 1)") != NULL,
              "an Ex launch is remembered: %s", msg);
    }

    /* while profiling, a built-in launch is a kernel record under its op */
    OK(ck_profiler_start(0));
    ck_device gpu = {CK_DEVICE_CUDA, 0};
    ck_prof_slot *op = ck_prof_open(CK_PROF_OP, "an_op", gpu);
    ck_cu.cuLaunchKernel(k2, 5, 1, 1, 256, 1, 1, 64, s1, NULL, NULL);
    ck_prof_close(op);
    ck_error_clear();   /* the fake driver's stubs (no context) said why there is no device time */
    {   /* a cuLaunchKernelEx launch is observed as well */
        CUlaunchConfig cfg = {3, 1, 1, 32, 1, 1, 0, s1, NULL, 0};
        op = ck_prof_open(CK_PROF_OP, "an_ex_op", gpu);
        ck_cu.cuLaunchKernelEx(&cfg, k1, NULL, NULL);
        ck_prof_close(op);
        ck_error_clear();
    }
    OK(ck_profiler_stop());
    const ck_prof_record *r = find("the_second_kernel", 0);
    CHECK(r && r->kind == CK_PROF_KERNEL && r->parent == 0, "a kernel record under the op");
    if (r) {
        CHECK(r->grid[0] == 5 && r->block[0] == 256 && r->shared_mem == 64, "grid, block and shared memory");
        CHECK(r->stream == (uint64_t)(uintptr_t)s1 && r->dev.type == CK_DEVICE_CUDA, "stream and device");
        CHECK(r->dev_us < 0, "no device time without a driver");
    }
    ck_cu.cuLaunchKernel(k2, 5, 1, 1, 256, 1, 1, 64, s1, NULL, NULL);
    {
        const ck_prof_record *e = find("first_kernel", 0);
        CHECK(e && e->kind == CK_PROF_KERNEL && e->grid[0] == 3 && e->block[0] == 32, "the Ex launch's kernel record");
    }
    CHECK(ck_profiler_count() == 4, "off, launches are not recorded");
    ck_profiler_clear();
}

/* ---------------------------------------------------- sync debug mode */

static char warned_[512];
static int warn_result_;

static int capture_warning(const char *m)
{
    snprintf(warned_, sizeof warned_, "%s", m);
    return warn_result_;
}

static void sync_debug(void)
{
    ck_device gpu = {CK_DEVICE_CUDA, 0}, cpu = ck_device_cpu();
    CHECK(ck_sync_debug_mode() == CK_SYNC_DEFAULT, "off by default");
    CHECK(ck_sync_point(gpu, "a copy to the host") == CK_OK, "off: nothing");
    ck_sync_set_debug_mode(CK_SYNC_ERROR);
    CHECK(ck_sync_point(cpu, "a copy to the host") == CK_OK, "the CPU never waits");
    ck_obs_op_push("nonzero");
    CHECK(ck_sync_point(gpu, "a copy to the host") == CK_ERR_RUNTIME, "error mode");
    CHECK(strstr(ck_error_message(), "synchronizing") && strstr(ck_error_message(), "a copy to the host (in nonzero)"),
          "names the reason and the op: %s", ck_error_message());
    ck_obs_op_pop();
    ck_error_clear();
    ck_sync_set_warn_handler(capture_warning);
    ck_sync_set_debug_mode(CK_SYNC_WARN);
    CHECK(ck_sync_point(gpu, "the number of true elements") == CK_OK && strstr(warned_, "the number of true elements"),
          "warn mode warns: %s", warned_);
    warned_[0] = 0;
    CHECK(ck_sync_span_begin(gpu, "a span") == CK_OK && strstr(warned_, "a span"), "a span reports once");
    warned_[0] = 0;
    CHECK(ck_sync_point(gpu, "inside") == CK_OK && !warned_[0], "not the points inside it");
    ck_sync_span_end();
    warn_result_ = 1;
    CHECK(ck_sync_point(gpu, "filtered") == CK_ERR_RUNTIME, "a warning made an error fails the call");
    ck_error_clear();
    warn_result_ = 0;
    ck_sync_set_debug_mode(CK_SYNC_DEFAULT);
    ck_sync_set_warn_handler(NULL);

    /* on, the ops go through the decorated tables and still compute */
    ck_sync_set_debug_mode(CK_SYNC_WARN);
    ck_array a, b;
    OK(ck_arange(&a, 0, 1, 10, CK_FLOAT64, cpu));
    OK(ck_ufunc_call2(CK_OP_MULTIPLY, &a, &a, &b));
    CHECK(((double *)b.data)[3] == 9.0, "3 * 3");
    ck_sync_set_debug_mode(CK_SYNC_DEFAULT);
    ck_array_release(&a); ck_array_release(&b);
}

int main(void)
{
    records_on_the_cpu();
    launch_hooks();
    sync_debug();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
