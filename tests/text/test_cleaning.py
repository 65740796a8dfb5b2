"""Each text's Python cleaning steps, and running them on worker processes
(neardup.text.cleaning)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.text import canon, cleaning
from neardup.text.canon import canonicalize_batch
from neardup.text.cleaning import clean_text, clean_texts, markup_processes
from neardup.text.text_config import CanonConfig


def _pages(n: int) -> list[str]:
    """Pages with furniture, wiki text, quoted replies and wide letters: every step runs."""
    pages = []
    for i in range(n):
        words = " ".join(f"word{i}x{k}" for k in range(120))
        pages.append(
            f"<html><body><nav>Home Menu {i}</nav><article><h1>Title {i}</h1>"
            f"<p>{words}</p><p>Ｗｉｄｅ &amp; more</p></article>"
            f"<footer>Footer {i}</footer></body></html>"
        )
        pages.append(f"'''Bold {i}''' [[Link|text {i}]] {{{{tmpl}}}} {words}")
        pages.append(f"On Monday, Ann wrote:\n> quoted {i}\nreply {words}")
    return pages


def test_processes_clean_as_this_thread_does(monkeypatch):
    """A batch large enough is cleaned on the worker processes, into the same texts."""
    monkeypatch.setattr(cleaning, "START_CHARS", 0)
    config = CanonConfig()
    pages = _pages(60)
    assert sum(map(len, pages)) >= cleaning.MIN_CHARS
    alone = [clean_text(page, config) for page in pages]
    with markup_processes(2):
        processes = cleaning._active
        assert processes is not None
        assert clean_texts(pages, config) == alone
        assert processes._pool is not None  # the batch went to the processes
    assert cleaning._active is None
    assert processes._pool is None  # stopped with the block


def test_small_batches_and_one_worker_stay_on_this_thread():
    """Small batches, and the first ``START_CHARS`` of markup of a run, are cleaned here."""
    config = CanonConfig()
    pages = _pages(1)
    with markup_processes(2):
        assert clean_texts(pages, config) == [clean_text(p, config) for p in pages]
        assert cleaning._active is not None
        assert cleaning._active._pool is None
        many = _pages(60)
        assert clean_texts(many, config) == [clean_text(p, config) for p in many]
        assert cleaning._active._pool is None  # a run's first markup
        assert cleaning._active.seen == sum(map(len, many))
    with markup_processes(1):
        assert cleaning._active is None


def test_batches_canonicalized_with_processes_are_the_same(monkeypatch):
    """The whole canonicalization of a batch of pages, with and without the processes
    (none of the pages remembered from the first)."""
    monkeypatch.setattr(cleaning, "START_CHARS", 0)
    pages = [*_pages(60), "plain words", "Ｆｕｌｌ ｗｉｄｔｈ"]
    config = CanonConfig()
    monkeypatch.setattr(canon, "_MARKUP_CLEANED", canon._Cleaned(1 << 24))
    alone = canonicalize_batch(pages, config)
    monkeypatch.setattr(canon, "_MARKUP_CLEANED", canon._Cleaned(1 << 24))
    with markup_processes(2):
        apart = canonicalize_batch(pages, config)
    assert [apart.text(d) for d in range(len(pages))] == [alone.text(d) for d in range(len(pages))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=60), st.integers(1, 8))
def test_chunks_keep_every_text_in_order(texts, parts):
    chunks = cleaning._chunks(texts, parts)
    assert [t for chunk in chunks for t in chunk] == texts
    assert len(chunks) <= max(parts, 1)
    assert all(chunks) or chunks == [[]]


LICENCE = (
    "Copyright 2008 Jane Roe <jane@example.org>\n"
    "THIS SOFTWARE IS PROVIDED BY THE AUTHOR ''AS IS'' AND ANY EXPRESS OR IMPLIED WARRANTIES"
)


def test_a_licence_quoting_as_is_is_not_read_as_a_wiki_page():
    """Italic quotes and an address in angle brackets are no wiki structure: with the
    punctuation removed, nothing the parser would do is left (its quotes stay here)."""
    config = CanonConfig()
    assert config.punctuation
    assert clean_text(LICENCE, config) == LICENCE
    linked = LICENCE + " to prepare [[derivative work]]s"
    assert "''" not in clean_text(linked, config)  # a wiki link: parsed, its quotes gone
    kept_punctuation = CanonConfig(punctuation=False)
    assert "''" not in clean_text(LICENCE, kept_punctuation)  # quotes that stay are markup
