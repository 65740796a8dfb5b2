"""Run evaluations (:mod:`neardup.judge.evaluate`): every method on a corpus or on labelled pairs
given with their texts, from objects or from files (the I/O edge of ``neardup evaluate``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from neardup.dedup import DedupConfig, Pairs, score_candidates
from neardup.errors import ConfigError
from neardup.io.readers import DEFAULT_MAX_TEXT_BYTES, read_documents
from neardup.judge.evaluate import (
    Evaluation,
    Form,
    MethodEvaluation,
    Mode,
    Row,
    pair_scores,
    pairs_within,
    sweep_clusters,
    sweep_pairs,
    threshold_groups,
)
from neardup.judge.textpairs import score_text_pairs
from neardup.judge.truth import ClusterTruth, PairTruth, Truth, read_truth


def evaluate_corpus(
    texts: Callable[[], Iterable[tuple[str, str]]],
    truth: Truth,
    configs: Sequence[DedupConfig],
    thresholds: Sequence[float],
    progress: Callable[[str], None] | None = None,
    keep_pairs: bool = True,
    mode: Mode = "dedup",
) -> Evaluation:
    """Judge every config on a corpus; ``texts()`` streams its ``(id, text)`` items anew.

    Each config runs once per group of thresholds that gives the same keys
    (:func:`~neardup.judge.evaluate.threshold_groups`). ``keep_pairs=False`` drops the scored
    pairs after the sweep (a grid search needs only the rows; reports need the pairs)."""
    thresholds = sorted(thresholds)
    methods: list[MethodEvaluation] = []
    truth_arrays: tuple[np.ndarray, ...] = ()
    ids: list[str] = []
    judged_by = "clusters" if isinstance(truth, ClusterTruth) and mode == "dedup" else "pairs"
    for config in configs:
        if progress is not None:
            progress(config.method)
        clock = time.perf_counter()
        runs: list[tuple[list[Row], Pairs, list[str]]] = []
        for group in threshold_groups(config, thresholds):
            scored = score_candidates(texts(), replace(config, threshold=group[0]))
            if not truth_arrays:
                ids = scored.ids
                truth_arrays = _align(truth, ids)
            if isinstance(truth, ClusterTruth):
                rows = sweep_clusters(scored, config, group, truth_arrays[0], judged_by)
            else:
                a, b, labels = truth_arrays
                found = [int(np.count_nonzero(scored.pairs.score >= t)) for t in group]
                scores = pair_scores(scored.pairs, a, b)[0]
                rows = sweep_pairs(scores, labels, group, found, config)
            runs.append((rows, scored.pairs, scored.weak))
            scored.close()
        seconds = time.perf_counter() - clock
        methods.append(_method(config, runs, seconds, keep_pairs))
    return _evaluation(truth, ids, thresholds, methods, truth_arrays, mode=mode)


def _method(
    config: DedupConfig,
    runs: Sequence[tuple[list[Row], Pairs, list[str]]],
    seconds: float,
    keep_pairs: bool,
) -> MethodEvaluation:
    """One method's evaluation from its runs (each: rows of a group of thresholds, the scored
    candidates, warnings)."""
    rows = sorted((row for run in runs for row in run[0]), key=lambda r: r.threshold)
    if not keep_pairs:
        rows = [replace(row, found_pairs=None) for row in rows]
    weak = list(dict.fromkeys(w for run in runs for w in run[2]))
    candidates = sum(len(run[1]) for run in runs)
    kept = [
        pairs if keep_pairs else pairs.take(np.zeros(len(pairs), dtype=bool))
        for _, pairs, _ in runs
    ]
    by_threshold = {row.threshold: kept[i] for i, run in enumerate(runs) for row in run[0]}
    first = kept[0] if kept else _no_pairs()
    extra = by_threshold if len(runs) > 1 else {}
    return MethodEvaluation(config, rows, seconds, first, weak, candidates, extra, len(runs))


def _no_pairs() -> Pairs:
    empty = np.zeros(0, dtype=np.int64)
    return Pairs(empty, empty, *(np.zeros(0) for _ in range(len(Pairs.__slots__) - 2)))


def evaluate_files(
    inputs: Sequence[str],
    truth_path: str,
    configs: Sequence[DedupConfig],
    thresholds: Sequence[float],
    *,
    id_field: str = "id",
    text_field: str = "text",
    progress: Callable[[str], None] | None = None,
    keep_pairs: bool = True,
    mode: Mode = "dedup",
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
) -> tuple[Evaluation, Callable[[set[int]], dict[int, str]]]:
    """Judge configs on files: a corpus with cluster or id-pair truth, or (no ``inputs``) a
    pair file with the texts inline. Also returns a function that fetches documents' texts
    by index (a second pass over the inputs), for reports. ``mode`` is recorded in the
    evaluation; the configs must be made for it (:func:`~neardup.judge.evaluate.method_config`)."""
    truth = read_truth(truth_path)
    if not inputs:
        if not isinstance(truth, PairTruth):
            raise ConfigError(f"{truth_path}: cluster truth needs the corpus (INPUT) it labels")
        ev = evaluate_pairs(truth, configs, thresholds, progress, keep_pairs, mode)
        return ev, lambda wanted: {i: (truth.a, truth.b)[i % 2][i // 2] for i in wanted}

    def texts() -> Iterator[tuple[str, str]]:
        docs = read_documents(
            list(inputs), id_field=id_field, text_field=text_field, max_text_bytes=max_text_bytes
        )
        return ((doc.id, doc.text) for doc in docs)

    def fetch(wanted: set[int]) -> dict[int, str]:
        return {i: text for i, (_, text) in enumerate(texts()) if i in wanted}

    ev = evaluate_corpus(texts, truth, configs, thresholds, progress, keep_pairs, mode)
    return ev, fetch


def _align(truth: Truth, ids: list[str]) -> tuple[np.ndarray, ...]:
    if isinstance(truth, ClusterTruth):
        return (truth.codes(ids),)
    a, b = truth.indices(ids)
    return a, b, truth.labels


def evaluate_pairs(
    truth: PairTruth,
    configs: Sequence[DedupConfig],
    thresholds: Sequence[float],
    progress: Callable[[str], None] | None = None,
    keep_pairs: bool = True,
    mode: Mode = "dedup",
) -> Evaluation:
    """Judge every config on pairs given with their texts: each pair compared on its own
    (:func:`~neardup.judge.textpairs.score_text_pairs`), once per group of thresholds."""
    thresholds = sorted(thresholds)
    ids = [f"line {line} {side}" for line in truth.lines.tolist() for side in "ab"]
    a = np.arange(len(truth), dtype=np.int64) * 2
    methods = []
    for config in configs:
        if progress is not None:
            progress(config.method)
        clock = time.perf_counter()
        runs = []
        for group in threshold_groups(config, thresholds):
            pairs, weak = score_text_pairs(truth.a, truth.b, replace(config, threshold=group[0]))
            scores = pair_scores(pairs, a, a + 1)[0]
            runs.append((sweep_pairs(scores, truth.labels, group, config=config), pairs, weak))
        seconds = time.perf_counter() - clock
        methods.append(_method(config, runs, seconds, keep_pairs))
    arrays = (a, a + 1, truth.labels)
    return _evaluation(truth, ids, thresholds, methods, arrays, inline=True, mode=mode)


def _evaluation(
    truth: Truth,
    ids: list[str],
    thresholds: Sequence[float],
    methods: list[MethodEvaluation],
    arrays: tuple[np.ndarray, ...],
    inline: bool = False,
    mode: Mode = "dedup",
) -> Evaluation:
    if isinstance(truth, ClusterTruth):
        codes = arrays[0] if arrays else np.zeros(0, dtype=np.int64)
        duplicates = pairs_within(codes)
        return Evaluation(
            truth.path, "clusters", ids, tuple(thresholds), methods, duplicates, codes, mode=mode
        )
    a, b, labels = arrays if arrays else (np.zeros(0, np.int64),) * 2 + (truth.labels,)
    form: Form = "inline pairs" if inline else "pairs"
    duplicates = int(np.count_nonzero(labels))
    return Evaluation(
        truth.path, form, ids, tuple(thresholds), methods, duplicates, None, a, b, labels, mode
    )
