"""The ``neardup`` command line: a thin layer over the library (no logic of its own).

One module per family of commands, imported when one of its commands is asked for
(:mod:`neardup.cli.app`); importing it registers its commands on the group:
``texts`` (compare, shingles, methods), ``corpus`` (dedup, demo), ``runs`` (explain, on a
finished dedup run's outputs), ``judge`` (evaluate,
calibrate), ``index`` (a stored collection: create, add, query, remove, stats), ``serve`` (that
collection over HTTP); ``options`` holds the options they share.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import os
import sys
import tempfile
import threading
import warnings
from typing import Any

# The commands do no linear algebra: OpenBLAS's threads (started with NumPy) would only spin
# beside neardup's own workers (~0.05–0.08 CPU-s of a 20,000-document dedup). Set before
# NumPy loads; a value the user set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click

from neardup.cli.app import cli
from neardup.errors import NearDupError, printable
from neardup.util import heap, interrupt
from neardup.util.numba_trim import trim_numba_imports

__all__ = ["cli", "main", "run"]

COLLECT_AFTER = 50_000
"""New container objects between the command's young-generation collections (Python's default:
700). The command's objects are mostly long-lived (its modules, numba's registries and
dispatchers) and its data lives in arrays: with the default, the objects its imports make
set off full collections that walk them all."""


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings meant for the user (weak signatures) as one plain line, no source excerpt."""
    click.echo(printable(f"neardup: warning: {message}"), err=True)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: a KeyboardInterrupt, or the SystemError a compiled (numba)
    function raises when the interrupt arrives while it runs."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt | click.exceptions.Abort):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def main() -> None:
    """Entry point: run the CLI, turning neardup errors into one clear line and exit code 1
    (2 for a bad option, 130 for Ctrl-C)."""
    warnings.showwarning = _show_warning
    interrupt.install()
    try:
        cli(prog_name="neardup", standalone_mode=False)
    except BrokenPipeError:
        sys.stderr.close()  # the reader (head, less) went away: not an error
    except (KeyboardInterrupt, click.exceptions.Abort, SystemError) as exc:
        if not _interrupted(exc):
            raise
        click.echo("neardup: interrupted; nothing half-written was kept", err=True)
        sys.exit(130)
    except click.UsageError as exc:  # a bad option: one line naming it, and where help is
        where = f" (see: {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        click.echo(printable(f"neardup: error: {exc.format_message()}{where}"), err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except NearDupError as exc:
        click.echo(printable(f"neardup: error: {exc}"), err=True)
        sys.exit(1)
    except OSError as exc:  # a full disk met outside the outputs (a temporary file)
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = exc.filename or f"a temporary file in {tempfile.gettempdir()} (TMPDIR)"
        click.echo(printable(f"neardup: error: cannot write {where}: {exc.strerror}"), err=True)
        sys.exit(1)


def run() -> None:
    """The ``neardup`` command: :func:`main`, then out of the process at once.

    With numba's kernels and LLVM loaded, the interpreter's own teardown (freeing every module
    and object) takes ~0.3 s, a sixth of a 20,000-document dedup, and does nothing a user
    needs: everything the command wrote is closed by then. The exit handlers still run and
    stdout/stderr are flushed; if a thread of ours still runs, the usual exit waits for it.
    """
    heap.reuse_freed_memory()
    trim_numba_imports()
    gc.set_threshold(COLLECT_AFTER, *gc.get_threshold()[1:])
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        click.echo(str(code), err=True)  # as sys.exit("message") does
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed by a reader that went away
            stream.flush()
    os._exit(code or 0)
