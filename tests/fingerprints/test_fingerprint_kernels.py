"""The fast fingerprint kernels pinned to simple reference implementations.

``unique_per_doc`` (bucket sort of uniform hashes, quicksort fallback) against a per-document
``arrays.unique_counts``, for uniform, clustered, duplicated and crc-like (32-bit) values;
``tokenize_batch`` (chunks packed in place) against a per-character Python tokenizer driven by
the same class table, for every number of chunks; its short path of ASCII words (no branch a
byte) against its general path on mixed text, for every table, fold, joiner and Han option;
the batch cleaning (a compiled pre-check,
Python only for the flagged texts) against cleaning every text.
"""

import unicodedata

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from neardup.fingerprints.shingle_kernels import sort_into, unique_per_doc
from neardup.text import chars
from neardup.text.canon import _NO_STOPS, _clean_batch
from neardup.text.canon import split_texts as _split
from neardup.text.cleaning import clean_text
from neardup.text.precheck_kernels import MARKUP, NFKC, NON_ASCII, cleaning_flags
from neardup.text.text_config import CanonConfig
from neardup.text.tokenize_kernels import (
    SEPARATOR,
    TOKEN_CHAR,
    _ascii_map,
    _scan,
    stop_bits,
    stop_set,
    token_hash,
    tokenize_batch,
)
from neardup.util.arrays import unique_counts

# Values as the hashes are (uniform 64-bit), as crc32 gives them (32 bits), clustered (a few
# high bits only: every value in one bucket, the fallback), and tiny (many repeats).
_VALUES = st.one_of(
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**32 - 1),
    st.integers(0, 255).map(lambda x: x << 56),
    st.integers(0, 3),
)
_DOCS = st.lists(st.lists(_VALUES, max_size=120), max_size=8)


def _reference(docs: list[list[int]]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    pairs = [unique_counts(np.array(doc, dtype=np.uint64)) for doc in docs]
    return [v for v, _ in pairs], [c for _, c in pairs]


def _layout(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    flat = np.array([v for doc in docs for v in doc], dtype=np.uint64)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(doc) for doc in docs])
    return flat, offsets


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUES, max_size=300), st.integers(0, 5))
def test_sort_into_equals_np_sort(values, lo):
    """The bucket sort (with its insertion-sort finish and quicksort fallback) = np.sort,
    written at an offset of its destination, the source left as it was."""
    src = np.array(values, dtype=np.uint64)
    before = src.copy()
    dst = np.full(lo + src.size + 2, 7, dtype=np.uint64)
    sort_into(src, src.size, dst, lo, np.empty(2 * src.size + 1, dtype=np.int64))
    assert dst[lo : lo + src.size].tolist() == np.sort(before).tolist()
    assert dst[:lo].tolist() == [7] * lo
    assert dst[lo + src.size :].tolist() == [7, 7]
    assert src.tolist() == before.tolist()


@settings(max_examples=300, deadline=None)
@given(_DOCS, st.booleans())
def test_unique_per_doc_equals_sorted_distinct_values_with_counts(docs, overwrite):
    flat, offsets = _layout(docs)
    before = flat.copy()
    values, new_offsets, counts = unique_per_doc(flat, offsets, overwrite)
    want_values, want_counts = _reference(docs)
    assert values.dtype == np.uint64
    assert counts.dtype == np.uint32
    assert new_offsets.tolist() == [0, *np.cumsum([v.size for v in want_values]).tolist()]
    for d in range(len(docs)):
        lo, hi = new_offsets[d], new_offsets[d + 1]
        assert values[lo:hi].tolist() == want_values[d].tolist()
        assert counts[lo:hi].tolist() == want_counts[d].tolist()
    if not overwrite:
        assert np.array_equal(flat, before)  # the input is left alone unless allowed


def test_unique_per_doc_on_long_uniform_and_clustered_documents():
    """Long segments take the bucket path (uniform) and the quicksort fallback (clustered)."""
    rng = np.random.default_rng(7)
    uniform = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    repeated = np.concatenate([uniform[:3000], uniform[:2000]])
    clustered = rng.integers(0, 2**40, size=4000, dtype=np.uint64)
    clustered[:5] = np.uint64(2**64 - 1)  # outliers stretch the range: the rest in bucket 0
    docs = [uniform, repeated, clustered, uniform[:1], uniform[:0]]
    flat = np.concatenate(docs)
    offsets = np.zeros(len(docs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([d.size for d in docs])
    values, new_offsets, counts = unique_per_doc(flat, offsets)
    for d, doc in enumerate(docs):
        want, times = unique_counts(doc)
        lo, hi = new_offsets[d], new_offsets[d + 1]
        assert np.array_equal(values[lo:hi], want)
        assert np.array_equal(counts[lo:hi], times)


def _reference_tokens(text: str) -> list[str]:
    """Runs of token characters, ignorable ones dropped, each character case folded."""
    table = chars.word_table()
    tokens, current = [], []
    for ch in text:
        cls = table[ord(ch)]
        if cls == SEPARATOR:
            if current:
                tokens.append("".join(current))
            current = []
        elif cls == TOKEN_CHAR:
            current.append(ch.casefold())
    if current:
        tokens.append("".join(current))
    return tokens


# ASCII, Latin with folds that change length (ß → ss, ΰ → 3 code points, İ), Cyrillic, Han,
# a combining mark, a soft hyphen and a zero-width joiner (ignorable), punctuation, spaces
_ALPHABET = "aZ9 ,.-\nßΰİÉéЁжД北京\u0301\u00ad\u200d\U00020000"


# stop words of the tests: ASCII, folded from ß, non-ASCII
_STOPS = ("a", "z9", "ss", "жд")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet=_ALPHABET, max_size=40), max_size=8),
    st.integers(1, 6),
    st.booleans(),
)
def test_tokenize_batch_equals_per_character_reference(texts, parts, with_stops):
    text, starts, ends = _split(texts)
    fold, expansions = chars.fold_table()
    spaced = np.ones(len(texts), dtype=np.bool_)
    stops = _NO_STOPS
    if with_stops:
        stops = stop_set(
            np.array([token_hash(chars.codepoints(w)) for w in _STOPS], dtype=np.uint64)
        )
    buf, doc_offsets, tok_starts, tok_ends, tok_offsets = tokenize_batch(
        text, starts, ends, chars.word_table(), fold, expansions, stops, spaced, False, parts
    )
    raw = buf.tobytes()
    for d, doc in enumerate(texts):
        want = [t for t in _reference_tokens(doc) if not (with_stops and t in _STOPS)]
        assert raw[doc_offsets[d] : doc_offsets[d + 1]].decode() == " ".join(want)
        spans = zip(
            tok_starts[tok_offsets[d] : tok_offsets[d + 1]],
            tok_ends[tok_offsets[d] : tok_offsets[d + 1]],
            strict=True,
        )
        assert [raw[s:e].decode() for s, e in spans] == want


# Every character a cleaning step starts from, plus text, NFKC-changing characters (ﬁ, a
# no-break space, a full-width letter, a decomposed é) and NUL.
_MARKUP_ALPHABET = "<>&[]{}|'=_\n \t>aZé\u00a0ﬁＡe\u0301\x00ж北\u1100\u1161\u0b47\u0b3e\u2126"
_CLEAN_CONFIGS = [
    CanonConfig(),
    CanonConfig(html=False, wiki=False),
    CanonConfig(quotes=False, normalize=False),
    CanonConfig(punctuation=False),
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=_MARKUP_ALPHABET, max_size=30), max_size=6),
    st.sampled_from(_CLEAN_CONFIGS),
)
def test_batch_cleaning_equals_cleaning_every_text(texts, config):
    """The pre-check only skips texts that every step would leave as they are; texts given
    as strings or only as UTF-8 (packed without separators, as in an Arrow column) alike."""
    (text, starts, ends), plain = _clean_batch(*_split(texts), config, texts)
    want = [clean_text(t, config) for t in texts]
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    packed = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    spans = (np.cumsum(lengths) - lengths, np.cumsum(lengths))
    (text2, starts2, ends2), plain2 = _clean_batch(packed, *spans, config)
    raw2 = text2.tobytes()
    got = [raw2[s:e].decode("utf-8", "surrogatepass") for s, e in zip(starts2, ends2, strict=True)]
    assert got == want
    assert plain2.tolist() == plain.tolist()
    assert all(t.isascii() and t == w for t, w, p in zip(texts, want, plain, strict=True) if p)
    stable = chars.nfkc_stable_table()
    flags = cleaning_flags(
        *_split(texts), stable, config.wiki, config.html, config.quotes, config.normalize
    )
    for t, flag in zip(texts, flags, strict=True):
        if flag == 0:
            assert clean_text(t, config) == t
    raw = text.tobytes()
    assert [
        raw[s:e].decode("utf-8", "surrogatepass") for s, e in zip(starts, ends, strict=True)
    ] == want


def test_cleaning_flags_find_each_kind_of_markup():
    texts = ["plain, fine", "a <b>", "[[link]]", "x\n{| table", "x\n  > re", "> re", "ﬁ", "é"]
    flags = cleaning_flags(*_split(texts), chars.nfkc_stable_table(), True, True, True, True)
    assert flags.tolist() == [
        0,
        MARKUP,
        MARKUP,
        MARKUP,
        MARKUP,
        MARKUP,
        NFKC | NON_ASCII,
        NON_ASCII,
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["<b>", "[[x", "{{x", "''", "x\n  > re", "\x00", "ﬁ", "é", "a=b", "plain"]),
    st.integers(0, 20),
    st.integers(0, 20),
)
def test_cleaning_flags_do_not_depend_on_where_in_a_block_of_8_bytes_a_marker_falls(
    marker, before, after
):
    """Plain bytes are checked 8 at a time: a marker anywhere in or across such blocks,
    or in the short tail, is flagged as it is alone."""
    stable = chars.nfkc_stable_table()
    alone = cleaning_flags(*_split([marker]), stable, True, True, True, True)[0]
    padded = "p" * before + marker + "q" * after
    got = cleaning_flags(*_split(["ok", padded]), stable, True, True, True, True)
    assert got.tolist() == [0, alone]


def test_tokenize_batch_splits_han_characters_from_ascii_words():
    texts = ["中a中", "北京abc", "a北b"]
    text, starts, ends = _split(texts)
    fold, expansions = chars.fold_table()
    spaced = np.ones(len(texts), dtype=np.bool_)
    buf, doc_offsets, tok_starts, tok_ends, _ = tokenize_batch(
        text, starts, ends, chars.word_table(), fold, expansions, _NO_STOPS, spaced, True, 1
    )
    raw = buf.tobytes()
    docs = [raw[doc_offsets[d] : doc_offsets[d + 1]].decode() for d in range(3)]
    assert docs == ["中 a 中", "北京 abc", "a 北 b"]
    assert [raw[s:e].decode() for s, e in zip(tok_starts, tok_ends, strict=True)] == [
        *("中", "a", "中", "北", "京", "abc", "a", "北", "b")
    ]


def test_nfkc_stable_characters_are_left_alone_by_nfkc_alone_and_in_pairs():
    """Every stable character is NFKC by itself, and random pairs of them stay NFKC."""
    stable = chars.nfkc_stable_table()
    codes = np.flatnonzero(stable)
    assert all(unicodedata.is_normalized("NFKC", chr(c)) for c in codes.tolist())
    rng = np.random.default_rng(3)
    for a, b in rng.choice(codes, size=(100_000, 2)).tolist():
        assert unicodedata.is_normalized("NFKC", chr(a) + chr(b))
    # the characters that compose with the one before them are not stable
    assert stable[[0x0301, 0x1161, 0x11A8, 0x0B3E, 0x3099]].tolist() == [0, 0, 0, 0, 0]
    assert stable[[ord("a"), ord("é"), ord("ж"), ord("北")]].tolist() == [1, 1, 1, 1]


@njit  # not cached: a cached caller keeps the _scan it was compiled with
def _scan_batch(text, starts, ends, tables, stops, joiners, split_han, short):
    """Every document through ``_scan`` into one buffer; ``short``: with the ASCII map (its
    short paths), else the general path alone. Returns (bytes, token starts/ends, counts)."""
    table, fold, expansions = tables
    ascii_map = _ascii_map(table, fold) if short else np.zeros(0, np.uint16)
    size = 4 * (ends[-1] + 1) if starts.size else 0
    buf, tok_s, tok_e = np.zeros(size, np.uint8), np.zeros(size, np.int64), np.zeros(size, np.int64)
    counts = np.zeros((starts.size, 2), np.int64)
    pos = tpos = 0
    bits = stop_bits(stops)
    for d in range(starts.size):
        ntok, nbytes = _scan(
            text, starts[d], ends[d], table, fold, expansions, stops, bits, joiners[d],
            split_han, buf, pos, tok_s, tok_e, tpos, ascii_map,
        )  # fmt: skip
        counts[d] = ntok, nbytes
        pos, tpos = pos + nbytes, tpos + ntok
    return buf[:pos], tok_s[:tpos], tok_e[:tpos], counts


# Text of ASCII words (most of it, so the runs of the short path are long) between ASCII
# separators and non-ASCII characters: letters that go on a word (é, ß, Cyrillic), Han,
# ignorables, curly quotes, dashes, ideographic punctuation and spaces.
_WORDY = st.lists(
    st.one_of(
        st.text("abcXYZ019_", min_size=1, max_size=9),
        st.sampled_from(list(" ,.;\n\t-'\"()")),
        st.sampled_from(list("éßΰİЁжД北京\u0301\u00ad\u200d’—。\u3000\U00020000")),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_WORDY, max_size=6),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_scan_short_path_of_ascii_words_equals_general_path(
    texts, punctuation, folding, joiner, split_han, with_stops
):
    text, starts, ends = _split(texts)
    table = chars.word_table() if punctuation else chars.whitespace_table()
    fold, expansions = chars.fold_table() if folding else (np.empty(0, np.uint32), None)
    if expansions is None:
        expansions = np.zeros((1, 3), dtype=np.uint32)
    stops = _NO_STOPS
    if with_stops:
        stops = stop_set(np.array([token_hash(chars.codepoints(w)) for w in _STOPS], np.uint64))
    joiners = np.full(len(texts), joiner)
    args = (text, starts, ends, (table, fold, expansions), stops, joiners, split_han)
    assert _ascii_map(table, fold).size == 256  # the short paths are taken
    short, general = _scan_batch(*args, True), _scan_batch(*args, False)
    for got, want in zip(short, general, strict=True):
        assert np.array_equal(got, want)
