"""Every test that can run on both devices takes the `device` fixture: 'cpu'
always, 'cuda' when a GPU is usable (skipped otherwise)."""
import os

import numpy as np
import pytest

os.environ.setdefault("CUDAKIT_DEVICE", "cpu")  # tests name their device explicitly

import cudakit as ck  # noqa: E402


def _cuda_usable():
    try:
        return bool(ck.cuda.is_available())
    except AttributeError:
        return False


DEVICES = ["cpu"] + (["cuda"] if _cuda_usable() else [])


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    if request.param not in DEVICES:
        pytest.skip("no usable CUDA device")
    return request.param


# The kernel tests run in bounds mode (ck.debug(bounds=True), issue 13): on
# the CPU an out-of-bounds access of an array argument is then an IndexError
# naming it, not memory corruption that shows in a later test.  It costs
# them about nothing (docs/kernels.md); CUDAKIT_TEST_BOUNDS=0 runs them
# unchecked.
BOUNDS_MODULES = {"test_kernels", "test_pykernels", "test_pykernel_vector", "test_pyk_literature", "test_vectorize", "test_cuda_random"}


@pytest.fixture(autouse=True)
def _kernel_bounds_mode(request):
    if request.module.__name__ not in BOUNDS_MODULES or os.environ.get("CUDAKIT_TEST_BOUNDS") == "0":
        yield
        return
    with ck.debug(bounds=True):
        yield


def assert_same(got, want, rtol=None, atol=0):
    """Compare a cudakit result with NumPy's: values, dtype and shape."""
    got_np = ck.asnumpy(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    if rtol is None:
        rtol = {np.dtype("float16"): 1e-3, np.dtype("float32"): 1e-5, np.dtype("complex64"): 1e-5}.get(want.dtype, 1e-12)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got_np, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


def reduction_tolerance(name, want, a):
    """Sums are order dependent: bound the error by n * eps * sum(|x|)."""
    want = np.asarray(want)
    if want.dtype.kind not in "fc":
        return {}
    eps = float(np.finfo(want.dtype).eps)
    n = max(a.size, 1)
    finite = np.abs(a[np.isfinite(a)])
    scale = float(finite.max()) if finite.size else 1.0
    if finite.size < a.size:   # NaN and inf entries (the nan-reductions skip them)
        scale = max(scale, 1.0)
    if name in ("var", "std"):
        scale = scale * scale * 4
    rtol = {np.dtype("float16"): 4e-3, np.dtype("float32"): 1e-5, np.dtype("complex64"): 1e-5}.get(want.dtype, 1e-12)
    if name in ("prod", "cumprod"):
        rtol = max(rtol, 4 * n * eps)
        return dict(rtol=rtol, atol=rtol)
    if name == "std":
        # sqrt amplifies the error of a tiny variance
        return dict(rtol=max(rtol, 1e-6 if want.dtype.itemsize >= 8 else 1e-3), atol=(n * eps * scale) ** 0.5 * 4)
    atol = 4 * n * eps * scale + (1e-300 if want.dtype.kind == "c" else 0)
    if name == "cumsum" and a.size and np.isfinite(a).all():
        # a running sum rounds at the size of the partial sums (NumPy's float16
        # one at every step, a GPU's scan in float32): a random walk of roundings
        atol = max(atol, 4 * n ** 0.5 * eps * float(np.sum(np.abs(a.astype(np.float64)))))
    return dict(rtol=rtol, atol=atol)


# Tests that failed on the H200 run of 2026-12-02 (NumPy 2.5 there, 2.4 here)
# and are not fixed yet: marked xfail (not strict) by node id, one a line in
# known_gpu_failures.txt, so the GPU suite shows what is known apart from
# what is new. Issue 13's note lists them; each fix removes its line.
# "skip: <id>" lines are cases that cannot run there at all.
_KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_gpu_failures.txt")


# NumPy 2.5 (the GPU machine's) allocates for these where 2.4 raises MemoryError
_NUMPY_2_5 = tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 5)


def pytest_collection_modifyitems(config, items):
    # Without a usable GPU the device fixture's cuda cases are deselected at
    # collection (pytest reports them as such), not set up one by one only
    # to skip: half the items, 10-20 s of a 2-core machine's make test.
    if "cuda" not in DEVICES:
        keep, gone = [], []
        for item in items:
            cs = getattr(item, "callspec", None)
            (gone if cs is not None and cs.params.get("device") == "cuda" else keep).append(item)
        if gone:
            config.hook.pytest_deselected(items=gone)
            items[:] = keep
    try:
        with open(_KNOWN) as f:
            known = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    except OSError:
        return
    for item in items:
        if "skip: " + item.nodeid in known and _NUMPY_2_5:
            item.add_marker(pytest.mark.skip(reason="NumPy's answer allocates more than the machine has and the "
                                                    "kernel kills the worker (the H200 run of 2026-12-02)"))
        elif item.nodeid in known:
            item.add_marker(pytest.mark.xfail(reason="failed on the H200 run of 2026-12-02; not fixed yet "
                                                     "(tests/known_gpu_failures.txt)", strict=False))
