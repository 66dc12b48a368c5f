/* The functions behind cudakit.cuda: devices, streams, events, memory. */
#include "ck_python.h"
#include "../backend/cuda/cuda_internal.h"

#include <string.h>

ck_status ck_cuda_init(void);
int ck_cuda_device_count(void);
ck_status ck_cuda_empty_cache(int d);
void ck_cuda_get_mem_stats(int d, ck_cuda_mem_stats *out);
void ck_cuda_set_memory_limit(int d, size_t limit);
void ck_cuda_reset_peak(int d);

static int check_dev(int d)
{
    int n = ck_cuda_device_count();
    if (d < 0 || d >= n) {
        if (n == 0) PyErr_SetString(ck_py_CUDAError, "no usable CUDA device");
        else PyErr_Format(PyExc_ValueError, "invalid CUDA device %d (%d available)", d, n);
        return -1;
    }
    return 0;
}

#define CK_PY_CU(call)                                                                  \
    do {                                                                                \
        CUresult r_ = (call);                                                           \
        if (r_ != CUDA_SUCCESS) return ck_py_raise(ck_cu_fail(r_, #call, __func__, __FILE__, __LINE__)); \
    } while (0)

static PyObject *c_is_available(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(ck_cuda_device_count() > 0);
}

static PyObject *c_device_count(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(ck_cuda_device_count());
}

static PyObject *c_unavailable_reason(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (ck_cuda_device_count() > 0) Py_RETURN_NONE;
    ck_status s = ck_cu_load();
    return PyUnicode_FromString(s == CK_OK ? "the CUDA driver found no GPU" : ck_error_message());
}

static PyObject *c_properties(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) return NULL;
    if (check_dev(d) < 0) return NULL;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return ck_py_raise(s);
    ck_cuda_device *cd = ck_cuda_dev(d);
    int smem = 0, l2 = 0, bus = 0, mclk = 0, warp = 32, mtpb = 1024;
    ck_cu.cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, cd->dev);
    ck_cu.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, cd->dev);
    ck_cu.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, cd->dev);
    ck_cu.cuDeviceGetAttribute(&mclk, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, cd->dev);
    ck_cu.cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, cd->dev);
    ck_cu.cuDeviceGetAttribute(&mtpb, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cd->dev);
    return Py_BuildValue("{s:s,s:(ii),s:K,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "name", cd->name,
                         "compute_capability", cd->cc_major, cd->cc_minor, "total_memory",
                         (unsigned long long)cd->total_mem, "multi_processor_count", cd->sm_count,
                         "max_threads_per_multiprocessor", cd->max_threads_per_sm, "max_threads_per_block", mtpb,
                         "shared_memory_per_block", smem, "l2_cache_size", l2, "memory_bus_width", bus,
                         "warp_size", warp);
}

static PyObject *c_mem_info(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return ck_py_raise(s);
    size_t fr = 0, tot = 0;
    CK_PY_CU(ck_cu.cuMemGetInfo_v2(&fr, &tot));
    return Py_BuildValue("(KK)", (unsigned long long)fr, (unsigned long long)tot);
}

static PyObject *c_synchronize(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_device dev = {CK_DEVICE_CUDA, d};
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_cuda_synchronize(dev);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *c_get_device(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(ck_cuda_current_device());
}

static PyObject *c_set_device(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_cuda_set_current_device(d);
    Py_RETURN_NONE;
}

/* Streams and events travel to Python as integers (their handles). */
static PyObject *c_stream_create(PyObject *m, PyObject *args)
{
    (void)m;
    int d, nonblocking = 1;
    if (!PyArg_ParseTuple(args, "i|p", &d, &nonblocking) || check_dev(d) < 0) return NULL;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return ck_py_raise(s);
    CUstream st;
    CK_PY_CU(ck_cu.cuStreamCreate(&st, nonblocking ? CU_STREAM_NON_BLOCKING : 0));
    return PyLong_FromVoidPtr(st);
}

/* (device, handle) or (device, handle, handle) of a call, None as NULL,
 * with the device's context made current. */
static int handles(PyObject *args, int *d, void **a, void **b)
{
    PyObject *ao, *bo = Py_None;
    if (!(b ? PyArg_ParseTuple(args, "iOO", d, &ao, &bo) : PyArg_ParseTuple(args, "iO", d, &ao))) return -1;
    *a = ao == Py_None ? NULL : PyLong_AsVoidPtr(ao);
    if (b) *b = bo == Py_None ? NULL : PyLong_AsVoidPtr(bo);
    if (PyErr_Occurred()) return -1;
    if (check_dev(*d) < 0) return -1;
    ck_status s = ck_cuda_use(*d);
    if (s != CK_OK) return ck_py_raise_int(s);
    return 0;
}

static int handle_args(PyObject *args, int *d, void **h) { return handles(args, d, h, NULL); }

/* Waiting for a stream or an event, the GIL released. */
static PyObject *wait_for(int event, void *h)
{
    CUresult r;
    Py_BEGIN_ALLOW_THREADS
    r = event ? ck_cu.cuEventSynchronize((CUevent)h) : ck_cu.cuStreamSynchronize((CUstream)h);
    Py_END_ALLOW_THREADS
    if (r != CUDA_SUCCESS)
        return ck_py_raise(ck_cu_fail(r, event ? "cuEventSynchronize" : "cuStreamSynchronize", __func__, __FILE__,
                                      __LINE__));
    Py_RETURN_NONE;
}

/* A query's answer: done (True) or not yet (False). */
static PyObject *query_answer(CUresult r)
{
    if (r == CUDA_ERROR_NOT_READY) Py_RETURN_FALSE;
    CK_PY_CU(r);
    Py_RETURN_TRUE;
}

static PyObject *c_stream_destroy(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    if (ck_cuda_current_stream(d) == (CUstream)h) ck_cuda_set_current_stream(d, NULL);
    CK_PY_CU(ck_cu.cuStreamDestroy_v2((CUstream)h));
    Py_RETURN_NONE;
}

static PyObject *c_stream_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    return wait_for(0, h);
}

static PyObject *c_stream_query(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    return query_answer(ck_cu.cuStreamQuery((CUstream)h));
}

static PyObject *c_stream_wait_event(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *st, *ev;
    if (handles(args, &d, &st, &ev) < 0) return NULL;
    CK_PY_CU(ck_cu.cuStreamWaitEvent((CUstream)st, (CUevent)ev, 0));
    Py_RETURN_NONE;
}

/* set the thread's current stream of device d; returns the previous one */
static PyObject *c_set_stream(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    CUstream prev = ck_cuda_current_stream(d);
    ck_cuda_set_current_stream(d, (CUstream)h);
    if (!prev) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(prev);
}

static PyObject *c_get_stream(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    CUstream s = ck_cuda_current_stream(d);
    if (!s) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(s);
}

static PyObject *c_event_create(PyObject *m, PyObject *args)
{
    (void)m;
    int d, timing = 1;
    if (!PyArg_ParseTuple(args, "i|p", &d, &timing) || check_dev(d) < 0) return NULL;
    ck_status s = ck_cuda_use(d);
    if (s != CK_OK) return ck_py_raise(s);
    CUevent e;
    CK_PY_CU(ck_cu.cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    return PyLong_FromVoidPtr(e);
}

static PyObject *c_event_destroy(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    CK_PY_CU(ck_cu.cuEventDestroy_v2((CUevent)h));
    Py_RETURN_NONE;
}

static PyObject *c_event_record(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *ev, *st;
    if (handles(args, &d, &ev, &st) < 0) return NULL;
    CK_PY_CU(ck_cu.cuEventRecord((CUevent)ev, (CUstream)st));
    Py_RETURN_NONE;
}

static PyObject *c_event_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    return wait_for(1, h);
}

static PyObject *c_event_query(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *h;
    if (handle_args(args, &d, &h) < 0) return NULL;
    return query_answer(ck_cu.cuEventQuery((CUevent)h));
}

static PyObject *c_event_elapsed(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    void *a, *b;
    if (handles(args, &d, &a, &b) < 0) return NULL;
    float ms = 0;
    CK_PY_CU(ck_cu.cuEventElapsedTime(&ms, (CUevent)a, (CUevent)b));
    return PyFloat_FromDouble(ms);
}

static PyObject *c_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_cuda_mem_stats st;
    ck_cuda_get_mem_stats(d, &st);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "allocated_bytes", (unsigned long long)st.allocated,
                         "peak_allocated_bytes", (unsigned long long)st.peak_allocated, "cached_bytes",
                         (unsigned long long)st.cached, "reserved_bytes", (unsigned long long)st.reserved,
                         "limit_bytes", (unsigned long long)st.limit, "num_allocs", (unsigned long long)st.n_alloc,
                         "num_device_allocs", (unsigned long long)st.n_driver_alloc, "num_ooms",
                         (unsigned long long)st.n_oom);
}

static PyObject *c_empty_cache(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_status s = ck_cuda_empty_cache(d);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *c_set_memory_limit(PyObject *m, PyObject *args)
{
    (void)m;
    int d;
    unsigned long long lim;
    if (!PyArg_ParseTuple(args, "iK", &d, &lim) || check_dev(d) < 0) return NULL;
    ck_cuda_set_memory_limit(d, (size_t)lim);
    Py_RETURN_NONE;
}

static PyObject *c_reset_peak(PyObject *m, PyObject *arg)
{
    (void)m;
    int d = (int)PyLong_AsLong(arg);
    if ((d == -1 && PyErr_Occurred()) || check_dev(d) < 0) return NULL;
    ck_cuda_reset_peak(d);
    Py_RETURN_NONE;
}

ck_status ck_cuda_pinned_empty(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt);

static PyObject *c_pinned_empty(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *shape, *dt = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &shape, &dt)) return NULL;
    int nd;
    int64_t sh[CK_MAXDIMS];
    ck_dtype t;
    if (ck_py_shape_from_obj(shape, &nd, sh) < 0 || ck_py_dtype_from_obj(dt, CK_FLOAT64, &t) < 0) return NULL;
    if (ck_cuda_device_count() == 0) { PyErr_SetString(ck_py_CUDAError, "no usable CUDA device"); return NULL; }
    ck_array a;
    ck_status s = ck_cuda_pinned_empty(&a, nd, sh, t);
    if (s != CK_OK) return ck_py_raise(s);
    return ck_py_wrap(&a, NULL);
}

#include "../runtime/kcache.h"

/* Compile CUDA C with NVRTC through the disk cache (no GPU needed):
 * (image bytes, from_disk, compile_ms).  For tests and tools. */
static PyObject *c_kernel_compile(PyObject *m, PyObject *args)
{
    (void)m;
    const char *src, *name;
    int arch;
    if (!PyArg_ParseTuple(args, "ssi", &src, &name, &arch)) return NULL;
    ck_kernel_image img;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_kernel_compile(src, name, NULL, 0, arch, &img);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = Py_BuildValue("(y#id)", (const char *)img.data, (Py_ssize_t)img.size, img.from_disk, img.compile_ms);
    ck_kernel_image_free(&img);
    return r;
}

static PyObject *c_add_library_dir(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(arg);
    if (!s) return NULL;
    ck_platform_add_search_dir(s);
    Py_RETURN_NONE;
}

PyMethodDef ck_py_cuda_functions[] = {
    {"_cuda_is_available", c_is_available, METH_NOARGS, NULL},
    {"_cuda_device_count", c_device_count, METH_NOARGS, NULL},
    {"_cuda_unavailable_reason", c_unavailable_reason, METH_NOARGS, NULL},
    {"_cuda_properties", c_properties, METH_O, NULL},
    {"_cuda_mem_info", c_mem_info, METH_O, NULL},
    {"_cuda_synchronize", c_synchronize, METH_O, NULL},
    {"_cuda_get_device", c_get_device, METH_NOARGS, NULL},
    {"_cuda_set_device", c_set_device, METH_O, NULL},
    {"_cuda_stream_create", c_stream_create, METH_VARARGS, NULL},
    {"_cuda_stream_destroy", c_stream_destroy, METH_VARARGS, NULL},
    {"_cuda_stream_synchronize", c_stream_synchronize, METH_VARARGS, NULL},
    {"_cuda_stream_query", c_stream_query, METH_VARARGS, NULL},
    {"_cuda_stream_wait_event", c_stream_wait_event, METH_VARARGS, NULL},
    {"_cuda_set_stream", c_set_stream, METH_VARARGS, NULL},
    {"_cuda_get_stream", c_get_stream, METH_O, NULL},
    {"_cuda_event_create", c_event_create, METH_VARARGS, NULL},
    {"_cuda_event_destroy", c_event_destroy, METH_VARARGS, NULL},
    {"_cuda_event_record", c_event_record, METH_VARARGS, NULL},
    {"_cuda_event_synchronize", c_event_synchronize, METH_VARARGS, NULL},
    {"_cuda_event_query", c_event_query, METH_VARARGS, NULL},
    {"_cuda_event_elapsed", c_event_elapsed, METH_VARARGS, NULL},
    {"_cuda_memory_stats", c_memory_stats, METH_O, NULL},
    {"_cuda_empty_cache", c_empty_cache, METH_O, NULL},
    {"_cuda_set_memory_limit", c_set_memory_limit, METH_VARARGS, NULL},
    {"_cuda_reset_peak", c_reset_peak, METH_O, NULL},
    {"_add_library_dir", c_add_library_dir, METH_O, NULL},
    {"_cuda_pinned_empty", c_pinned_empty, METH_VARARGS, NULL},
    {"_kernel_compile", c_kernel_compile, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
