"""``neardup dedup`` on files: stream the inputs, deduplicate, write every output.

Outputs in the output directory, which always holds one whole run: every file is written into
a staging directory beside it that replaces it at the end
(:mod:`neardup.engines.local.outdir`), so an
interrupted run leaves the earlier output as it was and no file of another ``--format`` stays
beside the new ones:

- ``pairs``: one record per verified pair — ``a``, ``b`` (ids), ``score`` (the larger of
  ``score_a_in_b`` and ``score_b_in_a``: the run's measure on content shingles, templates
  discounted), the plain ``resemblance``, ``containment_a_in_b``, ``containment_b_in_a``, and
  ``contained`` (``"a_in_b"`` / ``"b_in_a"``: which document the other holds more of);
- ``clusters``: ``cluster``, ``ids``, ``keep`` for every cluster of two or more;
- ``kept`` / ``removed``: the input records, every field preserved (``removed`` records get
  ``_duplicate_of``: the id kept instead, which holds the removed one), from a second
  streaming pass over the inputs that copies JSONL lines as stored
  (:mod:`neardup.engines.local.copyout`);
- ``review.jsonl``: one record per removal, weakest first (:mod:`neardup.engines.local.review`);
- ``rare_words.npy``: the sorted uint64 hashes of the rare words of the identity check
  (:mod:`neardup.dedup.identity`), for ``explain``;
- ``templates.npy``: the sorted uint64 fingerprints of the shingles discounted as templates
  (a NumPy array; empty without templates), so that a pair can be scored again as the run
  scored it (``neardup explain``, ``neardup compare --run``);
- ``summary.json``: counts, parameters, timings; ``report.html``: the same, with charts, the
  top pairs and the first removals to review side by side.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numba
import numpy as np

from neardup.dedup import DedupConfig, DedupResult, deduplicate
from neardup.dedup.cluster import ClusterTable, cluster_table
from neardup.engines.local.copyout import Lines, Places, Rows, input_records
from neardup.engines.local.outdir import staged_output, sync_files
from neardup.engines.local.review import (
    MAX_REVIEWED,
    PassageFinder,
    Removal,
    removals,
    review_record,
    texts_needed,
)
from neardup.engines.local.review import (
    load_kernels as load_review_kernels,
)
from neardup.errors import InputError
from neardup.fingerprints.passages import Passages
from neardup.fingerprints.word_kernels import WORD_HASH_VERSION
from neardup.io.blocks import BatchSource
from neardup.io.formats import batch_source
from neardup.io.readers import DEFAULT_MAX_TEXT_BYTES, BadRecord, Document, Skipped, read_documents
from neardup.io.writers import RecordWriter
from neardup.text.text_config import config_fingerprint
from neardup.util.workers import kernel_pool

Format = str  # the name of an output format of neardup.io.formats: "jsonl", "parquet"
SHOWN_IDS = 20  # ids listed in summary.json for empty documents and bad records
REPORT_PAIRS = 20
REPORT_REVIEW = 10  # removals shown side by side in the report
# a run of this many documents pairs them long enough to load later kernels beside it
PRELOAD_DOCUMENTS = 20_000


@dataclass(frozen=True, slots=True)
class Inputs:
    """Where the documents are and how to read them."""

    paths: tuple[str, ...]
    id_field: str = "id"
    text_field: str = "text"
    skip_bad: bool = False
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES

    def read(
        self,
        on_bad: Callable[[BadRecord], None] | None = None,
        on_skip: Callable[[Skipped], None] | None = None,
        on_input: Callable[[int], None] | None = None,
    ) -> Iterator[Document]:
        return read_documents(
            list(self.paths), on_bad=on_bad, on_skip=on_skip, on_input=on_input, **self._options()
        )

    def _options(self) -> dict[str, Any]:
        """How to read each record, as both readers take it."""
        return {
            "id_field": self.id_field,
            "text_field": self.text_field,
            "skip_bad": self.skip_bad,
            "max_text_bytes": self.max_text_bytes,
        }

    def blocks(
        self,
        on_bad: Callable[[BadRecord], None],
        on_skip: Callable[[Skipped], None],
        on_documents: Callable[[int, list[int]], None],
        lines_per_block: int,
    ) -> BatchSource | None:
        """The documents as :meth:`read` gives them, as jobs reading a block each on worker
        threads, when the inputs' format reads so (JSONL); else None."""
        return batch_source(
            list(self.paths),
            on_bad=on_bad,
            on_skip=on_skip,
            on_documents=on_documents,
            lines_per_block=lines_per_block,
            **self._options(),
        )


def run_dedup(
    inputs: Inputs,
    out_dir: str | Path,
    config: DedupConfig,
    fmt: Format = "jsonl",
    progress: Callable[[int], None] | None = None,
    stage: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Deduplicate the inputs into ``out_dir``; returns the summary (also summary.json).

    ``out_dir`` is checked and a staging directory made before any work; it replaces
    ``out_dir`` only when every output is written (see :mod:`neardup.engines.local.outdir`).
    ``progress`` is called with the size of each batch read, ``stage`` with the name of
    each stage as it starts.
    """
    with staged_output(Path(out_dir), inputs.paths) as out:
        return _run(inputs, out, config, fmt, progress, stage or (lambda _: None))


def _run(
    inputs: Inputs,
    out: Path,
    config: DedupConfig,
    fmt: Format,
    progress: Callable[[int], None] | None,
    stage: Callable[[str], None],
) -> dict[str, Any]:
    started = time.perf_counter()
    bad: list[BadRecord] = []
    skipped: list[Skipped] = []
    field_values: list[Any] = []
    field = config.keep.field if config.keep.kind == "field" else None
    places = Places()

    def texts() -> Iterator[tuple[str, str]]:
        for doc in inputs.read(bad.append, skipped.append, places.start_input):
            places.add(doc.line)
            if field is not None:
                field_values.append(doc.record.get(field))
            yield doc.id, doc.text

    documents: Iterable[tuple[str, str]] | BatchSource = texts()
    blocks = None
    if field is None:  # parsed on the worker threads, when the format reads so
        blocks = inputs.blocks(bad.append, skipped.append, places.add_lines, config.batch_size)
    if blocks is not None:
        documents = blocks
    # the other core loads the kernels of the review and the report while a large run
    # pairs its documents; the outputs are written on this thread and reach the disk there
    with ThreadPoolExecutor(1, thread_name_prefix="neardup-beside") as beside:
        loaded: list[Future[None]] = []

        def preload(documents: int) -> None:
            if documents >= PRELOAD_DOCUMENTS:
                loaded.append(beside.submit(_load_kernels, config))

        result = deduplicate(
            documents,
            config,
            progress=progress,
            field_values=lambda: _field_values(field_values, field),
            workdir=out,  # the spill too stays in the staging directory: gone with it
            stage=stage,
            fingerprinted=preload,
        )
        stage("writing the outputs")
        clock = time.perf_counter()
        clusters = cluster_table(result.labels, result.keepers)
        review = removals(result)
        report_docs = _report_documents(result) | texts_needed(review, REPORT_REVIEW, MAX_REVIEWED)
        if report_docs and not loaded:  # loaded beside the writing, when the report shows text
            loaded.append(beside.submit(_load_report, config))
        shown: dict[int, str] = {}  # the texts the review and the report need
        # the review's passages are found on every core as the texts they need are read
        with kernel_pool(numba.get_num_threads()) as pool:
            finder = PassageFinder(review, shown, config.text, MAX_REVIEWED, pool, report_docs)
            _write_outputs(
                result, clusters, inputs, places, out, fmt, config, report_docs, shown, finder
            )
            reviewed = _write_review(result, review, finder, out)
        synced = beside.submit(sync_files, out)
        result.timings["outputs"] = time.perf_counter() - clock
        seconds = time.perf_counter() - started
        summary = _summary(result, clusters, inputs, config, bad, fmt, seconds)
        summary |= _skipped_summary(skipped)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        stage("writing the report")
        for future in loaded:
            future.result()
        _write_report(result, shown, reviewed, config, summary, out)
        synced.result()
    return summary


def _field_values(values: list[Any], field: str | None) -> np.ndarray:
    """The values of the ``--keep field:NAME`` field; InputError when no record has it."""
    if values and all(v is None for v in values):
        raise InputError(f"--keep field:{field}: no record has a value in field {field!r}")
    return np.array(values, dtype=object)


def _skipped_summary(skipped: Sequence[Skipped]) -> dict[str, Any]:
    """Empty inputs and unread files of directories, for summary.json (and as warnings)."""
    return {
        "empty_inputs": [s.source for s in skipped if not s.files],
        "skipped_files": sum(len(s.files) for s in skipped),
        "input_warnings": [str(s) for s in skipped[:SHOWN_IDS]],
    }


def _report_documents(result: DedupResult) -> set[int]:
    """Documents of the top pairs shown side by side in the report."""
    p = result.pairs
    order = np.argsort(-p.score, kind="stable")[:REPORT_PAIRS]
    return set(p.left[order].tolist()) | set(p.right[order].tolist())


def _write_outputs(
    result: DedupResult,
    clusters: ClusterTable,
    inputs: Inputs,
    places: Places,
    out: Path,
    fmt: Format,
    config: DedupConfig,
    wanted: set[int],
    texts: dict[int, str],
    finder: PassageFinder,
) -> None:
    """Every output file but the review, the summary and the report; the ``wanted`` texts
    into ``texts``, the ``finder`` told as they are read."""
    ids = result.ids
    suffix = fmt  # an output format's name is its files' extension
    with RecordWriter(out / f"pairs.{suffix}", fmt, sync=False) as writer:
        for record in _pair_records(result, config.threshold):
            writer.write(record)
    with RecordWriter(out / f"clusters.{suffix}", fmt, sync=False) as writer:
        for number, cluster in enumerate(clusters):
            writer.write(
                {
                    "cluster": number,
                    "ids": [ids[i] for i in cluster.members.tolist()],
                    "keep": ids[cluster.keep],
                }
            )
    keep_of = result.keep_of.tolist()
    records = input_records(
        inputs.paths, places, ids, inputs.id_field, inputs.text_field, output=fmt
    )
    with (
        RecordWriter(out / f"kept.{suffix}", fmt, sync=False) as kept,
        RecordWriter(out / f"removed.{suffix}", fmt, sync=False) as removed,
    ):
        i = 0
        for record in records:
            if isinstance(record, Lines | Rows):  # blocks: lines, Arrow rows as stored
                span = range(i, i + len(record))
                texts.update(
                    (d, record.text(d - i, inputs.text_field)) for d in span if d in wanted
                )
                keepers = [ids[keep_of[d]] if keep_of[d] != d else None for d in span]
                stay, gone = record.split(keepers)
                if isinstance(record, Rows):
                    kept.write_arrow(stay)
                    removed.write_arrow(gone)
                else:
                    kept.write_lines(stay, count=len(record) - len(gone))
                    removed.write_lines(gone)
                i += len(record)
                finder.read(i)
                continue
            if i in wanted:
                texts[i] = record.text(inputs.text_field)
            if keep_of[i] != i:
                removed.write(record.fields(ids[keep_of[i]]))
            else:
                kept.write(record.fields())
            i += 1
            finder.read(i)


def _write_review(
    result: DedupResult, rows: list[Removal], finder: PassageFinder, out: Path
) -> list[tuple[Removal, Passages | None]]:
    """``review.jsonl``, ``templates.npy`` and ``rare_words.npy``; returns the first
    removals, with their missing passages, for the report."""
    clock = time.perf_counter()
    shown = []
    with RecordWriter(out / "review.jsonl", "jsonl", sync=False) as writer:
        for row, missing in zip(rows, finder.found(), strict=True):
            writer.write(review_record(row, result.ids, missing))
            if len(shown) < REPORT_REVIEW:
                shown.append((row, missing))
    template = result.template if result.template is not None else np.empty(0, np.uint64)
    np.save(out / "templates.npy", np.asarray(template, dtype=np.uint64))
    if result.rare_words is not None:
        np.save(out / "rare_words.npy", np.asarray(result.rare_words, dtype=np.uint64))
    result.timings["review"] = time.perf_counter() - clock
    return shown


def _pair_records(result: DedupResult, threshold: float) -> Iterator[dict[str, Any]]:
    """One record per verified pair (each column made Python values at once, not a NumPy
    scalar indexed per pair and measure)."""
    p, ids = result.pairs, result.ids
    scores = (p.score, p.score_lr, p.score_rl, p.resemblance, p.containment_lr, p.containment_rl)
    columns = [np.asarray(column, dtype=np.float64).tolist() for column in scores]
    rows = zip(p.left.tolist(), p.right.tolist(), *columns, strict=True)
    for left, right, score, s_ab, s_ba, resemblance, c_ab, c_ba in rows:
        contained = None
        if max(s_ab, s_ba) >= threshold and s_ab != s_ba:
            contained = "a_in_b" if s_ab > s_ba else "b_in_a"
        yield {
            "a": ids[left],
            "b": ids[right],
            "score": score,
            "score_a_in_b": s_ab,
            "score_b_in_a": s_ba,
            "resemblance": resemblance,
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
        "template_shingles": result.template_shingles,
        "guarantee": guarantee(config),
        "declined_pairs": result.declined,
        "empty_documents": int(empty.size),
        "empty_ids": [result.ids[i] for i in empty[:SHOWN_IDS].tolist()],
        "bad_records": len(bad),
        "bad_examples": [str(b) for b in bad[:SHOWN_IDS]],
        "warnings": result.weak,
        "inputs": list(inputs.paths),
        "parameters": run_parameters(config, fmt) | input_fields(inputs),
        "config_id": config_fingerprint(config.text),
        "word_hash": WORD_HASH_VERSION,  # how rare_words.npy's words are hashed
        "timings_seconds": {k: round(v, 3) for k, v in result.timings.items()}
        | {"total": round(seconds, 3)},
    }


def guarantee(config: DedupConfig) -> str:
    """The removal rule of the run, in words (summary.json and the report)."""
    guard = config.removal_guard
    if not config.verify:
        return (
            f"a document is removed only when the method's estimate of its {config.measure} "
            f"with the document kept instead is at least {guard:g} (estimated, not verified)"
        )
    if config.measure == "containment":
        held = f"at least {guard:.0%} of it as written (exact containment)"
    else:
        held = f"it at a resemblance of at least {guard:g} as written"
    rules = [f"a document is removed only into a kept document that holds {held}"]
    if config.identity:
        rules.append(
            "and names it: a keeper lacking 3 or more of a document's rare words (words of 2 "
            "or more documents but fewer than 3 groups of copies: names, holders, hosts) and "
            "holding no more than a fifth of them keeps it, and a document with 3 or more words "
            "of its own (used by no other document, more than once by it) is named by none; "
            "nor into a keeper that translates it (adds another language's function words, "
            "or text in letters or a script it is not written in); unless the two are "
            "near-identical as written"
        )
    rules.append(
        "a document holding documents of several distinct groups (a bundle, a digest) "
        "absorbs none of them"
    )
    if config.template_df:
        rules.append(
            f"shared templates (shingles of {config.template_df} or more groups) may keep a "
            "document, never remove one"
        )
    return "; ".join(rules)


def input_fields(inputs: Inputs) -> dict[str, str]:
    """The fields of the records that hold each document's id and text (summary.json's
    parameters: ``neardup explain`` reads the texts back from kept and removed)."""
    return {"id_field": inputs.id_field, "text_field": inputs.text_field}


def run_parameters(config: DedupConfig, fmt: Format) -> dict[str, Any]:
    """The settings of a run as summary.json records them (both engines)."""
    return {
        "method": config.method,
        "params": dict(config.params),
        "threshold": config.threshold,
        "measure": config.measure,
        "verify": config.verify,
        "keep": str(config.keep),
        "guard": config.removal_guard,
        "chain": config.chain,
        "max_bucket": config.max_bucket,
        "template_df": config.template_df,
        "identity": config.identity,
        "format": fmt,
        "canonicalization": dataclasses.asdict(config.text.canon),
        "shingles": dataclasses.asdict(config.text.shingle),
    }


def _load_report(config: DedupConfig) -> None:
    """Import the report and load its compiled kernels (from numba's cache)."""
    from neardup.engines.local.dedup_report import load_kernels

    load_kernels(config.text)


def _load_kernels(config: DedupConfig) -> None:
    """Load the compiled kernels of the review and the report (from numba's cache)."""
    load_review_kernels(config.text)
    _load_report(config)


def _write_report(
    result: DedupResult,
    texts: dict[int, str],
    review: list[tuple[Removal, Passages | None]],
    config: DedupConfig,
    summary: dict[str, Any],
    out: Path,
) -> None:
    from neardup.engines.local.dedup_report import render_report

    page = render_report(result, texts, config, summary=summary, top=REPORT_PAIRS, review=review)
    tmp = out / ".report.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out / "report.html")
