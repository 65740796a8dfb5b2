"""Canonical shared passages mapped back to the original characters
(neardup.fingerprints.highlight)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.fingerprints.highlight import match_tokens, original_spans, raw_tokens, segments
from neardup.fingerprints.passages import shared_passages
from neardup.text.canon import canonicalize
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

WORDS = [
    "apple", "Banana", "cherry", "DATE", "elder", "fig", "grape", "the", "and", "of",
    "running", "jumps", "café", "Straße", "naïve", "x1", "42",
]  # fmt: skip
SEPARATORS = [" ", "  ", ", ", ". ", "! ", " -- ", "\n", "\t", " (", ") ", "; ", "' ", " «"]

CONFIGS = [
    TextConfig(),
    TextConfig(CanonConfig(stopwords=True, lang="en")),
    TextConfig(CanonConfig(stem=True, lang="en")),
    TextConfig(shingle=ShingleConfig(size=2)),
]


def _text(draw: st.DrawFn, n: int) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=n))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    cases = draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
    return "".join(
        (w.upper() if up else w) + sep for w, sep, up in zip(words, seps, cases, strict=True)
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Two texts sharing a stretch of words, each with its own punctuation and case."""
    a = _text(draw, 30)
    b = _text(draw, 10) + a[draw(st.integers(0, len(a))) :] + _text(draw, 10)
    return a, b


@settings(max_examples=60, deadline=None)
@given(pair=pairs(), which=st.integers(0, len(CONFIGS) - 1))
def test_each_original_span_canonicalizes_to_its_shared_passage(pair, which):
    config = CONFIGS[which]
    for text, passages in zip(pair, shared_passages(*pair, config), strict=True):
        spans = original_spans(text, passages.spans, config)
        assert len(spans) == len(passages.spans)
        assert all(s < e <= s2 for (s, e), (s2, _) in itertools.pairwise(spans))
        for (s, e), passage in zip(spans, passages.passages(), strict=True):
            assert canonicalize(text[s:e], config.canon) == passage


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80), spans=st.lists(st.tuples(st.integers(0, 80), st.integers(0, 80))))
def test_any_text_and_spans_give_sorted_disjoint_ranges_inside_the_text(text, spans):
    spans = [(min(s, e), max(s, e)) for s, e in spans]
    out = original_spans(text, spans)
    assert all(0 <= s < e <= len(text) for s, e in out)
    assert all(e < s2 for (_, e), (s2, _) in itertools.pairwise(out))
    assert "".join(piece for piece, _ in segments(text, out)) == text


def test_markup_and_punctuation_are_shown_as_written():
    a = "<p>Привет, мир! Это <b>тест</b> текста для проверки.</p>"
    b = "Привет мир это тест текста для проверки совсем другое"
    passages, _ = shared_passages(a, b)
    spans = original_spans(a, passages.spans)
    assert [a[s:e] for s, e in spans] == ["Привет, мир! Это <b>тест</b> текста для проверки"]


def test_segmented_chinese_maps_to_its_characters():
    a = "我们今天去公园玩了很久，天气很好"
    b = "昨天我们今天去公园玩了很久"
    passages, _ = shared_passages(a, b)
    assert [a[s:e] for s, e in original_spans(a, passages.spans)] == ["我们今天去公园玩了很久"]


ZH_A = "山上的茶园在清明前开始采茶。村里的老人天不亮就上山，把最嫩的芽叶一片片摘下来。"
ZH_B = "清明前，山上的茶园开始采茶。村里的老人天不亮就上山，把最嫩的芽叶一片一片摘下来。"


@pytest.mark.parametrize("unit", ["auto", "word", "char"])
def test_chinese_passages_lie_in_the_marked_characters(unit):
    """Auto and char units map exactly; jieba's words (unit word) may be segmented otherwise
    alone than in context, so a mark may take in a neighbouring word, never miss one."""
    config = TextConfig(shingle=ShingleConfig(unit=unit, size=3))
    for text, passages in zip((ZH_A, ZH_B), shared_passages(ZH_A, ZH_B, config), strict=True):
        spans = original_spans(text, passages.spans, config)
        marked = [canonicalize(text[s:e], config.canon, unit).replace(" ", "") for s, e in spans]
        for passage in passages.passages():
            assert any(passage.replace(" ", "") in m for m in marked)
        if unit != "word":
            assert marked == [p.replace(" ", "") for p in passages.passages()]


def test_character_shingles_map_mid_token():
    config = TextConfig(shingle=ShingleConfig(unit="char", size=5))
    a = "Xylophone MELODIES rang"
    b = "a melodies"
    passages, _ = shared_passages(a, b, config)
    spans = original_spans(a, passages.spans, config)
    assert [a[s:e] for s, e in spans] == ["MELODIES"]


@pytest.mark.parametrize(
    ("text", "punctuation", "tokens"),
    [
        ("Hi, there!", True, ["Hi", "there"]),
        ("Hi, there!", False, ["Hi,", "there!"]),
        ("co\u00adop is", True, ["co\u00adop", "is"]),
        ("", True, []),
    ],
)
def test_raw_tokens(text, punctuation, tokens):
    starts, ends = raw_tokens(text, punctuation)
    assert [text[s:e] for s, e in zip(starts, ends, strict=True)] == tokens


def test_segments_mark_the_spans():
    assert segments("abcdef", [(1, 3), (4, 5)]) == [
        ("a", False), ("bc", True), ("d", False), ("e", True), ("f", False),
    ]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    expected=st.lists(st.sampled_from(WORDS[:8]), max_size=60),
    keep=st.lists(st.booleans(), min_size=60, max_size=60),
    extra=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["zz", "apple"])), max_size=5),
)
def test_match_tokens_is_monotone_and_matches_equal_tokens(expected, keep, extra):
    actual = [t for t, k in zip(expected, keep, strict=False) if k]
    for at, token in extra:  # tokens the expected sequence lacks at that place
        actual.insert(min(at, len(actual)), token)
    where = match_tokens(expected, actual)
    found = where[where >= 0]
    assert all(x < y for x, y in itertools.pairwise(found.tolist()))
    assert all(expected[w] == actual[j] for j, w in enumerate(where.tolist()) if w >= 0)
    if not extra and all(keep):
        assert where.tolist() == list(range(len(actual)))


def test_match_tokens_skips_a_dropped_block_of_distinct_tokens():
    expected = [f"t{i}" for i in range(1000)]
    actual = expected[:100] + expected[700:]  # a menu gone, say
    where = match_tokens(expected, actual)
    assert where.tolist() == [*range(100), *range(700, 1000)]
