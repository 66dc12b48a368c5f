"""Numba's type objects, on cudakit's dtypes: scalar types that make array
types by slicing (``float32[:]``, ``float32[:, ::1]`` C-ordered,
``float32[::1, :]`` F-ordered) and signatures by calling
(``void(float32[:], int32)``, ``float32(float32, float32)``).  Called on a
value outside a kernel, a scalar type converts it (``float32(0.5)``).

    >>> from cudakit.cuda.types import float32, int32, void
    >>> void(float32[:, ::1], int32)
    void(array(float32, 2d, C), int32)
"""
__all__ = ["Type", "Scalar", "Array", "Signature", "void", "none", "boolean", "bool_", "int8", "uint8", "int16",
           "uint16", "int32", "uint32", "int64", "uint64", "intp", "uintp", "float16", "float32", "float64",
           "complex64", "complex128", "b1", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8",
           "c16", "from_dtype", "typeof"]


class Type:
    """The base of Numba-style types."""

    def __call__(self, *args):
        if args and all(isinstance(a, Type) for a in args) or not args and self is void:
            return Signature(self, args)
        raise TypeError(f"{self} cannot convert a value")

    def __eq__(self, other):
        return isinstance(other, Type) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


class _NoneType(Type):
    """Numba's void (none): the return type of a kernel's signature, void(float32[:], int32)."""

    def __repr__(self):
        return "none"


void = none = _NoneType()


class Scalar(Type):
    """A NumPy scalar type: float32, int64 ..."""

    def __init__(self, name):
        self.name = name

    @property
    def dtype(self):
        import numpy as np   # (not at import: `import cudakit` does not import NumPy)
        return np.dtype(self.name)

    def __getitem__(self, item):
        items = item if isinstance(item, tuple) else (item,)
        for s in items:
            if not isinstance(s, slice) or s.start is not None or s.stop is not None or s.step not in (None, 1):
                raise TypeError(f"array types are made with ':' and '::1' slices, as {self}[:, ::1]")
        n = len(items)
        contig = [s.step == 1 for s in items]
        if not any(contig):
            layout = "A"
        elif contig == [False] * (n - 1) + [True]:
            layout = "C"
        elif contig == [True] + [False] * (n - 1):
            layout = "F"
        else:
            raise TypeError("only the first or the last dimension can be '::1'")
        return Array(self, n, layout)

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return self.dtype.type(args[0])
        return super().__call__(*args)

    def __repr__(self):
        return self.name


class Array(Type):
    """An array type: dtype, number of dimensions, layout ('C', 'F' or 'A')."""

    def __init__(self, dtype, ndim, layout="A", readonly=False):
        self.dtype = dtype if isinstance(dtype, Scalar) else from_dtype(dtype)
        self.ndim = ndim
        self.layout = "C" if ndim <= 1 and layout == "F" else layout
        self.readonly = readonly

    def __repr__(self):
        ro = ", readonly" if self.readonly else ""
        return f"array({self.dtype}, {self.ndim}d, {self.layout}{ro})"


class Signature:
    """A function type: return type and argument types."""

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = tuple(args)

    def __repr__(self):
        return f"{self.return_type}({', '.join(map(repr, self.args))})"

    def __eq__(self, other):
        return isinstance(other, Signature) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


boolean = bool_ = b1 = Scalar("bool")
int8 = i1 = Scalar("int8")
uint8 = u1 = Scalar("uint8")
int16 = i2 = Scalar("int16")
uint16 = u2 = Scalar("uint16")
int32 = i4 = Scalar("int32")
uint32 = u4 = Scalar("uint32")
int64 = i8 = intp = Scalar("int64")
uint64 = u8 = uintp = Scalar("uint64")
float16 = f2 = Scalar("float16")
float32 = f4 = Scalar("float32")
float64 = f8 = Scalar("float64")
complex64 = c8 = Scalar("complex64")
complex128 = c16 = Scalar("complex128")

_BY_NAME = {t.name: t for t in (boolean, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16,
                                 float32, float64, complex64, complex128)}


def from_dtype(dtype):
    """The type of a NumPy or cudakit dtype (structured dtypes are not supported by cudakit arrays)."""
    import numpy as _np
    dt = _np.dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, _np.dtype) else dtype)
    if dt.fields is not None:
        raise NotImplementedError("structured dtypes are not supported: cudakit arrays hold numbers")
    try:
        return _BY_NAME[dt.name]
    except KeyError:
        raise TypeError(f"no kernel type for dtype {dt}") from None


def typeof(value):
    """The type a kernel argument has (what the dispatcher specialises on)."""
    import numpy as _np
    from .. import _core
    if isinstance(value, _core.ndarray):
        f = value.flags
        layout = "C" if f["C_CONTIGUOUS"] else "F" if f["F_CONTIGUOUS"] else "A"
        return Array(from_dtype(value.dtype), value.ndim, layout, not f["WRITEABLE"])
    if isinstance(value, _np.ndarray):
        f = value.flags
        return Array(from_dtype(value.dtype), value.ndim, "C" if f.c_contiguous else "F" if f.f_contiguous else "A",
                     not f.writeable)
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    if isinstance(value, _np.generic):
        return from_dtype(value.dtype)
    raise TypeError(f"no kernel type for a {type(value).__name__}")


def parse(sig, namespace=None):
    """A signature string ("void(float32[:], int32)") or object as a Signature."""
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        ns = dict(_BY_NAME)
        ns.update({n: globals()[n] for n in __all__ if n in globals()})
        ns.update(namespace or {})
        try:
            s = eval(sig, {"__builtins__": {}}, ns)   # the names are the types above alone
        except Exception as exc:
            raise TypeError(f"cannot read the signature {sig!r}: {exc}") from None
        if isinstance(s, Signature):
            return s
        if isinstance(s, tuple):
            return Signature(void, s)
        raise TypeError(f"{sig!r} is not a signature")
    if isinstance(sig, tuple):
        return Signature(void, sig)
    raise TypeError(f"a signature is a string such as 'void(float32[:])' or a type call, not {sig!r}")
