"""Texts repeated in a batch: found by their bytes, fingerprinted once, given to every copy."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.config import DedupConfig
from neardup.dedup.flow import fingerprint_texts
from neardup.fingerprints.repeats import distinct_spans, first_copies, first_copies_of
from neardup.text.canon import split_texts

# few distinct texts, so that batches repeat some; markup and non-ASCII take the Python steps
TEXTS = st.lists(
    st.sampled_from(
        [
            "",
            "a",
            "b",
            "the cat sat on the mat today",
            "the cat sat on the mat today!",
            "<p>the <b>cat</b> sat on the mat</p>",
            "Ｆｕｌｌ ｗｉｄｔｈ text, ﬁne",
            "one two three four five six seven",
        ]
    ),
    max_size=12,
)


def expected_first(texts):
    seen = {}
    return [seen.setdefault(t, d) for d, t in enumerate(texts)]


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_first_copies_names_each_texts_first_occurrence(texts):
    want = expected_first(texts)
    repeats = want != list(range(len(texts)))
    for first in (first_copies(*split_texts(texts)), first_copies_of(texts)):
        assert (first is not None) == repeats
        if first is not None:
            assert first.tolist() == want


def test_texts_of_one_length_are_told_apart_by_their_bytes():
    texts = ["abc", "abd", "abc", "abd", "xyz"]
    first = first_copies(*split_texts(texts))
    assert first is not None
    assert first.tolist() == [0, 1, 0, 1, 4]


def test_distinct_spans_ranks_first_occurrences():
    distinct, source = distinct_spans(np.array([0, 1, 0, 3, 1, 3]))
    assert distinct.tolist() == [0, 1, 3]
    assert source.tolist() == [0, 1, 0, 2, 1, 2]


@settings(max_examples=60, deadline=None)
@given(TEXTS)
def test_a_batch_with_copies_gets_the_fingerprints_of_each_text_alone(texts):
    config = DedupConfig()
    for utf8, strings in ((split_texts(texts), None), (None, texts)):
        batch = fingerprint_texts(utf8, config, words=True, texts=strings)
        assert len(batch.prints) == len(texts)
        word_values, word_offsets = batch.words
        for d, text in enumerate(texts):
            alone = fingerprint_texts(None, config, words=True, texts=[text])
            assert batch.prints[d].tolist() == alone.prints[0].tolist()
            lo, hi = batch.prints.offsets[d], batch.prints.offsets[d + 1]
            assert batch.prints.counts[lo:hi].tolist() == alone.prints.counts.tolist()
            assert word_values[word_offsets[d] : word_offsets[d + 1]].tolist() == (
                alone.words[0].tolist()
            )
