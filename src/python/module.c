/* cudakit._core: module init and the mapping of core statuses to exceptions. */
#include "ck_python.h"

#include <signal.h>
#include <string.h>

PyObject *ck_py_CUDAError;
PyObject *ck_py_OutOfMemoryError;
PyObject *ck_py_CompileError;

int ck_py_dtypes_init(PyObject *module);
int ck_py_array_type_init(void);
int ck_py_ufuncs_init(PyObject *module);
int ck_py_creation_init(void);
int ck_py_kernels_init(PyObject *module);

static const struct {
    const char *name;
    int public;             /* also cudakit.<name> and cudakit._core.<name> */
} exc_rows[CK_PY_EXC_COUNT] = {
    [CK_PY_AXIS_ERROR] = {"AxisError", 1},
    [CK_PY_COMPLEX_WARNING] = {"ComplexWarning", 1},
    [CK_PY_PROMOTION_ERROR] = {"DTypePromotionError", 1},
    [CK_PY_UFUNC_TYPE_ERROR] = {"UFuncTypeError", 1},
    [CK_PY_UFUNC_NO_LOOP] = {"_UFuncNoLoopError", 0},
    [CK_PY_UFUNC_INPUT_CAST] = {"_UFuncInputCastingError", 0},
    [CK_PY_UFUNC_OUTPUT_CAST] = {"_UFuncOutputCastingError", 0},
    [CK_PY_ARRAY_MEMORY_ERROR] = {"_ArrayMemoryError", 0},
    [CK_PY_C_INT_OVERFLOW] = {"_CIntOverflowError", 0},
    [CK_PY_DEVICE_MEMORY_ERROR] = {"_DeviceMemoryError", 0},
};
static PyObject *exc_classes[CK_PY_EXC_COUNT];

static PyObject *exc_fallback(ck_py_exc_id id)
{
    switch (id) {
    case CK_PY_AXIS_ERROR: return PyExc_ValueError;
    case CK_PY_COMPLEX_WARNING: return PyExc_RuntimeWarning;
    case CK_PY_ARRAY_MEMORY_ERROR: return PyExc_MemoryError;
    case CK_PY_C_INT_OVERFLOW: return PyExc_OverflowError;
    case CK_PY_DEVICE_MEMORY_ERROR: return ck_py_OutOfMemoryError;
    default: return PyExc_TypeError;
    }
}

PyObject *ck_py_exc(ck_py_exc_id id)
{
    if (exc_classes[id]) return exc_classes[id];
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *mod = PyImport_ImportModule("cudakit._exceptions");
    for (int i = 0; mod && i < CK_PY_EXC_COUNT; i++)
        if (!exc_classes[i]) exc_classes[i] = PyObject_GetAttrString(mod, exc_rows[i].name);
    Py_XDECREF(mod);
    PyObject *c = exc_classes[id];
    if (!c) {
        /* not cached: the next raise tries again */
        PyErr_WriteUnraisable(NULL);
        c = exc_fallback(id);
    }
    PyErr_Restore(et, ev, tb);
    return c;
}

/* cudakit._core.AxisError and the other public names, made on first
 * access (PEP 562) */
static PyObject *core_getattr(PyObject *m, PyObject *name)
{
    (void)m;
    const char *n = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!n) return NULL;
    for (int i = 0; i < CK_PY_EXC_COUNT; i++)
        if (exc_rows[i].public && !strcmp(exc_rows[i].name, n)) return Py_NewRef(ck_py_exc((ck_py_exc_id)i));
    return PyErr_Format(PyExc_AttributeError, "module 'cudakit._core' has no attribute '%s'", n);
}

static PyMethodDef core_functions[] = {
    CK_DEF_O(__getattr__, core_getattr, "(name, /)", "The module's public names made on first access (PEP 562)."),
    {NULL, NULL, 0, NULL},
};

/* Ctrl-C ended a wait or a kernel in the core, which Python's handler
 * did not see: a handler of the program's own (signal.signal) gets it as
 * it would any other; the default one's KeyboardInterrupt carries the
 * core's message, and so does one raised for a handler that raised
 * nothing, the work having been abandoned all the same. */
static void ck_py_raise_interrupt(const char *msg)
{
    PyObject *text = PyUnicode_FromString(msg);
    if (!text) return;
    PyObject *sig = PyImport_ImportModule("signal");
    PyObject *h = sig ? PyObject_CallMethod(sig, "getsignal", "i", SIGINT) : NULL;
    PyObject *dflt = sig ? PyObject_GetAttrString(sig, "default_int_handler") : NULL;
    int own = h && dflt && h != dflt && PyCallable_Check(h);
    Py_XDECREF(h);
    Py_XDECREF(dflt);
    Py_XDECREF(sig);
    PyErr_Clear();
    if (own) {
        PyErr_SetInterruptEx(SIGINT);
        if (PyErr_CheckSignals() < 0) {
            Py_DECREF(text);
            return;
        }
    }
    PyErr_SetObject(PyExc_KeyboardInterrupt, text);
    Py_DECREF(text);
}

PyObject *ck_py_raise(ck_status s)
{
    if (PyErr_Occurred()) return NULL;
    PyObject *exc;
    if (s == CK_ERR_INTERRUPT && !PyErr_Occurred()) {
        ck_py_raise_interrupt(ck_error_message());
        return NULL;
    }
    switch (s) {
    case CK_ERR_VALUE: exc = PyExc_ValueError; break;
    case CK_ERR_TYPE: exc = PyExc_TypeError; break;
    case CK_ERR_INDEX: exc = PyExc_IndexError; break;
    case CK_ERR_AXIS: exc = ck_py_exc(CK_PY_AXIS_ERROR); break;
    case CK_ERR_MEMORY: exc = ck_py_exc(CK_PY_ARRAY_MEMORY_ERROR); break;
    case CK_ERR_NO_LOOP: exc = ck_py_exc(CK_PY_UFUNC_NO_LOOP); break;
    case CK_ERR_CAST_INPUT: exc = ck_py_exc(CK_PY_UFUNC_INPUT_CAST); break;
    case CK_ERR_CAST_OUTPUT: exc = ck_py_exc(CK_PY_UFUNC_OUTPUT_CAST); break;
    case CK_ERR_OVERFLOW: exc = PyExc_OverflowError; break;
    case CK_ERR_ZERO_DIVISION: exc = PyExc_ZeroDivisionError; break;
    case CK_ERR_NOT_IMPLEMENTED: exc = PyExc_NotImplementedError; break;
    case CK_ERR_DEVICE: exc = ck_py_CUDAError; break;
    case CK_ERR_DEVICE_MEMORY: exc = ck_py_exc(CK_PY_DEVICE_MEMORY_ERROR); break;
    case CK_ERR_COMPILE: exc = ck_py_CompileError; break;
    case CK_ERR_TIMEOUT: exc = PyExc_TimeoutError; break;
    default: exc = PyExc_RuntimeError; break;
    }
    PyErr_SetString(exc, ck_error_message());
    return NULL;
}

int ck_py_raise_int(ck_status s)
{
    ck_py_raise(s);
    return -1;
}

static PyModuleDef ck_py_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cudakit._core",
    .m_doc = "The CPython face of the cudakit C core.",
    .m_size = -1,
};

static int add_functions(PyObject *m, PyMethodDef *defs)
{
    PyObject *name = PyModule_GetNameObject(m);
    if (!name) return -1;
    for (PyMethodDef *d = defs; d->ml_name; d++) {
        PyObject *f = PyCMethod_New(d, m, name, NULL);
        if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
            Py_XDECREF(f);
            Py_DECREF(name);
            return -1;
        }
    }
    Py_DECREF(name);
    return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&ck_py_module_def);
    if (!m) return NULL;
    ck_py_CUDAError = PyErr_NewExceptionWithDoc("cudakit.cuda.CUDAError",
        "A CUDA driver call failed; the message names the call and the driver's error.", PyExc_RuntimeError, NULL);
    /* a CUDAError (every GPU failure is one) and a MemoryError (what
     * NumPy-style code catches), as in CuPy */
    PyObject *oom_bases = ck_py_CUDAError ? PyTuple_Pack(2, ck_py_CUDAError, PyExc_MemoryError) : NULL;
    ck_py_OutOfMemoryError = oom_bases ? PyErr_NewExceptionWithDoc("cudakit.cuda.OutOfMemoryError",
        "Out of GPU memory after freeing the pool's cache; says what was asked for and what is free.",
        oom_bases, NULL) : NULL;
    Py_XDECREF(oom_bases);
    ck_py_CompileError = PyErr_NewExceptionWithDoc("cudakit.CompileError",
        "NVRTC could not compile a kernel; the message has the log and the source lines around the error.",
        PyExc_RuntimeError, NULL);
    if (!ck_py_CUDAError || !ck_py_OutOfMemoryError || !ck_py_CompileError)
        goto fail;
    if (PyModule_AddObjectRef(m, "CUDAError", ck_py_CUDAError) < 0 ||
        PyModule_AddObjectRef(m, "OutOfMemoryError", ck_py_OutOfMemoryError) < 0 ||
        PyModule_AddObjectRef(m, "CompileError", ck_py_CompileError) < 0)
        goto fail;
    if (ck_py_dtypes_init(m) < 0) goto fail;
    if (PyType_Ready(&CkDevice_Type) < 0 || PyModule_AddObjectRef(m, "Device", (PyObject *)&CkDevice_Type) < 0) goto fail;
    if (ck_py_array_type_init() < 0 || PyModule_AddObjectRef(m, "ndarray", (PyObject *)&CkArray_Type) < 0) goto fail;
    if (ck_py_ufuncs_init(m) < 0 || ck_py_creation_init() < 0 || ck_py_kernels_init(m) < 0 ||
        ck_py_pykernel_init(m) < 0)
        goto fail;
    if (add_functions(m, core_functions) < 0 || add_functions(m, ck_py_creation_functions) < 0 || add_functions(m, ck_py_reduce_functions) < 0 ||
        add_functions(m, ck_py_index_functions) < 0 ||
        add_functions(m, ck_py_interop_functions) < 0 || add_functions(m, ck_py_cuda_functions) < 0 ||
        add_functions(m, ck_py_dlpack_functions) < 0 ||
        add_functions(m, ck_py_shape_functions) < 0 ||
        add_functions(m, ck_py_sort_functions) < 0 ||
        add_functions(m, ck_py_random_functions) < 0 ||
        add_functions(m, ck_py_xoroshiro_functions) < 0 ||
        add_functions(m, ck_py_linalg_functions) < 0 ||
        add_functions(m, ck_py_fftsolver_functions) < 0 ||
        add_functions(m, ck_py_kernel_functions) < 0 ||
        add_functions(m, ck_py_kernelgen_functions) < 0 ||
        add_functions(m, ck_py_pykernel_functions) < 0 ||
        add_functions(m, ck_py_profiler_functions) < 0 ||
        add_functions(m, ck_py_graph_functions) < 0 || ck_py_graph_type_init(m) < 0 ||
        add_functions(m, ck_py_comm_functions) < 0 || ck_py_comm_type_init(m) < 0 ||
        add_functions(m, ck_py_train_functions) < 0 || add_functions(m, ck_py_ag_train_functions) < 0 ||
        add_functions(m, ck_py_linear_functions) < 0 ||
        add_functions(m, ck_py_autograd_functions) < 0 || ck_py_autograd_init(m) < 0)
        goto fail;
    if (PyModule_AddIntConstant(m, "MAXDIMS", CK_MAXDIMS) < 0) goto fail;
    if (add_functions(m, ck_py_extend_functions) < 0) goto fail;   /* extend.c: Python members of ndarray, ufunc */
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
