"""Sets, counting and statistics (issue 4), built from cudakit's own ops.

Everything here runs on the arrays' device: sorting, searchsorted, nonzero,
gathers and element-wise ops only.  Host values are read back solely where
they decide a shape or raise an error (a count, a maximum, a monotonicity
check), as NumPy itself must.
"""
import builtins as _builtins
import cmath as _cmath
import collections as _collections
import math as _math
import operator as _operator
import warnings as _warnings

from . import _core

_np_bool = _core.bool


def _dev_of(*arrays):
    for a in arrays:
        if isinstance(a, _core.ndarray):
            return a.device
    return None


def _arr(x, device=None, dtype=None):
    if isinstance(x, _core.ndarray) and dtype is None:
        return x
    if device is None:
        return _core.asarray(x, dtype=dtype)
    return _core.asarray(x, dtype=dtype, device=device)


def _slice_axis(a, axis, sl):
    idx = [slice(None)] * a.ndim
    idx[axis] = sl
    return a[tuple(idx)]


def _norm_axis(axis, ndim):
    from . import _normalize_axis_index

    return _normalize_axis_index(axis, ndim)


def _scalar(x):
    """One element of a 0-d (or size-1) array as a Python number."""
    return x.reshape(()).tolist() if hasattr(x, "reshape") else x


# --------------------------------------------------------------- diff, cumsum

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """Differences of n-th order along axis (NumPy's, bool by !=)."""
    a = _arr(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _norm_axis(axis, a.ndim)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        e = extra if extra is a else _arr(extra, a.device)
        if e.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            e = _core.broadcast_to(e, tuple(shape))
        parts.append(e)
    if len(parts) > 1:
        a = _core.concatenate(parts, axis)
    for _ in range(n):
        hi, lo = _slice_axis(a, axis, slice(1, None)), _slice_axis(a, axis, slice(None, -1))
        a = _core.not_equal(hi, lo) if a.dtype == _np_bool else hi - lo
    return a


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's cumulative sum (axis needed above one dimension)."""
    return _cumulative(_core.cumsum, _core.zeros, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's cumulative product (axis needed above one dimension)."""
    return _cumulative(_core.cumprod, _core.ones, x, axis, dtype, include_initial)


def _cumulative(scan, initial, x, axis, dtype, include_initial):
    x = _arr(x)
    if isinstance(axis, bool):   # NumPy's C reading of an axis
        raise TypeError("an integer is required")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be specified for arrays with more than one dimension")
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    axis = _norm_axis(axis, x.ndim)
    res = scan(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(res.shape)
        shape[axis] = 1
        res = _core.concatenate((initial(tuple(shape), dtype=res.dtype, device=res.device), res), axis)
    return res


# ------------------------------------------------------------------- unique

def _unique1d(ar, return_index, return_inverse, return_counts, equal_nan):
    shape = ar.shape
    a = ar.ravel()
    n = a.size
    need_perm = return_index or return_inverse
    if need_perm:
        perm = _core.argsort(a)
        s = _core.take(a, perm)
    else:
        s = _core.sort(a)
    mask = _core.empty((n,), dtype=_np_bool, device=a.device)
    if n:
        mask[:1] = True
        neq = _core.not_equal(s[1:], s[:-1])
        if equal_nan and s.dtype.kind in "fc":
            # NaNs sort last (complex ones too, by any NaN part), so only
            # a NaN's first appearance starts a new value
            nan = _core.isnan(s)
            neq = _core.logical_and(neq, _core.logical_not(_core.logical_and(nan[1:], nan[:-1])))
        mask[1:] = neq
    idx = _core.flatnonzero(mask)
    return [_core.take(s, idx)] + _unique_extras(mask, idx, perm if need_perm else None, shape, return_index,
                                                  return_inverse, return_counts)


def _unique_extras(mask, idx, perm, inverse_shape, return_index, return_inverse, return_counts):
    """What unique returns beside the values, from the sorted order perm,
    the mask of the sorted entries that start a new value and its indices."""
    n = mask.shape[0]
    ret = []
    if return_index:
        ret.append(_core.take(perm, idx))
    if return_inverse:
        inv = _core.empty((n,), dtype=_core.int64, device=mask.device)
        if n:
            inv[perm] = _core.cumsum(mask, dtype=_core.int64) - 1
        ret.append(inv.reshape(inverse_shape))
    if return_counts:
        ends = _core.concatenate((idx, _core.asarray([n], dtype=_core.int64, device=mask.device)))
        ret.append(ends[1:] - ends[:-1])
    return ret


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """The sorted unique elements of ar (flattened), or its unique slices
    along axis (in the lexicographic order of their elements)."""
    a = _arr(ar)
    if axis is None:
        ret = _unique1d(a, return_index, return_inverse, return_counts, equal_nan)
    else:
        ret = _unique_axis(a, _norm_axis(axis, a.ndim), return_index, return_inverse, return_counts)
    return ret[0] if len(ret) == 1 else tuple(ret)


def _unique_axis(a, axis, return_index, return_inverse, return_counts):
    """unique along an axis: its slices as rows, ordered by stable sorts
    of one column after another from the last (a radix sort on columns),
    then the rows that differ from their predecessor."""
    moved = _core.moveaxis(a, axis, 0)
    n = moved.shape[0]
    rows = _core.ascontiguousarray(moved).reshape((n, _math.prod(moved.shape[1:])))
    perm = _core.arange(n, dtype=_core.int64, device=a.device)
    for j in _builtins.range(rows.shape[1] - 1, -1, -1):
        perm = _core.take(perm, _core.argsort(_core.take(rows[:, j], perm), stable=True))
    s = _core.take(rows, perm, axis=0)
    mask = _core.empty((n,), dtype=_np_bool, device=a.device)
    if n:
        mask[:1] = True
        mask[1:] = _core.any(_core.not_equal(s[1:], s[:-1]), axis=1)
    idx = _core.flatnonzero(mask)
    vals = _core.take(s, idx, axis=0).reshape((idx.shape[0],) + moved.shape[1:])
    return [_core.moveaxis(vals, 0, axis)] + _unique_extras(mask, idx, perm, (n,), return_index, return_inverse,
                                                             return_counts)


UniqueAllResult = _collections.namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x):
    """The array API's unique_all(x): (values, indices, inverse_indices, counts) of the flattened x's unique values."""
    return UniqueAllResult(*_unique1d(_arr(x), True, True, True, False))


def unique_counts(x):
    """The array API's unique_counts(x): (values, counts) of the unique values."""
    return UniqueCountsResult(*_unique1d(_arr(x), False, False, True, False))


def unique_inverse(x):
    """The array API's unique_inverse(x): (values, inverse_indices), inverse_indices of x's shape."""
    return UniqueInverseResult(*_unique1d(_arr(x), False, True, False, False))


def unique_values(x):
    """The array API's unique_values(x): the sorted unique values of the flattened x."""
    return _unique1d(_arr(x), False, False, False, False)[0]


# --------------------------------------------------------------------- sets

def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element is in test_elements (by sorting and searching)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    e = _arr(element, _dev_of(element, test_elements))
    t = _arr(test_elements, e.device).ravel()
    if t.size == 0:
        res = _core.zeros(e.shape, dtype=_np_bool, device=e.device)
    else:
        ts = _core.sort(t)
        pos = _core.searchsorted(ts, e)
        pos = _core.minimum(pos, ts.size - 1)
        res = _core.equal(_core.take(ts, pos), e)
    return _core.logical_not(res) if invert else res


def in1d(ar1, ar2, assume_unique=False, invert=False):
    """Whether each element of the flattened ar1 is in ar2 (a 1-d bool array; invert: is not)."""
    return isin(_arr(ar1).ravel(), ar2, assume_unique, invert)


def union1d(ar1, ar2):
    """The sorted unique values of the two arrays together (flattened)."""
    a = _arr(ar1, _dev_of(ar1, ar2))
    return unique(_core.concatenate((a.ravel(), _arr(ar2, a.device).ravel())))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ar1 that are not in ar2 (ar1 flattened as it is when assume_unique)."""
    a = _arr(ar1, _dev_of(ar1, ar2))
    a = a.ravel() if assume_unique else unique(a)
    return a[isin(a, _arr(ar2, a.device), invert=True)]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays; with return_indices also the indices of their first
    occurrences in the flattened ar1 and ar2.
    """
    a1 = _arr(ar1, _dev_of(ar1, ar2))
    a2 = _arr(ar2, a1.device)
    if return_indices:
        a1, ind1 = unique(a1, return_index=True) if not assume_unique else (a1.ravel(), None)
        a2, ind2 = unique(a2, return_index=True) if not assume_unique else (a2.ravel(), None)
    elif not assume_unique:
        a1, a2 = unique(a1), unique(a2)
    else:
        a1, a2 = a1.ravel(), a2.ravel()
    aux = _core.concatenate((a1, a2))
    if return_indices:
        order = _core.argsort(aux)
        aux = _core.take(aux, order)
    else:
        aux = _core.sort(aux)
    mask = _core.equal(aux[1:], aux[:-1])
    res = aux[:-1][mask]
    if not return_indices:
        return res
    i1 = order[:-1][mask]
    i2 = order[1:][mask] - a1.size
    if ind1 is not None:
        i1 = _core.take(ind1, i1)
        i2 = _core.take(ind2, i2)
    return res, i1, i2


# ---------------------------------------------------------------- counting

def bincount(x, weights=None, minlength=0):
    """Counts of each non-negative integer in the 1-d x (weighted sums)."""
    x = _arr(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for desired array")
    if x.dtype.kind not in "biu" and x.size:   # an empty list is float64 but counts nothing
        raise TypeError("Cannot cast array data from dtype('%s') to dtype('int64') according to the rule 'safe'" % x.dtype)
    minlength = _operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    n = minlength
    if x.size:
        top = int(_scalar(_core.max(x)))
        if top > 2**63 - 1:   # NumPy casts to intp: these wrap to negative
            raise ValueError("'list' argument must have no negative elements")
        n = _builtins.max(n, top + 1)
    if weights is None or not x.size:   # NumPy counts nothing in int64, weights or not
        counts = _core._histogram(x.astype(_core.int64) if not x.size else x, n)
        # the bins leave out negative elements: a count short says there were
        if x.size and x.dtype.kind == "i" and int(_scalar(_core.sum(counts))) != x.size:
            raise ValueError("'list' argument must have no negative elements")
        return counts
    if x.dtype.kind == "i" and _scalar(_core.min(x)) < 0:
        raise ValueError("'list' argument must have no negative elements")
    w = _arr(weights, x.device)
    if w.shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    if w.dtype.kind == "c":   # NumPy casts weights to float64 'safe'ly: complex ones fail
        raise TypeError("Cannot cast array data from dtype('%s') to dtype('float64') according to the rule 'safe'"
                        % w.dtype)
    return _core._histogram(x, n, weights=w)


def histogram(a, bins=10, range=None, density=None, weights=None):
    """Counts of a in bins (NumPy's edges: equal widths, last bin closed)."""
    a = _arr(a).ravel()
    if weights is not None and _arr(weights, a.device).size != a.size:
        raise ValueError("weights should have the same shape as a.")
    if isinstance(bins, str):
        if bins in ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"):
            raise NotImplementedError(f"histogram: the bin estimator {bins!r} is not implemented")
        raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
    if isinstance(bins, float):
        raise TypeError("`bins` must be an integer, a string, or an array")
    if isinstance(bins, (int,)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
            if lo > hi:
                raise ValueError("max must be larger than min in range parameter.")
        elif a.size:
            lo, hi = float(_scalar(_core.min(a))), float(_scalar(_core.max(a)))
        else:
            lo, hi = 0.0, 1.0
        if not (_math.isfinite(lo) and _math.isfinite(hi)):
            raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")
        et = a.dtype if a.dtype.kind in "fc" else _core.float64
        if range is None and a.size and a.dtype.kind == "f":
            # NumPy's linspace of a's own min and max, in a's dtype
            lo_a = _core.asarray(lo, dtype=et, device=a.device)
            hi_a = _core.asarray(hi, dtype=et, device=a.device)
            if lo == hi:
                lo_a, hi_a = lo_a - 0.5, hi_a + 0.5
            delta = hi_a - lo_a
            step = delta / bins
            y = _core.arange(bins + 1, dtype=et, device=a.device)
            y = y * step if float(step) != 0 else y / bins * delta
            edges = y + lo_a
            edges[-1] = hi_a
        else:
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges = _core.linspace(lo, hi, bins + 1, dtype=et, device=a.device)
        uniform = True
    else:
        uniform = False
        edges = _arr(bins, a.device)
        if edges.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if edges.size > 1 and not bool(_core.all(edges[1:] >= edges[:-1])):
            raise ValueError("`bins` must increase monotonically, when an array")
    nb = edges.size - 1
    if a.dtype.kind != "c" and edges.dtype.kind != "c" and (weights is None or _arr(weights, a.device).dtype.kind != "c"):
        # one C pass: each value's bin (computed for equal widths, else
        # searched), counts or float64 sums of weights added up
        w = None if weights is None else _arr(weights, a.device).ravel()
        counts = _core._histogram(a, nb, weights=w, edges=edges, uniform=uniform)
        if w is not None:
            counts = counts.astype(_core.result_type(w.dtype, _core.float64) if w.dtype.kind in "biu" else w.dtype)
        if density:
            widths = (edges[1:] - edges[:-1]).astype(_core.float64)
            counts = counts / widths / _core.sum(counts)
        return counts, edges
    # bin i holds edges[i] <= v < edges[i+1]; the last one holds its right edge
    idx = _core.searchsorted(edges, a, side="right") - 1
    last = _core.equal(a, edges[-1:])
    idx = _core.where(last, nb - 1, idx)
    keep = _core.logical_and(idx >= 0, idx < nb)
    keep = _core.logical_and(keep, _core.logical_not(_core.isnan(a)) if a.dtype.kind in "fc" else keep)
    if weights is None:
        counts = bincount(idx[keep], minlength=nb)[:nb]
    else:
        w = _arr(weights, a.device).ravel()
        counts = bincount(idx[keep], weights=w[keep], minlength=nb)[:nb].astype(
            _core.result_type(w.dtype, _core.float64) if w.dtype.kind in "biu" else w.dtype)
    if density:
        widths = (edges[1:] - edges[:-1]).astype(_core.float64)
        counts = counts / widths / _core.sum(counts)
    return counts, edges


def digitize(x, bins, right=False):
    """Indices of the bins each x falls in (bins monotonic, either way)."""
    x = _arr(x, _dev_of(x, bins))
    b = _arr(bins, x.device)
    if b.ndim != 1:
        raise ValueError("bins must be one-dimensional")
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    side = "left" if right else "right"
    if b.size > 1:
        d = b[1:] - b[:-1] if b.dtype.kind != "b" else b[1:].astype(_core.int8) - b[:-1].astype(_core.int8)
        if bool(_core.all(d >= 0)):
            return _core.searchsorted(b, x, side=side)
        if bool(_core.all(d <= 0)):
            return b.size - _core.searchsorted(_core.flip(b, 0), x, side=side)
        raise ValueError("bins must be monotonically increasing or decreasing")
    return _core.searchsorted(b, x, side=side)


# ------------------------------------------------------------- order stats

def _float_type(dt):
    return dt if dt.kind in "fc" else _core.float64


_QUANTILE_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
                        "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
                        "interpolated_inverted_cdf": (0.0, 1.0)}
_QUANTILE_TAKE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")
_QUANTILE_METHODS = tuple(_QUANTILE_CONTINUOUS) + _QUANTILE_TAKE + ("averaged_inverted_cdf", "midpoint")


def _quantile_position(method, q, n):
    """Where NumPy's method puts the q-th quantile of n sorted values:
    (lo, hi, t) to interpolate s[lo] + (s[hi] - s[lo]) * t, or (i, None,
    None) to take s[i] as it is (the methods that keep the dtype)."""
    if method in _QUANTILE_CONTINUOUS:
        alpha, beta = _QUANTILE_CONTINUOUS[method]
        # NumPy computes linear's position directly, not by the formula
        v = (n - 1) * q if method == "linear" else n * q + (alpha + q * (1 - alpha - beta)) - 1
    elif method in ("lower", "higher", "nearest"):
        v = (n - 1) * q
        # round() is half to even, as np.around
        return {"lower": _math.floor, "higher": _math.ceil, "nearest": round}[method](v), None, None
    elif method in ("inverted_cdf", "closest_observation"):
        v = n * q - (1 if method == "inverted_cdf" else 1.5)
        lo = _math.floor(v)
        at_lo = v == lo and (method == "inverted_cdf" or lo % 2 == 1)
        return _builtins.min(_builtins.max(lo if at_lo else lo + 1, 0), n - 1), None, None
    else:   # averaged_inverted_cdf, midpoint
        v = n * q - 1 if method == "averaged_inverted_cdf" else (n - 1) * q
    if v < 0:
        return 0, 0, 0.0
    if v >= n - 1:
        return n - 1, n - 1, 0.0
    lo = int(_math.floor(v))
    t = v - lo
    if method == "averaged_inverted_cdf":
        t = 0.5 if t == 0 else 1.0
    elif method == "midpoint":
        t = 0.0 if t == 0 else 0.5
    return lo, lo + 1, t


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
             interpolation=None):
    """Quantiles of the sorted values by any of NumPy's 13 methods."""
    if interpolation is not None:
        method = interpolation   # NumPy's deprecated name for it
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"'{method}' is not a valid method. Use one of: {_QUANTILE_METHODS}")
    if weights is not None:
        raise NotImplementedError("quantile with weights is not implemented")
    a = _arr(a)
    qs = q.tolist() if isinstance(q, _core.ndarray) else q
    q_scalar = not isinstance(qs, (list, tuple))
    q_shape = () if q_scalar else (_core.asarray(qs).shape if not isinstance(q, _core.ndarray) else q.shape)
    ql = [qs] if q_scalar else list(_core.asarray(qs, dtype=_core.float64).ravel().tolist())
    for v in ql:
        if not 0 <= v <= 1:
            raise ValueError("Quantiles must be in the range [0, 1]")
    orig_ndim = a.ndim
    src, ax, red_axes = _one_axis(a, axis)
    n = src.shape[ax]
    if n == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    base = _float_type(a.dtype)
    ft = base
    strong_q = not q_scalar or isinstance(q, _core.ndarray)
    if strong_q:
        # an array of q is a strong float64 (a Python float is weak), as in
        # NumPy the values interpolate in their own dtype, t in float64
        ft = _core.result_type(base, q.dtype if isinstance(q, _core.ndarray) else _core.float64)
    s_raw = _core.sort(src, axis=ax)
    s = s_raw.astype(base)
    if method in _QUANTILE_TAKE:
        ft = a.dtype   # these pick an element: the dtype stays

    def at(i, arr):
        return _core.take(arr, _core.asarray(i, device=a.device), axis=ax)

    res = []
    for v in ql:
        lo, hi, t = _quantile_position(method, v, n)
        if hi is None:
            res.append(at(lo, s_raw))
            continue
        x0, x1 = at(lo, s), at(hi, s)
        d = x1 - x0
        tt = _core.asarray(t, dtype=ft, device=a.device) if strong_q else t
        # NumPy's lerp: from the nearer end, exact at both ends
        r = x1 - d * (1 - tt) if t >= 0.5 else x0 + d * tt
        res.append(r.astype(ft))
    if a.dtype.kind in "fc":
        # a NaN anywhere in a slice makes its quantile NaN (it sorted last)
        nanrow = _core.isnan(at(n - 1, s))
        res = [_core.where(nanrow, float("nan"), r).astype(ft) for r in res]
    out_res = res[0] if q_scalar else _core.stack(res).reshape(q_shape + res[0].shape)
    return _finish_reduction(out_res, a, red_axes, keepdims, out, q_shape)


def _one_axis(a, axis):
    """a with the axes of axis (None: all) made one, for a reduction along it:
    (view, that axis, the reduced axes of a)."""
    if axis is None:
        return a.ravel(), 0, tuple(_builtins.range(a.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(_norm_axis(x, a.ndim) for x in axes)
    rest = [d for d in _builtins.range(a.ndim) if d not in axes]
    moved = len(axes) > 1 or axes[0] != a.ndim - 1
    src = _core.permute_dims(a, tuple(rest) + axes) if moved else a
    src = src.reshape(tuple(a.shape[d] for d in rest) + (-1,)) if len(axes) > 1 else src
    return src, src.ndim - 1 if moved else axes[0], axes


def _finish_reduction(r, a, red_axes, keepdims, out, lead=()):
    """keepdims and out= of a reduction of a over red_axes (lead: the shape of
    extra leading axes, such as quantile's q)."""
    if keepdims:
        kshape = [1 if d in red_axes else a.shape[d] for d in _builtins.range(a.ndim)]
        r = r.reshape(tuple(lead) + tuple(kshape))
    if out is not None:
        out[...] = r
        return out
    return r


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
               interpolation=None):
    """The q-th percentiles (q in [0, 100]) along axis: quantile(a, q / 100) by the same methods."""
    qs = q.tolist() if isinstance(q, _core.ndarray) else q
    if isinstance(qs, (list, tuple)):
        qa = _core.asarray(qs, dtype=_core.float64)
        if not _builtins.all(0 <= v <= 100 for v in qa.ravel().tolist()):
            raise ValueError("Percentiles must be in the range [0, 100]")
        qq = qa / 100
        if isinstance(q, _core.ndarray):
            qq = qq.astype(_core.result_type(q.dtype, _core.float64))
    else:
        if not 0 <= qs <= 100:
            raise ValueError("Percentiles must be in the range [0, 100]")
        qq = qs / 100
    return quantile(a, qq, axis, out, overwrite_input, method, keepdims, weights=weights, interpolation=interpolation)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis: the mean of the middle one or two sorted values,
    as NumPy's (so an infinity beside the middle stays out of it), NaN where a
    slice holds a NaN; of an empty slice, NaN with NumPy's RuntimeWarning."""
    a = _arr(a)
    if isinstance(axis, (tuple, list)) and not axis:   # no axis: each value is its own median
        return _finish_reduction(a.astype(_float_type(a.dtype)), a, (), keepdims, out)
    src, ax, red_axes = _one_axis(a, axis)
    n = src.shape[ax]
    if n == 0:
        _warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
        shape = tuple(a.shape[d] for d in _builtins.range(a.ndim) if d not in red_axes)
        r = _core.full(shape, float("nan"), dtype=_float_type(a.dtype), device=a.device)
        return _finish_reduction(r, a, red_axes, keepdims, out)
    k = n // 2
    middle = [k] if n % 2 else [k - 1, k]
    # a selection, not a sort: the middle (and the last, where a NaN would be)
    s = _core.partition(src, middle + [n - 1] if a.dtype.kind in "fc" else middle, axis=ax)
    mid = _core.take(s, _core.asarray(middle, device=a.device), axis=ax)
    r = _core.mean(mid, axis=ax)
    if a.dtype.kind in "fc":
        # a NaN anywhere in a slice makes its median NaN (it is placed last)
        last = _core.take(s, _core.asarray(n - 1, device=a.device), axis=ax)
        r = _core.where(_core.isnan(last), float("nan"), r).astype(r.dtype)
    return _finish_reduction(r, a, red_axes, keepdims, out)


# ------------------------------------------------------------ averages etc.

def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The weighted average along axis (the mean when weights is None); with returned, also the sum
    of the weights.
    """
    a = _arr(a)
    if axis is not None:   # NumPy's normalize_axis_tuple: a list, a bool are axes
        axes = tuple(_norm_axis(x, a.ndim) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        axis = axes if isinstance(axis, (tuple, list)) else axes[0]
    if weights is None:
        avg = _core.mean(a, axis=axis, keepdims=keepdims)
        scl = _core.full(avg.shape, a.size // _builtins.max(avg.size, 1) if a.size else 0, dtype=avg.dtype,
                         device=a.device)
    else:
        w = _arr(weights, a.device)
        rt = _core.result_type(a.dtype, w.dtype, _core.float64) if a.dtype.kind in "biu" else _core.result_type(a.dtype, w.dtype)
        if a.shape != w.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
            axes = tuple(_norm_axis(x, a.ndim) for x in axes)
            if w.shape != tuple(a.shape[x] for x in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            wshape = [a.shape[d] if d in axes else 1 for d in _builtins.range(a.ndim)]
            order = sorted(_builtins.range(len(axes)), key=lambda i: axes[i])
            w = _core.permute_dims(w, tuple(order)) if len(axes) > 1 else w
            w = w.reshape(tuple(wshape))
            w = _core.broadcast_to(w, a.shape)
        scl = _core.sum(w, axis=axis, dtype=rt, keepdims=keepdims)
        if bool(_core.any(scl == 0)):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _core.sum(_core.multiply(a, w).astype(rt), axis=axis, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = _core.broadcast_to(scl, avg.shape).copy()
        return avg, scl.astype(avg.dtype)
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """The covariance matrix of the variables in the rows of m (columns when not rowvar), with y's
    variables after them; normalised by N - 1 (N with bias, N - ddof when given), with integer
    frequency weights fweights and observation weights aweights.
    """
    m = _arr(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = _core.result_type(m.dtype, _core.float64)
    X = m.reshape((1, -1)) if m.ndim < 2 else m
    X = X.astype(dtype)
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if y is not None:
        yy = _arr(y, m.device)
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = (yy.reshape((1, -1)) if yy.ndim < 2 else yy).astype(dtype)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = _core.concatenate((X, Y), 0)
    if ddof is None:
        ddof = 0 if bias else 1
    elif ddof != int(ddof):
        raise ValueError("ddof must be integer")
    n = X.shape[1]
    w = _cov_weights(fweights, aweights, n, X.device)
    if w is None:
        fact = n - ddof
        Xc = X - _core.mean(X, axis=1, keepdims=True)
        Xw = Xc
    else:
        w_sum = float(_core.sum(w))
        if w_sum == 0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        Xc = X - _core.sum(X * w, axis=1, keepdims=True) / w_sum
        Xw = Xc * w
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * float(_core.sum(w * _arr(aweights, X.device))) / w_sum
    from . import matmul  # wherever the package defines it (linalg may load lazily)

    c = matmul(Xc, _core.conjugate(Xw).T)
    c = c / fact if fact > 0 else c / 0.0
    return _core.squeeze(c)


def _cov_weights(fweights, aweights, n, device):
    """The observation weights of cov: fweights (integer repeat counts)
    times aweights (importance), checked as NumPy checks them."""
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        v = _arr(given, device)
        if name == "fweights" and v.dtype.kind not in "biu":
            if not bool(_core.all(v == _core.trunc(v))):
                raise TypeError("fweights must be integer")
        if v.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if v.shape[0] != n:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        if bool(_core.any(v < 0)):
            raise ValueError(f"{name} cannot be negative")
        v = v.astype(_core.float64)
        w = v if w is None else w * v
    return w


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """The Pearson correlation coefficients: cov(x, y, rowvar) normalised by the standard deviations."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _core.diagonal(c)
    std = _core.sqrt(_core.real(d) if d.dtype.kind == "c" else d)
    c = c / std[:, None]
    c = c / std[None, :]
    if c.dtype.kind == "c":
        return c
    return _core.clip(c, -1, 1)


# --------------------------------------------------------------- nan-aware

def _nanfill(a, value):
    return _core.where(_core.isnan(a), value, a) if a.dtype.kind in "fc" else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """The sum along axis with NaNs taken as zero."""
    a = _arr(a)
    return _core.sum(_nanfill(a, 0), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def _check_out(out, shape, inexact=False):
    """out= of a nan-aware reduction: a cudakit array of the result's shape
    (and, for a float input's mean, a float or complex one), as NumPy's."""
    if not isinstance(out, _core.ndarray):
        raise TypeError("output must be an array")
    if inexact and out.dtype.kind not in "fc":
        raise TypeError("If a is inexact, then out must be inexact")
    if out.shape != shape:
        raise ValueError(f"output array has shape {out.shape}, the result {shape}")


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean along axis of the values that are not NaN (NaN where all are)."""
    a = _arr(a)
    if a.dtype.kind not in "fc":
        return _core.mean(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    valid = _core.logical_not(_core.isnan(a))
    tot = _core.sum(_nanfill(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)
    cnt = _core.sum(valid, axis=axis, keepdims=keepdims)
    res = _core.divide(tot, cnt).astype(tot.dtype)
    if out is not None:
        _check_out(out, res.shape, inexact=True)
        out[...] = res
        return out
    return res


def _nan_extreme(a, axis, out, keepdims, fn, fill):
    a = _arr(a)
    if a.dtype.kind not in "fc":
        return fn(a, axis=axis, out=out, keepdims=keepdims)
    nan = _core.isnan(a)
    filled = _core.where(nan, fill, a).astype(a.dtype)
    allnan = _core.all(nan, axis=axis, keepdims=keepdims)
    if out is None:
        return _core.where(allnan, float("nan"), fn(filled, axis=axis, keepdims=keepdims)).astype(a.dtype)
    fn(filled, axis=axis, out=out, keepdims=keepdims)   # out='s checks are the reduction's
    out[...] = _core.where(allnan, _core.asarray(float("nan"), device=a.device).astype(out.dtype), out)
    return out


def nanmax(a, axis=None, out=None, keepdims=False):
    """The maximum along axis ignoring NaNs (NaN where all are)."""
    return _nan_extreme(a, axis, out, keepdims, _core.max, float("-inf"))


def nanmin(a, axis=None, out=None, keepdims=False):
    """The minimum along axis ignoring NaNs (NaN where all are)."""
    return _nan_extreme(a, axis, out, keepdims, _core.min, float("inf"))


def _nan_arg(a, axis, out, keepdims, fn, fill):
    a = _arr(a)
    if a.dtype.kind not in "fc":
        return fn(a, axis=axis, out=out, keepdims=keepdims)
    nan = _core.isnan(a)
    if bool(_core.any(_core.all(nan, axis=axis))):
        raise ValueError("All-NaN slice encountered")
    return fn(_core.where(nan, fill, a).astype(a.dtype), axis=axis, out=out, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """The index of the maximum ignoring NaNs (ValueError for a slice of NaNs only)."""
    return _nan_arg(a, axis, out, keepdims, _core.argmax, float("-inf"))


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """The index of the minimum ignoring NaNs (ValueError for a slice of NaNs only)."""
    return _nan_arg(a, axis, out, keepdims, _core.argmin, float("inf"))


# ------------------------------------------------------------- comparison

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether a and b are equal within |a - b| <= atol + rtol * |b|, element-wise (NaNs equal with
    equal_nan).
    """
    dev = _dev_of(a, b)
    x = a if isinstance(a, (int, float, complex)) else _arr(a, dev)
    y = b if isinstance(b, (int, float, complex)) else _arr(b, dev)
    if isinstance(y, _core.ndarray):
        y = y.astype(_core.result_type(y.dtype, 1.0))
    elif isinstance(y, int):
        y = float(y)
    if not isinstance(x, _core.ndarray) and not isinstance(y, _core.ndarray):
        x = _core.asarray(x)
    if isinstance(y, _core.ndarray):
        tol, y_finite, y_nan = atol + rtol * _core.absolute(y), _core.isfinite(y), _core.isnan(y)
    else:   # a Python scalar stays one, so that it follows x to its device
        tol, y_finite, y_nan = atol + rtol * abs(y), _cmath.isfinite(y), _cmath.isnan(y)
    res = _core.logical_or(_core.logical_and(_core.less_equal(_core.absolute(x - y), tol), y_finite),
                           _core.equal(x, y))
    if equal_nan:
        x_nan = _core.isnan(x) if isinstance(x, _core.ndarray) else _cmath.isnan(x)
        res = _core.logical_or(res, _core.logical_and(x_nan, y_nan))
    return res


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of a and b is close (isclose), as a Python bool."""
    return bool(_core.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """Whether the two arrays have the same shape and elements (NaNs equal with equal_nan)."""
    dev = _dev_of(a1, a2)
    try:
        x, y = _arr(a1, dev), _arr(a2, dev)
    except Exception:
        return False
    if x.shape != y.shape:
        return False
    eq = _core.equal(x, y)
    if equal_nan and (x.dtype.kind in "fc" or y.dtype.kind in "fc"):
        eq = _core.logical_or(eq, _core.logical_and(_core.isnan(x), _core.isnan(y)))
    return bool(_core.all(eq))
