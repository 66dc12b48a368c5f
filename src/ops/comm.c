/* The collectives on arrays (include/cudakit_comm.h): the arrays' device,
 * layout, dtype and sizes checked, then the raw call on their data.  An
 * array used on a stream other than its own is marked used there, so its
 * memory is not reused before that stream is past the collective. */
#include "ops_internal.h"
#include "cudakit_comm.h"

#include <stdio.h>

static ck_status check_array(ck_comm *c, const char *what, const char *role, const ck_array *a, int out)
{
    if (!c) return ck_error_set(CK_ERR_VALUE, "%s: the communicator was destroyed", what);
    if (!a) return ck_error_set(CK_ERR_VALUE, "%s: no %s array (rank %d)", what, role, ck_comm_rank(c));
    ck_device d = ck_array_device(a), cd = ck_comm_device(c);
    if (!ck_device_equal(d, cd)) {
        char b1[32], b2[32];
        ck_device_str(d, b1, sizeof b1);
        ck_device_str(cd, b2, sizeof b2);
        return ck_error_set(CK_ERR_VALUE, "%s: the %s array is on %s, the communicator's rank %d on %s (move it with "
                            ".to_device() first)", what, role, b1, ck_comm_rank(c), b2);
    }
    if (!(a->flags & CK_ARRAY_C_CONTIGUOUS))
        return ck_error_set(CK_ERR_VALUE, "%s: the %s array must be C-contiguous (make one with ascontiguousarray)",
                            what, role);
    if (out && !(a->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "%s: the %s array is read-only", what, role);
    return CK_OK;
}

static ck_status check_pair(const char *what, const ck_array *send, const ck_array *recv, int64_t want, const char *rule)
{
    if (send->dtype != recv->dtype)
        return ck_error_set(CK_ERR_TYPE, "%s: send is %s but recv is %s (one dtype)", what,
                            ck_dtype_get_info(send->dtype)->name, ck_dtype_get_info(recv->dtype)->name);
    if (recv->size != want)
        return ck_error_set(CK_ERR_VALUE, "%s: recv has %lld elements, it needs %lld (%s)", what, (long long)recv->size,
                            (long long)want, rule);
    return CK_OK;
}

static ck_status use_on(ck_comm *c, const ck_array *a, ck_stream s)
{
    if (!a || !s || ck_comm_device(c).type == CK_DEVICE_CPU || s == ck_stream_current(ck_comm_device(c))) return CK_OK;
    return ck_array_record_stream(a, s);
}

#define CK_COMM_OPS_TRY_(x)              \
    do {                                 \
        ck_status st_ = (x);             \
        if (st_ != CK_OK) return st_;    \
    } while (0)

ck_status ck_comm_all_reduce(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "all_reduce", "send", send, 0));
    CK_COMM_OPS_TRY_(check_array(c, "all_reduce", "recv", recv, 1));
    CK_COMM_OPS_TRY_(check_pair("all_reduce", send, recv, send->size, "send's size"));
    CK_COMM_OPS_TRY_(use_on(c, send, s));
    CK_COMM_OPS_TRY_(use_on(c, recv, s));
    return ck_comm_all_reduce_raw(c, send->data, recv->data, (size_t)send->size, send->dtype, op, s);
}

ck_status ck_comm_reduce(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, int root, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "reduce", "send", send, 0));
    int at_root = ck_comm_rank(c) == root;
    if (at_root || recv) {
        CK_COMM_OPS_TRY_(check_array(c, "reduce", "recv", recv, 1));
        CK_COMM_OPS_TRY_(check_pair("reduce", send, recv, send->size, "send's size"));
        CK_COMM_OPS_TRY_(use_on(c, recv, s));
    }
    CK_COMM_OPS_TRY_(use_on(c, send, s));
    return ck_comm_reduce_raw(c, send->data, recv ? recv->data : NULL, (size_t)send->size, send->dtype, op, root, s);
}

ck_status ck_comm_broadcast(ck_comm *c, const ck_array *send, ck_array *recv, int root, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "broadcast", "recv", recv, 1));
    if (ck_comm_rank(c) == root || send) {
        CK_COMM_OPS_TRY_(check_array(c, "broadcast", "send", send, 0));
        CK_COMM_OPS_TRY_(check_pair("broadcast", send, recv, send->size, "send's size"));
        CK_COMM_OPS_TRY_(use_on(c, send, s));
    }
    CK_COMM_OPS_TRY_(use_on(c, recv, s));
    const void *sp = send ? send->data : (ck_comm_rank(c) == root ? NULL : recv->data);
    return ck_comm_broadcast_raw(c, sp, recv->data, (size_t)recv->size, recv->dtype, root, s);
}

ck_status ck_comm_all_gather(ck_comm *c, const ck_array *send, ck_array *recv, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "all_gather", "send", send, 0));
    CK_COMM_OPS_TRY_(check_array(c, "all_gather", "recv", recv, 1));
    CK_COMM_OPS_TRY_(check_pair("all_gather", send, recv, send->size * ck_comm_size(c), "n_ranks times send's size"));
    CK_COMM_OPS_TRY_(use_on(c, send, s));
    CK_COMM_OPS_TRY_(use_on(c, recv, s));
    return ck_comm_all_gather_raw(c, send->data, recv->data, (size_t)send->size, send->dtype, s);
}

ck_status ck_comm_reduce_scatter(ck_comm *c, const ck_array *send, ck_array *recv, ck_comm_op op, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "reduce_scatter", "send", send, 0));
    CK_COMM_OPS_TRY_(check_array(c, "reduce_scatter", "recv", recv, 1));
    int n = ck_comm_size(c);
    if (send->size % n)
        return ck_error_set(CK_ERR_VALUE, "reduce_scatter: send has %lld elements, not a multiple of the %d ranks",
                            (long long)send->size, n);
    CK_COMM_OPS_TRY_(check_pair("reduce_scatter", send, recv, send->size / n, "send's size / n_ranks"));
    CK_COMM_OPS_TRY_(use_on(c, send, s));
    CK_COMM_OPS_TRY_(use_on(c, recv, s));
    return ck_comm_reduce_scatter_raw(c, send->data, recv->data, (size_t)recv->size, send->dtype, op, s);
}

ck_status ck_comm_send(ck_comm *c, const ck_array *a, int peer, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "send", "send", a, 0));
    CK_COMM_OPS_TRY_(use_on(c, a, s));
    return ck_comm_send_raw(c, a->data, (size_t)a->size, a->dtype, peer, s);
}

ck_status ck_comm_recv(ck_comm *c, ck_array *a, int peer, ck_stream s)
{
    CK_COMM_OPS_TRY_(check_array(c, "recv", "recv", a, 1));
    CK_COMM_OPS_TRY_(use_on(c, a, s));
    return ck_comm_recv_raw(c, a->data, (size_t)a->size, a->dtype, peer, s);
}
