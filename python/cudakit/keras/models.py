"""keras.models.Sequential: compile, fit, evaluate, predict over ck.nn.

fit keeps the data on the device (one copy at the start), draws each
epoch's order there, gathers each batch with ``take``, and accumulates the
loss and the metrics on the device: nothing is read back until the epoch's
end.  When the last Dense has activation='softmax' and the loss is a
categorical cross-entropy, the loss is computed from that layer's logits
(as Keras does), which is the fused, stable path."""
import time

from .. import _core
from ..nn.module import Module
from . import callbacks as _callbacks
from . import layers as _layers
from . import losses as _losses
from . import optimizers as _optimizers


def _no_grad():
    import cudakit
    return cudakit.no_grad()


class Sequential(_layers._Weights, Module):
    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__()
        self.__dict__["name"] = name or _layers._unique_name("sequential")
        self.__dict__["_layer_list"] = []
        self.__dict__["compiled"] = False
        self.__dict__["_input_shape"] = None
        self.__dict__["history"] = None
        self.__dict__["stop_training"] = False
        for layer in layers or ():
            self.add(layer)

    # ------------------------------------------------------------ structure

    def add(self, layer):
        """Add a layer at the end (an InputLayer only sets the input shape)."""
        if isinstance(layer, _layers.InputLayer):
            self.__dict__["_input_shape"] = layer.input_shape
            return
        if not isinstance(layer, Module):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: layer={layer!r}")
        self.add_module(str(len(self._layer_list)), layer)
        self._layer_list.append(layer)
        if self._input_shape is not None and len(self._layer_list) == 1:
            self.build(self._input_shape)

    def pop(self):
        """Remove the last layer and return it."""
        if not self._layer_list:
            raise TypeError("There are no layers in the model.")
        layer = self._layer_list.pop()
        del self._modules[str(len(self._layer_list))]
        return layer

    @property
    def layers(self):
        return list(self._layer_list)

    @property
    def built(self):
        return all(getattr(l, "built", True) for l in self._layer_list) and bool(self._layer_list)

    def build(self, input_shape=None, device=None):
        """Create every layer's weights for inputs of input_shape ((None, 784))."""
        if input_shape is None:
            input_shape = self._input_shape
        if input_shape is None:
            raise ValueError("build() needs an input shape")
        shape = tuple(input_shape)
        for layer in self._layer_list:
            if isinstance(layer, _layers.Layer) and not layer.built:
                if isinstance(layer, _layers.Dense):
                    layer.build(shape, device)
                else:
                    layer.build(shape)
            shape = layer.compute_output_shape(shape) if hasattr(layer, "compute_output_shape") else shape
        self.__dict__["_input_shape"] = tuple(input_shape)

    def _build_for(self, x):
        if not self.built:
            self.build((None,) + tuple(x.shape[1:]), x.device)

    def forward(self, x, training=None):
        for layer in self._layer_list:
            x = layer(x, training) if isinstance(layer, _layers.Layer) else layer(x)
        return x

    def __call__(self, x, training=None):
        if not isinstance(x, _core.ndarray):
            x = _core.asarray(x)
        if x.dtype.kind != "f":
            x = x.astype(_core.float32)
        self._build_for(x)
        return self.forward(x, training)

    def _forward_logits(self, x, training):
        """The output before a final softmax Dense's activation."""
        for layer in self._layer_list[:-1]:
            x = layer(x, training) if isinstance(layer, _layers.Layer) else layer(x)
        return self._layer_list[-1].logits(x)

    def summary(self, print_fn=None):
        """Print a table of the layers, their output shapes and parameter counts (through print_fn)."""
        print_fn = print_fn or print
        rows = [("Layer (type)", "Output Shape", "Param #")]
        shape = self._input_shape
        for layer in self._layer_list:
            if shape is not None and hasattr(layer, "compute_output_shape"):
                shape = layer.compute_output_shape(shape)
            n = sum(p.size for p in layer.parameters())
            rows.append((f"{getattr(layer, 'name', '')} ({type(layer).__name__})",
                         str(tuple(shape)) if shape is not None else "?", str(n)))
        w = [max(len(r[i]) for r in rows) + 2 for i in range(3)]
        line = "_" * sum(w)
        print_fn(f'Model: "{self.name}"')
        print_fn(line)
        for i, r in enumerate(rows):
            print_fn("".join(c.ljust(w[j]) for j, c in enumerate(r)))
            print_fn("=" * sum(w) if i == 0 else line)
        total = self.count_params()
        print_fn(f"Total params: {total}")
        print_fn(f"Trainable params: {total}")
        print_fn("Non-trainable params: 0")

    # ------------------------------------------------------------ training

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None, **kwargs):
        """Set the optimizer (a name or an object), the loss and the metrics for fit and evaluate."""
        self.__dict__["optimizer"] = _optimizers.get(optimizer)
        self.__dict__["loss"] = _losses.get(loss) if loss is not None else None
        self.__dict__["_metric_names"] = list(metrics or [])
        for m in self._metric_names:
            if not (callable(m) or m in _METRICS):
                raise ValueError(f"Unknown metric: {m!r} (known: {', '.join(sorted(_METRICS))})")
        self.__dict__["compiled"] = True

    def _check_compiled(self):
        if not self.compiled or self.loss is None:
            raise RuntimeError("You must compile your model before training/testing. Use `model.compile(optimizer, loss)`.")

    def _logits_path(self):
        last = self._layer_list[-1] if self._layer_list else None
        return (isinstance(last, _layers.Dense) and last.activation_name == "softmax"
                and getattr(self.loss, "from_logits_ok", False))

    def _metric_fns(self):
        fns = []
        for m in self._metric_names:
            if callable(m):
                fns.append((getattr(m, "__name__", "metric"), m))
            else:
                fns.append((m, _metric_for(m, self.loss)))
        return fns

    def _prepare(self, x, y, device):
        x = _as_input(x, device)
        if y is not None:
            y = _core.asarray(y, device=device)
            if y.dtype.kind == "f" and getattr(self.loss, "sparse", False):
                y = y.astype(_core.int64)
            if getattr(self.loss, "sparse", False) and y.ndim == 2 and y.shape[1] == 1:
                y = y.reshape((y.shape[0],))
        return x, y

    def _device(self):
        for p in self.parameters():
            return p.device
        return _core.get_default_device()

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1, **kwargs):
        """Train for epochs on x and y in batches of batch_size (32 by default), with validation data
        or validation_split, callbacks and verbose output as Keras's; returns a History.
        """
        self._check_compiled()
        if x is None or y is None:
            raise ValueError("fit needs x and y (arrays); generators and datasets are not supported")
        if class_weight is not None or sample_weight is not None:
            raise NotImplementedError("fit: class_weight and sample_weight are not supported")
        batch_size = batch_size or 32
        device = self._device() if self.built else _core.get_default_device()
        x, y = self._prepare(x, y, device)
        n = x.shape[0]
        if y.shape[0] != n:
            raise ValueError(f"Data cardinality is ambiguous: x sizes: {n}, y sizes: {y.shape[0]}")
        if validation_data is None and validation_split:
            if not 0 < validation_split < 1:
                raise ValueError(f"validation_split must be in (0, 1), got {validation_split}")
            split = int(n * (1.0 - validation_split))
            validation_data = (x[split:], y[split:])
            x, y, n = x[:split], y[:split], split
        if validation_data is not None:
            vx, vy = self._prepare(validation_data[0], validation_data[1], device)
        self._build_for(x)
        opt = self.optimizer.bind(self.parameters())
        loss_fn = self.loss
        metric_fns = self._metric_fns()
        logits = self._logits_path()
        verbose = 1 if verbose == "auto" else int(verbose)
        history = _callbacks.History()
        cbs = _callbacks.CallbackList([history] + list(callbacks or []), self)
        self.__dict__["stop_training"] = False
        self.train()
        steps = (n + batch_size - 1) // batch_size
        if steps_per_epoch is not None:
            steps = min(steps, steps_per_epoch)
        cbs.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            cbs.on_epoch_begin(epoch)
            t0 = time.perf_counter()
            order = _core.asarray(_permutation(n, device)) if shuffle else None
            loss_sum = _core.zeros((), dtype=_core.float64, device=device)
            msums = [_core.zeros((), dtype=_core.float64, device=device) for _ in metric_fns]
            seen = 0
            if verbose == 1:
                print(f"Epoch {epoch + 1}/{epochs}")
            for s in range(steps):
                lo = s * batch_size
                hi = min(lo + batch_size, n)
                if order is not None:
                    idx = order[lo:hi]
                    xb, yb = _core.take(x, idx, axis=0), _core.take(y, idx, axis=0)
                else:
                    xb, yb = x[lo:hi], y[lo:hi]
                opt.zero_grad()
                out = self._forward_logits(xb, True) if logits else self.forward(xb, True)
                loss = loss_fn.compute(out, yb, True if logits else loss_fn.from_logits)
                loss.backward()
                opt.step()
                m = hi - lo
                seen += m
                with _no_grad():
                    loss_sum += loss.detach() * m
                    for i, (_, fn) in enumerate(metric_fns):
                        msums[i] += fn(out.detach(), yb) * m
            logs = {"loss": float(loss_sum) / max(seen, 1)}
            for (name, _), ms in zip(metric_fns, msums):
                logs[name] = float(ms) / max(seen, 1)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                vlogs = self._evaluate(vx, vy, validation_batch_size or batch_size)
                for k, v in vlogs.items():
                    logs["val_" + k] = v
                self.train()
            dt = time.perf_counter() - t0
            if verbose:
                parts = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
                lead = f"{steps}/{steps}" if verbose == 1 else f"Epoch {epoch + 1}/{epochs}"
                print(f"{lead} - {dt:.0f}s {dt / max(steps, 1) * 1e3:.0f}ms/step - {parts}")
            cbs.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cbs.on_train_end()
        self.eval()
        self.__dict__["history"] = history
        return history

    def _evaluate(self, x, y, batch_size):
        self.eval()
        loss_fn = self.loss
        metric_fns = self._metric_fns()
        logits = self._logits_path()
        n = x.shape[0]
        device = x.device
        loss_sum = _core.zeros((), dtype=_core.float64, device=device)
        msums = [_core.zeros((), dtype=_core.float64, device=device) for _ in metric_fns]
        with _no_grad():
            for lo in range(0, n, batch_size):
                xb, yb = x[lo:lo + batch_size], y[lo:lo + batch_size]
                m = xb.shape[0]
                out = self._forward_logits(xb, False) if logits else self.forward(xb, False)
                loss = loss_fn.compute(out, yb, True if logits else loss_fn.from_logits)
                loss_sum += loss * m
                for i, (_, fn) in enumerate(metric_fns):
                    msums[i] += fn(out, yb) * m
        logs = {"loss": float(loss_sum) / max(n, 1)}
        for (name, _), ms in zip(metric_fns, msums):
            logs[name] = float(ms) / max(n, 1)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, **kwargs):
        """The loss and metrics over (x, y): a float when there are no
        metrics, else [loss, *metrics] (a dict with return_dict)."""
        self._check_compiled()
        device = self._device() if self.built else _core.get_default_device()
        x, y = self._prepare(x, y, device)
        self._build_for(x)
        logs = self._evaluate(x, y, batch_size or 32)
        if verbose:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if return_dict:
            return logs
        vals = list(logs.values())
        return vals[0] if len(vals) == 1 else vals

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for x, as a NumPy array (as Keras returns)."""
        import numpy as np
        device = self._device() if self.built else _core.get_default_device()
        x = _as_input(x, device)
        self._build_for(x)
        self.eval()
        bs = batch_size or 32
        outs = []
        with _no_grad():
            for lo in range(0, x.shape[0], bs):
                outs.append(self.forward(x[lo:lo + bs], False))
        if not outs:
            return np.zeros((0,), dtype=np.float32)
        return _core.asnumpy(_core.concatenate(outs, axis=0))

    def predict_on_batch(self, x):
        """predict(x) in one batch."""
        return self.predict(x, batch_size=len(x))

    def save_weights(self, filepath, overwrite=True):
        """Save the weights to filepath with cudakit.save (safetensors, or .npz by the name)."""
        from ..serialization import save
        save({f"{i}": p.detach() for i, p in enumerate(self.parameters())}, filepath)

    def load_weights(self, filepath, skip_mismatch=False):
        """Load weights that save_weights saved into the model."""
        from ..serialization import load
        d = load(filepath, map_location=self._device())
        self.set_weights([d[str(i)] for i in range(len(d))])


def _as_input(x, device):
    if not isinstance(x, _core.ndarray):
        import numpy as np
        xa = np.asarray(x)
        if xa.dtype.kind != "f":
            xa = xa.astype(np.float32)
        elif xa.dtype == np.float64:
            # Keras computes in float32 (its floatx)
            xa = xa.astype(np.float32)
        return _core.asarray(xa, device=device)
    if x.device != device:
        x = x.to_device(device)
    if x.dtype.kind != "f" or x.dtype == _core.float64:
        x = x.astype(_core.float32)
    return x


def _permutation(n, device):
    from .. import random as _random
    return _random.permutation(n, device=device)


# ---------------------------------------------------------------- metrics

def _argmax_hits(out, y):
    pred = out.argmax(axis=-1)
    return (pred == y.reshape(tuple(pred.shape))).mean(dtype=_core.float64) if y.ndim == pred.ndim else \
        (pred == y.argmax(axis=-1)).mean(dtype=_core.float64)


def _categorical_hits(out, y):
    return (out.argmax(axis=-1) == y.argmax(axis=-1)).mean(dtype=_core.float64)


def _binary_hits(out, y, threshold=0.5):
    return ((out > threshold) == (y > 0.5)).mean(dtype=_core.float64)


_METRICS = {
    "accuracy": None, "acc": None,
    "sparse_categorical_accuracy": _argmax_hits,
    "categorical_accuracy": _categorical_hits,
    "binary_accuracy": _binary_hits,
    "mse": lambda out, y: ((out - y) * (out - y)).mean(dtype=_core.float64),
    "mae": lambda out, y: _core.abs(out - y).mean(dtype=_core.float64),
}


def _metric_for(name, loss):
    fn = _METRICS[name]
    if fn is not None:
        return fn
    kind = getattr(loss, "kind", None)
    if kind == "sparse":
        return _argmax_hits
    if kind == "categorical":
        return _categorical_hits
    return _binary_hits


def load_model(filepath, *args, **kwargs):
    raise NotImplementedError("keras.models.load_model is not supported: use model.save_weights/load_weights")


Model = Sequential
