"""The stages of a dedup run, declared once: what both engines call, in this order.

=================  ==========================================================================
fingerprints       :func:`fingerprint_texts`: texts (UTF-8) → fingerprint sets, the method's
                   keys (unless they are the fingerprints) and the identity check's words
keys' order        :func:`prefix_rule` (the prefix filter a run needs), the count tables
                   (:func:`key_counts`, :func:`entry_counts`), :func:`document_prefixes` (each
                   document's prefix and hit prefix by them), the mark table of prefix keys
                   (:func:`mark_table`, :func:`mark_prefixes`, :func:`marked_entries`)
candidates         :func:`bucket_pairs`: the pairs of documents sharing a key, by buckets
                   (a whole corpus: :func:`corpus_candidates`)
verification       :func:`measure_pairs`: exact measures and plain scores of pairs
                   (a whole corpus, templates included: :func:`verify_corpus`)
templates          :func:`reaches_template` (which shingles are template),
                   :func:`content_scores` (scores with them discounted)
identity           :func:`identity_names` (a whole run: :func:`run_identity_names`)
keepers, clusters  :func:`decide_documents`: lossless keepers by rounds, clusters, declined;
                   :func:`connected_components` (of pairs: the groups of near copies)
=================  ==========================================================================

Every stage is a pure function of arrays over a batch of documents or pairs. The Spark
engine calls each on the documents or pairs of one partition or group
(:mod:`neardup.engines.spark.batches`). The local engine (:mod:`neardup.dedup.core`) calls
them on the whole corpus as one batch, in the same order, and takes the candidates and the
verification in their fused whole-corpus forms, built of the same kernels:
:func:`corpus_candidates` (the count tables, prefixes and buckets in one pass),
:func:`verify_corpus` (measures, templates and content scores) and
:func:`run_identity_names` (rare words counted over every document). An engine needs no
other name of :mod:`neardup.dedup` than these and the run's configuration
(:mod:`neardup.dedup.config`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neardup.dedup.candidates import (
    DEFAULT_HITS,
    Candidates,
    bucket_pairs,
    candidate_pairs,
    prefix_candidates,
)
from neardup.dedup.cluster import connected_components, preference_rank
from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.copies import Copies
from neardup.dedup.identity import LEAST_DOCUMENTS, RARE_GROUPS, Names, run_names
from neardup.dedup.keepers import cluster_labels, declined_pairs, keeper_rounds
from neardup.dedup.prefix import (
    MAX_COUNT,
    entry_counts,
    entry_prefix_flags,
    hit_flags,
    key_counts,
    listed_counts,
    mark_prefixes,
    mark_table,
    marked_entries,
    table_bits,
    tables_serve,
)
from neardup.dedup.scoring import (
    keepable,
    needs_content_score,
    pair_measures,
    plain_scores,
    score_pairs,
)
from neardup.dedup.templates import (
    NEAR_COPY,
    content_counts,
    directional_scores,
    near_copies,
    reaches_template,
)
from neardup.dedup.translation import function_words
from neardup.errors import weak_notes
from neardup.fingerprints.intersect_kernels import shared_counts
from neardup.fingerprints.repeats import distinct_spans, first_copies, first_copies_of
from neardup.fingerprints.shingles import (
    FingerprintBatch,
    fingerprint_batch,
    fingerprint_utf8,
    fingerprints_and_words,
)
from neardup.methods.base import Keys, Method, Signatures
from neardup.text.canon import split_texts
from neardup.util.arrays import gather_segments

__all__ = [
    "DEFAULT_HITS",
    "LEAST_DOCUMENTS",
    "MAX_COUNT",
    "RARE_GROUPS",
    "Candidates",
    "Decided",
    "Fingerprinted",
    "Measured",
    "Names",
    "PrefixRule",
    "bucket_pairs",
    "connected_components",
    "content_scores",
    "corpus_candidates",
    "decide_documents",
    "document_prefixes",
    "entry_counts",
    "fingerprint_texts",
    "identity_names",
    "key_counts",
    "listed_counts",
    "mark_prefixes",
    "mark_table",
    "marked_entries",
    "measure_pairs",
    "prefix_rule",
    "reaches_template",
    "run_identity_names",
    "table_bits",
    "tables_serve",
    "verify_corpus",
]

Utf8 = tuple[
    np.ndarray, np.ndarray, np.ndarray
]  # bytes, starts, ends: text d is [starts[d], ends[d])
Sets = tuple[np.ndarray, np.ndarray]  # values and offsets of per-document sorted sets


# ── fingerprints ─────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, eq=False)
class Fingerprinted:
    """A batch's fingerprint sets, its keys (None when not asked), the weak-signature notes
    made while keying, and each text's word list (None when not asked)."""

    prints: FingerprintBatch
    keys: Keys | None
    weak: list[str]
    words: Sets | None


def fingerprint_texts(
    utf8: Utf8 | None,
    config: DedupConfig,
    method: Method | None = None,
    words: bool = False,
    texts: list[str] | None = None,
) -> Fingerprinted:
    """Canonicalize, shingle and fingerprint a batch of texts (``utf8``, or the strings
    ``texts`` when there are no bytes), with ``method`` their index keys, with ``words``
    their word lists for the identity check (:mod:`neardup.fingerprints.word_kernels`, in
    the same pass). A text repeated in the batch is fingerprinted once
    (:mod:`neardup.fingerprints.repeats`)."""
    first = first_copies(*utf8) if utf8 is not None else first_copies_of(texts or [])
    if first is None:
        prints, word_sets = _fingerprint_sets(utf8, config, words, texts)
    else:
        distinct, source = distinct_spans(first)
        text_of = None if texts is None else [texts[d] for d in distinct.tolist()]
        utf8_of = None if utf8 is None else (utf8[0], utf8[1][distinct], utf8[2][distinct])
        prints, word_sets = _fingerprint_sets(utf8_of, config, words, text_of)
        gather, offsets = gather_segments(prints.offsets, source)
        prints = FingerprintBatch(gather(prints.values), offsets, gather(prints.counts))
        if word_sets is not None:
            gather, offsets = gather_segments(word_sets[1], source)
            word_sets = (gather(word_sets[0]), offsets)
    keys = None
    with weak_notes() as weak:
        if method is not None:
            keys = method.batch_keys(prints)
    return Fingerprinted(prints, keys, list(weak), word_sets)


def _fingerprint_sets(
    utf8: Utf8 | None, config: DedupConfig, words: bool, texts: list[str] | None
) -> tuple[FingerprintBatch, Sets | None]:
    """The fingerprint sets of :func:`fingerprint_texts`, with ``words`` the word lists."""
    word_sets = None
    if words:
        spans = utf8 if utf8 is not None else split_texts(texts or [])
        prints, word_sets = fingerprints_and_words(*spans, config.text, texts)
    elif utf8 is not None:
        prints = fingerprint_utf8(*utf8, config.text)
    else:
        prints = fingerprint_batch(texts or [], config.text)
    return prints, word_sets


# ── the keys' order: the prefix filter ───────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """The prefix filter of a run's candidates (:mod:`neardup.dedup.candidates`): pairs
    holding ≥ ``score`` of a side's keys are found (``frequent`` > 0: a document whose
    prefix reaches keys counted that often takes the one for ``fallback``); with ``least``
    > 0 the keys counted ≤ ``low`` pair by counted hits. ``score`` 0: no filter."""

    score: float = 0.0
    frequent: int = 0
    fallback: float = 0.0
    least: float = 0.0
    low: int = 0

    @property
    def limit(self) -> int:
        """``frequent`` as a count the tables can hold (beyond ``MAX_COUNT``: none)."""
        return min(self.frequent, MAX_COUNT) if self.frequent > 0 else MAX_COUNT + 1


def prefix_rule(config: DedupConfig) -> PrefixRule:
    """The prefix filter of the full index (keys = shingles) so that no pair that can still
    be kept is lost; other methods' keys are not shingles (no filter).

    Kept pairs hold ≥ ``least_keepable`` of one side as written (a score on content is never
    above the plain one, so no frequent keys need a fallback); with templates, the pairs
    that group near copies for the template count (``NEAR_COPY`` both ways) must be found
    too. Keys counted ≤ ``max_bucket`` (never saturated, never in a capped bucket) pair by
    counted hits.
    """
    if config.method != "full" or not config.verify:
        return PrefixRule()
    least = config.least_keepable
    if config.template_df:
        least = min(least, NEAR_COPY)
    low = min(config.max_bucket, MAX_COUNT - 1) if least > 0.0 else 0
    return PrefixRule(least, 0, least, least, low)


def document_prefixes(
    offsets: np.ndarray, keys: np.ndarray, count: np.ndarray, rule: PrefixRule
) -> tuple[np.ndarray, np.ndarray]:
    """``(flags, need)``: per entry (document ``d``'s distinct keys are
    ``keys[offsets[d]:offsets[d+1]]``, each counted ``count`` ≤ ``MAX_COUNT``), is it in its
    document's prefix — for keys counted ≤ ``low``, in its hit prefix —; per document, how
    many shared keys counted ≤ ``low`` a pair needs (1 without counted hits)."""
    limit = rule.limit
    flags = entry_prefix_flags(offsets, keys, count, rule.score, limit, rule.fallback)
    if rule.least > 0.0:
        hit, need = hit_flags(
            offsets, keys, count, rule.least, DEFAULT_HITS, rule.low, rule.score, limit
        )
        np.copyto(flags, hit, where=count <= rule.low)
    else:
        need = np.ones(offsets.size - 1, dtype=np.int64)
    return flags, need


def corpus_candidates(
    keys: tuple[np.ndarray, np.ndarray] | None,
    sets: Sets,
    config: DedupConfig,
    rule: PrefixRule,
    copies: Copies | None = None,
) -> Candidates:
    """The candidate pairs of a whole corpus in one pass (the local engine): of the method's
    ``keys`` (``(docs, keys)``), or with None of the fingerprint ``sets`` themselves (the full
    index), by ``rule``: the count tables, prefixes and :func:`bucket_pairs` fused.
    ``copies``: the documents of identical sets, counted once by the full index."""
    filters = rule.score, rule.frequent, rule.fallback, rule.least
    if keys is None:
        values, offsets = sets
        first = None if copies is None else copies.first
        return prefix_candidates(offsets, values, config.max_bucket, *filters, first=first)
    return candidate_pairs(*keys, config.max_bucket, *filters)


# ── verification and templates ───────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, eq=False)
class Measured:
    """Per pair: shared shingles, resemblance, containments both ways, the run's plain
    scores both ways, whether it is rescored on content, whether it joins near copies."""

    shared: np.ndarray
    resemblance: np.ndarray
    c_lr: np.ndarray
    c_rl: np.ndarray
    s_lr: np.ndarray
    s_rl: np.ndarray
    rescore: np.ndarray
    near_copy: np.ndarray


def measure_pairs(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    config: DedupConfig,
) -> Measured:
    """Exact measures of the pairs ``left[i], right[i]`` of the sets
    ``values[offsets[d]:offsets[d+1]]`` (before templates are discounted)."""
    shared = shared_counts(values, offsets, left, right)
    sizes = np.diff(offsets)
    resemblance, c_lr, c_rl = pair_measures(shared, sizes[left], sizes[right])
    s_lr, s_rl = plain_scores(config.measure, resemblance, c_lr, c_rl)
    return Measured(
        shared,
        resemblance,
        c_lr,
        c_rl,
        s_lr,
        s_rl,
        needs_content_score(config, c_lr, c_rl),
        near_copies(c_lr, c_rl),
    )


def content_scores(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    shared: np.ndarray,
    template: np.ndarray,
    config: DedupConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs' scores both ways with the ``template`` shingles discounted (``shared``:
    their plain shared counts)."""
    sizes = np.diff(offsets)
    content = content_counts(values, offsets, left, right, shared, template)
    return directional_scores(shared, sizes[left], sizes[right], content, config.measure)


def verify_corpus(
    candidates: Candidates,
    sets: Sets,
    method: Method | None,
    signatures: Signatures | None,
    config: DedupConfig,
    keep_all: bool = True,
    template: np.ndarray | None = None,
    copies: Copies | None = None,
) -> tuple[Pairs, np.ndarray]:
    """``(pairs, template)``: a whole corpus's candidate pairs verified (the local engine) —
    :func:`measure_pairs`, :func:`reaches_template` and :func:`content_scores` fused — or
    their signatures' estimates when the run does not verify; ``keep_all=False``: only the
    candidates that can still be kept at the threshold. ``template``: the shingles already
    found to be template (scoring more pairs as the run scored its own); ``copies``: the
    documents of identical sets, whose pairs are walked once."""
    values, offsets = sets
    if not keep_all and signatures is None:
        candidates = keepable(candidates, values, offsets, config, copies)
    return score_pairs(  # type: ignore[arg-type]
        candidates, values, offsets, method, signatures, config, template, copies
    )


# ── keepers and clusters ─────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True, eq=False)
class Decided:
    """The pairs after the keeper rounds (those given first, then the rounds' new ones),
    each document's keeper, cluster label and the label's keeper, the pairs declined."""

    pairs: Pairs
    keep_of: np.ndarray
    labels: np.ndarray
    keepers: np.ndarray
    declined: int


def decide_documents(
    n: int,
    pairs: Pairs,
    lengths: np.ndarray,
    config: DedupConfig,
    order: np.ndarray | None = None,
    field_values: np.ndarray | None = None,
    sets: Sets | None = None,
    template: np.ndarray | None = None,
    names: Names | None = None,
    verify: Callable[[np.ndarray, np.ndarray], Pairs] | None = None,
) -> Decided:
    """Who is kept among ``n`` documents (``order``: their input positions, increasing;
    ``lengths``, ``field_values``: what the keep policy ranks), given the pairs at the
    threshold: lossless keepers, rounds that verify documents against their neighbours'
    keepers (by ``verify``, else exactly from ``sets`` with the ``template`` shingles
    discounted), clusters. The decisions of a connected component of the pairs depend on
    it alone, so any union of whole components gives the same answer."""
    rank = preference_rank(
        config.keep, n, np.arange(n) if order is None else order, lengths, field_values
    )
    if verify is None and sets is not None:
        values, offsets = sets

        def verify(left: np.ndarray, right: np.ndarray) -> Pairs:
            more = Candidates(left, right, 0)
            return score_pairs(more, values, offsets, None, None, config, template)[0]  # type: ignore[arg-type]

    found, keep_of = keeper_rounds(n, pairs, rank, config, verify, names)
    labels, keepers = cluster_labels(n, found, keep_of, rank, config.chain)
    declined = declined_pairs(found, keep_of, config.removal_guard)
    return Decided(found, keep_of, labels, keepers, declined)


def identity_names(
    words: np.ndarray,
    word_offsets: np.ndarray,
    rare: np.ndarray,
    rare_offsets: np.ndarray,
    config: DedupConfig,
) -> Names:
    """The identity check's :class:`Names` of documents whose words and rare words are
    known (the function words of the run's text settings tell translations)."""
    return Names(words, word_offsets, rare, rare_offsets, function_words(config.text))


def run_identity_names(
    words: Sets, n: int, verified: Pairs, pairs: Pairs, config: DedupConfig
) -> Names:
    """The identity check's :class:`Names` of a whole run (the local engine): rare words
    counted over every document's ``words`` by groups of near copies among the ``verified``
    pairs (as the template step's), for the documents of ``pairs``."""
    near = near_copies(verified.containment_lr, verified.containment_rl)
    group = connected_components(n, verified.left[near], verified.right[near])
    known = function_words(config.text) if len(pairs) else None  # none to tell apart
    return run_names(*words, group, pairs, known)
