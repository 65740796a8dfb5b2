"""What the pages show, as plain data for the templates: comparisons, search results, the
collection's settings. No HTTP here; :mod:`neardup.service.web.pages` renders these.

Texts are shown as written, with the shared passages mapped back from the canonical text
(:mod:`neardup.fingerprints.highlight`). The collection keeps fingerprints, not texts: a
document added through the page keeps its text in its meta under :data:`TEXT_META`, so that it
can be shown and its shared passages highlighted; other documents show their id and meta only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from neardup.collection.persistent import Collection, Duplicate
from neardup.dedup import DedupConfig
from neardup.dedup.compare import compare_texts
from neardup.fingerprints.highlight import original_spans, segments
from neardup.fingerprints.passages import shared_passages
from neardup.text.text_config import TextConfig

TEXT_META = "text"  # meta key holding a document's text (set by the page's "add")
MAX_SHOWN = 20  # near-duplicates shown per search


@dataclass(frozen=True, slots=True)
class Shown:
    """A text as written, cut into pieces; ``True`` marks a piece shared with the other."""

    label: str
    pieces: list[tuple[str, bool]]

    @property
    def marked(self) -> list[str]:
        return [piece for piece, shared in self.pieces if shared]


@dataclass(frozen=True, slots=True)
class Figure:
    """One labelled number of a page."""

    label: str
    value: str
    key: str  # stable name for tests and scripts (data-key)


@dataclass(frozen=True, slots=True)
class CompareView:
    """Two texts compared: the measures, who holds whom, both texts highlighted."""

    figures: list[Figure]
    holds: list[str]  # "B holds 92 % of A", both ways
    verdict: str  # the lossless rule at the collection's threshold
    estimate: str | None  # the collection's method's estimate
    a: Shown
    b: Shown


@dataclass(frozen=True, slots=True)
class MatchView:
    """A stored near-duplicate of a searched text, with the passages they share."""

    id: str
    figures: list[Figure]
    holds: list[str]
    verdict: str
    new: Shown | None  # None when the stored text is not kept
    stored: Shown | None


@dataclass(frozen=True, slots=True)
class DocumentView:
    """A stored document: its meta, its text when kept, and its near-duplicates."""

    id: str
    meta: dict[str, Any]
    text: str | None
    matches: list[MatchView] | None  # None: the text is not kept, so it cannot be looked up


def percent(x: float) -> str:
    """A share as a whole percent, never rounded up to 100 % (nor down to 0 %)."""
    value = 100 * x
    whole = round(value)
    if whole == 100 and x < 1:
        whole = 99
    if whole == 0 and x > 0:
        whole = 1
    return f"{whole} %"


def holds(a_in_b: float, b_in_a: float, a: str, b: str) -> list[str]:
    """How much of each text the other holds, in words."""
    return [f"{b} holds {percent(a_in_b)} of {a}", f"{a} holds {percent(b_in_a)} of {b}"]


def verdict(a_in_b: float, b_in_a: float, threshold: float, a: str, b: str) -> str:
    """The lossless rule: a text may be dropped for the other only if the other holds it."""
    at = f"at the threshold of {percent(threshold)}"
    if a_in_b >= threshold and b_in_a >= threshold:
        return f"Each holds the other {at}: either may go, the other keeps its text."
    if a_in_b >= threshold:
        return f"{a} is contained in {b} {at}: {a} may go ({b} keeps its text), {b} may not."
    if b_in_a >= threshold:
        return f"{b} is contained in {a} {at}: {b} may go ({a} keeps its text), {a} may not."
    return f"Neither holds the other {at}: dropping either loses text."


def highlighted(a: str, b: str, config: TextConfig, labels: tuple[str, str]) -> tuple[Shown, Shown]:
    """Both texts as written, the passages each shares with the other marked."""
    passages = shared_passages(a, b, config)
    return tuple(  # type: ignore[return-value]
        Shown(label, segments(text, original_spans(text, p.spans, config)))
        for label, text, p in zip(labels, (a, b), passages, strict=True)
    )


def compare_view(a: str, b: str, config: DedupConfig) -> CompareView:
    """Compare two texts with a collection's settings, as ``neardup compare`` does with the
    same settings: the same figures, to the same four decimals (EmptyTextError names an empty
    text). The score is dedup's for the pair alone (no corpus: no template discounted)."""
    result = compare_texts(a, b, config, method=config.build_method())
    o = result.overlap
    figures = [
        Figure("Resemblance (Jaccard)", f"{o.resemblance:.4f}", "resemblance"),
        Figure("Containment of A in B", f"{o.containment_a_in_b:.4f}", "containment_a_in_b"),
        Figure("Containment of B in A", f"{o.containment_b_in_a:.4f}", "containment_b_in_a"),
        Figure("Dice", f"{o.dice:.4f}", "dice"),
        Figure("Shingles of A", str(o.a), "shingles_a"),
        Figure("Shingles of B", str(o.b), "shingles_b"),
        Figure("Shingles shared", str(o.shared), "shared"),
    ]
    if result.scores is not None:
        figures += [
            Figure(
                "Dedup's score of A in B (the pair alone)",
                f"{result.scores.score_a_in_b:.4f}",
                "score_a_in_b",
            ),
            Figure(
                "Dedup's score of B in A (the pair alone)",
                f"{result.scores.score_b_in_a:.4f}",
                "score_b_in_a",
            ),
        ]
    est = result.estimate
    estimate = None
    if est is not None:
        estimate = f"{est.method} estimates the {est.kind} at {est.estimate:.4f}" + (
            "; the texts share an index key" if est.shares_key else "; they share no index key"
        )
    a_shown, b_shown = highlighted(a, b, config.text, ("A", "B"))
    return CompareView(
        figures,
        holds(o.containment_a_in_b, o.containment_b_in_a, "A", "B"),
        verdict(o.containment_a_in_b, o.containment_b_in_a, config.threshold, "A", "B"),
        estimate,
        a_shown,
        b_shown,
    )


def stored_text(meta: Mapping[str, Any] | None) -> str | None:
    """A stored document's text, when its meta keeps it."""
    text = (meta or {}).get(TEXT_META)
    return text if isinstance(text, str) else None


def match_view(text: str, dup: Duplicate, collection: Collection) -> MatchView:
    """One near-duplicate of ``text``: its scores and, when its text is kept, both texts with
    their shared passages marked."""
    figures = [
        Figure("Score", f"{dup.score:.3f}", "score"),
        Figure("Containment of the new text in it", f"{dup.new_in_stored:.3f}", "new_in_stored"),
        Figure("Containment of it in the new text", f"{dup.stored_in_new:.3f}", "stored_in_new"),
    ]
    doc = collection.get(dup.id)
    other = stored_text(doc.meta if doc else None)
    new = stored = None
    if other is not None:
        new, stored = highlighted(text, other, collection.config.text, ("New text", dup.id))
    a, b = "the new text", dup.id
    said = holds(dup.new_in_stored, dup.stored_in_new, a, b)
    rule = verdict(dup.new_in_stored, dup.stored_in_new, collection.config.threshold, a, b)
    return MatchView(dup.id, figures, said, rule[0].upper() + rule[1:], new, stored)


def search_view(text: str, collection: Collection, exclude: str | None = None) -> list[MatchView]:
    """The stored near-duplicates of ``text``, best first (``exclude``: a document's own id)."""
    [result] = collection.query([text])
    dups = [d for d in result.duplicates if d.id != exclude][:MAX_SHOWN]
    return [match_view(text, dup, collection) for dup in dups]


def document_view(doc_id: str, collection: Collection) -> DocumentView | None:
    """A stored document and, when its text is kept, its near-duplicates; None if unknown."""
    doc = collection.get(doc_id)
    if doc is None:
        return None
    text = stored_text(doc.meta)
    meta = {k: v for k, v in (doc.meta or {}).items() if k != TEXT_META}
    matches = search_view(text, collection, exclude=doc_id) if text is not None else None
    return DocumentView(doc_id, meta, text, matches)


SETTING_LABELS = {
    "documents": "Documents",
    "method": "Method",
    "threshold": "Threshold",
    "measure": "Measure",
    "template_df": "Template shingles: held by at least (documents)",
    "config_id": "Config id",
    "format_version": "Signature format version",
}


RECENT = 10  # documents listed as the collection's recent additions


def collection_figures(collection: Collection) -> list[Figure]:
    """The collection's size and settings, labelled for a reader."""
    stats = collection.stats()
    figures = [
        Figure(SETTING_LABELS.get(key, key.replace("_", " ").capitalize()), str(value), key)
        for key, value in stats.items()
    ]
    shingle = collection.config.text.shingle
    figures.append(
        Figure("Shingles", f"{shingle.size} {shingle.unit}s, step {shingle.step}", "shingle")
    )
    return figures
