"""cudakit.datasets: the IDX reader's checks, MNIST and Fashion-MNIST found in
torchvision's, Keras's and Debian's layouts from small files the tests write,
the torchvision-style classes, Keras's load_data, and the error a missing
dataset raises."""
import gzip
import os

import numpy as np
import pytest

import cudakit as ck
from cudakit import datasets
from cudakit.datasets import _mnist, read_idx, write_idx

TRAIN = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
TEST = ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
DEBIAN_FASHION = "/usr/share/datasets/fashion-mnist"


@pytest.fixture(autouse=True)
def no_user_folders(tmp_path, monkeypatch):
    """The tests see only the folders they make: no $CUDAKIT_DATA, an empty
    Keras home and an empty stand-in for Debian's folder."""
    monkeypatch.delenv("CUDAKIT_DATA", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras-home"))
    monkeypatch.setattr(_mnist, "DEBIAN_DIR", str(tmp_path / "debian-datasets"))


def keras_datasets():
    """ck.keras.datasets (imported here: ck.keras needs ck.nn, which needs autograd)."""
    import cudakit.keras.datasets
    return cudakit.keras.datasets


def fake_split(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


def write_dataset(folder, gz=False, n_train=7, n_test=5, seed=0):
    """The four IDX files of a small MNIST-shaped dataset; returns its arrays."""
    os.makedirs(folder, exist_ok=True)
    arrays = {}
    for split, names, n in (("train", TRAIN, n_train), ("test", TEST, n_test)):
        x, y = fake_split(n, seed + (split == "test"))
        write_idx(os.path.join(folder, names[0] + (".gz" if gz else "")), x)
        write_idx(os.path.join(folder, names[1] + (".gz" if gz else "")), y)
        arrays[split] = (x, y)
    return arrays


def check_load(got, want):
    (xt, yt), (xs, ys) = got
    for g, w in ((xt, want["train"][0]), (yt, want["train"][1]), (xs, want["test"][0]), (ys, want["test"][1])):
        assert isinstance(g, np.ndarray) and g.dtype == np.uint8
        np.testing.assert_array_equal(g, w)


# ------------------------------------------------------------------ the IDX reader

@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("gz", [False, True])
def test_idx_round_trip(tmp_path, dtype, gz):
    a = (np.arange(2 * 3 * 5) - 7).astype(dtype).reshape(2, 3, 5)
    if dtype == "uint8":
        a = np.arange(30, dtype=np.uint8).reshape(2, 3, 5)
    p = tmp_path / ("a.idx" + (".gz" if gz else ""))
    write_idx(p, a)
    with open(p, "rb") as f:
        head = f.read(2)
    assert (head == b"\x1f\x8b") == gz
    got = read_idx(p)
    assert got.dtype == np.dtype(dtype) and got.dtype.isnative and got.shape == (2, 3, 5)
    np.testing.assert_array_equal(got, a)
    got[0, 0, 0] = 1            # a writable array of its own
    # big-endian on disk, as the format says: the first int16 -7 is ff f9
    if dtype == "int16":
        raw = gzip.decompress(p.read_bytes()) if gz else p.read_bytes()
        assert raw[:4] == bytes([0, 0, 0x0B, 3]) and raw[4:16] == bytes([0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 5])
        assert raw[16:18] == b"\xff\xf9"


def test_idx_zero_d_and_empty(tmp_path):
    write_idx(tmp_path / "e", np.zeros((0, 28, 28), np.uint8))
    assert read_idx(tmp_path / "e").shape == (0, 28, 28)
    write_idx(tmp_path / "s", np.array(5, np.int32))
    assert read_idx(tmp_path / "s").shape == () and int(read_idx(tmp_path / "s")) == 5


def test_idx_bad_files(tmp_path):
    p = tmp_path / "bad"
    p.write_bytes(b"\x00\x00")
    with pytest.raises(ValueError, match="too short"):
        read_idx(p)
    p.write_bytes(b"\x01\x00\x08\x01" + b"\x00" * 8)
    with pytest.raises(ValueError, match=r"not an IDX file \(magic number 0x01000801"):
        read_idx(p)
    p.write_bytes(b"\x00\x00\x07\x01" + b"\x00" * 8)                   # no type 0x07
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(p)
    p.write_bytes(b"\x00\x00\x08\x03\x00\x00")                         # header cut short
    with pytest.raises(ValueError, match="announces 3 dimensions"):
        read_idx(p)
    write_idx(p, np.zeros((4, 28, 28), np.uint8))
    data = p.read_bytes()
    p.write_bytes(data[:-1])
    with pytest.raises(ValueError, match=r"shape \(4, 28, 28\) of uint8 \(3136 bytes after the header\) but the "
                                         r"file holds 3135 bytes after it \(truncated\?\)"):
        read_idx(p)
    p.write_bytes(data + b"\x00")
    with pytest.raises(ValueError, match="holds 3137 bytes"):
        read_idx(p)
    # the wrong kind of file for what is asked: labels where images must be
    write_idx(p, np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match=r"magic number 0x00000801, expected 0x00000803 \(3-d uint8, this file "
                                         r"holds 1-d uint8\)"):
        read_idx(p, 0x00000803)
    # a truncated gzip file names itself
    write_idx(tmp_path / "t.gz", np.zeros((4, 28, 28), np.uint8))
    (tmp_path / "t.gz").write_bytes((tmp_path / "t.gz").read_bytes()[:30])
    with pytest.raises(ValueError, match="t.gz: a corrupt or truncated gzip file"):
        read_idx(tmp_path / "t.gz")
    with pytest.raises(TypeError, match="IDX has no type for int64"):
        write_idx(p, np.zeros(3, np.int64))


# ------------------------------------------------------------------ finding the files

@pytest.mark.parametrize("layout", ["torchvision", "flat", "alias"])
@pytest.mark.parametrize("gz", [False, True])
def test_mnist_layouts(tmp_path, layout, gz):
    root = tmp_path / "data"
    folder = {"torchvision": root / "MNIST" / "raw", "flat": root, "alias": root / "mnist"}[layout]
    want = write_dataset(folder, gz=gz)
    check_load(datasets.mnist.load_data(root=root), want)
    check_load(keras_datasets().mnist.load_data(root=str(root)), want)
    train = datasets.MNIST(root, train=True)
    assert len(train) == 7 and train.data.shape == (7, 28, 28) and train.targets.dtype == np.int64
    np.testing.assert_array_equal(train.data, want["train"][0])
    test = datasets.MNIST(str(root), train=False)
    assert len(test) == 5
    img, label = test[3]
    assert isinstance(img, np.ndarray) and img.shape == (28, 28) and img.dtype == np.uint8
    assert type(label) is int and label == int(want["test"][1][3])
    assert all(f.endswith(".gz") == gz for f in test.files)


def test_kaggle_names_and_raw_before_gz(tmp_path):
    # train-images.idx3-ubyte, as some copies name them; a raw file is taken before its .gz
    want = write_dataset(tmp_path)
    for name in os.listdir(tmp_path):
        os.rename(tmp_path / name, tmp_path / name.replace("-idx", ".idx"))
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"not read")
    check_load(datasets.mnist.load_data(root=tmp_path), want)


def test_keras_npz(tmp_path, monkeypatch):
    (xt, yt), (xs, ys) = fake_split(6, 1), fake_split(4, 2)
    np.savez(tmp_path / "mnist.npz", x_train=xt, y_train=yt, x_test=xs, y_test=ys)
    want = {"train": (xt, yt), "test": (xs, ys)}
    check_load(datasets.mnist.load_data(root=tmp_path), want)
    check_load(datasets.mnist.load_data(path=str(tmp_path / "mnist.npz")), want)     # a path as it is
    np.testing.assert_array_equal(datasets.MNIST(tmp_path, train=False).data, xs)
    # Keras's own cache folder, found by itself
    keras = tmp_path / "keras-home" / "datasets"
    keras.mkdir(parents=True)
    os.rename(tmp_path / "mnist.npz", keras / "mnist.npz")
    check_load(keras_datasets().mnist.load_data(), want)
    # a npz that is not Keras's
    np.savez(keras / "mnist.npz", x_train=xt)
    with pytest.raises(ValueError, match="no y_train in it"):
        datasets.mnist.load_data()
    np.savez(keras / "mnist.npz", x_train=xt.astype(np.float32), y_train=yt, x_test=xs, y_test=ys)
    with pytest.raises(ValueError, match="expected uint8"):
        datasets.mnist.load_data()


def test_cudakit_data_and_debian_folders(tmp_path, monkeypatch):
    want = write_dataset(tmp_path / "env" / "FashionMNIST" / "raw", gz=True)
    monkeypatch.setenv("CUDAKIT_DATA", str(tmp_path / "env"))
    check_load(datasets.fashion_mnist.load_data(), want)
    check_load(keras_datasets().fashion_mnist.load_data(), want)
    assert datasets.FashionMNIST(train=True).classes[9] == "Ankle boot"
    # Debian's package's folder, found by itself
    monkeypatch.delenv("CUDAKIT_DATA")
    want = write_dataset(tmp_path / "debian-datasets" / "fashion-mnist", gz=True, seed=5)
    check_load(datasets.fashion_mnist.load_data(), want)
    # root= is the only place looked in when given
    with pytest.raises(FileNotFoundError):
        datasets.fashion_mnist.load_data(root=tmp_path / "elsewhere")


def test_missing_dataset_says_what_to_do(tmp_path):
    root = tmp_path / "nothing"
    with pytest.raises(FileNotFoundError) as e:
        datasets.FashionMNIST(root, train=True)
    msg = str(e.value)
    for name in TRAIN + TEST:
        assert f"{name}[.gz]" in msg
    for folder in (root / "FashionMNIST" / "raw", root / "FashionMNIST", root, root / "fashion-mnist"):
        assert f"\n  {folder}\n" in msg + "\n"
    assert "apt-get install dataset-fashion-mnist" in msg and "CUDAKIT_DATA" in msg
    assert "downloads nothing" in msg
    with pytest.raises(FileNotFoundError, match="(?s)Keras's mnist.npz.*never downloads"):
        datasets.MNIST(root, download=True)
    # only the test split missing: it is the one named
    write_dataset(root)
    for name in TEST:
        os.remove(root / name)
    assert len(datasets.MNIST(root, train=True)) == 7
    with pytest.raises(FileNotFoundError, match=r"MNIST \(test split\) was not found"):
        datasets.mnist.load_data(root=root)


def test_files_that_do_not_belong_together(tmp_path):
    write_dataset(tmp_path)
    write_idx(tmp_path / TRAIN[1], np.zeros(6, np.uint8))
    with pytest.raises(ValueError, match="holds 7 images but .* holds 6 labels"):
        datasets.MNIST(tmp_path)
    write_idx(tmp_path / TRAIN[1], np.full(7, 10, np.uint8))
    with pytest.raises(ValueError, match="a label of 10, expected 0 to 9"):
        datasets.MNIST(tmp_path)
    write_idx(tmp_path / TRAIN[0], np.zeros((7, 28, 27), np.uint8))
    with pytest.raises(ValueError, match="expected 28 x 28"):
        datasets.MNIST(tmp_path)
    write_idx(tmp_path / TRAIN[0], np.zeros(7, np.uint8))        # labels where the images go
    with pytest.raises(ValueError, match="expected 0x00000803"):
        datasets.MNIST(tmp_path)


def test_transforms_and_the_loader(tmp_path, device):
    want = write_dataset(tmp_path, n_train=10)
    ds = datasets.MNIST(tmp_path, transform=lambda im: im.astype(np.float32) / 255,
                        target_transform=lambda t: t + 100)
    img, label = ds[2]
    assert img.dtype == np.float32 and label == int(want["train"][1][2]) + 100
    loader = ck.utils.data.DataLoader(ds, batch_size=4, device=device)
    xb, yb = next(iter(loader))
    assert xb.device.type == device and xb.shape == (4, 28, 28) and yb.dtype == ck.int64
    np.testing.assert_allclose(ck.asnumpy(xb), want["train"][0][:4] / np.float32(255), rtol=1e-6)
    np.testing.assert_array_equal(ck.asnumpy(yb), want["train"][1][:4].astype(np.int64) + 100)
    assert "Number of datapoints: 10" in repr(ds)


@pytest.mark.skipif(not os.path.isdir(DEBIAN_FASHION), reason="Debian's dataset-fashion-mnist is not installed")
def test_debian_fashion_mnist(monkeypatch):
    monkeypatch.setattr(_mnist, "DEBIAN_DIR", os.path.dirname(DEBIAN_FASHION))
    (xt, yt), (xs, ys) = datasets.fashion_mnist.load_data()
    assert xt.shape == (60000, 28, 28) and yt.shape == (60000,) and xs.shape == (10000, 28, 28) and ys.shape == (10000,)
    assert xt.dtype == yt.dtype == np.uint8
    # Fashion-MNIST's classes are balanced: 6,000 and 1,000 of each
    np.testing.assert_array_equal(np.bincount(yt), [6000] * 10)
    np.testing.assert_array_equal(np.bincount(ys), [1000] * 10)
    assert 60 < xt.mean() < 90             # grey images on black (mean about 73)
