"""cudakit.fft: discrete Fourier transforms, as numpy.fft.

    >>> import cudakit as ck
    >>> x = ck.arange(8, dtype=ck.float64)
    >>> X = ck.fft.rfft(x)
    >>> ck.fft.irfft(X, n=8)

On the CPU every transform runs NumPy's pocketfft on a zero-copy view of the
input and wraps NumPy's result without a copy, so the values, dtypes and
shapes are NumPy's (float32 input gives whatever the installed NumPy gives).
``n``/``s``, ``axis``/``axes``, ``norm`` ('backward', 'ortho', 'forward') and
``out=`` behave as in NumPy.  On a GPU the transforms run cuFFT (plans cached
per shape, on the current stream) with NumPy's semantics and result dtypes:
padding/truncation to ``n``/``s``, ``norm`` scaling, and transforms over
several axes as one 2-D/3-D plan when the axes are the trailing ones, else
as successive 1-D transforms.  The input of a complex-to-real transform is
made Hermitian first (the imaginary parts of the zero and Nyquist terms are
ignored), as pocketfft does.  ``fftfreq``/``rfftfreq`` take ``device=`` and
make their result there; ``fftshift``/``ifftshift`` are ``roll`` on a GPU.
"""
import functools as _functools
import math as _math
import operator as _operator

import numpy as _np

from . import _core
from ._linalg_top import _call

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
    "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_f = _np.fft


_ndarray = type(_core.asarray(0))


def _use_device_path(a):
    """Whether a runs on the device (cuFFT) path rather than NumPy's."""
    return isinstance(a, _ndarray) and a.device.type != "cpu"


# ------------------------------------------------------------ device path

@_functools.lru_cache(maxsize=None)
def _out_dtype(name, dtype):
    """NumPy's result dtype of a transform of dtype (and its errors: complex
    input to rfft, unsupported dtypes)."""
    x = _np.ones((2, 2), dtype=dtype)
    return getattr(_f, name)(x).dtype


def _norm_factor(norm, n, forward):
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / _math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _swap_norm(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm] \
        if norm in (None, "backward", "ortho", "forward") else norm


def _scaled(y, fct):
    return y if fct == 1.0 else _core.multiply(y, fct)


def _resize(x, axis, n):
    """x truncated or zero-padded to n along axis (x itself when it fits)."""
    m = x.shape[axis]
    if m == n:
        return x
    if m > n:
        key = [slice(None)] * x.ndim
        key[axis] = slice(0, n)
        return x[tuple(key)]
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, n - m)
    return _core.pad(x, widths)


def _check_n(n):
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")


def _axis(axis, ndim):
    axis = _operator.index(axis)
    if not -ndim <= axis < ndim:
        raise _core.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _c2c(x, n, axis, forward, norm):
    """1-D complex transform of complex x along axis."""
    axis = _axis(axis, x.ndim)
    n = x.shape[axis] if n is None else _operator.index(n)
    _check_n(n)
    fct = _norm_factor(norm, n, forward)
    xm = _core.moveaxis(_resize(x, axis, n), axis, -1)
    y = _core._cuda_fft(xm, 1, 0, forward, 0)
    return _scaled(_core.moveaxis(y, -1, axis), fct)


def _r2c(x, n, axis, norm, forward=True):
    """rfft of real x along axis (forward-direction scaling unless told)."""
    axis = _axis(axis, x.ndim)
    n = x.shape[axis] if n is None else _operator.index(n)
    _check_n(n)
    fct = _norm_factor(norm, n, forward)
    xm = _core.moveaxis(_resize(x, axis, n), axis, -1)
    y = _core._cuda_fft(xm, 1, 1, True, 0)
    return _scaled(_core.moveaxis(y, -1, axis), fct)


def _hermitian_copy(xm, n):
    """A copy of xm (n//2 + 1 terms along the last axis) with the imaginary
    parts of the zero (and, for even n, the Nyquist) terms dropped: what a
    real transform's spectrum has, and what cuFFT's C2R assumes."""
    xm = xm.astype(xm.dtype, order="C", copy=True)
    xm[..., 0].imag = 0
    if n % 2 == 0:
        xm[..., n // 2].imag = 0
    return xm


def _c2r(x, n, axis, norm, forward=False):
    """irfft of complex x along axis: a real result of length n."""
    axis = _axis(axis, x.ndim)
    n = 2 * (x.shape[axis] - 1) if n is None else _operator.index(n)
    _check_n(n)
    fct = _norm_factor(norm, n, forward)
    xm = _hermitian_copy(_core.moveaxis(_resize(x, axis, n // 2 + 1), axis, -1), n)
    y = _core._cuda_fft(xm, 1, 2, False, n, True)   # xm is our copy: C2R may overwrite it
    return _scaled(_core.moveaxis(y, -1, axis), fct)


def _prepare(name, a, kind):
    """a on its device, cast to the working dtype of the transform: complex
    for C2C/C2R, real for R2C (NumPy's precision rules)."""
    out_dt = _np.dtype(_out_dtype(name, _np.dtype(str(a.dtype))))
    if kind == "r2c":
        work = _np.float32 if out_dt == _np.complex64 else _np.float64
    elif kind == "c2r":
        work = _np.complex64 if out_dt == _np.float32 else _np.complex128
    else:
        work = out_dt
    work = _np.dtype(work)
    if _np.dtype(str(a.dtype)) != work:
        a = a.astype(str(work))
    return a, out_dt


def _finish(y, out_dt, out):
    if str(y.dtype) != str(out_dt):
        y = y.astype(str(out_dt))
    if out is None:
        return y
    if not isinstance(out, _ndarray):
        raise TypeError(f"out must be a cudakit array, not {type(out).__name__}")
    if tuple(out.shape) != tuple(y.shape):
        raise ValueError(f"output array has wrong shape {tuple(out.shape)}, expected {tuple(y.shape)}")
    out[...] = y
    return out


def _device_one_axis(name, a, n, axis, norm, out):
    if name in ("fft", "ifft"):
        x, odt = _prepare(name, a, "c2c")
        y = _c2c(x, n, axis, name == "fft", norm)
    elif name == "rfft":
        x, odt = _prepare(name, a, "r2c")
        y = _r2c(x, n, axis, norm)
    elif name == "irfft":
        x, odt = _prepare(name, a, "c2r")
        y = _c2r(x, n, axis, norm)
    elif name == "hfft":  # irfft of the conjugate, scaled the other way
        x, odt = _prepare(name, a, "c2r")
        _norm_factor(norm, 1, True)
        y = _c2r(_core.conjugate(x), n, axis, _swap_norm(norm))
    else:  # ihfft: the conjugate of rfft, scaled the other way
        x, odt = _prepare(name, a, "r2c")
        _norm_factor(norm, 1, True)
        y = _core.conjugate(_r2c(x, n, axis, _swap_norm(norm)))
    return _finish(y, odt, out)


def _cook_nd(a, s, axes, invreal):
    """NumPy's (s, axes) of an n-D transform."""
    if s is None:
        shapeless = True
        if axes is None:
            s = list(a.shape)
            axes = list(range(a.ndim))
        else:
            axes = [_operator.index(ax) for ax in axes]
            s = [a.shape[_axis(ax, a.ndim)] for ax in axes]
    else:
        shapeless = False
        s = list(s)
        if axes is None:
            axes = list(range(-len(s), 0))
        axes = [_operator.index(ax) for ax in axes]
        s = [a.shape[_axis(ax, a.ndim)] if v is None else _operator.index(v) for v, ax in zip(s, axes)] \
            if len(s) == len(axes) else s
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    axes = [_axis(ax, a.ndim) for ax in axes]
    if invreal and shapeless and axes:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    for v in s:
        _check_n(v)
    return s, axes


def _trailing(axes, ndim):
    """Whether axes are the last len(axes) <= 3 axes of the array, each once."""
    k = len(axes)
    return 1 <= k <= 3 and sorted(axes) == list(range(ndim - k, ndim))


def _device_many_axes(name, a, s, axes, norm, out):
    base = name.rstrip("2n")
    _norm_factor(norm, 1, True)
    if base in ("fft", "ifft"):
        x, odt = _prepare(name, a, "c2c")
        s, axes = _cook_nd(x, s, axes, False)
        forward = base == "fft"
        if _trailing(axes, x.ndim):
            for v, ax in zip(s, axes):
                x = _resize(x, ax, v)
            k = len(axes)
            total = _math.prod(x.shape[x.ndim - k:])
            y = _scaled(_core._cuda_fft(x, k, 0, forward, 0), _norm_factor(norm, total, forward))
        else:
            y = x
            for ii in reversed(range(len(axes))):
                y = _c2c(y, s[ii], axes[ii], forward, norm)
    elif base == "rfft":
        x, odt = _prepare(name, a, "r2c")
        s, axes = _cook_nd(x, s, axes, False)
        if not axes:
            raise ValueError("rfftn needs at least one axis")
        if _trailing(axes, x.ndim) and axes[-1] == x.ndim - 1:
            for v, ax in zip(s, axes):
                x = _resize(x, ax, v)
            k = len(axes)
            total = _math.prod(x.shape[x.ndim - k:])
            y = _scaled(_core._cuda_fft(x, k, 1, True, 0), _norm_factor(norm, total, True))
        else:
            y = _r2c(x, s[-1], axes[-1], norm)
            for ii in range(len(axes) - 1):
                y = _c2c(y, s[ii], axes[ii], True, norm)
    else:  # irfft2 / irfftn: inverse transforms over the other axes, then the real one
        x, odt = _prepare(name, a, "c2r")
        s, axes = _cook_nd(x, s, axes, True)
        if not axes:
            raise ValueError("irfftn needs at least one axis")
        y = x
        for ii in range(len(axes) - 1):
            y = _c2c(y, s[ii], axes[ii], False, norm)
        y = _c2r(y, s[-1], axes[-1], norm)
    return _finish(y, odt, out)


def _one_axis(name, doc):
    npfunc = getattr(_f, name)

    def transform(a, n=None, axis=-1, norm=None, out=None):
        if _use_device_path(a):
            return _device_one_axis(name, a, n, axis, norm, out)
        return _call(name, npfunc, (a,), n=n, axis=axis, norm=norm, out=out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _many_axes(name, default_axes, doc):
    npfunc = getattr(_f, name)

    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        if _use_device_path(a):
            return _device_many_axes(name, a, s, axes, norm, out)
        return _call(name, npfunc, (a,), s=s, axes=axes, norm=norm, out=out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


fft = _one_axis("fft", "1-D discrete Fourier transform along ``axis``.")
ifft = _one_axis("ifft", "1-D inverse discrete Fourier transform along ``axis``.")
rfft = _one_axis("rfft", "1-D transform of real input: the n//2 + 1 non-negative frequencies.")
irfft = _one_axis("irfft", "Inverse of rfft: a real result of length n (2*(m-1) by default).")
hfft = _one_axis("hfft", "Transform of a Hermitian-symmetric signal given by its first half: a real result.")
ihfft = _one_axis("ihfft", "Inverse of hfft: the first half of a Hermitian-symmetric spectrum.")
fft2 = _many_axes("fft2", (-2, -1), "2-D discrete Fourier transform over ``axes``.")
ifft2 = _many_axes("ifft2", (-2, -1), "2-D inverse discrete Fourier transform over ``axes``.")
rfft2 = _many_axes("rfft2", (-2, -1), "2-D transform of real input.")
irfft2 = _many_axes("irfft2", (-2, -1), "Inverse of rfft2.")
fftn = _many_axes("fftn", None, "N-D discrete Fourier transform over ``axes`` (all by default).")
ifftn = _many_axes("ifftn", None, "N-D inverse discrete Fourier transform over ``axes``.")
rfftn = _many_axes("rfftn", None, "N-D transform of real input (the last axis halved).")
irfftn = _many_axes("irfftn", None, "Inverse of rfftn.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point fft with sample spacing d, made on ``device``."""
    r = _f.fftfreq(n, d)
    return _core.asarray(r if dtype is None else r.astype(dtype), device=device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point rfft with sample spacing d, made on ``device``."""
    r = _f.rfftfreq(n, d)
    return _core.asarray(r if dtype is None else r.astype(dtype), device=device)


def _shift(x, axes, sign):
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int) or hasattr(axes, "__index__"):
        axes = (_operator.index(axes),)
    shifts = [sign * (x.shape[_axis(ax, x.ndim)] // 2) for ax in axes]
    return _core.roll(x, shifts, axis=tuple(axes))


def fftshift(x, axes=None):
    """The zero frequency moved to the middle of ``axes`` (all by default)."""
    if _use_device_path(x):
        return _shift(x, axes, 1)
    return _call("fftshift", _f.fftshift, (x,), axes=axes)


def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    if _use_device_path(x):
        return _shift(x, axes, -1)
    return _call("ifftshift", _f.ifftshift, (x,), axes=axes)
