/*
 * linalg.c - the matrix product of non-CPU arrays (the work is
 * src/ops/linalg.c's) and the TF32 switch.  cudakit.matmul and its kin
 * (python/cudakit/_linalg_top.py) call _matmul for GPU arrays; the CPU's
 * products are NumPy's.
 */
#include "ck_python.h"

/* An array-like operand goes to the device of the array beside it. */
static PyObject *as_array_on(PyObject *obj, PyObject *other)
{
    if (CkArray_Check(obj)) {
        Py_INCREF(obj);
        return obj;
    }
    if (CkArray_Check(other)) return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 1, ck_array_device(CK_ARR(other)));
    return ck_py_asarray(obj, CK_DTYPE_INVALID, -1, 0, ck_device_cpu());
}

static PyObject *py_matmul(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"x1", "x2", "out", NULL};
    PyObject *x1, *x2, *out = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O:matmul", kwlist, &x1, &x2, &out)) return NULL;
    if (out != Py_None && !CkArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "matmul: out must be a cudakit array, not %.100s", Py_TYPE(out)->tp_name);
        return NULL;
    }
    PyObject *a = as_array_on(x1, x2);
    if (!a) return NULL;
    PyObject *b = as_array_on(x2, a);
    if (!b) { Py_DECREF(a); return NULL; }
    ck_status s;
    ck_array r;
    int given = out != Py_None;
    ck_array *dst = given ? CK_ARR(out) : &r;
    if (given) {
        ck_ag_bump_version(dst);
        if (CK_AG_GATE() && (((CkArrayObject *)a)->ag || ((CkArrayObject *)b)->ag || ((CkArrayObject *)out)->ag)) {
            PyErr_SetString(PyExc_RuntimeError, "matmul(): functions with out=... arguments don't support automatic "
                            "differentiation, but one of the arguments requires grad.");
            Py_DECREF(a);
            Py_DECREF(b);
            return NULL;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    s = ck_matmul(dst, CK_ARR(a), CK_ARR(b), given);
    Py_END_ALLOW_THREADS
    PyObject *res = NULL;
    if (s != CK_OK) ck_py_raise(s);
    else if (given) res = Py_NewRef(out);
    else res = ck_py_wrap(&r, NULL);
    if (CK_AG_GATE() && res && !given) res = ck_py_ag_matmul(a, b, res);
    Py_DECREF(a);
    Py_DECREF(b);
    return res;
}

PyObject *ck_py_matmul(PyObject *a, PyObject *b)
{
    ck_array r;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_matmul(&r, CK_ARR(a), CK_ARR(b), 0);
    Py_END_ALLOW_THREADS
    PyObject *res = s == CK_OK ? ck_py_wrap(&r, NULL) : ck_py_raise(s);
    if (CK_AG_GATE() && res) res = ck_py_ag_matmul(a, b, res);
    return res;
}

static PyObject *py_set_allow_tf32(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    ck_matmul_set_allow_tf32(on);
    Py_RETURN_NONE;
}

static PyObject *py_get_allow_tf32(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(ck_matmul_allow_tf32());
}

PyMethodDef ck_py_linalg_functions[] = {
    CK_DEF_KW(_matmul, py_matmul, "(x1, x2, out=None)",
              "The product of arrays on a device with a backend matmul (cuBLAS on CUDA)."),
    CK_DEF_O(_set_allow_tf32, py_set_allow_tf32, "(allow, /)", "Let float32/complex64 GPU products use TF32 (True) or not."),
    CK_DEF_NOARGS(_get_allow_tf32, py_get_allow_tf32, "()", "Whether float32/complex64 GPU products may use TF32."),
    {NULL, NULL, 0, NULL},
};
