"""What the pages show, without HTTP (neardup.service.web.views)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.collection import MemoryStore
from neardup.collection.persistent import Collection
from neardup.dedup import DedupConfig
from neardup.errors import EmptyTextError
from neardup.service.web import views

PASSAGE = "the keeper counted the herons in the willows and wrote both figures in the ledger"


def test_percent_never_rounds_to_all_or_nothing():
    assert views.percent(0.92) == "92 %"
    assert views.percent(0.999) == "99 %"
    assert views.percent(1.0) == "100 %"
    assert views.percent(0.001) == "1 %"
    assert views.percent(0.0) == "0 %"


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0.01, 1))
def test_verdict_follows_the_lossless_rule(a_in_b, b_in_a, threshold):
    said = views.verdict(a_in_b, b_in_a, threshold, "A", "B")
    if a_in_b >= threshold and b_in_a >= threshold:
        assert said.startswith("Each holds the other")
    elif a_in_b >= threshold:
        assert said.startswith("A is contained in B")
    elif b_in_a >= threshold:
        assert said.startswith("B is contained in A")
    else:
        assert said.startswith("Neither")


def test_compare_view_says_who_holds_whom_and_marks_the_passage():
    a = f"Intro! {PASSAGE.capitalize()}."
    b = f"{PASSAGE.upper()}; and then a long tail of other words that A never had at all."
    view = views.compare_view(a, b, DedupConfig(threshold=0.8))
    assert view.holds == ["B holds 93 % of A", "A holds 48 % of B"]  # 13 of 14 shingles; 13 of 27
    assert view.verdict.startswith("A is contained in B")
    assert [p.lower() for p in view.a.marked] == [PASSAGE]
    assert [p.lower() for p in view.b.marked] == [PASSAGE]
    assert "".join(piece for piece, _ in view.a.pieces) == a
    keys = {f.key for f in view.figures}
    assert {"resemblance", "containment_a_in_b", "containment_b_in_a"} <= keys


def test_compare_view_names_an_empty_text():
    with pytest.raises(EmptyTextError, match="B"):
        views.compare_view(PASSAGE, "  ", DedupConfig())


def test_search_and_document_views_use_the_kept_text():
    collection = Collection.create(MemoryStore(), DedupConfig(threshold=0.6))
    stored = f"Archive note. {PASSAGE}."
    collection.add([("kept", stored, {views.TEXT_META: stored, "by": "me"})])
    collection.add([("bare", f"Other note. {PASSAGE}!", None)])
    by_id = {m.id: m for m in views.search_view(f"{PASSAGE}?", collection)}
    assert set(by_id) == {"kept", "bare"}
    assert by_id["bare"].stored is None  # no text kept: nothing to mark
    assert by_id["kept"].stored is not None
    assert [p.lower() for p in by_id["kept"].stored.marked] == [PASSAGE]

    doc = views.document_view("kept", collection)
    assert doc is not None
    assert doc.text == stored
    assert doc.meta == {"by": "me"}
    assert [m.id for m in doc.matches or []] == ["bare"]  # itself left out
    assert views.document_view("bare", collection).matches is None
    assert views.document_view("nobody", collection) is None


def test_collection_figures_are_labelled_for_a_reader():
    collection = Collection.create(MemoryStore(), DedupConfig())
    figures = {f.key: f for f in views.collection_figures(collection)}
    assert figures["documents"].label == "Documents"
    assert figures["documents"].value == "0"
    assert all("_" not in f.label for f in figures.values())
