/* The profiler, NVTX and the sync debug mode: cudakit.profiler's and
 * cudakit.cuda's doors to include/cudakit_profiler.h. */
#include "ck_python.h"
#include "cudakit_profiler.h"
#include "cudakit_device.h"

static const char *const kind_names_[CK_PROF_KIND_COUNT] = {"op", "kernel", "copy", "range"};

static PyObject *py_start(PyObject *self, PyObject *args)
{
    (void)self;
    int nvtx = 0;
    if (!PyArg_ParseTuple(args, "|p", &nvtx)) return NULL;
    ck_status s = ck_profiler_start(nvtx ? CK_PROF_NVTX : 0);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *py_stop(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_profiler_stop();
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *py_enabled(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    return PyBool_FromLong(ck_profiler_enabled());
}

static PyObject *py_clear(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    ck_profiler_clear();
    Py_RETURN_NONE;
}

static PyObject *dim3(const unsigned v[3]) { return Py_BuildValue("(III)", v[0], v[1], v[2]); }

/* The records as tuples: (kind, name, device, thread, depth, parent, stream,
 * host_start_us, host_end_us, dev_start_us, dev_us, grid, block, shared_mem,
 * bytes, shapes, dtypes); device times None where there are none. */
static PyObject *py_records(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    if (ck_profiler_enabled()) {
        PyErr_SetString(PyExc_RuntimeError, "the profile is still on: its records are read after it stops");
        return NULL;
    }
    int64_t n = ck_profiler_count();
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (int64_t i = 0; i < n; i++) {
        const ck_prof_record *r = ck_profiler_record(i);
        char dev[32];
        ck_device_str(r->dev, dev, sizeof dev);
        PyObject *ds = r->dev_us >= 0 ? PyFloat_FromDouble(r->dev_start_us) : Py_NewRef(Py_None);
        PyObject *du = r->dev_us >= 0 ? PyFloat_FromDouble(r->dev_us) : Py_NewRef(Py_None);
        PyObject *g = dim3(r->grid), *b = dim3(r->block);
        PyObject *t = ds && du && g && b
            ? Py_BuildValue("(sssiiLKddOOOOnKss)", kind_names_[r->kind], r->name, dev, r->thread, r->depth,
                            (long long)r->parent, (unsigned long long)r->stream, r->host_start_ns / 1e3,
                            r->host_end_ns / 1e3, ds, du, g, b, (Py_ssize_t)r->shared_mem,
                            (unsigned long long)r->bytes, r->shapes, r->dtypes)
            : NULL;
        Py_XDECREF(ds); Py_XDECREF(du); Py_XDECREF(g); Py_XDECREF(b);
        if (!t) { Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

/* (name, kind, device, shapes, count, host_total_us, host_self_us,
 * dev_total_us, dev_self_us, bytes), device times None where none. */
static PyObject *py_averages(PyObject *self, PyObject *args)
{
    (void)self;
    int by_shapes = 0;
    if (!PyArg_ParseTuple(args, "|p", &by_shapes)) return NULL;
    ck_prof_average *a;
    int64_t n;
    ck_status s = ck_profiler_averages(by_shapes, &a, &n);
    if (s != CK_OK) return ck_py_raise(s);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; list && i < n; i++) {
        char dev[32];
        ck_device_str(a[i].dev, dev, sizeof dev);
        PyObject *dt = a[i].dev_total_us >= 0 ? PyFloat_FromDouble(a[i].dev_total_us) : Py_NewRef(Py_None);
        PyObject *dsf = a[i].dev_total_us >= 0 ? PyFloat_FromDouble(a[i].dev_self_us) : Py_NewRef(Py_None);
        PyObject *t = dt && dsf ? Py_BuildValue("(ssssLddOOK)", a[i].name, kind_names_[a[i].kind], dev, a[i].shapes,
                                                (long long)a[i].count, a[i].host_total_us, a[i].host_self_us, dt, dsf,
                                                (unsigned long long)a[i].bytes)
                                : NULL;
        Py_XDECREF(dt); Py_XDECREF(dsf);
        if (!t) { Py_CLEAR(list); break; }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    free(a);
    return list;
}

static PyObject *py_export(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(arg, &b)) return NULL;
    ck_status s = ck_profiler_export_chrome_trace(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *py_range_push(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    ck_status s = ck_profiler_range_push(name);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *py_range_pop(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    ck_status s = ck_profiler_range_pop();
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ NVTX */

static PyObject *py_nvtx_push(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    ck_nvtx_range_push(name);
    Py_RETURN_NONE;
}

static PyObject *py_nvtx_pop(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    ck_nvtx_range_pop();
    Py_RETURN_NONE;
}

static PyObject *py_nvtx_mark(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    ck_nvtx_mark(name);
    Py_RETURN_NONE;
}

static PyObject *py_nvtx_available(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    return PyBool_FromLong(ck_nvtx_available());
}

/* ------------------------------------------------------ sync debug mode */

/* A warning from the core: warnings.warn, with the GIL (a wait may run
 * without it).  Nonzero when a filter made it an error: the core then
 * fails the call, and the exception the filter raised is dropped for the
 * core's RuntimeError, which carries the same message. */
static int warn_handler(const char *msg)
{
    PyGILState_STATE g = PyGILState_Ensure();
    int bad = PyErr_WarnEx(PyExc_UserWarning, msg, 1) < 0;
    if (bad) PyErr_Clear();
    PyGILState_Release(g);
    return bad;
}

static PyObject *py_set_sync_mode(PyObject *self, PyObject *arg)
{
    (void)self;
    long m = PyLong_AsLong(arg);
    if (m == -1 && PyErr_Occurred()) return NULL;
    if (m < 0 || m > 2) return PyErr_Format(PyExc_ValueError, "sync debug mode must be 0, 1 or 2, got %ld", m);
    ck_sync_set_warn_handler(warn_handler);
    ck_sync_set_debug_mode((ck_sync_mode)m);
    Py_RETURN_NONE;
}

static PyObject *py_get_sync_mode(PyObject *self, PyObject *unused)
{
    (void)self; (void)unused;
    return PyLong_FromLong((long)ck_sync_debug_mode());
}

PyMethodDef ck_py_profiler_functions[] = {
    CK_DEF_VARARGS(_profiler_start, py_start, "(nvtx=False, /)", "Start recording."),
    CK_DEF_NOARGS(_profiler_stop, py_stop, "()", "Stop recording; waits for the devices and resolves device times."),
    CK_DEF_NOARGS(_profiler_enabled, py_enabled, "()", "Whether a profile is on."),
    CK_DEF_NOARGS(_profiler_clear, py_clear, "()", "Drop the records."),
    CK_DEF_NOARGS(_profiler_records, py_records, "()", "The records as tuples."),
    CK_DEF_VARARGS(_profiler_averages, py_averages, "(group_by_shapes=False, /)", "The records grouped by name."),
    CK_DEF_O(_profiler_export_chrome_trace, py_export, "(path, /)", "Write the records as a Chrome trace."),
    CK_DEF_O(_profiler_range_push, py_range_push, "(name, /)", "Open a user range."),
    CK_DEF_NOARGS(_profiler_range_pop, py_range_pop, "()", "Close the innermost user range."),
    CK_DEF_O(_nvtx_range_push, py_nvtx_push, "(name, /)", "Push an NVTX range."),
    CK_DEF_NOARGS(_nvtx_range_pop, py_nvtx_pop, "()", "Pop an NVTX range."),
    CK_DEF_O(_nvtx_mark, py_nvtx_mark, "(name, /)", "An NVTX mark."),
    CK_DEF_NOARGS(_nvtx_available, py_nvtx_available, "()", "Whether libnvToolsExt was found."),
    CK_DEF_O(_set_sync_debug_mode, py_set_sync_mode, "(mode, /)", "The sync debug mode: 0 default, 1 warn, 2 error."),
    CK_DEF_NOARGS(_get_sync_debug_mode, py_get_sync_mode, "()", "The sync debug mode."),
    {NULL, NULL, 0, NULL},
};
