"""cudakit.fft: discrete Fourier transforms, as numpy.fft.

    >>> import cudakit as ck
    >>> x = ck.arange(8, dtype=ck.float64)
    >>> X = ck.fft.rfft(x)
    >>> ck.fft.irfft(X, n=8)

On the CPU every transform runs NumPy's pocketfft on a zero-copy view of the
input and wraps NumPy's result without a copy, so the values, dtypes and
shapes are NumPy's (float32 input gives whatever the installed NumPy gives).
``n``/``s``, ``axis``/``axes``, ``norm`` ('backward', 'ortho', 'forward') and
``out=`` behave as in NumPy.  Arrays on a GPU raise NotImplementedError until
cuFFT is wired in (a later issue).  ``fftfreq``/``rfftfreq`` take ``device=``
and make their result there.
"""
import numpy as _np

from . import _core
from ._linalg_top import _call

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
    "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_f = _np.fft


def _one_axis(name, doc):
    npfunc = getattr(_f, name)

    def transform(a, n=None, axis=-1, norm=None, out=None):
        return _call(name, npfunc, (a,), n=n, axis=axis, norm=norm, out=out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


def _many_axes(name, default_axes, doc):
    npfunc = getattr(_f, name)

    def transform(a, s=None, axes=default_axes, norm=None, out=None):
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


def fftshift(x, axes=None):
    """The zero frequency moved to the middle of ``axes`` (all by default)."""
    return _call("fftshift", _f.fftshift, (x,), axes=axes)


def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    return _call("ifftshift", _f.ifftshift, (x,), axes=axes)
