"""The one Method protocol every signature method follows (docs/methods.md).

    fingerprints ──sketch──▶ Signatures ──keys──▶ Keys (shared by likely near-duplicates)
    two signatures ──score──▶ estimated resemblance / containment, or Hamming distance

Signatures of a batch are ragged like fingerprints: one flat uint64 array plus offsets, so
fixed-size sketches (MinHash, SimHash) and growing samples (mod-m, full) share one layout,
one store and one serialization. Every Signatures value carries the fingerprint of the
config that made it; scoring or mixing signatures of different configs raises.

:class:`Method` is the typing contract; :class:`MethodBase` is what every built-in method
derives from: config checking, ``config_id``, ``__repr__`` and the foreign-signature check.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, Self, runtime_checkable

import numpy as np

from neardup.errors import ConfigError, SignatureError
from neardup.text.text_config import TextConfig, config_fingerprint

if TYPE_CHECKING:
    from neardup.fingerprints.shingles import FingerprintBatch
    from neardup.methods.idf import IdfModel

FORMAT_VERSION = 2  # 2: Han shingles marked in the fingerprint, Han clauses shingled apart
_MAGIC = b"ND"
_HEADER = struct.Struct("<2sBB8s")  # magic, format version, method code, config id (8 bytes)

_CONFIG_ID = re.compile(r"[0-9a-f]{16}")

Estimate = Literal["resemblance", "containment", "hamming", "equality"]


@dataclass(frozen=True, slots=True, eq=False)
class Signatures:
    """Signatures of a batch of documents: ``values[offsets[d]:offsets[d+1]]`` is document d's.

    ``config_id`` is the 16-hex-digit fingerprint of the method and text config that made them.
    """

    values: np.ndarray
    offsets: np.ndarray
    config_id: str

    def __len__(self) -> int:
        return self.offsets.size - 1

    def __getitem__(self, d: int) -> np.ndarray:
        return self.values[self.offsets[d] : self.offsets[d + 1]]

    def sizes(self) -> np.ndarray:
        """Number of values in every document's signature."""
        return np.diff(self.offsets)

    @classmethod
    def fixed(cls, matrix: np.ndarray, config_id: str) -> Signatures:
        """Signatures of equal width from an (n_docs, width) matrix."""
        n, width = matrix.shape
        offsets = np.arange(n + 1, dtype=np.int64) * width
        return cls(np.ascontiguousarray(matrix, dtype=np.uint64).ravel(), offsets, config_id)

    def matrix(self, width: int | None = None) -> np.ndarray:
        """The (n_docs, width) view of equal-width signatures.

        ``width``, if given, is the width the signatures must have (SignatureError otherwise)
        and the width of an empty batch, which has no row to tell it: ``(0, width)``; without
        it an empty batch is ``(0, 0)``.
        """
        sizes = self.sizes()
        if sizes.size and not np.all(sizes == sizes[0]):
            raise SignatureError("signatures have different widths; not a fixed-size method")
        actual = int(sizes[0]) if sizes.size else width or 0
        if width is not None and actual != width:
            raise SignatureError(f"signatures have {actual} values, expected {width}")
        return self.values.reshape(len(self), actual)

    def require_same_config(self, other: Signatures) -> None:
        """Raise SignatureError unless both batches were made by the same config."""
        if self.config_id != other.config_id:
            raise SignatureError(
                f"signatures of different configs cannot be compared: "
                f"{self.config_id} vs {other.config_id}"
            )


@dataclass(frozen=True, slots=True, eq=False)
class Keys:
    """Index keys of a batch: document ``docs[i]`` has key ``keys[i]``.

    A key already includes which band / block / table it came from, so equal keys mean
    "candidate pair" whatever produced them.
    """

    docs: np.ndarray  # int64 document index within the batch
    keys: np.ndarray  # uint64


@runtime_checkable
class Method(Protocol):
    """A signature method: sketch fingerprints, derive index keys, score pairs."""

    name: ClassVar[str]
    code: ClassVar[int]  # one byte in the serialized header; never reused
    estimate: ClassVar[Estimate]
    summary: ClassVar[str]  # one line: what the method is good for (``neardup methods``)

    @property
    def config_id(self) -> str:
        """Fingerprint of this method's parameters together with the text config."""
        ...

    def sketch(self, prints: FingerprintBatch) -> Signatures:
        """Signatures of a batch of documents' shingle fingerprint sets."""
        ...

    def keys(self, signatures: Signatures) -> Keys:
        """Keys that near-duplicates share with high probability."""
        ...

    def batch_keys(self, prints: FingerprintBatch) -> Keys:
        """``keys(sketch(prints))``, for a caller that keeps no signatures (a method may
        compute only what its keys use)."""
        ...

    @property
    def weighs_counts(self) -> bool:
        """Whether sketching uses how often a shingle occurs (not only the shingle set)."""
        ...

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Estimate for two documents' signature values (see ``estimate``)."""
        ...

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Estimates for many pairs ``(left[i], right[i])`` of documents of one batch."""
        ...


class MethodBase:
    """What every method class shares: its config, the text config and their fingerprint.

    A subclass declares ``config_type`` (its config dataclass) and the :class:`Method` class
    attributes, and implements ``sketch``, ``keys``, ``score`` and ``score_pairs``.
    """

    __slots__ = ("_config_id", "config", "text")

    name: ClassVar[str]
    config_type: ClassVar[type]

    def __init__(self, config: object | None = None, text: TextConfig | None = None) -> None:
        config = self.config_type() if config is None else config
        if not isinstance(config, self.config_type):
            wanted = self.config_type.__name__
            article = "an" if wanted[0] in "AEIOU" else "a"
            raise ConfigError(f"{self.name} needs {article} {wanted}, not {type(config).__name__}")
        if text is not None and not isinstance(text, TextConfig):
            raise ConfigError(f"text must be a TextConfig, not {type(text).__name__}")
        self.config = config
        self.text = TextConfig() if text is None else text
        self._config_id = config_fingerprint(self.config, self.text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r})"

    @property
    def config_id(self) -> str:
        """Fingerprint of this method's parameters together with the text config."""
        return self._config_id

    def batch_keys(self, prints: FingerprintBatch) -> Keys:
        """``keys(sketch(prints))``, for a caller that keeps no signatures (a method may
        compute only what its keys use)."""
        return self.keys(self.sketch(prints))

    @property
    def weighs_counts(self) -> bool:
        """Whether sketching uses how often a shingle occurs (not only the shingle set)."""
        return False

    def _require_own(self, signatures: Signatures) -> None:
        """Raise SignatureError unless ``signatures`` were made by this method and config."""
        if signatures.config_id != self._config_id:
            raise SignatureError(
                f"{self.name} (config {self._config_id}) was given signatures of another "
                f"config ({signatures.config_id})"
            )

    def _own_matrix(self, signatures: Signatures, width: int) -> np.ndarray:
        """The ``(n_docs, width)`` matrix of signatures made by this method and config."""
        self._require_own(signatures)
        return signatures.matrix(width)


def serialize(method_code: int, config_id: str, values: np.ndarray) -> bytes:
    """One document's signature as versioned bytes: header + little-endian uint64 values."""
    if not _CONFIG_ID.fullmatch(config_id):
        raise SignatureError(f"config id {config_id!r} is not 16 hexadecimal digits")
    header = _HEADER.pack(_MAGIC, FORMAT_VERSION, method_code, bytes.fromhex(config_id))
    return header + np.ascontiguousarray(values, dtype="<u8").tobytes()


def deserialize(blob: bytes) -> tuple[int, str, np.ndarray]:
    """``(method code, config id, values)`` of bytes made by :func:`serialize`."""
    if len(blob) < _HEADER.size or (len(blob) - _HEADER.size) % 8:
        raise SignatureError(f"not a neardup signature: {len(blob)} bytes")
    magic, version, code, config = _HEADER.unpack_from(blob)
    if magic != _MAGIC:
        raise SignatureError("not a neardup signature: bad magic bytes")
    if version != FORMAT_VERSION:
        raise SignatureError(
            f"signature format version {version} is not supported (this is {FORMAT_VERSION})"
        )
    values = np.frombuffer(blob, dtype="<u8", offset=_HEADER.size).astype(np.uint64)
    return code, config.hex(), values


class IdfMethodBase(MethodBase):
    """A method that can weigh features by collection statistics: an IDF model, given as
    ``idf`` or fitted with :meth:`fit`. The model may grow with the collection, so it is not
    part of ``config_id``."""

    __slots__ = ("idf",)

    def __init__(
        self, config: object = None, text: TextConfig | None = None, idf: IdfModel | None = None
    ) -> None:
        super().__init__(config, text)
        self.idf = idf

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config!r}, {self.text!r}, idf={self.idf is not None})"

    def fit(self, batches: Iterable[FingerprintBatch]) -> Self:
        """Fit the IDF model on a collection (one streaming pass); returns self."""
        from neardup.methods.idf import IdfModel  # its kernels: only for the methods that fit one

        self.idf = self._checked_model(IdfModel.fit(batches))
        return self

    def _checked_model(self, model: IdfModel) -> IdfModel:
        """A hook to refuse a model the method cannot use (default: any model will do)."""
        return model
