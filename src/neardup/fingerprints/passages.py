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

from neardup.fingerprints.passage_kernels import lacking_ranges, merged_ranges
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
    stores it) and its character range ``[start, end)``."""

    text: str
    fingerprints: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def lacking(self, other: Shingled) -> Passages:
        """The passages made of this text's shingles that ``other`` does not hold."""
        both = ShingledTexts(
            [self.text, other.text],
            np.concatenate((self.fingerprints, other.fingerprints)),
            np.concatenate((self.starts, other.starts)),
            np.concatenate((self.ends, other.ends)),
            np.array([0, self.fingerprints.size, self.fingerprints.size + other.fingerprints.size]),
        )
        return both.lacking([(0, 1)])[0]

    def held(self, fingerprints: np.ndarray) -> Passages:
        """The passages made of this text's shingles among ``fingerprints``."""
        return marked(self, members(self.fingerprints, unique(fingerprints)))


@dataclass(frozen=True, slots=True, eq=False)
class ShingledTexts:
    """Canonical texts (decoded when asked for) and every shingle of each in text order:
    its fingerprint and its character range in its text, text ``d``'s at
    ``offsets[d]:offsets[d + 1]``."""

    texts: Sequence[str | bytes]
    fingerprints: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    offsets: np.ndarray

    def text(self, d: int) -> str:
        text = self.texts[d]
        return text.decode() if isinstance(text, bytes) else text

    def __getitem__(self, d: int) -> Shingled:
        lo, hi = self.offsets[d], self.offsets[d + 1]
        return Shingled(
            self.text(d), self.fingerprints[lo:hi], self.starts[lo:hi], self.ends[lo:hi]
        )

    def lacking(self, pairs: Sequence[tuple[int, int]]) -> list[Passages]:
        """For each ``(a, b)`` of ``pairs``: the passages made of text ``a``'s shingles that
        text ``b`` does not hold (one compiled pass over every pair)."""
        if not pairs:
            return []
        held = np.array([a for a, _ in pairs], dtype=np.int64)
        holder = np.array([b for _, b in pairs], dtype=np.int64)
        at, count, starts, ends = lacking_ranges(
            self.fingerprints, self.starts, self.ends, self.offsets, held, holder
        )
        return [
            Passages(
                self.text(a),
                tuple(zip(starts[lo:hi].tolist(), ends[lo:hi].tolist(), strict=True)),
            )
            for a, lo, hi in zip(
                held.tolist(), at[:-1].tolist(), (at[:-1] + count).tolist(), strict=True
            )
        ]


def shingled(texts: Sequence[str], config: TextConfig | None = None) -> list[Shingled]:
    """Each text canonicalized and shingled in one batch, every shingle kept with its place."""
    batch = shingled_texts(texts, config)
    return [batch[d] for d in range(len(texts))]


def shingled_texts(texts: Sequence[str], config: TextConfig | None = None) -> ShingledTexts:
    """:func:`shingled` as one batch."""
    config = config or TextConfig()
    with threads_for(sum(map(len, texts))):
        tokens = canonicalize_batch(list(texts), config.canon, config.shingle.unit)
        hashes, starts, ends, offsets = shingle_fingerprints(tokens, config.shingle)
    buf, byte_bounds = tokens.buf, tokens.doc_offsets
    text_starts = byte_bounds[:-1]  # where each text starts, in the unit of starts and ends
    if np.any(buf >= 0x80):  # bytes -> characters (ASCII: the same)
        char_at = np.concatenate(([0], np.cumsum((buf & 0xC0) != 0x80)))
        text_starts, starts, ends = char_at[text_starts], char_at[starts], char_at[ends]
    first = np.repeat(text_starts, np.diff(offsets))  # each shingle's text's start
    return ShingledTexts(
        [buf[byte_bounds[d] : byte_bounds[d + 1]].tobytes() for d in range(len(texts))],
        hashes,
        starts - first,
        ends - first,
        offsets,
    )


def marked(doc: Shingled, mask: np.ndarray) -> Passages:
    """The passages of ``doc`` covered by its shingles where ``mask``, merged."""
    starts, ends = merged_ranges(doc.starts, doc.ends, mask)
    return Passages(doc.text, tuple(zip(starts.tolist(), ends.tolist(), strict=True)))


def _passages(
    tokens: TokenBatch, d: int, starts: np.ndarray, ends: np.ndarray, shared: np.ndarray
) -> Passages:
    base = tokens.doc_offsets[d]
    raw = tokens.buf[base : tokens.doc_offsets[d + 1]]
    # byte offset -> character offset within the document's canonical text
    char_at = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80)))
    merged = zip(*merged_ranges(starts - base, ends - base, shared), strict=True)
    spans = tuple((int(char_at[s]), int(char_at[e])) for s, e in merged)
    return Passages(raw.tobytes().decode(), spans)
