/* User kernels built from pieces of code (ElementwiseKernel,
 * ReductionKernel, ck.fuse) as CUDA C text, and their launch layouts. */
#include "cudakit_kernelgen.h"
#include "cuda_codegen.h"
#include "../array/layout.h"
#include "../runtime/cpu_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The generated code's helpers: CUDA C in the subset the CPU target supports. */
static const char helpers_[] =
    "\n"
    "struct ck_ind_t {\n"
    "    long long n_; const long long *c_;\n"
    "    __device__ long long size() const { return n_; }\n"
    "    __device__ const long long *get() const { return c_; }\n"
    "};\n"
    "template <typename T, typename P = T *> struct ck_raw_t {\n"
    "    P p_; long long n_;\n"
    "    __device__ T &operator[](long long k) const { return p_[k]; }\n"
    "    __device__ long long size() const { return n_; }\n"
    "};\n"
    "template <typename T> __device__ __forceinline__ T &ck_elem(T *p, long long off) { return *(T *)((char *)p + off); }\n";

/* complex<T> for kernels with complex parameters (neither target has one built in) */
static const char complex_helpers_[] =
    "\n"
    "template <typename T> struct complex {\n"
    "    T re_, im_;\n"
    "    __device__ complex() : re_(0), im_(0) {}\n"
    "    __device__ complex(T r) : re_(r), im_(0) {}\n"
    "    __device__ complex(T r, T i) : re_(r), im_(i) {}\n"
    "    template <typename U> __device__ complex(const complex<U> &o) : re_((T)o.re_), im_((T)o.im_) {}\n"
    "    __device__ T real() const { return re_; }\n"
    "    __device__ T imag() const { return im_; }\n"
    "};\n"
    "template <typename T> __device__ complex<T> operator+(complex<T> a, complex<T> b) { return complex<T>(a.re_ + b.re_, a.im_ + b.im_); }\n"
    "template <typename T> __device__ complex<T> operator-(complex<T> a, complex<T> b) { return complex<T>(a.re_ - b.re_, a.im_ - b.im_); }\n"
    "template <typename T> __device__ complex<T> operator-(complex<T> a) { return complex<T>(-a.re_, -a.im_); }\n"
    "template <typename T> __device__ complex<T> operator*(complex<T> a, complex<T> b) { return complex<T>(a.re_ * b.re_ - a.im_ * b.im_, a.re_ * b.im_ + a.im_ * b.re_); }\n"
    "template <typename T> __device__ complex<T> operator/(complex<T> a, complex<T> b) {\n"
    "    T d = b.re_ * b.re_ + b.im_ * b.im_;\n"
    "    return complex<T>((a.re_ * b.re_ + a.im_ * b.im_) / d, (a.im_ * b.re_ - a.re_ * b.im_) / d);\n"
    "}\n"
    "template <typename T> __device__ bool operator==(complex<T> a, complex<T> b) { return a.re_ == b.re_ && a.im_ == b.im_; }\n"
    "template <typename T> __device__ bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }\n"
    "template <typename T> __device__ T real(complex<T> a) { return a.re_; }\n"
    "template <typename T> __device__ T imag(complex<T> a) { return a.im_; }\n"
    "template <typename T> __device__ complex<T> conj(complex<T> a) { return complex<T>(a.re_, -a.im_); }\n"
    "template <typename T> __device__ T abs(complex<T> a) { return sqrt(a.re_ * a.re_ + a.im_ * a.im_); }\n";

/* ------------------------------------------------------------- types */

const char *ck_ukernel_ctype(ck_dtype t)
{
    int sz = ck_dtype_get_info(t)->itemsize;
    switch (ck_cuda_kind_letter(t)) {
    case 'B': return "bool";
    case 'I': return sz == 1 ? "signed char" : sz == 2 ? "short" : sz == 4 ? "int" : "long long";
    case 'U': return sz == 1 ? "unsigned char" : sz == 2 ? "unsigned short" : sz == 4 ? "unsigned int" : "unsigned long long";
    case 'C': return sz == 8 ? "complex<float>" : "complex<double>";
    default:
        if (sz == 4) return "float";
        if (sz == 8) return "double";
        ck_error_set(CK_ERR_NOT_IMPLEMENTED, "float16 in generated kernels is not supported yet (use float32)");
        return NULL;
    }
}

/* One table of C type spellings for every reading of kernel source: the
 * scanner's (ck_kernel_signature reads signatures with it). */
ck_dtype ck_ukernel_dtype_of_ctype(const char *name) { return ck_cpu_ctype_dtype(name); }

/* Names pasted into the source must be identifiers (a name such as
 * "e1(){} extern \"C\" __global__ void e2" would add code). */
static int is_identifier(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static int check_names(const char *name, int n, const ck_ukernel_param *ps)
{
    if (!is_identifier(name)) {
        ck_error_set(CK_ERR_VALUE, "kernel name '%s' is not an identifier (letters, digits and _, not starting with "
                     "a digit)", name ? name : "(null)");
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (!is_identifier(ps[k].name) || (ps[k].placeholder && !is_identifier(ps[k].placeholder))) {
            ck_error_set(CK_ERR_VALUE, "kernel %s: parameter %d's %s '%s' is not an identifier", name, k,
                         is_identifier(ps[k].name) ? "type" : "name",
                         is_identifier(ps[k].name) ? ps[k].placeholder : ps[k].name ? ps[k].name : "(null)");
            return -1;
        }
    return 0;
}

static int has_text(const char *s) { return s && *s; }

/* The C types of the parameters (NULL with an error for float16), and
 * whether any is complex. */
static int param_types(int n, const ck_ukernel_param *ps, const char **ct, int *complex_)
{
    *complex_ = 0;
    for (int k = 0; k < n; k++) {
        if (!(ct[k] = ck_ukernel_ctype(ps[k].dtype))) return -1;
        *complex_ |= ck_dtype_is_complex(ps[k].dtype);
    }
    return 0;
}

/* The helpers, a typedef per placeholder (its first binding) and the preamble. */
static void prologue(ck_sbuf *b, int n, const ck_ukernel_param *ps, const char **ct, int complex_,
                     const char *reduce_type, const char *preamble)
{
    if (complex_) ck_sbuf_printf(b, "%s\n", complex_helpers_);
    ck_sbuf_printf(b, "%s", helpers_);
    for (int k = 0; k < n; k++) {
        if (!ps[k].placeholder) continue;
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = ps[j].placeholder && !strcmp(ps[j].placeholder, ps[k].placeholder);
        if (!seen) ck_sbuf_printf(b, "\ntypedef %s %s;", ct[k], ps[k].placeholder);
    }
    if (reduce_type) ck_sbuf_printf(b, "\ntypedef %s _type_reduce;", reduce_type);
    if (has_text(preamble)) ck_sbuf_printf(b, "\n%s", preamble);
}

/* A statement from user code: surrounding blanks and trailing semicolons
 * dropped, one semicolon put back. */
static void statement(ck_sbuf *b, const char *code)
{
    const char *s = code, *e = code + strlen(code);
    while (s < e && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) s++;
    while (e > s && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r'))) e--;
    while (e > s && e[-1] == ';') e--;
    ck_sbuf_printf(b, "%.*s;", (int)(e - s), s);
}

/* The parameter list from the argument list. */
static void signature(ck_sbuf *b, const char *name, const ck_ukernel_param *ps, const char **ct, int nargs,
                      const ck_ukernel_arg *args, int reduction)
{
    ck_sbuf_printf(b, "\nextern \"C\" __global__ void %s(", name);
    for (int i = 0; i < nargs; i++) {
        const ck_ukernel_arg *a = &args[i];
        const char *sep = i ? ", " : "", *nm = ps[a->param].name;
        char io = a->inner ? 'i' : 'o';
        switch (a->kind) {
        case CK_UKA_COUNT:
            ck_sbuf_printf(b, "%slong long %s", sep, !reduction ? "_n" : a->dim ? "_nred" : "_nout");
            break;
        case CK_UKA_SHAPE:
            if (reduction) ck_sbuf_printf(b, "%slong long _%csh%d", sep, io, a->dim);
            else ck_sbuf_printf(b, "%slong long _sh%d", sep, a->dim);
            break;
        case CK_UKA_VALUE: ck_sbuf_printf(b, "%s%s %s", sep, ct[a->param], nm); break;
        case CK_UKA_POINTER: ck_sbuf_printf(b, "%s%s *_p_%s", sep, ct[a->param], nm); break;
        case CK_UKA_SIZE: ck_sbuf_printf(b, "%slong long _n_%s", sep, nm); break;
        default:
            if (reduction) ck_sbuf_printf(b, "%slong long _%cs%d_%d", sep, io, a->param, a->dim);
            else ck_sbuf_printf(b, "%slong long _st%d_%d", sep, a->param, a->dim);
        }
    }
    ck_sbuf_printf(b, ")\n{\n");
}

static ck_status bad_spec(const char *what, int nparams, int ndim)
{
    return ck_error_set(CK_ERR_VALUE, "%s: %d parameters (at most %d), %d dims (at most %d)", what, nparams,
                        CK_UKERNEL_MAXPARAMS, ndim, CK_MAXDIMS);
}

static void arg(ck_ukernel_arg *args, int *n, int kind, int inner, int param, int dim)
{
    ck_ukernel_arg a = {(uint8_t)kind, (uint8_t)inner, (uint8_t)param, (uint8_t)dim};
    args[(*n)++] = a;
}

/* ----------------------------------------------------- element-wise */

int ck_ukernel_ew_args(const ck_ukernel_ew_spec *sp, ck_ukernel_arg *args)
{
    int n = 0;
    arg(args, &n, CK_UKA_COUNT, 0, 0, 0);
    for (int d = 0; d < sp->ndim; d++) arg(args, &n, CK_UKA_SHAPE, 0, 0, d);
    for (int k = 0; k < sp->nin + sp->nout; k++) {
        int kind = sp->params[k].kind;
        if (kind == CK_UKP_SCALAR) {
            arg(args, &n, CK_UKA_VALUE, 0, k, 0);
            continue;
        }
        arg(args, &n, CK_UKA_POINTER, 0, k, 0);
        if (kind == CK_UKP_RAW) arg(args, &n, CK_UKA_SIZE, 0, k, 0);
        else if (!sp->contig)
            for (int d = 0; d < sp->ndim; d++) arg(args, &n, CK_UKA_STRIDE, 0, k, d);
    }
    return n;
}

char *ck_ukernel_ew_source(const ck_ukernel_ew_spec *sp)
{
    int np = sp->nin + sp->nout, D = sp->ndim;
    if (np > CK_UKERNEL_MAXPARAMS || D > CK_MAXDIMS || 1 + D + np * (D + 1) > CK_UKERNEL_MAXARGS) {
        bad_spec(sp->name, np, D);
        return NULL;
    }
    const char *ct[CK_UKERNEL_MAXPARAMS];
    int cplx;
    if (check_names(sp->name, np, sp->params) < 0 || param_types(np, sp->params, ct, &cplx) < 0) return NULL;
    ck_ukernel_arg args[CK_UKERNEL_MAXARGS];
    int nargs = ck_ukernel_ew_args(sp, args);
    ck_sbuf b = {0};
    prologue(&b, np, sp->params, ct, cplx, NULL, sp->preamble);
    signature(&b, sp->name, sp->params, ct, nargs, args, 0);
    if (has_text(sp->loop_prep)) ck_sbuf_printf(&b, "    %s\n", sp->loop_prep);
    ck_sbuf_printf(&b, "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n; "
                       "i += (long long)blockDim.x * gridDim.x) {\n");
    if ((!sp->contig || sp->uses_ind) && D) {
        ck_sbuf_printf(&b, "        long long _c[%d];\n        { long long _r = i;\n", D);
        for (int d = D - 1; d >= 0; d--) ck_sbuf_printf(&b, "          _c[%d] = _r %% _sh%d; _r /= _sh%d;\n", d, d, d);
        ck_sbuf_printf(&b, "        }\n        ck_ind_t _ind = {_n, _c};\n");
    } else {
        ck_sbuf_printf(&b, "        long long _c0 = i; ck_ind_t _ind = {_n, &_c0};\n");
    }
    for (int k = 0; k < np; k++) {
        const ck_ukernel_param *p = &sp->params[k];
        if (p->kind == CK_UKP_RAW) {
            ck_sbuf_printf(&b, "        ck_raw_t<%s, decltype(_p_%s)> %s = {_p_%s, _n_%s};\n", ct[k], p->name, p->name,
                           p->name, p->name);
            continue;
        }
        if (p->kind != CK_UKP_ARRAY) continue;
        if (k >= sp->nin) ck_sbuf_printf(&b, "        %s &%s = ", ct[k], p->name);
        else ck_sbuf_printf(&b, "        const %s %s = ", ct[k], p->name);
        if (sp->contig) {
            ck_sbuf_printf(&b, "_p_%s[i];\n", p->name);
            continue;
        }
        ck_sbuf_printf(&b, "ck_elem(_p_%s, ", p->name);
        for (int d = 0; d < D; d++) ck_sbuf_printf(&b, "%s_c[%d] * _st%d_%d", d ? " + " : "", d, k, d);
        ck_sbuf_printf(&b, "%s);\n", D ? "" : "0");
    }
    ck_sbuf_printf(&b, "        (void)_ind;\n        ");
    statement(&b, sp->operation);
    ck_sbuf_printf(&b, "\n    }\n");
    if (has_text(sp->after_loop)) ck_sbuf_printf(&b, "    %s\n", sp->after_loop);
    ck_sbuf_printf(&b, "}\n");
    return ck_sbuf_finish(&b);
}

/* -------------------------------------------------------- reductions */

int ck_ukernel_red_args(const ck_ukernel_red_spec *sp, ck_ukernel_arg *args)
{
    int n = 0;
    arg(args, &n, CK_UKA_COUNT, 0, 0, 0);
    arg(args, &n, CK_UKA_COUNT, 0, 0, 1);
    for (int d = 0; d < sp->nouter; d++) arg(args, &n, CK_UKA_SHAPE, 0, 0, d);
    for (int d = 0; d < sp->ninner; d++) arg(args, &n, CK_UKA_SHAPE, 1, 0, d);
    for (int k = 0; k <= sp->nin; k++) {
        int kind = sp->params[k].kind;
        if (kind == CK_UKP_SCALAR) {
            arg(args, &n, CK_UKA_VALUE, 0, k, 0);
            continue;
        }
        arg(args, &n, CK_UKA_POINTER, 0, k, 0);
        if (kind == CK_UKP_RAW) {
            arg(args, &n, CK_UKA_SIZE, 0, k, 0);
            continue;
        }
        for (int d = 0; d < sp->nouter; d++) arg(args, &n, CK_UKA_STRIDE, 0, k, d);
        if (k < sp->nin)
            for (int d = 0; d < sp->ninner; d++) arg(args, &n, CK_UKA_STRIDE, 1, k, d);
    }
    return n;
}

/* Offsets of every array parameter (prefix + k) along one loop (var over
 * the dims of `which`, 'o' or 'i'), the last dim fastest. */
static void offsets(ck_sbuf *b, const ck_ukernel_red_spec *sp, const char *var, int nd, const char *prefix, char which)
{
    ck_sbuf_printf(b, "{ long long _r = %s;", var);
    for (int d = nd - 1; d >= 0; d--) {
        ck_sbuf_printf(b, "\n              { long long _cc = _r %% _%csh%d; _r /= _%csh%d; ", which, d, which, d);
        int first = 1;
        for (int k = 0; k <= sp->nin; k++) {
            if (sp->params[k].kind != CK_UKP_ARRAY || (which == 'i' && k >= sp->nin)) continue;
            ck_sbuf_printf(b, "%s%s%d += _cc * _%cs%d_%d;", first ? "" : " ", prefix, k, which, k, d);
            first = 0;
        }
        ck_sbuf_printf(b, " }");
    }
    ck_sbuf_printf(b, "\n            }\n");
}

char *ck_ukernel_red_source(const ck_ukernel_red_spec *sp)
{
    int np = sp->nin + 1;
    if (np > CK_UKERNEL_MAXPARAMS || sp->nouter > CK_MAXDIMS || sp->ninner > CK_MAXDIMS ||
        2 + sp->nouter + sp->ninner + np * (sp->nouter + sp->ninner + 1) > CK_UKERNEL_MAXARGS) {
        bad_spec(sp->name, np, sp->nouter + sp->ninner);
        return NULL;
    }
    const char *ct[CK_UKERNEL_MAXPARAMS];
    int cplx;
    if (check_names(sp->name, np, sp->params) < 0 || param_types(np, sp->params, ct, &cplx) < 0) return NULL;
    cplx |= !strncmp(sp->reduce_type, "complex", 7);
    ck_ukernel_arg args[CK_UKERNEL_MAXARGS];
    int nargs = ck_ukernel_red_args(sp, args);
    const int B = 256, has_id = sp->identity != NULL;
    const ck_ukernel_param *out = &sp->params[sp->nin];
    ck_sbuf b = {0};
    prologue(&b, np, sp->params, ct, cplx, sp->reduce_type, sp->preamble);
    ck_sbuf_printf(&b, "\n__device__ __forceinline__ _type_reduce _ck_combine(const _type_reduce &a, const _type_reduce &b)"
                       " { return (%s); }", sp->reduce_expr);
    signature(&b, sp->name, sp->params, ct, nargs, args, 1);
    if (sp->block) {
        ck_sbuf_printf(&b, "    __shared__ _type_reduce _sdata[%d];\n", B);
        if (!has_id) ck_sbuf_printf(&b, "    __shared__ bool _shas[%d];\n", B);
        ck_sbuf_printf(&b, "    for (long long _o = blockIdx.x; _o < _nout; _o += gridDim.x) {\n");
    } else {
        ck_sbuf_printf(&b, "    for (long long _o = (long long)blockIdx.x * blockDim.x + threadIdx.x; _o < _nout; "
                           "_o += (long long)blockDim.x * gridDim.x) {\n");
    }
    ck_sbuf_printf(&b, "        ");
    int first = 1;
    for (int k = 0; k < np; k++) {
        if (sp->params[k].kind != CK_UKP_ARRAY) continue;
        ck_sbuf_printf(&b, "%slong long _oo%d = 0;", first ? "" : " ", k);
        first = 0;
    }
    ck_sbuf_printf(&b, "\n        ");
    offsets(&b, sp, "_o", sp->nouter, "_oo", 'o');
    if (has_id) ck_sbuf_printf(&b, "        _type_reduce _acc = (%s);\n", sp->identity);
    else ck_sbuf_printf(&b, "        _type_reduce _acc; bool _has = false;\n");
    ck_sbuf_printf(&b, "        %s {\n            ", sp->block ? "for (long long _j = threadIdx.x; _j < _nred; _j += blockDim.x)"
                                                               : "for (long long _j = 0; _j < _nred; _j++)");
    first = 1;
    for (int k = 0; k < sp->nin; k++) {
        if (sp->params[k].kind != CK_UKP_ARRAY) continue;
        ck_sbuf_printf(&b, "%slong long _io%d = _oo%d;", first ? "" : " ", k, k);
        first = 0;
    }
    ck_sbuf_printf(&b, "\n            ");
    offsets(&b, sp, "_j", sp->ninner, "_io", 'i');
    for (int k = 0; k < sp->nin; k++) {
        const ck_ukernel_param *p = &sp->params[k];
        if (p->kind == CK_UKP_ARRAY)
            ck_sbuf_printf(&b, "            const %s %s = ck_elem(_p_%s, _io%d);\n", ct[k], p->name, p->name, k);
        else if (p->kind == CK_UKP_RAW)
            ck_sbuf_printf(&b, "            ck_raw_t<%s, decltype(_p_%s)> %s = {_p_%s, _n_%s};\n", ct[k], p->name,
                           p->name, p->name, p->name);
    }
    ck_sbuf_printf(&b, "            _type_reduce _v = (%s);\n", sp->map_expr);
    if (has_id) ck_sbuf_printf(&b, "            _acc = _ck_combine(_acc, _v);\n");
    else ck_sbuf_printf(&b, "            _acc = _has ? _ck_combine(_acc, _v) : _v; _has = true;\n");
    ck_sbuf_printf(&b, "        }\n");
    if (sp->block) {
        ck_sbuf_printf(&b, "        _sdata[threadIdx.x] = _acc;\n");
        if (!has_id) ck_sbuf_printf(&b, "        _shas[threadIdx.x] = _has;\n");
        ck_sbuf_printf(&b, "        __syncthreads();\n"
                           "        for (unsigned _s = blockDim.x / 2; _s > 0; _s >>= 1) {\n"
                           "            if (threadIdx.x < _s) {\n");
        if (has_id)
            ck_sbuf_printf(&b, "                _sdata[threadIdx.x] = _ck_combine(_sdata[threadIdx.x], "
                               "_sdata[threadIdx.x + _s]);\n");
        else
            ck_sbuf_printf(&b, "                if (_shas[threadIdx.x + _s]) { _sdata[threadIdx.x] = _shas[threadIdx.x] ? "
                               "_ck_combine(_sdata[threadIdx.x], _sdata[threadIdx.x + _s]) : _sdata[threadIdx.x + _s]; "
                               "_shas[threadIdx.x] = true; }\n");
        ck_sbuf_printf(&b, "            }\n            __syncthreads();\n        }\n"
                           "        if (threadIdx.x == 0) {\n            _type_reduce a = _sdata[0];\n");
    } else {
        ck_sbuf_printf(&b, "        {\n            _type_reduce a = _acc;\n");
    }
    ck_sbuf_printf(&b, "            %s &%s = ck_elem(_p_%s, _oo%d);\n", ct[sp->nin], out->name, out->name, sp->nin);
    for (int k = 0; k < sp->nin; k++) {
        const ck_ukernel_param *p = &sp->params[k];
        if (p->kind == CK_UKP_RAW)
            ck_sbuf_printf(&b, "            ck_raw_t<%s, decltype(_p_%s)> %s = {_p_%s, _n_%s};\n", ct[k], p->name,
                           p->name, p->name, p->name);
    }
    ck_sbuf_printf(&b, "            (void)a;\n            ");
    statement(&b, sp->post_map_expr);
    ck_sbuf_printf(&b, "\n        }\n");
    if (sp->block) ck_sbuf_printf(&b, "        __syncthreads();\n");
    ck_sbuf_printf(&b, "    }\n}\n");
    return ck_sbuf_finish(&b);
}

/* ----------------------------------------------------------- layouts */

/* One loop over n operands broadcast to (ndim, shape), C order, merged or
 * as it is; the dims of ck_layout_merge come innermost first. */
static void loop_of(int n, const ck_iter_operand *ops, int ndim, const int64_t *shape, int merge, ck_ukernel_loop *loop,
                    int64_t (*strides)[CK_MAXDIMS])
{
    loop->size = 1;
    for (int d = 0; d < ndim; d++) loop->size *= shape[d];
    loop->contig = 0;
    if (!merge) {
        loop->ndim = ndim;
        for (int d = 0; d < ndim; d++) {
            loop->shape[d] = shape[d];
            for (int k = 0; k < n; k++) {
                int j = d - (ndim - ops[k].ndim);
                strides[k][d] = (j < 0 || ops[k].shape[j] == 1) ? 0 : ops[k].strides[j];
            }
        }
        return;
    }
    int64_t msh[CK_MAXDIMS];
    int m = ck_layout_merge(n, ndim, shape, ops, 0, msh, &strides[0][0]);
    loop->ndim = m;
    for (int d = 0; d < m; d++) loop->shape[d] = msh[m - 1 - d];
    for (int k = 0; k < n; k++)
        for (int d = 0; d < m / 2; d++) {
            int64_t t = strides[k][d];
            strides[k][d] = strides[k][m - 1 - d];
            strides[k][m - 1 - d] = t;
        }
}

void ck_ukernel_ew_layout(int narr, const ck_array *const *arrs, int ndim, const int64_t *shape, int merge,
                          int allow_contig, ck_ukernel_loop *loop, int64_t (*strides)[CK_MAXDIMS])
{
    int contig = allow_contig;
    for (int k = 0; k < narr && contig; k++) {
        const ck_array *a = arrs[k];
        contig = (a->flags & CK_ARRAY_C_CONTIGUOUS) && a->ndim == ndim &&
                 !memcmp(a->shape, shape, (size_t)ndim * sizeof *shape);
    }
    if (contig) {
        loop->size = ck_shape_size(ndim, shape);
        loop->ndim = 1;
        loop->contig = 1;
        loop->shape[0] = loop->size;
        return;
    }
    ck_iter_operand ops[CK_UKERNEL_MAXPARAMS];
    for (int k = 0; k < narr; k++) ops[k] = ck_iter_op_of(arrs[k]);
    loop_of(narr, ops, ndim, shape, merge, loop, strides);
}

int ck_ukernel_red_layout(int nins, const ck_array *const *ins, const ck_array *out, int keepdims, int ndim,
                          const int64_t *shape, uint64_t reduced_mask, ck_ukernel_loop *outer,
                          int64_t (*ostrides)[CK_MAXDIMS], ck_ukernel_loop *inner, int64_t (*istrides)[CK_MAXDIMS])
{
    /* every input's strides broadcast to the whole shape, then split into
     * the kept and the reduced dims */
    int64_t full[CK_UKERNEL_MAXPARAMS][CK_MAXDIMS], kst[CK_UKERNEL_MAXPARAMS + 1][CK_MAXDIMS];
    int64_t rst[CK_UKERNEL_MAXPARAMS][CK_MAXDIMS], ksh[CK_MAXDIMS], rsh[CK_MAXDIMS];
    ck_iter_operand ops[CK_UKERNEL_MAXPARAMS + 1];
    for (int k = 0; k < nins; k++) ops[k] = ck_iter_op_of(ins[k]);
    ck_ukernel_loop whole;
    loop_of(nins, ops, ndim, shape, 0, &whole, full);
    int nk = 0, nr = 0;
    for (int d = 0; d < ndim; d++) {
        if ((reduced_mask >> d) & 1) {
            rsh[nr] = shape[d];
            for (int k = 0; k < nins; k++) rst[k][nr] = full[k][d];
            nr++;
        } else {
            ksh[nk] = shape[d];
            for (int k = 0; k < nins; k++) kst[k][nk] = full[k][d];
            nk++;
        }
    }
    /* the output's own strides at the kept dims */
    for (int d = 0, j = 0; d < out->ndim; d++) {
        if (keepdims && ((reduced_mask >> d) & 1)) continue;
        kst[nins][j++] = out->strides[d];
    }
    for (int k = 0; k <= nins; k++) {
        ops[k].ndim = nk;
        ops[k].shape = ksh;
        ops[k].strides = kst[k];
    }
    loop_of(nins + 1, ops, nk, ksh, 1, outer, ostrides);
    for (int k = 0; k < nins; k++) {
        ops[k].ndim = nr;
        ops[k].shape = rsh;
        ops[k].strides = rst[k];
    }
    loop_of(nins, ops, nr, rsh, 1, inner, istrides);
    int64_t st = nins && inner->ndim ? istrides[0][inner->ndim - 1] : 0;
    int contig_inner = nins && inner->ndim > 0 && (st < 0 ? -st : st) == ck_array_itemsize(ins[0]);
    return (contig_inner && inner->size >= 16) || (outer->size < 1024 && inner->size >= 32);
}

/* -------------------------------------------------------------- fuse */

/* Expression templates on operands {0} and {1}, already cast to the
 * compute type, by the kind of the result (unary ops) or of the compute
 * type (binary ones): floating, then signed (NULL: the same) and bool or
 * unsigned (NULL: as signed). */
typedef struct fuse_rule { const char *f, *i, *u; } fuse_rule;

#define CK_UKF_OPS(X)                                                                                       \
    X("negative", 1, 0, "(-{0})", NULL, NULL)                                                               \
    X("positive", 1, 0, "(+{0})", NULL, NULL)                                                               \
    X("absolute", 1, 0, "fabs({0})", "({0} < 0 ? -{0} : {0})", "{0}")                                       \
    X("sqrt", 1, 1, "sqrt({0})", NULL, NULL)                                                                \
    X("exp", 1, 1, "exp({0})", NULL, NULL)                                                                  \
    X("log", 1, 1, "log({0})", NULL, NULL)                                                                  \
    X("sin", 1, 1, "sin({0})", NULL, NULL)                                                                  \
    X("cos", 1, 1, "cos({0})", NULL, NULL)                                                                  \
    X("tan", 1, 1, "tan({0})", NULL, NULL)                                                                  \
    X("tanh", 1, 1, "tanh({0})", NULL, NULL)                                                                \
    X("sinh", 1, 1, "sinh({0})", NULL, NULL)                                                                \
    X("cosh", 1, 1, "cosh({0})", NULL, NULL)                                                                \
    X("arcsin", 1, 1, "asin({0})", NULL, NULL)                                                              \
    X("arccos", 1, 1, "acos({0})", NULL, NULL)                                                              \
    X("arctan", 1, 1, "atan({0})", NULL, NULL)                                                              \
    X("arcsinh", 1, 1, "asinh({0})", NULL, NULL)                                                            \
    X("arccosh", 1, 1, "acosh({0})", NULL, NULL)                                                            \
    X("arctanh", 1, 1, "atanh({0})", NULL, NULL)                                                            \
    X("exp2", 1, 1, "exp2({0})", NULL, NULL)                                                                \
    X("log2", 1, 1, "log2({0})", NULL, NULL)                                                                \
    X("log10", 1, 1, "log10({0})", NULL, NULL)                                                              \
    X("log1p", 1, 1, "log1p({0})", NULL, NULL)                                                              \
    X("expm1", 1, 1, "expm1({0})", NULL, NULL)                                                              \
    X("floor", 1, 1, "floor({0})", NULL, NULL)                                                              \
    X("ceil", 1, 1, "ceil({0})", NULL, NULL)                                                                \
    X("trunc", 1, 1, "trunc({0})", NULL, NULL)                                                              \
    X("rint", 1, 1, "rint({0})", NULL, NULL)                                                                \
    X("cbrt", 1, 1, "cbrt({0})", NULL, NULL)                                                                \
    X("square", 1, 0, "({0} * {0})", NULL, NULL)                                                            \
    X("reciprocal", 1, 0, "((decltype({0}))1 / {0})", NULL, NULL)                                           \
    X("logical_not", 1, 0, "(!(bool){0})", NULL, NULL)                                                      \
    X("invert", 1, 0, "(~{0})", NULL, NULL)                                                                 \
    X("isnan", 1, 0, "({0} != {0})", NULL, NULL)                                                            \
    X("isinf", 1, 1, "isinf({0})", NULL, NULL)                                                              \
    X("isfinite", 1, 1, "isfinite({0})", NULL, NULL)                                                        \
    X("sign", 1, 0, "(({0} > 0) - ({0} < 0))", NULL, NULL)                                                  \
    X("add", 2, 0, "({0} + {1})", NULL, NULL)                                                               \
    X("subtract", 2, 0, "({0} - {1})", NULL, NULL)                                                          \
    X("multiply", 2, 0, "({0} * {1})", NULL, NULL)                                                          \
    X("divide", 2, 0, "({0} / {1})", NULL, NULL)                                                            \
    X("true_divide", 2, 0, "({0} / {1})", NULL, NULL)                                                       \
    X("maximum", 2, 0, "(({0} != {0}) ? {0} : (({1} != {1}) ? {1} : ({0} > {1} ? {0} : {1})))", NULL, NULL) \
    X("minimum", 2, 0, "(({0} != {0}) ? {0} : (({1} != {1}) ? {1} : ({0} < {1} ? {0} : {1})))", NULL, NULL) \
    X("fmax", 2, 0, "fmax({0}, {1})", NULL, NULL)                                                           \
    X("fmin", 2, 0, "fmin({0}, {1})", NULL, NULL)                                                           \
    X("power", 2, 1, "pow({0}, {1})", NULL, NULL)                                                           \
    X("arctan2", 2, 0, "atan2({0}, {1})", NULL, NULL)                                                       \
    X("hypot", 2, 0, "hypot({0}, {1})", NULL, NULL)                                                         \
    X("copysign", 2, 0, "copysign({0}, {1})", NULL, NULL)                                                   \
    X("less", 2, 0, "({0} < {1})", NULL, NULL)                                                              \
    X("less_equal", 2, 0, "({0} <= {1})", NULL, NULL)                                                       \
    X("greater", 2, 0, "({0} > {1})", NULL, NULL)                                                           \
    X("greater_equal", 2, 0, "({0} >= {1})", NULL, NULL)                                                    \
    X("equal", 2, 0, "({0} == {1})", NULL, NULL)                                                            \
    X("not_equal", 2, 0, "({0} != {1})", NULL, NULL)                                                        \
    X("logical_and", 2, 0, "((bool){0} && (bool){1})", NULL, NULL)                                          \
    X("logical_or", 2, 0, "((bool){0} || (bool){1})", NULL, NULL)                                           \
    X("logical_xor", 2, 0, "((bool){0} != (bool){1})", NULL, NULL)                                          \
    X("bitwise_and", 2, 0, "({0} & {1})", NULL, NULL)                                                       \
    X("bitwise_or", 2, 0, "({0} | {1})", NULL, NULL)                                                        \
    X("bitwise_xor", 2, 0, "({0} ^ {1})", NULL, NULL)                                                       \
    X("left_shift", 2, 0, "({0} << {1})", NULL, NULL)                                                       \
    X("right_shift", 2, 0, "({0} >> {1})", NULL, NULL)                                                      \
    X("floor_divide", 2, 0, "floor({0} / {1})",                                                             \
      "(({1}) == 0 ? ({0}) * 0 : (({0}) / ({1}) - ((({0}) % ({1}) != 0) && ((({0}) < 0) != (({1}) < 0)))))", NULL) \
    X("remainder", 2, 0, "(({0}) - floor(({0}) / ({1})) * ({1}))",                                          \
      "(({1}) == 0 ? ({0}) * 0 : (((({0}) % ({1})) != 0 && ((({0}) % ({1})) < 0) != (({1}) < 0)) ? "        \
      "({0}) % ({1}) + ({1}) : ({0}) % ({1})))", NULL)

const ck_ukernel_fuse_op ck_ukernel_fuse_ops[] = {
#define CK_UKF_OP_(name, nargs, fonly, f, i, u) {name, nargs, fonly},
    CK_UKF_OPS(CK_UKF_OP_)
#undef CK_UKF_OP_
};
const int ck_ukernel_fuse_nops = (int)(sizeof ck_ukernel_fuse_ops / sizeof ck_ukernel_fuse_ops[0]);
static const fuse_rule fuse_rules_[] = {
#define CK_UKF_RULE_(name, nargs, fonly, f, i, u) {f, i, u},
    CK_UKF_OPS(CK_UKF_RULE_)
#undef CK_UKF_RULE_
};

static const struct { const char *name, *expr, *identity; } fuse_reductions_[] = {
    {"sum", "a + b", "0"},
    {"prod", "a * b", "1"},
    {"max", "((a != a) ? a : ((b != b) ? b : (a > b ? a : b)))", NULL},
    {"min", "((a != a) ? a : ((b != b) ? b : (a < b ? a : b)))", NULL},
};

ck_status ck_ukernel_fuse_reduction(const char *name, const char **reduce_expr, const char **identity)
{
    for (size_t i = 0; i < sizeof fuse_reductions_ / sizeof fuse_reductions_[0]; i++) {
        if (strcmp(fuse_reductions_[i].name, name)) continue;
        *reduce_expr = fuse_reductions_[i].expr;
        *identity = fuse_reductions_[i].identity;
        return CK_OK;
    }
    return ck_error_set(CK_ERR_VALUE, "no fused reduction '%s'", name);
}

/* x as Python's repr writes a float: the shortest digits that read back
 * as x, positional from 1e-4 to below 1e16, else with an exponent. */
static void repr_double(ck_sbuf *b, double x)
{
    char e[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x) break;
    }
    /* e is [-]d[.ddd]e±XX */
    const char *s = e;
    if (*s == '-') { ck_sbuf_printf(b, "-"); s++; }
    char dig[20];
    int nd = 0;
    for (; *s != 'e'; s++)
        if (*s != '.') dig[nd++] = *s;
    int exp10 = atoi(s + 1), decpt = exp10 + 1;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            ck_sbuf_printf(b, "0.%.*s%.*s", -decpt, "0000", nd, dig);
        } else if (decpt >= nd) {
            ck_sbuf_printf(b, "%.*s%.*s.0", nd, dig, decpt - nd, "0000000000000000");
        } else {
            ck_sbuf_printf(b, "%.*s.%.*s", decpt, dig, nd - decpt, dig + decpt);
        }
    } else {
        ck_sbuf_printf(b, "%c", dig[0]);
        if (nd > 1) ck_sbuf_printf(b, ".%.*s", nd - 1, dig + 1);
        ck_sbuf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
}

static void ref(ck_sbuf *b, const ck_ukernel_fuse_ref *r, const char *cast)
{
    if (r->kind == CK_UKF_PARAM) { ck_sbuf_printf(b, "in%lld", (long long)r->i); return; }
    if (r->kind == CK_UKF_TEMP) { ck_sbuf_printf(b, "_t%lld", (long long)r->i); return; }
    if (cast) ck_sbuf_printf(b, "((%s)", cast);
    if (r->kind == CK_UKF_BOOL) ck_sbuf_printf(b, "%s", r->i ? "true" : "false");
    else if (r->kind == CK_UKF_INT) ck_sbuf_printf(b, "%lldLL", (long long)r->i);
    else repr_double(b, r->f);
    if (cast) ck_sbuf_printf(b, ")");
}

/* ((compute)operand) of each operand into tmpl's {0} and {1} */
static void fuse_apply(ck_sbuf *b, const char *tmpl, const char *ct, const ck_ukernel_fuse_ref *a, const char **cast)
{
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '{' && (p[1] == '0' || p[1] == '1') && p[2] == '}') {
            int k = p[1] - '0';
            ck_sbuf_printf(b, "((%s)", ct);
            ref(b, &a[k], cast[k]);
            ck_sbuf_printf(b, ")");
            p += 2;
        } else {
            ck_sbuf_printf(b, "%c", *p);
        }
    }
}

/* The C type of t; for float16 "" and *bad set (the error is ck_ukernel_ctype's). */
static const char *fuse_ct(ck_dtype t, int *bad)
{
    const char *c = ck_ukernel_ctype(t);
    if (!c) *bad = 1;
    return c ? c : "";
}

ck_status ck_ukernel_fuse_source(const ck_ukernel_fuse_spec *sp, char **preamble, char **call)
{
    *preamble = *call = NULL;
    int bad = 0;
    ck_sbuf b = {0}, c = {0};
    if (sp->reduce) ck_sbuf_printf(&b, "__device__ %s _ck_fused_map(", fuse_ct(sp->res_types[0], &bad));
    else ck_sbuf_printf(&b, "__device__ void _ck_fused_fn(");
    for (int k = 0; k < sp->nin; k++) ck_sbuf_printf(&b, "%s%s in%d", k ? ", " : "", fuse_ct(sp->in_types[k], &bad), k);
    if (!sp->reduce)
        for (int j = 0; j < sp->nres; j++) ck_sbuf_printf(&b, ", %s &_r%d", fuse_ct(sp->res_types[j], &bad), j);
    ck_sbuf_printf(&b, ")\n{\n");
    for (int n = 0; n < sp->nsteps; n++) {
        const ck_ukernel_fuse_step *st = &sp->steps[n];
        const char *ot = fuse_ct(st->out, &bad), *cast[3];
        for (int k = 0; k < 3; k++)
            cast[k] = st->a[k].cast == CK_DTYPE_INVALID ? NULL : fuse_ct(st->a[k].cast, &bad);
        ck_sbuf_printf(&b, "%s    %s _t%d = ", n ? "\n" : "", ot, n);
        if (st->op == CK_UKF_OP_CAST) {
            ck_sbuf_printf(&b, "((%s)", ot);
            ref(&b, &st->a[0], cast[0]);
            ck_sbuf_printf(&b, ")");
        } else if (st->op == CK_UKF_OP_WHERE) {
            ck_sbuf_printf(&b, "((bool)(");
            ref(&b, &st->a[0], cast[0]);
            ck_sbuf_printf(&b, ") ? (%s)(", ot);
            ref(&b, &st->a[1], cast[1]);
            ck_sbuf_printf(&b, ") : (%s)(", ot);
            ref(&b, &st->a[2], cast[2]);
            ck_sbuf_printf(&b, "))");
        } else if (st->op >= 0 && st->op < ck_ukernel_fuse_nops) {
            const fuse_rule *r = &fuse_rules_[st->op];
            char kind = ck_cuda_kind_letter(ck_ukernel_fuse_ops[st->op].nargs == 1 ? st->out : st->compute);
            const char *tmpl = kind == 'F' ? r->f : (kind == 'I' || kind == 'C' || !r->u) ? (r->i ? r->i : r->f) : r->u;
            fuse_apply(&b, tmpl, fuse_ct(st->compute, &bad), st->a, cast);
        } else {
            free(b.s);
            return ck_error_set(CK_ERR_VALUE, "fused step %d: no op %d", n, st->op);
        }
        ck_sbuf_printf(&b, ";");
    }
    ck_sbuf_printf(&b, "\n");
    if (sp->reduce) {
        ck_sbuf_printf(&b, "    return (%s)", fuse_ct(sp->res_types[0], &bad));
        ref(&b, &sp->res[0], NULL);
        ck_sbuf_printf(&b, ";\n");
    } else {
        for (int j = 0; j < sp->nres; j++) {
            ck_sbuf_printf(&b, "    _r%d = (%s)", j, fuse_ct(sp->res_types[j], &bad));
            ref(&b, &sp->res[j], NULL);
            ck_sbuf_printf(&b, ";\n");
        }
    }
    ck_sbuf_printf(&b, "}\n");
    ck_sbuf_printf(&c, "%s(", sp->reduce ? "_ck_fused_map" : "_ck_fused_fn");
    for (int k = 0; k < sp->nin; k++) ck_sbuf_printf(&c, "%sin%d", k ? ", " : "", k);
    for (int j = 0; !sp->reduce && j < sp->nres; j++) ck_sbuf_printf(&c, "%sout%d", sp->nin + j ? ", " : "", j);
    ck_sbuf_printf(&c, ")");
    if (bad) {   /* the message of ck_ukernel_ctype */
        free(b.s);
        free(c.s);
        return CK_ERR_NOT_IMPLEMENTED;
    }
    if (!(*preamble = ck_sbuf_finish(&b))) { free(c.s); return ck_error_status(); }
    if (!(*call = ck_sbuf_finish(&c))) { free(*preamble); *preamble = NULL; return ck_error_status(); }
    return CK_OK;
}
