"""Per-code-point class tables for the compiled tokenizer, built once per process.

A token is a run of word characters: letters, digits and combining marks (Python's ``\\w``
without the underscore, plus categories Mn/Mc/Me so that scripts with vowel signs stay whole).
Format characters (category Cf: soft hyphen, zero-width joiners, BOM) are ignored inside
words instead of splitting them. With punctuation kept, only whitespace separates tokens.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

import numpy as np

from neardup.text.tokenize_kernels import IGNORABLE, SEPARATOR, TOKEN_CHAR
from neardup.util.tablecache import cached_arrays

_NOT_WORD = re.compile(r"[\W_]")


def _all_chars() -> str:
    return "".join(map(chr, range(sys.maxunicode + 1)))


def _codepoints(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _marks_and_formats(everything: str) -> tuple[np.ndarray, np.ndarray]:
    categories = np.array([unicodedata.category(c) for c in everything], dtype="<U2")
    marks = np.isin(categories, ["Mn", "Mc", "Me"])
    formats = categories == "Cf"
    return marks, formats


@functools.cache
def word_table() -> np.ndarray:
    """Classes for tokenizing with punctuation and special characters removed (built once
    per Python: :mod:`neardup.util.tablecache`)."""
    (table,) = cached_arrays("word-table", lambda: (_build_word_table(),))
    table.setflags(write=False)
    return table


def _build_word_table() -> np.ndarray:
    everything = _all_chars()
    table = np.full(sys.maxunicode + 1, TOKEN_CHAR, dtype=np.uint8)
    table[_codepoints(_NOT_WORD.sub("\x00", everything)) == 0] = SEPARATOR
    marks, formats = _marks_and_formats(everything)
    table[marks] = TOKEN_CHAR
    table[formats] = IGNORABLE
    table[0] = SEPARATOR
    return table


@functools.cache
def whitespace_table() -> np.ndarray:
    """Classes for tokenizing at whitespace only (punctuation kept inside tokens)."""
    table = np.full(sys.maxunicode + 1, TOKEN_CHAR, dtype=np.uint8)
    spaces = [i for i in range(sys.maxunicode + 1) if chr(i).isspace()]
    table[spaces] = SEPARATOR
    table[0] = SEPARATOR
    table.setflags(write=False)
    return table


def codepoints(text: str) -> np.ndarray:
    """The code points of ``text`` as uint32 (lone surrogates kept, they are separators)."""
    return _codepoints(text)


FOLD_EXPANDS = np.uint32(0x80000000)  # flag: the fold is several code points, see fold_table


@functools.cache
def fold_table() -> tuple[np.ndarray, np.ndarray]:
    """Unicode full case folding as tables: ``(fold, expansions)``.

    ``fold[c]`` is the folded code point of ``c``, or ``FOLD_EXPANDS | k`` when ``c`` folds to
    several code points (ß → ss; 104 such characters), listed in ``expansions[k]`` (zero-padded
    rows of three). Equal to ``str.casefold`` of the Python running neardup (built once per
    Python: :mod:`neardup.util.tablecache`).
    """
    fold, expansions = cached_arrays("fold-table", _build_fold_table)
    fold.setflags(write=False)
    expansions.setflags(write=False)
    return fold, expansions


def _build_fold_table() -> tuple[np.ndarray, np.ndarray]:
    folded = [chr(c).casefold() for c in range(sys.maxunicode + 1)]
    fold = np.arange(sys.maxunicode + 1, dtype=np.uint32)
    rows: list[list[int]] = []
    for c, f in enumerate(folded):
        if len(f) == 1:
            fold[c] = ord(f)
        else:
            fold[c] = FOLD_EXPANDS | np.uint32(len(rows))
            rows.append([ord(x) for x in f] + [0] * (3 - len(f)))
    expansions = np.array(rows, dtype=np.uint32).reshape(-1, 3)
    fold.setflags(write=False)
    expansions.setflags(write=False)
    return fold, expansions


# Hangul vowel and trailing consonant jamo: they compose with the syllable before them.
_HANGUL_COMPOSING = [(0x1161, 0x1176), (0x11A8, 0x11C3)]


@functools.cache
def nfkc_stable_table() -> np.ndarray:
    """Per code point, 1 if no text made of such characters is changed by NFKC: the
    character is NFKC as it is (not Quick_Check=No), has combining class 0, and never
    composes with a character before it (Quick_Check=Maybe: the second character of a
    canonical pair, Hangul jamo). A text holding only these passes NFKC's quick check, so
    the compiled pre-check skips ``unicodedata.normalize`` for it (built once per Python:
    :mod:`neardup.util.tablecache`)."""
    (table,) = cached_arrays("nfkc-stable", lambda: (_build_nfkc_stable_table(),))
    table.setflags(write=False)
    return table


def _build_nfkc_stable_table() -> np.ndarray:
    stable = np.zeros(sys.maxunicode + 1, dtype=np.uint8)
    seconds = set()
    for c in range(sys.maxunicode + 1):
        ch = chr(c)
        if unicodedata.is_normalized("NFKC", ch) and not unicodedata.combining(ch):
            stable[c] = 1
        parts = unicodedata.decomposition(ch).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(int(parts[1], 16))
    stable[sorted(seconds)] = 0
    for lo, hi in _HANGUL_COMPOSING:
        stable[lo:hi] = 0
    return stable


NFKC_KEEP = -1  # nfkc_replacements: a stable character, kept as it is
NFKC_CONTEXT = -2  # its NFKC may depend on its neighbours: the whole text is normalized


@functools.cache
def nfkc_replacements() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NFKC as a table of replacements, for the texts it can normalize character by
    character: ``(index, offsets, pool)``; ``index[c]`` is ``NFKC_KEEP`` for a stable
    character (:func:`nfkc_stable_table`), ``k >= 0`` when NFKC replaces ``c`` by the UTF-8
    ``pool[offsets[k]:offsets[k + 1]]`` wherever it stands, else ``NFKC_CONTEXT``.

    A character is replaced in place (no-break space, ellipsis, numero sign, full-width
    punctuation, ligatures...) when it has combining class 0, its compatibility
    decomposition starts with a stable character and its NFKC is made of stable characters.
    Then nothing composes or reorders across it: NFKC of a text made of stable and such
    characters is each character's own NFKC, joined (checked against ``unicodedata`` in
    the tests). Built once per Python (:mod:`neardup.util.tablecache`)."""
    index, offsets, pool = cached_arrays(
        "nfkc-replacements", lambda: _build_nfkc_replacements(nfkc_stable_table())
    )
    for array in (index, offsets, pool):
        array.setflags(write=False)
    return index, offsets, pool


def _build_nfkc_replacements(stable: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    index = np.where(stable == 1, NFKC_KEEP, NFKC_CONTEXT).astype(np.int32)
    pieces: list[bytes] = []
    for c in np.flatnonzero(stable == 0).tolist():
        ch = chr(c)
        decomposed = unicodedata.normalize("NFKD", ch)
        normal = unicodedata.normalize("NFKC", ch)
        if (
            unicodedata.combining(ch)
            or not stable[ord(decomposed[0])]
            or not all(stable[ord(x)] for x in normal)
        ):
            continue
        index[c] = len(pieces)
        pieces.append(normal.encode("utf-8", "surrogatepass"))
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pieces])
    return index, offsets, np.frombuffer(b"".join(pieces), dtype=np.uint8).copy()
