"""ck.save / ck.load: arrays and state dicts to files other tools read.

The format is safetensors, written and read here (no dependency): an 8-byte
little-endian header length N, N bytes of JSON ({name: {"dtype": "F32",
"shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}}, padded
with spaces to a multiple of 8), then the arrays' raw little-endian bytes,
offsets counted from the end of the header.  ``safetensors.numpy.load_file``,
``safetensors.torch.load_file`` and Hugging Face's tools read these files.

A flat mapping of names to arrays (a ``state_dict()``) is stored as it is.
Anything else made of dicts, lists, tuples, numbers, strings and arrays (an
optimizer's ``state_dict()``) is stored with its arrays named by their path
("state.0.exp_avg") and the structure as JSON in the metadata entry
"cudakit.structure", so ``ck.load`` gives the same structure back.

A file name ending in ``.npz`` is written with NumPy's ``savez`` (flat
mappings only) and read back as a dict.  NumPy's own convention,
``save(file, array)`` (a path first), writes a ``.npy`` file, and ``load``
reads every one of these by its first bytes."""
import json
import os
import struct

from . import _core

_DTYPES = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8", "bool": "BOOL",
    "complex64": "C64", "complex128": "C128",
}
_NAMES = {v: k for k, v in _DTYPES.items()}
_STRUCTURE = "cudakit.structure"
_MAX_HEADER = 100 * 1024 * 1024


def _is_array(v):
    return isinstance(v, _core.ndarray) or type(v).__module__ == "numpy" and hasattr(v, "dtype") and hasattr(v, "shape")


def _host(a):
    import numpy as np
    if isinstance(a, _core.ndarray):
        a = a.detach() if hasattr(a, "detach") else a
        a = _core.asnumpy(a)
    return np.ascontiguousarray(a)


def _flatten(obj, prefix, arrays):
    """The JSON-able structure of obj, its arrays moved into `arrays` by path."""
    if _is_array(obj):
        name = prefix or "tensor"
        arrays[name] = obj
        return {"@t": name}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"ck.save: dictionary keys must be str or int, got {type(k).__name__}")
            items.append([k, _flatten(v, f"{prefix}.{k}" if prefix else str(k), arrays)])
        return {"@d": items}
    if isinstance(obj, (list, tuple)):
        tag = "@l" if isinstance(obj, list) else "@u"
        return {tag: [_flatten(v, f"{prefix}.{i}" if prefix else str(i), arrays) for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, float) and obj != obj or obj in (float("inf"), float("-inf")):
            return {"@f": repr(obj)}
        return obj
    raise TypeError(f"ck.save cannot store a {type(obj).__name__}: it stores arrays, and dicts, lists and tuples "
                    "of arrays, numbers and strings (save a Module's state_dict(), not the Module)")


def _unflatten(s, arrays):
    if isinstance(s, dict):
        if "@t" in s:
            return arrays[s["@t"]]
        if "@d" in s:
            return {k: _unflatten(v, arrays) for k, v in s["@d"]}
        if "@l" in s:
            return [_unflatten(v, arrays) for v in s["@l"]]
        if "@u" in s:
            return tuple(_unflatten(v, arrays) for v in s["@u"])
        if "@f" in s:
            return float(s["@f"])
    return s


def _flat_mapping(obj):
    return isinstance(obj, dict) and obj and all(isinstance(k, str) for k in obj) and all(_is_array(v) for v in obj.values())


def _open(f, mode):
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    return f, False


def _read_all(f):
    fh, close = _open(f, "rb")
    try:
        return fh.read()
    finally:
        if close:
            fh.close()


def save_file(tensors, f, metadata=None):
    """Write a mapping of names to arrays as a safetensors file."""
    header = {}
    blobs = []
    offset = 0
    for name, a in tensors.items():
        h = _host(a)
        code = _DTYPES.get(h.dtype.name)
        if code is None:
            raise TypeError(f"ck.save: dtype {h.dtype} of {name!r} has no safetensors code")
        if h.dtype.byteorder == ">":
            h = h.astype(h.dtype.newbyteorder("<"))
        data = h.tobytes()
        header[name] = {"dtype": code, "shape": list(h.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    fh, close = _open(f, "wb")
    try:
        fh.write(struct.pack("<Q", len(text)))
        fh.write(text)
        for b in blobs:
            fh.write(b)
    finally:
        if close:
            fh.close()


def _read_safetensors(data, device):
    import numpy as np
    if len(data) < 8:
        raise ValueError("not a safetensors file: shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        raise ValueError(f"not a safetensors file: header length {n} is beyond the file's {len(data)} bytes")
    try:
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"not a safetensors file: its header is not JSON ({e})") from None
    meta = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        code = info.get("dtype")
        if code not in _NAMES:
            raise ValueError(f"safetensors: {name!r} has dtype {code!r}, which cudakit does not read")
        if code == "BF16":
            raise NotImplementedError(f"safetensors: {name!r} is bfloat16, which cudakit has no dtype for")
        b, e = info["data_offsets"]
        shape = tuple(info["shape"])
        dt = np.dtype(_NAMES[code]).newbyteorder("<")
        count = 1
        for s in shape:
            count *= s
        if not 0 <= b <= e <= len(body) or e - b != count * dt.itemsize:
            raise ValueError(f"safetensors: {name!r} has offsets {[b, e]} that do not fit shape {list(shape)} of "
                             f"{code} in a body of {len(body)} bytes")
        h = np.frombuffer(body[b:e], dtype=dt).reshape(shape).astype(dt.newbyteorder("="))
        out[name] = _core.asarray(h, device=device)
    return out, meta


def load_file(f, device=None):
    """Read a safetensors file into a dict of cudakit arrays on device."""
    data = _read_all(f)
    return _read_safetensors(data, _device(device))[0]


def _device(map_location):
    if map_location is None:
        return _core.get_default_device()
    if callable(map_location) and not isinstance(map_location, (str, _core.Device)):
        raise NotImplementedError("ck.load: a callable map_location is not supported; pass a device")
    return map_location


def save(obj, f, *args, **kwargs):
    """``ck.save(obj, f)`` as PyTorch's (a safetensors file, or ``.npz`` by
    its name), or ``ck.save(file, array)`` as NumPy's (a ``.npy`` file)."""
    if isinstance(obj, (str, os.PathLike)) and not isinstance(f, (str, os.PathLike)) and not isinstance(obj, dict):
        from . import _numpy_io
        return _numpy_io.save(obj, f, *args, **kwargs)
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "")
    if isinstance(name, str) and name.endswith(".npz"):
        import numpy as np
        if _is_array(obj):
            obj = {"tensor": obj}
        if not _flat_mapping(obj):
            raise TypeError("ck.save to .npz stores a flat mapping of names to arrays (a state_dict)")
        np.savez(f, **{k: _host(v) for k, v in obj.items()})
        return
    if _flat_mapping(obj):
        return save_file(obj, f)
    arrays = {}
    structure = _flatten(obj, "", arrays)
    save_file(arrays, f, {_STRUCTURE: json.dumps(structure, separators=(",", ":"))})


def load(f, map_location=None, weights_only=None, *, device=None, **kwargs):
    """Read what ``ck.save`` wrote (safetensors), or NumPy's ``.npy`` (an
    array) and ``.npz`` (an NpzFile: a mapping of names to arrays, read
    lazily, and a context manager), telling them apart by their first bytes;
    arrays go to map_location or device (PyTorch's and NumPy's names), else
    the default device.  Other keywords are NumPy's load's."""
    if device is not None and map_location is not None:
        raise TypeError("ck.load: give map_location or device, not both")
    device = _device(map_location if device is None else device)
    data = _read_all(f)
    if data[:6] == b"\x93NUMPY" or data[:2] == b"PK":
        import io

        from . import _numpy_io
        return _numpy_io.load(io.BytesIO(data), device=device, **kwargs)
    arrays, meta = _read_safetensors(data, device)
    s = meta.get(_STRUCTURE)
    if s is None:
        return arrays
    return _unflatten(json.loads(s), arrays)
