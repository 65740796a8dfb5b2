"""Ground truth for judging near-duplicate detection (docs: judge), read from JSONL (.gz ok).

Two forms, told apart by the first record:

- clusters: ``{"id": ..., "cluster": ...}`` per document; two documents are true duplicates
  iff their clusters are equal (a singleton has a cluster of its own);
- labelled pairs: ``{"a": ..., "b": ..., "label": 0|1}``. With an INPUT corpus ``a`` and ``b``
  are document ids; without one they are the two texts themselves, and each pair is judged
  as a two-document comparison.

Every problem raises :class:`~neardup.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from neardup.errors import InputError

_CLUSTER_KEYS = ("id", "cluster")
_PAIR_KEYS = ("a", "b", "label")


@dataclass(frozen=True, slots=True, eq=False)
class ClusterTruth:
    """Cluster of every labelled document id."""

    path: str
    cluster_of: dict[str, str]

    def codes(self, ids: Sequence[str]) -> np.ndarray:
        """Integer cluster codes of ``ids`` (equal codes = true duplicates).

        Raises InputError when a document has no cluster: the truth must cover the input.
        """
        missing = [i for i in ids if i not in self.cluster_of]
        if missing:
            shown = ", ".join(repr(i) for i in missing[:5])
            raise InputError(
                f"{self.path}: no cluster for {len(missing)} input document(s), e.g. {shown}"
            )
        clusters = np.array([self.cluster_of[i] for i in ids], dtype=object)
        if clusters.size == 0:
            return np.zeros(0, dtype=np.int64)
        return np.unique(clusters, return_inverse=True)[1].astype(np.int64)


@dataclass(frozen=True, slots=True, eq=False)
class PairTruth:
    """Labelled pairs: ``a[i]`` and ``b[i]`` (ids or texts), ``labels[i]`` True = duplicates."""

    path: str
    a: list[str]
    b: list[str]
    labels: np.ndarray  # bool
    lines: np.ndarray  # line of every pair in the file, for messages

    def __len__(self) -> int:
        return len(self.a)

    def indices(self, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Document indices of every pair's ``a`` and ``b`` among ``ids`` (InputError if absent)."""
        where = {doc_id: i for i, doc_id in enumerate(ids)}
        out = []
        for side, name in ((self.a, "a"), (self.b, "b")):
            index = np.empty(len(side), dtype=np.int64)
            for k, doc_id in enumerate(side):
                if doc_id not in where:
                    raise InputError(
                        f"{self.path}:{self.lines[k]}: {name}={doc_id!r} is not a document id "
                        "of the input (without INPUT, a and b are the texts themselves)"
                    )
                index[k] = where[doc_id]
            out.append(index)
        return out[0], out[1]


Truth = ClusterTruth | PairTruth


def read_truth(path: str | Path) -> Truth:
    """Cluster or pair truth from a JSONL file (plain or .gz), by the form of its first record."""
    source = str(path)
    records = _records(Path(path))
    first = next(records, None)
    if first is None:
        raise InputError(f"{source}: no records (expected cluster rows or labelled pairs)")
    line, record = first
    if "cluster" in record:
        return _cluster_truth(source, first, records)
    if "label" in record or ("a" in record and "b" in record):
        return _pair_truth(source, first, records)
    raise InputError(
        f"{source}:{line}: neither a cluster row {{id, cluster}} nor a labelled pair "
        "{a, b, label}"
    )


def _cluster_truth(
    source: str, first: tuple[int, dict[str, Any]], rest: Iterator[tuple[int, dict[str, Any]]]
) -> ClusterTruth:
    cluster_of: dict[str, str] = {}
    for line, record in _chain(first, rest):
        doc_id, cluster = (_field(record, k, source, line, "cluster row") for k in _CLUSTER_KEYS)
        if doc_id in cluster_of:
            raise InputError(f"{source}:{line}: id {doc_id!r} is listed twice")
        cluster_of[doc_id] = cluster
    return ClusterTruth(source, cluster_of)


def _pair_truth(
    source: str, first: tuple[int, dict[str, Any]], rest: Iterator[tuple[int, dict[str, Any]]]
) -> PairTruth:
    a: list[str] = []
    b: list[str] = []
    labels: list[bool] = []
    lines: list[int] = []
    for line, record in _chain(first, rest):
        a.append(_field(record, "a", source, line, "labelled pair"))
        b.append(_field(record, "b", source, line, "labelled pair"))
        labels.append(_label(record, source, line))
        lines.append(line)
    return PairTruth(source, a, b, np.array(labels, dtype=bool), np.array(lines, dtype=np.int64))


def _chain(
    first: tuple[int, dict[str, Any]], rest: Iterator[tuple[int, dict[str, Any]]]
) -> Iterator[tuple[int, dict[str, Any]]]:
    yield first
    yield from rest


def _field(record: dict[str, Any], key: str, source: str, line: int, form: str) -> str:
    """A string (or integer) field of a record as a string; InputError when missing."""
    value = record.get(key)
    if value is None or value == "":
        keys = _CLUSTER_KEYS if form == "cluster row" else _PAIR_KEYS
        raise InputError(
            f"{source}:{line}: missing {key!r} (a {form} has {', '.join(repr(k) for k in keys)})"
        )
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{source}:{line}: {key!r} must be a string, not {type(value).__name__}")
    return str(value)


def _label(record: dict[str, Any], source: str, line: int) -> bool:
    value = record.get("label")
    if value is None:
        raise InputError(f"{source}:{line}: missing 'label' (0 or 1)")
    if value not in (0, 1):
        raise InputError(f"{source}:{line}: label={value!r} must be 0 or 1")
    return bool(value)


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` of every non-blank line; InputError for unreadable or bad lines."""
    source = str(path)
    try:
        with _open(path) as fh:
            for line, raw in enumerate(fh, 1):
                if raw.strip():
                    yield line, _parse(raw, source, line)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else f"cannot read: {exc}"
        raise InputError(f"{source}: {reason}") from None


def _open(path: Path) -> IO[str]:
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _parse(raw: str, source: str, line: int) -> dict[str, Any]:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}:{line}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise InputError(f"{source}:{line}: not a JSON object")
    return record


__all__ = ["ClusterTruth", "PairTruth", "Truth", "read_truth"]
