/* The private function behind cudakit.cuda.random's states: fill an
 * (n, 2) uint64 array with xoroshiro128+ generators (include/cudakit_xoroshiro.h).
 * Seed and subsequence_start arrive checked (random.py) as ints below 2^64. */
#include "ck_python.h"

#include "cudakit_xoroshiro.h"

static int u64_from(PyObject *o, uint64_t *v)
{
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *v = u;
    return 0;
}

/* _xoroshiro128p_init(states, seed, subsequence_start) */
static PyObject *f_init(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *so, *seed_o, *sub_o;
    if (!PyArg_ParseTuple(args, "O!OO", &CkArray_Type, &so, &seed_o, &sub_o)) return NULL;
    uint64_t seed, sub;
    if (u64_from(seed_o, &seed) < 0 || u64_from(sub_o, &sub) < 0) return NULL;
    ck_array *st = CK_ARR(so);
    ck_status s;
    if (st->size >= CK_PY_NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        s = ck_xoro_init_states(st, seed, sub);
        Py_END_ALLOW_THREADS
    } else {
        s = ck_xoro_init_states(st, seed, sub);
    }
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

PyMethodDef ck_py_xoroshiro_functions[] = {
    CK_DEF_VARARGS(_xoroshiro128p_init, f_init, "(states, seed, subsequence_start, /)",
                   "Fill an (n, 2) uint64 array of any device with xoroshiro128+ states."),
    {NULL, NULL, 0, NULL},
};
