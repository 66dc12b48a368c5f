"""DataLoader: batches of a dataset, made where the data is.

Three ways a batch is made (see the package's doc): gathered on the arrays'
device (TensorDataset of cudakit arrays), gathered on the host into pinned
buffers and sent to a device on a side stream one batch ahead (host data and
``device=`` a GPU), or collated from a dataset's items.

The side stream's copies and the memory pool: a batch's device memory is
allocated on the side stream, and the pool hands a freed block back only to
allocations on the stream it came from.  A batch is used (and then freed) on
the consumer's stream, so before each copy the side stream waits for the work
queued on the consumer's stream so far: a block freed by a dropped batch is
freed after the kernels that read it were queued, and those are then done
before the side stream writes into the block again.
"""
import collections.abc
import math
import numbers
import warnings

import numpy as np

from ... import _core
from ... import cuda as _cuda
from ._dataset import TensorDataset

_PINNED_SLOTS = 2        # host buffers a staged array cycles through: one being filled, one in flight


# ------------------------------------------------------------------ order

def _resolve_generator(generator):
    """generator as the loader draws from it: None (cudakit's global
    generator), a ck.random.Generator, or a NumPy Generator / RandomState."""
    if generator is None:
        return None
    if isinstance(generator, numbers.Integral) and not isinstance(generator, bool):
        from ... import random
        return random.default_rng(int(generator))
    if hasattr(generator, "_perm_index") or isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return generator
    raise TypeError(f"generator must be a cudakit.random.Generator (ck.random.default_rng(seed)), an int seed "
                    f"or a NumPy Generator, not {type(generator).__name__}")


def _permutation(generator, n, device):
    """A random permutation of range(n): an int64 cudakit array on device."""
    if isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return _core.asarray(generator.permutation(n).astype(np.int64), device=device)
    if generator is None:
        from ... import random
        return random.permutation(n, device=device)
    return generator.permutation(n, device=device)


def _host_permutation(generator, n):
    if isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return generator.permutation(n).astype(np.int64)
    return np.asarray(_permutation(generator, n, "cpu"))


# ------------------------------------------------------------------ collate

def _collate_host(batch):
    """default_collate with host arrays left as NumPy arrays (the loader
    turns them into cudakit arrays where they are to go)."""
    elem = batch[0]
    if isinstance(elem, _core.ndarray):
        return _core.stack(batch)
    if isinstance(elem, np.ndarray):
        return np.stack(batch)
    if isinstance(elem, np.generic):
        return np.array(batch)
    if isinstance(elem, bool):
        return np.array(batch, dtype=np.bool_)
    if isinstance(elem, numbers.Integral):
        return np.array(batch, dtype=np.int64)
    if isinstance(elem, numbers.Real):
        return np.array(batch, dtype=np.float64)
    if isinstance(elem, numbers.Complex):
        return np.array(batch, dtype=np.complex128)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({k: _collate_host([d[k] for d in batch]) for k in elem}) \
            if type(elem) is not dict else {k: _collate_host([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):     # a namedtuple
        return type(elem)(*(_collate_host(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [_collate_host(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain arrays, numbers, dicts or lists; found {type(elem).__name__}")


def _map_leaves(obj, fn):
    if isinstance(obj, (_core.ndarray, np.ndarray)):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _map_leaves(v, fn) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map_leaves(v, fn) for v in obj))
    if isinstance(obj, (list, tuple)) and not (obj and isinstance(obj[0], (str, bytes))):
        return type(obj)(_map_leaves(v, fn) for v in obj)
    return obj


def default_collate(batch):
    """Samples into a batch, as PyTorch's: arrays stacked along a new first
    axis (cudakit arrays on their device, NumPy arrays into cudakit CPU
    arrays), Python numbers into int64 / float64 / bool arrays, strings kept
    as a list, and tuples, lists (a list of the fields), namedtuples and dicts
    collated field by field."""
    return _map_leaves(_collate_host(batch), lambda a: _core.asarray(a) if isinstance(a, np.ndarray) else a)


# ------------------------------------------------------------------ devices

def _same(d1, d2):
    return d1.type == d2.type and (d1.index or 0) == (d2.index or 0)


class _Stager:
    """Host arrays to a device: copied into pinned buffers (a ring of
    _PINNED_SLOTS per array), sent on a side stream, the consumer's stream
    made to wait for them (see the module's doc for the pool's side).  The
    same code runs for the CPU, whose streams are host-ordered."""

    def __init__(self, device):
        self.device = device
        self.side = _cuda.Stream(device)
        self.buffers = {}                       # (slot, leaf) -> (pinned cudakit array, its NumPy view)
        self.done = [None] * _PINNED_SLOTS      # the event after each slot's last copy

    def begin(self, slot):
        ev = self.done[slot]
        if ev is not None:
            ev.synchronize()                    # its buffers are about to be written again
        self.side.wait_event(_cuda.current_stream(self.device).record())

    def buffer(self, slot, leaf, shape, dtype, rows_hint):
        """A pinned (cudakit array, NumPy view) of exactly shape, from the slot's buffer."""
        key = (slot, leaf)
        got = self.buffers.get(key)
        if got is None or got[1].dtype != dtype or got[1].shape[1:] != shape[1:] or got[1].shape[0] < shape[0]:
            cap = (max(shape[0], rows_hint),) + tuple(shape[1:])
            buf = _cuda.pinned_empty(cap, np.dtype(dtype).name)
            got = self.buffers[key] = (buf, np.asarray(buf))
        return got[0][:shape[0]], got[1][:shape[0]]

    def send(self, pinned):
        # copy=True: on the CPU the batch must not be the ring's buffer itself
        with self.side:
            return _core.asarray(pinned, device=self.device, copy=True)

    def end(self, slot):
        ev = self.done[slot] = self.side.record()
        return ev

    def finish(self, ev):
        _cuda.current_stream(self.device).wait_event(ev)


# ------------------------------------------------------------------ the loader

class DataLoader:
    """Batches of a dataset, as PyTorch's ``DataLoader``.

    ``DataLoader(dataset, batch_size=1, shuffle=False, sampler=None,
    num_workers=0, collate_fn=None, pin_memory=None, drop_last=False,
    generator=None, *, device=None)``

    - ``shuffle``: a new order every epoch, drawn from ``generator`` (a
      ``ck.random.Generator``, an int seed or a NumPy Generator; cudakit's
      global generator when None); ``sampler``: an iterable of indices
      giving the order instead;
    - ``drop_last``: leave out the last batch when it is smaller;
    - ``collate_fn``: samples into a batch (``default_collate``);
    - ``device``: where the batches go (cudakit's addition).  Host data
      (NumPy arrays, cudakit CPU arrays, a dataset's items) bound for a GPU
      is gathered into pinned buffers and copied on a side stream one batch
      ahead; cudakit arrays already on the device are gathered there.
      Without it, batches stay where the data is (NumPy data becomes
      cudakit CPU arrays);
    - ``pin_memory``: host batches in page-locked memory (their own
      buffers), so that the user's own ``.to(device)`` does not wait for
      the GPU; None (the default) pins them when a GPU is usable (the seed's
      loop, ``data.to(device)`` a batch, then never waits); False never;
    - ``num_workers``: accepted; batches are made in this process (the
      batches are the same), with a warning when it is not 0.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=None, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, *, prefetch_factor=None, persistent_workers=False, device=None):
        if batch_size is None or isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
                or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size!r}")
        if batch_sampler is not None:
            raise NotImplementedError("DataLoader(batch_sampler=...): give batch_size and sampler or shuffle")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if num_workers:
            warnings.warn(f"DataLoader(num_workers={num_workers}): cudakit makes the batches in this process "
                          f"(the same batches); on-device gathers and the side stream's copies are what overlap "
                          f"with training", UserWarning, stacklevel=2)
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        # host batches go to a GPU next, most likely: pinned, their copy does not wait
        self._pin = bool(pin_memory) if pin_memory is not None else bool(_cuda.is_available())
        self.drop_last = bool(drop_last)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._gen = _resolve_generator(generator)
        self.device = None if device is None else _core._device_check(device)
        self._host_arrays = {}     # id of a NumPy array of the dataset -> its cudakit CPU array (no copy)
        self._stager = None

    def _num_samples(self):
        return len(self.sampler) if self.sampler is not None else len(self.dataset)

    def __len__(self):
        n = self._num_samples()
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _stager_for(self):
        if self._stager is None:
            self._stager = _Stager(self.device)
        return self._stager

    def __iter__(self):
        if isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
            return _TensorIter(self)
        return _ItemIter(self)

    def __repr__(self):
        return (f"<cudakit DataLoader: {len(self)} batches of {self.batch_size}"
                f"{', shuffled' if self.shuffle else ''}{f' to {self.device}' if self.device else ''}>")


class _Iter:
    """One epoch: batch k+1 is started before batch k is handed out when
    batches are staged (their copies then overlap the work on batch k)."""

    def __init__(self, loader):
        self.loader = loader
        self.n = loader._num_samples()
        self.bs = loader.batch_size
        self.nb = len(loader)
        self.k = 0
        self.pending = None
        self.prefetch = False
        self.keep = []          # the last pinned batches handed out (see _pinned_fresh)

    def __iter__(self):
        return self

    def __len__(self):
        return self.nb

    def _order(self):
        """The epoch's order as a NumPy int64 array, or None for 0, 1, 2, ..."""
        lo = self.loader
        if lo.sampler is not None:
            return np.fromiter((int(i) for i in lo.sampler), dtype=np.int64)
        if lo.shuffle:
            return _host_permutation(lo._gen, self.n)
        return None

    def __next__(self):
        if self.pending is None:
            if self.k >= self.nb:
                raise StopIteration
            self.pending = self._make(self.k)
            self.k += 1
        batch, ev = self.pending
        self.pending = None
        if self.prefetch and self.k < self.nb:
            self.pending = self._make(self.k)
            self.k += 1
        if ev is not None:
            self.loader._stager.finish(ev)
        return batch

    def _bounds(self, k):
        lo = k * self.bs
        return lo, min(lo + self.bs, self.n)

    def _pinned_fresh(self, shape, dtype):
        """A new pinned host array (dtype: a NumPy dtype or its name) for a
        batch handed out as it is (pin_memory without device).  The last
        few are kept referenced here: the core's pinned pool reuses a block
        as soon as it is released, and the user's asynchronous copy from it
        may still be in flight."""
        name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
        try:
            a = _cuda.pinned_empty(shape, name)
        except (MemoryError, _cuda.CUDAError):
            if self.loader.pin_memory:
                raise
            a = _core.empty(shape, dtype=name, device="cpu")   # pinning was only a help
        return a, np.asarray(a)


class _TensorIter(_Iter):
    """A TensorDataset: one gather an array for a batch, where the array is."""

    def __init__(self, loader):
        super().__init__(loader)
        target = loader.device
        self.plan = []              # per array: (how, source)
        for t in loader.dataset.tensors:
            if isinstance(t, _core.ndarray):
                dev = t.device
                if target is None or _same(dev, target):
                    if loader._pin and dev.type == "cpu":
                        self.plan.append(("pin", np.asarray(t)))
                    else:
                        self.plan.append(("device", t))
                elif dev.type == "cpu":
                    self.plan.append(("stage", np.asarray(t)))
                else:
                    self.plan.append(("move", t))
            else:
                h = np.asarray(t)
                if target is not None:
                    self.plan.append(("stage", h))
                elif loader._pin and target is None:
                    self.plan.append(("pin", h))
                else:
                    self.plan.append(("device", self._as_cpu(h)))
        self.prefetch = any(how == "stage" for how, _ in self.plan)
        self.names = [t.dtype.name for _, t in self.plan]    # looked up once, not a batch
        # the epoch's order, drawn once (the same on every device for a
        # seed), where the first on-device array is, then moved as needed
        self.shuffled = loader.sampler is not None or loader.shuffle
        self.order_host = None
        self.order_dev = {}             # (device type, index) -> the order there
        if loader.sampler is not None:
            self.order_host = self._order()
        elif loader.shuffle:
            on = [t.device for how, t in self.plan if how in ("device", "move")]
            first = on[0] if on else _core._device_check("cpu")
            p = _permutation(loader._gen, self.n, first)
            self.order_dev[(first.type, first.index or 0)] = p
            if first.type == "cpu":
                self.order_host = np.asarray(p)

    def _as_cpu(self, h):
        cache = self.loader._host_arrays
        got = cache.get(id(h))
        if got is None or got[0] is not h:
            got = cache[id(h)] = (h, _core.asarray(h))     # shares h's memory
        return got[1]

    def _order_on(self, device):
        key = (device.type, device.index or 0)
        got = self.order_dev.get(key)
        if got is None:
            src = next(iter(self.order_dev.values())) if self.order_dev else self.order_host
            got = self.order_dev[key] = _core.asarray(src, device=device)
        return got

    def _host_order(self):
        if self.order_host is None:
            self.order_host = np.asarray(_core.asarray(next(iter(self.order_dev.values())), device="cpu"))
        return self.order_host

    def _make(self, k):
        lo, hi = self._bounds(k)
        m = hi - lo
        shuffled = self.shuffled
        stager = None
        slot = k % _PINNED_SLOTS
        out = []
        for leaf, (how, t) in enumerate(self.plan):
            if how in ("device", "move"):
                if shuffled:
                    b = _core.take(t, self._order_on(t.device)[lo:hi], axis=0, mode="clip")
                else:
                    b = t[lo:hi].copy()
                out.append(b if how == "device" else _core.asarray(b, device=self.loader.device))
                continue
            if how == "stage":
                if stager is None:
                    stager = self.loader._stager_for()
                    stager.begin(slot)
                dst_ck, dst = stager.buffer(slot, leaf, (m,) + t.shape[1:], t.dtype, self.bs)
            else:   # pin
                dst_ck, dst = self._pinned_fresh((m,) + t.shape[1:], self.names[leaf])
            if shuffled:
                # mode="clip" (the order is in range): "raise" gathers into a
                # temporary first and copies that into out (a page-faulting
                # 200 KB malloc a batch: 23 us of the seed loop's 240)
                np.take(t, self._host_order()[lo:hi], axis=0, out=dst, mode="clip")
            else:
                np.copyto(dst, t[lo:hi])
            out.append(stager.send(dst_ck) if how == "stage" else dst_ck)
        if any(how == "pin" for how, _ in self.plan):
            self.keep = (self.keep + [out])[-2:]
        return out, (stager.end(slot) if stager is not None else None)


class _ItemIter(_Iter):
    """Any dataset: its items, collated, then sent where they go."""

    def __init__(self, loader):
        super().__init__(loader)
        self.order = self._order()
        self.collate = _collate_host if loader.collate_fn is None else loader.collate_fn
        self.prefetch = loader.device is not None

    def _make(self, k):
        lo, hi = self._bounds(k)
        ds = self.loader.dataset
        idx = range(lo, hi) if self.order is None else self.order[lo:hi].tolist()
        batch = self.collate([ds[i] for i in idx])
        target = self.loader.device
        pin = self.loader._pin and target is None
        stager = self.loader._stager_for() if target is not None else None
        slot = k % _PINNED_SLOTS
        counter = [0]
        if stager is not None:
            stager.begin(slot)

        def place(a):
            leaf = counter[0]
            counter[0] += 1
            if isinstance(a, _core.ndarray):
                if target is None or _same(a.device, target):
                    return a
                if a.device.type != "cpu" or a.ndim == 0:
                    return _core.asarray(a, device=target)
                a = np.asarray(a)
            if stager is not None and a.ndim:
                dst_ck, dst = stager.buffer(slot, leaf, a.shape, a.dtype, a.shape[0])
                np.copyto(dst, a)
                return stager.send(dst_ck)
            if pin and a.ndim:
                dst_ck, dst = self._pinned_fresh(a.shape, a.dtype)
                np.copyto(dst, a)
                return dst_ck
            return _core.asarray(a, device=target)

        batch = _map_leaves(batch, place)
        if pin:
            self.keep = (self.keep + [batch])[-2:]
        return batch, (stager.end(slot) if stager is not None else None)
