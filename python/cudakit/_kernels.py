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
  an integer parameter or a complex into a real one);
* a parameter of a type cudakit cannot size from the source (a struct, a
  typedef it cannot resolve, a template parameter) takes only a NumPy
  scalar or structured scalar (``np.void``) of exactly its size in the
  compiled kernel, else ``TypeError``;
* where the signature could not be read at all: ``int`` -> ``long long``,
  ``float`` -> ``double``, ``bool`` -> ``bool``, ``complex`` ->
  ``complex<double>``, and the value must have the parameter's size where
  the target reports it;
* anything else is a ``TypeError``.

The signature is read from the source, in C (the scanner of
src/runtime/cpu_kernels/scanner.c): an ``extern "C" __global__`` kernel by
its name, a template instance by its template's declaration; typedefs,
``using``, object-like ``#define`` and ``-D`` names of known types resolve.
docs/kernels.md has the whole story, bounds mode's included.
"""
import os
import re
import threading

import numpy as _np

from . import _core

__all__ = ["RawKernel", "RawModule", "SourceModule", "In", "Out", "InOut", "ArgumentHandler", "ElementwiseKernel",
           "ReductionKernel", "fuse", "debug"]

_DEBUG = "CUDAKIT_DEBUG" in os.environ

# ---------------------------------------------------------------- signatures

# the dtype of a C type name as signatures spell it (None: not a plain type)
_ctype_dtype = _core._ukernel_dtype_of_ctype
# [(kind, dtype name or None, name, type)] of a kernel as its source declares
# it (kind 'p' pointer, 's' scalar, 'o' a type cudakit cannot size), or None:
# the scanner's reading (src/runtime/cpu_kernels/scanner.c), which the
# launch uses too
_kernel_signature = _core._kernel_signature
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_identifier(name, what="kernel name"):
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"{what} {name!r} is not an identifier (letters, digits and _, not starting with a digit): "
                         "it is pasted into the kernel's source")


def _strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


class debug:
    """``ck.debug(bounds=True)``: check every access a CUDA C kernel makes to
    its array arguments on CPU arrays; one outside the bytes an argument's
    view spans raises IndexError naming the kernel, block, thread, argument
    and element, at any distance (CUDAKIT_BOUNDS=1 does the same from the
    environment; docs/kernels.md says exactly what is checked).  Without
    it an out-of-bounds write is undefined behaviour: on the CPU it
    corrupts the process's memory.  A call sets the mode; used as a context
    manager (``with ck.debug(bounds=True): ...``) it restores the previous
    mode on exit."""

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
                 enable_cooperative_groups=False, jitify=False, _module=None):
        _check_backend(backend, translate_cucomplex, jitify)
        if _module is None:
            _module = _core._Module(code, tuple(options), (), "kernel.cu")
        self._setup(_module, name)
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
        """The RawKernel of the module's kernel name (an extern "C" name, or one of the
        name_expressions), made once.
        """
        with self._lock:
            k = self._functions.get(name)
            if k is None:
                k = RawKernel(self.code, name, self.options, self.backend, _module=self._module)
                self._functions[name] = k
            return k

    def get_global(self, name, dtype=None, shape=None, device=None):
        """An array on the memory of the module's __device__ or __constant__ variable name (dtype and
        shape read from its declaration when they are plain, else give them) on device.
        """
        if dtype is None:
            m = None
            for g in _GLOBAL_DECL.finditer(_strip_comments(self.code)):
                if g.group(2) == name:
                    m = g
            if m is not None:
                t = _ctype_dtype(" ".join(m.group(1).split()))
                if t is not None:
                    dtype = t
                    if shape is None and m.group(3):
                        shape = tuple(int(x) for x in re.findall(r"\d+", m.group(3)))
        return self._module._get_global(name, device, dtype, shape)

    def __repr__(self):
        return f"<cudakit.RawModule with {len(self._functions)} function(s) loaded>"


class ArgumentHandler:
    """PyCUDA's wrapper of a host array passed to a SourceModule function:
    ``In(a)`` is copied to the launch's device before it, ``Out(a)`` is
    copied back into ``a`` after it (its device buffer starts uninitialised,
    as PyCUDA's), ``InOut(a)`` both.  The launch's device is that of the
    call's cudakit arrays, else the default device; the copies are on the
    launch's stream, and a call with ``Out``/``InOut`` returns once the
    results are in the host arrays.  The kernel sees a C-contiguous buffer
    whatever the host view's strides (on the CPU, a C-contiguous host array
    may be that buffer).  A cudakit array wrapped is passed as it is (no
    copy)."""

    copy_in = copy_out = False

    def __init__(self, array):
        if not isinstance(array, _core.ndarray):
            if self.copy_out and not isinstance(array, _np.ndarray):
                raise TypeError(f"{type(self).__name__}() takes a NumPy array (it is written back), "
                                f"got {type(array).__name__}")
            array = _np.asarray(array)
            if self.copy_out and not array.flags.writeable:
                raise ValueError(f"{type(self).__name__}(): the NumPy array is read-only, so the kernel's "
                                 "results cannot be copied back into it")
        self.array = array

    def _device_array(self, device):
        a = self.array
        if isinstance(a, _core.ndarray):
            return a
        if self.copy_in:   # the kernel sees a pointer: a C-contiguous copy of any view
            return _core.asarray(_np.ascontiguousarray(a), device=device)
        return _core.empty(a.shape, dtype=a.dtype, device=device)

    def __repr__(self):
        return f"{type(self).__name__}({self.array!r})"


class In(ArgumentHandler):
    """PyCUDA's ``drv.In(a)``: a host array the kernel reads (copied to the device before the launch)."""
    copy_in = True


class Out(ArgumentHandler):
    """PyCUDA's ``drv.Out(a)``: a host array the kernel writes (copied back after the launch)."""
    copy_out = True


class InOut(ArgumentHandler):
    """PyCUDA's ``drv.InOut(a)``: copied to the device before the launch and back after it."""
    copy_in = copy_out = True


class _SourceFunction:
    """PyCUDA's calling convention: f(*args, block=(x, y, z), grid=(x, y),
    shared=0, stream=None); host arrays go in In/Out/InOut."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.name = kernel.name

    def __call__(self, *args, block=None, grid=(1, 1), shared=0, stream=None, **kw):
        if block is None:
            raise TypeError("a SourceModule function needs block=(x, y, z)")
        if kw:
            raise TypeError(f"unexpected keyword arguments {sorted(kw)}")
        handled = False
        for i, a in enumerate(args):
            if isinstance(a, _np.ndarray):
                raise TypeError(f"kernel {self.name!r}: argument {i} is a NumPy array; pass it as "
                                "cudakit.In(a), cudakit.Out(a) or cudakit.InOut(a) to have it copied "
                                "to the device and back, as PyCUDA's drv.In/Out/InOut")
            handled = handled or isinstance(a, ArgumentHandler)
        if not handled:
            return self._kernel._launch(grid, block, args, shared, stream)
        device = None
        for a in args:
            a = a.array if isinstance(a, ArgumentHandler) else a
            if isinstance(a, _core.ndarray):
                device = a.device
                break
        if stream is None:
            return self._launch_handled(args, device, grid, block, shared, None)
        with stream:
            return self._launch_handled(args, device, grid, block, shared, stream)

    def _launch_handled(self, args, device, grid, block, shared, stream):
        dargs = tuple(a._device_array(device) if isinstance(a, ArgumentHandler) else a for a in args)
        self._kernel._launch(grid, block, dargs, shared, stream)
        for a, d in zip(args, dargs):
            if isinstance(a, ArgumentHandler) and a.copy_out and d is not a.array:
                a.array[...] = _core.asnumpy(d)

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
        """The kernel name with PyCUDA's calling convention: f(*args, block=(x, y, z), grid=(x, y),
        shared=0, stream=None).
        """
        return _SourceFunction(super().get_function(name))


# ------------------------------------------------------- generated kernels
# The source, the signature and each call's launch arguments come from C
# (src/codegen/user_kernel_codegen.c); the classes bind the arguments'
# dtypes, allocate outputs and keep one kernel a (dtypes, layout class).

# the C type a generated kernel names a dtype by (NotImplementedError for float16)
_ctype = _core._ukernel_ctype


class _Param:
    __slots__ = ("raw", "dtype", "name", "placeholder")

    def __init__(self, text):
        words = text.split()
        self.raw = False
        if words and words[0] == "raw":
            self.raw = True
            words = words[1:]
        if len(words) != 2:
            raise ValueError(f"bad kernel parameter {text!r}: want '[raw] type name'")
        t, self.name = words
        _check_identifier(self.name, "parameter name")
        self.dtype = None
        self.placeholder = None
        # a capitalised name is a placeholder; so is any other that is not a dtype
        try:
            if not re.fullmatch(r"[A-Z]\w*", t):
                self.dtype = _np.dtype(t)
        except TypeError:
            self.dtype = None
        if self.dtype is None:
            _check_identifier(t, f"type of parameter {self.name!r}")
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
        _check_identifier(name)
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
        self._pnames = tuple((p.name, p.placeholder) for p in self.in_params + self.out_params)
        self._cache = {}
        self._lock = threading.Lock()

    # ---- code generation
    def _source(self, dts, kinds, ndim, contig):
        """The kernel's CUDA C for parameter dtypes dts and kinds ('a' array,
        'r' raw, 's' scalar, one a parameter) over ndim loop dims."""
        return self._generate(dts, kinds, ndim, contig)[0]

    def _generate(self, dts, kinds, ndim, contig):
        return _core._ukernel_ew_source(self.name, self.operation, self.preamble, self.loop_prep, self.after_loop,
                                        self._pnames, tuple(dts), "".join(kinds), self.nin, ndim, contig,
                                        self._uses_ind)

    def _kernel(self, key, dts, kinds, ndim, contig):
        src, _ = self._generate(dts, kinds, ndim, contig)
        k = RawKernel(src, self.name, self.options)
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
            shape = _core.broadcast_shapes(*shapes)
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
        kinds = "".join(kinds)
        nel = 1
        for s in shape:
            nel *= s
        # raw arrays are indexed as flat C-order memory
        for k, (p, a) in enumerate(zip(params, allv)):
            if kinds[k] == "r" and not a.flags.c_contiguous:
                if k >= self.nin:
                    raise NotImplementedError(f"{self.name}: a raw output must be C-contiguous")
                allv[k] = a.copy()
        if nel == 0:
            return self._result(outs)
        uses_ind = self._uses_ind
        ndim, contig, largs = _core._ukernel_ew_args(tuple(allv), kinds, shape, self.reduce_dims and not uses_ind,
                                                     not uses_ind)
        key = (tuple(dts), kinds, ndim, contig)
        kern = self._cache.get(key)
        if kern is None:
            kern = self._kernel(key, dts, kinds, ndim, contig)
        is_cpu = str(dev).startswith("cpu")
        grid, block = _launch_config(nel, is_cpu)
        if block_size is not None:
            block = int(block_size)
            grid = max(1, min((nel + block - 1) // block, 1 << 20))
        kern(grid, block, largs, 0, stream)
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
        _check_identifier(name)
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
        self._pnames = tuple((p.name, p.placeholder) for p in self.in_params + self.out_params)
        self._cache = {}
        self._lock = threading.Lock()

    _BLOCK = 256

    def _source(self, dts, kinds, rtype, nouter, ninner, mode):
        """The kernel's CUDA C for parameter dtypes dts and kinds, reducing to
        C type rtype, over nouter output and ninner reduced dims, mode
        "block" (a block per output) or "thread"."""
        return self._generate(dts, kinds, rtype, nouter, ninner, mode == "block")[0]

    def _generate(self, dts, kinds, rtype, nouter, ninner, block):
        return _core._ukernel_red_source(self.name, self.map_expr, self.reduce_expr, self.post_map_expr,
                                         self.identity, self.preamble, rtype, self._pnames, tuple(dts),
                                         "".join(kinds), self.nin, nouter, ninner, block)

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
        shape = _core.broadcast_shapes(*shapes)
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
        kinds = "".join("s" if not _is_array(a) else ("r" if p.raw else "a") for p, a in zip(params, allv))
        mask = 0
        for d in axes:
            mask |= 1 << d
        nouter, ninner, block_mode, largs = _core._ukernel_red_args(tuple(allv), kinds, self.nin, shape, mask,
                                                                    keepdims)
        rtype = self._rtype(types, dts)
        key = (tuple(dts), kinds, nouter, ninner, block_mode, rtype)
        kern = self._cache.get(key)
        if kern is None:
            src, _ = self._generate(dts, kinds, rtype, nouter, ninner, block_mode)
            kern = RawKernel(src, self.name, self.options)
            kern.generated_source = src
            with self._lock:
                self._cache[key] = kern
        is_cpu = str(dev if dev is not None else out.device).startswith("cpu")
        B = self._BLOCK
        if block_mode:
            # a power of two (the tree halves it) no larger than the run
            while B > 32 and B // 2 >= nred:
                B //= 2
            grid = max(1, min(nout, (1 << 20) if not is_cpu else (os.cpu_count() or 1) * 8))
        else:
            grid, _ = _launch_config(nout, is_cpu)
        kern(grid, B, largs, 0, stream)
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
