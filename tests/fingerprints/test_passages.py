from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.passages import shared_passages
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

CONFIG = TextConfig(CanonConfig(stopwords=False), ShingleConfig(size=3))


def test_quoted_passage_is_found_in_both_texts():
    quote = "the quick brown fox jumps over the lazy dog"
    essay = f"As the saying goes, {quote}, and then it runs away into the forest."
    a, b = shared_passages(quote, essay, CONFIG)
    assert a.passages() == [quote]
    assert b.passages() == [quote]
    assert b.text[b.spans[0][0] : b.spans[0][1]] == quote


def test_two_separate_passages_stay_separate_and_ranges_count_characters():
    a_text = "ёжик в тумане шёл домой. совсем другое предложение здесь. лошадь стояла в поле"
    b_text = "ёжик в тумане шёл домой и потом лошадь стояла в поле"
    a, _ = shared_passages(a_text, b_text, CONFIG)
    assert a.passages() == ["ёжик в тумане шёл домой", "лошадь стояла в поле"]
    for start, end in a.spans:  # character offsets, not byte offsets, in Cyrillic text
        assert a.text[start:end] in b_text


def test_nothing_shared():
    a, b = shared_passages("one two three four", "five six seven eight", CONFIG)
    assert a.spans == ()
    assert b.passages() == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 40), max_size=60),
    st.lists(st.integers(0, 40), max_size=60),
)
def test_members_is_np_isin(values, others):
    import numpy as np

    from neardup.fingerprints.passages import members

    v = np.array(values, dtype=np.uint64) * np.uint64(2**58)  # large values, repeats
    o = np.unique(np.array(others, dtype=np.uint64) * np.uint64(2**58))
    assert np.array_equal(members(v, o), np.isin(v, o))


_WORDS = st.sampled_from(["ab", "cd", "ef", "gh", "ij", "kl", "mn"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=40), st.lists(_WORDS, min_size=1, max_size=40))
def test_lacking_is_the_passages_of_the_shingles_the_other_lacks(a_words, b_words):
    """The compiled pass against the plain rule: merge the ranges of ``a``'s shingles that
    are not in ``b``'s set."""
    import numpy as np

    from neardup.fingerprints.passages import marked, shingled

    a, b = shingled([" ".join(a_words), " ".join(b_words)], CONFIG)
    expected = marked(a, ~np.isin(a.fingerprints, b.fingerprints))
    assert a.lacking(b) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["ab", "ёж", "café", "über", "cd"]), min_size=3, max_size=30))
def test_shingle_ranges_count_characters_of_their_own_text(words):
    """Each shingle's range is in characters of its own text, beyond ASCII too, in a batch
    whose first text moves every other's bytes."""
    from neardup.fingerprints.passages import shingled

    _, doc = shingled(["ёёё жжж ééé " * 3, " ".join(words)], CONFIG)
    assert [doc.text[s:e] for s, e in zip(doc.starts, doc.ends, strict=True)] == [
        " ".join(words[j : j + 3]) for j in range(len(words) - 2)
    ]
