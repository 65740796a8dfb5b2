"""A persistent collection that each new document is checked against (docs/guides/collection.md).

    texts ──fingerprints──▶ signatures ──keys──▶ store.candidates ──exact score──▶ Result

The flow is dedup's, one batch at a time: candidates are the stored documents sharing an index
key (never a scan), and every candidate is verified exactly from the stored shingle
fingerprints with dedup's measure, so a query reports the pairs ``dedup`` would report.
A key held by ``max_bucket`` documents or more (stored, or earlier in the batch) pairs a new
document with the oldest of them only (dedup's cap). The store keeps the config and signature
format version; opening it with another is refused.

``add`` runs in one store transaction: the check against stored documents and the insert see
the same state, so two clients adding near-copies at once cannot both miss each other.
Methods weighing features by the collection (SimHash tf-idf, I-Match) keep the document
frequencies in the store, updated in the same transaction; a batch is sketched with the model
that already counts it. Stored signatures are not recomputed as the model grows.

Shared templates (list footers, mastheads; :mod:`neardup.dedup.templates`) are discounted as
in dedup, from holder counts kept in the store and updated in the same transaction: a new
document counts once for each of its shingles unless it is a near copy (plain containment
≥ ``NEAR_COPY`` both ways) of one of its candidates, stored or earlier in the batch, so copies
count once; a shingle held by ``template_df`` or more counted documents is template, and every
pair is scored on content with dedup's own functions. Removing or replacing a document
subtracts exactly what adding it added. Counting is incremental, so it differs from a dedup
run over the same documents only where order matters: a shingle becomes template when its
``template_df``-th holder arrives (pairs reported earlier were scored without the discount),
a document joining two groups of copies leaves both counted, and removing a group's counted
document leaves its copies uncounted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup.collection.store import (
    CollectionMeta,
    DocFreqs,
    DuplicateIdError,
    Store,
    StoredDoc,
    check_schema,
    repeated_ids,
)
from neardup.dedup import DedupConfig
from neardup.dedup.configfile import config_from_dict, config_to_dict
from neardup.dedup.templates import (
    NEAR_COPY,
    content_counts,
    directional_scores,
    distinct_fingerprints,
    reaches_template,
)
from neardup.errors import ConfigError, InputError, SignatureError
from neardup.fingerprints.intersect_kernels import shared_counts
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.io.jsonvalues import id_problem, json_problem
from neardup.methods.base import FORMAT_VERSION, Method, serialize
from neardup.methods.idf import IdfExcerpt
from neardup.util.arrays import unique, unique_counts

DocInput = tuple[str, str, Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A stored near-duplicate and its exact score (dedup's measure on content: shared
    templates discounted), both ways.

    ``new_in_stored`` is how much of the new document the stored one holds (dedup's measure;
    the same both ways for resemblance), ``stored_in_new`` the other way, ``score`` the
    larger. Dropping the new document loses nothing only when ``new_in_stored`` reaches the
    threshold (``contained`` is then ``"new_in_stored"`` unless each holds the other).
    """

    id: str
    score: float
    new_in_stored: float
    stored_in_new: float

    @property
    def contained(self) -> str | None:
        """Which document holds the other: ``new_in_stored``, ``stored_in_new`` or None."""
        if self.new_in_stored == self.stored_in_new:
            return None
        return "new_in_stored" if self.new_in_stored > self.stored_in_new else "stored_in_new"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": self.score,
            "new_in_stored": self.new_in_stored,
            "stored_in_new": self.stored_in_new,
            "contained": self.contained,
        }


@dataclass(frozen=True, slots=True, eq=False)
class _Flat:
    """A batch's documents (first) and their stored candidates as one ragged fingerprint
    array, with the candidate pairs ``(new, candidate)`` of dedup's scoring functions."""

    values: np.ndarray
    offsets: np.ndarray
    left: np.ndarray  # index of the new document
    right: np.ndarray  # index of its candidate
    ids: list[str]  # id of every document of the flat array
    shared: np.ndarray  # shared shingles of every pair

    @property
    def sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct shingles of each pair's left and right document."""
        sizes = np.diff(self.offsets)
        return sizes[self.left], sizes[self.right]


@dataclass(frozen=True, slots=True)
class Result:
    """The near-duplicates found for one input document, best first."""

    id: str | None  # the input's id (None for a query text)
    duplicates: list[Duplicate]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "duplicates": [d.as_dict() for d in self.duplicates],
        }


def collection_fingerprint(config: DedupConfig, method: Method) -> str:
    """16 hex digits over what decides a collection's answers: method, text, threshold,
    measure, bucket cap, template document frequency."""
    payload = [
        method.name,
        method.config_id,
        config.threshold,
        config.measure,
        config.max_bucket,
        config.template_df,
    ]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def _method_for(config: DedupConfig) -> Method:
    if not config.verify:
        raise ConfigError("collections always verify exactly: verify=False is not supported")
    return config.build_method()


def _feature_counts(prints: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct features of some documents' fingerprint sets and how many documents hold each."""
    if not prints:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    features, counts = unique_counts(np.concatenate(prints))
    return features.astype(np.uint64), counts.astype(np.int64)


def stored_problem(doc_id: str, text: str, meta: Mapping[str, Any] | None = None) -> str | None:
    """Why a document cannot be stored in a collection (the same rule for every store), or
    None."""
    if problem := id_problem(doc_id):
        return problem
    where = f"document {doc_id!a}"
    return json_problem(text, f"{where}: the text") or json_problem(
        None if meta is None else dict(meta), f"{where}: meta"
    )


class Collection:
    """Documents in a :class:`~neardup.collection.store.Store`, checked against each other on
    add."""

    def __init__(self, store: Store, config: DedupConfig, method: Method) -> None:
        self.store = store
        self.config = config
        self.method = method
        self.config_id = collection_fingerprint(config, method)
        self.uses_idf = bool(getattr(method, "needs_idf", False))

    @classmethod
    def create(cls, store: Store, config: DedupConfig | None = None) -> Collection:
        """A new, empty collection in ``store`` (ConfigError if it already holds one)."""
        config = config or DedupConfig()
        method = _method_for(config)
        collection = cls(store, config, method)
        store.create(CollectionMeta(config_to_dict(config), collection.config_id, FORMAT_VERSION))
        return collection

    @classmethod
    def open(cls, store: Store, config: DedupConfig | None = None) -> Collection:
        """The collection in ``store``; refused if made with another format version, or with
        another config than ``config`` (when given) or than this library reads back."""
        meta = store.meta()
        if meta is None:
            raise ConfigError("the store holds no collection; create one first")
        if meta.format_version != FORMAT_VERSION:
            raise SignatureError(
                f"the collection's signature format version is {meta.format_version}; "
                f"this neardup reads version {FORMAT_VERSION}"
            )
        stored = config_from_dict(meta.config, "stored collection config")
        collection = cls(store, stored, _method_for(stored))
        if collection.config_id != meta.config_id:
            raise ConfigError(
                f"the collection was made with config {meta.config_id}, which this neardup "
                f"computes as {collection.config_id}; rebuild the collection"
            )
        check_schema(meta, "the store")
        if config is not None:
            wanted = collection_fingerprint(config, _method_for(config))
            if wanted != meta.config_id:
                raise ConfigError(
                    f"the collection was made with another config ({meta.config_id}, "
                    f"method={stored.method}, threshold={stored.threshold}, "
                    f"measure={stored.measure}) than the one given ({wanted})"
                )
        return collection

    def add(self, docs: Sequence[DocInput], *, upsert: bool = False) -> list[Result]:
        """Store a batch (all or nothing) and report, per document, the near-duplicates
        already present: stored before, or earlier in this batch.

        A document every store cannot hold and give back (:func:`stored_problem`: an id with
        a control character or too long, a NUL or lone surrogate anywhere, a NaN in meta)
        raises InputError naming it before the store is touched."""
        for doc in docs:
            if problem := stored_problem(*doc):
                raise InputError(problem)
        ids = [doc_id for doc_id, _, _ in docs]
        if repeated := repeated_ids(ids):
            raise DuplicateIdError(repeated, "repeated within one batch")
        prints = fingerprint_batch([text for _, text, _ in docs], self.config.text)
        metas = [None if meta is None else dict(meta) for _, _, meta in docs]
        with self.store.transaction():
            replaced = self.store.get(ids) if upsert else []
            method = self.method
            if self.uses_idf:
                method = self._count_and_weigh(prints, replaced)
            items = self._items(method, prints, ids, metas)
            flat = self._flat(items, within_batch=True, exclude_self=upsert)
            if self.config.template_df:
                items = self._count_templates(items, flat, replaced)
            results = self._results(items, flat)
            self.store.add(items, upsert=upsert)
        return results

    def query(self, texts: Sequence[str]) -> list[Result]:
        """The stored near-duplicates of each text, storing nothing."""
        prints = fingerprint_batch(list(texts), self.config.text)
        method = self.method
        if self.uses_idf:
            features = unique(prints.values)
            freqs = self.store.doc_freqs(features)
            if freqs.n_docs == 0:
                return [Result(None, []) for _ in texts]
            method = self._weighed(features, freqs)
        ids = [f"#{i}" for i in range(len(texts))]
        items = self._items(method, prints, ids, [None] * len(texts))
        flat = self._flat(items, within_batch=False, exclude_self=False)  # reads: no lock
        results = self._results(items, flat)
        return [Result(None, r.duplicates) for r in results]

    def remove(self, ids: Sequence[str]) -> list[str]:
        """Remove documents (and what they counted); the ids that were stored."""
        if not self.uses_idf and not self.config.template_df:
            return self.store.remove(ids)
        with self.store.transaction():
            gone = self.store.get(list(dict.fromkeys(ids)))
            if self.uses_idf:
                features, counts = _feature_counts([doc.prints for doc in gone])
                self.store.update_doc_freqs(features, -counts, -len(gone))
            if self.config.template_df:
                features, counts = _feature_counts([d.prints for d in gone if d.counted])
                self.store.update_shingle_counts(features, -counts)
            return self.store.remove(ids)

    def get(self, doc_id: str) -> StoredDoc | None:
        """A stored document, or None."""
        found = self.store.get([doc_id])
        return found[0] if found else None

    def recent(self, limit: int = 10) -> list[str]:
        """The ids of the ``limit`` documents added (or replaced) last, newest first."""
        return self.store.recent(limit)

    def stats(self) -> dict[str, Any]:
        """``{"documents": n, ...}`` and the settings that decide the answers."""
        return {
            "documents": self.store.count(),
            "method": self.config.method,
            "threshold": self.config.threshold,
            "measure": self.config.measure,
            "config_id": self.config_id,
            "template_df": self.config.template_df,
            "format_version": FORMAT_VERSION,
        }

    # ----------------------------------------------------------------------------------------

    def _count_and_weigh(self, prints: FingerprintBatch, replaced: Sequence[StoredDoc]) -> Method:
        """Count a batch into the stored IDF model (less the documents it replaces) and return
        the method weighing with the updated model."""
        old = [doc.prints for doc in replaced]
        new_features, new_counts = _feature_counts([prints.values])  # distinct per document
        old_features, old_counts = _feature_counts(old)
        features, where = np.unique(
            np.concatenate([new_features, old_features]), return_inverse=True
        )
        deltas = np.bincount(
            where, weights=np.concatenate([new_counts, -old_counts]), minlength=features.size
        ).astype(np.int64)
        self.store.update_doc_freqs(features, deltas, len(prints) - len(old))
        return self._weighed(new_features, self.store.doc_freqs(new_features))

    def _weighed(self, features: np.ndarray, freqs: DocFreqs) -> Method:
        """A copy of the method weighing with the stored model's view of ``features``."""
        seen = freqs.df > 0
        model = IdfExcerpt(features[seen], freqs.df[seen], freqs.n_docs, min_df=freqs.min_df)
        return type(self.method)(self.method.config, self.method.text, idf=model)

    def _items(
        self,
        method: Method,
        prints: FingerprintBatch,
        ids: Sequence[str],
        metas: Sequence[dict[str, Any] | None],
    ) -> list[StoredDoc]:
        """Signatures and keys of a batch, as StoredDocs."""
        sigs = method.sketch(prints)
        keys = method.keys(sigs)
        order = np.argsort(keys.docs, kind="stable")
        bounds = np.searchsorted(keys.docs[order], np.arange(len(ids) + 1))
        return [
            StoredDoc(
                doc_id,
                metas[d],
                serialize(method.code, method.config_id, sigs[d]),
                np.array(prints[d], dtype=np.uint64),
                keys.keys[order[bounds[d] : bounds[d + 1]]].astype(np.uint64),
            )
            for d, doc_id in enumerate(ids)
        ]

    def _flat(self, items: list[StoredDoc], *, within_batch: bool, exclude_self: bool) -> _Flat:
        """Each item's candidates (stored, and earlier in the batch when ``within_batch``) as
        pairs over one flat fingerprint array, with their shared shingle counts."""
        pools = self._pools(items, within_batch=within_batch, exclude_self=exclude_self)
        wanted = list(dict.fromkeys(i for pool in pools for i in pool))
        stored = self.store.get(wanted)  # a document removed meanwhile is gone
        position = {doc.id: len(items) + j for j, doc in enumerate(stored)}
        if within_batch:  # a batch's own version of an id wins over the stored one
            position |= {item.id: d for d, item in enumerate(items)}
        left, right = [], []
        for d, pool in enumerate(pools):
            found = [position[i] for i in pool if i in position]
            left += [d] * len(found)
            right += found
        docs = [*items, *stored]
        sizes = np.array([doc.prints.size for doc in docs], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        values = (
            np.concatenate([doc.prints for doc in docs]).astype(np.uint64)
            if docs
            else np.empty(0, np.uint64)
        )
        pair_l, pair_r = np.array(left, dtype=np.int64), np.array(right, dtype=np.int64)
        shared = shared_counts(values, offsets, pair_l, pair_r)
        return _Flat(values, offsets, pair_l, pair_r, [doc.id for doc in docs], shared)

    def _count_templates(
        self, items: list[StoredDoc], flat: _Flat, replaced: Sequence[StoredDoc]
    ) -> list[StoredDoc]:
        """Count the batch's documents that are no near copy of a candidate into the stored
        holder counts (less the counted documents it replaces); the items with their flag."""
        size_l, size_r = flat.sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            c_lr = np.nan_to_num(flat.shared / size_l)
            c_rl = np.nan_to_num(flat.shared / size_r)
        copies = flat.left[np.minimum(c_lr, c_rl) >= NEAR_COPY]
        counted = np.ones(len(items), dtype=bool)
        counted[copies] = False
        items = [
            dataclasses.replace(item, counted=bool(c))
            for item, c in zip(items, counted.tolist(), strict=True)
        ]
        new_features, new_counts = _feature_counts([i.prints for i in items if i.counted])
        old_features, old_counts = _feature_counts([d.prints for d in replaced if d.counted])
        self.store.update_shingle_counts(
            np.concatenate([new_features, old_features]), np.concatenate([new_counts, -old_counts])
        )
        return items

    def _results(self, items: list[StoredDoc], flat: _Flat) -> list[Result]:
        """Every pair scored on content as dedup scores it; the pairs reaching the threshold
        per item, best first."""
        size_l, size_r = flat.sizes
        template = np.empty(0, dtype=np.uint64)
        if self.config.template_df and flat.left.size:
            docs = unique(np.concatenate([flat.left, flat.right]))
            features = distinct_fingerprints(flat.values, flat.offsets, docs)
            held = self.store.shingle_counts(features)
            template = features[reaches_template(features, held, self.config.template_df)]
        content = content_counts(
            flat.values, flat.offsets, flat.left, flat.right, flat.shared, template
        )
        new_in, stored_in = directional_scores(
            flat.shared, size_l, size_r, content, self.config.measure
        )
        found: list[list[Duplicate]] = [[] for _ in items]
        score = np.maximum(new_in, stored_in)
        for k in np.flatnonzero(score >= self.config.threshold).tolist():
            found[int(flat.left[k])].append(
                Duplicate(
                    flat.ids[int(flat.right[k])],
                    float(score[k]),
                    float(new_in[k]),
                    float(stored_in[k]),
                )
            )
        for dups in found:
            dups.sort(key=lambda d: (-d.score, d.id))
        return [Result(item.id, dups) for item, dups in zip(items, found, strict=True)]

    def _pools(
        self, items: list[StoredDoc], *, within_batch: bool, exclude_self: bool
    ) -> list[list[str]]:
        """Each item's candidates: per key, the stored documents then those earlier in the
        batch, oldest first; a bucket of ``max_bucket`` or more gives its oldest only."""
        cap = self.config.max_bucket
        flat = np.concatenate([item.keys for item in items]) if items else np.empty(0, np.uint64)
        buckets = iter(self.store.candidates(flat, limit=cap))
        earlier: dict[int, list[str]] = {}  # key -> ids earlier in this batch
        pools = []
        for item in items:
            pool: dict[str, None] = {}
            for key in item.keys.tolist():
                members = [i for i in next(buckets) if not (exclude_self and i == item.id)]
                members += earlier.get(key, [])
                pool.update(dict.fromkeys(members[:1] if len(members) >= cap else members))
                if within_batch:
                    earlier.setdefault(key, []).append(item.id)
            pools.append(list(pool))
        return pools
