"""The Spark engine's outputs worked out on the driver from the run's decisions and pairs
(``neardup.engines.spark.outcome``), checked against each output's definition written out
plainly here (no Spark needed: the end-to-end equality with the local engine is in
test_engine_spark.py)."""

import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.engines.spark.outcome import Outcome, cluster_table, counts, pair_table


@st.composite
def outcomes(draw) -> Outcome:
    """Documents in components (a label each: its smallest member), a keeper per component,
    some members removed into it, and verified pairs among the members, rows shuffled."""
    n = draw(st.integers(0, 40))
    labels = [draw(st.integers(0, i)) for i in range(n)]  # a member's label is ≤ its number
    docs = np.arange(n, dtype=np.int64) * 3 + 5  # document numbers with gaps
    label_of = np.array([docs[min(i for i in range(n) if labels[i] == lab)] for lab in labels])
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(int(label_of[i]), []).append(i)
    keeper_of = {lab: docs[draw(st.sampled_from(m))] for lab, m in members.items()}
    keeper = np.array([keeper_of[int(lab)] for lab in label_of], dtype=np.int64)
    removed = [draw(st.booleans()) and keeper[i] != docs[i] for i in range(n)]
    keep_of = np.where(removed, keeper, docs)
    pairs = []
    for group in members.values():
        for a in group:
            for b in group:
                if a < b and draw(st.booleans()):
                    s_lr, s_rl = (
                        draw(st.sampled_from([0.5, 0.8, 1.0])),
                        draw(st.sampled_from([0.5, 0.8])),
                    )
                    c_lr, c_rl = (
                        draw(st.sampled_from([0.9, 1.0])),
                        draw(st.sampled_from([0.9, 1.0])),
                    )
                    pairs.append((docs[a], docs[b], max(s_lr, s_rl), s_lr, s_rl, 0.5, c_lr, c_rl))
    order = draw(st.permutations(range(n)))
    decisions = pa.table(
        {
            "doc": docs[order] if n else docs,
            "keep_of": keep_of[order] if n else keep_of,
            "label": label_of[order] if n else docs,
            "keeper": keeper[order] if n else keeper,
            "declined": np.array([draw(st.integers(0, 2)) for _ in range(n)], dtype=np.int64),
            "id": pa.array([f"id{d}" for d in (docs[order] if n else docs)], pa.string()),
            "length": np.full(n, 10, dtype=np.int64),
        }
    )
    names = ("left", "right", "score", "s_lr", "s_rl", "resemblance", "c_lr", "c_rl")
    columns = list(zip(*pairs, strict=True)) if pairs else [[]] * len(names)
    table = pa.table(
        {
            name: pa.array(col, pa.int64() if name in ("left", "right") else pa.float64())
            for name, col in zip(names, columns, strict=True)
        }
    )
    return Outcome.of(
        decisions, table.take(pa.array(draw(st.permutations(range(len(pairs)))), pa.int64()))
    )


@settings(max_examples=60, deadline=None)
@given(outcomes())
def test_clusters_are_the_labels_of_two_or_more_numbered_by_first_member(outcome):
    decided = outcome.decisions.to_pylist()
    groups: dict[int, list[dict]] = {}
    for row in sorted(decided, key=lambda r: r["doc"]):
        groups.setdefault(row["label"], []).append(row)
    expected = [
        {"cluster": k, "ids": [r["id"] for r in g], "keep": f"id{g[0]['keeper']}"}
        for k, g in enumerate(g for _, g in sorted(groups.items()) if len(g) >= 2)
    ]
    assert cluster_table(outcome).to_pylist() == expected


@settings(max_examples=60, deadline=None)
@given(outcomes(), st.sampled_from([0.5, 0.8, 0.9]))
def test_pairs_by_ids_in_document_order_with_the_contained_direction(outcome, threshold):
    rows = sorted(outcome.pairs.to_pylist(), key=lambda p: (p["left"], p["right"]))
    got = pair_table(outcome, threshold).to_pylist()
    assert [(g["a"], g["b"]) for g in got] == [(f"id{p['left']}", f"id{p['right']}") for p in rows]
    for g, p in zip(got, rows, strict=True):
        assert (g["score_a_in_b"], g["score_b_in_a"]) == (p["s_lr"], p["s_rl"])
        assert (g["containment_a_in_b"], g["containment_b_in_a"]) == (p["c_lr"], p["c_rl"])
        reached = p["score"] >= threshold
        direction = (
            "a_in_b" if p["s_lr"] > p["s_rl"] else "b_in_a" if p["s_lr"] < p["s_rl"] else None
        )
        assert g["contained"] == (direction if reached else None)


@settings(max_examples=60, deadline=None)
@given(outcomes())
def test_counts_and_removals_weakest_first(outcome):
    decided = outcome.decisions.to_pylist()
    moved = [r for r in decided if r["keep_of"] != r["doc"]]
    sizes: dict[int, int] = {}
    for r in decided:
        sizes[r["label"]] = sizes.get(r["label"], 0) + 1
    assert counts(outcome) == {
        "removed": len(moved),
        "clusters": sum(n >= 2 for n in sizes.values()),
        "largest_cluster": max((n for n in sizes.values() if n >= 2), default=0),
        "verified_pairs": outcome.pairs.num_rows,
        "declined_pairs": sum(r["declined"] for r in decided),
    }
    held = {}
    for p in outcome.pairs.to_pylist():
        held[(p["left"], p["right"])] = (p["c_lr"], p["s_lr"])
        held[(p["right"], p["left"])] = (p["c_rl"], p["s_rl"])
    removals = outcome.removals()
    assert sorted((r.doc, r.keeper) for r in removals) == sorted(
        (r["doc"], r["keep_of"]) for r in moved
    )
    for r in removals:
        measures = held.get((r.doc, r.keeper), (math.nan, math.nan))
        assert np.allclose((r.containment, r.score), measures, equal_nan=True)
    keys = [(r.containment, r.score, r.doc) for r in removals]
    nan_last = [
        (math.inf if math.isnan(c) else c, math.inf if math.isnan(s) else s, d) for c, s, d in keys
    ]
    assert nan_last == sorted(nan_last)
