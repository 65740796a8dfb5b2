"""Identity is kept: a document is removed only into a keeper that holds what makes it this
document — its rare content (names, holders, URLs, a reply's own words), not only the
licence, footer or signature it shares with others.

A shingle's *rarity weight* is ``1 / g²``, ``g`` being how many groups of near copies hold
it among the document and the documents it is paired with (its neighbours in the graph of
verified pairs: those that share much of it), the keeper's group not counted for a shingle
it holds: a shingle of this document and its keeper alone weighs 1, one of a licence text
that eight other files paired with it quote weighs 1/64. The
*identity* of ``d`` in ``k`` is the weight of the shingles of ``d`` that ``k`` holds over the
weight of all of ``d`` (a rarity-weighted containment, as SimHash's seeds weigh words by
TF-IDF). Where every shingle is as rare as the next (a question quoted in its answer, a text
and its rewrite) it equals the containment as written; where ``d`` is a shared licence
around a header of its own, the header decides.

Counted over the document's pairs only, so the local engine and the Spark engine (a batch
of whole components) give the same figures; pairs near-identical as written
(:data:`NEAR_IDENTICAL`) are not weighed: what differs is a year or a name.
"""

from __future__ import annotations

import numpy as np

from neardup._kernels import identity as _k
from neardup.arrays import pair_codes
from neardup.dedup.cluster import connected_components
from neardup.dedup.config import Pairs
from neardup.dedup.templates import NEAR_IDENTICAL, near_copies

POWER = 2.0  # a shingle held by g groups weighs 1 / g**POWER


def identity_scores(
    values: np.ndarray, offsets: np.ndarray, pairs: Pairs, guard: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(left in right, right in left)``: the identity of every pair's documents in each
    other, computed where it can stop a removal (score ≥ ``guard``, not near-identical as
    written); 1.0 elsewhere."""
    n = offsets.size - 1
    id_lr, id_rl = np.ones(len(pairs)), np.ones(len(pairs))
    ordinary = pairs.resemblance < NEAR_IDENTICAL
    need_lr = (pairs.score_lr >= guard) & ordinary
    need_rl = (pairs.score_rl >= guard) & ordinary
    if not (need_lr.any() or need_rl.any()):
        return id_lr, id_rl
    near = near_copies(pairs.containment_lr, pairs.containment_rl)
    group = connected_components(n, pairs.left[near], pairs.right[near])
    docs = np.unique(np.concatenate((pairs.left[need_lr], pairs.right[need_rl])))
    start, groups = holding_groups(values, offsets, docs, pairs, group)
    for need, held, holder, out in (
        (need_lr, pairs.left, pairs.right, id_lr),
        (need_rl, pairs.right, pairs.left, id_rl),
    ):
        h, k = held[need], holder[need]
        apart = group[h] != group[k]
        out[need] = _k.weighted_containment(POWER, values, offsets, h, k, apart, start, groups)
    return id_lr, id_rl


def holding_groups(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, pairs: Pairs, group: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(start, groups)``: for every shingle of ``docs`` (sorted, distinct document
    indices), how many groups of near copies hold it among the document's own and those of
    the documents it is paired with (each group by its first such neighbour); document
    ``d``'s counts are ``groups[start[d]:start[d] + size]``."""
    sizes = offsets[docs + 1] - offsets[docs]
    start = np.full(offsets.size - 1, -1, dtype=np.int64)
    start[docs] = np.cumsum(sizes) - sizes
    doc = np.concatenate((pairs.left, pairs.right))
    other = np.concatenate((pairs.right, pairs.left))
    keep = (start[doc] >= 0) & (group[other] != group[doc])
    doc, other = doc[keep], other[keep]
    # one neighbour of each other group, the smallest, in the order of docs
    order = np.lexsort((other, group[other], doc))
    doc, other = doc[order], other[order]
    _, first_of_group = np.unique(pair_codes(doc, group[other]), return_index=True)
    doc, other = doc[first_of_group], other[first_of_group]
    first = np.searchsorted(doc, docs, side="left")
    first = np.append(first, doc.size)
    counts = _k.neighbour_groups(values, offsets, docs, start, first, other)
    return start, counts
