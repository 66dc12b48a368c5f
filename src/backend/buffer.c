/* Buffers (reference-counted device memory, from the device's backend)
 * and the arrays made on them. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

/* A buffer from a device allocator keeps its header in a small malloc; CPU
 * memory of modest size shares one allocation with the header so that a
 * small array costs one malloc. */
#define CK_INLINE_MAX 4096
#define CK_HDR ((sizeof(ck_buffer) + 63) & ~(size_t)63)

ck_buffer *ck_buffer_alloc(ck_device dev, size_t nbytes)
{
    ck_buffer *b;
    if (dev.type == CK_DEVICE_CPU && nbytes <= CK_INLINE_MAX) {
        b = aligned_alloc(64, CK_HDR + ((nbytes + 63) & ~(size_t)63));
        if (!b) { ck_error_set(CK_ERR_MEMORY, "failed to allocate %zu bytes", nbytes); return NULL; }
        b->ptr = (char *)b + CK_HDR;
        b->release = (ck_release_fn)0;
        b->release_ctx = b;   /* marks inline storage */
        ck_cpu_mem_note((int64_t)nbytes);
    } else {
        const ck_backend_iface *be = ck_backend_require(dev);
        if (!be) return NULL;
        b = malloc(sizeof *b);
        if (!b) { ck_error_set(CK_ERR_MEMORY, "failed to allocate %zu bytes", sizeof *b); return NULL; }
        b->ptr = be->alloc(dev, nbytes);
        if (!b->ptr) { free(b); return NULL; }
        b->release = NULL;
        b->release_ctx = NULL;
    }
    b->refcount = 1;
    b->device = dev;
    b->nbytes = nbytes;
    b->readonly = 0;
    b->version = 0;
    return b;
}

ck_buffer *ck_buffer_wrap(ck_device dev, void *ptr, size_t nbytes, int readonly,
                          ck_release_fn release, void *ctx)
{
    ck_buffer *b = malloc(sizeof *b);
    if (!b) { ck_error_set(CK_ERR_MEMORY, "failed to allocate a buffer header"); return NULL; }
    b->refcount = 1;
    b->device = dev;
    b->ptr = ptr;
    b->nbytes = nbytes;
    b->release = release;
    b->release_ctx = ctx;
    b->readonly = readonly;
    b->version = 0;
    return b;
}

void ck_buffer_retain(ck_buffer *b)
{
    __atomic_add_fetch(&b->refcount, 1, __ATOMIC_RELAXED);
}

void ck_buffer_release(ck_buffer *b)
{
    if (!b || __atomic_sub_fetch(&b->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (b->release) {
        b->release(b->release_ctx);
        free(b);
    } else if (b->release_ctx == b) {
        ck_cpu_mem_note(-(int64_t)b->nbytes);
        free(b);  /* inline storage */
    } else {
        ck_backend_for(b->device)->free(b->device, b->ptr, b->nbytes);
        free(b);
    }
}

ck_status ck_array_empty(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, ck_device dev)
{
    if (ndim < 0 || ndim > CK_MAXDIMS)
        return ck_error_set(CK_ERR_VALUE, "maximum supported dimension for an ndarray is %d, found %d",
                            CK_MAXDIMS, ndim);
    int64_t n = ck_shape_size(ndim, shape);
    if (n < 0) {
        for (int i = 0; i < ndim; i++)
            if (shape[i] < 0) return ck_error_set(CK_ERR_VALUE, "negative dimensions are not allowed");
        return ck_error_set(CK_ERR_VALUE, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
    }
    int64_t isz = ck_dtype_get_info(dt)->itemsize, nbytes;
    if (__builtin_mul_overflow(n, isz, &nbytes) || nbytes > ((int64_t)1 << 60))
        return ck_error_set(CK_ERR_VALUE, "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
    ck_buffer *b = ck_buffer_alloc(dev, (size_t)(nbytes ? nbytes : 1));
    if (!b) return ck_error_status();
    out->buf = b;
    out->data = b->ptr;
    out->dtype = dt;
    out->ndim = ndim;
    out->flags = CK_ARRAY_WRITEABLE | CK_ARRAY_OWNDATA | CK_ARRAY_C_CONTIGUOUS;
    out->size = n;
    for (int i = 0; i < ndim; i++) out->shape[i] = shape[i];
    ck_strides_c(ndim, shape, isz, out->strides);
    int big = 0;  /* C order is also F order when at most one dim exceeds 1 */
    for (int i = 0; i < ndim; i++) big += shape[i] > 1;
    if (big <= 1 || n == 0) out->flags |= CK_ARRAY_F_CONTIGUOUS;
    return CK_OK;
}

void ck_array_view(ck_array *out, const ck_array *a)
{
    if (out != a) {
        out->buf = a->buf;
        out->data = a->data;
        out->dtype = a->dtype;
        out->ndim = a->ndim;
        out->flags = a->flags & ~CK_ARRAY_OWNDATA;
        out->size = a->size;
        memcpy(out->shape, a->shape, (size_t)a->ndim * sizeof *a->shape);
        memcpy(out->strides, a->strides, (size_t)a->ndim * sizeof *a->strides);
    }
    ck_buffer_retain(a->buf);
}

void ck_array_release(ck_array *a)
{
    if (a->buf) ck_buffer_release(a->buf);
    a->buf = NULL;
}
