"""ck.nn: layers, losses and the Module machinery, with PyTorch's names.

    >>> import cudakit as ck
    >>> model = ck.nn.Sequential(ck.nn.Linear(784, 128), ck.nn.ReLU(), ck.nn.Linear(128, 10))
    >>> loss = ck.nn.CrossEntropyLoss()(model(x), y); loss.backward()

Everything differentiates through cudakit's autograd (the gradient rules of
the ops, in C); ``functional`` has the computations, ``init`` PyTorch's
initialisations."""
from . import functional, init, parallel
from .layers import (AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Embedding, Flatten, GELU, Identity,
                     LayerNorm, LeakyReLU, Linear, LogSoftmax, MaxPool2d, ModuleDict, ModuleList, ReLU, Sequential,
                     SiLU, Sigmoid, Softmax, Softplus, Tanh)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .parameter import Buffer, Parameter

__all__ = ["AvgPool2d", "BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "Buffer", "Conv2d",
           "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm",
           "LeakyReLU", "Linear", "LogSoftmax", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "MSELoss",
           "NLLLoss", "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax", "Softplus", "Tanh",
           "functional", "init", "parallel"]
