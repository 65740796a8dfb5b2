"""The ``neardup`` command line: a thin layer over the library (no logic of its own)."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import numba
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from neardup import __version__
from neardup.candidates import DEFAULT_MAX_BUCKET
from neardup.cluster import KeepPolicy
from neardup.compare import Comparison, MethodEstimate, compare_texts
from neardup.config import (
    DEFAULT_SIZES,
    HASH_NAMES,
    LANGS,
    PROFILES,
    UNITS,
    CanonConfig,
    ShingleConfig,
    TextConfig,
)
from neardup.corpus import count_lines
from neardup.dedup import (
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_THRESHOLD,
    MEASURES,
    DedupConfig,
)
from neardup.errors import InputError, NearDupError
from neardup.io import read_text
from neardup.measures import Overlap
from neardup.methods import METHOD_NAMES, describe_methods, get_method, parse_params
from neardup.passages import Passages
from neardup.pipeline import Inputs, run_dedup
from neardup.sample import sample_documents, sample_path
from neardup.shingles import shingles
from neardup.text.stopwords import load_stopword_file

console = Console()
SHOWN_CHARS = 3000  # longer canonical texts are cut in the human output of compare


def _switch(name: str, help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``--name/--no-name`` flag whose absence means "as the profile says"."""
    return click.option(f"--{name}/--no-{name}", default=None, help=help_text)


_TEXT_OPTIONS = [
    click.option(
        "--size",
        type=click.IntRange(min=1),
        default=None,
        help=f"Units per shingle [default: {DEFAULT_SIZES['word']} words, "
        f"{DEFAULT_SIZES['char']} chars, {DEFAULT_SIZES['auto']} for auto].",
    ),
    click.option(
        "--step",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Units between shingle starts (1 = fully overlapping).",
    ),
    click.option(
        "--hash",
        "hash_name",
        type=click.Choice(HASH_NAMES),
        default="xxh3",
        show_default=True,
        help="Shingle fingerprint function.",
    ),
    click.option(
        "--canon",
        type=click.Choice(PROFILES),
        default="default",
        show_default=True,
        help="Canonicalization profile; 'none' leaves the text untouched.",
    ),
    click.option(
        "--lang",
        type=click.Choice(LANGS),
        default="auto",
        show_default=True,
        help="Text language; 'auto' picks it from the script of each text.",
    ),
    _switch("html", "Strip HTML tags and entities."),
    _switch("boilerplate", "Drop page menus, headers and footers before stripping HTML."),
    _switch("wiki", "Strip leftover wiki markup."),
    _switch("normalize", "Unicode NFKC normalization."),
    _switch("lowercase", "Case folding."),
    _switch("punctuation", "Remove punctuation and special characters."),
    _switch("stopwords", "Remove stop words."),
    click.option(
        "--stopwords-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Your own stop words, one per line.",
    ),
    _switch("segment", "Segment Chinese into words (jieba)."),
    click.option(
        "--lemmatize",
        is_flag=True,
        default=None,
        help="Bring Russian words to their normal form (pymorphy3).",
    ),
    click.option(
        "--stem",
        is_flag=True,
        default=None,
        help="Reduce English and Russian words to Snowball stems.",
    ),
    click.option(
        "--drop-adjectives",
        is_flag=True,
        default=None,
        help="Remove Russian adjectives and participles (pymorphy3).",
    ),
]
_CANON_SWITCHES = (
    "html",
    "boilerplate",
    "wiki",
    "normalize",
    "lowercase",
    "punctuation",
    "stopwords",
    "segment",
    "lemmatize",
    "stem",
    "drop_adjectives",
)


def text_options(default_unit: str = "word") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the canonicalization and shingle options; pass them on as one ``config``."""
    unit_option = click.option(
        "--unit",
        type=click.Choice(UNITS),
        default=default_unit,
        show_default=True,
        help="Shingle unit: words, characters (short texts), or auto: words, and characters "
        "for Chinese.",
    )

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        return _with_text_options(func, [unit_option, *_TEXT_OPTIONS])

    return decorate


def _with_text_options(func: Callable[..., Any], options: list[Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        switches = {name: kwargs.pop(name) for name in _CANON_SWITCHES}
        extra = kwargs.pop("stopwords_file")
        canon = CanonConfig.profile(
            kwargs.pop("canon"),
            lang=kwargs.pop("lang"),
            extra_stopwords=tuple(load_stopword_file(extra)) if extra else (),
            **switches,
        )
        unit = kwargs.pop("unit")
        shingle = ShingleConfig(
            unit=unit,
            size=kwargs.pop("size") or DEFAULT_SIZES[unit],
            step=kwargs.pop("step"),
            hash=kwargs.pop("hash_name"),
        )
        return func(*args, config=TextConfig(canon, shingle), **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neardup")
def cli() -> None:
    """Find near-duplicate texts: compare two texts, list their shingles, try the sample."""


@cli.command()
@click.argument("file_a", required=False)
@click.argument("file_b", required=False)
@click.option("--text-a", default=None, help="Text A given inline instead of FILE_A.")
@click.option("--text-b", default=None, help="Text B given inline instead of FILE_B.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--method",
    "method_name",
    type=click.Choice(METHOD_NAMES),
    default=None,
    help="Also show this signature method's estimate (see: neardup methods).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter of --method, e.g. --param num_perm=84 (repeatable).",
)
@text_options()
def compare(
    file_a: str | None,
    file_b: str | None,
    text_a: str | None,
    text_b: str | None,
    as_json: bool,
    method_name: str | None,
    params: tuple[str, ...],
    config: TextConfig,
) -> None:
    """Compare two texts: resemblance, containment both ways, Dice, shared shingles.

    FILE_A and FILE_B are paths, or - for standard input; or give --text-a / --text-b.
    """
    if params and method_name is None:
        raise click.UsageError("--param needs --method")
    method = get_method(method_name, config, **parse_params(params)) if method_name else None
    files = iter(f for f in (file_a, file_b) if f is not None)
    a, name_a = _text_argument(text_a, files, "A")
    b, name_b = _text_argument(text_b, files, "B")
    if next(files, None) is not None:
        raise click.UsageError("give two texts: two files, or files and --text-a/--text-b")
    result = compare_texts(a, b, config, labels=(name_a, name_b), method=method)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    else:
        _print_comparison(result, name_a, name_b)


def _text_argument(inline: str | None, files: Any, label: str) -> tuple[str, str]:
    if inline is not None:
        return inline, f"text {label}"
    path = next(files, None)
    if path is None:
        raise click.UsageError(f"text {label} is missing: give a file, - or --text-{label.lower()}")
    return read_text(path), ("<stdin>" if path == "-" else path)


def _print_comparison(result: Comparison, name_a: str, name_b: str) -> None:
    o = result.overlap
    table = Table(title="Similarity (full shingle sets)", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("resemblance (Jaccard)", f"{o.resemblance:.4f}")
    table.add_row("containment of A in B", f"{o.containment_a_in_b:.4f}")
    table.add_row("containment of B in A", f"{o.containment_b_in_a:.4f}")
    table.add_row("Dice", f"{o.dice:.4f}")
    table.add_row("shared shingles, % of A", f"{o.shared_percent:.1f}")
    table.add_row("shingles A / B / shared", f"{o.a} / {o.b} / {o.shared}")
    console.print(table)
    if result.estimate is not None:
        _print_estimate(result.estimate, o)
    for label, name, passages in (
        ("A", name_a, result.passages_a),
        ("B", name_b, result.passages_b),
    ):
        console.print(
            f"\n[bold]{label}[/bold] {name} — shared passages highlighted (canonical form):"
        )
        console.print(_highlighted(passages))


def _print_estimate(est: MethodEstimate, exact: Overlap) -> None:
    if est.kind == "hamming":
        line = f"{est.method}: Hamming distance {int(est.estimate)} of 64 bits"
    elif est.kind == "equality":
        line = f"{est.method}: signatures {'equal' if est.estimate else 'differ'}"
    else:
        line = (
            f"{est.method}: estimated {est.kind} {est.estimate:.4f} "
            f"(exact resemblance {exact.resemblance:.4f})"
        )
    if est.containment_a_in_b is not None:
        line += (
            f"; estimated containment of A in B {est.containment_a_in_b:.4f} "
            f"(exact {exact.containment_a_in_b:.4f})"
        )
    console.print(line)
    console.print(
        f"{est.method}: the texts {'share' if est.shares_key else 'share no'} "
        "index key — " + ("candidates" if est.shares_key else "not candidates")
    )
    if est.fitted_on_pair:
        console.print(
            "[dim]its IDF statistics come from these two texts only: in a collection "
            "the answer can differ[/dim]"
        )


@cli.command(name="methods")
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
def methods_command(as_json: bool) -> None:
    """List the signature methods, their parameters and what each is good for."""
    infos = describe_methods()
    if as_json:
        for info in infos:
            click.echo(json.dumps(info.as_dict()))
        return
    table = Table(title="Signature methods (use with --method NAME --param NAME=VALUE)")
    for column in ("method", "estimates", "parameters (defaults)", "good for"):
        table.add_column(column)
    for info in infos:
        params = ", ".join(f"{k}={v}" for k, v in info.params.items()) or "—"
        table.add_row(info.name, info.estimate, params, info.summary)
    console.print(table)


def _highlighted(passages: Passages) -> Text:
    text = Text(passages.text[:SHOWN_CHARS])
    for start, end in passages.spans:
        if start < SHOWN_CHARS:
            text.stylize("bold black on yellow", start, min(end, SHOWN_CHARS))
    if len(passages.text) > SHOWN_CHARS:
        text.append(f" … ({len(passages.text) - SHOWN_CHARS} more characters)", style="dim")
    return text


@cli.command(name="shingles")
@click.argument("file")
@click.option("--hashes", is_flag=True, help="Print each shingle's fingerprint too.")
@text_options()
def shingles_command(file: str, hashes: bool, config: TextConfig) -> None:
    """Print the distinct shingles of a text, one per line, in order of first appearance.

    FILE is a path, or - for standard input.
    """
    text = read_text(file)
    found = shingles(text, config)
    if not found:
        raise InputError(f"{file}: no shingles (the text is empty after canonicalization)")
    out = sys.stdout
    for s in found:
        out.write(f"{s.fingerprint:016x}\t{s.text}\n" if hashes else f"{s.text}\n")


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
    console.print(
        f"Sample corpus: {len(sample_documents())} documents written for neardup "
        "(copies, rewrites, an HTML page, quotations)"
    )
    with sample_path() as path:
        summary = run_dedup(Inputs((str(path),)), out_dir, DedupConfig())
    table = Table(title="Near-duplicate clusters (default settings)")
    for column in ("kept", "removed as its near-duplicates"):
        table.add_column(column)
    for line in Path(out_dir, "clusters.jsonl").read_text(encoding="utf-8").splitlines():
        cluster = json.loads(line)
        table.add_row(cluster["keep"], ", ".join(i for i in cluster["ids"] if i != cluster["keep"]))
    console.print(table)
    _print_summary(summary, out_dir)
    console.print(f"Open {Path(out_dir, 'report.html')} for the pairs and their shared passages.")


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Directory for pairs, clusters, kept, removed, summary.json, report.html.",
)
@click.option(
    "--method",
    "method_name",
    type=click.Choice(METHOD_NAMES),
    default=DEFAULT_METHOD,
    show_default=True,
    help="How candidates are found (see: neardup methods).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter of --method, e.g. --param num_perm=84 (repeatable).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1, min_open=True),
    default=DEFAULT_THRESHOLD,
    show_default=True,
    help="Pairs scoring at least this are near-duplicates.",
)
@click.option(
    "--measure",
    type=click.Choice(MEASURES),
    default=DEFAULT_MEASURE,
    show_default=True,
    help="containment also finds a short text quoted whole in a long one.",
)
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
    help="Which document of a cluster to keep: first | longest | shortest | field:NAME[:min|max].",
)
@click.option(
    "--guard",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="A member stays in a cluster only if its pair with the kept document "
    "scores this much [default: the threshold].",
)
@click.option(
    "--chain",
    is_flag=True,
    help="Clusters are connected components of all pairs (A~B~C joins A and C).",
)
@click.option(
    "--max-bucket",
    type=click.IntRange(min=2),
    default=DEFAULT_MAX_BUCKET,
    show_default=True,
    help="Keys shared by more documents pair only with the first.",
)
@click.option("--id-field", default="id", show_default=True, help="Id field of records.")
@click.option("--text-field", default="text", show_default=True, help="Text field of records.")
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip malformed records (counted in summary.json) instead of stopping.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "parquet"]),
    default="jsonl",
    show_default=True,
    help="Format of the output files.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Threads for sketching [default: all cores].",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="Documents per batch (memory per batch).",
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
    max_bucket: int,
    id_field: str,
    text_field: str,
    skip_bad: bool,
    fmt: str,
    jobs: int | None,
    batch_size: int,
    config: TextConfig,
) -> None:
    """Deduplicate a corpus: near-duplicate pairs, clusters, what to keep, and a report.

    INPUTS are JSONL (.gz, .zst), CSV or Parquet files, or directories of .txt/.html files.
    """
    if chain and guard is not None:
        raise click.UsageError("--chain and --guard exclude each other")
    if jobs is not None:
        numba.set_num_threads(min(jobs, numba.config.NUMBA_NUM_THREADS))
    dedup_config = DedupConfig(
        text=config,
        method=method_name,
        params=tuple(parse_params(params).items()),
        threshold=threshold,
        measure=measure,
        verify=verify,
        keep=KeepPolicy.parse(keep_text),
        guard=guard,
        chain=chain,
        max_bucket=max_bucket,
        batch_size=batch_size,
    )
    get_method(method_name, config, **dict(dedup_config.params))  # fail before reading
    source = Inputs(tuple(inputs), id_field, text_field, skip_bad)
    with _progress_bar(inputs) as advance:
        summary = run_dedup(source, out_dir, dedup_config, fmt, progress=advance)
    _print_summary(summary, out_dir)


@contextlib.contextmanager
def _progress_bar(inputs: Sequence[str]) -> Iterator[Callable[[int], None]]:
    """A rich progress bar over documents read (rate and ETA when the total is known)."""
    counts = [count_lines(p) for p in inputs]
    total = None if any(c is None for c in counts) else sum(c or 0 for c in counts)
    columns = [
        TextColumn("reading and sketching"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("docs", total=total, rate="")
        started = time.perf_counter()
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            rate = done / max(time.perf_counter() - started, 1e-9)
            bar.update(task, advance=n, rate=f"{rate:,.0f} docs/s")

        yield advance


def _print_summary(summary: dict[str, Any], out_dir: str) -> None:
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
    console.print(table)
    for warning in summary["warnings"]:
        click.echo(f"neardup: warning: {warning}", err=True)
    if summary["empty_documents"]:
        click.echo(
            f"neardup: warning: {summary['empty_documents']} document(s) have no words "
            "left after canonicalization; they are kept and never clustered "
            f"(e.g. {', '.join(summary['empty_ids'][:5])})",
            err=True,
        )


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
