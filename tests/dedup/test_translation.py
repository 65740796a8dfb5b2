"""A translation is another document (:mod:`neardup.dedup.translation`): checked against an
oracle that shares no code with it (the ``stopwords`` lists read as Python sets over texts
of plain lowercase words), and on pages as a user has them."""

from __future__ import annotations

import random

import numpy as np
import pytest
import stopwords

from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.identity import named_words
from neardup.dedup.identity_kernels import ONE
from neardup.dedup.translation import (
    FOREIGN_SHARE,
    FOREIGN_WORDS,
    LEAST_OWN,
    function_words,
    translations,
)

LANGUAGES = ("english", "spanish", "german", "french")


def plain(lang: str) -> list[str]:
    """The list words of ``lang`` that canonicalization leaves as they are."""
    return sorted(
        w for w in stopwords.get_stopwords(lang) if w.isascii() and w.isalpha() and len(w) > 1
    )


def languages_of() -> dict[str, set[str]]:
    """Function word → the languages (of every list of the package) it belongs to."""
    of: dict[str, set[str]] = {}
    for name in stopwords.AVAILABLE_LANGUAGES:
        lang = "portuguese" if name == "brazilian" else name
        for w in stopwords.get_stopwords(name):
            of.setdefault(w, set()).add(lang)
    return of


def translated_by_definition(a: str, b: str, of: dict[str, set[str]]) -> bool:
    words_a, words_b = set(a.split()), set(b.split())
    weight: dict[str, int] = {}  # in fixed point: 1/k is ONE // k
    for w in words_a:
        for lang in of.get(w, ()):
            weight[lang] = weight.get(lang, 0) + ONE // len(of[w])
    if not weight or max(weight.values()) < LEAST_OWN * ONE or len(words_a - words_b) < 3:
        return False
    best = max(weight.values())
    own = min(lang for lang, x in weight.items() if x == best)  # ties: the first by name
    added = words_b - words_a
    same = sum(own in of.get(w, ()) for w in added)
    foreign: dict[str, int] = {}
    for w in added:
        if own not in of.get(w, ()):
            for lang in of.get(w, ()):
                foreign[lang] = foreign.get(lang, 0) + 1
    most = max(foreign.values(), default=0)
    return most >= FOREIGN_WORDS and most > FOREIGN_SHARE * same


def texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    content = [f"zz{''.join(rng.choices('qxjv', k=6))}" for _ in range(40)]
    out = []
    for _ in range(12):
        parts = rng.sample(content, k=rng.randint(5, 20))
        for lang in rng.sample(LANGUAGES, k=rng.randint(1, 2)):
            parts += rng.sample(plain(lang), k=rng.randint(0, 12))
        out.append(" ".join(parts))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_translations_equal_their_definition(seed):
    docs = texts(seed)
    config = DedupConfig().text
    sets = [np.array(sorted(named_words(t, config)), dtype=np.uint64) for t in docs]
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=offsets[1:])
    held, holder = np.array(
        [(a, b) for a in range(len(docs)) for b in range(len(docs)) if a != b]
    ).T
    got = translations(np.concatenate(sets), offsets, held, holder, function_words(config))
    of = languages_of()
    expected = [
        translated_by_definition(docs[a], docs[b], of) for a, b in zip(held, holder, strict=True)
    ]
    assert got.translated().tolist() == expected
    assert sum(expected) >= 3  # the corpora do hold translations


PAGE = """dpkg.cfg(5) dpkg suite
{name}
       dpkg.cfg - {title}
{description}
       This file contains default options for dpkg. Each line contains a single option
       which is exactly the same as a normal command line option for dpkg except for the
       leading hyphens which are not used here. Quotes surrounding option values are
       stripped. Comments are allowed by starting a line with a hash sign.
{files}
       /etc/dpkg/dpkg.cfg.d/ /etc/dpkg/dpkg.cfg ~/.dpkg.cfg
{see}
       dpkg(1).
{extra}"""

ENGLISH = PAGE.format(
    name="NAME", title="dpkg configuration file", description="DESCRIPTION", files="FILES",
    see="SEE ALSO", extra="",
)  # fmt: skip
SPANISH = PAGE.format(
    name="NOMBRE", title="Fichero de configuración de dpkg", description="DESCRIPCIÓN",
    files="FICHEROS", see="VÉASE TAMBIÉN",
    extra="TRADUCTOR\n       Traducido por Rudy Godoy y Rubén Porras, con las revisiones de "
    "Santiago Vila para el equipo de traducción.",
)  # fmt: skip
JAPANESE = PAGE.format(
    name="名前", title="dpkg の設定ファイル", description="説明", files="ファイル",
    see="関連項目",
    extra="翻訳者\n       Yuichi Nakano, Kenshi Muto, Hiroshi Kise, Mutsumi Ishikawa による翻訳。"
    "誤りは debian-doc メーリングリストへ報告してください。",
)  # fmt: skip


@pytest.mark.parametrize("translation", [SPANISH, JAPANESE], ids=["spanish", "japanese"])
def test_an_original_is_not_removed_into_its_partial_translation(translation):
    docs = [("en", ENGLISH), ("translation", translation)]
    loose = deduplicate(docs, DedupConfig(identity=False))
    assert loose.removed.tolist() == [True, False]  # the scores alone remove the original
    result = deduplicate(docs, DedupConfig())
    assert not result.removed[0]  # the original stays (its partial translation may go into it)


def test_a_copy_with_more_text_in_its_own_language_is_still_a_keeper():
    digest = ENGLISH + "\nThe digest also carries these notes for the readers of the list."
    result = deduplicate([("en", ENGLISH), ("digest", digest)], DedupConfig())
    assert result.removed.tolist() == [True, False]


def test_function_words_are_made_only_for_a_run_with_pairs():
    from neardup.dedup import deduplicate
    from neardup.dedup.translation import function_words

    story = "the ferry left the harbour an hour late because a storm closed the channel"
    other = "bees collect nectar from clover and lime trees in early summer every year"
    function_words.cache_clear()
    assert not len(deduplicate([("a", story), ("b", other)]).pairs)
    assert function_words.cache_info().misses == 0  # nothing to tell apart
    assert len(deduplicate([("a", story), ("b", story + " again")]).pairs)
    assert function_words.cache_info().misses == 1


def test_the_function_word_table_read_back_from_disk_is_the_one_built(tmp_path, monkeypatch):
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path))
    config = DedupConfig().text
    function_words.cache_clear()
    built = function_words(config)
    assert len(list(tmp_path.glob("function-words-*.npz"))) == 1
    function_words.cache_clear()
    read = function_words(config)
    function_words.cache_clear()
    assert read is not built
    for field in ("hashes", "masks"):
        assert np.array_equal(getattr(read, field), getattr(built, field))
    assert read.languages == built.languages
    assert all(np.array_equal(a, b) for a, b in zip(read.listed, built.listed, strict=True))
    assert built.hashes.size > 5000
    assert "english" in built.languages
