"""Dedup quality on ../shared/data/neardup-bench: pair precision, recall, F1 per language.

    python benchmarks/bench_dedup_quality.py [--langs en,ru,zh] [--method full] [...]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

from _corpus import SHARED

from neardup.config import CanonConfig, ShingleConfig, TextConfig
from neardup.dedup import DedupConfig, deduplicate
from neardup.evaluate import cluster_pair_scores

BENCH = SHARED / "data" / "neardup-bench"


def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="en,ru,zh")
    parser.add_argument("--method", default=None)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--measure", default=None)
    parser.add_argument("--unit", default=None)
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--max-bucket", type=int, default=None)
    args = parser.parse_args()
    for lang in args.langs.split(","):
        docs = read_jsonl(BENCH / f"{lang}-bench.jsonl.gz")
        truth = {r["id"]: r["cluster"] for r in read_jsonl(BENCH / f"{lang}-truth.jsonl.gz")}
        shingle = {} if args.unit is None else {"unit": args.unit}
        if args.size:
            shingle["size"] = args.size
        overrides = {k: v for k, v in (("method", args.method), ("threshold", args.threshold),
                                        ("measure", args.measure), ("max_bucket", args.max_bucket)) if v is not None}
        params = tuple((k, json.loads(v)) for k, v in (p.split("=", 1) for p in args.param))
        base = DedupConfig()
        text = TextConfig(CanonConfig(), ShingleConfig(**shingle)) if shingle else base.text
        config = DedupConfig(text=text, params=params, **overrides)
        t0 = time.perf_counter()
        result = deduplicate(((d["id"], d["text"]) for d in docs), config)
        seconds = time.perf_counter() - t0
        scores = cluster_pair_scores(result.labels, [truth[i] for i in result.ids])
        print(f"{lang}: {len(docs)} docs {seconds:.1f}s  candidates {result.candidates}  "
              f"P {scores.precision:.3f} R {scores.recall:.3f} F1 {scores.f1:.3f}  "
              f"{config.method} {config.measure}≥{config.threshold} "
              f"{config.text.shingle.unit}{config.text.shingle.size}  {result.timings}")


if __name__ == "__main__":
    main()
