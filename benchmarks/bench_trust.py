"""Quality of one dedup config on every bench: neardup-bench, the trust benches, labelled pairs.

Runs ``neardup.dedup.deduplicate`` on the shared ``neardup-bench`` (en, ru, zh) and on every
trust bench of ``make_trust_bench.py`` (mail, newsletter, syndicated, mixed × en, ru, zh; made
on first use, cached in ``$TMPDIR/neardup-trust``) of the chosen split, and scores:

- pair precision / recall / F1 of the output clusters against the truth clusters; a pair of
  the bench's ``allowed`` list (a quoted whole inside b) counts neither as a false positive nor
  towards recall;
- removals, and **lossy** removals: removed documents whose plain containment (shingle sets of
  the run's text config) in their kept document is below 0.5 — content the run threw away;
- the labelled pair sets of ``shared/data/pairs`` scored pair by pair as dedup scores them
  (``neardup.judge.textpairs``): P / R / F1 at the config's threshold.

Options set the config as ``bench_dedup_quality.py`` does; ``--set NAME=VALUE`` sets any field
of ``DedupConfig`` (or of its ``ShingleConfig`` / ``CanonConfig``) by name, the value read as
JSON (else a string), so new fields can be swept without editing this script; a JSON list
value runs each of its values. ``--grid`` sweeps stop words on/off × size 3/4/5 × threshold
0.5/0.55/0.6/0.7 (× the ``--set`` lists) on the tune split, prints mean F1 and min precision
per config, then the best config's figures on the held-out split.

    python benchmarks/bench_trust.py [--split tune|heldout|both] [--threshold 0.6] [--size 4]
        [--no-stopwords] [--set guard=0.8] [--kinds mail,...] [--langs en,...] [--no-shared]
        [--no-pairs] [--grid] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from _corpus import SHARED
from bench_dedup_quality import BENCH, read_jsonl
from make_trust_bench import DEFAULT_OUT, KINDS, LANGS, build, paths

from neardup.dedup import DedupConfig, decide, deduplicate, score_candidates
from neardup.dedup.cluster import KeepPolicy
from neardup.fingerprints.measures import overlap
from neardup.fingerprints.shingles import fingerprint_batch
from neardup.judge.evaluate import PairScores, cluster_pair_scores
from neardup.judge.textpairs import score_text_pairs
from neardup.methods import method_classes
from neardup.text.text_config import CanonConfig, ShingleConfig

PAIRS = SHARED / "data" / "pairs"
PAIR_SETS = {
    "en": ["en-mrpc.jsonl"],
    "ru": ["ru-paraphraser.jsonl"],
    "zh": ["zh-lcqmc-test.jsonl", "zh-pawsx-test.jsonl"],
}
GRID = {"stopwords": (True, False), "size": (3, 4, 5), "threshold": (0.5, 0.55, 0.6, 0.65, 0.7)}
# the floors per bench and language: the grid prefers the config meeting most of them
FLOOR_PRECISION, FLOOR_F1 = 0.97, 0.95
LOSSY = 0.5


# ------------------------------------------------------------------------------------------
# configs


def parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def with_setting(config: DedupConfig, name: str, value: Any) -> DedupConfig:
    """``config`` with one field of it (or of its shingle / canon config) replaced."""
    if isinstance(value, list):
        value = tuple(value)
    fields = {f.name for f in dataclasses.fields(DedupConfig)}
    if name in fields:
        if name == "keep" and isinstance(value, str):
            value = KeepPolicy.parse(value)
        if name == "params" and isinstance(value, dict):
            value = tuple(value.items())
        return dataclasses.replace(config, **{name: value})
    text = config.text
    if name in {f.name for f in dataclasses.fields(ShingleConfig)}:
        shingle = dataclasses.replace(text.shingle, **{name: value})
        return dataclasses.replace(config, text=dataclasses.replace(text, shingle=shingle))
    if name in {f.name for f in dataclasses.fields(CanonConfig)}:
        canon = dataclasses.replace(text.canon, **{name: value})
        return dataclasses.replace(config, text=dataclasses.replace(text, canon=canon))
    raise SystemExit(
        f"--set {name}: not a field of DedupConfig ({', '.join(sorted(fields))}), "
        "ShingleConfig or CanonConfig"
    )


def base_config(args: argparse.Namespace) -> DedupConfig:
    config = DedupConfig()
    for name in ("method", "threshold", "measure", "guard", "keep"):
        value = getattr(args, name)
        if value is not None:
            config = with_setting(config, name, value)
    if args.chain:
        config = with_setting(config, "chain", True)
    if args.param:
        params = tuple((k, parse_value(v)) for k, v in (p.split("=", 1) for p in args.param))
        config = dataclasses.replace(config, params=params)
    if args.unit is not None:
        config = with_setting(config, "unit", args.unit)
    if args.size is not None:
        config = with_setting(config, "size", args.size)
    if args.no_stopwords:
        config = with_setting(config, "stopwords", False)
    return config


def settings(args: argparse.Namespace) -> list[tuple[str, list[Any]]]:
    """``--set`` options as (name, values): a JSON list is several values."""
    out = []
    for item in args.set:
        if "=" not in item:
            raise SystemExit(f"--set {item!r}: expected NAME=VALUE")
        name, raw = item.split("=", 1)
        value = parse_value(raw)
        out.append((name.strip(), value if isinstance(value, list) else [value]))
    return out


def expand(config: DedupConfig, sets: list[tuple[str, list[Any]]]) -> list[DedupConfig]:
    configs = []
    for combo in itertools.product(*(values for _, values in sets)):
        c = config
        for (name, _), value in zip(sets, combo, strict=True):
            c = with_setting(c, name, value)
        configs.append(c)
    return configs


def describe(config: DedupConfig) -> str:
    """Method, measure, threshold, shingles, stop words and every other non-default field."""
    s, canon = config.text.shingle, config.text.canon
    words = [
        f"{config.method} {config.measure}≥{config.threshold:g}",
        f"{s.unit}{s.size}",
        "stopwords" if canon.stopwords else "no-stopwords",
    ]
    default = DedupConfig()
    for f in dataclasses.fields(DedupConfig):
        if f.name in {"method", "measure", "threshold", "text"}:
            continue
        value = getattr(config, f.name)
        if value != getattr(default, f.name):
            words.append(f"{f.name}={value}")
    for part, base in ((s, default.text.shingle), (canon, default.text.canon)):
        for f in dataclasses.fields(part):
            if f.name not in {"unit", "size", "stopwords"}:
                value = getattr(part, f.name)
                if value != getattr(base, f.name):
                    words.append(f"{f.name}={value}")
    return " ".join(words)


# ------------------------------------------------------------------------------------------
# benches


@dataclasses.dataclass
class Bench:
    name: str  # neardup-bench, mail, newsletter, ...
    lang: str
    split: str  # shared, tune, heldout
    ids: list[str]
    texts: list[str]
    truth: np.ndarray  # cluster code per document
    allowed: np.ndarray  # (k, 2) document indices: [a, b], a wholly inside b


def load_shared(lang: str) -> Bench:
    docs = read_jsonl(BENCH / f"{lang}-bench.jsonl.gz")
    truth_of = {r["id"]: r["cluster"] for r in read_jsonl(BENCH / f"{lang}-truth.jsonl.gz")}
    ids = [d["id"] for d in docs]
    codes = np.unique([str(truth_of[i]) for i in ids], return_inverse=True)[1]
    return Bench(
        "neardup-bench",
        lang,
        "shared",
        ids,
        [d["text"] for d in docs],
        codes,
        np.empty((0, 2), np.int64),
    )


def load_trust(kind: str, lang: str, split: str, out: Path, scale: float) -> Bench:
    build(kind, lang, split, scale, out)
    p = paths(out, kind, lang, split)
    docs = read_jsonl(p["docs"])
    truth_of = {r["id"]: r["cluster"] for r in read_jsonl(p["truth"])}
    ids = [d["id"] for d in docs]
    index = {doc_id: i for i, doc_id in enumerate(ids)}
    allowed = np.array(
        [(index[r["a"]], index[r["b"]]) for r in read_jsonl(p["allowed"])], dtype=np.int64
    ).reshape(-1, 2)
    codes = np.unique([truth_of[i] for i in ids], return_inverse=True)[1]
    return Bench(kind, lang, split, ids, [d["text"] for d in docs], codes, allowed)


# ------------------------------------------------------------------------------------------
# scoring


def pair_scores(labels: np.ndarray, bench: Bench) -> PairScores:
    """Cluster pair scores with the allowed pairs counted neither way."""
    base = cluster_pair_scores(labels, bench.truth)
    if not bench.allowed.size:
        return base
    lo = np.minimum(bench.allowed[:, 0], bench.allowed[:, 1])
    hi = np.maximum(bench.allowed[:, 0], bench.allowed[:, 1])
    pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)
    a, b = pairs[:, 0], pairs[:, 1]
    same_pred = labels[a] == labels[b]
    same_truth = bench.truth[a] == bench.truth[b]
    return PairScores(
        base.true_positives - int((same_pred & same_truth).sum()),
        base.predicted - int(same_pred.sum()),
        base.actual - int(same_truth.sum()),
    )


def removals(result: Any, bench: Bench, config: DedupConfig) -> dict[str, Any]:
    """Removed documents, how much of each its keeper holds, the wrong removals."""
    removed = np.flatnonzero(result.removed)
    keep_of = getattr(result, "keep_of", None)  # the document kept in its place, if reported
    keepers = keep_of[removed] if keep_of is not None else result.keepers[result.labels[removed]]
    if not removed.size:
        return {"removed": 0, "lossy": 0, "lossy_share": 0.0, "wrong": 0, "containment_p10": 1.0}
    docs = np.unique(np.concatenate([removed, keepers]))
    where = {int(d): i for i, d in enumerate(docs)}
    prints = fingerprint_batch([bench.texts[d] for d in docs], config.text)
    contained = np.array(
        [
            overlap(prints[where[int(r)]], prints[where[int(k)]]).containment_a_in_b
            for r, k in zip(removed, keepers, strict=True)
        ]
    )
    lossy = int((contained < LOSSY).sum())
    # removed though of another truth cluster than its keeper, and not quoted whole in it
    allowed = {(int(a), int(b)) for a, b in bench.allowed}
    wrong = sum(
        bench.truth[r] != bench.truth[k] and (int(r), int(k)) not in allowed
        for r, k in zip(removed, keepers, strict=True)
    )
    return {
        "removed": int(removed.size),
        "lossy": lossy,
        "lossy_share": lossy / removed.size,
        "wrong": int(wrong),
        "containment_p10": float(np.percentile(contained, 10)),
    }


def judge(result: Any, bench: Bench, config: DedupConfig, seconds: float) -> dict[str, Any]:
    if list(result.ids) != bench.ids:
        raise SystemExit(f"{bench.name}-{bench.lang}: result ids are not in input order")
    scores = pair_scores(np.asarray(result.labels), bench)
    return {
        "bench": bench.name,
        "lang": bench.lang,
        "split": bench.split,
        "docs": len(bench.ids),
        **{k: scores.as_dict()[k] for k in ("precision", "recall", "f1", "found", "duplicates")},
        **removals(result, bench, config),
        "seconds": seconds,
    }


def run(bench: Bench, config: DedupConfig) -> dict[str, Any]:
    t0 = time.perf_counter()
    result = deduplicate(zip(bench.ids, bench.texts, strict=True), config)
    return judge(result, bench, config, time.perf_counter() - t0)


def run_thresholds(bench: Bench, configs: list[DedupConfig], reuse: bool) -> list[dict[str, Any]]:
    """Configs differing only in threshold: candidates scored once, decided per threshold."""
    if not reuse:
        return [run(bench, c) for c in configs]
    t0 = time.perf_counter()
    scored = score_candidates(zip(bench.ids, bench.texts, strict=True), configs[0])
    shared = time.perf_counter() - t0
    rows = []
    for c in configs:
        t1 = time.perf_counter()
        result = decide(scored, c)
        rows.append(judge(result, bench, c, shared + time.perf_counter() - t1))
    scored.close()
    return rows


def reusable(configs: list[DedupConfig], probe: Bench) -> bool:
    """Whether scoring once and deciding per threshold gives what ``deduplicate`` gives (the
    method takes no threshold, and a probe run agrees): else every config runs in full."""
    _, config_type = method_classes(configs[0].method)
    if "threshold" in {f.name for f in dataclasses.fields(config_type)}:
        return False
    items = list(zip(probe.ids, probe.texts, strict=True))
    with score_candidates(items, configs[0]) as scored:
        for c in (configs[0], configs[-1]):
            full, fast = deduplicate(items, c), decide(scored, c)
            if not (
                np.array_equal(full.labels, fast.labels)
                and np.array_equal(full.removed, fast.removed)
            ):
                print("  (decide(score_candidates) ≠ deduplicate: every config runs in full)")
                return False
    return True


def run_pairs(config: DedupConfig, langs: list[str]) -> list[dict[str, Any]]:
    rows = []
    for lang in langs:
        for name in PAIR_SETS[lang]:
            with open(PAIRS / name, encoding="utf-8") as fh:
                records = [json.loads(line) for line in fh]
            t0 = time.perf_counter()
            pairs, _ = score_text_pairs(
                [r["a"] for r in records], [r["b"] for r in records], config
            )
            predicted = np.zeros(len(records), dtype=bool)
            hit = np.asarray(pairs.left)[np.asarray(pairs.score) >= config.threshold] // 2
            predicted[hit] = True
            label = np.array([r["label"] == 1 for r in records])
            scores = PairScores(
                int((predicted & label).sum()), int(predicted.sum()), int(label.sum())
            )
            rows.append(
                {
                    "set": name.removesuffix(".jsonl"),
                    "lang": lang,
                    "pairs": len(records),
                    **{k: scores.as_dict()[k] for k in ("precision", "recall", "f1", "found")},
                    "seconds": time.perf_counter() - t0,
                }
            )
    return rows


# ------------------------------------------------------------------------------------------
# output


def bench_tables(rows: list[dict[str, Any]]) -> str:
    out = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["bench"], r["split"]), []).append(r)
    for (name, split), group in groups.items():
        title = name if split == "shared" else f"{name} ({split})"
        out += [
            f"\n**{title}**\n",
            "| lang | docs | P | R | F1 | removed | lossy<0.5 | lossy % | wrong | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in group:
            out.append(
                f"| {r['lang']} | {r['docs']:,} | {r['precision']:.3f} | {r['recall']:.3f} | "
                f"{r['f1']:.3f} | {r['removed']:,} | {r['lossy']:,} | "
                f"{100 * r['lossy_share']:.1f} | {r['wrong']:,} | {r['seconds']:.1f} |"
            )
    return "\n".join(out)


def pairs_table(rows: list[dict[str, Any]]) -> str:
    out = [
        "\n**labelled pairs** (paraphrase sets)\n",
        "| set | lang | pairs | P | R | F1 | found | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['set']} | {r['lang']} | {r['pairs']:,} | {r['precision']:.3f} | "
            f"{r['recall']:.3f} | {r['f1']:.3f} | {r['found']:,} | {r['seconds']:.1f} |"
        )
    return "\n".join(out)


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {
        "mean_f1": float(np.mean([r["f1"] for r in rows])),
        "min_precision": float(np.min([r["precision"] for r in rows])),
        "mean_recall": float(np.mean([r["recall"] for r in rows])),
        "lossy": int(sum(r["lossy"] for r in rows)),
        "removed": int(sum(r["removed"] for r in rows)),
        "wrong": int(sum(r["wrong"] for r in rows)),
    }


# ------------------------------------------------------------------------------------------


def load_benches(args: argparse.Namespace, split: str, shared: bool) -> list[Bench]:
    langs = args.langs.split(",")
    benches = [load_shared(lang) for lang in langs] if shared else []
    for kind in args.kinds.split(","):
        benches += [load_trust(kind, lang, split, args.out, args.scale) for lang in langs]
    return benches


def evaluate(args: argparse.Namespace, configs: list[DedupConfig]) -> dict[str, Any]:
    splits = ["tune", "heldout"] if args.split == "both" else [args.split]
    report: dict[str, Any] = {"runs": []}
    t_all = time.perf_counter()
    for config in configs:
        print(f"\n## {describe(config)}", flush=True)
        rows = []
        for i, split in enumerate(splits):
            for bench in load_benches(args, split, shared=not args.no_shared and i == 0):
                rows.append(run(bench, config))
        print(bench_tables(rows))
        for split in splits:
            part = [r for r in rows if r["split"] == split]
            if part:
                s = summary(part)
                print(
                    f"\ntrust benches ({split}): mean F1 {s['mean_f1']:.3f}, min P "
                    f"{s['min_precision']:.3f}, removed {s['removed']:,}, lossy<0.5 "
                    f"{s['lossy']:,}, wrong removals {s['wrong']:,}"
                )
        pair_rows = [] if args.no_pairs else run_pairs(config, args.langs.split(","))
        if pair_rows:
            print(pairs_table(pair_rows))
        report["runs"].append({"config": describe(config), "benches": rows, "pairs": pair_rows})
    report["seconds"] = time.perf_counter() - t_all
    print(f"\ntotal {report['seconds']:.1f}s", flush=True)
    return report


def grid(args: argparse.Namespace, base: DedupConfig) -> dict[str, Any]:
    tune = load_benches(args, "tune", shared=not args.no_shared)
    sets = settings(args)
    groups = []  # configs differing only in threshold
    for stop, size, *extra in itertools.product(
        GRID["stopwords"], GRID["size"], *(values for _, values in sets)
    ):
        c = with_setting(with_setting(base, "stopwords", stop), "size", size)
        for (name, _), value in zip(sets, extra, strict=True):
            c = with_setting(c, name, value)
        groups.append([with_setting(c, "threshold", t) for t in GRID["threshold"]])
    probe = min((b for b in tune if b.split == "tune"), key=lambda b: len(b.ids), default=tune[0])
    reuse = reusable(groups[0], probe)
    t0 = time.perf_counter()
    results = []
    print(f"grid on the tune split: {len(groups) * len(GRID['threshold'])} configs", flush=True)
    print(f"{'config':<62}{'mean F1':>8}{'min P':>7}{'mean R':>7}{'lossy':>7}{'wrong':>7}")
    for group in groups:
        per_bench = [run_thresholds(b, group, reuse) for b in tune]
        for j, config in enumerate(group):
            rows = [rs[j] for rs in per_bench]
            s = summary(rows)
            met = sum(r["precision"] >= FLOOR_PRECISION and r["f1"] >= FLOOR_F1 for r in rows)
            results.append(
                {
                    "config": describe(config),
                    **s,
                    "floors_met": met,
                    "rows": rows,
                    "_config": config,
                }
            )
            print(
                f"{describe(config):<62}{s['mean_f1']:>8.3f}{s['min_precision']:>7.3f}"
                f"{s['mean_recall']:>7.3f}{s['lossy']:>7}{s['wrong']:>7}{met:>4}/{len(rows)}",
                flush=True,
            )
    # most floors met, then type I errors first (the paper's order)
    best = max(results, key=lambda r: (r["floors_met"], r["min_precision"], r["mean_f1"]))
    print(f"\ngrid {time.perf_counter() - t0:.0f}s; best on tune: {best['config']}")
    print(bench_tables(best["rows"]))
    config = best["_config"]
    print(f"\n## best config on held-out data: {describe(config)}")
    held = [run(b, config) for b in load_benches(args, "heldout", shared=False)]
    print(bench_tables(held))
    s = summary(held)
    print(
        f"\nheld-out: mean F1 {s['mean_f1']:.3f}, min P {s['min_precision']:.3f}, "
        f"lossy<0.5 {s['lossy']:,}, wrong removals {s['wrong']:,}"
    )
    pair_rows = [] if args.no_pairs else run_pairs(config, args.langs.split(","))
    if pair_rows:
        print(pairs_table(pair_rows))
    for r in results:
        del r["_config"]
    return {"grid": results, "best": best["config"], "heldout": held, "pairs": pair_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="tune", choices=["tune", "heldout", "both"])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--langs", default=",".join(LANGS))
    parser.add_argument("--method", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--measure", default=None)
    parser.add_argument("--unit", default=None)
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--param", action="append", default=[], help="method NAME=VALUE")
    parser.add_argument("--no-stopwords", action="store_true")
    parser.add_argument("--keep", default=None, help="first|longest|shortest|field:NAME")
    parser.add_argument("--guard", type=float, default=None)
    parser.add_argument("--chain", action="store_true")
    parser.add_argument(
        "--set", action="append", default=[], help="any config field: NAME=JSON (a list sweeps)"
    )
    parser.add_argument("--grid", action="store_true", help="sweep on tune, best on held-out")
    parser.add_argument("--no-shared", action="store_true", help="skip neardup-bench")
    parser.add_argument("--no-pairs", action="store_true", help="skip the labelled pair sets")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="trust bench directory")
    parser.add_argument("--scale", type=float, default=1.0, help="trust bench scale")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = parser.parse_args()
    base = base_config(args)
    report = grid(args, base) if args.grid else evaluate(args, expand(base, settings(args)))
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
