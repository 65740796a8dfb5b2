"""The verbs of the public API, exported at the package root (``neardup.deduplicate`` …).

Each is a thin layer over the library: records or files in, plain Python objects out (ids,
not array indices), so a caller needs no internal module. The internals they call may move;
these names and signatures are what the project keeps stable (tests/test_public_api.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from neardup.collection.persistent import Collection
    from neardup.dedup.config import DedupConfig, DedupResult
    from neardup.judge.evaluate import Evaluation

Record = tuple[str, str] | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    """A verified pair of near-duplicates, by id, with the measures of ``pairs.jsonl``.

    ``score`` is the larger of ``score_a_in_b`` and ``score_b_in_a``: the run's measure on
    content shingles (shared templates discounted). ``contained`` says which document holds
    more of the other (``"a_in_b"``, ``"b_in_a"``, or None when the scores are equal or under
    the threshold)."""

    a: str
    b: str
    score: float
    score_a_in_b: float
    score_b_in_a: float
    resemblance: float
    containment_a_in_b: float
    containment_b_in_a: float
    contained: Literal["a_in_b", "b_in_a"] | None


@dataclass(frozen=True, slots=True)
class Cluster:
    """Documents kept as one: ``keep`` is the kept id, ``ids`` every member in input order."""

    ids: list[str]
    keep: str


@dataclass(frozen=True, slots=True)
class Deduplication:
    """What `deduplicate` found, by id.

    ``kept`` lists the ids kept, in input order; ``removed`` maps each removed id to the kept
    id that holds it; ``result`` is the run's full answer (arrays by input index) for callers
    who need the timings, the candidate count or the documents' sizes."""

    pairs: list[DuplicatePair]
    clusters: list[Cluster]
    kept: list[str]
    removed: dict[str, str]
    result: DedupResult


def _items(records: Iterable[Record], id_field: str, text_field: str) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of each record: a pair, or a mapping with the two fields."""
    from neardup.errors import InputError

    for number, record in enumerate(records, 1):
        if isinstance(record, Mapping):
            if text_field not in record:
                raise InputError(f"record {number}: no {text_field!r} field")
            doc_id = record.get(id_field, number)
            text = record[text_field]
        else:
            doc_id, text = record
        if not isinstance(text, str):
            raise InputError(f"record {number}: the text is {type(text).__name__}, not a string")
        yield str(doc_id), text


def deduplicate(
    records: Iterable[Record],
    config: DedupConfig | None = None,
    *,
    id_field: str = "id",
    text_field: str = "text",
) -> Deduplication:
    """Find the near-duplicates among ``records`` and decide which to keep.

    ``records`` are ``(id, text)`` pairs or mappings holding ``id_field`` and ``text_field``
    (a mapping without an id gets its 1-based position); ids must be unique. The rules are
    those of ``neardup dedup``: a document is removed only in favour of a kept one that holds
    it. ``config`` defaults to `DedupConfig`'s defaults.

    >>> found = deduplicate([("a", "the cat sat on the mat today"),
    ...                      ("b", "the cat sat on the mat today"),
    ...                      ("c", "a different text altogether here")])
    >>> found.removed
    {'b': 'a'}
    """
    from neardup.dedup.cluster import cluster_table
    from neardup.dedup.config import DedupConfig
    from neardup.dedup.core import deduplicate as run

    config = config or DedupConfig()
    result = run(_items(records, id_field, text_field), config)
    ids = result.ids
    keep_of = result.keep_of.tolist()
    removed = {ids[d]: ids[k] for d, k in enumerate(keep_of) if k != d}
    kept = [ids[d] for d, k in enumerate(keep_of) if k == d]
    clusters = [
        Cluster([ids[i] for i in c.members.tolist()], ids[c.keep])
        for c in cluster_table(result.labels, result.keepers)
    ]
    return Deduplication(_pairs(result, config.threshold), clusters, kept, removed, result)


def _pairs(result: DedupResult, threshold: float) -> list[DuplicatePair]:
    p, ids = result.pairs, result.ids
    out = []
    for k in range(len(p)):
        s_ab, s_ba = float(p.score_lr[k]), float(p.score_rl[k])
        contained: Literal["a_in_b", "b_in_a"] | None = None
        if max(s_ab, s_ba) >= threshold and s_ab != s_ba:
            contained = "a_in_b" if s_ab > s_ba else "b_in_a"
        out.append(
            DuplicatePair(
                ids[p.left[k]],
                ids[p.right[k]],
                float(p.score[k]),
                s_ab,
                s_ba,
                float(p.resemblance[k]),
                float(p.containment_lr[k]),
                float(p.containment_rl[k]),
                contained,
            )
        )
    return out


def deduplicate_files(
    paths: Sequence[str | Path],
    out: str | Path,
    config: DedupConfig | None = None,
    *,
    id_field: str = "id",
    text_field: str = "text",
    skip_bad: bool = False,
    format: str = "jsonl",
) -> dict[str, Any]:
    """Run ``neardup dedup`` on files: every output written to the directory ``out``.

    ``paths`` are JSONL (plain, ``.gz``, ``.zst``), CSV, Parquet files or directories of
    ``.txt`` / ``.html`` files, or of a format registered with
    ``neardup.io.formats.register``; ``format`` is the outputs' format (``jsonl``,
    ``parquet``, or a registered one that can be written). ``out`` receives ``pairs``,
    ``clusters``, ``kept``, ``removed``, ``summary.json`` and ``report.html``; it replaces
    an earlier run's output only once the whole run has finished. Returns the summary (as
    in ``summary.json``).
    """
    from neardup.dedup.config import DedupConfig
    from neardup.engines.local.pipeline import Inputs, run_dedup

    inputs = Inputs(tuple(str(p) for p in paths), id_field, text_field, skip_bad)
    return run_dedup(inputs, out, config or DedupConfig(), format)


def open_collection(
    url: str, config: DedupConfig | None = None, *, create: bool = False
) -> Collection:
    """The collection stored at ``url``: a SQLite path (or ``sqlite:///PATH``) or a
    ``postgresql://`` URL (``pip install 'neardup[postgres]'``).

    ``create=True`` makes a new, empty collection with ``config`` (the defaults if None);
    otherwise the stored one is opened, and refused if ``config`` is given and differs from
    the one it was made with."""
    from neardup.collection.persistent import Collection
    from neardup.collection.store_url import open_store

    store = open_store(url, must_exist=not create)
    if create:
        return Collection.create(store, config)
    return Collection.open(store, config)


def evaluate(
    inputs: Sequence[str | Path],
    truth: str | Path,
    configs: Sequence[DedupConfig] | None = None,
    thresholds: Sequence[float] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    *,
    id_field: str = "id",
    text_field: str = "text",
) -> Evaluation:
    """Judge dedup settings against labelled data, as ``neardup evaluate`` does.

    ``truth`` is a file of cluster labels (``id``, ``cluster``) for the corpus in ``inputs``,
    or of labelled pairs; with no ``inputs`` it is a pair file holding the texts. Every
    config (default: `DedupConfig`'s defaults) is scored at every threshold: pair
    precision, recall and F1 of its clusters, in `Evaluation.methods`."""
    from neardup.dedup.config import DedupConfig
    from neardup.judge.run import evaluate_files

    configs = list(configs) if configs is not None else [DedupConfig()]
    evaluation, _ = evaluate_files(
        [str(p) for p in inputs],
        str(truth),
        configs,
        sorted(thresholds),
        id_field=id_field,
        text_field=text_field,
    )
    return evaluation
