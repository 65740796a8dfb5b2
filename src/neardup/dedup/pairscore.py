"""One pair scored as a dedup run scores its candidates, outside a run (compare, explain).

A run's content score discounts the shingles its corpus holds as templates; two texts alone
have no corpus, so alone they are scored with no template (their content is all their
shingles) unless a run's template fingerprints are given (``OUT/templates.npy``). The scores
are :func:`neardup.dedup.scoring.score_pairs`' own, so they follow the run's rules exactly;
a run that did not verify (``--no-verify``) is scored exactly here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from neardup.dedup.candidates import Candidates
from neardup.dedup.config import DedupConfig
from neardup.dedup.scoring import score_pairs
from neardup.fingerprints.shingles import FingerprintBatch

NO_TEMPLATE = np.empty(0, dtype=np.uint64)


@dataclass(frozen=True, slots=True)
class PairScores:
    """A pair's measures as a run records them (``pairs.jsonl``): plain and as scored."""

    score_a_in_b: float  # the run's measure of A's content in B (templates discounted)
    score_b_in_a: float
    resemblance: float  # plain, on all shingles
    containment_a_in_b: float
    containment_b_in_a: float

    @property
    def score(self) -> float:
        return max(self.score_a_in_b, self.score_b_in_a)


def score_alone(
    prints: FingerprintBatch, config: DedupConfig, template: np.ndarray | None = None
) -> PairScores:
    """The measures of documents 0 and 1 of ``prints`` (made with ``config.text``), with
    ``template`` (sorted fingerprints; None: none) discounted as the run would."""
    exact = config if config.verify else dataclasses.replace(config, verify=True)
    pair = Candidates(np.array([0], dtype=np.int64), np.array([1], dtype=np.int64), 0)
    known = NO_TEMPLATE if template is None else np.asarray(template, dtype=np.uint64)
    pairs, _ = score_pairs(
        pair, prints.values, prints.offsets, exact.build_method(), None, exact, known
    )
    return PairScores(
        float(pairs.score_lr[0]),
        float(pairs.score_rl[0]),
        float(pairs.resemblance[0]),
        float(pairs.containment_lr[0]),
        float(pairs.containment_rl[0]),
    )
