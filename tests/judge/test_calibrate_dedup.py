"""calibrate promises what dedup delivers: run ``neardup calibrate``, then ``neardup dedup
--config`` with the file it wrote, and score dedup's clusters.jsonl against the truth."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from clirun import run
from neardup.judge.evaluate import PairScores, cluster_pair_scores
from textgen import edit, text


def _corpus() -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Originals with copies edited lightly to heavily, quoted whole, and unrelated short texts
    (some under one long footer): every method misses some duplicates or joins some
    unrelated texts, and its estimate differs from the exact measure."""
    docs, truth = [], {}
    for i in range(24):
        base = text(1000 + i, 120)
        group = [(f"d{i}", base)]
        for k, changes in enumerate((4, 12, 24, 40)[: 1 + i % 4]):
            group.append((f"d{i}e{k}", edit(base, 5000 + 10 * i + k, changes)))
        if i % 5 == 0:
            group.append((f"d{i}q", " ".join([text(9000 + i, 60), base, text(9500 + i, 40)])))
        docs += group
        truth |= {doc_id: f"c{i}" for doc_id, _ in group}
    footer = text(30000, 40)
    for j in range(20):
        body = text(20000 + j, 30 if j < 8 else 80)
        docs.append((f"u{j}", f"{body} {footer}" if j < 8 else body))
        truth[f"u{j}"] = f"u{j}"
    return docs, truth


def _write(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    docs, truth = _corpus()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    truth_file = tmp_path / "truth.jsonl.gz"
    with gzip.open(truth_file, "wt") as fh:
        fh.writelines(json.dumps({"id": i, "cluster": c}) + "\n" for i, c in truth.items())
    return corpus, truth_file, truth


def dedup_cluster_scores(out: Path, truth: dict[str, str]) -> PairScores:
    """Pair precision / recall of dedup's clusters.jsonl (documents in no cluster: alone)."""
    ids = list(truth)
    label = {doc_id: n for n, doc_id in enumerate(ids)}
    for line in (out / "clusters.jsonl").read_text().splitlines():
        members = json.loads(line)["ids"]
        for doc_id in members:
            label[doc_id] = label[members[0]]
    predicted = np.array([label[i] for i in ids])
    return cluster_pair_scores(predicted, np.array([truth[i] for i in ids]))


@pytest.mark.parametrize(
    ("methods", "objective", "extra"),
    [
        ("minhash", "f1", ()),
        ("minhash,simhash,bottomn", "recall@precision=0.9", ()),
        ("full,modm,megashingle", "precision@recall=0.6", ("--measure", "resemblance")),
    ],
)
def test_dedup_with_the_calibrated_config_gets_the_calibrated_figure(
    tmp_path, methods, objective, extra
):
    corpus, truth_file, truth = _write(tmp_path)
    config = tmp_path / "best.json"
    result = run(
        "calibrate", str(corpus), "--truth", str(truth_file), "--methods", methods,
        "--objective", objective, "--units", "word", "--sizes", "2,3",
        "--thresholds", "0.4:0.9:0.1", "--out", str(config), "--json", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    promised = json.loads(result.stdout)
    assert promised["mode"] == "dedup"
    assert promised["scores"]["judged_by"] == "clusters"
    out = tmp_path / "out"
    assert run("dedup", str(corpus), "--out", str(out), "--config", str(config)).exit_code == 0
    got = dedup_cluster_scores(out, truth)
    for measure in ("precision", "recall", "f1"):
        assert getattr(got, measure) == pytest.approx(promised["scores"][measure], abs=0.005)
    assert 0 < got.recall < 1  # a figure that could have been missed


def test_evaluate_figure_is_dedups_for_minhash_at_each_threshold(tmp_path):
    """The issue's case: evaluate --methods minhash vs dedup --method minhash --threshold t."""
    corpus, truth_file, truth = _write(tmp_path)
    result = run(
        "evaluate", str(corpus), "--truth", str(truth_file), "--methods", "minhash",
        "--thresholds", "0.5:0.9:0.2", "--json",
    )  # fmt: skip
    rows = json.loads(result.stdout)["methods"][0]["rows"]
    estimates = run(
        "evaluate", str(corpus), "--truth", str(truth_file), "--methods", "minhash",
        "--thresholds", "0.5:0.9:0.2", "--json", "--estimates",
    )  # fmt: skip
    old = json.loads(estimates.stdout)
    assert old["mode"] == "estimates"
    assert old["methods"][0]["verify"] is False
    differs = False
    for row, old_row in zip(rows, old["methods"][0]["rows"], strict=True):
        out = tmp_path / f"out{row['threshold']}"
        args = ("--method", "minhash", "--threshold", str(row["threshold"]))
        assert run("dedup", str(corpus), "--out", str(out), *args).exit_code == 0
        got = dedup_cluster_scores(out, truth)
        assert (got.precision, got.recall) == pytest.approx(
            (row["precision"], row["recall"]), abs=1e-9
        )
        differs |= abs(old_row["recall"] - got.recall) > 0.005
    assert differs  # the estimates are another figure: the test can tell them apart
