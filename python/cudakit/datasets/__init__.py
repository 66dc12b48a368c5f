"""cudakit.datasets: MNIST and Fashion-MNIST from files on this machine.

    >>> from cudakit import datasets
    >>> (x_train, y_train), (x_test, y_test) = datasets.fashion_mnist.load_data()   # as Keras's
    >>> x_train.shape, x_train.dtype
    ((60000, 28, 28), dtype('uint8'))
    >>> train = datasets.FashionMNIST(root=None, train=True)                      # as torchvision's
    >>> image, label = train[0]

The files are the datasets' four IDX files (``train-images-idx3-ubyte``,
``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
``t10k-labels-idx1-ubyte``; raw or ``.gz``), read by ``read_idx``, which
checks their magic numbers and sizes; Keras's ``mnist.npz`` is read too.
They are looked for under ``root=`` when it is given (``root/MNIST/raw/`` or
``root/FashionMNIST/raw/`` as torchvision lays them out, ``root`` itself,
``root/mnist``, ``root/fashion-mnist``), else under ``$CUDAKIT_DATA`` the
same way, Keras's cache folder (``~/.keras/datasets``) and the folder of
Debian's ``dataset-fashion-mnist`` package (``/usr/share/datasets/fashion-mnist``).
Nothing is downloaded: a dataset that is not there raises FileNotFoundError
naming the files, the folders looked in and how to get them.
"""
from ._idx import read_idx, write_idx
from ._mnist import MNIST, FashionMNIST
from . import mnist, fashion_mnist

__all__ = ["MNIST", "FashionMNIST", "read_idx", "write_idx", "mnist", "fashion_mnist"]
