"""Shared templates are not content: shingles held by many different documents are discounted.

List footers, signatures, newsletter mastheads, HTML-mail disclaimers and site navigation put
the same shingles into many documents that otherwise share nothing; counted as content they
make a two-line reply a "duplicate" of every other reply on the list. So, per run:

1. **Copies count once.** Documents holding ≥ ``NEAR_COPY`` of each other both ways (plain
   containment) are one group (connected components), so a spam campaign of 80 copies, or
   an article syndicated on 500 sites with up to ~30 % of each page the site's own, is one
   holder of its shingles. Issues of a newsletter whose template is under ``NEAR_COPY`` of
   each issue stay apart, so their template is found; a short reply that is mostly a list
   footer is held by a long message but does not hold it, so it never joins it.
2. **Template shingles** are those held by ``min_df`` or more groups (``HAN_DF`` times that
   for a shingle of a Han clause, flagged in its fingerprint: two characters are a word),
   counted exactly for the fingerprints of the documents being scored: those that are a
   group's holder count for themselves, the other holders are looked through once behind a
   bit filter of those fingerprints (only the hot ones, by the candidate stage's counts or a
   count sketch, when they are most of the corpus).
3. **Content** of a document is its shingles that are not template shingles; pair scores are
   measured on content (:func:`content_counts`). A document made of template shingles only
   (a footer alone) has no content to protect and is judged on all its shingles. The
   discount only ever lowers a score (templates may keep a document, never remove one):
   a document is removed only where its keeper holds at least the guard of it as written.
   A pair near-identical as written (resemblance ≥ ``NEAR_IDENTICAL``) whose content is
   alike too (≥ ``NEAR_IDENTICAL_CONTENT``) keeps its plain scores, so copies that differ
   in a year or a name are found however much of them is a shared licence; two short
   replies of a thread, alike as written through the list's footer and the thread's
   subject but by other senders, are not. A content score is measured against at least
   ``MIN_CONTENT`` shingles (never more than the document has, and not when all its content
   is shared): a "+1" reply whose own words
   are its date and the thread's subject shares most of them with every other reply of the
   thread on that day.

Pure functions over the flat fingerprint arrays of a run (``values``, ``offsets``), so the
same steps run on one machine, over a collection's counts, and per partition on Spark.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numba
import numpy as np

from neardup.dedup import template_kernels as _k
from neardup.dedup.cluster import connected_components
from neardup.dedup.copies import Copies, per_distinct_pair
from neardup.fingerprints.shingles import is_han
from neardup.util.arrays import unique, unique_counts

NEAR_COPY = 0.7  # plain containment both ways from which two documents are one group
NEAR_IDENTICAL = 0.9  # plain resemblance from which a pair is scored as written …
NEAR_IDENTICAL_CONTENT = 0.5  # … when their content (templates aside) is this alike too
MIN_CONTENT = 15  # a content score is measured against at least this many shingles
HAN_DF = 4  # a Han shingle is template when held by this many times ``min_df`` groups
_MIN_BITS, _MAX_BITS = 12, 26  # count-sketch slots: 4 Ki … 64 Mi (128 MiB of uint16)
_MAX_EXACT_KEYS = 1 << 23  # fingerprints gathered with repeats and counted (~300 MiB at most)


def group_representatives(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    containment_lr: np.ndarray,
    containment_rl: np.ndarray,
) -> np.ndarray:
    """One document (the smallest index) of every group of near copies, sorted: connected
    components of the pairs that hold ≥ ``NEAR_COPY`` of each other both ways (plain)."""
    near = near_copies(containment_lr, containment_rl)
    labels = connected_components(n, left[near], right[near])
    return np.flatnonzero(labels == np.arange(n))


def near_copies(containment_lr: np.ndarray, containment_rl: np.ndarray) -> np.ndarray:
    """Pairs that are near copies (one holder of their shingles): ≥ ``NEAR_COPY`` both ways."""
    return np.minimum(containment_lr, containment_rl) >= NEAR_COPY


def template_shingles(
    values: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    min_df: int,
    wanted: np.ndarray | None = None,
    counts: np.ndarray | None = None,
) -> np.ndarray:
    """Sorted fingerprints held by at least ``min_df`` of ``docs`` (each doc a sorted set).

    With ``wanted`` (documents), only their fingerprints are looked at, counted exactly
    (:func:`neardup.dedup.template_kernels.held_at_least`): a wanted document among ``docs`` counts
    for itself, the others are looked through once for them. When the wanted fingerprints
    are many, only those a count sketch of all documents puts at ``min_df`` or more are
    counted (the rest cannot be template), gathered without repeats. Without ``wanted``,
    the sketch's hot fingerprints of all documents are counted by a sort. ``counts`` (one
    per entry of ``values``, never below how many documents hold it, e.g. the candidate
    stage's estimates) replaces the sketch, and the exact count looks up only the entries
    it puts at ``min_df`` or more.
    """
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    total = int((offsets[docs + 1] - offsets[docs]).sum()) if docs.size else 0
    if min_df < 2 or total == 0:
        return np.empty(0, dtype=np.uint64)
    hot = _Hot(values, offsets, docs, total, min_df, counts)
    if wanted is not None:
        wanted = np.ascontiguousarray(wanted, np.int64)
        if counts is None and hot.wanted_total(wanted) <= _MAX_EXACT_KEYS:
            return _held_by_wanted(values, offsets, docs, wanted, min_df)
        # only what the counts put at min_df can be (not gathered all: 1 GB at 1 M), and
        # without repeats (not gathered with them: 100 M+ at 1 M)
        keys = hot.keys_of(wanted)
        return _counted_exactly(values, offsets, keys, _NONE, docs, min_df, hot.entry_counts)
    distinct, held = unique_counts(hot.values_of(docs))
    return distinct[reaches_template(distinct, held, min_df)]


_NONE = np.empty(0, dtype=np.uint8)  # no per-entry flags or counts


class _Hot:
    """The fingerprints that may be held by ``min_df`` documents: by the given per-entry
    ``counts``, or by a count sketch of ``docs`` (made on first use, once)."""

    def __init__(
        self,
        values: np.ndarray,
        offsets: np.ndarray,
        docs: np.ndarray,
        total: int,
        min_df: int,
        counts: np.ndarray | None,
    ) -> None:
        self.values, self.offsets, self.docs, self.total = values, offsets, docs, total
        self.counts, self.bits = counts, 0
        self.least = min(min_df, 255 if counts is not None else 65535)  # counters saturate
        self.entry_counts = _NONE if counts is None else counts  # per entry, or none

    def wanted_total(self, wanted: np.ndarray) -> int:
        return int((self.offsets[wanted + 1] - self.offsets[wanted]).sum())

    def _sketch(self) -> None:
        if self.counts is None:
            self.bits = _sketch_bits(self.total)
            self.counts = _k.slot_counts(
                self.values, self.offsets, self.docs, self.bits, numba.get_num_threads()
            )

    def keys_of(self, docs: np.ndarray) -> np.ndarray:
        """The distinct hot fingerprints of ``docs`` (one pass through a hash table)."""
        self._sketch()
        args = (self.values, self.offsets, docs, self.counts, self.bits, self.least)
        bits = max(self.wanted_total(docs).bit_length() - 4, _MIN_BITS)  # grown when full
        while True:
            keys, complete = _k.hot_table(*args, bits)
            if complete:
                return keys
            bits += 2

    def values_of(self, docs: np.ndarray) -> np.ndarray:
        """Every hot fingerprint of ``docs``, with repeats."""
        self._sketch()
        return _k.hot_values(self.values, self.offsets, docs, self.counts, self.bits, self.least)


def reaches_template(keys: np.ndarray, held: np.ndarray, min_df: int) -> np.ndarray:
    """Which fingerprints, held by ``held`` groups, are template (:func:`template_bar`)."""
    return held >= template_bar(keys, min_df)


def template_bar(keys: np.ndarray, min_df: int) -> np.ndarray:
    """How many groups make each fingerprint template: ``min_df``, or ``HAN_DF`` times that
    for a shingle of Han characters alone (:func:`neardup.fingerprints.shingles.is_han`): two
    Han characters are about one word, and a common word is in many unrelated documents."""
    return np.where(is_han(keys), HAN_DF * min_df, min_df)


def _sketch_bits(total: int) -> int:
    """Count-sketch size for ``total`` fingerprints: about four a slot, so that a slot counted
    ``min_df`` (10) or more holds a frequent fingerprint, not only many rare ones (at 16 Mi
    slots, 1 M documents put ten in every slot and the sketch filtered nothing)."""
    return int(np.clip(np.ceil(np.log2(max(total / 4, 1))), _MIN_BITS, _MAX_BITS))


def _held_by_wanted(
    values: np.ndarray, offsets: np.ndarray, docs: np.ndarray, wanted: np.ndarray, min_df: int
) -> np.ndarray:
    """The template fingerprints of the ``wanted`` documents: those among ``docs`` count
    for their own fingerprints as they are gathered; only the other ``docs`` are looked
    through (most wanted fingerprints are found in their own document first)."""
    holder = np.zeros(offsets.size - 1, dtype=np.bool_)
    holder[docs] = True
    own = np.repeat(holder[wanted], offsets[wanted + 1] - offsets[wanted]).view(np.uint8)
    holder[wanted] = False
    mine = _k.gather(values, offsets, wanted)
    return _counted_exactly(values, offsets, mine, own, docs[holder[docs]], min_df, _NONE)


def _counted_exactly(
    values: np.ndarray,
    offsets: np.ndarray,
    mine: np.ndarray,
    own: np.ndarray,
    scan: np.ndarray,
    min_df: int,
    entry_counts: np.ndarray,
) -> np.ndarray:
    """The template fingerprints (:func:`template_bar`) of ``mine`` (with repeats, or
    distinct): those flagged ``own`` count for their document, ``scan`` is looked through
    (skipping entries ``entry_counts``, if any, puts below ``min_df``)."""
    if mine.size == 0:
        return mine
    template = _k.held_at_least(
        values,
        offsets,
        mine,
        own,
        scan,
        entry_counts,
        min(min_df, 255),
        partial(template_bar, min_df=min_df),
        numba.get_num_threads(),
    )
    return np.sort(template)


def distinct_fingerprints(values: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """The sorted distinct fingerprints of ``docs``."""
    return unique(_k.gather(values, offsets, np.ascontiguousarray(docs, dtype=np.int64)))


@dataclass(frozen=True, slots=True, eq=False)
class ContentCounts:
    """Per pair: shared content shingles, and each side's content size (0: all template)."""

    shared: np.ndarray
    left: np.ndarray
    right: np.ndarray


def content_counts(
    values: np.ndarray,
    offsets: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    shared: np.ndarray,
    template: np.ndarray,
    copies: Copies | None = None,
) -> ContentCounts:
    """Shared and own shingle counts of every pair with the ``template`` shingles taken out.

    Only the documents of the pairs are looked at; pairs where a side holds no template
    shingle keep their plain shared count without a second merge walk (``copies``: walked
    once per distinct pair of sets).
    """
    size_l = offsets[left + 1] - offsets[left]
    size_r = offsets[right + 1] - offsets[right]
    if template.size == 0 or left.size == 0:
        return ContentCounts(shared, size_l, size_r)
    docs = unique(np.concatenate((left, right)))
    in_template = np.zeros(offsets.size - 1, dtype=np.int64)
    in_template[docs] = _k.member_counts(values, offsets, docs, template)
    both = (in_template[left] > 0) & (in_template[right] > 0)
    shared_template = np.zeros_like(shared)
    if both.any():
        shared_template[both] = per_distinct_pair(
            lambda a, b: _k.shared_member_counts(values, offsets, a, b, template),
            left[both],
            right[both],
            copies,
        )
    return ContentCounts(
        shared - shared_template, size_l - in_template[left], size_r - in_template[right]
    )


def least_content(shared: np.ndarray, content: np.ndarray, size: np.ndarray) -> np.ndarray:
    """What a document's content score is measured against: its content shingles, but at
    least ``MIN_CONTENT`` of its shingles unless the other document holds all its content. A
    reply whose own words are a date and the thread's subject around a list footer has a
    handful of content shingles; that it shares most of them with another reply of the thread
    says little. A copy of all of it (or a short text with no template) still scores 1."""
    least = np.maximum(content, np.minimum(size, MIN_CONTENT))
    return np.where(shared >= content, content, least)


def directional_scores(
    shared: np.ndarray,
    size_l: np.ndarray,
    size_r: np.ndarray,
    content: ContentCounts,
    measure: str,
) -> tuple[np.ndarray, np.ndarray]:
    """``(score of left in right, score of right in left)`` in the run's measure.

    Containment is directional (how much of one document's content the other holds);
    resemblance is the same both ways. The content score can only lower the plain one (a
    document is removed only where its keeper holds it as written); a side with no content
    is judged on all its shingles, and a pair near-identical as written
    (``NEAR_IDENTICAL``) whose content is alike too (``NEAR_IDENTICAL_CONTENT``) keeps its
    plain scores: two copies that differ in a year are a pair however much of them is
    template.
    """
    shared = shared.astype(np.float64)
    cs = content.shared.astype(np.float64)
    cl = content.left.astype(np.float64)
    cr = content.right.astype(np.float64)
    plain_l, plain_r = cl == 0, cr == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        resemblance = np.nan_to_num(shared / (size_l + size_r - shared))
        on_content = np.nan_to_num(cs / (cl + cr - cs))
        # near-identical as written, and what is not template mostly the same too
        identical = (resemblance >= NEAR_IDENTICAL) & (
            plain_l | plain_r | (on_content >= NEAR_IDENTICAL_CONTENT)
        )
        if measure == "resemblance":
            score = np.where(plain_l | plain_r, resemblance, on_content)
            score = np.where(identical, resemblance, np.minimum(score, resemblance))
            return score, score.copy()
        c_lr, c_rl = np.nan_to_num(shared / size_l), np.nan_to_num(shared / size_r)
        lr = np.nan_to_num(np.where(plain_l, c_lr, cs / least_content(cs, cl, size_l)))
        rl = np.nan_to_num(np.where(plain_r, c_rl, cs / least_content(cs, cr, size_r)))
    lr = np.where(identical, c_lr, np.minimum(lr, c_lr))
    rl = np.where(identical, c_rl, np.minimum(rl, c_rl))
    return lr, rl
