"""Shared passages in the text a person wrote: canonical spans mapped back to its characters.

:func:`neardup.fingerprints.passages.shared_passages` gives ranges of the *canonical* text
(case folded, punctuation and markup gone, perhaps stop words dropped or words stemmed). A
reader wants to see them in the original. The mapping aligns tokens:

1. the original is split into raw tokens with the tokenizer's own character classes (runs of
   word characters; runs of non-space with punctuation kept), at original character offsets;
2. each distinct raw token is canonicalized alone (one batch): a stop word gives no token, a
   run of Han characters several (segmented), a stemmed word its stem;
3. these expected tokens are aligned with the text's actual canonical tokens (equal sequences
   in the common case; otherwise runs of equal tokens, resynchronized after a difference at
   the next place where a few tokens agree: :func:`match_tokens`), so markup, quoted lines and
   words the canonical text lost match nothing;
4. a canonical span becomes the original range from its first matched token to its last, so
   the punctuation, stop words and spacing between them are shown as written.

Inside a token the mapping is per character when the canonical token is as long as its raw
piece (character shingles may start or end mid-token), else it snaps to the whole token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup.text import chars
from neardup.text.canon import TokenBatch, canonicalize_batch
from neardup.text.text_config import TextConfig
from neardup.util.kernels import threads_for

Span = tuple[int, int]
RESYNC_TOKENS = 3  # tokens that must agree where the alignment picks up after a difference
RESYNC_TRIES = 50  # later places of a token tried before it is left unmatched
SENTINEL = "7305196248"  # between words canonicalized together (digits: no stop word, no stem)
_CHUNK = 1 << 16  # tokens turned into ids at a time (no list as long as a long text's)


@dataclass(frozen=True, slots=True)
class _Tokens:
    """Canonical tokens of one text, at canonical character offsets, each with the original
    character range it came from (``-1`` where it matched no original token)."""

    starts: np.ndarray  # canonical character offsets
    ends: np.ndarray
    orig_starts: np.ndarray  # original character offsets (-1: unmatched)
    orig_ends: np.ndarray


def raw_tokens(text: str, punctuation: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Original character ranges ``[start, end)`` of the tokenizer's raw tokens of ``text``:
    runs of word characters (format characters inside a run kept), or of non-space characters
    when ``punctuation`` is kept."""
    table = chars.word_table() if punctuation else chars.whitespace_table()
    inside = np.concatenate(([False], table[chars.codepoints(text)] != 0, [False]))
    edges = np.flatnonzero(inside[1:] != inside[:-1])
    return edges[0::2], edges[1::2]


def _expected(
    text: str, starts: np.ndarray, ends: np.ndarray, config: TextConfig, ids: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Canonical tokens of each raw token canonicalized alone, each with its original range
    (the exact piece when the token's canonical form is as long as its raw text): the
    tokens as ids (``ids``: token -> id, grown here), their ranges' starts and ends.

    Each distinct raw token is canonicalized once and its forms laid out as arrays; every
    occurrence takes its word's forms by index, so no Python object is made per token."""
    words: dict[str, int] = {}  # distinct raw token -> its index, in order of appearance
    word = np.empty(starts.size, dtype=np.int64)
    for lo in range(0, starts.size, _CHUNK):
        hi = lo + _CHUNK
        piece = zip(starts[lo:hi].tolist(), ends[lo:hi].tolist(), strict=True)
        word[lo:hi] = [words.setdefault(text[s:e], len(words)) for s, e in piece]
    forms = _canonical_forms(list(words), config)
    counts = np.array([len(parts) for parts in forms], dtype=np.int64)
    flat = [part for parts in forms for part in parts]
    part_ids = np.array([ids.setdefault(part, len(ids)) for part in flat], dtype=np.int64)
    part_len = np.array([len(part) for part in flat], dtype=np.int64)
    first_part = np.cumsum(counts) - counts  # each word's first part among the flat parts
    some = counts > 0  # not a stop word
    # characters of its word's parts before each part
    lead = np.cumsum(part_len) - part_len
    lead -= np.repeat(lead[first_part[some]], counts[some])
    exact = np.zeros(counts.size, dtype=bool)  # the parts are as long as the raw token
    word_len = np.array([len(w) for w in words], dtype=np.int64)
    if flat:
        exact[some] = np.add.reduceat(part_len, first_part[some]) == word_len[some]
    per = counts[word]  # parts of each occurrence
    occurrence = np.repeat(np.arange(word.size), per)
    within = np.arange(occurrence.size) - np.repeat(np.cumsum(per) - per, per)
    part = first_part[word[occurrence]] + within
    s, e = starts[occurrence], ends[occurrence]
    split = (per[occurrence] > 1) & exact[word[occurrence]]  # each part its own piece
    range_starts = np.where(split, s + lead[part], s)
    range_ends = np.where(split, s + lead[part] + part_len[part], e)
    return part_ids[part], range_starts, range_ends


def _canonical_forms(words: list[str], config: TextConfig) -> list[list[str]]:
    """Each word's canonical tokens (none for a stop word, several for a run of Han).

    The words go through canonicalization as one text, a digit sentinel between them (no
    letters, so the text's language is the words' own; no per-text cost per word), and are
    split at the sentinel again; should a word hold the sentinel, one text per word.
    """
    unit = config.shingle.unit
    if not any(SENTINEL in word for word in words):
        tokens = canonicalize_batch([f" {SENTINEL} ".join(words)], config.canon, unit).tokens(0)
        forms: list[list[str]] = [[]]
        for token in tokens:
            if token == SENTINEL:
                forms.append([])
            else:
                forms[-1].append(token)
        if len(forms) == len(words):
            return forms
    batch = canonicalize_batch(words, config.canon, unit)
    return [batch.tokens(d) for d in range(len(words))]


def _canonical_tokens(
    batch: TokenBatch, ids: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Document 0's tokens as ids (``ids``; -1: a token no raw token gives) and their
    character ranges in its canonical text (from the buffer's byte offsets: tokens are
    joined by a space, or by nothing between Han characters and in unspaced texts)."""
    base = int(batch.doc_offsets[0])
    raw = batch.buf[base : batch.doc_offsets[1]]
    char_at = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80))).astype(np.int64)
    t0, t1 = int(batch.tok_offsets[0]), int(batch.tok_offsets[1])
    byte_starts, byte_ends = batch.tok_starts[t0:t1] - base, batch.tok_ends[t0:t1] - base
    data = raw.tobytes()
    found = np.empty(t1 - t0, dtype=np.int64)
    for lo in range(0, t1 - t0, _CHUNK):
        hi = lo + _CHUNK
        piece = zip(byte_starts[lo:hi].tolist(), byte_ends[lo:hi].tolist(), strict=True)
        found[lo:hi] = [ids.get(data[s:e].decode(), -1) for s, e in piece]
    return found, char_at[byte_starts], char_at[byte_ends]


def align(text: str, config: TextConfig | None = None) -> _Tokens:
    """``text``'s canonical tokens with the original ranges they came from."""
    config = config or TextConfig()
    ids: dict[str, int] = {}
    with threads_for(len(text)):  # a page's text: one thread, no parallel start-up
        batch = canonicalize_batch([text], config.canon, config.shingle.unit)
        raw_s, raw_e = raw_tokens(text, config.canon.punctuation)
        expected, range_starts, range_ends = _expected(text, raw_s, raw_e, config, ids)
    actual, starts, ends = _canonical_tokens(batch, ids)
    del batch
    where = _match_ids(expected, actual)
    found = where >= 0
    orig_starts = np.full(actual.size, -1, dtype=np.int64)
    orig_ends = np.full(actual.size, -1, dtype=np.int64)
    orig_starts[found] = range_starts[where[found]]
    orig_ends[found] = range_ends[where[found]]
    return _Tokens(starts, ends, orig_starts, orig_ends)


def match_tokens(expected: Sequence[str], actual: Sequence[str]) -> np.ndarray:
    """For each actual token, the index of the expected token it aligns with (-1: none).

    Monotone: runs of equal tokens are matched (compared as integer arrays, a chunk at a
    time); after a difference, the alignment picks up at the next expected place of the
    actual token where :data:`RESYNC_TOKENS` tokens agree, else leaves the token unmatched.
    Linear in the common cases (equal sequences, tokens dropped), unlike longest-block
    matching (difflib), which takes seconds on 100k tokens.
    """
    ids: dict[str, int] = {}
    e = np.array([ids.setdefault(t, len(ids)) for t in expected], dtype=np.int64)
    a = np.array([ids.get(t, -1) for t in actual], dtype=np.int64)
    return _match_ids(e, a)


def _match_ids(e: np.ndarray, a: np.ndarray) -> np.ndarray:
    """:func:`match_tokens` of tokens given as ids (equal tokens, equal ids; -1: an actual
    token that is no expected one)."""
    out = np.full(a.size, -1, dtype=np.int64)
    if e.size == a.size and np.array_equal(e, a):
        return np.arange(a.size, dtype=np.int64)
    order = np.argsort(e, kind="stable")  # positions of each token, ascending within a token
    by_token = e[order]
    i = j = 0
    while i < e.size and j < a.size:
        n = _equal_run(e, a, i, j)
        if n:
            out[j : j + n] = np.arange(i, i + n)
            i, j = i + n, j + n
            continue
        p = _resync(e, a, i, j, order, by_token)
        if p < 0:
            j += 1
        else:
            i = p
    return out


def _equal_run(e: np.ndarray, a: np.ndarray, i: int, j: int) -> int:
    """Length of the run of equal tokens ``e[i:]`` and ``a[j:]``."""
    n, step = 0, 16
    while True:
        m = min(step, e.size - i - n, a.size - j - n)
        if m <= 0:
            return n
        differ = np.flatnonzero(e[i + n : i + n + m] != a[j + n : j + n + m])
        if differ.size:
            return n + int(differ[0])
        n, step = n + m, step * 4


def _resync(
    e: np.ndarray, a: np.ndarray, i: int, j: int, order: np.ndarray, by_token: np.ndarray
) -> int:
    """The first expected place ``p > i`` where ``a[j:]`` picks up, or -1."""
    token = a[j]
    if token < 0:
        return -1
    lo, hi = np.searchsorted(by_token, token, "left"), np.searchsorted(by_token, token, "right")
    places = order[lo:hi]
    first = int(np.searchsorted(places, i, "right"))
    k = min(RESYNC_TOKENS, a.size - j)
    for p in places[first : first + RESYNC_TRIES].tolist():
        if p + k <= e.size and np.array_equal(e[p : p + k], a[j : j + k]):
            return p
    return -1


def _at(tokens: _Tokens, t: int, offset: int, start: bool) -> int:
    """Original character offset of canonical ``offset`` in token ``t``: exact when the token
    and its original piece have the same length, else the token's original start or end."""
    c0, c1 = int(tokens.starts[t]), int(tokens.ends[t])
    o0, o1 = int(tokens.orig_starts[t]), int(tokens.orig_ends[t])
    if c1 - c0 == o1 - o0 and c0 <= offset <= c1:
        return o0 + offset - c0
    return o0 if start else o1


def map_spans(tokens: _Tokens, spans: Sequence[Span]) -> list[Span]:
    """Canonical character ranges as original ranges: sorted, disjoint, merged where they
    meet; a range covering no matched token is dropped."""
    out: list[Span] = []
    matched = np.flatnonzero(tokens.orig_starts >= 0)
    m_starts, m_ends = tokens.starts[matched], tokens.ends[matched]
    for s, e in spans:
        first = int(np.searchsorted(m_ends, s, side="right"))  # first matched token ending > s
        last = int(np.searchsorted(m_starts, e, side="left")) - 1  # last starting < e
        if first > last:
            continue
        begin = _at(tokens, int(matched[first]), max(s, int(m_starts[first])), start=True)
        end = _at(tokens, int(matched[last]), min(e, int(m_ends[last])), start=False)
        if end > begin:
            out.append((begin, end))
    out.sort()
    merged: list[Span] = []
    for s, e in out:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def original_spans(
    text: str, spans: Sequence[Span], config: TextConfig | None = None
) -> list[Span]:
    """The ranges of ``text`` (as written) holding the canonical ranges ``spans`` of its
    canonical form (as :func:`neardup.fingerprints.passages.shared_passages` gives them)."""
    return map_spans(align(text, config), spans)


def segments(text: str, spans: Sequence[Span]) -> list[tuple[str, bool]]:
    """``text`` cut at sorted disjoint ``spans``: ``(piece, highlighted)`` in order, for a
    template to wrap the highlighted pieces in ``<mark>``."""
    out: list[tuple[str, bool]] = []
    at = 0
    for s, e in spans:
        if s > at:
            out.append((text[at:s], False))
        out.append((text[s:e], True))
        at = e
    if at < len(text):
        out.append((text[at:], False))
    return out
