#!/usr/bin/env python3
"""Compare cudakit's public API with NumPy's and write docs/numpy_coverage.md.

    .venv/bin/python tools/numpy_coverage.py            # writes docs/numpy_coverage.md
    .venv/bin/python tools/numpy_coverage.py --check    # exits 1 when the file is stale

Four surfaces are compared: the callables of NumPy's main namespace, the
methods and attributes of ``numpy.ndarray``, the methods and attributes of
``numpy.ufunc`` (on ``cudakit.add``), and the methods of
``numpy.random.Generator``.  A name counts as present when ``hasattr`` finds
it on cudakit's side (lazily loaded names included).  Families that cudakit
leaves out on purpose are listed in ``EXCLUDED`` with their reason and count
in neither the numerator nor the denominator.

tests/test_numpy_coverage.py reads the names and percentages back from the
document (``read_document``) and fails when one regresses.
"""
import argparse
import os
import sys
import types

os.environ.setdefault("CUDAKIT_DEVICE", "cpu")  # the names do not depend on the device
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "numpy_coverage.md")

# Reasons, then the NumPy names each covers.  A name here is neither
# present nor missing.
_REASONS = {
    "datetime": "cudakit has no datetime64/timedelta64 dtypes (business-day calendars and datetime formatting need them)",
    "matrix": "numpy.matrix is deprecated in NumPy itself; cudakit arrays are ndarrays only",
    "memmap": "a file-backed array is host memory by definition; load with numpy.memmap and pass it to asarray",
    "record": "record/structured dtypes (recarray, fromregex's structured output) are outside cudakit's numeric dtypes",
    "string": "string and character arrays (numpy.char, numpy.strings) are outside cudakit's numeric dtypes",
    "object": "cudakit has no object dtype, which frompyfunc's ufuncs return",
    "internal": "NumPy's own build, test and iteration machinery, not an array API",
}
EXCLUDED = {
    "busday_count": "datetime", "busday_offset": "datetime", "busdaycalendar": "datetime",
    "is_busday": "datetime", "datetime_as_string": "datetime", "datetime_data": "datetime",
    "isnat": "datetime",
    "matrix": "matrix", "asmatrix": "matrix", "bmat": "matrix",
    "memmap": "memmap",
    "recarray": "record", "fromregex": "record",
    "frompyfunc": "object",
    "test": "internal", "show_config": "internal", "show_runtime": "internal",
    "get_include": "internal", "info": "internal", "setbufsize": "internal",
    "getbufsize": "internal", "nditer": "internal", "nested_iters": "internal",
}
# ndarray members that only make sense for host memory or NumPy's C
# subclassing protocol.
EXCLUDED_NDARRAY = {
    "ctypes": "a ctypes view of host memory (use __array_interface__ / __cuda_array_interface__)",
    "getfield": "record/structured dtypes", "setfield": "record/structured dtypes",
    "__array_finalize__": "NumPy's subclassing hook", "__array_wrap__": "NumPy's subclassing hook",
    "__array_priority__": "NumPy's subclassing hook", "__array_struct__": "NumPy's C-level interface (use __array_interface__)",
}
EXCLUDED_UFUNC = {}
_BITGEN = "NumPy's bit generators and seed sequences: cudakit's stream is Philox4x32-10 in C (the same bits on every device)"
EXCLUDED_RANDOM = {
    "BitGenerator": _BITGEN, "MT19937": _BITGEN, "PCG64": _BITGEN, "PCG64DXSM": _BITGEN, "Philox": _BITGEN,
    "SFC64": _BITGEN, "SeedSequence": _BITGEN, "get_bit_generator": _BITGEN, "set_bit_generator": _BITGEN,
    "test": "NumPy's test runner",
}
EXCLUDED_GENERATOR = {
    "bit_generator": "cudakit's generator is Philox4x32-10 in C (same bits on CPU and GPU), not NumPy's BitGenerator objects",
    "spawn": "needs NumPy's SeedSequence tree",
}


def _numpy_callables(np):
    out = []
    for n in dir(np):
        if n.startswith("_"):
            continue
        o = getattr(np, n)
        if isinstance(o, types.ModuleType):
            continue
        # scalar types, dtype classes and exceptions are types, not functions
        if isinstance(o, type) and issubclass(o, (np.generic, np.dtype, BaseException)):
            continue
        if callable(o):
            out.append(n)
    return out


def _public(cls, dunders=False):
    names = [n for n in dir(cls) if not n.startswith("_")]
    if dunders:
        names += [n for n in dir(cls) if n.startswith("__") and n.endswith("__") and n not in dir(object)]
    return sorted(set(names))


def surfaces():
    """{surface: (numpy names, excluded {name: reason}, present test)}."""
    import numpy as np
    import cudakit as ck

    gen = ck.random.default_rng(0)
    return {
        "main namespace callables": (_numpy_callables(np), {n: _REASONS[r] for n, r in EXCLUDED.items()}, lambda n: hasattr(ck, n)),
        "ndarray methods and attributes": (_public(np.ndarray, dunders=True), EXCLUDED_NDARRAY, lambda n: hasattr(ck.ndarray, n)),
        "ufunc methods and attributes": (_public(np.ufunc), EXCLUDED_UFUNC, lambda n: hasattr(ck.add, n)),
        "random.Generator methods": (_public(np.random.Generator), EXCLUDED_GENERATOR, lambda n: hasattr(gen, n)),
        "random namespace (legacy functions)": (
            [n for n in dir(np.random) if not n.startswith("_") and not isinstance(getattr(np.random, n), types.ModuleType)],
            EXCLUDED_RANDOM, lambda n: hasattr(ck.random, n)),
        "random.RandomState methods": (_public(np.random.RandomState), {}, lambda n: hasattr(ck.random.RandomState, n)),
    }


def measure():
    res = {}
    for title, (names, excluded, present) in surfaces().items():
        counted = [n for n in names if n not in excluded]
        have = sorted(n for n in counted if present(n))
        miss = sorted(n for n in counted if not present(n))
        res[title] = {
            "present": have, "missing": miss,
            "excluded": {n: excluded[n] for n in names if n in excluded},
            "percent": 100.0 * len(have) / len(counted) if counted else 100.0,
        }
    return res


def render(res):
    import numpy as np

    lines = [
        "# NumPy API coverage",
        "",
        f"Written by `tools/numpy_coverage.py` against NumPy {np.__version__}; "
        "`tests/test_numpy_coverage.py` fails when a name listed as present goes missing "
        "or a percentage falls under the one recorded here. Regenerate with "
        "`.venv/bin/python tools/numpy_coverage.py`.",
        "",
        "Where the names live and what differs from NumPy:",
        "",
        "- `python/cudakit/_numpy_extra.py`: compositions of the C core's ops, on the arrays' own device; "
        "`i0` (and so `kaiser`) computes on a host copy.",
        "- `python/cudakit/_polynomial.py`: the `poly*` family on the coefficients' device; `roots` takes the "
        "companion matrix's eigenvalues with `numpy.linalg` on a host copy and returns them on the device.",
        "- `python/cudakit/_numpy_io.py`: `save`/`load`/`savez`/`savetxt`/`loadtxt`/`genfromtxt` write and read "
        "NumPy's own formats from host copies; the printing functions are NumPy's printer (so is `repr`).",
        "- `python/cudakit/_ndarray_methods.py`: ndarray's and ufunc's Python methods (`take`, `flat`, "
        "`resize`, `ufunc.reduce`/`accumulate`/`outer`/`at`/`reduceat`...), installed in the C types.",
        "- `where=`/`initial=` of reductions and `where=` of ufuncs: the identity (or a NaN that the nan-"
        "reduction skips) where the mask is false, then the plain op.",
        "- `seterr`/`errstate`: every mode starts as `'ignore'` (NumPy starts with `'warn'`), so that no op "
        "pays for a check nobody asked for. With a mode other than `'ignore'`, each ufunc on the **CPU** checks "
        "its result after the op and warns (`RuntimeWarning`), raises (`FloatingPointError`), calls, prints or "
        "logs as NumPy does: division by zero (an infinity from finite inputs in a division, `log`, `reciprocal`...), "
        "invalid (a NaN from non-NaN inputs), overflow (an infinity from finite inputs elsewhere); underflow is "
        "not detected. On a **GPU** the modes are accepted and kept, but nothing is checked (a check would "
        "cost a device round trip per op).",
        "",
        "| surface | present | counted | coverage |",
        "| --- | --- | --- | --- |",
    ]
    for title, r in res.items():
        n = len(r["present"]) + len(r["missing"])
        lines.append(f"| {title} | {len(r['present'])} | {n} | {r['percent']:.1f}% |")
    lines.append("")
    for title, r in res.items():
        lines += [f"## {title}", "", f"coverage: {r['percent']:.1f}%", ""]
        lines += ["### missing", ""]
        lines += [", ".join(f"`{n}`" for n in r["missing"]) or "(none)", ""]
        if r["excluded"]:
            lines += ["### left out", "", "| name | reason |", "| --- | --- |"]
            lines += [f"| `{n}` | {why} |" for n, why in sorted(r["excluded"].items())]
            lines.append("")
        lines += ["### present", ""]
        lines += [", ".join(f"`{n}`" for n in r["present"]) or "(none)", ""]
    return "\n".join(lines)


def read_document(path=DOC):
    """{surface: {"percent": float, "present": [names]}} as the document records them."""
    out = {}
    title = section = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                title = line[3:]
                out[title] = {"percent": None, "present": []}
                section = None
            elif line.startswith("### "):
                section = line[4:]
            elif title and line.startswith("coverage: "):
                out[title]["percent"] = float(line.split()[1].rstrip("%"))
            elif title and section == "present" and line.startswith("`"):
                out[title]["present"] = [n.strip().strip("`") for n in line.split(",")]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="fail if docs/numpy_coverage.md is stale")
    p.add_argument("-o", "--output", default=DOC)
    args = p.parse_args(argv)
    text = render(measure())
    if args.check:
        with open(args.output) as f:
            if f.read() != text:
                print(f"{args.output} is stale: run tools/numpy_coverage.py", file=sys.stderr)
                return 1
        return 0
    with open(args.output, "w") as f:
        f.write(text)
    for title, r in measure().items():
        print(f"{title}: {r['percent']:.1f}% ({len(r['present'])} of {len(r['present']) + len(r['missing'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
