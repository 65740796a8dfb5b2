"""Text → shingle fingerprint sets: MB/s on one core, neardup beside the peers' front end.

On a slice of ../shared/data/corpus/en-gutenberg-100k.jsonl.gz (texts in memory), rows:

- ``peers' front end``: what datasketch / rensa users write (``bench_minhash``): ``re.findall
  (r"\\w+", text.lower())`` tokens, ``' '.join`` word 5-shingles, ``xxh3_64`` per shingle, a
  set per document;
- ``neardup, peers' work``: the same shingles (lower-case, punctuation out, word 5-shingles;
  no markup/quote removal, NFKC or stop words), so both hash the same shingles — the
  ``shingles`` column shows it;
- ``neardup, default``: the default ``TextConfig`` (HTML/wiki/quote removal when a text has
  markup, NFKC, case folding, punctuation out, word 4-shingles) from Python strings
  (``iter_fingerprint_batches(texts, config, 4096)``, the library API) — the target
  is ≥ 80 MB/s for this row on one core;
- ``neardup, default, UTF-8 in``: the same from the texts' UTF-8 in Arrow string columns of
  4,096 texts, as ``neardup dedup`` gets them from JSONL (``fingerprint_utf8``; the JSON
  parsing itself is not timed in any row);
- ``… N workers``: the UTF-8 row on every core the way ``dedup`` runs it: batches on worker
  threads of one kernel thread each (``workers.ordered_map``).

Times are medians of ``--repeat`` runs after a warm-up, wall and CPU seconds (CPU is the
steadier on a busy machine).

    python benchmarks/bench_fingerprints.py [--docs 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable

import numba
import numpy as np
import pyarrow as pa
import xxhash
from _corpus import load_texts, megabytes

from neardup.fingerprints.shingles import fingerprint_utf8, iter_fingerprint_batches
from neardup.io.blocks import utf8_spans
from neardup.text.text_config import CanonConfig, ShingleConfig, TextConfig
from neardup.util.workers import ordered_map

WORD = re.compile(r"\w+")
FLOOR_MB_S = 80.0  # the target: default canonicalization, one core
PEERS = TextConfig(
    CanonConfig.profile("none", lowercase=True, punctuation=True), ShingleConfig(size=5)
)
DEFAULT = TextConfig()


def peers_front_end(texts: list[str], w: int = 5) -> int:
    """Distinct shingle hashes of every text, the way the peers' users compute them."""
    total = 0
    for text in texts:
        tokens = WORD.findall(text.lower())
        hashes = {
            xxhash.xxh3_64_intdigest(" ".join(tokens[i : i + w]).encode())
            for i in range(max(1, len(tokens) - w + 1))
        }
        total += len(hashes)
    return total


def neardup(texts: list[str], config: TextConfig) -> int:
    return sum(int(b.values.size) for b in iter_fingerprint_batches(texts, config, 4096))


Utf8 = tuple[np.ndarray, np.ndarray, np.ndarray]


def utf8_batches(texts: list[str], size: int = 4096) -> list[Utf8]:
    """The texts as Arrow string columns of ``size`` texts: (buffer, starts, ends) each."""
    return [
        utf8_spans(pa.array(texts[lo : lo + size], pa.string()))
        for lo in range(0, len(texts), size)
    ]


def neardup_utf8(batches: list[Utf8], config: TextConfig, workers: int = 1) -> int:
    def one(batch: Utf8) -> int:
        return int(fingerprint_utf8(*batch, config).values.size)

    return sum(ordered_map(one, batches, workers))


def timed(func: Callable[[], int], repeat: int) -> tuple[float, float, int]:
    """Median wall and CPU seconds of ``repeat`` calls, and the call's result."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        result = func()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = load_texts(limit=args.docs)
    mb = megabytes(texts)
    utf8 = utf8_batches(texts)
    for config in (PEERS, DEFAULT):
        neardup(texts[:200], config)  # compile / load kernels and tables outside the timing
    neardup_utf8(utf8_batches(texts[:200]), DEFAULT)
    cores = numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(1)
    rows = [
        ("peers' front end (Python)", timed(lambda: peers_front_end(texts), args.repeat)),
        ("neardup, peers' work", timed(lambda: neardup(texts, PEERS), args.repeat)),
        ("neardup, default", timed(lambda: neardup(texts, DEFAULT), args.repeat)),
        ("neardup, default, UTF-8 in", timed(lambda: neardup_utf8(utf8, DEFAULT), args.repeat)),
    ]
    numba.set_num_threads(cores)
    many = timed(lambda: neardup_utf8(utf8, DEFAULT, cores), args.repeat)
    rows.append((f"neardup, default, UTF-8, {cores} workers", many))
    print(f"{len(texts)} docs, {mb:.1f} MB; one thread unless said")
    print(f"{'pipeline':<34}{'wall s':>8}{'MB/s':>8}{'cpu s':>8}{'MB/cpu-s':>10}{'shingles':>12}")
    for name, (wall, cpu, shingles) in rows:
        print(f"{name:<34}{wall:>8.2f}{mb / wall:>8.1f}{cpu:>8.2f}{mb / cpu:>10.1f}{shingles:>12,}")
    for name, (wall, _, _) in rows[2:4]:
        verdict = "met" if mb / wall >= FLOOR_MB_S else "NOT met"
        print(f"floor ≥ {FLOOR_MB_S:.0f} MB/s on one core, {name}: {verdict}")


if __name__ == "__main__":
    main()
