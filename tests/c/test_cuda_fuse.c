/* The GPU backend's fused element-wise chains (src/backend/cuda/cuda_kernels.c)
 * over a fake driver that keeps a log of every launch, so the orderings
 * that a GPU run could only show by chance are checked on every machine.
 * While a graph is captured, small element-wise ops are held and then
 * launched as one ck_ewc kernel, with their operands in order.  The chain
 * is launched before any other work queued after it: a reduction, a change
 * of stream, the end of the capture.  A chain breaks at a view of the same
 * memory at another offset, at another size, and after 32 steps.  Eager
 * ops, CUDAKIT_GRAPH_FUSE=0 and other streams are never held.  A chain that
 * cannot be launched fails the capture, with why.  The kernels
 * are compiled by NVRTC (skipped without it), never run. */
#include "ck_test.h"
#include "../../src/backend/cuda/cuda_internal.h"
#include "cudakit_graph.h"

#include <string.h>

/* ------------------------------------------------------- fake driver */

extern const ck_backend_iface ck_backend_cuda;

struct CUfunc_st { char name[32]; };
struct CUstream_st { int id; };
struct CUevent_st { int unused; };

typedef struct launch_rec {
    char name[32];
    CUstream stream;
    int n;            /* the first parameter: the element count */
    void *p[6];       /* the next parameters, read as pointers */
} launch_rec;

#define LOG_MAX 256
static launch_rec log_[LOG_MAX];
static int nlog_;
static struct CUfunc_st funcs_[64];
static int nfuncs_;
static struct CUstream_st streams_[8];
static int nstreams_;

static CUresult f_ctx_set(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult f_ctx_get(CUcontext *c) { *c = (CUcontext)(uintptr_t)1; return CUDA_SUCCESS; }
static CUresult f_ctx_sync(void) { return CUDA_SUCCESS; }
static CUresult f_mem_alloc(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return CUDA_SUCCESS; }
static CUresult f_mem_free(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
static CUresult f_mem_info(size_t *fr, size_t *tot) { *fr = *tot = (size_t)1 << 30; return CUDA_SUCCESS; }
static CUresult f_stream_create(CUstream *out, unsigned flags, int prio)
{
    (void)flags, (void)prio;
    streams_[nstreams_].id = nstreams_ + 1;
    *out = &streams_[nstreams_++];
    return CUDA_SUCCESS;
}
static CUresult f_stream_destroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult f_stream_sync(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult f_stream_query(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult f_event_sync(CUevent e) { (void)e; return CUDA_SUCCESS; }
static CUresult f_stream_wait(CUstream s, CUevent e, unsigned flags) { (void)s, (void)e, (void)flags; return CUDA_SUCCESS; }
static CUresult f_event_create(CUevent *e, unsigned flags) { (void)flags; *e = calloc(1, sizeof **e); return CUDA_SUCCESS; }
static CUresult f_event_destroy(CUevent e) { free(e); return CUDA_SUCCESS; }
static CUresult f_event_record(CUevent e, CUstream s) { (void)e, (void)s; return CUDA_SUCCESS; }
static CUresult f_event_query(CUevent e) { (void)e; return CUDA_SUCCESS; }
static CUresult f_begin_capture(CUstream s, int mode) { (void)s, (void)mode; return CUDA_SUCCESS; }
static CUresult f_end_capture(CUstream s, CUgraph *g) { (void)s; *g = (CUgraph)(uintptr_t)1; return CUDA_SUCCESS; }
static CUresult f_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    (void)g, (void)flags;
    *e = (CUgraphExec)(uintptr_t)1;
    return CUDA_SUCCESS;
}
static CUresult f_graph_upload(CUgraphExec e, CUstream s) { (void)e, (void)s; return CUDA_SUCCESS; }
static CUresult f_exec_destroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
static CUresult f_graph_destroy(CUgraph g) { (void)g; return CUDA_SUCCESS; }
static int fail_module_loads_;   /* set: a module fails to load, as a bad image would */
static CUresult f_module_load(CUmodule *m, const void *image)
{
    (void)image;
    if (fail_module_loads_) return CUDA_ERROR_INVALID_VALUE;
    *m = (CUmodule)(uintptr_t)1;
    return CUDA_SUCCESS;
}
static CUresult f_get_function(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    snprintf(funcs_[nfuncs_].name, sizeof funcs_[nfuncs_].name, "%s", name);
    *f = &funcs_[nfuncs_++];
    return CUDA_SUCCESS;
}
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shmem, CUstream s, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)extra;
    if (nlog_ == LOG_MAX) return CUDA_ERROR_INVALID_VALUE;
    launch_rec *r = &log_[nlog_++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", f->name);
    r->stream = s;
    /* an element-wise kernel has an output and an input at least; every
     * chain here has 6 parameters after n at least */
    int np = !strcmp(f->name, "ck_ew") ? 2 : !strcmp(f->name, "ck_ewc") ? 6 : 0;
    if (np) r->n = *(int *)params[0];
    for (int k = 0; k < np; k++) r->p[k] = *(void **)params[1 + k];
    return CUDA_SUCCESS;
}

static void fake_driver(void)
{
    ck_cu.cuCtxSetCurrent = f_ctx_set;
    ck_cu.cuCtxGetCurrent = f_ctx_get;
    ck_cu.cuCtxSynchronize = f_ctx_sync;
    ck_cu.cuMemAlloc_v2 = f_mem_alloc;
    ck_cu.cuMemFree_v2 = f_mem_free;
    ck_cu.cuMemGetInfo_v2 = f_mem_info;
    ck_cu.cuStreamCreateWithPriority = f_stream_create;
    ck_cu.cuStreamDestroy_v2 = f_stream_destroy;
    ck_cu.cuStreamSynchronize = f_stream_sync;
    ck_cu.cuStreamQuery = f_stream_query;
    ck_cu.cuEventSynchronize = f_event_sync;
    ck_cu.cuStreamWaitEvent = f_stream_wait;
    ck_cu.cuEventCreate = f_event_create;
    ck_cu.cuEventDestroy_v2 = f_event_destroy;
    ck_cu.cuEventRecord = f_event_record;
    ck_cu.cuEventQuery = f_event_query;
    ck_cu.cuStreamBeginCapture_v2 = f_begin_capture;
    ck_cu.cuStreamEndCapture = f_end_capture;
    ck_cu.cuGraphInstantiateWithFlags = f_instantiate;
    ck_cu.cuGraphUpload = f_graph_upload;
    ck_cu.cuGraphExecDestroy = f_exec_destroy;
    ck_cu.cuGraphDestroy = f_graph_destroy;
    ck_cu.cuModuleLoadData = f_module_load;
    ck_cu.cuModuleGetFunction = f_get_function;
    ck_cu.cuLaunchKernel = f_launch;
    ck_cuda_ndevices = 1;
    ck_cuda_device *cd = &ck_cuda_devices[0];
    cd->ctx = (CUcontext)(uintptr_t)1;
    cd->cc_major = 9;
    cd->sm_count = 132;
    cd->max_threads_per_sm = 2048;
    cd->ew_flat = 1;
    cd->graph_fuse = 1;
    cd->pdl = 0;          /* plain cuLaunchKernel */
    pthread_mutex_init(&cd->kmu, NULL);
    cd->ready = 1;
    ck_backend_register(CK_DEVICE_CUDA, &ck_backend_cuda);
}

static const ck_device gpu = {CK_DEVICE_CUDA, 0};

/* --------------------------------------------------------------- helpers */

static ck_operand arr(const ck_array *a) { return (ck_operand){.array = a}; }
static ck_operand num(double v) { return (ck_operand){.scalar = {.dtype = CK_FLOAT64, .v.f = v}, .weak = 1}; }

/* out = a (op) b, a new array */
static void op2(ck_op op, ck_operand a, ck_operand b, ck_array *out)
{
    ck_operand in[2] = {a, b};
    OK(ck_ufunc_apply(op, 2, in, out, 0, CK_DTYPE_INVALID));
}

/* a (op)= b, in place */
static void op2_into(ck_op op, ck_array *a, ck_operand b)
{
    ck_operand in[2] = {arr(a), b};
    OK(ck_ufunc_apply(op, 2, in, a, 1, CK_DTYPE_INVALID));
}

/* A view of a from element lo, n elements (1-d, contiguous). */
static void part(ck_array *out, const ck_array *a, int64_t lo, int64_t n)
{
    ck_array_view(out, a);
    out->data += lo * ck_array_itemsize(a);
    int64_t st = ck_array_itemsize(a);
    ck_array_set_layout(out, 1, &n, &st);
}

static ck_graph *begin(void)
{
    ck_graph *g;
    OK(ck_graph_create(gpu, &g));
    OK(ck_graph_capture_begin(g, NULL, NULL));
    nlog_ = 0;
    return g;
}

static void end(ck_graph *g) { OK(ck_graph_capture_end(g)); }

static int count(const char *name)
{
    int c = 0;
    for (int i = 0; i < nlog_; i++) c += !strcmp(log_[i].name, name);
    return c;
}

/* --------------------------------------------------------------- tests */

/* y = x * 2, z = y + 1, w = z * z: held during the capture, one ck_ewc at
 * its end with each step's output and inputs in order. */
static void test_a_chain_is_one_launch_with_its_operands(void)
{
    const int64_t n = 1000;
    ck_array x, y, z, w;
    OK(ck_arange(&x, 0, 1, n, CK_FLOAT32, gpu));
    ck_graph *g = begin();
    op2(CK_OP_MULTIPLY, arr(&x), num(2), &y);
    op2(CK_OP_ADD, arr(&y), num(1), &z);
    op2(CK_OP_MULTIPLY, arr(&z), arr(&z), &w);
    CHECK(nlog_ == 0, "%d launches before anything else was queued", nlog_);
    end(g);
    CHECK(nlog_ == 1 && !strcmp(log_[0].name, "ck_ewc"), "%d launches, the first %s", nlog_, nlog_ ? log_[0].name : "-");
    if (nlog_ == 1) {
        launch_rec *r = &log_[0];
        CHECK(r->n == n, "n %d", r->n);
        /* parameters after n: y, x, 2.0f (4 bytes, read with the next as one
         * pointer-sized slot here: only the pointers are compared) */
        CHECK(r->p[0] == (void *)y.data && r->p[1] == (void *)x.data, "step 0's arrays");
        CHECK(r->p[3] == (void *)z.data && r->p[4] == (void *)y.data, "step 1's arrays");
    }
    ck_array_release(&x), ck_array_release(&y), ck_array_release(&z), ck_array_release(&w);
    ck_graph_free(g);
}

/* Writes at x[1:] after reads of x[:-1] (the same memory, one element
 * apart) cannot share a thread's pass: two launches; a reduction after a
 * chain comes after it. */
static void test_shifted_views_and_a_reduction_break_the_chain(void)
{
    const int64_t n = 1001;
    ck_array x, lo, hi, a, s;
    OK(ck_arange(&x, 0, 1, n, CK_FLOAT32, gpu));
    part(&lo, &x, 0, n - 1);
    part(&hi, &x, 1, n - 1);
    ck_graph *g = begin();
    op2(CK_OP_MULTIPLY, arr(&lo), num(2), &a);
    op2_into(CK_OP_ADD, &hi, arr(&a));          /* hi overlaps lo at another address */
    CHECK(nlog_ == 1 && !strcmp(log_[0].name, "ck_ew"), "the first step alone went first: %d launches", nlog_);
    op2_into(CK_OP_MULTIPLY, &hi, num(3));      /* the same elements as the step before: joins it */
    CHECK(nlog_ == 1, "%d launches", nlog_);
    OK(ck_reduce(CK_REDUCE_SUM, &hi, 1, 0, CK_DTYPE_INVALID, &s, 0));
    CHECK(nlog_ >= 3 && !strcmp(log_[1].name, "ck_ewc"), "the held pair went before the reduction (%s)",
          nlog_ > 1 ? log_[1].name : "-");
    CHECK(nlog_ >= 3 && log_[1].p[0] == (void *)hi.data, "the pair writes x[1:]");
    int before = nlog_;
    end(g);
    CHECK(nlog_ == before, "nothing was left held: %d -> %d", before, nlog_);
    ck_array_release(&x), ck_array_release(&lo), ck_array_release(&hi), ck_array_release(&a), ck_array_release(&s);
    ck_graph_free(g);
}

/* 40 steps: a kernel of 32 and one of 8; another size starts another chain. */
static void test_long_chains_and_other_sizes(void)
{
    ck_array x, y, t, h;
    OK(ck_arange(&x, 0, 1, 500, CK_FLOAT64, gpu));
    ck_graph *g = begin();
    ck_array_view(&y, &x);
    for (int k = 0; k < 40; k++) {
        op2(CK_OP_ADD, arr(&y), num(k), &t);
        ck_array_release(&y);
        y = t;
    }
    part(&h, &y, 0, 250);
    ck_array u;
    op2(CK_OP_MULTIPLY, arr(&h), num(2), &u);
    end(g);
    CHECK(nlog_ == 3, "%d launches", nlog_);
    if (nlog_ == 3) {
        CHECK(!strcmp(log_[0].name, "ck_ewc") && log_[0].n == 500, "32 steps over 500: %s %d", log_[0].name, log_[0].n);
        CHECK(!strcmp(log_[1].name, "ck_ewc") && log_[1].n == 500, "8 steps over 500");
        CHECK(!strcmp(log_[2].name, "ck_ew") && log_[2].n == 250, "one step over 250: %s %d", log_[2].name, log_[2].n);
    }
    ck_array_release(&x), ck_array_release(&y), ck_array_release(&h), ck_array_release(&u);
    ck_graph_free(g);
}

/* A change of the current stream launches what was held, on the capture's
 * stream; work on the other stream is not held. */
static void test_a_change_of_stream_launches_the_chain_first(void)
{
    ck_array x, a, b, c;
    OK(ck_arange(&x, 0, 1, 100, CK_FLOAT32, gpu));
    ck_graph *g = begin();
    CUstream cap = ck_cuda_current_stream_peek(0);
    op2(CK_OP_ADD, arr(&x), num(1), &a);
    op2(CK_OP_ADD, arr(&a), num(1), &b);
    ck_stream other;
    OK(ck_cuda_stream_create(gpu, 1, 0, &other));
    ck_cuda_set_current_stream(0, (CUstream)other);
    CHECK(nlog_ == 1 && log_[0].stream == cap && !strcmp(log_[0].name, "ck_ewc"),
          "the chain went on the capture's stream before the switch (%d launches)", nlog_);
    op2(CK_OP_ADD, arr(&b), num(1), &c);
    CHECK(nlog_ == 2 && log_[1].stream == (CUstream)other, "an op on another stream runs at once");
    ck_cuda_set_current_stream(0, cap);
    end(g);
    ck_array_release(&x), ck_array_release(&a), ck_array_release(&b), ck_array_release(&c);
    ck_graph_free(g);
}

/* Outside a capture, and with fusion off, every op is its own launch. */
static void test_eager_and_turned_off(void)
{
    ck_array x, a, b;
    OK(ck_arange(&x, 0, 1, 100, CK_FLOAT32, gpu));
    nlog_ = 0;
    op2(CK_OP_ADD, arr(&x), num(1), &a);
    op2(CK_OP_ADD, arr(&a), num(1), &b);
    CHECK(nlog_ == 2 && count("ck_ew") == 2, "eager: %d launches", nlog_);
    ck_array_release(&a), ck_array_release(&b);
    ck_cuda_devices[0].graph_fuse = 0;
    ck_graph *g = begin();
    op2(CK_OP_ADD, arr(&x), num(1), &a);
    op2(CK_OP_ADD, arr(&a), num(1), &b);
    CHECK(nlog_ == 2 && count("ck_ew") == 2, "CUDAKIT_GRAPH_FUSE=0: %d launches during the capture", nlog_);
    end(g);
    ck_cuda_devices[0].graph_fuse = 1;
    ck_array_release(&x), ck_array_release(&a), ck_array_release(&b);
    ck_graph_free(g);
}

/* A chain whose kernel cannot be made fails the capture at its end, with
 * the driver's error and what was being launched. */
static void test_a_chain_that_cannot_launch_fails_the_capture(void)
{
    ck_array x, a, b;
    OK(ck_arange(&x, 0, 1, 64, CK_INT16, gpu));
    ck_graph *g = begin();
    op2(CK_OP_BITWISE_XOR, arr(&x), arr(&x), &a);     /* a chain made nowhere else in this test */
    op2(CK_OP_BITWISE_XOR, arr(&a), arr(&x), &b);
    fail_module_loads_ = 1;
    ck_status st = ck_graph_capture_end(g);
    fail_module_loads_ = 0;
    CHECK(st != CK_OK, "the capture ended well");
    CHECK(strstr(ck_error_message(), "fused") != NULL, "message: %s", ck_error_message());
    CHECK(!ck_graph_capturing(gpu), "still capturing");
    ck_array_release(&x), ck_array_release(&a), ck_array_release(&b);
    ck_graph_free(g);
}

int main(void)
{
    if (ck_nvrtc_load() != CK_OK) {
        printf("skipped: %s\n", ck_error_message());
        return 0;
    }
    setenv("CUDAKIT_CACHE_DIR", "off", 1);
    fake_driver();
    test_a_chain_is_one_launch_with_its_operands();
    test_shifted_views_and_a_reduction_break_the_chain();
    test_long_chains_and_other_sizes();
    test_a_change_of_stream_launches_the_chain_first();
    test_eager_and_turned_off();
    test_a_chain_that_cannot_launch_fails_the_capture();
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
