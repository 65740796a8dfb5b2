"""Texts in several scripts: the shingle unit is decided per run of script, not per document."""

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.compare import compare_texts
from neardup.fingerprints.shingles import shingles
from neardup.text.canon import canonicalize, canonicalize_batch
from neardup.text.script import detect_lang
from neardup.text.segment import segment_zh
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

RU = (
    "Москва — столица России и крупнейший город страны, здесь живут миллионы людей, "
    "работают сотни музеев и театров, а метро перевозит пассажиров каждый день."
)
RU_WITH_HAN = RU.replace("Москва —", "Москва (莫斯科) —")
MIXED = (
    "Отчёт о поездке в Пекин. 北京是中国的首都，有很多历史古迹和现代建筑。 The delegation "
    "visited the Forbidden City and met the city council to discuss a new railway line. "
    "Делегация посетила Запретный город и обсудила новую железную дорогу с советом города. "
    "会议讨论了交通、教育和文化交流的合作计划。 Everyone agreed to meet again next spring."
)


def _auto(size: int = 3) -> TextConfig:
    return TextConfig(CanonConfig(), ShingleConfig(unit="auto", size=size))


def test_cyrillic_words_stay_words_beside_han_characters():
    text = canonicalize(RU_WITH_HAN, unit="auto")
    assert "москва\n莫斯科\nстолица россии" in text  # the brackets end Han clauses
    assert "м о с к в а" not in text


def test_auto_unit_tokens_are_words_and_single_han_characters():
    batch = canonicalize_batch(["Москва (莫斯科) — столица, New York 纽约市"], unit="auto")
    expected = ["москва", "莫", "斯", "科", "столица", "new", "york", "纽", "约", "市"]
    assert batch.tokens(0) == expected
    # Han characters in a row are joined by nothing: their shingles read as Chinese text; a
    # line feed joins tokens where punctuation ends a Han clause
    assert batch.text(0) == "москва\n莫斯科\nстолица new york 纽约市"


def test_pure_chinese_auto_shingles_are_character_shingles_as_before():
    config = TextConfig(CanonConfig(stopwords=False), ShingleConfig(unit="auto", size=2))
    assert [s.text for s in shingles("春眠不觉", config)] == ["春眠", "眠不", "不觉"]
    # the fingerprint of a run of Han characters is the one of its characters
    char = TextConfig(CanonConfig(stopwords=False), ShingleConfig(unit="char", size=2))
    assert {s.fingerprint for s in shingles("春眠不觉", config)} == {
        s.fingerprint for s in shingles("春眠不觉", char)
    }


def test_a_few_han_characters_barely_change_the_score_of_a_russian_text():
    for unit in ("word", "auto"):
        result = compare_texts(RU, RU_WITH_HAN, TextConfig(shingle=ShingleConfig(unit=unit)))
        # one inserted word (three shingles of size 3 or 4 change), not all of them
        assert result.overlap.resemblance > 0.6, unit
        assert result.overlap.containment_a_in_b > 0.75, unit


def test_word_segmentation_keeps_cyrillic_words_whole():
    out = segment_zh("Москва(莫斯科) — столица, 用Python写代码。")
    assert "Москва" in out.split() or "Москва(" in out
    assert "М о" not in out
    assert "Python" in out.split()
    assert "莫斯科" in out.split()


def test_near_identical_mixed_documents_get_the_same_units_and_pair():
    # one has a little more Chinese: a per-document decision gave it characters, the other words
    more_han = MIXED + " 欢迎光临北京市人民政府，我们明天见。"
    assert detect_lang(MIXED) == "en"  # Han: 16% of the letters
    assert detect_lang(more_han) == "zh"  # 21%
    docs = [("a", MIXED), ("b", more_han), ("c", RU)]
    result = deduplicate(docs, DedupConfig())
    p = result.pairs
    pairs = {(result.ids[a], result.ids[b]) for a, b in zip(p.left, p.right, strict=True)}
    assert ("a", "b") in pairs or ("b", "a") in pairs
    assert result.removed.sum() == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(["москва", "город", "river", "city", "北京", "莫斯科", "市", "2024"]),
        min_size=1,
        max_size=30,
    )
)
def test_han_runs_never_change_how_the_other_words_are_cut(words):
    # the non-Han tokens of a mixed text are exactly its words without the Han characters
    text = " ".join(words)
    tokens = canonicalize_batch([text], unit="auto").tokens(0)
    plain = [t for t in tokens if not ("\u4e00" <= t[0] <= "\u9fff")]
    expected = [w for w in words if not ("\u4e00" <= w[0] <= "\u9fff")]
    assert plain == expected
    assert all(len(t) == 1 for t in tokens if "\u4e00" <= t[0] <= "\u9fff")


def test_han_shingles_stop_at_clause_ends_and_line_breaks_but_not_at_spaces():
    config = TextConfig(CanonConfig(), ShingleConfig(unit="auto", size=3, han_size=3))
    found = [s.text for s in shingles("白日依山尽，黄河入海流。\n欲穷千里 目", config)]
    assert found == [
        "白日依",
        "日依山",
        "依山尽",
        "黄河入",
        "河入海",
        "入海流",
        "欲穷千",
        "穷千里",
        "千里目",
    ]
    # words keep crossing punctuation: a clause break is a Han rule
    words = [s.text for s in shingles("one two, three. four", config)]
    assert words == ["one two three", "two three four"]


def test_han_clauses_are_shingled_by_han_size_and_words_by_size():
    config = _auto(3)  # the auto unit's Han clauses: 2 characters by default
    found = [s.text for s in shingles("春眠不觉晓，one two three four", config)]
    assert found == ["春眠", "眠不", "不觉", "觉晓", "one two three", "two three four"]
    assert ShingleConfig(unit="auto", size=1).han_units == 1
    assert ShingleConfig(unit="word", size=3).han_units == 3


POEM = "錢遜叔見示小詩次韻 其三\n墮絮飛花又一年，黄梅小雨暗平川。\n莫言晚起家何事，日傍南池數綠錢。"
# a heavy edit of the neardup-bench kind: lines moved, characters substituted and deleted
POEM_EDITED = (
    "錢遜叔臾示小詩次韻 其三\n莫言晚起家何事，日傍南池數綠錢。\n墮絮飛花又一年，黄梅平川。"
)


def test_a_chinese_poem_with_moved_lines_and_edited_characters_is_a_duplicate():
    result = deduplicate([("a", POEM), ("b", POEM_EDITED)], DedupConfig())
    assert result.removed.tolist() == [False, True]
