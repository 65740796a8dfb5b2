"""Run evaluations (:mod:`neardup.judge.evaluate`): every method on a corpus or on labelled pairs
given with their texts, from objects or from files (the I/O edge of ``neardup evaluate``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from neardup.corpus import read_documents
from neardup.dedup import DedupConfig, Pairs, score_candidates
from neardup.errors import ConfigError
from neardup.judge.evaluate import (
    Evaluation,
    Form,
    MethodEvaluation,
    Row,
    pair_scores,
    pairs_within,
    sweep_clusters,
    sweep_pairs,
)
from neardup.judge.pairscore import score_text_pairs
from neardup.judge.truth import ClusterTruth, PairTruth, Truth, read_truth


def evaluate_corpus(
    texts: Callable[[], Iterable[tuple[str, str]]],
    truth: Truth,
    configs: Sequence[DedupConfig],
    thresholds: Sequence[float],
    progress: Callable[[str], None] | None = None,
    keep_pairs: bool = True,
) -> Evaluation:
    """Judge every config on a corpus; ``texts()`` streams its ``(id, text)`` items anew.

    ``keep_pairs=False`` drops every method's scored pairs after its sweep (a grid search
    needs only the rows; reports need the pairs)."""
    methods: list[MethodEvaluation] = []
    truth_arrays: tuple[np.ndarray, ...] = ()
    ids: list[str] = []
    for config in configs:
        if progress is not None:
            progress(config.method)
        clock = time.perf_counter()
        scored = score_candidates(texts(), config)
        if not truth_arrays:
            ids = scored.ids
            truth_arrays = _align(truth, ids)
        if isinstance(truth, ClusterTruth):
            rows = sweep_clusters(scored, config, thresholds, truth_arrays[0])
        else:
            a, b, labels = truth_arrays
            found = [int(np.count_nonzero(scored.pairs.score >= t)) for t in thresholds]
            scores = pair_scores(scored.pairs, a, b)[0]
            rows = sweep_pairs(scores, labels, thresholds, found, config)
        seconds = time.perf_counter() - clock
        methods.append(_method(config, rows, seconds, scored.pairs, scored.weak, keep_pairs))
    return _evaluation(truth, ids, thresholds, methods, truth_arrays)


def _method(
    config: DedupConfig,
    rows: list[Row],
    seconds: float,
    pairs: Pairs,
    weak: list[str],
    keep_pairs: bool,
) -> MethodEvaluation:
    kept = pairs if keep_pairs else pairs.take(np.zeros(len(pairs), dtype=bool))
    return MethodEvaluation(config, rows, seconds, kept, weak, len(pairs))


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
) -> tuple[Evaluation, Callable[[set[int]], dict[int, str]]]:
    """Judge configs on files: a corpus with cluster or id-pair truth, or (no ``inputs``) a
    pair file with the texts inline. Also returns a function that fetches documents' texts
    by index (a second pass over the inputs), for reports."""
    truth = read_truth(truth_path)
    if not inputs:
        if not isinstance(truth, PairTruth):
            raise ConfigError(f"{truth_path}: cluster truth needs the corpus (INPUT) it labels")
        ev = evaluate_pairs(truth, configs, thresholds, progress, keep_pairs)
        return ev, lambda wanted: {i: (truth.a, truth.b)[i % 2][i // 2] for i in wanted}

    def texts() -> Iterator[tuple[str, str]]:
        docs = read_documents(list(inputs), id_field=id_field, text_field=text_field)
        return ((doc.id, doc.text) for doc in docs)

    def fetch(wanted: set[int]) -> dict[int, str]:
        return {i: text for i, (_, text) in enumerate(texts()) if i in wanted}

    return evaluate_corpus(texts, truth, configs, thresholds, progress, keep_pairs), fetch


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
) -> Evaluation:
    """Judge every config on pairs given with their texts: each pair compared on its own."""
    ids = [f"line {line} {side}" for line in truth.lines.tolist() for side in "ab"]
    a = np.arange(len(truth), dtype=np.int64) * 2
    methods = []
    for config in configs:
        if progress is not None:
            progress(config.method)
        clock = time.perf_counter()
        pairs, weak = score_text_pairs(truth.a, truth.b, config)
        scores = pair_scores(pairs, a, a + 1)[0]
        rows = sweep_pairs(scores, truth.labels, thresholds, config=config)
        seconds = time.perf_counter() - clock
        methods.append(_method(config, rows, seconds, pairs, weak, keep_pairs))
    return _evaluation(truth, ids, thresholds, methods, (a, a + 1, truth.labels), inline=True)


def _evaluation(
    truth: Truth,
    ids: list[str],
    thresholds: Sequence[float],
    methods: list[MethodEvaluation],
    arrays: tuple[np.ndarray, ...],
    inline: bool = False,
) -> Evaluation:
    if isinstance(truth, ClusterTruth):
        codes = arrays[0] if arrays else np.zeros(0, dtype=np.int64)
        return Evaluation(
            truth.path, "clusters", ids, tuple(thresholds), methods, pairs_within(codes), codes
        )
    a, b, labels = arrays if arrays else (np.zeros(0, np.int64),) * 2 + (truth.labels,)
    form: Form = "inline pairs" if inline else "pairs"
    duplicates = int(np.count_nonzero(labels))
    return Evaluation(
        truth.path, form, ids, tuple(thresholds), methods, duplicates, None, a, b, labels
    )
