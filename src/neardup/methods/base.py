"""The one Method protocol every signature method follows (METHODS §6, DESIGN "One flow").

    fingerprints ──sketch──▶ Signatures ──keys──▶ Keys (shared by likely near-duplicates)
    two signatures ──score──▶ estimated resemblance / containment, or Hamming distance

Signatures of a batch are ragged like fingerprints: one flat uint64 array plus offsets, so
fixed-size sketches (MinHash, SimHash) and growing samples (mod-m, full) share one layout,
one store and one serialization. Every Signatures value carries the fingerprint of the
config that made it; scoring or mixing signatures of different configs raises.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from neardup.errors import SignatureError

if TYPE_CHECKING:
    from neardup.shingles import FingerprintBatch

FORMAT_VERSION = 1
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

    def matrix(self) -> np.ndarray:
        """The (n_docs, width) view of equal-width signatures."""
        sizes = self.sizes()
        if sizes.size and not np.all(sizes == sizes[0]):
            raise SignatureError("signatures have different widths; not a fixed-size method")
        width = int(sizes[0]) if sizes.size else 0
        return self.values.reshape(len(self), width)

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

    def score(self, a: np.ndarray, b: np.ndarray) -> float:
        """Estimate for two documents' signature values (see ``estimate``)."""
        ...

    def score_pairs(
        self, signatures: Signatures, left: np.ndarray, right: np.ndarray
    ) -> np.ndarray:
        """Estimates for many pairs ``(left[i], right[i])`` of documents of one batch."""
        ...


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
