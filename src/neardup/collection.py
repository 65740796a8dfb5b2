"""A persistent collection that each new document is checked against (METHODS §1, §7).

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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup._kernels.sample import count_shared
from neardup.configfile import config_from_dict, config_to_dict
from neardup.dedup import DedupConfig
from neardup.errors import ConfigError, SignatureError
from neardup.idf import IdfExcerpt
from neardup.methods.base import FORMAT_VERSION, Method, serialize
from neardup.shingles import FingerprintBatch, fingerprint_batch
from neardup.store.base import (
    CollectionMeta,
    DocFreqs,
    DuplicateIdError,
    Store,
    StoredDoc,
    repeated_ids,
)

DocInput = tuple[str, str, Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A stored near-duplicate and its exact score (dedup's measure), both ways.

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
    measure, bucket cap."""
    payload = [method.name, method.config_id, config.threshold, config.measure, config.max_bucket]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def _method_for(config: DedupConfig) -> Method:
    if not config.verify:
        raise ConfigError("collections always verify exactly: verify=False is not supported")
    return config.build_method()


def _feature_counts(prints: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct features of some documents' fingerprint sets and how many documents hold each."""
    if not prints:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    features, counts = np.unique(np.concatenate(prints), return_counts=True)
    return features.astype(np.uint64), counts.astype(np.int64)


class Collection:
    """Documents in a :class:`~neardup.store.base.Store`, checked against each other on add."""

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
        already present: stored before, or earlier in this batch."""
        ids = [doc_id for doc_id, _, _ in docs]
        if repeated := repeated_ids(ids):
            raise DuplicateIdError(repeated, "repeated within one batch")
        prints = fingerprint_batch([text for _, text, _ in docs], self.config.text)
        metas = [None if meta is None else dict(meta) for _, _, meta in docs]
        with self.store.transaction():
            method = self.method
            if self.uses_idf:
                method = self._count_and_weigh(prints, ids if upsert else [])
            items = self._items(method, prints, ids, metas)
            results = self._match(items, within_batch=True, exclude_self=upsert)
            self.store.add(items, upsert=upsert)
        return results

    def query(self, texts: Sequence[str]) -> list[Result]:
        """The stored near-duplicates of each text, storing nothing."""
        prints = fingerprint_batch(list(texts), self.config.text)
        method = self.method
        if self.uses_idf:
            features = np.unique(prints.values)
            freqs = self.store.doc_freqs(features)
            if freqs.n_docs == 0:
                return [Result(None, []) for _ in texts]
            method = self._weighed(features, freqs)
        ids = [f"#{i}" for i in range(len(texts))]
        items = self._items(method, prints, ids, [None] * len(texts))
        results = self._match(items, within_batch=False, exclude_self=False)
        return [Result(None, r.duplicates) for r in results]

    def remove(self, ids: Sequence[str]) -> list[str]:
        """Remove documents; the ids that were stored."""
        if not self.uses_idf:
            return self.store.remove(ids)
        with self.store.transaction():
            gone = self.store.get(list(dict.fromkeys(ids)))
            features, counts = _feature_counts([doc.prints for doc in gone])
            self.store.update_doc_freqs(features, -counts, -len(gone))
            return self.store.remove(ids)

    def get(self, doc_id: str) -> StoredDoc | None:
        """A stored document, or None."""
        found = self.store.get([doc_id])
        return found[0] if found else None

    def stats(self) -> dict[str, Any]:
        """``{"documents": n, ...}`` and the settings that decide the answers."""
        return {
            "documents": self.store.count(),
            "method": self.config.method,
            "threshold": self.config.threshold,
            "measure": self.config.measure,
            "config_id": self.config_id,
            "format_version": FORMAT_VERSION,
        }

    # ----------------------------------------------------------------------------------------

    def _count_and_weigh(self, prints: FingerprintBatch, replaced: Sequence[str]) -> Method:
        """Count a batch into the stored IDF model (less the documents it replaces) and return
        the method weighing with the updated model."""
        old = [doc.prints for doc in self.store.get(replaced)] if replaced else []
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

    def _match(
        self, items: list[StoredDoc], *, within_batch: bool, exclude_self: bool
    ) -> list[Result]:
        """Exactly scored near-duplicates of each item among stored (and earlier) documents."""
        pools = self._pools(items, within_batch=within_batch, exclude_self=exclude_self)
        wanted = list(dict.fromkeys(i for pool in pools for i in pool))
        prints = {doc.id: doc.prints for doc in self.store.get(wanted)}
        if within_batch:
            prints |= {item.id: item.prints for item in items}
        results = []
        for item, found in zip(items, pools, strict=True):
            pool = [i for i in found if i in prints]  # a document removed meanwhile is gone
            scored = (self._duplicate(i, item.prints, prints[i]) for i in pool)
            dups = [d for d in scored if d.score >= self.config.threshold]
            dups.sort(key=lambda d: (-d.score, d.id))
            results.append(Result(item.id, dups))
        return results

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

    def _duplicate(self, stored_id: str, new: np.ndarray, stored: np.ndarray) -> Duplicate:
        """dedup's exact measure of a new and a stored fingerprint set, both ways (0.0 if
        either is empty)."""
        if new.size == 0 or stored.size == 0:
            return Duplicate(stored_id, 0.0, 0.0, 0.0)
        shared = float(count_shared(new, stored))
        if self.config.measure == "resemblance":
            score = shared / (new.size + stored.size - shared)
            return Duplicate(stored_id, score, score, score)
        new_in, stored_in = shared / new.size, shared / stored.size
        return Duplicate(stored_id, max(new_in, stored_in), new_in, stored_in)
