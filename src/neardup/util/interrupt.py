"""Ctrl-C that is never lost.

Python turns SIGINT into a KeyboardInterrupt at the next bytecode; when that happens inside a
callback from compiled code (numba compiling a kernel calls back into Python through ctypes)
the exception is printed as "ignored" and the run goes on as if nothing was asked. The command
line installs :func:`install`: the interrupt is also remembered, and :func:`check` — called
where a run can stop cleanly (each batch, each stage, before an output directory is swapped
in) — raises it again. Inside a finalizer (``__del__``), where the exception would only be
printed, it is not raised at all: the next :func:`check` raises it. Once Ctrl-C was pressed,
the errors of finalizers are no longer printed: an object the interrupt left half-built
(llvmlite's, mid-compilation) fails in its ``__del__``, and that trace is not news to the user.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

_requested = threading.Event()


def install() -> None:
    """Remember every SIGINT (and raise KeyboardInterrupt as Python's own handler does)."""
    signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _requested.set()
    sys.unraisablehook = _unraisable_after_interrupt
    if _in_finalizer(frame):
        return  # raised there, it would be printed as "ignored" and dropped: check() raises it
    raise KeyboardInterrupt


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an object's ``__del__`` (llvmlite frees compiled code
    that way), where an exception is printed as "ignored" and dropped."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _unraisable_after_interrupt(unraisable: object) -> None:
    """Drop a finalizer's error once the run is being interrupted (see the module's note)."""


def check() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed, even if its first raise was swallowed."""
    if _requested.is_set():
        raise KeyboardInterrupt
