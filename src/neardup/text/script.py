"""Which language a text is in, told cheaply by its script: Han → zh, Cyrillic → ru, else en."""

from __future__ import annotations

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
_HAN_OR_CYRILLIC = re.compile(f"{_HAN}|{_CYRILLIC}")
_RUNS = {name: re.compile(f"{cls}+") for name, cls in (("zh", _HAN), ("ru", _CYRILLIC))}
_LATIN_RUNS = re.compile(f"{_LATIN}+")

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
    if _HAN_OR_CYRILLIC.search(text) is None:
        return "en"  # Latin, or no letters at all: no counting needed
    return lang_from_counts(
        _letters(_RUNS["zh"], text), _letters(_RUNS["ru"], text), _letters(_LATIN_RUNS, text)
    )


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
