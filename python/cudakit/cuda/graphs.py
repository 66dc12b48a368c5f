"""Graphs, as PyTorch spells them: capture a sequence of ops and kernels once,
replay it with one launch.

    >>> g = cuda.CUDAGraph()
    >>> x = ck.zeros(1000, dtype=ck.float32)          # static input
    >>> with cuda.graph(g):
    ...     y = (x * 2 + 1).sum()                      # captured, not run
    >>> x[...] = new_values                            # update the input in place
    >>> g.replay()                                     # y holds the result

On a GPU the capture is the driver's stream capture (one ``cuGraphLaunch``
a replay); on the CPU the backend records each kernel call and a replay runs
the records, so the same code runs everywhere.  Memory allocated during the
capture (``y`` and the temporaries) comes from a pool private to the graph
(or shared through ``pool=``), stays valid across replays and is freed with
the graph.  What waits for the device or reads its data on the host
(``synchronize``, ``asnumpy``, ``item``, boolean masks, ``nonzero``) raises
a ``RuntimeError`` during the capture.  docs/graphs.md says more.
"""
import gc as _gc

from .. import _core

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing"]

_MODES = ("global", "thread_local", "relaxed")


class _PoolHandle:
    """What ``graph_pool_handle()`` returns: the pool of the first graph
    captured with it, which later graphs given it share."""

    __slots__ = ("core",)

    def __init__(self):
        self.core = None

    def __repr__(self):
        return f"<cudakit graph pool {'unused' if self.core is None else hex(id(self.core))}>"


def graph_pool_handle():
    """A memory pool handle to share between graphs (``pool=``), as
    ``torch.cuda.graph_pool_handle()``.  Graphs sharing a pool must be
    replayed in the order they were captured."""
    return _PoolHandle()


def _stream_handle(stream):
    if stream is None:
        return None
    h = getattr(stream, "handle", stream)
    return h or None


class CUDAGraph:
    """A captured graph (``torch.cuda.CUDAGraph``): ``capture_begin()`` /
    ``capture_end()`` (or ``with cudakit.cuda.graph(g):``), ``replay()``,
    ``reset()``, ``pool()``.  Works on every device: a GPU's driver graph, or
    the CPU's recording."""

    def __init__(self, keep_graph=False, *, device=None):
        self._core = None
        self._pool = None
        self._device = device

    def capture_begin(self, pool=None, capture_error_mode="global", *, stream=None):
        """Begin capturing this thread's work on the graph's device (the
        ``device`` given, else ``stream``'s, else where new arrays go), on
        ``stream`` or a stream of the graph's own, which is the current
        stream until ``capture_end``.  The device is synchronised first."""
        if capture_error_mode not in _MODES:
            raise ValueError(f"capture_error_mode must be one of {_MODES}, not {capture_error_mode!r}")
        if self._core is None:
            device = self._device
            if device is None and stream is not None:
                device = getattr(stream, "device", None)
            self._core = _core.Graph(device)
            # replay() straight to C: an instance attribute shadows the method,
            # which only says what is missing before the first capture
            self.replay = self._core.replay
        core_pool = None
        if isinstance(pool, _PoolHandle):
            core_pool = pool.core
        elif isinstance(pool, CUDAGraph):
            core_pool = pool._core
        elif pool is not None and not isinstance(pool, _core.Graph):
            raise TypeError(f"pool must come from graph_pool_handle() or CUDAGraph.pool(), not {type(pool).__name__}")
        else:
            core_pool = pool
        self._core.capture_begin(_stream_handle(stream), core_pool)
        if isinstance(pool, _PoolHandle) and pool.core is None:
            pool.core = self._core
        self._pool = pool

    def capture_end(self):
        """End the capture: the graph is ready to replay."""
        self._need().capture_end()

    def replay(self):
        """Run the captured work once on the current stream (asynchronous on a
        GPU, done when it returns on the CPU)."""
        self._need().replay()

    def reset(self):
        """Drop the capture and give its memory back (after its replays)."""
        if self._core is not None:
            self._core.reset()

    def pool(self):
        """The graph's memory pool, to share with graphs captured later
        (``pool=g.pool()``)."""
        return self._need()

    def enable_debug_mode(self):
        """PyTorch's graph dump switch: NotImplementedError (cudakit keeps no graph for dumping)."""
        raise NotImplementedError("CUDAGraph.enable_debug_mode: cudakit keeps no graph for dumping")

    def debug_dump(self, debug_path):
        """PyTorch's graph dump: NotImplementedError (cudakit keeps no graph for dumping)."""
        raise NotImplementedError("CUDAGraph.debug_dump: cudakit keeps no graph for dumping")

    @property
    def node_count(self):
        """Nodes of the captured graph: kernels, copies, fills (-1 before a capture)."""
        return -1 if self._core is None else self._core.node_count

    @property
    def pool_bytes(self):
        """Bytes the graph's memory pool holds."""
        return 0 if self._core is None else self._core.pool_bytes

    @property
    def device(self):
        return None if self._core is None else self._core.device

    def _need(self):
        if self._core is None:
            raise RuntimeError("the graph has not been captured (capture_begin() first)")
        return self._core

    def __repr__(self):
        return f"<cudakit.cuda.CUDAGraph on {self.device}, {self.node_count} nodes>"


class graph:
    """``with cudakit.cuda.graph(g):`` captures the block's work into g (a
    CUDAGraph; a new one on ``device`` when omitted, which ``as`` gives), as
    ``torch.cuda.graph(cuda_graph, pool=None, stream=None,
    capture_error_mode='global')``.  The device is g's: where new arrays go
    unless ``CUDAGraph(device=...)`` or the stream says otherwise."""

    def __init__(self, cuda_graph=None, pool=None, stream=None, capture_error_mode="global", *, device=None):
        self.cuda_graph = CUDAGraph(device=device) if cuda_graph is None else cuda_graph
        self.pool = pool
        self.stream = stream
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        # arrays waiting for the collector would otherwise be freed into the capture's pool
        _gc.collect()
        self.cuda_graph.capture_begin(self.pool, self.capture_error_mode, stream=self.stream)
        return self.cuda_graph

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False


def is_current_stream_capturing(device=None):
    """Whether this thread is capturing a graph for the device (the current one)."""
    from . import _device
    return _core._graph_capturing(_device(device))
