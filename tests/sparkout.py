"""The outputs of ``neardup dedup --engine spark`` (directories of part files) beside the
local engine's (one file each): the same records, pairs, clusters and counts."""

from __future__ import annotations

import json
from pathlib import Path


def spark_lines(directory: Path) -> list[str]:
    """The lines of a Spark output directory's part files."""
    return [
        line
        for part in sorted(directory.glob("part-*"))
        for line in part.read_text(encoding="utf-8").splitlines()
    ]


def _local_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def assert_same_outputs(local: Path, spark: Path) -> dict:
    """The kept and removed records byte for byte, the clusters, the pairs and the summary's
    counts of a local run in ``local`` and a Spark run in ``spark``; the local summary."""
    for name in ("kept", "removed"):
        wanted = _local_lines(local / f"{name}.jsonl")
        assert sorted(spark_lines(spark / name)) == sorted(wanted), name
    clusters = [json.loads(x) for x in spark_lines(spark / "clusters")]
    wanted_clusters = [json.loads(x) for x in _local_lines(local / "clusters.jsonl")]
    assert sorted(clusters, key=lambda c: c["cluster"]) == wanted_clusters
    pairs = {(p["a"], p["b"]): p for p in map(json.loads, spark_lines(spark / "pairs"))}
    wanted_pairs = {
        (p["a"], p["b"]): p for p in map(json.loads, _local_lines(local / "pairs.jsonl"))
    }
    assert pairs == wanted_pairs
    summary = json.loads((spark / "summary.json").read_text())
    local_summary = json.loads((local / "summary.json").read_text())
    counts = ("documents", "kept", "removed", "clusters", "largest_cluster", "verified_pairs")
    counts += ("candidate_pairs", "declined_pairs", "empty_documents", "bad_records")
    counts += ("bad_examples",)
    for key in counts:
        assert summary[key] == local_summary[key], key
    return local_summary
