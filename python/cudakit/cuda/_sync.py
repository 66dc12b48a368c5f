"""The synchronisation debug mode, as ``torch.cuda.set_sync_debug_mode``."""
from .. import _core

_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode):
    """Report the points where the host waits for a GPU without being asked
    to: ``"default"`` (0) says nothing, ``"warn"`` (1) warns (UserWarning,
    at the line that caused it), ``"error"`` (2) raises RuntimeError there.
    The message names the reason (a copy to the host for asnumpy, item,
    printing, a data-dependent size: nonzero, a boolean mask...) and the op
    it happened in.  Waits asked for (synchronize() of a device, stream or
    event) are never reported; nor is the CPU, whose work is done when each
    call returns.  docs/profiling.md lists the ops that synchronise."""
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError(f"invalid value of debug_mode {debug_mode!r}: expected one of "
                               f"{', '.join(map(repr, _MODES))} or 0, 1, 2")
        debug_mode = _MODES[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int) or debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode {debug_mode!r}: expected one of "
                           f"{', '.join(map(repr, _MODES))} or 0, 1, 2")
    _core._set_sync_debug_mode(debug_mode)


def get_sync_debug_mode():
    """The mode as a number: 0 default, 1 warn, 2 error."""
    return _core._get_sync_debug_mode()
