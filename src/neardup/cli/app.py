"""The ``neardup`` command group and the console the commands print to."""

from __future__ import annotations

import click
from rich.console import Console

from neardup import __version__

console = Console()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
def cli() -> None:
    """Find near-duplicate texts: compare two, deduplicate corpora, judge the methods."""
