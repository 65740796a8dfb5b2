"""Dedup quality on ../shared/data/neardup-bench: pair precision, recall, F1 per language.

Without options: neardup's default ``DedupConfig`` (what ``neardup dedup`` does with no
options); ``--method/--threshold/--measure/--unit/--size/--param`` change it.

``--peers`` adds, per language, the usual peer pipelines of ``bench_dedup`` (datasketch,
rensa, gaoya: word 5-shingle MinHash-LSH on ``\\w+`` / whitespace tokens, 128 permutations)
at t = 0.5 and 0.8, their query hits joined into clusters (connected components), and neardup
``--method minhash --measure resemblance --threshold 0.8`` (default shingles, and word
5-shingles as in ``bench_dedup``), beside the run above, then checks the issue's floors.

    python benchmarks/bench_dedup_quality.py [--langs en,ru,zh] [--method full] [...] [--peers]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

import numpy as np
from _corpus import SHARED

from neardup.dedup import DedupConfig, deduplicate
from neardup.dedup.cluster import connected_components
from neardup.judge.evaluate import PairScores, cluster_pair_scores
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

BENCH = SHARED / "data" / "neardup-bench"
PEERS = ("datasketch", "rensa", "gaoya")
PEER_THRESHOLDS = (0.5, 0.8)
PEER_TOKENS = {"datasketch": r"\w+ words", "rensa": r"\w+ words", "gaoya": "own tokenizer"}
MINHASH_08 = (  # the floor: --method minhash --measure resemblance --threshold 0.8
    DedupConfig(method="minhash", measure="resemblance", threshold=0.8),
    # the same on the speed benchmark's word 5-shingles (bench_dedup.py)
    DedupConfig(
        text=TextConfig(CanonConfig(), ShingleConfig(size=5)),
        method="minhash",
        measure="resemblance",
        threshold=0.8,
    ),
)


def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def config_from(args: argparse.Namespace) -> DedupConfig:
    shingle = {} if args.unit is None else {"unit": args.unit}
    if args.size:
        shingle["size"] = args.size
    overrides = {
        k: v
        for k, v in (
            ("method", args.method),
            ("threshold", args.threshold),
            ("measure", args.measure),
        )
        if v is not None
    }
    params = tuple((k, json.loads(v)) for k, v in (p.split("=", 1) for p in args.param))
    base = DedupConfig()
    text = TextConfig(CanonConfig(), ShingleConfig(**shingle)) if shingle else base.text
    return DedupConfig(text=text, params=params, **overrides)


def describe(config: DedupConfig) -> str:
    shingle = config.text.shingle
    return f"{config.method} {config.measure}≥{config.threshold} {shingle.unit}{shingle.size}"


def run_neardup(docs: list[dict], truth: list, config: DedupConfig) -> tuple[PairScores, float]:
    t0 = time.perf_counter()
    result = deduplicate(((d["id"], d["text"]) for d in docs), config)
    seconds = time.perf_counter() - t0
    return cluster_pair_scores(result.labels, truth), seconds


def run_peer(name: str, texts: list[str], truth: list, threshold: float):
    from bench_dedup import RUNNERS

    t0 = time.perf_counter()
    left, right = RUNNERS[name](texts, threshold)
    seconds = time.perf_counter() - t0
    labels = connected_components(len(texts), np.asarray(left), np.asarray(right))
    return cluster_pair_scores(labels, truth), seconds


def row(label: str, scores: PairScores, seconds: float) -> str:
    return (
        f"  {label:<44}{scores.precision:>7.3f}{scores.recall:>7.3f}{scores.f1:>7.3f}"
        f"{scores.predicted:>9}{seconds:>8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,ru,zh")
    parser.add_argument("--method", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--measure", default=None)
    parser.add_argument("--unit", default=None)
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--peers", action="store_true", help="peer pipelines and floors too")
    args = parser.parse_args()
    config = config_from(args)
    verdicts = []
    for lang in args.langs.split(","):
        docs = read_jsonl(BENCH / f"{lang}-bench.jsonl.gz")
        truth_of = {r["id"]: r["cluster"] for r in read_jsonl(BENCH / f"{lang}-truth.jsonl.gz")}
        truth = [truth_of[d["id"]] for d in docs]
        if not args.peers:
            t0 = time.perf_counter()
            result = deduplicate(((d["id"], d["text"]) for d in docs), config)
            seconds = time.perf_counter() - t0
            scores = cluster_pair_scores(result.labels, [truth_of[i] for i in result.ids])
            print(
                f"{lang}: {len(docs)} docs {seconds:.1f}s  candidates {result.candidates}  "
                f"P {scores.precision:.3f} R {scores.recall:.3f} F1 {scores.f1:.3f}  "
                f"{describe(config)}  {result.timings}"
            )
            continue
        print(f"{lang}: {len(docs)} docs, {scores_total(truth)} true duplicate pairs")
        head = f"  {'pipeline':<44}{'P':>7}{'R':>7}{'F1':>7}{'found':>9}{'seconds':>8}"
        print(head, flush=True)
        main_scores, seconds = run_neardup(docs, truth, config)
        default = "default" if config == DedupConfig() else "options"
        print(row(f"neardup {default}: {describe(config)}", main_scores, seconds), flush=True)
        for minhash_config in MINHASH_08:
            minhash, seconds = run_neardup(docs, truth, minhash_config)
            print(row(f"neardup {describe(minhash_config)}", minhash, seconds), flush=True)
            what = f"minhash t=0.8 ({describe(minhash_config)}) precision ≥ 0.95"
            verdicts.append((lang, what, minhash.precision >= 0.95, minhash.precision))
        texts = [d["text"] for d in docs]
        best_peer = 0.0
        for name in PEERS:
            for threshold in PEER_THRESHOLDS:
                scores, seconds = run_peer(name, texts, truth, threshold)
                best_peer = max(best_peer, scores.f1)
                label = f"{name} t={threshold} (5-shingles of {PEER_TOKENS[name]})"
                print(row(label, scores, seconds), flush=True)
        if default == "default":
            verdicts += [
                (
                    lang,
                    "defaults precision ≥ 0.97",
                    main_scores.precision >= 0.97,
                    main_scores.precision,
                ),
                (lang, "defaults F1 ≥ 0.90", main_scores.f1 >= 0.90, main_scores.f1),
                (
                    lang,
                    f"defaults F1 ≥ best peer F1 ({best_peer:.3f})",
                    main_scores.f1 >= best_peer,
                    main_scores.f1,
                ),
            ]
    for lang, what, ok, value in verdicts:
        print(f"floor {lang}: {what}: {value:.3f} — {'met' if ok else 'MISSED'}")


def scores_total(truth: list) -> int:
    return cluster_pair_scores(np.arange(len(truth)), truth).actual


if __name__ == "__main__":
    main()
