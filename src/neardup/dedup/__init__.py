"""Deduplicate a corpus: candidates, verification, clusters, the run on files and its report.

``core`` holds the pure flow (fingerprints → keys → candidates → verified pairs → clusters),
``config`` what a run is asked and answers, ``scoring`` the verification, ``keepers`` who is
kept; their public names are re-exported here (``from neardup.dedup import DedupConfig``),
each module imported when one of its names is first asked for: ``defaults`` (the settings'
defaults) loads no kernels, so the command line can show them cheaply.
``pipeline`` (files in, every output written) and ``report`` are imported by their callers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neardup.dedup.config import DEFAULT_TEXT, DedupConfig, DedupResult, Pairs
    from neardup.dedup.core import Scored, decide, deduplicate, score_candidates
    from neardup.dedup.defaults import (
        DEFAULT_MEASURE,
        DEFAULT_METHOD,
        DEFAULT_THRESHOLD,
        MEASURES,
        Measure,
    )
    from neardup.dedup.scoring import score_pairs

_WHERE = {
    "DEFAULT_MEASURE": "defaults",
    "DEFAULT_METHOD": "defaults",
    "DEFAULT_TEXT": "config",
    "DEFAULT_THRESHOLD": "defaults",
    "MEASURES": "defaults",
    "DedupConfig": "config",
    "DedupResult": "config",
    "Measure": "defaults",
    "Pairs": "config",
    "Scored": "core",
    "decide": "core",
    "deduplicate": "core",
    "score_candidates": "core",
    "score_pairs": "scoring",
}

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


def __getattr__(name: str) -> Any:
    """A public name, from its module (imported on first use)."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
