/*
 * ck_python.h - the CPython face of the core: object wrappers and argument
 * conversion only.  The work is done by the C library (include/cudakit.h);
 * this layer turns Python objects into ck_array / ck_operand values, calls
 * it, and turns a failing ck_status into the exception NumPy would raise.
 */
#ifndef CK_PYTHON_H
#define CK_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "cudakit.h"
#include "cudakit_autograd.h"
#include <stdio.h>

/* ------------------------------------------------------------- docstrings
 *
 * CPython's convention: a docstring that begins "name(sig)\n--\n\n" gives
 * the builtin a __text_signature__ of "(sig)" (what inspect.signature and
 * help() show) and a __doc__ of the text after it.  Methods start the
 * signature with "$self" ("($self, /, axis=None)"), so that a bound method
 * drops it.  Each entry states its signature once:
 *
 *     CK_DEF_KW(sum, fn_sum, "(a, axis=None, dtype=None)", "Sum of elements.")
 *
 * The signature must say what the argument parsing takes: its keyword
 * names, "/" before positional-only ones, "*" before keyword-only ones,
 * defaults that behave as the argument left out (tests/test_help.py). */
#define CK_DOC(name, sig, text) #name sig "\n--\n\n" text
#define CK_PYCFN(f) ((PyCFunction)(void (*)(void))(f))
#define CK_DEF_KW(name, fn, sig, text) {#name, CK_PYCFN(fn), METH_VARARGS | METH_KEYWORDS, CK_DOC(name, sig, text)}
#define CK_DEF_VARARGS(name, fn, sig, text) {#name, CK_PYCFN(fn), METH_VARARGS, CK_DOC(name, sig, text)}
#define CK_DEF_O(name, fn, sig, text) {#name, CK_PYCFN(fn), METH_O, CK_DOC(name, sig, text)}
#define CK_DEF_NOARGS(name, fn, sig, text) {#name, CK_PYCFN(fn), METH_NOARGS, CK_DOC(name, sig, text)}
#define CK_DEF_FAST(name, fn, sig, text) {#name, CK_PYCFN(fn), METH_FASTCALL, CK_DOC(name, sig, text)}

/* ------------------------------------------------------------- objects */

typedef struct {
    PyObject_HEAD
    ck_array arr;          /* owns one reference to arr.buf */
    PyObject *base;        /* the array (or exporter) whose memory a view uses, or NULL */
    PyObject *weakreflist;
    ck_ag_var *ag;         /* owned: the autograd state (requires_grad, grad, grad_fn), or NULL */
} CkArrayObject;

typedef struct {
    PyObject_HEAD
    ck_dtype type;
    PyObject *np_dtype;    /* numpy.dtype, made on first use */
} CkDTypeObject;

typedef struct {
    PyObject_HEAD
    ck_device dev;
} CkDeviceObject;

extern PyTypeObject CkArray_Type;
extern PyTypeObject CkDType_Type;
extern PyTypeObject CkDevice_Type;
extern PyTypeObject CkUFunc_Type;
extern PyTypeObject CkFlags_Type;

#define CkArray_Check(o) PyObject_TypeCheck(o, &CkArray_Type)
#define CkArray_CheckExact(o) Py_IS_TYPE(o, &CkArray_Type)
#define CK_ARR(o) (&((CkArrayObject *)(o))->arr)

/* The dtype singletons, by ck_dtype (borrowed references). */
extern CkDTypeObject *ck_py_dtypes[CK_NTYPES];

/* Exceptions of the module. */
extern PyObject *ck_py_CUDAError;        /* RuntimeError: a driver call failed */
extern PyObject *ck_py_OutOfMemoryError; /* MemoryError: out of GPU memory */
extern PyObject *ck_py_CompileError;     /* RuntimeError: NVRTC rejected a kernel */
extern PyMethodDef ck_py_cuda_functions[];

/* The classes NumPy has of its own (python/cudakit/_exceptions.py:
 * subclasses of NumPy's where it imports), loaded the first time one is
 * raised so that `import cudakit` does not import NumPy. */
typedef enum {
    CK_PY_AXIS_ERROR,             /* AxisError: ValueError and IndexError */
    CK_PY_COMPLEX_WARNING,        /* ComplexWarning: RuntimeWarning */
    CK_PY_PROMOTION_ERROR,        /* DTypePromotionError: TypeError */
    CK_PY_UFUNC_TYPE_ERROR,       /* UFuncTypeError: TypeError, the base of the three below */
    CK_PY_UFUNC_NO_LOOP,          /* _UFuncNoLoopError: UFuncTypeError, TypeError */
    CK_PY_UFUNC_INPUT_CAST,       /* _UFuncInputCastingError */
    CK_PY_UFUNC_OUTPUT_CAST,      /* _UFuncOutputCastingError */
    CK_PY_ARRAY_MEMORY_ERROR,     /* _ArrayMemoryError: MemoryError */
    CK_PY_C_INT_OVERFLOW,         /* OverflowError and ValueError: an int no C int holds */
    CK_PY_DEVICE_MEMORY_ERROR,    /* cuda.OutOfMemoryError and NumPy's MemoryError class */
    CK_PY_EXC_COUNT
} ck_py_exc_id;
/* The class (borrowed; never NULL: the builtin base when the module cannot
 * be loaded).  A pending exception is kept. */
PyObject *ck_py_exc(ck_py_exc_id id);
extern PyMethodDef ck_py_profiler_functions[];
extern PyMethodDef ck_py_graph_functions[];
extern PyMethodDef ck_py_comm_functions[];   /* comm.c: communicators, groups, peer access */
int ck_py_comm_type_init(PyObject *module);
/* graph.c: -1 with the error when a's data is read on the host during a
 * capture of its device (what names the reading), else 0. */
int ck_py_refuse_host_read(const ck_array *a, const char *what);
int ck_py_graph_type_init(PyObject *module);
/* ck_array_copy_async between two CkArrays on stream (None: the current
 * one of the device side; a Stream or a handle), then waiting for the
 * stream when blocking; -1 with the error set. */
int ck_py_copy_async_obj(PyObject *dst, PyObject *src, PyObject *stream, int blocking);
/* ndarray.record_stream(stream): ck_array_record_stream (graph.c). */
PyObject *ck_py_array_record_stream(PyObject *self, PyObject *stream);

/* ------------------------------------------------------------ errors */

/* Raise the Python exception for the thread's last core error; returns NULL. */
PyObject *ck_py_raise(ck_status s);
/* Same, returning -1 for int-returning slots. */
int ck_py_raise_int(ck_status s);

/* ------------------------------------------------------------ arrays */

/* Wrap a filled ck_array (steals its buffer reference) into a new object;
 * base may be NULL (new reference to base taken).  On failure releases arr. */
PyObject *ck_py_wrap(ck_array *arr, PyObject *base);
/* A view object of an array object's memory with a new layout already set
 * in *view (which holds its own buffer reference, e.g. from ck_array_view). */
PyObject *ck_py_wrap_view(ck_array *view, PyObject *owner);

/* Any array-like -> a CkArray object (new reference).
 *   dtype: CK_DTYPE_INVALID to infer; copy: 1 always, 0 never (error if
 *   needed), -1 if needed; dev: where the result lives (has_dev = 0: the
 *   object's own device for arrays, the default device for the rest). */
PyObject *ck_py_asarray(PyObject *obj, ck_dtype dtype, int copy, int has_dev, ck_device dev);
/* Python scalar / object -> element-wise operand.  Arrays stay arrays
 * (borrowed into *tmp_obj-owned storage); lists etc. are converted and the
 * new object stored in *tmp_obj (caller DECREFs).  Returns 0, or -1 with an
 * exception set; 1 when obj is of a type we do not handle (NotImplemented). */
int ck_py_operand(PyObject *obj, ck_operand *op, PyObject **tmp_obj);

/* ------------------------------------------------------------ conversions */

/* dtype-like (ck dtype, numpy dtype or scalar type, Python type, string)
 * -> ck_dtype.  None gives dflt.  -1 with TypeError on failure. */
int ck_py_dtype_from_obj(PyObject *obj, ck_dtype dflt, ck_dtype *out);
/* casting=: one of NumPy's five names (ValueError otherwise, TypeError
 * for a non-str). */
int ck_py_casting_from_obj(PyObject *obj, ck_casting *out);
/* -1 with NumPy's "Cannot cast array data ..." TypeError when from does
 * not cast to to under casting (astype, concatenate). */
int ck_py_check_cast(ck_dtype from, ck_dtype to, ck_casting casting);
/* order=: 'C', 'F', 'A' or 'K' (either case) into *code; None leaves
 * *code as it is. */
int ck_py_order_code(PyObject *obj, char *code);
/* device-like (None, "cpu", "cuda", "cuda:1", Device, ck.cuda.Device...)
 * -> ck_device.  *has = 0 for None. */
int ck_py_device_from_obj(PyObject *obj, ck_device *out, int *has);
PyObject *ck_py_device_new(ck_device dev);
/* x.to(device, dtype), PyTorch's name (array_to.c) */
PyObject *ck_py_array_to(PyObject *self, PyObject *args, PyObject *kw);
/* The default device (decided and announced once, see device.c). */
ck_device ck_py_default_device(void);
/* int or sequence of ints -> shape; -1 with exception. */
int ck_py_shape_from_obj(PyObject *obj, int *ndim, int64_t *shape);
PyObject *ck_py_shape_tuple(int ndim, const int64_t *v);
/* One axis argument, as NumPy's C functions read it: TypeError for a bool
 * or a non-integer, OverflowError and ValueError at once (NumPy raises
 * either) for a value no C int holds; not yet checked against an array
 * (the C layer's AxisError names the value given). */
int ck_py_axis_int(PyObject *obj, int *axis);
/* Same, as NumPy's Python functions read it (operator.index): a bool is
 * axis 0 or 1. */
int ck_py_axis_index(PyObject *obj, int *axis);
/* A single axis or None (*none = 1), as ck_py_axis_int / ck_py_axis_index. */
int ck_py_axis_or_none(PyObject *obj, int *axis, int *none);
int ck_py_axis_index_or_none(PyObject *obj, int *axis, int *none);
/* NumPy's C functions (take, repeat, compress, argsort, cumsum...) read
 * axis 0 or -1 of a 0-d array as the flattened array's (PyArray_CheckAxis). */
static inline int ck_py_flat_0d(const ck_array *a, int axis) { return a->ndim == 0 && (axis == 0 || axis == -1); }
/* axis argument: None -> all; int or tuple -> mask; each as ck_py_axis_int
 * (or with CK_PY_AXES_BOOL as ck_py_axis_index), AxisError out of range,
 * ValueError repeated.  A list is TypeError, as for NumPy's reductions,
 * unless CK_PY_AXES_LIST (its Python functions take one). */
#define CK_PY_AXES_LIST 1
#define CK_PY_AXES_BOOL 2
int ck_py_axis_mask(PyObject *axis, int ndim, int flags, uint64_t *mask);
/* Element at ptr of dtype t -> Python scalar (bool, int, float, complex). */
PyObject *ck_py_scalar_to_py(const void *ptr, ck_dtype t);
/* Python number -> ck_scalar (weak flag set for Python bool/int/float/complex;
 * numpy scalars are strong).  Returns 0 ok, 1 if obj is not a scalar, -1 error. */
int ck_py_scalar_from_obj(PyObject *obj, ck_scalar *s, int *weak);
/* A weak Python number stored into dtype dt is converted as NumPy 2 does
 * (through int() / float()): 0, or -1 with OverflowError / TypeError /
 * ValueError for values such a conversion refuses. */
int ck_py_check_weak_scalar(const ck_scalar *s, ck_dtype dt);
/* After ck_py_scalar_from_obj failed: a Python int beyond 64 bits as the
 * weak float closest to it, which NumPy makes of it for a float or complex
 * destination (the caller knows the destination).  0, or -1 with the
 * exception (the OverflowError, for anything else). */
int ck_py_big_int_as_float(PyObject *obj, ck_scalar *s);
/* obj's values as a NumPy array: a view of a CPU array's memory unless
 * copy; into out when given (which is returned). */
PyObject *ck_py_to_numpy(PyObject *obj, PyObject *out, int copy);
/* numpy module (imported on first use; borrowed). NULL with ImportError. */
PyObject *ck_py_numpy(void);

/* ------------------------------------------------------------ pieces */

/* index.c: basic indexing */
PyObject *ck_py_getitem(PyObject *self, PyObject *key);
int ck_py_setitem(PyObject *self, PyObject *key, PyObject *value);
/* interop (what its files share: interop.h).  bufferproto.c: the buffer
 * protocol, both directions */
extern PyBufferProcs ck_py_buffer_procs;
/* Wrap the memory of an object exporting the buffer protocol (zero copy);
 * NULL with exception (TypeError if it does not export one). */
PyObject *ck_py_from_buffer(PyObject *obj, int writable_required);
/* A buffer's struct-module format and item size as a dtype (CK_DTYPE_INVALID:
 * none of ours, or the other byte order). */
ck_dtype ck_py_dtype_from_format(const char *fmt, Py_ssize_t itemsize);
/* dlpack.c: __dlpack__, __dlpack_device__ and from_dlpack */
extern PyMethodDef ck_py_dlpack_methods[];      /* array methods, NULL-terminated */
extern PyMethodDef ck_py_dlpack_functions[];    /* module functions (from_dlpack) */
/* numpy_interop.c: __array__, __array_interface__, get, pickling, copies,
 * tolist, item */
extern PyMethodDef ck_py_interop_methods[];     /* array methods, NULL-terminated */
extern PyGetSetDef ck_py_interop_getset[];      /* array properties, NULL-terminated */
extern PyMethodDef ck_py_interop_functions[];   /* module functions (_reconstruct) */
/* format.c: repr and str */
PyObject *ck_py_repr(PyObject *self);
PyObject *ck_py_str(PyObject *self);
/* tolist */
PyObject *ck_py_tolist(PyObject *self);

/* ufunc.c */
PyObject *ck_py_ufunc_new(ck_op op);
/* Apply op to Python operands (out may be NULL); NotImplemented when an
 * operand is of a foreign type and return_notimpl. */
PyObject *ck_py_apply(ck_op op, int nin, PyObject *const *args, PyObject *out, ck_dtype dtype, int return_notimpl);
/* ck_py_apply with a call's dtype=, signature= and casting= */
PyObject *ck_py_apply_opts(ck_op op, int nin, PyObject *const *args, PyObject *out, const ck_ufunc_opts *opts,
                           int return_notimpl);

/* shape.c: array methods (squeeze, diagonal, trace, repeat) */
extern PyMethodDef ck_py_shape_methods[];
/* reduce.c: reductions as module functions and methods */
extern PyMethodDef ck_py_reduce_methods[];      /* array methods */
extern PyMethodDef ck_py_reduce_functions[];    /* module functions */
/* extend.c: _extend_type, Python members of ndarray and ufunc */
extern PyMethodDef ck_py_extend_functions[];
/* nonzero while seterr/errstate want floating-point checks on the CPU */
extern int ck_py_fp_checks;
/* The check of op's result (0, or -1 with the warning raised as an error) */
int ck_py_fp_check(ck_op op, int nin, PyObject *const *args, PyObject *result);
/* A ufunc call with where=: composed in Python */
PyObject *ck_py_ufunc_where(PyObject *ufunc, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* creation.c */
extern PyMethodDef ck_py_creation_functions[];
/* indexfuncs.c: take, put, nonzero, choose and kin */
extern PyMethodDef ck_py_index_functions[];
extern PyMethodDef ck_py_sort_functions[];        /* sortfuncs.c: sort, argsort, partition, searchsorted */
extern PyMethodDef ck_py_shape_functions[];      /* shape.c: reshape, concatenate, pad, ... */
extern PyMethodDef ck_py_random_functions[];     /* random.c: _random_* */
extern PyMethodDef ck_py_xoroshiro_functions[];  /* xoroshiro.c: _xoroshiro128p_init */
extern PyMethodDef ck_py_train_functions[];      /* train.c: softmax, cross-entropy, optimizer steps */
extern PyMethodDef ck_py_linear_functions[];     /* linear.c: the fused linear layer */
extern PyMethodDef ck_py_linalg_functions[];     /* linalg.c: _matmul, the TF32 switch */
/* a @ b for two arrays (the core's matmul; a GPU's) */
PyObject *ck_py_matmul(PyObject *a, PyObject *b);
extern PyMethodDef ck_py_fftsolver_functions[];  /* fftsolver.c: _cuda_fft, _cusolver_* (private) */
extern PyMethodDef ck_py_kernel_functions[];     /* kernels.c: user CUDA C kernels */
/* kernels.c: an int or 1 to 3 ints as a dim3 (what names it in errors);
 * a stream argument (None: dev's current stream; a handle; an object with
 * .handle or .ptr); the function name of a _Module object on dev
 * (compiled there on first use). */
int ck_py_parse_dim3(PyObject *o, unsigned out[3], const char *what);
int ck_py_parse_stream(PyObject *o, ck_device dev, ck_stream *out);
ck_function *ck_py_module_function(PyObject *module, const char *name, ck_device dev);
extern PyMethodDef ck_py_pykernel_functions[];   /* pykernel.c: kernels written in Python */
int ck_py_pykernel_init(PyObject *module);
extern PyMethodDef ck_py_kernelgen_functions[];  /* kernelgen.c: ElementwiseKernel/ReductionKernel/fuse source */

/* autograd.c: the array's autograd face, and the recording calls made
 * where ops run.  Each ck_py_ag_<op>(..., result) is called only when
 * CK_AG_GATE() (one branch on the hot path), takes result and returns it
 * with its variable set (or NULL with the exception, result released). */
extern PyGetSetDef ck_py_autograd_getset[];
extern PyMethodDef ck_py_autograd_methods[];
extern PyMethodDef ck_py_autograd_functions[];
int ck_py_autograd_init(PyObject *module);
int ck_py_ag_set_requires_grad(PyObject *self, int on);
PyObject *ck_py_ag_ufunc(ck_op op, int nin, PyObject *const *args, const ck_operand *ops, PyObject *result);
/* An in-place write into target (whose values need a gradient or not):
 * RuntimeError for a leaf that requires grad or a view of one, as PyTorch. */
int ck_py_ag_inplace_check(PyObject *target, int values_need_grad);
/* out= given to a ufunc (before the op): 0 nothing to record, 1 record
 * with ck_py_ag_ufunc_rebase after (ops may now point at copies held in
 * keep[], released by the caller), -1 error. */
int ck_py_ag_ufunc_out(ck_op op, int nin, PyObject *const *args, ck_operand *ops, PyObject *out, PyObject **keep);
int ck_py_ag_ufunc_rebase(ck_op op, int nin, PyObject *const *args, const ck_operand *ops, PyObject *out);
PyObject *ck_py_ag_reduce(const char *name, PyObject *a, uint64_t mask, int keepdims, double ddof, PyObject *result);
PyObject *ck_py_ag_reshape(PyObject *a, PyObject *result);
/* name: "astype", "copy" (the gradient is cast back) or "to_device" (moved back). */
PyObject *ck_py_ag_copy(const char *name, PyObject *a, PyObject *result);
PyObject *ck_py_ag_transpose(PyObject *a, const int *perm, PyObject *result);
PyObject *ck_py_ag_broadcast(PyObject *a, PyObject *result);
/* result is a view of a whose layout on ck_ag_virtual's fake of a is virtual_view. */
PyObject *ck_py_ag_view(const char *name, PyObject *a, const ck_array *virtual_view, PyObject *result);
PyObject *ck_py_ag_matmul(PyObject *a, PyObject *b, PyObject *result);
PyObject *ck_py_ag_roll(PyObject *a, int n, const int64_t *shifts, const int *axes, PyObject *result);
PyObject *ck_py_ag_tri(PyObject *a, int64_t k, int upper, PyObject *result);
PyObject *ck_py_ag_pad(PyObject *a, const int64_t *widths, PyObject *result);
/* tile(a, reps) (axis ignored) or repeat(a, count, axis) with one count (axis CK_AXIS_FLAT: flattened). */
PyObject *ck_py_ag_tile(PyObject *a, int is_repeat, int n, const int64_t *reps, int axis, PyObject *result);
/* self[key] = value was done (key basic: virtual_view its layout on
 * ck_ag_virtual's fake of self): self's new variable.  0 or -1. */
int ck_py_ag_setitem(PyObject *self, PyObject *value, const ck_array *virtual_view);
/* An op without a rule: backward raises naming it (name must outlive the graph). */
PyObject *ck_py_ag_missing(const char *name, int nin, PyObject *const *in, PyObject *result);

/* ag_train.c: the recording of the ops whose rules are trainops'
 * (include/cudakit_autograd_ops.h), called as the ck_py_ag_* above. */
extern PyMethodDef ck_py_ag_train_functions[];
PyObject *ck_py_ag_softmax(PyObject *a, int axis, int log_, PyObject *result);
PyObject *ck_py_ag_logsumexp(PyObject *a, uint64_t mask, int keepdims, PyObject *result);
/* loss with its variable; lse and total are what the backward reads */
struct ck_xent_args;
PyObject *ck_py_ag_cross_entropy(PyObject *logits, PyObject *target, const struct ck_xent_args *args, PyObject *loss,
                                 PyObject *lse, PyObject *total);
PyObject *ck_py_ag_index(PyObject *a, int n, const ck_index_item *items, ck_index_mode mode, PyObject *result);
PyObject *ck_py_ag_take(PyObject *a, const ck_array *indices, int axis, int axis_none, ck_index_mode mode,
                        PyObject *result);
PyObject *ck_py_ag_take_along_axis(PyObject *a, const ck_array *indices, int axis, int axis_none, PyObject *result);
PyObject *ck_py_ag_join(int stack, int n, PyObject *const *objs, int axis, int axis_none, PyObject *result);
PyObject *ck_py_ag_scan(const char *name, PyObject *a, int axis, int axis_none, PyObject *result);

/* Release the GIL for loops at least this large (elements). */
#define CK_PY_NOGIL_MIN 65536

#endif
