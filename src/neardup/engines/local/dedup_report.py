"""``report.html`` of a dedup run: one self-contained page (inline CSS, inline SVG, no script).

The page shows the run's summary, the number of verified pairs above each threshold (like
Fig. 3 of Zagorulko et al.), the histogram of pair scores, the cluster-size distribution,
the top pairs side by side with their shared passages marked, and the weakest removals side
by side with what the keeper lacks of the removed text marked. Every chart comes with a small
table of the same numbers. All text from the corpus or the summary goes through
:func:`html.escape`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from html import escape
from itertools import pairwise
from typing import Any

import numpy as np

from neardup.dedup import DedupConfig, DedupResult, Pairs
from neardup.engines.local.labels import human_label
from neardup.engines.local.review import Removal
from neardup.fingerprints.highlight import align, map_spans
from neardup.fingerprints.passages import Passages, shared_passages
from neardup.text.text_config import TextConfig

STEP = 0.05  # threshold and histogram grid
TEXT_LIMIT = 2000  # characters of text shown per document
VIEW_BYTES = 1 << 29  # passages and alignments the report keeps for its other sections
_EPS = 1e-9  # scores are ratios: 0.55 may be stored as 0.5499999999999999
_W, _H = 560, 260  # chart size
_ML, _MR, _MT, _MB = 56, 16, 22, 48  # chart margins
_MAX_BARS = 40

_CSS = """

body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;
background:#f6f8fa}
main{max-width:1200px;margin:0 auto;padding:24px}h1{margin:0 0 4px;font-size:24px}
h2{margin:32px 0 8px;font-size:19px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{margin:0 0 8px;font-size:15px}.sub{color:#59636e;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:10px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 12px}
.card b{display:block;font-size:20px}.card span{color:#59636e;font-size:12px}
.tables{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-top:16px}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th,.kv td:first-child{background:#f0f3f6;font-weight:600}.kv .kv{font-size:12px}
td.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:2px 0 4px}
.chart{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
svg{background:#fff;border:1px solid #d0d7de;border-radius:6px}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}svg .axis{font-size:12px;fill:#59636e}
.pair{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:12px;margin:12px 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin-top:8px}
.doc h4{margin:0 0 4px;font-size:13px;word-break:break-all}
.text{white-space:pre-wrap;word-wrap:break-word;font:12px/1.5 ui-monospace,Consolas,monospace;
background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:8px;max-height:420px;
overflow:auto}
mark{background:#ffe08a;padding:0}mark.miss{background:#ffb8b0}
.note{color:#59636e;font-size:12px;margin:4px 0 0}
.empty{color:#59636e;font-style:italic}
"""


def threshold_grid(threshold: float, step: float = STEP) -> np.ndarray:
    """``threshold``, then every multiple of ``step`` above it, up to 1.0."""
    first = math.floor(threshold / step + _EPS) + 1
    multiples = [round(k * step, 10) for k in range(first, round(1.0 / step) + 1)]
    return np.array([threshold, *(t for t in multiples if t > threshold + _EPS)])


def threshold_counts(scores: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(t, n)``: the number ``n`` of pairs with score ≥ ``t`` for each ``t`` of the grid."""
    grid = threshold_grid(threshold)
    ordered = np.sort(np.asarray(scores, dtype=np.float64))
    below = np.searchsorted(ordered, grid - _EPS, side="left")
    return grid, (ordered.size - below).astype(np.int64)


def score_histogram(scores: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, counts)``: pair scores in bins ``[edges[i], edges[i+1])``, the last closed."""
    edges = threshold_grid(threshold)
    if edges.size == 1:
        edges = np.array([edges[0], 1.0])
    bins = edges.size - 1
    idx = np.searchsorted(edges, np.asarray(scores, dtype=np.float64) + _EPS, side="right") - 1
    return edges, np.bincount(np.clip(idx, 0, bins - 1), minlength=bins).astype(np.int64)


def cluster_size_counts(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes, clusters)``: how many clusters have each size (clusters of ≥ 2 only)."""
    sizes = np.bincount(np.asarray(labels, dtype=np.int64), minlength=1)
    sizes = sizes[sizes >= 2]
    values, counts = np.unique(sizes, return_counts=True)
    return values.astype(np.int64), counts.astype(np.int64)


def top_pairs(pairs: Pairs, top: int) -> np.ndarray:
    """Row numbers of the ``top`` pairs: highest score first, ties by ids (left, then right)."""
    order = np.lexsort((pairs.right, pairs.left, -np.asarray(pairs.score)))
    return order[: max(top, 0)]


def _fmt(value: Any) -> str:
    """A summary value as plain text (numbers compact, thousands separated)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        return f"{float(value):,.4g}" if abs(value) < 1e5 else f"{float(value):,.0f}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _fmt_t(t: float) -> str:
    return f"{t:.2f}" if abs(t * 100 - round(t * 100)) < 1e-6 else f"{t:.4g}"


def _nice_ticks(top: float) -> list[int]:
    """0 and about five round integer ticks covering ``top``."""
    raw = max(top / 5, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [int(step * k) for k in range(math.ceil(max(top, 1) / step) + 1)]


def _text(x: float, y: float, label: str) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle">{escape(label)}</text>'


def _frame(title: str, x_label: str, y_label: str, ticks: list[int]) -> list[str]:
    """Opening tag, axes, horizontal grid lines with y labels, and axis titles."""
    bottom, left, right = _H - _MB, _ML, _W - _MR
    parts = [
        f'<svg width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
    ]
    for tick in ticks:
        y = bottom - (bottom - _MT) * tick / ticks[-1]
        parts.append(
            f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:,}</text>'
        )
    parts.append(
        f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#59636e"/>'
        f'<line x1="{left}" x2="{left}" y1="{_MT}" y2="{bottom}" stroke="#59636e"/>'
        f'<text class="axis" x="{(left + right) / 2}" y="{_H - 8}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text class="axis" transform="translate(14 {(_MT + bottom) / 2}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    return parts


def svg_bar_chart(
    labels: Sequence[str],
    values: Sequence[int],
    *,
    title: str,
    x_label: str,
    y_label: str,
    edge_labels: Sequence[str] | None = None,
) -> str:
    """Vertical bars with their values on top; labels under the bars, or at the bar edges
    when ``edge_labels`` (one more than bars, as for a histogram) is given."""
    ticks = _nice_ticks(max(values, default=0))
    parts = _frame(title, x_label, y_label, ticks)
    n, bottom = len(values), _H - _MB
    slot = (_W - _ML - _MR) / max(n, 1)
    bar = slot * 0.8 if edge_labels is not None else min(slot * 0.8, 48.0)
    every = math.ceil(n / 14) if n else 1
    for i, value in enumerate(values):
        height = (bottom - _MT) * value / ticks[-1]
        x = _ML + i * slot
        parts.append(
            f'<rect x="{x + (slot - bar) / 2:.1f}" y="{bottom - height:.1f}" width="{bar:.1f}" '
            f'height="{height:.1f}" fill="#4f8fd6"><title>{escape(labels[i])}: {value:,}'
            "</title></rect>"
        )
        if n <= 24 or value:
            parts.append(_text(x + slot / 2, bottom - height - 4, f"{value:,}"))
        if edge_labels is None and i % every == 0:
            parts.append(_text(x + slot / 2, bottom + 15, labels[i]))
    for i, label in enumerate(edge_labels or ()):
        if i % every == 0 or i == n:
            parts.append(_text(_ML + i * slot, bottom + 15, label))
    return "".join(parts) + "</svg>"


def svg_line_chart(
    xs: Sequence[float], ys: Sequence[int], *, title: str, x_label: str, y_label: str
) -> str:
    """Points ``(x, y)`` joined by a line, each labelled with its value; x on a linear axis."""
    ticks = _nice_ticks(max(ys, default=0))
    parts = _frame(title, x_label, y_label, ticks)
    bottom, width = _H - _MB, _W - _ML - _MR - 24
    lo, hi = (xs[0], xs[-1]) if xs else (0.0, 1.0)
    span = (hi - lo) or 1.0
    points = [
        (
            _ML + 12 + width * ((x - lo) / span if hi > lo else 0.5),
            bottom - (bottom - _MT) * y / ticks[-1],
        )
        for x, y in zip(xs, ys, strict=True)
    ]
    if points:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#4f8fd6" stroke-width="2"/>')
    every = math.ceil(len(xs) / 12) if xs else 1
    for i, ((px, py), x, y) in enumerate(zip(points, xs, ys, strict=True)):
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="#1f5fa8">'
            f"<title>score ≥ {_fmt_t(x)}: {y:,}</title></circle>" + _text(px, py - 8, f"{y:,}")
        )
        if i % every == 0 or i == len(xs) - 1:
            parts.append(_text(px, bottom + 15, _fmt_t(x)))
    return "".join(parts) + "</svg>"


def _cell(value: Any) -> str:
    """One ``<td>``: numbers right-aligned, dicts as tables inside, everything escaped."""
    if isinstance(value, Mapping):
        return f"<td>{html_table((), _labelled(value), cls='kv')}</td>"
    number = isinstance(value, int | float | np.number) and not isinstance(value, bool)
    return f"<td{' class=n' if number else ''}>{escape(_fmt(value))}</td>"


def _labelled(values: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """Items with their string keys as a reader's labels."""
    return [(human_label(k) if isinstance(k, str) else k, v) for k, v in values.items()]


def html_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], *, caption: str = "", cls: str = ""
) -> str:
    """A plain table (no header row when ``headers`` is empty); see :func:`_cell`."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    head = f"<thead><tr>{head}</tr></thead>" if head else ""
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    attr = f' class="{escape(cls)}"' if cls else ""
    return f"<table{attr}>{cap}{head}<tbody>{body}</tbody></table>"


def summary_section(result: DedupResult, config: DedupConfig, summary: Mapping[str, Any]) -> str:
    """Key figures from the result, then the summary's scalars and each nested dict as tables."""
    n = len(result.ids)
    removed = int(np.count_nonzero(result.removed))
    figures = {
        "documents": n,
        "empty documents": int(result.empty.size),
        "candidate pairs": result.candidates,
        "verified pairs": len(result.pairs),
        "clusters": int(cluster_size_counts(result.labels)[1].sum()),
        "removed": removed,
        "kept": n - removed,
        "pairs declined (removal would lose content)": result.declined,
        "template shingles discounted": result.template_shingles,
    }
    cards = "".join(
        f"<div class='card'><b>{v:,}</b><span>{escape(k.capitalize())}</span></div>"
        for k, v in figures.items()
    )
    scalars = {k: v for k, v in summary.items() if not isinstance(v, Mapping)}
    groups = [("Run", _labelled(scalars))]
    groups += [
        (human_label(str(k)), _labelled(v)) for k, v in summary.items() if isinstance(v, Mapping)
    ]
    tables = [html_table((), rows, caption=name, cls="kv") for name, rows in groups if rows]
    run = (
        f"method <b>{escape(config.method)}</b> · {escape(config.measure)} ≥ "
        f"<b>{_fmt_t(config.threshold)}</b> · {escape(_fmt(config.text.shingle.unit))} "
        f"{config.text.shingle.size}-shingles · "
        f"{'exact verification' if config.verify else 'estimated scores'}"
    )
    weak = "".join(f"<p class='note'>⚠ {escape(w)}</p>" for w in result.weak)
    rule = summary.get("guarantee")
    rule = f"<p class='sub'>Guarantee: {escape(str(rule))}.</p>" if rule else ""
    return (
        f"<p class='sub'>{run}</p>{rule}<div class='cards'>{cards}</div>{weak}"
        f"<div class='tables'>{''.join(tables)}</div>"
    )


def _figure(heading: str, svg: str, headers: list[str], *columns: list, cls: str) -> str:
    """A chart and, beside it, a table of the same numbers (one column per header)."""
    table = html_table(headers, list(zip(*columns, strict=True)), cls=cls)
    return f"<h2>{escape(heading)}</h2><div class='chart'>{svg}{table}</div>"


def charts_section(result: DedupResult, config: DedupConfig) -> str:
    """Pairs above each threshold, score histogram and cluster sizes, each with its table."""
    scores, measure = result.pairs.score, config.measure
    grid, counts = threshold_counts(scores, config.threshold)
    above = svg_line_chart(
        grid.tolist(),
        counts.tolist(),
        title="Verified pairs with score ≥ t",
        x_label=f"threshold t ({measure})",
        y_label="pairs with score ≥ t",
    )
    edges, hist = score_histogram(scores, config.threshold)
    bins = [f"{_fmt_t(lo)}–{_fmt_t(hi)}" for lo, hi in pairwise(edges)]
    histogram = svg_bar_chart(
        bins,
        hist.tolist(),
        title="Histogram of pair scores",
        x_label=f"{measure} score (bins of {STEP:g})",
        y_label="pairs",
        edge_labels=[_fmt_t(e) for e in edges],
    )
    ts = [_fmt_t(t) for t in grid]
    page = _figure(
        "Pairs above each threshold",
        above,
        ["t", "Pairs ≥ t"],
        ts,
        counts.tolist(),
        cls="threshold-counts",
    ) + _figure(
        "Pair scores", histogram, ["Score", "Pairs"], bins, hist.tolist(), cls="score-histogram"
    )
    sizes, clusters = cluster_size_counts(result.labels)
    if not sizes.size:
        return page + "<h2>Cluster sizes</h2><p class='empty'>No clusters of 2 or more.</p>"
    labels = [str(s) for s in sizes[:_MAX_BARS]]
    if sizes.size > _MAX_BARS:  # the long tail in one bar
        labels[-1] = f"≥{labels[-1]}"
        clusters = np.r_[clusters[: _MAX_BARS - 1], clusters[_MAX_BARS - 1 :].sum()]
    chart = svg_bar_chart(
        labels,
        clusters.tolist(),
        title="Clusters by size",
        x_label="cluster size (documents)",
        y_label="clusters",
    )
    return page + _figure(
        "Cluster sizes", chart, ["Size", "Clusters"], labels, clusters.tolist(), cls="cluster-sizes"
    )


def text_window(text: str, spans: Sequence[tuple[int, int]], limit: int) -> tuple[int, int]:
    """About ``limit`` characters of ``text`` to show, cut at spaces: from the start, or from
    just before the first shared passage when that lies beyond the limit."""
    if len(text) <= limit:
        return 0, len(text)
    start = 0
    if spans and spans[0][1] > limit:
        space = text.find(" ", max(spans[0][0] - 200, 0), spans[0][0])
        start = space + 1 if space >= 0 else spans[0][0]
    end = min(start + limit, len(text))
    if end < len(text):
        space = text.rfind(" ", max(end - 200, start + 1), end)
        end = space if space > 0 else end
    return start, end


def highlight(
    text: str, spans: Sequence[tuple[int, int]], limit: int = TEXT_LIMIT, cls: str = ""
) -> str:
    """``text`` escaped, with ``spans`` in ``<mark>`` (of class ``cls``, if given), cut to
    :func:`text_window`."""
    first, last = text_window(text, spans, limit)
    pieces, pos = ["… " if first else ""], first
    tag = f"<mark class='{escape(cls)}'>" if cls else "<mark>"
    for start, end in spans:
        start, end = max(start, pos), min(end, last)
        if start >= end:
            continue
        pieces += [escape(text[pos:start]), f"{tag}{escape(text[start:end])}</mark>"]
        pos = end
    pieces.append(escape(text[pos:last]))
    if last < len(text):
        pieces.append(" …")
    return "".join(pieces)


class _Views:
    """What the report works out of its documents' whole texts — the passages a pair shares,
    a text's tokens aligned with it as written — kept for its other sections: the top pairs
    and the removals to review often show the same documents, and each of these is passes
    over whole texts (a long text's cost many times over). The least recently used are
    dropped past ``max_bytes`` held (the canonical texts' characters and the alignments'
    arrays). Documents of one text (copies: a licence in many packages) share their
    entries: each is worked out for the first of them."""

    def __init__(self, texts: Mapping[int, str], config: TextConfig, max_bytes: int) -> None:
        self.texts = texts
        self.config = config
        self.max_bytes = max_bytes
        self._held: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._first: dict[str, int] = {}  # a text → the first document asked about with it

    def shared(self, a: int, b: int) -> tuple[Passages, Passages]:
        """:func:`shared_passages` of documents ``a`` and ``b``."""
        a, b = self._first_of(a), self._first_of(b)
        if ("shared", a, b) not in self._held and ("shared", b, a) in self._held:
            pb, pa = self.shared(b, a)
            return pa, pb
        made = partial(shared_passages, self.texts[a], self.texts[b], self.config)
        return self._get(("shared", a, b), made)  # type: ignore[no-any-return]

    def original_spans(self, d: int, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
        """:func:`~neardup.fingerprints.highlight.original_spans` of document ``d``."""
        d = self._first_of(d)
        tokens = self._get(("align", d), partial(align, self.texts[d], self.config))
        return map_spans(tokens, spans)

    def _first_of(self, d: int) -> int:
        """The first document asked about whose text is document ``d``'s."""
        return self._first.setdefault(self.texts[d], d)

    def _get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        if (found := self._held.get(key)) is not None:
            self._held.move_to_end(key)
            return found[0]
        value = make()
        size = _held_bytes(value)
        self._held[key] = (value, size)
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._held) > 1:
            _, (_, dropped) = self._held.popitem(last=False)
            self._bytes -= dropped
        return value


def _held_bytes(value: Any) -> int:
    """About the bytes an entry of :class:`_Views` holds: a pair's canonical texts and
    spans, or a text's alignment arrays."""
    if isinstance(value, tuple):
        return sum(len(p.text) + 16 * len(p.spans) for p in value)
    return sum(getattr(value, f).nbytes for f in ("starts", "ends", "orig_starts", "orig_ends"))


def _document(
    doc_id: str, index: int, text: str | None, passages: Passages | None, views: _Views
) -> str:
    """One side of a pair: its text as written, the shared passages (found in the canonical
    text, :mod:`neardup.fingerprints.highlight`) marked."""
    head = f"<h4>{escape(doc_id)} <span class='note'>(document {index:,})</span></h4>"
    if text is None or passages is None:
        return f"<div class='doc'>{head}<p class='empty'>text not available</p></div>"
    spans = views.original_spans(index, passages.spans)
    shared = sum(e - s for s, e in passages.spans) / max(len(passages.text), 1)
    note = f"{len(text):,} characters, {shared:.0%} of its words shared"
    first, last = text_window(text, spans, TEXT_LIMIT)
    if (first, last) != (0, len(text)):
        note += f"; cut to characters {first:,}–{last:,}"
    return (
        f"<div class='doc'>{head}<div class='text'>{highlight(text, spans)}"
        f"</div><p class='note'>{escape(note)}</p></div>"
    )


def pairs_section(
    result: DedupResult,
    texts: Mapping[int, str],
    config: DedupConfig,
    top: int,
    views: _Views | None = None,
) -> str:
    """The top pairs side by side, as written, their shared passages marked."""
    views = views or _Views(texts, config.text, VIEW_BYTES)
    rows = top_pairs(result.pairs, top)
    head = f"<h2>Top {len(rows):,} of {len(result.pairs):,} verified pairs</h2>"
    if not rows.size:
        return head + "<p class='empty'>No verified pairs.</p>"
    note = "Texts as written; the passages each shares with the other are marked."
    p, parts = result.pairs, [head, f"<p class='sub'>{note}</p>"]
    for rank, k in enumerate(rows.tolist(), 1):
        a, b = int(p.left[k]), int(p.right[k])
        ta, tb = texts.get(a), texts.get(b)
        both = ta is not None and tb is not None
        pa, pb = views.shared(a, b) if both else (None, None)
        values = (p.score, p.resemblance, p.containment_lr, p.containment_rl)
        measures = html_table(
            ["Score", "Resemblance", "Containment of a in b", "Containment of b in a"],
            [tuple(float(v[k]) for v in values)],
        )
        parts.append(
            f"<section class='pair' id='pair-{rank}'><h3>#{rank} · a = {escape(result.ids[a])}"
            f" ↔ b = {escape(result.ids[b])}</h3>{measures}<div class='side'>"
            f"{_document(result.ids[a], a, ta, pa, views)}"
            f"{_document(result.ids[b], b, tb, pb, views)}</div></section>"
        )
    return "".join(parts)


def _marked_side(
    doc_id: str, index: int, text: str | None, spans: Sequence[tuple[int, int]], note: str, cls: str
) -> str:
    """One side of a removal: its text as written with ``spans`` (canonical) marked."""
    head = f"<h4>{escape(doc_id)} <span class='note'>(document {index:,})</span></h4>"
    if text is None:
        return f"<div class='doc'>{head}<p class='empty'>text not available</p></div>"
    return (
        f"<div class='doc'>{head}<div class='text'>{highlight(text, spans, cls=cls)}</div>"
        f"<p class='note'>{escape(note)}</p></div>"
    )


def review_section(
    result: DedupResult,
    texts: Mapping[int, str],
    review: Sequence[tuple[Removal, Passages | None]],
    config: DedupConfig,
    views: _Views | None = None,
) -> str:
    """The weakest removals (``review.jsonl``'s first lines) side by side: the removed text
    with the passages its keeper lacks marked, the keeper with what it shares marked."""
    views = views or _Views(texts, config.text, VIEW_BYTES)
    total = int(np.count_nonzero(result.removed))
    head = f"<h2>Removals to review: the weakest {len(review):,} of {total:,}</h2>"
    if not review:
        return head + "<p class='empty'>No document was removed.</p>"
    note = (
        "Weakest first: least of the removed text held by its keeper as written (review.jsonl lists"
        " every removal). Left: the removed text, what its keeper lacks marked; right: the keeper, "
        "what it shares with the removed text marked."
    )
    parts = [head, f"<p class='sub'>{escape(note)}</p>"]
    for rank, (row, missing) in enumerate(review, 1):
        removed, kept = texts.get(row.doc), texts.get(row.keeper)
        lacks: list[tuple[int, int]] = []
        shares: list[tuple[int, int]] = []
        if removed is not None and kept is not None:
            if missing is not None:
                lacks = views.original_spans(row.doc, missing.spans)
            shares = views.original_spans(row.keeper, views.shared(row.doc, row.keeper)[1].spans)
        measures = html_table(
            ["Containment as written", "Score (as scored)", "Passages the keeper lacks"],
            [(row.containment, row.score, len(missing.spans) if missing is not None else None)],
        )
        gone, keeper = result.ids[row.doc], result.ids[row.keeper]
        parts.append(
            f"<section class='pair review' id='review-{rank}'><h3>#{rank} · "
            f"{escape(gone)} removed into {escape(keeper)}</h3>{measures}<div class='side'>"
            + _marked_side(
                gone,
                row.doc,
                removed,
                lacks,
                "removed; the keeper lacks the marked passages",
                "miss",
            )
            + _marked_side(
                keeper,
                row.keeper,
                kept,
                shares,
                "kept; the passages it shares with the removed text are marked",
                "",
            )
            + "</div></section>"
        )
    return "".join(parts)


def load_kernels(config: TextConfig) -> None:
    """Load the compiled kernels that mark shared passages (from numba's cache, ~50 ms), e.g.
    on another thread while the outputs are written, by marking a short pair."""
    text = "the kernels load here"
    passages, _ = shared_passages(text, text, config)
    map_spans(align(text, config), passages.spans)


def render_report(
    result: DedupResult,
    texts: Mapping[int, str],
    config: DedupConfig,
    *,
    summary: Mapping[str, Any],
    top: int = 20,
    review: Sequence[tuple[Removal, Passages | None]] = (),
) -> str:
    """The whole ``report.html`` page. ``texts`` needs only the documents of the top pairs
    and of the ``review`` (the first removals to review, with their missing passages)."""
    views = _Views(texts, config.text, VIEW_BYTES)
    body = (
        "<h1>neardup dedup report</h1>"
        + summary_section(result, config, summary)
        + charts_section(result, config)
        + pairs_section(result, texts, config, top, views)
        + review_section(result, texts, review, config, views)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>neardup dedup report</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )
