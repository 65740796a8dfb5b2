"""End-to-end near-duplicate dedup (text → pairs), neardup beside its peers, one run.

On ../shared/data/corpus/en-gutenberg-100k.jsonl.gz (all 100k documents unless ``--docs N``):

- neardup: ``deduplicate`` with ``DedupConfig(method="minhash", measure="resemblance",
  threshold=0.8)`` over default canonicalization and word 5-shingles, all numba threads (2);
  candidates from the LSH bands, then exact verification of every candidate pair;
- datasketch: ``MinHash.bulk`` (128 permutations, xxh32 ``hashfunc``) fed by the plain Python
  tokenizer of ``bench_minhash`` (``re.findall(r"\\w+", text.lower())``, ``' '.join``
  5-shingles), then ``MinHashLSH(threshold=0.8, num_perm=128)``: insert all, query all;
- rensa: ``RMinHash.from_token_sets`` on the same tokens, then ``RMinHashLSH``
  (``insert_many`` + ``query_all``); rensa needs bands dividing 128, so the banding is the
  divisor of 128 that minimizes datasketch's criterion (FP + FN area): 8 × 16 at t = 0.8;
- gaoya: ``MinHashStringIndex`` (its own Rust tokenizer: lower-cased word 5-grams, 32-bit
  hashes, datasketch's banding 9 × 13 at t = 0.8), ``par_bulk_insert_docs`` then
  ``par_bulk_query`` in batches, 2 rayon threads.

Pairs are distinct unordered pairs of different documents: for the peers their LSH query
hits (datasketch and rensa: unverified candidates; gaoya filters by its estimated Jaccard),
for neardup the verified pairs. Each pipeline runs in a fresh subprocess (``--only NAME``)
after loading the texts and a warm-up on 500 of them; "seconds" is the median of
``--repeat`` runs × ``--rounds`` (rounds interleave the pipelines), "peak RSS" the child's
peak (texts included), "loaded" its RSS once the texts are in memory.

``--million`` builds (once) a corpus of 1,000,000 documents of ~1 KB in $TMPDIR (or /tmp):
the three shared corpora cut into ~1 KB chunks (zh: poems of one poet grouped), then
``../shared/tools/make_bench.py`` injects near-duplicates (mixed languages, ``--base``);
two runs with different seeds are concatenated to reach 1M documents. Then neardup dedups
it with the default ``DedupConfig`` in a subprocess that streams the jsonl.gz line by line.

    python benchmarks/bench_dedup.py [--docs N] [--repeat 3] [--rounds 1] [--only NAME]
    python benchmarks/bench_dedup.py --million [--million-docs 1000000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from _corpus import CORPUS, SHARED, load_texts, megabytes, peak_rss_mb
from bench_minhash import NUM_PERM, SEED, W, python_shingles

THRESHOLD = 0.8
CHUNK = 4096
THREADS = 2
PIPELINES = ("neardup", "datasketch", "rensa", "gaoya")
MILLION_DIR = Path(os.environ.get("TMPDIR") or tempfile.gettempdir()) / "neardup-million"


# --- pairs as one int64 code per distinct unordered pair ---------------------------------------
def pair_codes(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Distinct unordered pairs ``lo * 2**32 + hi`` (self-pairs dropped)."""
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    keep = left != right
    lo, hi = np.minimum(left, right)[keep], np.maximum(left, right)[keep]
    return np.unique((lo << 32) | hi)


def hits_to_pairs(hits: list) -> tuple[np.ndarray, np.ndarray]:
    """``hits[i]`` = keys returned by the query of document ``i`` → ``(left, right)``."""
    sizes = np.fromiter((len(h) for h in hits), np.int64, len(hits))
    left = np.repeat(np.arange(len(hits), dtype=np.int64), sizes)
    right = np.fromiter((j for h in hits for j in h), np.int64, int(sizes.sum()))
    codes = pair_codes(left, right)
    return codes >> 32, codes & 0xFFFFFFFF


def batches(texts: list[str]) -> Iterator[tuple[int, list[str]]]:
    for start in range(0, len(texts), CHUNK):
        yield start, texts[start : start + CHUNK]


# --- banding of the peers ------------------------------------------------------------------
def lsh_error(threshold: float, bands: int, rows: int) -> float:
    """datasketch's criterion: false-positive area below t + false-negative area above."""
    s = np.linspace(0.0, threshold, 2001)
    fp = np.trapezoid(1.0 - (1.0 - s**rows) ** bands, s)
    s = np.linspace(threshold, 1.0, 2001)
    fn = np.trapezoid((1.0 - s**rows) ** bands, s)
    return float(fp + fn)


def datasketch_banding(threshold: float) -> tuple[int, int]:
    from datasketch.lsh import _optimal_param

    return _optimal_param(threshold, NUM_PERM, 0.5, 0.5)


def divisor_banding(threshold: float) -> tuple[int, int]:
    """The (bands, rows) with bands · rows = 128 that datasketch's criterion prefers."""
    divisors = [b for b in range(1, NUM_PERM + 1) if NUM_PERM % b == 0]
    best = min(divisors, key=lambda b: lsh_error(threshold, b, NUM_PERM // b))
    return best, NUM_PERM // best


# --- the pipelines: texts → (left, right) pairs ----------------------------------------------
def neardup_pairs(texts: list[str], threshold: float = THRESHOLD) -> tuple[np.ndarray, ...]:
    from neardup.dedup import DedupConfig, deduplicate
    from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig

    config = DedupConfig(
        text=TextConfig(CanonConfig(), ShingleConfig(size=W)),
        method="minhash",
        measure="resemblance",
        threshold=threshold,
    )
    result = deduplicate(((str(i), t) for i, t in enumerate(texts)), config)
    neardup_pairs.timings = result.timings  # type: ignore[attr-defined]
    return result.pairs.left, result.pairs.right


def datasketch_pairs(texts: list[str], threshold: float = THRESHOLD) -> tuple[np.ndarray, ...]:
    import xxhash
    from datasketch import MinHash, MinHashLSH

    sketches = []
    for _, chunk in batches(texts):
        sets = [[s.encode() for s in python_shingles(t)] for t in chunk]
        sketches.extend(
            MinHash.bulk(sets, num_perm=NUM_PERM, seed=SEED, hashfunc=xxhash.xxh32_intdigest)
        )
    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    with lsh.insertion_session() as session:
        for i, m in enumerate(sketches):
            session.insert(i, m, check_duplication=False)
    return hits_to_pairs([lsh.query(m) for m in sketches])


def rensa_pairs(texts: list[str], threshold: float = THRESHOLD) -> tuple[np.ndarray, ...]:
    from rensa import RMinHash, RMinHashLSH

    sketches = []
    for _, chunk in batches(texts):
        tokens = [python_shingles(t) for t in chunk]
        sketches.extend(RMinHash.from_token_sets(tokens, NUM_PERM, SEED))
    bands, _ = divisor_banding(threshold)
    lsh = RMinHashLSH(threshold, NUM_PERM, bands)
    lsh.insert_many(sketches, 0)
    return hits_to_pairs(lsh.query_all(sketches))


def gaoya_pairs(texts: list[str], threshold: float = THRESHOLD) -> tuple[np.ndarray, ...]:
    from gaoya.minhash import MinHashStringIndex

    bands, rows = datasketch_banding(threshold)
    index = MinHashStringIndex(
        hash_size=32,
        jaccard_threshold=threshold,
        num_bands=bands,
        band_size=rows,
        analyzer="word",
        lowercase=True,
        ngram_range=(W, W),
    )
    for start, chunk in batches(texts):
        index.par_bulk_insert_docs(list(range(start, start + len(chunk))), chunk)
    hits = []
    for _, chunk in batches(texts):
        hits.extend(index.par_bulk_query(chunk))
    return hits_to_pairs(hits)


RUNNERS = {
    "neardup": neardup_pairs,
    "datasketch": datasketch_pairs,
    "rensa": rensa_pairs,
    "gaoya": gaoya_pairs,
}


def child_env() -> dict[str, str]:
    """Both cores for every pipeline: numba's and rayon's thread pools."""
    env = dict(os.environ)
    env["NUMBA_NUM_THREADS"] = env["RAYON_NUM_THREADS"] = str(THREADS)
    return env


def measure(name: str, docs: int | None, repeat: int) -> dict:
    """Run one pipeline in this process; the result as a JSON-able dict."""
    texts = load_texts(limit=docs)
    loaded = peak_rss_mb()
    run = RUNNERS[name]
    run(texts[:500])  # warm-up: numba cache load, imports
    seconds, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        left, _right = run(texts)
        seconds.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    result = {
        "name": name,
        "docs": len(texts),
        "mb": megabytes(texts),
        "seconds": statistics.median(seconds),
        "runs": seconds,
        "cpu": statistics.median(cpu),
        "peak_rss": peak_rss_mb(),
        "loaded_rss": loaded,
        "pairs": len(left),
    }
    if name == "neardup":
        result["timings"] = neardup_pairs.timings  # type: ignore[attr-defined]
    return result


def compare(args: argparse.Namespace) -> None:
    runs: dict[str, list[dict]] = {}
    for _ in range(args.rounds):  # rounds interleave the pipelines: load from others evens out
        for name in PIPELINES:
            cmd = [sys.executable, __file__, "--only", name, "--repeat", str(args.repeat)]
            if args.docs:
                cmd += ["--docs", str(args.docs)]
            env = child_env()
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if done.returncode:
                print(f"{name}: failed\n{done.stderr.strip()[-2000:]}", file=sys.stderr)
                continue
            runs.setdefault(name, []).append(json.loads(done.stdout.strip().splitlines()[-1]))
    report([combine(r) for r in runs.values()], args)


def combine(results: list[dict]) -> dict:
    """One row from a pipeline's rounds: median of all timed runs, largest memory."""
    row = dict(results[0])
    row["runs"] = [t for r in results for t in r["runs"]]
    row["seconds"] = statistics.median(row["runs"])
    row["cpu"] = statistics.median(r["cpu"] for r in results)
    row["peak_rss"] = max(r["peak_rss"] for r in results)
    return row


def report(rows: list[dict], args: argparse.Namespace) -> None:
    if not rows:
        return
    by = {r["name"]: r for r in rows}
    first = rows[0]
    print(
        f"{first['docs']} docs ({first['mb']:.1f} MB) of en-gutenberg-100k, word {W}-shingles, "
        f"{NUM_PERM} permutations, t = {THRESHOLD}, {THREADS} threads; "
        f"seconds: median of {args.repeat} runs × {args.rounds} rounds (wall), "
        "CPU s: all threads"
    )
    head = f"{'pipeline':<12}{'seconds':>9}{'CPU s':>8}{'MB/s':>8}{'peak RSS':>10}{'loaded':>8}"
    print(head + f"{'pairs':>9}{'neardup faster':>16}")
    base = by.get("neardup", {}).get("seconds")
    for r in rows:
        ratio = f"{r['seconds'] / base:>15.2f}×" if base else f"{'':>16}"
        print(
            f"{r['name']:<12}{r['seconds']:>9.2f}{r['cpu']:>8.2f}{r['mb'] / r['seconds']:>8.1f}"
            f"{r['peak_rss']:>7.0f} MB{r['loaded_rss']:>5.0f} MB{r['pairs']:>9}{ratio}"
        )
    if "neardup" in by:
        timings = ", ".join(f"{k} {v:.2f}" for k, v in by["neardup"]["timings"].items())
        print(f"neardup stages (s, last run): {timings}")
    for peer, floor in (("rensa", 3.0), ("gaoya", 1.5)):
        if base and peer in by:
            ratio = by[peer]["seconds"] / base
            verdict = "met" if ratio >= floor else "MISSED"
            print(f"floor: neardup ≥ {floor}× faster than {peer}: {ratio:.2f}× — {verdict}")


# --- 1M documents ----------------------------------------------------------------------------
SENTENCE_END = re.compile(r"(?<=[.!?…;])\s+")


def _pieces(text: str, target: int) -> Iterator[str]:
    """Lines of a text (long ones cut at sentence ends), each under ~``target`` bytes."""
    for line in text.splitlines(keepends=True):
        if len(line.encode()) <= target:
            yield line
        else:
            yield from (s + " " for s in SENTENCE_END.split(line))


def chunk_text(text: str, rng: random.Random, lo: int = 600, hi: int = 1600) -> Iterator[str]:
    """Consecutive chunks of a text with lengths log-uniform in [lo, hi] bytes (mean ~1 KB);
    a tail under ``lo / 2`` joins the chunk before it."""
    parts: list[str] = []
    size, target = 0, rng.uniform(np.log(lo), np.log(hi))
    out: list[str] = []
    for piece in _pieces(text, hi):
        parts.append(piece)
        size += len(piece.encode())
        if size >= np.exp(target):
            out.append("".join(parts).strip())
            parts, size, target = [], 0, rng.uniform(np.log(lo), np.log(hi))
    tail = "".join(parts).strip()
    if tail and (len(tail.encode()) >= lo // 2 or not out):
        out.append(tail)
    elif tail:
        out[-1] += "\n" + tail
    yield from (c for c in out if c)


def write_chunks(path: Path) -> int:
    """The three shared corpora as ~1 KB documents (zh: poems of one poet joined)."""
    rng = random.Random(7)
    n = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:

        def emit(doc_id: str, text: str, lang: str, source: str) -> None:
            nonlocal n
            record = {"id": doc_id, "text": text, "lang": lang, "source": source}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1

        for name in ("en-gutenberg-100k.jsonl.gz", "ru-ruslit-40k.jsonl.gz"):
            with gzip.open(CORPUS / name, "rt", encoding="utf-8") as fh:
                for line in fh:
                    r = json.loads(line)
                    for k, chunk in enumerate(chunk_text(r["text"], rng)):
                        emit(f"{r['id']}-{k}", chunk, r["lang"], r["source"])
        poets: dict[str, list[str]] = {}
        with gzip.open(CORPUS / "zh-poetry-100k.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                poems = poets.setdefault(r["source"], [])
                poems.append(r["text"])
                if sum(len(p.encode()) for p in poems) >= 900:
                    emit(f"{r['id']}-g", "\n\n".join(poems), "zh", r["source"])
                    poems.clear()
        for source, poems in sorted(poets.items()):
            if poems:
                tag = zlib.crc32(source.encode())
                emit(f"zh-{tag:08x}-rest", "\n\n".join(poems), "zh", source)
    return n


def build_million(total: int) -> Path:
    """``MILLION_DIR/million.jsonl.gz`` with ``total`` documents (built once)."""
    final = MILLION_DIR / f"million-{total}.jsonl.gz"
    if final.exists():
        return final
    MILLION_DIR.mkdir(parents=True, exist_ok=True)
    chunks = MILLION_DIR / "chunks.jsonl.gz"
    if not chunks.exists():
        t0 = time.perf_counter()
        n = write_chunks(chunks.with_suffix(".tmp"))
        chunks.with_suffix(".tmp").rename(chunks)
        print(f"chunks: {n} documents in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with gzip.open(chunks, "rt", encoding="utf-8") as fh:
        n_chunks = sum(1 for _ in fh)
    base = int(n_chunks * 0.85)  # the rest is the pool for containment hosts, hard negatives
    tool = SHARED / "tools" / "make_bench.py"
    runs = [("a", 7, "1.0"), ("b", 8, "0.5")]  # variant rate 1.0: 1-3 variants per base doc
    for tag, seed, rate in runs:
        prefix = MILLION_DIR / f"mixed-{tag}"
        if Path(f"{prefix}-bench.jsonl.gz").exists():
            continue
        t0 = time.perf_counter()
        cmd = [sys.executable, str(tool), "--out-prefix", str(prefix), "--base", str(base)]
        cmd += ["--seed", str(seed), "--variant-rate", rate, "--id-prefix", f"{tag}-"]
        cmd += ["--input", str(chunks)]
        subprocess.run(cmd, check=True)
        print(f"make_bench {tag}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    written = 0
    with gzip.open(final.with_suffix(".tmp"), "wt", encoding="utf-8", compresslevel=1) as out:
        for tag, _, _ in runs:
            with gzip.open(f"{MILLION_DIR}/mixed-{tag}-bench.jsonl.gz", "rt") as fh:
                for line in fh:
                    if written == total:
                        break
                    out.write(line)
                    written += 1
    if written < total:
        raise SystemExit(f"only {written} documents made, {total} asked")
    final.with_suffix(".tmp").rename(final)
    return final


def stream(path: Path, stats: dict) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of a jsonl.gz, line by line; counts documents and UTF-8 bytes."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            stats["docs"] += 1
            stats["bytes"] += len(record["text"].encode())
            if stats["docs"] % 100_000 == 0:
                print(f"  {stats['docs']} docs read", file=sys.stderr, flush=True)
            yield record["id"], record["text"]


def measure_million(path: Path) -> dict:
    from neardup.dedup import DedupConfig, deduplicate

    stats = {"docs": 0, "bytes": 0}
    t0 = time.perf_counter()
    for _ in stream(path, stats):
        pass
    read_seconds = time.perf_counter() - t0
    stats = {"docs": 0, "bytes": 0}
    warm = deduplicate([("a", "warm up the kernels"), ("b", "warm up the kernels")])
    del warm
    t0, c0 = time.perf_counter(), time.process_time()
    result = deduplicate(stream(path, stats), DedupConfig())
    seconds = time.perf_counter() - t0
    return {
        "docs": stats["docs"],
        "mb": stats["bytes"] / 1e6,
        "seconds": seconds,
        "cpu": time.process_time() - c0,
        "read_seconds": read_seconds,
        "peak_rss": peak_rss_mb(),
        "pairs": len(result.pairs),
        "candidates": result.candidates,
        "removed": int(result.removed.sum()),
        "timings": result.timings,
    }


def million(total: int) -> None:
    path = build_million(total)
    cmd = [sys.executable, __file__, "--only", "neardup-million", "--input", str(path)]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True, env=child_env())
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"neardup dedup, default DedupConfig, {r['docs']} docs ({r['mb']:.0f} MB, "
        f"{r['mb'] * 1e3 / r['docs']:.2f} KB/doc) streamed from {path.name}:"
    )
    print(
        f"  {r['seconds']:.0f} s wall ({r['mb'] / r['seconds']:.2f} MB/s, CPU {r['cpu']:.0f} s), "
        f"peak RSS {r['peak_rss']:.0f} MB; reading + JSON alone {r['read_seconds']:.0f} s"
    )
    print(
        f"  {r['candidates']} candidates, {r['pairs']} pairs, {r['removed']} removed; stages (s): "
        + ", ".join(f"{k} {v:.0f}" for k, v in r["timings"].items())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="first N documents (all: 100k)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="runs of every pipeline")
    parser.add_argument("--only", choices=(*PIPELINES, "neardup-million"))
    parser.add_argument("--million", action="store_true", help="time neardup on 1M documents")
    parser.add_argument("--million-docs", type=int, default=1_000_000)
    parser.add_argument("--input", type=Path, help="(with --only neardup-million)")
    args = parser.parse_args()
    if args.only == "neardup-million":
        print(json.dumps(measure_million(args.input)))
    elif args.only:
        print(json.dumps(measure(args.only, args.docs, args.repeat)))
    elif args.million:
        million(args.million_docs)
    else:
        compare(args)


if __name__ == "__main__":
    main()
