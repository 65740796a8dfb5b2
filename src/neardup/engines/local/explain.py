"""Why a finished run kept or removed two documents: its own figures for them, and its rule.

:func:`explain` reads the run (:mod:`neardup.engines.local.runread`) and gives, for documents
A and B:

- the **decision as the run made it**, from the ``_duplicate_of`` of its removed records:
  ``a_removed_into_b``, ``b_removed_into_a`` or ``both_kept`` (either may still have been
  removed into a third document, which is said);
- **containment both ways as written**: on every canonical shingle (the run's text config),
  nothing discounted;
- **the scores both ways as scored**: the run's own, from ``pairs`` when it verified the
  pair (with any other number that record holds), else scored again as the run scores a
  pair (:func:`neardup.dedup.pairscore.score_alone`, with the run's ``templates.npy``);
- the passages of each that the other lacks, and those made of template shingles;
- the rule that decided, in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from neardup.dedup.cluster import CONTAINER_MARGIN
from neardup.dedup.config import DedupConfig
from neardup.dedup.identity import named_words, nameless
from neardup.dedup.pairscore import PairScores, score_alone
from neardup.dedup.templates import NEAR_IDENTICAL
from neardup.dedup.translation import function_words, translations
from neardup.engines.local.runread import FinishedRun, RunDocument, words_hashed_alike
from neardup.errors import InputError
from neardup.fingerprints.measures import Overlap, overlap
from neardup.fingerprints.passages import Passages, Shingled, shingled
from neardup.fingerprints.shingles import fingerprint_batch
from neardup.fingerprints.word_kernels import REPEATED, WORD

Decision = Literal["a_removed_into_b", "b_removed_into_a", "both_kept"]
MAX_PASSAGES = 20  # passages listed per document and kind
MAX_NAMES = 12  # rare words listed in a rule


@dataclass(frozen=True, slots=True)
class Side:
    """One of the two documents as the run saw it."""

    id: str
    removed_into: str | None  # the document kept for it (None: kept)
    kept_for: int  # documents the run removed into it
    shingles: int  # distinct canonical shingles
    template_shingles: int  # of them, shingles the run discounted as template
    lacking: Passages  # its passages the other document does not hold
    template: Passages  # its passages made of template shingles
    rare_words: int = 0  # its words the run counted rare (its names: the identity check)
    names_lacking: tuple[str, ...] = ()  # of them, those the other document lacks
    own_words: int = 0  # of them, its own: words no other document uses, repeated in it
    translated: str = ""  # how the other document translates this one ("": it does not)

    @property
    def named(self) -> bool:
        """Whether the other document names this one (holds enough of its rare words)."""
        missing = len(self.names_lacking)
        counts = ([missing], [self.rare_words - missing], [self.own_words])
        return not nameless(*map(np.array, counts))[0]


@dataclass(frozen=True, slots=True)
class Explanation:
    """The run's figures for documents A and B, its decision and the rule that made it."""

    a: Side
    b: Side
    written: Overlap  # both documents' canonical shingle sets, nothing discounted
    scored: PairScores
    scores_from: Literal["pairs", "recomputed"]
    pair: dict[str, Any] | None  # the run's record of the pair (None: not a verified pair)
    decision: Decision
    rule: str
    threshold: float
    guard: float
    measure: str
    templates_known: bool  # the run wrote its template fingerprints
    guarantee: str = ""  # the run's removal rule, as summary.json states it
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` object: ``decision`` and every figure."""
        numbers = {
            k: v
            for k, v in (self.pair or {}).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        return {
            "a": self.a.id,
            "b": self.b.id,
            "decision": self.decision,
            "rule": self.rule,
            "guarantee": self.guarantee,
            "removed_into": {"a": self.a.removed_into, "b": self.b.removed_into},
            "verified_pair": self.pair is not None,
            "threshold": self.threshold,
            "guard": self.guard,
            "measure": self.measure,
            "as_written": {
                "containment_a_in_b": self.written.containment_a_in_b,
                "containment_b_in_a": self.written.containment_b_in_a,
                "resemblance": self.written.resemblance,
                "shingles_a": self.written.a,
                "shingles_b": self.written.b,
                "shared": self.written.shared,
            },
            "as_scored": {
                "score_a_in_b": self.scored.score_a_in_b,
                "score_b_in_a": self.scored.score_b_in_a,
                "source": self.scores_from,
            },
            "pair": numbers or None,
            "templates_known": self.templates_known,
            "template_shingles": {"a": self.a.template_shingles, "b": self.b.template_shingles},
            "template_passages": {
                "a": _listed(self.a.template),
                "b": _listed(self.b.template),
            },
            "lacking": {
                "a_not_in_b": _listed(self.a.lacking),
                "b_not_in_a": _listed(self.b.lacking),
            },
            "kept_for": {"a": self.a.kept_for, "b": self.b.kept_for},
            "rare_words": {"a": self.a.rare_words, "b": self.b.rare_words},
            "own_words": {"a": self.a.own_words, "b": self.b.own_words},
            "rare_words_lacking": {
                "a_not_in_b": list(self.a.names_lacking),
                "b_not_in_a": list(self.b.names_lacking),
            },
            "notes": self.notes,
        }


def _listed(passages: Passages) -> list[str]:
    return passages.passages()[:MAX_PASSAGES]


def explain(run: FinishedRun, id_a: str, id_b: str) -> Explanation:
    """The run's figures and decision for the documents ``id_a`` and ``id_b``; InputError
    naming an id the run does not hold."""
    docs, kept_for = run.documents((id_a, id_b))
    for doc_id in (id_a, id_b):
        if doc_id not in docs:
            raise InputError(f"{run.out}: no document with id {doc_id!r} in kept or removed")
    a, b = docs[id_a], docs[id_b]
    config = run.config
    prints = fingerprint_batch([a.text, b.text], config.text)
    written = overlap(prints[0], prints[1])
    record = run.pair(id_a, id_b)
    notes = []
    if record is not None:
        scored, source = _recorded(record), "pairs"
    else:
        scored, source = score_alone(prints, config, run.template), "recomputed"
        if run.template is None and config.template_df:
            notes.append("the run wrote no templates.npy: scored again without templates")
        if not config.verify:
            notes.append("the run estimated its scores (--no-verify); scored exactly here")
    template = run.template if run.template is not None else np.empty(0, np.uint64)
    sa, sb = shingled([a.text, b.text], config.text)
    names_a, names_b = _names(a.text, b.text, run.rare_words, config)
    sides = (
        _side(a, sa, sb, prints[0], template, kept_for, names_a),
        _side(b, sb, sa, prints[1], template, kept_for, names_b),
    )
    if config.identity and run.rare_words is None:
        notes.append(
            "the run wrote no rare_words.npy: its identity check is not shown"
            if words_hashed_alike(run.summary)
            else "another version of neardup made the run and hashed its rare words otherwise: "
            "its identity check is not shown (run it again to see it)"
        )
    # the run's hubs (a pass over all its pairs) explain only a verified pair both kept
    into_other = a.duplicate_of == id_b or b.duplicate_of == id_a
    hubs = run.hub_groups() if record is not None and not into_other else {}
    decision, rule = decide(sides[0], sides[1], written, scored, record is not None, config, hubs)
    return Explanation(
        sides[0],
        sides[1],
        written,
        scored,
        source,  # type: ignore[arg-type]
        record,
        decision,
        rule,
        config.threshold,
        config.removal_guard,
        config.measure,
        run.template is not None,
        str(run.summary.get("guarantee", "")),
        notes,
    )


def _recorded(record: dict[str, Any]) -> PairScores:
    return PairScores(
        float(record["score_a_in_b"]),
        float(record["score_b_in_a"]),
        float(record["resemblance"]),
        float(record["containment_a_in_b"]),
        float(record["containment_b_in_a"]),
    )


def _side(
    doc: RunDocument,
    own: Shingled,
    other: Shingled,
    prints: np.ndarray,
    template: np.ndarray,
    kept_for: dict[str, int],
    names: tuple[int, tuple[str, ...], int, str],
) -> Side:
    return Side(
        doc.id,
        doc.duplicate_of,
        kept_for.get(doc.id, 0),
        int(prints.size),
        int(np.isin(prints, template).sum()),
        own.lacking(other),
        own.held(template),
        *names,
    )


def _names(
    text_a: str, text_b: str, rare: np.ndarray | None, config: DedupConfig
) -> tuple[tuple[int, tuple[str, ...], int, str], tuple[int, tuple[str, ...], int, str]]:
    """For A and for B: how many of its words the run counted rare, those of them the other
    text lacks (sorted), how many are its own, and how the other translates it; nothing
    when the run checked no identity."""
    if not config.identity:
        return (0, (), 0, ""), (0, (), 0, "")
    words_a, words_b = named_words(text_a, config.text), named_words(text_b, config.text)
    how_a, how_b = _translated(words_a, words_b, config)
    if rare is None:
        return (0, (), 0, how_a), (0, (), 0, how_b)
    own_words = rare[rare & REPEATED > 0] & WORD

    def side(
        own: dict[int, str], other: dict[int, str], how: str
    ) -> tuple[int, tuple[str, ...], int, str]:
        hashes = np.fromiter(own, dtype=np.uint64, count=len(own))
        mine = hashes[np.isin(hashes & WORD, rare & WORD)].tolist()
        lacking = tuple(sorted(own[h] for h in mine if h not in other))
        return len(mine), lacking, int(np.isin(hashes & WORD, own_words).sum()), how

    return side(words_a, words_b, how_a), side(words_b, words_a, how_b)


def _translated(
    words_a: dict[int, str], words_b: dict[int, str], config: DedupConfig
) -> tuple[str, str]:
    """How B translates A and how A translates B, in words ("": it does not), as the run's
    identity check tells (:mod:`neardup.dedup.translation`)."""
    known = function_words(config.text)
    sets = [np.array(sorted(w), dtype=np.uint64) for w in (words_a, words_b)]
    offsets = np.array([0, sets[0].size, sets[0].size + sets[1].size], dtype=np.int64)
    found = translations(np.concatenate(sets), offsets, np.array([0, 1]), np.array([1, 0]), known)
    said = []
    by_words = found.by_words()
    for i, refused in enumerate(found.translated().tolist()):
        own = known.languages[found.own[i]] if found.own[i] >= 0 else ""
        if not refused:
            said.append("")
        elif by_words[i]:
            other = known.languages[found.other[i]]
            said.append(f"it adds {found.foreign[i]} function words of {other} to a text in {own}")
        elif found.script[i]:
            said.append(f"it adds text in a script of characters to a text in {own}")
        else:
            said.append(
                f"it adds {found.lettered[i]} words with letters beyond ASCII (of "
                f"{found.added[i]} it adds) to a text in {own}"
            )
    return said[0], said[1]


def decide(
    a: Side,
    b: Side,
    written: Overlap,
    scored: PairScores,
    verified: bool,
    config: DedupConfig,
    hubs: Mapping[str, int] | None = None,
) -> tuple[Decision, str]:
    """The run's decision on the pair (from its outputs) and the rule behind it, in words
    (``hubs``: the run's hubs and how many groups each holds)."""
    hubs = hubs or {}
    threshold, guard, keep = config.threshold, config.removal_guard, str(config.keep)
    if a.removed_into == b.id:
        return "a_removed_into_b", _removal("A", "B", written, scored, guard, keep, flip=False)
    if b.removed_into == a.id:
        return "b_removed_into_a", _removal("B", "A", written, scored, guard, keep, flip=True)
    said = [
        f"{label} was removed into a third document, {side.removed_into}"
        for label, side in (("A", a), ("B", b))
        if side.removed_into is not None
    ]
    s_ab, s_ba = scored.score_a_in_b, scored.score_b_in_a
    if not verified:
        why = (
            f"not a verified pair: its scores (A in B {s_ab:.4f}, B in A {s_ba:.4f}) are below "
            f"the threshold {threshold:g}"
            if max(s_ab, s_ba) < threshold
            else f"not a verified pair: it scores {max(s_ab, s_ba):.4f}, at least the threshold "
            f"{threshold:g}, but the run did not find it among its candidates"
        )
        return "both_kept", "; ".join([why, *said])
    held = [(x, y, s) for x, y, s in (("A", "B", s_ab), ("B", "A", s_ba)) if s >= guard]
    if not held:
        why = (
            f"a verified pair (score {max(s_ab, s_ba):.4f} ≥ the threshold {threshold:g}), but "
            f"neither holds the other at the guard {guard:g} (A in B {s_ab:.4f}, B in A "
            f"{s_ba:.4f}): removing either would lose content"
        )
        return "both_kept", "; ".join([why, *said])
    sides = {"A": a, "B": b}
    reasons = []
    for x, y, s in held:
        if sides[x].removed_into is not None:
            continue  # said: removed into a third document
        if sides[y].removed_into is not None:
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), but {y} was removed into "
                f"{sides[y].removed_into}, and {x} is not removed into a removed document"
            )
        elif (
            sides[y].id in hubs
            and not min(written.containment_a_in_b, written.containment_b_in_a) >= guard
        ):
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), but {y} is a hub: it holds "
                f"documents of {hubs[sides[y].id]} distinct groups and absorbs none of them"
            )
        elif sides[x].translated and written.resemblance < NEAR_IDENTICAL:
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), but {y} translates {x}: "
                f"{sides[x].translated}"
            )
        elif not sides[x].named and written.resemblance < NEAR_IDENTICAL:
            lacking = sides[x].names_lacking
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), but {y} does not name {x}: "
                f"it lacks {len(lacking)} of {x}'s {sides[x].rare_words} rare words "
                f"({', '.join(lacking[:MAX_NAMES])}{', …' if len(lacking) > MAX_NAMES else ''})"
                + (f", {own} of them {x}'s own" if (own := sides[x].own_words) else "")
            )
        elif sides[x].kept_for:
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), but {x} is the keeper of "
                f"{sides[x].kept_for} removed document(s) that stay with it"
            )
        else:
            reasons.append(
                f"{y} holds {x} at the guard ({s:.4f} ≥ {guard:g}), yet the run's keeper rules "
                f"kept {x}" + " (see the guarantee)"
            )
    return "both_kept", "; ".join([*reasons, *said]) or "both kept"


def _removal(
    gone: str,
    keeper: str,
    written: Overlap,
    scored: PairScores,
    guard: float,
    keep: str,
    flip: bool,
) -> str:
    """Why ``gone`` was removed into ``keeper``: the keeper's hold on it, and whether the
    removed document held the keeper too (the fuller text kept) or not (the container)."""
    c_in, c_out = written.containment_a_in_b, written.containment_b_in_a
    s_in, s_out = scored.score_a_in_b, scored.score_b_in_a
    if flip:
        c_in, c_out, s_in, s_out = c_out, c_in, s_out, s_in
    text = (
        f"{keeper} holds {c_in:.4f} of {gone} as written and {s_in:.4f} as scored"
        + (" (at least the guard both ways)" if min(c_in, s_in) >= guard else "")
        + f": {gone} was removed into {keeper}"
    )
    if c_in < guard:
        text += f"; as written it is below the guard {guard:g}: the run judged the score alone"
    if s_out >= guard:
        fuller = (
            f"{keeper} holds more of {gone} ({c_in:.4f}) than {gone} of {keeper} ({c_out:.4f}) "
            f"as written, by more than {CONTAINER_MARGIN:g}: the fuller text"
            if c_in - c_out > CONTAINER_MARGIN
            else f"they hold each other within {CONTAINER_MARGIN:g} as written, and the keep "
            f"policy ({keep}) chose it"
        )
        return text + f"; each holds the other at the guard, and {keeper} is kept: {fuller}"
    return (
        text + f"; {gone} does not hold {keeper} at the guard ({s_out:.4f}): the container is kept"
    )
