"""A finished dedup run, read back from its output directory (``explain``, ``compare --run``).

The run's settings come from ``summary.json``'s ``parameters`` (:func:`run_config`), the
documents from ``kept`` and ``removed`` (JSONL or Parquet, as the run's ``--format``; files of
the local engine or the Spark engine's directories of part files), the verified pairs from
``pairs``, the template fingerprints from ``templates.npy`` (absent in older runs and Spark
runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.dedup.config import DedupConfig, Pairs
from neardup.dedup.configfile import config_from_dict
from neardup.errors import ConfigError, InputError
from neardup.fingerprints.word_kernels import WORD_HASH_VERSION
from neardup.io.formats import named

DUPLICATE_OF = "_duplicate_of"  # the field of a removed record naming its keeper
# the DedupConfig settings summary.json's parameters record under their own names
_SETTINGS = ("method", "params", "threshold", "measure", "verify", "keep", "chain")
_SETTINGS += ("max_bucket", "template_df", "identity")


@dataclass(frozen=True, slots=True)
class RunDocument:
    """A document of a run: its text and, when removed, the id of the document kept for it."""

    id: str
    text: str
    duplicate_of: str | None


@dataclass(frozen=True, slots=True, eq=False)
class FinishedRun:
    """What a run wrote: its summary, its settings, where its files are."""

    out: Path
    summary: dict[str, Any]
    config: DedupConfig
    fmt: str
    id_field: str
    text_field: str
    template: np.ndarray | None  # sorted fingerprints; None: the run wrote no templates.npy
    rare_words: np.ndarray | None = None  # sorted word hashes; None: no rare_words.npy

    def documents(self, wanted: Iterable[str]) -> tuple[dict[str, RunDocument], dict[str, int]]:
        """The documents of ``wanted`` ids found in ``kept`` and ``removed``, and how many
        documents were removed into each of them (one pass)."""
        wanted = set(wanted)
        found: dict[str, RunDocument] = {}
        kept_for = dict.fromkeys(wanted, 0)
        for name in ("kept", "removed"):
            for record in self._records(name):
                doc_id = _id(record.get(self.id_field))
                keeper = _id(record.get(DUPLICATE_OF)) if name == "removed" else None
                if keeper in kept_for:
                    kept_for[keeper] += 1  # type: ignore[index]
                if doc_id in wanted and doc_id not in found:
                    text = record.get(self.text_field)
                    found[doc_id] = RunDocument(
                        doc_id, text if isinstance(text, str) else "", keeper
                    )
        return found, kept_for

    def pair(self, a: str, b: str) -> dict[str, Any] | None:
        """The verified pair of ``a`` and ``b`` as ``pairs`` records it (``a`` and ``b`` as
        asked: the ``_a_in_b`` / ``_b_in_a`` fields swapped when stored the other way round),
        or None when the run verified no such pair."""
        for record in self._records("pairs"):
            if (record.get("a"), record.get("b")) == (a, b):
                return dict(record)
            if (record.get("a"), record.get("b")) == (b, a):
                return swapped(record)
        return None

    def hub_groups(self) -> dict[str, int]:
        """The run's hubs (:func:`neardup.dedup.keepers.hub_documents`, from its verified
        pairs): for each, how many distinct groups of near copies it holds at the guard."""
        from neardup.dedup.keepers import HUB_GROUPS, groups_held

        index: dict[str, int] = {}
        rows: list[tuple[int, int, float, float, float, float, float]] = []
        for r in self._records("pairs"):
            a = index.setdefault(str(r["a"]), len(index))
            b = index.setdefault(str(r["b"]), len(index))
            rows.append(
                (
                    a,
                    b,
                    float(r["score_a_in_b"]),
                    float(r["score_b_in_a"]),
                    float(r["resemblance"]),
                    float(r["containment_a_in_b"]),
                    float(r["containment_b_in_a"]),
                )
            )
        if not rows:
            return {}
        table = np.array(rows)
        left, right = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
        s_lr, s_rl = table[:, 2], table[:, 3]
        pairs = Pairs(left, right, np.maximum(s_lr, s_rl), s_lr, s_rl, *table[:, 4:].T)
        held = groups_held(len(index), pairs, self.config.removal_guard)
        ids = list(index)
        return {ids[d]: int(held[d]) for d in np.flatnonzero(held >= HUB_GROUPS)}

    def _records(self, name: str) -> Iterator[Mapping[str, Any]]:
        suffix = self.fmt  # an output format's name is its files' extension
        file, folder = self.out / f"{name}.{suffix}", self.out / name
        if file.is_file():
            parts = [file]
        elif folder.is_dir():  # the Spark engine's part files
            parts = sorted(p for p in folder.iterdir() if p.is_file() and p.name[0] not in "._")
        else:
            raise InputError(f"{self.out}: no {name}.{suffix}: not a whole neardup dedup run")
        for part in parts:
            yield from _read(part, self.fmt)


def swapped(record: Mapping[str, Any]) -> dict[str, Any]:
    """A pair record with ``a`` and ``b`` exchanged, every ``_a_in_b`` / ``_b_in_a`` field
    and ``contained`` with them."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key.endswith("_a_in_b"):
            key = key.removesuffix("_a_in_b") + "_b_in_a"
        elif key.endswith("_b_in_a"):
            key = key.removesuffix("_b_in_a") + "_a_in_b"
        out[key] = value
    out["a"], out["b"] = record.get("b"), record.get("a")
    if record.get("contained") in ("a_in_b", "b_in_a"):
        out["contained"] = "b_in_a" if record["contained"] == "a_in_b" else "a_in_b"
    return out


def open_run(out: str | Path) -> FinishedRun:
    """The run written to ``out``; InputError when ``out`` holds no run."""
    out = Path(out)
    path = out / "summary.json"
    if not path.is_file():
        why = "no such directory" if not out.exists() else "no summary.json"
        raise InputError(f"{out}: not the output directory of a neardup dedup run ({why})")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
        parameters = summary["parameters"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a summary of a neardup dedup run ({exc})") from None
    config = run_config(parameters, str(path))
    return FinishedRun(
        out,
        summary,
        config,
        str(parameters.get("format", "jsonl")),
        str(parameters.get("id_field", "id")),
        str(parameters.get("text_field", "text")),
        _hashes(out / "templates.npy"),
        _hashes(out / "rare_words.npy") if words_hashed_alike(summary) else None,
    )


def words_hashed_alike(summary: Mapping[str, Any]) -> bool:
    """Whether the run hashed its rare words (``rare_words.npy``) as this version does: a
    run of another version's are not compared with words hashed here."""
    return summary.get("word_hash") == WORD_HASH_VERSION


def _hashes(path: Path) -> np.ndarray | None:
    """The sorted uint64 hashes a run saved to ``path`` (None: it wrote none)."""
    if not path.is_file():
        return None
    try:
        return np.load(path, allow_pickle=False).astype(np.uint64, copy=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a file of hashes ({exc})") from None


def run_config(parameters: Mapping[str, Any], source: str = "summary.json") -> DedupConfig:
    """The DedupConfig of a run from summary.json's ``parameters`` (the inverse of
    :func:`neardup.engines.local.pipeline.run_parameters`); InputError naming what is wrong."""
    try:
        settings: dict[str, Any] = {k: parameters[k] for k in _SETTINGS if k in parameters}
        guard = parameters.get("guard")  # the guard in force: the threshold when none was set
        settings["guard"] = None if guard == parameters.get("threshold") else guard
        settings["text"] = {
            "canon": parameters["canonicalization"],
            "shingle": parameters["shingles"],
        }
        return config_from_dict(settings, f"{source}: parameters")
    except (KeyError, TypeError) as exc:
        raise InputError(f"{source}: parameters lack {exc}") from None
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def _read(path: Path, fmt: str) -> Iterator[Mapping[str, Any]]:
    """The records of one output file, read by its format."""
    return named(fmt).read_output(path)


def _id(value: Any) -> str | None:
    """An id as the readers make it: a string or a number, as a string."""
    if value is None or isinstance(value, bool):
        return None
    return str(value)
