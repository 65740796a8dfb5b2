"""A persistent collection that each new document is checked against (METHODS §1, §7).

    texts ──fingerprints──▶ signatures ──keys──▶ store.candidates ──exact score──▶ Result

The flow is dedup's, one batch at a time: candidates are the stored documents sharing an index
key (never a scan), and every candidate is verified exactly from the stored shingle
fingerprints with dedup's measure, so a query reports the pairs ``dedup`` would report.
The store keeps the config and signature format version; opening it with another is refused.

Not yet supported: methods needing an IDF model of the collection (SimHash tf-idf, I-Match),
the ``max_bucket`` cap and ``verify=False`` (collections always verify exactly).
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
from neardup.methods.base import FORMAT_VERSION, Method, serialize
from neardup.shingles import fingerprint_batch
from neardup.store.base import CollectionMeta, DuplicateIdError, Store, StoredDoc, repeated_ids

DocInput = tuple[str, str, Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A stored near-duplicate and its exact score (dedup's measure)."""

    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Result:
    """The near-duplicates found for one input document, best first."""

    id: str | None  # the input's id (None for a query text)
    duplicates: list[Duplicate]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "duplicates": [{"id": d.id, "score": d.score} for d in self.duplicates],
        }


def collection_fingerprint(config: DedupConfig, method: Method) -> str:
    """16 hex digits over what decides a collection's answers: method, text, threshold, measure."""
    payload = [method.name, method.config_id, config.threshold, config.measure]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def _method_for(config: DedupConfig) -> Method:
    method = config.build_method()
    if getattr(method, "needs_idf", False):
        raise ConfigError(
            f"method {config.method!r} with an IDF model is not yet supported in collections"
        )
    return method


class Collection:
    """Documents in a :class:`~neardup.store.base.Store`, checked against each other on add."""

    def __init__(self, store: Store, config: DedupConfig, method: Method) -> None:
        self.store = store
        self.config = config
        self.method = method
        self.config_id = collection_fingerprint(config, method)

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
        items = self._prepare([t for _, t, _ in docs], [i for i, _, _ in docs], docs)
        if repeated := repeated_ids(items):
            raise DuplicateIdError(repeated, "repeated within one batch")
        results = self._match(items, within_batch=True, exclude_self=upsert)
        self.store.add(items, upsert=upsert)
        return results

    def query(self, texts: Sequence[str]) -> list[Result]:
        """The stored near-duplicates of each text, storing nothing."""
        items = self._prepare(texts, [f"#{i}" for i in range(len(texts))], None)
        results = self._match(items, within_batch=False, exclude_self=False)
        return [Result(None, r.duplicates) for r in results]

    def remove(self, ids: Sequence[str]) -> list[str]:
        """Remove documents; the ids that were stored."""
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

    def _prepare(
        self, texts: Sequence[str], ids: Sequence[str], docs: Sequence[DocInput] | None
    ) -> list[StoredDoc]:
        """Fingerprints, signatures and keys of a batch, as StoredDocs."""
        prints = fingerprint_batch(list(texts), self.config.text)
        sigs = self.method.sketch(prints)
        keys = self.method.keys(sigs)
        order = np.argsort(keys.docs, kind="stable")
        bounds = np.searchsorted(keys.docs[order], np.arange(len(texts) + 1))
        items = []
        for d, doc_id in enumerate(ids):
            meta = docs[d][2] if docs is not None else None
            items.append(
                StoredDoc(
                    doc_id,
                    None if meta is None else dict(meta),
                    serialize(self.method.code, self.method.config_id, sigs[d]),
                    np.array(prints[d], dtype=np.uint64),
                    keys.keys[order[bounds[d] : bounds[d + 1]]].astype(np.uint64),
                )
            )
        return items

    def _match(
        self, items: list[StoredDoc], *, within_batch: bool, exclude_self: bool
    ) -> list[Result]:
        """Exactly scored near-duplicates of each item among stored (and earlier) documents."""
        all_keys = [item.keys for item in items]
        flat = np.concatenate(all_keys) if all_keys else np.empty(0, np.uint64)
        found = self.store.candidates(flat)
        per_doc: list[dict[str, None]] = []
        start = 0
        for keys in all_keys:
            ids: dict[str, None] = {}
            for bucket in found[start : start + keys.size]:
                ids.update(dict.fromkeys(bucket))
            per_doc.append(ids)
            start += keys.size
        wanted = list(dict.fromkeys(i for ids in per_doc for i in ids))
        stored = {doc.id: doc.prints for doc in self.store.get(wanted)}
        earlier: dict[int, dict[str, None]] = {}  # key -> ids earlier in this batch
        batch_prints = {item.id: item.prints for item in items}
        results = []
        for item, ids in zip(items, per_doc, strict=True):
            if exclude_self:
                ids.pop(item.id, None)
            pool = {i: stored[i] for i in ids if i in stored}
            if within_batch:
                for key in item.keys.tolist():
                    for other in earlier.get(key, ()):
                        pool[other] = batch_prints[other]
            scored = (Duplicate(i, self._score(item.prints, p)) for i, p in pool.items())
            dups = [d for d in scored if d.score >= self.config.threshold]
            dups.sort(key=lambda d: (-d.score, d.id))
            results.append(Result(item.id, dups))
            if within_batch:
                for key in item.keys.tolist():
                    earlier.setdefault(key, {})[item.id] = None
        return results

    def _score(self, a: np.ndarray, b: np.ndarray) -> float:
        """dedup's exact measure of two sorted fingerprint sets (0.0 if either is empty)."""
        if a.size == 0 or b.size == 0:
            return 0.0
        shared = float(count_shared(a, b))
        if self.config.measure == "resemblance":
            return shared / (a.size + b.size - shared)
        return max(shared / a.size, shared / b.size)
