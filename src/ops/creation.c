/* Array creation: filled arrays, ranges, identity matrices. */
#include "ops_internal.h"

#include <math.h>

ck_status ck_full(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, const ck_scalar *value, ck_device dev)
{
    ck_status s = ck_array_empty(out, ndim, shape, dt, dev);
    if (s != CK_OK) return s;
    s = ck_array_fill(out, value);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_full_scalar(ck_array *out, int ndim, const int64_t *shape, ck_dtype dt, double value, ck_device dev)
{
    ck_scalar v = {CK_FLOAT64, {.f = value}};
    return ck_full(out, ndim, shape, dt, &v, dev);
}

ck_status ck_arange(ck_array *out, double start, double step, int64_t n, ck_dtype dt, ck_device dev)
{
    if (n < 0) n = 0;
    ck_status s = ck_array_empty(out, 1, &n, dt, dev);
    if (s != CK_OK) return s;
    if (n == 0) return CK_OK;
    const ck_backend_iface *be = ck_backend_for(dev);
    s = be->iota(out, start, step);
    if (s != CK_OK) ck_array_release(out);
    return s;
}

ck_status ck_linspace(ck_array *out, double start, double stop, int64_t n, int endpoint, ck_dtype dt, ck_device dev)
{
    if (n < 0) return ck_error_set(CK_ERR_VALUE, "Number of samples, %lld, must be non-negative.", (long long)n);
    int64_t div = endpoint ? n - 1 : n;
    double step = div > 0 ? (stop - start) / (double)div : 0.0;
    ck_status s = ck_arange(out, start, step, n, dt, dev);
    if (s != CK_OK || n == 0) return s;
    if (endpoint && n > 1) {   /* the last point is stop exactly, as NumPy's */
        ck_scalar v = {CK_FLOAT64, {.f = stop}};
        ck_array last;
        ck_array_view(&last, out);
        last.data += (n - 1) * ck_array_itemsize(out);
        last.shape[0] = 1;
        ck_array_update_flags(&last);
        s = ck_array_fill(&last, &v);
        ck_array_release(&last);
    }
    return s;
}

ck_status ck_eye(ck_array *out, int64_t n, int64_t m, int64_t k, ck_dtype dt, ck_device dev)
{
    int64_t shape[2] = {n, m};
    ck_status s = ck_full_scalar(out, 2, shape, dt, 0.0, dev);
    if (s != CK_OK) return s;
    /* the k-th diagonal is a strided 1-d view */
    int64_t isz = ck_array_itemsize(out);
    int64_t r0 = k >= 0 ? 0 : -k, c0 = k >= 0 ? k : 0;
    int64_t len = n - r0 < m - c0 ? n - r0 : m - c0;
    if (len <= 0) return CK_OK;
    ck_array diag;
    ck_array_view(&diag, out);
    diag.data += (r0 * m + c0) * isz;
    int64_t dshape = len, dstride = (m + 1) * isz;
    ck_array_set_layout(&diag, 1, &dshape, &dstride);
    ck_scalar one = {CK_FLOAT64, {.f = 1.0}};
    s = ck_array_fill(&diag, &one);
    ck_array_release(&diag);
    if (s != CK_OK) ck_array_release(out);
    return s;
}
