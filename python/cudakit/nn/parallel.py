"""ck.nn.parallel: data-parallel training over cudakit.distributed, PyTorch's names.

    dist.init_process_group()                       # one process a GPU (or CPU rank)
    model = ck.nn.parallel.DistributedDataParallel(model)
    opt = ck.optim.Adam(model.parameters())
    for x, y in batches_of_this_rank:
        loss = loss_fn(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()   # the gradients are averaged first

At wrap, rank 0's parameters and buffers are broadcast to every rank (one
flat bucket).  After a forward in training mode with grad on, the next
``step()`` of any optimizer first all-reduces (averages) the gradients of
every parameter in one flat bucket a dtype, once: the arrays' ``grad``
become views of the bucket.  cudakit's autograd has no per-parameter hooks
(PyTorch's DDP overlaps the reduction with the backward pass through
them), so the reduction runs through the optimizers' global step pre-hook
(``cudakit.optim.optimizer.register_optimizer_step_pre_hook``); call
``model.sync_gradients()`` yourself to read the averaged gradients before
the step (to clip them, say), and ``with model.no_sync():`` to accumulate
gradients locally over several backward passes.
"""
import contextlib
import weakref

from .. import _core
from .module import Module

__all__ = ["DistributedDataParallel", "DataParallel"]

_pending = weakref.WeakSet()
_hook = None


def _sync_pending(optimizer, args, kwargs):
    for m in list(_pending):
        m.sync_gradients()


def _comm_stream(comm):
    from ..cuda import _stream_handle
    return _stream_handle(None, comm.device)


class DistributedDataParallel(Module):
    """Wraps module for data-parallel training over the default process group
    (or ``communicator``, a ``cudakit.cuda.nccl.NcclCommunicator``)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, gradient_as_bucket_view=True,
                 communicator=None):
        super().__init__()
        global _hook
        self.module = module
        if communicator is not None:
            comm = getattr(communicator, "_c", communicator)
        else:
            from .. import distributed
            comm = distributed._communicator()
        object.__setattr__(self, "_comm", comm)
        object.__setattr__(self, "_sync_enabled", True)
        object.__setattr__(self, "_params", [p for p in module.parameters() if p.requires_grad])
        self._broadcast_from_root(list(module.parameters()) + (list(module.buffers()) if broadcast_buffers else []))
        if _hook is None:
            from ..optim.optimizer import register_optimizer_step_pre_hook
            _hook = register_optimizer_step_pre_hook(_sync_pending)

    # ------------------------------------------------------------- buckets
    @staticmethod
    def _by_dtype(arrays):
        groups = {}
        for a in arrays:
            groups.setdefault(str(a.dtype), []).append(a)
        return groups.values()

    def _broadcast_from_root(self, arrays):
        import cudakit as ck
        comm = self._comm
        with ck.no_grad():
            for group in self._by_dtype([a for a in arrays if a is not None and a.size]):
                flat = ck.concatenate([a.detach().reshape(-1) for a in group])
                comm.broadcast(flat if comm.rank == 0 else None, flat, 0, _comm_stream(comm))
                if comm.rank != 0:
                    o = 0
                    for a in group:
                        a[...] = flat[o:o + a.size].reshape(a.shape)
                        o += a.size

    def sync_gradients(self):
        """Average the gradients over the ranks now (one all-reduce a dtype);
        a parameter without a gradient counts as zeros.  The next optimizer
        step does it when you have not."""
        import cudakit as ck
        _pending.discard(self)
        comm = self._comm
        with ck.no_grad():
            for group in self._by_dtype(self._params):
                grads = [p.grad if p.grad is not None else ck.zeros(p.shape, dtype=p.dtype, device=p.device)
                         for p in group]
                flat = ck.concatenate([g.reshape(-1) for g in grads])
                comm.all_reduce(flat, flat, 4, _comm_stream(comm))      # 4: avg
                o = 0
                for p in group:
                    p.grad = flat[o:o + p.size].reshape(p.shape)
                    o += p.size

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally; the first
        step after the block (following a forward outside it) averages them."""
        prev = self._sync_enabled
        object.__setattr__(self, "_sync_enabled", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync_enabled", prev)

    def forward(self, *args, **kwargs):
        if self.training and self._sync_enabled and _core.is_grad_enabled():
            _pending.add(self)
        return self.module(*args, **kwargs)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class DataParallel(Module):
    """PyTorch's single-process DataParallel: here the module itself (one
    device); use DistributedDataParallel, one process a GPU, to train on several."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
