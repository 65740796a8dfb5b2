"""Commands on a finished dedup run: explain."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from neardup.cli.app import cli, console
from neardup.engines.local.explain import MAX_PASSAGES, Explanation, explain
from neardup.engines.local.review import short
from neardup.engines.local.runread import open_run
from neardup.fingerprints.passages import Passages

run_option = click.option(
    "--run",
    "run_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Output directory of a finished neardup dedup run (its --out).",
)


@cli.command(name="explain")
@click.argument("id_a")
@click.argument("id_b")
@run_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def explain_command(id_a: str, id_b: str, run_dir: str, as_json: bool) -> None:
    """Why a dedup run kept or removed documents ID_A and ID_B: its figures and its rule.

    Prints containment both ways as written (all canonical shingles) and as scored (the
    run's scores, templates discounted), the passages of each that the other lacks, the
    template shingles, and the decision the run made (from removed's _duplicate_of).
    """
    if id_a == id_b:
        raise click.UsageError("give two different ids")
    result = explain(open_run(run_dir), id_a, id_b)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    else:
        _print(result)


def _print(e: Explanation) -> None:
    verdict = {
        "a_removed_into_b": f"A ({e.a.id}) was removed into B ({e.b.id})",
        "b_removed_into_a": f"B ({e.b.id}) was removed into A ({e.a.id})",
        "both_kept": "neither was removed into the other",
    }[e.decision]
    console.print(f"[bold]Decision:[/bold] {escape(verdict)} [dim]({e.decision})[/dim]")
    console.print(f"[bold]Rule:[/bold] {escape(e.rule)}")
    if e.guarantee:
        console.print(f"[dim]The run's guarantee: {escape(e.guarantee)}[/dim]")
    table = Table(title=f"A = {e.a.id}, B = {e.b.id}")
    table.add_column("measure")
    table.add_column("A in B", justify="right")
    table.add_column("B in A", justify="right")
    w, s = e.written, e.scored
    table.add_row(
        "containment as written", f"{w.containment_a_in_b:.4f}", f"{w.containment_b_in_a:.4f}"
    )
    table.add_row(
        f"score as scored ({e.measure}, {e.scores_from})",
        f"{s.score_a_in_b:.4f}",
        f"{s.score_b_in_a:.4f}",
    )
    table.add_row("shingles (A / B), shared", f"{w.a} / {w.b}", str(w.shared))
    table.add_row("template shingles", str(e.a.template_shingles), str(e.b.template_shingles))
    table.add_row(
        "rare words (names): lacking in the other / all / its own",
        f"{len(e.a.names_lacking)} / {e.a.rare_words} / {e.a.own_words}",
        f"{len(e.b.names_lacking)} / {e.b.rare_words} / {e.b.own_words}",
    )
    table.add_row("removed into", e.a.removed_into or "—", e.b.removed_into or "—")
    console.print(table)
    line = (
        f"threshold {e.threshold:g}, guard {e.guard:g}, resemblance as written {w.resemblance:.4f}"
    )
    console.print(escape(line))
    if e.pair is not None:
        numbers = ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
            for k, v in e.pair.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        )
        console.print(f"pairs record: {escape(numbers)}")
    if not e.templates_known:
        console.print("[dim]the run wrote no templates.npy: template shingles unknown[/dim]")
    for note in e.notes:
        console.print(f"[dim]{escape(note)}[/dim]")
    for label, side in (("A", e.a), ("B", e.b)):
        if side.names_lacking:
            words = ", ".join(side.names_lacking[:MAX_PASSAGES])
            more = (
                f" … {len(side.names_lacking) - MAX_PASSAGES} more"
                if len(side.names_lacking) > MAX_PASSAGES
                else ""
            )
            console.print(f"{label}'s rare words the other lacks: {escape(words)}{more}")
    for title, passages in (
        ("A's passages that B lacks", e.a.lacking),
        ("B's passages that A lacks", e.b.lacking),
        ("A's template passages", e.a.template),
        ("B's template passages", e.b.template),
    ):
        _print_passages(title, passages)


def _print_passages(title: str, passages: Passages) -> None:
    found = passages.passages()
    console.print(f"\n[bold]{escape(title)}[/bold] ({len(found)}, canonical form):")
    for passage in found[:MAX_PASSAGES]:
        console.print(f"  · {escape(short(passage))}")
    if len(found) > MAX_PASSAGES:
        console.print(f"  … {len(found) - MAX_PASSAGES} more")
