"""cudakit arrays as Dask chunks (python/cudakit/_dask.py): dask.array over
cudakit chunks, the "cudakit" array backend, sizeof, distributed's
serialization, and a LocalCluster of two worker processes; every result
compared with NumPy's (values, dtype, shape) and checked to be a cudakit
array on the device asked for."""
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import cudakit as ck  # noqa: E402
from conftest import assert_same  # noqa: E402


def on(x, device):
    assert isinstance(x, ck.ndarray), type(x)
    assert str(x.device).split(":")[0] == device, x.device
    return x


@pytest.fixture
def default_device(device):
    old = ck.get_default_device()
    ck.set_default_device(device)
    yield device
    ck.set_default_device(old)


def test_from_array_elementwise_and_meta(device):
    h = np.arange(24 * 30, dtype=np.float32).reshape(24, 30) / 7
    d = da.from_array(ck.asarray(h, device=device), chunks=(5, 8))
    assert isinstance(d._meta, ck.ndarray) and d._meta.ndim == 2
    y = da.sin(d) * 2 + d ** 2
    assert isinstance(y._meta, ck.ndarray)
    got = on(y.compute(), device)
    assert_same(got, np.sin(h) * 2 + h ** 2, rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "mean", "std", "max", "min", "prod"])
def test_reductions(device, name):
    h = np.linspace(0.5, 1.5, 17 * 13).reshape(17, 13)
    d = da.from_array(ck.asarray(h, device=device), chunks=(4, 5))
    for axis in (None, 0, 1):
        got = getattr(d, name)(axis=axis).compute()
        want = getattr(h, name)(axis=axis)
        if axis is None:
            assert float(got) == pytest.approx(float(want), rel=1e-9)
        else:
            assert_same(on(got, device), want, rtol=1e-9)


def test_matmul_and_map_blocks(device):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    da_a = da.from_array(ck.asarray(a, device=device), chunks=(10, 15))
    da_b = da.from_array(ck.asarray(b, device=device), chunks=(15, 10))
    assert_same(on((da_a @ da_b).compute(), device), a @ b, rtol=1e-9)
    got = da_a.map_blocks(lambda blk: blk * 3 - 1, dtype=a.dtype).compute()
    assert_same(on(got, device), a * 3 - 1)


def test_tsqr_and_svd(device):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((60, 6))
    d = da.from_array(ck.asarray(a, device=device), chunks=(15, 6))
    q, r = da.linalg.tsqr(d)
    q, r = q.compute(), r.compute()
    np.testing.assert_allclose(ck.asnumpy(q @ r), a, atol=1e-10)
    u, s, v = da.linalg.svd(d)
    np.testing.assert_allclose(ck.asnumpy(s.compute()), np.linalg.svd(a, compute_uv=False), rtol=1e-10)


def test_backend_creation_functions(default_device):
    device = default_device
    with dask.config.set({"array.backend": "cudakit"}):
        o = da.ones((7, 9), chunks=4, dtype="float32")
        z = da.zeros((5,), chunks=2)
        f = da.full((3, 4), 2.5, chunks=2)
        r = da.arange(0, 10, 3, chunks=2)
    for x, want in [(o, np.ones((7, 9), np.float32)), (z, np.zeros(5)), (f, np.full((3, 4), 2.5)),
                    (r, np.arange(0, 10, 3))]:
        assert isinstance(x._meta, ck.ndarray)
        assert_same(on(x.compute(), device), want)


def test_backend_random(default_device):
    device = default_device
    with dask.config.set({"array.backend": "cudakit"}):
        x = da.random.random((1000,), chunks=100)
        g = da.random.default_rng(5).standard_normal((2000,), chunks=300)
    assert isinstance(x._meta, ck.ndarray) and isinstance(g._meta, ck.ndarray)
    xs, gs = on(x.compute(), device), on(g.compute(), device)
    xh, gh = ck.asnumpy(xs), ck.asnumpy(gs)
    assert xh.shape == (1000,) and xh.dtype == np.float64 and 0 <= xh.min() and xh.max() < 1
    # chunks draw independent streams: no two chunks alike
    assert len({xh[i:i + 100].tobytes() for i in range(0, 1000, 100)}) == 10
    assert abs(gh.mean()) < 0.15 and 0.85 < gh.std() < 1.15
    # the same seed gives the same numbers
    with dask.config.set({"array.backend": "cudakit"}):
        g2 = da.random.default_rng(5).standard_normal((2000,), chunks=300)
    np.testing.assert_array_equal(ck.asnumpy(g2.compute()), gh)


def test_histogram_of_chunks(device):
    h = np.random.default_rng(3).random(10_000)
    d = da.from_array(ck.asarray(h, device=device), chunks=1000)
    hist, edges = da.histogram(d, bins=16, range=(0, 1))
    want, want_edges = np.histogram(h, bins=16, range=(0, 1))
    np.testing.assert_array_equal(ck.asnumpy(hist.compute()), want)
    np.testing.assert_allclose(ck.asnumpy(edges), want_edges)


def test_sizeof(device):
    from dask.sizeof import sizeof

    x = ck.zeros((100, 10), dtype=np.float32, device=device)
    assert sizeof(x) == 4000


def test_distributed_serialization(device):
    protocol = pytest.importorskip("distributed.protocol")
    for h in [np.arange(12, dtype=np.int16).reshape(3, 4), np.ones((0, 3)), np.array(2.5),
              np.arange(20.0)[::3]]:
        x = ck.asarray(h, device=device)
        header, frames = protocol.serialize(x)
        assert header["serializer"] == "dask"
        assert sum(len(memoryview(f).cast("B")) for f in frames) == h.size * h.itemsize
        y = protocol.deserialize(header, frames)
        assert_same(on(y, device), h)


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    env = {"CUDAKIT_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env=env, silence_logs=40)
    client = distributed.Client(cluster, timeout=60)
    yield client
    client.close(timeout=30)
    cluster.close(timeout=30)


def test_local_cluster_of_two_processes(device, cluster_client):
    # on a GPU the two workers share the one GPU, each its own context
    h = np.random.default_rng(4).standard_normal((400, 50))
    d = da.from_array(ck.asarray(h, device=device), chunks=(50, 50))
    y = (da.exp(d / 4) + 1).sum(axis=0)
    m = (d.T @ d)
    got_y, got_m = cluster_client.compute([y, m], sync=True)
    assert_same(on(got_y, device), (np.exp(h / 4) + 1).sum(axis=0), rtol=1e-9)
    assert_same(on(got_m, device), h.T @ h, rtol=1e-9)
    seen = cluster_client.run(lambda: __import__("cudakit").__name__)
    assert len(seen) == 2


def test_local_cluster_one_worker_per_device(device):
    """cudakit.dask.local_cluster: a worker process per device named, each
    with its environment (a GPU worker sees its GPU alone, as cuda:0), and
    chunks computed there on that device."""
    distributed = pytest.importorskip("distributed")
    from cudakit.dask import local_cluster

    devices = ["cuda:0"] if device == "cuda" else ["cpu", "cpu"]
    with local_cluster(devices, silence_logs=40) as cluster, distributed.Client(cluster, timeout=60) as client:
        client.wait_for_workers(len(devices), timeout=60)
        seen = client.run(lambda: (__import__("os").environ.get("CUDA_VISIBLE_DEVICES"),
                                   str(__import__("cudakit").get_default_device())))
        assert len(seen) == len(devices)
        for visible, default in seen.values():
            assert default.startswith(device)
            assert visible == ("0" if device == "cuda" else None)
        h = np.random.default_rng(5).standard_normal((300, 40))
        d = da.from_array(h, chunks=(60, 40)).map_blocks(ck.asarray, dtype=h.dtype)
        got = client.compute((d * d).sum(axis=0), sync=True)
        assert isinstance(got, ck.ndarray) and got.device.type == device
        assert_same(on(got, device), (h * h).sum(axis=0), rtol=1e-12)
    with pytest.raises(ValueError, match="devices is empty"):
        local_cluster([])


def test_example_dask_large(device, monkeypatch):
    # examples/dask_large.py at a small size, in this process (threads)
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dask_large.py"
    spec = importlib.util.spec_from_file_location("dask_large", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("CUDAKIT_DEVICE", device)
    old = ck.get_default_device()
    ck.set_default_device(device)
    try:
        res = mod.main(["--size", "8MB", "--chunk", "1MB", "--workers", "0", "--backend", "both",
                        "--device", device, "--no-progress"])
    finally:
        ck.set_default_device(old)
    ckr, npr = res
    assert ckr["n"] == npr["n"] == 2 * 2**20
    # different random streams, the same distribution: mean of sin^2(x) + log1p(x) for x ~ U(0, 1)
    want = (1 - np.sin(2) / 2) / 2 + (2 * np.log(2) - 1)
    assert abs(ckr["mean"] - want) < 1e-3 and abs(npr["mean"] - want) < 1e-3
    assert ckr["hist"].sum() == npr["hist"].sum() == 2 * 2**20
