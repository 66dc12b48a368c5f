"""NumPy's file and printing functions, on host copies of cudakit arrays.

Files are NumPy's own formats (``.npy``, ``.npz``, text), so what cudakit
saves NumPy loads and the other way round: arrays are copied to the host
(``asnumpy``) and written by NumPy; loaded data becomes a cudakit array on
the default device (``device=`` chooses).  The printing functions format
with NumPy's printer, as ``repr`` of a cudakit array already does, so
``set_printoptions`` changes both.
"""
from . import _core
from ._core import ndarray

# save and load are ck.save/ck.load's NumPy halves (serialization.py tells
# NumPy's calls from PyTorch's and hands them here)
__all__ = [
    "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "set_printoptions", "get_printoptions", "printoptions", "array2string", "array_repr", "array_str",
]


def _np():
    import numpy

    return numpy


def _dt(d):
    """A cudakit dtype from a dtype, a name or a type."""
    return _core.result_type(d)


def _host(a):
    return _core.asnumpy(a) if isinstance(a, ndarray) else a


def _dev(device):
    return device if device is not None else _core.get_default_device()


def save(file, arr, allow_pickle=True, fix_imports=None):
    """Write one array to a ``.npy`` file (NumPy's format; the array copied to the host)."""
    _np().save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
    """Write several arrays to an uncompressed ``.npz`` file (NumPy's format)."""
    _np().savez(file, *[_host(a) for a in args], allow_pickle=allow_pickle, **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    """Write several arrays to a compressed ``.npz`` file (NumPy's format)."""
    _np().savez_compressed(file, *[_host(a) for a in args], allow_pickle=allow_pickle,
                           **{k: _host(v) for k, v in kwds.items()})


class NpzFile:
    """The arrays of a ``.npz`` file, read lazily by name as cudakit arrays (a context manager)."""

    def __init__(self, npz, device):
        self._npz = npz
        self._device = device
        self.files = npz.files

    def __getitem__(self, key):
        return _core.asarray(self._npz[key], device=self._device)

    def __contains__(self, key):
        return key in self._npz

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return len(self.files)

    def keys(self):
        """The names of the arrays."""
        return self._npz.keys()

    def items(self):
        """(name, array) pairs."""
        return [(k, self[k]) for k in self.files]

    def values(self):
        """The arrays."""
        return [self[k] for k in self.files]

    def close(self):
        """Close the file."""
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *, max_header_size=10000,
         device=None):
    """Read a ``.npy`` file (an array) or a ``.npz`` file (an NpzFile of arrays) written by NumPy or cudakit."""
    np = _np()
    r = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle, encoding=encoding,
                max_header_size=max_header_size)
    if isinstance(r, np.lib.npyio.NpzFile):
        return NpzFile(r, _dev(device))
    if isinstance(r, np.ndarray) and r.dtype.kind not in "O":
        return _core.asarray(r, device=_dev(device))
    return r


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ", encoding=None):
    """Write a 1-d or 2-d array to a text file (NumPy's savetxt on a host copy)."""
    _np().savetxt(fname, _host(X), fmt=fmt, delimiter=delimiter, newline=newline, header=header, footer=footer,
                  comments=comments, encoding=encoding)


def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0, usecols=None,
            unpack=False, ndmin=0, encoding=None, max_rows=None, *, quotechar=None, like=None, device=None):
    """Read a text file of numbers into an array (NumPy's parser on the host)."""
    dt = dtype if dtype is float else str(_dt(dtype))
    r = _np().loadtxt(fname, dtype=dt, comments=comments, delimiter=delimiter, converters=converters,
                      skiprows=skiprows, usecols=usecols, unpack=unpack, ndmin=ndmin, encoding=encoding,
                      max_rows=max_rows, quotechar=quotechar)
    if unpack and isinstance(r, (tuple, list)):
        return tuple(_core.asarray(x, device=_dev(device)) for x in r)
    return _core.asarray(r, device=_dev(device))


def genfromtxt(fname, dtype=float, comments="#", delimiter=None, skip_header=0, skip_footer=0, converters=None,
               missing_values=None, filling_values=None, usecols=None, names=None, excludelist=None,
               deletechars=" !#$%&'()*+,-./:;<=>?@[\\]^{|}~", replace_space="_", autostrip=False,
               case_sensitive=True, defaultfmt="f%i", unpack=None, usemask=False, loose=True,
               invalid_raise=True, max_rows=None, encoding=None, *, ndmin=0, like=None, device=None):
    """Read a text file with missing values (NaN where a field is missing), NumPy's parser on the host.

    Numeric columns only: named (structured) results are outside cudakit's dtypes."""
    if names is not None or usemask or dtype is None:
        raise NotImplementedError("genfromtxt with names=, usemask= or dtype=None (structured results) is not supported")
    dt = dtype if dtype is float else str(_dt(dtype))
    r = _np().genfromtxt(fname, dtype=dt, comments=comments, delimiter=delimiter, skip_header=skip_header,
                         skip_footer=skip_footer, converters=converters, missing_values=missing_values,
                         filling_values=filling_values, usecols=usecols, autostrip=autostrip,
                         unpack=unpack, loose=loose, invalid_raise=invalid_raise, max_rows=max_rows,
                         encoding=encoding, ndmin=ndmin)
    if isinstance(r, (tuple, list)):
        return tuple(_core.asarray(x, device=_dev(device)) for x in r)
    return _core.asarray(r, device=_dev(device))


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None, nanstr=None,
                     infstr=None, formatter=None, sign=None, floatmode=None, *, legacy=None, override_repr=None):
    """Set how arrays print (NumPy's options: the repr of cudakit arrays is NumPy's printer)."""
    _np().set_printoptions(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth,
                           suppress=suppress, nanstr=nanstr, infstr=infstr, formatter=formatter, sign=sign,
                           floatmode=floatmode, legacy=legacy, override_repr=override_repr)


def get_printoptions():
    """The current print options, as a dict."""
    return _np().get_printoptions()


def printoptions(*args, **kwargs):
    """A context manager setting print options in its block: ``with ck.printoptions(precision=2): ...``."""
    return _np().printoptions(*args, **kwargs)


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ", prefix="",
                 *args, **kwargs):
    """The text of an array's values (NumPy's printer on a host copy)."""
    return _np().array2string(_host(a), max_line_width, precision, suppress_small, separator, prefix, *args, **kwargs)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of an array, ``array([...], dtype=...)``."""
    return _np().array_repr(_host(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of an array: its values without ``array(...)``."""
    return _np().array_str(_host(a), max_line_width, precision, suppress_small)


NpzFile.__module__ = "cudakit"
