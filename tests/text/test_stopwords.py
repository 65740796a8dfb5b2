"""Stop-word lists (neardup.text.stopwords)."""

from __future__ import annotations

import pytest

from neardup.errors import ConfigError, InputError
from neardup.text.stopwords import LANGS, load_stopword_file, stopwords_for

LECTURE = "это как так в на над к ко до за то с со для о ну же ж что он она б бы ли и у"


def test_langs():
    assert LANGS == ("en", "ru", "zh")


@pytest.mark.parametrize("word", LECTURE.split())
def test_russian_list_contains_every_lecture_word(word):
    assert word in stopwords_for("ru")


def test_russian_list_comes_from_the_package_too():
    ru = stopwords_for("ru")
    assert {"без", "более", "между", "потому"} <= ru
    assert len(ru) > 300
    assert not {"кошка", "мост", "река", "ремонт"} & ru


def test_english_list():
    en = stopwords_for("en")
    assert {"the", "a", "of", "and", "in", "with", "she"} <= en
    # function words only: content words must survive (a 1,300-word list would drop these)
    assert not {"river", "ferry", "budget", "council", "first", "room", "problems"} & en


def test_english_list_has_no_numbers_or_mangled_entries():
    en = stopwords_for("en")
    assert "10" not in en
    assert "39" not in en
    assert not any("”" in w for w in en)


def test_chinese_list():
    zh = stopwords_for("zh")
    assert {"的", "了", "和", "是", "在", "我"} <= zh
    assert not {"图书馆", "北京", "河流"} & zh


@pytest.mark.parametrize("lang", LANGS)
def test_lists_are_cached_frozensets_of_lowercase_words(lang):
    words = stopwords_for(lang)
    assert isinstance(words, frozenset)
    assert stopwords_for(lang) is words
    assert all(w == w.lower() == w.strip() and w for w in words)


@pytest.mark.parametrize("lang", ["de", "EN", "", "auto", "russian"])
def test_unknown_language_is_a_config_error(lang):
    with pytest.raises(ConfigError) as err:
        stopwords_for(lang)
    msg = str(err.value)
    assert repr(lang) in msg
    assert "en" in msg
    assert "ru" in msg
    assert "zh" in msg


def test_user_file(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text(
        "# my own stop words\n\nвообще\n  Basically  \n\t# indented comment\n的话\nkind of\n",
        encoding="utf-8",
    )
    assert load_stopword_file(path) == {"вообще", "basically", "的话", "kind", "of"}
    assert load_stopword_file(str(path)) == load_stopword_file(path)


def test_user_file_with_bom_and_crlf(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffпросто\r\nвот\r\n".encode())
    assert load_stopword_file(path) == {"просто", "вот"}


def test_empty_user_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("# nothing here\n\n", encoding="utf-8")
    assert load_stopword_file(path) == frozenset()


def test_user_file_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "cp1251.txt"
    path.write_bytes("# comment\nхорошо\n".encode() + "плохо\n".encode("cp1251"))
    with pytest.raises(InputError) as err:
        load_stopword_file(path)
    msg = str(err.value)
    assert "cp1251.txt" in msg
    assert "line 3" in msg


def test_missing_user_file_names_it(tmp_path):
    path = tmp_path / "absent.txt"
    with pytest.raises(InputError, match=r"absent\.txt"):
        load_stopword_file(path)


def test_directory_is_not_a_stopword_file(tmp_path):
    with pytest.raises(InputError, match=tmp_path.name):
        load_stopword_file(tmp_path)
