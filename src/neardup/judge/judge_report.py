"""The HTML report of ``neardup evaluate``: one self-contained page (inline CSS and SVG).

It shows the pairs found against the threshold for every method (like Fig. 3 of Zagorulko
et al.), precision and recall against the threshold, the full table of results, and for every
method at its best threshold the worst false positives (non-duplicates scored highest) and
false negatives (duplicates scored lowest) side by side with their shared passages marked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from itertools import pairwise

import numpy as np

from neardup.engines.local.dedup_report import highlight, html_table, text_window
from neardup.fingerprints.highlight import original_spans
from neardup.fingerprints.passages import Passages, shared_passages
from neardup.judge.evaluate import (
    MODE_TEXT,
    Evaluation,
    MethodEvaluation,
    dedup_args,
    pair_scores,
)
from neardup.text.text_config import TextConfig

EXAMPLES = 3  # false positives and false negatives shown per method
TRUE_PAIR_LIMIT = 1_000_000  # true pairs enumerated to find false negatives
TEXT_LIMIT = 1200  # characters of text shown per document
_W, _H, _ML, _MR, _MT, _MB = 640, 300, 60, 130, 24, 46
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:1300px;margin:0 auto;padding:24px}h1{margin:0 0 4px;font-size:24px}
h2{margin:32px 0 8px;font-size:19px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{margin:16px 0 6px;font-size:15px}.sub,.note{color:#59636e}.note{font-size:12px;margin:4px 0}
table{border-collapse:collapse;background:#fff;font-size:13px;margin:6px 0}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.n{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:flex;flex-wrap:wrap;gap:16px}
svg{background:#fff;border:1px solid #d0d7de;border-radius:6px}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}
.pair{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:10px;margin:10px 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.text{white-space:pre-wrap;word-wrap:break-word;font:12px/1.5 ui-monospace,monospace;
background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:8px;max-height:320px;
overflow:auto}mark{background:#ffe08a;padding:0}
"""


@dataclass(frozen=True, slots=True)
class Example:
    """A misjudged pair of documents and the method's score of it (0.0: not a candidate)."""

    left: int
    right: int
    score: float
    candidate: bool


@dataclass(frozen=True, slots=True)
class Examples:
    """The worst misjudged pairs of one method at one threshold."""

    threshold: float
    false_positives: list[Example]
    false_negatives: list[Example]

    def documents(self) -> set[int]:
        pairs = self.false_positives + self.false_negatives
        return {p.left for p in pairs} | {p.right for p in pairs}


def true_pairs(codes: np.ndarray, limit: int = TRUE_PAIR_LIMIT) -> tuple[np.ndarray, np.ndarray]:
    """Document pairs sharing a cluster code (at most about ``limit`` of them)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if codes.size else []
    bounds = np.r_[starts, codes.size].astype(np.int64)
    lefts, rights, total = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], 0
    for s, e in pairwise(bounds):
        if e - s < 2 or total >= limit:
            continue
        i, j = np.triu_indices(int(e - s), 1)
        members = np.sort(order[s:e])
        lefts.append(members[i])
        rights.append(members[j])
        total += i.size
    return np.concatenate(lefts), np.concatenate(rights)


def worst_examples(ev: Evaluation, me: MethodEvaluation, threshold: float, k: int) -> Examples:
    """Non-duplicates scored highest at or above ``threshold``, duplicates scored lowest below."""
    if ev.codes is not None:
        p = me.pairs_at(threshold)
        wrong = (p.score >= threshold) & (ev.codes[p.left] != ev.codes[p.right])
        fps = _pick(p.left[wrong], p.right[wrong], p.score[wrong], wrong[wrong], k, True)
        tl, tr = true_pairs(ev.codes)
        scores, candidate = pair_scores(p, tl, tr)
        miss = scores < threshold
        fns = _pick(tl[miss], tr[miss], scores[miss], candidate[miss], k, False)
        return Examples(threshold, fps, fns)
    a, b, labels = ev.pair_a, ev.pair_b, ev.labels
    if a is None or b is None or labels is None:
        raise ValueError("an evaluation has cluster codes or labelled pairs")
    scores, candidate = pair_scores(me.pairs_at(threshold), a, b)
    found = scores >= threshold
    picks = [
        _pick(a[mask], b[mask], scores[mask], candidate[mask], k, high)
        for mask, high in ((found & ~labels, True), (~found & labels, False))
    ]
    return Examples(threshold, *picks)


def _pick(
    left: np.ndarray,
    right: np.ndarray,
    scores: np.ndarray,
    candidate: np.ndarray,
    k: int,
    highest: bool,
) -> list[Example]:
    order = np.lexsort((right, left, -scores if highest else scores))[:k]
    return [
        Example(int(left[i]), int(right[i]), float(scores[i]), bool(candidate[i]))
        for i in order.tolist()
    ]


def collect_examples(ev: Evaluation, k: int = EXAMPLES) -> dict[str, Examples]:
    """Each method's worst examples at its best threshold (highest F1)."""
    return {me.method: worst_examples(ev, me, me.best().threshold, k) for me in ev.methods}


# ---------------------------------------------------------------------------- charts


def svg_lines(
    xs: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    percent: bool = False,
) -> str:
    """Several lines over shared x values, with a legend; y from 0 to the largest value."""
    top = (
        100.0
        if percent
        else _nice_top(max((max(v, default=0) for v in series.values()), default=0))
    )
    bottom, right = _H - _MB, _W - _MR
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)

    def px(x: float) -> float:
        return _ML + 10 + (right - _ML - 20) * ((x - lo) / (hi - lo) if hi > lo else 0.5)

    def py(y: float) -> float:
        return bottom - (bottom - _MT) * y / top

    parts = [
        f'<svg width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for k in range(6):
        y = top * k / 5
        label = f"{y:.0f}%" if percent else f"{y:,.0f}"
        parts.append(
            f'<line x1="{_ML}" x2="{right}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eaeef2"/>'
            f'<text x="{_ML - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{label}</text>'
        )
    for x in xs:
        parts.append(f'<text x="{px(x):.1f}" y="{bottom + 15}" text-anchor="middle">{x:g}</text>')
    parts.append(
        f'<text x="{(_ML + right) / 2}" y="{_H - 8}" text-anchor="middle">{escape(x_label)}</text>'
        f'<text transform="translate(14 {(_MT + bottom) / 2}) rotate(-90)" text-anchor="middle">'
        f"{escape(y_label)}</text>"
    )
    for i, (name, ys) in enumerate(series.items()):
        color = _COLORS[i % len(_COLORS)]
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys, strict=True))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in zip(xs, ys, strict=True):
            value = f"{y:.1f}%" if percent else f"{y:,.0f}"
            parts.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}">'
                f"<title>{escape(name)} t={x:g}: {value}</title></circle>"
            )
        ly = _MT + 16 * i + 6
        parts.append(
            f'<rect x="{right + 12}" y="{ly - 8}" width="12" height="4" fill="{color}"/>'
            f'<text x="{right + 30}" y="{ly - 3}">{escape(name)}</text>'
        )
    return "".join(parts) + "</svg>"


def _nice_top(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^k at least ``value`` (and 5): five round ticks."""
    value = max(value, 5.0)
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value)


def charts_section(ev: Evaluation) -> str:
    """Pairs found, precision and recall against t, one line per method."""
    xs = list(ev.thresholds)
    found = {m.method: [r.found for r in m.rows] for m in ev.methods}
    precision = {m.method: [100 * r.scores.precision for r in m.rows] for m in ev.methods}
    recall = {m.method: [100 * r.scores.recall for r in m.rows] for m in ev.methods}
    charts = [
        svg_lines(xs, found, title="Pairs found with score ≥ t", x_label="threshold t",
                  y_label="pairs found"),
        svg_lines(xs, precision, title="Precision", x_label="threshold t",
                  y_label="precision %", percent=True),
        svg_lines(xs, recall, title="Recall", x_label="threshold t", y_label="recall %",
                  percent=True),
    ]  # fmt: skip
    return (
        "<h2>Pairs found, precision and recall against the threshold</h2>"
        f"<div class='charts'>{''.join(charts)}</div>"
    )


# ---------------------------------------------------------------------------- tables


def methods_table(ev: Evaluation) -> str:
    rows = []
    for m in ev.methods:
        best = m.best()
        rows.append(
            (
                m.method,
                m.config.measure,
                "exact" if m.config.verify else "estimate",
                ", ".join(f"{k}={v}" for k, v in m.config.params) or "—",
                m.candidates,
                round(m.seconds, 2),
                best.threshold,
                round(best.scores.f1, 4),
                " ".join(["neardup dedup", *dedup_args(m.config)]),
            )
        )
    head = ["Method", "Measure", "Scores", "Parameters", "Candidates", "Seconds", "Best t"]
    return html_table([*head, "Best F1", "Same pairs as"], rows, caption="Methods")


def results_table(ev: Evaluation) -> str:
    clusters = ev.codes is not None
    head = ["Method", "t", "d ≤", "Found", "Judged", "TP", "P", "R", "F1", "Type I %", "Type II %"]
    rows = []
    for m in ev.methods:
        for r in m.rows:
            s = r.scores
            row = [m.method, r.threshold, "" if r.hamming is None else r.hamming, r.found]
            row += [s.predicted, s.true_positives, round(s.precision, 4), round(s.recall, 4)]
            row += [round(s.f1, 4), round(s.type_i_percent, 2), round(s.type_ii_percent, 2)]
            rows.append([*row, round(r.ari or 0.0, 4)] if clusters else row)
    return html_table([*head, "ARI"] if clusters else head, rows, caption="Every method × t")


# ---------------------------------------------------------------------------- examples


def _side(name: str, text: str | None, passages: Passages | None, config: TextConfig) -> str:
    """One text as written, the passages it shares with the other marked."""
    if text is None or passages is None:
        return f"<div><h4>{escape(name)}</h4><p class='note'>text not available</p></div>"
    spans = original_spans(text, passages.spans, config)
    first, last = text_window(text, spans, TEXT_LIMIT)
    cut = f"; characters {first:,}–{last:,}" if (first, last) != (0, len(text)) else ""
    shared = sum(e - s for s, e in passages.spans) / max(len(passages.text), 1)
    return (
        f"<div><h4>{escape(name)}</h4><div class='text'>{highlight(text, spans, TEXT_LIMIT)}"
        f"</div><p class='note'>{len(text):,} characters, {shared:.0%} of its words shared"
        f"{cut}</p></div>"
    )


def _example(ev: Evaluation, me: MethodEvaluation, ex: Example, texts: Mapping[int, str]) -> str:
    ta, tb = texts.get(ex.left), texts.get(ex.right)
    config = me.config.text
    if ta is not None and tb is not None:
        pa, pb = shared_passages(ta, tb, config)
        sides = _side(ev.ids[ex.left], ta, pa, config) + _side(ev.ids[ex.right], tb, pb, config)
    else:
        sides = _side(ev.ids[ex.left], None, None, config)
        sides += _side(ev.ids[ex.right], None, None, config)
    score = f"score {ex.score:.4f}" if ex.candidate else "not a candidate (no shared key)"
    return f"<div class='pair'><p class='note'>{score}</p><div class='side'>{sides}</div></div>"


def examples_section(
    ev: Evaluation, examples: Mapping[str, Examples], texts: Mapping[int, str]
) -> str:
    parts = [
        "<h2>Worst misjudged pairs at each method's best threshold</h2>",
        "<p class='sub'>Texts as written; passages shared with the other text are marked.</p>",
    ]
    for me in ev.methods:
        ex = examples.get(me.method)
        if ex is None:
            continue
        parts.append(f"<h3>{escape(me.method)} at t = {ex.threshold:g}</h3>")
        for title, items in (
            ("False positives (not duplicates, scored highest)", ex.false_positives),
            ("False negatives (duplicates, scored lowest)", ex.false_negatives),
        ):
            body = "".join(_example(ev, me, item, texts) for item in items)
            parts.append(f"<p><b>{title}</b></p>{body or '<p class=note>none</p>'}")
    return "".join(parts)


def render_evaluation_report(
    ev: Evaluation, examples: Mapping[str, Examples], texts: Mapping[int, str]
) -> str:
    """The whole page; ``texts`` needs only the documents of the examples."""
    sub = (
        f"truth {escape(ev.truth)} ({escape(ev.form)}) · {len(ev.ids):,} documents · "
        f"{ev.duplicates:,} true duplicate pairs · thresholds "
        f"{', '.join(f'{t:g}' for t in ev.thresholds)}"
    )
    judged = "dedup's clusters" if ev.judged_by == "clusters" else "the pairs found"
    note = (
        f"Scored {escape(MODE_TEXT[ev.mode])}; P, R, F1 and type I/II % are those of {judged}. "
        "SimHash estimates: score = 1 − d/64 for Hamming distance d, so t counts "
        "d ≤ ⌊64(1 − t)⌋ (column d ≤). Type I %: false duplicates among those found; "
        "type II %: true duplicates missed."
    )
    warnings = "".join(
        f"<p class='note'>⚠ {escape(m.method)}: {escape(m.warnings[0])}"
        + (f" (and {len(m.warnings) - 1} more like it)" if len(m.warnings) > 1 else "")
        + "</p>"
        for m in ev.methods
        if m.warnings
    )
    body = (
        f"<h1>neardup evaluate report</h1><p class='sub'>{sub}</p><p class='note'>{note}</p>"
        + methods_table(ev)
        + warnings
        + charts_section(ev)
        + "<h2>Results</h2>"
        + results_table(ev)
        + examples_section(ev, examples, texts)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>neardup evaluate report</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )
