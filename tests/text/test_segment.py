"""Chinese word segmentation (neardup.text.segment)."""

from __future__ import annotations

import logging
import unicodedata
from concurrent.futures import ThreadPoolExecutor

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text import segment
from neardup.text.segment import has_han, segment_zh


def test_has_han():
    assert has_han("北京")
    assert has_han("Mao Zedong (毛泽东) was born in 1893.")
    assert has_han("\u3400")  # Extension A
    assert has_han("\uf900")  # Compatibility Ideograph
    assert has_han("\U00020000")  # Extension B
    assert has_han("\U0002f800")  # Compatibility Ideographs Supplement
    assert not has_han("Plain English text.")
    assert not has_han("Русский текст.")
    assert not has_han("ひらがなとカタカナ")  # Japanese kana are not Han
    assert not has_han("한국어")
    assert not has_han("。，、「」")  # CJK punctuation is not Han
    assert not has_han("")


def _is_han(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


@settings(max_examples=500)
@given(st.characters())
def test_has_han_agrees_with_unicode_names(char):
    if _is_han(char):
        assert has_han(char)
    elif unicodedata.category(char) != "Cn":  # assigned non-Han characters
        assert not has_han(char)


@settings(max_examples=300)
@given(st.text(st.characters(exclude_categories=("Cs", "Cn"))))
def test_has_han_is_any_han_character(text):
    assert has_han(text) == any(_is_han(c) for c in text)


def test_segment_sentence_into_words():
    out = segment_zh("市图书馆从下个月开始每天晚上开放到十点")
    words = out.split(" ")
    assert len(words) >= 6
    assert "".join(words) == "市图书馆从下个月开始每天晚上开放到十点"
    assert "下个月" in words
    assert "开始" in words
    assert "开放" in words


def test_segment_known_words():
    words = segment_zh("我们今天在北京讨论了人工智能的发展").split()
    assert words == ["我们", "今天", "在", "北京", "讨论", "了", "人工智能", "的", "发展"]


def test_segment_mixed_text_and_whitespace():
    out = segment_zh("我喜欢用 Python  写代码。\n明天见")
    assert "  " not in out
    assert "\n" not in out
    words = out.split(" ")
    assert "Python" in words
    assert "代码" in words
    assert "明天" in words


def test_segment_empty():
    assert segment_zh("") == ""
    assert segment_zh("   ") == ""


def test_dictionary_loads_lazily_once_and_silently(caplog, monkeypatch):
    import jieba

    jieba.setLogLevel(logging.DEBUG)  # jieba's default: it logs its start-up to stderr
    monkeypatch.setattr(segment, "_tokenizer", None)
    monkeypatch.setattr(jieba.dt, "initialized", False)
    assert segment_zh("长江是中国最长的河流").split() == [
        "长江",
        "是",
        "中国",
        "最长",
        "的",
        "河流",
    ]
    assert jieba.dt.initialized
    assert segment._tokenizer is jieba.dt
    assert not [r for r in caplog.records if r.name == "jieba"]


def test_segment_from_several_threads():
    sentences = [
        "我们今天在北京讨论了人工智能的发展",
        "市图书馆从下个月开始每天晚上开放到十点",
    ] * 20
    expected = [segment_zh(s) for s in sentences]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(segment_zh, sentences)) == expected


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from("我们在北京学习中文很好的了 abc,。"), max_size=40))
def test_segment_keeps_every_non_space_character(text):
    out = segment_zh(text)
    assert out.replace(" ", "") == "".join(text.split())
    assert "  " not in out
    assert out == out.strip()
