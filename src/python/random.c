/* The private functions behind cudakit.random: the Philox block function
 * (for known-answer tests) and one fill entry point.  The Generator's state
 * (key and counter) lives in Python; these take it as integers. */
#include "ck_python.h"

#include <string.h>

static const char *const dist_names[CK_RANDOM_NDISTS] = {
    "bits", "uniform", "normal", "exponential", "integers", "gamma", "beta", "poisson", "binomial",
};

/* Python int -> n 32-bit words, least significant first (modulo 2^(32 n)). */
static int words_from_int(PyObject *v, uint32_t *w, int n)
{
    PyObject *x = PyNumber_Index(v);
    if (!x) return -1;
    for (int i = 0; i < n; i += 2) {
        unsigned long long u = PyLong_AsUnsignedLongLongMask(x);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) { Py_DECREF(x); return -1; }
        w[i] = (uint32_t)u;
        if (i + 1 < n) w[i + 1] = (uint32_t)(u >> 32);
        if (i + 2 < n) {
            PyObject *sh = PyLong_FromLong(64), *nx = sh ? PyNumber_Rshift(x, sh) : NULL;
            Py_XDECREF(sh);
            Py_DECREF(x);
            if (!nx) return -1;
            x = nx;
        }
    }
    Py_DECREF(x);
    return 0;
}

static int words_from_tuple(PyObject *t, uint32_t *w, int n, const char *what)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of %d ints", what, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        uint32_t pair[2];
        if (words_from_int(PyTuple_GET_ITEM(t, i), pair, 1) < 0) return -1;
        w[i] = pair[0];
    }
    return 0;
}

/* _random_philox(ctr4, key2) -> the 4 output words of Philox4x32-10 */
static PyObject *f_philox(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ct, *kt;
    if (!PyArg_ParseTuple(args, "OO", &ct, &kt)) return NULL;
    uint32_t ctr[4], key[2], out[4];
    if (words_from_tuple(ct, ctr, 4, "counter") < 0 || words_from_tuple(kt, key, 2, "key") < 0) return NULL;
    ck_philox4x32_10(ctr, key, out);
    return Py_BuildValue("(kkkk)", (unsigned long)out[0], (unsigned long)out[1], (unsigned long)out[2],
                         (unsigned long)out[3]);
}

/* A parameter: a Python float, or a float64 C-contiguous CPU array with one
 * value per output element. */
static int param_from_obj(PyObject *o, const ck_array *out, double *v, const double **arr)
{
    *arr = NULL;
    if (CkArray_Check(o)) {
        const ck_array *a = CK_ARR(o);
        if (a->dtype != CK_FLOAT64 || !(a->flags & CK_ARRAY_C_CONTIGUOUS) ||
            !ck_device_equal(ck_array_device(a), ck_array_device(out)) || a->size != out->size) {
            PyErr_SetString(PyExc_ValueError, "random parameter arrays must be float64, C-contiguous, on the "
                                              "output's device and of the output's size");
            return -1;
        }
        *arr = (const double *)a->data;
        return 0;
    }
    *v = PyFloat_AsDouble(o);
    return *v == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* _random_fill(out, dist, key, counter, a=0.0, b=0.0, low=0, range=0)
 * -> the number of counter values used */
static PyObject *f_fill(PyObject *m, PyObject *args, PyObject *kw)
{
    (void)m;
    PyObject *outo, *key_o, *ctr_o, *a_o = NULL, *b_o = NULL, *low_o = NULL, *range_o = NULL;
    const char *dname;
    static char *kwlist[] = {"out", "dist", "key", "counter", "a", "b", "low", "range", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!sOO|OOOO", kwlist, &CkArray_Type, &outo, &dname, &key_o, &ctr_o,
                                     &a_o, &b_o, &low_o, &range_o))
        return NULL;
    int dist = -1;
    for (int i = 0; i < CK_RANDOM_NDISTS; i++)
        if (!strcmp(dname, dist_names[i])) dist = i;
    if (dist < 0) return PyErr_Format(PyExc_ValueError, "unknown distribution %s", dname);
    ck_array *out = CK_ARR(outo);
    uint32_t key[2], ctr[4], lw[2] = {0, 0}, rw[2] = {0, 0};
    ck_random_params p;
    memset(&p, 0, sizeof p);
    if (words_from_int(key_o, key, 2) < 0 || words_from_int(ctr_o, ctr, 4) < 0) return NULL;
    if (low_o && words_from_int(low_o, lw, 2) < 0) return NULL;
    if (range_o && words_from_int(range_o, rw, 2) < 0) return NULL;
    if (a_o && param_from_obj(a_o, out, &p.a, &p.a_arr) < 0) return NULL;
    if (b_o && param_from_obj(b_o, out, &p.b, &p.b_arr) < 0) return NULL;
    p.low = (uint64_t)lw[0] | (uint64_t)lw[1] << 32;
    p.range = (uint64_t)rw[0] | (uint64_t)rw[1] << 32;
    uint64_t used;
    ck_status s;
    if (out->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_random_fill(out, (ck_random_dist)dist, key, ctr, &p, &used);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_random_fill(out, (ck_random_dist)dist, key, ctr, &p, &used);
    }
    if (s != CK_OK) return ck_py_raise(s);
    return PyLong_FromUnsignedLongLong(used);
}

PyMethodDef ck_py_random_functions[] = {
    CK_DEF_VARARGS(_random_philox, f_philox, "(counter4, key2, /)", "The Philox4x32-10 block function."),
    CK_DEF_KW(_random_fill, f_fill, "(out, dist, key, counter, a=0.0, b=0.0, low=0, range=0)",
              "Fill a contiguous CPU array; returns the counter values used."),
    {NULL, NULL, 0, NULL},
};
