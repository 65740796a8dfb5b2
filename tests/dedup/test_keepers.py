"""Who is kept: lossless keepers and their clusters, decided per connected component as the
Spark engine does (decisions over any union of whole components, in the same relative order,
equal the decisions over all documents)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.cluster import KeepPolicy, connected_components, preference_rank
from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.keepers import declined_pairs, keep_decisions


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


def test_a_pair_is_declined_where_removal_would_lose_content():
    # 0 is held by 1 and 1 by 2 (0.9 each): with 1 removed into 2, 0 stays kept (its content
    # is not in 2), and its pair with 1 is declined
    pairs = _pairs([(0, 1), (1, 2)], [(0.9, 0.3), (0.9, 0.3)])
    keep_of = np.array([0, 2, 2])
    assert declined_pairs(pairs, keep_of, 0.8) == 1
    assert declined_pairs(pairs, np.array([1, 1, 2]), 0.8) == 1  # 1 kept: its pair with 2 declined
    assert declined_pairs(pairs, np.arange(3), 0.95) == 0  # nothing reaches the guard
