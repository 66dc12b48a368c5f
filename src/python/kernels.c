/* User CUDA C kernels: the module and kernel objects behind ck.RawModule,
 * ck.RawKernel and ck.SourceModule, and the launch path.
 *
 * One kernel, two targets: a module is compiled lazily per device through
 * include/cudakit_module.h (NVRTC for a GPU, the system C++ compiler for
 * the CPU); the device of a launch is the device of its array arguments.
 *
 * Arguments (kernelParams) - the documented rule:
 *   - a cudakit array passes its data pointer; its device must be the
 *     launch's (ValueError otherwise); when the kernel's signature is known
 *     its pointee type must match the array's dtype (TypeError);
 *   - a NumPy scalar passes its typed value; into a parameter of known type
 *     it is converted when the cast is same-kind (TypeError otherwise);
 *   - a Python scalar into a parameter of known type is converted to that
 *     type (OverflowError when the value does not fit, TypeError for a float
 *     into an integer or a complex into a real parameter);
 *   - a parameter of a type cudakit cannot size from the source (a struct,
 *     a typedef it cannot resolve, a template parameter) takes only a NumPy
 *     scalar or structured scalar (np.void) of exactly the size the
 *     compiled kernel gives it (TypeError otherwise);
 *   - where the signature is not known at all: int -> long long, float ->
 *     double, bool -> bool, complex -> complex<double>, and the value must
 *     have the parameter's size where the target tells it;
 *   - anything else is a TypeError.
 * The per-call path does no string work: the signature is read once from
 * the source (ck_kernel_signature, the scanner's) into kinds and dtypes
 * kept here, checked against the compiled kernel's parameter sizes where
 * the target reports them, and the function and its attributes are cached
 * per device. */
#include "ck_python.h"

#include <string.h>

#define CK_KMAXP CK_MAX_KERNEL_PARAMS

/* ------------------------------------------------------------- modules */

typedef struct {
    PyObject_HEAD
    char *source;
    char *name_hint;
    char **options;
    int noptions;
    char **exprs;
    int nexprs;
    ck_module *cpu;
    ck_module *cuda[CK_MAX_GPUS];
} CkModuleObject;

static void free_strv(char **v, int n)
{
    for (int i = 0; v && i < n; i++) PyMem_Free(v[i]);
    PyMem_Free(v);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = PyMem_Malloc(n);
    if (!p) { PyErr_NoMemory(); return NULL; }
    memcpy(p, s, n);
    return p;
}

/* A sequence of str -> malloc'd vector. */
static int strv_from_seq(PyObject *seq, const char *what, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!seq || seq == Py_None) return 0;
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    char **v = PyMem_Calloc((size_t)len + 1, sizeof *v);
    if (!v) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
        const char *s = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
        if (!s) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s must be strings, got %.100s", what, Py_TYPE(it)->tp_name);
            free_strv(v, (int)i);
            Py_DECREF(fast);
            return -1;
        }
        if (!(v[i] = dup_str(s))) { free_strv(v, (int)i); Py_DECREF(fast); return -1; }
    }
    Py_DECREF(fast);
    *out = v;
    *n = (int)len;
    return 0;
}

static void module_dealloc(CkModuleObject *m)
{
    for (int d = 0; d < CK_MAX_GPUS; d++) ck_module_free(m->cuda[d]);
    ck_module_free(m->cpu);
    PyMem_Free(m->source);
    PyMem_Free(m->name_hint);
    free_strv(m->options, m->noptions);
    free_strv(m->exprs, m->nexprs);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *module_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"source", "options", "name_expressions", "name", NULL};
    const char *src, *name = "kernel.cu";
    PyObject *opts = NULL, *exprs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|OOs", kwlist, &src, &opts, &exprs, &name)) return NULL;
    CkModuleObject *m = (CkModuleObject *)type->tp_alloc(type, 0);
    if (!m) return NULL;
    if (!(m->source = dup_str(src)) || !(m->name_hint = dup_str(name)) ||
        strv_from_seq(opts, "options", &m->options, &m->noptions) < 0 ||
        strv_from_seq(exprs, "name_expressions", &m->exprs, &m->nexprs) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return (PyObject *)m;
}

/* The module's slot for a usable device, or NULL with the error set. */
static ck_module **module_slot(CkModuleObject *m, ck_device dev)
{
    ck_status s = ck_device_check(dev);
    if (s != CK_OK) { ck_py_raise(s); return NULL; }
    if (dev.type == CK_DEVICE_CPU) return &m->cpu;
    if (dev.index >= CK_MAX_GPUS) {
        PyErr_Format(PyExc_ValueError, "invalid CUDA device %d", dev.index);
        return NULL;
    }
    return &m->cuda[dev.index];
}

/* The module compiled for dev, compiling it on first use. */
static ck_module *module_ensure(CkModuleObject *m, ck_device dev)
{
    ck_module **slot = module_slot(m, dev);
    if (!slot) return NULL;
    if (*slot) return *slot;
    ck_status s;
    ck_module *cm = NULL;
    Py_BEGIN_ALLOW_THREADS
    s = ck_module_load(dev, m->source, m->name_hint, (const char *const *)m->options, m->noptions,
                       (const char *const *)m->exprs, m->nexprs, &cm);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) { ck_py_raise(s); return NULL; }
    if (*slot) ck_module_free(cm); /* another thread won */
    else *slot = cm;
    return *slot;
}

static int device_arg(PyObject *obj, ck_device *dev)
{
    int has = 0;
    if (ck_py_device_from_obj(obj, dev, &has) < 0) return -1;
    if (!has) *dev = ck_py_default_device();
    return 0;
}

static PyObject *module_compile(CkModuleObject *m, PyObject *args)
{
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &devobj)) return NULL;
    ck_device dev;
    if (device_arg(devobj, &dev) < 0 || !module_ensure(m, dev)) return NULL;
    Py_RETURN_NONE;
}

/* The memory of a global stays valid while the module lives: the array's
 * buffer holds a reference to the module object. */
static void release_module_ref(void *ctx)
{
    if (Py_IsInitialized()) {
        PyGILState_STATE st = PyGILState_Ensure();
        Py_DECREF((PyObject *)ctx);
        PyGILState_Release(st);
    }
}

/* get_global(name, device, dtype, shape or None) -> an array viewing the
 * variable (1-D of its bytes / itemsize when shape is None). */
static PyObject *module_get_global(CkModuleObject *m, PyObject *args)
{
    const char *name;
    PyObject *devobj = Py_None, *dtobj = Py_None, *shapeobj = Py_None;
    if (!PyArg_ParseTuple(args, "s|OOO", &name, &devobj, &dtobj, &shapeobj)) return NULL;
    ck_device dev;
    ck_dtype dt;
    ck_module *cm;
    if (device_arg(devobj, &dev) < 0 || !(cm = module_ensure(m, dev))) return NULL;
    if (ck_py_dtype_from_obj(dtobj, CK_UINT8, &dt) < 0) return NULL;
    void *ptr = NULL;
    size_t nbytes = 0;
    ck_status s = ck_module_get_global(cm, name, &ptr, &nbytes);
    if (s != CK_OK) return ck_py_raise(s);
    int isz = ck_dtype_get_info(dt)->itemsize;
    int ndim = 1;
    int64_t shape[CK_MAXDIMS];
    if (shapeobj == Py_None) {
        shape[0] = (int64_t)(nbytes / (size_t)isz);
    } else if (ck_py_shape_from_obj(shapeobj, &ndim, shape) < 0) {
        return NULL;
    }
    int64_t n = ck_shape_size(ndim, shape);
    if (n < 0 || (uint64_t)n * (uint64_t)isz > nbytes) {
        PyErr_Format(PyExc_ValueError, "global '%s' has %zu bytes, too few for that shape of %s", name, nbytes,
                     ck_dtype_get_info(dt)->name);
        return NULL;
    }
    Py_INCREF(m);
    ck_buffer *b = ck_buffer_wrap(dev, ptr, nbytes, 0, release_module_ref, m);
    if (!b) { Py_DECREF(m); return ck_py_raise(ck_error_status()); }
    ck_array a;
    memset(&a, 0, sizeof a);
    a.buf = b;
    a.data = ptr;
    a.dtype = dt;
    a.flags = CK_ARRAY_WRITEABLE;
    int64_t strides[CK_MAXDIMS];
    ck_strides_c(ndim, shape, isz, strides);
    ck_array_set_layout(&a, ndim, shape, strides);
    return ck_py_wrap(&a, NULL);
}

static PyMethodDef module_methods[] = {
    CK_DEF_VARARGS(compile, module_compile, "($self, device=None, /)",
                   "Compile (or load from the cache) for a device now (None: the default device)."),
    CK_DEF_VARARGS(_get_global, module_get_global, "($self, name, device=None, dtype=None, shape=None, /)",
                   "A __device__ variable of the module as an array on its memory."),
    {NULL, NULL, 0, NULL},
};

static PyObject *module_get_source(CkModuleObject *m, void *u) { (void)u; return PyUnicode_FromString(m->source); }

static PyGetSetDef module_getset[] = {
    {"code", (getter)module_get_source, NULL, "the CUDA C source", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject CkModule_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core._Module",
    .tp_basicsize = sizeof(CkModuleObject),
    .tp_dealloc = (destructor)module_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "_Module(source, options=(), name_expressions=(), name='kernel.cu')\n--\n\n"
              "CUDA C compiled per device on first use.",
    .tp_methods = module_methods,
    .tp_getset = module_getset,
    .tp_new = module_new,
};

ck_function *ck_py_module_function(PyObject *module, const char *name, ck_device dev)
{
    if (!PyObject_TypeCheck(module, &CkModule_Type)) {
        PyErr_SetString(PyExc_TypeError, "expected a cudakit module");
        return NULL;
    }
    ck_module *cm = module_ensure((CkModuleObject *)module, dev);
    if (!cm) return NULL;
    ck_function *f = NULL;
    ck_status s = ck_module_get_function(cm, name, &f);
    if (s != CK_OK) { ck_py_raise(s); return NULL; }
    return f;
}

/* ------------------------------------------------------------- kernels */

enum { PK_UNKNOWN = 0, PK_POINTER = 1, PK_SCALAR = 2, PK_OPAQUE = 3 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    CkModuleObject *module;
    char *name;
    int nparams;                   /* -1: the signature is not known */
    signed char pkind[CK_KMAXP];
    int pdtype[CK_KMAXP];          /* ck_dtype, or -1 when not told */
    ck_kparam *params;             /* the source's declarations (NULL when the signature is not known) */
    int has_opaque;                /* a PK_OPAQUE parameter: sizes needed before marshalling */
    int sizes_known;               /* psize read from a compiled kernel */
    unsigned sizes_asked;          /* bit 0: the CPU's, bit 1: a GPU's (it could not tell) */
    int nsizes;                    /* the compiled kernel's parameter count */
    int psize[CK_KMAXP];           /* bytes of each parameter in the compiled kernel */
    ck_function *cpu;              /* the function in each device's module, found on first use */
    ck_function *cuda[CK_MAX_GPUS];
    PyObject *dict;
} CkKernelObject;

static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

static PyObject *kernel_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args; (void)kw;
    CkKernelObject *k = (CkKernelObject *)type->tp_alloc(type, 0);
    if (!k) return NULL;
    k->vectorcall = kernel_vectorcall;
    k->nparams = -1;
    return (PyObject *)k;
}

/* _Kernel._setup(module, name): the signature is read from the module's
 * source (ck_kernel_signature). */
static PyObject *kernel_setup(CkKernelObject *k, PyObject *args)
{
    PyObject *mod;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s", &CkModule_Type, &mod, &name)) return NULL;
    CkModuleObject *m = (CkModuleObject *)mod;
    char *nm = dup_str(name);
    if (!nm) return NULL;
    ck_kparam *ps = PyMem_Calloc(CK_KMAXP, sizeof *ps);
    if (!ps) {
        PyMem_Free(nm);
        return PyErr_NoMemory();
    }
    int np = ck_kernel_signature(m->source, (const char *const *)m->options, m->noptions, name, ps, CK_KMAXP);
    if (np > CK_KMAXP) {
        PyMem_Free(ps);
        PyMem_Free(nm);
        return PyErr_Format(PyExc_ValueError, "kernels with more than %d parameters are not supported", CK_KMAXP);
    }
    Py_INCREF(mod);
    Py_XSETREF(k->module, m);
    PyMem_Free(k->name);
    PyMem_Free(k->params);
    k->name = nm;
    k->nparams = np;
    k->params = np >= 0 ? ps : NULL;
    if (np < 0) PyMem_Free(ps);
    k->has_opaque = 0;
    for (int i = 0; i < np; i++) {
        k->pkind[i] = ps[i].kind == CK_KPARAM_POINTER ? PK_POINTER : ps[i].kind == CK_KPARAM_SCALAR ? PK_SCALAR
                                                                                                    : PK_OPAQUE;
        k->pdtype[i] = (int)ps[i].dtype;
        k->has_opaque |= k->pkind[i] == PK_OPAQUE;
    }
    k->sizes_known = 0;
    k->sizes_asked = 0;
    k->cpu = NULL;
    memset(k->cuda, 0, sizeof k->cuda);
    Py_RETURN_NONE;
}

/* _kernel_signature(code, name, options=()) -> [(kind, dtype name or None,
 * name, type)] as the scanner reads the source, or None when it declares
 * no such kernel.  kind: 'p' pointer, 's' scalar, 'o' a type cudakit cannot
 * size. */
static PyObject *c_kernel_signature(PyObject *self, PyObject *args)
{
    (void)self;
    const char *src, *name;
    PyObject *opts = NULL;
    if (!PyArg_ParseTuple(args, "ss|O", &src, &name, &opts)) return NULL;
    char **ov = NULL;
    int no = 0;
    if (strv_from_seq(opts, "options", &ov, &no) < 0) return NULL;
    ck_kparam *ps = PyMem_Calloc(CK_KMAXP, sizeof *ps);
    if (!ps) {
        free_strv(ov, no);
        return PyErr_NoMemory();
    }
    int n = ck_kernel_signature(src, (const char *const *)ov, no, name, ps, CK_KMAXP);
    free_strv(ov, no);
    PyObject *r = NULL;
    if (n < 0) {
        r = Py_NewRef(Py_None);
    } else if ((r = PyList_New(n < CK_KMAXP ? n : CK_KMAXP))) {
        for (int i = 0; i < n && i < CK_KMAXP; i++) {
            const char *dt = ps[i].dtype != CK_DTYPE_INVALID ? ck_dtype_get_info(ps[i].dtype)->name : NULL;
            PyObject *t = Py_BuildValue("(CzNN)", ps[i].kind, dt, PyUnicode_DecodeUTF8(ps[i].name, strlen(ps[i].name),
                                                                                      "replace"),
                                        PyUnicode_DecodeUTF8(ps[i].type, strlen(ps[i].type), "replace"));
            if (!t) {
                Py_CLEAR(r);
                break;
            }
            PyList_SET_ITEM(r, i, t);
        }
    }
    PyMem_Free(ps);
    return r;
}

static void kernel_dealloc(CkKernelObject *k)
{
    PyObject_GC_UnTrack(k);
    Py_CLEAR(k->module);
    Py_CLEAR(k->dict);
    PyMem_Free(k->name);
    PyMem_Free(k->params);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static int kernel_traverse(CkKernelObject *k, visitproc visit, void *arg)
{
    Py_VISIT(k->module);
    Py_VISIT(k->dict);
    return 0;
}

static int kernel_clear(CkKernelObject *k)
{
    Py_CLEAR(k->dict);
    return 0;
}

static int kernel_ready(CkKernelObject *k)
{
    if (!k->module || !k->name) {
        PyErr_SetString(PyExc_RuntimeError, "the kernel object was not set up");
        return -1;
    }
    return 0;
}

/* The kernel's function on dev, looked up (and its module compiled) on first use. */
static ck_function *kernel_function(CkKernelObject *k, ck_device dev)
{
    if (kernel_ready(k) < 0) return NULL;
    ck_function **slot = dev.type == CK_DEVICE_CPU ? &k->cpu : dev.index >= 0 && dev.index < CK_MAX_GPUS
                                                                   ? &k->cuda[dev.index] : NULL;
    if (slot && *slot) return *slot;
    ck_module *cm = module_ensure(k->module, dev);
    if (!cm) return NULL;
    ck_function *f = NULL;
    ck_status s = ck_module_get_function(cm, k->name, &f);
    if (s != CK_OK) { ck_py_raise(s); return NULL; }
    *slot = f;
    return f;
}

/* int or a sequence of 1..3 ints -> dim3 (missing ones are 1). */
int ck_py_parse_dim3(PyObject *o, unsigned out[3], const char *what)
{
    out[0] = out[1] = out[2] = 1;
    if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0 || v > 0xFFFFFFFFll) {
            PyErr_Format(PyExc_ValueError, "%s = %lld is out of range", what, v);
            return -1;
        }
        out[0] = (unsigned)v;
        return 0;
    }
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of 1 to 3 ints, got %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t n = PyTuple_Check(o) ? PyTuple_GET_SIZE(o) : PyList_GET_SIZE(o);
    if (n < 1 || n > 3) {
        PyErr_Format(PyExc_ValueError, "%s must have 1 to 3 dimensions, got %zd", what, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PyTuple_Check(o) ? PyTuple_GET_ITEM(o, i) : PyList_GET_ITEM(o, i); /* borrowed */
        long long v = PyLong_AsLongLong(it);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0 || v > 0xFFFFFFFFll) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] = %lld is out of range", what, i, v);
            return -1;
        }
        out[i] = (unsigned)v;
    }
    return 0;
}

typedef union {
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; float f32; double f64; float c64[2]; double c128[2];
    void *p; unsigned char raw[16];
} ck_kval;

static const char *param_desc(int t) { return t >= 0 ? ck_dtype_get_info((ck_dtype)t)->name : "?"; }

/* A Python scalar / NumPy scalar into one value slot; t is the declared
 * dtype or -1.  0, or -1 with an exception. */
static int marshal_scalar(PyObject *o, int t, ck_kval *v, int argi, int *size)
{
    ck_scalar s;
    int weak = 0;
    int r = ck_py_scalar_from_obj(o, &s, &weak);
    if (r < 0) return -1;
    if (r > 0) {
        PyErr_Format(PyExc_TypeError, "kernel argument %d: cannot pass a %.100s (pass a cudakit array, a NumPy "
                     "scalar or a Python bool, int, float or complex)", argi, Py_TYPE(o)->tp_name);
        return -1;
    }
    if (t < 0) {
        /* the documented defaults: int -> long long, float -> double, bool
         * -> bool, complex -> complex<double>; NumPy scalars keep theirs */
        if (weak && s.dtype == CK_UINT64) {
            PyErr_Format(PyExc_OverflowError, "kernel argument %d: %R does not fit a long long", argi, o);
            return -1;
        }
        ck_scalar_store(&s, s.dtype, v);
        *size = ck_dtype_get_info(s.dtype)->itemsize;
        return 0;
    }
    ck_dtype dt = (ck_dtype)t;
    ck_kind want = ck_dtype_get_info(dt)->kind, have = ck_dtype_get_info(s.dtype)->kind;
    if (weak) {
        int ok = want == CK_KIND_COMPLEX || have == CK_KIND_BOOL || (have == CK_KIND_INT && want != CK_KIND_BOOL) ||
                 (have == CK_KIND_FLOAT && want == CK_KIND_FLOAT) || (have == CK_KIND_INT && want == CK_KIND_BOOL);
        if (have == CK_KIND_UINT) ok = want != CK_KIND_BOOL;
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "kernel argument %d: cannot pass a Python %.50s to a %s parameter", argi,
                         Py_TYPE(o)->tp_name, param_desc(t));
            return -1;
        }
        if (want == CK_KIND_INT || want == CK_KIND_UINT) {
            int isz = ck_dtype_get_info(dt)->itemsize;
            int bad;
            if (want == CK_KIND_INT) {
                int64_t lo = isz == 8 ? INT64_MIN : -((int64_t)1 << (isz * 8 - 1));
                int64_t hi = isz == 8 ? INT64_MAX : ((int64_t)1 << (isz * 8 - 1)) - 1;
                bad = s.dtype == CK_UINT64 ? 1 : (s.v.i < lo || s.v.i > hi);
            } else {
                uint64_t hi = isz == 8 ? UINT64_MAX : ((uint64_t)1 << (isz * 8)) - 1;
                bad = s.dtype == CK_UINT64 ? s.v.u > hi : (s.v.i < 0 || (uint64_t)s.v.i > hi);
            }
            if (bad) {
                PyErr_Format(PyExc_OverflowError, "kernel argument %d: Python integer %R out of bounds for the %s "
                             "parameter", argi, o, param_desc(t));
                return -1;
            }
        }
    } else if (!ck_dtype_can_cast_same_kind(s.dtype, dt)) {
        PyErr_Format(PyExc_TypeError, "kernel argument %d: cannot pass a %s scalar to a %s parameter", argi,
                     ck_dtype_get_info(s.dtype)->name, param_desc(t));
        return -1;
    }
    ck_scalar_store(&s, dt, v);
    *size = ck_dtype_get_info(dt)->itemsize;
    return 0;
}

/* "argument 2 ('n')" */
static const char *arg_name(const CkKernelObject *k, Py_ssize_t i, char *buf, size_t n)
{
    if (k->params && i < k->nparams && k->params[i].name[0])
        snprintf(buf, n, "argument %zd ('%s')", i, k->params[i].name);
    else
        snprintf(buf, n, "argument %zd", i);
    return buf;
}

/* A NumPy scalar's bytes (a 0-d buffer), or -1 when o is not one. */
static Py_ssize_t numpy_scalar_bytes(PyObject *o, Py_buffer *view)
{
    if (strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) || !PyObject_CheckBuffer(o)) return -1;
    if (PyObject_GetBuffer(o, view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        return -1;
    }
    if (view->ndim != 0) {
        PyBuffer_Release(view);
        return -1;
    }
    return view->len;
}

/* A parameter of a type cudakit cannot size: a NumPy scalar of exactly
 * its size, copied into v (or, larger than v, into *owned, which the
 * caller frees after the launch); *param points at the bytes. */
static int marshal_opaque(const CkKernelObject *k, Py_ssize_t i, PyObject *o, ck_kval *v, void **param, void **owned)
{
    int size = k->sizes_known && i < k->nsizes ? k->psize[i] : -1;
    Py_buffer view;
    Py_ssize_t got = numpy_scalar_bytes(o, &view);
    if (got >= 0 && (size < 0 || got == size)) {
        /* size not known (a GPU that does not tell): zeros past the value, so
         * a larger parameter never reads outside this buffer */
        size_t n = size >= 0 ? (size_t)got : (size_t)(got > 4096 ? got : 4096);
        unsigned char *dst = v->raw;
        if (n > sizeof v->raw) {
            if (!(dst = *owned = PyMem_Calloc(1, n))) {
                PyBuffer_Release(&view);
                PyErr_NoMemory();
                return -1;
            }
        } else {
            memset(v->raw, 0, sizeof v->raw);
        }
        memcpy(dst, view.buf, (size_t)got);
        PyBuffer_Release(&view);
        *param = dst;
        return 0;
    }
    if (got >= 0) PyBuffer_Release(&view);
    char an[96], sz[48] = "";
    if (size >= 0) snprintf(sz, sizeof sz, " of exactly %d bytes", size);
    if (got >= 0)
        PyErr_Format(PyExc_TypeError, "kernel '%s': %s: the parameter is '%s' (%d bytes), a type cudakit cannot size "
                     "from the source, and the %.100s passed has %zd bytes: pass a NumPy scalar or structured scalar "
                     "(np.void)%s", k->name, arg_name(k, i, an, sizeof an), k->params[i].type, size,
                     Py_TYPE(o)->tp_name, got, sz);
    else
        PyErr_Format(PyExc_TypeError, "kernel '%s': %s: the parameter is '%s', a type cudakit cannot size from the "
                     "source, so it takes only a NumPy scalar or structured scalar (np.void)%s, not %.100s", k->name,
                     arg_name(k, i, an, sizeof an), k->params[i].type, sz, Py_TYPE(o)->tp_name);
    return -1;
}

/* The compiled kernel's parameter sizes, asked once per kind of device
 * until one tells.  Where they contradict the source as the scan read it
 * (a macro making the declaration, a type it misread), the compiled
 * kernel wins: a parameter whose size differs is one cudakit cannot size. */
static void kernel_sizes(CkKernelObject *k, ck_function *f, ck_device dev)
{
    unsigned bit = dev.type == CK_DEVICE_CPU ? 1u : 2u;
    if (k->sizes_known || (k->sizes_asked & bit)) return;
    k->sizes_asked |= bit;
    size_t sz[CK_KMAXP];
    int n = ck_function_params(f, sz, CK_KMAXP);
    if (n < 0 || n > CK_KMAXP) return;
    for (int i = 0; i < n; i++) k->psize[i] = (int)sz[i];
    k->nsizes = n;
    k->sizes_known = 1;
    if (k->nparams >= 0 && k->nparams != n) {
        k->nparams = -1;
        k->has_opaque = 0;
        return;
    }
    for (int i = 0; i < k->nparams; i++) {
        int want = k->pkind[i] == PK_POINTER  ? (int)sizeof(void *)
                   : k->pkind[i] == PK_SCALAR ? ck_dtype_get_info((ck_dtype)k->pdtype[i])->itemsize
                                              : -1;
        if (want >= 0 && want != k->psize[i]) {
            k->pkind[i] = PK_OPAQUE;
            k->has_opaque = 1;
        }
    }
}

static PyObject *s_shared_mem, *s_stream, *s_shared;

/* A stream argument: None (the current stream of dev), a handle, or an
 * object with .handle or .ptr (ck.cuda.Stream, CuPy's, ...). */
int ck_py_parse_stream(PyObject *o, ck_device dev, ck_stream *out)
{
    if (o == Py_None || !o) {
        *out = ck_stream_current(dev);
        return 0;
    }
    PyObject *h = NULL;
    if (PyLong_Check(o)) h = Py_NewRef(o);
    else if (PyObject_HasAttrString(o, "handle")) h = PyObject_GetAttrString(o, "handle");
    else if (PyObject_HasAttrString(o, "ptr")) h = PyObject_GetAttrString(o, "ptr");
    if (!h) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "stream must be a ck.cuda.Stream, got %.100s", Py_TYPE(o)->tp_name);
        return -1;
    }
    if (h == Py_None) *out = NULL;
    else *out = (ck_stream)PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    return PyErr_Occurred() ? -1 : 0;
}

/* kernel(grid, block, args, shared_mem=0, stream=None) */
static PyObject *kernel_launch(CkKernelObject *k, PyObject *grido, PyObject *blocko, PyObject *argso, PyObject *shmo,
                               PyObject *streamo)
{
    if (kernel_ready(k) < 0) return NULL;
    unsigned grid[3], block[3];
    if (ck_py_parse_dim3(grido, grid, "grid") < 0 || ck_py_parse_dim3(blocko, block, "block") < 0) return NULL;
    size_t shmem = 0;
    if (shmo && shmo != Py_None) {
        long long v = PyLong_AsLongLong(shmo);
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (v < 0) return PyErr_Format(PyExc_ValueError, "shared_mem = %lld is negative", v);
        shmem = (size_t)v;
    }
    if (!PyTuple_Check(argso) && !PyList_Check(argso))
        return PyErr_Format(PyExc_TypeError, "kernel args must be a tuple, got %.100s", Py_TYPE(argso)->tp_name);
    Py_ssize_t na = PyTuple_Check(argso) ? PyTuple_GET_SIZE(argso) : PyList_GET_SIZE(argso);
    PyObject *const *items = PyTuple_Check(argso) ? &PyTuple_GET_ITEM(argso, 0) : &PyList_GET_ITEM(argso, 0);
    if (na > CK_KMAXP)
        return PyErr_Format(PyExc_ValueError, "kernels with more than %d arguments are not supported", CK_KMAXP);

    /* the launch device: that of the first array argument */
    ck_device dev;
    int have_dev = 0;
    for (Py_ssize_t i = 0; i < na; i++)
        if (CkArray_Check(items[i])) { dev = ck_array_device(CK_ARR(items[i])); have_dev = 1; break; }
    if (!have_dev) dev = ck_py_default_device();
    ck_function *f = kernel_function(k, dev);
    if (!f) return NULL;
    kernel_sizes(k, f, dev);
    if (k->nparams >= 0 && na != k->nparams)
        return PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d arguments, got %zd", k->name, k->nparams, na);
    if (k->nparams < 0 && k->sizes_known && na != k->nsizes)
        return PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d arguments, got %zd", k->name, k->nsizes, na);

    ck_kval vals[CK_KMAXP];
    void *params[CK_KMAXP];
    void *owned[CK_KMAXP];   /* values larger than a slot */
    int nowned = 0;
    PyObject *ret = NULL;
    char an[96];
    for (Py_ssize_t i = 0; i < na; i++) {
        PyObject *o = items[i];
        int kind = k->nparams >= 0 ? k->pkind[i] : PK_UNKNOWN;
        int t = k->nparams >= 0 ? k->pdtype[i] : -1;
        params[i] = &vals[i];
        if (CkArray_Check(o)) {
            ck_array *a = CK_ARR(o);
            ck_device ad = ck_array_device(a);
            if (!ck_device_equal(ad, dev)) {
                char da[32], dl[32];
                ck_device_str(ad, da, sizeof da);
                ck_device_str(dev, dl, sizeof dl);
                PyErr_Format(PyExc_ValueError, "kernel '%s': %s is an array on %s but the launch is on %s (the device "
                             "of the first array argument)", k->name, arg_name(k, i, an, sizeof an), da, dl);
                goto out;
            }
            if (kind == PK_SCALAR || kind == PK_OPAQUE) {
                PyErr_Format(PyExc_TypeError, "kernel '%s': %s is an array but the parameter is a %s value", k->name,
                             arg_name(k, i, an, sizeof an), kind == PK_SCALAR ? param_desc(t) : k->params[i].type);
                goto out;
            }
            if (t >= 0 && (ck_dtype)t != a->dtype) {
                PyErr_Format(PyExc_TypeError, "kernel '%s': %s is a %s array but the parameter points to %s", k->name,
                             arg_name(k, i, an, sizeof an), ck_dtype_get_info(a->dtype)->name, param_desc(t));
                goto out;
            }
            vals[i].p = a->data;
        } else if (o == Py_None && kind != PK_SCALAR && kind != PK_OPAQUE) {
            vals[i].p = NULL;   /* None: a null pointer */
        } else if (kind == PK_POINTER) {
            PyErr_Format(PyExc_TypeError, "kernel '%s': %s must be an array or None (the parameter is a pointer), "
                         "got %.100s", k->name, arg_name(k, i, an, sizeof an), Py_TYPE(o)->tp_name);
            goto out;
        } else if (kind == PK_OPAQUE) {
            if (marshal_opaque(k, i, o, &vals[i], &params[i], &owned[nowned]) < 0) goto out;
            if (params[i] != (void *)&vals[i]) nowned++;
        } else {
            int size = 0;
            if (marshal_scalar(o, t, &vals[i], (int)i, &size) < 0) goto out;
            if (kind == PK_UNKNOWN && k->sizes_known && size != k->psize[i]) {
                PyErr_Format(PyExc_TypeError, "kernel '%s': %s: the parameter takes %d bytes and the %.100s passed "
                             "%d: pass a NumPy scalar of exactly %d bytes (the kernel's signature could not be read "
                             "from its source)", k->name, arg_name(k, i, an, sizeof an), k->psize[i],
                             Py_TYPE(o)->tp_name, size, k->psize[i]);
                goto out;
            }
        }
    }

    ck_stream st;
    if (ck_py_parse_stream(streamo, dev, &st) < 0) goto out;
    ck_launch_arg info[CK_KMAXP];
    ck_launch_arg *infop = NULL;
    if (dev.type == CK_DEVICE_CPU && ck_kernel_bounds_mode()) {
        for (Py_ssize_t i = 0; i < na; i++) {
            memset(&info[i], 0, sizeof info[i]);
            if (CkArray_Check(items[i])) {
                ck_array *a = CK_ARR(items[i]);
                int64_t lo, hi, isz = ck_array_itemsize(a);
                ck_layout_extent(a->ndim, a->shape, a->strides, isz, &lo, &hi);
                info[i].is_array = 1;
                info[i].base = a->buf->ptr;
                info[i].nbytes = a->buf->nbytes;
                /* the view's own bytes: an access outside them changes memory the
                 * kernel was not given, even when it is inside the buffer */
                info[i].lo = (char *)a->data + lo;
                info[i].extent = (size_t)(hi - lo);
                info[i].itemsize = (size_t)isz;
            }
        }
        infop = info;
    }
    ck_status s;
    if (dev.type == CK_DEVICE_CPU) {   /* the CPU runs the launch to its end: let other threads go on */
        Py_BEGIN_ALLOW_THREADS
        s = ck_function_launch(f, grid, block, shmem, st, (int)na, params, infop);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_function_launch(f, grid, block, shmem, st, (int)na, params, infop);
    }
    if (s != CK_OK) ck_py_raise(s);
    else ret = Py_NewRef(Py_None);
out:
    for (int i = 0; i < nowned; i++) PyMem_Free(owned[i]);
    return ret;
}

static PyObject *kernel_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    CkKernelObject *k = (CkKernelObject *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *slot[5] = {NULL, NULL, NULL, NULL, NULL};
    if (n < 3 || n > 5) {
        if (n > 5 || !kwnames)
            return PyErr_Format(PyExc_TypeError, "kernel(grid, block, args, shared_mem=0, stream=None) takes 3 to 5 "
                                "positional arguments (%zd given)", n);
    }
    for (Py_ssize_t i = 0; i < n && i < 5; i++) slot[i] = args[i];
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int at;
        if (key == s_shared_mem || PyUnicode_Compare(key, s_shared_mem) == 0 || PyUnicode_Compare(key, s_shared) == 0)
            at = 3;
        else if (key == s_stream || PyUnicode_Compare(key, s_stream) == 0)
            at = 4;
        else if (PyUnicode_CompareWithASCIIString(key, "grid") == 0)
            at = 0;
        else if (PyUnicode_CompareWithASCIIString(key, "block") == 0)
            at = 1;
        else if (PyUnicode_CompareWithASCIIString(key, "args") == 0)
            at = 2;
        else
            return PyErr_Format(PyExc_TypeError, "kernel() got an unexpected keyword argument %R", key);
        if (slot[at]) return PyErr_Format(PyExc_TypeError, "kernel() got multiple values for argument %R", key);
        slot[at] = args[n + i];
    }
    if (!slot[0] || !slot[1] || !slot[2])
        return PyErr_Format(PyExc_TypeError, "kernel(grid, block, args, shared_mem=0, stream=None) is missing %s",
                            !slot[0] ? "grid" : !slot[1] ? "block" : "args");
    return kernel_launch(k, slot[0], slot[1], slot[2], slot[3], slot[4]);
}

/* _launch(grid, block, args, shared_mem, stream): the same, for the Python
 * wrappers (SourceModule's f(*args, block=, grid=)). */
static PyObject *kernel_launch_meth(CkKernelObject *k, PyObject *args)
{
    PyObject *g, *b, *a, *sh = Py_None, *st = Py_None;
    if (!PyArg_ParseTuple(args, "OOO|OO", &g, &b, &a, &sh, &st)) return NULL;
    return kernel_launch(k, g, b, a, sh, st);
}

/* The kernel's function on a device argument (None: the default device). */
static ck_function *kernel_function_arg(CkKernelObject *k, PyObject *devobj)
{
    ck_device dev;
    if (device_arg(devobj, &dev) < 0) return NULL;
    return kernel_function(k, dev);
}

/* _attributes(device) -> dict of the function's attributes there. */
static PyObject *kernel_attributes(CkKernelObject *k, PyObject *args)
{
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &devobj)) return NULL;
    ck_function *f = kernel_function_arg(k, devobj);
    if (!f) return NULL;
    ck_function_attrs at;
    ck_status s = ck_function_attributes(f, &at);
    if (s != CK_OK) return ck_py_raise(s);
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "max_threads_per_block", at.max_threads_per_block,
                         "num_regs", at.num_regs, "shared_size_bytes", at.shared_size_bytes, "const_size_bytes",
                         at.const_size_bytes, "local_size_bytes", at.local_size_bytes,
                         "max_dynamic_shared_size_bytes", at.max_dynamic_shared_size_bytes, "ptx_version",
                         at.ptx_version, "binary_version", at.binary_version);
}

static PyObject *kernel_set_max_dyn_shared(CkKernelObject *k, PyObject *args)
{
    PyObject *devobj;
    int bytes;
    if (!PyArg_ParseTuple(args, "Oi", &devobj, &bytes)) return NULL;
    ck_function *f = kernel_function_arg(k, devobj);
    if (!f) return NULL;
    ck_status s = ck_function_set_max_dynamic_shared(f, bytes);
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

/* _suggest_block(device, dyn_shared=0, block_limit=0) -> (min_grid, block) */
static PyObject *kernel_suggest_block(CkKernelObject *k, PyObject *args)
{
    PyObject *devobj;
    Py_ssize_t shm = 0;
    int limit = 0;
    if (!PyArg_ParseTuple(args, "O|ni", &devobj, &shm, &limit)) return NULL;
    ck_function *f = kernel_function_arg(k, devobj);
    if (!f) return NULL;
    int mg = 0, bs = 0;
    ck_status s = ck_function_suggest_block(f, (size_t)shm, limit, &mg, &bs);
    if (s != CK_OK) return ck_py_raise(s);
    return Py_BuildValue("(ii)", mg, bs);
}

static PyObject *kernel_compile(CkKernelObject *k, PyObject *args)
{
    PyObject *devobj = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &devobj)) return NULL;
    if (!kernel_function_arg(k, devobj)) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef kernel_methods[] = {
    CK_DEF_VARARGS(_setup, kernel_setup, "($self, module, name, /)", "Bind the kernel to a function of a _Module."),
    CK_DEF_VARARGS(_launch, kernel_launch_meth, "($self, grid, block, args, shared_mem=None, stream=None, /)",
                   "Launch with the arguments as a tuple."),
    CK_DEF_VARARGS(_attributes, kernel_attributes, "($self, device=None, /)",
                   "The function's attributes on a device, as a dict."),
    CK_DEF_VARARGS(_set_max_dynamic_shared, kernel_set_max_dyn_shared, "($self, device, bytes, /)",
                   "Let launches on device use up to bytes of dynamic shared memory."),
    CK_DEF_VARARGS(_suggest_block, kernel_suggest_block, "($self, device, shared_mem=0, limit=0, /)",
                   "The occupancy calculator's (grid, block) for device."),
    CK_DEF_VARARGS(compile, kernel_compile, "($self, device=None, /)",
                   "Compile (or load from the cache) for a device now (None: the default device)."),
    {NULL, NULL, 0, NULL},
};

static PyObject *kernel_get_name(CkKernelObject *k, void *u)
{
    (void)u;
    if (!k->name) Py_RETURN_NONE;
    return PyUnicode_FromString(k->name);
}

static PyObject *kernel_get_module(CkKernelObject *k, void *u)
{
    (void)u;
    if (!k->module) Py_RETURN_NONE;
    return Py_NewRef((PyObject *)k->module);
}

static PyObject *kernel_get_nparams(CkKernelObject *k, void *u)
{
    (void)u;
    if (k->nparams < 0) Py_RETURN_NONE;
    return PyLong_FromLong(k->nparams);
}

static PyGetSetDef kernel_getset[] = {
    {"name", (getter)kernel_get_name, NULL, "the kernel's name (or name expression)", NULL},
    {"_module", (getter)kernel_get_module, NULL, NULL, NULL},
    {"nparams", (getter)kernel_get_nparams, NULL, "parameter count when the signature is known, else None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kw)
{
    /* Python subclasses on versions that do not inherit vectorcall */
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    Py_ssize_t nk = kw ? PyDict_GET_SIZE(kw) : 0;
    PyObject *stack[8];
    if (n + nk > 8) return PyErr_Format(PyExc_TypeError, "kernel() takes at most 5 arguments");
    for (Py_ssize_t i = 0; i < n; i++) stack[i] = PyTuple_GET_ITEM(args, i);
    PyObject *kwnames = NULL;
    if (nk) {
        kwnames = PyTuple_New(nk);
        if (!kwnames) return NULL;
        Py_ssize_t pos = 0, j = 0;
        PyObject *key, *val;
        while (PyDict_Next(kw, &pos, &key, &val)) {
            PyTuple_SET_ITEM(kwnames, j, Py_NewRef(key));
            stack[n + j++] = val;
        }
    }
    PyObject *r = kernel_vectorcall(self, stack, (size_t)n, kwnames);
    Py_XDECREF(kwnames);
    return r;
}

PyTypeObject CkKernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core._Kernel",
    .tp_basicsize = sizeof(CkKernelObject),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_vectorcall_offset = offsetof(CkKernelObject, vectorcall),
    .tp_call = kernel_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A kernel of a _Module: kernel(grid, block, args, shared_mem=0, stream=None).",
    .tp_traverse = (traverseproc)kernel_traverse,
    .tp_clear = (inquiry)kernel_clear,
    .tp_methods = kernel_methods,
    .tp_getset = kernel_getset,
    .tp_dictoffset = offsetof(CkKernelObject, dict),
    .tp_new = kernel_new,
};

/* ------------------------------------------------------------- functions */

static int cpu_kernels_state_ = -1;

/* Whether the CPU target can run kernels (a C++ compiler is there). */
static PyObject *c_cpu_kernels_available(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    if (cpu_kernels_state_ < 0) {
        ck_module *cm = NULL;
        ck_status s;
        Py_BEGIN_ALLOW_THREADS
        s = ck_module_load(ck_device_cpu(),
                           "extern \"C\" __global__ void ck_probe(int *p) { if (p) p[threadIdx.x] = 1; }\n",
                           "probe.cu", NULL, 0, NULL, 0, &cm);
        Py_END_ALLOW_THREADS
        cpu_kernels_state_ = s == CK_OK;
        if (s == CK_OK) ck_module_free(cm);
        ck_error_clear();
    }
    return PyBool_FromLong(cpu_kernels_state_);
}

static PyObject *c_cpu_bounds(PyObject *m, PyObject *args)
{
    (void)m;
    int on = -1;
    if (!PyArg_ParseTuple(args, "|i", &on)) return NULL;
    int prev = ck_kernel_bounds_mode();
    if (on >= 0) ck_kernel_set_bounds_mode(on);
    return PyBool_FromLong(prev);
}

PyMethodDef ck_py_kernel_functions[] = {
    CK_DEF_NOARGS(_cpu_kernels_available, c_cpu_kernels_available, "()",
                  "Whether the CPU target can run kernels (a C++ compiler is there)."),
    CK_DEF_VARARGS(_kernel_signature, c_kernel_signature, "(source, name, options=None, /)",
                   "The parameter types of a kernel of a source (private)."),
    CK_DEF_VARARGS(_cpu_bounds_mode, c_cpu_bounds, "(on=-1, /)",
                   "The CPU kernels' bounds mode (-1: only read it); returns the previous one."),
    {NULL, NULL, 0, NULL},
};

int ck_py_kernels_init(PyObject *module)
{
    s_shared_mem = PyUnicode_InternFromString("shared_mem");
    s_shared = PyUnicode_InternFromString("shared");
    s_stream = PyUnicode_InternFromString("stream");
    if (!s_shared_mem || !s_shared || !s_stream) return -1;
    if (PyType_Ready(&CkModule_Type) < 0 || PyType_Ready(&CkKernel_Type) < 0) return -1;
    if (PyModule_AddObjectRef(module, "_Module", (PyObject *)&CkModule_Type) < 0 ||
        PyModule_AddObjectRef(module, "_Kernel", (PyObject *)&CkKernel_Type) < 0)
        return -1;
    return 0;
}
