"""Text → shingle fingerprints throughput, beside the plain-Python floor (issue: foundation).

Word 5-shingles, default canonicalization without lemmatization, on a slice of
../shared/data/corpus/en-gutenberg-100k.jsonl.gz. The floor is the pipeline everyone writes
first: ``re.findall`` tokens, ``' '.join`` shingles, xxhash per shingle, a set per document.

    python benchmarks/bench_fingerprints.py [--docs 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re

import numba
import xxhash
from _corpus import load_texts, median_seconds, megabytes

from neardup.config import CanonConfig, ShingleConfig, TextConfig
from neardup.shingles import iter_fingerprint_batches

WORD = re.compile(r"\w+")


def plain_python(texts: list[str], w: int = 5) -> int:
    total = 0
    for text in texts:
        tokens = WORD.findall(text.lower())
        shingles = {
            xxhash.xxh3_64_intdigest(" ".join(tokens[i : i + w]).encode())
            for i in range(max(1, len(tokens) - w + 1))
        }
        total += len(shingles)
    return total


def neardup(texts: list[str], config: TextConfig) -> int:
    return sum(int(b.values.size) for b in iter_fingerprint_batches(texts, config, 4096))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = load_texts(limit=args.docs)
    mb = megabytes(texts)
    config = TextConfig(CanonConfig(), ShingleConfig(unit="word", size=5))
    neardup(texts[:200], config)  # compile / warm caches outside the timing
    cores = numba.config.NUMBA_NUM_THREADS
    print(f"{len(texts)} docs, {mb:.1f} MB, word 5-shingles, default canonicalization")
    floor = median_seconds(lambda: plain_python(texts), args.repeat)
    numba.set_num_threads(1)
    one = median_seconds(lambda: neardup(texts, config), args.repeat)
    numba.set_num_threads(cores)
    many = median_seconds(lambda: neardup(texts, config), args.repeat)
    rows = [
        ("plain Python floor", floor),
        ("neardup, 1 thread", one),
        (f"neardup, {cores} threads", many),
    ]
    print(f"{'pipeline':<24}{'seconds':>9}{'MB/s':>9}{'× floor':>9}")
    for name, sec in rows:
        print(f"{name:<24}{sec:>9.2f}{mb / sec:>9.1f}{floor / sec:>9.2f}")


if __name__ == "__main__":
    main()
