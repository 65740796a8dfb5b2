"""Stop words: the lists of the ``stopwords`` package, and the user's own files.

For English it carries the classic Snowball list (175 function words); the larger lists of
other packages (1,300 English words, "room", "problems", "microsoft" among them) would remove
content words and merge texts that differ.

Stop words (prepositions, conjunctions, particles, pronouns, determiners) are removed so that
shingles are built from the words that carry a text's content (docs/methods.md, Canonicalization).
"""

from __future__ import annotations

import os
from functools import cache

from neardup.errors import ConfigError, InputError

__all__ = ["LANGS", "load_stopword_file", "stopwords_for"]

LANGS = ("en", "ru", "zh")

_PACKAGE_NAMES = {"en": "english", "ru": "russian", "zh": "chinese"}

# A lecture's classic Russian list (docs/methods.md); "ко" and "б" are missing from the package.
LECTURE_RU = frozenset(
    "это как так в на над к ко до за то с со для о ну же ж что он она б бы ли и у".split()  # noqa: SIM905
)


def _usable(word: str) -> bool:
    """Whether a package entry can be a stop word: not empty, not a number, not mangled."""
    return bool(word) and not word.isdigit() and "”" not in word


@cache
def stopwords_for(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` ("en", "ru" or "zh"), lower-case; for Russian with the
    lecture's list added. Numbers are never stop words (they tell news items apart)."""
    if lang not in LANGS:
        raise ConfigError(f"no stop-word list for language {lang!r}; supported: {', '.join(LANGS)}")
    import stopwords

    words = {w.strip().lower() for w in stopwords.get_stopwords(_PACKAGE_NAMES[lang])}
    words = {w for w in words if _usable(w)}
    if lang == "ru":
        words |= LECTURE_RU
    return frozenset(words)


def load_stopword_file(path: str | os.PathLike[str]) -> frozenset[str]:
    """The user's stop words from a UTF-8 file: one word per line (several whitespace-separated
    words on a line are all taken), ``#`` comment lines and blank lines ignored, words
    lower-cased like the texts they are matched against. A byte-order mark is allowed.

    Raises :class:`~neardup.errors.InputError` naming the file (and the line of a bad byte)
    when it cannot be read or is not UTF-8.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"cannot read stop-word file {name!r}: {e.strerror or e}") from e
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"stop-word file {name!r} is not UTF-8 (line {line}, byte {e.start}): {e.reason}"
        ) from e
    words: set[str] = set()
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            words.update(w.lower() for w in line.split())
    return frozenset(words)
