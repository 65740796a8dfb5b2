"""Micro-benchmark of the span fingerprint kernels (not a test).

Hashes 2M spans of 20-40 bytes of one random buffer (sorted starts, as shingles of a
document stream would be) and prints ns/span for each kernel via ``hash_spans``, with one
thread and with all numba threads, plus ``xxhash.xxh3_64_intdigest`` called per span from
Python as a reference.

Run: ``python benchmarks/bench_hash_kernels.py [n_spans]``
"""

from __future__ import annotations

import sys
import time

import numba
import numpy as np
import xxhash

from neardup.fingerprints.hash_kernels import HASH_CRC32, HASH_RABIN, HASH_XXH3, hash_spans


def make_spans(n_spans: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, size=n_spans * 8 + 64, dtype=np.uint8)
    starts = np.sort(rng.integers(0, buf.size - 40, size=n_spans)).astype(np.int64)
    ends = starts + rng.integers(20, 41, size=n_spans)
    return buf, starts, ends


def best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    n_spans = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    buf, starts, ends = make_spans(n_spans)
    kinds = {"xxh3": HASH_XXH3, "crc32": HASH_CRC32, "rabin": HASH_RABIN}
    for kind in kinds.values():  # compile / load from cache outside the timing
        hash_spans(kind, buf, starts[:10], ends[:10], 0)

    n_threads = numba.get_num_threads()
    print(f"{n_spans:,} spans of 20-40 bytes (mean {np.mean(ends - starts):.1f})")
    print(f"{'kernel':<28}{'1 thread':>12}{f'{n_threads} threads':>14}")
    for name, kind in kinds.items():
        row = []
        for threads in (1, n_threads):
            numba.set_num_threads(threads)
            secs = best_of(lambda k=kind: hash_spans(k, buf, starts, ends, 0))
            row.append(secs / n_spans * 1e9)
        numba.set_num_threads(n_threads)
        print(f"{name + ' (hash_spans)':<28}{row[0]:>9.2f} ns{row[1]:>11.2f} ns")

    data = buf.tobytes()
    s_list, e_list = starts.tolist(), ends.tolist()
    xxh = xxhash.xxh3_64_intdigest

    def python_loop() -> None:
        for s, e in zip(s_list, e_list, strict=True):
            xxh(data[s:e], 0)

    secs = best_of(python_loop, repeat=3)
    print(f"{'xxhash.xxh3_64_intdigest (py)':<28}{secs / n_spans * 1e9:>9.2f} ns")


if __name__ == "__main__":
    main()
