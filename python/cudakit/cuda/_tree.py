"""A Python function's syntax tree as the translator's S-expression text.

Each node is a list ``(kind line col ...)``; the names the function reads
that are not its own variables are resolved here, once, from its globals,
closure and the builtins, into ``(global ...)`` bindings (modules, cuda's
intrinsics, constants frozen at compile time, dtypes, device functions,
global arrays).  Typing and writing CUDA C happen in C
(src/codegen/pykernel/); this module only reads Python.
"""
import ast
import builtins
import cmath
import inspect
import linecache
import math
import textwrap
import types as _pytypes

import numpy as _np

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mult", ast.Div: "div", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift", ast.BitOr: "bitor",
           ast.BitXor: "bitxor", ast.BitAnd: "bitand", ast.MatMult: "matmult"}
_UNARY = {ast.UAdd: "uadd", ast.USub: "usub", ast.Not: "not", ast.Invert: "invert"}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "noteq", ast.Lt: "lt", ast.LtE: "lte", ast.Gt: "gt", ast.GtE: "gte",
           ast.Is: "is", ast.IsNot: "isnot", ast.In: "in", ast.NotIn: "notin"}

# statements and expressions the kernel language has no room for, by what a user would call them
_UNSUPPORTED = {ast.Try: "try statements", ast.With: "with statements", ast.AsyncWith: "async with statements",
                ast.AsyncFor: "async for loops", ast.AsyncFunctionDef: "async functions",
                ast.FunctionDef: "nested functions", ast.ClassDef: "classes", ast.Lambda: "lambdas",
                ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
                ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
                ast.Yield: "yield", ast.YieldFrom: "yield", ast.Await: "await", ast.Dict: "dicts", ast.Set: "sets",
                ast.JoinedStr: "f-strings", ast.Starred: "starred expressions", ast.Global: "global statements",
                ast.Nonlocal: "nonlocal statements", ast.Delete: "del statements", ast.Import: "imports",
                ast.ImportFrom: "imports", ast.NamedExpr: "assignment expressions"}
if hasattr(ast, "Match"):
    _UNSUPPORTED[ast.Match] = "match statements"
if hasattr(ast, "TryStar"):
    _UNSUPPORTED[ast.TryStar] = "try statements"

_BUILTIN_FUNCS = {"abs", "min", "max", "pow", "round", "len", "range", "enumerate", "zip", "print", "complex",
                  "divmod", "int", "float", "bool"}


def _q(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 32 or o > 126:
            for b in ch.encode("utf-8"):
                out.append("\\x%02x" % b)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _num(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    r = repr(float(v))
    return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(r, r)


class _Writer:
    """One function's tree: its nodes, the names it reads, its raises."""

    def __init__(self, fn_name, raises):
        self.fn_name = fn_name
        self.names = set()        # names read that are not assigned in the function
        self.assigned = set()
        self.raises = raises      # shared by the module: number -> (class, message)

    def pos(self, n):
        return "%d %d" % (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))

    # ------------------------------------------------------- statements
    def body(self, kind, stmts, at):
        return "(%s %s %s)" % (kind, self.pos(at), " ".join(self.stmt(s) for s in stmts))

    def stmt(self, s):
        p = self.pos(s)
        t = type(s)
        if t in _UNSUPPORTED:
            return "(unsupported %s %s)" % (p, _q(_UNSUPPORTED[t]))
        if t is ast.Assign:
            return "(assign %s (targets %s %s) %s)" % (p, p, " ".join(self.target(x) for x in s.targets),
                                                       self.expr(s.value))
        if t is ast.AugAssign:
            op = _BINOPS.get(type(s.op))
            return "(augassign %s %s %s %s)" % (p, op, self.target(s.target), self.expr(s.value))
        if t is ast.AnnAssign:
            value = self.expr(s.value) if s.value is not None else ""
            return "(annassign %s %s %s %s)" % (p, self.target(s.target), self.expr(s.annotation), value)
        if t is ast.For:
            return "(for %s %s %s %s %s)" % (p, self.target(s.target), self.expr(s.iter), self.body("body", s.body, s),
                                             self.body("orelse", s.orelse, s))
        if t is ast.While:
            return "(while %s %s %s %s)" % (p, self.expr(s.test), self.body("body", s.body, s),
                                            self.body("orelse", s.orelse, s))
        if t is ast.If:
            return "(if %s %s %s %s)" % (p, self.expr(s.test), self.body("body", s.body, s),
                                         self.body("orelse", s.orelse, s))
        if t is ast.Expr:
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return "(pass %s)" % p   # a docstring
            return "(expr %s %s)" % (p, self.expr(s.value))
        if t is ast.Return:
            return "(return %s%s)" % (p, " " + self.expr(s.value) if s.value is not None else "")
        if t is ast.Pass:
            return "(pass %s)" % p
        if t is ast.Break:
            return "(break %s)" % p
        if t is ast.Continue:
            return "(continue %s)" % p
        if t is ast.Raise:
            cls, msg = self.exception(s.exc)
            k = len(self.raises)
            self.raises.append((cls, msg, s.lineno, self.fn_name))
            return "(raise %s %d)" % (p, k)
        if t is ast.Assert:
            k = len(self.raises)
            msg = s.msg.value if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str) else ""
            self.raises.append(("AssertionError", msg, s.lineno, self.fn_name))
            return "(assert %s %s %d)" % (p, self.expr(s.test), k)
        return "(unsupported %s %s)" % (p, _q("%s statements" % t.__name__))

    def exception(self, exc):
        """(class name, message) of a raise: a builtin exception class called with a literal message."""
        if exc is None:
            return "RuntimeError", "re-raise"
        call = exc
        if isinstance(exc, ast.Call):
            call = exc.func
        name = call.id if isinstance(call, ast.Name) else None
        if not name or not isinstance(getattr(builtins, name, None), type) or \
                not issubclass(getattr(builtins, name), BaseException):
            return "RuntimeError", "an exception raised in a kernel"
        msg = ""
        if isinstance(exc, ast.Call) and exc.args and isinstance(exc.args[0], ast.Constant):
            msg = str(exc.args[0].value)
        return name, msg

    def target(self, t):
        p = self.pos(t)
        if isinstance(t, ast.Name):
            self.assigned.add(t.id)
            return "(name %s %s)" % (p, t.id)
        if isinstance(t, (ast.Tuple, ast.List)):
            return "(tuple %s %s)" % (p, " ".join(self.target(x) for x in t.elts))
        if isinstance(t, ast.Subscript):
            return "(subscript %s %s %s)" % (p, self.expr(t.value), self.index(t.slice))
        if isinstance(t, ast.Attribute):
            return "(attribute %s %s %s)" % (p, self.expr(t.value), t.attr)
        return "(unsupported %s %s)" % (p, _q("assignments to %s" % type(t).__name__))

    # ------------------------------------------------------ expressions
    def const(self, v, p):
        if v is None:
            return "(const %s none)" % p
        if isinstance(v, bool):
            return "(const %s bool %d)" % (p, int(v))
        if isinstance(v, int):
            return "(const %s int %d)" % (p, v)
        if isinstance(v, float):
            return "(const %s float %s)" % (p, _num(v))
        if isinstance(v, complex):
            return "(const %s complex %s %s)" % (p, _num(v.real), _num(v.imag))
        if isinstance(v, str):
            return "(const %s str %s)" % (p, _q(v))
        return "(unsupported %s %s)" % (p, _q("%s constants" % type(v).__name__))

    def index(self, ix):
        if isinstance(ix, ast.Slice):
            p = self.pos(ix)
            parts = [self.expr(x) if x is not None else "(const %s none)" % p for x in (ix.lower, ix.upper, ix.step)]
            return "(slice %s %s)" % (p, " ".join(parts))
        if isinstance(ix, ast.Tuple):
            return "(tuple %s %s)" % (self.pos(ix), " ".join(self.index(x) for x in ix.elts))
        if hasattr(ast, "Index") and isinstance(ix, getattr(ast, "Index")):   # Python < 3.9
            return self.index(ix.value)
        return self.expr(ix)

    def expr(self, e):
        p = self.pos(e)
        t = type(e)
        if t in _UNSUPPORTED:
            return "(unsupported %s %s)" % (p, _q(_UNSUPPORTED[t]))
        if t is ast.Name:
            self.names.add(e.id)
            return "(name %s %s)" % (p, e.id)
        if t is ast.Constant:
            return self.const(e.value, p)
        if t is ast.BinOp:
            return "(binop %s %s %s %s)" % (p, _BINOPS[type(e.op)], self.expr(e.left), self.expr(e.right))
        if t is ast.UnaryOp:
            return "(unaryop %s %s %s)" % (p, _UNARY[type(e.op)], self.expr(e.operand))
        if t is ast.BoolOp:
            return "(boolop %s %s %s)" % (p, "and" if isinstance(e.op, ast.And) else "or",
                                          " ".join(self.expr(v) for v in e.values))
        if t is ast.Compare:
            return "(compare %s %s (ops %s %s) (values %s %s))" % (
                p, self.expr(e.left), p, " ".join(_CMPOPS[type(o)] for o in e.ops), p,
                " ".join(self.expr(v) for v in e.comparators))
        if t is ast.IfExp:
            return "(ifexp %s %s %s %s)" % (p, self.expr(e.test), self.expr(e.body), self.expr(e.orelse))
        if t is ast.Call:
            args = " ".join(self.expr(a) for a in e.args)
            kws = " ".join("(kw %s %s %s)" % (p, k.arg, self.expr(k.value)) for k in e.keywords if k.arg)
            if any(k.arg is None for k in e.keywords):
                return "(unsupported %s %s)" % (p, _q("**kwargs in calls"))
            return "(call %s %s (args %s %s) (kwargs %s %s))" % (p, self.expr(e.func), p, args, p, kws)
        if t is ast.Attribute:
            return "(attribute %s %s %s)" % (p, self.expr(e.value), e.attr)
        if t is ast.Subscript:
            return "(subscript %s %s %s)" % (p, self.expr(e.value), self.index(e.slice))
        if t is ast.Tuple:
            return "(tuple %s %s)" % (p, " ".join(self.expr(x) for x in e.elts))
        if t is ast.List:
            return "(list %s %s)" % (p, " ".join(self.expr(x) for x in e.elts))
        if t is ast.Slice:
            return self.index(e)
        return "(unsupported %s %s)" % (p, _q("%s expressions" % t.__name__))


def _quick_source(fn):
    """(lines, first line, tree) of a function from its file's lines: the
    lines from its first (decorators included) to the last more indented
    than it.  inspect.getsourcelines tokenizes the file (its first use in a
    process costs more than translating a kernel); None where this cannot
    tell the block (a string dedented inside it), for inspect to read."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    i = code.co_firstlineno - 1
    if not 0 <= i < len(lines):
        return None
    indent = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines):
        t = lines[j]
        if t.strip() and len(t) - len(t.lstrip()) <= indent and not t.lstrip().startswith((")", "def ", "@")):
            break
        j += 1
    block = lines[i:j]
    try:
        tree = ast.parse(textwrap.dedent("".join(block)))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != fn.__name__:
        return None
    return block, i + 1, tree


class FunctionSource:
    """A function's parsed tree, source lines and file, read once; source, when
    given, is the (text, filename, first line) of a function with no file of its
    own (the kernels cudakit writes around a vectorized function, lambdas)."""

    def __init__(self, fn, source=None):
        quick = None if source is not None else _quick_source(fn)
        if source is not None:
            text, filename, first = source
            lines = text.splitlines(True)
            tree = ast.parse(textwrap.dedent(text))
        elif quick:
            lines, first, tree = quick
            filename = fn.__code__.co_filename
        else:
            try:
                lines, first = inspect.getsourcelines(fn)
            except (OSError, TypeError) as exc:
                raise TypeError(f"cannot read the source of {fn.__qualname__!r} (a kernel's source must be in a "
                                f"file or a notebook cell): {exc}") from None
            tree = ast.parse(textwrap.dedent("".join(lines)))
            filename = inspect.getsourcefile(fn) or "<kernel>"
        self.fn = fn
        self.first = first
        self.lines = [l.rstrip("\n") for l in lines]
        self.filename = filename
        ast.increment_lineno(tree, first - 1)
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise TypeError(f"{fn.__qualname__!r} is not a plain function")
        self.node = node
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
            raise NotImplementedError(f"{fn.__qualname__}: kernels take plain positional parameters (no *args, "
                                      f"**kwargs, keyword-only parameters or defaults)")
        self.params = [x.arg for x in a.args]

    def text(self, writer):
        """(def ...) of this function, written by writer (which collects the names it reads)."""
        n = self.node
        for p in self.params:
            writer.assigned.add(p)
        body = writer.body("body", n.body, n)
        src = " ".join(_q(l) for l in self.lines)
        return "(def %d %d %s (params %d %d %s) %s (values %d %d %d %s))" % (
            n.lineno, n.col_offset, n.name, n.lineno, n.col_offset, " ".join(self.params), body, n.lineno,
            n.col_offset, self.first, src)

    def line(self, lineno):
        k = lineno - self.first
        return self.lines[k] if 0 <= k < len(self.lines) else ""


def _array_binding(name, a):
    a = _np.ascontiguousarray(a)
    if a.dtype.kind not in "biufc" or a.ndim == 0 or a.ndim > 8:
        return None
    if a.size > (1 << 16):
        raise ValueError(f"the global array {name!r} has {a.size} elements: a kernel freezes global arrays as "
                         f"constants (at most 65536); pass it as an argument instead")
    flat = a.ravel()
    if a.dtype.kind == "c":
        vals = " ".join("%s %s" % (_num(v.real), _num(v.imag)) for v in flat.tolist())
    elif a.dtype.kind == "b":
        vals = " ".join("1" if v else "0" for v in flat.tolist())
    else:
        vals = " ".join(_num(v) for v in flat.tolist())
    dims = " ".join(str(d) for d in a.shape)
    return "(global 0 0 %s array %s (tuple 0 0 %s) (values 0 0 %s))" % (name, a.dtype.name, dims, vals)


def _value_text(v):
    """A constant's text: Python and NumPy numbers, tuples of them (None otherwise)."""
    if isinstance(v, _np.generic) and v.dtype.kind in "biufc":
        v = v.item()
    if isinstance(v, bool):
        return "(const 0 0 bool %d)" % v
    if isinstance(v, int):
        return "(const 0 0 int %d)" % v
    if isinstance(v, float):
        return "(const 0 0 float %s)" % _num(v)
    if isinstance(v, complex):
        return "(const 0 0 complex %s %s)" % (_num(v.real), _num(v.imag))
    if isinstance(v, tuple):
        parts = [_value_text(x) for x in v]
        if all(x is not None for x in parts):
            return "(tuple 0 0 %s)" % " ".join(parts)
    return None


def binding(name, value, resolve):
    """The (global ...) text of a name bound to value; resolve(value) gives
    a builtin's qualified name, a dtype name or a device function's number."""
    kind, payload = resolve(value)
    if kind == "builtin":
        return "(global 0 0 %s builtin %s)" % (name, _q(payload))
    if kind == "dtype":
        return "(global 0 0 %s dtype %s)" % (name, payload)
    if kind == "devfunc":
        return "(global 0 0 %s devfunc %d)" % (name, payload)
    if value is math:
        return "(global 0 0 %s module %s)" % (name, _q("math"))
    if value is cmath:
        return "(global 0 0 %s module %s)" % (name, _q("cmath"))
    if value is _np:
        return "(global 0 0 %s module %s)" % (name, _q("numpy"))
    if isinstance(value, _pytypes.BuiltinFunctionType) and getattr(value, "__module__", None) in ("math", "cmath"):
        return "(global 0 0 %s builtin %s)" % (name, _q("%s.%s" % (value.__module__, value.__name__)))
    if isinstance(value, _np.ufunc):
        return "(global 0 0 %s builtin %s)" % (name, _q("numpy.%s" % value.__name__))
    if isinstance(value, type) and issubclass(value, _np.generic) and value is not _np.generic:
        dt = _np.dtype(value)
        if dt.kind in "biufc":
            return "(global 0 0 %s dtype %s)" % (name, dt.name)
    if value in (int, float, bool):
        return "(global 0 0 %s builtin %s)" % (name, _q(value.__name__))
    if value is complex or value is abs or value is min or value is max or value is len or value is range \
            or value is print or value is round or value is pow or value is enumerate or value is zip:
        return "(global 0 0 %s builtin %s)" % (name, _q(value.__name__))
    t = _value_text(value)
    if t is not None:
        return "(global 0 0 %s value %s)" % (name, t)
    if isinstance(value, _np.ndarray):
        b = _array_binding(name, value)
        if b:
            return b
    return "(global 0 0 %s unsupported %s)" % (name, _q(type(value).__name__))


def free_values(fn, names):
    """The values of names in fn's closure and globals (builtins last); missing ones are left out."""
    out = {}
    closure = {}
    if fn.__closure__:
        for n, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[n] = cell.cell_contents
            except ValueError:
                pass
    for n in names:
        if n in closure:
            out[n] = closure[n]
        elif n in fn.__globals__:
            out[n] = fn.__globals__[n]
        elif n in _BUILTIN_FUNCS:
            continue   # the translator knows them
        elif hasattr(builtins, n):
            out[n] = getattr(builtins, n)
    return out
