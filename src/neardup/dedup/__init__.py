"""Deduplicate a corpus: candidates, verification, clusters, the run on files and its report.

``core`` holds the pure flow (fingerprints → keys → candidates → verified pairs → clusters),
``config`` what a run is asked and answers, ``scoring`` the verification, ``keepers`` who is
kept; their public names are re-exported here (``from neardup.dedup import DedupConfig``).
``pipeline`` (files in, every output written) and ``report`` are imported by their callers.
"""

from neardup.dedup.config import (
    DEFAULT_MEASURE,
    DEFAULT_METHOD,
    DEFAULT_TEXT,
    DEFAULT_THRESHOLD,
    MEASURES,
    DedupConfig,
    DedupResult,
    Measure,
    Pairs,
)
from neardup.dedup.core import Scored, decide, deduplicate, score_candidates
from neardup.dedup.scoring import score_pairs

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
