"""Your own kernels in CUDA C: RawKernel, RawModule, SourceModule,
ElementwiseKernel, ReductionKernel and fuse.

One kernel, two targets: the same CUDA C runs on GPU arrays (compiled by
NVRTC, cached in memory and on disk) and on CPU arrays (compiled by the
system C++ compiler against cudakit's CUDA-compatibility header).  The
device of a launch is the device of its array arguments.

Arguments of a launch (the rule, checked in C before the launch):

* a cudakit array passes a pointer to its first element; it must live on
  the launch's device (``ValueError``) and, when the kernel's signature is
  known, its dtype must match the pointee (``float*`` takes float32,
  ``double*`` float64, ``int*`` int32, ``long long*``/``int64_t*`` int64,
  ``unsigned char*``/``uint8_t*`` uint8, ``bool*`` bool, ...; ``void*`` and
  ``char*`` take any array), else ``TypeError``;
* ``None`` passes a null pointer (to a pointer parameter, or one of
  unknown type);
* a NumPy scalar passes its typed value (converted to the parameter's type
  when the signature is known and the cast is same-kind);
* a Python scalar passed to a parameter of known type is converted to that
  type (``OverflowError`` if it does not fit; ``TypeError`` for a float into
  an integer parameter or a complex into a real one); where the type is not
  known: ``int`` -> ``long long``, ``float`` -> ``double``, ``bool`` ->
  ``bool``, ``complex`` -> ``complex<double>``;
* anything else is a ``TypeError``.

The signature is known when the source declares the kernel
``extern "C" __global__ void name(...)`` with parameters of plain types.
"""
import os
import re
import threading

import numpy as _np

from . import _core

__all__ = ["RawKernel", "RawModule", "SourceModule", "ElementwiseKernel", "ReductionKernel", "fuse", "debug"]

_DEBUG = "CUDAKIT_DEBUG" in os.environ

# ---------------------------------------------------------------- signatures

_CTYPES = {
    "float": "float32", "double": "float64",
    "int": "int32", "signed int": "int32", "int32_t": "int32", "signed": "int32",
    "unsigned int": "uint32", "unsigned": "uint32", "uint32_t": "uint32",
    "long long": "int64", "long long int": "int64", "signed long long": "int64", "int64_t": "int64",
    "long": "int64", "long int": "int64", "ptrdiff_t": "int64", "ssize_t": "int64",
    "unsigned long long": "uint64", "unsigned long long int": "uint64", "uint64_t": "uint64",
    "unsigned long": "uint64", "size_t": "uint64",
    "short": "int16", "short int": "int16", "int16_t": "int16",
    "unsigned short": "uint16", "unsigned short int": "uint16", "uint16_t": "uint16",
    "signed char": "int8", "int8_t": "int8",
    "unsigned char": "uint8", "uint8_t": "uint8",
    "bool": "bool",
    "__half": "float16", "half": "float16",
    "complex<float>": "complex64", "complex<double>": "complex128",
    "ck_c64": "complex64", "ck_c128": "complex128",
}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")


def _strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


def _parse_param(p):
    p = _QUALIFIERS.sub(" ", p)
    p = re.sub(r"\s*=\s*[^,]*$", "", p)  # default values
    if "&" in p or "[" in p or "(" in p:
        return ("?", None)
    stars = p.count("*")
    p = p.replace("*", " ")
    words = p.split()
    if len(words) >= 2:
        words = words[:-1]  # the parameter's name
    base = " ".join(words)
    base = re.sub(r"\s*<\s*", "<", re.sub(r"\s*>", ">", base))
    if stars == 1:
        if base in ("void", "char"):
            return ("p", None)
        return ("p", _CTYPES.get(base))
    if stars > 1:
        return ("p", None)
    t = _CTYPES.get(base)
    if t is None:
        return ("?", None)
    return ("s", t)


def _parse_signature(code, name):
    """[(kind, dtype name or None)] of extern "C" kernel `name`, or None."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return None  # a template instance: the declaration does not say
    src = _strip_comments(code)
    m = re.search(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                  + re.escape(name) + r"\s*\(([^)]*)\)", src)
    if not m:
        return None
    before = src[:m.start()]
    line_start = before.rfind("\n") + 1
    decl_line = src[line_start:m.start()]
    # extern "C" on the declaration, or an open extern "C" { block before it
    ext = 'extern "C"' in decl_line
    if not ext:
        for b in re.finditer(r'extern\s+"C"\s*\{', before):
            depth = before[b.end():].count("{") - before[b.end():].count("}")
            if depth >= 0:
                ext = True
    if not ext or "template" in decl_line:
        return None
    params = m.group(1).strip()
    if not params or params == "void":
        return []
    return [_parse_param(p) for p in params.split(",")]


class debug:
    """``ck.debug(bounds=True)``: check every access a CUDA C kernel makes to
    its array arguments on CPU arrays; one out of bounds raises IndexError
    naming the kernel, block, thread, argument and index (CUDAKIT_BOUNDS=1
    does the same from the environment).  A call sets the mode; used as a
    context manager (``with ck.debug(bounds=True): ...``) it restores the
    previous mode on exit."""

    def __init__(self, bounds=True):
        self._prev = _core._cpu_bounds_mode(1 if bounds else 0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _core._cpu_bounds_mode(1 if self._prev else 0)
        return False


# ---------------------------------------------------------------- raw kernels

def _check_backend(backend, translate_cucomplex, jitify):
    if backend not in ("nvrtc", "nvcc"):
        raise ValueError(f"backend must be 'nvrtc' (or 'nvcc', compiled with NVRTC too), got {backend!r}")
    if translate_cucomplex:
        raise NotImplementedError("translate_cucomplex=True is not supported: write complex<float>/<double>")
    if jitify:
        raise NotImplementedError("jitify=True is not supported")


def _attribute(name):
    """A read-only kernel attribute on the default device."""
    return property(lambda self: self._attributes(None)[name], doc=f"The kernel's {name} on the default device.")


class RawKernel(_core._Kernel):
    """A CUDA C kernel from source: ``RawKernel(code, name, options=())``.

    Launch: ``kernel(grid, block, args, shared_mem=0, stream=None)``, grid
    and block an int or a tuple of 1 to 3 ints, args a tuple (see the module
    docstring for how each argument passes).  The source is compiled on the
    first launch on a device (``kernel.compile(device)`` does it now).
    ``kernel.launch_n(n, args)`` launches over n elements with the default
    configuration (see there).
    """

    def __init__(self, code, name, options=(), backend="nvrtc", *, translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, _module=None, _signature=False):
        _check_backend(backend, translate_cucomplex, jitify)
        if _module is None:
            _module = _core._Module(code, tuple(options), (), "kernel.cu")
        sig = _parse_signature(code, name) if _signature is False else _signature
        self._setup(_module, name, sig)
        self.code = code
        self.options = tuple(options)
        self.backend = backend
        self.enable_cooperative_groups = enable_cooperative_groups
        self._suggested = {}

    # attributes, on the default device unless given
    def attributes(self, device=None):
        """The function's attributes on a device, as a dict."""
        return self._attributes(device)

    max_threads_per_block = _attribute("max_threads_per_block")
    num_regs = _attribute("num_regs")
    shared_size_bytes = _attribute("shared_size_bytes")
    const_size_bytes = _attribute("const_size_bytes")
    local_size_bytes = _attribute("local_size_bytes")
    ptx_version = _attribute("ptx_version")
    binary_version = _attribute("binary_version")

    @property
    def max_dynamic_shared_size_bytes(self):
        return self._attributes(None)["max_dynamic_shared_size_bytes"]

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, nbytes):
        self._set_max_dynamic_shared(None, int(nbytes))

    def max_block_size(self, device=None):
        """The most threads a block of this kernel can have."""
        return self._attributes(device)["max_threads_per_block"]

    def suggested_block_size(self, shared_mem=0, device=None, block_size_limit=0):
        """(min_grid, block): the block size with the best occupancy
        (cuOccupancyMaxPotentialBlockSize) and the grid that fills the GPU."""
        return self._suggest_block(device, int(shared_mem), int(block_size_limit))

    def launch_n(self, n, args, shared_mem=0, stream=None, block=None):
        """Launch over n elements with the default configuration: a 1-D block
        of the occupancy-suggested size (256 on the CPU), and
        grid = ceil(n / block), so that thread i = blockIdx.x * blockDim.x +
        threadIdx.x covers element i (the kernel must check i < n)."""
        n = int(n)
        if n <= 0:
            raise ValueError(f"launch_n needs n > 0, got {n}")
        if block is None:
            dev = None
            for a in args:
                if isinstance(a, _core.ndarray):
                    dev = a.device
                    break
            key = (str(dev), shared_mem)
            block = self._suggested.get(key)
            if block is None:
                block = self._suggest_block(dev, int(shared_mem), 0)[1]
                self._suggested[key] = block
        grid = (n + block - 1) // block
        return self(grid, block, tuple(args), shared_mem, stream)

    def __repr__(self):
        return f"<cudakit.RawKernel {self.name!r}>"


_GLOBAL_DECL = re.compile(r"(?:__device__|__constant__)\s+(?:__constant__\s+|__device__\s+)?([A-Za-z_][\w\s<>]*?)\s+"
                          r"([A-Za-z_]\w*)\s*((?:\[\s*\d+\s*\])*)\s*[;=]")


class RawModule:
    """A CUDA C module: ``RawModule(code=..., options=(), name_expressions=None)``.

    ``get_function(name)`` gives a RawKernel (a name of an ``extern "C"``
    kernel, or one of name_expressions for a template instance, e.g.
    ``"axpy<float>"``); ``get_global(name)`` an array viewing a ``__device__``
    or ``__constant__`` variable (dtype and shape read from its declaration
    when they are plain, else pass them).
    """

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False):
        _check_backend(backend, translate_cucomplex, jitify)
        if (code is None) == (path is None):
            raise TypeError("RawModule takes exactly one of code= and path=")
        if path is not None:
            with open(path) as f:
                code = f.read()
        self.code = code
        self.options = tuple(options)
        self.name_expressions = tuple(name_expressions or ())
        self.backend = backend
        self._module = _core._Module(code, self.options, self.name_expressions, "kernel.cu")
        self._functions = {}
        self._lock = threading.Lock()

    def compile(self, device=None):
        """Compile (or load from the cache) for a device now."""
        self._module.compile(device)

    def get_function(self, name):
        with self._lock:
            k = self._functions.get(name)
            if k is None:
                k = RawKernel(self.code, name, self.options, self.backend, _module=self._module)
                self._functions[name] = k
            return k

    def get_global(self, name, dtype=None, shape=None, device=None):
        if dtype is None:
            m = None
            for g in _GLOBAL_DECL.finditer(_strip_comments(self.code)):
                if g.group(2) == name:
                    m = g
            if m is not None:
                t = _CTYPES.get(" ".join(m.group(1).split()))
                if t is not None:
                    dtype = t
                    if shape is None and m.group(3):
                        shape = tuple(int(x) for x in re.findall(r"\d+", m.group(3)))
        return self._module._get_global(name, device, dtype, shape)

    def __repr__(self):
        return f"<cudakit.RawModule with {len(self._functions)} function(s) loaded>"


class _SourceFunction:
    """PyCUDA's calling convention: f(*args, block=(x, y, z), grid=(x, y),
    shared=0, stream=None)."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.name = kernel.name

    def __call__(self, *args, block=None, grid=(1, 1), shared=0, stream=None, **kw):
        if block is None:
            raise TypeError("a SourceModule function needs block=(x, y, z)")
        if kw:
            raise TypeError(f"unexpected keyword arguments {sorted(kw)}")
        return self._kernel._launch(grid, block, args, shared, stream)

    def __getattr__(self, name):
        return getattr(self._kernel, name)


class SourceModule(RawModule):
    """PyCUDA's ``SourceModule(source, options=None, no_extern_c=False)``: the
    source is wrapped in ``extern "C" { }`` unless no_extern_c; functions
    launch as ``f(*args, block=(..), grid=(..), shared=.., stream=..)``."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=()):
        opts = list(options or ()) + ["-I" + d for d in include_dirs]
        if not no_extern_c:
            source = 'extern "C" {\n' + source + "\n}\n"
        super().__init__(code=source, options=tuple(opts))

    def get_function(self, name):
        return _SourceFunction(super().get_function(name))


# ------------------------------------------------------- generated kernels

_C_TYPES = {
    "bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
    "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
    "uint64": "unsigned long long", "float32": "float", "float64": "double",
    "complex64": "complex<float>", "complex128": "complex<double>",
}

# The generated code's helpers: CUDA C in the subset the CPU target supports.
_HELPERS = r"""
struct ck_ind_t {
    long long n_; const long long *c_;
    __device__ long long size() const { return n_; }
    __device__ const long long *get() const { return c_; }
};
template <typename T> struct ck_raw_t {
    T *p_; long long n_;
    __device__ T &operator[](long long k) const { return p_[k]; }
    __device__ long long size() const { return n_; }
};
"""

_COMPLEX_HELPERS = r"""
template <typename T> struct complex {
    T re_, im_;
    __device__ complex() : re_(0), im_(0) {}
    __device__ complex(T r) : re_(r), im_(0) {}
    __device__ complex(T r, T i) : re_(r), im_(i) {}
    template <typename U> __device__ complex(const complex<U> &o) : re_((T)o.re_), im_((T)o.im_) {}
    __device__ T real() const { return re_; }
    __device__ T imag() const { return im_; }
};
template <typename T> __device__ complex<T> operator+(complex<T> a, complex<T> b) { return complex<T>(a.re_ + b.re_, a.im_ + b.im_); }
template <typename T> __device__ complex<T> operator-(complex<T> a, complex<T> b) { return complex<T>(a.re_ - b.re_, a.im_ - b.im_); }
template <typename T> __device__ complex<T> operator-(complex<T> a) { return complex<T>(-a.re_, -a.im_); }
template <typename T> __device__ complex<T> operator*(complex<T> a, complex<T> b) { return complex<T>(a.re_ * b.re_ - a.im_ * b.im_, a.re_ * b.im_ + a.im_ * b.re_); }
template <typename T> __device__ complex<T> operator/(complex<T> a, complex<T> b) {
    T d = b.re_ * b.re_ + b.im_ * b.im_;
    return complex<T>((a.re_ * b.re_ + a.im_ * b.im_) / d, (a.im_ * b.re_ - a.re_ * b.im_) / d);
}
template <typename T> __device__ bool operator==(complex<T> a, complex<T> b) { return a.re_ == b.re_ && a.im_ == b.im_; }
template <typename T> __device__ bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
template <typename T> __device__ T real(complex<T> a) { return a.re_; }
template <typename T> __device__ T imag(complex<T> a) { return a.im_; }
template <typename T> __device__ complex<T> conj(complex<T> a) { return complex<T>(a.re_, -a.im_); }
template <typename T> __device__ T abs(complex<T> a) { return sqrt(a.re_ * a.re_ + a.im_ * a.im_); }
"""

_TYPE_NAMES = set(_C_TYPES) | {"float", "int", "complex", "float16", "half", "double", "single", "longlong",
                               "ulonglong", "intp", "uintp", "byte", "ubyte", "short", "ushort", "intc", "uintc",
                               "bool_", "float_", "int_", "complex_"}


def _dtype_name(t):
    return _np.dtype(t).name


def _ctype(dt):
    name = _dtype_name(dt)
    if name == "float16":
        raise NotImplementedError("float16 in generated kernels is not supported yet (use float32)")
    try:
        return _C_TYPES[name]
    except KeyError:
        raise TypeError(f"dtype {name} cannot be used in a kernel") from None


class _Param:
    __slots__ = ("raw", "ctype", "dtype", "name", "placeholder")

    def __init__(self, text):
        words = text.split()
        self.raw = False
        if words and words[0] == "raw":
            self.raw = True
            words = words[1:]
        if len(words) != 2:
            raise ValueError(f"bad kernel parameter {text!r}: want '[raw] type name'")
        t, self.name = words
        if not re.fullmatch(r"[A-Za-z_]\w*", self.name):
            raise ValueError(f"bad parameter name {self.name!r}")
        self.dtype = None
        self.placeholder = None
        try:
            if t in _TYPE_NAMES or not re.fullmatch(r"[A-Z]\w*", t):
                self.dtype = _np.dtype(t)
        except TypeError:
            self.dtype = None
        if self.dtype is None:
            self.placeholder = t


def _parse_params(text):
    text = text.strip()
    if not text:
        return []
    params = [_Param(p.strip()) for p in text.split(",")]
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"repeated parameter names in {text!r}")
    return params


def _is_array(x):
    return isinstance(x, _core.ndarray)


def _scalar_dtype(x):
    if isinstance(x, _np.generic):
        return x.dtype
    if isinstance(x, bool):
        return _np.dtype(bool)
    if isinstance(x, int):
        return _np.dtype("int64")
    if isinstance(x, float):
        return _np.dtype("float64")
    if isinstance(x, complex):
        return _np.dtype("complex128")
    raise TypeError(f"kernel argument of type {type(x).__name__} is neither an array nor a scalar")


def _resolve_types(in_params, out_params, args, outs):
    """Bind placeholders: from arrays first, then from scalars; then the
    dtype of each parameter."""
    types = {}
    for p, a in list(zip(in_params, args)) + [(p, o) for p, o in zip(out_params, outs) if o is not None]:
        if p.placeholder and _is_array(a):
            dt = _np.dtype(a.dtype.name)
            prev = types.setdefault(p.placeholder, dt)
            if prev != dt and p in in_params:
                # CuPy: the first binding wins; later inputs are cast to it
                pass
    for p, a in zip(in_params, args):
        if p.placeholder and not _is_array(a) and p.placeholder not in types:
            types[p.placeholder] = _scalar_dtype(a)
    dts = []
    for p in list(in_params) + list(out_params):
        if p.dtype is not None:
            dts.append(p.dtype)
        elif p.placeholder in types:
            dts.append(types[p.placeholder])
        else:
            raise TypeError(f"cannot determine the type of {p.placeholder!r} (parameter {p.name!r}) from the "
                            "arguments")
    return types, dts


def _launch_config(n, dev_is_cpu):
    block = 256
    grid = (n + block - 1) // block
    cap = (os.cpu_count() or 1) * 8 if dev_is_cpu else 1 << 20
    return max(1, min(grid, cap)), block


def _merge_dims(shape, strides_list):
    """Drop length-1 dims and merge dims that are contiguous for every
    operand (strides in bytes)."""
    dims = [(s, [st[d] for st in strides_list]) for d, s in enumerate(shape) if s != 1]
    if not dims:
        return (), [() for _ in strides_list]
    merged = [dims[0]]
    for s, sts in dims[1:]:
        ps, psts = merged[-1]
        if all(pst == st * s for pst, st in zip(psts, sts)):
            merged[-1] = (ps * s, sts)
        else:
            merged.append((s, sts))
    shape = tuple(s for s, _ in merged)
    return shape, [tuple(sts[k] for _, sts in merged) for k in range(len(strides_list))]


def _bcast_strides(a, shape):
    """Byte strides of array a broadcast to shape (0 where broadcast)."""
    nd = len(shape)
    off = nd - a.ndim
    st = [0] * nd
    for d in range(a.ndim):
        if a.shape[d] != 1:
            st[off + d] = a.strides[d]
    return st


class ElementwiseKernel:
    """CuPy's ``ElementwiseKernel(in_params, out_params, operation, name)``.

    Parameters are ``'[raw] type name'`` separated by commas, the type a
    dtype name (``float32``) or a placeholder (``T``) bound from the
    arguments (arrays first, then scalars).  The operation is CUDA C run once
    per element, with ``i`` the element index, ``_ind.size()`` the element
    count and ``_ind.get()[k]`` the k-th coordinate; a ``raw`` array is
    indexed by the operation itself (``a[j]``, ``a.size()``).  Inputs
    broadcast; outputs are allocated unless given (``out=`` / trailing
    positional arguments); every layout works (strided inputs through byte
    strides in the generated code); works on CPU and GPU arrays.
    """

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, options=(), loop_prep="", after_loop="", **kwargs):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        names = [p.name for p in self.in_params + self.out_params]
        if len(set(names)) != len(names):
            raise ValueError("input and output parameter names must differ")
        for p in self.out_params:
            if p.raw:
                pass
        self.operation = operation
        self.name = name
        self.preamble = preamble
        self.options = tuple(options)
        self.reduce_dims = reduce_dims
        self.no_return = no_return
        self.return_tuple = return_tuple
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self._uses_ind = "_ind.get" in operation
        self._cache = {}
        self._lock = threading.Lock()

    # ---- code generation
    def _source(self, dts, kinds, ndim, contig):
        """kinds[k]: 'a' array, 'r' raw, 's' scalar for each parameter."""
        params = self.in_params + self.out_params
        lines = []
        needs_complex = any(_dtype_name(d).startswith("complex") for d in dts)
        if needs_complex:
            lines.append(_COMPLEX_HELPERS)
        lines.append(_HELPERS)
        seen = set()
        for p, d in zip(params, dts):
            if p.placeholder and p.placeholder not in seen:
                seen.add(p.placeholder)
                lines.append(f"typedef {_ctype(d)} {p.placeholder};")
        if self.preamble:
            lines.append(self.preamble)
        sig = ["long long _n"] + [f"long long _sh{d}" for d in range(ndim)]
        for k, (p, d, kind) in enumerate(zip(params, dts, kinds)):
            ct = _ctype(d)
            if kind == "s":
                sig.append(f"{ct} {p.name}")
            elif kind == "r":
                sig.append(f"{ct} *_p_{p.name}")
                sig.append(f"long long _n_{p.name}")
            else:
                sig.append(f"{ct} *_p_{p.name}")
                if not contig:
                    sig += [f"long long _st{k}_{d}" for d in range(ndim)]
        body = []
        body.append("    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n; "
                    "i += (long long)blockDim.x * gridDim.x) {")
        need_coords = (not contig) or self._uses_ind
        if need_coords and ndim:
            body.append(f"        long long _c[{ndim}];")
            body.append("        { long long _r = i;")
            for d in reversed(range(ndim)):
                body.append(f"          _c[{d}] = _r % _sh{d}; _r /= _sh{d};")
            body.append("        }")
            body.append("        ck_ind_t _ind = {_n, _c};")
        else:
            body.append("        long long _c0 = i; ck_ind_t _ind = {_n, &_c0};")
        for k, (p, d, kind) in enumerate(zip(params, dts, kinds)):
            ct = _ctype(d)
            is_out = k >= self.nin
            if kind == "r":
                body.append(f"        ck_raw_t<{ct}> {p.name} = {{_p_{p.name}, _n_{p.name}}};")
            elif kind == "a":
                if contig:
                    ref = f"_p_{p.name}[i]"
                else:
                    off = " + ".join(f"_c[{d}] * _st{k}_{d}" for d in range(ndim)) or "0"
                    ref = f"*({ct} *)((char *)_p_{p.name} + ({off}))"
                if is_out:
                    body.append(f"        {ct} &{p.name} = {ref};")
                else:
                    body.append(f"        const {ct} {p.name} = {ref};")
        body.append("        (void)_ind;")
        body.append("        " + self.operation.strip().rstrip(";") + ";")
        body.append("    }")
        prep = ("    " + self.loop_prep + "\n") if self.loop_prep else ""
        after = ("    " + self.after_loop + "\n") if self.after_loop else ""
        src = "\n".join(lines) + f'\nextern "C" __global__ void {self.name}({", ".join(sig)})\n{{\n' + prep + \
            "\n".join(body) + "\n" + after + "}\n"
        return src

    def _kernel(self, key, dts, kinds, ndim, contig):
        k = self._cache.get(key)
        if k is None:
            src = self._source(dts, kinds, ndim, contig)
            sig = [("s", "int64")] + [("s", "int64")] * ndim
            for d, kind in zip(dts, kinds):
                name = _dtype_name(d)
                if kind == "s":
                    sig.append(("s", name))
                elif kind == "r":
                    sig += [("p", name), ("s", "int64")]
                else:
                    sig.append(("p", name))
                    if not contig:
                        sig += [("s", "int64")] * ndim
            k = RawKernel(src, self.name, self.options, _signature=sig)
            k.generated_source = src
            with self._lock:
                self._cache[key] = k
        return k

    def __call__(self, *args, size=None, block_size=None, stream=None, out=None, **kw):
        if kw:
            raise TypeError(f"unexpected keyword arguments {sorted(kw)}")
        n = len(args)
        if n == self.nin:
            outs = [None] * self.nout
        elif n == self.nargs:
            outs = list(args[self.nin:])
            args = args[:self.nin]
        else:
            raise TypeError(f"{self.name} takes {self.nin} or {self.nargs} arguments, got {n}")
        if out is not None:
            if self.nout != 1:
                raise ValueError("out= is for kernels with one output; pass the outputs as arguments")
            outs = [out]
        args = list(args)
        for o in outs:
            if o is not None and not _is_array(o):
                raise TypeError(f"outputs must be cudakit arrays, got {type(o).__name__}")
        # the device: of the arrays
        dev = None
        for a in args + outs:
            if _is_array(a):
                if dev is None:
                    dev = a.device
                elif str(a.device) != str(dev):
                    raise ValueError(f"{self.name}: arrays on {dev} and {a.device}")
        for k, a in enumerate(args):
            if not _is_array(a) and not isinstance(a, (int, float, complex, bool, _np.generic)):
                if isinstance(a, (list, tuple, _np.ndarray)):
                    args[k] = _core.asarray(a, device=dev)
                else:
                    raise TypeError(f"{self.name}: argument {k} ({type(a).__name__}) is neither an array nor a scalar")
        types, dts = _resolve_types(self.in_params, self.out_params, args, outs)
        # broadcast
        shapes = [a.shape for p, a in zip(self.in_params, args) if _is_array(a) and not p.raw]
        shapes += [o.shape for p, o in zip(self.out_params, outs) if o is not None and not p.raw]
        if shapes:
            shape = tuple(_np.broadcast_shapes(*shapes))
        elif size is not None:
            shape = (int(size),)
        else:
            raise ValueError(f"{self.name}: give size= when no non-raw array argument sets the loop's shape")
        if size is not None and shapes and _np.prod(shape) != size:
            raise ValueError(f"size={size} does not match the arrays' broadcast size {int(_np.prod(shape))}")
        if dev is None:
            dev = _core.get_default_device()
        # inputs of a fixed dtype cast to it; outputs allocated
        for k, p in enumerate(self.in_params):
            a = args[k]
            if _is_array(a) and _np.dtype(a.dtype.name) != dts[k]:
                args[k] = a.astype(dts[k].name)
        for j, p in enumerate(self.out_params):
            o = outs[j]
            want = dts[self.nin + j]
            if o is None:
                if p.raw:
                    raise ValueError(f"{self.name}: raw output {p.name!r} must be given")
                outs[j] = _core.empty(shape, dtype=want.name, device=dev)
            else:
                if _np.dtype(o.dtype.name) != want:
                    raise TypeError(f"{self.name}: output {p.name!r} is {o.dtype} but the kernel writes {want}")
                if not p.raw and tuple(o.shape) != shape:
                    raise ValueError(f"{self.name}: output {p.name!r} has shape {tuple(o.shape)}, the loop {shape}")
        allv = args + outs
        params = self.in_params + self.out_params
        kinds = []
        for p, a in zip(params, allv):
            if not _is_array(a):
                if p.raw:
                    raise TypeError(f"{self.name}: raw parameter {p.name!r} needs an array")
                kinds.append("s")
            else:
                kinds.append("r" if p.raw else "a")
        nel = 1
        for s in shape:
            nel *= s
        # raw arrays are indexed as flat C-order memory
        for k, (p, a) in enumerate(zip(params, allv)):
            if kinds[k] == "r" and not a.flags.c_contiguous:
                if k >= self.nin:
                    raise NotImplementedError(f"{self.name}: a raw output must be C-contiguous")
                allv[k] = a.copy()
        arr_idx = [k for k in range(len(params)) if kinds[k] == "a"]
        strides = [_bcast_strides(allv[k], shape) for k in arr_idx]
        contig = all(allv[k].flags.c_contiguous and tuple(allv[k].shape) == shape for k in arr_idx) \
            and not self._uses_ind
        if contig:
            lshape = (nel,)
            lstrides = [()] * len(arr_idx)
        elif self.reduce_dims and not self._uses_ind:
            lshape, lstrides = _merge_dims(shape, strides)
        else:
            lshape, lstrides = shape, strides
        ndim = len(lshape)
        if nel == 0:
            return self._result(outs)
        key = (tuple(d.str for d in dts), tuple(kinds), ndim, contig)
        kern = self._kernel(key, dts, kinds, ndim, contig)
        largs = [nel] + list(lshape)
        ai = 0
        for k, (p, a) in enumerate(zip(params, allv)):
            if kinds[k] == "s":
                largs.append(a)
            elif kinds[k] == "r":
                largs += [a, a.size]
            else:
                largs.append(a)
                if not contig:
                    largs += list(lstrides[ai])
                ai += 1
        is_cpu = str(dev).startswith("cpu")
        grid, block = _launch_config(nel, is_cpu)
        if block_size is not None:
            block = int(block_size)
            grid = max(1, min((nel + block - 1) // block, 1 << 20))
        kern(grid, block, tuple(largs), 0, stream)
        return self._result(outs)

    def _result(self, outs):
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    def __repr__(self):
        return f"<cudakit.ElementwiseKernel {self.name!r}>"


class ReductionKernel:
    """CuPy's ``ReductionKernel(in_params, out_params, map_expr, reduce_expr,
    post_map_expr, identity, name, reduce_type=None)``.

    ``map_expr`` maps the inputs of one element to a value of reduce_type
    (the output's type when None), ``reduce_expr`` combines two such values
    ``a`` and ``b``, ``post_map_expr`` writes the output from the result
    ``a`` (``'y = a'``), ``identity`` the value of an empty reduction (None:
    none, and an empty reduction is a ValueError).  Call with ``axis`` (int,
    tuple or None for all) and ``keepdims``.  A reduction over contiguous
    memory runs a block per output (a shared-memory tree); a strided one a
    thread per output.
    """

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, reduce_dims=True, preamble="", options=()):
        self.in_params = _parse_params(in_params)
        self.out_params = _parse_params(out_params)
        if len(self.out_params) != 1:
            raise NotImplementedError("ReductionKernel supports one output")
        self.nin = len(self.in_params)
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = None if identity is None else str(identity)
        self.name = name
        self.reduce_type = reduce_type
        self.preamble = preamble
        self.options = tuple(options)
        self._cache = {}
        self._lock = threading.Lock()

    _BLOCK = 256

    def _source(self, dts, kinds, rtype, nouter, ninner, mode):
        params = self.in_params + self.out_params
        lines = []
        if any(_dtype_name(d).startswith("complex") for d in dts) or rtype.startswith("complex"):
            lines.append(_COMPLEX_HELPERS)
        lines.append(_HELPERS)
        seen = set()
        for p, d in zip(params, dts):
            if p.placeholder and p.placeholder not in seen:
                seen.add(p.placeholder)
                lines.append(f"typedef {_ctype(d)} {p.placeholder};")
        lines.append(f"typedef {rtype} _type_reduce;")
        if self.preamble:
            lines.append(self.preamble)
        lines.append("__device__ __forceinline__ _type_reduce _ck_combine(const _type_reduce &a, const _type_reduce &b)"
                     f" {{ return ({self.reduce_expr}); }}")
        sig = ["long long _nout", "long long _nred"] + [f"long long _osh{d}" for d in range(nouter)] + \
              [f"long long _ish{d}" for d in range(ninner)]
        for k, (p, d, kind) in enumerate(zip(params, dts, kinds)):
            ct = _ctype(d)
            if kind == "s":
                sig.append(f"{ct} {p.name}")
            elif kind == "r":
                sig += [f"{ct} *_p_{p.name}", f"long long _n_{p.name}"]
            else:
                sig.append(f"{ct} *_p_{p.name}")
                sig += [f"long long _os{k}_{d}" for d in range(nouter)]
                if k < self.nin:
                    sig += [f"long long _is{k}_{d}" for d in range(ninner)]
        has_id = self.identity is not None
        B = self._BLOCK

        def offsets(var, shp, prefix, which):
            out = [f"{{ long long _r = {var};"]
            for d in reversed(range(shp)):
                adds = " ".join(f"{prefix}{k} += _cc * _{which}s{k}_{d};" for k, kind in enumerate(kinds)
                                if kind == "a" and (which == "o" or k < self.nin))
                out.append(f"  {{ long long _cc = _r % _{which}sh{d}; _r /= _{which}sh{d}; {adds} }}")
            out.append("}")
            return "\n            ".join(out)

        arrs = [k for k, kind in enumerate(kinds) if kind == "a"]
        ins = [k for k in arrs if k < self.nin]
        b = []
        if mode == "block":
            b.append(f"    __shared__ _type_reduce _sdata[{B}];")
            if not has_id:
                b.append(f"    __shared__ bool _shas[{B}];")
            b.append("    for (long long _o = blockIdx.x; _o < _nout; _o += gridDim.x) {")
            jloop = "for (long long _j = threadIdx.x; _j < _nred; _j += blockDim.x)"
        else:
            b.append("    for (long long _o = (long long)blockIdx.x * blockDim.x + threadIdx.x; _o < _nout; "
                     "_o += (long long)blockDim.x * gridDim.x) {")
            jloop = "for (long long _j = 0; _j < _nred; _j++)"
        b.append("        " + " ".join(f"long long _oo{k} = 0;" for k in arrs))
        b.append("        " + offsets("_o", nouter, "_oo", "o"))
        b.append("        _type_reduce _acc" + (f" = ({self.identity});" if has_id else "; bool _has = false;"))
        b.append(f"        {jloop} {{")
        b.append("            " + " ".join(f"long long _io{k} = _oo{k};" for k in ins))
        b.append("            " + offsets("_j", ninner, "_io", "i"))
        for k, (p, d, kind) in enumerate(zip(params, dts, kinds)):
            if k >= self.nin:
                continue
            ct = _ctype(d)
            if kind == "a":
                b.append(f"            const {ct} {p.name} = *(const {ct} *)((const char *)_p_{p.name} + _io{k});")
            elif kind == "r":
                b.append(f"            ck_raw_t<{ct}> {p.name} = {{_p_{p.name}, _n_{p.name}}};")
        b.append(f"            _type_reduce _v = ({self.map_expr});")
        if has_id:
            b.append("            _acc = _ck_combine(_acc, _v);")
        else:
            b.append("            _acc = _has ? _ck_combine(_acc, _v) : _v; _has = true;")
        b.append("        }")
        if mode == "block":
            b.append("        _sdata[threadIdx.x] = _acc;")
            if not has_id:
                b.append("        _shas[threadIdx.x] = _has;")
            b.append("        __syncthreads();")
            b.append("        for (unsigned _s = blockDim.x / 2; _s > 0; _s >>= 1) {")
            b.append("            if (threadIdx.x < _s) {")
            if has_id:
                b.append("                _sdata[threadIdx.x] = _ck_combine(_sdata[threadIdx.x], "
                         "_sdata[threadIdx.x + _s]);")
            else:
                b.append("                if (_shas[threadIdx.x + _s]) { _sdata[threadIdx.x] = _shas[threadIdx.x] ? "
                         "_ck_combine(_sdata[threadIdx.x], _sdata[threadIdx.x + _s]) : _sdata[threadIdx.x + _s]; "
                         "_shas[threadIdx.x] = true; }")
            b.append("            }")
            b.append("            __syncthreads();")
            b.append("        }")
            b.append("        if (threadIdx.x == 0) {")
            b.append("            _type_reduce a = _sdata[0];")
        else:
            b.append("        {")
            b.append("            _type_reduce a = _acc;")
        op = self.out_params[0]
        k = self.nin
        oct_ = _ctype(dts[k])
        b.append(f"            {oct_} &{op.name} = *({oct_} *)((char *)_p_{op.name} + _oo{k});")
        for kk, (p, d, kind) in enumerate(zip(params, dts, kinds)):
            if kk < self.nin and kind == "r":
                b.append(f"            ck_raw_t<{_ctype(d)}> {p.name} = {{_p_{p.name}, _n_{p.name}}};")
        b.append("            (void)a;")
        b.append("            " + self.post_map_expr.strip().rstrip(";") + ";")
        b.append("        }")
        if mode == "block":
            b.append("        __syncthreads();")
        b.append("    }")
        return "\n".join(lines) + f'\nextern "C" __global__ void {self.name}({", ".join(sig)})\n{{\n' + \
            "\n".join(b) + "\n}\n"

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None, **kw):
        if kw:
            raise TypeError(f"unexpected keyword arguments {sorted(kw)}")
        if len(args) == self.nin + 1:
            if out is not None:
                raise TypeError("output given twice")
            out = args[-1]
            args = args[:-1]
        if len(args) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(args)}")
        args = list(args)
        dev = None
        for a in args + ([out] if out is not None else []):
            if _is_array(a):
                if dev is None:
                    dev = a.device
                elif str(a.device) != str(dev):
                    raise ValueError(f"{self.name}: arrays on {dev} and {a.device}")
        for k, a in enumerate(args):
            if isinstance(a, (list, tuple, _np.ndarray)):
                args[k] = _core.asarray(a, device=dev)
        types, dts = _resolve_types(self.in_params, self.out_params, args, [out])
        for k, p in enumerate(self.in_params):
            if _is_array(args[k]) and _np.dtype(args[k].dtype.name) != dts[k]:
                args[k] = args[k].astype(dts[k].name)
        shapes = [a.shape for p, a in zip(self.in_params, args) if _is_array(a) and not p.raw]
        if not shapes:
            raise ValueError(f"{self.name}: needs at least one non-raw array input")
        shape = tuple(_np.broadcast_shapes(*shapes))
        nd = len(shape)
        if axis is None:
            axes = tuple(range(nd))
        else:
            axes = (axis,) if isinstance(axis, int) else tuple(axis)
            norm = []
            for ax in axes:
                if not -nd <= ax < nd:
                    raise _core.AxisError(f"axis {ax} is out of bounds for array of dimension {nd}")
                norm.append(ax % nd)
            if len(set(norm)) != len(norm):
                raise ValueError("duplicate value in 'axis'")
            axes = tuple(sorted(norm))
        kept = [d for d in range(nd) if d not in axes]
        out_shape = tuple(1 if d in axes else shape[d] for d in range(nd)) if keepdims else \
            tuple(shape[d] for d in kept)
        odt = dts[self.nin]
        if out is None:
            out = _core.empty(out_shape, dtype=odt.name, device=dev)
        else:
            if tuple(out.shape) != out_shape:
                raise ValueError(f"{self.name}: out has shape {tuple(out.shape)}, the result {out_shape}")
            if _np.dtype(out.dtype.name) != odt:
                raise TypeError(f"{self.name}: out is {out.dtype}, the kernel writes {odt}")
        nout = 1
        for d in kept:
            nout *= shape[d]
        nred = 1
        for d in axes:
            nred *= shape[d]
        if nout == 0:
            return out
        if nred == 0 and self.identity is None:
            raise ValueError(f"zero-size array to reduction operation {self.name} which has no identity")
        params = self.in_params + self.out_params
        allv = args + [out]
        kinds = []
        for p, a in zip(params, allv):
            kinds.append("s" if not _is_array(a) else ("r" if p.raw else "a"))
        # strides of the kept (outer) and reduced (inner) dims per operand
        ost, ist = [], []
        for k, (p, a) in enumerate(zip(params, allv)):
            if kinds[k] != "a":
                ost.append(None)
                ist.append(None)
                continue
            if k < self.nin:
                st = _bcast_strides(a, shape)
                ost.append([st[d] for d in kept])
                ist.append([st[d] for d in axes])
            else:
                ost_k = list(a.strides)
                if keepdims:
                    ost_k = [ost_k[d] for d in kept]
                ost.append(ost_k)
                ist.append([])
        oshape = [shape[d] for d in kept]
        ishape = [shape[d] for d in axes]
        # merge contiguous runs of each group
        arr = [k for k in range(len(params)) if kinds[k] == "a"]
        oshape, om = _merge_dims(oshape, [ost[k] for k in arr])
        in_arr = [k for k in arr if k < self.nin]
        ishape, im = _merge_dims(ishape, [ist[k] for k in in_arr])
        for j, k in enumerate(arr):
            ost[k] = list(om[j])
        for j, k in enumerate(in_arr):
            ist[k] = list(im[j])
        nouter, ninner = len(oshape), len(ishape)
        # a block per output when the reduced run is contiguous (or there are few outputs)
        first = in_arr[0] if in_arr else None
        contig_inner = first is not None and ninner > 0 and \
            abs(ist[first][-1]) == allv[first].itemsize
        mode = "block" if ((contig_inner and nred >= 16) or (nout < 1024 and nred >= 32)) else "thread"
        rtype = self._rtype(types, dts)
        key = (tuple(d.str for d in dts), tuple(kinds), nouter, ninner, mode, rtype)
        kern = self._cache.get(key)
        if kern is None:
            src = self._source(dts, kinds, rtype, nouter, ninner, mode)
            sig = [("s", "int64")] * (2 + nouter + ninner)
            for k, (d, kind) in enumerate(zip(dts, kinds)):
                if kind == "s":
                    sig.append(("s", d.name))
                elif kind == "r":
                    sig += [("p", d.name), ("s", "int64")]
                else:
                    sig.append(("p", d.name))
                    sig += [("s", "int64")] * (nouter + (ninner if k < self.nin else 0))
            kern = RawKernel(src, self.name, self.options, _signature=sig)
            kern.generated_source = src
            with self._lock:
                self._cache[key] = kern
        largs = [nout, nred] + list(oshape) + list(ishape)
        for k, (p, a) in enumerate(zip(params, allv)):
            if kinds[k] == "s":
                largs.append(a)
            elif kinds[k] == "r":
                largs += [a, a.size]
            else:
                largs.append(a)
                largs += ost[k]
                if k < self.nin:
                    largs += ist[k]
        is_cpu = str(dev if dev is not None else out.device).startswith("cpu")
        B = self._BLOCK
        if mode == "block":
            # a power of two (the tree halves it) no larger than the run
            while B > 32 and B // 2 >= nred:
                B //= 2
            grid = max(1, min(nout, (1 << 20) if not is_cpu else (os.cpu_count() or 1) * 8))
        else:
            grid, _ = _launch_config(nout, is_cpu)
        kern(grid, B, tuple(largs), 0, stream)
        return out

    def _rtype(self, types, dts):
        rt = self.reduce_type
        if rt is None:
            return _ctype(dts[self.nin])
        if rt in types:
            return _ctype(types[rt])
        try:
            return _ctype(_np.dtype(rt))
        except TypeError:
            return rt  # a C type name

    def __repr__(self):
        return f"<cudakit.ReductionKernel {self.name!r}>"


from ._fuse import fuse  # noqa: E402,F401
