/*
 * kernelgen.c - the C side of ElementwiseKernel, ReductionKernel and
 * ck.fuse (python/cudakit/_kernels.py, _fuse.py): their CUDA C source and,
 * per call, the launch arguments of the loop layout (include/
 * cudakit_kernelgen.h does the work; this file only converts).
 */
#include "ck_python.h"
#include "cudakit_kernelgen.h"

#include <string.h>

/* ---------------------------------------------------------- converting */

static int dtype_arg(PyObject *obj, ck_dtype *t)
{
    if (ck_py_dtype_from_obj(obj, CK_DTYPE_INVALID, t) == 0 && *t != CK_DTYPE_INVALID) return 0;
    PyErr_Clear();
    PyObject *name = PyObject_GetAttrString(obj, "name");
    if (!name) PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "dtype %S cannot be used in a kernel", name ? name : obj);
    Py_XDECREF(name);
    return -1;
}

static int shape_arg(PyObject *obj, int *ndim, int64_t *shape)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) > CK_MAXDIMS) {
        PyErr_SetString(PyExc_TypeError, "the loop shape must be a tuple of at most 32 ints");
        return -1;
    }
    *ndim = (int)PyTuple_GET_SIZE(obj);
    for (int d = 0; d < *ndim; d++) {
        shape[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(obj, d));
        if (shape[d] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* kinds: a str of 'a', 'r', 's', one a parameter */
static const char *kinds_arg(PyObject *obj, Py_ssize_t nparams)
{
    Py_ssize_t n;
    const char *k = PyUnicode_Check(obj) ? PyUnicode_AsUTF8AndSize(obj, &n) : NULL;
    if (!k || n != nparams || n > CK_UKERNEL_MAXPARAMS) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "kinds must be a str of one letter a parameter (at most %d)",
                         CK_UKERNEL_MAXPARAMS);
        return NULL;
    }
    return k;
}

/* The parameters of kernel `kernel`: (name, placeholder or None) pairs,
 * their dtypes and kinds. */
static int params_arg(const char *kernel, PyObject *names, PyObject *dtypes, PyObject *kinds, ck_ukernel_param *ps,
                      int *n)
{
    if (!PyTuple_Check(names) || !PyTuple_Check(dtypes) || PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(dtypes)) {
        PyErr_SetString(PyExc_TypeError, "params and dtypes must be tuples of one length");
        return -1;
    }
    if (PyTuple_GET_SIZE(names) > CK_UKERNEL_MAXPARAMS) {
        PyErr_Format(PyExc_ValueError, "%s: more than %d parameters", kernel, CK_UKERNEL_MAXPARAMS);
        return -1;
    }
    *n = (int)PyTuple_GET_SIZE(names);
    const char *k = kinds_arg(kinds, *n);
    if (!k) return -1;
    for (int i = 0; i < *n; i++) {
        PyObject *p = PyTuple_GET_ITEM(names, i), *ph;
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 2) {
            PyErr_SetString(PyExc_TypeError, "a parameter is a (name, placeholder) pair");
            return -1;
        }
        ps[i].name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(p, 0));
        ph = PyTuple_GET_ITEM(p, 1);
        ps[i].placeholder = ph == Py_None ? NULL : PyUnicode_AsUTF8(ph);
        if (!ps[i].name || (ph != Py_None && !ps[i].placeholder)) return -1;
        if (dtype_arg(PyTuple_GET_ITEM(dtypes, i), &ps[i].dtype) < 0) return -1;
        ps[i].kind = k[i];
    }
    return 0;
}

static const char *text_arg(PyObject *obj)
{
    return obj == Py_None ? NULL : PyUnicode_AsUTF8(obj);
}

/* The RawKernel signature of the arguments: ("s", "int64") for the counts,
 * shapes, sizes and strides, ("s"/"p", dtype) for the parameters. */
static PyObject *signature(const ck_ukernel_param *ps, const ck_ukernel_arg *args, int nargs)
{
    PyObject *sig = PyList_New(nargs);
    for (int i = 0; sig && i < nargs; i++) {
        const ck_ukernel_arg *a = &args[i];
        int value = a->kind == CK_UKA_VALUE, ptr = a->kind == CK_UKA_POINTER;
        const char *t = value || ptr ? ck_dtype_get_info(ps[a->param].dtype)->name : "int64";
        PyObject *e = Py_BuildValue("(ss)", ptr ? "p" : "s", t);
        if (!e) { Py_CLEAR(sig); break; }
        PyList_SET_ITEM(sig, i, e);
    }
    return sig;
}

static PyObject *source_and_signature(char *src, const ck_ukernel_param *ps, const ck_ukernel_arg *args, int nargs)
{
    if (!src) return ck_py_raise(ck_error_status());
    PyObject *sig = signature(ps, args, nargs);
    PyObject *r = sig ? Py_BuildValue("(sN)", src, sig) : NULL;
    free(src);
    return r;
}

/* --------------------------------------------------------- per call */

/* The arrays of the parameters of kind 'a' (of the first n), and for each
 * parameter its index among them (-1 if none). */
static int arrays_of(PyObject *const *vals, const char *kinds, int n, const ck_array **arrs, int *index)
{
    int na = 0;
    for (int k = 0; k < n; k++) {
        index[k] = -1;
        if (kinds[k] == 's') continue;
        if (!CkArray_Check(vals[k])) {
            PyErr_Format(PyExc_TypeError, "kernel parameter %d needs an array", k);
            return -1;
        }
        if (kinds[k] == 'a') {
            index[k] = na;
            arrs[na++] = CK_ARR(vals[k]);
        }
    }
    return na;
}

/* The launch arguments, as args lists them. */
static PyObject *launch_args(PyObject *const *vals, const ck_ukernel_arg *args, int nargs, const int *index,
                             const ck_ukernel_loop *outer, int64_t (*ostrides)[CK_MAXDIMS],
                             const ck_ukernel_loop *inner, int64_t (*istrides)[CK_MAXDIMS])
{
    PyObject *t = PyTuple_New(nargs);
    for (int i = 0; t && i < nargs; i++) {
        const ck_ukernel_arg *a = &args[i];
        const ck_ukernel_loop *loop = a->inner ? inner : outer;
        PyObject *v;
        switch (a->kind) {
        case CK_UKA_COUNT: v = PyLong_FromLongLong(a->dim ? inner->size : outer->size); break;
        case CK_UKA_SHAPE: v = PyLong_FromLongLong(loop->shape[a->dim]); break;
        case CK_UKA_VALUE: case CK_UKA_POINTER: v = vals[a->param]; Py_INCREF(v); break;
        case CK_UKA_SIZE: v = PyLong_FromLongLong(CK_ARR(vals[a->param])->size); break;
        default:
            v = PyLong_FromLongLong((a->inner ? istrides : ostrides)[index[a->param]][a->dim]);
        }
        if (!v) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* _ukernel_ew_args(values, kinds, shape, merge, allow_contig) -> (ndim, contig, args) */
static PyObject *f_ew_args(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    (void)m;
    if (argc != 5 || !PyTuple_Check(argv[0])) {
        PyErr_SetString(PyExc_TypeError, "_ukernel_ew_args(values, kinds, shape, merge, allow_contig)");
        return NULL;
    }
    int np = (int)PyTuple_GET_SIZE(argv[0]), ndim;
    const char *kinds = kinds_arg(argv[1], np);
    int64_t shape[CK_MAXDIMS];
    if (!kinds || shape_arg(argv[2], &ndim, shape) < 0) return NULL;
    PyObject *const *vals = &PyTuple_GET_ITEM(argv[0], 0);
    const ck_array *arrs[CK_UKERNEL_MAXPARAMS];
    int index[CK_UKERNEL_MAXPARAMS];
    int na = arrays_of(vals, kinds, np, arrs, index);
    if (na < 0) return NULL;
    ck_ukernel_loop loop;
    int64_t strides[CK_UKERNEL_MAXPARAMS][CK_MAXDIMS];
    ck_ukernel_ew_layout(na, arrs, ndim, shape, PyObject_IsTrue(argv[3]), PyObject_IsTrue(argv[4]), &loop, strides);
    ck_ukernel_param ps[CK_UKERNEL_MAXPARAMS];
    for (int k = 0; k < np; k++) ps[k].kind = kinds[k];
    ck_ukernel_ew_spec sp = {.nin = np, .params = ps, .ndim = loop.ndim, .contig = loop.contig};
    ck_ukernel_arg args[CK_UKERNEL_MAXARGS];
    if (1 + loop.ndim + np * (loop.ndim + 1) > CK_UKERNEL_MAXARGS)
        return PyErr_Format(PyExc_ValueError, "a kernel of %d parameters over %d dims has too many arguments", np,
                            loop.ndim);
    int nargs = ck_ukernel_ew_args(&sp, args);
    PyObject *t = launch_args(vals, args, nargs, index, &loop, strides, &loop, strides);
    return t ? Py_BuildValue("(iON)", loop.ndim, loop.contig ? Py_True : Py_False, t) : NULL;
}

/* _ukernel_red_args(values, kinds, nin, shape, reduced_mask, keepdims) -> (nouter, ninner, block, args) */
static PyObject *f_red_args(PyObject *m, PyObject *const *argv, Py_ssize_t argc)
{
    (void)m;
    if (argc != 6 || !PyTuple_Check(argv[0])) {
        PyErr_SetString(PyExc_TypeError, "_ukernel_red_args(values, kinds, nin, shape, reduced_mask, keepdims)");
        return NULL;
    }
    int np = (int)PyTuple_GET_SIZE(argv[0]), ndim, nin = (int)PyLong_AsLong(argv[2]);
    const char *kinds = kinds_arg(argv[1], np);
    int64_t shape[CK_MAXDIMS];
    if (!kinds || shape_arg(argv[3], &ndim, shape) < 0) return NULL;
    uint64_t mask = PyLong_AsUnsignedLongLong(argv[4]);
    if (PyErr_Occurred()) return NULL;
    if (nin != np - 1 || !CkArray_Check(PyTuple_GET_ITEM(argv[0], nin)))
        return PyErr_Format(PyExc_TypeError, "a reduction has its %d inputs, then its output array", np - 1);
    PyObject *const *vals = &PyTuple_GET_ITEM(argv[0], 0);
    const ck_array *ins[CK_UKERNEL_MAXPARAMS];
    int index[CK_UKERNEL_MAXPARAMS];
    int na = arrays_of(vals, kinds, nin, ins, index);
    if (na < 0) return NULL;
    index[nin] = na;
    ck_ukernel_loop outer, inner;
    int64_t ost[CK_UKERNEL_MAXPARAMS][CK_MAXDIMS], ist[CK_UKERNEL_MAXPARAMS][CK_MAXDIMS];
    int block = ck_ukernel_red_layout(na, ins, CK_ARR(vals[nin]), PyObject_IsTrue(argv[5]), ndim, shape, mask, &outer,
                                      ost, &inner, ist);
    ck_ukernel_param ps[CK_UKERNEL_MAXPARAMS];
    for (int k = 0; k < np; k++) ps[k].kind = kinds[k];
    ck_ukernel_red_spec sp = {.nin = nin, .params = ps, .nouter = outer.ndim, .ninner = inner.ndim, .block = block};
    ck_ukernel_arg args[CK_UKERNEL_MAXARGS];
    if (2 + outer.ndim + inner.ndim + np * (outer.ndim + inner.ndim + 1) > CK_UKERNEL_MAXARGS)
        return PyErr_Format(PyExc_ValueError, "a reduction of %d parameters over %d dims has too many arguments", np,
                            ndim);
    int nargs = ck_ukernel_red_args(&sp, args);
    PyObject *t = launch_args(vals, args, nargs, index, &outer, ost, &inner, ist);
    return t ? Py_BuildValue("(iiON)", outer.ndim, inner.ndim, block ? Py_True : Py_False, t) : NULL;
}

/* ---------------------------------------------------------- sources */

/* _ukernel_ew_source(name, operation, preamble, loop_prep, after_loop, params, dtypes, kinds, nin, ndim,
 *                    contig, uses_ind) -> (source, signature) */
static PyObject *f_ew_source(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name, *op;
    PyObject *pre, *prep, *after, *names, *dtypes, *kinds;
    int nin, ndim, contig, uses_ind;
    if (!PyArg_ParseTuple(args, "ssOOOOOOiipp", &name, &op, &pre, &prep, &after, &names, &dtypes, &kinds, &nin,
                          &ndim, &contig, &uses_ind))
        return NULL;
    ck_ukernel_param ps[CK_UKERNEL_MAXPARAMS];
    int np;
    if (params_arg(name, names, dtypes, kinds, ps, &np) < 0) return NULL;
    ck_ukernel_ew_spec sp = {name, op, text_arg(pre), text_arg(prep), text_arg(after), nin, np - nin, ps, ndim,
                             contig, uses_ind};
    if (PyErr_Occurred()) return NULL;
    char *src = ck_ukernel_ew_source(&sp);
    ck_ukernel_arg a[CK_UKERNEL_MAXARGS];
    return source_and_signature(src, ps, a, src ? ck_ukernel_ew_args(&sp, a) : 0);
}

/* _ukernel_red_source(name, map_expr, reduce_expr, post_map_expr, identity, preamble, reduce_type, params,
 *                     dtypes, kinds, nin, nouter, ninner, block) -> (source, signature) */
static PyObject *f_red_source(PyObject *m, PyObject *args)
{
    (void)m;
    const char *name, *map, *red, *post, *rtype;
    PyObject *ident, *pre, *names, *dtypes, *kinds;
    int nin, nouter, ninner, block;
    if (!PyArg_ParseTuple(args, "ssssOOsOOOiiip", &name, &map, &red, &post, &ident, &pre, &rtype, &names, &dtypes,
                          &kinds, &nin, &nouter, &ninner, &block))
        return NULL;
    ck_ukernel_param ps[CK_UKERNEL_MAXPARAMS];
    int np;
    if (params_arg(name, names, dtypes, kinds, ps, &np) < 0) return NULL;
    if (np != nin + 1) return PyErr_Format(PyExc_ValueError, "%s: a reduction has one output", name);
    ck_ukernel_red_spec sp = {name, map, red, post, text_arg(ident), text_arg(pre), rtype, nin, ps, nouter, ninner,
                              block};
    if (PyErr_Occurred()) return NULL;
    char *src = ck_ukernel_red_source(&sp);
    ck_ukernel_arg a[CK_UKERNEL_MAXARGS];
    return source_and_signature(src, ps, a, src ? ck_ukernel_red_args(&sp, a) : 0);
}

/* _ukernel_ctype(dtype) -> the C type a generated kernel names it by */
static PyObject *f_ctype(PyObject *m, PyObject *obj)
{
    (void)m;
    ck_dtype t;
    if (dtype_arg(obj, &t) < 0) return NULL;
    const char *c = ck_ukernel_ctype(t);
    return c ? PyUnicode_FromString(c) : ck_py_raise(ck_error_status());
}

/* _ukernel_dtype_of_ctype(name) -> the dtype's name, or None */
static PyObject *f_dtype_of_ctype(PyObject *m, PyObject *obj)
{
    (void)m;
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (!s) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a C type name must be a str");
        return NULL;
    }
    ck_dtype t = ck_ukernel_dtype_of_ctype(s);
    if (t == CK_DTYPE_INVALID) Py_RETURN_NONE;
    return PyUnicode_FromString(ck_dtype_get_info(t)->name);
}

/* --------------------------------------------------------------- fuse */

/* _fuse_ops() -> {name: (op, nargs, float_only)} */
static PyObject *f_fuse_ops(PyObject *m, PyObject *u)
{
    (void)m; (void)u;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < ck_ukernel_fuse_nops; i++) {
        const ck_ukernel_fuse_op *o = &ck_ukernel_fuse_ops[i];
        PyObject *v = Py_BuildValue("(iiO)", i, o->nargs, o->float_only ? Py_True : Py_False);
        if (!v || PyDict_SetItemString(d, o->name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* _fuse_reduction(name) -> (reduce_expr, identity or None) */
static PyObject *f_fuse_reduction(PyObject *m, PyObject *obj)
{
    (void)m;
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL, *expr, *ident;
    if (!s) return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "a reduction name must be a str");
    ck_status st = ck_ukernel_fuse_reduction(s, &expr, &ident);
    if (st != CK_OK) return ck_py_raise(st);
    return Py_BuildValue("(sz)", expr, ident);
}

/* A ref: ("p", k), ("t", n), ("l", Python bool/int/float), ("c", value, dtype). */
static int fuse_ref(PyObject *o, ck_ukernel_fuse_ref *r)
{
    r->kind = CK_UKF_PARAM;
    r->i = 0;
    r->f = 0;
    r->cast = CK_DTYPE_INVALID;
    const char *tag = PyTuple_Check(o) && PyTuple_GET_SIZE(o) >= 2 ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(o, 0)) : NULL;
    if (!tag) goto bad;
    PyObject *v = PyTuple_GET_ITEM(o, 1);
    if (tag[0] == 'p' || tag[0] == 't') {
        r->kind = tag[0] == 'p' ? CK_UKF_PARAM : CK_UKF_TEMP;
        r->i = PyLong_AsLongLong(v);
        return r->i == -1 && PyErr_Occurred() ? -1 : 0;
    }
    if (tag[0] == 'c') {
        if (PyTuple_GET_SIZE(o) != 3 || dtype_arg(PyTuple_GET_ITEM(o, 2), &r->cast) < 0) goto bad;
    } else if (tag[0] != 'l') {
        goto bad;
    }
    if (PyBool_Check(v)) {
        r->kind = CK_UKF_BOOL;
        r->i = v == Py_True;
    } else if (PyLong_Check(v)) {
        r->kind = CK_UKF_INT;
        r->i = PyLong_AsLongLong(v);
        if (r->i == -1 && PyErr_Occurred()) return -1;
    } else if (PyFloat_Check(v)) {
        r->kind = CK_UKF_FLOAT;
        r->f = PyFloat_AS_DOUBLE(v);
    } else {
        goto bad;
    }
    return 0;
bad:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a fused operand is ('p', k), ('t', n), ('l', v) or ('c', v, dtype)");
    return -1;
}

/* _fuse_source(in_dtypes, steps, results, result_dtypes, reduce) -> (preamble, call); a step is
 * (op, out_dtype, compute_dtype or None, refs) */
static PyObject *f_fuse_source(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ins, *steps, *res, *rtypes;
    int reduce;
    if (!PyArg_ParseTuple(args, "O!O!O!O!p", &PyTuple_Type, &ins, &PyList_Type, &steps, &PyTuple_Type, &res,
                          &PyTuple_Type, &rtypes, &reduce))
        return NULL;
    Py_ssize_t nin = PyTuple_GET_SIZE(ins), ns = PyList_GET_SIZE(steps), nr = PyTuple_GET_SIZE(res);
    if (nr != PyTuple_GET_SIZE(rtypes) || nr < 1 || (reduce && nr != 1))
        return PyErr_Format(PyExc_ValueError, "a fused function has one result type a result (one to reduce)");
    ck_dtype *in_types = PyMem_Malloc(sizeof(ck_dtype) * (size_t)(nin + nr) + 1);
    ck_ukernel_fuse_ref *refs = PyMem_Malloc(sizeof *refs * (size_t)nr + 1);
    ck_ukernel_fuse_step *st = PyMem_Malloc(sizeof *st * (size_t)ns + 1);
    PyObject *r = NULL;
    if (!in_types || !refs || !st) { PyErr_NoMemory(); goto out; }
    ck_dtype *res_types = in_types + nin;
    for (Py_ssize_t k = 0; k < nin; k++)
        if (dtype_arg(PyTuple_GET_ITEM(ins, k), &in_types[k]) < 0) goto out;
    for (Py_ssize_t j = 0; j < nr; j++)
        if (fuse_ref(PyTuple_GET_ITEM(res, j), &refs[j]) < 0 || dtype_arg(PyTuple_GET_ITEM(rtypes, j), &res_types[j]) < 0)
            goto out;
    for (Py_ssize_t n = 0; n < ns; n++) {
        PyObject *s = PyList_GET_ITEM(steps, n), *a;
        memset(&st[n], 0, sizeof st[n]);
        if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) != 4 || !PyTuple_Check(a = PyTuple_GET_ITEM(s, 3)) ||
            PyTuple_GET_SIZE(a) > 3) {
            PyErr_SetString(PyExc_TypeError, "a fused step is (op, out_dtype, compute_dtype, refs)");
            goto out;
        }
        st[n].op = (int)PyLong_AsLong(PyTuple_GET_ITEM(s, 0));
        if (PyErr_Occurred() || dtype_arg(PyTuple_GET_ITEM(s, 1), &st[n].out) < 0) goto out;
        st[n].compute = st[n].out;
        if (PyTuple_GET_ITEM(s, 2) != Py_None && dtype_arg(PyTuple_GET_ITEM(s, 2), &st[n].compute) < 0) goto out;
        for (int k = 0; k < 3; k++) st[n].a[k].cast = CK_DTYPE_INVALID;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(a); k++)
            if (fuse_ref(PyTuple_GET_ITEM(a, k), &st[n].a[k]) < 0) goto out;
    }
    ck_ukernel_fuse_spec sp = {(int)nin, in_types, (int)ns, st, (int)nr, refs, res_types, reduce};
    char *pre, *call;
    ck_status s = ck_ukernel_fuse_source(&sp, &pre, &call);
    if (s != CK_OK) { ck_py_raise(s); goto out; }
    r = Py_BuildValue("(ss)", pre, call);
    free(pre);
    free(call);
out:
    PyMem_Free(in_types);
    PyMem_Free(refs);
    PyMem_Free(st);
    return r;
}

PyMethodDef ck_py_kernelgen_functions[] = {
    CK_DEF_FAST(_ukernel_ew_args, f_ew_args, "(*args)", "An ElementwiseKernel call's launch arguments (private)."),
    CK_DEF_FAST(_ukernel_red_args, f_red_args, "(*args)", "A ReductionKernel call's launch arguments (private)."),
    CK_DEF_VARARGS(_ukernel_ew_source, f_ew_source, "(*args)", "An ElementwiseKernel's CUDA C source (private)."),
    CK_DEF_VARARGS(_ukernel_red_source, f_red_source, "(*args)", "A ReductionKernel's CUDA C source (private)."),
    CK_DEF_O(_ukernel_ctype, f_ctype, "(dtype, /)", "The C type a generated kernel names a dtype by (private)."),
    CK_DEF_O(_ukernel_dtype_of_ctype, f_dtype_of_ctype, "(ctype, /)", "The dtype of a C type name (private)."),
    CK_DEF_NOARGS(_fuse_ops, f_fuse_ops, "()", "The ops fuse can put in a kernel (private)."),
    CK_DEF_O(_fuse_reduction, f_fuse_reduction, "(name, /)", "A reduction fuse can end a kernel with (private)."),
    CK_DEF_VARARGS(_fuse_source, f_fuse_source, "(inputs, steps, results, result_types, reduce, /)",
                   "A fused kernel's CUDA C source (private)."),
    {NULL, NULL, 0, NULL},
};
