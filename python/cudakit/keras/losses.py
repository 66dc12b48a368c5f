"""Keras losses: by name ('sparse_categorical_crossentropy',
'categorical_crossentropy', 'binary_crossentropy', 'mse', 'mae') or as
classes with ``from_logits``; a callable (y_true, y_pred) -> loss is taken
as it is.  Probabilities are clipped to [1e-7, 1 - 1e-7] before the log, as
Keras does."""
from .. import _core
from ..nn import functional as F

_EPS = 1e-7


def _log_clipped(p):
    return _core.log(_core.minimum(_core.maximum(p, _EPS), 1.0 - _EPS))


class Loss:
    kind = None
    sparse = False
    from_logits_ok = False

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name=None, **kwargs):
        self.from_logits = from_logits
        self.name = name or type(self).__name__

    def __call__(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise NotImplementedError("Keras losses: sample_weight is not supported")
        return self.compute(y_pred, y_true, self.from_logits)


class SparseCategoricalCrossentropy(Loss):
    kind = "sparse"
    sparse = True
    from_logits_ok = True

    def compute(self, y_pred, y_true, from_logits):
        t = y_true if y_true.dtype.kind in "iu" else y_true.astype(_core.int64)
        if t.ndim == y_pred.ndim and t.shape[-1] == 1:
            t = t.reshape(tuple(t.shape[:-1]))
        if tuple(t.shape) != tuple(y_pred.shape[:-1]):
            raise ValueError(f"Arguments `target` and `output` must have the same shape up until the last dimension: "
                             f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}")
        if y_pred.ndim != 2:
            # Keras's classes are the last axis; the losses' are axis 1
            y_pred = y_pred.reshape((-1, y_pred.shape[-1]))
            t = t.reshape((-1,))
        if from_logits:
            return F.cross_entropy(y_pred, t)
        return F.nll_loss(_log_clipped(y_pred), t)


class CategoricalCrossentropy(Loss):
    kind = "categorical"
    from_logits_ok = True

    def __init__(self, from_logits=False, label_smoothing=0.0, **kwargs):
        super().__init__(from_logits, **kwargs)
        self.label_smoothing = label_smoothing

    def compute(self, y_pred, y_true, from_logits):
        t = y_true.astype(y_pred.dtype) if y_true.dtype != y_pred.dtype else y_true
        if from_logits:
            return F.cross_entropy(y_pred, t, label_smoothing=self.label_smoothing)
        if self.label_smoothing:
            c = y_pred.shape[-1]
            t = t * (1.0 - self.label_smoothing) + self.label_smoothing / c
        # Keras renormalises the rows before the log
        p = y_pred / y_pred.sum(axis=-1, keepdims=True)
        return -(t * _log_clipped(p)).sum(axis=-1).mean()


class BinaryCrossentropy(Loss):
    kind = "binary"

    def compute(self, y_pred, y_true, from_logits):
        t = _like(y_true, y_pred)
        if from_logits:
            return F.binary_cross_entropy_with_logits(y_pred, t)
        lp = _log_clipped(y_pred)
        lq = _log_clipped(1.0 - y_pred)
        return -(t * lp + (1.0 - t) * lq).mean()


def _like(y_true, y_pred):
    """Targets in the prediction's dtype and shape ((N,) for (N, 1))."""
    t = y_true.astype(y_pred.dtype) if y_true.dtype != y_pred.dtype else y_true
    return t.reshape(tuple(y_pred.shape)) if t.ndim < y_pred.ndim else t


class MeanSquaredError(Loss):
    kind = "regression"

    def compute(self, y_pred, y_true, from_logits):
        d = y_pred - _like(y_true, y_pred)
        return (d * d).mean()


class MeanAbsoluteError(Loss):
    kind = "regression"

    def compute(self, y_pred, y_true, from_logits):
        d = y_pred - _like(y_true, y_pred)
        return _core.maximum(d, -d).mean()


class _Callable(Loss):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.name = getattr(fn, "__name__", "loss")

    def compute(self, y_pred, y_true, from_logits):
        return self.fn(y_true, y_pred)


_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
}


def get(identifier):
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown loss function: {identifier!r} (known: {', '.join(sorted(_BY_NAME))})")
        return cls()
    if callable(identifier):
        return _Callable(identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    return SparseCategoricalCrossentropy(from_logits)(y_true, y_pred)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    return CategoricalCrossentropy(from_logits, label_smoothing)(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    return MeanSquaredError()(y_true, y_pred)


mse = mean_squared_error
