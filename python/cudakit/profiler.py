"""cudakit.profiler: what ran, where and for how long, as PyTorch's profiler says it.

    >>> import cudakit as ck
    >>> x = ck.arange(1_000_000, dtype=ck.float32)
    >>> with ck.profiler.profile() as prof:
    ...     with ck.profiler.record_function("step"):
    ...         y = (x + 1).sum()
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    >>> prof.export_chrome_trace("trace.json")      # open in Perfetto or chrome://tracing

The recording is the core's (include/cudakit_profiler.h): every op (the one
backend call it makes: ``add``, ``sum``, ``gather``, ``matmul``...), every
kernel, built-in or user (RawKernel, ElementwiseKernel, ``@cuda.jit``), every
copy between host and device and every ``record_function`` range, with its
device, the shapes and dtypes it iterates (contiguous dimensions merged, as the
kernel sees them), grid and block for a kernel, host times and, on a GPU,
device times from a pair of CUDA events around it.  On the CPU there are host
times only.  Profiling off costs the ops nothing (their backend table is the
plain one again).  ``profile(nvtx=True)`` also makes every op and range an NVTX
range, so Nsight Systems shows them by name (see cudakit.cuda.nvtx).

Leaving the ``with`` block waits for the devices that ran recorded work (the
device times are read then); it is an explicit synchronisation, not one the
sync debug mode reports.  docs/profiling.md says more.
"""
import functools as _functools
import threading as _threading

from . import _core

__all__ = ["profile", "record_function", "ProfilerActivity", "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity:
    """PyTorch's names for what to record; cudakit records every device, so
    these are accepted and change nothing."""
    CPU = "cpu"
    CUDA = "cuda"


_owner = None            # the profile whose records the core holds
_owner_lock = _threading.Lock()


def _fmt_us(us):
    if us is None:
        return ""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEvent:
    """One record: ``name``, ``kind`` ("op", "kernel", "copy", "range"),
    ``device``, ``thread``, ``parent`` (index, or None), host times in
    microseconds since the profile began (``time_range`` start and end,
    ``cpu_time``), ``device_time`` and ``device_start`` (None on the CPU),
    ``grid``/``block``/``shared_memory`` for a kernel, ``bytes`` for a copy,
    ``input_shapes`` and ``dtypes`` as text."""

    __slots__ = ("id", "name", "kind", "device", "thread", "depth", "parent", "stream", "cpu_start", "cpu_end",
                 "device_start", "device_time", "grid", "block", "shared_memory", "bytes", "input_shapes",
                 "dtypes")

    def __init__(self, i, rec):
        (self.kind, self.name, self.device, self.thread, self.depth, parent, self.stream, self.cpu_start,
         self.cpu_end, self.device_start, self.device_time, self.grid, self.block, self.shared_memory,
         self.bytes, self.input_shapes, self.dtypes) = rec
        self.id = i
        self.parent = None if parent < 0 else parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time(self):
        return max(self.cpu_end - self.cpu_start, 0.0)

    @property
    def time_range(self):
        return (self.cpu_start, self.cpu_end)

    cuda_time = property(lambda self: self.device_time)

    def __repr__(self):
        dev = "" if self.device_time is None else f", device_time={self.device_time:.3f}us"
        extra = f", grid={self.grid}, block={self.block}" if self.kind == "kernel" else ""
        return (f"<FunctionEvent {self.kind} {self.name!r} on {self.device}: cpu_time={self.cpu_time:.3f}us{dev}"
                f"{extra}, shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The records of one name (and shapes, with group_by_input_shape):
    ``count``, ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``
    (the mean), ``device_time_total``, ``self_device_time_total`` and
    ``device_time`` (None without device times; ``cuda_time*`` are the same),
    ``bytes`` for copies."""

    __slots__ = ("key", "kind", "device", "input_shapes", "count", "cpu_time_total", "self_cpu_time_total",
                 "device_time_total", "self_device_time_total", "bytes")

    def __init__(self, row):
        (self.key, self.kind, self.device, self.input_shapes, self.count, self.cpu_time_total,
         self.self_cpu_time_total, self.device_time_total, self.self_device_time_total, self.bytes) = row

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return None if self.device_time_total is None else self.device_time_total / self.count

    cuda_time = property(lambda self: self.device_time)
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self):
        dev = "" if self.device_time_total is None else f", device_time_total={self.device_time_total:.3f}us"
        return (f"<FunctionEventAvg {self.key!r} ({self.kind}): count={self.count}, "
                f"cpu_time_total={self.cpu_time_total:.3f}us{dev}>")


_SORT_KEYS = {
    "cpu_time_total": lambda e: e.cpu_time_total,
    "self_cpu_time_total": lambda e: e.self_cpu_time_total,
    "cpu_time": lambda e: e.cpu_time,
    "device_time_total": lambda e: e.device_time_total or 0.0,
    "self_device_time_total": lambda e: e.self_device_time_total or 0.0,
    "device_time": lambda e: e.device_time or 0.0,
    "count": lambda e: e.count,
}
for _k in ("device_time_total", "self_device_time_total", "device_time"):
    _SORT_KEYS[_k.replace("device", "cuda")] = _SORT_KEYS[_k]


class EventList(list):
    """A list of FunctionEvents or FunctionEventAvgs, with PyTorch's table()."""

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None, top_level_events_only=False):
        """The events as a text table, PyTorch's columns: self and total
        host ("CPU") time with their shares, self and total device ("CUDA")
        time where any ran on a GPU, and the number of calls.  sort_by names
        a column (``"cpu_time_total"``, ``"self_cpu_time_total"``,
        ``"cuda_time_total"`` or ``"device_time_total"``, ``"count"``...),
        largest first; row_limit caps the rows (-1: all)."""
        rows = [e if isinstance(e, FunctionEventAvg) else _avg_of(e) for e in self]
        if top_level_events_only:
            rows = [r for r in rows if r.kind != "kernel"]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"table(sort_by={sort_by!r}): sort_by must be one of {sorted(_SORT_KEYS)}")
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if row_limit is not None and row_limit >= 0:
            shown = rows[:row_limit]
        else:
            shown = rows
        has_dev = any(r.device_time_total is not None for r in rows)
        has_shapes = any(r.input_shapes for r in rows)
        self_cpu_sum = sum(r.self_cpu_time_total for r in rows) or 1.0
        self_dev_sum = sum(r.self_device_time_total or 0.0 for r in rows) or 1.0
        cols = [("Name", max(4, min(max_name_column_width, max((len(r.key) for r in shown), default=4))))]
        cols += [(h, 12) for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
        if has_dev:
            cols += [(h, 13) for h in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg")]
        cols.append(("# of Calls", 10))
        if has_shapes:
            cols.append(("Input Shapes", max(12, min(60, max((len(r.input_shapes) for r in shown), default=12)))))
        line = "  ".join("-" * w for _, w in cols)
        out = []
        if header:
            out.append(header)
        out.append(line)
        out.append("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(cols)))
        out.append(line)
        for r in shown:
            name = r.key if len(r.key) <= cols[0][1] else r.key[:cols[0][1] - 3] + "..."
            cells = [name.ljust(cols[0][1]),
                     f"{100 * r.self_cpu_time_total / self_cpu_sum:.2f}%", _fmt_us(r.self_cpu_time_total),
                     f"{100 * r.cpu_time_total / self_cpu_sum:.2f}%", _fmt_us(r.cpu_time_total),
                     _fmt_us(r.cpu_time)]
            if has_dev:
                d = r.device_time_total
                cells += [_fmt_us(r.self_device_time_total),
                          "" if d is None else f"{100 * (r.self_device_time_total or 0.0) / self_dev_sum:.2f}%",
                          _fmt_us(d), _fmt_us(r.device_time)]
            cells.append(str(r.count))
            if has_shapes:
                cells.append(r.input_shapes)
            out.append("  ".join(c if i == 0 else c.rjust(cols[i][1]) for i, c in enumerate(cells)))
        out.append(line)
        out.append(f"Self CPU time total: {_fmt_us(sum(r.self_cpu_time_total for r in rows))}")
        if has_dev:
            out.append(f"Self CUDA time total: {_fmt_us(sum(r.self_device_time_total or 0.0 for r in rows))}")
        return "\n".join(out) + "\n"

    def __str__(self):
        return self.table()


def _avg_of(ev):
    self_cpu = ev.cpu_time   # a lone event: its children are not in the list
    return FunctionEventAvg((ev.name, ev.kind, ev.device, ev.input_shapes, 1, ev.cpu_time, self_cpu,
                             ev.device_time, ev.device_time, ev.bytes))


class profile:
    """Record what runs inside the ``with`` block (PyTorch's
    ``torch.profiler.profile``): ``key_averages()``, ``events()``,
    ``export_chrome_trace(path)``.  ``nvtx=True`` also emits each op and
    range as an NVTX range.  ``activities`` and ``record_shapes`` are
    accepted for PyTorch's code; every device and the shapes are always
    recorded.  ``enabled=False`` records nothing."""

    def __init__(self, activities=None, *, record_shapes=True, nvtx=False, enabled=True, profile_memory=False,
                 with_stack=False, **unsupported):
        if unsupported:
            raise NotImplementedError(f"profile({', '.join(sorted(unsupported))}=...) is not supported by cudakit")
        if profile_memory:
            raise NotImplementedError("profile(profile_memory=True): cudakit.cuda.memory_stats() gives the pool's "
                                      "figures")
        if with_stack:
            raise NotImplementedError("profile(with_stack=True): the records carry no Python stacks")
        self.enabled = bool(enabled)
        self.nvtx = bool(nvtx)
        self._events = None
        self._averages = {}
        self._running = False

    def start(self):
        """Start recording (what entering the with block does); returns the profile."""
        global _owner
        if not self.enabled:
            return self
        with _owner_lock:
            _core._profiler_start(self.nvtx)
            _owner = self
        self._running = True
        self._events = None
        self._averages = {}
        return self

    def stop(self):
        """Stop recording (what leaving the with block does): waits for the devices and gathers the records."""
        if not self._running:
            return
        self._running = False
        _core._profiler_stop()
        self._events = EventList(FunctionEvent(i, r) for i, r in enumerate(_core._profiler_records()))
        for by_shapes in (False, True):
            self._averages[by_shapes] = EventList(FunctionEventAvg(r) for r in _core._profiler_averages(by_shapes))

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def _check(self, what):
        if self._running:
            raise RuntimeError(f"{what}: the profile is still on (call it after the with block)")
        if self._events is None:
            raise RuntimeError(f"{what}: this profile has recorded nothing (it was never started, or enabled=False)")

    def events(self):
        """Every record, in the order they began (EventList of FunctionEvent)."""
        self._check("events()")
        return self._events

    def key_averages(self, group_by_input_shape=False):
        """The records grouped by name (and by shapes with
        group_by_input_shape), first-seen order; ``.table(...)`` prints them."""
        self._check("key_averages()")
        return EventList(self._averages[bool(group_by_input_shape)])

    def table(self, **kw):
        """key_averages().table(**kw): the records grouped by name, as a printable table."""
        return self.key_averages().table(**kw)

    def export_chrome_trace(self, path):
        """Write the records as a Chrome trace (JSON) that Perfetto
        (ui.perfetto.dev) and chrome://tracing open: a row per host thread,
        one per GPU stream, arrows from each call to its device span."""
        self._check("export_chrome_trace()")
        if _owner is not self:
            raise RuntimeError("export_chrome_trace(): a later profile has replaced this one's records in the core; "
                               "export a profile before starting the next")
        _core._profiler_export_chrome_trace(path)

    def __repr__(self):
        state = "on" if self._running else ("stopped" if self._events is not None else "not started")
        return f"<cudakit.profiler.profile {state}>"


class record_function:
    """A user range, PyTorch's ``record_function``: ``with
    record_function("step"):`` or as a decorator.  While profiling it is a
    record (the ops inside are its children); under ``profile(nvtx=True)``
    an NVTX range too; otherwise it does nothing."""

    def __init__(self, name, args=None):
        self.name = str(name)
        self.args = args

    def __enter__(self):
        _core._profiler_range_push(self.name)
        return self

    def __exit__(self, *exc):
        _core._profiler_range_pop()
        return False

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapped(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)
        return wrapped
