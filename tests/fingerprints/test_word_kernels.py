"""The word kernels against their definitions in Python: a token's word mark (code points and
their values), its hash (the 64-bit finalizer written out, xxhash's own xxh3), and the word
sets that the lists of the fingerprint pass stand for (Python sets and counts)."""

from __future__ import annotations

import numpy as np
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.word_kernels import (
    LETTERED,
    RECENT_BITS,
    REPEATED,
    WORD,
    word_hash,
    word_lists,
    word_mark,
    word_sets,
    word_sets_of,
)

# letters, digits, signs and scripts a token may mix: ASCII, × and ÷ beside accented
# letters, Greek, Cyrillic, a curly apostrophe, a combining accent, Han, an emoji
CHARACTERS = "ab9Z0_-'×÷¿ÀÿéœΩжЯ\u2019\u0301東京😀"


def marked_by_definition(token: str) -> int:
    if len(token) < 2 or any("0" <= c <= "9" for c in token):
        return -1
    beyond = any(0xC0 <= ord(c) <= 0x1FFF and c not in "×÷" for c in token)
    return int(LETTERED) if beyond else 0


@settings(deadline=None, max_examples=300)  # the first call compiles the kernel
@given(st.text(alphabet=CHARACTERS, min_size=1, max_size=8))
def test_word_mark_is_its_definition(token: str) -> None:
    buf = np.frombuffer(token.encode(), dtype=np.uint8)
    assert word_mark(buf, 0, buf.size) == marked_by_definition(token)


@settings(deadline=None, max_examples=400)
@given(
    token=st.text(alphabet="abzAZ09_-'é", min_size=1, max_size=12),
    before=st.binary(max_size=9),
    after=st.binary(max_size=12),
)
def test_word_mark_inside_a_buffer_is_its_definition(token: str, before: bytes, after: bytes):
    """Tokens inside a larger buffer, any bytes around them (short ASCII tokens are tested a
    word at a time, reading past their end): the mark is still the definition's."""
    encoded = token.encode()
    buf = np.frombuffer(before + encoded + after, dtype=np.uint8)
    lo = len(before)
    assert word_mark(buf, lo, lo + len(encoded)) == marked_by_definition(token)


MASK = (1 << 64) - 1


def hash_by_definition(token: bytes, seed: int) -> int:
    """A short token: murmur3's 64-bit finalizer of its bytes (little-endian), its length
    times the golden ratio and the seed; a longer one: xxh3 with the seed."""
    if len(token) > 8:
        return xxhash.xxh3_64_intdigest(token, seed)
    x = int.from_bytes(token, "little") ^ seed ^ (len(token) * 0x9E3779B97F4A7C15 & MASK)
    for factor in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        x = ((x ^ (x >> 33)) * factor) & MASK
    return x ^ (x >> 33)


@settings(deadline=None, max_examples=400)
@given(
    token=st.binary(min_size=1, max_size=20),
    before=st.binary(max_size=9),
    after=st.binary(max_size=12),
    seed=st.integers(0, MASK),
)
def test_word_hash_is_its_definition_wherever_the_token_lies(token, before, after, seed):
    """Short tokens are loaded 8 bytes at a time, reading past their end, or byte by byte
    near the buffer's end: the hash is the same either way."""
    buf = np.frombuffer(before + token + after, dtype=np.uint8)
    lo = len(before)
    got = word_hash(buf, lo, lo + len(token), np.uint64(seed))
    assert int(got) == hash_by_definition(token, seed)


def tokens_buffer(docs: list[list[str]]) -> tuple[np.ndarray, ...]:
    """``(buf, tok_starts, tok_ends, tok_offsets)`` of documents given as their tokens."""
    encoded = "".join(f"{token} " for doc in docs for token in doc).encode()
    starts, ends, offsets, at = [], [], [0], 0
    for doc in docs:
        for token in doc:
            starts.append(at)
            at += len(token.encode())
            ends.append(at)
            at += 1
        offsets.append(len(starts))
    arrays = (starts, ends, offsets)
    return np.frombuffer(encoded, dtype=np.uint8), *(np.array(a, dtype=np.int64) for a in arrays)


def sets_by_definition(docs: list[list[str]], seed: int) -> list[list[int]]:
    """Each document's word set: its words' hashes, marked when used more than once."""
    out = []
    for doc in docs:
        counts: dict[int, int] = {}
        for token in doc:
            if marked_by_definition(token) >= 0:
                h = hash_by_definition(token.encode(), seed) & int(WORD)
                h |= marked_by_definition(token)
                counts[h] = counts.get(h, 0) + 1
        out.append(sorted(h | (int(REPEATED) if c > 1 else 0) for h, c in counts.items()))
    return out


# a vocabulary larger than the table of recent words, so that words fall out of it
VOCABULARY = ["w" + "".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(3000)]
WORDS = st.sampled_from([*VOCABULARY, "ab", "x", "2024", "v1", "straße", "東", "abcdefghijk"])


@settings(deadline=None, max_examples=60)
@given(
    docs=st.lists(st.lists(WORDS, max_size=60), max_size=12)
    | st.lists(st.lists(WORDS, min_size=2500, max_size=4000), min_size=1, max_size=2),
    seed=st.integers(0, MASK),
    parts=st.integers(0, 3),
)
def test_word_lists_stand_for_the_word_sets_of_the_definition(docs, seed, parts):
    """A word list holds each of its document's words, perhaps twice (once out of the table
    of recent words, which the documents of a run share), and nothing else; made a set, it
    is the definition's set."""
    buf, starts, ends, offsets = tokens_buffer(docs)
    values, list_offsets = word_lists(buf, starts, ends, offsets, np.uint64(seed), parts)
    expected = sets_by_definition(docs, seed)
    for d, doc_set in enumerate(expected):
        entries = values[list_offsets[d] : list_offsets[d + 1]]
        assert {int(h) & ~int(REPEATED) for h in entries} == {h & ~1 for h in doc_set}
        assert entries.size <= len(docs[d])
    sets, set_offsets = word_sets_of(values, list_offsets)
    got = [sets[set_offsets[d] : set_offsets[d + 1]].tolist() for d in range(len(docs))]
    assert got == expected
    alone, alone_offsets = word_sets(buf, starts, ends, offsets, np.uint64(seed))
    assert np.array_equal(alone, sets)
    assert np.array_equal(alone_offsets, set_offsets)


def test_long_documents_do_write_some_words_twice():
    """The case above that the table of recent words exists for: a document with more
    distinct words than its slots writes some again, and its set is still the definition's."""
    doc = VOCABULARY * 2
    buf, starts, ends, offsets = tokens_buffer([doc])
    values, _ = word_lists(buf, starts, ends, offsets, np.uint64(7))
    assert len(VOCABULARY) < values.size < len(doc)
    assert len(VOCABULARY) > 1 << RECENT_BITS
    sets, _ = word_sets_of(values, np.array([0, values.size]))
    assert sets.tolist() == sets_by_definition([doc], 7)[0]
