"""neardup evaluate / calibrate: hand-computed measures, both truth forms, the SimHash mapping,
agreement with dedup's pairs.jsonl, the CLI outputs, calibrated configs, bad truth files."""

import gzip
import json
import random
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli import cli
from neardup.dedup import DEFAULT_TEXT, DedupConfig, Pairs, Scored, score_candidates
from neardup.dedup.configfile import config_from_dict, merge_config, read_config, write_config
from neardup.engines.local.pipeline import Inputs, run_dedup
from neardup.errors import ConfigError, InputError
from neardup.judge.calibrate import Calibration, Objective, choose, grid_configs
from neardup.judge.evaluate import (
    Evaluation,
    MethodEvaluation,
    PairScores,
    Row,
    adjusted_rand_index,
    cluster_pair_scores,
    method_config,
    pair_scores,
    parse_thresholds,
    simhash_distance,
    sweep_clusters,
    sweep_pairs,
    threshold_groups,
)
from neardup.judge.run import evaluate_corpus, evaluate_files, evaluate_pairs
from neardup.judge.textpairs import pairs_sharing_key, score_text_pairs
from neardup.judge.truth import ClusterTruth, PairTruth, read_truth
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

ALL = "full,modm,bottomn,minhash,megashingle,simhash,imatch"

# ---------------------------------------------------------------- a small labelled corpus

_SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vu", "zor", "pel", "dri", "fon", "gul", "bex"]
_RNG = random.Random(7)
VOCAB = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "n", "s")})


def _words(n):
    return [_RNG.choice(VOCAB) for _ in range(n)]


def _corpus():
    docs, truth = [], []
    for i in range(10):
        base = _words(80)
        docs.append((f"d{i}", " ".join(base)))
        truth.append((f"d{i}", f"c{i}"))
        if i < 5:  # an exact copy and a light edit (3 words replaced)
            edit = list(base)
            for k in (10, 40, 70):
                edit[k] = _RNG.choice(VOCAB)
            docs += [(f"d{i}x", " ".join(base)), (f"d{i}e", " ".join(edit))]
            truth += [(f"d{i}x", f"c{i}"), (f"d{i}e", f"c{i}")]
        if i < 2:  # quoted whole inside a long text
            docs.append((f"d{i}q", " ".join(_words(150) + base + _words(100))))
            truth.append((f"d{i}q", f"c{i}"))
    return docs, truth


DOCS, TRUTH = _corpus()


@pytest.fixture
def files(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in DOCS))
    truth = tmp_path / "truth.jsonl.gz"
    with gzip.open(truth, "wt") as fh:
        fh.writelines(json.dumps({"id": i, "cluster": c}) + "\n" for i, c in TRUTH)
    return corpus, truth


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


# ---------------------------------------------------------------- hand-computed measures


def test_hand_computed_pair_scores():
    # truth: {a,b,c} {d,e} {f}; predicted: {a,b} {c,d} {e} {f}
    truth = np.array(["x", "x", "x", "y", "y", "z"])
    predicted = np.array([0, 0, 2, 2, 4, 5])
    s = cluster_pair_scores(predicted, truth)
    assert (s.true_positives, s.predicted, s.actual) == (1, 2, 4)
    assert s.precision == 0.5
    assert s.recall == 0.25
    assert s.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert s.type_i_percent == 50.0
    assert s.type_ii_percent == 75.0
    # ARI: Σ C(n_ij,2) = 1, Σ C(a_i,2) = 2, Σ C(b_j,2) = 4, C(6,2) = 15:
    # E = 2·4/15, max = 3, ARI = (1 − 8/15) / (3 − 8/15) = 7/37
    assert adjusted_rand_index(predicted, truth) == pytest.approx(7 / 37)


def test_perfect_and_empty():
    labels = np.array([0, 0, 2])
    assert cluster_pair_scores(labels, labels).f1 == 1.0
    none = cluster_pair_scores(np.arange(3), np.arange(3))
    assert (none.precision, none.recall) == (1.0, 1.0)
    with pytest.raises(ValueError, match="same documents"):
        cluster_pair_scores(np.arange(3), np.arange(4))


def test_adjusted_rand_index_by_hand():
    # {0,1,2}{3,4,5} against {0,1}{2,3}{4,5}: index 2, Σa 3, Σb 6, E = 18/15, max 4.5
    truth, predicted = [0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]
    assert adjusted_rand_index(predicted, truth) == pytest.approx(0.8 / 3.3)
    assert adjusted_rand_index(truth, truth) == 1.0
    assert adjusted_rand_index(np.arange(4), np.arange(4)) == 1.0  # both trivial
    assert adjusted_rand_index(np.arange(6), truth) == 0.0  # nothing joined
    with pytest.raises(ValueError, match="same documents"):
        adjusted_rand_index(np.arange(3), np.arange(4))


def test_thresholds_and_the_simhash_mapping():
    assert parse_thresholds("0.5:1.0:0.1") == (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert parse_thresholds("0.9, 0.5") == (0.5, 0.9)
    for bad in ("0:1:0.5", "x", "0.5:1:0", "1.5", ""):
        with pytest.raises(ConfigError, match="thresholds"):
            parse_thresholds(bad)
    assert [simhash_distance(t) for t in (0.5, 0.8, 0.9, 0.95, 1.0)] == [32, 12, 6, 3, 0]
    d = np.arange(65)
    for t in parse_thresholds("0.3:1.0:0.01"):  # the mapping is dedup's own filter
        assert np.array_equal(1.0 - d / 64.0 >= t, d <= simhash_distance(t))


def _pairs(left, right, score):
    score = np.asarray(score, dtype=float)
    return Pairs(np.array(left), np.array(right), score, score, score, score, score, score)


def test_sweep_pairs_by_hand():
    scores = np.array([0.9, 0.6, 0.4, 0.95, 0.0])
    labels = np.array([1, 1, 1, 0, 0], dtype=bool)
    low, high = sweep_pairs(scores, labels, (0.5, 0.8))
    assert (low.found, low.scores) == (3, PairScores(2, 3, 3))
    assert low.scores.type_i_percent == pytest.approx(100 / 3)
    assert (high.found, high.scores) == (2, PairScores(1, 2, 3))
    assert high.scores.recall == pytest.approx(1 / 3)
    assert low.ari is None


def test_sweep_clusters_by_hand():
    # truth {0,1,2}{3}{4}; pairs 0-1 .9, 1-2 .6, 2-3 .7, 3-4 .3; clusters by chaining
    scored = Scored(
        [str(i) for i in range(5)],
        np.full(5, 10),
        np.full(5, 10),
        _pairs([0, 1, 2, 3], [1, 2, 3, 4], [0.9, 0.6, 0.7, 0.3]),
        0,
        0,
        [],
        {},
    )
    codes = np.array([0, 0, 0, 1, 2])
    low, high = sweep_clusters(scored, DedupConfig(chain=True), (0.5, 0.8), codes)
    assert (low.found, low.pairs) == (3, PairScores(2, 3, 3))
    assert low.ari == pytest.approx(1.2 / 2.7)  # {0,1,2,3}{4}: index 3, Σa 6, Σb 3, E 1.8
    assert low.clusters == PairScores(3, 6, 3)
    assert low.scores == low.clusters  # judged by dedup's clusters
    assert (high.found, high.pairs) == (1, PairScores(1, 1, 3))
    assert high.ari == pytest.approx(0.7 / 1.7)  # {0,1}: index 1, Σa 1, Σb 3, E 0.3
    assert high.hamming is None
    (by_pairs,) = sweep_clusters(scored, DedupConfig(chain=True), (0.5,), codes, "pairs")
    assert by_pairs.scores == PairScores(2, 3, 3)
    assert by_pairs.as_dict()["judged_by"] == "pairs"
    assert low.as_dict()["pair_recall"] == pytest.approx(2 / 3)


def test_pair_lookup_and_shared_keys():
    pairs = _pairs([0, 2], [1, 5], [0.5, 0.8])
    scores, candidate = pair_scores(pairs, np.array([1, 5, 3]), np.array([0, 2, 4]))
    assert scores.tolist() == [0.5, 0.8, 0.0]
    assert candidate.tolist() == [True, True, False]
    empty = pair_scores(_pairs([], [], []), np.array([0]), np.array([1]))
    assert empty[0].tolist() == [0.0]
    # docs 0,1 share key 7; docs 2,3 share none (3 shares 9 with doc 4 of another pair)
    docs = np.array([0, 1, 1, 2, 3, 4])
    keys = np.array([7, 7, 8, 1, 9, 9], dtype=np.uint64)
    assert pairs_sharing_key(docs, keys).tolist() == [0]


# ---------------------------------------------------------------- truth files


def test_both_truth_forms(tmp_path, files):
    clusters = read_truth(files[1])
    assert isinstance(clusters, ClusterTruth)
    assert clusters.codes(["d0", "d0x", "d1"]).tolist() == [0, 0, 1]
    with pytest.raises(InputError, match="no cluster for 1 input document"):
        clusters.codes(["d0", "nope"])
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"a": "d0", "b": "d0e", "label": 1}\n\n{"a": "d1", "b": "d2", "label": 0}\n')
    pairs = read_truth(path)
    assert isinstance(pairs, PairTruth)
    assert pairs.labels.tolist() == [True, False]
    assert pairs.lines.tolist() == [1, 3]
    a, b = pairs.indices(["d1", "d0", "d0e", "d2"])
    assert (a.tolist(), b.tolist()) == ([1, 0], [2, 3])
    with pytest.raises(InputError, match=r"pairs.jsonl:3: b='d2' is not a document id"):
        pairs.indices(["d0", "d0e", "d1"])


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "cluster": "x"}', '{"cluster": "y"}'], r"bad.jsonl:2: missing 'id'"),
        (['{"id": "a", "cluster": "x"}', '{"id": "b"}'], r"bad.jsonl:2: missing 'cluster'"),
        (['{"id": "a", "cluster": "x"}', '{"id": "a", "cluster": "y"}'], "listed twice"),
        (['{"a": "x", "b": "y", "label": 1}', '{"a": "x", "label": 0}'], r":2: missing 'b'"),
        (['{"a": "x", "b": "y", "label": 2}'], r"bad.jsonl:1: label=2 must be 0 or 1"),
        (['{"a": "x", "b": "y"}'], r"bad.jsonl:1: missing 'label'"),
        (['{"id": "a", "cluster": "x"}', "{oops"], r"bad.jsonl:2: not valid JSON"),
        (["[1, 2]"], r"bad.jsonl:1: not a JSON object"),
        (['{"text": "x"}'], r"bad.jsonl:1: neither a cluster row"),
        ([], r"bad.jsonl: no records"),
    ],
)
def test_bad_truth_files_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    with pytest.raises(InputError, match=message):
        read_truth(path)


def test_missing_truth_file_and_cluster_truth_without_input(tmp_path, files):
    with pytest.raises(InputError, match="no such file"):
        read_truth(tmp_path / "none.jsonl")
    with pytest.raises(ConfigError, match="needs the corpus"):
        evaluate_files([], str(files[1]), [], (0.5,))


# ---------------------------------------------------------------- runs


def _thresholds():
    return parse_thresholds("0.5:1.0:0.1")


def test_evaluate_corpus_with_cluster_truth_by_estimates():
    th = _thresholds()
    configs = [
        method_config(m, DEFAULT_TEXT, "containment", th, mode="estimates") for m in ALL.split(",")
    ]
    truth = ClusterTruth("t", dict(TRUTH))
    ev = evaluate_corpus(lambda: iter(DOCS), truth, configs, th, mode="estimates")
    assert (ev.form, ev.mode, ev.judged_by) == ("clusters", "estimates", "pairs")
    assert ev.duplicates == 3 * 3 + 2 * 6  # three triples, two quadruples (with a quote)
    full = ev.methods[0]
    assert (full.config.verify, full.config.measure) == (True, "containment")
    low = full.rows[0]
    assert low.scores.precision == 1.0  # the random texts share nothing
    assert low.scores.recall == 1.0  # containment finds the quotes too
    assert ev.methods[3].config.params == (("threshold", 0.5),)  # bands for the lowest t
    by_name = {m.method: m for m in ev.methods}
    assert by_name["bottomn"].config.measure == "resemblance"  # cannot estimate containment
    assert not by_name["bottomn"].config.verify
    assert by_name["simhash"].rows[-1].hamming == 0
    assert all(r.found == r.scores.predicted for m in ev.methods for r in m.rows)
    assert all(m.run_count == 1 for m in ev.methods)
    assert ev.as_dict()["mode"] == "estimates"


def test_evaluate_corpus_with_cluster_truth_as_dedup():
    th = _thresholds()
    configs = [method_config(m, DEFAULT_TEXT, "containment", th) for m in ALL.split(",")]
    ev = evaluate_corpus(lambda: iter(DOCS), ClusterTruth("t", dict(TRUTH)), configs, th)
    assert (ev.mode, ev.judged_by) == ("dedup", "clusters")
    by_name = {m.method: m for m in ev.methods}
    for m in ev.methods:  # every method verified exactly in the measure asked for
        assert (m.config.verify, m.config.measure) == (True, "containment")
        assert all(r.hamming is None and r.scores is r.clusters for r in m.rows)
    assert by_name["minhash"].config.params == ()  # bands follow t, as in dedup
    assert by_name["minhash"].run_count == len(th)  # one run per distinct banding
    assert by_name["full"].run_count == by_name["bottomn"].run_count == 1
    low = by_name["full"].rows[0]
    assert low.scores == PairScores(ev.duplicates, ev.duplicates, ev.duplicates)
    assert ev.as_dict()["methods"][3]["runs"] == len(th)


def test_inline_pairs_are_compared_alone():
    base = " ".join(_words(40))
    truth = PairTruth(
        "p",
        [base, base, "kalo mi ren tas", " ".join(_words(40))],
        [base.upper(), " ".join(_words(40)), "kalo mi ren tas vu", " ".join(_words(40))],
        np.array([1, 0, 1, 0], dtype=bool),
        np.array([1, 2, 3, 4]),
    )
    th = (0.5, 1.0)
    ev = evaluate_pairs(truth, [method_config("full", DEFAULT_TEXT, "containment", th)], th)
    assert ev.form == "inline pairs"
    assert ev.ids[:2] == ["line 1 a", "line 1 b"]
    low, high = ev.methods[0].rows
    # 1: identical after canonicalization; 3: "ka lo mi ren tas" contained in the longer one
    assert low.scores == PairScores(2, 2, 2)
    assert high.scores == PairScores(2, 2, 2)
    # the same text in pairs 1 and 2 never pairs across pairs
    assert set(zip(*ev.methods[0].found_pairs(0.5), strict=True)) == {(0, 1), (4, 5)}


def test_pairs_given_by_id_are_judged_on_the_corpus(tmp_path, files):
    corpus, _ = files
    path = tmp_path / "pairs.jsonl"
    labelled = [("d0", "d0e", 1), ("d1q", "d1", 1), ("d2", "d3", 1), ("d4", "d4x", 0)]
    path.write_text(
        "".join(json.dumps({"a": a, "b": b, "label": y}) + "\n" for a, b, y in labelled)
    )
    th = (0.5,)
    ev, fetch = evaluate_files(
        [str(corpus)], str(path), [method_config("full", DEFAULT_TEXT, "containment", th)], th
    )
    assert ev.form == "pairs"
    row = ev.methods[0].rows[0]
    # found: every pair of the corpus ≥ t; judged: the labelled ones the method finds
    assert row.found == 3 * 3 + 2 * 6
    assert row.scores == PairScores(2, 3, 3)  # d2-d3 missed, d4-d4x a false duplicate
    assert fetch({0, 1}) == {0: DOCS[0][1], 1: DOCS[1][1]}


# ---------------------------------------------------------------- evaluate = dedup


def _written_pairs(out):
    lines = (out / "pairs.jsonl").read_text().splitlines()
    return {(p["a"], p["b"]) for p in map(json.loads, lines)}


def _written_labels(out, ids):
    label = {doc_id: n for n, doc_id in enumerate(ids)}
    for line in (out / "clusters.jsonl").read_text().splitlines():
        members = json.loads(line)["ids"]
        label |= {doc_id: label[members[0]] for doc_id in members}
    return np.array([label[i] for i in ids])


@pytest.mark.parametrize(
    ("method", "params", "measure", "t"),
    [
        ("full", (), "containment", 0.6),
        ("minhash", (), "containment", 0.7),  # bands tuned to t, as dedup tunes them
        ("minhash", (), "resemblance", 0.9),
        ("minhash", (("threshold", 0.5),), "containment", 0.8),
        ("modm", (("m", 3),), "containment", 0.5),
        ("simhash", (), "resemblance", 0.9),
        ("bottomn", (), "containment", 0.8),
    ],
)
def test_evaluate_is_dedup(tmp_path, files, method, params, measure, t):
    """As dedup: the pairs found are dedup's pairs.jsonl, the clusters its clusters.jsonl."""
    corpus, truth = files
    user = DedupConfig(method=method, params=params, measure=measure, threshold=t)
    run_dedup(Inputs((str(corpus),)), tmp_path / "out", user)
    written = _written_pairs(tmp_path / "out")
    th = (0.5, 0.6, 0.7, 0.8, 0.9)
    judged = method_config(method, DEFAULT_TEXT, measure, th, dict(params))
    assert replace(judged, threshold=t) == user
    ev, _ = evaluate_files([str(corpus)], str(truth), [judged], th)
    me = ev.methods[0]
    left, right = me.found_pairs(t)
    assert {(ev.ids[a], ev.ids[b]) for a, b in zip(left, right, strict=True)} == written
    row = me.rows[th.index(t)]
    assert row.found == len(written) > 0
    assert row.scores == cluster_pair_scores(_written_labels(tmp_path / "out", ev.ids), ev.codes)


@pytest.mark.parametrize(
    ("method", "params", "measure", "verify", "t"),
    [
        ("full", (), "containment", True, 0.6),
        ("minhash", (("threshold", 0.5),), "resemblance", False, 0.7),
        ("modm", (("m", 3),), "containment", False, 0.5),
        ("simhash", (("threshold", 0.5),), "resemblance", False, 0.9),
    ],
)
def test_estimates_count_the_pairs_dedup_no_verify_outputs(
    tmp_path, files, method, params, measure, verify, t
):
    corpus, truth = files
    user = DedupConfig(method=method, params=params, measure=measure, verify=verify, threshold=t)
    run_dedup(Inputs((str(corpus),)), tmp_path / "out", user)
    written = _written_pairs(tmp_path / "out")
    th = (0.5, 0.6, 0.7, 0.8, 0.9)
    judged = method_config(method, DEFAULT_TEXT, measure, th, dict(params), mode="estimates")
    assert replace(judged, threshold=t) == user
    ev, _ = evaluate_files([str(corpus)], str(truth), [judged], th, mode="estimates")
    me = ev.methods[0]
    left, right = me.found_pairs(t)
    assert {(ev.ids[a], ev.ids[b]) for a, b in zip(left, right, strict=True)} == written
    assert me.rows[th.index(t)].found == len(written) > 0
    assert me.rows[th.index(t)].scores == me.rows[th.index(t)].pairs


def test_threshold_groups_follow_the_keys():
    th = (0.5, 0.6, 0.7, 0.8, 0.9)
    full = method_config("full", DEFAULT_TEXT, "containment", th)
    assert threshold_groups(full, th) == [list(th)]
    minhash = method_config("minhash", DEFAULT_TEXT, "containment", th)
    assert threshold_groups(minhash, th) == [[t] for t in th]
    fixed = method_config("minhash", DEFAULT_TEXT, "containment", th, {"threshold": 0.6})
    assert threshold_groups(fixed, th) == [list(th)]
    estimates = method_config("minhash", DEFAULT_TEXT, "containment", th, mode="estimates")
    assert threshold_groups(estimates, th) == [list(th)]
    assert (estimates.verify, estimates.measure) == (False, "resemblance")
    with pytest.raises(ConfigError, match="mode"):
        method_config("full", DEFAULT_TEXT, "containment", th, mode="nope")  # type: ignore[arg-type]


def test_inline_pairs_as_dedup_verify_exactly_among_candidates():
    base = " ".join(_words(60))
    words = base.split()
    quoted = " ".join(words[:30])  # contained whole in base; resemblance about 0.5
    truth = PairTruth(
        "p", [base, base], [quoted, " ".join(_words(60))], np.array([1, 0], dtype=bool),
        np.array([1, 2]),
    )  # fmt: skip
    th = (0.5, 0.9)
    dedup = [method_config("modm", DEFAULT_TEXT, "containment", th, {"m": 2})]
    ev = evaluate_pairs(truth, dedup, th)
    assert ev.mode == "dedup"
    assert [r.scores for r in ev.methods[0].rows] == [PairScores(1, 1, 1)] * 2  # exact: 1.0
    minhash = [method_config("minhash", DEFAULT_TEXT, "containment", th)]
    assert evaluate_pairs(truth, minhash, th).methods[0].run_count == 2


# ---------------------------------------------------------------- the command line


def test_cli_json_csv_and_report(tmp_path, files):
    corpus, truth = files
    csv_file, report = tmp_path / "rows.csv", tmp_path / "report.html"
    result = run(
        "evaluate", corpus, "--truth", truth, "--json", "--csv", csv_file, "--report", report,
        "--param", "modm:m=5",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["form"] == "clusters"
    assert [m["method"] for m in data["methods"]] == ALL.split(",")
    assert data["methods"][1]["params"] == {"m": 5}
    assert (data["mode"], data["judged_by"]) == ("dedup", "clusters")
    assert "--verify" in data["methods"][1]["dedup_args"]
    row = data["methods"][0]["rows"][0]
    for key in ("found", "true_positives", "precision", "recall", "f1", "type_i_percent", "ari"):
        assert key in row
    assert row["precision"] == row["cluster_precision"]
    assert "hamming_max" not in data["methods"][5]["rows"][0]  # verified: no distance
    rows = csv_file.read_text().splitlines()
    assert len(rows) == 1 + 7 * 6
    assert rows[0].startswith("method,mode,measure,verify,params,seconds,threshold,judged_by")
    old = json.loads(run("evaluate", corpus, "--truth", truth, "--json", "--estimates").stdout)
    assert (old["mode"], old["judged_by"]) == ("estimates", "pairs")
    assert "--no-verify" in old["methods"][1]["dedup_args"]
    assert old["methods"][5]["rows"][0]["hamming_max"] == 32
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page
    assert "<mark>" in page
    assert "http" not in page
    assert "<script" not in page
    assert "<link" not in page
    assert "Pairs found with score ≥ t" in page
    assert "Texts as written" in page  # originals, shared passages mapped back
    assert "<th>Best F1</th>" in page  # a reader's labels


def test_cli_table_and_inline_pairs_without_input(tmp_path):
    path = tmp_path / "pairs.jsonl"
    text = " ".join(_words(30))
    records = [
        {"a": text, "b": text, "label": 1},
        {"a": text, "b": " ".join(_words(30)), "label": 0},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run("evaluate", "--truth", path, "--methods", "full,simhash", "--thresholds", "0.5,1")
    assert result.exit_code == 0, result.output
    assert "type I %" in result.stdout
    assert "scored as dedup" in result.stdout
    assert "d ≤" not in result.stdout
    args = ("evaluate", "--truth", path, "--methods", "full,simhash", "--thresholds", "0.5,1")
    assert "d ≤" in run(*args, "--estimates").stdout
    data = json.loads(run("evaluate", "--truth", path, "--methods", "full", "--json").stdout)
    assert data["form"] == "inline pairs"
    assert data["methods"][0]["rows"][-1]["precision"] == 1.0
    bad = CliRunner().invoke(cli, ["evaluate", "--truth", str(path), "--methods", "nope"])
    assert bad.exit_code == 2
    assert "nope" in bad.output
    bad = CliRunner().invoke(cli, ["evaluate", "--truth", str(path), "--param", "m=3"])
    assert bad.exit_code == 2
    assert "METHOD:NAME=VALUE" in bad.output


def test_calibrate_writes_a_config_dedup_accepts(tmp_path, files):
    corpus, truth = files
    config = tmp_path / "best.json"
    result = run(
        "calibrate", corpus, "--truth", truth, "--methods", "full,minhash", "--units", "word",
        "--sizes", "2,3", "--thresholds", "0.4:1.0:0.2", "--out", config,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "why: highest F1" in result.stdout
    assert "runner-up" in result.stdout
    written = json.loads(config.read_text())
    # both methods reach F1 1 here; calibrate breaks such a tie by measured speed
    assert written["method"] in {"full", "minhash"}
    assert written["calibration"]["scores"]["f1"] == 1.0
    chosen = read_config(config)
    out = tmp_path / "out"
    assert run("dedup", corpus, "--out", out, "--config", config).exit_code == 0
    params = json.loads((out / "summary.json").read_text())["parameters"]
    assert (params["method"], params["threshold"]) == (written["method"], chosen.threshold)
    assert params["shingles"]["size"] == chosen.text.shingle.size
    assert (
        run("dedup", corpus, "--out", out, "--config", config, "--threshold", "0.95").exit_code == 0
    )
    assert json.loads((out / "summary.json").read_text())["parameters"]["threshold"] == 0.95
    assert run("dedup", corpus, "--out", out, "--config", config, "--size", "4").exit_code == 0
    params = json.loads((out / "summary.json").read_text())["parameters"]
    assert (params["threshold"], params["shingles"]["size"]) == (chosen.threshold, 4)


def test_config_files_and_merging(tmp_path):
    text = TextConfig(CanonConfig(stem=True), ShingleConfig(unit="word", size=5))
    base = DedupConfig(text, "minhash", (("threshold", 0.7),), threshold=0.8, verify=False)
    path = tmp_path / "c.json"
    write_config(path, base, {"reason": "test"})
    assert read_config(path) == base
    given = DedupConfig(threshold=0.6, params=(("num_perm", 64),))
    merged = merge_config(base, given, {"threshold", "params"})
    assert (merged.method, merged.threshold) == ("minhash", 0.6)
    assert dict(merged.params) == {"threshold": 0.7, "num_perm": 64}
    assert merged.text == text
    other = merge_config(base, DedupConfig(method="full"), {"method", "text.shingle.size"})
    assert (other.method, other.params, other.text.shingle.size) == ("full", (), 3)
    assert (other.text.shingle.unit, other.text.canon.stem) == ("word", True)
    canon = merge_config(base, DedupConfig(), {"text.canon"}).text.canon
    assert canon == DEFAULT_TEXT.canon
    toml = tmp_path / "c.toml"
    toml.write_text('method = "modm"\nthreshold = 0.5\n[params]\nm = 5\n[text.shingle]\nsize = 2\n')
    assert read_config(toml).text.shingle.size == 2
    for bad, message in (
        ({"nope": 1}, "unknown setting"),
        ({"method": "zzz"}, "zzz"),
        ({"params": {"q": 1}}, "no parameter"),
        ({"text": {"shingle": {"size": 0}}}, "size"),
    ):
        with pytest.raises(ConfigError, match=message):
            config_from_dict(bad, "c.json")


def _evaluation(rows_by_method):
    methods = [
        MethodEvaluation(replace(DedupConfig(), method=name), rows, 1.0, _pairs([], [], []), [])
        for name, rows in rows_by_method.items()
    ]
    return Evaluation("t", "clusters", [], (0.5, 0.9), methods, 10)


def test_objectives_choose_and_explain():
    ev = _evaluation(
        {
            "full": [Row(0.5, 10, PairScores(8, 10, 10)), Row(0.9, 5, PairScores(5, 5, 10))],
            "modm": [Row(0.5, 9, PairScores(7, 9, 10)), Row(0.9, 2, PairScores(2, 2, 10))],
        }
    )
    best = choose(ev, Objective.parse("f1"))
    assert isinstance(best, Calibration)
    assert (best.winner.config.method, best.winner.config.threshold) == ("full", 0.5)
    assert best.runner_up.config.method == "modm"
    assert "highest F1 (0.8000) vs 0.7368" in best.reason()
    precise = choose(ev, Objective.parse("precision@recall=0.5"))
    assert (precise.winner.config.threshold, precise.met) == (0.9, True)
    hopeless = choose(ev, Objective.parse("recall@precision=1"))
    assert hopeless.winner.row.scores.recall == 0.5
    unreachable = choose(ev, Objective.parse("precision@recall=0.95"))
    assert not unreachable.met
    assert "no setting reaches recall ≥ 0.95" in unreachable.reason()
    for bad in ("f2", "precision@recall", "recall@precision=2"):
        with pytest.raises(ConfigError, match="objective"):
            Objective.parse(bad)
    grid = grid_configs(DEFAULT_TEXT, ["modm", "minhash"], ["word"], [2, 3], "containment", (0.5,))
    assert len(grid) == 2 * (2 + 3)


@pytest.mark.parametrize("template_df", [0, 2, 10])
@pytest.mark.parametrize("method", ["full", "minhash", "simhash"])
def test_inline_pair_scores_are_a_two_document_dedup(method, template_df):
    base = _words(60)
    near = list(base)
    near[5:15] = _words(10)
    a = [" ".join(base), " ".join(base), " ".join(base[:30]), " ".join(_words(40))]
    b = [" ".join(near), " ".join(base + _words(50)), " ".join(base), " ".join(_words(40))]
    config = replace(method_config(method, DEFAULT_TEXT, "containment", (0.5,)), threshold=0.5)
    config = replace(config, template_df=template_df)
    pairs, _ = score_text_pairs(a, b, config)
    got = dict(zip(pairs.left.tolist(), pairs.score.tolist(), strict=True))
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        alone = score_candidates([("a", x), ("b", y)], config).pairs
        want = alone.score.tolist()  # [] when the two share no key
        assert ([got[2 * i]] if 2 * i in got else []) == pytest.approx(want)
