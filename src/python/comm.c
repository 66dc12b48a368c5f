/* The face of include/cudakit_comm.h: _core.Comm (one ck_comm, destroyed
 * with the object or by destroy()/abort()), unique ids as bytes, groups,
 * the timeout, NCCL's version and peer access.  Every call that may wait
 * for other ranks runs with the GIL released. */
#include "ck_python.h"
#include "cudakit_comm.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    ck_comm *c;
    ck_device dev;
    int rank, size;
} CkComm;

static PyTypeObject CkComm_Type;

#define CK_PY_COMM_WAIT(call)                   \
    do {                                        \
        ck_status s_;                           \
        Py_BEGIN_ALLOW_THREADS                  \
        s_ = (call);                            \
        Py_END_ALLOW_THREADS                    \
        if (s_ != CK_OK) return ck_py_raise(s_); \
    } while (0)

static int id_arg(PyObject *o, ck_comm_id *id)
{
    Py_buffer b;
    if (PyObject_GetBuffer(o, &b, PyBUF_SIMPLE) < 0) return -1;
    int ok = b.len == CK_COMM_ID_BYTES;
    if (ok) memcpy(id->bytes, b.buf, CK_COMM_ID_BYTES);
    PyBuffer_Release(&b);
    if (!ok) PyErr_Format(PyExc_ValueError, "a unique id is %d bytes", CK_COMM_ID_BYTES);
    return ok ? 0 : -1;
}

static int stream_arg(PyObject *o, ck_stream *s)
{
    *s = NULL;
    if (o == Py_None) return 0;
    *s = (ck_stream)PyLong_AsVoidPtr(o);
    return PyErr_Occurred() ? -1 : 0;
}

static int array_arg(PyObject *o, const char *role, ck_array **a, int allow_none)
{
    *a = NULL;
    if (o == Py_None && allow_none) return 0;
    if (!CkArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "the %s buffer must be a cudakit array, not %.100s", role, Py_TYPE(o)->tp_name);
        return -1;
    }
    *a = CK_ARR(o);
    return 0;
}

static int op_arg(int op)
{
    if (op < 0 || op >= CK_COMM_OP_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown reduction %d (sum, prod, max, min or avg)", op);
        return -1;
    }
    return 0;
}

static ck_comm *live(CkComm *self)
{
    if (!self->c) PyErr_SetString(PyExc_RuntimeError, "the communicator was destroyed (or aborted)");
    return self->c;
}

static PyObject *comm_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"n_ranks", "unique_id", "rank", "device", NULL};
    int n, rank;
    PyObject *ido, *devo = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOi|O:Comm", kwlist, &n, &ido, &rank, &devo)) return NULL;
    ck_comm_id id;
    if (id_arg(ido, &id) < 0) return NULL;
    ck_device dev;
    int has = 0;
    if (ck_py_device_from_obj(devo, &dev, &has) < 0) return NULL;
    if (!has) {
        dev = ck_comm_id_type(&id) == CK_DEVICE_CPU ? ck_device_cpu() : ck_device_current(CK_DEVICE_CUDA);
    }
    ck_comm *c = NULL;
    CK_PY_COMM_WAIT(ck_comm_init_rank(&c, dev, n, &id, rank));
    CkComm *self = (CkComm *)type->tp_alloc(type, 0);
    if (!self) {
        ck_comm_destroy(c);
        return NULL;
    }
    self->c = c;
    self->dev = dev;
    self->rank = rank;
    self->size = n;
    return (PyObject *)self;
}

static void comm_dealloc(CkComm *self)
{
    if (self->c) {
        Py_BEGIN_ALLOW_THREADS
        ck_comm_destroy(self->c);
        Py_END_ALLOW_THREADS
        ck_error_clear();
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *comm_destroy(CkComm *self, PyObject *noargs)
{
    (void)noargs;
    ck_comm *c = self->c;
    self->c = NULL;
    if (c) CK_PY_COMM_WAIT(ck_comm_destroy(c));
    Py_RETURN_NONE;
}

static PyObject *comm_abort(CkComm *self, PyObject *noargs)
{
    (void)noargs;
    ck_comm *c = self->c;
    self->c = NULL;
    if (c) CK_PY_COMM_WAIT(ck_comm_abort(c));
    Py_RETURN_NONE;
}

/* all_reduce(send, recv, op, stream) */
static PyObject *comm_all_reduce(CkComm *self, PyObject *args)
{
    PyObject *so, *ro, *sto = Py_None;
    int op;
    ck_array *sa, *ra;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "OOi|O", &so, &ro, &op, &sto) || array_arg(so, "send", &sa, 0) < 0 ||
        array_arg(ro, "recv", &ra, 0) < 0 || op_arg(op) < 0 || stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_all_reduce(self->c, sa, ra, (ck_comm_op)op, st));
    Py_RETURN_NONE;
}

/* reduce(send, recv or None, op, root, stream) */
static PyObject *comm_reduce(CkComm *self, PyObject *args)
{
    PyObject *so, *ro, *sto = Py_None;
    int op, root;
    ck_array *sa, *ra;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "OOii|O", &so, &ro, &op, &root, &sto) || array_arg(so, "send", &sa, 0) < 0 ||
        array_arg(ro, "recv", &ra, 1) < 0 || op_arg(op) < 0 || stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_reduce(self->c, sa, ra, (ck_comm_op)op, root, st));
    Py_RETURN_NONE;
}

/* broadcast(send or None, recv, root, stream) */
static PyObject *comm_broadcast(CkComm *self, PyObject *args)
{
    PyObject *so, *ro, *sto = Py_None;
    int root;
    ck_array *sa, *ra;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "OOi|O", &so, &ro, &root, &sto) || array_arg(so, "send", &sa, 1) < 0 ||
        array_arg(ro, "recv", &ra, 0) < 0 || stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_broadcast(self->c, sa, ra, root, st));
    Py_RETURN_NONE;
}

/* all_gather(send, recv, stream) */
static PyObject *comm_all_gather(CkComm *self, PyObject *args)
{
    PyObject *so, *ro, *sto = Py_None;
    ck_array *sa, *ra;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "OO|O", &so, &ro, &sto) || array_arg(so, "send", &sa, 0) < 0 ||
        array_arg(ro, "recv", &ra, 0) < 0 || stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_all_gather(self->c, sa, ra, st));
    Py_RETURN_NONE;
}

/* reduce_scatter(send, recv, op, stream) */
static PyObject *comm_reduce_scatter(CkComm *self, PyObject *args)
{
    PyObject *so, *ro, *sto = Py_None;
    int op;
    ck_array *sa, *ra;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "OOi|O", &so, &ro, &op, &sto) || array_arg(so, "send", &sa, 0) < 0 ||
        array_arg(ro, "recv", &ra, 0) < 0 || op_arg(op) < 0 || stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_reduce_scatter(self->c, sa, ra, (ck_comm_op)op, st));
    Py_RETURN_NONE;
}

/* send(array, peer, stream) */
static PyObject *comm_send(CkComm *self, PyObject *args)
{
    PyObject *ao, *sto = Py_None;
    int peer;
    ck_array *a;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "Oi|O", &ao, &peer, &sto) || array_arg(ao, "send", &a, 0) < 0 ||
        stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_send(self->c, a, peer, st));
    Py_RETURN_NONE;
}

/* recv(array, peer, stream) */
static PyObject *comm_recv(CkComm *self, PyObject *args)
{
    PyObject *ao, *sto = Py_None;
    int peer;
    ck_array *a;
    ck_stream st;
    if (!PyArg_ParseTuple(args, "Oi|O", &ao, &peer, &sto) || array_arg(ao, "recv", &a, 0) < 0 ||
        stream_arg(sto, &st) < 0 || !live(self))
        return NULL;
    CK_PY_COMM_WAIT(ck_comm_recv(self->c, a, peer, st));
    Py_RETURN_NONE;
}

static PyObject *comm_barrier(CkComm *self, PyObject *noargs)
{
    (void)noargs;
    if (!live(self)) return NULL;
    CK_PY_COMM_WAIT(ck_comm_barrier(self->c));
    Py_RETURN_NONE;
}

/* raw(kind, send_ptr, recv_ptr, count, dtype, op, root_or_peer, stream):
 * CuPy's pointer spellings; kind is "all_reduce", "reduce", "broadcast",
 * "all_gather", "reduce_scatter", "send" or "recv". */
static PyObject *comm_raw(CkComm *self, PyObject *args)
{
    const char *kind;
    PyObject *so, *ro, *dto, *sto = Py_None;
    unsigned long long count;
    int op, root;
    if (!PyArg_ParseTuple(args, "sOOKOii|O", &kind, &so, &ro, &count, &dto, &op, &root, &sto) || !live(self))
        return NULL;
    void *sp = so == Py_None ? NULL : PyLong_AsVoidPtr(so);
    void *rp = ro == Py_None ? NULL : PyLong_AsVoidPtr(ro);
    ck_dtype dt;
    ck_stream st;
    if (PyErr_Occurred() || ck_py_dtype_from_obj(dto, CK_FLOAT32, &dt) < 0 || stream_arg(sto, &st) < 0) return NULL;
    ck_comm *c = self->c;
    size_t n = (size_t)count;
    if (!strcmp(kind, "all_reduce")) {
        if (op_arg(op) < 0) return NULL;
        CK_PY_COMM_WAIT(ck_comm_all_reduce_raw(c, sp, rp, n, dt, (ck_comm_op)op, st));
    } else if (!strcmp(kind, "reduce")) {
        if (op_arg(op) < 0) return NULL;
        CK_PY_COMM_WAIT(ck_comm_reduce_raw(c, sp, rp, n, dt, (ck_comm_op)op, root, st));
    } else if (!strcmp(kind, "broadcast")) {
        CK_PY_COMM_WAIT(ck_comm_broadcast_raw(c, sp, rp, n, dt, root, st));
    } else if (!strcmp(kind, "all_gather")) {
        CK_PY_COMM_WAIT(ck_comm_all_gather_raw(c, sp, rp, n, dt, st));
    } else if (!strcmp(kind, "reduce_scatter")) {
        if (op_arg(op) < 0) return NULL;
        CK_PY_COMM_WAIT(ck_comm_reduce_scatter_raw(c, sp, rp, n, dt, (ck_comm_op)op, st));
    } else if (!strcmp(kind, "send")) {
        CK_PY_COMM_WAIT(ck_comm_send_raw(c, sp, n, dt, root, st));
    } else if (!strcmp(kind, "recv")) {
        CK_PY_COMM_WAIT(ck_comm_recv_raw(c, rp, n, dt, root, st));
    } else {
        return PyErr_Format(PyExc_ValueError, "unknown collective %s", kind);
    }
    Py_RETURN_NONE;
}

static PyObject *comm_get_rank(CkComm *self, void *c) { (void)c; return PyLong_FromLong(self->rank); }
static PyObject *comm_get_size(CkComm *self, void *c) { (void)c; return PyLong_FromLong(self->size); }
static PyObject *comm_get_device(CkComm *self, void *c) { (void)c; return ck_py_device_new(self->dev); }
static PyObject *comm_get_backend(CkComm *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->dev.type == CK_DEVICE_CPU ? "shm" : "nccl");
}
static PyObject *comm_get_alive(CkComm *self, void *c) { (void)c; return PyBool_FromLong(self->c != NULL); }

static PyMethodDef comm_methods[] = {
    CK_DEF_VARARGS(all_reduce, comm_all_reduce, "($self, send, recv, op, stream=None, /)",
                   "recv = the reduction (op, a ck_comm_op number) of every rank's send."),
    CK_DEF_VARARGS(reduce, comm_reduce, "($self, send, recv, op, root, stream=None, /)",
                   "The reduction of every rank's send into root's recv."),
    CK_DEF_VARARGS(broadcast, comm_broadcast, "($self, send, recv, root, stream=None, /)",
                   "root's send into every rank's recv."),
    CK_DEF_VARARGS(all_gather, comm_all_gather, "($self, send, recv, stream=None, /)",
                   "Every rank's send, in rank order, into each rank's recv."),
    CK_DEF_VARARGS(reduce_scatter, comm_reduce_scatter, "($self, send, recv, op, stream=None, /)",
                   "The reduction of every rank's send, each rank getting its block in recv."),
    CK_DEF_VARARGS(send, comm_send, "($self, array, peer, stream=None, /)", "Send array to rank peer."),
    CK_DEF_VARARGS(recv, comm_recv, "($self, array, peer, stream=None, /)", "Receive into array from rank peer."),
    CK_DEF_NOARGS(barrier, comm_barrier, "($self, /)", "Wait for every rank."),
    CK_DEF_VARARGS(raw, comm_raw, "($self, kind, send_ptr, recv_ptr, count, dtype, op, root, stream=None, /)",
                   "A collective (kind its name) on raw device pointers, as NCCL's own calls."),
    CK_DEF_NOARGS(destroy, comm_destroy, "($self, /)", "Free the communicator."),
    CK_DEF_NOARGS(abort, comm_abort, "($self, /)", "Free the communicator now; the other ranks' calls fail."),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef comm_getset[] = {
    {"rank", (getter)comm_get_rank, NULL, "this rank", NULL},
    {"size", (getter)comm_get_size, NULL, "the number of ranks", NULL},
    {"device", (getter)comm_get_device, NULL, "the device of this rank", NULL},
    {"backend", (getter)comm_get_backend, NULL, "'nccl' or 'shm'", NULL},
    {"alive", (getter)comm_get_alive, NULL, "False once destroyed or aborted", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CkComm_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cudakit._core.Comm",
    .tp_basicsize = sizeof(CkComm),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Comm(n_ranks, unique_id, rank, device=None)\n--\n\n"
              "One rank of a communicator (include/cudakit_comm.h).",
    .tp_new = comm_new,
    .tp_dealloc = (destructor)comm_dealloc,
    .tp_methods = comm_methods,
    .tp_getset = comm_getset,
};

/* _comm_unique_id("cpu" | "cuda") -> 128 bytes */
static PyObject *f_comm_unique_id(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_device dev;
    int has = 0;
    if (ck_py_device_from_obj(arg, &dev, &has) < 0) return NULL;
    if (!has) dev = ck_py_default_device();
    ck_comm_id id;
    CK_PY_COMM_WAIT(ck_comm_get_unique_id((ck_device_type)dev.type, &id));
    return PyBytes_FromStringAndSize((const char *)id.bytes, CK_COMM_ID_BYTES);
}

static PyObject *f_comm_id_kind(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_comm_id id;
    if (id_arg(arg, &id) < 0) return NULL;
    return PyUnicode_FromString(ck_comm_id_type(&id) == CK_DEVICE_CPU ? "cpu" : "cuda");
}

/* _comm_init_all([device, ...]) -> [Comm, ...] */
static PyObject *f_comm_init_all(PyObject *m, PyObject *arg)
{
    (void)m;
    PyObject *seq = PySequence_Fast(arg, "init_all takes a sequence of devices");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > CK_COMM_MAX_RANKS) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "init_all takes 1 to %d devices, not %zd", CK_COMM_MAX_RANKS, n);
    }
    ck_device devs[CK_COMM_MAX_RANKS];
    ck_comm *cs[CK_COMM_MAX_RANKS];
    for (Py_ssize_t i = 0; i < n; i++) {
        int has = 0;
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (PyLong_Check(o)) {
            long v = PyLong_AsLong(o);
            devs[i] = (ck_device){CK_DEVICE_CUDA, (int)v};
            has = 1;
        } else if (ck_py_device_from_obj(o, &devs[i], &has) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
        if (!has) devs[i] = ck_py_default_device();
    }
    Py_DECREF(seq);
    CK_PY_COMM_WAIT(ck_comm_init_all(cs, (int)n, devs));
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) {
        CkComm *o = out ? (CkComm *)CkComm_Type.tp_alloc(&CkComm_Type, 0) : NULL;
        if (!o) {
            for (Py_ssize_t j = i; j < n; j++) ck_comm_destroy(cs[j]);
            Py_XDECREF(out);
            return NULL;
        }
        o->c = cs[i];
        o->dev = devs[i];
        o->rank = (int)i;
        o->size = (int)n;
        PyList_SET_ITEM(out, i, (PyObject *)o);
    }
    return out;
}

static PyObject *f_comm_group_start(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    ck_status s = ck_comm_group_start();
    if (s != CK_OK) return ck_py_raise(s);
    Py_RETURN_NONE;
}

static PyObject *f_comm_group_end(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    CK_PY_COMM_WAIT(ck_comm_group_end());
    Py_RETURN_NONE;
}

/* _comm_timeout(seconds or None) -> the limit before */
static PyObject *f_comm_timeout(PyObject *m, PyObject *arg)
{
    (void)m;
    double prev = ck_comm_timeout_get();
    if (arg != Py_None) {
        double v = PyFloat_AsDouble(arg);
        if (v == -1.0 && PyErr_Occurred()) return NULL;
        ck_status s = ck_comm_timeout_set(v);
        if (s != CK_OK) return ck_py_raise(s);
    }
    return PyFloat_FromDouble(prev);
}

static PyObject *f_nccl_version(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    int v = 0;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_nccl_get_version(&v);
    Py_END_ALLOW_THREADS
    if (s != CK_OK) return ck_py_raise(s);
    return PyLong_FromLong(v);
}

/* _device_can_access_peer(a, b) -> bool (enabling it both ways) */
static PyObject *f_can_access_peer(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ao, *bo;
    if (!PyArg_ParseTuple(args, "OO", &ao, &bo)) return NULL;
    ck_device a, b;
    int ha = 0, hb = 0, out = 0;
    if (ck_py_device_from_obj(ao, &a, &ha) < 0 || ck_py_device_from_obj(bo, &b, &hb) < 0) return NULL;
    if (!ha || !hb) return PyErr_Format(PyExc_ValueError, "can_access_peer names two devices");
    CK_PY_COMM_WAIT(ck_device_can_access_peer(a, b, &out));
    return PyBool_FromLong(out);
}

PyMethodDef ck_py_comm_functions[] = {
    CK_DEF_O(_comm_unique_id, f_comm_unique_id, "(device_type, /)",
             "A new unique id (128 bytes) for a communicator on a device type."),
    CK_DEF_O(_comm_id_kind, f_comm_id_kind, "(unique_id, /)",
             "'cpu' (shared memory) or 'cuda' (NCCL): what a unique id is for."),
    CK_DEF_O(_comm_init_all, f_comm_init_all, "(devices, /)", "One communicator of len(devices) ranks in this process."),
    CK_DEF_NOARGS(_comm_group_start, f_comm_group_start, "()", "ncclGroupStart"),
    CK_DEF_NOARGS(_comm_group_end, f_comm_group_end, "()", "ncclGroupEnd"),
    CK_DEF_O(_comm_timeout, f_comm_timeout, "(seconds, /)", "Set the CPU communicators' timeout (None: only read it)."),
    CK_DEF_NOARGS(_nccl_version, f_nccl_version, "()", "The NCCL library's version code (loads it)."),
    CK_DEF_VARARGS(_device_can_access_peer, f_can_access_peer, "(a, b, /)", "Peer access between two devices (enabled)."),
    {NULL, NULL, 0, NULL},
};

int ck_py_comm_type_init(PyObject *module)
{
    if (PyType_Ready(&CkComm_Type) < 0) return -1;
    return PyModule_AddObjectRef(module, "Comm", (PyObject *)&CkComm_Type);
}
