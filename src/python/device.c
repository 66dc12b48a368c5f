/* cudakit.Device and the default device. */
#include "ck_python.h"

#include <stdlib.h>
#include <string.h>

/* "cpu", "cuda", "cuda:1", "gpu" -> device; -1 with ValueError. */
static int device_from_str(const char *s, long index, ck_device *out)
{
    const char *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (colon) {
        char *end;
        long i = strtol(colon + 1, &end, 10);
        if (*end || end == colon + 1 || i < 0) goto bad;
        if (index >= 0 && index != i) goto bad;
        index = i;
    }
    if (n == 3 && strncmp(s, "cpu", 3) == 0) {
        if (index > 0) goto bad;
        out->type = CK_DEVICE_CPU;
        out->index = 0;
        return 0;
    }
    if ((n == 4 && strncmp(s, "cuda", 4) == 0) || (n == 3 && strncmp(s, "gpu", 3) == 0)) {
        out->type = CK_DEVICE_CUDA;
        out->index = index < 0 ? 0 : (int)index;
        return 0;
    }
bad:
    PyErr_Format(PyExc_ValueError, "unknown device '%s' (expected 'cpu', 'cuda' or 'cuda:N')", s);
    return -1;
}

int ck_py_device_from_obj(PyObject *obj, ck_device *out, int *has)
{
    *has = 0;
    if (!obj || obj == Py_None) return 0;
    *has = 1;
    if (Py_IS_TYPE(obj, &CkDevice_Type)) { *out = ((CkDeviceObject *)obj)->dev; return 0; }
    if (PyUnicode_Check(obj)) {
        const char *s = PyUnicode_AsUTF8(obj);
        return s ? device_from_str(s, -1, out) : -1;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {   /* an int is a GPU ordinal, as in PyTorch */
        long i = PyLong_AsLong(obj);
        if (i < 0) { if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "device index must be >= 0"); return -1; }
        out->type = CK_DEVICE_CUDA;
        out->index = (int)i;
        return 0;
    }
    /* ck.cuda.Device objects and other libraries' devices: str() them */
    PyObject *id = PyObject_GetAttrString(obj, "id");
    if (id && PyLong_Check(id)) {
        out->type = CK_DEVICE_CUDA;
        out->index = (int)PyLong_AsLong(id);
        Py_DECREF(id);
        return 0;
    }
    Py_XDECREF(id);
    PyErr_Clear();
    PyObject *s = PyObject_Str(obj);
    if (!s) return -1;
    const char *cs = PyUnicode_AsUTF8(s);
    int r = cs ? device_from_str(cs, -1, out) : -1;
    Py_DECREF(s);
    return r;
}

PyObject *ck_py_device_new(ck_device dev)
{
    /* CPU devices are interned: arr.device is on hot paths of user code */
    static CkDeviceObject *cpu;
    if (dev.type == CK_DEVICE_CPU && cpu) return Py_NewRef((PyObject *)cpu);
    CkDeviceObject *d = PyObject_New(CkDeviceObject, &CkDevice_Type);
    if (!d) return NULL;
    d->dev = dev;
    if (dev.type == CK_DEVICE_CPU) cpu = (CkDeviceObject *)Py_NewRef((PyObject *)d);
    return (PyObject *)d;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)type;
    PyObject *spec;
    PyObject *index = Py_None;
    static char *kwlist[] = {"type", "index", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &spec, &index)) return NULL;
    ck_device d;
    if (PyUnicode_Check(spec)) {
        long i = -1;
        if (index != Py_None) {
            i = PyLong_AsLong(index);
            if (i == -1 && PyErr_Occurred()) return NULL;
            if (i < 0) { PyErr_SetString(PyExc_ValueError, "device index must be >= 0"); return NULL; }
        }
        const char *s = PyUnicode_AsUTF8(spec);
        if (!s || device_from_str(s, i, &d) < 0) return NULL;
    } else {
        int has;
        if (ck_py_device_from_obj(spec, &d, &has) < 0) return NULL;
    }
    return ck_py_device_new(d);
}

static PyObject *device_str(PyObject *self)
{
    char b[32];
    ck_device_str(((CkDeviceObject *)self)->dev, b, sizeof b);
    return PyUnicode_FromString(b);
}

static PyObject *device_repr(PyObject *self)
{
    ck_device d = ((CkDeviceObject *)self)->dev;
    if (d.type == CK_DEVICE_CPU) return PyUnicode_FromString("Device('cpu')");
    return PyUnicode_FromFormat("Device('cuda', %d)", d.index);
}

static Py_hash_t device_hash(PyObject *self)
{
    ck_device d = ((CkDeviceObject *)self)->dev;
    return (Py_hash_t)(d.type * 1024 + d.index + 1);
}

static PyObject *device_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
    int eq = 0;
    if (Py_IS_TYPE(other, &CkDevice_Type)) {
        eq = ck_device_equal(((CkDeviceObject *)self)->dev, ((CkDeviceObject *)other)->dev);
    } else if (PyUnicode_Check(other)) {
        ck_device d;
        int has;
        if (ck_py_device_from_obj(other, &d, &has) < 0) PyErr_Clear();
        else eq = ck_device_equal(((CkDeviceObject *)self)->dev, d);
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *device_get_type(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((CkDeviceObject *)self)->dev.type == CK_DEVICE_CPU ? "cpu" : "cuda");
}

static PyObject *device_get_index(PyObject *self, void *c)
{
    (void)c;
    ck_device d = ((CkDeviceObject *)self)->dev;
    if (d.type == CK_DEVICE_CPU) Py_RETURN_NONE;
    return PyLong_FromLong(d.index);
}

static PyObject *device_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *s = device_str(self);
    if (!s) return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), s);
}

static PyGetSetDef device_getset[] = {
    {"type", device_get_type, NULL, "'cpu' or 'cuda'", NULL},
    {"index", device_get_index, NULL, "the GPU ordinal (None for the CPU)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef device_methods[] = {
    CK_DEF_NOARGS(__reduce__, device_reduce, "($self, /)", "Pickling: the device by its name."),
    {NULL, NULL, 0, NULL},
};

PyTypeObject CkDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.Device",
    .tp_basicsize = sizeof(CkDeviceObject),
    .tp_repr = device_repr,
    .tp_str = device_str,
    .tp_hash = device_hash,
    .tp_richcompare = device_richcompare,
    .tp_getset = device_getset,
    .tp_methods = device_methods,
    .tp_new = device_new,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Device(type, index=None)\n--\n\n"
              "Where an array lives: Device('cpu'), Device('cuda', 0) or Device('cuda:0') (also from another "
              "Device, a cudakit.cuda.Device or a GPU ordinal).",
};

/* ------------------------------------------------------------ default */

static int ck_default_chosen_;

/* The default device, decided once: CUDAKIT_DEVICE when set (a GPU that
 * cannot be used then gives the one error at the first array made), else
 * the first GPU when one is usable, else the CPU (said once). */
ck_device ck_py_default_device(void)
{
    if (ck_default_chosen_) return ck_device_default();
    ck_device dev = ck_device_cpu();
    const char *env = getenv("CUDAKIT_DEVICE");
    if (env && *env) {
        if (device_from_str(env, -1, &dev) < 0) {
            /* a bad setting must not break every creation call: say so, use the CPU */
            PyErr_Clear();
            PySys_WriteStderr("cudakit: ignoring CUDAKIT_DEVICE=%.64s (expected cpu, cuda or cuda:N)\n", env);
            dev = ck_device_cpu();
        }
    } else if (ck_device_count(CK_DEVICE_CUDA) > 0) {
        dev.type = CK_DEVICE_CUDA;
        dev.index = 0;
    } else {
        PySys_WriteStderr("cudakit: no usable GPU found, arrays live on the CPU "
                          "(set CUDAKIT_DEVICE=cpu to silence this)\n");
    }
    ck_device_set_default(dev);
    ck_default_chosen_ = 1;
    return dev;
}

PyObject *ck_py_get_default_device(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return ck_py_device_new(ck_py_default_device());
}

PyObject *ck_py_set_default_device(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device d;
    int has;
    if (ck_py_device_from_obj(arg, &d, &has) < 0) return NULL;
    if (!has) d = ck_device_cpu();
    ck_status s = ck_device_check(d);
    if (s != CK_OK) return ck_py_raise(s);
    ck_device_set_default(d);
    ck_default_chosen_ = 1;
    Py_RETURN_NONE;
}
