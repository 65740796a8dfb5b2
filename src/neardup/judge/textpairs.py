"""Many text pairs, each compared on its own as a two-document dedup would compare it.

For labelled pair sets given with their texts: pair i is a candidate when its two texts share
an index key of the method (as in dedup, where a pair sharing no key is never compared), and
a candidate is scored exactly as :func:`~neardup.dedup.score_candidates` scores it (the same
scoring code: verified exactly, or by the method's estimate with ``verify=False``). Texts of
different pairs are never paired, so a sentence repeated across pairs cannot fill a key bucket,
and shared-template discounting sees only the pair's two texts, as a two-document dedup would
(no shingle reaches ``template_df`` ≥ 3 documents there). Methods that need collection
statistics (I-Match, tf-idf SimHash) are fitted on all texts of the set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from neardup.dedup import DedupConfig, Pairs
from neardup.dedup import score_pairs as score_candidate_pairs  # the very scoring dedup uses
from neardup.dedup.candidates import Candidates
from neardup.errors import weak_notes
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.methods.base import Method

_FIELDS = len(Pairs.__slots__)


def score_text_pairs(
    a: Sequence[str], b: Sequence[str], config: DedupConfig
) -> tuple[Pairs, list[str]]:
    """Scored candidate pairs among documents ``2i = a[i]``, ``2i + 1 = b[i]``, and the method's
    warnings about weak signatures."""
    if len(a) != len(b):
        raise ValueError("a and b must hold the same number of texts")
    texts = [text for pair in zip(a, b, strict=True) for text in pair]
    step = config.batch_size
    batches = [
        fingerprint_batch(texts[i : i + step], config.text) for i in range(0, len(texts), step)
    ]
    prints = concat_batches(batches)
    method = config.build_method()
    if hasattr(method, "fit") and getattr(method, "needs_idf", False):
        method.fit(batches)  # type: ignore[attr-defined]
    with weak_notes() as notes:
        signatures = method.sketch(prints)
    keys = method.keys(signatures)
    shared = pairs_sharing_key(keys.docs, keys.keys)
    sigs = None if config.verify else signatures
    if sigs is None and 0 < config.template_df <= 2:  # a template of 2 texts: each pair alone
        pairs = _each_alone(shared, prints, method, config)
    else:
        alone = replace(config, template_df=0)  # no shingle is in 3 of 2 documents
        candidates = Candidates(2 * shared, 2 * shared + 1, 0)
        pairs, _ = score_candidate_pairs(
            candidates, prints.values, prints.offsets, method, sigs, alone
        )
    return pairs, list(dict.fromkeys(notes))


def _each_alone(
    shared: np.ndarray,
    prints: FingerprintBatch,
    method: Method,
    config: DedupConfig,
) -> Pairs:
    """Pairs ``(2i, 2i + 1)`` for ``i`` in ``shared``, each verified as a run of its two texts."""
    one = Candidates(np.zeros(1, np.int64), np.ones(1, np.int64), 0)
    parts = []
    for i in shared.tolist():
        lo, hi = prints.offsets[2 * i], prints.offsets[2 * i + 2]
        offsets = prints.offsets[2 * i : 2 * i + 3] - lo
        pair, _ = score_candidate_pairs(one, prints.values[lo:hi], offsets, method, None, config)
        parts.append(pair)
    if not parts:
        return Pairs(*(np.zeros(0, dtype=np.int64),) * 2, *(np.zeros(0),) * (_FIELDS - 2))
    columns = [np.concatenate([getattr(p, f) for p in parts]) for f in Pairs.__slots__]
    columns[0], columns[1] = 2 * shared, 2 * shared + 1
    return Pairs(*columns)


def pairs_sharing_key(docs: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Pair numbers ``i`` whose documents ``2i`` and ``2i + 1`` share at least one key."""
    pair, side = docs // 2, docs % 2
    order = np.lexsort((side, keys, pair))
    p, k, s = pair[order], keys[order], side[order]
    both = (p[1:] == p[:-1]) & (k[1:] == k[:-1]) & (s[1:] != s[:-1])
    return np.unique(p[1:][both]).astype(np.int64)


def concat_batches(batches: Sequence[FingerprintBatch]) -> FingerprintBatch:
    """One batch of the documents of several, in order."""
    if not batches:
        return FingerprintBatch(
            np.empty(0, np.uint64), np.zeros(1, np.int64), np.empty(0, np.uint32)
        )
    offsets = [np.zeros(1, dtype=np.int64)]
    total = 0
    for batch in batches:
        offsets.append(np.asarray(batch.offsets[1:], dtype=np.int64) + total)
        total += int(batch.values.size)
    return FingerprintBatch(
        np.concatenate([b.values for b in batches]),
        np.concatenate(offsets),
        np.concatenate([b.counts for b in batches]),
    )


__all__ = ["concat_batches", "pairs_sharing_key", "score_text_pairs"]
