"""Text → MinHash signatures (128 permutations, word 5-shingles), neardup beside its peers.

End to end from raw text, on a slice of ../shared/data/corpus/en-gutenberg-100k.jsonl.gz:

- neardup: ``fingerprint_batch`` (default canonicalization, word 5-shingles) then
  ``MinHash().sketch``, in batches of 4096 texts; 1 numba thread (headline) and all threads;
  the split front end (text → fingerprints) vs sketch is reported too; ``neardup-plain-1``
  does the peers' canonicalization only (lower-case, punctuation out: no HTML/wiki
  detection, NFKC or stop words), to show what the default canonicalization costs; the C
  heap tuned as the ``neardup`` command tunes it (``neardup.util.heap.reuse_freed_memory``);
- datasketch: ``MinHash.bulk`` with an xxhash (xxh32) ``hashfunc``, fed by a plain Python
  tokenizer (``re.findall(r"\\w+", text.lower())``, ``' '.join`` 5-shingles, ``.encode()``);
- rensa: ``RMinHash(num_perm=128).update(shingles)`` with the same Python tokenizer;
- gaoya: ``MinHashStringIndex`` (its own Rust word 5-gram tokenizer, 9 bands × 13 rows for a
  0.8 threshold), ``insert_document`` one by one (single thread; this includes indexing).

Each pipeline runs in a fresh subprocess (the script re-invokes itself with ``--only NAME``) so
that its peak RSS is its own; timings are medians of ``--repeat`` runs after a warm-up.
"warm RSS" is the peak after imports, loading the texts and the warm-up (numba's LLVM alone
is ~80 MB); "peak − warm" is the working memory of the timed runs. The peers' split is their
Python tokenizer vs their hashing.

    python benchmarks/bench_minhash.py [--docs 20000] [--repeat 3] [--rounds 1] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

from _corpus import load_texts, median_seconds, megabytes, peak_rss_mb

NUM_PERM = 128
W = 5
SEED = 1
CHUNK = 4096
WORD = re.compile(r"\w+")
PIPELINES = ("neardup-1", "neardup-all", "neardup-plain-1", "datasketch", "rensa", "gaoya")


def python_shingles(text: str) -> list[str]:
    """The plain Python tokenizer the peers are fed with: word 5-shingles as strings."""
    tokens = WORD.findall(text.lower())
    return [" ".join(tokens[i : i + W]) for i in range(max(1, len(tokens) - W + 1))]


def chunks(texts: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(texts), CHUNK):
        yield texts[i : i + CHUNK]


# --- pipelines: each returns a callable doing the whole run, plus an optional split ----------
def split_pipeline(
    front: Callable[[list[str]], object], sketch: Callable[[object], list]
) -> tuple[Callable[[list[str]], object], dict]:
    """A run over chunks timing the front end (text → shingles) and the sketch apart."""
    split = {"front": 0.0, "sketch": 0.0}

    def run(texts: list[str]) -> object:
        split["front"] = split["sketch"] = 0.0
        out: list = []
        for chunk in chunks(texts):
            t0 = time.perf_counter()
            prepared = front(chunk)
            t1 = time.perf_counter()
            out.extend(sketch(prepared))
            split["front"] += t1 - t0
            split["sketch"] += time.perf_counter() - t1
        return out

    return run, split


def neardup_pipeline(
    threads: int | None, plain: bool = False
) -> tuple[Callable[[list[str]], object], dict]:
    import numba

    from neardup.fingerprints.shingles import fingerprint_batch
    from neardup.methods.minhash import MinHash, MinHashConfig
    from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig
    from neardup.util.heap import reuse_freed_memory

    reuse_freed_memory()  # as the neardup command does (README, In Python)
    numba.set_num_threads(threads or numba.config.NUMBA_NUM_THREADS)
    canon = CanonConfig.profile("none", lowercase=True, punctuation=True) if plain else None
    config = TextConfig(canon=canon or CanonConfig(), shingle=ShingleConfig(size=W))
    method = MinHash(MinHashConfig(num_perm=NUM_PERM, seed=SEED), config)
    return split_pipeline(
        lambda chunk: fingerprint_batch(chunk, config), lambda prints: [method.sketch(prints)]
    )


def datasketch_pipeline() -> tuple[Callable[[list[str]], object], dict]:
    import xxhash
    from datasketch import MinHash

    return split_pipeline(
        lambda chunk: [[s.encode() for s in python_shingles(t)] for t in chunk],
        lambda sets: MinHash.bulk(
            sets, num_perm=NUM_PERM, seed=SEED, hashfunc=xxhash.xxh32_intdigest
        ),
    )


def rensa_pipeline() -> tuple[Callable[[list[str]], object], dict]:
    from rensa import RMinHash

    def sketch(lists: list[list[str]]) -> list:
        out = []
        for shingles in lists:
            m = RMinHash(num_perm=NUM_PERM, seed=SEED)
            m.update(shingles)
            out.append(m)
        return out

    return split_pipeline(lambda chunk: [python_shingles(text) for text in chunk], sketch)


def gaoya_pipeline() -> tuple[Callable[[list[str]], object], dict]:
    from gaoya.minhash import MinHashStringIndex

    def run(texts: list[str]) -> object:
        index = MinHashStringIndex(
            hash_size=32,
            jaccard_threshold=0.8,
            num_bands=9,
            band_size=13,
            analyzer="word",
            lowercase=True,
            ngram_range=(W, W),
        )
        for i, text in enumerate(texts):
            index.insert_document(i, text)
        return index

    return run, {}


def build(name: str) -> tuple[Callable[[list[str]], object], dict]:
    if name == "neardup-1":
        return neardup_pipeline(1)
    if name == "neardup-all":
        return neardup_pipeline(None)
    if name == "neardup-plain-1":
        return neardup_pipeline(1, plain=True)
    return {"datasketch": datasketch_pipeline, "rensa": rensa_pipeline, "gaoya": gaoya_pipeline}[
        name
    ]()


def measure(name: str, docs: int, repeat: int) -> dict:
    """Run one pipeline in this process; the result as a JSON-able dict."""
    texts = load_texts(limit=docs)
    loaded = peak_rss_mb()
    run, split = build(name)
    run(texts[:200])  # warm-up: numba compile/cache load, imports
    warm = peak_rss_mb()
    splits: list[dict] = []
    cpu: list[float] = []

    def timed() -> None:
        c0 = time.process_time()
        run(texts)
        cpu.append(time.process_time() - c0)
        splits.append(dict(split))

    seconds = median_seconds(timed, repeat)
    result = {"name": name, "seconds": seconds, "cpu": statistics.median(cpu)}
    result |= {"mb": megabytes(texts), "peak_rss": peak_rss_mb(), "loaded_rss": loaded}
    result["warm_rss"] = warm
    if splits and splits[0]:
        result["front"] = statistics.median(s["front"] for s in splits)
        result["sketch"] = statistics.median(s["sketch"] for s in splits)
    if name.startswith("neardup"):
        import numba

        result["threads"] = numba.get_num_threads()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="runs of every pipeline")
    parser.add_argument("--only", choices=PIPELINES)
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure(args.only, args.docs, args.repeat)))
        return
    runs: dict[str, list[dict]] = {}
    for _ in range(args.rounds):  # rounds interleave the pipelines: load from others evens out
        for name in PIPELINES:
            cmd = [sys.executable, __file__, "--only", name, "--docs", str(args.docs)]
            done = subprocess.run(
                [*cmd, "--repeat", str(args.repeat)], capture_output=True, text=True, check=False
            )
            if done.returncode:
                print(f"{name}: failed\n{done.stderr.strip()[-2000:]}", file=sys.stderr)
                continue
            runs.setdefault(name, []).append(json.loads(done.stdout.strip().splitlines()[-1]))
    report([combine(r) for r in runs.values()], args)


def combine(results: list[dict]) -> dict:
    """One row from a pipeline's rounds: median times, largest memory."""
    row = dict(results[0])
    for key in ("seconds", "cpu", "front", "sketch"):
        if key in row:
            row[key] = statistics.median(r[key] for r in results)
    for key in ("peak_rss", "warm_rss"):
        row[key] = max(r[key] for r in results)
    return row


def report(rows: list[dict], args: argparse.Namespace) -> None:
    if not rows:
        return
    mb = rows[0]["mb"]
    base = {r["name"]: r["seconds"] for r in rows}
    print(
        f"{args.docs} docs, {mb:.1f} MB, word {W}-shingles, {NUM_PERM} permutations, "
        f"median of {args.repeat} runs × {args.rounds} rounds (seconds: wall; CPU s: all threads)"
    )
    head = f"{'pipeline':<22}{'seconds':>9}{'CPU s':>8}{'MB/s':>8}{'peak RSS':>10}{'warm RSS':>10}"
    print(head + f"{'peak−warm':>11}{'time / neardup-1':>18}")
    for r in rows:
        label = r["name"] + (f" ({r['threads']}t)" if "threads" in r else "")
        ratio = r["seconds"] / base["neardup-1"] if "neardup-1" in base else float("nan")
        print(
            f"{label:<22}{r['seconds']:>9.2f}{r['cpu']:>8.2f}{mb / r['seconds']:>8.1f}"
            f"{r['peak_rss']:>10.0f}"
            f"{r['warm_rss']:>10.0f}{r['peak_rss'] - r['warm_rss']:>11.0f}{ratio:>17.2f}×"
        )
    for r in rows:
        if "front" in r:
            total = r["front"] + r["sketch"]
            share = 100 * r["front"] / total
            print(
                f"{r['name']:<16} front end {r['front']:>6.2f} s ({share:>3.0f}%)"
                f"   sketch {r['sketch']:>6.2f} s ({mb / r['sketch']:>6.1f} MB/s of text)"
            )


if __name__ == "__main__":
    main()
