"""Language detection by script (neardup.text.script)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.text.script import detect_lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("The ferry left the harbour on Tuesday morning.", "en"),
        ("Le garçon mange une crème brûlée près de la rivière.", "en"),  # Latin → en
        ("Мост через реку открыли после ремонта.", "ru"),
        ("Ёжик в тумане", "ru"),
        ("城市图书馆延长开放时间。", "zh"),
        ("我喜欢用Python写代码，也喜欢JavaScript。", "zh"),
        ("Мэр заявил, что проект Smart City завершат к 2030 году.", "ru"),
        ("The article quotes Mao Zedong (毛泽东) in the second chapter.", "en"),
        ("В статье упоминается иероглиф 水 — «вода».", "ru"),
        ("2024-05-17 12:30:00 +0300", "en"),
        ("1234567890", "en"),
        ("", "en"),
        ("!!! ??? ...", "en"),
        ("三", "zh"),
    ],
)
def test_detect_lang(text, lang):
    assert detect_lang(text) == lang


def test_mixed_text_majority_script_wins():
    ru = "Сегодня в городе открыли новую библиотеку. "
    en = "Today a new library opened in the city. "
    assert detect_lang(ru * 3 + en) == "ru"
    assert detect_lang(en * 3 + ru) == "en"


def test_chinese_with_some_russian():
    assert detect_lang("北京大学的学生们今天参加了考试。 Студенты сдали экзамен.") == "zh"


def test_long_texts_use_samples_but_answer_right():
    en = "The quick brown fox jumps over the lazy dog near the river bank. " * 16000
    ru = "Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20000
    zh = "我们今天在北京讨论了人工智能的发展和未来的挑战。" * 50000
    assert detect_lang(en) == "en"
    assert detect_lang(ru) == "ru"
    assert detect_lang(zh) == "zh"
    assert detect_lang(ru + en[: len(ru) // 4]) == "ru"


def test_detect_lang_answers_on_a_megabyte():
    """Long texts (their speed: benchmarks/bench_detect_lang.py)."""
    texts = [
        ("Le garçon très rapide mange une crème brûlée près de la rivière. " * 16000, "en"),
        ("Съешь же ещё этих мягких французских булок, да выпей чаю. " * 20000, "ru"),
        ("我们今天在北京讨论了人工智能的发展和未来的挑战。" * 50000, "zh"),
    ]
    for text, lang in texts:
        assert len(text) >= 1_000_000
        assert detect_lang(text) == lang


@given(st.text())
def test_detect_lang_always_answers_a_supported_language(text):
    assert detect_lang(text) in ("en", "ru", "zh")


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_ascii_is_english(text):
    assert detect_lang(text) == "en"
