"""Canonicalization pipeline (docs/methods.md): many raw texts → one batch of canonical tokens.

Order of the steps, each switchable in :class:`~neardup.text.text_config.CanonConfig`:

1. markup: leftover wiki markup, then HTML (with boilerplate removal), only for texts that
   look like markup; quoted lines of mail replies (``> …``); NFKC normalization;
2. each text's language from its letters' scripts (compiled, over the batch);
3. Chinese word segmentation (jieba) of the runs of Han characters, for word shingles (the
   ``auto`` unit instead makes each Han character a token, per run of script, and marks
   where punctuation or a line break ends a Han clause; lemmatizing or stemming re-joins the
   tokens by spaces and drops those marks);
4. tokenization with punctuation removed, case folded and stop words dropped — compiled,
   over the batch;
5. optional lemmatization / stemming / adjective removal, per unique word, then stop words
   dropped again (a lemma may be a stop word).

The result, :class:`TokenBatch`, holds every document's tokens joined by single spaces in
one UTF-8 buffer, so that a word shingle is a contiguous byte span of it.
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numba
import numpy as np

from neardup.text import chars, morph, segment, stopwords
from neardup.text.cleaning import DOC_SEPARATOR, clean_texts
from neardup.text.nfkc import nfkc
from neardup.text.nfkc_kernels import nfkc_replaced
from neardup.text.precheck_kernels import MARKUP, NFKC, cleaning_flags
from neardup.text.script import langs_from_counts
from neardup.text.script_kernels import script_counts
from neardup.text.text_config import CanonConfig, Unit
from neardup.text.tokenize_kernels import stop_set, token_hash, tokenize_batch
from neardup.util.arrays import regrown_spans

_CHUNKS_PER_THREAD = 4  # tasks per thread of the tokenizer: enough to balance uneven texts


def _frozen(array: np.ndarray) -> np.ndarray:
    """``array`` made read-only, as every table the kernels take is (those of
    :mod:`neardup.text.chars`, the stop words' hashes): numba compiles a kernel once for each
    type of its arguments, and an array's type says whether it is writable, so a step turned
    off would otherwise compile the kernels again."""
    array.setflags(write=False)
    return array


_NO_STOPS = _frozen(np.zeros(1, dtype=np.uint64))  # no stop words: the tokenizer skips them
_NO_TABLE = _frozen(np.zeros(0, dtype=np.uint8))
_NO_FOLD = (_frozen(np.empty(0, dtype=np.uint32)), _frozen(np.zeros((1, 3), dtype=np.uint32)))


@dataclass(frozen=True, slots=True, eq=False)
class TokenBatch:
    """Canonical tokens of a batch of documents, in one UTF-8 buffer.

    Document ``d`` is ``buf[doc_offsets[d]:doc_offsets[d+1]]``; its tokens are the byte spans
    ``tok_starts[t]:tok_ends[t]`` for ``t`` in ``tok_offsets[d]:tok_offsets[d+1]``. Tokens are
    joined by one space, or by nothing where ``spaced[d]`` is false (character shingles of
    Chinese, where spaces carry no meaning) and between two Han characters of the ``auto``
    unit, whose Han characters are tokens of their own; in the ``auto`` unit a line feed joins
    two tokens where punctuation or a line break ends a Han clause (shingles stop there).
    """

    buf: np.ndarray
    doc_offsets: np.ndarray
    tok_starts: np.ndarray
    tok_ends: np.ndarray
    tok_offsets: np.ndarray
    spaced: np.ndarray

    def __len__(self) -> int:
        return self.doc_offsets.size - 1

    def text(self, d: int) -> str:
        """Document ``d``'s canonical text."""
        return self.buf[self.doc_offsets[d] : self.doc_offsets[d + 1]].tobytes().decode()

    def tokens(self, d: int) -> list[str]:
        """Document ``d``'s canonical tokens."""
        t0, t1 = self.tok_offsets[d], self.tok_offsets[d + 1]
        base = int(self.doc_offsets[d])
        raw = self.buf[base : self.doc_offsets[d + 1]].tobytes()
        starts = (self.tok_starts[t0:t1] - base).tolist()
        ends = (self.tok_ends[t0:t1] - base).tolist()
        return [raw[s:e].decode() for s, e in zip(starts, ends, strict=True)]

    def by_char(self, unit: Unit) -> np.ndarray:
        """Per document: shingles of characters (else of tokens). ``auto`` shingles tokens,
        and its tokens are words, but single characters in runs of Han (decided per run of
        script, not per document: see :func:`neardup.text.tokenize_kernels.tokenize_batch`)."""
        return np.full(len(self), unit == "char", dtype=np.bool_)

    def shingle_input(self, unit: Unit) -> tuple[np.ndarray, ...]:
        """The arrays the shingle kernels take (``neardup.fingerprints.shingle_kernels``): the
        buffer, document and token offsets, and :meth:`by_char`."""
        return (
            self.buf, self.doc_offsets, self.tok_starts, self.tok_ends, self.tok_offsets,
            self.by_char(unit),
        )  # fmt: skip

    def token_counts(self) -> np.ndarray:
        """Number of tokens of every document."""
        return np.diff(self.tok_offsets)


def canonicalize(text: str, config: CanonConfig | None = None, unit: Unit = "word") -> str:
    """One text's canonical form (tokens joined by spaces)."""
    return canonicalize_batch([text], config, unit).text(0)


def canonicalize_batch(
    texts: Sequence[str], config: CanonConfig | None = None, unit: Unit = "word"
) -> TokenBatch:
    """Canonicalize many texts at once; see the module docstring for the steps."""
    return canonicalize_utf8(*split_texts(texts), config, unit, originals=texts)


def canonicalize_utf8(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: CanonConfig | None = None,
    unit: Unit = "word",
    originals: Sequence[str] | None = None,
) -> TokenBatch:
    """:func:`canonicalize_batch` of texts given as UTF-8: ``text[starts[d]:ends[d]]`` (e.g.
    an Arrow string column's buffer, whatever lies between the texts): no Python string is
    made but of the few texts a Python step changes. ``originals``: the texts as strings,
    when they exist already."""
    config = config or CanonConfig()
    prepared, langs = tokenizer_input(text, starts, ends, config, unit, originals)
    batch = _tokenize(prepared)
    if word_steps(config):
        words = [" ".join(_transform(batch.tokens(d), langs[d], config)) for d in range(len(batch))]
        text, starts, ends = split_texts(words)
        whitespace = chars.whitespace_table()
        batch = _tokenize(replace(prepared, text=text, starts=starts, ends=ends, table=whitespace))
    return batch


@dataclass(frozen=True, slots=True, eq=False)
class TokenizerInput:
    """A batch as the compiled tokenizer takes it (``text.tokenize_kernels.tokenize_batch``):
    its UTF-8 after the Python steps, the tables of the config, and per text whether its
    tokens are joined by spaces."""

    text: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    table: np.ndarray
    fold: np.ndarray
    expansions: np.ndarray
    stops: np.ndarray
    spaced: np.ndarray
    split_han: bool

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The tokenizer's array arguments, in its order (``split_han`` and parts aside)."""
        return (
            self.text, self.starts, self.ends, self.table, self.fold, self.expansions,
            self.stops, self.spaced,
        )  # fmt: skip


def word_steps(config: CanonConfig) -> bool:
    """Whether a Python step changes the tokens after tokenizing (lemmas, stems,
    adjectives): then they are tokenized twice."""
    return config.lemmatize or config.stem or config.drop_adjectives


def tokenizer_input(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: CanonConfig,
    unit: Unit,
    originals: Sequence[str] | None = None,
) -> tuple[TokenizerInput, list[str]]:
    """Steps 1-3 of the module docstring (markup, languages, Chinese segmentation) over the
    UTF-8 of a batch (see :func:`canonicalize_utf8`): what the tokenizer takes, and each
    text's language."""
    (text, starts, ends), plain = _clean_batch(text, starts, ends, config, originals)
    langs, han = _languages(text, starts, ends, config, plain)
    if config.segment and unit != "char":
        auto = config.lang == "auto"
        wanted = [
            d
            for d, (lang, has) in enumerate(zip(langs, han, strict=True))
            if unit == "word" and (lang == "zh" or (auto and has))
        ]
        if wanted:
            segmented = {d: segment.segment_zh(_decode(text, starts, ends, d)) for d in wanted}
            text, starts, ends = _replace(text, starts, ends, segmented)
    spaced = np.array([unit != "char" or lang != "zh" for lang in langs], dtype=np.bool_)
    table = chars.word_table() if config.punctuation else chars.whitespace_table()
    stops = _stop_hashes(config) if config.stopwords else _NO_STOPS
    fold, expansions = chars.fold_table() if config.lowercase else _NO_FOLD
    prepared = TokenizerInput(
        text, starts, ends, table, fold, expansions, stops, spaced, unit == "auto"
    )
    return prepared, langs


def tokenizer_parts() -> int:
    """How many tasks the compiled tokenizer cuts a batch into: a few per thread, to balance
    uneven texts; one on one thread (nothing to pack)."""
    threads = numba.get_num_threads()
    return _CHUNKS_PER_THREAD * threads if threads > 1 else 1


def _clean_batch(
    text: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    config: CanonConfig,
    originals: Sequence[str] | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The UTF-8 of the batch with every text cleaned
    (:func:`~neardup.text.cleaning.clean_text`), and which texts are plain ASCII left as
    they were (no letter but Latin ones to count).

    The Python steps run only on the texts that the compiled pre-check flags (markup
    characters, characters NFKC changes): on the others they would change nothing. A text
    without markup whose NFKC replaces characters one by one is normalized compiled
    (:mod:`neardup.text.nfkc_kernels`).
    """
    stable = chars.nfkc_stable_table() if config.normalize else _NO_TABLE
    flags = cleaning_flags(
        text, starts, ends, stable, config.wiki, config.html, config.quotes, config.normalize
    )
    text, starts, ends, replaced = nfkc_replaced(text, starts, ends, (flags & NFKC) != 0)
    changed: dict[int, str] = {}
    cleaned: dict[str, str] = {}  # copies of one text in the batch are cleaned once
    markup: list[str] = []  # texts with markup not remembered from earlier batches
    rows = np.flatnonzero((flags & (MARKUP | NFKC) != 0) & ~replaced).tolist()
    olds = [originals[d] if originals is not None else _decode(text, starts, ends, d) for d in rows]
    for d, old in zip(rows, olds, strict=True):
        if old in cleaned:  # a copy has the same flags
            continue
        if not flags[d] & MARKUP:
            cleaned[old] = nfkc(old)
        elif (found := _MARKUP_CLEANED.find(old, config)) is not None:
            cleaned[old] = found
        else:
            cleaned[old] = old  # its place, filled below
            markup.append(old)
    for old, new in zip(markup, clean_texts(markup, config), strict=True):
        cleaned[old] = new
        _MARKUP_CLEANED.keep(old, config, new)
    for d, old in zip(rows, olds, strict=True):
        if (new := cleaned[old]) != old:
            changed[d] = new
    if changed:
        text, starts, ends = _replace(text, starts, ends, changed)
    return (text, starts, ends), flags == 0


def _decode(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, d: int) -> str:
    """Text ``d`` of a batch's UTF-8 as a string."""
    return text[starts[d] : ends[d]].tobytes().decode("utf-8", "surrogatepass")


def _replace(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, changed: dict[int, str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batch's UTF-8 with the texts of ``changed`` replaced (the rest of the bytes copied
    once, not encoded again, whatever lies between the texts). Copied into a NumPy array, not
    joined as ``bytes``: NumPy asks for huge pages, and the page faults of a batch's worth of
    fresh memory cost three times the copy when taken 4 KiB at a time."""
    growth = np.zeros(starts.size, dtype=np.int64)
    pieces: list[np.ndarray] = []
    at = 0
    for d in sorted(changed):
        new = changed[d].encode("utf-8", "surrogatepass")
        pieces += (text[at : starts[d]], np.frombuffer(new, dtype=np.uint8))
        growth[d] = len(new) - (ends[d] - starts[d])
        at = ends[d]
    pieces.append(text[at:])
    out = np.concatenate(pieces)
    out.flags.writeable = False  # typed as the input is: no second compiled specialization
    return out, *regrown_spans(starts, ends, growth)


class _Cleaned:
    """Texts with markup, cleaned (:func:`~neardup.text.cleaning.clean_text`), remembered
    for copies of them in later batches (a licence, a mailing list's footer page, a
    template page repeated across a corpus): the markup parsers are the slowest step a text
    can take. Bounded by the characters held (least recently used dropped first); shared by
    the worker threads (two of them may clean one text at the same time: the same result)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.chars = 0
        self._held: OrderedDict[tuple[str, CanonConfig], str] = OrderedDict()
        self._lock = threading.Lock()

    def find(self, text: str, config: CanonConfig) -> str | None:
        """``text`` cleaned, when remembered."""
        key = (text, config)
        with self._lock:
            if (found := self._held.get(key)) is not None:
                self._held.move_to_end(key)
            return found

    def keep(self, text: str, config: CanonConfig, result: str) -> None:
        """Remember ``result``, the cleaned ``text``."""
        key = (text, config)
        size = len(text) + len(result)
        if size > self.max_chars // 4:  # one text must not push out all the others
            return
        with self._lock:
            if key not in self._held:
                self._held[key] = result
                self.chars += size
            while self.chars > self.max_chars:
                (old, _), dropped = self._held.popitem(last=False)
                self.chars -= len(old) + len(dropped)


_MARKUP_CLEANED = _Cleaned(1 << 24)


def split_texts(docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UTF-8 bytes of the batch (documents joined by NUL) and each one's [start, end)."""
    # one encode per text, not of the joined text: a joined str takes the widest kind of
    # any of its texts, and encoding it costs twice as much
    encoded = [d.encode("utf-8", "surrogatepass") for d in docs]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    return np.frombuffer(DOC_SEPARATOR.encode().join(encoded), dtype=np.uint8), *_bounds(lengths)


def _bounds(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of documents of these byte lengths, joined by one separator byte."""
    ends = np.cumsum(lengths + 1) - 1
    return ends - lengths, ends


def _languages(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, config: CanonConfig, plain: np.ndarray
) -> tuple[list[str], list[bool]]:
    """Each document's language (named, or from its letters' scripts) and whether it has Han.

    ``plain`` documents (ASCII only) are English without counting: no Han, no Cyrillic."""
    if config.lang != "auto":
        return [config.lang] * starts.size, [False] * starts.size
    if plain.any():
        counts = np.zeros((starts.size, 3), dtype=np.int64)
        some = np.flatnonzero(~plain)
        counts[some] = script_counts(text, starts[some], ends[some])
    else:
        counts = script_counts(text, starts, ends)
    return langs_from_counts(counts), (counts[:, 0] > 0).tolist()


def _tokenize(prepared: TokenizerInput) -> TokenBatch:
    """The compiled tokenizer over a prepared batch."""
    buf, doc_off, tok_s, tok_e, tok_off = tokenize_batch(
        *prepared.arrays(), prepared.split_han, tokenizer_parts()
    )
    return TokenBatch(buf, doc_off, tok_s, tok_e, tok_off, prepared.spaced)


def _stop_hashes(config: CanonConfig) -> np.ndarray:
    """Sorted token hashes of the stop words in play, normalized like the texts are."""
    return _stop_hashes_for(config.lang, config.extra_stopwords, config.normalize, config.lowercase)


@functools.cache
def _stop_hashes_for(
    lang: str, extra: tuple[str, ...], normalize: bool, lowercase: bool
) -> np.ndarray:
    langs = stopwords.LANGS if lang == "auto" else (lang,)
    words: set[str] = set(extra)
    for code in langs:
        words |= stopwords.stopwords_for(code)
    hashes = []
    for word in words:
        if normalize:
            word = unicodedata.normalize("NFKC", word)
        if lowercase:
            word = word.casefold()
        hashes.append(token_hash(chars.codepoints(word)))
    out = stop_set(np.array(hashes, dtype=np.uint64))
    out.setflags(write=False)
    return out


# Languages each word-form step supports; in auto mode other languages pass unchanged,
# with an explicitly named language an unsupported step is an error (raised by morph).
_AUTO_SUPPORT = {"drop_adjectives": ("ru",), "lemmatize": ("ru", "zh"), "stem": ("en", "ru")}


def _transform(tokens: list[str], lang: str, config: CanonConfig) -> list[str]:
    """Drop adjectives, then lemmatize or stem, as switched on."""
    for name, func in (
        ("drop_adjectives", morph.drop_adjectives),
        ("lemmatize", morph.lemmatize),
        ("stem", morph.stem),
    ):
        if getattr(config, name) and (config.lang != "auto" or lang in _AUTO_SUPPORT[name]):
            tokens = func(tokens, lang)
    return tokens
