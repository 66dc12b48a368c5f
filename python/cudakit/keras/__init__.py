"""ck.keras: the Keras face of ck.nn.

    >>> model = ck.keras.models.Sequential([ck.keras.layers.Dense(128, activation="relu"),
    ...                                      ck.keras.layers.Dense(10, activation="softmax")])
    >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    >>> history = model.fit(x_train, y_train, epochs=5)

``datasets`` (mnist, fashion_mnist) loads on first use."""
import importlib as _importlib

from . import callbacks, layers, losses, models, optimizers, utils
from .models import Model, Sequential

_LAZY = ("datasets",)


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
