"""How many verification groups the Spark engine cuts the candidate pairs into (pure math).

Verification ships each group the fingerprint sets of the documents its pairs hold, once
(:func:`neardup.engines.spark.spark_dedup._verified`): fewer groups ship fewer copies of each
set, but a
group's sets must fit in the Python worker that verifies it, and there should be a group
for every core. Pairs go to groups by their left document, so a document is needed in its
own group (when it is the left side of a pair) and in its left partners' groups: with
``k`` such *draws* among ``g`` groups it is in ``g·(1 − (1 − 1/g)^k)`` of them on average.
Summed over documents, from the histogram of their draws, that is the number of sets a
group holds — a measured distribution, not a guess at the corpus (on a corpus of many
copies a document's partners crowd into a few clusters; on prose most documents have one).
"""

from __future__ import annotations

import re

import numpy as np

COPIES = 4  # a group's sets held at once while gathered (Arrow rows, NumPy, slices)
WORKER_MEMORY = 2 << 30  # a Python worker's budget when spark.executor.pyspark.memory is unset
_UNITS = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def worker_memory(pyspark_memory: str | None, executor_cores: str | None) -> int:
    """Bytes a Python worker may use: ``spark.executor.pyspark.memory`` (a JVM size, MiB
    without a unit) shared by the executor's cores (``spark.executor.cores``), as Spark
    shares it; :data:`WORKER_MEMORY` when unset."""
    if not pyspark_memory:
        return WORKER_MEMORY
    match = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)b?\s*", pyspark_memory.lower())
    if match is None:
        raise ValueError(f"not a memory size: {pyspark_memory!r}")
    cores = max(int(executor_cores or 1), 1)
    return int(match[1]) * _UNITS[match[2]] // cores


def group_sets(draws: np.ndarray, documents: np.ndarray, groups: int) -> float:
    """Expected sets a group holds: ``documents[i]`` documents with ``draws[i]`` draws
    each, among ``groups`` groups (module docstring)."""
    miss = (1.0 - 1.0 / groups) ** np.asarray(draws, dtype=np.float64)
    return float(np.sum(np.asarray(documents, dtype=np.float64) * (1.0 - miss)))


def verification_groups(
    draws: np.ndarray,
    documents: np.ndarray,
    set_bytes: float,
    worker_bytes: int,
    slots: int,
    candidates: int,
) -> int:
    """The fewest groups, at least ``slots`` (the cores), whose sets (``set_bytes`` on
    average, :data:`COPIES` times) fit in ``worker_bytes`` — at most one a pair."""
    most = max(int(candidates), 1)
    least = min(max(int(slots), 1), most)

    def fits(groups: int) -> bool:
        return COPIES * set_bytes * group_sets(draws, documents, groups) <= worker_bytes

    if fits(least):
        return least
    low, high = least, most  # fits(high) or high is the last resort: one pair a group
    while high - low > 1:  # the sets a group holds fall as the groups grow
        mid = (low + high) // 2
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high
