"""Word forms: Russian lemmatization and adjective removal (pymorphy3), Snowball stemming.

Bringing "кошки"/"кошку"/"кошкой" to one form lets rewrites that only change inflection still
share shingles (docs/methods.md). Both libraries are loaded lazily, once; results are cached per
distinct word, because a corpus repeats its words far more often than it adds new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from neardup.errors import ConfigError, MissingDependencyError

__all__ = ["drop_adjectives", "drop_adjectives_ru", "lemmatize", "lemmatize_ru", "stem"]

# Parts of speech dropped by drop_adjectives_ru: full and short adjectives, and full and short
# participles ("сгоревший дом", "книга прочитана"): participles inflect and modify nouns like
# adjectives do and carry as little of a text's topic. Comparatives (COMP: "быстрее") stay:
# they are often predicates ("цены стали выше").
ADJECTIVE_POS = frozenset({"ADJF", "ADJS", "PRTF", "PRTS"})

# A word cache is emptied when it grows past this many entries (bounds memory on huge corpora).
_CACHE_LIMIT = 1 << 20

_morph_lock = threading.Lock()
_morph: Any = None
# word → (normal form, most probable POS or None), filled from pymorphy3's best parse.
_ru_cache: dict[str, tuple[str, str | None]] = {}


def _analyzer() -> Any:
    """The shared pymorphy3 MorphAnalyzer, created on first use (loading takes ~0.1 s)."""
    global _morph
    if _morph is None:
        with _morph_lock:
            if _morph is None:
                try:
                    import pymorphy3
                except ImportError as e:
                    raise MissingDependencyError(
                        "pymorphy3", "morph", "Russian lemmatization"
                    ) from e
                _morph = pymorphy3.MorphAnalyzer(lang="ru")
    return _morph


def _cached_map(
    tokens: Sequence[str], cache: dict[str, Any], compute: Callable[[list[str]], list[Any]]
) -> dict[str, Any]:
    """Map each distinct token to its value, computing only the ones not in ``cache``.

    Safe with several threads: the result is built in a local dict, so a concurrent reset of
    ``cache`` cannot lose a value.
    """
    found: dict[str, Any] = {}
    missing: list[str] = []
    for token in set(tokens):
        value = cache.get(token)
        if value is None:
            missing.append(token)
        else:
            found[token] = value
    if missing:
        values = compute(missing)
        if len(cache) + len(missing) > _CACHE_LIMIT:
            cache.clear()
        new = dict(zip(missing, values, strict=True))
        cache.update(new)
        found.update(new)
    return found


def _parse_ru(words: list[str]) -> list[tuple[str, str | None]]:
    """Normal form and POS of each word by pymorphy3's most probable parse."""
    parse = _analyzer().parse
    out = []
    for word in words:
        best = parse(word)[0]
        out.append((best.normal_form, best.tag.POS))
    return out


def lemmatize_ru(tokens: Sequence[str]) -> list[str]:
    """Russian words to their normal forms (nouns nominative singular, verbs infinitive, ...)
    by pymorphy3's most probable parse; other tokens (numbers, Latin) come back lower-cased."""
    info = _cached_map(tokens, _ru_cache, _parse_ru)
    return [info[t][0] for t in tokens]


def drop_adjectives_ru(tokens: Sequence[str]) -> list[str]:
    """The tokens without adjectives and participles (most probable POS in ADJECTIVE_POS).

    The surviving tokens are returned unchanged (not lemmatized).
    """
    info = _cached_map(tokens, _ru_cache, _parse_ru)
    return [t for t in tokens if info[t][1] not in ADJECTIVE_POS]


_STEM_LANGS = {"en": "english", "ru": "russian"}


@cache
def _stemmer(lang: str) -> tuple[Any, threading.Lock, dict[str, str]]:
    """Snowball stemmer for ``lang`` with its lock (a stemmer is stateful) and word cache."""
    import snowballstemmer

    return snowballstemmer.stemmer(_STEM_LANGS[lang]), threading.Lock(), {}


def stem(tokens: Sequence[str], lang: str) -> list[str]:
    """Snowball stems of ``tokens`` for "en" or "ru" ("generously" → "generous",
    "кошки" → "кошк"); cached per distinct word."""
    if lang not in _STEM_LANGS:
        raise ConfigError(
            f"stemming is not available for language {lang!r}; supported: {', '.join(_STEM_LANGS)}"
        )
    stemmer, lock, cache = _stemmer(lang)

    def compute(words: list[str]) -> list[str]:
        with lock:
            return list(stemmer.stemWords(words))

    stems = _cached_map(tokens, cache, compute)
    return [stems[t] for t in tokens]


def lemmatize(tokens: Sequence[str], lang: str) -> list[str]:
    """Lemmatize ``tokens`` of ``lang``: Russian with pymorphy3; Chinese unchanged (it has no
    inflection: a word has one form). English has no lemmatizer here: use stemming."""
    if lang == "ru":
        return lemmatize_ru(tokens)
    if lang == "zh":
        return list(tokens)
    if lang == "en":
        raise ConfigError(
            "lemmatization is available for Russian (pymorphy3); use stemming for English"
        )
    raise ConfigError(f"lemmatization is not available for language {lang!r}; supported: ru, zh")


def drop_adjectives(tokens: Sequence[str], lang: str) -> list[str]:
    """Drop adjectives (and participles) from ``tokens``; Russian only, as it needs a
    part-of-speech tagger and pymorphy3 is the only one neardup uses."""
    if lang == "ru":
        return drop_adjectives_ru(tokens)
    raise ConfigError(
        f"adjective removal is available for Russian only (pymorphy3 tags parts of speech); "
        f"not for language {lang!r}"
    )
