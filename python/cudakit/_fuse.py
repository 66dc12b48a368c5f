"""ck.fuse: one kernel for a Python function of element-wise operations.

The function is traced once per combination of argument dtypes (and of
which arguments are arrays or scalars) with proxy objects standing in for
the arguments: operators and cudakit ufuncs on proxies record CUDA C, and
the result becomes an ElementwiseKernel (or, when the function ends in a
sum/prod/max/min, a ReductionKernel whose map is the traced expression).
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


def _cname(dt):
    from ._kernels import _ctype
    return _ctype(dt)


# C expression templates by ufunc name; operands already cast to the
# computation dtype `T`.  {0}, {1}: operands.
_BINARY = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})", "divide": "({0} / {1})",
    "true_divide": "({0} / {1})",
    "maximum": "(({0} != {0}) ? {0} : (({1} != {1}) ? {1} : ({0} > {1} ? {0} : {1})))",
    "minimum": "(({0} != {0}) ? {0} : (({1} != {1}) ? {1} : ({0} < {1} ? {0} : {1})))",
    "fmax": "fmax({0}, {1})", "fmin": "fmin({0}, {1})",
    "power": "pow({0}, {1})", "arctan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})",
    "copysign": "copysign({0}, {1})",
    "less": "({0} < {1})", "less_equal": "({0} <= {1})", "greater": "({0} > {1})",
    "greater_equal": "({0} >= {1})", "equal": "({0} == {1})", "not_equal": "({0} != {1})",
    "logical_and": "((bool){0} && (bool){1})", "logical_or": "((bool){0} || (bool){1})",
    "logical_xor": "((bool){0} != (bool){1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "left_shift": "({0} << {1})", "right_shift": "({0} >> {1})",
}
_BINARY_INT = {
    "floor_divide": "(({1}) == 0 ? ({0}) * 0 : (({0}) / ({1}) - ((({0}) % ({1}) != 0) && ((({0}) < 0) != (({1}) < 0)))))",
    "remainder": "(({1}) == 0 ? ({0}) * 0 : (((({0}) % ({1})) != 0 && ((({0}) % ({1})) < 0) != (({1}) < 0)) ? "
                 "({0}) % ({1}) + ({1}) : ({0}) % ({1})))",
}
_BINARY_FLOAT = {
    "floor_divide": "floor({0} / {1})",
    "remainder": "(({0}) - floor(({0}) / ({1})) * ({1}))",
}
_UNARY = {
    "negative": "(-{0})", "positive": "(+{0})", "sqrt": "sqrt({0})", "exp": "exp({0})", "log": "log({0})",
    "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})", "tanh": "tanh({0})", "sinh": "sinh({0})",
    "cosh": "cosh({0})", "arcsin": "asin({0})", "arccos": "acos({0})", "arctan": "atan({0})",
    "arcsinh": "asinh({0})", "arccosh": "acosh({0})", "arctanh": "atanh({0})", "exp2": "exp2({0})",
    "log2": "log2({0})", "log10": "log10({0})", "log1p": "log1p({0})", "expm1": "expm1({0})",
    "floor": "floor({0})", "ceil": "ceil({0})", "trunc": "trunc({0})", "rint": "rint({0})",
    "cbrt": "cbrt({0})", "square": "({0} * {0})", "reciprocal": "((decltype({0}))1 / {0})",
    "logical_not": "(!(bool){0})", "invert": "(~{0})", "isnan": "({0} != {0})",
    "isinf": "isinf({0})", "isfinite": "isfinite({0})", "sign": "(({0} > 0) - ({0} < 0))",
}
_FLOAT_ONLY_UNARY = {"sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan",
                     "arcsinh", "arccosh", "arctanh", "exp2", "log2", "log10", "log1p", "expm1", "floor", "ceil",
                     "trunc", "rint", "cbrt", "isinf", "isfinite"}
_REDUCTIONS = {
    "sum": ("a + b", "0"), "prod": ("a * b", "1"),
    "max": ("((a != a) ? a : ((b != b) ? b : (a > b ? a : b)))", None),
    "min": ("((a != a) ? a : ((b != b) ? b : (a < b ? a : b)))", None),
}
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
    def __init__(self):
        self.lines = []
        self.n = 0

    def var(self, dtype, expr):
        name = f"_t{self.n}"
        self.n += 1
        self.lines.append(f"    {_cname(dtype)} {name} = {expr};")
        return _Proxy(self, name, dtype)


def _weak(x):
    # a representative of the Python scalar's type (NEP 50: its value does not matter)
    return type(x)(0) if isinstance(x, (bool, int, float, complex)) else x


def _literal(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return f"{x}LL"
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            raise _Unsupported("a non-finite constant")
        return repr(x)
    raise _Unsupported(f"constant of type {type(x).__name__}")


def _operand(tr, x):
    """(C expression, dtype-or-weak-scalar) of an operand."""
    if isinstance(x, _WeakProxy):
        return x.name, x.pytype(0)
    if isinstance(x, _Proxy):
        if x.tracer is not tr:
            raise _Unsupported("proxies of two traces")
        return x.name, x.dtype
    if isinstance(x, (bool, int, float)):
        return _literal(x), _weak(x)
    if isinstance(x, _np.generic) and x.dtype.kind in "biuf":
        return f"(({_cname(x.dtype)}){_literal(x.item())})", x.dtype
    raise _Unsupported(f"operand of type {type(x).__name__}")


def _apply(name, *xs):
    tr = next(x.tracer for x in xs if isinstance(x, _Proxy))
    ops = [_operand(tr, x) for x in xs]
    rdt = _np_result(name, *[o[1] for o in ops])
    if rdt.kind not in "biuf" or rdt.itemsize == 2 and rdt.kind == "f":
        raise _Unsupported(f"{name} gives {rdt}")
    if len(xs) == 1:
        tmpl = _UNARY.get(name)
        if tmpl is None:
            if name == "absolute":
                tmpl = "fabs({0})" if rdt.kind == "f" else ("{0}" if rdt.kind in "bu" else "({0} < 0 ? -{0} : {0})")
            else:
                raise _Unsupported(name)
        # the computation dtype: the result's for arithmetic, the input's for predicates
        cdt = rdt if rdt.kind != "b" or name in ("logical_not", "invert") else \
            (ops[0][1] if isinstance(ops[0][1], _np.dtype) else _np.dtype("float64"))
        if name in _FLOAT_ONLY_UNARY and (cdt.kind != "f"):
            raise _Unsupported(f"{name} on {cdt}")
        a = f"(({_cname(cdt)}){ops[0][0]})"
        return tr.var(rdt, tmpl.format(a))
    if len(xs) == 2:
        if rdt.kind == "b" and name not in ("logical_and", "logical_or", "logical_xor", "bitwise_and",
                                            "bitwise_or", "bitwise_xor"):
            cdt = _np_result("add", ops[0][1], ops[1][1])   # comparison in the common type
        else:
            cdt = rdt
        tmpl = _BINARY.get(name)
        if name in _BINARY_INT or name in _BINARY_FLOAT:
            tmpl = (_BINARY_FLOAT if cdt.kind == "f" else _BINARY_INT)[name]
        if tmpl is None:
            raise _Unsupported(name)
        if name == "power" and cdt.kind != "f":
            raise _Unsupported("integer power")
        a, b = (f"(({_cname(cdt)}){o[0]})" for o in ops)
        return tr.var(rdt, tmpl.format(a, b))
    raise _Unsupported(name)


def _where(c, x, y):
    tr = next(v.tracer for v in (c, x, y) if isinstance(v, _Proxy))
    oc, ox, oy = (_operand(tr, v) for v in (c, x, y))
    rdt = _np_result("where", _np.dtype(bool), ox[1], oy[1])
    ct = _cname(rdt)
    return tr.var(rdt, f"((bool)({oc[0]}) ? ({ct})({ox[0]}) : ({ct})({oy[0]}))")


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
        return self.tracer.var(dt, f"(({_cname(dt)}){self.name})")

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
    for name in set(_UNARY) | set(_BINARY) | set(_BINARY_INT) | {"absolute", "abs"}:
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
        proxies, in_params = [], []
        for k, a in enumerate(args):
            if isinstance(a, _core.ndarray):
                dt = _np.dtype(a.dtype.name)
                proxies.append(_Proxy(tr, f"in{k}", dt))
                in_params.append(f"{dt.name} in{k}")
            elif isinstance(a, (bool, int, float)):
                # a weak scalar: rules by its Python type, passed as double / long long / bool
                proxies.append(_ScalarArg(tr, f"in{k}", a))
                cdt = {bool: "bool", int: "int64", float: "float64"}[type(a)]
                in_params.append(f"{cdt} in{k}")
            elif isinstance(a, _np.generic) and a.dtype.kind in "biuf":
                proxies.append(_Proxy(tr, f"in{k}", a.dtype))
                in_params.append(f"{a.dtype.name} in{k}")
            else:
                raise _Unsupported(f"argument {k} of type {type(a).__name__}")
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
        body = "\n".join(tr.lines)
        in_sig = ", ".join(f"{_cname(p.dtype)} {p.name}" if isinstance(p, _Proxy) else
                           f"{_cname(_np.dtype(p.cdt))} {p.name}" for p in proxies)
        from ._kernels import ElementwiseKernel, ReductionKernel
        if reduced is not None:
            rdt = reduced.dtype
            fn = (f"__device__ {_cname(rdt)} _ck_fused_map({in_sig})\n{{\n{body}\n"
                  f"    return ({_cname(rdt)}){outs[0].name};\n}}\n")
            rexpr, ident = _REDUCTIONS[reduced.op]
            call = ", ".join(p.name for p in proxies)
            kern = ReductionKernel(", ".join(in_params), f"{rdt.name} out0", f"_ck_fused_map({call})", rexpr,
                                   "out0 = a", ident, self.name, preamble=fn)
            return ("reduce", kern, reduced.axis, reduced.keepdims)
        rets = ", ".join(f"{o.dtype.name} out{j}" for j, o in enumerate(outs))
        fn = (f"__device__ void _ck_fused_fn({in_sig}" + "".join(f", {_cname(o.dtype)} &_r{j}"
                                                               for j, o in enumerate(outs)) + ")\n{\n" + body +
              "\n" + "".join(f"    _r{j} = ({_cname(o.dtype)}){o.name};\n" for j, o in enumerate(outs)) + "}\n")
        call = ", ".join([p.name for p in proxies] + [f"out{j}" for j in range(len(outs))])
        kern = ElementwiseKernel(", ".join(in_params), rets, f"_ck_fused_fn({call})", self.name, preamble=fn,
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
