"""cudakit.cuda.nvtx: NVTX ranges and marks, as ``torch.cuda.nvtx``, so that
Nsight Systems (``nsys profile python app.py``) shows your phases by name
beside the kernels.  ``cudakit.profiler.profile(nvtx=True)`` makes every op
a range too.

    >>> from cudakit.cuda import nvtx
    >>> with nvtx.range("load"):
    ...     x = ck.asarray(data)
    >>> nvtx.range_push("step"); ...; nvtx.range_pop()

libnvToolsExt is loaded on first use ($CUDA_PATH, /usr/local/cuda, the
nvidia-nvtx wheel, the loader path); without it, and without a tool
attached, the calls do nothing, as NVTX's own do.  ``is_available()`` says
whether it was found.
"""
import contextlib as _contextlib

from .. import _core

__all__ = ["range_push", "range_pop", "range", "mark", "is_available"]


def range_push(msg):
    """Open a range on this thread (ranges nest)."""
    _core._nvtx_range_push(str(msg))


def range_pop():
    """Close the innermost range of this thread."""
    _core._nvtx_range_pop()


def mark(msg):
    """An instant event."""
    _core._nvtx_mark(str(msg))


@_contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001  (torch.cuda.nvtx.range's name)
    """A range around a ``with`` block (or a decorated function);
    ``msg.format(*args, **kwargs)`` when arguments are given."""
    range_push(str(msg).format(*args, **kwargs) if args or kwargs else msg)
    try:
        yield
    finally:
        range_pop()


def is_available():
    """Whether libnvToolsExt was found."""
    return _core._nvtx_available()
