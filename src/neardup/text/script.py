"""Which language a text is in, told cheaply by its script: Han → zh, Cyrillic → ru, else en."""

from __future__ import annotations

import functools
import re

import numpy as np

from neardup.text.segment import HAN_CLASS

__all__ = ["HAN_SHARE", "detect_lang", "lang_from_counts", "langs_from_counts"]

# A text is Chinese when Han characters are at least this share of its letters. One Han
# character is about a word, one Latin/Cyrillic letter a fifth of one, so at 0.2 the Chinese
# words are about as many as the others: a Chinese article full of English terms is "zh", an
# English text quoting a name in characters ("Mao Zedong (毛泽东)") is not.
HAN_SHARE = 0.2

_HAN = f"[{HAN_CLASS}]"
_CYRILLIC = "[\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f]"
_LATIN = "[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]"


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Han or Cyrillic; runs of Han, of Cyrillic, of Latin letters. Compiled on first use:
    batches count scripts by a compiled kernel, and the Han class takes ~10 ms to compile."""
    runs = (re.compile(f"{cls}+") for cls in (_HAN, _CYRILLIC, _LATIN))
    return (re.compile(f"{_HAN}|{_CYRILLIC}"), *runs)  # type: ignore[return-value]


# Longer texts are judged by evenly spaced samples: the script of a text does not change
# every few kilobytes, and this bounds the cost on megabyte texts.
_SAMPLE_ABOVE = 1 << 16
_SAMPLES = 16
_SAMPLE_LEN = 1 << 12


def _letters(pattern: re.Pattern[str], text: str) -> int:
    """How many characters of ``text`` ``pattern`` (a run of one class) covers."""
    return sum(map(len, pattern.findall(text)))


def detect_lang(text: str) -> str:
    """ "zh" if Han characters are a meaningful share (HAN_SHARE) of the letters, else "ru" if
    Cyrillic letters outnumber Latin ones, else "en" — also for texts without letters."""
    if text.isascii():
        return "en"
    if len(text) > _SAMPLE_ABOVE:
        step = (len(text) - _SAMPLE_LEN) // (_SAMPLES - 1)
        text = "\n".join(text[i * step : i * step + _SAMPLE_LEN] for i in range(_SAMPLES))
    either, han, cyrillic, latin = _patterns()
    if either.search(text) is None:
        return "en"  # Latin, or no letters at all: no counting needed
    return lang_from_counts(_letters(han, text), _letters(cyrillic, text), _letters(latin, text))


def lang_from_counts(han: int, cyrillic: int, latin: int) -> str:
    """The language rule of :func:`detect_lang`, from letter counts per script."""
    if han and han >= HAN_SHARE * (han + cyrillic + latin):
        return "zh"
    if cyrillic > latin:
        return "ru"
    return "en"


def langs_from_counts(counts: np.ndarray) -> list[str]:
    """The same rule for an (n, 3) array of Han / Cyrillic / Latin counts (vectorized)."""
    han, cyrillic, latin = counts[:, 0], counts[:, 1], counts[:, 2]
    zh = (han > 0) & (han >= HAN_SHARE * counts.sum(axis=1))
    codes = np.where(zh, 2, np.where(cyrillic > latin, 1, 0))
    return np.array(["en", "ru", "zh"])[codes].tolist()
