"""The two training snippets of the seed "How CUDA works with Python"
(seeds/002, section 4) run as written, with cudakit in place of TensorFlow
and PyTorch, on each device; x_train/y_train and train_loader are small
synthetic data (the demo, examples/train_mlp.py, trains on Fashion-MNIST)."""
import warnings

import numpy as np
import pytest

import cudakit as ck
from cudakit.nn import functional as F

TF_SNIPPET = '''
import cudakit as tf
# 检查是否有可用的GPU
print("Num GPUs Available: ", len(tf.config.experimental.list_physical_devices('GPU')))
# 创建一个简单的模型
model = tf.keras.models.Sequential([
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dense(10, activation='softmax')
])
# 编译模型
model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', metrics=['accuracy'])
# 训练模型（假设x_train和y_train已经定义）
model.fit(x_train, y_train, epochs=5)
'''

TORCH_SNIPPET = '''
import cudakit as torch
# 检查是否有可用的GPU
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# 创建一个简单的模型
model = torch.nn.Sequential(
    torch.nn.Linear(784, 128),
    torch.nn.ReLU(),
    torch.nn.Linear(128, 10),
    torch.nn.Softmax(dim=1)
)
# 将模型移动到GPU
model.to(device)
# 定义损失函数和优化器
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters())
# 训练模型（假设train_loader已经定义）
for epoch in range(5):
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
'''


def _digits(n, seed=0):
    """n samples of 784 features in 10 classes a small MLP separates."""
    rng = np.random.default_rng(seed)
    protos = rng.random((10, 784)).astype(np.float32)
    y = rng.integers(0, 10, n)
    x = np.clip(protos[y] + 0.3 * rng.standard_normal((n, 784)), 0, 1).astype(np.float32)
    return x, y


@pytest.fixture
def on_device(device, monkeypatch):
    old = ck.get_default_device()
    ck.set_default_device(device)
    monkeypatch.setattr(ck.cuda, "is_available", lambda: device == "cuda")
    yield device
    ck.set_default_device(old)


def test_tensorflow_snippet(on_device, capsys):
    x_train, y_train = _digits(320)
    ns = {"x_train": x_train, "y_train": y_train}
    exec(compile(TF_SNIPPET, "seed-002-tensorflow", "exec"), ns)
    out = capsys.readouterr().out
    assert "Num GPUs Available: " in out and "Epoch 5/5" in out
    hist = ns["model"].history.history
    assert len(hist["loss"]) == 5 and hist["loss"][-1] < hist["loss"][0]
    assert hist["accuracy"][-1] > 0.9
    assert str(ns["model"].weights[0].device) == str(ck.device(on_device))


def test_pytorch_snippet(on_device):
    x, y = _digits(512, seed=1)
    # a loader as the seed has it: batches of host arrays the loop moves with .to(device)
    train_loader = [(ck.asarray(x[i:i + 64], device="cpu"), ck.asarray(y[i:i + 64], device="cpu"))
                    for i in range(0, 512, 64)]
    ns = {"train_loader": train_loader}
    F._warned_probabilities = False
    with pytest.warns(UserWarning, match="expects logits"):
        exec(compile(TORCH_SNIPPET, "seed-002-pytorch", "exec"), ns)
    model, device = ns["model"], ns["device"]
    assert str(device) == str(ck.device(on_device))
    assert all(str(p.device) == str(device) for p in model.parameters())
    assert float(ns["loss"]) < 2.0     # from log(10) = 2.30 at the start, through the softmax's flat gradients
    with ck.no_grad():
        pred = ck.asnumpy(model(ck.asarray(x, device=device)).argmax(axis=1))
    assert (pred == y).mean() > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ns["criterion"](model(train_loader[0][0].to(device)), train_loader[0][1].to(device))   # once only
