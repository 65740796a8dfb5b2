"""Verification of candidate pairs: their exact measures on all shingles and on content
shingles (shared templates discounted), or the method's own estimate with ``--no-verify``;
and the filter that scores only the candidates a run can keep."""

from __future__ import annotations

import numpy as np

from neardup.dedup.candidates import Candidates
from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.copies import Copies, per_distinct_pair
from neardup.dedup.templates import (
    content_counts,
    directional_scores,
    group_representatives,
    template_shingles,
)
from neardup.errors import ConfigError
from neardup.fingerprints.intersect_kernels import share_at_least, shared_counts
from neardup.methods.base import Method, Signatures
from neardup.util.arrays import unique

_CHUNK_PAIRS = 1 << 22  # candidate pairs counted at a time (a few arrays of 32 MiB)


def keepable(
    candidates: Candidates,
    values: np.ndarray,
    offsets: np.ndarray,
    config: DedupConfig,
    copies: Copies | None = None,
) -> Candidates:
    """The candidates whose plain containment reaches ``least_keepable`` in one direction
    (the others are below the threshold in any measure, with or without templates, and
    group no near copies: :func:`needs_content_score`), in chunks; each pair's merge walk
    stops once its answer is certain (most candidates share little), and is walked once
    per distinct pair of sets (``copies``)."""
    left, right, least = candidates.left, candidates.right, config.least_keepable
    kept_left, kept_right = [], []
    for start in range(0, left.size, _CHUNK_PAIRS):
        lo, hi = left[start : start + _CHUNK_PAIRS], right[start : start + _CHUNK_PAIRS]
        keep = per_distinct_pair(  # the larger containment
            lambda a, b: share_at_least(values, offsets, a, b, least), lo, hi, copies
        )
        kept_left.append(lo[keep])
        kept_right.append(hi[keep])
    empty = np.empty(0, dtype=np.int64)
    return Candidates(
        np.concatenate(kept_left) if kept_left else empty,
        np.concatenate(kept_right) if kept_right else empty,
        candidates.capped_buckets,
        candidates.counts,
    )


def score_pairs(
    candidates: Candidates,
    values: np.ndarray,
    offsets: np.ndarray,
    method: Method,
    signatures: Signatures | None,
    config: DedupConfig,
    template: np.ndarray | None = None,
    copies: Copies | None = None,
) -> tuple[Pairs, np.ndarray]:
    """Measures of every candidate pair, and the template shingles discounted.

    Exact (content shingles, :mod:`neardup.dedup.templates`), or the method's own estimate
    as the score when ``signatures`` are given (``--no-verify``: no discount). ``template``
    given: those shingles are discounted (found earlier for a larger set of pairs).
    ``copies``: documents of identical sets, whose pairs are counted once.
    """
    left, right = candidates.left, candidates.right
    shared = per_distinct_pair(
        lambda a, b: shared_counts(values, offsets, a, b), left, right, copies
    )
    size_l = offsets[left + 1] - offsets[left]
    size_r = offsets[right + 1] - offsets[right]
    resemblance, c_lr, c_rl = pair_measures(shared, size_l, size_r)
    known = template
    template = np.empty(0, dtype=np.uint64) if known is None else known
    if signatures is not None:
        s_lr, s_rl = _estimates(method, signatures, left, right, config)
    else:  # plain scores; with templates, rescored on content where it can matter
        s_lr, s_rl = plain_scores(config.measure, resemblance, c_lr, c_rl)
        if config.template_df and left.size:
            near = np.flatnonzero(needs_content_score(config, c_lr, c_rl))
            if known is None:
                holders = group_representatives(offsets.size - 1, left, right, c_lr, c_rl)
                template = _template_of(
                    values, offsets, left[near], right[near], holders, config, candidates.counts
                )
            content = content_counts(
                values, offsets, left[near], right[near], shared[near], template, copies
            )
            s_lr[near], s_rl[near] = directional_scores(
                shared[near], size_l[near], size_r[near], content, config.measure
            )
    pairs = Pairs(left, right, np.maximum(s_lr, s_rl), s_lr, s_rl, resemblance, c_lr, c_rl)
    return pairs, template


def pair_measures(
    shared: np.ndarray, size_l: np.ndarray, size_r: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(resemblance, containment of left in right, of right in left)`` of pairs from their
    shared and own shingle counts (0.0 where a side is empty)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        resemblance = np.nan_to_num(shared / (size_l + size_r - shared))
        c_lr = np.nan_to_num(shared / size_l)
        c_rl = np.nan_to_num(shared / size_r)
    return resemblance, c_lr, c_rl


def plain_scores(
    measure: str, resemblance: np.ndarray, c_lr: np.ndarray, c_rl: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The run's measure both ways on all shingles (new arrays, rescored later in place)."""
    if measure == "resemblance":
        return resemblance.copy(), resemblance.copy()
    return c_lr.copy(), c_rl.copy()


def needs_content_score(config: DedupConfig, c_lr: np.ndarray, c_rl: np.ndarray) -> np.ndarray:
    """Pairs rescored on content shingles: only those sharing ``least_keepable`` of one side
    plainly can be kept; the others keep their plain scores, below the threshold either way."""
    return np.maximum(c_lr, c_rl) >= config.least_keepable


def _template_of(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    holders: np.ndarray,
    config: DedupConfig,
    counts: np.ndarray | None = None,
) -> np.ndarray:
    """The template shingles (held by ``template_df`` of ``holders``) among the pairs'
    documents (``counts``: the candidate stage's estimate per entry, if it made one)."""
    if not left.size:
        return np.empty(0, dtype=np.uint64)
    wanted = unique(np.concatenate((left, right)))
    return template_shingles(values, offsets, holders, config.template_df, wanted, counts)


def _estimates(
    method: Method, sigs: Signatures, left: np.ndarray, right: np.ndarray, config: DedupConfig
) -> tuple[np.ndarray, np.ndarray]:
    """The method's own estimate as a similarity in [0, 1], both ways (``--no-verify``)."""
    if config.measure == "containment":
        contained = getattr(method, "containment_pairs", None)
        if contained is None:
            raise ConfigError(
                f"method {method.name!r} cannot estimate containment; verify exactly "
                "(drop --no-verify) or use --measure resemblance"
            )
        return contained(sigs, left, right), contained(sigs, right, left)
    raw = method.score_pairs(sigs, left, right)
    score = 1.0 - raw / 64.0 if method.estimate == "hamming" else raw
    return score, score
