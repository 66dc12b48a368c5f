"""ck.vectorize, ck.guvectorize and cuda.reduce: Numba's ufunc makers, on cuda.jit.

    import cudakit as ck

    @ck.vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def rel_diff(x, y):
        return 2 * (x - y) / (x + y)

    rel_diff(a, b)                  # broadcasting, NumPy's choice among the signatures
    rel_diff(a, 2.0, out=c)
    rel_diff.reduce(a, axis=1)

    @ck.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
    def dot(a, b, out):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        out[0] = s

    @cuda.reduce
    def total(a, b):
        return a + b

    total(arr, init=0)

The function becomes a device function (cuda.jit(device=True)) and each call
runs a kernel written here around it, as Python text that cuda.jit
translates like any other kernel, over the elements (vectorize), the loop
cells (guvectorize) or the output cells and ordered runs of the reduced
axis (reduce): on a GPU one item a thread, on the CPU a run of items a
thread.  The kernels are cudakit's own, so they run on the GPU and on the
CPU alike, with the same results (a reduction's runs depend on the shape
alone).

Targets: "cuda" (the current GPU), "cpu", or None (the default: the device
of the cudakit arrays passed, else the default device).  Results are
cudakit arrays on that device when a cudakit array was passed, NumPy arrays
when only NumPy arrays, lists and numbers were (as Numba returns host
arrays for host arrays), and NumPy scalars when only numbers were.
"""
import ast as _ast
import contextlib as _contextlib
import linecache as _linecache
import operator as _operator
import os as _os
import re as _re
import types as _pytypes

import numpy as _np

from .. import _core
from . import _tree
from . import compiler as _compiler
from . import types as _types

__all__ = ["vectorize", "guvectorize", "reduce", "Reduce", "UFunc", "GUFunc"]

_TPB = 256                # a GPU block; a CPU block is one thread
_CPU_BLOCKS_A_CORE = 2048  # the CPU runtime hands a core at least 1024 blocks of one thread
_CHUNK = 256              # reorderable reductions fold runs of this many elements, then the runs' results
_KERNEL_OPTIONS = ("fastmath", "debug", "lineinfo", "max_registers", "cache", "opt", "boundscheck")
_NO_VALUE = object()


# ---------------------------------------------------------------- functions

def _lambda_source(fn):
    """(text, filename, line) of a def with a lambda's parameters and body:
    the translator reads functions from their def."""
    code = fn.__code__
    lines = _linecache.getlines(code.co_filename, fn.__globals__)
    if not lines:
        raise TypeError(f"cannot read the source of the lambda of {code.co_filename}, line {code.co_firstlineno}")
    text = "".join(lines)
    params = list(code.co_varnames[:code.co_argcount])
    found = [n for n in _ast.walk(_ast.parse(text)) if isinstance(n, _ast.Lambda)
             and n.lineno == code.co_firstlineno and [a.arg for a in n.args.args] == params]
    if len(found) != 1:
        raise TypeError(f"cannot tell which lambda of {code.co_filename}, line {code.co_firstlineno} this is: "
                        f"write the function as a def")
    body = _ast.get_source_segment(text, found[0].body)
    return f"def ck_lambda({', '.join(params)}): return ({body})\n", code.co_filename, code.co_firstlineno


def _device_function(fn, what):
    if isinstance(fn, _compiler.DeviceFunction):
        return fn
    if isinstance(fn, _compiler.Dispatcher):
        raise TypeError(f"{what} takes a function or a device function, not the kernel {fn.__name__!r}")
    if not isinstance(fn, _pytypes.FunctionType):
        raise TypeError(f"{what} takes a Python function, not a {type(fn).__name__}")
    d = _compiler.DeviceFunction(fn, {})
    if fn.__name__ == "<lambda>":
        d._src = _tree.FunctionSource(fn, source=_lambda_source(fn))
    return d


def _return_dtype(devfn, module, dtypes, options):
    """What devfn returns for arguments of these dtypes, from translating it alone
    (a typing error names the function, its file and line)."""
    opts = {"device": 1, "debug": int(bool(options.get("debug"))), "fastmath": int(bool(options.get("fastmath"))),
            "filename": devfn._source().filename}
    devfn._module_funcs = module.funcs
    try:
        ret = _core._pyk_translate(module.text, [(0, d.name, 0, "C", 0) for d in dtypes], opts)[4]
    except (TypeError, NotImplementedError, ValueError, OverflowError, IndexError) as exc:
        if getattr(exc, "lineno", None) is None:
            raise
        _compiler._raise_translation_error(exc, devfn)
    if ret is None:
        raise TypeError(f"{devfn.__name__}({', '.join(d.name for d in dtypes)}) returns no number: a vectorized "
                        f"function returns one number (guvectorize writes several outputs)")
    return _np.dtype(ret)


class _Kernel(_compiler.Dispatcher):
    """A kernel written here around a device function: its source is text, not a file."""

    def __init__(self, fn, source, sig, options):
        self._text_source = _tree.FunctionSource(fn, source=source)
        super().__init__(fn, [sig], **options)

    def _source(self):
        return self._text_source


class _Kernels:
    """The kernels written around one device function, by what they are for."""

    def __init__(self, devfn, options):
        self.devfn = devfn
        self.options = {k: v for k, v in options.items() if k in _KERNEL_OPTIONS}
        self.kernels = {}

    def get(self, key, build):
        """The kernel of key, which says everything its text and signature depend
        on; build() gives its (name, text, signature) the first time.  (The
        layouts a signature declares, 'A' or 'C', keep one translation for
        arrays of either kind.)"""
        k = self.kernels.get(key)
        if k is None:
            name, text, sig = build()
            fname = f"<cudakit {name}>"
            ns = {"cuda": _cuda_module(), "ck_fn": self.devfn}
            ns.update({f"ck_t_{t.name}": t for t in _types._BY_NAME.values()})
            exec(compile(text, fname, "exec"), ns)
            k = self.kernels[key] = _Kernel(ns[name], (text, fname, 1), sig, self.options)
        return k

    def sources(self):
        return {key: k.inspect_cuda(k.signatures[0]) for key, k in self.kernels.items()}


def _cuda_module():
    from .. import cuda
    return cuda


# ------------------------------------------------------------ kernel texts

def _unravel(names, shape_of, indent):
    """Lines that split the flat index i into names, the last one fastest."""
    out = [f"{indent}r = i"]
    for k in range(len(names) - 1, 0, -1):
        out.append(f"{indent}{names[k]} = r % {shape_of}.shape[{k}]")
        out.append(f"{indent}r = r // {shape_of}.shape[{k}]")
    out.append(f"{indent}{names[0]} = r")
    return out


_OUTER = ["    start = cuda.grid(1) * per", "    for i in range(start, min(start + per, {n})):"]


def _map_text(name, nin, ndim, scalars, loop):
    """out[j] = f(a0[j], a1[j], ...) over every element of out."""
    params = ", ".join([f"a{k}" for k in range(nin)] + ["o0", "per"])
    idx = "i" if ndim == 1 else ", ".join(f"j{k}" for k in range(ndim))
    args = ", ".join(f"ck_t_{loop[k].name}(a{k})" if scalars[k] else f"ck_t_{loop[k].name}(a{k}[{idx}])"
                     for k in range(nin))
    lines = [f"def {name}({params}):"] + [x.format(n="o0.size") for x in _OUTER]
    if ndim > 1:
        lines += _unravel([f"j{k}" for k in range(ndim)], "o0", " " * 8)
    lines.append(f"        o0[{idx}] = ck_fn({args})")
    return "\n".join(lines) + "\n"


def _fold_text(name, ndim, acc):
    """o0[..., c] = the fold, in order, of a[..., c*L : (c+1)*L] (init first when
    has_init and c == 0); a and o0 have ndim dimensions."""
    js = [f"j{k}" for k in range(ndim)]
    head = "".join(f"{j}, " for j in js[:-1])
    t = f"ck_t_{acc.name}"
    lines = [f"def {name}(a, o0, L, init, has_init, per):"] + [x.format(n="o0.size") for x in _OUTER]
    lines += _unravel(js, "o0", " " * 8)
    lines += [f"        k0 = {js[-1]} * L",
              f"        k1 = min(k0 + L, a.shape[{ndim - 1}])",
              f"        if {js[-1]} == 0 and has_init != 0:",
              f"            acc = {t}(init)",
              "        else:",
              f"            acc = {t}(a[{head}k0])",
              "            k0 += 1",
              "        for k in range(k0, k1):",
              f"            acc = ck_fn(acc, {t}(a[{head}k]))",
              f"        o0[{head}{js[-1]}] = acc"]
    return "\n".join(lines) + "\n"


def _gufunc_text(name, nloop, modes, casts):
    """f(a0[j, :], a1[j], ..., o0[j, :]) for every loop cell j; modes says each
    argument's kind: 's' a scalar parameter, 'e' an element, a number k a view
    of k core dimensions."""
    js = [f"j{k}" for k in range(nloop)]
    params = ", ".join([f"a{k}" for k in range(len(modes))] + ["n", "per"])
    args = []
    for k, m in enumerate(modes):
        if m == "s":
            args.append(f"ck_t_{casts[k].name}(a{k})")
        elif m == "e":
            args.append(f"ck_t_{casts[k].name}(a{k}[{', '.join(js)}])")
        else:
            args.append(f"a{k}[{', '.join(js + [':'] * m)}]")
    lines = [f"def {name}({params}):"] + [x.format(n="n") for x in _OUTER]
    # the loop's shape is the last argument's, an output: outputs are always arrays over the whole loop
    lines += _unravel(js, f"a{len(modes) - 1}", " " * 8)
    lines.append(f"        ck_fn({', '.join(args)})")
    return "\n".join(lines) + "\n"


_NCPU = []


def _launch(kernel, n, device, *args):
    """Launch over n items, on the current stream: on a GPU one a thread; on the
    CPU, whose blocks run one after another, each thread takes a run of
    consecutive items (threads striding over the items would each stream the
    whole array through the cache)."""
    if device.type == "cpu":
        if not _NCPU:
            _NCPU.append(_os.cpu_count() or 1)
        blocks = max(1, min(n, _CPU_BLOCKS_A_CORE * _NCPU[0]))
        kernel[blocks, 1](*args, -(-n // blocks))
    else:
        blocks = max(1, min(-(-n // _TPB), (1 << 31) - 1))
        kernel[blocks, _TPB](*args, -(-n // (blocks * _TPB)))


def _on_stream(stream):
    """A call's stream= as the current stream while it runs, so that its
    allocations, copies and kernels are ordered on it (0: the current stream)."""
    if stream is None or isinstance(stream, int) and stream == 0:
        return _contextlib.nullcontext()
    if isinstance(stream, _cuda_module().Stream):
        return stream
    raise TypeError(f"stream must be a cuda.Stream or 0, not {type(stream).__name__}")


def _arr_type(a, layout):
    return _types.Array(_types.from_dtype(a.dtype), a.ndim, layout, not a.flags["WRITEABLE"])


def _arg_type(v, layout):
    return _arr_type(v, layout) if isinstance(v, _core.ndarray) else _types.from_dtype(v.dtype)


def _arg_key(v):
    """What a kernel's translation depends on in one argument."""
    if isinstance(v, _core.ndarray):
        return v.dtype.name, v.ndim, v.flags["WRITEABLE"]
    return type(v)


_NP_DTYPES = {}
_CK_DTYPES = {}


def _ckdt(dt):
    """The cudakit dtype of a NumPy dtype (what _core.empty takes without reading names)."""
    try:
        return _CK_DTYPES[dt]
    except KeyError:
        d = _CK_DTYPES[dt] = _core.result_type(dt.name)
        return d


def _npdt(dt):
    """The NumPy dtype of a cudakit (or NumPy) dtype."""
    try:
        return _NP_DTYPES[dt.name]
    except KeyError:
        d = _NP_DTYPES[dt.name] = _np.dtype(dt.name)
        return d


# ----------------------------------------------------------------- operands

class _Operand:
    """One argument of a call: a cudakit or NumPy array, or a number (weak: a
    Python int, float or complex, typed by NumPy's rules for them, NEP 50)."""

    __slots__ = ("value", "dtype", "weak", "kind")

    def __init__(self, x, fname):
        self.weak = None
        if isinstance(x, _core.ndarray):
            self.kind = "ck"
        elif isinstance(x, _np.ndarray):
            self.kind = "np"
        elif isinstance(x, _np.generic):
            self.kind = "scalar"
        elif isinstance(x, bool):
            self.kind = "scalar"
            x = _np.bool_(x)
        elif isinstance(x, (int, float, complex)):
            self.kind = "scalar"
            self.weak = "i" if isinstance(x, int) else "f" if isinstance(x, float) else "c"
        elif hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
            self.kind = "ck"
            x = _core.asarray(x)
        elif isinstance(x, (list, tuple)):
            self.kind = "np"
            x = _np.asarray(x)
        else:
            raise TypeError(f"{fname}: an argument is a {type(x).__name__}; it takes arrays (cudakit, NumPy, or "
                            f"any with __cuda_array_interface__), lists and numbers")
        self.value = x
        if self.weak:
            self.dtype = _np.dtype({"i": _np.int64, "f": _np.float64, "c": _np.complex128}[self.weak])
        else:
            self.dtype = _npdt(x.dtype)
            if self.dtype.kind not in "biufc":
                raise TypeError(f"{fname}: values of dtype {self.dtype} are not supported")

    @property
    def shape(self):
        return () if self.kind == "scalar" else tuple(self.value.shape)

    def castable(self, to, casting="safe"):
        if self.weak:
            return to.kind in {"i": "iufc", "f": "fc", "c": "c"}[self.weak]
        return _np.can_cast(self.dtype, to, casting)

    def on(self, device):
        """As a cudakit array on device (a number as a 0-d array)."""
        if self.kind == "ck":
            return self.value if self.value.device == device else _core.asarray(self.value, device=device)
        return _core.asarray(_np.asarray(self.value), device=device)

    def scalar(self, dtype):
        """The number as a NumPy scalar of dtype (an int that does not fit raises OverflowError, as NumPy)."""
        return dtype.type(self.value)


def _operands(args, fname):
    ops = [_Operand(a, fname) for a in args]
    if all(o.weak for o in ops):
        for o in ops:   # numbers alone are typed as NumPy's defaults
            o.weak = None
            o.value = o.dtype.type(o.value)
    return ops


def _lazy_dtypes(ops):
    """The dtypes of a call with no declared signatures: Python numbers take the
    type NumPy's promotion gives them beside the other arguments (NEP 50)."""
    strong = [o.dtype for o in ops if not o.weak]
    return tuple(_np.result_type(*strong, o.value) if o.weak else o.dtype for o in ops)


def _device_of(target, ops):
    if target == "cpu":
        return _core.Device("cpu")
    if target == "cuda":
        return _core._device_check("cuda")
    for o in ops:
        if o is not None and o.kind == "ck":
            return o.value.device
    return _core.get_default_device()


def _wrap(result, ops):
    """What a call returns: as the arguments were, cudakit, NumPy or numbers."""
    if any(o.kind == "ck" for o in ops):
        return result
    h = _core.asnumpy(result)
    return h[()] if h.ndim == 0 else h


def _store(result, out):
    """Copy result into the out= array the user gave (another device, or NumPy)."""
    if isinstance(out, _np.ndarray):
        _np.copyto(out, _core.asnumpy(result), casting="unsafe")
    else:
        out[...] = _core.asarray(result, device=out.device)


def _out_arg(out, nout, fname):
    if out is None:
        return (None,) * nout
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != nout:
        raise ValueError(f"{fname}: the 'out' tuple must have exactly {nout} entr{'y' if nout == 1 else 'ies'}")
    for o in outs:
        if o is not None and not isinstance(o, (_core.ndarray, _np.ndarray)):
            raise TypeError(f"{fname}: return arrays must be arrays, not {type(o).__name__}")
    return outs


def _check_options(options, fname, allowed):
    bad = set(options) - set(allowed)
    if bad:
        raise TypeError(f"{fname}() got unexpected keyword arguments: {', '.join(sorted(bad))}")
    if options.get("forceobj"):
        raise NotImplementedError(f"{fname}(forceobj=True): functions are compiled, never run as Python objects")


def _target(target):
    if target in (None, "cpu", "cuda"):
        return target
    if target == "parallel":
        return "cpu"   # the CPU target runs over every core already
    raise ValueError(f"unknown target {target!r}: 'cuda', 'cpu', or None for the default device")


def _parse_sigs(sigs, fname):
    if sigs is None:
        return []
    if isinstance(sigs, (str, _types.Signature)):
        sigs = [sigs]
    return [_types.parse(s) for s in sigs]


def _no_loop(name, ops, sigs):
    have = ", ".join(f"{s}" for s in sigs)
    got = ", ".join("Python " + {"i": "int", "f": "float", "c": "complex"}[o.weak] if o.weak else o.dtype.name
                    for o in ops)
    return TypeError(f"ufunc {name!r} not supported for the input types, and the inputs could not be safely coerced "
                     f"to any supported types according to the casting rule ''safe'' (inputs: {got}; "
                     f"signatures: {have})")


# -------------------------------------------------------------------- ufuncs

class _Wrapper:
    """What ufuncs and gufuncs share: the device function, names, target, kernels."""

    def _init_wrapper(self, func, what, target, options):
        self._devfn = _device_function(func, what)
        self.__name__ = getattr(func, "__name__", what)
        self.__qualname__ = getattr(func, "__qualname__", self.__name__)
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = getattr(self._devfn, "py_func", func)
        self.target = _target(target)
        self._options = options
        self._kernels = _Kernels(self._devfn, options)

    @property
    def ntypes(self):
        return len(self.types)

    def inspect_cuda(self):
        """The CUDA C of the kernels written so far, by what each is for."""
        return self._kernels.sources()


class UFunc(_Wrapper):
    """A ufunc-like object from ck.vectorize: call it on arrays (broadcasting,
    out=, dtype=), reduce with it; nin, nout, types, identity as NumPy's."""

    def __init__(self, func, sigs, identity, target, options):
        self._init_wrapper(func, "vectorize", target, options)
        if identity not in (None, "reorderable") and not isinstance(identity, (bool, int, float, complex)):
            raise ValueError(f"identity must be a number, None or 'reorderable', not {identity!r}")
        self.identity = None if identity == "reorderable" else identity
        self._reorderable = identity is not None
        self._module = None
        self.nin = len(self._source().params)
        self._sigs = []
        self._returns = {}        # input dtypes -> what the function returns for them
        for s in _parse_sigs(sigs, "vectorize"):
            if s.return_type is _types.void or not isinstance(s.return_type, _types.Scalar):
                raise TypeError(f"vectorize: a signature returns a number, as float64(float64, float64), not {s}")
            if len(s.args) != self.nin or not all(isinstance(a, _types.Scalar) for a in s.args):
                raise TypeError(f"vectorize: the signature {s} does not take {self.nin} number"
                                f"{'s' if self.nin != 1 else ''}, as {self.__name__} does")
            ins = tuple(a.dtype for a in s.args)
            self._return(ins)     # translated now: a typing error shows at decoration, as Numba's
            self._sigs.append((ins, s.return_type.dtype))

    nout = 1
    signature = None

    @property
    def nargs(self):
        return self.nin + 1

    @property
    def types(self):
        """The loops, as NumPy's ufunc.types: 'ff->f'."""
        loops = self._sigs or list(self._returns.items())
        return ["".join(d.char for d in ins) + "->" + out.char for ins, out in loops]

    def _source(self):
        return self._devfn._source()

    def _return(self, ins):
        if ins not in self._returns:
            if self._module is None:
                self._module = _compiler._Module(self._devfn)
            self._returns[ins] = _return_dtype(self._devfn, self._module, ins, self._options)
        return self._returns[ins]

    def _loop(self, ops, dtype=None):
        """(input dtypes, output dtype) of a call, chosen as NumPy chooses a ufunc's loop."""
        if not self._sigs:
            ins = _lazy_dtypes(ops) if dtype is None else tuple(_np.dtype(dtype) for _ in ops)
            if dtype is not None and not all(o.castable(d, "same_kind") for o, d in zip(ops, ins)):
                raise _no_loop(self.__name__, ops, [f"{dtype}(...)"])
            return ins, self._return(ins)
        for ins, out in self._sigs:
            if dtype is not None:
                if out != _np.dtype(dtype) or not all(o.castable(d, "same_kind") for o, d in zip(ops, ins)):
                    continue
            elif not all(o.castable(d) for o, d in zip(ops, ins)):
                continue
            return ins, out
        raise _no_loop(self.__name__, ops, [s for s in self._sigs_text()])

    def _sigs_text(self):
        return [f"{out.name}({', '.join(d.name for d in ins)})" for ins, out in self._sigs]

    def __call__(self, *args, out=None, dtype=None, stream=0, **kwargs):
        with _on_stream(stream):
            return self._call(args, out, dtype, kwargs)

    def _call(self, args, out, dtype, kwargs):
        if kwargs:
            if "where" in kwargs or "casting" in kwargs or "order" in kwargs or "subok" in kwargs:
                raise NotImplementedError(f"{self.__name__}(): the {', '.join(sorted(kwargs))} arguments of "
                                          f"ufuncs are not supported")
            raise TypeError(f"{self.__name__}() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
        if len(args) == self.nin + 1 and out is None:
            out, args = args[-1], args[:-1]
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nin + 1} positional arguments but "
                            f"{len(args)} were given")
        out = _out_arg(out, 1, self.__name__)[0]
        ops = _operands(args, self.__name__)
        dev = _device_of(self.target, ops + [_Operand(out, self.__name__) if out is not None else None])
        ins, res_dt = self._loop(ops, dtype)
        shape = tuple(_core.broadcast_shapes(*[o.shape for o in ops]))
        if out is not None:
            full = tuple(_core.broadcast_shapes(shape, tuple(out.shape)))
            if full != tuple(out.shape):
                raise ValueError(f"non-broadcastable output operand with shape {tuple(out.shape)} doesn't match "
                                 f"the broadcast shape {full}")
            shape = full
            if not _np.can_cast(res_dt, _npdt(out.dtype), "same_kind"):
                raise TypeError(f"Cannot cast ufunc {self.__name__!r} output from {res_dt!r} to "
                                f"{_npdt(out.dtype)!r} with casting rule 'same_kind'")
            direct = isinstance(out, _core.ndarray) and out.device == dev and out.flags["WRITEABLE"]
            res = out if direct else _core.empty(shape, dtype=out.dtype.name, device=dev)
        else:
            res = _core.empty(shape, dtype=_ckdt(res_dt), device=dev)
        vals = [o.scalar(d) if o.kind == "scalar" else o.on(dev) for o, d in zip(ops, ins)]
        self._map(vals, ins, res)
        if out is not None:
            if res is not out:
                _store(res, out)
            return out
        return _wrap(res, ops)

    def _map(self, vals, ins, res):
        n = res.size
        if n == 0:
            return
        shape = tuple(res.shape)
        scalars = tuple(not isinstance(v, _core.ndarray) for v in vals)
        arrays = [v for v in vals if isinstance(v, _core.ndarray)]
        if all(tuple(a.shape) == shape and a.flags["C_CONTIGUOUS"] for a in arrays) and res.flags["C_CONTIGUOUS"]:
            layout, ndim = "C", 1
            flat = lambda a: a.reshape(n)   # noqa: E731
        else:
            layout, ndim = "A", max(1, len(shape))
            flat = lambda a: _core.broadcast_to(a, shape)   # noqa: E731  (a 0-d call is contiguous)
        args = [v if s else flat(v) for v, s in zip(vals, scalars)]
        o = res.reshape(n) if layout == "C" else res

        def build():
            name = f"vectorize_{_ident(self.__name__)}"
            sig = _types.void(*[_arg_type(a, layout) for a in args], _arr_type(o, layout), _types.int64)
            return name, _map_text(name, self.nin, ndim, scalars, ins), sig

        k = self._kernels.get(("map", ndim, layout, ins, tuple(map(_arg_key, args)), _arg_key(o)), build)
        _launch(k, n, o.device, *args, o)

    # ------------------------------------------------------------ reduce
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True, stream=0):
        """Reduce array's axis (or axes, for a reorderable function) by applying
        the function, as NumPy's ufunc.reduce: the elements of each output cell
        are folded in order (a function declared with an identity, or
        identity='reorderable', may be folded in runs, in parallel)."""
        with _on_stream(stream):
            return self._reduce(array, axis, dtype, out, keepdims, initial, where)

    def _reduce(self, array, axis, dtype, out, keepdims, initial, where):
        if self.nin != 2:
            raise ValueError("reduce only supported for binary functions")
        if where is not True:
            raise NotImplementedError(f"{self.__name__}.reduce(where=...) is not supported")
        op = _operands([array], self.__name__)[0]
        out = _out_arg(out, 1, self.__name__)[0]
        dev = _device_of(self.target, [op] + ([_Operand(out, self.__name__)] if out is not None else []))
        a = op.on(dev)
        nd = a.ndim
        if axis is None or nd == 0:     # (NumPy reduces a 0-d array to its value)
            axes = tuple(range(nd))
        else:
            axes = tuple(_norm_axis(x, nd) for x in (axis if isinstance(axis, tuple) else (axis,)))
            if len(set(axes)) != len(axes):
                raise ValueError("duplicate value in 'axis'")
        if len(axes) > 1 and not self._reorderable:
            raise ValueError(f"reduction operation {self.__name__!r} is not reorderable, so at most one axis may "
                             f"be specified")
        acc = self._reduce_dtype(_npdt(a.dtype) if dtype is None else _np.dtype(dtype), dtype is not None)
        keep = [k for k in range(nd) if k not in axes]
        rest = tuple(a.shape[k] for k in keep)
        kdims = tuple(a.shape[k] for k in axes)
        K = int(_np.prod(kdims, dtype=_np.int64))
        if initial is _NO_VALUE:
            initial = None
        if not axes:
            r = a.astype(acc)
        elif K == 0 or int(_np.prod(rest, dtype=_np.int64)) == 0:
            start = initial if initial is not None else self.identity
            if start is None and K == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            r = _core.full(rest, 0 if start is None else start, dtype=acc, device=dev)
        else:
            m = _core.moveaxis(a, axes, tuple(range(nd - len(axes), nd))) if axes != tuple(range(nd - len(axes), nd)) \
                else a
            m = m.reshape(rest + (K,)) if len(axes) != 1 else m
            r = _fold(self._kernels, self.__name__, m, acc, initial, self._reorderable)
        if keepdims:
            r = r.reshape(tuple(1 if k in axes else a.shape[k] for k in range(nd)))
        if out is not None:
            if tuple(out.shape) != tuple(r.shape):
                raise ValueError(f"output parameter for reduction operation {self.__name__} has the wrong shape "
                                 f"{tuple(out.shape)}, expected {tuple(r.shape)}")
            if not _np.can_cast(acc, _npdt(out.dtype), "same_kind"):
                raise TypeError(f"Cannot cast ufunc {self.__name__!r} output from {acc!r} to {_npdt(out.dtype)!r} "
                                f"with casting rule 'same_kind'")
            _store(r, out)
            return out
        return _wrap(r, [op])

    def _reduce_dtype(self, dt, given):
        """The accumulator's dtype: a loop T(T, T) that dt casts to (safely, or
        by dtype= same_kind), or without signatures dt itself (or what the
        function returns for two of them)."""
        if not self._sigs:
            ret = self._return((dt, dt))
            if ret != dt and not given:
                if self._return((ret, ret)) != ret:
                    raise TypeError(f"{self.__name__} returns {ret} for {dt} and {self._return((ret, ret))} for "
                                    f"{ret}: a reduction needs a function of the form T(T, T)")
                return ret
            return dt
        for (x, y), o in self._sigs:
            if x == y == o and (o == dt if given else _np.can_cast(dt, o, "safe")):
                return o
        raise TypeError(f"no signature of {self.__name__!r} reduces an array of {dt} (a reduction needs one of the "
                        f"form T(T, T)); its signatures are {', '.join(self._sigs_text())}")

    def accumulate(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}.accumulate is not supported")

    def reduceat(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}.reduceat is not supported")

    def outer(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}.outer is not supported")

    def at(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__name__}.at is not supported")

    def __repr__(self):
        return f"<cudakit ufunc {self.__qualname__}>"


def _ident(name):
    return _re.sub(r"\W", "_", name)


def _norm_axis(axis, nd):
    a = _operator.index(axis)
    if not -nd <= a < nd:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return a % nd


def _fold(kernels, fname, m, acc, initial, reorderable):
    """m (cells..., K) folded along its last axis into (cells...) of dtype acc:
    in order, one thread a cell; a reorderable function's long axes in runs of
    _CHUNK, whose results are folded again (the order of the elements is kept:
    only associativity is assumed)."""
    rest = tuple(m.shape[:-1])
    cells = int(_np.prod(rest, dtype=_np.int64))
    has_init = initial is not None
    init = _np.dtype(acc).type(initial if has_init else 0)
    cur = m
    while True:
        K = cur.shape[-1]
        L = _CHUNK if reorderable and K > 2 * _CHUNK and cells < (1 << 16) else K
        C = -(-K // L)
        o = _core.empty(rest + (C,), dtype=acc, device=m.device)

        def build(cur=cur, o=o):
            name = f"reduce_{_ident(fname)}"
            sig = _types.void(_arr_type(cur, "A"), _arr_type(o, "C"), _types.int64, _types.from_dtype(acc),
                              _types.int32, _types.int64)
            return name, _fold_text(name, o.ndim, _np.dtype(acc)), sig

        k = kernels.get(("fold", _np.dtype(acc), _arg_key(cur)), build)
        _launch(k, o.size, o.device, cur, o, L, init, int(has_init))
        has_init = False
        cur = o
        if C == 1:
            return o.reshape(rest)


# ------------------------------------------------------------------- gufuncs

_LAYOUT_ARG = r"\(\s*(?:\w+\s*(?:,\s*\w+\s*)*)?\)"


def _parse_layout(layout):
    """'(m,n),(n,p)->(m,p)' as ([('m','n'), ('n','p')], [('m','p')])."""
    s = layout.replace(" ", "")
    if "->" not in s:
        raise ValueError(f"the gufunc layout {layout!r} has no '->': write it as '(n),(n)->()'")
    ins, outs = s.split("->", 1)
    parts = []
    for side in (ins, outs):
        if not _re.fullmatch(rf"{_LAYOUT_ARG}(?:,{_LAYOUT_ARG})*", side):
            raise ValueError(f"not a gufunc layout: {layout!r} (write it as '(m,n),(n)->(m)')")
        parts.append([tuple(x for x in g.split(",") if x) for g in _re.findall(r"\(([^)]*)\)", side)])
    for dims in parts[0] + parts[1]:
        for d in dims:
            if not (d.isidentifier() or d.isdigit()):
                raise ValueError(f"not a gufunc layout: {layout!r} ({d!r} is not a dimension name or size)")
    return parts[0], parts[1]


class GUFunc(_Wrapper):
    """A generalized ufunc from ck.guvectorize: the function is called on each
    cell of the broadcast loop dimensions with views of the core dimensions
    the layout names ('(n),(n)->()'), and writes its outputs."""

    def __init__(self, func, sigs, layout, target, options):
        self._init_wrapper(func, "guvectorize", target, options)
        self.signature = layout
        self._ins, self._outs = _parse_layout(layout)
        self.nin, self.nout = len(self._ins), len(self._outs)
        nparams = len(self._devfn._source().params)
        if nparams != self.nin + self.nout:
            raise TypeError(f"guvectorize: {self.__name__} takes {nparams} parameters, but the layout {layout!r} "
                            f"has {self.nin} inputs and {self.nout} outputs")
        self._sigs = []
        core = self._ins + self._outs
        for s in _parse_sigs(sigs, "guvectorize"):
            if s.return_type is not _types.void:
                raise TypeError(f"guvectorize: a signature returns nothing (the function writes its outputs): "
                                f"void(...), not {s}")
            if len(s.args) != nparams:
                raise TypeError(f"guvectorize: the signature {s} has {len(s.args)} arguments; the layout "
                                f"{layout!r} has {nparams}")
            for k, (a, dims) in enumerate(zip(s.args, core)):
                if isinstance(a, _types.Scalar) and (dims or k >= self.nin):
                    raise TypeError(f"guvectorize: argument {k} of {s} is a number; only inputs of layout '()' can be")
                if isinstance(a, _types.Array) and a.ndim != max(1, len(dims)):
                    raise TypeError(f"guvectorize: argument {k} of {s} has {a.ndim} dimensions; its layout "
                                    f"({','.join(dims)}) needs {max(1, len(dims))}")
            self._sigs.append(tuple(s.args))

    identity = None

    @property
    def nargs(self):
        return self.nin + self.nout

    @property
    def types(self):
        return ["".join(a.dtype.dtype.char for a in s[:self.nin]) + "->" +
                "".join(a.dtype.dtype.char for a in s[self.nin:]) for s in self._sigs]

    def _loop(self, ops, outs):
        """The signature's argument types for these inputs (None: no signatures)."""
        if not self._sigs:
            if any(o is None for o in outs):
                raise TypeError(f"{self.__name__}: a gufunc without signatures needs its output arrays passed "
                                f"(out= or as the last arguments)")
            return None
        for s in self._sigs:
            if all(o.castable(_dt(t)) for o, t in zip(ops, s[:self.nin])):
                return s
        raise _no_loop(self.__name__, ops, [f"void({', '.join(map(repr, s))})" for s in self._sigs])

    def __call__(self, *args, out=None, stream=0, **kwargs):
        if kwargs:
            raise NotImplementedError(f"{self.__name__}(): the {', '.join(sorted(kwargs))} arguments of gufuncs "
                                      f"are not supported")
        with _on_stream(stream):
            return self._call(args, out)

    def _call(self, args, out):
        if len(args) == self.nin + self.nout and out is None:
            out, args = tuple(args[self.nin:]), args[:self.nin]
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} or {self.nin + self.nout} positional arguments "
                            f"but {len(args)} were given")
        outs = list(_out_arg(out, self.nout, self.__name__))
        ops = _operands(args, self.__name__)
        oops = [_Operand(o, self.__name__) if o is not None else None for o in outs]
        dev = _device_of(self.target, ops + oops)
        sig = self._loop(ops, outs)
        # core dimensions from the inputs (and the outputs given), the loop's shape by broadcasting
        sizes = {}
        loops = []

        def bind(shape, dims, what):
            if len(shape) < len(dims):
                raise ValueError(f"{self.__name__}: {what} does not have enough dimensions (has {len(shape)}, gufunc "
                                 f"core with signature {self.signature} requires {len(dims)})")
            core = shape[len(shape) - len(dims):]
            for k, (d, n) in enumerate(zip(dims, core)):
                want = int(d) if d.isdigit() else sizes.setdefault(d, n)
                if want != n:
                    raise ValueError(f"{self.__name__}: {what} has a mismatch in its core dimension {k}, with gufunc "
                                     f"signature {self.signature} (size {n} is different from {want})")
            return shape[:len(shape) - len(dims)]

        for k, (o, dims) in enumerate(zip(ops, self._ins)):
            loops.append(bind(o.shape, dims, f"Input operand {k}"))
        for k, (o, dims) in enumerate(zip(outs, self._outs)):
            if o is not None:
                loops.append(bind(tuple(o.shape), dims, f"Output operand {k}"))
        loop = tuple(_core.broadcast_shapes(*loops)) if loops else ()
        for k, (o, dims) in enumerate(zip(outs, self._outs)):
            if o is not None and tuple(o.shape)[:len(o.shape) - len(dims)] != loop:
                raise ValueError(f"{self.__name__}: output operand {k} has loop dimensions "
                                 f"{tuple(o.shape)[:len(o.shape) - len(dims)]}, expected {loop}")
            for d in dims:
                if not d.isdigit() and d not in sizes:
                    raise ValueError(f"{self.__name__}: the output core dimension {d!r} of {self.signature} is not "
                                     f"set by the inputs: pass the output arrays")
        n = int(_np.prod(loop, dtype=_np.int64))
        lp = loop if loop else (1,)
        nloop = len(lp)
        # the arguments of the kernel: inputs broadcast over the loop, outputs written directly or into temporaries
        kargs, modes, casts = [], [], []
        for k, (o, dims) in enumerate(zip(ops, self._ins)):
            t = sig[k] if sig else None
            dt = _dt(t) if t is not None else _lazy_dtypes(ops)[k]
            if not dims and (t is None or isinstance(t, _types.Scalar)):
                if o.kind == "scalar":
                    kargs.append(o.scalar(dt))
                    modes.append("s")
                else:
                    kargs.append(_core.broadcast_to(o.on(dev), lp))
                    modes.append("e")
                casts.append(dt)
                continue
            a = o.on(dev)
            if _npdt(a.dtype) != dt:
                a = a.astype(dt)
            core = tuple(int(d) if d.isdigit() else sizes[d] for d in dims)
            a = _core.broadcast_to(a, lp + core) if core else _core.expand_dims(_core.broadcast_to(a, lp), -1)
            kargs.append(a)
            modes.append(max(1, len(dims)))
            casts.append(dt)
        results, copies = [], []
        for k, (o, dims) in enumerate(zip(outs, self._outs)):
            t = sig[self.nin + k] if sig else None
            dt = _dt(t) if t is not None else _npdt(o.dtype)
            core = tuple(int(d) if d.isdigit() else sizes[d] for d in dims)
            if o is not None and isinstance(o, _core.ndarray) and o.device == dev and _npdt(o.dtype) == dt \
                    and o.flags["WRITEABLE"]:
                r = o
            else:
                r = _core.empty(loop + core, dtype=dt, device=dev)
                if o is not None:
                    copies.append((r, o))
            results.append(o if o is not None else r)
            v = r if loop else _core.expand_dims(r, 0)
            if not dims:
                v = _core.expand_dims(v, -1)
            kargs.append(v)
            modes.append(max(1, len(dims)))
            casts.append(dt)
        if n:
            def build():
                name = f"guvectorize_{_ident(self.__name__)}"
                sig = _types.void(*[_arg_type(a, "A") for a in kargs], _types.int64, _types.int64)
                return name, _gufunc_text(name, nloop, tuple(modes), casts), sig

            k = self._kernels.get(("gu", nloop, tuple(modes), tuple(casts), tuple(map(_arg_key, kargs))), build)
            _launch(k, n, dev, *kargs, n)
        for r, o in copies:
            _store(r, o)
        if out is not None and all(o is not None for o in outs):
            return outs[0] if self.nout == 1 else tuple(outs)
        res = [results[k] if outs[k] is not None else _wrap(results[k], ops) for k in range(self.nout)]
        return res[0] if self.nout == 1 else tuple(res)

    def __repr__(self):
        return f"<cudakit gufunc {self.__qualname__} {self.signature}>"


def _dt(t):
    return (t.dtype if isinstance(t, _types.Array) else t).dtype


# --------------------------------------------------------------- decorators

_VECTORIZE_OPTIONS = ("identity", "target", "nopython", "forceobj", "cache", "fastmath", "debug", "lineinfo",
                      "max_registers", "opt", "boundscheck")


def vectorize(ftylist_or_function=(), **kws):
    """Numba's vectorize: a ufunc-like object from a function of numbers.

    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    compiles for those signatures (a call takes the first one its arguments
    cast to safely, as NumPy chooses a ufunc's loop); @vectorize alone
    compiles for each new list of argument dtypes on first use.  target:
    "cuda", "cpu", or None (the default: the device of the arrays passed).
    identity: 0, 1, another number, None or 'reorderable' (with one, reduce
    may fold in parallel runs and over several axes)."""
    _check_options(kws, "vectorize", _VECTORIZE_OPTIONS)
    identity = kws.pop("identity", None)
    target = _target(kws.pop("target", None))
    if callable(ftylist_or_function) and not isinstance(ftylist_or_function, (str, _types.Signature)):
        return UFunc(ftylist_or_function, None, identity, target, kws)
    sigs = ftylist_or_function
    return lambda fn: UFunc(fn, sigs, identity, target, kws)


def guvectorize(*args, **kws):
    """Numba's guvectorize: guvectorize(signatures, layout, target=...), or
    guvectorize(layout) to compile for the argument types on first use (the
    outputs must then be passed).  The function takes its inputs and outputs
    as arrays of the core dimensions the layout names ('(n),(n)->()': a
    '()' output is an array of one element) and writes the outputs."""
    _check_options(kws, "guvectorize", _VECTORIZE_OPTIONS + ("writable_args",))
    kws.pop("identity", None)
    kws.pop("writable_args", None)
    target = _target(kws.pop("target", None))
    if len(args) == 1 and isinstance(args[0], str) and "->" in args[0]:
        sigs, layout = None, args[0]
    elif len(args) == 2:
        sigs, layout = args
    else:
        raise TypeError("guvectorize(signatures, layout) or guvectorize(layout), as '(n),(n)->()'")
    if not isinstance(layout, str):
        raise TypeError(f"a gufunc layout is a string such as '(n),(n)->()', not {layout!r}")
    return lambda fn: GUFunc(fn, sigs, layout, target, kws)


class Reduce:
    """Numba's cuda.reduce: a full reduction of a 1-D array by a binary
    function, assumed associative and commutative.

        @cuda.reduce
        def total(a, b):
            return a + b

        total(arr)                    # a NumPy scalar of arr's dtype
        total(arr, res=r, init=10)    # into r[0], returning None
    """

    def __init__(self, functor):
        self._devfn = _device_function(functor, "cuda.reduce")
        self.__name__ = getattr(functor, "__name__", "reduce")
        self._kernels = _Kernels(self._devfn, {})

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        with _on_stream(stream):
            return self._call(arr, size, res, init)

    def _call(self, arr, size, res, init):
        op = _Operand(arr, self.__name__)
        if op.kind == "scalar" or op.value.ndim != 1:
            raise TypeError(f"{self.__name__}: cuda.reduce reduces 1-D arrays (got {len(op.shape)} dimensions)")
        dev = _device_of(None, [op])
        a = op.on(dev)
        if size is not None:
            a = a[:int(size)]
        dt = _npdt(a.dtype)
        init = dt.type(init)
        if a.size == 0:
            r = _core.full((), init, dtype=dt, device=dev)
        else:
            r = _fold(self._kernels, self.__name__, a, dt, init, True)
        if res is not None:
            if isinstance(res, _np.ndarray):
                res[0] = _core.asnumpy(r)[()]
            else:
                res[:1] = _core.asarray(r.reshape(1), device=res.device)
            return None
        return _core.asnumpy(r)[()]

    def __repr__(self):
        return f"<cudakit cuda.reduce {self.__name__}>"


reduce = Reduce
