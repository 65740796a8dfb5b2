"""Running the command line in tests: CliRunner in-process, or a real subprocess."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner, Result

from neardup.cli import cli


def run(*args: str, input: str | None = None) -> Result:
    """The CLI in this process (exceptions propagate: a bug fails the test loudly)."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def neardup(*args: str, input: str | None = None, **kwargs: object) -> subprocess.CompletedProcess:
    """The installed entry point in a subprocess, as a user runs it (exit codes, stderr)."""
    return subprocess.run(
        [sys.executable, "-c", "from neardup.cli import run; run()", *args],
        input=input,
        capture_output=True,
        text=True,
        **kwargs,
    )
