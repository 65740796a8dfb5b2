"""Commands that judge methods against labelled data: evaluate and calibrate."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
)
from rich.table import Table

from neardup.cli.app import cli, console
from neardup.cli.options import (
    bad_options,
    check_writable,
    count,
    given,
    id_field_option,
    max_text_bytes_option,
    stack,
    text_field_option,
    text_options,
)
from neardup.dedup import (
    DEFAULT_MEASURE,
    MEASURES,
)
from neardup.dedup.configfile import write_config
from neardup.judge.calibrate import DEFAULT_SIZES as CALIBRATE_SIZES
from neardup.judge.calibrate import DEFAULT_THRESHOLDS as CALIBRATE_THRESHOLDS
from neardup.judge.calibrate import DEFAULT_UNITS as CALIBRATE_UNITS
from neardup.judge.calibrate import Calibration, Choice, Objective, choose, grid_configs
from neardup.judge.evaluate import (
    DEFAULT_THRESHOLDS,
    MODE_TEXT,
    Evaluation,
    MethodEvaluation,
    Mode,
    Row,
    method_config,
    parse_thresholds,
)
from neardup.judge.judge_report import EXAMPLES, collect_examples, render_evaluation_report
from neardup.judge.run import evaluate_files
from neardup.methods import METHOD_NAMES, parse_params
from neardup.text.text_config import (
    MAX_UNITS,
    UNITS,
    TextConfig,
)


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
    err = Console(stderr=True)  # not a terminal: no bar, no blank line before an error
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
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
        help="Measure every candidate is verified in (with --estimates: the measure of the "
        "methods that estimate containment, full and modm; the others use resemblance).",
    ),
    click.option(
        "--estimates",
        is_flag=True,
        help="Judge each method by its own estimate (the paper's view; full exactly) instead "
        "of exactly as dedup with the same settings would (candidates from the method's "
        "keys, verified exactly, dedup's clusters).",
    ),
    id_field_option,
    text_field_option,
    max_text_bytes_option("Longest text (UTF-8 bytes) a record may hold."),
]
_eval_options = stack(*_EVAL_OPTIONS)


@cli.command(name="evaluate")
@_eval_options
@click.option(
    "--thresholds",
    "thresholds_text",
    default=DEFAULT_THRESHOLDS,
    show_default=True,
    help="start:stop:step (stop included) or t1,t2,… SimHash estimates (--estimates): t counts "
    "Hamming distance d ≤ floor(64(1 − t)).",
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
    type=count(0),
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
    estimates: bool,
    id_field: str,
    text_field: str,
    max_text_bytes: int,
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
    their texts. Each method and threshold is scored exactly as neardup dedup with those
    settings would score it (dedup_args per method in --json), with cluster truth by dedup's
    clusters; --estimates judges the methods' own estimates and the pairs found instead.
    """
    names = _names(methods_text, "--methods", METHOD_NAMES)
    mode: Mode = "estimates" if estimates else "dedup"
    check_writable(csv_file, "--csv")
    check_writable(report_file, "--report")
    with bad_options():
        thresholds = parse_thresholds(thresholds_text)
        by_method = _method_params(params, names)
        configs = [
            method_config(n, config, measure, thresholds, by_method[n], mode=mode) for n in names
        ]
    with _runs_progress(len(configs), "evaluating") as advance:
        ev, fetch = evaluate_files(
            inputs,
            truth,
            configs,
            thresholds,
            id_field=id_field,
            text_field=text_field,
            max_text_bytes=max_text_bytes,
            progress=advance,
            mode=mode,
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
            "mode": ev.mode,
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
    judged = "of dedup's clusters" if ev.judged_by == "clusters" else "of the pairs found"
    console.print(f"scored {MODE_TEXT[ev.mode]}")
    scores = list(_SCORE_COLUMNS)
    if ev.codes is not None:
        scores.append(("ARI", lambda r: f"{r.ari:.3f}"))
    for title, columns in (
        (f"found, type I %, type II % — {head}", _ERROR_COLUMNS),
        (
            f"precision, recall, F1 {judged}"
            + (", adjusted Rand index" if ev.codes is not None else ""),
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
    """SimHash's estimates: the columns start with the Hamming distance that t stands for."""
    if m.method != "simhash" or m.config.verify:
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
    help="Where to write the chosen settings (for dedup / index create --config).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the choice as one JSON object.")
@text_options(default_unit="auto")
def calibrate_command(
    inputs: tuple[str, ...],
    truth: str,
    methods_text: str,
    measure: str,
    estimates: bool,
    id_field: str,
    text_field: str,
    max_text_bytes: int,
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
    band); each combination runs once and every threshold is judged exactly as dedup would
    run it (--estimates: by the methods' own estimates). The file written is read by
    neardup dedup --config FILE (which then reproduces the figure reported) and neardup
    index create --config FILE.
    """
    names = _names(methods_text, "--methods", METHOD_NAMES)
    check_writable(out_file, "--out")
    units = [config.shingle.unit] if given("unit") else _names(units_text, "--units", UNITS)
    mode: Mode = "estimates" if estimates else "dedup"
    with bad_options():
        goal = Objective.parse(objective)
        thresholds = parse_thresholds(thresholds_text)
        sizes = [config.shingle.size] if given("size") else _sizes(sizes_text)
        configs = grid_configs(config, names, units, sizes, measure, thresholds, mode)
    with _runs_progress(len(configs), "calibrating") as advance:
        ev, _ = evaluate_files(
            inputs,
            truth,
            configs,
            thresholds,
            id_field=id_field,
            text_field=text_field,
            max_text_bytes=max_text_bytes,
            progress=advance,
            keep_pairs=False,
            mode=mode,
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
    if not sizes or min(sizes) < 1 or max(sizes) > MAX_UNITS:
        raise click.BadParameter(
            f"{text!r}: give positive integers, e.g. 2,3,4,5", param_hint="--sizes"
        )
    return list(dict.fromkeys(sizes))


def _print_calibration(result: Calibration, out_file: str) -> None:
    picks = [("winner", result.winner)]
    if result.runner_up is not None:
        picks.append(("runner-up", result.runner_up))
    table = Table(title=f"calibration: {result.objective}, scored {MODE_TEXT[result.mode]}")
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
    console.print(
        f"wrote {out_file}: neardup dedup INPUT... --out DIR --config {out_file}, "
        f"or neardup index create --db DB --config {out_file}"
    )
