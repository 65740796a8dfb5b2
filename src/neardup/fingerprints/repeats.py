"""Texts of a batch that repeat an earlier text of the batch byte for byte.

A corpus may hold many copies of one text (a licence in every package of a family, a
page mirrored under several names). A text's fingerprints and words depend on its own bytes
alone, so a copy's are those of its first occurrence: the batch is fingerprinted without
its copies (:func:`distinct_spans`), then every document is given its text's segments
(:func:`neardup.util.arrays.gather_segments`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neardup.fingerprints.hashing import fingerprint_spans

__all__ = ["distinct_spans", "first_copies", "first_copies_of"]


def first_copies(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Per document of ``text[starts[d]:ends[d]]`` (UTF-8), the first document with the same
    bytes (itself if none is earlier); None when no text repeats.

    Only texts whose byte length and 64-bit hash both repeat are compared (as bytes): a
    batch without copies costs a sort of its lengths and a hash of the texts whose length
    another shares."""
    lengths = ends - starts
    if lengths.size < 2:
        return None
    maybe = _repeated(lengths)
    if maybe.size:
        maybe = maybe[_repeated(fingerprint_spans(text, starts[maybe], ends[maybe]))]
    if not maybe.size:
        return None
    first = np.arange(lengths.size, dtype=np.int64)
    seen: dict[bytes, int] = {}
    for d, lo, hi in zip(maybe.tolist(), starts[maybe].tolist(), ends[maybe].tolist(), strict=True):
        first[d] = seen.setdefault(text[lo:hi].tobytes(), d)
    return first if (first[maybe] != maybe).any() else None


def _repeated(keys: np.ndarray) -> np.ndarray:
    """The positions, increasing, of the ``keys`` another position holds too."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    same = ordered[1:] == ordered[:-1]  # a key shared with the next in that order
    return np.sort(order[np.r_[same, False] | np.r_[False, same]])


def first_copies_of(texts: Sequence[str]) -> np.ndarray | None:
    """:func:`first_copies` of texts given as strings."""
    seen: dict[str, int] = {}
    first = np.fromiter(
        (seen.setdefault(t, d) for d, t in enumerate(texts)), dtype=np.int64, count=len(texts)
    )
    return first if len(seen) < len(texts) else None


def distinct_spans(first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct, source)`` of :func:`first_copies`' answer: the documents that are their
    text's first occurrence (increasing), and per document the position of its text's first
    occurrence among them."""
    own = first == np.arange(first.size)
    distinct = np.flatnonzero(own)
    rank = np.cumsum(own) - 1
    return distinct, rank[first]
