"""ck.fuse: one kernel for a Python function of element-wise operations.

The function is traced once per combination of argument dtypes (and of
which arguments are arrays or scalars) with proxy objects standing in for
the arguments: operators and cudakit ufuncs on proxies record steps (op,
dtypes, operands), C writes them out as a device function
(src/codegen/user_kernel_codegen.c), and the result becomes an
ElementwiseKernel (or, when the function ends in a sum/prod/max/min, a
ReductionKernel whose map is the traced expression).
Dtypes follow NumPy's rules (NEP 50) step by step, so the fused result has
the dtype the unfused one would.  When tracing meets something it cannot
fuse, the function is simply called (noted once under CUDAKIT_DEBUG).
"""
import functools
import os
import sys
import threading

import numpy as _np

from . import _core

_TRACE_LOCK = threading.RLock()


class _Unsupported(Exception):
    pass


# the ops a trace may record, by ufunc name: (op, nargs, float_only)
_OPS = _core._fuse_ops()
_CAST, _WHERE = -1, -2   # the steps of astype and where
_REDUCTION_ALIASES = {"sum": "sum", "prod": "prod", "max": "max", "amax": "max", "min": "min", "amin": "min"}


def _np_result(name, *operands):
    """The dtype NumPy gives ufunc `name` on these operands (dtypes for
    arrays, Python scalars kept weak)."""
    ops = [_np.empty(0, dtype=o) if isinstance(o, _np.dtype) else o for o in operands]
    try:
        r = getattr(_np, name)(*ops)
    except Exception as e:
        raise _Unsupported(f"{name} on {operands}: {e}") from None
    return r.dtype if isinstance(r, _np.ndarray) else _np.asarray(r).dtype


class _Tracer:
    """The steps of a trace: (op, dtype, compute dtype or None, operands),
    step n's value being the operand ("t", n)."""

    def __init__(self):
        self.steps = []

    def var(self, dtype, op, cdt, refs):
        self.steps.append((op, dtype, cdt, tuple(refs)))
        return _Proxy(self, ("t", len(self.steps) - 1), dtype)


def _weak(x):
    # a representative of the Python scalar's type (NEP 50: its value does not matter)
    return type(x)(0) if isinstance(x, (bool, int, float, complex)) else x


def _constant(x):
    """A Python bool, int or float that C can write as a constant."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        raise _Unsupported("a non-finite constant")
    if isinstance(x, int) and not isinstance(x, bool) and not -2**63 <= x < 2**63:
        raise _Unsupported("an integer constant beyond 64 bits")
    if not isinstance(x, (bool, int, float)):
        raise _Unsupported(f"constant of type {type(x).__name__}")
    return x


def _operand(tr, x):
    """(operand, dtype-or-weak-scalar) of an operand."""
    if isinstance(x, _WeakProxy):
        return x.name, x.pytype(0)
    if isinstance(x, _Proxy):
        if x.tracer is not tr:
            raise _Unsupported("proxies of two traces")
        return x.name, x.dtype
    if isinstance(x, _np.generic) and x.dtype.kind in "biuf":
        return ("c", _constant(x.item()), x.dtype), x.dtype
    if isinstance(x, (bool, int, float)):
        return ("l", _constant(x)), _weak(x)
    raise _Unsupported(f"operand of type {type(x).__name__}")


def _apply(name, *xs):
    tr = next(x.tracer for x in xs if isinstance(x, _Proxy))
    ops = [_operand(tr, x) for x in xs]
    rdt = _np_result(name, *[o[1] for o in ops])
    if rdt.kind not in "biuf" or rdt.itemsize == 2 and rdt.kind == "f":
        raise _Unsupported(f"{name} gives {rdt}")
    op = _OPS.get(name)
    if op is None or op[1] != len(xs):
        raise _Unsupported(name)
    if len(xs) == 1:
        # the computation dtype: the result's for arithmetic, the input's for predicates
        cdt = rdt if rdt.kind != "b" or name in ("logical_not", "invert") else \
            (ops[0][1] if isinstance(ops[0][1], _np.dtype) else _np.dtype("float64"))
    elif rdt.kind == "b" and name not in ("logical_and", "logical_or", "logical_xor", "bitwise_and",
                                          "bitwise_or", "bitwise_xor"):
        cdt = _np_result("add", ops[0][1], ops[1][1])   # comparison in the common type
    else:
        cdt = rdt
    if op[2] and cdt.kind != "f":
        raise _Unsupported(f"{name} on {cdt}")
    return tr.var(rdt, op[0], cdt, [o[0] for o in ops])


def _where(c, x, y):
    tr = next(v.tracer for v in (c, x, y) if isinstance(v, _Proxy))
    oc, ox, oy = (_operand(tr, v) for v in (c, x, y))
    rdt = _np_result("where", _np.dtype(bool), ox[1], oy[1])
    return tr.var(rdt, _WHERE, None, [oc[0], ox[0], oy[0]])


class _Reduced:
    def __init__(self, op, proxy, axis, keepdims, dtype):
        self.op, self.proxy, self.axis, self.keepdims, self.dtype = op, proxy, axis, keepdims, dtype


def _reduce(op, x, axis=None, dtype=None, out=None, keepdims=False):
    if not isinstance(x, _Proxy) or out is not None:
        raise _Unsupported(f"{op} of a non-traced value")
    op = _REDUCTION_ALIASES[op]
    if dtype is not None:
        rdt = _np.dtype(dtype)
    elif op in ("sum", "prod"):
        rdt = getattr(_np, op)(_np.zeros(1, x.dtype)).dtype
    else:
        rdt = x.dtype
    return _Reduced(op, x, axis, keepdims, rdt)


class _Proxy:
    __array_priority__ = 1000
    __slots__ = ("tracer", "name", "dtype")

    def __init__(self, tracer, name, dtype):
        self.tracer, self.name, self.dtype = tracer, name, dtype

    def __add__(self, o): return _apply("add", self, o)
    def __radd__(self, o): return _apply("add", o, self)
    def __sub__(self, o): return _apply("subtract", self, o)
    def __rsub__(self, o): return _apply("subtract", o, self)
    def __mul__(self, o): return _apply("multiply", self, o)
    def __rmul__(self, o): return _apply("multiply", o, self)
    def __truediv__(self, o): return _apply("divide", self, o)
    def __rtruediv__(self, o): return _apply("divide", o, self)
    def __floordiv__(self, o): return _apply("floor_divide", self, o)
    def __rfloordiv__(self, o): return _apply("floor_divide", o, self)
    def __mod__(self, o): return _apply("remainder", self, o)
    def __rmod__(self, o): return _apply("remainder", o, self)
    def __pow__(self, o): return _apply("power", self, o)
    def __rpow__(self, o): return _apply("power", o, self)
    def __and__(self, o): return _apply("bitwise_and", self, o)
    def __rand__(self, o): return _apply("bitwise_and", o, self)
    def __or__(self, o): return _apply("bitwise_or", self, o)
    def __ror__(self, o): return _apply("bitwise_or", o, self)
    def __xor__(self, o): return _apply("bitwise_xor", self, o)
    def __rxor__(self, o): return _apply("bitwise_xor", o, self)
    def __lt__(self, o): return _apply("less", self, o)
    def __le__(self, o): return _apply("less_equal", self, o)
    def __gt__(self, o): return _apply("greater", self, o)
    def __ge__(self, o): return _apply("greater_equal", self, o)
    def __eq__(self, o): return _apply("equal", self, o)
    def __ne__(self, o): return _apply("not_equal", self, o)
    def __neg__(self): return _apply("negative", self)
    def __pos__(self): return _apply("positive", self)
    def __abs__(self): return _apply("absolute", self)
    def __invert__(self): return _apply("invert", self)
    __hash__ = None

    def __bool__(self):
        raise _Unsupported("the truth value of a traced array (Python control flow on data)")

    def astype(self, dtype, copy=True):
        dt = _np.dtype(dtype)
        return self.tracer.var(dt, _CAST, None, [self.name])

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce("sum", self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce("prod", self, axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return _reduce("max", self, axis, None, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _reduce("min", self, axis, None, out, keepdims)

    def __getattr__(self, name):
        raise _Unsupported(f"attribute {name!r} of a traced array")


def _patched_functions():
    """cudakit's functions as the traced function sees them while tracing."""
    table = {}
    for name in set(_OPS) | {"abs"}:
        uname = "absolute" if name == "abs" else name

        def f(*xs, _n=uname, **kw):
            if kw or not any(isinstance(x, _Proxy) for x in xs):
                raise _Unsupported(f"{_n} with keywords or without traced operands")
            return _apply(_n, *xs)
        table[name] = f
    for name in _REDUCTION_ALIASES:
        table[name] = functools.partial(_reduce, name)
    table["where"] = _where
    return table


_noted = set()


def _note(func, why):
    if _DEBUG() and func not in _noted:
        _noted.add(func)
        print(f"[cudakit] fuse: calling {getattr(func, '__name__', func)} unfused: {why}", file=sys.stderr)


def _DEBUG():
    return bool(os.environ.get("CUDAKIT_DEBUG"))


class Fusion:
    """A fused function (see ck.fuse)."""

    def __init__(self, func, name=None):
        self.func = func
        self.name = name or getattr(func, "__name__", "fused")
        if not self.name.isidentifier() or self.name == "<lambda>":
            self.name = "fused_lambda" if self.name == "<lambda>" else "fused"
        self._plans = {}
        functools.update_wrapper(self, func)

    def _trace(self, args):
        import cudakit as ck
        tr = _Tracer()
        proxies, in_params, in_types = [], [], []
        for k, a in enumerate(args):
            if isinstance(a, _core.ndarray):
                dt = _np.dtype(a.dtype.name)
                proxies.append(_Proxy(tr, ("p", k), dt))
            elif isinstance(a, _np.generic) and a.dtype.kind in "biuf":
                dt = a.dtype
                proxies.append(_Proxy(tr, ("p", k), dt))
            elif isinstance(a, (bool, int, float)):
                # a weak scalar: rules by its Python type, passed as double / long long / bool
                proxies.append(_ScalarArg(tr, ("p", k), a))
                dt = _np.dtype(proxies[-1].cdt)
            else:
                raise _Unsupported(f"argument {k} of type {type(a).__name__}")
            in_params.append(f"{dt.name} in{k}")
            in_types.append(dt)
        patched = _patched_functions()
        with _TRACE_LOCK:
            saved = {n: getattr(ck, n) for n in patched if hasattr(ck, n)}
            try:
                for n, f in patched.items():
                    setattr(ck, n, f)
                result = self.func(*[p.value if isinstance(p, _ScalarArg) else p for p in proxies])
            finally:
                for n in patched:
                    if n in saved:
                        setattr(ck, n, saved[n])
                    else:
                        delattr(ck, n)
        reduced = None
        if isinstance(result, _Reduced):
            reduced = result
            result = result.proxy
        if isinstance(result, tuple) and reduced is None:
            outs = list(result)
        else:
            outs = [result]
        for o in outs:
            if not isinstance(o, _Proxy):
                raise _Unsupported("the function does not return a traced element-wise value")
        from ._kernels import ElementwiseKernel, ReductionKernel
        res_types = (reduced.dtype,) if reduced is not None else tuple(o.dtype for o in outs)
        fn, call = _core._fuse_source(tuple(in_types), tr.steps, tuple(o.name for o in outs), res_types,
                                      reduced is not None)
        if reduced is not None:
            rexpr, ident = _core._fuse_reduction(reduced.op)
            kern = ReductionKernel(", ".join(in_params), f"{reduced.dtype.name} out0", call, rexpr, "out0 = a", ident,
                                   self.name, preamble=fn)
            return ("reduce", kern, reduced.axis, reduced.keepdims)
        rets = ", ".join(f"{o.dtype.name} out{j}" for j, o in enumerate(outs))
        kern = ElementwiseKernel(", ".join(in_params), rets, call, self.name, preamble=fn,
                                 return_tuple=len(outs) > 1 or isinstance(result, tuple))
        return ("map", kern, None, None)

    def __call__(self, *args, **kwargs):
        if kwargs or not any(isinstance(a, _core.ndarray) for a in args):
            return self.func(*args, **kwargs)
        key = tuple(a.dtype.name if isinstance(a, _core.ndarray) else
                    (type(a), a.dtype.name if isinstance(a, _np.generic) else None) for a in args)
        plan = self._plans.get(key)
        if plan is None:
            try:
                plan = self._trace(args)
            except _Unsupported as e:
                _note(self.func, str(e))
                plan = ("python",)
            except (TypeError, AttributeError, ValueError, NotImplementedError) as e:
                _note(self.func, f"{type(e).__name__}: {e}")
                plan = ("python",)
            self._plans[key] = plan
        if plan[0] == "python":
            return self.func(*args)
        if plan[0] == "map":
            return plan[1](*args)
        return plan[1](*args, axis=plan[2], keepdims=plan[3])


class _ScalarArg:
    """A Python scalar argument: traced as a kernel parameter of its Python
    type (double, long long, bool) that keeps NumPy's weak-scalar rules."""

    def __init__(self, tracer, name, value):
        self.tracer, self.name = tracer, name
        self.cdt = {bool: "bool", int: "int64", float: "float64"}[type(value)]
        self.value = _WeakProxy(tracer, name, type(value))


class _WeakProxy(_Proxy):
    """Behaves as a Python scalar of its type for dtype rules."""
    __slots__ = ("pytype",)

    def __init__(self, tracer, name, pytype):
        super().__init__(tracer, name, _np.dtype({bool: "bool", int: "int64", float: "float64"}[pytype]))
        self.pytype = pytype




def fuse(*args, kernel_name=None):
    """Fuse a function of element-wise operations into one kernel.

    As a decorator (``@ck.fuse`` or ``@ck.fuse(kernel_name="f")``) or a call
    on a function or lambda (``f = ck.fuse(lambda a, b: a * b + 1)``).  The
    function may use operators, Python and NumPy scalars, cudakit's ufuncs
    (``ck.exp``, ``ck.maximum``, ``ck.where``...) called as ``ck.<name>``,
    and end in a reduction (``ck.sum(x, axis=...)``, ``prod``, ``max``,
    ``min`` or the same methods), which is fused too.  Anything else makes
    the call fall back to running the function as written.
    """
    if len(args) == 1 and callable(args[0]):
        return Fusion(args[0], kernel_name)
    if args:
        raise TypeError("fuse() takes a function, or only keyword arguments")
    return lambda f: Fusion(f, kernel_name)
