/* Kernels written in Python: the translator's face (_pyk_translate) and the
 * launch path of cudakit.cuda.jit kernels.
 *
 * A _PyKernel holds the specialisations of one Python function: for each
 * list of argument types (one 32-bit code an argument: array or scalar,
 * dtype, ndim, layout, read-only) and device, the compiled function.  A
 * launch (kernel[grid, block, stream, shared](args), a _PyLaunch) computes
 * the codes of its arguments, finds their specialisation (the last one
 * used is tried first), writes the parameters (an array as its data
 * pointer, shape and strides) and launches, all in C: no Python code runs
 * on the way unless a new specialisation must be compiled, or an argument
 * is a NumPy array or another library's GPU array (the dispatcher's
 * _convert, in Python, moves or wraps them and the launch goes on). */
#include "ck_python.h"
#include "cudakit_pykernel.h"

#include <stdio.h>
#include <string.h>

#define PK_MAXARGS 64

/* ------------------------------------------------------------ translate */

/* _pyk_translate(tree, args, options) -> (source, kernel name, nparams,
 * uses_barrier, the dtype name a device function returns or None,
 * grid_sync (0, 1, or 2: on a GPU only), coarsened), or
 * raises ValueError/TypeError/NotImplementedError with .lineno and
 * .col_offset set (Python formats the message). */
static PyObject *f_translate(PyObject *m, PyObject *args)
{
    (void)m;
    const char *tree;
    Py_ssize_t len;
    PyObject *argtypes, *opts;
    if (!PyArg_ParseTuple(args, "s#OO!", &tree, &len, &argtypes, &PyDict_Type, &opts)) return NULL;
    PyObject *fast = PySequence_Fast(argtypes, "argument types must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > PK_MAXARGS) {
        Py_DECREF(fast);
        return PyErr_Format(PyExc_ValueError, "a kernel takes at most %d arguments", PK_MAXARGS);
    }
    ck_pyk_arg a[PK_MAXARGS];
    for (Py_ssize_t i = 0; i < n; i++) {
        int kind, ndim, ro;
        PyObject *dt;
        const char *layout;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iOisp", &kind, &dt, &ndim, &layout, &ro)) {
            Py_DECREF(fast);
            return NULL;
        }
        ck_dtype d;
        if (ck_py_dtype_from_obj(dt, CK_DTYPE_INVALID, &d) < 0) { Py_DECREF(fast); return NULL; }
        a[i] = (ck_pyk_arg){kind, d, ndim, layout[0], ro};
    }
    Py_DECREF(fast);
    ck_pyk_options o = {0};
    PyObject *v;
#define CK_OPT_INT_(key, field)                                              \
    if ((v = PyDict_GetItemString(opts, key)) && v != Py_None) {             \
        o.field = (int)PyLong_AsLong(v);                                     \
        if (o.field == -1 && PyErr_Occurred()) return NULL;                  \
    }
    CK_OPT_INT_("device", device_function)
    CK_OPT_INT_("fastmath", fastmath)
    CK_OPT_INT_("debug", debug)
    CK_OPT_INT_("lineinfo", lineinfo)
    CK_OPT_INT_("max_registers", max_registers)
    CK_OPT_INT_("launch_bounds", launch_bounds)
    CK_OPT_INT_("no_coarsen", no_coarsen)
    CK_OPT_INT_("no_prefetch", no_prefetch)
    CK_OPT_INT_("no_vector", no_vector)
#undef CK_OPT_INT_
    if ((v = PyDict_GetItemString(opts, "filename")) && PyUnicode_Check(v)) o.filename = PyUnicode_AsUTF8(v);
    ck_pyk_result r;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_pyk_translate(tree, (size_t)len, a, (int)n, &o, &r);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) {
        PyObject *exc = s == CK_ERR_NOT_IMPLEMENTED ? PyExc_NotImplementedError
                      : s == CK_ERR_TYPE ? PyExc_TypeError : s == CK_ERR_OVERFLOW ? PyExc_OverflowError
                      : s == CK_ERR_INDEX ? PyExc_IndexError : s == CK_ERR_MEMORY ? PyExc_MemoryError : PyExc_ValueError;
        PyObject *e = PyObject_CallFunction(exc, "s", ck_error_message());
        if (!e) return NULL;
        PyObject *ln = PyLong_FromLong(r.error_line), *col = PyLong_FromLong(r.error_col);
        if (ln && col) {
            PyObject_SetAttrString(e, "lineno", ln);
            PyObject_SetAttrString(e, "col_offset", col);
        }
        Py_XDECREF(ln);
        Py_XDECREF(col);
        PyErr_SetObject(exc, e);
        Py_DECREF(e);
        return NULL;
    }
    const char *ret = r.return_dtype == CK_DTYPE_INVALID ? NULL : ck_dtype_get_info(r.return_dtype)->name;
    PyObject *res = Py_BuildValue("(ssiizii)", r.source, r.kernel_name, r.nparams, r.uses_barrier, ret, r.grid_sync,
                                  r.coarsened);
    ck_pyk_result_free(&r);
    return res;
}

/* ---------------------------------------------------------- dispatching */

enum { PK_LAYOUT_C = 0, PK_LAYOUT_F = 1, PK_LAYOUT_A = 2 };

/* An argument's code: bit 0 array, bits 1-4 dtype, 5-10 ndim, 11-12 layout, 13 read-only. */
static uint32_t array_code(const ck_array *a)
{
    int lay = (a->flags & CK_ARRAY_C_CONTIGUOUS) ? PK_LAYOUT_C : (a->flags & CK_ARRAY_F_CONTIGUOUS) ? PK_LAYOUT_F
                                                                                                    : PK_LAYOUT_A;
    return 1u | (uint32_t)a->dtype << 1 | (uint32_t)a->ndim << 5 | (uint32_t)lay << 11 |
           (uint32_t)!(a->flags & CK_ARRAY_WRITEABLE) << 13;
}

static uint32_t scalar_code(ck_dtype d) { return (uint32_t)d << 1; }

/* A grid barrier's word for the launches of one specialisation on one
 * stream (see ck_pyk_gridws in pyk_prelude.cuh): launches on one stream
 * run in turn, so they may share it; those on different streams may run
 * at once, so each stream has its own. */
typedef struct pk_gridws {
    ck_stream stream;
    PyObject *word;          /* a zeroed uint64 array of one element on the device */
    unsigned epoch;          /* launches so far */
} pk_gridws;

typedef struct pk_spec {
    ck_device dev;
    int nargs;
    uint32_t codes[PK_MAXARGS];
    int8_t store[PK_MAXARGS];    /* a scalar's parameter dtype when a signature declares one, else -1 */
    PyObject *module;        /* keeps the compiled module alive */
    ck_function *f;
    int nparams;
    int debug;
    int grid_sync;           /* the translator's: 0, 1, 2 (a GPU only) */
    pk_gridws *ws;           /* grid_sync on a GPU: one a stream */
    int nws;
    int checked;             /* compiled for bounds mode: with debug's index checks */
    int coarsened;           /* takes the launch's thread count last; on a GPU a wave of blocks at most */
    unsigned wave_threads;   /* threads the device holds at once (multiprocessors x threads each) */
    /* launches with NumPy arrays on a GPU (the dispatcher's _numpy_info, at the first):
     * the array parameters the kernel may write (bit i, argument i: only those are
     * copied back), each array argument's warning, and its category */
    int np_known;
    uint64_t np_written;
    PyObject *np_msgs, *np_category;
} pk_spec;

/* The object is the base of cudakit.cuda's Dispatcher, whose methods it
 * calls: _compile (a miss), _launch_converting (foreign arrays),
 * _check_error (debug kernels). */
typedef struct {
    PyObject_HEAD
    pk_spec *specs;
    int nspecs, cspecs;
    int last;
    PyObject *errbufs[CK_MAX_GPUS + 1];   /* debug kernels' error records, one a device (the CPU's last) */
    PyObject *weakreflist;
} CkPyKernelObject;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    CkPyKernelObject *kernel;
    unsigned grid[3], block[3];
    PyObject *stream;        /* None: the current stream */
    size_t shmem;
} CkPyLaunchObject;

static PyTypeObject CkPyKernel_Type, CkPyLaunch_Type;

static int pk_traverse(CkPyKernelObject *k, visitproc visit, void *arg)
{
    for (int i = 0; i < k->nspecs; i++) {
        Py_VISIT(k->specs[i].module);
        Py_VISIT(k->specs[i].np_msgs);
        Py_VISIT(k->specs[i].np_category);
        for (int j = 0; j < k->specs[i].nws; j++) Py_VISIT(k->specs[i].ws[j].word);
    }
    for (int i = 0; i <= CK_MAX_GPUS; i++) Py_VISIT(k->errbufs[i]);
    return 0;
}

static int pk_clear(CkPyKernelObject *k)
{
    for (int i = 0; i < k->nspecs; i++) {
        Py_CLEAR(k->specs[i].module);
        Py_CLEAR(k->specs[i].np_msgs);
        Py_CLEAR(k->specs[i].np_category);
        for (int j = 0; j < k->specs[i].nws; j++) Py_CLEAR(k->specs[i].ws[j].word);
    }
    for (int i = 0; i <= CK_MAX_GPUS; i++) Py_CLEAR(k->errbufs[i]);
    return 0;
}

static void pk_dealloc(CkPyKernelObject *k)
{
    PyObject_GC_UnTrack(k);
    if (k->weakreflist) PyObject_ClearWeakRefs((PyObject *)k);
    pk_clear(k);
    for (int i = 0; i < k->nspecs; i++) PyMem_Free(k->specs[i].ws);
    PyMem_Free(k->specs);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyObject *pk_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args; (void)kw;
    CkPyKernelObject *k = (CkPyKernelObject *)type->tp_alloc(type, 0);
    if (!k) return NULL;
    k->last = -1;
    return (PyObject *)k;
}

/* The argument types of these codes for the dispatcher: (kind, dtype,
 * ndim, layout, readonly) each. */
static PyObject *codes_tuple(int n, const uint32_t *codes)
{
    PyObject *types = PyTuple_New(n);
    if (!types) return NULL;
    static const char *const layouts[] = {"C", "F", "A"};
    for (int i = 0; i < n; i++) {
        uint32_t c = codes[i];
        PyObject *t = Py_BuildValue("(isisi)", (int)(c & 1), ck_dtype_get_info((ck_dtype)((c >> 1) & 15))->name,
                                    (int)((c >> 5) & 63), layouts[(c >> 11) & 3], (int)((c >> 13) & 1));
        if (!t) { Py_DECREF(types); return NULL; }
        PyTuple_SET_ITEM(types, i, t);
    }
    return types;
}

/* The specialisation for these codes on dev, compiled through the
 * dispatcher on a miss.  checked: bounds mode on the CPU, whose
 * specialisations check every index as debug=True ones do. */
static pk_spec *find_spec(CkPyKernelObject *k, ck_device dev, int n, const uint32_t *codes, int checked)
{
    if (k->last >= 0) {
        pk_spec *s = &k->specs[k->last];
        if (s->nargs == n && s->checked == checked && ck_device_equal(s->dev, dev) &&
            !memcmp(s->codes, codes, (size_t)n * sizeof *codes))
            return s;
    }
    for (int i = 0; i < k->nspecs; i++) {
        pk_spec *s = &k->specs[i];
        if (s->nargs == n && s->checked == checked && ck_device_equal(s->dev, dev) &&
            !memcmp(s->codes, codes, (size_t)n * sizeof *codes)) {
            k->last = i;
            return s;
        }
    }
    PyObject *types = codes_tuple(n, codes);
    if (!types) return NULL;
    PyObject *devo = ck_py_device_new(dev);
    PyObject *r = devo ? PyObject_CallMethod((PyObject *)k, "_compile", "(OOO)", types, devo,
                                             checked ? Py_True : Py_False)
                       : NULL;
    Py_XDECREF(devo);
    Py_DECREF(types);
    if (!r) return NULL;
    PyObject *mod, *store;
    const char *name;
    int nparams, debug, grid_sync = 0, coarsened = 0;
    if (!PyArg_ParseTuple(r, "OsipO|ii", &mod, &name, &nparams, &debug, &store, &grid_sync, &coarsened)) {
        Py_DECREF(r);
        return NULL;
    }
    if (!PyTuple_Check(store) || PyTuple_GET_SIZE(store) != n) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "_compile: the store dtypes must be a tuple, one an argument");
        return NULL;
    }
    int8_t st[PK_MAXARGS];
    for (int i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(store, i);
        ck_dtype t = CK_DTYPE_INVALID;
        if (d != Py_None && ck_py_dtype_from_obj(d, CK_DTYPE_INVALID, &t) < 0) { Py_DECREF(r); return NULL; }
        st[i] = (int8_t)(d == Py_None ? -1 : (int)t);
    }
    ck_function *f = ck_py_module_function(mod, name, dev);
    if (!f) { Py_DECREF(r); return NULL; }
    if (k->nspecs == k->cspecs) {
        int nc = k->cspecs ? k->cspecs * 2 : 4;
        pk_spec *v = PyMem_Realloc(k->specs, (size_t)nc * sizeof *v);
        if (!v) { Py_DECREF(r); PyErr_NoMemory(); return NULL; }
        k->specs = v;
        k->cspecs = nc;
    }
    pk_spec *s = &k->specs[k->nspecs];
    memset(s, 0, sizeof *s);
    s->dev = dev;
    s->nargs = n;
    memcpy(s->codes, codes, (size_t)n * sizeof *codes);
    memcpy(s->store, st, (size_t)n * sizeof *st);
    s->module = Py_NewRef(mod);
    s->f = f;
    s->nparams = nparams;
    s->debug = debug;
    s->grid_sync = grid_sync;
    s->checked = checked;
    s->coarsened = coarsened;
    if (coarsened && dev.type != CK_DEVICE_CPU) {
        ck_device_props pr;
        ck_status ps = ck_device_properties(dev, &pr);
        if (ps != CK_OK) { Py_DECREF(r); return (pk_spec *)ck_py_raise(ps); }
        s->wave_threads = (unsigned)(pr.multi_processor_count > 0 ? pr.multi_processor_count : 1) *
                          (unsigned)(pr.max_threads_per_multiprocessor > 0 ? pr.max_threads_per_multiprocessor : 1024);
    }
    Py_DECREF(r);
    k->last = k->nspecs++;
    return s;
}

/* The debug error record of dev (a 64-byte uint8 array there, zeroed). */
static PyObject *error_buffer(CkPyKernelObject *k, ck_device dev)
{
    int slot = dev.type == CK_DEVICE_CPU ? CK_MAX_GPUS : dev.index;
    if (slot < 0 || slot > CK_MAX_GPUS) { PyErr_SetString(PyExc_ValueError, "invalid device"); return NULL; }
    if (!k->errbufs[slot]) {
        ck_array a;
        int64_t n = 64;
        ck_status s = ck_full_scalar(&a, 1, &n, CK_UINT8, 0.0, dev);
        if (s != CK_OK) return ck_py_raise(s);
        k->errbufs[slot] = ck_py_wrap(&a, NULL);
    }
    return k->errbufs[slot];
}

/* The grid barrier's word of s for launches on stream st of dev: made
 * (zeroed, and the zeroing waited for, since st may not be the stream it
 * ran on) on the first launch there. */
static pk_gridws *grid_workspace(pk_spec *s, ck_device dev, ck_stream st)
{
    for (int i = 0; i < s->nws; i++)
        if (s->ws[i].stream == st) return &s->ws[i];
    ck_array a;
    int64_t n = 1;
    ck_status r = ck_full_scalar(&a, 1, &n, CK_UINT64, 0.0, dev);
    if (r != CK_OK) { ck_py_raise(r); return NULL; }
    PyObject *word = ck_py_wrap(&a, NULL);
    if (!word) return NULL;
    r = ck_device_synchronize(dev);
    if (r != CK_OK) { Py_DECREF(word); ck_py_raise(r); return NULL; }
    pk_gridws *v = PyMem_Realloc(s->ws, (size_t)(s->nws + 1) * sizeof *v);
    if (!v) { Py_DECREF(word); PyErr_NoMemory(); return NULL; }
    s->ws = v;
    s->ws[s->nws] = (pk_gridws){st, word, 0};
    return &s->ws[s->nws++];
}

typedef union {
    int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
    int64_t i64; uint64_t u64; float f32; double f64; float c64[2]; double c128[2];
    void *p; unsigned char raw[16];
} pk_val;

static PyObject *launch_spec(CkPyLaunchObject *L, pk_spec *s, ck_device dev, ck_stream st, PyObject *const *args,
                             Py_ssize_t n, const uint32_t *codes, const ck_array *const *arrs);

/* The dispatcher's launch for foreign arrays (Python: moves or wraps them). */
static PyObject *launch_converting(CkPyLaunchObject *L, PyObject *const *args, Py_ssize_t n)
{
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) PyTuple_SET_ITEM(t, j, Py_NewRef(args[j]));
    return PyObject_CallMethod((PyObject *)L->kernel, "_launch_converting", "(ON)", (PyObject *)L, t);
}

/* A NumPy array (exactly: a subclass may mean more), told by its type's
 * name: the core does not import NumPy. */
static int is_numpy_array(PyObject *o) { return !strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray"); }

/* A launch's NumPy arrays on a GPU, as Numba's: copied to the device and
 * back around the launch, here in C, in the launch's stream order: every
 * copy in, the kernel, then copies back of the arrays the kernel may write
 * (the translator's typing says which), the first of which waits for the
 * kernel; the device copies come from the pool and go back to it. */
typedef struct pk_host {
    int n;                       /* NumPy arguments */
    int idx[PK_MAXARGS];         /* their positions */
    Py_buffer view[PK_MAXARGS];
    ck_array dev[PK_MAXARGS];    /* their device copies (dev[k].buf NULL: none yet) */
} pk_host;

static void host_release(pk_host *h)
{
    for (int k = 0; k < h->n; k++) {
        if (h->dev[k].buf) ck_array_release(&h->dev[k]);
        PyBuffer_Release(&h->view[k]);
    }
    h->n = 0;
}

/* The buffer of NumPy argument o as the k-th of h, and its code: 1 when
 * taken, 0 when it is one for the dispatcher's path (not C-contiguous, a
 * structured or byte-swapped dtype), -1 on error. */
static int host_take(pk_host *h, PyObject *o, int pos, uint32_t *code)
{
    Py_buffer *v = &h->view[h->n];
    if (PyObject_GetBuffer(o, v, PyBUF_RECORDS_RO) < 0) return -1;
    ck_dtype t = ck_py_dtype_from_format(v->format, v->itemsize);
    if (t == CK_DTYPE_INVALID || v->suboffsets || v->ndim > CK_MAXDIMS || v->ndim > 32 ||
        !PyBuffer_IsContiguous(v, 'C') || (v->len > 0 && !v->buf)) {
        PyBuffer_Release(v);
        return 0;
    }
    memset(&h->dev[h->n], 0, sizeof h->dev[h->n]);
    h->idx[h->n++] = pos;
    /* its device copy: C-contiguous, writeable (as the dispatcher's copies) */
    *code = 1u | (uint32_t)t << 1 | (uint32_t)v->ndim << 5 | (uint32_t)PK_LAYOUT_C << 11;
    return 1;
}

/* After the launch, on stream st (the current one): the arrays of h the
 * kernel may write (bits of written, by argument) back into NumPy's
 * memory.  Each is queued into pinned memory behind the kernel, then one
 * wait for the stream and the copies out: one round trip to the device,
 * where a copy into pageable memory is one more each
 * (CUDAKIT_NUMPY_STAGING=0 takes that path, for comparison). */
static ck_status host_copy_back(pk_host *h, uint64_t written, ck_device dev, ck_stream st)
{
    static int staging = -1;
    if (staging < 0) {
        const char *e = getenv("CUDAKIT_NUMPY_STAGING");
        staging = !(e && !strcmp(e, "0"));
    }
    ck_array pin[PK_MAXARGS];
    int npin = 0, back[PK_MAXARGS];
    ck_status cs = CK_OK;
    for (int k = 0; k < h->n && cs == CK_OK; k++) {
        Py_buffer *v = &h->view[k];
        if (v->readonly || !(written >> h->idx[k] & 1u) || v->len == 0) continue;
        if (!staging) {
            cs = ck_memcpy_to_host(dev, v->buf, h->dev[k].data, (size_t)v->len);
            continue;
        }
        cs = ck_pinned_empty(&pin[npin], h->dev[k].ndim, h->dev[k].shape, h->dev[k].dtype);
        if (cs != CK_OK) break;
        back[npin++] = k;
        cs = ck_array_copy_async(&pin[npin - 1], &h->dev[k], st);
    }
    if (npin) {
        /* waited for even after a failure: the copies queued write pin[] */
        ck_status ws = ck_stream_synchronize(dev, st);
        if (cs == CK_OK) cs = ws;
        for (int j = 0; j < npin; j++) {
            if (cs == CK_OK) memcpy(h->view[back[j]].buf, pin[j].data, (size_t)h->view[back[j]].len);
            ck_array_release(&pin[j]);
        }
    }
    return cs;
}

/* What _numpy_info says of s, asked once. */
static int spec_numpy_info(CkPyKernelObject *k, pk_spec *s, int n, const uint32_t *codes)
{
    if (s->np_known) return 0;
    PyObject *types = codes_tuple(n, codes);
    PyObject *devo = types ? ck_py_device_new(s->dev) : NULL;
    PyObject *r = devo ? PyObject_CallMethod((PyObject *)k, "_numpy_info", "(OO)", types, devo) : NULL;
    Py_XDECREF(devo);
    Py_XDECREF(types);
    if (!r) return -1;
    PyObject *mask, *msgs, *cat;
    if (!PyArg_ParseTuple(r, "OO!O", &mask, &PyTuple_Type, &msgs, &cat) || PyTuple_GET_SIZE(msgs) != n) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_numpy_info: (mask, a message an argument, category)");
        Py_DECREF(r);
        return -1;
    }
    unsigned long long m = PyLong_AsUnsignedLongLong(mask);
    if (m == (unsigned long long)-1 && PyErr_Occurred()) { Py_DECREF(r); return -1; }
    s->np_written = m;
    Py_XSETREF(s->np_msgs, Py_NewRef(msgs));
    Py_XSETREF(s->np_category, Py_NewRef(cat));
    s->np_known = 1;
    Py_DECREF(r);
    return 0;
}

static PyObject *launch(CkPyLaunchObject *L, PyObject *const *args, Py_ssize_t n)
{
    CkPyKernelObject *k = L->kernel;
    if (n > PK_MAXARGS) return PyErr_Format(PyExc_TypeError, "a kernel takes at most %d arguments", PK_MAXARGS);
    uint32_t codes[PK_MAXARGS];
    const ck_array *arrs[PK_MAXARGS];
    ck_device dev = ck_device_cpu();
    int have_dev = 0;
    pk_host host;
    host.n = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = args[i];
        if (CkArray_Check(o)) {
            const ck_array *a = CK_ARR(o);
            if (!have_dev) { dev = ck_array_device(a); have_dev = 1; }
            else if (!ck_device_equal(dev, ck_array_device(a))) {
                char da[32], db[32];
                ck_device_str(ck_array_device(a), da, sizeof da);
                ck_device_str(dev, db, sizeof db);
                host_release(&host);
                return PyErr_Format(PyExc_ValueError, "kernel argument %zd is an array on %s, but the launch is on %s "
                                    "(the device of the first array argument)", i, da, db);
            }
            if (a->ndim > 32) {
                host_release(&host);
                return PyErr_Format(PyExc_ValueError, "kernel argument %zd has too many dimensions", i);
            }
            codes[i] = array_code(a);
            arrs[i] = a;
            continue;
        }
        if (PyBool_Check(o)) { codes[i] = scalar_code(CK_BOOL); continue; }
        if (PyLong_CheckExact(o)) { codes[i] = scalar_code(CK_INT64); continue; }
        if (PyFloat_CheckExact(o)) { codes[i] = scalar_code(CK_FLOAT64); continue; }
        if (PyComplex_CheckExact(o)) { codes[i] = scalar_code(CK_COMPLEX128); continue; }
        if (is_numpy_array(o)) {
            int r = host_take(&host, o, (int)i, &codes[i]);
            if (r < 0) { host_release(&host); return NULL; }
            if (r > 0) continue;
            host_release(&host);
            return launch_converting(L, args, n);
        }
        ck_scalar sc;
        int weak;
        int r = ck_py_scalar_from_obj(o, &sc, &weak);
        if (r < 0) { host_release(&host); return NULL; }
        if (r == 0) { codes[i] = scalar_code(sc.dtype); continue; }
        /* another library's array: the dispatcher converts, then launches */
        host_release(&host);
        return launch_converting(L, args, n);
    }
    if (!have_dev) dev = ck_py_default_device();
    if (host.n && dev.type == CK_DEVICE_CPU) {
        /* on the CPU the dispatcher wraps NumPy's memory, no copies */
        host_release(&host);
        return launch_converting(L, args, n);
    }
    pk_spec *s = find_spec(k, dev, (int)n, codes, dev.type == CK_DEVICE_CPU && ck_kernel_bounds_mode());
    if (!s) { host_release(&host); return NULL; }
    if (s->nparams > CK_MAX_KERNEL_PARAMS) {
        host_release(&host);
        return PyErr_Format(PyExc_ValueError, "the kernel's %d parameters (an array counts 1 + 2 x ndim) exceed %d",
                            s->nparams, CK_MAX_KERNEL_PARAMS);
    }
    ck_stream st;
    if (ck_py_parse_stream(L->stream, dev, &st) < 0) { host_release(&host); return NULL; }
    ck_stream prev_stream = NULL;
    if (host.n) {
        if (spec_numpy_info(k, s, (int)n, codes) < 0) { host_release(&host); return NULL; }
        for (int h = 0; h < host.n; h++) {
            PyObject *msg = PyTuple_GET_ITEM(s->np_msgs, host.idx[h]);
            if (msg != Py_None && PyErr_WarnEx(s->np_category, PyUnicode_AsUTF8(msg), 1) < 0) {
                host_release(&host);
                return NULL;
            }
        }
        /* the copies go where the launch goes */
        prev_stream = ck_stream_current(dev);
        ck_stream_set_current(dev, st);
        ck_status cs = CK_OK;
        for (int h = 0; h < host.n && cs == CK_OK; h++) {
            Py_buffer *v = &host.view[h];
            int64_t shape[CK_MAXDIMS];
            for (int d = 0; d < v->ndim; d++) shape[d] = v->shape[d];
            cs = ck_array_empty(&host.dev[h], v->ndim, shape, (ck_dtype)((codes[host.idx[h]] >> 1) & 15), dev);
            if (cs == CK_OK) cs = ck_memcpy_from_host(dev, host.dev[h].data, v->buf, (size_t)v->len);
            arrs[host.idx[h]] = &host.dev[h];
        }
        if (cs != CK_OK) {
            ck_stream_set_current(dev, prev_stream);
            host_release(&host);
            return ck_py_raise(cs);
        }
    }
    PyObject *res = launch_spec(L, s, dev, st, args, n, codes, arrs);
    if (host.n) {
        ck_status cs = res ? host_copy_back(&host, s->np_written, dev, st) : CK_OK;
        ck_stream_set_current(dev, prev_stream);
        host_release(&host);
        if (cs != CK_OK) {
            Py_XDECREF(res);
            return ck_py_raise(cs);
        }
    }
    return res;
}

/* The launch of specialisation s: its parameters written (an array as its
 * data pointer, shape and strides, arrs[i] for argument i) and the kernel
 * queued on st. */
static PyObject *launch_spec(CkPyLaunchObject *L, pk_spec *s, ck_device dev, ck_stream st, PyObject *const *args,
                             Py_ssize_t n, const uint32_t *codes, const ck_array *const *arrs)
{
    CkPyKernelObject *k = L->kernel;
    pk_val vals[CK_MAX_KERNEL_PARAMS];
    void *params[CK_MAX_KERNEL_PARAMS];
    int np = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = args[i];
        if (codes[i] & 1) {
            const ck_array *a = arrs[i];
            vals[np].p = a->data;
            params[np] = &vals[np];
            np++;
            for (int d = 0; d < a->ndim; d++, np++) { vals[np].i64 = a->shape[d]; params[np] = &vals[np]; }
            for (int d = 0; d < a->ndim; d++, np++) { vals[np].i64 = a->strides[d]; params[np] = &vals[np]; }
            continue;
        }
        ck_dtype d = (ck_dtype)((codes[i] >> 1) & 15);
        if (s->store[i] >= 0) {
            /* a declared parameter type: the value converted to it, as Numba does */
            ck_scalar sc;
            int weak;
            if (ck_py_scalar_from_obj(o, &sc, &weak) != 0) return NULL;
            ck_scalar_store(&sc, (ck_dtype)s->store[i], &vals[np]);
        } else if (PyBool_Check(o)) vals[np].u8 = o == Py_True;
        else if (PyLong_CheckExact(o)) {
            long long v = PyLong_AsLongLong(o);
            if (v == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return PyErr_Format(PyExc_OverflowError, "kernel argument %zd: the integer %R does not fit int64", i, o);
            }
            vals[np].i64 = v;
        } else if (PyFloat_CheckExact(o)) vals[np].f64 = PyFloat_AS_DOUBLE(o);
        else if (PyComplex_CheckExact(o)) {
            vals[np].c128[0] = PyComplex_RealAsDouble(o);
            vals[np].c128[1] = PyComplex_ImagAsDouble(o);
        } else {
            ck_scalar sc;
            int weak;
            if (ck_py_scalar_from_obj(o, &sc, &weak) != 0) return NULL;
            ck_scalar_store(&sc, d, &vals[np]);
        }
        params[np] = &vals[np];
        np++;
    }
    PyObject *errbuf = NULL;
    if (s->debug) {
        errbuf = error_buffer(k, dev);
        if (!errbuf) return NULL;
        vals[np].p = CK_ARR(errbuf)->data;
        params[np] = &vals[np];
        np++;
    }
    unsigned flags = 0;
    if (s->grid_sync) {
        /* the grid barrier's workspace, the last parameter (ck_pyk_gridws) */
        struct { void *w; uint32_t epoch, dyn_bytes; } g = {NULL, 0, (uint32_t)L->shmem};
        if (dev.type == CK_DEVICE_CPU && s->grid_sync == 2)
            return PyErr_Format(PyExc_NotImplementedError, "kernel '%s': grid synchronisation (g.sync()) inside a "
                                "device function, or in a kernel with warp functions, runs on a GPU only; on the CPU "
                                "call g.sync() in the kernel itself, outside any else branch of a loop",
                                ck_function_name(s->f));
        if (dev.type != CK_DEVICE_CPU) {
            pk_gridws *ws = grid_workspace(s, dev, st);
            if (!ws) return NULL;
            g.w = CK_ARR(ws->word)->data;
            g.epoch = ++ws->epoch;
        }
        _Static_assert(sizeof g == sizeof vals[0].raw, "ck_pyk_gridws is 16 bytes");
        memcpy(vals[np].raw, &g, sizeof g);
        params[np] = &vals[np];
        np++;
        flags |= CK_LAUNCH_COOPERATIVE;
    }
    const unsigned *grid = L->grid;
    unsigned wave[3];
    if (s->coarsened) {
        /* the thread count asked for, the loop's bound; on a GPU a 1-d launch
         * of more blocks than a wave of the device runs as one wave, each
         * thread doing several indices */
        vals[np].i64 = (int64_t)L->grid[0] * L->block[0];
        params[np] = &vals[np];
        np++;
        if (s->wave_threads && L->grid[1] == 1 && L->grid[2] == 1 && L->block[1] == 1 && L->block[2] == 1) {
            unsigned cap = s->wave_threads / L->block[0];
            if (cap && L->grid[0] > cap) {
                wave[0] = cap;
                wave[1] = wave[2] = 1;
                grid = wave;
            }
        }
    }
    ck_status r;
    if (dev.type == CK_DEVICE_CPU) {
        Py_BEGIN_ALLOW_THREADS
        r = ck_function_launch_ex(s->f, grid, L->block, L->shmem, st, flags, np, params, NULL);
        Py_END_ALLOW_THREADS
    } else {
        r = ck_function_launch_ex(s->f, grid, L->block, L->shmem, st, flags, np, params, NULL);
    }
    if (r != CK_OK && (flags & CK_LAUNCH_COOPERATIVE)) {
        /* the grid's limits are the user's to act on: say the Python kernel's name, not its C one */
        char cname[160], msg[1024];
        snprintf(cname, sizeof cname, "kernel '%s'", ck_function_name(s->f));
        snprintf(msg, sizeof msg, "%s", ck_error_message());
        const char *at = strstr(msg, cname);
        PyObject *pyname = at ? PyObject_GetAttrString((PyObject *)k, "__name__") : NULL;
        const char *pn = pyname && PyUnicode_Check(pyname) ? PyUnicode_AsUTF8(pyname) : NULL;
        if (pn) ck_error_set(r, "%.*skernel '%s'%s", (int)(at - msg), msg, pn, at + strlen(cname));
        Py_XDECREF(pyname);
        PyErr_Clear();
    }
    if (r != CK_OK) return ck_py_raise(r);
    if (errbuf) {
        /* a debug kernel: the launch is waited for and its error raised */
        return PyObject_CallMethod((PyObject *)k, "_check_error", "(O)", errbuf);
    }
    Py_RETURN_NONE;
}

static PyObject *launch_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        return PyErr_Format(PyExc_TypeError, "a kernel takes positional arguments only");
    return launch((CkPyLaunchObject *)self, args, PyVectorcall_NARGS(nargsf));
}

static PyObject *launch_call(PyObject *self, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_GET_SIZE(kw)) return PyErr_Format(PyExc_TypeError, "a kernel takes positional arguments only");
    return launch((CkPyLaunchObject *)self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args));
}

static int launch_traverse(CkPyLaunchObject *l, visitproc visit, void *arg)
{
    Py_VISIT(l->kernel);
    Py_VISIT(l->stream);
    return 0;
}

static void launch_dealloc(CkPyLaunchObject *l)
{
    PyObject_GC_UnTrack(l);
    Py_CLEAR(l->kernel);
    Py_CLEAR(l->stream);
    Py_TYPE(l)->tp_free((PyObject *)l);
}

/* kernel[griddim, blockdim(, stream(, sharedmem))] */
static PyObject *pk_subscript(CkPyKernelObject *k, PyObject *key)
{
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) < 2 || PyTuple_GET_SIZE(key) > 4)
        return PyErr_Format(PyExc_ValueError, "a kernel launch is kernel[griddim, blockdim] or kernel[griddim, blockdim, "
                            "stream, sharedmem]");
    CkPyLaunchObject *l = PyObject_GC_New(CkPyLaunchObject, &CkPyLaunch_Type);
    if (!l) return NULL;
    l->vectorcall = launch_vectorcall;
    l->kernel = (CkPyKernelObject *)Py_NewRef(k);
    l->stream = Py_NewRef(Py_None);
    l->shmem = 0;
    PyObject_GC_Track(l);
    if (ck_py_parse_dim3(PyTuple_GET_ITEM(key, 0), l->grid, "griddim") < 0 ||
        ck_py_parse_dim3(PyTuple_GET_ITEM(key, 1), l->block, "blockdim") < 0) {
        Py_DECREF(l);
        return NULL;
    }
    if (PyTuple_GET_SIZE(key) > 2) {
        PyObject *st = PyTuple_GET_ITEM(key, 2);
        /* Numba's 0 is the default stream */
        if (PyLong_Check(st) && PyLong_AsLong(st) == 0) st = Py_None;
        Py_SETREF(l->stream, Py_NewRef(st));
    }
    if (PyTuple_GET_SIZE(key) > 3) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 3));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(l); return NULL; }
        if (v < 0) { Py_DECREF(l); return PyErr_Format(PyExc_ValueError, "sharedmem = %lld is negative", v); }
        l->shmem = (size_t)v;
    }
    return (PyObject *)l;
}

static PyMappingMethods pk_as_mapping = {.mp_subscript = (binaryfunc)pk_subscript};

static PyObject *pk_get_nspecs(CkPyKernelObject *k, void *u)
{
    (void)u;
    return PyLong_FromLong(k->nspecs);
}

static PyGetSetDef pk_getset[] = {
    {"_nspecialisations", (getter)pk_get_nspecs, NULL, "compiled specialisations (argument types x devices)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CkPyKernel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core._PyKernel",
    .tp_basicsize = sizeof(CkPyKernelObject),
    .tp_dealloc = (destructor)pk_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The specialisations and launch path of a kernel written in Python (cudakit.cuda.jit).",
    .tp_traverse = (traverseproc)pk_traverse,
    .tp_clear = (inquiry)pk_clear,
    .tp_as_mapping = &pk_as_mapping,
    .tp_getset = pk_getset,
    .tp_weaklistoffset = offsetof(CkPyKernelObject, weakreflist),
    .tp_new = pk_new,
};

static PyObject *launch_get(CkPyLaunchObject *l, void *which)
{
    intptr_t w = (intptr_t)which;
    if (w == 0) return Py_BuildValue("(III)", l->grid[0], l->grid[1], l->grid[2]);
    if (w == 1) return Py_BuildValue("(III)", l->block[0], l->block[1], l->block[2]);
    if (w == 2) return Py_NewRef(l->stream);
    if (w == 3) return PyLong_FromSize_t(l->shmem);
    return Py_NewRef((PyObject *)l->kernel);
}

static PyGetSetDef launch_getset[] = {
    {"griddim", (getter)launch_get, NULL, "the grid, (x, y, z)", (void *)0},
    {"blockdim", (getter)launch_get, NULL, "the block, (x, y, z)", (void *)1},
    {"stream", (getter)launch_get, NULL, "the stream (None: the current one)", (void *)2},
    {"sharedmem", (getter)launch_get, NULL, "bytes of dynamic shared memory", (void *)3},
    {"kernel", (getter)launch_get, NULL, "the kernel launched", (void *)4},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CkPyLaunch_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core._PyLaunch",
    .tp_basicsize = sizeof(CkPyLaunchObject),
    .tp_dealloc = (destructor)launch_dealloc,
    .tp_vectorcall_offset = offsetof(CkPyLaunchObject, vectorcall),
    .tp_call = launch_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A configured launch of a Python kernel: kernel[griddim, blockdim](args).",
    .tp_traverse = (traverseproc)launch_traverse,
    .tp_getset = launch_getset,
};

/* _pyk_max_cooperative_blocks(module, kernel name, device, blockdim, shmem):
 * the most blocks a cooperative launch of the kernel may have there. */
static PyObject *f_max_cooperative_blocks(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *mod, *devo, *blk;
    const char *name;
    Py_ssize_t shmem;
    if (!PyArg_ParseTuple(args, "OsOOn", &mod, &name, &devo, &blk, &shmem)) return NULL;
    if (shmem < 0) return PyErr_Format(PyExc_ValueError, "dynsmemsize = %zd is negative", shmem);
    ck_device dev;
    int has;
    unsigned block[3];
    if (ck_py_device_from_obj(devo, &dev, &has) < 0 || ck_py_parse_dim3(blk, block, "blockdim") < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    ck_function *f = ck_py_module_function(mod, name, dev);
    if (!f) return NULL;
    int n;
    ck_status s = ck_function_max_cooperative_blocks(f, block, (size_t)shmem, &n);
    if (s != CK_OK) return ck_py_raise(s);
    return PyLong_FromLong(n);
}

PyMethodDef ck_py_pykernel_functions[] = {
    CK_DEF_VARARGS(_pyk_translate, f_translate, "(tree, argtypes, options, /)",
                   "A Python kernel's tree translated to CUDA C (private)."),
    CK_DEF_VARARGS(_pyk_max_cooperative_blocks, f_max_cooperative_blocks, "(module, name, device, block, shared_mem, /)",
                   "How many blocks of a cooperative launch fit on the device at once (private)."),
    {NULL, NULL, 0, NULL},
};

int ck_py_pykernel_init(PyObject *module)
{
    if (PyType_Ready(&CkPyKernel_Type) < 0 || PyType_Ready(&CkPyLaunch_Type) < 0) return -1;
    if (PyModule_AddObjectRef(module, "_PyKernel", (PyObject *)&CkPyKernel_Type) < 0 ||
        PyModule_AddObjectRef(module, "_PyLaunch", (PyObject *)&CkPyLaunch_Type) < 0)
        return -1;
    return 0;
}
