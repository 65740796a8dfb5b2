"""``neardup compile``: the compiled kernels built ahead of a first run."""

from __future__ import annotations

import time

import click

from neardup.cli.app import cli


@cli.command(name="compile")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes compiling at a time [default: one a core].",
)
def compile_command(jobs: int | None) -> None:
    """Compile the kernels for this machine now, on every core (else the first run does).

    Runs what users run on the bundled sample (every method's dedup, explain, compare, a
    stored collection), one process a core, and keeps nothing but numba's cache of the
    compiled kernels. For a container image or a cluster node built ahead; a second call
    only loads what the first compiled.
    """
    from neardup.util.precompile import compile_ahead

    started = time.perf_counter()
    ran = compile_ahead(jobs)
    click.echo(
        f"neardup: kernels compiled for this machine ({ran} commands, "
        f"{time.perf_counter() - started:.0f} s)",
        err=True,
    )
