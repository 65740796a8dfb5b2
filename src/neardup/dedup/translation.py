"""A translation is another document: none is removed into a keeper that translates it.

A man page and its partial translation share every line left untranslated; the Spanish page
holds most of the English one, yet a reader keeps the English original. What tells a
translation from a copy with more text (a digest, a reply, a page with a footer) is the
language of what the keeper adds. Function words tell languages apart cheaply: the lists of
the ``stopwords`` package, hashed as the run hashes its words.

- A document's **language** is the one most of its function words belong to (a word of k
  languages counts 1/k to each); with fewer than ``LEAST_OWN`` of them it has none, and
  nothing is refused on language.
- A keeper **translates** a document when it lacks ``FOREIGN_WORDS`` or more of the
  document's words (a translation puts its own words in their place; a document wholly
  inside one with paragraphs in other languages is a part of it) and what it adds is in
  another language:

  - ``FOREIGN_WORDS`` or more function words of one other language (and not of the
    document's), more than ``FOREIGN_SHARE`` times as many as of the document's language;
  - or text in a script of characters (Han, kana:
    :data:`~neardup.fingerprints.word_kernels.CHARACTERS`, whose words are in no list) added to a
    document with none;
  - or ``FOREIGN_WORDS`` or more words with letters beyond ASCII (accented, Cyrillic:
    ``LETTERED``), at least ``LETTERED_SHARE`` of the words added, to a document with fewer
    than ``FOREIGN_WORDS`` of them. A translation of a page's headings alone adds too few
    function words to tell, but its letters tell; a digest quoting a few accented names
    adds a small share of them.

Checked with the identity check (:mod:`neardup.dedup.identity`) on the pairs whose scores
allow a removal and that are not near-identical as written; ``--no-identity`` turns both off.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from neardup.dedup import identity_kernels as _k
from neardup.fingerprints.hashing import kernel_hash
from neardup.fingerprints.word_kernels import WORD, WORD_HASH_VERSION, word_sets
from neardup.text.canon import canonicalize_batch
from neardup.text.text_config import TextConfig, config_fingerprint
from neardup.util.arrays import run_starts
from neardup.util.tablecache import cached_arrays

LEAST_OWN = 3.0  # function words (weighted) that tell a document's language
FOREIGN_WORDS = 3  # a keeper adding this many function words of another language …
FOREIGN_SHARE = 2  # … and more than this many times those of the document's translates it
LETTERED_SHARE = 0.1  # added words with letters beyond ASCII: this share of them translates

# lists of one language under two names in the ``stopwords`` package
_SAME_LANGUAGE = {"brazilian": "portuguese"}


@dataclass(frozen=True, slots=True, eq=False)
class FunctionWords:
    """The function words of many languages as a run hashes its words: ``hashes`` (sorted,
    distinct, unmarked) and for each the bit mask of its ``languages``."""

    hashes: np.ndarray
    masks: np.ndarray
    languages: tuple[str, ...]
    table: tuple[np.ndarray, np.uint64]
    listed: tuple[np.ndarray, np.ndarray]  # each word's languages: (offsets, numbers)


@dataclass(frozen=True, slots=True)
class Translations:
    """Per pair (held document, holder): the held document's language (-1: none told) and
    its words with letters beyond ASCII; among the holder's words it lacks (``added``):
    function words of that language and of the other language most of them belong to
    (``other``), words with letters beyond ASCII, and whether one is text in a script of
    characters (``script``)."""

    own: np.ndarray
    own_lettered: np.ndarray
    same: np.ndarray
    other: np.ndarray
    foreign: np.ndarray
    added: np.ndarray
    lettered: np.ndarray
    script: np.ndarray
    lacking: np.ndarray  # the held document's words the holder lacks

    def by_words(self) -> np.ndarray:
        """Whether the holder adds another language's function words."""
        return (self.foreign >= FOREIGN_WORDS) & (self.foreign > FOREIGN_SHARE * self.same)

    def by_letters(self) -> np.ndarray:
        """Whether the holder adds text in letters or a script the held document is not in."""
        few = self.own_lettered < FOREIGN_WORDS
        letters = (self.lettered >= FOREIGN_WORDS) & (self.lettered >= LETTERED_SHARE * self.added)
        return (few & letters) | self.script

    def translated(self) -> np.ndarray:
        """Whether the holder translates the held document (and lacks some of its words: a
        document wholly inside one with text in other languages is a part of it)."""
        replaced = (self.own >= 0) & (self.lacking >= FOREIGN_WORDS)
        return replaced & (self.by_words() | self.by_letters())


@functools.cache
def function_words(config: TextConfig) -> FunctionWords:
    """The function words of every language of the ``stopwords`` package, canonicalized and
    hashed as ``config`` makes words (a list word that is no single word is left out).

    Kept on disk between runs (:mod:`neardup.util.tablecache`): canonicalizing the lists
    takes longer than the rest of a small run, and with word shingles the Chinese list
    loads jieba's dictionary."""
    import stopwords

    languages = sorted({_SAME_LANGUAGE.get(x, x) for x in stopwords.AVAILABLE_LANGUAGES})
    made_by = f"stopwords{stopwords.__version__}-words{WORD_HASH_VERSION}"
    if config.canon.segment and config.shingle.unit == "word":  # Chinese cut by jieba
        made_by += f"-jieba{_version('jieba')}"
    keys, masks = cached_arrays(
        f"function-words-{config_fingerprint(config)}-{made_by}",
        lambda: _hashed_lists(config, languages),
    )
    table = _k.function_word_table(keys)
    return FunctionWords(keys, masks, tuple(languages), table, _listed(masks))


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "none"


def _hashed_lists(config: TextConfig, languages: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The function words' hashes (sorted, distinct) and the bit mask of their languages."""
    import stopwords

    listed, of = [], []
    for name in stopwords.AVAILABLE_LANGUAGES:
        words = stopwords.get_stopwords(name)
        listed += words
        of += [languages.index(_SAME_LANGUAGE.get(name, name))] * len(words)
    tokens = canonicalize_batch(listed, config.canon, config.shingle.unit)
    values, offsets = word_sets(
        tokens.buf,
        tokens.tok_starts,
        tokens.tok_ends,
        tokens.tok_offsets,
        kernel_hash(config.shingle.hash, config.shingle.seed)[1],
    )
    one = (np.diff(offsets) == 1) & (np.diff(tokens.tok_offsets) == 1)
    hashes = values[offsets[:-1][one]] & WORD
    bits = np.left_shift(np.uint64(1), np.array(of, dtype=np.uint64)[one])
    order = np.argsort(hashes)
    hashes, bits = hashes[order], bits[order]
    first = run_starts(hashes)
    masks = np.bitwise_or.reduceat(bits, first) if hashes.size else bits
    return hashes[first], masks


def _listed(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The languages of each bit mask, listed: ``numbers[offsets[i]:offsets[i + 1]]``."""
    bits = (masks[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1) != 0
    offsets = np.zeros(masks.size + 1, dtype=np.int64)
    np.cumsum(bits.sum(axis=1), out=offsets[1:])
    return offsets, np.nonzero(bits)[1].astype(np.int64)


def translations(
    words: np.ndarray,
    word_offsets: np.ndarray,
    held: np.ndarray,
    holder: np.ndarray,
    known: FunctionWords,
) -> Translations:
    """:class:`Translations` of the pairs ``(held[i], holder[i])`` of documents with the
    word sets ``words[word_offsets[d]:word_offsets[d + 1]]``."""
    found = _k.translations(
        np.asarray(words),
        word_offsets,
        np.ascontiguousarray(held, dtype=np.int64),
        np.ascontiguousarray(holder, dtype=np.int64),
        known.hashes,
        known.masks,
        known.listed,
        known.table,
        LEAST_OWN,
    )
    return Translations(*found)
