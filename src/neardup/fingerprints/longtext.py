"""The shingle set of one very long text, tokenized and hashed window by window.

The fused kernel (``fingerprints.fingerprint_kernels``) holds a whole document's canonical
bytes, its
tokens (16 bytes each), its shingle hashes and a sort's buckets at once: about seven times
the text. For a text of many megabytes this module gives the same ``(values, counts)``
while holding only one window of it at a time, plus the distinct fingerprints found so far.

Windows are cut at a space of the text (never inside a token). Each window after the first
is tokenized from a little earlier (an overlap of at least ``size`` tokens), so that the
shingles crossing a cut are found whole; every shingle is taken from exactly one window by
its index in the whole text's token sequence (which also keeps the ``step``). This equals
the whole-text result when no Han clause break (``BREAK``) joins two tokens and each
window holds a token other than a lone Han character (the text is then one segment shingled
``size`` tokens at a time); otherwise, or when no space is found near a cut, the caller
falls back to the whole text at once (:func:`windowed_fingerprints` returns ``None``).
"""

from __future__ import annotations

import numpy as np

from neardup.fingerprints.merge_kernels import merge_counted
from neardup.fingerprints.shingle_kernels import shingle_hashes, shingle_offsets, unique_per_doc
from neardup.text.tokenize_kernels import BREAK, SEPARATOR, tokenize_batch

LONG_TEXT = 16 * 2**20  # texts of more UTF-8 bytes are fingerprinted window by window
WINDOW = 4 * 2**20  # bytes of text per window
OVERLAP = 2**16  # bytes tokenized again before a window's start
_SEARCH = 2**20  # how far back from a cut a space is looked for
_SPACE = 0x20
_MERGE_AT = 2**22  # pending fingerprints merged into the result past this many


def windowed_fingerprints(
    tokenizer: tuple[np.ndarray, ...],
    d: int,
    split_han: bool,
    shape: tuple[int, int, int],
    hashing: tuple[int, np.uint64],
    window: int = WINDOW,
    overlap: int = OVERLAP,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Document ``d``'s sorted distinct word-shingle fingerprints and how often each occurs
    (uint64, uint32), as the fused kernel gives them, or ``None`` when the windows cannot be
    shown to give the same (see the module docstring).

    ``tokenizer``: ``(text, starts, ends, table, fold, expansions, stops, joiners)`` of
    :func:`~neardup.text.tokenize_kernels.tokenize_batch`; ``shape``: (size, step, Han size);
    ``hashing``: (kind, seed), checked.
    """
    text, starts, ends, table, fold, expansions, stops, joiners = tokenizer
    if table[_SPACE] != SEPARATOR:
        return None
    cuts = _cuts(text, int(starts[d]), int(ends[d]), window)
    if cuts is None:
        return None
    size, step, _ = shape
    found = _Distinct()
    cut_token = 0  # index of the first token at or after the window's cut in the whole text
    for w in range(len(cuts) - 1):
        cut, stop = cuts[w], cuts[w + 1]
        begin = cut if w == 0 else _overlap_start(text, cuts[w - 1], cut - overlap)
        lo = np.array([begin, begin], dtype=np.int64)
        hi = np.array([cut, stop], dtype=np.int64)
        buf, _, tok_s, tok_e, tok_offsets = tokenize_batch(
            text, lo, hi, table, fold, expansions, stops,
            np.repeat(joiners[d : d + 1], 2), split_han, 1,
        )  # fmt: skip
        before = int(tok_offsets[1])  # tokens of the overlap, before the cut
        tokens = int(tok_offsets[2] - tok_offsets[1])
        if (w > 0 and before < size) or tokens < before + size:
            return None
        own = buf[int(tok_s[tok_offsets[1]]) :]
        if np.any(own == BREAK) or not np.any((own < 0x80) & (own != _SPACE)):
            return None  # a Han clause break, or possibly only Han tokens: not one segment
        window_tokens = (
            buf, np.array([0, buf.size], dtype=np.int64), tok_s[tok_offsets[1] :],
            tok_e[tok_offsets[1] :], np.array([0, tokens], dtype=np.int64), np.zeros(1, np.bool_),
        )  # fmt: skip
        every = (size, 1, shape[2])  # every shingle; the step is kept by global index below
        offsets = shingle_offsets(window_tokens, *every)
        hashes = shingle_hashes(window_tokens, offsets, *every, *hashing)
        first = cut_token - before  # the whole text's index of the window's token 0
        index = np.arange(first, first + hashes.size, dtype=np.int64)
        take = index % step == 0
        if w > 0:
            take &= index + size - 1 >= cut_token  # shingles ending before the cut: taken
        found.add(hashes[take])
        cut_token += tokens - before
    return found.result()


def _cuts(text: np.ndarray, lo: int, hi: int, window: int) -> list[int] | None:
    """``lo``, a space about every ``window`` bytes, ``hi``; ``None`` when a stretch of
    ``_SEARCH`` bytes has no space."""
    cuts = [lo]
    while hi - cuts[-1] > window + window // 2:
        at = _space_before(text, max(cuts[-1] + 1, cuts[-1] + window - _SEARCH), cuts[-1] + window)
        if at is None:
            return None
        cuts.append(at)
    cuts.append(hi)
    return cuts


def _overlap_start(text: np.ndarray, previous: int, at: int) -> int:
    """Where a window is tokenized from: the last space at or before ``at`` and after the
    previous cut, else the previous cut itself (a space, or the text's start)."""
    if at <= previous:
        return previous
    found = _space_before(text, max(previous, at - _SEARCH), at + 1)
    return previous if found is None else found


def _space_before(text: np.ndarray, lo: int, hi: int) -> int | None:
    """The last position in ``[lo, hi)`` holding a space, or ``None``."""
    found = np.flatnonzero(text[lo:hi] == _SPACE)
    return lo + int(found[-1]) if found.size else None


class _Distinct:
    """Sorted distinct values and their counts, gathered from many arrays: each array's set
    made by the compiled sort, the sets merged in pairs once they hold more than the result
    so far (so each value is merged a few times, not once per window)."""

    def __init__(self) -> None:
        self._values = np.empty(0, dtype=np.uint64)
        self._counts = np.empty(0, dtype=np.uint32)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._held = 0

    def add(self, values: np.ndarray) -> None:
        if not values.size:
            return
        distinct, _, counts = unique_per_doc(
            values, np.array([0, values.size], dtype=np.int64), overwrite=True
        )  # views of the window's arrays: copied, so that those are not held until merged
        self._pending.append((distinct.copy(), counts.copy()))
        self._held += distinct.size
        if self._held > max(_MERGE_AT, self._values.size):
            self._merge()

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        self._merge()
        return self._values, self._counts

    def _merge(self) -> None:
        sets = [*self._pending, (self._values, self._counts)]
        self._pending, self._held = [], 0
        while len(sets) > 1:
            sets = [
                merge_counted(*sets[k], *sets[k + 1]) if k + 1 < len(sets) else sets[k]
                for k in range(0, len(sets), 2)
            ]
        self._values, self._counts = sets[0]
