/*
 * ag_train.c - the recording calls of the ops whose gradient rules are
 * trainops' (src/autograd/rules_train.c, include/cudakit_autograd_ops.h),
 * made where those ops run (train.c, index.c, indexfuncs.c, shape.c,
 * reduce.c), and the table's names for the tests.  As autograd.c's
 * ck_py_ag_* functions: called only when CK_AG_GATE(), each takes result
 * and returns it with its variable set (or NULL with the exception, result
 * released).
 */
#include "ck_python.h"
#include "cudakit_autograd_ops.h"
#include "cudakit_linear.h"

static inline ck_ag_var *var_of(PyObject *o) { return CkArray_Check(o) ? ((CkArrayObject *)o)->ag : NULL; }

/* (the record call must be sequenced before ov is read: as an argument
 * beside it, its order would be unspecified) */
static PyObject *attach(PyObject *result, ck_status s, ck_ag_var *ov)
{
    if (s != CK_OK) {
        Py_DECREF(result);
        return ck_py_raise(s);
    }
    if (ov) {
        CkArrayObject *r = (CkArrayObject *)result;
        if (r->ag) ck_ag_var_release(r->ag);
        r->ag = ov;
    }
    return result;
}

PyObject *ck_py_ag_softmax(PyObject *a, int axis, int log_, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    ck_status s = ck_ag_record_softmax(CK_ARR(a), v, axis, log_, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_logsumexp(PyObject *a, uint64_t mask, int keepdims, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result) return result;
    ck_status s = ck_ag_record_logsumexp(CK_ARR(a), v, mask, keepdims, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_cross_entropy(PyObject *logits, PyObject *target, const ck_xent_args *args, PyObject *loss,
                                 PyObject *lse, PyObject *total)
{
    ck_ag_var *vl = var_of(logits), *vt = var_of(target), *ov;
    if ((!vl && !vt) || !loss) return loss;
    ck_status s = ck_ag_record_cross_entropy(CK_ARR(logits), vl, CK_ARR(target), vt, args, CK_ARR(loss),
                                             CK_ARR(lse), CK_ARR(total), &ov);
    return attach(loss, s, ov);
}

PyObject *ck_py_ag_index(PyObject *a, int n, const ck_index_item *items, ck_index_mode mode, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result || !CkArray_Check(result)) return result;
    ck_status s = ck_ag_record_index(CK_ARR(a), v, n, items, mode, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_take(PyObject *a, const ck_array *indices, int axis, int axis_none, ck_index_mode mode,
                        PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result || !CkArray_Check(result)) return result;
    ck_status s = ck_ag_record_take(CK_ARR(a), v, indices, axis, axis_none, mode, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_take_along_axis(PyObject *a, const ck_array *indices, int axis, int axis_none, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result || !CkArray_Check(result)) return result;
    ck_status s = ck_ag_record_take_along_axis(CK_ARR(a), v, indices, axis, axis_none, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_join(int stack, int n, PyObject *const *objs, int axis, int axis_none, PyObject *result)
{
    if (!result || n <= 0) return result;
    ck_ag_var **vars = PyMem_Calloc((size_t)n, sizeof *vars);
    const ck_array **arrs = PyMem_Calloc((size_t)n, sizeof *arrs);
    if (!vars || !arrs) {
        PyMem_Free(vars);
        PyMem_Free(arrs);
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    int any = 0;
    for (int i = 0; i < n; i++) {
        any |= (vars[i] = var_of(objs[i])) != NULL;
        arrs[i] = CK_ARR(objs[i]);
    }
    ck_ag_var *ov = NULL;
    ck_status s = any ? ck_ag_record_join(stack, n, arrs, vars, axis, axis_none, CK_ARR(result), &ov) : CK_OK;
    PyMem_Free(vars);
    PyMem_Free(arrs);
    return attach(result, s, ov);
}

PyObject *ck_py_ag_scan(const char *name, PyObject *a, int axis, int axis_none, PyObject *result)
{
    ck_ag_var *v = var_of(a), *ov;
    if (!v || !result || !CkArray_Check(result)) return result;
    ck_status s = ck_ag_record_scan(name, CK_ARR(a), v, axis, axis_none, CK_ARR(result), &ov);
    return attach(result, s, ov);
}

static PyObject *py_rule_names(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (int i = 0; l && ck_ag_train_rule_name(i); i++) {
        PyObject *s = PyUnicode_FromString(ck_ag_train_rule_name(i));
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    for (int i = 0; l && ck_ag_linear_rule_name(i); i++) {
        PyObject *s = PyUnicode_FromString(ck_ag_linear_rule_name(i));
        if (!s || PyList_Append(l, s) < 0) Py_CLEAR(l);
        Py_XDECREF(s);
    }
    return l;
}

PyMethodDef ck_py_ag_train_functions[] = {
    CK_DEF_NOARGS(_ag_train_rule_names, py_rule_names, "()",
                  "The names of the gradient rules in src/autograd/rules_train.c and rules_linear.c (private, for tests)."),
    {NULL, NULL, 0, NULL},
};
