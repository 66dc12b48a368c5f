"""cudakit.utils.data: TensorDataset, DataLoader (order, batches, drop_last,
seeded shuffles, where batches are made and where they go), collate,
Subset/random_split.  On both devices: the data on the device, and host data
sent to it through pinned buffers on a side stream."""
import collections
import warnings

import numpy as np
import pytest

import cudakit as ck
from cudakit.utils.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split


def dataset_arrays(n=23, device="cpu"):
    """x rows that name their index (x[i] = [i, 1000 + i, 2000 + i]) and y = i."""
    i = np.arange(n)
    x = np.stack([i, 1000 + i, 2000 + i], axis=1).astype(np.float32)
    y = i.astype(np.int64)
    return x, y


def check_batches(batches, n, bs, drop_last, device, shuffled):
    """Every sample once (none when dropped), rows kept with their labels, the
    batches on device; returns the order seen."""
    seen = []
    for k, (xb, yb) in enumerate(batches):
        assert xb.device.type == device and yb.device.type == device
        assert xb.dtype == ck.float32 and yb.dtype == ck.int64
        xh, yh = ck.asnumpy(xb), ck.asnumpy(yb)
        full = n // bs
        assert len(yh) == (bs if k < full else n % bs)
        np.testing.assert_array_equal(xh[:, 0], yh)
        np.testing.assert_array_equal(xh[:, 2], yh + 2000)
        seen.extend(yh.tolist())
    want = n - n % bs if drop_last else n
    assert len(seen) == want
    if not shuffled:
        assert seen == list(range(want))
    else:
        assert len(set(seen)) == want and seen != sorted(seen)
    return seen


# ------------------------------------------------------------------ TensorDataset

def test_tensor_dataset(device):
    x, y = dataset_arrays(5)
    ds = TensorDataset(ck.asarray(x, device=device), ck.asarray(y, device=device))
    assert len(ds) == 5
    xi, yi = ds[3]
    assert xi.shape == (3,) and int(yi) == 3 and xi.device.type == device
    assert isinstance(TensorDataset(x, y)[1][0], np.ndarray)
    with pytest.raises(ValueError, match="Size mismatch between tensors: first dimensions 5, 4"):
        TensorDataset(x, y[:4])
    with pytest.raises(ValueError, match="at least one array"):
        TensorDataset()
    with pytest.raises(ValueError, match="need a first dimension"):
        TensorDataset(np.float32(1))


# ------------------------------------------------------------------ arrays on the device

@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_on_device(device, shuffle, drop_last):
    x, y = dataset_arrays(23)
    ds = TensorDataset(ck.asarray(x, device=device), ck.asarray(y, device=device))
    loader = DataLoader(ds, batch_size=5, shuffle=shuffle, drop_last=drop_last, generator=ck.random.default_rng(3))
    assert len(loader) == (4 if drop_last else 5)
    first = check_batches(loader, 23, 5, drop_last, device, shuffle)
    second = check_batches(loader, 23, 5, drop_last, device, shuffle)
    if shuffle:
        assert first != second             # a new order every epoch


def test_batches_are_copies(device):
    x, y = dataset_arrays(8)
    xd = ck.asarray(x, device=device)
    for shuffle in (False, True):
        for xb, yb in DataLoader(TensorDataset(xd, ck.asarray(y, device=device)), batch_size=4, shuffle=shuffle):
            xb[...] = -1
    np.testing.assert_array_equal(ck.asnumpy(xd), x)


def test_seeded_orders(device):
    x, y = dataset_arrays(50)

    def orders(gen, dev=device):
        ds = TensorDataset(ck.asarray(x, device=dev), ck.asarray(y, device=dev))
        loader = DataLoader(ds, batch_size=7, shuffle=True, generator=gen)
        return [np.concatenate([ck.asnumpy(b) for _, b in loader]).tolist() for _ in range(2)]

    a = orders(ck.random.default_rng(42))
    assert a == orders(ck.random.default_rng(42)) and a[0] != a[1]
    assert a != orders(ck.random.default_rng(43))
    assert a == orders(42)                                   # an int seed is default_rng(seed)
    assert a == orders(ck.random.default_rng(42), "cpu")     # the same order on every device
    np_orders = orders(np.random.default_rng(1))
    assert np_orders == orders(np.random.default_rng(1)) and sorted(np_orders[0]) == list(range(50))
    # cudakit's global generator when none is given
    ck.random.seed(7)
    g = orders(None)
    ck.random.seed(7)
    assert g == orders(None)
    with pytest.raises(TypeError, match="generator must be"):
        DataLoader(TensorDataset(x), generator="seed")


def test_sampler_and_arguments(device):
    x, y = dataset_arrays(10)
    ds = TensorDataset(ck.asarray(x, device=device), ck.asarray(y, device=device))
    order = [9, 2, 2, 5, 0]
    loader = DataLoader(ds, batch_size=2, sampler=order)
    assert len(loader) == 3
    assert np.concatenate([ck.asnumpy(b) for _, b in loader]).tolist() == order
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=order, shuffle=True)
    for bad in (0, -1, None, 2.0, True):
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            DataLoader(ds, batch_size=bad)
    with pytest.raises(NotImplementedError, match="batch_sampler"):
        DataLoader(ds, batch_sampler=[[0, 1]])
    with pytest.warns(UserWarning, match="makes the batches in this process"):
        loader = DataLoader(ds, batch_size=4, num_workers=2)
    assert [len(b) for _, b in loader] == [4, 4, 2]
    assert len(DataLoader(TensorDataset(x[:0]), batch_size=3)) == 0 and list(DataLoader(TensorDataset(x[:0]))) == []


# ------------------------------------------------------------------ host data sent to the device

@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("source", ["numpy", "cudakit-cpu"])
def test_host_data_to_device(device, shuffle, source):
    x, y = dataset_arrays(37)
    if source == "cudakit-cpu":
        x, y = ck.asarray(x, device="cpu"), ck.asarray(y, device="cpu")
    loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=shuffle, device=device, generator=5)
    # kept batches stay right while later ones reuse the pinned buffers
    batches = list(loader)
    check_batches(batches, 37, 4, False, device, shuffle)
    # and an epoch read one batch at a time, with work on each batch in between
    total = 0.0
    for xb, yb in loader:
        total += float((xb[:, 1] - 1000).sum())
        assert (ck.asnumpy(xb[:, 0]) == ck.asnumpy(yb)).all()
    assert total == float(np.arange(37).sum())


def test_numpy_data_without_device():
    x, y = dataset_arrays(9)
    xb, yb = next(iter(DataLoader(TensorDataset(x, y), batch_size=4)))
    assert isinstance(xb, ck.ndarray) and xb.device.type == "cpu"
    np.testing.assert_array_equal(ck.asnumpy(xb), x[:4])


@pytest.mark.parametrize("source", ["numpy", "cudakit-cpu"])
def test_pin_memory(device, source):
    x, y = dataset_arrays(21)
    if source == "cudakit-cpu":
        x, y = ck.asarray(x, device="cpu"), ck.asarray(y, device="cpu")
    loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True, pin_memory=True, generator=1)
    batches = list(loader)
    check_batches(batches, 21, 4, False, "cpu", True)
    # the batch then moves as the user moves it, whatever the device
    xb = ck.asarray(batches[0][0], device=device)
    np.testing.assert_array_equal(ck.asnumpy(xb), ck.asnumpy(batches[0][0]))


def test_no_waits_on_the_gpu(device):
    """Batches of on-device data and of staged host data make the host wait
    for the GPU nowhere (the pinned copies do not wait; take's bounds check
    is not needed): the sync debug mode would raise at a wait."""
    if device == "cpu":
        pytest.skip("the CPU does its work when each call returns: there is no wait to find")
    x, y = dataset_arrays(64)
    on_device = DataLoader(TensorDataset(ck.asarray(x, device="cuda"), ck.asarray(y, device="cuda")),
                           batch_size=8, shuffle=True, generator=0)
    staged = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, device="cuda", generator=0)
    for loader in (on_device, staged):
        it = iter(loader)       # the epoch's order is drawn here
        ck.cuda.set_sync_debug_mode("error")
        try:
            batches = list(it)
        finally:
            ck.cuda.set_sync_debug_mode("default")
        check_batches(batches, 64, 8, False, "cuda", True)


def test_the_seed_loop_does_not_wait(device):
    """The seed's loop (a loader over CPU arrays, each batch moved to the GPU):
    the loader pins host batches when a GPU is usable, so the moves are
    asynchronous copies; pin_memory=False gives pageable batches, whose small
    moves go through the core's pinned ring and do not wait either; a large
    pageable copy waits (the sync debug mode says so)."""
    if device == "cpu":
        pytest.skip("the CPU does its work when each call returns: there is no wait to find")
    x, y = dataset_arrays(40)
    ds = TensorDataset(ck.asarray(x, device="cpu"), ck.asarray(y, device="cpu"))
    it = iter(DataLoader(ds, batch_size=8, shuffle=True, generator=0))
    ck.cuda.set_sync_debug_mode("error")
    try:
        moved = [(ck.asarray(a, device="cuda"), ck.asarray(b, device="cuda")) for a, b in it]
    finally:
        ck.cuda.set_sync_debug_mode("default")
    check_batches(moved, 40, 8, False, "cuda", True)
    it = iter(DataLoader(ds, batch_size=8, pin_memory=False))
    big = np.zeros(1 << 20, np.float32)              # 4 MiB: more than the ring takes
    ck.cuda.set_sync_debug_mode("error")
    try:
        moved = [(ck.asarray(a, device="cuda"), ck.asarray(b, device="cuda")) for a, b in it]
        with pytest.raises(RuntimeError, match="pageable"):
            ck.asarray(big, device="cuda")
    finally:
        ck.cuda.set_sync_debug_mode("default")
    check_batches(moved, 40, 8, False, "cuda", False)


# ------------------------------------------------------------------ datasets of items, collate

class Items(Dataset):
    def __init__(self, n, kind):
        self.n, self.kind = n, kind

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = np.full((2, 3), i, dtype=np.float32)
        if self.kind == "tuple":
            return img, i
        if self.kind == "dict":
            return {"image": img, "label": i, "name": f"s{i}", "w": 0.5 * i}
        return Point(ck.asarray(img), np.int32(i))


Point = collections.namedtuple("Point", "image label")


@pytest.mark.parametrize("target", [None, "device"])
def test_item_datasets(device, target):
    dev = device if target else None
    want_dev = device if target else "cpu"
    xb, yb = next(iter(DataLoader(Items(10, "tuple"), batch_size=4, device=dev)))
    assert xb.shape == (4, 2, 3) and xb.dtype == ck.float32 and xb.device.type == want_dev
    assert yb.dtype == ck.int64 and ck.asnumpy(yb).tolist() == [0, 1, 2, 3]
    batches = list(DataLoader(Items(10, "dict"), batch_size=3, shuffle=True, device=dev, generator=2))
    assert len(batches) == 4
    labels = []
    for b in batches:
        assert set(b) == {"image", "label", "name", "w"}
        assert b["image"].device.type == want_dev and b["w"].dtype == ck.float64
        np.testing.assert_array_equal(ck.asnumpy(b["image"])[:, 0, 0], ck.asnumpy(b["label"]))
        assert b["name"] == [f"s{i}" for i in ck.asnumpy(b["label"])]
        labels += ck.asnumpy(b["label"]).tolist()
    assert sorted(labels) == list(range(10))
    p = next(iter(DataLoader(Items(5, "namedtuple"), batch_size=5, device=dev)))
    assert isinstance(p, Point) and p.image.shape == (5, 2, 3) and p.label.dtype == ck.int32


def test_collate_fn_and_default_collate(device):
    got = next(iter(DataLoader(Items(6, "tuple"), batch_size=3, collate_fn=lambda items: len(items))))
    assert got == 3
    b = default_collate([(np.zeros(2), 1, True), (np.ones(2), 2, False)])
    assert isinstance(b, list) and b[0].shape == (2, 2) and b[1].dtype == ck.int64 and b[2].dtype == ck.bool_
    c = default_collate([ck.zeros(3, device=device), ck.ones(3, device=device)])
    assert c.device.type == device and ck.asnumpy(c).tolist() == [[0, 0, 0], [1, 1, 1]]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object()])


def test_subset_and_random_split():
    x, y = dataset_arrays(10)
    ds = TensorDataset(x, y)
    sub = Subset(ds, [4, 1])
    assert len(sub) == 2 and int(sub[1][1]) == 1
    parts = random_split(ds, [7, 3], generator=ck.random.default_rng(0))
    idx = [p.indices for p in parts]
    assert [len(i) for i in idx] == [7, 3] and sorted(idx[0] + idx[1]) == list(range(10))
    assert idx == [p.indices for p in random_split(ds, [7, 3], generator=ck.random.default_rng(0))]
    assert [len(p) for p in random_split(ds, [0.5, 0.3, 0.2], generator=1)] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [5, 4])
    xb, yb = next(iter(DataLoader(parts[1], batch_size=3)))
    assert ck.asnumpy(yb).tolist() == idx[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(DataLoader(parts[0], batch_size=2, drop_last=True))) == 3
