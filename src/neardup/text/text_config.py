"""Frozen configuration of the text → fingerprints flow, with a stable fingerprint.

A config is data only: validation happens once at construction and names the bad value;
the logic that uses a config lives in the modules that run each step. ``config_fingerprint``
gives a short, stable digest of any config so that stored signatures can refuse to be mixed
with signatures made under another config.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from neardup.errors import ConfigError

Lang = Literal["auto", "en", "ru", "zh"]
Unit = Literal["word", "char", "auto"]
HashName = Literal["xxh3", "crc32", "rabin"]
ProfileName = Literal["default", "none"]

LANGS: tuple[str, ...] = get_args(Lang)
UNITS: tuple[str, ...] = get_args(Unit)
HASH_NAMES: tuple[str, ...] = get_args(HashName)
PROFILES: tuple[str, ...] = get_args(ProfileName)
# the paper's w = 4; the article's k = 5; auto (words, characters for Chinese): the size that
# measured best on the shared benchmark for both
DEFAULT_SIZES: dict[str, int] = {"word": 4, "char": 5, "auto": 3}
# auto: clauses of Han characters in shingles of 2 (heavy character edits spare them; chosen
# on neardup-bench and the trust benches, README)
DEFAULT_HAN_SIZE = 2
# the largest shingle size and step: far beyond any useful value, and well inside the int64
# arithmetic of the compiled kernels (a size of 10**20 overflowed them)
MAX_UNITS = 1 << 20


def _require_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name}={value!r} is not one of {', '.join(allowed)}")


def _require_positive(name: str, value: object, at_most: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    if at_most is not None and value > at_most:
        raise ConfigError(f"{name}={value!r} must be at most {at_most}")


@dataclass(frozen=True, slots=True)
class CanonConfig:
    """Which canonicalization steps run (docs/methods.md, Canonicalization). Every step is a switch.

    ``lang="auto"`` picks each text's language from its script (Han → zh, Cyrillic → ru,
    otherwise en); lemmatization and stemming then apply per token by script.
    """

    lang: Lang = "auto"
    html: bool = True  # strip tags and entities when the text looks like HTML
    boilerplate: bool = True  # drop menus, headers, footers... before stripping tags
    wiki: bool = True  # strip leftover MediaWiki markup when the text looks like wikitext
    quotes: bool = True  # drop quoted lines ("> …" of mail replies): another text's words
    normalize: bool = True  # Unicode NFKC
    lowercase: bool = True  # Unicode case folding
    punctuation: bool = True  # remove punctuation and special characters
    stopwords: bool = False  # remove the language's stop words (and ``extra_stopwords``)
    extra_stopwords: tuple[str, ...] = ()
    segment: bool = True  # segment Chinese into words with jieba (word shingles only)
    lemmatize: bool = False  # Russian: pymorphy3 normal forms
    stem: bool = False  # Snowball stems (English, Russian)
    drop_adjectives: bool = False  # Russian: remove adjectives and participles (pymorphy3)

    def __post_init__(self) -> None:
        _require_choice("lang", self.lang, LANGS)
        if isinstance(self.extra_stopwords, str):
            raise ConfigError("extra_stopwords must be a sequence of words, not one string")
        object.__setattr__(self, "extra_stopwords", tuple(sorted(set(self.extra_stopwords))))
        if self.lemmatize and self.stem:
            raise ConfigError("choose one of lemmatize and stem, not both")

    @classmethod
    def profile(cls, name: str = "default", **overrides: Any) -> CanonConfig:
        """A named profile (``default`` or ``none``) with individual switches overridden.

        ``none`` leaves the text untouched: it is only split at whitespace.
        """
        _require_choice("profile", name, PROFILES)
        base: dict[str, Any] = {}
        if name == "none":
            base = {
                "html": False,
                "boilerplate": False,
                "wiki": False,
                "quotes": False,
                "normalize": False,
                "lowercase": False,
                "punctuation": False,
                "stopwords": False,
                "segment": False,
            }
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"unknown canonicalization setting(s): {', '.join(sorted(unknown))}")
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)


@dataclass(frozen=True, slots=True)
class ShingleConfig:
    """How tokens become shingles and shingles become fingerprints (docs/methods.md).

    A text with fewer than ``size`` units (but at least one) gives exactly one shingle made
    of all its units; an empty text gives none.
    """

    unit: Unit = "word"
    size: int = 4
    step: int = 1
    hash: HashName = "xxh3"
    seed: int = 0
    # unit auto: the size of shingles of a clause of Han characters alone (None: the
    # smaller of ``DEFAULT_HAN_SIZE`` and ``size``); a Han character is about half a word,
    # and character edits spare short shingles
    han_size: int | None = None

    def __post_init__(self) -> None:
        _require_choice("unit", self.unit, UNITS)
        _require_positive("size", self.size, MAX_UNITS)
        if self.han_size is not None:
            _require_positive("han_size", self.han_size, MAX_UNITS)
        _require_positive("step", self.step, MAX_UNITS)
        _require_choice("hash", self.hash, HASH_NAMES)
        if not isinstance(self.seed, int) or not 0 <= self.seed < 2**64:
            raise ConfigError(f"seed={self.seed!r} must be an integer in [0, 2**64)")

    @property
    def han_units(self) -> int:
        """Tokens per shingle of a Han clause (the ``auto`` unit's Han characters)."""
        if self.han_size is not None:
            return self.han_size
        return min(DEFAULT_HAN_SIZE, self.size) if self.unit == "auto" else self.size


@dataclass(frozen=True, slots=True)
class TextConfig:
    """Canonicalization plus shingling: everything that turns a text into fingerprints."""

    canon: CanonConfig = field(default_factory=CanonConfig)
    shingle: ShingleConfig = field(default_factory=ShingleConfig)


def config_fingerprint(*configs: object) -> str:
    """A 16-hex-digit stable digest of config dataclasses (same on every machine and process)."""
    for config in configs:
        if not dataclasses.is_dataclass(config) or isinstance(config, type):
            raise ConfigError(f"not a config object: {config!r}")
    payload = [_plain(config) for config in configs]
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)} | {
            "__type__": type(value).__name__
        }
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
