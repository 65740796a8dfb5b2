"""The ``neardup`` command line: a thin layer over the library (no logic of its own).

One module per family of commands, imported when one of its commands is asked for
(:mod:`neardup.cli.app`); importing it registers its commands on the group:
``texts`` (compare, shingles, methods), ``corpus`` (dedup, demo), ``judge`` (evaluate,
calibrate), ``index`` (a stored collection: create, add, query, remove, stats), ``serve`` (that
collection over HTTP); ``options`` holds the options they share.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import click

from neardup.cli.app import cli
from neardup.errors import NearDupError

__all__ = ["cli", "main"]


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Warnings meant for the user (weak signatures) as one plain line, no source excerpt."""
    click.echo(f"neardup: warning: {message}", err=True)


def main() -> None:
    """Entry point: run the CLI, turning neardup errors into one clear line and exit code 1."""
    warnings.showwarning = _show_warning
    try:
        cli(standalone_mode=False)
    except BrokenPipeError:
        sys.stderr.close()  # the reader (head, less) went away: not an error
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except NearDupError as exc:
        click.echo(f"neardup: error: {exc}", err=True)
        sys.exit(1)
