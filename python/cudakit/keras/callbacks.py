"""Keras callbacks, the minimum: Callback, History, EarlyStopping, LambdaCallback."""


class Callback:
    def __init__(self):
        self.model = None

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass


class History(Callback):
    """``history.history``: {'loss': [...], 'accuracy': [...], 'val_loss': [...], ...}, a value per epoch."""

    def on_train_begin(self, logs=None):
        self.history = {}
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.mode = mode if mode != "auto" else ("max" if "acc" in monitor else "min")
        self.restore_best_weights = restore_best_weights

    def on_train_begin(self, logs=None):
        self.wait, self.best, self.best_weights, self.stopped_epoch = 0, None, None, 0

    def on_epoch_end(self, epoch, logs=None):
        v = (logs or {}).get(self.monitor)
        if v is None:
            return
        better = self.best is None or (v < self.best - self.min_delta if self.mode == "min" else v > self.best + self.min_delta)
        if better:
            self.best, self.wait = v, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait > self.patience:
            self.stopped_epoch = epoch
            self.model.__dict__["stop_training"] = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        self._f = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                       on_train_end=on_train_end)

    def on_epoch_begin(self, epoch, logs=None):
        if self._f["on_epoch_begin"]:
            self._f["on_epoch_begin"](epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self._f["on_epoch_end"]:
            self._f["on_epoch_end"](epoch, logs)

    def on_train_begin(self, logs=None):
        if self._f["on_train_begin"]:
            self._f["on_train_begin"](logs)

    def on_train_end(self, logs=None):
        if self._f["on_train_end"]:
            self._f["on_train_end"](logs)


class CallbackList:
    def __init__(self, callbacks, model):
        self.callbacks = list(callbacks)
        for c in self.callbacks:
            c.set_model(model)

    def on_train_begin(self):
        for c in self.callbacks:
            c.on_train_begin({})

    def on_train_end(self):
        for c in self.callbacks:
            c.on_train_end({})

    def on_epoch_begin(self, epoch):
        for c in self.callbacks:
            c.on_epoch_begin(epoch, {})

    def on_epoch_end(self, epoch, logs):
        for c in self.callbacks:
            c.on_epoch_end(epoch, logs)
