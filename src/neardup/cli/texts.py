"""Commands on one or two texts: compare, shingles, and the list of methods."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
import numpy as np
from rich.table import Table
from rich.text import Text

from neardup.cli.app import cli, console
from neardup.cli.options import bad_options, explicit_settings, text_options
from neardup.dedup import DedupConfig
from neardup.dedup.compare import Comparison, MethodEstimate, compare_texts
from neardup.dedup.configfile import merge_config, read_config
from neardup.engines.local.runread import open_run
from neardup.errors import InputError
from neardup.fingerprints.measures import Overlap
from neardup.fingerprints.passages import Passages
from neardup.fingerprints.shingles import shingles
from neardup.io.text_input import read_text
from neardup.methods import METHOD_NAMES, describe_methods, get_method, parse_params
from neardup.text.text_config import TextConfig

SHOWN_CHARS = 3000  # longer canonical texts are cut in the human output of compare


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
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Dedup settings file (as neardup dedup --config takes): its text settings and "
    "measure; options given explicitly override them.",
)
@click.option(
    "--run",
    "run_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Output directory of a neardup dedup run: its settings, and its template shingles "
    "discounted in the score.",
)
@text_options(default_unit="auto")
def compare(
    file_a: str | None,
    file_b: str | None,
    text_a: str | None,
    text_b: str | None,
    as_json: bool,
    method_name: str | None,
    params: tuple[str, ...],
    config_file: str | None,
    run_dir: str | None,
    config: TextConfig,
) -> None:
    """Compare two texts as dedup does: resemblance, containment, Dice, dedup's score.

    Resemblance, containment both ways, Dice, shared shingles, and the score dedup gives the
    pair (its defaults, --config or a --run's).

    The score discounts template shingles only with --run: templates are what many
    documents of a corpus share, and two texts alone are no corpus.

    FILE_A and FILE_B are paths, or - for standard input; or give --text-a / --text-b.
    """
    if params and method_name is None:
        raise click.UsageError("--param needs --method")
    if config_file is not None and run_dir is not None:
        raise click.UsageError("give --config or --run, not both")
    settings, template = _settings(config, config_file, run_dir)
    with bad_options():
        method = (
            get_method(method_name, settings.text, **parse_params(params)) if method_name else None
        )
    files = iter(f for f in (file_a, file_b) if f is not None)
    a, name_a = _text_argument(text_a, files, "A")
    b, name_b = _text_argument(text_b, files, "B")
    if next(files, None) is not None:
        raise click.UsageError("give two texts: two files, or files and --text-a/--text-b")
    result = compare_texts(
        a, b, settings, labels=(name_a, name_b), method=method, template=template
    )
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    else:
        _print_comparison(result, name_a, name_b)


def _settings(
    text: TextConfig, config_file: str | None, run_dir: str | None
) -> tuple[DedupConfig, np.ndarray | None]:
    """Dedup's settings for compare: its defaults, a --config file's or a --run's (with the
    run's template fingerprints), with the text options given explicitly over them."""
    template = None
    if run_dir is not None:
        run = open_run(run_dir)
        base, template = run.config, run.template
    elif config_file is not None:
        base = read_config(config_file)
    else:
        base = DedupConfig()
    explicit = {s for s in explicit_settings() if s.startswith("text.")}
    settings = merge_config(base, DedupConfig(text=text), explicit)
    if settings.text != base.text:  # other shingles: the run's template fingerprints do not apply
        template = None
    return settings, template


def _text_argument(inline: str | None, files: Any, label: str) -> tuple[str, str]:
    if inline is not None:
        try:
            inline.encode("utf-8")
        except UnicodeEncodeError as exc:  # the shell's bytes were not UTF-8 (surrogateescape)
            raise InputError(
                f"--text-{label.lower()}: not valid UTF-8 at character {exc.start}"
            ) from None
        return inline, f"text {label}"
    path = next(files, None)
    if path is None:
        raise click.UsageError(f"text {label} is missing: give a file, - or --text-{label.lower()}")
    return read_text(path), ("<stdin>" if path == "-" else path)


def _print_comparison(result: Comparison, name_a: str, name_b: str) -> None:
    o = result.overlap
    table = Table(title="Similarity (all canonical shingles, as written)", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("resemblance (Jaccard)", f"{o.resemblance:.4f}")
    table.add_row("containment of A in B", f"{o.containment_a_in_b:.4f}")
    table.add_row("containment of B in A", f"{o.containment_b_in_a:.4f}")
    table.add_row("Dice", f"{o.dice:.4f}")
    table.add_row("shared shingles, % of A", f"{o.shared_percent:.1f}")
    table.add_row("shingles A / B / shared", f"{o.a} / {o.b} / {o.shared}")
    if result.scores is not None:
        found = result.template_shingles
        table.add_row("dedup's score of A in B", f"{result.scores.score_a_in_b:.4f}")
        table.add_row("dedup's score of B in A", f"{result.scores.score_b_in_a:.4f}")
        if found is not None:
            table.add_row("template shingles of A / B", f"{found[0]} / {found[1]}")
        table.caption = f"dedup's score: {result.measure} as dedup scores the pair, " + (
            "the run's template shingles discounted" if found else "alone: no template"
        )
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
