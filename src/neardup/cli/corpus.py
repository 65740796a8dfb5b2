"""Commands on corpora: dedup, and the demo on the bundled sample.

What a run needs (the pipeline, its kernels, rich's progress bar) is imported when the command
runs, not with the module: ``neardup dedup --help`` loads none of it."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from neardup.cli import app
from neardup.cli.app import cli
from neardup.cli.options import (
    FRACTION,
    bad_options,
    count,
    dedup_config,
    identity_option,
    input_options,
    method_options,
    text_options,
)
from neardup.errors import printable
from neardup.io.formats import output_names
from neardup.util import interrupt

if TYPE_CHECKING:
    from neardup.text.text_config import TextConfig


@cli.command()
@click.option(
    "--out",
    "out_dir",
    default="neardup-demo",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where to write the outputs.",
)
def demo(out_dir: str) -> None:
    """Deduplicate the bundled sample corpus (English, Russian, Chinese) with the defaults."""
    from rich.table import Table

    from neardup.dedup import DedupConfig
    from neardup.engines.local.pipeline import Inputs, run_dedup
    from neardup.io.sample_corpus import sample_documents, sample_path

    app.console.print(
        f"Sample corpus: {len(sample_documents())} documents written for neardup "
        "(copies, rewrites, an HTML page, quotations)"
    )
    _say_if_compiling()
    with sample_path() as path:
        summary = run_dedup(Inputs((str(path),)), out_dir, DedupConfig())
    table = Table(title="Near-duplicate clusters (default settings)")
    for column in ("kept", "removed as its near-duplicates"):
        table.add_column(column)
    for line in Path(out_dir, "clusters.jsonl").read_text(encoding="utf-8").splitlines():
        cluster = json.loads(line)
        table.add_row(cluster["keep"], ", ".join(i for i in cluster["ids"] if i != cluster["keep"]))
    app.console.print(table)
    _print_summary(summary, out_dir)
    app.console.print(
        f"Open {Path(out_dir, 'report.html')} for the pairs and their shared passages."
    )


def _say_if_compiling() -> None:
    """A fresh install compiles its kernels on the first run: say so before the silence."""
    from neardup.util.kernels import kernels_compiled

    if not kernels_compiled():
        click.echo(
            "neardup: first run: compiling the kernels for this machine "
            "(a minute or two, once; later runs load them; neardup compile does it ahead)",
            err=True,
        )


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Directory for pairs, clusters, kept, removed, summary.json, report.html.",
)
@method_options
@identity_option
@click.option(
    "--verify/--no-verify",
    default=True,
    show_default=True,
    help="Score candidates exactly from shingles, or by the method's estimate.",
)
@click.option(
    "--keep",
    "keep_text",
    default="first",
    show_default=True,
    help="Which document of a cluster to keep: first | longest | shortest | field:NAME[:min|max]; "
    "among documents that hold each other only: one that holds another is never removed into it.",
)
@click.option(
    "--guard",
    type=FRACTION,
    default=None,
    help="A document is removed only if this much of it is in the kept document "
    "[default: the threshold].",
)
@click.option(
    "--chain",
    is_flag=True,
    help="Clusters are connected components of all pairs (A~B~C joins A and C); removal "
    "stays lossless.",
)
@input_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(output_names()),
    default="jsonl",
    show_default=True,
    help="Format of the output files.",
)
@click.option(
    "--jobs",
    type=count(1),
    default=None,
    help="Threads for sketching [default: all cores].",
)
@click.option(
    "--batch-size",
    type=count(1),
    default=1024,
    show_default=True,
    help="Documents per batch (memory per batch).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="Where to run: this machine, or Apache Spark (pip install 'neardup[spark]'; "
    "JSONL or Parquet on any path Spark reads; outputs are Spark directories).",
)
@click.option(
    "--master",
    default=None,
    help="Spark master URL for --engine spark (e.g. local[4], spark://host:7077, yarn) "
    "[default: spark-submit's, else local[*]].",
)
@click.option(
    "--spark-conf",
    "spark_conf",
    multiple=True,
    metavar="KEY=VALUE",
    help="A Spark setting for --engine spark (repeatable), e.g. "
    "spark.sql.shuffle.partitions=64 or spark.executor.pyspark.memory=2g.",
)
@text_options(default_unit="auto")
def dedup(
    inputs: tuple[str, ...],
    out_dir: str,
    method_name: str,
    params: tuple[str, ...],
    threshold: float,
    measure: str,
    verify: bool,
    keep_text: str,
    guard: float | None,
    chain: bool,
    template_df: int,
    identity: bool,
    max_bucket: int,
    id_field: str,
    text_field: str,
    skip_bad: bool,
    max_text_bytes: int,
    fmt: str,
    jobs: int | None,
    batch_size: int,
    engine: str,
    master: str | None,
    spark_conf: tuple[str, ...],
    config_file: str | None,
    config: TextConfig,
) -> None:
    """Deduplicate a corpus: near-duplicate pairs, clusters, what to keep, and a report.

    INPUTS are JSONL (.gz, .zst), CSV or Parquet files, or directories of .txt/.html files.
    With --config FILE the file's settings are the defaults and explicit options override them.
    """
    import numba

    from neardup.dedup.cluster import KeepPolicy
    from neardup.engines.local.pipeline import Inputs, run_dedup

    if jobs is not None:
        numba.set_num_threads(min(jobs, numba.config.NUMBA_NUM_THREADS))
    with bad_options():
        keep = KeepPolicy.parse(keep_text)
    settings = dedup_config(
        method_name=method_name,
        params=params,
        config_file=config_file,
        config=config,
        threshold=threshold,
        measure=measure,
        verify=verify,
        keep=keep,
        guard=guard,
        chain=chain,
        template_df=template_df,
        identity=identity,
        max_bucket=max_bucket,
        batch_size=batch_size,
    )
    if settings.chain and settings.guard is not None:
        raise click.UsageError("--chain and --guard exclude each other")
    source = Inputs(tuple(inputs), id_field, text_field, skip_bad, max_text_bytes)
    if engine != "spark" and (master is not None or spark_conf):
        option = "--master" if master is not None else "--spark-conf"
        raise click.UsageError(f"{option} goes with --engine spark")
    if engine == "spark":
        from neardup.engines.spark import spark_session
        from neardup.engines.spark.spark_files import check_options, run_spark_dedup

        with bad_options():
            spark_session.check_master(master)
            settings_of_spark = spark_session.parse_settings(spark_conf)
            check_options(source, settings, fmt)
        summary = run_spark_dedup(source, out_dir, settings, fmt, master, settings_of_spark)
        _print_summary(summary, out_dir)
        if spark_session.start_class_archive():  # only after a run that recorded its classes
            click.echo(
                "neardup: preparing Spark's JVM for quicker starts, in the background "
                "(under a minute of one core, once)",
                err=True,
            )
        return
    _say_if_compiling()
    with _progress_bar(inputs) as (advance, stage):
        summary = run_dedup(source, out_dir, settings, fmt, progress=advance, stage=stage)
    _print_summary(summary, out_dir)


@contextlib.contextmanager
def _progress_bar(
    inputs: Sequence[str],
) -> Iterator[tuple[Callable[[int], None], Callable[[str], None]]]:
    """A rich progress bar over documents read (rate and ETA when the total is known), named
    after the stage running, shown from the first batch on: an error before any work prints
    its one line and nothing else."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    from neardup.io.readers import count_lines

    err = Console(stderr=True)  # not a terminal (a log, a pipe): no bar, no blank line left
    counts = [count_lines(p) for p in inputs] if err.is_terminal else [None]  # no bar: no count
    total = None if any(c is None for c in counts) else sum(c or 0 for c in counts)
    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    ]
    bar = Progress(*columns, console=err, transient=True, disable=not err.is_terminal)
    task = bar.add_task("reading and fingerprinting", total=total, rate="")
    started = time.perf_counter()
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        interrupt.check()
        if not done:
            bar.start()
        done += n
        rate = done / max(time.perf_counter() - started, 1e-9)
        bar.update(task, advance=n, rate=f"{rate:,.0f} docs/s")

    def stage(name: str) -> None:
        interrupt.check()
        bar.update(task, description=name)

    try:
        yield advance, stage
    finally:
        if done:
            bar.stop()


def _print_summary(summary: dict[str, Any], out_dir: str) -> None:
    from rich.table import Table

    table = Table(title=f"neardup dedup → {out_dir}")
    table.add_column("")
    table.add_column("", justify="right")
    for key in (
        "documents",
        "kept",
        "removed",
        "clusters",
        "verified_pairs",
        "empty_documents",
        "bad_records",
    ):
        table.add_row(key.replace("_", " "), str(summary[key]))
    table.add_row("seconds", str(summary["timings_seconds"]["total"]))
    app.console.print(table)
    for warning in [*summary.get("input_warnings", ()), *summary.get("warnings", ())]:
        click.echo(printable(f"neardup: warning: {warning}"), err=True)
    if summary["empty_documents"]:
        examples = summary.get("empty_ids", [])[:5]
        click.echo(
            f"neardup: warning: {summary['empty_documents']} document(s) have no words "
            "left after canonicalization; they are kept and never clustered"
            + (f" (e.g. {', '.join(examples)})" if examples else ""),
            err=True,
        )
