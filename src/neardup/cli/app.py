"""The ``neardup`` command group and the console the commands print to."""

from __future__ import annotations

import importlib

import click
from rich.console import Console

from neardup import __version__

console = Console()


# command -> the module of neardup.cli defining it, imported when the command is looked up
_MODULES = {
    "compare": "texts",
    "methods": "texts",
    "shingles": "texts",
    "demo": "corpus",
    "dedup": "corpus",
    "explain": "runs",
    "evaluate": "judge",
    "calibrate": "judge",
    "index": "index",
    "serve": "serve",
}


class _LazyGroup(click.Group):
    """Loads a command's module only when that command is asked for, so `neardup dedup`
    does not import the HTTP service, the stores or the judge (start-up time)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _MODULES:
            importlib.import_module(f"neardup.cli.{_MODULES[cmd_name]}")
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
def cli() -> None:
    """Find near-duplicate texts: compare two, deduplicate corpora, judge the methods."""
