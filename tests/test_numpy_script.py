"""Issue 4's promise: a NumPy script runs with ``import cudakit as np`` in
place of ``import numpy as np`` and gives NumPy's results (random aside),
on the default device, whichever that is."""
import numpy
import pytest

import cudakit

from conftest import assert_same


def script(np):
    """A small analysis as a NumPy user writes it; returns what it computed."""
    data = (np.arange(120.0).reshape(12, 10) * 7.3) % 11.0 - 5.0
    out = {}
    # fancy and boolean indexing, with assignment
    rows = np.array([0, 3, 7, 11])
    out["fancy"] = data[rows][:, [1, 4, 9]]
    out["mixed"] = data[rows, 2:5]
    out["masked"] = data[data > 2.5]
    clipped = data.copy()
    clipped[clipped < -3.0] = -3.0
    out["assigned"] = clipped
    # einsum: a Gram matrix and a batched trace
    out["gram"] = np.einsum("ij,kj->ik", data, data)
    out["trace"] = np.einsum("bii->b", data[:8].reshape(2, 4, 10)[:, :, :4])
    # a linear system
    m = out["gram"][:6, :6] + 50.0 * np.eye(6)
    rhs = np.arange(6.0)
    out["solve"] = np.linalg.solve(m, rhs)
    # a spectrum
    out["rfft"] = np.fft.rfft(data[0])
    out["power"] = np.abs(np.fft.rfft(data, axis=1)) ** 2
    # sorting and sets
    out["sorted"] = np.sort(data, axis=1)
    out["argsort"] = np.argsort(data[:, 0], kind="stable")
    values, counts = np.unique(np.round(data), return_counts=True)
    out["unique"] = values
    out["counts"] = counts
    # statistics
    out["mean"] = data.mean(axis=0)
    out["std"] = data.std()
    out["median"] = np.median(data, axis=1)
    # random numbers: same shape and range as NumPy's, not the same stream
    rng = np.random.default_rng(1234)
    out["random"] = rng.random((3, 4))
    out["normal"] = rng.normal(size=1000)
    return out


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_script_gives_numpys_results(dev):
    if dev == "cuda" and not cudakit.cuda.is_available():
        pytest.skip("no usable CUDA device")
    before = cudakit.get_default_device()
    cudakit.set_default_device(dev)
    try:
        got = script(cudakit)
    finally:
        cudakit.set_default_device(before)
    want = script(numpy)
    assert got.keys() == want.keys()
    for name in want:
        if name in ("random", "normal"):
            g = cudakit.asnumpy(got[name])
            assert g.shape == want[name].shape and g.dtype == want[name].dtype, name
            continue
        assert str(got[name].device).startswith(dev), name
        assert_same(got[name], want[name], rtol=1e-9 if want[name].dtype.kind in "fc" else None, atol=1e-9)
    g = cudakit.asnumpy(got["random"])
    assert ((g >= 0) & (g < 1)).all()
    n = cudakit.asnumpy(got["normal"])
    assert abs(n.mean()) < 0.15 and 0.85 < n.std() < 1.15
