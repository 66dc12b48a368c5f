/* The communicators' public wrappers: arguments checked once, the dtype
 * and count an implementation runs found, then one call through the
 * communicator's table (comm.h). */
#include "comm.h"
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[CK_COMM_OP_COUNT] = {"sum", "prod", "max", "min", "avg"};

/* ------------------------------------------------------------- timeout */

static double timeout_ = -1;   /* < 0: not read from the environment yet */

double ck_comm_timeout_get(void)
{
    double t = timeout_;
    if (t <= 0) {
        const char *env = getenv("CUDAKIT_COMM_TIMEOUT");
        char *end = NULL;
        double v = env && *env ? strtod(env, &end) : 0;
        t = end && *end == '\0' && v > 0 && isfinite(v) ? v : 300.0;
        timeout_ = t;
    }
    return t;
}

ck_status ck_comm_timeout_set(double seconds)
{
    if (!(seconds > 0) || !isfinite(seconds))
        return ck_error_set(CK_ERR_VALUE, "a communicator's timeout is a positive number of seconds, not %g", seconds);
    timeout_ = seconds;
    return CK_OK;
}

/* ---------------------------------------------------------------- ids */

ck_device_type ck_comm_id_type(const ck_comm_id *id)
{
    return memcmp(id->bytes, CK_COMM_SHM_MAGIC, sizeof CK_COMM_SHM_MAGIC - 1) ? CK_DEVICE_CUDA : CK_DEVICE_CPU;
}

static const ck_comm_iface *iface_of(ck_device_type t) { return t == CK_DEVICE_CPU ? &ck_comm_shm : &ck_comm_nccl; }

ck_status ck_comm_get_unique_id(ck_device_type type, ck_comm_id *out)
{
    if (type != CK_DEVICE_CPU && type != CK_DEVICE_CUDA)
        return ck_error_set(CK_ERR_VALUE, "no communicator for device type %d", type);
    memset(out, 0, sizeof *out);
    return iface_of(type)->unique_id(out);
}

/* --------------------------------------------------------- lifetimes */

static ck_status check_dev(ck_device dev, ck_device_type want)
{
    if (dev.type != (int)want) {
        char b[32];
        ck_device_str(dev, b, sizeof b);
        return ck_error_set(CK_ERR_VALUE, "this unique id is for %s communicator, not one on %s",
                            want == CK_DEVICE_CPU ? "a shared-memory (CPU)" : "an NCCL (GPU)", b);
    }
    return ck_device_check(dev);
}

ck_status ck_comm_init_rank(ck_comm **out, ck_device dev, int n_ranks, const ck_comm_id *id, int rank)
{
    *out = NULL;
    if (ck_comm_in_group())
        return ck_error_set(CK_ERR_RUNTIME, "a communicator cannot be made inside group_start()/group_end()");
    ck_device_type t = ck_comm_id_type(id);
    if (n_ranks < 1 || (t == CK_DEVICE_CPU && n_ranks > CK_COMM_MAX_RANKS))
        return ck_error_set(CK_ERR_VALUE, "a communicator has 1 to %d ranks, not %d",
                            t == CK_DEVICE_CPU ? CK_COMM_MAX_RANKS : 1 << 30, n_ranks);
    if (rank < 0 || rank >= n_ranks)
        return ck_error_set(CK_ERR_VALUE, "rank %d is out of range for a communicator of %d ranks (0 to %d)", rank,
                            n_ranks, n_ranks - 1);
    ck_status s = check_dev(dev, t);
    if (s != CK_OK) return s;
    ck_comm *c = calloc(1, sizeof *c);
    if (!c) return ck_error_set(CK_ERR_MEMORY, "out of memory for a communicator");
    c->iface = iface_of(t);
    c->dev = dev;
    c->rank = rank;
    c->size = n_ranks;
    s = c->iface->init_rank(c, id);
    if (s != CK_OK) {
        free(c);
        return s;
    }
    *out = c;
    return CK_OK;
}

ck_status ck_comm_init_all(ck_comm **out, int n, const ck_device *devs)
{
    if (n < 1) return ck_error_set(CK_ERR_VALUE, "init_all needs at least one device, not %d", n);
    if (ck_comm_in_group())
        return ck_error_set(CK_ERR_RUNTIME, "a communicator cannot be made inside group_start()/group_end()");
    ck_device_type t = (ck_device_type)devs[0].type;
    for (int i = 0; i < n; i++) {
        out[i] = NULL;
        if (devs[i].type != (int)t)
            return ck_error_set(CK_ERR_VALUE, "init_all's devices are all GPUs or all the CPU");
        ck_status s = ck_device_check(devs[i]);
        if (s != CK_OK) return s;
        for (int j = 0; j < i && t == CK_DEVICE_CUDA; j++)
            if (devs[j].index == devs[i].index)
                return ck_error_set(CK_ERR_VALUE, "init_all names GPU %d twice (NCCL has one rank a GPU)", devs[i].index);
    }
    if (t == CK_DEVICE_CPU && n > CK_COMM_MAX_RANKS)
        return ck_error_set(CK_ERR_VALUE, "a communicator has 1 to %d ranks, not %d", CK_COMM_MAX_RANKS, n);
    const ck_comm_iface *f = iface_of(t);
    if (!f->init_all) return ck_error_set(CK_ERR_NOT_IMPLEMENTED, "init_all is not implemented for %s", f->name);
    for (int i = 0; i < n; i++) {
        out[i] = calloc(1, sizeof **out);
        if (!out[i]) {
            for (int j = 0; j < i; j++) free(out[j]);
            return ck_error_set(CK_ERR_MEMORY, "out of memory for a communicator");
        }
        out[i]->iface = f;
        out[i]->dev = devs[i];
        out[i]->rank = i;
        out[i]->size = n;
    }
    ck_status s = f->init_all(out, n);
    if (s != CK_OK)
        for (int i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    return s;
}

ck_status ck_comm_destroy(ck_comm *c)
{
    if (!c) return CK_OK;
    ck_status s = c->iface->destroy(c);
    free(c);
    return s;
}

ck_status ck_comm_abort(ck_comm *c)
{
    if (!c) return CK_OK;
    ck_status s = c->iface->abort(c);
    free(c);
    return s;
}

int ck_comm_rank(const ck_comm *c) { return c->rank; }
int ck_comm_size(const ck_comm *c) { return c->size; }
ck_device ck_comm_device(const ck_comm *c) { return c->dev; }
const char *ck_comm_backend_name(const ck_comm *c) { return c->iface->name; }

/* -------------------------------------------------------------- groups */

static _Thread_local int group_depth_;

int ck_comm_in_group(void) { return group_depth_ > 0; }

ck_status ck_comm_group_start(void)
{
    if (group_depth_++ > 0) return CK_OK;
    ck_status s = ck_comm_shm.group_start();
    if (s == CK_OK) s = ck_comm_nccl.group_start();
    if (s != CK_OK) group_depth_--;
    return s;
}

ck_status ck_comm_group_end(void)
{
    if (group_depth_ == 0) return ck_error_set(CK_ERR_RUNTIME, "group_end() without group_start()");
    if (--group_depth_ > 0) return CK_OK;
    ck_status s1 = ck_comm_shm.group_end();
    char msg[1024] = "";
    if (s1 != CK_OK) snprintf(msg, sizeof msg, "%s", ck_error_message());
    ck_status s2 = ck_comm_nccl.group_end();
    if (s1 != CK_OK) return ck_error_set(s1, "%s", msg);
    return s2;
}

/* ------------------------------------------------------- raw pointers */

/* NCCL's element types. */
static int nccl_has(ck_dtype dt)
{
    switch (dt) {
    case CK_INT8: case CK_UINT8: case CK_INT32: case CK_UINT32: case CK_INT64: case CK_UINT64:
    case CK_FLOAT16: case CK_FLOAT32: case CK_FLOAT64:
        return 1;
    default:
        return 0;
    }
}

/* What a reduction of dt with op runs as: a dtype NCCL reduces and how
 * many of it one element is. */
static ck_status reduce_as(const char *what, ck_dtype dt, ck_comm_op op, ck_dtype *as, size_t *per)
{
    if ((unsigned)op >= CK_COMM_OP_COUNT)
        return ck_error_set(CK_ERR_VALUE, "%s: unknown reduction %d (sum, prod, max, min or avg)", what, (int)op);
    *per = 1;
    *as = dt;
    if (nccl_has(dt)) return CK_OK;
    if (dt == CK_BOOL && (op == CK_COMM_MAX || op == CK_COMM_MIN)) {
        *as = CK_UINT8;
        return CK_OK;
    }
    if ((dt == CK_COMPLEX64 || dt == CK_COMPLEX128) && (op == CK_COMM_SUM || op == CK_COMM_AVG)) {
        *as = dt == CK_COMPLEX64 ? CK_FLOAT32 : CK_FLOAT64;
        *per = 2;
        return CK_OK;
    }
    return ck_error_set(CK_ERR_TYPE, "%s: no %s reduction of %s (NCCL reduces int8, uint8, int32, uint32, int64, "
                        "uint64, float16, float32 and float64; complex for sum and avg, bool for max and min)", what,
                        op_names[op], ck_dtype_get_info(dt)->name);
}

static ck_status check_call(ck_comm *c, const char *what, ck_dtype dt, ck_stream *s)
{
    if (!c) return ck_error_set(CK_ERR_VALUE, "%s: the communicator was destroyed", what);
    if ((unsigned)dt >= CK_NTYPES) return ck_error_set(CK_ERR_VALUE, "%s: unknown dtype %d", what, (int)dt);
    if (!*s && c->dev.type != CK_DEVICE_CPU) *s = ck_stream_current(c->dev);
    return CK_OK;
}

static ck_status check_rank(ck_comm *c, const char *what, const char *role, int r)
{
    if (r < 0 || r >= c->size)
        return ck_error_set(CK_ERR_VALUE, "%s: %s %d is out of range for a communicator of %d ranks", what, role, r,
                            c->size);
    return CK_OK;
}

static ck_status check_ptr(ck_comm *c, const char *what, const char *role, const void *p, size_t n)
{
    if (!p && n) return ck_error_set(CK_ERR_VALUE, "%s: the %s buffer is NULL (rank %d)", what, role, c->rank);
    return CK_OK;
}

#define CK_COMM_TRY_(x)                  \
    do {                                 \
        ck_status st_ = (x);             \
        if (st_ != CK_OK) return st_;    \
    } while (0)

ck_status ck_comm_all_reduce_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                                 ck_stream s)
{
    ck_dtype as = CK_DTYPE_INVALID;
    size_t per = 1;
    CK_COMM_TRY_(check_call(c, "all_reduce", dt, &s));
    CK_COMM_TRY_(reduce_as("all_reduce", dt, op, &as, &per));
    CK_COMM_TRY_(check_ptr(c, "all_reduce", "send", send, count));
    CK_COMM_TRY_(check_ptr(c, "all_reduce", "recv", recv, count));
    return c->iface->all_reduce(c, send, recv, count * per, as, op, s);
}

ck_status ck_comm_reduce_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_comm_op op,
                             int root, ck_stream s)
{
    ck_dtype as = CK_DTYPE_INVALID;
    size_t per = 1;
    CK_COMM_TRY_(check_call(c, "reduce", dt, &s));
    CK_COMM_TRY_(reduce_as("reduce", dt, op, &as, &per));
    CK_COMM_TRY_(check_rank(c, "reduce", "root", root));
    CK_COMM_TRY_(check_ptr(c, "reduce", "send", send, count));
    if (c->rank == root) CK_COMM_TRY_(check_ptr(c, "reduce", "recv", recv, count));
    return c->iface->reduce(c, send, recv, count * per, as, op, root, s);
}

ck_status ck_comm_broadcast_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, int root,
                                ck_stream s)
{
    CK_COMM_TRY_(check_call(c, "broadcast", dt, &s));
    CK_COMM_TRY_(check_rank(c, "broadcast", "root", root));
    if (c->rank == root) CK_COMM_TRY_(check_ptr(c, "broadcast", "send", send, count));
    CK_COMM_TRY_(check_ptr(c, "broadcast", "recv", recv, count));
    return c->iface->broadcast(c, send, recv, count, dt, root, s);
}

ck_status ck_comm_all_gather_raw(ck_comm *c, const void *send, void *recv, size_t count, ck_dtype dt, ck_stream s)
{
    CK_COMM_TRY_(check_call(c, "all_gather", dt, &s));
    CK_COMM_TRY_(check_ptr(c, "all_gather", "send", send, count));
    CK_COMM_TRY_(check_ptr(c, "all_gather", "recv", recv, count));
    return c->iface->all_gather(c, send, recv, count, dt, s);
}

ck_status ck_comm_reduce_scatter_raw(ck_comm *c, const void *send, void *recv, size_t recvcount, ck_dtype dt,
                                     ck_comm_op op, ck_stream s)
{
    ck_dtype as = CK_DTYPE_INVALID;
    size_t per = 1;
    CK_COMM_TRY_(check_call(c, "reduce_scatter", dt, &s));
    CK_COMM_TRY_(reduce_as("reduce_scatter", dt, op, &as, &per));
    CK_COMM_TRY_(check_ptr(c, "reduce_scatter", "send", send, recvcount));
    CK_COMM_TRY_(check_ptr(c, "reduce_scatter", "recv", recv, recvcount));
    return c->iface->reduce_scatter(c, send, recv, recvcount * per, as, op, s);
}

ck_status ck_comm_send_raw(ck_comm *c, const void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    CK_COMM_TRY_(check_call(c, "send", dt, &s));
    CK_COMM_TRY_(check_rank(c, "send", "peer", peer));
    CK_COMM_TRY_(check_ptr(c, "send", "send", buf, count));
    return c->iface->send(c, buf, count, dt, peer, s);
}

ck_status ck_comm_recv_raw(ck_comm *c, void *buf, size_t count, ck_dtype dt, int peer, ck_stream s)
{
    CK_COMM_TRY_(check_call(c, "recv", dt, &s));
    CK_COMM_TRY_(check_rank(c, "recv", "peer", peer));
    CK_COMM_TRY_(check_ptr(c, "recv", "recv", buf, count));
    return c->iface->recv(c, buf, count, dt, peer, s);
}

ck_status ck_comm_barrier(ck_comm *c)
{
    if (!c) return ck_error_set(CK_ERR_VALUE, "barrier: the communicator was destroyed");
    if (ck_comm_in_group()) return ck_error_set(CK_ERR_RUNTIME, "barrier() cannot be called inside a group");
    return c->iface->barrier(c);
}
