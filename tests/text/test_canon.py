"""The canonicalization pipeline, step by step, in English, Russian and Chinese."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.text import canon
from neardup.text.canon import canonicalize, canonicalize_batch
from neardup.text.text_config import CanonConfig

NOTHING = CanonConfig.profile("none")


def only(**steps):
    """The 'none' profile with just the named steps switched on."""
    return CanonConfig.profile("none", **steps)


# --- markup ---------------------------------------------------------------------------------

PAGES = {
    "en": (
        "<html><body><nav>Home | Sports | Weather</nav><script>var x = 'tracker';</script>"
        "<article><p>The river flooded the lower town</p><p>Rescuers reached every house"
        "</p></article><footer>Contact us</footer></body></html>",
        ["river", "flooded", "rescuers"],
        ["sports", "tracker", "contact"],
    ),
    "ru": (
        "<div class='menu'>Главная Новости</div><main><p>Река затопила нижний город,"
        "</p><p>спасатели добрались до каждого дома</p></main>",
        ["река", "затопила", "спасатели"],
        ["главная", "новости"],
    ),
    "zh": (
        "<header>首页 新闻</header><article><p>河水淹没了下城区。</p><p>救援人员到达了每一户人家。"
        "</p></article>",
        ["河水", "救援"],
        ["首页", "新闻"],
    ),
}


@pytest.mark.parametrize("lang", list(PAGES))
def test_html_page_keeps_article_and_drops_furniture(lang):
    page, kept, dropped = PAGES[lang]
    text = canonicalize(page)
    for word in kept:
        assert word in text
    for word in dropped:
        assert word not in text
    assert "<" not in text
    assert "p>" not in text


def test_html_switch_off_keeps_tags_as_text():
    text = canonicalize("<p>Quiet morning</p>", CanonConfig(html=False, stopwords=False))
    assert text.split() == ["p", "quiet", "morning", "p"]


def test_paragraphs_do_not_glue_words():
    assert canonicalize("<p>first</p><p>second</p>").split() == ["first", "second"]


def test_wiki_markup_is_removed():
    wiki = "'''Kazan''' is a city on the [[Volga River|Volga]].{{cite web|url=x}} == History =="
    text = canonicalize(wiki, CanonConfig(stopwords=False))
    assert text.split() == ["kazan", "is", "a", "city", "on", "the", "volga", "history"]


# --- Unicode normalization, case folding, whitespace ------------------------------------------


def test_nfkc_unifies_compatibility_characters():
    # full-width Latin, a ligature and a superscript digit fold into plain letters
    assert canonicalize("ＡＢＣ ﬁsh x²", only(normalize=True)).split() == ["ABC", "fish", "x2"]
    assert canonicalize("ＡＢＣ", NOTHING) == "ＡＢＣ"


@pytest.mark.parametrize(
    ("raw", "folded"),
    [("Straße GROSS", "strasse gross"), ("МОСКВА Река", "москва река"), ("ΣΟΦΊΑ", "σοφία")],
)
def test_case_folding(raw, folded):
    assert canonicalize(raw, only(lowercase=True)) == folded


def test_whitespace_is_collapsed():
    assert canonicalize("  one\t\ttwo\n\n three  ", NOTHING) == "one two three"


# --- punctuation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("«Ёлка», — сказал он… (шёпотом)!", ["ёлка", "сказал", "он", "шёпотом"]),
        ("“Well” — she said: $5; #1 ‘ok’?", ["well", "she", "said", "5", "1", "ok"]),
        ("他说：“好的！”（真的）", ["他说", "好的", "真的"]),
    ],
)
def test_punctuation_and_special_characters_are_removed(raw, words):
    config = only(punctuation=True, lowercase=True, normalize=True)
    assert canonicalize(raw, config).split() == words


def test_punctuation_kept_when_switched_off():
    assert canonicalize("Well, then.", NOTHING).split() == ["Well,", "then."]


def test_soft_hyphen_does_not_split_a_word():
    assert canonicalize("extra\u00adordinary", only(punctuation=True)) == "extraordinary"


# --- stop words ----------------------------------------------------------------------------


STOP = CanonConfig(stopwords=True)


def test_stop_words_are_kept_by_default():
    assert canonicalize("The cat sat on the mat").split() == [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
    ]


def test_english_stop_words():
    assert "the" not in canonicalize("The cat sat on the mat", STOP).split()


def test_russian_stop_words_of_the_lecture():
    text = canonicalize("И вот он пришёл ко мне, а она б не пришла", STOP)
    for word in ("и", "он", "ко", "она", "б"):
        assert word not in text.split()
    assert "пришёл" in text


def test_chinese_stop_words():
    words = canonicalize("我的朋友在北京工作", STOP).split()
    assert "的" not in words
    assert "北京" in words


def test_extra_stop_words_and_switch_off():
    extra = CanonConfig(stopwords=True, extra_stopwords=("harbour",))
    assert "harbour" not in canonicalize("old harbour", extra)
    assert canonicalize("the cat", CanonConfig(stopwords=False)).split() == ["the", "cat"]


def test_explicit_language_uses_only_its_list():
    # "и" is a Russian stop word; with lang=en it is an ordinary token
    assert "и" in canonicalize("кошки и собаки", CanonConfig(lang="en", stopwords=True)).split()


# --- word forms ----------------------------------------------------------------------------


def test_russian_lemmatization():
    config = CanonConfig(lemmatize=True, stopwords=False)
    assert canonicalize("Кошки ловили мышей", config).split() == ["кошка", "ловить", "мышь"]


def test_russian_adjectives_dropped():
    config = CanonConfig(drop_adjectives=True, stopwords=False)
    assert canonicalize("Большая рыжая кошка спала", config).split() == ["кошка", "спала"]


def test_stemming_in_english_and_russian():
    config = CanonConfig(stem=True, stopwords=False)
    assert canonicalize("running connections", config).split() == ["run", "connect"]
    assert canonicalize("красивые машины", config).split() == ["красив", "машин"]


def test_lemmatizing_english_explicitly_is_an_error_but_auto_mode_passes_it_through():
    with pytest.raises(ConfigError, match="Russian"):
        canonicalize("cats", CanonConfig(lang="en", lemmatize=True))
    batch = canonicalize_batch(["cats ran", "кошки бежали"], CanonConfig(lemmatize=True))
    assert batch.tokens(0) == ["cats", "ran"]
    assert batch.tokens(1) == ["кошка", "бежать"]


# --- Chinese segmentation and character units ----------------------------------------------


def test_chinese_is_segmented_into_words():
    words = canonicalize("今天天气很好我们去公园散步", CanonConfig(stopwords=False)).split()
    assert len(words) >= 5
    assert "公园" in words


def test_segmentation_switch_off_keeps_runs_whole():
    words = canonicalize("今天天气很好", CanonConfig(segment=False, stopwords=False)).split()
    assert words == ["今天天气很好"]


def test_char_unit_joins_chinese_without_spaces_but_keeps_them_elsewhere():
    batch = canonicalize_batch(["北京 的 天气，很好", "red fox"], STOP, unit="char")
    assert batch.text(0) == "北京天气很好"
    assert batch.text(1) == "red fox"


# --- the batch ------------------------------------------------------------------------------


def test_batch_keeps_documents_apart_even_with_nul_bytes():
    batch = canonicalize_batch(["alpha\x00beta", "", "gamma"], CanonConfig(stopwords=False))
    assert [batch.tokens(d) for d in range(3)] == [["alpha", "beta"], [], ["gamma"]]
    assert list(batch.token_counts()) == [2, 0, 1]


def test_empty_and_punctuation_only_texts_have_no_tokens():
    batch = canonicalize_batch(["", "   ", "?!… —"])
    assert list(batch.token_counts()) == [0, 0, 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=8))
def test_batch_equals_one_by_one(texts):
    batch = canonicalize_batch(texts)
    assert [batch.text(d) for d in range(len(texts))] == [canonicalize(t) for t in texts]
    for d in range(len(texts)):
        assert " ".join(batch.tokens(d)) == batch.text(d)


def test_copies_in_a_batch_are_canonicalized_as_each_alone():
    page = "<html><body><p>The river <b>Danube</b> flows east.</p></body></html>"
    wiki = "The '''river''' [[Danube]] flows ''east''."
    wide = "Ｆｕｌｌ ｗｉｄｔｈ letters"
    same_lengths = ["<p>Rhine</p>", "<p>Volga</p>", "Ｈａｌｆ ｗｉｄｔｈ letters"]
    texts = [page, wiki, page, wide, wiki, "plain", wide, *same_lengths, page + " again"]
    batch = canonicalize_batch(texts)
    assert [batch.text(d) for d in range(len(texts))] == [canonicalize(t) for t in texts]


def test_a_markup_text_in_later_batches_is_parsed_once(monkeypatch):
    """Copies of a text with markup in later batches take the cleaned text remembered from
    the first, without parsing it again; the tokens are those of a fresh cleaning."""
    from neardup.text import canon, clean

    monkeypatch.setattr(canon, "_MARKUP_CLEANED", canon._Cleaned(1 << 20))
    parsed = []
    strip_wiki = clean.strip_wiki
    monkeypatch.setattr(clean, "strip_wiki", lambda t: parsed.append(t) or strip_wiki(t))
    page = "'''Licence''' of [[the program]]: ''AS IS'' <ref>a note</ref> and more words"
    first = canonicalize_batch([page, "plain words"]).text(0)
    again = [canonicalize_batch(["other words", page]).text(1) for _ in range(3)]
    assert len(parsed) == 1
    assert again == [first] * 3
    assert first == canonicalize(page)
    assert first == "licence of the program as is and more words"


def test_remembered_cleanings_stay_within_their_bound():
    """The least recently used cleanings go first once the characters held pass the bound;
    a text too large for a quarter of the bound is cleaned but not held."""
    from neardup.text import canon
    from neardup.text.cleaning import clean_text

    cache = canon._Cleaned(8000)
    config = CanonConfig()
    pages = [f"[[page {i}]] " + "word " * 150 for i in range(8)]
    for page in pages:
        cleaned = clean_text(page, config)
        cache.keep(page, config, cleaned)
        assert cache.find(page, config) == cleaned
        assert cache.chars <= 8000
    held = {text for text, _ in cache._held}
    assert pages[-1] in held
    assert pages[0] not in held
    huge = "[[huge]] " + "word " * 400
    cache.keep(huge, config, clean_text(huge, config))
    assert not any(text.startswith("[[huge]]") for text, _ in cache._held)


@pytest.mark.parametrize(
    "config",
    [
        CanonConfig.profile("none"),
        CanonConfig.profile("default", stopwords=True),
        CanonConfig.profile("default", lowercase=False),
        CanonConfig.profile("default", normalize=False, punctuation=False),
    ],
    ids=["none", "stop words", "no lowercase", "no normalize or punctuation"],
)
def test_every_setting_gives_the_kernels_tables_of_one_type(config):
    """numba compiles a kernel once per type of its arguments (a writable array is another
    type than a read-only one): the tables of any setting are typed as the defaults' are, so
    the kernels compiled ahead serve every setting."""
    import numba

    from neardup.text.canon import tokenizer_input
    from neardup.text.chars import nfkc_stable_table

    text = np.frombuffer(b"Some words, some Words", dtype=np.uint8)
    starts, ends = np.array([0], np.int64), np.array([text.size], np.int64)

    def types(c):
        prepared, _ = tokenizer_input(text, starts, ends, c, "word")
        tables = (prepared.table, prepared.fold, prepared.expansions, prepared.stops)
        return [numba.typeof(t) for t in tables]

    assert types(config) == types(CanonConfig())
    assert all(not t.mutable for t in types(config))
    assert numba.typeof(canon._NO_TABLE) == numba.typeof(nfkc_stable_table())
