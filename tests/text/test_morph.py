"""Russian lemmatization and adjective removal, Snowball stemming (neardup.text.morph)."""

from __future__ import annotations

import builtins
import sys

import pytest

from neardup.errors import ConfigError, MissingDependencyError
from neardup.text import morph


def test_lemmatize_ru_sentence():
    assert morph.lemmatize_ru(["кошки", "ловили", "мышей"]) == ["кошка", "ловить", "мышь"]


def test_lemmatize_ru_nouns_to_nominative_singular_verbs_to_infinitive():
    tokens = [
        "в",
        "субботу",
        "рабочие",
        "открыли",
        "мосты",
        "через",
        "реки",
        "после",
        "долгого",
        "ремонта",
    ]
    assert morph.lemmatize_ru(tokens) == [
        "в",
        "суббота",
        "рабочий",
        "открыть",
        "мост",
        "через",
        "река",
        "после",
        "долгий",
        "ремонт",
    ]


def test_lemmatize_ru_makes_inflected_rewrites_equal():
    a = morph.lemmatize_ru(["депутаты", "обсудили", "новый", "закон", "о", "школах"])
    b = morph.lemmatize_ru(["депутат", "обсуждает", "новые", "законы", "о", "школе"])
    assert a[0] == b[0] == "депутат"
    assert a[3] == b[3] == "закон"
    assert a[5] == b[5] == "школа"
    assert a[2] == b[2] == "новый"


def test_lemmatize_ru_keeps_length_order_and_other_tokens():
    tokens = ["2013", "года", "python", "ёлки"]
    assert morph.lemmatize_ru(tokens) == ["2013", "год", "python", "ёлка"]
    assert morph.lemmatize_ru([]) == []


def test_lemmatize_ru_is_cached_per_distinct_word(monkeypatch):
    calls: list[list[str]] = []
    real = morph._parse_ru

    def counting(words):
        calls.append(list(words))
        return real(words)

    monkeypatch.setattr(morph, "_ru_cache", {})
    monkeypatch.setattr(morph, "_parse_ru", counting)
    tokens = ["кот", "видит", "кота", "и", "кот", "видит", "кошку"]
    assert morph.lemmatize_ru(tokens) == ["кот", "видеть", "кот", "и", "кот", "видеть", "кошка"]
    assert sorted(calls[0]) == sorted(set(tokens))
    assert morph.lemmatize_ru(tokens * 100) == morph.lemmatize_ru(tokens) * 100
    assert len(calls) == 1  # the second and third call found every word in the cache


def test_drop_adjectives_ru():
    tokens = ["красивая", "рыжая", "кошка", "ловила", "серых", "мышей", "в", "старом", "доме"]
    assert morph.drop_adjectives_ru(tokens) == ["кошка", "ловила", "мышей", "в", "доме"]


def test_drop_adjectives_ru_drops_participles_and_short_forms():
    tokens = ["сгоревший", "дом", "прочитанная", "книга", "книга", "прочитана", "дом", "красив"]
    assert morph.drop_adjectives_ru(tokens) == ["дом", "книга", "книга", "дом"]


def test_drop_adjectives_ru_keeps_comparatives_and_nouns():
    tokens = ["цены", "стали", "выше"]
    assert morph.drop_adjectives_ru(tokens) == tokens


def test_dispatchers_russian():
    tokens = ["новые", "города", "растут"]
    assert morph.lemmatize(tokens, "ru") == ["новый", "город", "расти"]
    assert morph.drop_adjectives(tokens, "ru") == ["города", "растут"]


def test_lemmatize_chinese_is_identity():
    tokens = ["我们", "讨论", "了", "问题"]
    out = morph.lemmatize(tokens, "zh")
    assert out == tokens
    assert out is not tokens


def test_lemmatize_english_is_a_config_error_pointing_to_stemming():
    with pytest.raises(ConfigError, match=r"Russian.*stemming for English"):
        morph.lemmatize(["cats"], "en")


def test_lemmatize_unknown_language():
    with pytest.raises(ConfigError, match="'de'"):
        morph.lemmatize(["Katzen"], "de")


@pytest.mark.parametrize("lang", ["en", "zh", "de"])
def test_drop_adjectives_other_languages_is_a_config_error(lang):
    with pytest.raises(ConfigError, match="Russian only") as err:
        morph.drop_adjectives(["red", "car"], lang)
    assert repr(lang) in str(err.value)


def test_stem_english():
    tokens = ["the", "ferries", "were", "running", "generously", "connected", "harbours"]
    assert morph.stem(tokens, "en") == [
        "the",
        "ferri",
        "were",
        "run",
        "generous",
        "connect",
        "harbour",
    ]
    assert morph.stem(["connection", "connected", "connecting"], "en") == ["connect"] * 3


def test_stem_russian():
    assert morph.stem(["кошки", "ловили", "мышей"], "ru") == ["кошк", "лов", "мыш"]
    assert set(morph.stem(["кошка", "кошки", "кошкой", "кошку"], "ru")) == {"кошк"}


def test_stem_empty_and_repeated():
    assert morph.stem([], "en") == []
    assert morph.stem(["running"] * 3, "en") == ["run"] * 3


@pytest.mark.parametrize("lang", ["zh", "de", "english", ""])
def test_stem_unknown_language_is_a_config_error(lang):
    with pytest.raises(ConfigError, match=r"stemming.*en, ru"):
        morph.stem(["word"], lang)


def test_missing_pymorphy3_raises_missing_dependency(monkeypatch):
    real_import = builtins.__import__

    def no_pymorphy(name, *args, **kwargs):
        if name == "pymorphy3" or name.startswith("pymorphy3."):
            raise ImportError("No module named 'pymorphy3'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(morph, "_morph", None)
    monkeypatch.setattr(morph, "_ru_cache", {})
    monkeypatch.delitem(sys.modules, "pymorphy3", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pymorphy)
    with pytest.raises(MissingDependencyError) as err:
        morph.lemmatize_ru(["кошки"])
    assert err.value.package == "pymorphy3"
    assert err.value.extra == "morph"
    assert "neardup[morph]" in str(err.value)
    with pytest.raises(MissingDependencyError):
        morph.drop_adjectives(["красивая"], "ru")
