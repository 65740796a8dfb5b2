"""The Spark engine's batch stages without Spark: grouping across batches, and the claim the
per-component decisions rest on (decisions over any union of whole components, in the same
relative order, equal the decisions over all documents)."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.cluster import KeepPolicy, connected_components, preference_rank
from neardup.dedup.core import DedupConfig, Pairs, keep_decisions
from neardup.engines.batches import flat_lists, grouped, list_array


@settings(deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 7))
def test_grouped_never_splits_a_group(keys, size):
    keys = sorted(keys)
    batch = pa.RecordBatch.from_pydict({"g": pa.array(keys, pa.int64())})
    pieces = [batch.slice(i, size) for i in range(0, len(keys), size)]
    seen = [t.column("g").to_pylist() for t in grouped(iter(pieces), "g")]
    assert [k for t in seen for k in t] == keys
    assert all(seen)  # no empty table
    for a, b in itertools.pairwise(seen):
        assert a[-1] != b[0]  # a group lies in one table only


def test_lists_round_trip_through_arrow_as_int64():
    values = np.array([1, 2**63 + 5, 2**64 - 1, 7], dtype=np.uint64)
    offsets = np.array([0, 3, 3, 4])
    column = list_array(values, offsets)
    assert column.type == pa.list_(pa.int64())
    back, back_offsets = flat_lists(column.slice(1))
    assert back.tolist() == [7]
    assert back_offsets.tolist() == [0, 0, 1]


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 40))
    m = draw(st.integers(0, 3 * n))
    left = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    right = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    pairs = sorted({(min(a, b), max(a, b)) for a, b in zip(left, right, strict=True) if a != b})
    scores = draw(
        st.lists(
            st.tuples(
                st.sampled_from([0.5, 0.65, 0.7, 0.8, 0.9, 1.0]),
                st.sampled_from([0.5, 0.65, 0.7, 0.8, 0.9, 1.0]),
            ),
            min_size=len(pairs),
            max_size=len(pairs),
        )
    )
    lengths = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    return n, pairs, scores, np.array(lengths)


def _pairs(pairs, scores):
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    s_lr = np.array([s for s, _ in scores], dtype=np.float64)
    s_rl = np.array([s for _, s in scores], dtype=np.float64)
    score = np.maximum(s_lr, s_rl)
    return Pairs(left, right, score, s_lr, s_rl, score, s_lr, s_rl)


@settings(max_examples=150, deadline=None)
@given(graphs(), st.sampled_from(["first", "longest"]), st.booleans())
def test_keep_decisions_per_component_equal_the_global_ones(graph, keep, chain):
    n, pairs, scores, lengths = graph
    config = DedupConfig(keep=KeepPolicy.parse(keep), chain=chain)
    everything = _pairs(pairs, scores)
    rank = preference_rank(config.keep, n, np.arange(n), lengths)
    keep_of, labels, keepers = keep_decisions(n, everything, rank, config)
    comps = connected_components(n, everything.left, everything.right)
    for comp in np.unique(comps):
        docs = np.flatnonzero(comps == comp)  # sorted: the same relative order
        mine = [k for k, (a, _) in enumerate(pairs) if comps[a] == comp]
        local = [
            (int(np.searchsorted(docs, pairs[k][0])), int(np.searchsorted(docs, pairs[k][1])))
            for k in mine
        ]
        part = _pairs(local, [scores[k] for k in mine]) if mine else _pairs([], [])
        sub_rank = preference_rank(config.keep, docs.size, docs, lengths[docs])
        k_of, lab, kps = keep_decisions(docs.size, part, sub_rank, config)
        assert docs[k_of].tolist() == keep_of[docs].tolist()
        assert docs[lab].tolist() == labels[docs].tolist()
        assert docs[kps[lab]].tolist() == keepers[labels[docs]].tolist()
