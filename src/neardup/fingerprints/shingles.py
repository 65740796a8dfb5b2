"""Texts → shingle fingerprint SETS, for a whole batch at once (docs/methods.md).

The batch result is one flat uint64 array of every document's distinct fingerprints (sorted)
plus per-document offsets — the input of every signature method. All per-shingle work is
compiled; Python only touches each document once.

Short texts: a text with fewer units than the shingle size gives exactly one shingle made of
all its units; a text with no tokens after canonicalization gives an empty set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from neardup.fingerprints.fingerprint_kernels import fingerprint_texts
from neardup.fingerprints.hashing import fingerprint_spans, kernel_hash
from neardup.fingerprints.longtext import LONG_TEXT, OVERLAP, WINDOW, windowed_fingerprints
from neardup.fingerprints.shingle_kernels import (
    HAN_MIX,
    HAN_SHIFT,
    HAN_TOP,
    shingle_hashes,
    shingle_offsets,
    shingle_spans,
    unique_per_doc,
)
from neardup.fingerprints.shingle_kernels import mark_han as _mark_han
from neardup.fingerprints.word_kernels import word_sets, word_sets_of
from neardup.text import canon
from neardup.text.canon import TokenBatch, canonicalize_batch
from neardup.text.text_config import ShingleConfig, TextConfig
from neardup.util.arrays import kept_segments
from neardup.util.kernels import threads_for


@dataclass(frozen=True, slots=True, eq=False)
class FingerprintBatch:
    """Distinct shingle fingerprints of many documents: ``values[offsets[d]:offsets[d+1]]``.

    Each document's values are sorted; ``counts`` (same layout) says how often each shingle
    occurs in its document (the set semantics ignore it; weighted methods use it).
    """

    values: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return self.offsets.size - 1

    def __getitem__(self, d: int) -> np.ndarray:
        return self.values[self.offsets[d] : self.offsets[d + 1]]

    def sizes(self) -> np.ndarray:
        """Number of distinct shingles of every document."""
        return np.diff(self.offsets)

    def take(self, keep: np.ndarray) -> FingerprintBatch:
        """The documents where ``keep`` (a mask) is true."""
        mask, offsets = kept_segments(self.offsets, keep)
        return FingerprintBatch(self.values[mask], offsets, self.counts[mask])


@dataclass(frozen=True, slots=True)
class Shingle:
    """One distinct shingle of a text, for display: its text and fingerprint."""

    text: str
    fingerprint: int


def fingerprint_tokens(tokens: TokenBatch, config: ShingleConfig) -> FingerprintBatch:
    """Shingle and hash an already canonicalized batch: :func:`shingle_fingerprints`' values
    in one compiled pass that never stores the spans."""
    arrays, shape, offsets = _shingle_layout(tokens, config)
    hashes = shingle_hashes(arrays, offsets, *shape, *kernel_hash(config.hash, config.seed))
    return FingerprintBatch(*unique_per_doc(hashes, offsets, overwrite=True))


def shingle_fingerprints(
    tokens: TokenBatch, config: ShingleConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(fingerprints, starts, ends, offsets)`` of every shingle of a batch, in text order.

    A fingerprint says whether its shingle is of Han characters alone (:func:`is_han`): a
    short Han shingle is about a word, which many unrelated documents share by chance, so
    the template step asks more holders of it (:mod:`neardup.dedup.
    templates`)."""
    starts, ends, offsets, han = shingle_spans_flagged(tokens, config)
    hashes = fingerprint_spans(tokens.buf, starts, ends, config.hash, config.seed)
    return mark_han(hashes, han), starts, ends, offsets


def mark_han(hashes: np.ndarray, han: np.ndarray) -> np.ndarray:
    """``hashes`` (in place) moved into the Han region where ``han``, out of it elsewhere.

    The region is the values whose image under a fixed bijection (times an odd constant,
    mod 2**64) has its top ``HAN_BITS`` bits set: 1 in 4096 of all values. A Han shingle's
    fingerprint is moved into it (those bits of the image set), any other fingerprint that
    falls in it (1 in 4096) out of it (one bit of the image cleared). Other fingerprints stay
    the hash of their text, and every bit of a fingerprint stays about uniform (SimHash and
    I-Match use them all). One compiled pass (``fingerprints.shingle_kernels.mark_han``)."""
    with threads_for(hashes.size):
        _mark_han(hashes, han)
    return hashes


def is_han(fingerprints: np.ndarray) -> np.ndarray:
    """Which fingerprints are of shingles of Han characters alone (see :func:`mark_han`)."""
    image = np.asarray(fingerprints, dtype=np.uint64) * HAN_MIX
    return (image >> HAN_SHIFT) == HAN_TOP


def fingerprint_batch(texts: Sequence[str], config: TextConfig | None = None) -> FingerprintBatch:
    """Canonicalize, shingle and hash many texts."""
    config = config or TextConfig()
    with threads_for(sum(map(len, texts))):
        return _fingerprint(*canon.split_texts(texts), config, texts)


def fingerprint_utf8(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, config: TextConfig | None = None
) -> FingerprintBatch:
    """:func:`fingerprint_batch` of texts given as UTF-8, ``text[starts[d]:ends[d]]`` (an
    Arrow string column, a file's bytes): no Python string is made of them."""
    config = config or TextConfig()
    with threads_for(int(ends[-1] - starts[0]) if starts.size else 0):
        return _fingerprint(text, starts, ends, config)


def fingerprints_and_words(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: TextConfig | None = None,
    originals: Sequence[str] | None = None,
) -> tuple[FingerprintBatch, tuple[np.ndarray, np.ndarray]]:
    """:func:`fingerprint_utf8` and the word lists (:mod:`neardup.fingerprints.word_kernels`)
    of the same texts in one pass (``originals``: the texts as strings, when they exist
    already); :func:`~neardup.fingerprints.word_kernels.word_sets_of` makes them the sets of
    :func:`word_sets_utf8`."""
    config = config or TextConfig()
    with threads_for(int(ends[-1] - starts[0]) if starts.size else 0):
        if canon.word_steps(config.canon):
            prints = _fingerprint(text, starts, ends, config, originals)
            return prints, word_sets_utf8(text, starts, ends, config)
        prints, word_lists_found = _fused(text, starts, ends, config, originals, words=True)
        assert word_lists_found is not None
        return prints, word_lists_found


def _fingerprint(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: TextConfig,
    originals: Sequence[str] | None = None,
) -> FingerprintBatch:
    """The fingerprint sets of a batch's UTF-8: the Python steps of canonicalization, then
    tokens, shingles, hashes and sets in one compiled pass per document
    (``fingerprints.fingerprint_kernels``), which equals :func:`fingerprint_tokens` of
    :func:`~neardup.text.canon.canonicalize_utf8` and stores no batch of tokens — unless a
    Python step changes the tokens (lemmas, stems): then that way."""
    if canon.word_steps(config.canon):
        unit = config.shingle.unit
        tokens = canon.canonicalize_utf8(text, starts, ends, config.canon, unit, originals)
        return fingerprint_tokens(tokens, config.shingle)
    return _fused(text, starts, ends, config, originals)[0]


def _fused(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: TextConfig,
    originals: Sequence[str] | None = None,
    words: bool = False,
) -> tuple[FingerprintBatch, tuple[np.ndarray, np.ndarray] | None]:
    """The compiled pass of :func:`neardup.fingerprints.fingerprint_kernels.fingerprint_texts`
    after the Python steps of canonicalization: the fingerprint sets, and with ``words`` the
    word lists. Texts over ``LONG_TEXT`` bytes go window by window
    (:mod:`neardup.fingerprints.longtext`)."""
    unit = config.shingle.unit
    prepared, _ = canon.tokenizer_input(text, starts, ends, config.canon, unit, originals)
    shingle = config.shingle
    shape = (shingle.size, shingle.step, shingle.han_units)
    hashing = kernel_hash(shingle.hash, shingle.seed)
    arrays = prepared.arrays()
    long = {} if unit == "char" else _long_texts(arrays, prepared.split_han, shape, hashing)
    long_words = (
        {d: _long_words(arrays, d, prepared.split_han, shape, hashing) for d in long}
        if words
        else {}
    )
    if long:  # left empty for the kernel, put back after
        emptied = arrays[1].copy()
        emptied[list(long)] = arrays[2][list(long)]
        arrays = (arrays[0], emptied, *arrays[2:])
    found = fingerprint_texts(
        arrays, prepared.split_han, unit == "char", shape, hashing, canon.tokenizer_parts(), words
    )
    batch = FingerprintBatch(*found[:3])
    word_lists_found = (found[3], found[4]) if words else None
    if long:
        batch = _put_back(batch, long)
        if word_lists_found is not None:
            word_lists_found = _sets_put_back(*word_lists_found, long_words)
    return batch, word_lists_found


def _long_words(
    arrays: tuple[np.ndarray, ...],
    d: int,
    split_han: bool,
    shape: tuple[int, int, int],
    hashing: tuple[int, np.uint64],
) -> np.ndarray:
    """The word set of long text ``d``, tokenized ``WINDOW`` bytes at a time, each window
    cut at a space (no token spans one)."""
    text, starts, ends, *tables, joiners = arrays
    lo, hi = int(starts[d]), int(ends[d])
    cuts = [lo]
    while hi - cuts[-1] > WINDOW:
        at = cuts[-1] + WINDOW
        spaces = np.flatnonzero(text[at : min(at + OVERLAP, hi)] == 0x20)
        cuts.append(at + int(spaces[0]) if spaces.size else hi)
    if cuts[-1] != hi:
        cuts.append(hi)
    windows = (
        text,
        np.array(cuts[:-1], dtype=starts.dtype),
        np.array(cuts[1:], dtype=ends.dtype),
        *tables,
        np.repeat(joiners[d : d + 1], len(cuts) - 1),
    )
    lists = fingerprint_texts(windows, split_han, False, shape, hashing, 1, True)[3]
    return word_sets_of(lists, np.array([0, lists.size], dtype=np.int64))[0]  # one text


def _sets_put_back(
    values: np.ndarray, offsets: np.ndarray, long: dict[int, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Sets (``values[offsets[d]:offsets[d + 1]]``) with documents ``long`` (empty in them)
    given theirs."""
    sizes = np.diff(offsets)
    parts, done = [], 0
    for d in sorted(long):
        cut = int(offsets[d])
        parts += [values[done:cut], long[d]]
        sizes[d] = long[d].size
        done = cut
    parts.append(values[done:])
    new = np.zeros_like(offsets)
    np.cumsum(sizes, out=new[1:])
    return np.concatenate(parts), new


def _long_texts(
    arrays: tuple[np.ndarray, ...],
    split_han: bool,
    shape: tuple[int, int, int],
    hashing: tuple[int, np.uint64],
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The fingerprints of the batch's texts over ``LONG_TEXT`` bytes that can be made
    window by window (:mod:`neardup.fingerprints.longtext`), by document."""
    _, starts, ends, *_ = arrays
    found = {}
    for d in np.flatnonzero(ends - starts > LONG_TEXT).tolist():
        done = windowed_fingerprints(arrays, d, split_han, shape, hashing)
        if done is not None:
            found[d] = done
    return found


def _put_back(
    batch: FingerprintBatch, long: dict[int, tuple[np.ndarray, np.ndarray]]
) -> FingerprintBatch:
    """``batch`` with documents ``long`` (empty in it) given their ``(values, counts)``."""
    sizes = batch.sizes()
    values, counts = [], []
    done = 0
    for d in sorted(long):
        cut = int(batch.offsets[d])
        values += [batch.values[done:cut], long[d][0]]
        counts += [batch.counts[done:cut], long[d][1]]
        sizes[d] = long[d][0].size
        done = cut
    values.append(batch.values[done:])
    counts.append(batch.counts[done:])
    offsets = np.zeros_like(batch.offsets)
    np.cumsum(sizes, out=offsets[1:])
    return FingerprintBatch(np.concatenate(values), offsets, np.concatenate(counts))


def word_sets_utf8(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, config: TextConfig | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, offsets)``: the sorted distinct hashes of each text's words (canonical
    tokens of two or more characters without digits: :mod:`neardup.fingerprints.word_kernels`),
    hashed as the run hashes its shingles. What names a document, for the identity check
    (:mod:`neardup.dedup.identity`)."""
    config = config or TextConfig()
    with threads_for(int(ends[-1] - starts[0]) if starts.size else 0):
        tokens = canon.canonicalize_utf8(text, starts, ends, config.canon, config.shingle.unit)
        seed = kernel_hash(config.shingle.hash, config.shingle.seed)[1]
        return word_sets(tokens.buf, tokens.tok_starts, tokens.tok_ends, tokens.tok_offsets, seed)


def fingerprints(text: str, config: TextConfig | None = None) -> np.ndarray:
    """The sorted distinct shingle fingerprints of one text."""
    return fingerprint_batch([text], config)[0]


def iter_fingerprint_batches(
    texts: Iterable[str], config: TextConfig | None = None, batch_size: int = 2048
) -> Iterator[FingerprintBatch]:
    """Stream a corpus in batches of ``batch_size`` texts, bounding memory."""
    it = iter(texts)
    while chunk := list(islice(it, batch_size)):
        yield fingerprint_batch(chunk, config)


def shingles(text: str, config: TextConfig | None = None) -> list[Shingle]:
    """The distinct shingles of one text in order of first appearance, with fingerprints."""
    config = config or TextConfig()
    with threads_for(len(text)):
        tokens = canonicalize_batch([text], config.canon, config.shingle.unit)
        hashes, starts, ends, _ = shingle_fingerprints(tokens, config.shingle)
    _, first = np.unique(hashes, return_index=True)
    raw = tokens.buf.tobytes()
    return [Shingle(raw[starts[i] : ends[i]].decode(), int(hashes[i])) for i in np.sort(first)]


def shingle_byte_spans(
    tokens: TokenBatch, config: ShingleConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte spans ``(starts, ends, offsets)`` of every shingle of a batch, in text order."""
    return shingle_spans_flagged(tokens, config)[:3]


def shingle_spans_flagged(
    tokens: TokenBatch, config: ShingleConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`shingle_byte_spans` and whether each shingle is of Han characters alone."""
    arrays, shape, offsets = _shingle_layout(tokens, config)
    starts, ends, han = shingle_spans(arrays, offsets, *shape)
    return starts, ends, offsets, han


def _shingle_layout(
    tokens: TokenBatch, config: ShingleConfig
) -> tuple[tuple[np.ndarray, ...], tuple[int, int, int], np.ndarray]:
    """The shingle kernels' input: the batch's arrays, the shape (size, step, Han size) and
    where each document's shingles start."""
    arrays = tokens.shingle_input(config.unit)
    shape = (config.size, config.step, config.han_units)
    return arrays, shape, shingle_offsets(arrays, *shape)
