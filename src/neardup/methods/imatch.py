"""I-Match (Kolcz & Chowdhury; Chowdhury et al. 2002), docs/methods.md, I-Match.

One 64-bit signature per document: keep only the document's features whose IDF lies in a
middle band of the collection's IDF range, and hash the sorted set of kept features. Equal
signatures ⇒ duplicates; the signature itself is the index key.

Band rule (exact): with ``M = model.max_idf()`` — the IDF of the collection's rarest features,
``ln((1 + N) / (1 + min df)) + 1`` — a feature ``f`` is kept iff

    low · M  ≤  idf(f)  ≤  high · M        (defaults low = 0.2, high = 0.9)

so the most common features (stop-word-like, low IDF) and the rarest ones (typos, names,
one-off words, high IDF) are dropped; features the model has never seen have an IDF above
``M`` and are always dropped. So a typo, a changed rare word or punctuation leaves the kept
set as it was; a changed mid-frequency word does not.

Signature: ``xxh3_64`` (seed 0) of the kept features as sorted little-endian ``uint64`` bytes;
a real signature that happens to be 0 is stored as 1, because 0 is reserved: a document with
no feature in the band gets signature 0, emits no key, and the batch raises one
:class:`~neardup.errors.WeakSignatureWarning` with the count. Scores: 1.0 for equal non-zero
signatures, else 0.0.

Features: I-Match classically uses single words; we recommend ``ShingleConfig(size=1)`` (word
1-shingles), fitting the IDF model on the collection with that same text config. With the
default 4-word shingles almost every feature is rare, so the band keeps little (on the shared
neardup-bench 85–98 % of documents kept nothing).

What it finds: copies that differ only in what canonicalization removes (markup, case,
punctuation, stop words, spacing). Any in-band word changed, added or dropped changes the
signature: on neardup-bench (en, words, default band ~175 kept words per document) it matched
100 % of exact copies but 0 % of light edits (1–5 % of words). Fewer kept words make it more
tolerant — band [0.1, 0.3] (~35 common words per document) matched 48 % of light edits with
no false match on the hard negatives — at the price of more chance collisions on short texts.

The IDF model is not part of ``config_id`` (it grows with the collection), but signatures
depend on it: a grown model can move features in or out of the band. Fit the model on a
representative collection and keep it (``IdfModel.to_bytes``) while signatures are compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from neardup.errors import ConfigError, InputError, SignatureError, warn_weak
from neardup.fingerprints.hash_kernels import HASH_XXH3, hash_spans
from neardup.fingerprints.shingles import FingerprintBatch
from neardup.methods.base import Estimate, IdfMethodBase, Keys, Signatures
from neardup.methods.idf import IdfModel


@dataclass(frozen=True, slots=True)
class IMatchConfig:
    """The IDF band ``[low, high]``, as fractions of the collection's largest IDF."""

    low: float = 0.2
    high: float = 0.9

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{name}={value!r} must be a number in [0, 1]")
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name}={value!r} must be a number in [0, 1]")
        if self.low > self.high:
            raise ConfigError(f"low={self.low!r} must not exceed high={self.high!r}")


class IMatch(IdfMethodBase):
    """I-Match signatures over an IDF band (see the module docstring).

    Needs an :class:`IdfModel` of the collection: pass ``idf=model`` or call :meth:`fit`.
    """

    name: ClassVar[str] = "imatch"
    code: ClassVar[int] = 7
    estimate: ClassVar[Estimate] = "equality"
    summary: ClassVar[str] = (
        "one hash of the mid-IDF words per document; equal signatures = duplicates up to "
        "formatting, punctuation and stop words (needs an IDF model of the collection)"
    )
    config_type: ClassVar[type] = IMatchConfig

    needs_idf: ClassVar[bool] = True  # the IDF band is I-Match's whole point

    def _checked_model(self, model: IdfModel) -> IdfModel:
        _require_documents(model)
        return model

    def band(self) -> tuple[float, float]:
        """The kept IDF interval ``(low · M, high · M)`` of the current model."""
        model = self._model()
        top = model.max_idf()
        return self.config.low * top, self.config.high * top

    def in_band(self, features: np.ndarray) -> np.ndarray:
        """Boolean mask of the features whose IDF lies in the band."""
        lo, hi = self.band()
        idf = self._model().idf(features)
        return (idf >= lo) & (idf <= hi)

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """One signature per document; 0 (with a warning) where no feature is in the band."""
        values = np.asarray(prints.values, dtype=np.uint64)
        keep = self.in_band(values)
        kept = np.ascontiguousarray(values[keep], dtype="<u8")
        kept_before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
        offsets = kept_before[np.asarray(prints.offsets, dtype=np.int64)]
        sigs = _hash_sets(kept, offsets)
        _warn_empty(sigs)
        return Signatures.fixed(sigs[:, None], self.config_id)

    def keys(self, signatures: Signatures) -> Keys:
        """The signature itself, for every document with a non-zero one."""
        sigs = self._own_matrix(signatures, 1)[:, 0]
        docs = np.flatnonzero(sigs).astype(np.int64)
        return Keys(docs, sigs[docs])

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """1.0 when both signatures are equal and non-zero, else 0.0."""
        a64 = np.asarray(a, dtype=np.uint64).reshape(-1)
        b64 = np.asarray(b, dtype=np.uint64).reshape(-1)
        if a64.size != 1 or b64.size != 1:
            raise SignatureError(f"I-Match signatures are one value: {a64.size}, {b64.size}")
        return float(a64[0] == b64[0] and a64[0] != 0)

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """1.0 / 0.0 for the pairs ``(left[i], right[i])`` (``float64``)."""
        sigs = self._own_matrix(signatures, 1)[:, 0]
        a = sigs[np.asarray(left, dtype=np.int64)]
        b = sigs[np.asarray(right, dtype=np.int64)]
        return ((a == b) & (a != 0)).astype(np.float64)

    def _model(self) -> IdfModel:
        if self.idf is None:
            raise ConfigError(
                "I-Match needs an IdfModel of the collection: pass IMatch(config, text, "
                "idf=model) or call .fit(batches) before sketching"
            )
        _require_documents(self.idf)
        return self.idf


def _require_documents(model: IdfModel) -> None:
    if model.n_docs == 0:
        raise InputError("I-Match needs collection statistics, but the IDF model has no documents")


def _hash_sets(kept: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """xxh3_64 of each document's kept features as bytes; 0 if none kept, 1 for a hash of 0."""
    buf = kept.view(np.uint8)
    sigs = hash_spans(HASH_XXH3, buf, offsets[:-1] * 8, offsets[1:] * 8, 0)
    sigs[sigs == 0] = 1
    sigs[offsets[1:] == offsets[:-1]] = 0
    return sigs


def _warn_empty(sigs: np.ndarray) -> None:
    """One WeakSignatureWarning for the batch if any document kept no feature."""
    empty = int(np.count_nonzero(sigs == 0))
    if empty:
        warn_weak(
            f"{empty} of {sigs.size} documents have no feature in the I-Match IDF band: "
            f"their signature is 0 and matches nothing (too short, or only very common / "
            f"very rare words)"
        )


__all__ = ["IMatch", "IMatchConfig"]
