/*
 * fftsolver.c - the private functions behind ck.fft and ck.linalg on GPU
 * arrays: argument unwrapping around ck_fft_exec and ck_solver_exec
 * (include/cudakit_linalg.h).  python/cudakit/fft.py and linalg.py turn
 * NumPy's semantics (n, axes, norm, modes, row-major layouts) into these
 * calls.
 */
#include "ck_python.h"

/* A CUDA array argument (borrowed). */
static ck_array *cuda_arg(PyObject *obj, const char *fname)
{
    if (!CkArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a cudakit array, got %s", fname, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    ck_array *a = CK_ARR(obj);
    if (ck_array_device(a).type != CK_DEVICE_CUDA) {
        PyErr_Format(PyExc_ValueError, "%s: expected an array on a CUDA device", fname);
        return NULL;
    }
    return a;
}

/* 0 float32, 1 float64, 2 complex64, 3 complex128; -1 and TypeError otherwise. */
static int solver_type(ck_dtype t, const char *fname)
{
    switch (t) {
    case CK_FLOAT32: return 0;
    case CK_FLOAT64: return 1;
    case CK_COMPLEX64: return 2;
    case CK_COMPLEX128: return 3;
    default:
        PyErr_Format(PyExc_TypeError, "%s: unsupported dtype %s", fname, ck_dtype_get_info(t)->name);
        return -1;
    }
}

static ck_dtype real_of(int type) { return type == 0 || type == 2 ? CK_FLOAT32 : CK_FLOAT64; }
static ck_dtype complex_of(int type) { return type == 0 || type == 2 ? CK_COMPLEX64 : CK_COMPLEX128; }

/* A C-contiguous copy of a (which the caller then owns and may overwrite). */
static ck_status fresh_copy(ck_array *out, const ck_array *a)
{
    return ck_array_astype(out, a, a->dtype, 0);
}

static int64_t batch_of(const ck_array *a, int core)
{
    int64_t b = 1;
    for (int i = 0; i < a->ndim - core; i++) b *= a->shape[i];
    return b;
}

/* ----------------------------------------------------------------- FFT */

/* _cuda_fft(x, rank, kind, forward, n_last, disposable=False): the
 * unnormalised transform over the last `rank` axes of x (kind 0 C2C, 1 R2C,
 * 2 C2R; n_last is the real length of the last axis for C2R).  disposable:
 * the caller has no further use for x, which C2R may then overwrite. */
static PyObject *f_cuda_fft(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *xo;
    int rank, kind, forward;
    long long n_last;
    int disposable = 0;
    if (!PyArg_ParseTuple(args, "OiipL|p", &xo, &rank, &kind, &forward, &n_last, &disposable)) return NULL;
    ck_array *x = cuda_arg(xo, "_cuda_fft");
    if (!x) return NULL;
    if (rank < 1 || rank > 3 || rank > x->ndim || kind < 0 || kind > 2) {
        PyErr_Format(PyExc_ValueError, "_cuda_fft: bad rank %d or kind %d for a %d-d array", rank, kind, x->ndim);
        return NULL;
    }
    int t = solver_type(x->dtype, "_cuda_fft");
    if (t < 0) return NULL;
    int is_complex = t >= 2;
    if (is_complex != (kind != CK_FFT_R2C)) {
        PyErr_SetString(PyExc_TypeError, "_cuda_fft: R2C takes real input, C2C and C2R complex input");
        return NULL;
    }
    ck_fft_desc d = {0};
    d.dev = ck_array_device(x);
    d.kind = (ck_fft_kind)kind;
    d.dbl = t == 1 || t == 3;
    d.forward = forward;
    d.rank = rank;
    d.batch = batch_of(x, rank);
    int64_t shape[CK_MAXDIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
    for (int i = 0; i < rank; i++) d.n[i] = x->shape[x->ndim - rank + i];
    ck_dtype out_t = x->dtype;
    if (kind == CK_FFT_R2C) {
        out_t = complex_of(t);
        shape[x->ndim - 1] = d.n[rank - 1] / 2 + 1;
    } else if (kind == CK_FFT_C2R) {
        out_t = real_of(t);
        if (n_last < 1 || x->shape[x->ndim - 1] != n_last / 2 + 1) {
            PyErr_Format(PyExc_ValueError, "_cuda_fft: C2R of length %lld needs %lld complex inputs, not %lld",
                         n_last, n_last / 2 + 1, (long long)x->shape[x->ndim - 1]);
            return NULL;
        }
        d.n[rank - 1] = n_last;
        shape[x->ndim - 1] = n_last;
    }
    ck_array in, out;
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    int contiguous = (x->flags & CK_ARRAY_C_CONTIGUOUS) != 0;
    s = contiguous ? (ck_array_view(&in, x), CK_OK) : fresh_copy(&in, x);
    d.in_disposable = !contiguous || disposable;
    if (s == CK_OK) {
        s = ck_array_empty(&out, x->ndim, shape, out_t, d.dev);
        if (s == CK_OK) {
            d.in = in.data;
            d.out = out.data;
            s = out.size ? ck_fft_exec(&d) : CK_OK;
            if (s != CK_OK) ck_array_release(&out);
        }
        ck_array_release(&in);
    }
    Py_END_ALLOW_THREADS
    return s == CK_OK ? ck_py_wrap(&out, NULL) : ck_py_raise(s);
}

/* ------------------------------------------------------------ cuSOLVER */

/* The first positive info word, 0 when none; a negative one (an argument
 * cuSOLVER rejected) is a CUDAError naming the routine. */
static int check_info(const int32_t *info, int64_t batch, const char *routine, int *first)
{
    *first = 0;
    for (int64_t b = 0; b < batch; b++) {
        if (info[b] < 0) {
            PyErr_Format(ck_py_CUDAError, "%s: argument %d had an illegal value", routine, -info[b]);
            return -1;
        }
        if (info[b] > 0 && !*first) *first = info[b];
    }
    return 0;
}

/* Matrices of the last two axes: shape (..., r, c); a contiguous copy. */
static int matrix_arg(PyObject *obj, const char *fname, ck_array *copy, int *type, int64_t *batch)
{
    ck_array *a = cuda_arg(obj, fname);
    if (!a) return -1;
    if (a->ndim < 2) {
        PyErr_Format(PyExc_ValueError, "%s: expected a stack of matrices", fname);
        return -1;
    }
    if ((*type = solver_type(a->dtype, fname)) < 0) return -1;
    if (a->shape[a->ndim - 1] > 0x7fffffff || a->shape[a->ndim - 2] > 0x7fffffff) {
        PyErr_Format(PyExc_ValueError, "%s: matrix too large for cuSOLVER's 32-bit sizes", fname);
        return -1;
    }
    *batch = batch_of(a, 2);
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = fresh_copy(copy, a);
    Py_END_ALLOW_THREADS
    return s == CK_OK ? 0 : ck_py_raise_int(s);
}

static int32_t *info_buffer(int64_t batch)
{
    int32_t *p = PyMem_Calloc((size_t)(batch > 0 ? batch : 1), sizeof(int32_t));
    if (!p) PyErr_NoMemory();
    return p;
}

/* _cusolver_getrf(a) -> (lu, ipiv, info): a's memory as column-major
 * n x n matrices (the transposes of the row-major ones), LU-factored. */
static PyObject *f_getrf(PyObject *m, PyObject *arg)
{
    (void)m;
    ck_array lu, ipiv;
    int t;
    int64_t batch;
    if (matrix_arg(arg, "getrf", &lu, &t, &batch) < 0) return NULL;
    int n = (int)lu.shape[lu.ndim - 1];
    if (lu.shape[lu.ndim - 2] != n) {
        ck_array_release(&lu);
        PyErr_SetString(PyExc_ValueError, "getrf: matrices must be square");
        return NULL;
    }
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&lu); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_array_empty(&ipiv, lu.ndim - 1, lu.shape, CK_INT32, ck_array_device(&lu));
    if (s == CK_OK) {
        ck_solver_desc d = {.op = CK_SOLVER_GETRF, .dev = ck_array_device(&lu), .type = lu.dtype, .batch = batch,
                            .n = n, .a = lu.data, .ipiv = (int32_t *)ipiv.data, .info_host = info};
        s = ck_solver_exec(&d);
        if (s != CK_OK) ck_array_release(&ipiv);
    }
    Py_END_ALLOW_THREADS
    int first = 0;
    if (s != CK_OK || check_info(info, batch, "getrf", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&lu);
        if (s == CK_OK) ck_array_release(&ipiv);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *lo = ck_py_wrap(&lu, NULL);
    PyObject *po = ck_py_wrap(&ipiv, NULL);
    if (!lo || !po) { Py_XDECREF(lo); Py_XDECREF(po); return NULL; }
    return Py_BuildValue("(NNi)", lo, po, first);
}

/* _cusolver_getrs(lu, ipiv, b, trans) -> x: solves op(M) X = B per item,
 * M the column-major matrix of lu's memory, B column-major n x nrhs (b's
 * memory as (..., nrhs, n)); lu, ipiv and b have the same batch. */
static PyObject *f_getrs(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *luo, *pivo, *bo;
    int trans;
    if (!PyArg_ParseTuple(args, "OOOi", &luo, &pivo, &bo, &trans)) return NULL;
    ck_array *lu = cuda_arg(luo, "getrs"), *piv = cuda_arg(pivo, "getrs");
    if (!lu || !piv) return NULL;
    if (!(lu->flags & CK_ARRAY_C_CONTIGUOUS) || !(piv->flags & CK_ARRAY_C_CONTIGUOUS) || piv->dtype != CK_INT32) {
        PyErr_SetString(PyExc_ValueError, "getrs: lu and ipiv must be getrf's results");
        return NULL;
    }
    ck_array x;
    int t;
    int64_t batch;
    if (matrix_arg(bo, "getrs", &x, &t, &batch) < 0) return NULL;
    int n = (int)x.shape[x.ndim - 1], nrhs = (int)x.shape[x.ndim - 2];
    if (x.dtype != lu->dtype || lu->ndim < 2 || lu->shape[lu->ndim - 1] != n || batch_of(lu, 2) != batch ||
        piv->size != batch * n) {
        ck_array_release(&x);
        PyErr_SetString(PyExc_ValueError, "getrs: operands do not match");
        return NULL;
    }
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&x); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    ck_solver_desc d = {.op = CK_SOLVER_GETRS, .dev = ck_array_device(&x), .type = x.dtype, .batch = batch, .n = n,
                        .nrhs = nrhs, .trans = trans, .a = lu->data, .ipiv = (int32_t *)piv->data, .b = x.data,
                        .info_host = info};
    s = ck_solver_exec(&d);
    Py_END_ALLOW_THREADS
    int first;
    if (s != CK_OK || check_info(info, batch, "getrs", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&x);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    return ck_py_wrap(&x, NULL);
}

/* _cusolver_potrf(a, upper) -> (f, info): Cholesky of the column-major
 * matrices of a's memory, the `upper` triangle read and written (the other
 * keeps a's values). */
static PyObject *f_potrf(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *ao;
    int upper;
    if (!PyArg_ParseTuple(args, "Op", &ao, &upper)) return NULL;
    ck_array f;
    int t;
    int64_t batch;
    if (matrix_arg(ao, "potrf", &f, &t, &batch) < 0) return NULL;
    int n = (int)f.shape[f.ndim - 1];
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&f); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    ck_solver_desc d = {.op = CK_SOLVER_POTRF, .dev = ck_array_device(&f), .type = f.dtype, .batch = batch, .n = n,
                        .upper = upper, .a = f.data, .info_host = info};
    s = ck_solver_exec(&d);
    Py_END_ALLOW_THREADS
    int first;
    if (s != CK_OK || check_info(info, batch, "potrf", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&f);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *fo = ck_py_wrap(&f, NULL);
    return fo ? Py_BuildValue("(Ni)", fo, first) : NULL;
}

/* _cusolver_geqrf(a) -> (h, tau): a's memory (..., n, m) as column-major
 * m x n matrices, replaced by R and the reflectors; tau (..., min(m, n)). */
static PyObject *f_geqrf(PyObject *m_, PyObject *arg)
{
    (void)m_;
    ck_array h, tau;
    int t;
    int64_t batch;
    if (matrix_arg(arg, "geqrf", &h, &t, &batch) < 0) return NULL;
    int m = (int)h.shape[h.ndim - 1], n = (int)h.shape[h.ndim - 2], k = m < n ? m : n;
    int64_t tshape[CK_MAXDIMS];
    for (int i = 0; i < h.ndim - 2; i++) tshape[i] = h.shape[i];
    tshape[h.ndim - 2] = k;
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&h); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_array_empty(&tau, h.ndim - 1, tshape, h.dtype, ck_array_device(&h));
    if (s == CK_OK) {
        ck_solver_desc d = {.op = CK_SOLVER_GEQRF, .dev = ck_array_device(&h), .type = h.dtype, .batch = batch,
                            .m = m, .n = n, .a = h.data, .tau = tau.data, .info_host = info};
        s = ck_solver_exec(&d);
        if (s != CK_OK) ck_array_release(&tau);
    }
    Py_END_ALLOW_THREADS
    int first;
    if (s != CK_OK || check_info(info, batch, "geqrf", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&h);
        if (s == CK_OK) ck_array_release(&tau);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *ho = ck_py_wrap(&h, NULL), *to = ck_py_wrap(&tau, NULL);
    if (!ho || !to) { Py_XDECREF(ho); Py_XDECREF(to); return NULL; }
    return Py_BuildValue("(NN)", ho, to);
}

/* _cusolver_orgqr(q, tau) -> Q: q's memory (..., ncols, m) as column-major
 * m x ncols matrices whose first k = tau.shape[-1] columns hold geqrf's
 * reflectors; the result holds the first ncols columns of Q. */
static PyObject *f_orgqr(PyObject *m_, PyObject *args)
{
    (void)m_;
    PyObject *qo, *to;
    if (!PyArg_ParseTuple(args, "OO", &qo, &to)) return NULL;
    ck_array *tau = cuda_arg(to, "orgqr");
    if (!tau) return NULL;
    ck_array q;
    int t;
    int64_t batch;
    if (matrix_arg(qo, "orgqr", &q, &t, &batch) < 0) return NULL;
    int m = (int)q.shape[q.ndim - 1], ncols = (int)q.shape[q.ndim - 2];
    int k = tau->ndim ? (int)tau->shape[tau->ndim - 1] : 0;
    if (!(tau->flags & CK_ARRAY_C_CONTIGUOUS) || tau->dtype != q.dtype || tau->size != batch * k) {
        ck_array_release(&q);
        PyErr_SetString(PyExc_ValueError, "orgqr: tau does not match");
        return NULL;
    }
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&q); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    ck_solver_desc d = {.op = CK_SOLVER_ORGQR, .dev = ck_array_device(&q), .type = q.dtype, .batch = batch, .m = m,
                        .n = ncols, .k = k, .a = q.data, .tau = tau->data, .info_host = info};
    s = ck_solver_exec(&d);
    Py_END_ALLOW_THREADS
    int first;
    if (s != CK_OK || check_info(info, batch, "orgqr", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&q);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    return ck_py_wrap(&q, NULL);
}

/* _cusolver_gesvd(a, job) -> (s, u, vt, info): a's memory (..., n, m) as
 * column-major m x n matrices, m >= n; job 'A', 'S' or 'N'.  u's memory is
 * column-major m x (m or n), shaped (..., m or n, m); vt's column-major
 * n x n, shaped (..., n, n); both None for 'N'. */
static PyObject *f_gesvd(PyObject *m_, PyObject *args)
{
    (void)m_;
    PyObject *ao;
    const char *job;
    if (!PyArg_ParseTuple(args, "Os", &ao, &job)) return NULL;
    if (!job[0] || job[1] || !strchr("ASN", job[0])) {
        PyErr_SetString(PyExc_ValueError, "gesvd: job must be 'A', 'S' or 'N'");
        return NULL;
    }
    ck_array a, sv = {0}, u = {0}, vt = {0};
    int t;
    int64_t batch;
    if (matrix_arg(ao, "gesvd", &a, &t, &batch) < 0) return NULL;
    int m = (int)a.shape[a.ndim - 1], n = (int)a.shape[a.ndim - 2];
    int nd = a.ndim;
    ck_device dev = ck_array_device(&a);
    int64_t shp[CK_MAXDIMS];
    for (int i = 0; i < nd - 2; i++) shp[i] = a.shape[i];
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&a); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    shp[nd - 2] = n;
    s = ck_array_empty(&sv, nd - 1, shp, real_of(t), dev);
    if (s == CK_OK && job[0] != 'N') {
        shp[nd - 2] = job[0] == 'A' ? m : n;
        shp[nd - 1] = m;
        s = ck_array_empty(&u, nd, shp, a.dtype, dev);
        shp[nd - 2] = shp[nd - 1] = n;
        if (s == CK_OK) s = ck_array_empty(&vt, nd, shp, a.dtype, dev);
    }
    if (s == CK_OK) {
        ck_solver_desc d = {.op = CK_SOLVER_GESVD, .dev = dev, .type = a.dtype, .batch = batch, .m = m, .n = n,
                            .job = job[0], .a = a.data, .s = sv.data, .u = u.buf ? u.data : NULL,
                            .vt = vt.buf ? vt.data : NULL, .info_host = info};
        s = ck_solver_exec(&d);
    }
    Py_END_ALLOW_THREADS
    ck_array_release(&a);
    int first = 0;
    if (s != CK_OK || check_info(info, batch, "gesvd", &first) < 0) {
        PyMem_Free(info);
        if (sv.buf) ck_array_release(&sv);
        if (u.buf) ck_array_release(&u);
        if (vt.buf) ck_array_release(&vt);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *so = ck_py_wrap(&sv, NULL);
    PyObject *uo = u.buf ? ck_py_wrap(&u, NULL) : Py_NewRef(Py_None);
    PyObject *vo = vt.buf ? ck_py_wrap(&vt, NULL) : Py_NewRef(Py_None);
    if (!so || !uo || !vo) { Py_XDECREF(so); Py_XDECREF(uo); Py_XDECREF(vo); return NULL; }
    return Py_BuildValue("(NNNi)", so, uo, vo, first);
}

/* _cusolver_syevd(a, vectors, upper) -> (w, v, info): eigen-decomposition
 * of the column-major Hermitian matrices of a's memory (the `upper`
 * triangle read); v's memory holds the eigenvectors as columns (None when
 * not vectors). */
static PyObject *f_syevd(PyObject *m_, PyObject *args)
{
    (void)m_;
    PyObject *ao;
    int vectors, upper;
    if (!PyArg_ParseTuple(args, "Opp", &ao, &vectors, &upper)) return NULL;
    ck_array a, w;
    int t;
    int64_t batch;
    if (matrix_arg(ao, "syevd", &a, &t, &batch) < 0) return NULL;
    int n = (int)a.shape[a.ndim - 1];
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&a); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_array_empty(&w, a.ndim - 1, a.shape, real_of(t), ck_array_device(&a));
    if (s == CK_OK) {
        ck_solver_desc d = {.op = CK_SOLVER_SYEVD, .dev = ck_array_device(&a), .type = a.dtype, .batch = batch,
                            .n = n, .vectors = vectors, .upper = upper, .a = a.data, .w = w.data, .info_host = info};
        s = ck_solver_exec(&d);
        if (s != CK_OK) ck_array_release(&w);
    }
    Py_END_ALLOW_THREADS
    int first;
    if (s != CK_OK || check_info(info, batch, "syevd", &first) < 0) {
        PyMem_Free(info);
        ck_array_release(&a);
        if (s == CK_OK) ck_array_release(&w);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *wo = ck_py_wrap(&w, NULL);
    PyObject *vo;
    if (vectors) {
        vo = ck_py_wrap(&a, NULL);
    } else {
        ck_array_release(&a);
        vo = Py_NewRef(Py_None);
    }
    if (!wo || !vo) { Py_XDECREF(wo); Py_XDECREF(vo); return NULL; }
    return Py_BuildValue("(NNi)", wo, vo, first);
}

/* _cusolver_geev(a, vectors) -> (w, vr, info): eigenvalues (complex) and
 * right eigenvectors of the column-major matrices of a's memory; vr's
 * memory holds them as columns, packed as LAPACK packs them for real a
 * (None when not vectors). */
static PyObject *f_geev(PyObject *m_, PyObject *args)
{
    (void)m_;
    PyObject *ao;
    int vectors;
    if (!PyArg_ParseTuple(args, "Op", &ao, &vectors)) return NULL;
    ck_array a, w = {0}, vr = {0};
    int t;
    int64_t batch;
    if (matrix_arg(ao, "geev", &a, &t, &batch) < 0) return NULL;
    int n = (int)a.shape[a.ndim - 1];
    if (a.shape[a.ndim - 2] != n) {
        ck_array_release(&a);
        PyErr_SetString(PyExc_ValueError, "geev: matrices must be square");
        return NULL;
    }
    ck_device dev = ck_array_device(&a);
    int32_t *info = info_buffer(batch);
    if (!info) { ck_array_release(&a); return NULL; }
    ck_status s;
    Py_BEGIN_ALLOW_THREADS
    s = ck_array_empty(&w, a.ndim - 1, a.shape, complex_of(t), dev);
    if (s == CK_OK && vectors) s = ck_array_empty(&vr, a.ndim, a.shape, a.dtype, dev);
    if (s == CK_OK) {
        ck_solver_desc d = {.op = CK_SOLVER_GEEV, .dev = dev, .type = a.dtype, .batch = batch, .n = n, .a = a.data,
                            .w = w.data, .vr = vectors ? vr.data : NULL, .info_host = info};
        s = ck_solver_exec(&d);
    }
    Py_END_ALLOW_THREADS
    ck_array_release(&a);
    int first = 0;
    if (s != CK_OK || check_info(info, batch, "geev", &first) < 0) {
        PyMem_Free(info);
        if (w.buf) ck_array_release(&w);
        if (vr.buf) ck_array_release(&vr);
        return s != CK_OK ? ck_py_raise(s) : NULL;
    }
    PyMem_Free(info);
    PyObject *wo = ck_py_wrap(&w, NULL);
    PyObject *vo = vr.buf ? ck_py_wrap(&vr, NULL) : Py_NewRef(Py_None);
    if (!wo || !vo) { Py_XDECREF(wo); Py_XDECREF(vo); return NULL; }
    return Py_BuildValue("(NNi)", wo, vo, first);
}

PyMethodDef ck_py_fftsolver_functions[] = {
    CK_DEF_VARARGS(_cuda_fft, f_cuda_fft, "(x, rank, kind, forward, n_last, disposable=False, /)",
                   "cuFFT transform over the last rank axes (private)."),
    CK_DEF_O(_cusolver_getrf, f_getrf, "(a, /)", "cuSOLVER LU factorisation (private)."),
    CK_DEF_VARARGS(_cusolver_getrs, f_getrs, "(lu, pivots, b, trans, /)", "cuSOLVER solve from an LU factorisation (private)."),
    CK_DEF_VARARGS(_cusolver_potrf, f_potrf, "(a, upper, /)", "cuSOLVER Cholesky factorisation (private)."),
    CK_DEF_O(_cusolver_geqrf, f_geqrf, "(a, /)", "cuSOLVER QR factorisation (private)."),
    CK_DEF_VARARGS(_cusolver_orgqr, f_orgqr, "(q, tau, /)", "cuSOLVER Q of a QR factorisation (private)."),
    CK_DEF_VARARGS(_cusolver_gesvd, f_gesvd, "(a, job, /)", "cuSOLVER singular value decomposition (private)."),
    CK_DEF_VARARGS(_cusolver_syevd, f_syevd, "(a, vectors, upper, /)", "cuSOLVER Hermitian eigen-decomposition (private)."),
    CK_DEF_VARARGS(_cusolver_geev, f_geev, "(a, vectors, /)", "cuSOLVER general eigen-decomposition (private)."),
    {NULL, NULL, 0, NULL},
};
