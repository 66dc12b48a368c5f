"""cuda.jit: kernels and device functions written in Python, as Numba's.

    from cudakit import cuda

    @cuda.jit
    def add_one(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + 1

    add_one[blocks, threads](x, out)      # compiled for these argument types on first use

The function's syntax tree is read once (_tree.py); each new list of
argument types is translated to CUDA C in C (src/codegen/pykernel/),
compiled for the launch's device (NVRTC, or the system C++ compiler for the
CPU) and cached on disk; launches go through _core._PyKernel, in C.
"""
import math as _math
import os as _os
import warnings as _warnings

import numpy as _np

from .. import _core
from . import _tree
from . import types as _types


_MARK = "/* ---------------- translated from Python ---------------- */"


class CompilerError(Exception):
    """A kernel could not be compiled."""


class TypingError(CompilerError, TypeError):
    """A kernel's code does not type: says the kernel, file, line and column, with the line and a caret."""


class UnsupportedError(CompilerError, NotImplementedError):
    """A kernel uses a construct the kernel language does not have (try, with, comprehensions, objects)."""


class KernelArgumentWarning(UserWarning):
    """A kernel argument is copied around a launch (a NumPy array on a GPU launch)."""


PerformanceWarning = KernelArgumentWarning


def _resolve(value, devfunc_index):
    """What a name a kernel reads is: ("builtin", qualified name), ("dtype", name),
    ("devfunc", number) or (None, None)."""
    q = getattr(value, "_ck_builtin", None)
    if isinstance(q, str):
        return "builtin", q
    if isinstance(value, DeviceFunction):
        return "devfunc", devfunc_index(value)
    if isinstance(value, Dispatcher):
        raise TypingError(f"the kernel {value.__name__!r} is called from a kernel: only device functions "
                          f"(@cuda.jit(device=True)) can be")
    if isinstance(value, _types.Scalar):
        return "dtype", value.name
    if isinstance(value, _core.dtype):
        return "dtype", value.name
    if isinstance(value, _np.dtype) and value.kind in "biufc":
        return "dtype", value.name
    mod = getattr(value, "__name__", None)
    if mod in ("cudakit.cuda", "numba.cuda"):
        return "builtin", "cuda"
    if mod in ("cudakit.cuda.random", "numba.cuda.random"):
        return "builtin", "cuda.random"
    if mod in ("cudakit", "numba") and hasattr(value, "cuda"):
        return None, None
    return None, None


class _Module:
    """The tree text of a kernel and the device functions it calls, each def
    with the bindings of the names it reads; the raise sites' messages."""

    def __init__(self, root):
        self.funcs = [root]
        self.raises = []
        self.defs = []
        i = 0
        while i < len(self.funcs):
            self.defs.append(self._def(self.funcs[i]))
            i += 1
        self.text = "(module 0 0 %s)" % " ".join(self.defs)

    def _index(self, f):
        for i, g in enumerate(self.funcs):
            if g is f:
                return i
        self.funcs.append(f)
        return len(self.funcs) - 1

    def _def(self, f):
        src = f._source()
        w = _tree._Writer(f.__name__, self.raises)
        text = src.text(w)
        free = sorted(w.names - w.assigned)
        values = _tree.free_values(f.py_func, free)
        binds = []
        for name in free:
            if name not in values:
                continue
            v = values[name]
            binds.append(_tree.binding(name, v, lambda val: _resolve(val, self._index)))
        return text[:-1] + " (targets 0 0 %s))" % " ".join(binds)


def _format_error(exc, fn, src, kind):
    """The message of a translation error: where, the line, a caret under the column, what."""
    line = getattr(exc, "lineno", 0) or 0
    col = getattr(exc, "col_offset", 0) or 0
    where = f"kernel {fn.__name__!r}" if kind == "kernel" else f"device function {fn.__name__!r}"
    if not line:
        return f"Failed in {where}: {exc}"
    text = src.line(line)
    indent = len(text) - len(text.lstrip())
    return (f"Failed in {where} ({src.filename}, line {line}, column {col}):\n"
            f"    {text.strip()}\n    {' ' * max(0, col - 1 - indent)}^\n{exc}")


def _raise_translation_error(exc, disp):
    line = getattr(exc, "lineno", 0) or 0
    src = disp._source()
    # the line may be in a device function's file: find whose lines hold it
    for f in getattr(disp, "_module_funcs", [disp]):
        s = f._source()
        if s.first <= line < s.first + len(s.lines) and f is not disp:
            src = s
    text = _format_error(exc, disp, src, "kernel" if isinstance(disp, Dispatcher) else "device")
    cls = UnsupportedError if isinstance(exc, NotImplementedError) else TypingError
    err = cls(text)
    err.lineno = line
    err.col_offset = getattr(exc, "col_offset", 0)
    raise err from None


class _FunctionBase:
    """What kernels and device functions share: the Python function, its source, options."""

    def _init_fn(self, py_func, options):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = getattr(py_func, "__qualname__", py_func.__name__)
        self.__doc__ = py_func.__doc__
        self.__module__ = py_func.__module__
        self._options = options
        self._src = None

    def _source(self):
        if self._src is None:
            self._src = _tree.FunctionSource(self.py_func)
        return self._src


class DeviceFunction(_FunctionBase):
    """A function kernels call (@cuda.jit(device=True)); typed for each call's argument types."""

    def __init__(self, py_func, options):
        self._init_fn(py_func, options)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"the device function {self.__name__!r} can only be called from a kernel or another "
                           f"device function")

    def __repr__(self):
        return f"<cudakit device function {self.__qualname__}>"


class Dispatcher(_core._PyKernel, _FunctionBase):
    """A kernel: kernel[griddim, blockdim](*args), compiled for each list of
    argument types on first use (or for the declared signatures)."""

    def __init__(self, py_func, signatures=None, **options):
        self._init_fn(py_func, options)
        self._sigs = [_types.parse(s) for s in signatures] if signatures else None
        self._module = None
        self._modules = {}        # source -> _core._Module
        self._sources = {}        # argument types -> (source, kernel name, parameters, grid sync)
        self._checked = {}        # the same, translated with index checks for bounds mode on the CPU
        self._written_masks = {}  # argument types -> the array parameters the kernel may write (bits)
        self._raises = []
        if self._sigs:
            for s in self._sigs:
                if s.return_type is not _types.void:
                    raise TypeError(f"a kernel returns nothing: its signature is void(...), not {s}")
                self._translate(tuple(self._signature_types(s)))

    # ---------------------------------------------------------- typing
    @staticmethod
    def _signature_types(sig):
        out = []
        for a in sig.args:
            if isinstance(a, _types.Array):
                out.append((1, a.dtype.name, a.ndim, a.layout, int(a.readonly)))
            elif isinstance(a, _types.Scalar):
                out.append((0, a.name, 0, "C", 0))
            else:
                raise TypeError(f"a kernel parameter is a scalar or an array type, not {a}")
        return out

    def _tree(self):
        if self._module is None:
            self._module = _Module(self)
            self._module_funcs = self._module.funcs
            self._raises = self._module.raises
        return self._module.text

    def _compile_options(self):
        o = self._options
        # what a translated kernel uses is in its own preludes: none of the CUDA
        # runtime's device API NVRTC declares by default (a fifth less compile)
        opts = ["--minimal"]
        if o.get("fastmath"):
            opts.append("-use_fast_math")
        if o.get("lineinfo"):
            opts.append("-lineinfo")
        if o.get("max_registers"):
            opts.append(f"-maxrregcount={int(o['max_registers'])}")
        return tuple(opts)

    def _translate_options(self, checked=False):
        lb = self._options.get("launch_bounds")
        if isinstance(lb, (tuple, list)):
            lb = lb[0] if lb else None
        return {"debug": int(bool(self._options.get("debug")) or checked),
                "lineinfo": int(bool(self._options.get("lineinfo"))),
                "fastmath": int(bool(self._options.get("fastmath"))), "launch_bounds": int(lb or 0),
                "no_coarsen": int(not self._options.get("coarsen", True)),
                "no_prefetch": int(_os.environ.get("CUDAKIT_PYK_PREFETCH", "1") == "0"),
                "no_vector": int(_os.environ.get("CUDAKIT_PYK_VECTOR", "1") == "0"),
                "filename": self._source().filename}

    def _translate(self, argtypes, checked=False):
        key = tuple(tuple(t) for t in argtypes)
        debug = bool(self._options.get("debug"))
        cache = self._checked if checked and not debug else self._sources
        if key in cache:
            return cache[key]
        opts = self._translate_options(checked)
        try:
            src, name, nparams, barrier, _, grid_sync, coarsened = _core._pyk_translate(self._tree(), list(argtypes),
                                                                                     opts)
        except (TypeError, NotImplementedError, ValueError, OverflowError, IndexError) as exc:
            if getattr(exc, "lineno", None) is None:
                raise
            _raise_translation_error(exc, self)
        cache[key] = (src, name, nparams, grid_sync, coarsened)
        return cache[key]

    def _written(self, argtypes):
        """The array parameters the kernel may write, as bits (bit i: argument i): those it
        types without as read-only.  The typing is the translator's, which refuses a store,
        an atomic, a random draw or a device function's write to a read-only array, and
        follows views and device functions; anything it refuses counts as a write."""
        key = tuple(tuple(t) for t in argtypes)
        mask = self._written_masks.get(key)
        if mask is not None:
            return mask
        types = key
        if self._sigs:
            types = tuple(tuple(t) for t in self._match_signature(key)[0])
        mask, tree, opts = 0, self._tree(), self._translate_options()
        for i, (kind, dt, nd, lay, ro) in enumerate(types):
            if kind != 1 or ro:
                continue
            probe = list(types)
            probe[i] = (kind, dt, nd, lay, 1)
            try:
                _core._pyk_translate(tree, probe, opts)
            except Exception:       # noqa: BLE001  (a write to it, or anything else: copied back)
                mask |= 1 << i
        self._written_masks[key] = mask
        return mask

    def _numpy_info(self, argtypes, device):
        """Called by _PyKernel at the first launch of a specialisation with NumPy arrays on a
        GPU: (the arrays it may write, as _written's bits; each array argument's warning, None
        for the others; the warning's category)."""
        params = self._source().params
        msgs = tuple(None if t[0] != 1 else
                     f"kernel {self.__name__!r}: argument {i} ({params[i] if i < len(params) else str(i)!r}) is a "
                     f"NumPy array, copied to {device} and back around the launch; pass a device array "
                     f"(cuda.to_device) to avoid the copies" for i, t in enumerate(argtypes))
        return self._written(argtypes), msgs, KernelArgumentWarning

    def _match_signature(self, argtypes):
        """The declared signature these argument types convert to, and each scalar's dtype to store as."""
        for s in self._sigs:
            decl = self._signature_types(s)
            if len(decl) != len(argtypes):
                continue
            ok, store = True, []
            for (k, dt, nd, lay, ro), (dk, ddt, dnd, dlay, dro) in zip(argtypes, decl):
                if k != dk:
                    ok = False
                elif k == 1:
                    ok = dt == ddt and nd == dnd and (dlay == "A" or lay == dlay) and (dro or not ro)
                    store.append(None)
                else:
                    ok = _np.can_cast(_np.dtype(dt), _np.dtype(ddt), "same_kind") or \
                        (_np.dtype(dt).kind in "biu" and _np.dtype(ddt).kind in "biuf")
                    store.append(ddt)
                if not ok:
                    break
            if ok:
                return decl, tuple(store)
        raise TypeError(f"kernel {self.__name__!r}: no declared signature takes arguments of types "
                        f"({', '.join(self._describe(t) for t in argtypes)}); its signatures are "
                        f"{', '.join(map(repr, self._sigs))}")

    @staticmethod
    def _describe(t):
        k, dt, nd, lay, ro = t
        return f"array({dt}, {nd}d, {lay})" if k else dt

    def _compile(self, argtypes, device, checked=False):
        """Called by _PyKernel on a new list of argument types: (module, kernel name, parameter count, debug, store dtypes).
        checked (bounds mode on the CPU, ck.debug(bounds=True)): compiled as with debug=True, so that every index of an
        array is checked and an out-of-bounds one raises IndexError naming the argument, block and thread."""
        argtypes = tuple(tuple(t) for t in argtypes)
        store = (None,) * len(argtypes)
        if self._sigs:
            decl, store = self._match_signature(argtypes)
            argtypes = tuple(decl)
        src, name, nparams, grid_sync, coarsened = self._translate(argtypes, checked)
        return (self._module_of(src), name, nparams, bool(self._options.get("debug")) or bool(checked), store,
                grid_sync, coarsened)

    def _module_of(self, src):
        mod = self._modules.get(src)
        if mod is None:
            mod = _core._Module(src, self._compile_options(), (), self._source().filename)
            self._modules[src] = mod
        return mod

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0, device=None):
        """The most blocks of blockdim threads (and dynsmemsize bytes of dynamic shared memory)
        a launch of this kernel may have when it synchronises its grid (g.sync(): all blocks
        resident at once), on device (the default one when None): on a GPU the blocks a
        multiprocessor holds at once times its multiprocessors, on the CPU its own bound.
        Over several specialisations, the smallest."""
        versions = list(self._sources.values()) + list(self._checked.values())
        if not versions:
            raise ValueError(f"kernel {self.__name__!r} is not compiled yet: launch it once, or declare a "
                             f"signature, before asking for its cooperative grid size")
        return min(_core._pyk_max_cooperative_blocks(self._module_of(src), name, device, blockdim, int(dynsmemsize))
                   for src, name, *_ in versions)

    # ---------------------------------------------------------- launches
    def _launch_converting(self, launch, args):
        """A launch with NumPy arrays (copied to the device and back, as Numba does) or
        other libraries' arrays (wrapped without a copy)."""
        dev = None
        for a in args:
            if isinstance(a, _core.ndarray):
                dev = a.device
                break
        if dev is None:
            for a in args:
                if hasattr(a, "__cuda_array_interface__"):
                    dev = _core.asarray(a).device
                    break
        if dev is None:
            dev = _core.get_default_device()
        conv, back = [], []
        params = self._source().params
        for i, a in enumerate(args):
            if isinstance(a, _core.ndarray) or isinstance(a, (bool, int, float, complex, _np.generic)):
                conv.append(a)
            elif isinstance(a, _np.ndarray):
                if a.dtype.names is not None:   # Numba's xoroshiro128p_dtype records: their (n, 2) uint64 words
                    from .random import _numpy_words
                    a = _numpy_words(a)
                d = _core.asarray(a, device=dev)
                if dev.type != "cpu":
                    pname = params[i] if i < len(params) else str(i)
                    _warnings.warn(f"kernel {self.__name__!r}: argument {i} ({pname!r}) is a NumPy array, copied to "
                                   f"{dev} and back around the launch; pass a device array (cuda.to_device) to "
                                   f"avoid the copies", KernelArgumentWarning, stacklevel=3)
                    if a.flags.writeable:
                        back.append((i, a, d))
                conv.append(d)
            elif hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__"):
                conv.append(_core.asarray(a))
            else:
                raise TypeError(f"kernel {self.__name__!r}: argument {i} is a {type(a).__name__}; kernels take "
                                f"arrays (cudakit, NumPy, or any with __cuda_array_interface__) and numbers")
        r = launch(*conv)
        if back:
            mask = self._written([self._typeof(c) for c in conv])
            for i, a, d in back:
                if mask >> i & 1:
                    _core.asnumpy(d, out=a)
        return r

    @staticmethod
    def _typeof(v):
        """An argument's type as _PyKernel codes it: (kind, dtype, ndim, layout, read-only)."""
        if isinstance(v, _core.ndarray):
            lay = "C" if v.flags.c_contiguous else "F" if v.flags.f_contiguous else "A"
            return 1, v.dtype.name, v.ndim, lay, int(not v.flags.writeable)
        if isinstance(v, bool):
            return 0, "bool", 0, "C", 0
        if isinstance(v, int):
            return 0, "int64", 0, "C", 0
        if isinstance(v, float):
            return 0, "float64", 0, "C", 0
        if isinstance(v, complex):
            return 0, "complex128", 0, "C", 0
        return 0, _np.dtype(v.dtype).name, 0, "C", 0

    def _check_error(self, errbuf):
        """After a debug kernel: the exception its first failing thread recorded, raised here."""
        rec = _core.asnumpy(errbuf)
        raw = rec.view(_np.int32)
        code = int(raw[0])
        if code == 0:
            return None
        line, what = int(raw[1]), int(raw[2])
        block = tuple(int(v) for v in rec[12:24].view(_np.uint32))
        thread = tuple(int(v) for v in rec[24:36].view(_np.uint32))
        index, size = (int(v) for v in rec[40:56].view(_np.int64))
        errbuf[...] = 0
        src = self._source()
        where = f"kernel {self.__name__!r} ({src.filename}, line {line}), block {block}, thread {thread}"
        if code == 1:
            params = src.params
            arg = params[what] if 0 <= what < len(params) else "an array"
            raise IndexError(f"{where}: index {index} is out of bounds for axis of size {size} of {arg!r}")
        cls_name, msg = ("RuntimeError", "")
        if 0 <= what < len(self._raises):
            cls_name, msg = self._raises[what][:2]
        import builtins as _b
        cls = getattr(_b, cls_name, RuntimeError)
        raise cls(f"{msg} ({where})" if msg else where)

    def __call__(self, *args, **kwargs):
        raise ValueError(f"kernel {self.__name__!r}: launch it with a configuration, "
                         f"{self.__name__}[griddim, blockdim](...), or {self.__name__}.forall(n)(...)")

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launch of ntasks threads in all, tpb a block (256 when not given)."""
        tpb = int(tpb) or 256
        blocks = max(1, -(-int(ntasks) // tpb))
        return self[blocks, tpb, stream, sharedmem]

    # ---------------------------------------------------------- inspecting
    def inspect_cuda(self, signature=None, full=False):
        """The CUDA C of each specialisation (a dict by argument types), or of one
        signature's: what was translated, after a line that stands for the preludes
        every kernel shares (full=True: the whole translation unit)."""
        def shown(src):
            if full:
                return src
            head, mark, tail = src.partition(_MARK)
            return f"/* ... cudakit's CUDA prelude ({head.count(chr(10))} lines) ... */\n{mark}{tail}" if mark else src
        if signature is not None:
            sig = _types.parse(signature)
            return shown(self._translate(tuple(self._signature_types(sig)))[0])
        done = {**self._checked, **self._sources}
        return {tuple(self._describe(t) for t in k): shown(v[0]) for k, v in done.items()}

    inspect_code = inspect_cuda

    def specialize(self, *args):
        """A kernel compiled for the types of these arguments, declared as its only signature."""
        sig = _types.void(*(_types.typeof(a) for a in args))
        return Dispatcher(self.py_func, [sig], **self._options)

    @property
    def signatures(self):
        return list(self._sigs) if self._sigs else [tuple(self._describe(t) for t in k)
                                                  for k in {**self._checked, **self._sources}]

    def __repr__(self):
        return f"<cudakit kernel {self.__qualname__}>"

    def __get__(self, obj, objtype=None):
        return self


# coarsen (cudakit's, default True): a kernel whose threads differ only by
# cuda.grid(1) may run on the GPU as a grid-stride loop over fewer threads
# (cudakit_pykernel.h); coarsen=False keeps one index a thread
_OPTIONS = {"device", "fastmath", "debug", "lineinfo", "cache", "max_registers", "launch_bounds", "opt", "inline",
            "link", "boundscheck", "forceinline", "nopython", "extensions", "coarsen"}


def jit(func_or_sig=None, device=False, **options):
    """Numba's cuda.jit: a kernel (or a device function with device=True) from a
    Python function, compiled lazily for each call's argument types, or eagerly
    for the signatures given ("void(float32[:], float32[:])" or a list)."""
    bad = set(options) - _OPTIONS
    if bad:
        raise TypeError(f"jit() got unexpected options: {', '.join(sorted(bad))}")
    if options.get("link"):
        raise NotImplementedError("jit(link=...): linking PTX or CUDA C files is not supported")
    options.pop("nopython", None)

    def wrap(fn, sigs=None):
        if device:
            return DeviceFunction(fn, options)
        return Dispatcher(fn, sigs, **options)

    if callable(func_or_sig) and not isinstance(func_or_sig, (str, _types.Signature)):
        return wrap(func_or_sig)
    sigs = None
    if func_or_sig is not None:
        sigs = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    return lambda fn: wrap(fn, sigs)
