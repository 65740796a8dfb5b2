"""Compiled pre-check of the per-text cleaning steps: which texts of a batch they could change.

The cleaning steps (wiki markup, HTML, quoted lines, NFKC) are Python, per text; most texts
have nothing for them to do, and even deciding that in Python (a regex search for quoted
lines, several substring scans) cost about as much as tokenizing. One pass over the batch's
UTF-8 flags the texts that hold any byte pattern a step starts from, or a character NFKC may
change (a table of the characters its quick check passes) — a superset of the
texts the steps change — so Python only looks at those.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from neardup.text.tokenize_kernels import decode_utf8

MARKUP = np.uint8(1)  # may hold wiki markup, HTML or quoted lines: every cleaning step runs
NFKC = np.uint8(2)  # no markup, but characters NFKC may change
NON_ASCII = np.uint8(4)  # non-ASCII bytes (a text without: no letter counts needed)

# What each byte is to the scan. Nearly all bytes of a text are PLAIN (letters, digits,
# spaces, newlines, most punctuation): one well-predicted branch each.
PLAIN, HIGH, OPEN, PAIRED, QUOTE, NUL = range(6)
_KIND = np.full(256, PLAIN, dtype=np.uint8)
_KIND[0] = NUL  # replaced by a space (it separates the texts of a batch)
_KIND[0x80:] = HIGH  # a byte of a non-ASCII character
_KIND[[0x3C, 0x26]] = OPEN  # "<" and "&": HTML (and "<ref" of wiki)
_KIND[[0x5B, 0x7B, 0x27, 0x3D, 0x5F, 0x7C]] = PAIRED  # [[ {{ '' == __ {|: wiki markers
_KIND[0x3E] = QUOTE  # ">": a quoted line, after a newline and indentation
_NEWLINE, _SPACE, _TAB, _BRACE = 0x0A, 0x20, 0x09, 0x7B


@njit(cache=True, inline="always")
def _quotes_line(text: np.ndarray, lo: int, i: int) -> bool:
    """Whether the ">" at text[i] follows a newline and only spaces or tabs."""
    j = i - 1
    while j >= lo and (text[j] == _SPACE or text[j] == _TAB):
        j -= 1
    return j >= lo and text[j] == _NEWLINE


_BLOCK = 8  # bytes checked at once: the OR of their kinds (PLAIN is 0)


@njit(cache=True, inline="always")
def _plain_block(text: np.ndarray, i: int, kind: np.ndarray) -> bool:
    """Whether the 8 bytes text[i:i + 8] are all PLAIN: one branch for the 8."""
    p = np.uint64(i)  # unsigned: no negative-index wraparound code
    k = kind[text[p]] | kind[text[p + np.uint64(1)]] | kind[text[p + np.uint64(2)]]
    k |= kind[text[p + np.uint64(3)]] | kind[text[p + np.uint64(4)]]
    k |= kind[text[p + np.uint64(5)]] | kind[text[p + np.uint64(6)]] | kind[text[p + np.uint64(7)]]
    return k == PLAIN


@njit(cache=True)
def _flags(
    text: np.ndarray,
    lo: int,
    hi: int,
    kind: np.ndarray,
    stable: np.ndarray,
    wiki: bool,
    html: bool,
    quotes: bool,
    normalize: bool,
) -> np.uint8:
    """The flags of the UTF-8 bytes text[lo:hi] (see :func:`cleaning_flags`)."""
    out = np.uint8(0)
    if quotes and hi > lo and text[lo] == 0x3E:
        return MARKUP  # starts with a quoted line
    i = lo
    while i < hi:
        stop = min(i + _BLOCK, hi)
        if stop - i == _BLOCK and _plain_block(text, i, kind):
            i = stop  # the usual case: one branch for 8 bytes
            continue
        while i < stop:  # byte by byte
            at = i
            i += 1
            b = text[at]
            k = kind[b]
            if k == PLAIN:
                continue
            if k == HIGH:
                out |= NON_ASCII
                first = (b & 0xC0) != 0x80  # the first byte of a character
                if (
                    normalize
                    and out == NON_ASCII
                    and first
                    and stable[decode_utf8(text, at)[0]] == 0
                ):
                    out |= NFKC
            elif k == OPEN:
                if html or wiki:  # wiki: "<ref", taken as any "<" (a superset is safe)
                    return MARKUP
            elif k == PAIRED:
                if (
                    wiki
                    and at > lo
                    and (text[at - 1] == b or (text[at - 1] == _BRACE and b == 0x7C))
                ):
                    return MARKUP
            elif k == QUOTE:
                if quotes and _quotes_line(text, lo, at):
                    return MARKUP
            else:  # NUL
                return MARKUP
    return out


@njit(cache=True, parallel=True, nogil=True)
def cleaning_flags(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    stable: np.ndarray,
    wiki: bool,
    html: bool,
    quotes: bool,
    normalize: bool,
) -> np.ndarray:
    """Per text ``text[starts[d]:ends[d]]``: MARKUP if a switched-on markup step could change
    it (``<`` or ``&``, a wiki marker pair, a ``>`` opening the text or a line after
    indentation) or it holds a NUL; else NFKC if ``normalize`` and it has a character
    that NFKC may change (``stable``: :func:`neardup.text.chars.nfkc_stable_table`); else
    neither: every step would leave it as it is. NON_ASCII is added for non-ASCII bytes
    (before any MARKUP: a MARKUP text may have them or not)."""
    n = starts.size
    out = np.zeros(n, dtype=np.uint8)
    for d in prange(n):
        out[d] = _flags(text, starts[d], ends[d], _KIND, stable, wiki, html, quotes, normalize)
    return out
