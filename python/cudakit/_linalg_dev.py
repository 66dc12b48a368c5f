"""The products of cudakit's top level (dot, vdot, inner, outer, tensordot,
kron, vecdot, einsum) composed from matmul and views, for arrays on a
device whose products run in the C core (a GPU: cuBLAS).

Every function here works on any device through ``_linalg_top.matmul``
(NumPy's on the CPU), so the compositions are tested on the CPU against
NumPy as well as on the GPU.  einsum contracts pairwise in the order
NumPy's ``einsum_path`` plans (computed on zero-byte stand-ins of the
operands' shapes), each contraction one batched matrix product after
transposes and reshapes, as NumPy's einsum does with ``optimize``.
"""
import numbers as _numbers
import operator as _operator

import numpy as _np

import cudakit as _ck

from . import _core
from . import _linalg_top as _top

_ndarray = type(_core.asarray(0))


def _arr(x, device):
    """An operand as a cudakit array on device (array-likes are copied there)."""
    if isinstance(x, _ndarray):
        return x
    return _core.asarray(x, device=device)


def _dev_of(*xs):
    for x in xs:
        if isinstance(x, _ndarray):
            return x.device
    return None


def _is_scalar(x):
    return isinstance(x, (_numbers.Number, _np.generic)) and not isinstance(x, _np.ndarray)


def _prod(xs):
    p = 1
    for v in xs:
        p *= v
    return p


def _assign(out, r):
    out[...] = r
    return out


def _conj_if_complex(x):
    return _core.conjugate(x) if x.dtype.kind == "c" else x


def dot(a, b, out=None):
    if _is_scalar(a) or _is_scalar(b):
        return _core.multiply(a, b) if out is None else _core.multiply(a, b, out=out)
    dev = _dev_of(a, b, out)
    a, b = _arr(a, dev), _arr(b, dev)
    if a.ndim == 0 or b.ndim == 0:
        return _core.multiply(a, b) if out is None else _core.multiply(a, b, out=out)
    if a.ndim <= 2 and b.ndim <= 2:
        return _top.matmul(a, b, out=out)
    if a.shape[-1] != b.shape[0 if b.ndim == 1 else -2]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[0 if b.ndim == 1 else -2]} (dim {0 if b.ndim == 1 else b.ndim - 2})")
    r = tensordot(a, b, ([-1], [0 if b.ndim == 1 else -2]))
    return r if out is None else _assign(out, r)


def vdot(a, b):
    dev = _dev_of(a, b)
    a, b = _core.ravel(_arr(a, dev)), _core.ravel(_arr(b, dev))
    if a.shape[0] != b.shape[0]:
        raise ValueError("vectors have different lengths")
    return _top.matmul(_conj_if_complex(a), b)


def inner(a, b):
    if _is_scalar(a) or _is_scalar(b):
        return _core.multiply(a, b)
    dev = _dev_of(a, b)
    a, b = _arr(a, dev), _arr(b, dev)
    if a.ndim == 0 or b.ndim == 0:
        return _core.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b, out=None):
    dev = _dev_of(a, b, out)
    a, b = _arr(a, dev), _arr(b, dev)
    x, y = _core.reshape(a, (-1, 1)), _core.reshape(b, (1, -1))
    return _core.multiply(x, y) if out is None else _core.multiply(x, y, out=out)


def _axes_list(ax, ndim):
    ax = [_operator.index(v) for v in (ax if isinstance(ax, (list, tuple)) else [ax])]
    for v in ax:
        if not -ndim <= v < ndim:
            raise _ck.AxisError(f"axis {v} is out of bounds for array of dimension {ndim}")
    return [v % ndim for v in ax]


def tensordot(a, b, axes=2):
    dev = _dev_of(a, b)
    a, b = _arr(a, dev), _arr(b, dev)
    try:
        axes_a, axes_b = axes
    except TypeError:
        n = _operator.index(axes)
        # NumPy's reading: the last n of a with the first n of b, so a
        # negative n contracts nothing and one beyond the dimensions fails
        # as NumPy's indexing of the shape does
        axes_a, axes_b = list(range(-n, 0)), list(range(n))
        for i, j in zip(axes_a, axes_b):
            if i < -a.ndim or j >= b.ndim:
                raise IndexError("tuple index out of range")
            if a.shape[i] != b.shape[j]:
                break
        axes_a = [i + a.ndim for i in axes_a]
    else:
        axes_a, axes_b = _axes_list(axes_a, a.ndim), _axes_list(axes_b, b.ndim)
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    k = _prod(a.shape[i] for i in axes_a)
    sa, sb = [a.shape[i] for i in free_a], [b.shape[j] for j in free_b]
    x = _core.reshape(_core.transpose(a, free_a + axes_a), (_prod(sa), k))
    y = _core.reshape(_core.transpose(b, axes_b + free_b), (k, _prod(sb)))
    return _core.reshape(_top.matmul(x, y), tuple(sa + sb))


def kron(a, b):
    dev = _dev_of(a, b)
    a, b = _arr(a, dev), _arr(b, dev)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...)
    x = _core.reshape(a, tuple(v for s in sa for v in (s, 1)))
    y = _core.reshape(b, tuple(v for s in sb for v in (1, s)))
    return _core.reshape(_core.multiply(x, y), tuple(p * q for p, q in zip(sa, sb)))


def vecdot(x1, x2, axis=-1):
    dev = _dev_of(x1, x2)
    x1, x2 = _arr(x1, dev), _arr(x2, dev)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: Input operand does not have enough dimensions (has 0, gufunc core with "
                         "signature (n),(n)->() requires 1)")
    x1 = _core.moveaxis(_conj_if_complex(x1), axis, -1)
    x2 = _core.moveaxis(x2, axis, -1)
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n),(n)->() (size {x2.shape[-1]} is different from {x1.shape[-1]})")
    r = _top.matmul(_core.expand_dims(x1, -2), _core.expand_dims(x2, -1))
    return r[..., 0, 0]


# ------------------------------------------------------------------ einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_labels(term):
    """'ij...k' -> ['i', 'j', Ellipsis, 'k']"""
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append(Ellipsis)
            i += 3
        elif term[i] in _LETTERS:
            out.append(term[i])
            i += 1
        else:
            raise ValueError(f"invalid subscript '{term[i]}' in einstein sum subscripts string, "
                             "subscripts must be letters")
    return out


def _parse(operands):
    """(arrays, label lists, output labels or None for implicit mode)"""
    if operands and isinstance(operands[0], str):
        subs = operands[0].replace(" ", "")
        arrays = list(operands[1:])
        if subs.count("->") > 1 or ("-" in subs.replace("->", "")) or (">" in subs.replace("->", "")):
            raise ValueError("einstein sum subscripts string contains a '-' or '>' that is not part of '->'")
        ins, out = subs.split("->") if "->" in subs else (subs, None)
        terms = ins.split(",")
        if len(terms) != len(arrays):
            raise ValueError(f"{'more' if len(arrays) > len(terms) else 'fewer'} operands provided to einstein "
                             "sum function than specified in the subscripts string")
        labels = [_parse_labels(t) for t in terms]
        return arrays, labels, (_parse_labels(out) if out is not None else None)
    n_ops = len(operands) // 2
    arrays = [operands[2 * i] for i in range(n_ops)]
    labels = [[_sublist_label(v) for v in operands[2 * i + 1]] for i in range(n_ops)]
    out = [_sublist_label(v) for v in operands[-1]] if len(operands) % 2 else None
    return arrays, labels, out


def _sublist_label(v):
    """Sublist mode's integers name the letters: 0-25 'a'-'z', 26-51 'A'-'Z'."""
    if v is Ellipsis:
        return v
    v = _operator.index(v)
    if not 0 <= v < 52:
        raise ValueError("subscript is not within the valid range [0, 52)")
    return chr(ord("a") + v) if v < 26 else chr(ord("A") + v - 26)


def _expand_ellipses(arrays, labels, out):
    """Label lists without Ellipsis (its dims get labels ('...', i), i
    counting from the right), and the output labels (implicit mode: the
    broadcast dims, then the labels seen once, sorted)."""
    nbroad = 0
    full = []
    for x, ls in zip(arrays, labels):
        if ls.count(Ellipsis) > 1:
            raise ValueError("einstein sum subscripts string contains more than one ellipsis")
        nfix = len(ls) - (1 if Ellipsis in ls else 0)
        if Ellipsis not in ls:
            if nfix != x.ndim:
                raise ValueError("operand has more dimensions than subscripts given in einstein sum, "
                                 "but no '...' ellipsis provided to broadcast the extra dimensions."
                                 if x.ndim > nfix else "einstein sum subscripts string contains too many "
                                 "subscripts for operand")
            full.append(list(ls))
            continue
        ne = x.ndim - nfix
        if ne < 0:
            raise ValueError("einstein sum subscripts string contains too many subscripts for operand")
        nbroad = max(nbroad, ne)
        e = ls.index(Ellipsis)
        full.append(ls[:e] + [("...", ne - 1 - j) for j in range(ne)] + ls[e + 1:])
    broad = [("...", nbroad - 1 - j) for j in range(nbroad)]
    if out is None:
        counts = {}
        for ls in full:
            for v in ls:
                counts[v] = counts.get(v, 0) + 1
        singles = sorted(v for v, c in counts.items() if c == 1 and not isinstance(v, tuple))
        out = broad + singles
    else:
        if out.count(Ellipsis) > 1:
            raise ValueError("einstein sum subscripts string contains more than one ellipsis")
        if Ellipsis in out:
            e = out.index(Ellipsis)
            out = out[:e] + broad + out[e + 1:]
        seen = set()
        present = {v for ls in full for v in ls}
        for v in out:
            if v in seen:
                raise ValueError(f"einstein sum subscripts string includes output subscript '{v}' multiple times")
            if v not in present:
                raise ValueError(f"einstein sum subscripts string included output subscript '{v}' which never "
                                 "appeared in an input")
            seen.add(v)
    return full, out


def _take_diagonals(x, ls):
    """Repeated labels of one operand become one axis (its diagonal)."""
    ls = list(ls)
    while True:
        rep = next((v for v in ls if ls.count(v) > 1), None)
        if rep is None:
            return x, ls
        i = ls.index(rep)
        j = ls.index(rep, i + 1)
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"dimensions in operand for collapsing index '{rep}' don't match "
                             f"({x.shape[i]} != {x.shape[j]})")
        x = _core.diagonal(x, 0, i, j)
        ls = [v for k, v in enumerate(ls) if k not in (i, j)] + [rep]


def _sum_out(x, ls, keep):
    """Sum over the labels of x that nothing later needs."""
    axes = tuple(i for i, v in enumerate(ls) if v not in keep)
    if not axes:
        return x, ls
    x = _core.sum(x, axis=axes, dtype=x.dtype)
    return x, [v for v in ls if v in keep]


def _contract(x, lx, y, ly, keep, sizes):
    """One pairwise contraction as a batched matmul; keep: labels needed later."""
    batch = [v for v in lx if v in ly and v in keep]
    summed = [v for v in lx if v in ly and v not in keep]
    fa = [v for v in lx if v not in ly]
    fb = [v for v in ly if v not in lx]

    def arrange(z, lz, order):
        z = _core.transpose(z, [lz.index(v) for v in order])
        want = tuple(sizes[v] for v in order)
        if tuple(z.shape) != want:  # a size-1 dimension broadcast against the other operand
            z = _core.broadcast_to(z, want)
        return z

    x = arrange(x, lx, batch + fa + summed)
    y = arrange(y, ly, batch + summed + fb)
    bs = [sizes[v] for v in batch]
    m, k, n = _prod(sizes[v] for v in fa), _prod(sizes[v] for v in summed), _prod(sizes[v] for v in fb)
    x = _core.reshape(x, tuple(bs) + (m, k))
    y = _core.reshape(y, tuple(bs) + (k, n))
    r = _top.matmul(x, y)
    return _core.reshape(r, tuple(bs + [sizes[v] for v in fa] + [sizes[v] for v in fb])), batch + fa + fb


def _plan(arrays, full, out, optimize):
    """NumPy's contraction order: a list of tuples of positions in the
    operand list (contracted operands removed, the result appended)."""
    n = len(arrays)
    if n == 1:
        return [(0,)]
    if optimize is False:
        return [(0, 1)] * (n - 1)
    names = {}
    for ls in full + [out]:
        for v in ls:
            if v not in names:
                if len(names) == len(_LETTERS):
                    return [(0, 1)] * (n - 1)
                names[v] = _LETTERS[len(names)]
    subs = ",".join("".join(names[v] for v in ls) for ls in full) + "->" + "".join(names[v] for v in out)
    stand_ins = [_np.lib.stride_tricks.as_strided(_np.zeros(1, _np.dtype(x.dtype.name)), tuple(x.shape),
                                                  (0,) * x.ndim) for x in arrays]
    path, _ = _np.einsum_path(subs, *stand_ins, optimize=optimize)
    return [tuple(p) for p in path[1:]]


def einsum(operands, out=None, optimize=True, dtype=None, device=None):
    arrays, labels, out_labels = _parse(operands)
    if not arrays:
        raise ValueError("No input operands")
    dev = device if device is not None else _dev_of(*arrays)
    arrays = [_arr(a, dev) for a in arrays]
    if dtype is not None:
        arrays = [_core.asarray(a, dtype=dtype) for a in arrays]
    full, out_labels = _expand_ellipses(arrays, labels, out_labels)
    sizes = {}
    for x, ls in zip(arrays, full):
        for v, s in zip(ls, x.shape):
            if sizes.get(v, 1) != 1 and s != 1 and sizes[v] != s:
                raise ValueError(f"operands could not be broadcast together with remapped shapes "
                                 f"(label {v!r}: {sizes[v]} and {s})")
            if s != 1 or v not in sizes:
                sizes[v] = s
    for v in sizes:
        if isinstance(v, tuple) and sizes[v] != 1 and v not in out_labels:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, but no '...' "
                             "ellipsis provided to broadcast the extra dimensions.")
    path = _plan(arrays, full, out_labels, optimize)
    ops = []
    for x, ls in zip(arrays, full):
        ops.append(_take_diagonals(x, ls))

    def needed(exclude):
        """The output's labels and those of the operands not in exclude."""
        keep = set(out_labels)
        for i, (_, ls) in enumerate(ops):
            if i not in exclude:
                keep.update(ls)
        return keep

    for step in path:
        picked = [ops[i] for i in sorted(step)]
        for i in sorted(step, reverse=True):
            del ops[i]
        keep = needed(())
        # fold the picked operands left to right; a label stays while the
        # output, an operand outside this step or a later picked one has it
        later = [set(ls) for _, ls in picked]
        x, lx = _sum_out(*picked[0], keep.union(*later[1:]))
        for j in range(1, len(picked)):
            rest = keep.union(*later[j + 1:])
            y, ly = _sum_out(*picked[j], rest | set(lx))
            x, lx = _contract(x, lx, y, ly, rest, sizes)
        ops.append((x, lx))
    while len(ops) > 1:  # not reached with NumPy's paths, which end in one operand
        (x, lx), (y, ly) = ops[0], ops[1]
        del ops[:2]
        rest = needed(())
        x, lx = _sum_out(x, lx, rest | set(ly))
        y, ly = _sum_out(y, ly, rest | set(lx))
        ops.insert(0, _contract(x, lx, y, ly, rest, sizes))
    x, lx = ops[0]
    x, lx = _sum_out(x, lx, set(out_labels))
    # broadcast dims of size 1 absent from an explicit output
    x = _core.transpose(x, [lx.index(v) for v in out_labels]) if lx else x
    if tuple(x.shape) != tuple(sizes[v] for v in out_labels):
        x = _core.broadcast_to(x, tuple(sizes[v] for v in out_labels))
    if out is not None:
        return _assign(out, x)
    return x
