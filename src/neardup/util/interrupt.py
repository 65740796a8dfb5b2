"""Ctrl-C that is never lost.

Python turns SIGINT into a KeyboardInterrupt at the next bytecode; when that happens inside a
callback from compiled code (numba compiling a kernel calls back into Python through ctypes)
the exception is printed as "ignored" and the run goes on as if nothing was asked. The command
line installs :func:`install`: the interrupt is also remembered, and :func:`check` — called
where a run can stop cleanly (each batch, each stage, before an output directory is swapped
in) — raises it again.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_requested = threading.Event()


def install() -> None:
    """Remember every SIGINT (and raise KeyboardInterrupt as Python's own handler does)."""
    signal.signal(signal.SIGINT, _on_sigint)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _requested.set()
    raise KeyboardInterrupt


def check() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed, even if its first raise was swallowed."""
    if _requested.is_set():
        raise KeyboardInterrupt
