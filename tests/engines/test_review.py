"""review.jsonl and the report's removals to review: every removal, weakest first, with the
passages its keeper lacks (checked against sets of shingles computed here)."""

import json

import pytest

from neardup.dedup import DedupConfig
from neardup.engines.local import pipeline
from neardup.engines.local.pipeline import REPORT_REVIEW, Inputs, run_dedup
from neardup.engines.local.review import MAX_PASSAGES, PASSAGE_CHARS, short
from neardup.fingerprints.shingles import shingles
from textgen import edit, text

FOOTER = (
    "sent from the harbour users mailing list: to leave it send an empty message to the list "
    "address and read the archives at the project site before you post"
)


def corpus() -> list[dict]:
    records = []
    for i in range(20):
        body = text(700 + i, 40 + 3 * i)
        records.append({"id": f"d{i}", "text": body + "\n" + FOOTER})
        if i % 2 == 0:  # an edited copy: its keeper lacks the edited words
            records.append({"id": f"d{i}-edit", "text": edit(body, i, 1 + i // 4) + "\n" + FOOTER})
        if i % 3 == 0:  # a quote: held whole
            records.append({"id": f"d{i}-quote", "text": " ".join(body.split()[:20])})
    return records


def shingle_texts(body: str, config: DedupConfig) -> set[str]:
    return {s.text for s in shingles(body, config.text)}


@pytest.fixture(scope="module")
def review_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review")
    records = corpus()
    path = tmp / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp / "out"
    run_dedup(Inputs((str(path),)), out, DedupConfig())
    rows = [json.loads(x) for x in (out / "review.jsonl").read_text().splitlines()]
    return out, {r["id"]: r["text"] for r in records}, rows


def test_one_line_per_removal_into_its_keeper_weakest_first(review_run):
    out, _, rows = review_run
    removed = [json.loads(x) for x in (out / "removed.jsonl").read_text().splitlines()]
    assert len(removed) >= 10
    assert sorted((r["id"], r["keeper"]) for r in rows) == sorted(
        (r["id"], r["_duplicate_of"]) for r in removed
    )
    order = [r["containment"] for r in rows]
    assert order == sorted(order)
    assert order[0] < 1.0  # lossy copies first
    assert order[-1] == 1.0  # whole quotes last


def test_containment_score_and_missing_passages_are_the_runs_and_the_texts(review_run):
    out, texts, rows = review_run
    config = DedupConfig()
    pairs = {}
    for line in (out / "pairs.jsonl").read_text().splitlines():
        p = json.loads(line)
        pairs[p["a"], p["b"]] = p["score_a_in_b"]
        pairs[p["b"], p["a"]] = p["score_b_in_a"]
    lossy = checked = 0
    for row in rows:
        mine = shingle_texts(texts[row["id"]], config)
        theirs = shingle_texts(texts[row["keeper"]], config)
        lacked = mine - theirs
        assert row["containment"] == pytest.approx(1 - len(lacked) / len(mine))
        assert row["score"] == pytest.approx(pairs[row["id"], row["keeper"]])
        assert row["score"] >= config.removal_guard
        if not lacked:
            assert row["missing"] == []
            continue
        lossy += 1
        assert 1 <= len(row["missing"]) <= MAX_PASSAGES
        assert row["missing_passages"] >= len(row["missing"])
        assert all(len(p) <= PASSAGE_CHARS + 2 for p in row["missing"])
        if row["missing_passages"] <= MAX_PASSAGES and all(
            not p.endswith(" …") for p in row["missing"]
        ):  # every lacking shingle lies in a passage, every passage is made of them
            checked += 1
            assert all(any(s in p for p in row["missing"]) for s in lacked)
            for p in row["missing"]:
                words = p.split()
                assert any(" ".join(words[i : i + 3]) in lacked for i in range(len(words)))
    assert lossy >= 5
    assert checked >= 5


def test_the_report_shows_the_first_removals_side_by_side(review_run):
    out, _, rows = review_run
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page[page.index("Removals to review") :]
    shown = section.count("<section class='pair review'")
    assert shown == min(REPORT_REVIEW, len(rows))
    assert f"{rows[0]['id']} removed into {rows[0]['keeper']}" in section
    first = section[: section.index("id='review-2'")]
    marked = [m.split("</mark>")[0] for m in first.split("<mark class='miss'>")[1:]]
    assert marked  # the words the keeper lacks, marked in the removed text as written
    assert any("x" in m for m in marked)  # textgen's edited words are x<seed>_<i>


def test_short_cuts_long_passages_at_a_space():
    passage = " ".join(f"word{i}" for i in range(100))
    cut = short(passage)
    assert cut.endswith(" …")
    assert len(cut) <= PASSAGE_CHARS + 2
    assert passage.startswith(cut[:-2])
    assert short("a short one") == "a short one"


def test_only_the_weakest_removals_get_their_passages(review_run, tmp_path, monkeypatch):
    """Past the first MAX_REVIEWED removals that lack something, a line gives the figures
    only; the lines up to there are as an unbounded run writes them."""
    _, _, full = review_run
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in corpus()), encoding="utf-8")
    monkeypatch.setattr(pipeline, "MAX_REVIEWED", 2)
    run_dedup(Inputs((str(path),)), tmp_path / "out", DedupConfig())
    rows = [json.loads(x) for x in (tmp_path / "out" / "review.jsonl").read_text().splitlines()]
    lossy = [i for i, r in enumerate(full) if r["containment"] < 1.0]
    assert len(lossy) > 2
    for i, (row, whole) in enumerate(zip(rows, full, strict=True)):
        if i in lossy[:2] or i not in lossy:
            assert row == whole
        else:
            assert {k: v for k, v in row.items() if not k.startswith("missing")} == {
                k: v for k, v in whole.items() if not k.startswith("missing")
            }
            assert row["missing"] is None
            assert row["missing_passages"] is None
