"""Who is kept: lossless keepers over the verified pairs (rounds that verify documents
against their neighbours' keepers), the clusters they make, and the pairs declined because
removal would lose content. Both engines (the Spark engine per connected component).

A **hub** — a document holding documents of ``HUB_GROUPS`` or more distinct groups (texts
that do not hold each other: a licence bundle, a digest, an anthology, a whole-book page) —
absorbs none of them: each is its own text, and the hub's other contents are not theirs.
Its own copies (documents it holds and that hold it) still go into it.
Whether a document is a hub depends on its pairs only, so it is the same in every engine.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neardup.dedup.cluster import (
    connected_components,
    keepers_by_rank,
    lossless_keepers,
    pairs_to_keepers,
    star_labels,
)
from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.identity import Names, identity_scores
from neardup.util.arrays import pair_codes, unique

# rounds of verifying the pairs that reach a group's final keeper (one is almost always enough)
KEEPER_ROUNDS = 6
# a document holding documents of this many distinct texts is a hub
HUB_GROUPS = 3


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
    names: Names | None = None,
) -> tuple[Pairs, np.ndarray]:
    """``(pairs, keep_of)``: lossless keepers, then up to ``KEEPER_ROUNDS`` rounds that
    verify each document against the keepers of its neighbours (``verify``: exact scores of
    new pairs; None: no rounds) and decide again with the pairs reaching the threshold,
    until nothing is new. ``names`` given, a document is not removed into a keeper that
    does not name it (:mod:`neardup.dedup.identity`). Both engines (the Spark engine per
    component)."""
    guard = config.removal_guard
    named = _identity(names, pairs, guard)
    scores = removal_scores(n, pairs, guard, named)
    keep_of = _keepers(n, pairs, scores, rank, guard)
    checked = np.empty(0, dtype=np.uint64)  # pairs verified in a round (kept or not)
    for _ in range(KEEPER_ROUNDS if verify is not None else 0):
        left, right = pairs_to_keepers(pairs.left, pairs.right, *scores, keep_of, guard)
        code = pair_codes(left, right)
        fresh = ~np.isin(code, checked, kind="sort")
        if not fresh.any():
            break
        left, right, checked = left[fresh], right[fresh], np.concatenate((checked, code[fresh]))
        more = verify(left, right)
        more = more.take(more.score >= config.threshold)
        pairs = pairs.joined(more)
        if named is not None:  # the pairs before keep theirs: only the new ones are named
            new = _identity(names, more, guard)
            assert new is not None
            named = (np.concatenate((named[0], new[0])), np.concatenate((named[1], new[1])))
        scores = removal_scores(n, pairs, guard, named)
        keep_of = _keepers(n, pairs, scores, rank, guard)
    return pairs, keep_of


def _identity(
    names: Names | None, pairs: Pairs, guard: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """The identity check's scores of the pairs (:func:`identity_scores`); None without
    names."""
    return None if names is None else identity_scores(names, pairs, guard)


def _keepers(
    n: int,
    pairs: Pairs,
    scores: tuple[np.ndarray, np.ndarray],
    rank: np.ndarray,
    guard: float,
) -> np.ndarray:
    """Lossless keepers by the removal ``scores``, the container found as written."""
    held = (pairs.containment_lr, pairs.containment_rl)
    return lossless_keepers(n, pairs.left, pairs.right, *scores, rank, guard, held=held)


def removal_scores(
    n: int,
    pairs: Pairs,
    guard: float,
    named: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(left in right, right in left)``: the pairs' scores for removal — their scores,
    and 0 where the holder does not name the held document (``named``: the pairs'
    :func:`~neardup.dedup.identity.identity_scores`) or is a hub and the held document
    not its copy (:func:`mutual`)."""
    s_lr, s_rl = pairs.score_lr, pairs.score_rl
    if named is not None:
        s_lr, s_rl = np.minimum(s_lr, named[0]), np.minimum(s_rl, named[1])
    alike = mutual(pairs, guard)
    hubs = _groups_held(n, pairs, guard, alike) >= HUB_GROUPS
    s_lr = np.where(hubs[pairs.right] & ~alike, 0.0, s_lr)
    s_rl = np.where(hubs[pairs.left] & ~alike, 0.0, s_rl)
    return s_lr, s_rl


def hub_documents(n: int, pairs: Pairs, guard: float) -> np.ndarray:
    """Per document: True when it holds (score ≥ ``guard``) documents of ``HUB_GROUPS`` or
    more distinct texts (:func:`groups_held`)."""
    return groups_held(n, pairs, guard) >= HUB_GROUPS


def mutual(pairs: Pairs, guard: float) -> np.ndarray:
    """Pairs whose documents hold each other at ``guard`` as written, both ways."""
    return np.minimum(pairs.containment_lr, pairs.containment_rl) >= guard


def groups_held(n: int, pairs: Pairs, guard: float) -> np.ndarray:
    """Per document: how many distinct groups it holds at ``guard`` (score), a group being
    documents that hold each other at the guard as written (copies of one text, whatever
    their sites' boilerplate), its own such copies not counted."""
    return _groups_held(n, pairs, guard, mutual(pairs, guard))


def _groups_held(n: int, pairs: Pairs, guard: float, alike: np.ndarray) -> np.ndarray:
    group = connected_components(n, pairs.left[alike], pairs.right[alike])
    lr = (pairs.score_lr >= guard) & ~alike  # left held by right
    rl = (pairs.score_rl >= guard) & ~alike
    holder = np.concatenate((pairs.right[lr], pairs.left[rl]))
    held = np.concatenate((pairs.left[lr], pairs.right[rl]))
    distinct = unique(pair_codes(holder, group[held]))
    return np.bincount((distinct >> np.uint64(32)).astype(np.int64), minlength=n)


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
    as the other's keeper: removing it there would have lost content held nowhere it goes
    (or put it into a hub)."""
    kept = keep_of == np.arange(keep_of.size)
    s_lr, s_rl = pairs.score_lr, pairs.score_rl
    left_declined = (s_lr >= guard) & kept[pairs.left] & (keep_of[pairs.right] != pairs.left)
    right_declined = (s_rl >= guard) & kept[pairs.right] & (keep_of[pairs.left] != pairs.right)
    return int(np.count_nonzero(left_declined | right_declined))
