"""MNIST's handwritten digits as Keras's ``keras.datasets.mnist``."""
from ._mnist import MNIST_SPEC, load_data as _load


def load_data(path="mnist.npz", root=None):
    """``((x_train, y_train), (x_test, y_test))``: uint8 NumPy arrays of shapes
    (60000, 28, 28), (60000,), (10000, 28, 28), (10000,), as Keras's.

    ``path``: Keras's file name of the one-file form, looked for in the
    folders (an absolute path, or one that exists, is read as it is); the four
    IDX files are taken first where a folder has them.  ``root``: the folder
    to look in (else ``$CUDAKIT_DATA``, Keras's cache folder); see
    cudakit.datasets."""
    return _load(MNIST_SPEC, root, path)
