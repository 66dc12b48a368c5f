/* x.to(...): PyTorch's spelling of to_device and astype, which ck.nn users
 * write (`data.to(device)`); both steps go through the array's own methods. */
#include "ck_python.h"

#include <string.h>

/* A string names a device when it parses as one ("cpu", "cuda:1"); any
 * other string is a dtype ("float32"). */
static int is_device_like(PyObject *o)
{
    if (Py_IS_TYPE(o, &CkDevice_Type)) return 1;
    if (PyLong_Check(o) && !PyBool_Check(o)) return 1;
    if (!PyUnicode_Check(o)) return 0;
    ck_device d;
    int has;
    if (ck_py_device_from_obj(o, &d, &has) == 0) return 1;
    PyErr_Clear();
    return 0;
}

PyObject *ck_py_array_to(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *device = NULL, *dtype = NULL, *copy = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > 2) {
        PyErr_SetString(PyExc_TypeError, "to() takes at most 2 positional arguments (device, dtype)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        if (CkArray_Check(o)) {
            device = o;   /* to(other): other's device and dtype, resolved below */
            dtype = o;
        } else if (o != Py_None && is_device_like(o)) {
            device = o;
        } else if (o != Py_None) {
            dtype = o;
        }
    }
    if (kw) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(kw, &pos, &k, &v)) {
            const char *s = PyUnicode_AsUTF8(k);
            if (!s) return NULL;
            if (!strcmp(s, "device")) device = v;
            else if (!strcmp(s, "dtype")) dtype = v;
            else if (!strcmp(s, "copy")) copy = v;
            else if (strcmp(s, "non_blocking") && strcmp(s, "memory_format")) {
                PyErr_Format(PyExc_TypeError, "to() got an unexpected keyword argument '%s'", s);
                return NULL;
            }
        }
    }
    int want_copy = copy ? PyObject_IsTrue(copy) : 0;
    if (want_copy < 0) return NULL;
    PyObject *r = Py_NewRef(self);
    if (dtype && dtype != Py_None) {
        ck_dtype dt;
        if (CkArray_Check(dtype)) dt = CK_ARR(dtype)->dtype;
        else if (ck_py_dtype_from_obj(dtype, CK_DTYPE_INVALID, &dt) < 0) goto fail;
        if (dt != CK_ARR(self)->dtype) {
            PyObject *c = PyObject_CallMethod(r, "astype", "O", (PyObject *)ck_py_dtypes[dt]);
            Py_SETREF(r, c);
            if (!r) return NULL;
            want_copy = 0;
        }
    }
    if (device && device != Py_None) {
        PyObject *dev = CkArray_Check(device) ? PyObject_GetAttrString(device, "device") : Py_NewRef(device);
        if (!dev) goto fail;
        PyObject *c = PyObject_CallMethod(r, "to_device", "O", dev);
        Py_DECREF(dev);
        if (!c) goto fail;
        if (c != r) want_copy = 0;
        Py_SETREF(r, c);
    }
    if (want_copy && r == self) Py_SETREF(r, PyObject_CallMethod(self, "copy", NULL));
    return r;
fail:
    Py_DECREF(r);
    return NULL;
}
