"""``neardup dedup`` on files: stream the inputs, deduplicate, write every output.

Outputs in the output directory (each written to a temporary name and renamed into place,
so an interrupted run leaves no half file):

- ``pairs``: one record per verified pair — ``a``, ``b`` (ids), ``score``, ``resemblance``,
  ``containment_a_in_b``, ``containment_b_in_a`` and ``contained`` (``"a_in_b"`` /
  ``"b_in_a"`` when that containment reaches the threshold, else null);
- ``clusters``: ``cluster``, ``ids``, ``keep`` for every cluster of two or more;
- ``kept`` / ``removed``: the input records, every field preserved (``removed`` records get
  ``_duplicate_of``: the id kept instead), from a second streaming pass over the inputs;
- ``summary.json``: counts, parameters, timings; ``report.html``: the same, with charts and
  the top pairs side by side.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neardup.config import config_fingerprint
from neardup.corpus import BadRecord, Document, read_documents
from neardup.dedup import DedupConfig, DedupResult, deduplicate
from neardup.dedup.cluster import ClusterTable, cluster_table
from neardup.errors import InputError
from neardup.records import RecordWriter

Format = Literal["jsonl", "parquet"]
SHOWN_IDS = 20  # ids listed in summary.json for empty documents and bad records
REPORT_PAIRS = 20


@dataclass(frozen=True, slots=True)
class Inputs:
    """Where the documents are and how to read them."""

    paths: tuple[str, ...]
    id_field: str = "id"
    text_field: str = "text"
    skip_bad: bool = False

    def read(self, on_bad: Callable[[BadRecord], None] | None = None) -> Iterator[Document]:
        return read_documents(
            list(self.paths),
            id_field=self.id_field,
            text_field=self.text_field,
            skip_bad=self.skip_bad,
            on_bad=on_bad,
        )


def run_dedup(
    inputs: Inputs,
    out_dir: str | Path,
    config: DedupConfig,
    fmt: Format = "jsonl",
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Deduplicate the inputs into ``out_dir``; returns the summary (also summary.json)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    bad: list[BadRecord] = []
    field_values: list[Any] = []
    field = config.keep.field if config.keep.kind == "field" else None

    def texts() -> Iterator[tuple[str, str]]:
        for doc in inputs.read(bad.append):
            if field is not None:
                field_values.append(doc.record.get(field))
            yield doc.id, doc.text

    result = deduplicate(
        texts(),
        config,
        progress=progress,
        field_values=lambda: np.array(field_values, dtype=object),
    )
    clock = time.perf_counter()
    clusters = cluster_table(result.labels, result.keepers)
    report_docs = _report_documents(result)
    shown = _write_outputs(result, clusters, inputs, out, fmt, config, report_docs)
    result.timings["outputs"] = time.perf_counter() - clock
    summary = _summary(result, clusters, inputs, config, bad, fmt, time.perf_counter() - started)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    _write_report(result, shown, config, summary, out)
    return summary


def _report_documents(result: DedupResult) -> set[int]:
    """Documents of the top pairs shown side by side in the report."""
    p = result.pairs
    order = np.argsort(-p.score, kind="stable")[:REPORT_PAIRS]
    return set(p.left[order].tolist()) | set(p.right[order].tolist())


def _write_outputs(
    result: DedupResult,
    clusters: ClusterTable,
    inputs: Inputs,
    out: Path,
    fmt: Format,
    config: DedupConfig,
    wanted: set[int],
) -> dict[int, str]:
    """Every output file but the summary and report; returns the texts the report needs."""
    ids = result.ids
    suffix = "jsonl" if fmt == "jsonl" else "parquet"
    with RecordWriter(out / f"pairs.{suffix}", fmt) as writer:
        for record in _pair_records(result, config.threshold):
            writer.write(record)
    with RecordWriter(out / f"clusters.{suffix}", fmt) as writer:
        for number, cluster in enumerate(clusters):
            writer.write(
                {
                    "cluster": number,
                    "ids": [ids[i] for i in cluster.members.tolist()],
                    "keep": ids[cluster.keep],
                }
            )
    texts: dict[int, str] = {}
    keeper_of = result.keepers[result.labels]
    with (
        RecordWriter(out / f"kept.{suffix}", fmt) as kept,
        RecordWriter(out / f"removed.{suffix}", fmt) as removed,
    ):
        for i, doc in enumerate(inputs.read()):
            if i in wanted:
                texts[i] = doc.text
            if result.removed[i]:
                removed.write(doc.record | {"_duplicate_of": ids[keeper_of[i]]})
            else:
                kept.write(doc.record)
    return texts


def _pair_records(result: DedupResult, threshold: float) -> Iterator[dict[str, Any]]:
    p, ids = result.pairs, result.ids
    for k in range(len(p)):
        c_ab, c_ba = float(p.containment_lr[k]), float(p.containment_rl[k])
        contained = None
        if max(c_ab, c_ba) >= threshold:
            contained = "a_in_b" if c_ab >= c_ba else "b_in_a"
        yield {
            "a": ids[p.left[k]],
            "b": ids[p.right[k]],
            "score": float(p.score[k]),
            "resemblance": float(p.resemblance[k]),
            "containment_a_in_b": c_ab,
            "containment_b_in_a": c_ba,
            "contained": contained,
        }


def _summary(
    result: DedupResult,
    clusters: ClusterTable,
    inputs: Inputs,
    config: DedupConfig,
    bad: Sequence[BadRecord],
    fmt: Format,
    seconds: float,
) -> dict[str, Any]:
    empty = result.empty
    return {
        "documents": len(result.ids),
        "kept": int((~result.removed).sum()),
        "removed": int(result.removed.sum()),
        "clusters": len(clusters),
        "largest_cluster": int(clusters.sizes.max()) if len(clusters) else 0,
        "candidate_pairs": result.candidates,
        "verified_pairs": len(result.pairs),
        "capped_buckets": result.capped_buckets,
        "empty_documents": int(empty.size),
        "empty_ids": [result.ids[i] for i in empty[:SHOWN_IDS].tolist()],
        "bad_records": len(bad),
        "bad_examples": [str(b) for b in bad[:SHOWN_IDS]],
        "warnings": result.weak,
        "inputs": list(inputs.paths),
        "parameters": _parameters(config, fmt),
        "config_id": config_fingerprint(config.text),
        "timings_seconds": {k: round(v, 3) for k, v in result.timings.items()}
        | {"total": round(seconds, 3)},
    }


def _parameters(config: DedupConfig, fmt: Format) -> dict[str, Any]:
    return {
        "method": config.method,
        "params": dict(config.params),
        "threshold": config.threshold,
        "measure": config.measure,
        "verify": config.verify,
        "keep": str(config.keep),
        "guard": config.threshold if config.guard is None else config.guard,
        "chain": config.chain,
        "max_bucket": config.max_bucket,
        "format": fmt,
        "canonicalization": dataclasses.asdict(config.text.canon),
        "shingles": dataclasses.asdict(config.text.shingle),
    }


def _write_report(
    result: DedupResult,
    texts: dict[int, str],
    config: DedupConfig,
    summary: dict[str, Any],
    out: Path,
) -> None:
    from neardup.dedup.report import render_report

    page = render_report(result, texts, config, summary=summary, top=REPORT_PAIRS)
    tmp = out / ".report.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out / "report.html")
