/* The face of include/cudakit_graph.h: _core.Graph (one ck_graph, freed
 * with the object), the capture state, asynchronous copies, and the check
 * the Python layer's host reads of CPU arrays make during a capture. */
#include "interop.h"
#include "cudakit_graph.h"

typedef struct {
    PyObject_HEAD
    ck_graph *g;
    PyObject *keep;      /* objects the capture used (kernels), kept while the graph lives */
} CkGraph;

static PyTypeObject CkGraph_Type;

int ck_py_refuse_host_read(const ck_array *a, const char *what)
{
    ck_device d = ck_array_device(a);
    if (d.type != CK_DEVICE_CPU) return 0;
    ck_status s = ck_graph_refuse(d, what);
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static PyObject *graph_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"device", NULL};
    PyObject *devo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:Graph", kwlist, &devo)) return NULL;
    ck_device dev;
    int has = 0;
    if (ck_py_device_from_obj(devo, &dev, &has) < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    CkGraph *self = (CkGraph *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    ck_status s = ck_graph_create(dev, &self->g);
    if (s != CK_OK) {
        Py_DECREF(self);
        return ck_py_raise(s);
    }
    self->keep = PyList_New(0);
    if (!self->keep) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void graph_dealloc(CkGraph *self)
{
    if (self->g) {
        Py_BEGIN_ALLOW_THREADS
        ck_graph_free(self->g);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *graph_capture_begin(CkGraph *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"stream", "pool", NULL};
    PyObject *so = Py_None, *po = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:capture_begin", kwlist, &so, &po)) return NULL;
    ck_stream st = so == Py_None ? NULL : (ck_stream)PyLong_AsVoidPtr(so);
    if (PyErr_Occurred()) return NULL;
    ck_graph *pool = NULL;
    if (po != Py_None) {
        if (!PyObject_TypeCheck(po, &CkGraph_Type)) {
            PyErr_Format(PyExc_TypeError, "pool must be a graph's pool handle, not %.100s", Py_TYPE(po)->tp_name);
            return NULL;
        }
        pool = ((CkGraph *)po)->g;
    }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_graph_capture_begin(self->g, st, pool);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *graph_capture_end(CkGraph *self, PyObject *u)
{
    (void)u;
    ck_status s = ck_graph_capture_end(self->g);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *graph_replay(CkGraph *self, PyObject *u)
{
    (void)u;
    ck_status s;
    if (ck_graph_device(self->g).type == CK_DEVICE_CPU) {
        /* the records run here, as long as the work takes */
        Py_BEGIN_ALLOW_THREADS
        s = ck_graph_replay(self->g);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_graph_replay(self->g);
    }
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *graph_reset(CkGraph *self, PyObject *u)
{
    (void)u;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_graph_reset(self->g);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    if (PyList_SetSlice(self->keep, 0, PyList_GET_SIZE(self->keep), NULL) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *graph_keep(CkGraph *self, PyObject *o)
{
    if (PyList_Append(self->keep, o) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *graph_get_nodes(CkGraph *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(ck_graph_node_count(self->g));
}

static PyObject *graph_get_pool_bytes(CkGraph *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(ck_graph_pool_bytes(self->g));
}

static PyObject *graph_get_device(CkGraph *self, void *c)
{
    (void)c;
    return ck_py_device_new(ck_graph_device(self->g));
}

static PyMethodDef graph_methods[] = {
    CK_DEF_KW(capture_begin, graph_capture_begin, "($self, /, stream=None, pool=None)",
              "Capture this thread's work on the graph's device (on stream, None: the current one; pool: another "
              "graph's pool handle to share)."),
    CK_DEF_NOARGS(capture_end, graph_capture_end, "($self, /)", "End the capture; the graph is ready to replay."),
    CK_DEF_NOARGS(replay, graph_replay, "($self, /)", "Run the captured work once, on the current stream."),
    CK_DEF_NOARGS(reset, graph_reset, "($self, /)", "Drop the capture and its memory."),
    CK_DEF_O(_keep, graph_keep, "($self, obj, /)", "Keep an object alive as long as the capture."),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"node_count", (getter)graph_get_nodes, NULL, "Nodes of the captured graph (-1 before a capture).", NULL},
    {"pool_bytes", (getter)graph_get_pool_bytes, NULL, "Bytes the graph's memory pool holds.", NULL},
    {"device", (getter)graph_get_device, NULL, "The device whose work the graph holds.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CkGraph_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core.Graph",
    .tp_basicsize = sizeof(CkGraph),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Graph(device=None)\n--\n\nA captured sequence of work on one device (include/cudakit_graph.h).",
    .tp_new = graph_new,
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

int ck_py_graph_type_init(PyObject *module)
{
    if (PyType_Ready(&CkGraph_Type) < 0) return -1;
    return PyModule_AddObjectRef(module, "Graph", (PyObject *)&CkGraph_Type);
}

/* _graph_capturing(device): whether this thread captures work for it. */
static PyObject *f_graph_capturing(PyObject *m, PyObject *devo)
{
    (void)m;
    ck_device dev;
    int has = 0;
    if (ck_py_device_from_obj(devo, &dev, &has) < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    return PyBool_FromLong(ck_graph_capturing(dev));
}

int ck_py_copy_async_obj(PyObject *dst, PyObject *src, PyObject *stream, int blocking)
{
    if (ck_py_check_ready(dst) < 0 || ck_py_check_ready(src) < 0) return -1;
    ck_device dev = ck_array_device(CK_ARR(dst));
    if (dev.type == CK_DEVICE_CPU) dev = ck_array_device(CK_ARR(src));
    ck_stream st;
    if (ck_py_parse_stream(stream, dev, &st) < 0) return -1;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_array_copy_async(CK_ARR(dst), CK_ARR(src), st);
    if (s == CK_OK && blocking) s = ck_stream_synchronize(dev, st);
    Py_END_ALLOW_THREADS
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

PyObject *ck_py_array_record_stream(PyObject *self, PyObject *stream)
{
    if (ck_py_check_ready(self) < 0) return NULL;
    if (stream == Py_None) return PyErr_Format(PyExc_TypeError, "record_stream: a stream is needed, not None");
    ck_device dev = ck_array_device(CK_ARR(self));
    ck_stream st;
    if (ck_py_parse_stream(stream, dev, &st) < 0) return NULL;
    ck_status s = ck_array_record_stream(CK_ARR(self), st);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

/* _copy_async(dst, src, stream=None): ck_array_copy_async. */
static PyObject *f_copy_async(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *dst, *src, *so = Py_None;
    if (!PyArg_ParseTuple(args, "O!O!|O:_copy_async", &CkArray_Type, &dst, &CkArray_Type, &src, &so)) return NULL;
    if (ck_py_copy_async_obj(dst, src, so, 0) < 0) return NULL;
    Py_RETURN_NONE;
}

PyMethodDef ck_py_graph_functions[] = {
    CK_DEF_O(_graph_capturing, f_graph_capturing, "(device, /)", "Whether this thread captures work for device."),
    CK_DEF_VARARGS(_copy_async, f_copy_async, "(dst, src, stream=None, /)", "ck_array_copy_async of two arrays."),
    {NULL, NULL, 0, NULL},
};
