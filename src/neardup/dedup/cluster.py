"""Clusters of near-duplicates from verified pairs, and which document of each to keep.

Pure functions on document indices ``0..n-1`` and numpy arrays (no I/O, no text), so the same
code runs on one machine and inside a Spark task. The flow (docs/architecture.md)::

    pairs ──connected_components──▶ labels        (union-find: every chain is merged)
    pairs ──lossless_keepers───────▶ keep_of       (a document goes only into one that holds it)
    keep_of ──star_labels──────────▶ labels        (one cluster per keeper)
    labels ──choose_keepers──▶ keepers ──cluster_table / removed_mask──▶ outputs

A *label* array gives every document the smallest document index of its cluster, so labels
are deterministic and a singleton is labelled by itself. A *keepers* array is indexed by
label: ``keepers[label]`` is the document kept of that cluster (``-1`` where no cluster has
that label). Which document is kept follows a :class:`KeepPolicy`, ties broken by input order.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from neardup.dedup import cluster_kernels as _k
from neardup.errors import ConfigError, InputError
from neardup.util.arrays import pair_codes, split_pair_codes, unique, unordered_pair_codes

KeepKind = Literal["first", "longest", "shortest", "field"]
Direction = Literal["min", "max"]

KEEP_KINDS: tuple[str, ...] = get_args(KeepKind)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
KEEP_FORMS = "first | longest | shortest | field:NAME[:min|max]"

_INT32_MAX = np.iinfo(np.int32).max
# Two documents holding each other within this margin (as written) are equals, and the keep
# policy chooses between them; beyond it the one holding more of the other is its container.
CONTAINER_MARGIN = 0.1


# ── keep policy ──────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class KeepPolicy:
    """Which document of a cluster is kept (and is the representative of the chaining guard).

    ``first`` keeps the earliest in input order; ``longest`` / ``shortest`` go by text length;
    ``field`` by a record field's value, the largest by default (``direction="max"``), the
    smallest with ``"min"``; documents missing the field lose. Ties go to the earliest input.
    """

    kind: KeepKind = "first"
    field: str | None = None
    direction: Direction = "max"

    def __post_init__(self) -> None:
        if self.kind not in KEEP_KINDS:
            raise ConfigError(f"keep={self.kind!r} is not one of {KEEP_FORMS}")
        if self.direction not in DIRECTIONS:
            raise ConfigError(f"keep direction={self.direction!r} is not one of min, max")
        if self.kind == "field":
            if not isinstance(self.field, str) or not self.field:
                raise ConfigError(f"keep=field needs a field name: {KEEP_FORMS}")
        elif self.field is not None or self.direction != "max":
            raise ConfigError(f"keep={self.kind} takes no field or direction: {KEEP_FORMS}")

    @classmethod
    def parse(cls, text: str) -> KeepPolicy:
        """The policy written ``first | longest | shortest | field:NAME[:min|max]``.

        A field name may itself contain ``:``; a last part ``min`` or ``max`` is the direction.
        """
        if not isinstance(text, str):
            raise ConfigError(f"keep={text!r} is not one of {KEEP_FORMS}")
        head, sep, rest = text.strip().partition(":")
        if not sep and head in ("first", "longest", "shortest"):
            return cls(head)  # type: ignore[arg-type]
        if head != "field" or not rest:
            raise ConfigError(f"keep={text!r} is not one of {KEEP_FORMS}")
        name, sep, direction = rest.rpartition(":")
        if not sep or direction not in DIRECTIONS:
            name, direction = rest, "max"
        if not name:
            raise ConfigError(f"keep={text!r} has no field name: {KEEP_FORMS}")
        return cls("field", name, direction)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"field:{self.field}:{self.direction}" if self.kind == "field" else self.kind


def preference_rank(
    policy: KeepPolicy,
    n: int,
    order: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
    field_values: np.ndarray | None = None,
) -> np.ndarray:
    """Every document's position (0 = best) in the policy's total order of preference.

    ``order`` is each document's input position (default: its index), the tie-breaker; then
    the index itself. ``lengths`` is needed by ``longest`` / ``shortest``, ``field_values`` by
    ``field`` (numeric, string or object; NaN / None mean missing). O(n log n), vectorized.
    """
    order_key = _document_array("order", order, n) if order is not None else np.arange(n)
    if policy.kind == "first":
        keys: tuple[np.ndarray, ...] = (order_key,)
    elif policy.kind in ("longest", "shortest"):
        if lengths is None:
            raise ConfigError(f"keep={policy} needs the text lengths")
        length = _document_array("lengths", lengths, n)
        keys = (order_key, -length if policy.kind == "longest" else length)
    else:
        if field_values is None:
            raise ConfigError(f"keep={policy} needs the values of field {policy.field!r}")
        keys = (order_key, _field_key(policy, np.asarray(field_values), n))
    best_first = np.lexsort(keys)  # stable: equal keys stay in index order
    rank = np.empty(n, dtype=np.int64)
    rank[best_first] = np.arange(n, dtype=np.int64)
    return rank


def _document_array(name: str, values: np.ndarray, n: int) -> np.ndarray:
    """``values`` as one number per document, checked."""
    array = np.asarray(values)
    if array.shape != (n,):
        raise InputError(f"{name} has shape {array.shape}, expected ({n},)")
    if array.dtype.kind not in "iub":
        raise InputError(f"{name} must hold integers, not {array.dtype}")
    return array.astype(np.int64, copy=False)


def _field_key(policy: KeepPolicy, values: np.ndarray, n: int) -> np.ndarray:
    """Sort key of a field's values: dense codes (negated for max), missing values last."""
    if values.shape != (n,):
        shape = values.shape
        raise InputError(f"values of field {policy.field!r} have shape {shape}, expected ({n},)")
    if values.dtype.kind in "iubUS":
        missing = np.zeros(n, dtype=bool)
        present = values
    elif values.dtype.kind == "f":
        missing = np.isnan(values)
        present = values[~missing]
    else:
        values = values.astype(object)
        missing = np.equal(values, None) | np.not_equal(values, values)  # None or NaN
        present = _uniform_objects(policy, values[~missing])
    codes = np.unique(present, return_inverse=True)[1].astype(np.int64).ravel()
    key = np.full(n, n, dtype=np.int64)  # missing: after every code, in both directions
    key[~missing] = -codes if policy.direction == "max" else codes
    return key


def _uniform_objects(policy: KeepPolicy, present: np.ndarray) -> np.ndarray:
    """Present object values as one comparable array: all strings or all numbers."""
    is_str = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(present).astype(bool)
    if is_str.all():
        return present.astype(str)
    if is_str.any():
        raise InputError(f"field {policy.field!r} mixes strings and numbers; cannot rank it")
    try:
        return present.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"field {policy.field!r} holds values that are not numbers") from exc


# ── clusters ─────────────────────────────────────────────────────────────────────────────────


def connected_components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Cluster labels (int64, length ``n``) of the graph of verified pairs ``left[k]–right[k]``.

    Union-find (union by rank, path halving), compiled: O(pairs · α(n)). Every document gets
    the smallest index of its component; self-pairs and duplicate pairs are harmless.
    """
    left, right = _pair_arrays(n, left, right)
    parent = np.arange(n, dtype=np.int32 if n <= _INT32_MAX else np.int64)
    return _k.union_find(parent, left, right)


def star_clusters(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    scores: np.ndarray,
    rank: np.ndarray,
    min_score: float,
) -> np.ndarray:
    """Cluster labels with the chaining guard, for a symmetric score: a member must itself
    match the representative.

    Rule: documents are taken best first by ``rank`` (smallest first, ties by index; e.g.
    from :func:`preference_rank`); one not yet placed becomes a representative and takes every
    unplaced document with which it has a verified pair scoring ≥ ``min_score``. So with A~B,
    B~C and A, C unrelated, C joins A only if the pair A–C was itself verified at ≥
    ``min_score``. Every representative is the best-ranked member (so the keeper) of its
    cluster. :func:`lossless_keepers` with the same score both ways.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != np.shape(left):
        raise InputError(f"scores has shape {scores.shape}, expected {np.shape(left)}")
    keep_of = lossless_keepers(n, left, right, scores, scores, rank, min_score)
    return _k.smallest_member_labels(keep_of)


def lossless_keepers(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    score_lr: np.ndarray,
    score_rl: np.ndarray,
    rank: np.ndarray,
    guard: float,
    margin: float = CONTAINER_MARGIN,
    held: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """``keep_of[d]``: the document kept in place of ``d`` (itself when ``d`` is kept).

    Removal is lossless: ``d`` goes into keeper ``k`` only when the score of ``d`` in ``k``
    (``score_lr[i]`` for ``left[i]`` in ``right[i]``, ``score_rl[i]`` the other way) reaches
    ``guard``. Documents are decided best first by ``rank`` (see :func:`preference_rank`),
    except that a document contained in an undecided one waits for it — contained: held at
    ≥ ``guard``, and held more than it holds the other by ``margin`` in ``held`` (the pairs'
    containment as written, both ways; default: the scores). So the keep policy chooses
    among documents that hold each other about equally (copies, light edits), and the fuller
    text (an answer quoting a question, an original beside its partial translation) never
    loses to the text it contains. A keeper takes every undecided document it holds; chains
    are not followed (A in B, B in C, A not in C: C keeps B, A stays). O(n log n + pairs)
    for the usual shallow containment; only the given pairs are used.
    """
    left, right = _pair_arrays(n, left, right)
    scores = []
    named = (("score_lr", score_lr), ("score_rl", score_rl))
    if held is not None:
        named += (("held_lr", held[0]), ("held_rl", held[1]))
    for name, values in named:
        array = np.ascontiguousarray(values, dtype=np.float64)
        if array.shape != left.shape:
            raise InputError(f"{name} has shape {array.shape}, expected {left.shape}")
        scores.append(array)
    if held is None:
        scores += scores[:2]
    if not isinstance(guard, numbers.Real) or isinstance(guard, bool) or not math.isfinite(guard):
        raise ConfigError(f"guard={guard!r} must be a finite number")
    preference, _ = _preference(rank, n)
    return _k.lossless_stars(n, left, right, *scores, preference, float(guard), float(margin))


def pairs_to_keepers(
    left: np.ndarray,
    right: np.ndarray,
    score_lr: np.ndarray,
    score_rl: np.ndarray,
    keep_of: np.ndarray,
    guard: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Unverified pairs ``(d, k)`` (``lo < hi``, distinct, not among the given pairs): ``d``
    is held at ≥ ``guard`` by a document that a keeper ``k`` holds at ≥ ``guard``, and ``d``
    is kept elsewhere than ``k``.

    A capped bucket pairs its members with one document only, so copies of a mass-copied text
    may meet the document their group is finally kept in only through its other members;
    ``d`` likely holds its content in ``k`` too, and the pair, once verified, lets
    :func:`lossless_keepers` put ``d`` (and what went into ``d``) there instead of keeping a
    second copy. Repeated until no pair is new, this reaches every keeper of the group.
    """
    held = np.concatenate((left[score_lr >= guard], right[score_rl >= guard]))
    holder = np.concatenate((right[score_lr >= guard], left[score_rl >= guard]))
    kept = keep_of[holder] == holder
    by_doc = np.argsort(held[kept], kind="stable")  # (r, k): r held by keeper k
    r_held, k_holder = held[kept][by_doc], holder[kept][by_doc]
    start = np.searchsorted(r_held, holder, side="left")  # each (d, r): r's keepers
    count = np.searchsorted(r_held, holder, side="right") - start
    docs = np.repeat(held, count)
    keepers = k_holder[np.repeat(start - np.cumsum(count) + count, count) + np.arange(count.sum())]
    wanted = (keepers != docs) & (keepers != keep_of[docs])
    docs, keepers = docs[wanted], keepers[wanted]
    if not docs.size:
        return docs, keepers
    lo, hi = np.minimum(docs, keepers), np.maximum(docs, keepers)
    code = unique(pair_codes(lo, hi))
    known = unordered_pair_codes(left, right)
    return split_pair_codes(code[~np.isin(code, known, kind="sort")])


def star_labels(keep_of: np.ndarray) -> np.ndarray:
    """Cluster labels of keeper stars: every document gets the smallest index of its star."""
    return _k.smallest_member_labels(np.asarray(keep_of, dtype=np.int64))


def _pair_arrays(n: int, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``left`` and ``right`` as int64 arrays of indices checked to lie in ``[0, n)``."""
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
        raise ConfigError(f"n={n!r} must be a non-negative integer")
    arrays = []
    for name, values in (("left", left), ("right", right)):
        array = np.asarray(values)
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise InputError(f"{name} must be a 1-d array of integer indices")
        array = np.ascontiguousarray(array, dtype=np.int64)
        if array.size and (array.min() < 0 or array.max() >= n):
            raise InputError(f"{name} holds an index outside [0, {n})")
        arrays.append(array)
    if arrays[0].size != arrays[1].size:
        raise InputError(f"left and right differ in length: {arrays[0].size} ≠ {arrays[1].size}")
    return arrays[0], arrays[1]


# ── keepers and outputs ──────────────────────────────────────────────────────────────────────


def choose_keepers(
    labels: np.ndarray,
    policy: KeepPolicy,
    order: np.ndarray | None = None,
    lengths: np.ndarray | None = None,
    field_values: np.ndarray | None = None,
) -> np.ndarray:
    """``keepers[label]``: the document kept of each cluster by ``policy`` (-1: not a label).

    Ties are broken by input order ``order`` (default: index). Vectorized, O(n log n).
    """
    labels = _labels(labels)
    rank = preference_rank(policy, labels.size, order, lengths, field_values)
    return keepers_by_rank(labels, rank)


def keepers_by_rank(labels: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``keepers[label]``: the member of best (smallest) ``rank`` of each cluster.

    Equal ranks go to the smaller index. O(n log n) for the sort of ``rank``.
    """
    labels = _labels(labels)
    n = labels.size
    preference, position = _preference(rank, n)
    best = np.full(n, n, dtype=np.int64)
    np.minimum.at(best, labels, position)
    keepers = np.full(n, -1, dtype=np.int64)
    has = best < n
    keepers[has] = preference[best[has]]
    return keepers


def _preference(rank: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents best first, and each document's position in that list (ties: by index)."""
    preference = np.argsort(_document_array("rank", rank, n), kind="stable")
    position = np.empty(n, dtype=np.int64)
    position[preference] = np.arange(n, dtype=np.int64)
    return preference, position


@dataclass(frozen=True, slots=True)
class Cluster:
    """A cluster of ≥ 2 documents: its label, members in input order, and the one kept."""

    label: int
    members: np.ndarray
    keep: int


@dataclass(frozen=True, slots=True)
class ClusterTable:
    """Clusters of ≥ 2 documents in array form (no Python object per cluster until asked).

    Cluster ``i`` has label ``labels[i]``, keeper ``keepers[i]`` and members
    ``members[offsets[i]:offsets[i + 1]]`` (in input order). Iterating yields :class:`Cluster`.
    """

    labels: np.ndarray
    keepers: np.ndarray
    offsets: np.ndarray
    members: np.ndarray

    def __len__(self) -> int:
        return self.labels.size

    def __getitem__(self, i: int) -> Cluster:
        if not -len(self) <= i < len(self):
            raise IndexError(f"cluster {i} out of range for {len(self)} clusters")
        i %= len(self)
        members = self.members[self.offsets[i] : self.offsets[i + 1]]
        return Cluster(int(self.labels[i]), members, int(self.keepers[i]))

    def __iter__(self) -> Iterator[Cluster]:
        return (self[i] for i in range(len(self)))

    @property
    def sizes(self) -> np.ndarray:
        """Number of members of every cluster."""
        return np.diff(self.offsets)


def cluster_table(
    labels: np.ndarray, keepers: np.ndarray, order: np.ndarray | None = None
) -> ClusterTable:
    """Clusters of size ≥ 2 only, members sorted by input order ``order`` (default: index),
    clusters sorted by the input order of their first member. Vectorized, O(n log n).
    """
    labels = _labels(labels)
    n = labels.size
    order_key = _document_array("order", order, n) if order is not None else np.arange(n)
    keepers = _keepers(keepers, n)
    sizes = np.bincount(labels, minlength=n)
    docs = np.flatnonzero(sizes[labels] >= 2)
    first_order = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_order, labels[docs], order_key[docs])
    docs_label = labels[docs]
    docs = docs[np.lexsort((order_key[docs], docs_label, first_order[docs_label]))]
    docs_label = labels[docs]
    starts = np.flatnonzero(np.r_[True, docs_label[1:] != docs_label[:-1]]) if docs.size else docs
    table_labels = docs_label[starts]
    offsets = np.r_[starts, docs.size].astype(np.int64)
    return ClusterTable(table_labels, keepers[table_labels], offsets, docs)


def removed_mask(labels: np.ndarray, keepers: np.ndarray) -> np.ndarray:
    """True for every document that is not the keeper of its cluster."""
    labels = _labels(labels)
    keep_of = _keepers(keepers, labels.size)[labels]
    if (keep_of < 0).any():
        raise InputError("keepers has no keeper for some label")
    return keep_of != np.arange(labels.size)


def _labels(labels: np.ndarray) -> np.ndarray:
    """``labels`` as an int64 array of indices into itself (labels are document indices)."""
    array = np.asarray(labels)
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise InputError("labels must be a 1-d array of integer document indices")
    array = array.astype(np.int64, copy=False)
    if array.size and (array.min() < 0 or array.max() >= array.size):
        raise InputError(f"labels must lie in [0, {array.size})")
    return array


def _keepers(keepers: np.ndarray, n: int) -> np.ndarray:
    array = np.asarray(keepers)
    if array.shape != (n,) or (n and array.dtype.kind not in "iu"):
        raise InputError(f"keepers must be {n} integers, one per possible label")
    return array.astype(np.int64, copy=False)
