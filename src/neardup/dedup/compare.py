"""Compare two texts: every measure of docs/methods.md, the passages they share, the content score
dedup gives the pair, and optionally a signature method's estimate beside the exact values.

The settings are dedup's (:class:`neardup.dedup.DedupConfig`, its defaults unless given), so
compare and dedup measure the same shingles. The content score is the pair scored as dedup
scores it (:func:`neardup.dedup.pairscore.score_alone`): discounting templates needs a corpus,
so two texts alone are scored with no template unless a run's template fingerprints are given
(``neardup compare --run OUT`` reads ``OUT/templates.npy``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup.dedup.config import DedupConfig
from neardup.dedup.pairscore import PairScores, score_alone
from neardup.errors import EmptyTextError
from neardup.fingerprints.measures import Overlap, overlap
from neardup.fingerprints.passages import Passages, shared_passages
from neardup.fingerprints.shingles import FingerprintBatch, fingerprint_batch
from neardup.methods.base import Method
from neardup.text.text_config import TextConfig
from neardup.util.kernels import threads_for


@dataclass(frozen=True, slots=True)
class MethodEstimate:
    """What a signature method says of two texts: its estimate and whether they share a key."""

    method: str
    kind: str  # resemblance, containment, hamming or equality
    estimate: float
    shares_key: bool
    containment_a_in_b: float | None = None  # methods that estimate containment too
    fitted_on_pair: bool = False  # the method's IDF model saw only these two texts

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` keys of a method's estimate."""
        out: dict[str, object] = {
            "method": self.method,
            "estimate": self.estimate,
            "estimate_kind": self.kind,
            "shares_key": self.shares_key,
        }
        if self.kind == "hamming":
            out["hamming"] = int(self.estimate)
        if self.containment_a_in_b is not None:
            out["estimate_containment_a_in_b"] = self.containment_a_in_b
        if self.fitted_on_pair:
            out["idf_fitted_on"] = "these two texts only"
        return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """The result of comparing text A with text B by their full shingle sets."""

    overlap: Overlap
    passages_a: Passages
    passages_b: Passages
    estimate: MethodEstimate | None = None
    scores: PairScores | None = None  # as dedup scores the pair (its measure, on content)
    measure: str = "containment"  # the measure of ``scores``
    template_shingles: tuple[int, int] | None = None  # discounted in A and B (None: no template)

    def as_dict(self) -> dict[str, object]:
        """Measures, counts, shared passages, dedup's scores and the method's estimate
        (``--json``)."""
        out = self.overlap.as_dict() | {
            "method": "full",
            "passages_a": self.passages_a.passages(),
            "passages_b": self.passages_b.passages(),
        }
        if self.scores is not None:
            out |= {
                "score_a_in_b": self.scores.score_a_in_b,
                "score_b_in_a": self.scores.score_b_in_a,
                "score": self.scores.score,
                "score_measure": self.measure,
                "template_shingles": (
                    None
                    if self.template_shingles is None
                    else dict(zip(("a", "b"), self.template_shingles, strict=True))
                ),
            }
        return out | (self.estimate.as_dict() if self.estimate else {})


def compare_texts(
    a: str,
    b: str,
    config: DedupConfig | TextConfig | None = None,
    labels: tuple[str, str] = ("A", "B"),
    method: Method | None = None,
    template: np.ndarray | None = None,
) -> Comparison:
    """Compare two texts with dedup's settings (``config``: a DedupConfig, or only its text
    settings; None: dedup's defaults); a text with no shingles left raises EmptyTextError
    naming it.

    ``template`` (a run's sorted template fingerprints) is discounted in the content score;
    without it the pair is scored alone, as a corpus of two has no template. With ``method``
    (built on the same text config), its estimate is given beside the exact measures.
    """
    settings = config if isinstance(config, DedupConfig) else DedupConfig()
    if isinstance(config, TextConfig):
        settings = DedupConfig(text=config)
    text = settings.text
    batch = fingerprint_batch([a, b], text)
    for label, body, prints in zip(labels, (a, b), (batch[0], batch[1]), strict=True):
        if prints.size == 0:
            why = (
                "the text is empty" if not body.strip() else "no words left after canonicalization"
            )
            raise EmptyTextError(f"{label}: {why}")
    passages_a, passages_b = shared_passages(a, b, text)
    estimate = method_estimate(method, batch) if method is not None else None
    counts = None
    if template is not None:
        counts = (int(np.isin(batch[0], template).sum()), int(np.isin(batch[1], template).sum()))
    return Comparison(
        overlap(batch[0], batch[1]),
        passages_a,
        passages_b,
        estimate,
        score_alone(batch, settings, template),
        settings.measure,
        counts,
    )


def method_estimate(method: Method, pair: FingerprintBatch) -> MethodEstimate:
    """A method's estimate for a batch of two documents' fingerprints.

    Methods that need collection statistics (an IDF model) are fitted on the pair itself,
    which the result says: their answer is then only indicative.
    """
    fitted = bool(getattr(method, "needs_idf", False))
    with threads_for(int(pair.values.size) * 8):
        if fitted:
            method.fit([pair])  # type: ignore[attr-defined]
        sigs = method.sketch(pair)
        keys = method.keys(sigs)
    shares_key = bool(np.intersect1d(keys.keys[keys.docs == 0], keys.keys[keys.docs == 1]).size)
    containment = getattr(method, "containment", None)
    return MethodEstimate(
        method=method.name,
        kind=method.estimate,
        estimate=float(method.score(sigs[0], sigs[1])),
        shares_key=shares_key,
        containment_a_in_b=float(containment(sigs[0], sigs[1])) if containment else None,
        fitted_on_pair=fitted,
    )
