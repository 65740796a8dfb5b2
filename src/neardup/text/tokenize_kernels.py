"""Compiled tokenizer: UTF-8 of many documents → one UTF-8 buffer of canonical tokens.

Each document's tokens are written to the buffer joined by one space (or by nothing, for
character shingles of Chinese), stop words dropped on the way. With ``split_han`` (the ``auto``
unit) every Han character is a token of its own and ends the word before it, and two Han
tokens in a row are joined by nothing: the unit is decided per run of script, so a few
Chinese characters never change how the Cyrillic or Latin words around them are cut. Where
punctuation or a line break ends a Han clause, the tokens either side are joined by a line
feed (``BREAK``) instead: Han shingles do not span it (an edit that moves a line of a poem
keeps its shingles). Token
boundaries come from a per-code-point class table built once in Python (see
``neardup.text.chars``), so the kernel knows nothing about Unicode categories itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.util.hashtable import home_slot

SEPARATOR = np.uint8(0)  # ends a token (space, punctuation...)
TOKEN_CHAR = np.uint8(1)  # part of a token
IGNORABLE = np.uint8(2)  # dropped without ending a token (soft hyphen, zero-width joiner...)
BREAK = np.uint8(0x0A)  # joins two tokens a Han shingle must not span (see ``_scan``)

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_SPACE = np.uint8(0x20)
_U = np.uint64
_FOLD_EXPANDS = np.uint32(0x80000000)
NON_ASCII = np.uint16(0xFFFF)  # what :func:`_ascii_map` maps the bytes 0x80-0xFF to
_WORD_CHAR = np.uint16(0x100)  # the flag of a token character in :func:`_ascii_map`
_MAX_FOLD_GROWTH = 3  # UTF-8 bytes out per byte in, at most, when folding (ΰ: 2 → 6)


@njit(cache=True, inline="always")
def _put_utf8(out: np.ndarray, pos: int, cp: np.uint32) -> int:
    c = np.uint32(cp)
    if c < 0x80:
        out[pos] = np.uint8(c)
        return pos + 1
    if c < 0x800:
        out[pos] = np.uint8(0xC0 | (c >> 6))
        out[pos + 1] = np.uint8(0x80 | (c & 0x3F))
        return pos + 2
    if c < 0x10000:
        out[pos] = np.uint8(0xE0 | (c >> 12))
        out[pos + 1] = np.uint8(0x80 | ((c >> 6) & 0x3F))
        out[pos + 2] = np.uint8(0x80 | (c & 0x3F))
        return pos + 3
    out[pos] = np.uint8(0xF0 | (c >> 18))
    out[pos + 1] = np.uint8(0x80 | ((c >> 12) & 0x3F))
    out[pos + 2] = np.uint8(0x80 | ((c >> 6) & 0x3F))
    out[pos + 3] = np.uint8(0x80 | (c & 0x3F))
    return pos + 4


@njit(cache=True, inline="always")
def is_han(c: int) -> bool:
    """Whether code point ``c`` is a Han character (the ranges of ``text.segment.HAN_CLASS``)."""
    if c < 0x3400:  # every alphabet: one comparison
        return False
    return (
        (0x3400 <= c < 0x4DC0)
        or (0x4E00 <= c < 0xA000)
        or (0xF900 <= c < 0xFB00)
        or (0x20000 <= c < 0x2A6E0)
        or (0x2A700 <= c < 0x2EE60)
        or (0x2F800 <= c < 0x2FA20)
        or (0x30000 <= c < 0x323B0)
    )


@njit(cache=True, inline="always")
def is_break(c: int) -> bool:
    """Whether code point ``c`` between two tokens ends a clause for Han shingles: a line
    break or any punctuation or symbol; spaces (which Chinese text uses freely) do not."""
    if c == 0x20 or c == 0x09 or c == 0xA0 or c == 0x3000 or c == 0x1680 or c == 0x202F:
        return False
    return not (0x2000 <= c <= 0x200A or c == 0x205F or c == 0x200B or c == 0xFEFF)


@njit(cache=True)
def token_hash(cps: np.ndarray) -> np.uint64:
    """FNV-1a over a token's code points: the key of the stop-word set (internal only)."""
    h = _FNV_OFFSET
    for c in cps:
        h = (h ^ np.uint64(c)) * _FNV_PRIME
    return h


def stop_set(hashes: np.ndarray) -> np.ndarray:
    """An open-addressing hash set of token hashes for :func:`tokenize_batch`.

    Slots hold hashes (0 = empty; a stop word hashing to 0 could not be stored and is
    dropped, a 2**-64 event), at most a quarter full, so a lookup costs one or two probes.
    """
    hashes = np.unique(np.asarray(hashes, dtype=np.uint64))
    hashes = hashes[hashes != 0]
    bits = max(4, int(4 * max(hashes.size, 1) - 1).bit_length())
    table = np.zeros(1 << bits, dtype=np.uint64)
    _fill(table, hashes, bits)
    return table


@njit(cache=True)
def _fill(table: np.ndarray, hashes: np.ndarray, bits: int) -> None:
    mask = np.int64(table.size - 1)
    for h in hashes:
        i = _slot(h, bits)
        while table[i] != 0:
            i = (i + 1) & mask
        table[i] = h


@njit(cache=True, inline="always")
def _slot(h: np.uint64, bits: int) -> int:
    return home_slot(h, np.uint64(64 - bits))


@njit(cache=True, inline="always")
def _is_stop(h: np.uint64, stops: np.ndarray, bits: int) -> bool:
    mask = np.int64(stops.size - 1)
    i = _slot(h, bits)
    while stops[i] != 0:
        if stops[i] == h:
            return True
        i = (i + 1) & mask
    return False


@njit(cache=True, inline="always")
def decode_utf8(text: np.ndarray, i: int) -> tuple[int, int]:
    """The code point starting at byte i of valid UTF-8, and its length in bytes."""
    b0 = np.int64(text[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(text[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return (
            ((b0 & 0x0F) << 12)
            | ((np.int64(text[i + 1]) & 0x3F) << 6)
            | (np.int64(text[i + 2]) & 0x3F)
        ), 3
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(text[i + 1]) & 0x3F) << 12)
        | ((np.int64(text[i + 2]) & 0x3F) << 6)
        | (np.int64(text[i + 3]) & 0x3F)
    ), 4


@njit(cache=True, inline="always")
def _ascii_run(
    text: np.ndarray,
    i: int,
    hi: int,
    ascii_map: np.ndarray,
    out: np.ndarray,
    pos: int,
    joined: bool,
    tok_s: np.ndarray,
    tok_e: np.ndarray,
    tpos: int,
) -> tuple[int, int, int]:
    """The ASCII words from text[i] (a token character) on, as ``_scan`` writes them when
    there are no stop words and words are joined by a space (``joined``: after a token
    already written): (where to go on reading, bytes written, tokens). Stops at ``hi`` or at
    a non-ASCII byte; a word that the non-ASCII byte may go on is given back (read again by
    ``_scan``), so the tokens are only whole ASCII words — none when the first is not one.

    Without a branch per byte: every byte is written (a separator as a space), the output
    position moves on a token character or on the first separator after one, and a token's
    start and end are stored at every byte, the token counts moving on only where one
    starts or ends. Words of a few letters end at unpredictable places; a branch there
    costs a misprediction per word, most of the time of a loop taking the bytes one by one.
    """
    p = pos
    if joined:
        out[p] = _SPACE
        p += 1
    s = tpos  # where the next token's start goes
    e = tpos  # where the next token's end goes
    inside = 0
    j = i
    while j < hi:  # unsigned indices below: no code for negative ones
        a = ascii_map[text[_U(j)]]
        if a == NON_ASCII:
            break
        t = np.int64(a >> 8)  # 1 for a token character, 0 for a separator
        out[_U(p)] = np.uint8(a & 0xFF)  # the folded character, or a space
        tok_s[_U(s)] = p
        tok_e[_U(e)] = p
        s += np.int64(t > inside)
        e += np.int64(t < inside)
        p += t | inside
        inside = t
        j += 1
    if inside and j == hi:  # the text ends the last word
        tok_e[e] = p
        return hi, p - pos, s - tpos
    if inside:  # a non-ASCII byte may go on the last word: give it back
        if e == tpos:
            return i, 0, 0
        while ascii_map[text[j - 1]] & _WORD_CHAR:
            j -= 1
        return j, tok_e[e - 1] - pos, e - tpos
    while not ascii_map[text[j - 1]] & _WORD_CHAR:  # read the separators again
        j -= 1
    return j, tok_e[e - 1] - pos, e - tpos


@njit(cache=True)
def _scan(
    text: np.ndarray,
    lo: int,
    hi: int,
    table: np.ndarray,
    fold: np.ndarray,
    expansions: np.ndarray,
    stops: np.ndarray,
    bits: int,
    joiner: bool,
    split_han: bool,
    out: np.ndarray,
    pos: int,
    tok_s: np.ndarray,
    tok_e: np.ndarray,
    tpos: int,
    ascii_map: np.ndarray,
) -> tuple[int, int]:
    """Tokenize the UTF-8 bytes text[lo:hi], writing kept tokens from out[pos] and token
    slots from tpos.

    Token boundaries come from the unfolded characters; a token's characters are case folded
    (when ``fold`` is not empty) as they are written. ``split_han``: each Han character is a
    token, joined to a Han token before it by nothing. Returns (tokens kept, bytes written).
    ``ascii_map`` (:func:`_ascii_map`, or empty) is the short path of ASCII bytes; without
    stop words, runs of ASCII words take the shorter one of :func:`_ascii_run`.
    """
    check_stops = stops.size > 1
    folding = fold.size > 0
    ntok = 0
    start_pos = pos
    prev_han = False  # the last kept token is a Han character
    gap_break = False  # a clause break since the last kept token
    fast = ascii_map.size > 0
    runs = fast and joiner and not check_stops  # whole ASCII words, no branch a byte
    i = lo
    while i < hi:
        b = text[i]
        if fast and b < 0x80:  # ASCII: a separator, or a word starts (never Han)
            if not ascii_map[b] & _WORD_CHAR:
                gap_break = gap_break or is_break(b)
                i += 1
                continue
            if runs and not (split_han and gap_break and prev_han):
                to, written, kept = _ascii_run(
                    text, i, hi, ascii_map, out, pos, ntok > 0, tok_s, tok_e, tpos + ntok
                )
                if kept > 0:
                    i, pos, ntok = to, pos + written, ntok + kept
                    prev_han = False
                    gap_break = False
                    continue
            han = False
        else:
            c, width = decode_utf8(text, i)
            if table[c] != TOKEN_CHAR:
                if table[c] == SEPARATOR and is_break(c):
                    gap_break = True
                i += width
                continue
            han = split_han and is_han(c)
        # a token starts at i: write it (tentatively), hashing its kept code points
        if ntok > 0 and split_han and gap_break and (han or prev_han):
            out[pos] = BREAK  # Han shingles stop at clause ends (what an edit moves whole)
            p = pos + 1
        elif ntok > 0 and joiner and not (han and prev_han):
            out[pos] = _SPACE
            p = pos + 1
        else:
            p = pos
        first = p
        h = _FNV_OFFSET
        j = i
        while j < hi:
            b = text[j]
            if fast and b < 0x80:  # ASCII: never Han (so j > i), one byte out
                a = ascii_map[b]
                if not a & _WORD_CHAR or han:
                    break
                if check_stops:
                    h = (h ^ np.uint64(a & 0xFF)) * _FNV_PRIME
                out[p] = np.uint8(a & 0xFF)
                p += 1
                j += 1
                continue
            c, width = decode_utf8(text, j)
            cls = table[c]
            if cls == SEPARATOR:
                break
            if split_han and j > i and cls == TOKEN_CHAR and (han or is_han(c)):
                break  # a Han character ends the token and starts its own
            j += width
            if cls != TOKEN_CHAR:
                continue  # ignorable: dropped without ending the token
            if folding:
                f = fold[c]
                if f & _FOLD_EXPANDS:  # folds to several code points (ß → ss), all letters
                    for x in expansions[f ^ _FOLD_EXPANDS]:
                        if x != 0:
                            if check_stops:
                                h = (h ^ np.uint64(x)) * _FNV_PRIME
                            p = _put_utf8(out, p, x)
                    continue
                c = f
            if check_stops:
                h = (h ^ np.uint64(c)) * _FNV_PRIME
            p = _put_utf8(out, p, c)
        if not (check_stops and _is_stop(h, stops, bits)):
            tok_s[tpos + ntok] = first
            tok_e[tpos + ntok] = p
            ntok += 1
            pos = p
            prev_han = han
            gap_break = False
        i = j
    return ntok, pos - start_pos


def byte_growth(folding: bool, split_han: bool) -> int:
    """Bytes written at most per byte read: a folded character may take 6 for 2, and
    ``split_han`` adds a space between a Han character and a word ("中a中" → "中 a 中")."""
    return (_MAX_FOLD_GROWTH if folding else 1) + (1 if split_han else 0)


def tokenize_batch(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    table: np.ndarray,
    fold: np.ndarray,
    expansions: np.ndarray,
    stops: np.ndarray,
    joiners: np.ndarray,
    split_han: bool,
    parts: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokenize documents, the UTF-8 bytes text[starts[d]:ends[d]], into one buffer.

    ``fold``/``expansions`` are :func:`neardup.text.chars.fold_table` (an empty ``fold``: no
    case folding); ``stops`` is a :func:`stop_set`; ``split_han``: Han characters are tokens
    of their own (see the module docstring). Returns ``(buf, doc_offsets, tok_starts,
    tok_ends, tok_offsets)``: document d's canonical text is
    ``buf[doc_offsets[d]:doc_offsets[d + 1]]`` and its tokens are the byte spans
    ``tok_starts[t]:tok_ends[t]`` for t in ``tok_offsets[d]:tok_offsets[d + 1]``.

    Documents are cut into about ``parts`` contiguous chunks, one task each. A task writes its
    documents back to back into a region big enough for any outcome (6 bytes per folded code
    byte, a token per two bytes), so only the memory actually written is touched; the
    regions are then packed to the left in place, and views of the packed part returned (no
    second batch's worth of fresh memory). The regions are allocated here by NumPy, which
    asks for huge pages: the page faults of the kernel's own allocations cost as much as
    tokenizing on a virtual machine.
    """
    total = int((ends - starts).sum()) + starts.size  # every document and a separator
    growth = byte_growth(fold.size > 0, split_han)
    tokens = total // 2 + starts.size + 1  # a token per two bytes, plus one per chunk
    wide = np.empty(growth * total, dtype=np.uint8)
    wide_s = np.empty(tokens, dtype=np.int64)
    wide_e = np.empty(tokens, dtype=np.int64)
    return _tokenize_into(
        text, starts, ends, table, fold, expansions, stops, joiners, split_han, parts,
        growth, wide, wide_s, wide_e,
    )  # fmt: skip


@njit(cache=True, parallel=True, nogil=True)
def _tokenize_into(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    table: np.ndarray,
    fold: np.ndarray,
    expansions: np.ndarray,
    stops: np.ndarray,
    joiners: np.ndarray,
    split_han: bool,
    parts: int,
    growth: int,
    wide: np.ndarray,
    wide_s: np.ndarray,
    wide_e: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tokenize_batch` with its regions given, ``growth`` bytes a byte read (big
    enough: checked)."""
    n = starts.size
    bits = stop_bits(stops)
    ascii_map = _ascii_map(table, fold)
    chunks = _chunks(starts, ends, parts)
    nc = chunks.size - 1
    byte_base = np.zeros(nc + 1, dtype=np.int64)
    tok_base = np.zeros(nc + 1, dtype=np.int64)
    for k in range(nc):
        length = 0
        for d in range(chunks[k], chunks[k + 1]):
            length += ends[d] - starts[d] + 1
        byte_base[k + 1] = byte_base[k] + growth * length
        tok_base[k + 1] = tok_base[k] + length // 2 + 1
    if byte_base[nc] > wide.size or tok_base[nc] > wide_s.size or wide_e.size < wide_s.size:
        raise ValueError("tokenize regions too small")
    counts = np.zeros(n, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    for k in prange(nc):
        pos, tpos = byte_base[k], tok_base[k]
        for d in range(chunks[k], chunks[k + 1]):
            c, s = _scan(
                text,
                starts[d],
                ends[d],
                table,
                fold,
                expansions,
                stops,
                bits,
                joiners[d],
                split_han,
                wide,
                pos,
                wide_s,
                wide_e,
                tpos,
                ascii_map,
            )
            counts[d], sizes[d] = c, s
            pos += s
            tpos += c
    doc_offsets = np.zeros(n + 1, dtype=np.int64)
    tok_offsets = np.zeros(n + 1, dtype=np.int64)
    doc_offsets[1:] = np.cumsum(sizes)
    tok_offsets[1:] = np.cumsum(counts)
    for k in range(nc):  # pack the regions to the left, in order (never past unread data)
        d0, d1 = chunks[k], chunks[k + 1]
        b0, t0 = doc_offsets[d0], tok_offsets[d0]
        nbytes, ntoks = doc_offsets[d1] - b0, tok_offsets[d1] - t0
        shift = b0 - byte_base[k]
        if shift != 0:
            for i in range(nbytes):
                wide[b0 + i] = wide[byte_base[k] + i]
        if shift != 0 or t0 != tok_base[k]:
            for i in range(ntoks):
                wide_s[t0 + i] = wide_s[tok_base[k] + i] + shift
                wide_e[t0 + i] = wide_e[tok_base[k] + i] + shift
    return (
        wide[: doc_offsets[n]],
        doc_offsets,
        wide_s[: tok_offsets[n]],
        wide_e[: tok_offsets[n]],
        tok_offsets,
    )


@njit(cache=True)
def stop_bits(stops: np.ndarray) -> int:
    """log2 of the size of a :func:`stop_set` (its slots are the top bits of a product)."""
    bits = 0
    while (1 << bits) < stops.size:
        bits += 1
    return bits


@njit(cache=True)
def _ascii_map(table: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Per byte: a space if it is ASCII and separates tokens, ``_WORD_CHAR`` | its folded byte
    if it is an ASCII token character (its own byte when not folding), ``NON_ASCII`` from 0x80
    on: the byte ``_scan`` writes and whether it is part of a word, in one load. Empty (no
    short path) unless every ASCII character separates or is a token character folding to
    one nonzero ASCII byte, as with the tables of ``text.chars``."""
    out = np.full(256, NON_ASCII, dtype=np.uint16)
    for b in range(128):
        out[b] = _SPACE
        if table[b] == SEPARATOR:
            continue
        f = fold[b] if fold.size > 0 else np.uint32(b)
        if table[b] != TOKEN_CHAR or f == 0 or f >= 0x80:
            return np.zeros(0, dtype=np.uint16)
        out[b] = _WORD_CHAR | np.uint16(f)
    return out


@njit(cache=True)
def _chunks(starts: np.ndarray, ends: np.ndarray, parts: int) -> np.ndarray:
    """Document indices cutting the batch into about ``parts`` runs of similar length."""
    n = starts.size
    total = 0
    for d in range(n):
        total += ends[d] - starts[d] + 1
    target = max(1, total // max(1, parts))
    cuts = [0]
    acc = 0
    for d in range(n):
        acc += ends[d] - starts[d] + 1
        if acc >= target and d + 1 < n:
            cuts.append(d + 1)
            acc = 0
    cuts.append(n)
    return np.array(cuts, dtype=np.int64)
