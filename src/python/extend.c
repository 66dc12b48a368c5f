/* Python-level members of the C types: NumPy's ndarray methods and ufunc
 * methods that are compositions of ops (python/cudakit/_numpy_extra.py)
 * live in the type's own dictionary, so `x.take(...)` and `ck.add.reduce`
 * are ordinary attribute look-ups, not a __getattr__ fallback. */
#include "ck_python.h"

/* _extend_type(type, members, replace=False): set each of members' items
 * on one of cudakit's types that is not already defined there by C (with
 * replace, also those that are: the per-object __doc__ and __signature__
 * of ufuncs and dtypes, python/cudakit/_help.py). */
static PyObject *extend_type(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *type_obj, *members;
    int replace = 0;
    if (!PyArg_ParseTuple(args, "O!O!|p:_extend_type", &PyType_Type, &type_obj, &PyDict_Type, &members, &replace))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)type_obj;
    if (type != &CkArray_Type && type != &CkUFunc_Type && type != &CkDType_Type) {
        PyErr_Format(PyExc_TypeError, "_extend_type: %s is not one of cudakit's C types", type->tp_name);
        return NULL;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(members, &pos, &key, &value)) {
        int has = PyDict_Contains(type->tp_dict, key);
        if (has < 0) return NULL;
        if (has && !replace) continue;
        if (PyDict_SetItem(type->tp_dict, key, value) < 0) return NULL;
    }
    PyType_Modified(type);
    Py_RETURN_NONE;
}


int ck_py_fp_checks;

static PyObject *extra_module(void)
{
    static PyObject *mod;
    if (!mod) mod = PyImport_ImportModule("cudakit._numpy_extra");
    return mod;
}

int ck_py_fp_check(ck_op op, int nin, PyObject *const *args, PyObject *result)
{
    PyObject *mod = extra_module();
    if (!mod) return -1;
    PyObject *ins = PyTuple_New(nin);
    if (!ins) return -1;
    for (int k = 0; k < nin; k++) PyTuple_SET_ITEM(ins, k, Py_NewRef(args[k]));
    PyObject *r = PyObject_CallMethod(mod, "_fp_check", "sOO", ck_op_table[op].name, ins, result);
    Py_DECREF(ins);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

PyObject *ck_py_ufunc_where(PyObject *ufunc, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *mod = extra_module();
    if (!mod) return NULL;
    PyObject *f = PyObject_GetAttrString(mod, "_ufunc_where");
    if (!f) return NULL;
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject **stack = PyMem_Malloc((size_t)(nargs + nk + 1) * sizeof(PyObject *));
    if (!stack) { Py_DECREF(f); return PyErr_NoMemory(); }
    stack[0] = ufunc;
    for (Py_ssize_t i = 0; i < nargs + nk; i++) stack[i + 1] = args[i];
    PyObject *r = PyObject_Vectorcall(f, stack, (size_t)(nargs + 1), kwnames);
    PyMem_Free(stack);
    Py_DECREF(f);
    return r;
}

static PyObject *set_fp_checks(PyObject *self, PyObject *on)
{
    (void)self;
    int v = PyObject_IsTrue(on);
    if (v < 0) return NULL;
    ck_py_fp_checks = v;
    Py_RETURN_NONE;
}

/* _array_rebind(a, b, views=False): a takes b's memory and layout
 * (ndarray.resize in place, __setstate__); a view may only with views=True
 * (resize refuses views, as NumPy's). */
static PyObject *array_rebind(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *a, *b;
    int views = 0;
    if (!PyArg_ParseTuple(args, "O!O!|p:_array_rebind", &CkArray_Type, &a, &CkArray_Type, &b, &views)) return NULL;
    CkArrayObject *ao = (CkArrayObject *)a;
    if (ao->base && !views) {
        PyErr_SetString(PyExc_ValueError, "cannot resize this array: it does not own its data");
        return NULL;
    }
    ck_array v;
    ck_array_view(&v, &((CkArrayObject *)b)->arr);
    ck_array_release(&ao->arr);
    ao->arr = v;
    Py_CLEAR(ao->base);
    /* a cudakit buffer is kept alive by the reference the view took; a
     * foreign exporter's memory by the exporter */
    PyObject *bb = ((CkArrayObject *)b)->base;
    while (bb && CkArray_Check(bb)) bb = ((CkArrayObject *)bb)->base;
    if (bb) ao->base = Py_NewRef(bb);
    Py_RETURN_NONE;
}

PyMethodDef ck_py_extend_functions[] = {
    CK_DEF_VARARGS(_extend_type, extend_type, "(type, members, replace=False, /)",
                   "Add Python members to ndarray, ufunc or dtype (replace: also over the C type's own)."),
    CK_DEF_O(_set_fp_checks, set_fp_checks, "(on, /)", "Whether ufuncs on the CPU call the seterr check."),
    CK_DEF_VARARGS(_array_rebind, array_rebind, "(a, b, views=False, /)", "a takes b's memory and layout."),
    {NULL, NULL, 0, NULL},
};
