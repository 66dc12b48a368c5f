"""Keras's ``keras.datasets``: ``mnist.load_data()`` and
``fashion_mnist.load_data()``, from files on this machine (cudakit.datasets
says where they are looked for; nothing is downloaded).

    >>> import cudakit as tf
    >>> (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
"""
from ..datasets import fashion_mnist, mnist

__all__ = ["mnist", "fashion_mnist"]
