"""neardup explain over a whole run: its decision is the run's, pair by pair, and its figures
are dedup's own (checked against sets of shingles computed here)."""

import itertools
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clirun import neardup, run
from neardup.dedup import DedupConfig
from neardup.dedup.pairscore import score_alone
from neardup.engines.local.explain import explain
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.engines.local.runread import open_run
from neardup.fingerprints.shingles import fingerprint_batch, shingles
from textgen import edit, text

FOOTER = (
    "you received this message because you are subscribed to the harbour users mailing list "
    "to unsubscribe from this list send an empty message to the list address and visit the "
    "archives at the project site for older threads and the posting guidelines"
)


def corpus() -> list[dict]:
    """Messages with a list footer (a template), near copies of some, copies of a copy (two
    removed into a third document), quotes of others, and unrelated texts."""
    records = []
    for i in range(24):
        body = text(500 + i, 30 + 2 * i)
        records.append({"id": f"m{i}", "text": body + "\n" + FOOTER, "n": i})
        if i % 3 == 0:
            records.append({"id": f"m{i}-edit", "text": edit(body, i, 2) + "\n" + FOOTER})
        if i % 4 == 0:
            records.append({"id": f"m{i}-edit2", "text": edit(body, 100 + i, 3) + "\n" + FOOTER})
        if i % 5 == 0:
            records.append({"id": f"m{i}-quote", "text": " ".join(body.split()[: 12 + i])})
    for i in range(6):
        records.append({"id": f"o{i}", "text": text(900 + i, 50)})
    return records


def written(a: str, b: str, config: DedupConfig) -> float:
    """Containment of a in b as written: the sets of their canonical shingles' texts."""
    sa = {s.text for s in shingles(a, config.text)}
    sb = {s.text for s in shingles(b, config.text)}
    return len(sa & sb) / len(sa)


@pytest.fixture(scope="module", params=["jsonl", "parquet"])
def finished(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"run-{request.param}")
    records = corpus()
    path = tmp / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp / "out"
    run_dedup(Inputs((str(path),)), out, DedupConfig(), fmt=request.param)
    return out, {r["id"]: r["text"] for r in records}, request.param


def outputs(out, fmt):
    """Removals and pairs as the run wrote them, read here without neardup's reader."""

    def read(name):
        if fmt == "jsonl":
            return [json.loads(x) for x in (out / f"{name}.jsonl").read_text().splitlines()]
        return pq.read_table(out / f"{name}.parquet").to_pylist()

    return {r["id"]: r["_duplicate_of"] for r in read("removed")}, read("pairs")


def expected(a: str, b: str, removed_into: dict) -> str:
    if removed_into.get(a) == b:
        return "a_removed_into_b"
    if removed_into.get(b) == a:
        return "b_removed_into_a"
    return "both_kept"


def test_explain_gives_the_runs_decision_and_figures_for_every_pair_and_removal(finished):
    out, texts, fmt = finished
    removed_into, pairs = outputs(out, fmt)
    finished_run = open_run(out)
    config = finished_run.config
    assert config == DedupConfig()  # the run's settings read back from summary.json
    assert finished_run.template is not None
    assert finished_run.template.size > 20  # the footer
    assert len(removed_into) >= 10
    assert len(pairs) >= 15
    third = [  # pairs both removed into a third document
        p
        for p in pairs
        if removed_into.get(p["a"]) not in (None, p["b"])
        and removed_into.get(p["b"]) not in (None, p["a"])
    ]
    assert third
    asked = {(p["a"], p["b"]) for p in pairs} | {(d, k) for d, k in removed_into.items()}
    asked |= {(k, d) for d, k in list(removed_into.items())[:5]}  # the other way round too
    for a, b in sorted(asked):
        e = explain(finished_run, a, b)
        assert e.decision == expected(a, b, removed_into), (a, b, e.rule)
        assert e.written.containment_a_in_b == pytest.approx(written(texts[a], texts[b], config))
        assert e.written.containment_b_in_a == pytest.approx(written(texts[b], texts[a], config))
        assert e.a.removed_into == removed_into.get(a)
        assert e.scores_from == "pairs"  # every removal is into a verified pair
        if e.decision == "a_removed_into_b":
            assert e.scored.score_a_in_b >= config.removal_guard
            assert "A was removed into B" in e.rule
        if e.decision == "both_kept" and (a, b) in third:
            assert "third document" in e.rule
        # scored again with the run's templates.npy: the run's own scores
        again = score_alone(
            fingerprint_batch([texts[a], texts[b]], config.text), config, finished_run.template
        )
        assert again.score_a_in_b == pytest.approx(e.scored.score_a_in_b)
        assert again.score_b_in_a == pytest.approx(e.scored.score_b_in_a)
    template_rich = [e for a, b in sorted(asked)[:3] if (e := explain(finished_run, a, b))]
    assert all(e.a.template_shingles > 20 for e in template_rich if "quote" not in e.a.id)


def test_pairs_the_run_did_not_verify_are_kept_and_scored_again(finished):
    out, texts, fmt = finished
    _, pairs = outputs(out, fmt)
    verified = {frozenset((p["a"], p["b"])) for p in pairs}
    ids = sorted(texts)
    unverified = [
        (a, b) for a, b in itertools.combinations(ids, 2) if frozenset((a, b)) not in verified
    ][::37]
    assert len(unverified) > 10
    finished_run = open_run(out)
    for a, b in unverified:
        e = explain(finished_run, a, b)
        assert e.scores_from == "recomputed"
        assert e.pair is None
        assert e.decision == "both_kept"
        assert "not a verified pair" in e.rule
        assert e.scored.score < finished_run.config.threshold  # else the run missed a pair


def test_lacking_passages_and_the_template_are_the_documents_own(finished):
    out, texts, _ = finished
    e = explain(open_run(out), "m0-edit", "m0")
    lacking = e.a.lacking.passages()
    assert lacking
    assert all(p.split()[0] in texts["m0-edit"] for p in lacking)
    assert any("x0" in p for p in lacking)  # the edited words are what m0 lacks
    assert [p.split()[:3] for p in e.a.template.passages()] == [["you", "received", "this"]]


def test_the_command_prints_the_decision_and_one_json_object(finished):
    out, _, fmt = finished
    removed_into, _ = outputs(out, fmt)
    gone, keeper = next(iter(removed_into.items()))
    result = run("explain", gone, keeper, "--run", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["decision"] == "a_removed_into_b"
    assert data["as_scored"]["source"] == "pairs"
    assert {"containment_a_in_b", "containment_b_in_a"} <= set(data["as_written"])
    assert data["pair"]["score_a_in_b"] == data["as_scored"]["score_a_in_b"]
    assert data["guarantee"].startswith("a document is removed only")
    human = run("explain", keeper, gone, "--run", str(out))
    assert "b_removed_into_a" in human.output
    assert "containment as written" in human.output


def test_an_unknown_id_or_a_directory_that_is_not_a_run_is_one_line(finished, tmp_path):
    out, _, _ = finished
    unknown = neardup("explain", "m0", "nobody", "--run", str(out))
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        f"neardup: error: {out}: no document with id 'nobody' in kept or removed"
    ]
    not_run = neardup("explain", "a", "b", "--run", str(tmp_path))
    assert not_run.returncode == 1
    assert "not the output directory" in not_run.stderr
    assert len(not_run.stderr.strip().splitlines()) == 1
    missing = neardup("explain", "a", "b")
    assert missing.returncode == 2
    assert "--run" in missing.stderr


def test_extra_numbers_of_a_pair_record_are_reported(finished, tmp_path):
    """A pair record with more fields (a later run's) is explained without change."""
    out, _, fmt = finished
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    _, pairs = outputs(copy, fmt)
    first = pairs[0] | {"identity_a_in_b": 0.25}
    rows = [first, *({**p, "identity_a_in_b": None} for p in pairs[1:])]
    if fmt == "jsonl":
        (copy / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), copy / "pairs.parquet")
    e = explain(open_run(copy), first["a"], first["b"])
    assert e.as_dict()["pair"]["identity_a_in_b"] == 0.25
    swapped = explain(open_run(copy), first["b"], first["a"]).as_dict()
    assert swapped["pair"]["identity_b_in_a"] == 0.25
    assert np.isclose(swapped["as_scored"]["score_b_in_a"], first["score_a_in_b"])


def run_on(tmp_path, rows: list[dict], config: DedupConfig, name: str = "out"):
    """A finished run of ``rows`` (``id``, ``text``) with ``config``, read back."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run_dedup(Inputs((str(path),), id_field="id"), tmp_path / name, config)
    return open_run(tmp_path / name)


def test_a_runs_settings_are_read_back_whole(tmp_path):
    from neardup.dedup.cluster import KeepPolicy
    from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

    config = DedupConfig(
        text=TextConfig(CanonConfig(stem=True), ShingleConfig(unit="word", size=4)),
        threshold=0.7,
        guard=0.8,
        keep=KeepPolicy.parse("longest"),
        template_df=5,
        max_bucket=300,
    )
    assert run_on(tmp_path, corpus()[:12], config).config == config


def test_a_hub_keeping_what_it_holds_is_named(tmp_path):
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(300)]
    poems = [" ".join(rng.choice(words, 40)) for _ in range(3)]
    rows = [{"id": f"poem{i}", "text": p} for i, p in enumerate(poems)]
    rows.append({"id": "anthology", "text": " ".join(poems)})
    e = explain(run_on(tmp_path, rows, DedupConfig()), "poem0", "anthology")
    assert e.decision == "both_kept"
    assert "hub" in e.rule
    assert "3 distinct groups" in e.rule
    no_identity = DedupConfig(identity=False)
    assert run_on(tmp_path, rows, no_identity, "again").config == no_identity


def test_a_keeper_that_does_not_name_a_document_is_named_with_its_lacking_words(tmp_path):
    from tests.dedup.test_identity import VOCABULARY, letters

    rng = np.random.default_rng(3)
    licence = " ".join(rng.choice(VOCABULARY, 100))
    names = lambda i: " ".join(letters(100 * i + j) for j in range(45))  # noqa: E731
    files = {f"f{i}": f"{names(i)} {licence}" for i in range(4)}
    rows = [{"id": pkg, "text": t} for name, t in files.items() for pkg in (name, f"lib{name}")]
    config = DedupConfig(template_df=0)
    run = run_on(tmp_path, rows, config)
    e = explain(run, "f0", "f1")
    assert e.decision == "both_kept"
    assert e.scored.score_a_in_b >= config.removal_guard  # held as written: the scores allow it
    assert "does not name A" in e.rule
    lacking = e.as_dict()["rare_words_lacking"]["a_not_in_b"]
    assert lacking == sorted(names(0).split())  # every name of A, none of the licence
    assert e.as_dict()["rare_words"]["a"] == 45
    copies = explain(run, "libf0", "f0")
    assert copies.decision == "a_removed_into_b"
    # a run made by a version that hashed its words otherwise: its rare words are not read
    summary = json.loads((run.out / "summary.json").read_text())
    (run.out / "summary.json").write_text(json.dumps(summary | {"word_hash": 1}))
    older = explain(open_run(run.out), "f0", "f1")
    assert older.as_dict()["rare_words"]["a"] == 0
    assert any("hashed its rare words otherwise" in note for note in older.notes)


def test_the_rule_says_whether_the_fuller_text_or_the_keep_policy_decided(tmp_path):
    rng = np.random.default_rng(9)
    words = [f"w{i}" for i in range(300)]
    full = list(rng.choice(words, 100))
    rows = [
        {"id": "partial", "text": " ".join(full[:80])},  # the full text holds more: it is kept
        {"id": "full", "text": " ".join(full)},
        {"id": "copy", "text": " ".join(full[:97]) + " w1 w2"},  # holds a little more of copy2
        {"id": "copy2", "text": " ".join(full[:97])},  # but within the margin: --keep first
    ]
    e = explain(run_on(tmp_path, rows[:2], DedupConfig()), "partial", "full")
    assert e.decision == "a_removed_into_b"
    assert "the fuller text" in e.rule
    e = explain(run_on(tmp_path, rows[2:], DedupConfig(), "again"), "copy", "copy2")
    assert e.decision == "b_removed_into_a"
    assert "keep policy (first)" in e.rule


def test_a_document_with_words_of_its_own_is_named_by_no_other(tmp_path):
    from tests.dedup.test_identity import VOCABULARY, letters

    rng = np.random.default_rng(5)
    body = list(rng.choice(VOCABULARY, 100))
    names = lambda i: " ".join(letters(100 * i + j) for j in range(20))  # noqa: E731
    rows = [{"id": f"f{i}", "text": f"{names(i)} {' '.join(body)} {names(i)}"} for i in range(2)]
    # word lists of the licence's words in other orders: its words are common, not rare
    rows += [{"id": f"list{i}", "text": " ".join(rng.permutation(body))} for i in range(3)]
    config = DedupConfig(template_df=0)
    e = explain(run_on(tmp_path, rows, config), "f0", "f1")
    assert e.decision == "both_kept"
    assert e.scored.score_a_in_b >= config.removal_guard
    assert e.as_dict()["own_words"] == {"a": 20, "b": 20}
    assert "20 of them A's own" in e.rule


def test_a_keeper_that_translates_a_document_is_named_with_what_it_adds(tmp_path):
    from tests.dedup.test_translation import ENGLISH, JAPANESE, SPANISH

    notes = "この文書は Debian の翻訳チームが管理しています。最新の版は Web サイトにあります。"
    rows = [{"id": "en", "text": ENGLISH}, {"id": "ja", "text": f"{JAPANESE}\n{notes * 3}"}]
    e = explain(run_on(tmp_path, rows, DedupConfig()), "en", "ja")
    assert e.decision == "both_kept"
    assert e.scored.score_a_in_b >= DedupConfig().removal_guard  # the scores allow it
    assert "B translates A: it adds text in a script of characters" in e.rule
    rows = [{"id": "en", "text": ENGLISH}, {"id": "es", "text": SPANISH}]
    e = explain(run_on(tmp_path, rows, DedupConfig(), "again"), "en", "es")
    assert e.decision == "b_removed_into_a"  # a partial translation goes into its original
