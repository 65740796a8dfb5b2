"""The ``neardup`` command group and the console the commands print to."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import click
from click.utils import make_default_short_help

from neardup import __version__

if TYPE_CHECKING:
    from rich.console import Console

    console: Console


def __getattr__(name: str) -> Any:
    """``console``, the commands' rich Console, made on first use: rich is not imported for
    ``neardup --help`` or ``--version``."""
    if name != "console":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rich.console import Console

    made = globals()["console"] = Console()
    return made


# command -> the module of neardup.cli defining it (imported when the command is looked up) and
# the first paragraph of its help, which `neardup --help` lists without importing the module
# (tests/cli/test_cli_startup.py checks these are the commands' own words)
_COMMANDS: dict[str, tuple[str, str]] = {
    "calibrate": (
        "judge",
        "Search methods, their parameters, shingles and thresholds; write the best settings.",
    ),
    "compile": (
        "kernels",
        "Compile the kernels for this machine now, on every core (else the first run does).",
    ),
    "compare": (
        "texts",
        "Compare two texts as dedup does: resemblance, containment, Dice, dedup's score.",
    ),
    "dedup": (
        "corpus",
        "Deduplicate a corpus: near-duplicate pairs, clusters, what to keep, and a report.",
    ),
    "demo": (
        "corpus",
        "Deduplicate the bundled sample corpus (English, Russian, Chinese) with the defaults.",
    ),
    "explain": (
        "runs",
        "Why a dedup run kept or removed documents ID_A and ID_B: its figures and its rule.",
    ),
    "evaluate": (
        "judge",
        "Judge methods against ground truth: found, type I/II errors, P/R/F1 per threshold.",
    ),
    "index": (
        "index",
        "A stored collection: every new document is checked against what is stored.",
    ),
    "methods": (
        "texts",
        "List the signature methods, their parameters and what each is good for.",
    ),
    "serve": (
        "serve",
        "Serve a collection over HTTP: add, query, get, delete, stats (API docs at /docs).",
    ),
    "shingles": (
        "texts",
        "Print the distinct shingles of a text, one per line, in order of first appearance.",
    ),
}
_MODULES = {name: module for name, (module, _) in _COMMANDS.items()}


class _LazyGroup(click.Group):
    """Loads a command's module only when that command is asked for, so `neardup dedup`
    does not import the HTTP service, the stores or the judge, and `neardup --help` imports
    none of them (start-up time)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _MODULES:
            importlib.import_module(f"neardup.cli.{_MODULES[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, as click lists them, from the table above for
        commands whose module is not loaded yet."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is not None:
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                rows.append((name, make_default_short_help(_COMMANDS[name][1], limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
def cli() -> None:
    """Find near-duplicate texts: compare two, deduplicate corpora, judge the methods."""
