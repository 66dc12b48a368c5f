"""The examples in examples/ (issue 6's user kernels), run on every device.

Each test calls an example's main(device) and checks what it returns against
NumPy; the CPU and the GPU are checked against the same reference at the same
tolerance, so they agree with each other.  The last test runs each script as
a user would, with --device."""
import importlib.util
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import cudakit as ck
from conftest import assert_same

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


@pytest.fixture
def device(device):
    """conftest's device, skipped on the CPU where this build has no CPU target for CUDA C."""
    if device == "cpu" and not ck._core._cpu_kernels_available():
        pytest.skip("CUDA C kernels on the CPU are not available in this build")
    return device


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(EXAMPLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_multiply_them(device, capsys):
    a, b, dest1, dest2 = load("multiply_them").main(device)
    want = ck.asnumpy(a) * ck.asnumpy(b)
    assert_same(dest1, want, rtol=0)   # one float32 product: exact on both devices
    assert_same(dest2, want, rtol=0)
    assert "agree: True" in capsys.readouterr().out


def test_add_one(device):
    host, x = load("add_one").main(device)
    assert_same(x, host + 1, rtol=0)
    host, x = load("add_one").main(device, n=1000)     # a last block that is not full
    assert_same(x, host + 1, rtol=0)


def test_transpose_tiled(device):
    a, out = load("transpose_tiled").main(device)
    assert a.shape == (1000, 750)      # not a multiple of 32 either way
    assert_same(out, ck.asnumpy(a).T, rtol=0)
    a, out = load("transpose_tiled").main(device, height=33, width=31)
    assert_same(out, ck.asnumpy(a).T, rtol=0)


def test_block_reduce(device):
    x, total_shared, total_shuffle = load("block_reduce").main(device)
    want = np.array([ck.asnumpy(x).sum(dtype=np.float64)], dtype=np.float32)
    assert_same(total_shared, want, rtol=1e-5)
    assert_same(total_shuffle, want, rtol=1e-5)
    # fewer elements than threads, and a block count that is not a multiple of a warp
    x, total_shared, total_shuffle = load("block_reduce").main(device, n=100, blocks=3)
    want = np.array([ck.asnumpy(x).sum(dtype=np.float64)], dtype=np.float32)
    assert_same(total_shared, want, rtol=1e-5)
    assert_same(total_shuffle, want, rtol=1e-5)


def reference_blur(image, weights):
    """The same separable convolution in NumPy, with clamp-to-edge borders."""
    r = len(weights) // 2
    h, w = image.shape
    image = image.astype(np.float64)
    padded = np.pad(image, ((0, 0), (r, r)), mode="edge")
    rows = sum(wk * padded[:, k:k + w] for k, wk in enumerate(weights.astype(np.float64)))
    padded = np.pad(rows, ((r, r), (0, 0)), mode="edge")
    return sum(wk * padded[k:k + h, :] for k, wk in enumerate(weights.astype(np.float64)))


def test_gaussian_blur(device, tmp_path, monkeypatch):
    pytest.importorskip("skimage")
    from skimage import io

    def no_network(*args, **kwargs):
        raise AssertionError("the example tried to download something")
    monkeypatch.setattr(socket.socket, "connect", no_network)

    image, weights, blurred = load("gaussian_blur").main(device, sigma=3.0, out_dir=str(tmp_path))
    img = ck.asnumpy(image)
    assert img.shape == (512, 512) and img.std() > 0.1          # a real photograph
    assert len(weights) == 19 and abs(float(weights.sum()) - 1) < 1e-6
    want = reference_blur(img, weights).astype(np.float32)
    assert_same(blurred, want, rtol=1e-5, atol=1e-5)
    assert np.abs(want - img).max() > 0.2                          # the blur changed something

    before = io.imread(tmp_path / "camera.png")
    after = io.imread(tmp_path / "camera_blurred.png")
    np.testing.assert_array_equal(before, np.rint(img * 255).astype(np.uint8))
    assert after.shape == before.shape and after.dtype == np.uint8
    assert np.abs(after.astype(int) - np.clip(np.rint(want * 255), 0, 255)).max() <= 1


def test_overlap(device):
    one, many, pin_in, pin_out = load("overlap").main(device, mib=8, chunk_mib=1, nstreams=3)
    h = ck.asnumpy(pin_in)
    np.testing.assert_allclose(ck.asnumpy(pin_out), np.sqrt(h) * 2 + 1, rtol=1e-6)
    assert one > 0 and many > 0


@pytest.mark.parametrize("name", ["add_one", "multiply_them", "transpose_tiled", "block_reduce", "gaussian_blur",
                                  "overlap"])
def test_example_scripts(device, name, tmp_path):
    if name == "gaussian_blur":
        pytest.importorskip("skimage")
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, name + ".py"), "--device", device]
                         + (["--out", str(tmp_path)] if name == "gaussian_blur" else []),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"on {device}" in run.stdout, run.stdout


def _fashion_mnist_here():
    try:
        ck.datasets.fashion_mnist.load_data()
    except FileNotFoundError:
        return False
    return True


def test_train_mlp_quick(device, tmp_path):
    """make demo's training script, --quick --model all (300 steps of each
    model: the seed's, the logits fix, the fix with a cosine schedule): on
    Fashion-MNIST when this machine has it, else on a small learnable set
    of MNIST-shaped files the test writes (a bar at a row that names the
    class), pointed at with --dataset mnist --data."""
    pytest.importorskip("cudakit.nn", reason="ck.nn is not in this build yet")
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    args = ["--quick", "--device", device, "--out", str(tmp_path / "out"), "--model", "all"]
    real = _fashion_mnist_here()
    if not real:
        rng = np.random.default_rng(0)
        folder = tmp_path / "data" / "MNIST" / "raw"
        folder.mkdir(parents=True)
        for split, n in (("train", 300 * 64), ("t10k", 500)):     # --quick's 300 steps: one epoch
            y = rng.integers(0, 10, n).astype(np.uint8)
            x = rng.integers(0, 60, (n, 28, 28)).astype(np.uint8)
            x[np.arange(n), 2 * y.astype(int) + 4, 4:24] = 255
            ck.datasets.write_idx(folder / f"{split}-images-idx3-ubyte", x)
            ck.datasets.write_idx(folder / f"{split}-labels-idx1-ubyte.gz", y)
        args += ["--dataset", "mnist", "--data", str(tmp_path / "data")]
    # OpenBLAS's threads spin against the other processes of a busy machine
    # (300 steps: 0.4 s with one thread, 20 s with two, on the 2-core CI machine)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, "train_mlp.py")] + args,
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"training on {device}" in run.stdout
    import json

    out = tmp_path / "out"
    summary = json.loads((out / "train_mlp.json").read_text())
    acc = {m["model"]: m["epochs"][-1]["test_accuracy"] for m in summary["models"]}
    assert set(acc) == {"seed", "logits", "recipe"}
    assert all(m["epochs"][-1]["steps"] == 300 for m in summary["models"])
    # 300 steps: the logits model is well on its way; the seed's model learns too, more slowly
    assert acc["logits"] > (0.72 if real else 0.95), acc
    assert acc["recipe"] > (0.72 if real else 0.95), acc      # Adam 2e-3 and a cosine over the 300 steps
    assert acc["seed"] > (0.45 if real else 0.5), acc
    from matplotlib import image

    for name in ("train_mlp_curves.png", "train_mlp_samples.png"):
        png = image.imread(out / name)
        assert png.ndim == 3 and png.shape[0] > 200 and png.shape[1] > 500 and png.std() > 0.05
    assert "test accuracy" in run.stdout and "s / epoch" in run.stdout
