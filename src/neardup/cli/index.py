"""``neardup index``: a persistent collection that new documents are checked against.

``create`` fixes the settings (as ``dedup``'s options or a ``--config`` file); ``add`` and
``query`` read the same inputs as ``dedup``; ``--db`` is a SQLite path (``sqlite:///PATH`` or a
plain path) or a ``postgresql://`` URL. ``--json`` prints one JSON object per line.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import click
from rich.table import Table

from neardup.cli.app import cli, console
from neardup.cli.options import (
    count,
    db_option,
    dedup_config,
    input_options,
    method_options,
    text_options,
)
from neardup.collection.persistent import Collection, Result
from neardup.collection.store_url import open_store
from neardup.errors import InputError, NearDupError, printable
from neardup.io.jsonvalues import id_problem
from neardup.io.readers import BadRecord, Document, read_documents
from neardup.text.text_config import TextConfig

DEFAULT_BATCH = 5000  # a commit writes every index page its batch touched: fewer, larger ones

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
batch_option = click.option(
    "--batch-size",
    type=count(1),
    default=DEFAULT_BATCH,
    show_default=True,
    help="Documents per transaction: a failure keeps the batches before it.",
)


@cli.group()
def index() -> None:
    """A stored collection: every new document is checked against what is stored."""


@contextlib.contextmanager
def _opened(db_url: str) -> Iterator[Collection]:
    store = open_store(db_url, must_exist=True)
    try:
        yield Collection.open(store)
    finally:
        store.close()


@index.command()
@db_option
@method_options
@text_options(default_unit="auto")
def create(
    db_url: str,
    method_name: str,
    params: tuple[str, ...],
    threshold: float,
    measure: str,
    max_bucket: int,
    template_df: int,
    config_file: str | None,
    config: TextConfig,
) -> None:
    """Create an empty collection with its settings (fixed for its lifetime)."""
    settings = dedup_config(
        method_name=method_name,
        params=params,
        config_file=config_file,
        config=config,
        threshold=threshold,
        measure=measure,
        max_bucket=max_bucket,
        template_df=template_df,
    )
    store = open_store(db_url)
    try:
        collection = Collection.create(store, settings)
    finally:
        store.close()
    click.echo(
        f"created collection {collection.config_id} in {db_url}: method {settings.method}, "
        f"{settings.measure} ≥ {settings.threshold}"
    )


@index.command()
@db_option
@click.argument("inputs", nargs=-1, required=True)
@click.option("--upsert", is_flag=True, help="Replace documents whose id is already stored.")
@input_options
@batch_option
@json_option
def add(
    db_url: str,
    inputs: tuple[str, ...],
    upsert: bool,
    id_field: str,
    text_field: str,
    skip_bad: bool,
    max_text_bytes: int,
    batch_size: int,
    as_json: bool,
) -> None:
    """Add documents; report the near-duplicates of each already stored.

    INPUTS are read as by dedup. Each batch is one transaction; record fields other than the
    id and the text are stored as the document's metadata.
    """
    docs = _storable(_read(inputs, id_field, text_field, skip_bad, max_text_bytes), skip_bad)
    added = with_duplicates = 0
    with _opened(db_url) as collection, _kept_on_failure(lambda: added):
        for batch in _batches(docs, batch_size):
            items = [(d.id, d.text, _meta(d, id_field, text_field)) for d in batch]
            results = collection.add(items, upsert=upsert)
            added += len(results)
            with_duplicates += sum(bool(r.duplicates) for r in results)
            _print_results(results, as_json)
    if not as_json:
        console.print(f"added {added} documents; {with_duplicates} have near-duplicates stored")


@index.command()
@db_option
@click.argument("inputs", nargs=-1, required=True)
@input_options
@batch_option
@json_option
def query(
    db_url: str,
    inputs: tuple[str, ...],
    id_field: str,
    text_field: str,
    skip_bad: bool,
    max_text_bytes: int,
    batch_size: int,
    as_json: bool,
) -> None:
    """The stored near-duplicates of each input document (nothing is stored)."""
    docs = _read(inputs, id_field, text_field, skip_bad, max_text_bytes)
    with _opened(db_url) as collection:
        for batch in _batches(docs, batch_size):
            found = collection.query([d.text for d in batch])
            results = [Result(d.id, r.duplicates) for d, r in zip(batch, found, strict=True)]
            _print_results(results, as_json, show_empty=True)


@index.command()
@db_option
@click.argument("ids", nargs=-1, required=True)
@json_option
def remove(db_url: str, ids: tuple[str, ...], as_json: bool) -> None:
    """Remove documents by id (ids not stored are named on stderr)."""
    with _opened(db_url) as collection:
        removed = collection.remove(list(ids))
    missing = sorted(set(ids) - set(removed))
    if as_json:
        click.echo(json.dumps({"removed": removed, "not_stored": missing}))
    else:
        console.print(f"removed {len(removed)} documents")
    if missing:
        click.echo(printable(f"neardup: warning: not stored: {', '.join(missing)}"), err=True)


@index.command()
@db_option
@json_option
def stats(db_url: str, as_json: bool) -> None:
    """How many documents the collection holds, and its settings."""
    with _opened(db_url) as collection:
        figures = collection.stats()
    if as_json:
        click.echo(json.dumps(figures))
        return
    table = Table(title=f"collection {db_url}")
    table.add_column("")
    table.add_column("", justify="right")
    for name, value in figures.items():
        table.add_row(name.replace("_", " "), str(value))
    console.print(table)


@index.command()
@db_option
def check(db_url: str) -> None:
    """Check the whole collection file for damage (SQLite: PRAGMA integrity_check)."""
    store = open_store(db_url, must_exist=True)
    try:
        problems = store.check() if hasattr(store, "check") else None
    finally:
        store.close()
    if problems is None:
        click.echo(f"{db_url}: the server checks its own pages; nothing to check here")
    elif problems:
        shown = "; ".join(problems[:3]) + (
            f" and {len(problems) - 3} more" if len(problems) > 3 else ""
        )
        raise InputError(f"{db_url}: the collection file is damaged: {shown}")
    else:
        click.echo(f"{db_url}: ok")


@contextlib.contextmanager
def _kept_on_failure(stored: Callable[[], int]) -> Iterator[None]:
    """On an error, say what stays stored: the batches committed before the failing one."""
    try:
        yield
    except NearDupError:
        if not stored():
            raise
        click.echo(
            f"neardup: the failing batch was not stored; {stored()} documents of earlier "
            "batches were",
            err=True,
        )
        raise


def _read(
    inputs: Sequence[str], id_field: str, text_field: str, skip_bad: bool, max_text_bytes: int
) -> Iterator[Document]:
    """The documents of the inputs; bad records skipped (--skip-bad) and empty inputs and
    unread files of directories are named on stderr."""
    return read_documents(
        list(inputs),
        id_field=id_field,
        text_field=text_field,
        skip_bad=skip_bad,
        on_bad=lambda bad: click.echo(printable(f"neardup: warning: skipped {bad}"), err=True),
        max_text_bytes=max_text_bytes,
        on_skip=lambda notice: click.echo(printable(f"neardup: warning: {notice}"), err=True),
    )


def _storable(docs: Iterable[Document], skip_bad: bool) -> Iterator[Document]:
    """The documents a collection can store; the others are bad records (an id with a control
    character or too long), skipped with --skip-bad."""
    for doc in docs:
        problem = id_problem(doc.id)  # texts and records: the readers' rule is the same
        if problem is None:
            yield doc
            continue
        bad = BadRecord(doc.source, doc.line, problem)
        if not skip_bad:
            raise InputError(str(bad))
        click.echo(printable(f"neardup: warning: skipped {bad}"), err=True)


def _batches(docs: Iterable[Document], size: int) -> Iterator[list[Document]]:
    iterator = iter(docs)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _meta(doc: Document, id_field: str, text_field: str) -> dict[str, Any] | None:
    """The record's other fields, or None when it has none."""
    rest = {k: v for k, v in doc.record.items() if k not in (id_field, text_field)}
    return rest or None


def _print_results(results: Sequence[Result], as_json: bool, show_empty: bool = False) -> None:
    """JSON lines (one per document), or one line per document with near-duplicates."""
    for result in results:
        if as_json:
            click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
        elif result.duplicates or show_empty:
            found = ", ".join(f"{d.id} ({d.score:.3f})" for d in result.duplicates) or "—"
            click.echo(f"{result.id}\t{found}")
