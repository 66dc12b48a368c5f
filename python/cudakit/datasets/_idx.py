"""The IDX format of MNIST and Fashion-MNIST, read with NumPy.

An IDX file is a 4-byte magic number (two zero bytes, a type code, the
number of dimensions), one big-endian uint32 a dimension, then the values,
big-endian, in C order.  Files may be gzip-compressed (told by their first
two bytes, whatever their name).
"""
import gzip
import zlib

import numpy as np

# type code -> NumPy dtype of the stored (big-endian) values
IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
             0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path):
    """The file's bytes, decompressed when it is gzip (a truncated or corrupt
    gzip file is a ValueError naming it)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as e:
            raise ValueError(f"{path}: a corrupt or truncated gzip file ({e})") from None
    return data


def read_idx(path, magic=None):
    """The array an IDX file holds (raw or gzip), in native byte order.

    Checks the magic number (``magic``: the one this file must have, such as
    0x00000803 for MNIST's images, or any valid IDX magic when None) and that
    the file holds exactly the bytes its header announces; a bad file is a
    ValueError naming it and what is wrong.
    """
    path = str(path)
    data = read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"{path}: {len(data)} bytes, too short for an IDX file (a 4-byte magic number first)")
    found = int.from_bytes(data[:4], "big")
    z0, z1, code, ndim = data[:4]
    if z0 or z1 or code not in IDX_TYPES:
        raise ValueError(f"{path}: not an IDX file (magic number {found:#010x}; IDX files start with two zero "
                         f"bytes and a type code among {', '.join(f'{c:#04x}' for c in IDX_TYPES)})")
    if magic is not None and found != magic:
        raise ValueError(f"{path}: magic number {found:#010x}, expected {magic:#010x} "
                         f"({_describe(magic)}, this file holds {_describe(found)})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{path}: the header announces {ndim} dimensions ({header} bytes) but the file "
                         f"has {len(data)} bytes")
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", ndim, 4))
    dtype = IDX_TYPES[code]
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = len(data) - header
    if have != need:
        raise ValueError(f"{path}: the header announces shape {shape} of {dtype.newbyteorder('=').name} "
                         f"({need} bytes after the header) but the file holds {have} bytes after it"
                         + (" (truncated?)" if have < need else ""))
    return np.frombuffer(data, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def _describe(magic):
    code, ndim = (magic >> 8) & 0xFF, magic & 0xFF
    dt = IDX_TYPES.get(code)
    kind = dt.newbyteorder("=").name if dt is not None else f"type {code:#04x}"
    return f"{ndim}-d {kind}"


def write_idx(path, array):
    """Write array as an IDX file (gzip-compressed when path ends in .gz):
    the inverse of read_idx, for making small files to test with."""
    a = np.asarray(array)
    codes = {dt.newbyteorder("="): c for c, dt in IDX_TYPES.items()}
    code = codes.get(a.dtype.newbyteorder("="))
    if code is None:
        raise TypeError(f"IDX has no type for {a.dtype}: uint8, int8, int16, int32, float32 or float64")
    if a.ndim > 255:
        raise ValueError("IDX files have at most 255 dimensions")
    body = (bytes([0, 0, code, a.ndim]) + np.asarray(a.shape, ">u4").tobytes()
            + np.ascontiguousarray(a, IDX_TYPES[code]).tobytes())
    path = str(path)
    with open(path, "wb") as f:
        f.write(gzip.compress(body, mtime=0) if path.endswith(".gz") else body)
