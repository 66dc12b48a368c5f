"""ck.optim: optimizers and learning-rate schedules with PyTorch's names."""
from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
