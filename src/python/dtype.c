/* cudakit.dtype: one immutable object per ck_dtype, equal to NumPy's dtype
 * of the same name (ck.float32 == np.float32 == np.dtype('float32')). */
#include "ck_python.h"

#include <string.h>

CkDTypeObject *ck_py_dtypes[CK_NTYPES];

/* The dtype table's columns that ck_dtype_info does not hold. */
static const struct {
    const char *kind_letter, *str, *c_type, *c_compute_type, *c_real_type, *c_bits_type, *cuda_type,
        *cuda_compute_type;
    int numpy_num;
} ck_py_dtype_rows_[CK_NTYPES] = {
#define CK_PY_DTYPE_ROW_(A, ID, name, K, tchar, fmt, str, size, npnum, S, C, R, U, cus, cuc) \
    [CK_##ID] = {#K, str, #S, #C, #R, #U, cus, cuc, npnum},
    CK_DTYPES(CK_PY_DTYPE_ROW_, _)
#undef CK_PY_DTYPE_ROW_
};

/* NumPy's spellings of a dtype other than the table's (its name, type
 * character, one-character format, and kind and size as in "f4"). */
static const struct { const char *name; ck_dtype t; } ck_dtype_aliases_[] = {
    {"bool_", CK_BOOL}, {"byte", CK_INT8}, {"ubyte", CK_UINT8}, {"short", CK_INT16}, {"ushort", CK_UINT16},
    {"intc", CK_INT32}, {"uintc", CK_UINT32},
    {"int", CK_INT64}, {"long", CK_INT64}, {"intp", CK_INT64}, {"longlong", CK_INT64}, {"int_", CK_INT64},
    {"uint", CK_UINT64}, {"uintp", CK_UINT64}, {"ulonglong", CK_UINT64},
    {"half", CK_FLOAT16}, {"single", CK_FLOAT32}, {"float", CK_FLOAT64}, {"double", CK_FLOAT64}, {"float_", CK_FLOAT64},
    {"csingle", CK_COMPLEX64}, {"complex", CK_COMPLEX128}, {"cdouble", CK_COMPLEX128}, {"complex_", CK_COMPLEX128},
};

/* s is "f4": NumPy's kind character, then the item size */
static int is_kind_size(const char *s, const ck_dtype_info *i)
{
    if (s[0] != i->kind_char || s[1] < '1' || s[1] > '9') return 0;
    int n = 0;
    for (s++; *s >= '0' && *s <= '9' && n < 1000; s++) n = n * 10 + (*s - '0');
    return !*s && n == i->itemsize;
}

static ck_dtype dtype_from_str(const char *s)
{
    if (*s == '<' || *s == '=' || *s == '|') s++;
    for (int t = 0; t < CK_NTYPES; t++) {
        const ck_dtype_info *i = ck_dtype_get_info((ck_dtype)t);
        if (strcmp(s, i->name) == 0 || (s[0] && !s[1] && (s[0] == i->type_char || strcmp(s, i->format) == 0)) ||
            is_kind_size(s, i))
            return (ck_dtype)t;
    }
    for (size_t i = 0; i < sizeof ck_dtype_aliases_ / sizeof *ck_dtype_aliases_; i++)
        if (strcmp(s, ck_dtype_aliases_[i].name) == 0) return ck_dtype_aliases_[i].t;
    return CK_DTYPE_INVALID;
}

static int dtype_error(PyObject *obj)
{
    PyObject *r = PyObject_Repr(obj);
    if (!r) return -1;
    PyErr_Format(PyExc_TypeError, "data type %U not understood", r);
    Py_DECREF(r);
    return -1;
}

int ck_py_dtype_from_obj(PyObject *obj, ck_dtype dflt, ck_dtype *out)
{
    if (obj == NULL || obj == Py_None) { *out = dflt; return 0; }
    if (Py_IS_TYPE(obj, &CkDType_Type)) { *out = ((CkDTypeObject *)obj)->type; return 0; }
    if (PyUnicode_Check(obj)) {
        const char *s = PyUnicode_AsUTF8(obj);
        if (!s) return -1;
        ck_dtype t = dtype_from_str(s);
        if (t == CK_DTYPE_INVALID) return dtype_error(obj);
        *out = t;
        return 0;
    }
    if (obj == (PyObject *)&PyFloat_Type) { *out = CK_FLOAT64; return 0; }
    if (obj == (PyObject *)&PyLong_Type) { *out = CK_INT64; return 0; }
    if (obj == (PyObject *)&PyBool_Type) { *out = CK_BOOL; return 0; }
    if (obj == (PyObject *)&PyComplex_Type) { *out = CK_COMPLEX128; return 0; }
    /* NumPy dtypes and scalar types: both answer to numpy.dtype(obj).  Only
     * ask NumPy when the object comes from it, so NumPy is never imported
     * for our own dtypes. */
    PyObject *mod = PyObject_GetAttrString(PyType_Check(obj) ? obj : (PyObject *)Py_TYPE(obj), "__module__");
    if (!mod) { PyErr_Clear(); return dtype_error(obj); }
    int from_numpy = PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "numpy") == 0;
    if (!from_numpy && PyUnicode_Check(mod)) {
        const char *m = PyUnicode_AsUTF8(mod);
        from_numpy = m && (strncmp(m, "numpy.", 6) == 0);
    }
    Py_DECREF(mod);
    if (from_numpy) {
        PyObject *np = ck_py_numpy();
        if (!np) return -1;
        PyObject *d = PyObject_CallMethod(np, "dtype", "O", obj);
        if (!d) return -1;
        PyObject *name = PyObject_GetAttrString(d, "name");
        Py_DECREF(d);
        if (!name) return -1;
        const char *s = PyUnicode_AsUTF8(name);
        ck_dtype t = s ? ck_dtype_from_name(s) : CK_DTYPE_INVALID;
        Py_DECREF(name);
        if (!s) return -1;
        if (t == CK_DTYPE_INVALID) {
            PyErr_Format(PyExc_TypeError, "cudakit does not support the dtype %R", obj);
            return -1;
        }
        *out = t;
        return 0;
    }
    /* objects carrying a dtype (arrays of other libraries) */
    if (PyObject_HasAttrString(obj, "dtype") && !PyType_Check(obj)) {
        PyObject *d = PyObject_GetAttrString(obj, "dtype");
        if (!d) return -1;
        int r = d == obj ? dtype_error(obj) : ck_py_dtype_from_obj(d, dflt, out);
        Py_DECREF(d);
        return r;
    }
    return dtype_error(obj);
}

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("dtype('%s')", ck_dtype_get_info(((CkDTypeObject *)self)->type)->name);
}

static PyObject *dtype_str(PyObject *self)
{
    return PyUnicode_FromString(ck_dtype_get_info(((CkDTypeObject *)self)->type)->name);
}

static Py_hash_t dtype_hash(PyObject *self)
{
    return (Py_hash_t)(0x6b63647479706500LL + ((CkDTypeObject *)self)->type);
}

static PyObject *dtype_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
    ck_dtype t;
    int eq;
    if (other == Py_None) {
        eq = 0;
    } else if (ck_py_dtype_from_obj(other, CK_DTYPE_INVALID, &t) < 0) {
        PyErr_Clear();
        eq = 0;
    } else {
        eq = t == ((CkDTypeObject *)self)->type;
    }
    if (op == Py_NE) eq = !eq;
    return PyBool_FromLong(eq);
}

static PyObject *dtype_get_name(PyObject *self, void *c)
{
    (void)c;
    return dtype_str(self);
}

static PyObject *dtype_get_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(ck_dtype_get_info(((CkDTypeObject *)self)->type)->itemsize);
}

static PyObject *dtype_get_kind(PyObject *self, void *c)
{
    (void)c;
    char k = ck_dtype_get_info(((CkDTypeObject *)self)->type)->kind_char;
    return PyUnicode_FromStringAndSize(&k, 1);
}

static PyObject *dtype_get_char(PyObject *self, void *c)
{
    (void)c;
    char k = ck_dtype_get_info(((CkDTypeObject *)self)->type)->type_char;
    return PyUnicode_FromStringAndSize(&k, 1);
}

static PyObject *dtype_get_str(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(ck_py_dtype_rows_[((CkDTypeObject *)self)->type].str);
}

/* numpy.dtype(ck.float32) works because NumPy reads a .dtype attribute. */
static PyObject *dtype_get_np(PyObject *self, void *c)
{
    (void)c;
    CkDTypeObject *d = (CkDTypeObject *)self;
    if (!d->np_dtype) {
        PyObject *np = ck_py_numpy();
        if (!np) return NULL;
        d->np_dtype = PyObject_CallMethod(np, "dtype", "s", ck_dtype_get_info(d->type)->name);
        if (!d->np_dtype) return NULL;
    }
    return Py_NewRef(d->np_dtype);
}

static PyObject *dtype_get_type(PyObject *self, void *c)
{
    PyObject *d = dtype_get_np(self, c);
    if (!d) return NULL;
    PyObject *t = PyObject_GetAttrString(d, "type");
    Py_DECREF(d);
    return t;
}

static PyGetSetDef dtype_getset[] = {
    {"name", dtype_get_name, NULL, "the dtype's name, as NumPy's", NULL},
    {"itemsize", dtype_get_itemsize, NULL, "bytes per element", NULL},
    {"kind", dtype_get_kind, NULL, "NumPy's kind character", NULL},
    {"char", dtype_get_char, NULL, "NumPy's type character", NULL},
    {"str", dtype_get_str, NULL, "the array-interface type string", NULL},
    {"dtype", dtype_get_np, NULL, "the equal numpy.dtype", NULL},
    {"type", dtype_get_type, NULL, "the NumPy scalar type", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ck.float32(3) -> a 0-d array on the default device, as a type call would give. */
static PyObject *dtype_call(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *v = NULL;
    static char *kwlist[] = {"value", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &v)) return NULL;
    if (!v) {
        ck_array a;
        ck_status s = ck_full_scalar(&a, 0, NULL, ((CkDTypeObject *)self)->type, 0.0, ck_py_default_device());
        if (s != CK_OK) return ck_py_raise(s);
        return ck_py_wrap(&a, NULL);
    }
    return ck_py_asarray(v, ((CkDTypeObject *)self)->type, -1, 0, ck_device_cpu());
}

static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *mod = PyImport_ImportModule("cudakit");
    if (!mod) return NULL;
    PyObject *r = PyObject_GetAttrString(mod, ck_dtype_get_info(((CkDTypeObject *)self)->type)->name);
    Py_DECREF(mod);
    if (!r) return NULL;
    Py_DECREF(r);
    return PyUnicode_FromString(ck_dtype_get_info(((CkDTypeObject *)self)->type)->name);
}

static PyMethodDef dtype_methods[] = {
    CK_DEF_NOARGS(__reduce__, dtype_reduce, "($self, /)", "Pickling: the dtype by its name in cudakit."),
    {NULL, NULL, 0, NULL},
};

static void dtype_dealloc(PyObject *self)
{
    Py_XDECREF(((CkDTypeObject *)self)->np_dtype);
    Py_TYPE(self)->tp_free(self);
}

PyTypeObject CkDType_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.dtype",
    .tp_basicsize = sizeof(CkDTypeObject),
    .tp_dealloc = dtype_dealloc,
    .tp_repr = dtype_repr,
    .tp_str = dtype_str,
    .tp_hash = dtype_hash,
    .tp_call = dtype_call,
    .tp_richcompare = dtype_richcompare,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The type of an array's elements; equal to NumPy's dtype of the same name.  Called, "
              "ck.float32(value=0) is a 0-d array of value on the default device.",
};

/* cudakit._core._dtype_table: the dtype table, a record per dtype in the
 * order of ck_dtype, for the Python code that needs its facts. */
static PyStructSequence_Field dtype_record_fields[] = {
    {"num", "the dtype's number in the C core (its index in _dtype_table)"},
    {"name", "NumPy's name"},
    {"kind", "NumPy's kind character"},
    {"char", "NumPy's type character"},
    {"kind_letter", "the kind letter of generated code (B I U F C)"},
    {"format", "the buffer-protocol format"},
    {"str", "NumPy's dtype.str"},
    {"itemsize", "bytes per element"},
    {"numpy_num", "NumPy's type number"},
    {"real", "the name of the dtype of its real part (its own but for complex)"},
    {"c_type", "the C type an element is stored as"},
    {"c_compute_type", "the C type the CPU loops compute it in"},
    {"c_real_type", "the C type of its real part"},
    {"c_bits_type", "the C unsigned integer as wide as its real part"},
    {"cuda_type", "the CUDA type an element is stored as"},
    {"cuda_compute_type", "the CUDA type it is computed in"},
    {NULL, NULL},
};
static PyStructSequence_Desc dtype_record_desc = {
    "cudakit._core.dtype_record", "One row of the C core's dtype table (include/cudakit_dtypes.h).",
    dtype_record_fields, 16,
};

static PyObject *dtype_table(void)
{
    PyTypeObject *rec = PyStructSequence_NewType(&dtype_record_desc);
    if (!rec) return NULL;
    PyObject *table = PyTuple_New(CK_NTYPES);
    for (int t = 0; table && t < CK_NTYPES; t++) {
        const ck_dtype_info *i = ck_dtype_get_info((ck_dtype)t);
        PyObject *v = Py_BuildValue("(isCCsssiisssssss)", t, i->name, i->kind_char, i->type_char,
                                    ck_py_dtype_rows_[t].kind_letter, i->format, ck_py_dtype_rows_[t].str,
                                    i->itemsize, ck_py_dtype_rows_[t].numpy_num,
                                    ck_dtype_get_info(ck_dtype_real((ck_dtype)t))->name,
                                    ck_py_dtype_rows_[t].c_type, ck_py_dtype_rows_[t].c_compute_type,
                                    ck_py_dtype_rows_[t].c_real_type, ck_py_dtype_rows_[t].c_bits_type,
                                    ck_py_dtype_rows_[t].cuda_type, ck_py_dtype_rows_[t].cuda_compute_type);
        PyObject *r = v ? PyObject_CallOneArg((PyObject *)rec, v) : NULL;
        Py_XDECREF(v);
        if (!r) {
            Py_CLEAR(table);
            break;
        }
        PyTuple_SET_ITEM(table, t, r);
    }
    Py_DECREF(rec);
    return table;
}

int ck_py_dtypes_init(PyObject *module)
{
    if (PyType_Ready(&CkDType_Type) < 0) return -1;
    for (int t = 0; t < CK_NTYPES; t++) {
        CkDTypeObject *d = PyObject_New(CkDTypeObject, &CkDType_Type);
        if (!d) return -1;
        d->type = (ck_dtype)t;
        d->np_dtype = NULL;
        ck_py_dtypes[t] = d;
        if (PyModule_AddObjectRef(module, ck_dtype_get_info((ck_dtype)t)->name, (PyObject *)d) < 0) return -1;
    }
    if (PyModule_AddObjectRef(module, "bool_", (PyObject *)ck_py_dtypes[CK_BOOL]) < 0) return -1;
    if (PyModule_AddObjectRef(module, "dtype", (PyObject *)&CkDType_Type) < 0) return -1;
    PyObject *table = dtype_table();
    if (!table) return -1;
    int r = PyModule_AddObjectRef(module, "_dtype_table", table);
    Py_DECREF(table);
    return r;
}

int ck_py_casting_from_obj(PyObject *obj, ck_casting *out)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "casting must be str, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *c = PyUnicode_AsUTF8(obj);
    if (!c) return -1;
    int r = ck_casting_from_name(c);
    if (r < 0) {
        PyErr_Format(PyExc_ValueError, "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' "
                     "(got %R)", obj);
        return -1;
    }
    *out = (ck_casting)r;
    return 0;
}

int ck_py_check_cast(ck_dtype from, ck_dtype to, ck_casting casting)
{
    if (ck_dtype_can_cast(from, to, casting)) return 0;
    PyErr_Format(PyExc_TypeError, "Cannot cast array data from dtype('%s') to dtype('%s') according to the rule '%s'",
                 ck_dtype_get_info(from)->name, ck_dtype_get_info(to)->name, ck_casting_name(casting));
    return -1;
}

int ck_py_order_code(PyObject *obj, char *code)
{
    if (obj == Py_None) return 0;
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "order must be str, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    const char *o = PyUnicode_AsUTF8(obj);
    if (!o) return -1;
    char c = o[0] && !o[1] ? (char)(o[0] & ~0x20) : 0;
    if (c != 'C' && c != 'F' && c != 'A' && c != 'K') {
        PyErr_Format(PyExc_ValueError, "order must be one of 'C', 'F', 'A', or 'K' (got '%s')", o);
        return -1;
    }
    *code = c;
    return 0;
}
