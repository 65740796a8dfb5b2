"""Verification: the exact measures of a pair, and scoring only the candidates a run can
keep (the same answer as scoring them all)."""

import numpy as np
import pytest

import textgen
from neardup.dedup import DedupConfig, decide, deduplicate, score_candidates, scoring
from neardup.dedup.scoring import pair_measures


def test_pair_measures_from_shared_and_own_counts():
    shared, left, right = np.array([3, 0, 4]), np.array([4, 0, 4]), np.array([6, 5, 4])
    resemblance, c_lr, c_rl = pair_measures(shared, left, right)
    assert resemblance.tolist() == [3 / 7, 0.0, 1.0]
    assert c_lr.tolist() == [0.75, 0.0, 1.0]  # an empty side: 0, not NaN
    assert c_rl.tolist() == [0.5, 0.0, 1.0]


@pytest.mark.parametrize("threshold", [0.6, 0.9])
def test_scoring_only_keepable_candidates_changes_nothing(threshold):
    """A run scores only the candidates that can be kept (``keep_all=False``, counted in
    chunks): the same pairs, clusters, keepers and candidate count as scoring them all —
    on texts that share a footer (templates), partial copies and edited copies."""
    footer = textgen.text(999, 40)
    bodies = [textgen.text(seed, 30 + seed % 50) for seed in range(60)]
    texts = [f"{b} {footer}" for b in bodies]
    texts += [textgen.edit(t, s, 4 + s % 12) for s, t in enumerate(texts[:20])]  # 0.5 … 0.9
    texts += [" ".join(t.split()[: len(t.split()) * 2 // 3]) for t in texts[20:40]]
    items = [(str(i), t) for i, t in enumerate(texts)]
    config = DedupConfig(threshold=threshold, template_df=5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scoring, "_CHUNK_PAIRS", 7)  # many chunks
        fast = deduplicate(items, config)
    with score_candidates(items, config) as scored:
        full = decide(scored, config)
    assert fast.candidates == full.candidates > len(fast.pairs) > 0
    assert fast.template_shingles == full.template_shingles > 0
    for name in ("left", "right", "score", "score_lr", "containment_lr"):
        assert np.array_equal(getattr(fast.pairs, name), getattr(full.pairs, name))
    assert np.array_equal(fast.keep_of, full.keep_of)
    assert np.array_equal(fast.labels, full.labels)
