/* Copies, casts, fills and moves between devices. */
#include "ops_internal.h"
#include "cudakit_graph.h"

#include <string.h>

ck_status ck_cast_into(ck_array *dst, const ck_array *src)
{
    ck_ew_desc d;
    d.op = CK_OP_COUNT;
    d.scalar_mask = 0;
    d.dev = ck_array_device(dst);
    d.types[0] = dst->dtype;
    d.types[1] = src->dtype;
    ck_iter_operand ops[2] = {ck_iter_op_of(dst), ck_iter_op_of(src)};
    ck_iter_prepare(&d.it, 2, dst->ndim, dst->shape, ops);
    return ck_backend_for(ck_array_device(dst))->cast(&d);
}

ck_status ck_array_assign(ck_array *dst, const ck_array *src)
{
    if (!ck_device_equal(ck_array_device(dst), ck_array_device(src))) {
        ck_array moved;
        ck_status s = ck_array_to_device(&moved, src, ck_array_device(dst));
        if (s != CK_OK) return s;
        s = ck_array_assign(dst, &moved);
        ck_array_release(&moved);
        return s;
    }
    if (!(dst->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    int nds[2] = {dst->ndim, src->ndim};
    const int64_t *shs[2] = {dst->shape, src->shape};
    int bnd;
    int64_t bsh[CK_MAXDIMS];
    if (ck_broadcast_shapes(2, nds, shs, &bnd, bsh) != CK_OK || bnd != dst->ndim ||
        memcmp(bsh, dst->shape, (size_t)bnd * sizeof *bsh) != 0)
        return ck_error_set(CK_ERR_VALUE, "could not broadcast input array from shape %s into shape %s",
                            ck_shape_str(src->ndim, src->shape, 0), ck_shape_str(dst->ndim, dst->shape, 1));
    if (dst->size == 0) return CK_OK;
    ck_array tmp;
    const ck_array *from = src;
    int used_tmp = 0;
    if (ck_array_may_overlap(dst, src) &&
        !(dst->data == src->data && dst->ndim == src->ndim &&
          memcmp(dst->strides, src->strides, (size_t)dst->ndim * 8) == 0)) {
        ck_status s = ck_array_astype(&tmp, src, src->dtype, 0);
        if (s != CK_OK) return s;
        from = &tmp;
        used_tmp = 1;
    }
    ck_ew_desc d;
    d.op = CK_OP_COUNT;
    d.scalar_mask = 0;
    d.dev = ck_array_device(dst);
    d.types[0] = dst->dtype;
    d.types[1] = from->dtype;
    ck_iter_operand ops[2] = {ck_iter_op_of(dst), ck_iter_op_of(from)};
    ck_iter_prepare(&d.it, 2, dst->ndim, dst->shape, ops);
    ck_status s = ck_backend_for(ck_array_device(dst))->cast(&d);
    if (used_tmp) ck_array_release(&tmp);
    return s;
}

ck_status ck_array_fill(ck_array *dst, const ck_scalar *value)
{
    if (!(dst->flags & CK_ARRAY_WRITEABLE))
        return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    _Alignas(16) unsigned char v[16];
    ck_scalar_store(value, dst->dtype, v);
    ck_ew_desc d;
    d.op = CK_OP_COUNT;
    d.scalar_mask = 0;
    d.dev = ck_array_device(dst);
    d.types[0] = dst->dtype;
    ck_iter_operand op = ck_iter_op_of(dst);
    ck_iter_prepare(&d.it, 1, dst->ndim, dst->shape, &op);
    return ck_backend_for(ck_array_device(dst))->fill(&d, v);
}

ck_status ck_array_astype(ck_array *out, const ck_array *a, ck_dtype dt, int order_f)
{
    ck_status s = ck_array_empty(out, a->ndim, a->shape, dt, ck_array_device(a));
    if (s != CK_OK) return s;
    if (order_f && a->ndim > 1) {
        ck_strides_f(a->ndim, a->shape, ck_dtype_get_info(dt)->itemsize, out->strides);
        ck_array_update_flags(out);
    }
    s = ck_cast_into(out, a);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_array_to_device(ck_array *out, const ck_array *a, ck_device dev)
{
    ck_device from = ck_array_device(a);
    if (ck_device_equal(from, dev)) return ck_array_astype(out, a, a->dtype, 0);
    ck_status s0 = ck_graph_refuse(from.type == CK_DEVICE_CPU ? dev : from, "a copy between devices (to_device, asarray)");
    if (s0 != CK_OK) return s0;
    /* make the source contiguous on its own device, then one transfer */
    ck_array src;
    const ck_array *c = a;
    int tmp = 0;
    /* a Fortran-ordered array moves as it is and stays Fortran-ordered */
    int keep_f = a->ndim > 1 && (a->flags & CK_ARRAY_F_CONTIGUOUS) && !(a->flags & CK_ARRAY_C_CONTIGUOUS);
    if (!(a->flags & CK_ARRAY_C_CONTIGUOUS) && !keep_f) {
        ck_status s = ck_array_astype(&src, a, a->dtype, 0);
        if (s != CK_OK) return s;
        c = &src;
        tmp = 1;
    }
    ck_status s = ck_array_empty(out, a->ndim, a->shape, a->dtype, dev);
    if (s == CK_OK && keep_f) {
        ck_strides_f(a->ndim, a->shape, ck_array_itemsize(a), out->strides);
        ck_array_update_flags(out);
    }
    if (s == CK_OK) {
        size_t n = (size_t)c->size * (size_t)ck_array_itemsize(c);
        if (from.type == CK_DEVICE_CPU) s = ck_backend_for(dev)->copy_from_host(dev, out->data, c->data, n);
        else if (dev.type == CK_DEVICE_CPU) s = ck_backend_for(from)->copy_to_host(from, out->data, c->data, n);
        else if (from.type == dev.type && ck_backend_for(dev)->copy_peer)
            s = ck_backend_for(dev)->copy_peer(dev, out->data, from, c->data, n);
        else s = ck_error_set(CK_ERR_NOT_IMPLEMENTED, "copies between these two devices are not implemented");
        if (s != CK_OK) ck_array_release(out);
    }
    if (tmp) ck_array_release(&src);
    return s;
}

ck_status ck_array_copy_async(ck_array *dst, const ck_array *src, ck_stream s)
{
    ck_device dd = ck_array_device(dst), sd = ck_array_device(src);
    if (dst->dtype != src->dtype || dst->size != src->size)
        return ck_error_set(CK_ERR_VALUE, "an asynchronous copy needs arrays of one dtype and size (%s[%lld] and %s[%lld])",
                            ck_dtype_get_info(dst->dtype)->name, (long long)dst->size,
                            ck_dtype_get_info(src->dtype)->name, (long long)src->size);
    if (!(dst->flags & CK_ARRAY_C_CONTIGUOUS) || !(src->flags & CK_ARRAY_C_CONTIGUOUS))
        return ck_error_set(CK_ERR_VALUE, "an asynchronous copy needs C-contiguous arrays");
    if (!(dst->flags & CK_ARRAY_WRITEABLE)) return ck_error_set(CK_ERR_VALUE, "assignment destination is read-only");
    size_t n = (size_t)src->size * (size_t)ck_array_itemsize(src);
    int to_host = dd.type == CK_DEVICE_CPU;
    const ck_array *devarr = to_host ? src : dst;
    ck_device dev = ck_array_device(devarr);
    if (to_host == (sd.type == CK_DEVICE_CPU) && !(dd.type == CK_DEVICE_CPU && sd.type == CK_DEVICE_CPU))
        return ck_error_set(CK_ERR_VALUE, "an asynchronous copy is between a device array and a CPU array");
    const ck_backend_iface *be = ck_backend_require(dev);
    if (!be) return ck_error_status();
    if (n == 0) return CK_OK;
    if (!be->copy_async) {
        ck_status st = ck_graph_refuse(dev, "a copy to or from the host");
        if (st != CK_OK) return st;
        return to_host ? be->copy_to_host(dev, dst->data, src->data, n) : be->copy_from_host(dev, dst->data, src->data, n);
    }
    return be->copy_async(dev, dst->data, src->data, n, to_host, s, devarr->buf ? devarr->buf->ptr : NULL);
}

ck_status ck_array_record_stream(const ck_array *a, ck_stream s)
{
    ck_device dev = ck_array_device(a);
    const ck_backend_iface *be = ck_backend_require(dev);
    if (!be) return ck_error_status();
    if (!be->record_stream || !a->buf || ck_graph_capturing(dev)) return CK_OK;
    return be->record_stream(dev, a->buf->ptr, s);
}
