"""Exceptions raised by neardup.

Every error a user can cause derives from :class:`NearDupError`, so callers (and the CLI)
can catch one type and print a clear message instead of a traceback::

    NearDupError
    ├── ConfigError           a setting has an invalid value (names the setting and value)
    ├── InputError            a text or file cannot be used (names the file / line)
    │   ├── EmptyTextError    nothing is left of a text after canonicalization
    │   └── DamagedInputError a compressed input is truncated or corrupt (never skipped)
    ├── OutputError           an output cannot be written (a full disk), naming the path
    ├── MissingDependencyError  an optional extra is needed: "pip install neardup[x]"
    └── SignatureError        signatures of different configs or formats were mixed

    WeakSignatureWarning (a UserWarning): a signature was made but its answer is weak,
    e.g. a mod-m sample of a short text kept nothing, or SimHash of a text under ~500 chars.
    Methods issue it by :func:`warn_weak`; :func:`weak_notes` collects those of one thread.
"""

from __future__ import annotations

import contextlib
import re
import threading
import warnings
from collections.abc import Iterator

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def printable(message: str) -> str:
    """``message`` with its control characters escaped (``\\x1b``, ``\\n``): a terminal
    shows the bytes of a bad file or value instead of obeying them, on one line."""
    return _CONTROL.sub(lambda found: ascii(found.group())[1:-1], message)


class NearDupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ConfigError(NearDupError, ValueError):
    """A configuration value is invalid."""


class InputError(NearDupError, ValueError):
    """An input text, file or record cannot be used."""


class EmptyTextError(InputError):
    """A text has no tokens left after canonicalization."""


class DamagedInputError(InputError):
    """A compressed input is cut short or corrupt: not a bad record, since nothing after the
    damage can be read; it stops the run even when bad records are skipped."""


class OutputError(NearDupError):
    """An output or a collection cannot be written (no space left on the disk); what was
    written or stored before is kept."""


class MissingDependencyError(NearDupError, ImportError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(f"{feature} needs the package {package!r}: pip install 'neardup[{extra}]'")
        self.package = package
        self.extra = extra


class SignatureError(NearDupError, ValueError):
    """Signatures made with different configs or format versions were compared or mixed."""


class WeakSignatureWarning(UserWarning):
    """A signature could be made, but the user should know its answer is weak."""


_notes = threading.local()


def warn_weak(message: str) -> None:
    """A WeakSignatureWarning — or, inside :func:`weak_notes` on this thread, a note of it."""
    notes: list[str] | None = getattr(_notes, "notes", None)
    if notes is None:
        warnings.warn(message, WeakSignatureWarning, stacklevel=4)
    else:
        notes.append(message)


@contextlib.contextmanager
def weak_notes() -> Iterator[list[str]]:
    """Collect the weak-signature messages of this thread's block instead of warning.

    ``warnings.catch_warnings`` changes process-wide state, so batches sketched on
    several threads at once could lose or mix their warnings; this is per thread."""
    previous = getattr(_notes, "notes", None)
    _notes.notes = []
    try:
        yield _notes.notes
    finally:
        _notes.notes = previous
