"""The losses of ck.nn, PyTorch's classes and arguments."""
from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits with class indices or class probabilities as
    targets (``F.cross_entropy``).  On its first call it checks that the
    rows it was given are not probabilities already (a model ending in
    Softmax), and warns once, with what to change, when they are; it still
    trains, as PyTorch does."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.__dict__["_checked"] = False

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        # the first call's checks read the device: not while a graph is
        # being captured (a replay could not repeat them); the first call
        # outside a capture makes them
        if not self._checked and not F._capturing(input):
            self.__dict__["_checked"] = True
            F._check_logits(input)
            F._check_targets(input, target, self.ignore_index)
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)

    def extra_repr(self):
        """The settings that the module's repr shows."""
        return f"label_smoothing={self.label_smoothing}" if self.label_smoothing else ""


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        return F.l1_loss(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class BCELoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, reduction)

    def forward(self, input, target):
        """The loss of input against target, reduced as the constructor's reduction says."""
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)
