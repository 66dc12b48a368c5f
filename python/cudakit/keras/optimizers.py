"""Keras optimizers: specifications (Keras's names and defaults) turned into
ck.optim optimizers when fit first sees the model's weights."""
from .. import optim as _optim


class Optimizer:
    _cls = None

    def __init__(self, learning_rate=0.001, **kwargs):
        self.learning_rate = learning_rate
        self._kwargs = kwargs
        self._bound = None

    def _make(self, params):
        raise NotImplementedError

    def bind(self, params):
        """The ck.optim optimizer over params (made once, kept for next fit)."""
        params = list(params)
        if self._bound is None or [id(p) for p in self._bound_params] != [id(p) for p in params]:
            self._bound = self._make(params)
            self._bound_params = params
        return self._bound


class Adam(Optimizer):
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, weight_decay=None,
                 **kwargs):
        super().__init__(learning_rate)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad
        self.weight_decay = weight_decay

    def _make(self, params):
        if self.weight_decay:
            return _optim.AdamW(params, self.learning_rate, (self.beta_1, self.beta_2), self.epsilon,
                                self.weight_decay, self.amsgrad)
        return _optim.Adam(params, self.learning_rate, (self.beta_1, self.beta_2), self.epsilon, 0, self.amsgrad)


class AdamW(Adam):
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay)


class SGD(Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, **kwargs):
        super().__init__(learning_rate)
        self.momentum, self.nesterov, self.weight_decay = momentum, nesterov, weight_decay

    def _make(self, params):
        return _optim.SGD(params, self.learning_rate, self.momentum, 0, self.weight_decay or 0, self.nesterov)


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, **kwargs):
        super().__init__(learning_rate)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def _make(self, params):
        return _optim.RMSprop(params, self.learning_rate, self.rho, self.epsilon, 0, self.momentum, self.centered)


class _Bound(Optimizer):
    """A ck.optim optimizer given to compile as it is."""

    def __init__(self, opt):
        super().__init__()
        self._bound = opt

    def bind(self, params):
        return self._bound


_BY_NAME = {"adam": Adam, "adamw": AdamW, "sgd": SGD, "rmsprop": RMSprop}


def get(identifier):
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, _optim.Optimizer):
        return _Bound(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Could not interpret optimizer identifier: {identifier!r} (known: {', '.join(_BY_NAME)})")
        return cls()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")
