"""Start-up time: whole processes, as a user waits for them.

Each case is a fresh ``python`` process, run ``--runs`` times (interleaved, so a busy moment of
the machine falls on every case alike); reported: the median and the least wall time, and the
median over a bare interpreter (``python -c pass``, the floor no package can go under).
Cases: ``import neardup``; ``neardup --help``; ``neardup --version``; ``neardup dedup --help``;
``neardup compare`` of two short texts (the kernels already compiled and cached).

    python benchmarks/bench_startup.py --runs 11
    python benchmarks/bench_startup.py --runs 5 --out startup.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CLI = "from neardup.cli import run; run()"
CASES: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "import neardup": ["-c", "import neardup"],
    "neardup --help": ["-c", CLI, "--help"],
    "neardup --version": ["-c", CLI, "--version"],
    "neardup dedup --help": ["-c", CLI, "dedup", "--help"],
    "neardup compare": [
        "-c",
        CLI,
        "compare",
        "--text-a",
        "the cat sat on the mat",
        "--text-b",
        "the cat sat",
    ],
}


def wall(args: list[str]) -> float:
    """Seconds from starting ``python args`` to its exit (output discarded)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--out", help="also write the figures as JSON")
    args = parser.parse_args()
    for case in CASES.values():  # warm the file cache and numba's kernel cache
        wall(case)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, case in CASES.items():
            times[name].append(wall(case))
    floor = statistics.median(times["python -c pass"])
    rows = {
        name: {
            "median_s": round(statistics.median(t), 4),
            "min_s": round(min(t), 4),
            "over_python_s": round(statistics.median(t) - floor, 4),
        }
        for name, t in times.items()
    }
    print(f"{'case':<24} {'median':>8} {'min':>8} {'over python':>12}   ({args.runs} runs)")
    for name, row in rows.items():
        print(
            f"{name:<24} {row['median_s']:>8.3f} {row['min_s']:>8.3f} {row['over_python_s']:>12.3f}"
        )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"runs": args.runs, "python": sys.version.split()[0], "cases": rows}, f)


if __name__ == "__main__":
    main()
