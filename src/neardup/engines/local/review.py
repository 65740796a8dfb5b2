"""The removals a reader should check first: ``OUT/review.jsonl`` and the report's section.

One record per removed document, weakest first (lowest containment in its keeper as written,
then lowest score): ``id``, ``keeper``, ``containment`` (how much of the removed document its
keeper holds, on all its canonical shingles, nothing discounted), ``score`` (the run's score
of it in the keeper, templates discounted), ``missing`` (the removed text's passages that the
keeper lacks, in canonical form, each cut to ``PASSAGE_CHARS``, at most ``MAX_PASSAGES``) and
``missing_passages`` (how many there are in all).

The measures come from the run's verified pairs; only the removals whose keeper lacks
something (containment below 1) need their texts, canonicalized again ``CHUNK`` at a time.
Only the weakest ``MAX_REVIEWED`` of those get their passages (the list a reader works
through; a run that removes hundreds of thousands would otherwise canonicalize all their
texts a second time): the later ones have ``missing`` and ``missing_passages`` null, their
figures given (``neardup explain ID`` shows any one's passages).
The local engine writes ``review.jsonl``; the Spark engine a ``review/`` directory of the same
records (:mod:`neardup.engines.spark.spark_review`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Container, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.dedup.config import DedupResult, Pairs
from neardup.fingerprints.passages import Passages, shingled_texts
from neardup.text.text_config import TextConfig
from neardup.util.arrays import unordered_pair_codes

MAX_PASSAGES = 10  # missing passages written per removal
PASSAGE_CHARS = 160  # characters of a missing passage written (longer ones are cut: "…")
CHUNK = 256  # removals whose texts are canonicalized at a time
MAX_REVIEWED = 10_000  # removals lacking something that get their missing passages


@dataclass(frozen=True, slots=True)
class Removal:
    """A removed document (index), its keeper, and the keeper's hold on it."""

    doc: int
    keeper: int
    containment: float  # of doc in keeper, on all shingles (as written); NaN: no pair found
    score: float  # the run's score of doc in keeper (NaN: no pair found)

    @property
    def lossless(self) -> bool:
        """The keeper holds every shingle of the removed document."""
        return self.containment == 1.0


def removals(result: DedupResult) -> list[Removal]:
    """Every removal with its measures from the run's pairs, weakest first (containment as
    written, then score, then input order)."""
    keep_of = result.keep_of
    docs = np.flatnonzero(keep_of != np.arange(keep_of.size))
    return ordered_removals(docs, keep_of[docs], result.pairs)


def ordered_removals(docs: np.ndarray, keepers: np.ndarray, pairs: Pairs) -> list[Removal]:
    """The removals of ``docs`` (document numbers in input order) into ``keepers``, with
    their measures from ``pairs``, weakest first (containment, score, input order)."""
    containment, score = _measures(pairs, docs, keepers)
    order = np.lexsort((docs, score, containment))
    return [
        Removal(int(docs[i]), int(keepers[i]), float(containment[i]), float(score[i]))
        for i in order.tolist()
    ]


def _measures(pairs: Pairs, docs: np.ndarray, keepers: np.ndarray) -> tuple[np.ndarray, ...]:
    """Containment and score of each ``docs[i]`` in ``keepers[i]`` from the pair holding
    both (either way round); NaN where no verified pair holds them."""
    containment, score = np.full(docs.size, np.nan), np.full(docs.size, np.nan)
    if not len(pairs) or not docs.size:
        return containment, score
    codes = unordered_pair_codes(pairs.left, pairs.right)
    order = np.argsort(codes, kind="stable")
    wanted = unordered_pair_codes(docs, keepers)
    at = np.minimum(np.searchsorted(codes[order], wanted), codes.size - 1)
    found = codes[order][at] == wanted
    row = order[at][found]
    doc_left = pairs.left[row] == docs[found]
    containment[found] = np.where(doc_left, pairs.containment_lr[row], pairs.containment_rl[row])
    score[found] = np.where(doc_left, pairs.score_lr[row], pairs.score_rl[row])
    return containment, score


def texts_needed(rows: Sequence[Removal], shown: int, reviewed: int = MAX_REVIEWED) -> set[int]:
    """The documents whose texts the review needs: both sides of the first ``reviewed``
    removals that lack something, and of the first ``shown`` (the report's side-by-side
    views)."""
    needed: set[int] = set()
    lossy = 0
    for i, r in enumerate(rows):
        lossy += not r.lossless
        if i < shown or (not r.lossless and lossy <= reviewed):
            needed.update((r.doc, r.keeper))
    return needed


def missing_passages(
    rows: Sequence[Removal],
    texts: Mapping[int, str],
    config: TextConfig,
    reviewed: int | None = None,
) -> Iterator[Passages | None]:
    """For each removal, the passages of the removed text that its keeper lacks (empty when
    lossless; None when a text is not at hand, or after the first ``reviewed`` removals that
    lack something). ``CHUNK`` removals at a time."""
    return PassageFinder(rows, texts, config, reviewed).found()


class PassageFinder:
    """:func:`missing_passages` found while the texts are still being read: a chunk of
    removals goes to the ``pool``'s threads once every text it may use (of the documents
    ``needed``) is at hand (:meth:`read`); :meth:`found` gives the passages in the
    removals' order. Without a pool, each chunk is done by :meth:`found` itself."""

    def __init__(
        self,
        rows: Sequence[Removal],
        texts: Mapping[int, str],
        config: TextConfig,
        reviewed: int | None = None,
        pool: Executor | None = None,
        needed: Container[int] | None = None,
    ) -> None:
        self._texts, self._config, self._pool = texts, config, pool
        self._chunks: list[tuple[Sequence[Removal], list[bool]]] = []
        lossy = 0
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start : start + CHUNK]
            wanted = []
            for r in chunk:
                lossy += not r.lossless
                wanted.append(not r.lossless and (reviewed is None or lossy <= reviewed))
            self._chunks.append((chunk, wanted))
        last_text = [_last_text(c, needed) for c, _ in self._chunks]
        self._ready = sorted(range(len(self._chunks)), key=last_text.__getitem__)
        self._last_text = last_text
        self._started = 0
        self._futures: dict[int, Future[list[Passages | None]]] = {}

    def read(self, documents: int) -> None:
        """The texts of the documents before ``documents`` are at hand: start the chunks
        that need no other."""
        while (
            self._pool is not None
            and self._started < len(self._ready)
            and self._last_text[self._ready[self._started]] < documents
        ):
            k = self._ready[self._started]
            self._futures[k] = self._pool.submit(self._passages, k)
            self._started += 1

    def found(self) -> Iterator[Passages | None]:
        """Each removal's passages, in order (every text is at hand now)."""
        self.read(sys.maxsize)
        for k in range(len(self._chunks)):
            future = self._futures.get(k)
            yield from self._passages(k) if future is None else future.result()

    def _passages(self, k: int) -> list[Passages | None]:
        return _chunk_passages(*self._chunks[k], self._texts, self._config)


def _last_text(chunk: Sequence[Removal], needed: Container[int] | None) -> int:
    """The last document whose text the chunk may use (-1: none)."""
    docs = (d for r in chunk for d in (r.doc, r.keeper))
    return max((d for d in docs if needed is None or d in needed), default=-1)


def _chunk_passages(
    chunk: Sequence[Removal], wanted: Sequence[bool], texts: Mapping[int, str], config: TextConfig
) -> list[Passages | None]:
    """:func:`missing_passages` of one chunk, ``wanted``: the removals to find them for."""
    docs = sorted(
        {d for r, w in zip(chunk, wanted, strict=True) if w for d in (r.doc, r.keeper)}
        & texts.keys()
    )
    number = {d: k for k, d in enumerate(docs)}
    found = [
        w and r.doc in number and r.keeper in number for r, w in zip(chunk, wanted, strict=True)
    ]
    lacking = iter(
        shingled_texts([texts[d] for d in docs], config).lacking(
            [(number[r.doc], number[r.keeper]) for r, f in zip(chunk, found, strict=True) if f]
        )
    )
    return [
        Passages(texts.get(r.doc, ""), ()) if r.lossless else next(lacking) if f else None
        for r, f in zip(chunk, found, strict=True)
    ]


def load_kernels(config: TextConfig) -> None:
    """Load the review's compiled kernels (from numba's cache) by reviewing a short pair,
    e.g. on a core left free while the run still pairs its documents."""
    texts = {0: "the kernels load here", 1: "the kernels load"}
    list(missing_passages([Removal(0, 1, 0.5, 0.5)], texts, config))


def short(passage: str, limit: int = PASSAGE_CHARS) -> str:
    """A passage cut to ``limit`` characters at a space, "…" marking the cut."""
    if len(passage) <= limit:
        return passage
    cut = passage.rfind(" ", limit // 2, limit)
    return passage[: cut if cut > 0 else limit] + " …"


def review_record(
    removal: Removal, ids: Sequence[str] | Mapping[int, str], missing: Passages | None
) -> dict[str, Any]:
    """One line of ``review.jsonl``."""
    return record_of(removal, ids, *missing_fields(missing))


def missing_fields(missing: Passages | None) -> tuple[list[str] | None, int | None]:
    """``missing`` and ``missing_passages`` of a removal's line: its first passages, cut
    short, and how many there are (both None: not found)."""
    if missing is None:
        return None, None
    found = missing.passages()
    return [short(p) for p in found[:MAX_PASSAGES]], len(found)


def record_of(
    removal: Removal,
    ids: Sequence[str] | Mapping[int, str],
    missing: list[str] | None,
    count: int | None,
) -> dict[str, Any]:
    """One line of ``review.jsonl`` from its :func:`missing_fields`."""
    return {
        "id": ids[removal.doc],
        "keeper": ids[removal.keeper],
        "containment": _number(removal.containment),
        "score": _number(removal.score),
        "missing": missing,
        "missing_passages": count,
    }


def review_records(
    ids: Sequence[str],
    keepers: Sequence[str],
    texts: Sequence[str],
    keeper_texts: Sequence[str],
    containment: Sequence[float | None],
    score: Sequence[float | None],
    config: TextConfig,
) -> list[dict[str, Any]]:
    """``review.jsonl`` records of removals given with both texts and the measures of their
    pairs (None: no pair), in the order given (the Spark engine's batches)."""
    n = len(ids)
    rows = [
        Removal(i, n + i, np.nan if c is None else c, np.nan if s is None else s)
        for i, (c, s) in enumerate(zip(containment, score, strict=True))
    ]
    names = [*ids, *keepers]
    by_index = dict(enumerate([*texts, *keeper_texts]))
    found = missing_passages(rows, by_index, config)
    return [review_record(r, names, m) for r, m in zip(rows, found, strict=True)]


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value
