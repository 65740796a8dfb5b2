"""Compiled text → shingle sets, one document at a time: tokenize, shingle, hash, sort.

The steps of :func:`~neardup.text.tokenize_kernels.tokenize_batch`, then
:func:`~neardup.fingerprints.shingle_kernels.shingle_hashes` and
:func:`~neardup.fingerprints.shingle_kernels.unique_per_doc`, with the same result, but fused per
document: a document's canonical bytes, tokens, spans and hashes only pass through scratch
buffers that are reused from document to document (hot in cache), and only its distinct
fingerprints are written to the batch's result. The batch-wide token arrays of the separate
steps are fresh memory (16 bytes a token), whose page faults cost about a third of
tokenizing; here they are never made.

numba's on-disk cache of ``_fingerprint_into`` is keyed on this file's text alone, yet holds
the compiled code of every kernel it calls (``_scan``, ``doc_hashes``, ``sort_into``...): a
change to one of those must come with a change here (this note was last edited with
``_scan``'s short path of ASCII words, XXH3's of 17..64 bytes, the word lists of
``fingerprints.word_kernels`` with their table of recent words and their hash of short
words, a token's word mark told in one pass over its bytes, the stopword table's slots from
:mod:`neardup.util.hashtable`), or an old cache keeps the old code.

With ``words``, each document's word list (:mod:`neardup.fingerprints.word_kernels`) is made
in the same pass from the same tokens: the identity check's words cost no second
tokenization, and no sort (only the documents in a pair need their sets).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.fingerprints.shingle_kernels import (
    distinct,
    doc_hashes,
    move_left,
    slide_left,
    sort_into,
)
from neardup.fingerprints.word_kernels import doc_words, recent_words
from neardup.text.tokenize_kernels import _ascii_map, _chunks, _scan, byte_growth, stop_bits


def fingerprint_texts(
    tokenizer: tuple[np.ndarray, ...],
    split_han: bool,
    by_char: bool,
    shape: tuple[int, int, int],
    hashing: tuple[int, np.uint64],
    parts: int,
    words: bool = False,
) -> tuple[np.ndarray, ...]:
    """Distinct shingle fingerprints of every document, sorted, with how often each occurs:
    ``(values, offsets, counts)`` as
    :func:`~neardup.fingerprints.shingle_kernels.unique_per_doc` gives them for the tokens of
    :func:`~neardup.text.tokenize_kernels.tokenize_batch`; with
    ``words``, also ``(word values, word offsets)``: each document's word list
    (:func:`neardup.fingerprints.word_kernels.doc_words` of the same tokens).

    ``tokenizer``: ``(text, starts, ends, table, fold, expansions, stops, joiners)`` of
    ``tokenize_batch``; ``by_char``: character shingles; ``shape``: (size, step, Han size);
    ``hashing``: (kind, seed) of ``hash_span``, checked; ``parts``: about how many tasks.
    The result's region (a bound on every document's shingles) is allocated here by NumPy,
    which asks for huge pages; only the part written is touched.
    """
    _, starts, ends, _, fold, *_ = tokenizer
    growth = byte_growth(fold.size > 0, split_han)
    bound = _shingle_bounds(starts, ends, by_char, growth)
    values = np.empty(int(bound.sum()), dtype=np.uint64)
    times = np.empty(values.size, dtype=np.uint32)
    # a word per token at most: no more than a word shingle per token
    word_bound = _shingle_bounds(starts, ends, False, growth) if words else bound[:0]
    word_values = np.empty(int(word_bound.sum()), dtype=np.uint64)
    options = (split_han, by_char, shape, hashing, parts, growth)
    found = _fingerprint_into(tokenizer, options, (bound, values, times, word_bound, word_values))
    return found if words else found[:3]


@njit(cache=True)
def _shingle_bounds(starts: np.ndarray, ends: np.ndarray, by_char: bool, growth: int) -> np.ndarray:
    """Per document, a bound on its shingles: its tokens (a token per two bytes, one more
    for a Han character next to a word), or for characters, the bytes it may be written as."""
    out = np.empty(starts.size, dtype=np.int64)
    for d in range(starts.size):
        length = ends[d] - starts[d] + 1
        out[d] = growth * length + 1 if by_char else length // 2 + 1
    return out


@njit(cache=True, parallel=True, nogil=True)
def _fingerprint_into(
    tokenizer: tuple[np.ndarray, ...], options: tuple, region: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fingerprint_texts` with its ``options`` (split_han, by_char, shape, hashing,
    parts, growth) and its result's region given (``bound`` per document, ``values``,
    ``times``; ``word_bound`` and ``word_values`` for the word sets, empty for none)."""
    text, starts, ends, table, fold, expansions, stops, joiners = tokenizer
    split_han, by_char, shape, hashing, parts, growth = options
    seed = hashing[1]
    bound, values, times, word_bound, word_values = region
    with_words = word_bound.size > 0
    n = starts.size
    chunks = _chunks(starts, ends, parts)
    nc = chunks.size - 1
    base = np.zeros(nc + 1, dtype=np.int64)
    word_base = np.zeros(nc + 1, dtype=np.int64)
    for k in range(nc):
        base[k + 1] = base[k] + bound[chunks[k] : chunks[k + 1]].sum()
        if with_words:
            word_base[k + 1] = word_base[k] + word_bound[chunks[k] : chunks[k + 1]].sum()
    if base[nc] > values.size or times.size < values.size or word_base[nc] > word_values.size:
        raise ValueError("fingerprint region too small")
    counts = np.zeros(n, dtype=np.int64)
    word_counts = np.zeros(n, dtype=np.int64)
    bits = stop_bits(stops)
    ascii_map = _ascii_map(table, fold)
    for k in prange(nc):
        d0, d1 = chunks[k], chunks[k + 1]
        longest = 0
        most = 0
        for d in range(d0, d1):
            longest = max(longest, ends[d] - starts[d] + 1)
            most = max(most, bound[d])
        buf = np.empty(growth * longest, dtype=np.uint8)
        tok_s = np.empty(longest // 2 + 1, dtype=np.int64)
        tok_e = np.empty(longest // 2 + 1, dtype=np.int64)
        doc_offsets = np.zeros(2, dtype=np.int64)
        tok_offsets = np.zeros(2, dtype=np.int64)
        tokens = (buf, doc_offsets, tok_s, tok_e, tok_offsets, np.full(1, by_char))
        m = most if by_char else 0  # word shingles are hashed as found, through no spans
        spans = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.bool_))
        hashes = np.empty(most, dtype=np.uint64)
        buckets = np.empty(2 * most + 1, dtype=np.int64)
        at = base[k]
        word_at = word_base[k]
        recent = recent_words()
        for d in range(d0, d1):
            tok_offsets[1], doc_offsets[1] = _scan(
                text, starts[d], ends[d], table, fold, expansions, stops, bits, joiners[d],
                split_han, buf, 0, tok_s, tok_e, 0, ascii_map,
            )  # fmt: skip
            if with_words:
                word_counts[d] = doc_words(
                    buf, tok_s, tok_e, 0, tok_offsets[1], seed, word_values, word_at, recent
                )
                word_at += word_counts[d]
            m = doc_hashes(tokens, 0, shape, hashing, spans, hashes)
            if m == 0:
                continue
            sort_into(hashes, m, values, at, buckets)
            counts[d] = distinct(values, times, at, m)
            at += counts[d]
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    word_offsets = np.zeros(n + 1, dtype=np.int64)
    word_offsets[1:] = np.cumsum(word_counts)
    for k in range(nc):  # pack the regions to the left, in order (never past unread data)
        d0, d1 = chunks[k], chunks[k + 1]
        move_left(values, times, base[k], offsets[d0], offsets[d1] - offsets[d0])
        slide_left(word_values, word_base[k], word_offsets[d0], word_offsets[d1] - word_offsets[d0])
    total, word_total = offsets[n], word_offsets[n]
    return values[:total], offsets, times[:total], word_values[:word_total], word_offsets
