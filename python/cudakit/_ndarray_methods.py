"""NumPy's ndarray methods and ufunc methods that are compositions of ops.

Installed into the C types' own dictionaries at ``import cudakit``
(``_core._extend_type``, src/python/extend.c), so they are ordinary
attributes (``x.take(i)``, ``ck.add.reduce(x)``); a member the C type
defines itself is never replaced.  Nothing here imports NumPy until a
method that needs it runs.
"""
import operator as _operator
import types as _types

from . import _core
from ._core import ndarray


def _ck():
    import cudakit

    return cudakit


def _extra():
    from . import _numpy_extra

    return _numpy_extra


# ------------------------------------------------------------------ ndarray

def _take(self, indices, axis=None, out=None, mode="raise"):
    """a.take(indices, axis=None, out=None, mode='raise'): elements at indices along axis."""
    return _core.take(self, indices, axis=axis, out=out, mode=mode)


def _put(self, indices, values, mode="raise"):
    """a.put(indices, values, mode='raise'): a.flat[indices] = values, in place."""
    return _core.put(self, indices, values, mode=mode)


def _nonzero(self):
    """a.nonzero(): a tuple of the indices of the non-zero elements, one array per axis."""
    return _core.nonzero(self)


def _searchsorted(self, v, side="left", sorter=None):
    """a.searchsorted(v, side='left', sorter=None): insertion points of v into the sorted a."""
    return _core.searchsorted(self, v, side=side, sorter=sorter)


def _compress(self, condition, axis=None, out=None):
    """a.compress(condition, axis=None, out=None): the slices along axis where condition holds."""
    return _core.compress(condition, self, axis=axis, out=out)


def _choose(self, choices, out=None, mode="raise"):
    """a.choose(choices, out=None, mode='raise'): choices[a[p]][p] at every position."""
    return _core.choose(self, choices, out=out, mode=mode)


def _partition(self, kth, axis=-1, kind="introselect", order=None):
    """a.partition(kth, axis=-1): in place, the kth element where sorting puts it, smaller ones before."""
    self[...] = _core.partition(self, kth, axis=axis)


def _argpartition(self, kth, axis=-1, kind="introselect", order=None):
    """a.argpartition(kth, axis=-1): the indices that partition a."""
    return _core.argpartition(self, kth, axis=axis)


def _round(self, decimals=0, out=None):
    """a.round(decimals=0, out=None): rounded to the given decimals, halves to even."""
    return _ck().round(self, decimals, out=out)


def _dot(self, b, out=None):
    """a.dot(b, out=None): the dot product (matrix product for 2-d arrays)."""
    r = _ck().dot(self, b)
    if out is not None:
        out[...] = r
        return out
    return r


def _resize(self, *new_shape, refcheck=True):
    """a.resize(new_shape): in place, a's elements in C order then zeros (a must own its memory)."""
    if len(new_shape) == 1 and (isinstance(new_shape[0], (tuple, list)) or new_shape[0] is None):
        new_shape = new_shape[0] or ()
    new_shape = tuple(_operator.index(n) for n in new_shape)
    if any(n < 0 for n in new_shape):
        raise ValueError("negative dimensions not allowed")
    size = 1
    for n in new_shape:
        size *= n
    flat = self.ravel()
    if size <= self.size:
        body = flat[:size].copy()
    else:
        body = _core.concatenate((flat, _core.zeros((size - self.size,), dtype=self.dtype, device=self.device)))
    _core._array_rebind(self, body.reshape(new_shape))
    return None


def _tobytes(self, order="C"):
    """a.tobytes(order='C'): the raw bytes of the elements (copied to the host)."""
    return _core.asnumpy(self).tobytes(order)


def _tofile(self, fid, sep="", format="%s"):
    """a.tofile(fid, sep='', format='%s'): the elements written to a file, binary or text (from a host copy)."""
    _core.asnumpy(self).tofile(fid, sep=sep, format=format)


def _dumps(self):
    """a.dumps(): the pickle of the array, as bytes."""
    import pickle

    return pickle.dumps(self, protocol=2)


def _dump(self, file):
    """a.dump(file): the pickle of the array, written to a file (path or open file)."""
    import pickle

    if isinstance(file, (str, bytes)) or hasattr(file, "__fspath__"):
        with open(file, "wb") as f:
            pickle.dump(self, f, protocol=2)
    else:
        pickle.dump(self, file, protocol=2)


def _byteswap(self, inplace=False):
    """a.byteswap(inplace=False): the bytes of each element reversed."""
    if self.itemsize == 1:
        if inplace:
            return self
        return self.copy()
    c = _core.ascontiguousarray(self)
    isz = self.itemsize if self.dtype.kind != "c" else self.itemsize // 2
    u = c.view("uint8").reshape(tuple(self.shape) + (-1, isz))
    r = u[..., ::-1].copy().reshape(tuple(self.shape[:-1]) + (-1,) if self.ndim else (-1,)).view(self.dtype).reshape(self.shape)
    if inplace:
        self[...] = r
        return self
    return r


def _setflags(self, write=None, align=None, uic=None):
    """a.setflags(write=None, align=None, uic=None): cudakit arrays are always aligned and writeable."""
    if write is False:
        raise NotImplementedError("read-only cudakit arrays are not supported (setflags(write=False))")
    if align is False:
        raise ValueError("cudakit arrays are always aligned")
    if uic:
        raise ValueError("cannot set WRITEBACKIFCOPY flag to True")


def _flat(self):
    """A flat iterator over the elements (C order); indexing it reads and writes the array."""
    return _extra().flatiter(self)


def _flat_set(self, value):
    _extra().flatiter(self)[...] = value


def _setstate(self, state):
    """a.__setstate__(state): a takes the values of a pickled array, from NumPy's state tuple
    (version, shape, dtype, is_fortran, raw bytes) or cudakit's (raw bytes, dtype, shape[, device])."""
    if len(state) == 5:
        _version, shape, dt, fortran, raw = state
        dev = self.device
    elif len(state) == 4:
        raw, dt, shape, dev = state
        fortran = False
    else:
        raise ValueError("__setstate__: a state of 4 or 5 items is expected")
    import numpy

    h = numpy.frombuffer(raw, dtype=str(dt)).reshape(tuple(shape), order="F" if fortran else "C")
    _core._array_rebind(self, _core.array(h, device=dev, copy=True), True)


class DataPointer:
    """Where a GPU array's elements are (``a.data`` of a cudakit array on a GPU): ``ptr``, ``size`` in
    bytes and ``device``.  On the CPU ``a.data`` is a memoryview, as NumPy's."""

    def __init__(self, a):
        self.ptr = a.__cuda_array_interface__["data"][0]
        self.size = a.nbytes
        self.device = a.device

    def __int__(self):
        return self.ptr

    def __repr__(self):
        return f"<cudakit.DataPointer 0x{self.ptr:x} ({self.size} bytes) on {self.device}>"


DataPointer.__module__ = "cudakit"


def _data(self):
    """The memory of the elements: a memoryview on the CPU, a DataPointer (ptr, size, device) on a GPU."""
    if str(self.device) == "cpu":
        return memoryview(self)
    return DataPointer(self)


def _class_getitem(cls, item):
    return _types.GenericAlias(cls, item)


_NDARRAY = {
    "take": _take, "put": _put, "nonzero": _nonzero, "searchsorted": _searchsorted, "compress": _compress,
    "choose": _choose, "partition": _partition, "argpartition": _argpartition, "round": _round, "dot": _dot,
    "resize": _resize, "tobytes": _tobytes, "tofile": _tofile, "dumps": _dumps, "dump": _dump,
    "byteswap": _byteswap, "setflags": _setflags,
    "flat": property(_flat, _flat_set, doc=_flat.__doc__),
    "__class_getitem__": classmethod(_class_getitem),
    "__setstate__": _setstate,
    "data": property(_data, doc=_data.__doc__),
}

# ------------------------------------------------------------------ ufunc

# the C reductions and scans that are a ufunc's reduce and accumulate
_REDUCERS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any"}
_SCANS = {"add": "cumsum", "multiply": "cumprod"}
_IDENTITIES = {"add": 0, "multiply": 1, "logical_and": True, "logical_or": False, "logical_xor": False,
               "bitwise_and": -1, "bitwise_or": 0, "bitwise_xor": 0, "subtract": None, "gcd": 0,
               "logaddexp": float("-inf"), "logaddexp2": float("-inf"), "hypot": 0}
_REORDERABLE = {"add", "multiply", "maximum", "minimum", "logical_and", "logical_or", "logical_xor",
                "bitwise_and", "bitwise_or", "bitwise_xor", "fmax", "fmin", "gcd", "lcm", "logaddexp",
                "logaddexp2", "hypot"}


def _check_binary(uf, what):
    if uf.nin != 2:
        raise ValueError(f"{what} only supported for binary functions")


def _reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """ufunc.reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    the ufunc applied along axis, reducing it."""
    _check_binary(self, "reduce")
    a = _core.asarray(array)
    name = self.__name__
    multi = (isinstance(axis, tuple) and len(axis) > 1) or (axis is None and a.ndim > 1)
    if multi and name not in _REORDERABLE:
        raise ValueError(f"reduction operation '{name}' is not reorderable, so at most one axis may be specified")
    if name in _REDUCERS:
        kw = {"axis": axis, "keepdims": keepdims}
        if initial is not None:
            kw["initial"] = initial
        if where is not True:
            kw["where"] = where
        if dtype is not None:
            # max/min/all/any take no dtype: the input is cast first
            if _REDUCERS[name] in ("max", "min", "all", "any"):
                a = a.astype(dtype)
            else:
                kw["dtype"] = dtype
        r = getattr(_core, _REDUCERS[name])(a, **kw)
        if out is not None:
            out[...] = r
            return out
        return r
    if where is not True:
        raise NotImplementedError(f"{name}.reduce(where=) is not implemented")
    if dtype is not None:
        a = a.astype(dtype)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(_extra()._norm_axis(i, a.ndim) for i in (axis if isinstance(axis, tuple) else (axis,)))
    r = a
    for ax in sorted(axes, reverse=True):
        n = r.shape[ax]
        m = _core.moveaxis(r, ax, 0)
        if n == 0:
            ident = _IDENTITIES.get(name) if initial is None else initial
            if ident is None:
                raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
            acc = _core.full(m.shape[1:], ident, dtype=r.dtype, device=r.device)
        else:
            acc = m[0] if initial is None else self(_core.asarray(initial, device=r.device).astype(r.dtype), m[0])
            for i in range(1, n):
                acc = self(acc, m[i])
            acc = acc.astype(r.dtype) if acc.dtype != r.dtype and dtype is not None else acc
        r = acc
        if keepdims:
            r = _core.expand_dims(r, ax)
    if out is not None:
        out[...] = r
        return out
    return r


def _accumulate(self, array, axis=0, dtype=None, out=None):
    """ufunc.accumulate(array, axis=0, dtype=None, out=None): the running results of the ufunc along axis."""
    _check_binary(self, "accumulate")
    a = _core.asarray(array)
    name = self.__name__
    if a.ndim == 0:
        raise ValueError("accumulate: cannot accumulate on a scalar")
    if name in _SCANS:
        return getattr(_core, _SCANS[name])(a, axis=axis, dtype=dtype, out=out)
    if dtype is not None:
        a = a.astype(dtype)
    ax = _extra()._norm_axis(axis, a.ndim)
    m = _core.moveaxis(a, ax, 0)
    if m.shape[0] == 0:
        r = a.copy()
    else:
        rows = [m[0]]
        for i in range(1, m.shape[0]):
            rows.append(self(rows[-1], m[i]).astype(a.dtype) if dtype is not None else self(rows[-1], m[i]))
        r = _core.moveaxis(_core.stack(rows), 0, ax)
    if out is not None:
        out[...] = r
        return out
    return r


def _outer(self, A, B, /, **kwargs):
    """ufunc.outer(A, B): the ufunc of every pair, shape A.shape + B.shape."""
    _check_binary(self, "outer")
    A = _core.asarray(A)
    B = _core.asarray(B, device=A.device) if not isinstance(B, ndarray) else B
    return self(A.reshape(tuple(A.shape) + (1,) * B.ndim), B, **kwargs)


def _linear_selection(a, indices):
    """The flat indices of a's elements that a[indices] selects, in that order."""
    pos = _core.arange(a.size, device=a.device).reshape(a.shape)
    return pos[indices]


def _at(self, a, indices, b=None, /):
    """ufunc.at(a, indices, b=None): in place, a[indices] = ufunc(a[indices], b), unbuffered: an index
    that repeats gets the ufunc applied once per occurrence."""
    ck = _ck()
    sel = _linear_selection(a, indices)
    if self.nin == 1:
        if b is not None:
            raise ValueError(f"second operand given to the unary ufunc {self.__name__}.at")
        lin = sel.ravel()
        vals = None
    else:
        if b is None:
            raise ValueError("second operand needed for ufunc")
        lin = sel.ravel()
        bb = _core.asarray(b, device=a.device) if not isinstance(b, ndarray) else b
        vals = _core.broadcast_to(bb, sel.shape).ravel()
    if self.__name__ in ("add", "subtract") and a.dtype.kind in "iuf" and lin.size:
        _at_add(a, lin, vals, self.__name__ == "subtract")
        return None
    # each round applies the first remaining occurrence of every index
    while lin.size:
        u, first = ck.unique(lin, return_index=True)
        cur = _core.take(a, u)
        new = self(cur) if vals is None else self(cur, _core.take(vals, first))
        _core.put(a, u, new.astype(a.dtype))
        keep = _core.ones((lin.size,), dtype="bool", device=a.device)
        keep[first] = False
        lin = lin[keep]
        if vals is not None:
            vals = vals[keep]
    return None


def _at_add(a, lin, vals, negate):
    """add.at / subtract.at in one pass however often an index repeats: the values summed per index
    (in float64 by bincount for floats; for integers exactly, as differences of a running int64 sum
    over the values sorted by index, which wraps as the repeated adds would)."""
    ck = _ck()
    if a.dtype.kind == "f":
        s = ck.bincount(lin, weights=vals.astype("float64"), minlength=a.size)
        flat = _core.subtract(a.ravel(), s) if negate else _core.add(a.ravel(), s)
        a[...] = flat.astype(a.dtype).reshape(a.shape)
        return
    order = _core.argsort(lin, kind="stable")
    sl = _core.take(lin, order)
    sv = _core.take(vals.astype("int64"), order)
    cs = _core.cumsum(sv)
    last = _core.concatenate((_core.not_equal(sl[1:], sl[:-1]), _core.ones((1,), dtype="bool", device=a.device)))
    ends = _core.flatnonzero(last)
    totals = _core.take(cs, ends)
    totals = _core.concatenate((totals[:1], _core.subtract(totals[1:], totals[:-1])))
    u = _core.take(sl, ends)
    cur = _core.take(a, u).astype("int64")
    new = _core.subtract(cur, totals) if negate else _core.add(cur, totals)
    _core.put(a, u, new.astype(a.dtype))


def _reduceat(self, array, indices, axis=0, dtype=None, out=None):
    """ufunc.reduceat(array, indices, axis=0): reductions over the slices [indices[i], indices[i+1])
    along axis (the single element indices[i] where indices[i] >= indices[i+1])."""
    _check_binary(self, "reduceat")
    a = _core.asarray(array)
    ax = _extra()._norm_axis(axis, a.ndim)
    idx = [int(i) for i in (indices.tolist() if isinstance(indices, ndarray) else list(indices))]
    n = a.shape[ax]
    m = _core.moveaxis(a, ax, 0)
    rows = []
    for k, i in enumerate(idx):
        if not 0 <= i < n:
            raise IndexError(f"index {i} out-of-bounds in {self.__name__}.reduceat [0, {n})")
        j = idx[k + 1] if k + 1 < len(idx) else n
        if j <= i:
            rows.append(m[i] if dtype is None else m[i].astype(dtype))
        else:
            rows.append(_reduce(self, m[i:j], axis=0, dtype=dtype))
    if not rows:
        r = _core.zeros((0,) + tuple(m.shape[1:]), dtype=a.dtype, device=a.device)
    else:
        r = _core.stack(rows)
    r = _core.moveaxis(r, 0, ax)
    if out is not None:
        out[...] = r
        return out
    return r


def _resolve_dtypes(self, dtypes, *, signature=None, casting=None, reduction=False):
    """ufunc.resolve_dtypes(dtypes): the dtypes of the loop a call with these input dtypes uses (inputs..., output)."""
    dtypes = tuple(dtypes)
    if len(dtypes) != self.nin + self.nout:
        raise TypeError(f"dtypes must be a tuple of {self.nin + self.nout} entries")
    ins = [_core.ones((1,), dtype=d, device="cpu") for d in dtypes[: self.nin]]
    r = self(*ins)
    outs = r if isinstance(r, tuple) else (r,)
    common = _core.result_type(*ins) if self.nin > 1 else ins[0].dtype
    return tuple([common] * self.nin) + tuple(o.dtype for o in outs)


def _identity(self):
    return _IDENTITIES.get(self.__name__)


_UFUNC = {
    "reduce": _reduce, "accumulate": _accumulate, "outer": _outer, "at": _at, "reduceat": _reduceat,
    "resolve_dtypes": _resolve_dtypes,
    "identity": property(_identity, doc="The ufunc's identity (the value of an empty reduction), or None."),
    "nargs": property(lambda self: self.nin + self.nout, doc="Number of arguments: nin + nout."),
    "ntypes": property(lambda self: len(self.types), doc="Number of type signatures (loops)."),
    "signature": property(lambda self: None, doc="The core signature: None, these are element-wise ufuncs."),
}

_core._extend_type(ndarray, _NDARRAY)
_core._extend_type(_core.ufunc, _UFUNC)
