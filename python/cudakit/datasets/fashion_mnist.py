"""Fashion-MNIST as Keras's ``keras.datasets.fashion_mnist``."""
from ._mnist import FASHION_SPEC, load_data as _load


def load_data(root=None):
    """``((x_train, y_train), (x_test, y_test))``: uint8 NumPy arrays of shapes
    (60000, 28, 28), (60000,), (10000, 28, 28), (10000,), as Keras's.

    ``root``: the folder to look in (else ``$CUDAKIT_DATA``, Keras's cache
    folder and Debian's /usr/share/datasets/fashion-mnist); see
    cudakit.datasets."""
    return _load(FASHION_SPEC, root)
