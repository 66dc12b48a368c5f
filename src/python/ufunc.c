/* cudakit.ufunc: callable objects made from the op table, one per row. */
#include "ck_python.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    ck_op op;
} CkUFuncObject;

static int64_t operand_size(const ck_operand *o) { return o->array ? o->array->size : 1; }

/* ------------------------------------------- operands cudakit cannot hold */

/* What NumPy would make of an operand cudakit holds no dtype for: the kind
 * of its dtype ('U' text, str and bytes and arrays of them; 'M' datetime
 * and timedelta; 'O' what NumPy keeps as objects, None, a dict...), its
 * shape and its dtype's name (new reference).  Only for Python's and
 * NumPy's own types: an object of a class of its own may implement the op
 * itself, and gets 0 (no exception).  -1 with an exception (NumPy could
 * not make an array: a ragged list). */
typedef struct {
    char kind;
    int general;   /* an object of a class of its own, which NumPy holds as an object (kind 'O') */
    int ndim;
    int64_t shape[CK_MAXDIMS];
    PyObject *dtype_name;
} foreign_operand;

static int foreign_kind(PyObject *obj, foreign_operand *f)
{
    PyTypeObject *t = Py_TYPE(obj);
    f->kind = 0;
    f->general = 0;
    f->ndim = 0;
    f->dtype_name = NULL;
    int plain = obj == Py_None || t == &PyBaseObject_Type || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
                PyDict_Check(obj) || PyAnySet_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj) ||
                !strncmp(t->tp_name, "numpy.", 6);
    if (!plain) return 0;
    PyObject *np = ck_py_numpy();
    if (!np) {   /* without NumPy: by the Python type */
        PyErr_Clear();
        f->kind = PyUnicode_Check(obj) || PyBytes_Check(obj) ? 'U' : 'O';
        f->dtype_name = PyUnicode_FromString(t->tp_name);
        return f->dtype_name ? 0 : -1;
    }
    PyObject *arr = PyObject_CallMethod(np, "asarray", "O", obj);
    if (!arr) return -1;
    PyObject *d = PyObject_GetAttrString(arr, "dtype");
    PyObject *k = d ? PyObject_GetAttrString(d, "kind") : NULL;
    PyObject *shape = PyObject_GetAttrString(arr, "shape");
    int r = -1;
    if (k && shape && PyUnicode_Check(k) && ck_py_shape_from_obj(shape, &f->ndim, f->shape) == 0) {
        const char *kc = PyUnicode_AsUTF8(k);
        f->kind = strchr("US", kc[0]) ? 'U' : strchr("Mm", kc[0]) ? 'M' : strchr("biufc", kc[0]) ? 0 : 'O';
        f->dtype_name = PyObject_Str(d);
        r = f->dtype_name ? 0 : -1;
    }
    Py_XDECREF(k);
    Py_XDECREF(d);
    Py_XDECREF(shape);
    Py_DECREF(arr);
    return r;
}

/* Ops that take a Python int beyond 64 bits as a float: comparisons, and
 * those with no integer loop (true_divide, arctan2...). */
static int big_int_as_float(ck_op op)
{
    const ck_op_info *info = &ck_op_table[op];
    if ((info->flags & CK_OPF_COMPARE) || (info->rule & CK_R_INT_DOUBLE)) return 1;
    for (int t = 0; t < CK_NTYPES; t++)
        if ((info->types & (1u << t)) && (ck_dtype_is_integer((ck_dtype)t) || t == CK_BOOL)) return 0;
    return 1;
}

/* Whether the loop will be a float or complex one whatever a weak Python
 * int among the operands: another operand is a float or complex array or
 * number (a Python int beyond 64 bits then joins as a float, as in NumPy). */
static int peers_inexact(int nin, PyObject *const *args, int k)
{
    for (int j = 0; j < nin; j++) {
        if (j == k) continue;
        if (CkArray_Check(args[j])) {
            if (ck_dtype_is_inexact(CK_ARR(args[j])->dtype)) return 1;
            continue;
        }
        ck_scalar sc;
        int weak;
        int r = ck_py_scalar_from_obj(args[j], &sc, &weak);
        if (r < 0) PyErr_Clear();
        else if (r == 0 && ck_dtype_is_inexact(sc.dtype)) return 1;
    }
    return 0;
}

/* Whether NumPy's operators defer to o (return NotImplemented, so that
 * o's reflected method runs): o opts out of ufuncs (__array_ufunc__ =
 * None) or claims priority (__array_priority__).  Otherwise NumPy runs
 * its object loop, o's __eq__ with each element. */
static int numpy_defers_to(PyObject *o)
{
    PyObject *u = PyObject_GetAttrString(o, "__array_ufunc__");
    if (u) {
        Py_DECREF(u);
        return u == Py_None;
    }
    PyErr_Clear();
    return PyObject_HasAttrString(o, "__array_priority__");
}

/* == and != with what NumPy holds as objects ([1, None], a Decimal, a
 * generator): NumPy's object loop compares element by element, numbers as
 * numbers; so does NumPy here, on a host copy, and the bool result goes
 * to the device. */
static PyObject *object_compare(ck_op op, PyObject *const *args)
{
    if (!ck_py_numpy()) return NULL;
    PyObject *np = ck_py_numpy();
    if (!np) return NULL;
    PyObject *host[2] = {NULL, NULL};
    ck_device dev = ck_py_default_device();
    for (int i = 0; i < 2; i++) {
        if (CkArray_Check(args[i])) {
            dev = ck_array_device(CK_ARR(args[i]));
            host[i] = ck_py_to_numpy(args[i], NULL, 0);
        } else {
            host[i] = Py_NewRef(args[i]);
        }
        if (!host[i]) {
            Py_XDECREF(host[0]);
            return NULL;
        }
    }
    PyObject *r = PyObject_CallMethod(np, ck_op_table[op].name, "OO", host[0], host[1]);
    Py_DECREF(host[0]);
    Py_DECREF(host[1]);
    if (!r) return NULL;
    PyObject *res = ck_py_asarray(r, CK_DTYPE_INVALID, -1, 1, dev);
    Py_DECREF(r);
    return res;
}

static PyObject *operand_dtype_name(PyObject *o)
{
    if (CkArray_Check(o)) return PyUnicode_FromString(ck_dtype_get_info(CK_ARR(o)->dtype)->name);
    foreign_operand f;
    if (foreign_kind(o, &f) == 0 && f.dtype_name) return f.dtype_name;
    PyErr_Clear();
    return PyUnicode_FromString(Py_TYPE(o)->tp_name);
}

/* The answer NumPy gives for op with args[k] of kind f->kind:
 * == and != as operators (and the ufuncs, for objects) compare unequal
 * element by element, with broadcasting; text and datetimes have no loop
 * (_UFuncNoLoopError); objects have no loop that works on numbers
 * (TypeError), and with out= NumPy fails first at casting the object
 * result (_UFuncOutputCastingError). */
static PyObject *foreign_apply(ck_op op, int nin, PyObject *const *args, int k, const foreign_operand *f,
                               PyObject *out, int is_operator)
{
    const char *name = ck_op_table[op].name;
    int eq = op == CK_OP_EQUAL || op == CK_OP_NOT_EQUAL;
    /* NumPy casts, then broadcasts, then runs the object loop */
    if (f->kind == 'O' && out && CkArray_Check(out)) {
        PyErr_Format(ck_py_exc(CK_PY_UFUNC_OUTPUT_CAST), "Cannot cast ufunc '%s' output from dtype('O') to "
                     "dtype('%s') with casting rule 'same_kind'", name, ck_dtype_get_info(CK_ARR(out)->dtype)->name);
        return NULL;
    }
    if (f->kind == 'O' && f->ndim > 0) {
        int nds[CK_UFUNC_MAXIN], na = 0;
        const int64_t *shs[CK_UFUNC_MAXIN];
        for (int i = 0; i < nin; i++) {
            if (i == k) { nds[na] = f->ndim; shs[na++] = f->shape; }
            else if (CkArray_Check(args[i])) { nds[na] = CK_ARR(args[i])->ndim; shs[na++] = CK_ARR(args[i])->shape; }
        }
        int bnd;
        int64_t bsh[CK_MAXDIMS];
        ck_status s = ck_broadcast_shapes(na, nds, shs, &bnd, bsh);
        if (s != CK_OK) return ck_py_raise(s);
    }
    if (f->kind == 'O' && (f->ndim > 0 || f->general) && (ck_op_table[op].flags & CK_OPF_COMPARE) && !out &&
        nin == 2) {
        PyObject *r = object_compare(op, args);
        if (r || ck_py_numpy()) return r;
        PyErr_Clear();   /* without NumPy: unequal, as by identity */
    }
    if (eq && (is_operator || f->kind == 'O') && !out && (f->kind != 'O' || f->ndim == 0)) {
        PyObject *other = args[1 - k];
        int nds[2] = {f->ndim, 0};
        const int64_t *shs[2] = {f->shape, NULL};
        ck_device dev;
        if (CkArray_Check(other)) {
            nds[1] = CK_ARR(other)->ndim;
            shs[1] = CK_ARR(other)->shape;
            dev = ck_array_device(CK_ARR(other));
        } else {
            ck_scalar sc;
            int weak, r = ck_py_scalar_from_obj(other, &sc, &weak);
            if (r != 0) {
                if (r > 0) goto no_loop;
                return NULL;
            }
            dev = ck_py_default_device();
        }
        int bnd;
        int64_t bsh[CK_MAXDIMS];
        ck_status s = ck_broadcast_shapes(2, nds, shs, &bnd, bsh);
        if (s != CK_OK) return ck_py_raise(s);
        ck_scalar v = {.dtype = CK_BOOL};
        v.v.i = op == CK_OP_NOT_EQUAL;
        ck_array res;
        s = ck_full(&res, bnd, bsh, CK_BOOL, &v, dev);
        return s == CK_OK ? ck_py_wrap(&res, NULL) : ck_py_raise(s);
    }
    if (f->kind == 'O') {
        PyErr_Format(PyExc_TypeError, "ufunc '%s': cudakit arrays hold numbers only, not %.100s", name,
                     Py_TYPE(args[k])->tp_name);
        return NULL;
    }
no_loop:;
    PyObject *names = PyTuple_New(nin);
    for (int i = 0; names && i < nin; i++) {
        PyObject *n = operand_dtype_name(args[i]);
        if (!n) { Py_CLEAR(names); break; }
        PyTuple_SET_ITEM(names, i, n);
    }
    if (!names) return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *joined = sep ? PyUnicode_Join(sep, names) : NULL;
    if (joined)
        PyErr_Format(ck_py_exc(CK_PY_UFUNC_NO_LOOP), "ufunc '%s' did not contain a loop with signature matching "
                     "types (%U) -> None", name, joined);
    Py_XDECREF(joined);
    Py_XDECREF(sep);
    Py_DECREF(names);
    return NULL;
}

static PyObject *ufunc_apply(ck_op op, int nin, PyObject *const *args, PyObject *out, const ck_ufunc_opts *opts,
                             int return_notimpl);

PyObject *ck_py_apply(ck_op op, int nin, PyObject *const *args, PyObject *out, ck_dtype dtype, int return_notimpl)
{
    ck_ufunc_opts o;
    ck_ufunc_opts_init(&o);
    o.out_dtype = dtype;
    return ck_py_apply_opts(op, nin, args, out, &o, return_notimpl);
}

PyObject *ck_py_apply_opts(ck_op op, int nin, PyObject *const *args, PyObject *out, const ck_ufunc_opts *opts,
                           int return_notimpl)
{
    PyObject *result = ufunc_apply(op, nin, args, out, opts, return_notimpl);
    /* seterr/errstate asked for NumPy's floating-point warnings: checked
     * on the CPU by python/cudakit/_numpy_extra.py, after the op */
    if (ck_py_fp_checks && result && CkArray_Check(result) &&
        ck_array_device(CK_ARR(result)).type == CK_DEVICE_CPU && ck_py_fp_check(op, nin, args, result) < 0)
        Py_CLEAR(result);
    return result;
}

static PyObject *ufunc_apply(ck_op op, int nin, PyObject *const *args, PyObject *out, const ck_ufunc_opts *opts,
                             int return_notimpl)
{
    ck_operand ops[CK_UFUNC_MAXIN];
    PyObject *tmps[CK_UFUNC_MAXIN] = {NULL};
    PyObject *keep[CK_UFUNC_MAXIN] = {NULL};   /* autograd's copies of inputs an in-place op overwrites */
    int rebase = 0;
    PyObject *result = NULL;
    int have_dev = 0;
    ck_device dev = ck_device_cpu();
    for (int k = 0; k < nin; k++) {
        int r = ck_py_operand(args[k], &ops[k], &tmps[k]);
        if (r != 0) {
            /* text, datetimes, objects: NumPy's answer (slow path only) */
            PyObject *et = NULL, *ev = NULL, *tb = NULL;
            if (r < 0 && PyLong_Check(args[k]) && PyErr_ExceptionMatches(PyExc_OverflowError) &&
                (big_int_as_float(op) || peers_inexact(nin, args, k))) {
                /* a Python int beyond 64 bits: NumPy compares it, and float
                 * loops take it, as the float it is closest to */
                if (ck_py_big_int_as_float(args[k], &ops[k].scalar) < 0) goto done;
                ops[k].array = NULL;
                ops[k].weak = 1;
                continue;
            }
            if (r < 0) {
                /* a list of ints beyond 64 bits is objects to NumPy */
                if (!PyErr_ExceptionMatches(PyExc_TypeError) &&
                    !(PyErr_ExceptionMatches(PyExc_OverflowError) && (PyList_Check(args[k]) || PyTuple_Check(args[k]))))
                    goto done;
                PyErr_Fetch(&et, &ev, &tb);
            }
            foreign_operand f;
            int fr = foreign_kind(args[k], &f);
            /* An object of a class of its own that does not take NumPy's
             * operators over (numpy_defers_to): NumPy compares it through
             * its object loop, and fails to cast the loop's objects into
             * out=; any other op is left to its reflected method, which
             * NumPy's object loop would call element by element. */
            if (fr == 0 && !f.kind && r > 0 &&
                ((ck_op_table[op].flags & CK_OPF_COMPARE) || (out && CkArray_Check(out))) &&
                !numpy_defers_to(args[k])) {
                f.kind = 'O';
                f.general = 1;
                f.dtype_name = PyUnicode_FromString("object");
                if (!f.dtype_name) goto done;
            }
            if (fr == 0 && f.kind) {
                Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
                result = foreign_apply(op, nin, args, k, &f, out, return_notimpl);
                Py_DECREF(f.dtype_name);
                goto done;
            }
            Py_XDECREF(f.dtype_name);
            if (r < 0) {   /* the first error stands */
                PyErr_Clear();
                PyErr_Restore(et, ev, tb);
                goto done;
            }
            if (fr < 0) goto done;
            if (return_notimpl) { result = Py_NewRef(Py_NotImplemented); goto done; }
            PyErr_Format(PyExc_TypeError, "ufunc '%s' did not contain a loop for an operand of type '%.50s'",
                         ck_op_table[op].name, Py_TYPE(args[k])->tp_name);
            goto done;
        }
        if (ops[k].array && !tmps[k] && !have_dev) { dev = ck_array_device(ops[k].array); have_dev = 1; }
    }
    if (out) {
        if (!CkArray_Check(out)) {
            PyErr_SetString(PyExc_TypeError, "return arrays must be of ArrayType");
            goto done;
        }
        if (!have_dev) { dev = ck_array_device(CK_ARR(out)); have_dev = 1; }
    }
    /* lists and NumPy arrays were made on the CPU: follow the real arrays */
    for (int k = 0; k < nin; k++) {
        if (!tmps[k]) continue;
        if (!have_dev) { dev = ck_py_default_device(); have_dev = 1; }
        if (!ck_device_equal(dev, ck_array_device(CK_ARR(tmps[k])))) {
            PyObject *moved = ck_py_asarray(tmps[k], CK_DTYPE_INVALID, -1, 1, dev);
            if (!moved) goto done;
            Py_SETREF(tmps[k], moved);
        }
        ops[k].array = CK_ARR(tmps[k]);
    }
    if (!have_dev) ck_py_default_device();   /* all scalars: fix the default now */

    int64_t size = 0;
    for (int k = 0; k < nin; k++) if (operand_size(&ops[k]) > size) size = operand_size(&ops[k]);
    ck_array res;
    ck_array *dst = out ? CK_ARR(out) : &res;
    ck_status s;
    if (out) {
        ck_ag_bump_version(dst);
        if (CK_AG_GATE() && (rebase = ck_py_ag_ufunc_out(op, nin, args, ops, out, keep)) < 0) goto done;
    }
    if (size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_ufunc_apply_opts(op, nin, ops, dst, out != NULL, opts);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_ufunc_apply_opts(op, nin, ops, dst, out != NULL, opts);
    }
    if (s != CK_OK) { ck_py_raise(s); goto done; }
    if (rebase && ck_py_ag_ufunc_rebase(op, nin, args, ops, out) < 0) goto done;
    result = out ? Py_NewRef(out) : ck_py_wrap(&res, NULL);
    if (CK_AG_GATE() && result && !out) result = ck_py_ag_ufunc(op, nin, args, ops, result);
done:
    for (int k = 0; k < nin; k++) {
        Py_XDECREF(tmps[k]);
        Py_XDECREF(keep[k]);
    }
    return result;
}

/* signature=: a tuple of nin + 1 dtypes or None, or a type string
 * ("dd->d"); sig[k] is left CK_DTYPE_INVALID where it is None.  Returns
 * 1 when something is fixed, 0 when all is None, -1 with an error set. */
static int parse_signature(const ck_op_info *info, PyObject *v, ck_dtype *sig)
{
    int nin = info->nin, any = 0;
    if (PyUnicode_Check(v)) {
        const char *t = PyUnicode_AsUTF8(v);
        if (!t) return -1;
        size_t n = strlen(t);
        if (n == 1) {   /* NumPy's words */
            PyErr_SetString(PyExc_TypeError, "Use `dtype` or  fill the tuple with more than one 'None'.");
            return -1;
        }
        if (n != (size_t)nin + 3 || t[nin] != '-' || t[nin + 1] != '>') {
            PyErr_Format(PyExc_ValueError, "a type-string for %s, %d typecode(s) before and 1 after the -> sign",
                         info->name, nin);
            return -1;
        }
        for (int k = 0; k <= nin; k++) {
            char c = t[k < nin ? k : nin + 2];
            PyObject *code = PyUnicode_FromStringAndSize(&c, 1);
            if (!code) return -1;
            int r = ck_py_dtype_from_obj(code, CK_DTYPE_INVALID, &sig[k]);
            Py_DECREF(code);
            if (r < 0) return -1;
        }
        return 1;
    }
    if (!PyTuple_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "the signature object to ufunc must be a string or a tuple.");
        return -1;
    }
    if (PyTuple_GET_SIZE(v) != nin + 1) {
        PyErr_Format(PyExc_ValueError, "a type-tuple must be specified of length %d for ufunc '%s'", nin + 1,
                     info->name);
        return -1;
    }
    for (int k = 0; k <= nin; k++) {
        PyObject *e = PyTuple_GET_ITEM(v, k);
        if (e == Py_None) continue;
        if (ck_py_dtype_from_obj(e, CK_DTYPE_INVALID, &sig[k]) < 0) return -1;
        any = 1;
    }
    return any;
}

/* order='F' (or 'A' with every array input Fortran-ordered): the result
 * copied to that layout, as NumPy lays it out.  'K' and 'C' give C order
 * (NumPy's 'K' keeps the inputs' layout: the values are the same). */
static PyObject *apply_ufunc_order(PyObject *r, char order, int nin, PyObject *const *args)
{
    if (!r || !CkArray_Check(r) || (order != 'F' && order != 'A')) return r;
    const ck_array *a = CK_ARR(r);
    if (a->ndim < 2 || (a->flags & CK_ARRAY_F_CONTIGUOUS)) return r;
    if (order == 'A') {
        int arrays = 0;
        for (int k = 0; k < nin; k++) {
            if (!CkArray_Check(args[k])) continue;
            int f = CK_ARR(args[k])->flags;
            if (!(f & CK_ARRAY_F_CONTIGUOUS) || (f & CK_ARRAY_C_CONTIGUOUS)) return r;
            arrays++;
        }
        if (!arrays) return r;
    }
    ck_array c;
    ck_status s = ck_array_astype(&c, a, a->dtype, 1);
    if (s != CK_OK) { Py_DECREF(r); return ck_py_raise(s); }
    PyObject *f = ck_py_wrap(&c, NULL);
    if (CK_AG_GATE() && f) f = ck_py_ag_copy("copy", r, f);
    Py_DECREF(r);
    return f;
}

static PyObject *ufunc_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    ck_op op = ((CkUFuncObject *)self)->op;
    const ck_op_info *info = &ck_op_table[op];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *out = NULL, *dtype_obj = NULL, *sig_obj = NULL;
    ck_ufunc_opts opts;
    ck_ufunc_opts_init(&opts);
    char order = 'K';
    if (nargs == info->nin + 1) {
        out = args[info->nin];   /* positional out, as NumPy allows */
        if (out == Py_None) out = NULL;
    } else if (nargs != info->nin) {
        PyErr_Format(PyExc_TypeError, "%s() takes from %d to %d positional arguments but %zd were given",
                     info->name, info->nin, info->nin + 1, nargs);
        return NULL;
    }
    if (kwnames) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
            PyObject *v = args[nargs + i];
            if (!k) return NULL;
            if (!strcmp(k, "out")) {
                if (PyTuple_Check(v)) {
                    if (PyTuple_GET_SIZE(v) != 1) {
                        PyErr_SetString(PyExc_ValueError, "The 'out' tuple must have exactly one entry per ufunc output");
                        return NULL;
                    }
                    v = PyTuple_GET_ITEM(v, 0);
                }
                out = v == Py_None ? NULL : v;
            } else if (!strcmp(k, "dtype")) {
                dtype_obj = v == Py_None ? NULL : v;
            } else if (!strcmp(k, "signature")) {
                sig_obj = v == Py_None ? NULL : v;
            } else if (!strcmp(k, "casting")) {
                if (ck_py_casting_from_obj(v, &opts.casting) < 0) return NULL;
            } else if (!strcmp(k, "order")) {
                if (ck_py_order_code(v, &order) < 0) return NULL;
            } else if (!strcmp(k, "subok")) {
                /* cudakit has no array subclasses: the result is a cudakit array either way */
                if (!PyBool_Check(v)) {
                    PyErr_SetString(PyExc_TypeError, "'subok' must be a boolean");
                    return NULL;
                }
            } else if (!strcmp(k, "where")) {
                if (v != Py_True) return ck_py_ufunc_where(self, args, nargs, kwnames);
            } else {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", info->name, k);
                return NULL;
            }
        }
    }
    if (dtype_obj && sig_obj) {
        PyErr_SetString(PyExc_TypeError, "cannot specify both 'signature' and 'dtype'");
        return NULL;
    }
    if (dtype_obj && ck_py_dtype_from_obj(dtype_obj, CK_DTYPE_INVALID, &opts.out_dtype) < 0) return NULL;
    if (sig_obj && parse_signature(info, sig_obj, opts.sig) < 0) return NULL;
    PyObject *r = ck_py_apply_opts(op, info->nin, args, out, &opts, 0);
    return (order == 'F' || order == 'A') && !out ? apply_ufunc_order(r, order, info->nin, args) : r;
}

static PyObject *ufunc_call(PyObject *self, PyObject *args, PyObject *kw)
{
    /* tp_call for callers that do not use vectorcall */
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    Py_ssize_t nk = kw ? PyDict_Size(kw) : 0;
    PyObject **stack = PyMem_Malloc((size_t)(n + nk + 1) * sizeof(PyObject *));
    if (!stack) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) stack[i] = PyTuple_GET_ITEM(args, i);
    PyObject *names = NULL;
    if (nk) {
        names = PyTuple_New(nk);
        if (!names) { PyMem_Free(stack); return NULL; }
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *v;
        while (PyDict_Next(kw, &pos, &k, &v)) {
            PyTuple_SET_ITEM(names, i, Py_NewRef(k));
            stack[n + i] = v;
            i++;
        }
    }
    PyObject *r = ufunc_vectorcall(self, stack, (size_t)n, names);
    Py_XDECREF(names);
    PyMem_Free(stack);
    return r;
}

static PyObject *ufunc_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<ufunc '%s'>", ck_op_table[((CkUFuncObject *)self)->op].name);
}

static PyObject *ufunc_get_name(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(ck_op_table[((CkUFuncObject *)self)->op].name);
}

static PyObject *ufunc_get_nin(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(ck_op_table[((CkUFuncObject *)self)->op].nin);
}

static PyObject *ufunc_get_nout(PyObject *self, void *c)
{
    (void)self; (void)c;
    return PyLong_FromLong(1);
}

static PyObject *ufunc_get_types(PyObject *self, void *c)
{
    (void)c;
    const ck_op_info *info = &ck_op_table[((CkUFuncObject *)self)->op];
    PyObject *l = PyList_New(0);
    if (!l) return NULL;
    for (int t = 0; t < CK_NTYPES; t++) {
        if (!(info->types & (1u << t))) continue;
        char in = ck_dtype_get_info((ck_dtype)t)->type_char;
        ck_dtype ot = (info->rule & CK_R_OUT_BOOL) ? CK_BOOL : (info->rule & CK_R_OUT_REAL) ? ck_dtype_real((ck_dtype)t) : (ck_dtype)t;
        char buf[8];
        int p = 0;
        for (int k = 0; k < info->nin; k++) buf[p++] = (k == 0 && (info->rule & CK_R_WHERE)) ? '?' : in;
        buf[p++] = '-';
        buf[p++] = '>';
        buf[p++] = ck_dtype_get_info(ot)->type_char;
        PyObject *s = PyUnicode_FromStringAndSize(buf, p);
        if (!s || PyList_Append(l, s) < 0) { Py_XDECREF(s); Py_DECREF(l); return NULL; }
        Py_DECREF(s);
    }
    return l;
}

static PyGetSetDef ufunc_getset[] = {
    {"__name__", ufunc_get_name, NULL, NULL, NULL},
    {"nin", ufunc_get_nin, NULL, NULL, NULL},
    {"nout", ufunc_get_nout, NULL, NULL, NULL},
    {"types", ufunc_get_types, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *ufunc_reduce(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyUnicode_FromString(ck_op_table[((CkUFuncObject *)self)->op].name);
}

static PyMethodDef ufunc_methods[] = {
    CK_DEF_NOARGS(__reduce__, ufunc_reduce, "($self, /)", "Pickling: the ufunc by its name in cudakit."),
    {NULL, NULL, 0, NULL},
};

PyTypeObject CkUFunc_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit.ufunc",
    .tp_basicsize = sizeof(CkUFuncObject),
    .tp_repr = ufunc_repr,
    .tp_call = ufunc_call,
    .tp_vectorcall_offset = 0,
    .tp_getset = ufunc_getset,
    .tp_methods = ufunc_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An element-wise function over arrays, with broadcasting and NumPy's type rules.",
};

/* Vectorcall needs a per-object function pointer slot. */
typedef struct {
    CkUFuncObject base;
    vectorcallfunc vectorcall;
} CkUFuncVC;

PyObject *ck_py_ufunc_new(ck_op op)
{
    CkUFuncVC *u = PyObject_New(CkUFuncVC, &CkUFunc_Type);
    if (!u) return NULL;
    u->base.op = op;
    u->vectorcall = ufunc_vectorcall;
    return (PyObject *)u;
}

/* cudakit._core._op_table: the op table, a record per op in the order of
 * ck_op, for the Python code (and tests) that need its columns. */
static PyStructSequence_Field op_record_fields[] = {
    {"num", "the op's number in the C core (its index in _op_table)"},
    {"id", "the op's row name (CK_OP_<id>)"},
    {"name", "the ufunc's name"},
    {"nin", "the number of inputs"},
    {"types", "the names of the dtypes it has loops for"},
    {"rule", "the names of its resolution rules (CK_R_*, lower case)"},
    {"cost", "'cheap' or 'costly' (CK_COST_*)"},
    {"flags", "the names of its flags (CK_OPF_*, lower case)"},
    {NULL, NULL},
};
static PyStructSequence_Desc op_record_desc = {
    "cudakit._core.op_record", "One row of the C core's op table (include/cudakit_ops.h).", op_record_fields, 8,
};

/* The names of the bits set in bits, of names[] (one a bit, from bit 0). */
static PyObject *bit_names(unsigned bits, const char *const *names, int n)
{
    PyObject *l = PyList_New(0);
    for (int b = 0; l && b < n; b++) {
        if (!(bits & (1u << b))) continue;
        PyObject *s = PyUnicode_FromString(names[b]);
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    PyObject *t = l ? PyList_AsTuple(l) : NULL;
    Py_XDECREF(l);
    return t;
}

static PyObject *op_table(void)
{
    static const char *const rules[] = {"out_bool", "out_real", "no_bool", "int_double", "where"};
    static const char *const flags[] = {"logical", "compare"};
    static const char *const ids[CK_OP_COUNT] = {
#define CK_OP_ID_(ID, name, nin, types, rule, cost, flags) [CK_OP_##ID] = #ID,
        CK_ALL_OPS(CK_OP_ID_)
#undef CK_OP_ID_
    };
    const char *dtypes[CK_NTYPES];
    for (int t = 0; t < CK_NTYPES; t++) dtypes[t] = ck_dtype_get_info((ck_dtype)t)->name;
    PyTypeObject *rec = PyStructSequence_NewType(&op_record_desc);
    if (!rec) return NULL;
    PyObject *table = PyTuple_New(CK_OP_COUNT);
    for (int op = 0; table && op < CK_OP_COUNT; op++) {
        const ck_op_info *i = &ck_op_table[op];
        PyObject *v = Py_BuildValue("(issiNNsN)", op, ids[op], i->name, i->nin, bit_names(i->types, dtypes, CK_NTYPES),
                                    bit_names(i->rule, rules, (int)(sizeof rules / sizeof *rules)),
                                    i->cost == CK_COST_CHEAP ? "cheap" : "costly",
                                    bit_names(i->flags, flags, (int)(sizeof flags / sizeof *flags)));
        PyObject *r = v ? PyObject_CallOneArg((PyObject *)rec, v) : NULL;
        Py_XDECREF(v);
        if (!r) {
            Py_CLEAR(table);
            break;
        }
        PyTuple_SET_ITEM(table, op, r);
    }
    Py_DECREF(rec);
    return table;
}

int ck_py_ufuncs_init(PyObject *module)
{
    CkUFunc_Type.tp_basicsize = sizeof(CkUFuncVC);
    CkUFunc_Type.tp_vectorcall_offset = offsetof(CkUFuncVC, vectorcall);
    CkUFunc_Type.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    if (PyType_Ready(&CkUFunc_Type) < 0) return -1;
    for (int op = 0; op < CK_OP_COUNT; op++) {
        PyObject *u = ck_py_ufunc_new((ck_op)op);
        if (!u) return -1;
        if (PyModule_AddObject(module, ck_op_table[op].name, u) < 0) { Py_DECREF(u); return -1; }
    }
    PyObject *table = op_table();
    if (!table) return -1;
    int r = PyModule_AddObjectRef(module, "_op_table", table);
    Py_DECREF(table);
    if (r < 0) return -1;
    return PyModule_AddObjectRef(module, "ufunc", (PyObject *)&CkUFunc_Type);
}
