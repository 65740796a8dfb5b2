"""report.html: self-contained, escaped, with right numbers, on a small dedup run."""

import re
from html import unescape

import numpy as np
import pytest

from neardup.dedup import DedupConfig, deduplicate
from neardup.engines.local.dedup_report import (
    cluster_size_counts,
    highlight,
    render_report,
    score_histogram,
    svg_bar_chart,
    svg_line_chart,
    text_window,
    threshold_counts,
    threshold_grid,
    top_pairs,
)
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

STORY = (
    "The night ferry left the harbour an hour late because a storm had closed the northern "
    "channel. Passengers waited in the terminal drinking tea while the crew checked the "
    "engines, and the captain walked along the benches explaining the delay to every family. "
    "When the ship finally sailed, the sea was calm and the lights of the town slowly faded "
    "behind the breakwater."
)
REWRITE = STORY.replace("an hour late", "sixty minutes late").replace("slowly", "gradually")
QUOTE = "the captain walked along the benches explaining the delay to every family"
EVIL = STORY + " <script>alert(1)</script>"
OTHER = (
    "Bees collect nectar from clover and lime trees in early summer; the beekeeper lifts the "
    "frames slowly, checks the brood and adds another box when the colony grows crowded."
)
DOCS = [
    ("story", STORY),
    ("other", OTHER),
    ("rewrite", REWRITE),
    ("copy", STORY),
    ("quote", QUOTE),
    ("evil<b>", EVIL),
    ("long", " ".join([STORY] * 15)),
]
# no HTML stripping: the script stays in the canonical text, where the page must escape it
RAW = TextConfig(CanonConfig(html=False, punctuation=False), ShingleConfig(unit="word", size=3))
CONFIG = DedupConfig(text=RAW, threshold=0.5)
SUMMARY = {
    "documents": len(DOCS),
    "bad_records": 0,
    "method": "full",
    "timings": {"fingerprints": 0.01, "verify": 0.002},
    "text": {"canon": {"html": False}, "shingle": {"unit": "word", "size": 3}},
}


@pytest.fixture(scope="module")
def result():
    return deduplicate(DOCS, CONFIG)


@pytest.fixture(scope="module")
def page(result):
    return render_report(result, dict(enumerate(t for _, t in DOCS)), CONFIG, summary=SUMMARY)


def table_rows(page, cls):
    table = re.search(rf'<table class="{cls}">(.*?)</table>', page, re.S).group(1)
    return [
        [unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table)
        if "<td" in row
    ]


def test_page_is_self_contained_with_inline_charts(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page
    assert "https://" not in page
    for external in ("<link", "<script", "@import", "<img", "url("):
        assert external not in page.lower()
    assert page.count("<svg") == 3
    assert "<style>" in page


def test_corpus_text_and_ids_are_escaped(page):
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "evil&lt;b&gt;" in page
    assert "evil<b>" not in page


def test_summary_scalars_and_nested_dicts_are_tables(page):
    assert "<caption>Run</caption>" in page
    assert "<caption>Timings</caption>" in page
    assert "<td>Bad records</td>" in page
    assert "<td>Fingerprints</td>" in page
    assert re.search(r"<td>Unit</td><td>word</td>", page)  # a dict inside a dict
    assert "bad_records" not in page


def test_figures_have_a_readers_labels(result):
    summary = {"timings_seconds": {"total": 1.5}, "empty_ids": ["x"], "template_df": 50}
    page = render_report(result, {}, CONFIG, summary=summary)
    assert "<caption>Timings (seconds)</caption>" in page
    assert "<td>Empty documents (first ids)</td>" in page
    assert "<td>Template shingles: held by at least (documents)</td>" in page
    assert not re.search(r">[a-z]+_[a-z_]+<", page)  # no raw key shown


def test_pairs_show_the_texts_as_written_with_the_passage_marked():
    quote = "As the report said: " + QUOTE.upper() + "!"
    docs = [("story", STORY), ("quote", quote)]
    config = DedupConfig(threshold=0.5)  # default canonicalization: case and punctuation go
    result = deduplicate(docs, config)
    page = render_report(result, dict(enumerate(t for _, t in docs)), config, summary={})
    marked = [unescape(m) for m in re.findall(r"<mark>(.*?)</mark>", page)]
    assert sorted(marked) == sorted([QUOTE, QUOTE.upper()])  # as each text has it
    assert "As the report said: <mark>" in page


def test_threshold_counts_table_matches_the_scores(page, result):
    rows = table_rows(page, "threshold-counts")
    ts = [float(t) for t, _ in rows]
    assert ts == pytest.approx(np.arange(0.5, 1.0001, 0.05))
    scores = result.pairs.score
    for t, count in rows:
        assert int(count.replace(",", "")) == int(np.sum(scores >= float(t) - 1e-9))
    assert int(rows[0][1]) == len(result.pairs) > 0
    assert int(rows[-1][1]) == int(np.sum(scores >= 1.0 - 1e-9)) > 0  # the exact copies
    for _, count in rows:  # every count is also a label in the chart
        assert f">{count}</text>" in page


def test_histogram_and_cluster_sizes(page, result):
    hist = table_rows(page, "score-histogram")
    assert sum(int(n) for _, n in hist) == len(result.pairs)
    sizes = table_rows(page, "cluster-sizes")
    labels = result.labels
    expected = np.bincount(labels)
    expected = expected[expected >= 2]
    assert [(int(s), int(n)) for s, n in sizes] == sorted(
        (int(s), int(np.sum(expected == s))) for s in set(expected.tolist())
    )


def test_top_pairs_side_by_side_with_marked_passages(page, result):
    sections = re.findall(r"<section class='pair'.*?</section>", page, re.S)
    assert len(sections) == len(result.pairs)  # fewer pairs than top=20
    for k, section in zip(top_pairs(result.pairs, 20), sections, strict=True):
        a, b = result.ids[result.pairs.left[k]], result.ids[result.pairs.right[k]]
        assert unescape(re.search(r"<h3>(.*?)</h3>", section).group(1)).endswith(
            f"a = {a} ↔ b = {b}"
        )
        assert "<mark>" in section
    quote = next(s for s in sections if "b = quote" in s)
    assert re.search(r"<mark>[^<]*captain walked along the benches[^<]*</mark>", quote)
    long_pair = next(s for s in sections if "b = long" in s)
    assert re.search(r"cut to characters 0–1,9\d\d", long_pair)


def test_top_limits_and_orders_pairs(result):
    rows = top_pairs(result.pairs, 3)
    assert rows.size == 3
    scores = result.pairs.score[rows]
    assert np.all(np.diff(scores) <= 0)
    assert top_pairs(result.pairs, 0).size == 0


def test_empty_result_renders():
    result = deduplicate([("a", STORY), ("b", OTHER), ("c", "")], CONFIG)
    assert len(result.pairs) == 0
    page = render_report(result, {}, CONFIG, summary={})
    assert "No verified pairs." in page
    assert "No clusters" in page
    assert all(int(n) == 0 for _, n in table_rows(page, "threshold-counts"))


def test_missing_texts_are_noted(result):
    page = render_report(result, {}, CONFIG, summary=SUMMARY, top=1)
    assert page.count("<section class='pair'") == 1
    assert "text not available" in page


@pytest.mark.parametrize(
    ("threshold", "grid"),
    [(0.8, [0.8, 0.85, 0.9, 0.95, 1.0]), (0.73, [0.73, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]),
     (1.0, [1.0])],
)  # fmt: skip
def test_threshold_grid(threshold, grid):
    assert threshold_grid(threshold).tolist() == pytest.approx(grid)


def test_counts_tolerate_rounding_and_histogram_closes_at_one():
    scores = np.array([0.55 - 1e-15, 0.6, 0.97, 1.0, 1.0])
    grid, counts = threshold_counts(scores, 0.5)
    assert dict(zip(np.round(grid, 2).tolist(), counts.tolist(), strict=True))[0.55] == 5
    edges, hist = score_histogram(scores, 0.5)
    assert edges.size == 11
    assert hist.tolist() == [0, 1, 1, 0, 0, 0, 0, 0, 0, 3]
    assert score_histogram(np.array([1.0]), 1.0)[1].tolist() == [1]


def test_cluster_size_counts():
    sizes, counts = cluster_size_counts(np.array([0, 0, 2, 2, 2, 5, 6, 6, 8]))
    assert sizes.tolist() == [2, 3]
    assert counts.tolist() == [2, 1]


def test_highlight_escapes_and_cuts():
    text = "a <b> c " + "word " * 1000
    out = highlight(text, [(2, 5), (6, 7)], limit=100)
    assert out.startswith("a <mark>&lt;b&gt;</mark> <mark>c</mark>")
    assert out.endswith(" …")
    assert out.endswith("word …")
    assert len(unescape(re.sub("<[^>]+>", "", out))) < 102


def test_window_moves_to_a_shared_passage_beyond_the_limit():
    text = "filler " * 500 + "the shared passage" + " tail" * 50
    start = text.index("the shared")
    out = highlight(text, [(start, start + 18)], limit=300)
    assert out.startswith("… filler")
    assert "<mark>the shared passage</mark>" in out
    assert out.endswith(" …")
    first, last = text_window(text, [(start, start + 18)], 300)
    assert start - 200 <= first <= start
    assert last - first <= 300
    assert text_window("short", [], 300) == (0, 5)


def test_charts_escape_labels_and_handle_no_data():
    bar = svg_bar_chart(["<x>"], [3], title="t<", x_label="x", y_label="y")
    assert "&lt;x&gt;" in bar
    assert "<x>" not in bar
    assert svg_bar_chart([], [], title="t", x_label="x", y_label="y").endswith("</svg>")
    assert svg_line_chart([], [], title="t", x_label="x", y_label="y").endswith("</svg>")
    assert "<polyline" in svg_line_chart([0.5], [2], title="t", x_label="x", y_label="y")


def test_passages_are_worked_out_once_per_pair_and_the_page_is_the_same_whatever_is_kept(
    result, monkeypatch
):
    from neardup.engines.local import dedup_report
    from neardup.engines.local.review import missing_passages, removals

    texts = dict(enumerate(t for _, t in DOCS))
    rows = removals(result)[:5]
    review = list(zip(rows, missing_passages(rows, texts, RAW), strict=True))
    pairs: list[tuple[str, str]] = []
    real = dedup_report.shared_passages

    def counted(a: str, b: str, config: TextConfig):
        pairs.append((a, b))
        return real(a, b, config)

    monkeypatch.setattr(dedup_report, "shared_passages", counted)
    kept = render_report(result, texts, CONFIG, summary=SUMMARY, review=review)
    # every removal reviewed is one of the top pairs, whose passages were worked out already,
    # once for each pair of texts (documents "story" and "copy" are one text)
    assert review
    assert len(top_pairs(result.pairs, 20)) == len(result.pairs)
    p = result.pairs
    text_pairs = {
        tuple(sorted((texts[a], texts[b])))
        for a, b in zip(p.left.tolist(), p.right.tolist(), strict=True)
    }
    assert len(pairs) == len(text_pairs) < len(result.pairs)
    monkeypatch.setattr(dedup_report, "VIEW_BYTES", 0)  # nothing kept but the last
    assert render_report(result, texts, CONFIG, summary=SUMMARY, review=review) == kept


def test_copies_of_a_text_are_worked_out_once_and_shown_as_each_alone(monkeypatch):
    """Documents of one text share their alignment and their passages with each other text:
    each distinct text is aligned once, and the page is the one each copy worked out alone
    gives."""
    from neardup.engines.local import dedup_report

    docs = [("a", STORY), ("b", STORY), ("c", REWRITE), ("d", STORY), ("e", REWRITE)]
    result = deduplicate(docs, CONFIG)
    texts = dict(enumerate(t for _, t in docs))
    aligned: list[str] = []
    shared: list[tuple[str, str]] = []
    align, shared_passages = dedup_report.align, dedup_report.shared_passages

    def counted_align(text: str, config: TextConfig):
        aligned.append(text)
        return align(text, config)

    def counted_shared(a: str, b: str, config: TextConfig):
        shared.append((a, b))
        return shared_passages(a, b, config)

    monkeypatch.setattr(dedup_report, "align", counted_align)
    monkeypatch.setattr(dedup_report, "shared_passages", counted_shared)
    once = render_report(result, texts, CONFIG, summary=SUMMARY)
    assert len(result.pairs) == 10
    assert sorted(aligned) == sorted([STORY, REWRITE])
    assert len(shared) == len({frozenset(p) for p in shared}) <= 3
    monkeypatch.setattr(dedup_report._Views, "_first_of", lambda _, d: d)
    assert render_report(result, texts, CONFIG, summary=SUMMARY) == once
    assert len(aligned) > 2
