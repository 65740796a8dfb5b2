"""Judge near-duplicate detection against expert labels (docs/guides/judge.md).

Two modes. **As dedup** (the default): every method at every threshold t is scored exactly as
``neardup dedup`` with those settings scores it — the method's keys give the candidates (tuned
to t where the method tunes its keys to the threshold: MinHash's LSH bands, SimHash's bit
bands, the megashingle shape), every candidate is verified exactly in the chosen measure, and
:func:`~neardup.dedup.decide` forms the clusters. A method whose keys do not depend on t runs once
(:func:`~neardup.dedup.score_candidates`) and every t is one ``decide``; otherwise it runs once
per distinct key configuration (:func:`threshold_groups`). With cluster truth the scores are
those of dedup's clusters (pairs of documents in one cluster), which is what
``calibrate`` promises and ``dedup --config`` delivers.

**Estimates** (``--estimates``, the paper's view): ``full`` exactly, every other method by its
own estimate (``verify=False``), with the chosen measure when the method estimates containment
(full, modm), resemblance otherwise; a method's LSH keys are tuned to the lowest threshold of
the sweep (its ``threshold`` parameter) unless it is given, so each method runs once. The
scores are those of the pairs found (score ≥ t).

SimHash estimates a Hamming distance d of 64 bits; its estimate is 1 − d/64, so threshold t
means d ≤ ⌊64(1 − t)⌋ (:func:`simhash_distance`: t = 0.95 ↔ the classic d ≤ 3, 0.9 ↔ 6,
0.8 ↔ 12, 0.5 ↔ 32), the distance of its first (classic) fingerprint; its bit bands make
pairs at the tuned threshold candidates (the paper's tables, ``max_distance=3``, only promise
the pairs within 3 bits). I-Match's estimate is 1.0 for equal signatures, so with estimates it
finds the same pairs at every t.

Definitions. Cluster truth: a found pair is a true positive when both documents share a truth
cluster; the duplicates are all pairs of documents sharing a cluster; the clusters dedup forms
at t are judged by co-membership (a pair of documents in one cluster is predicted duplicate)
and the adjusted Rand index (``ari``). Pair truth: a labelled pair is *predicted* duplicate when
its score is ≥ t, i.e. when dedup's pairs.jsonl holds it (a pair sharing no key is not a
candidate and scores 0); true positives are predicted pairs labelled 1, duplicates the pairs
labelled 1. Then

    precision = TP / predicted       recall = TP / duplicates       F1 = 2PR / (P + R)
    type I %  = 100 (1 − precision): false duplicates among those found (an original is lost)
    type II % = 100 (1 − recall):    true duplicates missed

``found`` counts every pair ≥ t (what pairs.jsonl holds); ``predicted`` only the judged ones:
co-member pairs of dedup's clusters (cluster truth, as dedup), the pairs found (cluster truth,
estimates), the labelled pairs found (pair truth).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

import numpy as np

from neardup.dedup import DedupConfig, Pairs, Scored, decide
from neardup.dedup.candidates import DEFAULT_MAX_BUCKET
from neardup.errors import ConfigError
from neardup.methods import get_method, method_classes
from neardup.text.text_config import TextConfig
from neardup.util.arrays import pair_codes, unordered_pair_codes

SIMHASH_BITS = 64
DEFAULT_THRESHOLDS = "0.5:1.0:0.1"
Form = Literal["clusters", "pairs", "inline pairs"]
Mode = Literal["dedup", "estimates"]
MODES: tuple[str, ...] = get_args(Mode)
Judged = Literal["pairs", "clusters"]
MODE_TEXT: dict[str, str] = {
    "dedup": "as dedup: candidates from the method's keys, verified exactly, dedup's clusters",
    "estimates": "estimates: each method's own estimate (full exactly), pairs found",
}


@dataclass(frozen=True, slots=True)
class PairScores:
    """Pair counts and the measures derived from them."""

    true_positives: int
    predicted: int
    actual: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.actual if self.actual else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def type_i_percent(self) -> float:
        """False duplicates among the duplicates found, in percent."""
        return 100.0 * (1.0 - self.precision)

    @property
    def type_ii_percent(self) -> float:
        """True duplicates missed, in percent."""
        return 100.0 * (1.0 - self.recall)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "found": self.predicted,
            "true_positives": self.true_positives,
            "duplicates": self.actual,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "type_i_percent": self.type_i_percent,
            "type_ii_percent": self.type_ii_percent,
        }


def _comb2_sum(sizes: np.ndarray) -> int:
    """Σ C(s, 2) as an exact Python integer."""
    sizes = sizes.astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def pairs_within(labels: np.ndarray) -> int:
    """Pairs of documents sharing a label: Σ C(size, 2) over the labels."""
    return _comb2_sum(np.unique(labels, return_counts=True)[1])


def _codes(labels: Any) -> np.ndarray:
    return np.unique(np.asarray(labels), return_inverse=True)[1].astype(np.int64).ravel()


def cluster_pair_scores(predicted: np.ndarray, truth: np.ndarray) -> PairScores:
    """Pair precision / recall of a predicted clustering against a labelled one.

    Both are label arrays over the same documents (any hashable label type for ``truth``).
    """
    pred_codes, truth_codes = _codes(predicted), _codes(truth)
    if pred_codes.shape != truth_codes.shape:
        raise ValueError("predicted and truth labels must cover the same documents")
    joint = pred_codes * (truth_codes.max(initial=0) + 1) + truth_codes
    return PairScores(pairs_within(joint), pairs_within(pred_codes), pairs_within(truth_codes))


def adjusted_rand_index(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Hubert–Arabie adjusted Rand index of two clusterings, from their contingency table.

    With n_ij the contingency cells, a_i and b_j its row and column sums:
    ARI = (Σ C(n_ij,2) − E) / (½(Σ C(a_i,2) + Σ C(b_j,2)) − E), E = Σ C(a_i,2) Σ C(b_j,2) / C(n,2);
    1.0 when the denominator is 0 (both clusterings trivial and equal).
    """
    p, q = _codes(predicted), _codes(truth)
    if p.shape != q.shape:
        raise ValueError("predicted and truth labels must cover the same documents")
    cells = np.unique(p * (q.max(initial=0) + 1) + q, return_counts=True)[1]
    index = _comb2_sum(cells)
    sum_a, sum_b = _comb2_sum(np.bincount(p)), _comb2_sum(np.bincount(q))
    total = p.size * (p.size - 1) // 2
    expected = sum_a * sum_b / total if total else 0.0
    maximum = (sum_a + sum_b) / 2
    if maximum == expected:
        return 1.0
    return (index - expected) / (maximum - expected)


# ---------------------------------------------------------------------------- settings


_MAX_THRESHOLDS = 10_000  # a grid step of 1e-20 would not end


def parse_thresholds(spec: str) -> tuple[float, ...]:
    """``"start:stop:step"`` (stop included) or ``"t1,t2,…"`` → sorted thresholds in (0, 1]."""
    try:
        if ":" in spec:
            start, stop, step = (float(x) for x in spec.split(":"))
            count = math.floor((stop - start) / step + 1e-9) + 1
            if not step > 0 or count > _MAX_THRESHOLDS:
                raise ValueError
            values = [start + k * step for k in range(count)]
        else:
            values = [float(x) for x in spec.split(",") if x.strip()]
    except (ValueError, OverflowError, ZeroDivisionError):
        raise ConfigError(f"thresholds={spec!r}: give start:stop:step or t1,t2,…") from None
    values = sorted({round(v, 10) for v in values})
    if not values or not all(0.0 < v <= 1.0 for v in values):
        raise ConfigError(f"thresholds={spec!r} must all lie in (0, 1]")
    return tuple(values)


def simhash_distance(threshold: float) -> int:
    """The largest Hamming distance d whose SimHash score 1 − d/64 reaches t: ⌊64(1 − t)⌋."""
    return math.floor(SIMHASH_BITS * (1.0 - threshold) + 1e-9)


def method_config(
    name: str,
    text: TextConfig,
    measure: str,
    thresholds: Sequence[float],
    params: Mapping[str, Any] | None = None,
    max_bucket: int = DEFAULT_MAX_BUCKET,
    mode: Mode = "dedup",
) -> DedupConfig:
    """The dedup settings a method is judged with (see the module docstring)."""
    if mode not in MODES:
        raise ConfigError(f"mode={mode!r} is not one of {', '.join(MODES)}")
    params = dict(params or {})
    verify = True
    if mode == "estimates":
        _, config_type = method_classes(name)
        if "threshold" in {f.name for f in dataclasses.fields(config_type)}:
            params.setdefault("threshold", min(thresholds))  # LSH keys for the lowest t
        method = get_method(name, text, **params)  # unknown method or parameter: ConfigError
        verify = name == "full"
        if not verify and not hasattr(method, "containment_pairs"):
            measure = "resemblance"
    config = DedupConfig(
        text=text,
        method=name,
        params=tuple(params.items()),
        threshold=min(thresholds),
        measure=measure,  # type: ignore[arg-type]
        verify=verify,
        max_bucket=max_bucket,
    )
    config.build_method()  # unknown method or parameter: ConfigError
    return config


def threshold_groups(config: DedupConfig, thresholds: Sequence[float]) -> list[list[float]]:
    """The thresholds in groups that give the same method (hence the same keys, candidates
    and scores): one :func:`~neardup.dedup.score_candidates` run serves a whole group."""
    groups: dict[str, list[float]] = {}
    for t in sorted(thresholds):
        method = replace(config, threshold=t).build_method()
        groups.setdefault(method.config_id, []).append(t)
    return list(groups.values())


def dedup_args(config: DedupConfig) -> list[str]:
    """The ``neardup dedup`` options (besides the text options) that find the same pairs."""
    args = ["--method", config.method]
    for key, value in config.params:
        args += ["--param", f"{key}={value}"]
    args += ["--measure", config.measure, "--verify" if config.verify else "--no-verify"]
    return args


def _hamming(config: DedupConfig, threshold: float) -> int | None:
    """SimHash's estimate at ``threshold`` as a Hamming distance (None when verified)."""
    if config.method != "simhash" or config.verify:
        return None
    return simhash_distance(threshold)


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Row:
    """One method at one threshold. ``scores`` are what the row is judged by: dedup's clusters
    (``judged_by="clusters"``) or the pairs found (``"pairs"``)."""

    threshold: float
    found: int  # pairs with score ≥ t: what pairs.jsonl holds
    pairs: PairScores  # the pairs found (pair truth: the labelled ones) against the truth
    ari: float | None = None  # cluster truth: clusters at t against the truth
    clusters: PairScores | None = None  # cluster truth: co-membership in dedup's clusters
    hamming: int | None = None  # simhash estimates: largest distance counted as duplicate
    judged_by: Judged = "pairs"
    # as dedup: the pairs dedup writes at t (among them pairs verified to reach a keeper)
    found_pairs: tuple[np.ndarray, np.ndarray] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def scores(self) -> PairScores:
        """The scores the row is judged (and calibrated) by."""
        if self.judged_by == "clusters" and self.clusters is not None:
            return self.clusters
        return self.pairs

    def as_dict(self) -> dict[str, Any]:
        scores = self.scores.as_dict()
        out: dict[str, Any] = {"threshold": self.threshold}
        if self.hamming is not None:
            out["hamming_max"] = self.hamming
        out |= {"judged_by": self.judged_by, "found": self.found, "judged": scores.pop("found")}
        out |= scores
        if self.clusters is not None:
            out |= {
                "ari": self.ari,
                "cluster_precision": self.clusters.precision,
                "cluster_recall": self.clusters.recall,
                "cluster_f1": self.clusters.f1,
                "pair_precision": self.pairs.precision,
                "pair_recall": self.pairs.recall,
                "pair_f1": self.pairs.f1,
            }
        return out


@dataclass(eq=False)
class MethodEvaluation:
    """One method's rows over the thresholds, with every candidate pair it scored.

    ``pairs`` are the scored candidates of the run judged at the lowest threshold; a method
    run once per group of thresholds (:func:`threshold_groups`) keeps every other run's in
    ``runs`` by threshold (:meth:`pairs_at`)."""

    config: DedupConfig
    rows: list[Row]
    seconds: float
    pairs: Pairs  # candidate pairs, scored (empty when not kept)
    warnings: list[str]
    candidates: int = 0  # candidate pairs scored, over all runs
    runs: dict[float, Pairs] = field(default_factory=dict)
    run_count: int = 1  # score_candidates runs (one per group of thresholds)

    @property
    def method(self) -> str:
        return self.config.method

    def best(self) -> Row:
        """The row of highest F1 (then precision, then the higher threshold)."""
        return max(self.rows, key=lambda r: (r.scores.f1, r.scores.precision, r.threshold))

    def pairs_at(self, threshold: float) -> Pairs:
        """The scored candidates of the run judged at ``threshold``."""
        return self.runs.get(threshold, self.pairs)

    def found_pairs(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """Document indices ``(left, right)`` of the pairs found at ``threshold``."""
        for row in self.rows:
            if row.threshold == threshold and row.found_pairs is not None:
                return row.found_pairs
        pairs = self.pairs_at(threshold)
        keep = pairs.score >= threshold
        return pairs.left[keep], pairs.right[keep]

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "measure": self.config.measure,
            "verify": self.config.verify,
            "params": dict(self.config.params),
            "dedup_args": dedup_args(self.config),
            "seconds": round(self.seconds, 3),
            "runs": self.run_count,
            "candidates": self.candidates,
            "warnings": self.warnings,
            "best": self.best().threshold,
            "rows": [row.as_dict() for row in self.rows],
        }


@dataclass(eq=False)
class Evaluation:
    """Every method judged at every threshold against one truth."""

    truth: str
    form: Form
    ids: list[str]
    thresholds: tuple[float, ...]
    methods: list[MethodEvaluation]
    duplicates: int
    codes: np.ndarray | None = None  # cluster truth: cluster code per document
    pair_a: np.ndarray | None = None  # pair truth: document index of every pair's a
    pair_b: np.ndarray | None = None
    labels: np.ndarray | None = None  # pair truth: bool per pair
    mode: Mode = "dedup"

    @property
    def judged_by(self) -> Judged:
        """Cluster truth as dedup: dedup's clusters; otherwise the pairs found."""
        return "clusters" if self.codes is not None and self.mode == "dedup" else "pairs"

    def as_dict(self) -> dict[str, Any]:
        labelled = len(self.ids) if self.labels is None else int(self.labels.size)
        return {
            "truth": self.truth,
            "form": self.form,
            "mode": self.mode,
            "scores": MODE_TEXT[self.mode],
            "judged_by": self.judged_by,
            "documents": len(self.ids),
            "labelled": labelled,  # documents (cluster truth) or pairs
            "duplicates": self.duplicates,
            "thresholds": list(self.thresholds),
            "simhash": "estimate = 1 - d/64: threshold t counts Hamming distance "
            "d <= floor(64(1-t))",
            "methods": [m.as_dict() for m in self.methods],
        }


# ---------------------------------------------------------------------------- sweeps


def sweep_clusters(
    scored: Scored,
    config: DedupConfig,
    thresholds: Sequence[float],
    codes: np.ndarray,
    judged_by: Judged = "clusters",
) -> list[Row]:
    """Rows against cluster truth: dedup's pairs and clusters at every threshold."""
    actual = pairs_within(codes)
    rows = []
    for t in thresholds:
        result = decide(scored, replace(config, threshold=t))
        p = result.pairs
        tp = int(np.count_nonzero(codes[p.left] == codes[p.right]))
        rows.append(
            Row(
                t,
                len(p),
                PairScores(tp, len(p), actual),
                adjusted_rand_index(result.labels, codes),
                cluster_pair_scores(result.labels, codes),
                _hamming(config, t),
                judged_by,
                (p.left, p.right),
            )
        )
    return rows


def sweep_pairs(
    scores: np.ndarray,
    labels: np.ndarray,
    thresholds: Sequence[float],
    found: Sequence[int] | None = None,
    config: DedupConfig | None = None,
) -> list[Row]:
    """Rows against pair truth: a labelled pair is predicted duplicate when its score ≥ t."""
    actual = int(np.count_nonzero(labels))
    rows = []
    for i, t in enumerate(thresholds):
        predicted = scores >= t
        judged = int(np.count_nonzero(predicted))
        tp = int(np.count_nonzero(predicted & labels))
        hamming = _hamming(config, t) if config is not None else None
        count = judged if found is None else found[i]
        rows.append(Row(t, count, PairScores(tp, judged, actual), hamming=hamming))
    return rows


def pair_scores(pairs: Pairs, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(score, candidate)`` of the pairs ``(left[i], right[i])``: 0.0 if not a candidate."""
    wanted = unordered_pair_codes(left, right)
    if len(pairs) == 0:
        return np.zeros(wanted.size), np.zeros(wanted.size, dtype=bool)
    known = pair_codes(pairs.left, pairs.right)
    order = np.argsort(known)
    row = order[np.minimum(np.searchsorted(known, wanted, sorter=order), known.size - 1)]
    candidate = known[row] == wanted
    return np.where(candidate, pairs.score[row], 0.0), candidate
