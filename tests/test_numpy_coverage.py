"""docs/numpy_coverage.md against the package: no name it lists as present
may go missing, no surface's coverage may fall under what it records, and
the lazily loaded names are listed by dir() and load."""
import importlib
import os
import sys

import pytest

import cudakit as ck

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import numpy_coverage  # noqa: E402

RECORDED = numpy_coverage.read_document()
MEASURED = numpy_coverage.measure()


def test_the_document_has_every_surface():
    assert set(RECORDED) == set(MEASURED)
    for title, rec in RECORDED.items():
        assert rec["percent"] is not None, title
        assert rec["present"], title


@pytest.mark.parametrize("title", sorted(numpy_coverage.measure()))
def test_no_name_listed_as_present_goes_missing(title):
    # a name the installed NumPy no longer has (row_stack in 2.5) is not lost
    now = set(MEASURED[title]["present"]) | set(MEASURED[title]["missing"])
    lost = sorted(n for n in set(RECORDED[title]["present"]) - set(MEASURED[title]["present"]) if n in now)
    assert not lost, f"{title}: listed as present in docs/numpy_coverage.md but missing now: {lost}"


@pytest.mark.parametrize("title", sorted(numpy_coverage.measure()))
def test_coverage_does_not_fall(title):
    assert round(MEASURED[title]["percent"], 1) >= RECORDED[title]["percent"], (
        f"{title}: {MEASURED[title]['percent']:.1f}% < {RECORDED[title]['percent']:.1f}% recorded")


def test_main_namespace_at_95_percent():
    assert RECORDED["main namespace callables"]["percent"] >= 95.0


def test_excluded_names_exist_in_numpy():
    import numpy as np

    for n in numpy_coverage.EXCLUDED:
        assert hasattr(np, n), n
    for n in numpy_coverage.EXCLUDED_NDARRAY:
        assert hasattr(np.ndarray, n), n


def test_dir_lists_the_lazy_names():
    names = set(dir(ck))
    for n in ("linalg", "fft", "random", "unique", "median", "einsum", "RawKernel", "interp", "poly1d", "save",
              "errstate", "mgrid"):
        assert n in names, n


def test_lazy_name_lists_are_the_modules_all():
    from cudakit import _numpy_names

    for mod in ("_numpy_extra", "_numpy_io", "_polynomial"):
        m = importlib.import_module("cudakit." + mod)
        listed = {n for n, where in _numpy_names.LAZY.items() if where == mod}
        assert listed == set(m.__all__), (mod, listed ^ set(m.__all__))


def test_every_public_function_has_a_docstring():
    from cudakit import _numpy_names

    missing = []
    for n in _numpy_names.LAZY:
        obj = getattr(ck, n)
        if callable(obj) and not (getattr(obj, "__doc__", None) or "").strip():
            missing.append(n)
    assert not missing, missing


def test_importing_cudakit_imports_no_numpy():
    import subprocess

    code = "import sys, cudakit; print('numpy' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "CUDAKIT_DEVICE": "cpu"})
    assert r.stdout.strip() == "False", r.stdout + r.stderr
