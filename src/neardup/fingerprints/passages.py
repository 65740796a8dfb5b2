"""Which parts of two texts they share: the shingles of each found in the other, as ranges.

Used to show a reader *why* two texts are near-duplicates (compare, reports), and what one
lacks of the other (explain, the review list): :func:`shingled` keeps each shingle's place,
:func:`marked` merges the places of any chosen shingles into passages. Ranges are in the
canonical text, where shingles live; merged so that overlapping shingles form passages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup.fingerprints.shingle_kernels import unique_per_doc
from neardup.fingerprints.shingles import shingle_fingerprints
from neardup.text.canon import TokenBatch, canonicalize_batch
from neardup.text.text_config import TextConfig
from neardup.util.arrays import unique
from neardup.util.kernels import threads_for


@dataclass(frozen=True, slots=True)
class Passages:
    """A canonical text and the character ranges ``[start, end)`` it shares with the other."""

    text: str
    spans: tuple[tuple[int, int], ...]

    def passages(self) -> list[str]:
        """The shared passages' texts, in order."""
        return [self.text[s:e] for s, e in self.spans]


def shared_passages(a: str, b: str, config: TextConfig | None = None) -> tuple[Passages, Passages]:
    """The passages of ``a`` found in ``b`` and of ``b`` found in ``a``."""
    config = config or TextConfig()
    with threads_for(len(a) + len(b)):
        tokens = canonicalize_batch([a, b], config.canon, config.shingle.unit)
        hashes, starts, ends, offsets = shingle_fingerprints(tokens, config.shingle)
    docs = [slice(offsets[d], offsets[d + 1]) for d in (0, 1)]
    sets = [unique(hashes[docs[d]]) for d in (0, 1)]
    return tuple(  # type: ignore[return-value]
        _passages(tokens, d, starts[docs[d]], ends[docs[d]], members(hashes[docs[d]], sets[1 - d]))
        for d in (0, 1)
    )


def members(values: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Which of ``values`` are in ``distinct`` (sorted, no repeats): ``np.isin``'s answer.

    The values are searched in sorted order, so that each search starts where the last one
    ended: ``np.isin`` sorts both arrays together, and searching the values in text order
    jumps about the set; on the shingles of a text of many megabytes either is several
    times slower."""
    if not distinct.size:
        return np.zeros(values.size, dtype=bool)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    at = np.minimum(np.searchsorted(distinct, ordered), distinct.size - 1)
    found = np.empty(values.size, dtype=bool)
    found[order] = distinct[at] == ordered
    return found


@dataclass(frozen=True, slots=True, eq=False)
class Shingled:
    """A canonical text and every shingle of it in text order: its fingerprint (as a run
    stores it) and its character range ``[start, end)``; ``distinct``: the sorted set."""

    text: str
    fingerprints: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    distinct: np.ndarray

    def lacking(self, other: Shingled) -> Passages:
        """The passages made of this text's shingles that ``other`` does not hold."""
        return marked(self, ~members(self.fingerprints, other.distinct))

    def held(self, fingerprints: np.ndarray) -> Passages:
        """The passages made of this text's shingles among ``fingerprints``."""
        return marked(self, np.isin(self.fingerprints, fingerprints))


def shingled(texts: Sequence[str], config: TextConfig | None = None) -> list[Shingled]:
    """Each text canonicalized and shingled in one batch, every shingle kept with its place."""
    config = config or TextConfig()
    with threads_for(sum(map(len, texts))):
        tokens = canonicalize_batch(list(texts), config.canon, config.shingle.unit)
        hashes, starts, ends, offsets = shingle_fingerprints(tokens, config.shingle)
        sets, set_offsets, _ = unique_per_doc(hashes, offsets)
    buf = tokens.buf
    char_at = np.concatenate(([0], np.cumsum((buf & 0xC0) != 0x80)))  # byte -> character
    out = []
    for d in range(len(texts)):
        base, end = int(tokens.doc_offsets[d]), int(tokens.doc_offsets[d + 1])
        lo, hi = offsets[d], offsets[d + 1]
        first = char_at[base]
        out.append(
            Shingled(
                buf[base:end].tobytes().decode(),
                hashes[lo:hi],
                char_at[starts[lo:hi]] - first,
                char_at[ends[lo:hi]] - first,
                sets[set_offsets[d] : set_offsets[d + 1]],
            )
        )
    return out


def marked(doc: Shingled, mask: np.ndarray) -> Passages:
    """The passages of ``doc`` covered by its shingles where ``mask``, merged."""
    return Passages(doc.text, tuple(_merge(doc.starts[mask], doc.ends[mask])))


def _passages(
    tokens: TokenBatch, d: int, starts: np.ndarray, ends: np.ndarray, shared: np.ndarray
) -> Passages:
    base = tokens.doc_offsets[d]
    raw = tokens.buf[base : tokens.doc_offsets[d + 1]]
    # byte offset -> character offset within the document's canonical text
    char_at = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80)))
    merged = _merge(starts[shared] - base, ends[shared] - base)
    spans = tuple((int(char_at[s]), int(char_at[e])) for s, e in merged)
    return Passages(raw.tobytes().decode(), spans)


def _merge(starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int]]:
    """Union of byte ranges, as sorted disjoint ranges."""
    if starts.size == 0:
        return []
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    new = np.concatenate(([True], s[1:] > e[:-1]))
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [s.size - 1]))
    return list(zip(s[first].tolist(), e[last].tolist(), strict=True))
