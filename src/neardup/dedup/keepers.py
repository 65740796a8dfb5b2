"""Who is kept: lossless keepers over the verified pairs (rounds that verify documents
against their neighbours' keepers), the clusters they make, and the pairs declined because
removal would lose content. Both engines (the Spark engine per connected component)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neardup.arrays import pair_codes
from neardup.dedup.cluster import (
    connected_components,
    keepers_by_rank,
    lossless_keepers,
    pairs_to_keepers,
    star_labels,
)
from neardup.dedup.config import DedupConfig, Pairs

# rounds of verifying the pairs that reach a group's final keeper (one is almost always enough)
KEEPER_ROUNDS = 6


def keep_decisions(
    n: int, pairs: Pairs, rank: np.ndarray, config: DedupConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(keep_of, labels, keepers)`` of ``n`` documents from the pairs reaching the
    threshold and each document's preference ``rank``.

    Decisions in one connected component of the pairs depend on that component only (its
    documents' relative ranks and its pairs), so the same function over any union of whole
    components, indexed in the same relative order, gives the same answer: the Spark engine
    applies it to batches of components.
    """
    keep_of = keeper_rounds(n, pairs, rank, config, None)[1]
    labels, keepers = cluster_labels(n, pairs, keep_of, rank, config.chain)
    return keep_of, labels, keepers


def keeper_rounds(
    n: int,
    pairs: Pairs,
    rank: np.ndarray,
    config: DedupConfig,
    verify: Callable[[np.ndarray, np.ndarray], Pairs] | None,
) -> tuple[Pairs, np.ndarray]:
    """``(pairs, keep_of)``: lossless keepers, then up to ``KEEPER_ROUNDS`` rounds that
    verify each document against the keepers of its neighbours (``verify``: exact scores of
    new pairs; None: no rounds) and decide again with the pairs reaching the threshold,
    until nothing is new. Both engines (the Spark engine per component)."""
    guard = config.removal_guard
    keep_of = lossless_keepers(
        n, pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, rank, guard
    )
    checked = np.empty(0, dtype=np.uint64)  # pairs verified in a round (kept or not)
    for _ in range(KEEPER_ROUNDS if verify is not None else 0):
        left, right = pairs_to_keepers(
            pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, keep_of, guard
        )
        code = pair_codes(left, right)
        fresh = ~np.isin(code, checked, kind="sort")
        if not fresh.any():
            break
        left, right, checked = left[fresh], right[fresh], np.concatenate((checked, code[fresh]))
        more = verify(left, right)
        pairs = pairs.joined(more.take(more.score >= config.threshold))
        keep_of = lossless_keepers(
            n, pairs.left, pairs.right, pairs.score_lr, pairs.score_rl, rank, guard
        )
    return pairs, keep_of


def cluster_labels(
    n: int, pairs: Pairs, keep_of: np.ndarray, rank: np.ndarray, chain: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, keepers)`` from the final keepers: the keepers' stars, or with ``chain``
    the connected components of the pairs, kept documents first by rank (both engines)."""
    if chain:
        labels = connected_components(n, pairs.left, pairs.right)
        kept_rank = np.where(keep_of == np.arange(n), rank, n + rank)  # kept documents first
        return labels, keepers_by_rank(labels, kept_rank)
    labels = star_labels(keep_of)
    keepers = np.full(n, -1, dtype=np.int64)
    keepers[labels] = keep_of[labels]
    return labels, keepers


def declined_pairs(pairs: Pairs, keep_of: np.ndarray, guard: float) -> int:
    """Pairs where one document is held by the other at ≥ ``guard`` yet stays kept, and not
    as the other's keeper: removing it there would have lost content held nowhere it goes."""
    kept = keep_of == np.arange(keep_of.size)
    left_declined = (
        (pairs.score_lr >= guard) & kept[pairs.left] & (keep_of[pairs.right] != pairs.left)
    )
    right_declined = (
        (pairs.score_rl >= guard) & kept[pairs.right] & (keep_of[pairs.left] != pairs.right)
    )
    return int(np.count_nonzero(left_declined | right_declined))
