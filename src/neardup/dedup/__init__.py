"""Deduplicate a corpus: candidates, verification, clusters, the run on files and its report.

``core`` holds the pure flow (fingerprints → keys → candidates → verified pairs → clusters);
its public names are re-exported here, so ``from neardup.dedup import DedupConfig`` works.
``pipeline`` (files in, every output written) and ``report`` are imported by their callers.
"""

from neardup.dedup.core import (
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_TEXT,
    DEFAULT_THRESHOLD,
    MEASURES,
    DedupConfig,
    DedupResult,
    Measure,
    Pairs,
    Scored,
    decide,
    deduplicate,
    score_candidates,
    score_pairs,
)

__all__ = [
    "DEFAULT_MEASURE",
    "DEFAULT_METHOD",
    "DEFAULT_TEXT",
    "DEFAULT_THRESHOLD",
    "MEASURES",
    "DedupConfig",
    "DedupResult",
    "Measure",
    "Pairs",
    "Scored",
    "decide",
    "deduplicate",
    "score_candidates",
    "score_pairs",
]
