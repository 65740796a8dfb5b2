"""What recall-tuned LSH keys cost: keys per document, candidates per verified pair, time.

On a slice of ../shared/data/corpus/en-gutenberg-100k.jsonl.gz, dedup's default text config,
one threshold and measure: every method variant runs ``score_candidates`` (keys → candidates
→ exact verification) and is compared with ``full`` (every pair sharing a shingle, so its
pairs ≥ t are all there are). Reported per variant: keys per document, candidate pairs,
verified pairs (≥ t), candidates per verified pair, recall against ``full``, and the median
seconds of sketching+keys, candidates and verification over ``--repeat`` runs (the machine
is shared: timings are noisy).

    python benchmarks/bench_lsh_keys.py [--docs 20000] [--threshold 0.8]
        [--measure resemblance] [--repeat 1]
"""

from __future__ import annotations

import argparse
import math
import statistics

from _corpus import load_texts

from neardup.dedup import DedupConfig, score_candidates

VARIANTS: dict[str, tuple[str, dict]] = {
    "full (truth)": ("full", {}),
    "minhash tuned": ("minhash", {}),
    "megashingle paper 6×14": ("megashingle", {"groups": 6, "group_size": 14}),
    "megashingle tuned": ("megashingle", {}),
    "megashingle 13×5 (78 keys, no key cap)": ("megashingle", {"groups": 13, "group_size": 5}),
    "simhash paper k=3, 4 blocks": ("simhash", {"max_distance": 3}),
    "simhash tuned": ("simhash", {}),
    "simhash, 8 fingerprints": ("simhash", {"fingerprints": 8}),
}


def keys_per_doc(config: DedupConfig) -> str:
    """Keys a non-empty document emits (from the resolved method config)."""
    cfg = config.build_method().config
    if config.method == "full":
        return "shingles"
    if config.method == "minhash":
        return str(cfg.bands)
    if config.method == "megashingle":
        g = cfg.groups
        return str(g if cfg.min_super == 1 else g * (g - 1) // 2)
    if cfg.pigeonhole:
        return str(math.comb(cfg.blocks, cfg.max_distance))
    return str(cfg.bands)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--measure", default="resemblance")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    texts = load_texts(limit=args.docs)
    items = [(str(i), t) for i, t in enumerate(texts)]
    truth: set[tuple[int, int]] | None = None
    print(f"{len(texts)} texts, t = {args.threshold} {args.measure}")
    print(
        "| variant | keys/doc | candidates | verified ≥ t | cand./verified | recall | "
        "sketch+keys s | candidates s | verify s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, (method, params) in VARIANTS.items():
        wanted = not args.only or label in args.only or method in args.only
        if not wanted and method != "full":
            continue
        config = DedupConfig(
            method=method,
            params=tuple(params.items()),
            threshold=args.threshold,
            measure=args.measure,  # type: ignore[arg-type]
        )
        times: dict[str, list[float]] = {"sketch": [], "candidates": [], "verify": []}
        for _ in range(args.repeat):
            with score_candidates(items, config) as scored:
                for k in times:
                    times[k].append(scored.timings[k])
                pairs = scored.pairs
                hit = pairs.score >= args.threshold
                found = set(zip(pairs.left[hit].tolist(), pairs.right[hit].tolist(), strict=True))
                n_cand = len(pairs.left)
        if truth is None:
            truth = found
        recall = len(found & truth) / len(truth) if truth else float("nan")
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = n_cand / max(len(found), 1)
        print(
            f"| {label} | {keys_per_doc(config)} | {n_cand:,} | {len(found):,} | {ratio:.1f} | "
            f"{recall:.3f} | {med['sketch']:.1f} | {med['candidates']:.2f} | "
            f"{med['verify']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
