"""What ``help()`` and ``inspect.signature`` show for the callables of the C
core that are objects, not functions: the ufuncs (``ck.exp``) and the dtypes
(``ck.float32(3)``).

The C functions carry their signatures in their docstrings (CPython's
``name(sig)\\n--\\n\\n`` convention, src/python/ck_python.h); a ufunc is an
instance of one C type, so its signature and its docstring are computed
from its name and ``nin`` by the descriptors installed here into the type's
dictionary (``_core._extend_type``).  Nothing is imported until one is read.
"""
from . import _core

# One line on what each ufunc computes (the name is NumPy's ufunc of the same name).
_UFUNC_TEXT = {
    "negative": "Numerical negative, -x.",
    "positive": "Numerical positive, +x (a copy).",
    "absolute": "The absolute value (the magnitude for complex numbers).",
    "sign": "The sign: -1, 0 or 1 (x / |x| for complex numbers), NaN for NaN.",
    "conjugate": "The complex conjugate (the value itself for real numbers).",
    "square": "x * x.",
    "reciprocal": "1 / x (integer division for integers, as NumPy's).",
    "sqrt": "The non-negative square root (NaN for negative reals).",
    "cbrt": "The cube root.",
    "exp": "The exponential, e ** x.",
    "exp2": "2 ** x.",
    "expm1": "exp(x) - 1, accurate for small x.",
    "log": "The natural logarithm.",
    "log2": "The base-2 logarithm.",
    "log10": "The base-10 logarithm.",
    "log1p": "log(1 + x), accurate for small x.",
    "sin": "The sine (x in radians).",
    "cos": "The cosine (x in radians).",
    "tan": "The tangent (x in radians).",
    "arcsin": "The inverse sine, in radians.",
    "arccos": "The inverse cosine, in radians.",
    "arctan": "The inverse tangent, in radians.",
    "sinh": "The hyperbolic sine.",
    "cosh": "The hyperbolic cosine.",
    "tanh": "The hyperbolic tangent.",
    "arcsinh": "The inverse hyperbolic sine.",
    "arccosh": "The inverse hyperbolic cosine.",
    "arctanh": "The inverse hyperbolic tangent.",
    "deg2rad": "Degrees to radians.",
    "rad2deg": "Radians to degrees.",
    "floor": "The largest integer not above x.",
    "ceil": "The smallest integer not below x.",
    "trunc": "x rounded towards zero.",
    "rint": "x rounded to the nearest integer, halves to even.",
    "isnan": "Whether x is NaN.",
    "isinf": "Whether x is positive or negative infinity.",
    "isfinite": "Whether x is neither infinite nor NaN.",
    "signbit": "Whether the sign bit is set (x < 0, -0.0 included).",
    "logical_not": "The truth value of not x.",
    "invert": "Bitwise not (logical not for booleans).",
    "add": "x1 + x2.",
    "subtract": "x1 - x2.",
    "multiply": "x1 * x2.",
    "divide": "True division, x1 / x2.",
    "floor_divide": "x1 // x2, the floor of the quotient.",
    "remainder": "x1 % x2, with the sign of the divisor (Python's).",
    "fmod": "The remainder of division, with the sign of the dividend (C's fmod).",
    "power": "x1 ** x2.",
    "maximum": "The element-wise maximum (NaN propagates).",
    "minimum": "The element-wise minimum (NaN propagates).",
    "fmax": "The element-wise maximum, ignoring NaNs.",
    "fmin": "The element-wise minimum, ignoring NaNs.",
    "copysign": "x1 with the sign of x2.",
    "hypot": "sqrt(x1 ** 2 + x2 ** 2), without overflow on the way.",
    "arctan2": "The angle of the point (x2, x1), in radians, in the right quadrant.",
    "logaddexp": "log(exp(x1) + exp(x2)), computed stably.",
    "logaddexp2": "log2(2 ** x1 + 2 ** x2), computed stably.",
    "nextafter": "The next floating-point value after x1 towards x2.",
    "equal": "x1 == x2.",
    "not_equal": "x1 != x2.",
    "less": "x1 < x2.",
    "less_equal": "x1 <= x2.",
    "greater": "x1 > x2.",
    "greater_equal": "x1 >= x2.",
    "logical_and": "The truth value of x1 and x2.",
    "logical_or": "The truth value of x1 or x2.",
    "logical_xor": "The truth value of x1 xor x2.",
    "bitwise_and": "x1 & x2 (integers and booleans).",
    "bitwise_or": "x1 | x2 (integers and booleans).",
    "bitwise_xor": "x1 ^ x2 (integers and booleans).",
    "left_shift": "x1 << x2.",
    "right_shift": "x1 >> x2.",
    "gcd": "The greatest common divisor of |x1| and |x2|.",
    "lcm": "The lowest common multiple of |x1| and |x2|.",
    "where": "x2 where x1 (the condition) is true, else x3 (cudakit.where is the function over it).",
    "clip": "x1 limited to [x2, x3] (cudakit.clip is the function over it).",
}

_signatures = {}


def _input_names(nin):
    return ["x"] if nin == 1 else [f"x{i}" for i in range(1, nin + 1)]


def ufunc_signature(ufunc):
    """The inspect.Signature of a ufunc's call: its nin inputs positional-only,
    out positional or keyword, then the keywords the call takes (NumPy's names
    and order: where, casting, order, dtype, subok, signature)."""
    key = (ufunc.nin, ufunc.nout)
    sig = _signatures.get(key)
    if sig is None:
        from inspect import Parameter, Signature

        params = [Parameter(n, Parameter.POSITIONAL_ONLY) for n in _input_names(ufunc.nin)]
        params.append(Parameter("out", Parameter.POSITIONAL_OR_KEYWORD,
                                default=None if ufunc.nout == 1 else (None,) * ufunc.nout))
        params += [Parameter("where", Parameter.KEYWORD_ONLY, default=True),
                   Parameter("casting", Parameter.KEYWORD_ONLY, default="same_kind"),
                   Parameter("order", Parameter.KEYWORD_ONLY, default="K"),
                   Parameter("dtype", Parameter.KEYWORD_ONLY, default=None),
                   Parameter("subok", Parameter.KEYWORD_ONLY, default=True),
                   Parameter("signature", Parameter.KEYWORD_ONLY, default=None)]
        sig = _signatures[key] = Signature(params)
    return sig


def ufunc_doc(ufunc):
    """The docstring of one ufunc: its call, then what it computes."""
    name = ufunc.__name__
    text = _UFUNC_TEXT.get(name, f"NumPy's {name}, element-wise.")
    ins = ", ".join(_input_names(ufunc.nin))
    return (f"{name}{ufunc_signature(ufunc)}\n\n{text}\n\n"
            f"A cudakit ufunc: element-wise over arrays of any device, with broadcasting and NumPy 2's type rules, "
            f"as numpy.{name}.  {ins}: array-likes (Python scalars are weak, NEP 50); out: an array for the result "
            f"(positional too, or a 1-tuple); where: a boolean mask of the elements to compute (the others keep "
            f"out's values); casting: 'no', 'equiv', 'safe', 'same_kind' or 'unsafe', for the inputs' casts to the "
            f"loop and the loop's to out; order: the result's layout ('K' and 'C' give C order, 'F' Fortran order, "
            f"'A' Fortran order when every input is); dtype: the dtype of the loop and result; subok: accepted "
            f"(cudakit has no subclasses); signature: the loop's types, as 'dd->d' or a tuple with None where "
            f"free.  "
            f"Methods: reduce, accumulate, outer, at, reduceat (for ufuncs of two inputs).")


def dtype_signature(dt):
    """The signature of calling a dtype: ck.float32(3) is a 0-d array of 3 on the default device."""
    sig = _signatures.get("dtype")
    if sig is None:
        from inspect import Parameter, Signature

        sig = _signatures["dtype"] = Signature([Parameter("value", Parameter.POSITIONAL_OR_KEYWORD, default=0)])
    return sig


class _PerObject:
    """A non-data descriptor whose value is computed from the instance it is
    read on; read on the class it is None, so that inspect looks further
    (the class's own signature) and the class keeps its docstring."""

    def __init__(self, build, name):
        self._build = build
        self.__name__ = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None
        return self._build(obj)


_core._extend_type(_core.ufunc, {"__signature__": _PerObject(ufunc_signature, "__signature__"),
                                 "__doc__": _PerObject(ufunc_doc, "__doc__")}, True)
_core._extend_type(_core.dtype, {"__signature__": _PerObject(dtype_signature, "__signature__")}, True)
