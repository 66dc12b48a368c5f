/* The functions behind cudakit.cuda: devices, streams, events, memory, on
 * whichever device they name (the CPU's are host-ordered, see
 * include/cudakit_device.h).  Streams and events travel to Python as
 * integers (their handles), with the device they belong to. */
#include "ck_python.h"

#include <string.h>

/* A device argument: a device-like object (None: the default device). */
static int dev_arg(PyObject *o, ck_device *dev)
{
    int has = 0;
    if (ck_py_device_from_obj(o, dev, &has) < 0) return -1;
    if (!has) *dev = ck_py_default_device();
    return 0;
}

/* A usable device argument, or -1 with the one error naming why not. */
static int usable_dev_arg(PyObject *o, ck_device *dev)
{
    if (dev_arg(o, dev) < 0) return -1;
    ck_status s = ck_device_check(*dev);
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static PyObject *handle_obj(void *h)
{
    if (!h) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(h);
}

/* (device, handle) or (device, handle, handle) of a call, None as NULL. */
static int handles(PyObject *args, ck_device *dev, void **a, void **b)
{
    PyObject *devo, *ao, *bo = Py_None;
    if (!(b ? PyArg_ParseTuple(args, "OOO", &devo, &ao, &bo) : PyArg_ParseTuple(args, "OO", &devo, &ao))) return -1;
    *a = ao == Py_None ? NULL : PyLong_AsVoidPtr(ao);
    if (b) *b = bo == Py_None ? NULL : PyLong_AsVoidPtr(bo);
    if (PyErr_Occurred()) return -1;
    return usable_dev_arg(devo, dev);
}

/* The answer of a call that may wait, run with the GIL released. */
#define CK_PY_WAIT(call)                        \
    do {                                        \
        ck_status s_;                           \
        Py_BEGIN_ALLOW_THREADS                  \
        s_ = (call);                            \
        Py_END_ALLOW_THREADS                    \
        if (s_ != CK_OK) return ck_py_raise(s_); \
    } while (0)

#define CK_PY_TRY(call)                             \
    do {                                            \
        ck_status s_ = (call);                      \
        if (s_ != CK_OK) return ck_py_raise(s_);    \
    } while (0)

/* ------------------------------------------------------------- devices */

static PyObject *c_is_available(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyBool_FromLong(ck_device_count(CK_DEVICE_CUDA) > 0);
}

static PyObject *c_device_count(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(ck_device_count(CK_DEVICE_CUDA));
}

static PyObject *c_unavailable_reason(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (ck_device_count(CK_DEVICE_CUDA) > 0) Py_RETURN_NONE;
    return PyUnicode_FromString(ck_device_unavailable_reason());
}

/* _device_check(device): the device, or the one error saying why it cannot be used. */
static PyObject *c_device_check(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    return ck_py_device_new(dev);
}

static PyObject *c_properties(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    ck_device_props p;
    CK_PY_TRY(ck_device_properties(dev, &p));
    return Py_BuildValue("{s:s,s:(ii),s:K,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "name", p.name, "compute_capability",
                         p.cc_major, p.cc_minor, "total_memory", (unsigned long long)p.total_memory,
                         "multi_processor_count", p.multi_processor_count, "max_threads_per_multiprocessor",
                         p.max_threads_per_multiprocessor, "max_threads_per_block", p.max_threads_per_block,
                         "shared_memory_per_block", p.shared_memory_per_block, "l2_cache_size", p.l2_cache_size,
                         "memory_bus_width", p.memory_bus_width, "warp_size", p.warp_size);
}

static PyObject *c_mem_info(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    size_t fr = 0, tot = 0;
    CK_PY_TRY(ck_device_mem_info(dev, &fr, &tot));
    return Py_BuildValue("(KK)", (unsigned long long)fr, (unsigned long long)tot);
}

static PyObject *c_synchronize(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    CK_PY_WAIT(ck_device_synchronize(dev));
    Py_RETURN_NONE;
}

/* The GPU this thread works on when "cuda" names no index. */
static PyObject *c_get_device(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    return PyLong_FromLong(ck_device_current(CK_DEVICE_CUDA).index);
}

static PyObject *c_set_device(PyObject *m, PyObject *arg)
{
    (void)m;
    long i = PyLong_AsLong(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    ck_device dev = {CK_DEVICE_CUDA, (int)i};
    CK_PY_TRY(ck_device_set_current(dev));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------- streams */

/* _stream_create(device, non_blocking=True, priority=0) -> handle */
static PyObject *c_stream_create(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *devo;
    int nonblocking = 1, priority = 0;
    if (!PyArg_ParseTuple(args, "O|pi", &devo, &nonblocking, &priority)) return NULL;
    ck_device dev;
    if (usable_dev_arg(devo, &dev) < 0) return NULL;
    ck_stream st;
    CK_PY_TRY(ck_stream_create(dev, nonblocking, priority, &st));
    return PyLong_FromVoidPtr(st);
}

static PyObject *c_stream_destroy(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    CK_PY_TRY(ck_stream_destroy(dev, (ck_stream)h));
    Py_RETURN_NONE;
}

static PyObject *c_stream_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    CK_PY_WAIT(ck_stream_synchronize(dev, (ck_stream)h));
    Py_RETURN_NONE;
}

static PyObject *c_stream_query(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    int done = 0;
    CK_PY_TRY(ck_stream_query(dev, (ck_stream)h, &done));
    return PyBool_FromLong(done);
}

static PyObject *c_stream_wait_event(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *st, *ev;
    if (handles(args, &dev, &st, &ev) < 0) return NULL;
    CK_PY_TRY(ck_stream_wait_event(dev, (ck_stream)st, (ck_event)ev));
    Py_RETURN_NONE;
}

static PyObject *c_stream_priority_range(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    int least = 0, greatest = 0;
    CK_PY_TRY(ck_stream_priority_range(dev, &least, &greatest));
    return Py_BuildValue("(ii)", least, greatest);
}

/* _stream_set_current(device, handle) -> the previous handle */
static PyObject *c_set_stream(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    ck_stream prev = ck_stream_current(dev);
    ck_stream_set_current(dev, (ck_stream)h);
    return handle_obj(prev);
}

static PyObject *c_get_stream(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    return handle_obj(ck_stream_current(dev));
}

/* -------------------------------------------------------------- events */

static PyObject *c_event_create(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *devo;
    int timing = 1;
    if (!PyArg_ParseTuple(args, "O|p", &devo, &timing)) return NULL;
    ck_device dev;
    if (usable_dev_arg(devo, &dev) < 0) return NULL;
    ck_event e;
    CK_PY_TRY(ck_event_create(dev, timing, &e));
    return PyLong_FromVoidPtr(e);
}

static PyObject *c_event_destroy(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    CK_PY_TRY(ck_event_destroy(dev, (ck_event)h));
    Py_RETURN_NONE;
}

static PyObject *c_event_record(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *ev, *st;
    if (handles(args, &dev, &ev, &st) < 0) return NULL;
    CK_PY_TRY(ck_event_record(dev, (ck_event)ev, (ck_stream)st));
    Py_RETURN_NONE;
}

static PyObject *c_event_synchronize(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    CK_PY_WAIT(ck_event_synchronize(dev, (ck_event)h));
    Py_RETURN_NONE;
}

static PyObject *c_event_query(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *h;
    if (handles(args, &dev, &h, NULL) < 0) return NULL;
    int done = 0;
    CK_PY_TRY(ck_event_query(dev, (ck_event)h, &done));
    return PyBool_FromLong(done);
}

static PyObject *c_event_elapsed(PyObject *m, PyObject *args)
{
    (void)m;
    ck_device dev;
    void *a, *b;
    if (handles(args, &dev, &a, &b) < 0) return NULL;
    float ms = 0;
    CK_PY_TRY(ck_event_elapsed_ms(dev, (ck_event)a, (ck_event)b, &ms));
    return PyFloat_FromDouble(ms);
}

/* -------------------------------------------------------------- memory */

static PyObject *c_memory_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    ck_mem_stats st;
    CK_PY_TRY(ck_memory_stats(dev, &st));
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "allocated_bytes", (unsigned long long)st.allocated,
                         "peak_allocated_bytes", (unsigned long long)st.peak_allocated, "cached_bytes",
                         (unsigned long long)st.cached, "reserved_bytes", (unsigned long long)st.reserved,
                         "limit_bytes", (unsigned long long)st.limit, "num_allocs", (unsigned long long)st.n_alloc,
                         "num_device_allocs", (unsigned long long)st.n_system_alloc, "num_ooms",
                         (unsigned long long)st.n_oom);
}

static PyObject *c_empty_cache(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    CK_PY_WAIT(ck_memory_empty_cache(dev));
    Py_RETURN_NONE;
}

static PyObject *c_set_memory_limit(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *devo;
    unsigned long long lim;
    if (!PyArg_ParseTuple(args, "OK", &devo, &lim)) return NULL;
    ck_device dev;
    if (usable_dev_arg(devo, &dev) < 0) return NULL;
    CK_PY_TRY(ck_memory_set_limit(dev, (size_t)lim));
    Py_RETURN_NONE;
}

static PyObject *c_reset_peak(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    if (usable_dev_arg(arg, &dev) < 0) return NULL;
    CK_PY_TRY(ck_memory_reset_peak(dev));
    Py_RETURN_NONE;
}

static PyObject *c_pinned_empty(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *shape, *dt = Py_None;
    if (!PyArg_ParseTuple(args, "O|O", &shape, &dt)) return NULL;
    int nd;
    int64_t sh[CK_MAXDIMS];
    ck_dtype t;
    if (ck_py_shape_from_obj(shape, &nd, sh) < 0 || ck_py_dtype_from_obj(dt, CK_FLOAT64, &t) < 0) return NULL;
    ck_array a;
    CK_PY_TRY(ck_pinned_empty(&a, nd, sh, t));
    return ck_py_wrap(&a, NULL);
}

/* Compile CUDA C with NVRTC through the disk cache (no GPU needed):
 * _kernel_compile(source, name, arch[, options]) -> (image bytes,
 * from_disk, compile_ms).  For tests and tools. */
static PyObject *c_kernel_compile(PyObject *m, PyObject *args)
{
    (void)m;
    const char *src, *name;
    int arch;
    PyObject *opts = NULL;
    if (!PyArg_ParseTuple(args, "ssi|O", &src, &name, &arch, &opts)) return NULL;
    const char *ov[64];
    int no = 0;
    PyObject *fast = NULL;   /* holds the option strings until the compile is done */
    if (opts && opts != Py_None) {
        fast = PySequence_Fast(opts, "options must be a sequence of str");
        if (!fast) return NULL;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        if (n > 64) {
            Py_DECREF(fast);
            return PyErr_Format(PyExc_ValueError, "at most 64 options");
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            ov[no] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
            if (!ov[no++]) { Py_DECREF(fast); return NULL; }
        }
    }
    ck_cubin img;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_cuda_compile_ex(src, name, ov, no, arch, &img);
    Py_END_ALLOW_THREADS
    Py_XDECREF(fast);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *r = Py_BuildValue("(y#id)", (const char *)img.data, (Py_ssize_t)img.size, img.from_disk, img.compile_ms);
    ck_cubin_free(&img);
    return r;
}

/* The kernel time limit in seconds (None or 0: none); the previous one. */
static PyObject *c_set_kernel_timeout(PyObject *m, PyObject *arg)
{
    (void)m;
    double prev = ck_kernel_timeout_get(), sec = 0;
    if (arg != Py_None) {
        sec = PyFloat_AsDouble(arg);
        if (sec == -1 && PyErr_Occurred()) return NULL;
    }
    CK_PY_TRY(ck_kernel_timeout_set(sec));
    if (prev == 0) Py_RETURN_NONE;
    return PyFloat_FromDouble(prev);
}

static PyObject *c_add_library_dir(PyObject *m, PyObject *arg)
{
    (void)m;
    const char *s = PyUnicode_AsUTF8(arg);
    if (!s) return NULL;
    ck_add_library_dir(s);
    Py_RETURN_NONE;
}

PyMethodDef ck_py_cuda_functions[] = {
    CK_DEF_NOARGS(_cuda_is_available, c_is_available, "()", "Whether a CUDA GPU can be used."),
    CK_DEF_NOARGS(_cuda_device_count, c_device_count, "()", "The number of CUDA GPUs."),
    CK_DEF_NOARGS(_cuda_unavailable_reason, c_unavailable_reason, "()", "Why no GPU can be used (None when one can)."),
    CK_DEF_NOARGS(_cuda_get_device, c_get_device, "()", "The current GPU's ordinal."),
    CK_DEF_O(_cuda_set_device, c_set_device, "(index, /)", "Make a GPU the current one."),
    CK_DEF_O(_device_check, c_device_check, "(device, /)", "Raise unless the device can be used."),
    CK_DEF_O(_device_properties, c_properties, "(device, /)", "The device's properties, as a dict."),
    CK_DEF_O(_device_mem_info, c_mem_info, "(device, /)", "(free, total) bytes of the device."),
    CK_DEF_O(_device_synchronize, c_synchronize, "(device, /)", "Wait for the device's work."),
    CK_DEF_VARARGS(_stream_create, c_stream_create, "(device, non_blocking=True, priority=0, /)", "A new stream's handle."),
    CK_DEF_VARARGS(_stream_destroy, c_stream_destroy, "(device, stream, /)", "Free a stream."),
    CK_DEF_VARARGS(_stream_synchronize, c_stream_synchronize, "(device, stream, /)", "Wait for a stream's work."),
    CK_DEF_VARARGS(_stream_query, c_stream_query, "(device, stream, /)", "Whether a stream's work is done."),
    CK_DEF_VARARGS(_stream_wait_event, c_stream_wait_event, "(device, stream, event, /)",
                   "Work queued on the stream from now on waits for the event."),
    CK_DEF_O(_stream_priority_range, c_stream_priority_range, "(device, /)", "(least, greatest) stream priority."),
    CK_DEF_VARARGS(_stream_set_current, c_set_stream, "(device, stream, /)", "Make a stream the device's current one."),
    CK_DEF_O(_stream_get_current, c_get_stream, "(device, /)", "The device's current stream's handle."),
    CK_DEF_VARARGS(_event_create, c_event_create, "(device, timing=True, /)", "A new event's handle."),
    CK_DEF_VARARGS(_event_destroy, c_event_destroy, "(device, event, /)", "Free an event."),
    CK_DEF_VARARGS(_event_record, c_event_record, "(device, event, stream, /)", "Record an event on a stream."),
    CK_DEF_VARARGS(_event_synchronize, c_event_synchronize, "(device, event, /)", "Wait for an event."),
    CK_DEF_VARARGS(_event_query, c_event_query, "(device, event, /)", "Whether an event's work is done."),
    CK_DEF_VARARGS(_event_elapsed, c_event_elapsed, "(device, start, end, /)", "Milliseconds between two events."),
    CK_DEF_O(_memory_stats, c_memory_stats, "(device, /)", "The allocator's figures, as a dict."),
    CK_DEF_O(_memory_empty_cache, c_empty_cache, "(device, /)", "Give the allocator's cached blocks back."),
    CK_DEF_VARARGS(_memory_set_limit, c_set_memory_limit, "(device, limit, /)", "Cap the allocator's bytes (0: none)."),
    CK_DEF_O(_memory_reset_peak, c_reset_peak, "(device, /)", "Start the peak figures again."),
    CK_DEF_VARARGS(_pinned_empty, c_pinned_empty, "(shape, dtype=None, /)", "A CPU array in page-locked memory."),
    CK_DEF_O(_add_library_dir, c_add_library_dir, "(path, /)", "Look for the CUDA libraries in path too."),
    CK_DEF_O(_set_kernel_timeout, c_set_kernel_timeout, "(seconds, /)", "The watchdog of a kernel's run."),
    CK_DEF_VARARGS(_kernel_compile, c_kernel_compile, "(source, name, arch, options=None, /)",
                   "NVRTC's PTX of a source for an architecture."),
    {NULL, NULL, 0, NULL},
};
