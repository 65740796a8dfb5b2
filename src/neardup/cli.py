"""The ``neardup`` command line: a thin layer over the library (no logic of its own)."""

from __future__ import annotations

import contextlib
import csv
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
from click.core import ParameterSource
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
from neardup.calibrate import DEFAULT_SIZES as CALIBRATE_SIZES
from neardup.calibrate import DEFAULT_THRESHOLDS as CALIBRATE_THRESHOLDS
from neardup.calibrate import DEFAULT_UNITS as CALIBRATE_UNITS
from neardup.calibrate import Calibration, Choice, Objective, choose, grid_configs
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
from neardup.configfile import merge_config, read_config, write_config
from neardup.corpus import count_lines
from neardup.dedup import (
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_THRESHOLD,
    MEASURES,
    DedupConfig,
)
from neardup.errors import InputError, NearDupError
from neardup.evalreport import EXAMPLES, collect_examples, render_evaluation_report
from neardup.evalrun import evaluate_files
from neardup.evaluate import (
    DEFAULT_THRESHOLDS,
    Evaluation,
    MethodEvaluation,
    Row,
    method_config,
    parse_thresholds,
)
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
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Settings file (JSON or TOML; neardup calibrate writes one): its values are the "
    "defaults, options given explicitly override them.",
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
    config_file: str | None,
    config: TextConfig,
) -> None:
    """Deduplicate a corpus: near-duplicate pairs, clusters, what to keep, and a report.

    INPUTS are JSONL (.gz, .zst), CSV or Parquet files, or directories of .txt/.html files.
    With --config FILE the file's settings are the defaults and explicit options override them.
    """
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
    if config_file is not None:
        dedup_config = merge_config(read_config(config_file), dedup_config, _explicit_settings())
    if dedup_config.chain and dedup_config.guard is not None:
        raise click.UsageError("--chain and --guard exclude each other")
    dedup_config.build_method()  # fail before reading
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


_SETTING_OF_OPTION = {
    "method_name": "method",
    "params": "params",
    "threshold": "threshold",
    "measure": "measure",
    "verify": "verify",
    "keep_text": "keep",
    "guard": "guard",
    "chain": "chain",
    "max_bucket": "max_bucket",
    "batch_size": "batch_size",
    "canon": "text.canon",
    "lang": "text.canon.lang",
    "stopwords_file": "text.canon.extra_stopwords",
    "unit": "text.shingle.unit",
    "size": "text.shingle.size",
    "step": "text.shingle.step",
    "hash_name": "text.shingle.hash",
} | {name: f"text.canon.{name}" for name in _CANON_SWITCHES}


def _given(name: str) -> bool:
    """Whether the option ``name`` of the running command was given (not a default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def _explicit_settings() -> set[str]:
    """The DedupConfig settings (configfile names) given explicitly on the command line."""
    return {setting for option, setting in _SETTING_OF_OPTION.items() if _given(option)}


def _names(text: str, what: str, allowed: Sequence[str]) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in allowed]
    if not names or unknown:
        raise click.BadParameter(
            f"{', '.join(unknown) or text!r}: choose from {', '.join(allowed)}", param_hint=what
        )
    return list(dict.fromkeys(names))


def _method_params(items: Sequence[str], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``METHOD:NAME=VALUE`` items (plain ``NAME=VALUE`` with one method) by method."""
    out: dict[str, dict[str, Any]] = {m: {} for m in methods}
    for item in items:
        method, sep, rest = item.partition(":")
        if not sep or "=" in method:
            if len(methods) != 1:
                raise click.BadParameter(f"{item!r}: write METHOD:NAME=VALUE", param_hint="--param")
            method, rest = methods[0], item
        if method not in out:
            raise click.BadParameter(f"{item!r}: {method!r} is not evaluated", param_hint="--param")
        out[method] |= parse_params([rest])
    return out


@contextlib.contextmanager
def _runs_progress(total: int, what: str) -> Iterator[Callable[[str], None]]:
    """A progress bar over method runs (one score_candidates each), on stderr."""
    columns = [
        TextColumn(what),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[name]}"),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total, name="")
        started = False

        def advance(name: str) -> None:
            nonlocal started
            bar.update(task, advance=1 if started else 0, name=name)
            started = True

        yield advance


_EVAL_OPTIONS = [
    click.argument("inputs", nargs=-1),
    click.option(
        "--truth",
        required=True,
        type=click.Path(exists=True, dir_okay=False),
        help='Ground truth JSONL (.gz ok): {"id","cluster"} rows, or {"a","b","label"} pairs '
        "(ids of INPUT documents; without INPUT, the two texts themselves).",
    ),
    click.option(
        "--methods",
        "methods_text",
        default=",".join(METHOD_NAMES),
        show_default=True,
        help="Comma-separated methods.",
    ),
    click.option(
        "--measure",
        type=click.Choice(MEASURES),
        default=DEFAULT_MEASURE,
        show_default=True,
        help="Measure of the methods that estimate containment (full, modm); "
        "the others use resemblance.",
    ),
    click.option("--id-field", default="id", show_default=True, help="Id field of records."),
    click.option("--text-field", default="text", show_default=True, help="Text field of records."),
]


def _eval_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_EVAL_OPTIONS):
        func = option(func)
    return func


@cli.command(name="evaluate")
@_eval_options
@click.option(
    "--thresholds",
    "thresholds_text",
    default=DEFAULT_THRESHOLDS,
    show_default=True,
    help="start:stop:step (stop included) or t1,t2,… SimHash: t counts Hamming distance "
    "d ≤ floor(64(1 − t)).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="METHOD:NAME=VALUE",
    help="A method parameter, e.g. minhash:num_perm=256 (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--csv", "csv_file", type=click.Path(dir_okay=False), help="Write the rows as CSV.")
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False),
    help="Write a self-contained HTML report.",
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=EXAMPLES,
    show_default=True,
    help="False positives and false negatives shown per method in the report.",
)
@text_options(default_unit="auto")
def evaluate_command(
    inputs: tuple[str, ...],
    truth: str,
    methods_text: str,
    measure: str,
    id_field: str,
    text_field: str,
    thresholds_text: str,
    params: tuple[str, ...],
    as_json: bool,
    csv_file: str | None,
    report_file: str | None,
    examples: int,
    config: TextConfig,
) -> None:
    """Judge methods against ground truth: found, type I/II errors, P/R/F1 per threshold.

    INPUT are corpus files (as for dedup); omit them when TRUTH holds labelled pairs with
    their texts. Every method runs once; each threshold then gives the pairs dedup would
    output with the same settings (shown per method in --json as dedup_args).
    """
    names = _names(methods_text, "--methods", METHOD_NAMES)
    thresholds = parse_thresholds(thresholds_text)
    by_method = _method_params(params, names)
    configs = [method_config(n, config, measure, thresholds, by_method[n]) for n in names]
    with _runs_progress(len(configs), "evaluating") as advance:
        ev, fetch = evaluate_files(
            inputs,
            truth,
            configs,
            thresholds,
            id_field=id_field,
            text_field=text_field,
            progress=advance,
        )
    if csv_file:
        _write_csv(ev, csv_file)
    if report_file:
        found = collect_examples(ev, examples)
        wanted = set().union(*(e.documents() for e in found.values()))
        page = render_evaluation_report(ev, found, fetch(wanted))
        Path(report_file).write_text(page, encoding="utf-8")
    if as_json:
        click.echo(json.dumps(ev.as_dict(), ensure_ascii=False))
        return
    _print_evaluation(ev)


def _write_csv(ev: Evaluation, path: str) -> None:
    rows = [
        {
            "method": m.method,
            "measure": m.config.measure,
            "verify": m.config.verify,
            "params": json.dumps(dict(m.config.params)),
            "seconds": round(m.seconds, 3),
        }
        | row.as_dict()
        for m in ev.methods
        for row in m.rows
    ]
    fields = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


_Columns = Sequence[tuple[str, Callable[[Row], str]]]
_ERROR_COLUMNS: _Columns = (
    ("found", lambda r: f"{r.found:,}"),
    ("I %", lambda r: f"{r.scores.type_i_percent:.1f}"),
    ("II %", lambda r: f"{r.scores.type_ii_percent:.1f}"),
)
_SCORE_COLUMNS: _Columns = (
    ("P", lambda r: f"{r.scores.precision:.3f}"),
    ("R", lambda r: f"{r.scores.recall:.3f}"),
    ("F1", lambda r: f"{r.scores.f1:.3f}"),
)


def _print_evaluation(ev: Evaluation) -> None:
    """The paper's Table 2 (found, type I %, type II % per method), then P/R/F1 (and ARI);
    methods are split over several tables when the terminal is narrow."""
    head = f"{ev.truth} ({ev.form}): {len(ev.ids):,} documents, {ev.duplicates:,} duplicate pairs"
    scores = list(_SCORE_COLUMNS)
    if ev.codes is not None:
        scores.append(("ARI", lambda r: f"{r.ari:.3f}"))
    for title, columns in (
        (f"found, type I %, type II % — {head}", _ERROR_COLUMNS),
        (
            "precision, recall, F1" + (", adjusted Rand index" if ev.codes is not None else ""),
            scores,
        ),
    ):
        for group in _fitting(ev.methods, columns):
            console.print(_threshold_table(ev, group, title, columns))
    seconds = " · ".join(f"{m.method} {m.seconds:.1f}" for m in ev.methods)
    console.print(f"seconds per method: {seconds}")
    for m in ev.methods:
        if m.warnings:
            more = f" (and {len(m.warnings) - 1} more like it)" if len(m.warnings) > 1 else ""
            click.echo(f"neardup: warning: {m.method}: {m.warnings[0]}{more}", err=True)


def _fitting(
    methods: Sequence[MethodEvaluation], columns: _Columns
) -> list[list[MethodEvaluation]]:
    """Methods in groups whose columns fit the terminal's width."""
    groups: list[list[MethodEvaluation]] = [[]]
    used = 8  # the t column
    for m in methods:
        width = max(len(m.method), 7) + 3 + 8 * (len(_columns_of(m, columns)) - 1)
        if groups[-1] and used + width > console.width:
            groups.append([])
            used = 8
        groups[-1].append(m)
        used += width
    return groups


def _columns_of(m: MethodEvaluation, columns: _Columns) -> _Columns:
    """SimHash's columns start with the Hamming distance that t stands for."""
    if m.method != "simhash":
        return columns
    return [("d ≤", lambda r: str(r.hamming)), *columns]


def _threshold_table(
    ev: Evaluation, methods: Sequence[MethodEvaluation], title: str, columns: _Columns
) -> Table:
    """Rows: thresholds; a group of columns per method (its name heads the first)."""
    table = Table(title=title)
    table.add_column("t", justify="right")
    for k, m in enumerate(methods):
        style = "cyan" if k % 2 else "magenta"
        for j, (label, _) in enumerate(_columns_of(m, columns)):
            name = m.method if j == 0 else ""
            table.add_column(f"{name}\n{label}", justify="right", header_style=style)
    for i, t in enumerate(ev.thresholds):
        cells = [str(t)]
        cells += [fmt(m.rows[i]) for m in methods for _, fmt in _columns_of(m, columns)]
        table.add_row(*cells)
    return table


@cli.command(name="calibrate")
@_eval_options
@click.option(
    "--objective",
    default="f1",
    show_default=True,
    help="f1 | precision@recall=R | recall@precision=P",
)
@click.option(
    "--thresholds",
    "thresholds_text",
    default=CALIBRATE_THRESHOLDS,
    show_default=True,
    help="start:stop:step (stop included) or t1,t2,…",
)
@click.option(
    "--units",
    "units_text",
    default=",".join(CALIBRATE_UNITS),
    show_default=True,
    help="Shingle units searched (--unit fixes one).",
)
@click.option(
    "--sizes",
    "sizes_text",
    default=",".join(map(str, CALIBRATE_SIZES)),
    show_default=True,
    help="Shingle sizes searched (--size fixes one).",
)
@click.option(
    "--out",
    "out_file",
    default="neardup-config.json",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="Where to write the chosen settings (for neardup dedup --config).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the choice as one JSON object.")
@text_options(default_unit="auto")
def calibrate_command(
    inputs: tuple[str, ...],
    truth: str,
    methods_text: str,
    measure: str,
    id_field: str,
    text_field: str,
    objective: str,
    thresholds_text: str,
    units_text: str,
    sizes_text: str,
    out_file: str,
    as_json: bool,
    config: TextConfig,
) -> None:
    """Search methods, their parameters, shingles and thresholds; write the best settings.

    The grid: every method × unit × size × the method's parameter values (mod-m m, bottom-n
    n, MinHash bands via the threshold they are tuned for, SimHash key distance, I-Match IDF
    band); each combination runs once and every threshold is judged. The file written is
    read by neardup dedup --config FILE.
    """
    goal = Objective.parse(objective)
    names = _names(methods_text, "--methods", METHOD_NAMES)
    thresholds = parse_thresholds(thresholds_text)
    units = [config.shingle.unit] if _given("unit") else _names(units_text, "--units", UNITS)
    sizes = [config.shingle.size] if _given("size") else _sizes(sizes_text)
    configs = grid_configs(config, names, units, sizes, measure, thresholds)
    with _runs_progress(len(configs), "calibrating") as advance:
        ev, _ = evaluate_files(
            inputs,
            truth,
            configs,
            thresholds,
            id_field=id_field,
            text_field=text_field,
            progress=advance,
            keep_pairs=False,
        )
    result = choose(ev, goal)
    write_config(out_file, result.winner.config, result.notes())
    if as_json:
        click.echo(json.dumps(result.notes() | {"config": out_file}, ensure_ascii=False))
        return
    _print_calibration(result, out_file)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise click.BadParameter(
            f"{text!r}: give positive integers, e.g. 2,3,4,5", param_hint="--sizes"
        )
    return list(dict.fromkeys(sizes))


def _print_calibration(result: Calibration, out_file: str) -> None:
    picks = [("winner", result.winner)]
    if result.runner_up is not None:
        picks.append(("runner-up", result.runner_up))
    table = Table(title=f"calibration: {result.objective}")
    table.add_column("")
    for label, _ in picks:
        table.add_column(label, justify="right")
    rows: list[tuple[str, Callable[[Choice], str]]] = [
        ("method", lambda c: c.config.method),
        ("params", lambda c: ", ".join(f"{k}={v}" for k, v in c.config.params) or "—"),
        ("shingles", lambda c: f"{c.config.text.shingle.unit} {c.config.text.shingle.size}"),
        ("measure", lambda c: c.config.measure + ("" if c.config.verify else " (estimate)")),
        ("threshold", lambda c: f"{c.row.threshold:g}"),
        ("found", lambda c: f"{c.row.found:,}"),
        ("precision", lambda c: f"{c.row.scores.precision:.4f}"),
        ("recall", lambda c: f"{c.row.scores.recall:.4f}"),
        ("F1", lambda c: f"{c.row.scores.f1:.4f}"),
        ("type I %", lambda c: f"{c.row.scores.type_i_percent:.2f}"),
        ("type II %", lambda c: f"{c.row.scores.type_ii_percent:.2f}"),
        ("seconds", lambda c: f"{c.seconds:.1f}"),
    ]
    for label, cell in rows:
        table.add_row(label, *(cell(c) for _, c in picks))
    console.print(table)
    console.print(f"why: {result.reason()}")
    console.print(f"wrote {out_file}: neardup dedup INPUT... --out DIR --config {out_file}")


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
