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


@pytest.mark.parametrize("reviewed", [1, 10_000])
def test_the_spark_task_s_passages_are_the_local_engine_s(reviewed):
    """The stage that finds the review's passages in one Spark task gives each removal the
    fields the local engine writes, bounded as it bounds them; a text not given is a
    removal with none found (no Spark here: the stage run on Arrow batches)."""
    import pyarrow as pa

    from neardup.engines.local.review import Removal, missing_fields, missing_passages
    from neardup.engines.spark.spark_review import passages_stage

    config = DedupConfig()
    bodies = [text(900 + i, 60) for i in range(4)]
    texts = {0: bodies[0], 1: edit(bodies[0], 1, 3), 2: bodies[1], 3: edit(bodies[1], 2, 5)}
    texts[4] = " ".join(bodies[2].split()[:30])
    rows = [Removal(1, 0, 0.9, 0.9), Removal(3, 2, 0.8, 0.8), Removal(4, 5, 1.0, 1.0)]
    rows.append(Removal(6, 2, 0.7, 0.7))  # document 6's text is not given
    given = [pa.RecordBatch.from_pydict({"doc": [d], "text": [t]}) for d, t in texts.items()]
    (out,) = passages_stage(rows, config.text, reviewed)(iter(given))
    wanted = [missing_fields(m) for m in missing_passages(rows, texts, config.text, reviewed)]
    assert out.column("row").to_pylist() == [0, 1, 2, 3]
    missing, counts = out.column("missing").to_pylist(), out.column("missing_passages").to_pylist()
    assert list(zip(missing, counts, strict=True)) == wanted
    assert (wanted[0][1] or 0) > 0  # a lossy removal has passages
    assert wanted[2] == ([], 0)  # a lossless one: none
    assert wanted[3] == (None, None)  # no text at hand
    if reviewed == 1:
        assert wanted[1] == (None, None)  # past the first lossy removal
    else:
        assert (wanted[1][1] or 0) > 0
