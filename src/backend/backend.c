/* The one door to a device: the backend registry, and the public functions
 * of cudakit_device.h and cudakit_module.h, which check their arguments
 * once and own the defaults of the optional slots. */
#include "backend.h"
#include "cudakit_graph.h"
#include "graph_internal.h"
#include "../runtime/cpu_kernels.h"
#include "../runtime/kcache.h"
#include "../runtime/profiler.h"
#include "../platform/cuda_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ck_backend_iface *ck_backends_[2] = {&ck_backend_cpu, NULL};
/* the backends' own tables, when ck_backends_ holds the profiler's copies */
static const ck_backend_iface *ck_backends_real_[2] = {&ck_backend_cpu, NULL};
static pthread_mutex_t observe_mu_ = PTHREAD_MUTEX_INITIALIZER;
static int observed_;

ck_status ck_cuda_init(void);

/* Why the CUDA backend is not registered, kept from its one try. */
static char cuda_reason_[512];
static int cuda_tried_;
static pthread_mutex_t cuda_mu_ = PTHREAD_MUTEX_INITIALIZER;

static void cuda_try_init(void)
{
    if (__atomic_load_n(&cuda_tried_, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&cuda_mu_);
    if (!cuda_tried_) {
        /* the driver loads on the first use of a GPU device, never at import */
        if (ck_cuda_init() != CK_OK) {
            snprintf(cuda_reason_, sizeof cuda_reason_, "%s", ck_error_message());
            ck_error_clear();
        }
        __atomic_store_n(&cuda_tried_, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cuda_mu_);
}

const ck_backend_iface *ck_backend_for(ck_device dev)
{
    if (dev.type < 0 || dev.type > 1) return NULL;
    if (dev.type == CK_DEVICE_CUDA && !ck_backends_[1]) cuda_try_init();
    return ck_backends_[dev.type];
}

void ck_backend_register(ck_device_type type, const ck_backend_iface *iface)
{
    pthread_mutex_lock(&observe_mu_);
    ck_backends_real_[type] = iface;
    ck_backends_[type] = observed_ ? ck_backend_decorate(type, iface) : iface;
    pthread_mutex_unlock(&observe_mu_);
}

void ck_backend_observe(int on)
{
    pthread_mutex_lock(&observe_mu_);
    observed_ = on;
    for (int t = 0; t < 2; t++)
        if (ck_backends_real_[t])
            ck_backends_[t] = on ? ck_backend_decorate(t, ck_backends_real_[t]) : ck_backends_real_[t];
    pthread_mutex_unlock(&observe_mu_);
}

const char *ck_device_unavailable_reason(void)
{
    ck_device d = {CK_DEVICE_CUDA, 0};
    return ck_backend_for(d) ? "" : cuda_reason_;
}

const ck_backend_iface *ck_backend_require(ck_device dev)
{
    const ck_backend_iface *be = ck_backend_for(dev);
    if (!be) {
        if (dev.type == CK_DEVICE_CUDA)
            ck_error_set(CK_ERR_DEVICE, "no usable CUDA device: %s", cuda_reason_);
        else
            ck_error_set(CK_ERR_VALUE, "unknown device type %d", dev.type);
        return NULL;
    }
    int n = be->device_count ? be->device_count() : 1;
    if (dev.index < 0 || dev.index >= n) {
        if (dev.type == CK_DEVICE_CPU)
            ck_error_set(CK_ERR_VALUE, "invalid CPU device %d (there is one, cpu:0)", dev.index);
        else
            ck_error_set(CK_ERR_VALUE, "invalid CUDA device %d (%d available)", dev.index, n);
        return NULL;
    }
    return be;
}

/* The backend of dev for a wrapper, or return the error. */
#define CK_BE(dev)                                                  \
    const ck_backend_iface *be = ck_backend_require(dev);          \
    if (!be) return ck_error_status()

/* What waits for the device cannot be captured (cudakit_graph.h). */
#define CK_REFUSE(dev, what)                                        \
    do {                                                            \
        ck_status r_ = ck_graph_refuse(dev, what);                  \
        if (r_ != CK_OK) return r_;                                 \
    } while (0)

ck_status ck_device_check(ck_device dev)
{
    return ck_backend_require(dev) ? CK_OK : ck_error_status();
}

int ck_device_count(ck_device_type type)
{
    ck_device d = {type, 0};
    const ck_backend_iface *be = ck_backend_for(d);
    if (!be) return 0;
    return be->device_count ? be->device_count() : 1;
}

ck_device ck_device_current(ck_device_type type)
{
    ck_device d = {type, 0};
    const ck_backend_iface *be = ck_backend_for(d);
    if (be && be->device_get_current) d.index = be->device_get_current();
    return d;
}

ck_status ck_device_set_current(ck_device dev)
{
    CK_BE(dev);
    if (be->device_set_current) be->device_set_current(dev.index);
    return CK_OK;
}

void ck_add_library_dir(const char *dir) { ck_platform_add_search_dir(dir); }

/* ------------------------------------------------------------- default */

static ck_device ck_default_device_ = {CK_DEVICE_CPU, 0};

ck_device ck_device_default(void) { return ck_default_device_; }
void ck_device_set_default(ck_device dev) { ck_default_device_ = dev; }

void ck_device_str(ck_device d, char *buf, size_t n)
{
    if (d.type == CK_DEVICE_CPU) snprintf(buf, n, "cpu");
    else snprintf(buf, n, "cuda:%d", d.index);
}

/* ------------------------------------------------------------- runtime */

ck_status ck_device_properties(ck_device dev, ck_device_props *out)
{
    CK_BE(dev);
    memset(out, 0, sizeof *out);
    return be->device_properties(dev, out);
}

ck_status ck_device_can_access_peer(ck_device a, ck_device b, int *out)
{
    *out = 0;
    if (ck_device_equal(a, b)) {
        ck_status s = ck_device_check(a);
        *out = s == CK_OK;
        return s;
    }
    CK_BE(a);
    ck_status s = ck_device_check(b);
    if (s != CK_OK) return s;
    if (a.type == b.type && be->peer_access) *out = be->peer_access(a.index, b.index);
    return CK_OK;
}

ck_status ck_device_mem_info(ck_device dev, size_t *free_bytes, size_t *total_bytes)
{
    CK_BE(dev);
    return be->device_mem_info(dev, free_bytes, total_bytes);
}

ck_status ck_device_synchronize(ck_device dev)
{
    CK_BE(dev);
    CK_REFUSE(dev, "synchronize()");
    return be->synchronize ? be->synchronize(dev) : CK_OK;
}

ck_status ck_stream_create(ck_device dev, int nonblocking, int priority, ck_stream *out)
{
    *out = NULL;
    CK_BE(dev);
    return be->stream_create(dev, nonblocking, priority, out);
}

ck_status ck_stream_destroy(ck_device dev, ck_stream s)
{
    CK_BE(dev);
    if (!s) return CK_OK;   /* the default stream is not ours to destroy */
    if (be->stream_current(dev) == s) be->stream_set_current(dev, NULL);
    ck_graph_stream_gone(dev, s);
    return be->stream_destroy(dev, s);
}

ck_status ck_stream_synchronize(ck_device dev, ck_stream s)
{
    CK_BE(dev);
    CK_REFUSE(dev, "Stream.synchronize()");
    return be->stream_synchronize(dev, s);
}

ck_status ck_stream_query(ck_device dev, ck_stream s, int *done)
{
    CK_BE(dev);
    CK_REFUSE(dev, "Stream.query()");
    return be->stream_query(dev, s, done);
}

ck_status ck_stream_wait_event(ck_device dev, ck_stream s, ck_event e)
{
    CK_BE(dev);
    if (!e) return ck_error_set(CK_ERR_VALUE, "wait_event: no event");
    return be->stream_wait_event(dev, s, e);
}

ck_status ck_stream_priority_range(ck_device dev, int *least, int *greatest)
{
    CK_BE(dev);
    return be->stream_priority_range(dev, least, greatest);
}

ck_stream ck_stream_current(ck_device dev)
{
    const ck_backend_iface *be = ck_backend_for(dev);
    return be ? be->stream_current(dev) : NULL;
}

void ck_stream_set_current(ck_device dev, ck_stream s)
{
    const ck_backend_iface *be = ck_backend_for(dev);
    if (be) be->stream_set_current(dev, s);
}

ck_status ck_event_create(ck_device dev, int timing, ck_event *out)
{
    *out = NULL;
    CK_BE(dev);
    return be->event_create(dev, timing, out);
}

ck_status ck_event_destroy(ck_device dev, ck_event e)
{
    CK_BE(dev);
    return e ? be->event_destroy(dev, e) : CK_OK;
}

ck_status ck_event_record(ck_device dev, ck_event e, ck_stream s)
{
    CK_BE(dev);
    if (!e) return ck_error_set(CK_ERR_VALUE, "record: no event");
    return be->event_record(dev, e, s);
}

ck_status ck_event_synchronize(ck_device dev, ck_event e)
{
    CK_BE(dev);
    CK_REFUSE(dev, "Event.synchronize()");
    if (!e) return ck_error_set(CK_ERR_VALUE, "synchronize: no event");
    return be->event_synchronize(dev, e);
}

ck_status ck_event_query(ck_device dev, ck_event e, int *done)
{
    CK_BE(dev);
    if (!e) return ck_error_set(CK_ERR_VALUE, "query: no event");
    return be->event_query(dev, e, done);
}

ck_status ck_event_elapsed_ms(ck_device dev, ck_event start, ck_event end, float *ms)
{
    CK_BE(dev);
    if (!start || !end) return ck_error_set(CK_ERR_VALUE, "elapsed_time: no event");
    return be->event_elapsed_ms(dev, start, end, ms);
}

ck_status ck_memory_stats(ck_device dev, ck_mem_stats *out)
{
    CK_BE(dev);
    memset(out, 0, sizeof *out);
    return be->memory_stats(dev, out);
}

ck_status ck_memory_empty_cache(ck_device dev)
{
    CK_BE(dev);
    return be->memory_empty_cache(dev);
}

ck_status ck_memory_set_limit(ck_device dev, size_t limit)
{
    CK_BE(dev);
    return be->memory_set_limit(dev, limit);
}

ck_status ck_memory_reset_peak(ck_device dev)
{
    CK_BE(dev);
    return be->memory_reset_peak(dev);
}

ck_status ck_memcpy_to_host(ck_device dev, void *dst, const void *src, size_t n)
{
    CK_BE(dev);
    CK_REFUSE(dev, "a copy to the host");
    return n ? be->copy_to_host(dev, dst, src, n) : CK_OK;
}

ck_status ck_memcpy_from_host(ck_device dev, void *dst, const void *src, size_t n)
{
    CK_BE(dev);
    CK_REFUSE(dev, "a copy from pageable host memory");
    return n ? be->copy_from_host(dev, dst, src, n) : CK_OK;
}

ck_status ck_pinned_empty(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt)
{
    ck_device gpu = {CK_DEVICE_CUDA, 0};
    const ck_backend_iface *be = ck_backend_for(gpu);
    int64_t n = ndim >= 0 && ndim <= CK_MAXDIMS ? ck_shape_size(ndim, shape) : -1;
    /* without a GPU, or for a shape ck_array_empty refuses (its error) */
    if (!be || !be->pinned_alloc || n < 0) return ck_array_empty(out, ndim, shape, dt, ck_device_cpu());
    size_t nbytes = (size_t)n * (size_t)ck_dtype_get_info(dt)->itemsize;
    ck_release_fn rel = NULL;
    void *ctx = NULL;
    void *p = be->pinned_alloc(nbytes ? nbytes : 1, &rel, &ctx);
    if (!p) return ck_error_status();
    ck_buffer *b = ck_buffer_wrap(ck_device_cpu(), p, nbytes, 0, rel, ctx);
    if (!b) { rel(ctx); return ck_error_status(); }
    out->buf = b;
    out->data = p;
    out->dtype = dt;
    out->flags = CK_ARRAY_WRITEABLE | CK_ARRAY_OWNDATA;
    int64_t strides[CK_MAXDIMS];
    ck_strides_c(ndim, shape, ck_dtype_get_info(dt)->itemsize, strides);
    ck_array_set_layout(out, ndim, shape, strides);
    return CK_OK;
}

/* ------------------------------------------------------------- modules */

ck_status ck_module_load(ck_device dev, const char *source, const char *name_hint, const char *const *options,
                         int noptions, const char *const *name_exprs, int nexprs, ck_module **out)
{
    *out = NULL;
    CK_BE(dev);
    ck_module *m = NULL;
    ck_status s = be->module_load(dev, source, name_hint ? name_hint : "kernel.cu", options, noptions, name_exprs,
                                  nexprs, &m);
    if (s != CK_OK) return s;
    m->dev = dev;
    m->be = be;
    pthread_mutex_init(&m->mu, NULL);
    m->funcs = NULL;
    m->nfuncs = m->cfuncs = 0;
    *out = m;
    return CK_OK;
}

void ck_module_free(ck_module *m)
{
    if (!m) return;
    for (int i = 0; i < m->nfuncs; i++) {
        free(m->funcs[i]->name);
        m->be->function_free(m->funcs[i]);
    }
    free(m->funcs);
    pthread_mutex_destroy(&m->mu);
    m->be->module_free(m);
}

ck_device ck_module_device(const ck_module *m) { return m->dev; }

ck_status ck_module_get_function(ck_module *m, const char *name, ck_function **out)
{
    *out = NULL;
    ck_status s = CK_OK;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i]->name, name)) { *out = m->funcs[i]; goto done; }
    if (m->nfuncs == m->cfuncs) {
        int nc = m->cfuncs ? m->cfuncs * 2 : 4;
        ck_function **v = realloc(m->funcs, (size_t)nc * sizeof *v);
        if (!v) { s = ck_error_set(CK_ERR_MEMORY, "out of memory for a kernel"); goto done; }
        m->funcs = v;
        m->cfuncs = nc;
    }
    char *nm = strdup(name);
    if (!nm) { s = ck_error_set(CK_ERR_MEMORY, "out of memory for a kernel"); goto done; }
    ck_function *f = NULL;
    s = m->be->function_new(m, name, &f);
    if (s != CK_OK) { free(nm); goto done; }
    f->module = m;
    f->name = nm;
    m->funcs[m->nfuncs++] = f;
    *out = f;
done:
    pthread_mutex_unlock(&m->mu);
    return s;
}

ck_status ck_module_get_global(ck_module *m, const char *name, void **ptr, size_t *nbytes)
{
    return m->be->module_get_global(m, name, ptr, nbytes);
}

ck_status ck_function_attributes(ck_function *f, ck_function_attrs *out)
{
    memset(out, 0, sizeof *out);
    return f->module->be->function_attributes(f, out);
}

ck_status ck_function_set_max_dynamic_shared(ck_function *f, int bytes)
{
    if (bytes < 0) return ck_error_set(CK_ERR_VALUE, "max_dynamic_shared_size_bytes=%d is negative", bytes);
    return f->module->be->function_set_max_dynamic_shared(f, bytes);
}

ck_status ck_function_suggest_block(ck_function *f, size_t dyn_shared, int block_limit, int *min_grid, int *block)
{
    return f->module->be->function_suggest_block(f, dyn_shared, block_limit, min_grid, block);
}

int ck_function_params(ck_function *f, size_t *sizes, int max)
{
    return f->module->be->function_params ? f->module->be->function_params(f, sizes, max) : -1;
}

const char *ck_function_name(const ck_function *f) { return f->name; }

ck_status ck_function_launch(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                             ck_stream stream, int nparams, void **params, const ck_launch_arg *info)
{
    return ck_function_launch_ex(f, grid, block, shmem, stream, 0, nparams, params, info);
}

ck_status ck_function_max_cooperative_blocks(ck_function *f, const unsigned block[3], size_t shmem, int *out)
{
    *out = 0;
    if (!block[0] || !block[1] || !block[2])
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': block (%u, %u, %u) has a zero dimension", f->name, block[0],
                            block[1], block[2]);
    if (!f->module->be->function_max_cooperative_blocks)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "kernel '%s': cooperative launches are not supported on this "
                            "device", f->name);
    return f->module->be->function_max_cooperative_blocks(f, block, shmem, out);
}

ck_status ck_function_launch_ex(ck_function *f, const unsigned grid[3], const unsigned block[3], size_t shmem,
                                ck_stream stream, unsigned flags, int nparams, void **params,
                                const ck_launch_arg *info)
{
    if (flags & ~CK_LAUNCH_COOPERATIVE)
        return ck_error_set(CK_ERR_VALUE, "kernel '%s': unknown launch flags 0x%x", f->name, flags);
    for (int k = 0; k < 3; k++) {
        if (grid[k] == 0)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': grid (%u, %u, %u) has a zero dimension", f->name, grid[0],
                                grid[1], grid[2]);
        if (block[k] == 0)
            return ck_error_set(CK_ERR_VALUE, "kernel '%s': block (%u, %u, %u) has a zero dimension", f->name,
                                block[0], block[1], block[2]);
    }
    if ((flags & CK_LAUNCH_COOPERATIVE) && !f->module->be->function_max_cooperative_blocks)
        return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "kernel '%s': cooperative launches are not supported on "
                            "this device", f->name);
    if (__builtin_expect(ck_obs_flags_ != 0, 0))
        return ck_backend_obs_launch(f, grid, block, shmem, stream, flags, nparams, params, info);
    /* through the registry, which during a CPU graph's capture records */
    return ck_backend_for(f->module->dev)->function_launch(f, grid, block, shmem, stream, flags, nparams, params, info);
}

ck_status ck_cuda_compile(const char *source, const char *name_hint, int arch, ck_cubin *out)
{
    return ck_cuda_compile_ex(source, name_hint, NULL, 0, arch, out);
}

ck_status ck_cuda_compile_ex(const char *source, const char *name_hint, const char *const *options, int noptions,
                             int arch, ck_cubin *out)
{
    memset(out, 0, sizeof *out);
    ck_kernel_image img;
    ck_status s = ck_kernel_compile(source, name_hint, options, noptions, arch, &img);
    if (s != CK_OK) return s;
    out->data = img.data;   /* the image's buffer moves to out */
    out->size = img.size;
    out->from_disk = img.from_disk;
    out->compile_ms = img.compile_ms;
    img.data = NULL;
    ck_kernel_image_free(&img);
    return CK_OK;
}

void ck_cubin_free(ck_cubin *c)
{
    free(c->data);
    memset(c, 0, sizeof *c);
}

int ck_kernel_bounds_mode(void) { return ck_cpu_bounds_mode(); }
void ck_kernel_set_bounds_mode(int on) { ck_cpu_set_bounds_mode(on); }
